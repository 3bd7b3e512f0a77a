/* CPU backend: the vertex-patch smoother's local residuals and local solves.
 *
 * A vertex v (1 <= v_d <= cells_d - 1) owns the closed patch of its 2^dim cells:
 * P = 2k+1 points o_d + a_d per direction, o_d = (v_d - 1) k, of which
 * a_d = 1..2k-1 (I = 2k-1 points) are interior. Paper Algorithm 3, one colour:
 *   r_j = R_j b - Abar_j Rbar_j x       (local residual, paper section 2.2)
 *   x  += R_j^T A_j^{-1} r_j            (local solve)
 * with Abar_j the interior rows of the patch matrix sum_d Kp_d (x) Mp_others
 * (I x P row blocks of the 1D patch matrices, Dirichlet entries of x read as
 * zero) and, by fast diagonalization (paper section 2.4, "Fast Diagonalization"),
 *   A_j^{-1} = (S_z (x) S_y (x) S_x) (L_z + L_y + L_x)^{-1} (S_z (x) S_y (x) S_x)^T,
 * where K_I S = M_I S L on the patch interior in each direction, S^T M_I S = I.
 * Patches of one colour have disjoint interiors and none reads another's
 * interior, so they run in parallel.
 * BOUNDARY (see tpmg-smoother.c) is the fused pass with xbar's patch interior
 * read as zero, so that r_j = R_j b - A_IB x_B, and x_I = A_j^{-1} r_j stored
 * instead of added: the old x_I is never read.
 * The batched kernels compute between their gathers and their scatter in
 * mirror coordinates (patch_mirror_data), where every 1D matrix is block
 * diagonal: about half the multiply-adds of the scalar kernels, the same
 * results up to rounding.
 *
 * The generic body of the kernels, per scalar type T and width (tpmg-cpu.h):
 * the data of a pass; at the scalar width the plain C local residual and
 * local solve of one patch, at the SIMD widths the batched pass of W patches;
 * a table of each, indexed by [dim - 2][k]. Instantiated by
 * tpmg-cpu-patch-double.c (the scalar width, with the driver),
 * tpmg-cpu-patch-double-avx2.c, tpmg-cpu-patch-double-avx512.c and their float
 * twins. */
#ifndef TPMG_CPU_PATCH_TEMPLATES_H
#define TPMG_CPU_PATCH_TEMPLATES_H

#if !defined(TPMG_CPU_SCALAR) || !defined(TPMG_CPU_ISA)
#error "define TPMG_CPU_SCALAR and TPMG_CPU_ISA before tpmg-cpu-patch-templates.h"
#endif

#include "tpmg-cpu-simd.h"
#include "tpmg-cpu-templates.h"

/* What every patch of one pass needs; 1D matrices column-major (see
 * tpmg_cpu_contract). The residual reads b and x, the solve updates x_out;
 * boundary: PATCH_BOUNDARY (x_I not read, x_out's interior overwritten). */
typedef struct {
  const tpmg_level *lvl;
  T mass[3][TPMG_CPU_MAX_MATRIX];             /* rows 1..2k-1 of patch_mass, I x P */
  T stiffness[3][TPMG_CPU_MAX_MATRIX];        /* rows 1..2k-1 of patch_stiffness */
  T vectors_t[3][TPMG_CPU_MAX_MATRIX];        /* S^T */
  T vectors[3][TPMG_CPU_MAX_MATRIX];          /* S */
  T inverse_eigenvalues[TPMG_CPU_MAX_TENSOR]; /* 1 / (lambda_z + lambda_y + lambda_x), I^dim */
  /* a variable coefficient (tpmg_level.coefficient, NULL for a = 1): the
   * local solve's surrogate divides by abar Lambda + c instead, abar of the
   * patch's 2^dim cells' values (tpmg-backend.h), Lambda the eigenvalue sums (no
   * reaction in the eigenvalues of such a level) */
  const T *coefficient;
  T eigenvalue_sums[TPMG_CPU_MAX_TENSOR];
  /* a graded level (tpmg_level.widths; NULL otherwise): per direction its
   * sets (tpmg_level_data.sets) as mass, stiffness, vectors_t and vectors
   * above, then the eigenvalues, TPMG_CPU_PATCH_SET values each; the patch
   * around vertex v takes set tpmg_level.vertex_set[d][v_d] along d. The
   * scalar kernels only. */
  T *sets[3];
#if TPMG_CPU_HAVE_SIMD
  /* The batched kernels' matrices in mirror coordinates (patch_mirror_data):
   * per direction the even block, then the odd block, each column-major. */
  T mass_eo[3][TPMG_CPU_MAX_MATRIX];
  T stiffness_eo[3][TPMG_CPU_MAX_MATRIX];
  T vectors_t_eo[3][TPMG_CPU_MAX_MATRIX];        /* Q S^T B */
  T vectors_eo[3][TPMG_CPU_MAX_MATRIX];          /* F S Q^T */
  T inverse_eigenvalues_eo[TPMG_CPU_MAX_TENSOR]; /* modes in the order of Q */
#endif
  const T *b;
  const T *x;
  T *x_out;
  T *r_out; /* PATCH_RESIDUAL's output */
  int boundary;
  /* the pass's patches: t_d < m[d], the last direction's from t_first on
   * (tpmg_level_patch_layers) */
  tpmg_index m[3], t_first;
} TPMG_CPU_NAME(patch_data);

