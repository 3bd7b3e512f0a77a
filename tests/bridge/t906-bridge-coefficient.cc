/* The deal.II bridge with step-37's variable coefficient a(x) = 1 / (0.05 +
 * 2 |x|^2), on P ranks (label mpi; one rank too), on a mesh of
 * make_slab_triangulation():
 * - tpmg's LaplaceOperator of the active DoFs against deal.II's
 *   MatrixFreeOperators::LaplaceOperator with the same coefficient (1e-12
 *   relative), the coefficient given as a Function, as step-37's table of a
 *   MatrixFree object, and per cell (a at the cell's center; deal.II's table
 *   then constant on each cell), 2D and 3D, k = 1..3; tpmg's quadrature
 *   points against deal.II's FEValues with QGauss(k+1);
 * - the same for the table and the per-cell forms on p4est's own partition
 *   of a refined hyper_cube (2D Q2, Q3, 3D Q1, Q2; not tpmg's slabs on 3
 *   ranks), where the coefficient's cells move to tpmg's owning ranks;
 * - check_level_operator(): passes with the coefficient, throws naming the
 *   difference without it;
 * - deal.II's Multigrid with tpmg's LaplaceOperator, PatchSmoother and
 *   CoarseSolver under SolverCG on step-37's problem (f = 1, u = 0 on the
 *   boundary, system operator deal.II's): converged within a bound, in the
 *   iterations of the same solve on one rank (every rank repeats it on
 *   MPI_COMM_SELF), with step-37's edge matrices (MGInterfaceOperator on
 *   tpmg's LaplaceOperator), to the same solution; solve_on_gpu() (CPU backend)
 *   converged to it too;
 * - bad input: a coefficient after an object exists, twice, non-positive,
 *   a table or vector of the wrong size, a smoother variant other than
 *   global.
 * With --verbose rank 0 prints the differences and iterations. */
#include <deal.II/base/function.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_q1.h>

#include <deal.II/grid/grid_generator.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/vector.h>

#include <deal.II/matrix_free/fe_evaluation.h>
#include <deal.II/matrix_free/matrix_free.h>
#include <deal.II/matrix_free/operators.h>

#include <deal.II/multigrid/mg_coarse.h>
#include <deal.II/multigrid/mg_constrained_dofs.h>
#include <deal.II/multigrid/mg_matrix.h>
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

#include "../../bridge/source/redistribution.h"
#include "bridge-test.h"

#include <iomanip>
#include <memory>
#include <random>
#include <sstream>
#include <string>

using namespace dealii;

namespace
{
  using VectorType = LinearAlgebra::distributed::Vector<double>;

  bool verbose = false;

  std::string
  scientific(const double value)
  {
    std::ostringstream text;
    text << std::scientific << std::setprecision(2) << value;
    return text.str();
  }

  /** Print @p text on rank 0 with --verbose. */
  void
  report(const std::string &text)
  {
    if (verbose && Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0)
      std::cout << text << std::endl;
  }

  /** step-37's coefficient. */
  template <int dim, typename Number>
  Number
  step37_coefficient(const Point<dim, Number> &p)
  {
    return 1. / (0.05 + 2. * p.square());
  }

  template <int dim>
  class Coefficient : public Function<dim>
  {
  public:
    double
    value(const Point<dim> &p, const unsigned int = 0) const override
    {
      return step37_coefficient(p);
    }
  };

  /** A constant coefficient, for bad values. */
  template <int dim>
  class Constant : public Function<dim>
  {
  public:
    explicit Constant(const double a)
      : a(a)
    {}
    double
    value(const Point<dim> &, const unsigned int = 0) const override
    {
      return a;
    }
    double a;
  };

  /** How the coefficient is given to the hierarchy. */
  enum class Form
  {
    function,
    table,
    cells
  };

  const char *
  form_name(const Form form)
  {
    return form == Form::function ? "Function" :
           form == Form::table    ? "MatrixFree table" :
                                    "per cell";
  }

