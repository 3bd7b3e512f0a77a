/* The deal.II bridge of tpmg: the level hierarchy. */
#ifndef tpmg_dealii_hierarchy_h
#define tpmg_dealii_hierarchy_h

#include <deal.II/base/function.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/numbers.h>
#include <deal.II/base/partitioner.h>
#include <deal.II/base/table.h>
#include <deal.II/base/types.h>
#include <deal.II/base/vectorization.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/vector.h>

#include <deal.II/multigrid/mg_constrained_dofs.h>

#include <tpmg.h>
#include <tpmg/dealii/context.h>
#include <tpmg/dealii/renumbering.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

DEAL_II_NAMESPACE_OPEN
// declared here so that this header does not pull in matrix_free.h
template <int dim, typename Number, typename VectorizedArrayType>
class MatrixFree;
DEAL_II_NAMESPACE_CLOSE

namespace tpmg::dealii
{
  namespace internal
  {
    class Redistribution;
  } // namespace internal

  /**
   * tpmg's level hierarchy (a tpmg_grid) for a DoFHandler: the box, the coarse
   * cells per direction, the levels and the degree, read from deal.II's mesh
   * and element, and the vector layouts (Utilities::MPI::Partitioner) of the
   * active and level DoFs.
   *
   * The DoFHandler must have been checked and renumbered by
   * renumber_lexicographic(), and its level DoFs distributed
   * (distribute_mg_dofs()). deal.II level @p l is tpmg level l - min_level():
   * with min_level() > 0 tpmg's coarse mesh is deal.II's level min_level().
   *
   * LaplaceOperator, PatchSmoother, CoarseSolver work on this object's grid,
   * in its Context. GpuPreconditioner and solve_on_gpu() make their own grid
   * with the same description in the context they are given.
   *
   * A variable coefficient a of -∇·(a∇u) + c u (step-37's problem) is given
   * by one of the set_coefficient() functions after the constructor and
   * before any object is made from this hierarchy; without one, a = 1. The
   * hierarchy owns the coefficient (tpmg's grid holds a copy of the values;
   * the hierarchy keeps a second copy where GpuPreconditioner or
   * solve_on_gpu() make a grid of their own), and every object made from it
   * then uses it: LaplaceOperator (exact on the finest level; coarser levels
   * rediscretized with cell means, see tpmg_grid_set_coefficient),
   * PatchSmoother (TPMG_SMOOTHER_GLOBAL, the only variant tpmg takes with a
   * coefficient), CoarseSolver, GpuPreconditioner and solve_on_gpu().
   * check_level_operator() compares tpmg's operator with the user's.
   *
   * On P ranks tpmg partitions the levels into its own slabs (tpmg_grid_create);
   * deal.II's partition may be any that p4est gives. For each level the
   * Hierarchy sets up once which of deal.II's owned values go to which rank
   * (internal::Redistribution); every class then moves a vector's values
   * with one round of point-to-point messages in and one out per call. With
   * tpmg's slabs as deal.II's partition (make_slab_triangulation()) no values
   * move.
   *
   * Keep the DoFHandler and the Context alive while this object lives, and do
   * not renumber or refine in between.
   */
  template <int dim>
  class Hierarchy : public internal::EnableObserverPointer
  {
  public:
    /**
     * Check @p dof_handler (check_supported()) and build the tpmg grid in
     * @p context with levels min_level..finest, where the finest level is the
     * one of the active cells. Throws ExcUnsupported for an unsupported mesh
     * or element, ExcTpmgError if tpmg refuses the grid (e.g. a finest level
     * whose vectors would overflow tpmg_index; coarse meshes of any size are
     * taken), and
     * ExcHierarchyMismatch if the DoFs are not numbered lexicographically.
     *
     * @p reaction is c >= 0 of -Δu + c u (tpmg_grid_options::reaction): every
     * level's operator is then the Laplace matrix plus c times the mass
     * matrix, as a MatrixFree operator of (∇u, ∇v) + c (u, v) (for implicit
     * Euler's M + τK = τ(K + M/τ): c = 1/τ). tpmg refuses c < 0, and
     * c times the coarsest cells' volume or width beyond TPMG_MAX_REACTION.
     *
     * On P ranks (a parallel::distributed::Triangulation whose partition
     * check_supported() accepts) @p context must span the triangulation's
     * communicator (Context(communicator, backend)); the constructor is then
     * collective and checks on every rank that tpmg's owned planes of every
     * level are deal.II's locally owned DoFs, throwing ExcHierarchyMismatch
     * on every rank where one rank finds a difference.
     */
    Hierarchy(const ::dealii::DoFHandler<dim> &dof_handler,
              Context                         &context,
              const unsigned int               min_level = 0,
              const double                     reaction  = 0.);

    /** Destroy the tpmg grid. */
    ~Hierarchy() override;

    Hierarchy(const Hierarchy &) = delete;
    Hierarchy &
    operator=(const Hierarchy &) = delete;

