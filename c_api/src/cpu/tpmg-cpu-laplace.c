/* CPU backend: the matrix-free level operator dst = A src.
 *
 * A = sum_K R_K^T A^K R_K over the cells K (paper section 3.2, "Matrix-Free
 * Multiplication"), with the Cartesian cell matrix (paper section 2.3,
 * "Matrix-Free Operation")
 *   2D: A^K = K_y (x) M_x + M_y (x) K_x,
 *   3D: A^K = K_z (x) M_y (x) M_x + M_z (x) K_y (x) M_x + M_z (x) M_y (x) K_x,
 * applied by sum factorization. Dirichlet entries of src are read as zero and
 * the Dirichlet rows of A are identity rows: dst_B = src_B.
 *
 * This file includes itself once per scalar type (see tpmg-cpu.h) and, in
 * that part, once per instruction set for its batched kernels (see
 * tpmg-cpu-simd.h). */
#ifndef TPMG_CPU_SCALAR

#include <omp.h>

#include "tpmg-cpu-simd.h"
#include "tpmg-cpu.h"

#define TPMG_CPU_SCALAR double
#include "tpmg-cpu-laplace.c"
#undef TPMG_CPU_SCALAR
#define TPMG_CPU_SCALAR float
#include "tpmg-cpu-laplace.c"
#undef TPMG_CPU_SCALAR

tpmg_status tpmg_cpu_laplace(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             const void *src, void *dst) {
  if (prec == TPMG_FLOAT)
    return laplace_float(ctx, lvl, src, dst);
  return laplace_double(ctx, lvl, src, dst);
}

#elif !defined(TPMG_CPU_ISA) /* precision-generic part */

#include "tpmg-cpu.h"

/* What every cell of one call needs; the 1D cell matrices column-major. */
typedef struct {
  const tpmg_level *lvl;
  T mass[3][TPMG_CPU_MAX_MATRIX];
  T stiffness[3][TPMG_CPU_MAX_MATRIX];
  const T *src;
  T *dst;
} TPMG_CPU_NAME(laplace_data);

/* dst += A^K src for the cells of one layer c_s along the slowest direction. */
TPMG_CPU_INLINE void TPMG_CPU_NAME(laplace_layer)(const TPMG_CPU_NAME(laplace_data) * data,
                                                  tpmg_index c_s, int dim, int k) {
  const tpmg_level *lvl = data->lvl;
  const int n_pts = k + 1;
  const T *mass[3] = {data->mass[0], data->mass[1], data->mass[2]};
  const T *stiffness[3] = {data->stiffness[0], data->stiffness[1], data->stiffness[2]};
  const int all[3] = {n_pts, n_pts, dim == 3 ? n_pts : 1}, none[3] = {0, 0, 0};
  const tpmg_index cells_1 = dim == 3 ? lvl->cells[1] : 1;
  for (tpmg_index c1 = 0; c1 < cells_1; ++c1)
    for (tpmg_index c0 = 0; c0 < lvl->cells[0]; ++c0) {
      const tpmg_index c[3] = {c0, dim == 3 ? c1 : c_s, dim == 3 ? c_s : 0};
      tpmg_index origin[3] = {0, 0, 0};
      int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) {
        origin[d] = c[d] * k;
        lo[d] = c[d] == 0;
        hi[d] = c[d] == lvl->cells[d] - 1;
      }
      T u[TPMG_CPU_MAX_TENSOR], v[TPMG_CPU_MAX_TENSOR];
      TPMG_CPU_NAME(tpmg_cpu_gather)(dim, n_pts, data->src, lvl->n, origin, lo, hi, 0, u);
      TPMG_CPU_NAME(tpmg_cpu_kron_laplace)(dim, n_pts, n_pts, mass, stiffness, u, v);
      TPMG_CPU_NAME(tpmg_cpu_scatter)(dim, n_pts, v, lvl->n, origin, none, all, data->dst, 1);
    }
}

