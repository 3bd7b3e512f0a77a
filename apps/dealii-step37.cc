/* dealii-step37: deal.II's tutorial step-37 problem solved three ways.
 *
 * Introduction
 * ------------
 * step-37 solves
 *
 *   -div(a(x) grad u) = 1 in [0, 1]^d,   u = 0 on the boundary,
 *   a(x) = 1 / (0.05 + 2 |x|^2),
 *
 * with FE_Q(2) (--degree) on a globally refined hyper_cube, by CG to a
 * relative residual of 1e-12, preconditioned by a geometric multigrid
 * V-cycle whose levels work in float. This program solves that problem
 *
 * (A) dealii: exactly as step-37 configures it: a MatrixFree Laplace
 *     operator with the coefficient stored per cell batch and quadrature
 *     point (MatrixFreeOperators::LaplaceOperator::set_coefficient(), what
 *     step-37's own LaplaceOperator does), MGTransferMatrixFree, a Chebyshev
 *     smoother of degree 5 on the smoothing range 15 with the diagonal, and
 *     Chebyshev as the coarse solver (MGCoarseGridApplySmoother);
 * (B) multigrid: the same Multigrid, level operators and transfer, with the
 *     change a user of step-37 makes: tpmg's PatchSmoother instead of the
 *     Chebyshev smoother, and tpmg's CoarseSolver on the coarsest level
 *     (the patch smoother does not smooth the coarsest level, so
 *     MGCoarseGridApplySmoother has nothing to apply). tpmg gets the
 *     coefficient from step-37's table through Hierarchy::set_coefficient():
 *
 *       hierarchy.set_coefficient(*system_matrix.get_matrix_free(),
 *                                 *system_matrix.get_coefficient());
 *
 * (C) solve: tpmg's own solver through tpmg::dealii::solve_on_gpu() (in the
 *     --backend, the CPU by default), with the same coefficient.
 *
 * (B) and (C) need tpmg's DoF numbering (renumber_lexicographic(), done
 * before anything is built, so (A) runs on it too). On P > 1 ranks they
 * take p4est's partition as it is (step-37's one coarse cell too): the
 * hierarchy moves the coefficient once and each vector's values per call
 * between deal.II's owned cells and DoFs and tpmg's slabs along the last
 * direction, which need at least two finest cells per rank along it
 * (hyper_cube: 2^level >= 2 P; with fewer, tpmg refuses the mesh on every
 * rank and the program ends with its message). Where check_supported()
 * refuses the mesh, the program says why, runs (A) only and reports (B) and
 * (C) as not run.
 *
 * The program prints per method the iterations, the set-up and solve times,
 * the memory and whether CG converged, and the relative differences of the
 * three solutions. Exit status: 0 after the solves (converged or not: see
 * the output), 1 when deal.II or tpmg reports an error, 2 for a bad option.
 */

#include <deal.II/base/function.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/utilities.h>

#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/mapping_q1.h>

#include <deal.II/grid/grid_generator.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/precondition.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>

#include <deal.II/matrix_free/fe_evaluation.h>
#include <deal.II/matrix_free/matrix_free.h>
#include <deal.II/matrix_free/operators.h>

#include <deal.II/multigrid/mg_coarse.h>
#include <deal.II/multigrid/mg_constrained_dofs.h>
#include <deal.II/multigrid/mg_matrix.h>
#include <deal.II/multigrid/mg_smoother.h>
#include <deal.II/multigrid/mg_tools.h>
#include <deal.II/multigrid/mg_transfer_matrix_free.h>
#include <deal.II/multigrid/multigrid.h>

#include <deal.II/numerics/vector_tools.h>

#include <tpmg/dealii/coarse_solver.h>
#include <tpmg/dealii/context.h>
#include <tpmg/dealii/gpu_preconditioner.h>
#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/patch_smoother.h>
#include <tpmg/dealii/renumbering.h>

