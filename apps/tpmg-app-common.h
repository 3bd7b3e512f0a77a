/* The app layer of the tpmg command-line programs (tpmg-poisson, tpmg-bench,
 * dealii-poisson, dealii-compare; not part of the library): strict option
 * parsing where every bad option or value is one line on stderr and exit
 * status 2, the options every program shares (the problem, the solver, threads
 * and backend), one-line JSON output, the wall clock, and choosing a level by
 * its DoF count. Names of enums are the library's (tpmg_X_from_name), ranges
 * the library's documented bounds (tpmg.h), so that the programs and the
 * library agree. Written in C, callable from C++. */
#ifndef TPMG_APP_COMMON_H
#define TPMG_APP_COMMON_H

#include <stdio.h>

#include "tpmg.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Call handler instead of exit(2) after a usage error's message; it must not
 * return (a fuzzer's longjmp). NULL: exit. */
void app_set_usage_exit(void (*handler)(void));

/* Under mpirun the ranks decide together how a program ends (tpmg-app-mpi.c):
 * a usage error calls hook(APP_EXIT_USAGE, message) instead of printing its
 * message, and --help calls hook(0, NULL) before printing the help. The hook
 * does not return after a usage error; after --help it returns when every rank
 * was given --help (the help is then printed and the program exits 0). NULL:
 * print and exit on this process alone. */
void app_set_exit_hook(void (*hook)(int status, const char *message));

/* --help: print(), then exit 0 (under mpirun once every rank agrees, see
 * app_set_exit_hook); 1 if stdout cannot be written. */
void app_help_exit(void (*print)(void))
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* ---- parsing single options ---------------------------------------------- */

/* One command-line option: argv[*i] is "--name" or "--name=value". Returns
 * whether its name is `name`. */
int app_option_is(const char *arg, const char *name);

/* The value of option `name` at argv[*i]: the text after '=' or the next
 * argument (then *i advances). A missing value, and an option given twice,
 * are usage errors. */
const char *app_option_value(int argc, char **argv, int *i, const char *name);

/* A flag (an option without a value, "--json"): a value is a usage error. A
 * flag given twice counts once. */
void app_option_flag(const char *arg, const char *name);

/* Forget the options seen so far (app_option_value refuses repeats): for a
 * program, or a fuzzer, that parses several command lines. */
void app_options_reset(void);

/* The options of the command line as given, in their order: the number seen
 * by app_option_value and app_option_flag (at most APP_MAX_OPTIONS), and
 * option i's name ("--dim") and value text as given ("" for a flag). Under
 * mpirun the ranks compare them. */
#define APP_MAX_OPTIONS 64
int app_options_count(void);
const char *app_options_name(int i);
const char *app_options_text(int i);

/* An integer in [min, max]; anything else is a usage error naming the option. */
int app_parse_int(const char *name, const char *text, int min, int max);

/* A finite number > 0. */
double app_parse_positive(const char *name, const char *text);

/* A number in the closed interval [low, high]. */
double app_parse_closed_interval(const char *name, const char *text, double low, double high);

/* A number in the open interval (low, high). */
double app_parse_open_interval(const char *name, const char *text, double low, double high);

/* The index of `text` in the NULL-terminated list `choices`. */
int app_parse_choice(const char *name, const char *text, const char *const *choices);

/* A comma-separated list of 1..max_count finite numbers; returns the count. */
int app_parse_list(const char *name, const char *text, double *values, int max_count);

/* Enum values by their library names (tpmg_X_from_name); an unknown name is a
 * usage error that lists the names. */
tpmg_solver_type app_parse_solver_type(const char *name, const char *text);
tpmg_arithmetic app_parse_arithmetic(const char *name, const char *text);
tpmg_smoother_variant app_parse_smoother_variant(const char *name, const char *text);
tpmg_rhs app_parse_rhs(const char *name, const char *text);
tpmg_preconditioning app_parse_preconditioning(const char *name, const char *text);
tpmg_precision app_parse_precision(const char *name, const char *text);

/* Backend by name ("cpu", "cuda", "cuda/tiled", ...): returns text; a name
 * tpmg does not know, or a backend that is not compiled in or has no device,
 * is a usage error that says so. */
const char *app_parse_backend(const char *name, const char *text);

/* ---- the options the programs share ---------------------------------------- */

/* The problem: --dim, --degree, --level, --cells, --box, --rhs. */
/* The coefficient a of -∇·(a∇u) + c u (--coefficient):
 *   one           a = 1;
 *   step37        deal.II step-37's a(x) = 1 / (0.05 + 2 |x|^2), smooth, given at
 *                 the quadrature points (TPMG_COEFFICIENT_QUADRATURE);
 *   checkerboard:C the box cut into 4 equal parts per direction, a = C on the
 *                 parts whose index sum is odd, 1 on the others, given per
 *                 cell (TPMG_COEFFICIENT_CELLS) by its value at the cell's
 *                 centre: exact where the parts' faces are cell faces (at least
 *                 4 cells per direction on the finest level, a multiple of 4;
 *                 with --grading a quarter of the cells per direction each);
 *   random:C      a rough coefficient, per cell: a = C^u with u uniform in
 *                 [0, 1) from a hash of the cell's global index (the same on
 *                 every partition), so the values spread log-uniformly
 *                 between 1 and C, independently from cell to cell. */
typedef enum {
  APP_COEFFICIENT_ONE = 0,
  APP_COEFFICIENT_STEP37,
  APP_COEFFICIENT_CHECKERBOARD,
  APP_COEFFICIENT_RANDOM
} app_coefficient;

/* The most coarse cells per direction of --grading R != 1. */
#define APP_MAX_GRADED_CELLS 1024

typedef struct {
  int dim, degree;
  int level;    /* 0: not given, app_problem_finish chooses it */
  int cells[3]; /* 1 where not given */
  int n_cells;  /* values given to --cells, 0 if none */
  double box[6];
  int n_box;    /* values given to --box, 0 if none (the unit square or cube) */
  tpmg_rhs rhs; /* default TPMG_RHS_SINE */
  double reaction; /* --reaction: c of -Δu + c u, default 0 */
  app_coefficient coefficient; /* --coefficient, default APP_COEFFICIENT_ONE */
  double contrast;             /* C of --coefficient checkerboard:C or random:C */
  /* --grading R: the coarse cells' widths along each direction a geometric
   * sequence w_i ∝ R^i scaled to the box (default 1: equal cells); widths:
   * those of direction d, set by app_problem_finish where R != 1 */
  double grading;
  double widths[3][APP_MAX_GRADED_CELLS];
  const char *cells_text, *box_text; /* as given, for messages */
  const char *first;                 /* the first problem option given ("--dim"), or NULL */
} app_problem;

/* The library's default grid (tpmg_grid_options_default) without a level. */
app_problem app_problem_default(void);

/* If argv[*i] is a problem option, parse it into p (advancing *i past its
 * value) and return 1; else return 0. */
int app_problem_option(int argc, char **argv, int *i, app_problem *p);

/* The checks that combine problem options (degree for the dimension, counts of
 * --cells and --box, the coarse mesh's size), made once all are known; then
 * the level, if not given: the one whose DoF count is nearest to target_dofs. */
void app_problem_finish(app_problem *p, double target_dofs);

/* The library's grid options for the problem. */
tpmg_grid_options app_problem_grid_options(const app_problem *p);

/* "one", "step37", "checkerboard:C" or "random:C" for p's coefficient, into text
 * (size bytes). */
const char *app_problem_coefficient_name(const app_problem *p, char *text, size_t size);

/* Give the grid p's coefficient (nothing for one): tpmg_grid_set_coefficient
 * with the values of this rank's cells of the finest level. */
tpmg_status app_problem_set_coefficient(const app_problem *p, tpmg_grid *grid);

/* The right-hand side of p: tpmg_problem_rhs, or for a variable coefficient
 * with --rhs sine tpmg_problem_rhs_function with f = -∇·(a∇u) + c u of u =
 * prod sin(π x_d) (so that tpmg_problem_l2_error measures the error). */
tpmg_status app_problem_rhs(const app_problem *p, tpmg_grid *grid, tpmg_precision precision,
                            void *b);

/* The solver: --solver, --precision, --smoother, --tol, --max-iterations,
 * --restart, --preconditioning. tolerance and restart 0 (not given) until
 * app_solver_finish. */
tpmg_solver_options app_solver_default(void);

/* If argv[*i] is a solver option, parse it into s and return 1; else 0. */
int app_solver_option(int argc, char **argv, int *i, tpmg_solver_options *s);

/* The default tolerance for the precision where none was given (1e-9; 1e-3
 * in float) and the default restart, and the checks that combine solver
 * options (--preconditioning and --restart only with GMRES). */
void app_solver_finish(tpmg_solver_options *s);

/* Where it runs: --threads, --backend. */
typedef struct {
  int threads;         /* 0: OpenMP's default */
  const char *backend; /* NULL: the library's default ("cpu") */
} app_machine;

app_machine app_machine_default(void);

/* If argv[*i] is --threads or --backend, parse it into m and return 1; else 0. */
int app_machine_option(int argc, char **argv, int *i, app_machine *m);

/* How a context spreads over the ranks of mpirun: --whole-level-dofs and
 * --overlap (tpmg_context_options; tpmg-poisson and tpmg-bench). */
typedef struct {
  int whole_level_dofs; /* -1: the backend's choice */
  int overlap;          /* 0 or 1 (default) */
} app_distribution;

app_distribution app_distribution_default(void);

/* If argv[*i] is --whole-level-dofs or --overlap, parse it into d and return
 * 1; else 0. */
int app_distribution_option(int argc, char **argv, int *i, app_distribution *d);

/* ---- one line of JSON on stdout -------------------------------------------- */

/* A JSON writer: objects and arrays nest; key is NULL for an array element. */
typedef struct {
  int depth;
  int count[8]; /* values written at each depth, for the commas */
} app_json;

void app_json_begin(app_json *j);                               /* "{" */
void app_json_end(app_json *j);                                 /* "}" and a newline */
void app_json_open(app_json *j, const char *key, char bracket); /* '[' or '{' */
void app_json_close(app_json *j, char bracket);                 /* ']' or '}' */
void app_json_int(app_json *j, const char *key, long long value);
void app_json_number(app_json *j, const char *key, double value); /* 9 digits; null if not finite */
void app_json_exact(app_json *j, const char *key, double value); /* 17 digits; null if not finite */
void app_json_string(app_json *j, const char *key, const char *value); /* null for NULL */
void app_json_bool(app_json *j, const char *key, int value);
void app_json_null(app_json *j, const char *key);

/* The problem's dim, degree, level, cells, box and n_dofs (box as given to the grid). */
void app_json_problem(app_json *j, const tpmg_grid_options *grid, tpmg_index n_dofs);

/* The solver's options and last result as the library describes them
 * (tpmg_solver_describe: solver, arithmetic, ..., iterations, converged,
 * residuals), as members of the current object; none where the description
 * does not fit in memory. */
void app_json_solver(app_json *j, const tpmg_solver *solver);

/* ---- other helpers ---------------------------------------------------------- */

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

/* A count held in a double (app_level_dofs) the same way while it fits in a
 * long long, else as "3.34e+28": no conversion that overflows. */
const char *app_group_count(double value, char buffer[32]);

/* Report a failed library call: "<program>: <function>: <context message>" on
 * stderr, where <function> is `call` up to its first '('. Returns APP_EXIT_LIBRARY. ctx may be NULL
 * (then the status is named). */
int app_library_error(const tpmg_context *ctx, const char *call, tpmg_status status);

/* ---- MPI (tpmg-app-mpi.c; the C programs) ------------------------------- */

/* Initialize MPI when started by mpirun (else one process, no MPI). Until
 * app_mpi_agree_options a usage error or --help on one rank ends every rank
 * alike (app_set_exit_hook): exit status 2 on every rank, one line each. */
void app_mpi_init(int *argc, char ***argv);
/* Collective, after parsing: the ranks compare their options as given (the
 * program and every option's name and value text, in any order); a difference
 * is a usage error on every rank, one line naming the option and the first
 * rank that differs from rank 0. */
void app_mpi_agree_options(void);
/* The largest exit status of all ranks (a failure on one rank alone, such as
 * a file only rank 0 writes, becomes every rank's). */
int app_mpi_agree_status(int status);
/* The exit status once stdout is flushed: a failed write to it (a full disk)
 * is one line on stderr and, after a success, APP_EXIT_LIBRARY; then agreed
 * by the ranks (app_mpi_agree_status): call it on every rank. */
int app_stdout_status(int status);
/* A pointer to MPI_COMM_WORLD for tpmg_context_options.mpi_comm, or NULL. */
const void *app_mpi_comm(void);
int app_mpi_rank(void);
int app_mpi_size(void);
/* Over all ranks (the value itself on one process). */
double app_mpi_sum(double value);
double app_mpi_max(double value);

#ifdef __cplusplus
}
#endif

#endif
