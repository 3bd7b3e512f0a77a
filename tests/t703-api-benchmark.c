/* t703-api-benchmark: the values of the benchmark interface on the CPU
 * backend (the GPU tests check the CUDA backend's): the stopwatch against a
 * known sleep, the multi-vector dots and axpys (more vectors than one backend
 * call takes) against sums on the host, and the work counts per DoF of an
 * operator and a smoother against counts made by hand from the documented
 * formulas (tpmg-work.c) and against each other. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reference.h"
#include "tpmg-bench.h"

#define M 20 /* vectors of dots and axpys: more than TPMG_MULTI_MAX (16) */
#define N 1000

static void check_stopwatch(tpmg_context *ctx) {
  double seconds = -1;
  const struct timespec pause = {0, 20 * 1000 * 1000};
  REF_CALL(ctx, tpmg_context_stopwatch(ctx, 1, NULL));
  nanosleep(&pause, NULL);
  REF_CALL(ctx, tpmg_context_stopwatch(ctx, 0, &seconds));
  REF_CHECK(seconds >= 0.019 && seconds < 10, "stopwatch around a 20 ms sleep: %g s", seconds);
}

static void check_multi(tpmg_context *ctx, uint64_t *seed) {
  double *host[M + 1], expected[M + 1], got[M + 1], a[M];
  void *v[M + 1];
  for (int i = 0; i <= M; i++) {
    host[i] = ref_malloc(N * sizeof(double));
    ref_fill_random(seed, N, host[i]);
    REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, N, &v[i]));
    REF_CALL(ctx, tpmg_vector_upload(ctx, TPMG_DOUBLE, N, host[i], v[i]));
  }
  for (int i = 0; i < M; i++)
    a[i] = ref_random(seed) - 0.5;
  /* dots: (x_i, y) and (y, y), y = v[M] */
  for (int i = 0; i <= M; i++) {
    expected[i] = 0;
    for (int j = 0; j < N; j++)
      expected[i] += host[i][j] * host[M][j];
  }
  REF_CALL(ctx, tpmg_vector_dots(ctx, TPMG_DOUBLE, N, M, (const void *const *)v, v[M], got));
  for (int i = 0; i <= M; i++)
    REF_CHECK(fabs(got[i] - expected[i]) <= 1e-12 * N,
              "tpmg_vector_dots[%d]: expected %.17g, got %.17g", i, expected[i], got[i]);
  /* axpys: y += sum a_i x_i and its squared norm */
  double norm2 = -1, expected_norm2 = 0, *y = ref_malloc(N * sizeof(double));
  for (int j = 0; j < N; j++) {
    double value = host[M][j];
    for (int i = 0; i < M; i++)
      value += a[i] * host[i][j];
    y[j] = value;
    expected_norm2 += value * value;
  }
  REF_CALL(ctx, tpmg_vector_axpys(ctx, TPMG_DOUBLE, N, M, a, (const void *const *)v, v[M], &norm2));
  REF_CALL(ctx, tpmg_vector_download(ctx, TPMG_DOUBLE, N, v[M], host[M]));
  REF_CHECK(ref_relative_difference(N, host[M], y) <= 1e-13,
            "tpmg_vector_axpys: relative difference %.3g to the host sums",
            ref_relative_difference(N, host[M], y));
  REF_CHECK(fabs(norm2 - expected_norm2) <= 1e-12 * expected_norm2,
            "tpmg_vector_axpys norm2: expected %.17g, got %.17g", expected_norm2, norm2);
  free(y);
  for (int i = 0; i <= M; i++) {
    REF_CALL(ctx, tpmg_vector_destroy(ctx, &v[i]));
    free(host[i]);
  }
}

/* 2D Q1 on level 1 of one coarse cell: 2 x 2 cells, 9 DoFs, 9 vertices and one
 * patch. The CPU operator is the Kronecker sum (tpmg-cpu-laplace-templates.h) on
 * the one interior point: in x 2 (2k+1) = 6 multiply-adds (a and b), in y
 * 2 (k+1)^2 / k = 8 (the vertex row from both cells): 28 / 9 flop per DoF; shared words: the
 * line copy written once and read 2k+1 = 3 times, the diagonals 2 (2k+1) / 4
 * (4 lines per load), a and b written (7.5), then read 2 (k+1) / k = 4 times
 * and the vertex row read back once (5): 12.5 / 9 per DoF; no matrix words.
 * The FUSED step: one
 * patch with I = 1, P = 3: residual 2 I P P + 2 I P I = 24 multiply-adds,
 * solve 4 I^3 = 4, plus 3 I^2 = 3 other operations: (2 28 + 3) / 9 flop per
 * DoF (the scalar kernels); device memory 3 words per colour, 12. The batched
 * kernels (avx2, avx512) in mirror coordinates: rows per line 2k^2 = 2 (not
 * I P = 3), residual 2 2 P + 2 2 I = 16, solve 4, plus 3 and the pass of xbar
 * to mirror coordinates, one add per entry off the centre of each line: 2 P
 * (P - 1) = 12 (those of I = 1 points are empty): (2 20 + 15) / 9. */
