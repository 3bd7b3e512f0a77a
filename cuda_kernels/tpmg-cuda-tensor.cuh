/* Device building blocks of the CUDA backend: 1D contractions on register
 * lines and the patch / cell stages built from them, all with compile-time sizes.
 *
 * Layout (paper §3.1.2, "2D thread structure"): a team of threads works on one
 * vertex patch or cell; in every stage each thread owns one line of the tensor
 * along the contracted direction, loads it into registers, multiplies it by the
 * 1D matrix and writes the result line. Tensors in shared memory are x fastest,
 * [z][y][x]. The first stage reads z-columns (y-columns in 2D) straight from the
 * global vector, neighbouring threads on neighbouring x, so loads coalesce; the
 * global index of a patch point is its first index plus strides (lexicographic
 * numbering, paper Figure 4).
 *
 * Where the 1D matrices come from is a policy (the `Matrices` argument):
 * - level_matrices (the basic kernels): the level's own matrices per direction
 *   in device memory. Every thread of a warp reads the same entry at the same
 *   time (a broadcast), but that is one load instruction per multiply-add: the
 *   load/store unit, not the FMA pipe, bounds these kernels.
 * - reference_matrices (the constant kernels): the matrices of the unit patch
 *   (h = 1), the same for every level and direction, passed by value in the
 *   kernel's parameters. Indices are compile-time constants after unrolling, so
 *   the compiler reads the entries from the constant bank (uniform loads, two
 *   floats or one double each) and the FMA pipe is the limit. The level enters
 *   through scale factors: M_d = h_d M, K_d = K / h_d, S_d = S / sqrt(h_d),
 *   Λ_d = Λ / h_d², so the patch operator is Σ_d c_d K ⊗ M ⊗ M (K in direction
 *   d) with c_d = Π_e h_e / h_d², and the fast diagonalization of the patch
 *   interior is (Π_d h_d)^{-1} (S ⊗ S ⊗ S) (Λ_2 + Λ_1 + Λ_0)^{-1} (S ⊗ S ⊗ S)^T
 *   with the level's own eigenvalues Λ_d (paper eq. 2.8). A reaction c adds
 *   c Π_e h_e M ⊗ M ⊗ M to the patch operator (reaction_mass_line: in the last
 *   stage, whose mass-side line gets c Π_e h_e times the other directions' mass
 *   product) and c to every eigenvalue sum (lambda: Λ_D + c in the last
 *   direction D, as in the level's own eigenvalues, tpmg-grid.c).
 * - the tiled kernels: the reference matrices with W > 1 lines per thread in
 *   every stage (register tiling): each matrix entry, read once from the
 *   constant bank, feeds W multiply-adds, and a thread has W independent
 *   chains. The stage functions below take W as a template parameter (W = 1:
 *   CONSTANT). */
#ifndef TPMG_CUDA_TENSOR_CUH
#define TPMG_CUDA_TENSOR_CUH

#include <type_traits>

#include "tpmg-backend.h"

namespace tpmg_cuda {

template <typename T> struct precision_of;
template <> struct precision_of<double> { static constexpr tpmg_precision value = TPMG_DOUBLE; };
template <> struct precision_of<float> { static constexpr tpmg_precision value = TPMG_FLOAT; };

/* ---- where 1D matrices are read from ------------------------------------ */

/* A matrix in device memory, read through the read-only data cache. */
template <typename T> struct global_matrix {
  const T *p;
  __device__ __forceinline__ T operator[](int i) const {
    return __ldg(p + i);
  }
};

/* A matrix in the kernel's parameter block (constant bank). */
template <typename T> struct param_matrix {
  const T *p;
  __device__ __forceinline__ T operator[](int i) const {
    return p[i];
  }
};

/* The 1D data of the unit patch (h = 1) for degree k, row-major: passed by value
 * as a kernel parameter (at most 11.8 KB, Q10 in double). */
template <int k, typename T> struct reference_data {
  static constexpr int P = 2 * k + 1, I = 2 * k - 1, N = k + 1, H = k - 1 > 0 ? k - 1 : 1;
  T mass[P * P]; /* vertex patch of two unit cells */
  T stiffness[P * P];
  T eigenvectors[I * I]; /* column j solves K s = λ_j M s on the patch interior, S^T M S = 1 */
  /* The patch interior is symmetric about its middle point k-1, so every
   * eigenvector is even (k of them) or odd (k-1): the even ones' entries
   * 0..k-1 as rows of eigen_even [i][e], the odd ones' entries 0..k-2 as rows
   * of eigen_odd [i][o], and their eigenvalues, even first, in lambda_even_odd. */
  T eigen_even[k * k];
  T eigen_odd[H * H];
  T lambda_even_odd[I];
  T prolongation[P * N]; /* the coarse cell's basis at the support points of its children */
  T coefficient[3];      /* of the level: c_d = Π_e h_e / h_d² */
  T inverse_h2[3];       /* of the level: 1 / h_d², the eigenvalues' scale */
  T solve_scale;         /* of the level: 1 / Π_d h_d */
  T reaction;            /* of the level: c Π_d h_d, the mass term's factor */
  T shift[3];            /* of the level: c in the last direction (never 0), 0 in the others;
                            0 everywhere on a level with a variable coefficient (surrogate) */
};

/* An empty kernel parameter for kernels that read the level's data. */
struct no_constants {};

/* The basic kernels: the level's matrices per direction, in device memory. */
template <typename T> struct level_matrices {
  static constexpr bool scaled = false;
  static constexpr int band = 0; /* dense rows */
  static constexpr bool even_odd = false;
  const tpmg_level_data &data;
  __device__ __forceinline__ global_matrix<T> mass(int d) const {
    return {static_cast<const T *>(data.patch_mass[d])};
  }
  __device__ __forceinline__ global_matrix<T> stiffness(int d) const {
    return {static_cast<const T *>(data.patch_stiffness[d])};
  }
  __device__ __forceinline__ global_matrix<T> eigenvectors(int d) const {
    return {static_cast<const T *>(data.eigenvectors[d])};
  }
  __device__ __forceinline__ global_matrix<T> prolongation() const {
    return {static_cast<const T *>(data.prolongation)};
  }
  __device__ __forceinline__ T coefficient(int) const {
    return T(1);
  }
  __device__ __forceinline__ T solve_scale() const {
    return T(1);
  }
};

/* The constant kernels: the unit patch's matrices in the kernel parameters. */
template <int k, typename T> struct reference_matrices {
  static constexpr bool scaled = true;
  /* the vertex patch matrices have two cells of k + 1 points: rows 0..k-1 are
   * zero in columns k+1..2k, rows k+1..2k in columns 0..k-1 */
  static constexpr int band = k;
  static constexpr bool even_odd = true;
  const reference_data<k, T> &c;
  __device__ __forceinline__ param_matrix<T> mass(int) const {
    return {c.mass};
  }
  __device__ __forceinline__ param_matrix<T> stiffness(int) const {
    return {c.stiffness};
  }
  __device__ __forceinline__ param_matrix<T> eigenvectors(int) const {
    return {c.eigenvectors};
  }
  __device__ __forceinline__ param_matrix<T> prolongation() const {
    return {c.prolongation};
  }
  __device__ __forceinline__ T coefficient(int d) const {
    return c.coefficient[d];
  }
  __device__ __forceinline__ T reaction() const {
    return c.reaction;
  }
  __device__ __forceinline__ T solve_scale() const {
    return c.solve_scale;
  }
  __device__ __forceinline__ param_matrix<T> eigen_even() const {
    return {c.eigen_even};
  }
  __device__ __forceinline__ param_matrix<T> eigen_odd() const {
    return {c.eigen_odd};
  }
  /* eigenvalue j (even first) of direction d; j may vary between threads.
   * The reaction's shift is in the last direction, never in x (d = 0), whose
   * eigenvalue the innermost loops of the local solves take. */
  __device__ __forceinline__ T lambda(int d, int j) const {
    const T scaled = c.lambda_even_odd[j] * c.inverse_h2[d];
    return d == 0 ? scaled : scaled + c.shift[d];
  }
};

template <typename T>
__device__ __forceinline__ level_matrices<T> matrices_of(const tpmg_level &lvl,
                                                         const no_constants &) {
  return {lvl.data[precision_of<T>::value]};
}
template <typename T, int k>
__device__ __forceinline__ reference_matrices<k, T> matrices_of(const tpmg_level &,
                                                                const reference_data<k, T> &c) {
  return {c};
}

/* ---- 1D matrix times register line -------------------------------------- */

/* out[w][r] (+)= sum_c A[(row0 + r) lda + c] in[w][c]: rows of a row-major
 * matrix applied to W lines at once. R C W multiply-adds; every matrix entry is
 * read once and feeds W of them (the tiled kernels: W > 1 lines per thread, so
 * one constant-bank load per 2W float or W double multiply-adds). With
 * band = k > 0, A is a (2k+1)^2 vertex-patch matrix and the zero blocks are
 * skipped: rows < k and > k have k + 1 nonzeros. */
template <int R, int C, int lda, int row0, bool add, int band = 0, int W, typename T, typename Mat>
__device__ __forceinline__ void mat_vec(const Mat &A, const T (&in)[W][C], T (&out)[W][R]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int row = row0 + r;
    const int first = band > 0 && row > band ? band : 0;
    const int last = band > 0 && row < band ? band : C - 1;
    T sum[W];
#pragma unroll
    for (int w = 0; w < W; ++w)
      sum[w] = add ? out[w][r] : T(0);
#pragma unroll
    for (int c = 0; c < C; ++c)
      if (c >= first && c <= last) {
        const T a = A[(row0 + r) * lda + c];
#pragma unroll
        for (int w = 0; w < W; ++w)
          sum[w] += a * in[w][c];
      }
#pragma unroll
    for (int w = 0; w < W; ++w)
      out[w][r] = sum[w];
  }
}

