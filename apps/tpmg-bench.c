/* tpmg-bench: time the building blocks of the multigrid solver on the finest
 * level (one smoothing step per smoother variant and kernel, one operator apply
 * per kernel, one restriction + prolongation pair, one V-cycle) for a range of
 * dimensions and degrees, and compare the smoothing step and the operator with
 * the device's limits, measured in the same run. With --breakdown, split the
 * time of a GMRES solve by level and component (the paper's Figures 11-13).
 * Each time is the median of --repeat runs after one warm-up run, measured by
 * the backend's stopwatch (CUDA events on the GPU). Run `tpmg-bench --help`.
 *
 * Kernels are chosen by the backend's name: with --backend cuda every variant
 * of the CUDA backend ("cuda/basic", "cuda/constant", ...) is a column, one
 * context, grid and set of objects each; the work counts per DoF and the
 * device's limits come from the library's benchmark interface (tpmg.h). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-app-common.h"
#include "tpmg-bench.h"

#define DEFAULT_TARGET_DOFS 1e6
#define MAX_COLUMNS 6 /* kernel columns: backend names */
#define MAX_LEVELS 32 /* of a grid (fine_level <= 30) */
#define MAX_BASIS 16  /* GMRES basis vectors one pass of dots or axpys takes */

static const char *const precision_names[] = {"double", "float", NULL};
static const char *const arithmetic_names[] = {"double", "mixed", NULL};
#define N_VARIANTS 4 /* the smoother variants, in tpmg_smoother_variant order */
static const char *const variant_names[N_VARIANTS] = {"global", "separate", "fused", "boundary"};

typedef struct {
  int dim;    /* 2, 3, or 0 for both */
  int degree; /* 0 for all */
  int level;  /* 0: chosen by --dofs */
  double dofs;
  tpmg_precision precision;
  tpmg_arithmetic arithmetic; /* --breakdown: double or mixed */
  const char *backend;
  int threads;
  int repeat;
  int breakdown;
  int communication;
  app_problem mesh; /* --cells and --box (breakdown, communication); --reaction (every grid);
                       --coefficient (the building blocks) */
  app_distribution distribution; /* under mpirun */
  const char *csv;
} options;

static void print_help(void) {
  printf("Usage: tpmg-bench [options]\n"
         "Time one smoothing step (variants global, separate, fused, boundary, each with every\n"
         "kernel of the backend), one operator apply per kernel, one restriction + prolongation\n"
         "pair and one V-cycle on the finest level, per dimension and degree, and compare the\n"
         "fused smoothing step and the operator with the limits of the device measured in the\n"
         "same run. Times are medians of --repeat runs after one warm-up run.\n"
         "\n"
         "  --dim 2|3|all          dimensions (default all)\n"
         "  --degree k|all         degrees, 1..10 in 2D, 1..8 in 3D (default all)\n"
         "  --level L              finest level, >= 1, the same for every degree\n"
         "  --dofs N               per degree, the level with the DoF count nearest to N\n"
         "                         (default 1000000; excludes --level)\n"
         "  --precision double|float  arithmetic of the building blocks (default double)\n"
         "  --breakdown            instead: the time of a GMRES solve (sine solution, 1e-9)\n"
         "                         by level and component, from timed components and one\n"
         "                         timed solve\n"
         "  --arithmetic double|mixed\n"
         "                         arithmetic of the --breakdown solve (default mixed)\n"
         "  --communication        instead (under mpirun): what a rank sends per operator\n"
         "                         apply, smoothing step, V-cycle and GMRES iteration, the\n"
         "                         V-cycle's time, and a weak-scaling model for 1 to 4096\n"
         "                         ranks (latency 2 us, 10 GB/s per link, stated assumptions)\n"
         "  --cells n0,n1[,n2]     --breakdown and --communication: the coarse mesh (default\n"
         "                         one cell; needs --dim 2 or 3)\n"
         "  --box a0,b0,a1,b1,...  with them: the domain (default: unit lengths)\n"
         "  --reaction c           every grid's operator -Laplace + c, 0 <= c <= 1e30\n"
         "                         (default 0)\n"
         "  --coefficient one|step37|checkerboard:C|random:C  the building blocks' a of\n"
         "                         -div(a grad) (tpmg-poisson's; default one): step37 at the\n"
         "                         quadrature points, the others per cell; smoothers global\n"
         "                         only\n"
         "  --whole-level-dofs n   under mpirun: levels of at most n DoFs kept whole on every\n"
         "                         rank; -1: the backend's choice (default)\n"
         "  --overlap 0|1          under mpirun: the smoothers' exchanges overlapped (1,\n"
         "                         default) or completed first (0)\n"
         "  --backend NAME         where it runs (default cpu); cuda: a column for every\n"
         "                         kernel variant (cuda/basic, cuda/constant, cuda/tiled,\n"
         "                         cuda/thread, cuda/brick) and one for cuda itself; a\n"
         "                         variant name: that variant only\n"
         "  --threads n            CPU threads, 1..1024 (default: OpenMP's default)\n"
         "  --repeat n             timed runs per component, >= 1 (default 5)\n"
         "  --csv FILE             also write the results as CSV to FILE\n"
         "  --help                 print this help and exit\n"
         "\n"
         "Exit status: 0 success, 1 library error or unwritable output (--csv, stdout),\n"
         "2 bad option.\n");
}

/* ---- the mesh of --breakdown and --communication ---------------------------- */

/* The finest level of (dim, k): --level, else the one nearest to --dofs on
 * the --cells mesh. */
static int mesh_level(const options *o, int dim, int k) {
  int cells[3] = {1, 1, 1};
  for (int d = 0; d < o->mesh.n_cells; ++d)
    cells[d] = o->mesh.cells[d];
  return o->level ? o->level : app_choose_level(dim, k, cells, o->dofs);
}

/* The grid of (dim, k, level) on the --cells mesh and --box domain, checked as
 * tpmg-poisson checks them (a usage error exits on every rank alike). */
static tpmg_grid_options mesh_grid_options(const options *o, int dim, int k, int level) {
  app_problem p = o->mesh;
  p.dim = dim;
  p.degree = k;
  p.level = level;
  app_problem_finish(&p, o->dofs);
  return app_problem_grid_options(&p);
}

static options parse_options(int argc, char **argv) {
  options o = {.dofs = DEFAULT_TARGET_DOFS,
               .repeat = 5,
               .arithmetic = TPMG_ARITHMETIC_MIXED,
               .mesh = app_problem_default(),
               .distribution = app_distribution_default()};
  app_machine machine = app_machine_default();
  int dofs_given = 0;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (app_option_is(arg, "--help")) {
      app_help_exit(print_help);
    } else if (app_option_is(arg, "--dim")) {
      const char *text = app_option_value(argc, argv, &i, "--dim");
      o.dim = strcmp(text, "all") == 0 ? 0 : app_parse_int("--dim", text, 2, 3);
    } else if (app_option_is(arg, "--degree")) {
      const char *text = app_option_value(argc, argv, &i, "--degree");
      o.degree = strcmp(text, "all") == 0 ? 0 : app_parse_int("--degree", text, 1, INT_MAX);
    } else if (app_option_is(arg, "--level")) {
      o.level = app_parse_int("--level", app_option_value(argc, argv, &i, "--level"), 1,
                              TPMG_MAX_FINE_LEVEL);
    } else if (app_option_is(arg, "--dofs")) {
      o.dofs = app_parse_positive("--dofs", app_option_value(argc, argv, &i, "--dofs"));
      dofs_given = 1;
    } else if (app_option_is(arg, "--precision")) {
      o.precision = app_parse_choice("--precision", app_option_value(argc, argv, &i, "--precision"),
                                     precision_names);
    } else if (app_option_is(arg, "--arithmetic")) {
      o.arithmetic = app_parse_choice(
          "--arithmetic", app_option_value(argc, argv, &i, "--arithmetic"), arithmetic_names);
    } else if (app_option_is(arg, "--breakdown")) {
      app_option_flag(arg, "--breakdown");
      o.breakdown = 1;
    } else if (app_option_is(arg, "--communication")) {
      app_option_flag(arg, "--communication");
      o.communication = 1;
    } else if (app_machine_option(argc, argv, &i, &machine) ||
               app_distribution_option(argc, argv, &i, &o.distribution)) {
      continue;
    } else if ((app_option_is(arg, "--cells") || app_option_is(arg, "--box")) &&
               app_problem_option(argc, argv, &i, &o.mesh)) {
      continue;
    } else if (app_option_is(arg, "--coefficient")) {
      app_problem given = app_problem_default();
      app_problem_option(argc, argv, &i, &given);
      o.mesh.coefficient = given.coefficient;
      o.mesh.contrast = given.contrast;
    } else if (app_option_is(arg, "--reaction")) {
      o.mesh.reaction = app_parse_closed_interval(
          "--reaction", app_option_value(argc, argv, &i, "--reaction"), 0.0, TPMG_MAX_REACTION);
    } else if (app_option_is(arg, "--repeat")) {
      o.repeat =
          app_parse_int("--repeat", app_option_value(argc, argv, &i, "--repeat"), 1, INT_MAX);
    } else if (app_option_is(arg, "--csv")) {
      o.csv = app_option_value(argc, argv, &i, "--csv");
      if (o.csv[0] == '\0')
        app_usage_error("--csv needs a file name");
    } else {
      app_usage_error("unknown option '%.200s' (see --help)", arg);
    }
  }
  o.backend = machine.backend ? machine.backend : "cpu";
  o.threads = machine.threads;
  if (dofs_given && o.level)
    app_usage_error("--level and --dofs exclude each other");
  if (o.breakdown && o.communication)
    app_usage_error("--breakdown and --communication exclude each other");
  if (o.mesh.coefficient != APP_COEFFICIENT_ONE && (o.breakdown || o.communication))
    app_usage_error("--coefficient: with the building blocks only, not with %s",
                    o.breakdown ? "--breakdown" : "--communication");
  if (o.mesh.first && !(o.breakdown || o.communication))
    app_usage_error("%s: only with --breakdown or --communication", o.mesh.first);
  if (o.mesh.first && o.dim == 0)
    app_usage_error("%s: needs --dim 2 or 3", o.mesh.first);
  for (int k = 1; o.mesh.first && k <= app_max_degree(o.dim); ++k)
    if (!o.degree || o.degree == k) /* the mesh's checks, before any output */
      (void)mesh_grid_options(&o, o.dim, k, mesh_level(&o, o.dim, k));
  int dim = o.dim == 2 ? 2 : 3;
  if (o.degree > app_max_degree(dim))
    app_usage_error("--degree %d: must be 1..%d for dim %d%s", o.degree, app_max_degree(dim), dim,
                    o.dim == 0 ? " (use --dim 2)" : "");
  /* every row's finest level within the index type (tpmg_grid_create's
   * bound), refused before any output: sizes in double, no conversion */
  for (int d = 2; d <= 3; ++d)
    for (int k = 1; k <= app_max_degree(d) && (!o.dim || o.dim == d); ++k) {
      if (o.degree && o.degree != k)
        continue;
      int cells[3] = {1, 1, 1};
      for (int c = 0; c < o.mesh.n_cells; ++c)
        cells[c] = o.mesh.cells[c];
      int level = mesh_level(&o, d, k);
      double n = app_level_dofs(d, k, cells, level);
      if (n * sizeof(double) >= 0x1p62) {
        if (o.level)
          app_usage_error("--level %d: %dD Q%d has %.3g DoFs there, more than a vector can index",
                          level, d, k, n);
        app_usage_error("--dofs %g: the nearest level of %dD Q%d, %d, has %.3g DoFs, more than a "
                        "vector can index",
                        o.dofs, d, k, level, n);
      }
    }
  return o;
}

