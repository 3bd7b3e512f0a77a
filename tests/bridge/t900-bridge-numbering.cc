/* The deal.II bridge: lexicographic renumbering of the active and level DoFs,
 * boundary indices and prolongation against the core (Hierarchy::cross_check),
 * and refusal of what tpmg does not support. */
#include <deal.II/base/index_set.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_dgq.h>
#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping_q1.h>

#include <deal.II/grid/grid_tools.h>

#include <deal.II/multigrid/mg_constrained_dofs.h>

#include <tpmg/dealii/context.h>
#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/renumbering.h>

#include "bridge-test.h"

#include <algorithm>
#include <map>

using namespace dealii;

namespace
{
  /**
   * The lexicographic index of a support point, found from its coordinates
   * alone: the cell it lies in, and which Gauss-Lobatto point of that cell.
   */
  template <int dim>
  types::global_dof_index
  index_of_point(const Point<dim>   &p,
                 const Point<dim>   &lower,
                 const Point<dim>   &upper,
                 const unsigned int *n_cells,
                 const unsigned int  k)
  {
    const QGaussLobatto<1>  nodes(k + 1);
    types::global_dof_index index = 0;
    for (int d = dim - 1; d >= 0; --d)
      {
        const double       h = (upper[d] - lower[d]) / n_cells[d];
        const double       t = (p[d] - lower[d]) / h;
        const unsigned int cell =
          std::min<unsigned int>(static_cast<unsigned int>(t + 1e-9),
                                 n_cells[d] - 1);
        const double local = t - cell;
        unsigned int best  = 0;
        for (unsigned int a = 1; a <= k; ++a)
          if (std::abs(nodes.point(a)[0] - local) <
              std::abs(nodes.point(best)[0] - local))
            best = a;
        index = index * (n_cells[d] * k + 1) + cell * k + best;
      }
    return index;
  }



