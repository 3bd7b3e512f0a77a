/* libFuzzer target: tpmg_setup_read on the fuzzer's bytes, written to a file
 * in the working directory (the build directory under ctest). Whatever the
 * bytes, the read must return a status without crashing, leaking or reading
 * out of bounds; on success the grid and the vector must be consistent. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tpmg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static tpmg_context *ctx = NULL;
  static char path[64];
  if (!ctx) {
    tpmg_context_options options = tpmg_context_options_default();
    options.n_threads = 1;
    if (tpmg_context_create(&options, &ctx) != TPMG_SUCCESS)
      abort();
    snprintf(path, sizeof path, "fuzz-setup-read.%ld.tpmg", (long)getpid());
  }
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
    abort();

  tpmg_grid *grid = NULL;
  tpmg_rhs rhs = TPMG_RHS_ONE;
  double *b = NULL;
  tpmg_status status = tpmg_setup_read(ctx, path, &grid, &rhs, &b);
  if (status == TPMG_SUCCESS) {
    tpmg_grid_options o;
    tpmg_index n = 0;
    if (!grid || tpmg_grid_get_options(grid, &o) != TPMG_SUCCESS ||
        tpmg_grid_level_size(grid, o.fine_level, &n, NULL) != TPMG_SUCCESS || !tpmg_rhs_name(rhs))
      abort();
    /* a vector read must be finite over its whole length */
    for (tpmg_index i = 0; b && i < n; ++i)
      if (!(b[i] - b[i] == 0))
        abort();
  } else if (grid || b) {
    abort(); /* a failed read leaves its outputs NULL */
  }
  free(b);
  tpmg_grid_destroy(&grid);
  remove(path);
  return 0;
}
