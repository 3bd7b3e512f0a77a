/* t605-solver-multi-ops: the fused vector passes of GMRES' Gram-Schmidt,
 * tpmg_vector_dots and tpmg_vector_axpys, on the backend named by
 * argv[1] (default "cpu"), against sums in long double on random data, both
 * precisions, 1, 5 and MULTI vectors (more than one backend pass takes), lengths around the block
 * boundaries. Two contexts of the backend (1 and 2 host threads) give bitwise
 * equal results: on the CPU the sums do not depend on the thread count, on a
 * GPU they are reproducible from run to run. axpys' norm is that of the
 * stored result; the entry past n is untouched. Results poisoned with NaN. A
 * backend with device memory also runs t800-gpu-vector's larger lengths (many
 * thread blocks).
 * tpmg_vector_axpys_mixed (float x_i into a double y, GMRES' x += Z y in
 * TPMG_ARITHMETIC_MIXED) gives bitwise the y and the norm of tpmg_vector_axpys on
 * the x_i widened to double, in both contexts, with and without the norm; it
 * refuses double x_i for a float y. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "tpmg-bench.h"

/* more vectors than one backend pass takes (16): the core splits the list */
#define MULTI 20

static void check_ops(tpmg_context *c1, tpmg_context *c2, tpmg_precision p, int m, int64_t n,
                      uint64_t *seed) {
  const size_t size = (p == TPMG_DOUBLE ? sizeof(double) : sizeof(float));
  const char *pname = p == TPMG_DOUBLE ? "double" : "float";
  const double tol = p == TPMG_DOUBLE ? 1e-13 : 1e-5;
  /* host values in precision p: m vectors x, y; one guard entry after y */
  char *xh = ref_malloc((size_t)(m * n) * size), *yh = ref_malloc((size_t)(n + 1) * size);
  double a[MULTI], r1[MULTI + 1], r2[MULTI + 1];
  double *xv = ref_malloc(sizeof(double) * (size_t)(m * n)), *yv = ref_malloc(sizeof(double) * n);
  for (int v = 0; v < m; v++) {
    ref_fill_random(seed, n, xv + v * n);
    a[v] = ref_random(seed);
  }
  ref_fill_random(seed, n, yv);
  /* the vectors in precision p, and their values as stored */
  for (int64_t i = 0; i < (int64_t)m * n; i++) {
    if (p == TPMG_DOUBLE)
      ((double *)xh)[i] = xv[i];
    else
      xv[i] = ((float *)xh)[i] = (float)xv[i];
  }
  for (int64_t i = 0; i < n; i++) {
    if (p == TPMG_DOUBLE)
      ((double *)yh)[i] = yv[i];
    else
      yv[i] = ((float *)yh)[i] = (float)yv[i];
  }
  if (p == TPMG_DOUBLE)
    ((double *)yh)[n] = 7.0;
  else
    ((float *)yh)[n] = 7.0f;
  /* the same vectors in each context's memory */
  tpmg_context *c[2] = {c1, c2};
  void *x[2][MULTI], *y[2];
  for (int s = 0; s < 2; s++) {
    for (int v = 0; v < m; v++)
      x[s][v] = ref_vector_create(c[s], p, n, xh + (size_t)(v * n) * size);
    y[s] = ref_vector_create(c[s], p, n + 1, yh);
  }

  /* dots */
  for (int v = 0; v <= m; v++)
    r1[v] = r2[v] = NAN;
  REF_CALL(c1, tpmg_vector_dots(c1, p, n, m, (const void *const *)x[0], y[0], r1));
  REF_CALL(c2, tpmg_vector_dots(c2, p, n, m, (const void *const *)x[1], y[1], r2));
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
    REF_CHECK(memcmp(&r1[v], &r2[v], sizeof(double)) == 0,
              "dots %s m %d n %lld: result %d differs between the two contexts: %.17g, %.17g",
              pname, m, (long long)n, v, r1[v], r2[v]);
  }

  /* axpys with its norm; the guard entry after y stays */
  double norm1 = NAN, norm2 = NAN;
  REF_CALL(c1, tpmg_vector_axpys(c1, p, n, m, a, (const void *const *)x[0], y[0], &norm1));
  REF_CALL(c2, tpmg_vector_axpys(c2, p, n, m, a, (const void *const *)x[1], y[1], &norm2));
  char *y1 = ref_malloc((size_t)(n + 1) * size), *y2 = ref_malloc((size_t)(n + 1) * size);
  REF_DOWNLOAD(c1, p, n + 1, y[0], y1);
  REF_DOWNLOAD(c2, p, n + 1, y[1], y2);
  long double stored = 0, scale = 1e-300L;
  double worst = 0;
  int64_t differ = 0, first_differ = -1;
  for (int64_t i = 0; i < n; i++) {
    long double expected = yv[i], size_i = fabs(yv[i]);
    for (int v = 0; v < m; v++) {
      expected += (long double)a[v] * xv[v * n + i];
      size_i += fabsl((long double)a[v] * xv[v * n + i]);
    }
    const double got = p == TPMG_DOUBLE ? ((double *)y1)[i] : ((float *)y1)[i];
    const double got2 = p == TPMG_DOUBLE ? ((double *)y2)[i] : ((float *)y2)[i];
    const double error = (double)(fabsl(got - expected) / size_i);
    if (error > worst || isnan(error))
      worst = error;
    if (memcmp(&got, &got2, sizeof(double)) != 0 && differ++ == 0)
      first_differ = i;
    stored += (long double)got * got;
    scale += (long double)got * got;
  }
  REF_CHECK(differ == 0,
            "axpys %s m %d n %lld: %lld entries differ between the two contexts (first %lld)",
            pname, m, (long long)n, (long long)differ, (long long)first_differ);
  REF_CHECK(worst <= tol, "axpys %s m %d n %lld: relative error %.3g > %.1g", pname, m,
            (long long)n, worst, tol);
  REF_CHECK(fabsl(norm1 - stored) <= 1e-12L * scale,
            "axpys %s m %d n %lld: norm2 %.17g, the stored y's %.17Lg", pname, m, (long long)n,
            norm1, stored);
  REF_CHECK(memcmp(&norm1, &norm2, sizeof(double)) == 0,
            "axpys %s m %d n %lld: norm2 differs between the two contexts: %.17g, %.17g", pname, m,
            (long long)n, norm1, norm2);
  const double guard = p == TPMG_DOUBLE ? ((double *)y1)[n] : ((float *)y1)[n];
  REF_CHECK(guard == 7.0, "axpys %s m %d n %lld: wrote past the end", pname, m, (long long)n);
  /* without the norm: the same y */
  ref_vector_upload(c1, p, n + 1, yh, y[0]);
  REF_CALL(c1, tpmg_vector_axpys(c1, p, n, m, a, (const void *const *)x[0], y[0], NULL));
  REF_DOWNLOAD(c1, p, n + 1, y[0], y2);
  REF_CHECK(memcmp(y1, y2, (size_t)n * size) == 0,
            "axpys %s m %d n %lld: result differs without the norm", pname, m, (long long)n);

  for (int s = 0; s < 2; s++) {
    for (int v = 0; v < m; v++)
      ref_vector_destroy(c[s], &x[s][v]);
    ref_vector_destroy(c[s], &y[s]);
  }
  free(xh);
  free(yh);
  free(xv);
  free(yv);
  free(y1);
  free(y2);
}

