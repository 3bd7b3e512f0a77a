/* libFuzzer target: the app layer's option parser (apps/tpmg-app-common.c) on
 * an argv built from the fuzzer's bytes, one argument per line. A usage error
 * (exit status 2 in the programs) returns here through longjmp; an accepted
 * command line must be one the library accepts too: its context and grid are
 * created without TPMG_ERROR_ARGUMENT (the grid may be too large for memory:
 * TPMG_ERROR_MEMORY), so that the programs and the library agree on every
 * range. */
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-app-common.h"
#include "tpmg.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static jmp_buf usage_error;

static void on_usage_error(void) {
  longjmp(usage_error, 1);
}

/* The library's view of an accepted command line. */
static void check_accepted(const app_problem *p, const tpmg_solver_options *s,
                           const app_machine *m) {
  if (!tpmg_solver_type_name(s->type) || !tpmg_arithmetic_name(s->arithmetic) ||
      !tpmg_smoother_variant_name(s->smoother) || !tpmg_preconditioning_name(s->preconditioning) ||
      !tpmg_rhs_name(p->rhs) || !(s->tolerance > 0 && s->tolerance < 1) || s->max_iterations < 1 ||
      s->restart < 1 || s->restart > TPMG_MAX_RESTART)
    abort();
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = m->backend;
  options.n_threads = m->threads;
  tpmg_context *ctx = NULL;
  if (tpmg_context_create(&options, &ctx) != TPMG_SUCCESS)
    abort(); /* app_parse_backend checked availability, threads their bound */
  tpmg_grid_options grid_options = app_problem_grid_options(p);
  tpmg_grid *grid = NULL;
  tpmg_status status = tpmg_grid_create(ctx, &grid_options, &grid);
  if (status != TPMG_SUCCESS && status != TPMG_ERROR_MEMORY)
    abort();
  tpmg_grid_destroy(&grid);
  tpmg_context_destroy(&ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int started = 0;
  if (!started) {
    app_set_program("fuzz-options");
    app_set_usage_exit(on_usage_error);
    started = 1;
  }
  /* argv: "fuzz-options", then the lines of the input (NUL-terminated copies) */
  char *text = malloc(size + 1);
  if (!text)
    abort();
  memcpy(text, data, size);
  text[size] = '\0';
  char *argv[MAX_ARGS + 1] = {"fuzz-options"};
  int argc = 1;
  for (char *p = text; argc < MAX_ARGS && p < text + size;) {
    argv[argc++] = p;
    char *newline = memchr(p, '\n', (size_t)(text + size - p));
    if (!newline)
      break;
    *newline = '\0';
    p = newline + 1;
  }
  argv[argc] = NULL;

  app_options_reset();
  /* volatile: set between setjmp and longjmp */
  volatile int accepted = 0;
  app_problem problem = app_problem_default();
  tpmg_solver_options solver = app_solver_default();
  app_machine machine = app_machine_default();
  if (setjmp(usage_error) == 0) {
    for (int i = 1; i < argc; ++i) {
      if (app_problem_option(argc, argv, &i, &problem) ||
          app_solver_option(argc, argv, &i, &solver) ||
          app_machine_option(argc, argv, &i, &machine))
        continue;
      if (app_option_is(argv[i], "--json"))
        app_option_flag(argv[i], "--json");
      else
        app_usage_error("unknown option '%.200s' (see --help)", argv[i]);
    }
    app_solver_finish(&solver);
    app_problem_finish(&problem, 1e6);
    accepted = 1;
  }
  if (accepted)
    check_accepted(&problem, &solver, &machine);
  free(text);
  return 0;
}
