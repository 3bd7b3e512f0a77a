/* The deal.II bridge of tpmg: the context. */
#include <deal.II/base/multithread_info.h>

#include <tpmg/dealii/context.h>

#include <string>

namespace tpmg::dealii
{
  Context::Context(const tpmg_context_options &options)
    : context(nullptr)
  {
    const tpmg_status status = tpmg_context_create(&options, &context);
    // a failed creation leaves no context to hold a message: say what was asked
    AssertThrow(
      status == TPMG_SUCCESS,
      ExcTpmgError("tpmg_context_create",
                   status,
                   std::string("backend ") +
                     (options.backend ? options.backend : "cpu") +
                     " with " + std::to_string(options.n_threads) +
                     " threads, device " + std::to_string(options.device) +
                     (status == TPMG_ERROR_UNSUPPORTED ?
                        ": not compiled in, no usable device or no such variant" :
                      status == TPMG_ERROR_ARGUMENT ?
                        ": no such backend, or a bad thread count or device" :
                        "")));
  }



  namespace
  {
    tpmg_context_options
    make_options(const std::string &backend,
                 const unsigned int n_threads,
                 const int          device,
                 const MPI_Comm    *communicator = nullptr)
    {
      tpmg_context_options options = tpmg_context_options_default();
      options.backend              = backend.c_str();
      // 0: as many threads as deal.II's own loops use
      options.n_threads = static_cast<int>(
        n_threads > 0 ? n_threads : ::dealii::MultithreadInfo::n_threads());
      options.device               = device;
      options.mpi_comm             = communicator;
      return options;
    }
  } // namespace



  Context::Context(const std::string &backend,
                   const unsigned int n_threads,
                   const int          device)
    : Context(make_options(backend, n_threads, device))
  {}



  Context::Context(const MPI_Comm     communicator,
                   const std::string &backend,
                   const unsigned int n_threads,
                   const int          device)
    // one rank: a context of this process alone, which a tpmg built
    // without MPI has too
    : Context(make_options(backend,
                           n_threads,
                           device,
                           ::dealii::Utilities::MPI::job_supports_mpi() &&
                               ::dealii::Utilities::MPI::n_mpi_processes(
                                 communicator) > 1 ?
                             &communicator :
                             nullptr))
  {}



  Context::~Context()
  {
    tpmg_context_destroy(&context);
  }



  tpmg_context *
  Context::get() const
  {
    return context;
  }



  std::string
  Context::backend() const
  {
    const char *name = nullptr;
    check(tpmg_context_backend(context, &name), "tpmg_context_backend");
    return name;
  }



  tpmg_memory_type
  Context::memory_type() const
  {
    tpmg_memory_type type = TPMG_MEMORY_HOST;
    check(tpmg_context_memory_type(context, &type), "tpmg_context_memory_type");
    return type;
  }



  unsigned int
  Context::n_threads() const
  {
    int n = 0;
    check(tpmg_context_threads(context, &n), "tpmg_context_threads");
    return static_cast<unsigned int>(n);
  }



  unsigned int
  Context::n_ranks() const
  {
    int rank = 0, size = 1;
    check(tpmg_context_ranks(context, &rank, &size), "tpmg_context_ranks");
    return static_cast<unsigned int>(size);
  }



  std::size_t
  Context::memory_consumption() const
  {
    std::size_t bytes = 0;
    check(tpmg_context_memory(context, &bytes), "tpmg_context_memory");
    return bytes;
  }



  void
  Context::synchronize() const
  {
    check(tpmg_context_synchronize(context), "tpmg_context_synchronize");
  }



  bool
  Context::is_available(const std::string &backend)
  {
    int available = 0;
    check_status(tpmg_backend_available(backend.c_str(), &available),
                 nullptr,
                 "tpmg_backend_available");
    return available != 0;
  }



  void
  Context::check(const tpmg_status status, const char *call) const
  {
    check_status(status, context, call);
  }
} // namespace tpmg::dealii
