/* t503-multigrid-coarse: coarse meshes of any size.
 *
 * (a) The exact coarse solver above TPMG_MAX_COARSE_DOFS interior DoFs (fast
 *     diagonalization on the host): tpmg_coarse_apply on level 0 against a
 *     direct solve of the assembled level-0 interior matrix (reference.c's
 *     assembly, a banded Cholesky factorization here) for random b, in double
 *     (relative difference <= 1e-11) and float (<= 1e-6 against the
 *     float-rounded b); Dirichlet entries of x are 0 and every entry written.
 *     2D Q2 on 40 x 40 cells (6241 interior DoFs) and 3D Q2 on 9 x 8 x 9
 *     cells of an anisotropic box (4335). Levels long in one direction D,
 *     which the solver factors by bands instead of diagonalizing: 3D Q3 on
 *     3 x 3 x 60 cells (11456, D = z) and 2D Q2 on 3 x 1200 (11995, D = y) on
 *     the host, and with the dense inverse (at most TPMG_MAX_COARSE_DOFS) 2D Q1
 *     on 601 x 3 (1200, D = x) and 3D Q2 on 2 x 40 x 2 (711, D = y). With a
 *     reaction c (the matrix of -Δ + c): 3D Q3 3 x 3 x 60 (c = 3.7), 2D Q1
 *     601 x 3 (c = 250) and 3D Q2 9 x 8 x 9 (c = 1e4).
 * (b) Whole solves (GMRES and FMG, double and mixed arithmetic, tolerance 1e-9) of
 *     u = prod sin(pi x_d) on large coarse meshes, whose grids add hidden
 *     levels below level 0 (every cell count even) or solve a bottom level
 *     above TPMG_MAX_COARSE_DOFS on the host:
 *       3D Q2, 24 x 24 x 24 cells, level 1 (hidden 12, 6, 3: bottom dense);
 *       2D Q3, 300 x 100 cells on [0,3] x [0,1], level 1 (hidden 150 x 50,
 *          75 x 25: bottom 224 x 74 = 16576 interior DoFs, on the host);
 *       3D Q4, 7 x 5 x 3 cells on [0,1.4] x [0,1] x [0,0.6], level 2 (no
 *          hidden level: bottom 27 x 19 x 11 = 5643, on the host).
 *     Each converges; its count is within two of the same solver and arithmetic on
 *     one coarse cell of the same degree at a comparable size with the same
 *     cell shape (3D Q2 level 5: 32^3 cells; 2D Q3 level 8: 256^2; 3D Q4
 *     level 4: 16^3; the same finest h is not reachable from one cell: 48,
 *     600 x 200 and 28 x 20 x 12 cells are not powers of two); where the grid
 *     has hidden levels, the coarse mesh of its bottom level refined to the
 *     same finest level (3 x 3 x 3 at level 4, 75 x 25 at level 3) has the
 *     same hierarchy and must give the same count and L2 error (GMRES and FMG
 *     in double); the L2 errors of all four solves agree to 5% (the
 *     discretization's) and lie below a bound of about three times the error
 *     measured at writing.
 *
 * Usage: t503-multigrid-coarse [backend [full]]: the backend (default "cpu");
 * "full" runs (b) on the meshes above (ctest: t503-multigrid-coarse-full,
 * label slow), otherwise on smaller meshes of the same kinds (for the
 * sanitizer build and the other backends): 3D Q2 12^3 (hidden 6, 3), 2D Q2
 * 82 x 78 (hidden 41 x 39: bottom 6237 on the host), 3D Q4 7 x 5 x 3 at
 * level 1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* ---- (a) the host bottom solve against a banded Cholesky solve ----------- */

/* The interior DoFs of m, lexicographic; their number. */
static int64_t interior_dofs(const ref_mesh *m, int64_t *index) {
  int64_t count = 0;
  for (int64_t i = 0; i < m->n_dofs; ++i)
    if (!ref_mesh_is_boundary(m, i))
      index[count++] = i;
  return count;
}

/* Lower band of A(idx, idx), half-bandwidth w, factored in place by Cholesky:
 * band[i (w + 1) + (i - j)] = L(i, j) for i - w <= j <= i. */
