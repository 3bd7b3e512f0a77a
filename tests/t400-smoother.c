/* t400-smoother: one colourised multiplicative vertex-patch step
 * (tpmg_smoother_apply) against the same sweep done in reference.c with dense
 * patch matrices taken from the assembled level matrix and Cholesky solves.
 * GLOBAL, SEPARATE, FUSED and BOUNDARY each agree with the reference (and so
 * with each other) to 1e-12 in double, forward and reverse colour order;
 * Dirichlet entries of x (random, nonzero) are read as zero and left unchanged;
 * float agrees to 1e-4 (FUSED, GLOBAL, BOUNDARY). BOUNDARY also agrees with the
 * FUSED sweep to 1e-12 (double) and 1e-5 (float), and it never reads the old
 * interior of a patch: with x poisoned (NaN) on the interiors of the first
 * colour's patches, which that colour overwrites, a forward BOUNDARY sweep
 * still gives the FUSED sweep of the unpoisoned x. 2D k = 1,2,3,5 and 3D
 * k = 1,2,3 on an anisotropic box with several coarse cells, plus the unit
 * square/cube. On the backend named by argv[1] (default "cpu"); a backend
 * that refuses a degree by design ("cuda/thread": degree 1 only) must return
 * TPMG_ERROR_UNSUPPORTED, and those cases are skipped and counted. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

static const char *variant_name[4] = {"GLOBAL", "SEPARATE", "FUSED", "BOUNDARY"};

/* x = NaN on the interiors of the patches of colour 0 (vertices v_d odd). */
static void poison_colour_0(const ref_mesh *m, double *x) {
  int64_t idx[17 * 17 * 17], v[3] = {1, 1, 0};
  const int64_t last2 = m->dim == 3 ? m->cells[2] - 1 : 0;
  for (v[2] = m->dim == 3 ? 1 : 0; v[2] <= last2; v[2] += 2)
    for (v[1] = 1; v[1] <= m->cells[1] - 1; v[1] += 2)
      for (v[0] = 1; v[0] <= m->cells[0] - 1; v[0] += 2) {
        const int cnt = ref_patch_interior(m, v, idx);
        for (int i = 0; i < cnt; i++)
          x[idx[i]] = NAN;
      }
}

/* One forward step of variant v (FUSED or BOUNDARY) from x0 in precision p;
 * the result in x (double). */
static void sweep(tpmg_context *ctx, tpmg_grid *grid, int l, int v, tpmg_precision p, int64_t n,
                  const double *b, const double *x0, double *x) {
  tpmg_smoother_options options = tpmg_smoother_options_default();
  options.variant = (tpmg_smoother_variant)v;
  tpmg_smoother *s = NULL;
  REF_CALL(ctx, tpmg_smoother_create(grid, l, p, &options, &s));
  if (p == TPMG_DOUBLE) {
    void *vb = ref_vector_create(ctx, p, n, b), *vx = ref_vector_create(ctx, p, n, x0);
    REF_CALL(ctx, tpmg_smoother_apply(s, 0, vb, vx));
    REF_DOWNLOAD(ctx, p, n, vx, x);
    ref_vector_destroy(ctx, &vx);
    ref_vector_destroy(ctx, &vb);
  } else {
    float *bf = ref_malloc(sizeof(float) * n), *xf = ref_malloc(sizeof(float) * n);
    for (int64_t i = 0; i < n; i++) {
      bf[i] = (float)b[i];
      xf[i] = (float)x0[i];
    }
    void *vb = ref_vector_create(ctx, p, n, bf), *vx = ref_vector_create(ctx, p, n, xf);
    REF_CALL(ctx, tpmg_smoother_apply(s, 0, vb, vx));
    REF_DOWNLOAD(ctx, p, n, vx, xf);
    ref_vector_destroy(ctx, &vx);
    ref_vector_destroy(ctx, &vb);
    for (int64_t i = 0; i < n; i++)
      x[i] = xf[i];
    free(xf);
    free(bf);
  }
  REF_CALL(ctx, tpmg_smoother_destroy(&s));
}

