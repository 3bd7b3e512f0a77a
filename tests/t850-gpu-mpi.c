/* The CUDA backend on P ranks, what t750 and t751 (run with
 * TPMG_TEST_MPI_BACKEND=cuda) do not check: the transport a context chooses
 * (nccl where tpmg has NCCL and every rank a GPU of its own, else host; the
 * one TPMG_CUDA_TRANSPORT names where set), a bad TPMG_CUDA_TRANSPORT refused
 * on every rank, and the exchange of an operator apply counted and equal
 * under every transport this machine has. Skipped (77) without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "mpi-reference.h"
#include "tpmg-bench.h"

static int rank, size;

static tpmg_status create(tpmg_context **ctx) {
  static MPI_Comm world;
  world = MPI_COMM_WORLD;
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = "cuda";
  options.n_threads = 1;
  options.mpi_comm = &world;
  return tpmg_context_create(&options, ctx);
}

/* Every rank's status and message as expected. */
static void check_all(int ok, const char *what) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  REF_CHECK(all, "%s: not so on every rank", what);
}

/* The fine-level operator of a 3D Q3 mesh split along z on a random vector
 * (the same on every rank); the owned entries in doubles, NaN-free. */
static double *apply(tpmg_context *ctx, int64_t *n_owned, tpmg_communication *sent) {
  const int cells[3] = {1, 2, 2 * size};
  const double box[6] = {0, 1, 0, 2, 0, 2.0 * size};
  tpmg_grid *grid = ref_grid_create(ctx, 3, 3, 2, cells, box);
  tpmg_level_layout layout;
  REF_CALL(ctx, tpmg_grid_level_layout(grid, 2, &layout));
  int64_t whole_n = layout.n_global[0] * layout.n_global[1] * layout.n_global[2];
  int64_t local_n = layout.count * layout.plane;
  double *whole = ref_malloc(sizeof(double) * (size_t)whole_n);
  uint64_t seed = 777;
  ref_fill_random(&seed, whole_n, whole);
  double *local = ref_malloc(sizeof(double) * (size_t)local_n);
  mref_local(&layout, TPMG_DOUBLE, whole, local);
  void *src = ref_vector_create(ctx, TPMG_DOUBLE, local_n, local);
  void *dst = ref_vector_create(ctx, TPMG_DOUBLE, local_n, NULL);
  ref_vector_poison(ctx, TPMG_DOUBLE, local_n, dst);
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, 2, TPMG_DOUBLE, &op));
  tpmg_communication before, after;
  REF_CALL(ctx, tpmg_context_communication(ctx, &before));
  REF_CALL(ctx, tpmg_operator_apply(op, src, dst));
  REF_CALL(ctx, tpmg_context_communication(ctx, &after));
  sent->exchange_messages = after.exchange_messages - before.exchange_messages;
  sent->exchange_bytes = after.exchange_bytes - before.exchange_bytes;
  ref_vector_download(ctx, TPMG_DOUBLE, local_n, dst, local);
  *n_owned = (layout.owned_end - layout.owned_first) * layout.plane;
  double *owned = ref_malloc(sizeof(double) * (size_t)*n_owned);
  memcpy(owned, local + (layout.owned_first - layout.first) * layout.plane,
         sizeof(double) * (size_t)*n_owned);
  for (int64_t i = 0; i < *n_owned; ++i)
    REF_CHECK(!isnan(owned[i]), "rank %d: the operator left owned entry %lld unwritten", rank,
              (long long)i);
  tpmg_operator_destroy(&op);
  ref_vector_destroy(ctx, &src);
  ref_vector_destroy(ctx, &dst);
  tpmg_grid_destroy(&grid);
  free(whole);
  free(local);
  return owned;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int available = 0, all_available = 0;
  tpmg_backend_available("cuda", &available);
  MPI_Allreduce(&available, &all_available, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_available) {
    if (rank == 0)
      printf("SKIPPED: no usable CUDA device\n");
    MPI_Finalize();
    return 77;
  }
  int devices = 0;
  cudaGetDeviceCount(&devices);
  int own_gpus = size <= devices, all_own = 0;
  MPI_Allreduce(&own_gpus, &all_own, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const char *asked = getenv("TPMG_CUDA_TRANSPORT");
  const char *expected = asked && *asked ? asked : TPMG_TEST_HAVE_NCCL && all_own ? "nccl" : "host";

  /* the transport chosen */
  tpmg_context *ctx = NULL;
  tpmg_status status = create(&ctx);
  if (status != TPMG_SUCCESS) {
    fprintf(stderr, "rank %d: tpmg_context_create(cuda) on %d ranks returned %d\n", rank, size,
            (int)status);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const char *transport = NULL;
  REF_CALL(ctx, tpmg_context_transport(ctx, &transport));
  check_all(strcmp(transport, size == 1 ? "none" : expected) == 0, "the transport");
  if (strcmp(transport, size == 1 ? "none" : expected) != 0)
    fprintf(stderr, "rank %d: transport %s, expected %s\n", rank, transport,
            size == 1 ? "none" : expected);

  /* an apply: one message to each neighbour; over all ranks, each of the
   * P - 1 cuts carries the k + 1 planes read on one side and the k on the
   * other (level 2: planes of (4k + 1)(8k + 1) DoFs, k = 3) */
  int64_t n_owned = 0;
  tpmg_communication sent;
  double *result = apply(ctx, &n_owned, &sent);
  long long neighbours = (rank > 0) + (rank < size - 1), all_bytes = 0;
  MPI_Allreduce(&sent.exchange_bytes, &all_bytes, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  long long bytes = (size - 1) * (2 * 3 + 1) * (4 * 3 + 1) * (8 * 3 + 1) * (long long)sizeof(double);
  REF_CHECK(sent.exchange_messages == neighbours,
            "rank %d of %d: the apply sent %lld messages, expected %lld", rank, size,
            sent.exchange_messages, neighbours);
  REF_CHECK(all_bytes == bytes, "the apply sent %lld bytes on all ranks, expected %lld", all_bytes,
            bytes);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));

  /* the same apply by host staging: the same numbers, bit for bit (the
   * transports move bytes) */
  if (size > 1 && strcmp(expected, "host") != 0) {
    setenv("TPMG_CUDA_TRANSPORT", "host", 1);
    REF_CALL(NULL, create(&ctx));
    REF_CALL(ctx, tpmg_context_transport(ctx, &transport));
    check_all(strcmp(transport, "host") == 0, "TPMG_CUDA_TRANSPORT=host");
    int64_t n = 0;
    double *staged = apply(ctx, &n, &sent);
    REF_CHECK(n == n_owned && memcmp(staged, result, sizeof(double) * (size_t)n) == 0,
              "rank %d: the apply by %s and by host staging differ", rank, expected);
    free(staged);
    REF_CALL(ctx, tpmg_context_destroy(&ctx));
  }
  free(result);

  /* a transport that does not exist: refused on every rank, nothing made */
  if (size > 1) {
    setenv("TPMG_CUDA_TRANSPORT", "pigeon", 1);
    ctx = NULL;
    status = create(&ctx);
    check_all(status == TPMG_ERROR_ARGUMENT && ctx == NULL, "TPMG_CUDA_TRANSPORT=pigeon refused");
  }
  if (asked)
    setenv("TPMG_CUDA_TRANSPORT", asked, 1);
  else
    unsetenv("TPMG_CUDA_TRANSPORT");
  int code = mref_exit_code("t850-gpu-mpi");
  MPI_Finalize();
  return code;
}
