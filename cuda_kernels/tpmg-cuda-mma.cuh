/* TPMG_KERNEL_TENSOR: the fused smoothing step (FUSED and BOUNDARY, 3D,
 * degree >= 2) with every tensor contraction on the tensor cores (warp-level
 * mma.sync, 16 x 8 x 8 tiles).
 *
 * Why. The CUDA-core kernels (CONSTANT, TILED) are bound by instruction
 * issue: one FFMA or DFMA instruction does 32 multiply-adds and needs a
 * uniform load of its matrix entry and its share of shared-memory traffic and
 * index arithmetic (doc/benchmarks.md). One mma.sync does 16 x 8 x 8 = 1024
 * multiply-adds: in double DMMA.16x8x8 (FP64 tensor cores, 67 TFLOP/s against
 * 34 for DFMA), in float HMMA.1688.F32.TF32 on tf32 operands (10-bit
 * mantissa). TENSOR in float splits every operand a = a_hi + a_lo into two
 * tf32 numbers and sums a_lo b_hi + a_hi b_lo + a_hi b_hi in float (three
 * mma per tile): the dropped a_lo b_lo is below float rounding, so the step
 * agrees with float arithmetic to a few units of its rounding (t802: 2.9e-6
 * relative; double 1e-15).
 *
 * Contractions as matrix products. A stage contracts one direction of a
 * tensor held in shared memory: every line along that direction (a row of the
 * product's A operand, 16 rows per tile, rows of several patches
 * concatenated) times a 1D matrix (the B operand, the same for every line). A
 * stage may read two input lines per row (their K's concatenated) and write
 * two output lines. The B operands of all stages are built once per block in
 * shared memory in the fragment order of mma.sync (two words per lane, one 8-
 * or 16-byte load), from the unit patch's matrices (reference_data) with the
 * level's scale factors. The fast diagonalization uses the dense eigenvector
 * matrix S (columns even first, as reference_data's even/odd split; the same
 * for every direction) and its transpose.
 *
 * Layout: every stage finds its input lines contiguous (the contracted
 * direction fastest), padded with zeros to a multiple of 8 values (mma_pad),
 * at a stride that keeps ldmatrix and the stores free of bank conflicts
 * (mma_stride). So a float A fragment is one ldmatrix.x4 per 8 columns, a
 * double one four 8-byte loads, with no range checks. Each stage writes its
 * output in the layout of the next one: its rows are ordered with the next
 * stage's direction fastest, so the 8 rows of a fragment's row group store to
 * 8 consecutive values of the next stage's lines (or, where the next stage
 * contracts the same direction, each thread stores two consecutive values);
 * the padding of the next lines is zeroed in the same phase (mma_zero) or
 * written as the zero columns of the product.
 *
 * The stages of one patch (P = 2k+1 window points, R = 2k-1 interior points
 * per direction), the CONSTANT kernels' factorization (tpmg-cuda-tensor.cuh,
 * apply_patch_rows), then the fast diagonalization:
 *   load  X line (x, y): the window's z column from device memory
 *   S1 z  Z = (M_z X, K_z X) rows 1..R,   line (p, z', x), along y
 *   S2 y  Y = (c_2 M_y Z_K + c_1 K_y Z_M, M_y Z_M),   line (q, z', y'), along x
 *   S3 x  U = b_I - (M_x Y_a + c_0 K_x Y_b),   line (z, y), along x
 *   S4 x  S^T,   line (x, z), along y
 *   S5 y  S^T,   line (x, y), along z
 *   S6 z  S^T, then times 1 / (Π h_d (λ_x + λ_y + λ_z)),   line (x, y), along z
 *   S7 z  S,   line (z, x), along y
 *   S8 y  S,   line (z, y), along x
 *   S9 x  S, added to (BOUNDARY: stored into) x_I in device memory.
 * X, Y, S4, S6, S8's outputs share one region of shared memory, Z, U and the
 * others another.
 *
 * Counts per patch (3D, T(n) = n / 16 rounded up, KP = pad(P) / 8, KR =
 * pad(R) / 8): mma tiles S1 2 T(P²) KP KR, S2 4 T(RP) KP KR, S3 2 T(R²) KP
 * KR, S4..S9 6 T(R²) KR²; times 3 in float. Q3: 36 tiles (27 DoFs), Q7: 680
 * (343 DoFs). Shared memory: each line value loaded once (A) and stored once.
 *
 * Blocks: 8 or 16 warps (mma_config::threads); `teams` patches at a time,
 * enough for 16 tiles in the smallest stage, as many as fit 64 KB; a
 * persistent grid (as many blocks as fit the GPU) strides over the patch
 * groups, so the B fragments are built once per block.
 *
 * History: the first version (8d82b28) addressed every fragment element on
 * its own (a strided load with a range check, a store per value) and ran at
 * 0.3 to 0.7 times CONSTANT; Nsight Compute counted more instructions than
 * CONSTANT's (float, one colour: Q3 101 M against 55 M, Q7 145 M against
 * 101 M) with the tensor pipe active 10-16% of the time. */
