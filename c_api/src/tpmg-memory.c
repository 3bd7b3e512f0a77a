/* Memory accounting: every allocation of the library's backend memory and of
 * its larger host arrays goes through these functions, which check it against
 * the memory free and count it in the context (tpmg_context_memory) and per
 * thread (tpmg_thread_memory). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tpmg-impl.h"

/* Backend memory allocated less freed by this thread, modulo 2^64: the growth
 * over a span of calls is what this thread's calls took, whatever other
 * threads allocate meanwhile (tpmg_thread_memory). */
static _Thread_local size_t thread_bytes;

size_t tpmg_thread_memory(void) { return thread_bytes; }

void tpmg_format_bytes(size_t bytes, char *out, size_t size) {
  if (bytes >= 1000000)
    snprintf(out, size, "%.1f MB", (double)bytes / 1e6);
  else if (bytes >= 1000)
    snprintf(out, size, "%.1f kB", (double)bytes / 1e3);
  else
    snprintf(out, size, "%zu bytes", bytes);
}

/* Refused while anything made from the context lives: a grid (kept alive by
 * the objects using it, see tpmg_grid_release), a vector, or other backend
 * memory. Freeing the context then would leave those dangling. */
tpmg_status tpmg_malloc(tpmg_context *ctx, size_t bytes, const char *what, void **ptr) {
  *ptr = NULL;
  if (bytes == 0) return TPMG_SUCCESS;
  size_t available = SIZE_MAX;
  TPMG_CALL(ctx->ops->free_memory(ctx, &available));
  if (bytes > available) {
    char need[32], have[32];
    tpmg_format_bytes(bytes, need, sizeof need);
    tpmg_format_bytes(available, have, sizeof have);
    return tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                          "%s: needs %s (%zu bytes) of %s memory, %s (%zu bytes) available", what,
                          need, bytes, ctx->ops->name, have, available);
  }
  TPMG_CALL(ctx->ops->alloc(ctx, bytes, ptr));
  TPMG_CHECK(ctx, *ptr, TPMG_ERROR_MEMORY, "%s: allocating %zu bytes of %s memory failed", what,
             bytes, ctx->ops->name);
  atomic_fetch_add(&ctx->bytes, bytes);
  thread_bytes += bytes;
  return TPMG_SUCCESS;
}

void tpmg_free(tpmg_context *ctx, size_t bytes, void *ptr) {
  if (!ptr) return;
  ctx->ops->release(ctx, ptr);
  atomic_fetch_sub(&ctx->bytes, bytes);
  thread_bytes -= bytes;
}

tpmg_status tpmg_host_available(size_t *bytes) {
  *bytes = SIZE_MAX;
  FILE *file = fopen("/proc/meminfo", "r");
  if (!file) return TPMG_SUCCESS;
  char line[256];
  unsigned long long kib;
  while (fgets(line, sizeof(line), file))
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
      if (kib <= SIZE_MAX / 1024) *bytes = (size_t)kib * 1024;
      break;
    }
  fclose(file);
  return TPMG_SUCCESS;
}

tpmg_status tpmg_host_malloc(tpmg_context *ctx, size_t bytes, const char *what, void **ptr) {
  if (ctx->ops->memory == TPMG_MEMORY_HOST) return tpmg_malloc(ctx, bytes, what, ptr);
  *ptr = NULL;
  if (bytes == 0) return TPMG_SUCCESS;
  size_t available = SIZE_MAX;
  TPMG_CALL(tpmg_host_available(&available));
  char need[32], have[32];
  tpmg_format_bytes(bytes, need, sizeof need);
  tpmg_format_bytes(available, have, sizeof have);
  TPMG_CHECK(ctx, bytes <= available, TPMG_ERROR_MEMORY,
             "%s: needs %s (%zu bytes) of host memory, %s available", what, need, bytes, have);
  *ptr = malloc(bytes);
  TPMG_CHECK(ctx, *ptr, TPMG_ERROR_MEMORY, "%s: allocating %s (%zu bytes) of host memory failed",
             what, need, bytes);
  atomic_fetch_add(&ctx->host_bytes, bytes);
  return TPMG_SUCCESS;
}

void tpmg_host_free(tpmg_context *ctx, size_t bytes, void *ptr) {
  if (ctx->ops->memory == TPMG_MEMORY_HOST) {
    tpmg_free(ctx, bytes, ptr);
    return;
  }
  if (!ptr) return;
  free(ptr);
  atomic_fetch_sub(&ctx->host_bytes, bytes);
}
