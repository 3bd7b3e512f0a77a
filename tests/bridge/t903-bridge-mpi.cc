/* The deal.II bridge on P MPI ranks (run under mpiexec with 2, 3 and 4
 * ranks; label mpi): on a parallel::distributed::Triangulation made by
 * make_slab_triangulation(),
 * - meshes whose coarse level tpmg distributes and meshes whose coarse level
 *   it keeps whole on every rank (the bridge gathers it);
 * - the renumbering: every level's and the active DoFs lexicographic on
 *   every rank's cells, each rank's owned DoFs one contiguous range, the
 *   ranges in rank order, and on tpmg's slabs the bridge moves no values
 *   (internal::Redistribution::is_identity() on every level);
 * - tpmg's LaplaceOperator on distributed vectors against deal.II's
 *   MatrixFree Laplace (FEEvaluation) on the same ranks, to 1e-12;
 * - deal.II's Multigrid with tpmg's LaplaceOperator, PatchSmoother and
 *   CoarseSolver, under SolverFGMRES and SolverCG: the iterations of the
 *   same solve on one rank (every rank solves it on MPI_COMM_SELF) and the
 *   same solution to 1e-9;
 * - meshes make_slab_triangulation() cannot cut into slabs refused with the
 *   same message on every rank, without a hang (p4est's partition of such a
 *   mesh is tested by t905-bridge-partition). */
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
#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/laplace_operator.h>
#include <tpmg/dealii/patch_smoother.h>
#include <tpmg/dealii/renumbering.h>

