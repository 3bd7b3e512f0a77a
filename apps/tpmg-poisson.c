/* tpmg-poisson: solve -Δu = f on a box with Q_k elements by multigrid with
 * the vertex-patch smoother, and report iterations, times and errors.
 * Run `tpmg-poisson --help` for the options. */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-app-common.h"
#include "tpmg.h"

/* The default problem's size: the level nearest to this many DoFs. */
#define DEFAULT_TARGET_DOFS 1e6

static const char *const solver_names[] = {"gmres", "cg", "fmg", "vcycle", NULL};
static const char *const precision_names[] = {"double", "mixed", "float", NULL};
static const char *const smoother_names[] = {"global", "separate", "fused", "boundary", NULL};
static const char *const preconditioning_names[] = {"right", "left", NULL};
static const char *const rhs_names[] = {"one", "sine", "ones", NULL};

typedef struct {
  int dim, degree, level; /* level 0: choose by DoF count */
  int cells[3];
  int n_cells; /* values given to --cells, 0 if none */
  double box[6];
  int n_box; /* values given to --box, 0 if none */
  tpmg_solver_type solver;
  tpmg_mode mode;
  tpmg_smoother_variant smoother;
  tpmg_preconditioning preconditioning;
  tpmg_rhs rhs;
  double tolerance; /* 0: the default for the precision */
  int threads;      /* 0: OpenMP's default */
  const char *backend;
  int repeat;
  int max_iterations;
  int restart;
  int json;
  const char *setup;       /* --setup FILE: grid and problem from the file, or NULL */
  const char *write_setup; /* --write-setup FILE, or NULL */
} options;

static void print_help(void) {
  printf("Usage: tpmg-poisson [options]\n"
         "Solve -Laplace(u) = f, u = g on the boundary, on an axis-parallel box with continuous\n"
         "Q_k elements by geometric multigrid with a vertex-patch smoother.\n"
         "\n"
         "  --dim 2|3                   dimension (default 3)\n"
         "  --degree k                  polynomial degree, 1..10 in 2D, 1..8 in 3D (default 3)\n"
         "  --level L                   refinements of the coarse mesh, >= 1 (default: the level\n"
         "                              whose DoF count is nearest to 1,000,000)\n"
         "  --cells n0,n1[,n2]          coarse cells per direction (default 1,1[,1])\n"
         "  --box a0,b0,a1,b1[,a2,b2]   the domain, a_d < b_d (default the unit square/cube)\n"
         "  --solver gmres|cg|fmg|vcycle   the iteration (default gmres)\n"
         "  --precision double|mixed|float the arithmetic; mixed runs the V-cycle in float\n"
         "                              (default double)\n"
         "  --rhs one|sine|ones         f = 1, g = 0; or u = prod sin(pi x_d); or b = 1 at\n"
         "                              every interior DoF, the paper's iteration tables\n"
         "                              (default sine)\n"
         "  --tol t                     relative residual to reach, > 0 (default 1e-9;\n"
         "                              1e-3 with --precision float)\n"
         "  --smoother global|separate|fused|boundary  residual variant of the smoother\n"
         "                              (default fused); boundary: fused without reading the\n"
         "                              patch interiors, x_I = A_II^-1 (b_I - A_IB x_B)\n"
         "  --threads n                 CPU threads, >= 1 (default: OpenMP's default)\n"
         "  --backend NAME              where the solve runs: cpu, cuda, cuda/VARIANT (default cpu)\n"
         "  --repeat n                  solve n times from x = 0, report the fastest (default 1)\n"
         "  --max-iterations n          iteration limit, >= 1 (default 100)\n"
         "  --restart n                 GMRES restart length, >= 1 (default 30)\n"
         "  --preconditioning right|left  GMRES: right stops on ||b - A x|| (default); left\n"
         "                              on the preconditioned residual, as deal.II's\n"
         "                              SolverGMRES and the paper do\n"
         "  --json                      end the output with one line of JSON\n"
         "  --setup FILE                take the grid and the problem (and its right-hand side\n"
         "                              vector, if the file holds one) from a setup file; excludes\n"
         "                              --dim, --degree, --level, --cells, --box and --rhs\n"
         "  --write-setup FILE          write the problem's setup with its right-hand side vector\n"
         "                              to FILE, then solve as usual\n"
         "  --help                      print this help and exit\n"
         "\n"
         "Exit status: 0 solved (see 'converged'), 1 library error, 2 bad option.\n");
}

