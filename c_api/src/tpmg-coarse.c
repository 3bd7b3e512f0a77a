/* The exact solver of level 0. Its interior matrix is, like a patch matrix, a
 * Kronecker sum of 1D matrices, A_I = sum_d K_d ⊗ M_others, with the global 1D
 * mass and stiffness of the coarse mesh restricted to interior points. Fast
 * diagonalization (K_d S_d = M_d S_d Λ_d) gives each column of A_I^{-1} in
 * O(n_I sum_d n_d) operations, so the dense inverse costs O(n_I^2 sum_d n_d)
 * instead of a Cholesky factorization's O(n_I^3); the backend applies it as a
 * dense matrix-vector product. */
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

struct tpmg_coarse {
  tpmg_grid *grid; /* referenced */
  tpmg_precision precision;
  void *inverse; /* n_I x n_I in backend memory */
  size_t bytes;
  /* level 0 split among ranks: the whole level's b and x on every rank */
  void *whole_b, *whole_x;
  size_t whole_bytes;
};

/* y = (S_2 ⊗ S_1 ⊗ S_0) applied to the tensor t (x fastest), in place via w. */
static void apply_kronecker(int dim, const int *n, double *const *S, double *t, double *w) {
  int m[3] = {n[0], dim > 1 ? n[1] : 1, dim > 2 ? n[2] : 1};
  for (int d = 0; d < dim; ++d) {
    int stride = d == 0 ? 1 : d == 1 ? m[0] : m[0] * m[1];
    int len = m[d], total = m[0] * m[1] * m[2];
    for (int base = 0; base < total; ++base) {
      if ((base / stride) % len != 0) continue;
      for (int i = 0; i < len; ++i) {
        double s = 0.0;
        for (int j = 0; j < len; ++j) s += S[d][i * len + j] * t[base + j * stride];
        w[base + i * stride] = s;
      }
    }
    memcpy(t, w, sizeof(double) * total);
  }
}

tpmg_status tpmg_coarse_create(tpmg_grid *grid, tpmg_precision precision, tpmg_coarse **coarse) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, coarse, TPMG_ERROR_ARGUMENT, "coarse is NULL");
  TPMG_CHECK(ctx, precision == TPMG_DOUBLE || precision == TPMG_FLOAT, TPMG_ERROR_ARGUMENT,
             "unknown precision %d", (int)precision);
  const tpmg_level *lvl = &grid->global[0];
  int dim = lvl->dim, k = lvl->degree, n[3] = {1, 1, 1};
  tpmg_index n_interior = 1;
  for (int d = 0; d < dim; ++d) {
    n[d] = (int)lvl->n[d] - 2;
    n_interior *= n[d];
  }
  tpmg_coarse *c = calloc(1, sizeof(*c));
  TPMG_CHECK(ctx, c, TPMG_ERROR_MEMORY, "allocating the coarse solver failed");
  c->grid = grid;
  tpmg_grid_reference(grid);
  c->precision = precision;

  double cm[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  double ck[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  tpmg_basis_cell_matrices(k, cm, ck);
  double *S[3] = {NULL, NULL, NULL}, *lambda[3] = {NULL, NULL, NULL};
  double *M = NULL, *K = NULL, *inverse = NULL, *t = NULL, *w = NULL;
  void *converted = NULL;
  tpmg_status status = TPMG_SUCCESS;
  if (grid->part[0].distributed) {
    c->whole_bytes = (size_t)lvl->n_dofs * tpmg_precision_size(precision);
    status = tpmg_malloc(ctx, c->whole_bytes, "coarse level, whole", &c->whole_b);
    if (status == TPMG_SUCCESS)
      status = tpmg_malloc(ctx, c->whole_bytes, "coarse level, whole", &c->whole_x);
  }
  if (status != TPMG_SUCCESS || n_interior == 0) goto done;

  for (int d = 0; d < dim && status == TPMG_SUCCESS; ++d) {
    size_t nn = (size_t)n[d] * n[d];
    S[d] = malloc(sizeof(double) * nn);
    lambda[d] = malloc(sizeof(double) * n[d]);
    M = calloc(nn, sizeof(double));
    K = calloc(nn, sizeof(double));
    if (!S[d] || !lambda[d] || !M || !K) {
      status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__, "coarse 1D matrices");
      break;
    }
    /* global 1D matrices of level 0 on the interior points 1..N-2 */
    for (tpmg_index cell = 0; cell < lvl->cells[d]; ++cell)
      for (int a = 0; a <= k; ++a)
        for (int b = 0; b <= k; ++b) {
          long i = (long)(cell * k + a) - 1, j = (long)(cell * k + b) - 1;
          if (i < 0 || j < 0 || i >= n[d] || j >= n[d]) continue;
          M[i * n[d] + j] += lvl->h[d] * cm[a * (k + 1) + b];
          K[i * n[d] + j] += ck[a * (k + 1) + b] / lvl->h[d];
        }
    double residual = tpmg_basis_generalized_eigen(n[d], K, M, S[d], lambda[d]);
    if (!(residual >= 0.0 && residual < 1e-10))
      status = tpmg_error_set(ctx, TPMG_ERROR_NUMERICAL, __FILE__, __LINE__,
                              "coarse eigenproblem, direction %d (%d points): residual %g", d,
                              n[d], residual);
    free(M);
    free(K);
    M = K = NULL;
  }
  if (status != TPMG_SUCCESS) goto done;

  /* column j of A_I^{-1} = (⊗S) D^{-1} (⊗S)^T e_j, where (⊗S)^T e_j is the
   * Kronecker product of the rows j_d of the S_d */
  inverse = malloc(sizeof(double) * (size_t)n_interior * (size_t)n_interior);
  t = malloc(sizeof(double) * (size_t)n_interior);
  w = malloc(sizeof(double) * (size_t)n_interior);
  if (!inverse || !t || !w) {
    status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                            "coarse inverse of %lld DoFs", (long long)n_interior);
    goto done;
  }
  for (tpmg_index j = 0; j < n_interior; ++j) {
    int jd[3] = {(int)(j % n[0]), (int)(j / n[0] % n[1]), (int)(j / n[0] / n[1])};
    for (tpmg_index i = 0; i < n_interior; ++i) {
      int id[3] = {(int)(i % n[0]), (int)(i / n[0] % n[1]), (int)(i / n[0] / n[1])};
      double value = 1.0, eigenvalue = 0.0;
      for (int d = 0; d < dim; ++d) {
        value *= S[d][jd[d] * n[d] + id[d]];
        eigenvalue += lambda[d][id[d]];
      }
      t[i] = value / eigenvalue;
    }
    apply_kronecker(dim, n, S, t, w);
    memcpy(inverse + j * n_interior, t, sizeof(double) * (size_t)n_interior); /* symmetric */
  }

  c->bytes = (size_t)n_interior * (size_t)n_interior * tpmg_precision_size(precision);
  const void *src = inverse;
  if (precision == TPMG_FLOAT) {
    converted = malloc(c->bytes);
    if (!converted) {
      status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__, "coarse inverse");
      goto done;
    }
    for (size_t i = 0; i < (size_t)n_interior * (size_t)n_interior; ++i)
      ((float *)converted)[i] = (float)inverse[i];
    src = converted;
  }
  status = tpmg_malloc(ctx, c->bytes, "coarse inverse", &c->inverse);
  if (status == TPMG_SUCCESS) status = ctx->ops->upload(ctx, c->inverse, src, c->bytes);

