/* The deal.II bridge of tpmg: the vertex-patch smoother. */
#include <tpmg/dealii/patch_smoother.h>

#include "staging.h"

#include <string>

using namespace ::dealii;

namespace tpmg::dealii
{
  template <int dim, typename Number, typename MemorySpace>
  PatchSmoother<dim, Number, MemorySpace>::PatchSmoother() = default;



  template <int dim, typename Number, typename MemorySpace>
  PatchSmoother<dim, Number, MemorySpace>::PatchSmoother(
    const Hierarchy<dim> &hierarchy,
    const AdditionalData &data)
  {
    initialize(hierarchy, data);
  }



  template <int dim, typename Number, typename MemorySpace>
  PatchSmoother<dim, Number, MemorySpace>::~PatchSmoother()
  {
    clear();
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  PatchSmoother<dim, Number, MemorySpace>::initialize(
    const Hierarchy<dim> &hierarchy,
    const AdditionalData &data)
  {
    clear();
    AssertThrow(data.n_steps >= 1,
                ExcMessage("PatchSmoother::AdditionalData::n_steps must be at "
                           "least 1"));
    this->hierarchy               = &hierarchy;
    this->data                    = data;
    Context              &context = hierarchy.get_context();
    tpmg_smoother_options options = tpmg_smoother_options_default();
    options.variant = data.variant.value_or(
      hierarchy.has_coefficient() ? TPMG_SMOOTHER_GLOBAL : TPMG_SMOOTHER_FUSED);
    AssertThrow(!hierarchy.has_coefficient() ||
                  options.variant == TPMG_SMOOTHER_GLOBAL,
                ExcUnsupported(
                  std::string("PatchSmoother with the variant ") +
                  tpmg_smoother_variant_name(options.variant) +
                  " on a Hierarchy with a coefficient: tpmg computes the "
                  "residual of the operator with a coefficient only in the "
                  "variant global; leave AdditionalData::variant unset"));
    const int fine                = hierarchy.tpmg_level(hierarchy.max_level());
    smoothers.assign(fine + 1, nullptr);
    // level 0 is the coarse level: solved, not smoothed
    for (int level = 1; level <= fine; ++level)
      context.check(tpmg_smoother_create(hierarchy.get_grid(),
                                         level,
                                         internal::precision_of<Number>(),
                                         &options,
                                         &smoothers[level]),
                    "tpmg_smoother_create");
    staging = std::make_unique<internal::Staging>(context.get());
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  PatchSmoother<dim, Number, MemorySpace>::clear()
  {
    for (tpmg_smoother *&smoother : smoothers)
      tpmg_smoother_destroy(&smoother);
    smoothers.clear();
    staging.reset();
    hierarchy = nullptr;
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  PatchSmoother<dim, Number, MemorySpace>::run(const unsigned int level,
                                               VectorType        &u,
                                               const VectorType  &rhs,
                                               const bool         from_zero,
                                               const bool         reverse) const
  {
    AssertThrow(hierarchy != nullptr, ExcNotInitialized());
    AssertThrow(
      level > hierarchy->min_level() && level <= hierarchy->max_level(),
      ExcUnsupported("smoothing on level " + std::to_string(level) +
                     ": the PatchSmoother has levels " +
                     std::to_string(hierarchy->min_level() + 1) + ".." +
                     std::to_string(hierarchy->max_level()) +
                     " (the coarsest level is solved by CoarseSolver)"));
    Context         &context  = hierarchy->get_context();
    tpmg_smoother   *smoother = smoothers[hierarchy->tpmg_level(level)];
    const internal::VectorLayout &layout =
      staging->layout_of(*hierarchy, level);
    // where the values move between the ranks, b and x in one exchange
    const auto [b, x] =
      from_zero ?
        std::pair<const void *, void *>(staging->input(0, rhs, layout),
                                        staging->output(1, u, layout, false)) :
        staging->input_output(0, rhs, 1, u, layout);
    if (from_zero)
      context.check(tpmg_vector_set(context.get(),
                                    internal::precision_of<Number>(),
                                    layout.n_box,
                                    0.0,
                                    x),
                    "tpmg_vector_set");
    for (unsigned int step = 0; step < data.n_steps; ++step)
      context.check(tpmg_smoother_apply(smoother, reverse ? 1 : 0, b, x),
                    "tpmg_smoother_apply");
    staging->finish_output(1, u, layout);
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  PatchSmoother<dim, Number, MemorySpace>::smooth(const unsigned int level,
                                                  VectorType        &u,
                                                  const VectorType  &rhs) const
  {
    run(level, u, rhs, false, data.symmetric);
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  PatchSmoother<dim, Number, MemorySpace>::apply(const unsigned int level,
                                                 VectorType        &u,
                                                 const VectorType  &rhs) const
  {
    run(level, u, rhs, true, false);
  }



  template <int dim, typename Number, typename MemorySpace>
  const typename PatchSmoother<dim, Number, MemorySpace>::AdditionalData &
  PatchSmoother<dim, Number, MemorySpace>::get_additional_data() const
  {
    return data;
  }



  template class PatchSmoother<2, double>;
  template class PatchSmoother<2, float>;
  template class PatchSmoother<3, double>;
  template class PatchSmoother<3, float>;
} // namespace tpmg::dealii
