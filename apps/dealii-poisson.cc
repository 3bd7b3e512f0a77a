/* dealii-poisson: a deal.II program that solves Poisson's equation with tpmg's
 * vertex-patch smoother and operator swapped into deal.II's own multigrid.
 *
 * Introduction
 * ------------
 * This program is written like deal.II's tutorial step-37, and does what that
 * program does: it solves
 *
 *   -Laplace(u) = f in Omega,   u = g on the boundary of Omega,
 *
 * with continuous FE_Q(k) elements on a parallel::distributed::Triangulation,
 * by a Krylov method (GMRES or CG) preconditioned with one geometric multigrid
 * V-cycle, everything built from deal.II's classes: the mesh, the DoFHandler
 * with level DoFs, MGConstrainedDoFs, MGTransferMatrixFree, Multigrid,
 * PreconditionMG, SolverGMRES and SolverCG. What differs is what runs on each
 * level: instead of deal.II's MatrixFreeOperators::LaplaceOperator and a
 * Chebyshev smoother, the levels use three classes of the tpmg bridge
 * (namespace tpmg::dealii):
 *
 * - LaplaceOperator: tpmg's matrix-free operator (sum factorization with the
 *   1D matrices of a Cartesian cell),
 * - PatchSmoother: tpmg's multiplicative vertex-patch smoother, one exact
 *   local solve by fast diagonalization per patch of cells around an interior
 *   vertex, in 2^dim colours,
 * - CoarseSolver: the exact solve on the coarsest level.
 *
 * The coarse solve can instead be the one deal.II users configure for coarse
 * meshes of many cells (--coarse): the assembled coarse matrix solved by
 * Trilinos, with CG and ML's algebraic multigrid (trilinos-amg) or with
 * Amesos' sparse LU, KLU (trilinos-direct), by the bridge's
 * TrilinosCoarseSolver. The program then also reports the time of the coarse
 * solver's set-up and of its solves, one per V-cycle.
 *
 * tpmg works with its own DoF numbering (global lexicographic, x fastest), so
 * the program renumbers the DoFs with tpmg::dealii::renumber_lexicographic()
 * before it builds anything that stores DoF indices. It also restricts the
 * mesh: the domain is an axis-parallel box cut into n_0 x n_1 (x n_2) equal
 * cells (GridGenerator::subdivided_hyper_rectangle, or hyper_cube) and refined
 * globally. The renumbering checks this and throws otherwise.
 *
 * Two other ways of using tpmg are a command-line option away (--use):
 * `preconditioner` keeps deal.II's Krylov solver and replaces the whole
 * V-cycle by tpmg::dealii::GpuPreconditioner, which runs it in the tpmg
 * backend (the GPU with --backend cuda), moving only the vectors it is given;
 * `solve` hands the whole solve to tpmg::dealii::solve_on_gpu(). All three
 * give the same iterations up to rounding: they are the same V-cycle.
 *
 * The test problems are those of tpmg-poisson: `sine`, the manufactured
 * solution u = prod_d sin(pi x_d) (f = dim pi^2 u, g = u), whose L2 error the
 * program reports; and `one`, f = 1 with g = 0. Run `dealii-poisson --help`
 * for the options. Exit status: 0 after a solve (converged or not: see the
 * output), 1 when deal.II or tpmg reports an error, 2 for a bad option (one
 * line on stderr naming it).
 */

// The include files: deal.II's mesh, finite element, DoF and multigrid
// classes, as in step-37,
#include <deal.II/base/function.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/timer.h>
#include <deal.II/base/utilities.h>

#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/mapping_q1.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/vector.h>

#include <deal.II/multigrid/mg_constrained_dofs.h>
#include <deal.II/multigrid/mg_matrix.h>
#include <deal.II/multigrid/mg_transfer_matrix_free.h>
#include <deal.II/multigrid/multigrid.h>

#include <deal.II/numerics/data_out.h>
#include <deal.II/numerics/vector_tools.h>

// the tpmg bridge,
#include <tpmg/dealii/coarse_solver.h>
#include <tpmg/dealii/context.h>
#include <tpmg/dealii/gpu_preconditioner.h>
#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/laplace_operator.h>
#include <tpmg/dealii/patch_smoother.h>
#include <tpmg/dealii/trilinos_coarse_solver.h>

// and what the deal.II programs share: the option parsing of tpmg's
// command-line programs, so that every program spells and checks its
// options the same way, and the test problem (dealii-app-common.h).
#include "dealii-app-common.h"

#include <cstdio>
#include <limits>
#include <string>

