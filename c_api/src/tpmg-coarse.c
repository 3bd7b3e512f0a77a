/* The exact solver of one level: the bottom of the multigrid hierarchy (the
 * grid's level index 0, below the user's coarse mesh where its cells could
 * be halved), or the user's level 0 for tpmg_coarse_create. Its interior
 * matrix is, like a patch matrix, a Kronecker sum of 1D matrices,
 *   A_I = sum_d M_2 ⊗ .. ⊗ K_d ⊗ .. ⊗ M_0,
 * with the global 1D mass M_d and stiffness K_d of the level restricted to its
 * n_d interior points (symmetric, bandwidth k). With the generalized
 * eigenpairs K_d S_d = M_d S_d Λ_d, S_d^T M_d S_d = I, fast diagonalization
 * (Lynch, Rice and Thomas 1964; the paper's eq. 2.8 for a patch) gives
 *   A_I^{-1} = (S_2 ⊗ S_1 ⊗ S_0) (Λ_2 ⊕ Λ_1 ⊕ Λ_0)^{-1} (S_2 ⊗ S_1 ⊗ S_0)^T.
 * The dense eigenproblems cost O(n_d^3) and their S_d O(n_d^2) storage and
 * O(n_I n_d) operations per solve, which for a long level (3 x 3 x 801 cells,
 * 2001 x 3) is all in its one long direction D. So D is not diagonalized:
 * with X = ⊗_{d≠D} S_d (identity along D), X^T A_I X is block diagonal, one
 * block per index q of the other directions,
 *   K_D + μ_q M_D,   μ_q = sum_{d≠D} λ_{d,q_d},
 * a banded SPD matrix, factored by banded Cholesky (O(n_D k^2) each); a
 * reaction c (A_I + c M_I, M_I = ⊗_d M_d) adds c to every μ_q. Hence
 *   A_I^{-1} = X diag_q((K_D + μ_q M_D)^{-1}) X^T,
 * applied in O(n_I (2 sum_{d≠D} n_d + 4k + 2)) operations, set up in
 * O(sum_{d≠D} n_d^3 + n_I k^2), D the direction with the most points.
 *
 * Up to TPMG_MAX_COARSE_DOFS interior DoFs the solver builds the dense
 * inverse from it (column j is A_I^{-1} e_j) and the backend applies it
 * (coarse_solve: on a GPU no vector leaves the device). Above, it keeps the
 * factors on the host and applies the formula there in double: b is
 * downloaded, x uploaded. Every host array is checked against the host's
 * memory and counted (tpmg_host_malloc). */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

struct tpmg_coarse {
  tpmg_grid *grid;         /* referenced */
  int index;               /* the level's grid index */
  const tpmg_level *level; /* the whole level */
  tpmg_precision precision;
  int n[3];              /* interior points per direction; 1 beyond dim */
  tpmg_index n_interior; /* n[0] n[1] n[2] */
  /* n_interior <= TPMG_MAX_COARSE_DOFS: the dense inverse in backend memory */
  void *inverse;
  size_t bytes;
  /* the factored form, in host memory (tpmg_host_malloc, bytes in *_bytes):
   * S_d and S_d^T (n_d x n_d row-major) for d != D; the band factors L_q of
   * K_D + μ_q M_D (band_factor); for the host solve also a level vector of the
   * solver's precision and two interior tensors */
  int D;                   /* the direction solved by band factors */
  tpmg_index inner, outer; /* points before and after D: n_I = inner n_D outer */
  double *S[3], *ST[3];
  size_t S_bytes[3];
  double *factor;
  size_t factor_bytes;
  void *host;
  double *t, *w;
  size_t host_bytes, tensor_bytes;
  /* the level split among ranks: the whole level's b and x on every rank */
  void *whole_b, *whole_x;
  size_t whole_bytes;
};

/* out = (A_2 ⊗ A_1 ⊗ A_0) in for the tensor in (x fastest), A_d = op[d]
 * (n_d x n_d row-major), A_skip the identity (skip -1: none): per direction d,
 * with the tensor as [outer][n_d][inner], out[o][i][s] = sum_j A_d[i][j]
 * in[o][j][s]. in and out alternate; the result ends in in. */
static void apply_kronecker(int n_threads, int dim, int skip, const int *n, double *const *op,
                            double *in, double *out) {
  tpmg_index total = (tpmg_index)n[0] * n[1] * n[2];
  int applied = 0;
  for (int d = 0; d < dim; ++d) {
    if (d == skip)
      continue;
    const tpmg_index len = n[d], inner = d == 0 ? 1 : d == 1 ? n[0] : (tpmg_index)n[0] * n[1];
    const tpmg_index outer = total / (len * inner);
    const double *A = op[d];
#pragma omp parallel for collapse(2) schedule(static) num_threads(n_threads) if (total > 4096)
    for (tpmg_index o = 0; o < outer; ++o)
      for (tpmg_index i = 0; i < len; ++i) {
        const double *row = A + i * len, *src = in + o * len * inner;
        double *dst = out + (o * len + i) * inner;
        if (inner == 1) {
          double sum = 0.0;
          for (tpmg_index j = 0; j < len; ++j)
            sum += row[j] * src[j];
          dst[0] = sum;
          continue;
        }
        for (tpmg_index s = 0; s < inner; ++s)
          dst[s] = 0.0;
        for (tpmg_index j = 0; j < len; ++j) {
          const double a = row[j], *line = src + j * inner;
          for (tpmg_index s = 0; s < inner; ++s)
            dst[s] += a * line[s];
        }
      }
    double *swap = in;
    in = out;
    out = swap;
    ++applied;
  }
  if (applied % 2)
    memcpy(out, in, sizeof(double) * (size_t)total);
}

