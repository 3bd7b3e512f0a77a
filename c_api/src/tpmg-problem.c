/* Test problems on the finest level, computed on the host in double and moved
 * to the context's memory space: the right-hand side of A x = b with the
 * Dirichlet data lifted, and the L2 error against the exact solution. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

/* sin(pi x) with exact zeros at integers: reduce x to r in [-1/2, 1/2] first. */
static double sin_pi(double x) {
  double n = nearbyint(x), r = x - n;
  double s = sin(TPMG_PI * r);
  return fmod(n, 2.0) == 0.0 ? s : -s;
}

typedef struct {
  const tpmg_level *lvl; /* the whole finest level */
  const tpmg_part *part; /* what this rank stores of it */
  int k;
  double lower[3];     /* box corner */
  double nodes[TPMG_MAX_DEGREE_2D + 1];
} problem_geometry;

static void geometry(const tpmg_grid *grid, problem_geometry *g) {
  g->lvl = &grid->global[grid->n_levels - 1];
  g->part = &grid->part[grid->n_levels - 1];
  g->k = g->lvl->degree;
  for (int d = 0; d < 3; ++d) g->lower[d] = grid->options.box[2 * d];
  tpmg_basis_gauss_lobatto(g->k + 1, g->nodes);
}

/* coordinate of 1D support point i in direction d */
static double coordinate(const problem_geometry *g, int d, tpmg_index i) {
  tpmg_index cell = i / g->k;
  int a = (int)(i - cell * g->k);
  if (cell == g->lvl->cells[d]) { /* the last point */
    cell -= 1;
    a = g->k;
  }
  return tpmg_level_coordinate(g->lvl, d, g->lower[d], cell, g->nodes[a]);
}

/* The entry of DoF i of the whole level in this rank's vector. */
static tpmg_index local_index(const problem_geometry *g, const tpmg_index *i) {
  const tpmg_level *lvl = g->lvl;
  tpmg_index global = i[0] + lvl->n[0] * (i[1] + lvl->n[1] * i[2]);
  return global - g->part->first * g->part->plane;
}

static int is_boundary(const tpmg_level *lvl, const tpmg_index *i) {
  for (int d = 0; d < lvl->dim; ++d)
    if (i[d] == 0 || i[d] == lvl->n[d] - 1) return 1;
  return 0;
}

static double exact(int dim, const double *x) {
  double u = 1.0;
  for (int d = 0; d < dim; ++d) u *= sin_pi(x[d]);
  return u;
}

/* The load vector of a separable f = c prod_d f_d(x_d) is c (F_2 ⊗ F_1 ⊗ F_0)
 * with F_d[i] = int f_d phi_i, which k+2 Gauss points per cell give exactly as
 * the tensor-product rule would. */
static tpmg_status load_1d(const problem_geometry *g, int d, tpmg_rhs rhs, double *F) {
  int k = g->k, nq = k + 2;
  double qp[TPMG_MAX_DEGREE_2D + 2], qw[TPMG_MAX_DEGREE_2D + 2];
  tpmg_basis_gauss(nq, qp, qw);
  const tpmg_level *lvl = g->lvl;
  memset(F, 0, sizeof(double) * (size_t)lvl->n[d]);
  for (tpmg_index cell = 0; cell < lvl->cells[d]; ++cell)
    for (int q = 0; q < nq; ++q) {
      double x = tpmg_level_coordinate(lvl, d, g->lower[d], cell, qp[q]);
      double f = rhs == TPMG_RHS_ONE ? 1.0 : sin_pi(x);
      for (int a = 0; a <= k; ++a)
        F[cell * k + a] += tpmg_level_width(lvl, d, cell) * qw[q] * f *
                           tpmg_basis_lagrange(k + 1, g->nodes, a, qp[q]);
    }
  return TPMG_SUCCESS;
}

/* out (+)= (A_2 ⊗ A_1 ⊗ A_0) in on one cell, x fastest, A_d rows x cols
 * row-major (2D without A_2): in has cols^dim entries, out rows^dim. */
