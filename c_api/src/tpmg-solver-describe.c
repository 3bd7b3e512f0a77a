/* tpmg_solver_describe: a solver's options and last result as one JSON
 * object (PETSc's KSPView), so that programs print what the library knows
 * instead of assembling it themselves. Written as snprintf writes: the text
 * is measured in full and cut to the caller's buffer. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tpmg-impl.h"

/* The text so far: what fits in text[0..size-1], and the whole length. */
typedef struct {
  char *text;
  size_t size;
  size_t length;
  int members;
} json_text;

static void put(json_text *t, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int n = t->length < t->size ? vsnprintf(t->text + t->length, t->size - t->length, format, args)
                              : vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (n > 0)
    t->length += (size_t)n;
}

static void key(json_text *t, const char *name) {
  put(t, "%s\"%s\":", t->members++ ? "," : "", name);
}

/* The names are the library's own (tpmg-names.c): no character needs escaping. */
static void string(json_text *t, const char *name, const char *value) {
  key(t, name);
  if (value)
    put(t, "\"%s\"", value);
  else
    put(t, "null");
}

static void null(json_text *t, const char *name) {
  key(t, name);
  put(t, "null");
}

static void integer(json_text *t, const char *name, long long value) {
  key(t, name);
  put(t, "%lld", value);
}

/* The fewest significant digits that read back as the same double (17 always
 * do); null for a value that is not finite, which JSON cannot write. */
static void number(json_text *t, const char *name, double value) {
  key(t, name);
  if (!isfinite(value)) {
    put(t, "null");
    return;
  }
  char digits[32];
  for (int p = 1; p <= 17; ++p) {
    snprintf(digits, sizeof digits, "%.*g", p, value);
    if (strtod(digits, NULL) == value)
      break;
  }
  put(t, "%s", digits);
}

tpmg_status tpmg_solver_describe(const tpmg_solver *solver, char *text, size_t size,
                                 size_t *length) {
  if (!solver)
    return TPMG_ERROR_ARGUMENT;
  tpmg_solver_state s;
  tpmg_solver_get_state(solver, &s);
  TPMG_CHECK(s.ctx, text || size == 0, TPMG_ERROR_ARGUMENT,
             "tpmg_solver_describe: text is NULL with size %zu (NULL asks for the length only, "
             "with size 0)",
             size);
  const tpmg_solver_options *o = &s.options;
  int gmres = o->type == TPMG_SOLVER_GMRES || o->type == TPMG_SOLVER_FMG_GMRES;
  json_text t = {text, size, 0, 0};
  put(&t, "{");
  string(&t, "solver", tpmg_solver_type_name(o->type));
  string(&t, "arithmetic", tpmg_arithmetic_name(o->arithmetic));
  string(&t, "smoother", tpmg_smoother_variant_name(o->smoother));
  if (gmres)
    string(&t, "preconditioning", tpmg_preconditioning_name(o->preconditioning));
  else
    null(&t, "preconditioning");
  number(&t, "tolerance", o->tolerance);
  integer(&t, "max_iterations", o->max_iterations);
  if (gmres)
    integer(&t, "restart", s.restart);
  else
    null(&t, "restart");
  integer(&t, "solves", s.solves);
  if (s.solves > 0) {
    integer(&t, "iterations", s.last.iterations);
    key(&t, "converged");
    put(&t, s.last.converged ? "true" : "false");
    number(&t, "residual_norm_0", s.last.residual_norm_0);
    number(&t, "residual_norm", s.last.residual_norm);
    number(&t, "residual_reduction", s.last.residual_reduction);
  } else {
    const char *none[] = {"iterations", "converged", "residual_norm_0", "residual_norm",
                          "residual_reduction"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; ++i)
      null(&t, none[i]);
  }
  put(&t, "}");
  if (length)
    *length = t.length;
  return TPMG_SUCCESS;
}
