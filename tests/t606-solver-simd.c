/* t606-solver-simd: results do not depend on the CPU backend's SIMD width.
 * One context per width that this processor runs (TPMG_CPU_SIMD = scalar,
 * avx2, avx512, read at context creation; a width it lacks is refused with
 * TPMG_ERROR_UNSUPPORTED, an unknown name with TPMG_ERROR_ARGUMENT; the backend
 * names "cpu/scalar", "cpu/avx2", "cpu/avx512" are accepted exactly where the
 * variable is, an unknown variant refused with TPMG_ERROR_UNSUPPORTED) computes
 * the operator, one smoothing step of each variant (GLOBAL, SEPARATE, FUSED,
 * BOUNDARY), a prolongation and a restriction, in double and float, 2D k =
 * 1..10 and 3D k = 1..8, on anisotropic boxes (and the unit cube) whose colours hold both fewer
 * and more patches than a vector has lanes. Every width agrees with the scalar
 * kernels (1e-13 in double, 1e-5 in float, relative to the largest entry;
 * measured: 4e-16 and 1.4e-15 in double, 2.3e-7 and 1e-6 in float for the
 * operator and the smoother), and with the independent reference where it
 * is affordable (the assembled matrix, the dense patch sweep and the
 * prolongation matrix of reference.c: 1e-12 in double, 1e-4 in float). A
 * GMRES solve in mixed precision takes the same number of iterations at every
 * width, its solutions agreeing to 1e-10. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

#define N_WIDTHS 3
static const char *width_name[N_WIDTHS] = {"scalar", "avx2", "avx512"};

/* Results of one width: operator, 4 smoother variants, prolongation (fine
 * length each), restriction (coarse length), as double. */
typedef struct {
  int64_t n, n_coarse;
  double *apply, *smooth[4], *prolongate, *restrict_;
} results;

static void to_prec(tpmg_precision p, int64_t n, const double *x, void *out) {
  for (int64_t i = 0; i < n; i++) {
    if (p == TPMG_DOUBLE)
      ((double *)out)[i] = x[i];
    else
      ((float *)out)[i] = (float)x[i];
  }
}

static void from_prec(tpmg_precision p, int64_t n, const void *x, double *out) {
  for (int64_t i = 0; i < n; i++)
    out[i] = p == TPMG_DOUBLE ? ((const double *)x)[i] : ((const float *)x)[i];
}

/* Everything on level L (and L-1 for the transfer) from the inputs x0, b (fine), c (coarse). */
static results compute(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                       const double *box, tpmg_precision p, const double *x0, const double *b,
                       const double *c) {
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, cells, box);
  results r;
  tpmg_index n = 0, nc = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, L, &n, NULL));
  REF_CALL(ctx, tpmg_grid_level_size(grid, L - 1, &nc, NULL));
  r.n = n;
  r.n_coarse = nc;
  const size_t size = p == TPMG_DOUBLE ? sizeof(double) : sizeof(float);
  void *xp = ref_malloc(size * n), *yp = ref_malloc(size * n), *bp = ref_malloc(size * n);
  void *cp = ref_malloc(size * nc);
  to_prec(p, n, x0, xp);
  to_prec(p, n, b, bp);

  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, L, p, &op));
  REF_CALL(ctx, tpmg_operator_apply(op, xp, yp));
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  r.apply = ref_malloc(sizeof(double) * n);
  from_prec(p, n, yp, r.apply);

  for (int v = 0; v < 4; v++) {
    tpmg_smoother_options options = tpmg_smoother_options_default();
    options.variant = (tpmg_smoother_variant)v;
    tpmg_smoother *s = NULL;
    REF_CALL(ctx, tpmg_smoother_create(grid, L, p, &options, &s));
    memcpy(yp, xp, size * n);
    REF_CALL(ctx, tpmg_smoother_apply(s, 0, bp, yp));
    REF_CALL(ctx, tpmg_smoother_destroy(&s));
    r.smooth[v] = ref_malloc(sizeof(double) * n);
    from_prec(p, n, yp, r.smooth[v]);
  }

  tpmg_transfer *t = NULL;
  REF_CALL(ctx, tpmg_transfer_create(grid, L, p, &t));
  to_prec(p, nc, c, cp);
  memcpy(yp, xp, size * n);
  REF_CALL(ctx, tpmg_transfer_prolongate_add(t, cp, yp));
  REF_CALL(ctx, tpmg_transfer_restrict(t, xp, cp));
  REF_CALL(ctx, tpmg_transfer_destroy(&t));
  r.prolongate = ref_malloc(sizeof(double) * n);
  r.restrict_ = ref_malloc(sizeof(double) * nc);
  from_prec(p, n, yp, r.prolongate);
  from_prec(p, nc, cp, r.restrict_);

  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  free(cp);
  free(bp);
  free(yp);
  free(xp);
  return r;
}

