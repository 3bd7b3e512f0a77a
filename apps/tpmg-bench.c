/* tpmg-bench: time the building blocks of the multigrid solver on the finest
 * level (one smoothing step per smoother variant and kernel, one operator apply
 * per kernel, one restriction + prolongation pair, one V-cycle) for a range of
 * dimensions and degrees, and compare the smoothing step and the operator with
 * the device's limits, measured in the same run. With --breakdown, split the
 * time of a GMRES solve by level and component (the paper's Figures 11-13).
 * Each time is the median of --repeat runs after one warm-up run, measured by
 * the backend's stopwatch (CUDA events on the GPU). Run `tpmg-bench --help`.
 *
 * The benchmark uses the library's internal backend table (for the stopwatch,
 * the operator's kernels and the limit loops), so it includes the private
 * header: it is a tool of the project, not an example of the public API. */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../c_api/src/tpmg-impl.h"
#include "tpmg-app-common.h"
#include "tpmg.h"

#define DEFAULT_TARGET_DOFS 1e6
#define MAX_KERNELS 6

static const char *const precision_names[] = {"double", "float", NULL};
static const char *const mode_names[] = {"double", "mixed", NULL};
#define N_VARIANTS 4 /* the smoother variants, in tpmg_smoother_variant order */
static const char *const variant_names[N_VARIANTS] = {"global", "separate", "fused", "boundary"};
static const char *const kernel_names[7] = {"default", "basic", "constant", "thread",
                                            "tiled",   "brick", "tensor"};
static const char kernel_letters[7] = {'D', 'B', 'C', 'T', 'L', 'K', 'X'};

typedef struct {
  int dim;    /* 2, 3, or 0 for both */
  int degree; /* 0 for all */
  int level;  /* 0: chosen by --dofs */
  double dofs;
  tpmg_precision precision;
  tpmg_mode mode; /* --breakdown: double or mixed */
  const char *backend;
  int threads;
  int repeat;
  int breakdown;
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
         "  --mode double|mixed    precision of the --breakdown solve (default mixed)\n"
         "  --backend cpu|cuda     where it runs (default cpu)\n"
         "  --threads n            CPU threads, >= 1 (default: OpenMP's default)\n"
         "  --repeat n             timed runs per component, >= 1 (default 5)\n"
         "  --csv FILE             also write the results as CSV to FILE\n"
         "  --help                 print this help and exit\n"
         "\n"
         "Exit status: 0 success, 1 library or file error, 2 bad option.\n");
}

static options parse_options(int argc, char **argv) {
  options o = {.backend = "cpu", .dofs = DEFAULT_TARGET_DOFS, .repeat = 5, .mode = TPMG_MODE_MIXED};
  int dofs_given = 0;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (app_option_is(arg, "--help")) {
      print_help();
      exit(0);
    } else if (app_option_is(arg, "--dim")) {
      const char *text = app_option_value(argc, argv, &i, "--dim");
      o.dim = strcmp(text, "all") == 0 ? 0 : app_parse_int("--dim", text, 2, 3);
    } else if (app_option_is(arg, "--degree")) {
      const char *text = app_option_value(argc, argv, &i, "--degree");
      o.degree = strcmp(text, "all") == 0 ? 0 : app_parse_int("--degree", text, 1, INT_MAX);
    } else if (app_option_is(arg, "--level")) {
      o.level = app_parse_int("--level", app_option_value(argc, argv, &i, "--level"), 1, 30);
    } else if (app_option_is(arg, "--dofs")) {
      o.dofs = app_parse_positive("--dofs", app_option_value(argc, argv, &i, "--dofs"));
      dofs_given = 1;
    } else if (app_option_is(arg, "--precision")) {
      o.precision = app_parse_choice("--precision", app_option_value(argc, argv, &i, "--precision"),
                                     precision_names);
    } else if (app_option_is(arg, "--mode")) {
      o.mode = app_parse_choice("--mode", app_option_value(argc, argv, &i, "--mode"), mode_names);
    } else if (app_option_is(arg, "--breakdown")) {
      o.breakdown = 1;
    } else if (app_option_is(arg, "--backend")) {
      o.backend = app_parse_backend("--backend", app_option_value(argc, argv, &i, "--backend"));
    } else if (app_option_is(arg, "--threads")) {
      o.threads =
          app_parse_int("--threads", app_option_value(argc, argv, &i, "--threads"), 1, INT_MAX);
    } else if (app_option_is(arg, "--repeat")) {
      o.repeat =
          app_parse_int("--repeat", app_option_value(argc, argv, &i, "--repeat"), 1, INT_MAX);
    } else if (app_option_is(arg, "--csv")) {
      o.csv = app_option_value(argc, argv, &i, "--csv");
      if (o.csv[0] == '\0')
        app_usage_error("--csv needs a file name");
    } else {
      app_usage_error("unknown option '%s' (see --help)", arg);
    }
  }
  if (dofs_given && o.level)
    app_usage_error("--level and --dofs exclude each other");
  int dim = o.dim == 2 ? 2 : 3;
  if (o.degree > app_max_degree(dim))
    app_usage_error("--degree %d: must be 1..%d for dim %d%s", o.degree, app_max_degree(dim), dim,
                    o.dim == 0 ? " (use --dim 2)" : "");
  return o;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---- timing ------------------------------------------------------------- */

/* What one timed run does. */
typedef tpmg_status (*run_fn)(void *arg);

/* Median seconds of `repeat` runs after one warm-up run, each run between two
 * stopwatch marks (on the GPU, CUDA events on the context's stream). */
static tpmg_status time_median(tpmg_context *ctx, run_fn fn, void *arg, int repeat, double *times,
                               double *median) {
  tpmg_status status = fn(arg);
  for (int rep = 0; rep < repeat && status == TPMG_SUCCESS; ++rep) {
    status = ctx->ops->stopwatch(ctx, 1, NULL);
    if (status == TPMG_SUCCESS)
      status = fn(arg);
    if (status == TPMG_SUCCESS)
      status = ctx->ops->stopwatch(ctx, 0, &times[rep]);
  }
  if (status != TPMG_SUCCESS)
    return status;
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
  /* 2 GiB each way on a GPU (many times its L2), 32 MiB on the CPU */
  copy_run c = {ctx, (tpmg_index)1 << (ctx->ops->memory == TPMG_MEMORY_DEVICE ? 28 : 22), NULL, NULL};
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
  if (ctx->ops->measure_limits) {
    double l[TPMG_LIMIT_COUNT];
    TPMG_CALL(ctx->ops->measure_limits(ctx, l));
    out->shared = l[TPMG_LIMIT_SHARED_BYTES];
    out->flops[TPMG_DOUBLE] = l[TPMG_LIMIT_FLOPS_DOUBLE];
    out->flops[TPMG_FLOAT] = l[TPMG_LIMIT_FLOPS_FLOAT];
    out->measured = 1;
  }
  return TPMG_SUCCESS;
}

