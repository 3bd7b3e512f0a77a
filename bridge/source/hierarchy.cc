/* The deal.II bridge of tpmg: the level hierarchy. */
#include <deal.II/base/index_set.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>

#include <deal.II/lac/full_matrix.h>

#include <deal.II/matrix_free/matrix_free.h>

#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/renumbering.h>

#include "redistribution.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace ::dealii;

namespace tpmg::dealii
{
  namespace
  {
    /** Lattice index per direction of the lexicographic @p index. */
    std::array<tpmg_index, 3>
    lattice_point(const tpmg_index index, const tpmg_index n_1d[3])
    {
      return {{index % n_1d[0],
               index / n_1d[0] % n_1d[1],
               index / n_1d[0] / n_1d[1]}};
    }

    bool
    on_boundary(const std::array<tpmg_index, 3> &i,
                const tpmg_index                 n_1d[3],
                const int                        dim)
    {
      for (int d = 0; d < dim; ++d)
        if (i[d] == 0 || i[d] == n_1d[d] - 1)
          return true;
      return false;
    }

    std::string
    lattice_string(const std::array<tpmg_index, 3> &i, const int dim)
    {
      std::string s = "(" + std::to_string(i[0]);
      for (int d = 1; d < dim; ++d)
        s += ", " + std::to_string(i[d]);
      return s + ")";
    }



    /**
     * The global 1D prolongation from a mesh of @p n_cells cells to its
     * refinement, assembled from FE_Q<1>(k)'s child prolongation matrices in
     * lexicographic numbering: (2 n_cells k + 1) x (n_cells k + 1), row-major.
     */
    std::vector<double>
    prolongation_1d(const unsigned int k, const tpmg_index n_cells)
    {
      const FE_Q<1>                fe(k);
      const std::vector<Point<1>> &support = fe.get_unit_support_points();
      std::vector<unsigned int>    position(k + 1);
      for (unsigned int i = 0; i <= k; ++i)
        position[i] =
          std::count_if(support.begin(), support.end(), [&](const Point<1> &p) {
            return p[0] < support[i][0];
          });
      const tpmg_index n_coarse = n_cells * k + 1, n_fine = 2 * n_cells * k + 1;
      std::vector<double> P(n_fine * n_coarse, 0.0);
      for (tpmg_index cell = 0; cell < n_cells; ++cell)
        for (unsigned int child = 0; child < 2; ++child)
          {
            const FullMatrix<double> &child_matrix =
              fe.get_prolongation_matrix(child);
            for (unsigned int i = 0; i <= k; ++i)
              for (unsigned int j = 0; j <= k; ++j)
                P[((2 * cell + child) * k + position[i]) * n_coarse + cell * k +
                  position[j]] = child_matrix(i, j);
          }
      return P;
    }
  } // namespace