static void cell_kron(int dim, int rows, int cols, const double *const A[3], const double *in,
                      double *out, int add) {
  double t[1331], w[1331];
  int m[3] = {cols, cols, dim == 3 ? cols : 1};
  memcpy(t, in, sizeof(double) * (size_t)(m[0] * m[1] * m[2]));
  for (int d = 0; d < dim; ++d) {
    const int inner = d == 0 ? 1 : d == 1 ? m[0] : m[0] * m[1];
    const int outer = (d == 0 ? m[1] * m[2] : d == 1 ? m[2] : 1);
    for (int o = 0; o < outer; ++o)
      for (int i = 0; i < rows; ++i)
        for (int s = 0; s < inner; ++s) {
          double sum = 0.0;
          for (int j = 0; j < cols; ++j) sum += A[d][i * cols + j] * t[(o * cols + j) * inner + s];
          w[(o * rows + i) * inner + s] = sum;
        }
    m[d] = rows;
    memcpy(t, w, sizeof(double) * (size_t)(m[0] * m[1] * m[2]));
  }
  const int total = m[0] * m[1] * m[2];
  for (int i = 0; i < total; ++i) out[i] = (add ? out[i] : 0.0) + t[i];
}

/* The operator of one cell of the finest level, in double on the host, as
 * the backends apply it: a_K times the Kronecker stiffness (a_K = 1 without
 * a coefficient) or the stiffness with a at the quadrature points, plus c
 * times the mass. */
typedef struct {
  int dim, k;
  double M[3][121], K[3][121]; /* cell mass and stiffness (no reaction) */
  double reaction;
  /* at QGauss(k+1): the basis' values N and derivatives D (q x i), their
   * transposes, the weights times |J| / h_d^2 per direction */
  double N[121], D[121], NT[121], DT[121], weights[11], volume, inverse_h2[3];
  const double *coefficient; /* per cell of the box, or NULL */
  const double *quadrature;  /* per point of the box's cells, or NULL */
  const tpmg_level *lvl;     /* the whole level: M, K, volume, inverse_h2 per cell where graded */
  double mref[121], kref[121];
  int fold;
} cell_operator;

static void cell_operator_init(cell_operator *op, const tpmg_level *lvl, const double *coefficient,
                               const double *quadrature) {
  const int k = lvl->degree, n = k + 1;
  double mref[121], kref[121], nodes[11], points[11];
  tpmg_basis_cell_matrices(k, mref, kref);
  op->dim = lvl->dim;
  op->k = k;
  op->reaction = lvl->reaction;
  op->coefficient = coefficient;
  op->quadrature = quadrature;
  op->volume = 1.0;
  /* a = 1: the reaction folded into the last direction's stiffness, as the
   * level data hold it */
  const int fold = !coefficient && !quadrature;
  if (fold) op->reaction = 0.0;
  op->lvl = lvl;
  op->fold = fold;
  memcpy(op->mref, mref, sizeof(mref));
  memcpy(op->kref, kref, sizeof(kref));
  for (int d = 0; d < lvl->dim; ++d) {
    for (int i = 0; i < n * n; ++i) {
      op->M[d][i] = lvl->h[d] * mref[i];
      op->K[d][i] = kref[i] / lvl->h[d] + (fold && d == lvl->dim - 1 ? lvl->reaction * op->M[d][i] : 0.0);
    }
    op->volume *= lvl->h[d];
    op->inverse_h2[d] = 1.0 / (lvl->h[d] * lvl->h[d]);
  }
  tpmg_basis_gauss_lobatto(n, nodes);
  tpmg_basis_gauss(n, points, op->weights);
  for (int q = 0; q < n; ++q)
    for (int i = 0; i < n; ++i) {
      op->N[q * n + i] = op->NT[i * n + q] = tpmg_basis_lagrange(n, nodes, i, points[q]);
      op->D[q * n + i] = op->DT[i * n + q] = tpmg_basis_lagrange_derivative(n, nodes, i, points[q]);
    }
}

