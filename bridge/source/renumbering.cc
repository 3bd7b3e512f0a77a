/* The deal.II bridge of tpmg: what tpmg supports, and tpmg's DoF numbering. */
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/distributed/tria.h>
#include <deal.II/distributed/tria_base.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>

#include <tpmg/dealii/renumbering.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
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



    template <int dim>
    MPI_Comm
    communicator_of(const Triangulation<dim> &tria)
    {
      // get_communicator() is deprecated in deal.II 9.7
#if DEAL_II_VERSION_GTE(9, 7, 0)
      return tria.get_mpi_communicator();
#else
      return tria.get_communicator();
#endif
    }



    /** The ranks of @p tria's communicator (1 without MPI). */
    template <int dim>
    unsigned int
    n_ranks_of(const Triangulation<dim> &tria)
    {
      return Utilities::MPI::job_supports_mpi() ?
               Utilities::MPI::n_mpi_processes(communicator_of(tria)) :
               1;
    }



    /**
     * Run @p check, which throws ExcUnsupported where something is
     * unsupported, on every rank of @p comm (collective): if it throws on any
     * rank, every rank throws ExcUnsupported with the message of the lowest
     * failing rank, prefixed "rank R of P: ", so that no rank goes on into a
     * collective call that another rank left.
     */
    template <typename Check>
    void
    check_collectively(const MPI_Comm comm, const Check &check)
    {
      std::string message;
      bool        failed = false;
      try
        {
          check();
        }
      catch (const ExcUnsupported &e)
        {
          failed  = true;
          message = e.get_message();
        }
      const unsigned int n_ranks = Utilities::MPI::job_supports_mpi() ?
                                     Utilities::MPI::n_mpi_processes(comm) :
                                     1;
      if (n_ranks == 1)
        {
          AssertThrow(!failed, ExcUnsupported(message));
          return;
        }
      const unsigned int rank = Utilities::MPI::this_mpi_process(comm);
      const unsigned int first =
        Utilities::MPI::min(failed ? rank : n_ranks, comm);
      if (first == n_ranks)
        return;
      message = Utilities::MPI::broadcast(comm, message, first);
      AssertThrow(false,
                  ExcUnsupported("rank " + std::to_string(first) + " of " +
                                 std::to_string(n_ranks) + ": " + message));
    }



    /** Whether @p tria keeps its level cells' owners (multigrid levels). */
    template <int dim>
    bool
    has_level_owners(const Triangulation<dim> &tria)
    {
      const auto *parallel =
        dynamic_cast<const parallel::TriangulationBase<dim> *>(&tria);
      return parallel == nullptr ||
             parallel->is_multilevel_hierarchy_constructed();
    }



    /**
     * The coarse cells along the last direction that tpmg needs for P ranks,
     * and what to change otherwise: the advice of every refusal of a
     * partition.
     */
    std::string
    slab_advice(const unsigned int  dim,
                const unsigned int *n_cells,
                const unsigned int  n_ranks)
    {
      unsigned int widest = 1;
      for (unsigned int d = 0; d + 1 < dim; ++d)
        widest = std::max(widest, n_cells[d]);
      // the smallest m = 2^a >= 2 with 2^(a + 1) >= the widest direction
      unsigned int m = 2;
      while (2 * m < widest)
        m *= 2;
      const std::string axis = dim == 2 ? "y" : "z";
      return "tpmg on " + std::to_string(n_ranks) +
             " ranks needs each rank to own a slab of whole coarse cells "
             "along the last direction (" +
             axis +
             ") and all their children on every level; p4est hands the "
             "ranks whole coarse cells in deal.II's coarse-cell order "
             "(SparsityTools::reorder_hierarchical), which cuts such slabs "
             "where the coarse mesh has n = m P cells along " +
             axis + " with m a multiple of " + std::to_string(m) +
             " (the smallest power of two 2^a >= 2 with 2^(a+1) >= the " +
             std::to_string(widest) +
             " coarse cells along the other directions): make it with "
             "tpmg::dealii::make_slab_triangulation() from such "
             "repetitions, refined globally";
    }



    /**
     * Check that this rank's cells on every level (active cells and, where
     * the triangulation keeps level owners, level cells) are exactly its
     * slab: the coarse cells [r n_z / P, (r + 1) n_z / P) along the last
     * direction and their children. Throws ExcUnsupported otherwise.
     */
    template <int dim>
    void
    check_slabs(const Triangulation<dim>   &tria,
                const MeshDescription<dim> &mesh,
                const unsigned int          rank,
                const unsigned int          n_ranks)
    {
      const unsigned int n_z = mesh.n_cells[dim - 1];
      AssertThrow(n_z % n_ranks == 0 && n_z / n_ranks >= 2,
                  ExcUnsupported("a coarse mesh of " + std::to_string(n_z) +
                                 " cells along the last direction on " +
                                 std::to_string(n_ranks) + " ranks: " +
                                 slab_advice(dim, mesh.n_cells, n_ranks)));
      const bool levels = has_level_owners(tria);
      for (unsigned int l = levels ? 0 : mesh.n_refinements;
           l <= mesh.n_refinements + 1;
           ++l)
        {
          // l = n_refinements + 1: the active cells
          const bool         active = l > mesh.n_refinements;
          const unsigned int level  = active ? mesh.n_refinements : l;
          const double       h_z =
            (mesh.upper[dim - 1] - mesh.lower[dim - 1]) / (n_z << level);
          const long first = static_cast<long>(n_z / n_ranks * rank) << level;
          const long end   = static_cast<long>(n_z / n_ranks * (rank + 1))
                           << level;
          std::size_t n_expected = end - first, n_owned = 0;
          for (unsigned int d = 0; d + 1 < dim; ++d)
            n_expected *= mesh.n_cells[d] << level;
          const std::string what = active ? std::string("the active cells") :
                                            "level " + std::to_string(level);
          for (const auto &cell : tria.cell_iterators_on_level(level))
            if (active ? (cell->is_active() && cell->is_locally_owned()) :
                         cell->is_locally_owned_on_level())
              {
                const long i = std::lround(
                  (cell->vertex(0)[dim - 1] - mesh.lower[dim - 1]) / h_z);
                AssertThrow(i >= first && i < end,
                            ExcUnsupported(
                              what + " of this rank include cell " +
                              cell->id().to_string() + " at " +
                              point_string(cell->vertex(0)) +
                              ", outside its slab of cells " +
                              std::to_string(first) + ".." +
                              std::to_string(end - 1) +
                              " along the last direction: " +
                              slab_advice(dim, mesh.n_cells, n_ranks)));
                ++n_owned;
              }
          AssertThrow(n_owned == n_expected,
                      ExcUnsupported(what + " of this rank are " +
                                     std::to_string(n_owned) +
                                     " cells, where its slab has " +
                                     std::to_string(n_expected) + ": " +
                                     slab_advice(dim, mesh.n_cells, n_ranks)));
        }
    }



    /**
     * Check that every cell of @p level lies on the lattice of the box
     * refined @p level times: axis-parallel, of the lattice's cell size,
     * vertices in deal.II's standard order, and that the level has all the
     * lattice's cells.
     */
    /**
     * Whether @p cell of @p level is one that this rank checks: on one rank
     * every cell, on P ranks the ones it owns on the level (on the finest
     * level its active cells where deal.II keeps no level owners), and on
     * level 0, which every rank keeps whole, every cell.
     */
    template <int dim, typename Iterator>
    bool
    is_checked(const Triangulation<dim> &tria,
               const unsigned int        level,
               const Iterator           &cell)
    {
      if (n_ranks_of(tria) == 1 || level == 0)
        return true;
      if (has_level_owners(tria))
        return cell->is_locally_owned_on_level();
      return cell->is_active() && cell->is_locally_owned();
    }



    /**
     * The cells of every level 0..n_refinements that the ranks check
     * (is_checked()), summed over the ranks (collective, never throws).
     */
    template <int dim>
    std::vector<std::size_t>
    checked_cells(const Triangulation<dim> &tria,
                  const unsigned int        n_refinements)
    {
      std::vector<std::size_t> counts(n_refinements + 1, 0);
      for (unsigned int level = 0; level <= n_refinements; ++level)
        for (const auto &cell : tria.cell_iterators_on_level(level))
          counts[level] += is_checked(tria, level, cell);
      if (n_ranks_of(tria) > 1)
        {
          std::vector<std::size_t> local = counts;
          Utilities::MPI::sum(local, communicator_of(tria), counts);
          // level 0 is whole on every rank
          counts[0] = local[0];
        }
      return counts;
    }



    template <int dim>
    void
    check_level_lattice(const Triangulation<dim>   &tria,
                        const MeshDescription<dim> &mesh,
                        const unsigned int          level,
                        const std::size_t           n_counted)
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
      // level cells whose owners deal.II does not keep are not checked
      if (n_ranks_of(tria) > 1 && level > 0 && level < mesh.n_refinements &&
          !has_level_owners(tria))
        return;
      const bool all = n_ranks_of(tria) == 1 || level == 0;
      AssertThrow(n_counted == n_expected,
                  ExcUnsupported(
                    "level " + std::to_string(level) + " has " +
                    std::to_string(n_counted) + " cells where a " +
                    "globally refined subdivided_hyper_rectangle has " +
                    std::to_string(n_expected)));

      std::vector<bool> seen(all ? n_expected : 0, false);
      for (const auto &cell : tria.cell_iterators_on_level(level))
        {
          if (!is_checked(tria, level, cell))
            continue;
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
          if (all)
            {
              AssertThrow(!seen[position],
                          ExcUnsupported(
                            "two cells of level " + std::to_string(level) +
                            " overlap at " + point_string(origin)));
              seen[position] = true;
            }
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



    /** lexicographic_numbers(): the new numbers, and whether they are the
     * current ones. */
    struct Numbering
    {
      /** The lexicographic index of each locally owned DoF, in the order of
       * the locally owned index set (what DoFHandler::renumber_dofs takes). */
      std::vector<types::global_dof_index> new_numbers;
      /** Whether the DoFs are numbered as renumber_lexicographic() numbers
       * them: this rank's owned DoFs contiguous, in increasing lexicographic
       * order (on one rank: every DoF's index is its lexicographic index). */
      bool is_tpmg_order = true;
    };



    /**
     * The lexicographic index of every locally owned DoF of @p level (active
     * DoFs for numbers::invalid_unsigned_int), from the positions of this
     * rank's cells on the lattice (on one rank: every DoF and every cell).
     * Throws if cells disagree. Not collective.
     */
    template <int dim>
    Numbering
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

      const IndexSet &owned = active ? dof_handler.locally_owned_dofs() :
                                       dof_handler.locally_owned_mg_dofs(level);
      const types::global_dof_index unset = numbers::invalid_dof_index;
      Numbering                     numbering;
      numbering.new_numbers.assign(owned.n_elements(), unset);
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
            if (!owned.is_element(indices[i]))
              continue;
            types::global_dof_index &number =
              numbering.new_numbers[owned.index_within_set(indices[i])];
            AssertThrow(number == unset || number == index,
                        ExcUnsupported(
                          "DoF " + std::to_string(indices[i]) +
                          " sits at two lattice points: a DoFHandler whose "
                          "cells do not share DoFs like a conforming FE_Q"));
            number = index;
          }
      };
      // a rank's DoFs lie on its own cells
      if (active)
        {
          for (const auto &cell : dof_handler.active_cell_iterators())
            if (cell->is_locally_owned())
              number_cell(cell);
        }
      else
        for (const auto &cell : dof_handler.mg_cell_iterators_on_level(level))
          if (cell->is_locally_owned_on_level())
            number_cell(cell);

      numbering.is_tpmg_order =
        owned.is_contiguous() &&
        std::adjacent_find(numbering.new_numbers.begin(),
                           numbering.new_numbers.end(),
                           std::greater_equal<types::global_dof_index>()) ==
          numbering.new_numbers.end();
      std::vector<types::global_dof_index> sorted = numbering.new_numbers;
      std::sort(sorted.begin(), sorted.end());
      AssertThrow(std::adjacent_find(sorted.begin(), sorted.end()) ==
                      sorted.end() &&
                    (sorted.empty() || sorted.back() != unset),
                  ExcUnsupported("DoFs that no cell or two DoFs that "
                                 "one lattice point holds"));
      return numbering;
    }

    /**
     * The new numbers of this rank's owned DoFs from their lexicographic
     * indices @p lexicographic: the ranks' owned DoFs contiguous in rank
     * order, each rank's in increasing lexicographic order. Where the
     * partition is tpmg's slabs, these are the lexicographic indices.
     * Collective.
     */
    std::vector<types::global_dof_index>
    rank_ordered(const std::vector<types::global_dof_index> &lexicographic,
                 const MPI_Comm                               comm)
    {
      unsigned long long offset = 0;
      if (Utilities::MPI::job_supports_mpi() &&
          Utilities::MPI::n_mpi_processes(comm) > 1)
        {
          const unsigned long long n_owned = lexicographic.size();
          const int ierr                   = MPI_Exscan(
            &n_owned, &offset, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
          AssertThrow(ierr == MPI_SUCCESS, ::dealii::ExcMPI(ierr));
          if (Utilities::MPI::this_mpi_process(comm) == 0)
            offset = 0;
        }
      std::vector<std::size_t> order(lexicographic.size());
      for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
      std::sort(order.begin(), order.end(), [&](const auto a, const auto b) {
        return lexicographic[a] < lexicographic[b];
      });
      std::vector<types::global_dof_index> numbers(lexicographic.size());
      for (std::size_t j = 0; j < order.size(); ++j)
        numbers[order[j]] = offset + j;
      return numbers;
    }
  } // namespace



  template <int dim>
  MeshDescription<dim>
  check_supported(const DoFHandler<dim> &dof_handler)
  {
    const Triangulation<dim> &tria = dof_handler.get_triangulation();

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
    // has_hanging_nodes() is collective on a distributed triangulation
    AssertThrow(!tria.has_hanging_nodes(),
                ExcUnsupported("a mesh with hanging nodes: tpmg needs global "
                               "refinement"));
    check_collectively(communicator_of(tria), [&]() {
      for (const auto &cell : tria.active_cell_iterators())
        AssertThrow(!cell->is_locally_owned() ||
                      static_cast<unsigned int>(cell->level()) == L,
                    ExcUnsupported(
                      "a locally refined mesh (hanging nodes): active cell " +
                      cell->id().to_string() + " is on level " +
                      std::to_string(cell->level()) +
                      ", not on the finest level " + std::to_string(L) +
                      "; tpmg needs global refinement"));
    });

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
    // the lattice: checked by each rank on its cells, refused on every rank
    // if one rank finds a difference; any partition of the cells is taken
    const std::vector<std::size_t> n_checked = checked_cells(tria, L);
    check_collectively(communicator_of(tria), [&]() {
      for (unsigned int level = 0; level <= L; ++level)
        check_level_lattice(tria, mesh, level, n_checked[level]);
    });
    return mesh;
  }



  void
  internal::agree_on_mismatch(const MPI_Comm     comm,
                              const std::string &difference)
  {
    const unsigned int n_ranks = Utilities::MPI::job_supports_mpi() ?
                                   Utilities::MPI::n_mpi_processes(comm) :
                                   1;
    if (n_ranks == 1)
      {
        AssertThrow(difference.empty(), ExcHierarchyMismatch(difference));
        return;
      }
    const unsigned int rank = Utilities::MPI::this_mpi_process(comm);
    const unsigned int first =
      Utilities::MPI::min(difference.empty() ? n_ranks : rank, comm);
    if (first == n_ranks)
      return;
    AssertThrow(false,
                ExcHierarchyMismatch(
                  "rank " + std::to_string(first) + " of " +
                  std::to_string(n_ranks) + ": " +
                  Utilities::MPI::broadcast(comm, difference, first)));
  }



  template <int dim>
  void
  make_slab_triangulation(parallel::distributed::Triangulation<dim> &tria,
                          const Point<dim>                          &lower,
                          const Point<dim>                          &upper,
                          const std::vector<unsigned int> &repetitions,
                          const unsigned int               n_refinements)
  {
    const unsigned int n_ranks = n_ranks_of(tria);
    AssertThrow(repetitions.size() == dim,
                ExcUnsupported(std::to_string(repetitions.size()) +
                               " repetitions for a " + std::to_string(dim) +
                               "D mesh"));
    AssertThrow(n_ranks == 1 || tria.is_multilevel_hierarchy_constructed(),
                ExcUnsupported(
                  "a parallel::distributed::Triangulation without "
                  "construct_multigrid_hierarchy: deal.II's level DoFs and "
                  "tpmg's levels need it"));
    const unsigned int n_z = repetitions[dim - 1];
    AssertThrow(n_z % n_ranks == 0 && n_z / n_ranks >= 2,
                ExcUnsupported("a coarse mesh of " + std::to_string(n_z) +
                               " cells along the last direction on " +
                               std::to_string(n_ranks) + " ranks: " +
                               slab_advice(dim, repetitions.data(), n_ranks)));
    GridGenerator::subdivided_hyper_rectangle(tria, repetitions, lower, upper);
    tria.refine_global(n_refinements);
    if (n_ranks == 1)
      return;
    MeshDescription<dim> mesh;
    for (unsigned int d = 0; d < dim; ++d)
      {
        mesh.lower[d]   = lower[d];
        mesh.upper[d]   = upper[d];
        mesh.n_cells[d] = repetitions[d];
      }
    mesh.n_refinements = n_refinements;
    mesh.degree        = 1;
    check_collectively(communicator_of(tria), [&]() {
      check_slabs(tria,
                  mesh,
                  Utilities::MPI::this_mpi_process(communicator_of(tria)),
                  n_ranks);
    });
  }



  template <int dim>
  void
  renumber_lexicographic(DoFHandler<dim> &dof_handler)
  {
    const MeshDescription<dim> mesh = check_supported(dof_handler);
    const MPI_Comm comm = communicator_of(dof_handler.get_triangulation());
    // every rank computes all numberings before the first (collective)
    // renumber_dofs, so that a rank that throws leaves none waiting
    std::vector<Numbering> numberings(
      dof_handler.has_level_dofs() ? mesh.n_refinements + 2 : 1);
    check_collectively(comm, [&]() {
      numberings[0] =
        lexicographic_numbers(dof_handler, mesh, numbers::invalid_unsigned_int);
      for (unsigned int level = 0; level + 1 < numberings.size(); ++level)
        numberings[level + 1] = lexicographic_numbers(dof_handler, mesh, level);
    });
    for (Numbering &numbering : numberings)
      numbering.new_numbers = rank_ordered(numbering.new_numbers, comm);
    dof_handler.renumber_dofs(numberings[0].new_numbers);
    for (unsigned int level = 0; level + 1 < numberings.size(); ++level)
      dof_handler.renumber_dofs(level, numberings[level + 1].new_numbers);
  }



  template <int dim>
  bool
  internal::is_lexicographic(const DoFHandler<dim>      &dof_handler,
                             const MeshDescription<dim> &mesh,
                             const unsigned int          level)
  {
    const MPI_Comm comm = communicator_of(dof_handler.get_triangulation());
    Numbering      numbering;
    check_collectively(comm, [&]() {
      numbering = lexicographic_numbers(dof_handler, mesh, level);
    });
    if (n_ranks_of(dof_handler.get_triangulation()) == 1)
      return numbering.is_tpmg_order;
    return Utilities::MPI::min(numbering.is_tpmg_order ? 1u : 0u, comm) == 1;
  }



  template <int dim>
  std::vector<types::global_dof_index>
  internal::lexicographic_indices(const DoFHandler<dim>      &dof_handler,
                                  const MeshDescription<dim> &mesh,
                                  const unsigned int          level)
  {
    const MPI_Comm comm = communicator_of(dof_handler.get_triangulation());
    Numbering      numbering;
    check_collectively(comm, [&]() {
      numbering = lexicographic_numbers(dof_handler, mesh, level);
    });
    return numbering.is_tpmg_order ? std::move(numbering.new_numbers) :
                                     std::vector<types::global_dof_index>();
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
  make_slab_triangulation(parallel::distributed::Triangulation<2> &,
                          const Point<2> &,
                          const Point<2> &,
                          const std::vector<unsigned int> &,
                          const unsigned int);
  template void
  make_slab_triangulation(parallel::distributed::Triangulation<3> &,
                          const Point<3> &,
                          const Point<3> &,
                          const std::vector<unsigned int> &,
                          const unsigned int);
  template void
  renumber_lexicographic(DoFHandler<2> &);
  template void
  renumber_lexicographic(DoFHandler<3> &);
  template bool
  is_lexicographic(const DoFHandler<2> &, const unsigned int);
  template bool
  is_lexicographic(const DoFHandler<3> &, const unsigned int);
  template std::vector<types::global_dof_index>
  internal::lexicographic_indices(const DoFHandler<2> &,
                                  const MeshDescription<2> &,
                                  const unsigned int);
  template std::vector<types::global_dof_index>
  internal::lexicographic_indices(const DoFHandler<3> &,
                                  const MeshDescription<3> &,
                                  const unsigned int);
  template bool
  internal::is_lexicographic(const DoFHandler<2> &,
                             const MeshDescription<2> &,
                             const unsigned int);
  template bool
  internal::is_lexicographic(const DoFHandler<3> &,
                             const MeshDescription<3> &,
                             const unsigned int);
} // namespace tpmg::dealii
