/* CPU backend: the function table, host memory, vector operations and the
 * coarse-level solve (those of one scalar type in tpmg-cpu-vector-templates.h).
 * The level operator, the patch smoother and the grid transfer live in
 * tpmg-cpu-laplace.c, tpmg-cpu-patch.c and tpmg-cpu-transfer.c, the helpers
 * they share in tpmg-cpu-helpers.c. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tpmg-cpu-simd.h"
#include "tpmg-cpu.h"

/* The kernels' width: the variant of the backend's name ("cpu/scalar",
 * "cpu/avx2", "cpu/avx512"), else the environment variable TPMG_CPU_SIMD
 * (scalar, avx2 or avx512) if set, else the widest this processor supports. A
 * variant that is unknown or that the processor lacks is TPMG_ERROR_UNSUPPORTED;
 * so is a width named by TPMG_CPU_SIMD that it lacks, and an unknown one
 * TPMG_ERROR_ARGUMENT. */
static tpmg_status cpu_init(tpmg_context *ctx) {
  static const char *const names[] = {"scalar", "avx2", "avx512"};
  const int n_names = (int)(sizeof(names) / sizeof(names[0]));
  int simd = -1;
  const char *variant = tpmg_backend_variant(ctx), *env = getenv("TPMG_CPU_SIMD");
  const char *name = variant ? variant : env && *env ? env : NULL;
  if (name) {
    for (int s = 0; s < n_names; ++s)
      if (!strcmp(name, names[s]))
        simd = s;
    if (simd < 0)
      return variant ? TPMG_ERROR_UNSUPPORTED : TPMG_ERROR_ARGUMENT;
    if (!tpmg_cpu_simd_supported(simd))
      return TPMG_ERROR_UNSUPPORTED;
  } else {
    for (int s = 0; s < n_names; ++s)
      if (tpmg_cpu_simd_supported(s))
        simd = s;
  }
  tpmg_cpu_data *data = calloc(1, sizeof(tpmg_cpu_data));
  if (!data)
    return TPMG_ERROR_MEMORY;
  data->simd = simd;
  tpmg_backend_set_data(ctx, data);
  return TPMG_SUCCESS;
}

static void cpu_finalize(tpmg_context *ctx) {
  free(tpmg_backend_data(ctx));
  tpmg_backend_set_data(ctx, NULL);
}

/* Zero the block with the context's threads, each its contiguous share as
 * the kernels' static schedules split vectors. Until a page is first written
 * it uses no memory: untouched blocks would let resident memory stay far
 * below what tpmg_context_memory counts, and the checks against the host's
 * available memory (cpu_free_memory) would not see them. The first write also
 * places each page on the NUMA node of the thread that will use it. */
static void first_touch(tpmg_context *ctx, char *block, size_t bytes) {
  const size_t page = 4096, pages = (bytes + page - 1) / page;
  const int threads = tpmg_backend_threads(ctx);
#pragma omp parallel num_threads(threads) if (pages >= 64)
  {
    const size_t t = (size_t)omp_get_thread_num(), n = (size_t)omp_get_num_threads();
    const size_t first = pages * t / n * page, end = pages * (t + 1) / n * page;
    if (first < bytes)
      memset(block + first, 0, (end < bytes ? end : bytes) - first);
  }
}

/* 64-byte aligned host memory, zero (first_touch). */
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
  first_touch(ctx, *ptr, rounded);
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

/* The host's available memory: allocations are touched at once (cpu_alloc),
 * so it falls with every one and the next check sees them. */
static tpmg_status cpu_free_memory(tpmg_context *ctx, size_t *bytes) {
  return tpmg_host_available(bytes);
}