namespace DealiiPoisson
{
  using namespace dealii;

  // @sect3{The options}
  //
  // Everything the command line can set, with the defaults of tpmg-poisson
  // where the two programs share an option: called without options, both
  // solve the same problem.
  enum class Use
  {
    multigrid,      // deal.II's Multigrid with tpmg's classes on the levels
    preconditioner, // deal.II's Krylov solver, tpmg::dealii::GpuPreconditioner
    solve           // tpmg::dealii::solve_on_gpu()
  };

  const char *const use_names[] = {"multigrid",
                                   "preconditioner",
                                   "solve",
                                   nullptr};

  // The solver of the coarsest level in --use multigrid.
  enum class Coarse
  {
    tpmg,           // tpmg::dealii::CoarseSolver: tpmg's exact solve
    trilinos_amg,   // TrilinosCoarseSolver: CG with ML's AMG
    trilinos_direct // TrilinosCoarseSolver: Amesos KLU
  };

  const char *const coarse_names[] = {"tpmg",
                                      "trilinos-amg",
                                      "trilinos-direct",
                                      nullptr};

  // The options of tpmg-poisson's that both deal.II programs have (level 0:
  // the level nearest to 10^6 DoFs), and this program's own.
  struct Parameters : public DealiiApp::Parameters
  {
    Use         use              = Use::multigrid;
    Coarse      coarse           = Coarse::tpmg;
    double      coarse_tolerance = 1e-6; // trilinos-amg only
    std::string vtu_file;
    std::string setup_file;
  };



  void
  print_help()
  {
    std::printf(
      "Usage: dealii-poisson [options]\n"
      "Solve -Laplace(u) = f, u = g on the boundary, on an axis-parallel box with FE_Q(k)\n"
      "elements in deal.II, by a Krylov method preconditioned with deal.II's multigrid\n"
      "V-cycle, with tpmg's vertex-patch smoother, operator and coarse solver on the levels.\n"
      "\n"
      "  --dim 2|3                   dimension (default 3)\n"
      "  --degree k                  polynomial degree, 1..10 in 2D, 1..8 in 3D (default 3)\n"
      "  --level L                   global refinements of the coarse mesh, 1..30 (default:\n"
      "                              the level whose DoF count is nearest to 1,000,000)\n"
      "  --cells n0,n1[,n2]          coarse cells per direction: subdivided_hyper_rectangle\n"
      "                              (default: hyper_cube, one cell)\n"
      "  --box a0,b0,a1,b1[,a2,b2]   the domain, a_d < b_d (default the unit square/cube)\n"
      "  --rhs one|sine              f = 1, g = 0; or u = prod sin(pi x_d) (default sine)\n"
      "  --use multigrid|preconditioner|solve\n"
      "                              multigrid: deal.II's Multigrid with tpmg's LaplaceOperator,\n"
      "                              PatchSmoother and CoarseSolver (default); preconditioner:\n"
      "                              deal.II's solver with tpmg's GpuPreconditioner (whole\n"
      "                              V-cycle in the backend); solve: tpmg's solve_on_gpu()\n"
      "  --coarse tpmg|trilinos-amg|trilinos-direct\n"
      "                              the coarse solver of --use multigrid: tpmg's CoarseSolver\n"
      "                              (default), or the assembled coarse matrix solved by\n"
      "                              Trilinos: CG with ML's AMG, or Amesos KLU\n"
      "  --coarse-tol t              trilinos-amg: relative residual of each coarse solve, in\n"
      "                              (0, 1) (default 1e-6)\n"
      "  --solver gmres|cg           the Krylov method (default gmres)\n"
      "  --tol t                     relative residual to reach, in (0, 1) (default 1e-9)\n"
      "  --max-iterations n          iteration limit, >= 1 (default 100)\n"
      "  --restart n                 GMRES restart length, 1..1000 (default 30)\n"
      "  --backend NAME              where tpmg's parts run: cpu, cuda, cuda/VARIANT\n"
      "                              (default cpu)\n"
      "  --threads n                 threads, 1..1024: OpenMP threads of tpmg and TBB threads\n"
      "                              of deal.II (default: deal.II's, for both)\n"
      "  --vtu FILE                  write the solution as a VTU file\n"
      "  --write-setup FILE          write the problem as a tpmg setup file, for\n"
      "                              `tpmg-poisson --setup FILE`\n"
      "  --json                      end the output with one line of JSON\n"
      "  --help                      print this help and exit\n"
      "\n"
      "On P MPI ranks (mpirun -np P dealii-poisson ...) every rank owns a slab of coarse\n"
      "cells along the last direction: give --cells with m P cells along it, m even with\n"
      "up to 4 cells along the other directions (a multiple of 4 with up to 8, of 8 with\n"
      "up to 16, ...), e.g. --cells 2,4 or 2,2,4 for P = 2; other meshes are refused.\n"
      "\n"
      "Exit status: 0 solved (see 'converged'), 1 deal.II or tpmg error, 2 bad option.\n");
  }



