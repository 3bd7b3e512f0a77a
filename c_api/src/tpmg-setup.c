/* Setup files: one problem (grid options, manufactured problem, optionally the
 * finest level's right-hand side and its variable coefficient) written by one
 * program and read by another, e.g. made by a deal.II program and solved by
 * tpmg-poisson on a machine without deal.II. A text header of "key value"
 * lines, then the vector and the coefficient as binary little-endian doubles,
 * so that they come back bit for bit. The format is described in
 * doc/design.md ("Setup files"). */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with realpath: fileno, fstat, fdopen, fsync, strdup */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpmg-impl.h"

#define SETUP_MAGIC "tpmg-setup"
/* Version 2 adds the key 'reaction' (tpmg_grid_options.reaction), version 3
 * the key 'coefficient' (tpmg_grid_set_coefficient's values after the
 * vector), version 4 the key 'widths N' (tpmg_grid_options.cell_widths: the
 * N = sum_d cells[d] coarse cells' widths, direction by direction, as
 * doubles right after the 'end' line, before the vector); a file is written
 * in the lowest version that holds its problem, which older readers take. */
#define SETUP_VERSION 4
#define SETUP_LINE_MAX 256 /* characters of a header line, without its newline */
#define SETUP_TOKENS_MAX 8 /* a key and up to 6 values, one more to detect excess */
#define SETUP_CHUNK 1024   /* doubles per read or write through a buffer */
#define SETUP_BLOCK 65536  /* doubles per message from a rank to rank 0 (writing) */

enum {
  KEY_DIM,
  KEY_DEGREE,
  KEY_LEVEL,
  KEY_CELLS,
  KEY_BOX,
  KEY_RHS,
  KEY_VECTOR,
  KEY_REACTION,    /* optional, version 2 on */
  KEY_COEFFICIENT, /* optional, version 3 on */
  KEY_WIDTHS,      /* optional, version 4 on */
  N_KEYS
};
static const char *const key_names[N_KEYS] = {"dim",    "degree",   "level",       "cells",
                                              "box",    "rhs",      "vector",      "reaction",
                                              "coefficient", "widths"};
/* The layouts' names on the 'coefficient' line, by tpmg_coefficient_layout. */
static const char *const layout_names[2] = {"cells", "quadrature"};

/* The values of a coefficient of `layout` on the whole finest level. */
static tpmg_index coefficient_count(const tpmg_grid *grid, tpmg_coefficient_layout layout) {
  const tpmg_level *fine = &grid->global[grid->n_levels - 1];
  tpmg_index n = 1, per_cell = 1;
  for (int d = 0; d < grid->options.dim; ++d) {
    n *= fine->cells[d];
    per_cell *= layout == TPMG_COEFFICIENT_QUADRATURE ? grid->options.degree + 1 : 1;
  }
  return n * per_cell;
}

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* Reverse the bytes of each of n doubles: the file is little-endian whatever the host. */
static void swap_bytes(size_t n, double *x) {
  for (size_t i = 0; i < n; ++i) {
    unsigned char *p = (unsigned char *)&x[i];
    for (int j = 0; j < 4; ++j) {
      unsigned char t = p[j];
      p[j] = p[7 - j];
      p[7 - j] = t;
    }
  }
}

/* ---- writing ----------------------------------------------------------- */

/* Write n doubles little-endian; returns 0 on an I/O error (errno set). */
static int write_vector(FILE *f, tpmg_index n, const double *b) {
  if (host_is_little_endian()) return fwrite(b, sizeof(double), (size_t)n, f) == (size_t)n;
  double chunk[SETUP_CHUNK];
  for (tpmg_index start = 0; start < n; start += SETUP_CHUNK) {
    size_t count = (size_t)(n - start < SETUP_CHUNK ? n - start : SETUP_CHUNK);
    memcpy(chunk, b + start, count * sizeof(double));
    swap_bytes(count, chunk);
    if (fwrite(chunk, sizeof(double), count, f) != count) return 0;
  }
  return 1;
}

/* What rank 0 writes to: a new file beside the one it replaces, renamed onto
 * it once complete, so that a failed write (a full disk, a file size limit)
 * leaves the old file as it was, even when that is the setup file just read.
 * The first I/O error, and the buffer that the other ranks' planes arrive
 * in. */
typedef struct {
  FILE *f;
  int ok, error;
  int replaces;    /* the target exists (and is a regular file) */
  char *target;    /* the path, or the file its symbolic link names (malloc) */
  char *temporary; /* the file written, renamed onto target when complete (malloc) */
  double *block;   /* SETUP_BLOCK doubles: another rank's block, or backend data on the host */
} setup_writer;

/* Rank 0: refuse a target that exists and is no regular file (opening a pipe
 * blocks until a reader comes, a device is not a file to replace), then
 * create the temporary file beside the target with the permissions the
 * target has, or new files get. */
