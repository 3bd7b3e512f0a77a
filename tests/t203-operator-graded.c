/* t203-operator-graded: tpmg_operator_apply on graded cells
 * (tpmg_grid_options.cell_widths) against the matrix of -∇·(a∇u) + c u
 * assembled cell by cell in reference.c with each cell's own widths
 * (ref_mesh_grade), on every level (each coarse cell bisected level times):
 * a = 1 with and without the reaction (c = 57.3); a per cell (CELLS, log-uniform
 * in [0.1, 10], the coarser levels the means of their children) and at the
 * Gauss points (QUADRATURE, the finest level), with the reaction; random
 * widths (neighbours up to 16 apart) on an anisotropic box, 2D and 3D, k =
 * 1..4; double (relative 1e-12) and float (relative 1e-5), and
 * tpmg_operator_diagonal (relative 1e-13). Then the Galerkin property of the
 * unchanged reference prolongation on graded levels: A_{l-1} x = P^T A_l P x
 * (a = 1, with the reaction; relative 1e-12) through tpmg_transfer. On a
 * backend other than the CPU's, tpmg_grid_create must refuse graded cells
 * (TPMG_ERROR_UNSUPPORTED, a message naming the CPU backend). Bad widths
 * (negative, NaN, zero, a wrong sum, too narrow when refined) are refused with
 * TPMG_ERROR_ARGUMENT naming direction and value, the grid pointer untouched. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

enum { UNIT, CELLS, QUADRATURE };

static const double box[6] = {-0.5, 1.5, 0, 1, 0.2, 0.9};

/* widths[d]: cells[d] random widths (ratios up to 16) summing to the box's length */
static void random_widths(uint64_t *seed, int dim, const int cells[3], double widths[3][8]) {
  for (int d = 0; d < dim; d++) {
    double sum = 0;
    for (int i = 0; i < cells[d]; i++)
      sum += widths[d][i] = pow(4.0, ref_random(seed));
    for (int i = 0; i < cells[d]; i++)
      widths[d][i] *= (box[2 * d + 1] - box[2 * d]) / sum;
  }
}

static tpmg_status graded_grid(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                               double widths[3][8], double c, tpmg_grid **grid) {
  tpmg_grid_options o = tpmg_grid_options_default();
  o.dim = dim;
  o.degree = k;
  o.fine_level = L;
  memcpy(o.box, box, sizeof box);
  o.reaction = c;
  for (int d = 0; d < 3; d++) {
    o.cells[d] = d < dim ? cells[d] : 1;
    o.cell_widths[d] = d < dim ? widths[d] : NULL;
  }
  return tpmg_grid_create(ctx, &o, grid);
}

/* dst = A src on level l in precision p against the reference */
static void check_apply(tpmg_context *ctx, tpmg_grid *grid, const ref_mesh *m, const ref_csr *A,
                        tpmg_precision p, uint64_t *seed, const char *what) {
  const int64_t n = m->n_dofs;
  double *src = ref_malloc(sizeof(double) * n), *expected = ref_malloc(sizeof(double) * n);
  double *dst = ref_malloc(sizeof(double) * n);
  ref_fill_random(seed, n, src);
  float *f = ref_malloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; i++) {
    f[i] = (float)src[i];
    if (p == TPMG_FLOAT)
      src[i] = f[i];
  }
  ref_csr_apply(A, src, expected);
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, m->level, p, &op));
  void *vsrc = ref_vector_create(ctx, p, n, p == TPMG_FLOAT ? (const void *)f : src);
  void *vdst = ref_vector_create(ctx, p, n, NULL);
  ref_vector_poison(ctx, p, n, vdst);
  REF_CALL(ctx, tpmg_operator_apply(op, vsrc, vdst));
  if (p == TPMG_FLOAT) {
    REF_DOWNLOAD(ctx, p, n, vdst, f);
    for (int64_t i = 0; i < n; i++)
      dst[i] = f[i];
  } else {
    REF_DOWNLOAD(ctx, p, n, vdst, dst);
  }
  const double tolerance = p == TPMG_FLOAT ? 1e-5 : 1e-12;
  const double err = ref_relative_difference(n, dst, expected);
  REF_CHECK(err <= tolerance, "%s %s: max|A x - A_ref x|/max|A_ref x| expected <= %g, got %.3g",
            p == TPMG_FLOAT ? "float" : "double", what, tolerance, err);
  ref_vector_destroy(ctx, &vdst);
  ref_vector_destroy(ctx, &vsrc);
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  free(f);
  free(dst);
  free(expected);
  free(src);
}

