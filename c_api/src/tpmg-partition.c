/* The partition of a grid's levels among the ranks of its context, and every
 * operation that crosses ranks: ghost exchange, reductions over owned
 * entries, grid transfer between slabs, gathering a level onto every rank.
 *
 * Levels are cut along their last direction D into slabs of whole cells
 * (deal.II's Partitioner in one dimension: owned planes, ghost planes, the
 * neighbours that own them). A rank stores its slab plus two ghost cells on
 * each side, a box the backends treat as a level of its own: they read the
 * box's outer planes as Dirichlet (zero), which two ghost cells keep away from
 * every value the rank owns. A rank owns the planes above its slab's lower
 * face up to and including its upper face (the first rank also the bottom
 * face): deal.II's rule for the DoFs on the interface of two subdomains,
 * which go to the lower subdomain id, so that a deal.II vector's owned range
 * is tpmg's. The operator and the smoother at owned DoFs read the ghost cell
 * next to the slab (its k + 1 planes below, k above), which one exchange with
 * each neighbour makes current; restriction reads two ghost cells above (2k
 * planes) and one plane below. Prolongation and restriction run between the slab boxes of two
 * levels through a view: the coarse box's planes from one cell under the slab
 * to one over it are, refined, exactly the fine box.
 *
 * The cut: with P ranks, the coarsest level with at least 2P cells along D,
 * or a finer one while its whole level has at most the context's
 * whole_level_dofs DoFs, is cut into P slabs of nearly equal size; the levels
 * above it are distributed with those cuts refined (so a fine slab is exactly
 * its coarse slab's children), the levels up to it are kept whole on every
 * rank and computed redundantly. If level 0 has 2P cells (and more than
 * whole_level_dofs DoFs), every level is distributed. Every distributed level
 * gives each rank at least two cells, so the ghosts a rank needs are owned by
 * its direct neighbours. */
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

static int last_dim(const tpmg_grid *grid) { return grid->options.dim - 1; }

/* The cells along D that `rank` owns on distributed level l. */
static void owned_cells(const tpmg_grid *grid, int l, int rank, tpmg_index *first,
                        tpmg_index *end) {
  int ref = grid->cut_level < 0 ? 0 : grid->cut_level, P = grid->ctx->size;
  tpmg_index cells = grid->global[0].cells[last_dim(grid)] << ref;
  *first = (cells * rank / P) << (l - ref);
  *end = (cells * (rank + 1) / P) << (l - ref);
}

void tpmg_partition_cells(const tpmg_grid *grid, int l, int rank, tpmg_index *first,
                          tpmg_index *end) {
  if (!grid->part[l].distributed) {
    *first = 0;
    *end = grid->global[l].cells[last_dim(grid)];
    return;
  }
  owned_cells(grid, l, rank, first, end);
}

/* The planes `rank` owns on distributed level l: above its lower face (the
 * first rank: from it) up to its upper face, inclusive. */
static void owned_planes(const tpmg_grid *grid, int l, int rank, tpmg_index *first,
                         tpmg_index *end) {
  tpmg_index c0, c1;
  owned_cells(grid, l, rank, &c0, &c1);
  int k = grid->options.degree;
  *first = c0 * k + (rank > 0);
  *end = c1 * k + 1;
}

