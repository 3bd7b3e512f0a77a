/* tpmg-poisson: solve -Δu + c u = f on a box with Q_k elements by multigrid with
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

typedef struct {
  app_problem problem;
  tpmg_solver_options solver; /* its monitor is set by main */
  app_machine machine;
  int repeat;
  app_distribution distribution;
  int json;
  int smoother_given;      /* --smoother was given: kept with a coefficient */
  const char *setup;       /* --setup FILE: grid and problem from the file, or NULL */
  const char *write_setup; /* --write-setup FILE, or NULL */
} options;

static void print_help(void) {
  printf(
      "Usage: tpmg-poisson [options]\n"
      "Solve -Laplace(u) + c u = f, u = g on the boundary, on an axis-parallel box with\n"
      "continuous Q_k elements by geometric multigrid with a vertex-patch smoother.\n"
      "\n"
      "  --dim 2|3                   dimension (default 3)\n"
      "  --degree k                  polynomial degree, 1..10 in 2D, 1..8 in 3D (default 3)\n"
      "  --level L                   refinements of the coarse mesh, 1..30 (default: the level\n"
      "                              whose DoF count is nearest to 1,000,000)\n"
      "  --cells n0,n1[,n2]          coarse cells per direction (default 1,1[,1])\n"
      "  --box a0,b0,a1,b1[,a2,b2]   the domain, a_d < b_d (default the unit square/cube)\n"
      "  --solver gmres|cg|fmg|vcycle|fmg-gmres  the iteration: fmg is full multigrid\n"
      "                              then V-cycles, fmg-gmres its first pass then GMRES\n"
      "                              (default fmg-gmres)\n"
      "  --precision double|mixed|float the arithmetic; mixed runs the V-cycle in float\n"
      "                              (default mixed)\n"
      "  --reaction c                the reaction term c u, 0 <= c <= 1e30 (default 0:\n"
      "                              Poisson); implicit Euler's M + dt K is dt (K + M / dt)\n"
      "  --coefficient one|step37|checkerboard:C|random:C  a of -div(a grad u)\n"
      "                              (default one); step37: 1 / (0.05 + 2 |x|^2) at the\n"
      "                              quadrature points; checkerboard:C: 4 parts per\n"
      "                              direction, a = C where their index sum is odd, 1\n"
      "                              elsewhere, per cell; random:C: per cell, C^u with u\n"
      "                              uniform in [0, 1) from the cell's index; the smoother\n"
      "                              defaults to global with a coefficient\n"
      "  --grading R                 graded coarse cells: along each direction their\n"
      "                              widths grow as R^i, scaled to the box (default 1:\n"
      "                              equal cells); R > 0, at most 1024 coarse cells per\n"
      "                              direction; the CPU backend only\n"
      "  --rhs one|sine|ones         f = 1, g = 0; or u = prod sin(pi x_d); or b = 1 at\n"
      "                              every interior DoF, the paper's iteration tables\n"
      "                              (default sine)\n"
      "  --tol t                     relative residual to reach, in (0, 1) (default 1e-9;\n"
      "                              1e-3 with --precision float)\n"
      "  --smoother global|separate|fused|boundary  residual variant of the smoother\n"
      "                              (default fused); boundary: fused without reading the\n"
      "                              patch interiors, x_I = A_II^-1 (b_I - A_IB x_B)\n"
      "  --threads n                 CPU threads, 1..1024 (default: OpenMP's default)\n"
      "  --backend NAME              where the solve runs: cpu, cuda, cuda/VARIANT (default cpu)\n"
      "  --repeat n                  solve n times from x = 0, report the fastest (default 1)\n"
      "  --max-iterations n          iteration limit, >= 1 (default 100)\n"
      "  --whole-level-dofs n        under mpirun: levels of at most n DoFs are kept whole on\n"
      "                              every rank, not split into slabs; -1: the backend's\n"
      "                              choice (default; 0 on cpu, 1000000 on cuda)\n"
      "  --overlap 0|1               under mpirun: 1 (default) the smoothers' ghost exchanges\n"
      "                              travel while the patches away from the cuts are\n"
      "                              computed; 0: each completes first (the same results)\n"
      "  --restart n                 GMRES restart length, 1..1000 (default 30; only with\n"
      "                              --solver gmres or fmg-gmres)\n"
      "  --preconditioning right|left  GMRES: right stops on ||b - A x|| (default); left\n"
      "                              on the preconditioned residual, as deal.II's\n"
      "                              SolverGMRES and the paper do\n"
      "  --json                      end the output with one line of JSON\n"
      "  --setup FILE                take the grid and the problem (and its right-hand side\n"
      "                              vector and coefficient, if the file holds them) from a\n"
      "                              setup file; excludes --dim, --degree, --level, --cells,\n"
      "                              --box, --reaction, --coefficient and --rhs\n"
      "  --write-setup FILE          write the problem's setup with its right-hand side vector\n"
      "                              (and coefficient) to FILE, then solve as usual\n"
      "  --help                      print this help and exit\n"
      "\n"
      "Exit status: 0 solved (see 'converged'), 1 library error or unwritable output,\n"
      "2 bad option.\n");
}

