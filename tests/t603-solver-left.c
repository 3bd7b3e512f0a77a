/* t603-solver-left: GMRES with TPMG_PRECONDITION_LEFT (deal.II's SolverGMRES
 * default, the paper's convention) against GMRES written here on the host:
 * Arnoldi on P A with the assembled reference matrix A and tpmg's V-cycle P
 * (tpmg_multigrid_precondition, the operator the solver uses), the same
 * stopping test ||P (b - A x)|| <= tol ||P (b - A x_0)||. Checks:
 * - the same iteration count, a solution equal to 1e-8 relative;
 * - converged = 1 reports the preconditioned test; residual_reduction is the
 *   true ||b - A x|| / ||b|| (the two measures differ either way);
 * - the monitor's last value is the preconditioned relative residual;
 * - left preconditioning with CG is refused, and nothing is created;
 * - FMG_GMRES with left preconditioning measures from the caller's start
 *   (||P b|| for x_0 = 0), not from the FMG pass's result: in double, mixed
 *   and float it converges in a few iterations on 2D Q3 L5 and 3D Q2 L4 (it ran
 *   to the iteration limit when measured from the FMG pass, whose residual is
 *   already near the tolerance), with the true residual near the tolerance.
 * 2D and 3D, on the unit square and an anisotropic box; on the backend named
 * by argv[1] (default "cpu"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

enum { RESTART = 30 };

static double last_monitored;
static void monitor(void *data, int iteration, double relative) {
  (void)data;
  (void)iteration;
  last_monitored = relative;
}

/* z = P r through vectors in the context's memory, z poisoned first. */
static void precondition(tpmg_context *ctx, tpmg_multigrid *mg, int64_t n, const double *r,
                         double *z) {
  void *vr = ref_vector_create(ctx, TPMG_DOUBLE, n, r),
       *vz = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_multigrid_precondition(mg, TPMG_DOUBLE, vr, vz));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vz, z);
  ref_vector_destroy(ctx, &vz);
  ref_vector_destroy(ctx, &vr);
}

static double dot(int64_t n, const double *a, const double *b) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* Host GMRES on P A without restarts (the test's problems converge in fewer
 * than RESTART steps); returns the iteration count, x updated in place. */
static int reference_left_gmres(tpmg_context *ctx, tpmg_multigrid *mg, const ref_csr *A,
                                const double *b, double *x, double tol) {
  int64_t n = A->n;
  double *V[RESTART + 1], *t = ref_malloc(sizeof(double) * n);
  for (int i = 0; i <= RESTART; i++)
    V[i] = ref_malloc(sizeof(double) * n);
  double H[RESTART + 1][RESTART], cs[RESTART], sn[RESTART], g[RESTART + 1] = {0}, y[RESTART];
  ref_csr_apply(A, x, t);
  for (int64_t i = 0; i < n; i++)
    t[i] = b[i] - t[i];
  precondition(ctx, mg, n, t, V[0]);
  double beta = sqrt(dot(n, V[0], V[0]));
  for (int64_t i = 0; i < n; i++) V[0][i] /= beta;
  g[0] = beta;
  int j = 0;
  while (j < RESTART) {
    ref_csr_apply(A, V[j], t);
    precondition(ctx, mg, n, t, V[j + 1]);
    for (int i = 0; i <= j; i++) {
      H[i][j] = dot(n, V[j + 1], V[i]);
      for (int64_t q = 0; q < n; q++) V[j + 1][q] -= H[i][j] * V[i][q];
    }
    double h = sqrt(dot(n, V[j + 1], V[j + 1]));
    for (int64_t q = 0; q < n; q++) V[j + 1][q] /= h;
    for (int i = 0; i < j; i++) {
      double a = cs[i] * H[i][j] + sn[i] * H[i + 1][j];
      H[i + 1][j] = -sn[i] * H[i][j] + cs[i] * H[i + 1][j];
      H[i][j] = a;
    }
    double d = hypot(H[j][j], h);
    cs[j] = H[j][j] / d;
    sn[j] = h / d;
    H[j][j] = d;
    g[j + 1] = -sn[j] * g[j];
    g[j] *= cs[j];
    j++;
    if (fabs(g[j]) <= tol * beta) break;
  }
  for (int i = j - 1; i >= 0; i--) {
    y[i] = g[i];
    for (int q = i + 1; q < j; q++) y[i] -= H[i][q] * y[q];
    y[i] /= H[i][i];
  }
  for (int i = 0; i < j; i++)
    for (int64_t q = 0; q < n; q++) x[q] += y[i] * V[i][q];
  for (int i = 0; i <= RESTART; i++) free(V[i]);
  free(t);
  return j;
}