/* The generalized eigenpairs K S = M S Λ, S^T M S = I, of the level's 1D
 * interior matrices (symmetric, bandwidth k, M positive definite), n x n
 * row-major, eigenvalues ascending; S[i n + j] is entry i of eigenvector j.
 * The patches' tpmg_basis_generalized_eigen (cyclic Jacobi, O(n^3) per sweep)
 * is too slow for the n_d of a large coarse level, so the standard route,
 * O(n^3) in all: M = L L^T (banded), C = L^{-1} K L^{-T}, Householder
 * tridiagonalization C = Q T Q^T, implicit symmetric QR steps with Wilkinson
 * shifts on T (Golub and Van Loan, Matrix Computations, §8.3), S = L^{-T} Q.
 * Q is kept transposed (rows are vectors) so that every update runs along
 * rows. Returns the largest residual ||K s - λ M s||_inf / (||K||_inf
 * ||s||_inf), or -1 if M is not positive definite or QR does not converge.
 * work: EIGEN_WORK(n) doubles. */
#define EIGEN_WORK(n) (3 * (size_t)(n) * (size_t)(n) + 4 * (size_t)(n))
static double generalized_eigen(int n, int k, const double *K, const double *M, double *S,
                                double *lambda, double *work) {
  size_t nn = (size_t)n * n;
  double *L = work, *C = L + nn, *Qt = C + nn, *e = Qt + nn, *v = e + n, *w = v + n;
  int *order = (int *)(w + n);
  double result = -1.0;
  memset(L, 0, sizeof(double) * nn);
#define BAND_LO(i) ((i)-k > 0 ? (i)-k : 0)
  /* banded Cholesky M = L L^T */
  for (int i = 0; i < n; ++i)
    for (int j = BAND_LO(i); j <= i; ++j) {
      double sum = M[(size_t)i * n + j];
      for (int p = BAND_LO(i); p < j; ++p)
        sum -= L[(size_t)i * n + p] * L[(size_t)j * n + p];
      if (i == j) {
        if (!(sum > 0.0))
          goto done;
        L[(size_t)i * n + i] = sqrt(sum);
      } else {
        L[(size_t)i * n + j] = sum / L[(size_t)j * n + j];
      }
    }
  /* Qt = L^{-1} K by rows, then C = L^{-1} Qt^T (symmetric) */
  for (int pass = 0; pass < 2; ++pass) {
    double *dst = pass == 0 ? Qt : C;
    for (int i = 0; i < n; ++i) {
      double *row = dst + (size_t)i * n;
      for (int j = 0; j < n; ++j)
        row[j] = pass == 0 ? K[(size_t)i * n + j] : Qt[(size_t)j * n + i];
      for (int p = BAND_LO(i); p < i; ++p) {
        const double l = L[(size_t)i * n + p], *prev = dst + (size_t)p * n;
        for (int j = 0; j < n; ++j)
          row[j] -= l * prev[j];
      }
      const double inv = 1.0 / L[(size_t)i * n + i];
      for (int j = 0; j < n; ++j)
        row[j] *= inv;
    }
  }
  /* Householder: C = Q T Q^T with T in (lambda, e), e[i] = T[i+1][i] */
  for (size_t i = 0; i < nn; ++i)
    Qt[i] = 0.0;
  for (int i = 0; i < n; ++i)
    Qt[(size_t)i * n + i] = 1.0;
  for (int j = 0; j + 2 < n; ++j) {
    int m = n - j - 1; /* the reflector acts on j+1..n-1 */
    double norm = 0.0;
    for (int a = 0; a < m; ++a) {
      v[a] = C[(size_t)(j + 1 + a) * n + j];
      norm += v[a] * v[a];
    }
    norm = sqrt(norm);
    double alpha = v[0] > 0.0 ? -norm : norm;
    v[0] -= alpha;
    double vv = 0.0;
    for (int a = 0; a < m; ++a)
      vv += v[a] * v[a];
    for (int a = 0; a < m; ++a)
      C[(size_t)(j + 1 + a) * n + j] = C[(size_t)j * n + j + 1 + a] = a == 0 ? alpha : 0.0;
    if (vv == 0.0)
      continue;
    const double beta = 2.0 / vv;
    /* A22 -= v w^T + w v^T, w = p - (beta/2)(p^T v) v, p = beta A22 v */
    double pv = 0.0;
    for (int a = 0; a < m; ++a) {
      const double *row = C + (size_t)(j + 1 + a) * n + j + 1;
      double sum = 0.0;
      for (int b = 0; b < m; ++b)
        sum += row[b] * v[b];
      w[a] = beta * sum;
      pv += w[a] * v[a];
    }
    for (int a = 0; a < m; ++a)
      w[a] -= 0.5 * beta * pv * v[a];
    for (int a = 0; a < m; ++a) {
      double *row = C + (size_t)(j + 1 + a) * n + j + 1;
      for (int b = 0; b < m; ++b)
        row[b] -= v[a] * w[b] + w[a] * v[b];
    }
    /* Qt = H Qt on its rows j+1..n-1, with e as the row vector v^T Qt */
    for (int col = 0; col < n; ++col)
      e[col] = 0.0;
    for (int a = 0; a < m; ++a) {
      const double *row = Qt + (size_t)(j + 1 + a) * n;
      for (int col = 0; col < n; ++col)
        e[col] += v[a] * row[col];
    }
    for (int a = 0; a < m; ++a) {
      double *row = Qt + (size_t)(j + 1 + a) * n;
      const double f = beta * v[a];
      for (int col = 0; col < n; ++col)
        row[col] -= f * e[col];
    }
  }
  for (int i = 0; i < n; ++i) {
    lambda[i] = C[(size_t)i * n + i];
    e[i] = i + 1 < n ? C[(size_t)(i + 1) * n + i] : 0.0;
  }
  /* implicit symmetric QR steps on the unreduced block l..m, from the bottom */
  int steps = 0;
  for (int m = n - 1; m > 0;) {
    if (fabs(e[m - 1]) <= DBL_EPSILON * (fabs(lambda[m - 1]) + fabs(lambda[m]))) {
      e[m - 1] = 0.0;
      --m;
      continue;
    }
    if (++steps > 30 * n)
      goto done;
    int l = m - 1;
    while (l > 0 && fabs(e[l - 1]) > DBL_EPSILON * (fabs(lambda[l - 1]) + fabs(lambda[l])))
      --l;
    const double delta = 0.5 * (lambda[m - 1] - lambda[m]), t = e[m - 1];
    const double mu = lambda[m] - t * t / (delta + copysign(hypot(delta, t), delta));
    double x = lambda[l] - mu, z = e[l], bulge = 0.0;
    for (int i = l; i < m; ++i) {
      const double r = hypot(x, z), c = r == 0.0 ? 1.0 : x / r, s = r == 0.0 ? 0.0 : z / r;
      if (i > l)
        e[i - 1] = r;
      const double a = lambda[i], b = e[i], d = lambda[i + 1];
      lambda[i] = c * c * a + 2.0 * c * s * b + s * s * d;
      lambda[i + 1] = s * s * a - 2.0 * c * s * b + c * c * d;
      e[i] = c * s * (d - a) + (c * c - s * s) * b;
      if (i + 1 < m) {
        bulge = s * e[i + 1];
        e[i + 1] *= c;
        x = e[i];
        z = bulge;
      }
      double *qi = Qt + (size_t)i * n, *qj = qi + n;
      for (int col = 0; col < n; ++col) {
        const double u = qi[col], u1 = qj[col];
        qi[col] = c * u + s * u1;
        qj[col] = -s * u + c * u1;
      }
    }
  }
  /* ascending; S = L^{-T} Q by back substitution, per eigenvector */
  for (int i = 0; i < n; ++i)
    order[i] = i;
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && lambda[order[j]] < lambda[order[j - 1]]; --j) {
      int swap = order[j];
      order[j] = order[j - 1];
      order[j - 1] = swap;
    }
  for (int j = 0; j < n; ++j) {
    const double *q = Qt + (size_t)order[j] * n;
    w[j] = lambda[order[j]];
    for (int i = n - 1; i >= 0; --i) {
      double sum = q[i];
      for (int p = i + 1; p <= i + k && p < n; ++p)
        sum -= L[(size_t)p * n + i] * S[(size_t)p * n + j];
      S[(size_t)i * n + j] = sum / L[(size_t)i * n + i];
    }
  }
  for (int j = 0; j < n; ++j)
    lambda[j] = w[j];
  /* residual, with the band of K and M */
  double knorm = 0.0, residual = 0.0;
  for (int i = 0; i < n; ++i) {
    double row = 0.0;
    for (int j = BAND_LO(i); j <= i + k && j < n; ++j)
      row += fabs(K[(size_t)i * n + j]);
    knorm = fmax(knorm, row);
  }
  for (int j = 0; j < n; ++j) {
    double r = 0.0, snorm = 0.0;
    for (int i = 0; i < n; ++i) {
      double sum = 0.0;
      for (int p = BAND_LO(i); p <= i + k && p < n; ++p)
        sum += (K[(size_t)i * n + p] - lambda[j] * M[(size_t)i * n + p]) * S[(size_t)p * n + j];
      r = fmax(r, fabs(sum));
      snorm = fmax(snorm, fabs(S[(size_t)i * n + j]));
    }
    residual = fmax(residual, r / (knorm * snorm));
  }
  result = residual;