  /**
   * step-37's problem on P ranks of @p comm, renumbered, with deal.II's
   * MatrixFree operator with the coefficient (at the quadrature points, or
   * per cell: a at the cell's center).
   */
  template <int dim, int k>
  struct Problem
  {
    Problem(const MPI_Comm     comm,
            const unsigned int refinements,
            const bool         cells,
            const bool         slabs = true)
      : tria(comm,
             Triangulation<dim>::limit_level_difference_at_vertices,
             parallel::distributed::Triangulation<
               dim>::construct_multigrid_hierarchy)
      , fe(k)
      , dof_handler(tria)
      , context(comm, "cpu", 1)
    {
      const unsigned int        P = Utilities::MPI::n_mpi_processes(comm);
      Point<dim>                lower, upper;
      std::vector<unsigned int> repetitions(dim, 2);
      for (unsigned int d = 0; d < dim; ++d)
        {
          lower[d] = -0.5;
          upper[d] = 0.5;
        }
      // square cells: 2 P of width 0.5 along the last direction
      repetitions[dim - 1] = 2 * P;
      lower[dim - 1]       = -0.5 * P;
      upper[dim - 1]       = 0.5 * P;
      if (P == 1)
        {
          repetitions[dim - 1] = 4;
          lower[dim - 1]       = -1;
          upper[dim - 1]       = 1;
        }
      if (slabs)
        tpmg::dealii::make_slab_triangulation(
          tria, lower, upper, repetitions, refinements);
      else
        {
          // p4est's own partition of one coarse cell (z-order)
          GridGenerator::hyper_cube(tria, -1, 1);
          tria.refine_global(refinements);
        }
      dof_handler.distribute_dofs(fe);
      dof_handler.distribute_mg_dofs();
      tpmg::dealii::renumber_lexicographic(dof_handler);
      mg_constrained_dofs.initialize(dof_handler);
      mg_constrained_dofs.make_zero_boundary_constraints(dof_handler, {0});
      hierarchy =
        std::make_unique<tpmg::dealii::Hierarchy<dim>>(dof_handler, context);

      const IndexSet relevant =
        DoFTools::extract_locally_relevant_dofs(dof_handler);
      constraints.reinit(relevant);
      VectorTools::interpolate_boundary_values(dof_handler,
                                               0,
                                               Functions::ZeroFunction<dim>(),
                                               constraints);
      constraints.close();
      typename MatrixFree<dim, double>::AdditionalData data;
      data.tasks_parallel_scheme =
        MatrixFree<dim, double>::AdditionalData::none;
      data.mapping_update_flags =
        update_gradients | update_JxW_values | update_quadrature_points;
      auto matrix_free = std::make_shared<MatrixFree<dim, double>>();
      matrix_free->reinit(
        MappingQ1<dim>(), dof_handler, constraints, QGauss<1>(k + 1), data);
      system.initialize(matrix_free);

      // step-37's evaluate_coefficient()
      FEEvaluation<dim, k, k + 1, 1, double> phi(*matrix_free);
      table = std::make_shared<Table<2, VectorizedArray<double>>>(
        matrix_free->n_cell_batches(), phi.n_q_points);
      for (unsigned int batch = 0; batch < matrix_free->n_cell_batches();
           ++batch)
        {
          phi.reinit(batch);
          for (unsigned int q = 0; q < phi.n_q_points; ++q)
            (*table)(batch, q) = step37_coefficient(phi.quadrature_point(q));
          if (cells)
            for (unsigned int lane = 0;
                 lane < matrix_free->n_active_entries_per_cell_batch(batch);
                 ++lane)
              {
                const double a = step37_coefficient(
                  matrix_free->get_cell_iterator(batch, lane)->center());
                for (unsigned int q = 0; q < phi.n_q_points; ++q)
                  (*table)(batch, q)[lane] = a;
              }
        }
      system.set_coefficient(table);

      cell_values.reinit(tria.n_active_cells());
      for (const auto &cell : tria.active_cell_iterators())
        if (cell->is_locally_owned())
          cell_values[cell->active_cell_index()] =
            step37_coefficient(cell->center());
    }

