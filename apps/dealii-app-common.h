/* What the deal.II programs dealii-poisson and dealii-compare share beyond
 * tpmg-app-common.h: the options they have in common and their parsing, the
 * test problem (the manufactured solution, the right-hand side, the mesh, the
 * DoFs in tpmg's numbering, the boundary constraints, the right-hand side
 * vector), deal.II's Krylov solve as tpmg's solvers do it, MPI's start and
 * an error as one line. Each program keeps only what is its own. */
#ifndef TPMG_DEALII_APP_COMMON_H
#define TPMG_DEALII_APP_COMMON_H

#include <deal.II/base/function.h>
#include <deal.II/base/mpi.h>

#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/solver_gmres.h>

extern "C"
{
#include "tpmg-app-common.h"
}

#include <exception>
#include <string>
#include <vector>

namespace DealiiApp
{
  // @sect3{The options both programs have}
  //
  // Those of tpmg-poisson, with its defaults: the problem (--dim, --degree,
  // --level, --cells, --box, --rhs), deal.II's Krylov methods (--solver
  // gmres|cg, --tol, --max-iterations, --restart), where tpmg runs
  // (--threads, --backend) and --json. A program derives its parameters from
  // these and adds its own.
  struct Parameters
  {
    unsigned int        dim    = 3;
    unsigned int        degree = 3;
    unsigned int        level  = 0; // 0: chosen from a DoF count
    std::vector<int>    cells;      // empty: one coarse cell per direction
    std::vector<double> box;        // empty: the unit square or cube
    tpmg_rhs            rhs            = TPMG_RHS_SINE;
    tpmg_solver_type    solver         = TPMG_SOLVER_GMRES;
    double              tolerance      = 1e-9;
    unsigned int        max_iterations = 100;
    unsigned int        restart        = 30;
    const char         *backend        = "cpu";
    unsigned int        threads        = 0; // 0: deal.II's (TBB's) default, for tpmg too
    bool                json           = false;
  };

  // The command line, read before deal.II or MPI start, so that a bad option
  // ends the program at once with one line on stderr and exit status 2
  // (app_usage_error()), as in tpmg-poisson. The shared options are parsed
  // here; next() hands the program each of its own:
  //
  //   DealiiApp::CommandLine line(argc, argv, {true, true});
  //   while (line.next())
  //     if (line.is("--vtu"))
  //       p.vtu_file = line.value("--vtu");
  //     else
  //       line.unknown();
  //   if (line.help()) ...
  //   line.finish(1e6, p);
  class CommandLine
  {
  public:
    // Which of the shared options a program has besides the problem's,
    // Krylov methods', --threads and --json.
    struct Options
    {
      bool rhs;     // --rhs (else the problem is `sine`)
      bool backend; // --backend (else tpmg runs on the CPU)
    };

    CommandLine(int argc, char **argv, const Options &options);

    // Moves to the next option that is not a shared one: false at the end
    // of the command line and at --help, which ends the parsing.
    bool
    next();

    // Whether the present option is `name`, and its value (app_option_value).
    bool
    is(const char *name) const;
    const char *
    value(const char *name);

    // The present option is none of the program's: a usage error.
    [[noreturn]] void
    unknown() const;

    // Whether --help was given.
    bool
    help() const;

    // Whether --level was given.
    bool
    level_given() const;

    // The checks that combine options (the problem's, with the level chosen
    // nearest to target_dofs where --level is not given, the solver's, and
    // only the right-hand sides and Krylov methods deal.II has), then the
    // options into p.
    void
    finish(double target_dofs, Parameters &p);

  private:
    const int           argc;
    char **const        argv;
    const Options       options;
    int                 i          = 0;
    bool                asked_help = false;
    bool                json       = false;
    app_problem         problem;
    tpmg_solver_options solver;
    app_machine         machine;
  };

  // @sect3{The test problem}
  //
  // The manufactured solution u = prod_d sin(pi x_d) and its right-hand side
  // f = -Laplace(u) = dim pi^2 u (TPMG_RHS_SINE); for TPMG_RHS_ONE, f = 1
  // (and g = 0).
  template <int dim>
  class Solution : public dealii::Function<dim>
  {
  public:
    virtual double
    value(const dealii::Point<dim> &p,
          const unsigned int        component = 0) const override;
  };

  template <int dim>
  class RightHandSide : public dealii::Function<dim>
  {
  public:
    explicit RightHandSide(const tpmg_rhs rhs = TPMG_RHS_SINE);

    virtual double
    value(const dealii::Point<dim> &p,
          const unsigned int        component = 0) const override;

  private:
    const tpmg_rhs rhs;
  };

  // The mesh: one coarse cell (hyper_cube) by default, or n_0 x n_1 (x n_2)
  // equal cells of the box (subdivided_hyper_rectangle), refined globally
  // `level` times; all boundary faces have boundary id 0, the Dirichlet
  // boundary. On P MPI ranks tpmg needs a slab of whole coarse cells per rank
  // along the last direction: tpmg::dealii::make_slab_triangulation() makes
  // the same mesh and refuses, on every rank and saying what to change, one
  // that p4est does not cut into slabs (e.g. --cells 2,4 (2D) or 2,2,4 (3D)
  // serve two ranks). deal.II's own methods take any partition.
  template <int dim>
  void
  make_mesh(const Parameters                                  &prm,
            dealii::parallel::distributed::Triangulation<dim> &triangulation);

  // The DoFs on the active mesh and on every level, then the step that tpmg
  // adds: renumber_lexicographic() puts them into tpmg's order (and throws
  // if the mesh or element is outside what tpmg supports). Everything that
  // stores DoF indices comes after it.
  template <int dim>
  void
  distribute_dofs(const dealii::FiniteElement<dim> &fe,
                  dealii::DoFHandler<dim>          &dof_handler);

