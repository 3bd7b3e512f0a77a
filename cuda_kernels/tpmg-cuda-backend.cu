/* The CUDA backend: device, stream and memory, the vector kernels, and the
 * table tpmg_cuda_backend through which the core calls every operation. The
 * level kernels live in tpmg-cuda-kernels.cuh, instantiated per dimension.
 *
 * All work of a context runs on its own stream; host transfers and reductions
 * synchronize that stream. Every CUDA call and launch is checked and becomes
 * TPMG_ERROR_BACKEND with the CUDA error's name. */
#include <stdlib.h>

#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

namespace {

constexpr int elementwise_threads = 256;
constexpr tpmg_index elementwise_max_blocks = 65536;

/* dot: at most dot_max_blocks contiguous chunks of at least dot_min_chunk
 * entries, each summed by one block in a fixed order, then the partials by one
 * block in a fixed order: the result depends on n only. dots, axpys: as many
 * blocks, striding over the whole vector (a grid fixed by n, so the sums are
 * fixed by n too; contiguous chunks made axpys 25-35% slower than axpby on the
 * H200), one row of partials per sum. backend_data::partials holds rows
 * 0..TPMG_MULTI_MAX of dot_max_blocks partials, then one result per row. */
constexpr int dot_threads = 256;
constexpr int dot_warps = dot_threads / 32;
constexpr int dot_max_blocks = 1024;
constexpr tpmg_index dot_min_chunk = 4096;
constexpr int dot_rows = TPMG_MULTI_MAX + 1;
constexpr int dot_results = dot_rows * dot_max_blocks; /* offset of the results */

unsigned elementwise_blocks(tpmg_index n) {
  tpmg_index blocks = (n + elementwise_threads - 1) / elementwise_threads;
  return unsigned(blocks < elementwise_max_blocks ? blocks : elementwise_max_blocks);
}

__device__ __forceinline__ tpmg_index grid_start() {
  return tpmg_index(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ tpmg_index grid_stride() {
  return tpmg_index(gridDim.x) * blockDim.x;
}

/* Whether DoF `index` of the level is a Dirichlet DoF. */
__device__ __forceinline__ bool dirichlet(const tpmg_level &lvl, tpmg_index index) {
  const tpmg_index i0 = index % lvl.n[0], rest = index / lvl.n[0];
  const tpmg_index i1 = rest % lvl.n[1], i2 = rest / lvl.n[1];
  return i0 == 0 || i0 == lvl.n[0] - 1 || i1 == 0 || i1 == lvl.n[1] - 1 ||
         (lvl.dim == 3 && (i2 == 0 || i2 == lvl.n[2] - 1));
}

template <typename T> __global__ void set_kernel(tpmg_index n, T value, T *__restrict__ v) {
  for (tpmg_index i = grid_start(); i < n; i += grid_stride())
    v[i] = value;
}

template <typename T>
__global__ void axpby_kernel(tpmg_index n, T a, const T *__restrict__ x, T b, T *__restrict__ y) {
  if (b == T(0))
    for (tpmg_index i = grid_start(); i < n; i += grid_stride())
      y[i] = a * x[i];
  else
    for (tpmg_index i = grid_start(); i < n; i += grid_stride())
      y[i] = a * x[i] + b * y[i];
}

template <typename S, typename D>
__global__ void convert_kernel(tpmg_index n, const S *__restrict__ src, D *__restrict__ dst) {
  for (tpmg_index i = grid_start(); i < n; i += grid_stride())
    dst[i] = D(src[i]);
}

/* Sum of a block's values in shared memory, a fixed tree; the result in sum[0]. */
__device__ void block_sum(double *sum) {
  for (int width = dot_threads / 2; width > 0; width /= 2) {
    __syncthreads();
    if (int(threadIdx.x) < width)
      sum[threadIdx.x] += sum[threadIdx.x + width];
  }
}

template <typename T>
__global__ void __launch_bounds__(dot_threads)
    dot_partial_kernel(tpmg_index n, tpmg_index chunk, const T *__restrict__ x,
                       const T *__restrict__ y, double *__restrict__ partials) {
  __shared__ double sum[dot_threads];
  const tpmg_index begin = tpmg_index(blockIdx.x) * chunk;
  const tpmg_index end = begin + chunk < n ? begin + chunk : n;
  double s = 0;
  for (tpmg_index i = begin + threadIdx.x; i < end; i += dot_threads)
    s += double(x[i]) * double(y[i]);
  sum[threadIdx.x] = s;
  block_sum(sum);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = sum[0];
}

/* Block b sums the n_partials partials of row b < m, or of row dot_rows - 1
 * (dots' (y, y)) for b = m, into the row's result. */
__global__ void __launch_bounds__(dot_threads)
    dot_final_kernel(int n_partials, int m, double *__restrict__ partials) {
  __shared__ double sum[dot_threads];
  const int row = int(blockIdx.x) < m ? int(blockIdx.x) : dot_rows - 1;
  double s = 0;
  for (int i = threadIdx.x; i < n_partials; i += dot_threads)
    s += partials[row * dot_max_blocks + i];
  sum[threadIdx.x] = s;
  block_sum(sum);
  if (threadIdx.x == 0)
    partials[dot_results + row] = sum[0];
}

/* The vectors and factors of one dots or axpys call, in the kernel parameters. */
template <typename T> struct multi_vectors {
  const T *x[TPMG_MULTI_MAX];
  T a[TPMG_MULTI_MAX];
};

/* The block's sums of s[v], v < values, each in a fixed order (a shuffle tree
 * in every warp, then the warps in turn), stored as the block's partial of row
 * v, the last one in the last row (dot_rows - 1). */
template <int values>
__device__ void block_partials(double (&s)[values], double *__restrict__ partials) {
  __shared__ double warp_sum[dot_warps][values];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int v = 0; v < values; ++v) {
    for (int offset = 16; offset > 0; offset /= 2)
      s[v] += __shfl_down_sync(0xffffffffu, s[v], offset);
    if (lane == 0)
      warp_sum[warp][v] = s[v];
  }
  __syncthreads();
  const int v = threadIdx.x;
  if (v < values) {
    double total = 0;
    for (int w = 0; w < dot_warps; ++w)
      total += warp_sum[w][v];
    partials[(v == values - 1 ? dot_rows - 1 : v) * dot_max_blocks + blockIdx.x] = total;
  }
}

/* dots on m vectors: (x_v, y) in rows 0..m-1 and (y, y) in the last row. The
 * count is a template parameter: the loop body stays small enough for the
 * compiler to unroll it and keep several loads of every vector in flight
 * (with a run-time count, one of each: 0.3 to 0.1 of the copy bandwidth). */
template <typename T, int m>
__global__ void __launch_bounds__(dot_threads)
    dots_partial_kernel(tpmg_index n, const multi_vectors<T> vectors, const T *__restrict__ y,
                        double *__restrict__ partials) {
  double s[m + 1] = {};
#pragma unroll 4
  for (tpmg_index i = grid_start(); i < n; i += grid_stride()) {
    const double yi = y[i];
#pragma unroll
    for (int v = 0; v < m; ++v)
      s[v] += double(__ldg(vectors.x[v] + i)) * yi;
    s[m] += yi * yi;
  }
  block_partials(s, partials);
}

/* axpys on m vectors: y += sum_v a_v x_v in order; with_norm: (y, y) of the
 * stored y in the last row. */
template <typename T, int m, bool with_norm>
__global__ void __launch_bounds__(dot_threads)
    axpys_kernel(tpmg_index n, const multi_vectors<T> vectors, T *__restrict__ y,
                 double *__restrict__ partials) {
  double s[1] = {0};
#pragma unroll 4
  for (tpmg_index i = grid_start(); i < n; i += grid_stride()) {
    T value = y[i];
#pragma unroll
    for (int v = 0; v < m; ++v)
      value += vectors.a[v] * __ldg(vectors.x[v] + i);
    y[i] = value;
    if (with_norm)
      s[0] += double(value) * double(value);
  }
  if (with_norm)
    block_partials(s, partials);
}

/* f(std::integral_constant<int, m>{}) for the run-time count m, 1 <= m <=
 * TPMG_MULTI_MAX. */
template <int M = 1, typename F> void with_count(int m, F &&f) {
  if constexpr (M < TPMG_MULTI_MAX)
    if (m != M)
      return with_count<M + 1>(m, f);
  f(std::integral_constant<int, M>{});
}

template <typename T>
__global__ void copy_boundary_kernel(const tpmg_level lvl, const T *__restrict__ src,
                                     T *__restrict__ dst) {
  for (tpmg_index i = grid_start(); i < lvl.n_dofs; i += grid_stride())
    if (dirichlet(lvl, i))
      dst[i] = src[i];
}

/* One warp per DoF: x_B = 0, x_I = row of the dense inverse times b_I (interior
 * DoFs numbered lexicographically), summed by the lanes in a fixed order. */
template <typename T>
__global__ void coarse_solve_kernel(const tpmg_level lvl, tpmg_index n_interior,
                                    const T *__restrict__ inverse, const T *__restrict__ b,
                                    T *__restrict__ x) {
  const tpmg_index warp = grid_start() / 32, n_warps = grid_stride() / 32;
  const int lane = threadIdx.x % 32;
  const tpmg_index m0 = lvl.n[0] - 2, m1 = lvl.n[1] - 2;
  for (tpmg_index i = warp; i < lvl.n_dofs; i += n_warps) {
    if (dirichlet(lvl, i)) {
      if (lane == 0)
        x[i] = T(0);
      continue;
    }
    const tpmg_index i0 = i % lvl.n[0] - 1, i1 = (i / lvl.n[0]) % lvl.n[1] - 1;
    const tpmg_index i2 = lvl.dim == 3 ? i / (lvl.n[0] * lvl.n[1]) - 1 : 0;
    const T *row = inverse + (i0 + m0 * (i1 + m1 * i2)) * n_interior;
    T sum = 0;
    for (tpmg_index j = lane; j < n_interior; j += 32) {
      const tpmg_index j0 = j % m0 + 1, j1 = (j / m0) % m1 + 1;
      const tpmg_index j2 = lvl.dim == 3 ? j / (m0 * m1) + 1 : 0;
      sum += row[j] * b[j0 + lvl.n[0] * (j1 + lvl.n[1] * j2)];
    }
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0)
      x[i] = sum;
  }
}

/* Make the context's device current for this host thread. */
tpmg_status activate(tpmg_context *ctx) {
  TPMG_CUDA_CALL(ctx, cudaSetDevice(tpmg_backend_device(ctx)));
  return TPMG_SUCCESS;
}

tpmg_status init(tpmg_context *ctx) {
  if (tpmg_backend_variant(ctx))
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "the cuda backend has no variant \"%s\"", tpmg_backend_variant(ctx));
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess)
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "no usable CUDA device: %s", cudaGetErrorName(error));
  if (tpmg_backend_device(ctx) >= count)
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "CUDA device %d requested, %d present", tpmg_backend_device(ctx), count);
  TPMG_CALL(activate(ctx));
  backend_data *data = static_cast<backend_data *>(calloc(1, sizeof(backend_data)));
  TPMG_CHECK(ctx, data, TPMG_ERROR_MEMORY, "allocating the CUDA backend state failed");
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
  cudaSetDevice(tpmg_backend_device(ctx));
  cudaStreamSynchronize(data->stream);
  for (int p = 0; p < 2; ++p)
    for (int k = 0; k <= TPMG_MAX_DEGREE_2D; ++k)
      free(data->reference[p][k]);
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
  TPMG_CUDA_CALL(ctx, cudaMalloc(ptr, bytes));
  return TPMG_SUCCESS;
}

