/* Public vectors: memory of the context's space that tpmg_vector_create
 * allocates, and the vector operations, which validate and call through the
 * backend table.
 *
 * Each context keeps a host-side registry of its vectors, pointer -> (length,
 * precision, bytes), an array sorted by address (a handful of vectors per
 * context, looked up by binary search). It lets tpmg_vector_destroy refuse a
 * pointer that is not one of this context's vectors (instead of reading a
 * header in front of it), tpmg_context_destroy count the live ones, and every
 * call that receives a vector check length and precision where the pointer is
 * registered; other pointers are borrowed memory and pass unchecked.
 *
 * Threads may create, destroy and pass vectors of one context at once: the
 * registry is read and changed under the context's lock, and lookups copy the
 * entry out, since another thread's insertion may move it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

size_t tpmg_precision_size(tpmg_precision precision) {
  return precision == TPMG_FLOAT ? sizeof(float) : sizeof(double);
}

typedef struct {
  const void *ptr;
  tpmg_index n;
  tpmg_precision precision;
  size_t bytes;
} vector_entry;

struct tpmg_vector_registry {
  vector_entry *entries; /* sorted by address */
  size_t count, capacity;
};

/* Index of the first entry whose address is >= ptr. */
static size_t lower_bound(const tpmg_vector_registry *r, const void *ptr) {
  size_t lo = 0, hi = r->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if ((uintptr_t)r->entries[mid].ptr < (uintptr_t)ptr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Under ctx->lock: the entry of ptr, or NULL. */
static vector_entry *find(const tpmg_context *ctx, const void *ptr) {
  tpmg_vector_registry *r = ctx->vectors;
  if (!r || !ptr)
    return NULL;
  size_t i = lower_bound(r, ptr);
  return i < r->count && r->entries[i].ptr == ptr ? &r->entries[i] : NULL;
}

/* A copy of ptr's entry in *entry: 1 if registered, else 0. */
static int lookup(tpmg_context *ctx, const void *ptr, vector_entry *entry) {
  pthread_mutex_lock(&ctx->lock);
  const vector_entry *e = find(ctx, ptr);
  if (e)
    *entry = *e;
  pthread_mutex_unlock(&ctx->lock);
  return e != NULL;
}

/* Under ctx->lock: room for one more entry; 0 if memory runs out (the
 * message is set by the caller, after the lock: tpmg_error_set takes it). */
static int reserve(tpmg_context *ctx) {
  tpmg_vector_registry *r = ctx->vectors;
  if (!r) {
    r = calloc(1, sizeof(*r));
    if (!r)
      return 0;
    ctx->vectors = r;
  }
  if (r->count < r->capacity)
    return 1;
  size_t capacity = r->capacity ? 2 * r->capacity : 16;
  if (capacity > SIZE_MAX / sizeof(vector_entry))
    return 0;
  vector_entry *entries = realloc(r->entries, capacity * sizeof(vector_entry));
  if (!entries)
    return 0;
  r->entries = entries;
  r->capacity = capacity;
  return 1;
}

/* Register entry. */
static tpmg_status insert(tpmg_context *ctx, const vector_entry *entry) {
  pthread_mutex_lock(&ctx->lock);
  const int room = reserve(ctx);
  size_t count = ctx->vectors ? ctx->vectors->count : 0;
  if (room) {
    tpmg_vector_registry *r = ctx->vectors;
    size_t i = lower_bound(r, entry->ptr);
    memmove(r->entries + i + 1, r->entries + i, (r->count - i) * sizeof(vector_entry));
    r->entries[i] = *entry;
    r->count++;
  }
  pthread_mutex_unlock(&ctx->lock);
  TPMG_CHECK(ctx, room, TPMG_ERROR_MEMORY,
             "growing the vector registry beyond %zu entries failed (out of host memory)", count);
  return TPMG_SUCCESS;
}

/* Unregister ptr: 1 with its entry in *entry if it was registered, else 0. */
static int erase(tpmg_context *ctx, const void *ptr, vector_entry *entry) {
  pthread_mutex_lock(&ctx->lock);
  vector_entry *e = find(ctx, ptr);
  if (e) {
    tpmg_vector_registry *r = ctx->vectors;
    size_t i = (size_t)(e - r->entries);
    *entry = *e;
    memmove(r->entries + i, r->entries + i + 1, (r->count - i - 1) * sizeof(vector_entry));
    r->count--;
  }
  pthread_mutex_unlock(&ctx->lock);
  return e != NULL;
}

size_t tpmg_vector_count(tpmg_context *ctx) {
  pthread_mutex_lock(&ctx->lock);
  size_t count = ctx->vectors ? ctx->vectors->count : 0;
  pthread_mutex_unlock(&ctx->lock);
  return count;
}

void tpmg_vector_registry_free(tpmg_context *ctx) {
  if (!ctx->vectors)
    return;
  free(ctx->vectors->entries);
  free(ctx->vectors);
  ctx->vectors = NULL;
}

static const char *precision_name(tpmg_precision precision) {
  return precision == TPMG_DOUBLE ? "double" : precision == TPMG_FLOAT ? "float" : "unknown";
}

tpmg_status tpmg_vector_check(tpmg_context *ctx, const char *what, const void *v,
                              tpmg_precision precision, tpmg_index n) {
  vector_entry e;
  if (!lookup(ctx, v, &e))
    return TPMG_SUCCESS;
  TPMG_CHECK(ctx, e.precision == precision, TPMG_ERROR_ARGUMENT,
             "%s: vector %p was created in %s, the call needs %s", what, v,
             precision_name(e.precision), precision_name(precision));
  TPMG_CHECK(ctx, e.n >= n, TPMG_ERROR_ARGUMENT,
             "%s: vector %p has %lld entries, the call needs %lld", what, v, (long long)e.n,
             (long long)n);
  return TPMG_SUCCESS;
}

tpmg_status tpmg_vector_check_pair(tpmg_context *ctx, const char *call, tpmg_precision precision,
                                   const char *name_a, const void *a, tpmg_index n_a,
                                   const char *name_b, const void *b, tpmg_index n_b) {
  char what[96];
  tpmg_status status = TPMG_SUCCESS;
  if (!a || !b || a == b)
    status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                            "%s: %s %p and %s %p must be distinct non-NULL vectors", call, name_a,
                            a, name_b, b);
  snprintf(what, sizeof what, "%s: %s", call, name_a);
  if (status == TPMG_SUCCESS) status = tpmg_vector_check(ctx, what, a, precision, n_a);
  snprintf(what, sizeof what, "%s: %s", call, name_b);
  if (status == TPMG_SUCCESS) status = tpmg_vector_check(ctx, what, b, precision, n_b);
  return tpmg_comm_agree(ctx, status);
}

static tpmg_status check_vector_args(tpmg_context *ctx, tpmg_precision precision, tpmg_index n) {
  if (!ctx)
    return TPMG_ERROR_ARGUMENT;
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
  TPMG_CHECK(ctx, (uint64_t)n <= SIZE_MAX / scalar, TPMG_ERROR_MEMORY,
             "vector length %lld overflows size_t", (long long)n);
  /* an empty vector still gets an address of its own, to be registered */
  vector_entry entry = {NULL, n, precision, n > 0 ? (size_t)n * scalar : scalar};
  void *block = NULL;
  TPMG_CALL(tpmg_malloc(ctx, entry.bytes, "tpmg_vector_create", &block));
  tpmg_status status = n > 0 ? ctx->ops->set(ctx, precision, n, 0.0, block) : TPMG_SUCCESS;
  entry.ptr = block;
  if (status == TPMG_SUCCESS)
    status = insert(ctx, &entry);
  if (status != TPMG_SUCCESS) {
    tpmg_free(ctx, entry.bytes, block);
    return status;
  }
  *v = block;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_vector_destroy(tpmg_context *ctx, void **v) {
  if (!ctx)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, v, TPMG_ERROR_ARGUMENT, "v is NULL");
  if (!*v)
    return TPMG_SUCCESS;
  vector_entry e;
  TPMG_CHECK(ctx, erase(ctx, *v, &e), TPMG_ERROR_ARGUMENT,
             "tpmg_vector_destroy: %p is not a live vector of this context (one made by "
             "tpmg_vector_create on it and not destroyed yet); nothing freed",
             *v);
  tpmg_free(ctx, e.bytes, *v);
  *v = NULL;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_vector_upload(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                               const void *host, void *v) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, host && v, TPMG_ERROR_ARGUMENT, "NULL vector (host %p, v %p)", host, v);
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_upload: v", v, precision, n));
  return ctx->ops->upload(ctx, v, host, (size_t)n * tpmg_precision_size(precision));
}

