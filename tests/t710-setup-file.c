/* t710-setup-file: setup files (tpmg_setup_write, tpmg_setup_read).
 * - Round trip in 2D, 3D and on anisotropic boxes with several coarse cells,
 *   without and with a reaction (format version 2; without one a file stays
 *   version 1), for every tpmg_rhs: the grid options, the problem and the
 *   vector come back exactly (the vector
 *   bit for bit, including -0, subnormals and +-DBL_MAX); the header is the
 *   documented text; a file without a vector gives *b = NULL.
 * - A solve from the read setup has the same iterations, residual, solution
 *   and L2 error as the solve of the original problem.
 * - A variable coefficient (format version 3) in both layouts, 2D and 3D:
 *   the file holds the vector, then the values given to
 *   tpmg_grid_set_coefficient as little-endian doubles; the read grid has
 *   the coefficient (written again, the same bytes) and solves the same; rhs
 *   sine without the vector is refused on writing; a hand-made file with a
 *   coefficient is read and written back byte for byte, and bad coefficient
 *   lines and values (a version 2 file, a bad layout or count, a truncated
 *   block, extra data, non-finite and out-of-range values, rhs sine without
 *   a vector) are refused naming the file.
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

/* A solve of A x = b from x = 0 (with a coefficient by the global smoother,
 * the one variant that takes it). */
static solve_record solve(tpmg_context *ctx, tpmg_grid *grid, tpmg_rhs rhs, const double *b) {
  tpmg_grid_options o;
  REF_CALL(ctx, tpmg_grid_get_options(grid, &o));
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, o.fine_level, &n, NULL));
  int coefficient = 0;
  REF_CALL(ctx, tpmg_grid_get_coefficient(grid, &coefficient, NULL));
  solve_record s = {0, 0.0, NAN, ref_malloc(sizeof(double) * (size_t)n)};
  tpmg_solver *solver = NULL;
  tpmg_solver_options options = tpmg_solver_options_default();
  options.tolerance = 1e-10;
  if (coefficient)
    options.smoother = TPMG_SMOOTHER_GLOBAL;
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

/* ---- a variable coefficient (format version 3) ------------------------------ */

static int exists(const char *path) {
  struct stat info;
  return stat(path, &info) == 0;
}

/* The bytes after the header's "\nend\n" line, or NULL. */
static unsigned char *after_header(unsigned char *bytes, size_t size) {
  for (size_t i = 0; i + 5 <= size; ++i)
    if (memcmp(bytes + i, "\nend\n", 5) == 0)
      return bytes + i + 5;
  return NULL;
}

/* Whether the n doubles at p are x's, little-endian; else a check names where. */
static int stored_as(const char *what, const unsigned char *p, tpmg_index n, const double *x) {
  for (tpmg_index i = 0; i < n; ++i) {
    unsigned char want[8];
    little_endian_bytes(x[i], want);
    if (memcmp(p + 8 * i, want, 8) != 0) {
      REF_CHECK(0, "%s: value %lld is not stored as its 8 little-endian bytes", what, (long long)i);
      return 0;
    }
  }
  return 1;
}

/* Whether two files have the same bytes; else a check names where they part. */
static void same_files(const char *what, const char *a_path, const char *b_path) {
  size_t n_a = 0, n_b = 0;
  unsigned char *a = read_bytes(a_path, &n_a), *b = read_bytes(b_path, &n_b);
  size_t i = 0;
  while (i < n_a && i < n_b && a[i] == b[i])
    ++i;
  REF_CHECK(n_a == n_b && i == n_a, "%s: %s (%zu bytes) and %s (%zu bytes) differ from byte %zu",
            what, a_path, n_a, b_path, n_b, i);
  free(a);
  free(b);
}

/* The values of a coefficient of `layout` on the whole fine level (*n of
 * them), smooth and positive, with digits that no decimal holds exactly. */
static double *coefficient_values(tpmg_context *ctx, tpmg_grid *grid,
                                  tpmg_coefficient_layout layout, tpmg_index *n) {
  tpmg_grid_options o;
  REF_CALL(ctx, tpmg_grid_get_options(grid, &o));
  *n = 1;
  for (int d = 0; d < o.dim; ++d)
    *n *= ((tpmg_index)o.cells[d] << o.fine_level) *
          (layout == TPMG_COEFFICIENT_QUADRATURE ? o.degree + 1 : 1);
  double *values = ref_malloc(sizeof(double) * (size_t)*n);
  for (tpmg_index i = 0; i < *n; ++i)
    values[i] = 1.0 + 0.75 * sin(0.1 * (double)i + 1.0 / 3);
  return values;
}

