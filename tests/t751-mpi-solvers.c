/* Whole solves on P ranks against one process: GMRES (right and left), CG,
 * FMG and V-cycles, in double, mixed and float, 2D and 3D: the same
 * iterations, the same convergence and the same solution on the owned
 * entries (only the order of the dot products' sums differs), and the same
 * L2 error; also with a reaction term (-Δu + c u, the grid's reaction) and
 * with a variable coefficient (-∇·(a∇u) + c u: per cell and at the quadrature
 * points, the right-hand side of tpmg_problem_rhs_function, the GLOBAL
 * smoother), and on graded coarse cells (tpmg_grid_options.cell_widths:
 * every direction's widths a geometric sequence, with a reaction, with a
 * coefficient). Then
 * the paper's FMG cases (t500: b = 1, one coarse cell,
 * tolerance 1e-9) give the one-process counts, which t500 checks against the
 * paper's tables. Every rank solves the one-process problem itself, on the
 * same backend (TPMG_TEST_MPI_BACKEND: mpi-reference.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi-reference.h"

typedef struct {
  int dim, degree, level, cells[3];
  double box[6];
  double reaction;
  int coefficient; /* 0: a = 1; 1: per cell; 2: at the quadrature points */
  double grading;  /* 0: equal cells; R: graded coarse cells, widths along each direction ∝ R^i */
} mesh_case;

static const mesh_case cases[] = {
    {2, 3, 3, {2, 3, 1}, {0, 2, 0, 1, 0, 1}, 0.0, 0, 0.0},
    {3, 2, 3, {1, 1, 1}, {0, 1, 0, 1, 0, 1}, 0.0, 0, 0.0},
    {3, 4, 2, {1, 2, 3}, {0, 1, 0, 1, 0, 2}, 0.0, 0, 0.0},
    {3, 2, 2, {2, 2, 8}, {0, 1, 0, 1, 0, 4}, 0.0, 0, 0.0}, /* a hidden level below level 0, split */
    {2, 5, 1, {5, 41, 1}, {0, 1, 0, 8, 0, 1}, 0.0, 0, 0.0}, /* level 0 split, solved on the host */
    {2, 3, 3, {2, 3, 1}, {0, 2, 0, 1, 0, 1}, 50.0, 0, 0.0},
    {3, 2, 2, {2, 2, 8}, {0, 1, 0, 1, 0, 4}, 1e4, 0, 0.0},
    {2, 3, 3, {2, 3, 1}, {0, 2, 0, 1, 0, 1}, 0.0, 1, 0.0},
    {2, 2, 3, {2, 3, 1}, {0, 2, 0, 1, 0, 1}, 5.0, 2, 0.0},
    {3, 2, 2, {2, 2, 8}, {0, 1, 0, 1, 0, 4}, 0.0, 2, 0.0}, /* a hidden level below level 0, split */
    {3, 3, 2, {1, 2, 3}, {0, 1, 0, 1, 0, 2}, 1.0, 1, 0.0},
    /* graded coarse cells (no hidden levels), with a reaction, a coefficient */
    {2, 3, 3, {2, 5, 1}, {0, 2, 0, 1, 0, 1}, 0.0, 0, 1.5},
    {3, 2, 2, {2, 2, 6}, {0, 1, 0, 1, 0, 4}, 10.0, 0, 3.0},
    {2, 2, 3, {2, 5, 1}, {0, 2, 0, 1, 0, 1}, 5.0, 2, 1.25},
};

/* The grid of a case: graded (tpmg_grid_options.cell_widths) where it says so. */
static tpmg_grid *case_grid(tpmg_context *ctx, const mesh_case *m) {
  if (m->grading == 0.0)
    return ref_grid_create_reaction(ctx, m->dim, m->degree, m->level, m->cells, m->box,
                                    m->reaction);
  tpmg_grid_options o = tpmg_grid_options_default();
  double widths[3][16];
  o.dim = m->dim;
  o.degree = m->degree;
  o.fine_level = m->level;
  o.reaction = m->reaction;
  memcpy(o.box, m->box, sizeof o.box);
  for (int d = 0; d < 3; ++d) {
    o.cells[d] = m->cells[d];
    double sum = 0.0;
    for (int i = 0; i < m->cells[d]; ++i) sum += widths[d][i] = pow(m->grading, i);
    for (int i = 0; i < m->cells[d]; ++i) widths[d][i] *= (m->box[2 * d + 1] - m->box[2 * d]) / sum;
    o.cell_widths[d] = d < m->dim ? widths[d] : NULL;
  }
  tpmg_grid *grid = NULL;
  REF_CALL(ctx, tpmg_grid_create(ctx, &o, &grid));
  return grid;
}