tpmg_status tpmg_partition_create(tpmg_grid *grid) {
  tpmg_context *ctx = grid->ctx;
  int D = last_dim(grid), P = ctx->size, L = grid->n_levels - 1, k = grid->options.degree;
  /* levels[] are whole until the loop below; levels[0] is the bottom level, hidden or not */
  tpmg_index cells0 = grid->levels[0].cells[D];
  char axis = "xyz"[D];
  grid->cut_level = L;
  if (P > 1) {
    if (cells0 >= 2 * (tpmg_index)P) {
      grid->cut_level = -1;
    } else {
      int c = 0;
      while (c < L - 1 && (cells0 << c) < 2 * (tpmg_index)P) ++c;
      TPMG_CHECK(ctx, (cells0 << c) >= P, TPMG_ERROR_ARGUMENT,
                 "%d ranks: level %d has %lld cells along %c, and %d ranks need at least %lld "
                 "(two each) to split it; use fewer ranks, more coarse cells along %c or a finer "
                 "level",
                 P, L - grid->hidden, (long long)(cells0 << L), axis, P, 2 * (long long)P, axis);
      grid->cut_level = c;
    }
    /* small levels kept whole where the context says so: computed on every
     * rank instead of exchanging ghosts for each smoothing colour */
    while (grid->cut_level < L - 1 && grid->levels[grid->cut_level + 1].n_dofs <= ctx->whole_level_dofs)
      ++grid->cut_level;
  }
  for (int l = 0; l <= L; ++l) {
    tpmg_level *lvl = &grid->levels[l];
    tpmg_part *part = &grid->part[l];
    grid->global[l] = *lvl;
    part->plane = D == 1 ? lvl->n[0] : lvl->n[0] * lvl->n[1];
    part->cells = lvl->cells[D];
    part->distributed = l > grid->cut_level;
    if (!part->distributed) {
      part->first = part->owned_first = 0;
      part->count = part->owned_end = lvl->n[D];
      part->cell_first = 0;
      part->cell_end = lvl->cells[D];
      continue;
    }
    owned_cells(grid, l, ctx->rank, &part->cell_first, &part->cell_end);
    owned_planes(grid, l, ctx->rank, &part->owned_first, &part->owned_end);
    tpmg_index s = part->cell_first - 2, e = part->cell_end + 2;
    if (s < 0) s = 0;
    if (e > part->cells) e = part->cells;
    part->first = s * k;
    part->count = (e - s) * k + 1;
    lvl->cells[D] = e - s;
    lvl->n[D] = part->count;
    if (lvl->widths[0]) { /* graded: the box's cells of the whole level's */
      lvl->widths[D] += s;
      lvl->vertices[D] += s;
      lvl->vertex_set[D] += s;
    }
    lvl->n_dofs = part->plane * part->count;
  }
  return TPMG_SUCCESS;
}

void tpmg_partition_owned(const tpmg_grid *grid, int l, tpmg_index *offset, tpmg_index *n) {
  const tpmg_part *part = &grid->part[l];
  *offset = (part->owned_first - part->first) * part->plane;
  *n = (part->owned_end - part->owned_first) * part->plane;
}

int tpmg_partition_colour(const tpmg_grid *grid, int l, int colour) {
  const tpmg_part *part = &grid->part[l];
  tpmg_index first_cell = part->first / grid->options.degree;
  return colour ^ (int)((first_cell & 1) << last_dim(grid));
}

/* The backend's messages_start, counted as an exchange's or a gathering's. */
static tpmg_status counted_start(tpmg_context *ctx, int gather, int n, const tpmg_message *m) {
  for (int i = 0; i < n; ++i)
    if (m[i].send_bytes > 0) {
      *(gather ? &ctx->traffic.gather_messages : &ctx->traffic.exchange_messages) += 1;
      *(gather ? &ctx->traffic.gather_bytes : &ctx->traffic.exchange_bytes) +=
          (long long)m[i].send_bytes;
    }
  return ctx->ops->messages_start(ctx, n, m);
}

/* Start and complete the messages. */
static tpmg_status counted_messages(tpmg_context *ctx, int gather, int n, const tpmg_message *m) {
  tpmg_status status = counted_start(ctx, gather, n, m);
  tpmg_status waited = ctx->ops->messages_wait(ctx);
  return status != TPMG_SUCCESS ? status : waited;
}

static char *at(const void *v, tpmg_index entries, tpmg_precision p) {
  return (char *)v + (size_t)entries * tpmg_precision_size(p);
}

