/* Private header of the CPU backend: the entry points its files share, and the
 * building blocks of its kernels.
 *
 * Precision. C has no templates, so every kernel file includes itself twice,
 * once with TPMG_CPU_SCALAR defined as double and once as float; its
 * precision-generic part is written with the scalar type T and names made
 * unique by TPMG_CPU_NAME (name_double, name_float). That part includes this
 * header again to get the building blocks of the section below for its type.
 *
 * Degree. Hot kernels are static inline functions taking dim and k as
 * arguments; TPMG_CPU_FOR_EACH_DEGREE instantiates them with constant dim and k
 * (so loop bounds are compile-time constants), and a table indexed by [dim-2][k]
 * selects the instance at run time. OpenMP regions are outlined before
 * inlining, so they live in the generic drivers, which call an instance per row
 * or layer of cells or patches. */
#ifndef TPMG_CPU_H
#define TPMG_CPU_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-backend.h"

/* Points per direction of the largest local tensor: the vertex patch of Q_10 in 2D. */
#define TPMG_CPU_MAX_POINTS (2 * TPMG_MAX_DEGREE_2D + 1)
/* Entries of a 1D matrix and of a local tensor: 21^2 in 2D < 17^3 in 3D. */
#define TPMG_CPU_MAX_MATRIX (TPMG_CPU_MAX_POINTS * TPMG_CPU_MAX_POINTS)
#define TPMG_CPU_MAX_TENSOR                                                                        \
  ((2 * TPMG_MAX_DEGREE_3D + 1) * (2 * TPMG_MAX_DEGREE_3D + 1) * (2 * TPMG_MAX_DEGREE_3D + 1))

/* X(dim, k) for every supported dimension and degree. */
#define TPMG_CPU_FOR_EACH_DEGREE(X)                                                                \
  X(2, 1)                                                                                          \
  X(2, 2)                                                                                          \
  X(2, 3)                                                                                          \
  X(2, 4)                                                                                          \
  X(2, 5)                                                                                          \
  X(2, 6) X(2, 7) X(2, 8) X(2, 9) X(2, 10) X(3, 1) X(3, 2) X(3, 3) X(3, 4) X(3, 5) X(3, 6) X(3, 7) \
      X(3, 8)

#if defined(__GNUC__)
#define TPMG_CPU_INLINE static inline __attribute__((always_inline))
#else
#define TPMG_CPU_INLINE static inline
#endif

/* The scalar type and unique names inside a precision-generic part. */
#define T TPMG_CPU_SCALAR
#define TPMG_CPU_PASTE_(name, type) name##_##type
#define TPMG_CPU_PASTE(name, type) TPMG_CPU_PASTE_(name, type)
#define TPMG_CPU_NAME(name) TPMG_CPU_PASTE(name, TPMG_CPU_SCALAR)
#define TPMG_CPU_PRECISION (sizeof(T) == sizeof(float) ? TPMG_FLOAT : TPMG_DOUBLE)

/* What the backend keeps behind tpmg_backend_data. */
typedef struct {
  double stopwatch_start; /* the stopwatch's start mark */
  int simd;               /* the kernels' width, TPMG_CPU_SIMD_* (tpmg-cpu-simd.h) */
} tpmg_cpu_data;

static inline int tpmg_cpu_simd(const tpmg_context *ctx) {
  return ((const tpmg_cpu_data *)tpmg_backend_data(ctx))->simd;
}

/* Scratch for the batched kernels: tpmg_backend_threads(ctx) blocks of at least `bytes`
 * each, `*stride` bytes apart, 64-byte aligned, in *ptr (free with free()).
 * bytes = 0: *ptr = NULL, *stride = 0. */
tpmg_status tpmg_cpu_scratch(tpmg_context *ctx, size_t bytes, size_t *stride, char **ptr);

/* The operations of the backend table implemented outside tpmg-cpu-backend.c;
 * arguments as in tpmg_backend_ops. */
tpmg_status tpmg_cpu_laplace(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             const void *src, void *dst);
/* The work per DoF of one tpmg_cpu_laplace, counted from its kernel. */
void tpmg_cpu_laplace_work(const tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           tpmg_work *work);
tpmg_status tpmg_cpu_copy_boundary(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                   const void *src, void *dst);
tpmg_status tpmg_cpu_patch_fused(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                 int colour, int boundary, const tpmg_index vertices[2],
                                 const void *b, void *x);
