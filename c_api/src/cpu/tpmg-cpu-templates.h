/* The CPU kernels' building blocks of one scalar type T (tpmg-cpu.h): the
 * contractions of sum factorization on one cell or patch at a time, and the
 * gather and scatter of a local tensor.
 *
 * A template: the including source defines TPMG_CPU_SCALAR (double or float)
 * first; one scalar type per translation unit. */
#ifndef TPMG_CPU_TEMPLATES_H
#define TPMG_CPU_TEMPLATES_H

#ifndef TPMG_CPU_SCALAR
#error "define TPMG_CPU_SCALAR (double or float) before including tpmg-cpu-templates.h"
#endif

#include "tpmg-cpu.h"

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