/* ---- counted work per DoF ------------------------------------------------- */

/* What one kernel does per DoF of its output, counted from the code (see the
 * counts in cuda_kernels/tpmg-cuda-kernels.cuh and tpmg-cuda-tensor.cuh). */
typedef struct {
  double flops;        /* 2 per multiply-add, 1 per other arithmetic operation */
  double shared_words; /* shared-memory words written + read by the team kernels */
  double matrix_words; /* 1D matrix entries loaded by BASIC kernels (one per multiply-add) */
  double dram_words;   /* device-memory words at the least: each input read, output written once */
} work;

/* One smoothing step (all 2^dim colours) of the FUSED team kernel, per DoF:
 * per patch the residual on the I^dim interior rows of the P^dim window
 * (apply_patch_rows with R = I) and the fast diagonalization, times the
 * number of patches, n_patches = prod_d (cells_d - 1). `sparse`: the CONSTANT,
 * TILED and THREAD kernels, which skip the zero blocks of the vertex-patch matrices
 * (rows 1..2k-1 hold 2k^2 + 2k - 1 nonzeros, not (2k-1)(2k+1)) and split the
 * eigenvectors into even and odd ones (k^2 + (k-1)^2 multiply-adds per line
 * transform, not I^2). */
static work count_fused(int dim, int k, double n_dofs, double n_patches, int sparse) {
  const double P = 2 * k + 1, I = 2 * k - 1;
  const double rows = sparse ? 2.0 * k * k + 2 * k - 1 : I * P; /* per line, rows 1..2k-1 */
  const double transform = sparse ? (double)k * k + (double)(k - 1) * (k - 1) : I * I;
  double fma, shared, extra;
  if (dim == 2) {
    fma = 2 * rows * P + 2 * rows * I + 4 * transform * I;
    shared = 4 * I * P + 3 * I * I + 5 * I * I;
    extra = 3 * I * I; /* subtraction, division, scaling */
  } else {
    fma = 2 * rows * P * P + 3 * rows * I * P + 2 * rows * I * I + 6 * transform * I * I;
    /* the block-linear kernels (CONSTANT, TILED) subtract their residual from
     * b in the first stage of the solve, not in a pass of its own (2 I^3) */
    shared = 4 * I * P * P + 4 * I * I * P + (sparse ? 10 : 12) * I * I * I;
    extra = 3 * I * I * I;
  }
  work w;
  w.flops = (2 * fma + extra) * n_patches / n_dofs;
  w.shared_words = shared * n_patches / n_dofs;
  w.matrix_words = fma * n_patches / n_dofs;
  w.dram_words = 3.0 * (1 << dim); /* per colour: read x and b, write x */
  return w;
}

/* Device-memory words per DoF of one BOUNDARY smoothing step, with the shared
 * planes of the windows read once: per colour x on the patch boundaries (1 - f),
 * b_I (f) and the store of x_I (f), f = (I / 2k)^dim the fraction of DoFs in
 * the colour's patch interiors (FUSED: x on the whole window, b_I, x_I read
 * and written, about 3; see cuda_kernels/tpmg-cuda-kernels.cuh). */
static double boundary_dram_words(int dim, int k) {
  const double f = pow((2.0 * k - 1) / (2.0 * k), dim);
  return (1 + f) * (1 << dim);
}

/* One operator apply by the gather team kernel: per vertex (prod (cells_d+1)
 * of them) the rows k..2k-1 of the vertex patch (apply_patch_rows with R = k;
 * `sparse`: k^2 + 2k nonzeros in these rows, not k (2k+1)); THREAD (k = 1):
 * the centre row per DoF, the same count. */
static work count_apply(int dim, int k, double n_dofs, double n_vertices, int sparse) {
  const double P = 2 * k + 1, R = k;
  const double rows = sparse ? (double)k * k + 2 * k : R * P;
  double fma, shared;
  if (dim == 2) {
    fma = 2 * rows * P + 2 * rows * R;
    shared = 4 * R * P + R * R;
  } else {
    fma = 2 * rows * P * P + 3 * rows * R * P + 2 * rows * R * R;
    shared = 4 * R * P * P + 4 * R * R * P + R * R * R;
  }
  work w;
  w.flops = 2 * fma * n_vertices / n_dofs;
  w.shared_words = shared * n_vertices / n_dofs;
  w.matrix_words = fma * n_vertices / n_dofs;
  w.dram_words = 2;
  return w;
}

/* One operator apply by the BRICK kernel (cuda_kernels/tpmg-cuda-brick.cuh):
 * per DoF (k+2) (2 w^2 + 3 w + 2) multiply-adds in 3D, (k+2) (2 w + 2) in 2D,
 * w = W / R the window's points per owned point in x and y (R = C k, W = R + k
 * + 1, C = `cells` per brick); 4 w^2 + 4 w + 2 (2D: 4 w + 2) shared-memory
 * words; the 1D scalings (3 W per line of the later stages) and the 3D z
 * carry between segments (6 w^2 / R_s words) are neglected. */
static work count_brick(int dim, int k, int cells) {
  const double R = (double)cells * k, w = (R + k + 1) / R;
  work out;
  out.flops = 2 * (k + 2) * (dim == 2 ? 2 * w + 2 : 2 * w * w + 3 * w + 2);
  out.shared_words = dim == 2 ? 4 * w + 2 : 4 * w * w + 4 * w + 2;
  out.matrix_words = 0;
  out.dram_words = 2;
  return out;
}

/* The bricks' cells in x (and y), as in brick_table of tpmg-cuda-brick.cuh. */
static int brick_cells(int dim, int k, tpmg_precision precision) {
  static const int cells3[9] = {0, 8, 5, 4, 3, 2, 2, 2, 2};
  static const int cells2[2][11] = {{0, 16, 8, 5, 4, 3, 3, 2, 2, 1, 1},
                                    {0, 16, 8, 5, 6, 4, 4, 3, 3, 2, 2}};
  return dim == 3 ? cells3[k] : cells2[precision == TPMG_DOUBLE ? 0 : 1][k];
}