tpmg_status tpmg_cpu_patch_residual(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                    int colour, const void *b, const void *x, void *r);
tpmg_status tpmg_cpu_patch_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                 int colour, const void *r, void *x);
tpmg_status tpmg_cpu_prolongate_add(tpmg_context *ctx, const tpmg_level *coarse,
                                    const tpmg_level *fine, tpmg_precision prec, const void *c,
                                    void *f);
tpmg_status tpmg_cpu_restrict(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                              tpmg_precision prec, const void *f, void *c);

/* Cells are scattered into a global vector in layers along the slowest
 * direction, even layers first, then odd ones: layers of one parity share no
 * DoF, and one thread adds up a whole layer, so the summation order is fixed.
 * Layer c (DoF planes c k .. c k + k) zeroes the planes that no layer of the
 * previous parity has written before it adds: all of them if c is even, all but
 * the first and (unless c is the last layer) the last if c is odd. */
static inline void tpmg_cpu_layer_planes(tpmg_index c, tpmg_index n_layers, int k,
                                         tpmg_index *first, tpmg_index *last) {
  int odd = (int)(c & 1);
  *first = c * k + odd;
  *last = c * k + k - (odd && c != n_layers - 1);
}

#endif

#ifdef TPMG_CPU_SCALAR
/* ---- precision-generic building blocks, once per scalar type ------------- */

/* One 1D matrix A (rows x cols) applied along one direction of a local tensor,
 * x fastest: out[q][i][p] (+)= sum_j A_ij in[q][j][p] for p < pre (the faster
 * directions) and q < post (the slower ones). `at` is A column-major,
 * at[j rows + i] = A_ij, so that the innermost loop is contiguous in both cases
 * (over i when pre = 1, over p otherwise). add = 0 overwrites out. */
TPMG_CPU_INLINE void TPMG_CPU_NAME(tpmg_cpu_contract)(int rows, int cols, int pre, int post,
                                                      const T *restrict at, const T *restrict in,
                                                      T *restrict out, int add) {
  if (pre == 1) {
    for (int q = 0; q < post; ++q) {
      T acc[TPMG_CPU_MAX_POINTS];
      for (int i = 0; i < rows; ++i)
        acc[i] = add ? out[q * rows + i] : 0;
      for (int j = 0; j < cols; ++j) {
        const T u = in[q * cols + j];
        for (int i = 0; i < rows; ++i)
          acc[i] += at[j * rows + i] * u;
      }
      for (int i = 0; i < rows; ++i)
        out[q * rows + i] = acc[i];
    }
    return;
  }
  for (int q = 0; q < post; ++q)
    for (int i = 0; i < rows; ++i) {
      T *restrict o = out + (q * rows + i) * pre;
      if (!add)
        for (int p = 0; p < pre; ++p)
          o[p] = 0;
      for (int j = 0; j < cols; ++j) {
        const T a = at[j * rows + i];
        const T *restrict u = in + (q * cols + j) * pre;
        for (int p = 0; p < pre; ++p)
          o[p] += a * u[p];
      }
    }
}

/* out = (sum_d K_d in direction d, M_e in the others) in, by sum factorization
 * (the Kronecker form of paper section 2.4), with rows x cols 1D matrices given
 * column-major: in 2D out = K_1 (M_0 in) + M_1 (K_0 in), in 3D
 *   out = K_2 M_1 (M_0 in) + M_2 [K_1 (M_0 in) + M_1 (K_0 in)],
 * where M_0 in is computed once for all terms. in has cols^dim entries, out
 * rows^dim. */
TPMG_CPU_INLINE void TPMG_CPU_NAME(tpmg_cpu_kron_laplace)(int dim, int rows, int cols,
                                                          const T *const mass[3],
                                                          const T *const stiffness[3],
                                                          const T *restrict in, T *restrict out) {
  T t0[TPMG_CPU_MAX_TENSOR], t1[TPMG_CPU_MAX_TENSOR];
  const int slower = dim == 3 ? cols * cols : cols;
  TPMG_CPU_NAME(tpmg_cpu_contract)(rows, cols, 1, slower, mass[0], in, t0, 0);
  TPMG_CPU_NAME(tpmg_cpu_contract)(rows, cols, 1, slower, stiffness[0], in, t1, 0);
  if (dim == 2) {
    TPMG_CPU_NAME(tpmg_cpu_contract)(rows, cols, rows, 1, stiffness[1], t0, out, 0);
    TPMG_CPU_NAME(tpmg_cpu_contract)(rows, cols, rows, 1, mass[1], t1, out, 1);
    return;
  }
  T t2[TPMG_CPU_MAX_TENSOR];
  TPMG_CPU_NAME(tpmg_cpu_contract)(rows, cols, rows, cols, mass[1], t0, t2, 0);
  TPMG_CPU_NAME(tpmg_cpu_contract)(rows, cols, rows * rows, 1, stiffness[2], t2, out, 0);
  TPMG_CPU_NAME(tpmg_cpu_contract)(rows, cols, rows, cols, stiffness[1], t0, t2, 0);
  TPMG_CPU_NAME(tpmg_cpu_contract)(rows, cols, rows, cols, mass[1], t1, t2, 1);
  TPMG_CPU_NAME(tpmg_cpu_contract)(rows, cols, rows * rows, 1, mass[2], t2, out, 1);
}