/* ---- --csv ------------------------------------------------------------------ */

/* Rank 0 writes the CSV file (csv is NULL on the other ranks); after each
 * piece every rank calls this: rank 0 flushes the file (and closes it if
 * `closing`), and the ranks agree on its first failure, which every rank
 * reports (if `report`) as one line naming the file. Returns 0 or
 * APP_EXIT_LIBRARY. */
static int csv_written(FILE *csv, const char *path, int closing, int report) {
  int error = 0;
  if (csv) {
    errno = 0;
    if (fflush(csv) != 0 || ferror(csv))
      error = errno ? errno : EIO;
    if (closing && fclose(csv) != 0 && !error)
      error = errno ? errno : EIO;
  }
  error = (int)app_mpi_max(error);
  if (error && report)
    fprintf(stderr, "tpmg-bench: --csv %s: writing it failed: %s\n", path, strerror(error));
  return error ? APP_EXIT_LIBRARY : 0;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---- timing ------------------------------------------------------------- */

/* Return a failed status (its message is in the context). */
#define TPMG_BENCH_CALL(expr)                                                                      \
  do {                                                                                             \
    tpmg_status bench_status_ = (expr);                                                            \
    if (bench_status_ != TPMG_SUCCESS)                                                             \
      return bench_status_;                                                                        \
  } while (0)

/* What one timed run does. */
typedef tpmg_status (*run_fn)(void *arg);

/* Median seconds of `repeat` runs after one warm-up run, each run between two
 * stopwatch marks (on the GPU, CUDA events on the context's stream); under
 * mpirun each run's time is the slowest rank's. */
static tpmg_status time_median(tpmg_context *ctx, run_fn fn, void *arg, int repeat, double *times,
                               double *median) {
  tpmg_status status = fn(arg);
  for (int rep = 0; rep < repeat && status == TPMG_SUCCESS; ++rep) {
    status = tpmg_context_stopwatch(ctx, 1, NULL);
    if (status == TPMG_SUCCESS)
      status = fn(arg);
    if (status == TPMG_SUCCESS)
      status = tpmg_context_stopwatch(ctx, 0, &times[rep]);
  }
  if (status != TPMG_SUCCESS)
    return status;
  for (int rep = 0; rep < repeat; ++rep)
    times[rep] = app_mpi_max(times[rep]); /* under mpirun: the slowest rank's */
  qsort(times, (size_t)repeat, sizeof *times, compare_doubles);
  *median = repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
  return TPMG_SUCCESS;
}

/* ---- the device's limits -------------------------------------------------- */

typedef struct {
  double copy;     /* device-to-device copy, bytes read + written per second */
  double shared;   /* shared-memory loads, bytes/s */
  double flops[2]; /* FMA throughput, flop/s, by tpmg_precision */
  int measured;
} limits;

typedef struct {
  tpmg_context *ctx;
  tpmg_index n;
  void *src, *dst;
} copy_run;

static tpmg_status run_copy(void *arg) {
  copy_run *c = arg;
  return tpmg_vector_convert(c->ctx, c->n, TPMG_DOUBLE, c->src, TPMG_DOUBLE, c->dst);
}

/* The bandwidth of a copy of doubles and, where the backend has them, its loop
 * measurements. */
static tpmg_status measure_limits(tpmg_context *ctx, int repeat, double *times, limits *out) {
  memset(out, 0, sizeof(*out));
  out->shared = out->flops[0] = out->flops[1] = NAN;
  tpmg_memory_type memory = TPMG_MEMORY_HOST;
  TPMG_BENCH_CALL(tpmg_context_memory_type(ctx, &memory));
  /* 2 GiB each way on a GPU (many times its L2), 32 MiB on the CPU */
  copy_run c = {ctx, (tpmg_index)1 << (memory == TPMG_MEMORY_DEVICE ? 28 : 22), NULL, NULL};
  tpmg_status status = tpmg_vector_create(ctx, TPMG_DOUBLE, c.n, &c.src);
  if (status == TPMG_SUCCESS)
    status = tpmg_vector_create(ctx, TPMG_DOUBLE, c.n, &c.dst);
  if (status == TPMG_SUCCESS)
    status = tpmg_vector_set(ctx, TPMG_DOUBLE, c.n, 1.5, c.src);
  double seconds = NAN;
  if (status == TPMG_SUCCESS)
    status = time_median(ctx, run_copy, &c, repeat, times, &seconds);
  out->copy = 2.0 * 8.0 * (double)c.n / seconds;
  tpmg_vector_destroy(ctx, &c.src);
  tpmg_vector_destroy(ctx, &c.dst);
  if (status != TPMG_SUCCESS)
    return status;
  tpmg_device_limits device;
  TPMG_BENCH_CALL(tpmg_context_measure_limits(ctx, &device));
  out->shared = device.shared_bytes;
  out->flops[TPMG_DOUBLE] = device.flops_double;
  out->flops[TPMG_FLOAT] = device.flops_float;
  out->measured = !isnan(device.flops_double); /* the CPU measures no shared memory */
  return TPMG_SUCCESS;
}

/* ---- building blocks ------------------------------------------------------ */

/* The kernel columns: one backend name each. With --backend cuda every
 * variant of the CUDA backend; the plain name's smoother only for GLOBAL (its
 * other smoothers repeat a variant's kernels; GLOBAL's residual then takes
 * the fastest operator). Another name is one column of its own. */
typedef struct {
  const char *backend; /* the context's name */
  const char *title;   /* CSV: the kernel part of the column names */
  char letter;         /* terminal */
  int smooth;          /* 0: no smoother columns, 1: every variant, 2: GLOBAL only */
  int apply;           /* an operator column */
} column;

static const column cuda_columns[] = {
    {"cuda/basic", "basic", 'B', 1, 1}, {"cuda/constant", "constant", 'C', 1, 1},
    {"cuda/tiled", "tiled", 'L', 1, 1}, {"cuda/thread", "thread", 'T', 1, 1},
    {"cuda/brick", "brick", 'K', 0, 1}, {"cuda", "default", 'D', 2, 0}};

typedef struct {
  int n;
  column c[MAX_COLUMNS];
} column_list;

static column_list columns_of(const char *backend) {
  column_list l;
  if (strcmp(backend, "cuda") == 0) {
    l.n = (int)(sizeof(cuda_columns) / sizeof(cuda_columns[0]));
    memcpy(l.c, cuda_columns, sizeof(cuda_columns));
  } else {
    const char *slash = strchr(backend, '/');
    column one = {backend, slash ? slash + 1 : "default", 'D', 1, 1};
    l.n = 1;
    l.c[0] = one;
  }
  return l;
}

/* The components of a row: per smoother variant the columns with smoother
 * kernels, the columns with an operator, P+R, V-cycle. index[v][c] is the
 * component of variant v (N_VARIANTS: the operator) and column c, or -1. */
#define MAX_COMPONENTS ((N_VARIANTS + 1) * MAX_COLUMNS + 2)

typedef struct {
  int n;
  int index[N_VARIANTS + 1][MAX_COLUMNS];
  int first[N_VARIANTS + 1], count[N_VARIANTS + 1]; /* of each variant's components */
  char names[MAX_COMPONENTS][40];                   /* CSV */
  char titles[MAX_COMPONENTS][12];                  /* terminal */
} component_list;

static component_list components_of(const column_list *cl) {
  component_list c;
  c.n = 0;
  for (int v = 0; v <= N_VARIANTS; ++v) {
    const int smooth = v < N_VARIANTS;
    const char *what = smooth ? variant_names[v] : "apply";
    c.first[v] = c.n;
    for (int k = 0; k < cl->n; ++k) {
      const column *col = &cl->c[k];
      const int used =
          smooth ? col->smooth == 1 || (col->smooth == 2 && v == TPMG_SMOOTHER_GLOBAL) : col->apply;
      c.index[v][k] = used ? c.n : -1;
      if (!used)
        continue;
      snprintf(c.names[c.n], sizeof(c.names[0]), "%s%s_%s", smooth ? "smooth_" : "", what,
               col->title);
      snprintf(c.titles[c.n], sizeof(c.titles[0]), "%.4s-%c", smooth ? what : "appl", col->letter);
      c.n++;
    }
    c.count[v] = c.n - c.first[v];
  }
  snprintf(c.names[c.n], sizeof(c.names[0]), "transfer");
  snprintf(c.titles[c.n++], sizeof(c.titles[0]), "P+R");
  snprintf(c.names[c.n], sizeof(c.names[0]), "vcycle");
  snprintf(c.titles[c.n++], sizeof(c.titles[0]), "V-cycle");
  return c;
}

/* The objects of one column of a benchmark row, destroyed by column_destroy;
 * the transfer and the V-cycle only for the context named by --backend. */
typedef struct {
  tpmg_context *ctx;
  tpmg_precision precision;
  tpmg_grid *grid;
  tpmg_smoother *smoother[N_VARIANTS];
  tpmg_operator *op;
  tpmg_smoother *current;
  tpmg_transfer *transfer;
  tpmg_multigrid *mg;
  void *b, *x, *y, *coarse;
} column_objects;

static void column_destroy(column_objects *w) {
  tpmg_vector_destroy(w->ctx, &w->coarse);
  tpmg_vector_destroy(w->ctx, &w->y);
  tpmg_vector_destroy(w->ctx, &w->x);
  tpmg_vector_destroy(w->ctx, &w->b);
  tpmg_multigrid_destroy(&w->mg);
  tpmg_transfer_destroy(&w->transfer);
  tpmg_operator_destroy(&w->op);
  for (int v = 0; v < N_VARIANTS; ++v)
    tpmg_smoother_destroy(&w->smoother[v]);
  tpmg_grid_destroy(&w->grid);
}

/* The smoothers and the V-cycle iterate on x in place; the transfer restricts
 * the fixed b and adds its prolongation to y, so no value grows faster than
 * linearly over the runs. */
static tpmg_status run_smooth(void *arg) {
  column_objects *w = arg;
  return tpmg_smoother_apply(w->current, 0, w->b, w->x);
}

static tpmg_status run_apply(void *arg) {
  column_objects *w = arg;
  return tpmg_operator_apply(w->op, w->b, w->y);
}

static tpmg_status run_transfer(void *arg) {
  column_objects *w = arg;
  tpmg_status status = tpmg_transfer_restrict(w->transfer, w->b, w->coarse);
  return status ? status : tpmg_transfer_prolongate_add(w->transfer, w->coarse, w->y);
}

static tpmg_status run_vcycle(void *arg) {
  column_objects *w = arg;
  return tpmg_multigrid_vcycle(w->mg, w->b, w->x);
}

#define COLUMN_CALL(w, call)                                                                       \
  do {                                                                                             \
    tpmg_status column_status_ = (call);                                                           \
    if (column_status_ != TPMG_SUCCESS) {                                                          \
      app_library_error((w)->ctx, #call, column_status_);                                          \
      column_destroy(w);                                                                           \
      return column_status_;                                                                       \
    }                                                                                              \
  } while (0)

/* What a row measured: seconds per component (NAN where a column has no
 * kernel for the degree) and the work per DoF of each column's kernels. */
typedef struct {
  tpmg_index n_dofs;
  double seconds[MAX_COMPONENTS];
  tpmg_work smooth[N_VARIANTS][MAX_COLUMNS], apply[MAX_COLUMNS];
} row_result;

/* Time the components of column `col` of one (dim, degree, level) on its
 * context; `main`: also the transfer and the V-cycle. A smoother or operator
 * the column's backend refuses for the degree (TPMG_ERROR_UNSUPPORTED) leaves
 * NAN. */
static tpmg_status bench_column(tpmg_context *ctx, const options *o, const component_list *comp,
                                int col, int main_column, int dim, int degree, int level,
                                double *times, row_result *r) {
  column_objects w = {.ctx = ctx, .precision = o->precision};
  tpmg_grid_options grid_options = tpmg_grid_options_default();
  grid_options.dim = dim;
  grid_options.degree = degree;
  grid_options.fine_level = level;
  grid_options.reaction = o->mesh.reaction;
  COLUMN_CALL(&w, tpmg_grid_create(ctx, &grid_options, &w.grid));
  COLUMN_CALL(&w, app_problem_set_coefficient(&o->mesh, w.grid));
  tpmg_index n_coarse = 0;
  COLUMN_CALL(&w, tpmg_grid_level_size(w.grid, level, &r->n_dofs, NULL));
  COLUMN_CALL(&w, tpmg_grid_level_size(w.grid, level - 1, &n_coarse, NULL));
  COLUMN_CALL(&w, tpmg_vector_create(ctx, w.precision, r->n_dofs, &w.b));
  COLUMN_CALL(&w, tpmg_vector_create(ctx, w.precision, r->n_dofs, &w.x));
  COLUMN_CALL(&w, tpmg_vector_create(ctx, w.precision, r->n_dofs, &w.y));
  COLUMN_CALL(&w, tpmg_vector_create(ctx, w.precision, n_coarse, &w.coarse));
  app_problem problem = o->mesh; /* its sine problem, or f = 1 for a checkerboard */
  problem.rhs = o->mesh.coefficient == APP_COEFFICIENT_CHECKERBOARD ? TPMG_RHS_ONE : TPMG_RHS_SINE;
  COLUMN_CALL(&w, app_problem_rhs(&problem, w.grid, w.precision, w.b));
  COLUMN_CALL(&w, tpmg_vector_axpby(ctx, w.precision, r->n_dofs, 0.5, w.b, 0.0, w.x));
  for (int v = 0; v < N_VARIANTS; ++v) {
    const int c = comp->index[v][col];
    if (c < 0)
      continue;
    tpmg_smoother_options smoother_options = tpmg_smoother_options_default();
    smoother_options.variant = (tpmg_smoother_variant)v;
    tpmg_status status =
        tpmg_smoother_create(w.grid, level, w.precision, &smoother_options, &w.smoother[v]);
    if (status == TPMG_ERROR_UNSUPPORTED)
      continue;
    COLUMN_CALL(&w, status);
    COLUMN_CALL(&w, tpmg_smoother_work(w.smoother[v], &r->smooth[v][col]));
    w.current = w.smoother[v];
    COLUMN_CALL(&w, time_median(ctx, run_smooth, &w, o->repeat, times, &r->seconds[c]));
  }
  const int c = comp->index[N_VARIANTS][col];
  if (c >= 0) {
    tpmg_status status = tpmg_operator_create(w.grid, level, w.precision, &w.op);
    if (status != TPMG_ERROR_UNSUPPORTED) {
      COLUMN_CALL(&w, status);
      COLUMN_CALL(&w, tpmg_operator_work(w.op, &r->apply[col]));
      COLUMN_CALL(&w, time_median(ctx, run_apply, &w, o->repeat, times, &r->seconds[c]));
    }
  }
  if (main_column) {
    tpmg_multigrid_options mg_options = tpmg_multigrid_options_default();
    mg_options.precision = w.precision;
    if (o->mesh.coefficient != APP_COEFFICIENT_ONE) /* the only smoother there */
      mg_options.smoother = TPMG_SMOOTHER_GLOBAL;
    COLUMN_CALL(&w, tpmg_transfer_create(w.grid, level, w.precision, &w.transfer));
    COLUMN_CALL(&w, time_median(ctx, run_transfer, &w, o->repeat, times, &r->seconds[comp->n - 2]));
    /* a variant without smoother kernels for the degree has no V-cycle */
    tpmg_status status = tpmg_multigrid_create(w.grid, &mg_options, &w.mg);
    if (status != TPMG_ERROR_UNSUPPORTED) {
      COLUMN_CALL(&w, status);
      COLUMN_CALL(&w, time_median(ctx, run_vcycle, &w, o->repeat, times, &r->seconds[comp->n - 1]));
    }
  }
  column_destroy(&w);
  return TPMG_SUCCESS;
}

/* The column of the fastest component of variant v (N_VARIANTS: the
 * operator), or -1. */
static int fastest(const component_list *comp, const column_list *cl, const row_result *r, int v) {
  int best = -1;
  for (int k = 0; k < cl->n; ++k) {
    const int c = comp->index[v][k];
    if (c >= 0 && !isnan(r->seconds[c]) &&
        (best < 0 || r->seconds[c] < r->seconds[comp->index[v][best]]))
      best = k;
  }
  return best;
}

/* Seconds of the fastest component of variant v, NAN if none ran. */
static double fastest_seconds(const component_list *comp, const column_list *cl,
                              const row_result *r, int v) {
  const int k = fastest(comp, cl, r, v);
  return k < 0 ? NAN : r->seconds[comp->index[v][k]];
}

static void print_header(const options *o, const component_list *comp, FILE *csv) {
  printf("throughput in GDoF/s (n_dofs / time) of one smoothing step (glob, sepa, fuse, boun),\n"
         "one operator apply (appl), one restriction + prolongation, one V-cycle; kernels by\n"
         "backend name: B cuda/basic, C cuda/constant, L cuda/tiled (lines per thread), T\n"
         "cuda/thread, K cuda/brick (the operator), D the name given (CUDA: GLOBAL only, its\n"
         "residual by the fastest operator); a kernel a degree lacks: -\n");
  if (o->mesh.reaction != 0.0)
    printf("operator -Laplace + %g (a reaction term)\n", o->mesh.reaction);
  if (o->mesh.coefficient != APP_COEFFICIENT_ONE) {
    char name[64];
    printf("coefficient %s (%s; smoothers: global only)\n",
           app_problem_coefficient_name(&o->mesh, name, sizeof name),
           o->mesh.coefficient == APP_COEFFICIENT_STEP37 ? "at the quadrature points" : "per cell");
  }
  printf("%3s %2s %3s %11s", "dim", "k", "lvl", "n_dofs");
  for (int c = 0; c < comp->n; ++c)
    printf(" %9s", comp->titles[c]);
  printf("\n");
  fflush(stdout);
  if (!csv)
    return;
  fprintf(csv, "dim,degree,level,n_dofs,precision,backend,threads,repeat,reaction");
  for (int c = 0; c < comp->n; ++c)
    fprintf(csv, ",%s_ms", comp->names[c]);
  for (int c = 0; c < comp->n; ++c)
    fprintf(csv, ",%s_gdofs", comp->names[c]);
  fprintf(csv, ",fused_flops_per_dof,fused_shared_bytes_per_dof,fused_matrix_bytes_per_dof,"
               "fused_dram_bytes_per_dof,apply_flops_per_dof,apply_shared_bytes_per_dof,"
               "fused_best,fused_best_fp_fraction,fused_best_shared_fraction,"
               "fused_best_dram_fraction,fused_over_global,apply_best,apply_best_fp_fraction,"
               "limit_copy_bytes,limit_shared_bytes,limit_flops,boundary_dram_bytes_per_dof,"
               "boundary_best,boundary_over_fused,coefficient\n");
}

static int run_building_blocks(tpmg_context *const *contexts, int main_column, const options *o,
                               FILE *csv, double *times, const limits *lim, int n_dims,
                               const int *dims, int degrees[2][10], const int *n_degrees,
                               int n_rows) {
  const column_list cl = columns_of(o->backend);
  const component_list comp = components_of(&cl);
  const size_t word = o->precision == TPMG_DOUBLE ? 8 : 4;
  const double nan_work = NAN;
  const tpmg_work none = {"-", nan_work, nan_work, nan_work, nan_work};
  int threads = 1;
  tpmg_context_threads(contexts[main_column], &threads);
  print_header(o, &comp, csv);
  if (o->csv && csv_written(csv, o->csv, 0, 1))
    return APP_EXIT_LIBRARY;
  /* the roof table is printed after the rate table */
  char roof_lines[32][256];
  int n_roof = 0, done = 0;
  for (int di = 0; di < n_dims; ++di) {
    int dim = dims[di];
    int cells[3] = {1, 1, 1};
    for (int ki = 0; ki < n_degrees[di]; ++ki) {
      int k = degrees[di][ki];
      int level = o->level ? o->level : app_choose_level(dim, k, cells, o->dofs);
      char group[32];
      fprintf(stderr, "tpmg-bench: [%d/%d] %dD Q%d level %d (%s DoFs)\n", ++done, n_rows, dim, k,
              level, app_group_count(app_level_dofs(dim, k, cells, level), group));
      row_result r;
      for (int c = 0; c < MAX_COMPONENTS; ++c)
        r.seconds[c] = NAN;
      for (int col = 0; col < cl.n; ++col) {
        r.apply[col] = none;
        for (int v = 0; v < N_VARIANTS; ++v)
          r.smooth[v][col] = none;
        if (bench_column(contexts[col], o, &comp, col, col == main_column, dim, k, level, times,
                         &r) != TPMG_SUCCESS)
          return APP_EXIT_LIBRARY;
      }
      const double n = (double)r.n_dofs;
      printf("%3d %2d %3d %11lld", dim, k, level, (long long)r.n_dofs);
      for (int c = 0; c < comp.n; ++c) {
        if (isnan(r.seconds[c]))
          printf(" %9s", "-");
        else
          printf(" %9.3f", 1e-9 * n / r.seconds[c]);
      }
      printf("\n");
      fflush(stdout);
      /* the fastest fused smoothing step and operator against the roofs, with
       * the work of the kernels that ran them */
      const int bf = fastest(&comp, &cl, &r, TPMG_SMOOTHER_FUSED),
                bb = fastest(&comp, &cl, &r, TPMG_SMOOTHER_BOUNDARY),
                ba = fastest(&comp, &cl, &r, N_VARIANTS);
      const double sf = fastest_seconds(&comp, &cl, &r, TPMG_SMOOTHER_FUSED),
                   sg = fastest_seconds(&comp, &cl, &r, TPMG_SMOOTHER_GLOBAL),
                   sb = fastest_seconds(&comp, &cl, &r, TPMG_SMOOTHER_BOUNDARY),
                   sa = fastest_seconds(&comp, &cl, &r, N_VARIANTS);
      const tpmg_work wf = bf < 0 ? none : r.smooth[TPMG_SMOOTHER_FUSED][bf],
                      wb = bb < 0 ? none : r.smooth[TPMG_SMOOTHER_BOUNDARY][bb],
                      wa = ba < 0 ? none : r.apply[ba];
      const double rate_f = n / sf, rate_a = n / sa;
      /* shared memory: the intermediate tensors, and the matrix entries of
       * kernels that load them */
      const double smem_f = word * (wf.shared_words + wf.matrix_words);
      const double fp = lim->measured ? lim->flops[o->precision] : NAN;
      const double fp_f = rate_f * wf.flops / fp, sh_f = rate_f * smem_f / lim->shared,
                   dr_f = rate_f * wf.memory_words * word / lim->copy;
      const double fp_a = wa.flops * rate_a / fp;
      if (n_roof < 32)
        snprintf(roof_lines[n_roof++], sizeof(roof_lines[0]),
                 "%3d %2d %-8s %7.2f %7.0f %7.0f %5.1f%% %7.2f %5.1f%% %5.1f%% %5.2f | %-8s %7.2f "
                 "%5.2f | %-8s %7.2f %6.0f %5.1f%%",
                 dim, k, wf.kernel, 1e-9 * rate_f, wf.flops, smem_f, 100 * fp_f,
                 1e-12 * rate_f * smem_f, 100 * sh_f, 100 * dr_f, sg / sf, wb.kernel, 1e-9 * n / sb,
                 sf / sb, wa.kernel, 1e-9 * rate_a, wa.flops, 100 * fp_a);
      if (csv) {
        char coefficient[64];
        fprintf(csv, "%d,%d,%d,%lld,%s,%s,%d,%d,%.17g", dim, k, level, (long long)r.n_dofs,
                precision_names[o->precision], o->backend, threads, o->repeat, o->mesh.reaction);
        for (int c = 0; c < comp.n; ++c)
          isnan(r.seconds[c]) ? fprintf(csv, ",") : fprintf(csv, ",%.6g", 1e3 * r.seconds[c]);
        for (int c = 0; c < comp.n; ++c)
          isnan(r.seconds[c]) ? fprintf(csv, ",") : fprintf(csv, ",%.6g", 1e-9 * n / r.seconds[c]);
        fprintf(csv,
                ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%.4g,%.4g,%.4g,%.4g,%s,%.4g,%.4g,%.4g,%.4g,"
                "%.6g,%s,%.4g,%s\n",
                wf.flops, word * wf.shared_words, word * wf.matrix_words, word * wf.memory_words,
                wa.flops, word * wa.shared_words, wf.kernel, fp_f, sh_f, dr_f, sg / sf, wa.kernel,
                fp_a, lim->copy, lim->shared, fp, word * wb.memory_words, wb.kernel, sf / sb,
                app_problem_coefficient_name(&o->mesh, coefficient, sizeof coefficient));
      }
      if (o->csv && csv_written(csv, o->csv, 0, 1))
        return APP_EXIT_LIBRARY;
    }
  }
  printf("\nthe fastest fused smoothing step and operator against the roofs (counted work per "
         "DoF\nof the kernels that ran them, tpmg_smoother_work and tpmg_operator_work; smem:\n"
         "shared-memory words, plus the matrix loads of basic; DRAM: the device-memory words),\n"
         "and the fastest boundary step (/fuse: its speed-up over the fastest fused step)\n");
  printf("%3s %2s %-8s %7s %7s %7s %6s %7s %6s %6s %5s | %-8s %7s %5s | %-8s %7s %6s %6s\n", "dim",
         "k", "fused", "GDoF/s", "flop", "smem B", "%FP", "smTB/s", "%smem", "%DRAM", "/glob",
         "boundary", "GDoF/s", "/fuse", "apply", "GDoF/s", "flop", "%FP");
  for (int i = 0; i < n_roof; ++i)
    printf("%s\n", roof_lines[i]);
  return 0;
}

/* ---- breakdown of a GMRES solve ------------------------------------------ */

/* Seconds of every component of one V-cycle level and of the outer iteration. */
typedef struct {
  double smooth, residual_apply, residual_update, restrict_, prolongate, zero;
} level_times;

typedef struct {
  tpmg_context *ctx;
  tpmg_grid *grid;
  tpmg_precision p;
  int L;
  tpmg_index n[MAX_LEVELS]; /* DoFs per level */
  tpmg_operator *op[MAX_LEVELS];
  tpmg_operator *op_double; /* the finest level's in double */
  tpmg_smoother *smoother[MAX_LEVELS];
  tpmg_transfer *transfer[MAX_LEVELS];
  tpmg_multigrid *mg;
  void *b[MAX_LEVELS], *x[MAX_LEVELS], *r[MAX_LEVELS];
  void *d[3]; /* double vectors on the finest level */
  int l;      /* the level being timed */
  int what;
} breakdown;

enum {
  B_SMOOTH,
  B_APPLY,
  B_UPDATE,
  B_RESTRICT,
  B_PROLONGATE,
  B_ZERO,
  B_VCYCLE, /* level l, precision p */
  B_APPLY_DOUBLE,
  B_DOT,
  B_AXPBY,
  B_TO_P,
  B_FROM_P /* finest level */
};

static tpmg_status run_breakdown(void *arg) {
  breakdown *s = arg;
  tpmg_context *ctx = s->ctx;
  const tpmg_index n = s->n[s->l], nL = s->n[s->L];
  double dot;
  switch (s->what) {
  case B_SMOOTH:
    return tpmg_smoother_apply(s->smoother[s->l], 0, s->b[s->l], s->x[s->l]);
  case B_APPLY:
    return tpmg_operator_apply(s->op[s->l], s->x[s->l], s->r[s->l]);
  case B_UPDATE:
    return tpmg_vector_axpby(ctx, s->p, n, 1.0, s->b[s->l], -1.0, s->r[s->l]);
  case B_RESTRICT:
    return tpmg_transfer_restrict(s->transfer[s->l], s->r[s->l], s->b[s->l - 1]);
  case B_PROLONGATE:
    return tpmg_transfer_prolongate_add(s->transfer[s->l], s->x[s->l - 1], s->r[s->l]);
  case B_ZERO:
    return tpmg_vector_set(ctx, s->p, n, 0.0, s->r[s->l]);
  case B_VCYCLE:
    return tpmg_multigrid_vcycle(s->mg, s->b[s->L], s->x[s->L]);
  case B_APPLY_DOUBLE:
    return tpmg_operator_apply(s->op_double, s->d[0], s->d[1]);
  case B_DOT:
    return tpmg_vector_dot(ctx, TPMG_DOUBLE, nL, s->d[0], s->d[1], &dot);
  case B_AXPBY:
    return tpmg_vector_axpby(ctx, TPMG_DOUBLE, nL, 1e-3, s->d[0], 1.0, s->d[2]);
  case B_TO_P:
    return tpmg_vector_convert(ctx, nL, TPMG_DOUBLE, s->d[0], s->p, s->r[s->L]);
  default:
    return tpmg_vector_convert(ctx, nL, s->p, s->r[s->L], TPMG_DOUBLE, s->d[2]);
  }
}

static void breakdown_destroy(breakdown *s) {
  for (int i = 0; i < 3; ++i)
    tpmg_vector_destroy(s->ctx, &s->d[i]);
  for (int l = 0; l < MAX_LEVELS; ++l) {
    tpmg_vector_destroy(s->ctx, &s->b[l]);
    tpmg_vector_destroy(s->ctx, &s->x[l]);
    tpmg_vector_destroy(s->ctx, &s->r[l]);
    tpmg_operator_destroy(&s->op[l]);
    tpmg_smoother_destroy(&s->smoother[l]);
    tpmg_transfer_destroy(&s->transfer[l]);
  }
  tpmg_operator_destroy(&s->op_double);
  tpmg_multigrid_destroy(&s->mg);
}

static tpmg_status time_what(breakdown *s, int what, int l, int repeat, double *times,
                             double *seconds) {
  s->what = what;
  s->l = l;
  return time_median(s->ctx, run_breakdown, s, repeat, times, seconds);
}

/* The GMRES solve of tpmg_solver_solve (tpmg-solver.c) as components: per
 * iteration j (from 0) one preconditioner (in mixed mode: convert r to float,
 * zero x, V-cycle, convert back), one double operator apply, the classical
 * Gram-Schmidt passes dots and axpys on j+1 basis vectors and the scaling of
 * the new basis vector; at the end one axpys for x += Z y and the residual;
 * before, the norm of b and the first residual. The V-cycle levels: two smoothing steps,
 * the residual (apply + update), restriction, zeroing the coarse iterate and
 * prolongation; level 0 the coarse solve (part of "levels < L"). */
/* One call of the fused Gram-Schmidt passes on m basis vectors. */
typedef struct {
  tpmg_context *ctx;
  tpmg_index n;
  int m, which; /* 0 dots, 1 axpys with the norm, 2 axpys without */
  void **v;     /* m basis vectors, then w */
  double a[MAX_BASIS], result[MAX_BASIS + 1];
} multi_call;

static tpmg_status run_multi(void *arg) {
  multi_call *c = arg;
  const void *const *x = (const void *const *)c->v;
  if (c->which == 0)
    return tpmg_vector_dots(c->ctx, TPMG_DOUBLE, c->n, c->m, x, c->v[c->m], c->result);
  return tpmg_vector_axpys(c->ctx, TPMG_DOUBLE, c->n, c->m, c->a, x, c->v[c->m],
                           c->which == 1 ? c->result : NULL);
}

/* The seconds of dots and axpys (with the norm) on m = 1..it basis vectors of
 * n doubles, [m - 1], and of axpys without the norm on `it` (x += Z y), each
 * on distinct vectors (it + 1 of them, allocated here). */
static tpmg_status time_multi(tpmg_context *ctx, tpmg_index n, int it, int repeat, double *times,
                              double *dots, double *axpys, double *update) {
  void *v[MAX_BASIS + 1] = {NULL};
  tpmg_status status = TPMG_SUCCESS;
  for (int i = 0; i <= it && status == TPMG_SUCCESS; ++i) {
    status = tpmg_vector_create(ctx, TPMG_DOUBLE, n, &v[i]);
    if (status == TPMG_SUCCESS)
      status = tpmg_vector_set(ctx, TPMG_DOUBLE, n, 1.0 / (i + 1), v[i]);
  }
  multi_call c = {ctx, n, 0, 0, v, {0}, {0}};
  for (int i = 0; i < MAX_BASIS; ++i)
    c.a[i] = 1e-3;
  for (c.m = 1; c.m <= it && status == TPMG_SUCCESS; ++c.m) {
    c.which = 0;
    status = time_median(ctx, run_multi, &c, repeat, times, &dots[c.m - 1]);
    c.which = 1;
    if (status == TPMG_SUCCESS)
      status = time_median(ctx, run_multi, &c, repeat, times, &axpys[c.m - 1]);
  }
  c.m = it;
  c.which = 2;
  if (status == TPMG_SUCCESS)
    status = time_median(ctx, run_multi, &c, repeat, times, update);
  for (int i = 0; i <= it; ++i)
    tpmg_vector_destroy(ctx, &v[i]);
  return status;
}

/* Stop at the first failed call of a breakdown step: its status. */
#define BD_CALL(call)                                                                              \
  do {                                                                                             \
    tpmg_status bd_status_ = (call);                                                               \
    if (bd_status_ != TPMG_SUCCESS)                                                                \
      return bd_status_;                                                                           \
  } while (0)

/* The objects of the breakdown on grid's levels 0..L in precision p, with data:
 * the right-hand side on the finest level, restricted below, x = b / 2 and
 * r = b / 4 per level, and d = (b, b / 2, b / 4) in double on the finest. */
static tpmg_status breakdown_setup(breakdown *s, tpmg_grid *grid, tpmg_precision p, int L) {
  tpmg_context *ctx = s->ctx;
  s->grid = grid;
  s->p = p;
  s->L = L;
  for (int l = 0; l <= L; ++l) {
    BD_CALL(tpmg_grid_level_size(grid, l, &s->n[l], NULL));
    BD_CALL(tpmg_operator_create(grid, l, p, &s->op[l]));
    BD_CALL(tpmg_vector_create(ctx, p, s->n[l], &s->b[l]));
    BD_CALL(tpmg_vector_create(ctx, p, s->n[l], &s->x[l]));
    BD_CALL(tpmg_vector_create(ctx, p, s->n[l], &s->r[l]));
    if (l >= 1) {
      BD_CALL(tpmg_smoother_create(grid, l, p, NULL, &s->smoother[l]));
      BD_CALL(tpmg_transfer_create(grid, l, p, &s->transfer[l]));
    }
  }
  const tpmg_index nL = s->n[L];
  BD_CALL(tpmg_operator_create(grid, L, TPMG_DOUBLE, &s->op_double));
  for (int i = 0; i < 3; ++i)
    BD_CALL(tpmg_vector_create(ctx, TPMG_DOUBLE, nL, &s->d[i]));
  BD_CALL(tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, s->d[0]));
  BD_CALL(tpmg_vector_axpby(ctx, TPMG_DOUBLE, nL, 0.5, s->d[0], 0.0, s->d[1]));
  BD_CALL(tpmg_vector_axpby(ctx, TPMG_DOUBLE, nL, 0.25, s->d[0], 0.0, s->d[2]));
  BD_CALL(tpmg_vector_convert(ctx, nL, TPMG_DOUBLE, s->d[0], p, s->b[L]));
  for (int l = L; l >= 1; --l)
    BD_CALL(tpmg_transfer_restrict(s->transfer[l], s->b[l], s->b[l - 1]));
  for (int l = 0; l <= L; ++l) {
    BD_CALL(tpmg_vector_axpby(ctx, p, s->n[l], 0.5, s->b[l], 0.0, s->x[l]));
    BD_CALL(tpmg_vector_axpby(ctx, p, s->n[l], 0.25, s->b[l], 0.0, s->r[l]));
  }
  tpmg_multigrid_options mo = tpmg_multigrid_options_default();
  mo.precision = p;
  BD_CALL(tpmg_multigrid_create(grid, &mo, &s->mg));
  return TPMG_SUCCESS;
}

/* The timed components of one V-cycle and of the outer iteration. */
typedef struct {
  level_times lt[MAX_LEVELS];
  double vcycle, apply_double, dot, axpby, to_p, from_p, zero_top;
  double per_level[MAX_LEVELS]; /* modelled V-cycle time per level; [0] the coarse solve */
  double levels_sum;            /* levels >= 1 */
} component_times;

/* Time every component in isolation; the coarse solve is the measured
 * V-cycle minus the modelled levels >= 1. */
static tpmg_status breakdown_time_components(breakdown *s, int repeat, double *times,
                                             component_times *t) {
  const int L = s->L;
  memset(t, 0, sizeof(*t));
  for (int l = 1; l <= L; ++l) {
    level_times *lt = &t->lt[l];
    BD_CALL(time_what(s, B_SMOOTH, l, repeat, times, &lt->smooth));
    BD_CALL(time_what(s, B_APPLY, l, repeat, times, &lt->residual_apply));
    BD_CALL(time_what(s, B_UPDATE, l, repeat, times, &lt->residual_update));
    BD_CALL(time_what(s, B_RESTRICT, l, repeat, times, &lt->restrict_));
    BD_CALL(time_what(s, B_PROLONGATE, l, repeat, times, &lt->prolongate));
    BD_CALL(time_what(s, B_ZERO, l - 1, repeat, times, &lt->zero));
  }
  BD_CALL(time_what(s, B_ZERO, L, repeat, times, &t->zero_top));
  BD_CALL(time_what(s, B_VCYCLE, L, repeat, times, &t->vcycle));
  BD_CALL(time_what(s, B_APPLY_DOUBLE, L, repeat, times, &t->apply_double));
  BD_CALL(time_what(s, B_DOT, L, repeat, times, &t->dot));
  BD_CALL(time_what(s, B_AXPBY, L, repeat, times, &t->axpby));
  if (s->p != TPMG_DOUBLE) {
    BD_CALL(time_what(s, B_TO_P, L, repeat, times, &t->to_p));
    BD_CALL(time_what(s, B_FROM_P, L, repeat, times, &t->from_p));
  }
  for (int l = 1; l <= L; ++l) {
    const level_times *lt = &t->lt[l];
    t->per_level[l] = 2 * lt->smooth + lt->residual_apply + lt->residual_update + lt->restrict_ +
                      lt->prolongate + lt->zero;
    t->levels_sum += t->per_level[l];
  }
  t->per_level[0] = t->vcycle - t->levels_sum > 0 ? t->vcycle - t->levels_sum : 0;
  return TPMG_SUCCESS;
}

/* The GMRES solve itself in `arithmetic`, timed once after a warm-up solve, both
 * from x = 0: its seconds, result and restart length. */
static tpmg_status time_solve(tpmg_context *ctx, tpmg_grid *grid, tpmg_arithmetic arithmetic,
                              tpmg_index nL, double *seconds, tpmg_solver_result *result,
                              int *restart) {
  tpmg_solver_options so = tpmg_solver_options_default();
  so.type = TPMG_SOLVER_GMRES;
  so.arithmetic = arithmetic;
  tpmg_solver *solver = NULL;
  void *b = NULL, *x = NULL;
  tpmg_status status = tpmg_vector_create(ctx, TPMG_DOUBLE, nL, &b);
  if (status == TPMG_SUCCESS)
    status = tpmg_vector_create(ctx, TPMG_DOUBLE, nL, &x);
  if (status == TPMG_SUCCESS)
    status = tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b);
  if (status == TPMG_SUCCESS)
    status = tpmg_solver_create(grid, &so, &solver);
  if (status == TPMG_SUCCESS)
    status = tpmg_solver_solve(solver, b, x, result);
  if (status == TPMG_SUCCESS)
    status = tpmg_vector_set(ctx, TPMG_DOUBLE, nL, 0.0, x);
  if (status == TPMG_SUCCESS)
    status = tpmg_context_stopwatch(ctx, 1, NULL);
  if (status == TPMG_SUCCESS)
    status = tpmg_solver_solve(solver, b, x, result);
  if (status == TPMG_SUCCESS)
    status = tpmg_context_stopwatch(ctx, 0, seconds);
  if (status == TPMG_SUCCESS)
    *seconds = app_mpi_max(*seconds); /* under mpirun: the slowest rank's */
  if (status == TPMG_SUCCESS)
    status = tpmg_solver_restart(solver, restart);
  tpmg_solver_destroy(&solver);
  tpmg_vector_destroy(ctx, &b);
  tpmg_vector_destroy(ctx, &x);
  return status;
}

