/* The matrix-free Laplace operator of one level (paper §2.2): the backend
 * applies the cell matrices K ⊗ M (⊗ M) + ... by sum factorization. */
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

struct tpmg_operator {
  tpmg_grid *grid; /* referenced */
  int l;
  const tpmg_level *level; /* this rank's box of level l */
  tpmg_precision precision;
};

tpmg_status tpmg_operator_create(tpmg_grid *grid, int level, tpmg_precision precision,
                                 tpmg_operator **op) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, op, TPMG_ERROR_ARGUMENT, "op is NULL");
  TPMG_CHECK(ctx, precision == TPMG_DOUBLE || precision == TPMG_FLOAT, TPMG_ERROR_ARGUMENT,
             "unknown precision %d", (int)precision);
  int index = 0;
  TPMG_CALL(tpmg_grid_check_level(grid, level, 0, &index));
  if (ctx->ops->check_level)
    TPMG_CALL(ctx->ops->check_level(ctx, &grid->levels[index], precision, TPMG_USE_OPERATOR));
  tpmg_operator *o = malloc(sizeof(*o));
  tpmg_status status = o ? TPMG_SUCCESS
                         : tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                                          "allocating the operator failed");
  status = tpmg_comm_agree(ctx, status);
  if (status != TPMG_SUCCESS) {
    free(o);
    return status;
  }
  o->grid = grid;
  o->l = index;
  o->level = &grid->levels[index];
  o->precision = precision;
  tpmg_grid_reference(grid);
  *op = o;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_operator_apply(tpmg_operator *op, const void *src, void *dst) {
  if (!op) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = op->grid->ctx;
  tpmg_index n = op->level->n_dofs;
  TPMG_CALL(tpmg_vector_check_pair(ctx, "tpmg_operator_apply", op->precision, "src", src, n, "dst",
                                   dst, n));
  return tpmg_partition_laplace(op->grid, op->l, op->precision, src, dst);
}

/* The diagonal of a level with a variable coefficient, summed cell by cell
 * into host (double, the level's box): per cell a_K times the Kronecker cell
 * stiffness's diagonal, or with quadrature values sum_q w_q |J| a_q sum_d
 * (φ'_{i_d}(q_d) / h_d)^2 prod_{e≠d} φ_{i_e}(q_e)^2; plus c times the cell
 * mass's diagonal. Boundary rows are set by the caller. */
