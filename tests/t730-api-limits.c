/* t730-api-limits: the documented bounds of tpmg.h hold at both ends. Just
 * inside each bound the call succeeds (the box's extreme corners give a grid
 * whose 1D eigenproblems pass their residual check at the highest degrees);
 * just outside it fails with TPMG_ERROR_ARGUMENT and a message that shows the
 * value given. A setup file that announces a vector larger than the file is
 * refused before the vector is allocated. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "reference.h"

/* The call's status is `want`; on failure its message contains `needle`. */
static void expect(tpmg_context *ctx, tpmg_status got, tpmg_status want, const char *needle,
                   const char *expr, int line) {
  if (got != want) {
    fprintf(stderr, "t730-api-limits.c:%d: %s: expected status %d, got %d (%s)\n", line, expr,
            (int)want, (int)got, ctx ? tpmg_context_last_error(ctx) : "");
    ref_failures++;
  } else if (needle && !strstr(tpmg_context_last_error(ctx), needle)) {
    fprintf(stderr,
            "t730-api-limits.c:%d: %s: expected the message to contain \"%s\", got \"%s\"\n", line,
            expr, needle, tpmg_context_last_error(ctx));
    ref_failures++;
  }
}
#define EXPECT(ctx, expr, want, needle) expect((ctx), (expr), (want), (needle), #expr, __LINE__)

static void threads(void) {
  tpmg_context_options options = tpmg_context_options_default();
  tpmg_context *ctx = NULL;
  options.n_threads = TPMG_MAX_THREADS + 1;
  EXPECT(NULL, tpmg_context_create(&options, &ctx), TPMG_ERROR_ARGUMENT, NULL);
  REF_CHECK(ctx == NULL, "a refused context is not NULL");
  options.n_threads = 100000;
  EXPECT(NULL, tpmg_context_create(&options, &ctx), TPMG_ERROR_ARGUMENT, NULL);
  options.n_threads = TPMG_MAX_THREADS;
  EXPECT(NULL, tpmg_context_create(&options, &ctx), TPMG_SUCCESS, NULL);
  int n = 0;
  EXPECT(ctx, tpmg_context_threads(ctx, &n), TPMG_SUCCESS, NULL);
  REF_CHECK(n == TPMG_MAX_THREADS, "threads: expected %d, got %d", TPMG_MAX_THREADS, n);
  tpmg_context_destroy(&ctx);
}

/* Create a grid with the given box in direction 0 (the unit interval in the
 * others) and expect `want`. */
static void box(tpmg_context *ctx, int dim, int degree, int level, double a, double b,
                tpmg_status want, const char *needle, int line) {
  tpmg_grid_options o = tpmg_grid_options_default();
  o.dim = dim;
  o.degree = degree;
  o.fine_level = level;
  o.box[0] = a;
  o.box[1] = b;
  tpmg_grid *grid = NULL;
  char expr[160];
  snprintf(expr, sizeof expr, "grid %dD Q%d level %d box [%.17g, %.17g]", dim, degree, level, a, b);
  expect(ctx, tpmg_grid_create(ctx, &o, &grid), want, needle, expr, line);
  REF_CHECK((grid != NULL) == (want == TPMG_SUCCESS), "%s: grid %p", expr, (void *)grid);
  tpmg_grid_destroy(&grid);
}
#define BOX(ctx, dim, degree, level, a, b, want, needle)                                           \
  box((ctx), (dim), (degree), (level), (a), (b), (want), (needle), __LINE__)

static void grids(tpmg_context *ctx) {
  /* inside: the largest coordinates, the narrowest cells (level 2: width
   * 4 TPMG_MIN_CELL_WIDTH), and the narrowest cells relative to the coordinates */
  for (int dim = 2; dim <= 3; ++dim) {
    int degree = dim == 2 ? TPMG_MAX_DEGREE_2D : TPMG_MAX_DEGREE_3D;
    BOX(ctx, dim, degree, 1, -TPMG_MAX_BOX_COORDINATE, TPMG_MAX_BOX_COORDINATE, TPMG_SUCCESS, NULL);
    BOX(ctx, dim, degree, 2, 0, 4 * TPMG_MIN_CELL_WIDTH, TPMG_SUCCESS, NULL);
    BOX(ctx, dim, degree, 1, 1e20, 1e20 + 2 * 1e-12 * 1e20 * 1.01, TPMG_SUCCESS, NULL);
    BOX(ctx, dim, 1, 1, TPMG_MAX_BOX_COORDINATE - 1e20, TPMG_MAX_BOX_COORDINATE, TPMG_SUCCESS,
        NULL);
  }
  /* outside, each message showing the value given */
  BOX(ctx, 3, 3, 2, 0, 1e-300, TPMG_ERROR_ARGUMENT, "[0, 1e-300]");
  BOX(ctx, 3, 3, 2, 0, 1e300, TPMG_ERROR_ARGUMENT, "1e+300]: coordinates beyond");
  BOX(ctx, 3, 3, 2, 1e308, 1.7e308, TPMG_ERROR_ARGUMENT, "[1e+308, 1.7e+308]");
  BOX(ctx, 3, 3, 2, -1.7e308, 1.7e308, TPMG_ERROR_ARGUMENT, "coordinates beyond");
  BOX(ctx, 2, 2, 2, 0, 2 * TPMG_MIN_CELL_WIDTH, TPMG_ERROR_ARGUMENT, "below the supported");
  BOX(ctx, 2, 2, 1, -2e30, 0, TPMG_ERROR_ARGUMENT, "[-2e+30, 0]");
  BOX(ctx, 2, 2, 1, 1, 1.0000000000000002, TPMG_ERROR_ARGUMENT, "[1, 1.0000000000000002]");
  BOX(ctx, 2, 2, 1, 1e6, 1e6 + 1e-7, TPMG_ERROR_ARGUMENT, "1000000.0000001]");
  BOX(ctx, 2, 2, 1, 0.1, 0.1, TPMG_ERROR_ARGUMENT, "[0.1, 0.1]: needs finite a < b");
  BOX(ctx, 2, 2, 1, -INFINITY, 0, TPMG_ERROR_ARGUMENT, "[-inf, 0]");
  /* levels */
  tpmg_grid_options o = tpmg_grid_options_default();
  o.fine_level = TPMG_MAX_FINE_LEVEL + 1;
  tpmg_grid *grid = NULL;
  EXPECT(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_ARGUMENT,
         "fine_level 31: must be 1..30");
  o.fine_level = TPMG_MAX_FINE_LEVEL; /* valid, but its vectors overflow */
  EXPECT(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_MEMORY, "overflow");
  o = tpmg_grid_options_default();
  o.dim = 2;
  o.degree = TPMG_MAX_DEGREE_2D + 1;
  EXPECT(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_ARGUMENT, "degree 11");
  o.dim = 3;
  o.degree = TPMG_MAX_DEGREE_3D + 1;
  EXPECT(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_ARGUMENT, "degree 9");
  REF_CHECK(grid == NULL, "a refused grid is not NULL");
}

