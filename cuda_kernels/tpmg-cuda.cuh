/* Internal host-side declarations of the CUDA backend: its per-context state,
 * error checks, the degree table and the operations of its files:
 *   tpmg-cuda-backend.cu      init, memory, stopwatch, limits, the ops table
 *   tpmg-cuda-vectors.cu      vector operations and reductions
 *   tpmg-cuda-coarse.cu       the coarse solve
 *   tpmg-cuda-coefficient.cu  the operator on levels with a variable coefficient
 *   tpmg-cuda-transport.cu    messages between ranks: NCCL, MPI or host staging
 *   tpmg-cuda-dispatch.cuh    variant -> kernel, the one table
 *   tpmg-cuda-launch.cuh      launch configurations of the level kernels
 *   tpmg-cuda-unit.cuh        the unit patch's 1D data as kernel parameters
 *   tpmg-cuda-tensor.cuh      device building blocks: 1D contractions, patch stages
 *   tpmg-cuda-operator.cuh    the level operator (tpmg-cuda-brick.cuh: by bricks)
 *   tpmg-cuda-smoother.cuh    the vertex-patch smoother
 *   tpmg-cuda-transfer.cuh    prolongation and restriction
 * and tpmg-cuda-{operator,smoother,transfer}-{2,3}d.cu instantiate the last
 * three per dimension. C never includes this file. */
#ifndef TPMG_CUDA_CUH
#define TPMG_CUDA_CUH

#include <cuda_runtime.h>

#include <type_traits>
#include <utility>

#include "tpmg-backend.h"

namespace tpmg_cuda {

/* The kernel variants, named after the backend's name ("cuda/tiled"):
 * tpmg-cuda-dispatch.cuh maps each to a kernel per dimension, degree and
 * precision. */
enum class variant { fastest, basic, constant, tiled, thread, brick };

/* How a context on several ranks moves messages (tpmg-cuda-transport.cu). */
enum class transport { none, nccl, mpi, host };

/* What init (and connect) create and finalize frees. */
struct backend_data {
  int device; /* tpmg_backend_device + tpmg_backend_local_rank, modulo the devices seen */
  cudaStream_t stream;
  double *partials;    /* device: dot partial sums, then the result */
  double *host_result; /* pinned host copy of the dot result */
  cudaEvent_t stopwatch[2];
  variant kernels; /* from the backend's name */
  /* host: the unit patch's 1D data (reference_data<k, T>) per precision and
   * degree, built on first use from tpmg_level::unit */
  void *reference[2][TPMG_MAX_DEGREE_2D + 1];
  /* host: the unit cell's 1D data of the variable-coefficient operator
   * (tpmg-cuda-coefficient.cu) per precision and degree, built on first use */
  void *cell_reference[2][TPMG_MAX_DEGREE_2D + 1];
  transport link;       /* none on one process */
  void *nccl;           /* ncclComm_t where link is nccl */
  /* nccl: the messages' own stream (of the highest priority, so that its
   * kernels start while a level kernel fills the GPU), the event it waits for
   * on `stream` and the one `stream` waits for in messages_wait */
  cudaStream_t messages_stream;
  cudaEvent_t messages_ready, messages_done;
  bool messages_pending; /* started, not yet waited for */
  void *staging;        /* pinned host memory where link is host */
  size_t staging_bytes;
};

inline variant variant_of(const tpmg_context *ctx) {
  return static_cast<const backend_data *>(tpmg_backend_data(ctx))->kernels;
}

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

/* The dot products' partial sums in backend_data::partials (tpmg-cuda-vectors.cu):
 * at most dot_max_blocks blocks, rows 0..TPMG_MULTI_MAX of dot_max_blocks
 * partials, then one result per row. */
constexpr int dot_max_blocks = 1024;
constexpr int dot_rows = TPMG_MULTI_MAX + 1;
constexpr int dot_results = dot_rows * dot_max_blocks; /* offset of the results */

/* Make the context's device current for this host thread. */
tpmg_status activate(tpmg_context *ctx);

/* The backend's connect, messages_start and messages_wait ops
 * (tpmg-cuda-transport.cu), and what finalize calls to free what connect
 * made. */
tpmg_status connect(tpmg_context *ctx, const char **name);
tpmg_status messages_start(tpmg_context *ctx, int n, const tpmg_message *messages);
tpmg_status messages_wait(tpmg_context *ctx);
void disconnect(backend_data *data);

/* Vector operations (tpmg-cuda-vectors.cu), arguments as in tpmg_backend_ops. */
tpmg_status set(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double value, void *v);
tpmg_status axpby(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double a, const void *x,
                  double b, void *y);
tpmg_status dot(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, const void *x, const void *y,
                double *result);
tpmg_status dots(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, int m, const void *const *x,
                 const void *y, double *result);
tpmg_status axpys(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, int m, const double *a,
                  tpmg_precision x_prec, const void *const *x, void *y, double *norm2);
tpmg_status convert(tpmg_context *ctx, tpmg_index n, tpmg_precision src_prec, const void *src,
                    tpmg_precision dst_prec, void *dst);
tpmg_status copy_boundary(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                          const void *src, void *dst);

/* The coarse solve (tpmg-cuda-coarse.cu). */
tpmg_status coarse_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                         const void *inverse, const void *b, void *x);

/* The operator on a level with a variable coefficient (tpmg_level::
 * coefficient; tpmg-cuda-coefficient.cu), for every variant of the backend,
 * and its counted work per DoF. */
tpmg_status laplace_coefficient(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                const void *src, void *dst);
tpmg_status operator_work_coefficient(const tpmg_level *lvl, tpmg_precision prec, tpmg_work *work);

/* Level operations of one dimension, instantiated in
 * tpmg-cuda-{operator,smoother,transfer}-{2,3}d.cu; the kernels come from the
 * context's variant (tpmg-cuda-dispatch.cuh). */
template <int dim>
tpmg_status laplace(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec, const void *src,
                    void *dst);
template <int dim>
tpmg_status operator_work(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                          tpmg_work *work);
/* boundary != 0: TPMG_SMOOTHER_BOUNDARY (see tpmg_backend_ops) */
template <int dim>
tpmg_status patch_fused(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec, int colour,
                        int boundary, const tpmg_index vertices[2], const void *b, void *x);
template <int dim>
tpmg_status patch_residual(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           int colour, const void *b, const void *x, void *r);
template <int dim>
tpmg_status patch_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec, int colour,
                        const void *r, void *x);
template <int dim>
tpmg_status prolongate_add(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                           tpmg_precision prec, const void *c, void *f);
template <int dim>
tpmg_status restrict_(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                      tpmg_precision prec, const void *f, void *c);

} // namespace tpmg_cuda

#endif
