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
 * (laplace_by_cells):
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
 * This file includes itself once per scalar type (see tpmg-cpu.h) and, in
 * that part, once per instruction set for its lane kernels (see
 * tpmg-cpu-simd.h), the Kronecker sum also once with one-lane "vectors" (the
 * scalar width). */
#ifndef TPMG_CPU_SCALAR

#include <omp.h>

#include "tpmg-cpu-simd.h"
#include "tpmg-cpu.h"

/* Intermediates of one tile (the ring, a and b, the line copies) at most this
 * many bytes: measured (doc/benchmarks.md, "CPU backend (SIMD)"), whole
 * x-lines and y-planes beat tiles that fit the 1 MiB L2 cache, their rings
 * then in the L3 cache. */
#define TPMG_CPU_LAPLACE_TILE_BYTES (4 * 1024 * 1024)
/* Lane vectors per x-line of a tile, at least (unless the level is narrower):
 * shorter lines spend more on loop overhead than wider tiles in y (whose
 * k + 1 extra lines of a and b are computed twice) cost. */
#define TPMG_CPU_LAPLACE_MIN_VECTORS 32
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

static tpmg_index laplace_round_up(tpmg_index n, tpmg_index m) {
  return (n + m - 1) / m * m;
}

/* Per-thread scratch of tiles tile_x points wide and tile_y cells high: the
 * line copies, a and b, the ring of c and d (2D: of a and b) of k+1 planes,
 * each array rounded up to 64 bytes. */
static size_t laplace_scratch_bytes(tpmg_cpu_laplace_plan *plan, tpmg_index tile_x,
                                    tpmg_index tile_y, size_t size) {
  const int k = plan->k;
  plan->lines_cd = plan->dim == 3 ? tile_y * k : 1;
  plan->lines_ab = plan->dim == 3 ? tile_y * k + k + 1 : 0;
  const size_t line = (size_t)laplace_round_up(tile_x, plan->lanes) * size;
  const size_t copy = ((size_t)(tile_x + 2 * k + plan->lanes) * size + 63) / 64 * 64;
  const size_t ring = 2 * (size_t)(k + 1) * (size_t)plan->lines_cd * line;
  return TPMG_CPU_LAPLACE_GROUP * copy + 2 * (size_t)plan->lines_ab * line + ring;
}