#undef BAND_LO
done:
  return result;
}

/* The level's global 1D mass and stiffness in direction d on its n interior
 * points 1..N-2, by cells: add(i, j, mass, stiffness) for each cell entry. */
#define ASSEMBLE_1D(lvl, d, n, add)                                                                \
  do {                                                                                             \
    const int k_ = (lvl)->degree;                                                                  \
    double cm_[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];                               \
    double ck_[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];                               \
    tpmg_basis_cell_matrices(k_, cm_, ck_);                                                        \
    for (tpmg_index cell = 0; cell < (lvl)->cells[d]; ++cell)                                      \
      for (int a = 0; a <= k_; ++a)                                                                \
        for (int b = 0; b <= k_; ++b) {                                                            \
          long i = (long)(cell * k_ + a) - 1, j = (long)(cell * k_ + b) - 1;                       \
          if (i < 0 || j < 0 || i >= (n) || j >= (n))                                              \
            continue;                                                                              \
          const double h_ = tpmg_level_width((lvl), d, cell);                                      \
          add(i, j, h_ * cm_[a * (k_ + 1) + b], ck_[a * (k_ + 1) + b] / h_);                       \
        }                                                                                          \
  } while (0)

/* The 1D eigenpairs of the level's interior, direction d: S (n x n), lambda (n). */
static tpmg_status eigenpairs(tpmg_context *ctx, const tpmg_level *lvl, int d, int n, double *S,
                              double *lambda) {
  const int k = lvl->degree;
  const size_t nn = (size_t)n * n, bytes = sizeof(double) * (2 * nn + EIGEN_WORK(n));
  double *M = NULL;
  TPMG_CALL(tpmg_host_malloc(ctx, bytes, "coarse solver: 1D eigenproblem", (void **)&M));
  double *K = M + nn, *work = K + nn;
  memset(M, 0, sizeof(double) * 2 * nn);
#define ADD_DENSE(i, j, m, s)                                                                      \
  do {                                                                                             \
    M[(i)*n + (j)] += (m);                                                                         \
    K[(i)*n + (j)] += (s);                                                                         \
  } while (0)
  ASSEMBLE_1D(lvl, d, n, ADD_DENSE);
#undef ADD_DENSE
  double residual = generalized_eigen(n, k, K, M, S, lambda, work);
  tpmg_host_free(ctx, bytes, M);
  TPMG_CHECK(ctx, residual >= 0.0 && residual < 1e-10, TPMG_ERROR_NUMERICAL,
             "coarse eigenproblem on level %d, direction %d (%d points): residual %g", lvl->level,
             d, n, residual);
  return TPMG_SUCCESS;
}

