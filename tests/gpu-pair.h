/* Test support for the GPU tests: a CPU and a CUDA context side by side,
 * vectors moved between host and either context in either precision, and the
 * comparison of the two backends' results. */
#ifndef TPMG_TEST_GPU_PAIR_H
#define TPMG_TEST_GPU_PAIR_H

#include <stdint.h>

#include "reference.h"

typedef struct {
  tpmg_context *ctx[2]; /* 0: CPU, 1: CUDA */
  tpmg_grid *grid[2];
  tpmg_precision p;
  /* the tolerance in float times this (0: 1): where the two backends round
   * differently ordered sums through several steps (a smoothing step with a
   * coefficient at the quadrature points: the CPU's collocation kernel and
   * the CUDA kernel's values and gradients, then 2^dim colours) */
  double float_slack;
} gpu_pair;

/* The CUDA backend's names: the plain one (the fastest kernels) and each
 * kernel variant, in this order. */
#define GPU_VARIANTS 6
extern const char *const gpu_variant_names[GPU_VARIANTS];
/* Whether variant v has kernels of degree k ("cuda/thread": degree 1 only). */
int gpu_variant_has_degree(int v, int k);
/* A CUDA context of each name of gpu_variant_names (ctx[0] the plain one). */
void gpu_variant_contexts(tpmg_context *ctx[GPU_VARIANTS]);
/* The backends that t801 and t802 check against "cpu": every name of
 * gpu_variant_names, or only the one named by the environment variable
 * TPMG_TEST_GPU_BACKEND (e.g. "cpu/scalar", or "cpu": the tests' logic run
 * without a GPU). Sets names and returns how many; 0 where the first of them
 * is not available (the test then skips). */
int gpu_test_backends(const char *names[GPU_VARIANTS]);
/* Whether a backend of this name refuses degree k ("cuda/thread": all but 1). */
int gpu_backend_refuses(const char *name, int k);
/* The pair pr with its CUDA side replaced by ctx and grid. */
gpu_pair gpu_pair_with(const gpu_pair *pr, tpmg_context *ctx, tpmg_grid *grid);

/* The allowed relative difference between the backends: 1e-12 double, 1e-5 float. */
double gpu_tolerance(tpmg_precision p);
/* A vector of ctx holding h (converted to precision p). */
void *gpu_vector_from(tpmg_context *ctx, tpmg_precision p, int64_t n, const double *h);
/* h = the vector v of ctx, converted to double. */
void gpu_vector_to(tpmg_context *ctx, tpmg_precision p, int64_t n, const void *v, double *h);
/* Random host data, or NaN when poison is set; the caller frees it. */
double *gpu_host_data(uint64_t *seed, int64_t n, int poison);
/* Download v[0] (CPU) and v[1] (CUDA) and compare: NaN at the same places,
 * elsewhere max |cuda - cpu| / max |cpu| within gpu_tolerance (TPMG_TEST_VERBOSE
 * set in the environment: print every relative difference). */
void gpu_compare(const gpu_pair *pr, int64_t n, void *v[2], const char *what, int dim, int k,
                 int level);
/* gpu_compare, and no NaN left in either result: every entry written. */
void gpu_compare_written(const gpu_pair *pr, int64_t n, void *v[2], const char *what, int dim,
                         int k, int level);
/* Random values of a variable coefficient, log-uniform in [0.1, 10), for
 * tpmg_grid_set_coefficient on the finest level of grid (of ctx; one rank:
 * every cell): one per cell (TPMG_COEFFICIENT_CELLS) or (k+1)^dim per cell
 * (TPMG_COEFFICIENT_QUADRATURE). The caller frees them. */
double *gpu_coefficient_values(tpmg_context *ctx, const tpmg_grid *grid,
                               tpmg_coefficient_layout layout, uint64_t *seed);
/* The same host data in a vector of each context. */
void gpu_vectors(const gpu_pair *pr, int64_t n, const double *h, void *v[2]);
/* Destroy the vectors made by gpu_vectors. */
void gpu_destroy(const gpu_pair *pr, void *v[2]);

#endif