#ifndef TPMG_CUDA_MMA_CUH
#define TPMG_CUDA_MMA_CUH

#include <stdint.h>

#include "tpmg-cuda-tensor.cuh"
#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

/* An operand word: a double, or the bits of a tf32 number. */
template <typename T> struct mma_word;
template <> struct mma_word<double> { using type = double; };
template <> struct mma_word<float> { using type = uint32_t; };

/* a / b: in float by the fast approximate division (2 ulp), in double exact. */
__device__ __forceinline__ float mma_divide(float a, float b) {
  return __fdividef(a, b);
}
__device__ __forceinline__ double mma_divide(double a, double b) {
  return a / b;
}

/* Products per tile: one in double, three in float (split operands). */
template <typename T> constexpr int mma_passes = sizeof(T) == 4 ? 3 : 1;

/* v = hi (+ lo) for the B operands: double as is; float rounded to tf32, and
 * with passes == 3 the remainder as a second tf32 number (the A operands are
 * split more cheaply in mma_load_a). */
template <int passes> __device__ __forceinline__ void mma_split(double v, double &hi, double &lo) {
  hi = v;
  lo = 0;
}
template <int passes>
__device__ __forceinline__ void mma_split(float v, uint32_t &hi, uint32_t &lo) {
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(hi) : "f"(v));
  if (passes == 3) {
    const float rest = v - __uint_as_float(hi);
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(lo) : "f"(rest));
  } else {
    lo = 0;
  }
}

