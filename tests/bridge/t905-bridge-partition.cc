/* The deal.II bridge on p4est's own partition (run under mpiexec with 1 to 4
 * ranks; label mpi): GridGenerator::hyper_cube and a 3 x 2 (x 5) coarse mesh,
 * refined globally, on a parallel::distributed::Triangulation whose
 * partition is not tpmg's slabs, in 2D and 3D with k = 1..3:
 * - renumber_lexicographic() numbers each rank's owned DoFs contiguously in
 *   increasing lexicographic index, and the DoFs of all ranks are a bijection
 *   onto the lattice (the lexicographic index computed here from the support
 *   points);
 * - tpmg's LaplaceOperator on the active DoFs and on every level equals the
 *   one-rank operator (every rank repeats the problem on MPI_COMM_SELF,
 *   entries compared by lexicographic index) and deal.II's MatrixFree Laplace
 *   on the same ranks, to 1e-12 (in float: the one-rank operator to 1e-5);
 * - deal.II's Multigrid with tpmg's LaplaceOperator, PatchSmoother and
 *   CoarseSolver under SolverFGMRES and SolverCG, FGMRES with the
 *   GpuPreconditioner, and solve_on_gpu() (CPU backend): the iterations of the
 *   one-rank solve and the same solution to 1e-9;
 * - a mesh that tpmg cannot partition (too few cells along the last
 *   direction for P ranks) refused with the same message on every rank, and
 *   DoFs not renumbered refused on every rank. */
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
#include <deal.II/lac/solver_gmres.h>

#include <deal.II/matrix_free/fe_evaluation.h>
#include <deal.II/matrix_free/matrix_free.h>

#include <deal.II/multigrid/mg_constrained_dofs.h>
#include <deal.II/multigrid/mg_matrix.h>
#include <deal.II/multigrid/mg_transfer_matrix_free.h>
#include <deal.II/multigrid/multigrid.h>

#include <tpmg/dealii/coarse_solver.h>
#include <tpmg/dealii/gpu_preconditioner.h>
#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/laplace_operator.h>
#include <tpmg/dealii/patch_smoother.h>
#include <tpmg/dealii/renumbering.h>

#include "bridge-test.h"
// internal: whether the bridge moves values between the ranks
#include "../../bridge/source/redistribution.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace dealii;

namespace
{
  using VectorType = LinearAlgebra::distributed::Vector<double>;

  constexpr double tolerance = 1e-9;

  /** The levels checked whose values move between the ranks: on P > 1
   * ranks some must (else the exchange went untested). */
  unsigned int n_moving = 0;

  /** The coarse mesh: hyper_cube (empty cells) or subdivided cells. */
  template <int dim>
  struct Mesh
  {
    std::vector<unsigned int> cells;
    unsigned int              refinements;
  };

  /** A renumbered FE_Q(k) problem with f = 1 on the ranks of @p comm, on
   * p4est's partition. */
  template <int dim>
  struct Problem
  {
    Problem(const MPI_Comm comm, const Mesh<dim> &mesh, const unsigned int k)
      : tria(comm,
             Triangulation<dim>::limit_level_difference_at_vertices,
             parallel::distributed::Triangulation<
               dim>::construct_multigrid_hierarchy)
      , fe(k)
      , dof_handler(tria)
      , context(comm, "cpu", 1)
    {
      if (mesh.cells.empty())
        GridGenerator::hyper_cube(tria, -1, 1);
      else
        {
          Point<dim> upper;
          for (unsigned int d = 0; d < dim; ++d)
            upper[d] = 0.5 * mesh.cells[d];
          GridGenerator::subdivided_hyper_rectangle(tria,
                                                    mesh.cells,
                                                    Point<dim>(),
                                                    upper);
        }
      tria.refine_global(mesh.refinements);
      dof_handler.distribute_dofs(fe);
      dof_handler.distribute_mg_dofs();
      tpmg::dealii::renumber_lexicographic(dof_handler);
      mg_constrained_dofs.initialize(dof_handler);
      mg_constrained_dofs.make_zero_boundary_constraints(dof_handler, {0});
      hierarchy =
        std::make_unique<tpmg::dealii::Hierarchy<dim>>(dof_handler, context);
      hierarchy->cross_check(mg_constrained_dofs);

      rhs.reinit(hierarchy->get_partitioner());
      const QGauss<dim>                    quadrature(k + 1);
      FEValues<dim>                        fe_values(fe,
                              quadrature,
                              update_values | update_JxW_values);
      std::vector<types::global_dof_index> indices(fe.n_dofs_per_cell());
      for (const auto &cell : dof_handler.active_cell_iterators())
        if (cell->is_locally_owned())
          {
            fe_values.reinit(cell);
            cell->get_dof_indices(indices);
            for (unsigned int q = 0; q < quadrature.size(); ++q)
              for (unsigned int i = 0; i < indices.size(); ++i)
                rhs(indices[i]) +=
                  fe_values.shape_value(i, q) * fe_values.JxW(q);
          }
      rhs.compress(VectorOperation::add);
      for (const auto index :
           mg_constrained_dofs.get_boundary_indices(tria.n_global_levels() - 1))
        if (rhs.locally_owned_elements().is_element(index))
          rhs(index) = 0;
    }

