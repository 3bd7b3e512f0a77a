/* t613-solver-coefficient: -∇·(a∇u) + c u = f with a variable coefficient
 * (tpmg_grid_set_coefficient), through the whole solver.
 * - Refusals: an unknown layout, NULL values, a value that is NaN, infinite,
 *   zero, negative or outside [TPMG_MIN_COEFFICIENT, TPMG_MAX_COEFFICIENT]
 *   (the message names the value), a second coefficient, a grid already in
 *   use: TPMG_ERROR_ARGUMENT, and the grid is unchanged (its operator still
 *   that of a = 1, bit for bit); a smoother other than GLOBAL on such a grid:
 *   TPMG_ERROR_UNSUPPORTED; TPMG_RHS_SINE: TPMG_ERROR_ARGUMENT.
 * - a = 2 everywhere, given per cell and at the quadrature points, with a
 *   reaction c: operator and right-hand side are twice those of a = 1 with
 *   reaction c/2, so the solve must give that grid's solution in the same
 *   iterations (up to one: rounding), double arithmetic (the surrogate is
 *   exact for a constant a);
 * - step-37's coefficient a = 1 / (0.05 + 2 |x|^2) at the quadrature points
 *   with u = prod sin(π x_d), f = -∇·(a∇u) + c u (tpmg_problem_rhs_function):
 *   the L2 error converges at order k + 1 (rate within 0.3), 2D k = 1..3, 3D
 *   k = 1, 2, with c = 0 and 10, on a box of several coarse cells;
 * - the default solver (FMG-GMRES, mixed) converges on step-37's problem and
 *   on a checkerboard of jumps 1e3 per cell.
 * On the backend named by argv[1] (default "cpu"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

static const double pi = 3.14159265358979323846;

static double step37(const double *x) {
  return 1.0 / (0.05 + 2.0 * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
}

/* The values of a function of x (NULL: the constant value) for this rank's
 * cells of the finest level, per cell (at the centre) or at the quadrature
 * points; malloc'ed. */
static double *coefficient_values(tpmg_context *ctx, tpmg_grid *grid, int quadrature,
                                  double (*a)(const double *), double value) {
  tpmg_grid_options o;
  tpmg_level_layout layout;
  REF_CALL(ctx, tpmg_grid_get_options(grid, &o));
  REF_CALL(ctx, tpmg_grid_level_layout(grid, o.fine_level, &layout));
  const int dim = o.dim, nq = o.degree + 1;
  const int per_cell = quadrature ? (dim == 3 ? nq * nq * nq : nq * nq) : 1;
  int64_t cells[3] = {1, 1, 1};
  for (int d = 0; d < dim; ++d) cells[d] = (int64_t)o.cells[d] << o.fine_level;
  cells[dim - 1] = layout.cell_end - layout.cell_first;
  const int64_t n = cells[0] * cells[1] * cells[2];
  double *values = ref_malloc(sizeof(double) * (size_t)(n * per_cell + 1));
  double points[3 * 9 * 9 * 9];
  for (int64_t e = 0; e < n; ++e) {
    tpmg_index cell[3] = {e % cells[0], e / cells[0] % cells[1], e / (cells[0] * cells[1])};
    cell[dim - 1] += layout.cell_first;
    REF_CALL(ctx, tpmg_grid_quadrature_points(grid, cell, points));
    for (int q = 0; q < per_cell; ++q)
      values[e * per_cell + q] = a ? a(points + 3 * q) : value;
  }
  return values;
}

