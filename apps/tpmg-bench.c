/* tpmg-bench: time the building blocks of the multigrid solver on the finest
 * level (one smoothing step per smoother variant, one operator apply, one
 * restriction + prolongation pair, one V-cycle) for a range of dimensions and
 * degrees. Each time is the median of --repeat runs after one warm-up run, the
 * context synchronized before every clock reading. Run `tpmg-bench --help`. */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-app-common.h"
#include "tpmg.h"

#define DEFAULT_TARGET_DOFS 1e6

enum {
  COMPONENT_SMOOTH_GLOBAL,
  COMPONENT_SMOOTH_SEPARATE,
  COMPONENT_SMOOTH_FUSED,
  COMPONENT_APPLY,
  COMPONENT_TRANSFER,
  COMPONENT_VCYCLE,
  N_COMPONENTS
};

static const char *const component_names[N_COMPONENTS] = {
    "smooth_global", "smooth_separate", "smooth_fused", "apply", "transfer", "vcycle"};
static const char *const component_titles[N_COMPONENTS] = {"global", "separate", "fused",
                                                           "apply",  "P+R",      "V-cycle"};
static const char *const precision_names[] = {"double", "float", NULL};
static const char *const backend_names[] = {"cpu", "cuda"};

typedef struct {
  int dim;    /* 2, 3, or 0 for both */
  int degree; /* 0 for all */
  int level;  /* 0: chosen by --dofs */
  double dofs;
  tpmg_precision precision;
  tpmg_backend backend;
  int threads;
  int repeat;
  const char *csv;
} options;

static void print_help(void) {
  printf("Usage: tpmg-bench [options]\n"
         "Time one smoothing step (variants global, separate, fused), one operator apply, one\n"
         "restriction + prolongation pair and one V-cycle on the finest level, per dimension\n"
         "and degree. Times are medians of --repeat runs after one warm-up run.\n"
         "\n"
         "  --dim 2|3|all          dimensions (default all)\n"
         "  --degree k|all         degrees, 1..10 in 2D, 1..8 in 3D (default all)\n"
         "  --level L              finest level, >= 1, the same for every degree\n"
         "  --dofs N               per degree, the level with the DoF count nearest to N\n"
         "                         (default 1000000; excludes --level)\n"
         "  --precision double|float  arithmetic (default double)\n"
         "  --backend cpu|cuda     where it runs (default cpu)\n"
         "  --threads n            CPU threads, >= 1 (default: OpenMP's default)\n"
         "  --repeat n             timed runs per component, >= 1 (default 5)\n"
         "  --csv FILE             also write the results as CSV to FILE\n"
         "  --help                 print this help and exit\n"
         "\n"
         "Exit status: 0 success, 1 library or file error, 2 bad option.\n");
}

