/* The deal.II bridge of tpmg, internal: where a deal.II vector's values live
 * and how the core reaches them. Not installed. */
#ifndef tpmg_dealii_staging_h
#define tpmg_dealii_staging_h

#include <deal.II/base/config.h>

#include <deal.II/base/exceptions.h>
#include <deal.II/base/index_set.h>
#include <deal.II/base/memory_space.h>
#include <deal.II/base/mpi.h>

#include <deal.II/lac/la_parallel_vector.h>

#include <tpmg.h>
#include <tpmg/dealii/exceptions.h>
#include <tpmg/dealii/hierarchy.h>

#include "redistribution.h"

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if DEAL_II_VERSION_GTE(9, 5, 0)
#  include <Kokkos_Core.hpp>
#endif

namespace tpmg::dealii::internal
{
  /**
   * Whether vectors of MemorySpace keep their values in host memory. deal.II
   * 9.4 has MemorySpace::Host (and MemorySpace::CUDA in CUDA builds, device
   * memory); from 9.5 on MemorySpace::Default is Kokkos' default memory space,
   * device memory where Kokkos has a GPU backend and host memory otherwise.
   */
  template <typename MemorySpace>
  struct is_host_memory_space
    : std::is_same<MemorySpace, ::dealii::MemorySpace::Host>
  {};

#if DEAL_II_VERSION_GTE(9, 5, 0)
  template <>
  struct is_host_memory_space<::dealii::MemorySpace::Default>
    : std::is_same<typename ::dealii::MemorySpace::Default::kokkos_space,
                   ::Kokkos::HostSpace>
  {};
#endif

  /** tpmg's precision of Number (double or float). */
  template <typename Number>
  constexpr tpmg_precision
  precision_of()
  {
    static_assert(std::is_same_v<Number, double> ||
                    std::is_same_v<Number, float>,
                  "tpmg works with double and float vectors");
    return std::is_same_v<Number, double> ? TPMG_DOUBLE : TPMG_FLOAT;
  }



  /**
   * How a deal.II vector's locally owned entries sit in a tpmg level vector
   * of this rank (tpmg_grid_level_layout): tpmg's vector holds n_box entries
   * (the rank's slab and its ghost planes, lexicographic), tpmg's owned ones
   * from entry `offset` on, n_owned of them. On one rank n_box = n_owned and
   * offset = 0.
   *
   * Where deal.II's partition is tpmg's, deal.II's n_dealii owned entries
   * are tpmg's owned ones in the same order. Otherwise, and on a level that
   * tpmg keeps whole on every rank while deal.II distributes it (tpmg's
   * owned part is then the whole level: offset 0, n_owned = n_box), the
   * values move through the level's Redistribution (exchanges()).
   */
  struct VectorLayout
  {
    tpmg_index n_box    = 0;
    tpmg_index offset   = 0;
    tpmg_index n_owned  = 0;
    tpmg_index n_dealii = 0;

    /** The level's moves between deal.II's and tpmg's partition; null where
     * deal.II's partition is tpmg's by construction (one rank). */
    std::shared_ptr<const Redistribution> redistribution;

    VectorLayout() = default;

    /** The layout of a level on one rank, or of one that deal.II partitions
     * as tpmg. */
    explicit VectorLayout(const tpmg_level_layout &layout)
      : n_box(layout.count * layout.plane)
      , offset((layout.owned_first - layout.first) * layout.plane)
      , n_owned((layout.owned_end - layout.owned_first) * layout.plane)
      , n_dealii(n_owned)
    {}

    /** The layout of a level in tpmg's @p layout whose deal.II DoFs reach
     * tpmg's through @p redistribution. */
    VectorLayout(const tpmg_level_layout                      &layout,
                 const std::shared_ptr<const Redistribution> &redistribution)
      : VectorLayout(layout)
    {
      this->redistribution = redistribution;
      n_dealii             = redistribution->n_dealii();
      if (redistribution->is_whole())
        {
          offset  = 0;
          n_owned = n_box;
        }
    }