tpmg_status tpmg_partition_exchange_start(const tpmg_grid *grid, int l, tpmg_precision p, int n,
                                          void *const *v, tpmg_index below, tpmg_index above) {
  const tpmg_part *part = &grid->part[l];
  if (!part->distributed) return TPMG_SUCCESS;
  tpmg_context *ctx = grid->ctx;
  size_t bytes = (size_t)part->plane * tpmg_precision_size(p);
  tpmg_index lo = part->owned_first - part->first, hi = part->owned_end - part->first;
  tpmg_message m[4];
  int count = 0;
  /* with each neighbour the vectors in order: they pair up in that order */
  for (int i = 0; i < n && ctx->rank > 0; ++i)
    m[count++] = (tpmg_message){ctx->rank - 1, at(v[i], lo * part->plane, p), (size_t)above * bytes,
                                at(v[i], (lo - below) * part->plane, p), (size_t)below * bytes};
  for (int i = 0; i < n && ctx->rank < ctx->size - 1; ++i)
    m[count++] = (tpmg_message){ctx->rank + 1, at(v[i], (hi - below) * part->plane, p),
                                (size_t)below * bytes, at(v[i], hi * part->plane, p),
                                (size_t)above * bytes};
  return counted_start(ctx, 0, count, m);
}

tpmg_status tpmg_partition_exchange_wait(const tpmg_grid *grid, int l) {
  if (!grid->part[l].distributed) return TPMG_SUCCESS;
  return grid->ctx->ops->messages_wait(grid->ctx);
}

tpmg_status tpmg_partition_exchange(const tpmg_grid *grid, int l, tpmg_precision p, void *v,
                                    tpmg_index below, tpmg_index above) {
  tpmg_status status = tpmg_partition_exchange_start(grid, l, p, 1, &v, below, above);
  tpmg_status waited = tpmg_partition_exchange_wait(grid, l);
  return status != TPMG_SUCCESS ? status : waited;
}

void tpmg_partition_patches(const tpmg_grid *grid, int l, tpmg_index inner[2],
                            tpmg_index edge[2][2]) {
  const tpmg_part *part = &grid->part[l];
  const tpmg_index cells = grid->levels[l].cells[last_dim(grid)];
  const tpmg_index box_cell = part->first / grid->options.degree;
  /* two ghost cells under the slab, or none (the level's bottom), alike above */
  const int below = box_cell < part->cell_first, above = box_cell + cells > part->cell_end;
  /* Box vertex v (the patch of cells v - 1 and v) reads planes (v - 1) k to
   * (v + 1) k and writes those between. With ghosts below, the exchange
   * receives planes k .. 2k (the ghost cell next to the slab) and sends
   * 2k + 1 .. 3k: patches 2 and 3 touch them, patch 1 writes ghosts only.
   * Above, mirrored (receives (cells - 2) k + 1 .. (cells - 1) k, sends
   * (cells - 3) k .. (cells - 2) k): patches cells - 3 and cells - 2 touch
   * them, cells - 1 writes ghosts only. */
  const tpmg_index first = below ? 2 : 1, end = above ? cells - 1 : cells;
  const tpmg_index inner_first = below ? 4 : 1, inner_end = above ? cells - 3 : cells;
  if (inner_first >= inner_end) {
    /* a slab of 2 or 3 cells: nothing runs while its exchange travels */
    inner[0] = inner[1] = first;
    edge[0][0] = first;
    edge[0][1] = end;
    edge[1][0] = edge[1][1] = end;
    return;
  }
  inner[0] = inner_first;
  inner[1] = inner_end;
  edge[0][0] = first;
  edge[0][1] = inner_first;
  edge[1][0] = inner_end;
  edge[1][1] = end;
}

