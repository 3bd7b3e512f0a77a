/* t700-api-errors: bad input to every public function. Each call returns the
 * documented nonzero status, leaves the context a non-empty message that names
 * the offending value where there is one, and changes no output (pointer
 * outputs keep a sentinel value; context_create sets *ctx = NULL as
 * documented). Destroy functions accept a NULL object. Valid calls still work
 * afterwards. One function per object and feature; those of the objects on a
 * grid share one grid and its vectors (fixture). */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "tpmg-bench.h"

static char sentinel_storage;
#define SENTINEL ((void *)&sentinel_storage)

static int contains_ci(const char *haystack, const char *needle) {
  size_t n = strlen(needle);
  for (const char *p = haystack; *p; p++) {
    size_t i = 0;
    while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n)
      return 1;
  }
  return 0;
}

static void expect(const tpmg_context *ctx, tpmg_status got, tpmg_status s1, tpmg_status s2,
                   const char *needle, const char *expr, int line) {
  if (got != s1 && got != s2) {
    fprintf(stderr, "t700-api-errors.c:%d: %s: expected status %d%s, got %d\n", line, expr, (int)s1,
            s1 != s2 ? " or another documented one" : "", (int)got);
    ref_failures++;
    return;
  }
  if (!ctx || got == TPMG_SUCCESS)
    return;
  const char *msg = tpmg_context_last_error(ctx);
  if (!msg || !msg[0]) {
    fprintf(stderr, "t700-api-errors.c:%d: %s: expected a message, got an empty one\n", line, expr);
    ref_failures++;
  } else if (needle && !contains_ci(msg, needle)) {
    fprintf(stderr,
            "t700-api-errors.c:%d: %s: expected the message to mention \"%s\", got \"%s\"\n", line,
            expr, needle, msg);
    ref_failures++;
  }
}

#define EXPECT(ctx, expr, s1, s2, needle)                                                          \
  expect((ctx), (expr), (s1), (s2), (needle), #expr, __LINE__)
#define EXPECT_ARG(ctx, expr, needle)                                                              \
  EXPECT(ctx, expr, TPMG_ERROR_ARGUMENT, TPMG_ERROR_ARGUMENT, needle)
#define EXPECT_OK(ctx, expr) EXPECT(ctx, expr, TPMG_SUCCESS, TPMG_SUCCESS, NULL)
#define UNCHANGED(ptr)                                                                             \
  REF_CHECK((void *)(ptr) == SENTINEL, "output %s changed by a failed call", #ptr)

/* ---- the context ----------------------------------------------------------- */

static void backend_available_errors(void) {
  int available = -7;
  EXPECT_ARG(NULL, tpmg_backend_available("cpu", NULL), NULL);
  EXPECT_ARG(NULL, tpmg_backend_available(NULL, &available), NULL);
  const char *const unknown[] = {"", "gpu", "CPU", "cpu ", "/cpu", "cudax", "cuda-tiled"};
  for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); ++i) {
    EXPECT_ARG(NULL, tpmg_backend_available(unknown[i], &available), NULL);
    REF_CHECK(available == -7, "tpmg_backend_available(\"%s\"): output changed to %d", unknown[i],
              available);
  }
  /* a known backend with a variant it does not have: known, not available */
  EXPECT_OK(NULL, tpmg_backend_available("cpu/fast", &available));
  REF_CHECK(available == 0, "tpmg_backend_available(cpu/fast): expected 0, got %d", available);
  EXPECT_OK(NULL, tpmg_backend_available("cpu", &available));
  REF_CHECK(available == 1, "tpmg_backend_available(cpu): expected 1, got %d", available);
  char long_name[200];
  memset(long_name, 'c', sizeof(long_name) - 1);
  long_name[sizeof(long_name) - 1] = '\0';
  EXPECT_ARG(NULL, tpmg_backend_available(long_name, &available), NULL);
}

/* tpmg_context_create(options) is refused with `status` and sets *ctx = NULL;
 * `what` names the options in the messages. */
static void context_refused(const tpmg_context_options *options, tpmg_status status,
                            const char *what, int line) {
  char expr[96];
  snprintf(expr, sizeof(expr), "tpmg_context_create(%s)", what);
  tpmg_context *ctx = SENTINEL;
  expect(NULL, tpmg_context_create(options, &ctx), status, status, NULL, expr, line);
  if (ctx != NULL) {
    fprintf(stderr, "t700-api-errors.c:%d: %s failed but *ctx is not NULL\n", line, expr);
    ref_failures++;
  }
}
#define EXPECT_CONTEXT_REFUSED(options, status, what)                                              \
  context_refused((options), (status), (what), __LINE__)

static void context_create_errors(void) {
  EXPECT_ARG(NULL, tpmg_context_create(NULL, NULL), NULL);
  tpmg_context_options options = tpmg_context_options_default();
  REF_CHECK(
      options.backend == NULL && options.n_threads == 0 && options.device == 0,
      "tpmg_context_options_default: expected NULL (cpu), 0 threads, device 0, got %s, %d, %d",
      options.backend ? options.backend : "NULL", options.n_threads, options.device);
  options.backend = "gpu";
  EXPECT_CONTEXT_REFUSED(&options, TPMG_ERROR_ARGUMENT, "backend gpu");
  options.backend = "cpu/fast";
  EXPECT_CONTEXT_REFUSED(&options, TPMG_ERROR_UNSUPPORTED, "backend cpu/fast");
  options = tpmg_context_options_default();
  options.n_threads = -3;
  EXPECT_CONTEXT_REFUSED(&options, TPMG_ERROR_ARGUMENT, "-3 threads");
  int available = 1;
  EXPECT_OK(NULL, tpmg_backend_available("cuda", &available));
  if (!available) {
    options = tpmg_context_options_default();
    options.backend = "cuda";
    EXPECT_CONTEXT_REFUSED(&options, TPMG_ERROR_UNSUPPORTED, "CUDA unavailable");
  }
  tpmg_context *ctx = NULL;
  EXPECT_ARG(NULL, tpmg_context_destroy(NULL), NULL);
  EXPECT_OK(NULL, tpmg_context_destroy(&ctx));
}