/* The same on one line. (Not by casting the line to a T[1][C] for the above:
 * through that cast nvcc kept the lines of the 2D team kernels in local memory,
 * a 272-byte stack frame at k = 9 in double, and the fused step ran 27%
 * slower.) */
template <int R, int C, int lda, int row0, bool add, int band = 0, typename T, typename Mat>
__device__ __forceinline__ void mat_vec(const Mat &A, const T (&in)[C], T (&out)[R]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int row = row0 + r;
    const int first = band > 0 && row > band ? band : 0;
    const int last = band > 0 && row < band ? band : C - 1;
    T sum = add ? out[r] : T(0);
#pragma unroll
    for (int c = 0; c < C; ++c)
      if (c >= first && c <= last)
        sum += A[row * lda + c] * in[c];
    out[r] = sum;
  }
}

/* out[r] = sum_c A[c lda + r] in[c]: the transpose of a row-major matrix. */
template <int R, int C, int lda, typename T, typename Mat>
__device__ __forceinline__ void mat_t_vec(const Mat &A, const T (&in)[C], T (&out)[R]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    T sum = 0;
#pragma unroll
    for (int c = 0; c < C; ++c)
      sum += A[c * lda + r] * in[c];
    out[r] = sum;
  }
}

template <int N, typename T> __device__ __forceinline__ void scale_line(T s, T (&v)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    v[i] *= s;
}

/* The last stage of a scaled operator: `mass` is the line that the last
 * direction's mass matrix takes, `stiffness` the one its stiffness takes (the
 * other directions' mass product, unscaled). The reaction's term c Π_e h_e M ⊗
 * M ⊗ M is the mass matrix times `stiffness`, so mass = mass_scale mass +
 * reaction stiffness, then stiffness *= coefficient. Without a reaction (a
 * branch the same for every thread) only the two scalings: done always, these
 * multiply-adds and the shift in every eigenvalue (lambda) made Table 6's Q7
 * solve 4% slower on an H200 (doc/benchmarks.md, the reaction term). */
template <int N, typename T>
__device__ __forceinline__ void reaction_mass_line(T mass_scale, T reaction, T coefficient,
                                                   T (&mass)[N], T (&stiffness)[N]) {
  if (reaction != T(0)) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      mass[i] = mass_scale * mass[i] + reaction * stiffness[i];
  } else {
    scale_line(mass_scale, mass);
  }
  scale_line(coefficient, stiffness);
}

template <int N, typename T>
__device__ __forceinline__ void load_line(const T *p, int stride, T (&v)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    v[i] = p[i * stride];
}

template <int N, typename T>
__device__ __forceinline__ void store_line(T *p, int stride, const T (&v)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    p[i * stride] = v[i];
}

/* ---- geometry ----------------------------------------------------------- */

/* Whether global point g of a direction with n points is strictly inside:
 * neither a Dirichlet point nor outside the level (windows may overhang). */
__device__ __forceinline__ bool inside(tpmg_index g, tpmg_index n) {
  return g > 0 && g < n - 1;
}

/* Global offset of point l of an E^dim tensor (x fastest) with strides n0, n0 n1. */
template <int dim, int E>
__device__ __forceinline__ tpmg_index tensor_offset(const tpmg_level &lvl, int l) {
  const int x = l % E, y = (l / E) % E, z = dim == 3 ? l / (E * E) : 0;
  return x + lvl.n[0] * (y + lvl.n[1] * z);
}

/* The start (first global index per direction) of item `item` of a grid of
 * count[0] x count[1] x count[2] items whose starts are offset + step * t_d. */
struct item_grid {
  tpmg_index count[3];
  tpmg_index offset[3];
  tpmg_index step[3];
  tpmg_index total;
};

__device__ __forceinline__ void item_start(const item_grid &grid, tpmg_index item,
                                           tpmg_index (&start)[3], tpmg_index (&t)[3]) {
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    t[d] = item % grid.count[d];
    item /= grid.count[d];
    start[d] = grid.offset[d] + grid.step[d] * t[d];
  }
}

/* ---- Abar restricted to some rows, applied to a window of the global vector */

/* out = (sum_d K_d ⊗ M_others)[rows row0..row0+R-1 per direction, all P
 * columns] xbar, where xbar is the window of P = 2k+1 points per direction
 * starting at `first` (global, may overhang the level), with Dirichlet and
 * outside points read as zero, and K_d, M_d the P x P patch matrices. Sum
 * factorization as in paper §3.1.1: the first contraction gives M_z xbar and
 * K_z xbar, the second combines K_y M_z + M_y K_z and M_y M_z, the last sums
 * M_x of the former and K_x of the latter (with the scale factors c_d of
 * reference matrices folded into the lines before the second and last
 * contractions).
 * Team of P^(dim-1) threads; s1, s2 hold R P^(dim-1) values each; out (R^dim
 * values) may alias s1. Ends with a barrier.
 * boundary (TPMG_SMOOTHER_BOUNDARY): the window's interior points (1..P-2 in
 * every direction, the patch interior) are read as zero without a load, so
 * out = A_IB x_B for the interior rows: device memory reads P^dim - (P-2)^dim
 * words of src per call instead of P^dim.
 * Counts per call (3D): 2 R P^3 + 3 R^2 P^2 + 2 R^3 P multiply-adds; shared
 * memory: writes 2 R P^2 + 2 R^2 P + R^3, reads 2 R P^2 + 2 R^2 P words. */