tpmg_status tpmg_partition_dot(const tpmg_grid *grid, int l, tpmg_precision p, const void *x,
                               const void *y, double *result) {
  tpmg_context *ctx = grid->ctx;
  tpmg_index offset, n;
  tpmg_partition_owned(grid, l, &offset, &n);
  TPMG_CALL(ctx->ops->dot(ctx, p, n, at(x, offset, p), at(y, offset, p), result));
  if (grid->part[l].distributed) TPMG_CALL(tpmg_comm_sum(ctx, result, 1));
  return TPMG_SUCCESS;
}

tpmg_status tpmg_partition_dots(const tpmg_grid *grid, int l, tpmg_precision p, int m,
                                const void *const *x, const void *y, double *result) {
  tpmg_context *ctx = grid->ctx;
  tpmg_index offset, n;
  tpmg_partition_owned(grid, l, &offset, &n);
  const void *xs[TPMG_MULTI_MAX];
  for (int i = 0; i < m; ++i) xs[i] = at(x[i], offset, p);
  TPMG_CALL(ctx->ops->dots(ctx, p, n, m, xs, at(y, offset, p), result));
  if (grid->part[l].distributed) TPMG_CALL(tpmg_comm_sum(ctx, result, m + 1));
  return TPMG_SUCCESS;
}

/* On the owned entries only: y's ghosts are left stale (they are made
 * current where they are read). */
tpmg_status tpmg_partition_axpys(const tpmg_grid *grid, int l, tpmg_precision p, int m,
                                 const double *a, tpmg_precision x_prec, const void *const *x,
                                 void *y, double *norm2) {
  tpmg_context *ctx = grid->ctx;
  tpmg_index offset, n;
  tpmg_partition_owned(grid, l, &offset, &n);
  const void *xs[TPMG_MULTI_MAX];
  for (int i = 0; i < m; ++i) xs[i] = at(x[i], offset, x_prec);
  TPMG_CALL(ctx->ops->axpys(ctx, p, n, m, a, x_prec, xs, at(y, offset, p), norm2));
  if (norm2 && grid->part[l].distributed) TPMG_CALL(tpmg_comm_sum(ctx, norm2, 1));
  return TPMG_SUCCESS;
}

tpmg_status tpmg_partition_laplace(const tpmg_grid *grid, int l, tpmg_precision p,
                                   const void *src, void *dst) {
  tpmg_context *ctx = grid->ctx;
  int k = grid->options.degree;
  /* the ghosts of src are the library's to overwrite (tpmg.h) */
  TPMG_CALL(tpmg_partition_exchange(grid, l, p, (void *)src, k + 1, k));
  return ctx->ops->laplace(ctx, &grid->levels[l], p, src, dst);
}

/* The planes of level l's box (part) from cell c0 to cell c1, as a level of
 * their own; *offset: the entry of the box where they start. */
static tpmg_level view(const tpmg_grid *grid, int l, tpmg_index c0, tpmg_index c1,
                       tpmg_index *offset) {
  const tpmg_part *part = &grid->part[l];
  int D = last_dim(grid), k = grid->options.degree;
  tpmg_level v = grid->levels[l];
  const tpmg_index shift = c0 - part->first / k; /* the view's first cell in the box */
  if (v.widths[0]) {
    v.widths[D] += shift;
    v.vertices[D] += shift;
    v.vertex_set[D] += shift;
  }
  v.cells[D] = c1 - c0;
  v.n[D] = (c1 - c0) * k + 1;
  v.n_dofs = part->plane * v.n[D];
  *offset = (c0 * k - part->first) * part->plane;
  return v;
}

/* The coarse view whose refinement is the fine box of level fine. */
static tpmg_level coarse_view(const tpmg_grid *grid, int fine, tpmg_index *offset) {
  const tpmg_part *f = &grid->part[fine];
  tpmg_index c0 = f->cell_first / 2 - 1, c1 = f->cell_end / 2 + 1;
  if (c0 < 0) c0 = 0;
  if (c1 > grid->part[fine - 1].cells) c1 = grid->part[fine - 1].cells;
  return view(grid, fine - 1, c0, c1, offset);
}