/* c += a b on one 16 x 8 x 8 tile (row-major A, column-major B). */
__device__ __forceinline__ void mma_tile(double (&c)[4], const double (&a)[4],
                                         const double (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}
__device__ __forceinline__ void mma_tile(float (&c)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* The shape of one stage: Kin values per input line (parts_in lines per row),
 * Nout per output line (parts_out), and its B operand's size in words (per
 * hi / lo copy): fragments [parts_out][NT][parts_in][KS][32 lanes][2]. */
template <int Kin, int parts_in, int Nout, int parts_out> struct mma_shape {
  static constexpr int KS = (Kin + 7) / 8, NT = (Nout + 7) / 8;
  static constexpr int words = parts_out * NT * parts_in * KS * 64;
};

/* Fill the B fragments of a stage (all threads of the block): entry (k, n) of
 * part (p, po) is entry(p, k, po, n), which returns zero in the padding. Lane
 * l holds, for mma.sync's B (8 x 8, column-major), rows l % 4 and l % 4 + 4
 * of column l / 4. */
template <typename Stage, int passes, typename T, typename F>
__device__ void mma_fill(typename mma_word<T>::type *hi, typename mma_word<T>::type *lo,
                         F &&entry) {
  constexpr int parts_in = Stage::parts_in;
  for (int w = threadIdx.x; w < Stage::shape::words; w += blockDim.x) {
    int f = w;
    const int j = f % 2, lane = (f / 2) % 32;
    f /= 64;
    const int ks = f % Stage::shape::KS;
    f /= Stage::shape::KS;
    const int p = f % parts_in;
    f /= parts_in;
    const int nt = f % Stage::shape::NT, po = f / Stage::shape::NT;
    const int kk = ks * 8 + lane % 4 + 4 * j, n = nt * 8 + lane / 4;
    typename mma_word<T>::type h, l;
    mma_split<passes>(entry(p, kk, po, n), h, l);
    hi[w] = h;
    if (passes == 3)
      lo[w] = l;
  }
}

/* Shared-memory lines: n values padded to a multiple of 8 (the k-steps; the
 * padding holds zeros) and a stride with stride / 4 odd, so that 8
 * consecutive lines, or 8 lines an odd multiple of the stride apart, start in
 * 8 different 16-byte bank groups: ldmatrix, 16-byte stores and the 8-lane
 * row groups of the fragments are free of bank conflicts (in double, in
 * 8-byte units, for the half-warps). */
constexpr int mma_pad(int n) {
  return (n + 7) / 8 * 8;
}
constexpr int mma_stride(int n, bool tight = false) {
  return tight || mma_pad(n) / 4 % 2 == 1 ? mma_pad(n) : mma_pad(n) + 4;
}

__device__ __forceinline__ uint32_t shared_address(const void *p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

/* The A fragments of one 16-row tile, k-steps 0..KS-1 of PI parts (part p at
 * row + p * part_stride): float by ldmatrix.x4 (lane l gives the address of
 * row (l % 8) + 8 ((l / 8) % 2), columns 4 (l / 16) on), split into tf32 hi
 * and lo; double by one 8-byte load per element. `row(r)`: row r's line. */
template <int passes, int PI, int KS, typename Row>
__device__ __forceinline__ void mma_load_a(const Row &row, int tile, int rows, int part_stride,
                                           uint32_t (&hi)[PI][KS][4], uint32_t (&lo)[PI][KS][4]) {
  const int lane = threadIdx.x % 32;
  const int r = min(tile * 16 + lane % 8 + 8 * ((lane / 8) % 2), rows - 1);
  const float *p0 = row(r) + 4 * (lane / 16);
#pragma unroll
  for (int p = 0; p < PI; ++p)
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      uint32_t a[4];
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                   : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                   : "r"(shared_address(p0 + p * part_stride + 8 * ks)));
      /* hi: the raw bits (the tensor cores read the top 19, a truncation);
       * lo: the exact remainder, read truncated too: 2 instructions where
       * cvt.rna takes about 7 on sm_90 */
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        hi[p][ks][i] = a[i];
        lo[p][ks][i] =
            passes == 3
                ? __float_as_uint(__uint_as_float(a[i]) - __uint_as_float(a[i] & 0xffffe000u))
                : 0u;
      }
    }
}
template <int passes, int PI, int KS, typename Row>
__device__ __forceinline__ void mma_load_a(const Row &row, int tile, int rows, int part_stride,
                                           double (&hi)[PI][KS][4], double (&lo)[PI][KS][4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const double *p0 = row(min(tile * 16 + g, rows - 1)) + t,
               *p1 = row(min(tile * 16 + g + 8, rows - 1)) + t;
#pragma unroll
  for (int p = 0; p < PI; ++p)
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      const int o = p * part_stride + 8 * ks;
      hi[p][ks][0] = p0[o];
      hi[p][ks][1] = p1[o];
      hi[p][ks][2] = p0[o + 4];
      hi[p][ks][3] = p1[o + 4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        lo[p][ks][i] = 0;
    }
}

/* One stage over `rows` rows (16 per tile, warps take tiles in turn): row r
 * is PI lines of KS * 8 values in shared memory (part p at row(r) + p *
 * part_stride), times the B operand of PO parts of NT * 8 columns. out(r)
 * makes a row's store (its address arithmetic once per row and tile), called
 * for each existing row, part po and column pair n = 8 nt + 2 (lane % 4) as
 * store(po, n, value of n, value of n + 1). */
template <typename T, int passes, int PI, int KS, int PO, int NT, int rows, typename Row,
          typename Out>
__device__ __forceinline__ void mma_stage(const typename mma_word<T>::type *bhi,
                                          const typename mma_word<T>::type *blo, int part_stride,
                                          const Row &row, const Out &out) {
  using W = typename mma_word<T>::type;
  constexpr int tiles = (rows + 15) / 16;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  for (int tile = threadIdx.x / 32; tile < tiles; tile += blockDim.x / 32) {
    W ahi[PI][KS][4], alo[PI][KS][4];
    mma_load_a<passes>(row, tile, rows, part_stride, ahi, alo);
    const int r0 = tile * 16 + g, r1 = r0 + 8;
    const auto store0 = out(min(r0, rows - 1)), store1 = out(min(r1, rows - 1));
    /* all products first, then all stores: the PO NT accumulator chains are
     * independent, and the conditional stores would otherwise keep the
     * compiler from interleaving them */
    T acc[PO][NT][4];
#pragma unroll
    for (int po = 0; po < PO; ++po)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int i = 0; i < 4; ++i)
          acc[po][nt][i] = T(0);
#pragma unroll
        for (int p = 0; p < PI; ++p)
#pragma unroll
          for (int ks = 0; ks < KS; ++ks) {
            const int f = 2 * (((((po * NT + nt) * PI + p) * KS + ks) * 32) + lane);
            const W bh[2] = {bhi[f], bhi[f + 1]};
            if (passes == 3) {
              const W bl[2] = {blo[f], blo[f + 1]};
              mma_tile(acc[po][nt], alo[p][ks], bh);
              mma_tile(acc[po][nt], ahi[p][ks], bl);
            }
            mma_tile(acc[po][nt], ahi[p][ks], bh);
          }
      }
#pragma unroll
    for (int po = 0; po < PO; ++po)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        if (r0 < rows)
          store0(po, nt * 8 + 2 * t, acc[po][nt][0], acc[po][nt][1]);
        if (r1 < rows)
          store1(po, nt * 8 + 2 * t, acc[po][nt][2], acc[po][nt][3]);
      }
  }
}

