/* The error message of a context: every failing call of the library sets it
 * through tpmg_error_set (tpmg-backend.h's TPMG_ERROR macro). */
#include <stdarg.h>
#include <stdio.h>
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