static tpmg_status open_writer(const tpmg_context *ctx, const char *path, setup_writer *w) {
  struct stat info, link;
  w->replaces = stat(path, &info) == 0;
  TPMG_CHECK(ctx, !w->replaces || S_ISREG(info.st_mode), TPMG_ERROR_ARGUMENT,
             "setup file '%s': it exists and is not a regular file (a directory, a device or a "
             "pipe): refused",
             path);
  if (w->replaces && lstat(path, &link) == 0 && S_ISLNK(link.st_mode))
    w->target = realpath(path, NULL); /* replace the file, keep the link */
  if (!w->target) w->target = strdup(path);
  size_t size = w->target ? strlen(w->target) + 48 : 0;
  if (w->target) w->temporary = malloc(size);
  TPMG_CHECK(ctx, w->temporary, TPMG_ERROR_MEMORY, "setup file '%s': allocating its name failed",
             path);
  int fd = -1;
  for (unsigned attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    snprintf(w->temporary, size, "%s.tmp-%ld-%u", w->target, (long)getpid(), attempt);
    fd = open(w->temporary, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    int error = errno;
    tpmg_status status = tpmg_error_set(
        ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
        "setup file '%s': cannot open it for writing: %s (creating '%s', written first and "
        "renamed onto it)",
        path, strerror(error), w->temporary);
    free(w->temporary);
    w->temporary = NULL;
    return status;
  }
  if (w->replaces) (void)fchmod(fd, info.st_mode & 07777);
  w->f = fdopen(fd, "wb");
  if (!w->f) {
    int error = errno;
    close(fd);
    return tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                          "setup file '%s': cannot open it for writing: %s", path,
                          strerror(error));
  }
  return TPMG_SUCCESS;
}

/* The local argument checks of tpmg_setup_write (before any agreement). */
static tpmg_status check_write(const tpmg_grid *grid, tpmg_rhs rhs, const double *b,
                               const char *path) {
  const tpmg_context *ctx = grid->ctx;
  int L = grid->n_levels - 1;
  TPMG_CHECK(ctx, path && path[0], TPMG_ERROR_ARGUMENT, "setup file path is %s",
             path ? "empty" : "NULL");
  TPMG_CHECK(ctx, tpmg_rhs_name(rhs), TPMG_ERROR_ARGUMENT,
             "setup file '%s': unknown right-hand side %d", path, (int)rhs);
  /* a reader could not make this right-hand side: tpmg_problem_rhs refuses it */
  TPMG_CHECK(ctx, b || rhs != TPMG_RHS_SINE || !grid->levels[L].coefficient[0], TPMG_ERROR_ARGUMENT,
             "setup file '%s': rhs sine on a grid with a variable coefficient needs the "
             "right-hand side vector b (tpmg_problem_rhs makes none there), b is NULL",
             path);
  if (!b)
    return TPMG_SUCCESS;
  /* the owned entries only: ghosts are scratch and not written */
  tpmg_index offset, n;
  tpmg_partition_owned(grid, L, &offset, &n);
  tpmg_index to_global = grid->part[L].first * grid->part[L].plane;
  for (tpmg_index i = offset; i < offset + n; ++i) {
    if (isfinite(b[i]))
      continue;
    char where[64] = "";
    if (grid->part[L].distributed)
      snprintf(where, sizeof where, " (entry %lld of the whole fine level)",
               (long long)(i + to_global));
    return tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                          "setup file '%s': b[%lld] = %g%s: the vector's entries must be finite",
                          path, (long long)i, b[i], where);
  }
  return TPMG_SUCCESS;
}

/* Rank 0: open the file and write the header. */
static tpmg_status write_header(const tpmg_grid *grid, tpmg_rhs rhs, int with_vector,
                                const char *path, setup_writer *w) {
  const tpmg_grid_options *o = &grid->options;
  TPMG_CALL(open_writer(grid->ctx, path, w));
  w->ok = 1;
  /* %.17g gives every double back exactly through strtod */
  const int coefficient = grid->levels[grid->n_levels - 1].coefficient[0] != NULL;
  int version = 1; /* the lowest that holds the problem */
  if (o->reaction != 0.0)
    version = 2;
  if (coefficient)
    version = 3;
  /* graded: every direction's widths, the equal ones too */
  tpmg_index n_widths = 0;
  for (int d = 0; d < o->dim && grid->graded; ++d) n_widths += o->cells[d];
  if (n_widths)
    version = 4;
  fprintf(w->f, "%s %d\ndim %d\ndegree %d\nlevel %d\ncells", SETUP_MAGIC, version, o->dim,
          o->degree, o->fine_level);
  for (int d = 0; d < o->dim; ++d)
    fprintf(w->f, " %d", o->cells[d]);
  fprintf(w->f, "\nbox");
  for (int j = 0; j < 2 * o->dim; ++j)
    fprintf(w->f, " %.17g", o->box[j]);
  fprintf(w->f, "\nrhs %s\n", tpmg_rhs_name(rhs));
  if (o->reaction != 0.0)
    fprintf(w->f, "reaction %.17g\n", o->reaction);
  if (with_vector)
    fprintf(w->f, "vector %lld\n", (long long)grid->global[grid->n_levels - 1].n_dofs);
  else
    fprintf(w->f, "vector none\n");
  if (coefficient)
    fprintf(w->f, "coefficient %s %lld\n", layout_names[grid->coefficient_layout],
            (long long)coefficient_count(grid, grid->coefficient_layout));
  if (n_widths)
    fprintf(w->f, "widths %lld\n", (long long)n_widths);
  fprintf(w->f, "end\n");
  for (int d = 0; d < o->dim && n_widths; ++d) {
    /* a direction of equal cells: its widths written out (as the grid took them) */
    double *equal = o->cell_widths[d] ? NULL : malloc(sizeof(double) * (size_t)o->cells[d]);
    TPMG_CHECK(grid->ctx, o->cell_widths[d] || equal, TPMG_ERROR_MEMORY,
               "setup file '%s': %d widths", path, o->cells[d]);
    for (int i = 0; equal && i < o->cells[d]; ++i)
      equal[i] = (o->box[2 * d + 1] - o->box[2 * d]) / (double)o->cells[d];
    if (w->ok && !write_vector(w->f, o->cells[d], equal ? equal : o->cell_widths[d])) {
      w->ok = 0;
      w->error = errno;
    }
    free(equal);
  }
  if (ferror(w->f)) {
    w->ok = 0;
    w->error = errno;
  }
  return TPMG_SUCCESS;
}

