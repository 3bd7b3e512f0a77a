/* The deal.II bridge in deal.II's multigrid pipeline: tpmg's PatchSmoother,
 * LaplaceOperator and CoarseSolver in Multigrid with MGTransferMatrixFree give
 * tpmg's own iteration counts (GMRES, CG, mixed precision) and are within one
 * iteration of deal.II's RelaxationBlockSOR on vertex patches; a Chebyshev
 * smoother runs on the LaplaceOperator; GpuPreconditioner and solve_on_gpu()
 * (CPU backend) match tpmg's solver, also on vectors in MemorySpace::Default
 * (deal.II >= 9.6); and a setup exported from deal.II reproduces the solve in
 * `tpmg-poisson --setup` (argv[1]: its path). */
#include <deal.II/base/function.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>

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
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/solver_gmres.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/vector.h>

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
#include <tpmg/dealii/gpu_preconditioner.h>
#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/laplace_operator.h>
#include <tpmg/dealii/patch_smoother.h>
#include <tpmg/dealii/renumbering.h>

#include "bridge-assembly.h"
#include "bridge-test.h"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <type_traits>

#if DEAL_II_VERSION_GTE(9, 6, 0)
#  include <deal.II/lac/read_write_vector.h>

#  include <Kokkos_Core.hpp>
#endif

using namespace dealii;

namespace
{
  using VectorType = LinearAlgebra::distributed::Vector<double>;

  constexpr double tolerance = 1e-9;

  /** The test mesh: coarse cells, refinements. */
  template <int dim>
  struct Mesh
  {
    std::vector<unsigned int> cells;
    Point<dim>                lower, upper;
    unsigned int              refinements;
  };

  /** A renumbered FE_Q(k) problem on a parallel::distributed mesh (one rank).
   */
  template <int dim>
  struct Problem
  {
    Problem(const Mesh<dim> &mesh, const unsigned int k)
      : tria(MPI_COMM_WORLD,
             Triangulation<dim>::limit_level_difference_at_vertices,
             parallel::distributed::Triangulation<
               dim>::construct_multigrid_hierarchy)
      , fe(k)
      , dof_handler(tria)
      , context("cpu", 1)
    {
      bridge_test::make_mesh(
        tria, mesh.cells, mesh.lower, mesh.upper, mesh.refinements);
      dof_handler.distribute_dofs(fe);
      dof_handler.distribute_mg_dofs();
      tpmg::dealii::renumber_lexicographic(dof_handler);
      mg_constrained_dofs.initialize(dof_handler);
      mg_constrained_dofs.make_zero_boundary_constraints(dof_handler, {0});
      hierarchy =
        std::make_unique<tpmg::dealii::Hierarchy<dim>>(dof_handler, context);
      hierarchy->cross_check(mg_constrained_dofs);

      // f = 1, zero on Dirichlet DoFs
      rhs.reinit(hierarchy->get_partitioner());
      const QGauss<dim>                    quadrature(k + 1);
      FEValues<dim>                        fe_values(fe,
                              quadrature,
                              update_values | update_JxW_values);
      std::vector<types::global_dof_index> indices(fe.n_dofs_per_cell());
      for (const auto &cell : dof_handler.active_cell_iterators())
        {
          fe_values.reinit(cell);
          cell->get_dof_indices(indices);
          for (unsigned int q = 0; q < quadrature.size(); ++q)
            for (unsigned int i = 0; i < indices.size(); ++i)
              rhs(indices[i]) += fe_values.shape_value(i, q) * fe_values.JxW(q);
        }
      for (const auto index :
           mg_constrained_dofs.get_boundary_indices(mesh.refinements))
        rhs(index) = 0;
    }

    parallel::distributed::Triangulation<dim>     tria;
    FE_Q<dim>                                     fe;
    DoFHandler<dim>                               dof_handler;
    MGConstrainedDoFs                             mg_constrained_dofs;
    tpmg::dealii::Context                         context;
    std::unique_ptr<tpmg::dealii::Hierarchy<dim>> hierarchy;
    VectorType                                    rhs;
  };