    void
    set_coefficient(const Form form)
    {
      if (form == Form::function)
        hierarchy->set_coefficient(Coefficient<dim>());
      else if (form == Form::table)
        hierarchy->set_coefficient(*system.get_matrix_free(), *table);
      else
        hierarchy->set_coefficient(cell_values);
    }

    parallel::distributed::Triangulation<dim>     tria;
    FE_Q<dim>                                     fe;
    DoFHandler<dim>                               dof_handler;
    MGConstrainedDoFs                             mg_constrained_dofs;
    tpmg::dealii::Context                         context;
    std::unique_ptr<tpmg::dealii::Hierarchy<dim>> hierarchy;
    AffineConstraints<double>                     constraints;
    MatrixFreeOperators::LaplaceOperator<dim, k, k + 1, 1, VectorType> system;
    std::shared_ptr<Table<2, VectorizedArray<double>>>                 table;
    Vector<double> cell_values;
  };



  /** ||a - b|| / ||b|| over the owned entries of all ranks. */
  double
  relative_difference(const VectorType &a, const VectorType &b)
  {
    double difference = 0;
    for (unsigned int i = 0; i < a.locally_owned_size(); ++i)
      difference += (a.local_element(i) - b.local_element(i)) *
                    (a.local_element(i) - b.local_element(i));
    difference = Utilities::MPI::sum(difference, a.get_mpi_communicator());
    return std::sqrt(difference) / b.l2_norm();
  }



  /** tpmg's points of QGauss(k+1) against deal.II's FEValues, cell by cell. */
  template <int dim, int k>
  void
  check_points(const Problem<dim, k> &problem)
  {
    const auto        &mesh = problem.hierarchy->get_mesh_description();
    const unsigned int L    = mesh.n_refinements;
    const QGauss<dim>  quadrature(k + 1);
    FEValues<dim> fe_values(problem.fe, quadrature, update_quadrature_points);
    std::vector<double> points(3 * quadrature.size());
    for (const auto &cell : problem.dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          fe_values.reinit(cell);
          tpmg_index index[3] = {0, 0, 0};
          for (unsigned int d = 0; d < dim; ++d)
            index[d] = static_cast<tpmg_index>(std::floor(
              (cell->center()[d] - mesh.lower[d]) /
              ((mesh.upper[d] - mesh.lower[d]) / (mesh.n_cells[d] << L))));
          tpmg_grid_quadrature_points(problem.hierarchy->get_grid(),
                                      index,
                                      points.data());
          for (unsigned int q = 0; q < quadrature.size(); ++q)
            for (unsigned int d = 0; d < dim; ++d)
              BRIDGE_CHECK(std::abs(points[3 * q + d] -
                                    fe_values.quadrature_point(q)[d]) < 1e-13,
                           dim << "D Q" << k << ": point " << q << " of cell "
                               << cell->center() << ": tpmg "
                               << points[3 * q + d] << ", deal.II "
                               << fe_values.quadrature_point(q)[d]);
        }
  }



