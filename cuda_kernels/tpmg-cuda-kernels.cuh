/* The level kernels of the CUDA backend (one thin __global__ per operation)
 * and their host launchers, templated on dimension, degree and precision.
 * Included only by the instantiation files tpmg-cuda-{smoother,level}-{2,3}d.cu.
 *
 * Every kernel runs teams of threads, one vertex patch or cell per team and
 * several teams per block for small degrees (paper §3.1.2): threadIdx.x is the
 * rank in the team, threadIdx.y the team. Items past the end keep their team
 * at the block's barriers without touching memory. */
#ifndef TPMG_CUDA_KERNELS_CUH
#define TPMG_CUDA_KERNELS_CUH

#include "tpmg-cuda-tensor.cuh"
#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

__host__ __device__ constexpr int ipow(int base, int e) {
  return e == 0 ? 1 : base * ipow(base, e - 1);
}

/* Teams per block: about 128 threads, at most 48 KiB of shared memory unless
 * one team needs more (then one team and an opted-in larger limit). */
template <int team_threads, int team_values, typename T> struct team_config {
  static constexpr int team = team_threads;
  static constexpr int values = team_values;
  static constexpr size_t team_bytes = size_t(team_values) * sizeof(T);
  static constexpr int by_threads = team >= 128 ? 1 : 128 / team;
  static constexpr int by_memory = team_bytes >= 48 * 1024 ? 1 : int(48 * 1024 / team_bytes);
  static constexpr int teams = by_threads < by_memory ? by_threads : by_memory;
  static constexpr size_t bytes = size_t(teams) * team_bytes;
};

/* The shared memory of this thread's team. */
template <typename T, int values> __device__ __forceinline__ T *team_shared() {
  extern __shared__ __align__(16) unsigned char tpmg_cuda_shared[];
  return reinterpret_cast<T *>(tpmg_cuda_shared) + size_t(threadIdx.y) * values;
}

template <typename Config, typename Kernel, typename... Args>
tpmg_status launch_teams(tpmg_context *ctx, const char *name, Kernel kernel, tpmg_index items,
                         Args... args) {
  if (items <= 0)
    return TPMG_SUCCESS;
  const tpmg_index blocks = (items + Config::teams - 1) / Config::teams;
  if (blocks > 0x7fffffff)
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "%s: %lld thread blocks exceed the grid limit", name, (long long)blocks);
  if (Config::bytes > 48 * 1024)
    TPMG_CUDA_CALL(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(Config::bytes)));
  kernel<<<dim3(unsigned(blocks)), dim3(Config::team, Config::teams), Config::bytes,
           stream_of(ctx)>>>(args...);
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    return cuda_error(ctx, error, name, __FILE__, __LINE__);
  return TPMG_SUCCESS;
}

/* Patches of one colour: vertices v_d = 1 + c_d + 2 t_d, closed patches start
 * at (v_d - 1) k. */
inline item_grid patch_grid(const tpmg_level *lvl, int colour) {
  item_grid g{};
  g.total = 1;
  for (int d = 0; d < 3; ++d) {
    const bool real = d < lvl->dim;
    g.count[d] = real ? tpmg_level_patches_1d(lvl, d, colour) : 1;
    g.offset[d] = real ? ((colour >> d) & 1) * lvl->degree : 0;
    g.step[d] = real ? 2 * lvl->degree : 0;
    g.total *= g.count[d];
  }
  return g;
}

/* First interior point of the patch whose closed window starts at `start`. */
template <int dim>
__device__ __forceinline__ tpmg_index interior_base(const tpmg_level &lvl,
                                                    const tpmg_index (&start)[3]) {
  const tpmg_index z = dim == 3 ? start[2] + 1 : 0;
  return start[0] + 1 + lvl.n[0] * (start[1] + 1 + lvl.n[1] * z);
}

/* Global offset of point l of an E^dim tensor (x fastest) with strides n0, n0 n1. */
template <int dim, int E>
__device__ __forceinline__ tpmg_index tensor_offset(const tpmg_level &lvl, int l) {
  const int x = l % E, y = (l / E) % E, z = dim == 3 ? l / (E * E) : 0;
  return x + lvl.n[0] * (y + lvl.n[1] * z);
}

/* ---- smoother ----------------------------------------------------------- */

template <int dim, int k, typename T>
using residual_config =
    team_config<ipow(2 * k + 1, dim - 1), 2 * (2 * k - 1) * ipow(2 * k + 1, dim - 1), T>;
