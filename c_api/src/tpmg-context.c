/* The context: backend selection, error messages, memory accounting, and the
 * public vector operations, which validate and call through the backend table. */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

tpmg_status tpmg_error_set(const tpmg_context *ctx, tpmg_status status, const char *file, int line,
                           const char *format, ...) {
  if (!ctx) return status;
  /* The message is the context's only mutable state visible through const. */
  char *buffer = ((tpmg_context *)ctx)->error;
  const char *base = strrchr(file, '/');
  int used = snprintf(buffer, sizeof(((tpmg_context *)0)->error), "%s:%d: ", base ? base + 1 : file,
                      line);
  if (used < 0) used = 0;
  va_list args;
  va_start(args, format);
  vsnprintf(buffer + used, sizeof(((tpmg_context *)0)->error) - (size_t)used, format, args);
  va_end(args);
  return status;
}

size_t tpmg_precision_size(tpmg_precision precision) {
  return precision == TPMG_FLOAT ? sizeof(float) : sizeof(double);
}

tpmg_context_options tpmg_context_options_default(void) {
  tpmg_context_options options = {NULL, 0, 0};
  return options;
}

tpmg_status tpmg_context_create(const tpmg_context_options *options, tpmg_context **ctx) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  *ctx = NULL;
  tpmg_context_options opts = options ? *options : tpmg_context_options_default();
  const char *name = opts.backend ? opts.backend : "cpu";
  if (opts.n_threads < 0 || opts.device < 0)
    return TPMG_ERROR_ARGUMENT;

  tpmg_context *c = calloc(1, sizeof(*c));
  if (!c) return TPMG_ERROR_MEMORY;
  if (strlen(name) >= sizeof(c->backend)) {
    free(c);
    return TPMG_ERROR_ARGUMENT;
  }
  strcpy(c->backend, name);
  char *slash = strchr(c->backend, '/');
  if (slash) {
    *slash = '\0'; /* c->backend is the registry's name until init has run */
    c->variant = slash + 1;
  }
  int known = 0;
  c->ops = tpmg_backend_find(c->backend, &known);
  if (slash) *slash = '/';
  if (!c->ops) {
    free(c);
    return known ? TPMG_ERROR_UNSUPPORTED : TPMG_ERROR_ARGUMENT;
  }
  c->n_threads = opts.n_threads > 0 ? opts.n_threads : omp_get_max_threads();
  c->device = opts.device;
  tpmg_status status = c->ops->init(c);
  if (status != TPMG_SUCCESS) {
    free(c);
    return status;
  }
  *ctx = c;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_backend_available(const char *name, int *available) {
  if (!available || !name) return TPMG_ERROR_ARGUMENT;
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = name;
  tpmg_context *ctx = NULL;
  tpmg_status status = tpmg_context_create(&options, &ctx);
  tpmg_context_destroy(&ctx);
  if (status == TPMG_ERROR_ARGUMENT) return status;
  *available = status == TPMG_SUCCESS;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_destroy(tpmg_context **ctx) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  if (!*ctx) return TPMG_SUCCESS;
  (*ctx)->ops->finalize(*ctx);
  free(*ctx);
  *ctx = NULL;
  return TPMG_SUCCESS;
}

const char *tpmg_context_last_error(const tpmg_context *ctx) {
  return ctx ? ctx->error : "tpmg: no context";
}

tpmg_status tpmg_context_memory(const tpmg_context *ctx, size_t *bytes) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, bytes, TPMG_ERROR_ARGUMENT, "bytes is NULL");
  *bytes = ctx->bytes;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_backend(const tpmg_context *ctx, const char **name) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, name, TPMG_ERROR_ARGUMENT, "name is NULL");
  *name = ctx->backend;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_memory_type(const tpmg_context *ctx, tpmg_memory_type *type) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, type, TPMG_ERROR_ARGUMENT, "type is NULL");
  *type = ctx->ops->memory;
  return TPMG_SUCCESS;
}

int tpmg_backend_threads(const tpmg_context *ctx) { return ctx->n_threads; }

int tpmg_backend_device(const tpmg_context *ctx) { return ctx->device; }

const char *tpmg_backend_variant(const tpmg_context *ctx) { return ctx->variant; }

void *tpmg_backend_data(const tpmg_context *ctx) { return ctx->backend_data; }

void tpmg_backend_set_data(tpmg_context *ctx, void *data) { ctx->backend_data = data; }

