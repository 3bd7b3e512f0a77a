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
 * Measured (doc/benchmarks.md): correct, but 0.3 to 0.7 times CONSTANT's
 * speed. The tensor pipe is active 10-16% of the time; Nsight Compute counts
 * more instructions than CONSTANT's (float, one colour: Q3 101 M against 55 M,
 * Q7 145 M against 101 M). Each thread handles its fragment elements one by
 * one: a load with its own address and range check, the split into tf32,
 * and one store per output element, which costs more than the multiply-adds
 * that the mma replace. One mma per tile on single tf32 operands (8d82b28,
 * TENSOR_TF32) ran 1.2-1.6 times faster than this and still slower than
 * CONSTANT.
 *
 * Contractions as matrix products. A stage contracts one direction of a
 * tensor held in shared memory: every line along that direction (a row of the
 * product's A operand, 16 lines per tile, lines of several patches
 * concatenated) times a 1D matrix (the B operand, K x N, the same for every
 * line). A stage may read two input lines per row (their K's concatenated, each
 * padded to a multiple of 8) and write two output lines (N's likewise). The B
 * operands of all stages are built once per block in shared memory in the
 * fragment order of mma.sync (two words per lane, one 8- or 16-byte load), from
 * the unit patch's matrices (reference_data) with the level's scale factors.
 * The fast diagonalization uses the dense eigenvector matrix S (columns even
 * first, as reference_data's even/odd split; the same for every direction) and
 * its transpose: 2k-1 padded to 8s.
 *
 * The stages of one patch (P = 2k+1 window points, R = I = 2k-1 interior
 * points per direction), with the CONSTANT kernels' factorization
 * (tpmg-cuda-tensor.cuh, apply_patch_rows):
 *   load   X = xbar, the window from device memory          [P][P][P]
 *   z      Z = (M_z X, K_z X) rows 1..R                       [2][R][P][P]
 *   y      Y = (c_2 M_y Z_K + c_1 K_y Z_M, M_y Z_M)           [2][R][R][P]
 *   x      U = b_I - (M_x Y_a + c_0 K_x Y_b)                  [R][R][R]
 *   then S^T along z, y, x; the eigenvalue scaling; S along x, y, z, the last
 *   one adding to (BOUNDARY: storing into) x_I in device memory.
 * X, Y and the odd diagonalization stages share one region of shared memory,
 * Z, U and the even stages another.
 *
 * Counts per patch (3D, T_s = lines / 16 rounded up, KS and NT the 8-padded
 * K and N over 8): mma tiles z 2 T(P²) ceil(P/8) ceil(R/8), y 4 T(RP)
 * ceil(P/8) ceil(R/8), x 2 T(R²) ceil(P/8) ceil(R/8), diagonalization 6 T(I²)
 * ceil(I/8)²; times 3 for TENSOR in float. Q3: 36 tiles (27 DoFs), Q7: 680
 * (343 DoFs). Shared memory per value of a line: one load (A) and per output
 * one store; B fragments: one 8/16-byte load per tile and pass.
 *
 * Blocks: mma_threads threads; `teams` patches at a time, enough for two
 * 16-line tiles per warp in the smallest stage, as many as fit 64 KB; a
 * persistent grid (as many blocks as fit the GPU) strides over the patch
 * groups, so the B fragments are built once per block. */
#ifndef TPMG_CUDA_MMA_CUH
#define TPMG_CUDA_MMA_CUH

#include <stdint.h>

#include "tpmg-cuda-tensor.cuh"
#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

constexpr int mma_threads = 256;

/* An operand word: a double, or the bits of a tf32 number. */
template <typename T> struct mma_word;
template <> struct mma_word<double> { using type = double; };
template <> struct mma_word<float> { using type = uint32_t; };

/* Products per tile: one in double, three in float (split operands). */
template <typename T> constexpr int mma_passes = sizeof(T) == 4 ? 3 : 1;

/* v = hi (+ lo): double as is; float rounded to tf32, and with passes == 3
 * the remainder as a second tf32 number. */
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
template <int Kin, int parts_in, int Nout, int parts_out> struct mma_stage {
  static constexpr int KS = (Kin + 7) / 8, NT = (Nout + 7) / 8;
  static constexpr int words = parts_out * NT * parts_in * KS * 64;
};

/* Fill the B fragments of a stage (all threads of the block): entry (k, n) of
 * part (p, po) is B(p, k, po, n), zero in the padding. Lane l holds, for
 * mma.sync's B (8 x 8, column-major), rows l % 4 and l % 4 + 4 of column l / 4. */
template <typename Stage, int passes, typename T, typename F>
__device__ void mma_fill(typename mma_word<T>::type *hi, typename mma_word<T>::type *lo,
                         F &&entry) {
  constexpr int parts_in = Stage::parts_in, parts_out = Stage::parts_out;
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
    const T v = kk < Stage::Kin && n < Stage::Nout && po < parts_out ? entry(p, kk, po, n) : T(0);
    typename mma_word<T>::type h, l;
    mma_split<passes>(v, h, l);
    hi[w] = h;
    if (passes == 3)
      lo[w] = l;
  }
}

/* One stage over `lines` rows: out(row)(po, n, value) for every existing row
 * and n < Nout, value = sum over parts p and k < Kin of in(row, p)[k stride] B.
 * Warps take 16-row tiles in turn. */
template <typename Stage, int passes, int lines, typename T, typename In, typename Out>
__device__ __forceinline__ void mma_contract(const typename mma_word<T>::type *bhi,
                                             const typename mma_word<T>::type *blo, const In &in,
                                             const Out &out) {
  using W = typename mma_word<T>::type;
  constexpr int KS = Stage::shape::KS, NT = Stage::shape::NT, PI = Stage::parts_in,
                PO = Stage::parts_out, tiles = (lines + 15) / 16;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  for (int tile = threadIdx.x / 32; tile < tiles; tile += blockDim.x / 32) {
    const int row[2] = {tile * 16 + g, tile * 16 + g + 8};
    const bool ok[2] = {row[0] < lines, row[1] < lines};
    W ahi[PI][KS][4], alo[PI][KS][4];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int p = 0; p < PI; ++p) {
        const T *src = in(ok[h] ? row[h] : 0, p);
#pragma unroll
        for (int ks = 0; ks < KS; ++ks)
#pragma unroll
          for (int q = 0; q < 2; ++q) {
            const int kk = ks * 8 + t + 4 * q;
            const T v = ok[h] && kk < Stage::Kin ? src[kk * In::stride] : T(0);
            mma_split<passes>(v, ahi[p][ks][h + 2 * q], alo[p][ks][h + 2 * q]);
          }
      }
    const auto out0 = out(ok[0] ? row[0] : 0), out1 = out(ok[1] ? row[1] : 0);
#pragma unroll
    for (int po = 0; po < PO; ++po)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        T acc[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
        for (int p = 0; p < PI; ++p)
#pragma unroll
          for (int ks = 0; ks < KS; ++ks) {
            const int f = 2 * (((((po * NT + nt) * PI + p) * KS + ks) * 32) + lane);
            const W bh[2] = {bhi[f], bhi[f + 1]};
            if (passes == 3) {
              const W bl[2] = {blo[f], blo[f + 1]};
              mma_tile(acc, alo[p][ks], bh);
              mma_tile(acc, ahi[p][ks], bl);
            }
            mma_tile(acc, ahi[p][ks], bh);
          }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int h = i / 2, n = nt * 8 + 2 * t + i % 2;
          if (ok[h] && n < Stage::Nout) {
            if (h == 0)
              out0(po, n, acc[i]);
            else
              out1(po, n, acc[i]);
          }
        }
      }
  }
}