    /** Whether the values move through the redistribution (else deal.II's
     * owned entries are tpmg's owned part). */
    bool
    exchanges() const
    {
      return redistribution != nullptr && (redistribution->is_whole() ||
                                           !redistribution->is_identity());
    }
  };



  /**
   * How the core reaches the values of deal.II vectors: in place where the
   * vector's memory is the context's (host vectors with the CPU backend,
   * device vectors with the CUDA backend) and its owned entries are all of
   * tpmg's level vector (one rank), else through buffers in the context's
   * memory: the owned entries are copied in at the layout's offset by
   * tpmg_vector_upload and out by tpmg_vector_download (device vectors on
   * P ranks: tpmg_vector_convert within the device), one copy each way per
   * call; tpmg makes the ghost planes current itself. Where deal.II's
   * partition is not tpmg's (VectorLayout::exchanges()), the level's
   * Redistribution moves the owned entries instead, in host memory (device
   * vectors are then refused), one round of messages in and one out per
   * call. Device vectors with the CPU backend are refused.
   *
   * Vectors are read afresh through get_values() at every call: deal.II may
   * reallocate them in between. Their locally owned entries come first, in
   * increasing lexicographic index (renumber_lexicographic()). A vector
   * written through output() has its ghost entries zeroed
   * (zero_out_ghost_values()): deal.II updates them where it reads them.
   */
  class Staging
  {
  public:
    /**
     * Buffers in @p context; with @p always_stage host vectors are copied
     * even for the CPU backend (so that the GPU classes run the same code on
     * every backend).
     */
    Staging(tpmg_context *context, const bool always_stage = false)
      : context(context)
      , always_stage(always_stage)
    {
      check_status(tpmg_context_memory_type(context, &memory),
                   context,
                   "tpmg_context_memory_type");
    }

    ~Staging()
    {
      for (Slot &slot : slots)
        tpmg_vector_destroy(context, &slot.pointer);
    }

    Staging(const Staging &) = delete;
    Staging &
    operator=(const Staging &) = delete;

    /**
     * A pointer the context can read holding the values of @p vector in
     * tpmg's layout @p layout; uses buffer @p slot (0..2) where the values
     * must be copied.
     */
    template <typename Number, typename MemorySpace>
    const void *
    input(
      const unsigned int slot,
      const ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace>
                         &vector,
      const VectorLayout &layout)
    {
      check_vector<MemorySpace>(vector.locally_owned_size(), layout);
      if (!staged<MemorySpace>(layout))
        return vector.get_values();
      void *buffer = get(slot, precision_of<Number>(), layout.n_box);
      upload(vector, layout, buffer);
      return buffer;
    }

    /**
     * input() of @p in (slot @p in_slot) and output() of @p out (slot
     * @p out_slot) holding its current values, where the values move between
     * the ranks: both in one round of messages.
     */
    template <typename Number, typename MemorySpace>
    std::pair<const void *, void *>
    input_output(
      const unsigned int in_slot,
      const ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace>
                                                                        &in,
      const unsigned int                                                 out_slot,
      ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace> &out,
      const VectorLayout                                                &layout)
    {
      check_vector<MemorySpace>(in.locally_owned_size(), layout);
      check_vector<MemorySpace>(out.locally_owned_size(), layout);
      if (!layout.exchanges())
        return {input(in_slot, in, layout), output(out_slot, out, layout, true)};
      const tpmg_precision precision = precision_of<Number>();
      void *buffers[2] = {get(in_slot, precision, layout.n_box),
                          get(out_slot, precision, layout.n_box)};
      const bool          host = memory == TPMG_MEMORY_HOST;
      std::vector<Number> copies(host ? 0 : 2 * layout.n_owned);
      Number             *targets[2];
      for (unsigned int a = 0; a < 2; ++a)
        targets[a] =
          host ? static_cast<Number *>(owned_part(buffers[a], precision, layout)) :
                 copies.data() + a * layout.n_owned;
      const Number *sources[2] = {in.get_values(), out.get_values()};
      layout.redistribution->to_tpmg(2, sources, targets);
      if (!host)
        for (unsigned int a = 0; a < 2; ++a)
          check_status(tpmg_vector_upload(context,
                                          precision,
                                          layout.n_owned,
                                          targets[a],
                                          owned_part(buffers[a],
                                                     precision,
                                                     layout)),
                       context,
                       "tpmg_vector_upload");
      return {buffers[0], buffers[1]};
    }