static options parse_options(int argc, char **argv) {
  options o = {
      .problem = app_problem_default(),
      .solver = app_solver_default(),
      .machine = app_machine_default(),
      .repeat = 1,
      .distribution = app_distribution_default(),
  };
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    o.smoother_given |= app_option_is(arg, "--smoother");
    if (app_problem_option(argc, argv, &i, &o.problem) ||
        app_solver_option(argc, argv, &i, &o.solver) ||
        app_machine_option(argc, argv, &i, &o.machine) ||
        app_distribution_option(argc, argv, &i, &o.distribution))
      continue;
    if (app_option_is(arg, "--help")) {
      app_help_exit(print_help);
    } else if (app_option_is(arg, "--json")) {
      app_option_flag(arg, "--json");
      o.json = 1;
    } else if (app_option_is(arg, "--setup")) {
      o.setup = app_option_value(argc, argv, &i, "--setup");
      if (o.setup[0] == '\0')
        app_usage_error("--setup needs a file name");
    } else if (app_option_is(arg, "--write-setup")) {
      o.write_setup = app_option_value(argc, argv, &i, "--write-setup");
      if (o.write_setup[0] == '\0')
        app_usage_error("--write-setup needs a file name");
    } else if (app_option_is(arg, "--repeat")) {
      o.repeat =
          app_parse_int("--repeat", app_option_value(argc, argv, &i, "--repeat"), 1, INT_MAX);
    } else {
      app_usage_error("unknown option '%.200s' (see --help)", arg);
    }
  }
  app_solver_finish(&o.solver);
  if (o.setup) {
    if (o.problem.first)
      app_usage_error("%s and --setup exclude each other: the setup file gives the grid and the "
                      "problem",
                      o.problem.first);
    return o; /* the grid is checked when the file is read */
  }
  app_problem_finish(&o.problem, DEFAULT_TARGET_DOFS);
  /* a variable coefficient: the smoother whose residual is the exact operator's */
  if (o.problem.coefficient != APP_COEFFICIENT_ONE && !o.smoother_given)
    o.solver.smoother = TPMG_SMOOTHER_GLOBAL;
  return o;
}

/* Everything a run creates, destroyed by run_destroy in reverse order, and
 * what it found out. */