void release(tpmg_context *ctx, void *ptr) {
  /* The stream may still use the memory; cudaFree waits for the device. */
  cudaSetDevice(tpmg_backend_device(ctx));
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

tpmg_status axpby(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double a, const void *x,
                  double b, void *y) {
  TPMG_CALL(activate(ctx));
  if (n <= 0)
    return TPMG_SUCCESS;
  if (prec == TPMG_DOUBLE)
    axpby_kernel<<<elementwise_blocks(n), elementwise_threads, 0, stream_of(ctx)>>>(
        n, a, static_cast<const double *>(x), b, static_cast<double *>(y));
  else
    axpby_kernel<<<elementwise_blocks(n), elementwise_threads, 0, stream_of(ctx)>>>(
        n, float(a), static_cast<const float *>(x), float(b), static_cast<float *>(y));
  TPMG_CUDA_LAUNCHED(ctx, "axpby_kernel");
  return TPMG_SUCCESS;
}

/* The blocks of dot (and dots, axpys) for n entries. */
tpmg_index dot_blocks(tpmg_index n) {
  const tpmg_index blocks = (n + dot_min_chunk - 1) / dot_min_chunk;
  return blocks < dot_max_blocks ? blocks : dot_max_blocks;
}

tpmg_status dot(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, const void *x, const void *y,
                double *result) {
  TPMG_CALL(activate(ctx));
  if (n <= 0) {
    *result = 0;
    return TPMG_SUCCESS;
  }
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  const tpmg_index blocks = dot_blocks(n);
  const tpmg_index chunk = (n + blocks - 1) / blocks;
  if (prec == TPMG_DOUBLE)
    dot_partial_kernel<<<unsigned(blocks), dot_threads, 0, data->stream>>>(
        n, chunk, static_cast<const double *>(x), static_cast<const double *>(y), data->partials);
  else
    dot_partial_kernel<<<unsigned(blocks), dot_threads, 0, data->stream>>>(
        n, chunk, static_cast<const float *>(x), static_cast<const float *>(y), data->partials);
  TPMG_CUDA_LAUNCHED(ctx, "dot_partial_kernel");
  dot_final_kernel<<<1, dot_threads, 0, data->stream>>>(int(blocks), 1, data->partials);
  TPMG_CUDA_LAUNCHED(ctx, "dot_final_kernel");
  TPMG_CUDA_CALL(ctx, cudaMemcpyAsync(data->host_result, data->partials + dot_results,
                                      sizeof(double), cudaMemcpyDeviceToHost, data->stream));
  TPMG_CUDA_CALL(ctx, cudaStreamSynchronize(data->stream));
  *result = *data->host_result;
  return TPMG_SUCCESS;
}

/* Sum the rows' partials (rows 0..m-1 and the last), copy the results to
 * result[0..m] (the last row's to result[m]). */
tpmg_status finish_rows(tpmg_context *ctx, tpmg_index blocks, int m, double *result) {
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  dot_final_kernel<<<unsigned(m + 1), dot_threads, 0, data->stream>>>(int(blocks), m,
                                                                      data->partials);
  TPMG_CUDA_LAUNCHED(ctx, "dot_final_kernel");
  TPMG_CUDA_CALL(ctx,
                 cudaMemcpyAsync(data->host_result, data->partials + dot_results,
                                 dot_rows * sizeof(double), cudaMemcpyDeviceToHost, data->stream));
  TPMG_CUDA_CALL(ctx, cudaStreamSynchronize(data->stream));
  for (int v = 0; v < m; ++v)
    result[v] = data->host_result[v];
  result[m] = data->host_result[dot_rows - 1];
  return TPMG_SUCCESS;
}

template <typename T> multi_vectors<T> multi_of(int m, const void *const *x, const double *a) {
  multi_vectors<T> vectors{};
  for (int v = 0; v < m; ++v) {
    vectors.x[v] = static_cast<const T *>(x[v]);
    vectors.a[v] = a ? T(a[v]) : T(0);
  }
  return vectors;
}

tpmg_status dots(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, int m, const void *const *x,
                 const void *y, double *result) {
  TPMG_CALL(activate(ctx));
  if (n <= 0) {
    for (int v = 0; v <= m; ++v)
      result[v] = 0;
    return TPMG_SUCCESS;
  }
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  const tpmg_index blocks = dot_blocks(n);
  with_count(m, [&](auto M) {
    if (prec == TPMG_DOUBLE)
      dots_partial_kernel<double, M.value><<<unsigned(blocks), dot_threads, 0, data->stream>>>(
          n, multi_of<double>(m, x, nullptr), static_cast<const double *>(y), data->partials);
    else
      dots_partial_kernel<float, M.value><<<unsigned(blocks), dot_threads, 0, data->stream>>>(
          n, multi_of<float>(m, x, nullptr), static_cast<const float *>(y), data->partials);
  });
  TPMG_CUDA_LAUNCHED(ctx, "dots_partial_kernel");
  return finish_rows(ctx, blocks, m, result);
}

tpmg_status axpys(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, int m, const double *a,
                  const void *const *x, void *y, double *norm2) {
  TPMG_CALL(activate(ctx));
  if (n <= 0) {
    if (norm2)
      *norm2 = 0;
    return TPMG_SUCCESS;
  }
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  const tpmg_index blocks = dot_blocks(n);
  const unsigned grid = unsigned(blocks);
  with_count(m, [&](auto M) {
    constexpr int count = M.value;
    if (prec == TPMG_DOUBLE) {
      const auto vectors = multi_of<double>(m, x, a);
      if (norm2)
        axpys_kernel<double, count, true><<<grid, dot_threads, 0, data->stream>>>(
            n, vectors, static_cast<double *>(y), data->partials);
      else
        axpys_kernel<double, count, false><<<grid, dot_threads, 0, data->stream>>>(
            n, vectors, static_cast<double *>(y), data->partials);
    } else {
      const auto vectors = multi_of<float>(m, x, a);
      if (norm2)
        axpys_kernel<float, count, true><<<grid, dot_threads, 0, data->stream>>>(
            n, vectors, static_cast<float *>(y), data->partials);
      else
        axpys_kernel<float, count, false><<<grid, dot_threads, 0, data->stream>>>(
            n, vectors, static_cast<float *>(y), data->partials);
    }
  });
  TPMG_CUDA_LAUNCHED(ctx, "axpys_kernel");
  if (!norm2)
    return TPMG_SUCCESS;
  double result[1] = {0};
  TPMG_CALL(finish_rows(ctx, blocks, 0, result));
  *norm2 = result[0];
  return TPMG_SUCCESS;
}

tpmg_status convert(tpmg_context *ctx, tpmg_index n, tpmg_precision src_prec, const void *src,
                    tpmg_precision dst_prec, void *dst) {
  TPMG_CALL(activate(ctx));
  if (n <= 0)
    return TPMG_SUCCESS;
  if (src_prec == dst_prec) {
    if (src != dst)
      TPMG_CUDA_CALL(ctx, cudaMemcpyAsync(dst, src, size_t(n) * tpmg_precision_size(src_prec),
                                          cudaMemcpyDeviceToDevice, stream_of(ctx)));
    return TPMG_SUCCESS;
  }
  if (src_prec == TPMG_DOUBLE)
    convert_kernel<<<elementwise_blocks(n), elementwise_threads, 0, stream_of(ctx)>>>(
        n, static_cast<const double *>(src), static_cast<float *>(dst));
  else
    convert_kernel<<<elementwise_blocks(n), elementwise_threads, 0, stream_of(ctx)>>>(
        n, static_cast<const float *>(src), static_cast<double *>(dst));
  TPMG_CUDA_LAUNCHED(ctx, "convert_kernel");
  return TPMG_SUCCESS;
}

tpmg_status copy_boundary(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                          const void *src, void *dst) {
  TPMG_CALL(activate(ctx));
  const unsigned blocks = elementwise_blocks(lvl->n_dofs);
  if (prec == TPMG_DOUBLE)
    copy_boundary_kernel<<<blocks, elementwise_threads, 0, stream_of(ctx)>>>(
        *lvl, static_cast<const double *>(src), static_cast<double *>(dst));
  else
    copy_boundary_kernel<<<blocks, elementwise_threads, 0, stream_of(ctx)>>>(
        *lvl, static_cast<const float *>(src), static_cast<float *>(dst));
  TPMG_CUDA_LAUNCHED(ctx, "copy_boundary_kernel");
  return TPMG_SUCCESS;
}

tpmg_status coarse_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                         const void *inverse, const void *b, void *x) {
  TPMG_CALL(activate(ctx));
  tpmg_index n_interior = 1;
  for (int d = 0; d < lvl->dim; ++d)
    n_interior *= lvl->n[d] - 2;
  const unsigned blocks = elementwise_blocks(lvl->n_dofs * 32);
  if (prec == TPMG_DOUBLE)
    coarse_solve_kernel<<<blocks, elementwise_threads, 0, stream_of(ctx)>>>(
        *lvl, n_interior, static_cast<const double *>(inverse), static_cast<const double *>(b),
        static_cast<double *>(x));
  else
    coarse_solve_kernel<<<blocks, elementwise_threads, 0, stream_of(ctx)>>>(
        *lvl, n_interior, static_cast<const float *>(inverse), static_cast<const float *>(b),
        static_cast<float *>(x));
  TPMG_CUDA_LAUNCHED(ctx, "coarse_solve_kernel");
  return TPMG_SUCCESS;
}

