/* GPU test: the CUDA backend's vertex-patch smoother against the CPU backend:
 * the operations patch_residual, patch_solve and patch_fused for every colour
 * through the backend tables, and tpmg_smoother_apply of each variant (forward
 * and reverse colour order) through the public API, on random inputs, for dim 2
 * and 3, every degree of the table and both precisions. CUDA outputs are
 * poisoned with NaN first; entries an operation must not write stay NaN on
 * both sides. Skipped (exit 77) without a GPU.
 * Usage: t802-gpu-smoother [dim [global|separate|fused [degree [level]]]] limits
 * the cases (the sanitizer runs of tests/gpu/run-all.sh use this). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "tpmg-impl.h"

typedef struct {
  tpmg_context *ctx[2]; /* 0: CPU, 1: CUDA */
  tpmg_grid *grid[2];
  tpmg_precision p;
} pair;

static double tolerance(tpmg_precision p) {
  return p == TPMG_DOUBLE ? 1e-12 : 1e-5;
}

static void *vector_from(tpmg_context *ctx, tpmg_precision p, int64_t n, const double *h) {
  void *v = NULL;
  REF_CALL(ctx, tpmg_vector_create(ctx, p, n, &v));
  if (p == TPMG_DOUBLE) {
    REF_CALL(ctx, tpmg_vector_upload(ctx, p, n, h, v));
  } else {
    float *f = ref_malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++)
      f[i] = (float)h[i];
    REF_CALL(ctx, tpmg_vector_upload(ctx, p, n, f, v));
    free(f);
  }
  return v;
}

static void vector_to(tpmg_context *ctx, tpmg_precision p, int64_t n, const void *v, double *h) {
  if (p == TPMG_DOUBLE) {
    REF_CALL(ctx, tpmg_vector_download(ctx, p, n, v, h));
  } else {
    float *f = ref_malloc((size_t)n * sizeof(float));
    REF_CALL(ctx, tpmg_vector_download(ctx, p, n, v, f));
    for (int64_t i = 0; i < n; i++)
      h[i] = f[i];
    free(f);
  }
}

/* Random host data, or NaN when poison is set. */
static double *host_data(uint64_t *seed, int64_t n, int poison) {
  double *h = ref_malloc((size_t)n * sizeof(double));
  if (poison)
    ref_fill_nan(n, h);
  else
    ref_fill_random(seed, n, h);
  return h;
}

/* Download v[0] (CPU) and v[1] (CUDA) and compare: NaN at the same places,
 * elsewhere max |cuda - cpu| / max |cpu| within the precision's tolerance. */
static void compare(const pair *pr, int64_t n, void *v[2], const char *what, int dim, int k,
                    int level) {
  double *h[2];
  for (int s = 0; s < 2; s++) {
    h[s] = ref_malloc((size_t)n * sizeof(double));
    vector_to(pr->ctx[s], pr->p, n, v[s], h[s]);
  }
  double diff = 0, scale = 0;
  int64_t nan_mismatch = 0, first = -1;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(h[0][i]) != isnan(h[1][i])) {
      if (first < 0)
        first = i;
      nan_mismatch++;
      continue;
    }
    if (isnan(h[0][i]))
      continue;
    diff = fmax(diff, fabs(h[1][i] - h[0][i]));
    scale = fmax(scale, fabs(h[0][i]));
  }
  double rel = diff / (scale > 1e-300 ? scale : 1e-300);
  const char *prec = pr->p == TPMG_DOUBLE ? "double" : "float";
  REF_CHECK(nan_mismatch == 0,
            "%s %dD Q%d level %d %s: %lld entries written on one backend only (first %lld: cpu "
            "%g, cuda %g)",
            what, dim, k, level, prec, (long long)nan_mismatch, (long long)first,
            first >= 0 ? h[0][first] : 0.0, first >= 0 ? h[1][first] : 0.0);
  REF_CHECK(rel <= tolerance(pr->p), "%s %dD Q%d level %d %s: relative difference %.3e > %.0e",
            what, dim, k, level, prec, rel, tolerance(pr->p));
  free(h[0]);
  free(h[1]);
}

/* The same host data in a vector of each context. */
static void vectors(const pair *pr, int64_t n, const double *h, void *v[2]) {
  for (int s = 0; s < 2; s++)
    v[s] = vector_from(pr->ctx[s], pr->p, n, h);
}

static void destroy(const pair *pr, void *v[2]) {
  for (int s = 0; s < 2; s++)
    tpmg_vector_destroy(pr->ctx[s], &v[s]);
}

static const char *variant_names[3] = {"global", "separate", "fused"};