template <int dim, int k, int row0, int R, bool boundary = false, typename T, typename Matrices>
__device__ void apply_patch_rows(const tpmg_level &lvl, const Matrices &mat, const T *src,
                                 const tpmg_index (&first)[3], bool active, int rank, T *s1, T *s2,
                                 T *out) {
  constexpr int P = 2 * k + 1;
  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1];
  if constexpr (dim == 2) {
    const auto My = mat.mass(1), Ky = mat.stiffness(1), Mx = mat.mass(0), Kx = mat.stiffness(0);
    if (active && rank < P) {
      const int x = rank;
      const tpmg_index gx = first[0] + x;
      const bool inner_x = boundary && x > 0 && x < P - 1;
      T col[P], m[R], s[R];
#pragma unroll
      for (int y = 0; y < P; ++y) {
        const tpmg_index gy = first[1] + y;
        const bool hole = inner_x && y > 0 && y < P - 1;
        col[y] = !hole && inside(gx, n0) && inside(gy, n1) ? src[gx + n0 * gy] : T(0);
      }
      mat_vec<R, P, P, row0, false, Matrices::band>(My, col, m);
      mat_vec<R, P, P, row0, false, Matrices::band>(Ky, col, s);
      store_line(s1 + x, P, m);
      store_line(s2 + x, P, s);
    }
    __syncthreads();
    T o[R];
    if (active && rank < R) {
      const int y = rank;
      T a[P], b[P];
      load_line(s2 + y * P, 1, a);
      load_line(s1 + y * P, 1, b);
      if constexpr (Matrices::scaled)
        reaction_mass_line(mat.coefficient(1), mat.reaction(), mat.coefficient(0), a, b);
      mat_vec<R, P, P, row0, false, Matrices::band>(Mx, a, o);
      mat_vec<R, P, P, row0, true, Matrices::band>(Kx, b, o);
    }
    __syncthreads();
    if (active && rank < R)
      store_line(out + rank * R, 1, o);
    __syncthreads();
  } else {
    const tpmg_index n2 = lvl.n[2];
    const auto Mz = mat.mass(2), Kz = mat.stiffness(2), My = mat.mass(1), Ky = mat.stiffness(1),
               Mx = mat.mass(0), Kx = mat.stiffness(0);
    /* z: s1 = M_z xbar, s2 = K_z xbar, [R][P][P] */
    if (active && rank < P * P) {
      const int y = rank / P, x = rank % P;
      const tpmg_index gx = first[0] + x, gy = first[1] + y;
      const bool in_xy = inside(gx, n0) && inside(gy, n1);
      const bool inner_xy = boundary && x > 0 && x < P - 1 && y > 0 && y < P - 1;
      const T *p = src + gx + n0 * gy;
      T col[P], m[R], s[R];
#pragma unroll
      for (int z = 0; z < P; ++z) {
        const tpmg_index gz = first[2] + z;
        const bool hole = inner_xy && z > 0 && z < P - 1;
        col[z] = !hole && in_xy && inside(gz, n2) ? p[n0 * n1 * gz] : T(0);
      }
      mat_vec<R, P, P, row0, false, Matrices::band>(Mz, col, m);
      mat_vec<R, P, P, row0, false, Matrices::band>(Kz, col, s);
      store_line(s1 + y * P + x, P * P, m);
      store_line(s2 + y * P + x, P * P, s);
    }
    __syncthreads();
    /* y: a = M_y K_z + K_y M_z, b = M_y M_z, [R][R][P] in place of s1, s2 */
    T a[R], b[R];
    if (active && rank < R * P) {
      const int z = rank / P, x = rank % P;
      T t1[P], t2[P];
      load_line(s1 + z * P * P + x, P, t1);
      load_line(s2 + z * P * P + x, P, t2);
      mat_vec<R, P, P, row0, false, Matrices::band>(My, t1, b);
      if constexpr (Matrices::scaled) {
        scale_line(mat.coefficient(2), t2);
        scale_line(mat.coefficient(1), t1);
      }
      mat_vec<R, P, P, row0, false, Matrices::band>(My, t2, a);
      mat_vec<R, P, P, row0, true, Matrices::band>(Ky, t1, a);
    }
    __syncthreads();
    if (active && rank < R * P) {
      const int z = rank / P, x = rank % P;
      store_line(s1 + z * R * P + x, P, a);
      store_line(s2 + z * R * P + x, P, b);
    }
    __syncthreads();
    /* x: out = M_x a + K_x b, [R][R][R] */
    T o[R];
    if (active && rank < R * R) {
      T t1[P], t2[P];
      load_line(s1 + rank * P, 1, t1);
      load_line(s2 + rank * P, 1, t2);
      if constexpr (Matrices::scaled)
        reaction_mass_line(T(1), mat.reaction(), mat.coefficient(0), t1, t2);
      mat_vec<R, P, P, row0, false, Matrices::band>(Mx, t1, o);
      mat_vec<R, P, P, row0, true, Matrices::band>(Kx, t2, o);
    }
    __syncthreads();
    if (active && rank < R * R)
      store_line(out + rank * R, 1, o);
    __syncthreads();
  }
}

/* ---- fast diagonalization ----------------------------------------------- */

/* The global update of a patch-interior point by the local solution w: x += w,
 * or x = w with `boundary` (TPMG_SMOOTHER_BOUNDARY, whose residual left out
 * A_II x_I: a store, the old x_I never read). */
template <bool boundary, typename T> __device__ __forceinline__ void update_interior(T &x, T w) {
  if constexpr (boundary)
    x = w;
  else
    x += w;
}

/* w s / d for an eigenvalue sum d of the local solves (positive and far from
 * the ends of the float range). In float by the hardware's approximate
 * reciprocal (MUFU.RCP, rcp.approx.f32: within about one ulp) instead of the
 * IEEE division, a sequence of about ten instructions with a slow-path branch:
 * the 3D fused step +2..+13% (H200; the 2D team kernels, which keep the
 * division, lost up to 11% with it at k = 9, 10). In double by the division: a
 * reciprocal from float refined by two Newton steps made 3D k = 4, 7, 8 2-7%
 * and 2D k = 8..10 6-43% slower (more registers). */
__device__ __forceinline__ float scaled_quotient(float w, float s, float d) {
  return w * s * __fdividef(1.0f, d);
}
__device__ __forceinline__ double scaled_quotient(double w, double s, double d) {
  return w * s / d;
}

/* The local solves on a level with a variable coefficient a
 * (tpmg_level::coefficient) solve each patch's surrogate, a replaced by abar
 * (tpmg-backend.h: the mean over the patch's 2^dim cells, at least
 * TPMG_SURROGATE_FLOOR times the largest): x_I += S (abar Λ + c)^{-1} S^T r_I,
 * with the eigenvalue sums Λ free of the reaction c on such levels (the
 * level's eigenvalues hold none, level_constants' shift is zero). The local
 * solves take the denominator of their quotients from one of these:
 * no_surrogate (a = 1: Λ itself, the reaction already in it; nothing added to
 * the kernels) or surrogate<W, T>, abar of each of the W lines a thread owns
 * (their patches may differ) and c: abar Λ + c, one multiply-add more per
 * point. */
struct no_surrogate {
  template <typename T> __device__ __forceinline__ T denominator(int, T lambda) const {
    return lambda;
  }
};

template <int W, typename T> struct surrogate {
  T abar[W];
  T reaction;
  __device__ __forceinline__ T denominator(int l, T lambda) const {
    return abar[l] * lambda + reaction;
  }
};

/* abar of the patch whose closed window starts at global point start_d per
 * direction (cells start_d / k and start_d / k + 1): the mean of its cells'
 * values, summed in a fixed order (x fastest, as the CPU's surrogate), or
 * TPMG_SURROGATE_FLOOR times the largest if that is more: 2^dim (cached)
 * loads. */
