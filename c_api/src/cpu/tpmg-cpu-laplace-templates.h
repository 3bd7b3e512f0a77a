/* CPU backend: the matrix-free level operator dst = A src.
 *
 * On a Cartesian level (or a rank's box) the assembled operator is a Kronecker
 * sum of 1D level matrices (paper section 2.3, "Matrix-Free Operation", summed
 * over the cells as in section 3.2):
 *   2D: A = K_y (x) M_x + M_y (x) K_x,
 *   3D: A = K_z (x) M_y (x) M_x + M_z (x) K_y (x) M_x + M_z (x) M_y (x) K_x,
 * where M_d and K_d are the 1D mass and stiffness matrices of direction d
 * assembled from the cell matrices: banded, a vertex row has 2k+1 entries, the
 * k-1 rows inside a cell k+1. Dirichlet entries of src are read as zero (the
 * first and last column of every 1D matrix dropped) and the Dirichlet rows of
 * A are identity rows: dst_B = src_B. Two kernels, one per case
 * (tpmg_cpu_laplace_by_cells):
 *
 * Kronecker sum. The factored form
 *   a = M_x u, b = K_x u,  c = M_y a, d = K_y a + M_y b,  dst = K_z c + M_z d
 * (2D: dst = K_y a + M_y b) with lanes along x, the contiguous direction:
 *   - x: a[i] = sum_j M_x[i][i+j] u[i+j], j = -k..k, the band stored as 2k+1
 *     diagonals of lane vectors (periodic in i), u read from a copy of the
 *     line with zeros around it, several lines per load of the diagonals;
 *   - y and z: a 1D entry is one scalar times a whole x-line, the rows of one
 *     cell accumulated in registers while the cell's input lines are read once.
 *     Along the slowest direction s the rows of a cell take its k+1 planes
 *     (2D: lines) only: a vertex row is its lower cell's sum, stored, plus its
 *     upper cell's, added when that cell comes.
 * The level is cut into tiles (a range of x, of y cells in 3D, of cells along
 * s) whose intermediates fit the caches: a tile streams along s, keeping c and
 * d (2D: a and b) of the current cell's k+1 planes (lines) in a ring. Tiles are
 * independent (each writes its own dst rows; the vertex row above a tile is
 * finished by that tile; a, b, c, d of the planes or lines around a tile are
 * computed again), and every dst row is the same sum in the same order
 * whatever the tiles or threads: the result does not depend on the thread
 * count.
 *
 * Cells. A = sum_K R_K^T A^K R_K over the cells K (paper section 3.2) with the
 * Cartesian cell matrix A^K applied by sum factorization, W cells at a time
 * in the lanes (gathered, scattered lane by lane): in layers along s, even
 * layers first, then odd ones (tpmg_cpu_layer_planes).
 *
 * A variable coefficient (tpmg_level.coefficient; tpmg_cpu_laplace_mode):
 * always the cells, A = sum_K (a_K A^K + c M^K), the 1D matrices without the
 * reaction c. Per cell, with n = k + 1 points per direction:
 *   - a constant on the cell (laplace_cell_coefficient): the factored form
 *     above with the last direction's terms regrouped,
 *       2D: out = K_y (a t_0) + M_y (a t_1 + c t_0),  t_0 = M_x u, t_1 = K_x u,
 *       3D: out = K_z (a t) + M_z (a d + c t),  t = M_y M_x u, d = K_y M_x u + M_y K_x u,
 *     and for c = 0 out = a (K_y t_0 + M_y t_1), a (K_z t + M_z d): the
 *     contractions of a = 1, plus 3 n^dim multiplications or multiply-adds
 *     (c = 0: n^dim).
 *   - a at the Gauss points x_q of QGauss(k+1) (laplace_cell_quadrature):
 *       A^K u = sum_d B_d^T diag(w_q |J| a_q / h_d^2) B_d u,
 *     B_d the basis's derivative in direction d and its values in the
 *     others at the points, |J| = h_0 h_1 (h_2), in collocation form (as
 *     deal.II's FEEvaluation with collocated gradients): v = (N (x) N (x) N) u,
 *     the values at the points with N_qj = phi_j(x_q); the gradients there
 *     g_d = D_d v along direction d, D_qp = l_p'(x_q) / h_d with l_p the
 *     Lagrange polynomials through the points (exact: along a line u is a
 *     polynomial of degree k, fixed by its k+1 values); then
 *       out = (N^T (x) N^T (x) N^T) [sum_d D_d^T (w |J| a g_d) + c w |J| v].
 *     The mass term by the same rule is the exact c M^K: k+1 Gauss points
 *     integrate phi_i phi_j, of degree 2k per direction, exactly. dim
 *     contractions to the points, dim for the gradients, as many back: 4 dim
 *     of n^(dim+1) multiply-adds (a = 1: 7 in 3D, 4 in 2D), plus (dim + 1)
 *     n^dim multiplications, n^dim more for c.
 * The level's coefficient data are read once per apply: one value per cell,
 * n^dim per cell with the quadrature.
 *
 * The generic body of the kernels, per scalar type T and width (tpmg-cpu.h):
 * the data of a call, the Kronecker sum's tile kernel of W lanes (W = 1 at the
 * scalar width: one-lane "vectors") and the cell-by-cell kernel, plain C at
 * the scalar width, lanes across cells at the SIMD widths; a table of each,
 * indexed by [dim - 2][k]. Instantiated by tpmg-cpu-laplace-double.c (the
 * scalar width, with the driver), tpmg-cpu-laplace-double-avx2.c,
 * tpmg-cpu-laplace-double-avx512.c and their float twins. */
#ifndef TPMG_CPU_LAPLACE_TEMPLATES_H
#define TPMG_CPU_LAPLACE_TEMPLATES_H

#if !defined(TPMG_CPU_SCALAR) || !defined(TPMG_CPU_ISA)
#error "define TPMG_CPU_SCALAR and TPMG_CPU_ISA before tpmg-cpu-laplace-templates.h"
#endif

#include "tpmg-cpu-laplace.h"
#include "tpmg-cpu-simd.h"
#include "tpmg-cpu-templates.h"