/* How a context spreads over ranks: whole_level_dofs and overlap. */
static void context_distribution_errors(void) {
  REF_CHECK(tpmg_context_options_default().whole_level_dofs == -1,
            "tpmg_context_options_default: whole_level_dofs %lld, expected -1 (the backend's)",
            (long long)tpmg_context_options_default().whole_level_dofs);
  const tpmg_index bad_whole[] = {-2, TPMG_MAX_WHOLE_LEVEL_DOFS + 1};
  for (int b = 0; b < 2; ++b) {
    tpmg_context_options options = tpmg_context_options_default();
    options.whole_level_dofs = bad_whole[b];
    char what[64];
    snprintf(what, sizeof(what), "whole_level_dofs %lld", (long long)bad_whole[b]);
    EXPECT_CONTEXT_REFUSED(&options, TPMG_ERROR_ARGUMENT, what);
  }
  REF_CHECK(tpmg_context_options_default().overlap == 1,
            "tpmg_context_options_default: overlap %d, expected 1",
            tpmg_context_options_default().overlap);
  const int bad_overlap[] = {-1, 2};
  for (int b = 0; b < 2; ++b) {
    tpmg_context_options options = tpmg_context_options_default();
    options.overlap = bad_overlap[b];
    char what[64];
    snprintf(what, sizeof(what), "overlap %d", bad_overlap[b]);
    EXPECT_CONTEXT_REFUSED(&options, TPMG_ERROR_ARGUMENT, what);
  }
}

static void context_query_errors(void) {
  tpmg_context *ctx = ref_context_create("cpu", 0);
  size_t bytes = 12345;
  const char *backend = SENTINEL;
  tpmg_memory_type memory = (tpmg_memory_type)9;
  int threads = -9;
  EXPECT_ARG(NULL, tpmg_context_memory(NULL, &bytes), NULL);
  EXPECT_ARG(ctx, tpmg_context_memory(ctx, NULL), NULL);
  EXPECT_ARG(NULL, tpmg_context_backend(NULL, &backend), NULL);
  EXPECT_ARG(ctx, tpmg_context_backend(ctx, NULL), NULL);
  EXPECT_ARG(NULL, tpmg_context_memory_type(NULL, &memory), NULL);
  EXPECT_ARG(ctx, tpmg_context_memory_type(ctx, NULL), NULL);
  EXPECT_ARG(NULL, tpmg_context_threads(NULL, &threads), NULL);
  EXPECT_ARG(ctx, tpmg_context_threads(ctx, NULL), NULL);
  EXPECT_ARG(NULL, tpmg_context_synchronize(NULL), NULL);
  REF_CHECK(bytes == 12345 && (void *)backend == SENTINEL && memory == (tpmg_memory_type)9 &&
                threads == -9,
            "context queries changed their outputs on failure");
  EXPECT_OK(ctx, tpmg_context_backend(ctx, &backend));
  REF_CHECK(strcmp(backend, "cpu") == 0, "tpmg_context_backend: expected cpu, got %s", backend);
  EXPECT_OK(ctx, tpmg_context_memory_type(ctx, &memory));
  REF_CHECK(memory == TPMG_MEMORY_HOST, "tpmg_context_memory_type: expected HOST, got %d",
            (int)memory);
  EXPECT_OK(ctx, tpmg_context_threads(ctx, &threads));
  REF_CHECK(threads >= 1, "tpmg_context_threads: expected >= 1, got %d", threads);
  EXPECT_OK(ctx, tpmg_context_synchronize(ctx));
  const char *msg = tpmg_context_last_error(ctx);
  REF_CHECK(msg != NULL, "tpmg_context_last_error returned NULL");
  EXPECT_OK(ctx, tpmg_context_destroy(&ctx));
  REF_CHECK(ctx == NULL, "tpmg_context_destroy did not set *ctx = NULL");
}

/* The stopwatch (an end mark needs seconds and a start mark) and the device
 * limits, on a context of their own: it starts without a start mark. */
static void stopwatch_errors(void) {
  tpmg_context *ctx = ref_context_create("cpu", 0);
  double seconds = -7;
  EXPECT_ARG(NULL, tpmg_context_stopwatch(NULL, 1, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_context_stopwatch(ctx, 0, &seconds), "without a start");
  EXPECT_OK(ctx, tpmg_context_stopwatch(ctx, 1, NULL));
  EXPECT_ARG(ctx, tpmg_context_stopwatch(ctx, 0, NULL), "seconds");
  REF_CHECK(seconds == -7, "tpmg_context_stopwatch changed its output on failure: %g", seconds);
  EXPECT_OK(ctx, tpmg_context_stopwatch(ctx, 0, &seconds));
  REF_CHECK(seconds >= 0 && seconds < 60, "tpmg_context_stopwatch: %g s, expected in [0, 60)",
            seconds);
  EXPECT_ARG(ctx, tpmg_context_stopwatch(ctx, 0, &seconds), "without a start");
  tpmg_device_limits limits = {-7, -7, -7};
  EXPECT_ARG(NULL, tpmg_context_measure_limits(NULL, &limits), NULL);
  EXPECT_ARG(ctx, tpmg_context_measure_limits(ctx, NULL), NULL);
  REF_CHECK(limits.shared_bytes == -7, "tpmg_context_measure_limits changed its output on failure");
  EXPECT_OK(ctx, tpmg_context_stopwatch(ctx, 1, NULL));
  EXPECT_OK(ctx, tpmg_context_measure_limits(ctx, &limits));
  /* the limit loops drop a start mark */
  EXPECT_ARG(ctx, tpmg_context_stopwatch(ctx, 0, &seconds), "without a start");
  /* the CPU measures its FMA loop (a positive, finite rate) and has no shared memory */
  REF_CHECK(isnan(limits.shared_bytes) && isfinite(limits.flops_double) &&
                limits.flops_double > 0 && isfinite(limits.flops_float) && limits.flops_float > 0,
            "tpmg_context_measure_limits on the CPU: expected NaN and two positive rates, got %g "
            "%g %g",
            limits.shared_bytes, limits.flops_double, limits.flops_float);
  EXPECT_OK(ctx, tpmg_context_destroy(&ctx));
}

/* ---- vectors ------------------------------------------------------------------ */

/* A vector of 10 doubles, and host = 1..10 (not uploaded). */
static void *vector_create(tpmg_context *ctx, double host[10]) {
  void *v = NULL;
  EXPECT_OK(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, 10, &v));
  for (int i = 0; i < 10; i++)
    host[i] = i + 1;
  return v;
}

