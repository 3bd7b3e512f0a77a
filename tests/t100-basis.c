/* t100-basis: the 1D building blocks (tpmg_basis_*) against closed-form values
 * and the independent reference:
 * - Q1 and Q2 cell mass and stiffness on [0,1] in closed form;
 * - Gauss-Lobatto and Gauss points/weights, Lagrange values and derivatives,
 *   cell matrices for k = 1..10 against reference.c;
 * - tpmg_basis_generalized_eigen on the vertex-patch interior matrices for
 *   k = 1..10: residual, M-orthonormality, ascending positive eigenvalues.
 * These functions are internal: c_api/src/tpmg-basis.c is compiled into a
 * tests-only library (tests/CMakeLists.txt) and its header tpmg-basis.h is the
 * one private header this test includes. What a grid builds from them (cell
 * and patch matrices scaled by h_d, patch eigenpairs, the prolongation, in
 * both precisions) is checked through the public API: t200 (operator against
 * the assembled matrix), t400 (smoother against dense patch solves) and t300
 * (transfer against the reference prolongation), on an anisotropic box. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "tpmg-basis.h"

static void compare(const char *what, int k, int n, const double *got, const double *expected,
                    double tol) {
  for (int i = 0; i < n; i++) {
    double scale = fabs(expected[i]) > 1 ? fabs(expected[i]) : 1;
    REF_CHECK(fabs(got[i] - expected[i]) <= tol * scale,
              "%s, k=%d, entry %d: expected %.17g, got %.17g", what, k, i, expected[i], got[i]);
  }
}

static void closed_form(void) {
  const double M1[4] = {1. / 3, 1. / 6, 1. / 6, 1. / 3};
  const double K1[4] = {1, -1, -1, 1};
  const double M2[9] = {2. / 15, 1. / 15, -1. / 30, 1. / 15, 8. / 15, 1. / 15, -1. / 30, 1. / 15,
                        2. / 15};
  const double K2[9] = {7. / 3, -8. / 3, 1. / 3, -8. / 3, 16. / 3, -8. / 3, 1. / 3, -8. / 3, 7. / 3};
  double M[9], K[9];
  for (int i = 0; i < 9; i++) M[i] = K[i] = NAN;
  tpmg_basis_cell_matrices(1, M, K);
  compare("Q1 cell mass", 1, 4, M, M1, 1e-14);
  compare("Q1 cell stiffness", 1, 4, K, K1, 1e-14);
  for (int i = 0; i < 9; i++) M[i] = K[i] = NAN;
  tpmg_basis_cell_matrices(2, M, K);
  compare("Q2 cell mass", 2, 9, M, M2, 1e-14);
  compare("Q2 cell stiffness", 2, 9, K, K2, 1e-14);
  /* the reference agrees with the closed form too */
  ref_cell_matrices(2, M, K);
  compare("reference Q2 cell mass", 2, 9, M, M2, 1e-14);
  compare("reference Q2 cell stiffness", 2, 9, K, K2, 1e-14);
}

static void points_and_matrices(void) {
  uint64_t seed = 100;
  for (int n = 2; n <= 12; n++) {
    double got[16], expected[16], w[16], we[16];
    ref_fill_nan(16, got);
    tpmg_basis_gauss_lobatto(n, got);
    ref_gauss_lobatto(n, expected);
    compare("Gauss-Lobatto points", n - 1, n, got, expected, 1e-14);
    REF_CHECK(got[0] == 0.0 && got[n - 1] == 1.0,
              "Gauss-Lobatto endpoints (n=%d): expected 0 and 1, got %.17g and %.17g", n, got[0],
              got[n - 1]);
    ref_fill_nan(16, got);
    ref_fill_nan(16, w);
    tpmg_basis_gauss(n, got, w);
    ref_gauss(n, expected, we);
    compare("Gauss points", n, n, got, expected, 1e-14);
    compare("Gauss weights", n, n, w, we, 1e-14);
  }
  for (int k = 1; k <= 10; k++) {
    int n = k + 1;
    double nodes[16];
    ref_gauss_lobatto(n, nodes);
    for (int t = 0; t < 5; t++) {
      double x = 0.5 + 0.5 * ref_random(&seed);
      for (int i = 0; i < n; i++) {
        double v = tpmg_basis_lagrange(n, nodes, i, x), ve = ref_lagrange(n, nodes, i, x);
        double dv = tpmg_basis_lagrange_derivative(n, nodes, i, x);
        double dve = ref_lagrange_derivative(n, nodes, i, x);
        REF_CHECK(fabs(v - ve) <= 1e-12 * (1 + fabs(ve)),
                  "Lagrange value k=%d i=%d x=%g: expected %.17g, got %.17g", k, i, x, ve, v);
        REF_CHECK(fabs(dv - dve) <= 1e-11 * (1 + fabs(dve)),
                  "Lagrange derivative k=%d i=%d x=%g: expected %.17g, got %.17g", k, i, x, dve,
                  dv);
      }
    }
    double M[121], K[121], Me[121], Ke[121];
    ref_fill_nan(121, M);
    ref_fill_nan(121, K);
    tpmg_basis_cell_matrices(k, M, K);
    ref_cell_matrices(k, Me, Ke);
    compare("cell mass", k, n * n, M, Me, 1e-13);
    compare("cell stiffness", k, n * n, K, Ke, 1e-11);
  }
}

