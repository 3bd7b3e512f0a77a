/* GPU test: whole solves on the CUDA backend against the CPU backend: GMRES
 * preconditioned by the V-cycle, in double and mixed precision, with the sine
 * solution, for dim 2 and 3 and every degree of the table. Both must take the
 * same number of iterations, converge, and reach the same L2 error: within 1e-10
 * relative, plus the algebraic accuracy of the solve (the iterates of the two
 * backends differ by rounding, in mixed arithmetic by float rounding in the
 * preconditioner, so the discrete solutions agree only to about the tolerance
 * times ||u||). Skipped (exit 77) without a GPU.
 * Usage: t803-gpu-solve [dim [degree]] limits the cases. */
#include <math.h>
#include <stdlib.h>

#include "reference.h"

/* The degrees tpmg has (tpmg_grid_options_default's documentation). */
enum { MAX_DEGREE_2D = 10, MAX_DEGREE_3D = 8 };

typedef struct {
  int iterations, converged;
  double error, reduction;
} outcome;

static outcome solve(tpmg_context *ctx, int dim, int k, int levels, tpmg_arithmetic arithmetic) {
  const int cells[3] = {1, 1, 1};
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, levels, cells, NULL);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, levels, &n, NULL));
  void *b = NULL, *x = NULL;
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, &b));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, &x));
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = TPMG_SOLVER_GMRES;
  options.arithmetic = arithmetic;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  outcome o = {result.iterations, result.converged, NAN, result.residual_reduction};
  REF_CALL(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_DOUBLE, x, &o.error));
  tpmg_solver_destroy(&solver);
  tpmg_vector_destroy(ctx, &b);
  tpmg_vector_destroy(ctx, &x);
  tpmg_grid_destroy(&grid);
  return o;
}

int main(int argc, char **argv) {
  int available = 0;
  if (tpmg_backend_available("cuda", &available) != TPMG_SUCCESS || !available) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  const int only_dim = argc > 1 ? atoi(argv[1]) : 0, only_degree = argc > 2 ? atoi(argv[2]) : 0;
  tpmg_context *cpu = ref_context_create("cpu", 0), *gpu = NULL;
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = "cuda";
  REF_CALL(NULL, tpmg_context_create(&options, &gpu));
  const tpmg_arithmetic arithmetics[2] = {TPMG_ARITHMETIC_DOUBLE, TPMG_ARITHMETIC_MIXED};
  const double tolerance = tpmg_solver_options_default().tolerance;
  for (int dim = 2; dim <= 3; dim++) {
    if (only_dim && dim != only_dim)
      continue;
    const int max_degree = dim == 2 ? MAX_DEGREE_2D : MAX_DEGREE_3D;
    for (int k = 1; k <= max_degree; k++) {
      if (only_degree && k != only_degree)
        continue;
      const int levels = dim == 2 ? (k <= 4 ? 5 : 4) : (k <= 2 ? 4 : 3);
      for (int m = 0; m < 2; m++) {
        outcome c = solve(cpu, dim, k, levels, arithmetics[m]);
        outcome g = solve(gpu, dim, k, levels, arithmetics[m]);
        const char *arithmetic = m ? "mixed" : "double";
        REF_CHECK(g.converged && c.converged, "%dD Q%d %s: converged cpu %d, cuda %d", dim, k,
                  arithmetic, c.converged, g.converged);
        REF_CHECK(g.iterations == c.iterations, "%dD Q%d %s: iterations cpu %d, cuda %d", dim, k,
                  arithmetic, c.iterations, g.iterations);
        /* ||u||_L2 <= 1 for the sine on the unit box */
        const double allowed = 1e-10 * c.error + (m ? tolerance : 1e-12);
        REF_CHECK(fabs(g.error - c.error) <= allowed,
                  "%dD Q%d %s: L2 error cpu %.12e, cuda %.12e (difference %.2e > %.2e)", dim, k,
                  arithmetic, c.error, g.error, fabs(g.error - c.error), allowed);
      }
    }
  }
  tpmg_context_destroy(&gpu);
  tpmg_context_destroy(&cpu);
  return ref_exit_code("t803-gpu-solve");
}
