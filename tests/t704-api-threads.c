/* t704-api-threads: objects of one context used by two threads at once, as
 * tpmg.h ("Threads") allows on the "cpu" backend.
 * - Two threads, each with its own solver on one shared grid, solve the same
 *   problem several times while creating, checking and destroying vectors of
 *   the context in loops: every solution equals, bit for bit, the one a single
 *   thread solved before, and each solver reports the memory of that
 *   thread's (tpmg_solver_memory, not skewed by the other thread's
 *   allocations); the context's memory and its live vectors are back to where
 *   they were (an unsynchronized byte count or vector registry loses updates
 *   here, and ThreadSanitizer reports the race).
 * - The error message is per thread: thread 0 fails, then thread 1 (one
 *   after the other, by barriers), then each reads tpmg_context_last_error
 *   and finds its own message; the main thread, which did not fail, reads the
 *   context's last one (thread 1's). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

#define L 3
#define ROUNDS 3
#define VECTOR_LOOPS 2000

typedef struct {
  tpmg_context *ctx;
  tpmg_grid *grid;
  int id;
  const double *expected; /* the single-thread solution */
  size_t expected_memory; /* and its solver's tpmg_solver_memory after the create */
  int64_t n;
  pthread_barrier_t *barrier;
  void *bogus;           /* a pointer that is no vector: its refusal is this thread's error */
  char own[1024];        /* the message of that refusal, read at once */
  char read_later[1024]; /* tpmg_context_last_error after the other thread failed too */
  char problem[256];     /* the first thing that went wrong, or "" */
} worker;

static void fail(worker *w, const char *what, tpmg_status status) {
  if (!w->problem[0])
    snprintf(w->problem, sizeof w->problem, "thread %d: %s (status %d: %s)", w->id, what,
             (int)status, tpmg_context_last_error(w->ctx));
}

