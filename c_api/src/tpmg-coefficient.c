/* A variable coefficient a of -∇·(a∇u) + c u (tpmg_grid_set_coefficient):
 * the user's values of the finest level's owned cells become, on every level,
 * a value per cell of the rank's box, and on the finest level with
 * TPMG_COEFFICIENT_QUADRATURE also the values at the quadrature points.
 *
 * How a reaches the levels. Each finest cell's mean of a (CELLS: its value;
 * QUADRATURE: the Gauss-weighted mean) is gathered onto every rank, so that
 * every rank holds the whole finest level's means once during the call; a
 * coarser cell's value is the mean of its 2^dim children's, level by level
 * down to the bottom (a rediscretization with the mean coefficient, not the
 * Galerkin product); each rank keeps its box of every level. The quadrature
 * values of the finest box's ghost cells come from the two neighbours, which
 * own them (every distributed level gives each rank at least two cells). The
 * 1D data of every level are rebuilt without the reaction, which the kernels
 * then add themselves (tpmg-backend.h, tpmg_level). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

void tpmg_coefficient_free(tpmg_grid *grid) {
  for (int l = 0; l < TPMG_MAX_LEVELS; ++l)
    for (int p = 0; p < 2; ++p) {
      tpmg_free(grid->ctx, grid->coefficient_bytes[l][p], grid->coefficient_block[l][p]);
      grid->coefficient_block[l][p] = NULL;
      grid->coefficient_bytes[l][p] = 0;
    }
  for (int p = 0; p < 2; ++p) {
    tpmg_free(grid->ctx, grid->quadrature_bytes[p], grid->quadrature_block[p]);
    grid->quadrature_block[p] = NULL;
    grid->quadrature_bytes[p] = 0;
  }
  for (int l = 0; l < TPMG_MAX_LEVELS; ++l) {
    tpmg_host_free(grid->ctx, grid->whole_coefficient_bytes[l], grid->whole_coefficient[l]);
    grid->whole_coefficient[l] = NULL;
    grid->whole_coefficient_bytes[l] = 0;
  }
}

/* Cells of a plane of level l (every direction but the last). */
static tpmg_index plane_cells(const tpmg_level *lvl) {
  return lvl->dim == 3 ? lvl->cells[0] * lvl->cells[1] : lvl->cells[0];
}

static int points_per_cell(const tpmg_grid *grid) {
  int q = grid->options.degree + 1;
  return grid->options.dim == 3 ? q * q * q : q * q;
}

/* Check the values and take each owned cell's mean into mean[]; the first
 * bad value is named in the message. */
static tpmg_status owned_means(tpmg_grid *grid, tpmg_coefficient_layout layout,
                               const double *values, tpmg_index n_cells, double *mean) {
  tpmg_context *ctx = grid->ctx;
  const int dim = grid->options.dim, n_q = grid->options.degree + 1;
  const int per_cell = layout == TPMG_COEFFICIENT_QUADRATURE ? points_per_cell(grid) : 1;
  double points[TPMG_MAX_DEGREE_2D + 1], weights[TPMG_MAX_DEGREE_2D + 1];
  tpmg_basis_gauss(n_q, points, weights);
  for (tpmg_index c = 0; c < n_cells; ++c) {
    double sum = 0.0;
    for (int q = 0; q < per_cell; ++q) {
      const double a = values[c * per_cell + q];
      TPMG_CHECK(ctx, isfinite(a) && a >= TPMG_MIN_COEFFICIENT && a <= TPMG_MAX_COEFFICIENT,
                 TPMG_ERROR_ARGUMENT,
                 "coefficient value %lld (owned cell %lld, point %d) is %g: must be finite and "
                 "within [%g, %g]",
                 (long long)(c * per_cell + q), (long long)c, q, a, TPMG_MIN_COEFFICIENT,
                 TPMG_MAX_COEFFICIENT);
      double w = 1.0;
      if (per_cell > 1) {
        w = weights[q % n_q] * weights[q / n_q % n_q];
        if (dim == 3) w *= weights[q / (n_q * n_q)];
      }
      sum += w * a;
    }
    mean[c] = sum;
  }
  return TPMG_SUCCESS;
}