    /**
     * Compare tpmg's data with deal.II's, throwing ExcHierarchyMismatch at the
     * first difference:
     * - the DoFs of every level are numbered lexicographically, and there are
     *   as many as tpmg has;
     * - the Dirichlet boundary indices of @p mg_constrained_dofs on every level
     *   are exactly tpmg's boundary DoFs (the whole boundary is Dirichlet);
     * - tpmg's prolongation between the two coarsest levels is the tensor
     *   product of the 1D prolongation FE_Q<1>(k).get_prolongation_matrix().
     *
     * @p mg_constrained_dofs must have been initialized after
     * renumber_lexicographic(). On P ranks each rank checks its owned DoFs
     * (collective; every rank throws if one finds a difference), and the
     * prolongation, the same on every partition, is checked by a grid of
     * the same description on each rank alone.
     */
    void
    cross_check(const ::dealii::MGConstrainedDoFs &mg_constrained_dofs) const;

    /**
     * Write the problem as a tpmg setup file (tpmg_setup_write): the grid, the
     * manufactured problem @p rhs, and optionally the finest-level right-hand
     * side @p right_hand_side (all DoFs, Dirichlet entries holding g, in this
     * DoFHandler's lexicographic numbering; on P ranks each rank passes its
     * owned entries; collective). `tpmg-poisson --setup FILE`
     * solves it without deal.II.
     */
    void
    write_setup(const std::string &filename,
                const tpmg_rhs     rhs,
                const ::dealii::LinearAlgebra::distributed::Vector<double>
                  *right_hand_side = nullptr) const;

    /**
     * Set the coefficient a of -∇·(a∇u) + c u to @p coefficient, evaluated
     * at the points of QGauss(k+1) of every finest cell this rank owns in
     * tpmg's partition (tpmg_grid_quadrature_points: the tensor-product
     * points, x fastest, as deal.II's QGauss<dim>(k+1) orders them), and
     * pass the values to tpmg_grid_set_coefficient (TPMG_COEFFICIENT_
     * QUADRATURE). Collective. Throws ExcUnsupported if an object was made
     * from this hierarchy already or a coefficient was set, and
     * ExcTpmgError (naming the cell and value) for a value that is not
     * finite and positive (within TPMG_MIN_COEFFICIENT, TPMG_MAX_COEFFICIENT).
     * @p coefficient is only used during the call.
     */
    void
    set_coefficient(const ::dealii::Function<dim> &coefficient);

    /**
     * Set the coefficient from step-37's storage: @p coefficient(batch, q)
     * the value at quadrature point q of the cells of cell batch @p batch of
     * @p matrix_free (whose active cells must be this hierarchy's
     * DoFHandler's, level numbers::invalid_unsigned_int, and whose
     * quadrature must be QGauss<dim>(k+1)); lane l of batch b is the cell
     * matrix_free.get_cell_iterator(b, l). The values are copied into tpmg's
     * cell order and (lexicographic) point order. Each rank gives the values
     * of its own cells (@p matrix_free's, deal.II's locally owned ones, on
     * any partition p4est makes); on P > 1 ranks they move once, during this
     * call, to the rank that owns each cell in tpmg's slabs (one
     * MPI_Alltoall of counts and MPI_Alltoallv of cell indices and values;
     * on tpmg's slabs each rank keeps its own). Otherwise as
     * set_coefficient(const Function<dim> &).
     */
    template <typename Number>
    void
    set_coefficient(
      const ::dealii::MatrixFree<dim, Number, ::dealii::VectorizedArray<Number>>
                                                                  &matrix_free,
      const ::dealii::Table<2, ::dealii::VectorizedArray<Number>> &coefficient);

    /**
     * Set a coefficient constant on each finest cell (TPMG_COEFFICIENT_CELLS):
     * @p coefficient indexed by the active cells' active_cell_index(), of
     * size triangulation.n_active_cells(); each rank reads the entries of
     * its locally owned cells (others may be unset), on any partition, and
     * they move to tpmg's owners as in the MatrixFree form. Otherwise as
     * set_coefficient(const Function<dim> &).
     */
    template <typename Number>
    void
    set_coefficient(const ::dealii::Vector<Number> &coefficient);

    /** Whether a coefficient was set. */
    bool
    has_coefficient() const;

    /**
     * The tpmg grid; owned by this object. Creating a tpmg object from it
     * fixes the coefficient (tpmg_grid_set_coefficient refuses later calls).
     */
    tpmg_grid *
    get_grid() const;

    /**
     * A new grid of the same description and coefficient in @p context (of
     * the same ranks), owned by the caller (tpmg_grid_destroy), for objects
     * that work in another context (GpuPreconditioner, solve_on_gpu()).
     * The coefficient cannot be set any more afterwards.
     */
    tpmg_grid *
    create_grid_copy(Context &context) const;

    /** The options the tpmg grid was made with. */
    const tpmg_grid_options &
    get_grid_options() const;

    /** The context of the grid. */
    Context &
    get_context() const;

    /** The mesh as check_supported() described it. */
    const MeshDescription<dim> &
    get_mesh_description() const;

    /** The DoFHandler this hierarchy describes. */
    const ::dealii::DoFHandler<dim> &
    get_dof_handler() const;