  /** tpmg's own solver on the hierarchy's grid: iterations and solution. */
  template <int dim>
  int
  tpmg_solve(const Problem<dim>    &problem,
             const tpmg_solver_type type,
             const tpmg_arithmetic  arithmetic,
             const VectorType      &rhs,
             VectorType            &solution,
             const double           tol = tolerance)
  {
    tpmg_context       *ctx  = problem.context.get();
    tpmg_grid          *grid = problem.hierarchy->get_grid();
    const tpmg_index    n    = problem.hierarchy->n_dofs();
    void               *b = nullptr, *x = nullptr;
    tpmg_solver        *solver  = nullptr;
    tpmg_solver_options options = tpmg_solver_options_default();
    options.type                = type;
    options.arithmetic          = arithmetic;
    options.tolerance           = tol;
    tpmg_solver_result result{};
    solution.reinit(rhs);
    const bool ok =
      tpmg_vector_create(ctx, TPMG_DOUBLE, n, &b) == TPMG_SUCCESS &&
      tpmg_vector_create(ctx, TPMG_DOUBLE, n, &x) == TPMG_SUCCESS &&
      tpmg_vector_upload(ctx, TPMG_DOUBLE, n, rhs.get_values(), b) ==
        TPMG_SUCCESS &&
      tpmg_solver_create(grid, &options, &solver) == TPMG_SUCCESS &&
      tpmg_solver_solve(solver, b, x, &result) == TPMG_SUCCESS &&
      tpmg_vector_download(ctx, TPMG_DOUBLE, n, x, solution.get_values()) ==
        TPMG_SUCCESS;
    BRIDGE_CHECK(ok, "tpmg's solver failed: " << tpmg_context_last_error(ctx));
    BRIDGE_CHECK(result.converged, "tpmg's solver did not converge");
    tpmg_solver_destroy(&solver);
    tpmg_vector_destroy(ctx, &x);
    tpmg_vector_destroy(ctx, &b);
    return result.iterations;
  }



  /**
   * deal.II's Multigrid with tpmg's PatchSmoother, LaplaceOperator and
   * CoarseSolver in precision Number and MGTransferMatrixFree, as the
   * preconditioner of SolverFGMRES or SolverCG on the active LaplaceOperator.
   * Returns the iterations.
   */
  template <int dim, typename Number>
  unsigned int
  pipeline_solve(const Problem<dim> &problem,
                 const bool          cg,
                 const VectorType   &rhs,
                 VectorType         &solution,
                 const double        tol = tolerance)
  {
    // as tpmg's solvers: a symmetric V-cycle for CG only
    typename tpmg::dealii::PatchSmoother<dim, Number>::AdditionalData
      smoother_data;
    smoother_data.symmetric      = cg;
    using LevelVector            = LinearAlgebra::distributed::Vector<Number>;
    const auto        &hierarchy = *problem.hierarchy;
    const unsigned int max_level = hierarchy.max_level();
    MGLevelObject<tpmg::dealii::LaplaceOperator<dim, Number>> mg_matrices(
      0, max_level);
    for (unsigned int level = 0; level <= max_level; ++level)
      mg_matrices[level].initialize(hierarchy, level);
    mg::Matrix<LevelVector>                  mg_matrix(mg_matrices);
    tpmg::dealii::PatchSmoother<dim, Number> smoother(hierarchy, smoother_data);
    tpmg::dealii::CoarseSolver<dim, Number>  coarse(hierarchy);
    MGTransferMatrixFree<dim, Number> transfer(problem.mg_constrained_dofs);
    transfer.build(problem.dof_handler, hierarchy.get_level_partitioners());
    Multigrid<LevelVector> mg(
      mg_matrix, coarse, transfer, smoother, smoother, 0, max_level);
    PreconditionMG<dim, LevelVector, MGTransferMatrixFree<dim, Number>>
      preconditioner(problem.dof_handler, mg, transfer);

    const tpmg::dealii::LaplaceOperator<dim, double> system(hierarchy);
    SolverControl control(100, tol * rhs.l2_norm());
    if (solution.size() != rhs.size())
      solution.reinit(rhs);
    if (cg)
      SolverCG<VectorType>(control).solve(system,
                                          solution,
                                          rhs,
                                          preconditioner);
    else
      SolverFGMRES<VectorType>(control,
                               SolverFGMRES<VectorType>::AdditionalData(30))
        .solve(system, solution, rhs, preconditioner);
    return control.last_step();
  }



  double
  relative_difference(const VectorType &a, const VectorType &b)
  {
    VectorType difference = a;
    difference -= b;
    return difference.l2_norm() / b.l2_norm();
  }



#if DEAL_II_VERSION_GTE(9, 6, 0)
  using DefaultVector =
    LinearAlgebra::distributed::Vector<double, MemorySpace::Default>;

  /** A copy of @p from in the other memory space, with the same layout. */
  template <typename To, typename From>
  To
  copy_to(const From &from)
  {
    To to(from.get_partitioner());
    LinearAlgebra::ReadWriteVector<typename To::value_type> values(
      from.locally_owned_elements());
    values.import_elements(from, VectorOperation::insert);
    to.import_elements(values, VectorOperation::insert);
    return to;
  }