  /** tpmg's operator with the coefficient in @p form against deal.II's. */
  template <int dim, int k>
  void
  check_operator(const MPI_Comm comm, const Form form, const bool slabs = true)
  {
    // on hyper_cube tpmg's slabs need two finest cells per rank along the
    // last direction
    const unsigned int P           = Utilities::MPI::n_mpi_processes(comm);
    unsigned int       refinements = 2;
    while (!slabs && (1u << refinements) < 2 * P)
      ++refinements;
    const std::string what = std::to_string(dim) + "D Q" + std::to_string(k) +
                             " " + form_name(form) +
                             (slabs ? "" : " (hyper_cube, p4est's partition)");
    Problem<dim, k> problem(comm, refinements, form == Form::cells, slabs);
    // from 3 ranks on, p4est's partition of the active cells is not tpmg's
    // slabs: the cells' values move
    if (!slabs)
      BRIDGE_CHECK(P < 3 ||
                     !problem.hierarchy->get_redistribution()->is_identity(),
                   what << ": p4est's partition is tpmg's slabs on " << P
                        << " ranks");
    if (form == Form::function)
      check_points(problem);

    // without the coefficient, check_level_operator() names the difference
    BRIDGE_CHECK_THROWS(
      tpmg::dealii::check_level_operator(*problem.hierarchy,
                                         numbers::invalid_unsigned_int,
                                         problem.system),
      tpmg::dealii::ExcHierarchyMismatch,
      "a = 1 (no coefficient given) on the active DoFs; "
      "your level operator differs by");
    problem.set_coefficient(form);
    BRIDGE_CHECK(problem.hierarchy->has_coefficient(), what);
    try
      {
        tpmg::dealii::check_level_operator(*problem.hierarchy,
                                           numbers::invalid_unsigned_int,
                                           problem.system);
      }
    catch (const std::exception &e)
      {
        BRIDGE_CHECK(false, what << ": check_level_operator: " << e.what());
      }

    tpmg::dealii::LaplaceOperator<dim, double> op(*problem.hierarchy);
    VectorType                                 x, y, x_ref, y_ref;
    op.initialize_dof_vector(x);
    op.initialize_dof_vector(y);
    problem.system.initialize_dof_vector(x_ref);
    problem.system.initialize_dof_vector(y_ref);
    std::mt19937 random(k + 10 * dim + 100 * static_cast<int>(form) +
                        1000 * Utilities::MPI::this_mpi_process(comm));
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (unsigned int i = 0; i < x.locally_owned_size(); ++i)
      x.local_element(i) = x_ref.local_element(i) = uniform(random);
    op.vmult(y, x);
    problem.system.vmult(y_ref, x_ref);
    const double difference = relative_difference(y, y_ref);
    report(what + ": operator difference " + scientific(difference));
    BRIDGE_CHECK(difference < 1e-12,
                 what << ": tpmg's operator differs from deal.II's "
                         "MatrixFreeOperators::LaplaceOperator by "
                      << difference);
  }



