/* The multigrid hierarchy: the V-cycle (paper Algorithm 1) and the first pass
 * of full multigrid (paper Algorithm 2) in one precision, the hierarchy's,
 * written once over backend operations, so that on a GPU no vector leaves the
 * device (except in the bottom solve of a level with more than
 * TPMG_MAX_COARSE_DOFS interior DoFs, tpmg-coarse.c). Every vector it reads
 * and writes is of that precision. Double vectors on a float hierarchy are
 * the mixed-precision adapter's (tpmg-mixed.c): a public float hierarchy keeps
 * one for tpmg_multigrid_precondition and tpmg_multigrid_fmg with double
 * vectors. Levels are the grid's indices: the hidden levels below the user's
 * coarse mesh (tpmg-grid.c) are smoothed like every other level, and the
 * bottom, index 0, is solved exactly. */
#include <stdio.h>
#include <stdlib.h>

#include "tpmg-impl.h"

struct tpmg_multigrid {
  tpmg_grid *grid; /* referenced */
  tpmg_multigrid_options options;
  int fine;                                  /* finest level L, a grid index */
  tpmg_smoother *smoothers[TPMG_MAX_LEVELS]; /* levels 1..L */
  tpmg_coarse *coarse;
  /* per level: right-hand side / defect b, iterate x, residual r; on level L
   * the caller's b and x take the place of b_L and x_L, and r_L may be the
   * caller's (fine_r of tpmg_multigrid_create_hierarchy) */
  void *b[TPMG_MAX_LEVELS], *x[TPMG_MAX_LEVELS], *r[TPMG_MAX_LEVELS];
  size_t bytes[TPMG_MAX_LEVELS];
  int lent_r;    /* r_L is the caller's */
  void *scratch; /* restriction onto the levels every rank keeps whole */
  size_t scratch_bytes;
  tpmg_mixed *doubles; /* a public float hierarchy's adapter for double vectors */
};

tpmg_multigrid_options tpmg_multigrid_options_default(void) {
  tpmg_multigrid_options options = {TPMG_DOUBLE, TPMG_SMOOTHER_FUSED, 1};
  return options;
}

tpmg_status tpmg_multigrid_create_hierarchy(tpmg_grid *grid, const tpmg_multigrid_options *options,
                                            void *fine_r, tpmg_multigrid **mg) {
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, mg, TPMG_ERROR_ARGUMENT, "mg is NULL");
  tpmg_multigrid_options opts = options ? *options : tpmg_multigrid_options_default();
  TPMG_CHECK(ctx, opts.precision == TPMG_DOUBLE || opts.precision == TPMG_FLOAT,
             TPMG_ERROR_ARGUMENT, "unknown precision %d", (int)opts.precision);

  tpmg_multigrid *m = calloc(1, sizeof(*m));
  TPMG_CHECK(ctx, m, TPMG_ERROR_MEMORY, "allocating the multigrid failed");
  m->grid = grid;
  tpmg_grid_reference(grid);
  m->options = opts;
  m->fine = grid->n_levels - 1;
  tpmg_smoother_options smoother_options = tpmg_smoother_options_default();
  smoother_options.variant = opts.smoother;
  tpmg_status status = tpmg_coarse_create_index(grid, 0, opts.precision, &m->coarse);
  for (int l = 1; l <= m->fine && status == TPMG_SUCCESS; ++l)
    status =
        tpmg_smoother_create_index(grid, l, opts.precision, &smoother_options, &m->smoothers[l]);
  /* a whole level in double, whatever the hierarchy's precision:
   * tpmg_multigrid_restrict serves vectors of either */
  for (int l = 1; l <= m->fine; ++l) {
    size_t bytes = tpmg_partition_restrict_scratch(grid, l, TPMG_DOUBLE);
    if (bytes > m->scratch_bytes)
      m->scratch_bytes = bytes;
  }
  if (status == TPMG_SUCCESS)
    status = tpmg_malloc(ctx, m->scratch_bytes, "multigrid restriction scratch", &m->scratch);
  for (int l = 0; l <= m->fine && status == TPMG_SUCCESS; ++l) {
    m->bytes[l] = (size_t)grid->levels[l].n_dofs * tpmg_precision_size(opts.precision);
    if (l == m->fine && fine_r) {
      m->r[l] = fine_r;
      m->lent_r = 1;
    } else {
      status = tpmg_malloc(ctx, m->bytes[l], "multigrid level vector", &m->r[l]);
    }
    if (status == TPMG_SUCCESS && l < m->fine)
      status = tpmg_malloc(ctx, m->bytes[l], "multigrid level vector", &m->b[l]);
    if (status == TPMG_SUCCESS && l < m->fine)
      status = tpmg_malloc(ctx, m->bytes[l], "multigrid level vector", &m->x[l]);
    /* ghost planes are read before they are first written: keep them finite */
    void *vectors[3] = {m->r[l], m->b[l], m->x[l]};
    for (int i = 0; i < 3 && status == TPMG_SUCCESS; ++i)
      if (vectors[i])
        status = ctx->ops->set(ctx, opts.precision, grid->levels[l].n_dofs, 0.0, vectors[i]);
  }
  status = tpmg_comm_agree(ctx, status);
  if (status != TPMG_SUCCESS) {
    tpmg_multigrid_destroy(&m);
    return status;
  }
  *mg = m;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_multigrid_create(tpmg_grid *grid, const tpmg_multigrid_options *options,
                                  tpmg_multigrid **mg) {
  if (!grid)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CALL(tpmg_multigrid_create_hierarchy(grid, options, NULL, mg));
  if ((*mg)->options.precision == TPMG_DOUBLE)
    return TPMG_SUCCESS;
  tpmg_status status = tpmg_mixed_create(grid, NULL, *mg, 0, 0, &(*mg)->doubles);
  if (status != TPMG_SUCCESS)
    tpmg_multigrid_destroy(mg);
  return status;
}

