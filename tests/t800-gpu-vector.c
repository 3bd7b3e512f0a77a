/* GPU test: the CUDA backend's vector operations (upload, download, set, axpby,
 * dot, dots, axpys, convert) against the CPU backend on random data, both precisions;
 * axpys_mixed (float x_i into a double y) bitwise equal to the CUDA axpys on the
 * x_i widened to double, and near the CPU's. CUDA
 * outputs are poisoned with NaN first. And the benchmark interface on the CUDA
 * backend: the stopwatch, the measured limits and the work counts of each
 * variant's kernels. Skipped (exit 77) without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-pair.h"
#include "tpmg-bench.h"

/* more vectors than one backend pass takes (16): the core splits the list */
#define MULTI 20

static tpmg_context *gpu_context(void) {
  int available = 0;
  if (tpmg_backend_available("cuda", &available) != TPMG_SUCCESS || !available)
    return NULL;
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = "cuda";
  tpmg_context *ctx = NULL;
  REF_CALL(NULL, tpmg_context_create(&options, &ctx));
  return ctx;
}

static void compare(const char *what, tpmg_precision p, int64_t n, const double *gpu,
                    const double *cpu) {
  double tolerance = p == TPMG_DOUBLE ? 1e-12 : 1e-5;
  double diff = ref_relative_difference(n, gpu, cpu);
  REF_CHECK(diff <= tolerance, "%s (%s, n = %lld): relative difference %.3e > %.1e", what,
            p == TPMG_DOUBLE ? "double" : "float", (long long)n, diff, tolerance);
}