  template <int dim>
  Hierarchy<dim>::Hierarchy(const DoFHandler<dim> &dof_handler,
                            Context               &context,
                            const unsigned int     min_level,
                            const double           reaction)
    : dof_handler(&dof_handler)
    , context(&context)
    , mesh(check_supported(dof_handler))
    , coarse_level(min_level)
    , grid_options(tpmg_grid_options_default())
    , grid(nullptr)
    , coefficient_set(false)
    , coefficient_layout(TPMG_COEFFICIENT_CELLS)
    , copied(false)
  {
    AssertThrow(min_level < mesh.n_refinements,
                ExcUnsupported(
                  "min_level " + std::to_string(min_level) +
                  " with the finest level " +
                  std::to_string(mesh.n_refinements) +
                  ": tpmg needs at least one level above its coarse level"));
    grid_options.dim        = dim;
    grid_options.degree     = mesh.degree;
    grid_options.fine_level = mesh.n_refinements - min_level;
    grid_options.reaction   = reaction;
    for (unsigned int d = 0; d < dim; ++d)
      {
        grid_options.cells[d]       = mesh.n_cells[d] << min_level;
        grid_options.box[2 * d]     = mesh.lower[d];
        grid_options.box[2 * d + 1] = mesh.upper[d];
      }
    const MPI_Comm     comm    = get_communicator();
    const unsigned int n_ranks = Utilities::MPI::job_supports_mpi() ?
                                   Utilities::MPI::n_mpi_processes(comm) :
                                   1;
    AssertThrow(context.n_ranks() == n_ranks,
                ExcUnsupported(
                  "a Context of " + std::to_string(context.n_ranks()) +
                  " ranks for a Triangulation on " + std::to_string(n_ranks) +
                  ": create the Context with the triangulation's communicator "
                  "(Context(communicator, backend))"));
    context.check(tpmg_grid_create(context.get(), &grid_options, &grid),
                  "tpmg_grid_create");

    // deal.II's owned DoFs of each level and tpmg's: the moves between them,
    // set up once; a level whose DoFs are not numbered by
    // renumber_lexicographic() gets none (cross_check() says so), the active
    // DoFs are refused
    const auto add_redistribution = [&](const unsigned int level,
                                        const IndexSet    &owned) {
      std::vector<types::global_dof_index> lexicographic =
        internal::lexicographic_indices(dof_handler, mesh, level);
      const bool numbered =
        Utilities::MPI::min(lexicographic.size() == owned.n_elements() ? 1u :
                                                                         0u,
                            comm) == 1;
      if (!numbered)
        return false;
      const tpmg_level_layout layout = get_layout(level);
      redistributions[level] =
        std::make_shared<const internal::Redistribution>(
          comm,
          std::move(lexicographic),
          owned.n_elements() > 0 ? *owned.begin() : 0,
          layout.owned_first * layout.plane,
          layout.owned_end * layout.plane,
          !layout.distributed && n_ranks > 1,
          static_cast<types::global_dof_index>(layout.n_global[0]) *
            layout.n_global[1] * layout.n_global[2]);
      return true;
    };
    AssertThrow(add_redistribution(numbers::invalid_unsigned_int,
                                   dof_handler.locally_owned_dofs()),
                ExcHierarchyMismatch(
                  "the active DoFs are not in tpmg's lexicographic order: call "
                  "renumber_lexicographic() after distributing the DoFs"));
    if (dof_handler.has_level_dofs())
      for (unsigned int level = min_level; level <= mesh.n_refinements; ++level)
        add_redistribution(level, dof_handler.locally_owned_mg_dofs(level));

    active_partitioner  = std::make_shared<const Utilities::MPI::Partitioner>(
      dof_handler.locally_owned_dofs(),
      DoFTools::extract_locally_relevant_dofs(dof_handler),
      comm);
    if (dof_handler.has_level_dofs())
      for (unsigned int level = 0; level <= mesh.n_refinements; ++level)
        level_partitioners.push_back(
          std::make_shared<const Utilities::MPI::Partitioner>(
            dof_handler.locally_owned_mg_dofs(level),
            DoFTools::extract_locally_relevant_level_dofs(dof_handler, level),
            comm));
  }



  template <int dim>
  Hierarchy<dim>::~Hierarchy()
  {
    tpmg_grid_destroy(&grid);
  }



  template <int dim>
  void
  Hierarchy<dim>::cross_check(
    const MGConstrainedDoFs &mg_constrained_dofs) const
  {
    AssertThrow(dof_handler->has_level_dofs(),
                ExcHierarchyMismatch("the DoFHandler has no level DoFs: call "
                                     "distribute_mg_dofs()"));
    AssertThrow(mg_constrained_dofs.have_boundary_indices(),
                ExcHierarchyMismatch(
                  "MGConstrainedDoFs has no boundary indices: call "
                  "make_zero_boundary_constraints() for every boundary id"));

    // collective first: whether every level is numbered lexicographically
    std::vector<bool> lexicographic(mesh.n_refinements + 1, true);
    for (unsigned int level = coarse_level; level <= mesh.n_refinements;
         ++level)
      lexicographic[level] =
        internal::is_lexicographic(*dof_handler, mesh, level);

    // then each rank on its owned DoFs, every rank throwing if one fails
    std::string difference;
    try
      {
        cross_check_levels(mg_constrained_dofs, lexicographic);
      }
    catch (const ExcHierarchyMismatch &e)
      {
        difference = e.get_message();
      }
    internal::agree_on_mismatch(get_communicator(), difference);
    if (context->n_ranks() > 1)
      {
        // the prolongation is the same on every partition: checked on a
        // grid of the same description on each rank alone (the same result
        // on every rank)
        Context self(MPI_COMM_SELF, context->backend(), context->n_threads());
        tpmg_grid *serial = nullptr;
        self.check(tpmg_grid_create(self.get(), &grid_options, &serial),
                   "tpmg_grid_create");
        try
          {
            cross_check_prolongation(self, serial);
          }
        catch (...)
          {
            tpmg_grid_destroy(&serial);
            throw;
          }
        tpmg_grid_destroy(&serial);
      }
    else
      cross_check_prolongation(*context, grid);
  }