  /**
   * The classes meant for device vectors (LaplaceOperator, GpuPreconditioner,
   * solve_on_gpu()) on LinearAlgebra::distributed::Vector<Number,
   * MemorySpace::Default>, in deal.II's FGMRES: the same operator (double and
   * float), diagonal, iterations and solution as on host vectors. Default is
   * Kokkos' default memory space: host memory in a deal.II whose Kokkos has no
   * GPU backend (Debian's), where a CPU context uses the vectors in place;
   * device memory otherwise, which a CPU context refuses (a CUDA context would
   * take them).
   */
  template <int dim>
  void
  check_default_memory_space(Problem<dim> &problem, const std::string &what)
  {
    const auto &hierarchy = *problem.hierarchy;
    const tpmg::dealii::LaplaceOperator<dim, double, MemorySpace::Default>
                        system(hierarchy);
    const DefaultVector rhs = copy_to<DefaultVector>(problem.rhs);
    DefaultVector       y;
    system.initialize_dof_vector(y);
    if constexpr (!std::is_same_v<MemorySpace::Default::kokkos_space,
                                  ::Kokkos::HostSpace>)
      {
        BRIDGE_CHECK_THROWS(system.vmult(y, rhs),
                            tpmg::dealii::ExcUnsupported,
                            "device memory");
        return;
      }

    // the operator and its diagonal, against those on host vectors
    const tpmg::dealii::LaplaceOperator<dim, double> system_host(hierarchy);
    VectorType                                       y_host;
    system_host.initialize_dof_vector(y_host);
    system_host.vmult(y_host, problem.rhs);
    system.vmult(y, rhs);
    BRIDGE_CHECK(relative_difference(copy_to<VectorType>(y), y_host) == 0,
                 what << ": vmult on Default vectors differs from vmult on "
                         "host vectors by "
                      << relative_difference(copy_to<VectorType>(y), y_host));
    system.vmult_add(y, rhs);
    system_host.vmult_add(y_host, problem.rhs);
    BRIDGE_CHECK(relative_difference(copy_to<VectorType>(y), y_host) == 0,
                 what << ": vmult_add on Default vectors differs by "
                      << relative_difference(copy_to<VectorType>(y), y_host));
    using FloatVector = LinearAlgebra::distributed::Vector<float>;
    using DefaultFloatVector =
      LinearAlgebra::distributed::Vector<float, MemorySpace::Default>;
    const tpmg::dealii::LaplaceOperator<dim, float, MemorySpace::Default>
                                                    system_float(hierarchy);
    const tpmg::dealii::LaplaceOperator<dim, float> system_float_host(
      hierarchy);
    FloatVector rhs_float;
    rhs_float = problem.rhs;
    FloatVector        y_float_host(rhs_float);
    DefaultFloatVector y_float(rhs_float.get_partitioner());
    system_float_host.vmult(y_float_host, rhs_float);
    system_float.vmult(y_float, copy_to<DefaultFloatVector>(rhs_float));
    y_float_host -= copy_to<FloatVector>(y_float);
    BRIDGE_CHECK(y_float_host.linfty_norm() == 0,
                 what << ": float vmult on Default vectors differs by "
                      << y_float_host.linfty_norm());

    tpmg::dealii::LaplaceOperator<dim, double, MemorySpace::Default> diagonal(
      hierarchy);
    tpmg::dealii::LaplaceOperator<dim, double> diagonal_host(hierarchy);
    diagonal.compute_diagonal();
    diagonal_host.compute_diagonal();
    const VectorType inverse =
      copy_to<VectorType>(diagonal.get_matrix_diagonal_inverse()->get_vector());
    BRIDGE_CHECK(relative_difference(
                   inverse,
                   diagonal_host.get_matrix_diagonal_inverse()->get_vector()) ==
                   0,
                 what << ": the inverse diagonal on Default vectors differs");

    // deal.II's FGMRES with the GpuPreconditioner on Default vectors, against
    // tpmg's own GMRES
    VectorType x_tpmg;
    const int  gmres = tpmg_solve(
      problem, TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_DOUBLE, problem.rhs, x_tpmg);
    tpmg_multigrid_options mg_options = tpmg_multigrid_options_default();
    mg_options.symmetric              = 0; // tpmg's GMRES
    tpmg::dealii::GpuPreconditioner<dim> preconditioner(hierarchy,
                                                        problem.context,
                                                        mg_options);
    SolverControl control(100, tolerance * problem.rhs.l2_norm());
    DefaultVector x;
    x.reinit(rhs);
    SolverFGMRES<DefaultVector>(control,
                                SolverFGMRES<DefaultVector>::AdditionalData(30))
      .solve(system, x, rhs, preconditioner);
    BRIDGE_CHECK(static_cast<int>(control.last_step()) == gmres,
                 what << ": FGMRES on Default vectors took "
                      << control.last_step() << " iterations, tpmg's solver "
                      << gmres);
    BRIDGE_CHECK(relative_difference(copy_to<VectorType>(x), x_tpmg) < 1e-7,
                 what << ": FGMRES on Default vectors: the solution differs "
                         "from tpmg's by "
                      << relative_difference(copy_to<VectorType>(x), x_tpmg));

    // solve_on_gpu() on Default vectors, against tpmg's solver
    tpmg_solver_options options = tpmg_solver_options_default();
    options.type                = TPMG_SOLVER_GMRES;
    options.arithmetic          = TPMG_ARITHMETIC_DOUBLE;
    options.tolerance           = tolerance;
    DefaultVector            solution;
    const tpmg_solver_result result = tpmg::dealii::solve_on_gpu(
      hierarchy, problem.context, rhs, solution, options);
    BRIDGE_CHECK(result.converged && result.iterations == gmres,
                 what << ": solve_on_gpu on Default vectors took "
                      << result.iterations << " iterations, tpmg's solver "
                      << gmres);
    BRIDGE_CHECK(
      relative_difference(copy_to<VectorType>(solution), x_tpmg) < 1e-12,
      what << ": solve_on_gpu on Default vectors: the solution differs from "
              "tpmg's by "
           << relative_difference(copy_to<VectorType>(solution), x_tpmg));
  }
#endif



