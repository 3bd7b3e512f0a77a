/* t705-api-host-memory: what tpmg_context_memory counts on the CPU backend is
 * resident, and host copies fail as memory errors (Linux, glibc).
 * - tpmg_solver_create: the process's resident memory grows by at least 90%
 *   of the growth of tpmg_context_memory (the solver's vectors are written at
 *   allocation, so the checks against the host's available memory see them);
 *   freed again, the context is back to 0 bytes.
 * - With the address space limited to little more than what is mapped,
 *   tpmg_problem_l2_error of a double and of a float solution succeeds (it
 *   reads the vector in place, as the CPU backend's vectors are host memory)
 *   with the error of the unlimited call, and tpmg_problem_rhs in float
 *   (computed in double, then converted) fails with TPMG_ERROR_MEMORY, a
 *   message saying "memory" and the bytes it needed, and the context's memory
 *   unchanged. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* an address sanitizer reserves more address space than any limit allows */
#if defined(__SANITIZE_ADDRESS__)
#define T705_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define T705_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define T705_SANITIZED 1
#endif
#if defined(__linux__) && defined(__GLIBC__) && !defined(T705_SANITIZED)
#include <malloc.h>
#include <sys/resource.h>
#define T705_LIMIT_ADDRESS_SPACE 1
#endif

#include "reference.h"

static size_t context_memory(tpmg_context *ctx) {
  size_t bytes = 0;
  REF_CALL(ctx, tpmg_context_memory(ctx, &bytes));
  return bytes;
}

/* "name: N kB" of /proc/self/status, in bytes; 0 where it cannot be read. */
static size_t status_bytes(const char *name) {
  FILE *file = fopen("/proc/self/status", "r");
  if (!file)
    return 0;
  char line[256];
  size_t kib = 0, length = strlen(name);
  while (fgets(line, sizeof line, file))
    if (!strncmp(line, name, length) && line[length] == ':') {
      kib = (size_t)strtoull(line + length + 1, NULL, 10);
      break;
    }
  fclose(file);
  return kib * 1024;
}

static void resident(tpmg_context *ctx, tpmg_grid *grid) {
  size_t memory = context_memory(ctx), rss = status_bytes("VmRSS");
  if (rss == 0)
    return; /* no /proc: nothing to compare with */
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, NULL, &solver));
  const size_t counted = context_memory(ctx) - memory, grown = status_bytes("VmRSS") - rss;
  REF_CHECK(grown >= 0.9 * (double)counted,
            "tpmg_solver_create: context memory grew by %zu bytes, resident memory by %zu "
            "(expected at least 90%%)",
            counted, grown);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  REF_CHECK(context_memory(ctx) == memory, "after tpmg_solver_destroy: %zu bytes, expected %zu",
            context_memory(ctx), memory);
}

#ifdef T705_LIMIT_ADDRESS_SPACE
static int contains(const char *haystack, const char *needle) {
  return haystack && strstr(haystack, needle) != NULL;
}

static void limited(tpmg_context *ctx, tpmg_grid *grid, tpmg_index n) {
  /* every block mapped on its own (none reused from the heap), so that the
   * limit bites at once */
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  void *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL), *xf = NULL, *bf = NULL;
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, x));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_FLOAT, n, &xf));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_FLOAT, n, &bf));
  REF_CALL(ctx, tpmg_vector_convert(ctx, n, TPMG_DOUBLE, x, TPMG_FLOAT, xf));
  double expected = 0.0, expected_float = 0.0;
  REF_CALL(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_DOUBLE, x, &expected));
  REF_CALL(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_FLOAT, xf, &expected_float));
  const size_t memory = context_memory(ctx);

  struct rlimit old, limit;
  REF_CHECK(getrlimit(RLIMIT_AS, &old) == 0, "getrlimit failed");
  limit = old;
  limit.rlim_cur = status_bytes("VmSize") + sizeof(double) * (size_t)n / 4;
  REF_CHECK(setrlimit(RLIMIT_AS, &limit) == 0, "setrlimit failed");
  double error = -1.0, error_float = -1.0;
  tpmg_status s_double = tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_DOUBLE, x, &error);
  tpmg_status s_float = tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_FLOAT, xf, &error_float);
  tpmg_status s_rhs = tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_FLOAT, bf);
  char message[1024];
  snprintf(message, sizeof message, "%s", tpmg_context_last_error(ctx));
  REF_CHECK(setrlimit(RLIMIT_AS, &old) == 0, "restoring the address space limit failed");

  REF_CHECK(s_double == TPMG_SUCCESS && error == expected,
            "tpmg_problem_l2_error (double) under the limit: status %d, error %.17g, expected "
            "0 and %.17g",
            (int)s_double, error, expected);
  REF_CHECK(s_float == TPMG_SUCCESS && error_float == expected_float,
            "tpmg_problem_l2_error (float) under the limit: status %d, error %.17g, expected "
            "0 and %.17g",
            (int)s_float, error_float, expected_float);
  char bytes[32];
  snprintf(bytes, sizeof bytes, "%zu bytes", sizeof(double) * (size_t)n);
  REF_CHECK(s_rhs == TPMG_ERROR_MEMORY && contains(message, "memory") && contains(message, bytes),
            "tpmg_problem_rhs (float) under the limit: expected TPMG_ERROR_MEMORY with a message "
            "saying memory and \"%s\", got status %d, \"%s\"",
            bytes, (int)s_rhs, message);
  REF_CHECK(context_memory(ctx) == memory,
            "after the failed tpmg_problem_rhs: context memory %zu bytes, expected %zu",
            context_memory(ctx), memory);
  ref_vector_destroy(ctx, &bf);
  ref_vector_destroy(ctx, &xf);
  ref_vector_destroy(ctx, &x);
}
#endif

int main(void) {
  tpmg_context *ctx = ref_context_create("cpu", 2);
  const int cells[3] = {2, 2, 3};
  const int L = 3;
  tpmg_grid *grid = ref_grid_create(ctx, 3, 2, L, cells, NULL);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, L, &n, NULL));
  resident(ctx, grid);
#ifdef T705_LIMIT_ADDRESS_SPACE
  limited(ctx, grid, n);
#endif
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t705-api-host-memory");
}
