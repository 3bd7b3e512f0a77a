/* t601-solver-modes: solver types and precisions.
 * - the reported residual is the true one: residual_norm = ||b - A x|| with the
 *   assembled reference matrix, residual_reduction = residual_norm / ||b|| <=
 *   tolerance when converged, residual_norm_0 = ||b - A x_0||;
 * - MIXED (V-cycle in float) GMRES reaches the L2 error of DOUBLE GMRES
 *   (relative difference < 1e-6) and the tolerance 1e-11;
 * - MIXED GMRES, which keeps its preconditioned vectors Z_j in float, gives
 *   bitwise the iterations, the solution and the residual of flexible GMRES
 *   with the Z_j in double, written here over public operations
 *   (tpmg_multigrid_precondition of a float hierarchy on double vectors,
 *   tpmg_operator_apply, tpmg_vector_dots and tpmg_vector_axpys in double):
 *   the Z_j are float V-cycle outputs, exact in either precision;
 * - MIXED FMG and V-cycle solvers, which add the float V-cycle's result to x
 *   directly, give bitwise the iterations, solution and residual of the same
 *   iterations over public operations with the result converted to double
 *   first (tpmg_multigrid_fmg, tpmg_multigrid_precondition,
 *   tpmg_vector_axpby);
 * - MIXED FMG-GMRES gives bitwise the iterations, solution and residual of
 *   the public mixed FMG pass (tpmg_multigrid_fmg) followed by that flexible
 *   GMRES from its result, and needs no more iterations than GMRES from zero;
 * - CG with the symmetric V-cycle converges and agrees with GMRES;
 * - FLOAT arithmetic converges to 1e-4 with float vectors, L2 error within 1e-3;
 * - FMG and VCYCLE solvers converge; the monitor sees every iteration.
 * - MIXED FMG (float V-cycles, iterates in double on every level) needs no
 *   more V-cycles after its first pass than DOUBLE FMG and its L2 error
 *   within 1% + 1e-12, on problems whose discretization error is below float
 *   precision (2D Q3 on level 7, Q6 on level 5: an FMG pass that keeps its
 *   iterates in float needs 3 and 2 V-cycles there, DOUBLE FMG 1).
 * On the unit square and an anisotropic 2D/3D box with several coarse cells, on
 * the backend named by argv[1] (default "cpu"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "tpmg-bench.h"

typedef struct {
  int calls, last_iteration;
  double last;
} monitor_record;

static void monitor(void *data, int iteration, double relative_residual) {
  monitor_record *r = data;
  r->calls++;
  r->last_iteration = iteration;
  r->last = relative_residual;
}

typedef struct {
  tpmg_context *ctx;
  int dim, k, L;
  const int *cells;
  const double *box;
  ref_mesh m;
  ref_csr A;
  tpmg_grid *grid;
  double *b; /* host copy */
  void *vb;  /* in the context's memory */
  double norm_b;
} problem;