  /** The pipeline's iterations against tpmg's own, and the GPU classes. */
  template <int dim>
  void
  check_pipeline(const Mesh<dim> &mesh, const unsigned int k)
  {
    const std::string what = std::to_string(dim) + "D Q" + std::to_string(k);
    Problem<dim>      problem(mesh, k);
    VectorType        x_tpmg, x_dealii, x_bridge;

    const int gmres = tpmg_solve(
      problem, TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_DOUBLE, problem.rhs, x_tpmg);
    const unsigned int pipeline_gmres =
      pipeline_solve<dim, double>(problem, false, problem.rhs, x_dealii);
    BRIDGE_CHECK(static_cast<int>(pipeline_gmres) == gmres,
                 what << ": GMRES in deal.II's pipeline took " << pipeline_gmres
                      << " iterations, tpmg's solver " << gmres);
    BRIDGE_CHECK(relative_difference(x_dealii, x_tpmg) < 1e-7,
                 what << ": the solutions differ by "
                      << relative_difference(x_dealii, x_tpmg));

    const int cg = tpmg_solve(
      problem, TPMG_SOLVER_CG, TPMG_ARITHMETIC_DOUBLE, problem.rhs, x_tpmg);
    x_dealii = 0;
    const unsigned int pipeline_cg =
      pipeline_solve<dim, double>(problem, true, problem.rhs, x_dealii);
    BRIDGE_CHECK(static_cast<int>(pipeline_cg) == cg,
                 what << ": CG in deal.II's pipeline took " << pipeline_cg
                      << " iterations, tpmg's solver " << cg);

    // float V-cycle in double GMRES: tpmg's mixed arithmetic
    const int mixed = tpmg_solve(
      problem, TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_MIXED, problem.rhs, x_tpmg);
    x_dealii = 0;
    const unsigned int pipeline_mixed =
      pipeline_solve<dim, float>(problem, false, problem.rhs, x_dealii);
    BRIDGE_CHECK(std::abs(static_cast<int>(pipeline_mixed) - mixed) <= 1,
                 what << ": mixed precision in deal.II's pipeline took "
                      << pipeline_mixed << " iterations, tpmg's solver "
                      << mixed);

    // the whole V-cycle in a context of its own (own grid) and in the
    // hierarchy's (shared grid), through the GPU classes' code
    tpmg::dealii::Context other_context("cpu", 1);
    for (tpmg::dealii::Context *context : {&other_context, &problem.context})
      {
        tpmg_multigrid_options mg_options = tpmg_multigrid_options_default();
        mg_options.symmetric              = 0; // tpmg's GMRES
        tpmg::dealii::GpuPreconditioner<dim> preconditioner(*problem.hierarchy,
                                                            *context,
                                                            mg_options);
        const tpmg::dealii::LaplaceOperator<dim, double> system(
          *problem.hierarchy);
        SolverControl control(100, tolerance * problem.rhs.l2_norm());
        x_bridge.reinit(problem.rhs);
        SolverFGMRES<VectorType>(control,
                                 SolverFGMRES<VectorType>::AdditionalData(30))
          .solve(system, x_bridge, problem.rhs, preconditioner);
        BRIDGE_CHECK(static_cast<int>(control.last_step()) == gmres,
                     what << ": GMRES with the GpuPreconditioner took "
                          << control.last_step()
                          << " iterations, tpmg's solver " << gmres);

        for (const auto &[type, arithmetic, expected] :
             {std::make_tuple(TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_DOUBLE, gmres),
              std::make_tuple(TPMG_SOLVER_CG, TPMG_ARITHMETIC_DOUBLE, cg),
              std::make_tuple(TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_MIXED, mixed)})
          {
            tpmg_solver_options options = tpmg_solver_options_default();
            options.type                = type;
            options.arithmetic          = arithmetic;
            options.tolerance           = tolerance;
            VectorType x_reference;
            tpmg_solve(problem, type, arithmetic, problem.rhs, x_reference);
            x_bridge.reinit(0);
            const tpmg_solver_result result = tpmg::dealii::solve_on_gpu(
              *problem.hierarchy, *context, problem.rhs, x_bridge, options);
            BRIDGE_CHECK(result.converged && result.iterations == expected,
                         what << ": solve_on_gpu (solver " << type
                              << ", arithmetic " << arithmetic << ") took "
                              << result.iterations
                              << " iterations, tpmg's solver " << expected);
            BRIDGE_CHECK(
              relative_difference(x_bridge, x_reference) < 1e-12,
              what << ": solve_on_gpu's solution differs from tpmg's by "
                   << relative_difference(x_bridge, x_reference));
          }
      }

#if DEAL_II_VERSION_GTE(9, 6, 0)
    check_default_memory_space(problem, what);
#endif

    // a float solve in float
    {
      tpmg_solver_options options     = tpmg_solver_options_default();
      options.type                    = TPMG_SOLVER_GMRES;
      options.arithmetic              = TPMG_ARITHMETIC_FLOAT;
      options.tolerance               = 1e-4;
      const tpmg_solver_result result = tpmg::dealii::solve_on_gpu(
        *problem.hierarchy, other_context, problem.rhs, x_bridge, options);
      BRIDGE_CHECK(result.converged &&
                     relative_difference(x_bridge, x_tpmg) < 1e-3,
                   what << ": solve_on_gpu in float: converged "
                        << result.converged << ", solution differs by "
                        << relative_difference(x_bridge, x_tpmg));
    }

    // a Chebyshev smoother on tpmg's LaplaceOperator (its diagonal)
    {
      using Smoother =
        PreconditionChebyshev<tpmg::dealii::LaplaceOperator<dim, double>,
                              VectorType>;
      const auto        &hierarchy = *problem.hierarchy;
      const unsigned int max_level = hierarchy.max_level();
      MGLevelObject<tpmg::dealii::LaplaceOperator<dim, double>> mg_matrices(
        0, max_level);
      MGLevelObject<typename Smoother::AdditionalData> smoother_data(0,
                                                                     max_level);
      for (unsigned int level = 0; level <= max_level; ++level)
        {
          mg_matrices[level].initialize(hierarchy, level);
          mg_matrices[level].compute_diagonal();
          smoother_data[level].smoothing_range     = 15.;
          smoother_data[level].degree              = 5;
          smoother_data[level].eig_cg_n_iterations = 10;
          smoother_data[level].preconditioner =
            mg_matrices[level].get_matrix_diagonal_inverse();
        }
      MGSmootherPrecondition<tpmg::dealii::LaplaceOperator<dim, double>,
                             Smoother,
                             VectorType>
        smoother;
      smoother.initialize(mg_matrices, smoother_data);
      mg::Matrix<VectorType>                  mg_matrix(mg_matrices);
      tpmg::dealii::CoarseSolver<dim, double> coarse(hierarchy);
      MGTransferMatrixFree<dim, double> transfer(problem.mg_constrained_dofs);
      transfer.build(problem.dof_handler, hierarchy.get_level_partitioners());
      Multigrid<VectorType> mg(mg_matrix, coarse, transfer, smoother, smoother);
      PreconditionMG<dim, VectorType, MGTransferMatrixFree<dim, double>>
        preconditioner(problem.dof_handler, mg, transfer);
      const tpmg::dealii::LaplaceOperator<dim, double> system(hierarchy);
      SolverControl control(100, tolerance * problem.rhs.l2_norm());
      x_dealii.reinit(problem.rhs);
      SolverCG<VectorType>(control).solve(system,
                                          x_dealii,
                                          problem.rhs,
                                          preconditioner);
      BRIDGE_CHECK(
        control.last_step() <= 20 &&
          relative_difference(x_dealii, x_tpmg) < 1e-7,
        what << ": CG with a Chebyshev smoother on the LaplaceOperator took "
             << control.last_step() << " iterations");
    }
  }



