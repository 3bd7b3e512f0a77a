/* The grid: levels 0..L of a refined subdivided hyper-rectangle and the 1D
 * data of each level, built on the host in double and uploaded once in both
 * precisions.
 *
 * Below the user's coarse mesh (level 0) the grid adds hidden levels while
 * every direction has an even number of cells, halving all directions at once
 * (n_d = 2 m_d -> m_d), so that the cells keep their aspect ratio and each
 * hidden level is refined into the next by the same bisection as the user's
 * levels: 24 x 24 x 24 -> 12 -> 6 -> 3, 300 x 100 -> 150 x 50 -> 75 x 25,
 * 7 x 5 x 3 none. grid->levels[] holds the hidden levels first: the user's
 * level l is levels[hidden + l] (tpmg_grid_check_level maps them).
 *
 * Graded cells (tpmg_grid_options.cell_widths): level l's cell i along d is
 * coarse cell i >> l bisected l times, of width w_d(i >> l) 2^-l, so the
 * reference prolongation is the same for every level. A graded grid has no
 * hidden levels: merging two cells of unequal widths would not be bisection.
 * Each level keeps its cells' widths and faces per direction and, for the
 * smoother, one set of 1D patch data per distinct pair of widths around a
 * vertex (tpmg_level.vertex_set). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

tpmg_grid_options tpmg_grid_options_default(void) {
  tpmg_grid_options options = {
      3, 3, 4, {1, 1, 1}, {0.0, 1.0, 0.0, 1.0, 0.0, 1.0}, 0.0, {NULL, NULL, NULL}};
  return options;
}

/* x with the fewest digits that read back as x, so that a message shows the
 * value given (1e-300, not 0; 1.0000000000000002, not 1). */
static const char *exact(double x, char text[32]) {
  for (int digits = 1; digits <= 17; ++digits) {
    snprintf(text, 32, "%.*g", digits, x);
    if (strtod(text, NULL) == x) break;
  }
  return text;
}

static tpmg_status check_box(tpmg_context *ctx, const tpmg_grid_options *o, int d) {
  double a = o->box[2 * d], b = o->box[2 * d + 1];
  char ta[32], tb[32];
  TPMG_CHECK(ctx, isfinite(a) && isfinite(b) && a < b, TPMG_ERROR_ARGUMENT,
             "box[%d] = [%s, %s]: needs finite a < b", d, exact(a, ta), exact(b, tb));
  double largest = fmax(fabs(a), fabs(b));
  TPMG_CHECK(ctx, largest <= TPMG_MAX_BOX_COORDINATE, TPMG_ERROR_ARGUMENT,
             "box[%d] = [%s, %s]: coordinates beyond +-%g are not supported", d, exact(a, ta),
             exact(b, tb), TPMG_MAX_BOX_COORDINATE);
  /* the finest cells' width: the 1D eigenproblems scale with it, and the
   * support points must stay apart in double */
  double h = (b - a) / ldexp((double)o->cells[d], o->fine_level);
  double minimum = fmax(TPMG_MIN_CELL_WIDTH, 1e-12 * largest);
  if (o->cell_widths[d]) {
    const double *w = o->cell_widths[d];
    double sum = 0.0, smallest = INFINITY;
    for (int i = 0; i < o->cells[d]; ++i) {
      char tw[32];
      TPMG_CHECK(ctx, isfinite(w[i]) && w[i] > 0.0, TPMG_ERROR_ARGUMENT,
                 "cell_widths[%d][%d] = %s: must be positive and finite", d, i, exact(w[i], tw));
      sum += w[i];
      smallest = fmin(smallest, w[i]);
    }
    char ts[32];
    TPMG_CHECK(ctx, fabs(sum - (b - a)) <= 1e-12 * (b - a), TPMG_ERROR_ARGUMENT,
               "cell_widths[%d]: the %d widths sum to %s, not to the box's length %s along %d "
               "(b - a, to a relative 1e-12)",
               d, o->cells[d], exact(sum, ts), exact(b - a, ta), d);
    h = ldexp(smallest, -o->fine_level);
  }
  TPMG_CHECK(ctx, h >= minimum, TPMG_ERROR_ARGUMENT,
             "box[%d] = [%s, %s]: its cells on level %d are %g wide, below the supported "
             "minimum %g (the larger of %g and 1e-12 times the largest coordinate)",
             d, exact(a, ta), exact(b, tb), o->fine_level, h, minimum, TPMG_MIN_CELL_WIDTH);
  return TPMG_SUCCESS;
}

