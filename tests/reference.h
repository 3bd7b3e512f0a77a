/* Independent reference implementations for the tpmg tests.
 *
 * Nothing here calls the library's numerics: Gauss and Gauss-Lobatto points,
 * Lagrange bases, cell matrices, the assembled level matrix, patch matrices,
 * dense solves and the prolongation matrix are all computed from scratch, so a
 * test compares the library against a second, straightforward implementation.
 * Also the test harness: checks that count failures, random data, poisoning.
 */
#ifndef TPMG_TESTS_REFERENCE_H
#define TPMG_TESTS_REFERENCE_H

#include <stdint.h>
#include <stdio.h>

#include "tpmg.h"

/* ---- harness ------------------------------------------------------------ */

/* Number of failed checks so far; main returns ref_exit_code(). */
extern int ref_failures;

/* A check that may fail: on failure print where and the formatted message. */
#define REF_CHECK(cond, ...)                                                                       \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: check failed: ", __FILE__, __LINE__);                                \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      ref_failures++;                                                                              \
    }                                                                                              \
  } while (0)

/* A library call that must succeed; on failure print the status and the
 * context's message and exit (later checks would be meaningless). */
#define REF_CALL(ctx, expr) ref_call_check((ctx), (expr), #expr, __FILE__, __LINE__)
void ref_call_check(const tpmg_context *ctx, tpmg_status status, const char *expr, const char *file,
                    int line);

/* 0 if every check passed, else 1 (and a summary line on stderr). */
int ref_exit_code(const char *test_name);

/* Cases skipped because the backend refuses their degree by design
 * ("cuda/thread": degree 1 only). ref_refused(ctx, k, status, what): for such a
 * backend and degree, check that status (of the create call `what`) is
 * TPMG_ERROR_UNSUPPORTED, count the case as skipped and return 1 (the caller
 * skips it); otherwise return 0. ref_checked counts the cases a test did check:
 * ref_exit_code returns 77 (skipped) where cases were refused and none was
 * checked, and names the count of refused cases. */
extern int ref_skipped, ref_checked;
int ref_refused(const tpmg_context *ctx, int degree, tpmg_status status, const char *what);

/* Deterministic random numbers: uniform in [-1,-0.1] U [0.1,1], never zero. */
double ref_random(uint64_t *state);
void ref_fill_random(uint64_t *state, int64_t n, double *x);
void ref_fill_nan(int64_t n, double *x);
void ref_fill_nan_float(int64_t n, float *x);
void *ref_malloc(size_t bytes); /* exits on failure */

/* max_i |a_i - b_i| / max(max_i |b_i|, tiny) */
double ref_relative_difference(int64_t n, const double *a, const double *b);
double ref_max_abs(int64_t n, const double *x);
double ref_norm2(int64_t n, const double *x);

/* The backend a test runs on: argv[1] if given, else "cpu" (libCEED's tests
 * take their resource the same way). */
const char *ref_backend(int argc, char **argv);
/* Context on the named backend (NULL: "cpu") with the given thread count (0:
 * default). A backend tpmg knows but that is not usable here (not compiled in,
 * no device) prints "SKIPPED: no usable backend NAME" and exits 77, the tests'
 * SKIP_RETURN_CODE; any other failure exits 1. */
tpmg_context *ref_context_create(const char *backend, int n_threads);

/* ---- vectors in the context's memory space ----------------------------- */

/* These move data between host arrays and vectors made by tpmg_vector_create,
 * so that a test runs unchanged on a backend with device memory. Host arrays
 * hold n entries of precision p (double or float). Every failure exits. */
/* A new vector holding host, or poisoned with NaN where host is NULL. */
void *ref_vector_create(tpmg_context *ctx, tpmg_precision p, int64_t n, const void *host);
void ref_vector_upload(tpmg_context *ctx, tpmg_precision p, int64_t n, const void *host, void *v);
void ref_vector_download(tpmg_context *ctx, tpmg_precision p, int64_t n, const void *v, void *host);
/* Download a result into host and check that the call wrote every entry: its
 * output was poisoned with NaN before (or holds finite input), so a NaN left
 * is an entry not written (or a NaN computed); the check names the vector. */