static void results_free(results *r) {
  free(r->apply);
  for (int v = 0; v < 4; v++)
    free(r->smooth[v]);
  free(r->prolongate);
  free(r->restrict_);
}

static const char *variant_name[4] = {"GLOBAL", "SEPARATE", "FUSED", "BOUNDARY"};

/* Every part of got against expected, the operator and the transfer to tol_op,
 * the smoother to tol_smooth. */
static void compare(const char *what, const char *name, int dim, int k, int L, tpmg_precision p,
                    const results *got, const results *expected, double tol_op, double tol_smooth) {
  const char *prec = p == TPMG_DOUBLE ? "double" : "float";
  const int64_t n = got->n, nc = got->n_coarse;
  double d = ref_relative_difference(n, got->apply, expected->apply);
  REF_CHECK(d <= tol_op,
            "%s %s dim %d k %d L %d: operator differs from %s by %.3g (expected <= %g)", prec, name,
            dim, k, L, what, d, tol_op);
  for (int v = 0; v < 4; v++) {
    d = ref_relative_difference(n, got->smooth[v], expected->smooth[v]);
    REF_CHECK(d <= tol_smooth,
              "%s %s dim %d k %d L %d: smoother %s differs from %s by %.3g (expected <= %g)", prec,
              name, dim, k, L, variant_name[v], what, d, tol_smooth);
  }
  d = ref_relative_difference(n, got->prolongate, expected->prolongate);
  REF_CHECK(d <= tol_op,
            "%s %s dim %d k %d L %d: prolongation differs from %s by %.3g (expected <= %g)", prec,
            name, dim, k, L, what, d, tol_op);
  d = ref_relative_difference(nc, got->restrict_, expected->restrict_);
  REF_CHECK(d <= tol_op,
            "%s %s dim %d k %d L %d: restriction differs from %s by %.3g (expected <= %g)", prec,
            name, dim, k, L, what, d, tol_op);
}

/* The reference results (reference.c) on the inputs rounded to precision p. */
static results reference(int dim, int k, int L, const int cells[3], const double *box,
                         tpmg_precision p, const double *x0_in, const double *b_in,
                         const double *c_in) {
  ref_mesh m, mc;
  ref_mesh_init(&m, dim, k, cells, box, L);
  ref_mesh_init(&mc, dim, k, cells, box, L - 1);
  const int64_t n = m.n_dofs, nc = mc.n_dofs;
  results r = {n, nc, NULL, {NULL, NULL, NULL, NULL}, NULL, NULL};
  double *x0 = ref_malloc(sizeof(double) * n), *b = ref_malloc(sizeof(double) * n);
  double *c = ref_malloc(sizeof(double) * nc);
  for (int64_t i = 0; i < n; i++) {
    x0[i] = p == TPMG_DOUBLE ? x0_in[i] : (float)x0_in[i];
    b[i] = p == TPMG_DOUBLE ? b_in[i] : (float)b_in[i];
  }
  for (int64_t i = 0; i < nc; i++)
    c[i] = p == TPMG_DOUBLE ? c_in[i] : (float)c_in[i];
  ref_csr A;
  ref_assemble_laplace(&m, &A);
  r.apply = ref_malloc(sizeof(double) * n);
  ref_csr_apply(&A, x0, r.apply);
  for (int v = 0; v < 4; v++) {
    r.smooth[v] = ref_malloc(sizeof(double) * n);
    memcpy(r.smooth[v], x0, sizeof(double) * n);
    if (v == 0)
      ref_smoother_step(&m, &A, 0, b, r.smooth[v]);
    else
      memcpy(r.smooth[v], r.smooth[0], sizeof(double) * n);
  }
  r.prolongate = ref_malloc(sizeof(double) * n);
  ref_prolongate(&mc, &m, c, r.prolongate);
  for (int64_t i = 0; i < n; i++)
    r.prolongate[i] += x0[i];
  r.restrict_ = ref_malloc(sizeof(double) * nc);
  ref_restrict(&mc, &m, x0, r.restrict_);
  ref_csr_free(&A);
  free(c);
  free(b);
  free(x0);
  return r;
}

