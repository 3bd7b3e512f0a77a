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
 * This file includes itself once per scalar type (see tpmg-cpu.h) and, in
 * that part, once per instruction set for its batched kernels (see
 * tpmg-cpu-simd.h). */
#ifndef TPMG_CPU_SCALAR

#include <omp.h>

#include "tpmg-cpu-simd.h"
#include "tpmg-cpu.h"

/* What a pass over the patches of one colour does. */
enum { PATCH_RESIDUAL, PATCH_SOLVE, PATCH_FUSED, PATCH_BOUNDARY };

#define TPMG_CPU_SCALAR double
#include "tpmg-cpu-patch.c"
#undef TPMG_CPU_SCALAR
#define TPMG_CPU_SCALAR float
#include "tpmg-cpu-patch.c"
#undef TPMG_CPU_SCALAR

tpmg_status tpmg_cpu_patch_fused(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                 int colour, int boundary, const tpmg_index vertices[2],
                                 const void *b, void *x) {
  const int mode = boundary ? PATCH_BOUNDARY : PATCH_FUSED;
  if (prec == TPMG_FLOAT)
    return patch_pass_float(ctx, lvl, mode, colour, vertices, b, x, NULL, x);
  return patch_pass_double(ctx, lvl, mode, colour, vertices, b, x, NULL, x);
}

tpmg_status tpmg_cpu_patch_residual(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                    int colour, const void *b, const void *x, void *r) {
  if (prec == TPMG_FLOAT)
    return patch_pass_float(ctx, lvl, PATCH_RESIDUAL, colour, NULL, b, x, r, NULL);
  return patch_pass_double(ctx, lvl, PATCH_RESIDUAL, colour, NULL, b, x, r, NULL);
}

tpmg_status tpmg_cpu_patch_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                 int colour, const void *r, void *x) {
  if (prec == TPMG_FLOAT)
    return patch_pass_float(ctx, lvl, PATCH_SOLVE, colour, NULL, r, NULL, NULL, x);
  return patch_pass_double(ctx, lvl, PATCH_SOLVE, colour, NULL, r, NULL, NULL, x);
}

#elif !defined(TPMG_CPU_ISA) /* precision-generic part */

#include "tpmg-cpu.h"

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
  const int begin[3] = {0, 0, 0}, end[3] = {n_in, n_in, dim == 3 ? n_in : 1};
  T y[TPMG_CPU_MAX_TENSOR], z[TPMG_CPU_MAX_TENSOR], work[TPMG_CPU_MAX_TENSOR];
  TPMG_CPU_NAME(tpmg_cpu_kron_apply)(dim, n_in, vectors_t, r, work, y);
  for (int i = 0; i < n_local; ++i)
    y[i] *= data->inverse_eigenvalues[i];
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

#if TPMG_CPU_HAVE_SIMD
/* Lane vectors of a batched pass's scratch: xbar (P^dim), two tensors of
 * I P^(dim-1) (also y and the solve's work), one of I^2 P (3D) and r (I^dim),
 * with P = 2k+1 points and I = 2k-1 interior ones per direction. */
static size_t TPMG_CPU_NAME(patch_scratch)(int dim, int k) {
  const size_t p = (size_t)(2 * k + 1), i = (size_t)(2 * k - 1);
  return dim == 3 ? p * p * p + 2 * i * p * p + i * i * p + i * i * i : p * p + 2 * i * p + i * i;
}
#endif

/* out = 1 / (lambda_z + lambda_y + lambda_x) over the I^dim interior modes
 * (x fastest), position i of direction d taking mode mode[d][i] (NULL: i). */
static void TPMG_CPU_NAME(patch_inverse_eigenvalues)(const tpmg_level *lvl,
                                                     const int (*mode)[TPMG_CPU_MAX_POINTS],
                                                     T *out) {
  const int dim = lvl->dim, n_in = 2 * lvl->degree - 1, n_2 = dim == 3 ? n_in : 1;
  const tpmg_level_data *level_data = &lvl->data[TPMG_CPU_PRECISION];
  const T *lambda[3] = {level_data->eigenvalues[0], level_data->eigenvalues[1],
                        level_data->eigenvalues[2]};
  for (int i2 = 0; i2 < n_2; ++i2)
    for (int i1 = 0; i1 < n_in; ++i1)
      for (int i0 = 0; i0 < n_in; ++i0) {
        const int m2 = dim < 3 ? 0
                       : mode  ? mode[2][i2]
                               : i2,
                  m1 = mode ? mode[1][i1] : i1, m0 = mode ? mode[0][i0] : i0;
        out[(i2 * n_in + i1) * n_in + i0] =
            1 / ((dim == 3 ? lambda[2][m2] : 0) + lambda[1][m1] + lambda[0][m0]);
      }
}