typedef struct {
  tpmg_context *ctx;
  tpmg_grid *grid;
  tpmg_solver *solver;
  void *b, *x;
  void *rhs_double; /* the right-hand side in double when b is float, for --write-setup */
  double *rhs_host; /* the right-hand side in host memory: from --setup, or for --write-setup */
  float *rhs_float; /* rhs_host converted, for a float solve */
  tpmg_grid_options grid_options;
  tpmg_precision precision; /* of b and x */
  tpmg_index n_dofs;        /* of this rank's vectors */
  double n_global;          /* of the whole fine level */
  tpmg_level_layout layout; /* of the fine level on this rank */
  const char *backend;      /* the context's backend name */
  const char *transport;    /* how its ranks exchange vectors (tpmg_context_transport) */
  int threads, restart, rhs_from_file;
  int file_coefficient; /* --setup: the file's grid has a coefficient */
  tpmg_coefficient_layout file_layout;
  /* the slowest rank's: set-up (the context's included), the context's
   * creation (NCCL's connections on GPUs), the first solve, the fastest */
  double setup_seconds, context_seconds, first_solve_seconds, solve_seconds, l2_error;
  size_t memory;        /* the context's backend memory after set-up */
  size_t memory_solved; /* and after the solves (with the GMRES basis they needed) */
  size_t solver_memory; /* the solver's part of it (tpmg_solver_memory) */
  tpmg_solver_result result;
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

/* Report a failed call and give the exit status (the caller cleans up). */
#define RUN_CALL(r, call)                                                                          \
  do {                                                                                             \
    tpmg_status run_status_ = (call);                                                              \
    if (run_status_ != TPMG_SUCCESS)                                                               \
      return app_library_error((r)->ctx, #call, run_status_);                                      \
  } while (0)

/* Whether a host allocation p of n entries succeeded on every rank: 0, or
 * the exit status after a message on every rank (a rank that went on alone
 * would wait forever for the others in its next collective call). */
static int host_allocated(const void *p, const char *what, tpmg_index n) {
  if (app_mpi_max(p == NULL) == 0)
    return 0;
  fprintf(stderr, "%s: out of memory for %s (%lld entries%s)\n", app_program(), what, (long long)n,
          p ? ", on another rank" : "");
  return APP_EXIT_LIBRARY;
}

/* The context on the chosen backend and threads. */
static int create_context(const options *o, run *r) {
  tpmg_context_options context_options = tpmg_context_options_default();
  context_options.backend = o->machine.backend;
  context_options.n_threads = o->machine.threads;
  context_options.mpi_comm = app_mpi_comm();
  context_options.whole_level_dofs = o->distribution.whole_level_dofs;
  context_options.overlap = o->distribution.overlap;
  tpmg_status status = tpmg_context_create(&context_options, &r->ctx);
  if (status != TPMG_SUCCESS)
    return app_library_error(NULL, "tpmg_context_create", status);
  RUN_CALL(r, tpmg_context_threads(r->ctx, &r->threads));
  RUN_CALL(r, tpmg_context_backend(r->ctx, &r->backend));
  RUN_CALL(r, tpmg_context_transport(r->ctx, &r->transport));
  return 0;
}

/* The grid, from the options or the setup file (then o->problem takes the
 * file's grid and problem, and r->rhs_host its vector, if it holds one). */
static int create_grid(options *o, run *r) {
  if (!o->setup) {
    r->grid_options = app_problem_grid_options(&o->problem);
    RUN_CALL(r, tpmg_grid_create(r->ctx, &r->grid_options, &r->grid));
    RUN_CALL(r, app_problem_set_coefficient(&o->problem, r->grid));
    return 0;
  }
  RUN_CALL(r, tpmg_setup_read(r->ctx, o->setup, &r->grid, &o->problem.rhs, &r->rhs_host));
  RUN_CALL(r, tpmg_grid_get_options(r->grid, &r->grid_options));
  o->problem.dim = r->grid_options.dim;
  o->problem.degree = r->grid_options.degree;
  o->problem.level = r->grid_options.fine_level;
  for (int d = 0; d < 3; ++d)
    o->problem.cells[d] = r->grid_options.cells[d];
  r->rhs_from_file = r->rhs_host != NULL;
  RUN_CALL(r, tpmg_grid_get_coefficient(r->grid, &r->file_coefficient, &r->file_layout));
  if (r->file_coefficient && !o->smoother_given)
    o->solver.smoother = TPMG_SMOOTHER_GLOBAL; /* as with --coefficient */
  return 0;
}

/* For --write-setup without a file's vector: the right-hand side in double on
 * the host, what the file will hold and (converted as below) what is solved. */
static int compute_host_rhs(const options *o, run *r) {
  r->rhs_host = malloc(sizeof(double) * (size_t)r->n_dofs);
  int status = host_allocated(r->rhs_host, "the right-hand side on the host", r->n_dofs);
  if (status != 0)
    return status;
  void *rhs_double = r->b;
  if (r->precision != TPMG_DOUBLE) {
    RUN_CALL(r, tpmg_vector_create(r->ctx, TPMG_DOUBLE, r->n_dofs, &r->rhs_double));
    rhs_double = r->rhs_double;
  }
  RUN_CALL(r, app_problem_rhs(&o->problem, r->grid, TPMG_DOUBLE, rhs_double));
  RUN_CALL(r, tpmg_vector_download(r->ctx, TPMG_DOUBLE, r->n_dofs, rhs_double, r->rhs_host));
  RUN_CALL(r, tpmg_vector_destroy(r->ctx, &r->rhs_double));
  return 0;
}

/* b: computed, or the host vector uploaded (rounded on the host for a float
 * solve, as tpmg_problem_rhs rounds its float vectors). */
static int set_rhs(const options *o, run *r) {
  if (!r->rhs_host) {
    RUN_CALL(r, app_problem_rhs(&o->problem, r->grid, r->precision, r->b));
  } else if (r->precision == TPMG_DOUBLE) {
    if (r->rhs_from_file) /* else b holds it already */
      RUN_CALL(r, tpmg_vector_upload(r->ctx, TPMG_DOUBLE, r->n_dofs, r->rhs_host, r->b));
  } else {
    r->rhs_float = malloc(sizeof(float) * (size_t)r->n_dofs);
    int status = host_allocated(r->rhs_float, "the float right-hand side on the host", r->n_dofs);
    if (status != 0)
      return status;
    for (tpmg_index i = 0; i < r->n_dofs; ++i)
      r->rhs_float[i] = (float)r->rhs_host[i];
    RUN_CALL(r, tpmg_vector_upload(r->ctx, TPMG_FLOAT, r->n_dofs, r->rhs_float, r->b));
    free(r->rhs_float);
    r->rhs_float = NULL;
  }
  return 0;
}

/* Context, grid, vectors, right-hand side and solver, timed; the setup file
 * written if asked. Returns 0 or the exit status. */
static int setup(options *o, run *r) {
  int status;
  r->precision = o->solver.arithmetic == TPMG_ARITHMETIC_FLOAT ? TPMG_FLOAT : TPMG_DOUBLE;
  double start = app_now();
  if ((status = create_context(o, r)) != 0)
    return status;
  r->context_seconds = app_mpi_max(app_now() - start);
  if ((status = create_grid(o, r)) != 0)
    return status;
  RUN_CALL(r, tpmg_grid_level_size(r->grid, o->problem.level, &r->n_dofs, NULL));
  RUN_CALL(r, tpmg_grid_level_layout(r->grid, o->problem.level, &r->layout));
  r->n_global =
      (double)r->layout.n_global[0] * (double)r->layout.n_global[1] * (double)r->layout.n_global[2];
  /* the vectors first: the GMRES basis leaves 5% of the memory left free */
  RUN_CALL(r, tpmg_vector_create(r->ctx, r->precision, r->n_dofs, &r->b));
  RUN_CALL(r, tpmg_vector_create(r->ctx, r->precision, r->n_dofs, &r->x));
  if (o->write_setup && !r->rhs_host && (status = compute_host_rhs(o, r)) != 0)
    return status;
  if ((status = set_rhs(o, r)) != 0)
    return status;
  RUN_CALL(r, tpmg_solver_create(r->grid, &o->solver, &r->solver));
  RUN_CALL(r, tpmg_context_synchronize(r->ctx));
  r->setup_seconds = app_mpi_max(app_now() - start);
  if (o->write_setup) {
    RUN_CALL(r, tpmg_setup_write(r->grid, o->problem.rhs, r->rhs_host, o->write_setup));
    int coefficient = 0;
    RUN_CALL(r, tpmg_grid_get_coefficient(r->grid, &coefficient, NULL));
    printf("wrote the setup (grid, rhs %s, right-hand side vector%s) to %s\n",
           tpmg_rhs_name(o->problem.rhs), coefficient ? ", coefficient" : "", o->write_setup);
  }
  free(r->rhs_host);
  r->rhs_host = NULL;
  RUN_CALL(r, tpmg_context_memory(r->ctx, &r->memory));
  r->memory = (size_t)app_mpi_sum((double)r->memory); /* of all ranks */
  RUN_CALL(r, tpmg_solver_restart(r->solver, &r->restart));
  return 0;
}

static void print_setup(const options *o, const run *r) {
  char group[32];
  const tpmg_solver_options *s = &o->solver;
  printf("tpmg-poisson: %dD Q%d, level %d, %s DoFs, %s backend, %d thread%s", o->problem.dim,
         o->problem.degree, o->problem.level, app_group((tpmg_index)r->n_global, group), r->backend,
         r->threads, r->threads == 1 ? "" : "s");
  if (r->grid_options.reaction != 0.0)
    printf(", reaction %g", r->grid_options.reaction);
  if (o->problem.coefficient != APP_COEFFICIENT_ONE) {
    char name[64];
    printf(", coefficient %s", app_problem_coefficient_name(&o->problem, name, sizeof name));
  }
  if (o->problem.grading != 1.0)
    printf(", grading %g", o->problem.grading);
  if (r->file_coefficient)
    printf(", coefficient from the setup file (%s)",
           r->file_layout == TPMG_COEFFICIENT_QUADRATURE ? "at the quadrature points" : "per cell");
  if (app_mpi_size() > 1)
    printf(" x %d ranks (slabs along %c, messages by %s)", app_mpi_size(),
           "xyz"[o->problem.dim - 1], r -> transport);
  printf("\n");
  if (r->restart > 0) /* GMRES, after the FMG pass or not */
    printf("solver %s(%d), %s preconditioning", tpmg_solver_type_name(s->type), r->restart,
           tpmg_preconditioning_name(s->preconditioning));
  else
    printf("solver %s", tpmg_solver_type_name(s->type));
  printf(", precision %s, smoother %s, rhs %s, tolerance %.1e\n",
         tpmg_arithmetic_name(s->arithmetic), tpmg_smoother_variant_name(s->smoother),
         tpmg_rhs_name(o->problem.rhs), s->tolerance);
  if (o->setup)
    printf("problem from the setup file %s (right-hand side %s)\n", o->setup,
           r->rhs_from_file ? "vector from the file" : "computed for this rhs");
  printf("setup %.3f s (the context %.3f s), memory %.1f MiB (%.0f bytes/DoF)\n",
         r->setup_seconds, r->context_seconds, r->memory / 1048576.0,
         (double)r->memory / r->n_global);
  fflush(stdout);
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

/* o->repeat solves from x = 0, the fastest kept; then the L2 error. */
static int solve(const options *o, run *r, monitor_state *state) {
  r->solve_seconds = INFINITY;
  for (int rep = 0; rep < o->repeat; ++rep) {
    state->enabled = rep == 0;
    RUN_CALL(r, tpmg_vector_set(r->ctx, r->precision, r->n_dofs, 0.0, r->x));
    RUN_CALL(r, tpmg_context_synchronize(r->ctx));
    double start = app_now();
    RUN_CALL(r, tpmg_solver_solve(r->solver, r->b, r->x, &r->result));
    RUN_CALL(r, tpmg_context_synchronize(r->ctx));
    double seconds = app_mpi_max(app_now() - start);
    if (rep == 0)
      r->first_solve_seconds = seconds;
    if (o->repeat > 1)
      printf("solve %d of %d: %.4f s\n", rep + 1, o->repeat, seconds);
    if (seconds < r->solve_seconds)
      r->solve_seconds = seconds;
  }
  RUN_CALL(r, tpmg_context_memory(r->ctx, &r->memory_solved));
  RUN_CALL(r, tpmg_solver_memory(r->solver, &r->solver_memory));
  r->memory_solved = (size_t)app_mpi_sum((double)r->memory_solved); /* of all ranks */
  r->solver_memory = (size_t)app_mpi_sum((double)r->solver_memory);
  RUN_CALL(r, tpmg_solver_restart(r->solver, &r->restart));
  r->l2_error = NAN;
  if (o->problem.rhs == TPMG_RHS_SINE)
    RUN_CALL(r, tpmg_problem_l2_error(r->grid, o->problem.rhs, r->precision, r->x, &r->l2_error));
  return 0;
}

static void print_result(const options *o, const run *r) {
  const tpmg_solver_result *result = &r->result;
  printf("%s in %d iteration%s, residual reduction %.3e\n",
         result->converged ? "converged" : "NOT converged", result->iterations,
         result->iterations == 1 ? "" : "s", result->residual_reduction);
  printf("solve %.4f s%s, %.3f MDoF/s", r->solve_seconds, o->repeat > 1 ? " (best)" : "",
         r->n_global / r->solve_seconds * 1e-6);
  if (o->repeat > 1)
    printf("; the first solve %.4f s", r->first_solve_seconds);
  printf("\n");
  if (o->problem.rhs == TPMG_RHS_SINE)
    printf("L2 error %.3e\n", r->l2_error);
  printf("memory after the solve %.1f MiB (%.0f bytes/DoF), the solver's %.0f bytes/DoF\n",
         r->memory_solved / 1048576.0, (double)r->memory_solved / r->n_global,
         (double)r->solver_memory / r->n_global);
  if (r->restart > 0 && r->restart < o->solver.restart)
    printf("note: GMRES restart shrunk from %d to %d to fit in memory\n", o->solver.restart,
           r->restart);
}

static void print_json(const options *o, const run *r) {
  app_json j;
  app_json_begin(&j);
  app_json_problem(&j, &r->grid_options, (tpmg_index)r->n_global);
  char coefficient[64];
  if (r->file_coefficient) /* its values only: which function made them is not in the file */
    snprintf(coefficient, sizeof coefficient, "file:%s",
             r->file_layout == TPMG_COEFFICIENT_QUADRATURE ? "quadrature" : "cells");
  else
    app_problem_coefficient_name(&o->problem, coefficient, sizeof coefficient);
  app_json_string(&j, "coefficient", coefficient);
  /* a setup file's graded cells: their widths only, not how they were made */
  const tpmg_grid_options *g = &r->grid_options;
  if (o->setup && (g->cell_widths[0] || g->cell_widths[1] || g->cell_widths[2]))
    app_json_string(&j, "grading", "file");
  else
    app_json_exact(&j, "grading", o->problem.grading);
  app_json_int(&j, "ranks", app_mpi_size());
  app_json_open(&j, "process_grid", '[');
  for (int d = 0; d < o->problem.dim; ++d)
    app_json_int(&j, NULL, d == o->problem.dim - 1 ? app_mpi_size() : 1);
  app_json_close(&j, ']');
  app_json_solver(&j, r->solver);
  app_json_string(&j, "rhs", tpmg_rhs_name(o->problem.rhs));
  app_json_string(&j, "setup", o->setup);
  app_json_string(&j, "backend", r->backend);
  app_json_string(&j, "transport", r->transport);
  app_json_int(&j, "whole_level_dofs", o->distribution.whole_level_dofs);
  app_json_int(&j, "overlap", o->distribution.overlap);
  app_json_int(&j, "threads", r->threads);
  app_json_number(&j, "setup_seconds", r->setup_seconds);
  app_json_number(&j, "context_seconds", r->context_seconds);
  app_json_number(&j, "first_solve_seconds", r->first_solve_seconds);
  app_json_number(&j, "solve_seconds", r->solve_seconds);
  app_json_int(&j, "repeat", o->repeat);
  app_json_number(&j, "dofs_per_second", r->n_global / r->solve_seconds);
  app_json_number(&j, "l2_error", r->l2_error);
  app_json_int(&j, "memory_bytes", (long long)r->memory);
  app_json_number(&j, "memory_bytes_per_dof", (double)r->memory / r->n_global);
  app_json_number(&j, "bytes_per_dof", (double)r->memory_solved / r->n_global);
  app_json_int(&j, "solver_bytes", (long long)r->solver_memory);
  app_json_end(&j);
}

int main(int argc, char **argv) {
  app_set_program("tpmg-poisson");
  app_mpi_init(&argc, &argv);
  options o = parse_options(argc, argv);
  app_mpi_agree_options(); /* under mpirun: the same options on every rank, or exit 2 on all */
  monitor_state state = {1};
  o.solver.monitor = monitor;
  o.solver.monitor_data = &state;
  run r = {0};
  int status = setup(&o, &r);
  if (status == 0) {
    print_setup(&o, &r);
    status = solve(&o, &r, &state);
  }
  if (status == 0) {
    print_result(&o, &r);
    if (o.json)
      print_json(&o, &r);
  }
  run_destroy(&r);
  return app_stdout_status(status);
}
