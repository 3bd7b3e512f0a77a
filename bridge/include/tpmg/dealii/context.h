/* The deal.II bridge of tpmg: the context. */
#ifndef tpmg_dealii_context_h
#define tpmg_dealii_context_h

#include <deal.II/base/config.h>

#include <deal.II/base/mpi.h>

// deal.II 9.7 renamed Subscriptor to EnableObserverPointer and SmartPointer to
// ObserverPointer (new headers; the old names are deprecated aliases, due for
// removal after 9.8). The bridge names them through the aliases below.
#if DEAL_II_VERSION_GTE(9, 7, 0)
#  include <deal.II/base/enable_observer_pointer.h>
#  include <deal.II/base/observer_pointer.h>
#else
#  include <deal.II/base/smartpointer.h>
#  include <deal.II/base/subscriptor.h>
#endif

#include <tpmg.h>
#include <tpmg/dealii/exceptions.h>

#include <cstddef>
#include <string>

/**
 * The deal.II bridge of tpmg: tpmg's vertex-patch smoother, matrix-free
 * operator, coarse solver and whole GPU solves inside deal.II programs. The
 * classes are thin wrappers of the C library (tpmg.h); the numerics stay there.
 *
 * Usage, after distributing the active and level DoFs of an FE_Q(k) on a
 * globally refined subdivided_hyper_rectangle:
 * @code
 * tpmg::dealii::renumber_lexicographic(dof_handler); // before
 * MGConstrainedDoFs mg_constrained_dofs.initialize(dof_handler);
 * mg_constrained_dofs.make_zero_boundary_constraints(dof_handler, {0});
 * tpmg::dealii::Context   context;                   // CPU backend
 * tpmg::dealii::Hierarchy<dim> hierarchy(dof_handler, context);
 * hierarchy.cross_check(mg_constrained_dofs);
 * @endcode
 * and then LaplaceOperator, PatchSmoother and CoarseSolver in deal.II's
 * Multigrid, or GpuPreconditioner and solve_on_gpu().
 */
namespace tpmg::dealii
{
  namespace internal
  {
#if DEAL_II_VERSION_GTE(9, 7, 0)
    /** The base class that ObserverPointer checks (deal.II >= 9.7). */
    using EnableObserverPointer = ::dealii::EnableObserverPointer;

    /** deal.II's observing pointer (deal.II >= 9.7). */
    template <typename T>
    using ObserverPointer = ::dealii::ObserverPointer<T>;
#else
    /** The base class that SmartPointer checks (deal.II < 9.7). */
    using EnableObserverPointer = ::dealii::Subscriptor;

    /** deal.II's observing pointer (deal.II < 9.7). */
    template <typename T>
    using ObserverPointer = ::dealii::SmartPointer<T>;
#endif
  } // namespace internal

  /**
   * The owner of a tpmg_context: the backend (CPU or CUDA), its threads or
   * device, and the memory that every tpmg object made through it lives in.
   * Objects made from a context (Hierarchy and what is built on it) must be
   * destroyed before it; deal.II's Subscriptor (EnableObserverPointer from
   * 9.7 on) checks this in debug mode.
   */
  class Context : public internal::EnableObserverPointer
  {
  public:
    /**
     * Create a context with the given options (tpmg_context_options_default():
     * CPU backend, OpenMP's thread count).
     *
     * Throws ExcTpmgError if the backend is not compiled in or has no device.
     */
    explicit Context(
      const tpmg_context_options &options = tpmg_context_options_default());

    /**
     * Create a context on the backend named @p backend ("cpu", "cuda",
     * "cuda/VARIANT": tpmg_context_options) with @p n_threads CPU threads
     * (0: deal.II's MultithreadInfo::n_threads(), the threads of deal.II's
     * own parallel loops, which MPI_InitFinalize's max_num_threads and the
     * environment variable DEAL_II_NUM_THREADS set) and GPU @p device.
     */
    explicit Context(const std::string &backend,
                     const unsigned int n_threads = 0,
                     const int          device    = 0);

    /**
     * Create a context spanning the ranks of @p communicator (collective;
     * tpmg duplicates it), on the backend @p backend with @p n_threads CPU
     * threads per rank (0: MultithreadInfo::n_threads(), as above) and GPU
     * @p device. Give it the communicator of the Triangulation whose
     * Hierarchy it will hold; on a communicator of one rank (or without MPI
     * initialized) it is the context of this process alone.
     */
    Context(const MPI_Comm     communicator,
            const std::string &backend,
            const unsigned int n_threads = 0,
            const int          device    = 0);

    /** Destroy the context. */
    ~Context() override;

    Context(const Context &) = delete;
    Context &
    operator=(const Context &) = delete;

    /** The C context, for calls of tpmg.h; owned by this object. */
    tpmg_context *
    get() const;

    /** The backend's name, as given at creation ("cpu", "cuda", ...). */
    std::string
    backend() const;

    /** Where the context's vectors live: TPMG_MEMORY_HOST or TPMG_MEMORY_DEVICE. */
    tpmg_memory_type
    memory_type() const;

    /** The number of MPI ranks the context spans. */
    unsigned int
    n_ranks() const;

    /** The CPU threads the context uses. */
    unsigned int
    n_threads() const;

    /** Backend memory allocated through this context, in bytes. */
    std::size_t
    memory_consumption() const;

    /** Wait until all backend work has finished (for timing). */
    void
    synchronize() const;

    /**
     * Whether the backend named @p backend is compiled in and has a usable
     * device. Throws ExcTpmgError for a name tpmg does not know.
     */
    static bool
    is_available(const std::string &backend);

    /**
     * Throw ExcTpmgError, with the context's message, if @p status is not
     * TPMG_SUCCESS; @p call names the failed function.
     */
    void
    check(const tpmg_status status, const char *call) const;

  private:
    tpmg_context *context;
  };
} // namespace tpmg::dealii

#endif