template <int dim, int k, typename T>
__device__ __forceinline__ T patch_mean(const tpmg_level &lvl, const tpmg_index *start) {
  const T *a = static_cast<const T *>(lvl.coefficient[precision_of<T>::value]);
  const tpmg_index c0 = start[0] / k, c1 = start[1] / k, c2 = dim == 3 ? start[2] / k : 0;
  T sum = 0, top = 0;
#pragma unroll
  for (int dz = 0; dz < (dim == 3 ? 2 : 1); ++dz)
#pragma unroll
    for (int dy = 0; dy < 2; ++dy)
#pragma unroll
      for (int dx = 0; dx < 2; ++dx) {
        const T v = __ldg(a + (c0 + dx) + lvl.cells[0] * ((c1 + dy) + lvl.cells[1] * (c2 + dz)));
        sum += v;
        top = v > top ? v : top;
      }
  const T mean = sum * T(dim == 3 ? 0.125 : 0.25), least = T(TPMG_SURROGATE_FLOOR) * top;
  return mean > least ? mean : least;
}

/* The surrogate of the W lines of a block-linear stage (stage_lines' patches),
 * or of one team's patch (W = 1): abar = 1 for lines that do not exist. */
template <int dim, int k, int W, typename T, typename Starts>
__device__ __forceinline__ surrogate<W, T> surrogate_of(const tpmg_level &lvl,
                                                        const bool (&mine)[W], Starts start) {
  surrogate<W, T> s;
#pragma unroll
  for (int w = 0; w < W; ++w)
    s.abar[w] = mine[w] ? patch_mean<dim, k, T>(lvl, start(w)) : T(1);
  s.reaction = T(lvl.reaction);
  return s;
}

/* x_I += (S ⊗ S ⊗ S) diag(1 / (λ_z + λ_y + λ_x)) (S ⊗ S ⊗ S)^T u (paper
 * eq. 2.8), u the I^dim patch-interior residual in shared memory (overwritten),
 * x_I the interior of the patch whose first interior point is global index
 * `base`; with `boundary`, x_I = (...) u (see update_interior). One thread per
 * line: I^(dim-1) threads of the team take part. Begins with a barrier-free
 * read of u (the caller synchronizes), ends with the global update. The
 * eigenvalues are the level's own, from device memory.
 * Counts per call (3D): 6 I^4 multiply-adds, I^3 divisions; shared memory:
 * writes 4 I^3, reads 5 I^3 words; device memory: I^3 words of x read and
 * written (boundary: written only). */
template <int dim, int k, bool boundary = false, typename T, typename Matrices,
          typename Surrogate = no_surrogate>
__device__ void fast_diagonalization_even_odd(const tpmg_level &lvl, const Matrices &mat,
                                              bool active, int rank, T *u, tpmg_index base, T *x,
                                              const Surrogate &sur = Surrogate());

template <int dim, int k, bool boundary = false, typename T, typename Matrices,
          typename Surrogate = no_surrogate>
__device__ void fast_diagonalization_dense(const tpmg_level &lvl, const Matrices &mat, bool active,
                                           int rank, T *u, tpmg_index base, T *x,
                                           const Surrogate &sur = Surrogate());

/* sur: the denominators' (no_surrogate, or surrogate<1, T> for a variable
 * coefficient). */
template <int dim, int k, bool boundary = false, typename T, typename Matrices,
          typename Surrogate = no_surrogate>
__device__ __forceinline__ void fast_diagonalization(const tpmg_level &lvl, const Matrices &mat,
                                                     bool active, int rank, T *u, tpmg_index base,
                                                     T *x, const Surrogate &sur = Surrogate()) {
  if constexpr (Matrices::even_odd)
    fast_diagonalization_even_odd<dim, k, boundary>(lvl, mat, active, rank, u, base, x, sur);
  else
    fast_diagonalization_dense<dim, k, boundary>(lvl, mat, active, rank, u, base, x, sur);
}

template <int dim, int k, bool boundary, typename T, typename Matrices, typename Surrogate>
__device__ void fast_diagonalization_dense(const tpmg_level &lvl, const Matrices &mat, bool active,
                                           int rank, T *u, tpmg_index base, T *x,
                                           const Surrogate &sur) {
  constexpr int I = 2 * k - 1;
  const tpmg_level_data &data = lvl.data[precision_of<T>::value];
  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1];
  const auto Sx = mat.eigenvectors(0), Sy = mat.eigenvectors(1);
  const T *lx = static_cast<const T *>(data.eigenvalues[0]);
  const T *ly = static_cast<const T *>(data.eigenvalues[1]);
  const bool work = active && rank < (dim == 2 ? I : I * I);
  if constexpr (dim == 2) {
    /* y: S_y^T */
    if (work) {
      T v[I], w[I];
      load_line(u + rank, I, v);
      mat_t_vec<I, I, I>(Sy, v, w);
      store_line(u + rank, I, w);
    }
    __syncthreads();
    /* x: S_x^T, the eigenvalue scaling, S_x on the same line */
    if (work) {
      const int y = rank;
      T v[I], w[I];
      load_line(u + y * I, 1, v);
      mat_t_vec<I, I, I>(Sx, v, w);
      const T lambda_y = __ldg(ly + y);
#pragma unroll
      for (int i = 0; i < I; ++i) {
        if constexpr (Matrices::scaled)
          w[i] *= mat.solve_scale();
        w[i] /= sur.denominator(0, lambda_y + __ldg(lx + i));
      }
      mat_vec<I, I, I, 0, false>(Sx, w, v);
      store_line(u + y * I, 1, v);
    }
    __syncthreads();
    /* y: S_y, added to x */
    if (work) {
      T v[I], w[I];
      load_line(u + rank, I, v);
      mat_vec<I, I, I, 0, false>(Sy, v, w);
      T *p = x + base + rank;
#pragma unroll
      for (int y = 0; y < I; ++y)
        update_interior<boundary>(p[n0 * y], w[y]);
    }
  } else {
    const auto Sz = mat.eigenvectors(2);
    const T *lz = static_cast<const T *>(data.eigenvalues[2]);
    const int a = rank / I, b = rank % I; /* (y, x) for z-lines, (z, x) for y-lines, (z, y) for x */
    if (work) {
      T v[I], w[I];
      load_line(u + rank, I * I, v);
      mat_t_vec<I, I, I>(Sz, v, w);
      store_line(u + rank, I * I, w);
    }
    __syncthreads();
    if (work) {
      T v[I], w[I];
      load_line(u + a * I * I + b, I, v);
      mat_t_vec<I, I, I>(Sy, v, w);
      store_line(u + a * I * I + b, I, w);
    }
    __syncthreads();
    if (work) {
      T v[I], w[I];
      load_line(u + rank * I, 1, v);
      mat_t_vec<I, I, I>(Sx, v, w);
      const T lambda_zy = __ldg(lz + a) + __ldg(ly + b);
#pragma unroll
      for (int i = 0; i < I; ++i) {
        if constexpr (Matrices::scaled)
          w[i] *= mat.solve_scale();
        w[i] /= sur.denominator(0, lambda_zy + __ldg(lx + i));
      }
      mat_vec<I, I, I, 0, false>(Sx, w, v);
      store_line(u + rank * I, 1, v);
    }
    __syncthreads();
    if (work) {
      T v[I], w[I];
      load_line(u + a * I * I + b, I, v);
      mat_vec<I, I, I, 0, false>(Sy, v, w);
      store_line(u + a * I * I + b, I, w);
    }
    __syncthreads();
    if (work) {
      T v[I], w[I];
      load_line(u + rank, I * I, v);
      mat_vec<I, I, I, 0, false>(Sz, v, w);
      T *p = x + base + b + n0 * a;
#pragma unroll
      for (int z = 0; z < I; ++z)
        update_interior<boundary>(p[n0 * n1 * z], w[z]);
    }
  }
}

/* ---- fast diagonalization by even and odd eigenvectors ------------------ */

/* w = S^T v on W lines of the patch interior (I = 2k-1 points each), w ordered
 * as the even eigenvectors, then the odd ones: with s_i = v_i + v_{I-1-i} and
 * d_i = v_i - v_{I-1-i} (i < k-1), an even coefficient is a k-term sum over
 * s and the middle point, an odd one a (k-1)-term sum over d.
 * k^2 + (k-1)^2 multiply-adds per line instead of I^2; each eigenvector entry
 * is read once for the W lines. */