/* dst = A src on the finest level for src = sin(i), in double on the host. */
static double *apply(tpmg_context *ctx, tpmg_grid *grid, int level, tpmg_index *n) {
  REF_CALL(ctx, tpmg_grid_level_size(grid, level, n, NULL));
  double *src = ref_malloc(sizeof(double) * (size_t)*n), *dst = ref_malloc(sizeof(double) * (size_t)*n);
  for (tpmg_index i = 0; i < *n; ++i) src[i] = sin(1.0 + (double)i);
  void *vs = ref_vector_create(ctx, TPMG_DOUBLE, *n, src), *vd = ref_vector_create(ctx, TPMG_DOUBLE, *n, NULL);
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, level, TPMG_DOUBLE, &op));
  REF_CALL(ctx, tpmg_operator_apply(op, vs, vd));
  ref_vector_download(ctx, TPMG_DOUBLE, *n, vd, dst);
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  ref_vector_destroy(ctx, &vs);
  ref_vector_destroy(ctx, &vd);
  free(src);
  return dst;
}

static void check_refused(tpmg_context *ctx) {
  tpmg_grid *grid = ref_grid_create(ctx, 2, 2, 2, NULL, NULL);
  tpmg_index n = 0;
  double *before = apply(ctx, grid, 2, &n);
  double *values = coefficient_values(ctx, grid, 0, NULL, 1.0);
  const double bad[] = {NAN, INFINITY, 0.0, -1.0, 0.5 * TPMG_MIN_COEFFICIENT,
                        2 * TPMG_MAX_COEFFICIENT};
  for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); ++i) {
    values[3] = bad[i];
    tpmg_status status = tpmg_grid_set_coefficient(grid, TPMG_COEFFICIENT_CELLS, values);
    REF_CHECK(status == TPMG_ERROR_ARGUMENT, "value %g: expected TPMG_ERROR_ARGUMENT, got %d",
              bad[i], (int)status);
    REF_CHECK(strstr(tpmg_context_last_error(ctx), "coefficient value 3") != NULL,
              "value %g: the message does not name value 3: '%s'", bad[i],
              tpmg_context_last_error(ctx));
  }
  values[3] = 1.0;
  REF_CHECK(tpmg_grid_set_coefficient(grid, (tpmg_coefficient_layout)7, values) ==
                TPMG_ERROR_ARGUMENT,
            "layout 7 accepted");
  REF_CHECK(tpmg_grid_set_coefficient(grid, TPMG_COEFFICIENT_CELLS, NULL) == TPMG_ERROR_ARGUMENT,
            "NULL values accepted");
  REF_CHECK(tpmg_grid_set_coefficient(NULL, TPMG_COEFFICIENT_CELLS, values) == TPMG_ERROR_ARGUMENT,
            "NULL grid accepted");
  /* in use: an operator made from the grid */
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, 2, TPMG_DOUBLE, &op));
  REF_CHECK(tpmg_grid_set_coefficient(grid, TPMG_COEFFICIENT_CELLS, values) ==
                TPMG_ERROR_ARGUMENT,
            "a grid in use took a coefficient");
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  double *after = apply(ctx, grid, 2, &n);
  REF_CHECK(memcmp(before, after, sizeof(double) * (size_t)n) == 0,
            "a refused coefficient changed the operator");
  /* a second one */
  for (tpmg_index i = 0; i < 4; ++i) values[i] = 3.0;
  REF_CALL(ctx, tpmg_grid_set_coefficient(grid, TPMG_COEFFICIENT_CELLS, values));
  REF_CHECK(tpmg_grid_set_coefficient(grid, TPMG_COEFFICIENT_CELLS, values) ==
                TPMG_ERROR_ARGUMENT,
            "a second coefficient accepted");
  tpmg_smoother_options so = tpmg_smoother_options_default();
  tpmg_smoother *smoother = NULL;
  REF_CHECK(tpmg_smoother_create(grid, 2, TPMG_DOUBLE, &so, &smoother) == TPMG_ERROR_UNSUPPORTED,
            "a fused smoother accepted with a coefficient");
  so.variant = TPMG_SMOOTHER_GLOBAL;
  REF_CALL(ctx, tpmg_smoother_create(grid, 2, TPMG_DOUBLE, &so, &smoother));
  REF_CALL(ctx, tpmg_smoother_destroy(&smoother));
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CHECK(tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b) == TPMG_ERROR_ARGUMENT,
            "TPMG_RHS_SINE accepted with a coefficient");
  ref_vector_destroy(ctx, &b);
  free(values);
  free(before);
  free(after);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

