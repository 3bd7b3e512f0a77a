/* A half-precision V-cycle inside the double outer iteration (issue 15,
 * item 4): how many more outer iterations does a V-cycle whose level vectors
 * are stored in bfloat16 or IEEE binary16 need than the float V-cycle of
 * TPMG_ARITHMETIC_MIXED? Public API only, CPU backend (level vectors are host
 * memory, so they are rounded in place); built by hand against a build tree
 * (doc/benchmarks.md, "A half-precision V-cycle", gives the command):
 *
 *   half-vcycle FORMAT DIM DEGREE LEVEL [THREADS [POST [SITES]]]
 *
 * FORMAT is the storage of the V-cycle's vectors:
 *   float          no rounding: the library's mixed V-cycle;
 *   bf16           every entry rounded to bfloat16 (8 bits of significand,
 *                  float's exponent range), round to nearest even;
 *   fp16           rounded to IEEE binary16 through _Float16 (11 bits of
 *                  significand, largest 65504, subnormal below 2^-14), the
 *                  residual scaled into range first: r / 2^e with
 *                  2^(e-1) <= max|r| < 2^e, the V-cycle's result scaled back
 *                  by 2^e (1/max|r| rounded to a power of two, so the
 *                  scaling itself is exact);
 *   fp16-unscaled  binary16 without that scaling;
 *   fp16-vector    binary16 with a power-of-two scale of its own for every
 *                  vector written (2^(e-1) <= max|v| < 2^e, v / 2^e stored):
 *                  the residual's scale alone lets the iterates of fine
 *                  levels overflow (x ~ A^-1 r grows like h^-dim against r on
 *                  the first V-cycle), so this idealized block-float format,
 *                  which a kernel could only approach (it learns the largest
 *                  entry of its output after writing it), separates binary16's
 *                  precision from its range.
 * The mesh is the unit square or cube of one coarse cell (tpmg-poisson's
 * default), refined LEVEL times, Q_DEGREE, with TPMG_RHS_SINE (Table 6's
 * problem). POST is the post-smoother's colour order: "forward" (default, as
 * tpmg_solver's V-cycle, FMG and GMRES solvers) or "reverse" (the symmetric
 * V-cycle of its CG). SITES: where the V-cycle rounds, "all" (default) or a
 * comma-separated list of input (the incoming residual), pre, residual,
 * restrict, coarse, prolongate, post (the post-smoother's x below the finest
 * level) and output (on the finest level: the V-cycle's result z).
 *
 * The hierarchy is built from the public building blocks in float, per level
 * l = 1..LEVEL an operator, a FUSED smoother and a transfer, and the coarse
 * solver on level 0. One coarse cell has no hidden levels below level 0
 * (tpmg_grid_create halves only even cell counts), so this hierarchy is the
 * library's. The V-cycle is tpmg-multigrid.c's (paper Algorithm 1): one
 * pre-smoothing step in forward colour order, the residual, restriction, the
 * coarser V-cycle from zero (the exact solve on level 0), prolongation added,
 * one post-smoothing step. The outer iteration is tpmg_solver's
 * TPMG_SOLVER_VCYCLE in TPMG_ARITHMETIC_MIXED: x = 0 with Dirichlet entries from b,
 * then r = b - A x in double, z = V(0, r), x += z until
 * ||r|| <= 1e-9 ||b|| or 50 V-cycles. The FORMAT float run with POST forward
 * checks that it reproduces tpmg_solver_solve's iterations and residual
 * history.
 *
 * Two approximations of a half-precision V-cycle on a GPU:
 * - rounding happens where a building block has written a vector (the
 *   incoming residual, the smoother's output, the residual, the restricted
 *   right-hand side, the prolongated iterate, the coarse solution), not
 *   inside a block: in particular a smoothing step's 2^dim colours are not
 *   rounded in between (the public API applies all colours in one call);
 * - the arithmetic inside the blocks is float, as a kernel that loads half
 *   values and computes in float would do it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tpmg-bench.h"

#define MAX_ITERATIONS 50
#define TOLERANCE 1e-9

static void check(tpmg_context *ctx, tpmg_status status, const char *what) {
  if (status == TPMG_SUCCESS)
    return;
  fprintf(stderr, "%s: status %d: %s\n", what, (int)status, tpmg_context_last_error(ctx));
  exit(1);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef enum {
  FORMAT_FLOAT,
  FORMAT_BF16,
  FORMAT_FP16,
  FORMAT_FP16_UNSCALED,
  FORMAT_FP16_VECTOR
} format;
#define N_FORMATS 5
static const char *const format_names[N_FORMATS] = {"float", "bf16", "fp16", "fp16-unscaled",
                                                    "fp16-vector"};

/* Where the V-cycle rounds, for the statistics. */
enum {
  SITE_INPUT,
  SITE_PRE,
  SITE_RESIDUAL,
  SITE_RESTRICT,
  SITE_COARSE,
  SITE_PROLONGATE,
  SITE_POST,
  SITE_OUTPUT
};
#define N_SITES 8
/* post: the post-smoother's x below the finest level; output: on it, the
 * V-cycle's result z */
