/* t401-smoother-coefficient: the smoother on a grid with a variable
 * coefficient (tpmg_grid_set_coefficient) is the surrogate the docs state
 * (tpmg-backend.h, tpmg.h): one GLOBAL step (tpmg_smoother_apply), forward and
 * reverse, against reference.c's sweep whose residual is the exact operator's
 * (the matrix of -∇·(a∇u) + c u assembled cell by cell) and whose patch
 * solves are dense Cholesky solves of abar S_I + c M_I, abar the mean of the
 * patch's 2^dim cell values or 2/3 of their largest, whichever is larger (with
 * values at the quadrature points, a cell's value is its largest point
 * value). a random, log-uniform in [1e-2, 1e2] per cell or per point (so
 * that both branches of abar occur), with and without the reaction (c = 2.5),
 * on the finest level (the one whose values are the given ones), 2D k = 1..4
 * and 3D k = 1..3, an anisotropic box of several coarse cells; double within
 * 1e-12, float within 1e-4 (the reference on the rounded inputs and
 * coefficient), b and x random, Dirichlet entries of x unchanged. On the
 * backend named by argv[1] (default "cpu"); a backend other than the CPU's
 * that refuses the coefficient (TPMG_ERROR_UNSUPPORTED) skips its cases. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* One GLOBAL step of the smoother in precision p from x0; the result in x. */
