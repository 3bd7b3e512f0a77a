/* CPU backend: grid transfer between a coarse level and the fine level below.
 *
 * In 1D, fine point i (0 <= i <= 2 k cells_c) belongs to the coarse cell
 * c = min(i / 2k, cells_c - 1), at t = i - 2k c, and the prolongation is
 *   P1[i][c k + s] = prolongation[t][s],   s = 0..k,
 * the coarse cell's basis at its children's support points; P = P1_z (x) P1_y
 * (x) P1_x (paper section 3.2, "Grid transfer operation"). Per coarse cell it is
 * applied by sum factorization to the (2k+1)^dim fine points of the cell, of
 * which the cell owns t < 2k per direction (and t = 2k in the last cell, a
 * Dirichlet point). Prolongation f += Z_f P Z_c c writes each owned point once;
 * restriction c = Z_c P^T Z_f f gathers the same owned points and adds P^T of
 * them into the (k+1)^dim coarse DoFs, so the two are exact transposes.
 *
 * This file includes itself once per scalar type (see tpmg-cpu.h). */
#ifndef TPMG_CPU_SCALAR

#include "tpmg-cpu.h"

#define TPMG_CPU_SCALAR double
#include "tpmg-cpu-transfer.c"
#undef TPMG_CPU_SCALAR
#define TPMG_CPU_SCALAR float
#include "tpmg-cpu-transfer.c"
#undef TPMG_CPU_SCALAR

tpmg_status tpmg_cpu_prolongate_add(tpmg_context *ctx, const tpmg_level *coarse,
                                    const tpmg_level *fine, tpmg_precision prec, const void *c,
                                    void *f) {
  if (prec == TPMG_FLOAT)
    return prolongate_add_float(ctx, coarse, fine, c, f);
  return prolongate_add_double(ctx, coarse, fine, c, f);
}

tpmg_status tpmg_cpu_restrict(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                              tpmg_precision prec, const void *f, void *c) {
  if (prec == TPMG_FLOAT)
    return restriction_float(ctx, coarse, fine, f, c);
  return restriction_double(ctx, coarse, fine, f, c);
}

#else /* precision-generic part */

#include "tpmg-cpu.h"

/* What every coarse cell needs: the 1D prolongation ((2k+1) x (k+1)) and its
 * transpose, both column-major. */
typedef struct {
  const tpmg_level *coarse;
  const tpmg_level *fine;
  T prolongation[TPMG_CPU_MAX_MATRIX];
  T restriction[TPMG_CPU_MAX_MATRIX];
  const T *src;
  T *dst;
} TPMG_CPU_NAME(transfer_data);

/* Where coarse cell c lies: its coarse DoFs start at origin_c = c k, its fine
 * points at origin_f = 2k c; lo/hi mark the cells at the boundary. */
TPMG_CPU_INLINE void TPMG_CPU_NAME(transfer_cell)(const tpmg_level *coarse, const tpmg_index c[3],
                                                  int dim, int k, tpmg_index origin_c[3],
                                                  tpmg_index origin_f[3], int lo[3], int hi[3]) {
  for (int d = 0; d < 3; ++d) {
    origin_c[d] = d < dim ? c[d] * k : 0;
    origin_f[d] = 2 * origin_c[d];
    lo[d] = d < dim && c[d] == 0;
    hi[d] = d < dim && c[d] == coarse->cells[d] - 1;
  }
}