  template <int dim>
  void
  Hierarchy<dim>::cross_check_levels(
    const MGConstrainedDoFs &mg_constrained_dofs,
    const std::vector<bool> &lexicographic) const
  {
    for (unsigned int level = coarse_level; level <= mesh.n_refinements;
         ++level)
      {
        const std::string where  = "level " + std::to_string(level) + ": ";
        const tpmg_level_layout layout  = get_layout(level);
        const tpmg_index        n_1d[3] = {layout.n_global[0],
                                           layout.n_global[1],
                                           layout.n_global[2]};
        const tpmg_index        n_dofs  = n_1d[0] * n_1d[1] * n_1d[2];
        AssertThrow(dof_handler->n_dofs(level) ==
                      static_cast<types::global_dof_index>(n_dofs),
                    ExcHierarchyMismatch(
                      where + "deal.II has " +
                      std::to_string(dof_handler->n_dofs(level)) +
                      " DoFs, tpmg " + std::to_string(n_dofs)));
        AssertThrow(lexicographic[level],
                    ExcHierarchyMismatch(
                      where + "the level DoFs are not in tpmg's lexicographic "
                              "order: call renumber_lexicographic() after "
                              "distribute_mg_dofs()"));
        // deal.II's owned DoFs and their lexicographic indices
        const IndexSet  &owned = dof_handler->locally_owned_mg_dofs(level);
        const tpmg_index owned_first =
          owned.n_elements() > 0 ? *owned.begin() : 0;
        const tpmg_index owned_end = owned_first + owned.n_elements();
        const internal::Redistribution &redistribution =
          *get_redistribution(level);

        // Dirichlet DoFs: exactly the DoFs with an index 0 or N_d - 1
        tpmg_index n_interior = 1;
        for (int d = 0; d < dim; ++d)
          n_interior *= n_1d[d] - 2;
        const IndexSet &boundary =
          mg_constrained_dofs.get_boundary_indices(level);
        tpmg_index n_owned_boundary = 0;
        for (const types::global_dof_index index : boundary)
          {
            if (static_cast<tpmg_index>(index) < owned_first ||
                static_cast<tpmg_index>(index) >= owned_end)
              continue;
            ++n_owned_boundary;
            const auto i = lattice_point(
              redistribution.lexicographic_index(index - owned_first), n_1d);
            AssertThrow(on_boundary(i, n_1d, dim),
                        ExcHierarchyMismatch(
                          where + "MGConstrainedDoFs has DoF " +
                          std::to_string(index) + " at lattice point " +
                          lattice_string(i, dim) +
                          " as a boundary index, which is not on the "
                          "boundary in tpmg's numbering: initialize "
                          "MGConstrainedDoFs after renumber_lexicographic()"));
          }
        if (owned_end - owned_first != n_dofs ||
            n_owned_boundary != n_dofs - n_interior)
          for (tpmg_index index = owned_first; index < owned_end; ++index)
            {
              const auto i = lattice_point(
                redistribution.lexicographic_index(index - owned_first), n_1d);
              AssertThrow(!on_boundary(i, n_1d, dim) ||
                            boundary.is_element(index),
                          ExcHierarchyMismatch(
                            where + "boundary DoF " + std::to_string(index) +
                            " at lattice point " + lattice_string(i, dim) +
                            " is not among MGConstrainedDoFs' boundary "
                            "indices: tpmg needs Dirichlet conditions on the "
                            "whole boundary (make_zero_boundary_constraints "
                            "for every boundary id)"));
            }
      }
  }