done:
  for (int d = 0; d < 3; ++d) {
    free(S[d]);
    free(lambda[d]);
  }
  free(M);
  free(K);
  free(inverse);
  free(t);
  free(w);
  free(converted);
  status = tpmg_comm_agree(ctx, status);
  if (status != TPMG_SUCCESS) {
    tpmg_coarse_destroy(&c);
    return status;
  }
  *coarse = c;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_coarse_apply(tpmg_coarse *coarse, const void *b, void *x) {
  if (!coarse) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = coarse->grid->ctx;
  tpmg_index n = coarse->grid->levels[0].n_dofs;
  tpmg_status status = TPMG_SUCCESS;
  if (!b || !x || b == x)
    status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                            "b %p and x %p must be distinct non-NULL vectors", b, x);
  if (status == TPMG_SUCCESS)
    status = tpmg_vector_check(ctx, "tpmg_coarse_apply: b", b, coarse->precision, n);
  if (status == TPMG_SUCCESS)
    status = tpmg_vector_check(ctx, "tpmg_coarse_apply: x", x, coarse->precision, n);
  TPMG_CALL(tpmg_comm_agree(ctx, status));
  return tpmg_coarse_solve(coarse, b, x);
}

/* A level 0 split among ranks is gathered whole onto every rank, solved there
 * (the same on every rank) and cut back to this rank's box. */
tpmg_status tpmg_coarse_solve(tpmg_coarse *coarse, const void *b, void *x) {
  tpmg_context *ctx = coarse->grid->ctx;
  const tpmg_grid *grid = coarse->grid;
  tpmg_precision p = coarse->precision;
  if (!grid->part[0].distributed)
    return ctx->ops->coarse_solve(ctx, &grid->levels[0], p, coarse->inverse, b, x);
  TPMG_CALL(tpmg_partition_gather(grid, 0, p, b, coarse->whole_b));
  TPMG_CALL(
      ctx->ops->coarse_solve(ctx, &grid->global[0], p, coarse->inverse, coarse->whole_b,
                             coarse->whole_x));
  return tpmg_partition_extract(grid, 0, p, coarse->whole_x, x);
}

tpmg_status tpmg_coarse_destroy(tpmg_coarse **coarse) {
  if (!coarse) return TPMG_ERROR_ARGUMENT;
  if (!*coarse) return TPMG_SUCCESS;
  tpmg_grid *grid = (*coarse)->grid;
  tpmg_free(grid->ctx, (*coarse)->bytes, (*coarse)->inverse);
  tpmg_free(grid->ctx, (*coarse)->whole_bytes, (*coarse)->whole_b);
  tpmg_free(grid->ctx, (*coarse)->whole_bytes, (*coarse)->whole_x);
  free(*coarse);
  tpmg_grid_release(grid);
  *coarse = NULL;
  return TPMG_SUCCESS;
}