static void check_diagonal(tpmg_context *ctx, tpmg_grid *grid, const ref_mesh *m, const ref_csr *A,
                           const char *what) {
  const int64_t n = m->n_dofs;
  double *expected = ref_malloc(sizeof(double) * n), *got = ref_malloc(sizeof(double) * n);
  for (int64_t i = 0; i < n; i++) {
    expected[i] = 0;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
      if (A->col[p] == i)
        expected[i] += A->val[p];
  }
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, m->level, TPMG_DOUBLE, &op));
  void *v = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_operator_diagonal(op, v));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, v, got);
  const double err = ref_relative_difference(n, got, expected);
  REF_CHECK(err <= 1e-13, "%s: diagonal: relative difference to the assembled one %.3g > 1e-13",
            what, err);
  ref_vector_destroy(ctx, &v);
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  free(got);
  free(expected);
}

/* coarse[C] = the mean of fine[K] over the 2^dim children K of C */
static void coarsen(const ref_mesh *coarse, const ref_mesh *fine, const double *a, double *out) {
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
    out[c] = sum / (1 << dim);
  }
}

/* A_{l-1} x against P^T A_l P x for a random coarse x (Dirichlet entries 0) */
static void check_galerkin(tpmg_context *ctx, tpmg_grid *grid, const ref_mesh *coarse,
                           const ref_mesh *fine, uint64_t *seed, const char *what) {
  const int64_t nc = coarse->n_dofs, nf = fine->n_dofs;
  double *x = ref_malloc(sizeof(double) * nc), *direct = ref_malloc(sizeof(double) * nc);
  double *galerkin = ref_malloc(sizeof(double) * nc);
  ref_fill_random(seed, nc, x);
  for (int64_t i = 0; i < nc; i++)
    if (ref_mesh_is_boundary(coarse, i))
      x[i] = 0;
  tpmg_operator *op_c = NULL, *op_f = NULL;
  tpmg_transfer *t = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, coarse->level, TPMG_DOUBLE, &op_c));
  REF_CALL(ctx, tpmg_operator_create(grid, fine->level, TPMG_DOUBLE, &op_f));
  REF_CALL(ctx, tpmg_transfer_create(grid, fine->level, TPMG_DOUBLE, &t));
  void *vx = ref_vector_create(ctx, TPMG_DOUBLE, nc, x),
       *vc = ref_vector_create(ctx, TPMG_DOUBLE, nc, NULL);
  void *vp = ref_vector_create(ctx, TPMG_DOUBLE, nf, NULL),
       *va = ref_vector_create(ctx, TPMG_DOUBLE, nf, NULL);
  REF_CALL(ctx, tpmg_operator_apply(op_c, vx, vc));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, nc, vc, direct);
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, nf, 0.0, vp));
  REF_CALL(ctx, tpmg_transfer_prolongate_add(t, vx, vp));
  REF_CALL(ctx, tpmg_operator_apply(op_f, vp, va));
  REF_CALL(ctx, tpmg_transfer_restrict(t, va, vc));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, nc, vc, galerkin);
  for (int64_t i = 0; i < nc; i++)
    if (ref_mesh_is_boundary(coarse, i))
      direct[i] = galerkin[i] = 0;
  const double err = ref_relative_difference(nc, galerkin, direct);
  REF_CHECK(err <= 1e-12, "%s: P^T A_f P x against A_c x: relative difference %.3g > 1e-12", what,
            err);
  ref_vector_destroy(ctx, &va);
  ref_vector_destroy(ctx, &vp);
  ref_vector_destroy(ctx, &vc);
  ref_vector_destroy(ctx, &vx);
  REF_CALL(ctx, tpmg_transfer_destroy(&t));
  REF_CALL(ctx, tpmg_operator_destroy(&op_f));
  REF_CALL(ctx, tpmg_operator_destroy(&op_c));
  free(galerkin);
  free(direct);
  free(x);
}

