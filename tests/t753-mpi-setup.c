/* t753-mpi-setup: setup files on P ranks (tpmg_setup_write, tpmg_setup_read).
 * - Written on P ranks (each rank its part of the vector, ghost planes NaN),
 *   a file has the bytes of the file a one-process context writes on rank 0
 *   from the whole vector: 2D and 3D, several coarse cells, uneven slabs, a
 *   vector that crosses rank 0 in several blocks, and without a vector.
 * - Read on P ranks, it gives every rank the grid options, the problem and
 *   its planes [first, first + count) of the vector, ghosts included, bit
 *   for bit.
 * - With a variable coefficient (both layouts, 2D and 3D, and one that
 *   crosses rank 0 in several blocks): the file of P ranks is one process's;
 *   the file one process wrote, read on P ranks, and the file P ranks wrote,
 *   read on one process, give grids that write the same file again and solve
 *   as the grids they were written from (iterations, residual and solution
 *   bit for bit); a value out of range is reported by the lowest rank that
 *   reads it.
 * - Failures on some ranks only fail the call on every rank with the same
 *   status and message (the lowest failing rank's), never a hang: a file that
 *   one rank cannot open (it exists in rank 0's directory only), a header
 *   malformed on one rank, a NaN in the part that one rank reads, a truncated
 *   file, an empty path on one rank; writing a NaN in one rank's owned planes
 *   (the message names its index in the whole level; no file is written), a
 *   file rank 0 cannot open or write (a file size limit; /dev/full is
 *   refused, a device), ranks that disagree on
 *   whether b is NULL. After a failure *grid and *b are NULL and no backend
 *   memory is left.
 * Files go to temporary directories under the working directory (the build
 * tree), removed at the end. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi-reference.h"

typedef struct {
  int dim, degree, level, cells[3];
  double box[6];
  tpmg_rhs rhs;
} mesh_case;

static const mesh_case cases[] = {
    /* 263169 DoFs: more than one block of 65536 doubles per rank */
    {2, 2, 8, {1, 1, 1}, {0, 1, 0, 1, 0, 1}, TPMG_RHS_SINE},
    {2, 4, 2, {3, 5, 1}, {0, 2, -1, 0.5, 0, 1}, TPMG_RHS_ONE}, /* uneven slabs */
    {3, 3, 2, {1, 2, 3}, {0, 1, 0, 2, -1, 2}, TPMG_RHS_ONES},  /* several coarse cells */
};

static int rank, size;
static char directory[64]; /* shared by every rank (rank 0's mkdtemp) */
static char own[64];       /* this rank's own directory */

static void path_of(char *path, size_t n, const char *dir, const char *name) {
  snprintf(path, n, "%s/%s", dir, name);
}

/* The whole file, its length in *n. */
static unsigned char *read_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "t753-mpi-setup: cannot read %s: %s\n", path, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  size_t capacity = 1 << 16, used = 0;
  unsigned char *data = ref_malloc(capacity);
  for (;;) {
    used += fread(data + used, 1, capacity - used, f);
    if (used < capacity)
      break;
    capacity *= 2;
    unsigned char *bigger = realloc(data, capacity);
    if (!bigger)
      MPI_Abort(MPI_COMM_WORLD, 2);
    data = bigger;
  }
  fclose(f);
  *n = used;
  return data;
}

static void write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "t753-mpi-setup: cannot write %s: %s\n", path, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static int exists(const char *path) {
  struct stat info;
  return stat(path, &info) == 0;
}

/* A whole level's random vector, the same on every rank, with a few values
 * that must come back bit for bit. */
static double *random_whole(int64_t n) {
  static uint64_t seed = 753;
  double *v = ref_malloc(sizeof(double) * (size_t)n);
  ref_fill_random(&seed, n, v);
  v[0] = -0.0;
  v[n / 2] = DBL_TRUE_MIN;
  v[n - 1] = -DBL_MAX;
  return v;
}