static void check_size(tpmg_context *cpu, tpmg_context *gpu, tpmg_precision p, int64_t n,
                       uint64_t *seed) {
  double *x = ref_malloc((size_t)n * sizeof(double)), *y = ref_malloc((size_t)n * sizeof(double));
  double *rc = ref_malloc((size_t)n * sizeof(double)), *rg = ref_malloc((size_t)n * sizeof(double));
  double *nan = ref_malloc((size_t)n * sizeof(double));
  ref_fill_random(seed, n, x);
  ref_fill_random(seed, n, y);
  ref_fill_nan(n, nan);
  void *xc = gpu_vector_from(cpu, p, n, x), *yc = gpu_vector_from(cpu, p, n, y);
  void *xg = gpu_vector_from(gpu, p, n, x), *yg = gpu_vector_from(gpu, p, n, nan);

  /* round trip */
  gpu_vector_to(gpu, p, n, xg, rg);
  gpu_vector_to(cpu, p, n, xc, rc);
  compare("upload/download", p, n, rg, rc);

  /* set */
  REF_CALL(gpu, tpmg_vector_set(gpu, p, n, -0.375, yg));
  for (int64_t i = 0; i < n; i++)
    rc[i] = -0.375;
  gpu_vector_to(gpu, p, n, yg, rg);
  compare("set", p, n, rg, rc);

  /* axpby with b = 0 must not read the NaN in y */
  tpmg_vector_destroy(gpu, &yg);
  yg = gpu_vector_from(gpu, p, n, nan);
  REF_CALL(gpu, tpmg_vector_axpby(gpu, p, n, 1.25, xg, 0.0, yg));
  REF_CALL(cpu, tpmg_vector_axpby(cpu, p, n, 1.25, xc, 0.0, yc));
  gpu_vector_to(gpu, p, n, yg, rg);
  gpu_vector_to(cpu, p, n, yc, rc);
  compare("axpby b = 0", p, n, rg, rc);

  /* axpby */
  tpmg_vector_destroy(gpu, &yg);
  tpmg_vector_destroy(cpu, &yc);
  yg = gpu_vector_from(gpu, p, n, y);
  yc = gpu_vector_from(cpu, p, n, y);
  REF_CALL(gpu, tpmg_vector_axpby(gpu, p, n, 0.75, xg, -1.5, yg));
  REF_CALL(cpu, tpmg_vector_axpby(cpu, p, n, 0.75, xc, -1.5, yc));
  gpu_vector_to(gpu, p, n, yg, rg);
  gpu_vector_to(cpu, p, n, yc, rc);
  compare("axpby", p, n, rg, rc);

  /* dot: double accumulation; equal runs give equal bits. On fresh copies of
   * y: after axpby the float vectors differ by the GPU's fused multiply-adds. */
  tpmg_vector_destroy(gpu, &yg);
  tpmg_vector_destroy(cpu, &yc);
  yg = gpu_vector_from(gpu, p, n, y);
  yc = gpu_vector_from(cpu, p, n, y);
  gpu_vector_to(cpu, p, n, yc, rc);
  double dg = NAN, dg2 = NAN, dc = NAN, scale = 0;
  REF_CALL(gpu, tpmg_vector_dot(gpu, p, n, xg, yg, &dg));
  REF_CALL(gpu, tpmg_vector_dot(gpu, p, n, xg, yg, &dg2));
  REF_CALL(cpu, tpmg_vector_dot(cpu, p, n, xc, yc, &dc));
  for (int64_t i = 0; i < n; i++)
    scale += fabs(rc[i] * x[i]) + 1e-300;
  REF_CHECK(fabs(dg - dc) <= 1e-12 * scale, "dot (%s, n = %lld): cuda %.17g, cpu %.17g",
            p == TPMG_DOUBLE ? "double" : "float", (long long)n, dg, dc);
  REF_CHECK(memcmp(&dg, &dg2, sizeof(double)) == 0, "dot not reproducible: %.17g, %.17g", dg, dg2);

  /* dots and axpys against the CPU backend, on m copies of x scaled
   * differently; results poisoned first */
  const int counts[] = {1, 3, MULTI};
  for (int c = 0; c < 3; c++) {
    const int m = counts[c];
    void *vg[MULTI], *vc[MULTI];
    double a[MULTI], sg[MULTI + 1], sg2[MULTI + 1],
        sc[MULTI + 1];
    for (int v = 0; v < m; v++) {
      a[v] = ref_random(seed);
      for (int64_t i = 0; i < n; i++)
        rg[i] = x[(i + 7 * v) % n] * (1 + 0.125 * v);
      vg[v] = gpu_vector_from(gpu, p, n, rg);
      vc[v] = gpu_vector_from(cpu, p, n, rg);
    }
    for (int v = 0; v <= m; v++)
      sg[v] = sg2[v] = sc[v] = NAN;
    REF_CALL(gpu, tpmg_vector_dots(gpu, p, n, m, (const void *const *)vg, yg, sg));
    REF_CALL(gpu, tpmg_vector_dots(gpu, p, n, m, (const void *const *)vg, yg, sg2));
    REF_CALL(cpu, tpmg_vector_dots(cpu, p, n, m, (const void *const *)vc, yc, sc));
    gpu_vector_to(cpu, p, n, yc, rc);
    for (int v = 0; v <= m; v++) {
      double size = 1e-300;
      gpu_vector_to(cpu, p, n, v < m ? vc[v] : yc, rg);
      for (int64_t i = 0; i < n; i++)
        size += fabs(rg[i] * rc[i]);
      REF_CHECK(fabs(sg[v] - sc[v]) <= 1e-12 * size,
                "dots (%s, n = %lld, m = %d) %d: cuda %.17g, cpu %.17g",
                p == TPMG_DOUBLE ? "double" : "float", (long long)n, m, v, sg[v], sc[v]);
      REF_CHECK(memcmp(&sg[v], &sg2[v], sizeof(double)) == 0, "dots not reproducible: %.17g, %.17g",
                sg[v], sg2[v]);
    }
    for (int with_norm = 0; with_norm < 2; with_norm++) {
      void *wg = gpu_vector_from(gpu, p, n, y), *wc = gpu_vector_from(cpu, p, n, y);
      double ng = NAN, nc = NAN;
      REF_CALL(gpu, tpmg_vector_axpys(gpu, p, n, m, a, (const void *const *)vg, wg,
                                    with_norm ? &ng : NULL));
      REF_CALL(cpu, tpmg_vector_axpys(cpu, p, n, m, a, (const void *const *)vc, wc,
                                    with_norm ? &nc : NULL));
      gpu_vector_to(gpu, p, n, wg, rg);
      gpu_vector_to(cpu, p, n, wc, rc);
      compare(with_norm ? "axpys with norm" : "axpys", p, n, rg, rc);
      if (with_norm) {
        double stored = 0;
        for (int64_t i = 0; i < n; i++)
          stored += rg[i] * rg[i];
        REF_CHECK(fabs(ng - stored) <= 1e-12 * stored &&
                      fabs(nc - ng) <= (p == TPMG_DOUBLE ? 1e-12 : 1e-5) * nc,
                  "axpys norm (%s, n = %lld, m = %d): cuda %.17g, of its y %.17g, cpu %.17g",
                  p == TPMG_DOUBLE ? "double" : "float", (long long)n, m, ng, stored, nc);
      }
      tpmg_vector_destroy(gpu, &wg);
      tpmg_vector_destroy(cpu, &wc);
    }
    for (int with_norm = 0; with_norm < 2 && p == TPMG_FLOAT; with_norm++) {
      void *vw[MULTI];
      for (int v = 0; v < m; v++) {
        vw[v] = gpu_vector_from(gpu, TPMG_DOUBLE, n, nan);
        REF_CALL(gpu, tpmg_vector_convert(gpu, n, TPMG_FLOAT, vg[v], TPMG_DOUBLE, vw[v]));
      }
      void *wg = gpu_vector_from(gpu, TPMG_DOUBLE, n, y),
           *ww = gpu_vector_from(gpu, TPMG_DOUBLE, n, y);
      void *wc = gpu_vector_from(cpu, TPMG_DOUBLE, n, y);
      double ng = NAN, nw = NAN, nc = NAN;
      REF_CALL(gpu, tpmg_vector_axpys_mixed(gpu, TPMG_DOUBLE, n, m, a, TPMG_FLOAT,
                                            (const void *const *)vg, wg, with_norm ? &ng : NULL));
      REF_CALL(gpu, tpmg_vector_axpys(gpu, TPMG_DOUBLE, n, m, a, (const void *const *)vw, ww,
                                      with_norm ? &nw : NULL));
      REF_CALL(cpu, tpmg_vector_axpys_mixed(cpu, TPMG_DOUBLE, n, m, a, TPMG_FLOAT,
                                            (const void *const *)vc, wc, with_norm ? &nc : NULL));
      gpu_vector_to(gpu, TPMG_DOUBLE, n, wg, rg);
      double *rw = ref_malloc((size_t)n * sizeof(double));
      gpu_vector_to(gpu, TPMG_DOUBLE, n, ww, rw);
      REF_CHECK(memcmp(rg, rw, sizeof(double) * (size_t)n) == 0,
                "axpys_mixed (n = %lld, m = %d, norm %d): differs from axpys on the x_i widened",
                (long long)n, m, with_norm);
      gpu_vector_to(cpu, TPMG_DOUBLE, n, wc, rc);
      compare("axpys_mixed", TPMG_DOUBLE, n, rg, rc);
      REF_CHECK(!with_norm ||
                    (memcmp(&ng, &nw, sizeof(double)) == 0 && fabs(nc - ng) <= 1e-12 * nc),
                "axpys_mixed norm (n = %lld, m = %d): cuda %.17g, cuda on the x_i widened %.17g, "
                "cpu %.17g",
                (long long)n, m, ng, nw, nc);
      free(rw);
      tpmg_vector_destroy(gpu, &wg);
      tpmg_vector_destroy(gpu, &ww);
      tpmg_vector_destroy(cpu, &wc);
      for (int v = 0; v < m; v++)
        tpmg_vector_destroy(gpu, &vw[v]);
    }
    for (int v = 0; v < m; v++) {
      tpmg_vector_destroy(gpu, &vg[v]);
      tpmg_vector_destroy(cpu, &vc[v]);
    }
  }

  /* convert to the other precision and back */
  tpmg_precision q = p == TPMG_DOUBLE ? TPMG_FLOAT : TPMG_DOUBLE;
  void *zg = gpu_vector_from(gpu, q, n, nan), *zc = gpu_vector_from(cpu, q, n, nan);
  REF_CALL(gpu, tpmg_vector_convert(gpu, n, p, xg, q, zg));
  REF_CALL(cpu, tpmg_vector_convert(cpu, n, p, xc, q, zc));
  gpu_vector_to(gpu, q, n, zg, rg);
  gpu_vector_to(cpu, q, n, zc, rc);
  compare("convert", q, n, rg, rc);
  /* same precision: a copy */
  tpmg_vector_destroy(gpu, &yg);
  yg = gpu_vector_from(gpu, p, n, nan);
  REF_CALL(gpu, tpmg_vector_convert(gpu, n, p, xg, p, yg));
  gpu_vector_to(gpu, p, n, yg, rg);
  gpu_vector_to(cpu, p, n, xc, rc);
  compare("convert (copy)", p, n, rg, rc);

  tpmg_vector_destroy(gpu, &xg);
  tpmg_vector_destroy(gpu, &yg);
  tpmg_vector_destroy(gpu, &zg);
  tpmg_vector_destroy(cpu, &xc);
  tpmg_vector_destroy(cpu, &yc);
  tpmg_vector_destroy(cpu, &zc);
  free(x);
  free(y);
  free(rc);
  free(rg);
  free(nan);
}

