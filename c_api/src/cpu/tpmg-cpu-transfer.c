/* CPU backend: the grid transfer's entry points. The mathematics and the
 * kernels are in tpmg-cpu-transfer-templates.h, instantiated per scalar type
 * and instruction set by tpmg-cpu-transfer-double.c,
 * tpmg-cpu-transfer-double-avx2.c, ... (see tpmg-cpu.h); the driver that
 * chooses among them in tpmg-cpu-transfer-driver-templates.h. */
#include "tpmg-cpu.h"

tpmg_status tpmg_cpu_prolongate_add(tpmg_context *ctx, const tpmg_level *coarse,
                                    const tpmg_level *fine, tpmg_precision prec, const void *c,
                                    void *f) {
  if (prec == TPMG_FLOAT)
    return tpmg_cpu_prolongate_add_float(ctx, coarse, fine, c, f);
  return tpmg_cpu_prolongate_add_double(ctx, coarse, fine, c, f);
}

tpmg_status tpmg_cpu_restrict(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                              tpmg_precision prec, const void *f, void *c) {
  if (prec == TPMG_FLOAT)
    return tpmg_cpu_restrict_float(ctx, coarse, fine, f, c);
  return tpmg_cpu_restrict_double(ctx, coarse, fine, f, c);
}