/* The band factors: for each index q = (o, s) of the directions other than D
 * (s those before D, o after), K_D + μ_q M_D = L_q L_q^T by banded Cholesky,
 * stored as factor[((o n_D + i) (k+1) + b) inner + s] = L_q[i][i - k + b], so
 * that the solves run along s, contiguous in the tensor as in the factors. */
static tpmg_status band_factors(tpmg_context *ctx, tpmg_coarse *c, double *const *lambda) {
  const tpmg_level *lvl = c->level;
  const int D = c->D, nD = c->n[D], k = lvl->degree, w = k + 1;
  const size_t band = (size_t)nD * w;
  double *MB = NULL;
  TPMG_CALL(tpmg_host_malloc(ctx, sizeof(double) * 2 * band, "coarse solver: 1D band matrices",
                             (void **)&MB));
  double *KB = MB + band;
  memset(MB, 0, sizeof(double) * 2 * band);
#define ADD_BAND(i, j, m, s)                                                                       \
  do {                                                                                             \
    if ((j) <= (i) && (i) - (j) <= k) {                                                            \
      MB[(i)*w + (j) - (i) + k] += (m);                                                            \
      KB[(i)*w + (j) - (i) + k] += (s);                                                            \
    }                                                                                              \
  } while (0)
  ASSEMBLE_1D(lvl, D, nD, ADD_BAND);
#undef ADD_BAND
  c->factor_bytes = sizeof(double) * (size_t)c->n_interior * (size_t)w;
  tpmg_status status =
      tpmg_host_malloc(ctx, c->factor_bytes, "coarse solver: band factors", (void **)&c->factor);
  if (status != TPMG_SUCCESS) {
    c->factor_bytes = 0;
    tpmg_host_free(ctx, sizeof(double) * 2 * band, MB);
    return status;
  }
  const tpmg_index inner = c->inner, outer = c->outer;
  int failed = 0;
  for (tpmg_index o = 0; o < outer; ++o)
    for (tpmg_index s = 0; s < inner; ++s) {
      /* μ_q from the indices of q in the other directions, plus the reaction:
       * X^T (A_I + c M_I) X has the blocks K_D + (μ_q + c) M_D */
      tpmg_index rest[2] = {s, o};
      double mu = lvl->reaction;
      for (int d = 0; d < lvl->dim; ++d) {
        if (d == D)
          continue;
        tpmg_index *r = &rest[d > D];
        mu += lambda[d][*r % c->n[d]];
        *r /= c->n[d];
      }
      double *F = c->factor + (size_t)o * band * (size_t)inner + (size_t)s;
#define L_(i, j) F[((size_t)(i)*w + (size_t)((j) - (i) + k)) * (size_t)inner]
      for (int i = 0; i < nD; ++i)
        for (int j = i - k > 0 ? i - k : 0; j <= i; ++j) {
          double sum = KB[i * w + j - i + k] + mu * MB[i * w + j - i + k];
          for (int p = i - k > 0 ? i - k : 0; p < j; ++p)
            sum -= L_(i, p) * L_(j, p);
          if (i == j) {
            failed |= !(sum > 0.0);
            L_(i, i) = sqrt(sum);
          } else {
            L_(i, j) = sum / L_(j, j);
          }
        }
#undef L_
    }
  tpmg_host_free(ctx, sizeof(double) * 2 * band, MB);
  TPMG_CHECK(ctx, !failed, TPMG_ERROR_NUMERICAL,
             "coarse solver on level %d: K + mu M in direction %d (%d points) is not positive "
             "definite",
             lvl->level, D, nD);
  return TPMG_SUCCESS;
}