/* Rank 0 writes n doubles unless writing failed before. */
static void write_doubles(setup_writer *w, tpmg_index n, const double *x) {
  if (w->ok && !write_vector(w->f, n, x)) {
    w->ok = 0;
    w->error = errno;
  }
}

/* The next `count` doubles of this rank's part for writing or sending: in
 * place where the part is host memory; else downloaded from backend memory
 * into w->block. A failed download is kept in *status and the block still
 * goes out (so that no rank waits forever for it); the write fails later. */
static const double *part_block(const tpmg_grid *grid, const void *part, int backend,
                                tpmg_index start, tpmg_index count, setup_writer *w,
                                tpmg_status *status) {
  const double *src = (const double *)part + start;
  if (!backend)
    return src;
  tpmg_status s =
      grid->ctx->ops->download(grid->ctx, w->block, src, (size_t)count * sizeof(double));
  if (s != TPMG_SUCCESS && *status == TPMG_SUCCESS)
    *status = s;
  return w->block;
}

/* Every rank's n doubles of `part` in rank order (the vector's owned planes:
 * the whole fine level in lexicographic order; the coefficient's owned
 * cells: the whole level's values in order): rank 0 writes its own, then
 * receives each other rank's in blocks of SETUP_BLOCK doubles and writes
 * them, so that it never holds more than one block of another rank's. `part`
 * is host memory, or backend memory (backend != 0) that goes out in blocks
 * through w->block. After an I/O error rank 0 keeps receiving, so that no
 * rank waits forever. `whole`: the finest level is not distributed (every
 * rank holds all of it), rank 0 writes it alone. */
static tpmg_status write_gathered(const tpmg_grid *grid, tpmg_index n, const void *part,
                                  int backend, setup_writer *w) {
  tpmg_context *ctx = grid->ctx;
  const int whole = !grid->part[grid->n_levels - 1].distributed || ctx->size == 1;
  tpmg_status status = TPMG_SUCCESS;
  if (ctx->rank != 0 && whole)
    return TPMG_SUCCESS;
  if (ctx->rank == 0 && !backend) {
    write_doubles(w, n, part);
  } else if (ctx->rank == 0) {
    for (tpmg_index start = 0; start < n; start += SETUP_BLOCK) {
      tpmg_index count = n - start < SETUP_BLOCK ? n - start : SETUP_BLOCK;
      write_doubles(w, count, part_block(grid, part, backend, start, count, w, &status));
    }
  } else {
    tpmg_message m = {0, &n, sizeof n, NULL, 0};
    TPMG_CALL(tpmg_comm_host_messages(ctx, 1, &m));
    for (tpmg_index start = 0; start < n; start += SETUP_BLOCK) {
      tpmg_index count = n - start < SETUP_BLOCK ? n - start : SETUP_BLOCK;
      m = (tpmg_message){0, part_block(grid, part, backend, start, count, w, &status),
                         (size_t)count * sizeof(double), NULL, 0};
      TPMG_CALL(tpmg_comm_host_messages(ctx, 1, &m));
    }
    return status;
  }
  for (int q = 1; q < ctx->size && !whole; ++q) {
    tpmg_index n_q = 0; /* the count of q's doubles */
    tpmg_message m = {q, NULL, 0, &n_q, sizeof n_q};
    TPMG_CALL(tpmg_comm_host_messages(ctx, 1, &m));
    for (tpmg_index start = 0; start < n_q; start += SETUP_BLOCK) {
      tpmg_index count = n_q - start < SETUP_BLOCK ? n_q - start : SETUP_BLOCK;
      m = (tpmg_message){q, NULL, 0, w->block, (size_t)count * sizeof(double)};
      TPMG_CALL(tpmg_comm_host_messages(ctx, 1, &m));
      write_doubles(w, count, w->block);
    }
  }
  return status;
}