/* Zero positions first..last-1 of `lines` lines of stride ls in each of the
 * `teams` patches (patch stride pv) from `base`: the padding of a stage's
 * output lines that its rows do not reach. */
template <int teams, int lines, int ls, int first, int last, typename T>
__device__ __forceinline__ void mma_zero(T *base, int pv) {
  constexpr int width = last - first, per_patch = lines * width;
  if constexpr (width > 0)
    for (int e = threadIdx.x; e < teams * per_patch; e += blockDim.x) {
      const int j = e / per_patch, l = e % per_patch;
      base[j * pv + (l / width) * ls + first + l % width] = T(0);
    }
}

/* The fixed sizes of the tensor-core fused step for degree k, value type T
 * (see the stage list at the top: X, Y, F5, F7, F9 in region a, Z, U, F6, F8
 * in region b). */
template <int k, typename T> struct mma_config {
  static constexpr int P = 2 * k + 1, R = 2 * k - 1;
  /* the patch's values with conflict-free (tight: unpadded) strides */
  static constexpr int patch_values_of(bool tight) {
    const int lp = mma_stride(P, tight), lr = mma_stride(R, tight);
    const int a = P * P * lp > 2 * R * R * lp ? P * P * lp : 2 * R * R * lp;
    return (a > R * R * lr ? a : R * R * lr) +
           (2 * R * P * lp > R * R * lr ? 2 * R * P * lp : R * R * lr);
  }
  /* 3D Q8 in double: 238 KB with conflict-free strides, more than a block may
   * have (227 KB); 212 KB with tight ones */
  static constexpr bool tight = size_t(patch_values_of(false)) * sizeof(T) > 180 * 1024;
  static constexpr int QP = mma_pad(P), LP = mma_stride(P, tight), QR = mma_pad(R),
                       LR = mma_stride(R, tight);
  static constexpr int KP = QP / 8, KR = QR / 8; /* k-steps, and 8-column tiles of R outputs */
  static constexpr int passes = mma_passes<T>;
  template <int KS_, int PI_, int NT_, int PO_> struct stage {
    static constexpr int parts_in = PI_;
    using shape = mma_shape<8 * KS_, PI_, 8 * NT_, PO_>;
  };
  using z_stage = stage<KP, 1, KR, 2>;
  using y_stage = stage<KP, 2, KR, 2>;
  using x_stage = stage<KP, 2, KR, 1>;
  using s_stage = stage<KR, 1, KR, 1>;
  static constexpr int max2(int a, int b) {
    return a > b ? a : b;
  }
  static constexpr int lines_r = R * R * LR; /* the I^3 tensors of the diagonalization */
  static constexpr int a_values = max2(max2(P * P * LP, 2 * R * R * LP), lines_r);
  static constexpr int b_values = max2(2 * R * P * LP, lines_r);
  static constexpr int patch_values = a_values + b_values;
  static constexpr size_t patch_bytes = size_t(patch_values) * sizeof(T);
  /* patches per block: 256 rows (16 tiles) in the smallest stage (R^2 rows a
   * patch), as many as fit 64 KB, at least one */
  static constexpr int by_rows = (256 + R * R - 1) / (R * R);
  static constexpr int by_memory = int(64 * 1024 / patch_bytes);
  static constexpr int teams = by_rows < by_memory ? by_rows : (by_memory > 0 ? by_memory : 1);
  /* warps per block, the faster of 8 and 16 in two runs on the H200
   * (tpmg-bench, fused step, 3D, k = 2..8, GDoF/s; 8 warps measured before
   * mma_stage interleaved its accumulator chains, 770f0f9):
   *   float   8 warps  3.28 4.40 4.78 3.74 5.26 4.69 3.21
   *          16 warps  3.58 4.75 5.01 4.71 4.78 6.27 4.83
   *   double  8 warps  2.91 4.52 3.91 2.91 3.69 2.47 2.51
   *          16 warps  2.64 3.87 2.43 1.83 2.61 3.49 3.13
   * Sixteen win where one block (and in float Q7 registers) is all a
   * multiprocessor holds and a patch's 11 to 19 tiles per stage then take
   * one round instead of two; eight where a block holds few tiles (double
   * Q4, Q5: 6, 8 in the first stage) or two blocks fit. */
  static constexpr int threads = 32 * (sizeof(T) == 8 ? (k >= 7 ? 16 : 8) : (k == 6 ? 8 : 16));
  static constexpr int copies = passes == 3 ? 2 : 1; /* B fragments: hi, and lo in float */
  static constexpr int fragment_words =
      copies * (z_stage::shape::words + y_stage::shape::words + x_stage::shape::words +
                2 * s_stage::shape::words);
  static constexpr size_t fragment_bytes =
      size_t(fragment_words) * sizeof(typename mma_word<T>::type);
  static constexpr size_t bytes = fragment_bytes + size_t(teams) * patch_bytes;
};