static int same_options(const tpmg_grid_options *a, const tpmg_grid_options *b) {
  int same = a->dim == b->dim && a->degree == b->degree && a->fine_level == b->fine_level;
  for (int d = 0; d < a->dim; ++d)
    same = same && a->cells[d] == b->cells[d];
  for (int j = 0; j < 2 * a->dim; ++j)
    same = same && memcmp(&a->box[j], &b->box[j], sizeof(double)) == 0;
  return same;
}

/* Every rank got `status` (not success) with the same message as rank 0,
 * which contains `want` (and, with P ranks, "rank R of P" for the failing
 * rank R); no backend memory is left beyond `baseline`. */
static void check_failed_everywhere(tpmg_context *ctx, tpmg_status status, tpmg_status expected,
                                    int failing_rank, const char *want, size_t baseline,
                                    const char *what) {
  const char *message = tpmg_context_last_error(ctx);
  REF_CHECK(status == expected, "%s: status %d on rank %d, expected %d (%s)", what, (int)status,
            rank, (int)expected, message);
  char first[1024];
  snprintf(first, sizeof first, "%s", message);
  MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
  REF_CHECK(strcmp(first, message) == 0, "%s: rank %d's message differs from rank 0's:\n  %s\n  %s",
            what, rank, message, first);
  REF_CHECK(strstr(message, want), "%s: message '%s' lacks '%s'", what, message, want);
  if (size > 1) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "rank %d of %d: ", failing_rank, size);
    REF_CHECK(strstr(message, prefix), "%s: message '%s' lacks '%s'", what, message, prefix);
  }
  size_t bytes = 0;
  REF_CALL(ctx, tpmg_context_memory(ctx, &bytes));
  REF_CHECK(bytes == baseline, "%s: %zu bytes of backend memory after the failure, %zu before",
            what, bytes, baseline);
}

/* A read that must fail everywhere: *grid, *b NULL and *rhs unchanged. */
static void read_fails(tpmg_context *ctx, const char *path, tpmg_status expected, int failing_rank,
                       const char *want, const char *what) {
  size_t baseline = 0;
  REF_CALL(ctx, tpmg_context_memory(ctx, &baseline));
  tpmg_grid *grid = (tpmg_grid *)&baseline; /* anything but NULL */
  tpmg_rhs rhs = (tpmg_rhs)-7;
  double *b = (double *)&baseline;
  tpmg_status status = tpmg_setup_read(ctx, path, &grid, &rhs, &b);
  REF_CHECK(!grid && !b && rhs == (tpmg_rhs)-7,
            "%s: after the failure grid %p, b %p, rhs %d (expected NULL, NULL, unchanged)", what,
            (void *)grid, (void *)b, (int)rhs);
  check_failed_everywhere(ctx, status, expected, failing_rank, want, baseline, what);
}

/* ---- round trip ---------------------------------------------------------- */