static void problem_init(problem *p, tpmg_context *ctx, int dim, int k, int L, const int *cells,
                         const double *box) {
  p->ctx = ctx;
  p->dim = dim;
  p->k = k;
  p->L = L;
  p->cells = cells;
  p->box = box;
  ref_mesh_init(&p->m, dim, k, cells, box, L);
  ref_assemble_laplace(&p->m, &p->A);
  p->grid = ref_grid_create(ctx, dim, k, L, cells, box);
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

/* ||b - A x|| with the reference matrix; *noise = 1e-14 || |A| |x| + |b| ||,
 * a bound on the rounding error of any evaluation of that residual. */
static double true_residual(const problem *p, const double *x, double *noise) {
  int64_t n = p->m.n_dofs;
  double *r = ref_malloc(sizeof(double) * n), *a = ref_malloc(sizeof(double) * n);
  ref_csr_apply(&p->A, x, r);
  for (int64_t i = 0; i < n; i++) {
    r[i] = p->b[i] - r[i];
    a[i] = fabs(p->b[i]);
    for (int64_t j = p->A.row_ptr[i]; j < p->A.row_ptr[i + 1]; j++)
      a[i] += fabs(p->A.val[j] * x[p->A.col[j]]);
  }
  double norm = ref_norm2(n, r);
  *noise = 1e-14 * ref_norm2(n, a);
  free(a);
  free(r);
  return norm;
}

/* Flexible GMRES(restart) from the right, from x0 (host, Dirichlet entries
 * those of b), over public operations with every vector in double: the Z_j
 * are the float V-cycle's output converted to double. The solver's steps in
 * its order (tpmg-solver.c): V_0 = r / ||r||; per iteration Z_j = P V_j,
 * w = A Z_j, classical Gram-Schmidt in one dots and one axpys with the norm,
 * Givens rotations; at the end of a cycle x += Z y and r = b - A x. Returns x
 * (caller frees), the iterations and ||b - A x|| computed as the solver's. */
static double *reference_fgmres(problem *p, double tol, int restart, const double *x0,
                                int *iterations, double *residual) {
  tpmg_context *ctx = p->ctx;
  int64_t n = p->m.n_dofs;
  const tpmg_precision d = TPMG_DOUBLE;
  tpmg_multigrid_options mg_options = {TPMG_FLOAT, TPMG_SMOOTHER_FUSED, 0};
  tpmg_multigrid *mg = NULL;
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_multigrid_create(p->grid, &mg_options, &mg));
  REF_CALL(ctx, tpmg_operator_create(p->grid, p->L, d, &op));
  void *x = ref_vector_create(ctx, d, n, x0), *r = ref_vector_create(ctx, d, n, NULL);
  void **V = ref_malloc(sizeof(void *) * restart), **Z = ref_malloc(sizeof(void *) * restart);
  for (int j = 0; j < restart; ++j) {
    V[j] = ref_vector_create(ctx, d, n, NULL);
    Z[j] = ref_vector_create(ctx, d, n, NULL);
  }
  double *H = ref_malloc(sizeof(double) * restart * restart),
         *c = ref_malloc(sizeof(double) * (restart + 1));
  double *cs = ref_malloc(sizeof(double) * restart), *sn = ref_malloc(sizeof(double) * restart);
  double *g = ref_malloc(sizeof(double) * (restart + 1)), *y = ref_malloc(sizeof(double) * restart);
  double bnorm, rnorm;
  REF_CALL(ctx, tpmg_vector_dot(ctx, d, n, p->vb, p->vb, &bnorm));
  bnorm = sqrt(bnorm);
  REF_CALL(ctx, tpmg_operator_apply(op, x, r));
  REF_CALL(ctx, tpmg_vector_axpby(ctx, d, n, 1.0, p->vb, -1.0, r));
  REF_CALL(ctx, tpmg_vector_dot(ctx, d, n, r, r, &rnorm));
  rnorm = sqrt(rnorm);
  double target = tol * bnorm;
  int it = 0;
  while (rnorm > target && it < 100) {
    REF_CALL(ctx, tpmg_vector_axpby(ctx, d, n, 1.0 / rnorm, r, 0.0, V[0]));
    memset(g, 0, sizeof(double) * (restart + 1));
    g[0] = rnorm;
    int j = 0;
    for (; j < restart; ++j) {
      REF_CALL(ctx, tpmg_multigrid_precondition(mg, d, V[j], Z[j]));
      REF_CALL(ctx, tpmg_operator_apply(op, Z[j], r));
      double after;
      REF_CALL(ctx, tpmg_vector_dots(ctx, d, n, j + 1, (const void *const *)V, r, c));
      for (int i = 0; i <= j; ++i) {
        H[i * restart + j] = c[i];
        c[i] = -c[i];
      }
      REF_CALL(ctx, tpmg_vector_axpys(ctx, d, n, j + 1, c, (const void *const *)V, r, &after));
      double h_next = sqrt(after);
      for (int i = 0; i < j; ++i) {
        double a = H[i * restart + j], b = H[(i + 1) * restart + j];
        H[i * restart + j] = cs[i] * a + sn[i] * b;
        H[(i + 1) * restart + j] = -sn[i] * a + cs[i] * b;
      }
      double a = H[j * restart + j], h = hypot(a, h_next);
      cs[j] = a / h;
      sn[j] = h_next / h;
      H[j * restart + j] = h;
      g[j + 1] = -sn[j] * g[j];
      g[j] = cs[j] * g[j];
      ++it;
      int done = fabs(g[j + 1]) <= target || it >= 100 || h_next == 0.0;
      if (!done && j + 1 < restart)
        REF_CALL(ctx, tpmg_vector_axpby(ctx, d, n, 1.0 / h_next, r, 0.0, V[j + 1]));
      if (done) {
        ++j;
        break;
      }
    }
    for (int i = j - 1; i >= 0; --i) {
      double sum = g[i];
      for (int q = i + 1; q < j; ++q)
        sum -= H[i * restart + q] * y[q];
      y[i] = sum / H[i * restart + i];
    }
    REF_CALL(ctx, tpmg_vector_axpys(ctx, d, n, j, y, (const void *const *)Z, x, NULL));
    REF_CALL(ctx, tpmg_operator_apply(op, x, r));
    REF_CALL(ctx, tpmg_vector_axpby(ctx, d, n, 1.0, p->vb, -1.0, r));
    REF_CALL(ctx, tpmg_vector_dot(ctx, d, n, r, r, &rnorm));
    rnorm = sqrt(rnorm);
  }
  *iterations = it;
  *residual = rnorm;
  double *xh = ref_malloc(sizeof(double) * n);
  REF_DOWNLOAD(ctx, d, n, x, xh);
  for (int j = 0; j < restart; ++j) {
    ref_vector_destroy(ctx, &V[j]);
    ref_vector_destroy(ctx, &Z[j]);
  }
  free(y);
  free(g);
  free(sn);
  free(cs);
  free(c);
  free(H);
  free(Z);
  free(V);
  ref_vector_destroy(ctx, &r);
  ref_vector_destroy(ctx, &x);
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  REF_CALL(ctx, tpmg_multigrid_destroy(&mg));
  return xh;
}