  template <int dim>
  void
  Hierarchy<dim>::cross_check_prolongation(Context   &context,
                                           tpmg_grid *grid) const
  {
    // The prolongation of the first level pair whose coarse level has at
    // least two cells per direction (so that the columns of vertex DoFs are
    // interior and visible), or the finest pair
    const int k          = mesh.degree;
    const int fine_level = std::min<int>(
      grid_options.fine_level,
      *std::min_element(grid_options.cells, grid_options.cells + dim) >= 2 ? 1 :
                                                                             2);
    tpmg_index n_coarse = 0, n_fine = 0, nc[3] = {1, 1, 1}, nf[3] = {1, 1, 1};
    context.check(tpmg_grid_level_size(grid, fine_level - 1, &n_coarse, nc),
                  "tpmg_grid_level_size");
    context.check(tpmg_grid_level_size(grid, fine_level, &n_fine, nf),
                  "tpmg_grid_level_size");
    for (int d = 0; d < dim; ++d)
      if (nc[d] < 3)
        return; // no interior coarse DoF: nothing is prolongated
    std::vector<std::vector<double>> P(dim);
    for (int d = 0; d < dim; ++d)
      P[d] = prolongation_1d(k, (nc[d] - 1) / k);

    tpmg_context  *ctx      = context.get();
    tpmg_transfer *transfer = nullptr;
    void          *coarse = nullptr, *fine = nullptr;
    std::string    difference;
    tpmg_status    status =
      tpmg_transfer_create(grid, fine_level, TPMG_DOUBLE, &transfer);
    if (status == TPMG_SUCCESS)
      status = tpmg_vector_create(ctx, TPMG_DOUBLE, n_coarse, &coarse);
    if (status == TPMG_SUCCESS)
      status = tpmg_vector_create(ctx, TPMG_DOUBLE, n_fine, &fine);
    std::vector<double> coarse_host(n_coarse), fine_host(n_fine);
    for (int d = 0; d < dim && status == TPMG_SUCCESS && difference.empty();
         ++d)
      for (tpmg_index j_d = 1; j_d <= std::min<tpmg_index>(nc[d] - 2, 2 * k) &&
                               status == TPMG_SUCCESS && difference.empty();
           ++j_d)
        {
          std::array<tpmg_index, 3> j = {{1, 1, 1}};
          if (dim == 2)
            j[2] = 0;
          j[d]                        = j_d;
          const tpmg_index unit_index = j[0] + nc[0] * (j[1] + nc[1] * j[2]);
          std::fill(coarse_host.begin(), coarse_host.end(), 0.0);
          coarse_host[unit_index] = 1.0;
          status                  = tpmg_vector_upload(
            ctx, TPMG_DOUBLE, n_coarse, coarse_host.data(), coarse);
          if (status == TPMG_SUCCESS)
            status = tpmg_vector_set(ctx, TPMG_DOUBLE, n_fine, 0.0, fine);
          if (status == TPMG_SUCCESS)
            status = tpmg_transfer_prolongate_add(transfer, coarse, fine);
          if (status == TPMG_SUCCESS)
            status = tpmg_vector_download(
              ctx, TPMG_DOUBLE, n_fine, fine, fine_host.data());
          for (tpmg_index index = 0; index < n_fine && status == TPMG_SUCCESS;
               ++index)
            {
              const auto i        = lattice_point(index, nf);
              double     expected = 0.0;
              if (!on_boundary(i, nf, dim))
                {
                  expected = 1.0;
                  for (int e = 0; e < dim; ++e)
                    expected *= P[e][i[e] * nc[e] + j[e]];
                }
              if (std::abs(fine_host[index] - expected) > 1e-12)
                {
                  difference = "tpmg's prolongation from level " +
                               std::to_string(coarse_level + fine_level - 1) +
                               " of the coarse DoF at lattice point " +
                               lattice_string(j, dim) + " has " +
                               std::to_string(fine_host[index]) +
                               " at the fine lattice point " +
                               lattice_string(i, dim) + ", FE_Q<1>(" +
                               std::to_string(k) +
                               ")'s prolongation matrices give " +
                               std::to_string(expected);
                  break;
                }
            }
        }
    const std::string message = tpmg_context_last_error(ctx);
    tpmg_vector_destroy(ctx, &fine);
    tpmg_vector_destroy(ctx, &coarse);
    tpmg_transfer_destroy(&transfer);
    AssertThrow(status == TPMG_SUCCESS,
                ExcTpmgError("tpmg_transfer_prolongate_add", status, message));
    AssertThrow(difference.empty(), ExcHierarchyMismatch(difference));
  }