#include "bridge-test.h"
// internal: whether the bridge moves values between the ranks
#include "../../bridge/source/redistribution.h"

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

  template <int dim>
  struct Mesh
  {
    std::vector<unsigned int> cells;
    Point<dim>                lower, upper;
    unsigned int              refinements;
  };

  /** A renumbered FE_Q(k) problem with f = 1 on the ranks of @p comm. */
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
      tpmg::dealii::make_slab_triangulation(
        tria, mesh.lower, mesh.upper, mesh.cells, mesh.refinements);
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
           mg_constrained_dofs.get_boundary_indices(mesh.refinements))
        if (rhs.locally_owned_elements().is_element(index))
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



  /** deal.II's Multigrid with tpmg's classes; returns the iterations. */
  template <int dim>
  unsigned int
  pipeline_solve(const Problem<dim> &problem, const bool cg, VectorType &x)
  {
    typename tpmg::dealii::PatchSmoother<dim, double>::AdditionalData
      smoother_data;
    smoother_data.symmetric      = cg;
    const auto        &hierarchy = *problem.hierarchy;
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

    const tpmg::dealii::LaplaceOperator<dim, double> system(hierarchy);
    SolverControl control(100, tolerance * problem.rhs.l2_norm());
    x.reinit(problem.rhs);
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



  /** max_i |a_i - b_i| over @p a's owned entries, @p b holding all. */
  double
  owned_difference(const VectorType &a,
                   const VectorType &b,
                   const MPI_Comm    comm)
  {
    double difference = 0;
    for (const auto i : a.locally_owned_elements())
      difference = std::max(difference, std::abs(a(i) - b(i)));
    return Utilities::MPI::max(difference, comm);
  }



  /** The ranks' owned ranges: contiguous, in rank order, covering all. */
  template <int dim>
  void
  check_ranges(const Problem<dim> &problem, const std::string &what)
  {
    const MPI_Comm comm      = MPI_COMM_WORLD;
    const auto     check_set = [&](const IndexSet    &owned,
                               const std::string &where) {
      const types::global_dof_index first =
        owned.n_elements() ? *owned.begin() : 0;
      const std::vector<types::global_dof_index> firsts =
        Utilities::MPI::all_gather(comm, first);
      const std::vector<types::global_dof_index> counts =
        Utilities::MPI::all_gather(comm, owned.n_elements());
      BRIDGE_CHECK(owned.is_contiguous(),
                   what << ", " << where << ": owned DoFs not contiguous");
      types::global_dof_index expected = 0;
      for (unsigned int r = 0; r < firsts.size(); ++r)
        {
          BRIDGE_CHECK(firsts[r] == expected,
                       what << ", " << where << ": rank " << r << " owns from "
                            << firsts[r] << ", expected " << expected);
          expected += counts[r];
        }
      BRIDGE_CHECK(expected == owned.size(),
                   what << ", " << where << ": the ranks own " << expected
                        << " of " << owned.size() << " DoFs");
    };
    check_set(problem.dof_handler.locally_owned_dofs(), "active DoFs");
    // on tpmg's slabs the bridge moves no values (the copies of one rank)
    BRIDGE_CHECK(problem.hierarchy->get_redistribution()->is_identity(),
                 what << ": the active DoFs move between the ranks");
    for (unsigned int level = problem.hierarchy->min_level();
         level <= problem.hierarchy->max_level();
         ++level)
      BRIDGE_CHECK(problem.hierarchy->get_redistribution(level)->is_identity(),
                   what << ": level " << level
                        << "'s DoFs move between the ranks");
    BRIDGE_CHECK(tpmg::dealii::is_lexicographic(problem.dof_handler),
                 what << ": active DoFs not lexicographic");
    for (unsigned int level = 0; level <= problem.hierarchy->max_level();
         ++level)
      {
        check_set(problem.dof_handler.locally_owned_mg_dofs(level),
                  "level " + std::to_string(level));
        BRIDGE_CHECK(tpmg::dealii::is_lexicographic(problem.dof_handler, level),
                     what << ": level " << level << " not lexicographic");
      }
  }



  /**
   * tpmg's operator against deal.II's MatrixFree Laplace with zero
   * Dirichlet constraints on the same ranks: equal at interior rows, the
   * identity at Dirichlet rows.
   */
  template <int dim>
  void
  check_operator(const Problem<dim> &problem, const std::string &what)
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

    VectorType src(problem.hierarchy->get_partitioner()), dst, mf_src, mf_dst;
    for (const auto i : src.locally_owned_elements())
      src(i) = std::sin(0.37 * i) + 0.1;
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

    const tpmg::dealii::LaplaceOperator<dim, double> op(*problem.hierarchy);
    op.initialize_dof_vector(dst);
    op.vmult(dst, src);
    double difference = 0, scale = 0;
    for (const auto i : src.locally_owned_elements())
      {
        const double expected =
          constraints.is_constrained(i) ? src(i) : mf_dst(i);
        difference = std::max(difference, std::abs(dst(i) - expected));
        scale      = std::max(scale, std::abs(expected));
      }
    difference = Utilities::MPI::max(difference, MPI_COMM_WORLD);
    scale      = Utilities::MPI::max(scale, MPI_COMM_WORLD);
    BRIDGE_CHECK(difference <= 1e-12 * scale,
                 what << ": tpmg's operator differs from deal.II's MatrixFree "
                         "Laplace by "
                      << difference << " (scale " << scale << ")");
  }



  /** The P-rank solves against the one-rank solves (MPI_COMM_SELF). */
  template <int dim>
  void
  check_solves(const Mesh<dim> &mesh, const unsigned int k)
  {
    const std::string what = std::to_string(dim) + "D Q" + std::to_string(k);
    Problem<dim>      problem(MPI_COMM_WORLD, mesh, k);
    Problem<dim>      serial(MPI_COMM_SELF, mesh, k);
    check_ranges(problem, what);
    check_operator(problem, what);
    for (const bool cg : {false, true})
      {
        VectorType         x, x_serial;
        const unsigned int n      = pipeline_solve(problem, cg, x);
        const unsigned int n_self = pipeline_solve(serial, cg, x_serial);
        const std::string  solver = cg ? " CG" : " FGMRES";
        BRIDGE_CHECK(n == n_self,
                     what << solver << ": " << n << " iterations on "
                          << Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD)
                          << " ranks, " << n_self << " on one");
        const double difference = owned_difference(x, x_serial, MPI_COMM_WORLD);
        const double scale      = x_serial.linfty_norm();
        BRIDGE_CHECK(difference <= tolerance * scale,
                     what << solver << ": the solutions differ by "
                          << difference << " (max " << scale << ")");
      }
  }



  /**
   * @p statement throws ExcUnsupported on every rank with the same message
   * containing @p part.
   */
  template <typename Statement>
  void
  check_refused(const Statement &statement, const std::string &part)
  {
    std::string message;
    try
      {
        statement();
      }
    catch (const tpmg::dealii::ExcUnsupported &e)
      {
        message = e.get_message();
      }
    BRIDGE_CHECK(bridge_test::contains(message, part),
                 "expected a refusal naming '" << part << "', got '" << message
                                               << "'");
    const std::string first =
      Utilities::MPI::broadcast(MPI_COMM_WORLD, message, 0);
    BRIDGE_CHECK(message == first,
                 "the ranks' messages differ: '"
                   << message << "' and rank 0's '" << first << "'");
  }



  void
  check_refusals()
  {
    const unsigned int P = Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD);
    using Tria           = parallel::distributed::Triangulation<2>;
    const auto settings  = Tria::construct_multigrid_hierarchy;
    // not a multiple of P cells along y
    check_refused(
      [&]() {
        Tria tria(MPI_COMM_WORLD,
                  Triangulation<2>::limit_level_difference_at_vertices,
                  settings);
        tpmg::dealii::make_slab_triangulation(
          tria, Point<2>(0, 0), Point<2>(1, 1), {2, 2 * P + 1}, 2);
      },
      "cells along the last direction on " + std::to_string(P) + " ranks");
    // 6 cells across with 2 per rank along y: p4est's parts are not slabs
    check_refused(
      [&]() {
        Tria tria(MPI_COMM_WORLD,
                  Triangulation<2>::limit_level_difference_at_vertices,
                  settings);
        tpmg::dealii::make_slab_triangulation(
          tria, Point<2>(0, 0), Point<2>(3, P), {6, 2 * P}, 1);
      },
      "make it with tpmg::dealii::make_slab_triangulation()");
    // the same mesh made by hand works on p4est's partition (the bridge
    // moves the values; t905-bridge-partition checks the results)
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  const unsigned int P = Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD);
  try
    {
      check_solves<2>({{3, 2 * P}, Point<2>(0, 0), Point<2>(1.5, P), 3}, 3);
      check_solves<2>({{2, 4 * P}, Point<2>(0.5, -1), Point<2>(1.5, 1), 2}, 2);
      // tpmg keeps level 0 whole (its hidden level below has P cells along
      // y): the bridge gathers it for the coarse solve
      check_solves<2>({{2, 2 * P}, Point<2>(0, 0), Point<2>(1, P), 3}, 4);
      check_solves<3>({{2, 2, 2 * P}, Point<3>(0, 0, 0), Point<3>(1, 1, P), 2},
                      3);
      check_solves<3>(
        {{1, 2, 2 * P}, Point<3>(0, 0, 0), Point<3>(1, 2, 2 * P), 2}, 2);
      if (P > 1)
        check_refusals();
    }
  catch (const std::exception &e)
    {
      std::cerr << "exception: " << e.what() << std::endl;
      return 1;
    }
  return bridge_test::result();
}
