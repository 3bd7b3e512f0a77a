/* The exact coarse solver's time per solve (tpmg_coarse_apply on level 0) and
 * set-up time (tpmg_coarse_create), for coarse meshes on both sides of
 * TPMG_MAX_COARSE_DOFS: the backend's dense inverse up to it, fast
 * diagonalization on the host above. Public API only; built by hand against a
 * build tree (doc/benchmarks.md, "The bottom solve", gives the command):
 *
 *   coarse-solve [backend [threads [repeat]]]   (default cpu, 1, 5)
 *
 * Per mesh and precision: the median of `repeat` timings, each of as many
 * solves as take at least 0.1 s, divided by their number. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tpmg.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void check(tpmg_context *ctx, tpmg_status status, const char *what) {
  if (status == TPMG_SUCCESS)
    return;
  fprintf(stderr, "%s: status %d: %s\n", what, (int)status, tpmg_context_last_error(ctx));
  exit(1);
}

int main(int argc, char **argv) {
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = argc > 1 ? argv[1] : "cpu";
  options.n_threads = argc > 2 ? atoi(argv[2]) : 1;
  const int repeat = argc > 3 ? atoi(argv[3]) : 5;
  tpmg_context *ctx = NULL;
  if (tpmg_context_create(&options, &ctx) != TPMG_SUCCESS) {
    fprintf(stderr, "no context on %s\n", options.backend);
    return 1;
  }
  static const struct {
    int dim, k, cells[3];
  } meshes[] = {{2, 1, {33, 33, 1}},  {2, 1, {46, 46, 1}},   {2, 1, {65, 65, 1}},
                {3, 1, {17, 17, 17}}, {2, 1, {66, 66, 1}},   {3, 1, {18, 18, 18}},
                {3, 4, {7, 5, 3}},    {2, 1, {129, 129, 1}}, {2, 3, {75, 25, 1}},
                {3, 2, {24, 24, 24}}, {2, 3, {300, 100, 1}}};
  printf("| mesh | interior DoFs | path | precision | set-up (s) | per solve (ms) | ns per "
         "interior DoF |\n|---|---|---|---|---|---|---|\n");
  for (size_t m = 0; m < sizeof meshes / sizeof meshes[0]; ++m) {
    tpmg_grid_options o = tpmg_grid_options_default();
    o.dim = meshes[m].dim;
    o.degree = meshes[m].k;
    o.fine_level = 1;
    long long n_interior = 1;
    for (int d = 0; d < 3; ++d) {
      o.cells[d] = meshes[m].cells[d];
      if (d < o.dim)
        n_interior *= (long long)o.cells[d] * o.degree - 1;
    }
    tpmg_grid *grid = NULL;
    check(ctx, tpmg_grid_create(ctx, &o, &grid), "tpmg_grid_create");
    tpmg_index n = 0;
    check(ctx, tpmg_grid_level_size(grid, 0, &n, NULL), "tpmg_grid_level_size");
    for (int p = 0; p < 2; ++p) {
      tpmg_precision precision = p == 0 ? TPMG_DOUBLE : TPMG_FLOAT;
      void *b = NULL, *x = NULL;
      check(ctx, tpmg_vector_create(ctx, precision, n, &b), "tpmg_vector_create");
      check(ctx, tpmg_vector_create(ctx, precision, n, &x), "tpmg_vector_create");
      check(ctx, tpmg_vector_set(ctx, precision, n, 1.0, b), "tpmg_vector_set");
      tpmg_coarse *coarse = NULL;
      double start = now();
      check(ctx, tpmg_coarse_create(grid, precision, &coarse), "tpmg_coarse_create");
      double setup = now() - start;
      check(ctx, tpmg_coarse_apply(coarse, b, x), "tpmg_coarse_apply"); /* warm-up */
      int count = 1;
      for (;;) {
        start = now();
        for (int i = 0; i < count; ++i)
          check(ctx, tpmg_coarse_apply(coarse, b, x), "apply");
        check(ctx, tpmg_context_synchronize(ctx), "tpmg_context_synchronize");
        if (now() - start >= 0.1)
          break;
        count *= 2;
      }
      double times[64];
      const int runs = repeat < 64 ? repeat : 64;
      for (int r = 0; r < runs; ++r) {
        start = now();
        for (int i = 0; i < count; ++i)
          check(ctx, tpmg_coarse_apply(coarse, b, x), "apply");
        check(ctx, tpmg_context_synchronize(ctx), "tpmg_context_synchronize");
        times[r] = (now() - start) / count;
      }
      qsort(times, (size_t)runs, sizeof(double), compare);
      double t = times[runs / 2];
      printf("| %dD Q%d %d x %d%s%.0d | %lld | %s | %s | %.3f | %.4g | %.3g |\n", o.dim, o.degree,
             o.cells[0], o.cells[1], o.dim == 3 ? " x " : "", o.dim == 3 ? o.cells[2] : 0,
             n_interior, n_interior <= TPMG_MAX_COARSE_DOFS ? "dense" : "host FD",
             p == 0 ? "double" : "float", setup, 1e3 * t, 1e9 * t / (double)n_interior);
      fflush(stdout);
      tpmg_coarse_destroy(&coarse);
      tpmg_vector_destroy(ctx, &x);
      tpmg_vector_destroy(ctx, &b);
    }
    tpmg_grid_destroy(&grid);
  }
  tpmg_context_destroy(&ctx);
  return 0;
}
