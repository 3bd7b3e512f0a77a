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
 * This file includes itself once per scalar type (see tpmg-cpu.h) and, in
 * that part, once per instruction set for its batched kernels (see
 * tpmg-cpu-simd.h). */
#ifndef TPMG_CPU_SCALAR

#include <omp.h>

#include "tpmg-cpu-simd.h"
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

#elif !defined(TPMG_CPU_ISA) /* precision-generic part */

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

/* A row (c_1, c_2) of coarse cells, or (batched kernels) the coarse cells
 * c_1 .. c_1 + W - 1 in lexicographic order (c_2 unused); scratch: the calling
 * thread's block (batched kernels only). */
typedef void TPMG_CPU_NAME(prolongate_kernel)(const TPMG_CPU_NAME(transfer_data) *, tpmg_index,
                                              tpmg_index, char *);
/* A layer of coarse cells; scratch as above. */
typedef void TPMG_CPU_NAME(restriction_kernel)(const TPMG_CPU_NAME(transfer_data) *, tpmg_index,
                                               char *);

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

#define TPMG_CPU_SELF "tpmg-cpu-transfer.c"
#include "tpmg-cpu-simd.h"
#undef TPMG_CPU_SELF

/* The batched kernels' vector size in bytes (0: the scalar ones) and the
 * kernels for this context. */
static size_t TPMG_CPU_NAME(transfer_kernels)(tpmg_context *ctx, int dim, int k,
                                              TPMG_CPU_NAME(prolongate_kernel) * *prolongate,
                                              TPMG_CPU_NAME(restriction_kernel) * *restriction) {
  *prolongate = TPMG_CPU_NAME(prolongate_kernels)[dim - 2][k];
  *restriction = TPMG_CPU_NAME(restriction_kernels)[dim - 2][k];
#if TPMG_CPU_HAVE_SIMD
  if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX2) {
    *prolongate = TPMG_CPU_SIMD_NAME(prolongate_kernels, avx2)[dim - 2][k];
    *restriction = TPMG_CPU_SIMD_NAME(restriction_kernels, avx2)[dim - 2][k];
    return 32;
  }
  if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX512) {
    *prolongate = TPMG_CPU_SIMD_NAME(prolongate_kernels, avx512)[dim - 2][k];
    *restriction = TPMG_CPU_SIMD_NAME(restriction_kernels, avx512)[dim - 2][k];
    return 64;
  }
#endif
  return 0;
}

/* Lane vectors of a batched kernel's scratch: three tensors of (2k+1)^dim. */
static size_t TPMG_CPU_NAME(transfer_scratch)(int dim, int k) {
  const size_t n_f = (size_t)(2 * k + 1);
  return 3 * (dim == 3 ? n_f * n_f * n_f : n_f * n_f);
}

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
  const int dim = fine->dim, k = fine->degree;
  TPMG_CPU_NAME(prolongate_kernel) * kernel;
  TPMG_CPU_NAME(restriction_kernel) * unused;
  const size_t vector_bytes = TPMG_CPU_NAME(transfer_kernels)(ctx, dim, k, &kernel, &unused);
  TPMG_CPU_NAME(transfer_data) data;
  TPMG_CPU_NAME(transfer_setup)(coarse, fine, c, f, &data);
  char *scratch;
  size_t stride;
  TPMG_CALL(tpmg_cpu_scratch(ctx, TPMG_CPU_NAME(transfer_scratch)(dim, k) * vector_bytes, &stride,
                             &scratch));
  const tpmg_index cells_1 = coarse->cells[1], cells_2 = dim == 3 ? coarse->cells[2] : 1;
  if (scratch) {
    /* every fine point is written by one cell: batches in any order */
    const tpmg_index lanes = (tpmg_index)(vector_bytes / sizeof(T));
    const tpmg_index n_batches = (coarse->cells[0] * cells_1 * cells_2 + lanes - 1) / lanes;
#pragma omp parallel num_threads(tpmg_backend_threads(ctx))
    {
      char *mine = scratch + (size_t)omp_get_thread_num() * stride;
#pragma omp for schedule(static)
      for (tpmg_index i = 0; i < n_batches; ++i)
        kernel(&data, i * lanes, 0, mine);
    }
    free(scratch);
    return TPMG_SUCCESS;
  }
#pragma omp parallel for collapse(2) schedule(static) num_threads(tpmg_backend_threads(ctx))
  for (tpmg_index c2 = 0; c2 < cells_2; ++c2)
    for (tpmg_index c1 = 0; c1 < cells_1; ++c1)
      kernel(&data, c1, c2, NULL);
  return TPMG_SUCCESS;
}

static tpmg_status TPMG_CPU_NAME(restriction)(tpmg_context *ctx, const tpmg_level *coarse,
                                              const tpmg_level *fine, const T *f, T *c) {
  const int dim = fine->dim, k = fine->degree, s = dim - 1;
  TPMG_CPU_NAME(prolongate_kernel) * unused;
  TPMG_CPU_NAME(restriction_kernel) * kernel;
  const size_t vector_bytes = TPMG_CPU_NAME(transfer_kernels)(ctx, dim, k, &unused, &kernel);
  TPMG_CPU_NAME(transfer_data) data;
  TPMG_CPU_NAME(transfer_setup)(coarse, fine, f, c, &data);
  char *scratch;
  size_t stride;
  TPMG_CALL(tpmg_cpu_scratch(ctx, TPMG_CPU_NAME(transfer_scratch)(dim, k) * vector_bytes, &stride,
                             &scratch));
  const tpmg_index n_layers = coarse->cells[s], plane = coarse->n_dofs / coarse->n[s];
#pragma omp parallel num_threads(tpmg_backend_threads(ctx))
  {
    char *mine = scratch ? scratch + (size_t)omp_get_thread_num() * stride : NULL;
    for (int parity = 0; parity < 2; ++parity) {
#pragma omp for schedule(static)
      for (tpmg_index c_s = parity; c_s < n_layers; c_s += 2) {
        tpmg_index first, last;
        tpmg_cpu_layer_planes(c_s, n_layers, k, &first, &last);
        memset(c + first * plane, 0, (size_t)((last - first + 1) * plane) * sizeof(T));
        kernel(&data, c_s, mine);
      }
    }
  }
  free(scratch);
  return TPMG_SUCCESS;
}

#else /* batched part, once per instruction set */

#include "tpmg-cpu-simd.h"

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
static TPMG_CPU_NAME(prolongate_kernel) *const
    TPMG_CPU_VNAME(prolongate_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY
#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_VNAME(restriction_##dim##d_q##k),
static TPMG_CPU_NAME(restriction_kernel) *const
    TPMG_CPU_VNAME(restriction_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

#endif