tpmg_status tpmg_vector_download(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                                 const void *v, void *host) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, host && v, TPMG_ERROR_ARGUMENT, "NULL vector (v %p, host %p)", v, host);
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_download: v", v, precision, n));
  return ctx->ops->download(ctx, host, v, (size_t)n * tpmg_precision_size(precision));
}

tpmg_status tpmg_vector_set(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, double value,
                            void *v) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, v, TPMG_ERROR_ARGUMENT, "v is NULL");
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_set: v", v, precision, n));
  return ctx->ops->set(ctx, precision, n, value, v);
}

tpmg_status tpmg_vector_axpby(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, double a,
                              const void *x, double b, void *y) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, x && y, TPMG_ERROR_ARGUMENT, "NULL vector (x %p, y %p)", x, (void *)y);
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_axpby: x", x, precision, n));
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_axpby: y", y, precision, n));
  return ctx->ops->axpby(ctx, precision, n, a, x, b, y);
}

tpmg_status tpmg_vector_dot(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                            const void *x, const void *y, double *result) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, x && y && result, TPMG_ERROR_ARGUMENT, "NULL argument (x %p, y %p, result %p)", x,
             y, (void *)result);
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_dot: x", x, precision, n));
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_dot: y", y, precision, n));
  return ctx->ops->dot(ctx, precision, n, x, y, result);
}