static void check(tpmg_context *const *ctx, int dim, int k, int L, const int cells[3],
                  const double *box, int with_reference) {
  ref_mesh m, mc;
  ref_mesh_init(&m, dim, k, cells, box, L);
  ref_mesh_init(&mc, dim, k, cells, box, L - 1);
  uint64_t seed = 605 + 31 * dim + k;
  double *x0 = ref_malloc(sizeof(double) * m.n_dofs), *b = ref_malloc(sizeof(double) * m.n_dofs);
  double *c = ref_malloc(sizeof(double) * mc.n_dofs);
  ref_fill_random(&seed, m.n_dofs, x0);
  ref_fill_random(&seed, m.n_dofs, b);
  ref_fill_random(&seed, mc.n_dofs, c);
  for (int pi = 0; pi < 2; pi++) {
    const tpmg_precision p = pi == 0 ? TPMG_DOUBLE : TPMG_FLOAT;
    results r[N_WIDTHS];
    for (int w = 0; w < N_WIDTHS; w++)
      if (ctx[w])
        r[w] = compute(ctx[w], dim, k, L, cells, box, p, x0, b, c);
    for (int w = 1; w < N_WIDTHS; w++)
      if (ctx[w])
        compare("the scalar kernels", width_name[w], dim, k, L, p, &r[w], &r[0],
                p == TPMG_DOUBLE ? 1e-13 : 1e-5, p == TPMG_DOUBLE ? 1e-13 : 1e-5);
    if (with_reference) {
      results expected = reference(dim, k, L, cells, box, p, x0, b, c);
      for (int w = 0; w < N_WIDTHS; w++)
        if (ctx[w])
          compare("the reference", width_name[w], dim, k, L, p, &r[w], &expected,
                  p == TPMG_DOUBLE ? 1e-12 : 1e-4, p == TPMG_DOUBLE ? 1e-12 : 1e-4);
      results_free(&expected);
    }
    for (int w = 0; w < N_WIDTHS; w++)
      if (ctx[w])
        results_free(&r[w]);
  }
  free(c);
  free(b);
  free(x0);
}