/* The components of the solve's model (paper Figures 11 and 12). */
enum { C_LOWER, C_SMOOTH, C_MATVEC, C_TRANSFER, C_UPDATE, C_GMRES_MATVEC, C_GMRES_VECTOR, C_N };
static const char *const component_names[C_N] = {"levels < L",
                                                 "level L smooth",
                                                 "level L mat-vec",
                                                 "level L restrict & prolongate",
                                                 "level L vector update",
                                                 "GMRES mat-vec",
                                                 "GMRES vector ops"};

/* The model of a solve of `it` iterations from the timed components: the
 * seconds of each, c[C_*], and their sum. gs: the Gram-Schmidt passes of all
 * iterations, update: x += Z y. */
static double solve_model(const component_times *t, int L, int it, double gs, double update,
                          double *c) {
  const level_times *top = &t->lt[L];
  const double n_vcycles = it;
  c[C_LOWER] = n_vcycles * (t->levels_sum - t->per_level[L] + t->per_level[0] + top->zero);
  c[C_SMOOTH] = n_vcycles * 2 * top->smooth;
  c[C_MATVEC] = n_vcycles * top->residual_apply;
  c[C_TRANSFER] = n_vcycles * (top->restrict_ + top->prolongate);
  /* the residual update, the zero start of the preconditioner and in mixed
   * mode its conversions */
  c[C_UPDATE] = n_vcycles * (top->residual_update + t->zero_top + t->to_p + t->from_p);
  /* operator applies: one per iteration, the first residual, the one after
   * the cycle, and the final check */
  c[C_GMRES_MATVEC] = (it + 3) * t->apply_double;
  /* Gram-Schmidt: iteration j one dots and one axpys on j + 1 vectors (no
   * second pass: it is rare, and not counted); x += Z y one axpys; dots: |b|,
   * the first residual and the two final residuals; axpbys: the first
   * residual and basis vector, the scaling of it - 1 basis vectors, the two
   * final residuals */
  c[C_GMRES_VECTOR] = gs + update + 4 * t->dot + (it + 3) * t->axpby;
  double model = 0;
  for (int i = 0; i < C_N; ++i)
    model += c[i];
  return model;
}

