/* Helpers shared by the tpmg command-line programs (not part of the library):
 * strict option parsing where every bad option or value is one line on stderr
 * and exit status 2, the wall clock, and choosing a level by its DoF count. */
#ifndef TPMG_APP_COMMON_H
#define TPMG_APP_COMMON_H

#include "tpmg.h"

/* Exit statuses of the programs: 0 success, 1 a library error, 2 a usage error. */
enum { APP_EXIT_LIBRARY = 1, APP_EXIT_USAGE = 2 };

/* The program name used in messages ("tpmg-poisson"). */
void app_set_program(const char *name);
const char *app_program(void);

/* Print "<program>: <message>" as one line on stderr and exit with status 2. */
void app_usage_error(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* One command-line option: argv[*i] is "--name" or "--name=value". Returns
 * whether its name is `name`. */
int app_option_is(const char *arg, const char *name);

/* The value of option `name` at argv[*i]: the text after '=' or the next
 * argument (then *i advances). A missing value is a usage error. */
const char *app_option_value(int argc, char **argv, int *i, const char *name);

/* An integer in [min, max]; anything else is a usage error naming the option. */
int app_parse_int(const char *name, const char *text, int min, int max);

/* A finite number > 0. */
double app_parse_positive(const char *name, const char *text);

/* The index of `text` in the NULL-terminated list `choices`. */
int app_parse_choice(const char *name, const char *text, const char *const *choices);

/* A comma-separated list of 1..max_count numbers; returns the count. */
int app_parse_list(const char *name, const char *text, double *values, int max_count);

/* Backend by name ("cpu", "cuda", "cuda/tiled", ...): returns text; a name
 * tpmg does not know, or a backend that is not compiled in or has no device,
 * is a usage error that says so. */
const char *app_parse_backend(const char *name, const char *text);

/* Wall clock in seconds (CLOCK_MONOTONIC). */
double app_now(void);

/* DoFs of level `level` of a dim-D Q_degree grid on cells[0] x cells[1] (x
 * cells[2]) coarse cells, as a double (no overflow for any level). */
double app_level_dofs(int dim, int degree, const int cells[3], int level);

/* The level >= 1 whose DoF count is nearest to `target` on a log scale (the
 * smaller one on a tie). */
int app_choose_level(int dim, int degree, const int cells[3], double target);

/* Largest degree the library supports in a dimension. */
int app_max_degree(int dim);

/* Grouped integer ("1,234,567") into buffer of size >= 32. */
const char *app_group(long long value, char buffer[32]);

/* Report a failed library call: "<program>: <function>: <context message>" on
 * stderr, where <function> is `call` up to its first '('. Returns APP_EXIT_LIBRARY. ctx may be NULL
 * (then the status is named). */
int app_library_error(const tpmg_context *ctx, const char *call, tpmg_status status);

#endif