/* The fixed sizes of the tensor-core fused step for degree k, value type T. */
template <int k, typename T, int passes> struct mma_config {
  static constexpr int P = 2 * k + 1, R = 2 * k - 1, I = R;
  template <int Kin_, int PI_, int Nout_, int PO_> struct stage {
    static constexpr int Kin = Kin_, parts_in = PI_, Nout = Nout_, parts_out = PO_;
    using shape = mma_stage<Kin_, PI_, Nout_, PO_>;
  };
  using z_stage = stage<P, 1, R, 2>;
  using y_stage = stage<P, 2, R, 2>;
  using x_stage = stage<P, 2, R, 1>;
  using s_stage = stage<I, 1, I, 1>;
  static constexpr int max2(int a, int b) {
    return a > b ? a : b;
  }
  /* per patch: region a (X, Y, odd diagonalization stages), region b (Z, U, even) */
  static constexpr int a_values = max2(max2(P * P * P, 2 * R * R * P), I *I *I);
  static constexpr int b_values = max2(2 * R * P * P, I *I *I);
  static constexpr int patch_values = a_values + b_values;
  static constexpr size_t patch_bytes = size_t(patch_values) * sizeof(T);
  static constexpr int by_lines = (mma_threads + R * R - 1) / (R * R); /* 2 tiles per warp */
  static constexpr int by_memory = int(64 * 1024 / patch_bytes);
  static constexpr int teams = by_lines < by_memory ? by_lines : (by_memory > 0 ? by_memory : 1);
  /* B fragments: z, y, x, S^T, S; hi and (3 passes) lo copies */
  static constexpr int copies = passes == 3 ? 2 : 1;
  static constexpr int fragment_words =
      copies * (z_stage::shape::words + y_stage::shape::words + x_stage::shape::words +
                2 * s_stage::shape::words);
  static constexpr size_t fragment_bytes =
      size_t(fragment_words) * sizeof(typename mma_word<T>::type);
  static constexpr size_t bytes = fragment_bytes + size_t(teams) * patch_bytes;
};