/* The cell matrices of cell c (whole level's indices) of a graded level. */
static void cell_operator_graded(const cell_operator *in, const tpmg_index c[3],
                                 cell_operator *op) {
  const tpmg_level *lvl = in->lvl;
  const int n = in->k + 1;
  op->volume = 1.0;
  for (int d = 0; d < in->dim; ++d) {
    const double h = tpmg_level_width(lvl, d, c[d]);
    for (int i = 0; i < n * n; ++i) {
      op->M[d][i] = h * in->mref[i];
      op->K[d][i] = in->kref[i] / h +
                    (in->fold && d == in->dim - 1 ? lvl->reaction * op->M[d][i] : 0.0);
    }
    op->volume *= h;
    op->inverse_h2[d] = 1.0 / (h * h);
  }
}

/* out = A^K in for the cell of box index `cell`, c its whole level's indices. */
static void cell_operator_apply(const cell_operator *base, tpmg_index cell, const tpmg_index c[3],
                                const double *in, double *out) {
  cell_operator graded;
  const cell_operator *op = base;
  if (base->lvl->widths[0]) {
    graded = *base;
    cell_operator_graded(base, c, &graded);
    op = &graded;
  }
  const int dim = op->dim, n = op->k + 1, total = dim == 3 ? n * n * n : n * n;
  const double *M[3] = {op->M[0], op->M[1], op->M[2]};
  if (!op->quadrature) {
    const double a = op->coefficient ? op->coefficient[cell] : 1.0;
    memset(out, 0, sizeof(double) * (size_t)total);
    double t[1331];
    for (int term = 0; term < dim; ++term) {
      const double *A[3] = {M[0], M[1], M[2]};
      A[term] = op->K[term];
      cell_kron(dim, n, n, A, in, t, 0);
      for (int i = 0; i < total; ++i) out[i] += a * t[i];
    }
  } else {
    const double *aq = op->quadrature + cell * total;
    memset(out, 0, sizeof(double) * (size_t)total);
    for (int d = 0; d < dim; ++d) {
      double g[1331];
      const double *B[3] = {op->N, op->N, op->N}, *BT[3] = {op->NT, op->NT, op->NT};
      B[d] = op->D;
      BT[d] = op->DT;
      cell_kron(dim, n, n, B, in, g, 0);
      for (int q = 0; q < total; ++q) {
        double w = op->volume * op->inverse_h2[d] * aq[q];
        w *= op->weights[q % n] * op->weights[q / n % n] * (dim == 3 ? op->weights[q / (n * n)] : 1.0);
        g[q] *= w;
      }
      cell_kron(dim, n, n, BT, g, out, 1);
    }
  }
  if (op->reaction != 0.0) {
    double t[1331];
    cell_kron(dim, n, n, M, in, t, 0);
    for (int i = 0; i < total; ++i) out[i] += op->reaction * t[i];
  }
}

/* b_I -= (A g~)_I for the boundary data g~ (g at the Dirichlet DoFs, zero at
 * interior DoFs), the cells of op: only cells touching the boundary
 * contribute. */
static void lift(const problem_geometry *g, const cell_operator *op, tpmg_problem_function gd,
                 void *data, double *b) {
  const tpmg_level *lvl = g->lvl;
  int dim = lvl->dim, k = g->k, n = k + 1;
  int nz = dim == 3 ? n : 1;
  /* the cells of this rank's planes */
  tpmg_index range[3][2] = {{0, lvl->cells[0]}, {0, lvl->cells[1]}, {0, lvl->cells[2]}};
  range[dim - 1][0] = g->part->first / k;
  range[dim - 1][1] = (g->part->first + g->part->count - 1) / k;
  for (tpmg_index c2 = range[2][0]; c2 < range[2][1]; ++c2)
    for (tpmg_index c1 = range[1][0]; c1 < range[1][1]; ++c1)
      for (tpmg_index c0 = range[0][0]; c0 < range[0][1]; ++c0) {
        tpmg_index c[3] = {c0, c1, c2};
        int touches = 0;
        for (int d = 0; d < dim; ++d) touches |= c[d] == 0 || c[d] == lvl->cells[d] - 1;
        if (!touches) continue;
        double in[1331], out[1331];
        tpmg_index index[1331];
        int any = 0;
        for (int a2 = 0; a2 < nz; ++a2)
          for (int a1 = 0; a1 < n; ++a1)
            for (int a0 = 0; a0 < n; ++a0) {
              int local = a0 + n * (a1 + n * a2);
              tpmg_index i[3] = {c0 * k + a0, c1 * k + a1, dim == 3 ? c2 * k + a2 : 0};
              index[local] = local_index(g, i);
              in[local] = 0.0;
              if (is_boundary(lvl, i)) {
                double x[3] = {coordinate(g, 0, i[0]), coordinate(g, 1, i[1]),
                               dim == 3 ? coordinate(g, 2, i[2]) : 0.0};
                in[local] = gd(x, data);
                any |= in[local] != 0.0;
              }
            }
        if (!any) continue;
        /* the cell's index in this rank's box */
        const tpmg_index whole[3] = {c[0], c[1], c[2]};
        c[dim - 1] -= range[dim - 1][0];
        cell_operator_apply(op, c[0] + lvl->cells[0] * (c[1] + lvl->cells[1] * c[2]), whole, in,
                            out);
        for (int a2 = 0; a2 < nz; ++a2)
          for (int a1 = 0; a1 < n; ++a1)
            for (int a0 = 0; a0 < n; ++a0) {
              int local = a0 + n * (a1 + n * a2);
              tpmg_index i[3] = {c0 * k + a0, c1 * k + a1, dim == 3 ? c2 * k + a2 : 0};
              if (!is_boundary(lvl, i)) b[index[local]] -= out[local];
            }
      }
}