static void step(tpmg_context *ctx, tpmg_grid *grid, int level, tpmg_precision p, int reverse,
                 int64_t n, const double *b, const double *x0, double *x) {
  tpmg_smoother_options options = tpmg_smoother_options_default();
  options.variant = TPMG_SMOOTHER_GLOBAL;
  tpmg_smoother *s = NULL;
  REF_CALL(ctx, tpmg_smoother_create(grid, level, p, &options, &s));
  const size_t size = p == TPMG_DOUBLE ? sizeof(double) : sizeof(float);
  void *hb = ref_malloc(size * (size_t)n), *hx = ref_malloc(size * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    if (p == TPMG_DOUBLE) {
      ((double *)hb)[i] = b[i];
      ((double *)hx)[i] = x0[i];
    } else {
      ((float *)hb)[i] = (float)b[i];
      ((float *)hx)[i] = (float)x0[i];
    }
  void *vb = ref_vector_create(ctx, p, n, hb), *vx = ref_vector_create(ctx, p, n, hx);
  REF_CALL(ctx, tpmg_smoother_apply(s, reverse, vb, vx));
  REF_DOWNLOAD(ctx, p, n, vx, hx);
  for (int64_t i = 0; i < n; i++)
    x[i] = p == TPMG_DOUBLE ? ((double *)hx)[i] : (double)((float *)hx)[i];
  ref_vector_destroy(ctx, &vx);
  ref_vector_destroy(ctx, &vb);
  free(hx);
  free(hb);
  REF_CALL(ctx, tpmg_smoother_destroy(&s));
}

static void check(tpmg_context *ctx, int cpu, int dim, int k, int L, const int cells[3],
                  const double *box, tpmg_coefficient_layout layout, double c) {
  const char *name = layout == TPMG_COEFFICIENT_CELLS ? "cells" : "quadrature";
  tpmg_grid *grid = ref_grid_create_reaction(ctx, dim, k, L, cells, box, c);
  ref_mesh m;
  ref_mesh_init(&m, dim, k, cells, box, L);
  m.reaction = c;
  const int64_t n_cells = m.cells[0] * m.cells[1] * m.cells[2], n = m.n_dofs;
  int64_t per_cell = 1;
  if (layout == TPMG_COEFFICIENT_QUADRATURE)
    for (int d = 0; d < dim; d++)
      per_cell *= k + 1;
  uint64_t seed = 401 + 31 * dim + 7 * k + (uint64_t)layout + (c > 0);
  double *a = ref_malloc(sizeof(double) * (size_t)(n_cells * per_cell));
  for (int64_t i = 0; i < n_cells * per_cell; i++)
    a[i] = pow(10.0, 4.0 * ref_random(&seed) - 2.0);
  const tpmg_status status = tpmg_grid_set_coefficient(grid, layout, a);
  if (status == TPMG_ERROR_UNSUPPORTED && !cpu) {
    ref_skipped++;
    free(a);
    REF_CALL(ctx, tpmg_grid_destroy(&grid));
    return;
  }
  REF_CALL(ctx, status);
  ref_checked++;
  /* the smoother's value of a cell: its largest point value */
  double *cell_values = ref_malloc(sizeof(double) * (size_t)n_cells);
  for (int64_t e = 0; e < n_cells; e++) {
    cell_values[e] = 0.0;
    for (int64_t q = 0; q < per_cell; q++)
      cell_values[e] = fmax(cell_values[e], a[e * per_cell + q]);
  }
  ref_csr A, S, Lc;
  ref_assemble_coefficient(&m, layout, a, &A);
  ref_assemble_laplace(&m, &Lc); /* a = 1, with c M */
  ref_mesh unit = m;
  unit.reaction = 0.0;
  ref_assemble_laplace(&unit, &S);
  double *b = ref_malloc(sizeof(double) * n), *x0 = ref_malloc(sizeof(double) * n);
  double *x = ref_malloc(sizeof(double) * n), *expected = ref_malloc(sizeof(double) * n);
  ref_fill_random(&seed, n, b);
  ref_fill_random(&seed, n, x0);
  for (int reverse = 0; reverse <= 1; reverse++) {
    memcpy(expected, x0, sizeof(double) * n);
    ref_smoother_step_surrogate(&m, &A, &S, &Lc, cell_values, reverse, b, expected);
    step(ctx, grid, L, TPMG_DOUBLE, reverse, n, b, x0, x);
    double err = ref_relative_difference(n, x, expected);
    REF_CHECK(err <= 1e-12,
              "smoother GLOBAL%s dim %d k %d level %d %s c %g: relative difference to the "
              "surrogate's reference sweep expected <= 1e-12, got %.3g",
              reverse ? " reverse" : "", dim, k, L, name, c, err);
    for (int64_t i = 0; i < n; i++)
      if (ref_mesh_is_boundary(&m, i) && x[i] != x0[i]) {
        REF_CHECK(0, "smoother dim %d k %d %s: Dirichlet entry %lld changed: %.17g -> %.17g", dim,
                  k, name, (long long)i, x0[i], x[i]);
        break;
      }
  }
  /* float: the reference on the rounded inputs and coefficient */
  for (int64_t i = 0; i < n; i++) {
    b[i] = (float)b[i];
    x0[i] = (float)x0[i];
  }
  double *a_float = ref_malloc(sizeof(double) * (size_t)(n_cells * per_cell));
  for (int64_t i = 0; i < n_cells * per_cell; i++)
    a_float[i] = (float)a[i];
  for (int64_t e = 0; e < n_cells; e++)
    cell_values[e] = (float)cell_values[e];
  ref_csr A_float;
  ref_assemble_coefficient(&m, layout, a_float, &A_float);
  memcpy(expected, x0, sizeof(double) * n);
  ref_smoother_step_surrogate(&m, &A_float, &S, &Lc, cell_values, 0, b, expected);
  step(ctx, grid, L, TPMG_FLOAT, 0, n, b, x0, x);
  double err = ref_relative_difference(n, x, expected);
  REF_CHECK(err <= 1e-4,
            "float smoother GLOBAL dim %d k %d level %d %s c %g: relative difference expected <= "
            "1e-4, got %.3g",
            dim, k, L, name, c, err);
  ref_csr_free(&A_float);
  free(a_float);
  free(expected);
  free(x);
  free(x0);
  free(b);
  ref_csr_free(&S);
  ref_csr_free(&Lc);
  ref_csr_free(&A);
  free(cell_values);
  free(a);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(int argc, char **argv) {
  const char *backend = ref_backend(argc, argv);
  const int cpu = strncmp(backend, "cpu", 3) == 0;
  tpmg_context *ctx = ref_context_create(backend, 0);
  const int cells[3] = {2, 3, 2};
  const double box[6] = {0, 2, -1, 0.5, 0, 0.7};
  const tpmg_coefficient_layout layouts[2] = {TPMG_COEFFICIENT_CELLS, TPMG_COEFFICIENT_QUADRATURE};
  for (int l = 0; l < 2; l++)
    for (int r = 0; r < 2; r++) {
      const double c = r ? 2.5 : 0.0;
      for (int k = 1; k <= 4; k++)
        check(ctx, cpu, 2, k, 2, cells, box, layouts[l], c);
      for (int k = 1; k <= 3; k++)
        check(ctx, cpu, 3, k, 1, cells, box, layouts[l], c);
    }
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t401-smoother-coefficient");
}