/* FMG (fmg != 0: tpmg_multigrid_fmg first) or V-cycles from zero, then
 * defect corrections x += V(0, b - A x) until the tolerance, at least one, as
 * the solver runs them (tpmg-solver.c), over public operations with a float
 * hierarchy and double vectors. Returns x (caller frees), the corrections and
 * ||b - A x||. */
static double *reference_vcycles(problem *p, double tol, int fmg, int *iterations,
                                 double *residual) {
  tpmg_context *ctx = p->ctx;
  int64_t n = p->m.n_dofs;
  const tpmg_precision d = TPMG_DOUBLE;
  tpmg_multigrid_options mg_options = {TPMG_FLOAT, TPMG_SMOOTHER_FUSED, 0};
  tpmg_multigrid *mg = NULL;
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_multigrid_create(p->grid, &mg_options, &mg));
  REF_CALL(ctx, tpmg_operator_create(p->grid, p->L, d, &op));
  double *xh = ref_malloc(sizeof(double) * n);
  void *x = ref_vector_create(ctx, d, n, NULL), *r = ref_vector_create(ctx, d, n, NULL);
  void *z = ref_vector_create(ctx, d, n, NULL);
  if (fmg) {
    REF_CALL(ctx, tpmg_multigrid_fmg(mg, d, p->vb, x));
    REF_DOWNLOAD(ctx, d, n, x, xh);
  } else {
    memset(xh, 0, sizeof(double) * n);
  }
  for (int64_t i = 0; i < n; i++)
    if (ref_mesh_is_boundary(&p->m, i))
      xh[i] = p->b[i];
  ref_vector_upload(ctx, d, n, xh, x);
  double bnorm, rnorm;
  REF_CALL(ctx, tpmg_vector_dot(ctx, d, n, p->vb, p->vb, &bnorm));
  bnorm = sqrt(bnorm);
  REF_CALL(ctx, tpmg_operator_apply(op, x, r));
  REF_CALL(ctx, tpmg_vector_axpby(ctx, d, n, 1.0, p->vb, -1.0, r));
  REF_CALL(ctx, tpmg_vector_dot(ctx, d, n, r, r, &rnorm));
  int it = 0;
  while ((it == 0 || sqrt(rnorm) > tol * bnorm) && it < 100) {
    REF_CALL(ctx, tpmg_multigrid_precondition(mg, d, r, z));
    REF_CALL(ctx, tpmg_vector_axpby(ctx, d, n, 1.0, z, 1.0, x));
    REF_CALL(ctx, tpmg_operator_apply(op, x, r));
    REF_CALL(ctx, tpmg_vector_axpby(ctx, d, n, 1.0, p->vb, -1.0, r));
    REF_CALL(ctx, tpmg_vector_dot(ctx, d, n, r, r, &rnorm));
    ++it;
  }
  *iterations = it;
  *residual = sqrt(rnorm);
  REF_DOWNLOAD(ctx, d, n, x, xh);
  ref_vector_destroy(ctx, &z);
  ref_vector_destroy(ctx, &r);
  ref_vector_destroy(ctx, &x);
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  REF_CALL(ctx, tpmg_multigrid_destroy(&mg));
  return xh;
}