/* BOUNDARY against FUSED, from x0 and from x0 poisoned on colour 0's interiors. */
static void check_boundary(tpmg_context *ctx, tpmg_grid *grid, const ref_mesh *m, tpmg_precision p,
                           const double *b, const double *x0) {
  const int64_t n = m->n_dofs;
  const double tolerance = p == TPMG_DOUBLE ? 1e-12 : 1e-5;
  const char *name = p == TPMG_DOUBLE ? "double" : "float";
  double *fused = ref_malloc(sizeof(double) * n), *x = ref_malloc(sizeof(double) * n);
  double *poisoned = ref_malloc(sizeof(double) * n);
  sweep(ctx, grid, m->level, TPMG_SMOOTHER_FUSED, p, n, b, x0, fused);
  sweep(ctx, grid, m->level, TPMG_SMOOTHER_BOUNDARY, p, n, b, x0, x);
  double err = ref_relative_difference(n, x, fused);
  REF_CHECK(err <= tolerance,
            "%s smoother BOUNDARY dim %d k %d level %d: relative difference to FUSED expected <= "
            "%g, got %.3g",
            name, m->dim, m->degree, m->level, tolerance, err);
  memcpy(poisoned, x0, sizeof(double) * n);
  poison_colour_0(m, poisoned);
  sweep(ctx, grid, m->level, TPMG_SMOOTHER_BOUNDARY, p, n, b, poisoned, x);
  err = ref_relative_difference(n, x, fused);
  REF_CHECK(err <= tolerance,
            "%s smoother BOUNDARY dim %d k %d level %d, x NaN on colour 0's patch interiors: "
            "relative difference to FUSED on the unpoisoned x expected <= %g, got %.3g (NaN: an "
            "old interior value was read)",
            name, m->dim, m->degree, m->level, tolerance, err);
  free(poisoned);
  free(x);
  free(fused);
}