/* The level operations: make the device current, then dispatch on dimension
 * (degree and precision are dispatched inside). */
tpmg_status laplace_kernel_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                              tpmg_kernel kernel, const void *src, void *dst) {
  TPMG_CALL(activate(ctx));
  return lvl->dim == 2 ? laplace<2>(ctx, lvl, prec, kernel, src, dst)
                       : laplace<3>(ctx, lvl, prec, kernel, src, dst);
}

tpmg_status laplace_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                       const void *src, void *dst) {
  return laplace_kernel_op(ctx, lvl, prec, TPMG_KERNEL_DEFAULT, src, dst);
}

tpmg_status patch_fused_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           tpmg_kernel kernel, int colour, int boundary, const void *b, void *x) {
  TPMG_CALL(activate(ctx));
  return lvl->dim == 2 ? patch_fused<2>(ctx, lvl, prec, kernel, colour, boundary, b, x)
                       : patch_fused<3>(ctx, lvl, prec, kernel, colour, boundary, b, x);
}

tpmg_status patch_residual_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                              tpmg_kernel kernel, int colour, const void *b, const void *x,
                              void *r) {
  TPMG_CALL(activate(ctx));
  return lvl->dim == 2 ? patch_residual<2>(ctx, lvl, prec, kernel, colour, b, x, r)
                       : patch_residual<3>(ctx, lvl, prec, kernel, colour, b, x, r);
}

