/* Grid transfer between two levels. The mesh hierarchy and the basis are
 * tensor products, so the prolongation (interpolation of the coarse function at
 * the fine support points) is P = P_2 ⊗ P_1 ⊗ P_0 with 1D interpolation
 * matrices, and restriction is its exact transpose (paper §2.1). */
#include <stdlib.h>

#include "tpmg-impl.h"

struct tpmg_transfer {
  tpmg_grid *grid; /* referenced */
  const tpmg_level *coarse, *fine;
  tpmg_precision precision;
};

tpmg_status tpmg_transfer_create(tpmg_grid *grid, int fine_level, tpmg_precision precision,
                                 tpmg_transfer **transfer) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, transfer, TPMG_ERROR_ARGUMENT, "transfer is NULL");
  TPMG_CHECK(ctx, precision == TPMG_DOUBLE || precision == TPMG_FLOAT, TPMG_ERROR_ARGUMENT,
             "unknown precision %d", (int)precision);
  int index = 0;
  TPMG_CALL(tpmg_grid_check_level(grid, fine_level, 1, &index));
  tpmg_transfer *t = malloc(sizeof(*t));
  TPMG_CHECK(ctx, t, TPMG_ERROR_MEMORY, "allocating the transfer failed");
  t->grid = grid;
  t->coarse = &grid->levels[index - 1];
  t->fine = &grid->levels[index];
  t->precision = precision;
  tpmg_grid_reference(grid);
  *transfer = t;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_transfer_prolongate_add(tpmg_transfer *transfer, const void *coarse, void *fine) {
  if (!transfer) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = transfer->grid->ctx;
  TPMG_CHECK(ctx, coarse && fine, TPMG_ERROR_ARGUMENT, "NULL vector (coarse %p, fine %p)", coarse,
             fine);
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_transfer_prolongate_add: coarse", coarse,
                              transfer->precision, transfer->coarse->n_dofs));
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_transfer_prolongate_add: fine", fine,
                              transfer->precision, transfer->fine->n_dofs));
  return ctx->ops->prolongate_add(ctx, transfer->coarse, transfer->fine, transfer->precision,
                                  coarse, fine);
}

tpmg_status tpmg_transfer_restrict(tpmg_transfer *transfer, const void *fine, void *coarse) {
  if (!transfer) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = transfer->grid->ctx;
  TPMG_CHECK(ctx, coarse && fine, TPMG_ERROR_ARGUMENT, "NULL vector (fine %p, coarse %p)", fine,
             coarse);
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_transfer_restrict: fine", fine, transfer->precision,
                              transfer->fine->n_dofs));
  TPMG_CALL(tpmg_vector_check(ctx, "tpmg_transfer_restrict: coarse", coarse, transfer->precision,
                              transfer->coarse->n_dofs));
  return ctx->ops->restrict_(ctx, transfer->coarse, transfer->fine, transfer->precision, fine,
                             coarse);
}

tpmg_status tpmg_transfer_destroy(tpmg_transfer **transfer) {
  if (!transfer) return TPMG_ERROR_ARGUMENT;
  if (!*transfer) return TPMG_SUCCESS;
  tpmg_grid *grid = (*transfer)->grid;
  free(*transfer);
  tpmg_grid_release(grid);
  *transfer = NULL;
  return TPMG_SUCCESS;
}