tpmg_status tpmg_vector_convert(tpmg_context *ctx, tpmg_index n, tpmg_precision src_precision,
                                const void *src, tpmg_precision dst_precision, void *dst) {
  TPMG_CALL(check_vector_args(ctx, src_precision, n));
  TPMG_CALL(check_vector_args(ctx, dst_precision, n));
  TPMG_CHECK(ctx, src && dst, TPMG_ERROR_ARGUMENT, "NULL vector (src %p, dst %p)", src, dst);
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_convert: src", src, src_precision, n));
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_convert: dst", dst, dst_precision, n));
  return ctx->ops->convert(ctx, n, src_precision, src, dst_precision, dst);
}

tpmg_status tpmg_vector_dots(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, int m,
                             const void *const *x, const void *y, double *result) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx, m >= 1, TPMG_ERROR_ARGUMENT, "m = %d: must be >= 1", m);
  TPMG_CHECK(ctx, x && y && result, TPMG_ERROR_ARGUMENT, "NULL argument (x %p, y %p, result %p)",
             (const void *)x, y, (void *)result);
  for (int i = 0; i < m; ++i) {
    TPMG_CHECK(ctx, x[i], TPMG_ERROR_ARGUMENT, "x[%d] is NULL", i);
    TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_dots: x[i]", x[i], precision, n));
  }
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_vector_dots: y", y, precision, n));
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

/* tpmg_vector_axpys and tpmg_vector_axpys_mixed: `what` names the call. */
static tpmg_status vector_axpys(tpmg_context *ctx, const char *what, tpmg_precision precision,
                                tpmg_index n, int m, const double *a, tpmg_precision x_precision,
                                const void *const *x, void *y, double *norm2) {
  TPMG_CALL(check_vector_args(ctx, precision, n));
  TPMG_CHECK(ctx,
             x_precision == precision || (x_precision == TPMG_FLOAT && precision == TPMG_DOUBLE),
             TPMG_ERROR_ARGUMENT,
             "%s: x_i of precision %d for y of precision %d (only equal precisions, or float x_i "
             "for a double y)",
             what, (int)x_precision, (int)precision);
  TPMG_CHECK(ctx, m >= 1, TPMG_ERROR_ARGUMENT, "m = %d: must be >= 1", m);
  TPMG_CHECK(ctx, a && x && y, TPMG_ERROR_ARGUMENT, "NULL argument (a %p, x %p, y %p)",
             (const void *)a, (const void *)x, y);
  char name[64];
  for (int i = 0; i < m; ++i) {
    TPMG_CHECK(ctx, x[i] && x[i] != y, TPMG_ERROR_ARGUMENT,
               "x[%d] = %p: must be a vector other than y", i, x[i]);
    snprintf(name, sizeof name, "%s: x[i]", what);
    TPMG_CALL(tpmg_vector_check(ctx, name, x[i], x_precision, n));
  }
  snprintf(name, sizeof name, "%s: y", what);
  TPMG_CALL(tpmg_vector_check(ctx, name, y, precision, n));
  for (int first = 0; first < m; first += TPMG_MULTI_MAX) {
    int count = m - first < TPMG_MULTI_MAX ? m - first : TPMG_MULTI_MAX;
    TPMG_CALL(ctx->ops->axpys(ctx, precision, n, count, a + first, x_precision, x + first, y,
                              first + count == m ? norm2 : NULL));
  }
  return TPMG_SUCCESS;
}

tpmg_status tpmg_vector_axpys(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, int m,
                              const double *a, const void *const *x, void *y, double *norm2) {
  return vector_axpys(ctx, "tpmg_vector_axpys", precision, n, m, a, precision, x, y, norm2);
}

tpmg_status tpmg_vector_axpys_mixed(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                                    int m, const double *a, tpmg_precision x_precision,
                                    const void *const *x, void *y, double *norm2) {
  return vector_axpys(ctx, "tpmg_vector_axpys_mixed", precision, n, m, a, x_precision, x, y, norm2);
}