static options parse_options(int argc, char **argv) {
  tpmg_grid_options grid_defaults = tpmg_grid_options_default();
  tpmg_solver_options solver_defaults = tpmg_solver_options_default();
  options o = {
      .dim = grid_defaults.dim,
      .degree = grid_defaults.degree,
      .level = 0,
      .cells = {1, 1, 1},
      .solver = solver_defaults.type,
      .mode = solver_defaults.mode,
      .smoother = solver_defaults.smoother,
      .preconditioning = solver_defaults.preconditioning,
      .rhs = TPMG_RHS_SINE,
      .backend = "cpu",
      .repeat = 1,
      .max_iterations = solver_defaults.max_iterations,
      .restart = solver_defaults.restart,
  };
  double cells[3];
  const char *cells_text = NULL, *box_text = NULL;
  const char *problem_option = NULL; /* the first option that --setup excludes */

  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (app_option_is(arg, "--help")) {
      print_help();
      exit(0);
    } else if (app_option_is(arg, "--json")) {
      if (strchr(arg, '='))
        app_usage_error("--json takes no value: %s", arg);
      o.json = 1;
    } else if (app_option_is(arg, "--setup")) {
      o.setup = app_option_value(argc, argv, &i, "--setup");
      if (o.setup[0] == '\0')
        app_usage_error("--setup needs a file name");
    } else if (app_option_is(arg, "--write-setup")) {
      o.write_setup = app_option_value(argc, argv, &i, "--write-setup");
      if (o.write_setup[0] == '\0')
        app_usage_error("--write-setup needs a file name");
    } else if (app_option_is(arg, "--dim")) {
      o.dim = app_parse_int("--dim", app_option_value(argc, argv, &i, "--dim"), 2, 3);
    } else if (app_option_is(arg, "--degree")) {
      o.degree =
          app_parse_int("--degree", app_option_value(argc, argv, &i, "--degree"), 1, INT_MAX);
    } else if (app_option_is(arg, "--level")) {
      o.level = app_parse_int("--level", app_option_value(argc, argv, &i, "--level"), 1, 30);
    } else if (app_option_is(arg, "--cells")) {
      cells_text = app_option_value(argc, argv, &i, "--cells");
      o.n_cells = app_parse_list("--cells", cells_text, cells, 3);
      for (int d = 0; d < o.n_cells; ++d) {
        if (!(cells[d] >= 1 && cells[d] <= 1 << 20 && cells[d] == floor(cells[d])))
          app_usage_error("--cells %s: each count must be an integer >= 1", cells_text);
        o.cells[d] = (int)cells[d];
      }
    } else if (app_option_is(arg, "--box")) {
      box_text = app_option_value(argc, argv, &i, "--box");
      o.n_box = app_parse_list("--box", box_text, o.box, 6);
    } else if (app_option_is(arg, "--solver")) {
      o.solver =
          app_parse_choice("--solver", app_option_value(argc, argv, &i, "--solver"), solver_names);
    } else if (app_option_is(arg, "--precision")) {
      o.mode = app_parse_choice("--precision", app_option_value(argc, argv, &i, "--precision"),
                                precision_names);
    } else if (app_option_is(arg, "--rhs")) {
      o.rhs = app_parse_choice("--rhs", app_option_value(argc, argv, &i, "--rhs"), rhs_names);
    } else if (app_option_is(arg, "--tol")) {
      o.tolerance = app_parse_positive("--tol", app_option_value(argc, argv, &i, "--tol"));
    } else if (app_option_is(arg, "--smoother")) {
      o.smoother = app_parse_choice("--smoother", app_option_value(argc, argv, &i, "--smoother"),
                                    smoother_names);
    } else if (app_option_is(arg, "--threads")) {
      o.threads =
          app_parse_int("--threads", app_option_value(argc, argv, &i, "--threads"), 1, INT_MAX);
    } else if (app_option_is(arg, "--backend")) {
      o.backend = app_parse_backend("--backend", app_option_value(argc, argv, &i, "--backend"));
    } else if (app_option_is(arg, "--repeat")) {
      o.repeat =
          app_parse_int("--repeat", app_option_value(argc, argv, &i, "--repeat"), 1, INT_MAX);
    } else if (app_option_is(arg, "--max-iterations")) {
      o.max_iterations = app_parse_int(
          "--max-iterations", app_option_value(argc, argv, &i, "--max-iterations"), 1, INT_MAX);
    } else if (app_option_is(arg, "--preconditioning")) {
      o.preconditioning = app_parse_choice(
          "--preconditioning", app_option_value(argc, argv, &i, "--preconditioning"),
          preconditioning_names);
    } else if (app_option_is(arg, "--restart")) {
      o.restart =
          app_parse_int("--restart", app_option_value(argc, argv, &i, "--restart"), 1, INT_MAX);
    } else {
      app_usage_error("unknown option '%s' (see --help)", arg);
    }
    static const char *const problem_options[] = {"--dim",   "--degree", "--level",
                                                  "--cells", "--box",    "--rhs"};
    for (size_t j = 0; j < sizeof problem_options / sizeof problem_options[0]; ++j)
      if (!problem_option && app_option_is(arg, problem_options[j]))
        problem_option = problem_options[j];
  }

  /* A float solution's true residual cannot fall much below eps_float cond(A):
   * about 1e-5 to 1e-3 for the usual sizes, so float gets a looser default. */
  if (o.tolerance == 0)
    o.tolerance = o.mode == TPMG_MODE_FLOAT ? 1e-3 : 1e-9;
  if (o.setup) {
    if (problem_option)
      app_usage_error("%s and --setup exclude each other: the setup file gives the grid and the "
                      "problem",
                      problem_option);
    return o; /* the grid is checked when the file is read */
  }

  /* Checks that combine options, made once all are known. */
  if (o.degree > app_max_degree(o.dim))
    app_usage_error("--degree %d: must be 1..%d for dim %d", o.degree, app_max_degree(o.dim),
                    o.dim);
  if (o.n_cells != 0 && o.n_cells != o.dim)
    app_usage_error("--cells %s: needs %d values for dim %d", cells_text, o.dim, o.dim);
  if (o.n_box != 0 && o.n_box != 2 * o.dim)
    app_usage_error("--box %s: needs %d values for dim %d", box_text, 2 * o.dim, o.dim);
  for (int d = 0; d < o.n_box / 2; ++d)
    if (!(o.box[2 * d] < o.box[2 * d + 1]))
      app_usage_error("--box %s: needs a_%d < b_%d", box_text, d, d);
  if (o.dim == 2)
    o.cells[2] = 1;
  double coarse_interior = 1;
  for (int d = 0; d < o.dim; ++d)
    coarse_interior *= (double)o.cells[d] * o.degree - 1;
  if (coarse_interior > TPMG_MAX_COARSE_DOFS)
    app_usage_error("--cells %s: the coarse mesh has %.0f interior DoFs at degree %d, at most %d "
                    "are supported",
                    cells_text ? cells_text : "1,1,1", coarse_interior, o.degree,
                    TPMG_MAX_COARSE_DOFS);
  if (o.level == 0)
    o.level = app_choose_level(o.dim, o.degree, o.cells, DEFAULT_TARGET_DOFS);
  return o;
}