/* ---- building blocks ------------------------------------------------------ */

/* Columns of a row: smoothing (N_VARIANTS variants x smoother kernels),
 * apply x operator kernels, P+R, V-cycle. */
typedef struct {
  int n_smoother, n_apply;
  tpmg_kernel smoother[MAX_KERNELS], apply[MAX_KERNELS];
} kernel_list;

static kernel_list kernels_of(const char *backend) {
  kernel_list l;
  if (strcmp(backend, "cuda") == 0) {
    const tpmg_kernel each[4] = {TPMG_KERNEL_BASIC, TPMG_KERNEL_CONSTANT, TPMG_KERNEL_TILED,
                                 TPMG_KERNEL_THREAD};
    l.n_smoother = 6;
    l.n_apply = 5;
    for (int i = 0; i < 4; ++i)
      l.smoother[i] = l.apply[i] = each[i];
    /* DEFAULT for GLOBAL only (see global_only): its residual then uses the
     * default operator kernel, BRICK, the operator only */
    l.smoother[4] = TPMG_KERNEL_DEFAULT;
    l.apply[4] = TPMG_KERNEL_BRICK;
    /* the tensor-core kernel, FUSED and BOUNDARY in 3D only */
    l.smoother[5] = TPMG_KERNEL_TENSOR;
  } else {
    l.n_smoother = l.n_apply = 1;
    l.smoother[0] = l.apply[0] = TPMG_KERNEL_DEFAULT;
  }
  return l;
}

#define MAX_COMPONENTS ((N_VARIANTS + 1) * MAX_KERNELS + 2)

typedef struct {
  int n;
  char names[MAX_COMPONENTS][40];  /* CSV */
  char titles[MAX_COMPONENTS][12]; /* terminal */
} component_list;

static component_list components_of(const kernel_list *kl) {
  component_list c;
  c.n = 0;
  for (int v = 0; v <= N_VARIANTS; ++v)
    for (int kk = 0; kk < (v < N_VARIANTS ? kl->n_smoother : kl->n_apply); ++kk) {
      const int smooth = v < N_VARIANTS;
      const char *what = smooth ? variant_names[v] : "apply";
      const tpmg_kernel kernel = smooth ? kl->smoother[kk] : kl->apply[kk];
      snprintf(c.names[c.n], sizeof(c.names[0]), "%s%s_%s", smooth ? "smooth_" : "", what,
               kernel_names[kernel]);
      snprintf(c.titles[c.n], sizeof(c.titles[0]), "%.4s-%c", smooth ? what : "appl",
               kernel_letters[kernel]);
      c.n++;
    }
  snprintf(c.names[c.n], sizeof(c.names[0]), "transfer");
  snprintf(c.titles[c.n++], sizeof(c.titles[0]), "P+R");
  snprintf(c.names[c.n], sizeof(c.names[0]), "vcycle");
  snprintf(c.titles[c.n++], sizeof(c.titles[0]), "V-cycle");
  return c;
}

/* The objects of one benchmark row, destroyed by row_destroy. */
typedef struct {
  tpmg_context *ctx;
  tpmg_precision precision;
  int level;
  tpmg_grid *grid;
  tpmg_smoother *smoother[N_VARIANTS][MAX_KERNELS];
  tpmg_kernel kernel; /* of the apply being timed */
  tpmg_smoother *current;
  tpmg_transfer *transfer;
  tpmg_multigrid *mg;
  void *b, *x, *y, *coarse;
} row;

static void row_destroy(row *w) {
  tpmg_vector_destroy(w->ctx, &w->coarse);
  tpmg_vector_destroy(w->ctx, &w->y);
  tpmg_vector_destroy(w->ctx, &w->x);
  tpmg_vector_destroy(w->ctx, &w->b);
  tpmg_multigrid_destroy(&w->mg);
  tpmg_transfer_destroy(&w->transfer);
  for (int v = 0; v < N_VARIANTS; ++v)
    for (int kk = 0; kk < MAX_KERNELS; ++kk)
      tpmg_smoother_destroy(&w->smoother[v][kk]);
  tpmg_grid_destroy(&w->grid);
}

/* The smoothers and the V-cycle iterate on x in place; the transfer restricts
 * the fixed b and adds its prolongation to y, so no value grows faster than
 * linearly over the runs. */
static tpmg_status run_smooth(void *arg) {
  row *w = arg;
  return tpmg_smoother_apply(w->current, 0, w->b, w->x);
}

static tpmg_status run_apply(void *arg) {
  row *w = arg;
  return w->ctx->ops->laplace_kernel(w->ctx, &w->grid->levels[w->level], w->precision, w->kernel,
                                     w->b, w->y);
}

static tpmg_status run_transfer(void *arg) {
  row *w = arg;
  tpmg_status status = tpmg_transfer_restrict(w->transfer, w->b, w->coarse);
  return status ? status : tpmg_transfer_prolongate_add(w->transfer, w->coarse, w->y);
}

static tpmg_status run_vcycle(void *arg) {
  row *w = arg;
  return tpmg_multigrid_vcycle(w->mg, w->b, w->x);
}