    /**
     * The lexicographic index of each owned DoF of @p level (active DoFs for
     * numbers::invalid_unsigned_int), in the order of the owned range, from
     * the support points: the lattice cell of the point and the nearest
     * Gauss-Lobatto node within it.
     */
    std::vector<types::global_dof_index>
    lexicographic(const unsigned int level) const
    {
      const bool         active = level == numbers::invalid_unsigned_int;
      const unsigned int l      = active ? tria.n_global_levels() - 1 : level;
      const unsigned int k      = fe.degree;
      const IndexSet    &owned  = active ? dof_handler.locally_owned_dofs() :
                                           dof_handler.locally_owned_mg_dofs(level);
      Point<dim>         lower, upper;
      unsigned int       n_cells[dim];
      for (unsigned int d = 0; d < dim; ++d)
        {
          lower[d] = 1e300;
          upper[d] = -1e300;
        }
      for (const auto &cell : tria.cell_iterators_on_level(0))
        for (const unsigned int v : cell->vertex_indices())
          for (unsigned int d = 0; d < dim; ++d)
            {
              lower[d] = std::min(lower[d], cell->vertex(v)[d]);
              upper[d] = std::max(upper[d], cell->vertex(v)[d]);
            }
      for (unsigned int d = 0; d < dim; ++d)
        n_cells[d] = std::lround((upper[d] - lower[d]) /
                                 tria.begin(0)->extent_in_direction(d))
                     << l;
      const std::vector<Point<1>> nodes = QGaussLobatto<1>(k + 1).get_points();
      std::vector<types::global_dof_index> result(owned.n_elements());
      std::vector<types::global_dof_index> indices(fe.n_dofs_per_cell());
      const auto                           number = [&](const auto &cell) {
        if (active)
          cell->get_dof_indices(indices);
        else
          cell->get_mg_dof_indices(indices);
        for (unsigned int i = 0; i < indices.size(); ++i)
          {
            if (!owned.is_element(indices[i]))
              continue;
            types::global_dof_index g = 0;
            for (int d = dim - 1; d >= 0; --d)
              {
                const double h = (upper[d] - lower[d]) / n_cells[d];
                const double x =
                  cell->vertex(0)[d] + fe.get_unit_support_points()[i][d] * h;
                const long c =
                  std::min<long>(std::floor((x - lower[d]) / h + 1e-9),
                                 n_cells[d] - 1);
                const double t = (x - lower[d]) / h - c;
                unsigned int best = 0;
                for (unsigned int a = 1; a <= k; ++a)
                  if (std::abs(nodes[a][0] - t) < std::abs(nodes[best][0] - t))
                    best = a;
                g = g * (n_cells[d] * k + 1) + c * k + best;
              }
            result[owned.index_within_set(indices[i])] = g;
          }
      };
      if (active)
        {
          for (const auto &cell : dof_handler.active_cell_iterators())
            if (cell->is_locally_owned())
              number(cell);
        }
      else
        for (const auto &cell : dof_handler.mg_cell_iterators_on_level(level))
          if (cell->is_locally_owned_on_level())
            number(cell);
      return result;
    }