    /**
     * A pointer the context can write for the values of @p vector in tpmg's
     * layout @p layout, holding its current values if @p read is set;
     * finish_output() puts the result into the vector.
     */
    template <typename Number, typename MemorySpace>
    void *
    output(
      const unsigned int                                                 slot,
      ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace> &vector,
      const VectorLayout                                                &layout,
      const bool                                                         read)
    {
      check_vector<MemorySpace>(vector.locally_owned_size(), layout);
      if (!staged<MemorySpace>(layout))
        return vector.get_values();
      void *buffer = get(slot, precision_of<Number>(), layout.n_box);
      if (read)
        upload(vector, layout, buffer);
      return buffer;
    }

    /** Copy the result of a staged output() back into @p vector. */
    template <typename Number, typename MemorySpace>
    void
    finish_output(
      const unsigned int                                                 slot,
      ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace> &vector,
      const VectorLayout                                                &layout)
    {
      const tpmg_precision precision = precision_of<Number>();
      if (staged<MemorySpace>(layout) && layout.exchanges())
        {
          // tpmg's owned part, on the host, to deal.II's ranks
          const void *owned =
            owned_part(slots[slot].pointer, precision, layout);
          std::vector<Number> host(memory == TPMG_MEMORY_HOST ? 0 :
                                                                layout.n_owned);
          if (memory != TPMG_MEMORY_HOST)
            check_status(tpmg_vector_download(
                           context, precision, layout.n_owned, owned, host.data()),
                         context,
                         "tpmg_vector_download");
          layout.redistribution->to_dealii(
            memory == TPMG_MEMORY_HOST ? static_cast<const Number *>(owned) :
                                         host.data(),
            vector.get_values());
        }
      else if (staged<MemorySpace>(layout))
        {
          const void *owned =
            owned_part(slots[slot].pointer, precision, layout);
          if (is_host_memory_space<MemorySpace>::value)
            check_status(tpmg_vector_download(context,
                                              precision,
                                              layout.n_owned,
                                              owned,
                                              vector.get_values()),
                         context,
                         "tpmg_vector_download");
          else
            check_status(tpmg_vector_convert(context,
                                             layout.n_owned,
                                             precision,
                                             owned,
                                             precision,
                                             vector.get_values()),
                         context,
                         "tpmg_vector_convert");
        }
      vector.zero_out_ghost_values();
    }

    /** The owned entries of tpmg's vector @p v of @p layout. */
    static void *
    owned_part(void                *v,
               const tpmg_precision precision,
               const VectorLayout  &layout)
    {
      return static_cast<char *>(v) +
             static_cast<std::size_t>(layout.offset) *
               (precision == TPMG_DOUBLE ? sizeof(double) : sizeof(float));
    }

    /** Whether vectors of MemorySpace go through buffers. */
    template <typename MemorySpace>
    bool
    staged(const VectorLayout &layout) const
    {
      if (is_host_memory_space<MemorySpace>::value)
        return memory != TPMG_MEMORY_HOST || always_stage ||
               layout.n_box != layout.n_owned || layout.exchanges();
      AssertThrow(
        memory == TPMG_MEMORY_DEVICE,
        ExcUnsupported(
          "a vector in device memory with a tpmg context whose vectors live "
          "in host memory: create the Context on a GPU backend (\"cuda\"), "
          "or use host vectors (MemorySpace::Host)"));
      AssertThrow(
        !layout.exchanges(),
        ExcUnsupported(
          "a vector in device memory on a level whose deal.II partition is "
          "not tpmg's (or that tpmg keeps whole on every rank): the bridge "
          "moves such values between the ranks in host memory; use host "
          "vectors, or make the mesh with make_slab_triangulation() and 2P "
          "coarse cells along the last direction below every even halving"));
      return layout.n_box != layout.n_owned;
    }

