/* Messages between the ranks of a context on several GPUs, one GPU per rank:
 * the planes the core sends are contiguous ranges of device vectors, sent as
 * they are by one of three transports, chosen once by connect:
 *   nccl  NCCL send/receive on a stream of their own, after what the
 *         context's stream has queued (the NCCL communicator made from the
 *         context's MPI communicator): nothing waits on the host, the
 *         context's stream runs on until messages_wait orders the kernels
 *         after it behind the messages;
 *   mpi   an MPI library that takes device memory (asked at run time): the
 *         stream is synchronized, then MPI sends the device ranges;
 *   host  the ranges staged through pinned host memory: copied down, sent by
 *         MPI, copied up.
 * TPMG_CUDA_TRANSPORT=nccl|mpi|host picks one; unset, the first that works
 * in that order. NCCL needs a GPU of its own on every rank; its connections
 * are made here, at the context's creation, not in the first solve. */
#include <stdlib.h>
#include <string.h>

#ifdef TPMG_HAVE_NCCL
#include <nccl.h>
#endif

#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

namespace {

const char *const names[] = {"none", "nccl", "mpi", "host"};

/* What each rank tells the others in connect. */
struct rank_info {
  char uuid[16]; /* its GPU's */
  int asked;     /* the transport named by TPMG_CUDA_TRANSPORT, 0 if unset, -1 if unknown */
  int nccl;      /* built with NCCL */
  int aware;     /* MPI takes device memory */
};

#ifdef TPMG_HAVE_NCCL
tpmg_status nccl_error(const tpmg_context *ctx, ncclResult_t result, const char *what,
                       const char *file, int line) {
  return tpmg_error_set(ctx, TPMG_ERROR_BACKEND, file, line, "%s: %s", what,
                        ncclGetErrorString(result));
}

#define TPMG_NCCL_CALL(ctx, call)                                                                  \
  do {                                                                                             \
    ncclResult_t tpmg_nccl_result_ = (call);                                                       \
    if (tpmg_nccl_result_ != ncclSuccess)                                                          \
      return nccl_error((ctx), tpmg_nccl_result_, #call, __FILE__, __LINE__);                      \
  } while (0)

/* The NCCL communicator of all ranks from rank 0's unique id, gathered by
 * MPI: a failure on one rank is agreed on before the next collective step. */
tpmg_status nccl_connect(tpmg_context *ctx, backend_data *data, int rank, int size) {
  ncclUniqueId id, *all = static_cast<ncclUniqueId *>(malloc(sizeof(id) * size_t(size)));
  memset(&id, 0, sizeof id);
  tpmg_status status =
      all ? TPMG_SUCCESS
          : tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__, "%d NCCL ids", size);
  if (rank == 0 && status == TPMG_SUCCESS) {
    ncclResult_t result = ncclGetUniqueId(&id);
    if (result != ncclSuccess)
      status = nccl_error(ctx, result, "ncclGetUniqueId", __FILE__, __LINE__);
  }
  status = tpmg_comm_agree(ctx, status);
  if (status == TPMG_SUCCESS)
    status = tpmg_comm_allgather(ctx, &id, sizeof id, all);
  if (status == TPMG_SUCCESS)
    id = all[0];
  free(all);
  TPMG_CALL(status);
  ncclComm_t comm = nullptr;
  TPMG_NCCL_CALL(ctx, ncclCommInitRank(&comm, size, id, rank));
  data->nccl = comm;
  int least = 0, greatest = 0;
  TPMG_CUDA_CALL(ctx, cudaDeviceGetStreamPriorityRange(&least, &greatest));
  TPMG_CUDA_CALL(
      ctx, cudaStreamCreateWithPriority(&data->messages_stream, cudaStreamNonBlocking, greatest));
  TPMG_CUDA_CALL(ctx, cudaEventCreateWithFlags(&data->messages_ready, cudaEventDisableTiming));
  TPMG_CUDA_CALL(ctx, cudaEventCreateWithFlags(&data->messages_done, cudaEventDisableTiming));
  return TPMG_SUCCESS;
}

/* NCCL connects a pair of ranks at their first send/receive, for all the
 * channels the pair will use, and that costs far more than the message (on
 * 4 H200s it made the first solve 1.37 s against 0.013 s for the next ones).
 * Every pair exchanges messages in a solve (the coarse levels are gathered
 * whole onto every rank), so each rank sends its number to every other rank
 * here, at set-up, and checks what it receives. */
tpmg_status nccl_warm_up(tpmg_context *ctx, backend_data *data, int rank, int size) {
  int *buffer = nullptr; /* [0]: this rank's number; [1 + q]: rank q's */
  const size_t bytes = sizeof(int) * (size_t(size) + 1);
  TPMG_CUDA_CALL(ctx, cudaMalloc(&buffer, bytes));
  int *host = static_cast<int *>(malloc(bytes));
  tpmg_status status =
      host ? TPMG_SUCCESS
           : tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__, "%zu bytes", bytes);
  cudaError_t error = cudaSuccess;
  if (status == TPMG_SUCCESS) {
    for (int q = 0; q <= size; ++q)
      host[q] = q == 0 ? rank : -1;
    error = cudaMemcpy(buffer, host, bytes, cudaMemcpyHostToDevice);
  }
  if (status == TPMG_SUCCESS && error != cudaSuccess)
    status = cuda_error(ctx, error, "cudaMemcpy", __FILE__, __LINE__);
  if (status == TPMG_SUCCESS) {
    ncclComm_t comm = static_cast<ncclComm_t>(data->nccl);
    ncclResult_t result = ncclGroupStart();
    for (int q = 0; q < size && result == ncclSuccess; ++q) {
      if (q == rank)
        continue;
      result = ncclRecv(buffer + 1 + q, 1, ncclInt, q, comm, data->messages_stream);
      if (result == ncclSuccess)
        result = ncclSend(buffer, 1, ncclInt, q, comm, data->messages_stream);
    }
    const ncclResult_t end = ncclGroupEnd();
    if (result != ncclSuccess || end != ncclSuccess)
      status = nccl_error(ctx, result != ncclSuccess ? result : end, "warm-up ncclSend/ncclRecv",
                          __FILE__, __LINE__);
  }
  if (status == TPMG_SUCCESS && (error = cudaStreamSynchronize(data->messages_stream)) != cudaSuccess)
    status = cuda_error(ctx, error, "cudaStreamSynchronize", __FILE__, __LINE__);
  if (status == TPMG_SUCCESS &&
      (error = cudaMemcpy(host, buffer, bytes, cudaMemcpyDeviceToHost)) != cudaSuccess)
    status = cuda_error(ctx, error, "cudaMemcpy", __FILE__, __LINE__);
  for (int q = 0; q < size && status == TPMG_SUCCESS; ++q)
    if (q != rank && host[1 + q] != q)
      status = tpmg_error_set(ctx, TPMG_ERROR_BACKEND, __FILE__, __LINE__,
                              "NCCL warm-up: rank %d received %d from rank %d", rank, host[1 + q],
                              q);
  free(host);
  cudaFree(buffer);
  return status;
}
#endif

} // namespace

