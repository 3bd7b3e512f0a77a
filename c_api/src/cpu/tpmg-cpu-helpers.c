/* CPU backend: what its kernels share (per-thread scratch, the copy of
 * Dirichlet entries), apart from the function table in tpmg-cpu-backend.c,
 * which refers to the kernels. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-cpu.h"

tpmg_status tpmg_cpu_scratch(tpmg_context *ctx, size_t bytes, size_t *stride, char **ptr) {
  const size_t alignment = 64, threads = (size_t)tpmg_backend_threads(ctx);
  *ptr = NULL;
  *stride = 0;
  if (bytes == 0)
    return TPMG_SUCCESS;
  const size_t rounded =
      bytes > SIZE_MAX - alignment ? 0 : (bytes + alignment - 1) / alignment * alignment;
  if (rounded == 0 || rounded > SIZE_MAX / threads)
    return tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                          "cannot allocate %zu bytes of scratch for %zu threads", bytes, threads);
  *stride = rounded;
  *ptr = aligned_alloc(alignment, rounded * threads);
  if (!*ptr)
    return tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                          "allocating %zu bytes of scratch for %zu threads failed", bytes, threads);
  return TPMG_SUCCESS;
}

/* dst_B = src_B: whole x-lines on the faces y, z = 0 or max, the two end points
 * of every other line; O(surface), any scalar type. */
tpmg_status tpmg_cpu_copy_boundary(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                   const void *src, void *dst) {
  const size_t size = tpmg_precision_size(prec);
  const tpmg_index n0 = lvl->n[0], n1 = lvl->n[1], n2 = lvl->n[2];
  const int dim = lvl->dim;
  const char *s = src;
  char *d = dst;
#pragma omp parallel for collapse(2) schedule(static)                                              \
    num_threads(tpmg_backend_threads(ctx)) if (n1 * n2 > 1024)
  for (tpmg_index i2 = 0; i2 < n2; ++i2)
    for (tpmg_index i1 = 0; i1 < n1; ++i1) {
      const size_t line = (size_t)(n0 * (i1 + n1 * i2)) * size;
      if (i1 == 0 || i1 == n1 - 1 || (dim == 3 && (i2 == 0 || i2 == n2 - 1))) {
        memcpy(d + line, s + line, (size_t)n0 * size);
      } else {
        memcpy(d + line, s + line, size);
        memcpy(d + line + (size_t)(n0 - 1) * size, s + line + (size_t)(n0 - 1) * size, size);
      }
    }
  return TPMG_SUCCESS;
}