  // The options (DealiiApp::CommandLine: a bad one is one line on stderr
  // and exit status 2, before deal.II or MPI start), into p; false after
  // --help.
  bool
  parse_options(int argc, char **argv, Parameters &p)
  {
    DealiiApp::CommandLine line(argc, argv, {/*rhs=*/true, /*backend=*/true});
    const char            *coarse_tolerance_text = nullptr;
    while (line.next())
      if (line.is("--use"))
        p.use = static_cast<Use>(
          app_parse_choice("--use", line.value("--use"), use_names));
      else if (line.is("--coarse"))
        p.coarse = static_cast<Coarse>(
          app_parse_choice("--coarse", line.value("--coarse"), coarse_names));
      else if (line.is("--coarse-tol"))
        {
          coarse_tolerance_text = line.value("--coarse-tol");
          p.coarse_tolerance    = app_parse_open_interval("--coarse-tol",
                                                       coarse_tolerance_text,
                                                       0,
                                                       1);
        }
      else if (line.is("--vtu"))
        p.vtu_file = line.value("--vtu");
      else if (line.is("--write-setup"))
        p.setup_file = line.value("--write-setup");
      else
        line.unknown();
    if (line.help())
      return false;

    // The checks that combine options, once all are known (the size of the
    // coarse level is tpmg's limit: it is solved with a dense inverse), and
    // what this program does not have.
    line.finish(1e6, p);
    const char *coarse_name = coarse_names[static_cast<int>(p.coarse)];
    if (p.coarse != Coarse::tpmg && p.use != Use::multigrid)
      app_usage_error("--coarse %s: only with --use multigrid (--use %s "
                      "runs tpmg's own V-cycle)",
                      coarse_name,
                      use_names[static_cast<int>(p.use)]);
    if (p.coarse != Coarse::tpmg &&
        !tpmg::dealii::TrilinosCoarseSolver<2, double>::is_available())
      app_usage_error("--coarse %s: this build has no Trilinos (deal.II "
                      "without Trilinos, or tpmg configured with "
                      "-DTPMG_BRIDGE_TRILINOS=OFF)",
                      coarse_name);
    if (coarse_tolerance_text != nullptr && p.coarse != Coarse::trilinos_amg)
      app_usage_error("--coarse-tol %s: only with --coarse trilinos-amg",
                      coarse_tolerance_text);
    return true;
  }



  // @sect3{The coarse solver, timed}
  //
  // Multigrid calls its coarse solver once per V-cycle. This wrapper passes
  // the calls on and adds up their number and wall time (after the context
  // has finished its work, for a GPU backend) and, for trilinos-amg, the CG
  // iterations, which the report divides into per-V-cycle figures.
  template <int dim>
  class TimedCoarseSolver
    : public MGCoarseGridBase<LinearAlgebra::distributed::Vector<double>>
  {
  public:
    using VectorType = LinearAlgebra::distributed::Vector<double>;

    TimedCoarseSolver(
      const MGCoarseGridBase<VectorType>                    &solver,
      const tpmg::dealii::TrilinosCoarseSolver<dim, double> *trilinos,
      tpmg::dealii::Context                                 &context)
      : solver(solver)
      , trilinos(trilinos)
      , context(context)
    {}

    void
    operator()(const unsigned int level,
               VectorType        &dst,
               const VectorType  &src) const override
    {
      const double start = app_now();
      solver(level, dst, src);
      context.synchronize();
      seconds += app_now() - start;
      ++n_calls;
      if (trilinos != nullptr)
        n_iterations += trilinos->last_n_iterations();
    }

    const MGCoarseGridBase<VectorType>                    &solver;
    const tpmg::dealii::TrilinosCoarseSolver<dim, double> *trilinos;
    tpmg::dealii::Context                                 &context;
    mutable unsigned long long                             n_calls      = 0;
    mutable unsigned long long                             n_iterations = 0;
    mutable double                                         seconds      = 0;
  };