static tpmg_status check_options(tpmg_context *ctx, const tpmg_grid_options *o) {
  TPMG_CHECK(ctx, o->dim == 2 || o->dim == 3, TPMG_ERROR_ARGUMENT, "dim %d: must be 2 or 3",
             o->dim);
  int max_degree = o->dim == 2 ? TPMG_MAX_DEGREE_2D : TPMG_MAX_DEGREE_3D;
  TPMG_CHECK(ctx, o->degree >= 1 && o->degree <= max_degree, TPMG_ERROR_ARGUMENT,
             "degree %d: must be 1..%d in %dD", o->degree, max_degree, o->dim);
  TPMG_CHECK(ctx, o->fine_level >= 1 && o->fine_level <= TPMG_MAX_FINE_LEVEL, TPMG_ERROR_ARGUMENT,
             "fine_level %d: must be 1..%d", o->fine_level, TPMG_MAX_FINE_LEVEL);
  for (int d = 0; d < o->dim; ++d) {
    TPMG_CHECK(ctx, o->cells[d] >= 1, TPMG_ERROR_ARGUMENT, "cells[%d] = %d: must be >= 1", d,
               o->cells[d]);
    TPMG_CALL(check_box(ctx, o, d));
  }
  char tc[32];
  TPMG_CHECK(ctx, isfinite(o->reaction) && o->reaction >= 0.0 && o->reaction <= TPMG_MAX_REACTION,
             TPMG_ERROR_ARGUMENT, "reaction %s: must be finite, >= 0 and <= %g",
             exact(o->reaction, tc), TPMG_MAX_REACTION);
  /* sizes of the finest level: per direction and in all, as vector bytes */
  double total = 1.0;
  for (int d = 0; d < o->dim; ++d)
    total *= ldexp((double)o->cells[d], o->fine_level) * o->degree + 1.0;
  TPMG_CHECK(ctx, total * sizeof(double) < 0x1p62 && total * sizeof(double) < (double)SIZE_MAX,
             TPMG_ERROR_MEMORY,
             "level %d with cells %d,%d,%d and degree %d has %.3g DoFs: a vector would overflow "
             "the index or size type",
             o->fine_level, o->cells[0], o->cells[1], o->dim == 3 ? o->cells[2] : 1, o->degree,
             total);
  return TPMG_SUCCESS;
}

/* The reaction against the bottom level's cells, the largest: c times their
 * volume (the mass matrix's scale, the CUDA kernels' factor) and widths (the
 * folded 1D stiffness) within TPMG_MAX_REACTION, so float data stay finite. */
static tpmg_status check_reaction(tpmg_context *ctx, const tpmg_level *lvl) {
  double volume = 1.0, width = 0.0;
  for (int d = 0; d < lvl->dim; ++d) {
    double largest = 0.0;
    for (tpmg_index i = 0; i < lvl->cells[d]; ++i)
      largest = fmax(largest, tpmg_level_width(lvl, d, i));
    volume *= largest;
    width = fmax(width, largest);
  }
  const double scale = lvl->reaction * fmax(volume, width);
  TPMG_CHECK(ctx, scale <= TPMG_MAX_REACTION, TPMG_ERROR_ARGUMENT,
             "reaction %g: times the coarsest cells' volume %g or width %g it is %g, beyond %g "
             "(the operator's data would overflow in float)",
             lvl->reaction, volume, width, scale, TPMG_MAX_REACTION);
  return TPMG_SUCCESS;
}