    parallel::distributed::Triangulation<dim>     tria;
    FE_Q<dim>                                     fe;
    DoFHandler<dim>                               dof_handler;
    MGConstrainedDoFs                             mg_constrained_dofs;
    mutable tpmg::dealii::Context                 context;
    std::unique_ptr<tpmg::dealii::Hierarchy<dim>> hierarchy;
    VectorType                                    rhs;
  };



  /** max over the owned entries of |a_i - b_{g(i)}| / max |b|, the serial
   * vector @p b indexed by the lexicographic index @p g of @p a's entries. */
  template <typename Vector>
  double
  difference_by_index(const Vector                               &a,
                      const Vector                               &b,
                      const std::vector<types::global_dof_index> &g)
  {
    double difference = 0;
    for (unsigned int i = 0; i < g.size(); ++i)
      difference =
        std::max<double>(difference, std::abs(a.local_element(i) - b(g[i])));
    return Utilities::MPI::max(difference, MPI_COMM_WORLD) /
           std::max<double>(b.linfty_norm(), 1e-300);
  }



  /** Each rank's owned DoFs: contiguous, in rank order, in increasing
   * lexicographic index @p g, all ranks' a bijection onto 0..n-1. */
  void
  check_numbering(const IndexSet                             &owned,
                  const std::vector<types::global_dof_index> &g,
                  const std::string                          &what)
  {
    const MPI_Comm comm = MPI_COMM_WORLD;
    BRIDGE_CHECK(owned.is_contiguous(), what << ": owned DoFs not contiguous");
    BRIDGE_CHECK(std::is_sorted(g.begin(), g.end()),
                 what << ": owned DoFs not in increasing lexicographic order");
    const types::global_dof_index first =
      owned.n_elements() ? *owned.begin() : 0;
    const auto firsts = Utilities::MPI::all_gather(comm, first);
    const auto counts = Utilities::MPI::all_gather(comm, owned.n_elements());
    types::global_dof_index expected = 0;
    for (unsigned int r = 0; r < firsts.size(); ++r)
      {
        BRIDGE_CHECK(counts[r] == 0 || firsts[r] == expected,
                     what << ": rank " << r << " owns from " << firsts[r]
                          << ", expected " << expected);
        expected += counts[r];
      }
    const auto        all = Utilities::MPI::all_gather(comm, g);
    std::vector<bool> seen(owned.size(), false);
    bool              bijection = expected == owned.size();
    for (const auto &part : all)
      for (const types::global_dof_index index : part)
        {
          bijection = bijection && index < seen.size() && !seen[index];
          if (index < seen.size())
            seen[index] = true;
        }
    BRIDGE_CHECK(bijection,
                 what << ": the lexicographic indices of the ranks' DoFs are "
                         "not a bijection onto 0.."
                      << owned.size() - 1);
  }



  /** deal.II's MatrixFree Laplace with zero Dirichlet constraints on the
   * ranks of @p problem (the identity at Dirichlet rows). */
  template <int dim>
  void
  matrix_free_laplace(const Problem<dim> &problem,
                      const VectorType   &src,
                      VectorType         &dst)
  {
    const unsigned int k = problem.fe.degree;
    const IndexSet     relevant =
      DoFTools::extract_locally_relevant_dofs(problem.dof_handler);
    AffineConstraints<double> constraints(relevant);
    DoFTools::make_zero_boundary_constraints(problem.dof_handler, constraints);
    constraints.close();
    MatrixFree<dim, double>                          matrix_free;
    typename MatrixFree<dim, double>::AdditionalData data;
    data.tasks_parallel_scheme = MatrixFree<dim, double>::AdditionalData::none;
    matrix_free.reinit(MappingQ1<dim>(),
                       problem.dof_handler,
                       constraints,
                       QGauss<1>(k + 1),
                       data);
    VectorType mf_src, mf_dst;
    matrix_free.initialize_dof_vector(mf_src);
    matrix_free.initialize_dof_vector(mf_dst);
    for (const auto i : src.locally_owned_elements())
      mf_src(i) = src(i);
    const std::function<void(const MatrixFree<dim, double> &,
                             VectorType &,
                             const VectorType &,
                             const std::pair<unsigned int, unsigned int> &)>
      laplace = [&](const MatrixFree<dim, double>               &mf,
                    VectorType                                  &out,
                    const VectorType                            &in,
                    const std::pair<unsigned int, unsigned int> &range) {
        FEEvaluation<dim, -1> phi(mf);
        for (unsigned int cell = range.first; cell < range.second; ++cell)
          {
            phi.reinit(cell);
            phi.gather_evaluate(in, EvaluationFlags::gradients);
            for (unsigned int q = 0; q < phi.n_q_points; ++q)
              phi.submit_gradient(phi.get_gradient(q), q);
            phi.integrate_scatter(EvaluationFlags::gradients, out);
          }
      };
    matrix_free.cell_loop(laplace, mf_dst, mf_src, true);
    dst.reinit(src, true);
    for (const auto i : src.locally_owned_elements())
      dst(i) = constraints.is_constrained(i) ? src(i) : mf_dst(i);
  }