/* The whole level l-1's cell values from level l's (children's mean). */
static void coarsen(const tpmg_level *fine, const tpmg_level *coarse, const double *f, double *c) {
  const int dim = fine->dim;
  const tpmg_index n0 = coarse->cells[0], n1 = coarse->cells[1], n2 = coarse->cells[2];
  const tpmg_index f0 = fine->cells[0], f1 = fine->cells[1];
  const double scale = dim == 3 ? 0.125 : 0.25;
  for (tpmg_index i2 = 0; i2 < n2; ++i2)
    for (tpmg_index i1 = 0; i1 < n1; ++i1)
      for (tpmg_index i0 = 0; i0 < n0; ++i0) {
        double sum = 0.0;
        for (int b = 0; b < (dim == 3 ? 2 : 1); ++b)
          for (int a1 = 0; a1 < 2; ++a1)
            for (int a0 = 0; a0 < 2; ++a0)
              sum += f[2 * i0 + a0 + f0 * (2 * i1 + a1 + f1 * (dim == 3 ? 2 * i2 + b : 0))];
        c[i0 + n0 * (i1 + n1 * i2)] = scale * sum;
      }
}

/* Upload `count` host doubles into new blocks, one per precision (block[p],
 * bytes[p]: the grid's, freed by tpmg_coefficient_free). */
static tpmg_status upload(tpmg_grid *grid, const double *host, size_t count, float *host_float,
                          const char *what, void *block[2], size_t bytes[2]) {
  tpmg_context *ctx = grid->ctx;
  for (int p = 0; p < 2; ++p) {
    const size_t size = count * tpmg_precision_size((tpmg_precision)p);
    const void *src = host;
    if (p == TPMG_FLOAT) {
      for (size_t i = 0; i < count; ++i) host_float[i] = (float)host[i];
      src = host_float;
    }
    TPMG_CALL(tpmg_malloc(ctx, size, what, &block[p]));
    bytes[p] = size;
    TPMG_CALL(ctx->ops->upload(ctx, block[p], src, size));
  }
  return TPMG_SUCCESS;
}

/* The finest box's quadrature values: the owned cells' from `values`, the
 * ghost cells' from the neighbours below and above. */
static tpmg_status box_quadrature(tpmg_grid *grid, const double *values, double *box) {
  tpmg_context *ctx = grid->ctx;
  const int L = grid->n_levels - 1, k = grid->options.degree;
  const tpmg_part *part = &grid->part[L];
  const tpmg_index layer = plane_cells(&grid->levels[L]) * points_per_cell(grid);
  const tpmg_index box_first = part->first / k;
  const tpmg_index below = part->cell_first - box_first;
  const tpmg_index above = grid->levels[L].cells[grid->options.dim - 1] - below -
                           (part->cell_end - part->cell_first);
  const tpmg_index owned = part->cell_end - part->cell_first;
  memcpy(box + below * layer, values, (size_t)(owned * layer) * sizeof(double));
  if (ctx->size == 1) return TPMG_SUCCESS;
  tpmg_message messages[2];
  int n = 0;
  /* a neighbour's ghost layers next to this slab are this slab's first or last ones */
  if (ctx->rank > 0) {
    tpmg_index first, end;
    tpmg_partition_cells(grid, L, ctx->rank - 1, &first, &end);
    const tpmg_index theirs = grid->global[L].cells[grid->options.dim - 1] - end;
    const tpmg_index send = theirs < 2 ? theirs : 2;
    messages[n++] = (tpmg_message){ctx->rank - 1, values, (size_t)(send * layer) * sizeof(double),
                                   box, (size_t)(below * layer) * sizeof(double)};
  }
  if (ctx->rank < ctx->size - 1) {
    tpmg_index first, end;
    tpmg_partition_cells(grid, L, ctx->rank + 1, &first, &end);
    const tpmg_index send = first < 2 ? first : 2;
    messages[n++] =
        (tpmg_message){ctx->rank + 1, values + (owned - send) * layer,
                       (size_t)(send * layer) * sizeof(double), box + (below + owned) * layer,
                       (size_t)(above * layer) * sizeof(double)};
  }
  return tpmg_comm_host_messages(ctx, n, messages);
}