static void solvers(tpmg_context *ctx) {
  tpmg_grid_options o = tpmg_grid_options_default();
  o.dim = 2;
  o.degree = 1;
  o.fine_level = 2;
  tpmg_grid *grid = NULL;
  REF_CALL(ctx, tpmg_grid_create(ctx, &o, &grid));
  tpmg_solver_options s = tpmg_solver_options_default();
  tpmg_solver *solver = NULL;
  s.type = TPMG_SOLVER_GMRES; /* the restart is GMRES's */
  s.restart = TPMG_MAX_RESTART + 1;
  EXPECT(ctx, tpmg_solver_create(grid, &s, &solver), TPMG_ERROR_ARGUMENT,
         "restart 1001: must be 1..1000");
  s.restart = TPMG_MAX_RESTART;
  EXPECT(ctx, tpmg_solver_create(grid, &s, &solver), TPMG_SUCCESS, NULL);
  tpmg_solver_destroy(&solver);
  s = tpmg_solver_options_default();
  s.tolerance = 1;
  EXPECT(ctx, tpmg_solver_create(grid, &s, &solver), TPMG_ERROR_ARGUMENT,
         "tolerance 1: must be in (0, 1)");
  s.tolerance = 1.0000000000000002; /* shown as given, not rounded to 1 */
  EXPECT(ctx, tpmg_solver_create(grid, &s, &solver), TPMG_ERROR_ARGUMENT,
         "tolerance 1.0000000000000002: must be in (0, 1)");
  s.tolerance = 1e-300;
  EXPECT(ctx, tpmg_solver_create(grid, &s, &solver), TPMG_SUCCESS, NULL);
  tpmg_solver_destroy(&solver);
  s = tpmg_solver_options_default();
  s.type = TPMG_SOLVER_CG;
  s.preconditioning = TPMG_PRECONDITION_LEFT;
  EXPECT(ctx, tpmg_solver_create(grid, &s, &solver), TPMG_ERROR_ARGUMENT, "GMRES");
  REF_CHECK(solver == NULL, "a refused solver is not NULL");
  tpmg_grid_destroy(&grid);
}

/* A 92-byte setup file whose header announces a 3D Q3 level-8 vector
 * (769^3 doubles, 3.6 GB): refused as truncated. With the address space
 * limited to 1 GiB, allocating first would fail with TPMG_ERROR_MEMORY
 * instead (not under AddressSanitizer, which needs its shadow memory). */
static void setup_file(tpmg_context *ctx) {
  char path[64];
  snprintf(path, sizeof path, "t730-api-limits.%ld.tpmg", (long)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "t730-api-limits: cannot write %s: %s\n", path, strerror(errno));
    ref_failures++;
    return;
  }
  fprintf(f, "tpmg-setup 1\ndim 3\ndegree 3\nlevel 8\ncells 1 1 1\nbox 0 1 0 1 0 1\nrhs sine\n"
             "vector 454756609\nend\n");
  fwrite("12345678", 1, 8, f);
  fclose(f);
#if !defined(__SANITIZE_ADDRESS__)
  struct rlimit old_limit, limit;
  int limited = getrlimit(RLIMIT_AS, &old_limit) == 0;
  if (limited) {
    limit = old_limit;
    limit.rlim_cur = (rlim_t)1 << 30;
    limited = setrlimit(RLIMIT_AS, &limit) == 0;
  }
#endif
  tpmg_grid *grid = NULL;
  tpmg_rhs rhs = TPMG_RHS_ONES;
  double *b = NULL;
  tpmg_status status = tpmg_setup_read(ctx, path, &grid, &rhs, &b);
#if !defined(__SANITIZE_ADDRESS__)
  if (limited)
    setrlimit(RLIMIT_AS, &old_limit);
#endif
  expect(ctx, status, TPMG_ERROR_ARGUMENT,
         "the vector is truncated: line 8 announces 454756609 doubles",
         "tpmg_setup_read(a short file with a 3.6 GB vector)", __LINE__);
  REF_CHECK(grid == NULL && b == NULL && rhs == TPMG_RHS_ONES,
            "a refused read changed its outputs");
  remove(path);
}

int main(void) {
  threads();
  tpmg_context *ctx = NULL;
  REF_CALL(ctx, tpmg_context_create(NULL, &ctx));
  grids(ctx);
  solvers(ctx);
  setup_file(ctx);
  tpmg_context_destroy(&ctx);
  return ref_exit_code("t730-api-limits");
}
