/* The colourised multiplicative vertex-patch smoother (paper Algorithm 3).
 *
 * Patches around interior vertices of one colour (the parities of the vertex
 * indices) have disjoint interiors, and none reads another's interior, so each
 * colour is one parallel pass. A patch update is x_I += A_I^{-1} (b - A x)_I with
 * the exact inverse by fast diagonalization,
 *   A_I^{-1} = (S_2 ⊗ S_1 ⊗ S_0) (Λ_2 ⊗ I ⊗ I + I ⊗ Λ_1 ⊗ I + I ⊗ I ⊗ Λ_0)^{-1} (S_2 ⊗ S_1 ⊗ S_0)^T
 * (paper eq. 2.8), where A_d S_d = M_d S_d Λ_d on the patch interior. The
 * variants differ in where the residual comes from (paper Table 4): GLOBAL uses
 * the level operator once per colour, SEPARATE a patch-local residual pass, and
 * FUSED computes the residual and the solve of a patch in one pass.
 *
 * BOUNDARY (the paper's "Reduced computation in local residual", labeled
 * Boundary there; arXiv:2405.19004): with an
 * exact local solver, the FUSED update
 *   x_I + A_II^{-1} (b_I - A_II x_I - A_IB x_B) = A_II^{-1} (b_I - A_IB x_B),
 * so the new interior values do not depend on the old ones. The same pass as
 * FUSED reads the patch window with its interior taken as zero (no loads of
 * x_I) and stores the local solution into x_I instead of adding it. */
#include <stdlib.h>

#include "tpmg-impl.h"

struct tpmg_smoother {
  tpmg_grid *grid; /* referenced */
  int l;
  const tpmg_level *level; /* this rank's box of level l */
  tpmg_precision precision;
  tpmg_smoother_options options;
  void *residual; /* GLOBAL and SEPARATE: a level vector */
  size_t residual_bytes;
};

tpmg_smoother_options tpmg_smoother_options_default(void) {
  tpmg_smoother_options options = {TPMG_SMOOTHER_FUSED};
  return options;
}

tpmg_status tpmg_smoother_create(tpmg_grid *grid, int level, tpmg_precision precision,
                                 const tpmg_smoother_options *options, tpmg_smoother **smoother) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, smoother, TPMG_ERROR_ARGUMENT, "smoother is NULL");
  TPMG_CHECK(ctx, precision == TPMG_DOUBLE || precision == TPMG_FLOAT, TPMG_ERROR_ARGUMENT,
             "unknown precision %d", (int)precision);
  int index = 0;
  TPMG_CALL(tpmg_grid_check_level(grid, level, 1, &index));
  return tpmg_smoother_create_index(grid, index, precision, options, smoother);
}