/* One layer; scratch: the calling thread's block (batched kernels only). */
typedef void TPMG_CPU_NAME(laplace_kernel)(const TPMG_CPU_NAME(laplace_data) *, tpmg_index, char *);

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_NAME(laplace_layer_##dim##d_q##k)(const TPMG_CPU_NAME(laplace_data) * data, \
                                                         tpmg_index c_s, char *scratch) {          \
    TPMG_CPU_NAME(laplace_layer)(data, c_s, dim, k);                                               \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_NAME(laplace_layer_##dim##d_q##k),
static TPMG_CPU_NAME(laplace_kernel) *const
    TPMG_CPU_NAME(laplace_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

#define TPMG_CPU_SELF "tpmg-cpu-laplace.c"
#include "tpmg-cpu-simd.h"
#undef TPMG_CPU_SELF

static tpmg_status TPMG_CPU_NAME(laplace)(tpmg_context *ctx, const tpmg_level *lvl, const T *src,
                                          T *dst) {
  const int dim = lvl->dim, k = lvl->degree, s = dim - 1;
  TPMG_CPU_NAME(laplace_kernel) *kernel = TPMG_CPU_NAME(laplace_kernels)[dim - 2][k];
  size_t scratch_bytes = 0;
#if TPMG_CPU_HAVE_SIMD
  /* u, v, t0, t1, t2 of (k+1)^dim lane vectors */
  const size_t tensor = (size_t)(dim == 3 ? (k + 1) * (k + 1) * (k + 1) : (k + 1) * (k + 1));
  if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX2) {
    kernel = TPMG_CPU_SIMD_NAME(laplace_kernels, avx2)[dim - 2][k];
    scratch_bytes = 5 * tensor * 32;
  } else if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX512) {
    kernel = TPMG_CPU_SIMD_NAME(laplace_kernels, avx512)[dim - 2][k];
    scratch_bytes = 5 * tensor * 64;
  }
#endif
  TPMG_CPU_NAME(laplace_data) data;
  data.lvl = lvl;
  data.src = src;
  data.dst = dst;
  for (int d = 0; d < dim; ++d) {
    const T *mass = lvl->data[TPMG_CPU_PRECISION].cell_mass[d];
    const T *stiffness = lvl->data[TPMG_CPU_PRECISION].cell_stiffness[d];
    for (int i = 0; i <= k; ++i)
      for (int j = 0; j <= k; ++j) {
        data.mass[d][j * (k + 1) + i] = mass[i * (k + 1) + j];
        data.stiffness[d][j * (k + 1) + i] = stiffness[i * (k + 1) + j];
      }
  }
  char *scratch;
  size_t stride;
  TPMG_CALL(tpmg_cpu_scratch(ctx, scratch_bytes, &stride, &scratch));
  const tpmg_index n_layers = lvl->cells[s], plane = lvl->n_dofs / lvl->n[s];
#pragma omp parallel num_threads(tpmg_backend_threads(ctx))
  {
    char *mine = scratch ? scratch + (size_t)omp_get_thread_num() * stride : NULL;
    for (int parity = 0; parity < 2; ++parity) {
#pragma omp for schedule(static)
      for (tpmg_index c = parity; c < n_layers; c += 2) {
        tpmg_index first, last;
        tpmg_cpu_layer_planes(c, n_layers, k, &first, &last);
        memset(dst + first * plane, 0, (size_t)((last - first + 1) * plane) * sizeof(T));
        kernel(&data, c, mine);
      }
    }
  }
  free(scratch);
  return tpmg_cpu_copy_boundary(ctx, lvl, TPMG_CPU_PRECISION, src, dst);
}

#else /* batched part, once per instruction set */

#include "tpmg-cpu-simd.h"

/* laplace_layer on W cells at a time, in the order of laplace_layer; scratch
 * holds 5 (k+1)^dim lane vectors. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(laplace_layer)(const TPMG_CPU_NAME(laplace_data) * data,
                                                   tpmg_index c_s, V *restrict scratch, int dim,
                                                   int k) {
  const tpmg_level *lvl = data->lvl;
  const int n_pts = k + 1, size = dim == 3 ? n_pts * n_pts * n_pts : n_pts * n_pts;
  V *u = scratch, *v = u + size, *t0 = v + size, *t1 = t0 + size, *t2 = t1 + size;
  const T *mass[3] = {data->mass[0], data->mass[1], data->mass[2]};
  const T *stiffness[3] = {data->stiffness[0], data->stiffness[1], data->stiffness[2]};
  const int all[3] = {n_pts, n_pts, dim == 3 ? n_pts : 1}, none[3] = {0, 0, 0};
  const tpmg_index cells_0 = lvl->cells[0];
  const tpmg_index count = cells_0 * (dim == 3 ? lvl->cells[1] : 1);
  for (tpmg_index first = 0; first < count; first += W) {
    const int used = count - first < W ? (int)(count - first) : W;
    tpmg_index origin[W][3], next[W][3];
    int lo[W][3], hi[W][3];
    for (int l = 0; l < W; ++l) {
      const tpmg_index cell = first + (l < used ? l : used - 1);
      const tpmg_index ahead = first + W + l < count ? first + W + l : count - 1;
      const tpmg_index c[3] = {cell % cells_0, dim == 3 ? cell / cells_0 : c_s, dim == 3 ? c_s : 0};
      const tpmg_index c_ahead[3] = {ahead % cells_0, dim == 3 ? ahead / cells_0 : c_s,
                                     dim == 3 ? c_s : 0};
      for (int d = 0; d < 3; ++d) {
        origin[l][d] = d < dim ? c[d] * k : 0;
        next[l][d] = d < dim ? c_ahead[d] * k : 0;
        lo[l][d] = d < dim && c[d] == 0;
        hi[l][d] = d < dim && c[d] == lvl->cells[d] - 1;
      }
    }
    if (first + W < count)
      TPMG_CPU_VNAME(simd_prefetch)(dim, n_pts, data->src, lvl->n, next);
    TPMG_CPU_VNAME(simd_gather)(dim, n_pts, data->src, lvl->n, origin, lo, hi, 0, u);
    TPMG_CPU_VNAME(simd_kron_laplace)(dim, n_pts, n_pts, mass, stiffness, u, t0, t1, t2, v);
    for (int l = 0; l < used; ++l)
      TPMG_CPU_VNAME(simd_scatter)(dim, n_pts, v, l, lvl->n, origin[l], none, all, data->dst, 1);
  }
}

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_VNAME(laplace_layer_##dim##d_q##k)(                                         \
      const TPMG_CPU_NAME(laplace_data) * data, tpmg_index c_s, char *scratch) {                   \
    TPMG_CPU_VNAME(laplace_layer)(data, c_s, (V *)scratch, dim, k);                                \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_VNAME(laplace_layer_##dim##d_q##k),
static TPMG_CPU_NAME(laplace_kernel) *const
    TPMG_CPU_VNAME(laplace_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

#endif
