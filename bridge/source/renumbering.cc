/* The deal.II bridge of tpmg: what tpmg supports, and tpmg's DoF numbering. */
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_q.h>

#include <deal.II/grid/tria.h>

#include <tpmg/dealii/renumbering.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

using namespace ::dealii;

namespace tpmg::dealii
{
  namespace
  {
    std::string
    point_string(const Point<2> &p)
    {
      std::ostringstream s;
      s << "(" << p[0] << ", " << p[1] << ")";
      return s.str();
    }

    std::string
    point_string(const Point<3> &p)
    {
      std::ostringstream s;
      s << "(" << p[0] << ", " << p[1] << ", " << p[2] << ")";
      return s.str();
    }



    /**
     * Check that every cell of @p level lies on the lattice of the box
     * refined @p level times: axis-parallel, of the lattice's cell size,
     * vertices in deal.II's standard order, and that the level has all the
     * lattice's cells.
     */
    template <int dim>
    void
    check_level_lattice(const Triangulation<dim>   &tria,
                        const MeshDescription<dim> &mesh,
                        const unsigned int          level)
    {
      double       h[dim];
      unsigned int n[dim];
      double       tolerance = 0;
      for (unsigned int d = 0; d < dim; ++d)
        {
          n[d]      = mesh.n_cells[d] << level;
          h[d]      = (mesh.upper[d] - mesh.lower[d]) / n[d];
          tolerance = std::max(tolerance, 1e-10 * h[d]);
        }
      std::size_t n_expected = 1;
      for (unsigned int d = 0; d < dim; ++d)
        n_expected *= n[d];
      AssertThrow(tria.n_cells(level) == n_expected,
                  ExcUnsupported(
                    "level " + std::to_string(level) + " has " +
                    std::to_string(tria.n_cells(level)) + " cells where a " +
                    "globally refined subdivided_hyper_rectangle has " +
                    std::to_string(n_expected)));

      std::vector<bool> seen(n_expected, false);
      for (const auto &cell : tria.cell_iterators_on_level(level))
        {
          const Point<dim> &origin   = cell->vertex(0);
          std::size_t       position = 0;
          for (int d = dim - 1; d >= 0; --d)
            {
              const double t = (origin[d] - mesh.lower[d]) / h[d];
              const long   i = std::lround(t);
              AssertThrow(std::abs(t - i) * h[d] <= tolerance && i >= 0 &&
                            i < static_cast<long>(n[d]),
                          ExcUnsupported(
                            "a distorted or curved mesh: cell " +
                            cell->id().to_string() + " of level " +
                            std::to_string(level) + " starts at " +
                            point_string(origin) +
                            ", off the axis-parallel lattice of a globally "
                            "refined subdivided_hyper_rectangle"));
              position = position * n[d] + i;
            }
          for (const unsigned int v : cell->vertex_indices())
            for (unsigned int d = 0; d < dim; ++d)
              {
                const double expected = origin[d] + ((v >> d) & 1) * h[d];
                AssertThrow(std::abs(cell->vertex(v)[d] - expected) <=
                              tolerance,
                            ExcUnsupported(
                              "a distorted, curved or rotated cell: vertex " +
                              std::to_string(v) + " of cell " +
                              cell->id().to_string() + " (level " +
                              std::to_string(level) + ") is at " +
                              point_string(cell->vertex(v)) +
                              ", not where an axis-parallel cell of size h = " +
                              std::to_string(h[d]) + " in direction " +
                              std::to_string(d) + " has it"));
              }
          AssertThrow(!seen[position],
                      ExcUnsupported("two cells of level " +
                                     std::to_string(level) + " overlap at " +
                                     point_string(origin)));
          seen[position] = true;
        }
    }