tpmg_status tpmg_setup_write(const tpmg_grid *grid, tpmg_rhs rhs, const double *b,
                             const char *path) {
  if (!grid)
    return TPMG_ERROR_ARGUMENT;
  tpmg_context *ctx = grid->ctx;
  const int L = grid->n_levels - 1;
  const int gathered = grid->part[L].distributed && ctx->size > 1;
  TPMG_CALL(tpmg_comm_agree(ctx, check_write(grid, rhs, b, path)));
  /* rank 0 writes its rhs and expects planes from every rank if it has a b */
  int same[2] = {(int)rhs, b != NULL};
  TPMG_CALL(tpmg_comm_same(ctx, same, sizeof same,
                           "tpmg_setup_write: the right-hand side and whether b is NULL"));
  tpmg_index offset, n, n_coefficient;
  tpmg_partition_owned(grid, L, &offset, &n);
  const void *coefficient;
  tpmg_coefficient_owned(grid, &coefficient, &n_coefficient);

  setup_writer w = {NULL, 0, 0, 0, NULL, NULL, NULL};
  tpmg_status status = TPMG_SUCCESS;
  /* the block: rank 0 receives other ranks' blocks in it; every rank that
   * writes or sends its coefficient takes it from backend memory through it */
  if ((ctx->rank == 0 && ((b && gathered) || coefficient)) || (gathered && coefficient)) {
    w.block = malloc(sizeof(double) * SETUP_BLOCK);
    if (!w.block)
      status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                              "setup file '%s': allocating a block of %d doubles failed", path,
                              SETUP_BLOCK);
  }
  if (ctx->rank == 0 && status == TPMG_SUCCESS)
    status = write_header(grid, rhs, b != NULL, path, &w);
  status = tpmg_comm_agree(ctx, status);
  int agreed = status != TPMG_SUCCESS; /* a failure every rank reports alike already */
  if (!agreed) {
    if (b)
      status = write_gathered(grid, n, b + offset, 0, &w);
    if (coefficient) { /* every rank takes part whatever failed before: none waits forever */
      tpmg_status s = write_gathered(grid, n_coefficient, coefficient, 1, &w);
      if (status == TPMG_SUCCESS)
        status = s;
    }
    /* before rank 0 replaces the file with it */
    status = tpmg_comm_agree(ctx, status);
    agreed = status != TPMG_SUCCESS;
  }
  if (ctx->rank == 0 && w.f) {
    /* on the disk before it replaces the old file */
    if (w.ok && (fflush(w.f) != 0 || fsync(fileno(w.f)) != 0)) {
      w.ok = 0;
      w.error = errno;
    }
    if (fclose(w.f) != 0 && w.ok) {
      w.ok = 0;
      w.error = errno;
    }
    if (status == TPMG_SUCCESS && w.ok && rename(w.temporary, w.target) != 0) {
      w.ok = 0;
      w.error = errno;
    }
    if (status == TPMG_SUCCESS && !w.ok)
      status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                              "setup file '%s': writing it failed: %s (%s)", path,
                              strerror(w.error),
                              w.replaces ? "the file is left as it was" : "no file was written");
  }
  if (ctx->rank == 0 && w.temporary && status != TPMG_SUCCESS) remove(w.temporary);
  free(w.target);
  free(w.temporary);
  free(w.block);
  return agreed ? status : tpmg_comm_agree(ctx, status);
}

/* ---- reading ----------------------------------------------------------- */

typedef struct {
  tpmg_context *ctx;
  const char *path;
  FILE *f;
  int line;                        /* number of the line last read */
  char text[SETUP_LINE_MAX + 1];   /* that line, without its newline */
  char *tokens[SETUP_TOKENS_MAX];  /* its words, split at spaces (into text) */
  int n_tokens;
  char values[N_KEYS][SETUP_LINE_MAX + 1]; /* each key's line, kept for parsing */
  int key_line[N_KEYS];            /* where each key was found, 0 if not yet */
} setup_reader;

/* Set the message "setup file '<path>': <format...>" and return status. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static tpmg_status
setup_fail(const setup_reader *r, tpmg_status status, int source_line, const char *format, ...) {
  char what[768];
  va_list args;
  va_start(args, format);
  vsnprintf(what, sizeof what, format, args);
  va_end(args);
  return tpmg_error_set(r->ctx, status, __FILE__, source_line, "setup file '%s': %s", r->path,
                        what);
}
#define SETUP_FAIL(r, status, ...) setup_fail((r), (status), __LINE__, __VA_ARGS__)

/* The next header line into r->text: printable ASCII, at most SETUP_LINE_MAX
 * characters, ended by a newline. */
static tpmg_status read_line(setup_reader *r) {
  size_t length = 0;
  r->line += 1;
  for (;;) {
    int c = getc(r->f);
    if (c == EOF) {
      if (ferror(r->f))
        return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "reading line %d failed: %s", r->line,
                          strerror(errno));
      if (r->line == 1 && length == 0)
        return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                          "the file is empty; a setup file begins with '%s %d'", SETUP_MAGIC,
                          SETUP_VERSION);
      if (length == 0)
        return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                          "the file ends at line %d, before the header's 'end' line: truncated",
                          r->line);
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "line %d ends without a newline, before the header's 'end' line: "
                        "truncated",
                        r->line);
    }
    if (c == '\n') break;
    if (c < 0x20 || c > 0x7e) {
      if (r->line == 1)
        return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                          "not a tpmg setup file: line 1 holds the byte 0x%02x; a setup file "
                          "begins with the text line '%s %d'",
                          (unsigned)c, SETUP_MAGIC, SETUP_VERSION);
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "line %d: the byte 0x%02x at column %zu is not printable ASCII (the "
                        "header is text; binary data may follow only its 'end' line)",
                        r->line, (unsigned)c, length + 1);
    }
    if (length == SETUP_LINE_MAX) {
      if (r->line == 1)
        return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                          "not a tpmg setup file: line 1 is longer than %d characters; a setup "
                          "file begins with the line '%s %d'",
                          SETUP_LINE_MAX, SETUP_MAGIC, SETUP_VERSION);
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d is longer than %d characters", r->line,
                        SETUP_LINE_MAX);
    }
    r->text[length++] = (char)c;
  }
  r->text[length] = '\0';
  return TPMG_SUCCESS;
}

/* Split text (modified) into the words between spaces. Returns the count, or
 * SETUP_TOKENS_MAX + 1 if there are more words than SETUP_TOKENS_MAX. */
static int split(char *text, char **tokens) {
  int count = 0;
  char *p = text;
  for (;;) {
    while (*p == ' ') ++p;
    if (*p == '\0') return count;
    if (count == SETUP_TOKENS_MAX) return SETUP_TOKENS_MAX + 1;
    tokens[count++] = p;
    while (*p != ' ' && *p != '\0') ++p;
    if (*p == ' ') *p++ = '\0';
  }
}

/* The whole of text as a decimal integer in [min, max]. */
static int parse_integer(const char *text, long long min, long long max, long long *value) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v < min || v > max) return 0;
  *value = v;
  return 1;
}