#define TPMG_CPU_PATCH_SET (4 * TPMG_CPU_MAX_MATRIX + TPMG_CPU_MAX_POINTS)

/* Batched passes: W patches at a time, scratch the calling thread's block. */
typedef void TPMG_CPU_NAME(patch_batch_kernel)(const TPMG_CPU_NAME(patch_data) *, int mode,
                                               int colour, tpmg_index first, char *scratch);

/* The tables of the batched passes of the SIMD widths. */
TPMG_CPU_DECLARE_SIMD_TABLES(TPMG_CPU_NAME(patch_batch_kernel), tpmg_cpu_patch_batch_kernels);

#ifndef TPMG_CPU_SIMD_BYTES /* the scalar width: one patch at a time */

/* r = b_I - Abar xbar on the patch at origin (lo/hi: it touches the Dirichlet
 * boundary there): the local residual, r of size I^dim; with data->boundary,
 * xbar's interior is zero (not read), so r = b_I - A_IB x_B. */
TPMG_CPU_INLINE void TPMG_CPU_NAME(patch_residual)(const TPMG_CPU_NAME(patch_data) * data,
                                                   const tpmg_index origin[3], const int lo[3],
                                                   const int hi[3], T *restrict r, int dim, int k) {
  const tpmg_level *lvl = data->lvl;
  const int n_pts = 2 * k + 1, n_in = 2 * k - 1;
  const int n_local = dim == 3 ? n_in * n_in * n_in : n_in * n_in;
  const T *mass[3] = {data->mass[0], data->mass[1], data->mass[2]};
  const T *stiffness[3] = {data->stiffness[0], data->stiffness[1], data->stiffness[2]};
  for (int d = 0; d < dim && data->sets[0]; ++d) { /* graded: the patch's own sets */
    mass[d] = data->sets[d] + TPMG_CPU_PATCH_SET * lvl->vertex_set[d][origin[d] / k + 1];
    stiffness[d] = mass[d] + TPMG_CPU_MAX_MATRIX;
  }
  const tpmg_index interior[3] = {origin[0] + 1, origin[1] + 1, dim == 3 ? origin[2] + 1 : 0};
  const int none[3] = {0, 0, 0};
  T xbar[TPMG_CPU_MAX_TENSOR], b[TPMG_CPU_MAX_TENSOR];
  TPMG_CPU_NAME(tpmg_cpu_gather)(dim, n_pts, data->x, lvl->n, origin, lo, hi, data->boundary, xbar);
  TPMG_CPU_NAME(tpmg_cpu_kron_laplace)(dim, n_in, n_pts, mass, stiffness, xbar, r);
  TPMG_CPU_NAME(tpmg_cpu_gather)(dim, n_in, data->b, lvl->n, interior, none, none, 0, b);
  for (int i = 0; i < n_local; ++i)
    r[i] = b[i] - r[i];
}

/* x_I += A_I^{-1} r by fast diagonalization on the patch whose interior starts
 * at `interior` (data->boundary: x_I = A_I^{-1} r). */
