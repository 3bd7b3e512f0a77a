/* The mixed-precision adapter: double vectors on a float hierarchy
 * (TPMG_ARITHMETIC_MIXED, paper §4.2), as deal.II's PreconditionMG converts at the
 * finest level while its Multigrid never knows. The hierarchy (tpmg-multigrid.c)
 * runs in float only; this layer holds what mixed mode needs on top of it:
 *
 * - precondition, z = V(0, r): r rounded to float into the adapter's fine-level
 *   b, the float V-cycle into its fine-level x, x widened into z;
 * - correct, x += V(0, r): the same V-cycle, its float result added to the
 *   double x by the backend's axpys with the x_i in float, each entry widened
 *   exactly, so bitwise as x += z with z its double copy, without a double z
 *   (FMG and V-cycle iterations);
 * - lend (GMRES from the right): the V-cycle writes the caller's float vector
 *   (the Z_j of the basis, kept in float), so the adapter needs no fine-level
 *   x; its fine-level b and the hierarchy's r_L, n floats each and free
 *   between V-cycles, are the halves of one block of n doubles, into which
 *   the result is widened for the caller's A Z_j: no double vector of its own;
 * - mixed FMG: Algorithm 2's first pass with b and the iterates in double on
 *   every level, x_l += V_l(0, b_l - A_l x_l) with the V-cycle in float on the
 *   double residual (the same iterate as V_l(x_l, b_l), a V-cycle being affine
 *   in x). Iterates kept in float instead are rounded to about 6e-8 relative,
 *   whose residual (about the condition number times that) a few more
 *   V-cycles must remove: an FMG pass in float does not reach discretization
 *   accuracy where that is below float precision (3D Q3 on level 8: 4
 *   V-cycles to 1e-9 after the pass, against 1 in double). The float
 *   right-hand side and result of level l < L are the hierarchy's own b_l and
 *   x_l, free between its calls; the double residual goes into a work vector
 *   as long as the longest level on this rank (the caller's, of level L's
 *   length, where that is the longest).
 *
 * Every conversion and pass is one the float V-cycle needs anyway: the
 * adapter adds none to what a double caller of a float hierarchy does. */
#include <stdlib.h>

#include "tpmg-impl.h"

struct tpmg_mixed {
  tpmg_grid *grid;    /* referenced */
  tpmg_multigrid *mg; /* the float hierarchy */
  int owns;           /* mg made by tpmg_mixed_create, destroyed with the adapter */
  int fine;           /* the finest level L, a grid index */
  size_t bytes;       /* a float vector of level L */
  void *b, *x;        /* float, level L: the argument converted, the V-cycle's result */
  void *block;        /* lending: b and the hierarchy's r_L, n doubles */
  size_t block_bytes;
  /* mixed FMG: b and x in double on levels 0..L-1, and a double work vector
   * as long as the longest level (fmg_work_length) unless the caller lends
   * one that long; made by the first FMG, or at creation */
  void *fmg_b[TPMG_MAX_LEVELS], *fmg_x[TPMG_MAX_LEVELS], *fmg_work;
  size_t fmg_work_bytes;
  int fmg_ready;
};

/* A double vector of level l's length. */
static size_t double_bytes(const tpmg_mixed *a, int l) {
  return (size_t)a->grid->levels[l].n_dofs * sizeof(double);
}

/* The most DoFs of the boxes of levels 1..L on this rank: mixed FMG's work
 * vector holds each level's residual in turn. On one process that is level L;
 * on P ranks a level every rank keeps whole can be longer than this rank's
 * slab of level L (3D Q1 level 6 on 32 ranks: level 5 whole, 33^3 DoFs, level
 * 6 a slab of 2 cells and 2 ghost cells each side, 65^2 x 7 DoFs). */
static tpmg_index fmg_work_length(const tpmg_mixed *a) {
  tpmg_index n = a->grid->levels[a->fine].n_dofs;
  for (int l = 1; l < a->fine; ++l)
    if (a->grid->levels[l].n_dofs > n)
      n = a->grid->levels[l].n_dofs;
  return n;
}

/* Makes mixed FMG's double level vectors (and with `work`, or where a coarser
 * level is longer than the finest on this rank, its own work vector).
 * Collective. */
