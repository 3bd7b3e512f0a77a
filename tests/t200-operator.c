/* t200-operator: tpmg_operator_apply against the matrix assembled cell by cell
 * in reference.c (Dirichlet rows identity, interior rows restricted to
 * interior columns), in 2D (k = 1,2,3,5,8,10) and 3D (k = 1,2,4), on every level
 * of an anisotropic box with several coarse cells and on the unit square/cube,
 * without and with a reaction term (c = 57.3: comparable to the stiffness;
 * c = 1e5: the mass matrix dominates), and tpmg_operator_diagonal against the
 * assembled matrix's diagonal,
 * in double (relative 1e-12) and float (relative 1e-5), on the backend named
 * by argv[1] (default "cpu"), outputs poisoned with NaN before each call.
 * A backend that refuses a degree by design ("cuda/thread": degree 1 only) must
 * return TPMG_ERROR_UNSUPPORTED; those cases are skipped and counted. */
#include <math.h>
#include <stdlib.h>

#include "reference.h"

/* tpmg_operator_diagonal against the diagonal of the assembled matrix
 * (duplicate entries of a row summed), relative 1e-13. */
static void check_diagonal(tpmg_context *ctx, tpmg_operator *op, const ref_csr *A, int64_t n,
                           const char *what) {
  double *expected = ref_malloc(sizeof(double) * n), *got = ref_malloc(sizeof(double) * n);
  for (int64_t i = 0; i < n; i++) {
    expected[i] = 0;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
      if (A->col[p] == i)
        expected[i] += A->val[p];
  }
  void *v = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_operator_diagonal(op, v));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, v, got);
  ref_vector_destroy(ctx, &v);
  double err = ref_relative_difference(n, got, expected);
  REF_CHECK(err <= 1e-13, "%s: diagonal: relative difference to the assembled one %.3g > 1e-13",
            what, err);
  free(got);
  free(expected);
}

