/* t710-setup-file: setup files (tpmg_setup_write, tpmg_setup_read).
 * - Round trip in 2D, 3D and on anisotropic boxes with several coarse cells,
 *   without and with a reaction (format version 2; without one a file stays
 *   version 1), for every tpmg_rhs: the grid options, the problem and the
 *   vector come back exactly (the vector
 *   bit for bit, including -0, subnormals and +-DBL_MAX); the header is the
 *   documented text; a file without a vector gives *b = NULL.
 * - A solve from the read setup has the same iterations, residual, solution
 *   and L2 error as the solve of the original problem.
 * - Hand-made bad files (missing, empty, not a setup file, another version,
 *   missing, duplicate or unknown keys, malformed or out-of-range values, a
 *   vector of the wrong length, truncated or extra data, non-finite entries)
 *   and bad arguments are refused with the documented status, a message that
 *   names the file and the problem, *grid and *b NULL, *rhs unchanged and no
 *   backend memory left allocated; so are a directory and a pipe (at once).
 * - Writing refuses a target that is no regular file; it replaces a file
 *   whole (through a symbolic link, which stays), and a failed write leaves
 *   the old file and no temporary file.
 * Files go to a temporary directory under the working directory (the build
 * tree), removed at the end. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reference.h"

static char directory[128];

static void path_of(char *path, size_t size, const char *name) {
  snprintf(path, size, "%s/%s", directory, name);
}

static void write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "t710-setup-file: cannot write %s: %s\n", path, strerror(errno));
    exit(1);
  }
}

/* The whole file, its length in *n. */
static unsigned char *read_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "t710-setup-file: cannot read %s: %s\n", path, strerror(errno));
    exit(1);
  }
  size_t capacity = 4096, used = 0;
  unsigned char *data = ref_malloc(capacity);
  for (;;) {
    used += fread(data + used, 1, capacity - used, f);
    if (used < capacity) break;
    capacity *= 2;
    unsigned char *bigger = realloc(data, capacity);
    if (!bigger) exit(2);
    data = bigger;
  }
  fclose(f);
  *n = used;
  return data;
}

/* x as 8 little-endian bytes, independent of the host's byte order. */
static void little_endian_bytes(double x, unsigned char *out) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  for (int i = 0; i < 8; ++i) out[i] = (unsigned char)(bits >> (8 * i));
}

static int contains(const char *haystack, const char *needle) {
  return strstr(haystack, needle) != NULL;
}

static int same_options(const tpmg_grid_options *a, const tpmg_grid_options *b) {
  int same = a->dim == b->dim && a->degree == b->degree && a->fine_level == b->fine_level;
  for (int d = 0; d < 3; ++d) same = same && a->cells[d] == b->cells[d];
  for (int j = 0; j < 6; ++j) same = same && memcmp(&a->box[j], &b->box[j], sizeof(double)) == 0;
  return same && memcmp(&a->reaction, &b->reaction, sizeof(double)) == 0;
}

/* ---- round trip and solve ------------------------------------------------ */

typedef struct {
  int iterations;
  double residual_norm, l2_error;
  double *x;
} solve_record;

static solve_record solve(tpmg_context *ctx, tpmg_grid *grid, tpmg_rhs rhs, const double *b) {
  tpmg_grid_options o;
  REF_CALL(ctx, tpmg_grid_get_options(grid, &o));
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, o.fine_level, &n, NULL));
  solve_record s = {0, 0.0, NAN, ref_malloc(sizeof(double) * (size_t)n)};
  tpmg_solver *solver = NULL;
  tpmg_solver_options options = tpmg_solver_options_default();
  options.tolerance = 1e-10;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  memset(s.x, 0, sizeof(double) * (size_t)n);
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_solve(solver, b, s.x, &result));
  REF_CHECK(result.converged, "solve did not converge: reduction %g", result.residual_reduction);
  s.iterations = result.iterations;
  s.residual_norm = result.residual_norm;
  if (rhs == TPMG_RHS_SINE)
    REF_CALL(ctx, tpmg_problem_l2_error(grid, rhs, TPMG_DOUBLE, s.x, &s.l2_error));
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  return s;
}

/* Write the problem (dim, degree, level, cells, box, rhs) with its right-hand
 * side, read it back, compare everything, and solve both. */