tpmg_status connect(tpmg_context *ctx, const char **name) {
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  int rank = 0, size = 1;
  TPMG_CALL(tpmg_context_ranks(ctx, &rank, &size));
  rank_info mine;
  memset(&mine, 0, sizeof mine);
  if (const char *asked = getenv("TPMG_CUDA_TRANSPORT"); asked && *asked) {
    mine.asked = -1;
    for (int t = 1; t < 4; ++t)
      if (strcmp(asked, names[t]) == 0)
        mine.asked = t;
  }
#ifdef TPMG_HAVE_NCCL
  mine.nccl = 1;
#endif
  mine.aware = tpmg_comm_device_aware();
  /* what may fail on one rank is agreed on before the gathering */
  tpmg_status status = activate(ctx);
  cudaDeviceProp prop;
  cudaError_t error = cudaSuccess;
  if (status == TPMG_SUCCESS &&
      (error = cudaGetDeviceProperties(&prop, data->device)) != cudaSuccess)
    status = cuda_error(ctx, error, "cudaGetDeviceProperties", __FILE__, __LINE__);
  if (status == TPMG_SUCCESS)
    memcpy(mine.uuid, &prop.uuid, sizeof mine.uuid);
  rank_info *all = static_cast<rank_info *>(malloc(sizeof(rank_info) * size_t(size)));
  if (!all && status == TPMG_SUCCESS)
    status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__, "%d ranks' GPU data", size);
  status = tpmg_comm_agree(ctx, status);
  if (status == TPMG_SUCCESS)
    status = tpmg_comm_allgather(ctx, &mine, sizeof mine, all);
  if (status != TPMG_SUCCESS) {
    free(all);
    return status;
  }
  /* every rank decides the same from the same data */
  int shared = 0, nccl = 1, aware = 1, same = 1;
  for (int q = 0; q < size; ++q) {
    for (int r = 0; r < q; ++r)
      shared |= memcmp(all[q].uuid, all[r].uuid, sizeof mine.uuid) == 0;
    nccl &= all[q].nccl;
    aware &= all[q].aware;
    same &= all[q].asked == all[0].asked;
  }
  const int asked = all[0].asked;
  free(all);
  TPMG_CHECK(ctx, same, TPMG_ERROR_ARGUMENT,
             "TPMG_CUDA_TRANSPORT differs between ranks: set it alike on every rank");
  TPMG_CHECK(ctx, asked >= 0, TPMG_ERROR_ARGUMENT,
             "TPMG_CUDA_TRANSPORT=%s: not a transport (nccl, mpi or host)",
             getenv("TPMG_CUDA_TRANSPORT"));
  const int nccl_works = nccl && !shared;
  int t = asked;
  if (t == 0)
    t = nccl_works ? int(transport::nccl) : aware ? int(transport::mpi) : int(transport::host);
  TPMG_CHECK(ctx, t != int(transport::nccl) || nccl_works, TPMG_ERROR_UNSUPPORTED,
             "TPMG_CUDA_TRANSPORT=nccl: %s",
             !nccl ? "tpmg was built without NCCL (TPMG_ENABLE_NCCL)"
                   : "ranks share a GPU, and NCCL needs a GPU of its own on every rank (run as "
                     "many ranks per node as GPUs, or choose host)");
  TPMG_CHECK(ctx, t != int(transport::mpi) || aware, TPMG_ERROR_UNSUPPORTED,
             "TPMG_CUDA_TRANSPORT=mpi: the MPI library does not take device memory "
             "(MPIX_Query_cuda_support); choose nccl or host");
