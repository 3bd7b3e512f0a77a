/* The CUDA backend's coarse solve: x_I = inverse b_I with the dense inverse
 * of the coarse level's interior matrix (tpmg-coarse.c builds it), x_B = 0. */
#include "tpmg-cuda-launch.cuh"
#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

namespace {

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

} // namespace

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

} // namespace tpmg_cuda