static void check_work(tpmg_context *ctx, double fused_flops) {
  tpmg_grid *grid = ref_grid_create(ctx, 2, 1, 1, NULL, NULL);
  tpmg_operator *op = NULL;
  tpmg_work work;
  REF_CALL(ctx, tpmg_operator_create(grid, 1, TPMG_DOUBLE, &op));
  REF_CALL(ctx, tpmg_operator_work(op, &work));
  REF_CHECK(strcmp(work.kernel, "cpu") == 0, "operator kernel: expected cpu, got %s", work.kernel);
  REF_CHECK(fabs(work.flops - 28.0 / 9) < 1e-12 && fabs(work.shared_words - 12.5 / 9) < 1e-12 &&
                work.matrix_words == 0 && work.memory_words == 2,
            "operator work 2D Q1: expected 28/9 flop, 12.5/9 shared, 0 matrix, 2 memory words, "
            "got %.17g, %.17g, %g, %g",
            work.flops, work.shared_words, work.matrix_words, work.memory_words);
  const double apply_flops = work.flops;
  double flops[4] = {0}, memory[4] = {0};
  for (int v = 0; v < 4; v++) {
    tpmg_smoother_options options = tpmg_smoother_options_default();
    options.variant = (tpmg_smoother_variant)v;
    tpmg_smoother *s = NULL;
    REF_CALL(ctx, tpmg_smoother_create(grid, 1, TPMG_DOUBLE, &options, &s));
    REF_CALL(ctx, tpmg_smoother_work(s, &work));
    flops[v] = work.flops;
    memory[v] = work.memory_words;
    REF_CALL(ctx, tpmg_smoother_destroy(&s));
  }
  REF_CHECK(fabs(flops[TPMG_SMOOTHER_FUSED] - fused_flops) < 1e-12 &&
                memory[TPMG_SMOOTHER_FUSED] == 12,
            "FUSED work 2D Q1: expected %.6g flop and 12 memory words, got %.6g, %g", fused_flops,
            flops[TPMG_SMOOTHER_FUSED], memory[TPMG_SMOOTHER_FUSED]);
  /* the same arithmetic in BOUNDARY and SEPARATE, less traffic in BOUNDARY;
   * GLOBAL applies the operator once per colour */
  REF_CHECK(flops[TPMG_SMOOTHER_BOUNDARY] == flops[TPMG_SMOOTHER_FUSED] &&
                flops[TPMG_SMOOTHER_SEPARATE] == flops[TPMG_SMOOTHER_FUSED],
            "BOUNDARY and SEPARATE flop %g, %g: expected FUSED's %g", flops[TPMG_SMOOTHER_BOUNDARY],
            flops[TPMG_SMOOTHER_SEPARATE], flops[TPMG_SMOOTHER_FUSED]);
  REF_CHECK(memory[TPMG_SMOOTHER_BOUNDARY] > 4 && memory[TPMG_SMOOTHER_BOUNDARY] < 12,
            "BOUNDARY memory words %g: expected in (4, 12)", memory[TPMG_SMOOTHER_BOUNDARY]);
  REF_CHECK(flops[TPMG_SMOOTHER_GLOBAL] > 4 * apply_flops,
            "GLOBAL flop %g: expected more than 4 operator applies (%g)",
            flops[TPMG_SMOOTHER_GLOBAL], 4 * apply_flops);
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(void) {
  tpmg_context *ctx = ref_context_create("cpu", 0);
  uint64_t seed = 702;
  check_stopwatch(ctx);
  check_multi(ctx, &seed);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  ctx = ref_context_create("cpu/scalar", 0);
  check_work(ctx, 59.0 / 9);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  /* the batched kernels, where this processor runs them */
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = "cpu/avx2";
  const tpmg_status status = tpmg_context_create(&options, &ctx);
  REF_CHECK(status == TPMG_SUCCESS || status == TPMG_ERROR_UNSUPPORTED,
            "cpu/avx2: tpmg_context_create returned %d", (int)status);
  if (ctx) {
    check_work(ctx, 55.0 / 9);
    REF_CALL(ctx, tpmg_context_destroy(&ctx));
  }
  return ref_exit_code("t703-api-benchmark");
}