  /**
   * deal.II's RelaxationBlockSOR on vertex patches (patch interiors, exact
   * block inverses) with assembled level matrices, one forward sweep before
   * and after the coarse correction (as tpmg's GMRES V-cycle), in FGMRES: the
   * iterations, for the same mesh and f = 1.
   */
  template <int dim>
  unsigned int
  block_sor_iterations(const Mesh<dim> &mesh, const unsigned int k)
  {
    using Relaxation =
      RelaxationBlockSOR<SparseMatrix<double>, double, Vector<double>>;
    Triangulation<dim> tria(
      Triangulation<dim>::limit_level_difference_at_vertices);
    bridge_test::make_mesh(
      tria, mesh.cells, mesh.lower, mesh.upper, mesh.refinements);
    const FE_Q<dim> fe(k);
    DoFHandler<dim> dof_handler(tria);
    dof_handler.distribute_dofs(fe);
    dof_handler.distribute_mg_dofs();
    MGConstrainedDoFs mg_constrained_dofs;
    mg_constrained_dofs.initialize(dof_handler);
    mg_constrained_dofs.make_zero_boundary_constraints(dof_handler, {0});

    AffineConstraints<double> constraints;
    VectorTools::interpolate_boundary_values(dof_handler,
                                             0,
                                             Functions::ZeroFunction<dim>(),
                                             constraints);
    constraints.close();
    DynamicSparsityPattern dsp(dof_handler.n_dofs());
    DoFTools::make_sparsity_pattern(dof_handler, dsp, constraints, false);
    SparsityPattern      sparsity;
    SparseMatrix<double> system;
    sparsity.copy_from(dsp);
    system.reinit(sparsity);
    Vector<double> rhs(dof_handler.n_dofs()), solution(dof_handler.n_dofs());

    const unsigned int                                 L = mesh.refinements;
    MGLevelObject<SparsityPattern>                     mg_sparsity(0, L);
    MGLevelObject<SparseMatrix<double>>                mg_matrices(0, L);
    MGLevelObject<typename Relaxation::AdditionalData> smoother_data(0, L);
    for (unsigned int level = 0; level <= L; ++level)
      {
        DynamicSparsityPattern level_dsp(dof_handler.n_dofs(level));
        MGTools::make_sparsity_pattern(dof_handler, level_dsp, level);
        mg_sparsity[level].copy_from(level_dsp);
        mg_matrices[level].reinit(mg_sparsity[level]);
        DoFTools::make_vertex_patches(smoother_data[level].block_list,
                                      dof_handler,
                                      level,
                                      true);
        smoother_data[level].block_list.compress();
        smoother_data[level].relaxation = 1.0;
        smoother_data[level].inversion =
          PreconditionBlockBase<double>::gauss_jordan;
      }

    const QGauss<dim> quadrature(k + 1);
    FEValues<dim>     fe_values(
      fe, quadrature, update_values | update_gradients | update_JxW_values);
    const unsigned int                   n = fe.n_dofs_per_cell();
    FullMatrix<double>                   cell_matrix(n, n);
    Vector<double>                       cell_rhs(n);
    std::vector<types::global_dof_index> indices(n);
    const auto                           cell_matrices = [&](const auto &cell) {
      fe_values.reinit(cell);
      cell_matrix = 0;
      cell_rhs    = 0;
      for (unsigned int q = 0; q < quadrature.size(); ++q)
        for (unsigned int i = 0; i < n; ++i)
          {
            for (unsigned int j = 0; j < n; ++j)
              cell_matrix(i, j) += fe_values.shape_grad(i, q) *
                                   fe_values.shape_grad(j, q) *
                                   fe_values.JxW(q);
            cell_rhs(i) += fe_values.shape_value(i, q) * fe_values.JxW(q);
          }
    };
    for (const auto &cell : dof_handler.active_cell_iterators())
      {
        cell_matrices(cell);
        cell->get_dof_indices(indices);
        constraints.distribute_local_to_global(
          cell_matrix, cell_rhs, indices, system, rhs);
      }
    // level matrices with identity-like Dirichlet rows, as in step-16
    for (unsigned int level = 0; level <= L; ++level)
      {
        AffineConstraints<double> boundary;
        boundary.add_lines(mg_constrained_dofs.get_boundary_indices(level));
        boundary.close();
        for (const auto &cell : dof_handler.mg_cell_iterators_on_level(level))
          {
            cell_matrices(cell);
            cell->get_mg_dof_indices(indices);
            boundary.distribute_local_to_global(cell_matrix,
                                                indices,
                                                mg_matrices[level]);
          }
      }

    MGTransferPrebuilt<Vector<double>> transfer(mg_constrained_dofs);
    transfer.build(dof_handler);
    FullMatrix<double> coarse_matrix;
    coarse_matrix.copy_from(mg_matrices[0]);
    MGCoarseGridHouseholder<double, Vector<double>> coarse;
    coarse.initialize(coarse_matrix);
    mg::SmootherRelaxation<Relaxation, Vector<double>> smoother;
    smoother.initialize(mg_matrices, smoother_data);
    mg::Matrix<Vector<double>> mg_matrix(mg_matrices);
    Multigrid<Vector<double>>  mg(
      mg_matrix, coarse, transfer, smoother, smoother);
    PreconditionMG<dim, Vector<double>, MGTransferPrebuilt<Vector<double>>>
                  preconditioner(dof_handler, mg, transfer);
    SolverControl control(100, tolerance * rhs.l2_norm());
    SolverFGMRES<Vector<double>>(
      control, SolverFGMRES<Vector<double>>::AdditionalData(30))
      .solve(system, solution, rhs, preconditioner);
    return control.last_step();
  }