/* the exact solution as a tpmg_problem_function; data: the dimension */
static double exact_function(const double *x, void *data) {
  return exact(*(const int *)data, x);
}

/* Move a host vector in double into a context vector of the given precision
 * (nothing to do where host is v). */
static tpmg_status move_out(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                            const void *host, void *v) {
  if (host == v) return TPMG_SUCCESS;
  if (precision == TPMG_DOUBLE) return ctx->ops->upload(ctx, v, host, (size_t)n * sizeof(double));
  const size_t bytes = sizeof(float) * (size_t)n;
  float *tmp = NULL;
  TPMG_CALL(tpmg_host_malloc(ctx, bytes, "tpmg_problem_rhs: host copy in float", (void **)&tmp));
  for (tpmg_index i = 0; i < n; ++i) tmp[i] = (float)((const double *)host)[i];
  tpmg_status status = ctx->ops->upload(ctx, v, tmp, bytes);
  tpmg_host_free(ctx, bytes, tmp);
  return status;
}

static tpmg_status check_args(tpmg_grid *grid, tpmg_rhs rhs, tpmg_precision precision,
                              const void *v) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(grid->ctx, rhs == TPMG_RHS_ONE || rhs == TPMG_RHS_SINE || rhs == TPMG_RHS_ONES,
             TPMG_ERROR_ARGUMENT, "unknown right-hand side %d", (int)rhs);
  TPMG_CHECK(grid->ctx, precision == TPMG_DOUBLE || precision == TPMG_FLOAT, TPMG_ERROR_ARGUMENT,
             "unknown precision %d", (int)precision);
  TPMG_CHECK(grid->ctx, v, TPMG_ERROR_ARGUMENT, "vector is NULL");
  return TPMG_SUCCESS;
}