  template <int dim>
  void
  Hierarchy<dim>::write_setup(
    const std::string                                &filename,
    const tpmg_rhs                                    rhs,
    const LinearAlgebra::distributed::Vector<double> *right_hand_side) const
  {
    const double       *b = nullptr;
    std::vector<double> box;
    if (right_hand_side != nullptr)
      {
        // tpmg takes this rank's box and writes its owned planes
        const tpmg_level_layout         layout = get_layout();
        const internal::Redistribution &redistribution = *get_redistribution();
        AssertThrow(right_hand_side->locally_owned_size() ==
                      redistribution.n_dealii(),
                    ExcUnsupported(
                      "a right-hand side with " +
                      std::to_string(right_hand_side->locally_owned_size()) +
                      " locally owned entries for " +
                      std::to_string(redistribution.n_dealii()) +
                      " active DoFs that this rank owns"));
        box.assign(layout.count * layout.plane, 0.0);
        redistribution.to_tpmg(right_hand_side->begin(),
                               box.data() +
                                 (redistribution.is_whole() ?
                                    0 :
                                    (layout.owned_first - layout.first) *
                                      layout.plane));
        b = box.data();
      }
    context->check(tpmg_setup_write(grid, rhs, b, filename.c_str()),
                   "tpmg_setup_write");
  }



  template <int dim>
  std::size_t
  Hierarchy<dim>::n_owned_cells() const
  {
    const tpmg_level_layout layout = get_layout();
    std::size_t             n      = layout.cell_end - layout.cell_first;
    for (unsigned int d = 0; d + 1 < dim; ++d)
      n *= static_cast<std::size_t>(grid_options.cells[d])
           << grid_options.fine_level;
    return n;
  }



  template <int dim>
  std::uint64_t
  Hierarchy<dim>::finest_cell_index(
    const typename Triangulation<dim>::cell_iterator &cell) const
  {
    const Point<dim> center = cell->center();
    std::uint64_t    index = 0, stride = 1;
    for (unsigned int d = 0; d < dim; ++d)
      {
        const tpmg_index n = static_cast<tpmg_index>(grid_options.cells[d])
                             << grid_options.fine_level;
        const double h = (mesh.upper[d] - mesh.lower[d]) / n;
        tpmg_index   i =
          static_cast<tpmg_index>(std::floor((center[d] - mesh.lower[d]) / h));
        i = std::min<tpmg_index>(std::max<tpmg_index>(i, 0), n - 1);
        index += stride * i;
        stride *= n;
      }
    return index;
  }



  template <int dim>
  void
  Hierarchy<dim>::set_cell_coefficient(const tpmg_coefficient_layout layout,
                                       const unsigned int            n_per_cell,
                                       const std::vector<std::uint64_t> &cells,
                                       const std::vector<double>        &values,
                                       const std::string                &given)
  {
    // tpmg's owned planes of the finest level, and the cells per plane
    const tpmg_level_layout finest = get_layout();
    std::uint64_t           plane  = 1;
    for (unsigned int d = 0; d + 1 < dim; ++d)
      plane *= static_cast<std::uint64_t>(grid_options.cells[d])
               << grid_options.fine_level;
    std::string         difference;
    std::vector<double> owned =
      internal::cell_values_to_tpmg(get_communicator(),
                                    cells,
                                    values,
                                    n_per_cell,
                                    plane,
                                    finest.cell_first,
                                    finest.cell_end,
                                    difference);
    if (!difference.empty())
      difference += ": " + given;
    internal::agree_on_mismatch(get_communicator(), difference);
    set_coefficient_values(layout, std::move(owned));
  }



