/* t602-solver-threads: results do not depend on the CPU thread count. A
 * context with 1 thread and one with 2 threads (tpmg_context_threads reports
 * them) solve the same problems (GMRES and FMG, double and mixed, 2D and 3D,
 * anisotropic box): solutions agree to 1e-12 relative, iteration counts and
 * residuals are equal; one smoothing step and one operator application agree
 * to 1e-14. On the backend named by argv[1] (default "cpu"); on a GPU backend
 * the thread count is that of its host-side work. */
#include <math.h>
#include <stdlib.h>

#include "reference.h"

static double *solve(tpmg_context *ctx, int dim, int k, int L, const int *cells, const double *box,
                     tpmg_solver_type type, tpmg_arithmetic arithmetic, tpmg_solver_result *result,
                     int64_t *n_out) {
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, cells, box);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, L, &n, NULL));
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL),
       *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, x));
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = type;
  options.arithmetic = arithmetic;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, result));
  REF_CALL(ctx, tpmg_solver_destroy(&solver));

  /* also one smoothing step and one operator application on the fine level */
  uint64_t seed = 602;
  double *y = ref_malloc(sizeof(double) * n * 3);
  ref_fill_random(&seed, n, y);
  void *vs = ref_vector_create(ctx, TPMG_DOUBLE, n, y),
       *va = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  tpmg_smoother *s = NULL;
  REF_CALL(ctx, tpmg_smoother_create(grid, L, TPMG_DOUBLE, NULL, &s));
  REF_CALL(ctx, tpmg_smoother_apply(s, 0, b, vs));
  REF_CALL(ctx, tpmg_smoother_destroy(&s));
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, L, TPMG_DOUBLE, &op));
  REF_CALL(ctx, tpmg_operator_apply(op, vs, va));
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vs, y);
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, va, y + n);
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, x, y + 2 * n);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  ref_vector_destroy(ctx, &va);
  ref_vector_destroy(ctx, &vs);
  ref_vector_destroy(ctx, &x);
  ref_vector_destroy(ctx, &b);
  *n_out = n;
  return y; /* smoothed, A smoothed, solution */
}

static void check(tpmg_context *c1, tpmg_context *c2, int dim, int k, int L, const int *cells,
                  const double *box, tpmg_solver_type type, tpmg_arithmetic arithmetic) {
  tpmg_solver_result r1, r2;
  int64_t n1, n2;
  double *y1 = solve(c1, dim, k, L, cells, box, type, arithmetic, &r1, &n1);
  double *y2 = solve(c2, dim, k, L, cells, box, type, arithmetic, &r2, &n2);
  double ds = ref_relative_difference(n1, y2, y1);
  double da = ref_relative_difference(n1, y2 + n1, y1 + n1);
  double dx = ref_relative_difference(n1, y2 + 2 * n1, y1 + 2 * n1);
  REF_CHECK(ds <= 1e-14, "threads 1 vs 2, dim %d k %d L %d: smoother step differs by %.3g", dim, k,
            L, ds);
  REF_CHECK(da <= 1e-14, "threads 1 vs 2, dim %d k %d L %d: operator differs by %.3g", dim, k, L,
            da);
  REF_CHECK(dx <= 1e-12,
            "threads 1 vs 2, dim %d k %d L %d solver %d arithmetic %d: solutions differ by %.3g "
            "(expected <= 1e-12)",
            dim, k, L, (int)type, (int)arithmetic, dx);
  REF_CHECK(r1.iterations == r2.iterations,
            "threads 1 vs 2, dim %d k %d L %d solver %d arithmetic %d: iterations %d vs %d", dim, k,
            L, (int)type, (int)arithmetic, r1.iterations, r2.iterations);
  REF_CHECK(fabs(r1.residual_norm - r2.residual_norm) <= 1e-6 * r1.residual_norm,
            "threads 1 vs 2: residual norms %.12g vs %.12g", r1.residual_norm, r2.residual_norm);
  free(y2);
  free(y1);
}

int main(int argc, char **argv) {
  const char *backend = ref_backend(argc, argv);
  tpmg_context *c1 = ref_context_create(backend, 1), *c2 = ref_context_create(backend, 2);
  int t1 = -1, t2 = -1;
  REF_CALL(c1, tpmg_context_threads(c1, &t1));
  REF_CALL(c2, tpmg_context_threads(c2, &t2));
  REF_CHECK(t1 == 1 && t2 == 2, "tpmg_context_threads: expected 1 and 2, got %d and %d", t1, t2);
  const int cells[3] = {2, 3, 1};
  const double box[6] = {0, 2, -1, 0.5, 0, 0.3};
  check(c1, c2, 2, 3, 3, cells, box, TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_DOUBLE);
  check(c1, c2, 2, 2, 3, cells, box, TPMG_SOLVER_FMG, TPMG_ARITHMETIC_DOUBLE);
  check(c1, c2, 2, 4, 2, cells, box, TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_MIXED);
  check(c1, c2, 3, 2, 2, cells, box, TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_DOUBLE);
  check(c1, c2, 3, 3, 2, NULL, NULL, TPMG_SOLVER_CG, TPMG_ARITHMETIC_MIXED);
  REF_CALL(c1, tpmg_context_destroy(&c1));
  REF_CALL(c2, tpmg_context_destroy(&c2));
  return ref_exit_code("t602-solver-threads");
}