  /** The numbering and the operators of every level against the serial
   * problem's and, on the active DoFs, deal.II's MatrixFree Laplace. */
  template <int dim>
  void
  check_operators(const Problem<dim> &problem,
                  const Problem<dim> &serial,
                  const std::string  &what)
  {
    const auto &hierarchy = *problem.hierarchy;
    for (unsigned int level = 0; level <= hierarchy.max_level() + 1; ++level)
      {
        const bool         active = level > hierarchy.max_level();
        const unsigned int l = active ? numbers::invalid_unsigned_int : level;
        const std::string  at =
          what + (active ? std::string(", active") :
                           ", level " + std::to_string(level));
        const std::vector<types::global_dof_index> g = problem.lexicographic(l);
        check_numbering(active ?
                          problem.dof_handler.locally_owned_dofs() :
                          problem.dof_handler.locally_owned_mg_dofs(level),
                        g,
                        at);
        BRIDGE_CHECK(tpmg::dealii::is_lexicographic(problem.dof_handler, l),
                     at << ": is_lexicographic() is false");
        if (level >= hierarchy.min_level() &&
            !hierarchy.get_redistribution(l)->is_identity())
          ++n_moving;

        const tpmg::dealii::LaplaceOperator<dim, double> op(hierarchy, l),
          op_serial(*serial.hierarchy, l);
        VectorType src, dst, src_serial, dst_serial;
        op.initialize_dof_vector(src);
        op.initialize_dof_vector(dst);
        op_serial.initialize_dof_vector(src_serial);
        op_serial.initialize_dof_vector(dst_serial);
        for (unsigned int i = 0; i < g.size(); ++i)
          src.local_element(i) = std::sin(0.37 * g[i]) + 0.1;
        for (unsigned int i = 0; i < src_serial.size(); ++i)
          src_serial(i) = std::sin(0.37 * i) + 0.1;
        op.vmult(dst, src);
        op_serial.vmult(dst_serial, src_serial);
        const double difference = difference_by_index(dst, dst_serial, g);
        BRIDGE_CHECK(difference <= 1e-12,
                     at << ": tpmg's operator differs from the one-rank "
                           "operator by "
                        << difference << " (relative)");
        // the same in float (the exchange's float instance)
        using FloatVector = LinearAlgebra::distributed::Vector<float>;
        const tpmg::dealii::LaplaceOperator<dim, float> op_float(hierarchy, l),
          op_float_serial(*serial.hierarchy, l);
        FloatVector src_float, dst_float, src_float_serial, dst_float_serial;
        op_float.initialize_dof_vector(src_float);
        op_float.initialize_dof_vector(dst_float);
        op_float_serial.initialize_dof_vector(src_float_serial);
        op_float_serial.initialize_dof_vector(dst_float_serial);
        for (unsigned int i = 0; i < g.size(); ++i)
          src_float.local_element(i) = src.local_element(i);
        for (unsigned int i = 0; i < src_serial.size(); ++i)
          src_float_serial(i) = src_serial(i);
        op_float.vmult(dst_float, src_float);
        op_float_serial.vmult(dst_float_serial, src_float_serial);
        const double difference_float =
          difference_by_index(dst_float, dst_float_serial, g);
        BRIDGE_CHECK(difference_float <= 1e-5,
                     at << ": tpmg's float operator differs from the one-rank "
                           "one by "
                        << difference_float << " (relative)");
        if (active)
          {
            VectorType reference;
            matrix_free_laplace(problem, src, reference);
            reference -= dst;
            const double scale = dst.linfty_norm();
            BRIDGE_CHECK(reference.linfty_norm() <= 1e-12 * scale,
                         at << ": tpmg's operator differs from deal.II's "
                               "MatrixFree Laplace by "
                            << reference.linfty_norm() << " (scale " << scale
                            << ")");
          }
      }
  }