  // @sect3{The PoissonProblem class}
  //
  // The structure of step-37's LaplaceProblem: make the mesh, set up the DoFs
  // and the multigrid levels, assemble the right-hand side, solve, and
  // evaluate. tpmg's classes hold pointers to the Hierarchy, which holds
  // pointers to the DoFHandler and the Context, so the members are declared in
  // the order in which they may be built and are destroyed in reverse.
  template <int dim>
  class PoissonProblem
  {
  public:
    explicit PoissonProblem(const Parameters &parameters);

    void
    run();

  private:
    using VectorType = LinearAlgebra::distributed::Vector<double>;

    void
    make_grid();
    void
    setup_system();
    void
    assemble_rhs();
    void
    setup_multigrid();
    void
    solve();
    void
    output_results();

    // Per V-cycle (per coarse solve): seconds, and CG iterations of
    // trilinos-amg; NaN before the first.
    double
    coarse_seconds_per_cycle() const
    {
      return mg_coarse && mg_coarse->n_calls > 0 ?
               mg_coarse->seconds / mg_coarse->n_calls :
               std::numeric_limits<double>::quiet_NaN();
    }
    double
    coarse_iterations_per_cycle() const
    {
      return mg_coarse && mg_coarse->n_calls > 0 ?
               static_cast<double>(mg_coarse->n_iterations) /
                 mg_coarse->n_calls :
               std::numeric_limits<double>::quiet_NaN();
    }

    const Parameters prm;

    parallel::distributed::Triangulation<dim> triangulation;
    const FE_Q<dim>                           fe;
    const MappingQ1<dim>                      mapping;
    DoFHandler<dim>                           dof_handler;

    AffineConstraints<double> constraints;
    MGConstrainedDoFs         mg_constrained_dofs;

    tpmg::dealii::Context                                     context;
    std::unique_ptr<tpmg::dealii::Hierarchy<dim>>             hierarchy;
    tpmg::dealii::LaplaceOperator<dim, double>                system_matrix;
    MGLevelObject<tpmg::dealii::LaplaceOperator<dim, double>> mg_matrices;
    std::unique_ptr<tpmg::dealii::PatchSmoother<dim, double>> mg_smoother;
    std::unique_ptr<tpmg::dealii::CoarseSolver<dim, double>>  tpmg_coarse;
    std::unique_ptr<tpmg::dealii::TrilinosCoarseSolver<dim, double>>
                                                       trilinos_coarse;
    std::unique_ptr<TimedCoarseSolver<dim>>            mg_coarse;
    std::unique_ptr<MGTransferMatrixFree<dim, double>> mg_transfer;
    std::unique_ptr<mg::Matrix<VectorType>>            mg_matrix;
    std::unique_ptr<Multigrid<VectorType>>             mg;
    std::unique_ptr<
      PreconditionMG<dim, VectorType, MGTransferMatrixFree<dim, double>>>
                                                          mg_preconditioner;
    std::unique_ptr<tpmg::dealii::GpuPreconditioner<dim>> gpu_preconditioner;

    VectorType solution;
    VectorType system_rhs;

    Timer        timer;
    double       setup_time = 0, solve_time = 0, coarse_setup_time = 0;
    unsigned int iterations         = 0;
    bool         converged          = false;
    double       residual_reduction = 0;
    double       l2_error           = 0;
  };



  // The constructor makes the mesh object as step-37 does: a
  // parallel::distributed::Triangulation (p4est) that keeps the multigrid
  // hierarchy; on one MPI rank it holds the whole mesh. The tpmg context
  // holds the backend and its threads.
  template <int dim>
  PoissonProblem<dim>::PoissonProblem(const Parameters &parameters)
    : prm(parameters)
    , triangulation(MPI_COMM_WORLD,
                    Triangulation<dim>::limit_level_difference_at_vertices,
                    parallel::distributed::Triangulation<
                      dim>::construct_multigrid_hierarchy)
    , fe(parameters.degree)
    , dof_handler(triangulation)
    , context(MPI_COMM_WORLD, parameters.backend, parameters.threads)
  {}



  // @sect4{PoissonProblem::make_grid}
  //
  // One coarse cell (hyper_cube) by default, or n_0 x n_1 (x n_2) equal cells
  // of a box (subdivided_hyper_rectangle), refined globally `level` times,
  // the whole boundary Dirichlet (DealiiApp::make_mesh()). On P MPI ranks
  // each rank owns a slab of whole coarse cells along the last direction, as
  // tpmg needs: tpmg::dealii::make_slab_triangulation() makes the same box
  // and refuses coarse meshes that p4est would not cut into slabs.
  template <int dim>
  void
  PoissonProblem<dim>::make_grid()
  {
    DealiiApp::make_mesh(prm, triangulation);
  }