template <int k, typename T, bool boundary>
__global__ void __launch_bounds__(mma_config<k, T>::threads)
    patch_fused_mma_kernel(const tpmg_level lvl, const item_grid grid, const T *__restrict__ b,
                           T *x, const __grid_constant__ reference_data<k, T> c) {
  using config = mma_config<k, T>;
  using W = typename mma_word<T>::type;
  constexpr int P = config::P, R = config::R, H = k - 1, QP = config::QP, LP = config::LP,
                QR = config::QR, LR = config::LR, KP = config::KP, KR = config::KR,
                teams = config::teams, PV = config::patch_values, AV = config::a_values,
                passes = config::passes, copies = config::copies;
  constexpr int zw = config::z_stage::shape::words, yw = config::y_stage::shape::words,
                xw = config::x_stage::shape::words, sw = config::s_stage::shape::words;
  extern __shared__ __align__(16) unsigned char tpmg_cuda_shared[];
  W *fz = reinterpret_cast<W *>(tpmg_cuda_shared);
  W *fy = fz + copies * zw, *fx = fy + copies * yw, *fs = fx + copies * xw, *fst = fs + copies * sw;
  T *shared = reinterpret_cast<T *>(tpmg_cuda_shared + config::fragment_bytes);
  T *const A = shared, *const B = shared + AV; /* regions a and b of patch 0 */
  __shared__ team_info<teams> info;
  __shared__ T lambda[3][QR]; /* the level's eigenvalues per direction, 1 in the padding */

  /* the B operands: patch rows 1..R of the unit matrices with the level's
   * scale factors; the eigenvectors with the even ones first */
  const auto S = [&](int i, int j) -> T {
    if (i >= R || j >= R)
      return T(0);
    if (j < k)
      return c.eigen_even[(i <= H ? i : R - 1 - i) * k + j];
    const int o = j - k;
    if (i == H)
      return T(0);
    return i < H ? c.eigen_odd[i * H + o] : -c.eigen_odd[(R - 1 - i) * H + o];
  };
  const auto row_entry = [&](const T *m, int n, int kk) -> T {
    return n < R && kk < P ? m[(n + 1) * P + kk] : T(0);
  };
  mma_fill<typename config::z_stage, passes, T>(fz, fz + zw, [&](int, int kk, int po, int n) {
    return row_entry(po == 0 ? c.mass : c.stiffness, n, kk);
  });
  mma_fill<typename config::y_stage, passes, T>(fy, fy + yw, [&](int p, int kk, int po, int n) {
    if (p == 0) /* from M_z X: a = c_1 K_y (.), b = M_y (.) */
      return po == 0 ? c.coefficient[1] * row_entry(c.stiffness, n, kk) : row_entry(c.mass, n, kk);
    return po == 0 ? c.coefficient[2] * row_entry(c.mass, n, kk) : T(0); /* from K_z X */
  });
  mma_fill<typename config::x_stage, passes, T>(fx, fx + xw, [&](int p, int kk, int, int n) {
    return p == 0 ? row_entry(c.mass, n, kk) : c.coefficient[0] * row_entry(c.stiffness, n, kk);
  });
  mma_fill<typename config::s_stage, passes, T>(fs, fs + sw,
                                                [&](int, int kk, int, int n) { return S(kk, n); });
  mma_fill<typename config::s_stage, passes, T>(fst, fst + sw,
                                                [&](int, int kk, int, int n) { return S(n, kk); });
  for (int e = threadIdx.x; e < 3 * QR; e += blockDim.x) {
    const int d = e / QR, i = e % QR;
    lambda[d][i] = i < R ? c.lambda_even_odd[i] * c.inverse_h2[d] : T(1);
  }

  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1], n2 = lvl.n[2];
  const tpmg_index groups = (grid.total + teams - 1) / teams;
  for (tpmg_index group = blockIdx.x; group < groups; group += gridDim.x) {
    __syncthreads(); /* the fragments are built, the last group is done */
    setup_teams<3>(lvl, grid, group, info);
    /* load: X line (x, y) = the window's z column, zeros outside the level,
     * on Dirichlet points, in the padding (BOUNDARY: in the patch interior);
     * neighbouring threads on neighbouring x */
    for (int e = threadIdx.x; e < teams * P * P; e += blockDim.x) {
      const int j = e / (P * P), l = e % (P * P), yy = l / P, xx = l % P;
      const tpmg_index gx = info.start[j][0] + xx, gy = info.start[j][1] + yy;
      const bool column = info.active[j] && inside(gx, n0) && inside(gy, n1);
      const bool inner = boundary && xx > 0 && xx < P - 1 && yy > 0 && yy < P - 1;
      /* the window's z points strictly inside the level: first..last-1 */
      const tpmg_index z0g = info.start[j][2];
      const int first = z0g > 0 ? 0 : int(1 - z0g), last = z0g + P < n2 ? P : int(n2 - 1 - z0g);
      const tpmg_index plane = n0 * n1;
      const T *src = x + gx + n0 * gy + plane * z0g;
      T *dst = A + j * PV + (xx * P + yy) * LP;
#pragma unroll
      for (int z0 = 0; z0 < QP; z0 += 16 / sizeof(T)) {
        T v[16 / sizeof(T)];
#pragma unroll
        for (int i = 0; i < int(16 / sizeof(T)); ++i) {
          const int zz = z0 + i;
          const bool hole = inner && zz > 0 && zz < P - 1;
          v[i] = zz < P && column && !hole && zz >= first && zz < last ? src[plane * zz] : T(0);
        }
        if constexpr (sizeof(T) == 4)
          *reinterpret_cast<float4 *>(dst + z0) = make_float4(v[0], v[1], v[2], v[3]);
        else
          *reinterpret_cast<double2 *>(dst + z0) = make_double2(v[0], v[1]);
      }
    }
    __syncthreads();
    /* S1, z: rows (x, y) of X; Z line (p, z', x) = (p R + z') P + x along y */
    mma_zero<teams, 2 * R * P, LP, P, QP>(B, PV);
    mma_stage<T, passes, 1, KP, 2, KR, teams * P * P>(
        fz, fz + zw, 0,
        [&](int r) -> const T * { return A + (r / (P * P)) * PV + (r % (P * P)) * LP; },
        [&](int r) {
          const unsigned j = unsigned(r) / (P * P), l = unsigned(r) % (P * P);
          T *o = B + j * PV + (l / P) * LP + l % P;
          return [o](int po, int n, T v0, T v1) {
            T *q = o + (po * R + n) * P * LP;
            if (n < R)
              q[0] = v0;
            if (n + 1 < R)
              q[P * LP] = v1;
          };
        });
    __syncthreads();
    /* S2, y: rows (z', x) of Z_M, Z_K; Y line (q, z', y') = q R^2 + z' R + y' along x */
    mma_zero<teams, 2 * R * R, LP, P, QP>(A, PV);
    mma_stage<T, passes, 2, KP, 2, KR, teams * R * P>(
        fy, fy + yw, R * P * LP,
        [&](int r) -> const T * { return B + (r / (R * P)) * PV + (r % (R * P)) * LP; },
        [&](int r) {
          const unsigned j = unsigned(r) / (R * P), l = unsigned(r) % (R * P);
          T *o = A + j * PV + (l / P) * R * LP + l % P;
          return [o](int po, int n, T v0, T v1) {
            T *q = o + (po * R * R + n) * LP;
            if (n < R)
              q[0] = v0;
            if (n + 1 < R)
              q[LP] = v1;
          };
        });
    __syncthreads();
    /* S3, x: rows (z', y') of Y_a, Y_b; U line (z, y) = z R + y along x,
     * U = b_I - (.), zeros in the padding */
    mma_stage<T, passes, 2, KP, 1, KR, teams * R * R>(
        fx, fx + xw, R * R * LP,
        [&](int r) -> const T * { return A + (r / (R * R)) * PV + (r % (R * R)) * LP; },
        [&](int r) {
          const unsigned j = unsigned(r) / (R * R), l = unsigned(r) % (R * R);
          const T *bl = info.active[j] ? b + info.base[j] + n0 * (l % R + n1 * (l / R)) : nullptr;
          T *o = B + j * PV + l * LR;
          return [o, bl](int, int n, T v0, T v1) {
            o[n] = n < R ? (bl ? bl[n] : T(0)) - v0 : T(0);
            o[n + 1] = n + 1 < R ? (bl ? bl[n + 1] : T(0)) - v1 : T(0);
          };
        });
    __syncthreads();
    /* the fast diagonalization: S^T along x, y, z, the eigenvalue scaling, S
     * along z, y, x; rows (u, v), v the next stage's direction */
    const auto r_line = [&](T *region, int r) -> const T * {
      return region + (unsigned(r) / (R * R)) * PV + (unsigned(r) % (R * R)) * LR;
    };
    /* stores (u, v, n) into line n R + u (swap: u R + n), position v */
    const auto r_store = [&](T *region, bool swap) {
      return [=](int r) {
        const unsigned j = unsigned(r) / (R * R), l = unsigned(r) % (R * R), u = l / R, v = l % R;
        T *o = region + j * PV + (swap ? u * R : u) * LR + v;
        const int step = swap ? LR : R * LR; /* from line n to n + 1 */
        return [o, step](int, int n, T v0, T v1) {
          T *q = o + n * step;
          if (n < R)
            q[0] = v0;
          if (n + 1 < R)
            q[step] = v1;
        };
      };
    };
    constexpr int SR = teams * R * R;
    /* S4, x: rows (z, y) of U; F5 line (x, z) = x R + z along y */
    mma_zero<teams, R * R, LR, R, QR>(A, PV);
    mma_stage<T, passes, 1, KR, 1, KR, SR>(
        fs, fs + sw, 0, [&](int r) { return r_line(B, r); }, r_store(A, false));
    __syncthreads();
    /* S5, y: rows (x, z) of F5; F6 line (x, y) = x R + y along z */
    mma_zero<teams, R * R, LR, R, QR>(B, PV);
    mma_stage<T, passes, 1, KR, 1, KR, SR>(
        fs, fs + sw, 0, [&](int r) { return r_line(A, r); }, r_store(B, true));
    __syncthreads();
    /* S6, z: rows (x, y) of F6, scaled; F7 line (x, y) along z, all QR values */
    mma_stage<T, passes, 1, KR, 1, KR, SR>(
        fs, fs + sw, 0, [&](int r) { return r_line(B, r); },
        [&](int r) {
          const unsigned j = unsigned(r) / (R * R), l = unsigned(r) % (R * R);
          const T xy = lambda[0][l / R] + lambda[1][l % R], scale = c.solve_scale;
          T *o = A + j * PV + l * LR;
          return [o, xy, scale](int, int n, T v0, T v1) {
            o[n] = mma_divide(v0 * scale, xy + lambda[2][n]);
            o[n + 1] = mma_divide(v1 * scale, xy + lambda[2][n + 1]);
          };
        });
    __syncthreads();
    /* S7, z: rows (x, y) of F7; F8 line (z, x) = z R + x along y */
    mma_zero<teams, R * R, LR, R, QR>(B, PV);
    mma_stage<T, passes, 1, KR, 1, KR, SR>(
        fst, fst + sw, 0, [&](int r) { return r_line(A, r); }, r_store(B, false));
    __syncthreads();
    /* S8, y: rows (z, x) of F8; F9 line (z, y) = z R + y along x */
    mma_zero<teams, R * R, LR, R, QR>(A, PV);
    mma_stage<T, passes, 1, KR, 1, KR, SR>(
        fst, fst + sw, 0, [&](int r) { return r_line(B, r); }, r_store(A, true));
    __syncthreads();
    /* S9, x: rows (z, y) of F9; x_I += (BOUNDARY: =) the result */
    mma_stage<T, passes, 1, KR, 1, KR, SR>(
        fst, fst + sw, 0, [&](int r) { return r_line(A, r); },
        [&](int r) {
          const unsigned j = unsigned(r) / (R * R), l = unsigned(r) % (R * R);
          T *o = info.active[j] ? x + info.base[j] + n0 * (l % R + n1 * (l / R)) : nullptr;
          return [o](int, int n, T v0, T v1) {
            if (!o)
              return;
            if (n < R)
              update_interior<boundary>(o[n], v0);
            if (n + 1 < R)
              update_interior<boundary>(o[n + 1], v1);
          };
        });
  }
}

