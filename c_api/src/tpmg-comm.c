/* The context's communicator: a duplicate of the caller's MPI communicator
 * (PETSc's PetscCommDuplicate), or one process where MPI is not built in or
 * not asked for. Everything of MPI that tpmg uses is here: reductions, the
 * agreement on a status after a call that may fail on some ranks only, the
 * check that ranks were given the same options, the host transport that the
 * CPU backend's messages ops are, and what a GPU backend needs to set up its
 * own transport (the node-local rank, an all-gather, whether MPI takes device
 * memory). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

#ifdef TPMG_HAVE_MPI
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* MPIX_Query_cuda_support */
#endif
#define COMM(ctx) (*(MPI_Comm *)(ctx)->comm)

/* MPI is initialized and not finalized: collective calls may be made. */
static int mpi_running(void) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}
#endif

tpmg_status tpmg_comm_local_rank(const void *comm, int *local) {
  *local = 0;
  if (!comm) return TPMG_SUCCESS;
#ifdef TPMG_HAVE_MPI
  if (!mpi_running()) return TPMG_ERROR_ARGUMENT;
  MPI_Comm node;
  if (MPI_Comm_split_type(*(const MPI_Comm *)comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                          &node) != MPI_SUCCESS)
    return TPMG_ERROR_ARGUMENT;
  MPI_Comm_rank(node, local);
  MPI_Comm_free(&node);
  return TPMG_SUCCESS;
#else
  return TPMG_ERROR_UNSUPPORTED;
#endif
}

tpmg_status tpmg_comm_create(tpmg_context *ctx, const void *comm) {
  ctx->rank = 0;
  ctx->size = 1;
  ctx->comm = NULL;
  if (!comm) return TPMG_SUCCESS;
#ifdef TPMG_HAVE_MPI
  if (!mpi_running()) return TPMG_ERROR_ARGUMENT;
  MPI_Comm *dup = malloc(sizeof(*dup));
  if (!dup) return TPMG_ERROR_MEMORY;
  if (MPI_Comm_dup(*(const MPI_Comm *)comm, dup) != MPI_SUCCESS) {
    free(dup);
    return TPMG_ERROR_ARGUMENT;
  }
  ctx->comm = dup;
  MPI_Comm_rank(*dup, &ctx->rank);
  MPI_Comm_size(*dup, &ctx->size);
  return TPMG_SUCCESS;
#else
  return TPMG_ERROR_UNSUPPORTED;
#endif
}

void tpmg_comm_destroy(tpmg_context *ctx) {
#ifdef TPMG_HAVE_MPI
  if (ctx->comm) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free((MPI_Comm *)ctx->comm);
  }
#endif
  free(ctx->comm);
  ctx->comm = NULL;
  free(ctx->pending);
  ctx->pending = NULL;
  ctx->pending_capacity = ctx->n_pending = 0;
}

tpmg_status tpmg_comm_status(const void *comm, tpmg_status status) {
#ifdef TPMG_HAVE_MPI
  if (comm) {
    int mine = (int)status, worst = 0;
    if (!mpi_running()) return TPMG_ERROR_ARGUMENT;
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, *(const MPI_Comm *)comm);
    return (tpmg_status)worst;
  }
#endif
  return status;
}

tpmg_status tpmg_comm_agree(tpmg_context *ctx, tpmg_status status) {
  if (ctx->size == 1) return status;
#ifdef TPMG_HAVE_MPI
  int mine = status != TPMG_SUCCESS ? ctx->rank : ctx->size, first = ctx->size;
  ctx->traffic.reductions++;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, COMM(ctx));
  if (first == ctx->size) return TPMG_SUCCESS;
  struct {
    int status;
    char message[sizeof(ctx->error)];
  } failed;
  memset(&failed, 0, sizeof(failed));
  if (ctx->rank == first) {
    failed.status = (int)status;
    snprintf(failed.message, sizeof(failed.message), "%s", tpmg_context_last_error(ctx));
  }
  MPI_Bcast(&failed, (int)sizeof(failed), MPI_BYTE, first, COMM(ctx));
  failed.message[sizeof(failed.message) - 1] = '\0';
  /* a message agreed on before (a nested collective call) keeps its one prefix */
  char prefix[48];
  snprintf(prefix, sizeof prefix, "rank %d of %d: ", first, ctx->size);
  if (strncmp(failed.message, prefix, strlen(prefix)) == 0) {
    tpmg_error_replace(ctx, failed.message);
  } else {
    char message[sizeof(ctx->error) + sizeof(prefix)];
    snprintf(message, sizeof(message), "%s%s", prefix, failed.message);
    tpmg_error_replace(ctx, message);
  }
  return (tpmg_status)failed.status;
#else
  return status;
#endif
}