static void vector_create_errors(tpmg_context *ctx) {
  void *v = SENTINEL;
  EXPECT_ARG(NULL, tpmg_vector_create(NULL, TPMG_DOUBLE, 10, &v), NULL);
  EXPECT_ARG(ctx, tpmg_vector_create(ctx, (tpmg_precision)7, 10, &v), "7");
  EXPECT_ARG(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, -5, &v), "-5");
  EXPECT_ARG(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, 10, NULL), NULL);
  EXPECT(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, INT64_MAX, &v), TPMG_ERROR_MEMORY,
         TPMG_ERROR_MEMORY, NULL);
  UNCHANGED(v);
  /* valid calls still work */
  double host[10], result = -7;
  v = vector_create(ctx, host);
  EXPECT_OK(ctx, tpmg_vector_upload(ctx, TPMG_DOUBLE, 10, host, v));
  EXPECT_OK(ctx, tpmg_vector_dot(ctx, TPMG_DOUBLE, 10, v, v, &result));
  REF_CHECK(result == 385, "tpmg_vector_dot(1..10, 1..10): expected 385, got %.17g", result);
  EXPECT_ARG(ctx, tpmg_vector_destroy(ctx, NULL), NULL);
  EXPECT_OK(ctx, tpmg_vector_destroy(ctx, &v));
  REF_CHECK(v == NULL, "tpmg_vector_destroy did not set *v = NULL");
  EXPECT_OK(ctx, tpmg_vector_destroy(ctx, &v));
}