static void check_mixed(tpmg_context *c1, tpmg_context *c2, int m, int64_t n, uint64_t *seed) {
  float *xf = ref_malloc(sizeof(float) * (size_t)(m * n));
  double *xd = ref_malloc(sizeof(double) * (size_t)(m * n)), *yh = ref_malloc(sizeof(double) * n);
  double a[MULTI];
  ref_fill_random(seed, (int64_t)m * n, xd);
  for (int64_t i = 0; i < (int64_t)m * n; i++)
    xd[i] = xf[i] = (float)(xd[i] * 3.0);
  ref_fill_random(seed, n, yh);
  for (int v = 0; v < m; v++)
    a[v] = ref_random(seed);
  double *got = ref_malloc(sizeof(double) * n), *expected = ref_malloc(sizeof(double) * n);
  tpmg_context *c[2] = {c1, c2};
  for (int s = 0; s < 2; s++) {
    void *x[MULTI], *xw[MULTI];
    for (int v = 0; v < m; v++) {
      x[v] = ref_vector_create(c[s], TPMG_FLOAT, n, xf + (size_t)v * n);
      xw[v] = ref_vector_create(c[s], TPMG_DOUBLE, n, xd + (size_t)v * n);
    }
    void *y = ref_vector_create(c[s], TPMG_DOUBLE, n, yh),
         *yw = ref_vector_create(c[s], TPMG_DOUBLE, n, yh);
    for (int with_norm = 0; with_norm < 2; with_norm++) {
      double norm = NAN, norm_w = NAN;
      ref_vector_upload(c[s], TPMG_DOUBLE, n, yh, y);
      ref_vector_upload(c[s], TPMG_DOUBLE, n, yh, yw);
      REF_CALL(c[s], tpmg_vector_axpys_mixed(c[s], TPMG_DOUBLE, n, m, a, TPMG_FLOAT,
                                             (const void *const *)x, y, with_norm ? &norm : NULL));
      REF_CALL(c[s], tpmg_vector_axpys(c[s], TPMG_DOUBLE, n, m, a, (const void *const *)xw, yw,
                                       with_norm ? &norm_w : NULL));
      REF_DOWNLOAD(c[s], TPMG_DOUBLE, n, y, got);
      REF_DOWNLOAD(c[s], TPMG_DOUBLE, n, yw, expected);
      for (int64_t i = 0; i < n; i++)
        if (memcmp(&got[i], &expected[i], sizeof(double)) != 0) {
          REF_CHECK(0,
                    "axpys_mixed m %d n %lld context %d norm %d: y[%lld] expected %.17g (double "
                    "x_i), got %.17g",
                    m, (long long)n, s + 1, with_norm, (long long)i, expected[i], got[i]);
          break;
        }
      REF_CHECK(!with_norm || memcmp(&norm, &norm_w, sizeof(double)) == 0,
                "axpys_mixed m %d n %lld context %d: norm2 expected %.17g (double x_i), got %.17g",
                m, (long long)n, s + 1, norm_w, norm);
    }
    /* double x_i for a float y: refused, y unchanged */
    void *yf = ref_vector_create(c[s], TPMG_FLOAT, n, NULL);
    double norm = -7;
    tpmg_status status = tpmg_vector_axpys_mixed(c[s], TPMG_FLOAT, n, m, a, TPMG_DOUBLE,
                                                 (const void *const *)xw, yf, &norm);
    REF_CHECK(status == TPMG_ERROR_ARGUMENT && norm == -7,
              "axpys_mixed with double x_i for a float y: expected TPMG_ERROR_ARGUMENT (%d), got "
              "%d, norm2 %g",
              (int)TPMG_ERROR_ARGUMENT, (int)status, norm);
    ref_vector_destroy(c[s], &yf);
    ref_vector_destroy(c[s], &yw);
    ref_vector_destroy(c[s], &y);
    for (int v = 0; v < m; v++) {
      ref_vector_destroy(c[s], &xw[v]);
      ref_vector_destroy(c[s], &x[v]);
    }
  }
  free(expected);
  free(got);
  free(yh);
  free(xd);
  free(xf);
}

int main(int argc, char **argv) {
  const char *backend = ref_backend(argc, argv);
  tpmg_context *c1 = ref_context_create(backend, 1), *c2 = ref_context_create(backend, 2);
  uint64_t seed = 604;
  const int counts[] = {1, 5, MULTI};
  const int64_t sizes[] = {1, 255, 257, 20000, 65537, 4097, 123457, 5000011};
  tpmg_memory_type memory = TPMG_MEMORY_HOST;
  REF_CALL(c1, tpmg_context_memory_type(c1, &memory));
  const int n_sizes = memory == TPMG_MEMORY_DEVICE ? 8 : 5;
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < 3; c++)
      for (int s = 0; s < n_sizes; s++)
        check_ops(c1, c2, (tpmg_precision)p, counts[c], sizes[s], &seed);
  for (int c = 0; c < 3; c++)
    for (int s = 0; s < n_sizes; s++)
      check_mixed(c1, c2, counts[c], sizes[s], &seed);
  REF_CALL(c1, tpmg_context_destroy(&c1));
  REF_CALL(c2, tpmg_context_destroy(&c2));
  return ref_exit_code("t605-solver-multi-ops");
}