/* The mixed FMG pass over public operations (tpmg_multigrid_fmg of a float
 * hierarchy, post-smoothing forward as the solver's, on double vectors), then
 * the Dirichlet entries of b: where FMG-GMRES starts its GMRES. Returns x
 * (caller frees). */
static double *reference_fmg_pass(problem *p) {
  tpmg_context *ctx = p->ctx;
  int64_t n = p->m.n_dofs;
  tpmg_multigrid_options mg_options = {TPMG_FLOAT, TPMG_SMOOTHER_FUSED, 0};
  tpmg_multigrid *mg = NULL;
  REF_CALL(ctx, tpmg_multigrid_create(p->grid, &mg_options, &mg));
  void *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_multigrid_fmg(mg, TPMG_DOUBLE, p->vb, x));
  double *xh = ref_malloc(sizeof(double) * n);
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, x, xh);
  for (int64_t i = 0; i < n; i++)
    if (ref_mesh_is_boundary(&p->m, i))
      xh[i] = p->b[i];
  ref_vector_destroy(ctx, &x);
  REF_CALL(ctx, tpmg_multigrid_destroy(&mg));
  return xh;
}

/* The start vector of solve: random; for FMG, FMG-GMRES and V-cycles zero but for random
 * Dirichlet entries, which the solver replaces by b's, so that they start
 * from zero as reference_vcycles does (FMG through its start-vector path: x
 * is not zero); x0 the same with the Dirichlet entries of b. */
static void start_vector(const problem *p, tpmg_solver_type type, double *x, double *x0) {
  int64_t n = p->m.n_dofs;
  uint64_t seed = 601;
  ref_fill_random(&seed, n, x);
  if (type == TPMG_SOLVER_FMG || type == TPMG_SOLVER_VCYCLE || type == TPMG_SOLVER_FMG_GMRES)
    for (int64_t i = 0; i < n; i++)
      if (!ref_mesh_is_boundary(&p->m, i))
        x[i] = 0.0;
  for (int64_t i = 0; i < n; i++)
    x0[i] = ref_mesh_is_boundary(&p->m, i) ? p->b[i] : x[i];
}

/* Solve in double vectors (DOUBLE or MIXED), check the result's residuals
 * against the reference; x returned (caller frees), L2 error in *error. */
