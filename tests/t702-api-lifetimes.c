/* t702-api-lifetimes: object lifetimes and checked vectors.
 * - Every destroy order of grid, operator, smoother, transfer, coarse solver,
 *   multigrid and solver (7! orders) is safe: after each destroy from the
 *   grid's on, the objects left still work (their results equal those of the
 *   untouched objects), the context's destroy is refused while any of them
 *   lives and succeeds after the last, with 0 bytes left (ASan in the
 *   sanitizer build checks for use-after-free and leaks).
 * - A solver whose grid handle was destroyed solves as before, bit for bit.
 * - tpmg_context_destroy is refused, with a message naming what is live, while
 *   a grid (also one kept alive by a solver) or a vector lives.
 * - tpmg_vector_destroy refuses pointers that are not live vectors of its
 *   context (host memory, another context's vector, an interior pointer, a
 *   vector already destroyed), leaving both contexts' memory unchanged.
 * - Registered vectors of the wrong precision or too short are refused by every
 *   call that takes a vector, with nothing written; longer ones and borrowed
 *   (unregistered) pointers are accepted. */
#include <stdlib.h>
#include <string.h>

#include "reference.h"

static int contains(const char *haystack, const char *needle) {
  return haystack && strstr(haystack, needle) != NULL;
}

static size_t memory(tpmg_context *ctx) {
  size_t bytes = (size_t)-1;
  REF_CALL(ctx, tpmg_context_memory(ctx, &bytes));
  return bytes;
}