template <int k, int W, typename T, typename Mat>
__device__ __forceinline__ void even_odd_forward(const Mat &Se, const Mat &So,
                                                 const T (&v)[W][2 * k - 1], T (&w)[W][2 * k - 1]) {
  constexpr int H = k - 1, I = 2 * k - 1;
  T s[W][H > 0 ? H : 1], d[W][H > 0 ? H : 1];
#pragma unroll
  for (int l = 0; l < W; ++l)
#pragma unroll
    for (int i = 0; i < H; ++i) {
      s[l][i] = v[l][i] + v[l][I - 1 - i];
      d[l][i] = v[l][i] - v[l][I - 1 - i];
    }
#pragma unroll
  for (int e = 0; e < k; ++e) {
    T sum[W];
    const T middle = Se[H * k + e];
#pragma unroll
    for (int l = 0; l < W; ++l)
      sum[l] = middle * v[l][H];
#pragma unroll
    for (int i = 0; i < H; ++i) {
      const T a = Se[i * k + e];
#pragma unroll
      for (int l = 0; l < W; ++l)
        sum[l] += a * s[l][i];
    }
#pragma unroll
    for (int l = 0; l < W; ++l)
      w[l][e] = sum[l];
  }
#pragma unroll
  for (int o = 0; o < H; ++o) {
    T sum[W];
#pragma unroll
    for (int l = 0; l < W; ++l)
      sum[l] = 0;
#pragma unroll
    for (int i = 0; i < H; ++i) {
      const T a = So[i * H + o];
#pragma unroll
      for (int l = 0; l < W; ++l)
        sum[l] += a * d[l][i];
    }
#pragma unroll
    for (int l = 0; l < W; ++l)
      w[l][k + o] = sum[l];
  }
}

/* v = S w on W lines, w ordered as in even_odd_forward: the even part e_i and
 * the odd part o_i of point i < k-1 give v_i = e_i + o_i and v_{I-1-i} = e_i - o_i. */
template <int k, int W, typename T, typename Mat>
__device__ __forceinline__ void
even_odd_backward(const Mat &Se, const Mat &So, const T (&w)[W][2 * k - 1], T (&v)[W][2 * k - 1]) {
  constexpr int H = k - 1, I = 2 * k - 1;
#pragma unroll
  for (int i = 0; i < k; ++i) {
    T even[W], odd[W];
#pragma unroll
    for (int l = 0; l < W; ++l)
      even[l] = odd[l] = 0;
#pragma unroll
    for (int e = 0; e < k; ++e) {
      const T a = Se[i * k + e];
#pragma unroll
      for (int l = 0; l < W; ++l)
        even[l] += a * w[l][e];
    }
    if (i < H) {
#pragma unroll
      for (int o = 0; o < H; ++o) {
        const T a = So[i * H + o];
#pragma unroll
        for (int l = 0; l < W; ++l)
          odd[l] += a * w[l][k + o];
      }
    }
#pragma unroll
    for (int l = 0; l < W; ++l) {
      if (i == H) {
        v[l][H] = even[l];
      } else {
        v[l][i] = even[l] + odd[l];
        v[l][I - 1 - i] = even[l] - odd[l];
      }
    }
  }
}

/* The lines a thread owns in each stage of the fast diagonalization (I^(dim-1)
 * per patch in every stage): W of them (the tiled kernels; one otherwise),
 * each with whether it exists (its patch too), its index `rank` in its patch,
 * its patch's residual u in shared memory and its patch's first interior point
 * `base` (global). `any`: whether the thread owns a line at all. */
template <int W, typename T> struct owned_lines {
  bool work[W];
  int rank[W];
  T *u[W];
  tpmg_index base[W];
  bool any;
};

/* v[l] = the line of stride `stride` at u[l] + offset(l) for each existing line
 * l, zero for the others (they are computed on and never stored). */
template <int W, int N, typename T, typename Offset>
__device__ __forceinline__ void load_lines(const owned_lines<W, T> &o, int stride, Offset offset,
                                           T (&v)[W][N]) {
#pragma unroll
  for (int l = 0; l < W; ++l) {
    if (o.work[l]) {
      load_line(o.u[l] + offset(l), stride, v[l]);
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i)
        v[l][i] = T(0);
    }
  }
}

template <int W, int N, typename T, typename Offset>
__device__ __forceinline__ void store_lines(const owned_lines<W, T> &o, int stride, Offset offset,
                                            const T (&v)[W][N]) {
#pragma unroll
  for (int l = 0; l < W; ++l)
    if (o.work[l])
      store_line(o.u[l] + offset(l), stride, v[l]);
}

/* fast_diagonalization in 2D with the reference eigenvectors split into even
 * and odd ones (the constant and tiled kernels; 3D: fast_diagonalization_linear):
 * the same stages, half the multiply-adds (4 I (k^2 + (k-1)^2) I instead of
 * 4 I^3). The eigenvalue
 * of a line index (even first) is the reference one over h_d^2. Each thread
 * transforms its W lines `o` together (one read of each eigenvector entry for
 * W lines). Every thread of the block calls it (barriers inside); shared by
 * the team-per-patch and the block-linear kernels. Begins without a barrier
 * (the caller synchronizes), ends with the global update (x_I += or, with
 * `boundary`, x_I =; see update_interior). */
template <int dim, int k, bool boundary, int W, typename T, typename Matrices,
          typename Surrogate = no_surrogate>
__device__ void even_odd_stages(const tpmg_level &lvl, const Matrices &mat,
                                const owned_lines<W, T> &o, T *x,
                                const Surrogate &sur = Surrogate()) {
  constexpr int I = 2 * k - 1;
  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1];
  const auto Se = mat.eigen_even(), So = mat.eigen_odd();
  static_assert(dim == 2, "3D: fast_diagonalization_linear");
  const auto column = [&](int l) { return o.rank[l]; };
  const auto row = [&](int l) { return o.rank[l] * I; };
  if (o.any) {
    T v[W][I], w[W][I];
    load_lines(o, I, column, v);
    even_odd_forward<k>(Se, So, v, w);
    store_lines(o, I, column, w);
  }
  __syncthreads();
  if (o.any) {
    T v[W][I], w[W][I];
    load_lines(o, 1, row, v);
    even_odd_forward<k>(Se, So, v, w);
#pragma unroll
    for (int l = 0; l < W; ++l) {
      const T lambda_y = mat.lambda(1, o.rank[l]);
#pragma unroll
      for (int i = 0; i < I; ++i)
        w[l][i] = w[l][i] * mat.solve_scale() / sur.denominator(l, lambda_y + mat.lambda(0, i));
    }
    even_odd_backward<k>(Se, So, w, v);
    store_lines(o, 1, row, v);
  }
  __syncthreads();
  if (o.any) {
    T v[W][I], w[W][I];
    load_lines(o, I, column, v);
    even_odd_backward<k>(Se, So, v, w);
#pragma unroll
    for (int l = 0; l < W; ++l) {
      if (o.work[l]) {
        T *p = x + o.base[l] + o.rank[l];
#pragma unroll
        for (int y = 0; y < I; ++y)
          update_interior<boundary>(p[n0 * y], w[l][y]);
      }
    }
  }
}

template <int dim, int k, bool boundary, typename T, typename Matrices, typename Surrogate>
__device__ void fast_diagonalization_even_odd(const tpmg_level &lvl, const Matrices &mat,
                                              bool active, int rank, T *u, tpmg_index base, T *x,
                                              const Surrogate &sur) {
  constexpr int I = 2 * k - 1;
  const bool work = active && rank < I;
  const owned_lines<1, T> o = {{work}, {rank}, {u}, {base}, work};
  even_odd_stages<dim, k, boundary>(lvl, mat, o, x, sur);
}