#define ROW_CALL(w, call)                                                                          \
  do {                                                                                             \
    tpmg_status row_status_ = (call);                                                              \
    if (row_status_ != TPMG_SUCCESS) {                                                             \
      app_library_error((w)->ctx, #call, row_status_);                                             \
      row_destroy(w);                                                                              \
      return row_status_;                                                                          \
    }                                                                                              \
  } while (0)

/* Set up one (dim, degree, level) and time every component; seconds[c] is NAN
 * for a kernel the backend does not have for this degree. */
static tpmg_status bench_row(tpmg_context *ctx, const options *o, const kernel_list *kl, int dim,
                             int degree, int level, double *times, tpmg_index *n_dofs,
                             double *n_patches, double *n_vertices, double *seconds) {
  row w = {.ctx = ctx, .precision = o->precision, .level = level};
  tpmg_grid_options grid_options = tpmg_grid_options_default();
  grid_options.dim = dim;
  grid_options.degree = degree;
  grid_options.fine_level = level;
  ROW_CALL(&w, tpmg_grid_create(ctx, &grid_options, &w.grid));
  tpmg_index n_coarse = 0;
  ROW_CALL(&w, tpmg_grid_level_size(w.grid, level, n_dofs, NULL));
  ROW_CALL(&w, tpmg_grid_level_size(w.grid, level - 1, &n_coarse, NULL));
  *n_patches = *n_vertices = 1;
  for (int d = 0; d < dim; ++d) {
    *n_patches *= (double)(w.grid->levels[level].cells[d] - 1);
    *n_vertices *= (double)(w.grid->levels[level].cells[d] + 1);
  }
  for (int v = 0; v < N_VARIANTS; ++v)
    for (int kk = 0; kk < kl->n_smoother; ++kk) {
      /* next to explicit kernels, DEFAULT would repeat one of them except in
       * GLOBAL, whose residual then takes the default operator kernel */
      if (kl->smoother[kk] == TPMG_KERNEL_DEFAULT && kl->n_smoother > 1 &&
          v != TPMG_SMOOTHER_GLOBAL)
        continue;
      tpmg_smoother_options smoother_options = tpmg_smoother_options_default();
      smoother_options.variant = (tpmg_smoother_variant)v;
      smoother_options.kernel = kl->smoother[kk];
      tpmg_status status =
          tpmg_smoother_create(w.grid, level, w.precision, &smoother_options, &w.smoother[v][kk]);
      if (status != TPMG_ERROR_UNSUPPORTED)
        ROW_CALL(&w, status);
    }
  ROW_CALL(&w, tpmg_transfer_create(w.grid, level, w.precision, &w.transfer));
  tpmg_multigrid_options mg_options = tpmg_multigrid_options_default();
  mg_options.precision = w.precision;
  ROW_CALL(&w, tpmg_multigrid_create(w.grid, &mg_options, &w.mg));
  ROW_CALL(&w, tpmg_vector_create(ctx, w.precision, *n_dofs, &w.b));
  ROW_CALL(&w, tpmg_vector_create(ctx, w.precision, *n_dofs, &w.x));
  ROW_CALL(&w, tpmg_vector_create(ctx, w.precision, *n_dofs, &w.y));
  ROW_CALL(&w, tpmg_vector_create(ctx, w.precision, n_coarse, &w.coarse));
  ROW_CALL(&w, tpmg_problem_rhs(w.grid, TPMG_RHS_SINE, w.precision, w.b));
  ROW_CALL(&w, tpmg_vector_axpby(ctx, w.precision, *n_dofs, 0.5, w.b, 0.0, w.x));

  int c = 0;
  for (int v = 0; v < N_VARIANTS; ++v)
    for (int kk = 0; kk < kl->n_smoother; ++kk, ++c) {
      seconds[c] = NAN;
      w.current = w.smoother[v][kk];
      if (w.current)
        ROW_CALL(&w, time_median(ctx, run_smooth, &w, o->repeat, times, &seconds[c]));
    }
  for (int kk = 0; kk < kl->n_apply; ++kk, ++c) {
    seconds[c] = NAN;
    w.kernel = kl->apply[kk];
    if (w.kernel == TPMG_KERNEL_THREAD && degree != 1)
      continue;
    ROW_CALL(&w, time_median(ctx, run_apply, &w, o->repeat, times, &seconds[c]));
  }
  ROW_CALL(&w, time_median(ctx, run_transfer, &w, o->repeat, times, &seconds[c++]));
  ROW_CALL(&w, time_median(ctx, run_vcycle, &w, o->repeat, times, &seconds[c++]));
  row_destroy(&w);
  return TPMG_SUCCESS;
}

/* The fastest of the columns [first, first + n): its index, or -1. */
static int fastest(const double *seconds, int first, int n) {
  int best = -1;
  for (int c = first; c < first + n; ++c)
    if (!isnan(seconds[c]) && (best < 0 || seconds[c] < seconds[best]))
      best = c;
  return best;
}

static int run_building_blocks(tpmg_context *ctx, const options *o, FILE *csv, double *times,
                               const limits *lim, int n_dims, const int *dims, int degrees[2][10],
                               const int *n_degrees, int n_rows) {
  const kernel_list kl = kernels_of(o->backend);
  const component_list comp = components_of(&kl);
  const int nk = kl.n_apply, ns = kl.n_smoother, global0 = 0, fused0 = TPMG_SMOOTHER_FUSED * ns,
            boundary0 = TPMG_SMOOTHER_BOUNDARY * ns, apply0 = N_VARIANTS * ns;
  const size_t word = o->precision == TPMG_DOUBLE ? 8 : 4;
  printf(
      "throughput in GDoF/s (n_dofs / time) of one smoothing step (glob, sepa, fuse, boun),\n"
      "one operator apply (appl), one restriction + prolongation, one V-cycle; kernels: B basic,\n"
      "C constant, L tiled (lines per thread), T thread, K brick (the operator only), X tensor\n"
      "cores (FUSED and BOUNDARY in 3D), D default\n"
      "(CUDA: GLOBAL only, its residual by the default operator kernel); a kernel a degree\n"
      "lacks: -\n");
  printf("%3s %2s %3s %11s", "dim", "k", "lvl", "n_dofs");
  for (int c = 0; c < comp.n; ++c)
    printf(" %9s", comp.titles[c]);
  printf("\n");
  fflush(stdout);
  if (csv) {
    fprintf(csv, "dim,degree,level,n_dofs,precision,backend,threads,repeat");
    for (int c = 0; c < comp.n; ++c)
      fprintf(csv, ",%s_ms", comp.names[c]);
    for (int c = 0; c < comp.n; ++c)
      fprintf(csv, ",%s_gdofs", comp.names[c]);
    fprintf(csv, ",fused_flops_per_dof,fused_shared_bytes_per_dof,fused_matrix_bytes_per_dof,"
                 "fused_dram_bytes_per_dof,apply_flops_per_dof,apply_shared_bytes_per_dof,"
                 "fused_best,fused_best_fp_fraction,fused_best_shared_fraction,"
                 "fused_best_dram_fraction,fused_over_global,apply_best,apply_best_fp_fraction,"
                 "limit_copy_bytes,limit_shared_bytes,limit_flops,boundary_dram_bytes_per_dof,"
                 "boundary_best,boundary_over_fused\n");
  }
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
              level, app_group((long long)app_level_dofs(dim, k, cells, level), group));
      tpmg_index n_dofs = 0;
      double n_patches = 0, n_vertices = 0, seconds[MAX_COMPONENTS];
      if (bench_row(ctx, o, &kl, dim, k, level, times, &n_dofs, &n_patches, &n_vertices, seconds) !=
          TPMG_SUCCESS)
        return APP_EXIT_LIBRARY;
      const double n = (double)n_dofs;
      printf("%3d %2d %3d %11lld", dim, k, level, (long long)n_dofs);
      for (int c = 0; c < comp.n; ++c) {
        if (isnan(seconds[c]))
          printf(" %9s", "-");
        else
          printf(" %9.3f", 1e-9 * n / seconds[c]);
      }
      printf("\n");
      fflush(stdout);
      /* the fused smoothing step and the operator against the roofs */
      const int bf = fastest(seconds, fused0, ns), bg = fastest(seconds, global0, ns),
                bb = fastest(seconds, boundary0, ns), ba = fastest(seconds, apply0, nk);
      const tpmg_kernel kb = kl.smoother[bb - boundary0];
      const tpmg_kernel kf = kl.smoother[bf - fused0], ka = kl.apply[ba - apply0];
      /* the CPU backend's kernels are dense, as BASIC; so are the tensor-core
       * contractions of TENSOR (counted without their padding to 8s) */
      const int sparse_f =
          kf == TPMG_KERNEL_CONSTANT || kf == TPMG_KERNEL_TILED || kf == TPMG_KERNEL_THREAD;
      const int sparse_a =
          ka == TPMG_KERNEL_CONSTANT || ka == TPMG_KERNEL_TILED || ka == TPMG_KERNEL_THREAD;
      const work wf = count_fused(dim, k, n, n_patches, sparse_f),
                 wa = ka == TPMG_KERNEL_BRICK
                          ? count_brick(dim, k, brick_cells(dim, k, o->precision))
                          : count_apply(dim, k, n, n_vertices, sparse_a);
      const double rate_f = n / seconds[bf], rate_a = n / seconds[ba];
      /* BASIC kernels also load every matrix entry from on-chip memory (L1);
       * THREAD kernels keep everything in registers */
      const double smem_f =
          kf == TPMG_KERNEL_THREAD
              ? 0
              : word * (wf.shared_words + (kf == TPMG_KERNEL_BASIC ? wf.matrix_words : 0));
      const double fp = lim->measured ? lim->flops[o->precision] : NAN;
      const double fp_f = rate_f * wf.flops / fp, sh_f = rate_f * smem_f / lim->shared,
                   dr_f = rate_f * wf.dram_words * word / lim->copy;
      const double fp_a = wa.flops * rate_a / fp;
      if (n_roof < 32)
        snprintf(roof_lines[n_roof++], sizeof(roof_lines[0]),
                 "%3d %2d %-8s %7.2f %7.0f %7.0f %5.1f%% %7.2f %5.1f%% %5.1f%% %5.2f | %-8s %7.2f "
                 "%5.2f | %-8s %7.2f %6.0f %5.1f%%",
                 dim, k, kernel_names[kf], 1e-9 * rate_f, wf.flops, smem_f, 100 * fp_f,
                 1e-12 * rate_f * smem_f, 100 * sh_f, 100 * dr_f, seconds[bg] / seconds[bf],
                 kernel_names[kb], 1e-9 * n / seconds[bb], seconds[bf] / seconds[bb],
                 kernel_names[ka], 1e-9 * rate_a, wa.flops, 100 * fp_a);
      if (csv) {
        fprintf(csv, "%d,%d,%d,%lld,%s,%s,%d,%d", dim, k, level, (long long)n_dofs,
                precision_names[o->precision], o->backend, ctx->n_threads,
                o->repeat);
        for (int c = 0; c < comp.n; ++c)
          isnan(seconds[c]) ? fprintf(csv, ",") : fprintf(csv, ",%.6g", 1e3 * seconds[c]);
        for (int c = 0; c < comp.n; ++c)
          isnan(seconds[c]) ? fprintf(csv, ",") : fprintf(csv, ",%.6g", 1e-9 * n / seconds[c]);
        fprintf(csv,
                ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%.4g,%.4g,%.4g,%.4g,%s,%.4g,%.4g,%.4g,%.4g,"
                "%.6g,%s,%.4g\n",
                wf.flops, word * wf.shared_words, word * wf.matrix_words, word * wf.dram_words,
                wa.flops, word * wa.shared_words, kernel_names[kf], fp_f, sh_f, dr_f,
                seconds[bg] / seconds[bf], kernel_names[ka], fp_a, lim->copy, lim->shared, fp,
                word * boundary_dram_words(dim, k), kernel_names[kb], seconds[bf] / seconds[bb]);
        fflush(csv);
      }
    }
  }
  printf("\nthe fastest fused smoothing step and operator against the roofs (counted work per "
         "DoF;\nsmem: shared-memory words, plus the matrix loads of BASIC; DRAM: 3 2^dim words),\n"
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
  tpmg_smoother *smoother[TPMG_MAX_LEVELS];
  tpmg_transfer *transfer[TPMG_MAX_LEVELS];
  tpmg_multigrid *mg;
  void *b[TPMG_MAX_LEVELS], *x[TPMG_MAX_LEVELS], *r[TPMG_MAX_LEVELS];
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
  const tpmg_level *lvl = &s->grid->levels[s->l];
  const tpmg_index n = lvl->n_dofs, nL = s->grid->levels[s->L].n_dofs;
  double dot;
  switch (s->what) {
  case B_SMOOTH:
    return tpmg_smoother_apply(s->smoother[s->l], 0, s->b[s->l], s->x[s->l]);
  case B_APPLY:
    return ctx->ops->laplace(ctx, lvl, s->p, s->x[s->l], s->r[s->l]);
  case B_UPDATE:
    return ctx->ops->axpby(ctx, s->p, n, 1.0, s->b[s->l], -1.0, s->r[s->l]);
  case B_RESTRICT:
    return tpmg_transfer_restrict(s->transfer[s->l], s->r[s->l], s->b[s->l - 1]);
  case B_PROLONGATE:
    return tpmg_transfer_prolongate_add(s->transfer[s->l], s->x[s->l - 1], s->r[s->l]);
  case B_ZERO:
    return ctx->ops->set(ctx, s->p, n, 0.0, s->r[s->l]);
  case B_VCYCLE:
    return tpmg_multigrid_vcycle(s->mg, s->b[s->L], s->x[s->L]);
  case B_APPLY_DOUBLE:
    return ctx->ops->laplace(ctx, &s->grid->levels[s->L], TPMG_DOUBLE, s->d[0], s->d[1]);
  case B_DOT:
    return ctx->ops->dot(ctx, TPMG_DOUBLE, nL, s->d[0], s->d[1], &dot);
  case B_AXPBY:
    return ctx->ops->axpby(ctx, TPMG_DOUBLE, nL, 1e-3, s->d[0], 1.0, s->d[2]);
  case B_TO_P:
    return ctx->ops->convert(ctx, nL, TPMG_DOUBLE, s->d[0], s->p, s->r[s->L]);
  default:
    return ctx->ops->convert(ctx, nL, s->p, s->r[s->L], TPMG_DOUBLE, s->d[2]);
  }
}

