/* The object structs of tpmg, for the object files of c_api/src/. Backends
 * include tpmg-backend.h instead. Never included by users. */
#ifndef TPMG_IMPL_H
#define TPMG_IMPL_H

#include "tpmg-backend.h"
#include "tpmg-basis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- backends ------------------------------------------------------------ */

/* The backend registered under `name` (tpmg-backends.c): NULL if no backend
 * of that name is compiled in; *known is 1 if the name is one tpmg knows
 * (compiled in or not). */
const tpmg_backend_ops *tpmg_backend_find(const char *name, int *known);

/* ---- objects ----------------------------------------------------------- */

typedef struct tpmg_vector_registry tpmg_vector_registry;

struct tpmg_context {
  char backend[64];          /* the backend's name as given ("name/variant") */
  const char *variant;       /* inside backend: what follows the first '/', or NULL */
  int n_threads;
  int device;
  size_t bytes;              /* backend memory allocated through tpmg_malloc */
  int refs;                  /* the caller's 1 plus one per live grid (tpmg_grid_release) */
  tpmg_vector_registry *vectors; /* what tpmg_vector_create made (tpmg-vector.c) */
  const tpmg_backend_ops *ops;
  void *backend_data;        /* owned by the backend */
  int stopwatch_started;     /* a start mark without its end mark yet */
  char error[1024];          /* the last message; mutable through const in tpmg_error_set */
};

struct tpmg_grid {
  tpmg_context *ctx;                 /* referenced: ctx->refs counts this grid */
  int refs;                          /* the caller's handle plus one per object using the grid */
  tpmg_grid_options options;
  int hidden;                           /* levels below the user's level 0 (tpmg-grid.c) */
  int n_levels;                         /* hidden + fine_level + 1 */
  tpmg_level levels[TPMG_MAX_LEVELS];   /* the hidden levels, then the user's 0..fine_level */
  void *data_block[TPMG_MAX_LEVELS][2]; /* backend memory behind levels[l].data[p] */
  size_t data_bytes[TPMG_MAX_LEVELS][2];
  tpmg_unit_data unit; /* levels[l].unit points here */
};

/* Validated access for the object files, the one place where a user's level
 * number (0 = the coarse mesh as given) becomes an index into grid->levels:
 * level must be min_level..fine_level; *index = hidden + level. */
tpmg_status tpmg_grid_check_level(const tpmg_grid *grid, int level, int min_level, int *index);

/* The objects of one level by its index into grid->levels (hidden levels
 * included), for the multigrid hierarchy. The public create functions check
 * their arguments and the user's level, then call these with the index; a
 * smoother needs index >= 1. */
tpmg_status tpmg_smoother_create_index(tpmg_grid *grid, int index, tpmg_precision precision,
                                       const tpmg_smoother_options *options,
                                       tpmg_smoother **smoother);
tpmg_status tpmg_coarse_create_index(tpmg_grid *grid, int index, tpmg_precision precision,
                                     tpmg_coarse **coarse);

/* Lifetimes. An object that uses a grid takes a reference on it when it is
 * created (tpmg_grid_reference) and drops it as the last step of being freed
 * (tpmg_grid_release); the grid is freed, and drops its reference on the
 * context, when its count reaches zero. So the caller may destroy a grid and
 * its users in any order. The context is not freed by references: its destroy
 * is refused while anything made from it is live (tpmg_context_destroy). */
void tpmg_grid_reference(tpmg_grid *grid);
void tpmg_grid_release(tpmg_grid *grid);

/* The vectors of tpmg_vector_create, registered in their context (tpmg-vector.c).
 * tpmg_vector_check is the one check of a vector argument: where v is
 * registered in ctx, its precision must be `precision` and its length at least
 * n; unregistered pointers (borrowed memory, e.g. a deal.II vector's) pass.
 * `what` names the call and the argument for the message. */
tpmg_status tpmg_vector_check(tpmg_context *ctx, const char *what, const void *v,
                              tpmg_precision precision, tpmg_index n);
/* The number of live vectors of ctx, and freeing its (empty) registry. */
size_t tpmg_vector_count(const tpmg_context *ctx);
void tpmg_vector_registry_free(tpmg_context *ctx);

#ifdef __cplusplus
}
#endif

#endif