  // @sect4{PoissonProblem::setup_system}
  //
  // DoFs on the active mesh and on every level, as for any multigrid program,
  // then the step that tpmg adds: renumber_lexicographic() puts the active and
  // the level DoFs into tpmg's order (DealiiApp::distribute_dofs()).
  // Everything that stores DoF indices comes after it: the constraints,
  // MGConstrainedDoFs and the tpmg Hierarchy.
  //
  // The AffineConstraints object holds the Dirichlet values g: it lifts them
  // into the right-hand side and sets them in the start vector. The operators
  // take their Dirichlet DoFs from MGConstrainedDoFs and from tpmg's grid,
  // which cross_check() compares.
  template <int dim>
  void
  PoissonProblem<dim>::setup_system()
  {
    DealiiApp::distribute_dofs(fe, dof_handler);
    if (prm.rhs == TPMG_RHS_SINE)
      DealiiApp::make_boundary_constraints(mapping,
                                           dof_handler,
                                           DealiiApp::Solution<dim>(),
                                           constraints);
    else
      DealiiApp::make_boundary_constraints(mapping,
                                           dof_handler,
                                           Functions::ZeroFunction<dim>(),
                                           constraints);

    mg_constrained_dofs.initialize(dof_handler);
    mg_constrained_dofs.make_zero_boundary_constraints(dof_handler,
                                                       {types::boundary_id(0)});

    hierarchy =
      std::make_unique<tpmg::dealii::Hierarchy<dim>>(dof_handler, context);
    hierarchy->cross_check(mg_constrained_dofs);

    system_matrix.initialize(*hierarchy);
    system_matrix.initialize_dof_vector(solution);
    system_matrix.initialize_dof_vector(system_rhs);
  }



  // @sect4{PoissonProblem::assemble_rhs}
  //
  // The right-hand side of tpmg's linear system, with the Dirichlet DoFs
  // eliminated: b_I = F_I - A_IB g_B, b_B = g_B, by Gauss quadrature with
  // k+2 points as tpmg_problem_rhs() (DealiiApp::assemble_rhs() says how).
  template <int dim>
  void
  PoissonProblem<dim>::assemble_rhs()
  {
    DealiiApp::assemble_rhs(mapping,
                            dof_handler,
                            constraints,
                            DealiiApp::RightHandSide<dim>(prm.rhs),
                            system_rhs);
  }



