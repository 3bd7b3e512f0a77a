/* The vertex-patch smoother of the CUDA backend (paper Algorithm 3, Table 4):
 * the kernels of FUSED and BOUNDARY (patch_fused), SEPARATE's residual pass
 * (patch_residual) and the local solves (patch_solve) for every kernel of the
 * dispatch table (tpmg-cuda-dispatch.cuh), templated on dimension, degree and
 * precision. Included only by tpmg-cuda-smoother-{2,3}d.cu.
 *
 * Counted work per DoF of a smoothing step (all colours), with P = 2k+1,
 * I = 2k-1 and n_dofs / k^dim patches (one per vertex), 3D:
 *   multiply-adds  (2 I P^3 + 3 I^2 P^2 + 2 I^3 P + 6 I^4) / k^3
 *   shared memory  (4 I P^2 + 4 I^2 P + 3 I^3 + 9 I^3) / k^3 words (fused)
 *   device memory  read x, b and write x about once per colour (cached
 *                  overlaps), 3 (2^dim) values per DoF
 * Device memory by word, per colour, with the windows' shared planes read once
 * (cached) and f = (I / 2k)^dim the fraction of DoFs in the colour's patch
 * interiors: FUSED reads x on the whole window (1), b_I (f) and x_I again for
 * x_I += w (f, mostly cached) and writes x_I (f): 1 + 3f, about 3; BOUNDARY
 * (TPMG_SMOOTHER_BOUNDARY) reads x only on the patch boundaries (1 - f), b_I
 * (f) and stores x_I (f) without reading it: 1 + f. Per DoF of a step, times
 * 2^dim: 3D Q2 FUSED 18.1 (14.8 without the repeated read), BOUNDARY 11.4;
 * 3D Q4 FUSED 24.1 (18.7), BOUNDARY 13.4.
 * tpmg_smoother_work returns these counts (c_api/src/tpmg-work.c). */
#ifndef TPMG_CUDA_SMOOTHER_CUH
#define TPMG_CUDA_SMOOTHER_CUH

#include "tpmg-cuda-dispatch.cuh"
#include "tpmg-cuda-launch.cuh"
#include "tpmg-cuda-tensor.cuh"
#include "tpmg-cuda-unit.cuh"