static const char *const site_names[N_SITES] = {"input",  "pre",        "residual", "restrict",
                                                "coarse", "prolongate", "post",     "output"};

/* Per site: the largest magnitude stored, the entries that became infinite
 * (overflow), and the nonzero entries that became subnormal or zero in the
 * format (lost significand bits or all of them). */
typedef struct {
  double largest[N_SITES];
  long long overflow[N_SITES], subnormal[N_SITES], flushed[N_SITES];
} statistics;

static float round_bf16(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u) /* inf and NaN stay */
    return v;
  bits += 0x7fffu + ((bits >> 16) & 1u); /* to nearest, ties to even; may carry into inf */
  bits &= 0xffff0000u;
  memcpy(&v, &bits, sizeof v);
  return v;
}

static float round_fp16(float v) {
  return (float)(_Float16)v;
}

/* Rounds n floats in place to the format (nothing for float) and counts.
 * fp16-vector stores v 2^-e in binary16, 2^(e-1) <= max|v| < 2^e: v_i becomes
 * 2^e round(v_i 2^-e), both scalings exact. */
static void round_vector(format f, int site, tpmg_index n, float *v, statistics *s) {
  if (f == FORMAT_FLOAT)
    return;
  float up = 1.0f, down = 1.0f;
  if (f == FORMAT_FP16_VECTOR) {
    float largest = 0.0f;
    for (tpmg_index i = 0; i < n; ++i)
      largest = fmaxf(largest, fabsf(v[i]));
    int e = 0;
    if (largest > 0.0f && isfinite(largest))
      frexpf(largest, &e);
    up = ldexpf(1.0f, e);
    down = ldexpf(1.0f, -e);
  }
  /* the smallest normal: binary16 2^-14, bfloat16 float's own */
  const float normal = f == FORMAT_BF16 ? 0x1p-126f : 0x1p-14f;
  double largest = s->largest[site];
  long long overflow = 0, subnormal = 0, flushed = 0;
  for (tpmg_index i = 0; i < n; ++i) {
    float x = v[i] * down;
    float y = f == FORMAT_BF16 ? round_bf16(x) : round_fp16(x);
    v[i] = y * up;
    if (isinf(y) && !isinf(x))
      ++overflow;
    else if (x != 0.0f && y == 0.0f)
      ++flushed;
    else if (y != 0.0f && fabsf(y) < normal)
      ++subnormal;
    if (fabsf(v[i]) > largest)
      largest = fabsf(v[i]);
  }
  s->largest[site] = largest;
  s->overflow[site] += overflow;
  s->subnormal[site] += subnormal;
  s->flushed[site] += flushed;
}