  /**
   * Multigrid with tpmg's classes under SolverCG on step-37's problem (f =
   * 1): the iterations; @p x the solution.
   */
  template <int dim, int k>
  unsigned int
  multigrid_solve(const MPI_Comm comm, VectorType &x, VectorType &x_tpmg)
  {
    Problem<dim, k> problem(comm, 3, false);
    problem.set_coefficient(Form::table);
    const auto        &hierarchy = *problem.hierarchy;
    const unsigned int max_level = hierarchy.max_level();
    MGLevelObject<tpmg::dealii::LaplaceOperator<dim, double>> mg_matrices(
      0, max_level);
    for (unsigned int level = 0; level <= max_level; ++level)
      mg_matrices[level].initialize(hierarchy, level);
    mg::Matrix<VectorType>                   mg_matrix(mg_matrices);
    tpmg::dealii::PatchSmoother<dim, double> smoother(hierarchy);
    tpmg::dealii::CoarseSolver<dim, double>  coarse(hierarchy);
    MGTransferMatrixFree<dim, double> transfer(problem.mg_constrained_dofs);
    transfer.build(problem.dof_handler, hierarchy.get_level_partitioners());
    Multigrid<VectorType> mg(
      mg_matrix, coarse, transfer, smoother, smoother, 0, max_level);
    // step-37's edge matrices, on tpmg's operators: zero without hanging
    // nodes (LaplaceOperator::vmult_interface_down/up)
    MGLevelObject<MatrixFreeOperators::MGInterfaceOperator<
      tpmg::dealii::LaplaceOperator<dim, double>>>
      mg_interface_matrices(0, max_level);
    for (unsigned int level = 0; level <= max_level; ++level)
      mg_interface_matrices[level].initialize(mg_matrices[level]);
    mg::Matrix<VectorType> mg_interface(mg_interface_matrices);
    mg.set_edge_matrices(mg_interface, mg_interface);
    PreconditionMG<dim, VectorType, MGTransferMatrixFree<dim, double>>
      preconditioner(problem.dof_handler, mg, transfer);

    // step-37's right-hand side: f = 1, zero on the boundary
    VectorType rhs;
    problem.system.initialize_dof_vector(rhs);
    problem.system.initialize_dof_vector(x);
    FEEvaluation<dim, k, k + 1, 1, double> phi(
      *problem.system.get_matrix_free());
    for (unsigned int batch = 0;
         batch < problem.system.get_matrix_free()->n_cell_batches();
         ++batch)
      {
        phi.reinit(batch);
        for (unsigned int q = 0; q < phi.n_q_points; ++q)
          phi.submit_value(make_vectorized_array<double>(1.0), q);
        phi.integrate(EvaluationFlags::values);
        phi.distribute_local_to_global(rhs);
      }
    rhs.compress(VectorOperation::add);

    SolverControl control(100, 1e-12 * rhs.l2_norm());
    SolverCG<VectorType>(control).solve(problem.system, x, rhs, preconditioner);
    problem.constraints.distribute(x);

    // tpmg's own solver (GMRES, the CPU backend) on the same problem
    tpmg_solver_options options =
      tpmg::dealii::default_solver_options(hierarchy);
    BRIDGE_CHECK(options.smoother == TPMG_SMOOTHER_GLOBAL,
                 "default_solver_options() with a coefficient: smoother "
                   << options.smoother);
    options.tolerance = 1e-12;
    VectorType b;
    b.reinit(hierarchy.get_partitioner());
    for (unsigned int i = 0; i < b.locally_owned_size(); ++i)
      b.local_element(i) = rhs.local_element(i);
    const tpmg_solver_result result = tpmg::dealii::solve_on_gpu(
      hierarchy, problem.context, b, x_tpmg, options);
    BRIDGE_CHECK(result.converged,
                 dim << "D Q" << k << ": solve_on_gpu did not converge in "
                     << result.iterations);
    // the same solution: to the solvers' tolerance (condition number)
    VectorType x_owned;
    x_owned.reinit(hierarchy.get_partitioner());
    for (unsigned int i = 0; i < x.locally_owned_size(); ++i)
      x_owned.local_element(i) = x.local_element(i);
    const double difference = relative_difference(x_tpmg, x_owned);
    report(std::to_string(dim) + "D Q" + std::to_string(k) + " on " +
           std::to_string(Utilities::MPI::n_mpi_processes(comm)) +
           " ranks: CG with tpmg's smoother " +
           std::to_string(control.last_step()) + " iterations, solve_on_gpu " +
           std::to_string(result.iterations) + ", solutions differ by " +
           scientific(difference));
    BRIDGE_CHECK(difference < 1e-10,
                 dim << "D Q" << k
                     << ": solve_on_gpu's solution differs from deal.II's "
                        "Multigrid's by "
                     << difference);
    return control.last_step();
  }