  /** deal.II's Multigrid with tpmg's classes (or, with @p gpu, FGMRES with
   * the GpuPreconditioner); returns the iterations. */
  template <int dim>
  unsigned int
  pipeline_solve(const Problem<dim> &problem,
                 const bool          cg,
                 const bool          gpu,
                 VectorType         &x)
  {
    const auto &hierarchy = *problem.hierarchy;
    const tpmg::dealii::LaplaceOperator<dim, double> system(hierarchy);
    SolverControl control(100, tolerance * problem.rhs.l2_norm());
    x.reinit(problem.rhs);
    if (gpu)
      {
        tpmg_multigrid_options options = tpmg_multigrid_options_default();
        options.symmetric              = 0;
        tpmg::dealii::GpuPreconditioner<dim> preconditioner(hierarchy,
                                                            problem.context,
                                                            options);
        SolverFGMRES<VectorType>(control,
                                 SolverFGMRES<VectorType>::AdditionalData(30))
          .solve(system, x, problem.rhs, preconditioner);
        return control.last_step();
      }
    typename tpmg::dealii::PatchSmoother<dim, double>::AdditionalData
      smoother_data;
    smoother_data.symmetric      = cg;
    const unsigned int max_level = hierarchy.max_level();
    MGLevelObject<tpmg::dealii::LaplaceOperator<dim, double>> mg_matrices(
      0, max_level);
    for (unsigned int level = 0; level <= max_level; ++level)
      mg_matrices[level].initialize(hierarchy, level);
    mg::Matrix<VectorType>                   mg_matrix(mg_matrices);
    tpmg::dealii::PatchSmoother<dim, double> smoother(hierarchy, smoother_data);
    tpmg::dealii::CoarseSolver<dim, double>  coarse(hierarchy);
    MGTransferMatrixFree<dim, double> transfer(problem.mg_constrained_dofs);
    transfer.build(problem.dof_handler, hierarchy.get_level_partitioners());
    Multigrid<VectorType> mg(
      mg_matrix, coarse, transfer, smoother, smoother, 0, max_level);
    PreconditionMG<dim, VectorType, MGTransferMatrixFree<dim, double>>
      preconditioner(problem.dof_handler, mg, transfer);
    if (cg)
      SolverCG<VectorType>(control).solve(system,
                                          x,
                                          problem.rhs,
                                          preconditioner);
    else
      SolverFGMRES<VectorType>(control,
                               SolverFGMRES<VectorType>::AdditionalData(30))
        .solve(system, x, problem.rhs, preconditioner);
    return control.last_step();
  }



  /** The P-rank solves against the one-rank solves (MPI_COMM_SELF). */
  template <int dim>
  void
  check_solves(const Problem<dim> &problem,
               const Problem<dim> &serial,
               const std::string  &what)
  {
    const unsigned int P = Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD);
    const std::vector<types::global_dof_index> g =
      problem.lexicographic(numbers::invalid_unsigned_int);
    for (const unsigned int variant : {0, 1, 2})
      {
        const bool         cg = variant == 1, gpu = variant == 2;
        VectorType         x, x_serial;
        const unsigned int n      = pipeline_solve(problem, cg, gpu, x);
        const unsigned int n_self = pipeline_solve(serial, cg, gpu, x_serial);
        const std::string  solver =
          gpu ? " GpuPreconditioner" : (cg ? " CG" : " FGMRES");
        BRIDGE_CHECK(n == n_self,
                     what << solver << ": " << n << " iterations on " << P
                          << " ranks, " << n_self << " on one");
        const double difference = difference_by_index(x, x_serial, g);
        BRIDGE_CHECK(difference <= tolerance,
                     what << solver << ": the solutions differ by "
                          << difference << " (relative)");
      }