static options parse_options(int argc, char **argv) {
  options o = {.dofs = DEFAULT_TARGET_DOFS, .repeat = 5};
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

/* The objects of one benchmark row, destroyed by row_destroy. */
typedef struct {
  tpmg_context *ctx;
  tpmg_precision precision;
  tpmg_grid *grid;
  tpmg_operator *op;
  tpmg_smoother *smoother[3];
  tpmg_transfer *transfer;
  tpmg_multigrid *mg;
  void *b, *x, *y, *coarse;
  int component; /* what time_component runs */
} row;

static void row_destroy(row *w) {
  tpmg_vector_destroy(w->ctx, &w->coarse);
  tpmg_vector_destroy(w->ctx, &w->y);
  tpmg_vector_destroy(w->ctx, &w->x);
  tpmg_vector_destroy(w->ctx, &w->b);
  tpmg_multigrid_destroy(&w->mg);
  tpmg_transfer_destroy(&w->transfer);
  for (int v = 0; v < 3; ++v)
    tpmg_smoother_destroy(&w->smoother[v]);
  tpmg_operator_destroy(&w->op);
  tpmg_grid_destroy(&w->grid);
}

/* One run of the current component. The smoothers and the V-cycle iterate on
 * x in place; the transfer restricts the fixed b and adds its prolongation to
 * y, so no value grows faster than linearly over the runs. */
static tpmg_status run_component(row *w) {
  switch (w->component) {
  case COMPONENT_SMOOTH_GLOBAL:
  case COMPONENT_SMOOTH_SEPARATE:
  case COMPONENT_SMOOTH_FUSED:
    return tpmg_smoother_apply(w->smoother[w->component - COMPONENT_SMOOTH_GLOBAL], 0, w->b, w->x);
  case COMPONENT_APPLY:
    return tpmg_operator_apply(w->op, w->b, w->y);
  case COMPONENT_TRANSFER: {
    tpmg_status status = tpmg_transfer_restrict(w->transfer, w->b, w->coarse);
    return status ? status : tpmg_transfer_prolongate_add(w->transfer, w->coarse, w->y);
  }
  default:
    return tpmg_multigrid_vcycle(w->mg, w->b, w->x);
  }
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median seconds of `repeat` synchronized runs after one warm-up run. */
static tpmg_status time_component(row *w, int repeat, double *times, double *median) {
  tpmg_status status = run_component(w);
  for (int rep = 0; rep < repeat && status == TPMG_SUCCESS; ++rep) {
    status = tpmg_context_synchronize(w->ctx);
    double start = app_now();
    if (status == TPMG_SUCCESS)
      status = run_component(w);
    if (status == TPMG_SUCCESS)
      status = tpmg_context_synchronize(w->ctx);
    times[rep] = app_now() - start;
  }
  if (status != TPMG_SUCCESS)
    return status;
  qsort(times, (size_t)repeat, sizeof *times, compare_doubles);
  *median = repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
  return TPMG_SUCCESS;
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
 * for a smoother variant the backend does not support. */
static tpmg_status bench_row(tpmg_context *ctx, const options *o, int dim, int degree, int level,
                             double *times, tpmg_index *n_dofs, double seconds[N_COMPONENTS]) {
  row w = {.ctx = ctx, .precision = o->precision};
  tpmg_grid_options grid_options = tpmg_grid_options_default();
  grid_options.dim = dim;
  grid_options.degree = degree;
  grid_options.fine_level = level;
  ROW_CALL(&w, tpmg_grid_create(ctx, &grid_options, &w.grid));
  tpmg_index n_coarse = 0;
  ROW_CALL(&w, tpmg_grid_level_size(w.grid, level, n_dofs, NULL));
  ROW_CALL(&w, tpmg_grid_level_size(w.grid, level - 1, &n_coarse, NULL));
  ROW_CALL(&w, tpmg_operator_create(w.grid, level, w.precision, &w.op));
  for (int v = 0; v < 3; ++v) {
    tpmg_smoother_options smoother_options = tpmg_smoother_options_default();
    smoother_options.variant = (tpmg_smoother_variant)v;
    tpmg_status status =
        tpmg_smoother_create(w.grid, level, w.precision, &smoother_options, &w.smoother[v]);
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

  for (int c = 0; c < N_COMPONENTS; ++c) {
    seconds[c] = NAN;
    if (c <= COMPONENT_SMOOTH_FUSED && !w.smoother[c - COMPONENT_SMOOTH_GLOBAL])
      continue;
    w.component = c;
    ROW_CALL(&w, time_component(&w, o->repeat, times, &seconds[c]));
  }
  row_destroy(&w);
  return TPMG_SUCCESS;
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

  double *times = malloc((size_t)o.repeat * sizeof *times);
  if (!times) {
    fprintf(stderr, "tpmg-bench: out of memory for --repeat %d\n", o.repeat);
    tpmg_context_destroy(&ctx);
    if (csv)
      fclose(csv);
    return APP_EXIT_LIBRARY;
  }

  printf("tpmg-bench: %s backend, %d thread%s, %s, median of %d after one warm-up\n",
         backend_names[o.backend], threads, threads == 1 ? "" : "s", precision_names[o.precision],
         o.repeat);
  printf("time per call in ms | throughput in MDoF/s\n");
  printf("%3s %3s %5s %12s", "dim", "k", "level", "n_dofs");
  for (int c = 0; c < N_COMPONENTS; ++c)
    printf(" %9s", component_titles[c]);
  printf(" |");
  for (int c = 0; c < N_COMPONENTS; ++c)
    printf(" %9s", component_titles[c]);
  printf("\n");
  fflush(stdout);
  if (csv) {
    fprintf(csv, "dim,degree,level,n_dofs,precision,backend,threads,repeat");
    for (int c = 0; c < N_COMPONENTS; ++c)
      fprintf(csv, ",%s_ms", component_names[c]);
    for (int c = 0; c < N_COMPONENTS; ++c)
      fprintf(csv, ",%s_mdofs", component_names[c]);
    fprintf(csv, "\n");
  }

  int exit_status = 0, done = 0;
  for (int di = 0; di < n_dims && exit_status == 0; ++di) {
    int dim = dims[di];
    int cells[3] = {1, 1, 1};
    for (int ki = 0; ki < n_degrees[di] && exit_status == 0; ++ki) {
      int k = degrees[di][ki];
      int level = o.level ? o.level : app_choose_level(dim, k, cells, o.dofs);
      char group[32];
      fprintf(stderr, "tpmg-bench: [%d/%d] %dD Q%d level %d (%s DoFs)\n", ++done, n_rows, dim, k,
              level, app_group((long long)app_level_dofs(dim, k, cells, level), group));
      tpmg_index n_dofs = 0;
      double seconds[N_COMPONENTS];
      if (bench_row(ctx, &o, dim, k, level, times, &n_dofs, seconds) != TPMG_SUCCESS) {
        exit_status = APP_EXIT_LIBRARY;
        break;
      }
      /* milliseconds, then MDoF/s; "-" (empty in CSV) for an unsupported variant */
      double values[2 * N_COMPONENTS];
      for (int c = 0; c < N_COMPONENTS; ++c) {
        values[c] = 1e3 * seconds[c];
        values[N_COMPONENTS + c] = 1e-6 * (double)n_dofs / seconds[c];
      }
      printf("%3d %3d %5d %12lld", dim, k, level, (long long)n_dofs);
      for (int c = 0; c < 2 * N_COMPONENTS; ++c) {
        if (c == N_COMPONENTS)
          printf(" |");
        if (isnan(values[c]))
          printf(" %9s", "-");
        else
          printf(c < N_COMPONENTS ? " %9.3f" : " %9.1f", values[c]);
      }
      printf("\n");
      fflush(stdout);
      if (csv) {
        fprintf(csv, "%d,%d,%d,%lld,%s,%s,%d,%d", dim, k, level, (long long)n_dofs,
                precision_names[o.precision], backend_names[o.backend], threads, o.repeat);
        for (int c = 0; c < 2 * N_COMPONENTS; ++c) {
          if (isnan(values[c]))
            fprintf(csv, ",");
          else
            fprintf(csv, ",%.6g", values[c]);
        }
        fprintf(csv, "\n");
        fflush(csv);
      }
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
