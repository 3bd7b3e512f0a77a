/* Internal host-side declarations of the CUDA backend: its per-context state,
 * error checks, the degree table and the per-dimension operations that the
 * instantiation files provide. C never includes this file. */
#ifndef TPMG_CUDA_CUH
#define TPMG_CUDA_CUH

#include <cuda_runtime.h>

#include <type_traits>
#include <utility>

#include "tpmg-backend.h"

namespace tpmg_cuda {

/* What init creates and finalize frees. */
struct backend_data {
  cudaStream_t stream;
  double *partials;    /* device: dot partial sums, then the result */
  double *host_result; /* pinned host copy of the dot result */
  cudaEvent_t stopwatch[2];
  /* host: the unit patch's 1D data (reference_data<k, T>) per precision and
   * degree, built on first use (TPMG_KERNEL_CONSTANT and THREAD) */
  void *reference[2][TPMG_MAX_DEGREE_2D + 1];
};

inline cudaStream_t stream_of(const tpmg_context *ctx) {
  return static_cast<const backend_data *>(tpmg_backend_data(ctx))->stream;
}

inline tpmg_status cuda_error(const tpmg_context *ctx, cudaError_t error, const char *what,
                              const char *file, int line) {
  return tpmg_error_set(ctx, TPMG_ERROR_BACKEND, file, line, "%s: %s (%s)", what,
                        cudaGetErrorName(error), cudaGetErrorString(error));
}

} // namespace tpmg_cuda

/* Check a CUDA runtime call; on failure return TPMG_ERROR_BACKEND naming it. */
#define TPMG_CUDA_CALL(ctx, call)                                                                  \
  do {                                                                                             \
    cudaError_t tpmg_cuda_error_ = (call);                                                         \
    if (tpmg_cuda_error_ != cudaSuccess)                                                           \
      return tpmg_cuda::cuda_error((ctx), tpmg_cuda_error_, #call, __FILE__, __LINE__);            \
  } while (0)

/* Check the launch just made (configuration and earlier asynchronous errors). */
#define TPMG_CUDA_LAUNCHED(ctx, kernel_name)                                                       \
  do {                                                                                             \
    cudaError_t tpmg_cuda_error_ = cudaGetLastError();                                             \
    if (tpmg_cuda_error_ != cudaSuccess)                                                           \
      return tpmg_cuda::cuda_error((ctx), tpmg_cuda_error_, "launching " kernel_name, __FILE__,    \
                                   __LINE__);                                                      \
  } while (0)

namespace tpmg_cuda {

/* The degree table: every degree 1..max_degree<dim> is instantiated for float
 * and double; anything else is TPMG_ERROR_UNSUPPORTED. */
template <int dim> constexpr int max_degree = dim == 2 ? TPMG_MAX_DEGREE_2D : TPMG_MAX_DEGREE_3D;

template <int dim, int k, typename F>
tpmg_status select_degree_from(const tpmg_context *ctx, int degree, F &&f) {
  if (degree == k)
    return f(std::integral_constant<int, k>{});
  if constexpr (k < max_degree<dim>)
    return select_degree_from<dim, k + 1>(ctx, degree, std::forward<F>(f));
  else
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "CUDA backend: degree %d in %dD is not instantiated (1..%d)", degree, dim,
                          max_degree<dim>);
}

/* Call f(std::integral_constant<int, k>, T()) for the run-time degree and
 * precision (deal.II's select_apply_inverse). */
template <int dim, typename F>
tpmg_status select(const tpmg_context *ctx, int degree, tpmg_precision prec, F &&f) {
  if (prec == TPMG_DOUBLE)
    return select_degree_from<dim, 1>(ctx, degree, [&](auto k) { return f(k, double()); });
  return select_degree_from<dim, 1>(ctx, degree, [&](auto k) { return f(k, float()); });
}

/* Operations of one dimension, instantiated in tpmg-cuda-*-{2,3}d.cu. */
template <int dim>
tpmg_status laplace(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                    tpmg_kernel kernel, const void *src, void *dst);
/* boundary != 0: TPMG_SMOOTHER_BOUNDARY (see tpmg_backend_ops) */
template <int dim>
tpmg_status patch_fused(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                        tpmg_kernel kernel, int colour, int boundary, const void *b, void *x);
template <int dim>
tpmg_status patch_residual(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           tpmg_kernel kernel, int colour, const void *b, const void *x, void *r);
template <int dim>
tpmg_status patch_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                        tpmg_kernel kernel, int colour, const void *r, void *x);
template <int dim>
tpmg_status prolongate_add(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                           tpmg_precision prec, const void *c, void *f);
template <int dim>
tpmg_status restrict_(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                      tpmg_precision prec, const void *f, void *c);

/* Elementwise v = value over n entries (used by restriction as well). */
tpmg_status set(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double value, void *v);

} // namespace tpmg_cuda

#endif