  /**
   * Renumber on a parallel::distributed mesh (one rank) and check the active
   * and every level numbering independently from support points, the
   * boundary indices against the core's level sizes, and cross_check().
   */
  template <int dim>
  void
  check_numbering(const unsigned int k)
  {
    parallel::distributed::Triangulation<dim> tria(
      MPI_COMM_WORLD,
      Triangulation<dim>::limit_level_difference_at_vertices,
      parallel::distributed::Triangulation<dim>::construct_multigrid_hierarchy);
    const std::vector<unsigned int> cells =
      dim == 2 ? std::vector<unsigned int>{2, 3} :
                 std::vector<unsigned int>{1, 2, 1};
    Point<dim> lower, upper;
    for (unsigned int d = 0; d < dim; ++d)
      {
        lower[d] = d == 1 ? -1.0 : 0.0;
        upper[d] = d == 0 ? 2.0 : 0.5;
      }
    const unsigned int refinements = dim == 2 ? 2 : (k <= 2 ? 2 : 1);
    bridge_test::make_mesh(tria, cells, lower, upper, refinements);

    const FE_Q<dim> fe(k);
    DoFHandler<dim> dof_handler(tria);
    dof_handler.distribute_dofs(fe);
    dof_handler.distribute_mg_dofs();
    tpmg::dealii::renumber_lexicographic(dof_handler);
    const std::string what = std::to_string(dim) + "D Q" + std::to_string(k);

    // active DoFs, from deal.II's support points
#if DEAL_II_VERSION_GTE(9, 6, 0)
    // the form with the map as an argument is deprecated from deal.II 9.6 on
    const std::map<types::global_dof_index, Point<dim>> points =
      DoFTools::map_dofs_to_support_points(MappingQ1<dim>(), dof_handler);
#else
    std::map<types::global_dof_index, Point<dim>> points;
    DoFTools::map_dofs_to_support_points(MappingQ1<dim>(), dof_handler, points);
#endif
    unsigned int n_cells[dim];
    for (unsigned int d = 0; d < dim; ++d)
      n_cells[d] = cells[d] << refinements;
    unsigned int n_wrong = 0;
    for (const auto &[index, point] : points)
      n_wrong += index != index_of_point(point, lower, upper, n_cells, k);
    BRIDGE_CHECK(n_wrong == 0 && points.size() == dof_handler.n_dofs(),
                 what << ": " << n_wrong << " of " << dof_handler.n_dofs()
                      << " active DoFs are not lexicographic");

    // level DoFs, from the support points of the level cells
    const MappingQ1<dim>                 mapping;
    std::vector<types::global_dof_index> indices(fe.n_dofs_per_cell());
    for (unsigned int level = 0; level <= refinements; ++level)
      {
        for (unsigned int d = 0; d < dim; ++d)
          n_cells[d] = cells[d] << level;
        n_wrong = 0;
        for (const auto &cell : dof_handler.mg_cell_iterators_on_level(level))
          {
            cell->get_mg_dof_indices(indices);
            for (unsigned int i = 0; i < indices.size(); ++i)
              n_wrong +=
                indices[i] !=
                index_of_point(mapping.transform_unit_to_real_cell(
                                 cell, fe.get_unit_support_points()[i]),
                               lower,
                               upper,
                               n_cells,
                               k);
          }
        BRIDGE_CHECK(n_wrong == 0,
                     what << ", level " << level << ": " << n_wrong
                          << " DoF indices on cells are not lexicographic");
        BRIDGE_CHECK(tpmg::dealii::is_lexicographic(dof_handler, level),
                     what << ", level " << level
                          << ": is_lexicographic() is false");
      }

    // boundary indices of MGConstrainedDoFs, made after renumbering, are the
    // DoFs with an index 0 or N_d - 1 in the core's level sizes
    MGConstrainedDoFs mg_constrained_dofs;
    mg_constrained_dofs.initialize(dof_handler);
    mg_constrained_dofs.make_zero_boundary_constraints(dof_handler, {0});
    tpmg::dealii::Context        context;
    tpmg::dealii::Hierarchy<dim> hierarchy(dof_handler, context);
    for (unsigned int level = 0; level <= refinements; ++level)
      {
        tpmg_index n_dofs = 0, n_1d[3] = {1, 1, 1};
        BRIDGE_CHECK(tpmg_grid_level_size(hierarchy.get_grid(),
                                          level,
                                          &n_dofs,
                                          n_1d) == TPMG_SUCCESS,
                     what << ": tpmg_grid_level_size failed");
        BRIDGE_CHECK(static_cast<types::global_dof_index>(n_dofs) ==
                       dof_handler.n_dofs(level),
                     what << ", level " << level << ": tpmg has " << n_dofs
                          << " DoFs, deal.II " << dof_handler.n_dofs(level));
        IndexSet expected(n_dofs);
        for (tpmg_index i = 0; i < n_dofs; ++i)
          {
            const tpmg_index point[3] = {i % n_1d[0],
                                         i / n_1d[0] % n_1d[1],
                                         i / n_1d[0] / n_1d[1]};
            bool             boundary = false;
            for (int d = 0; d < dim; ++d)
              boundary |= point[d] == 0 || point[d] == n_1d[d] - 1;
            if (boundary)
              expected.add_index(i);
          }
        BRIDGE_CHECK(
          expected == mg_constrained_dofs.get_boundary_indices(level),
          what << ", level " << level << ": " << expected.n_elements()
               << " core boundary DoFs, deal.II has "
               << mg_constrained_dofs.get_boundary_indices(level).n_elements()
               << " other ones");
      }
    try
      {
        hierarchy.cross_check(mg_constrained_dofs);
      }
    catch (const std::exception &e)
      {
        BRIDGE_CHECK(false, what << ": cross_check threw " << e.what());
      }
    BRIDGE_CHECK(hierarchy.n_dofs() == dof_handler.n_dofs() &&
                   hierarchy.min_level() == 0 &&
                   hierarchy.max_level() == refinements &&
                   hierarchy.get_level_partitioners().size() == refinements + 1,
                 what << ": hierarchy sizes");

    // a hierarchy whose coarse level is deal.II's level 1
    if (refinements >= 2)
      {
        tpmg::dealii::Hierarchy<dim> upper_hierarchy(dof_handler, context, 1);
        BRIDGE_CHECK(upper_hierarchy.tpmg_level(refinements) ==
                         static_cast<int>(refinements) - 1 &&
                       upper_hierarchy.get_grid_options().cells[0] ==
                         static_cast<int>(2 * cells[0]),
                     what << ": a hierarchy from level 1");
        try
          {
            upper_hierarchy.cross_check(mg_constrained_dofs);
          }
        catch (const std::exception &e)
          {
            BRIDGE_CHECK(false,
                         what << ": cross_check from level 1 threw "
                              << e.what());
          }
      }
  }



  /** MGConstrainedDoFs made before renumbering do not pass cross_check(). */
  void
  check_stale_constraints()
  {
    Triangulation<2> tria(Triangulation<2>::limit_level_difference_at_vertices);
    bridge_test::make_mesh(tria, {2, 2}, Point<2>(0, 0), Point<2>(1, 1), 2);
    const FE_Q<2> fe(2);
    DoFHandler<2> dof_handler(tria);
    dof_handler.distribute_dofs(fe);
    dof_handler.distribute_mg_dofs();
    MGConstrainedDoFs mg_constrained_dofs;
    mg_constrained_dofs.initialize(dof_handler);
    mg_constrained_dofs.make_zero_boundary_constraints(dof_handler, {0});
    tpmg::dealii::renumber_lexicographic(dof_handler);
    tpmg::dealii::Context      context;
    tpmg::dealii::Hierarchy<2> hierarchy(dof_handler, context);
    BRIDGE_CHECK_THROWS(
      hierarchy.cross_check(mg_constrained_dofs),
      tpmg::dealii::ExcHierarchyMismatch,
      "initialize MGConstrainedDoFs after renumber_lexicographic()");

    // without renumbering, the hierarchy is refused
    DoFHandler<2> plain(tria);
    plain.distribute_dofs(fe);
    BRIDGE_CHECK_THROWS((tpmg::dealii::Hierarchy<2>{plain, context}),
                        tpmg::dealii::ExcHierarchyMismatch,
                        "renumber_lexicographic()");
  }