  template <int dim>
  void
  Hierarchy<dim>::set_coefficient_values(const tpmg_coefficient_layout layout,
                                         std::vector<double>         &&values)
  {
    AssertThrow(!coefficient_set,
                ExcUnsupported("Hierarchy::set_coefficient() on a hierarchy "
                               "that has a coefficient: set it once"));
    AssertThrow(!copied,
                ExcUnsupported(
                  "Hierarchy::set_coefficient() after a GpuPreconditioner or "
                  "solve_on_gpu() copied the hierarchy's grid: set the "
                  "coefficient before any object is made from the hierarchy"));
    // tpmg refuses a grid in use and values out of range, naming the rank,
    // the cell and the value
    const tpmg_status status =
      tpmg_grid_set_coefficient(grid, layout, values.data());
    AssertThrow(status == TPMG_SUCCESS,
                ExcTpmgError("tpmg_grid_set_coefficient",
                             status,
                             tpmg_context_last_error(context->get())));
    coefficient_set    = true;
    coefficient_layout = layout;
    coefficient_values = std::move(values);
  }



  template <int dim>
  void
  Hierarchy<dim>::set_coefficient(const Function<dim> &coefficient)
  {
    AssertThrow(coefficient.n_components == 1,
                ExcUnsupported("a coefficient Function of " +
                               std::to_string(coefficient.n_components) +
                               " components: tpmg takes a scalar one"));
    const tpmg_level_layout layout = get_layout();
    const unsigned int      n_q    = Utilities::pow(mesh.degree + 1, dim);
    tpmg_index              n[3]   = {1, 1, 1};
    for (unsigned int d = 0; d < dim; ++d)
      n[d] = static_cast<tpmg_index>(grid_options.cells[d])
             << grid_options.fine_level;
    n[dim - 1] = layout.cell_end - layout.cell_first;
    std::vector<double> values(n_owned_cells() * n_q);
    std::vector<double> points(3 * n_q);
    std::size_t         position = 0;
    for (tpmg_index k = 0; k < n[2]; ++k)
      for (tpmg_index j = 0; j < n[1]; ++j)
        for (tpmg_index i = 0; i < n[0]; ++i)
          {
            tpmg_index cell[3] = {i, j, k};
            cell[dim - 1] += layout.cell_first;
            context->check(tpmg_grid_quadrature_points(grid,
                                                       cell,
                                                       points.data()),
                           "tpmg_grid_quadrature_points");
            for (unsigned int q = 0; q < n_q; ++q)
              {
                Point<dim> p;
                for (unsigned int d = 0; d < dim; ++d)
                  p[d] = points[3 * q + d];
                values[position++] = coefficient.value(p);
              }
          }
    set_coefficient_values(TPMG_COEFFICIENT_QUADRATURE, std::move(values));
  }



