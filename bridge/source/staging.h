/* The deal.II bridge of tpmg, internal: where a deal.II vector's values live
 * and how the core reaches them. Not installed. */
#ifndef tpmg_dealii_staging_h
#define tpmg_dealii_staging_h

#include <deal.II/base/config.h>

#include <deal.II/base/exceptions.h>
#include <deal.II/base/memory_space.h>

#include <deal.II/lac/la_parallel_vector.h>

#include <tpmg.h>
#include <tpmg/dealii/exceptions.h>

#include <string>
#include <type_traits>

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
   * How the core reaches the values of deal.II vectors: in place where the
   * vector's memory is the context's (host vectors with the CPU backend,
   * device vectors with the CUDA backend), else through buffers in the
   * context's memory, filled by tpmg_vector_upload and emptied by
   * tpmg_vector_download (host vectors with the CUDA backend). Device
   * vectors with the CPU backend are refused.
   *
   * Vectors are read afresh through get_values() at every call: deal.II may
   * reallocate them in between. Their locally owned entries come first; on
   * one rank these are all DoFs of the level, in lexicographic order.
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
     * A pointer the context can read holding the @p n values of @p vector;
     * uses buffer @p slot (0..2) where the values must be copied.
     */
    template <typename Number, typename MemorySpace>
    const void *
    input(
      const unsigned int slot,
      const ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace>
                      &vector,
      const tpmg_index n)
    {
      check_vector<MemorySpace>(vector.locally_owned_size(), n);
      if (!staged<MemorySpace>())
        return vector.get_values();
      void *buffer = get(slot, precision_of<Number>(), n);
      check_status(tpmg_vector_upload(context,
                                      precision_of<Number>(),
                                      n,
                                      vector.get_values(),
                                      buffer),
                   context,
                   "tpmg_vector_upload");
      return buffer;
    }

    /**
     * A pointer the context can write for the @p n values of @p vector,
     * holding its current values if @p read is set; finish_output() puts the
     * result into the vector.
     */
    template <typename Number, typename MemorySpace>
    void *
    output(
      const unsigned int                                                 slot,
      ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace> &vector,
      const tpmg_index                                                   n,
      const bool                                                         read)
    {
      check_vector<MemorySpace>(vector.locally_owned_size(), n);
      if (!staged<MemorySpace>())
        return vector.get_values();
      void *buffer = get(slot, precision_of<Number>(), n);
      if (read)
        check_status(tpmg_vector_upload(context,
                                        precision_of<Number>(),
                                        n,
                                        vector.get_values(),
                                        buffer),
                     context,
                     "tpmg_vector_upload");
      return buffer;
    }

    /** Copy the result of a staged output() back into @p vector. */
    template <typename Number, typename MemorySpace>
    void
    finish_output(
      const unsigned int                                                 slot,
      ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace> &vector,
      const tpmg_index                                                   n)
    {
      if (!staged<MemorySpace>())
        return;
      check_status(tpmg_vector_download(context,
                                        precision_of<Number>(),
                                        n,
                                        slots[slot].pointer,
                                        vector.get_values()),
                   context,
                   "tpmg_vector_download");
    }

    /** Whether vectors of MemorySpace go through buffers. */
    template <typename MemorySpace>
    bool
    staged() const
    {
      if (is_host_memory_space<MemorySpace>::value)
        return memory != TPMG_MEMORY_HOST || always_stage;
      AssertThrow(
        memory == TPMG_MEMORY_DEVICE,
        ExcUnsupported(
          "a vector in device memory with a tpmg context whose vectors live "
          "in host memory: create the Context on a GPU backend (\"cuda\"), "
          "or use host vectors (MemorySpace::Host)"));
      return false;
    }

  private:
    template <typename MemorySpace>
    void
    check_vector(const std::size_t locally_owned_size, const tpmg_index n) const
    {
      staged<MemorySpace>();
      AssertThrow(static_cast<tpmg_index>(locally_owned_size) == n,
                  ExcUnsupported(
                    "a vector with " + std::to_string(locally_owned_size) +
                    " locally owned entries where the level has " +
                    std::to_string(n) +
                    " DoFs: tpmg needs vectors holding every DoF of the level "
                    "(initialize them with initialize_dof_vector())"));
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

    tpmg_context *context;
    bool          always_stage;
    tpmg_memory_type memory = TPMG_MEMORY_HOST;
    Slot          slots[3];
  };
} // namespace tpmg::dealii::internal

#endif