tpmg_status patch_solve_op(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           tpmg_kernel kernel, int colour, const void *r, void *x) {
  TPMG_CALL(activate(ctx));
  return lvl->dim == 2 ? patch_solve<2>(ctx, lvl, prec, kernel, colour, r, x)
                       : patch_solve<3>(ctx, lvl, prec, kernel, colour, r, x);
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

/* ---- benchmark support --------------------------------------------------- */

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

tpmg_status measure_limits(tpmg_context *ctx, double *limits) {
  TPMG_CALL(activate(ctx));
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  int sms = 0;
  TPMG_CUDA_CALL(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, tpmg_backend_device(ctx)));
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
  limits[TPMG_LIMIT_SHARED_BYTES] =
      threads * shared_iterations * limit_loads * sizeof(float4) / seconds;
  const int fma_iterations = 65536;
  TPMG_CALL(time_launch(
      ctx, "fma_kernel<double>",
      [&] {
        fma_kernel<double>
            <<<blocks, limit_threads, 0, data->stream>>>(fma_iterations, 0.999999, 1e-7, sink);
      },
      &seconds));
  limits[TPMG_LIMIT_FLOPS_DOUBLE] = 2.0 * threads * fma_iterations * limit_chains / seconds;
  TPMG_CALL(time_launch(
      ctx, "fma_kernel<float>",
      [&] {
        fma_kernel<float><<<blocks, limit_threads, 0, data->stream>>>(
            fma_iterations, 0.999999f, 1e-7f, reinterpret_cast<float *>(sink));
      },
      &seconds));
  limits[TPMG_LIMIT_FLOPS_FLOAT] = 2.0 * threads * fma_iterations * limit_chains / seconds;
  return TPMG_SUCCESS;
}

} // namespace

tpmg_status set(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double value, void *v) {
  if (n <= 0)
    return TPMG_SUCCESS;
  if (prec == TPMG_DOUBLE)
    set_kernel<<<elementwise_blocks(n), elementwise_threads, 0, stream_of(ctx)>>>(
        n, value, static_cast<double *>(v));
  else
    set_kernel<<<elementwise_blocks(n), elementwise_threads, 0, stream_of(ctx)>>>(
        n, float(value), static_cast<float *>(v));
  TPMG_CUDA_LAUNCHED(ctx, "set_kernel");
  return TPMG_SUCCESS;
}

} // namespace tpmg_cuda

extern "C" const tpmg_backend_ops tpmg_cuda_backend = {
    "cuda",
    TPMG_MEMORY_DEVICE,
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
    tpmg_cuda::laplace_kernel_op,
    tpmg_cuda::copy_boundary,
    tpmg_cuda::patch_fused_op,
    tpmg_cuda::patch_residual_op,
    tpmg_cuda::patch_solve_op,
    tpmg_cuda::prolongate_add_op,
    tpmg_cuda::restrict_op,
    tpmg_cuda::coarse_solve,
    tpmg_cuda::stopwatch,
    tpmg_cuda::measure_limits,
};