  template <int dim>
  template <typename Number>
  void
  Hierarchy<dim>::set_coefficient(
    const MatrixFree<dim, Number>           &matrix_free,
    const Table<2, VectorizedArray<Number>> &coefficient)
  {
    const unsigned int n_q = Utilities::pow(mesh.degree + 1, dim);
    AssertThrow(&matrix_free.get_dof_handler().get_triangulation() ==
                    &dof_handler->get_triangulation() &&
                  matrix_free.get_mg_level() == numbers::invalid_unsigned_int,
                ExcUnsupported(
                  "a MatrixFree object of another triangulation or of a "
                  "multigrid level: the coefficient table must be the one "
                  "of the active cells of the hierarchy's DoFHandler"));
    const Quadrature<dim> &quadrature = matrix_free.get_quadrature();
    const QGauss<dim>      gauss(mesh.degree + 1);
    bool                   same = quadrature.size() == gauss.size();
    for (unsigned int q = 0; same && q < gauss.size(); ++q)
      same = quadrature.point(q).distance(gauss.point(q)) < 1e-12;
    AssertThrow(same,
                ExcUnsupported(
                  "a MatrixFree object with a quadrature of " +
                  std::to_string(quadrature.size()) +
                  " points that is not QGauss<dim>(" +
                  std::to_string(mesh.degree + 1) +
                  "), where tpmg takes the coefficient at the points of "
                  "QGauss(k+1), k = " +
                  std::to_string(mesh.degree)));
    AssertThrow(coefficient.size(0) == matrix_free.n_cell_batches() &&
                  coefficient.size(1) == n_q,
                ExcUnsupported("a coefficient table of " +
                               std::to_string(coefficient.size(0)) + " x " +
                               std::to_string(coefficient.size(1)) +
                               " entries for a MatrixFree object of " +
                               std::to_string(matrix_free.n_cell_batches()) +
                               " cell batches and " + std::to_string(n_q) +
                               " quadrature points per cell"));

    // deal.II's points of a cell of the standard orientation
    // (check_supported()) are QGauss<dim>'s tensor product, x fastest: tpmg's
    std::vector<std::uint64_t> cells;
    std::vector<double>        values;
    for (unsigned int batch = 0; batch < matrix_free.n_cell_batches(); ++batch)
      for (unsigned int lane = 0;
           lane < matrix_free.n_active_entries_per_cell_batch(batch);
           ++lane)
        {
          cells.push_back(
            finest_cell_index(matrix_free.get_cell_iterator(batch, lane)));
          for (unsigned int q = 0; q < n_q; ++q)
            values.push_back(coefficient(batch, q)[lane]);
        }
    set_cell_coefficient(TPMG_COEFFICIENT_QUADRATURE,
                         n_q,
                         cells,
                         values,
                         "the MatrixFree object's cells are not the "
                         "triangulation's locally owned active cells");
  }



  template <int dim>
  template <typename Number>
  void
  Hierarchy<dim>::set_coefficient(const Vector<Number> &coefficient)
  {
    const Triangulation<dim> &tria = dof_handler->get_triangulation();
    AssertThrow(coefficient.size() == tria.n_active_cells(),
                ExcUnsupported(
                  "a coefficient vector of " +
                  std::to_string(coefficient.size()) + " entries for " +
                  std::to_string(tria.n_active_cells()) +
                  " active cells: index it by active_cell_index()"));
    std::vector<std::uint64_t> cells;
    std::vector<double>        values;
    for (const auto &cell : tria.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          cells.push_back(finest_cell_index(cell));
          values.push_back(coefficient[cell->active_cell_index()]);
        }
    set_cell_coefficient(TPMG_COEFFICIENT_CELLS,
                         1,
                         cells,
                         values,
                         "the locally owned active cells do not cover the "
                         "mesh once");
  }



  template <int dim>
  bool
  Hierarchy<dim>::has_coefficient() const
  {
    return coefficient_set;
  }



  template <int dim>
  tpmg_grid *
  Hierarchy<dim>::create_grid_copy(Context &other) const
  {
    tpmg_grid *copy = nullptr;
    other.check(tpmg_grid_create(other.get(), &grid_options, &copy),
                "tpmg_grid_create");
    if (coefficient_set)
      {
        const tpmg_status status =
          tpmg_grid_set_coefficient(copy,
                                    coefficient_layout,
                                    coefficient_values.data());
        if (status != TPMG_SUCCESS)
          {
            const std::string message = tpmg_context_last_error(other.get());
            tpmg_grid_destroy(&copy);
            AssertThrow(false,
                        ExcTpmgError("tpmg_grid_set_coefficient",
                                     status,
                                     message));
          }
      }
    copied = true;
    return copy;
  }



  template <int dim>
  tpmg_grid *
  Hierarchy<dim>::get_grid() const
  {
    return grid;
  }



  template <int dim>
  const tpmg_grid_options &
  Hierarchy<dim>::get_grid_options() const
  {
    return grid_options;
  }



  template <int dim>
  Context &
  Hierarchy<dim>::get_context() const
  {
    return *context;
  }



  template <int dim>
  const MeshDescription<dim> &
  Hierarchy<dim>::get_mesh_description() const
  {
    return mesh;
  }



  template <int dim>
  const DoFHandler<dim> &
  Hierarchy<dim>::get_dof_handler() const
  {
    return *dof_handler;
  }



  template <int dim>
  MPI_Comm
  Hierarchy<dim>::get_communicator() const
  {
#if DEAL_II_VERSION_GTE(9, 7, 0)
    return dof_handler->get_mpi_communicator();
#else
    return dof_handler->get_communicator();
#endif
  }



