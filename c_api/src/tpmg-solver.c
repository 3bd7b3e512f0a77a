/* Solvers on the finest level: flexible GMRES and flexible CG preconditioned
 * by one V-cycle, full multigrid, plain V-cycle iteration, and GMRES from the
 * result of full multigrid's first pass. Written once over backend
 * operations: only scalars cross to the host.
 *
 * Precision (paper §4.2): the outer iteration and its residuals run in the
 * outer precision q (double, or float in TPMG_ARITHMETIC_FLOAT), the V-cycle in the
 * hierarchy's precision (float in TPMG_ARITHMETIC_MIXED). A float V-cycle is not an
 * exactly linear operator, so both Krylov methods are the flexible variants:
 * GMRES keeps the preconditioned vectors Z and forms x = x_0 + Z y, which keeps
 * its residual estimate true; CG uses the Polak-Ribiere-type beta
 * (z_{k+1}, r_{k+1} - r_k) / (z_k, r_k). The reported residual is recomputed in
 * double after the solve.
 *
 * GMRES with TPMG_PRECONDITION_LEFT is deal.II's SolverGMRES default instead:
 * Arnoldi on P A (P the V-cycle), x = x_0 + V y, and the stopping test on the
 * preconditioned residual, ||P (b - A x)|| <= tolerance ||P (b - A x_0)||,
 * x_0 the caller's start vector (FMG_GMRES: before its FMG pass, one more
 * V-cycle to measure it).
 *
 * Memory: the GMRES basis grows with the iterations. Create allocates the
 * first pair (V_0, and Z_0 with right preconditioning); the first solve whose
 * cycle reaches iteration j allocates pair j, which every later solve reuses
 * (nothing is freed before destroy), so a solver whose solves converge in 8
 * iterations holds 8 pairs whatever its restart length. A cycle of restart m
 * uses V_0..V_{m-1} and Z_0..Z_{m-1}: the Arnoldi vector after the last column
 * is never stored. Where pair j does not fit (it would leave less than 5% of
 * the memory free at creation, or the allocation fails) the restart length
 * shrinks to j, for the rest of that solve and every later one
 * (tpmg_solver_restart). In TPMG_ARITHMETIC_MIXED the solver calls the float
 * hierarchy through the mixed-precision adapter (tpmg-mixed.c), in the other
 * two the hierarchy of its own precision directly; which one is chosen at
 * creation. Mixed GMRES from the right keeps the Z_j in float, as the float
 * V-cycle writes them: a pair costs 12 bytes per DoF, not 16. A Z_j needs
 * Z_j in double, which the adapter lends (tpmg_mixed_precondition_float).
 * x += Z y adds the float Z_j to the double x (the backend's axpys with x_prec
 * float), each entry widened exactly, so the iterates are bitwise those of
 * the Z_j converted to double (t601). Mixed FMG and V-cycles likewise add the
 * V-cycle's float result to x without a double z (tpmg_mixed_correct). In
 * TPMG_ARITHMETIC_FLOAT the final residual takes two double vectors: x, and
 * A x - b. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-impl.h"

struct tpmg_solver {
  tpmg_grid *grid;             /* referenced */
  tpmg_context *ctx;
  tpmg_solver_options options;
  tpmg_precision q;            /* outer precision */
  int fine;                    /* the finest level */
  const tpmg_level *level;     /* this rank's box of it */
  tpmg_multigrid *mg;          /* the hierarchy of precision q, or NULL in mixed mode */
  tpmg_mixed *mixed;           /* mixed mode: the adapter around its float hierarchy */
  int restart;                 /* GMRES: in use (the requested one, or shrunk, see above) */
  int stride;                  /* GMRES: the requested restart, the row length of hessenberg */
  int left;                    /* GMRES preconditioned from the left */
  int converged;               /* the iteration's own test was met */
  int solving;                 /* inside tpmg_solver_solve (its monitor may call back) */
  long long solves;            /* solves that returned TPMG_SUCCESS (tpmg_solver_describe) */
  tpmg_solver_result last;     /* the last of them */
  size_t bytes;                /* backend memory held, the hierarchy's included */
  size_t reserve;              /* GMRES: free memory the basis leaves (SIZE_MAX: unknown) */
  int n_vectors;
  void *vectors[4];            /* outer-precision work vectors, see create */
  int n_basis;                 /* GMRES: pairs allocated, V_0..V_{n_basis-1} (and Z) */
  void **basis_v, **basis_z;   /* GMRES: stride entries each; basis_z NULL for left */
  void *check[2];              /* TPMG_ARITHMETIC_FLOAT: double x and A x for the final residual */
  double *hessenberg, *givens_c, *givens_s, *g, *y, *coef; /* GMRES, host */
};

tpmg_solver_options tpmg_solver_options_default(void) {
  tpmg_solver_options options;
  memset(&options, 0, sizeof(options));
  options.type = TPMG_SOLVER_FMG_GMRES;
  options.arithmetic = TPMG_ARITHMETIC_MIXED;
  options.smoother = TPMG_SMOOTHER_FUSED;
  options.tolerance = 1e-9;
  options.max_iterations = 100;
  options.restart = 30;
  options.preconditioning = TPMG_PRECONDITION_RIGHT;
  return options;
}

/* GMRES from the start vector, or from the FMG pass */
static int is_gmres(tpmg_solver_type type) {
  return type == TPMG_SOLVER_GMRES || type == TPMG_SOLVER_FMG_GMRES;
}