    tpmg_solver_options options = tpmg_solver_options_default();
    options.type                = TPMG_SOLVER_GMRES;
    options.arithmetic          = TPMG_ARITHMETIC_DOUBLE;
    options.tolerance           = tolerance;
    VectorType               x, x_serial;
    const tpmg_solver_result result = tpmg::dealii::solve_on_gpu(
      *problem.hierarchy, problem.context, problem.rhs, x, options);
    const tpmg_solver_result result_serial = tpmg::dealii::solve_on_gpu(
      *serial.hierarchy, serial.context, serial.rhs, x_serial, options);
    BRIDGE_CHECK(result.converged &&
                   result.iterations == result_serial.iterations,
                 what << ": solve_on_gpu took " << result.iterations
                      << " iterations on " << P << " ranks, "
                      << result_serial.iterations << " on one");
    const double difference = difference_by_index(x, x_serial, g);
    BRIDGE_CHECK(difference <= 1e-12,
                 what << ": solve_on_gpu's solutions differ by " << difference
                      << " (relative)");
  }



  template <int dim>
  void
  check(const Mesh<dim> &mesh, const unsigned int k)
  {
    std::string what = std::to_string(dim) + "D Q" + std::to_string(k) +
                       (mesh.cells.empty() ? " hyper_cube" : " subdivided") +
                       " refined " + std::to_string(mesh.refinements);
    Problem<dim> problem(MPI_COMM_WORLD, mesh, k);
    Problem<dim> serial(MPI_COMM_SELF, mesh, k);
    check_operators(problem, serial, what);
    check_solves(problem, serial, what);
  }



  /** A mesh with too few cells along the last direction for P ranks: every
   * rank throws tpmg's refusal with the same message. */
  void
  check_refusal()
  {
    const unsigned int P = Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD);
    std::string        message;
    try
      {
        // 2 cells along y, so at most 2 ranks
        Problem<2> problem(MPI_COMM_WORLD, {{4, 1}, 1}, 1);
      }
    catch (const tpmg::dealii::ExcTpmgError &e)
      {
        message = e.what();
      }
    BRIDGE_CHECK(bridge_test::contains(message, std::to_string(P) + " ranks"),
                 "expected tpmg's refusal of a mesh of 2 cells along y on "
                   << P << " ranks, got '" << message << "'");
    const std::string first =
      Utilities::MPI::broadcast(MPI_COMM_WORLD, message, 0);
    BRIDGE_CHECK(message == first,
                 "the ranks' messages differ: '"
                   << message << "' and rank 0's '" << first << "'");
  }


  /** A Hierarchy of DoFs not renumbered: refused on every rank. */
  void
  check_not_renumbered()
  {
    parallel::distributed::Triangulation<2> tria(MPI_COMM_WORLD);
    GridGenerator::hyper_cube(tria);
    tria.refine_global(4);
    DoFHandler<2> dof_handler(tria);
    dof_handler.distribute_dofs(FE_Q<2>(2));
    tpmg::dealii::Context context(MPI_COMM_WORLD, "cpu", 1);
    std::string           message;
    try
      {
        tpmg::dealii::Hierarchy<2> hierarchy(dof_handler, context);
      }
    catch (const tpmg::dealii::ExcHierarchyMismatch &e)
      {
        message = e.get_message();
      }
    BRIDGE_CHECK(bridge_test::contains(message, "renumber_lexicographic()"),
                 "expected the refusal of DoFs not renumbered, got '" << message
                                                                      << "'");
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  const unsigned int P = Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD);
  try
    {
      // tpmg's slabs need two cells per rank along the last direction on
      // the finest level: one more refinement beyond 4 ranks (run by hand)
      const unsigned int extra = P > 4 ? 1 : 0;
      for (unsigned int k = 1; k <= 3; ++k)
        {
          check<2>({{}, 4 + extra}, k);
          check<2>({{3, 5}, 2 + extra}, k);
          check<3>({{}, 3 + extra}, k);
          check<3>({{3, 2, 5}, 1 + extra}, k);
        }
      BRIDGE_CHECK(P == 1 || n_moving > 0,
                   "no level's values moved between the ranks: p4est's "
                   "partition was tpmg's everywhere");
      check_not_renumbered();
      if (P > 2)
        check_refusal();
    }
  catch (const std::exception &e)
    {
      std::cerr << "exception: " << e.what() << std::endl;
      return 1;
    }
  return bridge_test::result();
}
