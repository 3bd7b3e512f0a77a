/* CPU backend, the level operator: what tpmg-cpu-laplace.c and the instances
 * of the operator's templates (tpmg-cpu-laplace-templates.h, the kernels;
 * tpmg-cpu-laplace-driver-templates.h, the driver) share: how a call cuts the
 * level into tiles, and which kernel a case takes. */
#ifndef TPMG_CPU_LAPLACE_H
#define TPMG_CPU_LAPLACE_H

#include "tpmg-cpu.h"

/* x-lines transformed together: the diagonals loaded once for all of them. */
#define TPMG_CPU_LAPLACE_GROUP 4

/* How one call cuts the level into tiles, from the level, the width and the
 * thread count alone. In x, indices count the interior points i = x - 1. */
typedef struct {
  int k, dim, lanes;
  tpmg_index n_x;       /* interior points per x-line, n[0] - 2 */
  tpmg_index n_x_pad;   /* n_x rounded up to lanes */
  tpmg_index tile_x;    /* x points per tile, a multiple of lanes */
  tpmg_index tile_y;    /* y cells per tile (3D; 2D: 1) */
  tpmg_index tile_s;    /* cells along the slowest direction per tile */
  tpmg_index tiles[3];  /* tiles along x, y, s */
  tpmg_index lines_cd;  /* the most y-lines of c, d in one tile (2D: 1) */
  tpmg_index lines_ab;  /* the most y-lines of a, b in one tile (2D: 0, a and b live in the ring) */
  size_t scratch_bytes; /* per thread */
} tpmg_cpu_laplace_plan;

/* The plan of a call on lvl with `lanes` points per lane vector of `size`
 * bytes on `threads` threads. */
void tpmg_cpu_laplace_make_plan(const tpmg_level *lvl, int lanes, size_t size, int threads,
                                tpmg_cpu_laplace_plan *plan);

/* The level's 1D matrix A (cell matrix a, (k+1) x (k+1) row-major, of a
 * direction with `cells` cells) at (row, col), the cells' contributions added. */
double tpmg_cpu_laplace_entry(const double *a, int k, tpmg_index cells, tpmg_index row,
                              tpmg_index col);

static inline tpmg_index tpmg_cpu_laplace_gcd(tpmg_index a, tpmg_index b) {
  while (b) {
    const tpmg_index t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Whether the cell-by-cell kernel (sum factorization per cell, lanes across
 * cells, gathered and scattered) is the faster one for this case, else the
 * Kronecker sum: measured with AVX-512 on the machine of doc/benchmarks.md
 * ("CPU backend (SIMD)"), 2 threads. The Kronecker sum's x-direction takes
 * 2 (2k+1) multiply-adds per point, the cells' 7 (k+1)^4 / k^3 (2D 4 (k+1)^3
 * / k^2) for all directions: the cells win in 2D double from k = 8 on. */
static inline int tpmg_cpu_laplace_by_cells(int dim, int k, size_t size) {
  return dim == 2 && size == sizeof(double) && k >= 8;
}

/* What the cell-by-cell kernel computes on each cell K: A^K (a = 1, where
 * tpmg_cpu_laplace_by_cells chooses it), a_K A^K + c M^K with a_K one value
 * per cell (tpmg_level.coefficient), or with a at the cell's Gauss points
 * (tpmg_level.quadrature). A level with a coefficient always takes the cells. */
enum { TPMG_CPU_LAPLACE_UNIT = 0, TPMG_CPU_LAPLACE_CELLS = 1, TPMG_CPU_LAPLACE_QUADRATURE = 2 };

static inline int tpmg_cpu_laplace_mode(const tpmg_level *lvl, tpmg_precision prec) {
  return lvl->quadrature[prec]                      ? TPMG_CPU_LAPLACE_QUADRATURE
         : lvl->coefficient[prec] || lvl->widths[0] ? TPMG_CPU_LAPLACE_CELLS
                                                    : TPMG_CPU_LAPLACE_UNIT;
}

/* A graded level (tpmg_level.widths), always cell by cell: the 1D matrices
 * are the reference cell's, and the cell c of widths w_d takes per direction
 * the factor a prod_e w_e / w_d^2 of its gradient term (factors[d]) and
 * `mass` prod_e w_e of its mass term (factors[3]): with M_d = w_d Mref and
 * K_d = Kref / w_d, the term K_d (x) prod_{e != d} M_e is Kref (x) Mref ..
 * times prod_e w_e / w_d^2. Computed in double. CELLS: a = a_K (1 without a
 * coefficient), mass = c; QUADRATURE: a = mass = 1 (the weights hold a_q,
 * and c; the points' derivatives are the reference cell's). */
static inline void tpmg_cpu_laplace_graded(const tpmg_level *lvl, const tpmg_index c[3], double a,
                                           double mass, double factors[4]) {
  double volume = 1.0;
  for (int d = 0; d < lvl->dim; ++d)
    volume *= lvl->widths[d][c[d]];
  factors[2] = 0.0;
  for (int d = 0; d < lvl->dim; ++d)
    factors[d] = a * volume / (lvl->widths[d][c[d]] * lvl->widths[d][c[d]]);
  factors[3] = mass * volume;
}

/* Points of the largest cell tensor: (k+1)^3 of Q_8 in 3D > (k+1)^2 of Q_10 in 2D. */
#define TPMG_CPU_LAPLACE_MAX_CELL                                                                  \
  ((TPMG_MAX_DEGREE_3D + 1) * (TPMG_MAX_DEGREE_3D + 1) * (TPMG_MAX_DEGREE_3D + 1))

#endif