/* Expect `expr` to fail with TPMG_ERROR_ARGUMENT and a message containing `needle`. */
#define REFUSED(ctx, expr, needle)                                                                 \
  do {                                                                                             \
    tpmg_status status_ = (expr);                                                                  \
    const char *msg_ = tpmg_context_last_error(ctx);                                               \
    REF_CHECK(status_ == TPMG_ERROR_ARGUMENT && contains(msg_, needle),                            \
              "%s: expected TPMG_ERROR_ARGUMENT mentioning \"%s\", got status %d, message \"%s\"", \
              #expr, needle, (int)status_, msg_);                                                  \
  } while (0)

/* ---- every destroy order ------------------------------------------------- */

enum { GRID, OPERATOR, SMOOTHER, TRANSFER, COARSE, MULTIGRID, SOLVER, N_OBJECTS };

typedef struct {
  tpmg_grid *grid;
  tpmg_operator *op;
  tpmg_smoother *smoother;
  tpmg_transfer *transfer;
  tpmg_coarse *coarse;
  tpmg_multigrid *mg;
  tpmg_solver *solver;
} objects;

/* Small problem (the 5040 orders run under ASan): 2D Q1, level 2 on 2 x 2 coarse cells. */
#define ORDER_L 2
static const int order_cells[3] = {2, 2, 1};

typedef struct {
  tpmg_index n[ORDER_L + 1];
  double *b, *x;          /* fine-level vectors: b holds the right-hand side */
  double *c, *y;          /* level-0 vectors */
  double *out[N_OBJECTS]; /* each object's result on a fresh start */
} order_data;

static void create_objects(tpmg_context *ctx, objects *o) {
  o->grid = ref_grid_create(ctx, 2, 1, ORDER_L, order_cells, NULL);
  REF_CALL(ctx, tpmg_operator_create(o->grid, ORDER_L, TPMG_DOUBLE, &o->op));
  REF_CALL(ctx, tpmg_smoother_create(o->grid, ORDER_L, TPMG_DOUBLE, NULL, &o->smoother));
  REF_CALL(ctx, tpmg_transfer_create(o->grid, ORDER_L, TPMG_DOUBLE, &o->transfer));
  REF_CALL(ctx, tpmg_coarse_create(o->grid, TPMG_DOUBLE, &o->coarse));
  REF_CALL(ctx, tpmg_multigrid_create(o->grid, NULL, &o->mg));
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = TPMG_SOLVER_GMRES;
  options.arithmetic = TPMG_ARITHMETIC_DOUBLE;
  options.restart = 5;
  options.max_iterations = 2; /* the result needs only be deterministic */
  REF_CALL(ctx, tpmg_solver_create(o->grid, &options, &o->solver));
}

static int alive(const objects *o, int which) {
  const void *p[N_OBJECTS] = {o->grid,   o->op, o->smoother, o->transfer,
                              o->coarse, o->mg, o->solver};
  return p[which] != NULL;
}

/* Apply object `which` (not the grid) to the data's input; the result in out. */
static void apply(tpmg_context *ctx, const objects *o, order_data *d, int which, double *out) {
  tpmg_index n = d->n[ORDER_L];
  switch (which) {
  case OPERATOR:
    REF_CALL(ctx, tpmg_operator_apply(o->op, d->b, out));
    break;
  case SMOOTHER:
    memset(out, 0, sizeof(double) * (size_t)n);
    REF_CALL(ctx, tpmg_smoother_apply(o->smoother, 0, d->b, out));
    break;
  case TRANSFER:
    REF_CALL(ctx, tpmg_transfer_restrict(o->transfer, d->b, out));
    break;
  case COARSE:
    REF_CALL(ctx, tpmg_coarse_apply(o->coarse, d->c, out));
    break;
  case MULTIGRID:
    memset(out, 0, sizeof(double) * (size_t)n);
    REF_CALL(ctx, tpmg_multigrid_vcycle(o->mg, d->b, out));
    break;
  case SOLVER: {
    memset(out, 0, sizeof(double) * (size_t)n);
    tpmg_solver_result result;
    REF_CALL(ctx, tpmg_solver_solve(o->solver, d->b, out, &result));
    break;
  }
  }
}

/* Apply object `which` again and compare with its first result. */
static void apply_left(tpmg_context *ctx, const objects *o, order_data *d, int which) {
  tpmg_index m = which == TRANSFER ? d->n[ORDER_L - 1] : which == COARSE ? d->n[0] : d->n[ORDER_L];
  apply(ctx, o, d, which, d->x);
  REF_CHECK(memcmp(d->x, d->out[which], sizeof(double) * (size_t)m) == 0,
            "object %d: result changed after other objects were destroyed", which);
}

static void destroy_object(tpmg_context *ctx, objects *o, int which) {
  switch (which) {
  case GRID:
    REF_CALL(ctx, tpmg_grid_destroy(&o->grid));
    break;
  case OPERATOR:
    REF_CALL(ctx, tpmg_operator_destroy(&o->op));
    break;
  case SMOOTHER:
    REF_CALL(ctx, tpmg_smoother_destroy(&o->smoother));
    break;
  case TRANSFER:
    REF_CALL(ctx, tpmg_transfer_destroy(&o->transfer));
    break;
  case COARSE:
    REF_CALL(ctx, tpmg_coarse_destroy(&o->coarse));
    break;
  case MULTIGRID:
    REF_CALL(ctx, tpmg_multigrid_destroy(&o->mg));
    break;
  case SOLVER:
    REF_CALL(ctx, tpmg_solver_destroy(&o->solver));
    break;
  }
}

static int next_permutation(int *p, int n) {
  int i = n - 2;
  while (i >= 0 && p[i] >= p[i + 1])
    --i;
  if (i < 0)
    return 0;
  int j = n - 1;
  while (p[j] <= p[i])
    --j;
  int t = p[i];
  p[i] = p[j];
  p[j] = t;
  for (int a = i + 1, b = n - 1; a < b; ++a, --b) {
    t = p[a];
    p[a] = p[b];
    p[b] = t;
  }
  return 1;
}

static void destroy_orders(void) {
  tpmg_context *ctx = ref_context_create("cpu", 1);
  order_data d;
  memset(&d, 0, sizeof d);
  {
    objects o;
    create_objects(ctx, &o);
    for (int l = 0; l <= ORDER_L; ++l)
      REF_CALL(ctx, tpmg_grid_level_size(o.grid, l, &d.n[l], NULL));
    tpmg_index n = d.n[ORDER_L];
    d.b = ref_malloc(sizeof(double) * (size_t)n);
    d.x = ref_malloc(sizeof(double) * (size_t)n);
    d.c = ref_malloc(sizeof(double) * (size_t)d.n[0]);
    REF_CALL(ctx, tpmg_problem_rhs(o.grid, TPMG_RHS_SINE, TPMG_DOUBLE, d.b));
    uint64_t seed = 702;
    ref_fill_random(&seed, d.n[0], d.c);
    for (int w = OPERATOR; w < N_OBJECTS; ++w) {
      d.out[w] = ref_malloc(sizeof(double) * (size_t)n);
      apply(ctx, &o, &d, w, d.out[w]);
    }
    for (int w = 0; w < N_OBJECTS; ++w)
      destroy_object(ctx, &o, w);
  }
  REF_CHECK(memory(ctx) == 0, "setup objects left %zu bytes", memory(ctx));

  int order[N_OBJECTS];
  for (int i = 0; i < N_OBJECTS; ++i)
    order[i] = i;
  int n_orders = 0;
  do {
    objects o;
    create_objects(ctx, &o);
    for (int step = 0; step < N_OBJECTS; ++step) {
      tpmg_context *before = ctx;
      REFUSED(ctx, tpmg_context_destroy(&ctx), "still live: 1 grid, 0 vectors");
      REF_CHECK(ctx == before, "a refused tpmg_context_destroy changed *ctx");
      destroy_object(ctx, &o, order[step]);
      /* the users are independent of each other: what is to test is that
       * they work once the grid's handle is gone */
      for (int w = OPERATOR; w < N_OBJECTS; ++w)
        if (!o.grid && alive(&o, w))
          apply_left(ctx, &o, &d, w);
    }
    size_t left = memory(ctx);
    REF_CHECK(left == 0, "destroy order %d %d %d %d %d %d %d left %zu bytes", order[0], order[1],
              order[2], order[3], order[4], order[5], order[6], left);
    ++n_orders;
    if (ref_failures > 0)
      break;
  } while (next_permutation(order, N_OBJECTS));
  REF_CHECK(ref_failures > 0 || n_orders == 5040, "expected 5040 destroy orders, ran %d", n_orders);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  REF_CHECK(ctx == NULL, "tpmg_context_destroy did not set *ctx = NULL");
  free(d.b);
  free(d.x);
  free(d.c);
  for (int w = 0; w < N_OBJECTS; ++w)
    free(d.out[w]);
}

/* ---- a solver outliving its grid handle ---------------------------------- */

static void solver_outlives_grid(void) {
  tpmg_context *ctx = ref_context_create("cpu", 0);
  const int cells[3] = {2, 3, 1};
  tpmg_grid *grid = ref_grid_create(ctx, 2, 3, 3, cells, NULL);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, 3, &n, NULL));
  void *b = NULL, *x1 = NULL, *x2 = NULL;
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, &b));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, &x1));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, &x2));
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));

  tpmg_solver *reference = NULL, *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, NULL, &reference));
  REF_CALL(ctx, tpmg_solver_create(grid, NULL, &solver));
  tpmg_solver_result r1, r2;
  REF_CALL(ctx, tpmg_solver_solve(reference, b, x1, &r1));
  REF_CALL(ctx, tpmg_solver_destroy(&reference));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  REF_CHECK(grid == NULL, "tpmg_grid_destroy did not set *grid = NULL");
  /* the solver keeps the grid, and so the context, alive */
  REFUSED(ctx, tpmg_context_destroy(&ctx), "1 grid, 3 vectors");
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x2, &r2));
  REF_CHECK(r1.converged && r2.converged && r1.iterations == r2.iterations &&
                r1.residual_norm == r2.residual_norm,
            "solve after the grid's handle was destroyed: iterations %d vs %d, residual %.17g vs "
            "%.17g",
            r1.iterations, r2.iterations, r1.residual_norm, r2.residual_norm);
  double *h1 = ref_malloc(sizeof(double) * (size_t)n), *h2 = ref_malloc(sizeof(double) * (size_t)n);
  REF_CALL(ctx, tpmg_vector_download(ctx, TPMG_DOUBLE, n, x1, h1));
  REF_CALL(ctx, tpmg_vector_download(ctx, TPMG_DOUBLE, n, x2, h2));
  REF_CHECK(memcmp(h1, h2, sizeof(double) * (size_t)n) == 0,
            "solution after the grid's handle was destroyed differs: relative %.3g",
            ref_relative_difference(n, h1, h2));
  free(h1);
  free(h2);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  /* the grid went with the solver: only the vectors are left */
  REFUSED(ctx, tpmg_context_destroy(&ctx), "still live: 0 grids, 3 vectors");
  REF_CALL(ctx, tpmg_vector_destroy(ctx, &b));
  REF_CALL(ctx, tpmg_vector_destroy(ctx, &x1));
  REFUSED(ctx, tpmg_context_destroy(&ctx), "0 grids, 1 vector,");
  REF_CALL(ctx, tpmg_vector_destroy(ctx, &x2));
  REF_CHECK(memory(ctx) == 0, "%zu bytes left", memory(ctx));
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  REF_CHECK(ctx == NULL, "tpmg_context_destroy did not set *ctx = NULL");
}

