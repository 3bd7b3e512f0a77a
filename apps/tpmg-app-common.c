#define _POSIX_C_SOURCE 200809L

#include "tpmg-app-common.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
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

void app_usage_error(const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  fprintf(stderr, "%s: %s\n", program_name, message);
  exit(APP_EXIT_USAGE);
}

int app_option_is(const char *arg, const char *name) {
  size_t n = strlen(name);
  return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

const char *app_option_value(int argc, char **argv, int *i, const char *name) {
  const char *equals = strchr(argv[*i], '=');
  if (equals)
    return equals + 1;
  if (*i + 1 >= argc)
    app_usage_error("%s needs a value", name);
  return argv[++*i];
}

int app_parse_int(const char *name, const char *text, int min, int max) {
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  int ok = *text != '\0' && *end == '\0' && errno == 0 && value >= min && value <= max;
  if (!ok) {
    if (max == INT_MAX)
      app_usage_error("%s %s: expected an integer >= %d", name, text, min);
    app_usage_error("%s %s: expected an integer in %d..%d", name, text, min, max);
  }
  return (int)value;
}

double app_parse_positive(const char *name, const char *text) {
  char *end = NULL;
  errno = 0;
  double value = strtod(text, &end);
  if (*text == '\0' || *end != '\0' || errno != 0 || !isfinite(value) || !(value > 0))
    app_usage_error("%s %s: expected a number > 0", name, text);
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
    if (end == p || errno != 0 || !isfinite(value) || count == max_count ||
        (*end != ',' && *end != '\0'))
      app_usage_error("%s %s: expected at most %d comma-separated numbers", name, text, max_count);
    values[count++] = value;
    if (*end == '\0')
      return count;
    p = end + 1;
  }
}

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
  for (int level = 2; level < 31; ++level) {
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
  return dim == 2 ? 10 : 8;
}

const char *app_group(long long value, char buffer[32]) {
  char digits[24];
  int n = snprintf(digits, sizeof digits, "%lld", value < 0 ? -value : value);
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

int app_library_error(const tpmg_context *ctx, const char *call, tpmg_status status) {
  static const char *const names[] = {"success",       "bad argument",  "unsupported",
                                      "out of memory", "backend error", "numerical failure"};
  const char *message = ctx ? tpmg_context_last_error(ctx) : "";
  if (message[0] == '\0')
    message = (unsigned)status < sizeof names / sizeof names[0] ? names[status] : "unknown error";
  fprintf(stderr, "%s: %.*s: %s\n", program_name, (int)strcspn(call, "("), call, message);
  return APP_EXIT_LIBRARY;
}