#define REF_DOWNLOAD(ctx, p, n, v, host)                                                           \
  do {                                                                                             \
    ref_vector_download((ctx), (p), (n), (v), (host));                                             \
    int64_t ref_first_nan_ = -1, ref_n_nan_ = ref_count_nan((p), (n), (host), &ref_first_nan_);    \
    REF_CHECK(ref_n_nan_ == 0, "%s: %lld of %lld entries NaN (not written?), the first at %lld",   \
              #v, (long long)ref_n_nan_, (long long)(n), (long long)ref_first_nan_);               \
  } while (0)
/* v = NaN everywhere: an output poisoned before a call shows every entry the
 * call did not write. */
void ref_vector_poison(tpmg_context *ctx, tpmg_precision p, int64_t n, void *v);
void ref_vector_destroy(tpmg_context *ctx, void **v);
/* The number of NaN entries of a host array of precision p, and the first one
 * in *first (-1 if none): a check that a call wrote every entry of a poisoned
 * output. */
int64_t ref_count_nan(tpmg_precision p, int64_t n, const void *host, int64_t *first);
/* The right-hand side of TPMG_RHS_SINE on the grid's finest level (its
 * vectors' length in *n), in double in host memory: free it with free(). */
double *ref_sine_rhs(tpmg_context *ctx, tpmg_grid *grid, tpmg_index *n);
/* Grid on ctx; box NULL means the unit square/cube. */
tpmg_grid *ref_grid_create(tpmg_context *ctx, int dim, int degree, int fine_level,
                           const int cells[3], const double *box);
/* The same with the reaction c of -Δu + c u. */
tpmg_grid *ref_grid_create_reaction(tpmg_context *ctx, int dim, int degree, int fine_level,
                                    const int cells[3], const double *box, double reaction);

/* ---- 1D bases ----------------------------------------------------------- */

/* The n Gauss-Lobatto points on [0,1], ascending (Newton on P'_{n-1}). */
void ref_gauss_lobatto(int n, double *points);
/* The n-point Gauss rule on [0,1] (Newton on P_n). */
void ref_gauss(int n, double *points, double *weights);
/* Lagrange polynomial i through nodes[0..n-1], value and derivative at x. */
double ref_lagrange(int n, const double *nodes, int i, double x);
double ref_lagrange_derivative(int n, const double *nodes, int i, double x);
/* Q_k cell mass and stiffness on [0,1] by Gauss quadrature, (k+1)^2 row-major. */
void ref_cell_matrices(int degree, double *mass, double *stiffness);

/* ---- a level of the mesh ----------------------------------------------- */

typedef struct {
  int dim, degree, level;
  int64_t cells[3]; /* cells per direction on this level */
  int64_t n[3];     /* DoFs per direction; 1 in unused directions */
  int64_t n_dofs;
  double a[3], h[3];
  double reaction; /* c of -Δu + c u: the matrix adds c times the mass matrix (0 by init) */
  double gl[16];   /* Gauss-Lobatto points on [0,1] */
  /* graded cells (ref_mesh_grade), NULL otherwise: cells[d] widths and
   * cells[d] + 1 face coordinates per direction, owned (ref_mesh_free) */
  double *widths[3], *faces[3];
} ref_mesh;

/* The level `level` of a coarse mesh of coarse_cells on box (NULL: unit). */
void ref_mesh_init(ref_mesh *m, int dim, int degree, const int coarse_cells[3], const double *box,
                   int level);
/* Graded cells on m: coarse cell i of direction d (widths[d][i], summing to
 * the box's length) bisected `level` times, as tpmg_grid_options.cell_widths;
 * widths[d] NULL: that direction's equal cells. Free with ref_mesh_free. */
void ref_mesh_grade(ref_mesh *m, const double *const widths[3]);
void ref_mesh_free(ref_mesh *m);
void ref_mesh_index(const ref_mesh *m, int64_t idx, int64_t i[3]);
int ref_mesh_is_boundary(const ref_mesh *m, int64_t idx);
/* Coordinate of support point i_d in direction d. */
double ref_mesh_coordinate(const ref_mesh *m, int d, int64_t i);

/* ---- sparse matrices ---------------------------------------------------- */

typedef struct {
  int64_t n;
  int64_t *row_ptr; /* n+1 */
  int64_t *col;
  double *val; /* duplicates allowed: entries of a row are summed */
} ref_csr;

/* The level matrix of -Δ + c (c = m->reaction) assembled cell by cell, each
 * element matrix computed by d-dimensional Gauss quadrature of grad phi_i .
 * grad phi_j + c phi_i phi_j. Dirichlet DoFs
 * eliminated the library's way: interior rows keep interior columns only, a
 * Dirichlet row is the identity row. */
void ref_assemble_laplace(const ref_mesh *m, ref_csr *A);
/* The same for -∇·(a∇u) + c u with a variable coefficient a laid out as
 * tpmg_grid_set_coefficient takes it on this level's cells (lexicographic, x
 * fastest): CELLS, a = values[cell] on the cell, element matrices a_K S + c M
 * by k+2 Gauss points; QUADRATURE, values[cell (k+1)^dim + q] at the points q
 * of the (k+1)-point Gauss rule (lexicographic, x fastest, ascending), the
 * element matrix by that rule: sum_q w_q |J| (a_q grad phi_i . grad phi_j + c
 * phi_i phi_j). */
void ref_assemble_coefficient(const ref_mesh *m, tpmg_coefficient_layout layout,
                              const double *values, ref_csr *A);
void ref_csr_apply(const ref_csr *A, const double *x, double *y);
void ref_csr_free(ref_csr *A);
/* Dense submatrix A(idx, idx), m x m row-major. */
void ref_csr_submatrix(const ref_csr *A, int m, const int64_t *idx, double *dense);

/* ---- dense linear algebra ---------------------------------------------- */

/* Cholesky factorization in place (lower triangle); 0 on success. */
int ref_cholesky(int n, double *a);
/* Solve with the factor from ref_cholesky, x overwritten (b in, x out). */
void ref_cholesky_solve(int n, const double *l, double *x);

/* ---- patches and smoother ---------------------------------------------- */

/* Interior DoFs of the vertex patch around vertex v (v_d in 1..cells_d-1),
 * lexicographic; returns their number (2k-1)^dim. */
int ref_patch_interior(const ref_mesh *m, const int64_t v[3], int64_t *idx);

/* One colourised multiplicative vertex-patch step in place, by dense patch
 * matrices taken from A and Cholesky solves: for colour c = 0..2^dim-1 (or
 * reverse), r = b - A x0 (x0: x with Dirichlet entries zero), then for every
 * patch of colour c, x_I += A_j^{-1} r_I. */
void ref_smoother_step(const ref_mesh *m, const ref_csr *A, int reverse, const double *b,
                       double *x);
/* The same step with a variable coefficient, as the smoother does it
 * (tpmg-backend.h): the residual from A, the exact operator, and each patch
 * solved with the surrogate abar S + (L - S) (S: the unit coefficient's
 * stiffness matrix, L: that plus c M, both assembled), abar the mean of the
 * patch's 2^dim cell values (cell_values, this level's cells lexicographic;
 * summed x fastest) or TPMG_SURROGATE_FLOOR = 2/3 times their largest,
 * whichever is larger. */
void ref_smoother_step_surrogate(const ref_mesh *m, const ref_csr *A, const ref_csr *S,
                                 const ref_csr *L, const double *cell_values, int reverse,
                                 const double *b, double *x);

/* ---- transfer ----------------------------------------------------------- */

/* The 1D prolongation in direction d: P_d[i * Nc + j] = coarse global basis j
 * at fine support point i (including boundary rows and columns). */
void ref_prolongation_1d(const ref_mesh *coarse, const ref_mesh *fine, int d, double *P);
/* fine = P coarse with the global (tensor) P restricted to interior rows and
 * columns; Dirichlet entries of fine set to zero. */
void ref_prolongate(const ref_mesh *coarse, const ref_mesh *fine, const double *c, double *f);
/* coarse = P^T fine, same restriction to interior; Dirichlet coarse = 0. */
void ref_restrict(const ref_mesh *coarse, const ref_mesh *fine, const double *f, double *c);

#endif