/* a of the coefficient cases: of the global cell indices i (per cell) and
 * the point q (quadrature), between 0.1 and 10, varying slowly from cell to
 * cell, the same for every partition (a rough coefficient slows the solvers
 * down: doc/benchmarks.md) */
static double coefficient(const int64_t i[3], int q) {
  return pow(10.0, sin(0.3 * (double)i[0] + 0.2 * (double)i[1] + 0.25 * (double)i[2] + 0.1 * q));
}

/* The coefficient of case m on a grid: this rank's cells of the finest level. */
static void set_coefficient(tpmg_context *ctx, tpmg_grid *grid, const mesh_case *m) {
  if (!m->coefficient)
    return;
  tpmg_level_layout layout;
  REF_CALL(ctx, tpmg_grid_level_layout(grid, m->level, &layout));
  const int nq = m->degree + 1;
  const int per_cell = m->coefficient == 2 ? (m->dim == 3 ? nq * nq * nq : nq * nq) : 1;
  int64_t plane = (int64_t)m->cells[0] << m->level;
  if (m->dim == 3)
    plane *= (int64_t)m->cells[1] << m->level;
  const int64_t n = plane * (layout.cell_end - layout.cell_first);
  double *values = ref_malloc(sizeof(double) * (size_t)(n * per_cell + 1));
  const int64_t n0 = (int64_t)m->cells[0] << m->level;
  for (int64_t e = 0; e < n; ++e) {
    const int64_t g = e + plane * layout.cell_first;
    const int64_t i[3] = {g % n0, m->dim == 3 ? g / n0 % (plane / n0) : g / n0,
                          m->dim == 3 ? g / plane : 0};
    for (int q = 0; q < per_cell; ++q)
      values[e * per_cell + q] = coefficient(i, q);
  }
  REF_CALL(ctx, tpmg_grid_set_coefficient(grid, m->coefficient == 2 ? TPMG_COEFFICIENT_QUADRATURE
                                                                    : TPMG_COEFFICIENT_CELLS,
                                          values));
  free(values);
}

/* f and g of the coefficient cases' right-hand side (no exact solution) */
static double source(const double *x, void *data) {
  (void)data;
  return 1.0 + x[0] - 2.0 * x[1] * x[2];
}

static double boundary(const double *x, void *data) {
  (void)data;
  return sin(3.0 * x[0]) + x[1] * x[1] + x[2];
}

/* Solve on ctx; the solution downloaded into doubles (this rank's vector). */
static tpmg_solver_result solve(tpmg_context *ctx, tpmg_grid *grid, const tpmg_solver_options *o,
                                tpmg_rhs rhs, int coefficient, double **solution, int64_t *n,
                                double *l2) {
  tpmg_precision p = o->arithmetic == TPMG_ARITHMETIC_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE;
  tpmg_grid_options g;
  REF_CALL(ctx, tpmg_grid_get_options(grid, &g));
  tpmg_index length = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, g.fine_level, &length, NULL));
  void *b = ref_vector_create(ctx, p, length, NULL), *x = ref_vector_create(ctx, p, length, NULL);
  if (coefficient && rhs == TPMG_RHS_SINE)
    REF_CALL(ctx, tpmg_problem_rhs_function(grid, source, boundary, NULL, p, b));
  else
    REF_CALL(ctx, tpmg_problem_rhs(grid, rhs, p, b));
  REF_CALL(ctx, tpmg_vector_set(ctx, p, length, 0.0, x));
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, o, &solver));
  tpmg_solver_result result;
  memset(&result, 0, sizeof result);
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  *l2 = NAN;
  if (rhs == TPMG_RHS_SINE)
    REF_CALL(ctx, tpmg_problem_l2_error(grid, rhs, p, x, l2));
  void *host = ref_malloc((p == TPMG_DOUBLE ? sizeof(double) : sizeof(float)) * (size_t)length);
  ref_vector_download(ctx, p, length, x, host);
  *solution = ref_malloc(sizeof(double) * (size_t)length);
  for (int64_t i = 0; i < length; ++i)
    (*solution)[i] = p == TPMG_DOUBLE ? ((double *)host)[i] : (double)((float *)host)[i];
  *n = length;
  free(host);
  ref_vector_destroy(ctx, &b);
  ref_vector_destroy(ctx, &x);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  return result;
}

