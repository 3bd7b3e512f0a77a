/* The deal.II bridge of tpmg: the vertex-patch smoother. */
#ifndef tpmg_dealii_patch_smoother_h
#define tpmg_dealii_patch_smoother_h

#include <deal.II/base/memory_space.h>
#include <deal.II/base/mg_level_object.h>

#include <deal.II/lac/la_parallel_vector.h>

#include <deal.II/multigrid/mg_base.h>

#include <tpmg.h>
#include <tpmg/dealii/hierarchy.h>

#include <memory>
#include <optional>
#include <vector>

namespace tpmg::dealii
{
  namespace internal
  {
    class Staging;
  }

  /**
   * tpmg's multiplicative vertex-patch smoother (paper Algorithm 3: 2^dim
   * colours of patches around interior vertices, exact patch solves by fast
   * diagonalization) on every level above the coarsest, for deal.II's
   * Multigrid.
   *
   * One object serves as pre- and post-smoother. deal.II's Multigrid calls
   * apply() for pre-smoothing (on a solution vector it has not zeroed) and
   * smooth() for post-smoothing (multigrid.templates.h, deal.II 9.4 and
   * later). apply() starts from u = 0 and visits the colours in order
   * 0..2^dim-1; smooth() visits them in reverse order when
   * AdditionalData::symmetric is set (the default), so that the post-smoother
   * is the adjoint of the pre-smoother and the V-cycle is symmetric, as
   * SolverCG needs. With symmetric = false both visit the colours in the same
   * order: the V-cycle tpmg's own GMRES, FMG and V-cycle solvers use, which
   * contracts several times faster (Q1: about 0.04 per cycle against 0.2);
   * use it with SolverGMRES/SolverFGMRES. The two are tpmg's
   * tpmg_multigrid_options::symmetric = 1 and 0.
   *
   * Dirichlet entries of u are left unchanged (zero after apply()), as in
   * tpmg's V-cycle: together with LaplaceOperator, CoarseSolver and
   * MGTransferMatrixFree the preconditioner returns zero on Dirichlet DoFs,
   * so start deal.II's solvers with a residual that vanishes there (a
   * right-hand side that is zero on constrained DoFs and x = 0, as in
   * step-37).
   *
   * With a coefficient a (Hierarchy::set_coefficient()) each patch solves a
   * separable surrogate (a replaced by one value per patch) and the
   * residual is that of tpmg's level operator (tpmg_grid_set_coefficient):
   * on the finest level the exact one, on coarser levels rediscretized with
   * cell means, which may differ from the user's level operators (deal.II's
   * Multigrid computes its residuals with those).
   *
   * Instantiated for host vectors (MemorySpace::Host), the memory deal.II's
   * Multigrid and MGTransferMatrixFree work in; with a CUDA Context their
   * values are staged through device buffers. For whole solves on device
   * vectors use GpuPreconditioner or solve_on_gpu().
   */
  template <int dim,
            typename Number,
            typename MemorySpace = ::dealii::MemorySpace::Host>
  class PatchSmoother
    : public ::dealii::MGSmootherBase<
        ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace>>
  {
  public:
    using VectorType =
      ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace>;

    /** Options of the smoother. */
    struct AdditionalData
    {
      /**
       * How the patch residuals are computed (paper Table 4). Unset (the
       * default): TPMG_SMOOTHER_FUSED, or TPMG_SMOOTHER_GLOBAL where the
       * Hierarchy has a coefficient (Hierarchy::set_coefficient()), the only
       * variant tpmg takes there (initialize() refuses the others).
       */
      std::optional<tpmg_smoother_variant> variant;

      /** Smoothing steps per call of apply() or smooth(). */
      unsigned int n_steps = 1;

      /**
       * smooth() in reverse colour order: a symmetric V-cycle, for CG. Set
       * false for GMRES (same order, faster contraction).
       */
      bool symmetric = true;
    };

    /** An empty smoother; call initialize(). */
    PatchSmoother();

    /** The smoother of every level of @p hierarchy above its coarsest. */
    PatchSmoother(const Hierarchy<dim> &hierarchy,
                  const AdditionalData &data = AdditionalData());

    ~PatchSmoother() override;

    /**
     * Make tpmg smoothers for levels min_level()+1..max_level() of
     * @p hierarchy, in the precision of Number.
     */
    void
    initialize(const Hierarchy<dim> &hierarchy,
               const AdditionalData &data = AdditionalData());

    /** Release the tpmg smoothers. */
    void
    clear() override;

    /**
     * n_steps smoothing steps on @p level, starting from @p u: colours in
     * reverse order if AdditionalData::symmetric (deal.II's post-smoother),
     * else in order.
     */
    void
    smooth(const unsigned int level,
           VectorType        &u,
           const VectorType  &rhs) const override;

    /**
     * n_steps smoothing steps on @p level from u = 0, colours in order
     * (deal.II's pre-smoother).
     */
    void
    apply(const unsigned int level,
          VectorType        &u,
          const VectorType  &rhs) const override;

    /** The options in use. */
    const AdditionalData &
    get_additional_data() const;

  private:
    void
    run(const unsigned int level,
        VectorType        &u,
        const VectorType  &rhs,
        const bool         from_zero,
        const bool         reverse) const;

    internal::ObserverPointer<const Hierarchy<dim>> hierarchy;
    AdditionalData                               data;
    std::vector<tpmg_smoother *>                 smoothers; // by tpmg level
    mutable std::unique_ptr<internal::Staging>   staging;
  };
} // namespace tpmg::dealii

#endif
