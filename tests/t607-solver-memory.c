/* t607-solver-memory: the GMRES basis is allocated as the iterations need it.
 * - tpmg_solver_memory equals the growth of tpmg_context_memory since before
 *   tpmg_solver_create, after the create and after every solve, for every
 *   solver type and precision; destroying the solver returns all of it;
 * - right after the create, a solver holds exactly its hierarchy (measured as
 *   the memory of a tpmg_multigrid_create of the same options, less the
 *   finest level's vectors the solver's hierarchy lacks), its work vectors and
 *   the first basis pair, counted from the vector sizes: r (GMRES right), r and
 *   w (GMRES left), r, w, z, p (CG), r and z (FMG, V-cycles; r alone in
 *   TPMG_ARITHMETIC_MIXED, which adds the V-cycle's float result), in the outer
 *   precision; in TPMG_ARITHMETIC_FLOAT two double vectors for the final residual.
 *   A float hierarchy under double vectors keeps a fine-level b and x to
 *   convert through, except for GMRES from the right in TPMG_ARITHMETIC_MIXED,
 *   which keeps no x and its b and r in one block of n doubles' size (r at a
 *   256-byte boundary); other hierarchies keep neither b nor x. Mixed FMG
 *   adds b and x in double on every level below the finest;
 * - GMRES: a solver holds as many basis pairs (V_i of the outer precision,
 *   and with right preconditioning Z_i, in float in TPMG_ARITHMETIC_MIXED, else of
 *   the outer precision) as its longest
 *   cycle so far had iterations, the first pair from the create. With right
 *   preconditioning every cycle but the last is restart iterations long, so
 *   a solve of j iterations holds min(j, restart) pairs; a second identical
 *   solve allocates nothing; a solve that needs more iterations allocates
 *   exactly the pairs it needs more. With left preconditioning a cycle may
 *   end early (its estimate of ||P r|| is not the recomputed one in
 *   mixed precision), so the pairs are at most min(j, restart). CG, FMG and
 *   V-cycles allocate nothing in a solve;
 * - a solver reused after its basis grew gives bitwise the iterations and the
 *   solution of a fresh solver on the same right-hand side and start vector;
 * - on the CPU backend (Linux, glibc): with the process's address space
 *   limited so that only a few pairs fit, the solve succeeds with the restart
 *   length shrunk to the pairs that fitted (tpmg_solver_restart), bitwise
 *   equal to a fresh solver with that restart length, and keeps it.
 * On the backend named by argv[1] (default "cpu"). */
#include <stdlib.h>
#include <string.h>

/* an address sanitizer reserves more address space than any limit allows */
#if defined(__SANITIZE_ADDRESS__)
#define T607_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T607_SANITIZED 1
#endif
#endif
#if defined(__linux__) && defined(__GLIBC__) && !defined(T607_SANITIZED)
#include <malloc.h>
#include <sys/resource.h>
#define T607_LIMIT_ADDRESS_SPACE 1
#endif

#include "reference.h"

static size_t context_memory(tpmg_context *ctx) {
  size_t bytes = 0;
  REF_CALL(ctx, tpmg_context_memory(ctx, &bytes));
  return bytes;
}

static size_t solver_memory(tpmg_context *ctx, const tpmg_solver *solver) {
  size_t bytes = 0;
  REF_CALL(ctx, tpmg_solver_memory(solver, &bytes));
  return bytes;
}

typedef struct {
  tpmg_context *ctx;
  tpmg_grid *grid;
  int64_t n;
  int L;            /* the finest level */
  tpmg_precision q; /* of b and x */
  size_t entry;     /* bytes per entry */
  void *vb, *vx;
} problem;

/* Solve from the start vector x0 (host, precision q) into x (host). */
static tpmg_status solve(problem *p, tpmg_solver *solver, const void *x0, void *x,
                         tpmg_solver_result *result) {
  ref_vector_upload(p->ctx, p->q, p->n, x0, p->vx);
  tpmg_status status = tpmg_solver_solve(solver, p->vb, p->vx, result);
  if (status == TPMG_SUCCESS)
    ref_vector_download(p->ctx, p->q, p->n, p->vx, x);
  return status;
}