/* The whole of text as a number (finiteness is the grid's check). */
static int parse_double(const char *text, double *value) {
  char *end = NULL;
  double v = strtod(text, &end);
  if (end == text || *end != '\0') return 0;
  *value = v;
  return 1;
}

/* Split the stored line of `key` into r->tokens and check that it has `count`
 * values after the key. */
static tpmg_status key_values(setup_reader *r, int key, int count, const char *what) {
  r->n_tokens = split(r->values[key], r->tokens);
  if (r->n_tokens > SETUP_TOKENS_MAX)
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d: '%s' needs %s, got more than %d values",
                      r->key_line[key], key_names[key], what, SETUP_TOKENS_MAX - 1);
  if (r->n_tokens != count + 1)
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d: '%s' needs %s, got %d value%s",
                      r->key_line[key], key_names[key], what, r->n_tokens - 1,
                      r->n_tokens == 2 ? "" : "s");
  return TPMG_SUCCESS;
}

/* An int-valued key: one integer (its range is the grid's check). */
static tpmg_status key_int(setup_reader *r, int key, int *value) {
  TPMG_CALL(key_values(r, key, 1, "one integer"));
  long long v = 0;
  if (!parse_integer(r->tokens[1], INT32_MIN, INT32_MAX, &v))
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d: %s '%s': expected an integer",
                      r->key_line[key], key_names[key], r->tokens[1]);
  *value = (int)v;
  return TPMG_SUCCESS;
}

/* The first line, then "key value..." lines until "end": every key once. */
static tpmg_status read_header(setup_reader *r) {
  TPMG_CALL(read_line(r));
  char first[SETUP_LINE_MAX + 1];
  memcpy(first, r->text, sizeof first);
  r->n_tokens = split(r->text, r->tokens);
  if (r->n_tokens < 1 || strcmp(r->tokens[0], SETUP_MAGIC) != 0)
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                      "not a tpmg setup file: line 1 is '%.60s', expected '%s %d'", first,
                      SETUP_MAGIC, SETUP_VERSION);
  long long version = 0;
  if (r->n_tokens != 2 || !parse_integer(r->tokens[1], 0, INT32_MAX, &version))
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                      "line 1 is '%.60s', expected '%s <version>' with an integer version",
                      first, SETUP_MAGIC);
  if (version < 1 || version > SETUP_VERSION)
    return SETUP_FAIL(r, TPMG_ERROR_UNSUPPORTED,
                      "format version %lld is not supported: this tpmg reads versions 1 to %d",
                      version, SETUP_VERSION);

  for (;;) {
    TPMG_CALL(read_line(r));
    char line[SETUP_LINE_MAX + 1];
    memcpy(line, r->text, sizeof line);
    r->n_tokens = split(r->text, r->tokens);
    if (r->n_tokens == 0)
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d is blank; expected a key or 'end'",
                        r->line);
    if (strcmp(r->tokens[0], "end") == 0) {
      if (r->n_tokens != 1)
        return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d: 'end' takes no value: '%.60s'",
                          r->line, line);
      break;
    }
    int key = 0;
    while (key < N_KEYS && strcmp(r->tokens[0], key_names[key]) != 0) ++key;
    if (key == N_KEYS)
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "line %d: unknown key '%.40s' (the keys are dim, degree, level, cells, "
                        "box, rhs, vector, reaction, coefficient, widths, and 'end' closes the "
                        "header)",
                        r->line, r->tokens[0]);
    const int needs = key == KEY_WIDTHS        ? 4
                      : key == KEY_COEFFICIENT ? 3
                      : key == KEY_REACTION    ? 2
                                               : 1;
    if (version < needs)
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "line %d: the key '%s' needs format version %d, the file says %lld",
                        r->line, key_names[key], needs, version);
    if (r->key_line[key])
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d: duplicate key '%s' (first on line %d)",
                        r->line, key_names[key], r->key_line[key]);
    r->key_line[key] = r->line;
    memcpy(r->values[key], line, sizeof line);
  }
  for (int key = 0; key < N_KEYS; ++key)
    if (!r->key_line[key] && key != KEY_REACTION && key != KEY_COEFFICIENT && key != KEY_WIDTHS)
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "missing key '%s' (the header ends at line %d)",
                        key_names[key], r->line);
  return TPMG_SUCCESS;
}

/* The grid options, the problem, the announced vector length (-1: none), the
 * coefficient's layout (-1: none) and its number of values. */