namespace tpmg_cuda {

/* Where the constant kernels are block-linear rather than team kernels (both
 * with the unit patch's matrices in the parameters), as measured on the H200
 * (doc/benchmarks.md): in 3D, where their stages are free of bank conflicts
 * (tpmg-cuda-tensor.cuh). Before those layouts the team kernels were faster
 * at 3D k = 4..7 in float and k = 4, 5 in double; with them the linear fused
 * step is 1-19% faster than the team one there (the separate variant's
 * residual 4-7% slower in float at k = 5..7). */
template <int dim> constexpr bool linear_smoother() {
  return dim == 3;
}

template <int dim, int k, typename T>
using residual_config =
    team_config<ipow(2 * k + 1, dim - 1), 2 * (2 * k - 1) * ipow(2 * k + 1, dim - 1), T>;
template <int dim, int k, typename T>
using solve_config = team_config<ipow(2 * k - 1, dim - 1), ipow(2 * k - 1, dim), T>;

/* FUSED (paper Table 4): r_I = b_I - (Abar xbar)_I and x_I += A_I^{-1} r_I for
 * every patch of one colour, the residual kept in shared memory. boundary
 * (TPMG_SMOOTHER_BOUNDARY): xbar's interior read as zero, so r_I = b_I - A_IB
 * x_B, and x_I = A_I^{-1} r_I stored; x_I is never read. */
template <int dim, int k, typename T, typename Constants, bool boundary>
__global__ void patch_fused_kernel(const tpmg_level lvl, const item_grid grid,
                                   const T *__restrict__ b, T *x,
                                   const __grid_constant__ Constants constants) {
  using config = residual_config<dim, k, T>;
  constexpr int I = 2 * k - 1, IV = ipow(I, dim);
  const auto mat = matrices_of<T>(lvl, constants);
  T *s1 = team_shared<T, config::values>();
  T *s2 = s1 + config::values / 2;
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index start[3] = {0, 0, 0}, t[3];
  if (active)
    item_start(grid, item, start, t);
  apply_patch_rows<dim, k, 1, I, boundary>(lvl, mat, x, start, active, rank, s1, s2, s1);
  const tpmg_index base = interior_base<dim>(lvl, start);
  if (active)
    for (int l = rank; l < IV; l += config::team)
      s1[l] = b[base + tensor_offset<dim, I>(lvl, l)] - s1[l];
  __syncthreads();
  fast_diagonalization<dim, k, boundary>(lvl, mat, active, rank, s1, base, x);
}

/* SEPARATE, first half: r_I = b_I - (Abar xbar)_I on the patches of a colour. */
template <int dim, int k, typename T, typename Constants>
__global__ void patch_residual_kernel(const tpmg_level lvl, const item_grid grid,
                                      const T *__restrict__ b, const T *__restrict__ x,
                                      T *__restrict__ r,
                                      const __grid_constant__ Constants constants) {
  using config = residual_config<dim, k, T>;
  constexpr int I = 2 * k - 1, IV = ipow(I, dim);
  const auto mat = matrices_of<T>(lvl, constants);
  T *s1 = team_shared<T, config::values>();
  T *s2 = s1 + config::values / 2;
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index start[3] = {0, 0, 0}, t[3];
  if (active)
    item_start(grid, item, start, t);
  apply_patch_rows<dim, k, 1, I>(lvl, mat, x, start, active, rank, s1, s2, s1);
  if (!active)
    return;
  const tpmg_index base = interior_base<dim>(lvl, start);
  for (int l = rank; l < IV; l += config::team) {
    const tpmg_index g = base + tensor_offset<dim, I>(lvl, l);
    r[g] = b[g] - s1[l];
  }
}

/* GLOBAL and SEPARATE, second half: x_I += A_I^{-1} r_I on the patches of a
 * colour. coefficient: on a level with a variable coefficient, A_I the
 * patch's surrogate (see no_surrogate in tpmg-cuda-tensor.cuh). */
template <int dim, int k, typename T, typename Constants, bool coefficient>
__global__ void patch_solve_kernel(const tpmg_level lvl, const item_grid grid,
                                   const T *__restrict__ r, T *__restrict__ x,
                                   const __grid_constant__ Constants constants) {
  using config = solve_config<dim, k, T>;
  constexpr int I = 2 * k - 1, IV = ipow(I, dim);
  const auto mat = matrices_of<T>(lvl, constants);
  T *u = team_shared<T, config::values>();
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index start[3] = {0, 0, 0}, t[3];
  if (active)
    item_start(grid, item, start, t);
  const tpmg_index base = interior_base<dim>(lvl, start);
  if (active)
    for (int l = rank; l < IV; l += config::team)
      u[l] = r[base + tensor_offset<dim, I>(lvl, l)];
  __syncthreads();
  if constexpr (coefficient) {
    const bool mine[1] = {active};
    fast_diagonalization<dim, k>(lvl, mat, active, rank, u, base, x,
                                 surrogate_of<dim, k, 1, T>(lvl, mine, [&](int) { return start; }));
  } else {
    fast_diagonalization<dim, k>(lvl, mat, active, rank, u, base, x);
  }
}

template <int dim, int k, typename T, int W = 1>
using residual_linear =
    linear_config<dim, ipow(2 * k + 1, dim - 1), 2 * (2 * k - 1) * ipow(2 * k + 1, dim - 1), T, W>;
/* the local solves in 3D alternate between two tensors of I^3 values */
template <int dim, int k, typename T, int W = 1>
using solve_linear =
    linear_config<dim, ipow(2 * k - 1, dim - 1), (dim - 1) * ipow(2 * k - 1, dim), T, W>;

/* FUSED and BOUNDARY, the constant (W = 1) and tiled kernels (W lines per
 * thread): as patch_fused_kernel with the unit patch's matrices in the
 * parameters and block-linear stages. */
template <int dim, int k, typename T, int W, bool boundary>
__global__ void __launch_bounds__(residual_linear<dim, k, T, W>::threads,
                                  residual_linear<dim, k, T, W>::min_blocks)
    patch_fused_linear_kernel(const tpmg_level lvl, const item_grid grid, const T *__restrict__ b,
                              T *x, const __grid_constant__ reference_data<k, T> constants) {
  using config = residual_linear<dim, k, T, W>;
  constexpr int I = 2 * k - 1, teams = config::teams;
  __shared__ team_info<teams> info;
  T *shared = block_shared<T>();
  const auto mat = matrices_of<T>(lvl, constants);
  setup_teams<dim>(lvl, grid, blockIdx.x, info);
  apply_patch_rows_linear<dim, k, 1, I, teams, W, boundary>(lvl, mat, x, info, shared,
                                                            config::values);
  fast_diagonalization_linear<dim, k, teams, W, boundary, true>(lvl, mat, info, shared,
                                                                config::values, b, x);
}

/* SEPARATE's first half, the constant and tiled kernels. */
template <int dim, int k, typename T, int W>
__global__ void __launch_bounds__(residual_linear<dim, k, T, W>::threads,
                                  residual_linear<dim, k, T, W>::min_blocks)
    patch_residual_linear_kernel(const tpmg_level lvl, const item_grid grid,
                                 const T *__restrict__ b, const T *__restrict__ x,
                                 T *__restrict__ r,
                                 const __grid_constant__ reference_data<k, T> constants) {
  using config = residual_linear<dim, k, T, W>;
  constexpr int I = 2 * k - 1, IV = ipow(I, dim), teams = config::teams, S = config::threads;
  __shared__ team_info<teams> info;
  T *shared = block_shared<T>();
  const auto mat = matrices_of<T>(lvl, constants);
  setup_teams<dim>(lvl, grid, blockIdx.x, info);
  apply_patch_rows_linear<dim, k, 1, I, teams, W>(lvl, mat, x, info, shared, config::values);
  for (int l = threadIdx.x; l < teams * IV; l += S) {
    const int j = l / IV, p = l % IV;
    if (info.active[j]) {
      const tpmg_index g = info.base[j] + tensor_offset<dim, I>(lvl, p);
      r[g] = b[g] - shared[j * config::values + rows_index<dim, I>(p)];
    }
  }
}

/* The local solves, the constant and tiled kernels. */
template <int dim, int k, typename T, int W, bool coefficient>
__global__ void __launch_bounds__(solve_linear<dim, k, T, W>::threads,
                                  solve_linear<dim, k, T, W>::min_blocks)
    patch_solve_linear_kernel(const tpmg_level lvl, const item_grid grid, const T *__restrict__ r,
                              T *__restrict__ x,
                              const __grid_constant__ reference_data<k, T> constants) {
  using config = solve_linear<dim, k, T, W>;
  constexpr int teams = config::teams;
  __shared__ team_info<teams> info;
  T *shared = block_shared<T>();
  const auto mat = matrices_of<T>(lvl, constants);
  setup_teams<dim>(lvl, grid, blockIdx.x, info);
  fast_diagonalization_linear<dim, k, teams, W, false, false, coefficient>(lvl, mat, info, shared,
                                                                           config::values, r, x);
}

/* Degree 1, one thread per patch of a colour (the patch interior is its
 * centre): FUSED x_c += A_c^{-1} (b_c - (Abar xbar)_c). 87 multiply-adds and
 * 27 (cached) loads per patch in 3D. boundary: x_c = A_c^{-1} (b_c - A_cB x_B),
 * 26 loads, x_c stored and never read. */
template <int dim, typename T, bool boundary>
__global__ void __launch_bounds__(point_threads)
    patch_fused_point_kernel(const item_grid grid, const tpmg_level lvl, const T *__restrict__ b,
                             T *x, const __grid_constant__ reference_data<1, T> constants) {
  const auto mat = matrices_of<T>(lvl, constants);
  for_each_point(grid, [&](const tpmg_index(&start)[3]) {
    const tpmg_index c = interior_base<dim>(lvl, start);
    const T r = b[c] - centre_row<dim, boundary>(lvl, mat, x, start);
    update_interior<boundary>(x[c], centre_solve<dim>(lvl, mat, r));
  });
}

/* Degree 1, SEPARATE's first half: r_c = b_c - (Abar xbar)_c. */
template <int dim, typename T>
__global__ void __launch_bounds__(point_threads)
    patch_residual_point_kernel(const item_grid grid, const tpmg_level lvl, const T *__restrict__ b,
                                const T *__restrict__ x, T *__restrict__ r,
                                const __grid_constant__ reference_data<1, T> constants) {
  const auto mat = matrices_of<T>(lvl, constants);
  for_each_point(grid, [&](const tpmg_index(&start)[3]) {
    const tpmg_index c = interior_base<dim>(lvl, start);
    r[c] = b[c] - centre_row<dim>(lvl, mat, x, start);
  });
}

/* Degree 1, the local solves: x_c += A_c^{-1} r_c. */
template <int dim, typename T, bool coefficient>
__global__ void __launch_bounds__(point_threads)
    patch_solve_point_kernel(const item_grid grid, const tpmg_level lvl, const T *__restrict__ r,
                             T *__restrict__ x,
                             const __grid_constant__ reference_data<1, T> constants) {
  const auto mat = matrices_of<T>(lvl, constants);
  for_each_point(grid, [&](const tpmg_index(&start)[3]) {
    const tpmg_index c = interior_base<dim>(lvl, start);
    if constexpr (coefficient) {
      const bool mine[1] = {true};
      x[c] += centre_solve<dim>(lvl, mat, r[c],
                                surrogate_of<dim, 1, 1, T>(lvl, mine, [&](int) { return start; }));
    } else {
      x[c] += centre_solve<dim>(lvl, mat, r[c]);
    }
  });
}

/* FUSED (boundary false) or BOUNDARY (true), the kernels chosen as for FUSED. */
template <int dim, bool boundary>
tpmg_status patch_fused_variant(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                int colour, const tpmg_index vertices[2], const void *b, void *x) {
  const item_grid grid = patch_grid(lvl, colour, vertices);
  return dispatch<dim, TPMG_USE_SMOOTHER>(
      ctx, lvl->degree, prec, [&](auto K, auto zero, auto kern) -> tpmg_status {
        constexpr int k = decltype(K)::value;
        using T = decltype(zero);
        constexpr kernel_kind kind = decltype(kern)::value;
        const T *bv = static_cast<const T *>(b);
        T *xv = static_cast<T *>(x);
        if constexpr (kind == kernel_kind::basic) {
          return launch_teams<residual_config<dim, k, T>>(
              ctx, "patch_fused_kernel", patch_fused_kernel<dim, k, T, no_constants, boundary>,
              grid.total, *lvl, grid, bv, xv, no_constants{});
        } else {
          reference_data<k, T> c;
          TPMG_CALL(level_constants(ctx, lvl, &c));
          if constexpr (kind == kernel_kind::thread)
            return launch_points(ctx, "patch_fused_point_kernel",
                                 patch_fused_point_kernel<dim, T, boundary>, grid, *lvl, bv, xv, c);
          else if constexpr (kind == kernel_kind::tiled)
            return launch_linear<residual_linear<dim, k, T, tiled_lines>>(
                ctx, "patch_fused_linear_kernel (tiled)",
                patch_fused_linear_kernel<dim, k, T, tiled_lines, boundary>, grid.total, *lvl, grid,
                bv, xv, c);
          else if constexpr (!linear_smoother<dim>())
            return launch_teams<residual_config<dim, k, T>>(
                ctx, "patch_fused_kernel",
                patch_fused_kernel<dim, k, T, reference_data<k, T>, boundary>, grid.total, *lvl,
                grid, bv, xv, c);
          else
            return launch_linear<residual_linear<dim, k, T>>(
                ctx, "patch_fused_linear_kernel", patch_fused_linear_kernel<dim, k, T, 1, boundary>,
                grid.total, *lvl, grid, bv, xv, c);
        }
      });
}

template <int dim>
tpmg_status patch_fused(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec, int colour,
                        int boundary, const tpmg_index vertices[2], const void *b, void *x) {
  return boundary ? patch_fused_variant<dim, true>(ctx, lvl, prec, colour, vertices, b, x)
                  : patch_fused_variant<dim, false>(ctx, lvl, prec, colour, vertices, b, x);
}

template <int dim>
tpmg_status patch_residual(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           int colour, const void *b, const void *x, void *r) {
  const item_grid grid = patch_grid(lvl, colour);
  return dispatch<dim, TPMG_USE_SMOOTHER>(
      ctx, lvl->degree, prec, [&](auto K, auto zero, auto kern) -> tpmg_status {
        constexpr int k = decltype(K)::value;
        using T = decltype(zero);
        constexpr kernel_kind kind = decltype(kern)::value;
        const T *bv = static_cast<const T *>(b), *xv = static_cast<const T *>(x);
        T *rv = static_cast<T *>(r);
        if constexpr (kind == kernel_kind::basic) {
          return launch_teams<residual_config<dim, k, T>>(
              ctx, "patch_residual_kernel", patch_residual_kernel<dim, k, T, no_constants>,
              grid.total, *lvl, grid, bv, xv, rv, no_constants{});
        } else {
          reference_data<k, T> c;
          TPMG_CALL(level_constants(ctx, lvl, &c));
          if constexpr (kind == kernel_kind::thread)
            return launch_points(ctx, "patch_residual_point_kernel",
                                 patch_residual_point_kernel<dim, T>, grid, *lvl, bv, xv, rv, c);
          else if constexpr (kind == kernel_kind::tiled)
            return launch_linear<residual_linear<dim, k, T, tiled_lines>>(
                ctx, "patch_residual_linear_kernel (tiled)",
                patch_residual_linear_kernel<dim, k, T, tiled_lines>, grid.total, *lvl, grid, bv,
                xv, rv, c);
          else if constexpr (!linear_smoother<dim>())
            return launch_teams<residual_config<dim, k, T>>(
                ctx, "patch_residual_kernel",
                patch_residual_kernel<dim, k, T, reference_data<k, T>>, grid.total, *lvl, grid, bv,
                xv, rv, c);
          else
            return launch_linear<residual_linear<dim, k, T>>(
                ctx, "patch_residual_linear_kernel", patch_residual_linear_kernel<dim, k, T, 1>,
                grid.total, *lvl, grid, bv, xv, rv, c);
        }
      });
}

/* The local solves of a level with (coefficient) or without a variable
 * coefficient: separate instantiations, so the latter's stay as they were. */
template <int dim, bool coefficient>
tpmg_status patch_solve_with(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             int colour, const void *r, void *x) {
  const item_grid grid = patch_grid(lvl, colour);
  return dispatch<dim, TPMG_USE_SMOOTHER>(
      ctx, lvl->degree, prec, [&](auto K, auto zero, auto kern) -> tpmg_status {
        constexpr int k = decltype(K)::value;
        using T = decltype(zero);
        constexpr kernel_kind kind = decltype(kern)::value;
        const T *rv = static_cast<const T *>(r);
        T *xv = static_cast<T *>(x);
        if constexpr (kind == kernel_kind::basic) {
          return launch_teams<solve_config<dim, k, T>>(
              ctx, "patch_solve_kernel", patch_solve_kernel<dim, k, T, no_constants, coefficient>,
              grid.total, *lvl, grid, rv, xv, no_constants{});
        } else {
          reference_data<k, T> c;
          TPMG_CALL(level_constants(ctx, lvl, &c));
          if constexpr (kind == kernel_kind::thread)
            return launch_points(ctx, "patch_solve_point_kernel",
                                 patch_solve_point_kernel<dim, T, coefficient>, grid, *lvl, rv, xv,
                                 c);
          else if constexpr (kind == kernel_kind::tiled)
            return launch_linear<solve_linear<dim, k, T, tiled_lines>>(
                ctx, "patch_solve_linear_kernel (tiled)",
                patch_solve_linear_kernel<dim, k, T, tiled_lines, coefficient>, grid.total, *lvl,
                grid, rv, xv, c);
          else if constexpr (!linear_smoother<dim>())
            return launch_teams<solve_config<dim, k, T>>(
                ctx, "patch_solve_kernel",
                patch_solve_kernel<dim, k, T, reference_data<k, T>, coefficient>, grid.total, *lvl,
                grid, rv, xv, c);
          else
            return launch_linear<solve_linear<dim, k, T>>(
                ctx, "patch_solve_linear_kernel",
                patch_solve_linear_kernel<dim, k, T, 1, coefficient>, grid.total, *lvl, grid, rv,
                xv, c);
        }
      });
}

template <int dim>
tpmg_status patch_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec, int colour,
                        const void *r, void *x) {
  return lvl->coefficient[prec] ? patch_solve_with<dim, true>(ctx, lvl, prec, colour, r, x)
                                : patch_solve_with<dim, false>(ctx, lvl, prec, colour, r, x);
}

} // namespace tpmg_cuda

#endif
