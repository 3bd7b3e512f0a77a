/* CPU backend: the vector operations and the coarse-level solve of one scalar
 * type T, behind the function table of tpmg-cpu-backend.c.
 *
 * A template: instantiated by tpmg-cpu-vector-double.c and
 * tpmg-cpu-vector-float.c (see tpmg-cpu.h). */
#ifndef TPMG_CPU_VECTOR_TEMPLATES_H
#define TPMG_CPU_VECTOR_TEMPLATES_H

#ifndef TPMG_CPU_SCALAR
#error "define TPMG_CPU_SCALAR (double or float) before tpmg-cpu-vector-templates.h"
#endif

#include <omp.h>

#include "tpmg-cpu.h"

void TPMG_CPU_NAME(tpmg_cpu_set)(tpmg_context *ctx, tpmg_index n, double value, T *v) {
  const T c = (T)value;
#pragma omp parallel for schedule(static)                                                          \
    num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
  for (tpmg_index i = 0; i < n; ++i)
    v[i] = c;
}

/* y = a x + b y; y is not read when b = 0 (it may hold anything). */
void TPMG_CPU_NAME(tpmg_cpu_axpby)(tpmg_context *ctx, tpmg_index n, double a, const T *restrict x,
                                   double b, T *restrict y) {
  const T ta = (T)a, tb = (T)b;
  if (b == 0) {
#pragma omp parallel for schedule(static)                                                          \
    num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
    for (tpmg_index i = 0; i < n; ++i)
      y[i] = ta * x[i];
  } else {
#pragma omp parallel for schedule(static)                                                          \
    num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
    for (tpmg_index i = 0; i < n; ++i)
      y[i] = ta * x[i] + tb * y[i];
  }
}

/* x . y in double: block j of TPMG_CPU_DOT_BLOCKS covers [j n / B, (j+1) n / B),
 * summed in TPMG_CPU_DOT_LANES interleaved partial sums; the partial sums and
 * then the blocks are added in order. */
double TPMG_CPU_NAME(tpmg_cpu_dot)(tpmg_context *ctx, tpmg_index n, const T *restrict x,
                                   const T *restrict y) {
  double block_sum[TPMG_CPU_DOT_BLOCKS];
#pragma omp parallel for schedule(static)                                                          \
    num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
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
void TPMG_CPU_NAME(tpmg_cpu_dots)(tpmg_context *ctx, tpmg_index n, int m, const T *const *x,
                                  const T *restrict y, double *result) {
  double block_sum[TPMG_CPU_DOT_BLOCKS][TPMG_MULTI_MAX + 1];
#pragma omp parallel for schedule(static)                                                          \
    num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
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

/* y[i] += sum_v ta_v x_v[i] on [begin, end), the x_v float if x_float, else
 * of type T; returns the sum of the new y[i]^2 if norm. Inlined with x_float
 * constant, so that each loop keeps one element type (a test inside the loop
 * made axpys about 1.3-2x slower). A float entry widened to double is exact,
 * so a double y gets the same sums from float x_v as from their double
 * copies. */
TPMG_CPU_INLINE double TPMG_CPU_NAME(axpys_block)(tpmg_index begin, tpmg_index end, int m,
                                                  const T *ta, int x_float, const void *const *x,
                                                  T *restrict y, int norm) {
  const T *const *xt = (const T *const *)x;
  const float *const *xf = (const float *const *)x;
  double sum = 0;
  for (tpmg_index i = begin; i < end; ++i) {
    T value = y[i];
    for (int v = 0; v < m; ++v)
      value += ta[v] * (x_float ? (T)xf[v][i] : xt[v][i]);
    y[i] = value;
    if (norm)
      sum += (double)value * (double)value;
  }
  return sum;
}

/* axpys (see tpmg_backend_ops), over the blocks of dot when norm2 is wanted. */
void TPMG_CPU_NAME(tpmg_cpu_axpys)(tpmg_context *ctx, tpmg_index n, int m, const double *a,
                                   int x_float, const void *const *x, T *restrict y,
                                   double *norm2) {
  T ta[TPMG_MULTI_MAX];
  for (int v = 0; v < m; ++v)
    ta[v] = (T)a[v];
  double block_sum[TPMG_CPU_DOT_BLOCKS];
#pragma omp parallel for schedule(static)                                                          \
    num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
  for (int j = 0; j < TPMG_CPU_DOT_BLOCKS; ++j) {
    const tpmg_index begin = n * j / TPMG_CPU_DOT_BLOCKS, end = n * (j + 1) / TPMG_CPU_DOT_BLOCKS;
    block_sum[j] = x_float ? TPMG_CPU_NAME(axpys_block)(begin, end, m, ta, 1, x, y, norm2 != NULL)
                           : TPMG_CPU_NAME(axpys_block)(begin, end, m, ta, 0, x, y, norm2 != NULL);
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
void TPMG_CPU_NAME(tpmg_cpu_coarse_solve)(tpmg_context *ctx, const tpmg_level *lvl,
                                          tpmg_index n_interior, const T *inverse, const T *b,
                                          T *x) {
  const tpmg_index n0 = lvl->n[0], n1 = lvl->n[1];
  const tpmg_index m0 = n0 - 2, m1 = n1 - 2, m2 = lvl->dim == 3 ? lvl->n[2] - 2 : 1;
  const tpmg_index z0 = lvl->dim == 3 ? 1 : 0;
  T b_interior[TPMG_MAX_COARSE_DOFS];
  for (tpmg_index j2 = 0; j2 < m2; ++j2)
    for (tpmg_index j1 = 0; j1 < m1; ++j1)
      for (tpmg_index j0 = 0; j0 < m0; ++j0)
        b_interior[j0 + m0 * (j1 + m1 * j2)] = b[1 + j0 + n0 * (1 + j1 + n1 * (z0 + j2))];
  memset(x, 0, (size_t)lvl->n_dofs * sizeof(T));
#pragma omp parallel for schedule(static)                                                          \
    num_threads(tpmg_backend_threads(ctx)) if (n_interior > 256)
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
