/* The CUDA backend: device, stream and memory, the stopwatch and the limit
 * loops, the checks of a level against the context's kernel variant, and the
 * table tpmg_cuda_backend through which the core calls every operation (the
 * vector operations are in tpmg-cuda-vectors.cu, the coarse solve in
 * tpmg-cuda-coarse.cu, the level operations in tpmg-cuda-{operator,smoother,
 * transfer}-{2,3}d.cu; tpmg-cuda.cuh lists the files).
 *
 * All work of a context runs on its own stream; host transfers and reductions
 * synchronize that stream. Every CUDA call and launch is checked and becomes
 * TPMG_ERROR_BACKEND with the CUDA error's name. */
#include <stdlib.h>
#include <string.h>

#include "tpmg-cuda-dispatch.cuh"
#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

tpmg_status activate(tpmg_context *ctx) {
  TPMG_CUDA_CALL(
      ctx, cudaSetDevice(static_cast<const backend_data *>(tpmg_backend_data(ctx))->device));
  return TPMG_SUCCESS;
}

namespace {

/* The variants of the backend's name ("cuda/tiled"): tpmg-cuda-dispatch.cuh
 * says which kernels each runs. */
const struct {
  const char *name;
  variant kernels;
} variants[] = {{"basic", variant::basic},
                {"constant", variant::constant},
                {"tiled", variant::tiled},
                {"thread", variant::thread},
                {"brick", variant::brick}};

tpmg_status init(tpmg_context *ctx) {
  variant kernels = variant::fastest;
  if (const char *name = tpmg_backend_variant(ctx)) {
    bool known = false;
    for (const auto &v : variants)
      if (strcmp(v.name, name) == 0) {
        kernels = v.kernels;
        known = true;
      }
    if (!known)
      return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                            "the cuda backend has no variant \"%s\" (basic, constant, tiled, "
                            "thread, brick)",
                            name);
  }
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess)
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "no usable CUDA device: %s", cudaGetErrorName(error));
  if (tpmg_backend_device(ctx) >= count)
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "CUDA device %d requested, %d present", tpmg_backend_device(ctx), count);
  /* on several ranks: the next device for each rank of the node */
  const int device = (tpmg_backend_device(ctx) + tpmg_backend_local_rank(ctx)) % count;
  TPMG_CUDA_CALL(ctx, cudaSetDevice(device));
  backend_data *data = static_cast<backend_data *>(calloc(1, sizeof(backend_data)));
  TPMG_CHECK(ctx, data, TPMG_ERROR_MEMORY, "allocating the CUDA backend state failed");
  data->device = device;
  data->kernels = kernels;
  error = cudaStreamCreateWithFlags(&data->stream, cudaStreamNonBlocking);
  if (error == cudaSuccess)
    error = cudaMalloc(&data->partials, (dot_results + dot_rows) * sizeof(double));
  if (error == cudaSuccess)
    error = cudaMallocHost(&data->host_result, dot_rows * sizeof(double));
  for (int e = 0; e < 2 && error == cudaSuccess; ++e)
    error = cudaEventCreate(&data->stopwatch[e]);
  if (error != cudaSuccess) {
    for (int e = 0; e < 2; ++e)
      if (data->stopwatch[e])
        cudaEventDestroy(data->stopwatch[e]);
    if (data->host_result)
      cudaFreeHost(data->host_result);
    if (data->partials)
      cudaFree(data->partials);
    if (data->stream)
      cudaStreamDestroy(data->stream);
    free(data);
    return cuda_error(ctx, error, "creating the CUDA stream and reduction buffers", __FILE__,
                      __LINE__);
  }
  tpmg_backend_set_data(ctx, data);
  return TPMG_SUCCESS;
}

void finalize(tpmg_context *ctx) {
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  if (!data)
    return;
  cudaSetDevice(data->device);
  cudaStreamSynchronize(data->stream);
  disconnect(data);
  for (int p = 0; p < 2; ++p)
    for (int k = 0; k <= TPMG_MAX_DEGREE_2D; ++k) {
      free(data->reference[p][k]);
      free(data->cell_reference[p][k]);
    }
  for (int e = 0; e < 2; ++e)
    cudaEventDestroy(data->stopwatch[e]);
  cudaFreeHost(data->host_result);
  cudaFree(data->partials);
  cudaStreamDestroy(data->stream);
  free(data);
  tpmg_backend_set_data(ctx, NULL);
}