/* What every tile of one call needs. */
typedef struct {
  const tpmg_level *lvl;
  tpmg_cpu_laplace_plan plan;
  const T *diagonals[2]; /* M_x, K_x: diagonal j (-k..k) at [(j + k) period + i % period] */
  tpmg_index period;
  /* 3D: M_y and K_y, the rows 1..k of a cell's first k+1 rows (row k is the
   * vertex shared with the next cell), columns 0..2k of the cell and the
   * next, row-major; rows 1..k-1 have columns 0..k only. */
  T rows_mass[TPMG_MAX_DEGREE_3D * (2 * TPMG_MAX_DEGREE_3D + 1)];
  T rows_stiffness[TPMG_MAX_DEGREE_3D * (2 * TPMG_MAX_DEGREE_3D + 1)];
  /* the cell matrices of the slowest direction, row-major */
  T cell_mass[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  T cell_stiffness[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  const T *src;
  T *dst;
} TPMG_CPU_NAME(laplace_data);

/* One tile; scratch: the calling thread's block. */
typedef void TPMG_CPU_NAME(laplace_kernel)(const TPMG_CPU_NAME(laplace_data) *, tpmg_index, char *);

/* What every cell of one call needs; the 1D cell matrices column-major. */
typedef struct {
  const tpmg_level *lvl;
  T mass[3][TPMG_CPU_MAX_MATRIX];
  T stiffness[3][TPMG_CPU_MAX_MATRIX];
  /* TPMG_CPU_LAPLACE_CELLS: the level's coefficient array, _QUADRATURE: its
   * quadrature array; the reaction c (in no 1D matrix then) */
  const T *coefficient;
  T reaction;
  /* TPMG_CPU_LAPLACE_QUADRATURE (see laplace_cell_quadrature), column-major:
   * [0] the matrix, [1] its transpose */
  T interpolation[2][TPMG_CPU_MAX_MATRIX];   /* N, N_qj = phi_j(x_q) */
  T derivative[2][3][TPMG_CPU_MAX_MATRIX];   /* D_d, (D_d)_qp = l_p'(x_q) / h_d */
  T weights[TPMG_CPU_LAPLACE_MAX_CELL];      /* w_q |J| */
  T mass_weights[TPMG_CPU_LAPLACE_MAX_CELL]; /* c w_q |J| */
  const T *src;
  T *dst;
} TPMG_CPU_NAME(laplace_cells_data);

/* One layer; scratch: the calling thread's block (batched kernels only). */
typedef void TPMG_CPU_NAME(laplace_cells_kernel)(const TPMG_CPU_NAME(laplace_cells_data) *,
                                                 tpmg_index, char *);

/* The tables of the tile kernels of each width and of the batched cell
 * kernels, defined by the instances (the scalar width's cell kernels are the
 * plain ones below, in the driver's source). */
extern TPMG_CPU_TABLE(TPMG_CPU_NAME(laplace_kernel), tpmg_cpu_laplace_kernels, scalar);
TPMG_CPU_DECLARE_SIMD_TABLES(TPMG_CPU_NAME(laplace_kernel), tpmg_cpu_laplace_kernels);
TPMG_CPU_DECLARE_SIMD_TABLES(TPMG_CPU_NAME(laplace_cells_kernel), tpmg_cpu_laplace_cells_kernels);
TPMG_CPU_DECLARE_SIMD_TABLES(TPMG_CPU_NAME(laplace_cells_kernel),
                             tpmg_cpu_laplace_coefficient_kernels);
TPMG_CPU_DECLARE_SIMD_TABLES(TPMG_CPU_NAME(laplace_cells_kernel),
                             tpmg_cpu_laplace_quadrature_kernels);

#ifndef TPMG_CPU_SIMD_BYTES /* the scalar width */

/* out = a A^K u + c M^K u on a cell where a is constant (see the file's
 * comment); u is overwritten. */
TPMG_CPU_INLINE void TPMG_CPU_NAME(laplace_cell_coefficient)(int dim, int n, const T *const mass[3],
                                                             const T *const stiffness[3], T a, T c,
                                                             const T *scale, T *restrict u,
                                                             T *restrict out) {
  T t0[TPMG_CPU_LAPLACE_MAX_CELL], t1[TPMG_CPU_LAPLACE_MAX_CELL];
  const int slower = dim == 3 ? n * n : n, size = slower * n;
  TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, 1, slower, mass[0], u, t0, 0);
  TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, 1, slower, stiffness[0], u, t1, 0);
  T *t = t0, *d = t1;
  T t2[TPMG_CPU_LAPLACE_MAX_CELL];
  if (dim == 3) {
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n, n, mass[1], t0, t2, 0);
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n, n, stiffness[1], t0, u, 0);
    if (scale)
      for (int i = 0; i < size; ++i) {
        u[i] *= scale[1];
        t1[i] *= scale[0];
      }
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n, n, mass[1], t1, u, 1);
    t = t2;
    d = u;
  }
  if (scale && dim == 3) /* graded: d holds the y and x terms scaled already */
    for (int i = 0; i < size; ++i) {
      d[i] += scale[3] * t[i];
      t[i] *= scale[2];
    }
  else if (scale)
    for (int i = 0; i < size; ++i) {
      d[i] = scale[0] * d[i] + scale[3] * t[i];
      t[i] *= scale[1];
    }
  else if (c != 0)
    for (int i = 0; i < size; ++i) {
      d[i] = a * d[i] + c * t[i];
      t[i] *= a;
    }
  const int pre = dim == 3 ? n * n : n;
  TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, pre, 1, stiffness[dim - 1], t, out, 0);
  TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, pre, 1, mass[dim - 1], d, out, 1);
  if (!scale && c == 0)
    for (int i = 0; i < size; ++i)
      out[i] *= a;
}

/* out = A^K u + c M^K u with a at the cell's Gauss points, a[q] (see the
 * file's comment); u is overwritten. */
