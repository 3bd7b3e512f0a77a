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
 * The generic body of the kernels, per scalar type T and width (tpmg-cpu.h):
 * the data of a call; at the scalar width the plain C prolongation of a row
 * and restriction of a layer of coarse cells, cell by cell, at the SIMD widths
 * W cells at a time; a table of each, indexed by [dim - 2][k]. Instantiated by
 * tpmg-cpu-transfer-double.c (the scalar width, with the driver),
 * tpmg-cpu-transfer-double-avx2.c, tpmg-cpu-transfer-double-avx512.c and their
 * float twins. */
#ifndef TPMG_CPU_TRANSFER_TEMPLATES_H
#define TPMG_CPU_TRANSFER_TEMPLATES_H

#if !defined(TPMG_CPU_SCALAR) || !defined(TPMG_CPU_ISA)
#error "define TPMG_CPU_SCALAR and TPMG_CPU_ISA before tpmg-cpu-transfer-templates.h"
#endif

#include "tpmg-cpu-simd.h"
#include "tpmg-cpu-templates.h"

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

/* A row (c_1, c_2) of coarse cells, or (batched kernels) the coarse cells
 * c_1 .. c_1 + W - 1 in lexicographic order (c_2 unused); scratch: the calling
 * thread's block (batched kernels only). */
typedef void TPMG_CPU_NAME(prolongate_kernel)(const TPMG_CPU_NAME(transfer_data) *, tpmg_index,
                                              tpmg_index, char *);
/* A layer of coarse cells; scratch as above. */
typedef void TPMG_CPU_NAME(restriction_kernel)(const TPMG_CPU_NAME(transfer_data) *, tpmg_index,
                                               char *);

/* The tables of the batched kernels of the SIMD widths. */
TPMG_CPU_DECLARE_SIMD_TABLES(TPMG_CPU_NAME(prolongate_kernel), tpmg_cpu_prolongate_kernels);
TPMG_CPU_DECLARE_SIMD_TABLES(TPMG_CPU_NAME(restriction_kernel), tpmg_cpu_restriction_kernels);

#ifndef TPMG_CPU_SIMD_BYTES /* the scalar width: one cell at a time */

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

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_NAME(prolongate_##dim##d_q##k)(                                             \
      const TPMG_CPU_NAME(transfer_data) * data, tpmg_index c1, tpmg_index c2, char *scratch) {    \
    TPMG_CPU_NAME(prolongate_row)(data, c1, c2, dim, k);                                           \
  }                                                                                                \
  static void TPMG_CPU_NAME(restriction_##dim##d_q##k)(const TPMG_CPU_NAME(transfer_data) * data,  \
                                                       tpmg_index c_s, char *scratch) {            \
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

#else /* a SIMD width: W cells at a time */

#include "tpmg-cpu-simd-templates.h"

/* Where the coarse cells first .. first + W - 1 (lexicographic over all
 * cells, or over those of layer c_s when c_s >= 0) lie; the last batch repeats
 * its last cell. Returns the number of cells used. */
TPMG_CPU_INLINE int TPMG_CPU_VNAME(transfer_batch)(const tpmg_level *coarse, tpmg_index first,
                                                   tpmg_index c_s, int dim, int k,
                                                   tpmg_index origin_c[][3],
                                                   tpmg_index origin_f[][3], int lo[][3],
                                                   int hi[][3]) {
  const tpmg_index cells_0 = coarse->cells[0], cells_1 = coarse->cells[1];
  const tpmg_index cells_2 = dim == 3 ? coarse->cells[2] : 1;
  const tpmg_index count = cells_0 * (c_s >= 0 ? (dim == 3 ? cells_1 : 1) : cells_1 * cells_2);
  const int used = count - first < W ? (int)(count - first) : W;
  for (int l = 0; l < W; ++l) {
    const tpmg_index cell = first + (l < used ? l : used - 1);
    tpmg_index c[3] = {cell % cells_0, cell / cells_0 % cells_1, cell / (cells_0 * cells_1)};
    if (c_s >= 0) {
      c[1] = dim == 3 ? cell / cells_0 : c_s;
      c[2] = dim == 3 ? c_s : 0;
    }
    TPMG_CPU_NAME(transfer_cell)(coarse, c, dim, k, origin_c[l], origin_f[l], lo[l], hi[l]);
  }
  return used;
}

/* prolongate_row for the W cells from `first` on, all cells lexicographic. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(prolongate_batch)(const TPMG_CPU_NAME(transfer_data) * data,
                                                      tpmg_index first, V *restrict scratch,
                                                      int dim, int k) {
  const tpmg_level *coarse = data->coarse, *fine = data->fine;
  const int n_c = k + 1, n_f = 2 * k + 1, size = dim == 3 ? n_f * n_f * n_f : n_f * n_f;
  V *u = scratch, *t0 = u + size, *t1 = t0 + size;
  tpmg_index origin_c[W][3], origin_f[W][3];
  int lo[W][3], hi[W][3];
  const int used =
      TPMG_CPU_VNAME(transfer_batch)(coarse, first, -1, dim, k, origin_c, origin_f, lo, hi);
  TPMG_CPU_VNAME(simd_gather)(dim, n_c, data->src, coarse->n, origin_c, lo, hi, 0, u);
  const V *result = t1;
  if (dim == 2) {
    TPMG_CPU_VNAME(simd_contract)(n_f, n_c, 1, n_c, data->prolongation, u, t0, 0);
    TPMG_CPU_VNAME(simd_contract)(n_f, n_c, n_f, 1, data->prolongation, t0, t1, 0);
  } else {
    TPMG_CPU_VNAME(simd_contract)(n_f, n_c, 1, n_c * n_c, data->prolongation, u, t0, 0);
    TPMG_CPU_VNAME(simd_contract)(n_f, n_c, n_f, n_c, data->prolongation, t0, t1, 0);
    TPMG_CPU_VNAME(simd_contract)(n_f, n_c, n_f * n_f, 1, data->prolongation, t1, u, 0);
    result = u;
  }
  for (int l = 0; l < used; ++l) {
    /* owned and not Dirichlet: 1 <= t in the first cell, t < 2k everywhere */
    int begin[3] = {0, 0, 0}, end[3] = {1, 1, 1};
    for (int d = 0; d < dim; ++d) {
      begin[d] = lo[l][d];
      end[d] = 2 * k;
    }
    TPMG_CPU_VNAME(simd_scatter)
    (dim, n_f, result, l, fine->n, origin_f[l], begin, end, data->dst, 1);
  }
}