tpmg_status alloc(tpmg_context *ctx, size_t bytes, void **ptr) {
  *ptr = NULL;
  TPMG_CALL(activate(ctx));
  const cudaError_t error = cudaMalloc(ptr, bytes);
  if (error != cudaSuccess) {
    *ptr = NULL;
    /* A failed allocation is not sticky, but it stays the runtime's last
     * error: cleared here, so that the next launch check (cudaGetLastError)
     * does not report it as that kernel's failure. */
    (void)cudaGetLastError();
    return cuda_error(ctx, error, "cudaMalloc(ptr, bytes)", __FILE__, __LINE__);
  }
  return TPMG_SUCCESS;
}

void release(tpmg_context *ctx, void *ptr) {
  /* The stream may still use the memory; cudaFree waits for the device. */
  cudaSetDevice(static_cast<const backend_data *>(tpmg_backend_data(ctx))->device);
  cudaFree(ptr);
}

tpmg_status upload(tpmg_context *ctx, void *dst, const void *host, size_t bytes) {
  TPMG_CALL(activate(ctx));
  TPMG_CUDA_CALL(ctx, cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, stream_of(ctx)));
  TPMG_CUDA_CALL(ctx, cudaStreamSynchronize(stream_of(ctx)));
  return TPMG_SUCCESS;
}

tpmg_status download(tpmg_context *ctx, void *host, const void *src, size_t bytes) {
  TPMG_CALL(activate(ctx));
  TPMG_CUDA_CALL(ctx, cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, stream_of(ctx)));
  TPMG_CUDA_CALL(ctx, cudaStreamSynchronize(stream_of(ctx)));
  return TPMG_SUCCESS;
}

tpmg_status synchronize(tpmg_context *ctx) {
  TPMG_CALL(activate(ctx));
  TPMG_CUDA_CALL(ctx, cudaStreamSynchronize(stream_of(ctx)));
  return TPMG_SUCCESS;
}

tpmg_status free_memory(tpmg_context *ctx, size_t *bytes) {
  TPMG_CALL(activate(ctx));
  size_t total = 0;
  TPMG_CUDA_CALL(ctx, cudaMemGetInfo(bytes, &total));
  return TPMG_SUCCESS;
}

tpmg_status set_op(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double value, void *v) {
  TPMG_CALL(activate(ctx));
  return set(ctx, prec, n, value, v);
}

/* The level operations: make the device current, then dispatch on dimension
 * (degree, precision and kernel are dispatched inside). A level with a
 * variable coefficient has its own operator for every variant. */
tpmg_status laplace_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                       const void *src, void *dst) {
  TPMG_CALL(activate(ctx));
  if (lvl->coefficient[prec])
    return laplace_coefficient(ctx, lvl, prec, src, dst);
  return lvl->dim == 2 ? laplace<2>(ctx, lvl, prec, src, dst)
                       : laplace<3>(ctx, lvl, prec, src, dst);
}

tpmg_status patch_fused_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           int colour, int boundary, const tpmg_index vertices[2], const void *b,
                           void *x) {
  TPMG_CALL(activate(ctx));
  return lvl->dim == 2 ? patch_fused<2>(ctx, lvl, prec, colour, boundary, vertices, b, x)
                       : patch_fused<3>(ctx, lvl, prec, colour, boundary, vertices, b, x);
}

tpmg_status patch_residual_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                              int colour, const void *b, const void *x, void *r) {
  TPMG_CALL(activate(ctx));
  return lvl->dim == 2 ? patch_residual<2>(ctx, lvl, prec, colour, b, x, r)
                       : patch_residual<3>(ctx, lvl, prec, colour, b, x, r);
}

tpmg_status patch_solve_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           int colour, const void *r, void *x) {
  TPMG_CALL(activate(ctx));
  return lvl->dim == 2 ? patch_solve<2>(ctx, lvl, prec, colour, r, x)
                       : patch_solve<3>(ctx, lvl, prec, colour, r, x);
}

tpmg_status prolongate_add_op(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                              tpmg_precision prec, const void *c, void *f) {
  TPMG_CALL(activate(ctx));
  return fine->dim == 2 ? prolongate_add<2>(ctx, coarse, fine, prec, c, f)
                        : prolongate_add<3>(ctx, coarse, fine, prec, c, f);
}

tpmg_status restrict_op(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                        tpmg_precision prec, const void *f, void *c) {
  TPMG_CALL(activate(ctx));
  return fine->dim == 2 ? restrict_<2>(ctx, coarse, fine, prec, f, c)
                        : restrict_<3>(ctx, coarse, fine, prec, f, c);
}

