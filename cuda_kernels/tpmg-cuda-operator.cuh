/* The level operator of the CUDA backend, dst = A src, for every kernel of the
 * dispatch table (tpmg-cuda-dispatch.cuh): the vertex-patch gather kernels
 * (basic, constant, tiled), one thread per row (thread) and the bricks of
 * tpmg-cuda-brick.cuh; and their counted work per DoF. Included only by
 * tpmg-cuda-operator-{2,3}d.cu. */
#ifndef TPMG_CUDA_OPERATOR_CUH
#define TPMG_CUDA_OPERATOR_CUH

#include "tpmg-cuda-brick.cuh"
#include "tpmg-cuda-dispatch.cuh"
#include "tpmg-cuda-launch.cuh"
#include "tpmg-cuda-tensor.cuh"
#include "tpmg-cuda-unit.cuh"

namespace tpmg_cuda {

/* Where the constant kernels are block-linear rather than team kernels, as
 * measured on the H200 (doc/benchmarks.md; see linear_smoother in
 * tpmg-cuda-smoother.cuh). */
template <int dim, int k, typename T> constexpr bool linear_operator() {
  return dim == 3 && k <= 3;
}

/* dst = A src as a gather: the team of vertex c (c_d = 0..cells_d) computes the
 * rows c_d k .. c_d k + k - 1 it owns from the window (c_d - 1) k .. (c_d + 1) k,
 * i.e. rows k..2k-1 of the vertex-patch matrices, so every row is summed by one
 * thread in a fixed order (no atomics, deterministic). Dirichlet rows copy src.
 * Counts per DoF (3D): (2 k P^3 + 3 k^2 P^2 + 2 k^3 P) / k^3 multiply-adds,
 * P^3 / k^3 (cached) loads, one store. */
template <int dim, int k, typename T>
using laplace_config = team_config<ipow(2 * k + 1, dim - 1), 2 * k * ipow(2 * k + 1, dim - 1), T>;

template <int dim, int k, typename T, typename Constants>
__global__ void laplace_kernel(const tpmg_level lvl, const item_grid grid,
                               const T *__restrict__ src, T *__restrict__ dst,
                               const __grid_constant__ Constants constants) {
  using config = laplace_config<dim, k, T>;
  constexpr int RV = ipow(k, dim);
  const auto mat = matrices_of<T>(lvl, constants);
  T *s1 = team_shared<T, config::values>();
  T *s2 = s1 + config::values / 2;
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index start[3] = {0, 0, 0}, t[3];
  if (active)
    item_start(grid, item, start, t);
  apply_patch_rows<dim, k, k, k>(lvl, mat, src, start, active, rank, s1, s2, s1);
  if (!active)
    return;
  for (int l = rank; l < RV; l += config::team) {
    const int r[3] = {l % k, (l / k) % k, dim == 3 ? l / (k * k) : 0};
    bool exists = true, interior = true;
    tpmg_index g = 0;
    for (int d = dim - 1; d >= 0; --d) {
      const tpmg_index gd = start[d] + k + r[d];
      exists = exists && gd < lvl.n[d];
      interior = interior && inside(gd, lvl.n[d]);
      g = g * lvl.n[d] + gd;
    }
    if (exists)
      dst[g] = interior ? s1[l] : src[g];
  }
}

template <int dim, int k, typename T, int W = 1>
using laplace_linear =
    linear_config<dim, ipow(2 * k + 1, dim - 1), 2 * k * ipow(2 * k + 1, dim - 1), T, W>;

/* The operator, constant (W = 1) and tiled (W lines per thread): as
 * laplace_kernel with the unit patch's matrices in the parameters, skipping
 * their zero blocks, and block-linear stages. */
template <int dim, int k, typename T, int W>
__global__ void __launch_bounds__(laplace_linear<dim, k, T, W>::threads,
                                  laplace_linear<dim, k, T, W>::min_blocks)
    laplace_linear_kernel(const tpmg_level lvl, const item_grid grid, const T *__restrict__ src,
                          T *__restrict__ dst,
                          const __grid_constant__ reference_data<k, T> constants) {
  using config = laplace_linear<dim, k, T, W>;
  constexpr int RV = ipow(k, dim), teams = config::teams, S = config::threads;
  __shared__ team_info<teams> info;
  T *shared = block_shared<T>();
  const auto mat = matrices_of<T>(lvl, constants);
  setup_teams<dim>(lvl, grid, blockIdx.x, info);
  apply_patch_rows_linear<dim, k, k, k, teams, W>(lvl, mat, src, info, shared, config::values);
  for (int l = threadIdx.x; l < teams * RV; l += S) {
    const int j = l / RV, p = l % RV;
    if (!info.active[j])
      continue;
    const int r[3] = {p % k, (p / k) % k, dim == 3 ? p / (k * k) : 0};
    bool exists = true, interior = true;
    tpmg_index g = 0;
    for (int d = dim - 1; d >= 0; --d) {
      const tpmg_index gd = info.start[j][d] + k + r[d];
      exists = exists && gd < lvl.n[d];
      interior = interior && inside(gd, lvl.n[d]);
      g = g * lvl.n[d] + gd;
    }
    if (exists)
      dst[g] = interior ? shared[j * config::values + rows_index<dim, k>(p)] : src[g];
  }
}

/* Degree 1, one thread per row: 87 multiply-adds (3D) from the 27 (cached)
 * values around it, one store. */
template <int dim, typename T>
__global__ void __launch_bounds__(point_threads)
    laplace_point_kernel(const item_grid grid, const tpmg_level lvl, const T *__restrict__ src,
                         T *__restrict__ dst,
                         const __grid_constant__ reference_data<1, T> constants) {
  const auto mat = matrices_of<T>(lvl, constants);
  for_each_point(grid, [&](const tpmg_index(&i)[3]) {
    const tpmg_index g = i[0] + lvl.n[0] * (i[1] + lvl.n[1] * i[2]);
    bool interior = true;
#pragma unroll
    for (int d = 0; d < dim; ++d)
      interior = interior && inside(i[d], lvl.n[d]);
    if (interior) {
      const tpmg_index first[3] = {i[0] - 1, i[1] - 1, dim == 3 ? i[2] - 1 : 0};
      dst[g] = centre_row<dim>(lvl, mat, src, first);
    } else {
      dst[g] = src[g];
    }
  });
}

template <int dim>
tpmg_status laplace(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec, const void *src,
                    void *dst) {
  return dispatch<dim, TPMG_USE_OPERATOR>(
      ctx, lvl->degree, prec, [&](auto K, auto zero, auto kern) -> tpmg_status {
        constexpr int k = decltype(K)::value;
        using T = decltype(zero);
        constexpr kernel_kind kind = decltype(kern)::value;
        const T *s = static_cast<const T *>(src);
        T *d = static_cast<T *>(dst);
        /* the vertices c_d = 0..cells_d, closed patches from (c_d - 1) k */
        item_grid grid{};
        grid.total = 1;
        for (int e = 0; e < 3; ++e) {
          const bool real = e < dim;
          grid.count[e] = real ? lvl->cells[e] + 1 : 1;
          grid.offset[e] = real ? -lvl->degree : 0;
          grid.step[e] = real ? lvl->degree : 0;
          grid.total *= grid.count[e];
        }
        if constexpr (kind == kernel_kind::basic) {
          return launch_teams<laplace_config<dim, k, T>>(
              ctx, "laplace_kernel", laplace_kernel<dim, k, T, no_constants>, grid.total, *lvl,
              grid, s, d, no_constants{});
        } else {
          reference_data<k, T> c;
          TPMG_CALL(level_constants(ctx, lvl, &c));
          if constexpr (kind == kernel_kind::thread)
            return launch_points(ctx, "laplace_point_kernel", laplace_point_kernel<dim, T>,
                                 point_grid(lvl), *lvl, s, d, c);
          else if constexpr (kind == kernel_kind::brick)
            return laplace_brick<dim, k, T>(ctx, lvl, c, s, d);
          else if constexpr (kind == kernel_kind::tiled)
            return launch_linear<laplace_linear<dim, k, T, tiled_lines>>(
                ctx, "laplace_linear_kernel (tiled)", laplace_linear_kernel<dim, k, T, tiled_lines>,
                grid.total, *lvl, grid, s, d, c);
          else if constexpr (!linear_operator<dim, k, T>())
            return launch_teams<laplace_config<dim, k, T>>(
                ctx, "laplace_kernel", laplace_kernel<dim, k, T, reference_data<k, T>>, grid.total,
                *lvl, grid, s, d, c);
          else
            return launch_linear<laplace_linear<dim, k, T>>(ctx, "laplace_linear_kernel",
                                                            laplace_linear_kernel<dim, k, T, 1>,
                                                            grid.total, *lvl, grid, s, d, c);
        }
      });
}

/* The work per DoF of the operator's kernel (tpmg_operator_work): the
 * vertex-patch gather's by tpmg_work_operator, or per brick (the counts of
 * tpmg-cuda-brick.cuh's head comment: (k+2) (2 w^2 + 3 w + 2) multiply-adds
 * in 3D, (k+2) (2 w + 2) in 2D, 4 w^2 + 4 w + 2 (2D: 4 w + 2) shared-memory
 * words, w = W / R, R = C k owned points and W = R + k + 1 window points per
 * direction with C = brick_table's cells; the 1D scalings and the 3D z carry
 * neglected). */
template <int dim>
tpmg_status operator_work(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                          tpmg_work *work) {
  kernel_kind kern = kernel_kind::basic;
  TPMG_CALL(kernel_of<dim>(ctx, lvl->degree, prec, TPMG_USE_OPERATOR, &kern));
  if (kern == kernel_kind::brick)
    TPMG_CALL(select<dim>(ctx, lvl->degree, prec, [&](auto K, auto zero) -> tpmg_status {
      constexpr int k = decltype(K)::value;
      const double R = double(brick_table<dim, k, decltype(zero)>().cells) * k;
      const double w = (R + k + 1) / R;
      work->flops = 2.0 * (k + 2) * (dim == 2 ? 2 * w + 2 : 2 * w * w + 3 * w + 2);
      work->shared_words = dim == 2 ? 4 * w + 2 : 4 * w * w + 4 * w + 2;
      work->matrix_words = 0;
      work->memory_words = 2;
      return TPMG_SUCCESS;
    }));
  else
    tpmg_work_operator(lvl, kern != kernel_kind::basic, kern != kernel_kind::thread,
                       kern == kernel_kind::basic, work);
  work->kernel = kernel_name(kern);
  return TPMG_SUCCESS;
}

} // namespace tpmg_cuda

#endif