static void round_trip(tpmg_context *ctx, const char *name, int dim, int degree, int level,
                       const int cells[3], const double *box, double reaction, tpmg_rhs rhs) {
  char path[256];
  path_of(path, sizeof path, name);
  tpmg_grid *grid = ref_grid_create_reaction(ctx, dim, degree, level, cells, box, reaction);
  tpmg_grid_options options;
  REF_CALL(ctx, tpmg_grid_get_options(grid, &options));
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, level, &n, NULL));
  double *b = ref_malloc(sizeof(double) * (size_t)n);
  REF_CALL(ctx, tpmg_problem_rhs(grid, rhs, TPMG_DOUBLE, b));
  REF_CALL(ctx, tpmg_setup_write(grid, rhs, b, path));

  /* the file: the header, then exactly n doubles */
  size_t size = 0;
  unsigned char *bytes = read_bytes(path, &size);
  const char *end = "\nend\n";
  unsigned char *body = NULL;
  for (size_t i = 0; i + 5 <= size && !body; ++i)
    if (memcmp(bytes + i, end, 5) == 0) body = bytes + i + 5;
  REF_CHECK(body && (size_t)(bytes + size - body) == 8 * (size_t)n,
            "%s: expected %lld bytes of vector after the header's 'end' line, got %lld", name,
            (long long)(8 * n), body ? (long long)(bytes + size - body) : -1LL);
  if (body)
    for (tpmg_index i = 0; i < n; ++i) {
      unsigned char want[8];
      little_endian_bytes(b[i], want);
      if (memcmp(body + 8 * i, want, 8) != 0) {
        REF_CHECK(0, "%s: entry %lld is not stored as 8 little-endian bytes", name, (long long)i);
        break;
      }
    }
  free(bytes);

  /* read with and without the vector */
  tpmg_grid *read = NULL, *read_no_vector = NULL;
  tpmg_rhs read_rhs = (tpmg_rhs)77, read_rhs_2 = (tpmg_rhs)77;
  double *read_b = NULL;
  REF_CALL(ctx, tpmg_setup_read(ctx, path, &read, &read_rhs, &read_b));
  REF_CALL(ctx, tpmg_setup_read(ctx, path, &read_no_vector, &read_rhs_2, NULL));
  tpmg_grid_options read_options, read_options_2;
  REF_CALL(ctx, tpmg_grid_get_options(read, &read_options));
  REF_CALL(ctx, tpmg_grid_get_options(read_no_vector, &read_options_2));
  REF_CHECK(same_options(&options, &read_options) && same_options(&options, &read_options_2),
            "%s: grid options differ after the round trip (degree %d level %d cells %d,%d,%d, "
            "box[1] %.17g -> degree %d level %d cells %d,%d,%d, box[1] %.17g)",
            name, options.degree, options.fine_level, options.cells[0], options.cells[1],
            options.cells[2], options.box[1], read_options.degree, read_options.fine_level,
            read_options.cells[0], read_options.cells[1], read_options.cells[2],
            read_options.box[1]);
  REF_CHECK(read_rhs == rhs && read_rhs_2 == rhs, "%s: rhs %d came back as %d and %d", name,
            (int)rhs, (int)read_rhs, (int)read_rhs_2);
  REF_CHECK(read_b && memcmp(read_b, b, sizeof(double) * (size_t)n) == 0,
            "%s: the vector did not come back bit for bit", name);

  /* solving the read setup is solving the original */
  if (read_b) {
    solve_record original = solve(ctx, grid, rhs, b), again = solve(ctx, read, read_rhs, read_b);
    REF_CHECK(original.iterations == again.iterations,
              "%s: %d iterations for the original, %d for the read setup", name,
              original.iterations, again.iterations);
    REF_CHECK(original.residual_norm == again.residual_norm,
              "%s: residual %.17g for the original, %.17g for the read setup", name,
              original.residual_norm, again.residual_norm);
    REF_CHECK(memcmp(original.x, again.x, sizeof(double) * (size_t)n) == 0,
              "%s: the solutions differ", name);
    REF_CHECK(rhs != TPMG_RHS_SINE || (original.l2_error == again.l2_error &&
                                      original.l2_error > 0 && original.l2_error < 1e-2),
              "%s: L2 error %g for the original, %g for the read setup", name, original.l2_error,
              again.l2_error);
    free(original.x);
    free(again.x);
  }
  free(read_b);
  REF_CALL(ctx, tpmg_grid_destroy(&read_no_vector));
  REF_CALL(ctx, tpmg_grid_destroy(&read));

  /* without a vector: *b = NULL, and the computed right-hand side is the same */
  REF_CALL(ctx, tpmg_setup_write(grid, rhs, NULL, path));
  read_b = (double *)&read_b; /* not NULL */
  REF_CALL(ctx, tpmg_setup_read(ctx, path, &read, &read_rhs, &read_b));
  REF_CHECK(read_b == NULL, "%s: a file without a vector gave *b != NULL", name);
  double *b_again = ref_malloc(sizeof(double) * (size_t)n);
  REF_CALL(ctx, tpmg_problem_rhs(read, read_rhs, TPMG_DOUBLE, b_again));
  REF_CHECK(memcmp(b, b_again, sizeof(double) * (size_t)n) == 0,
            "%s: the right-hand side of the read grid differs from the original's", name);
  free(b_again);
  REF_CALL(ctx, tpmg_grid_destroy(&read));

  remove(path);
  free(b);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