tpmg_status tpmg_problem_rhs(tpmg_grid *grid, tpmg_rhs rhs, tpmg_precision precision, void *b) {
  TPMG_CALL(check_args(grid, rhs, precision, b));
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, rhs != TPMG_RHS_SINE || !grid->levels[grid->n_levels - 1].coefficient[0],
             TPMG_ERROR_ARGUMENT,
             "TPMG_RHS_SINE's f = (dim π² + c) u is that of a = 1; with a variable coefficient "
             "f depends on a: tpmg_problem_rhs_function computes b from f and g");
  problem_geometry g;
  geometry(grid, &g);
  const tpmg_level *lvl = g.lvl;
  tpmg_index n = g.part->count * g.part->plane;
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_problem_rhs: b", b, precision, n));
  /* computed in double on the host: in b itself where b is that, else in a
   * host copy */
  const int in_place = ctx->ops->memory == TPMG_MEMORY_HOST && precision == TPMG_DOUBLE;
  const size_t host_bytes = in_place ? 0 : sizeof(double) * (size_t)n;
  double *host = in_place ? b : NULL;
  if (!in_place)
    TPMG_CALL(
        tpmg_host_malloc(ctx, host_bytes, "tpmg_problem_rhs: host copy of b", (void **)&host));
  double *F[3] = {NULL, NULL, NULL};
  tpmg_status status = TPMG_SUCCESS;
  int ok = 1;
  for (int d = 0; d < 3; ++d) {
    F[d] = malloc(sizeof(double) * (size_t)lvl->n[d]);
    ok = ok && F[d];
  }
  if (!ok) {
    status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                            "tpmg_problem_rhs: out of host memory for the 1D load vectors of "
                            "%lld + %lld + %lld entries",
                            (long long)lvl->n[0], (long long)lvl->n[1], (long long)lvl->n[2]);
    goto done;
  }
  for (int d = 0; d < 3; ++d)
    if (d < lvl->dim && rhs != TPMG_RHS_ONES)
      load_1d(&g, d, rhs, F[d]);
    else if (d < lvl->dim)
      for (tpmg_index i = 0; i < lvl->n[d]; ++i) F[d][i] = 1.0;
    else
      F[d][0] = 1.0;
  /* -Δu + c u = (dim π² + c) u for u = Π sin(π x_d) */
  double scale = rhs == TPMG_RHS_SINE ? lvl->dim * TPMG_PI * TPMG_PI + lvl->reaction : 1.0;
  tpmg_index planes[3][2] = {{0, lvl->n[0]}, {0, lvl->n[1]}, {0, lvl->n[2]}};
  planes[lvl->dim - 1][0] = g.part->first;
  planes[lvl->dim - 1][1] = g.part->first + g.part->count;
#pragma omp parallel for collapse(2) num_threads(ctx->n_threads)
  for (tpmg_index i2 = planes[2][0]; i2 < planes[2][1]; ++i2)
    for (tpmg_index i1 = planes[1][0]; i1 < planes[1][1]; ++i1)
      for (tpmg_index i0 = 0; i0 < lvl->n[0]; ++i0) {
        tpmg_index i[3] = {i0, i1, i2};
        double value = scale * F[0][i0] * F[1][i1] * F[2][i2];
        if (is_boundary(lvl, i)) {
          double x[3] = {coordinate(&g, 0, i0), coordinate(&g, 1, i1),
                         lvl->dim == 3 ? coordinate(&g, 2, i2) : 0.0};
          value = rhs == TPMG_RHS_SINE ? exact(lvl->dim, x) : 0.0;
        }
        host[local_index(&g, i)] = value;
      }
  if (rhs == TPMG_RHS_SINE) {
    cell_operator op;
    cell_operator_init(&op, lvl, NULL, NULL);
    int dim = lvl->dim;
    lift(&g, &op, exact_function, &dim, host);
  }
  status = move_out(ctx, precision, n, host, b);
done:
  if (!in_place) tpmg_host_free(ctx, host_bytes, host);
  for (int d = 0; d < 3; ++d) free(F[d]);
  return status;
}

/* b_I = int f φ_I by Gauss quadrature of k+2 points per direction, cell by
 * cell (the layers along the last direction in parallel, even layers first,
 * then odd ones, so that no two threads add to one entry). */