static void check_case(tpmg_context *ctx, int dim, int k, int L, const int cells[3], int kind,
                       double c, uint64_t *seed) {
  double widths[3][8];
  random_widths(seed, dim, cells, widths);
  const double *w[3] = {widths[0], widths[1], dim == 3 ? widths[2] : NULL};
  tpmg_grid *grid = NULL;
  REF_CALL(ctx, graded_grid(ctx, dim, k, L, cells, widths, c, &grid));
  ref_mesh m;
  ref_mesh_init(&m, dim, k, cells, box, L);
  m.reaction = c;
  ref_mesh_grade(&m, w);
  const int64_t n_cells = m.cells[0] * m.cells[1] * m.cells[2];
  const int64_t per_cell =
      kind == QUADRATURE ? (dim == 3 ? (k + 1) * (k + 1) * (k + 1) : (k + 1) * (k + 1)) : 1;
  double *a = NULL;
  if (kind != UNIT) {
    a = ref_malloc(sizeof(double) * (size_t)(n_cells * per_cell));
    for (int64_t i = 0; i < n_cells * per_cell; i++)
      a[i] = pow(10.0, ref_random(seed));
    REF_CALL(ctx,
             tpmg_grid_set_coefficient(
                 grid, kind == CELLS ? TPMG_COEFFICIENT_CELLS : TPMG_COEFFICIENT_QUADRATURE, a));
  }
  const char *name = kind == UNIT ? "a = 1" : kind == CELLS ? "a per cell" : "a at the points";
  for (int l = L; l >= (kind == QUADRATURE ? L : 0); l--) {
    if (l < L) {
      ref_mesh fine = m;
      ref_mesh_init(&m, dim, k, cells, box, l);
      m.reaction = c;
      ref_mesh_grade(&m, w);
      if (a) {
        double *coarse =
            ref_malloc(sizeof(double) * (size_t)(m.cells[0] * m.cells[1] * m.cells[2]));
        coarsen(&m, &fine, a, coarse);
        free(a);
        a = coarse;
      }
      if (kind == UNIT) {
        char what[200];
        snprintf(what, sizeof what, "dim %d k %d levels %d/%d c %g", dim, k, l, l + 1, c);
        check_galerkin(ctx, grid, &m, &fine, seed, what);
      }
      ref_mesh_free(&fine);
    }
    ref_csr A;
    if (kind == UNIT)
      ref_assemble_laplace(&m, &A);
    else
      ref_assemble_coefficient(
          &m, kind == QUADRATURE ? TPMG_COEFFICIENT_QUADRATURE : TPMG_COEFFICIENT_CELLS, a, &A);
    char what[200];
    snprintf(what, sizeof what, "dim %d k %d level %d of %d (cells %lld x %lld x %lld) %s c %g",
             dim, k, l, L, (long long)m.cells[0], (long long)m.cells[1], (long long)m.cells[2],
             name, c);
    check_apply(ctx, grid, &m, &A, TPMG_DOUBLE, seed, what);
    check_apply(ctx, grid, &m, &A, TPMG_FLOAT, seed, what);
    check_diagonal(ctx, grid, &m, &A, what);
    ref_checked++;
    ref_csr_free(&A);
  }
  ref_mesh_free(&m);
  free(a);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

/* another backend: graded cells refused at the grid */
static void check_refused(tpmg_context *ctx) {
  uint64_t seed = 7;
  const int cells[3] = {3, 2, 1};
  double widths[3][8];
  random_widths(&seed, 2, cells, widths);
  tpmg_grid *grid = NULL;
  const tpmg_status status = graded_grid(ctx, 2, 2, 1, cells, widths, 0.0, &grid);
  const char *message = tpmg_context_last_error(ctx);
  REF_CHECK(status == TPMG_ERROR_UNSUPPORTED && grid == NULL,
            "graded cells on a non-CPU backend: status %d (expected %d), grid %p", (int)status,
            (int)TPMG_ERROR_UNSUPPORTED, (void *)grid);
  REF_CHECK(message && strstr(message, "CPU backend"),
            "graded cells on a non-CPU backend: the message \"%s\" does not name the CPU backend",
            message ? message : "(none)");
  ref_checked++;
}

/* bad widths refused: TPMG_ERROR_ARGUMENT naming the direction and the value,
 * the grid pointer untouched */
static void check_bad_widths(tpmg_context *ctx) {
  const int cells[3] = {3, 2, 1};
  const struct {
    int d, i;
    double value;
    const char *expect;
  } cases[] = {{0, 1, -0.5, "cell_widths[0][1] = -0.5"},
               {1, 0, NAN, "cell_widths[1][0] = nan"},
               {0, 2, 0.0, "cell_widths[0][2] = 0"},
               {1, 1, 0.5, "cell_widths[1]: the 2 widths sum to 0.75"},
               {0, 0, 1e-300, "box[0]"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double widths[3][8] = {{0.5, 0.5, 1.0}, {0.25, 0.75}};
    widths[cases[c].d][cases[c].i] = cases[c].value;
    if (c == 4)
      widths[0][1] = 1.0 - 1e-300;          /* sums right, the finest cell too narrow */
    tpmg_grid *grid = (tpmg_grid *)&widths; /* must stay as it is */
    const tpmg_status status = graded_grid(ctx, 2, 2, 1, cells, widths, 0.0, &grid);
    const char *message = tpmg_context_last_error(ctx);
    REF_CHECK(status == TPMG_ERROR_ARGUMENT && grid == (tpmg_grid *)&widths,
              "bad widths (%s): status %d (expected %d), grid changed %d", cases[c].expect,
              (int)status, (int)TPMG_ERROR_ARGUMENT, grid != (tpmg_grid *)&widths);
    REF_CHECK(message && strstr(message, cases[c].expect),
              "bad widths: the message \"%s\" does not contain \"%s\"",
              message ? message : "(none)", cases[c].expect);
    ref_checked++;
  }
}

int main(int argc, char **argv) {
  const char *backend = ref_backend(argc, argv);
  tpmg_context *ctx = ref_context_create(backend, 0);
  if (strncmp(backend, "cpu", 3) != 0) {
    check_refused(ctx);
  } else {
    check_bad_widths(ctx);
    uint64_t seed = 2031;
    const int cells2[3] = {3, 4, 1}, cells3[3] = {2, 3, 2};
    for (int k = 1; k <= 4; k++) {
      check_case(ctx, 2, k, 2, cells2, UNIT, 0.0, &seed);
      check_case(ctx, 2, k, 2, cells2, UNIT, 57.3, &seed);
      check_case(ctx, 2, k, 2, cells2, CELLS, 57.3, &seed);
      check_case(ctx, 2, k, 1, cells2, QUADRATURE, 57.3, &seed);
      check_case(ctx, 3, k, k <= 2 ? 2 : 1, cells3, UNIT, 0.0, &seed);
      check_case(ctx, 3, k, 1, cells3, UNIT, 57.3, &seed);
      check_case(ctx, 3, k, 1, cells3, CELLS, 0.0, &seed);
      check_case(ctx, 3, k, 1, cells3, QUADRATURE, 57.3, &seed);
    }
  }
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t203-operator-graded");
}
