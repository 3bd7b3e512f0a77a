/* The deal.II bridge of tpmg: what tpmg supports, and tpmg's DoF numbering. */
#ifndef tpmg_dealii_renumbering_h
#define tpmg_dealii_renumbering_h

#include <deal.II/base/numbers.h>
#include <deal.II/base/point.h>

#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>

#include <tpmg/dealii/exceptions.h>

#include <string>
#include <vector>

namespace tpmg::dealii
{
  /**
   * The coarse mesh of a DoFHandler as tpmg sees it: the box, the coarse cells
   * per direction, the number of global refinements and the degree.
   */
  template <int dim>
  struct MeshDescription
  {
    /** Lower and upper corner of the box, per direction. */
    double lower[dim], upper[dim];
    /** Cells per direction of level 0. */
    unsigned int n_cells[dim];
    /** The finest level: every active cell lives on it. */
    unsigned int n_refinements;
    /** The degree k of FE_Q(k). */
    unsigned int degree;
  };

  /**
   * Check that tpmg can work with @p dof_handler and describe its mesh; throw
   * ExcUnsupported with a message naming what is unsupported otherwise.
   *
   * Supported are
   * - a (serial or parallel::distributed) Triangulation on one MPI rank, or
   *   a parallel::distributed::Triangulation on P ranks with any partition
   *   p4est gives it (on the active cells and, with
   *   construct_multigrid_hierarchy, on every level),
   * - made by GridGenerator::subdivided_hyper_rectangle (or hyper_cube,
   *   hyper_rectangle) and refined globally: level 0 is a lattice of n_0 x n_1
   *   (x n_2) equal axis-parallel cells in deal.II's standard orientation, and
   *   every cell of every level lies on the refined lattice (no hanging nodes,
   *   no distorted cells, no curved manifold), all active cells on the finest
   *   level;
   * - a scalar FE_Q(k) with Gauss-Lobatto support points (FE_Q's default),
   *   k = 1..10 in 2D and 1..8 in 3D, the same on every cell.
   *
   * On P > 1 ranks tpmg keeps its own partition, slabs of cells along the
   * last direction (y in 2D, z in 3D), which the Hierarchy makes
   * (tpmg_grid_create refuses a mesh too thin along that direction for P
   * ranks, saying what to change); the bridge moves the values of each call
   * between deal.II's owned DoFs and tpmg's (internal::Redistribution: one
   * round of point-to-point messages each way). Where deal.II's partition
   * is tpmg's slabs (make_slab_triangulation()), no values move. Every rank
   * checks its own cells; if one finds a difference, every rank throws
   * ExcUnsupported with the message of the lowest such rank. Collective on
   * the triangulation's communicator.
   */
  template <int dim>
  MeshDescription<dim>
  check_supported(const ::dealii::DoFHandler<dim> &dof_handler);

  /**
   * Make on @p tria (empty, on any number P of ranks; on P > 1 built with
   * parallel::distributed::Triangulation::construct_multigrid_hierarchy) the
   * box [@p lower, @p upper] of @p repetitions coarse cells per direction
   * (GridGenerator::subdivided_hyper_rectangle), refined globally
   * @p n_refinements times, and check that its partition is tpmg's slabs,
   * so that the bridge moves no values between deal.II's and tpmg's
   * partition (any other partition works too, at the cost of that
   * exchange: check_supported()). The last direction needs m P coarse
   * cells, m >= 2, and p4est cuts slabs only where m is a multiple of
   * 2^a >= 2 with 2^(a+1) >= the coarse cells along every other direction
   * (SparsityTools::reorder_hierarchical: m = 2 for up to 4 cells across,
   * m = 4 for up to 8); throws ExcUnsupported on every rank, saying what to
   * change, where the mesh has not or where p4est's partition is not slabs.
   * Collective.
   */
  template <int dim>
  void
  make_slab_triangulation(
    ::dealii::parallel::distributed::Triangulation<dim> &tria,
    const ::dealii::Point<dim>                          &lower,
    const ::dealii::Point<dim>                          &upper,
    const std::vector<unsigned int>                     &repetitions,
    const unsigned int                                   n_refinements);

  /**
   * Renumber the active DoFs and, where distributed, the DoFs of every level
   * into tpmg's global lexicographic order, x fastest:
   * index = i + N_0 (j + N_1 m), N_d = n_d 2^level k + 1.
   *
   * The permutation is computed from the support points of each cell (their
   * position on the refined lattice, exact integer arithmetic), not by
   * DoFRenumbering::downstream, which does not order Gauss-Lobatto points
   * reliably. Calls check_supported() first.
   *
   * On P ranks each rank's locally owned DoFs (p4est's partition) become
   * one contiguous range, the ranges in rank order, each in increasing
   * lexicographic order: where the partition is tpmg's slabs, the numbers
   * are the lexicographic indices. Collective.
   *
   * @note Renumber before anything that stores DoF indices is built: initialize
   * MGConstrainedDoFs, AffineConstraints, sparsity patterns, MatrixFree and
   * MGTransferMatrixFree after this call.
   */
  template <int dim>
  void
  renumber_lexicographic(::dealii::DoFHandler<dim> &dof_handler);

  /**
   * Whether the DoFs of @p level (the active DoFs for the default
   * numbers::invalid_unsigned_int) are numbered as renumber_lexicographic()
   * numbers them: each rank's owned DoFs contiguous and in increasing
   * lexicographic order, judged from the support points of its own cells
   * (one rank: the lexicographic order itself; P ranks: the same answer on
   * every rank; collective).
   */
  template <int dim>
  bool
  is_lexicographic(
    const ::dealii::DoFHandler<dim> &dof_handler,
    const unsigned int level = ::dealii::numbers::invalid_unsigned_int);

  namespace internal
  {
    /**
     * Collective on @p comm: if @p difference is non-empty on any rank,
     * throw ExcHierarchyMismatch on every rank with the difference of the
     * lowest such rank (prefixed "rank R of P: " on P > 1 ranks).
     */
    void
    agree_on_mismatch(const MPI_Comm comm, const std::string &difference);

    /**
     * The lexicographic index of each of this rank's owned DoFs of @p level
     * (numbers::invalid_unsigned_int: the active DoFs), in deal.II's order,
     * or an empty vector where they are not numbered as
     * renumber_lexicographic() numbers them. Collective.
     */
    template <int dim>
    std::vector<::dealii::types::global_dof_index>
    lexicographic_indices(const ::dealii::DoFHandler<dim> &dof_handler,
                          const MeshDescription<dim>      &mesh,
                          const unsigned int               level);

    /**
     * is_lexicographic() for a mesh that check_supported() has described as
     * @p mesh, without checking it again.
     */
    template <int dim>
    bool
    is_lexicographic(const ::dealii::DoFHandler<dim> &dof_handler,
                     const MeshDescription<dim>      &mesh,
                     const unsigned int               level);
  } // namespace internal
} // namespace tpmg::dealii

#endif