  // @sect4{PoissonProblem::setup_multigrid}
  //
  // The level objects of deal.II's Multigrid, as in step-37, but tpmg's: one
  // LaplaceOperator per level, one PatchSmoother for all levels above the
  // coarsest, and the coarse solver on level 0 (--coarse: tpmg's
  // CoarseSolver, or TrilinosCoarseSolver on the matrix deal.II assembles
  // with the Dirichlet DoFs of MGConstrainedDoFs). The smoother is both pre-
  // and post-smoother: deal.II's Multigrid calls apply() to pre-smooth and
  // smooth() to post-smooth. For CG, smooth() visits the colours in reverse
  // order, which makes the V-cycle symmetric; for GMRES, which does not need
  // that, in the same order as apply(): that V-cycle contracts faster. tpmg's
  // own solver makes the same choice, so the two take the same iterations.
  // The transfer is deal.II's MGTransferMatrixFree, built with the level
  // layouts of tpmg's operators so that the transfer's level vectors fit
  // them.
  //
  // With --use preconditioner the V-cycle is instead tpmg's own, run by
  // GpuPreconditioner in the context's backend, with the same choice of
  // colour order; --use solve needs nothing here.
  template <int dim>
  void
  PoissonProblem<dim>::setup_multigrid()
  {
    if (prm.use == Use::multigrid)
      {
        const unsigned int n_levels = triangulation.n_global_levels();
        mg_matrices.resize(0, n_levels - 1);
        for (unsigned int level = 0; level < n_levels; ++level)
          mg_matrices[level].initialize(*hierarchy, level);
        typename tpmg::dealii::PatchSmoother<dim, double>::AdditionalData
          smoother_data;
        smoother_data.symmetric = prm.solver == TPMG_SOLVER_CG;
        mg_smoother =
          std::make_unique<tpmg::dealii::PatchSmoother<dim, double>>(
            *hierarchy, smoother_data);
        // The coarse solver (--coarse) on deal.II's level min_level(),
        // tpmg's level 0, timed on its own.
        context.synchronize();
        const double coarse_start = app_now();
        if (prm.coarse == Coarse::tpmg)
          tpmg_coarse =
            std::make_unique<tpmg::dealii::CoarseSolver<dim, double>>(
              *hierarchy);
        else
          trilinos_coarse =
            std::make_unique<tpmg::dealii::TrilinosCoarseSolver<dim, double>>(
              dof_handler,
              mg_constrained_dofs,
              hierarchy->min_level(),
              typename tpmg::dealii::TrilinosCoarseSolver<dim, double>::
                AdditionalData(prm.coarse == Coarse::trilinos_amg ?
                                 tpmg::dealii::TrilinosCoarseMethod::amg :
                                 tpmg::dealii::TrilinosCoarseMethod::direct,
                               prm.coarse_tolerance));
        context.synchronize();
        coarse_setup_time = app_now() - coarse_start;
        if (tpmg_coarse)
          mg_coarse = std::make_unique<TimedCoarseSolver<dim>>(*tpmg_coarse,
                                                               nullptr,
                                                               context);
        else
          mg_coarse =
            std::make_unique<TimedCoarseSolver<dim>>(*trilinos_coarse,
                                                     trilinos_coarse.get(),
                                                     context);
        mg_transfer = std::make_unique<MGTransferMatrixFree<dim, double>>(
          mg_constrained_dofs);
        mg_transfer->build(dof_handler, hierarchy->get_level_partitioners());

        mg_matrix = std::make_unique<mg::Matrix<VectorType>>(mg_matrices);
        mg        = std::make_unique<Multigrid<VectorType>>(
          *mg_matrix, *mg_coarse, *mg_transfer, *mg_smoother, *mg_smoother);
        mg_preconditioner = std::make_unique<
          PreconditionMG<dim, VectorType, MGTransferMatrixFree<dim, double>>>(
          dof_handler, *mg, *mg_transfer);
      }
    else if (prm.use == Use::preconditioner)
      {
        tpmg_multigrid_options options = tpmg_multigrid_options_default();
        options.symmetric              = prm.solver == TPMG_SOLVER_CG;
        gpu_preconditioner =
          std::make_unique<tpmg::dealii::GpuPreconditioner<dim>>(*hierarchy,
                                                                 context,
                                                                 options);
      }
  }



  // @sect4{PoissonProblem::solve}
  //
  // deal.II's Krylov solvers stop when the residual norm falls below an
  // absolute tolerance, tpmg's at tol ||b||: the program asks for
  // tol ||b||. GMRES is right-preconditioned, so that the norm it monitors is
  // the true residual's, as in tpmg's flexible GMRES
  // (DealiiApp::krylov_solve()).
  //
  // The start vector is zero on the interior and g on the Dirichlet DoFs
  // (constraints.distribute()), so the first residual vanishes on the
  // boundary, where tpmg's V-cycle returns zero, and stays so.
  //
  // With --use solve, solve_on_gpu() does everything in one call, so the
  // solve time includes what it sets up: tpmg's solver with its V-cycle
  // hierarchy and vectors, and the copies of b and x.
  template <int dim>
  void
  PoissonProblem<dim>::solve()
  {
    const double rhs_norm = system_rhs.l2_norm();
    solution              = 0;
    constraints.distribute(solution);

    context.synchronize();
    timer.restart();
    if (prm.use == Use::solve)
      {
        tpmg_solver_options options = tpmg_solver_options_default();
        options.type                = prm.solver;
        options.arithmetic     = TPMG_ARITHMETIC_DOUBLE; // as --use multigrid
        options.tolerance      = prm.tolerance;
        options.max_iterations = prm.max_iterations;
        options.restart        = prm.restart;
        const tpmg_solver_result result = tpmg::dealii::solve_on_gpu(
          *hierarchy, context, system_rhs, solution, options);
        iterations = result.iterations;
        converged  = result.converged != 0;
      }
    else
      {
        SolverControl control(prm.max_iterations, prm.tolerance * rhs_norm);
        auto          run_solver = [&](const auto &preconditioner) {
          DealiiApp::krylov_solve(prm.solver,
                                  prm.restart,
                                  /*flexible=*/false,
                                  control,
                                  system_matrix,
                                  solution,
                                  system_rhs,
                                  preconditioner);
        };
        try
          {
            if (prm.use == Use::multigrid)
              run_solver(*mg_preconditioner);
            else
              run_solver(*gpu_preconditioner);
            converged = true;
          }
        catch (const SolverControl::NoConvergence &)
          {
            converged = false;
          }
        iterations = control.last_step();
      }
    context.synchronize();
    solve_time = timer.wall_time();

    // The residual the solve reached, recomputed with tpmg's operator.
    VectorType residual;
    system_matrix.initialize_dof_vector(residual);
    system_matrix.vmult(residual, solution);
    residual.sadd(-1., 1., system_rhs);
    residual_reduction = residual.l2_norm() / rhs_norm;
  }