tpmg_status tpmg_comm_same(tpmg_context *ctx, const void *bytes, size_t n, const char *what) {
  if (ctx->size == 1) return TPMG_SUCCESS;
  tpmg_status status = TPMG_SUCCESS;
#ifdef TPMG_HAVE_MPI
  void *first = malloc(n ? n : 1);
  int ok = first != NULL, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, COMM(ctx));
  if (!all_ok) {
    free(first);
    status = ok ? TPMG_SUCCESS
                : tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                                 "%s: %zu bytes to compare across ranks", what, n);
    status = tpmg_comm_agree(ctx, status);
    return status != TPMG_SUCCESS ? status : TPMG_ERROR_MEMORY;
  }
  if (ctx->rank == 0) memcpy(first, bytes, n);
  MPI_Bcast(first, (int)n, MPI_BYTE, 0, COMM(ctx));
  if (memcmp(first, bytes, n) != 0)
    status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                            "%s differ between ranks: this rank's are not rank 0's (every rank "
                            "must pass the same values)",
                            what);
  free(first);
#endif
  return tpmg_comm_agree(ctx, status);
}

#ifdef TPMG_HAVE_MPI
static void reduce(tpmg_context *ctx, double *values, int n, MPI_Op op) {
  if (ctx->size > 1 && n > 0) {
    ctx->traffic.reductions++;
    MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, op, COMM(ctx));
  }
}
#endif

tpmg_status tpmg_comm_sum(tpmg_context *ctx, double *values, int n) {
#ifdef TPMG_HAVE_MPI
  reduce(ctx, values, n, MPI_SUM);
#endif
  return TPMG_SUCCESS;
}

tpmg_status tpmg_comm_min(tpmg_context *ctx, double *values, int n) {
#ifdef TPMG_HAVE_MPI
  reduce(ctx, values, n, MPI_MIN);
#endif
  return TPMG_SUCCESS;
}

tpmg_status tpmg_comm_allgather(tpmg_context *ctx, const void *mine, size_t bytes, void *all) {
  if (ctx->size == 1) {
    memmove(all, mine, bytes);
    return TPMG_SUCCESS;
  }
#ifdef TPMG_HAVE_MPI
  TPMG_CHECK(ctx, bytes <= INT_MAX, TPMG_ERROR_UNSUPPORTED, "gathering %zu bytes: at most %d",
             bytes, INT_MAX);
  ctx->traffic.reductions++;
  MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, COMM(ctx));
  return TPMG_SUCCESS;
#else
  return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__, "built without MPI");
#endif
}

int tpmg_comm_device_aware(void) {
#if defined(TPMG_HAVE_MPI) && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return 0;
#endif
}

tpmg_status tpmg_comm_host_messages_start(tpmg_context *ctx, int n,
                                          const tpmg_message *messages) {
  if (ctx->size == 1 || n <= 0) return TPMG_SUCCESS;
#ifdef TPMG_HAVE_MPI
  TPMG_CHECK(ctx, ctx->n_pending == 0, TPMG_ERROR_BACKEND,
             "messages started while %d requests are in flight", ctx->n_pending);
  for (int i = 0; i < n; ++i)
    TPMG_CHECK(ctx, messages[i].send_bytes <= INT_MAX && messages[i].recv_bytes <= INT_MAX,
               TPMG_ERROR_UNSUPPORTED, "a message of %zu bytes: at most %d",
               messages[i].send_bytes > messages[i].recv_bytes ? messages[i].send_bytes
                                                               : messages[i].recv_bytes,
               INT_MAX);
  /* the requests are kept for _wait: grown to the most messages of any call
   * (two neighbours, two vectors: 8; gathering: 2 per rank) */
  if (2 * n > ctx->pending_capacity) {
    MPI_Request *grown = realloc(ctx->pending, sizeof(MPI_Request) * 2 * (size_t)n);
    TPMG_CHECK(ctx, grown, TPMG_ERROR_MEMORY, "%d message requests", 2 * n);
    ctx->pending = grown;
    ctx->pending_capacity = 2 * n;
  }
  MPI_Request *requests = ctx->pending;
  int count = 0;
  /* receives first, so that sends find them posted; one tag: between two
   * ranks, the messages of one call pair up in the order given */
  for (int i = 0; i < n; ++i)
    if (messages[i].recv_bytes > 0)
      MPI_Irecv(messages[i].recv, (int)messages[i].recv_bytes, MPI_BYTE, messages[i].peer, 7,
                COMM(ctx), &requests[count++]);
  for (int i = 0; i < n; ++i)
    if (messages[i].send_bytes > 0)
      MPI_Isend((void *)messages[i].send, (int)messages[i].send_bytes, MPI_BYTE, messages[i].peer,
                7, COMM(ctx), &requests[count++]);
  ctx->n_pending = count;
  return TPMG_SUCCESS;
#else
  return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__, "built without MPI");
#endif
}

tpmg_status tpmg_comm_host_messages_wait(tpmg_context *ctx) {
#ifdef TPMG_HAVE_MPI
  if (ctx->n_pending > 0) MPI_Waitall(ctx->n_pending, ctx->pending, MPI_STATUSES_IGNORE);
#endif
  ctx->n_pending = 0;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_comm_host_messages(tpmg_context *ctx, int n, const tpmg_message *messages) {
  TPMG_CALL(tpmg_comm_host_messages_start(ctx, n, messages));
  return tpmg_comm_host_messages_wait(ctx);
}
