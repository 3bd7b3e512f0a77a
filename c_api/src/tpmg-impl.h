/* The object structs of tpmg, for the object files of c_api/src/. Backends
 * include tpmg-backend.h instead. Never included by users. */
#ifndef TPMG_IMPL_H
#define TPMG_IMPL_H

#include "tpmg-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- backends ------------------------------------------------------------ */

/* The backend registered under `name` (tpmg-backends.c): NULL if no backend
 * of that name is compiled in; *known is 1 if the name is one tpmg knows
 * (compiled in or not). */
const tpmg_backend_ops *tpmg_backend_find(const char *name, int *known);

/* ---- objects ----------------------------------------------------------- */

struct tpmg_context {
  char backend[64];          /* the backend's name as given ("cuda/tiled") */
  const char *variant;       /* inside backend: what follows the first '/', or NULL */
  int n_threads;
  int device;
  size_t bytes;              /* backend memory allocated through tpmg_malloc */
  const tpmg_backend_ops *ops;
  void *backend_data;        /* owned by the backend */
  char error[1024];          /* the last message; mutable through const in tpmg_error_set */
};

struct tpmg_grid {
  tpmg_context *ctx;
  tpmg_grid_options options;
  int n_levels;                      /* fine_level + 1 */
  tpmg_level levels[TPMG_MAX_LEVELS];
  void *data_block[TPMG_MAX_LEVELS][2]; /* backend memory behind levels[l].data[p] */
  size_t data_bytes[TPMG_MAX_LEVELS][2];
};

/* Validated access for the object files. */
tpmg_status tpmg_grid_check_level(const tpmg_grid *grid, int level, int min_level);

#ifdef __cplusplus
}
#endif

#endif