/* ---- context destroy refused ---------------------------------------------- */

static void context_refused(void) {
  tpmg_context *ctx = ref_context_create("cpu", 1);
  const int cells[3] = {1, 1, 1};
  tpmg_grid *grid = ref_grid_create(ctx, 3, 2, 1, cells, NULL);
  tpmg_context *before = ctx;
  REFUSED(ctx, tpmg_context_destroy(&ctx), "still live: 1 grid, 0 vectors");
  REF_CHECK(ctx == before, "refused tpmg_context_destroy changed *ctx");
  REFUSED(ctx, tpmg_context_destroy(&ctx), "of backend memory; destroy them first");
  /* the context still works */
  tpmg_grid *grid2 = ref_grid_create(ctx, 2, 1, 1, cells, NULL);
  REFUSED(ctx, tpmg_context_destroy(&ctx), "still live: 2 grids");
  REF_CALL(ctx, tpmg_grid_destroy(&grid2));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  void *v = NULL;
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_FLOAT, 300, &v));
  REFUSED(ctx, tpmg_context_destroy(&ctx), "still live: 0 grids, 1 vector, 1.2 kB");
  REF_CALL(ctx, tpmg_vector_destroy(ctx, &v));
  /* an empty vector is a vector too */
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, 0, &v));
  REF_CHECK(v != NULL, "tpmg_vector_create(n = 0) gave NULL");
  REFUSED(ctx, tpmg_context_destroy(&ctx), "1 vector");
  REF_CALL(ctx, tpmg_vector_destroy(ctx, &v));
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  REF_CHECK(ctx == NULL, "tpmg_context_destroy did not set *ctx = NULL");
}

