/* CPU backend, the level operator's driver for one scalar type T: the data of
 * a call, the threads over its tiles or layers of cells, and the kernels of
 * the context's width (tpmg-cpu-laplace-templates.h), chosen at run time.
 *
 * A template: instantiated with the scalar width's kernels by
 * tpmg-cpu-laplace-double.c and tpmg-cpu-laplace-float.c. */
#ifndef TPMG_CPU_LAPLACE_DRIVER_TEMPLATES_H
#define TPMG_CPU_LAPLACE_DRIVER_TEMPLATES_H

#include <omp.h>

#include "tpmg-cpu-laplace-templates.h"

#ifdef TPMG_CPU_SIMD_BYTES
#error "the driver is compiled with the scalar width's kernels, for any processor"
#endif

/* The quadrature kernel's data (laplace_cell_quadrature) from the unit data's
 * Gauss rule and basis, scaled in double, then rounded to T. */
static void TPMG_CPU_NAME(laplace_quadrature_data)(const tpmg_level *lvl,
                                                   TPMG_CPU_NAME(laplace_cells_data) * data) {
  const int dim = lvl->dim, n = lvl->degree + 1;
  const tpmg_unit_data *unit = lvl->unit;
  for (int q = 0; q < n; ++q)
    for (int j = 0; j < n; ++j) {
      /* A_qj column-major at [j n + q], its transpose at [q n + j] */
      const double value = unit->gauss_values[q * n + j];
      data->interpolation[0][j * n + q] = (T)value;
      data->interpolation[1][q * n + j] = (T)value;
      for (int d = 0; d < dim; ++d) {
        /* graded: the reference cell's (the kernel scales per cell) */
        const double slope = unit->gauss_gradients[q * n + j] / (lvl->widths[0] ? 1.0 : lvl->h[d]);
        data->derivative[0][d][j * n + q] = (T)slope;
        data->derivative[1][d][q * n + j] = (T)slope;
      }
    }
  const int size = dim == 3 ? n * n * n : n * n;
  for (int q = 0; q < size; ++q) {
    double w = 1; /* w_q |J| */
    for (int d = 0, stride = 1; d < dim; ++d, stride *= n)
      w *= unit->gauss_weights[q / stride % n] * (lvl->widths[0] ? 1.0 : lvl->h[d]);
    data->weights[q] = (T)w;
    data->mass_weights[q] = (T)(lvl->reaction * w);
  }
}

static tpmg_status TPMG_CPU_NAME(laplace_cells)(tpmg_context *ctx, const tpmg_level *lvl,
                                                const T *src, T *dst) {
  const int dim = lvl->dim, k = lvl->degree, s = dim - 1;
  const int mode = tpmg_cpu_laplace_mode(lvl, TPMG_CPU_PRECISION);
  TPMG_CPU_NAME(laplace_cells_kernel) *kernel =
      TPMG_CPU_NAME(laplace_cells_kernels)[mode][dim - 2][k];
  size_t scratch_bytes = 0;
#if TPMG_CPU_HAVE_SIMD
  /* u, v, t0, t1, t2 (and the quadrature's lanes) of (k+1)^dim lane vectors */
  const size_t tensor = (size_t)(dim == 3 ? (k + 1) * (k + 1) * (k + 1) : (k + 1) * (k + 1)) *
                        (mode == TPMG_CPU_LAPLACE_QUADRATURE ? 6 : 5);
  if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX2) {
    kernel = mode == TPMG_CPU_LAPLACE_QUADRATURE
                 ? TPMG_CPU_SIMD_NAME(tpmg_cpu_laplace_quadrature_kernels, avx2)[dim - 2][k]
             : mode == TPMG_CPU_LAPLACE_CELLS
                 ? TPMG_CPU_SIMD_NAME(tpmg_cpu_laplace_coefficient_kernels, avx2)[dim - 2][k]
                 : TPMG_CPU_SIMD_NAME(tpmg_cpu_laplace_cells_kernels, avx2)[dim - 2][k];
    scratch_bytes = tensor * 32;
  } else if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX512) {
    kernel = mode == TPMG_CPU_LAPLACE_QUADRATURE
                 ? TPMG_CPU_SIMD_NAME(tpmg_cpu_laplace_quadrature_kernels, avx512)[dim - 2][k]
             : mode == TPMG_CPU_LAPLACE_CELLS
                 ? TPMG_CPU_SIMD_NAME(tpmg_cpu_laplace_coefficient_kernels, avx512)[dim - 2][k]
                 : TPMG_CPU_SIMD_NAME(tpmg_cpu_laplace_cells_kernels, avx512)[dim - 2][k];
    scratch_bytes = tensor * 64;
  }
