/* t202-operator-coefficient: tpmg_operator_apply with a variable coefficient
 * (tpmg_grid_set_coefficient) against the matrix of -∇·(a∇u) + c u assembled
 * cell by cell in reference.c (ref_assemble_coefficient), on the finest level
 * for a per cell (CELLS) and at the Gauss points (QUADRATURE), on every
 * coarser level for a per cell, the mean of its children's cell means (the
 * contract of tpmg_grid_set_coefficient); a random, log-uniform in [0.1, 10],
 * with and without the reaction (c = 57.3), and jumping between 1 and 1e6
 * (with c = 57.3); in 2D (k = 1..4, 10) and 3D (k = 1..4) on an anisotropic
 * box and the unit square/cube, coarse meshes of odd cell counts, fine levels
 * of fewer and more cells per layer than SIMD lanes; in double (relative
 * 1e-12) and float (relative 1e-5: the reference applied to the rounded
 * input, the coefficient rounded to float by the library), and
 * tpmg_operator_diagonal (relative 1e-13), on the backend named by argv[1]
 * (default "cpu"), src random (no zeros), outputs poisoned with NaN before
 * each call. A backend other than the CPU's that refuses the coefficient
 * (TPMG_ERROR_UNSUPPORTED) skips its cases. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

enum { SPREAD, JUMPS };

/* whether the backend is the CPU's, which must have the coefficient's kernels */
static int cpu;

/* a log-uniform in [0.1, 10] (SPREAD), or 1 or 1e6 at random (JUMPS) */
static void fill_coefficient(uint64_t *seed, int kind, int64_t n, double *a) {
  for (int64_t i = 0; i < n; i++) {
    const double r = ref_random(seed);
    a[i] = kind == SPREAD ? pow(10.0, r) : r > 0 ? 1e6 : 1.0;
  }
}

/* dst = A src on level L in precision p against expected; src in double */
static void check_apply(tpmg_context *ctx, tpmg_grid *grid, int L, tpmg_precision p, int64_t n,
                        const double *src, const double *expected, const ref_mesh *m,
                        const char *what) {
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, L, p, &op));
  double *dst = ref_malloc(sizeof(double) * n);
  void *vsrc;
  if (p == TPMG_FLOAT) {
    float *f = ref_malloc(sizeof(float) * n);
    for (int64_t i = 0; i < n; i++)
      f[i] = (float)src[i];
    vsrc = ref_vector_create(ctx, p, n, f);
    free(f);
  } else {
    vsrc = ref_vector_create(ctx, p, n, src);
  }
  void *vdst = ref_vector_create(ctx, p, n, NULL);
  REF_CALL(ctx, tpmg_operator_apply(op, vsrc, vdst));
  if (p == TPMG_FLOAT) {
    float *f = ref_malloc(sizeof(float) * n);
    REF_DOWNLOAD(ctx, p, n, vdst, f);
    for (int64_t i = 0; i < n; i++)
      dst[i] = f[i];
    free(f);
  } else {
    REF_DOWNLOAD(ctx, p, n, vdst, dst);
  }
  const double tolerance = p == TPMG_FLOAT ? 1e-5 : 1e-12;
  const double err = ref_relative_difference(n, dst, expected);
  REF_CHECK(err <= tolerance, "%s %s: max|A x - A_ref x|/max|A_ref x| expected <= %g, got %.3g",
            p == TPMG_FLOAT ? "float" : "double", what, tolerance, err);
  for (int64_t i = 0; i < n; i++)
    if (ref_mesh_is_boundary(m, i))
      REF_CHECK(dst[i] == (p == TPMG_FLOAT ? (double)(float)src[i] : src[i]),
                "%s %s: Dirichlet row %lld: expected %.9g, got %.9g",
                p == TPMG_FLOAT ? "float" : "double", what, (long long)i, src[i], dst[i]);
  ref_vector_destroy(ctx, &vdst);
  ref_vector_destroy(ctx, &vsrc);
  free(dst);
  REF_CALL(ctx, tpmg_operator_destroy(&op));
}

/* tpmg_operator_diagonal in double against the assembled matrix's diagonal
 * (duplicate entries of a row summed), relative 1e-13. */