/* The stopwatch and the limit loops give plausible values; the work counts
 * name the kernel of the table in tpmg-cuda-dispatch.cuh, for 3D Q2 and Q1 in
 * double (3D Q2: "cuda" runs brick and constant). */
static void check_benchmark(tpmg_context *gpu) {
  double seconds = -1;
  REF_CALL(gpu, tpmg_context_stopwatch(gpu, 1, NULL));
  REF_CALL(gpu, tpmg_context_stopwatch(gpu, 0, &seconds));
  REF_CHECK(seconds >= 0 && seconds < 1, "cuda stopwatch around nothing: %g s", seconds);
  tpmg_device_limits limits;
  REF_CALL(gpu, tpmg_context_measure_limits(gpu, &limits));
  REF_CHECK(limits.shared_bytes > 1e12 && limits.flops_double > 1e12 &&
                limits.flops_float > limits.flops_double && isfinite(limits.flops_float),
            "cuda limits: shared %g B/s, FP64 %g, FP32 %g flop/s: expected > 1e12 and FP32 > FP64",
            limits.shared_bytes, limits.flops_double, limits.flops_float);
  static const char *const expected[2][GPU_VARIANTS][2] = {/* degree 2: operator, smoother */
                                                           {{"brick", "constant"},
                                                            {"basic", "basic"},
                                                            {"constant", "constant"},
                                                            {"tiled", "tiled"},
                                                            {NULL, NULL},
                                                            {"brick", "constant"}},
                                                           /* degree 1 */
                                                           {{"brick", "thread"},
                                                            {"basic", "basic"},
                                                            {"constant", "constant"},
                                                            {"tiled", "tiled"},
                                                            {"thread", "thread"},
                                                            {"brick", "thread"}}};
  tpmg_context *ctx[GPU_VARIANTS];
  gpu_variant_contexts(ctx);
  for (int degree = 1; degree <= 2; degree++)
    for (int v = 0; v < GPU_VARIANTS; v++) {
      const char *const *names = expected[degree == 1][v];
      if (!names[0])
        continue;
      tpmg_grid *grid = ref_grid_create(ctx[v], 3, degree, 2, NULL, NULL);
      tpmg_operator *op = NULL;
      tpmg_smoother *smoother = NULL;
      tpmg_work work[2];
      REF_CALL(ctx[v], tpmg_operator_create(grid, 2, TPMG_DOUBLE, &op));
      REF_CALL(ctx[v], tpmg_smoother_create(grid, 2, TPMG_DOUBLE, NULL, &smoother));
      REF_CALL(ctx[v], tpmg_operator_work(op, &work[0]));
      REF_CALL(ctx[v], tpmg_smoother_work(smoother, &work[1]));
      for (int w = 0; w < 2; w++) {
        REF_CHECK(strcmp(work[w].kernel, names[w]) == 0 && work[w].flops > 0 &&
                      work[w].memory_words > 0,
                  "%s Q%d %s work: kernel %s, %g flop, %g memory words; expected kernel %s and "
                  "positive counts",
                  gpu_variant_names[v], degree, w ? "smoother" : "operator", work[w].kernel,
                  work[w].flops, work[w].memory_words, names[w]);
      }
      tpmg_smoother_destroy(&smoother);
      tpmg_operator_destroy(&op);
      tpmg_grid_destroy(&grid);
    }
  for (int v = 0; v < GPU_VARIANTS; v++)
    tpmg_context_destroy(&ctx[v]);
}

int main(void) {
  tpmg_context *gpu = gpu_context();
  if (!gpu) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  tpmg_context *cpu = ref_context_create("cpu", 0);
  uint64_t seed = 800;
  const int64_t sizes[] = {1, 31, 1000, 4097, 123457, 5000011};
  for (int p = 0; p < 2; p++)
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
      check_size(cpu, gpu, (tpmg_precision)p, sizes[s], &seed);
  check_benchmark(gpu);
  tpmg_context_destroy(&gpu);
  tpmg_context_destroy(&cpu);
  return ref_exit_code("t800-gpu-vector");
}
