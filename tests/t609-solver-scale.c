/* t609-solver-scale: a solve of s b gives s x in the iterations of b, for s far
 * from 1 (issue 29). Per arithmetic and solver (GMRES from the right and from the
 * left, CG, FMG, V-cycles, FMG-GMRES), from x = 0, with s = 2^-1000, 1e-300,
 * 1e300, 2^1000 in DOUBLE and MIXED (b in double: the plain ||b||^2 under- or
 * overflows, and s b is far outside float's range for MIXED's float V-cycle)
 * and s = 2^-100, 1e-30, 1e30, 2^100 in FLOAT (b in float):
 * - status success, no NaN or infinity in x or the result;
 * - s = c 2^e with c in [1, 2): s b is c b scaled exactly, and the solver
 *   scales by powers of two, which change no rounding: the iterations and
 *   convergence of c b, x bitwise 2^e times its x, the residual norms 2^e
 *   times its, the same residual reduction. For c = 1 (s a power of two) that
 *   is the solve of b itself; for c != 1 the solve of c b is an ordinary one,
 *   whose iterations are b's, or one more or less where rounding moves the
 *   last residual across the tolerance (measured: GMRES from the left in
 *   MIXED, 5 iterations for c = 1.4932 (s = 1e300) against 6).
 * And a b with a NaN or an infinite entry is refused (TPMG_ERROR_ARGUMENT)
 * with x unchanged; b = 0 from x = 0 gives x = 0 in 0 iterations.
 * 2D Q3 and 3D Q2 on boxes of several coarse cells, on the backend named by
 * argv[1] (default "cpu"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

typedef struct {
  tpmg_solver_type type;
  tpmg_preconditioning preconditioning;
} solver_kind;

static const solver_kind kinds[] = {{TPMG_SOLVER_GMRES, TPMG_PRECONDITION_RIGHT},
                                    {TPMG_SOLVER_GMRES, TPMG_PRECONDITION_LEFT},
                                    {TPMG_SOLVER_CG, TPMG_PRECONDITION_RIGHT},
                                    {TPMG_SOLVER_FMG, TPMG_PRECONDITION_RIGHT},
                                    {TPMG_SOLVER_VCYCLE, TPMG_PRECONDITION_RIGHT},
                                    {TPMG_SOLVER_FMG_GMRES, TPMG_PRECONDITION_RIGHT}};

/* Solve s b from x = 0 (b: the host right-hand side in double, rounded to
 * float in FLOAT after scaling); x: the solution in double. */
static tpmg_status solve_scaled(tpmg_context *ctx, tpmg_solver *solver, tpmg_arithmetic arithmetic,
                                int64_t n, const double *b, double s, double *x,
                                tpmg_solver_result *result) {
  tpmg_precision q = arithmetic == TPMG_ARITHMETIC_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE;
  size_t size = q == TPMG_FLOAT ? sizeof(float) : sizeof(double);
  void *hb = ref_malloc(size * n), *hx = ref_malloc(size * n);
  for (int64_t i = 0; i < n; i++) {
    if (q == TPMG_FLOAT)
      ((float *)hb)[i] = (float)(s * b[i]);
    else
      ((double *)hb)[i] = s * b[i];
  }
  memset(hx, 0, size * n);
  void *vb = ref_vector_create(ctx, q, n, hb), *vx = ref_vector_create(ctx, q, n, hx);
  memset(result, 0xff, sizeof(*result));
  tpmg_status status = tpmg_solver_solve(solver, vb, vx, result);
  REF_DOWNLOAD(ctx, q, n, vx, hx);
  for (int64_t i = 0; i < n; i++)
    x[i] = q == TPMG_FLOAT ? ((float *)hx)[i] : ((double *)hx)[i];
  ref_vector_destroy(ctx, &vb);
  ref_vector_destroy(ctx, &vx);
  free(hb);
  free(hx);
  return status;
}

static int finite_result(const tpmg_solver_result *r) {
  return isfinite(r->residual_norm_0) && isfinite(r->residual_norm) &&
         isfinite(r->residual_reduction);
}