TPMG_CPU_INLINE void TPMG_CPU_NAME(patch_solve)(const TPMG_CPU_NAME(patch_data) * data,
                                                const tpmg_index interior[3], const T *restrict r,
                                                int dim, int k) {
  const int n_in = 2 * k - 1;
  const int n_local = dim == 3 ? n_in * n_in * n_in : n_in * n_in;
  const T *vectors_t[3] = {data->vectors_t[0], data->vectors_t[1], data->vectors_t[2]};
  const T *vectors[3] = {data->vectors[0], data->vectors[1], data->vectors[2]};
  const T *lambda[3] = {NULL, NULL, NULL};
  for (int d = 0; d < dim && data->sets[0]; ++d) { /* graded: the patch's own sets */
    const T *set =
        data->sets[d] + TPMG_CPU_PATCH_SET * data->lvl->vertex_set[d][(interior[d] - 1) / k + 1];
    vectors_t[d] = set + 2 * TPMG_CPU_MAX_MATRIX;
    vectors[d] = set + 3 * TPMG_CPU_MAX_MATRIX;
    lambda[d] = set + 4 * TPMG_CPU_MAX_MATRIX;
  }
  const int begin[3] = {0, 0, 0}, end[3] = {n_in, n_in, dim == 3 ? n_in : 1};
  T y[TPMG_CPU_MAX_TENSOR], z[TPMG_CPU_MAX_TENSOR], work[TPMG_CPU_MAX_TENSOR];
  TPMG_CPU_NAME(tpmg_cpu_kron_apply)(dim, n_in, vectors_t, r, work, y);
  T abar = 1;
  if (data->coefficient) {
    /* the patch's cells: vertex v_d = (interior_d - 1) / k + 1, cells v_d - 1 and v_d */
    const tpmg_level *lvl = data->lvl;
    const tpmg_index c0 = (interior[0] - 1) / k, c1 = (interior[1] - 1) / k;
    const tpmg_index c2 = dim == 3 ? (interior[2] - 1) / k : 0;
    const tpmg_index stride[3] = {1, lvl->cells[0], lvl->cells[0] * lvl->cells[1]};
    const T *a = data->coefficient + c0 + stride[1] * c1 + stride[2] * c2;
    T sum = 0, top = 0;
    for (int e = 0; e < (dim == 3 ? 8 : 4); ++e) {
      const T v = a[(e & 1) + stride[1] * ((e >> 1) & 1) + stride[2] * (e >> 2)];
      sum += v;
      top = v > top ? v : top;
    }
    /* abar (tpmg-backend.h): the mean, at least the floor times the largest */
    const T mean = sum * (T)(dim == 3 ? 0.125 : 0.25), least = (T)TPMG_SURROGATE_FLOOR * top;
    abar = mean > least ? mean : least;
  }
  if (data->sets[0]) {
    /* graded: the patch's eigenvalue sums (the reaction in them without a
     * coefficient, else added here) */
    const T reaction = data->coefficient ? (T)data->lvl->reaction : 0;
    for (int i2 = 0, i = 0; i2 < (dim == 3 ? n_in : 1); ++i2)
      for (int i1 = 0; i1 < n_in; ++i1)
        for (int i0 = 0; i0 < n_in; ++i0, ++i) {
          const T sum = (dim == 3 ? lambda[2][i2] : 0) + lambda[1][i1] + lambda[0][i0];
          y[i] /= abar * sum + reaction;
        }
  } else if (data->coefficient) {
    const T reaction = (T)data->lvl->reaction;
    for (int i = 0; i < n_local; ++i)
      y[i] /= abar * data->eigenvalue_sums[i] + reaction;
  } else {
    for (int i = 0; i < n_local; ++i)
      y[i] *= data->inverse_eigenvalues[i];
  }
  TPMG_CPU_NAME(tpmg_cpu_kron_apply)(dim, n_in, vectors, y, work, z);
  const tpmg_index *n = data->lvl->n;
  const int add = !data->boundary;
  TPMG_CPU_NAME(tpmg_cpu_scatter)(dim, n_in, z, n, interior, begin, end, data->x_out, add);
}

typedef void TPMG_CPU_NAME(patch_residual_kernel)(const TPMG_CPU_NAME(patch_data) *,
                                                  const tpmg_index[3], const int[3], const int[3],
                                                  T *);
