/* CPU backend: the function table, host memory, vector operations, boundary
 * copies and the coarse-level solve. The level operator, the patch smoother and
 * the grid transfer live in tpmg-cpu-laplace.c, tpmg-cpu-patch.c and
 * tpmg-cpu-transfer.c.
 *
 * This file includes itself once per scalar type (see tpmg-cpu.h). */
#ifndef TPMG_CPU_SCALAR

#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tpmg-cpu.h"

/* Dot products sum this many contiguous blocks, fixed by n alone, one after the
 * other: the result does not depend on the thread count. */
#define TPMG_CPU_DOT_BLOCKS 256
/* Accumulators per block, in a fixed interleaving, so the sum vectorizes. */
#define TPMG_CPU_DOT_LANES 8
/* Vectors shorter than this are handled by one thread. */
#define TPMG_CPU_PARALLEL_MIN 16384

#define TPMG_CPU_SCALAR double
#include "tpmg-cpu-backend.c"
#undef TPMG_CPU_SCALAR
#define TPMG_CPU_SCALAR float
#include "tpmg-cpu-backend.c"
#undef TPMG_CPU_SCALAR

/* What init allocates: the stopwatch's start mark. */
typedef struct {
  double stopwatch_start;
} tpmg_cpu_data;

static tpmg_status cpu_init(tpmg_context *ctx) {
  /* one implementation: no variants */
  if (tpmg_backend_variant(ctx)) return TPMG_ERROR_UNSUPPORTED;
  tpmg_cpu_data *data = calloc(1, sizeof(tpmg_cpu_data));
  if (!data) return TPMG_ERROR_MEMORY;
  tpmg_backend_set_data(ctx, data);
  return TPMG_SUCCESS;
}

static void cpu_finalize(tpmg_context *ctx) {
  free(tpmg_backend_data(ctx));
  tpmg_backend_set_data(ctx, NULL);
}

/* 64-byte aligned host memory, not initialized. */
static tpmg_status cpu_alloc(tpmg_context *ctx, size_t bytes, void **ptr) {
  const size_t alignment = 64;
  size_t rounded = bytes == 0 ? alignment : bytes;
  if (rounded > SIZE_MAX - (alignment - 1))
    return tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                          "cannot allocate %zu bytes of host memory", bytes);
  rounded = (rounded + alignment - 1) / alignment * alignment;
  *ptr = aligned_alloc(alignment, rounded);
  if (!*ptr)
    return tpmg_error_set(ctx, TPMG_ERROR_MEMORY, __FILE__, __LINE__,
                          "allocating %zu bytes of host memory failed", bytes);
  return TPMG_SUCCESS;
}

static void cpu_release(tpmg_context *ctx, void *ptr) {
  free(ptr);
}