#if TPMG_CPU_HAVE_SIMD
/* Mirror coordinates of n (odd) points per direction, h = (n - 1) / 2: the
 * pairs (a, n-1-a), a < h, become their sum at a and their difference at
 * n-1-a, the centre h stays (F); B = F^-1 halves the pairs back. On a patch of
 * two equal cells the 1D patch matrices are centrosymmetric and the
 * eigenvectors even or odd, so that in these coordinates the interior rows of
 * the patch matrices and, with the modes sorted even first (Q), S^T and S are
 * block diagonal: an even block (the sums and the centre) and an odd one (the
 * differences); a contraction costs about half the multiply-adds of the
 * dense one (the even-odd decomposition of sum factorization, as in deal.II's
 * evaluate_evenodd kernels: Kronbichler and Kormann, ACM TOMS 45(3), 2019).
 * Position e in these coordinates: e <= h even, e > h odd. Row e of F and
 * column e of B have one or two nonzeros: mirror_terms gives them (B: backward),
 * their indices a ascending, so that the products below take O(1) terms. */
static int TPMG_CPU_NAME(mirror_terms)(int n, int e, int backward, int a[2], double w[2]) {
  const int h = (n - 1) / 2;
  const double half = backward ? 0.5 : 1.0;
  if (e == h) {
    a[0] = h;
    w[0] = 1;
    return 1;
  }
  a[0] = e < h ? e : n - 1 - e;
  a[1] = e < h ? n - 1 - e : e;
  w[0] = half;
  w[1] = e < h ? half : -half;
  return 2;
}

/* The two diagonal blocks of the rows x cols matrix a (row-major) in mirror
 * coordinates: the even one (rows and columns up to the centre), then the odd
 * one, each column-major, into out; the other entries are zero up to rounding. */
static void TPMG_CPU_NAME(mirror_blocks)(int rows, int cols, const double *a, T *out) {
  const int hr = (rows - 1) / 2, hc = (cols - 1) / 2;
  int at = 0;
  for (int b = 0; b < 2; ++b)
    for (int j = b ? hc + 1 : 0; j < (b ? cols : hc + 1); ++j)
      for (int i = b ? hr + 1 : 0; i < (b ? rows : hr + 1); ++i)
        out[at++] = (T)a[i * cols + j];
}

/* data's matrices in mirror coordinates from the level's 1D data: F M B and
 * F K B of the interior rows, Q S^T B and F S Q^T, with Q the modes sorted by
 * parity (the sign of s_i . (s_i mirrored)); refused if the counts are not k
 * even and k-1 odd (a degenerate eigenvalue). */