/* The kernel of `use` exists for the level in the context's variant (a
 * smoother needs the operator's too: GLOBAL's residual). On a level with a
 * variable coefficient every variant runs the cell operator
 * (tpmg-cuda-coefficient.cu, every degree) and its own local solves with the
 * patches' surrogate (patch_solve; FUSED, SEPARATE and BOUNDARY are refused
 * by the core there), and refuses what it refuses without one ("cuda/thread":
 * degree 1 only), so that a name accepts the same levels on every grid. */
tpmg_status check_level(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                        tpmg_level_use use) {
  kernel_kind kern = kernel_kind::basic;
  for (int u = TPMG_USE_OPERATOR; u <= use; ++u)
    TPMG_CALL(lvl->dim == 2 ? kernel_of<2>(ctx, lvl->degree, prec, tpmg_level_use(u), &kern)
                            : kernel_of<3>(ctx, lvl->degree, prec, tpmg_level_use(u), &kern));
  return TPMG_SUCCESS;
}

/* ---- benchmark support --------------------------------------------------- */

tpmg_status operator_work_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             tpmg_work *work) {
  if (lvl->coefficient[prec])
    return operator_work_coefficient(lvl, prec, work);
  return lvl->dim == 2 ? operator_work<2>(ctx, lvl, prec, work)
                       : operator_work<3>(ctx, lvl, prec, work);
}

/* basic: dense, each matrix entry loaded; constant and tiled: sparse, the
 * matrices in the parameters; thread: sparse, in registers. */
tpmg_status smoother_work_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             tpmg_smoother_variant smoother, tpmg_work *work) {
  tpmg_work apply;
  TPMG_CALL(operator_work_op(ctx, lvl, prec, &apply));
  kernel_kind kern = kernel_kind::basic;
  TPMG_CALL(lvl->dim == 2 ? kernel_of<2>(ctx, lvl->degree, prec, TPMG_USE_SMOOTHER, &kern)
                          : kernel_of<3>(ctx, lvl->degree, prec, TPMG_USE_SMOOTHER, &kern));
  const bool basic = kern == kernel_kind::basic;
  tpmg_work_smoother(lvl, smoother, !basic, kern != kernel_kind::thread, basic, &apply, work);
  work->kernel = kernel_name(kern);
  return TPMG_SUCCESS;
}

tpmg_status stopwatch(tpmg_context *ctx, int start, double *seconds) {
  TPMG_CALL(activate(ctx));
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  if (start) {
    TPMG_CUDA_CALL(ctx, cudaEventRecord(data->stopwatch[0], data->stream));
    return TPMG_SUCCESS;
  }
  TPMG_CUDA_CALL(ctx, cudaEventRecord(data->stopwatch[1], data->stream));
  TPMG_CUDA_CALL(ctx, cudaEventSynchronize(data->stopwatch[1]));
  float ms = 0;
  TPMG_CUDA_CALL(ctx, cudaEventElapsedTime(&ms, data->stopwatch[0], data->stopwatch[1]));
  *seconds = 1e-3 * double(ms);
  return TPMG_SUCCESS;
}

constexpr int limit_threads = 256;
constexpr int limit_shared_float4 = 1024; /* 16 KiB per block */
constexpr int limit_loads = 8;            /* float4 loads per iteration */
constexpr int limit_chains = 8;           /* independent FMA chains per thread */

/* Conflict-free 16-byte shared-memory loads: lanes of a warp read consecutive
 * float4, so each quarter warp reads 128 contiguous bytes, 512 bytes per warp
 * load. The loads feed sums, so none can be left out. */
__global__ void __launch_bounds__(limit_threads)
    shared_load_kernel(int iterations, float *__restrict__ sink) {
  __shared__ float4 buffer[limit_shared_float4];
  for (int i = threadIdx.x; i < limit_shared_float4; i += limit_threads)
    buffer[i] = make_float4(float(i), float(i + 1), float(i + 2), float(i + 3));
  __syncthreads();
  float4 sum = make_float4(0, 0, 0, 0);
  const unsigned base = unsigned(__cvta_generic_to_shared(buffer));
  int index = threadIdx.x;
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < limit_loads; ++j) {
      /* volatile: the buffer does not change, so plain loads would be hoisted */
      float4 v;
      const unsigned address =
          base + unsigned(((index + 32 * j) & (limit_shared_float4 - 1)) * sizeof(float4));
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                   : "r"(address));
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    index += 32 * limit_loads + 32;
  }
  if (sum.x + sum.y + sum.z + sum.w == -1.0f)
    sink[0] = sum.x;
}