    /** The MPI communicator of the triangulation. */
    MPI_Comm
    get_communicator() const;

    /** The coarsest deal.II level, tpmg's level 0. */
    unsigned int
    min_level() const;

    /** The finest deal.II level, the level of the active cells. */
    unsigned int
    max_level() const;

    /**
     * tpmg's level of deal.II level @p level (numbers::invalid_unsigned_int:
     * the active DoFs, tpmg's finest level).
     */
    int
    tpmg_level(const unsigned int level) const;

    /**
     * How tpmg stores @p level on this rank (numbers::invalid_unsigned_int:
     * the active DoFs): its slab and ghost planes, and the owned planes,
     * which are deal.II's locally owned DoFs of the level where deal.II's
     * partition is tpmg's slabs (get_redistribution()).
     */
    tpmg_level_layout
    get_layout(
      const unsigned int level = ::dealii::numbers::invalid_unsigned_int) const;

    /**
     * The number of DoFs on @p level over all ranks, Dirichlet DoFs included
     * (numbers::invalid_unsigned_int: the active DoFs).
     */
    ::dealii::types::global_dof_index
    n_dofs(
      const unsigned int level = ::dealii::numbers::invalid_unsigned_int) const;

    /**
     * The layout of vectors on @p level (numbers::invalid_unsigned_int: the
     * active DoFs): locally owned DoFs first, then ghosts, which is what
     * LaplaceOperator::initialize_dof_vector() uses.
     */
    const std::shared_ptr<const ::dealii::Utilities::MPI::Partitioner> &
    get_partitioner(
      const unsigned int level = ::dealii::numbers::invalid_unsigned_int) const;

    /**
     * The level layouts for every deal.II level 0..max_level(), in the form
     * MGTransferMatrixFree::build(dof_handler, partitioners) takes them, so
     * that the transfer and the level operators share their vectors' layout.
     */
    std::vector<std::shared_ptr<const ::dealii::Utilities::MPI::Partitioner>>
    get_level_partitioners() const;

    /**
     * The moves between deal.II's owned DoFs of @p level
     * (numbers::invalid_unsigned_int: the active DoFs) and tpmg's, for the
     * bridge's classes (internal: its header is not installed).
     */
    const std::shared_ptr<const internal::Redistribution> &
    get_redistribution(
      const unsigned int level = ::dealii::numbers::invalid_unsigned_int) const;

  private:
    /**
     * Check that a coefficient may be set, then pass @p values (this rank's
     * owned finest cells in tpmg's order) to tpmg and keep them.
     */
    void
    set_coefficient_values(const tpmg_coefficient_layout layout,
                           std::vector<double>         &&values);

    /**
     * The lexicographic index (x fastest: tpmg's cell order) of the finest
     * cell @p cell among all finest cells.
     */
    std::uint64_t
    finest_cell_index(
      const typename ::dealii::Triangulation<dim>::cell_iterator &cell) const;

    /**
     * set_coefficient_values() from the values of this rank's deal.II owned
     * cells, on any partition: @p n_per_cell values per cell of @p cells
     * (finest_cell_index()) in @p values, moved to the ranks that own the
     * cells in tpmg (internal::cell_values_to_tpmg(), once). Collective;
     * ExcHierarchyMismatch on every rank, naming @p given as the cause,
     * where a cell tpmg owns is given by no rank or by two.
     */
    void
    set_cell_coefficient(const tpmg_coefficient_layout     layout,
                         const unsigned int                n_per_cell,
                         const std::vector<std::uint64_t> &cells,
                         const std::vector<double>        &values,
                         const std::string                &given);

    /** The number of finest cells tpmg owns on this rank. */
    std::size_t
    n_owned_cells() const;

    /** cross_check() on this rank's owned DoFs of every level. */
    void
    cross_check_levels(const ::dealii::MGConstrainedDoFs &mg_constrained_dofs,
                       const std::vector<bool>           &lexicographic) const;

    /** cross_check() of the prolongation, on @p grid in @p context. */
    void
    cross_check_prolongation(Context &context, tpmg_grid *grid) const;

    internal::ObserverPointer<const ::dealii::DoFHandler<dim>> dof_handler;
    internal::ObserverPointer<Context>                         context;
    MeshDescription<dim>                                       mesh;
    unsigned int                                               coarse_level;
    tpmg_grid_options                                          grid_options;
    tpmg_grid                                                 *grid;
    bool                                                       coefficient_set;
    tpmg_coefficient_layout coefficient_layout;
    std::vector<double>     coefficient_values;
    mutable bool            copied;
    std::shared_ptr<const ::dealii::Utilities::MPI::Partitioner>
      active_partitioner;
    std::vector<std::shared_ptr<const ::dealii::Utilities::MPI::Partitioner>>
      level_partitioners;
    /** get_redistribution(), by deal.II level (active DoFs: the key
     * numbers::invalid_unsigned_int). */
    std::map<unsigned int, std::shared_ptr<const internal::Redistribution>>
      redistributions;
  };
} // namespace tpmg::dealii

#endif
