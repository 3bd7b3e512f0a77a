/* GPU test: the CUDA backend's public vector operations (upload, download, set,
 * axpby, dot, convert) against the CPU backend on random data, both precisions.
 * CUDA outputs are poisoned with NaN first. Skipped (exit 77) without a GPU.
 * The fused passes dots and axpys (backend operations without a public entry
 * point) are checked on every backend by t605-solver-multi-ops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-pair.h"

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
  tpmg_context_destroy(&gpu);
  tpmg_context_destroy(&cpu);
  return ref_exit_code("t800-gpu-vector");
}