static double *solve(problem *p, tpmg_solver_type type, tpmg_arithmetic arithmetic, double tol,
                     tpmg_solver_result *result, double *error, const char *what) {
  int64_t n = p->m.n_dofs;
  double *x = ref_malloc(sizeof(double) * n), *x0 = ref_malloc(sizeof(double) * n);
  start_vector(p, type, x, x0); /* the solver overwrites the Dirichlet entries of x */
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = type;
  options.arithmetic = arithmetic;
  options.tolerance = tol;
  options.max_iterations = 100;
  monitor_record rec = {0, -1, NAN};
  options.monitor = monitor;
  options.monitor_data = &rec;
  tpmg_solver *solver = NULL;
  REF_CALL(p->ctx, tpmg_solver_create(p->grid, &options, &solver));
  memset(result, 0xff, sizeof(*result));
  void *vx = ref_vector_create(p->ctx, TPMG_DOUBLE, n, x);
  REF_CALL(p->ctx, tpmg_solver_solve(solver, p->vb, vx, result));
  REF_CALL(p->ctx, tpmg_solver_destroy(&solver));
  REF_DOWNLOAD(p->ctx, TPMG_DOUBLE, n, vx, x);

  double noise;
  double r_true = true_residual(p, x, &noise);
  REF_CHECK(result->converged == 1,
            "%s dim %d k %d L %d: not converged (reduction %.3g, %d iterations)", what, p->dim,
            p->k, p->L, result->residual_reduction, result->iterations);
  REF_CHECK(
      fabs(result->residual_norm - r_true) <= 1e-3 * r_true + noise,
      "%s dim %d k %d L %d: residual_norm expected ||b - A x|| = %.6g (reference matrix), got %.6g",
      what, p->dim, p->k, p->L, r_true, result->residual_norm);
  REF_CHECK(fabs(result->residual_reduction - result->residual_norm / p->norm_b) <=
                1e-12 * result->residual_reduction,
            "%s: residual_reduction expected residual_norm/||b|| = %.6g, got %.6g", what,
            result->residual_norm / p->norm_b, result->residual_reduction);
  REF_CHECK(r_true <= tol * p->norm_b * (1 + 1e-6),
            "%s dim %d k %d L %d: true residual reduction expected <= %g, got %.3g", what, p->dim,
            p->k, p->L, tol, r_true / p->norm_b);
  if (type == TPMG_SOLVER_GMRES || type == TPMG_SOLVER_CG) {
    double r0 = true_residual(p, x0, &noise);
    REF_CHECK(fabs(result->residual_norm_0 - r0) <= 1e-10 * r0,
              "%s: residual_norm_0 expected ||b - A x_0|| = %.12g, got %.12g", what, r0,
              result->residual_norm_0);
  }
  for (int64_t i = 0; i < n; i++)
    if (ref_mesh_is_boundary(&p->m, i) && x[i] != p->b[i]) {
      REF_CHECK(0, "%s: Dirichlet entry %lld of x: expected b = %.17g, got %.17g", what,
                (long long)i, p->b[i], x[i]);
      break;
    }
  REF_CHECK(rec.calls == result->iterations && rec.last_iteration == result->iterations,
            "%s: monitor expected %d calls ending at iteration %d, got %d calls, last iteration %d",
            what, result->iterations, result->iterations, rec.calls, rec.last_iteration);
  REF_CALL(p->ctx, tpmg_problem_l2_error(p->grid, TPMG_RHS_SINE, TPMG_DOUBLE, vx, error));
  ref_vector_destroy(p->ctx, &vx);
  free(x0);
  return x;
}