/* f += Z_f P Z_c c on the fine points owned by the coarse cells of row (c_1, c_2). */
TPMG_CPU_INLINE void TPMG_CPU_NAME(prolongate_row)(const TPMG_CPU_NAME(transfer_data) * data,
                                                   tpmg_index c1, tpmg_index c2, int dim, int k) {
  const tpmg_level *coarse = data->coarse, *fine = data->fine;
  const int n_c = k + 1, n_f = 2 * k + 1;
  for (tpmg_index c0 = 0; c0 < coarse->cells[0]; ++c0) {
    const tpmg_index c[3] = {c0, c1, c2};
    tpmg_index origin_c[3], origin_f[3];
    int lo[3], hi[3];
    TPMG_CPU_NAME(transfer_cell)(coarse, c, dim, k, origin_c, origin_f, lo, hi);
    T u[TPMG_CPU_MAX_TENSOR], t0[TPMG_CPU_MAX_TENSOR], t1[TPMG_CPU_MAX_TENSOR];
    TPMG_CPU_NAME(tpmg_cpu_gather)(dim, n_c, data->src, coarse->n, origin_c, lo, hi, 0, u);
    const T *result = t1;
    if (dim == 2) {
      TPMG_CPU_NAME(tpmg_cpu_contract)(n_f, n_c, 1, n_c, data->prolongation, u, t0, 0);
      TPMG_CPU_NAME(tpmg_cpu_contract)(n_f, n_c, n_f, 1, data->prolongation, t0, t1, 0);
    } else {
      TPMG_CPU_NAME(tpmg_cpu_contract)(n_f, n_c, 1, n_c * n_c, data->prolongation, u, t0, 0);
      TPMG_CPU_NAME(tpmg_cpu_contract)(n_f, n_c, n_f, n_c, data->prolongation, t0, t1, 0);
      TPMG_CPU_NAME(tpmg_cpu_contract)(n_f, n_c, n_f * n_f, 1, data->prolongation, t1, u, 0);
      result = u;
    }
    /* owned and not Dirichlet: 1 <= t in the first cell, t < 2k everywhere */
    int begin[3] = {0, 0, 0}, end[3] = {1, 1, 1};
    for (int d = 0; d < dim; ++d) {
      begin[d] = lo[d];
      end[d] = 2 * k;
    }
    TPMG_CPU_NAME(tpmg_cpu_scatter)(dim, n_f, result, fine->n, origin_f, begin, end, data->dst, 1);
  }
}

/* c += Z_c P^T Z_f f for the coarse cells of one layer c_s along the slowest direction. */
TPMG_CPU_INLINE void TPMG_CPU_NAME(restriction_layer)(const TPMG_CPU_NAME(transfer_data) * data,
                                                      tpmg_index c_s, int dim, int k) {
  const tpmg_level *coarse = data->coarse, *fine = data->fine;
  const int n_c = k + 1, n_f = 2 * k + 1;
  const int one[3] = {1, 1, 1};
  const tpmg_index cells_1 = dim == 3 ? coarse->cells[1] : 1;
  for (tpmg_index c1 = 0; c1 < cells_1; ++c1)
    for (tpmg_index c0 = 0; c0 < coarse->cells[0]; ++c0) {
      const tpmg_index c[3] = {c0, dim == 3 ? c1 : c_s, dim == 3 ? c_s : 0};
      tpmg_index origin_c[3], origin_f[3];
      int lo[3], hi[3];
      TPMG_CPU_NAME(transfer_cell)(coarse, c, dim, k, origin_c, origin_f, lo, hi);
      /* the owned, non-Dirichlet fine points: t = 2k and, in the first cell, t = 0 read as zero */
      T v[TPMG_CPU_MAX_TENSOR], t0[TPMG_CPU_MAX_TENSOR], t1[TPMG_CPU_MAX_TENSOR];
      TPMG_CPU_NAME(tpmg_cpu_gather)(dim, n_f, data->src, fine->n, origin_f, lo, one, 0, v);
      const T *result = t1;
      if (dim == 2) {
        TPMG_CPU_NAME(tpmg_cpu_contract)(n_c, n_f, 1, n_f, data->restriction, v, t0, 0);
        TPMG_CPU_NAME(tpmg_cpu_contract)(n_c, n_f, n_c, 1, data->restriction, t0, t1, 0);
      } else {
        TPMG_CPU_NAME(tpmg_cpu_contract)(n_c, n_f, 1, n_f * n_f, data->restriction, v, t0, 0);
        TPMG_CPU_NAME(tpmg_cpu_contract)(n_c, n_f, n_c, n_f, data->restriction, t0, t1, 0);
        TPMG_CPU_NAME(tpmg_cpu_contract)(n_c, n_f, n_c * n_c, 1, data->restriction, t1, v, 0);
        result = v;
      }
      /* Z_c: coarse Dirichlet entries are skipped and stay zero */
      int begin[3] = {0, 0, 0}, end[3] = {1, 1, 1};
      for (int d = 0; d < dim; ++d) {
        begin[d] = lo[d];
        end[d] = n_c - hi[d];
      }
      TPMG_CPU_NAME(tpmg_cpu_scatter)
      (dim, n_c, result, coarse->n, origin_c, begin, end, data->dst, 1);
    }
}

