/* The level kernels of the CUDA backend (one thin __global__ per operation)
 * and their host launchers, templated on dimension, degree and precision.
 * Included only by the instantiation files tpmg-cuda-{smoother,level}-{2,3}d.cu.
 *
 * Team kernels (TPMG_KERNEL_BASIC and CONSTANT) run teams of threads, one
 * vertex patch or cell per team and several teams per block for small degrees
 * (paper §3.1.2): threadIdx.x is the rank in the team, threadIdx.y the team.
 * Block-linear kernels (CONSTANT for some degrees, TILED for all) index the
 * lines of every stage over the whole block, one line per thread (CONSTANT)
 * or several (TILED, see stage_lines in tpmg-cuda-tensor.cuh).
 * Items past the end keep their team at the block's barriers without touching
 * memory. Point kernels (TPMG_KERNEL_THREAD, degree 1) run one thread per patch
 * or row: x over the threads of a block, y and z over blocks.
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
 * tpmg-bench prints these counts (its `counts` function) next to each rate. */
#ifndef TPMG_CUDA_KERNELS_CUH
#define TPMG_CUDA_KERNELS_CUH

#include <math.h>
#include <string.h>

#include <type_traits>

#include "tpmg-cuda-brick.cuh"
#include "tpmg-cuda-mma.cuh"
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
                         const Args &...args) {
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

/* Block-linear kernels (TPMG_KERNEL_CONSTANT and TILED): `teams` patches per
 * block, team_lines lines per patch in the largest stage, W of them per thread
 * (TILED; one for CONSTANT), so threads = teams team_lines / W, rounded up.
 * The teams are chosen per degree (paper §3.1.2, "several patches per block"):
 * as the team kernels, about 128 threads and at most 48 KiB of shared memory,
 * unless those threads would fill less than 80% of their warps; then the
 * fewest teams up to 256 threads that fill at least 90%. (Blocks of several
 * large teams were measured slower: they hold an SM's registers in coarser
 * pieces.) The launch bounds ask for enough blocks per SM for 24 (double) or
 * 32 (float) warps, as long as that leaves at least register_floor registers
 * per thread. */
template <int dim, int team_lines, int team_values, typename T, int W = 1> struct linear_config {
  static constexpr int team = team_lines;
  static constexpr int values = team_values;
  static constexpr size_t team_bytes = size_t(team_values) * sizeof(T);
  static constexpr int threads_of(int t) {
    return (t * team + W - 1) / W;
  }
  static constexpr double fill(int t) {
    return double(threads_of(t)) / (32.0 * ((threads_of(t) + 31) / 32));
  }
  static constexpr int pick() {
    const int by_threads = team >= 128 * W ? 1 : 128 * W / team;
    const int by_memory = team_bytes >= 48 * 1024 ? 1 : int(48 * 1024 / team_bytes);
    const int plain = by_threads < by_memory ? by_threads : by_memory;
    if (fill(plain) >= 0.8)
      return plain;
    for (int t = plain + 1; threads_of(t) <= 256 && size_t(t) * team_bytes <= 48 * 1024; ++t)
      if (fill(t) >= 0.9)
        return t;
    return plain;
  }
  static constexpr int teams = pick();
  static constexpr int threads = threads_of(teams);
  static constexpr int warps = (threads + 31) / 32;
  static constexpr size_t bytes = size_t(teams) * values * sizeof(T);
  static constexpr int blocks_wanted = ((sizeof(T) == 8 ? 24 : 32) + warps - 1) / warps;
  /* 2D double at degree >= 8 spills below 96 registers, 3D double at 7 and 8
   * a few words at 80, which pays for the third block per SM (measured); W
   * lines per thread hold W lines of registers */
  static constexpr int register_floor = (sizeof(T) == 4 ? 64 : dim == 3 ? 80 : 96) * W;
  static constexpr int blocks_by_registers = 65536 / (warps * 32 * register_floor);
  static constexpr int blocks_by_memory = bytes > 0 ? int((227 * 1024) / bytes) : 32;
  static constexpr int min3(int a, int b, int c) {
    return a < b ? (a < c ? a : c) : (b < c ? b : c);
  }
  static constexpr int min_blocks_raw = min3(blocks_wanted, blocks_by_registers, blocks_by_memory);
  static constexpr int min_blocks = min_blocks_raw > 1 ? min_blocks_raw : 1;
};

template <typename Config, typename Kernel, typename... Args>
tpmg_status launch_linear(tpmg_context *ctx, const char *name, Kernel kernel, tpmg_index items,
                          const Args &...args) {
  if (items <= 0)
    return TPMG_SUCCESS;
  const tpmg_index blocks = (items + Config::teams - 1) / Config::teams;
  if (blocks > 0x7fffffff)
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "%s: %lld thread blocks exceed the grid limit", name, (long long)blocks);
  /* the static team_info counts towards the default 48 KiB too */
  if (Config::bytes + sizeof(team_info<Config::teams>) > 48 * 1024)
    TPMG_CUDA_CALL(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(Config::bytes)));
  kernel<<<dim3(unsigned(blocks)), dim3(Config::threads), Config::bytes, stream_of(ctx)>>>(args...);
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    return cuda_error(ctx, error, name, __FILE__, __LINE__);
  return TPMG_SUCCESS;
}