#endif
  /* large (the quadrature kernel's tables): not on the stack */
  TPMG_CPU_NAME(laplace_cells_data) *data = malloc(sizeof(*data));
  TPMG_CHECK(ctx, data, TPMG_ERROR_MEMORY, "allocating the operator's %zu bytes of data failed",
             sizeof(*data));
  data->lvl = lvl;
  data->src = src;
  data->dst = dst;
  data->reaction = (T)lvl->reaction;
  data->coefficient = mode == TPMG_CPU_LAPLACE_QUADRATURE ? lvl->quadrature[TPMG_CPU_PRECISION]
                                                          : lvl->coefficient[TPMG_CPU_PRECISION];
  if (mode == TPMG_CPU_LAPLACE_QUADRATURE)
    TPMG_CPU_NAME(laplace_quadrature_data)(lvl, data);
  for (int d = 0; d < dim; ++d) {
    const T *mass = lvl->data[TPMG_CPU_PRECISION].cell_mass[d];
    const T *stiffness = lvl->data[TPMG_CPU_PRECISION].cell_stiffness[d];
    for (int i = 0; i <= k; ++i)
      for (int j = 0; j <= k; ++j) {
        data->mass[d][j * (k + 1) + i] = mass[i * (k + 1) + j];
        data->stiffness[d][j * (k + 1) + i] = stiffness[i * (k + 1) + j];
      }
  }
  char *scratch;
  size_t stride;
  tpmg_status status = tpmg_cpu_scratch(ctx, scratch_bytes, &stride, &scratch);
  if (status != TPMG_SUCCESS) {
    free(data);
    return status;
  }
  const tpmg_index n_layers = lvl->cells[s], plane = lvl->n_dofs / lvl->n[s];
#pragma omp parallel num_threads(tpmg_backend_threads(ctx))
  {
    char *mine = scratch ? scratch + (size_t)omp_get_thread_num() * stride : NULL;
    for (int parity = 0; parity < 2; ++parity) {
#pragma omp for schedule(static)
      for (tpmg_index c = parity; c < n_layers; c += 2) {
        tpmg_index first, last;
        tpmg_cpu_layer_planes(c, n_layers, k, &first, &last);
        memset(dst + first * plane, 0, (size_t)((last - first + 1) * plane) * sizeof(T));
        kernel(data, c, mine);
      }
    }
  }
  free(scratch);
  free(data);
  return tpmg_cpu_copy_boundary(ctx, lvl, TPMG_CPU_PRECISION, src, dst);
}

tpmg_status TPMG_CPU_NAME(tpmg_cpu_laplace)(tpmg_context *ctx, const tpmg_level *lvl, const T *src,
                                            T *dst) {
  const int dim = lvl->dim, k = lvl->degree;
  TPMG_CPU_NAME(laplace_kernel) *kernel =
      TPMG_CPU_SIMD_NAME(tpmg_cpu_laplace_kernels, scalar)[dim - 2][k];
  int lanes = 1;
#if TPMG_CPU_HAVE_SIMD
  if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX2) {
    kernel = TPMG_CPU_SIMD_NAME(tpmg_cpu_laplace_kernels, avx2)[dim - 2][k];
    lanes = 32 / (int)sizeof(T);
  } else if (tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX512) {
    kernel = TPMG_CPU_SIMD_NAME(tpmg_cpu_laplace_kernels, avx512)[dim - 2][k];
    lanes = 64 / (int)sizeof(T);
  }
