/* The CUDA backend's vector operations: set, axpby, dot, the fused dots and
 * axpys of GMRES, convert and copy_boundary. Every reduction sums in double in
 * an order fixed by the vector length alone. */
#include "tpmg-cuda-launch.cuh"
#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

namespace {

/* dot: at most dot_max_blocks contiguous chunks of at least dot_min_chunk
 * entries, each summed by one block in a fixed order, then the partials by one
 * block in a fixed order: the result depends on n only. dots, axpys: as many
 * blocks, striding over the whole vector (a grid fixed by n, so the sums are
 * fixed by n too; contiguous chunks made axpys 25-35% slower than axpby on the
 * H200), one row of partials per sum. backend_data::partials holds rows
 * 0..TPMG_MULTI_MAX of dot_max_blocks partials, then one result per row. */
constexpr int dot_threads = 256;
constexpr int dot_warps = dot_threads / 32;
constexpr tpmg_index dot_min_chunk = 4096;

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

/* The vectors and factors of one dots or axpys call, in the kernel parameters:
 * the x_v of type X, the factors of y's type A. */
template <typename X, typename A = X> struct multi_vectors {
  const X *x[TPMG_MULTI_MAX];
  A a[TPMG_MULTI_MAX];
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

/* axpys on m vectors: y += sum_v a_v x_v in order, the x_v of type X (T, or
 * float for a double y: widened exactly, so the sums are those of their double
 * copies); with_norm: (y, y) of the stored y in the last row. */
template <typename X, typename T, int m, bool with_norm>
__global__ void __launch_bounds__(dot_threads)
    axpys_kernel(tpmg_index n, const multi_vectors<X, T> vectors, T *__restrict__ y,
                 double *__restrict__ partials) {
  double s[1] = {0};
#pragma unroll 4
  for (tpmg_index i = grid_start(); i < n; i += grid_stride()) {
    T value = y[i];
#pragma unroll
    for (int v = 0; v < m; ++v)
      value += vectors.a[v] * T(__ldg(vectors.x[v] + i));
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

/* The blocks of dot (and dots, axpys) for n entries. */
tpmg_index dot_blocks(tpmg_index n) {
  const tpmg_index blocks = (n + dot_min_chunk - 1) / dot_min_chunk;
  return blocks < dot_max_blocks ? blocks : dot_max_blocks;
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

template <typename X, typename A = X>
multi_vectors<X, A> multi_of(int m, const void *const *x, const double *a) {
  multi_vectors<X, A> vectors{};
  for (int v = 0; v < m; ++v) {
    vectors.x[v] = static_cast<const X *>(x[v]);
    vectors.a[v] = a ? A(a[v]) : A(0);
  }
  return vectors;
}

/* One axpys launch, the x_v of type X into y of type T. */
template <typename X, typename T, int count>
void launch_axpys(tpmg_index n, int m, const double *a, const void *const *x, void *y, bool norm,
                  unsigned grid, backend_data *data) {
  const auto vectors = multi_of<X, T>(m, x, a);
  if (norm)
    axpys_kernel<X, T, count, true>
        <<<grid, dot_threads, 0, data->stream>>>(n, vectors, static_cast<T *>(y), data->partials);
  else
    axpys_kernel<X, T, count, false>
        <<<grid, dot_threads, 0, data->stream>>>(n, vectors, static_cast<T *>(y), data->partials);
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
                  tpmg_precision x_prec, const void *const *x, void *y, double *norm2) {
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
    if (prec == TPMG_FLOAT)
      launch_axpys<float, float, count>(n, m, a, x, y, norm2, grid, data);
    else if (x_prec == TPMG_FLOAT)
      launch_axpys<float, double, count>(n, m, a, x, y, norm2, grid, data);
    else
      launch_axpys<double, double, count>(n, m, a, x, y, norm2, grid, data);
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

} // namespace tpmg_cuda
