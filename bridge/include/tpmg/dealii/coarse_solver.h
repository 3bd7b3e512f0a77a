/* The deal.II bridge of tpmg: the exact coarse solver. */
#ifndef tpmg_dealii_coarse_solver_h
#define tpmg_dealii_coarse_solver_h

#include <deal.II/base/memory_space.h>

#include <deal.II/lac/la_parallel_vector.h>

#include <deal.II/multigrid/mg_base.h>

#include <tpmg.h>
#include <tpmg/dealii/hierarchy.h>

#include <memory>

namespace tpmg::dealii
{
  namespace internal
  {
    class Staging;
  }

  /**
   * The exact solver of the coarsest level of a Hierarchy (tpmg's level 0):
   * a dense inverse of the interior matrix, built by fast diagonalization and
   * applied by the core (tpmg_coarse_*), for deal.II's Multigrid.
   * dst_I = A_II^{-1} src_I, dst_B = 0 on Dirichlet DoFs.
   *
   * Instantiated for host vectors, as PatchSmoother.
   */
  template <int dim,
            typename Number,
            typename MemorySpace = ::dealii::MemorySpace::Host>
  class CoarseSolver
    : public ::dealii::MGCoarseGridBase<
        ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace>>
  {
  public:
    using VectorType =
      ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace>;

    /** An empty solver; call initialize(). */
    CoarseSolver();

    /** The solver of the coarsest level of @p hierarchy. */
    explicit CoarseSolver(const Hierarchy<dim> &hierarchy);

    ~CoarseSolver() override;

    /** Build the dense inverse, in the precision of Number. */
    void
    initialize(const Hierarchy<dim> &hierarchy);

    /** Release the inverse. */
    void
    clear();

    /**
     * dst = A^{-1} src on @p level, which must be the hierarchy's min_level()
     * (Multigrid's minlevel).
     */
    void
    operator()(const unsigned int level,
               VectorType        &dst,
               const VectorType  &src) const override;

  private:
    internal::ObserverPointer<const Hierarchy<dim>> hierarchy;
    tpmg_coarse                                 *coarse;
    mutable std::unique_ptr<internal::Staging>   staging;
  };
} // namespace tpmg::dealii

#endif