#include "dealii-app-common.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace Step37
{
  using namespace dealii;

  // @sect3{The options}
  //
  // Those of the other deal.II programs, with step-37's defaults: FE_Q(2),
  // a tolerance of 1e-12, CG (the only Krylov method here) and f = 1.
  struct Parameters : public DealiiApp::Parameters
  {};

  // the degrees deal.II's kernels are compiled for here
  constexpr int max_degree = 4;

  void
  print_help()
  {
    std::printf(
      "Usage: dealii-step37 [options]\n"
      "Solve step-37's problem -div(a grad u) = 1, u = 0 on the boundary of the unit\n"
      "square or cube, a = 1 / (0.05 + 2 |x|^2), with FE_Q(k) by CG to 1e-12, three ways:\n"
      "(A) dealii: deal.II's Multigrid with Chebyshev smoothing, as step-37; (B) multigrid:\n"
      "the same with tpmg's PatchSmoother and CoarseSolver; (C) solve: tpmg's solve_on_gpu().\n"
      "\n"
      "  --dim 2|3                   dimension (default 3)\n"
      "  --degree k                  polynomial degree, 1..4 (default 2)\n"
      "  --level L                   global refinements of the coarse mesh (default: the level\n"
      "                              whose DoF count is nearest to 1,000,000)\n"
      "  --cells n0,n1[,n2]          coarse cells per direction (default: hyper_cube, one)\n"
      "  --tol t                     relative residual to reach (default 1e-12)\n"
      "  --max-iterations n          iteration limit (default 100)\n"
      "  --backend NAME              where tpmg's parts run: cpu, cuda (default cpu)\n"
      "  --threads n                 threads of tpmg (OpenMP) and deal.II (TBB)\n"
      "  --json                      end the output with one line of JSON\n"
      "  --help                      print this help and exit\n"
      "\n"
      "On P > 1 MPI ranks (B) and (C) take p4est's partition; tpmg's slabs need at least\n"
      "two finest cells per rank along the last direction (hyper_cube: 2^L >= 2 P; else\n"
      "tpmg's error, exit status 1). --cells with 2 m P cells along it (e.g. 2,4 or 2,2,4\n"
      "for P = 2) makes p4est's partition tpmg's slabs: no values move between the two.\n"
      "\n"
      "Exit status: 0 solved (see 'converged'), 1 deal.II or tpmg error, 2 bad option.\n");
  }

  // step-37's defaults are given to the shared parser as if on the command
  // line where the user gives none, so that the level is chosen for FE_Q(2).
  bool
  parse_options(int argc, char **argv, Parameters &p)
  {
    static char degree[] = "--degree", two[] = "2", tol[] = "--tol",
                tolerance[] = "1e-12", solver[] = "--solver", cg[] = "cg";
    const auto given = [&](const char *name) {
      for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], name) == 0)
          return true;
      return false;
    };
    std::vector<char *> args = {argv[0]};
    if (!given(degree))
      args.insert(args.end(), {degree, two});
    if (!given(tol))
      args.insert(args.end(), {tol, tolerance});
    if (!given(solver))
      args.insert(args.end(), {solver, cg});
    for (int i = 1; i < argc; ++i)
      {
        if (std::strcmp(argv[i], "--box") == 0)
          app_usage_error("--box: step-37's domain is the unit square or cube");
        if (std::strcmp(argv[i], "--solver") == 0 && i + 1 < argc &&
            std::strcmp(argv[i + 1], "cg") != 0)
          app_usage_error("--solver %.100s: step-37 solves with CG",
                          argv[i + 1]);
        args.push_back(argv[i]);
      }
    DealiiApp::CommandLine line(static_cast<int>(args.size()),
                                args.data(),
                                {/*rhs=*/false, /*backend=*/true});
    while (line.next())
      line.unknown();
    if (line.help())
      return false;
    line.finish(1e6, p);
    if (p.degree > static_cast<unsigned int>(max_degree))
      app_usage_error("--degree %u: dealii-step37 has deal.II's kernels for "
                      "degrees 1..%d",
                      p.degree,
                      max_degree);
    p.rhs = TPMG_RHS_ONE;
    return true;
  }



  // @sect3{The coefficient}
  //
  // step-37's Coefficient, for a point of doubles and of VectorizedArray.
  template <int dim, typename Number>
  Number
  coefficient(const Point<dim, Number> &p)
  {
    return 1. / (0.05 + 2. * p.square());
  }

  template <int dim, int fe_degree, typename Number>
  void
  evaluate_coefficient(MatrixFreeOperators::LaplaceOperator<
                         dim,
                         fe_degree,
                         fe_degree + 1,
                         1,
                         LinearAlgebra::distributed::Vector<Number>> &op,
                       const unsigned int                             degree)
  {
    const MatrixFree<dim, Number> &data = *op.get_matrix_free();
    FEEvaluation<dim, fe_degree, fe_degree + 1, 1, Number> phi(data);
    auto table = std::make_shared<Table<2, VectorizedArray<Number>>>(
      data.n_cell_batches(), Utilities::pow(degree + 1, dim));
    for (unsigned int cell = 0; cell < data.n_cell_batches(); ++cell)
      {
        phi.reinit(cell);
        for (unsigned int q = 0; q < phi.n_q_points; ++q)
          (*table)(cell, q) = coefficient(phi.quadrature_point(q));
      }
    op.set_coefficient(table);
  }



  // The result of one method.
  struct Result
  {
    explicit Result(const char *method)
      : method(method)
    {}
    const char *method;
    bool        run           = false;
    unsigned    iterations    = 0;
    bool        converged     = false;
    double      setup_seconds = 0, solve_seconds = 0;
    std::size_t memory_bytes = 0;
    std::string note;
  };



  // @sect3{The LaplaceProblem class}
  //
  // step-37's class, with (B) and (C) added. fe_degree is the compile-time
  // degree of deal.II's matrix-free kernels, 2 in step-37.
  template <int dim, int fe_degree>
  class LaplaceProblem
  {
  public:
    explicit LaplaceProblem(const Parameters &parameters);
    void
    run();

  private:
    using SystemMatrixType = MatrixFreeOperators::LaplaceOperator<
      dim,
      fe_degree,
      fe_degree + 1,
      1,
      LinearAlgebra::distributed::Vector<double>>;
    using LevelMatrixType = MatrixFreeOperators::LaplaceOperator<
      dim,
      fe_degree,
      fe_degree + 1,
      1,
      LinearAlgebra::distributed::Vector<float>>;
    using VectorType      = LinearAlgebra::distributed::Vector<double>;
    using LevelVectorType = LinearAlgebra::distributed::Vector<float>;

    void
    setup_system();
    void
    assemble_rhs();
    template <typename PreconditionerType>
    void
    cg_solve(const PreconditionerType &preconditioner,
             VectorType               &solution,
             Result                   &result);
    void
    solve_dealii();
    void
    solve_tpmg_smoother();
    void
    solve_tpmg();

    const Parameters prm;

    parallel::distributed::Triangulation<dim> triangulation;
    const FE_Q<dim>                           fe;
    const MappingQ1<dim>                      mapping;
    DoFHandler<dim>                           dof_handler;

    AffineConstraints<double>                         constraints;
    SystemMatrixType                                  system_matrix;
    MGConstrainedDoFs                                 mg_constrained_dofs;
    MGLevelObject<LevelMatrixType>                    mg_matrices;
    std::unique_ptr<MGTransferMatrixFree<dim, float>> mg_transfer;
    double                                            levels_seconds = 0;

    // whether tpmg takes the mesh (check_supported()), and why not
    bool        tpmg_supported = true;
    std::string unsupported_message;

    tpmg::dealii::Context                         context;
    std::unique_ptr<tpmg::dealii::Hierarchy<dim>> hierarchy;
    double                                        hierarchy_seconds = 0;

    VectorType system_rhs;
    VectorType solution_dealii, solution_multigrid, solution_solve;
    Result     results[3] = {Result("dealii"),
                             Result("multigrid"),
                             Result("solve")};
  };



  template <int dim, int fe_degree>
  LaplaceProblem<dim, fe_degree>::LaplaceProblem(const Parameters &parameters)
    : prm(parameters)
    , triangulation(MPI_COMM_WORLD,
                    Triangulation<dim>::limit_level_difference_at_vertices,
                    parallel::distributed::Triangulation<
                      dim>::construct_multigrid_hierarchy)
    , fe(parameters.degree)
    , dof_handler(triangulation)
    , context(MPI_COMM_WORLD, parameters.backend, parameters.threads)
  {}



  // @sect4{LaplaceProblem::setup_system}
  //
  // step-37's setup_system(), after one step of tpmg's: the DoFs in tpmg's
  // lexicographic order, where tpmg supports the mesh (any partition).
  // check_supported() is collective and throws on every rank, so every rank
  // agrees on whether (B) and (C) run.
  template <int dim, int fe_degree>
  void
  LaplaceProblem<dim, fe_degree>::setup_system()
  {
    std::vector<unsigned int> repetitions(dim, 1);
    Point<dim>                lower, upper;
    for (unsigned int d = 0; d < dim; ++d)
      {
        repetitions[d] = prm.cells.empty() ? 1 : prm.cells[d];
        upper[d]       = 1.;
      }
    GridGenerator::subdivided_hyper_rectangle(triangulation,
                                              repetitions,
                                              lower,
                                              upper);
    triangulation.refine_global(prm.level);

    dof_handler.distribute_dofs(fe);
    dof_handler.distribute_mg_dofs();
    try
      {
        tpmg::dealii::check_supported(dof_handler);
      }
    catch (const tpmg::dealii::ExcUnsupported &e)
      {
        tpmg_supported      = false;
        unsupported_message = DealiiApp::one_line(e);
      }
    if (tpmg_supported)
      tpmg::dealii::renumber_lexicographic(dof_handler);

    const IndexSet relevant =
      DoFTools::extract_locally_relevant_dofs(dof_handler);
    constraints.reinit(relevant);
    DoFTools::make_hanging_node_constraints(dof_handler, constraints);
    VectorTools::interpolate_boundary_values(
      mapping, dof_handler, 0, Functions::ZeroFunction<dim>(), constraints);
    constraints.close();

    {
      typename MatrixFree<dim, double>::AdditionalData additional_data;
      additional_data.tasks_parallel_scheme =
        MatrixFree<dim, double>::AdditionalData::none;
      additional_data.mapping_update_flags =
        (update_gradients | update_JxW_values | update_quadrature_points);
      auto system_mf_storage = std::make_shared<MatrixFree<dim, double>>();
      system_mf_storage->reinit(mapping,
                                dof_handler,
                                constraints,
                                QGauss<1>(fe.degree + 1),
                                additional_data);
      system_matrix.initialize(system_mf_storage);
    }
    evaluate_coefficient<dim, fe_degree, double>(system_matrix, fe.degree);
    system_matrix.initialize_dof_vector(system_rhs);

    // the levels: step-37's, shared by (A) and (B)
    const double       start   = app_now();
    const unsigned int nlevels = triangulation.n_global_levels();
    mg_matrices.resize(0, nlevels - 1);
    mg_constrained_dofs.initialize(dof_handler);
    mg_constrained_dofs.make_zero_boundary_constraints(dof_handler, {0});
    for (unsigned int level = 0; level < nlevels; ++level)
      {
        const IndexSet relevant_dofs =
          DoFTools::extract_locally_relevant_level_dofs(dof_handler, level);
        AffineConstraints<double> level_constraints;
        level_constraints.reinit(relevant_dofs);
        level_constraints.add_lines(
          mg_constrained_dofs.get_boundary_indices(level));
        level_constraints.close();

        typename MatrixFree<dim, float>::AdditionalData additional_data;
        additional_data.tasks_parallel_scheme =
          MatrixFree<dim, float>::AdditionalData::none;
        additional_data.mapping_update_flags =
          (update_gradients | update_JxW_values | update_quadrature_points);
        additional_data.mg_level = level;
        auto mg_mf_storage_level = std::make_shared<MatrixFree<dim, float>>();
        mg_mf_storage_level->reinit(mapping,
                                    dof_handler,
                                    level_constraints,
                                    QGauss<1>(fe.degree + 1),
                                    additional_data);
        mg_matrices[level].initialize(mg_mf_storage_level,
                                      mg_constrained_dofs,
                                      level);
        evaluate_coefficient<dim, fe_degree, float>(mg_matrices[level],
                                                    fe.degree);
      }
    mg_transfer =
      std::make_unique<MGTransferMatrixFree<dim, float>>(mg_constrained_dofs);
    mg_transfer->build(dof_handler);
    levels_seconds = app_now() - start;

    // tpmg's hierarchy, with step-37's coefficient table (the one line a
    // step-37 user adds)
    if (tpmg_supported)
      {
        const double start = app_now();
        hierarchy =
          std::make_unique<tpmg::dealii::Hierarchy<dim>>(dof_handler, context);
        hierarchy->set_coefficient(*system_matrix.get_matrix_free(),
                                   *system_matrix.get_coefficient());
        hierarchy->cross_check(mg_constrained_dofs);
        context.synchronize();
        hierarchy_seconds = app_now() - start;
      }
  }



  // step-37's assemble_rhs(): f = 1.
  template <int dim, int fe_degree>
  void
  LaplaceProblem<dim, fe_degree>::assemble_rhs()
  {
    system_rhs = 0;
    FEEvaluation<dim, fe_degree> phi(*system_matrix.get_matrix_free());
    for (unsigned int cell = 0;
         cell < system_matrix.get_matrix_free()->n_cell_batches();
         ++cell)
      {
        phi.reinit(cell);
        for (unsigned int q = 0; q < phi.n_q_points; ++q)
          phi.submit_value(make_vectorized_array<double>(1.0), q);
        phi.integrate(EvaluationFlags::values);
        phi.distribute_local_to_global(system_rhs);
      }
    system_rhs.compress(VectorOperation::add);
  }



  // step-37's CG: from zero, to prm.tolerance relative.
  template <int dim, int fe_degree>
  template <typename PreconditionerType>
  void
  LaplaceProblem<dim, fe_degree>::cg_solve(
    const PreconditionerType &preconditioner,
    VectorType               &solution,
    Result                   &result)
  {
    system_matrix.initialize_dof_vector(solution);
    SolverControl        control(prm.max_iterations,
                          prm.tolerance * system_rhs.l2_norm());
    SolverCG<VectorType> cg(control);
    constraints.set_zero(solution);
    context.synchronize();
    const double start = app_now();
    try
      {
        cg.solve(system_matrix, solution, system_rhs, preconditioner);
        result.converged = true;
      }
    catch (const SolverControl::NoConvergence &)
      {
        result.converged = false;
      }
    context.synchronize();
    result.solve_seconds = app_now() - start;
    result.iterations    = control.last_step();
    result.run           = true;
    constraints.distribute(solution);
  }



  // @sect4{(A): step-37's solve()}
  template <int dim, int fe_degree>
  void
  LaplaceProblem<dim, fe_degree>::solve_dealii()
  {
    Result      &result = results[0];
    const double start  = app_now();
    using SmootherType =
      PreconditionChebyshev<LevelMatrixType, LevelVectorType>;
    mg::SmootherRelaxation<SmootherType, LevelVectorType> mg_smoother;
    MGLevelObject<typename SmootherType::AdditionalData>  smoother_data;
    smoother_data.resize(0, triangulation.n_global_levels() - 1);
    for (unsigned int level = 0; level < triangulation.n_global_levels();
         ++level)
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
    MGLevelObject<MatrixFreeOperators::MGInterfaceOperator<LevelMatrixType>>
      mg_interface_matrices;
    mg_interface_matrices.resize(0, triangulation.n_global_levels() - 1);
    for (unsigned int level = 0; level < triangulation.n_global_levels();
         ++level)
      mg_interface_matrices[level].initialize(mg_matrices[level]);
    mg::Matrix<LevelVectorType> mg_interface(mg_interface_matrices);

    Multigrid<LevelVectorType> mg(
      mg_matrix, mg_coarse, *mg_transfer, mg_smoother, mg_smoother);
    mg.set_edge_matrices(mg_interface, mg_interface);
    PreconditionMG<dim, LevelVectorType, MGTransferMatrixFree<dim, float>>
      preconditioner(dof_handler, mg, *mg_transfer);
    result.setup_seconds = levels_seconds + app_now() - start;
    for (unsigned int level = 0; level < triangulation.n_global_levels();
         ++level)
      result.memory_bytes +=
        mg_matrices[level].get_matrix_free()->memory_consumption();
    result.memory_bytes += mg_transfer->memory_consumption();

    cg_solve(preconditioner, solution_dealii, result);
  }



  // @sect4{(B): the same Multigrid with tpmg's smoother}
  //
  // What changes against (A): the smoother (tpmg's PatchSmoother, in float
  // as the levels; with a coefficient tpmg's variant `global`, chosen by the
  // default AdditionalData) and the coarse solver (tpmg's exact solve; the
  // patch smoother does not smooth the coarsest level, which
  // MGCoarseGridApplySmoother would ask it to).
  template <int dim, int fe_degree>
  void
  LaplaceProblem<dim, fe_degree>::solve_tpmg_smoother()
  {
    Result &result = results[1];
    if (!tpmg_supported)
      {
        result.note = "not run: tpmg does not take this mesh (see above)";
        return;
      }
    const std::size_t memory_before = context.memory_consumption();
    const double      start         = app_now();
    tpmg::dealii::PatchSmoother<dim, float> mg_smoother(*hierarchy);
    tpmg::dealii::CoarseSolver<dim, float>  mg_coarse(*hierarchy);

    mg::Matrix<LevelVectorType> mg_matrix(mg_matrices);
    MGLevelObject<MatrixFreeOperators::MGInterfaceOperator<LevelMatrixType>>
      mg_interface_matrices;
    mg_interface_matrices.resize(0, triangulation.n_global_levels() - 1);
    for (unsigned int level = 0; level < triangulation.n_global_levels();
         ++level)
      mg_interface_matrices[level].initialize(mg_matrices[level]);
    mg::Matrix<LevelVectorType> mg_interface(mg_interface_matrices);

    Multigrid<LevelVectorType> mg(
      mg_matrix, mg_coarse, *mg_transfer, mg_smoother, mg_smoother);
    mg.set_edge_matrices(mg_interface, mg_interface);
    PreconditionMG<dim, LevelVectorType, MGTransferMatrixFree<dim, float>>
      preconditioner(dof_handler, mg, *mg_transfer);
    context.synchronize();
    result.setup_seconds =
      levels_seconds + hierarchy_seconds + app_now() - start;
    for (unsigned int level = 0; level < triangulation.n_global_levels();
         ++level)
      result.memory_bytes +=
        mg_matrices[level].get_matrix_free()->memory_consumption();
    result.memory_bytes += mg_transfer->memory_consumption() +
                           context.memory_consumption() - memory_before;

    cg_solve(preconditioner, solution_multigrid, result);
  }



  // @sect4{(C): tpmg's own solver}
  //
  // tpmg's defaults for a hierarchy with a coefficient
  // (default_solver_options(): its GMRES with the V-cycle, the smoother
  // `global`), to step-37's tolerance. The right-hand side is the same
  // vector, in the hierarchy's layout.
  template <int dim, int fe_degree>
  void
  LaplaceProblem<dim, fe_degree>::solve_tpmg()
  {
    Result &result = results[2];
    if (!tpmg_supported)
      {
        result.note = "not run: tpmg does not take this mesh (see above)";
        return;
      }
    tpmg_solver_options options =
      tpmg::dealii::default_solver_options(*hierarchy);
    options.tolerance      = prm.tolerance;
    options.max_iterations = prm.max_iterations;
    VectorType rhs, solution;
    rhs.reinit(hierarchy->get_partitioner());
    for (unsigned int i = 0; i < rhs.locally_owned_size(); ++i)
      rhs.local_element(i) = system_rhs.local_element(i);
    context.synchronize();
    const double             start = app_now();
    const tpmg_solver_result solver_result =
      tpmg::dealii::solve_on_gpu(*hierarchy, context, rhs, solution, options);
    context.synchronize();
    const double solve_seconds = app_now() - start;
    // solve_on_gpu() makes its solver inside (its set-up is in the solve
    // time) and frees it: its memory is that of a solver of the same options
    // made again here (at creation, before GMRES grows its basis)
    {
      const std::size_t before = context.memory_consumption();
      tpmg_solver      *solver = nullptr;
      context.check(tpmg_solver_create(hierarchy->get_grid(),
                                       &options,
                                       &solver),
                    "tpmg_solver_create");
      result.memory_bytes = context.memory_consumption() - before;
      tpmg_solver_destroy(&solver);
    }
    result.solve_seconds = solve_seconds;
    result.setup_seconds = hierarchy_seconds;
    result.iterations    = solver_result.iterations;
    result.converged     = solver_result.converged != 0;
    result.run           = true;
    system_matrix.initialize_dof_vector(solution_solve);
    for (unsigned int i = 0; i < solution.locally_owned_size(); ++i)
      solution_solve.local_element(i) = solution.local_element(i);
  }



  // @sect4{LaplaceProblem::run}
  template <int dim, int fe_degree>
  void
  LaplaceProblem<dim, fe_degree>::run()
  {
    const double start = app_now();
    setup_system();
    assemble_rhs();
    const double common_seconds =
      app_now() - start - levels_seconds - hierarchy_seconds;
    const bool report = Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0;
    char       group[32];
    if (report)
      {
        std::printf("dealii-step37: %dD Q%u, level %u, %s DoFs, %u rank%s, "
                    "%s backend, %u thread%s, CG to %.1e\n",
                    dim,
                    prm.degree,
                    prm.level,
                    app_group(dof_handler.n_dofs(), group),
                    Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD),
                    Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD) == 1 ? "" :
                                                                           "s",
                    prm.backend,
                    context.n_threads(),
                    context.n_threads() == 1 ? "" : "s",
                    prm.tolerance);
        std::printf("common setup (mesh, DoFs, system operator, rhs) %.3f s\n",
                    common_seconds);
        if (!tpmg_supported)
          std::printf("(B), (C) not run: %s\n",
                      unsupported_message.c_str());
        std::fflush(stdout);
      }

    solve_dealii();
    solve_tpmg_smoother();
    solve_tpmg();

    // the solutions' differences, relative to (A)'s
    const double norm          = solution_dealii.l2_norm();
    double       difference[3] = {0, 0, 0};
    for (const unsigned int m : {1u, 2u})
      if (results[m].run)
        {
          VectorType d(m == 1 ? solution_multigrid : solution_solve);
          d -= solution_dealii;
          difference[m] = d.l2_norm() / norm;
        }
    // the true residual ||b - A x|| / ||b|| with the system operator (CG
    // monitors its recursively updated residual, tpmg's GMRES the true one)
    double residual[3] = {0, 0, 0};
    for (unsigned int m = 0; m < 3; ++m)
      if (results[m].run)
        {
          const VectorType &x = m == 0 ? solution_dealii :
                                m == 1 ? solution_multigrid :
                                         solution_solve;
          VectorType        r;
          system_matrix.initialize_dof_vector(r);
          system_matrix.vmult(r, x);
          r.sadd(-1., 1., system_rhs);
          residual[m] = r.l2_norm() / system_rhs.l2_norm();
        }
    if (report)
      {
        static const char *const labels[3] = {
          "(A) dealii    deal.II Multigrid, Chebyshev(5) smoother",
          "(B) multigrid deal.II Multigrid, tpmg PatchSmoother + CoarseSolver",
          "(C) solve     tpmg solve_on_gpu"};
        for (unsigned int m = 0; m < 3; ++m)
          {
            const Result &r = results[m];
            std::printf("%s\n", labels[m]);
            if (!r.run)
              {
                std::printf("    %s\n", r.note.c_str());
                continue;
              }
            std::printf("    %s in %u iterations, setup %.4f s, solve %.4f s, "
                        "memory %.1f MB",
                        r.converged ? "converged" : "NOT converged",
                        r.iterations,
                        r.setup_seconds,
                        r.solve_seconds,
                        r.memory_bytes * 1e-6);
            std::printf(", residual %.1e", residual[m]);
            if (m > 0)
              std::printf(", |x - x_A| / |x_A| %.2e", difference[m]);
            std::printf("\n");
          }
      }
    if (report && prm.json)
      {
        app_json j;
        app_json_begin(&j);
        app_json_string(&j, "program", "dealii-step37");
        app_json_int(&j, "dim", dim);
        app_json_int(&j, "degree", prm.degree);
        app_json_int(&j, "level", prm.level);
        app_json_int(&j, "dofs", static_cast<long long>(dof_handler.n_dofs()));
        app_json_int(&j,
                     "ranks",
                     Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD));
        app_json_string(&j, "backend", prm.backend);
        app_json_number(&j, "tolerance", prm.tolerance);
        app_json_open(&j, "methods", '[');
        for (unsigned int m = 0; m < 3; ++m)
          {
            const Result &r = results[m];
            app_json_open(&j, nullptr, '{');
            app_json_string(&j, "method", r.method);
            app_json_bool(&j, "run", r.run);
            if (r.run)
              {
                app_json_int(&j, "iterations", r.iterations);
                app_json_bool(&j, "converged", r.converged);
                app_json_number(&j, "setup_seconds", r.setup_seconds);
                app_json_number(&j, "solve_seconds", r.solve_seconds);
                app_json_int(&j,
                             "memory_bytes",
                             static_cast<long long>(r.memory_bytes));
                app_json_number(&j, "residual_reduction", residual[m]);
                app_json_number(&j, "difference", difference[m]);
              }
            else
              app_json_string(&j, "note", r.note.c_str());
            app_json_close(&j, '}');
          }
        app_json_close(&j, ']');
        app_json_end(&j);
      }
  }


  // deal.II's matrix-free kernels with the degree known at compile time, as
  // step-37 has them (its runtime-degree kernels, fe_degree = -1, gave the
  // Chebyshev multigrid several times the iterations in deal.II 9.4)
  template <int fe_degree>
  void
  run(const Parameters &prm)
  {
    if constexpr (fe_degree <= max_degree)
      {
        if (static_cast<int>(prm.degree) != fe_degree)
          run<fe_degree + 1>(prm);
        else if (prm.dim == 2)
          LaplaceProblem<2, fe_degree>(prm).run();
        else
          LaplaceProblem<3, fe_degree>(prm).run();
      }
  }
} // namespace Step37



int
main(int argc, char **argv)
{
  using namespace Step37;
  app_set_program("dealii-step37");
  Parameters prm;
  if (!parse_options(argc, argv, prm))
    {
      print_help();
      return 0;
    }
  try
    {
      DealiiApp::InitFinalize mpi(argv[0], prm.threads);
      run<1>(prm);
    }
  catch (const std::exception &exc)
    {
      DealiiApp::report_error(exc);
      return APP_EXIT_LIBRARY;
    }
  return 0;
}