static void load_function(const problem_geometry *g, tpmg_problem_function f, void *data,
                          int n_threads, double *b) {
  const tpmg_level *lvl = g->lvl;
  const int dim = lvl->dim, k = g->k, n = k + 1, nq = k + 2;
  double qp[TPMG_MAX_DEGREE_2D + 2], qw[TPMG_MAX_DEGREE_2D + 2];
  double V[(TPMG_MAX_DEGREE_2D + 2) * (TPMG_MAX_DEGREE_2D + 1)];
  tpmg_basis_gauss(nq, qp, qw);
  for (int q = 0; q < nq; ++q)
    for (int a = 0; a < n; ++a) V[q * n + a] = tpmg_basis_lagrange(n, g->nodes, a, qp[q]);
  const int nz = dim == 3 ? n : 1, qz = dim == 3 ? nq : 1;
  const tpmg_index first = g->part->first / k, end = (g->part->first + g->part->count - 1) / k;
  const tpmg_index c1_end = dim == 3 ? lvl->cells[1] : 1;
  /* one thread per layer: cells of one layer share DoFs, layers of one
   * parity do not */
  for (int parity = 0; parity < 2; ++parity)
#pragma omp parallel for schedule(static) num_threads(n_threads)
    for (tpmg_index cs = first + parity; cs < end; cs += 2)
      for (tpmg_index c1 = 0; c1 < c1_end; ++c1)
        for (tpmg_index c0 = 0; c0 < lvl->cells[0]; ++c0) {
          const tpmg_index c[3] = {c0, dim == 3 ? c1 : cs, dim == 3 ? cs : 0};
          double volume = 1.0;
          for (int d = 0; d < dim; ++d) volume *= tpmg_level_width(lvl, d, c[d]);
          double fq[12 * 12 * 12], t[12 * 12 * 12];
          for (int q2 = 0; q2 < qz; ++q2)
            for (int q1 = 0; q1 < nq; ++q1)
              for (int q0 = 0; q0 < nq; ++q0) {
                const int qi[3] = {q0, q1, q2};
                double x[3] = {0.0, 0.0, 0.0}, w = volume;
                for (int d = 0; d < dim; ++d) {
                  x[d] = tpmg_level_coordinate(lvl, d, g->lower[d], c[d], qp[qi[d]]);
                  w *= qw[qi[d]];
                }
                fq[q0 + nq * (q1 + nq * q2)] = w * f(x, data);
              }
          /* contract with the basis, one direction at a time: q -> a */
          for (int q2 = 0; q2 < qz; ++q2)
            for (int q1 = 0; q1 < nq; ++q1)
              for (int a0 = 0; a0 < n; ++a0) {
                double sum = 0.0;
                for (int q0 = 0; q0 < nq; ++q0) sum += V[q0 * n + a0] * fq[q0 + nq * (q1 + nq * q2)];
                t[a0 + n * (q1 + nq * q2)] = sum;
              }
          for (int q2 = 0; q2 < qz; ++q2)
            for (int a1 = 0; a1 < n; ++a1)
              for (int a0 = 0; a0 < n; ++a0) {
                double sum = 0.0;
                for (int q1 = 0; q1 < nq; ++q1) sum += V[q1 * n + a1] * t[a0 + n * (q1 + nq * q2)];
                fq[a0 + n * (a1 + n * q2)] = sum;
              }
          for (int a2 = 0; a2 < nz; ++a2)
            for (int a1 = 0; a1 < n; ++a1)
              for (int a0 = 0; a0 < n; ++a0) {
                double sum = fq[a0 + n * (a1 + n * a2)];
                if (dim == 3) {
                  sum = 0.0;
                  for (int q2 = 0; q2 < nq; ++q2) sum += V[q2 * n + a2] * fq[a0 + n * (a1 + n * q2)];
                }
                const tpmg_index i[3] = {c0 * k + a0, c[1] * k + a1, dim == 3 ? cs * k + a2 : 0};
                b[local_index(g, i)] += sum;
              }
        }
}

