/* t400-smoother: one colourised multiplicative vertex-patch step
 * (tpmg_smoother_apply) against the same sweep done in reference.c with dense
 * patch matrices taken from the assembled level matrix and Cholesky solves.
 * GLOBAL, SEPARATE and FUSED each agree with the reference (and so with each
 * other) to 1e-12 in double, forward and reverse colour order; Dirichlet
 * entries of x (random, nonzero) are read as zero and left unchanged; float
 * agrees to 1e-4. 2D k = 1,2,3,5 and 3D k = 1,2,3 on an anisotropic box with
 * several coarse cells, plus the unit square/cube. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

static const char *variant_name[3] = {"GLOBAL", "SEPARATE", "FUSED"};

static void check_smoother(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                           const double *box, int with_float) {
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, cells, box);
  uint64_t seed = 400 + 19 * dim + k;
  for (int l = 1; l <= L; l++) {
    ref_mesh m;
    ref_mesh_init(&m, dim, k, cells, box, l);
    int64_t n = m.n_dofs;
    ref_csr A;
    ref_assemble_laplace(&m, &A);
    double *b = ref_malloc(sizeof(double) * n), *x0 = ref_malloc(sizeof(double) * n);
    double *x = ref_malloc(sizeof(double) * n), *expected = ref_malloc(sizeof(double) * n);
    float *bf = ref_malloc(sizeof(float) * n), *xf = ref_malloc(sizeof(float) * n);
    ref_fill_random(&seed, n, b);
    ref_fill_random(&seed, n, x0);
    for (int reverse = 0; reverse <= 1; reverse++) {
      memcpy(expected, x0, sizeof(double) * n);
      ref_smoother_step(&m, &A, reverse, b, expected);
      for (int v = 0; v < 3; v++) {
        tpmg_smoother_options options = tpmg_smoother_options_default();
        options.variant = (tpmg_smoother_variant)v;
        tpmg_smoother *s = NULL;
        REF_CALL(ctx, tpmg_smoother_create(grid, l, TPMG_DOUBLE, &options, &s));
        memcpy(x, x0, sizeof(double) * n);
        REF_CALL(ctx, tpmg_smoother_apply(s, reverse, b, x));
        double err = ref_relative_difference(n, x, expected);
        REF_CHECK(err <= 1e-12,
                  "smoother %s%s dim %d k %d level %d: relative difference to the dense reference sweep expected <= 1e-12, got %.3g",
                  variant_name[v], reverse ? " reverse" : "", dim, k, l, err);
        for (int64_t i = 0; i < n; i++)
          if (ref_mesh_is_boundary(&m, i) && x[i] != x0[i]) {
            REF_CHECK(0, "smoother %s dim %d k %d level %d: Dirichlet entry %lld changed: expected %.17g, got %.17g",
                      variant_name[v], dim, k, l, (long long)i, x0[i], x[i]);
            break;
          }
        REF_CALL(ctx, tpmg_smoother_destroy(&s));
        REF_CHECK(s == NULL, "tpmg_smoother_destroy did not set the pointer to NULL");
      }
    }
    if (with_float) {
      /* float, FUSED and GLOBAL, against the reference on the rounded inputs */
      for (int64_t i = 0; i < n; i++) {
        bf[i] = (float)b[i];
        b[i] = bf[i];
        x0[i] = (float)x0[i];
      }
      memcpy(expected, x0, sizeof(double) * n);
      ref_smoother_step(&m, &A, 0, b, expected);
      for (int v = 0; v < 3; v += 2) {
        tpmg_smoother_options options = tpmg_smoother_options_default();
        options.variant = (tpmg_smoother_variant)v;
        tpmg_smoother *s = NULL;
        REF_CALL(ctx, tpmg_smoother_create(grid, l, TPMG_FLOAT, &options, &s));
        for (int64_t i = 0; i < n; i++) xf[i] = (float)x0[i];
        REF_CALL(ctx, tpmg_smoother_apply(s, 0, bf, xf));
        for (int64_t i = 0; i < n; i++) x[i] = xf[i];
        double err = ref_relative_difference(n, x, expected);
        REF_CHECK(err <= 1e-4, "float smoother %s dim %d k %d level %d: relative difference expected <= 1e-4, got %.3g",
                  variant_name[v], dim, k, l, err);
        REF_CALL(ctx, tpmg_smoother_destroy(&s));
      }
    }
    free(xf);
    free(bf);
    free(expected);
    free(x);
    free(x0);
    free(b);
    ref_csr_free(&A);
  }
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(void) {
  tpmg_context *ctx = ref_context_create(0);
  const int cells[3] = {2, 3, 1};
  const double box[6] = {0, 2, -1, 0.5, 0, 0.3};
  const int k2[] = {1, 2, 3, 5};
  for (int t = 0; t < 4; t++) check_smoother(ctx, 2, k2[t], 2, cells, box, 1);
  check_smoother(ctx, 2, 2, 3, NULL, NULL, 0);
  check_smoother(ctx, 3, 1, 2, cells, box, 1);
  check_smoother(ctx, 3, 2, 2, cells, box, 1);
  check_smoother(ctx, 3, 3, 1, cells, box, 1);
  check_smoother(ctx, 3, 2, 2, NULL, NULL, 0);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t400-smoother");
}