tpmg_status tpmg_context_threads(const tpmg_context *ctx, int *n_threads) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, n_threads, TPMG_ERROR_ARGUMENT, "n_threads is NULL");
  *n_threads = ctx->n_threads;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_synchronize(tpmg_context *ctx) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  return ctx->ops->synchronize(ctx);
}

tpmg_status tpmg_malloc(tpmg_context *ctx, size_t bytes, const char *what, void **ptr) {
  *ptr = NULL;
  if (bytes == 0) return TPMG_SUCCESS;
  size_t available = SIZE_MAX;
  TPMG_CALL(ctx->ops->free_memory(ctx, &available));
  TPMG_CHECK(ctx, bytes <= available, TPMG_ERROR_MEMORY,
             "%s: needs %zu bytes of %s memory, %zu available", what, bytes, ctx->ops->name,
             available);
  TPMG_CALL(ctx->ops->alloc(ctx, bytes, ptr));
  TPMG_CHECK(ctx, *ptr, TPMG_ERROR_MEMORY, "%s: allocating %zu bytes of %s memory failed", what,
             bytes, ctx->ops->name);
  ctx->bytes += bytes;
  return TPMG_SUCCESS;
}

void tpmg_free(tpmg_context *ctx, size_t bytes, void *ptr) {
  if (!ptr) return;
  ctx->ops->release(ctx, ptr);
  ctx->bytes -= bytes;
}

/* ---- public vectors ----------------------------------------------------- */

/* A public vector keeps its byte count in a header word in front of its data,
 * so that destroy can account for it; 256 bytes keep the data aligned for
 * coalesced device access. */
#define VECTOR_HEADER 256

static tpmg_status check_vector_args(tpmg_context *ctx, tpmg_precision precision, tpmg_index n) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, precision == TPMG_DOUBLE || precision == TPMG_FLOAT, TPMG_ERROR_ARGUMENT,
             "unknown precision %d", (int)precision);
  TPMG_CHECK(ctx, n >= 0, TPMG_ERROR_ARGUMENT, "vector length %lld is negative", (long long)n);
  return TPMG_SUCCESS;
}

tpmg_status tpmg_vector_create(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                               void **v) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, v, TPMG_ERROR_ARGUMENT, "v is NULL");
  size_t scalar = tpmg_precision_size(precision);
  TPMG_CHECK(ctx, (uint64_t)n <= (SIZE_MAX - VECTOR_HEADER) / scalar, TPMG_ERROR_MEMORY,
             "vector length %lld overflows size_t", (long long)n);
  size_t bytes = VECTOR_HEADER + (size_t)n * scalar;
  void *block = NULL;
  TPMG_CALL(tpmg_malloc(ctx, bytes, "tpmg_vector_create", &block));
  /* the byte count lives in the first word of the block, in backend memory */
  uint64_t header = bytes;
  tpmg_status status = ctx->ops->upload(ctx, block, &header, sizeof(header));
  if (status == TPMG_SUCCESS && n > 0)
    status = ctx->ops->set(ctx, precision, n, 0.0, (char *)block + VECTOR_HEADER);
  if (status != TPMG_SUCCESS) {
    tpmg_free(ctx, bytes, block);
    return status;
  }
  *v = (char *)block + VECTOR_HEADER;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_vector_destroy(tpmg_context *ctx, void **v) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, v, TPMG_ERROR_ARGUMENT, "v is NULL");
  if (!*v) return TPMG_SUCCESS;
  char *block = (char *)*v - VECTOR_HEADER;
  uint64_t header = 0;
  TPMG_CALL(ctx->ops->download(ctx, &header, block, sizeof(header)));
  tpmg_free(ctx, (size_t)header, block);
  *v = NULL;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_vector_upload(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                               const void *host, void *v) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, host && v, TPMG_ERROR_ARGUMENT, "NULL vector (host %p, v %p)", host, v);
  return ctx->ops->upload(ctx, v, host, (size_t)n * tpmg_precision_size(precision));
}

tpmg_status tpmg_vector_download(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                                 const void *v, void *host) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, host && v, TPMG_ERROR_ARGUMENT, "NULL vector (v %p, host %p)", v, host);
  return ctx->ops->download(ctx, host, v, (size_t)n * tpmg_precision_size(precision));
}

tpmg_status tpmg_vector_set(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, double value,
                            void *v) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, v, TPMG_ERROR_ARGUMENT, "v is NULL");
  return ctx->ops->set(ctx, precision, n, value, v);
}

