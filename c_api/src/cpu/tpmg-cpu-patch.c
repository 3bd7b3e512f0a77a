/* CPU backend: the vertex-patch smoother's entry points. The mathematics and
 * the kernels are in tpmg-cpu-patch-templates.h, instantiated per scalar type
 * and instruction set by tpmg-cpu-patch-double.c,
 * tpmg-cpu-patch-double-avx2.c, ... (see tpmg-cpu.h); the driver that chooses
 * among them in tpmg-cpu-patch-driver-templates.h. */
#include "tpmg-cpu.h"

tpmg_status tpmg_cpu_patch_fused(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                 int colour, int boundary, const tpmg_index vertices[2],
                                 const void *b, void *x) {
  const int mode = boundary ? PATCH_BOUNDARY : PATCH_FUSED;
  if (prec == TPMG_FLOAT)
    return tpmg_cpu_patch_pass_float(ctx, lvl, mode, colour, vertices, b, x, NULL, x);
  return tpmg_cpu_patch_pass_double(ctx, lvl, mode, colour, vertices, b, x, NULL, x);
}

tpmg_status tpmg_cpu_patch_residual(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                    int colour, const void *b, const void *x, void *r) {
  if (prec == TPMG_FLOAT)
    return tpmg_cpu_patch_pass_float(ctx, lvl, PATCH_RESIDUAL, colour, NULL, b, x, r, NULL);
  return tpmg_cpu_patch_pass_double(ctx, lvl, PATCH_RESIDUAL, colour, NULL, b, x, r, NULL);
}

tpmg_status tpmg_cpu_patch_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                 int colour, const void *r, void *x) {
  if (prec == TPMG_FLOAT)
    return tpmg_cpu_patch_pass_float(ctx, lvl, PATCH_SOLVE, colour, NULL, r, NULL, NULL, x);
  return tpmg_cpu_patch_pass_double(ctx, lvl, PATCH_SOLVE, colour, NULL, r, NULL, NULL, x);
}