/* Special doubles survive: the file stores bits, not decimals. */
static void special_values(tpmg_context *ctx) {
  char path[256];
  path_of(path, sizeof path, "special.tpmg");
  tpmg_grid *grid = ref_grid_create(ctx, 2, 1, 1, NULL, NULL);
  const int n = 9;
  double b[9] = {-0.0, DBL_MIN / 3, -DBL_MAX, DBL_MAX, DBL_TRUE_MIN, 1.0 / 3, -1e-300, 0.1, 0.0};
  REF_CALL(ctx, tpmg_setup_write(grid, TPMG_RHS_ONE, b, path));
  tpmg_grid *read = NULL;
  tpmg_rhs rhs = TPMG_RHS_SINE;
  double *read_b = NULL;
  REF_CALL(ctx, tpmg_setup_read(ctx, path, &read, &rhs, &read_b));
  REF_CHECK(rhs == TPMG_RHS_ONE, "special values: rhs came back as %d", (int)rhs);
  REF_CHECK(read_b && memcmp(read_b, b, sizeof(double) * n) == 0,
            "special values: the vector did not come back bit for bit");
  free(read_b);
  REF_CALL(ctx, tpmg_grid_destroy(&read));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  remove(path);
}

/* ---- bad files -------------------------------------------------------------- */

/* A file of 2D, Q2, level 1 on the unit square: 25 DoFs. */
#define GOOD_N 25
static const char *const good_lines[] = {"tpmg-setup 1", "dim 2",      "degree 2",
                                         "level 1",      "cells 1 1",  "box 0 1 0 1",
                                         "rhs sine",     "vector 25",  "end"};
enum { N_GOOD_LINES = 9 };
/* Line 1 of the good file instead of good_lines[0] where not NULL. */
static const char *good_lines_version;

/* The good header with line `replace` (1-based; 0 for none) replaced by
 * `replacement` (NULL: left out), then `n_vector` doubles 1, 2, ... with entry
 * `bad_index` set to `bad_value`, then `extra` bytes. */
static size_t make_file(unsigned char *out, int replace, const char *replacement, int n_vector,
                        int bad_index, double bad_value, int extra) {
  size_t used = 0;
  for (int l = 1; l <= N_GOOD_LINES; ++l) {
    const char *line = l == replace ? replacement : good_lines[l - 1];
    if (l == 1 && l != replace && good_lines_version)
      line = good_lines_version;
    if (!line) continue;
    used += (size_t)sprintf((char *)out + used, "%s\n", line);
  }
  for (int i = 0; i < n_vector; ++i)
    little_endian_bytes(i == bad_index ? bad_value : i + 1.0, out + used + 8 * (size_t)i);
  used += 8 * (size_t)n_vector;
  for (int i = 0; i < extra; ++i) out[used++] = 'x';
  return used;
}

typedef struct {
  tpmg_context *ctx;
  size_t memory; /* backend bytes before the reads */
} bad_state;

/* Reading `path` fails with `status`; the message names the path and holds
 * `needle`; outputs are NULL (or unchanged for rhs); nothing stays allocated. */
static void expect_refused(bad_state *s, const char *what, const char *path, tpmg_status status,
                           const char *needle) {
  for (int with_b = 0; with_b < 2; ++with_b) {
    tpmg_grid *grid = (tpmg_grid *)&grid; /* not NULL */
    double *b = (double *)&b;
    tpmg_rhs rhs = (tpmg_rhs)77;
    tpmg_status got = tpmg_setup_read(s->ctx, path, &grid, &rhs, with_b ? &b : NULL);
    const char *message = tpmg_context_last_error(s->ctx);
    REF_CHECK(got == status, "%s: expected status %d, got %d (message: %s)", what, (int)status,
              (int)got, message);
    REF_CHECK(grid == NULL, "%s: *grid is not NULL after a failed read", what);
    REF_CHECK(!with_b || b == NULL, "%s: *b is not NULL after a failed read", what);
    REF_CHECK(rhs == (tpmg_rhs)77, "%s: *rhs changed to %d by a failed read", what, (int)rhs);
    REF_CHECK(path == NULL || contains(message, path),
              "%s: expected the message to name the file %s, got: %s", what, path, message);
    REF_CHECK(contains(message, needle), "%s: expected the message to mention \"%s\", got: %s",
              what, needle, message);
    size_t memory = 0;
    REF_CALL(s->ctx, tpmg_context_memory(s->ctx, &memory));
    REF_CHECK(memory == s->memory, "%s: %zu bytes of backend memory before, %zu after", what,
              s->memory, memory);
    if (grid && grid != (tpmg_grid *)&grid) tpmg_grid_destroy(&grid);
  }
}

