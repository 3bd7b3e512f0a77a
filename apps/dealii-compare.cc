/* dealii-compare: one Poisson problem solved by deal.II's multigrid
 * smoothers and by tpmg, side by side.
 *
 * Introduction
 * ------------
 * The problem is tpmg-poisson's `sine` problem: -Laplace(u) = f on an
 * axis-parallel box with the manufactured solution u = prod_d sin(pi x_d),
 * discretized with FE_Q(k) on a globally refined mesh of equal cells. One
 * mesh, one DoFHandler (renumbered into tpmg's lexicographic order), one
 * right-hand side and one start vector serve every method, so the methods
 * differ only in how they solve A x = b. Each is a Krylov method (GMRES or
 * CG, to the same relative residual ||b - A x|| <= tol ||b||) preconditioned
 * by one multigrid V-cycle with one pre- and one post-smoothing step:
 *
 *  (a) dealii-chebyshev: deal.II's matrix-free multigrid as in tutorial
 *      step-37: MatrixFreeOperators::LaplaceOperator on every level,
 *      MGTransferMatrixFree, and PreconditionChebyshev with step-37's
 *      settings (degree 5, smoothing range 15, 10 CG iterations to estimate
 *      the largest eigenvalue; on the coarsest level Chebyshev iterated to a
 *      relative accuracy of 1e-3, MGCoarseGridApplySmoother);
 *  (b) dealii-block-sor: deal.II's RelaxationBlockSOR on the vertex patches
 *      of DoFTools::make_vertex_patches() (the DoFs inside the patch of
 *      cells around each interior vertex), with assembled level matrices
 *      (SparseMatrix) and dense inverses of the patch matrices, the patches
 *      visited in vertex order; MGTransferPrebuilt; the coarse level by
 *      Householder QR (MGCoarseGridHouseholder). This is the same
 *      vertex-patch method as tpmg's, done the general way, which stores a
 *      dense inverse per patch: it is skipped above a memory limit
 *      (--block-sor-max-mib);
 *  (c) tpmg-in-dealii: deal.II's Multigrid and transfer as in (a), with
 *      tpmg's LaplaceOperator, PatchSmoother and CoarseSolver swapped in
 *      (tpmg's CPU backend);
 *  (d) tpmg-cpu and tpmg-cuda: tpmg's own solver (flexible GMRES or CG with
 *      tpmg's V-cycle) on the bridge's Hierarchy, on the CPU backend and,
 *      where a GPU is usable, on the CUDA backend.
 *
 * (b), (c) and (d) post-smooth in the pre-smoother's order for GMRES (the
 * faster V-cycle, tpmg's choice for GMRES) and in reverse order for CG (a
 * symmetric V-cycle). (c) and (d) are the same V-cycle: their iteration
 * counts agree.
 *
 * The table gives for each method its iterations, set-up time, solve time,
 * DoFs per second of solve time, L2 error and memory. Set-up is everything
 * the method builds for this problem, ending with one application of its
 * preconditioner (which allocates Multigrid's level vectors and makes
 * PreconditionChebyshev estimate its eigenvalues); the mesh, the DoFs and
 * the right-hand side, common to all methods, are reported once. Solve is
 * the Krylov solve from the start vector (the fastest of --repeat solves);
 * for tpmg-cuda it includes moving b in and x out. Memory is the growth of
 * the process's peak resident set size during the method's set-up and solve
 * (Linux's VmHWM from Utilities::System::get_memory_stats(), reset before
 * each method through /proc/self/clear_refs); for tpmg-cuda it is the device
 * memory the tpmg context holds. Methods run one after another; for exact
 * memory numbers run one method per process (--methods), as
 * doc/comparison.sh does.
 *
 * Ranks and threads: the program runs on P MPI ranks (mpirun -np P), every
 * method but (b) on all of them; (b) needs serial SparseMatrix objects, has
 * no distributed counterpart in deal.II and reports "skipped (ranks)" on
 * P > 1. On P ranks the mesh is made by tpmg::dealii::make_slab_triangulation
 * (a slab of coarse cells along the last direction per rank, which tpmg
 * needs; deal.II's methods take any partition), and refused on every rank
 * where p4est would not cut it into slabs. Each rank runs with --threads
 * threads: deal.II with TBB threads (MultithreadInfo's limit; MatrixFree
 * with its task-parallel scheme partition_partition where there is more
 * than one), tpmg with as many OpenMP threads. Step-37 is run with one rank
 * per core and one thread each: on 2 cores,
 *
 *   mpirun -np 2 dealii-compare --cells 1,1,4 --box 0,1,0,1,0,4 --threads 1
 *
 * Times are those of the slowest rank (the ranks start after a barrier),
 * memory is the sum over the ranks; rank 0 prints the table, the JSON line
 * and the CSV rows.
 *
 * Precision (--precision): with `mixed`, the default, the multigrid levels
 * of (a) and (c) work in float, as in step-37 (level operators, smoothers,
 * coarse solve and transfer on LinearAlgebra::distributed::Vector<float>),
 * and (d) runs tpmg's TPMG_ARITHMETIC_MIXED (the V-cycle in float); the Krylov
 * method, its vectors and the active operator stay in double. With `double`
 * everything is double. (b) is always double.
 */

#include <deal.II/base/function.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/multithread_info.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/utilities.h>

#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_q1.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/precondition.h>
#include <deal.II/lac/relaxation_block.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/vector.h>

#include <deal.II/matrix_free/matrix_free.h>
#include <deal.II/matrix_free/operators.h>

#include <deal.II/multigrid/mg_coarse.h>
#include <deal.II/multigrid/mg_constrained_dofs.h>
#include <deal.II/multigrid/mg_matrix.h>
#include <deal.II/multigrid/mg_smoother.h>
#include <deal.II/multigrid/mg_tools.h>
#include <deal.II/multigrid/mg_transfer.h>
#include <deal.II/multigrid/mg_transfer_matrix_free.h>
#include <deal.II/multigrid/multigrid.h>

#include <deal.II/numerics/vector_tools.h>

#include <tpmg/dealii/coarse_solver.h>
#include <tpmg/dealii/context.h>
#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/laplace_operator.h>
#include <tpmg/dealii/patch_smoother.h>

#include <malloc.h>
#include <mpi.h>
#include <unistd.h>

#include "dealii-app-common.h"