static void breakdown_destroy(breakdown *s) {
  for (int i = 0; i < 3; ++i)
    tpmg_vector_destroy(s->ctx, &s->d[i]);
  for (int l = 0; l < TPMG_MAX_LEVELS; ++l) {
    tpmg_vector_destroy(s->ctx, &s->b[l]);
    tpmg_vector_destroy(s->ctx, &s->x[l]);
    tpmg_vector_destroy(s->ctx, &s->r[l]);
    tpmg_smoother_destroy(&s->smoother[l]);
    tpmg_transfer_destroy(&s->transfer[l]);
  }
  tpmg_multigrid_destroy(&s->mg);
}

#define BD_CALL(call)                                                                              \
  do {                                                                                             \
    tpmg_status bd_status_ = (call);                                                               \
    if (bd_status_ != TPMG_SUCCESS) {                                                              \
      app_library_error(ctx, #call, bd_status_);                                                   \
      breakdown_destroy(&s);                                                                       \
      tpmg_grid_destroy(&grid);                                                                    \
      return APP_EXIT_LIBRARY;                                                                     \
    }                                                                                              \
  } while (0)

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
  double a[TPMG_MULTI_MAX], result[TPMG_MULTI_MAX + 1];
} multi_call;

static tpmg_status run_multi(void *arg) {
  multi_call *c = arg;
  const void *const *x = (const void *const *)c->v;
  if (c->which == 0)
    return c->ctx->ops->dots(c->ctx, TPMG_DOUBLE, c->n, c->m, x, c->v[c->m], c->result);
  return c->ctx->ops->axpys(c->ctx, TPMG_DOUBLE, c->n, c->m, c->a, x, c->v[c->m],
                            c->which == 1 ? c->result : NULL);
}