/* t's lines along D solved in place with the band factors: t_q = (L_q L_q^T)^{-1} t_q. */
static void band_solve(const tpmg_coarse *c, int n_threads, double *t) {
  const int nD = c->n[c->D], k = c->level->degree, w = k + 1;
  const tpmg_index inner = c->inner, outer = c->outer;
#pragma omp parallel for schedule(static)                                                          \
    num_threads(n_threads) if (outer > 1 && c->n_interior > 4096)
  for (tpmg_index o = 0; o < outer; ++o) {
    double *x = t + (size_t)o * (size_t)nD * (size_t)inner;
    const double *F = c->factor + (size_t)o * (size_t)nD * (size_t)w * (size_t)inner;
#define L_(i, j) (F + ((size_t)(i)*w + (size_t)((j) - (i) + k)) * (size_t)inner)
    for (int i = 0; i < nD; ++i) { /* L y = x */
      double *xi = x + (size_t)i * inner;
      for (int p = i - k > 0 ? i - k : 0; p < i; ++p) {
        const double *l = L_(i, p), *xp = x + (size_t)p * inner;
        for (tpmg_index s = 0; s < inner; ++s)
          xi[s] -= l[s] * xp[s];
      }
      const double *l = L_(i, i);
      for (tpmg_index s = 0; s < inner; ++s)
        xi[s] /= l[s];
    }
    for (int i = nD - 1; i >= 0; --i) { /* L^T x = y */
      double *xi = x + (size_t)i * inner;
      for (int p = i + 1; p <= i + k && p < nD; ++p) {
        const double *l = L_(p, i), *xp = x + (size_t)p * inner;
        for (tpmg_index s = 0; s < inner; ++s)
          xi[s] -= l[s] * xp[s];
      }
      const double *l = L_(i, i);
      for (tpmg_index s = 0; s < inner; ++s)
        xi[s] /= l[s];
    }
#undef L_
  }
}

/* t = A_I^{-1} t for an interior tensor t (w: scratch of the same size). */
static void interior_solve(const tpmg_coarse *c, int n_threads, double *t, double *w) {
  const int dim = c->level->dim;
  apply_kronecker(n_threads, dim, c->D, c->n, (double *const *)c->ST, t, w);
  band_solve(c, n_threads, t);
  apply_kronecker(n_threads, dim, c->D, c->n, (double *const *)c->S, t, w);
}

/* The dense inverse, column j = A_I^{-1} e_j (symmetric, so stored as row j),
 * the columns shared among the context's threads; uploaded in the solver's
 * precision. */
/* The interior matrix A_I of a level with a variable coefficient, assembled
 * densely (n_I x n_I, row-major) from its cells: a_K (the grid's whole
 * coefficient of the level) times the Kronecker cell stiffness, plus c times
 * the cell mass. */
