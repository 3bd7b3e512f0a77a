/* CPU backend: the matrix-free level operator dst = A src, its entry point,
 * the plan of its tiles and its work. The mathematics and the kernels are in
 * tpmg-cpu-laplace-templates.h, instantiated per scalar type and instruction
 * set by tpmg-cpu-laplace-double.c, tpmg-cpu-laplace-double-avx2.c, ... (see
 * tpmg-cpu.h); the driver that chooses among them in
 * tpmg-cpu-laplace-driver-templates.h. */
#include "tpmg-cpu-laplace.h"
#include "tpmg-cpu-simd.h"

/* Intermediates of one tile (the ring, a and b, the line copies) at most this
 * many bytes: measured (doc/benchmarks.md, "CPU backend (SIMD)"), whole
 * x-lines and y-planes beat tiles that fit the 1 MiB L2 cache, their rings
 * then in the L3 cache. */
#define TPMG_CPU_LAPLACE_TILE_BYTES (4 * 1024 * 1024)
/* Lane vectors per x-line of a tile, at least (unless the level is narrower):
 * shorter lines spend more on loop overhead than wider tiles in y (whose
 * k + 1 extra lines of a and b are computed twice) cost. */
#define TPMG_CPU_LAPLACE_MIN_VECTORS 32

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

void tpmg_cpu_laplace_make_plan(const tpmg_level *lvl, int lanes, size_t size, int threads,
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
  tpmg_index chunks = across > 0 ? threads / tpmg_cpu_laplace_gcd(across, threads) : 1;
  if (chunks > lvl->cells[s] / 4) /* at least 4 cells each */
    chunks = lvl->cells[s] / 4;
  if (chunks < 1)
    chunks = 1;
  plan->tile_s = (lvl->cells[s] + chunks - 1) / chunks;
  plan->tiles[2] = (lvl->cells[s] + plan->tile_s - 1) / plan->tile_s;
  plan->scratch_bytes = laplace_scratch_bytes(plan, plan->tile_x, plan->tile_y, size);
}

double tpmg_cpu_laplace_entry(const double *a, int k, tpmg_index cells, tpmg_index row,
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

tpmg_status tpmg_cpu_laplace(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             const void *src, void *dst) {
  if (prec == TPMG_FLOAT)
    return tpmg_cpu_laplace_float(ctx, lvl, src, dst);
  return tpmg_cpu_laplace_double(ctx, lvl, src, dst);
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
 * read and dst written once.
 * A variable coefficient, always cell by cell (tpmg-cpu-laplace-templates.h):
 * a per cell, the contractions of a = 1 and per point of the cell, c != 0:
 * d = a d + c t, t = a t (a multiplication, a multiply-add and a
 * multiplication; t and d read and written), c = 0: out = a out (one
 * multiplication, out read and written); main memory: one coefficient per
 * cell more. a at the quadrature points: 4 dim contractions, dim - 1 of them
 * adding to their output (dim with c != 0: the first adds to c w |J| v), and
 * per point a times w |J| and dim gradients times that (dim + 1
 * multiplications, the gradients read and written), c != 0 one more (v
 * read, the sum written); main memory: n^dim values per cell more (the
 * weights w |J|, in the call's data, count as not loaded). */
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
  const int mode = tpmg_cpu_laplace_mode(lvl, prec);
  if (tpmg_cpu_laplace_by_cells(dim, k, tpmg_precision_size(prec)) ||
      mode != TPMG_CPU_LAPLACE_UNIT) {
    const double n = k + 1, n_dofs = (double)lvl->n_dofs;
    double cells = 1;
    for (int d = 0; d < dim; ++d)
      cells *= (double)lvl->cells[d];
    const double tensor = dim == 3 ? n * n * n : n * n;
    const int c = lvl->reaction != 0.0;
    int contractions = dim == 3 ? 7 : 4, adds = dim == 3 ? 2 : 1;
    double point_flops = 0, point_words = 0, memory = 0; /* per point of a cell */
    if (mode == TPMG_CPU_LAPLACE_CELLS) {
      point_flops = c ? 4 : 1;
      point_words = c ? 4 : 2;
      memory = 1 / tensor;
    } else if (mode == TPMG_CPU_LAPLACE_QUADRATURE) {
      contractions = 4 * dim;
      adds = dim - 1 + c;
      point_flops = dim + 1 + c;
      point_words = 2 * dim + 2 * c;
      memory = 1;
    }
    work->flops = (2 * contractions * n + point_flops) * tensor * cells / n_dofs;
    work->shared_words = (2.0 * contractions + adds + 2 + point_words) * tensor * cells / n_dofs;
    work->memory_words += memory * tensor * cells / n_dofs;
    return;
  }
  tpmg_cpu_laplace_plan plan;
  tpmg_cpu_laplace_make_plan(lvl, lanes, tpmg_precision_size(prec), tpmg_backend_threads(ctx),
                             &plan);
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