/* the FMG pass first (then V-cycles or GMRES) */
static int has_fmg_pass(tpmg_solver_type type) {
  return type == TPMG_SOLVER_FMG || type == TPMG_SOLVER_FMG_GMRES;
}

static tpmg_status check_options(tpmg_context *ctx, const tpmg_solver_options *o) {
  TPMG_CHECK(ctx, o->type >= TPMG_SOLVER_GMRES && o->type <= TPMG_SOLVER_FMG_GMRES,
             TPMG_ERROR_ARGUMENT, "unknown solver type %d", (int)o->type);
  TPMG_CHECK(ctx, o->arithmetic >= TPMG_ARITHMETIC_DOUBLE && o->arithmetic <= TPMG_ARITHMETIC_FLOAT,
             TPMG_ERROR_ARGUMENT, "unknown arithmetic %d", (int)o->arithmetic);
  TPMG_CHECK(ctx, o->smoother >= TPMG_SMOOTHER_GLOBAL && o->smoother <= TPMG_SMOOTHER_BOUNDARY,
             TPMG_ERROR_ARGUMENT, "unknown smoother variant %d", (int)o->smoother);
  TPMG_CHECK(ctx, o->tolerance > 0.0 && o->tolerance < 1.0, TPMG_ERROR_ARGUMENT,
             "tolerance %.17g: must be in (0, 1)", o->tolerance);
  TPMG_CHECK(ctx, o->max_iterations >= 1, TPMG_ERROR_ARGUMENT, "max_iterations %d: must be >= 1",
             o->max_iterations);
  TPMG_CHECK(ctx,
             !is_gmres(o->type) || (o->restart >= 1 && o->restart <= TPMG_MAX_RESTART),
             TPMG_ERROR_ARGUMENT, "restart %d: must be 1..%d", o->restart, TPMG_MAX_RESTART);
  TPMG_CHECK(ctx,
             o->preconditioning == TPMG_PRECONDITION_RIGHT ||
                 (o->preconditioning == TPMG_PRECONDITION_LEFT && is_gmres(o->type)),
             TPMG_ERROR_ARGUMENT,
             "preconditioning %d: must be TPMG_PRECONDITION_RIGHT, or TPMG_PRECONDITION_LEFT "
             "with GMRES",
             (int)o->preconditioning);
  return TPMG_SUCCESS;
}

/* Backend memory counted in s->bytes. */
static tpmg_status solver_malloc(tpmg_solver *s, size_t bytes, const char *what, void **ptr) {
  TPMG_CALL(tpmg_malloc(s->ctx, bytes, what, ptr));
  s->bytes += bytes;
  return TPMG_SUCCESS;
}

static void solver_free(tpmg_solver *s, size_t bytes, void **ptr) {
  if (!*ptr)
    return;
  tpmg_free(s->ctx, bytes, *ptr);
  s->bytes -= bytes;
  *ptr = NULL;
}

static size_t vector_bytes(const tpmg_solver *s) {
  return (size_t)s->level->n_dofs * tpmg_precision_size(s->q);
}

/* GMRES from the right: the Z_j as the V-cycle writes them, in float in mixed mode */
static tpmg_precision z_precision(const tpmg_solver *s) {
  return s->mixed ? TPMG_FLOAT : s->q;
}

static size_t z_bytes(const tpmg_solver *s) {
  return (size_t)s->level->n_dofs * tpmg_precision_size(z_precision(s));
}

/* Make GMRES basis pair j (V_j, and Z_j with right preconditioning) exist:
 * *fits = 1 if it does on every rank, else 0 (nothing changed, the message of
 * a failed allocation left in the context). Errors other than a lack of memory
 * return, on every rank. Collective. */