static void assemble(const tpmg_coarse *c, const double *coefficient, double *A) {
  const tpmg_level *lvl = c->level;
  const int dim = lvl->dim, k = lvl->degree, nc = k + 1;
  const tpmg_index n_I = c->n_interior;
  double mref[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  double kref[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  tpmg_basis_cell_matrices(k, mref, kref);
  memset(A, 0, sizeof(double) * (size_t)n_I * (size_t)n_I);
  const int local = dim == 3 ? nc * nc * nc : nc * nc;
  for (tpmg_index e2 = 0; e2 < lvl->cells[2]; ++e2)
    for (tpmg_index e1 = 0; e1 < lvl->cells[1]; ++e1)
      for (tpmg_index e0 = 0; e0 < lvl->cells[0]; ++e0) {
        const tpmg_index e[3] = {e0, e1, e2};
        const double a = coefficient[e0 + lvl->cells[0] * (e1 + lvl->cells[1] * e2)];
        tpmg_index row[(TPMG_MAX_DEGREE_3D + 1) * (TPMG_MAX_DEGREE_3D + 1) * (TPMG_MAX_DEGREE_3D + 1)];
        for (int i = 0; i < local; ++i) {
          const int li[3] = {i % nc, i / nc % nc, i / (nc * nc)};
          tpmg_index g = 0, stride = 1;
          for (int d = 0; d < dim; ++d) {
            const tpmg_index x = e[d] * k + li[d] - 1; /* interior index along d */
            if (x < 0 || x >= c->n[d]) {
              g = -1;
              break;
            }
            g += x * stride;
            stride *= c->n[d];
          }
          row[i] = g;
        }
        for (int i = 0; i < local; ++i) {
          if (row[i] < 0) continue;
          const int li[3] = {i % nc, i / nc % nc, i / (nc * nc)};
          for (int j = 0; j < local; ++j) {
            if (row[j] < 0) continue;
            const int lj[3] = {j % nc, j / nc % nc, j / (nc * nc)};
            double mass = 1.0, stiffness = 0.0;
            for (int d = 0; d < dim; ++d) {
              const double m = tpmg_level_width(lvl, d, e[d]) * mref[li[d] * nc + lj[d]];
              double term = kref[li[d] * nc + lj[d]] / tpmg_level_width(lvl, d, e[d]);
              for (int f = 0; f < dim; ++f)
                if (f != d) term *= tpmg_level_width(lvl, f, e[f]) * mref[li[f] * nc + lj[f]];
              stiffness += term;
              mass *= m;
            }
            A[row[i] * n_I + row[j]] += a * stiffness + lvl->reaction * mass;
          }
        }
      }
}

/* t = A^{-1} t with the factor L of tpmg_basis_cholesky. */
static void cholesky_solve(tpmg_index n, const double *L, double *t) {
  for (tpmg_index i = 0; i < n; ++i) {
    double s = t[i];
    for (tpmg_index p = 0; p < i; ++p) s -= L[i * n + p] * t[p];
    t[i] = s / L[i * n + i];
  }
  for (tpmg_index i = n - 1; i >= 0; --i) {
    double s = t[i];
    for (tpmg_index p = i + 1; p < n; ++p) s -= L[p * n + i] * t[p];
    t[i] = s / L[i * n + i];
  }
}

/* The dense inverse into backend memory: by fast diagonalization (c's
 * factors), or, where the level has a variable coefficient (coefficient !=
 * NULL: its cells' values), by a Cholesky factorization of the assembled A_I. */
static tpmg_status build_inverse(tpmg_context *ctx, tpmg_coarse *c, const double *coefficient) {
  const tpmg_index n_interior = c->n_interior;
  const int n_threads = tpmg_backend_threads(ctx);
  const size_t entries = (size_t)n_interior * (size_t)n_interior;
  const size_t inverse_bytes = sizeof(double) * entries;
  const size_t work_bytes = sizeof(double) * 2 * (size_t)n_interior * (size_t)n_threads;
  const size_t matrix_bytes = coefficient ? inverse_bytes : 0;
  c->bytes = entries * tpmg_precision_size(c->precision);
  const size_t converted_bytes = c->precision == TPMG_FLOAT ? c->bytes : 0;
  double *inverse = NULL, *work = NULL, *matrix = NULL;
  void *converted = NULL;
  tpmg_status status =
      tpmg_host_malloc(ctx, inverse_bytes, "coarse solver: dense inverse", (void **)&inverse);
  if (status == TPMG_SUCCESS)
    status = tpmg_host_malloc(ctx, work_bytes, "coarse solver: work", (void **)&work);
  if (status == TPMG_SUCCESS)
    status = tpmg_host_malloc(ctx, converted_bytes, "coarse solver: inverse in float", &converted);
  if (status == TPMG_SUCCESS)
    status = tpmg_host_malloc(ctx, matrix_bytes, "coarse solver: assembled matrix",
                              (void **)&matrix);
  if (status != TPMG_SUCCESS)
    goto done;
  if (coefficient) {
    assemble(c, coefficient, matrix);
    if (tpmg_basis_cholesky((int)n_interior, matrix)) {
      status = tpmg_error_set(ctx, TPMG_ERROR_NUMERICAL, __FILE__, __LINE__,
                              "coarse solver on level %d: the assembled matrix is not positive "
                              "definite in double",
                              c->level->level);
      goto done;
    }
  }
#pragma omp parallel num_threads(n_threads)
  {
    double *t = work + 2 * (size_t)n_interior * (size_t)omp_get_thread_num(), *w = t + n_interior;
#pragma omp for schedule(dynamic, 16)
    for (tpmg_index j = 0; j < n_interior; ++j) {
      memset(t, 0, sizeof(double) * (size_t)n_interior);
      t[j] = 1.0;
      if (coefficient)
        cholesky_solve(n_interior, matrix, t);
      else
        interior_solve(c, 1, t, w);
      memcpy(inverse + (size_t)j * (size_t)n_interior, t, sizeof(double) * (size_t)n_interior);
    }
  }
  const void *src = inverse;
  if (c->precision == TPMG_FLOAT) {
    for (size_t i = 0; i < entries; ++i)
      ((float *)converted)[i] = (float)inverse[i];
    src = converted;
  }
  status = tpmg_malloc(ctx, c->bytes, "coarse inverse", &c->inverse);
  if (status == TPMG_SUCCESS)
    status = ctx->ops->upload(ctx, c->inverse, src, c->bytes);
  else
    c->bytes = 0;
done:
  tpmg_host_free(ctx, inverse_bytes, inverse);
  tpmg_host_free(ctx, work_bytes, work);
  tpmg_host_free(ctx, converted_bytes, converted);
  tpmg_host_free(ctx, matrix_bytes, matrix);
  return status;
}

/* The host solve's buffers: a level vector and two interior tensors. */
static tpmg_status build_host_solver(tpmg_context *ctx, tpmg_coarse *c) {
  c->host_bytes = (size_t)c->level->n_dofs * tpmg_precision_size(c->precision);
  c->tensor_bytes = sizeof(double) * (size_t)c->n_interior;
  TPMG_CALL(tpmg_host_malloc(ctx, c->host_bytes, "coarse solver: host level vector", &c->host));
  TPMG_CALL(tpmg_host_malloc(ctx, c->tensor_bytes, "coarse solver: host interior", (void **)&c->t));
  return tpmg_host_malloc(ctx, c->tensor_bytes, "coarse solver: host interior", (void **)&c->w);
}

/* S_d, S_d^T for the directions d != D and the band factors along D. */
static tpmg_status factor(tpmg_context *ctx, tpmg_coarse *c) {
  const tpmg_level *lvl = c->level;
  double *lambda[3] = {NULL, NULL, NULL};
  size_t lambda_bytes[3] = {0, 0, 0};
  tpmg_status status = TPMG_SUCCESS;
  for (int d = 0; d < lvl->dim && status == TPMG_SUCCESS; ++d) {
    if (d == c->D)
      continue;
    const size_t nn = (size_t)c->n[d] * (size_t)c->n[d];
    c->S_bytes[d] = sizeof(double) * nn;
    lambda_bytes[d] = sizeof(double) * (size_t)c->n[d];
    status =
        tpmg_host_malloc(ctx, c->S_bytes[d], "coarse solver: 1D eigenvectors", (void **)&c->S[d]);
    if (status == TPMG_SUCCESS)
      status = tpmg_host_malloc(ctx, c->S_bytes[d], "coarse solver: 1D eigenvectors",
                                (void **)&c->ST[d]);
    if (status == TPMG_SUCCESS)
      status = tpmg_host_malloc(ctx, lambda_bytes[d], "coarse solver: 1D eigenvalues",
                                (void **)&lambda[d]);
    if (status == TPMG_SUCCESS)
      status = eigenpairs(ctx, lvl, d, c->n[d], c->S[d], lambda[d]);
    if (status == TPMG_SUCCESS)
      for (int i = 0; i < c->n[d]; ++i)
        for (int j = 0; j < c->n[d]; ++j)
          c->ST[d][i * c->n[d] + j] = c->S[d][j * c->n[d] + i];
  }
  if (status == TPMG_SUCCESS)
    status = band_factors(ctx, c, lambda);
  for (int d = 0; d < 3; ++d)
    tpmg_host_free(ctx, lambda_bytes[d], lambda[d]);
  return status;
}

/* Free the factored form. */
static void free_factors(tpmg_context *ctx, tpmg_coarse *c) {
  for (int d = 0; d < 3; ++d) {
    tpmg_host_free(ctx, c->S_bytes[d], c->S[d]);
    tpmg_host_free(ctx, c->S_bytes[d], c->ST[d]);
    c->S[d] = c->ST[d] = NULL;
    c->S_bytes[d] = 0;
  }
  tpmg_host_free(ctx, c->factor_bytes, c->factor);
  c->factor = NULL;
  c->factor_bytes = 0;
}

tpmg_status tpmg_coarse_create(tpmg_grid *grid, tpmg_precision precision, tpmg_coarse **coarse) {
  if (!grid)
    return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, coarse, TPMG_ERROR_ARGUMENT, "coarse is NULL");
  TPMG_CHECK(ctx, precision == TPMG_DOUBLE || precision == TPMG_FLOAT, TPMG_ERROR_ARGUMENT,
             "unknown precision %d", (int)precision);
  int index = 0;
  TPMG_CALL(tpmg_grid_check_level(grid, 0, 0, &index));
  return tpmg_coarse_create_index(grid, index, precision, coarse);
}

/* grid, coarse and precision checked by the caller */
tpmg_status tpmg_coarse_create_index(tpmg_grid *grid, int index, tpmg_precision precision,
                                     tpmg_coarse **coarse) {
  tpmg_context *ctx = grid->ctx;
  const tpmg_level *lvl = &grid->global[index]; /* the whole level, on every rank */
  /* the 1D eigenproblem indexes its n_d x n_d matrices by int */
  for (int d = 0; d < lvl->dim; ++d)
    TPMG_CHECK(ctx, lvl->n[d] - 2 <= 46340, TPMG_ERROR_UNSUPPORTED,
               "coarse solver on level %d: %lld interior points in direction %d, at most 46340",
               lvl->level, (long long)(lvl->n[d] - 2), d);
  tpmg_coarse *c = calloc(1, sizeof(*c));
  TPMG_CHECK(ctx, c, TPMG_ERROR_MEMORY, "allocating the coarse solver failed");
  c->grid = grid;
  tpmg_grid_reference(grid);
  c->index = index;
  c->level = lvl;
  c->precision = precision;
  c->n_interior = 1;
  for (int d = 0; d < 3; ++d) {
    c->n[d] = d < lvl->dim ? (int)lvl->n[d] - 2 : 1;
    c->n_interior *= c->n[d];
  }
  /* D: the direction with the most points (the first of equals) */
  c->D = 0;
  for (int d = 1; d < lvl->dim; ++d)
    if (c->n[d] > c->n[c->D])
      c->D = d;
  c->inner = 1;
  c->outer = 1;
  for (int d = 0; d < 3; ++d)
    if (d < c->D)
      c->inner *= c->n[d];
    else if (d > c->D)
      c->outer *= c->n[d];
  tpmg_status status = TPMG_SUCCESS;
  if (grid->part[index].distributed) {
    c->whole_bytes = (size_t)lvl->n_dofs * tpmg_precision_size(precision);
    status = tpmg_malloc(ctx, c->whole_bytes, "coarse level, whole", &c->whole_b);
    if (status == TPMG_SUCCESS)
      status = tpmg_malloc(ctx, c->whole_bytes, "coarse level, whole", &c->whole_x);
  }
  /* a variable coefficient: the whole level's cell values (tpmg-coefficient.c) */
  const double *coefficient = grid->levels[index].coefficient[0] ? grid->whole_coefficient[index]
                                                                 : NULL;
  if (status == TPMG_SUCCESS && coefficient && c->n_interior > TPMG_MAX_COARSE_DOFS)
    status = tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                            "coarse solver on level %d: %lld interior DoFs; with a variable "
                            "coefficient the coarse level is solved by a dense Cholesky "
                            "factorization of at most %d: use a coarse mesh of fewer cells",
                            lvl->level, (long long)c->n_interior, TPMG_MAX_COARSE_DOFS);
  if (status == TPMG_SUCCESS && c->n_interior > 0 && coefficient) {
    status = build_inverse(ctx, c, coefficient);
  } else if (status == TPMG_SUCCESS && c->n_interior > 0) {
    status = factor(ctx, c);
    if (status == TPMG_SUCCESS && c->n_interior <= TPMG_MAX_COARSE_DOFS) {
      status = build_inverse(ctx, c, NULL);
      free_factors(ctx, c);
    } else if (status == TPMG_SUCCESS) {
      status = build_host_solver(ctx, c);
    }
  }
  status = tpmg_comm_agree(ctx, status);
  if (status != TPMG_SUCCESS) {
    tpmg_coarse_destroy(&c);
    return status;
  }
  *coarse = c;
  return TPMG_SUCCESS;
}