template <int dim, int k, typename T>
using solve_config = team_config<ipow(2 * k - 1, dim - 1), ipow(2 * k - 1, dim), T>;

/* FUSED (paper Table 4): r_I = b_I - (Abar xbar)_I and x_I += A_I^{-1} r_I for
 * every patch of one colour, the residual kept in shared memory. */
template <int dim, int k, typename T>
__global__ void patch_fused_kernel(const tpmg_level lvl, const item_grid grid,
                                   const T *__restrict__ b, T *x) {
  using config = residual_config<dim, k, T>;
  constexpr int I = 2 * k - 1, IV = ipow(I, dim);
  T *s1 = team_shared<T, config::values>();
  T *s2 = s1 + config::values / 2;
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index start[3] = {0, 0, 0}, t[3];
  if (active)
    item_start(grid, item, start, t);
  apply_patch_rows<dim, k, 1, I>(lvl, x, start, active, rank, s1, s2, s1);
  const tpmg_index base = interior_base<dim>(lvl, start);
  if (active)
    for (int l = rank; l < IV; l += config::team)
      s1[l] = b[base + tensor_offset<dim, I>(lvl, l)] - s1[l];
  __syncthreads();
  fast_diagonalization<dim, k>(lvl, active, rank, s1, base, x);
}

/* SEPARATE, first half: r_I = b_I - (Abar xbar)_I on the patches of a colour. */
template <int dim, int k, typename T>
__global__ void patch_residual_kernel(const tpmg_level lvl, const item_grid grid,
                                      const T *__restrict__ b, const T *__restrict__ x,
                                      T *__restrict__ r) {
  using config = residual_config<dim, k, T>;
  constexpr int I = 2 * k - 1, IV = ipow(I, dim);
  T *s1 = team_shared<T, config::values>();
  T *s2 = s1 + config::values / 2;
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index start[3] = {0, 0, 0}, t[3];
  if (active)
    item_start(grid, item, start, t);
  apply_patch_rows<dim, k, 1, I>(lvl, x, start, active, rank, s1, s2, s1);
  if (!active)
    return;
  const tpmg_index base = interior_base<dim>(lvl, start);
  for (int l = rank; l < IV; l += config::team) {
    const tpmg_index g = base + tensor_offset<dim, I>(lvl, l);
    r[g] = b[g] - s1[l];
  }
}

/* GLOBAL and SEPARATE, second half: x_I += A_I^{-1} r_I on the patches of a colour. */
template <int dim, int k, typename T>
__global__ void patch_solve_kernel(const tpmg_level lvl, const item_grid grid,
                                   const T *__restrict__ r, T *__restrict__ x) {
  using config = solve_config<dim, k, T>;
  constexpr int I = 2 * k - 1, IV = ipow(I, dim);
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
  fast_diagonalization<dim, k>(lvl, active, rank, u, base, x);
}

template <int dim>
tpmg_status patch_fused(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec, int colour,
                        const void *b, void *x) {
  return select<dim>(ctx, lvl->degree, prec, [&](auto K, auto zero) {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    return launch_teams<residual_config<dim, k, T>>(
        ctx, "patch_fused_kernel", patch_fused_kernel<dim, k, T>, patch_grid(lvl, colour).total,
        *lvl, patch_grid(lvl, colour), static_cast<const T *>(b), static_cast<T *>(x));
  });
}

template <int dim>
tpmg_status patch_residual(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           int colour, const void *b, const void *x, void *r) {
  return select<dim>(ctx, lvl->degree, prec, [&](auto K, auto zero) {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    return launch_teams<residual_config<dim, k, T>>(
        ctx, "patch_residual_kernel", patch_residual_kernel<dim, k, T>,
        patch_grid(lvl, colour).total, *lvl, patch_grid(lvl, colour), static_cast<const T *>(b),
        static_cast<const T *>(x), static_cast<T *>(r));
  });
}

template <int dim>
tpmg_status patch_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec, int colour,
                        const void *r, void *x) {
  return select<dim>(ctx, lvl->degree, prec, [&](auto K, auto zero) {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    return launch_teams<solve_config<dim, k, T>>(
        ctx, "patch_solve_kernel", patch_solve_kernel<dim, k, T>, patch_grid(lvl, colour).total,
        *lvl, patch_grid(lvl, colour), static_cast<const T *>(r), static_cast<T *>(x));
  });
}

/* ---- level operator ----------------------------------------------------- */