/* f = 1 and g = prod sin(pi x_d): a right-hand side on a grid with a coefficient. */
static double one(const double *x, void *data) {
  (void)x;
  (void)data;
  return 1.0;
}
static double sine(const double *x, void *data) {
  (void)data;
  const double pi = 3.14159265358979323846;
  return sin(pi * x[0]) * sin(pi * x[1]) * (x[2] != 0.0 ? sin(pi * x[2]) : 1.0);
}

/* Write a problem with a coefficient, check the file's bytes, read it back,
 * write the read grid again (the same bytes) and solve both. */
static void coefficient_round_trip(tpmg_context *ctx, const char *name, int dim, int degree,
                                   int level, const int cells[3], const double *box,
                                   tpmg_coefficient_layout layout, tpmg_rhs rhs) {
  const tpmg_status ARG = TPMG_ERROR_ARGUMENT;
  char path[256], again[272];
  path_of(path, sizeof path, name);
  snprintf(again, sizeof again, "%s.again", path);
  tpmg_grid *grid = ref_grid_create(ctx, dim, degree, level, cells, box);
  tpmg_index n_values = 0, n = 0;
  double *values = coefficient_values(ctx, grid, layout, &n_values);
  REF_CALL(ctx, tpmg_grid_set_coefficient(grid, layout, values));
  REF_CALL(ctx, tpmg_grid_level_size(grid, level, &n, NULL));
  double *b = ref_malloc(sizeof(double) * (size_t)n);
  if (rhs == TPMG_RHS_SINE) {
    REF_CALL(ctx, tpmg_problem_rhs_function(grid, one, sine, NULL, TPMG_DOUBLE, b));
    /* no vector: a reader could not make this right-hand side */
    tpmg_status status = tpmg_setup_write(grid, rhs, NULL, path);
    const char *message = tpmg_context_last_error(ctx);
    REF_CHECK(status == ARG && contains(message, path) &&
                  contains(message, "needs the right-hand side vector"),
              "%s: rhs sine with a coefficient and no vector: status %d, message: %s", name,
              (int)status, message);
    REF_CHECK(!exists(path), "%s: a refused write left the file %s", name, path);
  } else {
    REF_CALL(ctx, tpmg_problem_rhs(grid, rhs, TPMG_DOUBLE, b));
  }
  REF_CALL(ctx, tpmg_setup_write(grid, rhs, b, path));

  /* version 3, the coefficient line, then the vector and the values */
  size_t size = 0;
  unsigned char *bytes = read_bytes(path, &size);
  char line[64];
  snprintf(line, sizeof line, "\ncoefficient %s %lld\nend\n",
           layout == TPMG_COEFFICIENT_QUADRATURE ? "quadrature" : "cells", (long long)n_values);
  unsigned char *body = after_header(bytes, size);
  REF_CHECK(size > 13 && memcmp(bytes, "tpmg-setup 3\n", 13) == 0 && body &&
                memcmp(body - strlen(line), line, strlen(line)) == 0,
            "%s: expected a version 3 header ending '%s', got:\n%.*s", name, line + 1,
            body ? (int)(body - bytes) : 200, (const char *)bytes);
  REF_CHECK(body && (size_t)(bytes + size - body) == 8 * (size_t)(n + n_values),
            "%s: expected %lld bytes of vector and coefficient after the header, got %lld", name,
            (long long)(8 * (n + n_values)), body ? (long long)(bytes + size - body) : -1LL);
  if (body && (size_t)(bytes + size - body) == 8 * (size_t)(n + n_values)) {
    stored_as(name, body, n, b);
    stored_as(name, body + 8 * n, n_values, values);
  }
  free(bytes);

  /* read: the grid has the coefficient; written again, the same file */
  tpmg_grid *read = NULL;
  tpmg_rhs read_rhs = (tpmg_rhs)77;
  double *read_b = NULL;
  REF_CALL(ctx, tpmg_setup_read(ctx, path, &read, &read_rhs, &read_b));
  int has = 0;
  tpmg_coefficient_layout read_layout = (tpmg_coefficient_layout)77;
  REF_CALL(ctx, tpmg_grid_get_coefficient(read, &has, &read_layout));
  REF_CHECK(has && read_layout == layout && read_rhs == rhs,
            "%s: read back with coefficient %d, layout %d, rhs %d (expected 1, %d, %d)", name, has,
            (int)read_layout, (int)read_rhs, (int)layout, (int)rhs);
  REF_CHECK(read_b && memcmp(read_b, b, sizeof(double) * (size_t)n) == 0,
            "%s: the vector did not come back bit for bit", name);
  REF_CALL(ctx, tpmg_setup_write(read, read_rhs, read_b, again));
  same_files(name, path, again);
  remove(again);

  /* the same solve */
  solve_record original = solve(ctx, grid, rhs, b), copy = solve(ctx, read, read_rhs, read_b);
  REF_CHECK(original.iterations == copy.iterations &&
                memcmp(&original.residual_norm, &copy.residual_norm, sizeof(double)) == 0,
            "%s: %d iterations to residual %.17g for the original, %d to %.17g for the read "
            "setup",
            name, original.iterations, original.residual_norm, copy.iterations, copy.residual_norm);
  REF_CHECK(memcmp(original.x, copy.x, sizeof(double) * (size_t)n) == 0, "%s: the solutions differ",
            name);
  REF_CHECK(memcmp(&original.l2_error, &copy.l2_error, sizeof(double)) == 0,
            "%s: L2 error %g for the original, %g for the read setup", name, original.l2_error,
            copy.l2_error);
  free(original.x);
  free(copy.x);
  free(read_b);
  REF_CALL(ctx, tpmg_grid_destroy(&read));

  /* without a vector (not for sine): the coefficient alone, and the computed
   * right-hand side of the read grid is the original's */
  if (rhs != TPMG_RHS_SINE) {
    REF_CALL(ctx, tpmg_setup_write(grid, rhs, NULL, path));
    bytes = read_bytes(path, &size);
    body = after_header(bytes, size);
    REF_CHECK(body && (size_t)(bytes + size - body) == 8 * (size_t)n_values &&
                  stored_as(name, body, n_values, values),
              "%s: without the vector, expected the %lld values alone after the header", name,
              (long long)n_values);
    free(bytes);
    read_b = (double *)&read_b; /* not NULL */
    REF_CALL(ctx, tpmg_setup_read(ctx, path, &read, &read_rhs, &read_b));
    REF_CALL(ctx, tpmg_grid_get_coefficient(read, &has, NULL));
    REF_CHECK(!read_b && has, "%s: without the vector: *b %p, coefficient %d", name, (void *)read_b,
              has);
    double *b_again = ref_malloc(sizeof(double) * (size_t)n);
    REF_CALL(ctx, tpmg_problem_rhs(read, read_rhs, TPMG_DOUBLE, b_again));
    REF_CHECK(memcmp(b, b_again, sizeof(double) * (size_t)n) == 0,
              "%s: the right-hand side of the read grid differs from the original's", name);
    free(b_again);
    REF_CALL(ctx, tpmg_grid_destroy(&read));
  }
  remove(path);
  free(values);
  free(b);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

/* The bounds of the values come back bit for bit; the header is the
 * documented text. */
static void coefficient_header(tpmg_context *ctx) {
  char path[256], again[272];
  path_of(path, sizeof path, "coefficient-header.tpmg");
  snprintf(again, sizeof again, "%s.again", path);
  tpmg_grid *grid = ref_grid_create_reaction(ctx, 2, 1, 1, NULL, NULL, 2.5);
  const double values[4] = {TPMG_MIN_COEFFICIENT, TPMG_MAX_COEFFICIENT, 1.0 / 3,
                            nextafter(1.0, 2.0)};
  REF_CALL(ctx, tpmg_grid_set_coefficient(grid, TPMG_COEFFICIENT_CELLS, values));
  REF_CALL(ctx, tpmg_setup_write(grid, TPMG_RHS_ONE, NULL, path));
  size_t size = 0;
  unsigned char *bytes = read_bytes(path, &size);
  const char *want = "tpmg-setup 3\ndim 2\ndegree 1\nlevel 1\ncells 1 1\nbox 0 1 0 1\nrhs one\n"
                     "reaction 2.5\nvector none\ncoefficient cells 4\nend\n";
  const size_t header = strlen(want);
  REF_CHECK(size == header + 32 && memcmp(bytes, want, header) == 0 &&
                stored_as("coefficient header", bytes + header, 4, values),
            "coefficient header: expected\n%s--- and 32 bytes, got %zu bytes:\n%.*s---", want, size,
            (int)(size < header ? size : header), (const char *)bytes);
  free(bytes);
  tpmg_grid *read = NULL;
  tpmg_rhs rhs;
  REF_CALL(ctx, tpmg_setup_read(ctx, path, &read, &rhs, NULL));
  REF_CALL(ctx, tpmg_setup_write(read, rhs, NULL, again));
  same_files("coefficient header", path, again);
  REF_CALL(ctx, tpmg_grid_destroy(&read));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  remove(again);
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

/* The good file of version 3 (2D, Q2, level 1: 4 cells) with a coefficient:
 * its header with line `replace` (1-based; 0 for none) replaced by
 * `replacement` (NULL: left out), the vector's 25 doubles 1, 2, ... unless
 * 'vector none' (with_vector 0), then `n_values` values 1 + i/64 with value
 * `bad_index` set to `bad_value`, then `extra` bytes. */
static size_t make_coefficient_file(unsigned char *out, const char *layout_line, int replace,
                                    const char *replacement, int with_vector, int n_values,
                                    int bad_index, double bad_value, int extra) {
  const char *lines[] = {"tpmg-setup 3", "dim 2",    "degree 2",  "level 1",   "cells 1 1",
                         "box 0 1 0 1",  "rhs sine", "vector 25", layout_line, "end"};
  size_t used = 0;
  for (int l = 1; l <= 10; ++l) {
    const char *line = l == replace ? replacement : lines[l - 1];
    if (line)
      used += (size_t)sprintf((char *)out + used, "%s\n", line);
  }
  for (int i = 0; i < (with_vector ? GOOD_N : 0); ++i)
    little_endian_bytes(i + 1.0, out + used + 8 * (size_t)i);
  used += with_vector ? 8 * GOOD_N : 0;
  for (int i = 0; i < n_values; ++i)
    little_endian_bytes(i == bad_index ? bad_value : 1.0 + i / 64.0, out + used + 8 * (size_t)i);
  used += 8 * (size_t)n_values;
  for (int i = 0; i < extra; ++i)
    out[used++] = 'x';
  return used;
}

/* One bad file from make_coefficient_file's arguments (per cell). */
static void bad_coefficient(bad_state *s, const char *what, int replace, const char *replacement,
                            int with_vector, int n_values, int bad_index, double bad_value,
                            int extra, const char *needle) {
  char path[256];
  path_of(path, sizeof path, "bad.tpmg");
  unsigned char data[4096];
  write_bytes(path, data,
              make_coefficient_file(data, "coefficient cells 4", replace, replacement, with_vector,
                                    n_values, bad_index, bad_value, extra));
  expect_refused(s, what, path, TPMG_ERROR_ARGUMENT, needle);
  remove(path);
}

/* Hand-made files with a coefficient: good ones are read (and written back
 * the same), bad ones refused. */
static void coefficient_files(bad_state *s) {
  tpmg_context *ctx = s->ctx;
  char path[256], again[272];
  path_of(path, sizeof path, "good-coefficient.tpmg");
  snprintf(again, sizeof again, "%s.again", path);
  unsigned char data[4096];
  static const struct {
    const char *line;
    int n_values, with_vector, replace;
    const char *replacement;
    tpmg_coefficient_layout layout;
  } good[] = {
      {"coefficient cells 4", 4, 1, 0, NULL, TPMG_COEFFICIENT_CELLS},
      {"coefficient quadrature 36", 36, 1, 0, NULL, TPMG_COEFFICIENT_QUADRATURE},
      /* without a vector (rhs ones: made by tpmg_problem_rhs) */
      {"coefficient cells 4", 4, 0, 8, "vector none", TPMG_COEFFICIENT_CELLS},
  };
  for (int c = 0; c < 3; ++c) {
    size_t n = make_coefficient_file(data, good[c].line, good[c].replace, good[c].replacement,
                                     good[c].with_vector, good[c].n_values, -1, 0.0, 0);
    if (!good[c].with_vector) { /* rhs sine needs the vector */
      char *rhs = strstr((char *)data, "rhs sine");
      memcpy(rhs, "rhs ones", 8);
    }
    write_bytes(path, data, n);
    tpmg_grid *grid = NULL;
    tpmg_rhs rhs = TPMG_RHS_ONE;
    double *b = NULL;
    REF_CALL(ctx, tpmg_setup_read(ctx, path, &grid, &rhs, &b));
    int has = 0;
    tpmg_coefficient_layout layout = (tpmg_coefficient_layout)77;
    REF_CALL(ctx, tpmg_grid_get_coefficient(grid, &has, &layout));
    REF_CHECK(has && layout == good[c].layout && (b != NULL) == good[c].with_vector,
              "the good file with '%s': coefficient %d, layout %d, b %p", good[c].line, has,
              (int)layout, (void *)b);
    REF_CALL(ctx, tpmg_setup_write(grid, rhs, b, again));
    same_files(good[c].line, path, again);
    free(b);
    REF_CALL(ctx, tpmg_grid_destroy(&grid));
    remove(again);
  }
  remove(path);

  const char *versions = "needs format version 3";
  write_bytes(
      path, data,
      make_coefficient_file(data, "coefficient cells 4", 1, "tpmg-setup 2", 1, 4, -1, 0.0, 0));
  expect_refused(s, "coefficient in version 2", path, TPMG_ERROR_ARGUMENT, versions);
  remove(path);
  bad_coefficient(s, "layout cell", 9, "coefficient cell 4", 1, 4, -1, 0, 0,
                  "coefficient 'cell': expected 'cells' or 'quadrature'");
  bad_coefficient(s, "no count", 9, "coefficient cells", 1, 4, -1, 0, 0, "got 1 value");
  bad_coefficient(s, "count text", 9, "coefficient cells four", 1, 4, -1, 0, 0,
                  "coefficient cells 'four': expected the number of values");
  bad_coefficient(s, "count -4", 9, "coefficient cells -4", 1, 4, -1, 0, 0, "'-4'");
  bad_coefficient(s, "count 5", 9, "coefficient cells 5", 1, 5, -1, 0, 0, "has 4 cells");
  bad_coefficient(s, "quadrature 4", 9, "coefficient quadrature 4", 1, 4, -1, 0, 0,
                  "4 cells, 9 values each: 36 values");
  bad_coefficient(s, "duplicate", 10, "coefficient cells 4\nend", 1, 4, -1, 0, 0,
                  "duplicate key 'coefficient'");
  bad_coefficient(s, "truncated block", 0, NULL, 1, 3, -1, 0, 4,
                  "the coefficient is truncated: line 9 announces 4 values (32 bytes), but only "
                  "28 bytes follow the vector");
  bad_coefficient(s, "no block", 0, NULL, 1, 0, -1, 0, 0, "only 0 bytes follow the vector");
  bad_coefficient(s, "extra byte", 0, NULL, 1, 4, -1, 0, 1,
                  "extra data after the coefficient's 4 values");
  bad_coefficient(s, "nan value", 0, NULL, 1, 4, 2, NAN, 0,
                  "coefficient value 2 (cell 2, point 0) is nan");
  bad_coefficient(s, "inf value", 0, NULL, 1, 4, 3, INFINITY, 0,
                  "value 3 (cell 3, point 0) is inf");
  bad_coefficient(s, "zero value", 0, NULL, 1, 4, 0, 0.0, 0, "value 0 (cell 0, point 0) is 0");
  bad_coefficient(s, "negative value", 0, NULL, 1, 4, 1, -1.0, 0, "is -1: the values must be");
  bad_coefficient(s, "value 1e16", 0, NULL, 1, 4, 1, 1e16, 0, "is 1e+16");
  bad_coefficient(s, "value 1e-16", 0, NULL, 1, 4, 1, 1e-16, 0, "is 1e-16");
  write_bytes(
      path, data,
      make_coefficient_file(data, "coefficient quadrature 36", 0, NULL, 1, 36, 20, -INFINITY, 0));
  expect_refused(s, "quadrature -inf", path, TPMG_ERROR_ARGUMENT,
                 "coefficient value 20 (cell 2, point 2) is -inf");
  remove(path);
  bad_coefficient(s, "sine without vector", 8, "vector none", 0, 4, -1, 0, 0,
                  "line 7: rhs sine with a coefficient (line 9) needs the right-hand side vector, "
                  "but line 8 says 'vector none'");
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
  bad_file(&s, "version 5", 1, "tpmg-setup 5", GOOD_N, -1, 0, 0, TPMG_ERROR_UNSUPPORTED,
           "version 5");
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
  coefficient_files(&s);

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

/* Graded cells (format version 4): a header line 'widths N', the widths
 * right after 'end', read back bit for bit (an equal direction's too), the
 * vector after them as before. */
static void graded_round_trip(tpmg_context *ctx) {
  char path[512];
  path_of(path, sizeof path, "graded.tpmg");
  double wx[3] = {0.1, 0.3 + 1e-17, 0.6}, wz[2] = {0.25, 0.75};
  tpmg_grid_options o = tpmg_grid_options_default();
  o.dim = 3;
  o.degree = 2;
  o.fine_level = 1;
  o.cells[0] = 3;
  o.cells[1] = 2;
  o.cells[2] = 2;
  o.cell_widths[0] = wx;
  o.cell_widths[2] = wz;
  tpmg_grid *grid = NULL;
  REF_CALL(ctx, tpmg_grid_create(ctx, &o, &grid));
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, 1, &n, NULL));
  double *b = ref_malloc(sizeof(double) * (size_t)n);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, b));
  REF_CALL(ctx, tpmg_setup_write(grid, TPMG_RHS_SINE, b, path));
  size_t size = 0;
  unsigned char *bytes = read_bytes(path, &size);
  unsigned char *body = after_header(bytes, size);
  const char *line = "\nwidths 7\nend\n";
  REF_CHECK(size > 13 && memcmp(bytes, "tpmg-setup 4\n", 13) == 0 && body &&
                memcmp(body - strlen(line), line, strlen(line)) == 0 &&
                (size_t)(bytes + size - body) == 8 * (size_t)(7 + n),
            "graded: expected a version 4 header ending 'widths 7', then 7 + %lld doubles, got "
            "%zu bytes:\n%.*s",
            (long long)n, size, body ? (int)(body - bytes) : 200, (const char *)bytes);
  free(bytes);
  tpmg_grid *read = NULL;
  tpmg_rhs rhs = TPMG_RHS_ONE;
  double *b_read = NULL;
  REF_CALL(ctx, tpmg_setup_read(ctx, path, &read, &rhs, &b_read));
  tpmg_grid_options got;
  REF_CALL(ctx, tpmg_grid_get_options(read, &got));
  const double wy[2] = {0.5, 0.5};
  const double *want[3] = {wx, wy, wz};
  for (int d = 0; d < 3; ++d)
    for (int i = 0; i < o.cells[d]; ++i)
      REF_CHECK(got.cell_widths[d] && got.cell_widths[d][i] == want[d][i],
                "graded: width %d of direction %d: expected %.17g, got %.17g", i, d, want[d][i],
                got.cell_widths[d] ? got.cell_widths[d][i] : -1.0);
  for (tpmg_index i = 0; i < n; ++i)
    if (b_read[i] != b[i]) {
      REF_CHECK(0, "graded: b[%lld] %.17g read back as %.17g", (long long)i, b[i], b_read[i]);
      break;
    }
  free(b_read);
  free(b);
  REF_CALL(ctx, tpmg_grid_destroy(&read));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  remove(path);
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
  /* a variable coefficient (format version 3) */
  coefficient_round_trip(ctx, "2d-cells.tpmg", 2, 3, 3, cells_2d, box_2d, TPMG_COEFFICIENT_CELLS,
                         TPMG_RHS_SINE);
  coefficient_round_trip(ctx, "2d-quadrature.tpmg", 2, 2, 3, NULL, NULL,
                         TPMG_COEFFICIENT_QUADRATURE, TPMG_RHS_ONE);
  coefficient_round_trip(ctx, "3d-cells.tpmg", 3, 2, 2, cells_3d, box_3d, TPMG_COEFFICIENT_CELLS,
                         TPMG_RHS_ONES);
  coefficient_round_trip(ctx, "3d-quadrature.tpmg", 3, 3, 2, NULL, NULL,
                         TPMG_COEFFICIENT_QUADRATURE, TPMG_RHS_SINE);
  coefficient_header(ctx);
  graded_round_trip(ctx);

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