/* A fresh solver with these options from x0: its result and solution. */
static void fresh_solve(problem *p, const tpmg_solver_options *options, const void *x0, void *x,
                        tpmg_solver_result *result) {
  tpmg_solver *solver = NULL;
  REF_CALL(p->ctx, tpmg_solver_create(p->grid, options, &solver));
  REF_CALL(p->ctx, solve(p, solver, x0, x, result));
  REF_CALL(p->ctx, tpmg_solver_destroy(&solver));
}

/* Bitwise equal iterations and solutions. */
static void check_same(const problem *p, const tpmg_solver_result *expected, const void *x_expected,
                       const tpmg_solver_result *got, const void *x_got, const char *what) {
  REF_CHECK(got->iterations == expected->iterations && got->converged == expected->converged,
            "%s: expected %d iterations (converged %d) as a fresh solver, got %d (converged %d)",
            what, expected->iterations, expected->converged, got->iterations, got->converged);
  const char *a = x_expected, *b = x_got;
  for (int64_t i = 0; i < p->n; ++i)
    if (memcmp(a + i * p->entry, b + i * p->entry, p->entry) != 0) {
      double ea = p->q == TPMG_FLOAT ? ((const float *)a)[i] : ((const double *)a)[i];
      double eb = p->q == TPMG_FLOAT ? ((const float *)b)[i] : ((const double *)b)[i];
      REF_CHECK(0, "%s: x[%lld] expected %.17g (fresh solver), got %.17g", what, (long long)i, ea,
                eb);
      break;
    }
}

static int min_int(int a, int b) {
  return a < b ? a : b;
}

/* The memory of a tpmg_multigrid_create with the options the solver's
 * hierarchy has. */
static size_t hierarchy_memory(problem *p, const tpmg_solver_options *options) {
  tpmg_multigrid_options mg_options = {options->arithmetic == TPMG_ARITHMETIC_DOUBLE ? TPMG_DOUBLE
                                                                                     : TPMG_FLOAT,
                                       options->smoother, options->type == TPMG_SOLVER_CG};
  size_t before = context_memory(p->ctx);
  tpmg_multigrid *mg = NULL;
  REF_CALL(p->ctx, tpmg_multigrid_create(p->grid, &mg_options, &mg));
  size_t bytes = context_memory(p->ctx) - before;
  REF_CALL(p->ctx, tpmg_multigrid_destroy(&mg));
  return bytes;
}

/* What a solver with these options holds right after its create: an
 * independent count from the vector sizes (see the header). */
static size_t created_memory(problem *p, const tpmg_solver_options *options) {
  size_t n = (size_t)p->n, outer = p->entry * n, f = sizeof(float) * n, d = sizeof(double) * n;
  int gmres = options->type == TPMG_SOLVER_GMRES;
  int left = gmres && options->preconditioning == TPMG_PRECONDITION_LEFT;
  int mixed = options->arithmetic == TPMG_ARITHMETIC_MIXED;
  /* a public float hierarchy keeps a fine-level r, b and x (for double vectors) */
  size_t bytes = hierarchy_memory(p, options);
  if (options->arithmetic == TPMG_ARITHMETIC_FLOAT) /* no b and x */
    bytes -= 2 * f;
  if (mixed && gmres && !left) /* the block of b and r instead of r, b and x */
    bytes = bytes - 3 * f + (f + 255) / 256 * 256 + f;
  int cycles = options->type == TPMG_SOLVER_FMG || options->type == TPMG_SOLVER_VCYCLE;
  int work = options->type == TPMG_SOLVER_CG ? 4 : (gmres && !left) || (cycles && mixed) ? 1 : 2;
  bytes += (size_t)work * outer;
  if (options->arithmetic == TPMG_ARITHMETIC_FLOAT)
    bytes += 2 * d;
  if (gmres)
    bytes += outer + (left ? 0 : mixed ? f : outer);
  /* mixed FMG: b and x in double on the levels below the finest (one coarse
   * cell: no hidden levels) */
  for (int l = 0; l < p->L && mixed && options->type == TPMG_SOLVER_FMG; ++l) {
    tpmg_index nl = 0;
    REF_CALL(p->ctx, tpmg_grid_level_size(p->grid, l, &nl, NULL));
    bytes += 2 * sizeof(double) * (size_t)nl;
  }
  return bytes;
}