/* x_I = A_I^{-1} b_I on the host (interior_solve), x_B = 0. */
static tpmg_status host_solve(tpmg_coarse *c, const void *b, void *x) {
  tpmg_context *ctx = c->grid->ctx;
  const tpmg_level *lvl = c->level;
  const int *n = c->n, n_threads = tpmg_backend_threads(ctx);
  const tpmg_index n0 = lvl->n[0], n1 = lvl->n[1], z0 = lvl->dim == 3 ? 1 : 0;
  const size_t bytes = (size_t)lvl->n_dofs * tpmg_precision_size(c->precision);
  const int single = c->precision == TPMG_FLOAT;
  float *hf = c->host;
  double *hd = c->host;
  TPMG_CALL(ctx->ops->download(ctx, c->host, b, bytes));
  for (tpmg_index i2 = 0; i2 < n[2]; ++i2)
    for (tpmg_index i1 = 0; i1 < n[1]; ++i1)
      for (tpmg_index i0 = 0; i0 < n[0]; ++i0) {
        tpmg_index g = 1 + i0 + n0 * (1 + i1 + n1 * (z0 + i2));
        c->t[i0 + n[0] * (i1 + n[1] * i2)] = single ? (double)hf[g] : hd[g];
      }
  interior_solve(c, n_threads, c->t, c->w);
  memset(c->host, 0, bytes);
  for (tpmg_index i2 = 0; i2 < n[2]; ++i2)
    for (tpmg_index i1 = 0; i1 < n[1]; ++i1)
      for (tpmg_index i0 = 0; i0 < n[0]; ++i0) {
        tpmg_index g = 1 + i0 + n0 * (1 + i1 + n1 * (z0 + i2));
        double value = c->t[i0 + n[0] * (i1 + n[1] * i2)];
        if (single)
          hf[g] = (float)value;
        else
          hd[g] = value;
      }
  return ctx->ops->upload(ctx, x, c->host, bytes);
}

