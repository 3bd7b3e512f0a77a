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
 * This file includes itself once per scalar type (see tpmg-cpu.h). */
#ifndef TPMG_CPU_SCALAR

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
                                 int colour, int boundary, const void *b, void *x) {
  const int mode = boundary ? PATCH_BOUNDARY : PATCH_FUSED;
  if (prec == TPMG_FLOAT)
    return patch_pass_float(ctx, lvl, mode, colour, b, x, NULL, x);
  return patch_pass_double(ctx, lvl, mode, colour, b, x, NULL, x);
}

tpmg_status tpmg_cpu_patch_residual(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                    int colour, const void *b, const void *x, void *r) {
  if (prec == TPMG_FLOAT)
    return patch_pass_float(ctx, lvl, PATCH_RESIDUAL, colour, b, x, r, NULL);
  return patch_pass_double(ctx, lvl, PATCH_RESIDUAL, colour, b, x, r, NULL);
}

tpmg_status tpmg_cpu_patch_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                 int colour, const void *r, void *x) {
  if (prec == TPMG_FLOAT)
    return patch_pass_float(ctx, lvl, PATCH_SOLVE, colour, r, NULL, NULL, x);
  return patch_pass_double(ctx, lvl, PATCH_SOLVE, colour, r, NULL, NULL, x);
}

#else /* precision-generic part */

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
  int boundary;
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

/* One pass of `mode` over the patches of a colour; b is r for PATCH_SOLVE. */
static tpmg_status TPMG_CPU_NAME(patch_pass)(tpmg_context *ctx, const tpmg_level *lvl, int mode,
                                             int colour, const T *b, const T *x, T *r_out,
                                             T *x_out) {
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

  const tpmg_index m0 = tpmg_level_patches_1d(lvl, 0, colour);
  const tpmg_index m1 = tpmg_level_patches_1d(lvl, 1, colour);
  const tpmg_index m2 = dim == 3 ? tpmg_level_patches_1d(lvl, 2, colour) : 1;
  const int none[3] = {0, 0, 0}, begin[3] = {0, 0, 0};
  const int end[3] = {n_in, n_in, dim == 3 ? n_in : 1};
#pragma omp parallel for collapse(3) schedule(static) num_threads(tpmg_backend_threads(ctx))
  for (tpmg_index t2 = 0; t2 < m2; ++t2)
    for (tpmg_index t1 = 0; t1 < m1; ++t1)
      for (tpmg_index t0 = 0; t0 < m0; ++t0) {
        /* vertex v_d = 1 + colour_d + 2 t_d */
        const tpmg_index t[3] = {t0, t1, t2};
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

#endif