  // Constraints that hold the boundary values g on the whole boundary (id 0)
  // on the locally relevant DoFs.
  template <int dim>
  void
  make_boundary_constraints(const dealii::Mapping<dim>        &mapping,
                            const dealii::DoFHandler<dim>     &dof_handler,
                            const dealii::Function<dim>       &g,
                            dealii::AffineConstraints<double> &constraints);

  // The cell matrix of the Laplacian, (grad phi_i, grad phi_j), on the cell
  // that fe_values was last reinit()ed on.
  template <int dim>
  void
  laplace_cell_matrix(const dealii::FEValues<dim> &fe_values,
                      dealii::FullMatrix<double>  &cell_matrix);

  // The right-hand side of tpmg's linear system into rhs (laid out already).
  // tpmg's operator has the Dirichlet DoFs eliminated (an identity row for
  // each, zero columns), so the boundary values g enter the right-hand side
  // twice: interior entries are b_I = F_I - A_IB g_B (the load vector minus
  // the lifting), Dirichlet entries are b_B = g_B. AffineConstraints does
  // exactly this: distribute_local_to_global() with the cell matrix subtracts
  // the lifting, and distribute() then writes g into the constrained entries.
  //
  // The quadrature is Gauss with k+2 points per direction, tpmg's own choice
  // in tpmg_problem_rhs(), so that the two right-hand sides agree to
  // rounding. Every cell of the mesh is a translate of every other (tpmg
  // admits nothing else), so the cell matrix is computed once; only the load
  // vector differs from cell to cell.
  template <int dim>
  void
  assemble_rhs(const dealii::Mapping<dim>                         &mapping,
               const dealii::DoFHandler<dim>                      &dof_handler,
               const dealii::AffineConstraints<double>            &constraints,
               const dealii::Function<dim>                        &f,
               dealii::LinearAlgebra::distributed::Vector<double> &rhs);

  // @sect3{The Krylov solve}
  //
  // deal.II's GMRES or CG on A x = b from x, as tpmg's solvers run: GMRES
  // right-preconditioned, so that the norm it monitors is the true
  // residual's, as in tpmg's flexible GMRES, with a restart length of
  // `restart`; `flexible` takes deal.II's flexible GMRES, SolverFGMRES, of
  // the same restart length. Throws SolverControl::NoConvergence where
  // `control` stops it.
  template <typename VectorType,
            typename MatrixType,
            typename PreconditionerType>
  void
  krylov_solve(const tpmg_solver_type    solver,
               const unsigned int        restart,
               const bool                flexible,
               dealii::SolverControl    &control,
               const MatrixType         &matrix,
               VectorType               &x,
               const VectorType         &b,
               const PreconditionerType &preconditioner)
  {
    using namespace dealii;
    if (solver == TPMG_SOLVER_GMRES && flexible)
      {
#if DEAL_II_VERSION_GTE(9, 6, 0)
        typename SolverFGMRES<VectorType>::AdditionalData fgmres_data(
          restart,
          LinearAlgebra::OrthogonalizationStrategy::modified_gram_schmidt);
#else
        typename SolverFGMRES<VectorType>::AdditionalData fgmres_data(restart);
#endif
        SolverFGMRES<VectorType> fgmres(control, fgmres_data);
        fgmres.solve(matrix, x, b, preconditioner);
      }
    else if (solver == TPMG_SOLVER_GMRES)
      {
#if DEAL_II_VERSION_GTE(9, 6, 0)
        // From deal.II 9.6 on the first argument is the size of the Arnoldi
        // basis (the restart length), no longer the number of temporary
        // vectors (basis size + 2), and the default orthogonalization is
        // delayed classical Gram-Schmidt: keep modified Gram-Schmidt, as
        // deal.II < 9.6 and tpmg's GMRES.
        typename SolverGMRES<VectorType>::AdditionalData gmres_data(restart,
                                                                    true);
        gmres_data.orthogonalization_strategy =
          LinearAlgebra::OrthogonalizationStrategy::modified_gram_schmidt;
        SolverGMRES<VectorType> gmres(control, gmres_data);
#else
        const unsigned int      n_vectors = restart + 2;
        SolverGMRES<VectorType> gmres(
          control,
          typename SolverGMRES<VectorType>::AdditionalData(n_vectors, true));
#endif
        gmres.solve(matrix, x, b, preconditioner);
      }
    else
      {
        SolverCG<VectorType> cg(control);
        cg.solve(matrix, x, b, preconditioner);
      }
  }

  // @sect3{MPI and errors}
  //
  // MPI and deal.II's threads: MPI_InitFinalize sets TBB's thread limit
  // (`threads`, 0: TBB's default). deal.II forwards its arguments to PETSc
  // and Kokkos (9.6: Kokkos rejects --threads, PETSc reports options it left
  // unused): they get only the program's name, the options are ours.
  class InitFinalize
  {
  public:
    InitFinalize(char *program, const unsigned int threads);

  private:
    int                                      argc = 1;
    char                                    *args[2];
    char                                   **argv;
    dealii::Utilities::MPI::MPI_InitFinalize mpi;
  };

  // An exception as one line: deal.II's exceptions print several, with the
  // place they were thrown from; the message is what the user needs.
  std::string
  one_line(const std::exception &exc);

  // "<program>: <the exception as one line>" on stderr, after what stdout
  // holds.
  void
  report_error(const std::exception &exc);
} // namespace DealiiApp

#endif
