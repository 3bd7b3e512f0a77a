/* The context: backend selection and its settings. Its error messages (one
 * per thread) are in tpmg-error.c, its memory accounting in tpmg-memory.c,
 * its vectors in tpmg-vector.c. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

static atomic_uint_least64_t next_context_id = 1;

tpmg_context_options tpmg_context_options_default(void) {
  tpmg_context_options options = {NULL, 0, 0, NULL, -1, 1};
  return options;
}

/* The context on this process alone: the backend and its settings. */
static tpmg_status create_local(const tpmg_context_options *opts, int local_rank,
                                tpmg_context **ctx) {
  const char *name = opts->backend ? opts->backend : "cpu";
  if (opts->n_threads < 0 || opts->n_threads > TPMG_MAX_THREADS || opts->device < 0 ||
      opts->whole_level_dofs < -1 || opts->whole_level_dofs > TPMG_MAX_WHOLE_LEVEL_DOFS ||
      (opts->overlap != 0 && opts->overlap != 1))
    return TPMG_ERROR_ARGUMENT;
  tpmg_context *c = calloc(1, sizeof(*c));
  if (!c) return TPMG_ERROR_MEMORY;
  if (pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c);
    return TPMG_ERROR_MEMORY;
  }
  c->id = atomic_fetch_add(&next_context_id, 1);
  c->size = 1;
  if (strlen(name) >= sizeof(c->backend)) {
    pthread_mutex_destroy(&c->lock);
    free(c);
    return TPMG_ERROR_ARGUMENT;
  }
  strcpy(c->backend, name);
  char *slash = strchr(c->backend, '/');
  if (slash) {
    *slash = '\0'; /* c->backend is the registry's name until init has run */
    c->variant = slash + 1;
  }
  int known = 0;
  c->ops = tpmg_backend_find(c->backend, &known);
  if (slash) *slash = '/';
  if (!c->ops) {
    pthread_mutex_destroy(&c->lock);
    free(c);
    return known ? TPMG_ERROR_UNSUPPORTED : TPMG_ERROR_ARGUMENT;
  }
  c->n_threads = opts->n_threads > 0 ? opts->n_threads : omp_get_max_threads();
  c->device = opts->device;
  c->whole_level_dofs =
      opts->whole_level_dofs >= 0 ? opts->whole_level_dofs : c->ops->whole_level_dofs;
  c->overlap = opts->overlap;
  c->local_rank = local_rank;
  c->transport = "none";
  c->refs = 1;
  tpmg_status status = c->ops->init(c);
  if (status != TPMG_SUCCESS) {
    pthread_mutex_destroy(&c->lock);
    free(c);
    return status;
  }
  *ctx = c;
  return TPMG_SUCCESS;
}