/* What the breakdown of one solve found, for printing. */
typedef struct {
  int dim, k, L, it, restart;
  tpmg_index n_dofs;
  double solve_seconds, model, c[C_N];
  double gs_dots[MAX_BASIS], gs_axpys[MAX_BASIS], update;
} breakdown_result;

static void print_breakdown(const options *o, const component_times *t, const breakdown_result *r,
                            FILE *csv) {
  const int L = r->L, it = r->it;
  const level_times *top = &t->lt[L];
  printf("breakdown: %dD Q%d level %d, %lld DoFs, GMRES(%d) %s, %d iterations\n", r->dim, r->k, L,
         (long long)r->n_dofs, r->restart, arithmetic_names[o->arithmetic], it);
  printf("  solve (the second of two): %.4f s; the model from the components below: %.4f s\n",
         r->solve_seconds, r->model);
  printf("  %-30s %10s %7s\n", "component (paper Fig. 11/12)", "ms", "share");
  for (int i = 0; i < C_N; ++i)
    printf("  %-30s %10.2f %6.1f%%\n", component_names[i], 1e3 * r->c[i], 100 * r->c[i] / r->model);
  printf("  one V-cycle: %.3f ms measured; by level (paper Fig. 13), ms and share:\n",
         1e3 * t->vcycle);
  for (int l = L; l >= 0; --l)
    printf("    level %2d %10.3f %6.1f%%%s\n", l, 1e3 * t->per_level[l],
           100 * t->per_level[l] / (t->levels_sum + t->per_level[0]),
           l == 0 ? " (coarse solve and overhead)" : "");
  printf("  Gram-Schmidt, ms, for 1..%d basis vectors: dots", it);
  for (int j = 0; j < it; ++j)
    printf(" %.3f", 1e3 * r->gs_dots[j]);
  printf("; axpys with the norm");
  for (int j = 0; j < it; ++j)
    printf(" %.3f", 1e3 * r->gs_axpys[j]);
  printf("; x += Z y %.3f\n", 1e3 * r->update);
  printf("  finest level, ms: smooth %.3f, mat-vec %.3f, update %.3f, restrict %.3f, prolongate "
         "%.3f | double: apply %.3f, dot %.3f, axpby %.3f, convert %.3f + %.3f\n",
         1e3 * top->smooth, 1e3 * top->residual_apply, 1e3 * top->residual_update,
         1e3 * top->restrict_, 1e3 * top->prolongate, 1e3 * t->apply_double, 1e3 * t->dot,
         1e3 * t->axpby, 1e3 * t->to_p, 1e3 * t->from_p);
  if (!csv)
    return;
  fprintf(csv, "dim,degree,level,n_dofs,arithmetic,iterations,restart,solve_s,model_s");
  for (int i = 0; i < C_N; ++i)
    fprintf(csv, ",%s_s", component_names[i]);
  for (int l = 0; l <= L; ++l)
    fprintf(csv, ",vcycle_level%d_s", l);
  fprintf(csv, ",vcycle_s,smooth_L_s,apply_L_s,apply_double_L_s,dot_L_s,axpby_L_s\n");
  fprintf(csv, "%d,%d,%d,%lld,%s,%d,%d,%.6g,%.6g", r->dim, r->k, L, (long long)r->n_dofs,
          arithmetic_names[o->arithmetic], it, r->restart, r->solve_seconds, r->model);
  for (int i = 0; i < C_N; ++i)
    fprintf(csv, ",%.6g", r->c[i]);
  for (int l = 0; l <= L; ++l)
    fprintf(csv, ",%.6g", t->per_level[l]);
  fprintf(csv, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", t->vcycle, top->smooth, top->residual_apply,
          t->apply_double, t->dot, t->axpby);
}