static tpmg_status coefficient_diagonal(const tpmg_operator *op, double *host) {
  tpmg_context *ctx = op->grid->ctx;
  const tpmg_level *lvl = op->level;
  const int dim = lvl->dim, k = lvl->degree, nc = k + 1;
  const int local = dim == 3 ? nc * nc * nc : nc * nc;
  const tpmg_index n_cells = lvl->cells[0] * lvl->cells[1] * lvl->cells[2];
  const size_t cell_bytes = (size_t)n_cells * sizeof(double);
  const size_t quadrature_bytes = lvl->quadrature[0] ? cell_bytes * (size_t)local : 0;
  double *a = malloc(cell_bytes), *aq = quadrature_bytes ? malloc(quadrature_bytes) : NULL;
  tpmg_status status = a && (aq || !quadrature_bytes)
                           ? TPMG_SUCCESS
                           : tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                                            "host memory for the coefficient's diagonal");
  if (status == TPMG_SUCCESS)
    status = ctx->ops->download(ctx, a, lvl->coefficient[0], cell_bytes);
  if (status == TPMG_SUCCESS && aq)
    status = ctx->ops->download(ctx, aq, lvl->quadrature[0], quadrature_bytes);
  if (status != TPMG_SUCCESS) {
    free(a);
    free(aq);
    return status;
  }
  double mref[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  double kref[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  tpmg_basis_cell_matrices(k, mref, kref);
  /* the basis' values and derivatives at the Gauss points, squared */
  double nodes[TPMG_MAX_DEGREE_2D + 1], gx[TPMG_MAX_DEGREE_2D + 1], gw[TPMG_MAX_DEGREE_2D + 1];
  double value2[TPMG_MAX_DEGREE_2D + 1][TPMG_MAX_DEGREE_2D + 1];
  double derivative2[TPMG_MAX_DEGREE_2D + 1][TPMG_MAX_DEGREE_2D + 1];
  tpmg_basis_gauss_lobatto(nc, nodes);
  tpmg_basis_gauss(nc, gx, gw);
  for (int i = 0; i < nc; ++i)
    for (int q = 0; q < nc; ++q) {
      const double v = tpmg_basis_lagrange(nc, nodes, i, gx[q]);
      const double dv = tpmg_basis_lagrange_derivative(nc, nodes, i, gx[q]);
      value2[i][q] = v * v;
      derivative2[i][q] = dv * dv;
    }
  memset(host, 0, (size_t)lvl->n_dofs * sizeof(double));
  for (tpmg_index e = 0; e < n_cells; ++e) {
    const tpmg_index c[3] = {e % lvl->cells[0], e / lvl->cells[0] % lvl->cells[1],
                             e / (lvl->cells[0] * lvl->cells[1])};
    double h[3], volume = 1.0;
    for (int d = 0; d < dim; ++d) {
      h[d] = tpmg_level_width(lvl, d, c[d]);
      volume *= h[d];
    }
    for (int i = 0; i < local; ++i) {
      const int li[3] = {i % nc, i / nc % nc, dim == 3 ? i / (nc * nc) : 0};
      double mass = lvl->reaction, stiffness = 0.0;
      for (int d = 0; d < dim; ++d) mass *= h[d] * mref[li[d] * nc + li[d]];
      if (!aq) {
        for (int d = 0; d < dim; ++d) {
          double term = kref[li[d] * nc + li[d]] / h[d];
          for (int f = 0; f < dim; ++f)
            if (f != d) term *= h[f] * mref[li[f] * nc + li[f]];
          stiffness += term;
        }
        stiffness *= a[e];
      } else {
        for (int q = 0; q < local; ++q) {
          const int lq[3] = {q % nc, q / nc % nc, dim == 3 ? q / (nc * nc) : 0};
          double w = volume * aq[e * local + q], sum = 0.0;
          for (int d = 0; d < dim; ++d) {
            w *= gw[lq[d]];
            double term = derivative2[li[d]][lq[d]] / (h[d] * h[d]);
            for (int f = 0; f < dim; ++f)
              if (f != d) term *= value2[li[f]][lq[f]];
            sum += term;
          }
          stiffness += w * sum;
        }
      }
      const tpmg_index g = c[0] * k + li[0] + lvl->n[0] * (c[1] * k + li[1] + lvl->n[1] * (c[2] * k + li[2]));
      host[g] += stiffness + mass;
    }
  }
  free(a);
  free(aq);
  return TPMG_SUCCESS;
}

/* On a Cartesian mesh the cells holding a DoF are the product of the 1D cells
 * holding its coordinates, so the sum over them of the cell diagonals
 * sum_d K_d(i_d,i_d) prod_{e != d} M_e(i_e,i_e) factors into the Kronecker sum
 * of the global 1D diagonals. */
tpmg_status tpmg_operator_diagonal(tpmg_operator *op, void *diagonal) {
  if (!op) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = op->grid->ctx;
  TPMG_CHECK(ctx, diagonal, TPMG_ERROR_ARGUMENT, "diagonal is NULL");
  const tpmg_level *lvl = op->level;
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_operator_diagonal: diagonal", diagonal, op->precision,
                              lvl->n_dofs));
  int dim = lvl->dim, k = lvl->degree;
  double mref[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  double kref[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  tpmg_basis_cell_matrices(k, mref, kref);

  size_t bytes = (size_t)lvl->n_dofs * tpmg_precision_size(op->precision);
  double *m1[3] = {NULL, NULL, NULL}, *k1[3] = {NULL, NULL, NULL};
  void *host = malloc(bytes);
  int ok = host != NULL;
  for (int d = 0; d < dim && ok; ++d) {
    m1[d] = calloc((size_t)lvl->n[d], sizeof(double));
    k1[d] = calloc((size_t)lvl->n[d], sizeof(double));
    ok = m1[d] && k1[d];
    for (tpmg_index cell = 0; cell < lvl->cells[d] && ok; ++cell)
      for (int a = 0; a <= k; ++a) {
        m1[d][cell * k + a] += tpmg_level_width(lvl, d, cell) * mref[a * (k + 1) + a];
        k1[d][cell * k + a] += kref[a * (k + 1) + a] / tpmg_level_width(lvl, d, cell);
      }
  }
  double *cells = NULL;
  if (ok && lvl->coefficient[0]) {
    cells = malloc((size_t)lvl->n_dofs * sizeof(double));
    ok = cells != NULL;
  }
  tpmg_status status = ok && cells ? coefficient_diagonal(op, cells) : TPMG_SUCCESS;
  if (status == TPMG_SUCCESS && !ok) {
    status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                            "host memory for the diagonal of %lld DoFs", (long long)lvl->n_dofs);
  } else if (status == TPMG_SUCCESS) {
    for (tpmg_index index = 0; index < lvl->n_dofs; ++index) {
      tpmg_index i[3] = {index % lvl->n[0], index / lvl->n[0] % lvl->n[1],
                         index / lvl->n[0] / lvl->n[1]};
      /* the Dirichlet planes of the whole level: the box's planes along the
       * last direction are first, first + 1, ... of the level */
      int boundary = 0;
      for (int d = 0; d < dim; ++d) {
        tpmg_index global = i[d] + (d == dim - 1 ? op->grid->part[op->l].first : 0);
        boundary |= global == 0 || global == op->grid->global[op->l].n[d] - 1;
      }
      double value = boundary ? 1.0 : 0.0;
      if (!boundary && cells) {
        value = cells[index];
      } else if (!boundary) {
        double mass = lvl->reaction; /* + c M */
        for (int d = 0; d < dim; ++d)
          mass *= m1[d][i[d]];
        value += mass;
      }
      for (int d = 0; d < dim && !boundary && !cells; ++d) {
        double term = k1[d][i[d]];
        for (int e = 0; e < dim; ++e)
          if (e != d) term *= m1[e][i[e]];
        value += term;
      }
      if (op->precision == TPMG_FLOAT)
        ((float *)host)[index] = (float)value;
      else
        ((double *)host)[index] = value;
    }
    status = ctx->ops->upload(ctx, diagonal, host, bytes);
  }
  for (int d = 0; d < 3; ++d) {
    free(m1[d]);
    free(k1[d]);
  }
  free(cells);
  free(host);
  return status;
}

tpmg_status tpmg_operator_work(const tpmg_operator *op, tpmg_work *work) {
  if (!op)
    return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = op->grid->ctx;
  TPMG_CHECK(ctx, work, TPMG_ERROR_ARGUMENT, "work is NULL");
  TPMG_CHECK(ctx, ctx->ops->operator_work, TPMG_ERROR_UNSUPPORTED, "the %s backend counts no work",
             ctx->ops->name);
  return ctx->ops->operator_work(ctx, op->level, op->precision, work);
}

tpmg_status tpmg_operator_destroy(tpmg_operator **op) {
  if (!op) return TPMG_ERROR_ARGUMENT;
  if (!*op) return TPMG_SUCCESS;
  tpmg_grid *grid = (*op)->grid;
  free(*op);
  tpmg_grid_release(grid);
  *op = NULL;
  return TPMG_SUCCESS;
}