size_t tpmg_partition_restrict_scratch(const tpmg_grid *grid, int fine, tpmg_precision p) {
  if (!grid->part[fine].distributed || grid->part[fine - 1].distributed) return 0;
  return (size_t)grid->global[fine].n_dofs * tpmg_precision_size(p);
}

tpmg_status tpmg_partition_restrict(const tpmg_grid *grid, int fine, tpmg_precision p,
                                    const void *f, void *c, void *scratch) {
  tpmg_context *ctx = grid->ctx;
  int k = grid->options.degree;
  if (!grid->part[fine].distributed)
    return ctx->ops->restrict_(ctx, &grid->levels[fine - 1], &grid->levels[fine], p, f, c);
  if (!grid->part[fine - 1].distributed) {
    /* onto a level every rank keeps whole */
    TPMG_CALL(tpmg_partition_gather(grid, fine, p, f, scratch));
    return ctx->ops->restrict_(ctx, &grid->levels[fine - 1], &grid->global[fine], p, scratch, c);
  }
  TPMG_CALL(tpmg_partition_exchange(grid, fine, p, (void *)f, 1, 2 * k));
  tpmg_index offset;
  tpmg_level coarse = coarse_view(grid, fine, &offset);
  return ctx->ops->restrict_(ctx, &coarse, &grid->levels[fine], p, f, at(c, offset, p));
}

tpmg_status tpmg_partition_prolongate_add(const tpmg_grid *grid, int fine, tpmg_precision p,
                                          const void *c, void *f) {
  tpmg_context *ctx = grid->ctx;
  int k = grid->options.degree;
  if (!grid->part[fine].distributed)
    return ctx->ops->prolongate_add(ctx, &grid->levels[fine - 1], &grid->levels[fine], p, c, f);
  TPMG_CALL(tpmg_partition_exchange(grid, fine - 1, p, (void *)c, k + 1, k));
  tpmg_index offset;
  tpmg_level coarse = coarse_view(grid, fine, &offset);
  return ctx->ops->prolongate_add(ctx, &coarse, &grid->levels[fine], p, at(c, offset, p), f);
}

tpmg_status tpmg_partition_gather(const tpmg_grid *grid, int l, tpmg_precision p,
                                  const void *local, void *global) {
  tpmg_context *ctx = grid->ctx;
  const tpmg_part *part = &grid->part[l];
  tpmg_index offset, n;
  tpmg_partition_owned(grid, l, &offset, &n);
  TPMG_CALL(ctx->ops->convert(ctx, n, p, at(local, offset, p), p,
                              at(global, part->owned_first * part->plane, p)));
  if (!part->distributed) return TPMG_SUCCESS;
  tpmg_message *m = malloc(sizeof(*m) * (size_t)ctx->size);
  TPMG_CHECK(ctx, m, TPMG_ERROR_MEMORY, "%d messages", ctx->size);
  size_t size = tpmg_precision_size(p);
  int count = 0;
  for (int q = 0; q < ctx->size; ++q) {
    if (q == ctx->rank) continue;
    tpmg_index q0, q1;
    owned_planes(grid, l, q, &q0, &q1);
    m[count++] = (tpmg_message){q, at(local, offset, p), (size_t)n * size,
                                at(global, q0 * part->plane, p),
                                (size_t)((q1 - q0) * part->plane) * size};
  }
  tpmg_status status = counted_messages(ctx, 1, count, m);
  free(m);
  return status;
}

tpmg_status tpmg_partition_extract(const tpmg_grid *grid, int l, tpmg_precision p,
                                   const void *global, void *local) {
  tpmg_context *ctx = grid->ctx;
  const tpmg_part *part = &grid->part[l];
  return ctx->ops->convert(ctx, part->count * part->plane, p,
                           at(global, part->first * part->plane, p), p, local);
}