/* Per-iteration progress; off during repeats after the first. */
typedef struct {
  int enabled;
} monitor_state;

static void monitor(void *data, int iteration, double relative_residual) {
  const monitor_state *state = data;
  if (!state->enabled)
    return;
  printf("  iteration %3d   relative residual %.3e\n", iteration, relative_residual);
  fflush(stdout);
}

/* A JSON number, or null where it is not finite. */
static void json_number(const char *key, double value, const char *separator) {
  if (isfinite(value))
    printf("\"%s\":%.9g%s", key, value, separator);
  else
    printf("\"%s\":null%s", key, separator);
}

/* A JSON string, or null for NULL. */
static void json_string(const char *key, const char *value, const char *separator) {
  if (!value) {
    printf("\"%s\":null%s", key, separator);
    return;
  }
  printf("\"%s\":\"", key);
  for (const unsigned char *p = (const unsigned char *)value; *p; ++p)
    if (*p == '"' || *p == '\\')
      printf("\\%c", *p);
    else if (*p < 0x20)
      printf("\\u%04x", *p);
    else
      putchar(*p);
  printf("\"%s", separator);
}

/* Everything a run creates, destroyed by run_destroy in reverse order. */
typedef struct {
  tpmg_context *ctx;
  tpmg_grid *grid;
  tpmg_solver *solver;
  void *b, *x;
  void *rhs_double;  /* the right-hand side in double when b is float, for --write-setup */
  double *rhs_host;  /* the right-hand side in host memory: from --setup, or for --write-setup */
  float *rhs_float;  /* rhs_host converted, for a float solve */
} run;