static tpmg_status basis_grow(tpmg_solver *s, int j, int *fits) {
  *fits = 1;
  if (j < s->n_basis)
    return TPMG_SUCCESS;
  size_t bytes = vector_bytes(s), zbytes = s->left ? 0 : z_bytes(s), pair = bytes + zbytes;
  size_t available = SIZE_MAX;
  tpmg_status status = s->ctx->ops->free_memory(s->ctx, &available);
  double here =
      status == TPMG_SUCCESS && (s->reserve == SIZE_MAX || available == SIZE_MAX ||
                                 (available >= s->reserve && available - s->reserve >= pair));
  if (here)
    status = solver_malloc(s, bytes, "GMRES basis vector", &s->basis_v[j]);
  if (here && status == TPMG_SUCCESS && !s->left)
    status = solver_malloc(s, zbytes, "GMRES basis vector", &s->basis_z[j]);
  if (status == TPMG_ERROR_MEMORY) {
    here = 0;
    status = TPMG_SUCCESS;
  }
  status = tpmg_comm_agree(s->ctx, status);
  TPMG_CALL(tpmg_comm_min(s->ctx, &here, 1)); /* one restart length on every rank */
  if (status != TPMG_SUCCESS || here == 0.0) {
    solver_free(s, bytes, &s->basis_v[j]);
    if (s->basis_z)
      solver_free(s, zbytes, &s->basis_z[j]);
    *fits = 0;
    return status;
  }
  s->n_basis = j + 1;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_solver_destroy(tpmg_solver **solver) {
  if (!solver) return TPMG_ERROR_ARGUMENT;
  tpmg_solver *s = *solver;
  if (!s) return TPMG_SUCCESS;
  TPMG_CHECK(s->ctx, !s->solving, TPMG_ERROR_ARGUMENT,
             "tpmg_solver_destroy: solver %p is inside its tpmg_solver_solve (called from its "
             "monitor?); nothing destroyed",
             (void *)s);
  size_t bytes = vector_bytes(s);
  for (int i = 0; i < s->n_vectors; ++i)
    solver_free(s, bytes, &s->vectors[i]);
  for (int i = 0; i < s->n_basis; ++i) {
    solver_free(s, bytes, &s->basis_v[i]);
    if (s->basis_z)
      solver_free(s, z_bytes(s), &s->basis_z[i]);
  }
  for (int i = 0; i < 2; ++i)
    solver_free(s, (size_t)s->level->n_dofs * sizeof(double), &s->check[i]);
  free(s->basis_v);
  free(s->basis_z);
  tpmg_mixed_destroy(&s->mixed);
  tpmg_multigrid_destroy(&s->mg);
  free(s->hessenberg);
  free(s->givens_c);
  free(s->givens_s);
  free(s->g);
  free(s->y);
  free(s->coef);
  tpmg_grid *grid = s->grid;
  free(s);
  tpmg_grid_release(grid);
  *solver = NULL;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_solver_create(tpmg_grid *grid, const tpmg_solver_options *options,
                               tpmg_solver **solver) {
  if (!grid) return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = grid->ctx;
  TPMG_CHECK(ctx, solver, TPMG_ERROR_ARGUMENT, "solver is NULL");
  tpmg_solver_options opts = options ? *options : tpmg_solver_options_default();
  /* the same numbers on every rank (the monitor may differ) */
  double same[7] = {opts.type,           opts.arithmetic, opts.smoother,       opts.tolerance,
                    opts.max_iterations, opts.restart,    opts.preconditioning};
  TPMG_CALL(tpmg_comm_same(ctx, same, sizeof(same), "the solver options"));
  TPMG_CALL(check_options(ctx, &opts));

  tpmg_solver *s = calloc(1, sizeof(*s));
  TPMG_CHECK(ctx, s, TPMG_ERROR_MEMORY, "allocating the solver failed");
  s->grid = grid;
  tpmg_grid_reference(grid);
  s->ctx = ctx;
  s->options = opts;
  s->q = opts.arithmetic == TPMG_ARITHMETIC_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE;
  s->fine = grid->n_levels - 1;
  s->level = &grid->levels[s->fine];
  s->left = opts.preconditioning == TPMG_PRECONDITION_LEFT;
  /* CG needs a symmetric V-cycle (post-smoother in reverse colour order). The
   * other solvers post-smooth in the same order as the pre-smoother, as the
   * paper's solver does: for Q1 that V-cycle contracts about 5x faster. */
  tpmg_multigrid_options mg_options = {opts.arithmetic == TPMG_ARITHMETIC_DOUBLE ? TPMG_DOUBLE
                                                                                 : TPMG_FLOAT,
                                       opts.smoother, opts.type == TPMG_SOLVER_CG};
  size_t before = tpmg_thread_memory();
  tpmg_status status;
  /* mixed: GMRES from the right keeps the float V-cycle's output as Z_j (the
   * adapter lends), mixed FMG makes its double level vectors now (its work
   * vector on the fine level is r) */
  if (opts.arithmetic == TPMG_ARITHMETIC_MIXED)
    status = tpmg_mixed_create(grid, &mg_options, NULL, is_gmres(opts.type) && !s->left,
                               has_fmg_pass(opts.type), &s->mixed);
  else
    status = tpmg_multigrid_create_hierarchy(grid, &mg_options, NULL, &s->mg);
  if (status == TPMG_SUCCESS)
    s->bytes = tpmg_thread_memory() - before;
  size_t bytes = vector_bytes(s);

  /* vectors: 0 = r; 1 = w (GMRES left, CG) or z (FMG, VCYCLE); CG: 2 = z, 3 = p.
   * GMRES from the right keeps w = A Z_j in r, which no cycle reads after
   * V_0 = r / ||r||. FMG and VCYCLE in TPMG_ARITHMETIC_MIXED need no z: the
   * adapter adds the V-cycle's result to x (tpmg_mixed_correct). GMRES: the
   * basis grows in the solves, its first pair is made here */
  int fixed = 2;
  if (opts.type == TPMG_SOLVER_CG)
    fixed = 4;
  else if (is_gmres(opts.type) ? !s->left : s->mixed != NULL) /* no w; no z */
    fixed = 1;
  int per_restart = s->left ? 1 : 2;
  s->reserve = SIZE_MAX;
  if (status == TPMG_SUCCESS && is_gmres(opts.type)) {
    size_t available = SIZE_MAX;
    status = ctx->ops->free_memory(ctx, &available);
    /* the basis leaves 5% of this for the caller and the backend */
    if (available != SIZE_MAX)
      s->reserve = available / 20;
    s->restart = s->stride = opts.restart;
  }
  for (int i = 0; i < fixed && status == TPMG_SUCCESS; ++i) {
    status = solver_malloc(s, bytes, "solver work vector", &s->vectors[i]);
    if (status == TPMG_SUCCESS) s->n_vectors = i + 1;
  }
  for (int i = 0; i < 2 && status == TPMG_SUCCESS && s->q == TPMG_FLOAT; ++i)
    status = solver_malloc(s, (size_t)s->level->n_dofs * sizeof(double), "residual check vector",
                           &s->check[i]);
  if (status == TPMG_SUCCESS && is_gmres(opts.type)) {
    int m = s->stride;
    s->hessenberg = calloc((size_t)(m + 1) * m, sizeof(double));
    s->givens_c = calloc((size_t)m, sizeof(double));
    s->givens_s = calloc((size_t)m, sizeof(double));
    s->g = calloc((size_t)m + 1, sizeof(double));
    s->y = calloc((size_t)m, sizeof(double));
    s->coef = calloc((size_t)m + 1, sizeof(double));
    s->basis_v = calloc((size_t)m, sizeof(void *));
    if (!s->left)
      s->basis_z = calloc((size_t)m, sizeof(void *));
    if (!s->hessenberg || !s->givens_c || !s->givens_s || !s->g || !s->y || !s->coef ||
        !s->basis_v || (!s->left && !s->basis_z))
      status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__, "GMRES host arrays");
  }
  /* every rank gets here, so that basis_grow's agreement is reached */
  status = tpmg_comm_agree(ctx, status);
  if (status == TPMG_SUCCESS && is_gmres(opts.type)) {
    int fits;
    status = basis_grow(s, 0, &fits);
    if (status == TPMG_SUCCESS && !fits)
      status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                              "GMRES needs %zu bytes for a restart length of 1 (%d vectors of "
                              "%zu bytes%s), with 5%% of the free memory left",
                              (size_t)(fixed + 1) * bytes + (per_restart - 1) * z_bytes(s),
                              fixed + per_restart, bytes, s->mixed ? ", Z_0 in float" : "");
  }
  if (status != TPMG_SUCCESS) {
    tpmg_solver_destroy(&s);
    return status;
  }
  *solver = s;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_solver_restart(const tpmg_solver *solver, int *restart) {
  if (!solver) return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(solver->ctx, restart, TPMG_ERROR_ARGUMENT, "restart is NULL");
  *restart = solver->restart;
  return TPMG_SUCCESS;
}

void tpmg_solver_get_state(const tpmg_solver *solver, tpmg_solver_state *state) {
  state->ctx = solver->ctx;
  state->options = solver->options;
  state->restart = solver->restart;
  state->solves = solver->solves;
  state->last = solver->last;
}

tpmg_status tpmg_solver_memory(const tpmg_solver *solver, size_t *bytes) {
  if (!solver)
    return TPMG_ERROR_ARGUMENT;
  TPMG_CHECK(solver->ctx, bytes, TPMG_ERROR_ARGUMENT, "bytes is NULL");
  *bytes = solver->bytes;
  return TPMG_SUCCESS;
}

/* ---- building blocks in the outer precision ------------------------------ */

static tpmg_status residual(tpmg_solver *s, const void *b, const void *x, void *r, double *norm) {
  tpmg_context *ctx = s->ctx;
  TPMG_CALL(tpmg_partition_laplace(s->grid, s->fine, s->q, x, r));
  TPMG_CALL(ctx->ops->axpby(ctx, s->q, s->level->n_dofs, 1.0, b, -1.0, r));
  TPMG_CALL(tpmg_partition_dot(s->grid, s->fine, s->q, r, r, norm));
  *norm = sqrt(*norm);
  return TPMG_SUCCESS;
}

/* z = V(0, r) in the outer precision */
static tpmg_status precondition(tpmg_solver *s, const void *r, void *z) {
  if (s->mixed)
    return tpmg_mixed_precondition(s->mixed, r, z);
  return tpmg_multigrid_apply(s->mg, r, z);
}

static tpmg_status norm(tpmg_solver *s, const void *v, double *result) {
  TPMG_CALL(tpmg_partition_dot(s->grid, s->fine, s->q, v, v, result));
  *result = sqrt(*result);
  return TPMG_SUCCESS;
}

/* result[i] = (x_i, y) for i < m, in one pass over the vectors per
 * TPMG_MULTI_MAX of them (the backend's (y, y) is not needed). */
static tpmg_status dots(tpmg_solver *s, int m, void *const *x, const void *y, double *result) {
  double part[TPMG_MULTI_MAX + 1];
  for (int first = 0; first < m; first += TPMG_MULTI_MAX) {
    int count = m - first < TPMG_MULTI_MAX ? m - first : TPMG_MULTI_MAX;
    TPMG_CALL(tpmg_partition_dots(s->grid, s->fine, s->q, count, (const void *const *)(x + first),
                                  y, part));
    memcpy(result + first, part, sizeof(double) * (size_t)count);
  }
  return TPMG_SUCCESS;
}

/* y += sum_{i < m} a_i x_i, the x_i in x_prec, per TPMG_MULTI_MAX vectors;
 * norm2 != NULL: the new (y, y). */
static tpmg_status axpys(tpmg_solver *s, int m, const double *a, tpmg_precision x_prec,
                         void *const *x, void *y, double *norm2) {
  for (int first = 0; first < m; first += TPMG_MULTI_MAX) {
    int count = m - first < TPMG_MULTI_MAX ? m - first : TPMG_MULTI_MAX;
    TPMG_CALL(tpmg_partition_axpys(s->grid, s->fine, s->q, count, a + first, x_prec,
                                   (const void *const *)(x + first), y,
                                   first + count == m ? norm2 : NULL));
  }
  return TPMG_SUCCESS;
}

/* Orthogonalize w against V_0..V_j by classical Gram-Schmidt, h_i = (w, V_i)
 * into column j of H, and return ||w|| after it in *h_next: one pass over the
 * vectors computes all h_i, one more updates w and its norm, 2j+5 vector
 * passes instead of modified Gram-Schmidt's 5j+6. One step, no refinement
 * (PETSc's default for its GMRES): with a V-cycle as preconditioner the new w
 * is nearly in the span of the basis in every iteration, so a test for
 * cancellation (Daniel, Gragg, Kaufman and Stewart) asks for a second pass
 * every time, which costs more passes than modified Gram-Schmidt; the
 * iteration counts of the tests and of the paper's problems equal those with
 * modified Gram-Schmidt, and the final residual is recomputed anyway. */
static tpmg_status orthogonalize(tpmg_solver *s, int j, void **V, void *w, double *h_next) {
  double *H = s->hessenberg, *c = s->coef, after;
  int ld = s->stride;
  TPMG_CALL(dots(s, j + 1, V, w, c));
  for (int i = 0; i <= j; ++i) {
    H[i * ld + j] = c[i];
    c[i] = -c[i];
  }
  TPMG_CALL(axpys(s, j + 1, c, s->q, V, w, &after));
  *h_next = sqrt(after);
  return TPMG_SUCCESS;
}

static void monitor(tpmg_solver *s, int iteration, double relative) {
  if (s->options.monitor) s->options.monitor(s->options.monitor_data, iteration, relative);
}

/* ---- the iterations ------------------------------------------------------- */

/* reference: with left preconditioning ||P (b - A x_0)|| of the caller's start
 * x_0 where the FMG pass came between (0: measure it at the start here) */
static tpmg_status gmres(tpmg_solver *s, const void *b, void *x, double bnorm, double rnorm,
                         double reference, int *iterations) {
  tpmg_context *ctx = s->ctx;
  tpmg_index n = s->level->n_dofs;
  tpmg_precision q = s->q;
  int ld = s->stride; /* of H */
  void *r = s->vectors[0], *w = s->left ? s->vectors[1] : r, **V = s->basis_v, **Z = s->basis_z;
  double *H = s->hessenberg, *cs = s->givens_c, *sn = s->givens_s, *g = s->g, *y = s->y;
  /* right: the residual r and its norm; left: z = P r, kept in w, and its norm */
  double target = s->options.tolerance * bnorm, scale = bnorm;
  if (s->left) {
    TPMG_CALL(precondition(s, r, w));
    TPMG_CALL(norm(s, w, &rnorm));
    scale = reference > 0.0 ? reference : rnorm;
    target = s->options.tolerance * scale;
  }
  int it = 0, stalled = 0;
  while (!stalled && rnorm > target && it < s->options.max_iterations) {
    int m = s->restart;
    TPMG_CALL(ctx->ops->axpby(ctx, q, n, 1.0 / rnorm, s->left ? w : r, 0.0, V[0]));
    memset(g, 0, sizeof(double) * (m + 1));
    g[0] = rnorm;
    int j = 0;
    for (; j < m; ++j) {
      if (s->left) { /* w = P A V_j */
        TPMG_CALL(tpmg_partition_laplace(s->grid, s->fine, q, V[j], r));
        TPMG_CALL(precondition(s, r, w));
      } else { /* w = A Z_j, Z_j = P V_j in its own precision */
        const void *z = Z[j];
        if (s->mixed) /* Z_j in float, A Z_j from its double copy */
          TPMG_CALL(tpmg_mixed_precondition_float(s->mixed, V[j], Z[j], &z));
        else
          TPMG_CALL(tpmg_multigrid_apply(s->mg, V[j], Z[j]));
        TPMG_CALL(tpmg_partition_laplace(s->grid, s->fine, q, z, w));
      }
      double h_next;
      TPMG_CALL(orthogonalize(s, j, V, w, &h_next));
      for (int i = 0; i < j; ++i) { /* previous rotations on column j */
        double a = H[i * ld + j], c = H[(i + 1) * ld + j];
        H[i * ld + j] = cs[i] * a + sn[i] * c;
        H[(i + 1) * ld + j] = -sn[i] * a + cs[i] * c;
      }
      double a = H[j * ld + j], d = hypot(a, h_next);
      /* Breakdown: column j is zero (the V-cycle returned zero) or not
       * finite. The cycle ends with the columns before it, and the
       * iteration with it, not converged. */
      if (!(d > 0.0 && isfinite(d))) {
        stalled = 1;
        break;
      }
      cs[j] = a / d;
      sn[j] = h_next / d;
      H[j * ld + j] = d;
      g[j + 1] = -sn[j] * g[j];
      g[j] = cs[j] * g[j];
      ++it;
      monitor(s, it, fabs(g[j + 1]) / scale);
      int done = fabs(g[j + 1]) <= target || it >= s->options.max_iterations || h_next == 0.0;
      if (!done && j + 1 < m) {
        int fits;
        TPMG_CALL(basis_grow(s, j + 1, &fits));
        if (fits)
          TPMG_CALL(ctx->ops->axpby(ctx, q, n, 1.0 / h_next, w, 0.0, V[j + 1]));
        else /* this iteration ends the cycle */
          m = s->restart = j + 1;
      }
      if (done) {
        ++j;
        break;
      }
    }
    /* y = H^{-1} g by back substitution; x += Z y (left: V y) */
    for (int i = j - 1; i >= 0; --i) {
      double sum = g[i];
      for (int p = i + 1; p < j; ++p)
        sum -= H[i * ld + p] * y[p];
      y[i] = sum / H[i * ld + i];
    }
    TPMG_CALL(axpys(s, j, y, s->left ? q : z_precision(s), s->left ? V : Z, x, NULL));
    TPMG_CALL(residual(s, b, x, r, &rnorm));
    if (s->left) {
      TPMG_CALL(precondition(s, r, w));
      TPMG_CALL(norm(s, w, &rnorm));
    }
  }
  s->converged = rnorm <= target;
  *iterations = it;
  return TPMG_SUCCESS;
}

static tpmg_status cg(tpmg_solver *s, void *x, double bnorm, double rnorm, int *iterations) {
  tpmg_context *ctx = s->ctx;
  tpmg_index n = s->level->n_dofs;
  tpmg_precision q = s->q;
  void *r = s->vectors[0], *w = s->vectors[1], *z = s->vectors[2], *p = s->vectors[3];
  double target = s->options.tolerance * bnorm, rz, zw, pw;
  int it = 0;
  TPMG_CALL(precondition(s, r, z));
  TPMG_CALL(ctx->ops->axpby(ctx, q, n, 1.0, z, 0.0, p));
  TPMG_CALL(tpmg_partition_dot(s->grid, s->fine, q, r, z, &rz));
  while (rnorm > target && it < s->options.max_iterations) {
    TPMG_CALL(tpmg_partition_laplace(s->grid, s->fine, q, p, w));
    TPMG_CALL(tpmg_partition_dot(s->grid, s->fine, q, p, w, &pw));
    /* Breakdown: (p, A p) or (r, z) not positive (or alpha not finite). Once
     * the residual is at rounding level the recursive r drifts from b - A x
     * and a float V-cycle's z need not make (r, z) positive: the iteration
     * stagnates. It ends here, not converged, x as the last step left it. */
    double alpha = rz / pw;
    if (!(pw > 0.0 && rz > 0.0 && isfinite(alpha)))
      break;
    TPMG_CALL(ctx->ops->axpby(ctx, q, n, alpha, p, 1.0, x));
    TPMG_CALL(ctx->ops->axpby(ctx, q, n, -alpha, w, 1.0, r));
    TPMG_CALL(norm(s, r, &rnorm));
    ++it;
    monitor(s, it, rnorm / bnorm);
    if (rnorm <= target) break;
    TPMG_CALL(precondition(s, r, z));
    double rz_new;
    TPMG_CALL(tpmg_partition_dot(s->grid, s->fine, q, r, z, &rz_new));
    TPMG_CALL(tpmg_partition_dot(s->grid, s->fine, q, z, w, &zw));
    /* flexible: beta = (z_new, r_new - r_old) / (z_old, r_old), r_new - r_old = -alpha w;
     * for a symmetric V-cycle it equals (z_new, r_new) / (z_old, r_old) */
    double beta = -alpha * zw / rz;
    TPMG_CALL(ctx->ops->axpby(ctx, q, n, 1.0, z, beta, p));
    rz = rz_new;
  }
  *iterations = it;
  return TPMG_SUCCESS;
}

/* Defect correction x += V(0, b - A x) until the tolerance (paper Algorithm 2,
 * lines 6-9). As there, the loop starts from delta = ||b||, so at least one
 * V-cycle runs even when the FMG pass alone reached the tolerance. */
static tpmg_status vcycles(tpmg_solver *s, const void *b, void *x, double bnorm, double rnorm,
                           int *iterations) {
  tpmg_context *ctx = s->ctx;
  void *r = s->vectors[0], *z = s->vectors[1];
  int it = 0;
  while ((it == 0 || rnorm > s->options.tolerance * bnorm) && it < s->options.max_iterations) {
    if (s->mixed) { /* x += the float V-cycle's result, as from z */
      TPMG_CALL(tpmg_mixed_correct(s->mixed, r, x));
    } else {
      TPMG_CALL(precondition(s, r, z));
      TPMG_CALL(ctx->ops->axpby(ctx, s->q, s->level->n_dofs, 1.0, z, 1.0, x));
    }
    TPMG_CALL(residual(s, b, x, r, &rnorm));
    ++it;
    monitor(s, it, rnorm / bnorm);
  }
  *iterations = it;
  return TPMG_SUCCESS;
}

/* ||b - A x|| in double, converting float vectors first. */
static tpmg_status true_residual(tpmg_solver *s, const void *b, const void *x, double *result) {
  tpmg_context *ctx = s->ctx;
  tpmg_index n = s->level->n_dofs;
  if (s->q == TPMG_DOUBLE) {
    TPMG_CALL(tpmg_partition_laplace(s->grid, s->fine, TPMG_DOUBLE, x, s->vectors[0]));
    TPMG_CALL(ctx->ops->axpby(ctx, TPMG_DOUBLE, n, 1.0, b, -1.0, s->vectors[0]));
    TPMG_CALL(
        tpmg_partition_dot(s->grid, s->fine, TPMG_DOUBLE, s->vectors[0], s->vectors[0], result));
  } else { /* A x - b: b added from float, exactly as its double copy would be */
    const double minus_one = -1.0;
    TPMG_CALL(ctx->ops->convert(ctx, n, TPMG_FLOAT, x, TPMG_DOUBLE, s->check[0]));
    TPMG_CALL(tpmg_partition_laplace(s->grid, s->fine, TPMG_DOUBLE, s->check[0], s->check[1]));
    TPMG_CALL(
        ctx->ops->axpys(ctx, TPMG_DOUBLE, n, 1, &minus_one, TPMG_FLOAT, &b, s->check[1], NULL));
    TPMG_CALL(tpmg_partition_dot(s->grid, s->fine, TPMG_DOUBLE, s->check[1], s->check[1], result));
  }
  *result = sqrt(*result);
  return TPMG_SUCCESS;
}

/* ---- the scale of b ---------------------------------------------------------
 * A solve of s b must give s x, in the same iterations, for every s the
 * format holds. A plain sum of squares over- or underflows far inside that
 * range (||b||^2 beyond 1.8e308 or below 2.2e-308), the V-cycle's
 * intermediate values sooner, and the float V-cycle of TPMG_ARITHMETIC_MIXED, which
 * sees vectors of b's size in the FMG pass, outside float's range sooner
 * still. So a b whose norm is outside [2^-R, 2^(R+1)) (R = 256 in double, 16
 * where the V-cycle runs in float: the float V-cycle then sees residuals down
 * to rounding level, 2^-16 * 1e-16, far above float's 1e-38) is solved
 * scaled: A (sigma x) = sigma b with sigma = 2^-e, e = ilogb(||b||), so that
 * ||sigma b|| is in [1, 2); x is scaled in before and out after the solve. A
 * power of two changes no rounding, unless a value under- or overflows: b of
 * ordinary size (sigma = 1) takes the same path as before, bitwise, and a
 * power-of-two s gives bitwise s x in the iterations of b. The Krylov methods
 * then see vectors near 1 too: GMRES normalizes its basis, CG's and the
 * residuals' dot products are those of b's scale.
 *
 * ||b|| is summed plainly first (the ordinary case costs nothing more: it is
 * the solve's ||b||); only where that sum overflows (inf) or may have
 * underflowed (below 2^-900) is it summed again, from 2^-544 b or 2^600 b in
 * the vector that then holds sigma b. (LAPACK's dnrm2 scales by the largest
 * entry instead, a pass of its own for every norm.) With n < 2^50 entries:
 * 2^-544 times entries below 2^1024 squares to at most 2^960; below 2^-900
 * every entry is below 2^-450, 2^150 after scaling, while entries below
 * 2^-511, whose squares underflow in the plain sum, add less than
 * 2^50 2^-1022 = 2^-972 to a sum of at least 2^-900. */
#define TPMG_SCALE_RANGE_DOUBLE 256
#define TPMG_SCALE_RANGE_FLOAT 16

/* v = a v through the work vector r (axpby's vectors must not overlap) */
static tpmg_status scale_vector(tpmg_solver *s, double a, void *v) {
  tpmg_context *ctx = s->ctx;
  tpmg_index n = s->level->n_dofs;
  TPMG_CALL(ctx->ops->axpby(ctx, s->q, n, a, v, 0.0, s->vectors[0]));
  return ctx->ops->axpby(ctx, s->q, n, 1.0, s->vectors[0], 0.0, v);
}

/* sigma (1, or the power of two above) and ||sigma b|| in bnorm; *scaled
 * NULL for sigma = 1, else a vector of the solver's (free it with
 * solver_free, vector_bytes) holding sigma b. TPMG_ERROR_ARGUMENT for a b with
 * an entry that is not finite, TPMG_ERROR_MEMORY if the vector cannot be
 * made; nothing then allocated. Collective. */
static tpmg_status scale_rhs(tpmg_solver *s, const void *b, double *sigma, double *bnorm,
                             void **scaled) {
  tpmg_context *ctx = s->ctx;
  tpmg_index n = s->level->n_dofs;
  int range = s->options.arithmetic == TPMG_ARITHMETIC_DOUBLE ? TPMG_SCALE_RANGE_DOUBLE
                                                              : TPMG_SCALE_RANGE_FLOAT;
  /* sigma within float's normal range where the solve's vectors are float
   * (axpby takes it as a float), within double's otherwise */
  int e_min = s->q == TPMG_FLOAT ? -126 : -1021, e_max = s->q == TPMG_FLOAT ? 126 : 1021;
  double bb;
  *sigma = 1.0;
  *scaled = NULL;
  TPMG_CALL(tpmg_partition_dot(s->grid, s->fine, s->q, b, b, &bb));
  /* float entries are squared and summed in double, which neither over- nor
   * underflows for them; NaN (a NaN entry) is refused below */
  int shift = 0;
  if (s->q == TPMG_DOUBLE && !isnan(bb) && !(bb >= 0x1p-900 && bb <= DBL_MAX))
    shift = bb > DBL_MAX ? -544 : 600;
  int e = shift == 0 && bb > 0.0 ? ilogb(sqrt(bb)) : 0;
  if (shift != 0 || (bb <= DBL_MAX && (e < -range || e > range))) {
    tpmg_status status = solver_malloc(s, vector_bytes(s), "solver scaled right-hand side", scaled);
    TPMG_CALL(tpmg_comm_agree(ctx, status));
    if (shift != 0) {
      status = ctx->ops->axpby(ctx, s->q, n, ldexp(1.0, shift), b, 0.0, *scaled);
      if (status == TPMG_SUCCESS)
        status = tpmg_partition_dot(s->grid, s->fine, s->q, *scaled, *scaled, &bb);
      if (status != TPMG_SUCCESS) {
        solver_free(s, vector_bytes(s), scaled);
        return status;
      }
      if (bb > 0.0 && bb <= DBL_MAX)
        e = ilogb(sqrt(bb)) - shift;
    }
  }
  if (!(bb <= DBL_MAX)) { /* NaN, or inf after scaling: an entry is not finite */
    solver_free(s, vector_bytes(s), scaled);
    return tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                          "tpmg_solver_solve: b has an entry that is not finite (||b||^2 = %g); "
                          "x unchanged",
                          bb);
  }
  if (bb == 0.0 || !*scaled) { /* b = 0, or of ordinary size: the plain sum is ||b||^2 */
    solver_free(s, vector_bytes(s), scaled);
    *bnorm = sqrt(bb);
    return TPMG_SUCCESS;
  }
  e = e < e_min ? e_min : e > e_max ? e_max : e;
  *sigma = ldexp(1.0, -e);
  tpmg_status status = ctx->ops->axpby(ctx, s->q, n, *sigma, b, 0.0, *scaled);
  if (status == TPMG_SUCCESS)
    status = norm(s, *scaled, bnorm);
  if (status != TPMG_SUCCESS)
    solver_free(s, vector_bytes(s), scaled);
  return status;
}