static void check_modes(tpmg_context *ctx, int dim, int k, int L, const int *cells,
                        const double *box) {
  problem p;
  problem_init(&p, ctx, dim, k, L, cells, box);
  int64_t n = p.m.n_dofs;
  tpmg_solver_result rd, rm, rc, rf, rv;
  double ed, em, ec, ef, ev;
  /* a tight tolerance, so that algebraic errors stay far below the L2 error */
  const double tol = 1e-11;
  double *xd = solve(&p, TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_DOUBLE, tol, &rd, &ed, "GMRES double");
  double *xm = solve(&p, TPMG_SOLVER_GMRES, TPMG_ARITHMETIC_MIXED, tol, &rm, &em, "GMRES mixed");
  REF_CHECK(fabs(em - ed) <= 1e-6 * ed,
            "mixed vs double dim %d k %d L %d: L2 error expected %.12g (double), got %.12g (mixed)",
            dim, k, L, ed, em);
  REF_CHECK(rm.iterations <= rd.iterations + 2,
            "mixed GMRES dim %d k %d L %d: %d iterations, double needs %d", dim, k, L,
            rm.iterations, rd.iterations);
  {
    double *start = ref_malloc(sizeof(double) * n), *x0 = ref_malloc(sizeof(double) * n);
    start_vector(&p, TPMG_SOLVER_GMRES, start, x0);
    int it;
    double residual;
    double *xr = reference_fgmres(&p, tol, 30, x0, &it, &residual);
    REF_CHECK(rm.iterations == it && rm.residual_norm == residual,
              "mixed GMRES dim %d k %d L %d: expected %d iterations and residual %.17g (double "
              "Z_j), got %d and %.17g",
              dim, k, L, it, residual, rm.iterations, rm.residual_norm);
    for (int64_t i = 0; i < n; i++)
      if (memcmp(&xr[i], &xm[i], sizeof(double)) != 0) {
        REF_CHECK(0, "mixed GMRES dim %d k %d L %d: x[%lld] expected %.17g (double Z_j), got %.17g",
                  dim, k, L, (long long)i, xr[i], xm[i]);
        break;
      }
    free(xr);
    free(x0);
    free(start);
  }
  { /* FMG-GMRES: the mixed FMG pass (its last V-cycle writing Z_0 of the
       lending hierarchy), then GMRES from its result */
    tpmg_solver_result rg;
    double eg, residual;
    int it;
    double *xg =
        solve(&p, TPMG_SOLVER_FMG_GMRES, TPMG_ARITHMETIC_MIXED, tol, &rg, &eg, "FMG-GMRES mixed");
    double *x0 = reference_fmg_pass(&p);
    double *xr = reference_fgmres(&p, tol, 30, x0, &it, &residual);
    REF_CHECK(rg.iterations == it && rg.residual_norm == residual,
              "FMG-GMRES mixed dim %d k %d L %d: expected %d iterations and residual %.17g "
              "(public FMG, then double Z_j), got %d and %.17g",
              dim, k, L, it, residual, rg.iterations, rg.residual_norm);
    for (int64_t i = 0; i < n; i++)
      if (memcmp(&xr[i], &xg[i], sizeof(double)) != 0) {
        REF_CHECK(0, "FMG-GMRES mixed dim %d k %d L %d: x[%lld] expected %.17g, got %.17g", dim, k,
                  L, (long long)i, xr[i], xg[i]);
        break;
      }
    REF_CHECK(rg.iterations <= rm.iterations,
              "FMG-GMRES mixed dim %d k %d L %d: %d iterations after the pass, GMRES from zero %d",
              dim, k, L, rg.iterations, rm.iterations);
    free(xr);
    free(x0);
    free(xg);
  }
  double *xc = solve(&p, TPMG_SOLVER_CG, TPMG_ARITHMETIC_DOUBLE, tol, &rc, &ec, "CG double");
  double diff = ref_relative_difference(n, xc, xd);
  REF_CHECK(diff <= 1e-7,
            "CG vs GMRES dim %d k %d L %d: relative difference expected <= 1e-7, got %.3g", dim, k,
            L, diff);
  REF_CHECK(rc.iterations <= 30, "CG dim %d k %d L %d: expected <= 30 iterations, got %d", dim, k,
            L, rc.iterations);
  double *xf = solve(&p, TPMG_SOLVER_FMG, TPMG_ARITHMETIC_DOUBLE, tol, &rf, &ef, "FMG double");
  double *xv =
      solve(&p, TPMG_SOLVER_VCYCLE, TPMG_ARITHMETIC_DOUBLE, tol, &rv, &ev, "V-cycle double");
  REF_CHECK(fabs(ef - ed) <= 1e-6 * ed && fabs(ev - ed) <= 1e-6 * ed,
            "FMG / V-cycle L2 error dim %d k %d L %d: expected %.12g (GMRES), got %.12g / %.12g",
            dim, k, L, ed, ef, ev);
  REF_CHECK(rf.iterations <= rv.iterations,
            "FMG needs %d V-cycles after its first pass, plain V-cycles %d: expected no more",
            rf.iterations, rv.iterations);
  for (int fmg = 0; fmg < 2; fmg++) {
    tpmg_solver_result rm2;
    double em2, residual;
    int it;
    const char *name = fmg ? "FMG mixed" : "V-cycle mixed";
    double *xs = solve(&p, fmg ? TPMG_SOLVER_FMG : TPMG_SOLVER_VCYCLE, TPMG_ARITHMETIC_MIXED, tol,
                       &rm2, &em2, name);
    double *xr = reference_vcycles(&p, tol, fmg, &it, &residual);
    REF_CHECK(rm2.iterations == it && rm2.residual_norm == residual,
              "%s dim %d k %d L %d: expected %d V-cycles and residual %.17g (double z), got %d "
              "and %.17g",
              name, dim, k, L, it, residual, rm2.iterations, rm2.residual_norm);
    for (int64_t i = 0; i < n; i++)
      if (memcmp(&xr[i], &xs[i], sizeof(double)) != 0) {
        REF_CHECK(0, "%s dim %d k %d L %d: x[%lld] expected %.17g (double z), got %.17g", name, dim,
                  k, L, (long long)i, xr[i], xs[i]);
        break;
      }
    free(xr);
    free(xs);
  }

  /* FLOAT arithmetic: float vectors throughout */
  {
    void *bf = ref_vector_create(ctx, TPMG_FLOAT, n, NULL),
         *x = ref_vector_create(ctx, TPMG_FLOAT, n, NULL);
    REF_CALL(ctx, tpmg_problem_rhs(p.grid, TPMG_RHS_SINE, TPMG_FLOAT, bf));
    REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_FLOAT, n, 0.0, x));
    tpmg_solver_options options = tpmg_solver_options_default();
    options.type = TPMG_SOLVER_GMRES;
    options.arithmetic = TPMG_ARITHMETIC_FLOAT;
    /* the float residual stagnates near eps_float times the condition number */
    options.tolerance = 1e-4;
    tpmg_solver *solver = NULL;
    REF_CALL(ctx, tpmg_solver_create(p.grid, &options, &solver));
    tpmg_solver_result r;
    REF_CALL(ctx, tpmg_solver_solve(solver, bf, x, &r));
    REF_CHECK(r.converged == 1 && r.residual_reduction <= 1e-4,
              "FLOAT GMRES dim %d k %d L %d: expected convergence to 1e-4, got converged %d "
              "reduction %.3g",
              dim, k, L, r.converged, r.residual_reduction);
    double e = NAN;
    REF_CALL(ctx, tpmg_problem_l2_error(p.grid, TPMG_RHS_SINE, TPMG_FLOAT, x, &e));
    /* the algebraic error at tolerance 1e-4 bounds what the float solution reaches */
    REF_CHECK(
        fabs(e - ed) <= 1e-2 * ed + 1e-3,
        "FLOAT GMRES dim %d k %d L %d: L2 error expected %.6g (double) + 1e-3 at most, got %.6g",
        dim, k, L, ed, e);
    REF_CALL(ctx, tpmg_solver_destroy(&solver));
    ref_vector_destroy(ctx, &x);
    ref_vector_destroy(ctx, &bf);
  }
  free(xv);
  free(xf);
  free(xc);
  free(xm);
  free(xd);
  problem_free(&p);
}