static double *band_cholesky(const ref_csr *A, int64_t n, const int64_t *idx, int64_t w,
                             const int64_t *position) {
  double *band = calloc((size_t)(n * (w + 1)), sizeof(double));
  if (!band)
    exit(2);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = A->row_ptr[idx[i]]; p < A->row_ptr[idx[i] + 1]; ++p) {
      int64_t j = position[A->col[p]];
      if (j < 0 || j > i)
        continue;
      REF_CHECK(i - j <= w, "assembled coupling %lld - %lld beyond the bandwidth %lld",
                (long long)i, (long long)j, (long long)w);
      if (i - j <= w)
        band[i * (w + 1) + (i - j)] += A->val[p];
    }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i - w < 0 ? 0 : i - w; j <= i; ++j) {
      double sum = band[i * (w + 1) + (i - j)];
      for (int64_t p = i - w < 0 ? 0 : i - w; p < j; ++p)
        if (j - p <= w)
          sum -= band[i * (w + 1) + (i - p)] * band[j * (w + 1) + (j - p)];
      if (i == j) {
        if (!(sum > 0)) {
          REF_CHECK(0, "banded Cholesky: pivot %lld is %g", (long long)i, sum);
          sum = 1;
        }
        band[i * (w + 1)] = sqrt(sum);
      } else {
        band[i * (w + 1) + (i - j)] = sum / band[j * (w + 1)];
      }
    }
  return band;
}

static void band_solve(int64_t n, int64_t w, const double *band, double *x) {
  for (int64_t i = 0; i < n; ++i) {
    double sum = x[i];
    for (int64_t j = i - w < 0 ? 0 : i - w; j < i; ++j)
      sum -= band[i * (w + 1) + (i - j)] * x[j];
    x[i] = sum / band[i * (w + 1)];
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    double sum = x[i];
    for (int64_t j = i + 1; j <= i + w && j < n; ++j)
      sum -= band[j * (w + 1) + (j - i)] * x[j];
    x[i] = sum / band[i * (w + 1)];
  }
}

static void check_bottom_solve(tpmg_context *ctx, int dim, int k, const int cells[3],
                               const double *box, int host, double c, uint64_t *seed) {
  ref_mesh m;
  ref_mesh_init(&m, dim, k, cells, box, 0);
  m.reaction = c;
  const int64_t n = m.n_dofs;
  int64_t *index = ref_malloc(sizeof(int64_t) * n), *position = ref_malloc(sizeof(int64_t) * n);
  const int64_t n_interior = interior_dofs(&m, index);
  REF_CHECK((n_interior > TPMG_MAX_COARSE_DOFS) == host,
            "case %dD Q%d: %lld interior DoFs, meant to be %s TPMG_MAX_COARSE_DOFS", dim, k,
            (long long)n_interior, host ? "above" : "at most");
  for (int64_t i = 0; i < n; ++i)
    position[i] = -1;
  for (int64_t i = 0; i < n_interior; ++i)
    position[index[i]] = i;
  /* the widest coupling in the interior numbering: k points in every direction */
  const int64_t n0 = m.n[0] - 2, n1 = m.n[1] - 2;
  const int64_t w = k * (1 + n0 + (dim == 3 ? n0 * n1 : 0));
  ref_csr A;
  ref_assemble_laplace(&m, &A);
  double *band = band_cholesky(&A, n_interior, index, w, position);

  tpmg_grid *grid = ref_grid_create_reaction(ctx, dim, k, 1, cells, box, c);
  double *b = ref_malloc(sizeof(double) * n), *x = ref_malloc(sizeof(double) * n);
  double *expected = ref_malloc(sizeof(double) * n), *y = ref_malloc(sizeof(double) * n_interior);
  float *bf = ref_malloc(sizeof(float) * n), *xf = ref_malloc(sizeof(float) * n);
  for (int p = 0; p < 2; ++p) {
    tpmg_precision precision = p == 0 ? TPMG_DOUBLE : TPMG_FLOAT;
    ref_fill_random(seed, n, b); /* Dirichlet entries too: the solver ignores them */
    if (precision == TPMG_FLOAT)
      for (int64_t i = 0; i < n; ++i)
        b[i] = (double)(bf[i] = (float)b[i]);
    for (int64_t i = 0; i < n_interior; ++i)
      y[i] = b[index[i]];
    band_solve(n_interior, w, band, y);
    for (int64_t i = 0; i < n; ++i)
      expected[i] = 0.0;
    for (int64_t i = 0; i < n_interior; ++i)
      expected[index[i]] = y[i];

    tpmg_coarse *coarse = NULL;
    REF_CALL(ctx, tpmg_coarse_create(grid, precision, &coarse));
    void *vb = ref_vector_create(ctx, precision, n, precision == TPMG_DOUBLE ? (void *)b : bf);
    void *vx = ref_vector_create(ctx, precision, n, NULL);
    REF_CALL(ctx, tpmg_coarse_apply(coarse, vb, vx));
    if (precision == TPMG_DOUBLE) {
      REF_DOWNLOAD(ctx, precision, n, vx, x);
    } else {
      REF_DOWNLOAD(ctx, precision, n, vx, xf);
      for (int64_t i = 0; i < n; ++i)
        x[i] = xf[i];
    }
    int64_t nonzero = 0;
    for (int64_t i = 0; i < n; ++i)
      nonzero += position[i] < 0 && x[i] != 0.0;
    REF_CHECK(nonzero == 0, "coarse solve %dD Q%d %s: %lld Dirichlet entries of x not 0", dim, k,
              p == 0 ? "double" : "float", (long long)nonzero);
    double difference = ref_relative_difference(n, x, expected);
    double bound = precision == TPMG_DOUBLE ? 1e-11 : 1e-6;
    REF_CHECK(difference <= bound,
              "coarse solve %dD Q%d c %g, %lld interior DoFs, %s: relative difference %.3g from "
              "the banded Cholesky solve, expected <= %g",
              dim, k, c, (long long)n_interior, p == 0 ? "double" : "float", difference, bound);
    ref_vector_destroy(ctx, &vx);
    ref_vector_destroy(ctx, &vb);
    REF_CALL(ctx, tpmg_coarse_destroy(&coarse));
  }
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  ref_csr_free(&A);
  free(band);
  free(index);
  free(position);
  free(b);
  free(x);
  free(expected);
  free(y);
  free(bf);
  free(xf);
}

