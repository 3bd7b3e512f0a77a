/* CPU backend, the grid transfer's driver for one scalar type T: the data of a
 * call, the threads over the coarse cells, and the kernels of the context's
 * width (tpmg-cpu-transfer-templates.h), chosen at run time.
 *
 * A template: instantiated with the scalar width's kernels by
 * tpmg-cpu-transfer-double.c and tpmg-cpu-transfer-float.c. */
#ifndef TPMG_CPU_TRANSFER_DRIVER_TEMPLATES_H
#define TPMG_CPU_TRANSFER_DRIVER_TEMPLATES_H

#include <omp.h>

#include "tpmg-cpu-transfer-templates.h"

#ifdef TPMG_CPU_SIMD_BYTES
#error "the driver is compiled with the scalar width's kernels, for any processor"
#endif

/* The batched kernels' vector size in bytes (0: the scalar ones) and the
 * kernels for this context. */
static size_t TPMG_CPU_NAME(transfer_kernels)(tpmg_context *ctx, int dim, int k,
                                              TPMG_CPU_NAME(prolongate_kernel) * *prolongate,
                                              TPMG_CPU_NAME(restriction_kernel) * *restriction) {
  *prolongate = TPMG_CPU_NAME(prolongate_kernels)[dim - 2][k];
  *restriction = TPMG_CPU_NAME(restriction_kernels)[dim - 2][k];
#if TPMG_CPU_HAVE_SIMD
  if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX2) {
    *prolongate = TPMG_CPU_SIMD_NAME(tpmg_cpu_prolongate_kernels, avx2)[dim - 2][k];
    *restriction = TPMG_CPU_SIMD_NAME(tpmg_cpu_restriction_kernels, avx2)[dim - 2][k];
    return 32;
  }
  if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX512) {
    *prolongate = TPMG_CPU_SIMD_NAME(tpmg_cpu_prolongate_kernels, avx512)[dim - 2][k];
    *restriction = TPMG_CPU_SIMD_NAME(tpmg_cpu_restriction_kernels, avx512)[dim - 2][k];
    return 64;
  }
#endif
  return 0;
}

/* Lane vectors of a batched kernel's scratch: three tensors of (2k+1)^dim. */
static size_t TPMG_CPU_NAME(transfer_scratch)(int dim, int k) {
  const size_t n_f = (size_t)(2 * k + 1);
  return 3 * (dim == 3 ? n_f * n_f * n_f : n_f * n_f);
}

static void TPMG_CPU_NAME(transfer_setup)(const tpmg_level *coarse, const tpmg_level *fine,
                                          const T *src, T *dst,
                                          TPMG_CPU_NAME(transfer_data) * data) {
  const int k = fine->degree, n_c = k + 1, n_f = 2 * k + 1;
  const T *prolongation = fine->data[TPMG_CPU_PRECISION].prolongation;
  data->coarse = coarse;
  data->fine = fine;
  data->src = src;
  data->dst = dst;
  for (int i = 0; i < n_f; ++i)
    for (int s = 0; s < n_c; ++s) {
      data->prolongation[s * n_f + i] = prolongation[i * n_c + s];
      data->restriction[i * n_c + s] = prolongation[i * n_c + s];
    }
}

tpmg_status TPMG_CPU_NAME(tpmg_cpu_prolongate_add)(tpmg_context *ctx, const tpmg_level *coarse,
                                                   const tpmg_level *fine, const T *c, T *f) {
  const int dim = fine->dim, k = fine->degree;
  TPMG_CPU_NAME(prolongate_kernel) * kernel;
  TPMG_CPU_NAME(restriction_kernel) * unused;
  const size_t vector_bytes = TPMG_CPU_NAME(transfer_kernels)(ctx, dim, k, &kernel, &unused);
  TPMG_CPU_NAME(transfer_data) data;
  TPMG_CPU_NAME(transfer_setup)(coarse, fine, c, f, &data);
  char *scratch;
  size_t stride;
  TPMG_CALL(tpmg_cpu_scratch(ctx, TPMG_CPU_NAME(transfer_scratch)(dim, k) * vector_bytes, &stride,
                             &scratch));
  const tpmg_index cells_1 = coarse->cells[1], cells_2 = dim == 3 ? coarse->cells[2] : 1;
  if (scratch) {
    /* every fine point is written by one cell: batches in any order */
    const tpmg_index lanes = (tpmg_index)(vector_bytes / sizeof(T));
    const tpmg_index n_batches = (coarse->cells[0] * cells_1 * cells_2 + lanes - 1) / lanes;
#pragma omp parallel num_threads(tpmg_backend_threads(ctx))
    {
      char *mine = scratch + (size_t)omp_get_thread_num() * stride;
#pragma omp for schedule(static)
      for (tpmg_index i = 0; i < n_batches; ++i)
        kernel(&data, i * lanes, 0, mine);
    }
    free(scratch);
    return TPMG_SUCCESS;
  }
#pragma omp parallel for collapse(2) schedule(static) num_threads(tpmg_backend_threads(ctx))
  for (tpmg_index c2 = 0; c2 < cells_2; ++c2)
    for (tpmg_index c1 = 0; c1 < cells_1; ++c1)
      kernel(&data, c1, c2, NULL);
  return TPMG_SUCCESS;
}

tpmg_status TPMG_CPU_NAME(tpmg_cpu_restrict)(tpmg_context *ctx, const tpmg_level *coarse,
                                             const tpmg_level *fine, const T *f, T *c) {
  const int dim = fine->dim, k = fine->degree, s = dim - 1;
  TPMG_CPU_NAME(prolongate_kernel) * unused;
  TPMG_CPU_NAME(restriction_kernel) * kernel;
  const size_t vector_bytes = TPMG_CPU_NAME(transfer_kernels)(ctx, dim, k, &unused, &kernel);
  TPMG_CPU_NAME(transfer_data) data;
  TPMG_CPU_NAME(transfer_setup)(coarse, fine, f, c, &data);
  char *scratch;
  size_t stride;
  TPMG_CALL(tpmg_cpu_scratch(ctx, TPMG_CPU_NAME(transfer_scratch)(dim, k) * vector_bytes, &stride,
                             &scratch));
  const tpmg_index n_layers = coarse->cells[s], plane = coarse->n_dofs / coarse->n[s];
#pragma omp parallel num_threads(tpmg_backend_threads(ctx))
  {
    char *mine = scratch ? scratch + (size_t)omp_get_thread_num() * stride : NULL;
    for (int parity = 0; parity < 2; ++parity) {
#pragma omp for schedule(static)
      for (tpmg_index c_s = parity; c_s < n_layers; c_s += 2) {
        tpmg_index first, last;
        tpmg_cpu_layer_planes(c_s, n_layers, k, &first, &last);
        memset(c + first * plane, 0, (size_t)((last - first + 1) * plane) * sizeof(T));
        kernel(&data, c_s, mine);
      }
    }
  }
  free(scratch);
  return TPMG_SUCCESS;
}

#endif