typedef struct {
  int dim;
  double reaction;
  int step37;   /* a = step-37's, else the constant a */
  double a;
} problem;

static double sine(const double *x, void *data) {
  const problem *p = data;
  double u = 1.0;
  for (int d = 0; d < p->dim; ++d) u *= sin(pi * x[d]);
  return u;
}

/* f = -∇·(a∇u) + c u; step-37's ∇a = -4 a^2 x; a constant: f = (a dim π² + c) u */
static double source(const double *x, void *data) {
  const problem *p = data;
  const double u = sine(x, data);
  if (!p->step37) return (p->a * p->dim * pi * pi + p->reaction) * u;
  const double a = step37(x);
  double x_grad_u = 0.0;
  for (int d = 0; d < p->dim; ++d) {
    double g = pi * cos(pi * x[d]);
    for (int e = 0; e < p->dim; ++e)
      if (e != d) g *= sin(pi * x[e]);
    x_grad_u += x[d] * g;
  }
  return a * p->dim * pi * pi * u + 4.0 * a * a * x_grad_u + p->reaction * u;
}

/* Solve the sine problem with a coefficient of (a, value, quadrature) on a
 * fresh grid; x downloaded into *solution (if not NULL), the L2 error
 * returned, the iterations in *iterations. */
static double solve(tpmg_context *ctx, int dim, int k, int level, const int cells[3],
                    const double *box, double c, double (*a)(const double *), double value,
                    int quadrature, const tpmg_solver_options *options, int *iterations,
                    double **solution) {
  tpmg_grid *grid = ref_grid_create_reaction(ctx, dim, k, level, cells, box, c);
  if (a || value != 1.0) {
    double *values = coefficient_values(ctx, grid, quadrature, a, value);
    REF_CALL(ctx, tpmg_grid_set_coefficient(grid, quadrature ? TPMG_COEFFICIENT_QUADRATURE
                                                             : TPMG_COEFFICIENT_CELLS,
                                            values));
    free(values);
  }
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, level, &n, NULL));
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  void *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  problem p = {dim, c, a != NULL, value};
  REF_CALL(ctx, tpmg_problem_rhs_function(grid, source, sine, &p, TPMG_DOUBLE, b));
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
  if (solution) {
    *solution = ref_malloc(sizeof(double) * (size_t)n);
    ref_vector_download(ctx, TPMG_DOUBLE, n, x, *solution);
  }
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  ref_vector_destroy(ctx, &x);
  ref_vector_destroy(ctx, &b);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  return error;
}

static tpmg_solver_options global_double(void) {
  tpmg_solver_options o = tpmg_solver_options_default();
  o.arithmetic = TPMG_ARITHMETIC_DOUBLE;
  o.smoother = TPMG_SMOOTHER_GLOBAL;
  o.tolerance = 1e-11;
  return o;
}