static void check_kind(tpmg_context *ctx, tpmg_grid *grid, int64_t n, const double *b,
                       tpmg_arithmetic arithmetic, solver_kind kind, const char *name) {
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = kind.type;
  options.arithmetic = arithmetic;
  options.preconditioning = kind.preconditioning;
  options.tolerance = arithmetic == TPMG_ARITHMETIC_FLOAT ? 1e-4 : 1e-9;
  options.max_iterations = 30;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  double *x1 = ref_malloc(sizeof(double) * n), *x = ref_malloc(sizeof(double) * n),
         *xc_buffer = ref_malloc(sizeof(double) * n);
  tpmg_solver_result r1, r;
  REF_CALL(ctx, solve_scaled(ctx, solver, arithmetic, n, b, 1.0, x1, &r1));
  REF_CHECK(r1.converged == 1 && finite_result(&r1), "%s, s = 1: converged %d, reduction %g", name,
            r1.converged, r1.residual_reduction);
  const double doubles[] = {0x1p-1000, 1e-300, 1e300, 0x1p1000};
  const double floats[] = {0x1p-100, 1e-30, 1e30, 0x1p100};
  const double *scales = arithmetic == TPMG_ARITHMETIC_FLOAT ? floats : doubles;
  for (int k = 0; k < 4; ++k) {
    double s = scales[k];
    tpmg_status status = solve_scaled(ctx, solver, arithmetic, n, b, s, x, &r);
    REF_CHECK(status == TPMG_SUCCESS, "%s, s = %g: status %d (%s)", name, s, (int)status,
              tpmg_context_last_error(ctx));
    if (status != TPMG_SUCCESS)
      continue;
    int finite = finite_result(&r);
    for (int64_t i = 0; i < n; i++)
      finite = finite && isfinite(x[i]);
    REF_CHECK(finite, "%s, s = %g: x or the residual norms (%g, %g, %g) not finite", name, s,
              r.residual_norm_0, r.residual_norm, r.residual_reduction);
    /* s = c 2^e with c in [1, 2): s b_i is c b_i scaled exactly, so the solve
     * of s b must be bitwise the scaled one of c b (of b for c = 1) */
    int e = ilogb(s);
    double c = ldexp(s, -e);
    tpmg_solver_result rc = r1;
    const double *xc = x1;
    if (c != 1.0) {
      REF_CALL(ctx, solve_scaled(ctx, solver, arithmetic, n, b, c, xc_buffer, &rc));
      xc = xc_buffer;
      /* a c b solve is an ordinary one: the iterations of b, give or take one
       * where rounding moves the last residual across the tolerance */
      REF_CHECK(abs(rc.iterations - r1.iterations) <= 1 && rc.converged == r1.converged,
                "%s, c = %.17g: %d iterations, converged %d; c = 1: %d, %d", name, c, rc.iterations,
                rc.converged, r1.iterations, r1.converged);
    }
    int64_t differ = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
      if (x[i] != ldexp(xc[i], e) && differ++ == 0)
        first = i;
    REF_CHECK(r.iterations == rc.iterations && r.converged == rc.converged,
              "%s, s = %g = %.17g 2^%d: %d iterations, converged %d; s = %.17g: %d, %d", name, s, c,
              e, r.iterations, r.converged, c, rc.iterations, rc.converged);
    REF_CHECK(differ == 0,
              "%s, s = %g: %lld entries of x differ from 2^%d times those of s = "
              "%.17g, the first %lld: %.17g against %.17g",
              name, s, (long long)differ, e, c, (long long)first, first >= 0 ? x[first] : 0.0,
              first >= 0 ? ldexp(xc[first], e) : 0.0);
    REF_CHECK(r.residual_reduction == rc.residual_reduction &&
                  r.residual_norm == ldexp(rc.residual_norm, e) &&
                  r.residual_norm_0 == ldexp(rc.residual_norm_0, e),
              "%s, s = %g: reduction %.17g against %.17g, residual norms / 2^%d %.17g %.17g "
              "against %.17g %.17g",
              name, s, r.residual_reduction, rc.residual_reduction, e, ldexp(r.residual_norm_0, -e),
              ldexp(r.residual_norm, -e), rc.residual_norm_0, rc.residual_norm);
  }
  free(x1);
  free(x);
  free(xc_buffer);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
}