#endif
  if (tpmg_cpu_laplace_by_cells(dim, k, sizeof(T)) ||
      tpmg_cpu_laplace_mode(lvl, TPMG_CPU_PRECISION) != TPMG_CPU_LAPLACE_UNIT)
    return TPMG_CPU_NAME(laplace_cells)(ctx, lvl, src, dst);
  const int threads = tpmg_backend_threads(ctx);
  TPMG_CPU_NAME(laplace_data) data;
  data.lvl = lvl;
  data.src = src;
  data.dst = dst;
  tpmg_cpu_laplace_make_plan(lvl, lanes, sizeof(T), threads, &data.plan);
  const tpmg_cpu_laplace_plan *plan = &data.plan;
  const tpmg_index n_tiles = plan->tiles[0] * plan->tiles[1] * plan->tiles[2];
  if (n_tiles == 0 || (dim == 3 && (lvl->n[1] < 3 || lvl->n[2] < 3)) || lvl->n[1] < 3)
    return tpmg_cpu_copy_boundary(ctx, lvl, TPMG_CPU_PRECISION, src, dst);

  double cell[2][TPMG_CPU_MAX_MATRIX];
  if (dim == 3) {
    const T *mass = lvl->data[TPMG_CPU_PRECISION].cell_mass[1];
    const T *stiffness = lvl->data[TPMG_CPU_PRECISION].cell_stiffness[1];
    for (int e = 0; e < (k + 1) * (k + 1); ++e) {
      cell[0][e] = mass[e];
      cell[1][e] = stiffness[e];
    }
    for (int r = 1; r <= k; ++r)
      for (int j = 0; j <= (r == k ? 2 * k : k); ++j) {
        /* a cell in the middle of 3 cells: its rows are those of any cell */
        data.rows_mass[(r - 1) * (2 * k + 1) + j] =
            (T)tpmg_cpu_laplace_entry(cell[0], k, 3, k + r, k + j);
        data.rows_stiffness[(r - 1) * (2 * k + 1) + j] =
            (T)tpmg_cpu_laplace_entry(cell[1], k, 3, k + r, k + j);
      }
  }
  for (int e = 0; e < (k + 1) * (k + 1); ++e) {
    data.cell_mass[e] = ((const T *)lvl->data[TPMG_CPU_PRECISION].cell_mass[dim - 1])[e];
    data.cell_stiffness[e] = ((const T *)lvl->data[TPMG_CPU_PRECISION].cell_stiffness[dim - 1])[e];
  }
  /* every interior row of M_x, K_x is that of a cell's row (x mod k): the
   * diagonals repeat with the period lcm(k, lanes) (the Dirichlet columns
   * dropped by the zeros around the line copies) */
  const tpmg_index period = (tpmg_index)k * lanes / tpmg_cpu_laplace_gcd(k, lanes);
  const size_t diagonal = (size_t)period;
  T *diagonals = malloc(2 * (size_t)(2 * k + 1) * diagonal * sizeof(T));
  TPMG_CHECK(ctx, diagonals, TPMG_ERROR_MEMORY, "allocating the operator's %zu diagonals failed",
             (size_t)(4 * k + 2));
  for (int e = 0; e < (k + 1) * (k + 1); ++e) {
    cell[0][e] = ((const T *)lvl->data[TPMG_CPU_PRECISION].cell_mass[0])[e];
    cell[1][e] = ((const T *)lvl->data[TPMG_CPU_PRECISION].cell_stiffness[0])[e];
  }
  for (int m = 0; m < 2; ++m)
    for (int j = -k; j <= k; ++j)
      for (tpmg_index i = 0; i < period; ++i) {
        /* row x = i + 1 as the row of the middle one of 3 cells */
        const tpmg_index row = k + (i + 1) % k;
        diagonals[((size_t)m * (2 * k + 1) + (size_t)(j + k)) * diagonal + (size_t)i] =
            (T)tpmg_cpu_laplace_entry(cell[m], k, 3, row, row + j);
      }
  data.period = period;
  data.diagonals[0] = diagonals;
  data.diagonals[1] = diagonals + (size_t)(2 * k + 1) * diagonal;

  char *scratch;
  size_t stride;
  tpmg_status status = tpmg_cpu_scratch(ctx, plan->scratch_bytes, &stride, &scratch);
  if (status != TPMG_SUCCESS) {
    free(diagonals);
    return status;
  }
#pragma omp parallel num_threads(threads)
  {
    char *mine = scratch + (size_t)omp_get_thread_num() * stride;
#pragma omp for schedule(static)
    for (tpmg_index t = 0; t < n_tiles; ++t)
      kernel(&data, t, mine);
  }
  free(scratch);
  free(diagonals);
  return tpmg_cpu_copy_boundary(ctx, lvl, TPMG_CPU_PRECISION, src, dst);
}

#endif
