/* t721-api-describe: tpmg_solver_describe's JSON object.
 * - its keys in the documented order, the option values by name, null before
 *   the first solve;
 * - after solves, the values those solves returned (tpmg_solver_result,
 *   tpmg_solver_restart), exactly: numbers read back as the same double;
 *   preconditioning and restart null for a solver without GMRES;
 * - snprintf's contract: the whole length from a NULL text of size 0, for
 *   every smaller size the text's first size - 1 bytes and a NUL, nothing
 *   beyond size written;
 * - a NULL solver, or a NULL text with size > 0, refused with nothing written. */
#include <stdlib.h>
#include <string.h>

#include "reference.h"

static const char *const keys[] = {"solver",
                                   "arithmetic",
                                   "smoother",
                                   "preconditioning",
                                   "tolerance",
                                   "max_iterations",
                                   "restart",
                                   "solves",
                                   "iterations",
                                   "converged",
                                   "residual_norm_0",
                                   "residual_norm",
                                   "residual_reduction"};
#define N_KEYS (sizeof keys / sizeof keys[0])

/* The whole description, in a buffer of its length from a first call. */
static char *describe(tpmg_context *ctx, const tpmg_solver *solver) {
  size_t length = 0;
  REF_CALL(ctx, tpmg_solver_describe(solver, NULL, 0, &length));
  char *text = ref_malloc(length + 1);
  size_t again = 0;
  REF_CALL(ctx, tpmg_solver_describe(solver, text, length + 1, &again));
  REF_CHECK(again == length && strlen(text) == length,
            "describe: length %zu from size 0, then %zu and a text of %zu", length, again,
            strlen(text));
  return text;
}

/* The raw value of `key` in the flat object text (up to the next ',' or '}';
 * the values here hold neither), or "" (a failed check) where it is missing
 * or out of order: each key must come after `*from`. */
static const char *value_of(const char *text, const char *key, const char **from, char *out,
                            size_t size) {
  char quoted[64];
  snprintf(quoted, sizeof quoted, "%s\"%s\":", *from == text ? "{" : ",", key);
  const char *at = strstr(*from, quoted);
  out[0] = '\0';
  REF_CHECK(at == *from, "describe: key \"%s\" missing or not next in %s", key, text);
  if (at != *from)
    return out;
  at += strlen(quoted);
  size_t n = strcspn(at, ",}");
  snprintf(out, size, "%.*s", (int)n, at);
  *from = at + n;
  return out;
}

typedef struct {
  char v[N_KEYS][64];
} values;

/* Every key in order, and nothing after the last one but '}'. */
static values parse(const char *text) {
  values got;
  const char *from = text;
  for (size_t i = 0; i < N_KEYS; ++i)
    value_of(text, keys[i], &from, got.v[i], sizeof got.v[i]);
  REF_CHECK(strcmp(from, "}") == 0, "describe: '%s' after the last key in %s", from, text);
  return got;
}

static void expect_string(const values *got, int i, const char *want) {
  char quoted[64] = "null";
  if (want)
    snprintf(quoted, sizeof quoted, "\"%s\"", want);
  REF_CHECK(strcmp(got->v[i], quoted) == 0, "describe: %s: expected %s, got %s", keys[i], quoted,
            got->v[i]);
}

static void expect_number(const values *got, int i, double want) {
  char *end = NULL;
  double read = strtod(got->v[i], &end);
  REF_CHECK(end != got->v[i] && *end == '\0' && read == want,
            "describe: %s: expected %.17g, got %s", keys[i], want, got->v[i]);
}

static void expect_solved(tpmg_context *ctx, const tpmg_solver *solver,
                          const tpmg_solver_options *o, int gmres, long long solves,
                          const tpmg_solver_result *r) {
  char *text = describe(ctx, solver);
  values got = parse(text);
  expect_string(&got, 0, tpmg_solver_type_name(o->type));
  expect_string(&got, 1, tpmg_arithmetic_name(o->arithmetic));
  expect_string(&got, 2, tpmg_smoother_variant_name(o->smoother));
  expect_string(&got, 3, gmres ? tpmg_preconditioning_name(o->preconditioning) : NULL);
  expect_number(&got, 4, o->tolerance);
  expect_number(&got, 5, o->max_iterations);
  int restart = -1;
  REF_CALL(ctx, tpmg_solver_restart(solver, &restart));
  if (gmres)
    expect_number(&got, 6, restart);
  else
    expect_string(&got, 6, NULL);
  expect_number(&got, 7, (double)solves);
  if (!r) {
    for (int i = 8; i < (int)N_KEYS; ++i)
      expect_string(&got, i, NULL);
  } else {
    expect_number(&got, 8, r->iterations);
    REF_CHECK(strcmp(got.v[9], r->converged ? "true" : "false") == 0,
              "describe: converged: expected %d, got %s", r->converged, got.v[9]);
    expect_number(&got, 10, r->residual_norm_0);
    expect_number(&got, 11, r->residual_norm);
    expect_number(&got, 12, r->residual_reduction);
  }
  free(text);
}