static tpmg_status reserve_fmg(tpmg_mixed *a, int work) {
  tpmg_context *ctx = a->grid->ctx;
  tpmg_status status = TPMG_SUCCESS;
  for (int l = 0; l < a->fine && status == TPMG_SUCCESS; ++l) {
    void **vectors[2] = {&a->fmg_b[l], &a->fmg_x[l]};
    for (int i = 0; i < 2 && status == TPMG_SUCCESS; ++i) {
      if (*vectors[i])
        continue;
      status = tpmg_malloc(ctx, double_bytes(a, l), "mixed FMG level vector", vectors[i]);
      /* ghost planes are read before they are first written: keep them finite */
      if (status == TPMG_SUCCESS)
        status = ctx->ops->set(ctx, TPMG_DOUBLE, a->grid->levels[l].n_dofs, 0.0, *vectors[i]);
    }
  }
  /* a lent work vector has level L's length: too short where a coarser level is longer */
  tpmg_index length = fmg_work_length(a);
  if (status == TPMG_SUCCESS && (work || length > a->grid->levels[a->fine].n_dofs) &&
      !a->fmg_work) {
    status =
        tpmg_malloc(ctx, (size_t)length * sizeof(double), "mixed FMG work vector", &a->fmg_work);
    if (status == TPMG_SUCCESS)
      a->fmg_work_bytes = (size_t)length * sizeof(double);
  }
  status = tpmg_comm_agree(ctx, status);
  a->fmg_ready = status == TPMG_SUCCESS;
  return status; /* what was made stays for the next try or destroy */
}