tpmg_status tpmg_problem_rhs_function(tpmg_grid *grid, tpmg_problem_function f,
                                      tpmg_problem_function g_data, void *data,
                                      tpmg_precision precision, void *b) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, f && g_data && b, TPMG_ERROR_ARGUMENT, "NULL argument (f %p, g %p, b %p)",
             (void *)(size_t)f, (void *)(size_t)g_data, b);
  TPMG_CHECK(ctx, precision == TPMG_DOUBLE || precision == TPMG_FLOAT, TPMG_ERROR_ARGUMENT,
             "unknown precision %d", (int)precision);
  problem_geometry g;
  geometry(grid, &g);
  const tpmg_level *lvl = g.lvl, *box = &grid->levels[grid->n_levels - 1];
  const tpmg_index n = g.part->count * g.part->plane;
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_problem_rhs_function: b", b, precision, n));
  /* on the host in double: b, and the box's coefficient for the lifting */
  const tpmg_index cells = box->cells[0] * box->cells[1] * box->cells[2];
  const int local = lvl->dim == 3 ? (g.k + 1) * (g.k + 1) * (g.k + 1) : (g.k + 1) * (g.k + 1);
  const size_t bytes = sizeof(double) * (size_t)n;
  const size_t a_bytes = box->coefficient[0] ? sizeof(double) * (size_t)cells : 0;
  const size_t q_bytes = box->quadrature[0] ? a_bytes * (size_t)local : 0;
  double *host = NULL, *a = NULL, *aq = NULL;
  tpmg_status status = tpmg_host_malloc(ctx, bytes + a_bytes + q_bytes,
                                        "tpmg_problem_rhs_function: host copies", (void **)&host);
  if (status != TPMG_SUCCESS) return status;
  a = a_bytes ? host + n : NULL;
  aq = q_bytes ? host + n + cells : NULL;
  if (a) status = ctx->ops->download(ctx, a, box->coefficient[0], a_bytes);
  if (aq && status == TPMG_SUCCESS) status = ctx->ops->download(ctx, aq, box->quadrature[0], q_bytes);
  if (status == TPMG_SUCCESS) {
    memset(host, 0, bytes);
    load_function(&g, f, data, ctx->n_threads, host);
    const tpmg_index first = g.part->first, count = g.part->count;
    for (tpmg_index i2 = 0; i2 < lvl->n[2]; ++i2)
      for (tpmg_index i1 = 0; i1 < lvl->n[1]; ++i1) {
        const tpmg_index s = lvl->dim == 3 ? i2 : i1;
        if (s < first || s >= first + count) continue;
        for (tpmg_index i0 = 0; i0 < lvl->n[0]; ++i0) {
          const tpmg_index i[3] = {i0, i1, i2};
          if (!is_boundary(lvl, i)) continue;
          double x[3] = {coordinate(&g, 0, i0), coordinate(&g, 1, i1),
                         lvl->dim == 3 ? coordinate(&g, 2, i2) : 0.0};
          host[local_index(&g, i)] = g_data(x, data);
        }
      }
    cell_operator op;
    cell_operator_init(&op, lvl, a, aq);
    lift(&g, &op, g_data, data, host);
    status = move_out(ctx, precision, n, host, b);
  }
  tpmg_host_free(ctx, bytes + a_bytes + q_bytes, host);
  return status;
}

tpmg_status tpmg_problem_l2_error(tpmg_grid *grid, tpmg_rhs rhs, tpmg_precision precision,
                                  const void *x, double *error) {
  TPMG_CALL(check_args(grid, rhs, precision, x));
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, error, TPMG_ERROR_ARGUMENT, "error is NULL");
  TPMG_CHECK(ctx, rhs == TPMG_RHS_SINE, TPMG_ERROR_ARGUMENT,
             "the L2 error needs an exact solution: TPMG_RHS_SINE, not %d", (int)rhs);
  problem_geometry g;
  geometry(grid, &g);
  const tpmg_level *lvl = g.lvl;
  int dim = lvl->dim, k = g.k, n = k + 1, nq = k + 2;
  tpmg_index n_dofs = g.part->count * g.part->plane;
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_problem_l2_error: x", x, precision, n_dofs));
  /* x read where it is on the host, else from a host copy */
  const int in_place = ctx->ops->memory == TPMG_MEMORY_HOST;
  const size_t bytes = in_place ? 0 : (size_t)n_dofs * tpmg_precision_size(precision);
  const void *host = x;
  void *copy = NULL;
  if (!in_place) {
    TPMG_CALL(tpmg_host_malloc(ctx, bytes, "tpmg_problem_l2_error: host copy of x", &copy));
    tpmg_status status = ctx->ops->download(ctx, copy, x, bytes);
    if (status != TPMG_SUCCESS) {
      tpmg_host_free(ctx, bytes, copy);
      return status;
    }
    host = copy;
  }
  double qp[TPMG_MAX_DEGREE_2D + 2], qw[TPMG_MAX_DEGREE_2D + 2];
  double V[(TPMG_MAX_DEGREE_2D + 2) * (TPMG_MAX_DEGREE_2D + 1)];
  tpmg_basis_gauss(nq, qp, qw);
  for (int q = 0; q < nq; ++q)
    for (int a = 0; a < n; ++a) V[q * n + a] = tpmg_basis_lagrange(n, g.nodes, a, qp[q]);
  double sum = 0.0;
  int nz = dim == 3 ? n : 1, qz = dim == 3 ? nq : 1;

  /* the cells this rank owns */
  tpmg_index cells[3][2] = {{0, lvl->cells[0]}, {0, lvl->cells[1]}, {0, lvl->cells[2]}};
  cells[dim - 1][0] = g.part->cell_first;
  cells[dim - 1][1] = g.part->cell_end;