static void check_diagonal(tpmg_context *ctx, tpmg_grid *grid, int l, const ref_csr *A, int64_t n,
                           const char *what) {
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, l, TPMG_DOUBLE, &op));
  double *expected = ref_malloc(sizeof(double) * n), *got = ref_malloc(sizeof(double) * n);
  for (int64_t i = 0; i < n; i++) {
    expected[i] = 0;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
      if (A->col[p] == i)
        expected[i] += A->val[p];
  }
  void *v = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_operator_diagonal(op, v));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, v, got);
  ref_vector_destroy(ctx, &v);
  const double err = ref_relative_difference(n, got, expected);
  REF_CHECK(err <= 1e-13, "%s: diagonal: relative difference to the assembled one %.3g > 1e-13",
            what, err);
  free(got);
  free(expected);
  REF_CALL(ctx, tpmg_operator_destroy(&op));
}

/* The operator of level l (its coefficient per cell, or at the points on
 * the finest level) applied in double and float, and its diagonal. */
static void check_level(tpmg_context *ctx, tpmg_grid *grid, const ref_mesh *m,
                        tpmg_coefficient_layout layout, const double *a, uint64_t *seed,
                        const char *what) {
  const int64_t n = m->n_dofs;
  ref_csr A;
  ref_assemble_coefficient(m, layout, a, &A);
  double *src = ref_malloc(sizeof(double) * n), *expected = ref_malloc(sizeof(double) * n);
  ref_fill_random(seed, n, src);
  ref_csr_apply(&A, src, expected);
  check_apply(ctx, grid, m->level, TPMG_DOUBLE, n, src, expected, m, what);
  /* float: the reference applied to the rounded input */
  for (int64_t i = 0; i < n; i++)
    src[i] = (float)src[i];
  ref_csr_apply(&A, src, expected);
  check_apply(ctx, grid, m->level, TPMG_FLOAT, n, src, expected, m, what);
  check_diagonal(ctx, grid, m->level, &A, n, what);
  ref_checked++;
  free(expected);
  free(src);
  ref_csr_free(&A);
}

/* coarse[C] = the mean of fine[K] over the 2^dim children K of coarse cell C */
static void coarsen(const ref_mesh *coarse, const ref_mesh *fine, const double *a,
                    double *coarse_a) {
  const int dim = coarse->dim;
  for (int64_t c = 0; c < coarse->cells[0] * coarse->cells[1] * coarse->cells[2]; c++) {
    const int64_t c0 = c % coarse->cells[0], c1 = c / coarse->cells[0] % coarse->cells[1],
                  c2 = c / (coarse->cells[0] * coarse->cells[1]);
    double sum = 0;
    for (int child = 0; child < (1 << dim); child++) {
      const int64_t f0 = 2 * c0 + (child & 1), f1 = 2 * c1 + (child >> 1 & 1);
      const int64_t f2 = dim == 3 ? 2 * c2 + (child >> 2 & 1) : 0;
      sum += a[f0 + fine->cells[0] * (f1 + fine->cells[1] * f2)];
    }
    coarse_a[c] = sum / (1 << dim);
  }
}