  // @sect4{PoissonProblem::output_results}
  //
  // The L2 error against the manufactured solution, by deal.II's
  // VectorTools::integrate_difference() with Gauss quadrature of k+2 points
  // (tpmg_problem_l2_error() uses the same), and optionally the solution as
  // VTU for ParaView or VisIt.
  template <int dim>
  void
  PoissonProblem<dim>::output_results()
  {
    solution.update_ghost_values();
    if (prm.rhs == TPMG_RHS_SINE)
      {
        Vector<float> cell_errors(triangulation.n_active_cells());
        VectorTools::integrate_difference(dof_handler,
                                          solution,
                                          DealiiApp::Solution<dim>(),
                                          cell_errors,
                                          QGauss<dim>(fe.degree + 2),
                                          VectorTools::L2_norm);
        l2_error = VectorTools::compute_global_error(triangulation,
                                                     cell_errors,
                                                     VectorTools::L2_norm);
      }
    if (!prm.vtu_file.empty())
      {
        DataOut<dim> data_out;
        data_out.attach_dof_handler(dof_handler);
        data_out.add_data_vector(solution, "solution");
        data_out.build_patches(fe.degree);
        // one file, written by the ranks together
        data_out.write_vtu_in_parallel(prm.vtu_file, MPI_COMM_WORLD);
      }
    solution.zero_out_ghost_values();
  }