#define WORKER_CALL(w, expr)                                                                       \
  do {                                                                                             \
    tpmg_status status_ = (expr);                                                                  \
    if (status_ != TPMG_SUCCESS) {                                                                 \
      fail((w), #expr, status_);                                                                   \
      return;                                                                                      \
    }                                                                                              \
  } while (0)

/* Solves and vector loops; the solution compared with the expected one. */
static void work(worker *w) {
  tpmg_context *ctx = w->ctx;
  tpmg_solver *solver = NULL;
  void *b = NULL, *x = NULL;
  double *host = ref_malloc(sizeof(double) * (size_t)w->n);
  WORKER_CALL(w, tpmg_solver_create(w->grid, NULL, &solver));
  size_t memory = 0;
  WORKER_CALL(w, tpmg_solver_memory(solver, &memory));
  if (memory != w->expected_memory) {
    char what[128];
    snprintf(what, sizeof what, "tpmg_solver_memory %zu bytes, the single-thread solver's %zu",
             memory, w->expected_memory);
    fail(w, what, TPMG_SUCCESS);
  }
  WORKER_CALL(w, tpmg_vector_create(ctx, TPMG_DOUBLE, w->n, &b));
  WORKER_CALL(w, tpmg_vector_create(ctx, TPMG_DOUBLE, w->n, &x));
  WORKER_CALL(w, tpmg_problem_rhs(w->grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  for (int round = 0; round < ROUNDS; ++round) {
    WORKER_CALL(w, tpmg_vector_set(ctx, TPMG_DOUBLE, w->n, 0.0, x));
    WORKER_CALL(w, tpmg_solver_solve(solver, b, x, NULL));
    WORKER_CALL(w, tpmg_vector_download(ctx, TPMG_DOUBLE, w->n, x, host));
    if (memcmp(host, w->expected, sizeof(double) * (size_t)w->n) != 0) {
      fail(w, "the solution differs from the single-thread one", TPMG_SUCCESS);
      break;
    }
    for (int i = 0; i < VECTOR_LOOPS; ++i) {
      void *v = NULL;
      const tpmg_index m = 100 + 7 * w->id + i % 13;
      double dot = 0.0;
      WORKER_CALL(w, tpmg_vector_create(ctx, TPMG_DOUBLE, m, &v));
      WORKER_CALL(w, tpmg_vector_set(ctx, TPMG_DOUBLE, m, 1.0, v));
      WORKER_CALL(w, tpmg_vector_dot(ctx, TPMG_DOUBLE, m, v, v, &dot));
      if (dot != (double)m)
        fail(w, "a vector's dot product with itself is not its length", TPMG_SUCCESS);
      WORKER_CALL(w, tpmg_vector_destroy(ctx, &v));
    }
  }
  WORKER_CALL(w, tpmg_vector_destroy(ctx, &x));
  WORKER_CALL(w, tpmg_vector_destroy(ctx, &b));
  WORKER_CALL(w, tpmg_solver_destroy(&solver));
  free(host);
}

/* Thread 0 fails, then thread 1; then each reads its message again. */
static void errors(worker *w) {
  for (int turn = 0; turn < 2; ++turn) {
    pthread_barrier_wait(w->barrier);
    if (turn == w->id) {
      void *bogus = w->bogus;
      if (tpmg_vector_destroy(w->ctx, &bogus) != TPMG_ERROR_ARGUMENT)
        fail(w, "tpmg_vector_destroy accepted a pointer that is no vector", TPMG_SUCCESS);
      snprintf(w->own, sizeof w->own, "%s", tpmg_context_last_error(w->ctx));
    }
  }
  pthread_barrier_wait(w->barrier);
  snprintf(w->read_later, sizeof w->read_later, "%s", tpmg_context_last_error(w->ctx));
  pthread_barrier_wait(w->barrier);
}

static void *run(void *arg) {
  worker *w = arg;
  work(w);
  errors(w);
  return NULL;
}

static int mentions(const char *message, const void *pointer) {
  char text[64];
  snprintf(text, sizeof text, "%p", pointer);
  return strstr(message, text) != NULL;
}

int main(void) {
  tpmg_context *ctx = ref_context_create("cpu", 1);
  const int cells[3] = {2, 3, 1};
  const double box[6] = {0.0, 1.0, 0.0, 1.5, 0.0, 1.0};
  tpmg_grid *grid = ref_grid_create(ctx, 2, 2, L, cells, box);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, L, &n, NULL));

  /* the single-thread solution */
  double *expected = ref_malloc(sizeof(double) * (size_t)n);
  void *b = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL),
       *x = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, x));
  REF_CALL(ctx, tpmg_solver_create(grid, NULL, &solver));
  size_t solver_memory = 0;
  REF_CALL(ctx, tpmg_solver_memory(solver, &solver_memory));
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, NULL));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, x, expected);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  ref_vector_destroy(ctx, &x);
  ref_vector_destroy(ctx, &b);
  size_t before = 0;
  REF_CALL(ctx, tpmg_context_memory(ctx, &before));

  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  static char bogus[2][16];
  worker w[2];
  pthread_t thread[2];
  for (int t = 0; t < 2; ++t) {
    w[t] = (worker){ctx, grid, t, expected, solver_memory, n, &barrier, bogus[t], "", "", ""};
    REF_CHECK(pthread_create(&thread[t], NULL, run, &w[t]) == 0, "pthread_create %d failed", t);
  }
  for (int t = 0; t < 2; ++t)
    pthread_join(thread[t], NULL);
  pthread_barrier_destroy(&barrier);

  for (int t = 0; t < 2; ++t) {
    REF_CHECK(!w[t].problem[0], "%s", w[t].problem);
    REF_CHECK(mentions(w[t].own, w[t].bogus),
              "thread %d: its refusal's message does not name its pointer %p: \"%s\"", t,
              w[t].bogus, w[t].own);
    REF_CHECK(strcmp(w[t].read_later, w[t].own) == 0,
              "thread %d: after thread %d failed too, tpmg_context_last_error gives \"%s\", "
              "expected its own message \"%s\"",
              t, 1 - t, w[t].read_later, w[t].own);
  }
  const char *last = tpmg_context_last_error(ctx);
  REF_CHECK(strcmp(last, w[1].own) == 0,
            "main thread (no failure of its own): expected the context's last message, thread "
            "1's \"%s\", got \"%s\"",
            w[1].own, last);
  size_t after = 0;
  REF_CALL(ctx, tpmg_context_memory(ctx, &after));
  REF_CHECK(after == before, "context memory after the threads: %zu bytes, expected %zu", after,
            before);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  tpmg_status status = tpmg_context_destroy(&ctx);
  REF_CHECK(status == TPMG_SUCCESS, "tpmg_context_destroy after the threads: status %d, \"%s\"",
            (int)status, tpmg_context_last_error(ctx));
  free(expected);
  return ref_exit_code("t704-api-threads");
}