static void vector_copy_errors(tpmg_context *ctx) {
  double host[10];
  void *v = vector_create(ctx, host);
  EXPECT_ARG(NULL, tpmg_vector_upload(NULL, TPMG_DOUBLE, 10, host, v), NULL);
  EXPECT_ARG(ctx, tpmg_vector_upload(ctx, TPMG_DOUBLE, 10, NULL, v), NULL);
  EXPECT_ARG(ctx, tpmg_vector_upload(ctx, TPMG_DOUBLE, 10, host, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_vector_upload(ctx, TPMG_DOUBLE, -4, host, v), "-4");
  EXPECT_ARG(ctx, tpmg_vector_upload(ctx, (tpmg_precision)6, 10, host, v), "6");
  EXPECT_ARG(NULL, tpmg_vector_download(NULL, TPMG_DOUBLE, 10, v, host), NULL);
  EXPECT_ARG(ctx, tpmg_vector_download(ctx, TPMG_DOUBLE, 10, NULL, host), NULL);
  EXPECT_ARG(ctx, tpmg_vector_download(ctx, TPMG_DOUBLE, 10, v, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_vector_download(ctx, TPMG_DOUBLE, -4, v, host), "-4");
  EXPECT_ARG(NULL, tpmg_vector_set(NULL, TPMG_DOUBLE, 10, 1.0, v), NULL);
  EXPECT_ARG(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, 10, 1.0, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, -2, 1.0, v), "-2");
  EXPECT_ARG(ctx, tpmg_vector_set(ctx, (tpmg_precision)5, 10, 1.0, v), "5");
  EXPECT_ARG(NULL, tpmg_vector_convert(NULL, 10, TPMG_DOUBLE, v, TPMG_DOUBLE, v), NULL);
  EXPECT_ARG(ctx, tpmg_vector_convert(ctx, 10, TPMG_DOUBLE, NULL, TPMG_FLOAT, v), NULL);
  EXPECT_ARG(ctx, tpmg_vector_convert(ctx, 10, TPMG_DOUBLE, v, TPMG_FLOAT, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_vector_convert(ctx, 10, (tpmg_precision)3, v, TPMG_FLOAT, host), "3");
  EXPECT_ARG(ctx, tpmg_vector_convert(ctx, -6, TPMG_DOUBLE, v, TPMG_FLOAT, host), "-6");
  EXPECT_OK(ctx, tpmg_vector_destroy(ctx, &v));
}

static void vector_arithmetic_errors(tpmg_context *ctx) {
  double host[10], result = -7;
  void *v = vector_create(ctx, host);
  EXPECT_ARG(NULL, tpmg_vector_axpby(NULL, TPMG_DOUBLE, 10, 1.0, v, 1.0, v), NULL);
  EXPECT_ARG(ctx, tpmg_vector_axpby(ctx, TPMG_DOUBLE, 10, 1.0, NULL, 1.0, v), NULL);
  EXPECT_ARG(ctx, tpmg_vector_axpby(ctx, TPMG_DOUBLE, 10, 1.0, v, 1.0, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_vector_axpby(ctx, TPMG_DOUBLE, -8, 1.0, v, 1.0, v), "-8");
  EXPECT_ARG(NULL, tpmg_vector_dot(NULL, TPMG_DOUBLE, 10, v, v, &result), NULL);
  EXPECT_ARG(ctx, tpmg_vector_dot(ctx, TPMG_DOUBLE, 10, NULL, v, &result), NULL);
  EXPECT_ARG(ctx, tpmg_vector_dot(ctx, TPMG_DOUBLE, 10, v, NULL, &result), NULL);
  EXPECT_ARG(ctx, tpmg_vector_dot(ctx, TPMG_DOUBLE, 10, v, v, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_vector_dot(ctx, (tpmg_precision)4, 10, v, v, &result), "4");
  REF_CHECK(result == -7, "tpmg_vector_dot changed its output on failure: %g", result);
  EXPECT_OK(ctx, tpmg_vector_destroy(ctx, &v));
}

/* dots and axpys: m >= 1 vectors, none NULL, axpys' x_i other than y */
static void vector_dots_errors(tpmg_context *ctx) {
  double host[10];
  void *v = vector_create(ctx, host);
  const void *xs[2] = {v, v};
  const void *bad[2] = {v, NULL};
  double results[3] = {-7, -7, -7}, factors[2] = {1, 2}, norm2 = -7;
  EXPECT_ARG(NULL, tpmg_vector_dots(NULL, TPMG_DOUBLE, 10, 2, xs, v, results), NULL);
  EXPECT_ARG(ctx, tpmg_vector_dots(ctx, TPMG_DOUBLE, 10, 0, xs, v, results), "m = 0");
  EXPECT_ARG(ctx, tpmg_vector_dots(ctx, TPMG_DOUBLE, -3, 2, xs, v, results), "-3");
  EXPECT_ARG(ctx, tpmg_vector_dots(ctx, (tpmg_precision)4, 10, 2, xs, v, results), "4");
  EXPECT_ARG(ctx, tpmg_vector_dots(ctx, TPMG_DOUBLE, 10, 2, NULL, v, results), NULL);
  EXPECT_ARG(ctx, tpmg_vector_dots(ctx, TPMG_DOUBLE, 10, 2, bad, v, results), "x[1]");
  EXPECT_ARG(ctx, tpmg_vector_dots(ctx, TPMG_DOUBLE, 10, 2, xs, NULL, results), NULL);
  EXPECT_ARG(ctx, tpmg_vector_dots(ctx, TPMG_DOUBLE, 10, 2, xs, v, NULL), NULL);
  REF_CHECK(results[0] == -7 && results[1] == -7 && results[2] == -7,
            "tpmg_vector_dots changed its output on failure");
  EXPECT_ARG(NULL, tpmg_vector_axpys(NULL, TPMG_DOUBLE, 10, 2, factors, xs, host, &norm2), NULL);
  EXPECT_ARG(ctx, tpmg_vector_axpys(ctx, TPMG_DOUBLE, 10, -1, factors, xs, host, &norm2), "-1");
  EXPECT_ARG(ctx, tpmg_vector_axpys(ctx, TPMG_DOUBLE, -5, 2, factors, xs, host, &norm2), "-5");
  EXPECT_ARG(ctx, tpmg_vector_axpys(ctx, TPMG_DOUBLE, 10, 2, NULL, xs, host, &norm2), NULL);
  EXPECT_ARG(ctx, tpmg_vector_axpys(ctx, TPMG_DOUBLE, 10, 2, factors, NULL, host, &norm2), NULL);
  EXPECT_ARG(ctx, tpmg_vector_axpys(ctx, TPMG_DOUBLE, 10, 2, factors, bad, host, &norm2), "x[1]");
  EXPECT_ARG(ctx, tpmg_vector_axpys(ctx, TPMG_DOUBLE, 10, 2, factors, xs, NULL, &norm2), NULL);
  EXPECT_ARG(ctx, tpmg_vector_axpys(ctx, TPMG_DOUBLE, 10, 2, factors, xs, v, &norm2), "x[0]");
  REF_CHECK(norm2 == -7, "tpmg_vector_axpys changed its output on failure: %g", norm2);
  EXPECT_OK(ctx, tpmg_vector_destroy(ctx, &v));
}

/* axpys_mixed: float x_i for a double y, or equal precisions; x_i checked in theirs */
static void vector_axpys_mixed_errors(tpmg_context *ctx) {
  double host[10];
  void *v = vector_create(ctx, host);
  const void *xs[2] = {v, v};
  double factors[2] = {1, 2}, norm2 = -7;
  EXPECT_ARG(
      NULL,
      tpmg_vector_axpys_mixed(NULL, TPMG_DOUBLE, 10, 2, factors, TPMG_FLOAT, xs, host, &norm2),
      NULL);
  EXPECT_ARG(
      ctx, tpmg_vector_axpys_mixed(ctx, TPMG_FLOAT, 10, 2, factors, TPMG_DOUBLE, xs, host, &norm2),
      "only equal precisions, or float x_i for a double y");
  EXPECT_ARG(ctx,
             tpmg_vector_axpys_mixed(ctx, TPMG_DOUBLE, 10, 2, factors, (tpmg_precision)5, xs, host,
                                     &norm2),
             "x_i of precision 5");
  EXPECT_ARG(
      ctx, tpmg_vector_axpys_mixed(ctx, TPMG_DOUBLE, 10, 2, factors, TPMG_FLOAT, xs, host, &norm2),
      "tpmg_vector_axpys_mixed: x[i]: vector");
  EXPECT_ARG(ctx,
             tpmg_vector_axpys_mixed(ctx, TPMG_DOUBLE, 10, 2, factors, TPMG_DOUBLE, xs, v, &norm2),
             "x[0]");
  REF_CHECK(norm2 == -7, "tpmg_vector_axpys_mixed changed its output on failure: %g", norm2);
  EXPECT_OK(ctx, tpmg_vector_destroy(ctx, &v));
}

/* ---- grids ---------------------------------------------------------------------- */

static tpmg_grid_options grid_options(int dim, int degree, int level) {
  tpmg_grid_options o = tpmg_grid_options_default();
  o.dim = dim;
  o.degree = degree;
  o.fine_level = level;
  return o;
}

/* dimension, degree and level */
static void grid_size_errors(tpmg_context *ctx) {
  tpmg_grid_options defaults = tpmg_grid_options_default();
  REF_CHECK(defaults.dim == 3 && defaults.degree == 3 && defaults.fine_level == 4 &&
                defaults.cells[0] == 1 && defaults.cells[1] == 1 && defaults.cells[2] == 1 &&
                defaults.box[0] == 0 && defaults.box[1] == 1 && defaults.box[5] == 1,
            "tpmg_grid_options_default is not the documented 3D Q3 level 4 unit cube");
  tpmg_grid *grid = SENTINEL;
  tpmg_grid_options o = grid_options(2, 2, 2);
  EXPECT_ARG(NULL, tpmg_grid_create(NULL, &o, &grid), NULL);
  EXPECT_ARG(ctx, tpmg_grid_create(ctx, &o, NULL), NULL);
  o = grid_options(1, 2, 2);
  EXPECT_ARG(ctx, tpmg_grid_create(ctx, &o, &grid), "dim");
  o = grid_options(4, 2, 2);
  EXPECT_ARG(ctx, tpmg_grid_create(ctx, &o, &grid), "4");
  o = grid_options(2, 0, 2);
  EXPECT(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_ARGUMENT, TPMG_ERROR_UNSUPPORTED,
         "degree");
  o = grid_options(2, 11, 2);
  EXPECT(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_ARGUMENT, TPMG_ERROR_UNSUPPORTED, "11");
  o = grid_options(3, 9, 1);
  EXPECT(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_ARGUMENT, TPMG_ERROR_UNSUPPORTED, "9");
  o = grid_options(2, 2, 0);
  EXPECT_ARG(ctx, tpmg_grid_create(ctx, &o, &grid), "level");
  o = grid_options(2, 2, -2);
  EXPECT_ARG(ctx, tpmg_grid_create(ctx, &o, &grid), "-2");
  o = grid_options(2, 10, 31);
  EXPECT(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_MEMORY, TPMG_ERROR_ARGUMENT, NULL);
  o = grid_options(3, 8, 25);
  EXPECT(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_MEMORY, TPMG_ERROR_ARGUMENT, NULL);
  o = grid_options(2, 2, 40);
  EXPECT(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_ARGUMENT, TPMG_ERROR_MEMORY, "40");
  UNCHANGED(grid);
}

/* coarse cells and the box */
static void grid_shape_errors(tpmg_context *ctx) {
  tpmg_grid *grid = SENTINEL;
  tpmg_grid_options o = grid_options(2, 2, 2);
  o.cells[0] = 0;
  EXPECT_ARG(ctx, tpmg_grid_create(ctx, &o, &grid), "cells");
  o = grid_options(3, 2, 2);
  o.cells[2] = -3;
  EXPECT_ARG(ctx, tpmg_grid_create(ctx, &o, &grid), "-3");
  o = grid_options(2, 2, 2);
  o.box[2] = 0.75;
  o.box[3] = 0.25;
  EXPECT_ARG(ctx, tpmg_grid_create(ctx, &o, &grid), "0.75");
  o = grid_options(3, 2, 2);
  o.box[4] = o.box[5] = 0.5;
  EXPECT_ARG(ctx, tpmg_grid_create(ctx, &o, &grid), "0.5");
  o = grid_options(2, 2, 2);
  o.box[1] = NAN;
  EXPECT_ARG(ctx, tpmg_grid_create(ctx, &o, &grid), "nan");
  UNCHANGED(grid);
  grid = NULL;
  EXPECT_ARG(NULL, tpmg_grid_destroy(NULL), NULL);
  EXPECT_OK(ctx, tpmg_grid_destroy(&grid));
}

/* Coarse meshes of any size: level 0 with (101-2)^2 = 9801 interior DoFs, more
 * than TPMG_MAX_COARSE_DOFS (once refused by the grid), makes a grid, a coarse
 * solver and a solver. */
static void coarse_size_accepted(tpmg_context *ctx) {
  tpmg_grid_options o = grid_options(2, 10, 1);
  o.cells[0] = o.cells[1] = 10;
  tpmg_grid *grid = NULL;
  EXPECT_OK(ctx, tpmg_grid_create(ctx, &o, &grid));
  tpmg_index n0 = 0;
  EXPECT_OK(ctx, tpmg_grid_level_size(grid, 0, &n0, NULL));
  REF_CHECK(n0 == 101 * 101,
            "10 x 10 coarse cells of degree 10: expected %d DoFs on level 0, got %lld", 101 * 101,
            (long long)n0);
  tpmg_coarse *coarse = NULL;
  EXPECT_OK(ctx, tpmg_coarse_create(grid, TPMG_DOUBLE, &coarse));
  EXPECT_OK(ctx, tpmg_coarse_destroy(&coarse));
  tpmg_solver *solver = NULL;
  EXPECT_OK(ctx, tpmg_solver_create(grid, NULL, &solver));
  EXPECT_OK(ctx, tpmg_solver_destroy(&solver));
  EXPECT_OK(ctx, tpmg_grid_destroy(&grid));
}

/* Still refused: a coarse solver of more than 46340 interior points in one
 * direction (the dense 1D eigenproblems), here 2D Q1 with 46342 x 3 coarse
 * cells (no hidden level: 3 is odd), by every creation that builds one,
 * leaving no memory behind. */
static void coarse_size_errors(tpmg_context *ctx) {
  tpmg_grid_options o = grid_options(2, 1, 1);
  o.cells[0] = 46342;
  o.cells[1] = 3;
  tpmg_grid *grid = NULL;
  EXPECT_OK(ctx, tpmg_grid_create(ctx, &o, &grid));
  size_t before = 0, after = 0;
  EXPECT_OK(ctx, tpmg_context_memory(ctx, &before));
  tpmg_coarse *coarse = SENTINEL;
  EXPECT(ctx, tpmg_coarse_create(grid, TPMG_DOUBLE, &coarse), TPMG_ERROR_UNSUPPORTED,
         TPMG_ERROR_UNSUPPORTED, "46341");
  UNCHANGED(coarse);
  tpmg_multigrid *mg = SENTINEL;
  EXPECT(ctx, tpmg_multigrid_create(grid, NULL, &mg), TPMG_ERROR_UNSUPPORTED,
         TPMG_ERROR_UNSUPPORTED, "46341");
  UNCHANGED(mg);
  tpmg_solver *solver = SENTINEL;
  EXPECT(ctx, tpmg_solver_create(grid, NULL, &solver), TPMG_ERROR_UNSUPPORTED,
         TPMG_ERROR_UNSUPPORTED, "46341");
  UNCHANGED(solver);
  EXPECT_OK(ctx, tpmg_context_memory(ctx, &after));
  REF_CHECK(after == before, "refused coarse solvers changed the context memory from %zu to %zu",
            before, after);
  EXPECT_OK(ctx, tpmg_grid_destroy(&grid));
}

/* ---- the objects on a grid --------------------------------------------------------- */

/* What the object tests share: a 2D Q2 grid on 2 x 1 coarse cells, level 2
 * (17 x 9 DoFs), random a and b on level 2 and c on level 1. */
typedef struct {
  tpmg_grid *grid;
  tpmg_index n, n_c;
  double *a, *b, *c;
} fixture;

static fixture fixture_create(tpmg_context *ctx) {
  tpmg_grid_options o = grid_options(2, 2, 2);
  o.cells[0] = 2;
  fixture f = {NULL, 0, 0, NULL, NULL, NULL};
  REF_CALL(ctx, tpmg_grid_create(ctx, &o, &f.grid));
  REF_CALL(ctx, tpmg_grid_level_size(f.grid, 2, &f.n, NULL));
  REF_CALL(ctx, tpmg_grid_level_size(f.grid, 1, &f.n_c, NULL));
  f.a = ref_malloc(sizeof(double) * f.n);
  f.b = ref_malloc(sizeof(double) * f.n);
  f.c = ref_malloc(sizeof(double) * f.n_c);
  uint64_t seed = 700;
  ref_fill_random(&seed, f.n, f.a);
  ref_fill_random(&seed, f.n, f.b);
  ref_fill_random(&seed, f.n_c, f.c);
  return f;
}

static void fixture_destroy(tpmg_context *ctx, fixture *f) {
  free(f->c);
  free(f->b);
  free(f->a);
  EXPECT_OK(ctx, tpmg_grid_destroy(&f->grid));
  REF_CHECK(f->grid == NULL, "tpmg_grid_destroy did not set *grid = NULL");
}

static void grid_query_errors(tpmg_context *ctx, const fixture *f) {
  tpmg_grid *grid = f->grid;
  tpmg_index n = -1, n_1d[3] = {-1, -1, -1};
  tpmg_grid_options got = grid_options(9, 9, 9);
  tpmg_context *gctx = SENTINEL;
  EXPECT_ARG(NULL, tpmg_grid_get_options(NULL, &got), NULL);
  EXPECT_ARG(ctx, tpmg_grid_get_options(grid, NULL), NULL);
  REF_CHECK(got.dim == 9, "tpmg_grid_get_options changed its output on failure");
  EXPECT_OK(ctx, tpmg_grid_get_options(grid, &got));
  REF_CHECK(got.dim == 2 && got.degree == 2 && got.fine_level == 2 && got.cells[0] == 2,
            "tpmg_grid_get_options: expected dim 2 degree 2 level 2 cells[0] 2, got %d %d %d %d",
            got.dim, got.degree, got.fine_level, got.cells[0]);
  EXPECT_ARG(NULL, tpmg_grid_context(NULL, &gctx), NULL);
  EXPECT_ARG(ctx, tpmg_grid_context(grid, NULL), NULL);
  UNCHANGED(gctx);
  EXPECT_OK(ctx, tpmg_grid_context(grid, &gctx));
  REF_CHECK(gctx == ctx, "tpmg_grid_context: expected the grid's context");
  EXPECT_ARG(NULL, tpmg_grid_level_size(NULL, 0, &n, n_1d), NULL);
  EXPECT_ARG(ctx, tpmg_grid_level_size(grid, -1, &n, n_1d), "-1");
  EXPECT_ARG(ctx, tpmg_grid_level_size(grid, 3, &n, n_1d), "3");
  REF_CHECK(n == -1 && n_1d[0] == -1, "tpmg_grid_level_size changed its outputs on failure");
  EXPECT_OK(ctx, tpmg_grid_level_size(grid, 2, NULL, NULL));
  EXPECT_OK(ctx, tpmg_grid_level_size(grid, 2, &n, n_1d));
  REF_CHECK(n == 17 * 9 && n_1d[0] == 17 && n_1d[1] == 9 && n_1d[2] == 1,
            "tpmg_grid_level_size(2): expected 153 = 17 x 9 x 1, got %lld = %lld x %lld x %lld",
            (long long)n, (long long)n_1d[0], (long long)n_1d[1], (long long)n_1d[2]);
}

static void operator_errors(tpmg_context *ctx, const fixture *f) {
  tpmg_grid *grid = f->grid;
  double *a = f->a, *b = f->b;
  tpmg_operator *op = SENTINEL;
  EXPECT_ARG(NULL, tpmg_operator_create(NULL, 1, TPMG_DOUBLE, &op), NULL);
  EXPECT_ARG(ctx, tpmg_operator_create(grid, -1, TPMG_DOUBLE, &op), "-1");
  EXPECT_ARG(ctx, tpmg_operator_create(grid, 3, TPMG_DOUBLE, &op), "3");
  EXPECT_ARG(ctx, tpmg_operator_create(grid, 2, (tpmg_precision)5, &op), "5");
  EXPECT_ARG(ctx, tpmg_operator_create(grid, 2, TPMG_DOUBLE, NULL), NULL);
  UNCHANGED(op);
  op = NULL;
  EXPECT_OK(ctx, tpmg_operator_create(grid, 2, TPMG_DOUBLE, &op));
  EXPECT_ARG(NULL, tpmg_operator_apply(NULL, a, b), NULL);
  EXPECT_ARG(ctx, tpmg_operator_apply(op, NULL, b), NULL);
  EXPECT_ARG(ctx, tpmg_operator_apply(op, a, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_operator_apply(op, a, a), NULL);
  EXPECT_OK(ctx, tpmg_operator_apply(op, a, b));
  tpmg_work work = {"sentinel", -7, -7, -7, -7};
  EXPECT_ARG(NULL, tpmg_operator_work(NULL, &work), NULL);
  EXPECT_ARG(ctx, tpmg_operator_work(op, NULL), NULL);
  REF_CHECK(work.flops == -7 && strcmp(work.kernel, "sentinel") == 0,
            "tpmg_operator_work changed its output on failure");
  EXPECT_ARG(NULL, tpmg_operator_destroy(NULL), NULL);
  EXPECT_OK(ctx, tpmg_operator_destroy(&op));
  EXPECT_OK(ctx, tpmg_operator_destroy(&op));
}

static void smoother_errors(tpmg_context *ctx, const fixture *f) {
  tpmg_grid *grid = f->grid;
  double *a = f->a, *b = f->b;
  tpmg_smoother *s = SENTINEL;
  tpmg_smoother_options so = tpmg_smoother_options_default();
  REF_CHECK(so.variant == TPMG_SMOOTHER_FUSED,
            "tpmg_smoother_options_default: expected FUSED, got %d", (int)so.variant);
  EXPECT_ARG(NULL, tpmg_smoother_create(NULL, 1, TPMG_DOUBLE, NULL, &s), NULL);
  EXPECT_ARG(ctx, tpmg_smoother_create(grid, 0, TPMG_DOUBLE, NULL, &s), "level");
  EXPECT_ARG(ctx, tpmg_smoother_create(grid, 3, TPMG_DOUBLE, NULL, &s), "3");
  EXPECT_ARG(ctx, tpmg_smoother_create(grid, 1, (tpmg_precision)8, NULL, &s), "8");
  so.variant = (tpmg_smoother_variant)9;
  EXPECT_ARG(ctx, tpmg_smoother_create(grid, 1, TPMG_DOUBLE, &so, &s), "9");
  EXPECT_ARG(ctx, tpmg_smoother_create(grid, 1, TPMG_DOUBLE, NULL, NULL), NULL);
  UNCHANGED(s);
  s = NULL;
  EXPECT_OK(ctx, tpmg_smoother_create(grid, 2, TPMG_DOUBLE, NULL, &s));
  EXPECT_ARG(NULL, tpmg_smoother_apply(NULL, 0, a, b), NULL);
  EXPECT_ARG(ctx, tpmg_smoother_apply(s, 0, NULL, b), NULL);
  EXPECT_ARG(ctx, tpmg_smoother_apply(s, 0, a, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_smoother_apply(s, 0, a, a), NULL);
  EXPECT_OK(ctx, tpmg_smoother_apply(s, 1, a, b));
  tpmg_work work = {"sentinel", -7, -7, -7, -7};
  EXPECT_ARG(NULL, tpmg_smoother_work(NULL, &work), NULL);
  EXPECT_ARG(ctx, tpmg_smoother_work(s, NULL), NULL);
  REF_CHECK(work.flops == -7 && strcmp(work.kernel, "sentinel") == 0,
            "tpmg_smoother_work changed its output on failure");
  EXPECT_ARG(NULL, tpmg_smoother_destroy(NULL), NULL);
  EXPECT_OK(ctx, tpmg_smoother_destroy(&s));
  EXPECT_OK(ctx, tpmg_smoother_destroy(&s));
}

static void transfer_errors(tpmg_context *ctx, const fixture *f) {
  tpmg_grid *grid = f->grid;
  double *a = f->a, *c = f->c;
  tpmg_transfer *t = SENTINEL;
  EXPECT_ARG(NULL, tpmg_transfer_create(NULL, 1, TPMG_DOUBLE, &t), NULL);
  EXPECT_ARG(ctx, tpmg_transfer_create(grid, 0, TPMG_DOUBLE, &t), "level");
  EXPECT_ARG(ctx, tpmg_transfer_create(grid, 3, TPMG_DOUBLE, &t), "3");
  EXPECT_ARG(ctx, tpmg_transfer_create(grid, 2, (tpmg_precision)8, &t), "8");
  EXPECT_ARG(ctx, tpmg_transfer_create(grid, 2, TPMG_DOUBLE, NULL), NULL);
  UNCHANGED(t);
  t = NULL;
  EXPECT_OK(ctx, tpmg_transfer_create(grid, 2, TPMG_DOUBLE, &t));
  EXPECT_ARG(NULL, tpmg_transfer_prolongate_add(NULL, c, a), NULL);
  EXPECT_ARG(ctx, tpmg_transfer_prolongate_add(t, NULL, a), NULL);
  EXPECT_ARG(ctx, tpmg_transfer_prolongate_add(t, c, NULL), NULL);
  EXPECT_ARG(NULL, tpmg_transfer_restrict(NULL, a, c), NULL);
  EXPECT_ARG(ctx, tpmg_transfer_restrict(t, NULL, c), NULL);
  EXPECT_ARG(ctx, tpmg_transfer_restrict(t, a, NULL), NULL);
  EXPECT_OK(ctx, tpmg_transfer_restrict(t, a, c));
  EXPECT_ARG(NULL, tpmg_transfer_destroy(NULL), NULL);
  EXPECT_OK(ctx, tpmg_transfer_destroy(&t));
  EXPECT_OK(ctx, tpmg_transfer_destroy(&t));
}

static void multigrid_create_errors(tpmg_context *ctx, const fixture *f) {
  tpmg_grid *grid = f->grid;
  tpmg_multigrid *mg = SENTINEL;
  tpmg_multigrid_options mo = tpmg_multigrid_options_default();
  REF_CHECK(mo.precision == TPMG_DOUBLE && mo.smoother == TPMG_SMOOTHER_FUSED && mo.symmetric,
            "tpmg_multigrid_options_default is not double, FUSED, symmetric");
  EXPECT_ARG(NULL, tpmg_multigrid_create(NULL, NULL, &mg), NULL);
  EXPECT_ARG(ctx, tpmg_multigrid_create(grid, NULL, NULL), NULL);
  mo.precision = (tpmg_precision)4;
  EXPECT_ARG(ctx, tpmg_multigrid_create(grid, &mo, &mg), "4");
  mo = tpmg_multigrid_options_default();
  mo.smoother = (tpmg_smoother_variant)6;
  EXPECT_ARG(ctx, tpmg_multigrid_create(grid, &mo, &mg), "6");
  UNCHANGED(mg);
}

static void multigrid_apply_errors(tpmg_context *ctx, const fixture *f) {
  double *a = f->a, *b = f->b;
  tpmg_multigrid *mg = NULL;
  EXPECT_OK(ctx, tpmg_multigrid_create(f->grid, NULL, &mg));
  EXPECT_ARG(NULL, tpmg_multigrid_vcycle(NULL, a, b), NULL);
  EXPECT_ARG(ctx, tpmg_multigrid_vcycle(mg, NULL, b), NULL);
  EXPECT_ARG(ctx, tpmg_multigrid_vcycle(mg, a, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_multigrid_vcycle(mg, a, a), NULL);
  EXPECT_ARG(NULL, tpmg_multigrid_precondition(NULL, TPMG_DOUBLE, a, b), NULL);
  EXPECT_ARG(ctx, tpmg_multigrid_precondition(mg, TPMG_DOUBLE, NULL, b), NULL);
  EXPECT_ARG(ctx, tpmg_multigrid_precondition(mg, TPMG_DOUBLE, a, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_multigrid_precondition(mg, (tpmg_precision)7, a, b), "7");
  /* a double hierarchy takes double vectors only */
  EXPECT_ARG(ctx, tpmg_multigrid_precondition(mg, TPMG_FLOAT, a, b), NULL);
  EXPECT_ARG(NULL, tpmg_multigrid_fmg(NULL, TPMG_DOUBLE, a, b), NULL);
  EXPECT_ARG(ctx, tpmg_multigrid_fmg(mg, TPMG_DOUBLE, NULL, b), NULL);
  EXPECT_ARG(ctx, tpmg_multigrid_fmg(mg, TPMG_DOUBLE, a, NULL), NULL);
  EXPECT_ARG(ctx, tpmg_multigrid_fmg(mg, TPMG_FLOAT, a, b), NULL);
  EXPECT_OK(ctx, tpmg_multigrid_vcycle(mg, a, b));
  EXPECT_ARG(NULL, tpmg_multigrid_destroy(NULL), NULL);
  EXPECT_OK(ctx, tpmg_multigrid_destroy(&mg));
  EXPECT_OK(ctx, tpmg_multigrid_destroy(&mg));
}

static void solver_create_errors(tpmg_context *ctx, const fixture *f) {
  tpmg_grid *grid = f->grid;
  tpmg_solver *sv = SENTINEL;
  tpmg_solver_options sopt = tpmg_solver_options_default();
  REF_CHECK(sopt.type == TPMG_SOLVER_FMG_GMRES && sopt.arithmetic == TPMG_ARITHMETIC_MIXED &&
                sopt.smoother == TPMG_SMOOTHER_FUSED && sopt.tolerance == 1e-9 &&
                sopt.max_iterations == 100 && sopt.restart == 30 && sopt.monitor == NULL &&
                sopt.preconditioning == TPMG_PRECONDITION_RIGHT,
            "tpmg_solver_options_default is not FMG-GMRES(30), right, mixed, FUSED, 1e-9, 100");
  EXPECT_ARG(NULL, tpmg_solver_create(NULL, NULL, &sv), NULL);
  EXPECT_ARG(ctx, tpmg_solver_create(grid, NULL, NULL), NULL);
  sopt.type = (tpmg_solver_type)9;
  EXPECT_ARG(ctx, tpmg_solver_create(grid, &sopt, &sv), "9");
  sopt = tpmg_solver_options_default();
  sopt.arithmetic = (tpmg_arithmetic)8;
  EXPECT_ARG(ctx, tpmg_solver_create(grid, &sopt, &sv), "8");
  sopt = tpmg_solver_options_default();
  sopt.smoother = (tpmg_smoother_variant)7;
  EXPECT_ARG(ctx, tpmg_solver_create(grid, &sopt, &sv), "7");
  sopt = tpmg_solver_options_default();
  sopt.tolerance = -0.5;
  EXPECT_ARG(ctx, tpmg_solver_create(grid, &sopt, &sv), "-0.5");
  sopt.tolerance = 0;
  EXPECT_ARG(ctx, tpmg_solver_create(grid, &sopt, &sv), "tolerance");
  sopt.tolerance = NAN;
  EXPECT_ARG(ctx, tpmg_solver_create(grid, &sopt, &sv), "nan");
  sopt = tpmg_solver_options_default();
  sopt.max_iterations = -4;
  EXPECT_ARG(ctx, tpmg_solver_create(grid, &sopt, &sv), "-4");
  sopt = tpmg_solver_options_default();
  sopt.type = TPMG_SOLVER_GMRES;
  sopt.restart = 0;
  EXPECT_ARG(ctx, tpmg_solver_create(grid, &sopt, &sv), "restart");
  UNCHANGED(sv);
}

static void solver_query_errors(tpmg_context *ctx, const fixture *f) {
  tpmg_solver *sv = NULL;
  EXPECT_OK(ctx, tpmg_solver_create(f->grid, NULL, &sv));
  int restart = -5;
  EXPECT_ARG(NULL, tpmg_solver_restart(NULL, &restart), NULL);
  EXPECT_ARG(ctx, tpmg_solver_restart(sv, NULL), NULL);
  REF_CHECK(restart == -5, "tpmg_solver_restart changed its output on failure");
  EXPECT_OK(ctx, tpmg_solver_restart(sv, &restart));
  REF_CHECK(restart >= 1 && restart <= 30, "tpmg_solver_restart: expected 1..30, got %d", restart);
  size_t solver_bytes = 7;
  EXPECT_ARG(NULL, tpmg_solver_memory(NULL, &solver_bytes), NULL);
  EXPECT_ARG(ctx, tpmg_solver_memory(sv, NULL), "bytes");
  REF_CHECK(solver_bytes == 7, "tpmg_solver_memory changed its output on failure");
  EXPECT_OK(ctx, tpmg_solver_memory(sv, &solver_bytes));
  REF_CHECK(solver_bytes > 0, "tpmg_solver_memory: expected > 0 bytes, got %zu", solver_bytes);
  EXPECT_OK(ctx, tpmg_solver_destroy(&sv));
}

static void solver_solve_errors(tpmg_context *ctx, const fixture *f) {
  double *a = f->a, *b = f->b;
  tpmg_solver *sv = NULL;
  EXPECT_OK(ctx, tpmg_solver_create(f->grid, NULL, &sv));
  EXPECT_OK(ctx, tpmg_problem_rhs(f->grid, TPMG_RHS_ONE, TPMG_DOUBLE, a));
  tpmg_solver_result r;
  EXPECT_ARG(NULL, tpmg_solver_solve(NULL, a, b, &r), NULL);
  EXPECT_ARG(ctx, tpmg_solver_solve(sv, NULL, b, &r), NULL);
  EXPECT_ARG(ctx, tpmg_solver_solve(sv, a, NULL, &r), NULL);
  EXPECT_ARG(ctx, tpmg_solver_solve(sv, a, a, &r), NULL);
  for (tpmg_index i = 0; i < f->n; i++)
    b[i] = 0;
  EXPECT_OK(ctx, tpmg_solver_solve(sv, a, b, NULL)); /* result may be NULL */
  EXPECT_ARG(NULL, tpmg_solver_destroy(NULL), NULL);
  EXPECT_OK(ctx, tpmg_solver_destroy(&sv));
  EXPECT_OK(ctx, tpmg_solver_destroy(&sv));
}

static void problem_errors(tpmg_context *ctx, const fixture *f) {
  tpmg_grid *grid = f->grid;
  double *a = f->a, *b = f->b, err = -7;
  EXPECT_ARG(NULL, tpmg_problem_rhs(NULL, TPMG_RHS_ONE, TPMG_DOUBLE, a), NULL);
  EXPECT_ARG(ctx, tpmg_problem_rhs(grid, (tpmg_rhs)9, TPMG_DOUBLE, a), "9");
  EXPECT_ARG(ctx, tpmg_problem_rhs(grid, TPMG_RHS_ONE, (tpmg_precision)6, a), "6");
  EXPECT_ARG(ctx, tpmg_problem_rhs(grid, TPMG_RHS_ONE, TPMG_DOUBLE, NULL), NULL);
  EXPECT_ARG(NULL, tpmg_problem_l2_error(NULL, TPMG_RHS_SINE, TPMG_DOUBLE, b, &err), NULL);
  EXPECT_ARG(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_ONE, TPMG_DOUBLE, b, &err), NULL);
  EXPECT_ARG(ctx, tpmg_problem_l2_error(grid, (tpmg_rhs)9, TPMG_DOUBLE, b, &err), "9");
  EXPECT_ARG(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, (tpmg_precision)6, b, &err), "6");
  EXPECT_ARG(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_DOUBLE, NULL, &err), NULL);
  EXPECT_ARG(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b, NULL), NULL);
  REF_CHECK(err == -7, "tpmg_problem_l2_error changed its output on failure: %g", err);
  EXPECT_OK(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b, &err));
}

int main(void) {
  backend_available_errors();
  context_create_errors();
  context_distribution_errors();
  context_query_errors();
  stopwatch_errors();

  tpmg_context *ctx = ref_context_create("cpu", 0);
  vector_create_errors(ctx);
  vector_copy_errors(ctx);
  vector_arithmetic_errors(ctx);
  vector_dots_errors(ctx);
  vector_axpys_mixed_errors(ctx);
  grid_size_errors(ctx);
  grid_shape_errors(ctx);
  coarse_size_accepted(ctx);
  coarse_size_errors(ctx);

  fixture f = fixture_create(ctx);
  grid_query_errors(ctx, &f);
  operator_errors(ctx, &f);
  smoother_errors(ctx, &f);
  transfer_errors(ctx, &f);
  multigrid_create_errors(ctx, &f);
  multigrid_apply_errors(ctx, &f);
  solver_create_errors(ctx, &f);
  solver_query_errors(ctx, &f);
  solver_solve_errors(ctx, &f);
  problem_errors(ctx, &f);
  fixture_destroy(ctx, &f);
  EXPECT_OK(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t700-api-errors");
}
