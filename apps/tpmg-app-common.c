#define _POSIX_C_SOURCE 200809L

#include "tpmg-app-common.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *program_name = "tpmg";

void app_set_program(const char *name) {
  program_name = name;
}

const char *app_program(void) {
  return program_name;
}

static void (*usage_exit)(void) = NULL;

void app_set_usage_exit(void (*handler)(void)) {
  usage_exit = handler;
}

static void (*exit_hook)(int status, const char *message) = NULL;

void app_set_exit_hook(void (*hook)(int status, const char *message)) {
  exit_hook = hook;
}

void app_usage_error(const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  if (exit_hook)
    exit_hook(APP_EXIT_USAGE, message);
  fprintf(stderr, "%s: %s\n", program_name, message);
  if (usage_exit)
    usage_exit();
  exit(APP_EXIT_USAGE);
}

void app_help_exit(void (*print)(void)) {
  if (exit_hook)
    exit_hook(0, NULL);
  print();
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "%s: writing the help failed: %s\n", program_name,
            strerror(errno ? errno : EIO));
    exit(APP_EXIT_LIBRARY);
  }
  exit(0);
}

int app_option_is(const char *arg, const char *name) {
  size_t n = strlen(name);
  return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

/* The options seen on this command line, to refuse repeats and for the
 * ranks to compare: name and value text (borrowed from argv; "" for a flag). */
static const char *seen_options[APP_MAX_OPTIONS], *seen_texts[APP_MAX_OPTIONS];
static int n_seen_options = 0;

void app_options_reset(void) {
  n_seen_options = 0;
}

int app_options_count(void) {
  return n_seen_options;
}

const char *app_options_name(int i) {
  return i >= 0 && i < n_seen_options ? seen_options[i] : NULL;
}

const char *app_options_text(int i) {
  return i >= 0 && i < n_seen_options ? seen_texts[i] : NULL;
}

/* Remember an option; returns whether it was seen before. */
static int remember_option(const char *name, const char *text) {
  for (int s = 0; s < n_seen_options; ++s)
    if (strcmp(seen_options[s], name) == 0)
      return 1;
  if (n_seen_options < APP_MAX_OPTIONS) {
    seen_options[n_seen_options] = name;
    seen_texts[n_seen_options++] = text;
  }
  return 0;
}

const char *app_option_value(int argc, char **argv, int *i, const char *name) {
  const char *equals = strchr(argv[*i], '='), *text = NULL;
  if (equals)
    text = equals + 1;
  else if (*i + 1 < argc)
    text = argv[*i + 1];
  if (remember_option(name, text ? text : ""))
    app_usage_error("%s given twice", name);
  if (!text)
    app_usage_error("%s needs a value", name);
  if (!equals)
    ++*i;
  return text;
}

void app_option_flag(const char *arg, const char *name) {
  if (strchr(arg, '='))
    app_usage_error("%s takes no value: %.200s", name, arg);
  remember_option(name, "");
}

int app_parse_int(const char *name, const char *text, int min, int max) {
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  int ok = *text != '\0' && *end == '\0' && errno == 0 && value >= min && value <= max;
  if (!ok) {
    if (max == INT_MAX && *text != '\0' && *end == '\0' && errno == 0 && value < min)
      app_usage_error("%s %s: expected an integer >= %d", name, text, min);
    app_usage_error("%s %s: expected an integer in %d..%d", name, text, min, max);
  }
  return (int)value;
}

/* The whole of text as a finite number: 0, or 1 for not a number, 2 for one
 * outside double's range (overflow, or an underflow to a denormal or zero). */
static int parse_number(const char *text, double *value) {
  char *end = NULL;
  errno = 0;
  *value = strtod(text, &end);
  if (*text == '\0' || *end != '\0' || (errno == 0 && !isfinite(*value)))
    return 1; /* not a number, or nan or inf as such */
  return errno != 0 ? 2 : 0;
}

/* The usage error of a number that parse_number refused. */
static void number_error(const char *name, const char *text, int why, const char *expected) {
  if (why == 2)
    app_usage_error("%s %s: outside the range of a double (about 2.2e-308 to 1.8e308 in "
                    "magnitude)",
                    name, text);
  app_usage_error("%s %s: expected %s", name, text, expected);
}

double app_parse_positive(const char *name, const char *text) {
  double value = 0;
  int why = parse_number(text, &value);
  if (why != 0 || !(value > 0))
    number_error(name, text, why, "a number > 0");
  return value;
}

double app_parse_closed_interval(const char *name, const char *text, double low, double high) {
  double value = 0;
  int why = parse_number(text, &value);
  if (why != 0 || !(value >= low && value <= high)) {
    char expected[80];
    snprintf(expected, sizeof expected, "a number in [%g, %g]", low, high);
    number_error(name, text, why, expected);
  }
  return value;
}

double app_parse_open_interval(const char *name, const char *text, double low, double high) {
  double value = 0;
  int why = parse_number(text, &value);
  if (why != 0 || !(value > low && value < high)) {
    char expected[80];
    snprintf(expected, sizeof expected, "a number in (%g, %g)", low, high);
    number_error(name, text, why, expected);
  }
  return value;
}

int app_parse_choice(const char *name, const char *text, const char *const *choices) {
  char list[256] = "";
  for (int c = 0; choices[c]; ++c) {
    if (strcmp(text, choices[c]) == 0)
      return c;
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%s", c ? ", " : "", choices[c]);
  }
  app_usage_error("%s %s: expected one of %s", name, text, list);
}

int app_parse_list(const char *name, const char *text, double *values, int max_count) {
  int count = 0;
  const char *p = text;
  for (;;) {
    char *end = NULL;
    errno = 0;
    double value = strtod(p, &end);
    if (end == p || (errno == 0 && !isfinite(value)) || count == max_count ||
        (*end != ',' && *end != '\0'))
      app_usage_error("%s %s: expected at most %d comma-separated finite numbers", name, text,
                      max_count);
    if (errno != 0)
      app_usage_error("%s %s: %.*s is outside the range of a double (about 2.2e-308 to 1.8e308 "
                      "in magnitude)",
                      name, text, (int)(end - p), p);
    values[count++] = value;
    if (*end == '\0')
      return count;
    p = end + 1;
  }
}

/* app_parse_<type>: the value of tpmg_<type>_from_name, or a usage error that
 * lists the names (tpmg_<type>_name of 0, 1, ... until NULL). */
#define APP_PARSE_ENUM(type, ctype)                                                                \
  ctype app_parse_##type(const char *name, const char *text) {                                     \
    ctype value;                                                                                   \
    if (tpmg_##type##_from_name(text, &value) == TPMG_SUCCESS)                                     \
      return value;                                                                                \
    char list[256] = "";                                                                           \
    for (int v = 0; tpmg_##type##_name((ctype)v); ++v) {                                           \
      size_t used = strlen(list);                                                                  \
      snprintf(list + used, sizeof list - used, "%s%s", v ? ", " : "",                             \
               tpmg_##type##_name((ctype)v));                                                      \
    }                                                                                              \
    app_usage_error("%s %s: expected one of %s", name, text, list);                                \
  }

APP_PARSE_ENUM(solver_type, tpmg_solver_type)
APP_PARSE_ENUM(arithmetic, tpmg_arithmetic)
APP_PARSE_ENUM(smoother_variant, tpmg_smoother_variant)
APP_PARSE_ENUM(rhs, tpmg_rhs)
APP_PARSE_ENUM(preconditioning, tpmg_preconditioning)
APP_PARSE_ENUM(precision, tpmg_precision)

const char *app_parse_backend(const char *name, const char *text) {
  int available = 0;
  if (tpmg_backend_available(text, &available) != TPMG_SUCCESS)
    app_usage_error("%s %s: no such backend (cpu, cuda, cuda/VARIANT)", name, text);
  if (!available)
    app_usage_error("%s %s: backend not available (not compiled in, no usable device, or no "
                    "such variant)",
                    name, text);
  return text;
}

/* ---- the shared options ---- */

app_problem app_problem_default(void) {
  tpmg_grid_options grid = tpmg_grid_options_default();
  app_problem p = {.dim = grid.dim, .degree = grid.degree, .rhs = TPMG_RHS_SINE, .grading = 1.0};
  for (int d = 0; d < 3; ++d)
    p.cells[d] = 1;
  return p;
}

int app_problem_option(int argc, char **argv, int *i, app_problem *p) {
  static const char *const names[] = {"--dim",   "--degree", "--level",
                                      "--cells", "--box",    "--rhs",
                                      "--reaction", "--coefficient", "--grading"};
  const int n_names = (int)(sizeof names / sizeof names[0]);
  const char *arg = argv[*i];
  int which = 0;
  while (which < n_names && !app_option_is(arg, names[which]))
    ++which;
  if (which == n_names)
    return 0;
  const char *name = names[which];
  const char *text = app_option_value(argc, argv, i, name);
  if (!p->first)
    p->first = name;
  switch (which) {
  case 0:
    p->dim = app_parse_int(name, text, 2, 3);
    break;
  case 1:
    p->degree = app_parse_int(name, text, 1, INT_MAX); /* the bound for dim: finish */
    break;
  case 2:
    p->level = app_parse_int(name, text, 1, TPMG_MAX_FINE_LEVEL);
    break;
  case 3: {
    double cells[3];
    p->cells_text = text;
    p->n_cells = app_parse_list(name, text, cells, 3);
    for (int d = 0; d < p->n_cells; ++d) {
      if (!(cells[d] >= 1 && cells[d] <= INT_MAX && cells[d] == floor(cells[d])))
        app_usage_error("%s %s: each count must be an integer in 1..%d", name, text, INT_MAX);
      p->cells[d] = (int)cells[d];
    }
    for (int d = p->n_cells; d < 3; ++d)
      p->cells[d] = 1;
    break;
  }
  case 4:
    p->box_text = text;
    p->n_box = app_parse_list(name, text, p->box, 6);
    break;
  case 6:
    p->reaction = app_parse_closed_interval(name, text, 0.0, TPMG_MAX_REACTION);
    break;
  case 7:
    if (strcmp(text, "one") == 0) {
      p->coefficient = APP_COEFFICIENT_ONE;
    } else if (strcmp(text, "step37") == 0) {
      p->coefficient = APP_COEFFICIENT_STEP37;
    } else if (strncmp(text, "checkerboard:", 13) == 0 || strncmp(text, "random:", 7) == 0) {
      const int board = text[0] == 'c';
      const char *number = strchr(text, ':') + 1;
      p->coefficient = board ? APP_COEFFICIENT_CHECKERBOARD : APP_COEFFICIENT_RANDOM;
      char *end = NULL;
      p->contrast = strtod(number, &end);
      if (end == number || *end != '\0' || !isfinite(p->contrast) ||
          p->contrast < TPMG_MIN_COEFFICIENT || p->contrast > TPMG_MAX_COEFFICIENT)
        app_usage_error("%s %s: C of %s:C must be a number in [%g, %g]", name, text,
                        board ? "checkerboard" : "random", TPMG_MIN_COEFFICIENT,
                        TPMG_MAX_COEFFICIENT);
    } else {
      app_usage_error("%s %s: must be one, step37, checkerboard:C or random:C", name, text);
    }
    break;
  case 8: {
    char *end = NULL;
    errno = 0;
    p->grading = strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !isfinite(p->grading) || !(p->grading > 0))
      app_usage_error("%s %s: must be a finite number > 0", name, text);
    break;
  }
  default:
    p->rhs = app_parse_rhs(name, text);
  }
  return 1;
}

void app_problem_finish(app_problem *p, double target_dofs) {
  if (p->degree > app_max_degree(p->dim))
    app_usage_error("--degree %d: must be 1..%d for dim %d", p->degree, app_max_degree(p->dim),
                    p->dim);
  if (p->n_cells != 0 && p->n_cells != p->dim)
    app_usage_error("--cells %s: needs %d values for dim %d", p->cells_text, p->dim, p->dim);
  if (p->n_box != 0 && p->n_box != 2 * p->dim)
    app_usage_error("--box %s: needs %d values for dim %d", p->box_text, 2 * p->dim, p->dim);
  for (int d = 0; d < p->n_box / 2; ++d)
    if (!(p->box[2 * d] < p->box[2 * d + 1]))
      app_usage_error("--box %s: needs a_%d < b_%d", p->box_text, d, d);
  if (p->dim == 2)
    p->cells[2] = 1;
  if ((p->coefficient == APP_COEFFICIENT_CHECKERBOARD || p->coefficient == APP_COEFFICIENT_RANDOM) &&
      p->rhs == TPMG_RHS_SINE)
    app_usage_error("--coefficient %s: u = prod sin(pi x_d) solves no problem with a "
                    "discontinuous coefficient; take --rhs one or ones",
                    p->coefficient == APP_COEFFICIENT_RANDOM ? "random" : "checkerboard");
  /* a coarse mesh of any size, as long as level 1's vectors can be indexed
   * (the library's bound on the finest level, tpmg_grid_create) */
  double coarse_dofs = app_level_dofs(p->dim, p->degree, p->cells, 0);
  if (app_level_dofs(p->dim, p->degree, p->cells, 1) * sizeof(double) >= 0x1p62)
    app_usage_error("--cells %s: the coarse mesh has %.3g DoFs at degree %d; its first "
                    "refinement's vectors would overflow the index type",
                    p->cells_text ? p->cells_text : (p->dim == 2 ? "1,1" : "1,1,1"), coarse_dofs,
                    p->degree);
  if (p->level == 0)
    p->level = app_choose_level(p->dim, p->degree, p->cells, target_dofs);
  for (int d = 0; d < p->dim && p->grading != 1.0; ++d) {
    if (p->cells[d] > APP_MAX_GRADED_CELLS)
      app_usage_error("--grading %g: at most %d coarse cells per direction, not %d", p->grading,
                      APP_MAX_GRADED_CELLS, p->cells[d]);
    /* w_i = (b - a) R^i / sum_j R^j */
    const double a = p->n_box ? p->box[2 * d] : 0.0, b = p->n_box ? p->box[2 * d + 1] : 1.0;
    double sum = 0.0;
    for (int i = 0; i < p->cells[d]; ++i) sum += pow(p->grading, i);
    if (!isfinite(sum))
      app_usage_error("--grading %g: its %d-th power overflows", p->grading, p->cells[d] - 1);
    for (int i = 0; i < p->cells[d]; ++i) p->widths[d][i] = (b - a) * (pow(p->grading, i) / sum);
  }
  /* the library's box range (tpmg_grid_options.box), named by the option */
  for (int d = 0; d < p->n_box / 2; ++d) {
    double a = p->box[2 * d], b = p->box[2 * d + 1], largest = fmax(fabs(a), fabs(b));
    if (largest > TPMG_MAX_BOX_COORDINATE)
      app_usage_error("--box %s: coordinates beyond +-%g are not supported", p->box_text,
                      TPMG_MAX_BOX_COORDINATE);
    double h = (b - a) / ldexp(p->cells[d], p->level),
           minimum = fmax(TPMG_MIN_CELL_WIDTH, 1e-12 * largest);
    if (!(h >= minimum))
      app_usage_error("--box %s: the cells of level %d are %g wide in direction %d, below the "
                      "supported minimum %g (the larger of %g and 1e-12 times the largest "
                      "coordinate)",
                      p->box_text, p->level, h, d, minimum, TPMG_MIN_CELL_WIDTH);
  }
}

tpmg_grid_options app_problem_grid_options(const app_problem *p) {
  tpmg_grid_options grid = tpmg_grid_options_default();
  grid.dim = p->dim;
  grid.degree = p->degree;
  grid.fine_level = p->level;
  for (int d = 0; d < 3; ++d)
    grid.cells[d] = p->cells[d];
  for (int j = 0; j < p->n_box; ++j)
    grid.box[j] = p->box[j];
  grid.reaction = p->reaction;
  for (int d = 0; d < p->dim && p->grading != 1.0; ++d)
    grid.cell_widths[d] = p->widths[d];
  return grid;
}

const char *app_problem_coefficient_name(const app_problem *p, char *text, size_t size) {
  if (p->coefficient == APP_COEFFICIENT_CHECKERBOARD || p->coefficient == APP_COEFFICIENT_RANDOM)
    snprintf(text, size, "%s:%g",
             p->coefficient == APP_COEFFICIENT_RANDOM ? "random" : "checkerboard", p->contrast);
  else
    snprintf(text, size, "%s", p->coefficient == APP_COEFFICIENT_STEP37 ? "step37" : "one");
  return text;
}

/* Propagate a failed status (the context keeps its message). */
#define APP_TRY(call)                                                                              \
  do {                                                                                             \
    tpmg_status app_try_status_ = (call);                                                          \
    if (app_try_status_ != TPMG_SUCCESS)                                                           \
      return app_try_status_;                                                                      \
  } while (0)

static const double app_pi = 3.14159265358979323846;

/* sin(π x), exactly 0 at integers (as the library's exact solution) */
static double sin_pi(double x) {
  const double n = nearbyint(x), s = sin(app_pi * (x - n));
  return fmod(n, 2.0) == 0.0 ? s : -s;
}

/* random:C's value of the cell of global index e: C^u, u in [0, 1) from the
 * 53 high bits of splitmix64(e) (Steele, Lea and Flood 2014) */
static double random_cell(double contrast, uint64_t e) {
  uint64_t z = e + 0x9e3779b97f4a7c15u;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return pow(contrast, (double)(z >> 11) * 0x1p-53);
}

static double step37(const double *x) {
  return 1.0 / (0.05 + 2.0 * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
}

tpmg_status app_problem_set_coefficient(const app_problem *p, tpmg_grid *grid) {
  if (p->coefficient == APP_COEFFICIENT_ONE)
    return TPMG_SUCCESS;
  tpmg_grid_options o;
  tpmg_level_layout layout;
  APP_TRY(tpmg_grid_get_options(grid, &o));
  APP_TRY(tpmg_grid_level_layout(grid, o.fine_level, &layout));
  const int k = o.degree, dim = o.dim;
  tpmg_index cells[3] = {1, 1, 1}, fine[3] = {1, 1, 1}; /* this rank's, the whole level's */
  for (int d = 0; d < dim; ++d)
    cells[d] = fine[d] = ((tpmg_index)o.cells[d]) << o.fine_level;
  cells[dim - 1] = layout.cell_end - layout.cell_first;
  const int quadrature = p->coefficient == APP_COEFFICIENT_STEP37;
  const int per_cell = quadrature ? (dim == 3 ? (k + 1) * (k + 1) * (k + 1) : (k + 1) * (k + 1)) : 1;
  const tpmg_index n = cells[0] * cells[1] * cells[2];
  double *values = malloc(sizeof(double) * (size_t)(n > 0 ? n * per_cell : 1));
  if (!values)
    return TPMG_ERROR_MEMORY;
  double points[3 * 11 * 11 * 11];
  tpmg_status status = TPMG_SUCCESS;
  for (tpmg_index e = 0; e < n && status == TPMG_SUCCESS; ++e) {
    tpmg_index cell[3] = {e % cells[0], e / cells[0] % cells[1], e / (cells[0] * cells[1])};
    cell[dim - 1] += layout.cell_first;
    if (quadrature) {
      status = tpmg_grid_quadrature_points(grid, cell, points);
      for (int q = 0; q < per_cell; ++q)
        values[e * per_cell + q] = step37(points + 3 * q);
    } else if (p->coefficient == APP_COEFFICIENT_RANDOM) {
      const uint64_t global = (uint64_t)cell[0] + (uint64_t)fine[0] * ((uint64_t)cell[1] + (uint64_t)fine[1] * (uint64_t)cell[2]);
      values[e] = random_cell(p->contrast, global);
    } else {
      /* the part of the cell's centre: 4 equal parts per direction */
      int sum = 0;
      for (int d = 0; d < dim; ++d)
        sum += (int)floor(4.0 * ((double)cell[d] + 0.5) / (double)fine[d]);
      values[e] = sum % 2 ? p->contrast : 1.0;
    }
  }
  if (status == TPMG_SUCCESS)
    status = tpmg_grid_set_coefficient(
        grid, quadrature ? TPMG_COEFFICIENT_QUADRATURE : TPMG_COEFFICIENT_CELLS, values);
  free(values);
  return status;
}

/* u = prod sin(π x_d) and f = -∇·(a∇u) + c u for step-37's a, whose gradient
 * is ∇a = -4 a^2 x: f = a dim π^2 u + 4 a^2 x·∇u + c u. */
typedef struct {
  int dim;
  double reaction;
} sine_data;

static double sine_u(const double *x, void *data) {
  const sine_data *s = data;
  double u = 1.0;
  for (int d = 0; d < s->dim; ++d)
    u *= sin_pi(x[d]);
  return u;
}

static double sine_f_step37(const double *x, void *data) {
  const sine_data *s = data;
  const double a = step37(x), u = sine_u(x, data);
  double x_grad_u = 0.0;
  for (int d = 0; d < s->dim; ++d) {
    double g = app_pi * cos(app_pi * x[d]);
    for (int e = 0; e < s->dim; ++e)
      if (e != d)
        g *= sin_pi(x[e]);
    x_grad_u += x[d] * g;
  }
  return a * s->dim * app_pi * app_pi * u + 4.0 * a * a * x_grad_u + s->reaction * u;
}

tpmg_status app_problem_rhs(const app_problem *p, tpmg_grid *grid, tpmg_precision precision,
                            void *b) {
  if (p->coefficient == APP_COEFFICIENT_ONE || p->rhs != TPMG_RHS_SINE)
    return tpmg_problem_rhs(grid, p->rhs, precision, b);
  tpmg_grid_options o;
  APP_TRY(tpmg_grid_get_options(grid, &o));
  sine_data data = {o.dim, o.reaction};
  return tpmg_problem_rhs_function(grid, sine_f_step37, sine_u, &data, precision, b);
}

tpmg_solver_options app_solver_default(void) {
  tpmg_solver_options s = tpmg_solver_options_default();
  s.tolerance = 0;
  s.restart = 0;
  return s;
}

int app_solver_option(int argc, char **argv, int *i, tpmg_solver_options *s) {
  const char *arg = argv[*i];
  if (app_option_is(arg, "--solver"))
    s->type = app_parse_solver_type("--solver", app_option_value(argc, argv, i, "--solver"));
  else if (app_option_is(arg, "--precision"))
    s->arithmetic =
        app_parse_arithmetic("--precision", app_option_value(argc, argv, i, "--precision"));
  else if (app_option_is(arg, "--smoother"))
    s->smoother =
        app_parse_smoother_variant("--smoother", app_option_value(argc, argv, i, "--smoother"));
  else if (app_option_is(arg, "--tol"))
    s->tolerance = app_parse_open_interval("--tol", app_option_value(argc, argv, i, "--tol"), 0, 1);
  else if (app_option_is(arg, "--max-iterations"))
    s->max_iterations = app_parse_int(
        "--max-iterations", app_option_value(argc, argv, i, "--max-iterations"), 1, INT_MAX);
  else if (app_option_is(arg, "--restart"))
    s->restart = app_parse_int("--restart", app_option_value(argc, argv, i, "--restart"), 1,
                               TPMG_MAX_RESTART);
  else if (app_option_is(arg, "--preconditioning"))
    s->preconditioning = app_parse_preconditioning(
        "--preconditioning", app_option_value(argc, argv, i, "--preconditioning"));
  else
    return 0;
  return 1;
}

void app_solver_finish(tpmg_solver_options *s) {
  /* A float solution's true residual cannot fall much below eps_float cond(A):
   * about 1e-5 to 1e-3 for the usual sizes, so float gets a looser default. */
  if (s->tolerance == 0)
    s->tolerance = s->arithmetic == TPMG_ARITHMETIC_FLOAT ? 1e-3 : 1e-9;
  int gmres = s->type == TPMG_SOLVER_GMRES || s->type == TPMG_SOLVER_FMG_GMRES;
  if (s->preconditioning != TPMG_PRECONDITION_RIGHT && !gmres)
    app_usage_error("--preconditioning %s: only with --solver gmres or fmg-gmres (not %s)",
                    tpmg_preconditioning_name(s->preconditioning), tpmg_solver_type_name(s->type));
  /* a restart given to a solver without GMRES is a mistake */
  if (s->restart != 0 && !gmres)
    app_usage_error("--restart %d: only with --solver gmres or fmg-gmres (not %s)", s->restart,
                    tpmg_solver_type_name(s->type));
  if (s->restart == 0)
    s->restart = tpmg_solver_options_default().restart;
}

app_machine app_machine_default(void) {
  app_machine m = {0, NULL};
  return m;
}

int app_machine_option(int argc, char **argv, int *i, app_machine *m) {
  const char *arg = argv[*i];
  if (app_option_is(arg, "--threads"))
    m->threads = app_parse_int("--threads", app_option_value(argc, argv, i, "--threads"), 1,
                               TPMG_MAX_THREADS);
  else if (app_option_is(arg, "--backend"))
    m->backend = app_parse_backend("--backend", app_option_value(argc, argv, i, "--backend"));
  else
    return 0;
  return 1;
}

app_distribution app_distribution_default(void) {
  app_distribution d = {-1, 1};
  return d;
}

int app_distribution_option(int argc, char **argv, int *i, app_distribution *d) {
  const char *arg = argv[*i];
  if (app_option_is(arg, "--whole-level-dofs"))
    d->whole_level_dofs = app_parse_int(
        "--whole-level-dofs", app_option_value(argc, argv, i, "--whole-level-dofs"), -1, INT_MAX);
  else if (app_option_is(arg, "--overlap"))
    d->overlap = app_parse_int("--overlap", app_option_value(argc, argv, i, "--overlap"), 0, 1);
  else
    return 0;
  return 1;
}

/* ---- JSON ---- */

/* The comma and the key of the next value. */
static void json_key(app_json *j, const char *key) {
  if (j->count[j->depth]++)
    putchar(',');
  if (key)
    printf("\"%s\":", key);
}

void app_json_begin(app_json *j) {
  memset(j, 0, sizeof *j);
  putchar('{');
}

void app_json_end(app_json *j) {
  (void)j;
  printf("}\n");
}

void app_json_open(app_json *j, const char *key, char bracket) {
  json_key(j, key);
  putchar(bracket);
  if (j->depth + 1 < (int)(sizeof j->count / sizeof j->count[0]))
    j->count[++j->depth] = 0;
}

void app_json_close(app_json *j, char bracket) {
  if (j->depth > 0)
    --j->depth;
  putchar(bracket);
}

void app_json_int(app_json *j, const char *key, long long value) {
  json_key(j, key);
  printf("%lld", value);
}

void app_json_number(app_json *j, const char *key, double value) {
  json_key(j, key);
  if (isfinite(value))
    printf("%.9g", value);
  else
    printf("null");
}

void app_json_exact(app_json *j, const char *key, double value) {
  json_key(j, key);
  if (isfinite(value))
    printf("%.17g", value);
  else
    printf("null");
}

void app_json_string(app_json *j, const char *key, const char *value) {
  json_key(j, key);
  if (!value) {
    printf("null");
    return;
  }
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)value; *p; ++p)
    if (*p == '"' || *p == '\\')
      printf("\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      printf("\\u%04x", *p);
    else
      putchar(*p);
  putchar('"');
}

void app_json_bool(app_json *j, const char *key, int value) {
  json_key(j, key);
  printf(value ? "true" : "false");
}

void app_json_null(app_json *j, const char *key) {
  json_key(j, key);
  printf("null");
}

void app_json_problem(app_json *j, const tpmg_grid_options *grid, tpmg_index n_dofs) {
  app_json_int(j, "dim", grid->dim);
  app_json_int(j, "degree", grid->degree);
  app_json_int(j, "level", grid->fine_level);
  app_json_open(j, "cells", '[');
  for (int d = 0; d < grid->dim; ++d)
    app_json_int(j, NULL, grid->cells[d]);
  app_json_close(j, ']');
  app_json_open(j, "box", '[');
  for (int k = 0; k < 2 * grid->dim; ++k)
    app_json_exact(j, NULL, grid->box[k]);
  app_json_close(j, ']');
  app_json_exact(j, "reaction", grid->reaction);
  app_json_int(j, "n_dofs", (long long)n_dofs);
}

void app_json_solver(app_json *j, const tpmg_solver *solver) {
  char buffer[1024], *text = buffer;
  size_t length = 0;
  tpmg_status status = tpmg_solver_describe(solver, buffer, sizeof buffer, &length);
  if (status == TPMG_SUCCESS && length >= sizeof buffer) { /* cut: once more, in full */
    text = malloc(length + 1);
    status = text ? tpmg_solver_describe(solver, text, length + 1, &length) : TPMG_ERROR_MEMORY;
  }
  /* "{...}": its members, after this object's */
  if (status == TPMG_SUCCESS && length > 2) {
    json_key(j, NULL);
    printf("%.*s", (int)(length - 2), text + 1);
  }
  if (text != buffer)
    free(text);
}

double app_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double app_level_dofs(int dim, int degree, const int cells[3], int level) {
  double n = 1;
  for (int d = 0; d < dim; ++d)
    n *= ldexp((double)cells[d], level) * degree + 1;
  return n;
}

int app_choose_level(int dim, int degree, const int cells[3], double target) {
  int best = 1;
  for (int level = 2; level <= TPMG_MAX_FINE_LEVEL; ++level) {
    double below = app_level_dofs(dim, degree, cells, level - 1);
    double here = app_level_dofs(dim, degree, cells, level);
    if (below >= target)
      break;
    if (fabs(log(here / target)) < fabs(log(below / target)))
      best = level;
  }
  return best;
}

int app_max_degree(int dim) {
  return dim == 2 ? TPMG_MAX_DEGREE_2D : TPMG_MAX_DEGREE_3D;
}

const char *app_group(long long value, char buffer[32]) {
  char digits[24];
  /* the magnitude as unsigned: -LLONG_MIN overflows a long long */
  unsigned long long magnitude =
      value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
  int n = snprintf(digits, sizeof digits, "%llu", magnitude);
  int out = 0;
  if (value < 0)
    buffer[out++] = '-';
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0)
      buffer[out++] = ',';
    buffer[out++] = digits[i];
  }
  buffer[out] = '\0';
  return buffer;
}

const char *app_group_count(double value, char buffer[32]) {
  if (fabs(value) < 0x1p63) /* exactly representable bound of a long long */
    return app_group((long long)value, buffer);
  snprintf(buffer, 32, "%.3g", value);
  return buffer;
}

int app_library_error(const tpmg_context *ctx, const char *call, tpmg_status status) {
  static const char *const names[] = {"success",       "bad argument",  "unsupported",
                                      "out of memory", "backend error", "numerical failure"};
  const char *message = ctx ? tpmg_context_last_error(ctx) : "";
  if (message[0] == '\0')
    message = (unsigned)status < sizeof names / sizeof names[0] ? names[status] : "unknown error";
  fprintf(stderr, "%s: %.*s: %s\n", program_name, (int)strcspn(call, "("), call, message);
  return APP_EXIT_LIBRARY;
}
