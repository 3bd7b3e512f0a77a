/* Launch configurations of the CUDA backend's level kernels: team kernels
 * (a thread team per patch or cell, several teams per block for small degrees,
 * paper §3.1.2: threadIdx.x is the rank in the team, threadIdx.y the team),
 * block-linear kernels (the lines of every stage indexed over the whole
 * block, one or several per thread: stage_lines in tpmg-cuda-tensor.cuh) and
 * point kernels (one thread per patch or row: x over the threads of a block,
 * y and z over blocks); items past the end keep their team at the block's
 * barriers without touching memory. And the item grids of a level: the
 * patches of a colour, the points. */
#ifndef TPMG_CUDA_LAUNCH_CUH
#define TPMG_CUDA_LAUNCH_CUH

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

/* Block-linear kernels (the constant and tiled kernels): `teams` patches per
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
 * at (v_d - 1) k; those around the vertices [vertices[0], vertices[1]) along
 * the last direction where vertices is given (tpmg_level_patch_layers). */
inline item_grid patch_grid(const tpmg_level *lvl, int colour,
                            const tpmg_index *vertices = nullptr) {
  item_grid g{};
  g.total = 1;
  for (int d = 0; d < 3; ++d) {
    const bool real = d < lvl->dim;
    g.count[d] = real ? tpmg_level_patches_1d(lvl, d, colour) : 1;
    g.offset[d] = real ? ((colour >> d) & 1) * lvl->degree : 0;
    g.step[d] = real ? 2 * lvl->degree : 0;
  }
  if (vertices) {
    const int D = lvl->dim - 1;
    tpmg_index first = 0;
    tpmg_level_patch_layers(lvl, colour, vertices, &first, &g.count[D]);
    g.offset[D] += first * g.step[D];
  }
  for (int d = 0; d < 3; ++d)
    g.total *= g.count[d];
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

/* Lines per thread of the tiled kernels: 2, measured on the H200 against 4
 * (float: slower at every degree from 2 on, more registers).
 * Counts: the multiply-adds, shared-memory and device-memory words per DoF of
 * CONSTANT's block-linear kernels; one constant-bank load (ULDC) per 2W float
 * or W double multiply-adds instead of per 2 or 1. In the SASS of the 3D Q7
 * float fused kernel that is 727 ULDC for 2702 FFMA (CONSTANT: 693 for 1357),
 * 6791 instructions for two lines against 2 x 3776 for one: the loads and
 * stores of shared memory, the address arithmetic and the divisions stay per
 * value. */
constexpr int tiled_lines = 2;

/* Elementwise kernels (vectors, copy_boundary, the coarse solve): a grid of
 * at most elementwise_max_blocks blocks striding over the vector. */
constexpr int elementwise_threads = 256;
constexpr tpmg_index elementwise_max_blocks = 65536;

inline unsigned elementwise_blocks(tpmg_index n) {
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

} // namespace tpmg_cuda

#endif