tpmg_status tpmg_multigrid_destroy(tpmg_multigrid **mg) {
  if (!mg)
    return TPMG_ERROR_ARGUMENT;
  tpmg_multigrid *m = *mg;
  if (!m)
    return TPMG_SUCCESS;
  tpmg_grid *grid = m->grid;
  tpmg_context *ctx = grid->ctx;
  tpmg_mixed_destroy(&m->doubles);
  tpmg_coarse_destroy(&m->coarse);
  tpmg_free(ctx, m->scratch_bytes, m->scratch);
  for (int l = 0; l < TPMG_MAX_LEVELS; ++l) {
    tpmg_smoother_destroy(&m->smoothers[l]);
    tpmg_free(ctx, m->bytes[l], m->b[l]);
    tpmg_free(ctx, m->bytes[l], m->x[l]);
    if (!(m->lent_r && l == m->fine))
      tpmg_free(ctx, m->bytes[l], m->r[l]);
  }
  free(m);
  tpmg_grid_release(grid);
  *mg = NULL;
  return TPMG_SUCCESS;
}

static tpmg_status vcycle_from_zero(tpmg_multigrid *m, int l, const void *b, void *x);

/* x_l <- Vcycle_l(x_l, b_l), paper Algorithm 1; levels below l use the
 * hierarchy's vectors. */
static tpmg_status vcycle(tpmg_multigrid *m, int l, const void *b, void *x) {
  tpmg_context *ctx = m->grid->ctx;
  tpmg_precision p = m->options.precision;
  if (l == 0) /* the coarse grid solver: x_0 = A_0^{-1} b_0 */
    return tpmg_coarse_solve(m->coarse, b, x);
  /* pre-smoothing */
  TPMG_CALL(tpmg_smoother_sweep(m->smoothers[l], 0, b, x));
  /* residual r_l = b_l - A_l x_l, coarsened into b_{l-1} */
  TPMG_CALL(tpmg_partition_laplace(m->grid, l, p, x, m->r[l]));
  TPMG_CALL(ctx->ops->axpby(ctx, p, m->grid->levels[l].n_dofs, 1.0, b, -1.0, m->r[l]));
  TPMG_CALL(tpmg_multigrid_restrict(m, l, p, m->r[l], m->b[l - 1]));
  /* coarse grid correction x_l += I (Vcycle_{l-1}(0, b_{l-1})) */
  TPMG_CALL(vcycle_from_zero(m, l - 1, m->b[l - 1], m->x[l - 1]));
  TPMG_CALL(tpmg_partition_prolongate_add(m->grid, l, p, m->x[l - 1], x));
  /* post-smoothing (colours reversed where symmetric) */
  return tpmg_smoother_sweep(m->smoothers[l], m->options.symmetric, b, x);
}

/* x_l <- Vcycle_l(0, b_l): x_l's entries are written, not read (the bottom
 * solve writes them itself). */
static tpmg_status vcycle_from_zero(tpmg_multigrid *m, int l, const void *b, void *x) {
  tpmg_context *ctx = m->grid->ctx;
  if (l > 0)
    TPMG_CALL(ctx->ops->set(ctx, m->options.precision, m->grid->levels[l].n_dofs, 0.0, x));
  return vcycle(m, l, b, x);
}