/* A line of a tensor in shared memory, for mma_contract: part p of row r
 * starts at base + ... (see the stages) with a constant stride. */
template <int s> struct mma_lines { static constexpr int stride = s; };

template <int k, typename T, bool boundary>
__global__ void __launch_bounds__(mma_threads)
    patch_fused_mma_kernel(const tpmg_level lvl, const item_grid grid, const T *__restrict__ b,
                           T *x, const __grid_constant__ reference_data<k, T> c) {
  constexpr int passes = mma_passes<T>;
  using config = mma_config<k, T, passes>;
  using W = typename mma_word<T>::type;
  constexpr int P = config::P, R = config::R, I = config::I, H = k - 1, teams = config::teams,
                PV = config::patch_values, AV = config::a_values;
  extern __shared__ __align__(16) unsigned char tpmg_cuda_shared[];
  W *frag = reinterpret_cast<W *>(tpmg_cuda_shared);
  constexpr int copies = config::copies;
  W *fz = frag, *fy = fz + copies * config::z_stage::shape::words,
    *fx = fy + copies * config::y_stage::shape::words,
    *fs = fx + copies * config::x_stage::shape::words,
    *fst = fs + copies * config::s_stage::shape::words;
  constexpr int zw = config::z_stage::shape::words, yw = config::y_stage::shape::words,
                xw = config::x_stage::shape::words, sw = config::s_stage::shape::words;
  T *shared = reinterpret_cast<T *>(tpmg_cuda_shared + config::fragment_bytes);
  __shared__ team_info<teams> info;

  /* the B operands: patch rows 1..R of the unit matrices, the level's scale
   * factors, the eigenvectors with the even ones first */
  const auto S = [&](int i, int j) -> T {
    if (j < k) {
      const int ii = i <= H ? i : I - 1 - i;
      return c.eigen_even[ii * k + j];
    }
    const int o = j - k;
    if (i == H)
      return T(0);
    return i < H ? c.eigen_odd[i * H + o] : -c.eigen_odd[(I - 1 - i) * H + o];
  };
  mma_fill<typename config::z_stage, passes, T>(fz, fz + zw, [&](int, int kk, int po, int n) {
    return po == 0 ? c.mass[(n + 1) * P + kk] : c.stiffness[(n + 1) * P + kk];
  });
  mma_fill<typename config::y_stage, passes, T>(fy, fy + yw, [&](int p, int kk, int po, int n) {
    const T m = c.mass[(n + 1) * P + kk], s = c.stiffness[(n + 1) * P + kk];
    if (p == 0) /* from M_z X: a = c_1 K_y (.), b = M_y (.) */
      return po == 0 ? c.coefficient[1] * s : m;
    return po == 0 ? c.coefficient[2] * m : T(0); /* from K_z X: a = c_2 M_y (.) */
  });
  mma_fill<typename config::x_stage, passes, T>(fx, fx + xw, [&](int p, int kk, int, int n) {
    return p == 0 ? c.mass[(n + 1) * P + kk] : c.coefficient[0] * c.stiffness[(n + 1) * P + kk];
  });
  mma_fill<typename config::s_stage, passes, T>(fs, fs + sw,
                                                [&](int, int kk, int, int n) { return S(kk, n); });
  mma_fill<typename config::s_stage, passes, T>(fst, fst + sw,
                                                [&](int, int kk, int, int n) { return S(n, kk); });

  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1], n2 = lvl.n[2];
  const tpmg_index groups = (grid.total + teams - 1) / teams;
  for (tpmg_index group = blockIdx.x; group < groups; group += gridDim.x) {
    __syncthreads(); /* the fragments are built, the last group is done */
    for (int t = threadIdx.x; t < teams; t += blockDim.x) {
      const tpmg_index item = group * teams + t;
      const bool active = item < grid.total;
      tpmg_index start[3] = {0, 0, 0}, index[3];
      if (active)
        item_start(grid, item, start, index);
#pragma unroll
      for (int d = 0; d < 3; ++d)
        info.start[t][d] = start[d];
      info.base[t] = start[0] + 1 + n0 * (start[1] + 1 + n1 * (start[2] + 1));
      info.active[t] = active;
    }
    __syncthreads();
    /* load: X = the window, Dirichlet and outside points zero (BOUNDARY: the
     * patch interior zero too, not loaded) */
    for (int e = threadIdx.x; e < teams * P * P * P; e += blockDim.x) {
      const int j = e / (P * P * P), l = e % (P * P * P);
      const int zz = l / (P * P), yy = (l / P) % P, xx = l % P;
      T v = T(0);
      const tpmg_index gx = info.start[j][0] + xx, gy = info.start[j][1] + yy,
                       gz = info.start[j][2] + zz;
      const bool hole =
          boundary && xx > 0 && xx < P - 1 && yy > 0 && yy < P - 1 && zz > 0 && zz < P - 1;
      if (info.active[j] && !hole && inside(gx, n0) && inside(gy, n1) && inside(gz, n2))
        v = x[gx + n0 * (gy + n1 * gz)];
      shared[j * PV + l] = v;
    }
    __syncthreads();
    /* z: rows (y, x) of X; Z[po][n][y][x] */
    {
      struct in_t : mma_lines<P * P> {
        T *s;
        __device__ const T *operator()(int r, int) const {
          return s + (r / (P * P)) * PV + r % (P * P);
        }
      } in{{}, shared};
      const auto out = [&](int r) {
        T *o = shared + (r / (P * P)) * PV + AV + r % (P * P);
        return [o](int po, int n, T v) { o[(po * R + n) * P * P] = v; };
      };
      mma_contract<typename config::z_stage, passes, teams * P * P, T>(fz, fz + zw, in, out);
    }
    __syncthreads();
    /* y: rows (z, x) of Z_M and Z_K; Y[po][z][n][x] */
    {
      struct in_t : mma_lines<P> {
        T *s;
        __device__ const T *operator()(int r, int p) const {
          const int j = r / (R * P), l = r % (R * P), zz = l / P, xx = l % P;
          return s + j * PV + AV + (p * R + zz) * P * P + xx;
        }
      } in{{}, shared};
      const auto out = [&](int r) {
        const int j = r / (R * P), l = r % (R * P), zz = l / P, xx = l % P;
        T *o = shared + j * PV + zz * R * P + xx;
        return [o](int po, int n, T v) { o[po * R * R * P + n * P] = v; };
      };
      mma_contract<typename config::y_stage, passes, teams * R * P, T>(fy, fy + yw, in, out);
    }
    __syncthreads();
    /* x: rows (z, y) of Y_a and Y_b; U[z][y][n] = b_I - (.) */
    {
      struct in_t : mma_lines<1> {
        T *s;
        __device__ const T *operator()(int r, int p) const {
          const int j = r / (R * R), l = r % (R * R);
          return s + j * PV + p * R * R * P + l * P;
        }
      } in{{}, shared};
      const auto out = [&](int r) {
        const int j = r / (R * R), l = r % (R * R), zz = l / R, yy = l % R;
        T *o = shared + j * PV + AV + l * R;
        const bool active = info.active[j];
        const T *bl = b + info.base[j] + n0 * (yy + n1 * zz);
        return [o, active, bl](int, int n, T v) { o[n] = (active ? bl[n] : T(0)) - v; };
      };
      mma_contract<typename config::x_stage, passes, teams * R * R, T>(fx, fx + xw, in, out);
    }
    /* the fast diagonalization: S^T along z, y, x, the eigenvalue scaling, S
     * along x, y, z; lines (a, c) of the I^3 tensor, u in region b, v in a */
    const auto along = [&](int d, int off, int r) -> T * {
      /* line r's first point in direction d (0: x, 1: y, 2: z) */
      const int j = r / (I * I), l = r % (I * I), hi = l / I, lo = l % I;
      T *base = shared + j * PV + off;
      if (d == 2)
        return base + l; /* (y, x) */
      if (d == 1)
        return base + hi * I * I + lo; /* (z, x) */
      return base + l * I;             /* (z, y) */
    };
    constexpr int SL = teams * I * I;
    struct in_z : mma_lines<I * I> {
      const decltype(along) *f;
      int off;
      __device__ const T *operator()(int r, int) const {
        return (*f)(2, off, r);
      }
    };
    struct in_y : mma_lines<I> {
      const decltype(along) *f;
      int off;
      __device__ const T *operator()(int r, int) const {
        return (*f)(1, off, r);
      }
    };
    struct in_x : mma_lines<1> {
      const decltype(along) *f;
      int off;
      __device__ const T *operator()(int r, int) const {
        return (*f)(0, off, r);
      }
    };
    const auto store = [&](int d, int off) {
      return [&, d, off](int r) {
        T *o = along(d, off, r);
        const int stride = d == 2 ? I * I : d == 1 ? I : 1;
        return [o, stride](int, int n, T v) { o[n * stride] = v; };
      };
    };
    __syncthreads();
    mma_contract<typename config::s_stage, passes, SL, T>(fs, fs + sw, in_z{{}, &along, AV},
                                                          store(2, 0));
    __syncthreads();
    mma_contract<typename config::s_stage, passes, SL, T>(fs, fs + sw, in_y{{}, &along, 0},
                                                          store(1, AV));
    __syncthreads();
    {
      const auto scaled = [&](int r) {
        T *o = along(0, 0, r);
        const int l = r % (I * I);
        const T zy =
            c.lambda_even_odd[l / I] * c.inverse_h2[2] + c.lambda_even_odd[l % I] * c.inverse_h2[1];
        return [o, zy, &c](int, int n, T v) {
          o[n] = v * c.solve_scale / (zy + c.lambda_even_odd[n] * c.inverse_h2[0]);
        };
      };
      mma_contract<typename config::s_stage, passes, SL, T>(fs, fs + sw, in_x{{}, &along, AV},
                                                            scaled);
    }
    __syncthreads();
    mma_contract<typename config::s_stage, passes, SL, T>(fst, fst + sw, in_x{{}, &along, 0},
                                                          store(0, AV));
    __syncthreads();
    mma_contract<typename config::s_stage, passes, SL, T>(fst, fst + sw, in_y{{}, &along, AV},
                                                          store(1, 0));
    __syncthreads();
    {
      const auto update = [&](int r) {
        const int j = r / (I * I), l = r % (I * I);
        T *o = x + info.base[j] + l % I + n0 * (l / I);
        const bool active = info.active[j];
        const tpmg_index plane = n0 * n1;
        return [o, active, plane](int, int n, T v) {
          if (active)
            update_interior<boundary>(o[n * plane], v);
        };
      };
      mma_contract<typename config::s_stage, passes, SL, T>(fst, fst + sw, in_z{{}, &along, 0},
                                                            update);
    }
  }
}