/* ---- vector_destroy of what is not this context's vector ------------------ */

static void foreign_vectors(void) {
  tpmg_context *a = ref_context_create("cpu", 1), *b = ref_context_create("cpu", 1);
  void *va = NULL, *vb = NULL;
  REF_CALL(a, tpmg_vector_create(a, TPMG_DOUBLE, 100, &va));
  REF_CALL(b, tpmg_vector_create(b, TPMG_FLOAT, 1000, &vb));
  size_t ma = memory(a), mb = memory(b);

  void *p = vb;
  REFUSED(a, tpmg_vector_destroy(a, &p), "not a live vector of this context");
  REF_CHECK(p == vb, "refused tpmg_vector_destroy changed *v");
  double host[4] = {0};
  p = host;
  REFUSED(a, tpmg_vector_destroy(a, &p), "not a live vector");
  REF_CHECK(p == host, "refused tpmg_vector_destroy changed *v");
  p = (double *)va + 1;
  REFUSED(a, tpmg_vector_destroy(a, &p), "not a live vector");
  REF_CHECK(memory(a) == ma && memory(b) == mb,
            "refused destroys changed the memory: a %zu -> %zu, b %zu -> %zu", ma, memory(a), mb,
            memory(b));

  /* b's vector still works on b */
  double dot = -1.0;
  REF_CALL(b, tpmg_vector_set(b, TPMG_FLOAT, 1000, 0.5, vb));
  REF_CALL(b, tpmg_vector_dot(b, TPMG_FLOAT, 1000, vb, vb, &dot));
  REF_CHECK(dot == 250.0, "dot of b's vector: expected 250, got %.17g", dot);

  /* a second destroy through a stale copy */
  void *copy = va;
  REF_CALL(a, tpmg_vector_destroy(a, &va));
  REF_CHECK(va == NULL && memory(a) == 0, "destroy: *v %p, %zu bytes left", va, memory(a));
  REFUSED(a, tpmg_vector_destroy(a, &copy), "not a live vector");
  REF_CHECK(memory(a) == 0 && memory(b) == mb, "stale destroy changed the memory");

  REF_CALL(b, tpmg_vector_destroy(b, &vb));
  REF_CALL(a, tpmg_context_destroy(&a));
  REF_CALL(b, tpmg_context_destroy(&b));
}