/* out = (A_2 (x) A_1 (x) A_0) in with n x n matrices given column-major (2D
 * without A_2); in and out are n^dim, work is scratch of the same size. */
TPMG_CPU_INLINE void TPMG_CPU_NAME(tpmg_cpu_kron_apply)(int dim, int n, const T *const a[3],
                                                        const T *restrict in, T *restrict work,
                                                        T *restrict out) {
  if (dim == 2) {
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, 1, n, a[0], in, work, 0);
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n, 1, a[1], work, out, 0);
    return;
  }
  TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, 1, n * n, a[0], in, out, 0);
  TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n, n, a[1], out, work, 0);
  TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n * n, 1, a[2], work, out, 0);
}

/* local = the n_pts^dim block of the global vector x (sizes n) starting at
 * origin, entries on the first (lo[d]) or last (hi[d]) plane of direction d read
 * as zero: how Dirichlet entries are read as zero. hollow != 0: the points
 * inside the block in every direction (a_d = 1..n_pts-2) are set to zero
 * without being read (TPMG_SMOOTHER_BOUNDARY's window). */
TPMG_CPU_INLINE void TPMG_CPU_NAME(tpmg_cpu_gather)(int dim, int n_pts, const T *restrict x,
                                                    const tpmg_index n[3],
                                                    const tpmg_index origin[3], const int lo[3],
                                                    const int hi[3], int hollow,
                                                    T *restrict local) {
  const int n_2 = dim == 3 ? n_pts : 1;
  for (int a2 = 0; a2 < n_2; ++a2)
    for (int a1 = 0; a1 < n_pts; ++a1) {
      T *restrict row = local + (a2 * n_pts + a1) * n_pts;
      int zero = (lo[1] && a1 == 0) || (hi[1] && a1 == n_pts - 1);
      if (dim == 3)
        zero = zero || (lo[2] && a2 == 0) || (hi[2] && a2 == n_pts - 1);
      if (zero) {
        for (int a0 = 0; a0 < n_pts; ++a0)
          row[a0] = 0;
        continue;
      }
      const T *restrict src = x + origin[0] + n[0] * (origin[1] + a1 + n[1] * (origin[2] + a2));
      const int inner = a1 > 0 && a1 < n_pts - 1 && (dim == 2 || (a2 > 0 && a2 < n_pts - 1));
      if (hollow && inner) {
        row[0] = src[0];
        for (int a0 = 1; a0 < n_pts - 1; ++a0)
          row[a0] = 0;
        row[n_pts - 1] = src[n_pts - 1];
      } else {
        for (int a0 = 0; a0 < n_pts; ++a0)
          row[a0] = src[a0];
      }
      if (lo[0])
        row[0] = 0;
      if (hi[0])
        row[n_pts - 1] = 0;
    }
}

/* x[origin + a] = (add ? x[origin + a] : 0) + local[a] for begin[d] <= a_d <
 * end[d] (local is n_pts^dim; in 2D begin[2] = 0, end[2] = 1). */
TPMG_CPU_INLINE void TPMG_CPU_NAME(tpmg_cpu_scatter)(int dim, int n_pts, const T *restrict local,
                                                     const tpmg_index n[3],
                                                     const tpmg_index origin[3], const int begin[3],
                                                     const int end[3], T *restrict x, int add) {
  for (int a2 = begin[2]; a2 < end[2]; ++a2)
    for (int a1 = begin[1]; a1 < end[1]; ++a1) {
      const T *restrict row = local + (a2 * n_pts + a1) * n_pts;
      T *restrict dst = x + origin[0] + n[0] * (origin[1] + a1 + n[1] * (origin[2] + a2));
      if (add)
        for (int a0 = begin[0]; a0 < end[0]; ++a0)
          dst[a0] += row[a0];
      else
        for (int a0 = begin[0]; a0 < end[0]; ++a0)
          dst[a0] = row[a0];
    }
}

#endif