static tpmg_status cpu_copy(tpmg_context *ctx, void *dst, const void *src, size_t bytes) {
  if (bytes)
    memcpy(dst, src, bytes);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_synchronize(tpmg_context *ctx) {
  return TPMG_SUCCESS;
}

/* MemAvailable from /proc/meminfo, SIZE_MAX where that cannot be read. */
static tpmg_status cpu_free_memory(tpmg_context *ctx, size_t *bytes) {
  *bytes = SIZE_MAX;
  FILE *file = fopen("/proc/meminfo", "r");
  if (!file)
    return TPMG_SUCCESS;
  char line[256];
  unsigned long long kib;
  while (fgets(line, sizeof(line), file))
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
      if (kib <= SIZE_MAX / 1024)
        *bytes = (size_t)kib * 1024;
      break;
    }
  fclose(file);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_set(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double value,
                           void *v) {
  if (prec == TPMG_FLOAT)
    set_float(ctx, n, value, v);
  else
    set_double(ctx, n, value, v);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_axpby(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double a,
                             const void *x, double b, void *y) {
  if (prec == TPMG_FLOAT)
    axpby_float(ctx, n, a, x, b, y);
  else
    axpby_double(ctx, n, a, x, b, y);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_dot(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, const void *x,
                           const void *y, double *result) {
  *result = prec == TPMG_FLOAT ? dot_float(ctx, n, x, y) : dot_double(ctx, n, x, y);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_dots(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, int m,
                            const void *const *x, const void *y, double *result) {
  if (prec == TPMG_FLOAT)
    dots_float(ctx, n, m, (const float *const *)x, y, result);
  else
    dots_double(ctx, n, m, (const double *const *)x, y, result);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_axpys(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, int m,
                             const double *a, const void *const *x, void *y, double *norm2) {
  if (prec == TPMG_FLOAT)
    axpys_float(ctx, n, m, a, (const float *const *)x, y, norm2);
  else
    axpys_double(ctx, n, m, a, (const double *const *)x, y, norm2);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_convert(tpmg_context *ctx, tpmg_index n, tpmg_precision src_prec,
                               const void *src, tpmg_precision dst_prec, void *dst) {
  if (src_prec == dst_prec) {
    const size_t bytes = (size_t)n * tpmg_precision_size(src_prec);
    if (bytes)
      memcpy(dst, src, bytes);
  } else if (src_prec == TPMG_DOUBLE) {
    const double *s = src;
    float *d = dst;
#pragma omp parallel for schedule(static) num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
    for (tpmg_index i = 0; i < n; ++i)
      d[i] = (float)s[i];
  } else {
    const float *s = src;
    double *d = dst;
#pragma omp parallel for schedule(static) num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
    for (tpmg_index i = 0; i < n; ++i)
      d[i] = s[i];
  }
  return TPMG_SUCCESS;
}

/* dst_B = src_B: whole x-lines on the faces y, z = 0 or max, the two end points
 * of every other line; O(surface), any scalar type. */
tpmg_status tpmg_cpu_copy_boundary(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                   const void *src, void *dst) {
  const size_t size = tpmg_precision_size(prec);
  const tpmg_index n0 = lvl->n[0], n1 = lvl->n[1], n2 = lvl->n[2];
  const int dim = lvl->dim;
  const char *s = src;
  char *d = dst;
#pragma omp parallel for collapse(2) schedule(static)                                              \
    num_threads(tpmg_backend_threads(ctx)) if (n1 * n2 > 1024)
  for (tpmg_index i2 = 0; i2 < n2; ++i2)
    for (tpmg_index i1 = 0; i1 < n1; ++i1) {
      const size_t line = (size_t)(n0 * (i1 + n1 * i2)) * size;
      if (i1 == 0 || i1 == n1 - 1 || (dim == 3 && (i2 == 0 || i2 == n2 - 1))) {
        memcpy(d + line, s + line, (size_t)n0 * size);
      } else {
        memcpy(d + line, s + line, size);
        memcpy(d + line + (size_t)(n0 - 1) * size, s + line + (size_t)(n0 - 1) * size, size);
      }
    }
  return TPMG_SUCCESS;
}

static tpmg_status cpu_coarse_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                    const void *inverse, const void *b, void *x) {
  const tpmg_index n_interior =
      (lvl->n[0] - 2) * (lvl->n[1] - 2) * (lvl->dim == 3 ? lvl->n[2] - 2 : 1);
  if (n_interior > TPMG_MAX_COARSE_DOFS)
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "coarse level has %lld interior DoFs, more than %d",
                          (long long)n_interior, TPMG_MAX_COARSE_DOFS);
  if (prec == TPMG_FLOAT)
    coarse_solve_float(ctx, lvl, n_interior, inverse, b, x);
  else
    coarse_solve_double(ctx, lvl, n_interior, inverse, b, x);
  return TPMG_SUCCESS;
}

/* The wall clock; the CPU backend's work is done when its calls return. */
static tpmg_status cpu_stopwatch(tpmg_context *ctx, int start, double *seconds) {
  tpmg_cpu_data *data = tpmg_backend_data(ctx);
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double t = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
  if (start)
    data->stopwatch_start = t;
  else
    *seconds = t - data->stopwatch_start;
  return TPMG_SUCCESS;
}

/* The loops of tpmg-cpu-laplace.c and tpmg-cpu-patch.c do the dense team
 * kernels' arithmetic, their intermediate tensors in work arrays. */
static tpmg_status cpu_operator_work(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                     tpmg_work *work) {
  tpmg_work_operator(lvl, 0, 1, 0, work);
  work->kernel = "cpu";
  return TPMG_SUCCESS;
}

static tpmg_status cpu_smoother_work(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                     tpmg_smoother_variant variant, tpmg_work *work) {
  tpmg_work apply;
  tpmg_work_operator(lvl, 0, 1, 0, &apply);
  tpmg_work_smoother(lvl, variant, 0, 1, 0, &apply, work);
  work->kernel = "cpu";
  return TPMG_SUCCESS;
}

const tpmg_backend_ops tpmg_cpu_backend = {
    .name = "cpu",
    .memory = TPMG_MEMORY_HOST,
    .init = cpu_init,
    .finalize = cpu_finalize,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_copy,
    .download = cpu_copy,
    .synchronize = cpu_synchronize,
    .free_memory = cpu_free_memory,
    .set = cpu_set,
    .axpby = cpu_axpby,
    .dot = cpu_dot,
    .convert = cpu_convert,
    .dots = cpu_dots,
    .axpys = cpu_axpys,
    .laplace = tpmg_cpu_laplace,
    .copy_boundary = tpmg_cpu_copy_boundary,
    .patch_fused = tpmg_cpu_patch_fused,
    .patch_residual = tpmg_cpu_patch_residual,
    .patch_solve = tpmg_cpu_patch_solve,
    .prolongate_add = tpmg_cpu_prolongate_add,
    .restrict_ = tpmg_cpu_restrict,
    .coarse_solve = cpu_coarse_solve,
    .check_level = NULL,
    .stopwatch = cpu_stopwatch,
    .measure_limits = NULL,
    .operator_work = cpu_operator_work,
    .smoother_work = cpu_smoother_work,
};

#else /* precision-generic part */

#include "tpmg-cpu.h"

static void TPMG_CPU_NAME(set)(tpmg_context *ctx, tpmg_index n, double value, T *v) {
  const T c = (T)value;
#pragma omp parallel for schedule(static) num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
  for (tpmg_index i = 0; i < n; ++i)
    v[i] = c;
}

/* y = a x + b y; y is not read when b = 0 (it may hold anything). */
static void TPMG_CPU_NAME(axpby)(tpmg_context *ctx, tpmg_index n, double a, const T *restrict x,
                                 double b, T *restrict y) {
  const T ta = (T)a, tb = (T)b;
  if (b == 0) {
#pragma omp parallel for schedule(static) num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
    for (tpmg_index i = 0; i < n; ++i)
      y[i] = ta * x[i];
  } else {
#pragma omp parallel for schedule(static) num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
    for (tpmg_index i = 0; i < n; ++i)
      y[i] = ta * x[i] + tb * y[i];
  }
}

/* x . y in double: block j of TPMG_CPU_DOT_BLOCKS covers [j n / B, (j+1) n / B),
 * summed in TPMG_CPU_DOT_LANES interleaved partial sums; the partial sums and
 * then the blocks are added in order. */
static double TPMG_CPU_NAME(dot)(tpmg_context *ctx, tpmg_index n, const T *restrict x,
                                 const T *restrict y) {
  double block_sum[TPMG_CPU_DOT_BLOCKS];
#pragma omp parallel for schedule(static) num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
  for (int j = 0; j < TPMG_CPU_DOT_BLOCKS; ++j) {
    const tpmg_index begin = n * j / TPMG_CPU_DOT_BLOCKS, end = n * (j + 1) / TPMG_CPU_DOT_BLOCKS;
    double lane[TPMG_CPU_DOT_LANES] = {0};
    tpmg_index i = begin;
    for (; i + TPMG_CPU_DOT_LANES <= end; i += TPMG_CPU_DOT_LANES)
      for (int l = 0; l < TPMG_CPU_DOT_LANES; ++l)
        lane[l] += (double)x[i + l] * (double)y[i + l];
    for (int l = 0; i < end; ++i, ++l)
      lane[l] += (double)x[i] * (double)y[i];
    double sum = 0;
    for (int l = 0; l < TPMG_CPU_DOT_LANES; ++l)
      sum += lane[l];
    block_sum[j] = sum;
  }
  double sum = 0;
  for (int j = 0; j < TPMG_CPU_DOT_BLOCKS; ++j)
    sum += block_sum[j];
  return sum;
}

/* dots (see tpmg_backend_ops): the blocks of dot, one sum per vector in each,
 * element by element; the blocks' sums added in order. */
static void TPMG_CPU_NAME(dots)(tpmg_context *ctx, tpmg_index n, int m, const T *const *x,
                                const T *restrict y, double *result) {
  double block_sum[TPMG_CPU_DOT_BLOCKS][TPMG_MULTI_MAX + 1];
#pragma omp parallel for schedule(static) num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
  for (int j = 0; j < TPMG_CPU_DOT_BLOCKS; ++j) {
    const tpmg_index begin = n * j / TPMG_CPU_DOT_BLOCKS, end = n * (j + 1) / TPMG_CPU_DOT_BLOCKS;
    double sum[TPMG_MULTI_MAX + 1] = {0};
    for (tpmg_index i = begin; i < end; ++i) {
      const double yi = y[i];
      for (int v = 0; v < m; ++v)
        sum[v] += (double)x[v][i] * yi;
      sum[m] += yi * yi;
    }
    for (int v = 0; v <= m; ++v)
      block_sum[j][v] = sum[v];
  }
  for (int v = 0; v <= m; ++v) {
    double sum = 0;
    for (int j = 0; j < TPMG_CPU_DOT_BLOCKS; ++j)
      sum += block_sum[j][v];
    result[v] = sum;
  }
}

/* axpys (see tpmg_backend_ops), over the blocks of dot when norm2 is wanted. */
static void TPMG_CPU_NAME(axpys)(tpmg_context *ctx, tpmg_index n, int m, const double *a,
                                 const T *const *x, T *restrict y, double *norm2) {
  T ta[TPMG_MULTI_MAX];
  for (int v = 0; v < m; ++v)
    ta[v] = (T)a[v];
  double block_sum[TPMG_CPU_DOT_BLOCKS];
#pragma omp parallel for schedule(static) num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
  for (int j = 0; j < TPMG_CPU_DOT_BLOCKS; ++j) {
    const tpmg_index begin = n * j / TPMG_CPU_DOT_BLOCKS, end = n * (j + 1) / TPMG_CPU_DOT_BLOCKS;
    double sum = 0;
    for (tpmg_index i = begin; i < end; ++i) {
      T value = y[i];
      for (int v = 0; v < m; ++v)
        value += ta[v] * x[v][i];
      y[i] = value;
      if (norm2)
        sum += (double)value * (double)value;
    }
    block_sum[j] = sum;
  }
  if (norm2) {
    double sum = 0;
    for (int j = 0; j < TPMG_CPU_DOT_BLOCKS; ++j)
      sum += block_sum[j];
    *norm2 = sum;
  }
}

/* x_I = inverse b_I (dense, over the interior DoFs in lexicographic order),
 * x_B = 0. b_I is copied first, so x may alias b. */
static void TPMG_CPU_NAME(coarse_solve)(tpmg_context *ctx, const tpmg_level *lvl,
                                        tpmg_index n_interior, const T *inverse, const T *b, T *x) {
  const tpmg_index n0 = lvl->n[0], n1 = lvl->n[1];
  const tpmg_index m0 = n0 - 2, m1 = n1 - 2, m2 = lvl->dim == 3 ? lvl->n[2] - 2 : 1;
  const tpmg_index z0 = lvl->dim == 3 ? 1 : 0;
  T b_interior[TPMG_MAX_COARSE_DOFS];
  for (tpmg_index j2 = 0; j2 < m2; ++j2)
    for (tpmg_index j1 = 0; j1 < m1; ++j1)
      for (tpmg_index j0 = 0; j0 < m0; ++j0)
        b_interior[j0 + m0 * (j1 + m1 * j2)] = b[1 + j0 + n0 * (1 + j1 + n1 * (z0 + j2))];
  memset(x, 0, (size_t)lvl->n_dofs * sizeof(T));
#pragma omp parallel for schedule(static) num_threads(tpmg_backend_threads(ctx)) if (n_interior > 256)
  for (tpmg_index row = 0; row < n_interior; ++row) {
    const T *restrict a = inverse + row * n_interior;
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (tpmg_index col = 0; col < n_interior; ++col)
      sum += a[col] * b_interior[col];
    const tpmg_index j0 = row % m0, j1 = row / m0 % m1, j2 = row / (m0 * m1);
    x[1 + j0 + n0 * (1 + j1 + n1 * (z0 + j2))] = sum;
  }
}

#endif