typedef void TPMG_CPU_NAME(prolongate_kernel)(const TPMG_CPU_NAME(transfer_data) *, tpmg_index,
                                              tpmg_index);
typedef void TPMG_CPU_NAME(restriction_kernel)(const TPMG_CPU_NAME(transfer_data) *, tpmg_index);

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_NAME(prolongate_##dim##d_q##k)(const TPMG_CPU_NAME(transfer_data) * data,   \
                                                      tpmg_index c1, tpmg_index c2) {              \
    TPMG_CPU_NAME(prolongate_row)(data, c1, c2, dim, k);                                           \
  }                                                                                                \
  static void TPMG_CPU_NAME(restriction_##dim##d_q##k)(const TPMG_CPU_NAME(transfer_data) * data,  \
                                                       tpmg_index c_s) {                           \
    TPMG_CPU_NAME(restriction_layer)(data, c_s, dim, k);                                           \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_NAME(prolongate_##dim##d_q##k),
static TPMG_CPU_NAME(prolongate_kernel) *const
    TPMG_CPU_NAME(prolongate_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY
#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_NAME(restriction_##dim##d_q##k),
static TPMG_CPU_NAME(restriction_kernel) *const
    TPMG_CPU_NAME(restriction_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

static void TPMG_CPU_NAME(transfer_setup)(const tpmg_level *coarse, const tpmg_level *fine,
                                          const T *src, T *dst,
                                          TPMG_CPU_NAME(transfer_data) * data) {
  const int k = fine->degree, n_c = k + 1, n_f = 2 * k + 1;
  const T *prolongation = fine->data[TPMG_CPU_PRECISION].prolongation;
  data->coarse = coarse;
  data->fine = fine;
  data->src = src;
  data->dst = dst;
  for (int i = 0; i < n_f; ++i)
    for (int s = 0; s < n_c; ++s) {
      data->prolongation[s * n_f + i] = prolongation[i * n_c + s];
      data->restriction[i * n_c + s] = prolongation[i * n_c + s];
    }
}

static tpmg_status TPMG_CPU_NAME(prolongate_add)(tpmg_context *ctx, const tpmg_level *coarse,
                                                 const tpmg_level *fine, const T *c, T *f) {
  const int dim = fine->dim;
  TPMG_CPU_NAME(prolongate_kernel) *kernel =
      TPMG_CPU_NAME(prolongate_kernels)[dim - 2][fine->degree];
  TPMG_CPU_NAME(transfer_data) data;
  TPMG_CPU_NAME(transfer_setup)(coarse, fine, c, f, &data);
  const tpmg_index cells_1 = coarse->cells[1], cells_2 = dim == 3 ? coarse->cells[2] : 1;
#pragma omp parallel for collapse(2) schedule(static) num_threads(tpmg_backend_threads(ctx))
  for (tpmg_index c2 = 0; c2 < cells_2; ++c2)
    for (tpmg_index c1 = 0; c1 < cells_1; ++c1)
      kernel(&data, c1, c2);
  return TPMG_SUCCESS;
}

static tpmg_status TPMG_CPU_NAME(restriction)(tpmg_context *ctx, const tpmg_level *coarse,
                                              const tpmg_level *fine, const T *f, T *c) {
  const int dim = fine->dim, k = fine->degree, s = dim - 1;
  TPMG_CPU_NAME(restriction_kernel) *kernel = TPMG_CPU_NAME(restriction_kernels)[dim - 2][k];
  TPMG_CPU_NAME(transfer_data) data;
  TPMG_CPU_NAME(transfer_setup)(coarse, fine, f, c, &data);
  const tpmg_index n_layers = coarse->cells[s], plane = coarse->n_dofs / coarse->n[s];
#pragma omp parallel num_threads(tpmg_backend_threads(ctx))
  for (int parity = 0; parity < 2; ++parity) {
#pragma omp for schedule(static)
    for (tpmg_index c_s = parity; c_s < n_layers; c_s += 2) {
      tpmg_index first, last;
      tpmg_cpu_layer_planes(c_s, n_layers, k, &first, &last);
      memset(c + first * plane, 0, (size_t)((last - first + 1) * plane) * sizeof(T));
      kernel(&data, c_s);
    }
  }
  return TPMG_SUCCESS;
}

#endif