static tpmg_status parse_header(setup_reader *r, tpmg_grid_options *o, tpmg_rhs *rhs,
                                long long *n_vector, int *layout, long long *n_coefficient) {
  *o = tpmg_grid_options_default();
  TPMG_CALL(key_int(r, KEY_DIM, &o->dim));
  if (o->dim != 2 && o->dim != 3)
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d: dim %d: must be 2 or 3",
                      r->key_line[KEY_DIM], o->dim);
  TPMG_CALL(key_int(r, KEY_DEGREE, &o->degree));
  TPMG_CALL(key_int(r, KEY_LEVEL, &o->fine_level));

  const char *counts[2][2] = {{"2 cell counts for dim 2", "3 cell counts for dim 3"},
                              {"4 numbers a0 b0 a1 b1 for dim 2",
                               "6 numbers a0 b0 a1 b1 a2 b2 for dim 3"}};
  TPMG_CALL(key_values(r, KEY_CELLS, o->dim, counts[0][o->dim - 2]));
  for (int d = 0; d < o->dim; ++d) {
    long long v = 0;
    if (!parse_integer(r->tokens[1 + d], INT32_MIN, INT32_MAX, &v))
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d: cells: '%s' is not an integer",
                        r->key_line[KEY_CELLS], r->tokens[1 + d]);
    o->cells[d] = (int)v;
  }
  TPMG_CALL(key_values(r, KEY_BOX, 2 * o->dim, counts[1][o->dim - 2]));
  for (int j = 0; j < 2 * o->dim; ++j)
    if (!parse_double(r->tokens[1 + j], &o->box[j]))
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d: box: '%s' is not a number",
                        r->key_line[KEY_BOX], r->tokens[1 + j]);

  TPMG_CALL(key_values(r, KEY_RHS, 1, "one of 'one', 'sine', 'ones'"));
  if (tpmg_rhs_from_name(r->tokens[1], rhs) != TPMG_SUCCESS)
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                      "line %d: rhs '%s': expected one of 'one', 'sine', 'ones'",
                      r->key_line[KEY_RHS], r->tokens[1]);

  if (r->key_line[KEY_REACTION]) {
    TPMG_CALL(key_values(r, KEY_REACTION, 1, "one number"));
    if (!parse_double(r->tokens[1], &o->reaction))
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "line %d: reaction: '%s' is not a number",
                        r->key_line[KEY_REACTION], r->tokens[1]);
  }

  *layout = -1;
  *n_coefficient = 0;
  if (r->key_line[KEY_COEFFICIENT]) {
    TPMG_CALL(
        key_values(r, KEY_COEFFICIENT, 2, "'cells' or 'quadrature' and the number of values"));
    int l = 0;
    while (l < 2 && strcmp(r->tokens[1], layout_names[l]) != 0)
      ++l;
    if (l == 2)
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "line %d: coefficient '%s': expected 'cells' or 'quadrature'",
                        r->key_line[KEY_COEFFICIENT], r->tokens[1]);
    if (!parse_integer(r->tokens[2], 0, INT64_MAX, n_coefficient))
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "line %d: coefficient %s '%s': expected the number of values",
                        r->key_line[KEY_COEFFICIENT], layout_names[l], r->tokens[2]);
    *layout = l;
  }

  TPMG_CALL(key_values(r, KEY_VECTOR, 1, "'none' or the number of entries"));
  *n_vector = -1;
  if (strcmp(r->tokens[1], "none") != 0 && !parse_integer(r->tokens[1], 0, INT64_MAX, n_vector))
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                      "line %d: vector '%s': expected 'none' or the number of entries",
                      r->key_line[KEY_VECTOR], r->tokens[1]);
  /* tpmg_problem_rhs makes no right-hand side for it (as tpmg_setup_write refuses it) */
  if (*layout >= 0 && *rhs == TPMG_RHS_SINE && *n_vector < 0)
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                      "line %d: rhs sine with a coefficient (line %d) needs the right-hand side "
                      "vector, but line %d says 'vector none'",
                      r->key_line[KEY_RHS], r->key_line[KEY_COEFFICIENT], r->key_line[KEY_VECTOR]);
  return TPMG_SUCCESS;
}

/* The n doubles of a block, the vector (key KEY_VECTOR) or the coefficient
 * (KEY_COEFFICIENT, per_cell values per cell), from its entry `first` on (the
 * file positioned there), into dst if not NULL, else only checked: the
 * vector's entries finite, the coefficient's values finite and within
 * [TPMG_MIN_COEFFICIENT, TPMG_MAX_COEFFICIENT]. `total`: the block's
 * length, `before`: the bytes after the 'end' line before it (messages). */
static tpmg_status read_block(setup_reader *r, int key, int per_cell, tpmg_index first,
                              tpmg_index n, tpmg_index total, long long before, double *dst) {
  double chunk[SETUP_CHUNK];
  const int swap = !host_is_little_endian(), vector = key == KEY_VECTOR;
  for (tpmg_index start = 0; start < n; start += SETUP_CHUNK) {
    size_t count = (size_t)(n - start < SETUP_CHUNK ? n - start : SETUP_CHUNK);
    double *x = dst ? dst + start : chunk;
    size_t got = fread(x, 1, count * sizeof(double), r->f);
    if (got != count * sizeof(double)) {
      if (ferror(r->f))
        return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "reading the %s failed: %s", key_names[key],
                          strerror(errno));
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "the %s is truncated: line %d announces %lld %s (%lld bytes), but only "
                        "%lld bytes follow %s",
                        key_names[key], r->key_line[key], (long long)total,
                        vector ? "doubles" : "values", (long long)total * 8,
                        (long long)(first + start) * 8 + (long long)got,
                        before > 0 ? "the vector" : "the 'end' line");
    }
    if (swap)
      swap_bytes(count, x);
    for (size_t i = 0; i < count; ++i) {
      const long long index = (long long)(first + start) + (long long)i;
      if (vector && !isfinite(x[i]))
        return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                          "vector entry %lld is %g: the entries must be finite", index, x[i]);
      if (!vector && !(x[i] >= TPMG_MIN_COEFFICIENT && x[i] <= TPMG_MAX_COEFFICIENT))
        return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                          "coefficient value %lld (cell %lld, point %lld) is %g: the values must "
                          "be finite and within [%g, %g]",
                          index, index / per_cell, index % per_cell, x[i], TPMG_MIN_COEFFICIENT,
                          TPMG_MAX_COEFFICIENT);
    }
  }
  return TPMG_SUCCESS;
}