/* limit_chains independent multiply-add chains per thread. */
template <typename T>
__global__ void __launch_bounds__(limit_threads)
    fma_kernel(int iterations, T a, T b, T *__restrict__ sink) {
  T v[limit_chains];
#pragma unroll
  for (int c = 0; c < limit_chains; ++c)
    v[c] = T(threadIdx.x + c);
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int c = 0; c < limit_chains; ++c)
      v[c] = v[c] * a + b;
  T sum = 0;
#pragma unroll
  for (int c = 0; c < limit_chains; ++c)
    sum += v[c];
  if (sum == T(-1))
    sink[0] = sum;
}

/* Time one launch of f (after one warm-up launch) with the stopwatch. */
template <typename F>
tpmg_status time_launch(tpmg_context *ctx, const char *name, F &&f, double *s) {
  for (int run = 0; run < 2; ++run) {
    if (run == 1)
      TPMG_CALL(stopwatch(ctx, 1, s));
    f();
    cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
      return cuda_error(ctx, error, name, __FILE__, __LINE__);
  }
  return stopwatch(ctx, 0, s);
}

tpmg_status measure_limits(tpmg_context *ctx, tpmg_device_limits *limits) {
  TPMG_CALL(activate(ctx));
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  int sms = 0;
  TPMG_CUDA_CALL(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, data->device));
  const unsigned blocks = unsigned(8 * sms); /* 2048 threads per SM */
  const double threads = double(blocks) * limit_threads;
  double *sink = data->partials; /* never written: the sums are never -1 */
  double seconds = 0;
  const int shared_iterations = 16384;
  TPMG_CALL(time_launch(
      ctx, "shared_load_kernel",
      [&] {
        shared_load_kernel<<<blocks, limit_threads, 0, data->stream>>>(
            shared_iterations, reinterpret_cast<float *>(sink));
      },
      &seconds));
  limits->shared_bytes = threads * shared_iterations * limit_loads * sizeof(float4) / seconds;
  const int fma_iterations = 65536;
  TPMG_CALL(time_launch(
      ctx, "fma_kernel<double>",
      [&] {
        fma_kernel<double>
            <<<blocks, limit_threads, 0, data->stream>>>(fma_iterations, 0.999999, 1e-7, sink);
      },
      &seconds));
  limits->flops_double = 2.0 * threads * fma_iterations * limit_chains / seconds;
  TPMG_CALL(time_launch(
      ctx, "fma_kernel<float>",
      [&] {
        fma_kernel<float><<<blocks, limit_threads, 0, data->stream>>>(
            fma_iterations, 0.999999f, 1e-7f, reinterpret_cast<float *>(sink));
      },
      &seconds));
  limits->flops_float = 2.0 * threads * fma_iterations * limit_chains / seconds;
  return TPMG_SUCCESS;
}

} // namespace

} // namespace tpmg_cuda

extern "C" const tpmg_backend_ops tpmg_cuda_backend = {
    "cuda",
    TPMG_MEMORY_DEVICE,
    1000000, /* whole_level_dofs: doc/benchmarks.md, "Several GPUs" */
    tpmg_cuda::init,
    tpmg_cuda::finalize,
    tpmg_cuda::alloc,
    tpmg_cuda::release,
    tpmg_cuda::upload,
    tpmg_cuda::download,
    tpmg_cuda::synchronize,
    tpmg_cuda::free_memory,
    tpmg_cuda::set_op,
    tpmg_cuda::axpby,
    tpmg_cuda::dot,
    tpmg_cuda::convert,
    tpmg_cuda::dots,
    tpmg_cuda::axpys,
    tpmg_cuda::laplace_op,
    tpmg_cuda::copy_boundary,
    tpmg_cuda::patch_fused_op,
    tpmg_cuda::patch_residual_op,
    tpmg_cuda::patch_solve_op,
    tpmg_cuda::prolongate_add_op,
    tpmg_cuda::restrict_op,
    tpmg_cuda::coarse_solve,
    tpmg_cuda::messages_start,
    tpmg_cuda::messages_wait,
    tpmg_cuda::connect,
    tpmg_cuda::check_level,
    tpmg_cuda::stopwatch,
    tpmg_cuda::measure_limits,
    tpmg_cuda::operator_work_op,
    tpmg_cuda::smoother_work_op,
};