static void round_trip(tpmg_context *one, tpmg_context *all, const mesh_case *m, int c) {
  tpmg_grid *grid = ref_grid_create(all, m->dim, m->degree, m->level, m->cells, m->box);
  tpmg_level_layout layout;
  REF_CALL(all, tpmg_grid_level_layout(grid, m->level, &layout));
  int64_t n_whole = layout.n_global[0] * layout.n_global[1] * layout.n_global[2];
  int64_t n_local = layout.count * layout.plane;
  double *whole = random_whole(n_whole);
  double *local = ref_malloc(sizeof(double) * (size_t)n_local);
  mref_local(&layout, TPMG_DOUBLE, whole, local); /* ghosts NaN: not written */

  for (int with_vector = 1; with_vector >= 0; --with_vector) {
    char name[32], path_one[128], path_all[128];
    snprintf(name, sizeof name, "case%d-%s", c, with_vector ? "vector" : "none");
    /* rank 0 writes the whole vector on one process */
    snprintf(path_one, sizeof path_one, "%s/%s.one", directory, name);
    snprintf(path_all, sizeof path_all, "%s/%s.all", directory, name);
    if (rank == 0) {
      tpmg_grid *g = ref_grid_create(one, m->dim, m->degree, m->level, m->cells, m->box);
      REF_CALL(one, tpmg_setup_write(g, m->rhs, with_vector ? whole : NULL, path_one));
      tpmg_grid_destroy(&g);
    }
    REF_CALL(all, tpmg_setup_write(grid, m->rhs, with_vector ? local : NULL, path_all));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      size_t n_one = 0, n_all = 0;
      unsigned char *a = read_bytes(path_one, &n_one), *b = read_bytes(path_all, &n_all);
      size_t differ = 0;
      while (differ < n_one && differ < n_all && a[differ] == b[differ])
        ++differ;
      REF_CHECK(n_one == n_all && differ == n_one,
                "%s: the file of %d ranks (%zu bytes) differs from one process's (%zu bytes) "
                "from byte %zu on",
                name, size, n_all, n_one, differ);
      free(a);
      free(b);
    }

    /* read back on every rank: its planes, ghosts included */
    for (int want_b = 1; want_b >= 0; --want_b) {
      tpmg_grid *read = NULL;
      tpmg_rhs rhs = TPMG_RHS_ONE;
      double *b = NULL;
      REF_CALL(all, tpmg_setup_read(all, path_all, &read, &rhs, want_b ? &b : NULL));
      tpmg_grid_options written, got;
      REF_CALL(all, tpmg_grid_get_options(grid, &written));
      REF_CALL(all, tpmg_grid_get_options(read, &got));
      REF_CHECK(same_options(&written, &got) && rhs == m->rhs,
                "%s: the grid options or the problem (%d, expected %d) did not come back", name,
                (int)rhs, (int)m->rhs);
      tpmg_level_layout read_layout;
      REF_CALL(all, tpmg_grid_level_layout(read, m->level, &read_layout));
      REF_CHECK(read_layout.first == layout.first && read_layout.count == layout.count,
                "%s: the read grid's planes on rank %d are [%lld, +%lld), expected [%lld, +%lld)",
                name, rank, (long long)read_layout.first, (long long)read_layout.count,
                (long long)layout.first, (long long)layout.count);
      if (want_b && with_vector) {
        const double *expected = whole + layout.first * layout.plane;
        int64_t i = 0;
        while (i < n_local && b && memcmp(&b[i], &expected[i], sizeof(double)) == 0)
          ++i;
        REF_CHECK(b && i == n_local,
                  "%s: rank %d's planes [%lld, +%lld) differ from the file's at local entry %lld "
                  "(got %.17g, expected %.17g)",
                  name, rank, (long long)layout.first, (long long)layout.count, (long long)i,
                  b && i < n_local ? b[i] : NAN, i < n_local ? expected[i] : NAN);
      } else if (want_b) {
        REF_CHECK(!b, "%s: a file without a vector gave *b = %p", name, (void *)b);
      }
      free(b);
      tpmg_grid_destroy(&read);
    }
  }
  free(local);
  free(whole);
  tpmg_grid_destroy(&grid);
}

/* ---- a variable coefficient ---------------------------------------------- */

typedef struct {
  int dim, degree, level, cells[3];
  tpmg_coefficient_layout layout;
  int solve; /* also solve (the last case only writes and reads: it is large) */
} coefficient_case;

static const coefficient_case coefficient_cases[] = {
    {2, 3, 3, {2, 3, 1}, TPMG_COEFFICIENT_QUADRATURE, 1},
    {3, 2, 2, {1, 2, 3}, TPMG_COEFFICIENT_CELLS, 1},
    /* 128^2 cells of 16 values: more than one block of 65536 per rank */
    {2, 3, 7, {1, 1, 1}, TPMG_COEFFICIENT_QUADRATURE, 0},
};

/* Value i of the whole level's coefficient (the same on every rank). */
static double coefficient_value(int64_t i) {
  return 1.0 + 0.75 * sin(0.1 * (double)i + 1.0 / 3);
}

/* This rank's owned cells' values (layout: the fine level's), or the whole
 * level's (whole != 0), as tpmg_grid_set_coefficient takes them; the index
 * of the first in the whole level in *first, their count in *n. */