static tpmg_index laplace_gcd(tpmg_index a, tpmg_index b) {
  while (b) {
    const tpmg_index t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static void laplace_plan(const tpmg_level *lvl, int lanes, size_t size, int threads,
                         tpmg_cpu_laplace_plan *plan) {
  const int dim = lvl->dim, k = lvl->degree, s = dim - 1;
  const size_t budget = TPMG_CPU_LAPLACE_TILE_BYTES;
  plan->k = k;
  plan->dim = dim;
  plan->lanes = lanes;
  plan->n_x = lvl->n[0] - 2;
  plan->n_x_pad = laplace_round_up(plan->n_x, lanes);
  tpmg_index narrow = (tpmg_index)TPMG_CPU_LAPLACE_MIN_VECTORS * lanes;
  if (narrow > plan->n_x_pad)
    narrow = plan->n_x_pad;
  /* as high in y as fits at the narrowest width, then as wide as fits */
  plan->tile_y = 1;
  if (dim == 3) {
    plan->tile_y = lvl->cells[1];
    while (plan->tile_y > 1 && laplace_scratch_bytes(plan, narrow, plan->tile_y, size) > budget)
      plan->tile_y = (plan->tile_y + 1) / 2;
  }
  tpmg_index tile_x = plan->n_x_pad;
  while (tile_x > narrow && laplace_scratch_bytes(plan, tile_x, plan->tile_y, size) > budget)
    tile_x -= lanes;
  /* the same width for all tiles along x */
  plan->tiles[0] = plan->n_x > 0 ? (plan->n_x + tile_x - 1) / tile_x : 0;
  plan->tile_x = plan->tiles[0] > 0
                     ? laplace_round_up((plan->n_x + plan->tiles[0] - 1) / plan->tiles[0], lanes)
                     : 0;
  /* 3D: share out in y rather than along s (where k planes of a, b, c, d would be
   * computed again, not k + 1 lines of a and b) */
  while (dim == 3 && plan->tile_y > 1 &&
         plan->tiles[0] * ((lvl->cells[1] + plan->tile_y - 1) / plan->tile_y) < threads)
    plan->tile_y = (plan->tile_y + 1) / 2;
  plan->tiles[1] = dim == 3 ? (lvl->cells[1] + plan->tile_y - 1) / plan->tile_y : 1;
  /* cut along s where the tiles across would not share out evenly */
  const tpmg_index across = plan->tiles[0] * plan->tiles[1];
  tpmg_index chunks = across > 0 ? threads / laplace_gcd(across, threads) : 1;
  if (chunks > lvl->cells[s] / 4) /* at least 4 cells each */
    chunks = lvl->cells[s] / 4;
  if (chunks < 1)
    chunks = 1;
  plan->tile_s = (lvl->cells[s] + chunks - 1) / chunks;
  plan->tiles[2] = (lvl->cells[s] + plan->tile_s - 1) / plan->tile_s;
  plan->scratch_bytes = laplace_scratch_bytes(plan, plan->tile_x, plan->tile_y, size);
}

/* The level's 1D matrix A (cell matrix a, (k+1) x (k+1) row-major, of a
 * direction with `cells` cells) at (row, col), the cells' contributions added. */
static double laplace_entry(const double *a, int k, tpmg_index cells, tpmg_index row,
                            tpmg_index col) {
  const tpmg_index c = row / k;
  const int i = (int)(row % k);
  double value = 0;
  if (i == 0 && c > 0 && col >= (c - 1) * k && col <= c * k)
    value += a[k * (k + 1) + (col - (c - 1) * k)];
  if (c < cells && col >= c * k && col <= c * k + k)
    value += a[i * (k + 1) + (col - c * k)];
  return value;
}

/* Whether the cell-by-cell kernel (sum factorization per cell, lanes across
 * cells, gathered and scattered) is the faster one for this case, else the
 * Kronecker sum: measured with AVX-512 on the machine of doc/benchmarks.md
 * ("CPU backend (SIMD)"), 2 threads. The Kronecker sum's x-direction takes
 * 2 (2k+1) multiply-adds per point, the cells' 7 (k+1)^4 / k^3 (2D 4 (k+1)^3
 * / k^2) for all directions: the cells win in 2D double from k = 8 on. */
static int laplace_by_cells(int dim, int k, size_t size) {
  return dim == 2 && size == sizeof(double) && k >= 8;
}

/* the integers of T's size (shuffle masks) */
#define TPMG_CPU_SCALAR double
#define TPMG_CPU_LAPLACE_INT long long
#include "tpmg-cpu-laplace.c"
#undef TPMG_CPU_LAPLACE_INT
#undef TPMG_CPU_SCALAR
#define TPMG_CPU_SCALAR float
#define TPMG_CPU_LAPLACE_INT int
#include "tpmg-cpu-laplace.c"
#undef TPMG_CPU_LAPLACE_INT
#undef TPMG_CPU_SCALAR

tpmg_status tpmg_cpu_laplace(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             const void *src, void *dst) {
  if (prec == TPMG_FLOAT)
    return laplace_float(ctx, lvl, src, dst);
  return laplace_double(ctx, lvl, src, dst);
}

/* Counted from the kernels. Cell by cell: with n = k + 1 points per
 * direction, 7 contractions of n^4 multiply-adds per cell in 3D (M_0 and K_0
 * in x, M_1 twice and K_1 in y, K_2 and M_2 in z), 4 of n^3 in 2D; the lane
 * tensors in work arrays (counted as shared): each contraction reads its input
 * and writes its output (two of them also read the output they add to), the
 * gather writes the cell's n^dim values and the scatter reads them.
 * Kronecker sum: per interior point of a computed line of a and b 2 (2k+1)
 * multiply-adds (all diagonals, the zeros of the band included), of c and d
 * 3 (k+2) on average (3 (k+1) in the k-1 rows inside a cell, 3 (2k+1) in the
 * vertex row), of dst 2 (k+1)^2 / k (2 (k+1) per row of a cell, the vertex
 * rows once from each of their cells); the lines and planes that tiles share
 * counted as often as they are computed. Words: the line copy written once and
 * read 2k+1 times, the diagonals once per group of lines, a and b written once
 * and read 2 (2k+1) / k times per point of c and d, c and d written once and
 * read 2 (k+1) / k times per point of dst, the vertex rows of dst read back.
 * The 1D matrices (in the call's data) count as not loaded; main memory: src
 * read and dst written once. */
void tpmg_cpu_laplace_work(const tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           tpmg_work *work) {
  const int dim = lvl->dim, k = lvl->degree, s = dim - 1;
  int lanes = 1;
#if TPMG_CPU_HAVE_SIMD
  const int simd = tpmg_cpu_simd(ctx);
  const int bytes = simd == TPMG_CPU_SIMD_AVX512 ? 64 : simd == TPMG_CPU_SIMD_AVX2 ? 32 : 0;
  if (bytes)
    lanes = bytes / (int)tpmg_precision_size(prec);
#endif
  work->matrix_words = 0;
  work->memory_words = 2;
  work->kernel = "cpu";
  if (laplace_by_cells(dim, k, tpmg_precision_size(prec))) {
    const double n = k + 1, n_dofs = (double)lvl->n_dofs;
    double cells = 1;
    for (int d = 0; d < dim; ++d)
      cells *= (double)lvl->cells[d];
    const double tensor = dim == 3 ? n * n * n : n * n;
    const int contractions = dim == 3 ? 7 : 4, adds = dim == 3 ? 2 : 1;
    work->flops = 2 * contractions * tensor * n * cells / n_dofs;
    work->shared_words = (2.0 * contractions + adds + 2) * tensor * cells / n_dofs;
    return;
  }
  tpmg_cpu_laplace_plan plan;
  laplace_plan(lvl, lanes, tpmg_precision_size(prec), tpmg_backend_threads(ctx), &plan);
  const double n_x = (double)plan.n_x, n_dofs = (double)lvl->n_dofs;
  /* planes (2D: lines) along s computed per tile: the tile's k * tile_s - 1
   * output planes plus those of the band around them, at most n_s - 2 */
  double planes = 0;
  for (tpmg_index t = 0; t < plan.tiles[2]; ++t) {
    const tpmg_index c0 = t * plan.tile_s;
    const tpmg_index c1 = c0 + plan.tile_s < lvl->cells[s] ? c0 + plan.tile_s : lvl->cells[s];
    const tpmg_index first = c0 * k > 1 ? c0 * k : 1;
    const tpmg_index last = c1 * k + k < lvl->n[s] - 2 ? c1 * k + k : lvl->n[s] - 2;
    planes += (double)(last - first + 1);
  }
  double lines_ab = 1, lines_cd = 1;
  if (dim == 3) {
    lines_ab = lines_cd = 0;
    for (tpmg_index t = 0; t < plan.tiles[1]; ++t) {
      const tpmg_index c0 = t * plan.tile_y;
      const tpmg_index c1 = c0 + plan.tile_y < lvl->cells[1] ? c0 + plan.tile_y : lvl->cells[1];
      const tpmg_index first = c0 * k > 1 ? c0 * k : 1;
      const tpmg_index last = c1 * k + k < lvl->n[1] - 2 ? c1 * k + k : lvl->n[1] - 2;
      lines_ab += (double)(last - first + 1);
    }
    lines_cd = (double)(lvl->n[1] - 2);
  }
  const double interior = n_x * (double)(lvl->n[1] - 2) * (dim == 3 ? (double)(lvl->n[2] - 2) : 1);
  const double x_points = n_x * lines_ab * planes;                /* a, b */
  const double y_points = dim == 3 ? n_x * lines_cd * planes : 0; /* c, d */
  const double band = 2 * k + 1, mean = k + 2, cell_rows = (k + 1.0) * (k + 1.0) / k;
  const double fma = 2 * band * x_points + 3 * mean * y_points + 2 * cell_rows * interior;
  work->flops = 2 * fma / n_dofs;
  work->shared_words = ((1 + band + 2 * band / TPMG_CPU_LAPLACE_GROUP + 2) * x_points +
                        (2 * band / k + 2) * y_points + (2 * (k + 1.0) / k + 1.0 / k) * interior) /
                       n_dofs;
}

#elif !defined(TPMG_CPU_ISA) /* precision-generic part */

#include "tpmg-cpu.h"

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
  const T *src;
  T *dst;
} TPMG_CPU_NAME(laplace_cells_data);

/* dst += A^K src for the cells of one layer c_s along the slowest direction. */
TPMG_CPU_INLINE void TPMG_CPU_NAME(laplace_cells_layer)(const TPMG_CPU_NAME(laplace_cells_data) *
                                                            data,
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
typedef void TPMG_CPU_NAME(laplace_cells_kernel)(const TPMG_CPU_NAME(laplace_cells_data) *,
                                                 tpmg_index, char *);

#define TPMG_CPU_INSTANCE(dim, k)                                                                  \
  static void TPMG_CPU_NAME(laplace_cells_##dim##d_q##k)(                                          \
      const TPMG_CPU_NAME(laplace_cells_data) * data, tpmg_index c_s, char *scratch) {             \
    TPMG_CPU_NAME(laplace_cells_layer)(data, c_s, dim, k);                                         \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_NAME(laplace_cells_##dim##d_q##k),
static TPMG_CPU_NAME(laplace_cells_kernel) *const
    TPMG_CPU_NAME(laplace_cells_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

/* the scalar width: one-lane "vectors" */
#undef V
#undef W
#define TPMG_CPU_ISA scalar
#define TPMG_CPU_LANES_SCALAR
#define V T
#define W 1
#include "tpmg-cpu-laplace.c"
#undef V
#undef W
#undef TPMG_CPU_LANES_SCALAR
#undef TPMG_CPU_ISA

#define TPMG_CPU_SELF "tpmg-cpu-laplace.c"
#include "tpmg-cpu-simd.h"
#undef TPMG_CPU_SELF

static tpmg_status TPMG_CPU_NAME(laplace_cells)(tpmg_context *ctx, const tpmg_level *lvl,
                                                const T *src, T *dst) {
  const int dim = lvl->dim, k = lvl->degree, s = dim - 1;
  TPMG_CPU_NAME(laplace_cells_kernel) *kernel = TPMG_CPU_NAME(laplace_cells_kernels)[dim - 2][k];
  size_t scratch_bytes = 0;
#if TPMG_CPU_HAVE_SIMD
  /* u, v, t0, t1, t2 of (k+1)^dim lane vectors */
  const size_t tensor = (size_t)(dim == 3 ? (k + 1) * (k + 1) * (k + 1) : (k + 1) * (k + 1));
  if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX2) {
    kernel = TPMG_CPU_SIMD_NAME(laplace_cells_kernels, avx2)[dim - 2][k];
    scratch_bytes = 5 * tensor * 32;
  } else if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX512) {
    kernel = TPMG_CPU_SIMD_NAME(laplace_cells_kernels, avx512)[dim - 2][k];
    scratch_bytes = 5 * tensor * 64;
  }
#endif
  TPMG_CPU_NAME(laplace_cells_data) data;
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

static tpmg_status TPMG_CPU_NAME(laplace)(tpmg_context *ctx, const tpmg_level *lvl, const T *src,
                                          T *dst) {
  const int dim = lvl->dim, k = lvl->degree;
  TPMG_CPU_NAME(laplace_kernel) *kernel = TPMG_CPU_SIMD_NAME(laplace_kernels, scalar)[dim - 2][k];
  int lanes = 1;
#if TPMG_CPU_HAVE_SIMD
  if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX2) {
    kernel = TPMG_CPU_SIMD_NAME(laplace_kernels, avx2)[dim - 2][k];
    lanes = 32 / (int)sizeof(T);
  } else if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX512) {
    kernel = TPMG_CPU_SIMD_NAME(laplace_kernels, avx512)[dim - 2][k];
    lanes = 64 / (int)sizeof(T);
  }
#endif
  if (laplace_by_cells(dim, k, sizeof(T)))
    return TPMG_CPU_NAME(laplace_cells)(ctx, lvl, src, dst);
  const int threads = tpmg_backend_threads(ctx);
  TPMG_CPU_NAME(laplace_data) data;
  data.lvl = lvl;
  data.src = src;
  data.dst = dst;
  laplace_plan(lvl, lanes, sizeof(T), threads, &data.plan);
  const tpmg_cpu_laplace_plan *plan = &data.plan;
  const tpmg_index n_tiles = plan->tiles[0] * plan->tiles[1] * plan->tiles[2];
  if (n_tiles == 0 || (dim == 3 && (lvl->n[1] < 3 || lvl->n[2] < 3)) || lvl->n[1] < 3)
    return tpmg_cpu_copy_boundary(ctx, lvl, TPMG_CPU_PRECISION, src, dst);

  double cell[2][TPMG_CPU_MAX_MATRIX];
  if (dim == 3) {
    const T *mass = lvl->data[TPMG_CPU_PRECISION].cell_mass[1];
    const T *stiffness = lvl->data[TPMG_CPU_PRECISION].cell_stiffness[1];
    for (int e = 0; e < (k + 1) * (k + 1); ++e) {
      cell[0][e] = mass[e];
      cell[1][e] = stiffness[e];
    }
    for (int r = 1; r <= k; ++r)
      for (int j = 0; j <= (r == k ? 2 * k : k); ++j) {
        /* a cell in the middle of 3 cells: its rows are those of any cell */
        data.rows_mass[(r - 1) * (2 * k + 1) + j] = (T)laplace_entry(cell[0], k, 3, k + r, k + j);
        data.rows_stiffness[(r - 1) * (2 * k + 1) + j] =
            (T)laplace_entry(cell[1], k, 3, k + r, k + j);
      }
  }
  for (int e = 0; e < (k + 1) * (k + 1); ++e) {
    data.cell_mass[e] = ((const T *)lvl->data[TPMG_CPU_PRECISION].cell_mass[dim - 1])[e];
    data.cell_stiffness[e] = ((const T *)lvl->data[TPMG_CPU_PRECISION].cell_stiffness[dim - 1])[e];
  }
  /* every interior row of M_x, K_x is that of a cell's row (x mod k): the
   * diagonals repeat with the period lcm(k, lanes) (the Dirichlet columns
   * dropped by the zeros around the line copies) */
  const tpmg_index period = (tpmg_index)k * lanes / laplace_gcd(k, lanes);
  const size_t diagonal = (size_t)period;
  T *diagonals = malloc(2 * (size_t)(2 * k + 1) * diagonal * sizeof(T));
  TPMG_CHECK(ctx, diagonals, TPMG_ERROR_MEMORY, "allocating the operator's %zu diagonals failed",
             (size_t)(4 * k + 2));
  for (int e = 0; e < (k + 1) * (k + 1); ++e) {
    cell[0][e] = ((const T *)lvl->data[TPMG_CPU_PRECISION].cell_mass[0])[e];
    cell[1][e] = ((const T *)lvl->data[TPMG_CPU_PRECISION].cell_stiffness[0])[e];
  }
  for (int m = 0; m < 2; ++m)
    for (int j = -k; j <= k; ++j)
      for (tpmg_index i = 0; i < period; ++i) {
        /* row x = i + 1 as the row of the middle one of 3 cells */
        const tpmg_index row = k + (i + 1) % k;
        diagonals[((size_t)m * (2 * k + 1) + (size_t)(j + k)) * diagonal + (size_t)i] =
            (T)laplace_entry(cell[m], k, 3, row, row + j);
      }
  data.period = period;
  data.diagonals[0] = diagonals;
  data.diagonals[1] = diagonals + (size_t)(2 * k + 1) * diagonal;

  char *scratch;
  size_t stride;
  tpmg_status status = tpmg_cpu_scratch(ctx, plan->scratch_bytes, &stride, &scratch);
  if (status != TPMG_SUCCESS) {
    free(diagonals);
    return status;
  }
#pragma omp parallel num_threads(threads)
  {
    char *mine = scratch + (size_t)omp_get_thread_num() * stride;
#pragma omp for schedule(static)
    for (tpmg_index t = 0; t < n_tiles; ++t)
      kernel(&data, t, mine);
  }
  free(scratch);
  free(diagonals);
  return tpmg_cpu_copy_boundary(ctx, lvl, TPMG_CPU_PRECISION, src, dst);
}

#else /* lane part, once per instruction set (and once with V = T) */

#ifndef TPMG_CPU_LANES_SCALAR
#include "tpmg-cpu-simd.h"
#endif

#ifndef TPMG_CPU_LANES_SCALAR
/* laplace_layer on W cells at a time, in the order of laplace_layer; scratch
 * holds 5 (k+1)^dim lane vectors. */
TPMG_CPU_INLINE void
TPMG_CPU_VNAME(laplace_cells_layer)(const TPMG_CPU_NAME(laplace_cells_data) * data, tpmg_index c_s,
                                    V *restrict scratch, int dim, int k) {
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
  static void TPMG_CPU_VNAME(laplace_cells_##dim##d_q##k)(                                         \
      const TPMG_CPU_NAME(laplace_cells_data) * data, tpmg_index c_s, char *scratch) {             \
    TPMG_CPU_VNAME(laplace_cells_layer)(data, c_s, (V *)scratch, dim, k);                          \
  }
TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_INSTANCE)
#undef TPMG_CPU_INSTANCE

#define TPMG_CPU_ENTRY(dim, k) [dim - 2][k] = TPMG_CPU_VNAME(laplace_cells_##dim##d_q##k),
static TPMG_CPU_NAME(laplace_cells_kernel) *const
    TPMG_CPU_VNAME(laplace_cells_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
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
        typedef TPMG_CPU_LAPLACE_INT M __attribute__((vector_size(TPMG_CPU_SIMD_BYTES)));
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
static TPMG_CPU_NAME(laplace_kernel) *const
    TPMG_CPU_VNAME(laplace_kernels)[2][TPMG_MAX_DEGREE_2D + 1] = {
        TPMG_CPU_FOR_EACH_DEGREE(TPMG_CPU_ENTRY)};
#undef TPMG_CPU_ENTRY

#endif
