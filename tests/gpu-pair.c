/* Test support for the GPU tests: see gpu-pair.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-pair.h"

const char *const gpu_variant_names[GPU_VARIANTS] = {"cuda",       "cuda/basic",  "cuda/constant",
                                                     "cuda/tiled", "cuda/thread", "cuda/brick"};

int gpu_variant_has_degree(int v, int k) {
  return strcmp(gpu_variant_names[v], "cuda/thread") != 0 || k == 1;
}

void gpu_variant_contexts(tpmg_context *ctx[GPU_VARIANTS]) {
  for (int v = 0; v < GPU_VARIANTS; v++) {
    tpmg_context_options options = tpmg_context_options_default();
    options.backend = gpu_variant_names[v];
    REF_CALL(NULL, tpmg_context_create(&options, &ctx[v]));
  }
}

int gpu_test_backends(const char *names[GPU_VARIANTS]) {
  const char *only = getenv("TPMG_TEST_GPU_BACKEND");
  int n = 0;
  if (only && only[0])
    names[n++] = only;
  else
    for (int v = 0; v < GPU_VARIANTS; v++)
      names[n++] = gpu_variant_names[v];
  int available = 0;
  if (tpmg_backend_available(names[0], &available) != TPMG_SUCCESS || !available)
    return 0;
  return n;
}

int gpu_backend_refuses(const char *name, int k) {
  return strcmp(name, "cuda/thread") == 0 && k != 1;
}

gpu_pair gpu_pair_with(const gpu_pair *pr, tpmg_context *ctx, tpmg_grid *grid) {
  gpu_pair out = *pr;
  out.ctx[1] = ctx;
  out.grid[1] = grid;
  return out;
}

double gpu_tolerance(tpmg_precision p) {
  return p == TPMG_DOUBLE ? 1e-12 : 1e-5;
}

void *gpu_vector_from(tpmg_context *ctx, tpmg_precision p, int64_t n, const double *h) {
  void *v = NULL;
  REF_CALL(ctx, tpmg_vector_create(ctx, p, n, &v));
  if (p == TPMG_DOUBLE) {
    REF_CALL(ctx, tpmg_vector_upload(ctx, p, n, h, v));
  } else {
    float *f = ref_malloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
      f[i] = (float)h[i];
    REF_CALL(ctx, tpmg_vector_upload(ctx, p, n, f, v));
    free(f);
  }
  return v;
}

void gpu_vector_to(tpmg_context *ctx, tpmg_precision p, int64_t n, const void *v, double *h) {
  if (p == TPMG_DOUBLE) {
    REF_CALL(ctx, tpmg_vector_download(ctx, p, n, v, h));
  } else {
    float *f = ref_malloc((size_t)(n ? n : 1) * sizeof(float));
    REF_CALL(ctx, tpmg_vector_download(ctx, p, n, v, f));
    for (int64_t i = 0; i < n; i++)
      h[i] = f[i];
    free(f);
  }
}

/* Random host data, or NaN when poison is set. */
double *gpu_host_data(uint64_t *seed, int64_t n, int poison) {
  double *h = ref_malloc((size_t)n * sizeof(double));
  if (poison)
    ref_fill_nan(n, h);
  else
    ref_fill_random(seed, n, h);
  return h;
}

/* Download v[0] (CPU) and v[1] (CUDA) and compare: NaN at the same places,
 * elsewhere max |cuda - cpu| / max |cpu| within the precision's tolerance. */
void gpu_compare(const gpu_pair *pr, int64_t n, void *v[2], const char *what, int dim, int k,
                 int level) {
  const double slack = pr->p == TPMG_FLOAT && pr->float_slack > 0 ? pr->float_slack : 1.0;
  const double tolerance = slack * gpu_tolerance(pr->p);
  double *h[2];
  for (int s = 0; s < 2; s++) {
    h[s] = ref_malloc((size_t)n * sizeof(double));
    gpu_vector_to(pr->ctx[s], pr->p, n, v[s], h[s]);
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
  REF_CHECK(rel <= tolerance, "%s %dD Q%d level %d %s: relative difference %.3e > %.0e", what, dim,
            k, level, prec, rel, tolerance);
  if (getenv("TPMG_TEST_VERBOSE"))
    printf("%s %dD Q%d level %d %s: relative difference %.3e\n", what, dim, k, level, prec, rel);
  free(h[0]);
  free(h[1]);
}

double *gpu_coefficient_values(tpmg_context *ctx, const tpmg_grid *grid,
                               tpmg_coefficient_layout layout, uint64_t *seed) {
  tpmg_grid_options go = tpmg_grid_options_default();
  REF_CALL(ctx, tpmg_grid_get_options(grid, &go));
  tpmg_index n_1d[3] = {1, 1, 1};
  REF_CALL(ctx, tpmg_grid_level_size(grid, go.fine_level, NULL, n_1d));
  int64_t count = 1;
  for (int d = 0; d < go.dim; d++)
    count *=
        (n_1d[d] - 1) / go.degree * (layout == TPMG_COEFFICIENT_QUADRATURE ? go.degree + 1 : 1);
  double *a = ref_malloc((size_t)count * sizeof(double));
  for (int64_t i = 0; i < count; i++) {
    const double u = (fabs(ref_random(seed)) - 0.1) / 0.9; /* [0, 1) */
    a[i] = 0.1 * pow(100.0, u);
  }
  return a;
}

/* The same host data in a vector of each context. */
void gpu_vectors(const gpu_pair *pr, int64_t n, const double *h, void *v[2]) {
  for (int s = 0; s < 2; s++)
    v[s] = gpu_vector_from(pr->ctx[s], pr->p, n, h);
}

void gpu_destroy(const gpu_pair *pr, void *v[2]) {
  for (int s = 0; s < 2; s++)
    tpmg_vector_destroy(pr->ctx[s], &v[s]);
}

void gpu_compare_written(const gpu_pair *pr, int64_t n, void *v[2], const char *what, int dim,
                         int k, int level) {
  gpu_compare(pr, n, v, what, dim, k, level);
  double *h = ref_malloc((size_t)(n ? n : 1) * sizeof(double));
  for (int s = 0; s < 2; s++) {
    gpu_vector_to(pr->ctx[s], pr->p, n, v[s], h);
    int64_t nans = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
      if (isnan(h[i])) {
        if (first < 0)
          first = i;
        nans++;
      }
    REF_CHECK(nans == 0,
              "%s %dD Q%d level %d %s: %lld of %lld entries not written on %s (first %lld)", what,
              dim, k, level, pr->p == TPMG_DOUBLE ? "double" : "float", (long long)nans,
              (long long)n, s == 0 ? "cpu" : "the backend", (long long)first);
  }
  free(h);
}