/* Launch the tensor-core fused step on the patches of one colour: a
 * persistent grid of as many blocks as fit the GPU at once. */
template <int k, typename T, bool boundary>
tpmg_status launch_fused_mma(tpmg_context *ctx, const tpmg_level *lvl, const item_grid &grid,
                             const reference_data<k, T> &c, const T *b, T *x) {
  using config = mma_config<k, T, mma_passes<T>>;
  if (grid.total <= 0)
    return TPMG_SUCCESS;
  auto kernel = patch_fused_mma_kernel<k, T, boundary>;
  static int per_sm = 0; /* blocks per multiprocessor, the same for every call */
  if (per_sm == 0) {
    if (config::bytes > 48 * 1024)
      TPMG_CUDA_CALL(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               int(config::bytes)));
    int blocks = 0;
    TPMG_CUDA_CALL(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, mma_threads,
                                                                      config::bytes));
    if (blocks < 1)
      return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                            "tensor-core smoother, degree %d: %zu bytes of shared memory per "
                            "block do not fit a multiprocessor",
                            k, config::bytes);
    per_sm = blocks;
  }
  int device = 0, sms = 0;
  TPMG_CUDA_CALL(ctx, cudaGetDevice(&device));
  TPMG_CUDA_CALL(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const tpmg_index groups = (grid.total + config::teams - 1) / config::teams;
  const tpmg_index most = tpmg_index(per_sm) * sms;
  const unsigned blocks = unsigned(groups < most ? groups : most);
  kernel<<<blocks, mma_threads, config::bytes, stream_of(ctx)>>>(*lvl, grid, b, x, c);
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    return cuda_error(ctx, error, "patch_fused_mma_kernel", __FILE__, __LINE__);
  return TPMG_SUCCESS;
}

} // namespace tpmg_cuda

#endif