/* ---- block-linear stages (the constant and tiled kernels) ---------------- */

/* The patches (or cells) of one block of a block-linear kernel: `teams` of
 * them, each with its window start, its first interior point, and whether it
 * exists, in shared memory (set up by the kernel before its first stage). */
template <int teams> struct team_info {
  tpmg_index start[teams][3];
  tpmg_index base[teams];
  bool active[teams];
};

/* The threads of a block fill in patch t < teams of patch group `group`
 * (item group teams + t of `grid`); all threads then synchronize. */
template <int dim, int teams>
__device__ __forceinline__ void setup_teams(const tpmg_level &lvl, const item_grid &grid,
                                            tpmg_index group, team_info<teams> &info) {
  for (int t = threadIdx.x; t < teams; t += blockDim.x) {
    const tpmg_index item = group * teams + t;
    const bool active = item < grid.total;
    tpmg_index start[3] = {0, 0, 0}, index[3];
    if (active)
      item_start(grid, item, start, index);
#pragma unroll
    for (int d = 0; d < 3; ++d)
      info.start[t][d] = start[d];
    /* the first interior point */
    const tpmg_index z = dim == 3 ? start[2] + 1 : 0;
    info.base[t] = start[0] + 1 + lvl.n[0] * (start[1] + 1 + lvl.n[1] * z);
    info.active[t] = active;
  }
  __syncthreads();
}

/* Linear thread indexing (paper §4.2.1, Table 5) with W lines per thread: in a
 * stage with L lines per patch, the block's line g (of teams L) is line g % L of
 * patch g / L, and thread t < A = teams L / W (rounded up) owns lines t + w A,
 * w < W. So the active threads of every stage are the first A ones (warps are
 * full or idle, and a thread's lines exist except for the last w of some),
 * neighbouring threads take neighbouring lines (coalesced global loads, the
 * shared-memory pattern of one line per thread), and each thread applies every
 * matrix entry to W lines (the tiled kernels; W = 1 for the constant ones). */
template <int W> struct stage_lines {
  int patch[W], line[W];
  bool mine[W]; /* the line and its patch exist */
  bool any;
};

template <int W, int teams>
__device__ __forceinline__ stage_lines<W> lines_of(int L, const team_info<teams> &info) {
  const int lines = teams * L, active = (lines + W - 1) / W;
  stage_lines<W> o;
  o.any = false;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const int g = threadIdx.x + w * active;
    const bool exists = int(threadIdx.x) < active && g < lines;
    o.patch[w] = exists ? g / L : 0;
    o.line[w] = g % L;
    o.mine[w] = exists && info.active[o.patch[w]];
    o.any = o.any || o.mine[w];
  }
  return o;
}

/* Shared-memory layouts free of bank conflicts (paper §4.2.2, for the
 * block-linear kernels in 3D). A stage along direction d gives each thread one
 * line (a row of the 1D contraction's input and output) and reads and writes it
 * element by element, so one warp instruction touches element i of 32
 * neighbouring lines. That is conflict-free when those lines start at
 * consecutive words (the stride within the line is then any), or at words
 * c apart for an odd c (the line contiguous). Every tensor between two stages
 * is laid out for both: with the line index of the writing stage ordered so
 * that its lines start at consecutive words and the reading stage's lines at
 * multiples of the odd line length, or the other way round. Lines of length N
 * (P = 2k+1 or R, odd for the smoother), point (x, y, z):
 *   residual, z stage: x + P y + P^2 z     (xbar read along z, as x fastest
 *                                           in device memory: line y P + x);
 *   x stage:           y + P z + P R x     (line z P + y: reads at P line,
 *                                           writes at line);
 *   y stage:           rows_index below    (line x R + z: reads at P line,
 *                                           writes at line);
 * and the fast diagonalization (fast_diagonalization_linear) continues from
 * rows_index. Only warps that span two patches of a block (degree <= 3, where
 * a block holds several) still meet conflicts, between their two patches.
 * The former stage order z, y, x in [z][y][x] layouts had up to 2- to 4-way
 * conflicts in the y stages; doc/bank-conflicts.py counts both. */

/* Where the block-linear residual leaves point p (x fastest) of its R^dim rows:
 * in 2D at p, in 3D at z + R (x + R y). */
template <int dim, int R> __device__ __forceinline__ int rows_index(int p) {
  if constexpr (dim == 2)
    return p;
  else
    return p / (R * R) + R * (p % R + R * ((p / R) % R));
}

/* apply_patch_rows for `teams` patches per block of at least teams P^(dim-1) / W
 * threads (the largest stage), W lines per thread (see stage_lines).
 * Patch j's tensors: s1 = shared + j values, s2 = s1 + values / 2; the result
 * (R^dim values, at rows_index) replaces s1. In 3D the stages run along z, x,
 * y in the conflict-free layouts above. Counts per patch as apply_patch_rows;
 * per thread and matrix entry, W multiply-adds. boundary: the window's
 * interior read as zero without a load, as in apply_patch_rows. */
template <int dim, int k, int row0, int R, int teams, int W, bool boundary = false, typename T,
          typename Matrices>
__device__ void apply_patch_rows_linear(const tpmg_level &lvl, const Matrices &mat, const T *src,
                                        const team_info<teams> &info, T *shared, int values) {
  constexpr int P = 2 * k + 1, B = Matrices::band;
  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1];
  if constexpr (dim == 2) {
    const auto My = mat.mass(1), Ky = mat.stiffness(1), Mx = mat.mass(0), Kx = mat.stiffness(0);
    {
      const stage_lines<W> ln = lines_of<W>(P, info);
      if (ln.any) {
        T col[W][P], m[W][R], s[W][R];
#pragma unroll
        for (int w = 0; w < W; ++w) {
          const int j = ln.patch[w];
          const tpmg_index gx = info.start[j][0] + ln.line[w];
          const bool in_x = ln.mine[w] && inside(gx, n0);
          const bool inner_x = boundary && ln.line[w] > 0 && ln.line[w] < P - 1;
#pragma unroll
          for (int y = 0; y < P; ++y) {
            const tpmg_index gy = info.start[j][1] + y;
            const bool hole = inner_x && y > 0 && y < P - 1;
            col[w][y] = !hole && in_x && inside(gy, n1) ? src[gx + n0 * gy] : T(0);
          }
        }
        mat_vec<R, P, P, row0, false, B>(My, col, m);
        mat_vec<R, P, P, row0, false, B>(Ky, col, s);
#pragma unroll
        for (int w = 0; w < W; ++w)
          if (ln.mine[w]) {
            T *s1 = shared + ln.patch[w] * values, *s2 = s1 + values / 2;
            store_line(s1 + ln.line[w], P, m[w]);
            store_line(s2 + ln.line[w], P, s[w]);
          }
      }
    }
    __syncthreads();
    const stage_lines<W> ln = lines_of<W>(R, info);
    T o[W][R];
    if (ln.any) {
      T a[W][P], b[W][P];
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const T *s1 = shared + ln.patch[w] * values, *s2 = s1 + values / 2;
        const int y = ln.line[w];
#pragma unroll
        for (int x = 0; x < P; ++x) {
          a[w][x] = ln.mine[w] ? s2[y * P + x] : T(0);
          b[w][x] = ln.mine[w] ? s1[y * P + x] : T(0);
        }
        reaction_mass_line(mat.coefficient(1), mat.reaction(), mat.coefficient(0), a[w], b[w]);
      }
      mat_vec<R, P, P, row0, false, B>(Mx, a, o);
      mat_vec<R, P, P, row0, true, B>(Kx, b, o);
    }
    __syncthreads();