tpmg_status tpmg_mixed_create(tpmg_grid *grid, const tpmg_multigrid_options *options,
                              tpmg_multigrid *mg, int lend, int fmg, tpmg_mixed **mixed) {
  tpmg_context *ctx = grid->ctx;
  tpmg_mixed *a = calloc(1, sizeof(*a));
  TPMG_CHECK(ctx, a, TPMG_ERROR_MEMORY, "allocating the mixed-precision adapter failed");
  a->grid = grid;
  tpmg_grid_reference(grid);
  a->fine = grid->n_levels - 1;
  tpmg_index n = grid->levels[a->fine].n_dofs;
  a->bytes = (size_t)n * sizeof(float);
  void *fine_r = NULL;
  tpmg_status status;
  if (lend) {
    size_t half = (a->bytes + 255) / 256 * 256;
    a->block_bytes = half + a->bytes; /* >= 2 n floats = n doubles */
    status = tpmg_malloc(ctx, a->block_bytes, "multigrid fine-level b and r", &a->block);
    if (status == TPMG_SUCCESS) {
      a->b = a->block;
      fine_r = (char *)a->block + half;
    }
  } else {
    status = tpmg_malloc(ctx, a->bytes, "multigrid level vector", &a->b);
    if (status == TPMG_SUCCESS)
      status = tpmg_malloc(ctx, a->bytes, "multigrid level vector", &a->x);
  }
  /* ghost planes are read before they are first written: keep them finite */
  void *vectors[2] = {a->b, a->x};
  for (int i = 0; i < 2 && status == TPMG_SUCCESS; ++i)
    if (vectors[i])
      status = ctx->ops->set(ctx, TPMG_FLOAT, n, 0.0, vectors[i]);
  status = tpmg_comm_agree(ctx, status);
  a->mg = mg;
  if (status == TPMG_SUCCESS && !mg) {
    status = tpmg_multigrid_create_hierarchy(grid, options, fine_r, &a->mg);
    a->owns = 1;
  }
  if (status == TPMG_SUCCESS && fmg)
    status = reserve_fmg(a, 0);
  if (status != TPMG_SUCCESS) {
    tpmg_mixed_destroy(&a);
    return status;
  }
  *mixed = a;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_mixed_destroy(tpmg_mixed **mixed) {
  if (!mixed)
    return TPMG_ERROR_ARGUMENT;
  tpmg_mixed *a = *mixed;
  if (!a)
    return TPMG_SUCCESS;
  tpmg_grid *grid = a->grid;
  tpmg_context *ctx = grid->ctx;
  if (a->owns)
    tpmg_multigrid_destroy(&a->mg);
  if (a->block)
    tpmg_free(ctx, a->block_bytes, a->block);
  else
    tpmg_free(ctx, a->bytes, a->b);
  tpmg_free(ctx, a->bytes, a->x);
  for (int l = 0; l < a->fine; ++l) {
    tpmg_free(ctx, double_bytes(a, l), a->fmg_b[l]);
    tpmg_free(ctx, double_bytes(a, l), a->fmg_x[l]);
  }
  tpmg_free(ctx, a->fmg_work_bytes, a->fmg_work);
  free(a);
  tpmg_grid_release(grid);
  *mixed = NULL;
  return TPMG_SUCCESS;
}

/* The float right-hand side and result of level l's V-cycle: the hierarchy's
 * own below L; on L the adapter's, its result in fine_z where it has no x. */
static void float_vectors(const tpmg_mixed *a, int l, void *fine_z, void **b, void **z) {
  if (l < a->fine) {
    tpmg_multigrid_level_vectors(a->mg, l, b, z);
  } else {
    *b = a->b;
    *z = a->x ? a->x : fine_z;
  }
}

/* z = V_l(0, r) in float on level l, r double. */
static tpmg_status vcycle(tpmg_mixed *a, int l, const void *r, void *b, void *z) {
  tpmg_context *ctx = a->grid->ctx;
  TPMG_CALL(ctx->ops->convert(ctx, a->grid->levels[l].n_dofs, TPMG_DOUBLE, r, TPMG_FLOAT, b));
  return tpmg_multigrid_level_apply(a->mg, l, b, z);
}

/* x += V_l(0, r) on level l, r and x double. */
static tpmg_status correct(tpmg_mixed *a, int l, const void *r, void *x, void *fine_z) {
  tpmg_context *ctx = a->grid->ctx;
  const double one = 1.0;
  void *b, *z;
  float_vectors(a, l, fine_z, &b, &z);
  TPMG_CALL(vcycle(a, l, r, b, z));
  const void *correction = z;
  return ctx->ops->axpys(ctx, TPMG_DOUBLE, a->grid->levels[l].n_dofs, 1, &one, TPMG_FLOAT,
                         &correction, x, NULL);
}

tpmg_status tpmg_mixed_precondition(tpmg_mixed *mixed, const void *r, void *z) {
  tpmg_context *ctx = mixed->grid->ctx;
  TPMG_CALL(vcycle(mixed, mixed->fine, r, mixed->b, mixed->x));
  return ctx->ops->convert(ctx, mixed->grid->levels[mixed->fine].n_dofs, TPMG_FLOAT, mixed->x,
                           TPMG_DOUBLE, z);
}

tpmg_status tpmg_mixed_correct(tpmg_mixed *mixed, const void *r, void *x) {
  return correct(mixed, mixed->fine, r, x, NULL);
}

tpmg_status tpmg_mixed_precondition_float(tpmg_mixed *mixed, const void *r, void *z,
                                          const void **z_double) {
  tpmg_context *ctx = mixed->grid->ctx;
  TPMG_CALL(vcycle(mixed, mixed->fine, r, mixed->b, z));
  TPMG_CALL(ctx->ops->convert(ctx, mixed->grid->levels[mixed->fine].n_dofs, TPMG_FLOAT, z,
                              TPMG_DOUBLE, mixed->block));
  *z_double = mixed->block;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_mixed_fmg(tpmg_mixed *mixed, const void *b, const void *r0, void *x, void *work,
                           void *fine_z) {
  tpmg_mixed *a = mixed;
  tpmg_context *ctx = a->grid->ctx;
  const tpmg_precision d = TPMG_DOUBLE;
  const tpmg_grid *grid = a->grid;
  int L = a->fine;
  if (!a->fmg_ready || (!work && !a->fmg_work))
    TPMG_CALL(reserve_fmg(a, !work));
  if (a->fmg_work) /* the adapter's own where it has one: as long as every level */
    work = a->fmg_work;
  for (int l = L; l > 0; --l) { /* b restricted; r0 (which may be work) is read here only */
    const void *bl = l < L ? a->fmg_b[l] : r0 ? r0 : b;
    TPMG_CALL(tpmg_multigrid_restrict(a->mg, l, d, bl, a->fmg_b[l - 1]));
  }
  void *b0, *x0; /* A_0 x_0 = b_0, solved in float */
  float_vectors(a, 0, NULL, &b0, &x0);
  TPMG_CALL(vcycle(a, 0, a->fmg_b[0], b0, x0));
  TPMG_CALL(ctx->ops->convert(ctx, grid->levels[0].n_dofs, TPMG_FLOAT, x0, d, a->fmg_x[0]));
  for (int l = 1; l <= L; ++l) {
    tpmg_index n = grid->levels[l].n_dofs;
    void *xl = l == L ? x : a->fmg_x[l];
    const void *bl = l == L ? b : a->fmg_b[l];
    if (l < L || !r0)
      TPMG_CALL(ctx->ops->set(ctx, d, n, 0.0, xl));
    TPMG_CALL(tpmg_partition_prolongate_add(grid, l, d, a->fmg_x[l - 1], xl));
    /* x_l += V_l(0, b_l - A_l x_l), which is V_l(x_l, b_l): a V-cycle is affine in x */
    TPMG_CALL(tpmg_partition_laplace(grid, l, d, xl, work));
    TPMG_CALL(ctx->ops->axpby(ctx, d, n, 1.0, bl, -1.0, work));
    TPMG_CALL(correct(a, l, work, xl, fine_z));
  }
  return TPMG_SUCCESS;
}