/* a = 2 with reaction c against a = 1 with c / 2: x_2 = x_1 / 2. */
static void check_scaling(tpmg_context *ctx, int dim, int k, int level, int quadrature) {
  const int cells[3] = {3, 2, 1};
  const double c = 8.0;
  tpmg_solver_options o = global_double();
  int it1 = 0, it2 = 0;
  double *x1 = NULL, *x2 = NULL;
  solve(ctx, dim, k, level, cells, NULL, c / 2, NULL, 1.0, 0, &o, &it1, &x1);
  /* f of a = 2, c is twice that of a = 1, c / 2, and so is the operator: the
   * same discrete solution */
  solve(ctx, dim, k, level, cells, NULL, c, NULL, 2.0, quadrature, &o, &it2, &x2);
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, level, cells, NULL);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, level, &n, NULL));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  /* x2 = x1 up to the iterations' tolerance */
  const double difference = ref_relative_difference(n, x1, x2);
  REF_CHECK(difference < 1e-8,
            "%dD Q%d level %d a = 2 (%s) against a = 1, c / 2: solutions differ by %.3g", dim, k,
            level, quadrature ? "quadrature" : "cells", difference);
  /* the iterates are the same up to rounding, which may tip the last one */
  REF_CHECK(abs(it1 - it2) <= 1,
            "%dD Q%d level %d a = 2 (%s): %d iterations, a = 1 with c / 2: %d", dim, k,
            level, quadrature ? "quadrature" : "cells", it2, it1);
  free(x1);
  free(x2);
}

static void check_order(tpmg_context *ctx, int dim, int k, int first, int last, double c) {
  const int cells[3] = {2, 1, 3};
  const double box[6] = {0.25, 1.25, -0.5, 0.25, 0.0, 1.5};
  tpmg_solver_options o = global_double();
  int iterations;
  double previous = 0;
  for (int level = first; level <= last; ++level) {
    double error = solve(ctx, dim, k, level, cells, box, c, step37, 1.0, 1, &o, &iterations, NULL);
    if (level > first) {
      double rate = log2(previous / error);
      REF_CHECK(fabs(rate - (k + 1)) <= 0.3,
                "%dD Q%d step37 c %g: L2 rate %.3f between levels %d and %d (errors %.3e, %.3e), "
                "expected %d +- 0.3",
                dim, k, c, rate, level - 1, level, previous, error, k + 1);
    }
    previous = error;
  }
}

static double checkerboard(const double *x) {
  int sum = 0;
  for (int d = 0; d < 3; ++d) sum += (int)floor(4.0 * x[d]);
  return sum % 2 ? 1e3 : 1.0;
}

static void check_default(tpmg_context *ctx, int dim, int k, int level) {
  tpmg_solver_options o = tpmg_solver_options_default();
  o.smoother = TPMG_SMOOTHER_GLOBAL;
  int iterations = 0;
  solve(ctx, dim, k, level, NULL, NULL, 0.0, step37, 1.0, 1, &o, &iterations, NULL);
  REF_CHECK(iterations <= 20, "%dD Q%d level %d step37: %d iterations", dim, k, level, iterations);
  /* a checkerboard per cell (values at the cell centres: exact on cells) */
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, level, NULL, NULL);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, level, &n, NULL));
  double *values = coefficient_values(ctx, grid, 0, checkerboard, 0.0);
  REF_CALL(ctx, tpmg_grid_set_coefficient(grid, TPMG_COEFFICIENT_CELLS, values));
  free(values);
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  void *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_ONE, TPMG_DOUBLE, b));
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, x));
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &o, &solver));
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  REF_CHECK(result.converged && result.iterations <= 40,
            "%dD Q%d level %d checkerboard 1e3: converged %d in %d iterations", dim, k, level,
            result.converged, result.iterations);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  ref_vector_destroy(ctx, &x);
  ref_vector_destroy(ctx, &b);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  check_refused(ctx);
  for (int quadrature = 0; quadrature < 2; ++quadrature) {
    check_scaling(ctx, 2, 3, 3, quadrature);
    check_scaling(ctx, 3, 2, 2, quadrature);
  }
  check_order(ctx, 2, 1, 3, 5, 0.0);
  check_order(ctx, 2, 2, 2, 4, 10.0);
  check_order(ctx, 2, 3, 2, 4, 0.0);
  check_order(ctx, 3, 1, 2, 4, 10.0);
  check_order(ctx, 3, 2, 1, 3, 0.0);
  check_default(ctx, 2, 3, 5);
  check_default(ctx, 3, 2, 3);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t613-solver-coefficient");
}