/* The breakdown of one (dim, degree, level): time the components, time the
 * solve, model it from the components (the GMRES solve as components: the
 * comment before multi_call) and print both. */
static int run_breakdown_mode(tpmg_context *ctx, const options *o, FILE *csv, double *times,
                              int dim, int k, int L) {
  const tpmg_precision p = o->arithmetic == TPMG_ARITHMETIC_MIXED ? TPMG_FLOAT : TPMG_DOUBLE;
  tpmg_grid_options go = mesh_grid_options(o, dim, k, L);
  tpmg_grid *grid = NULL;
  tpmg_status status = tpmg_grid_create(ctx, &go, &grid);
  if (status != TPMG_SUCCESS)
    return app_library_error(ctx, "tpmg_grid_create", status);
  breakdown_result r = {.dim = dim, .k = k, .L = L, .solve_seconds = NAN};
  tpmg_grid_level_size(grid, L, &r.n_dofs, NULL);
  char group[32];
  fprintf(stderr, "tpmg-bench: breakdown %dD Q%d level %d (%s DoFs), %s\n", dim, k, L,
          app_group((long long)r.n_dofs, group), arithmetic_names[o->arithmetic]);

  breakdown s;
  memset(&s, 0, sizeof(s));
  s.ctx = ctx;
  component_times t;
  const char *what = "the breakdown's objects";
  status = breakdown_setup(&s, grid, p, L);
  if (status == TPMG_SUCCESS) {
    what = "timing the components";
    status = breakdown_time_components(&s, o->repeat, times, &t);
  }
  breakdown_destroy(&s);
  tpmg_solver_result result = {0};
  if (status == TPMG_SUCCESS) {
    what = "the timed solve";
    status = time_solve(ctx, grid, o->arithmetic, r.n_dofs, &r.solve_seconds, &result, &r.restart);
  }
  r.it = result.iterations;
  /* Gram-Schmidt per basis length (the bases of longer solves are restarted
   * or split into MAX_BASIS vectors per pass; not modelled) */
  if (status == TPMG_SUCCESS && r.it > MAX_BASIS) {
    fprintf(stderr, "tpmg-bench: the breakdown models at most %d iterations, the solve took %d\n",
            MAX_BASIS, r.it);
    tpmg_grid_destroy(&grid);
    return APP_EXIT_LIBRARY;
  }
  if (status == TPMG_SUCCESS && r.it > 0) {
    what = "timing Gram-Schmidt";
    status = time_multi(ctx, r.n_dofs, r.it, o->repeat, times, r.gs_dots, r.gs_axpys, &r.update);
  }
  tpmg_grid_destroy(&grid);
  if (status != TPMG_SUCCESS)
    return app_library_error(ctx, what, status);
  double gs = 0;
  for (int j = 0; j < r.it; ++j)
    gs += r.gs_dots[j] + r.gs_axpys[j];
  r.model = solve_model(&t, L, r.it, gs, r.update, r.c);
  print_breakdown(o, &t, &r, csv);
  return o->csv ? csv_written(csv, o->csv, 0, 1) : 0;
}