  /** renumber_lexicographic() on @p fe and @p tria throws naming @p part. */
  template <int dim>
  void
  check_refused(Triangulation<dim>       &tria,
                const FiniteElement<dim> &fe,
                const std::string        &part)
  {
    DoFHandler<dim> dof_handler(tria);
    dof_handler.distribute_dofs(fe);
    BRIDGE_CHECK_THROWS(tpmg::dealii::renumber_lexicographic(dof_handler),
                        tpmg::dealii::ExcUnsupported,
                        part);
  }



  void
  check_unsupported()
  {
    {
      Triangulation<2> tria;
      bridge_test::make_mesh(tria, {1, 1}, Point<2>(0, 0), Point<2>(1, 1), 2);
      check_refused(tria, FE_DGQ<2>(2), "FE_DGQ");
      check_refused(tria, FESystem<2>(FE_Q<2>(2), 2), "system element");
      check_refused(tria, FE_Q<2>(11), "degree 11");
      check_refused(tria,
                    FE_Q<2>(QIterated<1>(QTrapezoid<1>(), 3)),
                    "Gauss-Lobatto");
    }
    {
      Triangulation<3> tria;
      bridge_test::make_mesh(
        tria, {1, 1, 1}, Point<3>(0, 0, 0), Point<3>(1, 1, 1), 1);
      check_refused(tria, FE_Q<3>(9), "degree 9");
    }
    {
      // hanging nodes: one cell refined once more
      Triangulation<2> tria;
      bridge_test::make_mesh(tria, {1, 1}, Point<2>(0, 0), Point<2>(1, 1), 1);
      tria.begin_active()->set_refine_flag();
      tria.execute_coarsening_and_refinement();
      check_refused(tria, FE_Q<2>(2), "hanging nodes");
    }
    {
      // distorted interior vertices
      Triangulation<2> tria;
      bridge_test::make_mesh(tria, {1, 1}, Point<2>(0, 0), Point<2>(1, 1), 2);
      GridTools::distort_random(0.2, tria, true, 42);
      check_refused(tria, FE_Q<2>(2), "distorted");
    }
    {
      Triangulation<3> tria;
      bridge_test::make_mesh(
        tria, {2, 1, 1}, Point<3>(0, 0, 0), Point<3>(2, 1, 1), 2);
      GridTools::distort_random(0.1, tria, true, 7);
      check_refused(tria, FE_Q<3>(1), "distorted");
    }
    {
      Triangulation<2> tria;
      GridGenerator::hyper_cube(tria);
      check_refused(tria, FE_Q<2>(1), "unrefined mesh");
    }
    {
      // a coarse level beyond tpmg's dense direct solver (4761 interior DoFs,
      // TPMG_MAX_COARSE_DOFS 4096) is taken: tpmg solves the bottom level
      // with hidden levels below it and on the host above that size
      Triangulation<2> tria;
      bridge_test::make_mesh(tria, {70, 70}, Point<2>(0, 0), Point<2>(1, 1), 1);
      const FE_Q<2> fe(1);
      DoFHandler<2> dof_handler(tria);
      dof_handler.distribute_dofs(fe);
      tpmg::dealii::renumber_lexicographic(dof_handler);
      tpmg::dealii::Context            context;
      const tpmg::dealii::Hierarchy<2> hierarchy(dof_handler, context);
      BRIDGE_CHECK(hierarchy.n_dofs() == dof_handler.n_dofs(),
                   "a 70 x 70 coarse mesh: the hierarchy has "
                     << hierarchy.n_dofs() << " DoFs, deal.II "
                     << dof_handler.n_dofs());
    }
    if (!tpmg::dealii::Context::is_available("cuda"))
      BRIDGE_CHECK_THROWS(tpmg::dealii::Context{"cuda"},
                          tpmg::dealii::ExcTpmgError,
                          "backend cuda");
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  try
    {
      for (unsigned int k = 1; k <= 4; ++k)
        {
          check_numbering<2>(k);
          check_numbering<3>(k);
        }
      check_stale_constraints();
      check_unsupported();
    }
  catch (const std::exception &e)
    {
      std::cerr << "unexpected exception: " << e.what() << std::endl;
      return 1;
    }
  return bridge_test::result();
}
