/* t604-solver-multi: a GMRES solve whose Krylov basis grows past the 16
 * vectors that one fused backend pass of its Gram-Schmidt takes (the core then
 * splits dots and axpys) converges by its true residual, in no more iterations
 * than with a basis restarted before that length. On the backend named by
 * argv[1] (default "cpu"). The fused passes themselves: t605-solver-multi-ops. */
#include <math.h>
#include <stdlib.h>

#include "reference.h"

/* TPMG_MULTI_MAX of the backend interface (c_api/src/tpmg-backend.h) */
enum { MULTI_MAX = 16 };

static void count_iterations(void *data, int iteration, double relative) {
  (void)relative;
  *(int *)data = iteration;
}

/* GMRES on the 2D Q2 level 4 mesh of the box [0,1] x [0,height]. */
static tpmg_solver_result solve(tpmg_context *ctx, double height, int restart) {
  const double box[4] = {0, 1, 0, height};
  tpmg_grid *grid = ref_grid_create(ctx, 2, 2, 4, NULL, box);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, 4, &n, NULL));
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL),
       *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, x));
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = TPMG_SOLVER_GMRES;
  options.arithmetic = TPMG_ARITHMETIC_DOUBLE;
  options.restart = restart;
  int monitored = 0;
  options.monitor = count_iterations;
  options.monitor_data = &monitored;
  tpmg_solver *solver = NULL;
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  REF_CHECK(monitored == result.iterations, "monitor saw %d iterations, result says %d", monitored,
            result.iterations);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  ref_vector_destroy(ctx, &b);
  ref_vector_destroy(ctx, &x);
  return result;
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 2);
  /* cells of aspect ratio 50 slow the V-cycle down: the basis grows past
   * MULTI_MAX vectors. Full GMRES (restart 30) must converge, by the true
   * residual, in no more iterations than GMRES restarted after 16. */
  tpmg_solver_result full = solve(ctx, 0.02, 30), restarted = solve(ctx, 0.02, 16);
  REF_CHECK(full.iterations > MULTI_MAX, "anisotropic GMRES: %d iterations, not > %d",
            full.iterations, MULTI_MAX);
  REF_CHECK(full.converged && full.residual_reduction <= 1e-9,
            "anisotropic GMRES(30): residual reduction %.3g, not <= 1e-9", full.residual_reduction);
  REF_CHECK(full.iterations <= restarted.iterations,
            "anisotropic GMRES: %d iterations with restart 30, %d with 16", full.iterations,
            restarted.iterations);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t604-solver-multi");
}