/* The solve of A x = b with bnorm = ||b||: b and x as tpmg_solver_solve's,
 * or scaled by it; result in their scale. */
static tpmg_status solve(tpmg_solver *s, const void *b, void *x, double bnorm,
                         tpmg_solver_result *result) {
  tpmg_context *ctx = s->ctx;
  tpmg_solver_type type = s->options.type;
  void *r = s->vectors[0];
  double rnorm;
  /* FMG from the start vector: a zero x (every entry) takes FMG's own path,
   * any other the correction's (tpmg_multigrid_fmg_from), at the cost of one
   * residual; r is free until the residual after the pass */
  double reference = 0.0;
  if (has_fmg_pass(type)) {
    /* Left GMRES measures ||P (b - A x_0)|| of the caller's start x_0 (with
     * b's Dirichlet values, in w, free until GMRES), not of the FMG pass's
     * result: that residual may already be near the tolerance times ||b||,
     * and a further reduction by the tolerance beyond rounding. */
    if (s->left && bnorm > 0.0) {
      void *w = s->vectors[1];
      TPMG_CALL(ctx->ops->axpby(ctx, s->q, s->level->n_dofs, 1.0, x, 0.0, w));
      TPMG_CALL(ctx->ops->copy_boundary(ctx, s->level, s->q, b, w));
      TPMG_CALL(residual(s, b, w, r, &rnorm));
      TPMG_CALL(precondition(s, r, w));
      TPMG_CALL(norm(s, w, &reference));
    }
    double xnorm;
    TPMG_CALL(norm(s, x, &xnorm));
    const void *r0 = NULL;
    if (xnorm != 0.0) {
      TPMG_CALL(ctx->ops->copy_boundary(ctx, s->level, s->q, b, x));
      TPMG_CALL(residual(s, b, x, r, &rnorm));
      r0 = r;
    }
    if (s->mixed) /* a lending adapter's last V-cycle writes Z_0, free until GMRES starts */
      TPMG_CALL(tpmg_mixed_fmg(s->mixed, b, r0, x, r, s->basis_z ? s->basis_z[0] : NULL));
    else
      TPMG_CALL(tpmg_multigrid_fmg_from(s->mg, b, r0, x));
  }
  TPMG_CALL(ctx->ops->copy_boundary(ctx, s->level, s->q, b, x));
  TPMG_CALL(residual(s, b, x, r, &rnorm));
  double rnorm0 = rnorm;
  int iterations = 0;
  if (bnorm > 0.0) {
    switch (type) {
    case TPMG_SOLVER_GMRES:
    case TPMG_SOLVER_FMG_GMRES:
      TPMG_CALL(gmres(s, b, x, bnorm, rnorm, reference, &iterations));
      break;
    case TPMG_SOLVER_CG:
      TPMG_CALL(cg(s, x, bnorm, rnorm, &iterations));
      break;
    case TPMG_SOLVER_FMG:
    case TPMG_SOLVER_VCYCLE:
      TPMG_CALL(vcycles(s, b, x, bnorm, rnorm, &iterations));
      break;
    }
  }
  double final_norm;
  TPMG_CALL(true_residual(s, b, x, &final_norm));
  result->iterations = iterations;
  result->residual_norm_0 = rnorm0;
  result->residual_norm = final_norm;
  result->residual_reduction = bnorm > 0.0 ? final_norm / bnorm : 0.0;
  result->converged = s->left && bnorm > 0.0 ? s->converged
                                              : final_norm <= s->options.tolerance * bnorm;
  return TPMG_SUCCESS;
}