    /**
     * For each DoF of a cell, its position 0..k per direction on the cell's
     * Gauss-Lobatto lattice.
     */
    template <int dim>
    std::vector<std::array<unsigned int, dim>>
    local_lattice_positions(const FiniteElement<dim> &fe)
    {
      const unsigned int           k = fe.degree;
      const QGaussLobatto<1>       gauss_lobatto(k + 1);
      const std::vector<Point<1>> &nodes = gauss_lobatto.get_points();
      std::vector<std::array<unsigned int, dim>> positions(
        fe.n_dofs_per_cell());
      for (unsigned int i = 0; i < fe.n_dofs_per_cell(); ++i)
        for (unsigned int d = 0; d < dim; ++d)
          {
            const double x    = fe.get_unit_support_points()[i][d];
            unsigned int best = 0;
            for (unsigned int a = 1; a <= k; ++a)
              if (std::abs(nodes[a][0] - x) < std::abs(nodes[best][0] - x))
                best = a;
            positions[i][d] = best;
          }
      return positions;
    }



    /**
     * The lexicographic index of every DoF of @p level (active DoFs for
     * numbers::invalid_unsigned_int), indexed by its current number, from
     * the cells' positions on the lattice. Throws if cells disagree.
     */
    template <int dim>
    std::vector<types::global_dof_index>
    lexicographic_numbers(const DoFHandler<dim>      &dof_handler,
                          const MeshDescription<dim> &mesh,
                          const unsigned int          level)
    {
      const bool         active = level == numbers::invalid_unsigned_int;
      const unsigned int k      = mesh.degree;
      const unsigned int l      = active ? mesh.n_refinements : level;
      const auto positions      = local_lattice_positions(dof_handler.get_fe());
      AssertThrow(active || dof_handler.has_level_dofs(),
                  ExcUnsupported("level " + std::to_string(level) +
                                 " without level DoFs: call "
                                 "distribute_mg_dofs() first"));

      double                  h[dim];
      types::global_dof_index n_1d[dim], n_dofs = 1;
      for (unsigned int d = 0; d < dim; ++d)
        {
          h[d] = (mesh.upper[d] - mesh.lower[d]) / (mesh.n_cells[d] << l);
          n_1d[d] =
            (static_cast<types::global_dof_index>(mesh.n_cells[d]) << l) * k +
            1;
          n_dofs *= n_1d[d];
        }
      const types::global_dof_index n_numbered =
        active ? dof_handler.n_dofs() : dof_handler.n_dofs(level);
      AssertThrow(n_numbered == n_dofs,
                  ExcUnsupported(
                    std::string(active ? "the active DoFs" : "level ") +
                    (active ? "" : std::to_string(level)) + " number " +
                    std::to_string(n_numbered) + " DoFs where FE_Q(" +
                    std::to_string(k) + ") on the lattice has " +
                    std::to_string(n_dofs)));

      const types::global_dof_index        unset = numbers::invalid_dof_index;
      std::vector<types::global_dof_index> new_numbers(n_dofs, unset);
      std::vector<types::global_dof_index> indices(
        dof_handler.get_fe().n_dofs_per_cell());

      const auto number_cell = [&](const auto &cell) {
        if (active)
          cell->get_dof_indices(indices);
        else
          cell->get_mg_dof_indices(indices);
        types::global_dof_index first[dim];
        for (unsigned int d = 0; d < dim; ++d)
          first[d] =
            std::lround((cell->vertex(0)[d] - mesh.lower[d]) / h[d]) * k;
        for (unsigned int i = 0; i < indices.size(); ++i)
          {
            types::global_dof_index index = 0;
            for (int d = dim - 1; d >= 0; --d)
              index = index * n_1d[d] + first[d] + positions[i][d];
            types::global_dof_index &number = new_numbers[indices[i]];
            AssertThrow(number == unset || number == index,
                        ExcUnsupported(
                          "DoF " + std::to_string(indices[i]) +
                          " sits at two lattice points: a DoFHandler whose "
                          "cells do not share DoFs like a conforming FE_Q"));
            number = index;
          }
      };
      if (active)
        for (const auto &cell : dof_handler.active_cell_iterators())
          number_cell(cell);
      else
        for (const auto &cell : dof_handler.mg_cell_iterators_on_level(level))
          number_cell(cell);

      std::vector<bool> hit(n_dofs, false);
      for (const types::global_dof_index number : new_numbers)
        {
          AssertThrow(number != unset && !hit[number],
                      ExcUnsupported("DoFs that no cell or two DoFs that "
                                     "one lattice point holds"));
          hit[number] = true;
        }
      return new_numbers;
    }
  } // namespace



