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
  const T *lambda[3] = {level_data->eigenvalues[0], level_data->eigenvalues[1],
                        level_data->eigenvalues[2]};
  const int n_2 = dim == 3 ? n_in : 1;
  for (int i2 = 0; i2 < n_2; ++i2)
    for (int i1 = 0; i1 < n_in; ++i1)
      for (int i0 = 0; i0 < n_in; ++i0)
        data.inverse_eigenvalues[(i2 * n_in + i1) * n_in + i0] =
            1 / ((dim == 3 ? lambda[2][i2] : 0) + lambda[1][i1] + lambda[0][i0]);

  const tpmg_index all[2] = {1, lvl->cells[dim - 1]};
  for (int d = 0; d < 3; ++d)
    data.m[d] = d < dim ? tpmg_level_patches_1d(lvl, d, colour) : 1;
  tpmg_level_patch_layers(lvl, colour, vertices ? vertices : all, &data.t_first, &data.m[dim - 1]);
  const tpmg_index m0 = data.m[0], m1 = data.m[1], m2 = data.m[2];
#if TPMG_CPU_HAVE_SIMD
  if (tpmg_cpu_simd(ctx) != TPMG_CPU_SIMD_SCALAR) {
    const int avx512 = tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX512;
    const size_t vector_bytes = avx512 ? 64 : 32, lanes = vector_bytes / sizeof(T);
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
  for (int l = 0; l < W; ++l) {
    const tpmg_index patch = first + (l < used ? l : used - 1);
    tpmg_index t[3] = {patch % m0, patch / m0 % m1, patch / (m0 * m1)};
    const tpmg_index ahead = first + W + l < count ? first + W + l : count - 1;
    tpmg_index t_ahead[3] = {ahead % m0, ahead / m0 % m1, ahead / (m0 * m1)};
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
  const int begin[3] = {0, 0, 0}, end[3] = {n_in, n_in, dim == 3 ? n_in : 1};
  if (first + W < count)
    TPMG_CPU_VNAME(simd_prefetch)(dim, n_pts, mode == PATCH_SOLVE ? data->b : data->x, n, next);
  if (mode == PATCH_SOLVE) {
    TPMG_CPU_VNAME(simd_gather)(dim, n_in, data->b, n, interior, none, none, 0, r);
  } else {
    /* r = b_I - Abar xbar */
    const T *mass[3] = {data->mass[0], data->mass[1], data->mass[2]};
    const T *stiffness[3] = {data->stiffness[0], data->stiffness[1], data->stiffness[2]};
    TPMG_CPU_VNAME(simd_gather)(dim, n_pts, data->x, n, origin, lo, hi, data->boundary, xbar);
    TPMG_CPU_VNAME(simd_kron_laplace)(dim, n_in, n_pts, mass, stiffness, xbar, t0, t1, t2, r);
    TPMG_CPU_VNAME(simd_gather)(dim, n_in, data->b, n, interior, none, none, 0, xbar);
    for (int i = 0; i < n_local; ++i)
      r[i] = xbar[i] - r[i];
  }
  if (mode == PATCH_RESIDUAL) {
    for (int l = 0; l < used; ++l)
      TPMG_CPU_VNAME(simd_scatter)(dim, n_in, r, l, n, interior[l], begin, end, data->r_out, 0);
    return;
  }
  /* x_I (+)= S (L^-1 (S^T r)): y in t0, the work in t1, z in r */
  const T *vectors_t[3] = {data->vectors_t[0], data->vectors_t[1], data->vectors_t[2]};
  const T *vectors[3] = {data->vectors[0], data->vectors[1], data->vectors[2]};
  TPMG_CPU_VNAME(simd_kron_apply)(dim, n_in, vectors_t, r, t1, t0);
  for (int i = 0; i < n_local; ++i)
    t0[i] *= data->inverse_eigenvalues[i];
  TPMG_CPU_VNAME(simd_kron_apply)(dim, n_in, vectors, t0, t1, r);
  const int add = !data->boundary;
  for (int l = 0; l < used; ++l)
    TPMG_CPU_VNAME(simd_scatter)(dim, n_in, r, l, n, interior[l], begin, end, data->x_out, add);
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