static void check_left(tpmg_context *ctx, int dim, int k, int L, const int *cells,
                       const double *box) {
  ref_mesh m;
  ref_csr A;
  ref_mesh_init(&m, dim, k, cells, box, L);
  ref_assemble_laplace(&m, &A);
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, cells, box);
  int64_t n = m.n_dofs;
  double *b = ref_malloc(sizeof(double) * n), *x = ref_malloc(sizeof(double) * n);
  double *x_ref = ref_malloc(sizeof(double) * n), *r = ref_malloc(sizeof(double) * n);
  void *vb = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL),
       *vx = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, vb));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vb, b);
  const double tol = 1e-9;

  /* the reference: start x_0 = 0 with the Dirichlet entries of b, as the solver */
  tpmg_multigrid_options mo = tpmg_multigrid_options_default();
  mo.symmetric = 0; /* the V-cycle GMRES uses */
  tpmg_multigrid *mg = NULL;
  REF_CALL(ctx, tpmg_multigrid_create(grid, &mo, &mg));
  for (int64_t i = 0; i < n; i++) x_ref[i] = ref_mesh_is_boundary(&m, i) ? b[i] : 0.0;
  int it_ref = reference_left_gmres(ctx, mg, &A, b, x_ref, tol);
  REF_CALL(ctx, tpmg_multigrid_destroy(&mg));

  tpmg_solver_options o = tpmg_solver_options_default();
  o.type = TPMG_SOLVER_GMRES;
  o.arithmetic = TPMG_ARITHMETIC_DOUBLE;
  o.preconditioning = TPMG_PRECONDITION_LEFT;
  o.tolerance = tol;
  o.monitor = monitor;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &o, &solver));
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, vx));
  tpmg_solver_result res;
  last_monitored = NAN;
  REF_CALL(ctx, tpmg_solver_solve(solver, vb, vx, &res));
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vx, x);
  ref_vector_destroy(ctx, &vx);
  ref_vector_destroy(ctx, &vb);

  REF_CHECK(res.iterations == it_ref, "left GMRES dim %d k %d L %d: %d iterations, reference %d",
            dim, k, L, res.iterations, it_ref);
  double diff = ref_relative_difference(n, x, x_ref);
  REF_CHECK(diff <= 1e-8,
            "left GMRES dim %d k %d L %d: solution differs from the reference by %.3g", dim, k, L,
            diff);
  REF_CHECK(res.converged == 1, "left GMRES dim %d k %d L %d: not converged", dim, k, L);
  REF_CHECK(last_monitored <= tol && last_monitored > 0.0,
            "left GMRES dim %d k %d L %d: last monitored value %.3g, expected in (0, %g]", dim, k,
            L, last_monitored, tol);
  ref_csr_apply(&A, x, r);
  for (int64_t i = 0; i < n; i++) r[i] = b[i] - r[i];
  double true_reduction = ref_norm2(n, r) / ref_norm2(n, b);
  REF_CHECK(fabs(res.residual_reduction - true_reduction) <= 1e-3 * true_reduction + 1e-14,
            "left GMRES dim %d k %d L %d: residual_reduction %.6g, reference %.6g", dim, k, L,
            res.residual_reduction, true_reduction);

  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  ref_csr_free(&A);
  free(b);
  free(x);
  free(x_ref);
  free(r);
}