/* The block's dynamic shared memory. */
template <typename T> __device__ __forceinline__ T *block_shared() {
  extern __shared__ __align__(16) unsigned char tpmg_cuda_shared[];
  return reinterpret_cast<T *>(tpmg_cuda_shared);
}

/* Point kernels: blocks of point_threads threads along x; y and z over the
 * grid's y and z (at most 65535 blocks each, the kernels stride beyond). */
constexpr int point_threads = 128;

template <typename Kernel, typename... Args>
tpmg_status launch_points(tpmg_context *ctx, const char *name, Kernel kernel, const item_grid &grid,
                          const Args &...args) {
  if (grid.total <= 0)
    return TPMG_SUCCESS;
  const tpmg_index bx = (grid.count[0] + point_threads - 1) / point_threads;
  if (bx > 0x7fffffff)
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "%s: %lld thread blocks exceed the grid limit", name, (long long)bx);
  const unsigned by = unsigned(grid.count[1] < 65535 ? grid.count[1] : 65535);
  const unsigned bz = unsigned(grid.count[2] < 65535 ? grid.count[2] : 65535);
  kernel<<<dim3(unsigned(bx), by, bz), dim3(point_threads), 0, stream_of(ctx)>>>(grid, args...);
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    return cuda_error(ctx, error, name, __FILE__, __LINE__);
  return TPMG_SUCCESS;
}

/* The item of this thread in a point kernel, for every y and z it strides
 * over: f(start). */
