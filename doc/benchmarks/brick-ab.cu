/* The CUDA 3D brick operator kernel of the working tree against a base
 * commit's (built by doc/benchmarks/brick-ab.sh, which renames the base
 * header's names with a _base suffix), on the same random input: for 3D k =
 * 1..8 in double and float, on a cube of 2^L cells per direction with about
 * 5e7-1.4e8 DoFs (the median of 11 launches each, CUDA events, the two
 * kernels timed in turn twice) and on a box of 2^(L-1) + 3, 5, 7 cells
 * (partial bricks). Outputs are poisoned (NaN) first and compared value by
 * value: a kernel change that only reorders work must give equal values.
 * The matrices are random, not the Laplacian's: the test is the sameness.
 * Exit status 1 if any value differs or a launch fails. */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "tpmg-cuda-brick-base.cuh"
#include "tpmg-cuda-brick.cuh"

using namespace tpmg_cuda;

static bool failed = false;

/* the median time of 11 launches (after one warm-up) of a brick kernel */
template <typename Config, typename Grid, typename Kernel, int k, typename T>
static float time_kernel(Kernel kernel, const tpmg_level &lvl, const T *src, T *dst,
                         const reference_data<k, T> &c) {
  Grid grid{};
  unsigned blocks = 1;
  for (int d = 0; d < 3; ++d) {
    const int cells = d == 2 ? Config::G * Config::shape.cells_slow : Config::shape.cells;
    grid.count[d] = (lvl.cells[d] + cells - 1) / cells;
    grid.extent[d] = tpmg_index(cells) * k;
    blocks *= unsigned(grid.count[d]);
  }
  if (Config::bytes > 48 * 1024)
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Config::bytes));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> times;
  for (int r = 0; r < 12; ++r) {
    cudaEventRecord(start);
    kernel<<<blocks, Config::threads, Config::bytes>>>(lvl, grid, src, dst, c);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (r > 0)
      times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    std::printf("launch failed: %s\n", cudaGetErrorString(error));
    failed = true;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

template <int k, typename T> static void compare(int L, bool box) {
  tpmg_level lvl{};
  lvl.dim = 3;
  lvl.degree = k;
  lvl.level = L;
  for (int d = 0; d < 3; ++d) {
    lvl.cells[d] = box ? (tpmg_index(1) << (L - 1)) + 2 * d + 3 : tpmg_index(1) << L;
    lvl.n[d] = lvl.cells[d] * k + 1;
  }
  const size_t n = size_t(lvl.n[0] * lvl.n[1] * lvl.n[2]);
  lvl.n_dofs = tpmg_index(n);
  reference_data<k, T> c{};
  std::mt19937_64 random(1000 * k + sizeof(T) + box);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (T &x : c.mass)
    x = T(uniform(random));
  for (T &x : c.stiffness)
    x = T(uniform(random));
  for (T &x : c.coefficient)
    x = T(0.5 + 0.5 * uniform(random) * uniform(random));
  std::vector<T> host(n);
  for (T &x : host)
    x = T(uniform(random));
  T *src = nullptr, *dst[2] = {nullptr, nullptr};
  cudaMalloc(&src, n * sizeof(T));
  cudaMalloc(&dst[0], n * sizeof(T));
  cudaMalloc(&dst[1], n * sizeof(T));
  if (!src || !dst[0] || !dst[1]) {
    std::printf("k = %d: cudaMalloc of %zu values failed\n", k, n);
    failed = true;
    return;
  }
  cudaMemcpy(src, host.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemset(dst[0], 0xff, n * sizeof(T));
  cudaMemset(dst[1], 0xff, n * sizeof(T));
  float base = 1e30f, now = 1e30f;
  for (int turn = 0; turn < 2; ++turn) {
    base = std::min(base, time_kernel<brick_config_base<3, k, T>, brick_grid_base>(
                              laplace_brick_kernel_base<3, k, T>, lvl, src, dst[0], c));
    now = std::min(now, time_kernel<brick_config<3, k, T>, brick_grid>(
                            laplace_brick_kernel<3, k, T>, lvl, src, dst[1], c));
  }
  std::vector<T> a(n), b(n);
  cudaMemcpy(a.data(), dst[0], n * sizeof(T), cudaMemcpyDeviceToHost);
  cudaMemcpy(b.data(), dst[1], n * sizeof(T), cudaMemcpyDeviceToHost);
  size_t differing = 0;
  for (size_t i = 0; i < n; ++i)
    differing += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
  failed = failed || differing > 0;
  const double mega = double(n) * 1e-6;
  std::printf("%-4s %d %-6s %2d %11zu %9.4f %9.4f %8.1f %8.1f %6.3f %zu\n", box ? "box" : "cube", k,
              sizeof(T) == 8 ? "double" : "float", L, n, base, now, mega / base, mega / now,
              base / now, differing);
  std::fflush(stdout);
  cudaFree(src);
  cudaFree(dst[0]);
  cudaFree(dst[1]);
}

template <typename T> static void all(bool box) {
  const int s = box ? 1 : 0; /* the box: one level lower */
  compare<1, T>(9 - s, box);
  compare<2, T>(8 - s, box);
  compare<3, T>(7 - s, box);
  compare<4, T>(7 - s, box);
  compare<5, T>(6 - s, box);
  compare<6, T>(6 - s, box);
  compare<7, T>(6 - s, box);
  compare<8, T>(6 - s, box);
}

int main() {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, 0) != cudaSuccess) {
    std::printf("brick-ab: no CUDA device\n");
    return 1;
  }
  std::printf("brick-ab: %s, base %s against the working tree's kernel\n", properties.name,
              TPMG_BRICK_BASE);
  std::printf("mesh k prec.   L      n_dofs   base ms    new ms base GDoF/s new GDoF/s  new/base"
              " values differing\n");
  for (bool box : {false, true}) {
    all<double>(box);
    all<float>(box);
  }
  return failed ? 1 : 0;
}
