/* The matrix-free Laplace operator of one level (paper §2.2): the backend
 * applies the cell matrices K ⊗ M (⊗ M) + ... by sum factorization. */
#include <stdlib.h>

#include "tpmg-impl.h"

struct tpmg_operator {
  tpmg_grid *grid;
  const tpmg_level *level;
  tpmg_precision precision;
};

tpmg_status tpmg_operator_create(tpmg_grid *grid, int level, tpmg_precision precision,
                                 tpmg_operator **op) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, op, TPMG_ERROR_ARGUMENT, "op is NULL");
  TPMG_CHECK(ctx, precision == TPMG_DOUBLE || precision == TPMG_FLOAT, TPMG_ERROR_ARGUMENT,
             "unknown precision %d", (int)precision);
  TPMG_CALL(tpmg_grid_check_level(grid, level, 0));
  tpmg_operator *o = malloc(sizeof(*o));
  TPMG_CHECK(ctx, o, TPMG_ERROR_MEMORY, "allocating the operator failed");
  o->grid = grid;
  o->level = &grid->levels[level];
  o->precision = precision;
  *op = o;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_operator_apply(tpmg_operator *op, const void *src, void *dst) {
  if (!op) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = op->grid->ctx;
  TPMG_CHECK(ctx, src && dst && src != dst, TPMG_ERROR_ARGUMENT,
             "src %p and dst %p must be distinct non-NULL vectors", src, dst);
  return ctx->ops->laplace(ctx, op->level, op->precision, src, dst);
}

tpmg_status tpmg_operator_destroy(tpmg_operator **op) {
  if (!op) return TPMG_ERROR_ARGUMENT;
  free(*op);
  *op = NULL;
  return TPMG_SUCCESS;
}
