/* One-dimensional building blocks, on the host in double: quadrature, the
 * Gauss-Lobatto Lagrange basis, cell matrices, and the generalized symmetric
 * eigenproblem behind fast diagonalization. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-backend.h"

/* Legendre polynomials P_{m-1}(x), P_m(x) by the three-term recurrence. */
static void legendre(int m, double x, double *p_prev, double *p) {
  double a = 1.0, b = x;
  if (m == 0) {
    *p_prev = 0.0;
    *p = 1.0;
    return;
  }
  for (int j = 2; j <= m; ++j) {
    double c = ((2 * j - 1) * x * b - (j - 1) * a) / j;
    a = b;
    b = c;
  }
  *p_prev = a;
  *p = b;
}

/* Gauss-Lobatto points are the roots of (1-x^2) P'_N(x), N = n-1, which is a
 * multiple of q = P_{N+1} - P_{N-1}; q' = (2N+1) P_N gives Newton's step. */
void tpmg_basis_gauss_lobatto(int n_points, double *points) {
  int N = n_points - 1;
  points[0] = 0.0;
  points[N] = 1.0;
  for (int i = 1; i < N; ++i) {
    double x = -cos(TPMG_PI * i / N);
    for (int it = 0; it < 100; ++it) {
      double pNm1, pN, pN1, dummy;
      legendre(N, x, &pNm1, &pN);
      legendre(N + 1, x, &dummy, &pN1);
      double dx = (pN1 - pNm1) / ((2 * N + 1) * pN);
      x -= dx;
      if (fabs(dx) < 1e-16) break;
    }
    points[i] = 0.5 * (x + 1.0);
  }
}

void tpmg_basis_gauss(int n_points, double *points, double *weights) {
  int n = n_points;
  for (int i = 0; i < n; ++i) {
    double x = -cos(TPMG_PI * (i + 0.75) / (n + 0.5)), dp = 1.0;
    for (int it = 0; it < 100; ++it) {
      double p_prev, p;
      legendre(n, x, &p_prev, &p);
      dp = n * (x * p - p_prev) / (x * x - 1.0);
      double dx = p / dp;
      x -= dx;
      if (fabs(dx) < 1e-16) break;
    }
    double p_prev, p;
    legendre(n, x, &p_prev, &p);
    dp = n * (x * p - p_prev) / (x * x - 1.0);
    points[i] = 0.5 * (x + 1.0);
    weights[i] = 1.0 / ((1.0 - x * x) * dp * dp);
  }
}

double tpmg_basis_lagrange(int n, const double *nodes, int i, double x) {
  double value = 1.0;
  for (int j = 0; j < n; ++j)
    if (j != i) value *= (x - nodes[j]) / (nodes[i] - nodes[j]);
  return value;
}

double tpmg_basis_lagrange_derivative(int n, const double *nodes, int i, double x) {
  double sum = 0.0;
  for (int m = 0; m < n; ++m) {
    if (m == i) continue;
    double term = 1.0 / (nodes[i] - nodes[m]);
    for (int j = 0; j < n; ++j)
      if (j != i && j != m) term *= (x - nodes[j]) / (nodes[i] - nodes[j]);
    sum += term;
  }
  return sum;
}

/* Mass M_ij = int_0^1 phi_i phi_j and stiffness K_ij = int_0^1 phi_i' phi_j',
 * exact with k+2 Gauss points (the integrands have degree <= 2k). */
void tpmg_basis_cell_matrices(int degree, double *mass, double *stiffness) {
  int n = degree + 1, nq = degree + 2;
  double nodes[TPMG_MAX_DEGREE_2D + 1], qp[TPMG_MAX_DEGREE_2D + 2], qw[TPMG_MAX_DEGREE_2D + 2];
  tpmg_basis_gauss_lobatto(n, nodes);
  tpmg_basis_gauss(nq, qp, qw);
  memset(mass, 0, sizeof(double) * n * n);
  memset(stiffness, 0, sizeof(double) * n * n);
  for (int q = 0; q < nq; ++q) {
    double v[TPMG_MAX_DEGREE_2D + 1], d[TPMG_MAX_DEGREE_2D + 1];
    for (int i = 0; i < n; ++i) {
      v[i] = tpmg_basis_lagrange(n, nodes, i, qp[q]);
      d[i] = tpmg_basis_lagrange_derivative(n, nodes, i, qp[q]);
    }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        mass[i * n + j] += qw[q] * v[i] * v[j];
        stiffness[i * n + j] += qw[q] * d[i] * d[j];
      }
  }
}

