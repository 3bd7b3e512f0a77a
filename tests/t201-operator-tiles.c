/* t201-operator-tiles: tpmg_operator_apply on levels that t200's assembled
 * matrices are too large for, against an independent cell-by-cell apply (each
 * cell's (k+1)^dim block, Dirichlet entries read as zero, times the Kronecker
 * cell matrix of reference.c's 1D matrices scaled by the cell widths, added
 * up; Dirichlet rows copied): 3D k = 3, 5, 6, 7, 8 on an anisotropic box
 * (different h per direction), and 3D k = 1, 2D k = 4 on levels long and wide
 * enough that the CPU backend cuts them into several tiles in x and y. Random
 * input, double (relative 1e-12) and float (relative 1e-5), outputs poisoned
 * with NaN, on the backend named by argv[1] (default "cpu"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* dst = A src cell by cell; n, cells, h per direction (2D: n[2] = 1). */
static void cell_apply(int dim, int k, const int64_t n[3], const int64_t cells[3],
                       const double h[3], const double *src, double *dst) {
  const int p = k + 1, p2 = dim == 3 ? p : 1;
  double mass[3][121], stiffness[3][121], unit_mass[121], unit_stiffness[121];
  ref_cell_matrices(k, unit_mass, unit_stiffness);
  for (int d = 0; d < dim; d++)
    for (int e = 0; e < p * p; e++) {
      mass[d][e] = h[d] * unit_mass[e];
      stiffness[d][e] = unit_stiffness[e] / h[d];
    }
  const int64_t n_dofs = n[0] * n[1] * n[2];
  memset(dst, 0, sizeof(double) * (size_t)n_dofs);
  double u[729], v[729];
  for (int64_t c2 = 0; c2 < (dim == 3 ? cells[2] : 1); c2++)
    for (int64_t c1 = 0; c1 < cells[1]; c1++)
      for (int64_t c0 = 0; c0 < cells[0]; c0++) {
        for (int a2 = 0; a2 < p2; a2++)
          for (int a1 = 0; a1 < p; a1++)
            for (int a0 = 0; a0 < p; a0++) {
              const int64_t i[3] = {c0 * k + a0, c1 * k + a1, dim == 3 ? c2 * k + a2 : 0};
              int boundary = 0;
              for (int d = 0; d < dim; d++)
                boundary |= i[d] == 0 || i[d] == n[d] - 1;
              u[(a2 * p + a1) * p + a0] = boundary ? 0 : src[(i[2] * n[1] + i[1]) * n[0] + i[0]];
            }
        /* v_b = sum_a prod_d (d == e ? K_e : M_d)[b_d][a_d] u_a, summed over e */
        for (int b2 = 0; b2 < p2; b2++)
          for (int b1 = 0; b1 < p; b1++)
            for (int b0 = 0; b0 < p; b0++) {
              double sum = 0;
              for (int a2 = 0; a2 < p2; a2++)
                for (int a1 = 0; a1 < p; a1++)
                  for (int a0 = 0; a0 < p; a0++) {
                    double entry = 0;
                    for (int e = 0; e < dim; e++) {
                      const int b[3] = {b0, b1, b2}, a[3] = {a0, a1, a2};
                      double product = 1;
                      for (int d = 0; d < dim; d++)
                        product *= (d == e ? stiffness[d] : mass[d])[b[d] * p + a[d]];
                      entry += product;
                    }
                    sum += entry * u[(a2 * p + a1) * p + a0];
                  }
              v[(b2 * p + b1) * p + b0] = sum;
            }
        for (int b2 = 0; b2 < p2; b2++)
          for (int b1 = 0; b1 < p; b1++)
            for (int b0 = 0; b0 < p; b0++) {
              const int64_t i[3] = {c0 * k + b0, c1 * k + b1, dim == 3 ? c2 * k + b2 : 0};
              dst[(i[2] * n[1] + i[1]) * n[0] + i[0]] += v[(b2 * p + b1) * p + b0];
            }
      }
  for (int64_t i2 = 0; i2 < n[2]; i2++)
    for (int64_t i1 = 0; i1 < n[1]; i1++)
      for (int64_t i0 = 0; i0 < n[0]; i0++) {
        const int64_t i[3] = {i0, i1, i2};
        int boundary = 0;
        for (int d = 0; d < dim; d++)
          boundary |= i[d] == 0 || i[d] == n[d] - 1;
        if (boundary)
          dst[(i2 * n[1] + i1) * n[0] + i0] = src[(i2 * n[1] + i1) * n[0] + i0];
      }
}