/* ---- --communication ------------------------------------------------------ */

/* The counts of the calls between two reads, the largest over the ranks. */
static tpmg_communication traffic_since(tpmg_context *ctx, const tpmg_communication *before) {
  tpmg_communication now;
  tpmg_context_communication(ctx, &now);
  tpmg_communication d = {
      (long long)app_mpi_max((double)(now.exchange_messages - before->exchange_messages)),
      (long long)app_mpi_max((double)(now.exchange_bytes - before->exchange_bytes)),
      (long long)app_mpi_max((double)(now.gather_messages - before->gather_messages)),
      (long long)app_mpi_max((double)(now.gather_bytes - before->gather_bytes)),
      (long long)app_mpi_max((double)(now.reductions - before->reductions))};
  return d;
}

static void print_traffic(const char *what, const tpmg_communication *t, double per) {
  printf("  %-22s exchange %6.1f msgs %10.3f MB   gather %6.1f msgs %10.3f MB   reductions %5.1f\n",
         what, t->exchange_messages / per, 1e-6 * t->exchange_bytes / per, t->gather_messages / per,
         1e-6 * t->gather_bytes / per, t->reductions / per);
}

/* Seconds of communication per V-cycle on P ranks by the model: messages at
 * latency alpha, bytes at beta; the neighbour exchange as measured (an
 * interior rank's, with P >= 3 here), the gathering of the levels kept whole
 * growing with the ranks, the reductions with log2 of them. */