tpmg_status tpmg_solver_solve(tpmg_solver *solver, const void *b, void *x,
                              tpmg_solver_result *result) {
  if (!solver) return TPMG_ERROR_ARGUMENT;
  tpmg_solver *s = solver;
  tpmg_context *ctx = s->ctx;
  /* a monitor's call back into this solve would share its work vectors */
  TPMG_CHECK(ctx, !s->solving, TPMG_ERROR_ARGUMENT,
             "tpmg_solver_solve: solver %p is inside its tpmg_solver_solve already (called "
             "from its monitor?); x unchanged",
             (void *)s);
  tpmg_index n = s->level->n_dofs;
  TPMG_CALL(tpmg_vector_check_pair(ctx, "tpmg_solver_solve", s->q, "b", b, n, "x", x, n));
  double sigma, bnorm;
  void *scaled;
  TPMG_CALL(scale_rhs(s, b, &sigma, &bnorm, &scaled));
  tpmg_solver_result scaled_result;
  tpmg_status status = TPMG_SUCCESS;
  if (scaled)
    status = scale_vector(s, sigma, x);
  s->solving = 1;
  if (status == TPMG_SUCCESS)
    status = solve(s, scaled ? scaled : b, x, bnorm, &scaled_result);
  s->solving = 0;
  if (scaled && status == TPMG_SUCCESS)
    status = scale_vector(s, 1.0 / sigma, x);
  solver_free(s, vector_bytes(s), &scaled);
  TPMG_CALL(status);
  scaled_result.residual_norm_0 /= sigma;
  scaled_result.residual_norm /= sigma;
  s->last = scaled_result;
  ++s->solves;
  if (result)
    *result = scaled_result;
  return TPMG_SUCCESS;
}