static double *coefficient_part(const coefficient_case *m, const tpmg_level_layout *layout,
                                int whole, int64_t *first, int64_t *n) {
  int64_t layer = 1, cells = (layout->n_global[m->dim - 1] - 1) / m->degree;
  for (int d = 0; d < m->dim; ++d) {
    if (d < m->dim - 1)
      layer *= (layout->n_global[d] - 1) / m->degree;
    if (m->layout == TPMG_COEFFICIENT_QUADRATURE)
      layer *= m->degree + 1;
  }
  *first = whole ? 0 : layout->cell_first * layer;
  *n = (whole ? cells : layout->cell_end - layout->cell_first) * layer;
  double *values = ref_malloc(sizeof(double) * (size_t)(*n > 0 ? *n : 1));
  for (int64_t i = 0; i < *n; ++i)
    values[i] = coefficient_value(*first + i);
  return values;
}

/* The grid of m on ctx with its coefficient (whole: ctx is one process). */
static tpmg_grid *coefficient_grid(tpmg_context *ctx, const coefficient_case *m, int whole) {
  tpmg_grid *grid = ref_grid_create(ctx, m->dim, m->degree, m->level, m->cells, NULL);
  tpmg_level_layout layout;
  REF_CALL(ctx, tpmg_grid_level_layout(grid, m->level, &layout));
  int64_t first, n;
  double *values = coefficient_part(m, &layout, whole, &first, &n);
  REF_CALL(ctx, tpmg_grid_set_coefficient(grid, m->layout, values));
  free(values);
  return grid;
}

typedef struct {
  int iterations;
  double residual_norm;
  double *x; /* the rank's vector */
} solve_record;

/* x = 0, then a solve of A x = b (b: this rank's part, n entries) by the
 * global smoother, the variant that takes a coefficient. */
static solve_record solve(tpmg_context *ctx, tpmg_grid *grid, int64_t n, const double *b) {
  solve_record s = {0, 0.0, ref_malloc(sizeof(double) * (size_t)n)};
  tpmg_solver_options options = tpmg_solver_options_default();
  options.smoother = TPMG_SMOOTHER_GLOBAL;
  options.tolerance = 1e-10;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  void *vb = ref_vector_create(ctx, TPMG_DOUBLE, n, b);
  memset(s.x, 0, sizeof(double) * (size_t)n);
  void *vx = ref_vector_create(ctx, TPMG_DOUBLE, n, s.x);
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_solve(solver, vb, vx, &result));
  REF_CHECK(result.converged, "solve did not converge: reduction %g", result.residual_reduction);
  ref_vector_download(ctx, TPMG_DOUBLE, n, vx, s.x);
  s.iterations = result.iterations;
  s.residual_norm = result.residual_norm;
  ref_vector_destroy(ctx, &vx);
  ref_vector_destroy(ctx, &vb);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  return s;
}

/* The grid read from path on ctx solves b as `grid` does, bit for bit; its b
 * is this rank's part of the file's vector, `b`. */
static void same_solve(tpmg_context *ctx, tpmg_grid *grid, const char *path, int64_t n,
                       const double *b, tpmg_coefficient_layout layout, const char *what) {
  tpmg_grid *read = NULL;
  tpmg_rhs rhs;
  double *read_b = NULL;
  REF_CALL(ctx, tpmg_setup_read(ctx, path, &read, &rhs, &read_b));
  int has = 0;
  tpmg_coefficient_layout read_layout = (tpmg_coefficient_layout)77;
  REF_CALL(ctx, tpmg_grid_get_coefficient(read, &has, &read_layout));
  REF_CHECK(has && read_layout == layout, "%s: read with coefficient %d, layout %d (expected %d)",
            what, has, (int)read_layout, (int)layout);
  REF_CHECK(read_b && memcmp(read_b, b, sizeof(double) * (size_t)n) == 0,
            "%s: rank %d's part of the vector did not come back bit for bit", what, rank);
  solve_record original = solve(ctx, grid, n, b), again = solve(ctx, read, n, read_b);
  REF_CHECK(original.iterations == again.iterations &&
                memcmp(&original.residual_norm, &again.residual_norm, sizeof(double)) == 0,
            "%s: %d iterations to residual %.17g from the original grid, %d to %.17g from the "
            "file",
            what, original.iterations, original.residual_norm, again.iterations,
            again.residual_norm);
  int64_t i = 0;
  while (i < n && memcmp(&original.x[i], &again.x[i], sizeof(double)) == 0)
    ++i;
  REF_CHECK(i == n, "%s: rank %d's solutions differ from local entry %lld on", what, rank,
            (long long)i);
  free(original.x);
  free(again.x);
  free(read_b);
  tpmg_grid_destroy(&read);
}