static double model_seconds(const tpmg_communication *v, int ranks_here, int P, double alpha,
                            double beta) {
  double peers_here = ranks_here > 1 ? ranks_here - 1 : 1, peers = P - 1;
  double gather_messages = v->gather_messages / peers_here * peers;
  double gather_bytes = v->gather_bytes / peers_here * peers;
  double exchange = P > 1 ? v->exchange_messages * alpha + v->exchange_bytes / beta : 0.0;
  return exchange + gather_messages * alpha + gather_bytes / beta +
         (P > 1 ? v->reductions * alpha * ceil(log2((double)P)) : 0.0);
}

static int run_communication_mode(tpmg_context *ctx, const options *o, double *times, int dim,
                                  int k, int level) {
  tpmg_grid_options go = mesh_grid_options(o, dim, k, level);
  tpmg_grid *grid = NULL;
  tpmg_operator *op = NULL;
  tpmg_smoother *smoother = NULL;
  tpmg_multigrid *mg = NULL;
  tpmg_solver *solver = NULL;
  void *b = NULL, *x = NULL, *bd = NULL, *xd = NULL;
  tpmg_precision p = o->precision;
  tpmg_index n = 0;
  tpmg_level_layout layout;
  const char *what = "tpmg_grid_create";
  tpmg_status status = tpmg_grid_create(ctx, &go, &grid);
#define COMM_STEP(name, call)                                                                      \
  if (status == TPMG_SUCCESS) {                                                                    \
    what = name;                                                                                   \
    status = (call);                                                                               \
  }
  COMM_STEP("tpmg_grid_level_size", tpmg_grid_level_size(grid, level, &n, NULL));
  COMM_STEP("tpmg_grid_level_layout", tpmg_grid_level_layout(grid, level, &layout));
  COMM_STEP("tpmg_vector_create", tpmg_vector_create(ctx, p, n, &b));
  COMM_STEP("tpmg_vector_create", tpmg_vector_create(ctx, p, n, &x));
  COMM_STEP("tpmg_vector_create", tpmg_vector_create(ctx, TPMG_DOUBLE, n, &bd));
  COMM_STEP("tpmg_vector_create", tpmg_vector_create(ctx, TPMG_DOUBLE, n, &xd));
  COMM_STEP("tpmg_problem_rhs", tpmg_problem_rhs(grid, TPMG_RHS_SINE, p, b));
  COMM_STEP("tpmg_problem_rhs", tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, bd));
  COMM_STEP("tpmg_operator_create", tpmg_operator_create(grid, level, p, &op));
  COMM_STEP("tpmg_smoother_create", tpmg_smoother_create(grid, level, p, NULL, &smoother));
  tpmg_multigrid_options mo = tpmg_multigrid_options_default();
  mo.precision = p;
  COMM_STEP("tpmg_multigrid_create", tpmg_multigrid_create(grid, &mo, &mg));
  tpmg_solver_options so = tpmg_solver_options_default();
  so.type = TPMG_SOLVER_GMRES; /* the traffic per GMRES iteration */
  so.arithmetic = o->arithmetic;
  COMM_STEP("tpmg_solver_create", tpmg_solver_create(grid, &so, &solver));
  tpmg_communication before, apply, smooth, vcycle, solve;
  tpmg_solver_result result = {0, 0, 0, 0, 0};
  COMM_STEP("tpmg_context_communication", tpmg_context_communication(ctx, &before));
  COMM_STEP("tpmg_operator_apply", tpmg_operator_apply(op, b, x));
  apply = traffic_since(ctx, &before);
  COMM_STEP("tpmg_context_communication", tpmg_context_communication(ctx, &before));
  COMM_STEP("tpmg_smoother_apply", tpmg_smoother_apply(smoother, 0, b, x));
  smooth = traffic_since(ctx, &before);
  COMM_STEP("tpmg_context_communication", tpmg_context_communication(ctx, &before));
  COMM_STEP("tpmg_multigrid_vcycle", tpmg_multigrid_vcycle(mg, b, x));
  vcycle = traffic_since(ctx, &before);
  COMM_STEP("tpmg_context_communication", tpmg_context_communication(ctx, &before));
  COMM_STEP("tpmg_solver_solve", tpmg_solver_solve(solver, bd, xd, &result));
  solve = traffic_since(ctx, &before);
  /* the V-cycle's time: median of --repeat after a warm-up, the slowest rank's */
  for (int rep = -1; rep < o->repeat && status == TPMG_SUCCESS; ++rep) {
    COMM_STEP("tpmg_context_synchronize", tpmg_context_synchronize(ctx));
    double start = app_now();
    COMM_STEP("tpmg_multigrid_vcycle", tpmg_multigrid_vcycle(mg, b, x));
    COMM_STEP("tpmg_context_synchronize", tpmg_context_synchronize(ctx));
    if (rep >= 0)
      times[rep] = app_mpi_max(app_now() - start);
  }