static void check_operator(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                           const double *box, tpmg_coefficient_layout layout, int kind, double c) {
  char what[200];
  const char *name = layout == TPMG_COEFFICIENT_CELLS ? "cells" : "quadrature";
  const char *spread = kind == SPREAD ? "a in [0.1, 10]" : "a in {1, 1e6}";
  tpmg_grid *grid = ref_grid_create_reaction(ctx, dim, k, L, cells, box, c);
  ref_mesh m;
  ref_mesh_init(&m, dim, k, cells, box, L);
  m.reaction = c;
  int64_t n_cells = m.cells[0] * m.cells[1] * m.cells[2], per_cell = 1;
  if (layout == TPMG_COEFFICIENT_QUADRATURE)
    for (int d = 0; d < dim; d++)
      per_cell *= k + 1;
  uint64_t seed = 202 + 31 * dim + 7 * k + 3 * kind + (uint64_t)layout;
  double *a = ref_malloc(sizeof(double) * (size_t)(n_cells * per_cell));
  fill_coefficient(&seed, kind, n_cells * per_cell, a);
  const tpmg_status status = tpmg_grid_set_coefficient(grid, layout, a);
  if (status == TPMG_ERROR_UNSUPPORTED && !cpu) {
    /* a backend without the coefficient's kernels: a case skipped, counted */
    ref_skipped++;
    free(a);
    REF_CALL(ctx, tpmg_grid_destroy(&grid));
    return;
  }
  REF_CALL(ctx, status);
  snprintf(what, sizeof what, "dim %d k %d level %d of %d (cells %lld x %lld x %lld) %s %s c %g",
           dim, k, L, L, (long long)m.cells[0], (long long)m.cells[1], (long long)m.cells[2], name,
           spread, c);
  check_level(ctx, grid, &m, layout, a, &seed, what);

  /* the coarser levels: a per cell, the mean of the children's cell means
   * (QUADRATURE: the Gauss-weighted mean over the cell) */
  double *mean = ref_malloc(sizeof(double) * (size_t)n_cells);
  double points[16], weights[16];
  ref_gauss(k + 1, points, weights);
  for (int64_t cell = 0; cell < n_cells; cell++) {
    mean[cell] = 0;
    for (int64_t q = 0; q < per_cell; q++) {
      double w = 1;
      for (int d = 0, stride = 1; d < dim && per_cell > 1; d++, stride *= k + 1)
        w *= weights[q / stride % (k + 1)];
      mean[cell] += w * a[cell * per_cell + q];
    }
  }
  for (int l = L - 1; l >= 0; l--) {
    ref_mesh fine = m;
    ref_mesh_init(&m, dim, k, cells, box, l);
    m.reaction = c;
    double *coarse = ref_malloc(sizeof(double) * (size_t)(m.cells[0] * m.cells[1] * m.cells[2]));
    coarsen(&m, &fine, mean, coarse);
    free(mean);
    mean = coarse;
    snprintf(what, sizeof what, "dim %d k %d level %d of %d (cells %lld x %lld x %lld) %s %s c %g",
             dim, k, l, L, (long long)m.cells[0], (long long)m.cells[1], (long long)m.cells[2],
             name, spread, c);
    check_level(ctx, grid, &m, TPMG_COEFFICIENT_CELLS, mean, &seed, what);
  }
  free(mean);
  free(a);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

/* every layout, the spread without and with the reaction, the jumps with it */
static void check_cases(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                        const double *box) {
  const tpmg_coefficient_layout layouts[2] = {TPMG_COEFFICIENT_CELLS, TPMG_COEFFICIENT_QUADRATURE};
  for (int l = 0; l < 2; l++) {
    check_operator(ctx, dim, k, L, cells, box, layouts[l], SPREAD, 0.0);
    check_operator(ctx, dim, k, L, cells, box, layouts[l], SPREAD, 57.3);
    check_operator(ctx, dim, k, L, cells, box, layouts[l], JUMPS, 57.3);
  }
}

int main(int argc, char **argv) {
  const char *backend = ref_backend(argc, argv);
  cpu = strncmp(backend, "cpu", 3) == 0;
  tpmg_context *ctx = ref_context_create(backend, 0);
  const double box[6] = {0, 2, -1, 0.5, 0, 0.3};
  /* coarse cells 5 x 3, 9 x 1, 3 x 2: fine levels of 10 x 6 and 18 x 2
   * (layers of fewer and more cells than the lanes), 12 x 8 at level 2 */
  const int odd2[3] = {5, 3, 1}, wide2[3] = {9, 1, 1}, even2[3] = {3, 2, 1};
  for (int k = 1; k <= 4; k++) {
    check_cases(ctx, 2, k, 1, odd2, box);
    check_cases(ctx, 2, k, 1, wide2, box);
    check_cases(ctx, 2, k, 2, even2, box);
  }
  check_cases(ctx, 2, 10, 1, odd2, box);
  check_cases(ctx, 2, 10, 1, even2, NULL);
  /* coarse cells 3 x 1 x 1, 3 x 3 x 1, 1 x 3 x 1: fine levels of 6 x 2 x 2,
   * 6 x 6 x 2 (36 cells per layer), 2 x 6 x 2 */
  const int odd3[3] = {3, 1, 1}, wide3[3] = {3, 3, 1}, tall3[3] = {1, 3, 1};
  for (int k = 1; k <= 4; k++) {
    check_cases(ctx, 3, k, 1, odd3, box);
    check_cases(ctx, 3, k, 1, k <= 2 ? wide3 : tall3, k == 3 ? NULL : box);
  }
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t202-operator-coefficient");
}