/* A mixed-precision GMRES solve at every width: equal iteration counts, solutions within 1e-10. */
static void check_solve(tpmg_context *const *ctx, int dim, int k, int L, const int cells[3],
                        const double *box) {
  double *x[N_WIDTHS] = {NULL};
  tpmg_solver_result result[N_WIDTHS];
  int64_t n = 0;
  for (int w = 0; w < N_WIDTHS; w++) {
    if (!ctx[w])
      continue;
    tpmg_grid *grid = ref_grid_create(ctx[w], dim, k, L, cells, box);
    tpmg_index size = 0;
    REF_CALL(ctx[w], tpmg_grid_level_size(grid, L, &size, NULL));
    n = size;
    double *b = ref_malloc(sizeof(double) * n);
    x[w] = ref_malloc(sizeof(double) * n);
    REF_CALL(ctx[w], tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
    for (int64_t i = 0; i < n; i++)
      x[w][i] = 0;
    tpmg_solver_options options = tpmg_solver_options_default();
    options.type = TPMG_SOLVER_GMRES;
    options.arithmetic = TPMG_ARITHMETIC_MIXED;
    tpmg_solver *solver = NULL;
    REF_CALL(ctx[w], tpmg_solver_create(grid, &options, &solver));
    REF_CALL(ctx[w], tpmg_solver_solve(solver, b, x[w], &result[w]));
    REF_CALL(ctx[w], tpmg_solver_destroy(&solver));
    REF_CALL(ctx[w], tpmg_grid_destroy(&grid));
    free(b);
  }
  for (int w = 1; w < N_WIDTHS; w++) {
    if (!ctx[w])
      continue;
    REF_CHECK(result[w].iterations == result[0].iterations,
              "solve dim %d k %d L %d: %s took %d iterations, scalar %d", dim, k, L, width_name[w],
              result[w].iterations, result[0].iterations);
    const double d = ref_relative_difference(n, x[w], x[0]);
    REF_CHECK(d <= 1e-10, "solve dim %d k %d L %d: %s solution differs from scalar by %.3g", dim, k,
              L, width_name[w], d);
    free(x[w]);
  }
  free(x[0]);
}

int main(void) {
  tpmg_context *ctx[N_WIDTHS] = {NULL};
  tpmg_context_options options = tpmg_context_options_default();
  options.n_threads = 2;
  for (int w = 0; w < N_WIDTHS; w++) {
    setenv("TPMG_CPU_SIMD", width_name[w], 1);
    const tpmg_status status = tpmg_context_create(&options, &ctx[w]);
    REF_CHECK(status == TPMG_SUCCESS || (w > 0 && status == TPMG_ERROR_UNSUPPORTED),
              "TPMG_CPU_SIMD=%s: tpmg_context_create returned %d, expected success or (not "
              "scalar) TPMG_ERROR_UNSUPPORTED",
              width_name[w], (int)status);
  }
  if (!ctx[0])
    return ref_exit_code("t606-solver-simd");
  /* the same widths as backend variants, "cpu/avx2", ...; an unknown one refused */
  unsetenv("TPMG_CPU_SIMD");
  for (int w = 0; w <= N_WIDTHS; w++) {
    char name[32];
    snprintf(name, sizeof(name), "cpu/%s", w < N_WIDTHS ? width_name[w] : "avx1024");
    tpmg_context_options by_name = options;
    by_name.backend = name;
    tpmg_context *c = NULL;
    const tpmg_status status = tpmg_context_create(&by_name, &c);
    const tpmg_status expected = w < N_WIDTHS && ctx[w] ? TPMG_SUCCESS : TPMG_ERROR_UNSUPPORTED;
    REF_CHECK(status == expected, "backend %s: tpmg_context_create returned %d, expected %d", name,
              (int)status, (int)expected);
    tpmg_context_destroy(&c);
  }
  tpmg_context *bad = NULL;
  setenv("TPMG_CPU_SIMD", "avx1024", 1);
  const tpmg_status status = tpmg_context_create(&options, &bad);
  REF_CHECK(status == TPMG_ERROR_ARGUMENT && !bad,
            "TPMG_CPU_SIMD=avx1024: tpmg_context_create returned %d, expected %d", (int)status,
            (int)TPMG_ERROR_ARGUMENT);
  unsetenv("TPMG_CPU_SIMD");

  const int cells_2d[3] = {3, 2, 1}, cells_3d[3] = {3, 2, 1}, cube[3] = {1, 1, 1};
  const double box_2d[4] = {0, 2, -1, 0.5}, box_3d[6] = {0, 2, -1, 0.5, 0, 0.3};
  for (int k = 1; k <= 10; k++)
    check(ctx, 2, k, k <= 3 ? 3 : 2, cells_2d, box_2d, k <= 5);
  for (int k = 1; k <= 3; k++)
    check(ctx, 3, k, 2, cells_3d, box_3d, 1);
  for (int k = 4; k <= 8; k++)
    check(ctx, 3, k, 1, cells_3d, box_3d, k == 4);
  check(ctx, 3, 6, 1, cube, NULL, 0);
  check_solve(ctx, 3, 3, 2, cells_3d, box_3d);
  check_solve(ctx, 2, 5, 3, cells_2d, box_2d);

  for (int w = 0; w < N_WIDTHS; w++)
    tpmg_context_destroy(&ctx[w]);
  return ref_exit_code("t606-solver-simd");
}