static void check(tpmg_context *ctx, int dim, int k, int L, const int coarse[3],
                  const double box[6]) {
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, coarse, box);
  int64_t n[3] = {1, 1, 1}, cells[3] = {1, 1, 1};
  double h[3] = {1, 1, 1};
  tpmg_index n_dofs = 0, n_1d[3];
  REF_CALL(ctx, tpmg_grid_level_size(grid, L, &n_dofs, n_1d));
  for (int d = 0; d < dim; d++) {
    cells[d] = (int64_t)coarse[d] << L;
    n[d] = cells[d] * k + 1;
    h[d] = (box[2 * d + 1] - box[2 * d]) / (double)cells[d];
    REF_CHECK(n_1d[d] == n[d], "dim %d k %d: n_1d[%d] expected %lld, got %lld", dim, k, d,
              (long long)n[d], (long long)n_1d[d]);
  }
  if (n_dofs != n[0] * n[1] * n[2]) {
    REF_CALL(ctx, tpmg_grid_destroy(&grid));
    return;
  }
  tpmg_operator *op = NULL;
  tpmg_status status = tpmg_operator_create(grid, L, TPMG_DOUBLE, &op);
  if (ref_refused(ctx, k, status, "tpmg_operator_create")) {
    REF_CALL(ctx, tpmg_grid_destroy(&grid));
    return;
  }
  REF_CALL(ctx, status);
  ref_checked++;
  uint64_t seed = 201 + 13 * dim + k;
  double *src = ref_malloc(sizeof(double) * n_dofs), *dst = ref_malloc(sizeof(double) * n_dofs);
  double *expected = ref_malloc(sizeof(double) * n_dofs);
  float *srcf = ref_malloc(sizeof(float) * n_dofs), *dstf = ref_malloc(sizeof(float) * n_dofs);
  ref_fill_random(&seed, n_dofs, src);
  cell_apply(dim, k, n, cells, h, src, expected);
  void *vsrc = ref_vector_create(ctx, TPMG_DOUBLE, n_dofs, src);
  void *vdst = ref_vector_create(ctx, TPMG_DOUBLE, n_dofs, NULL);
  ref_vector_poison(ctx, TPMG_DOUBLE, n_dofs, vdst);
  REF_CALL(ctx, tpmg_operator_apply(op, vsrc, vdst));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n_dofs, vdst, dst);
  ref_vector_destroy(ctx, &vdst);
  ref_vector_destroy(ctx, &vsrc);
  double err = ref_relative_difference(n_dofs, dst, expected);
  REF_CHECK(err <= 1e-12,
            "double operator, dim %d k %d level %d (%lld x %lld x %lld): relative difference "
            "expected <= 1e-12, got %.3g",
            dim, k, L, (long long)n[0], (long long)n[1], (long long)n[2], err);
  REF_CALL(ctx, tpmg_operator_destroy(&op));

  /* float: the reference applied to the rounded input */
  for (int64_t i = 0; i < n_dofs; i++) {
    srcf[i] = (float)src[i];
    src[i] = srcf[i];
  }
  cell_apply(dim, k, n, cells, h, src, expected);
  REF_CALL(ctx, tpmg_operator_create(grid, L, TPMG_FLOAT, &op));
  vsrc = ref_vector_create(ctx, TPMG_FLOAT, n_dofs, srcf);
  vdst = ref_vector_create(ctx, TPMG_FLOAT, n_dofs, NULL);
  ref_vector_poison(ctx, TPMG_FLOAT, n_dofs, vdst);
  REF_CALL(ctx, tpmg_operator_apply(op, vsrc, vdst));
  REF_DOWNLOAD(ctx, TPMG_FLOAT, n_dofs, vdst, dstf);
  ref_vector_destroy(ctx, &vdst);
  ref_vector_destroy(ctx, &vsrc);
  for (int64_t i = 0; i < n_dofs; i++)
    dst[i] = dstf[i];
  err = ref_relative_difference(n_dofs, dst, expected);
  REF_CHECK(err <= 1e-5,
            "float operator, dim %d k %d level %d: relative difference expected <= 1e-5, got %.3g",
            dim, k, L, err);
  REF_CALL(ctx, tpmg_operator_destroy(&op));
  free(dstf);
  free(srcf);
  free(expected);
  free(dst);
  free(src);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const int coarse[3] = {2, 3, 2};
  const double box[6] = {0, 1.5, -1, 0.25, 0, 0.6};
  const int k3[] = {3, 5, 6, 7, 8};
  for (int t = 0; t < 5; t++)
    check(ctx, 3, k3[t], 1, coarse, box);
  /* several tiles along x and y: 512 x 1024 x 2 cells */
  const int wide[3] = {256, 512, 1};
  const double long_box[6] = {0, 4, 0, 3, 0, 0.01};
  check(ctx, 3, 1, 1, wide, long_box);
  const int wide_2d[3] = {1024, 16, 1};
  check(ctx, 2, 4, 1, wide_2d, long_box);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t201-operator-tiles");
}