  /** The P-rank solve against the one-rank solve (MPI_COMM_SELF). */
  template <int dim, int k>
  void
  check_solve(const unsigned int bound)
  {
    VectorType         x, x_tpmg, x_serial, x_serial_tpmg;
    const unsigned int iterations =
      multigrid_solve<dim, k>(MPI_COMM_WORLD, x, x_tpmg);
    const unsigned int serial =
      multigrid_solve<dim, k>(MPI_COMM_SELF, x_serial, x_serial_tpmg);
    BRIDGE_CHECK(iterations <= bound,
                 dim << "D Q" << k << ": CG with tpmg's smoother took "
                     << iterations << " iterations, more than " << bound);
    BRIDGE_CHECK(iterations == serial,
                 dim << "D Q" << k << ": " << iterations << " iterations on "
                     << Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD)
                     << " ranks, " << serial << " on one");
  }



  /** Refusals of bad input. */
  template <int dim>
  void
  check_refusals(const MPI_Comm comm)
  {
    {
      Problem<dim, 2> problem(comm, 2, false);
      BRIDGE_CHECK_THROWS(problem.hierarchy->set_coefficient(Constant<dim>(0.)),
                          tpmg::dealii::ExcTpmgError,
                          "tpmg_grid_set_coefficient");
      BRIDGE_CHECK_THROWS(problem.hierarchy->set_coefficient(
                            Constant<dim>(-1.)),
                          tpmg::dealii::ExcTpmgError,
                          "tpmg_grid_set_coefficient");
      BRIDGE_CHECK(!problem.hierarchy->has_coefficient(), "after a refusal");
      Table<2, VectorizedArray<double>> small(1, 1);
      BRIDGE_CHECK_THROWS(problem.hierarchy->set_coefficient(
                            *problem.system.get_matrix_free(), small),
                          tpmg::dealii::ExcUnsupported,
                          "a coefficient table of 1 x 1 entries");
      Vector<double> short_vector(3);
      BRIDGE_CHECK_THROWS(problem.hierarchy->set_coefficient(short_vector),
                          tpmg::dealii::ExcUnsupported,
                          "a coefficient vector of 3 entries");
      problem.set_coefficient(Form::function);
      BRIDGE_CHECK_THROWS(problem.set_coefficient(Form::cells),
                          tpmg::dealii::ExcUnsupported,
                          "set it once");
      typename tpmg::dealii::PatchSmoother<dim, double>::AdditionalData data;
      data.variant = TPMG_SMOOTHER_FUSED;
      BRIDGE_CHECK_THROWS(
        (tpmg::dealii::PatchSmoother<dim, double>(*problem.hierarchy, data)),
        tpmg::dealii::ExcUnsupported,
        "only in the variant global");
    }
    {
      Problem<dim, 1> problem(comm, 2, false);
      {
        const tpmg::dealii::LaplaceOperator<dim, double> op(*problem.hierarchy);
        BRIDGE_CHECK_THROWS(problem.set_coefficient(Form::function),
                            tpmg::dealii::ExcTpmgError,
                            "in use");
      }
      tpmg::dealii::Context other(comm, "cpu", 1);
      {
        const tpmg::dealii::GpuPreconditioner<dim> preconditioner(
          *problem.hierarchy, other);
      }
      BRIDGE_CHECK_THROWS(problem.set_coefficient(Form::function),
                          tpmg::dealii::ExcUnsupported,
                          "copied the hierarchy's grid");
    }
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  verbose = argc > 1 && std::string(argv[1]) == "--verbose";
  try
    {
      for (const Form form : {Form::function, Form::table, Form::cells})
        {
          check_operator<2, 1>(MPI_COMM_WORLD, form);
          check_operator<2, 2>(MPI_COMM_WORLD, form);
          check_operator<2, 3>(MPI_COMM_WORLD, form);
          check_operator<3, 1>(MPI_COMM_WORLD, form);
          check_operator<3, 2>(MPI_COMM_WORLD, form);
          check_operator<3, 3>(MPI_COMM_WORLD, form);
        }
      // p4est's partition of hyper_cube (not tpmg's slabs on 3 ranks; on 2
      // its active cells are, z-order halving the last direction first):
      // the coefficient's cells move to tpmg's owners
      for (const Form form : {Form::table, Form::cells})
        {
          check_operator<2, 2>(MPI_COMM_WORLD, form, false);
          check_operator<2, 3>(MPI_COMM_WORLD, form, false);
          check_operator<3, 1>(MPI_COMM_WORLD, form, false);
          check_operator<3, 2>(MPI_COMM_WORLD, form, false);
        }
      check_solve<2, 2>(12);
      check_solve<3, 2>(12);
      check_refusals<2>(MPI_COMM_WORLD);
    }
  catch (const std::exception &e)
    {
      std::cerr << "exception: " << e.what() << std::endl;
      return 1;
    }
  return bridge_test::result();
}