static void check_operator(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                           const double *box, double c) {
  tpmg_grid *grid = ref_grid_create_reaction(ctx, dim, k, L, cells, box, c);
  uint64_t seed = 200 + 17 * dim + k;
  for (int l = 0; l <= L; l++) {
    ref_mesh m;
    ref_mesh_init(&m, dim, k, cells, box, l);
    m.reaction = c;
    tpmg_index n_dofs = -1, n_1d[3] = {-1, -1, -1};
    REF_CALL(ctx, tpmg_grid_level_size(grid, l, &n_dofs, n_1d));
    REF_CHECK(n_dofs == m.n_dofs, "dim %d k %d level %d: expected %lld DoFs, got %lld", dim, k, l,
              (long long)m.n_dofs, (long long)n_dofs);
    for (int d = 0; d < 3; d++)
      REF_CHECK(n_1d[d] == m.n[d], "dim %d k %d level %d: n_1d[%d] expected %lld, got %lld", dim, k,
                l, d, (long long)m.n[d], (long long)n_1d[d]);
    if (n_dofs != m.n_dofs)
      continue;
    int64_t n = m.n_dofs;
    tpmg_operator *op = NULL;
    tpmg_status status = tpmg_operator_create(grid, l, TPMG_DOUBLE, &op);
    if (ref_refused(ctx, k, status, "tpmg_operator_create")) {
      tpmg_operator_destroy(&op);
      continue;
    }
    REF_CALL(ctx, status);
    ref_checked++;
    ref_csr A;
    ref_assemble_laplace(&m, &A);
    double *src = ref_malloc(sizeof(double) * n), *dst = ref_malloc(sizeof(double) * n);
    double *expected = ref_malloc(sizeof(double) * n);
    float *srcf = ref_malloc(sizeof(float) * n), *dstf = ref_malloc(sizeof(float) * n);
    ref_fill_random(&seed, n, src);

    ref_csr_apply(&A, src, expected);
    void *vsrc = ref_vector_create(ctx, TPMG_DOUBLE, n, src);
    void *vdst = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
    REF_CALL(ctx, tpmg_operator_apply(op, vsrc, vdst));
    REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vdst, dst);
    ref_vector_destroy(ctx, &vdst);
    ref_vector_destroy(ctx, &vsrc);
    double err = ref_relative_difference(n, dst, expected);
    REF_CHECK(err <= 1e-12,
              "double operator, dim %d k %d level %d c %g: max|A x - A_ref x|/max|A_ref x| expected "
              "<= 1e-12, got %.3g",
              dim, k, l, c, err);
    for (int64_t i = 0; i < n; i++)
      if (ref_mesh_is_boundary(&m, i))
        REF_CHECK(
            dst[i] == src[i],
            "double operator dim %d k %d level %d: Dirichlet row %lld: expected %.17g, got %.17g",
            dim, k, l, (long long)i, src[i], dst[i]);
    char what[96];
    snprintf(what, sizeof what, "dim %d k %d level %d c %g", dim, k, l, c);
    check_diagonal(ctx, op, &A, n, what);
    REF_CALL(ctx, tpmg_operator_destroy(&op));
    REF_CHECK(op == NULL, "tpmg_operator_destroy did not set the pointer to NULL");

    /* float: the reference applied to the rounded input */
    for (int64_t i = 0; i < n; i++) {
      srcf[i] = (float)src[i];
      src[i] = srcf[i];
    }
    ref_csr_apply(&A, src, expected);
    REF_CALL(ctx, tpmg_operator_create(grid, l, TPMG_FLOAT, &op));
    vsrc = ref_vector_create(ctx, TPMG_FLOAT, n, srcf);
    vdst = ref_vector_create(ctx, TPMG_FLOAT, n, NULL);
    REF_CALL(ctx, tpmg_operator_apply(op, vsrc, vdst));
    REF_DOWNLOAD(ctx, TPMG_FLOAT, n, vdst, dstf);
    ref_vector_destroy(ctx, &vdst);
    ref_vector_destroy(ctx, &vsrc);
    for (int64_t i = 0; i < n; i++)
      dst[i] = dstf[i];
    err = ref_relative_difference(n, dst, expected);
    REF_CHECK(
        err <= 1e-5,
        "float operator, dim %d k %d level %d c %g: relative difference expected <= 1e-5, got %.3g",
        dim, k, l, c, err);
    REF_CALL(ctx, tpmg_operator_destroy(&op));

    free(dstf);
    free(srcf);
    free(expected);
    free(dst);
    free(src);
    ref_csr_free(&A);
  }
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const int cells[3] = {2, 3, 1};
  const double box[6] = {0, 2, -1, 0.5, 0, 0.3};
  const int k2[] = {1, 2, 3, 5}, k3[] = {1, 2, 4};
  for (int t = 0; t < 4; t++)
    check_operator(ctx, 2, k2[t], 2, cells, box, 0.0);
  check_operator(ctx, 2, 8, 1, cells, box, 0.0);
  check_operator(ctx, 2, 10, 1, cells, box, 0.0);
  check_operator(ctx, 2, 3, 3, NULL, NULL, 0.0);
  for (int t = 0; t < 3; t++)
    check_operator(ctx, 3, k3[t], k3[t] == 1 ? 2 : 1, cells, box, 0.0);
  check_operator(ctx, 3, 2, 2, NULL, NULL, 0.0);
  /* the reaction term */
  const double c[2] = {57.3, 1e5};
  for (int r = 0; r < 2; r++) {
    for (int t = 0; t < 3; t++)
      check_operator(ctx, 2, k2[t], 2, cells, box, c[r]);
    check_operator(ctx, 2, 8, 1, cells, box, c[r]);
    check_operator(ctx, 3, 1, 2, cells, box, c[r]);
    check_operator(ctx, 3, 2, 1, cells, box, c[r]);
    check_operator(ctx, 3, 4, 1, NULL, NULL, c[r]);
  }
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t200-operator");
}