/* The file ends after the last block (the file positioned there). */
static tpmg_status check_end(setup_reader *r, long long n_vector, int layout,
                             long long n_coefficient) {
  if (getc(r->f) != EOF) {
    if (layout >= 0)
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "extra data after the coefficient's %lld values (announced on line %d)",
                        n_coefficient, r->key_line[KEY_COEFFICIENT]);
    if (n_vector < 0)
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "extra data after the 'end' line, but line %d says 'vector none'",
                        r->key_line[KEY_VECTOR]);
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                      "extra data after the vector's %lld doubles (announced on line %d)", n_vector,
                      r->key_line[KEY_VECTOR]);
  }
  if (ferror(r->f))
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "reading the file's end failed: %s",
                      strerror(errno));
  return TPMG_SUCCESS;
}

/* Seek to the byte `offset` after the 'end' line (at `position`). */
static tpmg_status seek(setup_reader *r, off_t position, long long offset, const char *what) {
  if (position < 0 || fseeko(r->f, position + (off_t)offset, SEEK_SET) != 0)
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "cannot seek to this rank's part of the %s: %s", what,
                      strerror(errno));
  return TPMG_SUCCESS;
}

/* After the header: this rank's planes of the vector, checked, into *vector
 * (allocated here) if b is wanted; this rank's owned cells' coefficient
 * values (layout >= 0), checked, into *values (allocated here); the file's
 * end by the rank whose part ends the data. */
static tpmg_status read_data(setup_reader *r, const tpmg_grid *g, long long n_vector, int layout,
                             long long n_coefficient, int want, double **vector, double **values) {
  int L = g->n_levels - 1;
  const tpmg_part *part = &g->part[L];
  tpmg_index n = g->global[L].n_dofs;
  if (n_vector >= 0 && n_vector != (long long)n)
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                      "line %d: vector %lld: the grid's fine level %d has %lld DoFs",
                      r->key_line[KEY_VECTOR], n_vector, g->options.fine_level, (long long)n);
  const tpmg_coefficient_layout l = (tpmg_coefficient_layout)layout;
  const long long per_cell =
      layout >= 0 ? coefficient_count(g, l) / coefficient_count(g, TPMG_COEFFICIENT_CELLS) : 1;
  if (layout >= 0 && n_coefficient != (long long)coefficient_count(g, l))
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                      "line %d: coefficient %s %lld: the grid's fine level %d has %lld cells, "
                      "%lld value%s each: %lld values",
                      r->key_line[KEY_COEFFICIENT], layout_names[layout], n_coefficient,
                      g->options.fine_level,
                      (long long)coefficient_count(g, TPMG_COEFFICIENT_CELLS), per_cell,
                      per_cell == 1 ? "" : "s", (long long)coefficient_count(g, l));
  /* the file must hold the data before they are allocated: a short file may
   * announce gigabytes */
  const long long vector_bytes = n_vector > 0 ? n_vector * 8 : 0;
  const long long coefficient_bytes = layout >= 0 ? n_coefficient * 8 : 0;
  struct stat info;
  off_t position = ftello(r->f);
  if (fstat(fileno(r->f), &info) == 0 && position >= 0 && S_ISREG(info.st_mode)) {
    const long long after = (long long)info.st_size - position;
    if (after < vector_bytes)
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "the vector is truncated: line %d announces %lld doubles (%lld bytes), "
                        "but only %lld bytes follow the 'end' line",
                        r->key_line[KEY_VECTOR], (long long)n, (long long)n * 8, after);
    if (after - vector_bytes < coefficient_bytes)
      return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "the coefficient is truncated: line %d announces %lld values (%lld "
                        "bytes), but only %lld bytes follow %s",
                        r->key_line[KEY_COEFFICIENT], n_coefficient, coefficient_bytes,
                        after - vector_bytes, n_vector > 0 ? "the vector" : "the 'end' line");
  }
  int last = 1; /* this rank's part ends the data: it checks the file's end */
  if (n_vector >= 0) {
    /* this rank's planes, ghosts included (the whole vector on one process) */
    tpmg_index first = part->first * part->plane, count = part->count * part->plane;
    if (want) {
      *vector = malloc(sizeof(double) * (size_t)count);
      if (!*vector)
        return SETUP_FAIL(r, TPMG_ERROR_MEMORY, "allocating the vector of %lld doubles failed",
                          (long long)count);
    }
    if (first > 0)
      TPMG_CALL(seek(r, position, (long long)first * 8, "vector"));
    TPMG_CALL(read_block(r, KEY_VECTOR, 1, first, count, n, 0, *vector));
    last = first + count == n;
  }
  if (layout >= 0) {
    /* this rank's owned cells, as tpmg_grid_set_coefficient takes them */
    const tpmg_index layer = coefficient_count(g, l) / part->cells;
    const tpmg_index first = part->cell_first * layer;
    const tpmg_index count = (part->cell_end - part->cell_first) * layer;
    *values = malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));
    if (!*values)
      return SETUP_FAIL(r, TPMG_ERROR_MEMORY, "allocating the coefficient's %lld values failed",
                        (long long)count);
    TPMG_CALL(seek(r, position, vector_bytes + (long long)first * 8, "coefficient"));
    TPMG_CALL(read_block(r, KEY_COEFFICIENT, (int)per_cell, first, count, n_coefficient,
                         vector_bytes, *values));
    last = part->cell_end == part->cells;
  }
  return last ? check_end(r, n_vector, layout, n_coefficient) : TPMG_SUCCESS;
}

/* The 'widths N' line's N doubles right after the 'end' line, into *widths
 * (allocated here), and o->cell_widths pointing into them. */