typedef void TPMG_CPU_NAME(patch_solve_kernel)(const TPMG_CPU_NAME(patch_data) *,
                                               const tpmg_index[3], const T *);

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_NAME(patch_residual_##dim##d_q##k)(                                         \
      const TPMG_CPU_NAME(patch_data) * data, const tpmg_index origin[3], const int lo[3],         \
      const int hi[3], T *r) {                                                                     \
    TPMG_CPU_NAME(patch_residual)(data, origin, lo, hi, r, dim, k);                                \
  }                                                                                                \
  static void TPMG_CPU_NAME(patch_solve_##dim##d_q##k)(const TPMG_CPU_NAME(patch_data) * data,     \
                                                       const tpmg_index interior[3], const T *r) { \
    TPMG_CPU_NAME(patch_solve)(data, interior, r, dim, k);                                         \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_NAME(patch_residual_##dim##d_q##k),
static TPMG_CPU_NAME(patch_residual_kernel) *const
    TPMG_CPU_NAME(patch_residual_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY
#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_NAME(patch_solve_##dim##d_q##k),
static TPMG_CPU_NAME(patch_solve_kernel) *const
    TPMG_CPU_NAME(patch_solve_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

#else /* a SIMD width: W patches at a time */

#include "tpmg-cpu-simd-templates.h"

/* In place along one direction of a tensor of lane vectors (lines of n points,
 * point stride pre, post lines of them): to mirror coordinates (F) or back
 * (B, backward). */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(mirror)(int n, int pre, int post, V *restrict u, int backward) {
  const int h = (n - 1) / 2;
  for (int q = 0; q < post; ++q)
    for (int p = 0; p < pre; ++p) {
      V *restrict line = u + q * n * pre + p;
      TPMG_CPU_UNROLL
      for (int a = 0; a < h; ++a) {
        const V s = line[a * pre], t = line[(n - 1 - a) * pre];
        if (backward) {
          line[a * pre] = (T)0.5 * (s + t);
          line[(n - 1 - a) * pre] = (T)0.5 * (s - t);
        } else {
          line[a * pre] = s + t;
          line[(n - 1 - a) * pre] = s - t;
        }
      }
    }
}

/* mirror along every direction of an n^dim tensor. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(mirror_all)(int dim, int n, V *restrict u, int backward) {
  TPMG_CPU_VNAME(mirror)(n, 1, dim == 3 ? n * n : n, u, backward);
  TPMG_CPU_VNAME(mirror)(n, n, dim == 3 ? n : 1, u, backward);
  if (dim == 3)
    TPMG_CPU_VNAME(mirror)(n, n * n, 1, u, backward);
}

/* One diagonal block of contract_eo: rows r0 .. r0 + nr - 1 from columns
 * c0 .. c0 + nc - 1, the block column-major in a. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(contract_block)(int rows, int cols, int pre, int post, int r0,
                                                    int nr, int c0, int nc, const T *restrict a,
                                                    const V *restrict in, V *restrict out,
                                                    int add) {
  for (int q = 0; q < post; ++q)
    for (int p = 0; p < pre; ++p) {
      V acc[TPMG_CPU_MAX_POINTS];
      TPMG_CPU_UNROLL
      for (int i = 0; i < nr; ++i)
        acc[i] = add ? out[(q * rows + r0 + i) * pre + p] : (V){0};
      for (int j = 0; j < nc; ++j) {
        const V u = in[(q * cols + c0 + j) * pre + p];
        TPMG_CPU_UNROLL
        for (int i = 0; i < nr; ++i)
          acc[i] += a[j * nr + i] * u;
      }
      TPMG_CPU_UNROLL
      for (int i = 0; i < nr; ++i)
        out[(q * rows + r0 + i) * pre + p] = acc[i];
    }
}

/* simd_contract with a matrix block diagonal in mirror coordinates, at as
 * patch_mirror_data stores it (even block, then odd). */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(contract_eo)(int rows, int cols, int pre, int post,
                                                 const T *restrict at, const V *restrict in,
                                                 V *restrict out, int add) {
  const int re = (rows + 1) / 2, ce = (cols + 1) / 2;
  TPMG_CPU_VNAME(contract_block)(rows, cols, pre, post, 0, re, 0, ce, at, in, out, add);
  TPMG_CPU_VNAME(contract_block)
  (rows, cols, pre, post, re, rows - re, ce, cols - ce, at + re * ce, in, out, add);
}

/* simd_kron_laplace in mirror coordinates. */
TPMG_CPU_INLINE void
TPMG_CPU_VNAME(kron_laplace_eo)(int dim, int rows, int cols, const T *const mass[3],
                                const T *const stiffness[3], const V *restrict in, V *restrict t0,
                                V *restrict t1, V *restrict t2, V *restrict out) {
  const int slower = dim == 3 ? cols * cols : cols;
  TPMG_CPU_VNAME(contract_eo)(rows, cols, 1, slower, mass[0], in, t0, 0);
  TPMG_CPU_VNAME(contract_eo)(rows, cols, 1, slower, stiffness[0], in, t1, 0);
  if (dim == 2) {
    TPMG_CPU_VNAME(contract_eo)(rows, cols, rows, 1, stiffness[1], t0, out, 0);
    TPMG_CPU_VNAME(contract_eo)(rows, cols, rows, 1, mass[1], t1, out, 1);
    return;
  }
  TPMG_CPU_VNAME(contract_eo)(rows, cols, rows, cols, mass[1], t0, t2, 0);
  TPMG_CPU_VNAME(contract_eo)(rows, cols, rows * rows, 1, stiffness[2], t2, out, 0);
  TPMG_CPU_VNAME(contract_eo)(rows, cols, rows, cols, stiffness[1], t0, t2, 0);
  TPMG_CPU_VNAME(contract_eo)(rows, cols, rows, cols, mass[1], t1, t2, 1);
  TPMG_CPU_VNAME(contract_eo)(rows, cols, rows * rows, 1, mass[2], t2, out, 1);
}

/* simd_kron_apply in mirror coordinates. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(kron_apply_eo)(int dim, int n, const T *const a[3],
                                                   const V *restrict in, V *restrict work,
                                                   V *restrict out) {
  if (dim == 2) {
    TPMG_CPU_VNAME(contract_eo)(n, n, 1, n, a[0], in, work, 0);
    TPMG_CPU_VNAME(contract_eo)(n, n, n, 1, a[1], work, out, 0);
    return;
  }
  TPMG_CPU_VNAME(contract_eo)(n, n, 1, n * n, a[0], in, out, 0);
  TPMG_CPU_VNAME(contract_eo)(n, n, n, n, a[1], out, work, 0);
  TPMG_CPU_VNAME(contract_eo)(n, n, n * n, 1, a[2], work, out, 0);
}

/* t: the coordinates of the next patch of a colour (t0 fastest, t2 slowest). */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(patch_next)(tpmg_index t[3], tpmg_index m0, tpmg_index m1) {
  if (++t[0] < m0)
    return;
  t[0] = 0;
  if (++t[1] < m1)
    return;
  t[1] = 0;
  ++t[2];
}

/* The patches first .. first + W - 1 of a colour (in the order t0 fastest, t2
 * slowest; the last batch repeats its last patch in the unused lanes) through
 * one pass of `mode`, as patch_residual, patch_solve and the scalar pass do
 * one at a time. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(patch_batch)(const TPMG_CPU_NAME(patch_data) * data, int mode,
                                                 int colour, tpmg_index first, V *restrict scratch,
                                                 int dim, int k) {
  const tpmg_level *lvl = data->lvl;
  const int n_pts = 2 * k + 1, n_in = 2 * k - 1;
  const int n_local = dim == 3 ? n_in * n_in * n_in : n_in * n_in;
  const int line = dim == 3 ? n_in * n_pts * n_pts : n_in * n_pts;
  V *xbar = scratch, *t0 = xbar + (dim == 3 ? n_pts * n_pts * n_pts : n_pts * n_pts);
  V *t1 = t0 + line, *t2 = t1 + line, *r = t2 + (dim == 3 ? n_in * n_in * n_pts : 0);
  const tpmg_index m0 = data->m[0], m1 = data->m[1], m2 = data->m[2];
  const tpmg_index count = m0 * m1 * m2;
  const int used = count - first < W ? (int)(count - first) : W;
  tpmg_index origin[W][3], interior[W][3], next[W][3];
  int lo[W][3], hi[W][3];
  const int none[W][3] = {{0}};
  /* the lanes' patch coordinates counted on from the batch's first patch and
   * from the next batch's (one division each, not one per lane) */
  const tpmg_index ahead = first + W < count ? first + W : count - 1;
  tpmg_index p[3] = {first % m0, first / m0 % m1, first / (m0 * m1)};
  tpmg_index p_ahead[3] = {ahead % m0, ahead / m0 % m1, ahead / (m0 * m1)};
  for (int l = 0; l < W; ++l) {
    tpmg_index t[3] = {p[0], p[1], p[2]}, t_ahead[3] = {p_ahead[0], p_ahead[1], p_ahead[2]};
    if (l + 1 < used)
      TPMG_CPU_VNAME(patch_next)(p, m0, m1);
    if (ahead + l + 1 < count)
      TPMG_CPU_VNAME(patch_next)(p_ahead, m0, m1);
    t[dim - 1] += data->t_first;
    t_ahead[dim - 1] += data->t_first;
    for (int d = 0; d < 3; ++d) {
      /* vertex v_d = 1 + colour_d + 2 t_d */
      const tpmg_index v = 1 + ((colour >> d) & 1) + 2 * t[d];
      origin[l][d] = d < dim ? (v - 1) * k : 0;
      interior[l][d] = d < dim ? origin[l][d] + 1 : 0;
      lo[l][d] = d < dim && v == 1;
      hi[l][d] = d < dim && v == lvl->cells[d] - 1;
      next[l][d] = d < dim ? (((colour >> d) & 1) + 2 * t_ahead[d]) * k : 0;
    }
  }
  const tpmg_index *n = lvl->n;
  if (first + W < count)
    TPMG_CPU_VNAME(simd_prefetch)(dim, n_pts, mode == PATCH_SOLVE ? data->b : data->x, n, next);
  /* in mirror coordinates (patch_mirror_data) from the gathers to the scatter */
  if (mode == PATCH_SOLVE) {
    TPMG_CPU_VNAME(simd_gather)(dim, n_in, data->b, n, interior, none, none, 0, r);
    TPMG_CPU_VNAME(mirror_all)(dim, n_in, r, 0);
  } else {
    /* r = b_I - Abar xbar */
    const T *mass[3] = {data->mass_eo[0], data->mass_eo[1], data->mass_eo[2]};
    const T *stiffness[3] = {data->stiffness_eo[0], data->stiffness_eo[1], data->stiffness_eo[2]};
    TPMG_CPU_VNAME(simd_gather)(dim, n_pts, data->x, n, origin, lo, hi, data->boundary, xbar);
    TPMG_CPU_VNAME(mirror_all)(dim, n_pts, xbar, 0);
    TPMG_CPU_VNAME(kron_laplace_eo)(dim, n_in, n_pts, mass, stiffness, xbar, t0, t1, t2, r);
    TPMG_CPU_VNAME(simd_gather)(dim, n_in, data->b, n, interior, none, none, 0, xbar);
    TPMG_CPU_VNAME(mirror_all)(dim, n_in, xbar, 0);
    for (int i = 0; i < n_local; ++i)
      r[i] = xbar[i] - r[i];
  }
  if (mode == PATCH_RESIDUAL) {
    TPMG_CPU_VNAME(mirror_all)(dim, n_in, r, 1);
    TPMG_CPU_VNAME(simd_scatter_disjoint)(dim, n_in, r, used, n, interior, data->r_out, 0);
    return;
  }
  /* x_I (+)= S (L^-1 (S^T r)): y in t0, the work in t1, z in r */
  const T *vectors_t[3] = {data->vectors_t_eo[0], data->vectors_t_eo[1], data->vectors_t_eo[2]};
  const T *vectors[3] = {data->vectors_eo[0], data->vectors_eo[1], data->vectors_eo[2]};
  TPMG_CPU_VNAME(kron_apply_eo)(dim, n_in, vectors_t, r, t1, t0);
  for (int i = 0; i < n_local; ++i)
    t0[i] *= data->inverse_eigenvalues_eo[i];
  TPMG_CPU_VNAME(kron_apply_eo)(dim, n_in, vectors, t0, t1, r);
  TPMG_CPU_VNAME(mirror_all)(dim, n_in, r, 1);
  const int add = !data->boundary;
  TPMG_CPU_VNAME(simd_scatter_disjoint)(dim, n_in, r, used, n, interior, data->x_out, add);
}

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_VNAME(patch_batch_##dim##d_q##k)(const TPMG_CPU_NAME(patch_data) * data,    \
                                                        int mode, int colour, tpmg_index first,    \
                                                        char *scratch) {                           \
    TPMG_CPU_VNAME(patch_batch)(data, mode, colour, first, (V *)scratch, dim, k);                  \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_VNAME(patch_batch_##dim##d_q##k),
TPMG_CPU_TABLE(TPMG_CPU_NAME(patch_batch_kernel), tpmg_cpu_patch_batch_kernels,
               TPMG_CPU_ISA) = {TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

#endif

#endif
