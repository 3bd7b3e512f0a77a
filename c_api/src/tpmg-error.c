/* The error messages of a context: every failing call of the library sets one
 * through tpmg_error_set (tpmg-backend.h's TPMG_ERROR macro). */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tpmg-impl.h"

/* Each thread keeps the message of its last failure with the id of its
 * context, so that a thread reads its own message however many threads fail
 * on the context at once; the context keeps a copy of the last one of any
 * thread (under its lock) for the threads that had none there. */
static _Thread_local struct {
  uint64_t context;
  char message[sizeof(((tpmg_context *)0)->error)];
} thread_error;

tpmg_status tpmg_error_set(const tpmg_context *ctx, tpmg_status status, const char *file, int line,
                           const char *format, ...) {
  if (!ctx) return status;
  char *buffer = thread_error.message;
  const char *base = strrchr(file, '/');
  int used =
      snprintf(buffer, sizeof(thread_error.message), "%s:%d: ", base ? base + 1 : file, line);
  if (used < 0) used = 0;
  va_list args;
  va_start(args, format);
  vsnprintf(buffer + used, sizeof(thread_error.message) - (size_t)used, format, args);
  va_end(args);
  tpmg_error_replace((tpmg_context *)ctx, buffer);
  return status;
}

/* The message is the context's only mutable state visible through const. */
void tpmg_error_replace(tpmg_context *ctx, const char *message) {
  if (message != thread_error.message)
    snprintf(thread_error.message, sizeof(thread_error.message), "%s", message);
  thread_error.context = ctx->id;
  pthread_mutex_lock(&ctx->lock);
  memcpy(ctx->error, thread_error.message, sizeof(ctx->error));
  pthread_mutex_unlock(&ctx->lock);
}

const char *tpmg_context_last_error(const tpmg_context *ctx) {
  if (!ctx) return "tpmg: no context";
  return thread_error.context == ctx->id ? thread_error.message : ctx->error;
}