static void check_fmg_left(tpmg_context *ctx, int dim, int k, int L) {
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, NULL, NULL);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, L, &n, NULL));
  const tpmg_arithmetic arithmetics[3] = {TPMG_ARITHMETIC_DOUBLE, TPMG_ARITHMETIC_MIXED,
                                          TPMG_ARITHMETIC_FLOAT};
  for (int m = 0; m < 3; ++m) {
    tpmg_precision p = arithmetics[m] == TPMG_ARITHMETIC_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE;
    tpmg_solver_options o = tpmg_solver_options_default();
    o.type = TPMG_SOLVER_FMG_GMRES;
    o.arithmetic = arithmetics[m];
    o.preconditioning = TPMG_PRECONDITION_LEFT;
    o.tolerance = arithmetics[m] == TPMG_ARITHMETIC_FLOAT ? 1e-4 : 1e-9;
    o.monitor = monitor;
    last_monitored = -1;
    void *b = ref_vector_create(ctx, p, n, NULL), *x = ref_vector_create(ctx, p, n, NULL);
    REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, p, b));
    REF_CALL(ctx, tpmg_vector_set(ctx, p, n, 0.0, x));
    tpmg_solver *solver = NULL;
    REF_CALL(ctx, tpmg_solver_create(grid, &o, &solver));
    tpmg_solver_result result;
    REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
    REF_CHECK(result.converged && result.iterations <= 10,
              "FMG_GMRES left, %dD Q%d L%d arithmetic %d: converged %d in %d iterations, expected "
              "within 10",
              dim, k, L, (int)arithmetics[m], result.converged, result.iterations);
    REF_CHECK(result.iterations == 0 || last_monitored <= o.tolerance,
              "FMG_GMRES left, %dD Q%d L%d arithmetic %d: the monitor's last value %.3g above the "
              "tolerance %g",
              dim, k, L, (int)arithmetics[m], last_monitored, o.tolerance);
    REF_CHECK(result.residual_reduction <= 100 * o.tolerance,
              "FMG_GMRES left, %dD Q%d L%d arithmetic %d: true residual reduction %.3g, expected "
              "within 100 times the tolerance %g",
              dim, k, L, (int)arithmetics[m], result.residual_reduction, o.tolerance);
    REF_CALL(ctx, tpmg_solver_destroy(&solver));
    ref_vector_destroy(ctx, &x);
    ref_vector_destroy(ctx, &b);
  }
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const int cells[3] = {2, 3, 1};
  const double box2[4] = {0.0, 1.0, -0.5, 1.0}, box3[6] = {0.0, 2.0, 0.0, 1.0, 0.0, 0.5};
  check_left(ctx, 2, 1, 5, NULL, NULL);
  check_left(ctx, 2, 3, 3, cells, box2);
  check_left(ctx, 3, 2, 3, NULL, NULL);
  check_left(ctx, 3, 3, 2, cells, box3);
  check_fmg_left(ctx, 2, 3, 5);
  check_fmg_left(ctx, 3, 2, 4);

  /* refused with CG: nothing is created */
  tpmg_grid *grid = ref_grid_create(ctx, 2, 2, 2, NULL, NULL);
  tpmg_solver_options o = tpmg_solver_options_default();
  o.type = TPMG_SOLVER_CG;
  o.preconditioning = TPMG_PRECONDITION_LEFT;
  tpmg_solver *solver = NULL;
  REF_CHECK(tpmg_solver_create(grid, &o, &solver) == TPMG_ERROR_ARGUMENT && solver == NULL,
            "CG with TPMG_PRECONDITION_LEFT: expected TPMG_ERROR_ARGUMENT and no solver");
  REF_CHECK(strstr(tpmg_context_last_error(ctx), "preconditioning") != NULL,
            "CG with TPMG_PRECONDITION_LEFT: message '%s' does not name the option",
            tpmg_context_last_error(ctx));
  o.type = TPMG_SOLVER_GMRES;
  o.preconditioning = (tpmg_preconditioning)7;
  REF_CHECK(tpmg_solver_create(grid, &o, &solver) == TPMG_ERROR_ARGUMENT && solver == NULL,
            "preconditioning 7: expected TPMG_ERROR_ARGUMENT and no solver");
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t603-solver-left");
}
