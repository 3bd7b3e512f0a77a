/* tpmg: tensor-product multigrid with vertex-patch smoothers.
 *
 * The benchmark and developer header, apart from the user API of tpmg.h:
 * communication counts, the multi-vector kernels of the Krylov methods, a
 * stopwatch on the backend's queue of work, the device's measured limits and
 * the work per DoF that the kernels do (counted from the code). tpmg's own
 * programs (tpmg-bench) and tests use it; a user's program needs none of it.
 * Its functions follow tpmg.h's conventions.
 */
#ifndef TPMG_BENCH_H
#define TPMG_BENCH_H

#include "tpmg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Communication                                                             */
/* ------------------------------------------------------------------------ */

/** What this rank has communicated since its context was created (zero on one
 *  process): for benchmarks, take the difference around the calls of interest. */
typedef struct {
  long long exchange_messages; /**< ghost exchange with the neighbours: messages sent */
  long long exchange_bytes;    /**< and their bytes */
  long long gather_messages;   /**< gathering a level whole onto every rank: messages sent */
  long long gather_bytes;      /**< and their bytes */
  long long reductions;        /**< collective reductions: dot products, norms, status agreement */
} tpmg_communication;

/** The context's communication counts on this rank. */
tpmg_status tpmg_context_communication(const tpmg_context *ctx, tpmg_communication *counts);

/* ------------------------------------------------------------------------ */
/* Multi-vector kernels (the Krylov methods' building blocks)                */
/* ------------------------------------------------------------------------ */

/** Several dot products in one pass over y (GMRES' classical Gram-Schmidt):
 *  result[i] = x_i . y for i < m and result[m] = y . y, each summed in double
 *  in an order fixed by n alone.
 *  @param[in]  x m vectors of the context (the array and the vectors borrowed), m >= 1
 *  @param[in]  y a vector of the context (borrowed)
 *  @param[out] result m + 1 values, host memory of the caller
 *  @return TPMG_ERROR_ARGUMENT for a NULL argument or vector, m < 1, n < 0 or an
 *  unknown precision (result unchanged). */
tpmg_status tpmg_vector_dots(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, int m,
                             const void *const *x, const void *y, double *result);

/** y += a_0 x_0 + ... + a_{m-1} x_{m-1} in one pass, the terms added in that
 *  order in the vectors' precision; norm2 != NULL: also (y, y) of the new y.
 *  @param[in]  a m factors (host memory); x m vectors of the context (borrowed, none
 *              of them y), m >= 1
 *  @param[in,out] y a vector of the context (borrowed)
 *  @param[out] norm2 NULL, or the squared norm of the result, summed in double
 *  @return TPMG_ERROR_ARGUMENT for a NULL argument or vector, an x_i equal to y,
 *  m < 1, n < 0 or an unknown precision (y and norm2 unchanged). */
tpmg_status tpmg_vector_axpys(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, int m,
                              const double *a, const void *const *x, void *y, double *norm2);

/** tpmg_vector_axpys with the x_i in a precision of their own: float x_i added
 *  into a double y, each entry widened to double (exactly) and then summed as
 *  double x_i would be; x_precision equal to precision is tpmg_vector_axpys.
 *  The solvers' GMRES update x += Z y in TPMG_MODE_MIXED, whose preconditioned
 *  vectors Z are the float V-cycle's output.
 *  @param[in] x_precision of the x_i: precision, or TPMG_FLOAT with a double y
 *  @return as tpmg_vector_axpys, and TPMG_ERROR_ARGUMENT for double x_i with a
 *  float y (y and norm2 unchanged). */
tpmg_status tpmg_vector_axpys_mixed(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                                    int m, const double *a, tpmg_precision x_precision,
                                    const void *const *x, void *y, double *norm2);

/* ------------------------------------------------------------------------ */
/* Benchmark support                                                         */
/* ------------------------------------------------------------------------ */

/** A stopwatch on the backend's queue of work (CUDA events on the context's
 *  stream for "cuda", the wall clock for "cpu"). Call it with start != 0 to
 *  mark the start, then with start == 0 to mark the end, wait for the work in
 *  between and get the seconds between the two marks.
 *  @param[out] seconds at the end mark: the elapsed seconds (>= 0); ignored and
 *              may be NULL at the start mark
 *  @return TPMG_ERROR_ARGUMENT for a NULL context, a NULL seconds at the end
 *          mark, or an end mark without a start mark since the last end mark. */
tpmg_status tpmg_context_stopwatch(tpmg_context *ctx, int start, double *seconds);

/** The device's limits as measured by small loops on it (a few milliseconds),
 *  for comparing kernels with what the hardware can do. NaN where the backend
 *  measures none (the CPU backend: an FMA loop of its SIMD width on all of the
 *  context's threads, about 0.1 s; no shared memory). */
typedef struct {
  double shared_bytes; /**< shared-memory load bandwidth, bytes/s (conflict-free loads) */
  double flops_double; /**< FP64 multiply-add throughput, flop/s (a multiply-add counts 2) */
  double flops_float;  /**< FP32 multiply-add throughput, flop/s */
} tpmg_device_limits;

/** Measure the device's limits (see tpmg_device_limits): a few short kernels
 *  on the context's queue of work, timed by its stopwatch (a start mark of
 *  the caller's is dropped: the next end mark needs a new start mark).
 *  @param[out] limits the measured values, NaN where not measured
 *  @return TPMG_ERROR_ARGUMENT for a NULL argument; TPMG_ERROR_BACKEND if a
 *  loop fails on the device. */
tpmg_status tpmg_context_measure_limits(tpmg_context *ctx, tpmg_device_limits *limits);

/** The work per DoF of the kernels that the backend runs for one operator
 *  apply or one smoothing step, counted from the code (doc/benchmarks.md). */
typedef struct {
  const char *kernel;  /**< the kernel's name ("basic", "constant", "tiled", "thread",
                            "brick"; the operator on a grid with a variable coefficient
                            "cell" or "cell-quadrature"; "cpu" for the CPU backend): a
                            static string */
  double flops;        /**< floating-point operations, a multiply-add counts 2 */
  double shared_words; /**< words written to and read from shared memory (0 where the
                            kernel keeps its values in registers) */
  double matrix_words; /**< 1D matrix entries loaded from memory (those in the kernel
                            parameters or registers do not count) */
  double memory_words; /**< device (main) memory words, each vector read or written once
                            per pass, with overlapping windows read once */
} tpmg_work;

/** The work per DoF of one tpmg_operator_apply.
 *  @param[out] work the counts of the kernel the backend runs for this operator
 *  @return TPMG_ERROR_ARGUMENT for a NULL argument; TPMG_ERROR_UNSUPPORTED for a
 *  backend that counts no work (work unchanged). */
tpmg_status tpmg_operator_work(const tpmg_operator *op, tpmg_work *work);

/** The work per DoF of one tpmg_smoother_apply (all 2^dim colours). GLOBAL
 *  counts its operator applies too.
 *  @param[out] work the counts of the kernels the backend runs for this smoother
 *  @return TPMG_ERROR_ARGUMENT for a NULL argument; TPMG_ERROR_UNSUPPORTED for a
 *  backend that counts no work (work unchanged). */
tpmg_status tpmg_smoother_work(const tpmg_smoother *smoother, tpmg_work *work);

#ifdef __cplusplus
}
#endif

#endif