/* Everything after the checks; on failure the caller frees what was made. */
static tpmg_status set_levels(tpmg_grid *grid, tpmg_coefficient_layout layout,
                              const double *values, const double *mean, double **whole) {
  tpmg_context *ctx = grid->ctx;
  const int L = grid->n_levels - 1, dim = grid->options.dim, k = grid->options.degree;
  const tpmg_part *fine = &grid->part[L];
  const tpmg_index plane = plane_cells(&grid->global[L]);
  /* the finest level's means on every rank: each rank's slab padded to the
   * longest slab, gathered, then put in order */
  tpmg_index longest = 0;
  for (int r = 0; r < ctx->size; ++r) {
    tpmg_index first, end;
    tpmg_partition_cells(grid, L, r, &first, &end);
    if (end - first > longest) longest = end - first;
  }
  const size_t slab = (size_t)(longest * plane);
  double *gathered = malloc(slab * (size_t)ctx->size * sizeof(double));
  double *mine = calloc(slab, sizeof(double));
  tpmg_status status = gathered && mine ? TPMG_SUCCESS
                                        : tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                                                         "host memory for the coefficient");
  if (status == TPMG_SUCCESS) {
    memcpy(mine, mean, (size_t)((fine->cell_end - fine->cell_first) * plane) * sizeof(double));
    status = tpmg_comm_allgather(ctx, mine, slab * sizeof(double), gathered);
  }
  for (int r = 0; r < ctx->size && status == TPMG_SUCCESS; ++r) {
    tpmg_index first, end;
    tpmg_partition_cells(grid, L, r, &first, &end);
    memcpy(whole[L] + first * plane, gathered + (size_t)r * slab,
           (size_t)((end - first) * plane) * sizeof(double));
  }
  free(gathered);
  free(mine);
  TPMG_CALL(status);
  for (int l = L; l > 0; --l) coarsen(&grid->global[l], &grid->global[l - 1], whole[l], whole[l - 1]);

  /* each rank's box of every level, in backend memory; the coarse levels whole on the host */
  size_t longest_box = 0;
  for (int l = 0; l <= L; ++l) {
    const tpmg_level *lvl = &grid->levels[l];
    size_t n = (size_t)(plane_cells(lvl) * lvl->cells[dim - 1]);
    if (l == L && layout == TPMG_COEFFICIENT_QUADRATURE) n *= (size_t)points_per_cell(grid);
    if (n > longest_box) longest_box = n;
  }
  float *host_float = malloc(longest_box * sizeof(float));
  double *quadrature = NULL;
  if (layout == TPMG_COEFFICIENT_QUADRATURE)
    quadrature = malloc(longest_box * sizeof(double));
  status = host_float && (quadrature || layout != TPMG_COEFFICIENT_QUADRATURE)
               ? TPMG_SUCCESS
               : tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                                "host memory for the coefficient");
  for (int l = 0; l <= L && status == TPMG_SUCCESS; ++l) {
    tpmg_level *lvl = &grid->levels[l];
    const tpmg_index first = grid->part[l].first / k, n = plane_cells(lvl) * lvl->cells[dim - 1];
    const double *cell_values = whole[l] + first * plane_cells(lvl);
    if (l == L && layout == TPMG_COEFFICIENT_QUADRATURE) {
      status = box_quadrature(grid, values, quadrature);
      if (status == TPMG_SUCCESS)
        status = upload(grid, quadrature, (size_t)(n * points_per_cell(grid)), host_float,
                        "the coefficient at the quadrature points", grid->quadrature_block,
                        grid->quadrature_bytes);
      /* the smoother's per-cell values: each cell's largest point value, in
       * place of the first point's (tpmg_level.coefficient) */
      const int per_cell = points_per_cell(grid);
      for (tpmg_index c = 0; c < n; ++c) {
        double top = quadrature[c * per_cell];
        for (int q = 1; q < per_cell; ++q)
          top = fmax(top, quadrature[c * per_cell + q]);
        quadrature[c] = top;
      }
      cell_values = quadrature;
    }
    if (status == TPMG_SUCCESS)
      status = upload(grid, cell_values, (size_t)n, host_float, "the coefficient per cell",
                      grid->coefficient_block[l], grid->coefficient_bytes[l]);
  }
  free(host_float);
  free(quadrature);
  TPMG_CALL(status);
  for (int l = 0; l <= grid->hidden; ++l) {
    const size_t n = (size_t)(plane_cells(&grid->global[l]) * grid->global[l].cells[dim - 1]);
    TPMG_CALL(tpmg_host_malloc(ctx, n * sizeof(double), "the coarse levels' coefficient",
                               (void **)&grid->whole_coefficient[l]));
    grid->whole_coefficient_bytes[l] = n * sizeof(double);
    memcpy(grid->whole_coefficient[l], whole[l], n * sizeof(double));
  }
  return TPMG_SUCCESS;
}