static void compare(tpmg_context *one, tpmg_context *all, const mesh_case *m,
                    const tpmg_solver_options *o, tpmg_rhs rhs, double tolerance) {
  tpmg_grid *g1 = case_grid(one, m), *g2 = case_grid(all, m);
  double *x1 = NULL, *x2 = NULL, l2_one, l2_all;
  int64_t n1, n2;
  set_coefficient(one, g1, m);
  set_coefficient(all, g2, m);
  tpmg_solver_result r1 = solve(one, g1, o, rhs, m->coefficient, &x1, &n1, &l2_one);
  tpmg_solver_result r2 = solve(all, g2, o, rhs, m->coefficient, &x2, &n2, &l2_all);
  tpmg_level_layout layout;
  REF_CALL(all, tpmg_grid_level_layout(g2, m->level, &layout));
  /* the owned entries in double, whatever the precision of the solve */
  double difference = mref_owned_difference(&layout, TPMG_DOUBLE, x2, x1);
  char name[160];
  snprintf(name, sizeof name, "%dD Q%d L%d cells %d,%d,%d c %g a %d R %g, %s %s %s, rhs %s",
           m->dim, m->degree, m->level, m->cells[0], m->cells[1], m->cells[2], m->reaction,
           m->coefficient, m->grading,
           tpmg_solver_type_name(o->type), tpmg_preconditioning_name(o->preconditioning),
           tpmg_arithmetic_name(o->arithmetic), tpmg_rhs_name(rhs));
  REF_CHECK(r1.iterations == r2.iterations && r1.converged == r2.converged,
            "%s: one process %d iterations (converged %d), P ranks %d (converged %d)", name,
            r1.iterations, r1.converged, r2.iterations, r2.converged);
  REF_CHECK(r1.converged, "%s: did not converge on one process", name);
  REF_CHECK(difference <= tolerance, "%s: solutions differ by %.3e (tolerance %.1e)", name,
            difference, tolerance);
  /* float solves end near float's rounding: their residuals and errors agree
   * to a few per cent; a mixed solve's final residual carries the float
   * V-cycle's rounding of its last correction (1e-2); double's agree to 1e-3
   * (the true residual of a 1e-10 solve is itself only that accurate) */
  int single = o->arithmetic == TPMG_ARITHMETIC_FLOAT;
  double agree = single ? 0.1 : o->arithmetic == TPMG_ARITHMETIC_MIXED ? 1e-2 : 1e-3;
  /* The CUDA kernels' float rounding differs between a rank's box and the
   * whole level more than the CPU's (measured on two H200: a mixed FMG's
   * final residual reduction 1.1 % apart, a float solve's L2 error 5.1 %):
   * float and mixed results on another backend than "cpu" agree to 5 times
   * the CPU's bounds; double ones to the same. */
  int other = strcmp(mref_backend(), "cpu") != 0;
  if (other && o->arithmetic != TPMG_ARITHMETIC_DOUBLE)
    agree *= 5;
  REF_CHECK(fabs(r1.residual_reduction - r2.residual_reduction) <=
                agree * r1.residual_reduction + 1e-14,
            "%s: residual reduction %.6e on one process, %.6e on P ranks", name,
            r1.residual_reduction, r2.residual_reduction);
  if (rhs == TPMG_RHS_SINE)
    REF_CHECK(fabs(l2_one - l2_all) <= (single ? (other ? 0.25 : 0.05) : 1e-6) * l2_one,
              "%s: L2 error %.9e on one process, %.9e", name, l2_one, l2_all);
  free(x1);
  free(x2);
  tpmg_grid_destroy(&g1);
  tpmg_grid_destroy(&g2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  /* the distributed solves against the one-process solve of their backend
   * (the gpu-mpi tests: one GPU against several; t803 checks one GPU against
   * the CPU) */
  tpmg_context *all = mref_context_create(1), *one = mref_one_context_create(1);
  const tpmg_solver_type types[] = {TPMG_SOLVER_GMRES, TPMG_SOLVER_CG, TPMG_SOLVER_FMG,
                                    TPMG_SOLVER_VCYCLE, TPMG_SOLVER_FMG_GMRES};
  const tpmg_arithmetic arithmetics[] = {TPMG_ARITHMETIC_DOUBLE, TPMG_ARITHMETIC_MIXED,
                                         TPMG_ARITHMETIC_FLOAT};
  /* solutions differ by the sums' order: rounding of double for double and
   * mixed (the outer iteration in double), of float for float */
  const double tolerances[] = {1e-12, 1e-10, 2e-4};
  /* TPMG_TEST_SAMPLE=1 (the sanitizer step of tests/run-all.sh): every case
   * with every solver, in one arithmetic each, rotating with the case, so
   * that every pair of solver and arithmetic still runs on some cases */
  const char *sample_env = getenv("TPMG_TEST_SAMPLE");
  const int sample = sample_env && strcmp(sample_env, "1") == 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
    for (int t = 0; t < 5; ++t)
      for (int q = 0; q < 3; ++q) {
        if (sample && q != (int)((c + (size_t)t) % 3))
          continue;
        tpmg_solver_options o = tpmg_solver_options_default();
        o.type = types[t];
        o.arithmetic = arithmetics[q];
        /* graded cells' larger condition numbers: float stalls near 1e-4 */
        o.tolerance = arithmetics[q] != TPMG_ARITHMETIC_FLOAT ? 1e-9
                      : cases[c].grading != 0.0               ? 1e-3
                                                              : 1e-4;
        if (cases[c].coefficient) { /* the only smoother there */
          o.smoother = TPMG_SMOOTHER_GLOBAL;
          /* plain FMG and V-cycles contract by about 0.8 per cycle on the
           * quadrature case whose point values vary 400-fold inside a cell
           * (3D Q2, 0.1 q in the exponent): 1e-9 takes them 114 and 115 (with
           * the surrogate floor of 1/2, fewer than 100) */
          if (o.type == TPMG_SOLVER_FMG || o.type == TPMG_SOLVER_VCYCLE)
            o.max_iterations = 300;
        }
        compare(one, all, &cases[c], &o, TPMG_RHS_SINE, tolerances[q]);
        if (t == 0 && q == 0 && !cases[c].coefficient) {
          /* left preconditioning and the other smoother variants */
          o.preconditioning = TPMG_PRECONDITION_LEFT;
          compare(one, all, &cases[c], &o, TPMG_RHS_SINE, tolerances[q]);
          o.preconditioning = TPMG_PRECONDITION_RIGHT;
          for (int v = TPMG_SMOOTHER_GLOBAL; v <= TPMG_SMOOTHER_BOUNDARY; ++v) {
            o.smoother = (tpmg_smoother_variant)v;
            compare(one, all, &cases[c], &o, TPMG_RHS_ONE, tolerances[q]);
          }
        }
      }
  /* the paper's FMG cases (t500's), L = 4: 2D k = 1..4, 3D k = 1..3 */
  for (int dim = 2; dim <= 3; ++dim)
    for (int k = 1; k <= (dim == 2 ? 4 : 3); ++k) {
      mesh_case m = {dim, k, 4, {1, 1, 1}, {0, 1, 0, 1, 0, 1}, 0.0, 0, 0.0};
      tpmg_solver_options o = tpmg_solver_options_default();
      o.type = TPMG_SOLVER_FMG;
      o.arithmetic = TPMG_ARITHMETIC_DOUBLE;
      o.max_iterations = 50;
      compare(one, all, &m, &o, TPMG_RHS_ONES, 1e-12);
    }
  REF_CALL(one, tpmg_context_destroy(&one));
  REF_CALL(all, tpmg_context_destroy(&all));
  int code = mref_exit_code("t751-mpi-solvers");
  MPI_Finalize();
  return code;
}