static tpmg_status TPMG_CPU_NAME(patch_mirror_data)(tpmg_context *ctx, const tpmg_level *lvl,
                                                    TPMG_CPU_NAME(patch_data) * data) {
  const int dim = lvl->dim, k = lvl->degree, n_pts = 2 * k + 1, n_in = 2 * k - 1;
  const tpmg_level_data *level_data = &lvl->data[TPMG_CPU_PRECISION];
  int mode[3][TPMG_CPU_MAX_POINTS];
  for (int d = 0; d < dim; ++d) {
    const T *mass = level_data->patch_mass[d], *stiffness = level_data->patch_stiffness[d];
    const T *vectors = level_data->eigenvectors[d];
    /* Q: the even modes first */
    int even[TPMG_CPU_MAX_POINTS], n_even = 0;
    for (int i = 0; i < n_in; ++i) {
      double s = 0;
      for (int a = 0; a < n_in; ++a)
        s += (double)vectors[a * n_in + i] * (double)vectors[(n_in - 1 - a) * n_in + i];
      even[i] = s > 0;
      n_even += even[i];
    }
    TPMG_CHECK(ctx, n_even == k, TPMG_ERROR_NUMERICAL,
               "patch eigenvectors of direction %d: %d even of %d, expected %d", d, n_even, n_in,
               k);
    for (int b = 0, at = 0; b < 2; ++b)
      for (int i = 0; i < n_in; ++i)
        if (even[i] == (b == 0))
          mode[d][at++] = i;
    double m[TPMG_CPU_MAX_MATRIX], kk[TPMG_CPU_MAX_MATRIX], t1[TPMG_CPU_MAX_MATRIX],
        t2[TPMG_CPU_MAX_MATRIX];
    for (int e = 0; e < n_in; ++e)
      for (int c = 0; c < n_pts; ++c) {
        /* F M B, F K B with M, K the interior rows 1..2k-1 */
        int fa[2], bj[2];
        double fw[2], bw[2], sm = 0, sk = 0;
        const int nf = TPMG_CPU_NAME(mirror_terms)(n_in, e, 0, fa, fw),
                  nb = TPMG_CPU_NAME(mirror_terms)(n_pts, c, 1, bj, bw);
        for (int p = 0; p < nf; ++p)
          for (int q = 0; q < nb; ++q) {
            const double fb = fw[p] * bw[q];
            sm += fb * (double)mass[(fa[p] + 1) * n_pts + bj[q]];
            sk += fb * (double)stiffness[(fa[p] + 1) * n_pts + bj[q]];
          }
        m[e * n_pts + c] = sm;
        kk[e * n_pts + c] = sk;
      }
    for (int e = 0; e < n_in; ++e)
      for (int c = 0; c < n_in; ++c) {
        /* Q S^T B (row e a mode) and F S Q^T (column c a mode) */
        int ba[2], fa[2];
        double bw[2], fw[2], s1 = 0, s2 = 0;
        const int nb = TPMG_CPU_NAME(mirror_terms)(n_in, c, 1, ba, bw),
                  nf = TPMG_CPU_NAME(mirror_terms)(n_in, e, 0, fa, fw);
        for (int p = 0; p < nb; ++p)
          s1 += (double)vectors[ba[p] * n_in + mode[d][e]] * bw[p];
        for (int p = 0; p < nf; ++p)
          s2 += fw[p] * (double)vectors[fa[p] * n_in + mode[d][c]];
        t1[e * n_in + c] = s1;
        t2[e * n_in + c] = s2;
      }
    TPMG_CPU_NAME(mirror_blocks)(n_in, n_pts, m, data->mass_eo[d]);
    TPMG_CPU_NAME(mirror_blocks)(n_in, n_pts, kk, data->stiffness_eo[d]);
    TPMG_CPU_NAME(mirror_blocks)(n_in, n_in, t1, data->vectors_t_eo[d]);
    TPMG_CPU_NAME(mirror_blocks)(n_in, n_in, t2, data->vectors_eo[d]);
  }
  TPMG_CPU_NAME(patch_inverse_eigenvalues)(lvl, mode, data->inverse_eigenvalues_eo);
  return TPMG_SUCCESS;
}
#endif

/* Batched passes: W patches at a time, scratch the calling thread's block. */
typedef void TPMG_CPU_NAME(patch_batch_kernel)(const TPMG_CPU_NAME(patch_data) *, int mode,
                                               int colour, tpmg_index first, char *scratch);

#define TPMG_CPU_SELF "tpmg-cpu-patch.c"
#include "tpmg-cpu-simd.h"
#undef TPMG_CPU_SELF

/* One pass of `mode` over the patches of a colour around the vertices
 * [vertices[0], vertices[1]) along the last direction (NULL: all); b is r for
 * PATCH_SOLVE. */
