/* Bad input on P ranks ends with the same error on every rank, never a hang
 * (ctest's timeout would catch one): options that differ between ranks, a
 * mesh the ranks cannot split, a bad argument or a failed allocation on one
 * rank only, contexts whose ranks name different backends or different
 * whole_level_dofs. After each, the objects still work. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "mpi-reference.h"

static int rank, size;

/* Every rank got `expected`, and a message containing `text`. */
static void check_all(tpmg_context *ctx, tpmg_status status, tpmg_status expected,
                      const char *text, const char *what) {
  int mine = status == expected && strstr(tpmg_context_last_error(ctx), text) != NULL, all = 0;
  REF_CHECK(mine, "rank %d: %s: expected status %d mentioning \"%s\", got %d, \"%s\"", rank, what,
            (int)expected, text, (int)status, tpmg_context_last_error(ctx));
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  REF_CHECK(all, "%s: not every rank reported the error", what);
}

static tpmg_grid_options options(int degree, int level) {
  tpmg_grid_options o = tpmg_grid_options_default();
  o.dim = 2;
  o.degree = degree;
  o.fine_level = level;
  o.cells[0] = 2;
  o.cells[1] = 3;
  return o;
}

/* A solve that must work after the errors. */
static void solve_ok(tpmg_context *ctx, tpmg_grid *grid) {
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, 3, &n, NULL));
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL), *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, x));
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, NULL, &solver));
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &result));
  REF_CHECK(result.converged, "the solve after the errors did not converge");
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  ref_vector_destroy(ctx, &b);
  ref_vector_destroy(ctx, &x);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tpmg_context *ctx = mref_context_create(1);
  int r = 0, p = 0;
  REF_CALL(ctx, tpmg_context_ranks(ctx, &r, &p));
  REF_CHECK(r == rank && p == size, "tpmg_context_ranks: %d of %d, MPI says %d of %d", r, p, rank,
            size);
  const char *transport = NULL;
  REF_CALL(ctx, tpmg_context_transport(ctx, &transport));
  REF_CHECK(strcmp(transport, size == 1 ? "none" : "mpi") == 0,
            "tpmg_context_transport of the cpu backend on %d ranks: \"%s\"", size, transport);
  REF_CHECK(tpmg_context_transport(ctx, NULL) == TPMG_ERROR_ARGUMENT &&
                tpmg_context_transport(NULL, &transport) == TPMG_ERROR_ARGUMENT,
            "tpmg_context_transport took a NULL argument");

  /* grid options that differ on the last rank */
  tpmg_grid *grid = NULL;
  tpmg_grid_options o = options(rank == size - 1 && size > 1 ? 3 : 2, 3);
  if (size > 1)
    check_all(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_ARGUMENT,
              "grid options differ between ranks", "degree differs");
  /* a fine level with fewer than two cells per rank along y: 3 cells */
  o = options(2, 0);
  o.fine_level = 1;
  o.cells[1] = size > 1 ? size - 1 : 1;
  if (size > 1)
    check_all(ctx, tpmg_grid_create(ctx, &o, &grid), TPMG_ERROR_ARGUMENT, "ranks need at least",
              "too few cells");
  REF_CHECK(grid == NULL, "a refused grid was made");

  o = options(2, 3);
  REF_CALL(ctx, tpmg_grid_create(ctx, &o, &grid));
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, 3, &n, NULL));

  /* solver options that differ on rank 0 */
  tpmg_solver_options so = tpmg_solver_options_default();
  if (rank == 0) so.tolerance = 1e-8;
  tpmg_solver *solver = NULL;
  if (size > 1)
    check_all(ctx, tpmg_solver_create(grid, &so, &solver), TPMG_ERROR_ARGUMENT,
              "solver options differ between ranks", "tolerance differs");

  /* a vector too short on the last rank only: every rank fails, naming it */
  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, 3, TPMG_DOUBLE, &op));
  void *src = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  void *dst = ref_vector_create(ctx, TPMG_DOUBLE, rank == size - 1 ? n - 1 : n, NULL);
  char expected[64];
  snprintf(expected, sizeof expected, "rank %d of %d: ", size - 1, size);
  check_all(ctx, tpmg_operator_apply(op, src, dst), TPMG_ERROR_ARGUMENT,
            size > 1 ? expected : "tpmg_operator_apply: dst", "short vector on one rank");
  ref_vector_destroy(ctx, &dst);

  /* an allocation that fails on rank 0 only (an address-space limit there):
   * the multigrid fails on every rank and frees what it had */