/* Host-side 1D data of one level in double, laid out as in backend memory:
 * per direction cell mass, cell stiffness, patch mass, patch stiffness,
 * eigenvectors, eigenvalues; then the reference prolongation. */
static size_t level_data_count(int dim, int k) {
  size_t c = (size_t)(k + 1) * (k + 1), p = (size_t)(2 * k + 1) * (2 * k + 1);
  size_t i = (size_t)(2 * k - 1);
  return dim * (2 * c + 2 * p + i * i + i) + (size_t)(2 * k + 1) * (k + 1);
}

/* One set of a graded level's patch data (tpmg_level_data.sets). */
static size_t set_count(int k) {
  size_t p = (size_t)(2 * k + 1) * (2 * k + 1), i = (size_t)(2 * k - 1);
  return 2 * p + i * i + i;
}

/* level_data_count and the sets of a graded level. */
static size_t level_count(const tpmg_level *lvl) {
  size_t count = level_data_count(lvl->dim, lvl->degree);
  if (lvl->widths[0])
    for (int d = 0; d < lvl->dim; ++d) count += (size_t)lvl->n_sets[d] * set_count(lvl->degree);
  return count;
}

/* The 1D data of one direction with cell size h: cell mass and stiffness
 * (k+1)^2, patch mass and stiffness P^2, the patch interior's eigenvectors I^2
 * and eigenvalues I. level and d name the data in a message.
 *
 * The reaction c is folded into this direction's stiffness: K + c M. In
 * every Kronecker sum of the level (operator, patch, coarse level) the
 * direction that carries it, D, then gives
 *   (K_D + c M_D) ⊗ M ⊗ .. ⊗ M + sum_{d≠D} .. ⊗ K_d ⊗ .. = -Δ_h + c M_h,
 * and the generalized eigenpairs of K_D + c M_D are those of K_D with every
 * eigenvalue plus c (same S, S^T M S = I), so the fast diagonalization stays
 * exact: c adds to each patch eigenvalue sum. The eigenproblem is solved
 * without c, and c added after, exactly. */
/* The vertex patch of two cells of widths h[0] (below the vertex) and h[1]
 * along one direction: patch mass and stiffness P^2, the interior's
 * eigenvectors I^2 and eigenvalues I, the reaction folded in as below. */