TPMG_CPU_INLINE void
TPMG_CPU_NAME(laplace_cell_quadrature)(const TPMG_CPU_NAME(laplace_cells_data) * data, int dim,
                                       int n, const T *restrict a, const T *scale, T *restrict u,
                                       T *restrict out) {
  T t0[TPMG_CPU_LAPLACE_MAX_CELL], t1[TPMG_CPU_LAPLACE_MAX_CELL], t2[TPMG_CPU_LAPLACE_MAX_CELL];
  const int slower = dim == 3 ? n * n : n, size = slower * n;
  const T *interpolation = data->interpolation[0], *interpolation_t = data->interpolation[1];
  const int c = data->reaction != 0;
  /* values at the points: v = (N (x) N (x) N) u; gradients g_d = D_d v in
   * t0, t1 (2D: u), u */
  T *values = dim == 3 ? t2 : t1, *gradient[3] = {t0, dim == 3 ? t1 : u, u};
  TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, 1, slower, interpolation, u, t0, 0);
  if (dim == 3) {
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n, n, interpolation, t0, t1, 0);
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n * n, 1, interpolation, t1, t2, 0);
  } else {
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n, 1, interpolation, t0, t1, 0);
  }
  for (int d = 0, pre = 1; d < dim; ++d, pre *= n)
    TPMG_CPU_NAME(tpmg_cpu_contract)
  (n, n, pre, size / (pre * n), data->derivative[0][d], values, gradient[d], 0);
  for (int q = 0; q < size && scale; ++q) { /* graded: per direction, mass last */
    const T g = data->weights[q] * a[q];
    for (int d = 0; d < dim; ++d)
      gradient[d][q] *= g * scale[d];
    if (c)
      out[q] = data->mass_weights[q] * scale[3] * values[q];
  }
  for (int q = 0; q < size && !scale; ++q) {
    const T g = data->weights[q] * a[q];
    for (int d = 0; d < dim; ++d)
      gradient[d][q] *= g;
    if (c)
      out[q] = data->mass_weights[q] * values[q];
  }
  /* sum_d D_d^T g_d (+ c w |J| v), then (N^T (x) N^T (x) N^T) */
  for (int d = 0, pre = 1; d < dim; ++d, pre *= n)
    TPMG_CPU_NAME(tpmg_cpu_contract)
  (n, n, pre, size / (pre * n), data->derivative[1][d], gradient[d], out, c || d > 0);
  TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, 1, slower, interpolation_t, out, t0, 0);
  if (dim == 3) {
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n, n, interpolation_t, t0, t1, 0);
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n * n, 1, interpolation_t, t1, out, 0);
  } else {
    TPMG_CPU_NAME(tpmg_cpu_contract)(n, n, n, 1, interpolation_t, t0, out, 0);
  }
}

/* dst += (a_K) A^K src (+ c M^K src) for the cells of one layer c_s along the
 * slowest direction; mode TPMG_CPU_LAPLACE_*, a constant in each instance. */
TPMG_CPU_INLINE void TPMG_CPU_NAME(laplace_cells_layer)(const TPMG_CPU_NAME(laplace_cells_data) *
                                                            data,
                                                        tpmg_index c_s, int dim, int k, int mode) {
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
      const tpmg_index cell = c0 + lvl->cells[0] * (c1 + cells_1 * c_s);
      /* a graded level: without a coefficient a = 1 */
      const T a = mode == TPMG_CPU_LAPLACE_CELLS && data->coefficient ? data->coefficient[cell] : 1;
      double factors[4] = {0, 0, 0, 0};
      T scale[4];
      if (lvl->widths[0]) {
        tpmg_cpu_laplace_graded(lvl, c, mode == TPMG_CPU_LAPLACE_CELLS ? a : 1,
                                mode == TPMG_CPU_LAPLACE_CELLS ? lvl->reaction : 1, factors);
        for (int e = 0; e < 4; ++e)
          scale[e] = (T)factors[e];
      }
      const T *graded = lvl->widths[0] ? scale : NULL;
      if (mode == TPMG_CPU_LAPLACE_UNIT)
        TPMG_CPU_NAME(tpmg_cpu_kron_laplace)(dim, n_pts, n_pts, mass, stiffness, u, v);
      else if (mode == TPMG_CPU_LAPLACE_CELLS)
        TPMG_CPU_NAME(laplace_cell_coefficient)
      (dim, n_pts, mass, stiffness, a, data->reaction, graded, u, v);
      else {
        const int size = dim == 3 ? n_pts * n_pts * n_pts : n_pts * n_pts;
        TPMG_CPU_NAME(laplace_cell_quadrature)
        (data, dim, n_pts, data->coefficient + cell * size, graded, u, v);
      }
      TPMG_CPU_NAME(tpmg_cpu_scatter)(dim, n_pts, v, lvl->n, origin, none, all, data->dst, 1);
    }
}

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_NAME(laplace_cells_##dim##d_q##k)(                                          \
      const TPMG_CPU_NAME(laplace_cells_data) * data, tpmg_index c_s, char *scratch) {             \
    TPMG_CPU_NAME(laplace_cells_layer)(data, c_s, dim, k, TPMG_CPU_LAPLACE_UNIT);                  \
  }                                                                                                \
  static void TPMG_CPU_NAME(laplace_coefficient_##dim##d_q##k)(                                    \
      const TPMG_CPU_NAME(laplace_cells_data) * data, tpmg_index c_s, char *scratch) {             \
    TPMG_CPU_NAME(laplace_cells_layer)(data, c_s, dim, k, TPMG_CPU_LAPLACE_CELLS);                 \
  }                                                                                                \
  static void TPMG_CPU_NAME(laplace_quadrature_##dim##d_q##k)(                                     \
      const TPMG_CPU_NAME(laplace_cells_data) * data, tpmg_index c_s, char *scratch) {             \
    TPMG_CPU_NAME(laplace_cells_layer)(data, c_s, dim, k, TPMG_CPU_LAPLACE_QUADRATURE);            \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

/* by [mode][dim - 2][k] */
#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_NAME(laplace_cells_##dim##d_q##k),
#define TPMG_CPU_ENTRY_CELLS(dim, k)                                                               \
  [dim - 2][k] = TPMG_CPU_NAME(laplace_coefficient_##dim##d_q##k),
#define TPMG_CPU_ENTRY_QUADRATURE(dim, k)                                                          \
  [dim - 2][k] = TPMG_CPU_NAME(laplace_quadrature_##dim##d_q##k),
static TPMG_CPU_NAME(laplace_cells_kernel) *const
    TPMG_CPU_NAME(laplace_cells_kernels)[3][2][TPMG_MAX_DEGREE_2D + 1] = {
        {TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)},
        {TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY_CELLS)},
        {TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY_QUADRATURE)}};
#undef TPMG_CPU_ENTRY_QUADRATURE
#undef TPMG_CPU_ENTRY_CELLS
#undef TPMG_CPU_ENTRY

/* one-lane "vectors" */
#define V T
#define W 1

#else /* a SIMD width: lanes across cells */

#include "tpmg-cpu-simd-templates.h"

