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
 * numbering, paper Figure 4). 1D matrices are read from global memory: every
 * thread of a warp reads the same entry at the same time (a broadcast). */
#ifndef TPMG_CUDA_TENSOR_CUH
#define TPMG_CUDA_TENSOR_CUH

#include "tpmg-impl.h"

namespace tpmg_cuda {

template <typename T> struct precision_of;
template <> struct precision_of<double> { static constexpr tpmg_precision value = TPMG_DOUBLE; };
template <> struct precision_of<float> { static constexpr tpmg_precision value = TPMG_FLOAT; };

/* ---- 1D matrix times register line -------------------------------------- */

/* out[r] (+)= sum_c A[r lda + c] in[c]: rows of a row-major matrix, A already
 * offset to the first row used. */
template <int R, int C, bool add, typename T>
__device__ __forceinline__ void mat_vec(const T *__restrict__ A, int lda, const T (&in)[C],
                                        T (&out)[R]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    T sum = add ? out[r] : T(0);
#pragma unroll
    for (int c = 0; c < C; ++c)
      sum += __ldg(A + r * lda + c) * in[c];
    out[r] = sum;
  }
}

/* out[r] = sum_c A[c lda + r] in[c]: the transpose of a row-major matrix. */
template <int R, int C, typename T>
__device__ __forceinline__ void mat_t_vec(const T *__restrict__ A, int lda, const T (&in)[C],
                                          T (&out)[R]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    T sum = 0;
#pragma unroll
    for (int c = 0; c < C; ++c)
      sum += __ldg(A + c * lda + r) * in[c];
    out[r] = sum;
  }
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
 * M_x of the former and K_x of the latter.
 * Team of P^(dim-1) threads; s1, s2 hold R P^(dim-1) values each; out (R^dim
 * values) may alias s1. Ends with a barrier. */
template <int dim, int k, int row0, int R, typename T>
__device__ void apply_patch_rows(const tpmg_level &lvl, const T *src, const tpmg_index (&first)[3],
                                 bool active, int rank, T *s1, T *s2, T *out) {
  constexpr int P = 2 * k + 1;
  const tpmg_level_data &data = lvl.data[precision_of<T>::value];
  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1];
  if constexpr (dim == 2) {
    const T *My = static_cast<const T *>(data.patch_mass[1]) + row0 * P;
    const T *Ky = static_cast<const T *>(data.patch_stiffness[1]) + row0 * P;
    const T *Mx = static_cast<const T *>(data.patch_mass[0]) + row0 * P;
    const T *Kx = static_cast<const T *>(data.patch_stiffness[0]) + row0 * P;
    if (active && rank < P) {
      const int x = rank;
      const tpmg_index gx = first[0] + x;
      T col[P], m[R], s[R];
#pragma unroll
      for (int y = 0; y < P; ++y) {
        const tpmg_index gy = first[1] + y;
        col[y] = inside(gx, n0) && inside(gy, n1) ? src[gx + n0 * gy] : T(0);
      }
      mat_vec<R, P, false>(My, P, col, m);
      mat_vec<R, P, false>(Ky, P, col, s);
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
      mat_vec<R, P, false>(Mx, P, a, o);
      mat_vec<R, P, true>(Kx, P, b, o);
    }
    __syncthreads();
    if (active && rank < R)
      store_line(out + rank * R, 1, o);
    __syncthreads();
  } else {
    const tpmg_index n2 = lvl.n[2];
    const T *Mz = static_cast<const T *>(data.patch_mass[2]) + row0 * P;
    const T *Kz = static_cast<const T *>(data.patch_stiffness[2]) + row0 * P;
    const T *My = static_cast<const T *>(data.patch_mass[1]) + row0 * P;
    const T *Ky = static_cast<const T *>(data.patch_stiffness[1]) + row0 * P;
    const T *Mx = static_cast<const T *>(data.patch_mass[0]) + row0 * P;
    const T *Kx = static_cast<const T *>(data.patch_stiffness[0]) + row0 * P;
    /* z: s1 = M_z xbar, s2 = K_z xbar, [R][P][P] */
    if (active && rank < P * P) {
      const int y = rank / P, x = rank % P;
      const tpmg_index gx = first[0] + x, gy = first[1] + y;
      const bool in_xy = inside(gx, n0) && inside(gy, n1);
      const T *p = src + gx + n0 * gy;
      T col[P], m[R], s[R];
#pragma unroll
      for (int z = 0; z < P; ++z) {
        const tpmg_index gz = first[2] + z;
        col[z] = in_xy && inside(gz, n2) ? p[n0 * n1 * gz] : T(0);
      }
      mat_vec<R, P, false>(Mz, P, col, m);
      mat_vec<R, P, false>(Kz, P, col, s);
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
      mat_vec<R, P, false>(My, P, t2, a);
      mat_vec<R, P, true>(Ky, P, t1, a);
      mat_vec<R, P, false>(My, P, t1, b);
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
      mat_vec<R, P, false>(Mx, P, t1, o);
      mat_vec<R, P, true>(Kx, P, t2, o);
    }
    __syncthreads();
    if (active && rank < R * R)
      store_line(out + rank * R, 1, o);
    __syncthreads();
  }
}