typedef struct {
  tpmg_context *ctx;
  format f;
  int post_reverse;
  int fine;
  tpmg_index n[TPMG_MAX_FINE_LEVEL + 1];
  tpmg_operator *op[TPMG_MAX_FINE_LEVEL + 1];
  tpmg_smoother *smoother[TPMG_MAX_FINE_LEVEL + 1];
  tpmg_transfer *transfer[TPMG_MAX_FINE_LEVEL + 1]; /* from l-1 to l */
  tpmg_coarse *coarse;
  float *b[TPMG_MAX_FINE_LEVEL + 1], *x[TPMG_MAX_FINE_LEVEL + 1], *r[TPMG_MAX_FINE_LEVEL + 1];
  int rounds[N_SITES]; /* which sites round (all by default) */
  statistics stats;
} hierarchy;

static void store(hierarchy *h, int site, tpmg_index n, float *v) {
  if (h->rounds[site])
    round_vector(h->f, site, n, v, &h->stats);
}

/* x_l = V_l(0, b_l), b_l and x_l the hierarchy's vectors of level l (x_l zero
 * on entry), every vector rounded after the block that writes it. */
static void vcycle(hierarchy *h, int l) {
  tpmg_context *ctx = h->ctx;
  float *b = h->b[l], *x = h->x[l], *r = h->r[l];
  check(ctx, tpmg_smoother_apply(h->smoother[l], 0, b, x), "pre-smoothing");
  store(h, SITE_PRE, h->n[l], x);
  check(ctx, tpmg_operator_apply(h->op[l], x, r), "level operator");
  check(ctx, tpmg_vector_axpby(ctx, TPMG_FLOAT, h->n[l], 1.0, b, -1.0, r), "residual");
  store(h, SITE_RESIDUAL, h->n[l], r);
  check(ctx, tpmg_transfer_restrict(h->transfer[l], r, h->b[l - 1]), "restriction");
  store(h, SITE_RESTRICT, h->n[l - 1], h->b[l - 1]);
  if (l - 1 == 0) {
    check(ctx, tpmg_coarse_apply(h->coarse, h->b[0], h->x[0]), "coarse solve");
    store(h, SITE_COARSE, h->n[0], h->x[0]);
  } else {
    check(ctx, tpmg_vector_set(ctx, TPMG_FLOAT, h->n[l - 1], 0.0, h->x[l - 1]), "set");
    vcycle(h, l - 1);
  }
  check(ctx, tpmg_transfer_prolongate_add(h->transfer[l], h->x[l - 1], x), "prolongation");
  store(h, SITE_PROLONGATE, h->n[l], x);
  check(ctx, tpmg_smoother_apply(h->smoother[l], h->post_reverse, b, x), "post-smoothing");
  store(h, l == h->fine ? SITE_OUTPUT : SITE_POST, h->n[l], x);
}

/* x_B = b_B on the Dirichlet DoFs (the faces of the box), as tpmg_solver_solve
 * sets the start vector. */
static void copy_boundary(int dim, const tpmg_index n_1d[3], const double *b, double *x) {
  tpmg_index nz = dim == 3 ? n_1d[2] : 1;
  for (tpmg_index k = 0; k < nz; ++k)
    for (tpmg_index j = 0; j < n_1d[1]; ++j)
      for (tpmg_index i = 0; i < n_1d[0]; ++i) {
        int face = i == 0 || i == n_1d[0] - 1 || j == 0 || j == n_1d[1] - 1 ||
                   (dim == 3 && (k == 0 || k == nz - 1));
        tpmg_index at = i + n_1d[0] * (j + n_1d[1] * k);
        if (face)
          x[at] = b[at];
      }
}

typedef struct {
  int n;
  double relative[MAX_ITERATIONS + 1];
} history;