tpmg_status tpmg_grid_set_coefficient(tpmg_grid *grid, tpmg_coefficient_layout layout,
                                      const double *values) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = grid->ctx;
  const int L = grid->n_levels - 1, dim = grid->options.dim;
  const tpmg_part *fine = &grid->part[L];
  const tpmg_index n_cells = plane_cells(&grid->levels[L]) * (fine->cell_end - fine->cell_first);
  tpmg_status status = TPMG_SUCCESS;
  if (layout != TPMG_COEFFICIENT_CELLS && layout != TPMG_COEFFICIENT_QUADRATURE)
    status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                            "unknown coefficient layout %d", (int)layout);
  else if (!values && n_cells > 0)
    status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__, "values is NULL");
  else if (grid->levels[L].coefficient[0])
    status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                            "the grid has a coefficient already: make a new grid for another");
  else if (grid->refs > 1)
    status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                            "the grid is in use by %d objects made from it: set the coefficient "
                            "before making any",
                            (int)grid->refs - 1);
  TPMG_CALL(tpmg_comm_agree(ctx, status));
  TPMG_CALL(tpmg_comm_same(ctx, &layout, sizeof(layout), "the coefficient layout"));
  double *mean = malloc((size_t)(n_cells > 0 ? n_cells : 1) * sizeof(double));
  double *whole[TPMG_MAX_LEVELS] = {NULL};
  status = mean ? TPMG_SUCCESS
                : tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                                 "host memory for %lld cells' coefficient", (long long)n_cells);
  for (int l = 0; l <= L && status == TPMG_SUCCESS; ++l) {
    const tpmg_level *g = &grid->global[l];
    whole[l] = malloc((size_t)(plane_cells(g) * g->cells[dim - 1]) * sizeof(double));
    if (!whole[l])
      status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                              "host memory for level %d's coefficient", g->level);
  }
  if (status == TPMG_SUCCESS) status = owned_means(grid, layout, values, n_cells, mean);
  status = tpmg_comm_agree(ctx, status);
  if (status == TPMG_SUCCESS) status = tpmg_comm_agree(ctx, set_levels(grid, layout, values, mean, whole));
  free(mean);
  for (int l = 0; l <= L; ++l) free(whole[l]);
  if (status != TPMG_SUCCESS) {
    tpmg_coefficient_free(grid);
    return status;
  }
  /* the levels point at their blocks; whole levels are their own global
   * description; the 1D data rebuilt without the reaction */
  grid->coefficient_layout = layout;
  for (int l = 0; l <= L; ++l)
    for (int p = 0; p < 2; ++p) {
      grid->levels[l].coefficient[p] = grid->coefficient_block[l][p];
      grid->levels[l].quadrature[p] = l == L ? grid->quadrature_block[p] : NULL;
      if (!grid->part[l].distributed) grid->global[l].coefficient[p] = grid->coefficient_block[l][p];
    }
  for (int l = 0; l <= L && status == TPMG_SUCCESS; ++l) status = tpmg_grid_level_data(grid, l);
  status = tpmg_comm_agree(ctx, status);
  if (status != TPMG_SUCCESS) {
    /* the 1D data back as they were, with the reaction folded */
    for (int l = 0; l <= L; ++l)
      for (int p = 0; p < 2; ++p) {
        grid->levels[l].coefficient[p] = grid->levels[l].quadrature[p] = NULL;
        grid->global[l].coefficient[p] = NULL;
      }
    for (int l = 0; l <= L; ++l) tpmg_grid_level_data(grid, l);
    tpmg_coefficient_free(grid);
  }
  return status;
}