/* Launch the tensor-core fused step on the patches of one colour: a
 * persistent grid of as many blocks as fit the GPU at once. */
template <int k, typename T, bool boundary>
tpmg_status launch_fused_mma(tpmg_context *ctx, const tpmg_level *lvl, const item_grid &grid,
                             const reference_data<k, T> &c, const T *b, T *x) {
  using config = mma_config<k, T>;
  if (grid.total <= 0)
    return TPMG_SUCCESS;
  auto kernel = patch_fused_mma_kernel<k, T, boundary>;
  /* per launch, on the context's device: function attributes belong to the
   * device's context, so a value kept from another device would be wrong */
  if (config::bytes > 48 * 1024) {
    const cudaError_t error = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(config::bytes));
    if (error != cudaSuccess)
      return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                            "tensor-core smoother, degree %d: %zu bytes of shared memory per "
                            "block are more than the device allows (%s)",
                            k, config::bytes, cudaGetErrorString(error));
  }
  int per_sm = 0, sms = 0; /* blocks per multiprocessor, multiprocessors */
  TPMG_CUDA_CALL(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                          &per_sm, kernel, config::threads, config::bytes));
  if (per_sm < 1)
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "tensor-core smoother, degree %d: %zu bytes of shared memory per "
                          "block do not fit a multiprocessor",
                          k, config::bytes);
  TPMG_CUDA_CALL(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, tpmg_backend_device(ctx)));
  const tpmg_index groups = (grid.total + config::teams - 1) / config::teams;
  const tpmg_index most = tpmg_index(per_sm) * sms;
  const unsigned blocks = unsigned(groups < most ? groups : most);
  kernel<<<blocks, config::threads, config::bytes, stream_of(ctx)>>>(*lvl, grid, b, x, c);
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    return cuda_error(ctx, error, "patch_fused_mma_kernel", __FILE__, __LINE__);
  return TPMG_SUCCESS;
}

} // namespace tpmg_cuda

#endif