#ifdef TPMG_HAVE_NCCL
  if (t == int(transport::nccl)) {
    status = nccl_connect(ctx, data, rank, size);
    if (status == TPMG_SUCCESS)
      status = nccl_warm_up(ctx, data, rank, size);
    TPMG_CALL(tpmg_comm_agree(ctx, status));
  }
#endif
  data->link = transport(t);
  *name = names[t];
  return TPMG_SUCCESS;
}

void disconnect(backend_data *data) {
  if (data->messages_stream)
    cudaStreamSynchronize(data->messages_stream);
#ifdef TPMG_HAVE_NCCL
  if (data->nccl)
    ncclCommDestroy(static_cast<ncclComm_t>(data->nccl));
#endif
  data->nccl = nullptr;
  if (data->messages_stream)
    cudaStreamDestroy(data->messages_stream);
  if (data->messages_ready)
    cudaEventDestroy(data->messages_ready);
  if (data->messages_done)
    cudaEventDestroy(data->messages_done);
  data->messages_stream = nullptr;
  data->messages_ready = data->messages_done = nullptr;
  data->messages_pending = false;
  if (data->staging)
    cudaFreeHost(data->staging);
  data->staging = nullptr;
  data->staging_bytes = 0;
  data->link = transport::none;
}

namespace {

/* host: the sends copied down into the staging buffer, sent and received by
 * MPI on the host, the receives copied up; the stream is idle at the end. */
tpmg_status staged(tpmg_context *ctx, backend_data *data, int n, const tpmg_message *m) {
  size_t bytes = 0;
  for (int i = 0; i < n; ++i)
    bytes += m[i].send_bytes + m[i].recv_bytes;
  if (bytes > data->staging_bytes) {
    if (data->staging)
      cudaFreeHost(data->staging);
    data->staging = nullptr;
    data->staging_bytes = 0;
    TPMG_CUDA_CALL(ctx, cudaMallocHost(&data->staging, bytes));
    data->staging_bytes = bytes;
  }
  tpmg_message few[4],
      *host = n <= 4 ? few : static_cast<tpmg_message *>(malloc(sizeof(*host) * size_t(n)));
  TPMG_CHECK(ctx, host, TPMG_ERROR_MEMORY, "%d staged messages", n);
  char *at = static_cast<char *>(data->staging);
  cudaError_t error = cudaSuccess;
  for (int i = 0; i < n; ++i) {
    host[i] = m[i];
    host[i].send = at;
    if (m[i].send_bytes > 0 && error == cudaSuccess)
      error = cudaMemcpyAsync(at, m[i].send, m[i].send_bytes, cudaMemcpyDeviceToHost, data->stream);
    at += m[i].send_bytes;
    host[i].recv = at;
    at += m[i].recv_bytes;
  }
  if (error == cudaSuccess)
    error = cudaStreamSynchronize(data->stream);
  /* every rank takes part in the messages, whatever happened to its copies */
  tpmg_status status = tpmg_comm_host_messages(ctx, n, host);
  for (int i = 0; i < n && error == cudaSuccess; ++i)
    if (m[i].recv_bytes > 0)
      error = cudaMemcpyAsync(m[i].recv, host[i].recv, m[i].recv_bytes, cudaMemcpyHostToDevice,
                              data->stream);
  if (error == cudaSuccess)
    error = cudaStreamSynchronize(data->stream);
  if (host != few)
    free(host);
  if (error != cudaSuccess)
    return cuda_error(ctx, error, "staging messages through host memory", __FILE__, __LINE__);
  return status;
}

} // namespace