    /**
     * The layout of deal.II level @p level (numbers::invalid_unsigned_int:
     * the active DoFs) of @p hierarchy, computed at the first call (which is
     * collective where it gathers) and kept.
     */
    template <int dim>
    const VectorLayout &
    layout_of(const Hierarchy<dim> &hierarchy, const unsigned int level)
    {
      const auto found = layouts.find(level);
      if (found != layouts.end())
        return found->second;
      return layouts
        .emplace(level,
                 VectorLayout(hierarchy.get_layout(level),
                              hierarchy.get_redistribution(level)))
        .first->second;
    }

  private:
    template <typename Number, typename MemorySpace>
    void
    upload(
      const ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace>
                         &vector,
      const VectorLayout &layout,
      void               *buffer)
    {
      const tpmg_precision precision = precision_of<Number>();
      if (layout.exchanges())
        {
          // deal.II's ranks to tpmg's owned part, on the host (the memory
          // space is checked by staged())
          void               *owned = owned_part(buffer, precision, layout);
          std::vector<Number> host(memory == TPMG_MEMORY_HOST ? 0 :
                                                                layout.n_owned);
          layout.redistribution->to_tpmg(vector.get_values(),
                                         memory == TPMG_MEMORY_HOST ?
                                           static_cast<Number *>(owned) :
                                           host.data());
          if (memory != TPMG_MEMORY_HOST)
            check_status(tpmg_vector_upload(
                           context, precision, layout.n_owned, host.data(), owned),
                         context,
                         "tpmg_vector_upload");
          return;
        }
      void *owned = owned_part(buffer, precision, layout);
      if (is_host_memory_space<MemorySpace>::value)
        check_status(tpmg_vector_upload(context,
                                        precision,
                                        layout.n_owned,
                                        vector.get_values(),
                                        owned),
                     context,
                     "tpmg_vector_upload");
      else
        // a device vector in a device context, staged on P ranks: a copy
        // within the device's memory
        check_status(tpmg_vector_convert(context,
                                         layout.n_owned,
                                         precision,
                                         vector.get_values(),
                                         precision,
                                         owned),
                     context,
                     "tpmg_vector_convert");
    }

    template <typename MemorySpace>
    void
    check_vector(const std::size_t   locally_owned_size,
                 const VectorLayout &layout) const
    {
      staged<MemorySpace>(layout);
      AssertThrow(static_cast<tpmg_index>(locally_owned_size) ==
                    layout.n_dealii,
                  ExcUnsupported(
                    "a vector with " + std::to_string(locally_owned_size) +
                    " locally owned entries where this rank owns " +
                    std::to_string(layout.n_dealii) +
                    " DoFs of the level: tpmg needs vectors with the "
                    "level's layout (initialize them with "
                    "initialize_dof_vector())"));
    }

    /** Buffer @p slot with room for n values of @p precision. */
    void *
    get(const unsigned int   slot,
        const tpmg_precision precision,
        const tpmg_index     n)
    {
      Slot &s = slots[slot];
      if (s.pointer == nullptr || s.precision != precision || s.n != n)
        {
          check_status(tpmg_vector_destroy(context, &s.pointer),
                       context,
                       "tpmg_vector_destroy");
          check_status(tpmg_vector_create(context, precision, n, &s.pointer),
                       context,
                       "tpmg_vector_create");
          s.precision = precision;
          s.n         = n;
        }
      return s.pointer;
    }

    struct Slot
    {
      void          *pointer   = nullptr;
      tpmg_precision precision = TPMG_DOUBLE;
      tpmg_index     n         = 0;
    };

    tpmg_context    *context;
    bool             always_stage;
    tpmg_memory_type memory = TPMG_MEMORY_HOST;
    Slot             slots[3];
    std::map<unsigned int, VectorLayout> layouts;
  };
} // namespace tpmg::dealii::internal

#endif