/* laplace_cell_coefficient on W cells, a per lane; t0, t1, t2 scratch. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(laplace_cell_coefficient)(
    int dim, int n, const T *const mass[3], const T *const stiffness[3], V a, T c, const V *scale,
    V *restrict u, V *restrict t0, V *restrict t1, V *restrict t2, V *restrict out) {
  const int slower = dim == 3 ? n * n : n, size = slower * n;
  TPMG_CPU_VNAME(simd_contract)(n, n, 1, slower, mass[0], u, t0, 0);
  TPMG_CPU_VNAME(simd_contract)(n, n, 1, slower, stiffness[0], u, t1, 0);
  V *t = t0, *d = t1;
  if (dim == 3) {
    TPMG_CPU_VNAME(simd_contract)(n, n, n, n, mass[1], t0, t2, 0);
    TPMG_CPU_VNAME(simd_contract)(n, n, n, n, stiffness[1], t0, u, 0);
    if (scale)
      for (int i = 0; i < size; ++i) {
        u[i] *= scale[1];
        t1[i] *= scale[0];
      }
    TPMG_CPU_VNAME(simd_contract)(n, n, n, n, mass[1], t1, u, 1);
    t = t2;
    d = u;
  }
  if (scale && dim == 3) /* graded: d holds the y and x terms scaled already */
    for (int i = 0; i < size; ++i) {
      d[i] += scale[3] * t[i];
      t[i] *= scale[2];
    }
  else if (scale)
    for (int i = 0; i < size; ++i) {
      d[i] = scale[0] * d[i] + scale[3] * t[i];
      t[i] *= scale[1];
    }
  else if (c != 0)
    for (int i = 0; i < size; ++i) {
      d[i] = a * d[i] + c * t[i];
      t[i] *= a;
    }
  const int pre = dim == 3 ? n * n : n;
  TPMG_CPU_VNAME(simd_contract)(n, n, pre, 1, stiffness[dim - 1], t, out, 0);
  TPMG_CPU_VNAME(simd_contract)(n, n, pre, 1, mass[dim - 1], d, out, 1);
  if (!scale && c == 0)
    for (int i = 0; i < size; ++i)
      out[i] *= a;
}

/* laplace_cell_quadrature on the `used` cells whose values at the points
 * start at a (consecutive cells, a[l size + q] for lane l), in the lanes (the
 * unused ones repeat the last cell); t0, t1, t2, lanes scratch. The values
 * are first transposed into lanes (lane l of lanes[q] = a at point q of cell
 * l), value by value: put together point by point, each lane vector would be
 * loaded right after its lanes were stored, stalling on the store buffer. */
TPMG_CPU_INLINE void
TPMG_CPU_VNAME(laplace_cell_quadrature)(const TPMG_CPU_NAME(laplace_cells_data) * data, int dim,
                                        int n, const T *restrict a, const V *scale, int used,
                                        V *restrict u, V *restrict t0, V *restrict t1,
                                        V *restrict t2, V *restrict lanes, V *restrict out) {
  const int slower = dim == 3 ? n * n : n, size = slower * n;
  const T *interpolation = data->interpolation[0], *interpolation_t = data->interpolation[1];
  const int c = data->reaction != 0;
  V *values = dim == 3 ? t2 : t1, *gradient[3] = {t0, dim == 3 ? t1 : u, u};
  TPMG_CPU_VNAME(simd_contract)(n, n, 1, slower, interpolation, u, t0, 0);
  if (dim == 3) {
    TPMG_CPU_VNAME(simd_contract)(n, n, n, n, interpolation, t0, t1, 0);
    TPMG_CPU_VNAME(simd_contract)(n, n, n * n, 1, interpolation, t1, t2, 0);
  } else {
    TPMG_CPU_VNAME(simd_contract)(n, n, n, 1, interpolation, t0, t1, 0);
  }
  for (int d = 0, pre = 1; d < dim; ++d, pre *= n)
    TPMG_CPU_VNAME(simd_contract)
  (n, n, pre, size / (pre * n), data->derivative[0][d], values, gradient[d], 0);
  for (int l = 0; l < W; ++l) {
    const T *restrict cell = a + (l < used ? l : used - 1) * size;
    for (int q = 0; q < size; ++q)
      lanes[q][l] = cell[q];
  }
  for (int q = 0; q < size && scale; ++q) { /* graded: per direction, mass last */
    const V g = lanes[q] * data->weights[q];
    for (int d = 0; d < dim; ++d)
      gradient[d][q] *= g * scale[d];
    if (c)
      out[q] = data->mass_weights[q] * scale[3] * values[q];
  }
  for (int q = 0; q < size && !scale; ++q) {
    const V g = lanes[q] * data->weights[q];
    for (int d = 0; d < dim; ++d)
      gradient[d][q] *= g;
    if (c)
      out[q] = data->mass_weights[q] * values[q];
  }
  for (int d = 0, pre = 1; d < dim; ++d, pre *= n)
    TPMG_CPU_VNAME(simd_contract)
  (n, n, pre, size / (pre * n), data->derivative[1][d], gradient[d], out, c || d > 0);
  TPMG_CPU_VNAME(simd_contract)(n, n, 1, slower, interpolation_t, out, t0, 0);
  if (dim == 3) {
    TPMG_CPU_VNAME(simd_contract)(n, n, n, n, interpolation_t, t0, t1, 0);
    TPMG_CPU_VNAME(simd_contract)(n, n, n * n, 1, interpolation_t, t1, out, 0);
  } else {
    TPMG_CPU_VNAME(simd_contract)(n, n, n, 1, interpolation_t, t0, out, 0);
  }
}

/* laplace_layer on W cells at a time, in the order of laplace_layer; scratch
 * holds 5 (k+1)^dim lane vectors, 6 for TPMG_CPU_LAPLACE_QUADRATURE. */