/* restriction_layer, W cells at a time in its order. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(restriction_layer)(const TPMG_CPU_NAME(transfer_data) * data,
                                                       tpmg_index c_s, V *restrict scratch, int dim,
                                                       int k) {
  const tpmg_level *coarse = data->coarse, *fine = data->fine;
  const int n_c = k + 1, n_f = 2 * k + 1, size = dim == 3 ? n_f * n_f * n_f : n_f * n_f;
  V *v = scratch, *t0 = v + size, *t1 = t0 + size;
  const tpmg_index count = coarse->cells[0] * (dim == 3 ? coarse->cells[1] : 1);
  for (tpmg_index first = 0; first < count; first += W) {
    tpmg_index origin_c[W][3], origin_f[W][3];
    int lo[W][3], hi[W][3], one[W][3];
    const int used =
        TPMG_CPU_VNAME(transfer_batch)(coarse, first, c_s, dim, k, origin_c, origin_f, lo, hi);
    for (int l = 0; l < W; ++l)
      for (int d = 0; d < 3; ++d)
        one[l][d] = 1;
    /* the owned, non-Dirichlet fine points: t = 2k and, in the first cell, t = 0 read as zero */
    TPMG_CPU_VNAME(simd_gather)(dim, n_f, data->src, fine->n, origin_f, lo, one, 0, v);
    const V *result = t1;
    if (dim == 2) {
      TPMG_CPU_VNAME(simd_contract)(n_c, n_f, 1, n_f, data->restriction, v, t0, 0);
      TPMG_CPU_VNAME(simd_contract)(n_c, n_f, n_c, 1, data->restriction, t0, t1, 0);
    } else {
      TPMG_CPU_VNAME(simd_contract)(n_c, n_f, 1, n_f * n_f, data->restriction, v, t0, 0);
      TPMG_CPU_VNAME(simd_contract)(n_c, n_f, n_c, n_f, data->restriction, t0, t1, 0);
      TPMG_CPU_VNAME(simd_contract)(n_c, n_f, n_c * n_c, 1, data->restriction, t1, v, 0);
      result = v;
    }
    for (int l = 0; l < used; ++l) {
      /* Z_c: coarse Dirichlet entries are skipped and stay zero */
      int begin[3] = {0, 0, 0}, end[3] = {1, 1, 1};
      for (int d = 0; d < dim; ++d) {
        begin[d] = lo[l][d];
        end[d] = n_c - hi[l][d];
      }
      TPMG_CPU_VNAME(simd_scatter)
      (dim, n_c, result, l, coarse->n, origin_c[l], begin, end, data->dst, 1);
    }
  }
}

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_VNAME(prolongate_##dim##d_q##k)(const TPMG_CPU_NAME(transfer_data) * data,  \
                                                       tpmg_index first, tpmg_index unused,        \
                                                       char *scratch) {                            \
    TPMG_CPU_VNAME(prolongate_batch)(data, first, (V *)scratch, dim, k);                           \
  }                                                                                                \
  static void TPMG_CPU_VNAME(restriction_##dim##d_q##k)(const TPMG_CPU_NAME(transfer_data) * data, \
                                                        tpmg_index c_s, char *scratch) {           \
    TPMG_CPU_VNAME(restriction_layer)(data, c_s, (V *)scratch, dim, k);                            \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_VNAME(prolongate_##dim##d_q##k),
TPMG_CPU_TABLE(TPMG_CPU_NAME(prolongate_kernel), tpmg_cpu_prolongate_kernels,
               TPMG_CPU_ISA) = {TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY
#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_VNAME(restriction_##dim##d_q##k),
TPMG_CPU_TABLE(TPMG_CPU_NAME(restriction_kernel), tpmg_cpu_restriction_kernels,
               TPMG_CPU_ISA) = {TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

#endif

#endif