/* dst = A src as a gather: the team of vertex c (c_d = 0..cells_d) computes the
 * rows c_d k .. c_d k + k - 1 it owns from the window (c_d - 1) k .. (c_d + 1) k,
 * i.e. rows k..2k-1 of the vertex-patch matrices, so every row is summed by one
 * thread in a fixed order (no atomics, deterministic). Dirichlet rows copy src. */
template <int dim, int k, typename T>
using laplace_config = team_config<ipow(2 * k + 1, dim - 1), 2 * k * ipow(2 * k + 1, dim - 1), T>;

template <int dim, int k, typename T>
__global__ void laplace_kernel(const tpmg_level lvl, const item_grid grid,
                               const T *__restrict__ src, T *__restrict__ dst) {
  using config = laplace_config<dim, k, T>;
  constexpr int RV = ipow(k, dim);
  T *s1 = team_shared<T, config::values>();
  T *s2 = s1 + config::values / 2;
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index start[3] = {0, 0, 0}, t[3];
  if (active)
    item_start(grid, item, start, t);
  apply_patch_rows<dim, k, k, k>(lvl, src, start, active, rank, s1, s2, s1);
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

template <int dim>
tpmg_status laplace(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec, const void *src,
                    void *dst) {
  item_grid grid{};
  grid.total = 1;
  for (int d = 0; d < 3; ++d) {
    const bool real = d < dim;
    grid.count[d] = real ? lvl->cells[d] + 1 : 1;
    grid.offset[d] = real ? -lvl->degree : 0;
    grid.step[d] = real ? lvl->degree : 0;
    grid.total *= grid.count[d];
  }
  return select<dim>(ctx, lvl->degree, prec, [&](auto K, auto zero) {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    return launch_teams<laplace_config<dim, k, T>>(
        ctx, "laplace_kernel", laplace_kernel<dim, k, T>, grid.total, *lvl, grid,
        static_cast<const T *>(src), static_cast<T *>(dst));
  });
}

/* ---- grid transfer ------------------------------------------------------ */

/* The 1D prolongation maps the k+1 values of a coarse cell to the P = 2k+1
 * points of its two children, row t, column s: prolongation[t (k+1) + s]. A
 * fine point belongs to the coarse cell min(i / 2k, cells - 1): it is t < 2k of
 * its cell, or t = 2k of the last cell. */
template <int dim, int k, typename T>
using transfer_config =
    team_config<ipow(2 * k + 1, dim - 1),
                dim == 2 ? (k + 1) * (2 * k + 1) : (k + 1) * (2 * k + 1) * (3 * k + 2), T>;

__device__ __forceinline__ bool owned(int t, tpmg_index cell, tpmg_index cells, int k) {
  return t < 2 * k || cell == cells - 1;
}

/* fine += Z_f P Z_c coarse: the team of a coarse cell interpolates it to the
 * fine points it owns (sum factorization x, y, z); no two teams write one point. */
template <int dim, int k, typename T>
__global__ void prolongate_kernel(const tpmg_level coarse, const tpmg_level fine,
                                  const item_grid grid, const T *__restrict__ c,
                                  T *__restrict__ f) {
  using config = transfer_config<dim, k, T>;
  constexpr int P = 2 * k + 1, N = k + 1;
  const T *prol = static_cast<const T *>(fine.data[precision_of<T>::value].prolongation);
  T *s1 = team_shared<T, config::values>();
  T *s2 = s1 + N * ipow(N, dim - 2) * P;
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index start[3] = {0, 0, 0}, cell[3] = {0, 0, 0};
  if (active)
    item_start(grid, item, start, cell);
  const tpmg_index nc0 = coarse.n[0], nc1 = coarse.n[1], nf0 = fine.n[0], nf1 = fine.n[1];
  if constexpr (dim == 2) {
    if (active && rank < N) {
      const int y = rank;
      const tpmg_index cy = k * cell[1] + y;
      T in[N], out[P];
#pragma unroll
      for (int s = 0; s < N; ++s) {
        const tpmg_index cx = k * cell[0] + s;
        in[s] = inside(cx, nc0) && inside(cy, nc1) ? c[cx + nc0 * cy] : T(0);
      }
      mat_vec<P, N, false>(prol, N, in, out);
      store_line(s1 + y * P, 1, out);
    }
    __syncthreads();
    if (active && rank < P) {
      const int x = rank;
      const tpmg_index fx = 2 * k * cell[0] + x;
      T in[N], out[P];
      load_line(s1 + x, P, in);
      mat_vec<P, N, false>(prol, N, in, out);
      if (owned(x, cell[0], coarse.cells[0], k) && inside(fx, nf0)) {
#pragma unroll
        for (int y = 0; y < P; ++y) {
          const tpmg_index fy = 2 * k * cell[1] + y;
          if (owned(y, cell[1], coarse.cells[1], k) && inside(fy, nf1))
            f[fx + nf0 * fy] += out[y];
        }
      }
    }
  } else {
    const tpmg_index nc2 = coarse.n[2], nf2 = fine.n[2];
    /* x: s1 [N][N][P] */
    if (active && rank < N * N) {
      const int z = rank / N, y = rank % N;
      const tpmg_index cy = k * cell[1] + y, cz = k * cell[2] + z;
      const bool in_zy = inside(cy, nc1) && inside(cz, nc2);
      T in[N], out[P];
#pragma unroll
      for (int s = 0; s < N; ++s) {
        const tpmg_index cx = k * cell[0] + s;
        in[s] = in_zy && inside(cx, nc0) ? c[cx + nc0 * (cy + nc1 * cz)] : T(0);
      }
      mat_vec<P, N, false>(prol, N, in, out);
      store_line(s1 + rank * P, 1, out);
    }
    __syncthreads();
    /* y: s2 [N][P][P] */
    if (active && rank < N * P) {
      const int z = rank / P, x = rank % P;
      T in[N], out[P];
      load_line(s1 + z * N * P + x, P, in);
      mat_vec<P, N, false>(prol, N, in, out);
      store_line(s2 + z * P * P + x, P, out);
    }
    __syncthreads();
    /* z, added to the owned fine points */
    if (active && rank < P * P) {
      const int y = rank / P, x = rank % P;
      const tpmg_index fx = 2 * k * cell[0] + x, fy = 2 * k * cell[1] + y;
      T in[N], out[P];
      load_line(s2 + rank, P * P, in);
      mat_vec<P, N, false>(prol, N, in, out);
      if (owned(x, cell[0], coarse.cells[0], k) && owned(y, cell[1], coarse.cells[1], k) &&
          inside(fx, nf0) && inside(fy, nf1)) {
        T *p = f + fx + nf0 * fy;
#pragma unroll
        for (int z = 0; z < P; ++z) {
          const tpmg_index fz = 2 * k * cell[2] + z;
          if (owned(z, cell[2], coarse.cells[2], k) && inside(fz, nf2))
            p[nf0 * nf1 * fz] += out[z];
        }
      }
    }
  }
}

/* coarse += Z_c P^T Z_f fine over the coarse cells of one colour (cells of one
 * colour share no coarse point): each fine point counts once, for the coarse
 * cell that owns it. Colours run in order after coarse = 0, so every coarse sum
 * has a fixed order. */
template <int dim, int k, typename T>
__global__ void restrict_kernel(const tpmg_level coarse, const tpmg_level fine,
                                const item_grid grid, const T *__restrict__ f, T *__restrict__ c) {
  using config = transfer_config<dim, k, T>;
  constexpr int P = 2 * k + 1, N = k + 1;
  const T *prol = static_cast<const T *>(fine.data[precision_of<T>::value].prolongation);
  T *s1 = team_shared<T, config::values>();
  T *s2 = s1 + N * ipow(P, dim - 1);
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index cell[3] = {0, 0, 0}, t[3];
  if (active)
    item_start(grid, item, cell, t);
  const tpmg_index nc0 = coarse.n[0], nc1 = coarse.n[1], nf0 = fine.n[0], nf1 = fine.n[1];
  if constexpr (dim == 2) {
    if (active && rank < P) {
      const int x = rank;
      const tpmg_index fx = 2 * k * cell[0] + x;
      const bool use_x = owned(x, cell[0], coarse.cells[0], k) && inside(fx, nf0);
      T in[P], out[N];
#pragma unroll
      for (int y = 0; y < P; ++y) {
        const tpmg_index fy = 2 * k * cell[1] + y;
        in[y] = use_x && owned(y, cell[1], coarse.cells[1], k) && inside(fy, nf1) ? f[fx + nf0 * fy]
                                                                                  : T(0);
      }
      mat_t_vec<N, P>(prol, N, in, out);
      store_line(s1 + x, P, out);
    }
    __syncthreads();
    if (active && rank < N) {
      const int y = rank;
      const tpmg_index cy = k * cell[1] + y;
      T in[P], out[N];
      load_line(s1 + y * P, 1, in);
      mat_t_vec<N, P>(prol, N, in, out);
      if (inside(cy, nc1)) {
#pragma unroll
        for (int s = 0; s < N; ++s) {
          const tpmg_index cx = k * cell[0] + s;
          if (inside(cx, nc0))
            c[cx + nc0 * cy] += out[s];
        }
      }
    }
  } else {
    const tpmg_index nc2 = coarse.n[2], nf2 = fine.n[2];
    /* z: s1 [N][P][P] */
    if (active && rank < P * P) {
      const int y = rank / P, x = rank % P;
      const tpmg_index fx = 2 * k * cell[0] + x, fy = 2 * k * cell[1] + y;
      const bool use_xy = owned(x, cell[0], coarse.cells[0], k) &&
                          owned(y, cell[1], coarse.cells[1], k) && inside(fx, nf0) &&
                          inside(fy, nf1);
      const T *p = f + fx + nf0 * fy;
      T in[P], out[N];
#pragma unroll
      for (int z = 0; z < P; ++z) {
        const tpmg_index fz = 2 * k * cell[2] + z;
        in[z] = use_xy && owned(z, cell[2], coarse.cells[2], k) && inside(fz, nf2)
                    ? p[nf0 * nf1 * fz]
                    : T(0);
      }
      mat_t_vec<N, P>(prol, N, in, out);
      store_line(s1 + rank, P * P, out);
    }
    __syncthreads();
    /* y: s2 [N][N][P] */
    if (active && rank < N * P) {
      const int z = rank / P, x = rank % P;
      T in[P], out[N];
      load_line(s1 + z * P * P + x, P, in);
      mat_t_vec<N, P>(prol, N, in, out);
      store_line(s2 + z * N * P + x, P, out);
    }
    __syncthreads();
    /* x, added to the coarse points */
    if (active && rank < N * N) {
      const int z = rank / N, y = rank % N;
      const tpmg_index cy = k * cell[1] + y, cz = k * cell[2] + z;
      T in[P], out[N];
      load_line(s2 + rank * P, 1, in);
      mat_t_vec<N, P>(prol, N, in, out);
      if (inside(cy, nc1) && inside(cz, nc2)) {
        T *p = c + nc0 * (cy + nc1 * cz);
#pragma unroll
        for (int s = 0; s < N; ++s) {
          const tpmg_index cx = k * cell[0] + s;
          if (inside(cx, nc0))
            p[cx] += out[s];
        }
      }
    }
  }
}

template <int dim>
tpmg_status prolongate_add(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                           tpmg_precision prec, const void *c, void *f) {
  item_grid grid{};
  grid.total = 1;
  for (int d = 0; d < 3; ++d) {
    grid.count[d] = d < dim ? coarse->cells[d] : 1;
    grid.total *= grid.count[d];
  }
  return select<dim>(ctx, fine->degree, prec, [&](auto K, auto zero) {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    return launch_teams<transfer_config<dim, k, T>>(
        ctx, "prolongate_kernel", prolongate_kernel<dim, k, T>, grid.total, *coarse, *fine, grid,
        static_cast<const T *>(c), static_cast<T *>(f));
  });
}

template <int dim>
tpmg_status restrict_(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                      tpmg_precision prec, const void *f, void *c) {
  TPMG_CALL(set(ctx, prec, coarse->n_dofs, 0.0, c));
  return select<dim>(ctx, fine->degree, prec, [&](auto K, auto zero) {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    for (int colour = 0; colour < (1 << dim); ++colour) {
      item_grid grid{};
      grid.total = 1;
      for (int d = 0; d < 3; ++d) {
        const bool real = d < dim;
        const tpmg_index parity = (colour >> d) & 1;
        grid.count[d] = real ? (coarse->cells[d] - parity + 1) / 2 : 1;
        grid.offset[d] = real ? parity : 0;
        grid.step[d] = real ? 2 : 0;
        grid.total *= grid.count[d];
      }
      using config = transfer_config<dim, k, T>;
      const tpmg_status status = launch_teams<config>(
          ctx, "restrict_kernel", restrict_kernel<dim, k, T>, grid.total, *coarse, *fine, grid,
          static_cast<const T *>(f), static_cast<T *>(c));
      if (status != TPMG_SUCCESS)
        return status;
    }
    return TPMG_SUCCESS;
  });
}

} // namespace tpmg_cuda

#endif