static tpmg_status read_widths(setup_reader *r, tpmg_grid_options *o, double **widths) {
  TPMG_CALL(key_values(r, KEY_WIDTHS, 1, "the number of widths"));
  long long n = 0, expected = 0;
  for (int d = 0; d < o->dim; ++d) expected += o->cells[d];
  if (!parse_integer(r->tokens[1], 0, INT32_MAX, &n) || n != expected)
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                      "line %d: widths '%s': expected %lld, the cells' count over the directions",
                      r->key_line[KEY_WIDTHS], r->tokens[1], expected);
  *widths = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!*widths)
    return SETUP_FAIL(r, TPMG_ERROR_MEMORY, "allocating %lld widths failed", n);
  if (fread(*widths, sizeof(double), (size_t)n, r->f) != (size_t)n)
    return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                      "the widths are truncated: line %d announces %lld doubles",
                      r->key_line[KEY_WIDTHS], n);
  if (!host_is_little_endian()) swap_bytes((size_t)n, *widths);
  for (int d = 0, at = 0; d < o->dim; at += o->cells[d], ++d) o->cell_widths[d] = *widths + at;
  return TPMG_SUCCESS;
}

/* Open r->path for reading: a regular file only. Opened without blocking
 * (a pipe without a writer would block forever), then checked. */
static tpmg_status open_reader(setup_reader *r) {
  int fd = open(r->path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "cannot open it: %s", strerror(errno));
  struct stat info;
  tpmg_status status = TPMG_SUCCESS;
  int flags = 0;
  if (fstat(fd, &info) != 0)
    status = SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "cannot open it: %s", strerror(errno));
  else if (!S_ISREG(info.st_mode))
    status = SETUP_FAIL(r, TPMG_ERROR_ARGUMENT,
                        "not a regular file (a directory, a device or a pipe): refused");
  else if ((flags = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1 ||
           !(r->f = fdopen(fd, "rb")))
    status = SETUP_FAIL(r, TPMG_ERROR_ARGUMENT, "cannot open it: %s", strerror(errno));
  if (!r->f) close(fd);
  return status;
}

tpmg_status tpmg_setup_read(tpmg_context *ctx, const char *path, tpmg_grid **grid, tpmg_rhs *rhs,
                            double **b) {
  if (!ctx) return TPMG_ERROR_ARGUMENT;
  if (grid)
    *grid = NULL;
  if (b) *b = NULL;
  /* every rank checks its arguments and reads the header itself; the ranks
   * agree on the outcome before the collective tpmg_grid_create */
  tpmg_status status = TPMG_SUCCESS;
  setup_reader *r = NULL;
  if (!grid || !rhs)
    status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__,
                            "NULL argument (grid %p, rhs %p)", (void *)grid, (void *)rhs);
  else if (!path || !path[0])
    status = tpmg_error_set(ctx, TPMG_ERROR_ARGUMENT, __FILE__, __LINE__, "setup file path is %s",
                            path ? "empty" : "NULL");
  else if (!(r = calloc(1, sizeof(*r))))
    status = tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                            "allocating the setup file reader failed");
  tpmg_grid *g = NULL;
  double *vector = NULL;
  tpmg_grid_options options = tpmg_grid_options_default();
  tpmg_rhs problem = TPMG_RHS_ONE;
  long long n_vector = -1, n_coefficient = 0;
  int layout = -1;
  double *values = NULL;
  if (r) {
    r->ctx = ctx;
    r->path = path;
    status = open_reader(r);
    if (status == TPMG_SUCCESS)
      status = read_header(r);
    if (status == TPMG_SUCCESS)
      status = parse_header(r, &options, &problem, &n_vector, &layout, &n_coefficient);
  }
  double *widths = NULL;
  if (status == TPMG_SUCCESS && r->key_line[KEY_WIDTHS])
    status = read_widths(r, &options, &widths);
  status = tpmg_comm_agree(ctx, status);
  if (status != TPMG_SUCCESS) goto done;
  /* the grid options are compared by tpmg_grid_create, the rest here */
  long long rest[4] = {(long long)problem, n_vector, layout, n_coefficient};
  status = tpmg_comm_same(ctx, rest, sizeof rest, "the header's rhs, vector and coefficient lines");
  if (status != TPMG_SUCCESS) {
    char reason[sizeof ctx->error];
    memcpy(reason, ctx->error, sizeof reason);
    status =
        SETUP_FAIL(r, status, "%s (each rank reads the file: do they see the same one?)", reason);
    goto done;
  }

  /* the grid's own checks judge the options */
  status = tpmg_grid_create(ctx, &options, &g);
  if (status != TPMG_SUCCESS) {
    char reason[sizeof ctx->error];
    memcpy(reason, ctx->error, sizeof reason);
    status = SETUP_FAIL(r, status, "the grid it describes is not valid: %s", reason);
    goto done;
  }
  /* the steps after the grid may fail on some ranks only */
  status = tpmg_comm_agree(
      ctx, read_data(r, g, n_vector, layout, n_coefficient, b != NULL, &vector, &values));
  if (status == TPMG_SUCCESS && layout >= 0) {
    status = tpmg_grid_set_coefficient(g, (tpmg_coefficient_layout)layout, values);
    if (status != TPMG_SUCCESS) {
      char reason[sizeof ctx->error];
      memcpy(reason, ctx->error, sizeof reason);
      status = SETUP_FAIL(r, status, "setting the grid's coefficient failed: %s", reason);
    }
  }

done:
  if (r && r->f)
    fclose(r->f);
  free(r);
  free(values);
  free(widths);
  if (status != TPMG_SUCCESS) {
    free(vector);
    tpmg_grid_destroy(&g);
    return status;
  }
  *grid = g;
  *rhs = problem;
  if (b) *b = vector;
  return TPMG_SUCCESS;
}
