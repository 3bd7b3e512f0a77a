/* t701-api-memory: tpmg_context_memory accounts for every object. It is 0 on
 * a new context, grows with each object created (grid, operator, smoother,
 * transfer, multigrid, solver, vector), stays unchanged by failed creations
 * (nothing leaks on an error path), grows in a GMRES solve by exactly the
 * basis the solver reports (tpmg_solver_memory), is unchanged by a second
 * solve, and returns to 0 when everything is destroyed, after a solve too. */
#include <stdlib.h>

#include "reference.h"

static size_t memory(tpmg_context *ctx) {
  size_t bytes = (size_t)-1;
  REF_CALL(ctx, tpmg_context_memory(ctx, &bytes));
  return bytes;
}

#define GROWS(ctx, before, what)                                                                   \
  do {                                                                                             \
    size_t after_ = memory(ctx);                                                                   \
    REF_CHECK(after_ > (before), "%s: context memory expected to grow from %zu, got %zu", what,     \
              (size_t)(before), after_);                                                           \
    (before) = after_;                                                                             \
  } while (0)

static void run(int dim, int k, int L, tpmg_arithmetic arithmetic) {
  tpmg_context *ctx = ref_context_create("cpu", 0);
  size_t m = memory(ctx);
  REF_CHECK(m == 0, "new context: expected 0 bytes, got %zu", m);
  const int cells[3] = {2, 3, 1};
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, cells, NULL);
  GROWS(ctx, m, "tpmg_grid_create");
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, L, TPMG_FLOAT, &op));
  tpmg_smoother *s = NULL;
  REF_CALL(ctx, tpmg_smoother_create(grid, L, TPMG_DOUBLE, NULL, &s));
  tpmg_transfer *t = NULL;
  REF_CALL(ctx, tpmg_transfer_create(grid, L, TPMG_DOUBLE, &t));
  m = memory(ctx);
  tpmg_multigrid *mg = NULL;
  REF_CALL(ctx, tpmg_multigrid_create(grid, NULL, &mg));
  GROWS(ctx, m, "tpmg_multigrid_create");
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = TPMG_SOLVER_GMRES; /* its basis grows in the solves */
  options.arithmetic = arithmetic;
  if (arithmetic == TPMG_ARITHMETIC_FLOAT)
    options.tolerance = 1e-5;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  size_t solver_created = memory(ctx) - m, solver_bytes = 0;
  REF_CALL(ctx, tpmg_solver_memory(solver, &solver_bytes));
  REF_CHECK(solver_bytes == solver_created,
            "tpmg_solver_memory after create: expected the context's growth %zu, got %zu",
            solver_created, solver_bytes);
  GROWS(ctx, m, "tpmg_solver_create");
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, L, &n, NULL));
  /* FLOAT arithmetic solves with float vectors */
  tpmg_precision precision = arithmetic == TPMG_ARITHMETIC_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE;
  void *b = NULL, *x = NULL;
  REF_CALL(ctx, tpmg_vector_create(ctx, precision, n, &b));
  GROWS(ctx, m, "tpmg_vector_create");
  REF_CALL(ctx, tpmg_vector_create(ctx, precision, n, &x));
  m = memory(ctx);

  /* failed creations leave the count unchanged */
  tpmg_grid_options bad = tpmg_grid_options_default();
  bad.dim = 2;
  bad.degree = 10;
  bad.fine_level = TPMG_MAX_FINE_LEVEL;
  bad.cells[0] = bad.cells[1] = 10; /* the finest level's vectors would overflow */
  tpmg_grid *g2 = NULL;
  REF_CHECK(tpmg_grid_create(ctx, &bad, &g2) != TPMG_SUCCESS, "oversized fine level accepted");
  tpmg_solver_options bad_solver = tpmg_solver_options_default();
  bad_solver.tolerance = -1;
  tpmg_solver *s2 = NULL;
  REF_CHECK(tpmg_solver_create(grid, &bad_solver, &s2) != TPMG_SUCCESS, "tolerance -1 accepted");
  size_t after = memory(ctx);
  REF_CHECK(after == m, "failed creations changed the context memory from %zu to %zu", m, after);

  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, precision, b));
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  REF_CHECK(result.converged == 1, "arithmetic %d: solve did not converge (reduction %.3g)",
            (int)arithmetic, result.residual_reduction);
  /* the GMRES basis the solve needed beyond the first pair */
  after = memory(ctx);
  size_t solved_bytes = 0;
  REF_CALL(ctx, tpmg_solver_memory(solver, &solved_bytes));
  REF_CHECK(after - m == solved_bytes - solver_bytes,
            "a solve changed the context memory from %zu to %zu, the solver's from %zu to %zu", m,
            after, solver_bytes, solved_bytes);
  m = after;
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  after = memory(ctx);
  REF_CHECK(after == m, "a second solve changed the context memory from %zu to %zu", m, after);

  REF_CALL(ctx, tpmg_vector_destroy(ctx, &x));
  REF_CALL(ctx, tpmg_vector_destroy(ctx, &b));
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  REF_CALL(ctx, tpmg_multigrid_destroy(&mg));
  REF_CALL(ctx, tpmg_transfer_destroy(&t));
  REF_CALL(ctx, tpmg_smoother_destroy(&s));
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  m = memory(ctx);
  REF_CHECK(m == 0,
            "dim %d k %d L %d arithmetic %d: after destroying everything expected 0 bytes, got %zu",
            dim, k, L, (int)arithmetic, m);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
}

int main(void) {
  run(2, 3, 2, TPMG_ARITHMETIC_DOUBLE);
  run(2, 2, 2, TPMG_ARITHMETIC_MIXED);
  run(3, 2, 1, TPMG_ARITHMETIC_FLOAT);
  return ref_exit_code("t701-api-memory");
}