static void check_fmg_mixed(tpmg_context *ctx, int dim, int k, int L) {
  problem p;
  problem_init(&p, ctx, dim, k, L, NULL, NULL);
  tpmg_solver_result rd, rm;
  double ed, em;
  double *xd = solve(&p, TPMG_SOLVER_FMG, TPMG_ARITHMETIC_DOUBLE, 1e-9, &rd, &ed, "FMG double");
  double *xm = solve(&p, TPMG_SOLVER_FMG, TPMG_ARITHMETIC_MIXED, 1e-9, &rm, &em, "FMG mixed");
  REF_CHECK(rm.iterations <= rd.iterations,
            "FMG mixed dim %d k %d L %d: %d V-cycles after the first pass, double needs %d", dim, k,
            L, rm.iterations, rd.iterations);
  /* L2 errors near 1e-13 (Q6) vary by a few percent with rounding */
  REF_CHECK(em <= 1.01 * ed + 1e-12,
            "FMG mixed vs double dim %d k %d L %d: L2 error expected at most 1.01 x %.12g "
            "(double) + 1e-12, got %.12g",
            dim, k, L, ed, em);
  free(xm);
  free(xd);
  problem_free(&p);
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const int cells[3] = {2, 3, 1};
  const double box[6] = {0, 2, -1, 0.5, 0, 0.3};
  check_modes(ctx, 2, 3, 3, NULL, NULL);
  check_modes(ctx, 2, 2, 3, cells, box);
  check_modes(ctx, 2, 5, 2, cells, box);
  check_modes(ctx, 3, 2, 2, cells, box);
  check_modes(ctx, 3, 1, 3, NULL, NULL);
  check_fmg_mixed(ctx, 2, 3, 7);
  check_fmg_mixed(ctx, 2, 6, 5);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t601-solver-modes");
}
