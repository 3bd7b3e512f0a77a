/* The multigrid hierarchy: the V-cycle (paper Algorithm 1) and the first pass
 * of full multigrid (paper Algorithm 2), written once over backend operations,
 * so that on a GPU no vector leaves the device (except in the bottom solve of
 * a level with more than TPMG_MAX_COARSE_DOFS interior DoFs, tpmg-coarse.c).
 * Levels are the grid's indices: the hidden levels below the user's coarse
 * mesh (tpmg-grid.c) are smoothed like every other level, and the bottom,
 * index 0, is solved exactly. */
#include <stdio.h>
#include <stdlib.h>

#include "tpmg-impl.h"

struct tpmg_multigrid {
  tpmg_grid *grid; /* referenced */
  tpmg_multigrid_options options;
  int fine;                                  /* finest level L, a grid index */
  tpmg_smoother *smoothers[TPMG_MAX_LEVELS]; /* levels 1..L */
  tpmg_coarse *coarse;
  /* per level: right-hand side / defect b, iterate x, residual r; on level L, b
   * and x are the caller's except when precondition converts precisions */
  void *b[TPMG_MAX_LEVELS], *x[TPMG_MAX_LEVELS], *r[TPMG_MAX_LEVELS];
  size_t bytes[TPMG_MAX_LEVELS];
  /* lending (tpmg_multigrid_create_outer): b_L and r_L in one allocation */
  void *block;
  size_t block_bytes;
  void *scratch; /* restriction onto the levels every rank keeps whole */
  size_t scratch_bytes;
  /* mixed FMG (double vectors, float hierarchy): the iterate and right-hand
   * side in double on levels 0..L-1, and a double work vector as long as the
   * longest level (fmg_work_length) unless the caller lends one that long;
   * made by the first such FMG */
  void *fmg_b[TPMG_MAX_LEVELS], *fmg_x[TPMG_MAX_LEVELS], *fmg_work;
  size_t fmg_work_bytes;
  int fmg_ready;
};

tpmg_multigrid_options tpmg_multigrid_options_default(void) {
  tpmg_multigrid_options options = {TPMG_DOUBLE, TPMG_SMOOTHER_FUSED, 1};
  return options;
}

/* fine_b, fine_x: whether level L has b and x of its own (to convert a
 * caller's vectors of the other precision); lend: b_L and r_L are the two
 * halves of one block of at least n_L doubles, r_L at a 256-byte boundary. */