static tpmg_status TPMG_CPU_NAME(patch_pass)(tpmg_context *ctx, const tpmg_level *lvl, int mode,
                                             int colour, const tpmg_index *vertices, const T *b,
                                             const T *x, T *r_out, T *x_out) {
  const int dim = lvl->dim, k = lvl->degree, n_pts = 2 * k + 1, n_in = 2 * k - 1;
  const tpmg_level_data *level_data = &lvl->data[TPMG_CPU_PRECISION];
  TPMG_CPU_NAME(patch_residual_kernel) *residual =
      TPMG_CPU_NAME(patch_residual_kernels)[dim - 2][k];
  TPMG_CPU_NAME(patch_solve_kernel) *solve = TPMG_CPU_NAME(patch_solve_kernels)[dim - 2][k];
  TPMG_CPU_NAME(patch_data) data;
  data.lvl = lvl;
  data.b = b;
  data.x = x;
  data.x_out = x_out;
  data.boundary = mode == PATCH_BOUNDARY;
  data.r_out = r_out;
  for (int d = 0; d < dim; ++d) {
    const T *mass = level_data->patch_mass[d], *stiffness = level_data->patch_stiffness[d];
    const T *vectors = level_data->eigenvectors[d];
    for (int i = 0; i < n_in; ++i) {
      for (int j = 0; j < n_pts; ++j) {
        data.mass[d][j * n_in + i] = mass[(i + 1) * n_pts + j];
        data.stiffness[d][j * n_in + i] = stiffness[(i + 1) * n_pts + j];
      }
      for (int j = 0; j < n_in; ++j) {
        data.vectors_t[d][j * n_in + i] = vectors[j * n_in + i];
        data.vectors[d][j * n_in + i] = vectors[i * n_in + j];
      }
    }
  }
  TPMG_CPU_NAME(patch_inverse_eigenvalues)(lvl, NULL, data.inverse_eigenvalues);

  const tpmg_index all[2] = {1, lvl->cells[dim - 1]};
  for (int d = 0; d < 3; ++d)
    data.m[d] = d < dim ? tpmg_level_patches_1d(lvl, d, colour) : 1;
  tpmg_level_patch_layers(lvl, colour, vertices ? vertices : all, &data.t_first, &data.m[dim - 1]);
  const tpmg_index m0 = data.m[0], m1 = data.m[1], m2 = data.m[2];
#if TPMG_CPU_HAVE_SIMD
  if (tpmg_cpu_simd(ctx) != TPMG_CPU_SIMD_SCALAR) {
    const int avx512 = tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX512;
    const size_t vector_bytes = avx512 ? 64 : 32, lanes = vector_bytes / sizeof(T);
    TPMG_CALL(TPMG_CPU_NAME(patch_mirror_data)(ctx, lvl, &data));
    TPMG_CPU_NAME(patch_batch_kernel) *batch =
        avx512 ? TPMG_CPU_SIMD_NAME(patch_batch_kernels, avx512)[dim - 2][k]
               : TPMG_CPU_SIMD_NAME(patch_batch_kernels, avx2)[dim - 2][k];
    char *scratch;
    size_t stride;
    TPMG_CALL(tpmg_cpu_scratch(ctx, TPMG_CPU_NAME(patch_scratch)(dim, k) * vector_bytes, &stride,
                               &scratch));
    const tpmg_index n_batches = (m0 * m1 * m2 + (tpmg_index)lanes - 1) / (tpmg_index)lanes;
#pragma omp parallel num_threads(tpmg_backend_threads(ctx))
    {
      char *mine = scratch + (size_t)omp_get_thread_num() * stride;
#pragma omp for schedule(static)
      for (tpmg_index i = 0; i < n_batches; ++i)
        batch(&data, mode, colour, i * (tpmg_index)lanes, mine);
    }
    free(scratch);
    return TPMG_SUCCESS;
  }
#endif
  const int none[3] = {0, 0, 0}, begin[3] = {0, 0, 0};
  const int end[3] = {n_in, n_in, dim == 3 ? n_in : 1};
#pragma omp parallel for collapse(3) schedule(static) num_threads(tpmg_backend_threads(ctx))
  for (tpmg_index t2 = 0; t2 < m2; ++t2)
    for (tpmg_index t1 = 0; t1 < m1; ++t1)
      for (tpmg_index t0 = 0; t0 < m0; ++t0) {
        /* vertex v_d = 1 + colour_d + 2 t_d */
        const tpmg_index t[3] = {t0, t1 + (dim == 2 ? data.t_first : 0),
                                 t2 + (dim == 3 ? data.t_first : 0)};
        tpmg_index origin[3] = {0, 0, 0}, interior[3] = {0, 0, 0};
        int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
        for (int d = 0; d < dim; ++d) {
          const tpmg_index v = 1 + ((colour >> d) & 1) + 2 * t[d];
          origin[d] = (v - 1) * k;
          interior[d] = origin[d] + 1;
          lo[d] = v == 1;
          hi[d] = v == lvl->cells[d] - 1;
        }
        T r[TPMG_CPU_MAX_TENSOR];
        if (mode == PATCH_SOLVE)
          TPMG_CPU_NAME(tpmg_cpu_gather)(dim, n_in, b, lvl->n, interior, none, none, 0, r);
        else
          residual(&data, origin, lo, hi, r);
        if (mode == PATCH_RESIDUAL)
          TPMG_CPU_NAME(tpmg_cpu_scatter)(dim, n_in, r, lvl->n, interior, begin, end, r_out, 0);
        else
          solve(&data, interior, r);
      }
  return TPMG_SUCCESS;
}

#else /* batched part, once per instruction set */

#include "tpmg-cpu-simd.h"

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
static TPMG_CPU_NAME(patch_batch_kernel) *const
    TPMG_CPU_VNAME(patch_batch_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

#endif
