/* t608-solver-start: FMG, V-cycle and FMG-GMRES solvers start from the given x.
 * Per arithmetic (DOUBLE, MIXED, FLOAT) and solver (FMG, VCYCLE, FMG_GMRES):
 * - x zero but for random Dirichlet entries gives bitwise the x, iterations and
 *   residuals of x = 0 (the solver sets x's Dirichlet entries to b's; FMG then
 *   takes its start-vector path, which restricts b - A x = b's interior);
 * - from the converged solution x_a of that solve, one V-cycle (FMG-GMRES: at
 *   most one GMRES iteration): converged after it, and the residual the solver reports before it
 * (after the FMG pass for FMG) within 10 times x_a's own, where from zero it is above 100 times
 * that (so a solver that ignored x would fail; not for FLOAT FMG, whose pass from zero ends near
 * float rounding already);
 * - from a random x: converged, the true residual (assembled reference
 *   matrix) within the tolerance, and x within 1e-8 (float: 1e-3) of x_a
 *   relative to max |x_a| (measured: 2e-10, float 2e-5);
 * - DOUBLE and MIXED FMG with one V-cycle after the pass from a random x0
 *   equal x0 + FMG(b - A x0) followed by one defect correction, written here
 *   over public operations (tpmg_multigrid_fmg from zero on the residual,
 *   tpmg_multigrid_precondition): FMG from x0 solves for the correction on the
 *   coarser levels, and the finest level's V-cycle is affine in x. Equal to
 *   rounding: relative 1e-10 in double, 1e-8 with the float V-cycle, whose
 *   inputs differ in double rounding (measured: 1.4e-15 and 2.2e-16).
 * 2D Q3 and 3D Q2 on boxes of several coarse cells, on the backend named by
 * argv[1] (default "cpu"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

typedef struct {
  tpmg_context *ctx;
  int L;
  ref_mesh m;
  ref_csr A;
  tpmg_grid *grid;
  double *b; /* host copy, double */
  void *vb;  /* double in the context's memory */
  double norm_b;
} problem;

static void problem_init(problem *p, tpmg_context *ctx, int dim, int k, int L, const int *cells) {
  p->ctx = ctx;
  p->L = L;
  ref_mesh_init(&p->m, dim, k, cells, NULL, L);
  ref_assemble_laplace(&p->m, &p->A);
  p->grid = ref_grid_create(ctx, dim, k, L, cells, NULL);
  p->b = ref_malloc(sizeof(double) * p->m.n_dofs);
  p->vb = ref_vector_create(ctx, TPMG_DOUBLE, p->m.n_dofs, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(p->grid, TPMG_RHS_SINE, TPMG_DOUBLE, p->vb));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, p->m.n_dofs, p->vb, p->b);
  p->norm_b = ref_norm2(p->m.n_dofs, p->b);
}

static void problem_free(problem *p) {
  ref_vector_destroy(p->ctx, &p->vb);
  free(p->b);
  REF_CALL(p->ctx, tpmg_grid_destroy(&p->grid));
  ref_csr_free(&p->A);
}

/* ||b - A x|| with the assembled reference matrix. */
static double true_residual(const problem *p, const double *x) {
  int64_t n = p->m.n_dofs;
  double *r = ref_malloc(sizeof(double) * n);
  ref_csr_apply(&p->A, x, r);
  for (int64_t i = 0; i < n; i++)
    r[i] = p->b[i] - r[i];
  double norm = ref_norm2(n, r);
  free(r);
  return norm;
}

/* Solve from the host start vector x (double), in the arithmetic's vectors; x is
 * overwritten by the solution (converted to double). */
static void solve(problem *p, tpmg_solver_type type, tpmg_arithmetic arithmetic, int max_iterations,
                  double *x, tpmg_solver_result *result) {
  tpmg_context *ctx = p->ctx;
  int64_t n = p->m.n_dofs;
  tpmg_precision q = arithmetic == TPMG_ARITHMETIC_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE;
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = type;
  options.arithmetic = arithmetic;
  options.tolerance = arithmetic == TPMG_ARITHMETIC_FLOAT ? 1e-4 : 1e-9;
  options.max_iterations = max_iterations;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(p->grid, &options, &solver));
  void *vb = p->vb, *vx = NULL;
  float *hf = NULL;
  if (q == TPMG_FLOAT) {
    hf = ref_malloc(sizeof(float) * n);
    for (int64_t i = 0; i < n; i++)
      hf[i] = (float)p->b[i];
    vb = ref_vector_create(ctx, q, n, hf);
    for (int64_t i = 0; i < n; i++)
      hf[i] = (float)x[i];
    vx = ref_vector_create(ctx, q, n, hf);
  } else {
    vx = ref_vector_create(ctx, q, n, x);
  }
  memset(result, 0xff, sizeof(*result));
  REF_CALL(ctx, tpmg_solver_solve(solver, vb, vx, result));
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  if (q == TPMG_FLOAT) {
    REF_DOWNLOAD(ctx, q, n, vx, hf);
    for (int64_t i = 0; i < n; i++)
      x[i] = hf[i];
    ref_vector_destroy(ctx, &vb);
    free(hf);
  } else {
    REF_DOWNLOAD(ctx, q, n, vx, x);
  }
  ref_vector_destroy(ctx, &vx);
}