int tpmg_basis_cholesky(int n, double *a) {
  for (int j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (int p = 0; p < j; ++p) d -= a[j * n + p] * a[j * n + p];
    if (!(d > 0.0)) return 1;
    d = sqrt(d);
    a[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (int p = 0; p < j; ++p) s -= a[i * n + p] * a[j * n + p];
      a[i * n + j] = s / d;
    }
  }
  return 0;
}

/* K S = M S Lambda: with M = L L^T, C = L^{-1} K L^{-T} is symmetric; cyclic
 * Jacobi rotations give C = Q Lambda Q^T, and S = L^{-T} Q is M-orthonormal. */
double tpmg_basis_generalized_eigen(int n, const double *K, const double *M, double *S,
                                    double *lambda) {
  size_t bytes = sizeof(double) * (size_t)n * (size_t)n;
  double *L = malloc(bytes), *C = malloc(bytes), *Q = malloc(bytes);
  int *order = malloc(sizeof(int) * (size_t)n);
  double result = -1.0;
  if (!L || !C || !Q || !order) goto done;
  memcpy(L, M, bytes);
  if (tpmg_basis_cholesky(n, L)) goto done;

  /* C = L^{-1} (L^{-1} K)^T, by forward substitution on columns */
  for (int pass = 0; pass < 2; ++pass) {
    const double *src = pass == 0 ? K : C;
    double *tmp = Q;
    for (int col = 0; col < n; ++col)
      for (int i = 0; i < n; ++i) {
        double s = src[i * n + col];
        for (int p = 0; p < i; ++p) s -= L[i * n + p] * tmp[p * n + col];
        tmp[i * n + col] = s / L[i * n + i];
      }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) C[i * n + j] = tmp[j * n + i];
  }

  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) Q[i * n + j] = i == j;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0, total = 0.0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        total += C[i * n + j] * C[i * n + j];
        if (i != j) off += C[i * n + j] * C[i * n + j];
      }
    if (off <= 1e-32 * total) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        double apq = C[p * n + q];
        if (apq == 0.0) continue;
        double theta = (C[q * n + q] - C[p * n + p]) / (2.0 * apq);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        for (int r = 0; r < n; ++r) { /* columns p, q */
          double crp = C[r * n + p], crq = C[r * n + q];
          C[r * n + p] = c * crp - s * crq;
          C[r * n + q] = s * crp + c * crq;
        }
        for (int r = 0; r < n; ++r) { /* rows p, q */
          double cpr = C[p * n + r], cqr = C[q * n + r];
          C[p * n + r] = c * cpr - s * cqr;
          C[q * n + r] = s * cpr + c * cqr;
        }
        for (int r = 0; r < n; ++r) {
          double qrp = Q[r * n + p], qrq = Q[r * n + q];
          Q[r * n + p] = c * qrp - s * qrq;
          Q[r * n + q] = s * qrp + c * qrq;
        }
      }
  }

  /* ascending eigenvalues; S = L^{-T} Q by back substitution */
  for (int i = 0; i < n; ++i) order[i] = i;
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && C[order[j] * n + order[j]] < C[order[j - 1] * n + order[j - 1]]; --j) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int j = 0; j < n; ++j) {
    int src = order[j];
    lambda[j] = C[src * n + src];
    for (int i = n - 1; i >= 0; --i) {
      double s = Q[i * n + src];
      for (int p = i + 1; p < n; ++p) s -= L[p * n + i] * S[p * n + j];
      S[i * n + j] = s / L[i * n + i];
    }
  }

  double knorm = 0.0, residual = 0.0;
  for (int i = 0; i < n; ++i) {
    double row = 0.0;
    for (int j = 0; j < n; ++j) row += fabs(K[i * n + j]);
    if (row > knorm) knorm = row;
  }
  for (int j = 0; j < n; ++j) {
    double smax = 0.0;
    for (int i = 0; i < n; ++i) smax = fmax(smax, fabs(S[i * n + j]));
    for (int i = 0; i < n; ++i) {
      double r = 0.0;
      for (int p = 0; p < n; ++p) r += (K[i * n + p] - lambda[j] * M[i * n + p]) * S[p * n + j];
      residual = fmax(residual, fabs(r) / (knorm * smax));
    }
  }
  result = residual;
done:
  free(L);
  free(C);
  free(Q);
  free(order);
  return result;
}