/* The seconds of dots and axpys (with the norm) on m = 1..it basis vectors of
 * n doubles, [m - 1], and of axpys without the norm on `it` (x += Z y), each
 * on distinct vectors (it + 1 of them, allocated here). */
static tpmg_status time_multi(tpmg_context *ctx, tpmg_index n, int it, int repeat, double *times,
                              double *dots, double *axpys, double *update) {
  void *v[TPMG_MULTI_MAX + 1] = {NULL};
  tpmg_status status = TPMG_SUCCESS;
  for (int i = 0; i <= it && status == TPMG_SUCCESS; ++i) {
    status = tpmg_vector_create(ctx, TPMG_DOUBLE, n, &v[i]);
    if (status == TPMG_SUCCESS)
      status = tpmg_vector_set(ctx, TPMG_DOUBLE, n, 1.0 / (i + 1), v[i]);
  }
  multi_call c = {ctx, n, 0, 0, v, {0}, {0}};
  for (int i = 0; i < TPMG_MULTI_MAX; ++i)
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

static int run_breakdown_mode(tpmg_context *ctx, const options *o, FILE *csv, double *times,
                              int dim, int k, int L) {
  const tpmg_precision p = o->mode == TPMG_MODE_MIXED ? TPMG_FLOAT : TPMG_DOUBLE;
  tpmg_grid *grid = NULL;
  breakdown s;
  memset(&s, 0, sizeof(s));
  s.ctx = ctx;
  s.p = p;
  s.L = L;
  tpmg_grid_options go = tpmg_grid_options_default();
  go.dim = dim;
  go.degree = k;
  go.fine_level = L;
  BD_CALL(tpmg_grid_create(ctx, &go, &grid));
  s.grid = grid;
  const tpmg_index nL = grid->levels[L].n_dofs;
  char group[32];
  fprintf(stderr, "tpmg-bench: breakdown %dD Q%d level %d (%s DoFs), %s\n", dim, k, L,
          app_group((long long)nL, group), mode_names[o->mode]);
  for (int l = 0; l <= L; ++l) {
    const tpmg_index n = grid->levels[l].n_dofs;
    BD_CALL(tpmg_vector_create(ctx, p, n, &s.b[l]));
    BD_CALL(tpmg_vector_create(ctx, p, n, &s.x[l]));
    BD_CALL(tpmg_vector_create(ctx, p, n, &s.r[l]));
    if (l >= 1) {
      BD_CALL(tpmg_smoother_create(grid, l, p, NULL, &s.smoother[l]));
      BD_CALL(tpmg_transfer_create(grid, l, p, &s.transfer[l]));
    }
  }
  for (int i = 0; i < 3; ++i)
    BD_CALL(tpmg_vector_create(ctx, TPMG_DOUBLE, nL, &s.d[i]));
  /* data: the right-hand side on the finest level, restricted below */
  BD_CALL(tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, s.d[0]));
  BD_CALL(tpmg_vector_axpby(ctx, TPMG_DOUBLE, nL, 0.5, s.d[0], 0.0, s.d[1]));
  BD_CALL(tpmg_vector_axpby(ctx, TPMG_DOUBLE, nL, 0.25, s.d[0], 0.0, s.d[2]));
  BD_CALL(tpmg_vector_convert(ctx, nL, TPMG_DOUBLE, s.d[0], p, s.b[L]));
  for (int l = L; l >= 1; --l)
    BD_CALL(tpmg_transfer_restrict(s.transfer[l], s.b[l], s.b[l - 1]));
  for (int l = 0; l <= L; ++l) {
    const tpmg_index n = grid->levels[l].n_dofs;
    BD_CALL(tpmg_vector_axpby(ctx, p, n, 0.5, s.b[l], 0.0, s.x[l]));
    BD_CALL(tpmg_vector_axpby(ctx, p, n, 0.25, s.b[l], 0.0, s.r[l]));
  }
  tpmg_multigrid_options mo = tpmg_multigrid_options_default();
  mo.precision = p;
  BD_CALL(tpmg_multigrid_create(grid, &mo, &s.mg));

  level_times lt[TPMG_MAX_LEVELS];
  memset(lt, 0, sizeof(lt));
  for (int l = 1; l <= L; ++l) {
    BD_CALL(time_what(&s, B_SMOOTH, l, o->repeat, times, &lt[l].smooth));
    BD_CALL(time_what(&s, B_APPLY, l, o->repeat, times, &lt[l].residual_apply));
    BD_CALL(time_what(&s, B_UPDATE, l, o->repeat, times, &lt[l].residual_update));
    BD_CALL(time_what(&s, B_RESTRICT, l, o->repeat, times, &lt[l].restrict_));
    BD_CALL(time_what(&s, B_PROLONGATE, l, o->repeat, times, &lt[l].prolongate));
    BD_CALL(time_what(&s, B_ZERO, l - 1, o->repeat, times, &lt[l].zero));
  }
  double vcycle, apply_double, dot, axpby, to_p = 0, from_p = 0, zero_top, coarse;
  BD_CALL(time_what(&s, B_ZERO, L, o->repeat, times, &zero_top));
  BD_CALL(time_what(&s, B_VCYCLE, L, o->repeat, times, &vcycle));
  BD_CALL(time_what(&s, B_APPLY_DOUBLE, L, o->repeat, times, &apply_double));
  BD_CALL(time_what(&s, B_DOT, L, o->repeat, times, &dot));
  BD_CALL(time_what(&s, B_AXPBY, L, o->repeat, times, &axpby));
  if (p != TPMG_DOUBLE) {
    BD_CALL(time_what(&s, B_TO_P, L, o->repeat, times, &to_p));
    BD_CALL(time_what(&s, B_FROM_P, L, o->repeat, times, &from_p));
  }
  /* the coarse solve: the measured V-cycle minus the modelled levels >= 1 */
  double levels_sum = 0, per_level[TPMG_MAX_LEVELS];
  for (int l = 1; l <= L; ++l) {
    per_level[l] = 2 * lt[l].smooth + lt[l].residual_apply + lt[l].residual_update +
                   lt[l].restrict_ + lt[l].prolongate + lt[l].zero;
    levels_sum += per_level[l];
  }
  coarse = vcycle - levels_sum > 0 ? vcycle - levels_sum : 0;
  per_level[0] = coarse;
  breakdown_destroy(&s);

  /* the solve itself, timed once, for its iteration count and time */
  tpmg_solver_options so = tpmg_solver_options_default();
  so.mode = o->mode;
  tpmg_solver *solver = NULL;
  void *b = NULL, *x = NULL;
  BD_CALL(tpmg_vector_create(ctx, TPMG_DOUBLE, nL, &b));
  BD_CALL(tpmg_vector_create(ctx, TPMG_DOUBLE, nL, &x));
  tpmg_status status = tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b);
  if (status == TPMG_SUCCESS)
    status = tpmg_solver_create(grid, &so, &solver);
  tpmg_solver_result result = {0};
  double solve_seconds = NAN;
  /* a first solve to warm up, then the timed one, both from x = 0 */
  if (status == TPMG_SUCCESS)
    status = tpmg_solver_solve(solver, b, x, &result);
  if (status == TPMG_SUCCESS)
    status = tpmg_vector_set(ctx, TPMG_DOUBLE, nL, 0.0, x);
  if (status == TPMG_SUCCESS)
    status = ctx->ops->stopwatch(ctx, 1, NULL);
  if (status == TPMG_SUCCESS)
    status = tpmg_solver_solve(solver, b, x, &result);
  if (status == TPMG_SUCCESS)
    status = ctx->ops->stopwatch(ctx, 0, &solve_seconds);
  int restart = 0;
  if (status == TPMG_SUCCESS)
    tpmg_solver_restart(solver, &restart);
  tpmg_solver_destroy(&solver);
  tpmg_vector_destroy(ctx, &b);
  tpmg_vector_destroy(ctx, &x);
  if (status != TPMG_SUCCESS) {
    app_library_error(ctx, "tpmg_solver_solve", status);
    tpmg_grid_destroy(&grid);
    return APP_EXIT_LIBRARY;
  }

  /* the model of the solve */
  const int it = result.iterations;
  const double n_vcycles = it;
  /* Gram-Schmidt per basis length (the bases of longer solves are restarted
   * or split into TPMG_MULTI_MAX vectors per pass; not modelled) */
  double gs_dots[TPMG_MULTI_MAX], gs_axpys[TPMG_MULTI_MAX], update = 0, gs = 0;
  if (it > TPMG_MULTI_MAX) {
    fprintf(stderr, "tpmg-bench: the breakdown models at most %d iterations, the solve took %d\n",
            TPMG_MULTI_MAX, it);
    tpmg_grid_destroy(&grid);
    return APP_EXIT_LIBRARY;
  }
  if (it > 0) {
    status = time_multi(ctx, nL, it, o->repeat, times, gs_dots, gs_axpys, &update);
    if (status != TPMG_SUCCESS) {
      app_library_error(ctx, "time_multi", status);
      tpmg_grid_destroy(&grid);
      return APP_EXIT_LIBRARY;
    }
  }
  tpmg_grid_destroy(&grid);
  for (int j = 0; j < it; ++j)
    gs += gs_dots[j] + gs_axpys[j];
  enum { C_LOWER, C_SMOOTH, C_MATVEC, C_TRANSFER, C_UPDATE, C_GMRES_MATVEC, C_GMRES_VECTOR, C_N };
  static const char *const cname[C_N] = {"levels < L",
                                         "level L smooth",
                                         "level L mat-vec",
                                         "level L restrict & prolongate",
                                         "level L vector update",
                                         "GMRES mat-vec",
                                         "GMRES vector ops"};
  double c[C_N];
  c[C_LOWER] = n_vcycles * (levels_sum - per_level[L] + coarse + lt[L].zero);
  c[C_SMOOTH] = n_vcycles * 2 * lt[L].smooth;
  c[C_MATVEC] = n_vcycles * lt[L].residual_apply;
  c[C_TRANSFER] = n_vcycles * (lt[L].restrict_ + lt[L].prolongate);
  /* the residual update, the zero start of the preconditioner and in mixed
   * mode its conversions */
  c[C_UPDATE] = n_vcycles * (lt[L].residual_update + zero_top + to_p + from_p);
  /* operator applies: one per iteration, the first residual, the one after
   * the cycle, and the final check */
  c[C_GMRES_MATVEC] = (it + 3) * apply_double;
  /* Gram-Schmidt: iteration j one dots and one axpys on j + 1 vectors (no
   * second pass: it is rare, and not counted); x += Z y one axpys; dots: |b|,
   * the first residual and the two final residuals; axpbys: the first
   * residual and basis vector, the scaling of it - 1 basis vectors, the two
   * final residuals */
  c[C_GMRES_VECTOR] = gs + update + 4 * dot + (it + 3) * axpby;
  double model = 0;
  for (int i = 0; i < C_N; ++i)
    model += c[i];
  printf("breakdown: %dD Q%d level %d, %lld DoFs, GMRES(%d) %s, %d iterations\n", dim, k, L,
         (long long)nL, restart, mode_names[o->mode], it);
  printf("  solve (the second of two): %.4f s; the model from the components below: %.4f s\n",
         solve_seconds, model);
  printf("  %-30s %10s %7s\n", "component (paper Fig. 11/12)", "ms", "share");
  for (int i = 0; i < C_N; ++i)
    printf("  %-30s %10.2f %6.1f%%\n", cname[i], 1e3 * c[i], 100 * c[i] / model);
  printf("  one V-cycle: %.3f ms measured; by level (paper Fig. 13), ms and share:\n",
         1e3 * vcycle);
  for (int l = L; l >= 0; --l)
    printf("    level %2d %10.3f %6.1f%%%s\n", l, 1e3 * per_level[l],
           100 * per_level[l] / (levels_sum + coarse),
           l == 0 ? " (coarse solve and overhead)" : "");
  printf("  Gram-Schmidt, ms, for 1..%d basis vectors: dots", it);
  for (int j = 0; j < it; ++j)
    printf(" %.3f", 1e3 * gs_dots[j]);
  printf("; axpys with the norm");
  for (int j = 0; j < it; ++j)
    printf(" %.3f", 1e3 * gs_axpys[j]);
  printf("; x += Z y %.3f\n", 1e3 * update);
  printf("  finest level, ms: smooth %.3f, mat-vec %.3f, update %.3f, restrict %.3f, prolongate "
         "%.3f | double: apply %.3f, dot %.3f, axpby %.3f, convert %.3f + %.3f\n",
         1e3 * lt[L].smooth, 1e3 * lt[L].residual_apply, 1e3 * lt[L].residual_update,
         1e3 * lt[L].restrict_, 1e3 * lt[L].prolongate, 1e3 * apply_double, 1e3 * dot, 1e3 * axpby,
         1e3 * to_p, 1e3 * from_p);
  if (csv) {
    fprintf(csv, "dim,degree,level,n_dofs,mode,iterations,restart,solve_s,model_s");
    for (int i = 0; i < C_N; ++i)
      fprintf(csv, ",%s_s", cname[i]);
    for (int l = 0; l <= L; ++l)
      fprintf(csv, ",vcycle_level%d_s", l);
    fprintf(csv, ",vcycle_s,smooth_L_s,apply_L_s,apply_double_L_s,dot_L_s,axpby_L_s\n");
    fprintf(csv, "%d,%d,%d,%lld,%s,%d,%d,%.6g,%.6g", dim, k, L, (long long)nL, mode_names[o->mode],
            it, restart, solve_seconds, model);
    for (int i = 0; i < C_N; ++i)
      fprintf(csv, ",%.6g", c[i]);
    for (int l = 0; l <= L; ++l)
      fprintf(csv, ",%.6g", per_level[l]);
    fprintf(csv, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", vcycle, lt[L].smooth, lt[L].residual_apply,
            apply_double, dot, axpby);
  }
  return 0;
}