/* ---- fast diagonalization ----------------------------------------------- */

/* x_I += (S ⊗ S ⊗ S) diag(1 / (λ_z + λ_y + λ_x)) (S ⊗ S ⊗ S)^T u (paper
 * eq. 2.8), u the I^dim patch-interior residual in shared memory (overwritten),
 * x_I the interior of the patch whose first interior point is global index
 * `base`. One thread per line: I^(dim-1) threads of the team take part. Begins
 * with a barrier-free read of u (the caller synchronizes), ends with the
 * global update. */
template <int dim, int k, typename T>
__device__ void fast_diagonalization(const tpmg_level &lvl, bool active, int rank, T *u,
                                     tpmg_index base, T *x) {
  constexpr int I = 2 * k - 1;
  const tpmg_level_data &data = lvl.data[precision_of<T>::value];
  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1];
  const T *Sx = static_cast<const T *>(data.eigenvectors[0]);
  const T *Sy = static_cast<const T *>(data.eigenvectors[1]);
  const T *lx = static_cast<const T *>(data.eigenvalues[0]);
  const T *ly = static_cast<const T *>(data.eigenvalues[1]);
  const bool work = active && rank < (dim == 2 ? I : I * I);
  if constexpr (dim == 2) {
    /* y: S_y^T */
    if (work) {
      T v[I], w[I];
      load_line(u + rank, I, v);
      mat_t_vec<I, I>(Sy, I, v, w);
      store_line(u + rank, I, w);
    }
    __syncthreads();
    /* x: S_x^T, the eigenvalue scaling, S_x on the same line */
    if (work) {
      const int y = rank;
      T v[I], w[I];
      load_line(u + y * I, 1, v);
      mat_t_vec<I, I>(Sx, I, v, w);
      const T lambda_y = __ldg(ly + y);
#pragma unroll
      for (int i = 0; i < I; ++i)
        w[i] /= lambda_y + __ldg(lx + i);
      mat_vec<I, I, false>(Sx, I, w, v);
      store_line(u + y * I, 1, v);
    }
    __syncthreads();
    /* y: S_y, added to x */
    if (work) {
      T v[I], w[I];
      load_line(u + rank, I, v);
      mat_vec<I, I, false>(Sy, I, v, w);
      T *p = x + base + rank;
#pragma unroll
      for (int y = 0; y < I; ++y)
        p[n0 * y] += w[y];
    }
  } else {
    const T *Sz = static_cast<const T *>(data.eigenvectors[2]);
    const T *lz = static_cast<const T *>(data.eigenvalues[2]);
    const int a = rank / I, b = rank % I; /* (y, x) for z-lines, (z, x) for y-lines, (z, y) for x */
    if (work) {
      T v[I], w[I];
      load_line(u + rank, I * I, v);
      mat_t_vec<I, I>(Sz, I, v, w);
      store_line(u + rank, I * I, w);
    }
    __syncthreads();
    if (work) {
      T v[I], w[I];
      load_line(u + a * I * I + b, I, v);
      mat_t_vec<I, I>(Sy, I, v, w);
      store_line(u + a * I * I + b, I, w);
    }
    __syncthreads();
    if (work) {
      T v[I], w[I];
      load_line(u + rank * I, 1, v);
      mat_t_vec<I, I>(Sx, I, v, w);
      const T lambda_zy = __ldg(lz + a) + __ldg(ly + b);
#pragma unroll
      for (int i = 0; i < I; ++i)
        w[i] /= lambda_zy + __ldg(lx + i);
      mat_vec<I, I, false>(Sx, I, w, v);
      store_line(u + rank * I, 1, v);
    }
    __syncthreads();
    if (work) {
      T v[I], w[I];
      load_line(u + a * I * I + b, I, v);
      mat_vec<I, I, false>(Sy, I, v, w);
      store_line(u + a * I * I + b, I, w);
    }
    __syncthreads();
    if (work) {
      T v[I], w[I];
      load_line(u + rank, I * I, v);
      mat_vec<I, I, false>(Sz, I, v, w);
      T *p = x + base + b + n0 * a;
#pragma unroll
      for (int z = 0; z < I; ++z)
        p[n0 * n1 * z] += w[z];
    }
  }
}

} // namespace tpmg_cuda

#endif
