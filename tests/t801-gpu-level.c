/* GPU test: the CUDA backend's level operations (laplace, copy_boundary,
 * prolongate_add, restrict_, coarse_solve), called through the backend tables
 * of a CUDA and a CPU context on grids made with the same options, on random
 * inputs, for dim 2 and 3, every degree of the table and both precisions. CUDA
 * outputs are poisoned with NaN first; entries an operation must not write stay
 * NaN on both sides. Skipped (exit 77) without a GPU.
 * Usage: t801-gpu-level [dim [degree]] limits the cases. */
#include <math.h>
#include <stdlib.h>

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

static void check_level(const pair *pr, int l, uint64_t *seed) {
  const tpmg_level *lvl[2] = {&pr->grid[0]->levels[l], &pr->grid[1]->levels[l]};
  const int64_t n = lvl[0]->n_dofs;
  const int dim = lvl[0]->dim, k = lvl[0]->degree;
  double *src = host_data(seed, n, 0), *nan = host_data(seed, n, 1);
  void *s[2], *d[2];
  vectors(pr, n, src, s);

  /* laplace: every entry written */
  vectors(pr, n, nan, d);
  for (int b = 0; b < 2; b++)
    REF_CALL(pr->ctx[b], pr->ctx[b]->ops->laplace(pr->ctx[b], lvl[b], pr->p, s[b], d[b]));
  compare(pr, n, d, "laplace", dim, k, l);
  destroy(pr, d);

  /* copy_boundary: the interior stays NaN */
  vectors(pr, n, nan, d);
  for (int b = 0; b < 2; b++)
    REF_CALL(pr->ctx[b], pr->ctx[b]->ops->copy_boundary(pr->ctx[b], lvl[b], pr->p, s[b], d[b]));
  compare(pr, n, d, "copy_boundary", dim, k, l);
  destroy(pr, d);

  if (l == 0) {
    /* coarse_solve with a random dense "inverse" */
    int64_t n_interior = 1;
    for (int dd = 0; dd < dim; dd++)
      n_interior *= lvl[0]->n[dd] - 2;
    if (n_interior > 0) {
      double *inv = host_data(seed, n_interior * n_interior, 0);
      void *m[2];
      vectors(pr, n_interior * n_interior, inv, m);
      vectors(pr, n, nan, d);
      for (int b = 0; b < 2; b++)
        REF_CALL(pr->ctx[b],
                 pr->ctx[b]->ops->coarse_solve(pr->ctx[b], lvl[b], pr->p, m[b], s[b], d[b]));
      compare(pr, n, d, "coarse_solve", dim, k, l);
      destroy(pr, d);
      destroy(pr, m);
      free(inv);
    }
  } else {
    const tpmg_level *coarse[2] = {&pr->grid[0]->levels[l - 1], &pr->grid[1]->levels[l - 1]};
    const int64_t nc = coarse[0]->n_dofs;
    double *hc = host_data(seed, nc, 0), *nanc = host_data(seed, nc, 1);
    void *c[2];
    /* prolongate_add: fine += P coarse, fine starts random */
    vectors(pr, nc, hc, c);
    double *hf = host_data(seed, n, 0);
    vectors(pr, n, hf, d);
    for (int b = 0; b < 2; b++)
      REF_CALL(pr->ctx[b],
               pr->ctx[b]->ops->prolongate_add(pr->ctx[b], coarse[b], lvl[b], pr->p, c[b], d[b]));
    compare(pr, n, d, "prolongate_add", dim, k, l);
    destroy(pr, d);
    destroy(pr, c);
    /* restrict_: every coarse entry written */
    vectors(pr, nc, nanc, c);
    for (int b = 0; b < 2; b++)
      REF_CALL(pr->ctx[b],
               pr->ctx[b]->ops->restrict_(pr->ctx[b], coarse[b], lvl[b], pr->p, s[b], c[b]));
    compare(pr, nc, c, "restrict_", dim, k, l);
    destroy(pr, c);
    free(hc);
    free(nanc);
    free(hf);
  }
  destroy(pr, s);
  free(src);
  free(nan);
}

int main(int argc, char **argv) {
  int available = 0;
  if (tpmg_backend_available(TPMG_BACKEND_CUDA, &available) != TPMG_SUCCESS || !available) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  const int only_dim = argc > 1 ? atoi(argv[1]) : 0, only_degree = argc > 2 ? atoi(argv[2]) : 0;
  tpmg_context_options options = tpmg_context_options_default();
  pair pr;
  pr.ctx[0] = ref_context_create(0);
  options.backend = TPMG_BACKEND_CUDA;
  REF_CALL(NULL, tpmg_context_create(&options, &pr.ctx[1]));
  uint64_t seed = 801;
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
      const int levels = dim == 2 ? 3 : (k <= 3 ? 3 : 2);
      for (int s = 0; s < 2; s++)
        pr.grid[s] = ref_grid_create(pr.ctx[s], dim, k, levels, cells, box);
      for (int p = 0; p < 2; p++) {
        pr.p = (tpmg_precision)p;
        for (int l = 0; l <= levels; l++)
          check_level(&pr, l, &seed);
      }
      for (int s = 0; s < 2; s++)
        tpmg_grid_destroy(&pr.grid[s]);
    }
  }
  /* a degree outside the table is refused, not approximated */
  {
    tpmg_level lvl = {0};
    lvl.dim = 3;
    lvl.degree = TPMG_MAX_DEGREE_3D + 1;
    for (int d = 0; d < 3; d++)
      lvl.cells[d] = 2, lvl.n[d] = 2 * lvl.degree + 1;
    lvl.n_dofs = lvl.n[0] * lvl.n[1] * lvl.n[2];
    tpmg_status status =
        pr.ctx[1]->ops->laplace(pr.ctx[1], &lvl, TPMG_DOUBLE, (const void *)16, (void *)16);
    REF_CHECK(status == TPMG_ERROR_UNSUPPORTED, "laplace with Q%d in 3D returned %d, expected %d",
              lvl.degree, (int)status, (int)TPMG_ERROR_UNSUPPORTED);
  }
  tpmg_context_destroy(&pr.ctx[1]);
  tpmg_context_destroy(&pr.ctx[0]);
  return ref_exit_code("t801-gpu-level");
}
