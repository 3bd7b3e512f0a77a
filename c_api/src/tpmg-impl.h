/* The object structs of tpmg, for the object files of c_api/src/. Backends
 * include tpmg-backend.h instead. Never included by users. */
#ifndef TPMG_IMPL_H
#define TPMG_IMPL_H

#include "tpmg-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- backends ------------------------------------------------------------ */

/* The backend registered under `name` (tpmg-backends.c): NULL if no backend
 * of that name is compiled in; *known is 1 if the name is one tpmg knows
 * (compiled in or not). */
const tpmg_backend_ops *tpmg_backend_find(const char *name, int *known);

/* ---- objects ----------------------------------------------------------- */

struct tpmg_context {
  char backend[64];          /* the backend's name as given ("name/variant") */
  const char *variant;       /* inside backend: what follows the first '/', or NULL */
  int n_threads;
  int device;
  size_t bytes;              /* backend memory allocated through tpmg_malloc */
  const tpmg_backend_ops *ops;
  void *backend_data;        /* owned by the backend */
  int stopwatch_started;     /* a start mark without its end mark yet */
  char error[1024];          /* the last message; mutable through const in tpmg_error_set */
};

struct tpmg_grid {
  tpmg_context *ctx;
  tpmg_grid_options options;
  int n_levels;                      /* fine_level + 1 */
  tpmg_level levels[TPMG_MAX_LEVELS];
  void *data_block[TPMG_MAX_LEVELS][2]; /* backend memory behind levels[l].data[p] */
  size_t data_bytes[TPMG_MAX_LEVELS][2];
  tpmg_unit_data unit; /* levels[l].unit points here */
};

/* Host-side 1D building blocks (tpmg-basis.c), all in double. */
void tpmg_basis_gauss_lobatto(int n_points, double *points);          /* on [0,1] */
void tpmg_basis_gauss(int n_points, double *points, double *weights); /* on [0,1] */
/* value and derivative of Lagrange polynomial i through `nodes` (n of them) at x */
double tpmg_basis_lagrange(int n, const double *nodes, int i, double x);
double tpmg_basis_lagrange_derivative(int n, const double *nodes, int i, double x);
/* reference cell mass and stiffness on [0,1], (k+1)^2 row-major, exact */
void tpmg_basis_cell_matrices(int degree, double *mass, double *stiffness);
/* the generalized symmetric eigenproblem K S = M S Lambda, M positive definite,
 * n x n row-major, by Cholesky and cyclic Jacobi; S^T M S = I, eigenvalues
 * ascending. Returns the largest residual ||K s - lambda M s||_inf / (||K||_inf ||s||_inf),
 * or a negative value if M is not positive definite. */
double tpmg_basis_generalized_eigen(int n, const double *K, const double *M, double *S,
                                    double *lambda);

/* Validated access for the object files. */
tpmg_status tpmg_grid_check_level(const tpmg_grid *grid, int level, int min_level);

#ifdef __cplusplus
}
#endif

#endif
