/* t604-solver-multi: the fused vector operations of GMRES' Gram-Schmidt.
 * 1. The CPU backend's dots and axpys (tpmg_backend_ops) against sums in long
 *    double on random data, both precisions, 1, 5 and TPMG_MULTI_MAX vectors,
 *    lengths around the block boundaries; with 1 and 2 threads bitwise equal;
 *    axpys' norm is that of the stored result; entries past n untouched.
 * 2. A GMRES solve whose Krylov basis grows past TPMG_MULTI_MAX vectors (the
 *    core then splits dots and axpys) converges by its true residual, in no
 *    more iterations than with a basis restarted before that length. */
#include <math.h>
#include <stdlib.h>

#include "reference.h"
#include "tpmg-impl.h"

static void check_ops(tpmg_context *c1, tpmg_context *c2, tpmg_precision p, int m, int64_t n,
                      uint64_t *seed) {
  const size_t size = tpmg_precision_size(p);
  const char *pname = p == TPMG_DOUBLE ? "double" : "float";
  const double tol = p == TPMG_DOUBLE ? 1e-13 : 1e-5;
  /* m vectors x, y, and copies of y for the two contexts; one guard entry each */
  void *x[TPMG_MULTI_MAX], *y1 = ref_malloc((n + 1) * size), *y2 = ref_malloc((n + 1) * size);
  double a[TPMG_MULTI_MAX], r1[TPMG_MULTI_MAX + 1], r2[TPMG_MULTI_MAX + 1];
  double *xv = ref_malloc(sizeof(double) * (size_t)(m * n)), *yv = ref_malloc(sizeof(double) * n);
  for (int v = 0; v < m; v++) {
    ref_fill_random(seed, n, xv + v * n);
    x[v] = ref_malloc(n * size);
    a[v] = ref_random(seed);
  }
  ref_fill_random(seed, n, yv);
  /* the vectors in precision p, and their values as stored */
  for (int64_t i = 0; i < n; i++) {
    for (int v = 0; v < m; v++) {
      if (p == TPMG_DOUBLE)
        ((double *)x[v])[i] = xv[v * n + i];
      else
        xv[v * n + i] = ((float *)x[v])[i] = (float)xv[v * n + i];
    }
    if (p == TPMG_DOUBLE)
      ((double *)y1)[i] = ((double *)y2)[i] = yv[i];
    else
      yv[i] = ((float *)y1)[i] = ((float *)y2)[i] = (float)yv[i];
  }

  /* dots */
  REF_CALL(c1, c1->ops->dots(c1, p, n, m, (const void *const *)x, y1, r1));
  REF_CALL(c2, c2->ops->dots(c2, p, n, m, (const void *const *)x, y2, r2));
  for (int v = 0; v <= m; v++) {
    long double sum = 0, scale = 1e-300L;
    for (int64_t i = 0; i < n; i++) {
      const double xi = v < m ? xv[v * n + i] : yv[i];
      sum += (long double)xi * yv[i];
      scale += fabsl((long double)xi * yv[i]);
    }
    REF_CHECK(fabsl(r1[v] - sum) <= 1e-12L * scale,
              "dots %s m %d n %lld: result %d is %.17g, expected %.17Lg", pname, m, (long long)n, v,
              r1[v], sum);
    REF_CHECK(r1[v] == r2[v], "dots %s m %d n %lld: result %d differs with 1 and 2 threads", pname,
              m, (long long)n, v);
  }

  /* axpys with its norm; the guard entry after y stays */
  if (p == TPMG_DOUBLE)
    ((double *)y1)[n] = ((double *)y2)[n] = 7.0;
  else
    ((float *)y1)[n] = ((float *)y2)[n] = 7.0f;
  double norm1 = NAN, norm2 = NAN;
  REF_CALL(c1, c1->ops->axpys(c1, p, n, m, a, (const void *const *)x, y1, &norm1));
  REF_CALL(c2, c2->ops->axpys(c2, p, n, m, a, (const void *const *)x, y2, &norm2));
  long double stored = 0, scale = 1e-300L;
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    long double expected = yv[i], size_i = fabs(yv[i]);
    for (int v = 0; v < m; v++) {
      expected += (long double)a[v] * xv[v * n + i];
      size_i += fabsl((long double)a[v] * xv[v * n + i]);
    }
    const double got = p == TPMG_DOUBLE ? ((double *)y1)[i] : ((float *)y1)[i];
    const double got2 = p == TPMG_DOUBLE ? ((double *)y2)[i] : ((float *)y2)[i];
    const double error = (double)(fabsl(got - expected) / size_i);
    if (error > worst)
      worst = error;
    REF_CHECK(got == got2, "axpys %s m %d n %lld: entry %lld differs with 1 and 2 threads", pname,
              m, (long long)n, (long long)i);
    stored += (long double)got * got;
    scale += (long double)got * got;
  }
  REF_CHECK(worst <= tol, "axpys %s m %d n %lld: relative error %.3g > %.1g", pname, m,
            (long long)n, worst, tol);
  REF_CHECK(fabsl(norm1 - stored) <= 1e-12L * scale,
            "axpys %s m %d n %lld: norm2 %.17g, the stored y's %.17Lg", pname, m, (long long)n,
            norm1, stored);
  REF_CHECK(norm1 == norm2, "axpys %s m %d n %lld: norm2 differs with 1 and 2 threads", pname, m,
            (long long)n);
  const double guard = p == TPMG_DOUBLE ? ((double *)y1)[n] : ((float *)y1)[n];
  REF_CHECK(guard == 7.0, "axpys %s m %d n %lld: wrote past the end", pname, m, (long long)n);
  /* without the norm: the same y */
  double *y3 = ref_malloc((n + 1) * size);
  for (int64_t i = 0; i < n; i++) {
    if (p == TPMG_DOUBLE)
      ((double *)y3)[i] = yv[i];
    else
      ((float *)y3)[i] = (float)yv[i];
  }
  REF_CALL(c1, c1->ops->axpys(c1, p, n, m, a, (const void *const *)x, y3, NULL));
  int same = 1;
  for (int64_t i = 0; i < n; i++)
    same &= p == TPMG_DOUBLE ? ((double *)y3)[i] == ((double *)y1)[i]
                             : ((float *)y3)[i] == ((float *)y1)[i];
  REF_CHECK(same, "axpys %s m %d n %lld: result differs without the norm", pname, m, (long long)n);

  for (int v = 0; v < m; v++)
    free(x[v]);
  free(xv);
  free(yv);
  free(y1);
  free(y2);
  free(y3);
}