tpmg_status messages_start(tpmg_context *ctx, int n, const tpmg_message *m) {
  if (n <= 0)
    return TPMG_SUCCESS;
  TPMG_CALL(activate(ctx));
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  switch (data->link) {
  case transport::nccl: {
#ifdef TPMG_HAVE_NCCL
    TPMG_CHECK(ctx, !data->messages_pending, TPMG_ERROR_BACKEND,
               "messages started before the last ones were waited for");
    /* the messages' stream starts after what the context's stream has queued
     * (the sends' values are written, the receives' no longer read) */
    TPMG_CUDA_CALL(ctx, cudaEventRecord(data->messages_ready, data->stream));
    TPMG_CUDA_CALL(ctx, cudaStreamWaitEvent(data->messages_stream, data->messages_ready, 0));
    ncclComm_t comm = static_cast<ncclComm_t>(data->nccl);
    TPMG_NCCL_CALL(ctx, ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (int i = 0; i < n && result == ncclSuccess; ++i) {
      if (m[i].recv_bytes > 0)
        result =
            ncclRecv(m[i].recv, m[i].recv_bytes, ncclChar, m[i].peer, comm, data->messages_stream);
      if (m[i].send_bytes > 0 && result == ncclSuccess)
        result =
            ncclSend(m[i].send, m[i].send_bytes, ncclChar, m[i].peer, comm, data->messages_stream);
    }
    /* the group is closed whatever failed inside it */
    ncclResult_t end = ncclGroupEnd();
    if (result != ncclSuccess)
      return nccl_error(ctx, result, "ncclSend/ncclRecv", __FILE__, __LINE__);
    if (end != ncclSuccess)
      return nccl_error(ctx, end, "ncclGroupEnd", __FILE__, __LINE__);
    TPMG_CUDA_CALL(ctx, cudaEventRecord(data->messages_done, data->messages_stream));
    data->messages_pending = true;
    return TPMG_SUCCESS;
#else
    break;
#endif
  }
  /* the others complete here: messages_wait has nothing to do */
  case transport::mpi:
    TPMG_CUDA_CALL(ctx, cudaStreamSynchronize(data->stream));
    return tpmg_comm_host_messages(ctx, n, m);
  case transport::host:
    return staged(ctx, data, n, m);
  case transport::none:
    break;
  }
  return tpmg_error_set(ctx, TPMG_ERROR_BACKEND, __FILE__, __LINE__,
                        "messages on a context without a transport");
}

tpmg_status messages_wait(tpmg_context *ctx) {
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  if (!data->messages_pending)
    return TPMG_SUCCESS;
  data->messages_pending = false;
  TPMG_CALL(activate(ctx));
  /* the context's stream continues once the messages are done */
  TPMG_CUDA_CALL(ctx, cudaStreamWaitEvent(data->stream, data->messages_done, 0));
  return TPMG_SUCCESS;
}

} // namespace tpmg_cuda