tpmg_status tpmg_coarse_apply(tpmg_coarse *coarse, const void *b, void *x) {
  if (!coarse)
    return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = coarse->grid->ctx;
  tpmg_index n = coarse->grid->levels[coarse->index].n_dofs;
  TPMG_CALL(
      tpmg_vector_check_pair(ctx, "tpmg_coarse_apply", coarse->precision, "b", b, n, "x", x, n));
  return tpmg_coarse_solve(coarse, b, x);
}

/* The whole level's solve: the backend's dense inverse, or on the host. */
static tpmg_status solve_whole(tpmg_coarse *c, const void *b, void *x) {
  tpmg_context *ctx = c->grid->ctx;
  if (c->n_interior > TPMG_MAX_COARSE_DOFS)
    return host_solve(c, b, x);
  return ctx->ops->coarse_solve(ctx, c->level, c->precision, c->inverse, b, x);
}

/* A level split among ranks is gathered whole onto every rank, solved there
 * (the same on every rank) and cut back to this rank's box. */
tpmg_status tpmg_coarse_solve(tpmg_coarse *coarse, const void *b, void *x) {
  const tpmg_grid *grid = coarse->grid;
  int l = coarse->index;
  if (!grid->part[l].distributed)
    return solve_whole(coarse, b, x);
  TPMG_CALL(tpmg_partition_gather(grid, l, coarse->precision, b, coarse->whole_b));
  TPMG_CALL(solve_whole(coarse, coarse->whole_b, coarse->whole_x));
  return tpmg_partition_extract(grid, l, coarse->precision, coarse->whole_x, x);
}

tpmg_status tpmg_coarse_destroy(tpmg_coarse **coarse) {
  if (!coarse)
    return TPMG_ERROR_ARGUMENT;
  tpmg_coarse *c = *coarse;
  if (!c)
    return TPMG_SUCCESS;
  tpmg_grid *grid = c->grid;
  tpmg_context *ctx = grid->ctx;
  tpmg_free(ctx, c->bytes, c->inverse);
  tpmg_free(ctx, c->whole_bytes, c->whole_b);
  tpmg_free(ctx, c->whole_bytes, c->whole_x);
  free_factors(ctx, c);
  tpmg_host_free(ctx, c->host_bytes, c->host);
  tpmg_host_free(ctx, c->tensor_bytes, c->t);
  tpmg_host_free(ctx, c->tensor_bytes, c->w);
  free(c);
  tpmg_grid_release(grid);
  *coarse = NULL;
  return TPMG_SUCCESS;
}