/* ---- (b) whole solves ---------------------------------------------------- */

typedef struct {
  int iterations;
  double error; /* L2 error of u = prod sin(pi x_d) */
} solve_result;

static solve_result solve(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                          const double *box, tpmg_solver_type type, tpmg_arithmetic arithmetic,
                          const char *what) {
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, cells, box);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, L, &n, NULL));
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  void *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, x));
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = type;
  options.arithmetic = arithmetic;
  options.tolerance = 1e-9;
  options.max_iterations = 50;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  REF_CHECK(result.converged == 1 && result.residual_reduction <= 1e-9,
            "%s, %s %s: not converged to 1e-9 in %d iterations (reduction %.3g)", what,
            tpmg_solver_type_name(type), tpmg_arithmetic_name(arithmetic), result.iterations,
            result.residual_reduction);
  solve_result r = {result.iterations, NAN};
  REF_CALL(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_DOUBLE, x, &r.error));
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  ref_vector_destroy(ctx, &x);
  ref_vector_destroy(ctx, &b);
  return r;
}

typedef struct {
  int dim, k, level, cells[3];
  double box[6];
  int same_cells[3], same_level; /* the bottom as coarse mesh (same_level 0: none) */
  int one_level;                 /* one coarse cell, unit square/cube */
  double error_bound;
} coarse_case;

static void check_solves(tpmg_context *ctx, const coarse_case *c) {
  char name[96];
  snprintf(name, sizeof name, "%dD Q%d, %d x %d x %d coarse cells, level %d", c->dim, c->k,
           c->cells[0], c->cells[1], c->cells[2], c->level);
  static const tpmg_solver_type types[2] = {TPMG_SOLVER_GMRES, TPMG_SOLVER_FMG};
  static const tpmg_arithmetic arithmetics[2] = {TPMG_ARITHMETIC_DOUBLE, TPMG_ARITHMETIC_MIXED};
  solve_result first = {0, NAN};
  for (int t = 0; t < 2; ++t)
    for (int md = 0; md < 2; ++md) {
      solve_result r =
          solve(ctx, c->dim, c->k, c->level, c->cells, c->box, types[t], arithmetics[md], name);
      solve_result one = solve(ctx, c->dim, c->k, c->one_level, NULL, NULL, types[t],
                               arithmetics[md], "one coarse cell");
      REF_CHECK(abs(r.iterations - one.iterations) <= 2,
                "%s, %s %s: %d iterations, expected within two of one coarse cell at level %d "
                "(%d)",
                name, tpmg_solver_type_name(types[t]), tpmg_arithmetic_name(arithmetics[md]),
                r.iterations, c->one_level, one.iterations);
      REF_CHECK(r.error <= c->error_bound, "%s, %s %s: L2 error %.3g above the bound %.3g", name,
                tpmg_solver_type_name(types[t]), tpmg_arithmetic_name(arithmetics[md]), r.error,
                c->error_bound);
      if (t == 0 && md == 0) {
        first = r;
      } else {
        REF_CHECK(fabs(r.error - first.error) <= 5e-2 * first.error,
                  "%s, %s %s: L2 error %.6g, expected that of GMRES double, %.6g", name,
                  tpmg_solver_type_name(types[t]), tpmg_arithmetic_name(arithmetics[md]), r.error,
                  first.error);
      }
      if (c->same_level > 0 && md == 0) {
        solve_result same = solve(ctx, c->dim, c->k, c->same_level, c->same_cells, c->box, types[t],
                                  arithmetics[md], "the bottom as coarse mesh");
        REF_CHECK(same.iterations == r.iterations &&
                      fabs(same.error - r.error) <= 1e-6 * same.error,
                  "%s, %s: %d iterations, L2 error %.9g; its bottom mesh (%d x %d x %d cells) "
                  "at level %d, the same hierarchy: %d, %.9g",
                  name, tpmg_solver_type_name(types[t]), r.iterations, r.error, c->same_cells[0],
                  c->same_cells[1], c->same_cells[2], c->same_level, same.iterations, same.error);
      }
    }
}