static void run_destroy(run *r) {
  free(r->rhs_float);
  free(r->rhs_host);
  if (r->ctx) {
    tpmg_vector_destroy(r->ctx, &r->rhs_double);
    tpmg_vector_destroy(r->ctx, &r->x);
    tpmg_vector_destroy(r->ctx, &r->b);
  }
  tpmg_solver_destroy(&r->solver);
  tpmg_grid_destroy(&r->grid);
  tpmg_context_destroy(&r->ctx);
}

/* Report a failed call, clean up, and give the exit status. */
#define RUN_CALL(r, call)                                                                          \
  do {                                                                                             \
    tpmg_status run_status_ = (call);                                                              \
    if (run_status_ != TPMG_SUCCESS) {                                                             \
      int run_exit_ = app_library_error((r)->ctx, #call, run_status_);                             \
      run_destroy(r);                                                                              \
      return run_exit_;                                                                            \
    }                                                                                              \
  } while (0)

/* Report a failed host allocation, clean up, and give the exit status. */
static int run_out_of_memory(run *r, const char *what, tpmg_index n) {
  fprintf(stderr, "%s: out of memory for %s (%lld entries)\n", app_program(), what, (long long)n);
  run_destroy(r);
  return APP_EXIT_LIBRARY;
}

int main(int argc, char **argv) {
  app_set_program("tpmg-poisson");
  options o = parse_options(argc, argv);
  run r = {0};
  monitor_state state = {1};
  tpmg_precision precision = o.mode == TPMG_MODE_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE;

  tpmg_context_options context_options = tpmg_context_options_default();
  context_options.backend = o.backend;
  context_options.n_threads = o.threads;
  tpmg_status status = tpmg_context_create(&context_options, &r.ctx);
  if (status != TPMG_SUCCESS)
    return app_library_error(NULL, "tpmg_context_create", status);
  int threads = 1;
  RUN_CALL(&r, tpmg_context_threads(r.ctx, &threads));

  tpmg_grid_options grid_options = tpmg_grid_options_default();
  grid_options.dim = o.dim;
  grid_options.degree = o.degree;
  grid_options.fine_level = o.level;
  for (int d = 0; d < 3; ++d)
    grid_options.cells[d] = o.cells[d];
  if (o.n_box)
    for (int j = 0; j < 2 * o.dim; ++j)
      grid_options.box[j] = o.box[j];

  tpmg_solver_options solver_options = tpmg_solver_options_default();
  solver_options.type = o.solver;
  solver_options.mode = o.mode;
  solver_options.smoother = o.smoother;
  solver_options.tolerance = o.tolerance;
  solver_options.max_iterations = o.max_iterations;
  solver_options.restart = o.restart;
  solver_options.preconditioning = o.preconditioning;
  solver_options.monitor = monitor;
  solver_options.monitor_data = &state;

  double setup_start = app_now();
  if (o.setup) {
    /* grid, problem and maybe the right-hand side (host, double) from the file */
    RUN_CALL(&r, tpmg_setup_read(r.ctx, o.setup, &r.grid, &o.rhs, &r.rhs_host));
    RUN_CALL(&r, tpmg_grid_get_options(r.grid, &grid_options));
    o.dim = grid_options.dim;
    o.degree = grid_options.degree;
    o.level = grid_options.fine_level;
    for (int d = 0; d < 3; ++d)
      o.cells[d] = grid_options.cells[d];
  } else {
    RUN_CALL(&r, tpmg_grid_create(r.ctx, &grid_options, &r.grid));
  }
  int rhs_from_file = r.rhs_host != NULL;
  tpmg_index n_dofs = 0;
  RUN_CALL(&r, tpmg_grid_level_size(r.grid, o.level, &n_dofs, NULL));
  /* the vectors first: the solver sizes its GMRES basis to the memory left */
  RUN_CALL(&r, tpmg_vector_create(r.ctx, precision, n_dofs, &r.b));
  RUN_CALL(&r, tpmg_vector_create(r.ctx, precision, n_dofs, &r.x));
  if (o.write_setup && !r.rhs_host) {
    /* the right-hand side in double on the host: what the file will hold, and
     * (through the same conversion as below) what is solved */
    r.rhs_host = malloc(sizeof(double) * (size_t)n_dofs);
    if (!r.rhs_host)
      return run_out_of_memory(&r, "the right-hand side on the host", n_dofs);
    void *rhs_double = r.b;
    if (precision != TPMG_DOUBLE) {
      RUN_CALL(&r, tpmg_vector_create(r.ctx, TPMG_DOUBLE, n_dofs, &r.rhs_double));
      rhs_double = r.rhs_double;
    }
    RUN_CALL(&r, tpmg_problem_rhs(r.grid, o.rhs, TPMG_DOUBLE, rhs_double));
    RUN_CALL(&r, tpmg_vector_download(r.ctx, TPMG_DOUBLE, n_dofs, rhs_double, r.rhs_host));
    RUN_CALL(&r, tpmg_vector_destroy(r.ctx, &r.rhs_double));
  }
  if (!r.rhs_host) {
    RUN_CALL(&r, tpmg_problem_rhs(r.grid, o.rhs, precision, r.b));
  } else if (precision == TPMG_DOUBLE) {
    if (rhs_from_file) /* else b holds it already */
      RUN_CALL(&r, tpmg_vector_upload(r.ctx, TPMG_DOUBLE, n_dofs, r.rhs_host, r.b));
  } else {
    /* rounded on the host, as tpmg_problem_rhs rounds its float vectors */
    r.rhs_float = malloc(sizeof(float) * (size_t)n_dofs);
    if (!r.rhs_float)
      return run_out_of_memory(&r, "the float right-hand side on the host", n_dofs);
    for (tpmg_index i = 0; i < n_dofs; ++i)
      r.rhs_float[i] = (float)r.rhs_host[i];
    RUN_CALL(&r, tpmg_vector_upload(r.ctx, TPMG_FLOAT, n_dofs, r.rhs_float, r.b));
    free(r.rhs_float);
    r.rhs_float = NULL;
  }
  RUN_CALL(&r, tpmg_solver_create(r.grid, &solver_options, &r.solver));
  RUN_CALL(&r, tpmg_context_synchronize(r.ctx));
  double setup_seconds = app_now() - setup_start;
  if (o.write_setup) {
    RUN_CALL(&r, tpmg_setup_write(r.grid, o.rhs, r.rhs_host, o.write_setup));
    printf("wrote the setup (grid, rhs %s, right-hand side vector) to %s\n", rhs_names[o.rhs],
           o.write_setup);
  }
  free(r.rhs_host);
  r.rhs_host = NULL;
  size_t memory = 0;
  RUN_CALL(&r, tpmg_context_memory(r.ctx, &memory));
  int restart = 0;
  RUN_CALL(&r, tpmg_solver_restart(r.solver, &restart));

  char group[32];
  printf("tpmg-poisson: %dD Q%d, level %d, %s DoFs, %s backend, %d thread%s\n", o.dim, o.degree,
         o.level, app_group(n_dofs, group), o.backend, threads,
         threads == 1 ? "" : "s");
  if (o.solver == TPMG_SOLVER_GMRES)
    printf("solver gmres(%d), %s preconditioning", restart,
           preconditioning_names[o.preconditioning]);
  else
    printf("solver %s", solver_names[o.solver]);
  printf(", precision %s, smoother %s, rhs %s, tolerance %.1e\n", precision_names[o.mode],
         smoother_names[o.smoother], rhs_names[o.rhs], o.tolerance);
  if (o.setup)
    printf("problem from the setup file %s (right-hand side %s)\n", o.setup,
           rhs_from_file ? "vector from the file" : "computed for this rhs");
  if (o.solver == TPMG_SOLVER_GMRES && restart < o.restart)
    printf("note: GMRES restart shrunk from %d to %d to fit in memory\n", o.restart, restart);
  printf("setup %.3f s, memory %.1f MiB (%.0f bytes/DoF)\n", setup_seconds, memory / 1048576.0,
         (double)memory / (double)n_dofs);
  fflush(stdout);

  tpmg_solver_result result = {0};
  double best = INFINITY;
  for (int rep = 0; rep < o.repeat; ++rep) {
    state.enabled = rep == 0;
    RUN_CALL(&r, tpmg_vector_set(r.ctx, precision, n_dofs, 0.0, r.x));
    RUN_CALL(&r, tpmg_context_synchronize(r.ctx));
    double start = app_now();
    RUN_CALL(&r, tpmg_solver_solve(r.solver, r.b, r.x, &result));
    RUN_CALL(&r, tpmg_context_synchronize(r.ctx));
    double seconds = app_now() - start;
    if (o.repeat > 1)
      printf("solve %d of %d: %.4f s\n", rep + 1, o.repeat, seconds);
    if (seconds < best)
      best = seconds;
  }

  double l2_error = NAN;
  if (o.rhs == TPMG_RHS_SINE)
    RUN_CALL(&r, tpmg_problem_l2_error(r.grid, o.rhs, precision, r.x, &l2_error));

  printf("%s in %d iteration%s, residual reduction %.3e\n",
         result.converged ? "converged" : "NOT converged", result.iterations,
         result.iterations == 1 ? "" : "s", result.residual_reduction);
  printf("solve %.4f s%s, %.3f MDoF/s\n", best, o.repeat > 1 ? " (best)" : "",
         (double)n_dofs / best * 1e-6);
  if (o.rhs == TPMG_RHS_SINE)
    printf("L2 error %.3e\n", l2_error);

  if (o.json) {
    printf("{\"dim\":%d,\"degree\":%d,\"level\":%d,\"cells\":[", o.dim, o.degree, o.level);
    for (int d = 0; d < o.dim; ++d)
      printf("%s%d", d ? "," : "", o.cells[d]);
    printf("],\"box\":[");
    for (int j = 0; j < 2 * o.dim; ++j)
      printf("%s%.17g", j ? "," : "", grid_options.box[j]);
    printf("],\"n_dofs\":%lld,\"solver\":\"%s\",\"precision\":\"%s\",\"smoother\":\"%s\","
           "\"rhs\":\"%s\",",
           (long long)n_dofs, solver_names[o.solver], precision_names[o.mode],
           smoother_names[o.smoother], rhs_names[o.rhs]);
    json_string("setup", o.setup, ",");
    printf("\"backend\":\"%s\",\"threads\":%d,", o.backend, threads);
    json_number("tolerance", o.tolerance, ",");
    printf("\"max_iterations\":%d,\"iterations\":%d,\"converged\":%s,", o.max_iterations,
           result.iterations, result.converged ? "true" : "false");
    json_number("residual_norm_0", result.residual_norm_0, ",");
    json_number("residual_norm", result.residual_norm, ",");
    json_number("residual_reduction", result.residual_reduction, ",");
    json_number("setup_seconds", setup_seconds, ",");
    json_number("solve_seconds", best, ",");
    printf("\"repeat\":%d,", o.repeat);
    json_number("dofs_per_second", (double)n_dofs / best, ",");
    json_number("l2_error", l2_error, ",");
    printf("\"memory_bytes\":%zu,", memory);
    json_number("memory_bytes_per_dof", (double)memory / (double)n_dofs, ",");
    if (o.solver == TPMG_SOLVER_GMRES)
      printf("\"restart\":%d,\"preconditioning\":\"%s\"}\n", restart,
             preconditioning_names[o.preconditioning]);
    else
      printf("\"restart\":null}\n");
  }
  run_destroy(&r);
  return 0;
}