static void check_case(problem *p, const tpmg_solver_options *options, const char *what) {
  tpmg_context *ctx = p->ctx;
  size_t bytes = (size_t)p->entry * (size_t)p->n;
  int gmres = options->type == TPMG_SOLVER_GMRES;
  int left = gmres && options->preconditioning == TPMG_PRECONDITION_LEFT;
  /* V_j, and Z_j from the right: float V-cycle outputs in TPMG_ARITHMETIC_MIXED */
  size_t z = options->arithmetic == TPMG_ARITHMETIC_MIXED ? sizeof(float) * (size_t)p->n : bytes;
  size_t pair = !gmres ? 0 : left ? bytes : bytes + z;
  size_t expected = created_memory(p, options);
  int restart = options->restart;
  void *zero = calloc((size_t)p->n, p->entry), *near = ref_malloc(bytes);
  void *x1 = ref_malloc(bytes), *x2 = ref_malloc(bytes), *x3 = ref_malloc(bytes);
  void *fresh = ref_malloc(bytes);
  if (!zero)
    abort();

  /* a start nearer the solution: one iteration of the same solver (left
   * preconditioning: zero, as the test is relative to ||P r_0||) */
  tpmg_solver_options one = *options;
  one.max_iterations = 1;
  tpmg_solver_result r1, r2, r3, rf;
  if (left)
    memcpy(near, zero, bytes);
  else
    fresh_solve(p, &one, zero, near, &rf);

  size_t m0 = context_memory(ctx);
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(p->grid, options, &solver));
  size_t m1 = context_memory(ctx), s1 = solver_memory(ctx, solver);
  REF_CHECK(m1 > m0 && s1 == m1 - m0,
            "%s: after create, tpmg_solver_memory expected the context's growth %zu, got %zu", what,
            m1 - m0, s1);
  REF_CHECK(s1 == expected,
            "%s: after create, expected %zu bytes (hierarchy, work vectors, first basis pair), "
            "got %zu",
            what, expected, s1);

  REF_CALL(ctx, solve(p, solver, near, x1, &r1));
  size_t m2 = context_memory(ctx), s2 = solver_memory(ctx, solver);
  size_t grown = (size_t)(min_int(r1.iterations, restart) - 1) * pair;
  REF_CHECK(left ? m2 - m1 <= grown && (m2 - m1) % pair == 0 : m2 - m1 == grown,
            "%s: a solve of %d iterations (restart %d) expected to grow the context memory by "
            "%s%zu bytes, got %zu",
            what, r1.iterations, restart, left ? "pairs up to " : "", grown, m2 - m1);
  REF_CHECK(s2 == m2 - m0, "%s: after a solve, tpmg_solver_memory expected %zu, got %zu", what,
            m2 - m0, s2);
  if (gmres && !left)
    REF_CHECK(r1.iterations >= 2 && m2 > m1,
              "%s: expected a solve of >= 2 iterations to grow the memory from %zu, got %d "
              "iterations, %zu bytes",
              what, m1, r1.iterations, m2);

  REF_CALL(ctx, solve(p, solver, near, x2, &r2));
  size_t m3 = context_memory(ctx);
  REF_CHECK(m3 == m2, "%s: a second identical solve changed the context memory from %zu to %zu",
            what, m2, m3);
  check_same(p, &r1, x1, &r2, x2, what);

  REF_CALL(ctx, solve(p, solver, zero, x3, &r3));
  size_t m4 = context_memory(ctx), s4 = solver_memory(ctx, solver);
  grown = (size_t)(min_int(r3.iterations, restart) - min_int(r1.iterations, restart)) * pair;
  if (gmres && !left && r1.iterations < restart)
    REF_CHECK(r3.iterations > r1.iterations,
              "%s: from zero expected more iterations than the %d from near the solution, got %d",
              what, r1.iterations, r3.iterations);
  if (left) /* the same solve once more */
    grown = 0;
  REF_CHECK(m4 - m3 == grown,
            "%s: a solve of %d iterations after one of %d (restart %d) expected to grow the "
            "memory by %zu bytes, got %zu",
            what, r3.iterations, r1.iterations, restart, grown, m4 - m3);
  REF_CHECK(s4 == m4 - m0, "%s: after three solves, tpmg_solver_memory expected %zu, got %zu", what,
            m4 - m0, s4);
  if (gmres) {
    int in_use = -1;
    REF_CALL(ctx, tpmg_solver_restart(solver, &in_use));
    REF_CHECK(in_use == restart, "%s: tpmg_solver_restart expected %d, got %d", what, restart,
              in_use);
  }

  /* against fresh solvers */
  fresh_solve(p, options, near, fresh, &rf);
  check_same(p, &rf, fresh, &r1, x1, what);
  fresh_solve(p, options, zero, fresh, &rf);
  check_same(p, &rf, fresh, &r3, x3, what);

  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  size_t m5 = context_memory(ctx);
  REF_CHECK(m5 == m0, "%s: after destroy expected the context memory %zu, got %zu", what, m0, m5);
  free(fresh);
  free(x3);
  free(x2);
  free(x1);
  free(near);
  free(zero);
}