/* x0 + FMG(b - A x0), then x += V(0, b - A x), over public operations: the
 * hierarchy of the arithmetic (float for MIXED, double vectors), symmetric 0 as
 * the solver's. x0 has the Dirichlet entries of b. Returns x (caller frees). */
static double *reference_fmg_from(problem *p, tpmg_arithmetic arithmetic, const double *x0) {
  tpmg_context *ctx = p->ctx;
  int64_t n = p->m.n_dofs;
  const tpmg_precision d = TPMG_DOUBLE;
  tpmg_multigrid_options mg_options = {arithmetic == TPMG_ARITHMETIC_MIXED ? TPMG_FLOAT : d,
                                       TPMG_SMOOTHER_FUSED, 0};
  tpmg_multigrid *mg = NULL;
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_multigrid_create(p->grid, &mg_options, &mg));
  REF_CALL(ctx, tpmg_operator_create(p->grid, p->L, d, &op));
  void *x = ref_vector_create(ctx, d, n, x0), *r = ref_vector_create(ctx, d, n, NULL);
  void *e = ref_vector_create(ctx, d, n, NULL);
  for (int pass = 0; pass < 2; ++pass) { /* the FMG pass, then one correction */
    REF_CALL(ctx, tpmg_operator_apply(op, x, r));
    REF_CALL(ctx, tpmg_vector_axpby(ctx, d, n, 1.0, p->vb, -1.0, r));
    if (pass == 0)
      REF_CALL(ctx, tpmg_multigrid_fmg(mg, d, r, e));
    else
      REF_CALL(ctx, tpmg_multigrid_precondition(mg, d, r, e));
    REF_CALL(ctx, tpmg_vector_axpby(ctx, d, n, 1.0, e, 1.0, x));
  }
  double *xh = ref_malloc(sizeof(double) * n);
  REF_DOWNLOAD(ctx, d, n, x, xh);
  ref_vector_destroy(ctx, &e);
  ref_vector_destroy(ctx, &r);
  ref_vector_destroy(ctx, &x);
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  REF_CALL(ctx, tpmg_multigrid_destroy(&mg));
  return xh;
}