static void count_iterations(void *data, int iteration, double relative) {
  (void)relative;
  *(int *)data = iteration;
}

/* GMRES on the 2D Q2 level 4 mesh of the box [0,1] x [0,height]. */
static tpmg_solver_result solve(tpmg_context *ctx, double height, int restart) {
  const double box[4] = {0, 1, 0, height};
  tpmg_grid *grid = ref_grid_create(ctx, 2, 2, 4, NULL, box);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, 4, &n, NULL));
  double *b = ref_malloc(sizeof(double) * n), *x = ref_malloc(sizeof(double) * n);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  for (tpmg_index i = 0; i < n; i++)
    x[i] = 0;
  tpmg_solver_options options = tpmg_solver_options_default();
  options.restart = restart;
  int monitored = 0;
  options.monitor = count_iterations;
  options.monitor_data = &monitored;
  tpmg_solver *solver = NULL;
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  REF_CHECK(monitored == result.iterations, "monitor saw %d iterations, result says %d", monitored,
            result.iterations);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  free(b);
  free(x);
  return result;
}

int main(void) {
  tpmg_context *c1 = ref_context_create(1), *c2 = ref_context_create(2);
  uint64_t seed = 604;
  const int counts[] = {1, 5, TPMG_MULTI_MAX};
  const int64_t sizes[] = {1, 255, 257, 20000, 65537};
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < 3; c++)
      for (int s = 0; s < 5; s++)
        check_ops(c1, c2, (tpmg_precision)p, counts[c], sizes[s], &seed);

  /* cells of aspect ratio 50 slow the V-cycle down: the basis grows past
   * TPMG_MULTI_MAX vectors. Full GMRES (restart 30) must converge, by the true
   * residual, in no more iterations than GMRES restarted after 16. */
  tpmg_solver_result full = solve(c2, 0.02, 30), restarted = solve(c2, 0.02, 16);
  REF_CHECK(full.iterations > TPMG_MULTI_MAX, "anisotropic GMRES: %d iterations, not > %d",
            full.iterations, TPMG_MULTI_MAX);
  REF_CHECK(full.converged && full.residual_reduction <= 1e-9,
            "anisotropic GMRES(30): residual reduction %.3g, not <= 1e-9", full.residual_reduction);
  REF_CHECK(full.iterations <= restarted.iterations,
            "anisotropic GMRES: %d iterations with restart 30, %d with 16", full.iterations,
            restarted.iterations);
  tpmg_context_destroy(&c1);
  tpmg_context_destroy(&c2);
  return ref_exit_code("t604-solver-multi");
}