#if !defined(__SANITIZE_ADDRESS__)
  size_t before = 0, after = 0;
  REF_CALL(ctx, tpmg_context_memory(ctx, &before));
  struct rlimit saved, tight;
  getrlimit(RLIMIT_AS, &saved);
  tpmg_multigrid *mg = NULL;
  tpmg_grid *big = NULL;
  tpmg_grid_options bo = options(6, 5); /* ~1 M DoFs: vectors of 8 MB */
  REF_CALL(ctx, tpmg_grid_create(ctx, &bo, &big));
  if (rank == 0) {
    tight = saved;
    tight.rlim_cur = 64 << 20; /* what the process holds now and little more */
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    tight.rlim_cur += (rlim_t)usage.ru_maxrss * 1024 * 4;
    setrlimit(RLIMIT_AS, &tight);
  }
  tpmg_multigrid_options mo = tpmg_multigrid_options_default();
  tpmg_status status = tpmg_multigrid_create(big, &mo, &mg);
  if (rank == 0) setrlimit(RLIMIT_AS, &saved);
  int failed = status == TPMG_ERROR_MEMORY, all_failed = 0;
  MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (status == TPMG_SUCCESS) {
    /* the limit was too generous on this machine: nothing to check */
    tpmg_multigrid_destroy(&mg);
  } else {
    check_all(ctx, status, TPMG_ERROR_MEMORY, size > 1 ? "rank 0 of" : "", "allocation on rank 0");
    REF_CHECK(mg == NULL, "a failed multigrid was returned");
  }
  tpmg_grid_destroy(&big);
  REF_CALL(ctx, tpmg_context_memory(ctx, &after));
  REF_CHECK(after == before, "memory after the failed allocation %zu, before %zu", after, before);
#endif

  solve_ok(ctx, grid);
  ref_vector_destroy(ctx, &src);
  tpmg_operator_destroy(&op);
  tpmg_grid_destroy(&grid);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));

  /* contexts: ranks that name different backends, and one that runs on one
   * process only, fail on every rank */
  static MPI_Comm world;
  world = MPI_COMM_WORLD;
  tpmg_context_options co = tpmg_context_options_default();
  co.mpi_comm = &world;
  co.backend = rank == 0 ? "cpu" : "cpu/scalar";
  tpmg_context *bad = NULL;
  if (size > 1) {
    tpmg_status s = tpmg_context_create(&co, &bad);
    REF_CHECK(s == TPMG_ERROR_ARGUMENT && bad == NULL,
              "different backends: expected TPMG_ERROR_ARGUMENT, got %d", (int)s);
    /* the partition depends on whole_level_dofs: alike on every rank */
    co.backend = "cpu";
    co.whole_level_dofs = rank == size - 1 ? 1000 : -1;
    s = tpmg_context_create(&co, &bad);
    REF_CHECK(s == TPMG_ERROR_ARGUMENT && bad == NULL,
              "different whole_level_dofs: expected TPMG_ERROR_ARGUMENT, got %d", (int)s);
    co.whole_level_dofs = -1;
    /* cuda where some rank has no GPU: refused on every rank (t850 runs it
     * where every rank has one) */
    int available = 0, all = 0;
    tpmg_backend_available("cuda", &available);
    MPI_Allreduce(&available, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
      co.backend = "cuda";
      s = tpmg_context_create(&co, &bad);
      REF_CHECK(s == TPMG_ERROR_UNSUPPORTED && bad == NULL,
                "cuda on %d ranks without a GPU: expected TPMG_ERROR_UNSUPPORTED, got %d", size,
                (int)s);
    }
  }
  int code = mref_exit_code("t752-mpi-errors");
  MPI_Finalize();
  return code;
}