/* b with a NaN, then an infinite entry: refused, x unchanged; b = 0: x = 0. */
static void check_refused(tpmg_context *ctx, tpmg_grid *grid, int64_t n, const double *b,
                          tpmg_arithmetic arithmetic, const char *name) {
  tpmg_precision q = arithmetic == TPMG_ARITHMETIC_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE;
  size_t size = q == TPMG_FLOAT ? sizeof(float) : sizeof(double);
  tpmg_solver_options options = tpmg_solver_options_default();
  options.arithmetic = arithmetic;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  unsigned char *hb = ref_malloc(size * n), *hx = ref_malloc(size * n),
                *after = ref_malloc(size * n);
  uint64_t state = 7;
  for (int64_t i = 0; i < n; i++) {
    double v = ref_random(&state);
    if (q == TPMG_FLOAT) {
      ((float *)hb)[i] = (float)b[i];
      ((float *)hx)[i] = (float)v;
    } else {
      ((double *)hb)[i] = b[i];
      ((double *)hx)[i] = v;
    }
  }
  const double bad[] = {NAN, INFINITY};
  for (int k = 0; k < 2; ++k) {
    if (q == TPMG_FLOAT)
      ((float *)hb)[n / 2] = (float)bad[k];
    else
      ((double *)hb)[n / 2] = bad[k];
    void *vb = ref_vector_create(ctx, q, n, hb), *vx = ref_vector_create(ctx, q, n, hx);
    tpmg_solver_result result;
    tpmg_status status = tpmg_solver_solve(solver, vb, vx, &result);
    ref_vector_download(ctx, q, n, vx, after);
    REF_CHECK(status == TPMG_ERROR_ARGUMENT, "%s, b_%lld = %g: status %d, expected %d", name,
              (long long)(n / 2), bad[k], (int)status, (int)TPMG_ERROR_ARGUMENT);
    REF_CHECK(memcmp(after, hx, size * n) == 0, "%s, b_%lld = %g: x was changed", name,
              (long long)(n / 2), bad[k]);
    ref_vector_destroy(ctx, &vb);
    ref_vector_destroy(ctx, &vx);
  }
  memset(hb, 0, size * n);
  void *vb = ref_vector_create(ctx, q, n, hb), *vx = ref_vector_create(ctx, q, n, hb);
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_solve(solver, vb, vx, &result));
  ref_vector_download(ctx, q, n, vx, after);
  REF_CHECK(memcmp(after, hb, size * n) == 0 && result.iterations == 0 &&
                result.residual_norm == 0.0,
            "%s, b = 0: x not zero, or %d iterations, residual %g", name, result.iterations,
            result.residual_norm);
  ref_vector_destroy(ctx, &vb);
  ref_vector_destroy(ctx, &vx);
  free(hb);
  free(hx);
  free(after);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const struct { int dim, k, L, cells[3]; } cases[] = {{2, 3, 3, {2, 1, 1}}, {3, 2, 2, {1, 2, 1}}};
  const tpmg_arithmetic arithmetics[] = {TPMG_ARITHMETIC_DOUBLE, TPMG_ARITHMETIC_MIXED,
                                         TPMG_ARITHMETIC_FLOAT};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    tpmg_grid *grid =
        ref_grid_create(ctx, cases[c].dim, cases[c].k, cases[c].L, cases[c].cells, NULL);
    tpmg_index n;
    double *b = ref_sine_rhs(ctx, grid, &n);
    for (int q = 0; q < 3; ++q) {
      char name[96];
      for (size_t t = 0; t < sizeof(kinds) / sizeof(kinds[0]); ++t) {
        snprintf(name, sizeof(name), "%dD Q%d L%d %s%s %s", cases[c].dim, cases[c].k, cases[c].L,
                 tpmg_solver_type_name(kinds[t].type),
                 kinds[t].preconditioning == TPMG_PRECONDITION_LEFT ? " left" : "",
                 tpmg_arithmetic_name(arithmetics[q]));
        check_kind(ctx, grid, n, b, arithmetics[q], kinds[t], name);
      }
      snprintf(name, sizeof(name), "%dD Q%d L%d %s", cases[c].dim, cases[c].k, cases[c].L,
               tpmg_arithmetic_name(arithmetics[q]));
      check_refused(ctx, grid, n, b, arithmetics[q], name);
    }
    free(b);
    REF_CALL(ctx, tpmg_grid_destroy(&grid));
  }
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t609-solver-scale");
}