static void check_smoother(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                           const double *box, int with_float, double c) {
  tpmg_grid *grid = ref_grid_create_reaction(ctx, dim, k, L, cells, box, c);
  /* a backend that refuses the degree by design: checked, then skipped */
  tpmg_smoother *probe = NULL;
  tpmg_status status = tpmg_smoother_create(grid, 1, TPMG_DOUBLE, NULL, &probe);
  if (ref_refused(ctx, k, status, "tpmg_smoother_create")) {
    tpmg_smoother_destroy(&probe);
    REF_CALL(ctx, tpmg_grid_destroy(&grid));
    return;
  }
  REF_CALL(ctx, status);
  REF_CALL(ctx, tpmg_smoother_destroy(&probe));
  ref_checked++;
  uint64_t seed = 400 + 19 * dim + k;
  for (int l = 1; l <= L; l++) {
    ref_mesh m;
    ref_mesh_init(&m, dim, k, cells, box, l);
    m.reaction = c;
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
      for (int v = 0; v < 4; v++) {
        tpmg_smoother_options options = tpmg_smoother_options_default();
        options.variant = (tpmg_smoother_variant)v;
        tpmg_smoother *s = NULL;
        REF_CALL(ctx, tpmg_smoother_create(grid, l, TPMG_DOUBLE, &options, &s));
        void *vb = ref_vector_create(ctx, TPMG_DOUBLE, n, b);
        void *vx = ref_vector_create(ctx, TPMG_DOUBLE, n, x0);
        REF_CALL(ctx, tpmg_smoother_apply(s, reverse, vb, vx));
        REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vx, x);
        ref_vector_destroy(ctx, &vx);
        ref_vector_destroy(ctx, &vb);
        double err = ref_relative_difference(n, x, expected);
        REF_CHECK(err <= 1e-12,
                  "smoother %s%s dim %d k %d level %d c %g: relative difference to the dense "
                  "reference sweep expected <= 1e-12, got %.3g",
                  variant_name[v], reverse ? " reverse" : "", dim, k, l, c, err);
        for (int64_t i = 0; i < n; i++)
          if (ref_mesh_is_boundary(&m, i) && x[i] != x0[i]) {
            REF_CHECK(0,
                      "smoother %s dim %d k %d level %d: Dirichlet entry %lld changed: expected "
                      "%.17g, got %.17g",
                      variant_name[v], dim, k, l, (long long)i, x0[i], x[i]);
            break;
          }
        REF_CALL(ctx, tpmg_smoother_destroy(&s));
        REF_CHECK(s == NULL, "tpmg_smoother_destroy did not set the pointer to NULL");
      }
    }
    check_boundary(ctx, grid, &m, TPMG_DOUBLE, b, x0);
    if (with_float) {
      /* float, FUSED, GLOBAL and BOUNDARY, against the reference on the rounded inputs */
      for (int64_t i = 0; i < n; i++) {
        bf[i] = (float)b[i];
        b[i] = bf[i];
        x0[i] = (float)x0[i];
      }
      memcpy(expected, x0, sizeof(double) * n);
      ref_smoother_step(&m, &A, 0, b, expected);
      for (int v = 0; v < 4; v++) {
        if (v == TPMG_SMOOTHER_SEPARATE)
          continue;
        tpmg_smoother_options options = tpmg_smoother_options_default();
        options.variant = (tpmg_smoother_variant)v;
        tpmg_smoother *s = NULL;
        REF_CALL(ctx, tpmg_smoother_create(grid, l, TPMG_FLOAT, &options, &s));
        for (int64_t i = 0; i < n; i++)
          xf[i] = (float)x0[i];
        void *vb = ref_vector_create(ctx, TPMG_FLOAT, n, bf);
        void *vx = ref_vector_create(ctx, TPMG_FLOAT, n, xf);
        REF_CALL(ctx, tpmg_smoother_apply(s, 0, vb, vx));
        REF_DOWNLOAD(ctx, TPMG_FLOAT, n, vx, xf);
        ref_vector_destroy(ctx, &vx);
        ref_vector_destroy(ctx, &vb);
        for (int64_t i = 0; i < n; i++)
          x[i] = xf[i];
        double err = ref_relative_difference(n, x, expected);
        REF_CHECK(err <= 1e-4,
                  "float smoother %s dim %d k %d level %d c %g: relative difference expected <= "
                  "1e-4, got %.3g",
                  variant_name[v], dim, k, l, c, err);
        REF_CALL(ctx, tpmg_smoother_destroy(&s));
      }
      check_boundary(ctx, grid, &m, TPMG_FLOAT, b, x0);
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

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const int cells[3] = {2, 3, 1};
  const double box[6] = {0, 2, -1, 0.5, 0, 0.3};
  const int k2[] = {1, 2, 3, 5};
  for (int t = 0; t < 4; t++)
    check_smoother(ctx, 2, k2[t], 2, cells, box, 1, 0.0);
  check_smoother(ctx, 2, 2, 3, NULL, NULL, 0, 0.0);
  check_smoother(ctx, 3, 1, 2, cells, box, 1, 0.0);
  check_smoother(ctx, 3, 2, 2, cells, box, 1, 0.0);
  check_smoother(ctx, 3, 3, 1, cells, box, 1, 0.0);
  check_smoother(ctx, 3, 2, 2, NULL, NULL, 0, 0.0);
  /* a reaction: the patch solves stay exact (c added to the eigenvalue sums) */
  const double c[2] = {57.3, 1e5};
  for (int r = 0; r < 2; r++) {
    check_smoother(ctx, 2, 1, 2, cells, box, 1, c[r]);
    check_smoother(ctx, 2, 3, 2, cells, box, 1, c[r]);
    check_smoother(ctx, 3, 1, 2, cells, box, 1, c[r]);
    check_smoother(ctx, 3, 2, 2, cells, box, 1, c[r]);
    check_smoother(ctx, 3, 3, 1, NULL, NULL, 1, c[r]);
  }
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t400-smoother");
}