tpmg_status tpmg_multigrid_level_apply(tpmg_multigrid *mg, int l, const void *r, void *z) {
  return vcycle_from_zero(mg, l, r, z);
}

tpmg_status tpmg_multigrid_apply(tpmg_multigrid *mg, const void *r, void *z) {
  return vcycle_from_zero(mg, mg->fine, r, z);
}

/* Paper Algorithm 2, lines 1-5, after b is restricted to every level. */
tpmg_status tpmg_multigrid_fmg_from(tpmg_multigrid *mg, const void *b, const void *r0, void *x) {
  tpmg_context *ctx = mg->grid->ctx;
  tpmg_precision p = mg->options.precision;
  int L = mg->fine;
  for (int l = L; l > 0; --l) { /* b (or r0) restricted to every level */
    const void *bl = l < L ? mg->b[l] : r0 ? r0 : b;
    TPMG_CALL(tpmg_multigrid_restrict(mg, l, p, bl, mg->b[l - 1]));
  }
  TPMG_CALL(tpmg_coarse_solve(mg->coarse, mg->b[0], mg->x[0])); /* A_0 x_0 = b_0 */
  for (int l = 1; l <= L; ++l) {
    void *xl = l == L ? x : mg->x[l];
    if (l < L || !r0) /* prolongate: x_l = I x_{l-1} (from r0: x_L += I x_{L-1}) */
      TPMG_CALL(ctx->ops->set(ctx, p, mg->grid->levels[l].n_dofs, 0.0, xl));
    TPMG_CALL(tpmg_partition_prolongate_add(mg->grid, l, p, mg->x[l - 1], xl));
    TPMG_CALL(vcycle(mg, l, l == L ? b : mg->b[l], xl)); /* x_l = Vcycle_l(x_l, b_l) */
  }
  return TPMG_SUCCESS;
}

void tpmg_multigrid_level_vectors(const tpmg_multigrid *mg, int l, void **b, void **x) {
  *b = mg->b[l];
  *x = mg->x[l];
}

tpmg_status tpmg_multigrid_restrict(const tpmg_multigrid *mg, int fine, tpmg_precision p,
                                    const void *f, void *c) {
  return tpmg_partition_restrict(mg->grid, fine, p, f, c, mg->scratch);
}

/* The checks of a public call's vectors; every rank returns the same status. */
static tpmg_status check_vectors(tpmg_multigrid *mg, const char *what, tpmg_precision precision,
                                 const char *names[2], const void *b, const void *x) {
  tpmg_context *ctx = mg->grid->ctx;
  tpmg_precision p = mg->options.precision;
  tpmg_status status = TPMG_SUCCESS;
  if (precision != p && !(precision == TPMG_DOUBLE && p == TPMG_FLOAT))
    status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                            "%s: vectors of precision %d for a hierarchy of precision %d (only "
                            "equal precisions, or double vectors for a float hierarchy)",
                            what, (int)precision, (int)p);
  TPMG_CALL(tpmg_comm_agree(ctx, status));
  tpmg_index n = mg->grid->levels[mg->fine].n_dofs;
  return tpmg_vector_check_pair(ctx, what, precision, names[0], b, n, names[1], x, n);
}

tpmg_status tpmg_multigrid_vcycle(tpmg_multigrid *mg, const void *b, void *x) {
  if (!mg)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CALL(check_vectors(mg, "tpmg_multigrid_vcycle", mg->options.precision,
                          (const char *[2]){"b", "x"}, b, x));
  return vcycle(mg, mg->fine, b, x);
}

tpmg_status tpmg_multigrid_precondition(tpmg_multigrid *mg, tpmg_precision precision, const void *r,
                                        void *z) {
  if (!mg)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CALL(check_vectors(mg, "tpmg_multigrid_precondition", precision, (const char *[2]){"r", "z"},
                          r, z));
  if (precision != mg->options.precision)
    return tpmg_mixed_precondition(mg->doubles, r, z);
  return tpmg_multigrid_apply(mg, r, z);
}

tpmg_status tpmg_multigrid_fmg(tpmg_multigrid *mg, tpmg_precision precision, const void *b,
                               void *x) {
  if (!mg)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CALL(check_vectors(mg, "tpmg_multigrid_fmg", precision, (const char *[2]){"b", "x"}, b, x));
  if (precision != mg->options.precision)
    return tpmg_mixed_fmg(mg->doubles, b, NULL, x, NULL, NULL);
  return tpmg_multigrid_fmg_from(mg, b, NULL, x);
}
