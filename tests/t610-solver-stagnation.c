/* t610-solver-stagnation: a tolerance the solver cannot reach ends as "not
 * converged", never as an error (issue 29). Per arithmetic and solver (GMRES from
 * the right and from the left, CG, FMG, V-cycles, FMG-GMRES) with tolerance
 * 1e-60 and at most 60 iterations, from x = 0: status success,
 * result->converged 0, 1..60 iterations, the true residual reduction at
 * rounding level (below 1e-10 in DOUBLE and MIXED, 1e-3 in FLOAT; measured
 * 2e-13 and 1.5e-4) and x free of NaN. 2D Q3 on level 5 of one cell is
 * `tpmg-poisson --dim 2 --level 5 --solver cg --tol 1e-60`, whose mixed CG
 * stopped with "CG breakdown" ((p, A p) = 9e-86, (r, z) = -2.5e-88) in
 * iteration 57 once its recursive residual, 1e-40 relative, had long parted
 * from the true one; 3D Q2 on level 2 of several cells. On the backend named
 * by argv[1] (default "cpu"). */
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

static void check_kind(tpmg_context *ctx, tpmg_grid *grid, int64_t n, const double *b,
                       tpmg_arithmetic arithmetic, solver_kind kind, const char *name) {
  tpmg_precision q = arithmetic == TPMG_ARITHMETIC_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE;
  size_t size = q == TPMG_FLOAT ? sizeof(float) : sizeof(double);
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = kind.type;
  options.arithmetic = arithmetic;
  options.preconditioning = kind.preconditioning;
  options.tolerance = 1e-60;
  options.max_iterations = 60;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  void *hb = ref_malloc(size * n), *hx = ref_malloc(size * n);
  for (int64_t i = 0; i < n; i++) {
    if (q == TPMG_FLOAT)
      ((float *)hb)[i] = (float)b[i];
    else
      ((double *)hb)[i] = b[i];
  }
  memset(hx, 0, size * n);
  void *vb = ref_vector_create(ctx, q, n, hb), *vx = ref_vector_create(ctx, q, n, hx);
  tpmg_solver_result r;
  memset(&r, 0xff, sizeof(r));
  tpmg_status status = tpmg_solver_solve(solver, vb, vx, &r);
  REF_CHECK(status == TPMG_SUCCESS, "%s: status %d (%s), expected success (not converged)", name,
            (int)status, tpmg_context_last_error(ctx));
  if (status == TPMG_SUCCESS) {
    double bound = arithmetic == TPMG_ARITHMETIC_FLOAT ? 1e-3 : 1e-10;
    REF_CHECK(r.converged == 0 && r.iterations >= 1 && r.iterations <= options.max_iterations,
              "%s: converged %d in %d iterations, expected 0 in 1..%d", name, r.converged,
              r.iterations, options.max_iterations);
    REF_CHECK(r.residual_reduction < bound, "%s: residual reduction %g, expected below %g", name,
              r.residual_reduction, bound);
    REF_DOWNLOAD(ctx, q, n, vx, hx);
  }
  ref_vector_destroy(ctx, &vb);
  ref_vector_destroy(ctx, &vx);
  free(hb);
  free(hx);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const struct { int dim, k, L, cells[3]; } cases[] = {{2, 3, 5, {1, 1, 1}}, {3, 2, 2, {1, 2, 1}}};
  const tpmg_arithmetic arithmetics[] = {TPMG_ARITHMETIC_DOUBLE, TPMG_ARITHMETIC_MIXED,
                                         TPMG_ARITHMETIC_FLOAT};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    tpmg_grid *grid =
        ref_grid_create(ctx, cases[c].dim, cases[c].k, cases[c].L, cases[c].cells, NULL);
    tpmg_index n;
    double *b = ref_sine_rhs(ctx, grid, &n);
    for (int q = 0; q < 3; ++q)
      for (size_t t = 0; t < sizeof(kinds) / sizeof(kinds[0]); ++t) {
        char name[96];
        snprintf(name, sizeof(name), "%dD Q%d L%d %s%s %s", cases[c].dim, cases[c].k, cases[c].L,
                 tpmg_solver_type_name(kinds[t].type),
                 kinds[t].preconditioning == TPMG_PRECONDITION_LEFT ? " left" : "",
                 tpmg_arithmetic_name(arithmetics[q]));
        check_kind(ctx, grid, n, b, arithmetics[q], kinds[t], name);
      }
    free(b);
    REF_CALL(ctx, tpmg_grid_destroy(&grid));
  }
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t610-solver-stagnation");
}