/* The cases of (b); error bounds about three times the errors measured at
 * writing. */
static const coarse_case full_cases[3] = {
    {3, 2, 1, {24, 24, 24}, {0, 1, 0, 1, 0, 1}, {3, 3, 3}, 4, 5, 3e-6},
    {2, 3, 1, {300, 100, 1}, {0, 3, 0, 1, 0, 1}, {75, 25, 1}, 3, 8, 1e-10},
    {3, 4, 2, {7, 5, 3}, {0, 1.4, 0, 1, 0, 0.6}, {0, 0, 0}, 0, 4, 3e-9}};
static const coarse_case small_cases[3] = {
    {3, 2, 1, {12, 12, 12}, {0, 1, 0, 1, 0, 1}, {3, 3, 3}, 3, 4, 2.5e-5},
    {2, 2, 1, {82, 78, 1}, {0, 82.0 / 78, 0, 1, 0, 1}, {41, 39, 1}, 2, 7, 1e-7},
    {3, 4, 1, {7, 5, 3}, {0, 1.4, 0, 1, 0, 0.6}, {0, 0, 0}, 0, 3, 1e-7}};

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const int full = argc > 2 && strcmp(argv[2], "full") == 0;
  uint64_t seed = 503;

  const int cells_2d[3] = {40, 40, 1}, cells_3d[3] = {9, 8, 9};
  const double box_3d[6] = {0.0, 1.0, -0.5, 1.0, 0.25, 1.0};
  check_bottom_solve(ctx, 2, 2, cells_2d, NULL, 1, 0.0, &seed);
  check_bottom_solve(ctx, 3, 2, cells_3d, box_3d, 1, 0.0, &seed);
  /* long in one direction D, which the solver factors by bands */
  const int long_z[3] = {3, 3, 60}, long_y[3] = {3, 1200, 1}, long_x[3] = {601, 3, 1},
            long_y_3d[3] = {2, 40, 2};
  const double box_z[6] = {0.0, 1.0, 0.0, 1.0, 0.0, 20.0}, box_y[6] = {0.0, 1.0, 0.0, 400.0, 0, 1},
               box_x[6] = {0.0, 200.0, 0.0, 1.0, 0, 1}, box_y_3d[6] = {0, 1, 0, 20, 0, 1};
  check_bottom_solve(ctx, 3, 3, long_z, box_z, 1, 0.0, &seed);
  check_bottom_solve(ctx, 2, 2, long_y, box_y, 1, 0.0, &seed);
  check_bottom_solve(ctx, 2, 1, long_x, box_x, 0, 0.0, &seed);
  check_bottom_solve(ctx, 3, 2, long_y_3d, box_y_3d, 0, 0.0, &seed);
  /* a reaction, in the band direction (z) and across it (2D: D = x) */
  check_bottom_solve(ctx, 3, 3, long_z, box_z, 1, 3.7, &seed);
  check_bottom_solve(ctx, 2, 1, long_x, box_x, 0, 250.0, &seed);
  check_bottom_solve(ctx, 3, 2, cells_3d, box_3d, 1, 1e4, &seed);

  for (int i = 0; i < 3; ++i)
    check_solves(ctx, full ? &full_cases[i] : &small_cases[i]);

  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t503-multigrid-coarse");
}