  template <int dim>
  void
  check_block_sor(const Mesh<dim> &mesh, const unsigned int k)
  {
    Problem<dim> problem(mesh, k);
    VectorType   x;
    const int    gmres = tpmg_solve(
      problem, TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_DOUBLE, problem.rhs, x);
    const unsigned int block_sor = block_sor_iterations(mesh, k);
    BRIDGE_CHECK(std::abs(static_cast<int>(block_sor) - gmres) <= 1,
                 dim << "D Q" << k
                     << ": RelaxationBlockSOR on vertex patches took "
                     << block_sor << " iterations, tpmg's smoother " << gmres);
  }



  /** The value of `"key":value` in a line of JSON. */
  double
  json_number(const std::string &json, const std::string &key)
  {
    const std::size_t at = json.find("\"" + key + "\":");
    if (at == std::string::npos)
      return std::numeric_limits<double>::quiet_NaN();
    return std::atof(json.c_str() + at + key.size() + 3);
  }



  /**
   * The sine problem (u = prod sin(pi x_d), g = u) set up by deal.II: the
   * load vector minus the lifting of g, g on Dirichlet DoFs; solved in the
   * pipeline, and in tpmg-poisson from the exported setup.
   */
  template <int dim>
  void
  check_setup(const Mesh<dim>   &mesh,
              const unsigned int k,
              const std::string &tpmg_poisson)
  {
    const std::string what = std::to_string(dim) + "D Q" + std::to_string(k);
    Problem<dim>      problem(mesh, k);
    const auto       &hierarchy = *problem.hierarchy;

    class Exact : public Function<dim>
    {
    public:
      double
      value(const Point<dim> &p, const unsigned int = 0) const override
      {
        double u = 1;
        for (unsigned int d = 0; d < dim; ++d)
          u *= std::sin(numbers::PI * p[d]);
        return u;
      }
    } exact;

    VectorType g, b, load;
    g.reinit(problem.rhs);
    b.reinit(problem.rhs);
    load.reinit(problem.rhs);
    const auto &boundary =
      problem.mg_constrained_dofs.get_boundary_indices(mesh.refinements);
    std::map<types::global_dof_index, double> boundary_values;
    VectorTools::interpolate_boundary_values(problem.dof_handler,
                                             0,
                                             exact,
                                             boundary_values);
    for (const auto &[index, value] : boundary_values)
      g(index) = value;

    const QGauss<dim>                    quadrature(k + 2);
    FEValues<dim>                        fe_values(problem.fe,
                            quadrature,
                            update_values | update_quadrature_points |
                              update_JxW_values);
    std::vector<types::global_dof_index> indices(problem.fe.n_dofs_per_cell());
    for (const auto &cell : problem.dof_handler.active_cell_iterators())
      {
        fe_values.reinit(cell);
        cell->get_dof_indices(indices);
        for (unsigned int q = 0; q < quadrature.size(); ++q)
          for (unsigned int i = 0; i < indices.size(); ++i)
            load(indices[i]) +=
              fe_values.shape_value(i, q) * dim * numbers::PI * numbers::PI *
              exact.value(fe_values.quadrature_point(q)) * fe_values.JxW(q);
      }
    SparsityPattern      sparsity;
    SparseMatrix<double> A;
    bridge_test::assemble_laplace(problem.dof_handler,
                                  numbers::invalid_unsigned_int,
                                  sparsity,
                                  A);
    for (unsigned int i = 0; i < b.size(); ++i)
      if (boundary.is_element(i))
        b(i) = g(i);
      else
        {
          b(i) = load(i);
          for (auto entry = A.begin(i); entry != A.end(i); ++entry)
            b(i) -= entry->value() * g(entry->column());
        }

    // tpmg's own right-hand side of the same problem
    {
      VectorType       b_tpmg(b);
      tpmg_context    *ctx = problem.context.get();
      void            *v   = nullptr;
      const tpmg_index n   = b.size();
      BRIDGE_CHECK(
        tpmg_vector_create(ctx, TPMG_DOUBLE, n, &v) == TPMG_SUCCESS &&
          tpmg_problem_rhs(hierarchy.get_grid(),
                           TPMG_RHS_SINE,
                           TPMG_DOUBLE,
                           v) == TPMG_SUCCESS &&
          tpmg_vector_download(ctx, TPMG_DOUBLE, n, v, b_tpmg.get_values()) ==
            TPMG_SUCCESS,
        tpmg_context_last_error(ctx));
      tpmg_vector_destroy(ctx, &v);
      BRIDGE_CHECK(
        relative_difference(b_tpmg, b) < 1e-10,
        what << ": tpmg_problem_rhs differs from deal.II's right-hand side by "
             << relative_difference(b_tpmg, b));
    }

    // deal.II's pipeline, from x = g (a residual that vanishes on Dirichlet
    // DoFs)
    VectorType         x(g);
    const unsigned int iterations =
      pipeline_solve<dim, double>(problem, false, b, x, 1e-12);
    Vector<double> cellwise(problem.tria.n_active_cells());
    Vector<double> x_serial(x.begin(), x.end());
    VectorTools::integrate_difference(MappingQ1<dim>(),
                                      problem.dof_handler,
                                      x_serial,
                                      exact,
                                      cellwise,
                                      QGauss<dim>(k + 2),
                                      VectorTools::L2_norm);
    const double error =
      VectorTools::compute_global_error(problem.tria,
                                        cellwise,
                                        VectorTools::L2_norm);
    double error_tpmg = 0;
    tpmg_problem_l2_error(hierarchy.get_grid(),
                          TPMG_RHS_SINE,
                          TPMG_DOUBLE,
                          x.get_values(),
                          &error_tpmg);
    BRIDGE_CHECK(std::abs(error_tpmg - error) < 1e-8 * error,
                 what << ": L2 error by deal.II " << error << ", by tpmg "
                      << error_tpmg);

    // the same solve in tpmg-poisson
    const std::string file =
      "t902-bridge-setup-" + std::to_string(dim) + "d.tpmg";
    hierarchy.write_setup(file, TPMG_RHS_SINE, &b);
    const std::string command = "'" + tpmg_poisson + "' --setup " + file +
                                " --solver gmres --precision double"
                                " --tol 1e-12 --threads 1 --json";
    FILE *pipe = popen(command.c_str(), "r");
    BRIDGE_CHECK(pipe != nullptr, "cannot run " << command);
    std::string output, last;
    if (pipe != nullptr)
      {
        char buffer[4096];
        while (std::fgets(buffer, sizeof buffer, pipe) != nullptr)
          {
            output += buffer;
            if (buffer[0] == '{')
              last = buffer;
          }
        const int status = pclose(pipe);
        BRIDGE_CHECK(status == 0,
                     command << " failed with status " << status << ":\n"
                             << output);
      }
    std::remove(file.c_str());
    const double poisson_iterations = json_number(last, "iterations");
    const double poisson_error      = json_number(last, "l2_error");
    BRIDGE_CHECK(poisson_iterations == iterations,
                 what << ": tpmg-poisson --setup took " << poisson_iterations
                      << " iterations, deal.II's pipeline " << iterations
                      << "\n"
                      << last);
    BRIDGE_CHECK(std::abs(poisson_error - error) < 1e-6 * error,
                 what << ": tpmg-poisson --setup gives the L2 error "
                      << poisson_error << ", deal.II " << error << "\n"
                      << last);
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  if (argc != 2)
    {
      std::cerr << "usage: " << argv[0] << " PATH-OF-tpmg-poisson" << std::endl;
      return 2;
    }
  try
    {
      const Mesh<2> square{{1, 1}, Point<2>(0, 0), Point<2>(1, 1), 4};
      const Mesh<2> rectangle{{2, 3},
                              Point<2>(0.25, -0.5),
                              Point<2>(1.5, 0.75),
                              3};
      const Mesh<3> cube{{1, 1, 1}, Point<3>(0, 0, 0), Point<3>(1, 1, 1), 3};
      check_pipeline(square, 3);
      check_pipeline(rectangle, 2);
      check_pipeline(cube, 2);
      check_block_sor(square, 3);
      check_block_sor(cube, 2);
      check_setup(rectangle, 3, argv[1]);
      check_setup(cube, 2, argv[1]);
    }
  catch (const std::exception &e)
    {
      std::cerr << "unexpected exception: " << e.what() << std::endl;
      return 1;
    }
  return bridge_test::result();
}