#pragma unroll
    for (int w = 0; w < W; ++w)
      if (ln.mine[w])
        store_line(shared + ln.patch[w] * values + ln.line[w] * R, 1, o[w]);
    __syncthreads();
  } else {
    const tpmg_index n2 = lvl.n[2];
    const auto Mz = mat.mass(2), Kz = mat.stiffness(2), My = mat.mass(1), Ky = mat.stiffness(1),
               Mx = mat.mass(0), Kx = mat.stiffness(0);
    /* z: s1 = M_z xbar, s2 = K_z xbar, point (x, y, z) at x + P y + P^2 z */
    {
      const stage_lines<W> ln = lines_of<W>(P * P, info);
      if (ln.any) {
        T col[W][P], m[W][R], s[W][R];
#pragma unroll
        for (int w = 0; w < W; ++w) {
          const int j = ln.patch[w], y = ln.line[w] / P, x = ln.line[w] % P;
          const tpmg_index gx = info.start[j][0] + x, gy = info.start[j][1] + y;
          const bool in_xy = ln.mine[w] && inside(gx, n0) && inside(gy, n1);
          const bool inner_xy = boundary && x > 0 && x < P - 1 && y > 0 && y < P - 1;
          const T *p = src + gx + n0 * gy;
#pragma unroll
          for (int z = 0; z < P; ++z) {
            const tpmg_index gz = info.start[j][2] + z;
            const bool hole = inner_xy && z > 0 && z < P - 1;
            col[w][z] = !hole && in_xy && inside(gz, n2) ? p[n0 * n1 * gz] : T(0);
          }
        }
        mat_vec<R, P, P, row0, false, B>(Mz, col, m);
        mat_vec<R, P, P, row0, false, B>(Kz, col, s);
#pragma unroll
        for (int w = 0; w < W; ++w)
          if (ln.mine[w]) {
            T *s1 = shared + ln.patch[w] * values, *s2 = s1 + values / 2;
            store_line(s1 + ln.line[w], P * P, m[w]);
            store_line(s2 + ln.line[w], P * P, s[w]);
          }
      }
    }
    __syncthreads();
    /* x: a = c_z M_x (K_z xbar) + c_x K_x (M_z xbar), b = M_x (M_z xbar), point
     * (x, y, z) at y + P z + P R x, in place of s1, s2. Line (y, z) = rank
     * z P + y starts at P rank in s1, s2 and at rank in a, b */
    {
      const stage_lines<W> ln = lines_of<W>(R * P, info);
      T a[W][R], b[W][R];
      if (ln.any) {
        T t1[W][P], t2[W][P];
#pragma unroll
        for (int w = 0; w < W; ++w) {
          const T *s1 = shared + ln.patch[w] * values, *s2 = s1 + values / 2;
          const int l = ln.line[w];
#pragma unroll
          for (int x = 0; x < P; ++x) {
            t1[w][x] = ln.mine[w] ? s1[l * P + x] : T(0);
            t2[w][x] = ln.mine[w] ? s2[l * P + x] : T(0);
          }
        }
        mat_vec<R, P, P, row0, false, B>(Mx, t1, b);
#pragma unroll
        for (int w = 0; w < W; ++w) {
          scale_line(mat.coefficient(2), t2[w]);
          scale_line(mat.coefficient(0), t1[w]);
        }
        mat_vec<R, P, P, row0, false, B>(Mx, t2, a);
        mat_vec<R, P, P, row0, true, B>(Kx, t1, a);
      }
      __syncthreads();
#pragma unroll
      for (int w = 0; w < W; ++w)
        if (ln.mine[w]) {
          T *s1 = shared + ln.patch[w] * values, *s2 = s1 + values / 2;
          store_line(s1 + ln.line[w], P * R, a[w]);
          store_line(s2 + ln.line[w], P * R, b[w]);
        }
      __syncthreads();
    }
    /* y: out = M_y a + c_y K_y b, in the layout of rows_index. Line (x, z) =
     * rank x R + z starts at P rank in a, b and at rank in out */
    const stage_lines<W> ln = lines_of<W>(R * R, info);
    T o[W][R];
    if (ln.any) {
      T t1[W][P], t2[W][P];
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const T *s1 = shared + ln.patch[w] * values, *s2 = s1 + values / 2;
        const int l = ln.line[w];
#pragma unroll
        for (int y = 0; y < P; ++y) {
          t1[w][y] = ln.mine[w] ? s1[l * P + y] : T(0);
          t2[w][y] = ln.mine[w] ? s2[l * P + y] : T(0);
        }
        reaction_mass_line(T(1), mat.reaction(), mat.coefficient(1), t1[w], t2[w]);
      }
      mat_vec<R, P, P, row0, false, B>(My, t1, o);
      mat_vec<R, P, P, row0, true, B>(Ky, t2, o);
    }
    __syncthreads();
#pragma unroll
    for (int w = 0; w < W; ++w)
      if (ln.mine[w])
        store_line(shared + ln.patch[w] * values + ln.line[w], R * R, o[w]);
    __syncthreads();
  }
}

/* fast_diagonalization_even_odd for `teams` patches per block of at least
 * teams I^(dim-1) / W threads, W lines per thread (I^(dim-1) lines per patch in
 * every stage); patch j's tensors at u = shared + j values and, in 3D, u +
 * values / 2 (values >= 2 I^3), its interior at global info.base[j]. The
 * right-hand side of the local solves is rhs - u with `fused` (rhs = b, u = A
 * xbar from apply_patch_rows_linear, at rows_index), else rhs (the residual r
 * in device memory; u is not read). Begins without a barrier (the caller
 * synchronizes after writing u), ends with the global update (boundary: a
 * store, see update_interior).
 * 3D: stages along z, y, x (forward, the division, backward), y, z, each line
 * of a stage read and written in the conflict-free layouts described before
 * rows_index, alternating between u (A: z + I x + I^2 y) and u + values / 2 (B:
 * y + I z + I^2 x): z lines (x, y) = rank y I + x start at I rank in A (and
 * read rhs along z, x fastest across the threads); y lines (x, z) = rank x I +
 * z at rank in A and at I rank in B; x lines (y, z) = rank z I + y at rank in
 * B. Counts per patch: shared memory 4 I^3 writes, 5 I^3 reads (4 without
 * `fused`); device memory I^3 words of rhs read (2D: as even_odd_stages, after
 * rhs (- u) is formed in u by one more pass). coefficient: the denominators
 * of a variable coefficient's surrogate, abar of each line's patch (2^dim
 * cached loads per line). */
template <int dim, int k, int teams, int W, bool boundary, bool fused, bool coefficient = false,
          typename T, typename Matrices>