int main(int argc, char **argv) {
  app_set_program("tpmg-bench");
  options o = parse_options(argc, argv);

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

  FILE *csv = NULL;
  if (o.csv) {
    csv = fopen(o.csv, "w");
    if (!csv) {
      fprintf(stderr, "tpmg-bench: --csv %s: cannot open for writing\n", o.csv);
      return APP_EXIT_LIBRARY;
    }
  }

  tpmg_context_options context_options = tpmg_context_options_default();
  context_options.backend = o.backend;
  context_options.n_threads = o.threads;
  tpmg_context *ctx = NULL;
  tpmg_status status = tpmg_context_create(&context_options, &ctx);
  if (status != TPMG_SUCCESS) {
    if (csv)
      fclose(csv);
    return app_library_error(NULL, "tpmg_context_create", status);
  }
  int threads = 1;
  tpmg_context_threads(ctx, &threads);

  double *times = malloc((size_t)(o.repeat > 5 ? o.repeat : 5) * sizeof *times);
  if (!times) {
    fprintf(stderr, "tpmg-bench: out of memory for --repeat %d\n", o.repeat);
    tpmg_context_destroy(&ctx);
    if (csv)
      fclose(csv);
    return APP_EXIT_LIBRARY;
  }

  int exit_status = 0;
  if (o.breakdown) {
    printf("tpmg-bench: %s backend, %d thread%s, breakdown, median of %d after one warm-up\n",
           o.backend, threads, threads == 1 ? "" : "s", o.repeat);
    for (int di = 0; di < n_dims && exit_status == 0; ++di)
      for (int ki = 0; ki < n_degrees[di] && exit_status == 0; ++ki) {
        int cells[3] = {1, 1, 1}, k = degrees[di][ki];
        int level = o.level ? o.level : app_choose_level(dims[di], k, cells, o.dofs);
        exit_status = run_breakdown_mode(ctx, &o, csv, times, dims[di], k, level);
      }
  } else {
    limits lim;
    status = measure_limits(ctx, o.repeat > 5 ? o.repeat : 5, times, &lim);
    if (status != TPMG_SUCCESS) {
      exit_status = app_library_error(ctx, "measure_limits", status);
    } else {
      printf("tpmg-bench: %s backend, %d thread%s, %s, median of %d after one warm-up "
             "(%s)\n",
             o.backend, threads, threads == 1 ? "" : "s",
             precision_names[o.precision], o.repeat,
             strcmp(o.backend, "cpu") ? "CUDA events" : "wall clock");
      printf("measured limits: copy %.2f TB/s (read + write)", 1e-12 * lim.copy);
      if (lim.measured)
        printf(", shared-memory loads %.2f TB/s, FP64 FMA %.2f TFLOP/s, FP32 FMA %.2f TFLOP/s",
               1e-12 * lim.shared, 1e-12 * lim.flops[TPMG_DOUBLE], 1e-12 * lim.flops[TPMG_FLOAT]);
      printf("\n");
      exit_status =
          run_building_blocks(ctx, &o, csv, times, &lim, n_dims, dims, degrees, n_degrees, n_rows);
    }
  }

  free(times);
  tpmg_context_destroy(&ctx);
  if (csv && fclose(csv) != 0 && exit_status == 0) {
    fprintf(stderr, "tpmg-bench: --csv %s: write failed\n", o.csv);
    exit_status = APP_EXIT_LIBRARY;
  }
  return exit_status;
}