static tpmg_status create(tpmg_grid *grid, const tpmg_multigrid_options *options, int fine_b,
                          int fine_x, int lend, tpmg_multigrid **mg) {
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
  for (int l = 1; l <= m->fine; ++l) {
    /* a float hierarchy's mixed FMG restricts in double too */
    size_t bytes = tpmg_partition_restrict_scratch(grid, l, TPMG_DOUBLE);
    if (opts.precision == TPMG_DOUBLE || bytes == 0)
      bytes = tpmg_partition_restrict_scratch(grid, l, opts.precision);
    if (bytes > m->scratch_bytes) m->scratch_bytes = bytes;
  }
  if (status == TPMG_SUCCESS)
    status = tpmg_malloc(ctx, m->scratch_bytes, "multigrid restriction scratch", &m->scratch);
  for (int l = 0; l <= m->fine && status == TPMG_SUCCESS; ++l) {
    m->bytes[l] = (size_t)grid->levels[l].n_dofs * tpmg_precision_size(opts.precision);
    int fine = l == m->fine;
    if (fine && lend) {
      size_t half = (m->bytes[l] + 255) / 256 * 256;
      m->block_bytes = half + m->bytes[l]; /* >= 2 n floats = n doubles */
      status = tpmg_malloc(ctx, m->block_bytes, "multigrid fine-level b and r", &m->block);
      if (status == TPMG_SUCCESS) {
        m->b[l] = m->block;
        m->r[l] = (char *)m->block + half;
      }
    } else {
      status = tpmg_malloc(ctx, m->bytes[l], "multigrid level vector", &m->r[l]);
      if (status == TPMG_SUCCESS && (!fine || fine_b))
        status = tpmg_malloc(ctx, m->bytes[l], "multigrid level vector", &m->b[l]);
    }
    if (status == TPMG_SUCCESS && (!fine || fine_x))
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
  /* a float hierarchy converts double arguments through its own b_L and x_L */
  int convert = options && options->precision == TPMG_FLOAT;
  return create(grid, options, convert, convert, 0, mg);
}

tpmg_status tpmg_multigrid_create_outer(tpmg_grid *grid, const tpmg_multigrid_options *options,
                                        tpmg_precision outer, int native, tpmg_multigrid **mg) {
  int convert = options->precision != outer;
  return create(grid, options, convert, convert && !native, convert && native, mg);
}

/* A double vector of level l's length. */
static size_t double_bytes(const tpmg_multigrid *m, int l) {
  return (size_t)m->grid->levels[l].n_dofs * sizeof(double);
}

/* The most DoFs of the boxes of levels 1..L on this rank: mixed FMG's work
 * vector holds each level's residual in turn. On one process that is level L;
 * on P ranks a level every rank keeps whole can be longer than this rank's
 * slab of level L (3D Q1 level 6 on 32 ranks: level 5 whole, 33^3 DoFs, level
 * 6 a slab of 2 cells and 2 ghost cells each side, 65^2 x 7 DoFs). */
static tpmg_index fmg_work_length(const tpmg_multigrid *m) {
  tpmg_index n = m->grid->levels[m->fine].n_dofs;
  for (int l = 1; l < m->fine; ++l)
    if (m->grid->levels[l].n_dofs > n) n = m->grid->levels[l].n_dofs;
  return n;
}

tpmg_status tpmg_multigrid_destroy(tpmg_multigrid **mg) {
  if (!mg) return TPMG_ERROR_ARGUMENT;
  tpmg_multigrid *m = *mg;
  if (!m) return TPMG_SUCCESS;
  tpmg_grid *grid = m->grid;
  tpmg_context *ctx = grid->ctx;
  tpmg_coarse_destroy(&m->coarse);
  tpmg_free(ctx, m->scratch_bytes, m->scratch);
  tpmg_free(ctx, m->block_bytes, m->block);
  for (int l = 0; l < TPMG_MAX_LEVELS; ++l) {
    tpmg_smoother_destroy(&m->smoothers[l]);
    tpmg_free(ctx, m->bytes[l], m->x[l]);
    if (m->block && l == m->fine)
      continue;
    tpmg_free(ctx, m->bytes[l], m->b[l]);
    tpmg_free(ctx, m->bytes[l], m->r[l]);
    tpmg_free(ctx, double_bytes(m, l), m->fmg_b[l]);
    tpmg_free(ctx, double_bytes(m, l), m->fmg_x[l]);
  }
  tpmg_free(ctx, m->fmg_work_bytes, m->fmg_work);
  free(m);
  tpmg_grid_release(grid);
  *mg = NULL;
  return TPMG_SUCCESS;
}

/* x_l <- V_l(x_l, b_l); levels below l use the hierarchy's vectors. */
static tpmg_status vcycle(tpmg_multigrid *m, int l, const void *b, void *x) {
  tpmg_context *ctx = m->grid->ctx;
  const tpmg_grid *grid = m->grid;
  tpmg_precision p = m->options.precision;
  const tpmg_level *lvl = &grid->levels[l], *coarse = &grid->levels[l - 1];
  TPMG_CALL(tpmg_smoother_sweep(m->smoothers[l], 0, b, x));
  TPMG_CALL(tpmg_partition_laplace(grid, l, p, x, m->r[l]));
  TPMG_CALL(ctx->ops->axpby(ctx, p, lvl->n_dofs, 1.0, b, -1.0, m->r[l]));
  TPMG_CALL(tpmg_partition_restrict(grid, l, p, m->r[l], m->b[l - 1], m->scratch));
  if (l - 1 == 0) {
    TPMG_CALL(tpmg_coarse_solve(m->coarse, m->b[0], m->x[0]));
  } else {
    TPMG_CALL(ctx->ops->set(ctx, p, coarse->n_dofs, 0.0, m->x[l - 1]));
    TPMG_CALL(vcycle(m, l - 1, m->b[l - 1], m->x[l - 1]));
  }
  TPMG_CALL(tpmg_partition_prolongate_add(grid, l, p, m->x[l - 1], x));
  return tpmg_smoother_sweep(m->smoothers[l], m->options.symmetric, b, x);
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
  if (!mg) return TPMG_ERROR_ARGUMENT;
  TPMG_CALL(check_vectors(mg, "tpmg_multigrid_vcycle", mg->options.precision,
                          (const char *[2]){"b", "x"}, b, x));
  return vcycle(mg, mg->fine, b, x);
}

tpmg_status tpmg_multigrid_precondition(tpmg_multigrid *mg, tpmg_precision precision,
                                        const void *r, void *z) {
  if (!mg) return TPMG_ERROR_ARGUMENT;
  TPMG_CALL(check_vectors(mg, "tpmg_multigrid_precondition", precision,
                          (const char *[2]){"r", "z"}, r, z));
  return tpmg_multigrid_apply(mg, precision, r, z);
}

tpmg_status tpmg_multigrid_apply_native(tpmg_multigrid *mg, tpmg_precision precision, const void *r,
                                        void *z) {
  tpmg_context *ctx = mg->grid->ctx;
  tpmg_precision p = mg->options.precision;
  int L = mg->fine;
  tpmg_index n = mg->grid->levels[L].n_dofs;
  if (precision != p) {
    TPMG_CALL(ctx->ops->convert(ctx, n, precision, r, p, mg->b[L]));
    r = mg->b[L];
  }
  TPMG_CALL(ctx->ops->set(ctx, p, n, 0.0, z));
  return vcycle(mg, L, r, z);
}

tpmg_status tpmg_multigrid_apply(tpmg_multigrid *mg, tpmg_precision precision, const void *r,
                                 void *z) {
  tpmg_context *ctx = mg->grid->ctx;
  tpmg_precision p = mg->options.precision;
  int L = mg->fine;
  if (precision == p)
    return tpmg_multigrid_apply_native(mg, precision, r, z);
  TPMG_CALL(tpmg_multigrid_apply_native(mg, precision, r, mg->x[L]));
  return ctx->ops->convert(ctx, mg->grid->levels[L].n_dofs, p, mg->x[L], precision, z);
}

tpmg_status tpmg_multigrid_correct(tpmg_multigrid *mg, tpmg_precision precision, const void *r,
                                   void *x) {
  tpmg_context *ctx = mg->grid->ctx;
  tpmg_precision p = mg->options.precision;
  int L = mg->fine;
  const double one = 1.0;
  const void *xL = mg->x[L];
  TPMG_CALL(tpmg_multigrid_apply_native(mg, precision, r, mg->x[L]));
  return ctx->ops->axpys(ctx, precision, mg->grid->levels[L].n_dofs, 1, &one, p, &xL, x, NULL);
}

void *tpmg_multigrid_scratch(const tpmg_multigrid *mg) {
  return mg->block;
}

tpmg_status tpmg_multigrid_reserve_fmg(tpmg_multigrid *mg, int work) {
  tpmg_context *ctx = mg->grid->ctx;
  if (mg->options.precision == TPMG_DOUBLE)
    return TPMG_SUCCESS;
  tpmg_status status = TPMG_SUCCESS;
  for (int l = 0; l < mg->fine && status == TPMG_SUCCESS; ++l) {
    void **vectors[2] = {&mg->fmg_b[l], &mg->fmg_x[l]};
    for (int i = 0; i < 2 && status == TPMG_SUCCESS; ++i) {
      if (*vectors[i])
        continue;
      status = tpmg_malloc(ctx, double_bytes(mg, l), "mixed FMG level vector", vectors[i]);
      /* ghost planes are read before they are first written: keep them finite */
      if (status == TPMG_SUCCESS)
        status = ctx->ops->set(ctx, TPMG_DOUBLE, mg->grid->levels[l].n_dofs, 0.0, *vectors[i]);
    }
  }
  /* a lent work vector has level L's length: too short where a coarser level is longer */
  tpmg_index length = fmg_work_length(mg);
  if (status == TPMG_SUCCESS && (work || length > mg->grid->levels[mg->fine].n_dofs) &&
      !mg->fmg_work) {
    status = tpmg_malloc(ctx, (size_t)length * sizeof(double), "mixed FMG work vector",
                         &mg->fmg_work);
    if (status == TPMG_SUCCESS) mg->fmg_work_bytes = (size_t)length * sizeof(double);
  }
  status = tpmg_comm_agree(ctx, status);
  mg->fmg_ready = status == TPMG_SUCCESS;
  return status; /* what was made stays for the next try or destroy */
}

/* FMG in the hierarchy's precision: restriction, bottom solve, and per level
 * prolongation and one V-cycle, all in that precision. r0: see
 * tpmg_multigrid_fmg_work. */
static tpmg_status fmg_plain(tpmg_multigrid *m, const void *b, const void *r0, void *x) {
  tpmg_context *ctx = m->grid->ctx;
  tpmg_precision p = m->options.precision;
  int L = m->fine;
  const tpmg_grid *grid = m->grid;
  for (int l = L; l > 0; --l)
    TPMG_CALL(tpmg_partition_restrict(grid, l, p, l < L ? m->b[l] : r0 ? r0 : b, m->b[l - 1],
                                      m->scratch));
  TPMG_CALL(tpmg_coarse_solve(m->coarse, m->b[0], m->x[0]));
  for (int l = 1; l <= L; ++l) {
    void *xl = l == L ? x : m->x[l];
    if (l < L || !r0)
      TPMG_CALL(ctx->ops->set(ctx, p, grid->levels[l].n_dofs, 0.0, xl));
    TPMG_CALL(tpmg_partition_prolongate_add(grid, l, p, m->x[l - 1], xl));
    TPMG_CALL(vcycle(m, l, l == L ? b : m->b[l], xl));
  }
  return TPMG_SUCCESS;
}

/* Mixed FMG: double b and x on a float hierarchy. The right-hand sides and
 * iterates of every level stay in double; each level's V-cycle runs in float
 * on the double residual, x_l += V(0, b_l - A_l x_l), which is the V-cycle
 * from x_l since a V-cycle is affine in x. Keeping the iterates in float
 * instead rounds them to about 6e-8 relative, whose residual (about the
 * condition number times that) a few more V-cycles must remove: an FMG pass
 * in float does not reach discretization accuracy where that is below float
 * precision (3D Q3 on level 8: 4 V-cycles to 1e-9 after the pass, against 1
 * in double). work: double, fmg_work_length's length. */
static tpmg_status fmg_mixed(tpmg_multigrid *m, const void *b, const void *r0, void *x,
                             void *work, void *fine_z) {
  tpmg_context *ctx = m->grid->ctx;
  const tpmg_precision p = m->options.precision, d = TPMG_DOUBLE;
  const double one = 1.0;
  int L = m->fine;
  const tpmg_grid *grid = m->grid;
  const tpmg_level *levels = grid->levels;
  for (int l = L; l > 0; --l) /* r0 (which may be work) is read here only */
    TPMG_CALL(tpmg_partition_restrict(grid, l, d, l < L ? m->fmg_b[l] : r0 ? r0 : b,
                                      m->fmg_b[l - 1], m->scratch));
  TPMG_CALL(ctx->ops->convert(ctx, levels[0].n_dofs, d, m->fmg_b[0], p, m->b[0]));
  TPMG_CALL(tpmg_coarse_solve(m->coarse, m->b[0], m->x[0]));
  TPMG_CALL(ctx->ops->convert(ctx, levels[0].n_dofs, p, m->x[0], d, m->fmg_x[0]));
  for (int l = 1; l <= L; ++l) {
    tpmg_index n = levels[l].n_dofs;
    void *xl = l == L ? x : m->fmg_x[l];
    const void *bl = l == L ? b : m->fmg_b[l];
    if (l < L || !r0)
      TPMG_CALL(ctx->ops->set(ctx, d, n, 0.0, xl));
    TPMG_CALL(tpmg_partition_prolongate_add(grid, l, d, m->fmg_x[l - 1], xl));
    TPMG_CALL(tpmg_partition_laplace(grid, l, d, xl, work));
    TPMG_CALL(ctx->ops->axpby(ctx, d, n, 1.0, bl, -1.0, work));
    void *zl = m->x[l] ? m->x[l] : fine_z; /* a lending hierarchy has no x_L */
    TPMG_CALL(ctx->ops->convert(ctx, n, d, work, p, m->b[l]));
    TPMG_CALL(ctx->ops->set(ctx, p, n, 0.0, zl));
    TPMG_CALL(vcycle(m, l, m->b[l], zl));
    const void *correction = zl; /* added from float, each entry widened exactly */
    TPMG_CALL(ctx->ops->axpys(ctx, d, n, 1, &one, p, &correction, xl, NULL));
  }
  return TPMG_SUCCESS;
}

tpmg_status tpmg_multigrid_fmg_work(tpmg_multigrid *mg, tpmg_precision precision, const void *b,
                                    const void *r0, void *x, void *work, void *fine_z) {
  if (precision == mg->options.precision)
    return fmg_plain(mg, b, r0, x);
  if (!mg->fmg_ready || (!work && !mg->fmg_work))
    TPMG_CALL(tpmg_multigrid_reserve_fmg(mg, !work));
  /* the hierarchy's own where it has one: as long as every level */
  return fmg_mixed(mg, b, r0, x, mg->fmg_work ? mg->fmg_work : work, fine_z);
}

tpmg_status tpmg_multigrid_fmg(tpmg_multigrid *mg, tpmg_precision precision, const void *b,
                               void *x) {
  if (!mg) return TPMG_ERROR_ARGUMENT;
  TPMG_CALL(check_vectors(mg, "tpmg_multigrid_fmg", precision, (const char *[2]){"b", "x"}, b, x));
  return tpmg_multigrid_fmg_work(mg, precision, b, NULL, x, NULL, NULL);
}