TPMG_CPU_INLINE void
TPMG_CPU_VNAME(laplace_cells_layer)(const TPMG_CPU_NAME(laplace_cells_data) * data, tpmg_index c_s,
                                    V *restrict scratch, int dim, int k, int mode) {
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
    if (mode == TPMG_CPU_LAPLACE_UNIT) {
      TPMG_CPU_VNAME(simd_kron_laplace)(dim, n_pts, n_pts, mass, stiffness, u, t0, t1, t2, v);
    } else {
      /* the layer's cells are the box's cells c_s count .. c_s count + count - 1 */
      const tpmg_index cell = c_s * count + first;
      /* a graded level: without a coefficient a = 1 */
      V a, scale[4];
      for (int l = 0; l < W; ++l)
        a[l] = mode == TPMG_CPU_LAPLACE_CELLS && data->coefficient
                   ? data->coefficient[cell + (l < used ? l : used - 1)]
                   : 1;
      if (lvl->widths[0])
        for (int l = 0; l < W; ++l) {
          const tpmg_index e = first + (l < used ? l : used - 1);
          const tpmg_index c[3] = {e % cells_0, dim == 3 ? e / cells_0 : c_s, dim == 3 ? c_s : 0};
          double factors[4] = {0, 0, 0, 0};
          tpmg_cpu_laplace_graded(lvl, c, mode == TPMG_CPU_LAPLACE_CELLS ? a[l] : 1,
                                  mode == TPMG_CPU_LAPLACE_CELLS ? lvl->reaction : 1, factors);
          for (int f = 0; f < 4; ++f)
            scale[f][l] = (T)factors[f];
        }
      const V *graded = lvl->widths[0] ? scale : NULL;
      if (mode == TPMG_CPU_LAPLACE_CELLS) {
        TPMG_CPU_VNAME(laplace_cell_coefficient)
        (dim, n_pts, mass, stiffness, a, data->reaction, graded, u, t0, t1, t2, v);
      } else {
        TPMG_CPU_VNAME(laplace_cell_quadrature)
        (data, dim, n_pts, data->coefficient + cell * size, graded, used, u, t0, t1, t2, t2 + size,
         v);
      }
    }
    for (int l = 0; l < used; ++l)
      TPMG_CPU_VNAME(simd_scatter)(dim, n_pts, v, l, lvl->n, origin[l], none, all, data->dst, 1);
  }
}

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_VNAME(laplace_cells_##dim##d_q##k)(                                         \
      const TPMG_CPU_NAME(laplace_cells_data) * data, tpmg_index c_s, char *scratch) {             \
    TPMG_CPU_VNAME(laplace_cells_layer)(data, c_s, (V *)scratch, dim, k, TPMG_CPU_LAPLACE_UNIT);   \
  }                                                                                                \
  static void TPMG_CPU_VNAME(laplace_coefficient_##dim##d_q##k)(                                   \
      const TPMG_CPU_NAME(laplace_cells_data) * data, tpmg_index c_s, char *scratch) {             \
    TPMG_CPU_VNAME(laplace_cells_layer)(data, c_s, (V *)scratch, dim, k, TPMG_CPU_LAPLACE_CELLS);  \
  }                                                                                                \
  static void TPMG_CPU_VNAME(laplace_quadrature_##dim##d_q##k)(                                    \
      const TPMG_CPU_NAME(laplace_cells_data) * data, tpmg_index c_s, char *scratch) {             \
    TPMG_CPU_VNAME(laplace_cells_layer)                                                            \
    (data, c_s, (V *)scratch, dim, k, TPMG_CPU_LAPLACE_QUADRATURE);                                \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_VNAME(laplace_cells_##dim##d_q##k),
TPMG_CPU_TABLE(TPMG_CPU_NAME(laplace_cells_kernel), tpmg_cpu_laplace_cells_kernels,
               TPMG_CPU_ISA) = {TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY
#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_VNAME(laplace_coefficient_##dim##d_q##k),
TPMG_CPU_TABLE(TPMG_CPU_NAME(laplace_cells_kernel), tpmg_cpu_laplace_coefficient_kernels,
               TPMG_CPU_ISA) = {TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY
#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_VNAME(laplace_quadrature_##dim##d_q##k),
TPMG_CPU_TABLE(TPMG_CPU_NAME(laplace_cells_kernel), tpmg_cpu_laplace_quadrature_kernels,
               TPMG_CPU_ISA) = {TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

#endif

TPMG_CPU_INLINE V TPMG_CPU_VNAME(laplace_load)(const T *p) {
  V v;
  memcpy(&v, p, sizeof(V));
  return v;
}

/* the first `count` lanes of v to p */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(laplace_store)(T *p, V v, tpmg_index count) {
  if (count >= W) {
    memcpy(p, &v, sizeof(V));
  } else {
    T lanes[W];
    memcpy(lanes, &v, sizeof(V));
    for (tpmg_index l = 0; l < count; ++l)
      p[l] = lanes[l];
  }
}

/* the integers of T's size (shuffle masks) */
#define TPMG_CPU_LAPLACE_INT_double long long
#define TPMG_CPU_LAPLACE_INT_float int

/* a_l = M_x u_l and b_l = K_x u_l for G lines, n_v lane vectors from point
 * `first` on: u_l[j + i] is the point i + j - k of line l. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(laplace_x)(int k, int G, tpmg_index n_v,
                                               const T *const diagonals[2], tpmg_index period,
                                               tpmg_index first, T *const u[], T *const a[],
                                               T *const b[]) {
  for (tpmg_index v = 0; v < n_v; ++v) {
    const tpmg_index at = (first + v * W) % period;
    V am[TPMG_CPU_LAPLACE_GROUP], bk[TPMG_CPU_LAPLACE_GROUP];
    for (int l = 0; l < G; ++l)
      am[l] = bk[l] = (V){0};
    TPMG_CPU_UNROLL
    for (int j = 0; j <= 2 * k; ++j) {
      const V m = TPMG_CPU_VNAME(laplace_load)(diagonals[0] + j * period + at);
      const V s = TPMG_CPU_VNAME(laplace_load)(diagonals[1] + j * period + at);
      for (int l = 0; l < G; ++l) {
#if defined(TPMG_CPU_SIMD_BYTES) && TPMG_CPU_SIMD_BYTES == 64
        /* u shifted by j from two aligned vectors (one valign instead of a
         * load across cache lines) */
        typedef TPMG_CPU_NAME(TPMG_CPU_LAPLACE_INT) M
            __attribute__((vector_size(TPMG_CPU_SIMD_BYTES)));
        M shift;
        for (int i = 0; i < W; ++i)
          shift[i] = j % W + i;
        const V x =
            __builtin_shuffle(TPMG_CPU_VNAME(laplace_load)(u[l] + v * W + j / W * W),
                              TPMG_CPU_VNAME(laplace_load)(u[l] + v * W + j / W * W + W), shift);
#else
        const V x = TPMG_CPU_VNAME(laplace_load)(u[l] + v * W + j);
#endif
        am[l] += m * x;
        bk[l] += s * x;
      }
    }
    for (int l = 0; l < G; ++l) {
      memcpy(a[l] + v * W, &am[l], sizeof(V));
      memcpy(b[l] + v * W, &bk[l], sizeof(V));
    }
  }
}

/* Rows 1..k of one cell along y (row k, the vertex, only if `vertex`),
 * pointwise over n_v lane vectors of `count` points:
 *   o_r = sum_j K_rj p_j + M_rj q_j,  c_r = sum_j M_rj p_j,
 * j over the cell's columns 0..k (the vertex row over 0..2k): p_j, q_j are
 * the lines of a and b of the cell's rows j, mass and stiffness the rows of
 * data's rows_mass, rows_stiffness. The accumulators of all rows stay in
 * registers while each input is read once. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(laplace_y)(int k, int vertex, tpmg_index n_v, tpmg_index count,
                                               const T *restrict mass, const T *restrict stiffness,
                                               const T *const p[], const T *const q[], T *const o[],
                                               T *const c[]) {
  const int rows = vertex ? k : k - 1, band = 2 * k + 1;
  for (tpmg_index v = 0; v < n_v; ++v) {
    V so[TPMG_MAX_DEGREE_2D], sc[TPMG_MAX_DEGREE_2D];
    TPMG_CPU_UNROLL
    for (int r = 0; r < k; ++r)
      so[r] = sc[r] = (V){0};
    TPMG_CPU_UNROLL
    for (int j = 0; j <= k; ++j) {
      const V pj = TPMG_CPU_VNAME(laplace_load)(p[j] + v * W);
      const V qj = TPMG_CPU_VNAME(laplace_load)(q[j] + v * W);
      TPMG_CPU_UNROLL
      for (int r = 0; r < rows; ++r) {
        so[r] += stiffness[r * band + j] * pj;
        so[r] += mass[r * band + j] * qj;
        sc[r] += mass[r * band + j] * pj;
      }
    }
    if (vertex) {
      TPMG_CPU_UNROLL
      for (int j = k + 1; j <= 2 * k; ++j) {
        const V pj = TPMG_CPU_VNAME(laplace_load)(p[j] + v * W);
        const V qj = TPMG_CPU_VNAME(laplace_load)(q[j] + v * W);
        so[k - 1] += stiffness[(k - 1) * band + j] * pj;
        so[k - 1] += mass[(k - 1) * band + j] * qj;
        sc[k - 1] += mass[(k - 1) * band + j] * pj;
      }
    }
    const tpmg_index left = count - v * W;
    TPMG_CPU_UNROLL
    for (int r = 0; r < rows; ++r) {
      TPMG_CPU_VNAME(laplace_store)(o[r] + v * W, so[r], left);
      TPMG_CPU_VNAME(laplace_store)(c[r] + v * W, sc[r], left);
    }
  }
}

/* Rows first..last of one cell along the slowest direction, pointwise over
 * n_v lane vectors of `count` points: o_r = sum_j K_rj p_j + M_rj q_j, j =
 * 0..k, with the cell matrices K and M and p_j, q_j the cell's planes (2D:
 * lines) j. Row 0, the vertex shared with the cell below, adds to what row k
 * of that cell left in o_0: a vertex row is the sum over the lower cell, then
 * over the upper one, wherever the tiles are cut. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(laplace_cell_vectors)(
    int k, int first, int last, int U, tpmg_index v0, tpmg_index count, const T *restrict mass,
    const T *restrict stiffness, const T *const p[], const T *const q[], T *const o[]) {
  V acc[2][TPMG_MAX_DEGREE_2D + 1];
  for (int u = 0; u < U; ++u) {
    const tpmg_index v = v0 + u, left = count - v * W;
    TPMG_CPU_UNROLL
    for (int r = first; r <= last; ++r)
      acc[u][r] = (V){0};
    if (first == 0) {
      if (left >= W) {
        acc[u][0] = TPMG_CPU_VNAME(laplace_load)(o[0] + v * W);
      } else {
        T lanes[W];
        for (int l = 0; l < W; ++l)
          lanes[l] = l < left ? o[0][v * W + l] : 0;
        memcpy(&acc[u][0], lanes, sizeof(V));
      }
    }
  }
  TPMG_CPU_UNROLL
  for (int j = 0; j <= k; ++j) {
    V pj[2], qj[2];
    for (int u = 0; u < U; ++u) {
      pj[u] = TPMG_CPU_VNAME(laplace_load)(p[j] + (v0 + u) * W);
      qj[u] = TPMG_CPU_VNAME(laplace_load)(q[j] + (v0 + u) * W);
    }
    TPMG_CPU_UNROLL
    for (int r = first; r <= last; ++r) {
      const T kr = stiffness[r * (k + 1) + j], mr = mass[r * (k + 1) + j];
      for (int u = 0; u < U; ++u) {
        acc[u][r] += kr * pj[u];
        acc[u][r] += mr * qj[u];
      }
    }
  }
  for (int u = 0; u < U; ++u) {
    TPMG_CPU_UNROLL
    for (int r = first; r <= last; ++r)
      TPMG_CPU_VNAME(laplace_store)(o[r] + (v0 + u) * W, acc[u][r], count - (v0 + u) * W);
  }
}

/* Two vectors at a time where 32 registers hold their accumulators: each
 * broadcast entry then serves two multiply-adds. */
#if defined(TPMG_CPU_SIMD_BYTES) && TPMG_CPU_SIMD_BYTES == 64
#define TPMG_CPU_LAPLACE_UNROLL 2
#else
#define TPMG_CPU_LAPLACE_UNROLL 1
#endif

TPMG_CPU_INLINE void TPMG_CPU_VNAME(laplace_cell)(int k, int first, int last, tpmg_index n_v,
                                                  tpmg_index count, const T *restrict mass,
                                                  const T *restrict stiffness, const T *const p[],
                                                  const T *const q[], T *const o[]) {
  tpmg_index v = 0;
  for (; v + TPMG_CPU_LAPLACE_UNROLL <= n_v; v += TPMG_CPU_LAPLACE_UNROLL)
    TPMG_CPU_VNAME(laplace_cell_vectors)
  (k, first, last, TPMG_CPU_LAPLACE_UNROLL, v, count, mass, stiffness, p, q, o);
  for (; v < n_v; ++v)
    TPMG_CPU_VNAME(laplace_cell_vectors)(k, first, last, 1, v, count, mass, stiffness, p, q, o);
}
#undef TPMG_CPU_LAPLACE_UNROLL

/* The scratch of one tile, as laplace_scratch_bytes lays it out. */
typedef struct {
  T *copy[TPMG_CPU_LAPLACE_GROUP];
  T *a, *b;   /* lines_ab lines of a tile's width */
  T *ring[2]; /* k+1 slots of lines_cd lines: c and d (2D: a and b) */
} TPMG_CPU_VNAME(laplace_scratch);

/* Lines waiting for laplace_flush: their src, a and b. */
typedef struct {
  int count;
  const T *src[TPMG_CPU_LAPLACE_GROUP];
  T *a[TPMG_CPU_LAPLACE_GROUP], *b[TPMG_CPU_LAPLACE_GROUP];
} TPMG_CPU_VNAME(laplace_lines);

/* a = M_x u and b = K_x u of the waiting lines, for x points x0 .. x0 + n_v W - 1. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(laplace_flush)(const TPMG_CPU_NAME(laplace_data) * data, int k,
                                                   const TPMG_CPU_VNAME(laplace_scratch) * s,
                                                   TPMG_CPU_VNAME(laplace_lines) * lines,
                                                   tpmg_index x0, tpmg_index n_v) {
  const tpmg_level *lvl = data->lvl;
  const tpmg_index width = n_v * W, n_x = data->plan.n_x;
  /* the copies hold points x0 - k .. x0 + width + k - 1 (zero outside 0..n_x-1) */
  const tpmg_index lo = x0 - k > 0 ? x0 - k : 0;
  const tpmg_index hi = x0 + width + k < n_x ? x0 + width + k : n_x;
  const size_t copy_len = (size_t)(width + 2 * k + W); /* W to spare: laplace_x's last vector */
  const int G = lines->count;
  for (int l = 0; l < G; ++l) {
    T *copy = s->copy[l];
    const T *line = lines->src[l];
    /* the same points of the next plane, which a 3D tile reads next: its
     * lines are too short and far apart for the hardware prefetcher */
#if defined(__GNUC__)
    if (lvl->dim == 3 && line + lvl->n[0] * lvl->n[1] < data->src + lvl->n_dofs)
      for (tpmg_index i = lo; i < hi; i += 64 / (tpmg_index)sizeof(T))
        __builtin_prefetch(line + lvl->n[0] * lvl->n[1] + i, 0, 1);
#endif
    memset(copy, 0, (size_t)(lo - (x0 - k)) * sizeof(T));
    memcpy(copy + (lo - (x0 - k)), line + lo, (size_t)(hi - lo) * sizeof(T));
    memset(copy + (hi - (x0 - k)), 0, (copy_len - (size_t)(hi - (x0 - k))) * sizeof(T));
  }
  const T *const *diagonals = data->diagonals;
  const tpmg_index period = data->period;
  if (G == 4)
    TPMG_CPU_VNAME(laplace_x)(k, 4, n_v, diagonals, period, x0, s->copy, lines->a, lines->b);
  else if (G == 3)
    TPMG_CPU_VNAME(laplace_x)(k, 3, n_v, diagonals, period, x0, s->copy, lines->a, lines->b);
  else if (G == 2)
    TPMG_CPU_VNAME(laplace_x)(k, 2, n_v, diagonals, period, x0, s->copy, lines->a, lines->b);
  else if (G == 1)
    TPMG_CPU_VNAME(laplace_x)(k, 1, n_v, diagonals, period, x0, s->copy, lines->a, lines->b);
  lines->count = 0;
}