static void record(void *data, int iteration, double relative) {
  history *h = data;
  if (iteration >= 1 && iteration <= MAX_ITERATIONS)
    h->relative[iteration] = relative;
  h->n = iteration;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr,
            "usage: %s float|bf16|fp16|fp16-unscaled|fp16-vector DIM DEGREE LEVEL [THREADS "
            "[forward|reverse [SITES]]]\n"
            "SITES: all (default) or a comma-separated list of input, pre, residual, restrict, "
            "coarse, prolongate, post, output\n",
            argv[0]);
    return 2;
  }
  hierarchy h;
  memset(&h, 0, sizeof h);
  int known = 0;
  for (int f = 0; f < N_FORMATS; ++f)
    if (strcmp(argv[1], format_names[f]) == 0) {
      h.f = (format)f;
      known = 1;
    }
  if (!known) {
    fprintf(stderr, "unknown format %s\n", argv[1]);
    return 2;
  }
  tpmg_grid_options o = tpmg_grid_options_default();
  o.dim = atoi(argv[2]);
  o.degree = atoi(argv[3]);
  o.fine_level = atoi(argv[4]);
  tpmg_context_options options = tpmg_context_options_default();
  options.n_threads = argc > 5 ? atoi(argv[5]) : 1;
  if (argc > 6 && strcmp(argv[6], "forward") != 0 && strcmp(argv[6], "reverse") != 0) {
    fprintf(stderr, "unknown post-smoothing order %s\n", argv[6]);
    return 2;
  }
  h.post_reverse = argc > 6 && strcmp(argv[6], "reverse") == 0;
  char sites[256] = "all";
  if (argc > 7)
    snprintf(sites, sizeof sites, "%s", argv[7]);
  char list[256];
  memcpy(list, sites, sizeof list);
  for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
    int found = 0;
    for (int site = 0; site < N_SITES; ++site)
      if (strcmp(name, "all") == 0 || strcmp(name, site_names[site]) == 0) {
        h.rounds[site] = 1;
        found = 1;
      }
    if (!found) {
      fprintf(stderr, "unknown rounding site %s\n", name);
      return 2;
    }
  }

  tpmg_context *ctx = NULL;
  if (tpmg_context_create(&options, &ctx) != TPMG_SUCCESS) {
    fprintf(stderr, "no CPU context\n");
    return 1;
  }
  h.ctx = ctx;
  tpmg_grid *grid = NULL;
  check(ctx, tpmg_grid_create(ctx, &o, &grid), "tpmg_grid_create");
  const int L = o.fine_level;
  h.fine = L;
  tpmg_index n_1d[3];
  for (int l = 0; l <= L; ++l)
    check(ctx, tpmg_grid_level_size(grid, l, &h.n[l], l == L ? n_1d : NULL), "level size");
  const tpmg_index n = h.n[L];

  /* the float hierarchy; level L's b is the incoming residual */
  for (int l = 0; l <= L; ++l) {
    void **vectors[3] = {(void **)&h.b[l], (void **)&h.x[l], (void **)&h.r[l]};
    for (int i = 0; i < (l == 0 ? 2 : 3); ++i)
      check(ctx, tpmg_vector_create(ctx, TPMG_FLOAT, h.n[l], vectors[i]), "tpmg_vector_create");
  }
  tpmg_smoother_options smoother_options = tpmg_smoother_options_default();
  smoother_options.variant = TPMG_SMOOTHER_FUSED;
  check(ctx, tpmg_coarse_create(grid, TPMG_FLOAT, &h.coarse), "tpmg_coarse_create");
  for (int l = 1; l <= L; ++l) {
    check(ctx, tpmg_operator_create(grid, l, TPMG_FLOAT, &h.op[l]), "tpmg_operator_create");
    check(ctx, tpmg_smoother_create(grid, l, TPMG_FLOAT, &smoother_options, &h.smoother[l]),
          "tpmg_smoother_create");
    check(ctx, tpmg_transfer_create(grid, l, TPMG_FLOAT, &h.transfer[l]), "tpmg_transfer_create");
  }

  /* the double outer iteration */
  tpmg_operator *a = NULL;
  check(ctx, tpmg_operator_create(grid, L, TPMG_DOUBLE, &a), "tpmg_operator_create");
  double *b = NULL, *x = NULL, *r = NULL;
  check(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, (void **)&b), "tpmg_vector_create");
  check(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, (void **)&x), "tpmg_vector_create");
  check(ctx, tpmg_vector_create(ctx, TPMG_DOUBLE, n, (void **)&r), "tpmg_vector_create");
  tpmg_memory_type memory;
  check(ctx, tpmg_context_memory_type(ctx, &memory), "tpmg_context_memory_type");
  if (memory != TPMG_MEMORY_HOST) {
    fprintf(stderr, "the rounding needs host vectors (the CPU backend)\n");
    return 1;
  }
  check(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b), "tpmg_problem_rhs");
  copy_boundary(o.dim, n_1d, b, x);

  printf("format %s, %dD Q%d, level %d, %lld DoFs, %d thread(s), post-smoothing %s, rounding "
         "at %s\n",
         format_names[h.f], o.dim, o.degree, L, (long long)n, options.n_threads,
         h.post_reverse ? "reverse" : "forward", sites);
  double bnorm, rnorm;
  check(ctx, tpmg_vector_dot(ctx, TPMG_DOUBLE, n, b, b, &bnorm), "dot");
  bnorm = sqrt(bnorm);
  check(ctx, tpmg_operator_apply(a, x, r), "operator");
  check(ctx, tpmg_vector_axpby(ctx, TPMG_DOUBLE, n, 1.0, b, -1.0, r), "residual");
  check(ctx, tpmg_vector_dot(ctx, TPMG_DOUBLE, n, r, r, &rnorm), "dot");
  rnorm = sqrt(rnorm);
  history mine = {0, {rnorm / bnorm}};
  int best = 0;
  const double start = now();
  int it = 0;
  while ((it == 0 || rnorm > TOLERANCE * bnorm) && it < MAX_ITERATIONS && isfinite(rnorm)) {
    double scale = 1.0;
    if (h.f == FORMAT_FP16) {
      double largest = 0.0;
      for (tpmg_index i = 0; i < n; ++i)
        largest = fmax(largest, fabs(r[i]));
      int e = 0;
      if (largest > 0.0)
        frexp(largest, &e); /* largest = m 2^e, m in [0.5, 1) */
      scale = ldexp(1.0, e);
    }
    check(ctx, tpmg_vector_convert(ctx, n, TPMG_DOUBLE, r, TPMG_FLOAT, h.b[L]), "convert");
    if (scale != 1.0) {
      const float down = (float)(1.0 / scale);
      for (tpmg_index i = 0; i < n; ++i)
        h.b[L][i] *= down;
    }
    store(&h, SITE_INPUT, n, h.b[L]);
    check(ctx, tpmg_vector_set(ctx, TPMG_FLOAT, n, 0.0, h.x[L]), "set");
    vcycle(&h, L);
    const void *z = h.x[L]; /* added from float, each entry widened exactly */
    check(ctx, tpmg_vector_axpys_mixed(ctx, TPMG_DOUBLE, n, 1, &scale, TPMG_FLOAT, &z, x, NULL),
          "x += z");
    check(ctx, tpmg_operator_apply(a, x, r), "operator");
    check(ctx, tpmg_vector_axpby(ctx, TPMG_DOUBLE, n, 1.0, b, -1.0, r), "residual");
    check(ctx, tpmg_vector_dot(ctx, TPMG_DOUBLE, n, r, r, &rnorm), "dot");
    rnorm = sqrt(rnorm);
    ++it;
    mine.relative[it] = rnorm / bnorm;
    mine.n = it;
    if (mine.relative[it] < mine.relative[best])
      best = it;
    printf("  iteration %2d  ||r||/||b|| = %.6e  contraction %.4f\n", it, rnorm / bnorm,
           mine.relative[it] / mine.relative[it - 1]);
  }
  const double seconds = now() - start;
  const int converged = rnorm <= TOLERANCE * bnorm;
  double error = NAN;
  if (isfinite(rnorm))
    check(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_DOUBLE, x, &error), "L2 error");
  double mean = pow(mine.relative[it] / mine.relative[0], 1.0 / it);
  printf("%s after %d V-cycles: ||b - A x||/||b|| = %.3e, mean contraction %.4f, L2 error "
         "%.4e, %.2f s (host rounding included)\n",
         converged ? "converged" : "NOT converged", it, mine.relative[it], mean, error, seconds);
  if (!converged)
    printf("stalled: smallest ||r||/||b|| = %.3e after V-cycle %d\n", mine.relative[best], best);
  if (h.f != FORMAT_FLOAT) {
    printf("rounding (largest |v| stored, entries overflowed / subnormal / flushed to zero):\n");
    for (int s = 0; s < N_SITES; ++s)
      printf("  %-10s %.3e  %lld / %lld / %lld\n", site_names[s], h.stats.largest[s],
             h.stats.overflow[s], h.stats.subnormal[s], h.stats.flushed[s]);
  }

  /* the float run against tpmg_solver_solve's mixed V-cycle solver */
  if (h.f == FORMAT_FLOAT && !h.post_reverse) {
    tpmg_solver_options so = tpmg_solver_options_default();
    so.type = TPMG_SOLVER_VCYCLE;
    so.arithmetic = TPMG_ARITHMETIC_MIXED;
    so.smoother = TPMG_SMOOTHER_FUSED;
    so.tolerance = TOLERANCE;
    so.max_iterations = MAX_ITERATIONS;
    history library = {0, {0}};
    so.monitor = record;
    so.monitor_data = &library;
    tpmg_solver *solver = NULL;
    check(ctx, tpmg_solver_create(grid, &so, &solver), "tpmg_solver_create");
    tpmg_solver_result result;
    /* r as the solver's x: V-cycles start from it, so from zero as here */
    check(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, r), "tpmg_vector_set");
    check(ctx, tpmg_solver_solve(solver, b, r, &result), "tpmg_solver_solve");
    double worst = 0.0;
    for (int i = 1; i <= library.n && i <= mine.n; ++i)
      worst = fmax(worst, fabs(mine.relative[i] - library.relative[i]) / library.relative[i]);
    printf("check against tpmg_solver_solve (VCYCLE, MIXED): iterations %d (here %d), largest "
           "relative difference of the residual history %.3e, final reduction %.6e (here "
           "%.6e): %s\n",
           result.iterations, it, worst, result.residual_reduction, mine.relative[it],
           result.iterations == it && worst == 0.0 ? "identical" : "DIFFERENT");
    tpmg_solver_destroy(&solver);
  }
  printf("| %s | %dD Q%d | %d | %lld | %s%d | %.2e | %.3f |\n", format_names[h.f], o.dim, o.degree,
         L, (long long)n, converged ? "" : "> ", it, mine.relative[it], mean);

  tpmg_operator_destroy(&a);
  tpmg_vector_destroy(ctx, (void **)&r);
  tpmg_vector_destroy(ctx, (void **)&x);
  tpmg_vector_destroy(ctx, (void **)&b);
  for (int l = 0; l <= L; ++l) {
    tpmg_operator_destroy(&h.op[l]);
    tpmg_smoother_destroy(&h.smoother[l]);
    tpmg_transfer_destroy(&h.transfer[l]);
    tpmg_vector_destroy(ctx, (void **)&h.r[l]);
    tpmg_vector_destroy(ctx, (void **)&h.x[l]);
    tpmg_vector_destroy(ctx, (void **)&h.b[l]);
  }
  tpmg_coarse_destroy(&h.coarse);
  tpmg_grid_destroy(&grid);
  check(ctx, tpmg_context_destroy(&ctx), "tpmg_context_destroy");
  return 0;
}
