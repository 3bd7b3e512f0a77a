/* t611-solver-monitor: a monitor that calls back into the library while its
 * solver solves (issue 29). In its first call the monitor
 * - destroys its solver: refused (TPMG_ERROR_ARGUMENT), the handle kept;
 * - solves with its solver: refused (TPMG_ERROR_ARGUMENT), that x unchanged;
 * - solves with another solver of the same grid: allowed, converged;
 * - destroys the grid (the caller's handle): allowed, the solver keeps it;
 * - destroys the context: refused (TPMG_ERROR_ARGUMENT), the handle kept.
 * In every case the solve goes on and gives bitwise the x, iterations and
 * residual of the same solve without monitor actions (before the fix, the
 * destroy freed the solver under its running solve: a use after free, which
 * the sanitizer build reports). FMG-GMRES in MIXED (the default) and CG in
 * DOUBLE, 2D Q3 on level 3 of 2 x 1 cells, on the backend named by argv[1]
 * (default "cpu"). */
#include <stdlib.h>
#include <string.h>

#include "reference.h"

enum action { NOTHING, DESTROY_SOLVER, SOLVE_SAME, SOLVE_OTHER, DESTROY_GRID, DESTROY_CONTEXT };
static const char *action_names[] = {
    "nothing",          "destroy its solver", "solve with its solver", "solve with another solver",
    "destroy the grid", "destroy the context"};

typedef struct {
  enum action action;
  int calls;
  tpmg_context *ctx;
  tpmg_solver *solver, *other;
  tpmg_grid *grid;
  int64_t n;
  void *b, *x2; /* the right-hand side, and a second x for the solves from the monitor */
  double *x2_before;
  tpmg_status status; /* of the monitor's call */
  int handle_kept, x2_kept, nested_converged;
} monitor_state;

static void monitor(void *data, int iteration, double relative_residual) {
  (void)iteration;
  (void)relative_residual;
  monitor_state *m = data;
  if (m->calls++ > 0)
    return;
  tpmg_solver_result r;
  switch (m->action) {
  case NOTHING:
    break;
  case DESTROY_SOLVER: {
    tpmg_solver *handle = m->solver;
    m->status = tpmg_solver_destroy(&handle);
    m->handle_kept = handle == m->solver;
    break;
  }
  case SOLVE_SAME: {
    m->status = tpmg_solver_solve(m->solver, m->b, m->x2, &r);
    double *after = ref_malloc(sizeof(double) * m->n);
    ref_vector_download(m->ctx, TPMG_DOUBLE, m->n, m->x2, after);
    m->x2_kept = memcmp(after, m->x2_before, sizeof(double) * m->n) == 0;
    free(after);
    break;
  }
  case SOLVE_OTHER:
    m->status = tpmg_solver_solve(m->other, m->b, m->x2, &r);
    m->nested_converged = m->status == TPMG_SUCCESS && r.converged;
    break;
  case DESTROY_GRID:
    m->status = tpmg_grid_destroy(&m->grid);
    m->handle_kept = m->grid != NULL;
    break;
  case DESTROY_CONTEXT: {
    tpmg_context *handle = m->ctx;
    m->status = tpmg_context_destroy(&handle);
    m->handle_kept = handle == m->ctx;
    break;
  }
  }
}

/* One solve from x = 0 with the monitor doing `action` in its first call;
 * x: the solution on the host. */