/* One bad file from make_file's arguments. */
static void bad_file(bad_state *s, const char *what, int replace, const char *replacement,
                     int n_vector, int bad_index, double bad_value, int extra,
                     tpmg_status status, const char *needle) {
  char path[256];
  path_of(path, sizeof path, "bad.tpmg");
  unsigned char data[4096];
  size_t n = make_file(data, replace, replacement, n_vector, bad_index, bad_value, extra);
  write_bytes(path, data, n);
  expect_refused(s, what, path, status, needle);
  remove(path);
}

/* One bad file with the given bytes. */
static void bad_bytes(bad_state *s, const char *what, const char *bytes, size_t n,
                      tpmg_status status, const char *needle) {
  char path[256];
  path_of(path, sizeof path, "bad.tpmg");
  write_bytes(path, bytes, n);
  expect_refused(s, what, path, status, needle);
  remove(path);
}

static void bad_files(tpmg_context *ctx) {
  bad_state s = {ctx, 0};
  REF_CALL(ctx, tpmg_context_memory(ctx, &s.memory));
  const tpmg_status ARG = TPMG_ERROR_ARGUMENT;
  char path[256];

  /* the good file is accepted: the cases below differ from it in one thing */
  path_of(path, sizeof path, "good.tpmg");
  unsigned char data[4096];
  write_bytes(path, data, make_file(data, 0, NULL, GOOD_N, -1, 0.0, 0));
  tpmg_grid *grid = NULL;
  tpmg_rhs rhs = TPMG_RHS_ONE;
  double *b = NULL;
  REF_CALL(ctx, tpmg_setup_read(ctx, path, &grid, &rhs, &b));
  REF_CHECK(rhs == TPMG_RHS_SINE && b && b[0] == 1.0 && b[GOOD_N - 1] == GOOD_N,
            "the good file: rhs %d, b[0] %g, b[24] %g", (int)rhs, b ? b[0] : NAN,
            b ? b[GOOD_N - 1] : NAN);
  free(b);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  /* version 2, without and with a reaction */
  good_lines_version = "tpmg-setup 2";
  for (int with = 0; with < 2; ++with) {
    write_bytes(path, data,
                make_file(data, with ? 7 : 0, "rhs sine\nreaction 0.5", GOOD_N, -1, 0.0, 0));
    REF_CALL(ctx, tpmg_setup_read(ctx, path, &grid, &rhs, NULL));
    tpmg_grid_options options;
    REF_CALL(ctx, tpmg_grid_get_options(grid, &options));
    REF_CHECK(options.reaction == (with ? 0.5 : 0.0),
              "a version 2 file %s a reaction line: reaction %g", with ? "with" : "without",
              options.reaction);
    REF_CALL(ctx, tpmg_grid_destroy(&grid));
  }
  good_lines_version = NULL;
  remove(path);

  /* the file itself */
  path_of(path, sizeof path, "no-such-file.tpmg");
  expect_refused(&s, "missing file", path, ARG, strerror(ENOENT));
  expect_refused(&s, "a directory", directory, ARG, "not a regular file");
  /* a pipe without a writer: refused at once, not waited on */
  path_of(path, sizeof path, "fifo.tpmg");
  if (mkfifo(path, 0600) == 0) {
    expect_refused(&s, "a pipe", path, ARG, "not a regular file");
    remove(path);
  }
  bad_bytes(&s, "empty file", "", 0, ARG, "empty");
  bad_bytes(&s, "binary file", "\x89PNG\r\n\x1a\n", 8, ARG, "not a tpmg setup file");
  bad_file(&s, "wrong magic", 1, "tpmg-setp 1", GOOD_N, -1, 0, 0, ARG, "not a tpmg setup file");
  bad_file(&s, "no version", 1, "tpmg-setup", GOOD_N, -1, 0, 0, ARG, "<version>");
  bad_file(&s, "text version", 1, "tpmg-setup one", GOOD_N, -1, 0, 0, ARG, "<version>");
  bad_file(&s, "version 3", 1, "tpmg-setup 3", GOOD_N, -1, 0, 0, TPMG_ERROR_UNSUPPORTED,
           "version 3");
  bad_file(&s, "version 0", 1, "tpmg-setup 0", GOOD_N, -1, 0, 0, TPMG_ERROR_UNSUPPORTED,
           "version 0");

  /* keys */
  static const char *const missing[] = {"'dim'", "'degree'", "'level'", "'cells'",
                                        "'box'", "'rhs'",    "'vector'"};
  for (int key = 0; key < 7; ++key) {
    char what[64];
    snprintf(what, sizeof what, "missing key %s", missing[key]);
    bad_file(&s, what, 2 + key, NULL, GOOD_N, -1, 0, 0, ARG, missing[key]);
  }
  bad_file(&s, "duplicate key", 4, "dim 2", GOOD_N, -1, 0, 0, ARG, "duplicate key 'dim'");
  bad_file(&s, "unknown key", 4, "colour blue", GOOD_N, -1, 0, 0, ARG, "unknown key 'colour'");
  bad_file(&s, "blank line", 4, "", GOOD_N, -1, 0, 0, ARG, "line 4 is blank");
  bad_file(&s, "no end line", 9, NULL, 0, -1, 0, 0, ARG, "truncated");
  bad_file(&s, "value after end", 9, "end 25", GOOD_N, -1, 0, 0, ARG, "'end' takes no value");
  bad_bytes(&s, "last line without newline", "tpmg-setup 1\ndim 2", 18, ARG, "line 2 ends");
  bad_file(&s, "carriage return", 2, "dim 2\r", GOOD_N, -1, 0, 0, ARG, "0x0d");
  char long_line[400];
  memset(long_line, '9', sizeof long_line - 1);
  long_line[sizeof long_line - 1] = '\0';
  memcpy(long_line, "degree ", 7);
  bad_file(&s, "long line", 3, long_line, GOOD_N, -1, 0, 0, ARG, "longer than");

  /* malformed values */
  bad_file(&s, "dim 4", 2, "dim 4", GOOD_N, -1, 0, 0, ARG, "dim 4");
  bad_file(&s, "dim text", 2, "dim two", GOOD_N, -1, 0, 0, ARG, "dim 'two'");
  bad_file(&s, "degree 2.5", 3, "degree 2.5", GOOD_N, -1, 0, 0, ARG, "degree '2.5'");
  bad_file(&s, "huge degree", 3, "degree 99999999999", GOOD_N, -1, 0, 0, ARG, "99999999999");
  bad_file(&s, "two degrees", 3, "degree 2 3", GOOD_N, -1, 0, 0, ARG, "got 2 values");
  bad_file(&s, "one cell count", 5, "cells 1", GOOD_N, -1, 0, 0, ARG, "2 cell counts");
  bad_file(&s, "three cell counts", 5, "cells 1 1 1", GOOD_N, -1, 0, 0, ARG, "2 cell counts");
  bad_file(&s, "cells text", 5, "cells 1 x", GOOD_N, -1, 0, 0, ARG, "'x' is not an integer");
  bad_file(&s, "box count", 6, "box 0 1 0", GOOD_N, -1, 0, 0, ARG, "4 numbers");
  bad_file(&s, "many values", 6, "box 0 1 0 1 0 1 0 1 0 1", GOOD_N, -1, 0, 0, ARG,
           "got more than");
  bad_file(&s, "box text", 6, "box 0 1 0 one", GOOD_N, -1, 0, 0, ARG, "'one' is not a number");
  bad_file(&s, "rhs cosine", 7, "rhs cosine", GOOD_N, -1, 0, 0, ARG, "rhs 'cosine'");
  bad_file(&s, "rhs number", 7, "rhs 1", GOOD_N, -1, 0, 0, ARG, "rhs '1'");
  bad_file(&s, "vector -3", 8, "vector -3", GOOD_N, -1, 0, 0, ARG, "vector '-3'");
  bad_file(&s, "vector text", 8, "vector all", GOOD_N, -1, 0, 0, ARG, "vector 'all'");
  /* the reaction: version 2 only, a number, the grid's range */
  bad_file(&s, "reaction in version 1", 7, "rhs sine\nreaction 5", GOOD_N, -1, 0, 0, ARG,
           "needs format version 2");
  good_lines_version = "tpmg-setup 2";
  bad_file(&s, "reaction text", 7, "rhs sine\nreaction five", GOOD_N, -1, 0, 0, ARG,
           "reaction: 'five' is not a number");
  bad_file(&s, "two reactions", 7, "rhs sine\nreaction 5 6", GOOD_N, -1, 0, 0, ARG,
           "got 2 values");
  bad_file(&s, "reaction -1", 7, "rhs sine\nreaction -1", GOOD_N, -1, 0, 0, ARG, "reaction -1");
  bad_file(&s, "reaction nan", 7, "rhs sine\nreaction nan", GOOD_N, -1, 0, 0, ARG,
           "reaction nan");
  good_lines_version = NULL;

  /* out of range: the grid's own checks, after the file's name */
  bad_file(&s, "degree 11", 3, "degree 11", GOOD_N, -1, 0, 0, ARG, "degree 11");
  bad_file(&s, "degree 0", 3, "degree 0", GOOD_N, -1, 0, 0, ARG, "degree 0");
  bad_file(&s, "level 0", 4, "level 0", GOOD_N, -1, 0, 0, ARG, "fine_level 0");
  bad_file(&s, "level 40", 4, "level 40", GOOD_N, -1, 0, 0, ARG, "fine_level 40");
  bad_file(&s, "cells 0", 5, "cells 0 1", GOOD_N, -1, 0, 0, ARG, "cells[0] = 0");
  bad_file(&s, "cells -3", 5, "cells 100 -3", GOOD_N, -1, 0, 0, ARG, "cells[1] = -3");
  bad_file(&s, "box reversed", 6, "box 1 0 0 1", GOOD_N, -1, 0, 0, ARG, "box[0] = [1, 0]");
  bad_file(&s, "box nan", 6, "box 0 1 nan 1", GOOD_N, -1, 0, 0, ARG, "box[1]");
  bad_file(&s, "box inf", 6, "box 0 inf 0 1", GOOD_N, -1, 0, 0, ARG, "box[0]");
  bad_file(&s, "too many DoFs", 4, "level 29", GOOD_N, -1, 0, 0, TPMG_ERROR_MEMORY, "overflow");

  /* the vector */
  bad_file(&s, "vector too short", 8, "vector 24", 24, -1, 0, 0, ARG, "has 25 DoFs");
  bad_file(&s, "vector too long", 8, "vector 26", 26, -1, 0, 0, ARG, "vector 26");
  bad_file(&s, "truncated vector", 0, NULL, GOOD_N - 1, -1, 0, 4, ARG, "truncated");
  bad_file(&s, "no vector data", 0, NULL, 0, -1, 0, 0, ARG, "only 0 bytes");
  bad_file(&s, "extra byte", 0, NULL, GOOD_N, -1, 0, 1, ARG, "extra data");
  bad_file(&s, "extra double", 0, NULL, GOOD_N + 1, -1, 0, 0, ARG, "extra data");
  bad_file(&s, "data after vector none", 8, "vector none", 1, -1, 0, 0, ARG, "vector none");
  bad_file(&s, "nan entry", 0, NULL, GOOD_N, 7, NAN, 0, ARG, "entry 7");
  bad_file(&s, "inf entry", 0, NULL, GOOD_N, 0, INFINITY, 0, ARG, "entry 0");
  bad_file(&s, "-inf entry", 0, NULL, GOOD_N, GOOD_N - 1, -INFINITY, 0, ARG, "entry 24");

  /* bad arguments */
  grid = (tpmg_grid *)&grid;
  b = (double *)&b;
  rhs = (tpmg_rhs)77;
  path_of(path, sizeof path, "good.tpmg");
  REF_CHECK(tpmg_setup_read(NULL, path, &grid, &rhs, &b) == ARG, "read: NULL context accepted");
  expect_refused(&s, "NULL path", NULL, ARG, "NULL");
  expect_refused(&s, "empty path", "", ARG, "empty");
  REF_CHECK(tpmg_setup_read(ctx, path, NULL, &rhs, &b) == ARG &&
                contains(tpmg_context_last_error(ctx), "NULL"),
            "read: NULL grid accepted, or no message: %s", tpmg_context_last_error(ctx));
  REF_CHECK(tpmg_setup_read(ctx, path, &grid, NULL, &b) == ARG &&
                contains(tpmg_context_last_error(ctx), "NULL"),
            "read: NULL rhs accepted, or no message: %s", tpmg_context_last_error(ctx));
}