/* a and b of the level's x-line y of plane z (2D: z = 0) into a, b (zero on
 * a Dirichlet line), computed with the lines waiting before it once
 * TPMG_CPU_LAPLACE_GROUP of them wait. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(laplace_line)(const TPMG_CPU_NAME(laplace_data) * data, int k,
                                                  const TPMG_CPU_VNAME(laplace_scratch) * s,
                                                  TPMG_CPU_VNAME(laplace_lines) * lines,
                                                  tpmg_index z, tpmg_index y, tpmg_index x0,
                                                  tpmg_index n_v, T *a, T *b) {
  const tpmg_level *lvl = data->lvl;
  if (y == 0 || y == lvl->n[1] - 1 || (lvl->dim == 3 && (z == 0 || z == lvl->n[2] - 1))) {
    memset(a, 0, (size_t)(n_v * W) * sizeof(T));
    memset(b, 0, (size_t)(n_v * W) * sizeof(T));
    return;
  }
  lines->src[lines->count] = data->src + (z * lvl->n[1] + y) * lvl->n[0] + 1;
  lines->a[lines->count] = a;
  lines->b[lines->count] = b;
  if (++lines->count == TPMG_CPU_LAPLACE_GROUP)
    TPMG_CPU_VNAME(laplace_flush)(data, k, s, lines, x0, n_v);
}

/* One tile (see the file's comment). */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(laplace_tile)(const TPMG_CPU_NAME(laplace_data) * data,
                                                  tpmg_index tile, char *scratch, int dim, int k) {
  const tpmg_level *lvl = data->lvl;
  const tpmg_cpu_laplace_plan *plan = &data->plan;
  const int s_dir = dim - 1;
  const tpmg_index t_x = tile % plan->tiles[0];
  const tpmg_index t_y = tile / plan->tiles[0] % plan->tiles[1];
  const tpmg_index t_s = tile / plan->tiles[0] / plan->tiles[1];
  const tpmg_index x0 = t_x * plan->tile_x;
  const tpmg_index count = x0 + plan->tile_x < plan->n_x ? plan->tile_x : plan->n_x - x0;
  const tpmg_index n_v = (count + W - 1) / W, width = n_v * W;
  const tpmg_index n_s = lvl->n[s_dir], cells_s = lvl->cells[s_dir];
  const tpmg_index cs0 = t_s * plan->tile_s;
  const tpmg_index cs1 = cs0 + plan->tile_s < cells_s ? cs0 + plan->tile_s : cells_s;
  /* 3D: c, d on y-lines y_cd .. y_cd + lines_cd - 1, a, b on y_ab .. y_ab_last */
  tpmg_index cy0 = 0, cy1 = 1, y_ab = 0, y_ab_last = 0, y_cd = 0, lines_cd = 1;
  if (dim == 3) {
    cy0 = t_y * plan->tile_y;
    cy1 = cy0 + plan->tile_y < lvl->cells[1] ? cy0 + plan->tile_y : lvl->cells[1];
    y_ab = cy0 * k;
    y_ab_last = cy1 == lvl->cells[1] ? cy1 * k : cy1 * k + k;
    y_cd = cy0 * k + 1;
    lines_cd = (cy1 == lvl->cells[1] ? cy1 * k - 1 : cy1 * k) - y_cd + 1;
  }
  TPMG_CPU_VNAME(laplace_scratch) s;
  {
    const size_t copy = ((size_t)(plan->tile_x + 2 * k + W) * sizeof(T) + 63) / 64 * 64;
    const size_t line = (size_t)width * sizeof(T);
    char *at = scratch;
    for (int l = 0; l < TPMG_CPU_LAPLACE_GROUP; ++l, at += copy)
      s.copy[l] = (T *)at;
    s.a = (T *)at;
    s.b = (T *)(at + (size_t)plan->lines_ab * line);
    at += 2 * (size_t)plan->lines_ab * line;
    s.ring[0] = (T *)at;
    s.ring[1] = (T *)(at + (size_t)(k + 1) * (size_t)plan->lines_cd * line);
  }
  const size_t slot = (size_t)lines_cd * (size_t)width;
  TPMG_CPU_VNAME(laplace_lines) lines = {0};
  tpmg_index done = cs0 * k - 1; /* the last plane (line) along s in the ring */
  /* the cells cs0..cs1-1, then row 0 of cell cs1 (the vertex above the tile) */
  const tpmg_index cs_last = cs1 < cells_s ? cs1 : cells_s - 1;
  for (tpmg_index cs = cs0; cs <= cs_last; ++cs) {
    for (tpmg_index p = done + 1 > cs * k ? done + 1 : cs * k; p <= cs * k + k; ++p) {
      T *ring_p = s.ring[0] + (size_t)(p % (k + 1)) * slot;
      T *ring_q = s.ring[1] + (size_t)(p % (k + 1)) * slot;
      if (p == 0 || p == n_s - 1) {
        memset(ring_p, 0, slot * sizeof(T));
        memset(ring_q, 0, slot * sizeof(T));
        continue;
      }
      if (dim == 2) {
        TPMG_CPU_VNAME(laplace_line)(data, k, &s, &lines, 0, p, x0, n_v, ring_p, ring_q);
        continue;
      }
      for (tpmg_index y = y_ab; y <= y_ab_last; ++y)
        TPMG_CPU_VNAME(laplace_line)
      (data, k, &s, &lines, p, y, x0, n_v, s.a + (y - y_ab) * width, s.b + (y - y_ab) * width);
      TPMG_CPU_VNAME(laplace_flush)(data, k, &s, &lines, x0, n_v);
      /* c = M_y a into ring_p, d = K_y a + M_y b into ring_q */
      for (tpmg_index cy = cy0; cy < cy1; ++cy) {
        const int vertex_y = cy < lvl->cells[1] - 1;
        const T *in_a[2 * TPMG_MAX_DEGREE_2D + 1], *in_b[2 * TPMG_MAX_DEGREE_2D + 1];
        T *out_c[TPMG_MAX_DEGREE_2D], *out_d[TPMG_MAX_DEGREE_2D];
        for (int j = 0; j <= (vertex_y ? 2 * k : k); ++j) {
          in_a[j] = s.a + (cy * k + j - y_ab) * width;
          in_b[j] = s.b + (cy * k + j - y_ab) * width;
        }
        for (int r = 1; r <= (vertex_y ? k : k - 1); ++r) {
          out_c[r - 1] = ring_p + (cy * k + r - y_cd) * width;
          out_d[r - 1] = ring_q + (cy * k + r - y_cd) * width;
        }
        /* constant row counts: the accumulators stay in registers */
        if (vertex_y)
          TPMG_CPU_VNAME(laplace_y)
        (k, 1, n_v, width, data->rows_mass, data->rows_stiffness, in_a, in_b, out_d, out_c);
        else TPMG_CPU_VNAME(laplace_y)(k, 0, n_v, width, data->rows_mass, data->rows_stiffness,
                                       in_a, in_b, out_d, out_c);
      }
    }
    TPMG_CPU_VNAME(laplace_flush)(data, k, &s, &lines, x0, n_v);
    done = cs * k + k;
    /* dst rows first..last of cell cs: K_s P + M_s Q */
    const int first = cs > cs0 ? 0 : 1;
    const int last = cs == cs1 ? 0 : cs == cells_s - 1 ? k - 1 : k;
    for (tpmg_index line = 0; line < lines_cd; ++line) {
      const T *in_p[TPMG_MAX_DEGREE_2D + 1], *in_q[TPMG_MAX_DEGREE_2D + 1];
      T *out[TPMG_MAX_DEGREE_2D + 1];
      for (int j = 0; j <= k; ++j) {
        const size_t at = (size_t)((cs * k + j) % (k + 1)) * slot + (size_t)(line * width);
        in_p[j] = s.ring[0] + at;
        in_q[j] = s.ring[1] + at;
        const tpmg_index y = dim == 3 ? y_cd + line : cs * k + j, z = dim == 3 ? cs * k + j : 0;
        out[j] = data->dst + (z * lvl->n[1] + y) * lvl->n[0] + 1 + x0;
      }
      const T *mass = data->cell_mass, *stiffness = data->cell_stiffness;
      if (first == 0 && last == 0)
        TPMG_CPU_VNAME(laplace_cell)(k, 0, 0, n_v, count, mass, stiffness, in_p, in_q, out);
      else if (first == 0 && last == k)
        TPMG_CPU_VNAME(laplace_cell)(k, 0, k, n_v, count, mass, stiffness, in_p, in_q, out);
      else if (first == 0)
        TPMG_CPU_VNAME(laplace_cell)(k, 0, k - 1, n_v, count, mass, stiffness, in_p, in_q, out);
      else if (last == k)
        TPMG_CPU_VNAME(laplace_cell)(k, 1, k, n_v, count, mass, stiffness, in_p, in_q, out);
      else
        TPMG_CPU_VNAME(laplace_cell)(k, 1, k - 1, n_v, count, mass, stiffness, in_p, in_q, out);
    }
  }
}

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_VNAME(laplace_tile_##dim##d_q##k)(const TPMG_CPU_NAME(laplace_data) * data, \
                                                         tpmg_index tile, char *scratch) {         \
    TPMG_CPU_VNAME(laplace_tile)(data, tile, scratch, dim, k);                                     \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_VNAME(laplace_tile_##dim##d_q##k),
TPMG_CPU_TABLE(TPMG_CPU_NAME(laplace_kernel), tpmg_cpu_laplace_kernels,
               TPMG_CPU_ISA) = {TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

#endif