/* ---- wrong-precision and too-short registered vectors refused ------------- */

#define POISON 1234.5

static void poison(tpmg_context *ctx, tpmg_precision p, tpmg_index n, void *v) {
  REF_CALL(ctx, tpmg_vector_set(ctx, p, n, POISON, v));
}

/* Every entry of v is still POISON. */
static int untouched(tpmg_context *ctx, tpmg_precision p, tpmg_index n, const void *v) {
  double *h = ref_malloc(sizeof(double) * (size_t)n);
  REF_CALL(ctx, tpmg_vector_convert(ctx, n, p, v, TPMG_DOUBLE, h)); /* CPU: host memory */
  int ok = 1;
  for (tpmg_index i = 0; i < n; ++i)
    ok = ok && h[i] == POISON;
  free(h);
  return ok;
}

#define REFUSED_UNTOUCHED(ctx, expr, needle, p, n, v)                                              \
  do {                                                                                             \
    poison(ctx, p, n, v);                                                                          \
    REFUSED(ctx, expr, needle);                                                                    \
    REF_CHECK(untouched(ctx, p, n, v), "%s: refused call wrote its output", #expr);                \
  } while (0)

static void checked_vectors(void) {
  tpmg_context *ctx = ref_context_create("cpu", 1);
  const int cells[3] = {2, 2, 1};
  const int L = 2;
  tpmg_grid *grid = ref_grid_create(ctx, 2, 2, L, cells, NULL);
  tpmg_index n = 0, nc = 0, n0 = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, L, &n, NULL));
  REF_CALL(ctx, tpmg_grid_level_size(grid, L - 1, &nc, NULL));
  REF_CALL(ctx, tpmg_grid_level_size(grid, 0, &n0, NULL));
  void *d = NULL, *d2 = NULL, *f = NULL, *shortv = NULL, *longv = NULL, *dc = NULL, *d0 = NULL;
  void *f0 = NULL;
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, &d));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, &d2));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_FLOAT, n, &f));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n - 1, &shortv));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n + 7, &longv));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, nc, &dc));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n0, &d0));
  REF_CALL(ctx, tpmg_vector_create(ctx, TPMG_FLOAT, n0, &f0));
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, d));
  size_t m = memory(ctx);

  tpmg_operator *op = NULL;
  REF_CALL(ctx, tpmg_operator_create(grid, L, TPMG_DOUBLE, &op));
  REFUSED_UNTOUCHED(ctx, tpmg_operator_apply(op, f, d2), "created in float, the call needs double",
                    TPMG_DOUBLE, n, d2);
  REFUSED_UNTOUCHED(ctx, tpmg_operator_apply(op, d, f), "tpmg_operator_apply: dst", TPMG_FLOAT, n,
                    f);
  REFUSED_UNTOUCHED(ctx, tpmg_operator_apply(op, d, shortv), "entries, the call needs", TPMG_DOUBLE,
                    n - 1, shortv);
  REFUSED_UNTOUCHED(ctx, tpmg_operator_apply(op, shortv, d2), "tpmg_operator_apply: src",
                    TPMG_DOUBLE, n, d2);
  REFUSED_UNTOUCHED(ctx, tpmg_operator_diagonal(op, f), "tpmg_operator_diagonal", TPMG_FLOAT, n, f);

  /* accepted: the right vectors, a longer one, and borrowed host memory (CPU) */
  double *h_in = ref_malloc(sizeof(double) * (size_t)n),
         *h_out = ref_malloc(sizeof(double) * (size_t)n);
  double *h_ref = ref_malloc(sizeof(double) * (size_t)n);
  REF_CALL(ctx, tpmg_operator_apply(op, d, d2));
  REF_CALL(ctx, tpmg_vector_download(ctx, TPMG_DOUBLE, n, d2, h_ref));
  REF_CALL(ctx, tpmg_operator_apply(op, d, longv));
  REF_CALL(ctx, tpmg_vector_download(ctx, TPMG_DOUBLE, n, longv, h_out));
  REF_CHECK(memcmp(h_out, h_ref, sizeof(double) * (size_t)n) == 0,
            "operator into a longer vector differs");
  REF_CALL(ctx, tpmg_vector_download(ctx, TPMG_DOUBLE, n, d, h_in));
  REF_CALL(ctx, tpmg_operator_apply(op, h_in, h_out));
  REF_CHECK(memcmp(h_out, h_ref, sizeof(double) * (size_t)n) == 0,
            "operator on borrowed host memory differs");
  REF_CALL(ctx, tpmg_operator_destroy(&op));

  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, NULL, &solver));
  REFUSED_UNTOUCHED(ctx, tpmg_solver_solve(solver, f, d2, NULL), "tpmg_solver_solve: b",
                    TPMG_DOUBLE, n, d2);
  REFUSED_UNTOUCHED(ctx, tpmg_solver_solve(solver, d, f, NULL), "created in float", TPMG_FLOAT, n,
                    f);
  REFUSED_UNTOUCHED(ctx, tpmg_solver_solve(solver, d, shortv, NULL), "tpmg_solver_solve: x",
                    TPMG_DOUBLE, n - 1, shortv);
  REFUSED_UNTOUCHED(ctx, tpmg_solver_solve(solver, shortv, d2, NULL), "entries, the call needs",
                    TPMG_DOUBLE, n, d2);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));

  /* the other calls that take vectors */
  tpmg_smoother *smoother = NULL;
  tpmg_transfer *transfer = NULL;
  tpmg_coarse *coarse = NULL;
  tpmg_multigrid *mg = NULL;
  REF_CALL(ctx, tpmg_smoother_create(grid, L, TPMG_DOUBLE, NULL, &smoother));
  REF_CALL(ctx, tpmg_transfer_create(grid, L, TPMG_DOUBLE, &transfer));
  REF_CALL(ctx, tpmg_coarse_create(grid, TPMG_DOUBLE, &coarse));
  REF_CALL(ctx, tpmg_multigrid_create(grid, NULL, &mg));
  REFUSED_UNTOUCHED(ctx, tpmg_smoother_apply(smoother, 0, d, f), "tpmg_smoother_apply: x",
                    TPMG_FLOAT, n, f);
  REFUSED_UNTOUCHED(ctx, tpmg_smoother_apply(smoother, 0, shortv, d2), "tpmg_smoother_apply: b",
                    TPMG_DOUBLE, n, d2);
  REFUSED_UNTOUCHED(ctx, tpmg_transfer_restrict(transfer, d, d0), "tpmg_transfer_restrict: coarse",
                    TPMG_DOUBLE, n0, d0);
  REFUSED_UNTOUCHED(ctx, tpmg_transfer_restrict(transfer, shortv, dc),
                    "tpmg_transfer_restrict: fine", TPMG_DOUBLE, nc, dc);
  REFUSED_UNTOUCHED(ctx, tpmg_transfer_prolongate_add(transfer, d0, d2),
                    "tpmg_transfer_prolongate_add: coarse", TPMG_DOUBLE, n, d2);
  REFUSED_UNTOUCHED(ctx, tpmg_transfer_prolongate_add(transfer, dc, shortv),
                    "tpmg_transfer_prolongate_add: fine", TPMG_DOUBLE, n - 1, shortv);
  REFUSED_UNTOUCHED(ctx, tpmg_coarse_apply(coarse, f0, d0), "tpmg_coarse_apply: b", TPMG_DOUBLE, n0,
                    d0);
  REFUSED_UNTOUCHED(ctx, tpmg_coarse_apply(coarse, d0, f0), "tpmg_coarse_apply: x", TPMG_FLOAT, n0,
                    f0);
  REFUSED_UNTOUCHED(ctx, tpmg_multigrid_vcycle(mg, d, shortv), "tpmg_multigrid_vcycle: x",
                    TPMG_DOUBLE, n - 1, shortv);
  REFUSED_UNTOUCHED(ctx, tpmg_multigrid_precondition(mg, TPMG_DOUBLE, f, d2),
                    "tpmg_multigrid_precondition: r", TPMG_DOUBLE, n, d2);
  REFUSED_UNTOUCHED(ctx, tpmg_multigrid_fmg(mg, TPMG_DOUBLE, d, f), "tpmg_multigrid_fmg: x",
                    TPMG_FLOAT, n, f);
  REFUSED_UNTOUCHED(ctx, tpmg_problem_rhs(grid, TPMG_RHS_ONE, TPMG_DOUBLE, f), "tpmg_problem_rhs",
                    TPMG_FLOAT, n, f);
  REFUSED_UNTOUCHED(ctx, tpmg_problem_rhs(grid, TPMG_RHS_ONE, TPMG_DOUBLE, shortv),
                    "tpmg_problem_rhs", TPMG_DOUBLE, n - 1, shortv);
  double error = -1.0;
  REFUSED(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_FLOAT, d, &error),
          "tpmg_problem_l2_error");
  REF_CHECK(error == -1.0, "refused tpmg_problem_l2_error wrote its output");
  REFUSED_UNTOUCHED(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, shortv), "tpmg_vector_set",
                    TPMG_DOUBLE, n - 1, shortv);
  REFUSED_UNTOUCHED(ctx, tpmg_vector_axpby(ctx, TPMG_DOUBLE, n, 1.0, f, 0.0, d2),
                    "tpmg_vector_axpby: x", TPMG_DOUBLE, n, d2);
  REFUSED_UNTOUCHED(ctx, tpmg_vector_convert(ctx, n, TPMG_DOUBLE, d, TPMG_DOUBLE, f),
                    "tpmg_vector_convert: dst", TPMG_FLOAT, n, f);
  REFUSED_UNTOUCHED(ctx, tpmg_vector_upload(ctx, TPMG_DOUBLE, n, h_in, shortv),
                    "tpmg_vector_upload", TPMG_DOUBLE, n - 1, shortv);
  double dot = -1.0;
  REFUSED(ctx, tpmg_vector_dot(ctx, TPMG_FLOAT, n, f, d, &dot), "tpmg_vector_dot: y");
  REF_CHECK(dot == -1.0, "refused tpmg_vector_dot wrote its output");
  REFUSED(ctx, tpmg_vector_download(ctx, TPMG_FLOAT, n, d, h_out), "tpmg_vector_download");

  REF_CALL(ctx, tpmg_smoother_destroy(&smoother));
  REF_CALL(ctx, tpmg_transfer_destroy(&transfer));
  REF_CALL(ctx, tpmg_coarse_destroy(&coarse));
  REF_CALL(ctx, tpmg_multigrid_destroy(&mg));
  REF_CHECK(memory(ctx) == m, "objects left %zu bytes beyond the vectors' %zu", memory(ctx), m);
  void *all[] = {d, d2, f, shortv, longv, dc, d0, f0};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    REF_CALL(ctx, tpmg_vector_destroy(ctx, &all[i]));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  free(h_in);
  free(h_out);
  free(h_ref);
}

int main(void) {
  context_refused();
  foreign_vectors();
  checked_vectors();
  solver_outlives_grid();
  destroy_orders();
  return ref_exit_code("t702-api-lifetimes");
}