static void write_errors(tpmg_context *ctx) {
  const tpmg_status ARG = TPMG_ERROR_ARGUMENT;
  char path[256];
  path_of(path, sizeof path, "write.tpmg");
  tpmg_grid *grid = ref_grid_create(ctx, 2, 2, 1, NULL, NULL);
  double b[GOOD_N];
  for (int i = 0; i < GOOD_N; ++i) b[i] = i;

  REF_CHECK(tpmg_setup_write(NULL, TPMG_RHS_ONE, b, path) == ARG, "write: NULL grid accepted");
  REF_CHECK(tpmg_setup_write(grid, TPMG_RHS_ONE, b, NULL) == ARG &&
                contains(tpmg_context_last_error(ctx), "NULL"),
            "write: NULL path accepted, or no message: %s", tpmg_context_last_error(ctx));
  REF_CHECK(tpmg_setup_write(grid, TPMG_RHS_ONE, b, "") == ARG &&
                contains(tpmg_context_last_error(ctx), "empty"),
            "write: empty path accepted, or no message: %s", tpmg_context_last_error(ctx));
  REF_CHECK(tpmg_setup_write(grid, (tpmg_rhs)7, b, path) == ARG &&
                contains(tpmg_context_last_error(ctx), "right-hand side 7"),
            "write: rhs 7 accepted, or no message: %s", tpmg_context_last_error(ctx));
  REF_CHECK(tpmg_setup_write(grid, (tpmg_rhs)-1, b, path) == ARG &&
                contains(tpmg_context_last_error(ctx), "right-hand side -1"),
            "write: rhs -1 accepted, or no message: %s", tpmg_context_last_error(ctx));
  b[3] = NAN;
  REF_CHECK(tpmg_setup_write(grid, TPMG_RHS_ONE, b, path) == ARG &&
                contains(tpmg_context_last_error(ctx), "b[3] = nan"),
            "write: a NaN entry accepted, or no message: %s", tpmg_context_last_error(ctx));
  b[3] = 3;
  FILE *f = fopen(path, "rb");
  REF_CHECK(f == NULL, "write: a refused call left the file %s", path);
  if (f) fclose(f);

  char unwritable[300];
  snprintf(unwritable, sizeof unwritable, "%s/no-such-directory/write.tpmg", directory);
  REF_CHECK(tpmg_setup_write(grid, TPMG_RHS_ONE, b, unwritable) == ARG &&
                contains(tpmg_context_last_error(ctx), unwritable) &&
                contains(tpmg_context_last_error(ctx), strerror(ENOENT)),
            "write: an unwritable path accepted, or its message lacks the path and reason: %s",
            tpmg_context_last_error(ctx));
  /* a target that exists and is no regular file: refused, left alone */
  char fifo[300];
  path_of(fifo, sizeof fifo, "fifo.tpmg");
  if (mkfifo(fifo, 0600) == 0) {
    REF_CHECK(tpmg_setup_write(grid, TPMG_RHS_ONE, b, fifo) == ARG &&
                  contains(tpmg_context_last_error(ctx), "not a regular file") &&
                  contains(tpmg_context_last_error(ctx), fifo),
              "write: a pipe accepted, or no message: %s", tpmg_context_last_error(ctx));
    struct stat info;
    REF_CHECK(stat(fifo, &info) == 0 && S_ISFIFO(info.st_mode), "write: the pipe %s was replaced",
              fifo);
    remove(fifo);
  }
  REF_CHECK(tpmg_setup_write(grid, TPMG_RHS_ONE, b, directory) == ARG &&
                contains(tpmg_context_last_error(ctx), "not a regular file"),
            "write: a directory accepted, or no message: %s", tpmg_context_last_error(ctx));

  /* an existing file is replaced whole: written again over itself it comes
   * back the same, through a symbolic link too (the link stays) */
  REF_CALL(ctx, tpmg_setup_write(grid, TPMG_RHS_ONE, b, path));
  size_t n_first = 0, n_again = 0;
  unsigned char *first = read_bytes(path, &n_first);
  char link[300];
  path_of(link, sizeof link, "link.tpmg");
  if (symlink("write.tpmg", link) == 0) {
    REF_CALL(ctx, tpmg_setup_write(grid, TPMG_RHS_ONE, b, link));
    struct stat info;
    REF_CHECK(lstat(link, &info) == 0 && S_ISLNK(info.st_mode),
              "write: the symbolic link %s was replaced by a file", link);
    remove(link);
  }
  unsigned char *again = read_bytes(path, &n_again);
  REF_CHECK(n_first == n_again && memcmp(first, again, n_first) == 0,
            "write: a file written over itself changed (%zu bytes, then %zu)", n_first, n_again);
  free(again);
  remove(path);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));

  /* a write that fails part way (a file size limit of 1000 bytes, 5000 bytes of
   * vector): the status, the system's reason, and no partial file left; over
   * an existing file, that file as it was and no temporary file beside it */
  grid = ref_grid_create(ctx, 2, 3, 3, NULL, NULL);
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, 3, &n, NULL));
  double *big = ref_malloc(sizeof(double) * (size_t)n);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, big));
  struct rlimit old_limit, limit;
  if (getrlimit(RLIMIT_FSIZE, &old_limit) == 0) {
    limit = old_limit;
    limit.rlim_cur = 1000;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &limit) == 0) {
      tpmg_status status = tpmg_setup_write(grid, TPMG_RHS_SINE, big, path);
      setrlimit(RLIMIT_FSIZE, &old_limit);
      REF_CHECK(status == ARG && contains(tpmg_context_last_error(ctx), strerror(EFBIG)) &&
                    contains(tpmg_context_last_error(ctx), path),
                "write: a write beyond the file size limit gave status %d, message: %s",
                (int)status, tpmg_context_last_error(ctx));
      f = fopen(path, "rb");
      REF_CHECK(f == NULL, "write: the partial file %s was left behind", path);
      if (f) fclose(f);
      write_bytes(path, first, n_first);
      setrlimit(RLIMIT_FSIZE, &limit);
      status = tpmg_setup_write(grid, TPMG_RHS_SINE, big, path);
      setrlimit(RLIMIT_FSIZE, &old_limit);
      REF_CHECK(status == ARG && contains(tpmg_context_last_error(ctx), "left as it was"),
                "write: a failed write over a file gave status %d, message: %s", (int)status,
                tpmg_context_last_error(ctx));
      size_t n_after = 0;
      unsigned char *after = read_bytes(path, &n_after);
      REF_CHECK(n_after == n_first && memcmp(after, first, n_first) == 0,
                "write: a failed write changed the file it was to replace (%zu bytes, then %zu)",
                n_first, n_after);
      free(after);
      remove(path);
      DIR *listing = opendir(directory);
      for (struct dirent *e; listing && (e = readdir(listing));)
        REF_CHECK(!strstr(e->d_name, ".tmp-"), "write: the temporary file %s/%s was left behind",
                  directory, e->d_name);
      if (listing) closedir(listing);
    }
    signal(SIGXFSZ, old_handler);
  }
  free(first);
  free(big);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(void) {
  snprintf(directory, sizeof directory, "t710-setup-file.%ld.tmp", (long)getpid());
  if (mkdir(directory, 0700) != 0) {
    fprintf(stderr, "t710-setup-file: cannot create %s: %s\n", directory, strerror(errno));
    return 1;
  }
  tpmg_context *ctx = ref_context_create("cpu", 0);

  round_trip(ctx, "2d.tpmg", 2, 3, 3, NULL, NULL, 0.0, TPMG_RHS_SINE);
  round_trip(ctx, "3d.tpmg", 3, 2, 2, NULL, NULL, 0.0, TPMG_RHS_ONE);
  round_trip(ctx, "2d-ones.tpmg", 2, 4, 2, NULL, NULL, 0.0, TPMG_RHS_ONES);
  const int cells_2d[3] = {3, 2, 1};
  const double box_2d[4] = {-1.0, 2.0, 0.1, 1.0 / 3};
  round_trip(ctx, "2d-box.tpmg", 2, 2, 3, cells_2d, box_2d, 0.0, TPMG_RHS_SINE);
  const int cells_3d[3] = {2, 1, 3};
  const double box_3d[6] = {0.0, 2.0, -0.25, 0.5, 1e-3, 0.7};
  round_trip(ctx, "3d-box.tpmg", 3, 2, 2, cells_3d, box_3d, 0.0, TPMG_RHS_SINE);
  /* a reaction (format version 2), exactly */
  round_trip(ctx, "2d-reaction.tpmg", 2, 2, 3, cells_2d, box_2d, 1.0 / 3e-3, TPMG_RHS_SINE);
  round_trip(ctx, "3d-reaction.tpmg", 3, 2, 2, cells_3d, box_3d, 1e-300, TPMG_RHS_ONE);
  special_values(ctx);

  /* the header is the documented text */
  char path[256];
  path_of(path, sizeof path, "header.tpmg");
  tpmg_grid *grid = ref_grid_create(ctx, 2, 2, 3, cells_2d, box_2d);
  REF_CALL(ctx, tpmg_setup_write(grid, TPMG_RHS_SINE, NULL, path));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  size_t size = 0;
  unsigned char *text = read_bytes(path, &size);
  const char *want = "tpmg-setup 1\ndim 2\ndegree 2\nlevel 3\ncells 3 2\n"
                     "box -1 2 0.10000000000000001 0.33333333333333331\nrhs sine\nvector none\n"
                     "end\n";
  REF_CHECK(size == strlen(want) && memcmp(text, want, size) == 0,
            "header: expected\n%s--- got\n%.*s---", want, (int)size, (const char *)text);
  free(text);
  remove(path);
  /* with a reaction: version 2 and its line */
  grid = ref_grid_create_reaction(ctx, 2, 2, 3, cells_2d, box_2d, 57.3);
  REF_CALL(ctx, tpmg_setup_write(grid, TPMG_RHS_SINE, NULL, path));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  text = read_bytes(path, &size);
  want = "tpmg-setup 2\ndim 2\ndegree 2\nlevel 3\ncells 3 2\n"
         "box -1 2 0.10000000000000001 0.33333333333333331\nrhs sine\n"
         "reaction 57.299999999999997\nvector none\nend\n";
  REF_CHECK(size == strlen(want) && memcmp(text, want, size) == 0,
            "header with a reaction: expected\n%s--- got\n%.*s---", want, (int)size,
            (const char *)text);
  free(text);
  remove(path);

  bad_files(ctx);
  write_errors(ctx);

  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  if (rmdir(directory) != 0) {
    fprintf(stderr, "t710-setup-file: cannot remove %s: %s\n", directory, strerror(errno));
    ref_failures++;
  }
  return ref_exit_code("t710-setup-file");
}