static void problem_init(problem *p, tpmg_context *ctx, int dim, int k, int L, tpmg_precision q) {
  const int cells[3] = {1, 1, 1};
  p->ctx = ctx;
  p->L = L;
  p->grid = ref_grid_create(ctx, dim, k, L, cells, NULL);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(p->grid, L, &n, NULL));
  p->n = n;
  p->q = q;
  p->entry = q == TPMG_FLOAT ? sizeof(float) : sizeof(double);
  p->vb = ref_vector_create(ctx, q, n, NULL);
  p->vx = ref_vector_create(ctx, q, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(p->grid, TPMG_RHS_SINE, q, p->vb));
}

static void problem_free(problem *p) {
  ref_vector_destroy(p->ctx, &p->vx);
  ref_vector_destroy(p->ctx, &p->vb);
  REF_CALL(p->ctx, tpmg_grid_destroy(&p->grid));
}

static void check_modes(tpmg_context *ctx, int dim, int k, int L) {
  char what[128];
  for (int arithmetic = TPMG_ARITHMETIC_DOUBLE; arithmetic <= TPMG_ARITHMETIC_FLOAT; ++arithmetic) {
    problem p;
    problem_init(&p, ctx, dim, k, L,
                 arithmetic == TPMG_ARITHMETIC_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE);
    for (int type = TPMG_SOLVER_GMRES; type <= TPMG_SOLVER_VCYCLE; ++type) {
      tpmg_solver_options options = tpmg_solver_options_default();
      options.type = (tpmg_solver_type)type;
      options.arithmetic = (tpmg_arithmetic)arithmetic;
      options.tolerance = arithmetic == TPMG_ARITHMETIC_FLOAT ? 1e-4 : 1e-10;
      snprintf(what, sizeof what, "%dD Q%d L%d %s %s", dim, k, L, tpmg_solver_type_name(type),
               tpmg_arithmetic_name(arithmetic));
      check_case(&p, &options, what);
      if (type != TPMG_SOLVER_GMRES || arithmetic == TPMG_ARITHMETIC_FLOAT)
        continue;
      options.preconditioning = TPMG_PRECONDITION_LEFT;
      snprintf(what, sizeof what, "%dD Q%d L%d gmres %s left", dim, k, L,
               tpmg_arithmetic_name(arithmetic));
      check_case(&p, &options, what);
      options.preconditioning = TPMG_PRECONDITION_RIGHT;
      options.restart = 3;
      snprintf(what, sizeof what, "%dD Q%d L%d gmres(3) %s", dim, k, L,
               tpmg_arithmetic_name(arithmetic));
      check_case(&p, &options, what);
    }
    problem_free(&p);
  }
}

#ifdef T607_LIMIT_ADDRESS_SPACE
/* The process's virtual memory size (VmSize), 0 where unknown. */
static size_t address_space(void) {
  FILE *file = fopen("/proc/self/status", "r");
  if (!file)
    return 0;
  char line[256];
  unsigned long long kib = 0;
  while (fgets(line, sizeof line, file))
    if (sscanf(line, "VmSize: %llu kB", &kib) == 1)
      break;
  fclose(file);
  return (size_t)kib * 1024;
}

