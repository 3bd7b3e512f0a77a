/* Grid transfer between two levels. The mesh hierarchy and the basis are
 * tensor products, so the prolongation (interpolation of the coarse function at
 * the fine support points) is P = P_2 ⊗ P_1 ⊗ P_0 with 1D interpolation
 * matrices, and restriction is its exact transpose (paper §2.1). */
#include <stdio.h>
#include <stdlib.h>

#include "tpmg-impl.h"

struct tpmg_transfer {
  tpmg_grid *grid; /* referenced */
  int l; /* the fine level's grid index */
  const tpmg_level *coarse, *fine;
  tpmg_precision precision;
  void *scratch; /* tpmg_partition_restrict_scratch */
  size_t scratch_bytes;
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
  tpmg_transfer *t = calloc(1, sizeof(*t));
  tpmg_status status = t ? TPMG_SUCCESS
                         : tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                                          "allocating the transfer failed");
  if (t) {
    t->scratch_bytes = tpmg_partition_restrict_scratch(grid, index, precision);
    status = tpmg_malloc(ctx, t->scratch_bytes, "transfer scratch", &t->scratch);
  }
  status = tpmg_comm_agree(ctx, status);
  if (status != TPMG_SUCCESS) {
    if (t) tpmg_free(ctx, t->scratch_bytes, t->scratch);
    free(t);
    return status;
  }
  t->grid = grid;
  t->l = index;
  t->coarse = &grid->levels[index - 1];
  t->fine = &grid->levels[index];
  t->precision = precision;
  tpmg_grid_reference(grid);
  *transfer = t;
  return TPMG_SUCCESS;
}

/* The checks of both directions; every rank returns the same status. */
static tpmg_status check(tpmg_transfer *transfer, const char *what, const void *coarse,
                         const void *fine) {
  return tpmg_vector_check_pair(transfer->grid->ctx, what, transfer->precision, "coarse", coarse,
                                transfer->coarse->n_dofs, "fine", fine, transfer->fine->n_dofs);
}

tpmg_status tpmg_transfer_prolongate_add(tpmg_transfer *transfer, const void *coarse, void *fine) {
  if (!transfer) return TPMG_ERROR_ARGUMENT;
  TPMG_CALL(check(transfer, "tpmg_transfer_prolongate_add", coarse, fine));
  return tpmg_partition_prolongate_add(transfer->grid, transfer->l, transfer->precision, coarse,
                                       fine);
}

tpmg_status tpmg_transfer_restrict(tpmg_transfer *transfer, const void *fine, void *coarse) {
  if (!transfer) return TPMG_ERROR_ARGUMENT;
  TPMG_CALL(check(transfer, "tpmg_transfer_restrict", coarse, fine));
  return tpmg_partition_restrict(transfer->grid, transfer->l, transfer->precision, fine, coarse,
                                 transfer->scratch);
}

tpmg_status tpmg_transfer_destroy(tpmg_transfer **transfer) {
  if (!transfer) return TPMG_ERROR_ARGUMENT;
  if (!*transfer) return TPMG_SUCCESS;
  tpmg_grid *grid = (*transfer)->grid;
  tpmg_free(grid->ctx, (*transfer)->scratch_bytes, (*transfer)->scratch);
  free(*transfer);
  tpmg_grid_release(grid);
  *transfer = NULL;
  return TPMG_SUCCESS;
}