static void run(tpmg_context *ctx, tpmg_solver_type type, tpmg_arithmetic arithmetic,
                enum action action, double *x, tpmg_solver_result *result, monitor_state *m) {
  const int dim = 2, k = 3, L = 3, cells[3] = {2, 1, 1};
  memset(m, 0, sizeof(*m));
  m->action = action;
  m->ctx = ctx;
  m->grid = ref_grid_create(ctx, dim, k, L, cells, NULL);
  tpmg_index n;
  REF_CALL(ctx, tpmg_grid_level_size(m->grid, L, &n, NULL));
  m->n = n;
  m->b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(m->grid, TPMG_RHS_SINE, TPMG_DOUBLE, m->b));
  m->x2_before = ref_malloc(sizeof(double) * n);
  uint64_t state = 3;
  ref_fill_random(&state, n, m->x2_before);
  m->x2 = ref_vector_create(ctx, TPMG_DOUBLE, n, m->x2_before);
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = type;
  options.arithmetic = arithmetic;
  REF_CALL(ctx, tpmg_solver_create(m->grid, &options, &m->other));
  options.monitor = monitor;
  options.monitor_data = m;
  REF_CALL(ctx, tpmg_solver_create(m->grid, &options, &m->solver));
  memset(x, 0, sizeof(double) * n);
  void *vx = ref_vector_create(ctx, TPMG_DOUBLE, n, x);
  REF_CALL(ctx, tpmg_solver_solve(m->solver, m->b, vx, result));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vx, x);
  ref_vector_destroy(ctx, &vx);
  ref_vector_destroy(ctx, &m->x2);
  ref_vector_destroy(ctx, &m->b);
  free(m->x2_before);
  REF_CALL(ctx, tpmg_solver_destroy(&m->solver));
  REF_CALL(ctx, tpmg_solver_destroy(&m->other));
  if (m->grid)
    REF_CALL(ctx, tpmg_grid_destroy(&m->grid));
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const struct {
    tpmg_solver_type type;
    tpmg_arithmetic arithmetic;
  } cases[] = {{TPMG_SOLVER_FMG_GMRES, TPMG_ARITHMETIC_MIXED},
               {TPMG_SOLVER_CG, TPMG_ARITHMETIC_DOUBLE}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    monitor_state m;
    tpmg_solver_result plain, result;
    double *x_plain = ref_malloc(sizeof(double) * 4096), *x = ref_malloc(sizeof(double) * 4096);
    run(ctx, cases[c].type, cases[c].arithmetic, NOTHING, x_plain, &plain, &m);
    int64_t n = m.n;
    REF_CHECK(n <= 4096 && plain.converged == 1, "%s %s: %lld DoFs, converged %d",
              tpmg_solver_type_name(cases[c].type), tpmg_arithmetic_name(cases[c].arithmetic),
              (long long)n, plain.converged);
    for (int a = DESTROY_SOLVER; a <= DESTROY_CONTEXT; ++a) {
      char name[96];
      snprintf(name, sizeof(name), "%s %s, a monitor that calls to %s",
               tpmg_solver_type_name(cases[c].type), tpmg_arithmetic_name(cases[c].arithmetic),
               action_names[a]);
      run(ctx, cases[c].type, cases[c].arithmetic, (enum action)a, x, &result, &m);
      tpmg_status expected =
          a == SOLVE_OTHER || a == DESTROY_GRID ? TPMG_SUCCESS : TPMG_ERROR_ARGUMENT;
      REF_CHECK(m.calls >= 1 && m.status == expected, "%s: %d calls, status %d, expected %d", name,
                m.calls, (int)m.status, (int)expected);
      if (a == DESTROY_SOLVER || a == DESTROY_CONTEXT)
        REF_CHECK(m.handle_kept, "%s: the handle was changed by a refused destroy", name);
      if (a == DESTROY_GRID)
        REF_CHECK(!m.handle_kept, "%s: the grid handle was not set to NULL", name);
      if (a == SOLVE_SAME)
        REF_CHECK(m.x2_kept, "%s: the refused solve changed its x", name);
      if (a == SOLVE_OTHER)
        REF_CHECK(m.nested_converged, "%s: the nested solve did not converge", name);
      REF_CHECK(result.iterations == plain.iterations &&
                    result.residual_norm == plain.residual_norm &&
                    memcmp(x, x_plain, sizeof(double) * n) == 0,
                "%s: %d iterations, residual %.17g, x %s; without the monitor's call %d, %.17g",
                name, result.iterations, result.residual_norm,
                memcmp(x, x_plain, sizeof(double) * n) ? "differs" : "equal", plain.iterations,
                plain.residual_norm);
    }
    free(x_plain);
    free(x);
  }
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t611-solver-monitor");
}