static void check_smoother(const pair *pr, int l, int variant, uint64_t *seed) {
  const tpmg_level *lvl[2] = {&pr->grid[0]->levels[l], &pr->grid[1]->levels[l]};
  const int64_t n = lvl[0]->n_dofs;
  const int dim = lvl[0]->dim, k = lvl[0]->degree;
  double *hb = host_data(seed, n, 0), *hx = host_data(seed, n, 0), *nan = host_data(seed, n, 1);
  void *b[2], *x[2], *r[2];
  vectors(pr, n, hb, b);
  char what[64];
  for (int colour = 0; colour < (1 << dim); colour++) {
    /* the backend operations the variant uses */
    if (variant == TPMG_SMOOTHER_SEPARATE) {
      vectors(pr, n, hx, x);
      vectors(pr, n, nan, r);
      for (int s = 0; s < 2; s++)
        REF_CALL(pr->ctx[s], pr->ctx[s]->ops->patch_residual(pr->ctx[s], lvl[s], pr->p, colour,
                                                             b[s], x[s], r[s]));
      snprintf(what, sizeof(what), "patch_residual colour %d", colour);
      compare(pr, n, r, what, dim, k, l);
      destroy(pr, r);
      destroy(pr, x);
    }
    if (variant != TPMG_SMOOTHER_FUSED) {
      vectors(pr, n, hx, x);
      vectors(pr, n, hb, r);
      for (int s = 0; s < 2; s++)
        REF_CALL(pr->ctx[s],
                 pr->ctx[s]->ops->patch_solve(pr->ctx[s], lvl[s], pr->p, colour, r[s], x[s]));
      snprintf(what, sizeof(what), "patch_solve colour %d", colour);
      compare(pr, n, x, what, dim, k, l);
      destroy(pr, r);
      destroy(pr, x);
    } else {
      vectors(pr, n, hx, x);
      for (int s = 0; s < 2; s++)
        REF_CALL(pr->ctx[s],
                 pr->ctx[s]->ops->patch_fused(pr->ctx[s], lvl[s], pr->p, colour, b[s], x[s]));
      snprintf(what, sizeof(what), "patch_fused colour %d", colour);
      compare(pr, n, x, what, dim, k, l);
      destroy(pr, x);
    }
  }
  /* whole smoothing steps through the public API, forward then reverse */
  tpmg_smoother_options options = tpmg_smoother_options_default();
  options.variant = (tpmg_smoother_variant)variant;
  tpmg_smoother *smoother[2];
  for (int s = 0; s < 2; s++)
    REF_CALL(pr->ctx[s], tpmg_smoother_create(pr->grid[s], l, pr->p, &options, &smoother[s]));
  vectors(pr, n, hx, x);
  for (int reverse = 0; reverse < 2; reverse++) {
    for (int s = 0; s < 2; s++)
      REF_CALL(pr->ctx[s], tpmg_smoother_apply(smoother[s], reverse, b[s], x[s]));
    snprintf(what, sizeof(what), "tpmg_smoother_apply %s%s", variant_names[variant],
             reverse ? " reverse" : "");
    compare(pr, n, x, what, dim, k, l);
  }
  destroy(pr, x);
  for (int s = 0; s < 2; s++)
    tpmg_smoother_destroy(&smoother[s]);
  destroy(pr, b);
  free(hb);
  free(hx);
  free(nan);
}

int main(int argc, char **argv) {
  int available = 0;
  if (tpmg_backend_available(TPMG_BACKEND_CUDA, &available) != TPMG_SUCCESS || !available) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  const int only_dim = argc > 1 ? atoi(argv[1]) : 0;
  int only_variant = -1;
  for (int v = 0; v < 3 && argc > 2; v++)
    if (strcmp(argv[2], variant_names[v]) == 0)
      only_variant = v;
  if (argc > 2 && only_variant < 0) {
    fprintf(stderr, "unknown variant %s (global, separate, fused)\n", argv[2]);
    return 2;
  }
  const int only_degree = argc > 3 ? atoi(argv[3]) : 0;
  const int only_level = argc > 4 ? atoi(argv[4]) : 0;
  tpmg_context_options options = tpmg_context_options_default();
  pair pr;
  pr.ctx[0] = ref_context_create(0);
  options.backend = TPMG_BACKEND_CUDA;
  REF_CALL(NULL, tpmg_context_create(&options, &pr.ctx[1]));
  uint64_t seed = 802;
  /* unequal cells and cell sizes per direction; one coarse cell in x */
  const int cells[3] = {1, 2, 1};
  const double box[6] = {0.0, 1.0, -0.5, 1.0, 0.25, 1.0};
  for (int dim = 2; dim <= 3; dim++) {
    if (only_dim && dim != only_dim)
      continue;
    const int max_degree = dim == 2 ? TPMG_MAX_DEGREE_2D : TPMG_MAX_DEGREE_3D;
    for (int k = 1; k <= max_degree; k++) {
      if (only_degree && k != only_degree)
        continue;
      const int levels = only_level ? only_level : dim == 2 ? 3 : (k <= 3 ? 3 : 2);
      for (int s = 0; s < 2; s++)
        pr.grid[s] = ref_grid_create(pr.ctx[s], dim, k, levels, cells, box);
      for (int p = 0; p < 2; p++) {
        pr.p = (tpmg_precision)p;
        for (int v = 0; v < 3; v++)
          if (only_variant < 0 || v == only_variant)
            for (int l = 1; l <= levels; l++)
              check_smoother(&pr, l, v, &seed);
      }
      for (int s = 0; s < 2; s++)
        tpmg_grid_destroy(&pr.grid[s]);
    }
  }
  tpmg_context_destroy(&pr.ctx[1]);
  tpmg_context_destroy(&pr.ctx[0]);
  return ref_exit_code("t802-gpu-smoother");
}