#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace DealiiCompare
{
  using namespace dealii;

  // @sect3{The options}

  enum Method
  {
    dealii_chebyshev,
    dealii_block_sor,
    tpmg_in_dealii,
    tpmg_cpu,
    tpmg_cuda,
    n_methods
  };

  const char *const method_names[] = {"dealii-chebyshev",
                                      "dealii-block-sor",
                                      "tpmg-in-dealii",
                                      "tpmg-cpu",
                                      "tpmg-cuda",
                                      nullptr};

  // The options of tpmg-poisson's that both deal.II programs have (level 0:
  // chosen from target_dofs; threads per MPI rank, 2 unless given; the
  // problem is always `sine`), and this program's own.
  struct Parameters : public DealiiApp::Parameters
  {
    double       target_dofs       = 1e6;
    bool         mixed             = true; // float multigrid levels
    unsigned int repeat            = 1;
    double       block_sor_max_mib = 2048;
    bool         run[n_methods]    = {true, true, true, true, true};
    std::string  csv_file;
  };

  void
  print_help()
  {
    std::printf(
      "Usage: dealii-compare [options]\n"
      "Solve the Poisson problem with u = prod sin(pi x_d) by (a) deal.II's matrix-free\n"
      "multigrid with a Chebyshev smoother (as in step-37), (b) deal.II's RelaxationBlockSOR\n"
      "on vertex patches with assembled level matrices, (c) tpmg's smoother and operator in\n"
      "deal.II's Multigrid, (d) tpmg's own solver on the CPU and, if a GPU is usable, on the\n"
      "GPU, and print iterations, times, DoF/s, L2 error and memory side by side.\n"
      "\n"
      "  --dim 2|3                   dimension (default 3)\n"
      "  --degree k                  polynomial degree, 1..10 in 2D, 1..8 in 3D (default 3)\n"
      "  --level L                   global refinements of the coarse mesh, 1..30\n"
      "  --dofs N                    without --level: the level whose DoF count is nearest\n"
      "                              to N (default 1e6)\n"
      "  --cells n0,n1[,n2]          coarse cells per direction (default 1,1[,1])\n"
      "  --box a0,b0,a1,b1[,a2,b2]   the domain, a_d < b_d (default the unit square/cube)\n"
      "  --solver gmres|cg           the Krylov method of every method (default gmres)\n"
      "  --tol t                     relative residual to reach, in (0, 1) (default 1e-9)\n"
      "  --max-iterations n          iteration limit, >= 1 (default 100)\n"
      "  --restart n                 GMRES restart length, 1..1000 (default 30)\n"
      "  --threads n                 TBB threads of deal.II and OpenMP threads of tpmg,\n"
      "                              per MPI rank (default 2)\n"
      "  --precision double|mixed    the multigrid levels in double, or in float as in\n"
      "                              step-37 (tpmg: --precision mixed); the Krylov method\n"
      "                              stays in double (default mixed)\n"
      "  --repeat n                  solve n times from the start vector, report the\n"
      "                              fastest (default 1)\n"
      "  --methods m1,m2,...         which methods to run, of dealii-chebyshev,\n"
      "                              dealii-block-sor, tpmg-in-dealii, tpmg-cpu, tpmg-cuda\n"
      "                              (default all)\n"
      "  --block-sor-max-mib M       skip dealii-block-sor when its dense patch inverses\n"
      "                              would take more than M MiB (default 2048)\n"
      "  --csv FILE                  append one row per method to FILE (a header first if\n"
      "                              FILE is new or empty)\n"
      "  --json                      end the output with one line of JSON\n"
      "  --help                      print this help and exit\n"
      "\n"
      "On P MPI ranks (mpirun -np P dealii-compare ...) every method but\n"
      "dealii-block-sor (serial matrices: skipped) runs on all ranks, and every rank owns\n"
      "a slab of coarse cells along the last direction: give --cells with m P cells\n"
      "along it, m even with up to 4 cells along the other directions (a multiple of 4\n"
      "with up to 8, ...), e.g. --cells 2,4 or 2,2,4 for P = 2; other meshes are\n"
      "refused. deal.II's step-37 runs one rank per core with one thread each: on 2\n"
      "cores, mpirun -np 2 dealii-compare --cells 1,1,4 --box 0,1,0,1,0,4 --threads 1.\n"
      "Times are those of the slowest rank, memory the sum over the ranks.\n"
      "\n"
      "Exit status: 0 after the solves, 1 deal.II or tpmg error, 2 bad option.\n");
  }

  // The options (DealiiApp::CommandLine: a bad one is one line on stderr
  // and exit status 2, before deal.II or MPI start), into p; false after
  // --help.
  bool
  parse_options(int argc, char **argv, Parameters &p)
  {
    DealiiApp::CommandLine line(argc, argv, {/*rhs=*/false, /*backend=*/false});
    bool                   have_dofs = false;
    p.threads                        = 2;
    while (line.next())
      if (line.is("--dofs"))
        {
          p.target_dofs = app_parse_positive("--dofs", line.value("--dofs"));
          have_dofs     = true;
        }
      else if (line.is("--precision"))
        {
          const char *const precisions[] = {"double", "mixed", nullptr};
          p.mixed                        = app_parse_choice("--precision",
                                     line.value("--precision"),
                                     precisions) == 1;
        }
      else if (line.is("--repeat"))
        p.repeat =
          app_parse_int("--repeat", line.value("--repeat"), 1, INT_MAX);
      else if (line.is("--block-sor-max-mib"))
        p.block_sor_max_mib =
          app_parse_positive("--block-sor-max-mib",
                             line.value("--block-sor-max-mib"));
      else if (line.is("--methods"))
        {
          const std::string text = line.value("--methods");
          std::fill(std::begin(p.run), std::end(p.run), false);
          std::istringstream list(text + ",");
          std::string        name;
          while (std::getline(list, name, ','))
            {
              int m = 0;
              while (m < n_methods && name != method_names[m])
                ++m;
              if (m == n_methods)
                app_usage_error(
                  "--methods %s: unknown method '%s' (expected "
                  "dealii-chebyshev, dealii-block-sor, tpmg-in-dealii, "
                  "tpmg-cpu, tpmg-cuda)",
                  text.c_str(),
                  name.c_str());
              p.run[m] = true;
            }
        }
      else if (line.is("--csv"))
        p.csv_file = line.value("--csv");
      else
        line.unknown();
    if (line.help())
      return false;

    if (line.level_given() && have_dofs)
      app_usage_error("--level and --dofs exclude each other");
    line.finish(p.target_dofs, p);
    return true;
  }

  // @sect3{What a method reports}
  struct Result
  {
    Method       method;
    std::string  status             = "ok";  // or "skipped (...)"
    bool         mixed              = false; // float multigrid levels
    unsigned int iterations         = 0;
    bool         converged          = false;
    double       setup_seconds      = 0;
    double       solve_seconds      = 0;
    double       residual_reduction = 0;
    double       l2_error           = 0;
    double       memory_bytes       = 0;
  };

  // On P MPI ranks every method runs on all of them; rank 0 reports.
  unsigned int
  n_ranks()
  {
    return Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD);
  }

  bool
  is_root()
  {
    return Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0;
  }

  // A time as the table reports it: the ranks start together (after a
  // barrier), and the slowest rank's wall time counts. Collective.
  class Stopwatch
  {
  public:
    Stopwatch()
    {
      const int ierr = MPI_Barrier(MPI_COMM_WORLD);
      AssertThrowMPI(ierr);
      start = app_now();
    }

    double
    seconds() const
    {
      return Utilities::MPI::max(app_now() - start, MPI_COMM_WORLD);
    }

  private:
    double start;
  };

  // @sect3{Measuring memory}
  //
  // The memory of a method is the growth of the process's peak resident set
  // size (VmHWM) over its resident size when the method starts. Linux resets
  // the peak to the present size when "5" is written to /proc/self/clear_refs;
  // where that fails the peak of earlier methods may hide a later method's,
  // which the table then shows as a lower bound. malloc_trim() hands memory
  // freed by the previous method back to the system first. On P ranks the
  // growth is summed over the ranks (growth_bytes() is collective).
  class MemoryProbe
  {
  public:
    MemoryProbe()
    {
      malloc_trim(0);
      std::ofstream clear_refs("/proc/self/clear_refs");
      clear_refs << "5" << std::flush;
      Utilities::System::MemoryStats stats;
      Utilities::System::get_memory_stats(stats);
      start_kib = std::max(stats.VmRSS, stats.VmHWM);
    }

    double
    growth_bytes() const
    {
      Utilities::System::MemoryStats stats;
      Utilities::System::get_memory_stats(stats);
      return Utilities::MPI::sum(1024. * (stats.VmHWM > start_kib ?
                                            stats.VmHWM - start_kib :
                                            0),
                                 MPI_COMM_WORLD);
    }

  private:
    unsigned long int start_kib;
  };

  // @sect3{The common problem}
  //
  // The mesh, the DoFs in tpmg's numbering, the constraints and the
  // right-hand side, as in dealii-poisson (dealii-app-common.h): a
  // parallel::distributed triangulation with its multigrid hierarchy (on P
  // ranks a slab of coarse cells per rank, which tpmg needs; deal.II's
  // methods work on any partition, and this one serves them all), FE_Q(k),
  // active and level DoFs renumbered by
  // tpmg::dealii::renumber_lexicographic(), then MGConstrainedDoFs with the
  // whole boundary Dirichlet. The right-hand side is that of the core:
  // b_I = F_I - A_IB g_B, b_B = g_B (Gauss quadrature with k+2 points), and
  // the start vector x0 is zero with x0_B = g_B, so every method starts from
  // a residual that vanishes on the boundary. (g is zero on the unit box, not
  // on every box.)
  template <int dim>
  class Problem
  {
  public:
    using VectorType = LinearAlgebra::distributed::Vector<double>;

    explicit Problem(const Parameters &prm);

    double
    l2_error(const VectorType &solution) const;

    const Parameters                         &prm;
    parallel::distributed::Triangulation<dim> triangulation;
    const FE_Q<dim>                           fe;
    const MappingQ1<dim>                      mapping;
    DoFHandler<dim>                           dof_handler;
    AffineConstraints<double>                 constraints;
    AffineConstraints<double>                 homogeneous_constraints;
    MGConstrainedDoFs                         mg_constrained_dofs;
    VectorType                                rhs;
    VectorType                                start;
    double                                    setup_seconds;
  };

  template <int dim>
  Problem<dim>::Problem(const Parameters &prm)
    : prm(prm)
    , triangulation(MPI_COMM_WORLD,
                    Triangulation<dim>::limit_level_difference_at_vertices,
                    parallel::distributed::Triangulation<
                      dim>::construct_multigrid_hierarchy)
    , fe(prm.degree)
    , dof_handler(triangulation)
  {
    const Stopwatch setup_timer;
    DealiiApp::make_mesh(prm, triangulation);
    DealiiApp::distribute_dofs(fe, dof_handler);
    DealiiApp::make_boundary_constraints(mapping,
                                         dof_handler,
                                         DealiiApp::Solution<dim>(),
                                         constraints);
    DealiiApp::make_boundary_constraints(mapping,
                                         dof_handler,
                                         Functions::ZeroFunction<dim>(),
                                         homogeneous_constraints);
    mg_constrained_dofs.initialize(dof_handler);
    mg_constrained_dofs.make_zero_boundary_constraints(dof_handler,
                                                       {types::boundary_id(0)});

    rhs.reinit(dof_handler.locally_owned_dofs(),
               DoFTools::extract_locally_relevant_dofs(dof_handler),
               MPI_COMM_WORLD);
    DealiiApp::assemble_rhs(
      mapping, dof_handler, constraints, DealiiApp::RightHandSide<dim>(), rhs);
    start.reinit(rhs);
    constraints.distribute(start);
    setup_seconds = setup_timer.seconds();
  }

  // The L2 error of a solution in the DoFHandler's numbering, by Gauss
  // quadrature with k+2 points, as tpmg_problem_l2_error().
  template <int dim>
  double
  Problem<dim>::l2_error(const VectorType &solution) const
  {
    VectorType ghosted(rhs);
    ghosted.copy_locally_owned_data_from(solution);
    ghosted.update_ghost_values();
    Vector<float> cell_errors(triangulation.n_active_cells());
    VectorTools::integrate_difference(mapping,
                                      dof_handler,
                                      ghosted,
                                      DealiiApp::Solution<dim>(),
                                      cell_errors,
                                      QGauss<dim>(fe.degree + 2),
                                      VectorTools::L2_norm);
    return VectorTools::compute_global_error(triangulation,
                                             cell_errors,
                                             VectorTools::L2_norm);
  }

  // @sect3{The Krylov solve shared by (a), (b) and (c)}
  //
  // deal.II's solvers stop at an absolute residual norm: tol ||b||. GMRES is
  // right-preconditioned, so that it monitors the true residual as tpmg's
  // flexible GMRES does (DealiiApp::krylov_solve()); with float levels it is
  // deal.II's flexible GMRES, SolverFGMRES, of the same restart length. The
  // solve is repeated --repeat times from the start vector and the fastest
  // counts. The residual reduction is recomputed with the method's own
  // operator.
  template <typename VectorType,
            typename MatrixType,
            typename PreconditionerType>
  void
  repeated_solve(const Parameters         &prm,
                 const MatrixType         &system_matrix,
                 const PreconditionerType &preconditioner,
                 const VectorType         &rhs,
                 const VectorType         &start,
                 VectorType               &solution,
                 Result                   &result)
  {
    const double rhs_norm = rhs.l2_norm();
    result.solve_seconds  = std::numeric_limits<double>::infinity();
    for (unsigned int r = 0; r < prm.repeat; ++r)
      {
        solution = start;
        SolverControl   control(prm.max_iterations, prm.tolerance * rhs_norm);
        const Stopwatch solve_timer;
        try
          {
            // Float levels make the V-cycle a preconditioner that is not one
            // linear operator in double: SolverGMRES, which applies it once
            // more to the final combination of the basis, would miss the
            // tolerance by the float rounding times the condition number (2D
            // Q3, 625 DoFs: ||r|| / ||b|| = 4e-5 instead of 1e-9).
            // SolverFGMRES keeps the preconditioned vectors, as tpmg's
            // flexible GMRES does.
            DealiiApp::krylov_solve(prm.solver,
                                    prm.restart,
                                    /*flexible=*/result.mixed,
                                    control,
                                    system_matrix,
                                    solution,
                                    rhs,
                                    preconditioner);
            result.converged = true;
          }
        catch (const SolverControl::NoConvergence &)
          {
            result.converged = false;
          }
        result.solve_seconds =
          std::min(result.solve_seconds, solve_timer.seconds());
        result.iterations = control.last_step();
      }
    VectorType residual(rhs);
    system_matrix.vmult(residual, solution);
    residual.sadd(-1., 1., rhs);
    result.residual_reduction = residual.l2_norm() / rhs_norm;
  }

  // @sect3{(a) deal.II's matrix-free multigrid with a Chebyshev smoother}
  //
  // This is step-37's multigrid, with the same operators, transfer,
  // smoother settings and coarse solve, and like step-37 for a compile-time
  // degree (deal.II 9.4's run-time-degree kernels, fe_degree = -1, are
  // slower, and crash for 3D degrees above 6). As in step-37 the level
  // operators, the transfer and the smoother work in LevelNumber, float with
  // --precision mixed (the default), while the outer Krylov method and the
  // active operator stay in double: PreconditionMG converts at the finest
  // level. One difference from step-37: there are no interface (edge)
  // matrices, since the mesh is refined globally and has no refinement
  // edges.
  template <int dim, int fe_degree, typename LevelNumber>
  Result
  run_chebyshev(const Problem<dim> &problem)
  {
    using VectorType       = LinearAlgebra::distributed::Vector<double>;
    using LevelVectorType  = LinearAlgebra::distributed::Vector<LevelNumber>;
    using SystemMatrixType = MatrixFreeOperators::
      LaplaceOperator<dim, fe_degree, fe_degree + 1, 1, VectorType>;
    using LevelMatrixType = MatrixFreeOperators::
      LaplaceOperator<dim, fe_degree, fe_degree + 1, 1, LevelVectorType>;

    const Parameters &prm = problem.prm;
    Result            result;
    result.method = dealii_chebyshev;
    result.mixed  = std::is_same_v<LevelNumber, float>;
    const MemoryProbe memory;
    const Stopwatch   setup_timer;

    // MatrixFree distributes cells to TBB tasks with its default scheme when
    // there are threads to use; step-37 turns tasks off since it runs with
    // one MPI rank per core and one thread.
    typename MatrixFree<dim, double>::AdditionalData data;
    data.tasks_parallel_scheme =
      MultithreadInfo::n_threads() > 1 ?
        MatrixFree<dim, double>::AdditionalData::partition_partition :
        MatrixFree<dim, double>::AdditionalData::none;
    data.mapping_update_flags = update_gradients | update_JxW_values;
    const QGauss<1> quadrature(problem.fe.degree + 1);

    auto system_mf = std::make_shared<MatrixFree<dim, double>>();
    system_mf->reinit(problem.mapping,
                      problem.dof_handler,
                      problem.homogeneous_constraints,
                      quadrature,
                      data);
    SystemMatrixType system_matrix;
    system_matrix.initialize(system_mf);

    const unsigned int n_levels = problem.triangulation.n_global_levels();
    MGLevelObject<LevelMatrixType> mg_matrices(0, n_levels - 1);
    for (unsigned int level = 0; level < n_levels; ++level)
      {
        AffineConstraints<double> level_constraints;
#if DEAL_II_VERSION_GTE(9, 6, 0)
        level_constraints.reinit(
          problem.dof_handler.locally_owned_mg_dofs(level),
          DoFTools::extract_locally_relevant_level_dofs(problem.dof_handler,
                                                        level));
#else
        level_constraints.reinit(
          DoFTools::extract_locally_relevant_level_dofs(problem.dof_handler,
                                                        level));
#endif
        level_constraints.add_lines(
          problem.mg_constrained_dofs.get_boundary_indices(level));
        level_constraints.close();
        typename MatrixFree<dim, LevelNumber>::AdditionalData level_data;
        level_data.tasks_parallel_scheme =
          MultithreadInfo::n_threads() > 1 ?
            MatrixFree<dim, LevelNumber>::AdditionalData::partition_partition :
            MatrixFree<dim, LevelNumber>::AdditionalData::none;
        level_data.mapping_update_flags = data.mapping_update_flags;
        level_data.mg_level             = level;
        auto level_mf = std::make_shared<MatrixFree<dim, LevelNumber>>();
        level_mf->reinit(problem.mapping,
                         problem.dof_handler,
                         level_constraints,
                         quadrature,
                         level_data);
        mg_matrices[level].initialize(level_mf,
                                      problem.mg_constrained_dofs,
                                      level);
      }

    MGTransferMatrixFree<dim, LevelNumber> mg_transfer(
      problem.mg_constrained_dofs);
    mg_transfer.build(problem.dof_handler);

    // step-37's smoother: on each level above the coarsest, Chebyshev of
    // degree 5 on the range [lambda_max / 15, 1.2 lambda_max] of the
    // Jacobi-preconditioned operator, lambda_max from 10 CG iterations; on
    // the coarsest level Chebyshev run as a solver to 1e-3.
    using SmootherType =
      PreconditionChebyshev<LevelMatrixType, LevelVectorType>;
    mg::SmootherRelaxation<SmootherType, LevelVectorType> mg_smoother;
    MGLevelObject<typename SmootherType::AdditionalData>  smoother_data(
      0, n_levels - 1);
    for (unsigned int level = 0; level < n_levels; ++level)
      {
        if (level > 0)
          {
            smoother_data[level].smoothing_range     = 15.;
            smoother_data[level].degree              = 5;
            smoother_data[level].eig_cg_n_iterations = 10;
          }
        else
          {
            smoother_data[0].smoothing_range = 1e-3;
            smoother_data[0].degree          = numbers::invalid_unsigned_int;
            smoother_data[0].eig_cg_n_iterations = mg_matrices[0].m();
          }
        mg_matrices[level].compute_diagonal();
        smoother_data[level].preconditioner =
          mg_matrices[level].get_matrix_diagonal_inverse();
      }
    mg_smoother.initialize(mg_matrices, smoother_data);

    MGCoarseGridApplySmoother<LevelVectorType> mg_coarse;
    mg_coarse.initialize(mg_smoother);

    mg::Matrix<LevelVectorType> mg_matrix(mg_matrices);
    Multigrid<LevelVectorType>  mg(
      mg_matrix, mg_coarse, mg_transfer, mg_smoother, mg_smoother);
    PreconditionMG<dim, LevelVectorType, MGTransferMatrixFree<dim, LevelNumber>>
      preconditioner(problem.dof_handler, mg, mg_transfer);

    VectorType rhs, start, solution;
    system_matrix.initialize_dof_vector(rhs);
    system_matrix.initialize_dof_vector(start);
    system_matrix.initialize_dof_vector(solution);
    rhs.copy_locally_owned_data_from(problem.rhs);
    start.copy_locally_owned_data_from(problem.start);
    preconditioner.vmult(solution, rhs); // allocates, estimates eigenvalues
    result.setup_seconds = setup_timer.seconds();

    repeated_solve(
      prm, system_matrix, preconditioner, rhs, start, solution, result);
    result.l2_error     = problem.l2_error(solution);
    result.memory_bytes = memory.growth_bytes();
    return result;
  }

  // The degree as a template argument: a compile-time dispatch over every
  // degree tpmg supports (1..10 in 2D, 1..8 in 3D), and the levels' number
  // type.
  template <int dim, int fe_degree = 1>
  Result
  run_chebyshev_for_degree(const Problem<dim> &problem)
  {
    constexpr int max_degree = dim == 2 ? 10 : 8;
    if constexpr (fe_degree < max_degree)
      if (problem.prm.degree != fe_degree)
        return run_chebyshev_for_degree<dim, fe_degree + 1>(problem);
    if (problem.prm.mixed)
      return run_chebyshev<dim, fe_degree, float>(problem);
    return run_chebyshev<dim, fe_degree, double>(problem);
  }

  // @sect3{(b) deal.II's RelaxationBlockSOR on vertex patches}
  //
  // The memory the dense patch inverses take: on level l, one inverse of
  // size (2k-1)^dim per interior vertex, prod_d (n_d 2^l - 1) of them.
  double
  block_sor_inverse_bytes(const Parameters &prm)
  {
    double bytes = 0;
    for (unsigned int level = 1; level <= prm.level; ++level)
      {
        double n_patches = 1, patch_size = 1;
        for (unsigned int d = 0; d < prm.dim; ++d)
          {
            const double cells = prm.cells.empty() ? 1. : prm.cells[d];
            n_patches *= std::ldexp(cells, level) - 1;
            patch_size *= 2. * prm.degree - 1;
          }
        bytes += n_patches * patch_size * patch_size * sizeof(double);
      }
    return bytes;
  }

  // deal.II's relaxation smoothers apply the same sweep before and after
  // the coarse correction, which is what tpmg does for GMRES. A symmetric
  // V-cycle, which CG needs (and tpmg uses for CG), wants the adjoint
  // afterwards: the blocks in reverse order, RelaxationBlockSOR::Tstep().
  // This post-smoother runs Tstep() of the pre-smoother's objects, so that
  // the patch inverses are stored once.
  template <typename RelaxationType, typename VectorType>
  class ReverseSmoother : public MGSmootherBase<VectorType>
  {
  public:
    explicit ReverseSmoother(
      const mg::SmootherRelaxation<RelaxationType, VectorType> &forward)
      : forward(forward)
    {}

    virtual void
    smooth(const unsigned int level,
           VectorType        &u,
           const VectorType  &rhs) const override
    {
      forward[level].Tstep(u, rhs);
    }

    virtual void
    clear() override
    {}

  private:
    const mg::SmootherRelaxation<RelaxationType, VectorType> &forward;
  };

  // The level matrices are assembled: the Laplace matrix of each level with
  // the Dirichlet rows and columns eliminated and a unit diagonal, the same
  // operator as the matrix-free ones. Within a level all cells are equal, so
  // each level's cell matrix is computed once. The finest level's DoFs are
  // the active DoFs in the same (lexicographic) order, so its matrix is also
  // the system matrix of the Krylov method, and the solve uses serial
  // vectors.
  template <int dim>
  Result
  run_block_sor(const Problem<dim> &problem)
  {
    using VectorType = Vector<double>;
    using SmootherType =
      RelaxationBlockSOR<SparseMatrix<double>, double, VectorType>;

    const Parameters &prm = problem.prm;
    Result            result;
    result.method = dealii_block_sor;
    if (n_ranks() > 1)
      {
        result.status = "skipped (ranks)";
        return result;
      }
    if (block_sor_inverse_bytes(prm) > prm.block_sor_max_mib * 1048576.)
      {
        result.status = "skipped (size)";
        return result;
      }
    const MemoryProbe memory;
    const Stopwatch   setup_timer;

    const unsigned int     n_levels = problem.triangulation.n_global_levels();
    const DoFHandler<dim> &dof_handler = problem.dof_handler;
    MGLevelObject<SparsityPattern>      patterns(0, n_levels - 1);
    MGLevelObject<SparseMatrix<double>> matrices(0, n_levels - 1);
    const QGauss<dim>                   quadrature(problem.fe.degree + 1);
    FEValues<dim>                       fe_values(problem.mapping,
                            problem.fe,
                            quadrature,
                            update_gradients | update_JxW_values);
    const unsigned int dofs_per_cell = problem.fe.n_dofs_per_cell();
    FullMatrix<double> cell_matrix(dofs_per_cell, dofs_per_cell);
    std::vector<types::global_dof_index> local_dof_indices(dofs_per_cell);
    for (unsigned int level = 0; level < n_levels; ++level)
      {
        DynamicSparsityPattern dsp(dof_handler.n_dofs(level));
        MGTools::make_sparsity_pattern(dof_handler, dsp, level);
        patterns[level].copy_from(dsp);
        matrices[level].reinit(patterns[level]);

        AffineConstraints<double> level_constraints;
        const IndexSet           &boundary =
          problem.mg_constrained_dofs.get_boundary_indices(level);
        level_constraints.add_lines(boundary);
        level_constraints.close();

        fe_values.reinit(dof_handler.begin_mg(level));
        DealiiApp::laplace_cell_matrix(fe_values, cell_matrix);
        for (const auto &cell : dof_handler.mg_cell_iterators_on_level(level))
          {
            cell->get_mg_dof_indices(local_dof_indices);
            level_constraints.distribute_local_to_global(cell_matrix,
                                                         local_dof_indices,
                                                         matrices[level]);
          }
        for (const types::global_dof_index i : boundary)
          matrices[level].set(i, i, 1.);
      }

    // The patches of every level above the coarsest, and their inverses
    // (RelaxationBlock::initialize() inverts each patch matrix by
    // Gauss-Jordan, in parallel over the patches). The coarsest level, solved
    // directly, may have no interior vertex and gets no smoother.
    MGLevelObject<typename SmootherType::AdditionalData> smoother_data(
      0, n_levels - 1);
    mg::SmootherRelaxation<SmootherType, VectorType> pre_smoother;
    pre_smoother.resize(0, n_levels - 1);
    for (unsigned int level = 1; level < n_levels; ++level)
      {
        DoFTools::make_vertex_patches(smoother_data[level].block_list,
                                      dof_handler,
                                      level,
                                      /*interior_dofs_only=*/true);
        smoother_data[level].block_list.compress();
        smoother_data[level].relaxation = 1.;
        pre_smoother[level].initialize(matrices[level], smoother_data[level]);
      }
    const ReverseSmoother<SmootherType, VectorType> reverse_smoother(
      pre_smoother);
    const MGSmootherBase<VectorType> *post_smoother = &pre_smoother;
    if (prm.solver == TPMG_SOLVER_CG)
      post_smoother = &reverse_smoother;

    FullMatrix<double> coarse_matrix;
    coarse_matrix.copy_from(matrices[0]);
    MGCoarseGridHouseholder<double, VectorType> mg_coarse;
    mg_coarse.initialize(coarse_matrix);

    MGTransferPrebuilt<VectorType> mg_transfer(problem.mg_constrained_dofs);
    mg_transfer.build(dof_handler);

    mg::Matrix<VectorType> mg_matrix(matrices);
    Multigrid<VectorType>  mg(
      mg_matrix, mg_coarse, mg_transfer, pre_smoother, *post_smoother);
    PreconditionMG<dim, VectorType, MGTransferPrebuilt<VectorType>>
      preconditioner(dof_handler, mg, mg_transfer);

    const SparseMatrix<double> &system_matrix = matrices[n_levels - 1];
    VectorType rhs(dof_handler.n_dofs()), start(dof_handler.n_dofs()),
      solution(dof_handler.n_dofs());
    for (types::global_dof_index i = 0; i < dof_handler.n_dofs(); ++i)
      {
        rhs[i]   = problem.rhs[i];
        start[i] = problem.start[i];
      }
    preconditioner.vmult(solution, rhs); // allocates the level vectors
    result.setup_seconds = setup_timer.seconds();

    repeated_solve(
      prm, system_matrix, preconditioner, rhs, start, solution, result);
    typename Problem<dim>::VectorType distributed(problem.rhs);
    for (types::global_dof_index i = 0; i < dof_handler.n_dofs(); ++i)
      distributed[i] = solution[i];
    result.l2_error     = problem.l2_error(distributed);
    result.memory_bytes = memory.growth_bytes();
    return result;
  }

  // @sect3{(c) tpmg's smoother and operator in deal.II's multigrid}
  //
  // dealii-poisson's pipeline: deal.II's Multigrid, MGTransferMatrixFree and
  // PreconditionMG, with tpmg's LaplaceOperator on every level and on the
  // active mesh, PatchSmoother as pre- and post-smoother and CoarseSolver,
  // all in a CPU context on the ranks of MPI_COMM_WORLD with --threads
  // OpenMP threads per rank. The levels work in LevelNumber (float with
  // --precision mixed, as (a)), the active operator and the Krylov method in
  // double. As in tpmg's own solver, the post-smoother visits the colours in
  // reverse order for CG (a symmetric V-cycle) and in the pre-smoother's
  // order for GMRES.
  template <int dim, typename LevelNumber>
  Result
  run_tpmg_in_dealii(const Problem<dim> &problem)
  {
    using VectorType      = LinearAlgebra::distributed::Vector<double>;
    using LevelVectorType = LinearAlgebra::distributed::Vector<LevelNumber>;
    const Parameters &prm = problem.prm;
    Result            result;
    result.method = tpmg_in_dealii;
    result.mixed  = std::is_same_v<LevelNumber, float>;
    const MemoryProbe memory;
    const Stopwatch   setup_timer;

    tpmg::dealii::Context        context(MPI_COMM_WORLD, "cpu", prm.threads);
    tpmg::dealii::Hierarchy<dim> hierarchy(problem.dof_handler, context);
    hierarchy.cross_check(problem.mg_constrained_dofs);

    tpmg::dealii::LaplaceOperator<dim, double> system_matrix(hierarchy);
    const unsigned int n_levels = problem.triangulation.n_global_levels();
    MGLevelObject<tpmg::dealii::LaplaceOperator<dim, LevelNumber>> mg_matrices(
      0, n_levels - 1);
    for (unsigned int level = 0; level < n_levels; ++level)
      mg_matrices[level].initialize(hierarchy, level);
    typename tpmg::dealii::PatchSmoother<dim, LevelNumber>::AdditionalData
      smoother_data;
    smoother_data.symmetric = prm.solver == TPMG_SOLVER_CG;
    const tpmg::dealii::PatchSmoother<dim, LevelNumber> mg_smoother(
      hierarchy, smoother_data);
    const tpmg::dealii::CoarseSolver<dim, LevelNumber> mg_coarse(hierarchy);
    MGTransferMatrixFree<dim, LevelNumber>             mg_transfer(
      problem.mg_constrained_dofs);
    mg_transfer.build(problem.dof_handler, hierarchy.get_level_partitioners());

    mg::Matrix<LevelVectorType> mg_matrix(mg_matrices);
    Multigrid<LevelVectorType>  mg(
      mg_matrix, mg_coarse, mg_transfer, mg_smoother, mg_smoother);
    PreconditionMG<dim, LevelVectorType, MGTransferMatrixFree<dim, LevelNumber>>
      preconditioner(problem.dof_handler, mg, mg_transfer);

    VectorType rhs, start, solution;
    system_matrix.initialize_dof_vector(rhs);
    system_matrix.initialize_dof_vector(start);
    system_matrix.initialize_dof_vector(solution);
    rhs.copy_locally_owned_data_from(problem.rhs);
    start.copy_locally_owned_data_from(problem.start);
    preconditioner.vmult(solution, rhs); // allocates the level vectors
    result.setup_seconds = setup_timer.seconds();

    repeated_solve(
      prm, system_matrix, preconditioner, rhs, start, solution, result);
    result.l2_error     = problem.l2_error(solution);
    result.memory_bytes = memory.growth_bytes();
    return result;
  }

  // @sect3{(d) tpmg's own solver}
  //
  // tpmg's solver (flexible GMRES or CG with tpmg's V-cycle, everything in
  // the backend; the V-cycle in float with --precision mixed,
  // TPMG_ARITHMETIC_MIXED) on the grid of a Hierarchy made in a CPU or a CUDA
  // context on the ranks of MPI_COMM_WORLD, through the C API: set-up
  // creates the grid, the vectors and the solver; the solve moves b in,
  // solves from x = 0 (tpmg sets x_B = b_B) and moves x out. This is what
  // tpmg::dealii::solve_on_gpu() does in one call; the C calls keep set-up
  // and solve apart for the table. On P ranks tpmg's vectors hold the rank's
  // slab of DoF planes and the ghost planes around it
  // (tpmg_grid_level_layout), deal.II's owned DoFs are the owned planes:
  // they are copied in and out at their offset, tpmg fills the ghosts. For
  // the CUDA backend the memory is what the contexts hold on the devices.
  template <int dim>
  Result
  run_tpmg_solver(const Problem<dim> &problem, const std::string &backend)
  {
    const Parameters &prm = problem.prm;
    Result            result;
    result.method = backend == "cpu" ? tpmg_cpu : tpmg_cuda;
    result.mixed  = prm.mixed;
    if (!tpmg::dealii::Context::is_available(backend))
      {
        result.status = "skipped (no GPU)";
        return result;
      }
    const MemoryProbe memory;
    const Stopwatch   setup_timer;

    tpmg::dealii::Context        context(MPI_COMM_WORLD, backend, prm.threads);
    tpmg::dealii::Hierarchy<dim> hierarchy(problem.dof_handler, context);
    tpmg_context                *ctx = context.get();
    tpmg_level_layout            layout;
    context.check(
      tpmg_grid_level_layout(hierarchy.get_grid(),
                             hierarchy.get_grid_options().fine_level,
                             &layout),
      "tpmg_grid_level_layout");
    const tpmg_index n_box = layout.count * layout.plane;
    const tpmg_index offset =
      (layout.owned_first - layout.first) * layout.plane;
    const tpmg_index n_owned =
      (layout.owned_end - layout.owned_first) * layout.plane;
    AssertThrow(n_owned ==
                  static_cast<tpmg_index>(problem.rhs.locally_owned_size()),
                ExcInternalError());

    // The C objects, destroyed in reverse order however this function ends.
    struct Objects
    {
      tpmg_context *ctx;
      void         *b = nullptr, *x = nullptr;
      tpmg_solver  *solver = nullptr;
      ~Objects()
      {
        tpmg_solver_destroy(&solver);
        tpmg_vector_destroy(ctx, &x);
        tpmg_vector_destroy(ctx, &b);
      }
    } objects{ctx};

    context.check(tpmg_vector_create(ctx, TPMG_DOUBLE, n_box, &objects.b),
                  "tpmg_vector_create");
    context.check(tpmg_vector_create(ctx, TPMG_DOUBLE, n_box, &objects.x),
                  "tpmg_vector_create");
    // the owned entries of b and x (pointer arithmetic on device pointers
    // too: tpmg_vector_upload/download take any part of a vector)
    void *const         b_owned = static_cast<double *>(objects.b) + offset;
    void *const         x_owned = static_cast<double *>(objects.x) + offset;
    tpmg_solver_options options = tpmg_solver_options_default();
    options.type                = prm.solver;
    options.arithmetic =
      prm.mixed ? TPMG_ARITHMETIC_MIXED : TPMG_ARITHMETIC_DOUBLE;
    options.tolerance      = prm.tolerance;
    options.max_iterations = prm.max_iterations;
    options.restart        = prm.restart;
    context.check(tpmg_solver_create(hierarchy.get_grid(),
                                     &options,
                                     &objects.solver),
                  "tpmg_solver_create");
    context.synchronize();
    result.setup_seconds = setup_timer.seconds();

    typename Problem<dim>::VectorType solution(problem.rhs);
    tpmg_solver_result                solver_result{};
    result.solve_seconds = std::numeric_limits<double>::infinity();
    for (unsigned int r = 0; r < prm.repeat; ++r)
      {
        const Stopwatch solve_timer;
        context.check(tpmg_vector_upload(ctx,
                                         TPMG_DOUBLE,
                                         n_owned,
                                         problem.rhs.get_values(),
                                         b_owned),
                      "tpmg_vector_upload");
        context.check(tpmg_vector_set(ctx, TPMG_DOUBLE, n_box, 0., objects.x),
                      "tpmg_vector_set");
        context.check(tpmg_solver_solve(
                        objects.solver, objects.b, objects.x, &solver_result),
                      "tpmg_solver_solve");
        context.check(tpmg_vector_download(ctx,
                                           TPMG_DOUBLE,
                                           n_owned,
                                           x_owned,
                                           solution.get_values()),
                      "tpmg_vector_download");
        context.synchronize();
        result.solve_seconds =
          std::min(result.solve_seconds, solve_timer.seconds());
      }
    result.iterations         = solver_result.iterations;
    result.converged          = solver_result.converged != 0;
    result.residual_reduction = solver_result.residual_reduction;
    result.l2_error           = problem.l2_error(solution);
    result.memory_bytes =
      backend == "cpu" ?
        memory.growth_bytes() :
        Utilities::MPI::sum(static_cast<double>(context.memory_consumption()),
                            MPI_COMM_WORLD);
    return result;
  }

  // @sect3{The report}
  //
  // A table for people, a JSON line and CSV rows for scripts, from rank 0.
  // Skipped methods print their reason in place of numbers (null in JSON,
  // empty fields in CSV).
  const char *const method_descriptions[] = {
    "deal.II MF + Chebyshev (step-37)",
    "deal.II RelaxationBlockSOR patches",
    "tpmg smoother in deal.II MG (CPU)",
    "tpmg solver (CPU)",
    "tpmg solver (CUDA)",
  };

  void
  print_table(const std::vector<Result> &results, const double n_dofs)
  {
    std::printf("\n%-36s %5s %10s %10s %10s %11s %12s\n",
                "method",
                "iter",
                "setup [s]",
                "solve [s]",
                "MDoF/s",
                "L2 error",
                "memory [MiB]");
    for (const Result &r : results)
      {
        std::printf("%-36s ", method_descriptions[r.method]);
        if (r.status != "ok")
          std::printf("%s\n", r.status.c_str());
        else
          std::printf("%4u%s %10.3f %10.4f %10.3f %11.3e %12.1f\n",
                      r.iterations,
                      r.converged ? " " : "*",
                      r.setup_seconds,
                      r.solve_seconds,
                      n_dofs / r.solve_seconds * 1e-6,
                      r.l2_error,
                      r.memory_bytes / 1048576.);
      }
    for (const Result &r : results)
      if (r.status == "ok" && !r.converged)
        {
          std::printf("* not converged within the iteration limit\n");
          break;
        }
  }

  void
  write_csv(const Parameters          &prm,
            const std::vector<Result> &results,
            const double               n_dofs)
  {
    bool new_file;
    {
      std::ifstream existing(prm.csv_file);
      new_file =
        !existing || existing.peek() == std::ifstream::traits_type::eof();
    }
    std::FILE *file = std::fopen(prm.csv_file.c_str(), "a");
    AssertThrow(file != nullptr,
                ExcMessage("cannot open " + prm.csv_file + " for appending"));
    if (new_file)
      std::fprintf(
        file,
        "dim,degree,level,n_dofs,cells,method,status,solver,tolerance,ranks,"
        "threads,precision,iterations,converged,setup_seconds,solve_seconds,dofs_per_second,"
        "residual_reduction,l2_error,memory_bytes\n");
    std::string cells;
    for (unsigned int d = 0; d < prm.dim; ++d)
      cells +=
        (d ? "x" : "") + std::to_string(prm.cells.empty() ? 1 : prm.cells[d]);
    for (const Result &r : results)
      {
        std::fprintf(file,
                     "%u,%u,%u,%.0f,%s,%s,%s,%s,%.3g,%u,%u,%s,",
                     prm.dim,
                     prm.degree,
                     prm.level,
                     n_dofs,
                     cells.c_str(),
                     method_names[r.method],
                     r.status.c_str(),
                     tpmg_solver_type_name(prm.solver),
                     prm.tolerance,
                     n_ranks(),
                     prm.threads,
                     r.mixed ? "mixed" : "double");
        if (r.status == "ok")
          std::fprintf(file,
                       "%u,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.0f\n",
                       r.iterations,
                       r.converged ? "true" : "false",
                       r.setup_seconds,
                       r.solve_seconds,
                       n_dofs / r.solve_seconds,
                       r.residual_reduction,
                       r.l2_error,
                       r.memory_bytes);
        else
          std::fprintf(file, ",,,,,,,\n");
      }
    const bool ok = std::ferror(file) == 0;
    AssertThrow(std::fclose(file) == 0 && ok,
                ExcMessage("cannot write " + prm.csv_file));
  }

  void
  print_json(const Parameters          &prm,
             const std::vector<Result> &results,
             const double               n_dofs,
             const double               common_setup)
  {
    app_json j;
    app_json_begin(&j);
    app_json_string(&j, "program", "dealii-compare");
    app_json_int(&j, "dim", prm.dim);
    app_json_int(&j, "degree", prm.degree);
    app_json_int(&j, "level", prm.level);
    app_json_open(&j, "cells", '[');
    for (unsigned int d = 0; d < prm.dim; ++d)
      app_json_int(&j, nullptr, prm.cells.empty() ? 1 : prm.cells[d]);
    app_json_close(&j, ']');
    app_json_int(&j, "n_dofs", static_cast<long long>(n_dofs));
    app_json_string(&j, "solver", tpmg_solver_type_name(prm.solver));
    app_json_number(&j, "tolerance", prm.tolerance);
    app_json_int(&j, "ranks", n_ranks());
    app_json_int(&j, "threads", prm.threads);
    app_json_string(&j, "threading", "deal.II: TBB, tpmg: OpenMP (per rank)");
    app_json_string(&j, "precision", prm.mixed ? "mixed" : "double");
    app_json_int(&j, "repeat", prm.repeat);
    app_json_string(&j,
                    "memory",
                    "peak RSS growth (VmHWM) summed over the ranks; "
                    "tpmg-cuda: device memory");
    app_json_string(&j, "times", "the slowest rank's, after a barrier");
    app_json_number(&j, "common_setup_seconds", common_setup);
    app_json_open(&j, "methods", '[');
    for (const Result &r : results)
      {
        const bool ok = r.status == "ok";
        app_json_open(&j, nullptr, '{');
        app_json_string(&j, "method", method_names[r.method]);
        app_json_string(&j, "status", r.status.c_str());
        app_json_string(&j, "precision", r.mixed ? "mixed" : "double");
        if (ok)
          {
            app_json_int(&j, "iterations", r.iterations);
            app_json_bool(&j, "converged", r.converged);
          }
        else
          {
            app_json_null(&j, "iterations");
            app_json_null(&j, "converged");
          }
        const double nan = std::numeric_limits<double>::quiet_NaN();
        app_json_number(&j, "setup_seconds", ok ? r.setup_seconds : nan);
        app_json_number(&j, "solve_seconds", ok ? r.solve_seconds : nan);
        app_json_number(&j,
                        "dofs_per_second",
                        ok ? n_dofs / r.solve_seconds : nan);
        app_json_number(&j,
                        "residual_reduction",
                        ok ? r.residual_reduction : nan);
        app_json_number(&j, "l2_error", ok ? r.l2_error : nan);
        app_json_number(&j, "memory_bytes", ok ? r.memory_bytes : nan);
        app_json_close(&j, '}');
      }
    app_json_close(&j, ']');
    app_json_end(&j);
  }

  // @sect3{Running the comparison}
  //
  // Every rank runs every method; rank 0 prints and writes the CSV file.
  template <int dim>
  void
  run(const Parameters &prm)
  {
    const Problem<dim> problem(prm);
    const double       n_dofs = problem.dof_handler.n_dofs();
    const bool         report = is_root();
    char               group[32];
    if (report)
      {
        std::printf("dealii-compare: %uD Q%u, level %u, %s DoFs, solver %s",
                    dim,
                    prm.degree,
                    prm.level,
                    app_group(static_cast<long long>(n_dofs), group),
                    tpmg_solver_type_name(prm.solver));
        if (prm.solver == TPMG_SOLVER_GMRES)
          std::printf("(%u)", prm.restart);
        std::printf(", tolerance %.1e, multigrid levels in %s\n",
                    prm.tolerance,
                    prm.mixed ? "float (mixed)" : "double");
        std::printf("%u MPI rank%s, threads per rank: deal.II %u (TBB), "
                    "tpmg %u (OpenMP)\n",
                    n_ranks(),
                    n_ranks() == 1 ? "" : "s",
                    MultithreadInfo::n_threads(),
                    prm.threads);
        std::printf(
          "common set-up (mesh, DoFs, renumbering, right-hand side): %.3f s\n",
          problem.setup_seconds);
        std::fflush(stdout);
      }

    std::vector<Result> results;
    for (int m = 0; m < n_methods; ++m)
      if (prm.run[m])
        {
          switch (m)
            {
              case dealii_chebyshev:
                results.push_back(run_chebyshev_for_degree<dim>(problem));
                break;
              case dealii_block_sor:
                results.push_back(run_block_sor<dim>(problem));
                break;
              case tpmg_in_dealii:
                results.push_back(prm.mixed ?
                                    run_tpmg_in_dealii<dim, float>(problem) :
                                    run_tpmg_in_dealii<dim, double>(problem));
                break;
              case tpmg_cpu:
                results.push_back(run_tpmg_solver<dim>(problem, "cpu"));
                break;
              case tpmg_cuda:
                results.push_back(run_tpmg_solver<dim>(problem, "cuda"));
                break;
            }
          const Result &r = results.back();
          if (!report)
            continue;
          if (r.status == "ok")
            std::printf("  %-18s %u iterations, setup %.3f s, solve %.4f s\n",
                        method_names[m],
                        r.iterations,
                        r.setup_seconds,
                        r.solve_seconds);
          else
            std::printf("  %-18s %s\n", method_names[m], r.status.c_str());
          std::fflush(stdout);
        }

    // The CSV file is rank 0's; its failure is every rank's.
    std::string csv_error;
    if (report && !prm.csv_file.empty())
      try
        {
          write_csv(prm, results, n_dofs);
        }
      catch (const std::exception &exc)
        {
          csv_error = DealiiApp::one_line(exc);
        }
    csv_error = Utilities::MPI::broadcast(MPI_COMM_WORLD, csv_error, 0);
    AssertThrow(csv_error.empty(), ExcMessage(csv_error));
    if (!report)
      return;
    print_table(results, n_dofs);
    std::printf(
      "times: the slowest rank's; memory: growth of the peak resident set "
      "size during the method, summed over the ranks (tpmg-cuda: device "
      "memory)\n");
    if (prm.json)
      print_json(prm, results, n_dofs, problem.setup_seconds);
  }

  // Whether every rank of @p comm has failed as well: each rank that fails
  // enters a barrier on @p comm (a communicator of its own, so that it cannot
  // match a collective call of the methods), which completes only when all
  // have. A rank that does not arrive within the time limit is still busy or
  // waits in a collective call for this one.
  bool
  all_ranks_failed(const MPI_Comm comm)
  {
    MPI_Request request;
    if (MPI_Ibarrier(comm, &request) != MPI_SUCCESS)
      return false;
    const double give_up = app_now() + 30.;
    for (int done = 0; app_now() < give_up;)
      {
        if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
          return false;
        if (done)
          return true;
        usleep(10000);
      }
    return false;
  }
} // namespace DealiiCompare