static void free_context(tpmg_context *c) {
  if (!c) return;
  tpmg_vector_registry_free(c);
  c->ops->finalize(c);
  tpmg_comm_destroy(c);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

tpmg_status tpmg_context_create(const tpmg_context_options *options, tpmg_context **ctx) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  *ctx = NULL;
  tpmg_context_options opts = options ? *options : tpmg_context_options_default();
  tpmg_context *c = NULL;
  /* a GPU backend's init picks its device by the rank's place on its node */
  int local_rank = 0;
  tpmg_status status = tpmg_comm_local_rank(opts.mpi_comm, &local_rank);
  if (status == TPMG_SUCCESS) status = create_local(&opts, local_rank, &c);
  if (opts.mpi_comm) {
    /* every rank learns whether all ranks have a context, then duplicates the
     * communicator, so that no rank is left waiting */
    status = tpmg_comm_status(opts.mpi_comm, status);
    if (status == TPMG_SUCCESS) status = tpmg_comm_create(c, opts.mpi_comm);
    status = tpmg_comm_status(opts.mpi_comm, status);
    if (status == TPMG_SUCCESS)
      status = tpmg_comm_same(c, c->backend, sizeof(c->backend), "the backend names");
    if (status == TPMG_SUCCESS) /* the partition follows it */
      status = tpmg_comm_same(c, &c->whole_level_dofs, sizeof(c->whole_level_dofs),
                              "the levels kept whole (whole_level_dofs)");
    if (status == TPMG_SUCCESS && c->size > 1 && !c->ops->messages_start)
      status = TPMG_ERROR_UNSUPPORTED; /* the same backend on every rank: the same answer */
    if (status == TPMG_SUCCESS && c->size > 1) {
      c->transport = "mpi";
      if (c->ops->connect) status = tpmg_comm_agree(c, c->ops->connect(c, &c->transport));
    }
  }
  if (status != TPMG_SUCCESS) {
    free_context(c);
    return status;
  }
  *ctx = c;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_backend_available(const char *name, int *available) {
  if (!available || !name) return TPMG_ERROR_ARGUMENT;
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = name;
  tpmg_context *ctx = NULL;
  tpmg_status status = tpmg_context_create(&options, &ctx);
  tpmg_context_destroy(&ctx);
  if (status == TPMG_ERROR_ARGUMENT) return status;
  *available = status == TPMG_SUCCESS;
  return TPMG_SUCCESS;
}

/* "1.2 MB", "3.0 kB" or "512 bytes". */
tpmg_status tpmg_context_destroy(tpmg_context **ctx) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  tpmg_context *c = *ctx;
  if (!c) return TPMG_SUCCESS;
  int n_grids = c->refs - 1;
  size_t n_vectors = tpmg_vector_count(c), bytes = c->bytes + c->host_bytes;
  if (n_grids > 0 || n_vectors > 0 || bytes > 0) {
    char memory[32];
    tpmg_format_bytes(bytes, memory, sizeof memory);
    return tpmg_error_set(c, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                          "tpmg_context_destroy: still live: %d grid%s, %zu vector%s, %s of "
                          "backend memory; destroy them first (a grid lives until it and every "
                          "object made from it are destroyed)",
                          n_grids, n_grids == 1 ? "" : "s", n_vectors, n_vectors == 1 ? "" : "s",
                          memory);
  }
  free_context(c);
  *ctx = NULL;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_communication(const tpmg_context *ctx, tpmg_communication *counts) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, counts, TPMG_ERROR_ARGUMENT, "counts is NULL");
  *counts = ctx->traffic;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_transport(const tpmg_context *ctx, const char **name) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, name, TPMG_ERROR_ARGUMENT, "name is NULL");
  *name = ctx->transport;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_ranks(const tpmg_context *ctx, int *rank, int *size) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, rank && size, TPMG_ERROR_ARGUMENT, "NULL argument (rank %p, size %p)",
             (void *)rank, (void *)size);
  *rank = ctx->rank;
  *size = ctx->size;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_memory(const tpmg_context *ctx, size_t *bytes) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, bytes, TPMG_ERROR_ARGUMENT, "bytes is NULL");
  *bytes = ctx->bytes;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_backend(const tpmg_context *ctx, const char **name) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, name, TPMG_ERROR_ARGUMENT, "name is NULL");
  *name = ctx->backend;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_memory_type(const tpmg_context *ctx, tpmg_memory_type *type) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, type, TPMG_ERROR_ARGUMENT, "type is NULL");
  *type = ctx->ops->memory;
  return TPMG_SUCCESS;
}

int tpmg_backend_threads(const tpmg_context *ctx) { return ctx->n_threads; }

int tpmg_backend_device(const tpmg_context *ctx) { return ctx->device; }

int tpmg_backend_local_rank(const tpmg_context *ctx) { return ctx->local_rank; }

const char *tpmg_backend_variant(const tpmg_context *ctx) { return ctx->variant; }

void *tpmg_backend_data(const tpmg_context *ctx) { return ctx->backend_data; }

void tpmg_backend_set_data(tpmg_context *ctx, void *data) { ctx->backend_data = data; }

tpmg_status tpmg_context_threads(const tpmg_context *ctx, int *n_threads) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, n_threads, TPMG_ERROR_ARGUMENT, "n_threads is NULL");
  *n_threads = ctx->n_threads;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_synchronize(tpmg_context *ctx) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  return ctx->ops->synchronize(ctx);
}

/* ---- benchmark support --------------------------------------------------- */

tpmg_status tpmg_context_stopwatch(tpmg_context *ctx, int start, double *seconds) {
  if (!ctx)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, start || seconds, TPMG_ERROR_ARGUMENT, "seconds is NULL at the end mark");
  TPMG_CHECK(ctx, start || ctx->stopwatch_started, TPMG_ERROR_ARGUMENT,
             "stopwatch: an end mark without a start mark");
  TPMG_CALL(ctx->ops->stopwatch(ctx, start, seconds));
  ctx->stopwatch_started = start != 0;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_context_measure_limits(tpmg_context *ctx, tpmg_device_limits *limits) {
  if (!ctx)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(ctx, limits, TPMG_ERROR_ARGUMENT, "limits is NULL");
  tpmg_device_limits measured = {NAN, NAN, NAN};
  /* the loops are timed with the backend's stopwatch: a start mark is lost
   * (on every backend, so that callers see one behaviour) */
  ctx->stopwatch_started = 0;
  if (ctx->ops->measure_limits)
    TPMG_CALL(ctx->ops->measure_limits(ctx, &measured));
  *limits = measured;
  return TPMG_SUCCESS;
}