/* Cut to every size below the whole: a prefix and a NUL, nothing beyond. */
static void check_cut(tpmg_context *ctx, const tpmg_solver *solver) {
  char *whole = describe(ctx, solver);
  size_t n = strlen(whole);
  char *buffer = ref_malloc(n + 8);
  for (size_t size = 0; size <= n + 1; ++size) {
    memset(buffer, '#', n + 8);
    size_t length = 0;
    REF_CALL(ctx, tpmg_solver_describe(solver, buffer, size, &length));
    REF_CHECK(length == n, "describe to %zu bytes: length %zu, expected %zu", size, length, n);
    if (size > 0)
      REF_CHECK(strncmp(buffer, whole, size - 1) == 0 && buffer[size - 1] == '\0',
                "describe to %zu bytes: not the first %zu bytes and a NUL", size, size - 1);
    for (size_t i = size; i < n + 8; ++i)
      if (buffer[i] != '#') {
        REF_CHECK(0, "describe to %zu bytes wrote byte %zu", size, i);
        break;
      }
  }
  free(buffer);
  free(whole);
}

static void check_refused(tpmg_context *ctx, const tpmg_solver *solver) {
  char buffer[16];
  memset(buffer, '#', sizeof buffer);
  size_t length = 12345;
  REF_CHECK(tpmg_solver_describe(NULL, buffer, sizeof buffer, &length) == TPMG_ERROR_ARGUMENT,
            "describe of a NULL solver not refused");
  REF_CHECK(buffer[0] == '#' && length == 12345, "describe of a NULL solver wrote");
  REF_CHECK(tpmg_solver_describe(solver, NULL, 8, &length) == TPMG_ERROR_ARGUMENT,
            "describe into a NULL text of size 8 not refused");
  REF_CHECK(length == 12345, "describe into a NULL text of size 8 wrote the length");
  REF_CHECK(strstr(tpmg_context_last_error(ctx), "text is NULL") != NULL,
            "describe into a NULL text: message '%s'", tpmg_context_last_error(ctx));
  REF_CHECK(tpmg_solver_describe(solver, NULL, 0, NULL) == TPMG_SUCCESS,
            "describe with NULL text, size 0 and NULL length refused");
}

int main(void) {
  tpmg_context *ctx = ref_context_create("cpu", 1);
  tpmg_grid_options go = tpmg_grid_options_default();
  go.dim = 2;
  go.degree = 2;
  go.fine_level = 3;
  tpmg_grid *grid = NULL;
  REF_CALL(ctx, tpmg_grid_create(ctx, &go, &grid));
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, go.fine_level, &n, NULL));

  /* GMRES from the left in double: every option away from its default */
  tpmg_solver_options o = tpmg_solver_options_default();
  o.type = TPMG_SOLVER_GMRES;
  o.arithmetic = TPMG_ARITHMETIC_DOUBLE;
  o.smoother = TPMG_SMOOTHER_BOUNDARY;
  o.tolerance = 1.25e-8;
  o.max_iterations = 40;
  o.restart = 7;
  o.preconditioning = TPMG_PRECONDITION_LEFT;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &o, &solver));
  expect_solved(ctx, solver, &o, 1, 0, NULL);
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  void *x = NULL; /* zero: the start vector */
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, &x));
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  tpmg_solver_result r;
  for (int s = 1; s <= 2; ++s) { /* the second from the first's x: fewer iterations */
    REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &r));
    expect_solved(ctx, solver, &o, 1, s, &r);
  }
  /* a refused solve is no solve: the last one's result stays */
  tpmg_solver_result refused = r;
  REF_CHECK(tpmg_solver_solve(solver, b, b, &refused) == TPMG_ERROR_ARGUMENT,
            "a solve with b = x not refused");
  expect_solved(ctx, solver, &o, 1, 2, &r);
  check_cut(ctx, solver);
  check_refused(ctx, solver);
  tpmg_solver_destroy(&solver);
  ref_vector_destroy(ctx, &x);
  ref_vector_destroy(ctx, &b);

  /* CG in float, not converged in 2 iterations: no GMRES keys */
  o = tpmg_solver_options_default();
  o.type = TPMG_SOLVER_CG;
  o.arithmetic = TPMG_ARITHMETIC_FLOAT;
  o.tolerance = 1e-6;
  o.max_iterations = 2;
  REF_CALL(ctx, tpmg_solver_create(grid, &o, &solver));
  b = ref_vector_create(ctx, TPMG_FLOAT, n, NULL);
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_FLOAT, n, &x));
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_FLOAT, b));
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &r));
  REF_CHECK(!r.converged, "CG to 1e-6 in 2 iterations converged: the test needs another case");
  expect_solved(ctx, solver, &o, 0, 1, &r);
  tpmg_solver_destroy(&solver);
  ref_vector_destroy(ctx, &x);
  ref_vector_destroy(ctx, &b);

  tpmg_grid_destroy(&grid);
  REF_CALL(NULL, tpmg_context_destroy(&ctx));
  return ref_exit_code("t721-api-describe");
}