static tpmg_status cpu_set(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double value,
                           void *v) {
  if (prec == TPMG_FLOAT)
    tpmg_cpu_set_float(ctx, n, value, v);
  else
    tpmg_cpu_set_double(ctx, n, value, v);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_axpby(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double a,
                             const void *x, double b, void *y) {
  if (prec == TPMG_FLOAT)
    tpmg_cpu_axpby_float(ctx, n, a, x, b, y);
  else
    tpmg_cpu_axpby_double(ctx, n, a, x, b, y);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_dot(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, const void *x,
                           const void *y, double *result) {
  *result =
      prec == TPMG_FLOAT ? tpmg_cpu_dot_float(ctx, n, x, y) : tpmg_cpu_dot_double(ctx, n, x, y);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_dots(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, int m,
                            const void *const *x, const void *y, double *result) {
  if (prec == TPMG_FLOAT)
    tpmg_cpu_dots_float(ctx, n, m, (const float *const *)x, y, result);
  else
    tpmg_cpu_dots_double(ctx, n, m, (const double *const *)x, y, result);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_axpys(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, int m,
                             const double *a, tpmg_precision x_prec, const void *const *x, void *y,
                             double *norm2) {
  if (prec == TPMG_FLOAT)
    tpmg_cpu_axpys_float(ctx, n, m, a, 1, x, y, norm2);
  else
    tpmg_cpu_axpys_double(ctx, n, m, a, x_prec == TPMG_FLOAT, x, y, norm2);
  return TPMG_SUCCESS;
}

static tpmg_status cpu_convert(tpmg_context *ctx, tpmg_index n, tpmg_precision src_prec,
                               const void *src, tpmg_precision dst_prec, void *dst) {
  if (src_prec == dst_prec) {
    /* in TPMG_CPU_DOT_BLOCKS pieces on all threads: a STREAM-like copy */
    const size_t size = tpmg_precision_size(src_prec);
    const char *s = src;
    char *d = dst;
#pragma omp parallel for schedule(static)                                                          \
    num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
    for (int j = 0; j < TPMG_CPU_DOT_BLOCKS; ++j) {
      const tpmg_index begin = n * j / TPMG_CPU_DOT_BLOCKS, end = n * (j + 1) / TPMG_CPU_DOT_BLOCKS;
      if (end > begin)
        memcpy(d + (size_t)begin * size, s + (size_t)begin * size, (size_t)(end - begin) * size);
    }
  } else if (src_prec == TPMG_DOUBLE) {
    const double *s = src;
    float *d = dst;
#pragma omp parallel for schedule(static)                                                          \
    num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
    for (tpmg_index i = 0; i < n; ++i)
      d[i] = (float)s[i];
  } else {
    const float *s = src;
    double *d = dst;
#pragma omp parallel for schedule(static)                                                          \
    num_threads(tpmg_backend_threads(ctx)) if (n > TPMG_CPU_PARALLEL_MIN)
    for (tpmg_index i = 0; i < n; ++i)
      d[i] = s[i];
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
    tpmg_cpu_coarse_solve_float(ctx, lvl, n_interior, inverse, b, x);
  else
    tpmg_cpu_coarse_solve_double(ctx, lvl, n_interior, inverse, b, x);
  return TPMG_SUCCESS;
}

static double cpu_wall_clock(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* The wall clock; the CPU backend's work is done when its calls return. */
static tpmg_status cpu_stopwatch(tpmg_context *ctx, int start, double *seconds) {
  tpmg_cpu_data *data = tpmg_backend_data(ctx);
  const double t = cpu_wall_clock();
  if (start)
    data->stopwatch_start = t;
  else
    *seconds = t - data->stopwatch_start;
  return TPMG_SUCCESS;
}

/* ---- the limits for benchmarks ----------------------------------------- */

/* Independent FMA chains per thread: enough to cover the FMA latency (4 cycles
 * on Zen 4 and Intel cores) times the FMA units (2). */
#define TPMG_CPU_FMA_CHAINS 12
#define TPMG_CPU_FMA_ITERATIONS 10000000

/* The FMA loop of one thread at one width: TPMG_CPU_FMA_CHAINS lane vectors
 * acc = acc * m + a, `iterations` times; returns a sum of the results so that
 * the loop is kept. */
#define TPMG_CPU_FMA_LOOP(name, type, bytes, attributes)                                           \
  attributes static double name(long iterations, type m, type a) {                                 \
    typedef type vec __attribute__((vector_size(bytes)));                                          \
    vec acc[TPMG_CPU_FMA_CHAINS];                                                                  \
    for (int c = 0; c < TPMG_CPU_FMA_CHAINS; ++c)                                                  \
      acc[c] = (vec){0} + (type)c;                                                                 \
    for (long i = 0; i < iterations; ++i)                                                          \
      for (int c = 0; c < TPMG_CPU_FMA_CHAINS; ++c)                                                \
        acc[c] = acc[c] * m + a;                                                                   \
    double sum = 0;                                                                                \
    for (int c = 0; c < TPMG_CPU_FMA_CHAINS; ++c)                                                  \
      for (int l = 0; l < (int)(bytes / sizeof(type)); ++l)                                        \
        sum += acc[c][l];                                                                          \
    return sum;                                                                                    \
  }
TPMG_CPU_FMA_LOOP(fma_loop_double_scalar, double, 8, )
TPMG_CPU_FMA_LOOP(fma_loop_float_scalar, float, 4, )
#if TPMG_CPU_HAVE_SIMD
TPMG_CPU_FMA_LOOP(fma_loop_double_avx2, double, 32, __attribute__((target("avx2,fma"))))
TPMG_CPU_FMA_LOOP(fma_loop_float_avx2, float, 32, __attribute__((target("avx2,fma"))))
TPMG_CPU_FMA_LOOP(fma_loop_double_avx512, double, 64, __attribute__((target("avx512f,fma"))))
TPMG_CPU_FMA_LOOP(fma_loop_float_avx512, float, 64, __attribute__((target("avx512f,fma"))))
#endif
#undef TPMG_CPU_FMA_LOOP

/* flop/s of the FMA loop of the context's width in precision prec on all of
 * its threads at once (the best of 3 runs). */
static double cpu_fma_rate(tpmg_context *ctx, tpmg_precision prec) {
  const int simd = tpmg_cpu_simd(ctx);
  const int bytes = simd == TPMG_CPU_SIMD_AVX512 ? 64 : simd == TPMG_CPU_SIMD_AVX2 ? 32 : 0;
  const int lanes = bytes ? bytes / (int)tpmg_precision_size(prec) : 1;
  const long iterations = TPMG_CPU_FMA_ITERATIONS;
  volatile double sink = 0;
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    int threads = 1;
    const double start = cpu_wall_clock();
#pragma omp parallel num_threads(tpmg_backend_threads(ctx)) reduction(+ : sink)
    {
#pragma omp single
      threads = omp_get_num_threads();
      const double m = 1 - 1e-9, a = 1e-9 * (1 + omp_get_thread_num());
      double sum;
#if TPMG_CPU_HAVE_SIMD
      if (simd == TPMG_CPU_SIMD_AVX512)
        sum = prec == TPMG_FLOAT ? fma_loop_float_avx512(iterations, (float)m, (float)a)
                                 : fma_loop_double_avx512(iterations, m, a);
      else if (simd == TPMG_CPU_SIMD_AVX2)
        sum = prec == TPMG_FLOAT ? fma_loop_float_avx2(iterations, (float)m, (float)a)
                                 : fma_loop_double_avx2(iterations, m, a);
      else
#endif
        sum = prec == TPMG_FLOAT ? fma_loop_float_scalar(iterations, (float)m, (float)a)
                                 : fma_loop_double_scalar(iterations, m, a);
      sink += sum;
    }
    const double seconds = cpu_wall_clock() - start;
    const double rate = 2.0 * TPMG_CPU_FMA_CHAINS * lanes * (double)iterations * threads / seconds;
    if (rate > best)
      best = rate;
  }
  return best;
}

/* The FMA loop at the context's width on all of its threads; shared memory:
 * NaN, the CPU has none to measure. */
static tpmg_status cpu_measure_limits(tpmg_context *ctx, tpmg_device_limits *limits) {
  limits->shared_bytes = NAN;
  limits->flops_double = cpu_fma_rate(ctx, TPMG_DOUBLE);
  limits->flops_float = cpu_fma_rate(ctx, TPMG_FLOAT);
  return TPMG_SUCCESS;
}

/* The operator of tpmg-cpu-laplace.c, counted there (tpmg_cpu_laplace_work):
 * its multiply-adds as the kernel executes them, the 1D matrices (in the
 * call's data) as not loaded, the intermediate lines in cache as shared words,
 * main memory src read and dst written once. */
static tpmg_status cpu_operator_work(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                     tpmg_work *work) {
  tpmg_cpu_laplace_work(ctx, lvl, prec, work);
  return TPMG_SUCCESS;
}

/* The smoother of tpmg-cpu-patch.c does the dense vertex-patch arithmetic in
 * its scalar kernels, the mirror-coordinate one in its batched kernels, its
 * intermediate tensors in work arrays; GLOBAL's residual by the operator
 * above. */
static tpmg_status cpu_smoother_work(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                     tpmg_smoother_variant variant, tpmg_work *work) {
  tpmg_work apply;
  TPMG_CALL(cpu_operator_work(ctx, lvl, prec, &apply));
  const int kind = tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_SCALAR ? TPMG_WORK_DENSE : TPMG_WORK_MIRROR;
  tpmg_work_smoother(lvl, variant, kind, 1, 0, &apply, work);
  work->kernel = "cpu";
  return TPMG_SUCCESS;
}

const tpmg_backend_ops tpmg_cpu_backend = {
    .name = "cpu",
    .memory = TPMG_MEMORY_HOST,
    .whole_level_dofs = 0, /* host MPI messages take microseconds: split what can be */
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
    .messages_start = tpmg_comm_host_messages_start,
    .messages_wait = tpmg_comm_host_messages_wait,
    .check_level = NULL,
    .stopwatch = cpu_stopwatch,
    .measure_limits = cpu_measure_limits,
    .operator_work = cpu_operator_work,
    .smoother_work = cpu_smoother_work,
};