  template <int dim>
  MeshDescription<dim>
  check_supported(const DoFHandler<dim> &dof_handler)
  {
    const Triangulation<dim> &tria = dof_handler.get_triangulation();

    // get_communicator() is deprecated in deal.II 9.7
    const unsigned int n_ranks =
      Utilities::MPI::job_supports_mpi() ?
#if DEAL_II_VERSION_GTE(9, 7, 0)
        Utilities::MPI::n_mpi_processes(tria.get_mpi_communicator()) :
#else
        Utilities::MPI::n_mpi_processes(tria.get_communicator()) :
#endif
        1;
    AssertThrow(n_ranks == 1,
                ExcUnsupported(
                  "a Triangulation distributed over " +
                  std::to_string(n_ranks) +
                  " MPI ranks: the bridge runs on one rank until tpmg's "
                  "distributed version exists"));

    // the element
    AssertThrow(dof_handler.get_fe_collection().size() == 1,
                ExcUnsupported(
                  "an hp::FECollection of " +
                  std::to_string(dof_handler.get_fe_collection().size()) +
                  " elements: tpmg needs one FE_Q(k) everywhere"));
    const FiniteElement<dim> &fe = dof_handler.get_fe();
    AssertThrow(fe.n_components() == 1,
                ExcUnsupported("the element " + fe.get_name() + " with " +
                               std::to_string(fe.n_components()) +
                               " vector components: tpmg needs a scalar "
                               "FE_Q(k), not a system element"));
    AssertThrow(dynamic_cast<const FE_Q<dim> *>(&fe) != nullptr,
                ExcUnsupported("the element " + fe.get_name() +
                               ": tpmg needs the continuous Lagrange element "
                               "FE_Q(k) (FE_DGQ, FE_Q_DG0, FE_Q_iso_Q1, "
                               "FE_Q_Bubbles, simplex elements are not)"));
    const unsigned int k          = fe.degree;
    const unsigned int max_degree = dim == 2 ? 10 : 8;
    AssertThrow(k >= 1 && k <= max_degree,
                ExcUnsupported("the degree " + std::to_string(k) + " of " +
                               fe.get_name() + ": tpmg supports k = 1.." +
                               std::to_string(max_degree) + " in " +
                               std::to_string(dim) + "D"));
    {
      const QGaussLobatto<1>       gauss_lobatto(k + 1);
      const std::vector<Point<1>> &nodes = gauss_lobatto.get_points();
      for (const Point<dim> &p : fe.get_unit_support_points())
        for (unsigned int d = 0; d < dim; ++d)
          AssertThrow(std::any_of(nodes.begin(),
                                  nodes.end(),
                                  [&](const Point<1> &node) {
                                    return std::abs(node[0] - p[d]) < 1e-12;
                                  }),
                      ExcUnsupported(
                        "the element " + fe.get_name() +
                        ": its support points are not the Gauss-Lobatto "
                        "points tpmg's basis uses (FE_Q's default)"));
    }

    // the mesh
    AssertThrow(tria.n_global_levels() >= 2,
                ExcUnsupported("an unrefined mesh: tpmg's multigrid needs at "
                               "least one global refinement"));
    AssertThrow(tria.get_periodic_face_map().empty(),
                ExcUnsupported("periodic faces: tpmg solves with Dirichlet "
                               "conditions on the whole boundary"));
    const unsigned int L = tria.n_global_levels() - 1;
    for (const auto &cell : tria.active_cell_iterators())
      AssertThrow(static_cast<unsigned int>(cell->level()) == L,
                  ExcUnsupported(
                    "a locally refined mesh (hanging nodes): active cell " +
                    cell->id().to_string() + " is on level " +
                    std::to_string(cell->level()) +
                    ", not on the finest level " + std::to_string(L) +
                    "; tpmg needs global refinement"));
    AssertThrow(!tria.has_hanging_nodes(),
                ExcUnsupported("a mesh with hanging nodes: tpmg needs global "
                               "refinement"));

    MeshDescription<dim> mesh;
    mesh.n_refinements = L;
    mesh.degree        = k;
    // level 0: the box and its cell size from the first cell, then every
    // cell checked against that lattice
    const auto first = tria.begin(0);
    for (unsigned int d = 0; d < dim; ++d)
      {
        mesh.lower[d] = first->vertex(0)[d];
        mesh.upper[d] = first->vertex(0)[d];
      }
    for (const auto &cell : tria.cell_iterators_on_level(0))
      for (const unsigned int v : cell->vertex_indices())
        for (unsigned int d = 0; d < dim; ++d)
          {
            mesh.lower[d] = std::min(mesh.lower[d], cell->vertex(v)[d]);
            mesh.upper[d] = std::max(mesh.upper[d], cell->vertex(v)[d]);
          }
    for (unsigned int d = 0; d < dim; ++d)
      {
        const double h = first->vertex(1u << d)[d] - first->vertex(0)[d];
        AssertThrow(h > 0,
                    ExcUnsupported(
                      "coarse cell " + first->id().to_string() +
                      " is not in deal.II's standard orientation: vertex " +
                      std::to_string(1u << d) +
                      " does not follow vertex 0 in "
                      "direction " +
                      std::to_string(d)));
        const double n = (mesh.upper[d] - mesh.lower[d]) / h;
        AssertThrow(std::abs(n - std::lround(n)) < 1e-8 && std::lround(n) >= 1,
                    ExcUnsupported(
                      "coarse cells of different sizes (or distorted): the "
                      "box is " +
                      std::to_string(n) + " first cells wide in direction " +
                      std::to_string(d)));
        mesh.n_cells[d] = static_cast<unsigned int>(std::lround(n));
      }
    for (unsigned int level = 0; level <= L; ++level)
      check_level_lattice(tria, mesh, level);
    return mesh;
  }



