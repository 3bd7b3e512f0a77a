/* t501-multigrid-levels: GMRES preconditioned by the V-cycle (f = 1, 1e-9)
 * converges in a number of iterations that does not grow with the level: on
 * every level the count is at most one more than on the coarsest level tried,
 * and no level needs more than the one before it plus one. Q1 settles late
 * (4, 6, 8, 8, 9, 9 on levels 2..7 in 2D), so its range starts at level 4 in
 * 2D and 3 in 3D. 2D k = 1 (L 4..7), 3 (3..6), 6 (2..5); 3D k = 1 (3..5),
 * 2 (3..4), 4 (2..3); unit square/cube. On the backend named by argv[1]
 * (default "cpu"). */
#include <stdlib.h>

#include "reference.h"

static int gmres_iterations(tpmg_context *ctx, int dim, int k, int L) {
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, NULL, NULL);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, L, &n, NULL));
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  void *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_ONE, TPMG_DOUBLE, b));
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, x));
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = TPMG_SOLVER_GMRES;
  options.arithmetic = TPMG_ARITHMETIC_DOUBLE;
  options.tolerance = 1e-9;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  tpmg_solver_result result = {-1, -1, -1, -1, -1};
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  REF_CHECK(result.converged == 1 && result.residual_reduction <= 1e-9,
            "GMRES dim %d k %d L %d: expected convergence to 1e-9, got converged=%d reduction %.3g "
            "after %d iterations",
            dim, k, L, result.converged, result.residual_reduction, result.iterations);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  ref_vector_destroy(ctx, &x);
  ref_vector_destroy(ctx, &b);
  return result.iterations;
}

static void check_levels(tpmg_context *ctx, int dim, int k, int L0, int L1) {
  int it[16] = {0};
  for (int L = L0; L <= L1; L++) it[L] = gmres_iterations(ctx, dim, k, L);
  for (int L = L0 + 1; L <= L1; L++)
    REF_CHECK(it[L] <= it[L0] + 1 && it[L] <= it[L - 1] + 1,
              "GMRES dim %d k %d: iterations grow with the level: L=%d needs %d, L=%d needs %d, "
              "L=%d needs %d",
              dim, k, L0, it[L0], L - 1, it[L - 1], L, it[L]);
  REF_CHECK(it[L0] >= 1 && it[L0] <= 20,
            "GMRES dim %d k %d L %d: expected 1..20 iterations, got %d", dim, k, L0, it[L0]);
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  check_levels(ctx, 2, 1, 4, 7);
  check_levels(ctx, 2, 3, 3, 6);
  check_levels(ctx, 2, 6, 2, 5);
  check_levels(ctx, 3, 1, 3, 5);
  check_levels(ctx, 3, 2, 3, 4);
  check_levels(ctx, 3, 4, 2, 3);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t501-multigrid-levels");
}
