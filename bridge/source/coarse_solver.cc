/* The deal.II bridge of tpmg: the exact coarse solver. */
#include <tpmg/dealii/coarse_solver.h>

#include "staging.h"

#include <string>

using namespace ::dealii;

namespace tpmg::dealii
{
  template <int dim, typename Number, typename MemorySpace>
  CoarseSolver<dim, Number, MemorySpace>::CoarseSolver()
    : coarse(nullptr)
  {}



  template <int dim, typename Number, typename MemorySpace>
  CoarseSolver<dim, Number, MemorySpace>::CoarseSolver(
    const Hierarchy<dim> &hierarchy)
    : CoarseSolver()
  {
    initialize(hierarchy);
  }



  template <int dim, typename Number, typename MemorySpace>
  CoarseSolver<dim, Number, MemorySpace>::~CoarseSolver()
  {
    clear();
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  CoarseSolver<dim, Number, MemorySpace>::initialize(
    const Hierarchy<dim> &hierarchy)
  {
    clear();
    Context &context = hierarchy.get_context();
    context.check(tpmg_coarse_create(hierarchy.get_grid(),
                                     internal::precision_of<Number>(),
                                     &coarse),
                  "tpmg_coarse_create");
    this->hierarchy = &hierarchy;
    staging         = std::make_unique<internal::Staging>(context.get());
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  CoarseSolver<dim, Number, MemorySpace>::clear()
  {
    tpmg_coarse_destroy(&coarse);
    staging.reset();
    hierarchy = nullptr;
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  CoarseSolver<dim, Number, MemorySpace>::operator()(
    const unsigned int level,
    VectorType        &dst,
    const VectorType  &src) const
  {
    AssertThrow(coarse != nullptr, ExcNotInitialized());
    AssertThrow(level == hierarchy->min_level(),
                ExcUnsupported(
                  "a coarse solve on level " + std::to_string(level) +
                  ": tpmg's coarse solver works on the hierarchy's "
                  "coarsest level " +
                  std::to_string(hierarchy->min_level()) +
                  " (give Multigrid that minlevel)"));
    const internal::VectorLayout &layout =
      staging->layout_of(*hierarchy, level);
    const void                  *in  = staging->input(0, src, layout);
    void                        *out = staging->output(1, dst, layout, false);
    hierarchy->get_context().check(tpmg_coarse_apply(coarse, in, out),
                                   "tpmg_coarse_apply");
    staging->finish_output(1, dst, layout);
  }



  template class CoarseSolver<2, double>;
  template class CoarseSolver<2, float>;
  template class CoarseSolver<3, double>;
  template class CoarseSolver<3, float>;
} // namespace tpmg::dealii