template <typename F> __device__ __forceinline__ void for_each_point(const item_grid &grid, F &&f) {
  const tpmg_index t0 = tpmg_index(blockIdx.x) * point_threads + threadIdx.x;
  if (t0 >= grid.count[0])
    return;
  for (tpmg_index t2 = blockIdx.z; t2 < grid.count[2]; t2 += gridDim.z)
    for (tpmg_index t1 = blockIdx.y; t1 < grid.count[1]; t1 += gridDim.y) {
      const tpmg_index start[3] = {grid.offset[0] + grid.step[0] * t0,
                                   grid.offset[1] + grid.step[1] * t1,
                                   grid.offset[2] + grid.step[2] * t2};
      f(start);
    }
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

/* The points of a level, for the point kernels. */
inline item_grid point_grid(const tpmg_level *lvl) {
  item_grid g{};
  g.total = lvl->n_dofs;
  for (int d = 0; d < 3; ++d) {
    g.count[d] = lvl->n[d];
    g.step[d] = 1;
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

/* ---- the unit patch's 1D data, kernel parameters ------------------------ */

/* Build reference_data<k, T> as tpmg-grid.c builds a level's data, with h = 1. */
template <int k, typename T>
tpmg_status build_reference(const tpmg_context *ctx, reference_data<k, T> *out) {
  constexpr int N = k + 1, P = 2 * k + 1, I = 2 * k - 1;
  double mref[N * N], kref[N * N], pm[P * P], pk[P * P], mi[I * I], ki[I * I], S[I * I], lambda[I],
      nodes[N], prol[P * N];
  tpmg_basis_cell_matrices(k, mref, kref);
  memset(pm, 0, sizeof(pm));
  memset(pk, 0, sizeof(pk));
  for (int cell = 0; cell < 2; ++cell)
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        pm[(cell * k + i) * P + cell * k + j] += mref[i * N + j];
        pk[(cell * k + i) * P + cell * k + j] += kref[i * N + j];
      }
  for (int i = 0; i < I; ++i)
    for (int j = 0; j < I; ++j) {
      mi[i * I + j] = pm[(i + 1) * P + j + 1];
      ki[i * I + j] = pk[(i + 1) * P + j + 1];
    }
  const double residual = tpmg_basis_generalized_eigen(I, ki, mi, S, lambda);
  if (!(residual >= 0.0 && residual < 1e-11))
    return tpmg_error_set(ctx, TPMG_ERROR_NUMERICAL, __FILE__, __LINE__,
                          "unit patch eigenproblem, degree %d: residual %g", k, residual);
  tpmg_basis_gauss_lobatto(N, nodes);
  for (int t = 0; t < P; ++t) {
    const double x = t <= k ? 0.5 * nodes[t] : 0.5 + 0.5 * nodes[t - k];
    for (int s = 0; s < N; ++s)
      prol[t * N + s] = tpmg_basis_lagrange(N, nodes, s, x);
  }
  for (int i = 0; i < P * P; ++i) {
    out->mass[i] = T(pm[i]);
    out->stiffness[i] = T(pk[i]);
  }
  for (int i = 0; i < I * I; ++i)
    out->eigenvectors[i] = T(S[i]);
  /* even and odd eigenvectors (see reference_data), symmetrized */
  int even[I], odd[I], n_even = 0, n_odd = 0;
  for (int j = 0; j < I; ++j) {
    double asymmetry = 0, symmetry = 0, size = 0;
    for (int i = 0; i < I; ++i) {
      asymmetry += fabs(S[i * I + j] - S[(I - 1 - i) * I + j]);
      symmetry += fabs(S[i * I + j] + S[(I - 1 - i) * I + j]);
      size += fabs(S[i * I + j]);
    }
    if (asymmetry <= 1e-9 * size)
      even[n_even++] = j;
    else if (symmetry <= 1e-9 * size)
      odd[n_odd++] = j;
  }
  if (n_even != k || n_odd != k - 1)
    return tpmg_error_set(ctx, TPMG_ERROR_NUMERICAL, __FILE__, __LINE__,
                          "unit patch eigenvectors, degree %d: %d even and %d odd, expected %d "
                          "and %d",
                          k, n_even, n_odd, k, k - 1);
  constexpr int H = k - 1;
  for (int e = 0; e < k; ++e) {
    const int j = even[e];
    for (int i = 0; i < k; ++i)
      out->eigen_even[i * k + e] =
          T(i < H ? 0.5 * (S[i * I + j] + S[(I - 1 - i) * I + j]) : S[H * I + j]);
    out->lambda_even_odd[e] = T(lambda[j]);
  }
  for (int o = 0; o < H; ++o) {
    const int j = odd[o];
    for (int i = 0; i < H; ++i)
      out->eigen_odd[i * H + o] = T(0.5 * (S[i * I + j] - S[(I - 1 - i) * I + j]));
    out->lambda_even_odd[k + o] = T(lambda[j]);
  }
  if (k == 1)
    out->eigen_odd[0] = T(0);
  for (int i = 0; i < P * N; ++i)
    out->prolongation[i] = T(prol[i]);
  for (int d = 0; d < 3; ++d)
    out->coefficient[d] = out->inverse_h2[d] = T(1);
  out->solve_scale = T(1);
  return TPMG_SUCCESS;
}

/* The kernel parameter of level `lvl`: the cached unit data (built on first
 * use) with the level's scale factors. */
template <int k, typename T>
tpmg_status level_constants(tpmg_context *ctx, const tpmg_level *lvl, reference_data<k, T> *c) {
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  void *&cached = data->reference[precision_of<T>::value][k];
  if (!cached) {
    auto *fresh = static_cast<reference_data<k, T> *>(malloc(sizeof(reference_data<k, T>)));
    TPMG_CHECK(ctx, fresh, TPMG_ERROR_MEMORY, "allocating the unit patch data failed");
    const tpmg_status status = build_reference(ctx, fresh);
    if (status != TPMG_SUCCESS) {
      free(fresh);
      return status;
    }
    cached = fresh;
  }
  *c = *static_cast<const reference_data<k, T> *>(cached);
  double product = 1;
  for (int d = 0; d < lvl->dim; ++d)
    product *= lvl->h[d];
  for (int d = 0; d < 3; ++d) {
    c->coefficient[d] = d < lvl->dim ? T(product / (lvl->h[d] * lvl->h[d])) : T(0);
    c->inverse_h2[d] = d < lvl->dim ? T(1.0 / (lvl->h[d] * lvl->h[d])) : T(0);
  }
  c->solve_scale = T(1.0 / product);
  return TPMG_SUCCESS;
}

inline tpmg_status unsupported_kernel(const tpmg_context *ctx, tpmg_kernel kernel, int degree) {
  return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                        "CUDA backend: kernel %d is not available for degree %d", (int)kernel,
                        degree);
}

/* ---- smoother ----------------------------------------------------------- */
/* Where TPMG_KERNEL_CONSTANT uses the block-linear kernels rather than the team
 * kernels (both with the unit patch's matrices in the parameters), as measured
 * on the H200 (doc/benchmarks.md): in 3D, where their stages are free of bank
 * conflicts (tpmg-cuda-tensor.cuh). Before those layouts the team kernels were
 * faster at 3D k = 4..7 in float and k = 4, 5 in double; with them the linear
 * fused step is 1-19% faster than the team one there (the separate variant's
 * residual 4-7% slower in float at k = 5..7). */
template <int dim> constexpr bool linear_smoother() {
  return dim == 3;
}
template <int dim, int k, typename T> constexpr bool linear_operator() {
  return dim == 3 && k <= 3;
}

/* The implementation TPMG_KERNEL_DEFAULT stands for: the fastest measured on
 * the H200 (doc/benchmarks.md), for the smoother (by its fused step) and the
 * operator. Smoother: TILED where it beat CONSTANT by more than 1% in the same
 * run (the medians repeat within 0.2%): in 3D in float for k = 2, 3, 4 (with
 * the conflict-free layouts; 3D fused step, 5e7 DoFs, GDoF/s: 16.2 / 16.1 /
 * 14.2 against 14.4 / 15.5 / 13.7). At higher degrees two lines per thread
 * double the registers (3D Q7 float fused: 115 instead of 64) and halve the
 * warps per SM, which costs more than the halved constant-bank loads save; in
 * double TILED no longer wins at k = 2 (11.5 against 11.6).
 * Operator: BRICK (tpmg-cuda-brick.cuh) wherever it beat the former default
 * (THREAD for k = 1, TILED or CONSTANT) by more than 1% in the same run, which
 * is everywhere but 2D double Q9 (BRICK 51.2, TILED 53.5 GDoF/s; TILED stays).
 * tpmg-bench --dofs 5e7 --repeat 10, GDoF/s, k = 1..8 (2D 1..10), BRICK
 * against the former default, one run each:
 *   3D double  93 87 73 63 58 45 34 25      against 55 22 26 30 29 26 25 19
 *   3D float  134 113 112 91 76 69 65 51    against 59 23 29 31 31 29 30 29
 *   2D double 142 145 123 120 106 114 92 72 51 43  against 134 63 73 78 79 79
 *             75 63 54 35
 *   2D float  207 192 165 160 139 142 129 115 105 87  against 141 68 79 85 87
 *             86 85 83 76 78
 * 3D BRICK since it marches along z (the kernel alone, median of 10 launches
 * on 5e7 DoFs, against the BRICK above in the same run):
 *   3D double 102 87 78 69 61 63 44 39      against 86 85 71 62 56 44 34 25
 *   3D float  126 121 119 96 85 79 76 72    against 131 111 110 89 76 68 64 50 */
template <int dim, int k, typename T> constexpr tpmg_kernel default_smoother_kernel() {
  if (k == 1)
    return TPMG_KERNEL_THREAD;
  return dim == 3 && k <= 4 && sizeof(T) == 4 ? TPMG_KERNEL_TILED : TPMG_KERNEL_CONSTANT;
}
template <int dim, int k, typename T> constexpr tpmg_kernel default_operator_kernel() {
  return dim == 2 && k == 9 && sizeof(T) == 8 ? TPMG_KERNEL_TILED : TPMG_KERNEL_BRICK;
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

/* GLOBAL and SEPARATE, second half: x_I += A_I^{-1} r_I on the patches of a colour. */
template <int dim, int k, typename T, typename Constants>
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
  fast_diagonalization<dim, k>(lvl, mat, active, rank, u, base, x);
}

/* Lines per thread of TPMG_KERNEL_TILED: 2, measured on the H200 against 4
 * (float: slower at every degree from 2 on, more registers).
 * Counts: the multiply-adds, shared-memory and device-memory words per DoF of
 * CONSTANT's block-linear kernels; one constant-bank load (ULDC) per 2W float
 * or W double multiply-adds instead of per 2 or 1. In the SASS of the 3D Q7
 * float fused kernel that is 727 ULDC for 2702 FFMA (CONSTANT: 693 for 1357),
 * 6791 instructions for two lines against 2 x 3776 for one: the loads and
 * stores of shared memory, the address arithmetic and the divisions stay per
 * value. */
constexpr int tiled_lines = 2;

template <int dim, int k, typename T, int W = 1>
using residual_linear =
    linear_config<dim, ipow(2 * k + 1, dim - 1), 2 * (2 * k - 1) * ipow(2 * k + 1, dim - 1), T, W>;
/* the local solves in 3D alternate between two tensors of I^3 values */
template <int dim, int k, typename T, int W = 1>
using solve_linear =
    linear_config<dim, ipow(2 * k - 1, dim - 1), (dim - 1) * ipow(2 * k - 1, dim), T, W>;

/* FUSED and BOUNDARY, TPMG_KERNEL_CONSTANT (W = 1) and TILED (W lines per
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

/* SEPARATE's first half, TPMG_KERNEL_CONSTANT and TILED. */
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

/* The local solves, TPMG_KERNEL_CONSTANT and TILED. */
template <int dim, int k, typename T, int W>
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
  fast_diagonalization_linear<dim, k, teams, W, false, false>(lvl, mat, info, shared,
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
template <int dim, typename T>
__global__ void __launch_bounds__(point_threads)
    patch_solve_point_kernel(const item_grid grid, const tpmg_level lvl, const T *__restrict__ r,
                             T *__restrict__ x,
                             const __grid_constant__ reference_data<1, T> constants) {
  const auto mat = matrices_of<T>(lvl, constants);
  for_each_point(grid, [&](const tpmg_index(&start)[3]) {
    const tpmg_index c = interior_base<dim>(lvl, start);
    x[c] += centre_solve<dim>(lvl, mat, r[c]);
  });
}

/* FUSED (boundary false) or BOUNDARY (true), the kernels chosen as for FUSED. */
template <int dim, bool boundary>
tpmg_status patch_fused_variant(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                tpmg_kernel kernel, int colour, const void *b, void *x) {
  return select<dim>(ctx, lvl->degree, prec, [&](auto K, auto zero) -> tpmg_status {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    const tpmg_kernel kern =
        kernel == TPMG_KERNEL_DEFAULT ? default_smoother_kernel<dim, k, T>() : kernel;
    const item_grid grid = patch_grid(lvl, colour);
    if (kern == TPMG_KERNEL_THREAD) {
      if constexpr (k == 1) {
        reference_data<1, T> c;
        TPMG_CALL(level_constants(ctx, lvl, &c));
        return launch_points(ctx, "patch_fused_point_kernel",
                             patch_fused_point_kernel<dim, T, boundary>, grid, *lvl,
                             static_cast<const T *>(b), static_cast<T *>(x), c);
      }
      return unsupported_kernel(ctx, kern, k);
    }
    if (kern == TPMG_KERNEL_BASIC)
      return launch_teams<residual_config<dim, k, T>>(
          ctx, "patch_fused_kernel", patch_fused_kernel<dim, k, T, no_constants, boundary>,
          grid.total, *lvl, grid, static_cast<const T *>(b), static_cast<T *>(x), no_constants{});
    if (kern == TPMG_KERNEL_TENSOR) {
      if constexpr (dim == 3 && k >= 2) {
        reference_data<k, T> c;
        TPMG_CALL(level_constants(ctx, lvl, &c));
        return launch_fused_mma<k, T, boundary>(ctx, lvl, grid, c, static_cast<const T *>(b),
                                                static_cast<T *>(x));
      }
      return unsupported_kernel(ctx, kern, k);
    }
    if (kern != TPMG_KERNEL_CONSTANT && kern != TPMG_KERNEL_TILED)
      return unsupported_kernel(ctx, kern, k);
    reference_data<k, T> c;
    TPMG_CALL(level_constants(ctx, lvl, &c));
    constexpr int W = tiled_lines;
    if (kern == TPMG_KERNEL_TILED)
      return launch_linear<residual_linear<dim, k, T, W>>(
          ctx, "patch_fused_linear_kernel (tiled)",
          patch_fused_linear_kernel<dim, k, T, W, boundary>, grid.total, *lvl, grid,
          static_cast<const T *>(b), static_cast<T *>(x), c);
    if constexpr (!linear_smoother<dim>())
      return launch_teams<residual_config<dim, k, T>>(
          ctx, "patch_fused_kernel", patch_fused_kernel<dim, k, T, reference_data<k, T>, boundary>,
          grid.total, *lvl, grid, static_cast<const T *>(b), static_cast<T *>(x), c);
    else
      return launch_linear<residual_linear<dim, k, T>>(
          ctx, "patch_fused_linear_kernel", patch_fused_linear_kernel<dim, k, T, 1, boundary>,
          grid.total, *lvl, grid, static_cast<const T *>(b), static_cast<T *>(x), c);
  });
}

template <int dim>
tpmg_status patch_fused(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                        tpmg_kernel kernel, int colour, int boundary, const void *b, void *x) {
  return boundary ? patch_fused_variant<dim, true>(ctx, lvl, prec, kernel, colour, b, x)
                  : patch_fused_variant<dim, false>(ctx, lvl, prec, kernel, colour, b, x);
}

template <int dim>
tpmg_status patch_residual(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           tpmg_kernel kernel, int colour, const void *b, const void *x, void *r) {
  return select<dim>(ctx, lvl->degree, prec, [&](auto K, auto zero) -> tpmg_status {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    const tpmg_kernel kern =
        kernel == TPMG_KERNEL_DEFAULT ? default_smoother_kernel<dim, k, T>() : kernel;
    const item_grid grid = patch_grid(lvl, colour);
    if (kern == TPMG_KERNEL_THREAD) {
      if constexpr (k == 1) {
        reference_data<1, T> c;
        TPMG_CALL(level_constants(ctx, lvl, &c));
        return launch_points(
            ctx, "patch_residual_point_kernel", patch_residual_point_kernel<dim, T>, grid, *lvl,
            static_cast<const T *>(b), static_cast<const T *>(x), static_cast<T *>(r), c);
      }
      return unsupported_kernel(ctx, kern, k);
    }
    if (kern == TPMG_KERNEL_BASIC)
      return launch_teams<residual_config<dim, k, T>>(
          ctx, "patch_residual_kernel", patch_residual_kernel<dim, k, T, no_constants>, grid.total,
          *lvl, grid, static_cast<const T *>(b), static_cast<const T *>(x), static_cast<T *>(r),
          no_constants{});
    if (kern != TPMG_KERNEL_CONSTANT && kern != TPMG_KERNEL_TILED)
      return unsupported_kernel(ctx, kern, k);
    reference_data<k, T> c;
    TPMG_CALL(level_constants(ctx, lvl, &c));
    constexpr int W = tiled_lines;
    if (kern == TPMG_KERNEL_TILED)
      return launch_linear<residual_linear<dim, k, T, W>>(
          ctx, "patch_residual_linear_kernel (tiled)", patch_residual_linear_kernel<dim, k, T, W>,
          grid.total, *lvl, grid, static_cast<const T *>(b), static_cast<const T *>(x),
          static_cast<T *>(r), c);
    if constexpr (!linear_smoother<dim>())
      return launch_teams<residual_config<dim, k, T>>(
          ctx, "patch_residual_kernel", patch_residual_kernel<dim, k, T, reference_data<k, T>>,
          grid.total, *lvl, grid, static_cast<const T *>(b), static_cast<const T *>(x),
          static_cast<T *>(r), c);
    else
      return launch_linear<residual_linear<dim, k, T>>(
          ctx, "patch_residual_linear_kernel", patch_residual_linear_kernel<dim, k, T, 1>,
          grid.total, *lvl, grid, static_cast<const T *>(b), static_cast<const T *>(x),
          static_cast<T *>(r), c);
  });
}

template <int dim>
tpmg_status patch_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                        tpmg_kernel kernel, int colour, const void *r, void *x) {
  return select<dim>(ctx, lvl->degree, prec, [&](auto K, auto zero) -> tpmg_status {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    const tpmg_kernel kern =
        kernel == TPMG_KERNEL_DEFAULT ? default_smoother_kernel<dim, k, T>() : kernel;
    const item_grid grid = patch_grid(lvl, colour);
    if (kern == TPMG_KERNEL_THREAD) {
      if constexpr (k == 1) {
        reference_data<1, T> c;
        TPMG_CALL(level_constants(ctx, lvl, &c));
        return launch_points(ctx, "patch_solve_point_kernel", patch_solve_point_kernel<dim, T>,
                             grid, *lvl, static_cast<const T *>(r), static_cast<T *>(x), c);
      }
      return unsupported_kernel(ctx, kern, k);
    }
    if (kern == TPMG_KERNEL_BASIC)
      return launch_teams<solve_config<dim, k, T>>(
          ctx, "patch_solve_kernel", patch_solve_kernel<dim, k, T, no_constants>, grid.total, *lvl,
          grid, static_cast<const T *>(r), static_cast<T *>(x), no_constants{});
    if (kern != TPMG_KERNEL_CONSTANT && kern != TPMG_KERNEL_TILED)
      return unsupported_kernel(ctx, kern, k);
    reference_data<k, T> c;
    TPMG_CALL(level_constants(ctx, lvl, &c));
    constexpr int W = tiled_lines;
    if (kern == TPMG_KERNEL_TILED)
      return launch_linear<solve_linear<dim, k, T, W>>(
          ctx, "patch_solve_linear_kernel (tiled)", patch_solve_linear_kernel<dim, k, T, W>,
          grid.total, *lvl, grid, static_cast<const T *>(r), static_cast<T *>(x), c);
    if constexpr (!linear_smoother<dim>())
      return launch_teams<solve_config<dim, k, T>>(
          ctx, "patch_solve_kernel", patch_solve_kernel<dim, k, T, reference_data<k, T>>,
          grid.total, *lvl, grid, static_cast<const T *>(r), static_cast<T *>(x), c);
    else
      return launch_linear<solve_linear<dim, k, T>>(
          ctx, "patch_solve_linear_kernel", patch_solve_linear_kernel<dim, k, T, 1>, grid.total,
          *lvl, grid, static_cast<const T *>(r), static_cast<T *>(x), c);
  });
}

/* ---- level operator ----------------------------------------------------- */

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

/* The operator, TPMG_KERNEL_CONSTANT (W = 1) and TILED (W lines per thread): as
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
tpmg_status laplace(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                    tpmg_kernel kernel, const void *src, void *dst) {
  return select<dim>(ctx, lvl->degree, prec, [&](auto K, auto zero) -> tpmg_status {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    const tpmg_kernel kern =
        kernel == TPMG_KERNEL_DEFAULT ? default_operator_kernel<dim, k, T>() : kernel;
    if (kern == TPMG_KERNEL_THREAD) {
      if constexpr (k == 1) {
        const item_grid rows = point_grid(lvl);
        reference_data<1, T> c;
        TPMG_CALL(level_constants(ctx, lvl, &c));
        return launch_points(ctx, "laplace_point_kernel", laplace_point_kernel<dim, T>, rows, *lvl,
                             static_cast<const T *>(src), static_cast<T *>(dst), c);
      }
      return unsupported_kernel(ctx, kern, k);
    }
    if (kern == TPMG_KERNEL_BRICK) {
      reference_data<k, T> c;
      TPMG_CALL(level_constants(ctx, lvl, &c));
      return laplace_brick<dim, k, T>(ctx, lvl, c, static_cast<const T *>(src),
                                      static_cast<T *>(dst));
    }
    item_grid grid{};
    grid.total = 1;
    for (int d = 0; d < 3; ++d) {
      const bool real = d < dim;
      grid.count[d] = real ? lvl->cells[d] + 1 : 1;
      grid.offset[d] = real ? -lvl->degree : 0;
      grid.step[d] = real ? lvl->degree : 0;
      grid.total *= grid.count[d];
    }
    if (kern == TPMG_KERNEL_BASIC)
      return launch_teams<laplace_config<dim, k, T>>(
          ctx, "laplace_kernel", laplace_kernel<dim, k, T, no_constants>, grid.total, *lvl, grid,
          static_cast<const T *>(src), static_cast<T *>(dst), no_constants{});
    if (kern != TPMG_KERNEL_CONSTANT && kern != TPMG_KERNEL_TILED)
      return unsupported_kernel(ctx, kern, k);
    reference_data<k, T> c;
    TPMG_CALL(level_constants(ctx, lvl, &c));
    constexpr int W = tiled_lines;
    if (kern == TPMG_KERNEL_TILED)
      return launch_linear<laplace_linear<dim, k, T, W>>(
          ctx, "laplace_linear_kernel (tiled)", laplace_linear_kernel<dim, k, T, W>, grid.total,
          *lvl, grid, static_cast<const T *>(src), static_cast<T *>(dst), c);
    if constexpr (!linear_operator<dim, k, T>())
      return launch_teams<laplace_config<dim, k, T>>(
          ctx, "laplace_kernel", laplace_kernel<dim, k, T, reference_data<k, T>>, grid.total, *lvl,
          grid, static_cast<const T *>(src), static_cast<T *>(dst), c);
    else
      return launch_linear<laplace_linear<dim, k, T>>(
          ctx, "laplace_linear_kernel", laplace_linear_kernel<dim, k, T, 1>, grid.total, *lvl, grid,
          static_cast<const T *>(src), static_cast<T *>(dst), c);
  });
}

/* ---- grid transfer ------------------------------------------------------ */

/* The transfer kernels read the 1D prolongation from the kernel parameters
 * (as TPMG_KERNEL_CONSTANT). Counts per fine DoF (3D), prolongation:
 * (N^2 P + N P^2 + P^3) N / (2k)^3 multiply-adds, N = k+1; restriction the same. */

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
                                  const item_grid grid, const T *__restrict__ c, T *__restrict__ f,
                                  const __grid_constant__ reference_data<k, T> constants) {
  using config = transfer_config<dim, k, T>;
  constexpr int P = 2 * k + 1, N = k + 1;
  const auto prol = matrices_of<T>(fine, constants).prolongation();
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
      mat_vec<P, N, N, 0, false>(prol, in, out);
      store_line(s1 + y * P, 1, out);
    }
    __syncthreads();
    if (active && rank < P) {
      const int x = rank;
      const tpmg_index fx = 2 * k * cell[0] + x;
      T in[N], out[P];
      load_line(s1 + x, P, in);
      mat_vec<P, N, N, 0, false>(prol, in, out);
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
      mat_vec<P, N, N, 0, false>(prol, in, out);
      store_line(s1 + rank * P, 1, out);
    }
    __syncthreads();
    /* y: s2 [N][P][P] */
    if (active && rank < N * P) {
      const int z = rank / P, x = rank % P;
      T in[N], out[P];
      load_line(s1 + z * N * P + x, P, in);
      mat_vec<P, N, N, 0, false>(prol, in, out);
      store_line(s2 + z * P * P + x, P, out);
    }
    __syncthreads();
    /* z, added to the owned fine points */
    if (active && rank < P * P) {
      const int y = rank / P, x = rank % P;
      const tpmg_index fx = 2 * k * cell[0] + x, fy = 2 * k * cell[1] + y;
      T in[N], out[P];
      load_line(s2 + rank, P * P, in);
      mat_vec<P, N, N, 0, false>(prol, in, out);
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
                                const item_grid grid, const T *__restrict__ f, T *__restrict__ c,
                                const __grid_constant__ reference_data<k, T> constants) {
  using config = transfer_config<dim, k, T>;
  constexpr int P = 2 * k + 1, N = k + 1;
  const auto prol = matrices_of<T>(fine, constants).prolongation();
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
      mat_t_vec<N, P, N>(prol, in, out);
      store_line(s1 + x, P, out);
    }
    __syncthreads();
    if (active && rank < N) {
      const int y = rank;
      const tpmg_index cy = k * cell[1] + y;
      T in[P], out[N];
      load_line(s1 + y * P, 1, in);
      mat_t_vec<N, P, N>(prol, in, out);
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
      mat_t_vec<N, P, N>(prol, in, out);
      store_line(s1 + rank, P * P, out);
    }
    __syncthreads();
    /* y: s2 [N][N][P] */
    if (active && rank < N * P) {
      const int z = rank / P, x = rank % P;
      T in[P], out[N];
      load_line(s1 + z * P * P + x, P, in);
      mat_t_vec<N, P, N>(prol, in, out);
      store_line(s2 + z * N * P + x, P, out);
    }
    __syncthreads();
    /* x, added to the coarse points */
    if (active && rank < N * N) {
      const int z = rank / N, y = rank % N;
      const tpmg_index cy = k * cell[1] + y, cz = k * cell[2] + z;
      T in[P], out[N];
      load_line(s2 + rank * P, 1, in);
      mat_t_vec<N, P, N>(prol, in, out);
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

/* Degree 1, one thread per fine point: fine += P coarse from the 2^dim coarse
 * points of the coarse cell that owns it (that cell's row t of the 1D
 * prolongation per direction), by sum factorization x, y, z as the team
 * kernel. 2^dim (cached) loads and 14 multiply-adds (3D) per fine point. */
template <int dim, typename T>
__global__ void __launch_bounds__(point_threads)
    prolongate_point_kernel(const item_grid grid, const tpmg_level coarse, const tpmg_level fine,
                            const T *__restrict__ c, T *__restrict__ f,
                            const __grid_constant__ reference_data<1, T> constants) {
  const auto prol = matrices_of<T>(fine, constants).prolongation();
  for_each_point(grid, [&](const tpmg_index(&i)[3]) {
    bool interior = true;
    tpmg_index cell[3] = {0, 0, 0};
    int t[3] = {0, 0, 0};
#pragma unroll
    for (int d = 0; d < dim; ++d) {
      interior = interior && inside(i[d], fine.n[d]);
      cell[d] = i[d] / 2 < coarse.cells[d] - 1 ? i[d] / 2 : coarse.cells[d] - 1;
      t[d] = int(i[d] - 2 * cell[d]);
    }
    if (!interior)
      return;
    T b[2] = {0, 0}; /* per z: the x and y contractions */
#pragma unroll
    for (int s2 = 0; s2 < (dim == 3 ? 2 : 1); ++s2) {
      T a[2];
#pragma unroll
      for (int s1 = 0; s1 < 2; ++s1) {
        T in[2], out[1];
#pragma unroll
        for (int s0 = 0; s0 < 2; ++s0) {
          const tpmg_index c0 = cell[0] + s0, c1 = cell[1] + s1, c2 = cell[2] + s2;
          const bool use = inside(c0, coarse.n[0]) && inside(c1, coarse.n[1]) &&
                           (dim == 2 || inside(c2, coarse.n[2]));
          in[s0] = use ? c[c0 + coarse.n[0] * (c1 + coarse.n[1] * c2)] : T(0);
        }
        out[0] = T(0) + prol[t[0] * 2] * in[0];
        out[0] += prol[t[0] * 2 + 1] * in[1];
        a[s1] = out[0];
      }
      b[s2] = T(0) + prol[t[1] * 2] * a[0];
      b[s2] += prol[t[1] * 2 + 1] * a[1];
    }
    T value = b[0];
    if constexpr (dim == 3) {
      value = T(0) + prol[t[2] * 2] * b[0];
      value += prol[t[2] * 2 + 1] * b[1];
    }
    f[i[0] + fine.n[0] * (i[1] + fine.n[1] * i[2])] += value;
  });
}

/* Degree 1, one thread per coarse point: coarse = P^T fine gathered from the
 * fine points 2j-1, 2j, 2j+1 per direction, each with the weight of the
 * coarse cell that owns it (the transpose of prolongate_point_kernel).
 * 3^dim (cached) loads and 13 multiply-adds (3D) per coarse point. */
template <int dim, typename T>
__global__ void __launch_bounds__(point_threads)
    restrict_point_kernel(const item_grid grid, const tpmg_level coarse, const tpmg_level fine,
                          const T *__restrict__ f, T *__restrict__ c,
                          const __grid_constant__ reference_data<1, T> constants) {
  const auto prol = matrices_of<T>(fine, constants).prolongation();
  for_each_point(grid, [&](const tpmg_index(&j)[3]) {
    const tpmg_index g = j[0] + coarse.n[0] * (j[1] + coarse.n[1] * j[2]);
    bool interior = true;
    T w[3][3]; /* [d][fine point 2j - 1 + o]: its weight for coarse point j */
#pragma unroll
    for (int d = 0; d < 3; ++d)
#pragma unroll
      for (int o = 0; o < 3; ++o)
        w[d][o] = T(0);
#pragma unroll
    for (int d = 0; d < dim; ++d) {
      interior = interior && inside(j[d], coarse.n[d]);
#pragma unroll
      for (int o = 0; o < 3; ++o) {
        const tpmg_index i = 2 * j[d] - 1 + o;
        const tpmg_index cell = i / 2 < coarse.cells[d] - 1 ? i / 2 : coarse.cells[d] - 1;
        const tpmg_index s = j[d] - cell;
        if (inside(i, fine.n[d]) && s >= 0 && s <= 1)
          w[d][o] = prol[int(i - 2 * cell) * 2 + int(s)];
      }
    }
    if (!interior) {
      c[g] = T(0);
      return;
    }
    T b[3] = {0, 0, 0};
#pragma unroll
    for (int o2 = 0; o2 < (dim == 3 ? 3 : 1); ++o2) {
      T a[3];
#pragma unroll
      for (int o1 = 0; o1 < 3; ++o1) {
        T sum = 0;
#pragma unroll
        for (int o0 = 0; o0 < 3; ++o0) {
          const tpmg_index i0 = 2 * j[0] - 1 + o0, i1 = 2 * j[1] - 1 + o1,
                           i2 = dim == 3 ? 2 * j[2] - 1 + o2 : 0;
          if (w[0][o0] != T(0) && w[1][o1] != T(0) && (dim == 2 || w[2][o2] != T(0)))
            sum += w[0][o0] * f[i0 + fine.n[0] * (i1 + fine.n[1] * i2)];
        }
        a[o1] = sum;
      }
      T sum = 0;
#pragma unroll
      for (int o1 = 0; o1 < 3; ++o1)
        sum += w[1][o1] * a[o1];
      b[o2] = sum;
    }
    T value = b[0];
    if constexpr (dim == 3) {
      value = 0;
#pragma unroll
      for (int o2 = 0; o2 < 3; ++o2)
        value += w[2][o2] * b[o2];
    }
    c[g] = value;
  });
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
    reference_data<k, T> constants;
    TPMG_CALL(level_constants(ctx, fine, &constants));
    if constexpr (k == 1)
      return launch_points(ctx, "prolongate_point_kernel", prolongate_point_kernel<dim, T>,
                           point_grid(fine), *coarse, *fine, static_cast<const T *>(c),
                           static_cast<T *>(f), constants);
    return launch_teams<transfer_config<dim, k, T>>(
        ctx, "prolongate_kernel", prolongate_kernel<dim, k, T>, grid.total, *coarse, *fine, grid,
        static_cast<const T *>(c), static_cast<T *>(f), constants);
  });
}

template <int dim>
tpmg_status restrict_(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                      tpmg_precision prec, const void *f, void *c) {
  return select<dim>(ctx, fine->degree, prec, [&](auto K, auto zero) {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    reference_data<k, T> constants;
    TPMG_CALL(level_constants(ctx, fine, &constants));
    if constexpr (k == 1)
      return launch_points(ctx, "restrict_point_kernel", restrict_point_kernel<dim, T>,
                           point_grid(coarse), *coarse, *fine, static_cast<const T *>(f),
                           static_cast<T *>(c), constants);
    TPMG_CALL(set(ctx, prec, coarse->n_dofs, 0.0, c));
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
          static_cast<const T *>(f), static_cast<T *>(c), constants);
      if (status != TPMG_SUCCESS)
        return status;
    }
    return TPMG_SUCCESS;
  });
}

} // namespace tpmg_cuda

#endif