/* GMRES(30) where only a few basis pairs fit: host memory limited through
 * RLIMIT_AS, the vectors mapped each on its own (mallopt), so that the
 * allocation of a basis vector fails after about 2.5 more pairs. */
static void check_shrink(tpmg_context *ctx) {
  const char *what = "2D Q2 L7 gmres double, address space limited";
  problem p;
  problem_init(&p, ctx, 2, 2, 7, TPMG_DOUBLE);
  size_t bytes = sizeof(double) * (size_t)p.n, pair = 2 * bytes;
  void *zero = calloc((size_t)p.n, sizeof(double)), *x = ref_malloc(bytes);
  void *fresh = ref_malloc(bytes);
  if (!zero)
    abort();
  REF_CHECK(mallopt(M_MMAP_THRESHOLD, 64 * 1024) == 1, "mallopt(M_MMAP_THRESHOLD) failed");

  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = TPMG_SOLVER_GMRES;
  options.arithmetic = TPMG_ARITHMETIC_DOUBLE;
  options.tolerance = 1e-10;
  tpmg_solver_result full, shrunk, rf;
  fresh_solve(&p, &options, zero, fresh, &full); /* also grows the backend's scratch */
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(p.grid, &options, &solver));
  size_t created = solver_memory(ctx, solver);

  struct rlimit old, limit;
  REF_CHECK(getrlimit(RLIMIT_AS, &old) == 0, "getrlimit failed");
  limit = old;
  limit.rlim_cur = address_space() + 2 * pair + pair / 2;
  if (limit.rlim_cur > old.rlim_max)
    limit.rlim_cur = old.rlim_max;
  REF_CHECK(setrlimit(RLIMIT_AS, &limit) == 0, "setrlimit failed");
  ref_vector_upload(ctx, TPMG_DOUBLE, p.n, zero, p.vx);
  tpmg_status status = tpmg_solver_solve(solver, p.vb, p.vx, &shrunk);
  REF_CHECK(setrlimit(RLIMIT_AS, &old) == 0, "restoring the address space limit failed");
  REF_CHECK(status == TPMG_SUCCESS, "%s: expected the solve to succeed, got status %d (%s)", what,
            (int)status, tpmg_context_last_error(ctx));
  ref_vector_download(ctx, TPMG_DOUBLE, p.n, p.vx, x);

  int restart = -1;
  REF_CALL(ctx, tpmg_solver_restart(solver, &restart));
  REF_CHECK(restart >= 1 && restart < full.iterations,
            "%s: expected the restart shrunk below the %d iterations of GMRES(30), got %d", what,
            full.iterations, restart);
  size_t held = solver_memory(ctx, solver);
  REF_CHECK(held - created == (size_t)(restart - 1) * pair,
            "%s: restart shrunk to %d: expected the solver's memory to grow by %zu, got %zu", what,
            restart, (size_t)(restart - 1) * pair, held - created);
  if (restart >= 1) {
    tpmg_solver_options shorter = options;
    shorter.restart = restart;
    fresh_solve(&p, &shorter, zero, fresh, &rf);
    check_same(&p, &rf, fresh, &shrunk, x, what);
    REF_CHECK(shrunk.converged == 1, "%s: not converged", what);
    /* the next solve, with memory to spare, keeps the shrunk restart */
    REF_CALL(ctx, solve(&p, solver, zero, x, &shrunk));
    check_same(&p, &rf, fresh, &shrunk, x, "the solve after the shrink");
    REF_CHECK(solver_memory(ctx, solver) == held,
              "the solve after the shrink changed the solver's memory from %zu to %zu", held,
              solver_memory(ctx, solver));
  }
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  free(fresh);
  free(x);
  free(zero);
  problem_free(&p);
}
#endif

int main(int argc, char **argv) {
  const char *backend = ref_backend(argc, argv);
  tpmg_context *ctx = ref_context_create(backend, 0);
  check_modes(ctx, 2, 2, 5);
  check_modes(ctx, 3, 1, 3);
#ifdef T607_LIMIT_ADDRESS_SPACE
  if (strncmp(backend, "cpu", 3) == 0)
    check_shrink(ctx);
#endif
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t607-solver-memory");
}