  template <int dim>
  unsigned int
  Hierarchy<dim>::min_level() const
  {
    return coarse_level;
  }



  template <int dim>
  unsigned int
  Hierarchy<dim>::max_level() const
  {
    return mesh.n_refinements;
  }



  template <int dim>
  int
  Hierarchy<dim>::tpmg_level(const unsigned int level) const
  {
    if (level == numbers::invalid_unsigned_int)
      return grid_options.fine_level;
    AssertThrow(level >= coarse_level && level <= mesh.n_refinements,
                ExcUnsupported("level " + std::to_string(level) +
                               " outside the hierarchy's levels " +
                               std::to_string(coarse_level) + ".." +
                               std::to_string(mesh.n_refinements)));
    return static_cast<int>(level - coarse_level);
  }



  template <int dim>
  tpmg_level_layout
  Hierarchy<dim>::get_layout(const unsigned int level) const
  {
    tpmg_level_layout layout;
    context->check(tpmg_grid_level_layout(grid, tpmg_level(level), &layout),
                   "tpmg_grid_level_layout");
    return layout;
  }



  template <int dim>
  types::global_dof_index
  Hierarchy<dim>::n_dofs(const unsigned int level) const
  {
    const tpmg_level_layout layout = get_layout(level);
    return static_cast<types::global_dof_index>(layout.n_global[0]) *
           layout.n_global[1] * layout.n_global[2];
  }



  template <int dim>
  const std::shared_ptr<const Utilities::MPI::Partitioner> &
  Hierarchy<dim>::get_partitioner(const unsigned int level) const
  {
    if (level == numbers::invalid_unsigned_int)
      return active_partitioner;
    AssertThrow(level < level_partitioners.size(),
                ExcUnsupported(
                  level_partitioners.empty() ?
                    std::string("level vectors without level DoFs: call "
                                "distribute_mg_dofs() before building the "
                                "Hierarchy") :
                    "level " + std::to_string(level) +
                      " above the finest level " +
                      std::to_string(mesh.n_refinements)));
    return level_partitioners[level];
  }



  template <int dim>
  std::vector<std::shared_ptr<const Utilities::MPI::Partitioner>>
  Hierarchy<dim>::get_level_partitioners() const
  {
    AssertThrow(!level_partitioners.empty(),
                ExcUnsupported("level partitioners without level DoFs: call "
                               "distribute_mg_dofs() before building the "
                               "Hierarchy"));
    return level_partitioners;
  }



  template <int dim>
  const std::shared_ptr<const internal::Redistribution> &
  Hierarchy<dim>::get_redistribution(const unsigned int level) const
  {
    const auto found = redistributions.find(level);
    AssertThrow(found != redistributions.end(),
                ExcHierarchyMismatch(
                  level == numbers::invalid_unsigned_int ||
                      (level >= coarse_level && level <= mesh.n_refinements &&
                       dof_handler->has_level_dofs()) ?
                    "level " + std::to_string(level) +
                      ": the level DoFs are not in tpmg's lexicographic "
                      "order: call renumber_lexicographic() after "
                      "distribute_mg_dofs()" :
                    "level " + std::to_string(level) +
                      " has no level DoFs in the hierarchy's levels " +
                      std::to_string(coarse_level) + ".." +
                      std::to_string(mesh.n_refinements)));
    return found->second;
  }



  template class Hierarchy<2>;
  template class Hierarchy<3>;

#define TPMG_DEALII_INSTANTIATE(dim, Number)             \
  template void Hierarchy<dim>::set_coefficient<Number>( \
    const MatrixFree<dim, Number> &,                     \
    const Table<2, VectorizedArray<Number>> &);          \
  template void Hierarchy<dim>::set_coefficient<Number>(const Vector<Number> &);

  TPMG_DEALII_INSTANTIATE(2, double)
  TPMG_DEALII_INSTANTIATE(2, float)
  TPMG_DEALII_INSTANTIATE(3, double)
  TPMG_DEALII_INSTANTIATE(3, float)
#undef TPMG_DEALII_INSTANTIATE
} // namespace tpmg::dealii
