/* The deal.II bridge of tpmg: the context. */
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
                     (options.backend == TPMG_BACKEND_CUDA ? "cuda" : "cpu") +
                     " with " + std::to_string(options.n_threads) +
                     " threads, device " + std::to_string(options.device) +
                     (status == TPMG_ERROR_UNSUPPORTED ?
                        ": not compiled in or no usable device" :
                        "")));
  }



  namespace
  {
    tpmg_context_options
    make_options(const tpmg_backend backend,
                 const unsigned int n_threads,
                 const int          device)
    {
      tpmg_context_options options = tpmg_context_options_default();
      options.backend              = backend;
      options.n_threads            = static_cast<int>(n_threads);
      options.device               = device;
      return options;
    }
  } // namespace



  Context::Context(const tpmg_backend backend,
                   const unsigned int n_threads,
                   const int          device)
    : Context(make_options(backend, n_threads, device))
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



  tpmg_backend
  Context::backend() const
  {
    tpmg_backend backend = TPMG_BACKEND_CPU;
    check(tpmg_context_backend(context, &backend), "tpmg_context_backend");
    return backend;
  }



  unsigned int
  Context::n_threads() const
  {
    int n = 0;
    check(tpmg_context_threads(context, &n), "tpmg_context_threads");
    return static_cast<unsigned int>(n);
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
  Context::is_available(const tpmg_backend backend)
  {
    int available = 0;
    check_status(tpmg_backend_available(backend, &available),
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