static tpmg_status build_patch(tpmg_context *ctx, int k, const double h[2], double reaction,
                               int level, int d, double *pm, double *pk, double *S,
                               double *lambda) {
  int nc = k + 1, np = 2 * k + 1, ni = 2 * k - 1;
  double mref[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  double kref[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  tpmg_basis_cell_matrices(k, mref, kref);
  /* vertex patch: two cells, the middle point shared */
  memset(pm, 0, sizeof(double) * np * np);
  memset(pk, 0, sizeof(double) * np * np);
  for (int cell = 0; cell < 2; ++cell)
    for (int i = 0; i < nc; ++i)
      for (int j = 0; j < nc; ++j) {
        pm[(cell * k + i) * np + cell * k + j] += h[cell] * mref[i * nc + j];
        pk[(cell * k + i) * np + cell * k + j] += kref[i * nc + j] / h[cell];
      }
  /* generalized eigenproblem on the 2k-1 interior points (paper eq. 2.9) */
  double mi[(2 * TPMG_MAX_DEGREE_2D - 1) * (2 * TPMG_MAX_DEGREE_2D - 1)];
  double ki[(2 * TPMG_MAX_DEGREE_2D - 1) * (2 * TPMG_MAX_DEGREE_2D - 1)];
  for (int i = 0; i < ni; ++i)
    for (int j = 0; j < ni; ++j) {
      mi[i * ni + j] = pm[(i + 1) * np + j + 1];
      ki[i * ni + j] = pk[(i + 1) * np + j + 1];
    }
  double residual = tpmg_basis_generalized_eigen(ni, ki, mi, S, lambda);
  TPMG_CHECK(ctx, residual >= 0.0 && residual < 1e-11, TPMG_ERROR_NUMERICAL,
             "patch eigenproblem on level %d, direction %d, degree %d (cells %g and %g wide): "
             "residual %g",
             level, d, k, h[0], h[1], residual);
  if (reaction != 0.0) {
    for (int i = 0; i < np * np; ++i)
      pk[i] += reaction * pm[i];
    for (int i = 0; i < ni; ++i)
      lambda[i] += reaction;
  }
  return TPMG_SUCCESS;
}

static tpmg_status build_direction(tpmg_context *ctx, int k, double h, double reaction, int level,
                                   int d, double *cm, double *ck, double *pm, double *pk, double *S,
                                   double *lambda) {
  int nc = k + 1;
  double mref[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  double kref[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  tpmg_basis_cell_matrices(k, mref, kref);
  for (int i = 0; i < nc * nc; ++i) {
    cm[i] = h * mref[i];
    ck[i] = kref[i] / h;
  }
  const double widths[2] = {h, h};
  TPMG_CALL(build_patch(ctx, k, widths, reaction, level, d, pm, pk, S, lambda));
  if (reaction != 0.0)
    for (int i = 0; i < nc * nc; ++i)
      ck[i] += reaction * cm[i];
  return TPMG_SUCCESS;
}

/* The coarse cell's basis at the support points of its two children. */
static void build_prolongation(int k, double *prolongation) {
  int nc = k + 1, np = 2 * k + 1;
  double nodes[TPMG_MAX_DEGREE_2D + 1];
  tpmg_basis_gauss_lobatto(nc, nodes);
  for (int t = 0; t < np; ++t) {
    double x = t <= k ? 0.5 * nodes[t] : 0.5 + 0.5 * nodes[t - k];
    for (int s = 0; s < nc; ++s)
      prolongation[t * nc + s] = tpmg_basis_lagrange(nc, nodes, s, x);
  }
}

/* The two widths around vertex v along d of a graded level (a boundary
 * vertex, which has no patch, takes its one cell's twice). */
static void vertex_widths(const tpmg_level *lvl, int d, tpmg_index v, double h[2]) {
  h[0] = lvl->widths[d][v > 0 ? v - 1 : v];
  h[1] = lvl->widths[d][v < lvl->cells[d] ? v : v - 1];
}

/* lvl: the level (this rank's box once partitioned); whole: the same level
 * whole, whose vertices define the sets. */
static tpmg_status build_level_data(tpmg_context *ctx, const tpmg_level *lvl,
                                    const tpmg_level *whole, double *out) {
  int k = lvl->degree, nc = k + 1, np = 2 * k + 1, ni = 2 * k - 1;
  const int graded = lvl->widths[0] != NULL;
  double *p = out;
  for (int d = 0; d < lvl->dim; ++d) {
    double *cm = p, *ck = cm + nc * nc, *pm = ck + nc * nc, *pk = pm + np * np;
    double *S = pk + np * np, *lambda = S + ni * ni;
    p = lambda + ni;
    /* with a coefficient the kernels add the reaction (tpmg_level) */
    const double reaction = d == lvl->dim - 1 && !lvl->coefficient[0] ? lvl->reaction : 0.0;
    if (!graded) {
      TPMG_CALL(build_direction(ctx, k, lvl->h[d], reaction, lvl->level, d, cm, ck, pm, pk, S,
                                lambda));
      continue;
    }
    /* graded: the reference cell, and set 0's patch in the level's place */
    tpmg_basis_cell_matrices(k, cm, ck);
    double h[2];
    vertex_widths(whole, d, whole->cells[d] > 1 ? 1 : 0, h);
    TPMG_CALL(build_patch(ctx, k, h, reaction, lvl->level, d, pm, pk, S, lambda));
  }
  build_prolongation(k, p);
  p += np * nc;
  for (int d = 0; d < lvl->dim && graded; ++d) {
    const double reaction = d == lvl->dim - 1 && !lvl->coefficient[0] ? lvl->reaction : 0.0;
    /* set s: the first vertex that takes it (sets are numbered in the order
     * of the inner vertices; one cell: its vertex 0) */
    int s = 0;
    const tpmg_index first = whole->cells[d] > 1 ? 1 : 0;
    for (tpmg_index v = first; v <= whole->cells[d] - first && s < whole->n_sets[d]; ++v) {
      if (whole->vertex_set[d][v] != s) continue;
      double h[2];
      vertex_widths(whole, d, v, h);
      double *pm = p, *pk = pm + np * np, *S = pk + np * np, *lambda = S + ni * ni;
      TPMG_CALL(build_patch(ctx, k, h, reaction, lvl->level, d, pm, pk, S, lambda));
      p = lambda + ni;
      ++s;
    }
  }
  return TPMG_SUCCESS;
}

/* The unit patch's data (h = 1), once per grid. */
static tpmg_status build_unit_data(tpmg_context *ctx, int k, tpmg_unit_data *unit) {
  double cm[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  double ck[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  memset(unit, 0, sizeof(*unit));
  TPMG_CALL(build_direction(ctx, k, 1.0, 0.0, -1, 0, cm, ck, unit->patch_mass,
                            unit->patch_stiffness, unit->eigenvectors, unit->eigenvalues));
  build_prolongation(k, unit->prolongation);
  const int n = k + 1;
  double nodes[TPMG_MAX_DEGREE_2D + 1];
  tpmg_basis_gauss_lobatto(n, nodes);
  tpmg_basis_gauss(n, unit->gauss_points, unit->gauss_weights);
  for (int q = 0; q < n; ++q)
    for (int j = 0; j < n; ++j) {
      const double x = unit->gauss_points[q];
      unit->gauss_values[q * n + j] = tpmg_basis_lagrange(n, nodes, j, x);
      unit->gauss_gradients[q * n + j] =
          tpmg_basis_lagrange_derivative(n, unit->gauss_points, j, x);
    }
  return TPMG_SUCCESS;
}

/* Point the level's data pointers into a backend block of the given precision. */
static void set_pointers(tpmg_level *lvl, tpmg_precision precision, char *block) {
  int k = lvl->degree, nc = k + 1, np = 2 * k + 1, ni = 2 * k - 1;
  size_t s = tpmg_precision_size(precision), off = 0;
  tpmg_level_data *data = &lvl->data[precision];
  memset(data, 0, sizeof(*data));
  for (int d = 0; d < lvl->dim; ++d) {
    data->cell_mass[d] = block + off, off += s * nc * nc;
    data->cell_stiffness[d] = block + off, off += s * nc * nc;
    data->patch_mass[d] = block + off, off += s * np * np;
    data->patch_stiffness[d] = block + off, off += s * np * np;
    data->eigenvectors[d] = block + off, off += s * ni * ni;
    data->eigenvalues[d] = block + off, off += s * ni;
  }
  data->prolongation = block + off;
  off += s * np * nc;
  for (int d = 0; d < lvl->dim && lvl->widths[0]; ++d) {
    data->sets[d] = block + off;
    off += s * (size_t)lvl->n_sets[d] * (2 * np * np + ni * ni + ni);
  }
}

tpmg_status tpmg_grid_level_data(tpmg_grid *grid, int l) {
  tpmg_context *ctx = grid->ctx;
  tpmg_level *lvl = &grid->levels[l];
  size_t count = level_count(lvl);
  double *host = malloc(count * sizeof(double));
  float *host_float = malloc(count * sizeof(float));
  tpmg_status status = host && host_float ? TPMG_SUCCESS : TPMG_ERROR_MEMORY;
  if (status != TPMG_SUCCESS) tpmg_error_set(ctx, status, __FILE__, __LINE__, "host allocation");
  /* the whole level: global[l] once partitioned, levels[l] before */
  const tpmg_level *whole = grid->global[l].n_dofs ? &grid->global[l] : lvl;
  if (status == TPMG_SUCCESS)
    status = build_level_data(ctx, lvl, whole, host);
  for (int p = 0; p < 2 && status == TPMG_SUCCESS; ++p) {
    size_t bytes = count * tpmg_precision_size((tpmg_precision)p);
    const void *src = host;
    if (p == TPMG_FLOAT) {
      for (size_t i = 0; i < count; ++i) host_float[i] = (float)host[i];
      src = host_float;
    }
    if (!grid->data_block[l][p]) {
      status = tpmg_malloc(ctx, bytes, "grid 1D data", &grid->data_block[l][p]);
      if (status != TPMG_SUCCESS) break;
      grid->data_bytes[l][p] = bytes;
      set_pointers(lvl, (tpmg_precision)p, grid->data_block[l][p]);
    }
    status = ctx->ops->upload(ctx, grid->data_block[l][p], src, bytes);
  }
  free(host);
  free(host_float);
  return status;
}

/* Whether the widths along some direction differ (options checked). */
static int options_graded(const tpmg_grid_options *o) {
  for (int d = 0; d < o->dim; ++d)
    for (int i = 1; o->cell_widths[d] && i < o->cells[d]; ++i)
      if (o->cell_widths[d][i] != o->cell_widths[d][0]) return 1;
  return 0;
}

/* Level l's widths, faces and vertex sets of a graded grid, per direction, in
 * one host block (grid->graded_block[l]). */
static tpmg_status graded_level(tpmg_grid *g, int l, tpmg_level *lvl) {
  const tpmg_grid_options *o = &g->options;
  size_t bytes = 0;
  /* per direction n + 1 ints after 2n + 1 doubles, padded to an even count
   * so that the next direction's doubles stay aligned */
  for (int d = 0; d < 3; ++d)
    bytes += (size_t)(2 * lvl->cells[d] + 1) * sizeof(double) +
             (size_t)((lvl->cells[d] + 2) / 2 * 2) * sizeof(int);
  char *block = malloc(bytes);
  TPMG_CHECK(g->ctx, block, TPMG_ERROR_MEMORY,
             "host memory for the graded cells of level %d (%zu bytes)", lvl->level, bytes);
  g->graded_block[l] = block;
  for (int d = 0; d < 3; ++d) {
    const tpmg_index n = lvl->cells[d];
    double *w = (double *)block, *x = w + n;
    int *set = (int *)(x + n + 1);
    block = (char *)(set + (n + 2) / 2 * 2);
    const double a = d < o->dim ? o->box[2 * d] : 0.0, b = d < o->dim ? o->box[2 * d + 1] : 1.0;
    for (tpmg_index i = 0; i < n; ++i) {
      /* coarse cell i >> l, bisected l times */
      const double coarse = d < o->dim && g->cell_widths[d] ? g->cell_widths[d][i >> l]
                                                            : (b - a) / (double)o->cells[d];
      w[i] = ldexp(coarse, -l);
    }
    x[0] = a;
    for (tpmg_index i = 1; i < n; ++i) x[i] = x[i - 1] + w[i - 1];
    x[n] = b;
    /* sets in the order of the inner vertices, one per distinct pair */
    int n_sets = 0;
    for (tpmg_index v = 1; v < n; ++v) {
      int found = -1;
      for (tpmg_index u = 1; u < v && found < 0; ++u)
        if (w[u - 1] == w[v - 1] && w[u] == w[v]) found = set[u];
      set[v] = found >= 0 ? found : n_sets++;
    }
    if (n_sets == 0) n_sets = 1; /* one cell: no patch, one set for the layout */
    set[0] = n > 1 ? set[1] : 0;
    set[n] = n > 1 ? set[n - 1] : 0;
    lvl->widths[d] = w;
    lvl->vertices[d] = x;
    lvl->vertex_set[d] = set;
    lvl->n_sets[d] = n_sets;
  }
  return TPMG_SUCCESS;
}

tpmg_status tpmg_grid_create(tpmg_context *ctx, const tpmg_grid_options *options,
                             tpmg_grid **grid) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  tpmg_status checked = TPMG_SUCCESS;
  if (!options || !grid)
    checked = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                             "NULL argument (options %p, grid %p)", (const void *)options,
                             (void *)grid);
  TPMG_CALL(tpmg_comm_agree(ctx, checked));
  /* the same options on every rank (2D: what the third direction holds aside) */
  tpmg_grid_options same = *options;
  if (same.dim == 2) {
    same.cells[2] = 1;
    same.box[4] = 0.0;
    same.box[5] = 1.0;
  }
  /* the widths by value, below, not their addresses */
  int given[3] = {0, 0, 0};
  for (int d = 0; d < 3; ++d) {
    given[d] = d < same.dim && same.cell_widths[d];
    same.cell_widths[d] = NULL;
  }
  TPMG_CALL(tpmg_comm_same(ctx, &same, sizeof(same), "the grid options"));
  TPMG_CALL(tpmg_comm_same(ctx, given, sizeof(given), "the grid options' cell_widths"));
  for (int d = 0; d < 3; ++d)
    if (given[d] && same.cells[d] >= 1)
      TPMG_CALL(tpmg_comm_same(ctx, options->cell_widths[d],
                               (size_t)same.cells[d] * sizeof(double), "the grid's cell widths"));
  TPMG_CALL(check_options(ctx, options));
  const int graded = options_graded(options);
  TPMG_CHECK(ctx, !graded || strncmp(ctx->backend, "cuda", 4) != 0, TPMG_ERROR_UNSUPPORTED,
             "backend %s: graded cells (tpmg_grid_options.cell_widths unequal) run on the CPU "
             "backend so far",
             ctx->backend);

  tpmg_grid *g = calloc(1, sizeof(*g));
  TPMG_CHECK(ctx, g, TPMG_ERROR_MEMORY, "allocating the grid failed");
  g->ctx = ctx;
  g->refs = 1;
  ctx->refs++;
  g->options = *options;
  if (options->dim == 2) {
    g->options.cells[2] = 1;
    g->options.box[4] = 0.0;
    g->options.box[5] = 1.0;
  }
  g->graded = graded;
  tpmg_status status = TPMG_SUCCESS;
  for (int d = 0; d < 3; ++d) {
    g->options.cell_widths[d] = NULL;
    if (d >= options->dim || !options->cell_widths[d] || status != TPMG_SUCCESS) continue;
    const size_t bytes = (size_t)options->cells[d] * sizeof(double);
    g->cell_widths[d] = malloc(bytes);
    if (!g->cell_widths[d]) {
      status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                              "copying cell_widths[%d] (%zu bytes)", d, bytes);
      continue;
    }
    memcpy(g->cell_widths[d], options->cell_widths[d], bytes);
    g->options.cell_widths[d] = g->cell_widths[d];
  }
  int k = options->degree, dim = options->dim;
  int bottom[3] = {options->cells[0], options->cells[1], options->cells[2]};
  while (!graded) {
    int even = 1;
    for (int d = 0; d < dim; ++d)
      even = even && bottom[d] % 2 == 0;
    if (!even)
      break;
    for (int d = 0; d < dim; ++d)
      bottom[d] /= 2;
    g->hidden++;
  }
  g->n_levels = g->hidden + options->fine_level + 1;
  if (status == TPMG_SUCCESS) status = build_unit_data(ctx, k, &g->unit);

  for (int l = 0; l < g->n_levels && status == TPMG_SUCCESS; ++l) {
    tpmg_level *lvl = &g->levels[l];
    lvl->dim = dim;
    lvl->degree = k;
    lvl->level = l - g->hidden;
    lvl->unit = &g->unit;
    lvl->n_dofs = 1;
    for (int d = 0; d < 3; ++d) {
      int real = d < dim;
      lvl->cells[d] = real ? (tpmg_index)bottom[d] << l : 1;
      lvl->n[d] = real ? lvl->cells[d] * k + 1 : 1;
      lvl->h[d] = real ? (options->box[2 * d + 1] - options->box[2 * d]) / (double)lvl->cells[d]
                       : 1.0;
      lvl->n_dofs *= lvl->n[d];
    }
    lvl->reaction = options->reaction;
    if (graded) status = graded_level(g, l, lvl);
    if (l == 0 && status == TPMG_SUCCESS)
      status = check_reaction(ctx, lvl);
    if (status == TPMG_SUCCESS)
      status = tpmg_grid_level_data(g, l);
  }
  if (status == TPMG_SUCCESS) status = tpmg_partition_create(g);
  status = tpmg_comm_agree(ctx, status);
  if (status != TPMG_SUCCESS) {
    tpmg_grid_destroy(&g);
    return status;
  }
  *grid = g;
  return TPMG_SUCCESS;
}

void tpmg_grid_reference(tpmg_grid *grid) {
  grid->refs++;
}

void tpmg_grid_release(tpmg_grid *grid) {
  if (--grid->refs > 0) return;
  tpmg_context *ctx = grid->ctx;
  for (int l = 0; l < TPMG_MAX_LEVELS; ++l)
    for (int p = 0; p < 2; ++p) tpmg_free(ctx, grid->data_bytes[l][p], grid->data_block[l][p]);
  tpmg_coefficient_free(grid);
  for (int l = 0; l < TPMG_MAX_LEVELS; ++l) free(grid->graded_block[l]);
  for (int d = 0; d < 3; ++d) free(grid->cell_widths[d]);
  free(grid);
  ctx->refs--;
}

/* Drops the caller's reference: objects made from the grid keep it alive. */
tpmg_status tpmg_grid_destroy(tpmg_grid **grid) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  if (!*grid) return TPMG_SUCCESS;
  tpmg_grid_release(*grid);
  *grid = NULL;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_grid_get_options(const tpmg_grid *grid, tpmg_grid_options *options) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(grid->ctx, options, TPMG_ERROR_ARGUMENT, "options is NULL");
  *options = grid->options;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_grid_context(const tpmg_grid *grid, tpmg_context **ctx) {
  if (!grid || !ctx) return TPMG_ERROR_ARGUMENT;
  *ctx = grid->ctx;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_grid_check_level(const tpmg_grid *grid, int level, int min_level, int *index) {
  int fine_level = grid->n_levels - 1 - grid->hidden;
  TPMG_CHECK(grid->ctx, level >= min_level && level <= fine_level, TPMG_ERROR_ARGUMENT,
             "level %d: must be %d..%d", level, min_level, fine_level);
  *index = grid->hidden + level;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_grid_level_layout(const tpmg_grid *grid, int level, tpmg_level_layout *layout) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(grid->ctx, layout, TPMG_ERROR_ARGUMENT, "layout is NULL");
  int index = 0;
  TPMG_CALL(tpmg_grid_check_level(grid, level, 0, &index));
  const tpmg_part *part = &grid->part[index];
  layout->distributed = part->distributed;
  for (int d = 0; d < 3; ++d) layout->n_global[d] = grid->global[index].n[d];
  layout->plane = part->plane;
  layout->first = part->first;
  layout->count = part->count;
  layout->owned_first = part->owned_first;
  layout->owned_end = part->owned_end;
  layout->cell_first = part->cell_first;
  layout->cell_end = part->cell_end;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_grid_level_size(const tpmg_grid *grid, int level, tpmg_index *n_dofs,
                                 tpmg_index n_1d[3]) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  int index = 0;
  TPMG_CALL(tpmg_grid_check_level(grid, level, 0, &index));
  if (n_dofs)
    *n_dofs = grid->levels[index].n_dofs;
  if (n_1d)
    for (int d = 0; d < 3; ++d)
      n_1d[d] = grid->levels[index].n[d];
  return TPMG_SUCCESS;
}