tpmg_status tpmg_vector_axpby(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, double a,
                              const void *x, double b, void *y) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, x && y, TPMG_ERROR_ARGUMENT, "NULL vector (x %p, y %p)", x, (void *)y);
  return ctx->ops->axpby(ctx, precision, n, a, x, b, y);
}

tpmg_status tpmg_vector_dot(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                            const void *x, const void *y, double *result) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, x && y && result, TPMG_ERROR_ARGUMENT, "NULL argument (x %p, y %p, result %p)",
             x, y, (void *)result);
  return ctx->ops->dot(ctx, precision, n, x, y, result);
}

tpmg_status tpmg_vector_convert(tpmg_context *ctx, tpmg_index n, tpmg_precision src_precision,
                                const void *src, tpmg_precision dst_precision, void *dst) {
  TPMG_CALL(check_vector_args(ctx, src_precision, n));
  TPMG_CALL(check_vector_args(ctx, dst_precision, n));
  TPMG_CHECK(ctx, src && dst, TPMG_ERROR_ARGUMENT, "NULL vector (src %p, dst %p)", src, dst);
  return ctx->ops->convert(ctx, n, src_precision, src, dst_precision, dst);
}

tpmg_status tpmg_vector_dots(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, int m,
                             const void *const *x, const void *y, double *result) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, m >= 1, TPMG_ERROR_ARGUMENT, "m = %d: must be >= 1", m);
  TPMG_CHECK(ctx, x && y && result, TPMG_ERROR_ARGUMENT, "NULL argument (x %p, y %p, result %p)",
             (const void *)x, y, (void *)result);
  for (int i = 0; i < m; ++i)
    TPMG_CHECK(ctx, x[i], TPMG_ERROR_ARGUMENT, "x[%d] is NULL", i);
  /* the backend takes TPMG_MULTI_MAX vectors at a time */
  double part[TPMG_MULTI_MAX + 1];
  for (int first = 0; first < m; first += TPMG_MULTI_MAX) {
    int count = m - first < TPMG_MULTI_MAX ? m - first : TPMG_MULTI_MAX;
    TPMG_CALL(ctx->ops->dots(ctx, precision, n, count, x + first, y, part));
    memcpy(result + first, part, sizeof(double) * (size_t)count);
    if (first + count == m)
      result[m] = part[count];
  }
  return TPMG_SUCCESS;
}

tpmg_status tpmg_vector_axpys(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, int m,
                              const double *a, const void *const *x, void *y, double *norm2) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, m >= 1, TPMG_ERROR_ARGUMENT, "m = %d: must be >= 1", m);
  TPMG_CHECK(ctx, a && x && y, TPMG_ERROR_ARGUMENT, "NULL argument (a %p, x %p, y %p)",
             (const void *)a, (const void *)x, y);
  for (int i = 0; i < m; ++i)
    TPMG_CHECK(ctx, x[i] && x[i] != y, TPMG_ERROR_ARGUMENT,
               "x[%d] = %p: must be a vector other than y", i, x[i]);
  for (int first = 0; first < m; first += TPMG_MULTI_MAX) {
    int count = m - first < TPMG_MULTI_MAX ? m - first : TPMG_MULTI_MAX;
    TPMG_CALL(ctx->ops->axpys(ctx, precision, n, count, a + first, x + first, y,
                              first + count == m ? norm2 : NULL));
  }
  return TPMG_SUCCESS;
}

/* ---- benchmark support --------------------------------------------------- */

tpmg_status tpmg_context_stopwatch(tpmg_context *ctx, int start, double *seconds) {
  if (!ctx)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, start || seconds, TPMG_ERROR_ARGUMENT, "seconds is NULL at the end mark");
  TPMG_CHECK(ctx, start || ctx->stopwatch_started, TPMG_ERROR_ARGUMENT,
             "stopwatch: an end mark without a start mark");
  TPMG_CALL(ctx->ops->stopwatch(ctx, start, seconds));
  ctx->stopwatch_started = start != 0;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_measure_limits(tpmg_context *ctx, tpmg_device_limits *limits) {
  if (!ctx)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, limits, TPMG_ERROR_ARGUMENT, "limits is NULL");
  tpmg_device_limits measured = {NAN, NAN, NAN};
  /* the loops are timed with the backend's stopwatch: a start mark is lost
   * (on every backend, so that callers see one behaviour) */
  ctx->stopwatch_started = 0;
  if (ctx->ops->measure_limits)
    TPMG_CALL(ctx->ops->measure_limits(ctx, &measured));
  *limits = measured;
  return TPMG_SUCCESS;
}