/* grid, smoother and precision checked by the caller */
tpmg_status tpmg_smoother_create_index(tpmg_grid *grid, int index, tpmg_precision precision,
                                       const tpmg_smoother_options *options,
                                       tpmg_smoother **smoother) {
  tpmg_context *ctx = grid->ctx;
  tpmg_smoother_options opts = options ? *options : tpmg_smoother_options_default();
  TPMG_CHECK(ctx,
             opts.variant == TPMG_SMOOTHER_GLOBAL || opts.variant == TPMG_SMOOTHER_SEPARATE ||
                 opts.variant == TPMG_SMOOTHER_FUSED || opts.variant == TPMG_SMOOTHER_BOUNDARY,
             TPMG_ERROR_ARGUMENT, "unknown smoother variant %d", (int)opts.variant);
  /* the patch-local residuals assume a = 1 (tpmg_grid_set_coefficient) */
  TPMG_CHECK(ctx, !grid->levels[index].coefficient[0] || opts.variant == TPMG_SMOOTHER_GLOBAL,
             TPMG_ERROR_UNSUPPORTED,
             "smoother variant %s: on a grid with a variable coefficient only global computes the "
             "exact operator's residual; take TPMG_SMOOTHER_GLOBAL",
             tpmg_smoother_variant_name(opts.variant));
  if (ctx->ops->check_level)
    TPMG_CALL(ctx->ops->check_level(ctx, &grid->levels[index], precision, TPMG_USE_SMOOTHER));

  tpmg_smoother *s = calloc(1, sizeof(*s));
  TPMG_CHECK(ctx, s, TPMG_ERROR_MEMORY, "allocating the smoother failed");
  s->grid = grid;
  s->l = index;
  s->level = &grid->levels[index];
  s->precision = precision;
  s->options = opts;
  tpmg_status status = TPMG_SUCCESS;
  if (opts.variant == TPMG_SMOOTHER_GLOBAL || opts.variant == TPMG_SMOOTHER_SEPARATE) {
    s->residual_bytes = (size_t)s->level->n_dofs * tpmg_precision_size(precision);
    status = tpmg_malloc(ctx, s->residual_bytes, "smoother residual", &s->residual);
  }
  status = tpmg_comm_agree(ctx, status);
  if (status != TPMG_SUCCESS) {
    tpmg_free(ctx, s->residual_bytes, s->residual);
    free(s);
    return status;
  }
  tpmg_grid_reference(grid);
  *smoother = s;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_smoother_apply(tpmg_smoother *smoother, int reverse, const void *b, void *x) {
  if (!smoother) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = smoother->grid->ctx;
  const tpmg_level *lvl = smoother->level;
  tpmg_precision p = smoother->precision;
  TPMG_CALL(tpmg_vector_check_pair(ctx, "tpmg_smoother_apply", p, "b", b, lvl->n_dofs, "x", x,
                                   lvl->n_dofs));
  return tpmg_smoother_sweep(smoother, reverse, b, x);
}

/* FUSED or BOUNDARY on the patches around vertices [range[0], range[1])
 * along the last direction. */
static tpmg_status fused(tpmg_smoother *smoother, int colour, const tpmg_index range[2],
                         const void *b, void *x) {
  tpmg_context *ctx = smoother->grid->ctx;
  if (range[0] >= range[1]) return TPMG_SUCCESS;
  return ctx->ops->patch_fused(ctx, smoother->level, smoother->precision, colour,
                               smoother->options.variant == TPMG_SMOOTHER_BOUNDARY, range, b, x);
}

/* FUSED and BOUNDARY: before each colour the exchange of x (and before the
 * first also of b) runs while the colour's inner patches, which neither read
 * the ghosts nor write what is sent, are computed (ctx->overlap); the patches
 * next to the cuts follow. Without overlap the exchange completes first and
 * all of the colour's patches run in one call. The same patches see the same
 * values either way, so the results are the same. */
static tpmg_status fused_sweep(tpmg_smoother *smoother, int reverse, const void *b, void *x) {
  tpmg_context *ctx = smoother->grid->ctx;
  const tpmg_grid *grid = smoother->grid;
  int l = smoother->l, k = smoother->level->degree;
  int n_colours = 1 << smoother->level->dim;
  tpmg_index inner[2], edge[2][2];
  tpmg_partition_patches(grid, l, inner, edge);
  /* without overlap: the colour's patches in one call after the wait (the
   * ranges are contiguous and a colour's patches do not overlap) */
  const tpmg_index all[2] = {edge[0][0], edge[1][1]};
  void *const vectors[2] = {x, (void *)b};
  for (int step = 0; step < n_colours; ++step) {
    int colour = tpmg_partition_colour(grid, l, reverse ? n_colours - 1 - step : step);
    tpmg_status status = tpmg_partition_exchange_start(grid, l, smoother->precision,
                                                       step == 0 ? 2 : 1, vectors, k + 1, k);
    if (status == TPMG_SUCCESS && ctx->overlap) status = fused(smoother, colour, inner, b, x);
    tpmg_status waited = tpmg_partition_exchange_wait(grid, l);
    if (status == TPMG_SUCCESS) status = waited;
    if (status == TPMG_SUCCESS && !ctx->overlap) status = fused(smoother, colour, all, b, x);
    for (int side = 0; side < 2 && status == TPMG_SUCCESS && ctx->overlap; ++side)
      status = fused(smoother, colour, edge[side], b, x);
    TPMG_CALL(status);
  }
  return TPMG_SUCCESS;
}

/* Patches of one colour do not overlap, so a colour's sweep gives the same
 * values at owned DoFs on every partition once the ghost cell next to the
 * slab is current: b once, x before each colour. */
tpmg_status tpmg_smoother_sweep(tpmg_smoother *smoother, int reverse, const void *b, void *x) {
  tpmg_context *ctx = smoother->grid->ctx;
  const tpmg_grid *grid = smoother->grid;
  const tpmg_level *lvl = smoother->level;
  tpmg_precision p = smoother->precision;
  int l = smoother->l, k = lvl->degree;
  int n_colours = 1 << lvl->dim;
  if (smoother->options.variant == TPMG_SMOOTHER_FUSED ||
      smoother->options.variant == TPMG_SMOOTHER_BOUNDARY)
    return fused_sweep(smoother, reverse, b, x);
  TPMG_CALL(tpmg_partition_exchange(grid, l, p, (void *)b, k + 1, k));
  for (int step = 0; step < n_colours; ++step) {
    int colour = tpmg_partition_colour(grid, l, reverse ? n_colours - 1 - step : step);
    if (smoother->options.variant == TPMG_SMOOTHER_GLOBAL) {
      TPMG_CALL(tpmg_partition_laplace(grid, l, p, x, smoother->residual));
      TPMG_CALL(ctx->ops->axpby(ctx, p, lvl->n_dofs, 1.0, b, -1.0, smoother->residual));
      TPMG_CALL(tpmg_partition_exchange(grid, l, p, smoother->residual, k + 1, k));
    } else {
      TPMG_CALL(tpmg_partition_exchange(grid, l, p, x, k + 1, k));
      TPMG_CALL(ctx->ops->patch_residual(ctx, lvl, p, colour, b, x, smoother->residual));
    }
    TPMG_CALL(ctx->ops->patch_solve(ctx, lvl, p, colour, smoother->residual, x));
  }
  return TPMG_SUCCESS;
}

tpmg_status tpmg_smoother_work(const tpmg_smoother *smoother, tpmg_work *work) {
  if (!smoother)
    return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = smoother->grid->ctx;
  TPMG_CHECK(ctx, work, TPMG_ERROR_ARGUMENT, "work is NULL");
  TPMG_CHECK(ctx, ctx->ops->smoother_work, TPMG_ERROR_UNSUPPORTED, "the %s backend counts no work",
             ctx->ops->name);
  return ctx->ops->smoother_work(ctx, smoother->level, smoother->precision,
                                 smoother->options.variant, work);
}

tpmg_status tpmg_smoother_destroy(tpmg_smoother **smoother) {
  if (!smoother) return TPMG_ERROR_ARGUMENT;
  tpmg_smoother *s = *smoother;
  if (!s) return TPMG_SUCCESS;
  tpmg_grid *grid = s->grid;
  tpmg_free(grid->ctx, s->residual_bytes, s->residual);
  free(s);
  tpmg_grid_release(grid);
  *smoother = NULL;
  return TPMG_SUCCESS;
}