/* 1D patch matrices of two cells of size h: P x P with P = 2k+1. */
static void patch_matrices(int k, double h, double *Mp, double *Kp) {
  int n = k + 1, P = 2 * k + 1;
  double M[121], K[121];
  ref_cell_matrices(k, M, K);
  memset(Mp, 0, sizeof(double) * P * P);
  memset(Kp, 0, sizeof(double) * P * P);
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        Mp[(c * k + i) * P + c * k + j] += h * M[i * n + j];
        Kp[(c * k + i) * P + c * k + j] += K[i * n + j] / h;
      }
}

/* Check that S, lambda solve K S = M S Lambda with S^T M S = I; n x n. */
static void check_eigenpairs(const char *what, int k, int n, const double *K, const double *M,
                             const double *S, const double *lambda, double tol) {
  double knorm = 0, res = 0, orth = 0;
  for (int i = 0; i < n; i++) {
    double row = 0;
    for (int j = 0; j < n; j++) row += fabs(K[i * n + j]);
    if (row > knorm) knorm = row;
  }
  for (int j = 0; j < n; j++) {
    REF_CHECK(lambda[j] > 0, "%s, k=%d: eigenvalue %d: expected > 0, got %.17g", what, k, j,
              lambda[j]);
    if (j > 0)
      REF_CHECK(lambda[j] >= lambda[j - 1],
                "%s, k=%d: eigenvalues not ascending at %d: %.17g < %.17g", what, k, j, lambda[j],
                lambda[j - 1]);
    for (int i = 0; i < n; i++) {
      double ks = 0, ms = 0;
      for (int p = 0; p < n; p++) {
        ks += K[i * n + p] * S[p * n + j];
        ms += M[i * n + p] * S[p * n + j];
      }
      double r = fabs(ks - lambda[j] * ms) / (knorm * (1 + ref_max_abs(n * n, S)));
      if (isnan(r) || r > res)
        res = r;
    }
    for (int l = 0; l < n; l++) {
      double stms = 0;
      for (int p = 0; p < n; p++)
        for (int q = 0; q < n; q++) stms += S[p * n + j] * M[p * n + q] * S[q * n + l];
      double e = fabs(stms - (j == l ? 1.0 : 0.0));
      if (isnan(e) || e > orth) orth = e;
    }
  }
  REF_CHECK(res <= tol,
            "%s, k=%d: eigen residual max|K s - lambda M s|/(|K| |S|): expected <= %g, got %.3g",
            what, k, tol, res);
  REF_CHECK(orth <= tol, "%s, k=%d: max|S^T M S - I|: expected <= %g, got %.3g", what, k, tol,
            orth);
}

static void generalized_eigen(void) {
  for (int k = 1; k <= 10; k++) {
    int P = 2 * k + 1, I = 2 * k - 1;
    double Mp[441], Kp[441], M[361], K[361], S[361], lambda[19];
    double h = 0.37;
    patch_matrices(k, h, Mp, Kp);
    for (int i = 0; i < I; i++)
      for (int j = 0; j < I; j++) {
        M[i * I + j] = Mp[(i + 1) * P + j + 1];
        K[i * I + j] = Kp[(i + 1) * P + j + 1];
      }
    ref_fill_nan(361, S);
    ref_fill_nan(19, lambda);
    double r = tpmg_basis_generalized_eigen(I, K, M, S, lambda);
    REF_CHECK(r >= 0 && r <= 1e-12,
              "tpmg_basis_generalized_eigen k=%d: returned residual %.3g, expected in [0, 1e-12]",
              k, r);
    check_eigenpairs("patch interior eigenpairs", k, I, K, M, S, lambda, 1e-11);
  }
  /* an indefinite M is reported */
  double K[4] = {2, -1, -1, 2}, M[4] = {1, 0, 0, -1}, S[4], lambda[2];
  double r = tpmg_basis_generalized_eigen(2, K, M, S, lambda);
  REF_CHECK(r < 0,
            "tpmg_basis_generalized_eigen with indefinite M: expected a negative return, got %g",
            r);
}

int main(void) {
  closed_form();
  points_and_matrices();
  generalized_eigen();
  return ref_exit_code("t100-basis");
}
