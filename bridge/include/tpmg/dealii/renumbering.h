/* The deal.II bridge of tpmg: what tpmg supports, and tpmg's DoF numbering. */
#ifndef tpmg_dealii_renumbering_h
#define tpmg_dealii_renumbering_h

#include <deal.II/base/numbers.h>

#include <deal.II/dofs/dof_handler.h>

#include <tpmg/dealii/exceptions.h>

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
   * - a (serial or parallel::distributed) Triangulation on one MPI rank,
   * - made by GridGenerator::subdivided_hyper_rectangle (or hyper_cube,
   *   hyper_rectangle) and refined globally: level 0 is a lattice of n_0 x n_1
   *   (x n_2) equal axis-parallel cells in deal.II's standard orientation, and
   *   every cell of every level lies on the refined lattice (no hanging nodes,
   *   no distorted cells, no curved manifold), all active cells on the finest
   *   level;
   * - a scalar FE_Q(k) with Gauss-Lobatto support points (FE_Q's default),
   *   k = 1..10 in 2D and 1..8 in 3D, the same on every cell.
   *
   * With more than one MPI rank it throws: the distributed version is not
   * there yet.
   */
  template <int dim>
  MeshDescription<dim>
  check_supported(const ::dealii::DoFHandler<dim> &dof_handler);

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
   * @note Renumber before anything that stores DoF indices is built: initialize
   * MGConstrainedDoFs, AffineConstraints, sparsity patterns, MatrixFree and
   * MGTransferMatrixFree after this call.
   */
  template <int dim>
  void
  renumber_lexicographic(::dealii::DoFHandler<dim> &dof_handler);

  /**
   * Whether the DoFs of @p level (the active DoFs for the default
   * numbers::invalid_unsigned_int) are in tpmg's lexicographic order, judged
   * from the support points of every cell.
   */
  template <int dim>
  bool
  is_lexicographic(
    const ::dealii::DoFHandler<dim> &dof_handler,
    const unsigned int level = ::dealii::numbers::invalid_unsigned_int);

  namespace internal
  {
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
