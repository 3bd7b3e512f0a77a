/* Host-side 1D building blocks (tpmg-basis.c), all in double: quadrature, the
 * Lagrange basis, cell matrices and the generalized eigenproblem behind fast
 * diagonalization, for degrees up to TPMG_MAX_DEGREE_2D (tpmg-backend.h).
 * Private to tpmg (tpmg-backend.h includes it). tpmg-basis.c calls no other
 * source file of the library, so that tests/t100-basis.c compiles it into a
 * tests-only library and checks these functions alone. */
#ifndef TPMG_BASIS_H
#define TPMG_BASIS_H

#ifdef __cplusplus
extern "C" {
#endif

void tpmg_basis_gauss_lobatto(int n_points, double *points);          /* on [0,1] */
void tpmg_basis_gauss(int n_points, double *points, double *weights); /* on [0,1] */
/* value and derivative of Lagrange polynomial i through `nodes` (n of them) at x */
double tpmg_basis_lagrange(int n, const double *nodes, int i, double x);
double tpmg_basis_lagrange_derivative(int n, const double *nodes, int i, double x);
/* reference cell mass and stiffness on [0,1], (k+1)^2 row-major, exact */
void tpmg_basis_cell_matrices(int degree, double *mass, double *stiffness);
/* A = L L^T in place (L in the lower triangle), n x n row-major; 0, or 1 if A
 * is not positive definite */
int tpmg_basis_cholesky(int n, double *a);
/* the generalized symmetric eigenproblem K S = M S Lambda, M positive definite,
 * n x n row-major, by Cholesky and cyclic Jacobi; S^T M S = I, eigenvalues
 * ascending. Returns the largest residual ||K s - lambda M s||_inf / (||K||_inf ||s||_inf),
 * or a negative value if M is not positive definite. */
double tpmg_basis_generalized_eigen(int n, const double *K, const double *M, double *S,
                                    double *lambda);

#ifdef __cplusplus
}
#endif

#endif