// Options first (a bad one ends the program with exit status 2 before MPI
// starts), then MPI and deal.II's threads (MPI_InitFinalize sets TBB's limit
// per rank), then the comparison on as many ranks as mpirun starts. An error
// ends the program with exit status 1 and its message on stderr from every
// rank that sees it; where a rank fails alone (the others wait for it in a
// collective call, or go on), it aborts the run after 30 s (MPI_Abort), so
// that every rank ends with a nonzero status and none hangs.
int
main(int argc, char **argv)
{
  using namespace DealiiCompare;
  app_set_program("dealii-compare");
  Parameters prm;
  if (!parse_options(argc, argv, prm))
    {
      print_help();
      return 0;
    }
  try
    {
      DealiiApp::InitFinalize mpi(argv[0], prm.threads);
      MPI_Comm                failure_comm;
      AssertThrowMPI(MPI_Comm_dup(MPI_COMM_WORLD, &failure_comm));
      try
        {
          if (prm.dim == 2)
            run<2>(prm);
          else
            run<3>(prm);
        }
      catch (const std::exception &exc)
        {
          DealiiApp::report_error(exc);
          if (!all_ranks_failed(failure_comm))
            MPI_Abort(MPI_COMM_WORLD, APP_EXIT_LIBRARY);
          MPI_Comm_free(&failure_comm);
          return APP_EXIT_LIBRARY;
        }
      MPI_Comm_free(&failure_comm);
    }
  catch (const std::exception &exc)
    {
      DealiiApp::report_error(exc);
      return APP_EXIT_LIBRARY;
    }
  return 0;
}