static void check_case(problem *p, tpmg_solver_type type, tpmg_arithmetic arithmetic,
                       const char *name) {
  int64_t n = p->m.n_dofs;
  double tol = arithmetic == TPMG_ARITHMETIC_FLOAT ? 1e-4 : 1e-9;
  double *xa = ref_malloc(sizeof(double) * n), *x = ref_malloc(sizeof(double) * n);
  uint64_t seed = 608;

  /* from zero, and from zero but for random Dirichlet entries */
  memset(xa, 0, sizeof(double) * n);
  tpmg_solver_result ra, rb;
  solve(p, type, arithmetic, 100, xa, &ra);
  REF_CHECK(ra.converged, "%s: no convergence from zero (reduction %.3g)", name,
            ra.residual_reduction);
  ref_fill_random(&seed, n, x);
  for (int64_t i = 0; i < n; i++)
    if (!ref_mesh_is_boundary(&p->m, i))
      x[i] = 0.0;
  solve(p, type, arithmetic, 100, x, &rb);
  REF_CHECK(memcmp(x, xa, sizeof(double) * n) == 0,
            "%s: x zero but for its Dirichlet entries: solution differs from x = 0's by %.3g", name,
            ref_relative_difference(n, x, xa));
  REF_CHECK(rb.iterations == ra.iterations && rb.residual_norm_0 == ra.residual_norm_0 &&
                rb.residual_norm == ra.residual_norm,
            "%s: x zero but for its Dirichlet entries: %d iterations, residuals %.17g %.17g; "
            "from x = 0 %d, %.17g %.17g",
            name, rb.iterations, rb.residual_norm_0, rb.residual_norm, ra.iterations,
            ra.residual_norm_0, ra.residual_norm);

  /* from the solution: the start vector is used */
  tpmg_solver_result rc;
  memcpy(x, xa, sizeof(double) * n);
  solve(p, type, arithmetic, 100, x, &rc);
  /* float FMG's pass from zero ends near float's rounding already: not told
   * apart there, but it runs the code of DOUBLE FMG (fmg_plain) */
  int pass = type == TPMG_SOLVER_FMG || type == TPMG_SOLVER_FMG_GMRES;
  int tells = !(pass && arithmetic == TPMG_ARITHMETIC_FLOAT);
  REF_CHECK(!tells || ra.residual_norm_0 > 100 * ra.residual_norm,
            "%s: the test cannot tell: from zero the first residual %.3g is not above 100 times "
            "the final %.3g",
            name, ra.residual_norm_0, ra.residual_norm);
  REF_CHECK(rc.residual_norm_0 <= 10 * ra.residual_norm,
            "%s: from the solution (residual %.3g) the first residual is %.3g: start vector "
            "ignored? (from zero %.3g)",
            name, ra.residual_norm, rc.residual_norm_0, ra.residual_norm_0);
  int one = type == TPMG_SOLVER_FMG_GMRES ? rc.iterations <= 1 : rc.iterations == 1;
  REF_CHECK(rc.converged && one,
            "%s: from the solution: converged %d after %d iterations, expected 1 after 1", name,
            rc.converged, rc.iterations);

  /* from a random x */
  tpmg_solver_result rd;
  ref_fill_random(&seed, n, x);
  solve(p, type, arithmetic, 100, x, &rd);
  double r_true = true_residual(p, x);
  REF_CHECK(rd.converged && r_true <= tol * p->norm_b * (1 + 1e-6),
            "%s: from a random x: converged %d, true residual %.3g, tolerance x ||b|| %.3g", name,
            rd.converged, r_true, tol * p->norm_b);
  double bound = arithmetic == TPMG_ARITHMETIC_FLOAT ? 1e-3 : 1e-8;
  double diff = ref_relative_difference(n, x, xa);
  REF_CHECK(diff <= bound, "%s: from a random x the solution differs from x = 0's by %.3g > %g",
            name, diff, bound);

  /* FMG from a random x0: x0 + FMG(b - A x0) and one correction */
  if (type == TPMG_SOLVER_FMG && arithmetic != TPMG_ARITHMETIC_FLOAT) {
    double *x0 = ref_malloc(sizeof(double) * n);
    ref_fill_random(&seed, n, x0);
    for (int64_t i = 0; i < n; i++)
      if (ref_mesh_is_boundary(&p->m, i))
        x0[i] = p->b[i];
    memcpy(x, x0, sizeof(double) * n);
    tpmg_solver_result re;
    solve(p, type, arithmetic, 1, x, &re);
    double *xr = reference_fmg_from(p, arithmetic, x0);
    double agree = arithmetic == TPMG_ARITHMETIC_MIXED ? 1e-8 : 1e-10;
    diff = ref_relative_difference(n, x, xr);
    REF_CHECK(re.iterations == 1 && diff <= agree,
              "%s: FMG from x0 with one V-cycle: %d V-cycles, differs from x0 + FMG(b - A x0) "
              "and one correction by %.3g > %g",
              name, re.iterations, diff, agree);
    free(xr);
    free(x0);
  }
  free(x);
  free(xa);
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const struct { int dim, k, L, cells[3]; } cases[] = {{2, 3, 3, {2, 1, 1}}, {3, 2, 2, {1, 2, 1}}};
  const tpmg_arithmetic arithmetics[] = {TPMG_ARITHMETIC_DOUBLE, TPMG_ARITHMETIC_MIXED,
                                         TPMG_ARITHMETIC_FLOAT};
  const tpmg_solver_type types[] = {TPMG_SOLVER_FMG, TPMG_SOLVER_VCYCLE, TPMG_SOLVER_FMG_GMRES};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    problem p;
    problem_init(&p, ctx, cases[c].dim, cases[c].k, cases[c].L, cases[c].cells);
    for (int q = 0; q < 3; ++q)
      for (int t = 0; t < 3; ++t) {
        char name[96];
        snprintf(name, sizeof(name), "%dD Q%d L%d %s %s", cases[c].dim, cases[c].k, cases[c].L,
                 tpmg_solver_type_name(types[t]), tpmg_arithmetic_name(arithmetics[q]));
        check_case(&p, types[t], arithmetics[q], name);
      }
    problem_free(&p);
  }
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t608-solver-start");
}