  template <int dim>
  void
  renumber_lexicographic(DoFHandler<dim> &dof_handler)
  {
    const MeshDescription<dim> mesh = check_supported(dof_handler);
    dof_handler.renumber_dofs(
      lexicographic_numbers(dof_handler, mesh, numbers::invalid_unsigned_int));
    if (dof_handler.has_level_dofs())
      for (unsigned int level = 0; level <= mesh.n_refinements; ++level)
        dof_handler.renumber_dofs(
          level, lexicographic_numbers(dof_handler, mesh, level));
  }



  template <int dim>
  bool
  internal::is_lexicographic(const DoFHandler<dim>      &dof_handler,
                             const MeshDescription<dim> &mesh,
                             const unsigned int          level)
  {
    const std::vector<types::global_dof_index> new_numbers =
      lexicographic_numbers(dof_handler, mesh, level);
    for (types::global_dof_index i = 0; i < new_numbers.size(); ++i)
      if (new_numbers[i] != i)
        return false;
    return true;
  }



  template <int dim>
  bool
  is_lexicographic(const DoFHandler<dim> &dof_handler, const unsigned int level)
  {
    return internal::is_lexicographic(dof_handler,
                                      check_supported(dof_handler),
                                      level);
  }



  template MeshDescription<2>
  check_supported(const DoFHandler<2> &);
  template MeshDescription<3>
  check_supported(const DoFHandler<3> &);
  template void
  renumber_lexicographic(DoFHandler<2> &);
  template void
  renumber_lexicographic(DoFHandler<3> &);
  template bool
  is_lexicographic(const DoFHandler<2> &, const unsigned int);
  template bool
  is_lexicographic(const DoFHandler<3> &, const unsigned int);
  template bool
  internal::is_lexicographic(const DoFHandler<2> &,
                             const MeshDescription<2> &,
                             const unsigned int);
  template bool
  internal::is_lexicographic(const DoFHandler<3> &,
                             const MeshDescription<3> &,
                             const unsigned int);
} // namespace tpmg::dealii