#undef COMM_STEP
  int exit_status = 0;
  if (status != TPMG_SUCCESS) {
    exit_status = app_library_error(ctx, what, status);
  } else {
    qsort(times, (size_t)o->repeat, sizeof *times, compare_doubles);
    double seconds = times[o->repeat / 2], whole = 1.0;
    for (int d = 0; d < dim; ++d)
      whole *= (double)layout.n_global[d];
    int P = app_mpi_size();
    printf("%dD Q%d level %d, %.0f DoFs on %d rank%s (slabs along %c; this rank's vector %lld "
           "entries), %s V-cycle %.3f ms\n",
           dim, k, level, whole, P, P == 1 ? "" : "s", "xyz"[dim - 1], (long long)n,
           precision_names[p], 1e3 * seconds);
    print_traffic("operator apply", &apply, 1.0);
    print_traffic("smoothing step", &smooth, 1.0);
    print_traffic("V-cycle", &vcycle, 1.0);
    if (result.iterations > 0)
      print_traffic("GMRES iteration", &solve, (double)result.iterations);
    printf("  weak-scaling model (the same slab per rank, alpha 2 us, beta 10 GB/s): P, "
           "communication per V-cycle, efficiency\n   ");
    for (int q = 1; q <= 4096; q *= 4) {
      double comm = model_seconds(&vcycle, P, q, 2e-6, 10e9);
      printf(" %d: %.3f ms %.0f%%;", q, 1e3 * comm, 100.0 * seconds / (seconds + comm));
    }
    printf("\n");
    if (P < 3)
      printf("  (run with 3 or more ranks for an interior rank's exchange: here a rank has %s)\n",
             P == 2 ? "one neighbour" : "none");
  }
  tpmg_solver_destroy(&solver);
  tpmg_multigrid_destroy(&mg);
  tpmg_smoother_destroy(&smoother);
  tpmg_operator_destroy(&op);
  tpmg_vector_destroy(ctx, &b);
  tpmg_vector_destroy(ctx, &x);
  tpmg_vector_destroy(ctx, &bd);
  tpmg_vector_destroy(ctx, &xd);
  tpmg_grid_destroy(&grid);
  return exit_status;
}

int main(int argc, char **argv) {
  app_set_program("tpmg-bench");
  app_mpi_init(&argc, &argv);
  options o = parse_options(argc, argv);
  app_mpi_agree_options(); /* under mpirun: the same options on every rank, or exit 2 on all */

  /* The rows: every requested (dim, degree). */
  int dims[2], degrees[2][10], n_degrees[2], n_dims = 0, n_rows = 0;
  for (int dim = 2; dim <= 3; ++dim) {
    if (o.dim && o.dim != dim)
      continue;
    n_degrees[n_dims] = 0;
    for (int k = 1; k <= app_max_degree(dim); ++k)
      if (!o.degree || o.degree == k)
        degrees[n_dims][n_degrees[n_dims]++] = k;
    n_rows += n_degrees[n_dims];
    dims[n_dims++] = dim;
  }

  FILE *csv = NULL; /* rank 0's */
  if (o.csv) {
    int error = 0;
    if (app_mpi_rank() == 0 && !(csv = fopen(o.csv, "w")))
      error = errno;
    error = (int)app_mpi_max(error); /* every rank stops alike */
    if (error) {
      fprintf(stderr, "tpmg-bench: --csv %s: cannot open it for writing: %s\n", o.csv,
              strerror(error));
      return APP_EXIT_LIBRARY;
    }
  }

  /* a context per kernel column (the breakdown: the one named); ctx is the
   * one named by --backend */
  const column_list cl = columns_of(o.backend);
  const int n_contexts = o.breakdown || o.communication ? 1 : cl.n;
  tpmg_context *contexts[MAX_COLUMNS] = {NULL};
  int main_column = 0;
  tpmg_status status = TPMG_SUCCESS;
  for (int c = 0; c < n_contexts && status == TPMG_SUCCESS; ++c) {
    tpmg_context_options context_options = tpmg_context_options_default();
    context_options.backend = o.breakdown || o.communication ? o.backend : cl.c[c].backend;
    context_options.n_threads = o.threads;
    context_options.mpi_comm = app_mpi_comm();
    context_options.whole_level_dofs = o.distribution.whole_level_dofs;
    context_options.overlap = o.distribution.overlap;
    status = tpmg_context_create(&context_options, &contexts[c]);
    if (strcmp(context_options.backend, o.backend) == 0)
      main_column = c;
  }
  if (status != TPMG_SUCCESS) {
    for (int c = 0; c < n_contexts; ++c)
      tpmg_context_destroy(&contexts[c]);
    if (csv)
      fclose(csv);
    return app_library_error(NULL, "tpmg_context_create", status);
  }
  tpmg_context *ctx = contexts[main_column];
  int threads = 1;
  tpmg_context_threads(ctx, &threads);

  double *times = malloc((size_t)(o.repeat > 5 ? o.repeat : 5) * sizeof *times);
  if (app_mpi_max(times == NULL) != 0) { /* on any rank: every rank stops */
    free(times);
    fprintf(stderr, "tpmg-bench: out of memory for --repeat %d\n", o.repeat);
    for (int c = 0; c < n_contexts; ++c)
      tpmg_context_destroy(&contexts[c]);
    if (csv)
      fclose(csv);
    return APP_EXIT_LIBRARY;
  }

  int exit_status = 0;
  if (app_mpi_size() > 1 && !o.communication)
    printf("tpmg-bench: on %d ranks: DoF counts and rates below are rank 0's (its slab and ghost "
           "cells); times are the slowest rank's, exchanges included\n",
           app_mpi_size());
  if (o.communication) {
    printf("tpmg-bench: %s backend, %d thread%s per rank, communication, median of %d after one "
           "warm-up\n",
           o.backend, threads, threads == 1 ? "" : "s", o.repeat);
    for (int di = 0; di < n_dims && exit_status == 0; ++di)
      for (int ki = 0; ki < n_degrees[di] && exit_status == 0; ++ki) {
        int k = degrees[di][ki];
        exit_status =
            run_communication_mode(ctx, &o, times, dims[di], k, mesh_level(&o, dims[di], k));
      }
  } else if (o.breakdown) {
    printf("tpmg-bench: %s backend, %d thread%s, breakdown, median of %d after one warm-up\n",
           o.backend, threads, threads == 1 ? "" : "s", o.repeat);
    for (int di = 0; di < n_dims && exit_status == 0; ++di)
      for (int ki = 0; ki < n_degrees[di] && exit_status == 0; ++ki) {
        int k = degrees[di][ki];
        exit_status =
            run_breakdown_mode(ctx, &o, csv, times, dims[di], k, mesh_level(&o, dims[di], k));
      }
  } else {
    limits lim;
    status = measure_limits(ctx, o.repeat > 5 ? o.repeat : 5, times, &lim);
    if (status != TPMG_SUCCESS) {
      exit_status = app_library_error(ctx, "measure_limits", status);
    } else {
      printf("tpmg-bench: %s backend, %d thread%s, %s, median of %d after one warm-up "
             "(%s)\n",
             o.backend, threads, threads == 1 ? "" : "s", precision_names[o.precision], o.repeat,
             strncmp(o.backend, "cuda", 4) == 0 ? "CUDA events" : "wall clock");
      printf("measured limits: copy %.3f TB/s (read + write)", 1e-12 * lim.copy);
      if (lim.measured)
        printf(", shared-memory loads %.3f TB/s, FP64 FMA %.3f TFLOP/s, FP32 FMA %.3f TFLOP/s",
               1e-12 * lim.shared, 1e-12 * lim.flops[TPMG_DOUBLE], 1e-12 * lim.flops[TPMG_FLOAT]);
      printf("\n");
      exit_status = run_building_blocks(contexts, main_column, &o, csv, times, &lim, n_dims, dims,
                                        degrees, n_degrees, n_rows);
    }
  }

  free(times);
  for (int c = 0; c < n_contexts; ++c)
    tpmg_context_destroy(&contexts[c]);
  /* a failure reported before is not reported again */
  if (o.csv && csv_written(csv, o.csv, 1, exit_status == 0) && exit_status == 0)
    exit_status = APP_EXIT_LIBRARY;
  return app_stdout_status(exit_status);
}