  // @sect4{PoissonProblem::run}
  //
  // The steps in order, the set-up timed as one (mesh, DoFs, renumbering,
  // tpmg's hierarchy and level objects, the right-hand side), and a report
  // in the form of tpmg-poisson's, with the same JSON field names where the
  // two programs share a quantity.
  template <int dim>
  void
  PoissonProblem<dim>::run()
  {
    timer.restart();
    make_grid();
    setup_system();
    setup_multigrid();
    assemble_rhs();
    if (!prm.setup_file.empty())
      hierarchy->write_setup(prm.setup_file, prm.rhs, &system_rhs);
    context.synchronize();
    setup_time = timer.wall_time();

    // on P ranks rank 0 reports
    const bool report = Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0;
    const types::global_dof_index n_dofs = dof_handler.n_dofs();
    char                          group[32], nonzeros[32];
    if (report)
      {
        std::printf(
          "dealii-poisson: %dD Q%u, level %u, %s DoFs, use %s, %s backend, "
          "%u thread%s (tpmg: OpenMP, deal.II: TBB)\n",
          dim,
          prm.degree,
          prm.level,
          app_group(n_dofs, group),
          use_names[static_cast<int>(prm.use)],
          prm.backend,
          context.n_threads(),
          context.n_threads() == 1 ? "" : "s");
        std::printf("solver %s", tpmg_solver_type_name(prm.solver));
        if (prm.solver == TPMG_SOLVER_GMRES)
          std::printf("(%u)", prm.restart);
        std::printf(", rhs %s, tolerance %.1e\n",
                    tpmg_rhs_name(prm.rhs),
                    prm.tolerance);
        if (prm.use == Use::multigrid)
          {
            std::printf("coarse solver %s",
                        coarse_names[static_cast<int>(prm.coarse)]);
            if (prm.coarse == Coarse::trilinos_amg)
              std::printf(" (tolerance %.1e)", prm.coarse_tolerance);
            if (trilinos_coarse)
              std::printf(", %s DoFs, %s nonzeros",
                          app_group(trilinos_coarse->m(), group),
                          app_group(static_cast<long long>(
                                      trilinos_coarse->n_nonzero_elements()),
                                    nonzeros));
            std::printf(", setup %.4f s\n", coarse_setup_time);
          }
        std::printf("setup %.3f s\n", setup_time);
        std::fflush(stdout);
      }

    solve();
    output_results();
    if (!report)
      return;

    std::printf("%s in %u iteration%s, residual reduction %.3e\n",
                converged ? "converged" : "NOT converged",
                iterations,
                iterations == 1 ? "" : "s",
                residual_reduction);
    std::printf("solve %.4f s, %.3f MDoF/s\n",
                solve_time,
                n_dofs / solve_time * 1e-6);
    if (mg_coarse)
      {
        std::printf("coarse solves %llu, %.4f s, %.3f ms per V-cycle",
                    mg_coarse->n_calls,
                    mg_coarse->seconds,
                    coarse_seconds_per_cycle() * 1e3);
        if (prm.coarse == Coarse::trilinos_amg)
          std::printf(", %.1f CG iterations per solve",
                      coarse_iterations_per_cycle());
        std::printf("\n");
      }
    if (prm.rhs == TPMG_RHS_SINE)
      std::printf("L2 error %.3e\n", l2_error);
    if (!prm.vtu_file.empty())
      std::printf("wrote %s\n", prm.vtu_file.c_str());
    if (!prm.setup_file.empty())
      std::printf("wrote %s\n", prm.setup_file.c_str());

    if (prm.json)
      {
        const tpmg_grid_options &grid = hierarchy->get_grid_options();
        app_json                 j;
        app_json_begin(&j);
        app_json_string(&j, "program", "dealii-poisson");
        app_json_problem(&j, &grid, static_cast<tpmg_index>(n_dofs));
        app_json_string(&j, "use", use_names[static_cast<int>(prm.use)]);
        app_json_string(&j, "solver", tpmg_solver_type_name(prm.solver));
        app_json_string(&j, "rhs", tpmg_rhs_name(prm.rhs));
        app_json_string(&j, "backend", prm.backend);
        // the coarse solver and its times (--use multigrid only)
        app_json_string(&j,
                        "coarse",
                        coarse_names[static_cast<int>(prm.coarse)]);
        if (prm.coarse == Coarse::trilinos_amg)
          app_json_number(&j, "coarse_tolerance", prm.coarse_tolerance);
        else
          app_json_null(&j, "coarse_tolerance");
        if (mg_coarse)
          {
            app_json_number(&j, "coarse_setup_seconds", coarse_setup_time);
            app_json_int(&j,
                         "coarse_solves",
                         static_cast<long long>(mg_coarse->n_calls));
            app_json_number(&j, "coarse_seconds", mg_coarse->seconds);
            app_json_number(&j,
                            "coarse_seconds_per_cycle",
                            coarse_seconds_per_cycle());
          }
        else
          for (const char *key : {"coarse_setup_seconds",
                                  "coarse_solves",
                                  "coarse_seconds",
                                  "coarse_seconds_per_cycle"})
            app_json_null(&j, key);
        if (prm.coarse == Coarse::trilinos_amg)
          app_json_number(&j,
                          "coarse_iterations_per_cycle",
                          coarse_iterations_per_cycle());
        else
          app_json_null(&j, "coarse_iterations_per_cycle");
        app_json_int(&j, "threads", context.n_threads());
        app_json_number(&j, "tolerance", prm.tolerance);
        app_json_int(&j, "max_iterations", prm.max_iterations);
        app_json_int(&j, "iterations", iterations);
        app_json_bool(&j, "converged", converged);
        app_json_number(&j, "residual_reduction", residual_reduction);
        app_json_number(&j, "setup_seconds", setup_time);
        app_json_number(&j, "solve_seconds", solve_time);
        app_json_number(&j, "dofs_per_second", n_dofs / solve_time);
        app_json_number(&j,
                        "l2_error",
                        prm.rhs == TPMG_RHS_SINE ?
                          l2_error :
                          std::numeric_limits<double>::quiet_NaN());
        app_json_int(&j,
                     "memory_bytes",
                     static_cast<long long>(context.memory_consumption()));
        app_json_end(&j);
      }
  }



} // namespace DealiiPoisson



// @sect3{The main() function}
//
// Options first, then MPI and deal.II's threads (MPI_InitFinalize sets TBB's
// thread limit), then the problem in the chosen dimension, on as many MPI
// ranks as mpiexec starts (rank 0 reports; a mesh whose partition tpmg cannot
// take is refused on every rank with a message saying what to change). Errors
// from deal.II or tpmg end the program with exit status 1 and their message
// on stderr, from every rank.
int
main(int argc, char **argv)
{
  using namespace DealiiPoisson;
  app_set_program("dealii-poisson");
  Parameters prm;
  if (!parse_options(argc, argv, prm))
    {
      print_help();
      return 0;
    }

  try
    {
      DealiiApp::InitFinalize mpi(argv[0], prm.threads);
      if (prm.dim == 2)
        PoissonProblem<2>(prm).run();
      else
        PoissonProblem<3>(prm).run();
    }
  catch (const std::exception &exc)
    {
      DealiiApp::report_error(exc);
      return APP_EXIT_LIBRARY;
    }
  return 0;
}