__device__ void fast_diagonalization_linear(const tpmg_level &lvl, const Matrices &mat,
                                            const team_info<teams> &info, T *shared, int values,
                                            const T *__restrict__ rhs, T *x) {
  constexpr int I = 2 * k - 1, L = dim == 2 ? I : I * I;
  const stage_lines<W> ln = lines_of<W>(L, info);
  std::conditional_t<coefficient, surrogate<W, T>, no_surrogate> sur;
  if constexpr (coefficient)
    sur = surrogate_of<dim, k, W, T>(lvl, ln.mine, [&](int w) { return info.start[ln.patch[w]]; });
  owned_lines<W, T> o;
  o.any = ln.any;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    o.work[w] = ln.mine[w];
    o.rank[w] = ln.line[w];
    o.u[w] = shared + ln.patch[w] * values;
    o.base[w] = info.base[ln.patch[w]];
  }
  if constexpr (dim == 2) {
    constexpr int IV = I * I;
    for (int l = threadIdx.x; l < teams * IV; l += blockDim.x) {
      const int j = l / IV, p = l % IV;
      if (info.active[j]) {
        T *u = shared + j * values + p;
        const T r = rhs[info.base[j] + tensor_offset<dim, I>(lvl, p)];
        *u = fused ? r - *u : r;
      }
    }
    __syncthreads();
    even_odd_stages<dim, k, boundary>(lvl, mat, o, x, sur);
  } else {
    const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1];
    const auto Se = mat.eigen_even(), So = mat.eigen_odd();
    const int half = values / 2;
    const auto z_at = [&](int l) { return o.rank[l] * I; };          /* A, stride 1 */
    const auto y_at = [&](int l) { return o.rank[l]; };              /* A, stride I^2 */
    const auto y_in_b = [&](int l) { return half + o.rank[l] * I; }; /* B, stride 1 */
    const auto x_in_b = [&](int l) { return half + o.rank[l]; };     /* B, stride I^2 */
    if (o.any) {
      T v[W][I], w[W][I];
#pragma unroll
      for (int l = 0; l < W; ++l) {
        const T *g = rhs + o.base[l] + o.rank[l] % I + n0 * (o.rank[l] / I);
        const T *u = o.u[l] + z_at(l);
#pragma unroll
        for (int z = 0; z < I; ++z)
          v[l][z] = o.work[l] ? (fused ? g[n0 * n1 * z] - u[z] : g[n0 * n1 * z]) : T(0);
      }
      even_odd_forward<k>(Se, So, v, w);
      store_lines(o, 1, z_at, w);
    }
    __syncthreads();
    if (o.any) {
      T v[W][I], w[W][I];
      load_lines(o, I * I, y_at, v);
      even_odd_forward<k>(Se, So, v, w);
      store_lines(o, 1, y_in_b, w);
    }
    __syncthreads();
    if (o.any) {
      T v[W][I], w[W][I];
      load_lines(o, I * I, x_in_b, v);
      even_odd_forward<k>(Se, So, v, w);
#pragma unroll
      for (int l = 0; l < W; ++l) {
        const T lambda_zy = mat.lambda(2, o.rank[l] / I) + mat.lambda(1, o.rank[l] % I);
#pragma unroll
        for (int i = 0; i < I; ++i)
          w[l][i] = scaled_quotient(w[l][i], mat.solve_scale(),
                                    sur.denominator(l, lambda_zy + mat.lambda(0, i)));
      }
      even_odd_backward<k>(Se, So, w, v);
      store_lines(o, I * I, x_in_b, v);
    }
    __syncthreads();
    if (o.any) {
      T v[W][I], w[W][I];
      load_lines(o, 1, y_in_b, v);
      even_odd_backward<k>(Se, So, v, w);
      store_lines(o, I * I, y_at, w);
    }
    __syncthreads();
    if (o.any) {
      T v[W][I], w[W][I];
      load_lines(o, 1, z_at, v);
      even_odd_backward<k>(Se, So, v, w);
#pragma unroll
      for (int l = 0; l < W; ++l) {
        if (o.work[l]) {
          T *p = x + o.base[l] + o.rank[l] % I + n0 * (o.rank[l] / I);
#pragma unroll
          for (int z = 0; z < I; ++z)
            update_interior<boundary>(p[n0 * n1 * z], w[l][z]);
        }
      }
    }
  }
}

/* ---- degree 1: one thread per patch or row ------------------------------ */

/* Row 1 (the centre) of the patch operator on the 3^dim window starting at
 * global point `first`, Dirichlet and outside points read as zero: the
 * R = 1 case of apply_patch_rows, all in registers of one thread. boundary:
 * the centre (the patch interior) read as zero without a load.
 * Counts (3D): 27 loads (boundary: 26), 2·9·3 + 3·3·3 + 2·3 = 87 multiply-adds. */
template <int dim, bool boundary = false, typename T, typename Matrices>
__device__ __forceinline__ T centre_row(const tpmg_level &lvl, const Matrices &mat, const T *src,
                                        const tpmg_index (&first)[3]) {
  constexpr int P = 3;
  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1];
  bool in[3][3]; /* [d][offset] */
#pragma unroll
  for (int d = 0; d < 3; ++d)
#pragma unroll
    for (int i = 0; i < P; ++i)
      in[d][i] = d < dim ? inside(first[d] + i, lvl.n[d]) : i == 0;
  const auto Mx = mat.mass(0), Kx = mat.stiffness(0), My = mat.mass(1), Ky = mat.stiffness(1);
  T o[1];
  if constexpr (dim == 2) {
    T a[P], b[P]; /* per x: K_y and M_y of the column */
#pragma unroll
    for (int x = 0; x < P; ++x) {
      T col[P], m[1], s[1];
#pragma unroll
      for (int y = 0; y < P; ++y)
        col[y] = !(boundary && x == 1 && y == 1) && in[0][x] && in[1][y]
                     ? src[first[0] + x + n0 * (first[1] + y)]
                     : T(0);
      mat_vec<1, P, P, 1, false>(My, col, m);
      mat_vec<1, P, P, 1, false>(Ky, col, s);
      a[x] = s[0];
      b[x] = m[0];
    }
    if constexpr (Matrices::scaled)
      reaction_mass_line(mat.coefficient(1), mat.reaction(), mat.coefficient(0), a, b);
    mat_vec<1, P, P, 1, false>(Mx, a, o);
    mat_vec<1, P, P, 1, true>(Kx, b, o);
  } else {
    const auto Mz = mat.mass(2), Kz = mat.stiffness(2);
    T a[P], b[P]; /* per x: the y-contraction */
#pragma unroll
    for (int x = 0; x < P; ++x) {
      T t1[P], t2[P]; /* per y: M_z and K_z of the column */
#pragma unroll
      for (int y = 0; y < P; ++y) {
        T col[P], m[1], s[1];
#pragma unroll
        for (int z = 0; z < P; ++z)
          col[z] = !(boundary && x == 1 && y == 1 && z == 1) && in[0][x] && in[1][y] && in[2][z]
                       ? src[first[0] + x + n0 * (first[1] + y + n1 * (first[2] + z))]
                       : T(0);
        mat_vec<1, P, P, 1, false>(Mz, col, m);
        mat_vec<1, P, P, 1, false>(Kz, col, s);
        t1[y] = m[0];
        t2[y] = s[0];
      }
      T av[1], bv[1];
      mat_vec<1, P, P, 1, false>(My, t1, bv);
      if constexpr (Matrices::scaled) {
        scale_line(mat.coefficient(2), t2);
        scale_line(mat.coefficient(1), t1);
      }
      mat_vec<1, P, P, 1, false>(My, t2, av);
      mat_vec<1, P, P, 1, true>(Ky, t1, av);
      a[x] = av[0];
      b[x] = bv[0];
    }
    if constexpr (Matrices::scaled)
      reaction_mass_line(T(1), mat.reaction(), mat.coefficient(0), a, b);
    mat_vec<1, P, P, 1, false>(Mx, a, o);
    mat_vec<1, P, P, 1, true>(Kx, b, o);
  }
  return o[0];
}

/* Degree 1: the patch interior is one point, A_I^{-1} r by the same sequence of
 * operations as fast_diagonalization with I = 1. */
template <int dim, typename T, typename Matrices, typename Surrogate = no_surrogate>
__device__ __forceinline__ T centre_solve(const tpmg_level &lvl, const Matrices &mat, T r,
                                          const Surrogate &sur = Surrogate()) {
  const tpmg_level_data &data = lvl.data[precision_of<T>::value];
  T lambda = __ldg(static_cast<const T *>(data.eigenvalues[dim - 1]));
#pragma unroll
  for (int d = dim - 1; d >= 1; --d)
    r = mat.eigenvectors(d)[0] * r;
  T w = mat.eigenvectors(0)[0] * r;
  if constexpr (Matrices::scaled)
    w *= mat.solve_scale();
#pragma unroll
  for (int d = dim - 2; d >= 0; --d)
    lambda += __ldg(static_cast<const T *>(data.eigenvalues[d]));
  w /= sur.denominator(0, lambda);
  T v = mat.eigenvectors(0)[0] * w;
#pragma unroll
  for (int d = 1; d < dim; ++d)
    v = mat.eigenvectors(d)[0] * v;
  return v;
}

} // namespace tpmg_cuda

#endif