/* Rank 0: whether two files have the same bytes. */
static void same_files(const char *what, const char *a_path, const char *b_path) {
  if (rank != 0)
    return;
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

static void coefficient_round_trip(tpmg_context *one, tpmg_context *all, const coefficient_case *m,
                                   int c) {
  char what[64], path_one[128], path_all[128], path_again[128];
  snprintf(what, sizeof what, "coefficient case %d on %d ranks", c, size);
  snprintf(path_one, sizeof path_one, "%s/coef%d.one", directory, c);
  snprintf(path_all, sizeof path_all, "%s/coef%d.all", directory, c);
  snprintf(path_again, sizeof path_again, "%s/coef%d.again", directory, c);
  tpmg_grid *grid = coefficient_grid(all, m, 0), *grid_one = NULL;
  tpmg_level_layout layout;
  REF_CALL(all, tpmg_grid_level_layout(grid, m->level, &layout));
  int64_t n_whole = layout.n_global[0] * layout.n_global[1] * layout.n_global[2];
  int64_t n_local = layout.count * layout.plane;
  double *whole = random_whole(n_whole);
  const double *local = whole + layout.first * layout.plane; /* ghosts included */

  /* written by one process and by P ranks: the same bytes */
  if (rank == 0) {
    grid_one = coefficient_grid(one, m, 1);
    REF_CALL(one, tpmg_setup_write(grid_one, TPMG_RHS_ONE, whole, path_one));
  }
  REF_CALL(all, tpmg_setup_write(grid, TPMG_RHS_ONE, local, path_all));
  MPI_Barrier(MPI_COMM_WORLD);
  same_files(what, path_one, path_all);

  /* one process's file read on P ranks: written again, the same file */
  tpmg_grid *read = NULL;
  tpmg_rhs rhs;
  double *read_b = NULL;
  REF_CALL(all, tpmg_setup_read(all, path_one, &read, &rhs, &read_b));
  REF_CALL(all, tpmg_setup_write(read, rhs, read_b, path_again));
  MPI_Barrier(MPI_COMM_WORLD);
  same_files(what, path_one, path_again);
  free(read_b);
  tpmg_grid_destroy(&read);

  if (m->solve) {
    /* and solved as the grids they were written from */
    char how[96];
    snprintf(how, sizeof how, "%s, one process's file", what);
    same_solve(all, grid, path_one, n_local, local, m->layout, how);
    if (rank == 0) {
      snprintf(how, sizeof how, "%s, read on one process", what);
      same_solve(one, grid_one, path_all, n_whole, whole, m->layout, how);
    }
  }
  tpmg_grid_destroy(&grid_one);
  tpmg_grid_destroy(&grid);
  free(whole);
}

/* A value out of range in a middle cell: the lowest rank that owns it says so. */
static void coefficient_failure(tpmg_context *all) {
  const coefficient_case *m = &coefficient_cases[0];
  char good[128], path[128], want[160];
  snprintf(good, sizeof good, "%s/coef0.all", directory);
  path_of(path, sizeof path, directory, "coef-bad");
  tpmg_grid *grid = ref_grid_create(all, m->dim, m->degree, m->level, m->cells, NULL);
  tpmg_level_layout layout;
  REF_CALL(all, tpmg_grid_level_layout(grid, m->level, &layout));
  int64_t first, n, n_whole;
  free(coefficient_part(m, &layout, 1, &first, &n_whole));
  free(coefficient_part(m, &layout, 0, &first, &n));
  const int64_t per_cell = (m->degree + 1) * (m->degree + 1);
  const int64_t bad = n_whole / 2 + 5; /* a middle cell's point 5 */
  int lowest = first <= bad && bad < first + n ? rank : size;
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  tpmg_grid_destroy(&grid);
  if (rank == 0) {
    size_t n_bytes = 0;
    unsigned char *bytes = read_bytes(good, &n_bytes);
    double big = 2e15; /* beyond TPMG_MAX_COEFFICIENT; stored little-endian */
    uint64_t bits;
    memcpy(&bits, &big, 8);
    for (int i = 0; i < 8; ++i)
      bytes[n_bytes - 8 * (size_t)(n_whole - bad) + (size_t)i] = (unsigned char)(bits >> (8 * i));
    write_bytes(path, bytes, n_bytes);
    free(bytes);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(want, sizeof want, "coefficient value %lld (cell %lld, point %lld) is 2e+15",
           (long long)bad, (long long)(bad / per_cell), (long long)(bad % per_cell));
  read_fails(all, path, TPMG_ERROR_ARGUMENT, lowest, want, "coefficient value out of range");
}

/* ---- failures on some ranks ---------------------------------------------- */

static void read_failures(tpmg_context *all) {
  const mesh_case *m = &cases[2];
  char good[128], path[128], want[128];
  snprintf(good, sizeof good, "%s/case2-vector.all", directory);
  size_t n_bytes = 0;
  unsigned char *bytes = read_bytes(good, &n_bytes);
  int last = size - 1;
  ref_mesh mesh;
  ref_mesh_init(&mesh, m->dim, m->degree, m->cells, m->box, m->level);
  size_t header = n_bytes - (size_t)mesh.n_dofs * 8;

  /* a file only rank 0 has: each rank looks in its own directory */
  path_of(path, sizeof path, own, "only-rank-0");
  if (rank == 0)
    write_bytes(path, bytes, n_bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  if (size > 1)
    read_fails(all, path, TPMG_ERROR_ARGUMENT, 1, "cannot open it", "only on rank 0");

  /* a header malformed on the last rank only */
  path_of(path, sizeof path, own, "bad-header");
  if (rank == last) {
    unsigned char *bad = ref_malloc(n_bytes);
    memcpy(bad, bytes, n_bytes);
    char *dim = strstr((char *)bad, "dim 3");
    dim[4] = '4';
    write_bytes(path, bad, n_bytes);
    free(bad);
  } else {
    write_bytes(path, bytes, n_bytes);
  }
  read_fails(all, path, TPMG_ERROR_ARGUMENT, last, "dim 4: must be 2 or 3",
             "header bad on the last rank");

  /* the last rank's file has a NaN in its last entry: it fails after the
   * grid was made, the others read their parts */
  path_of(path, sizeof path, own, "nan-last");
  if (rank == last) {
    unsigned char *bad = ref_malloc(n_bytes);
    memcpy(bad, bytes, n_bytes);
    double nan = NAN;
    memcpy(bad + n_bytes - 8, &nan, 8); /* a NaN reads the same in either byte order */
    write_bytes(path, bad, n_bytes);
    free(bad);
  } else {
    write_bytes(path, bytes, n_bytes);
  }
  snprintf(want, sizeof want, "vector entry %lld is nan", (long long)mesh.n_dofs - 1);
  read_fails(all, path, TPMG_ERROR_ARGUMENT, last, want, "NaN on the last rank's file");

  /* one shared file with a NaN in a middle plane: the lowest rank that reads
   * it reports it, by its index in the whole vector */
  int64_t plane = mesh.n[0] * mesh.n[1], middle = mesh.n[2] / 2 * plane + plane / 3;
  path_of(path, sizeof path, directory, "nan-middle");
  if (rank == 0) {
    unsigned char *bad = ref_malloc(n_bytes);
    memcpy(bad, bytes, n_bytes);
    double nan = NAN;
    memcpy(bad + header + (size_t)middle * 8, &nan, 8);
    write_bytes(path, bad, n_bytes);
    free(bad);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  tpmg_grid *grid = ref_grid_create(all, m->dim, m->degree, m->level, m->cells, m->box);
  tpmg_level_layout layout;
  REF_CALL(all, tpmg_grid_level_layout(grid, m->level, &layout));
  int64_t middle_plane = middle / plane;
  int reads = layout.first <= middle_plane && middle_plane < layout.first + layout.count;
  int lowest = reads ? rank : size;
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  tpmg_grid_destroy(&grid);
  snprintf(want, sizeof want, "vector entry %lld is nan", (long long)middle);
  read_fails(all, path, TPMG_ERROR_ARGUMENT, lowest, want, "NaN in a middle plane");

  /* truncated in the middle of the vector: every rank sees it */
  path_of(path, sizeof path, directory, "truncated");
  if (rank == 0)
    write_bytes(path, bytes, header + (size_t)middle * 8);
  MPI_Barrier(MPI_COMM_WORLD);
  read_fails(all, path, TPMG_ERROR_ARGUMENT, 0, "the vector is truncated", "truncated");

  /* an empty path on the last rank only */
  read_fails(all, rank == last ? "" : good, TPMG_ERROR_ARGUMENT, last, "setup file path is empty",
             "empty path on the last rank");
  free(bytes);
}

static void write_failures(tpmg_context *all) {
  const mesh_case *m = &cases[0]; /* several blocks per rank */
  tpmg_grid *grid = ref_grid_create(all, m->dim, m->degree, m->level, m->cells, m->box);
  tpmg_level_layout layout;
  REF_CALL(all, tpmg_grid_level_layout(grid, m->level, &layout));
  int64_t n_whole = layout.n_global[0] * layout.n_global[1] * layout.n_global[2];
  int64_t n_local = layout.count * layout.plane;
  double *whole = random_whole(n_whole);
  double *local = ref_malloc(sizeof(double) * (size_t)n_local);
  mref_local(&layout, TPMG_DOUBLE, whole, local);
  size_t baseline = 0;
  REF_CALL(all, tpmg_context_memory(all, &baseline));
  char path[128], want[128];

  /* a NaN in an owned plane of rank min(2, P - 1): named by its index in the
   * whole level, no file written */
  int bad_rank = size > 2 ? 2 : size - 1;
  int64_t plane = (layout.owned_first + layout.owned_end) / 2;
  int64_t global = plane * layout.plane + layout.plane / 2;
  int64_t i = global - layout.first * layout.plane;
  path_of(path, sizeof path, directory, "nan-write");
  if (rank == bad_rank)
    local[i] = NAN;
  MPI_Bcast(&global, 1, MPI_INT64_T, bad_rank, MPI_COMM_WORLD);
  tpmg_status status = tpmg_setup_write(grid, m->rhs, local, path);
  if (size > 1)
    snprintf(want, sizeof want, "= nan (entry %lld of the whole fine level)", (long long)global);
  else
    snprintf(want, sizeof want, "b[%lld] = nan", (long long)global);
  check_failed_everywhere(all, status, TPMG_ERROR_ARGUMENT, bad_rank, want, baseline,
                          "NaN written");
  MPI_Barrier(MPI_COMM_WORLD);
  REF_CHECK(!exists(path), "NaN written: the file %s exists after the failure", path);
  if (rank == bad_rank)
    local[i] = whole[global];

  /* rank 0 cannot open the file */
  path_of(path, sizeof path, directory, "missing/file");
  status = tpmg_setup_write(grid, m->rhs, local, path);
  check_failed_everywhere(all, status, TPMG_ERROR_ARGUMENT, 0, "cannot open it for writing",
                          baseline, "unopenable on rank 0");

  /* rank 0's writes fail (a file size limit of 1000 bytes) with the other
   * ranks' blocks still to come */
  path_of(path, sizeof path, directory, "limited");
  struct rlimit old_limit, limit;
  int limited = 0;
  void (*old_handler)(int) = SIG_DFL;
  if (rank == 0 && getrlimit(RLIMIT_FSIZE, &old_limit) == 0) {
    limit = old_limit;
    limit.rlim_cur = 1000;
    old_handler = signal(SIGXFSZ, SIG_IGN);
    limited = setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &limited, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (limited) {
    status = tpmg_setup_write(grid, m->rhs, local, path);
    if (rank == 0) setrlimit(RLIMIT_FSIZE, &old_limit);
    check_failed_everywhere(all, status, TPMG_ERROR_ARGUMENT, 0, "writing it failed", baseline,
                            "a file size limit");
    MPI_Barrier(MPI_COMM_WORLD);
    REF_CHECK(!exists(path), "a file size limit: the file %s exists after the failure", path);
  }
  if (rank == 0) signal(SIGXFSZ, old_handler);
  /* a device: refused before anything is written */
  if (exists("/dev/full")) {
    status = tpmg_setup_write(grid, m->rhs, local, "/dev/full");
    check_failed_everywhere(all, status, TPMG_ERROR_ARGUMENT, 0, "not a regular file", baseline,
                            "/dev/full");
  }

  /* b on every rank but the last */
  if (size > 1) {
    path_of(path, sizeof path, directory, "b-on-some");
    status = tpmg_setup_write(grid, m->rhs, rank == size - 1 ? NULL : local, path);
    check_failed_everywhere(all, status, TPMG_ERROR_ARGUMENT, size - 1, "whether b is NULL",
                            baseline, "b on some ranks");
  }
  free(local);
  free(whole);
  tpmg_grid_destroy(&grid);
}

/* Remove every file of dir, then dir. */
static void remove_directory(const char *dir, const char *const *names, int n) {
  char path[128];
  for (int i = 0; i < n; ++i) {
    path_of(path, sizeof path, dir, names[i]);
    remove(path);
  }
  if (rmdir(dir) != 0)
    fprintf(stderr, "t753-mpi-setup: rank %d cannot remove %s: %s\n", rank, dir, strerror(errno));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  snprintf(directory, sizeof directory, "t753-mpi-setup.XXXXXX");
  if (rank == 0 && !mkdtemp(directory)) {
    fprintf(stderr, "t753-mpi-setup: mkdtemp: %s\n", strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Bcast(directory, sizeof directory, MPI_CHAR, 0, MPI_COMM_WORLD);
  snprintf(own, sizeof own, "t753-mpi-setup-rank%d.XXXXXX", rank);
  if (!mkdtemp(own)) {
    fprintf(stderr, "t753-mpi-setup: mkdtemp: %s\n", strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  tpmg_context *one = rank == 0 ? ref_context_create("cpu", 1) : NULL;
  tpmg_context *all = mref_context_create(1);
  for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); ++c)
    round_trip(one, all, &cases[c], c);
  for (int c = 0; c < (int)(sizeof coefficient_cases / sizeof coefficient_cases[0]); ++c)
    coefficient_round_trip(one, all, &coefficient_cases[c], c);
  coefficient_failure(all);
  read_failures(all);
  write_failures(all);
  if (one)
    REF_CALL(one, tpmg_context_destroy(&one));
  REF_CALL(all, tpmg_context_destroy(&all));

  MPI_Barrier(MPI_COMM_WORLD);
  const char *own_files[] = {"only-rank-0", "bad-header", "nan-last"};
  remove_directory(own, own_files, 3);
  if (rank == 0) {
    const char *files[] = {
        "case0-vector.one", "case0-vector.all", "case0-none.one", "case0-none.all",
        "case1-vector.one", "case1-vector.all", "case1-none.one", "case1-none.all",
        "case2-vector.one", "case2-vector.all", "case2-none.one", "case2-none.all",
        "nan-middle",       "truncated",        "nan-write",      "b-on-some",
        "coef0.one",        "coef0.all",        "coef0.again",    "coef1.one",
        "coef1.all",        "coef1.again",      "coef2.one",      "coef2.all",
        "coef2.again",      "coef-bad"};
    remove_directory(directory, files, (int)(sizeof files / sizeof files[0]));
  }
  int code = mref_exit_code("t753-mpi-setup");
  MPI_Finalize();
  return code;
}
