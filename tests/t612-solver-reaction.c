/* t612-solver-reaction: -Δu + c u = f (tpmg_grid_options.reaction).
 * - tpmg_grid_create refuses a reaction that is negative, NaN, infinite,
 *   above TPMG_MAX_REACTION, or whose product with the coarsest cells' volume
 *   is (TPMG_ERROR_ARGUMENT, a message naming the reaction, no grid made);
 * - u = prod sin(pi x_d) with f = (dim pi^2 + c) u (TPMG_RHS_SINE): the L2
 *   error converges at order k + 1 (rate within 0.3) with c = 10 and 1e3, on
 *   an anisotropic box with several coarse cells (g != 0), 2D k = 2, 3D k = 1
 *   and 2; its error against the exact u stays that of the discretization
 *   (below 1.5 times c = 0's at the finest level: the reaction only helps);
 * - the default solver (FMG-GMRES, mixed, tolerance 1e-9) on 2D Q3 and 3D Q2:
 *   for c h^2 = 1e-3 .. 1e3 (h the finest cells' width) it converges in no
 *   more iterations than for c = 0, plus one. (The patch solves are exact for
 *   any c and the coarse levels carry the Galerkin product of c M; where the
 *   patch interior is one point, Q1, the smoother is point Gauss-Seidel, weak
 *   on the mass matrix's oscillatory modes, and the V-cycle slows down once
 *   c h^2 >> 1: doc/benchmarks.md, "The reaction term".)
 * On the backend named by argv[1] (default "cpu"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

static void check_refused(tpmg_context *ctx, double c, const double *box, const char *what) {
  tpmg_grid_options o = tpmg_grid_options_default();
  o.dim = 3;
  o.degree = 2;
  o.fine_level = 1;
  o.reaction = c;
  if (box)
    memcpy(o.box, box, sizeof o.box);
  tpmg_grid *grid = NULL;
  tpmg_status status = tpmg_grid_create(ctx, &o, &grid);
  REF_CHECK(status == TPMG_ERROR_ARGUMENT, "reaction %s: expected TPMG_ERROR_ARGUMENT, got %d",
            what, (int)status);
  REF_CHECK(grid == NULL, "reaction %s: a grid was made", what);
  REF_CHECK(strstr(tpmg_context_last_error(ctx), "reaction") != NULL,
            "reaction %s: the message does not name the reaction: '%s'", what,
            tpmg_context_last_error(ctx));
  tpmg_grid_destroy(&grid);
}

/* Solve the sine problem on a fresh grid; the L2 error and the iterations. */
static double solve(tpmg_context *ctx, int dim, int k, int level, const int cells[3],
                    const double *box, double c, const tpmg_solver_options *options,
                    int *iterations) {
  tpmg_grid *grid = ref_grid_create_reaction(ctx, dim, k, level, cells, box, c);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, level, &n, NULL));
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  void *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, x));
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, options, &solver));
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  REF_CHECK(result.converged, "%dD Q%d level %d c %g: not converged (%d iterations, %.3g)", dim, k,
            level, c, result.iterations, result.residual_reduction);
  double error = -1;
  REF_CALL(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_DOUBLE, x, &error));
  *iterations = result.iterations;
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  ref_vector_destroy(ctx, &x);
  ref_vector_destroy(ctx, &b);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  return error;
}

static void check_order(tpmg_context *ctx, int dim, int k, int first, int last) {
  const int cells[3] = {2, 1, 3};
  const double box[6] = {0.25, 1.25, -0.5, 0.25, 0.0, 1.5};
  tpmg_solver_options o = tpmg_solver_options_default();
  o.arithmetic = TPMG_ARITHMETIC_DOUBLE;
  o.tolerance = 1e-12;
  int iterations;
  const double poisson = solve(ctx, dim, k, last, cells, box, 0.0, &o, &iterations);
  const double c[2] = {10.0, 1e3};
  for (int r = 0; r < 2; ++r) {
    double previous = 0;
    for (int level = first; level <= last; ++level) {
      double error = solve(ctx, dim, k, level, cells, box, c[r], &o, &iterations);
      if (level > first) {
        double rate = log2(previous / error);
        REF_CHECK(fabs(rate - (k + 1)) <= 0.3,
                  "%dD Q%d c %g: L2 rate %.3f between levels %d and %d (errors %.3e, %.3e), "
                  "expected %d +- 0.3",
                  dim, k, c[r], rate, level - 1, level, previous, error, k + 1);
      }
      if (level == last)
        REF_CHECK(error <= 1.5 * poisson,
                  "%dD Q%d c %g level %d: L2 error %.3e above 1.5 times c = 0's %.3e", dim, k,
                  c[r], level, error, poisson);
      previous = error;
    }
  }
}

static void check_iterations(tpmg_context *ctx, int dim, int k, int level) {
  tpmg_solver_options o = tpmg_solver_options_default();
  int base = 0, iterations = 0;
  solve(ctx, dim, k, level, NULL, NULL, 0.0, &o, &base);
  const double h = ldexp(1.0, -level);
  for (double ch2 = 1e-3; ch2 <= 1e3; ch2 *= 10) {
    const double c = ch2 / (h * h);
    solve(ctx, dim, k, level, NULL, NULL, c, &o, &iterations);
    REF_CHECK(iterations <= base + 1,
              "%dD Q%d level %d c %g (c h^2 = %g): %d iterations, c = 0 takes %d: expected at "
              "most one more",
              dim, k, level, c, ch2, iterations, base);
  }
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const double huge_box[6] = {0, 1e10, 0, 1e10, 0, 1e10};
  check_refused(ctx, -1.0, NULL, "-1");
  check_refused(ctx, NAN, NULL, "NaN");
  check_refused(ctx, INFINITY, NULL, "inf");
  check_refused(ctx, 2 * TPMG_MAX_REACTION, NULL, "2 TPMG_MAX_REACTION");
  check_refused(ctx, 1e6, huge_box, "1e6 on cells of volume 1e30");
  check_order(ctx, 2, 2, 2, 4);
  check_order(ctx, 3, 1, 3, 4);
  check_order(ctx, 3, 2, 1, 3);
  check_iterations(ctx, 2, 3, 4);
  check_iterations(ctx, 3, 2, 3);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t612-solver-reaction");
}