#pragma omp parallel for collapse(2) reduction(+ : sum) num_threads(ctx->n_threads)
  for (tpmg_index c2 = cells[2][0]; c2 < cells[2][1]; ++c2)
    for (tpmg_index c1 = cells[1][0]; c1 < cells[1][1]; ++c1)
      for (tpmg_index c0 = 0; c0 < lvl->cells[0]; ++c0) {
        /* u_h at the Gauss points by sum factorization, one direction at a time */
        double u[12 * 12 * 12], t[12 * 12 * 12];
        for (int a2 = 0; a2 < nz; ++a2)
          for (int a1 = 0; a1 < n; ++a1)
            for (int a0 = 0; a0 < n; ++a0) {
              tpmg_index i[3] = {c0 * k + a0, c1 * k + a1, dim == 3 ? c2 * k + a2 : 0};
              tpmg_index index = local_index(&g, i);
              u[a0 + n * (a1 + n * a2)] = precision == TPMG_DOUBLE ? ((const double *)host)[index]
                                                                   : ((const float *)host)[index];
            }
        for (int a2 = 0; a2 < nz; ++a2) /* x: (a0,a1,a2) -> (q0,a1,a2) */
          for (int a1 = 0; a1 < n; ++a1)
            for (int q0 = 0; q0 < nq; ++q0) {
              double s = 0.0;
              for (int a0 = 0; a0 < n; ++a0) s += V[q0 * n + a0] * u[a0 + n * (a1 + n * a2)];
              t[q0 + nq * (a1 + n * a2)] = s;
            }
        for (int a2 = 0; a2 < nz; ++a2) /* y: -> (q0,q1,a2) */
          for (int q1 = 0; q1 < nq; ++q1)
            for (int q0 = 0; q0 < nq; ++q0) {
              double s = 0.0;
              for (int a1 = 0; a1 < n; ++a1) s += V[q1 * n + a1] * t[q0 + nq * (a1 + n * a2)];
              u[q0 + nq * (q1 + nq * a2)] = s;
            }
        if (dim == 3) /* z: -> (q0,q1,q2) */
          for (int q2 = 0; q2 < nq; ++q2)
            for (int q1 = 0; q1 < nq; ++q1)
              for (int q0 = 0; q0 < nq; ++q0) {
                double s = 0.0;
                for (int a2 = 0; a2 < n; ++a2) s += V[q2 * n + a2] * u[q0 + nq * (q1 + nq * a2)];
                t[q0 + nq * (q1 + nq * q2)] = s;
              }
        const double *uq = dim == 3 ? t : u;
        double cell_sum = 0.0;
        for (int q2 = 0; q2 < qz; ++q2)
          for (int q1 = 0; q1 < nq; ++q1)
            for (int q0 = 0; q0 < nq; ++q0) {
              double xq[3] = {tpmg_level_coordinate(lvl, 0, g.lower[0], c0, qp[q0]),
                              tpmg_level_coordinate(lvl, 1, g.lower[1], c1, qp[q1]),
                              tpmg_level_coordinate(lvl, 2, g.lower[2], c2, qp[q2])};
              double e = uq[q0 + nq * (q1 + nq * q2)] - exact(dim, xq);
              cell_sum += qw[q0] * qw[q1] * (dim == 3 ? qw[q2] : 1.0) * e * e;
            }
        const double volume = tpmg_level_width(lvl, 0, c0) * tpmg_level_width(lvl, 1, c1) *
                              (dim == 3 ? tpmg_level_width(lvl, 2, c2) : 1.0);
        sum += cell_sum * volume;
      }
  tpmg_host_free(ctx, bytes, copy);
  if (g.part->distributed) TPMG_CALL(tpmg_comm_sum(ctx, &sum, 1));
  *error = sqrt(sum);
  return TPMG_SUCCESS;
}