tpmg_status tpmg_grid_get_coefficient(const tpmg_grid *grid, int *has,
                                      tpmg_coefficient_layout *layout) {
  if (!grid)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(grid->ctx, has, TPMG_ERROR_ARGUMENT, "has is NULL");
  *has = grid->levels[grid->n_levels - 1].coefficient[0] != NULL;
  if (*has && layout)
    *layout = grid->coefficient_layout;
  return TPMG_SUCCESS;
}

void tpmg_coefficient_owned(const tpmg_grid *grid, const void **values, tpmg_index *n) {
  const int L = grid->n_levels - 1;
  const tpmg_part *part = &grid->part[L];
  *values = NULL;
  *n = 0;
  if (!grid->levels[L].coefficient[0])
    return;
  const int quadrature = grid->coefficient_layout == TPMG_COEFFICIENT_QUADRATURE;
  const tpmg_index layer = plane_cells(&grid->levels[L]) * (quadrature ? points_per_cell(grid) : 1);
  const tpmg_index below = part->cell_first - part->first / grid->options.degree;
  const char *block =
      quadrature ? grid->quadrature_block[TPMG_DOUBLE] : grid->coefficient_block[L][TPMG_DOUBLE];
  *values = block + (size_t)(below * layer) * sizeof(double);
  *n = (part->cell_end - part->cell_first) * layer;
}

tpmg_status tpmg_grid_quadrature_points(const tpmg_grid *grid, const tpmg_index cell[3],
                                        double *points) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  const tpmg_grid_options *o = &grid->options;
  const tpmg_level *fine = &grid->global[grid->n_levels - 1];
  TPMG_CHECK(grid->ctx, cell && points, TPMG_ERROR_ARGUMENT, "NULL argument (cell %p, points %p)",
             (const void *)cell, (void *)points);
  for (int d = 0; d < o->dim; ++d)
    TPMG_CHECK(grid->ctx, cell[d] >= 0 && cell[d] < fine->cells[d], TPMG_ERROR_ARGUMENT,
               "cell[%d] = %lld: must be 0..%lld", d, (long long)cell[d],
               (long long)fine->cells[d] - 1);
  const int n_q = o->degree + 1, n = points_per_cell(grid);
  double x[TPMG_MAX_DEGREE_2D + 1], w[TPMG_MAX_DEGREE_2D + 1];
  tpmg_basis_gauss(n_q, x, w);
  for (int q = 0; q < n; ++q) {
    const int index[3] = {q % n_q, q / n_q % n_q, q / (n_q * n_q)};
    for (int d = 0; d < 3; ++d)
      points[q * 3 + d] =
          d < o->dim ? tpmg_level_coordinate(fine, d, o->box[2 * d], cell[d], x[index[d]]) : 0.0;
  }
  return TPMG_SUCCESS;
}
