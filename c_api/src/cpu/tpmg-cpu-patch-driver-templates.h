/* CPU backend, the vertex-patch smoother's driver for one scalar type T: the
 * data of a pass (in mirror coordinates for the batched kernels), the threads
 * over the patches of a colour, and the kernels of the context's width
 * (tpmg-cpu-patch-templates.h), chosen at run time.
 *
 * A template: instantiated with the scalar width's kernels by
 * tpmg-cpu-patch-double.c and tpmg-cpu-patch-float.c. */
#ifndef TPMG_CPU_PATCH_DRIVER_TEMPLATES_H
#define TPMG_CPU_PATCH_DRIVER_TEMPLATES_H

#include <omp.h>

#include "tpmg-cpu-patch-templates.h"

#ifdef TPMG_CPU_SIMD_BYTES
#error "the driver is compiled with the scalar width's kernels, for any processor"
#endif

#if TPMG_CPU_HAVE_SIMD
/* Lane vectors of a batched pass's scratch: xbar (P^dim), two tensors of
 * I P^(dim-1) (also y and the solve's work), one of I^2 P (3D) and r (I^dim),
 * with P = 2k+1 points and I = 2k-1 interior ones per direction. */
static size_t TPMG_CPU_NAME(patch_scratch)(int dim, int k) {
  const size_t p = (size_t)(2 * k + 1), i = (size_t)(2 * k - 1);
  return dim == 3 ? p * p * p + 2 * i * p * p + i * i * p + i * i * i : p * p + 2 * i * p + i * i;
}
#endif

/* out = 1 / (lambda_z + lambda_y + lambda_x) over the I^dim interior modes
 * (x fastest), position i of direction d taking mode mode[d][i] (NULL: i). */
static void TPMG_CPU_NAME(patch_inverse_eigenvalues)(const tpmg_level *lvl,
                                                     const int (*mode)[TPMG_CPU_MAX_POINTS],
                                                     int invert, T *out) {
  const int dim = lvl->dim, n_in = 2 * lvl->degree - 1, n_2 = dim == 3 ? n_in : 1;
  const tpmg_level_data *level_data = &lvl->data[TPMG_CPU_PRECISION];
  const T *lambda[3] = {level_data->eigenvalues[0], level_data->eigenvalues[1],
                        level_data->eigenvalues[2]};
  for (int i2 = 0; i2 < n_2; ++i2)
    for (int i1 = 0; i1 < n_in; ++i1)
      for (int i0 = 0; i0 < n_in; ++i0) {
        const int m2 = dim < 3 ? 0
                       : mode  ? mode[2][i2]
                               : i2,
                  m1 = mode ? mode[1][i1] : i1, m0 = mode ? mode[0][i0] : i0;
        const T sum = (dim == 3 ? lambda[2][m2] : 0) + lambda[1][m1] + lambda[0][m0];
        out[(i2 * n_in + i1) * n_in + i0] = invert ? 1 / sum : sum;
      }
}

#if TPMG_CPU_HAVE_SIMD
/* Mirror coordinates of n (odd) points per direction, h = (n - 1) / 2: the
 * pairs (a, n-1-a), a < h, become their sum at a and their difference at
 * n-1-a, the centre h stays (F); B = F^-1 halves the pairs back. On a patch of
 * two equal cells the 1D patch matrices are centrosymmetric and the
 * eigenvectors even or odd, so that in these coordinates the interior rows of
 * the patch matrices and, with the modes sorted even first (Q), S^T and S are
 * block diagonal: an even block (the sums and the centre) and an odd one (the
 * differences); a contraction costs about half the multiply-adds of the
 * dense one (the even-odd decomposition of sum factorization, as in deal.II's
 * evaluate_evenodd kernels: Kronbichler and Kormann, ACM TOMS 45(3), 2019).
 * Position e in these coordinates: e <= h even, e > h odd. Row e of F and
 * column e of B have one or two nonzeros: mirror_terms gives them (B: backward),
 * their indices a ascending, so that the products below take O(1) terms. */
static int TPMG_CPU_NAME(mirror_terms)(int n, int e, int backward, int a[2], double w[2]) {
  const int h = (n - 1) / 2;
  const double half = backward ? 0.5 : 1.0;
  if (e == h) {
    a[0] = h;
    w[0] = 1;
    return 1;
  }
  a[0] = e < h ? e : n - 1 - e;
  a[1] = e < h ? n - 1 - e : e;
  w[0] = half;
  w[1] = e < h ? half : -half;
  return 2;
}

/* The two diagonal blocks of the rows x cols matrix a (row-major) in mirror
 * coordinates: the even one (rows and columns up to the centre), then the odd
 * one, each column-major, into out; the other entries are zero up to rounding. */
static void TPMG_CPU_NAME(mirror_blocks)(int rows, int cols, const double *a, T *out) {
  const int hr = (rows - 1) / 2, hc = (cols - 1) / 2;
  int at = 0;
  for (int b = 0; b < 2; ++b)
    for (int j = b ? hc + 1 : 0; j < (b ? cols : hc + 1); ++j)
      for (int i = b ? hr + 1 : 0; i < (b ? rows : hr + 1); ++i)
        out[at++] = (T)a[i * cols + j];
}

/* data's matrices in mirror coordinates from the level's 1D data: F M B and
 * F K B of the interior rows, Q S^T B and F S Q^T, with Q the modes sorted by
 * parity (the sign of s_i . (s_i mirrored)); refused if the counts are not k
 * even and k-1 odd (a degenerate eigenvalue). */
static tpmg_status TPMG_CPU_NAME(patch_mirror_data)(tpmg_context *ctx, const tpmg_level *lvl,
                                                    TPMG_CPU_NAME(patch_data) * data) {
  const int dim = lvl->dim, k = lvl->degree, n_pts = 2 * k + 1, n_in = 2 * k - 1;
  const tpmg_level_data *level_data = &lvl->data[TPMG_CPU_PRECISION];
  int mode[3][TPMG_CPU_MAX_POINTS];
  for (int d = 0; d < dim; ++d) {
    const T *mass = level_data->patch_mass[d], *stiffness = level_data->patch_stiffness[d];
    const T *vectors = level_data->eigenvectors[d];
    /* Q: the even modes first */
    int even[TPMG_CPU_MAX_POINTS], n_even = 0;
    for (int i = 0; i < n_in; ++i) {
      double s = 0;
      for (int a = 0; a < n_in; ++a)
        s += (double)vectors[a * n_in + i] * (double)vectors[(n_in - 1 - a) * n_in + i];
      even[i] = s > 0;
      n_even += even[i];
    }
    TPMG_CHECK(ctx, n_even == k, TPMG_ERROR_NUMERICAL,
               "patch eigenvectors of direction %d: %d even of %d, expected %d", d, n_even, n_in,
               k);
    for (int b = 0, at = 0; b < 2; ++b)
      for (int i = 0; i < n_in; ++i)
        if (even[i] == (b == 0))
          mode[d][at++] = i;
    double m[TPMG_CPU_MAX_MATRIX], kk[TPMG_CPU_MAX_MATRIX], t1[TPMG_CPU_MAX_MATRIX],
        t2[TPMG_CPU_MAX_MATRIX];
    for (int e = 0; e < n_in; ++e)
      for (int c = 0; c < n_pts; ++c) {
        /* F M B, F K B with M, K the interior rows 1..2k-1 */
        int fa[2], bj[2];
        double fw[2], bw[2], sm = 0, sk = 0;
        const int nf = TPMG_CPU_NAME(mirror_terms)(n_in, e, 0, fa, fw),
                  nb = TPMG_CPU_NAME(mirror_terms)(n_pts, c, 1, bj, bw);
        for (int p = 0; p < nf; ++p)
          for (int q = 0; q < nb; ++q) {
            const double fb = fw[p] * bw[q];
            sm += fb * (double)mass[(fa[p] + 1) * n_pts + bj[q]];
            sk += fb * (double)stiffness[(fa[p] + 1) * n_pts + bj[q]];
          }
        m[e * n_pts + c] = sm;
        kk[e * n_pts + c] = sk;
      }
    for (int e = 0; e < n_in; ++e)
      for (int c = 0; c < n_in; ++c) {
        /* Q S^T B (row e a mode) and F S Q^T (column c a mode) */
        int ba[2], fa[2];
        double bw[2], fw[2], s1 = 0, s2 = 0;
        const int nb = TPMG_CPU_NAME(mirror_terms)(n_in, c, 1, ba, bw),
                  nf = TPMG_CPU_NAME(mirror_terms)(n_in, e, 0, fa, fw);
        for (int p = 0; p < nb; ++p)
          s1 += (double)vectors[ba[p] * n_in + mode[d][e]] * bw[p];
        for (int p = 0; p < nf; ++p)
          s2 += fw[p] * (double)vectors[fa[p] * n_in + mode[d][c]];
        t1[e * n_in + c] = s1;
        t2[e * n_in + c] = s2;
      }
    TPMG_CPU_NAME(mirror_blocks)(n_in, n_pts, m, data->mass_eo[d]);
    TPMG_CPU_NAME(mirror_blocks)(n_in, n_pts, kk, data->stiffness_eo[d]);
    TPMG_CPU_NAME(mirror_blocks)(n_in, n_in, t1, data->vectors_t_eo[d]);
    TPMG_CPU_NAME(mirror_blocks)(n_in, n_in, t2, data->vectors_eo[d]);
  }
  TPMG_CPU_NAME(patch_inverse_eigenvalues)(lvl, mode, 1, data->inverse_eigenvalues_eo);
  return TPMG_SUCCESS;
}
#endif

/* One pass of `mode` over the patches of a colour around the vertices
 * [vertices[0], vertices[1]) along the last direction (NULL: all); b is r for
 * PATCH_SOLVE. */
tpmg_status TPMG_CPU_NAME(tpmg_cpu_patch_pass)(tpmg_context *ctx, const tpmg_level *lvl, int mode,
                                               int colour, const tpmg_index *vertices, const T *b,
                                               const T *x, T *r_out, T *x_out) {
  const int dim = lvl->dim, k = lvl->degree, n_pts = 2 * k + 1, n_in = 2 * k - 1;
  const tpmg_level_data *level_data = &lvl->data[TPMG_CPU_PRECISION];
  TPMG_CPU_NAME(patch_residual_kernel) *residual =
      TPMG_CPU_NAME(patch_residual_kernels)[dim - 2][k];
  TPMG_CPU_NAME(patch_solve_kernel) *solve = TPMG_CPU_NAME(patch_solve_kernels)[dim - 2][k];
  TPMG_CPU_NAME(patch_data) data;
  data.lvl = lvl;
  data.b = b;
  data.x = x;
  data.x_out = x_out;
  data.boundary = mode == PATCH_BOUNDARY;
  data.r_out = r_out;
  for (int d = 0; d < dim; ++d) {
    const T *mass = level_data->patch_mass[d], *stiffness = level_data->patch_stiffness[d];
    const T *vectors = level_data->eigenvectors[d];
    for (int i = 0; i < n_in; ++i) {
      for (int j = 0; j < n_pts; ++j) {
        data.mass[d][j * n_in + i] = mass[(i + 1) * n_pts + j];
        data.stiffness[d][j * n_in + i] = stiffness[(i + 1) * n_pts + j];
      }
      for (int j = 0; j < n_in; ++j) {
        data.vectors_t[d][j * n_in + i] = vectors[j * n_in + i];
        data.vectors[d][j * n_in + i] = vectors[i * n_in + j];
      }
    }
  }
  TPMG_CPU_NAME(patch_inverse_eigenvalues)(lvl, NULL, 1, data.inverse_eigenvalues);
  data.coefficient = lvl->coefficient[TPMG_CPU_PRECISION];
  if (data.coefficient)
    TPMG_CPU_NAME(patch_inverse_eigenvalues)(lvl, NULL, 0, data.eigenvalue_sums);
  /* a graded level: its sets, column-major as above */
  T *sets = NULL;
  for (int d = 0; d < 3; ++d)
    data.sets[d] = NULL;
  if (lvl->widths[0]) {
    size_t n_sets = 0;
    for (int d = 0; d < dim; ++d)
      n_sets += (size_t)lvl->n_sets[d];
    sets = malloc(n_sets * TPMG_CPU_PATCH_SET * sizeof(T));
    TPMG_CHECK(ctx, sets, TPMG_ERROR_MEMORY, "allocating the smoother's %zu patch sets failed",
               n_sets);
    T *at = sets;
    for (int d = 0; d < dim; ++d) {
      data.sets[d] = at;
      const T *source = level_data->sets[d];
      for (int set = 0; set < lvl->n_sets[d]; ++set, at += TPMG_CPU_PATCH_SET) {
        const T *mass = source, *stiffness = mass + n_pts * n_pts;
        const T *vectors = stiffness + n_pts * n_pts, *lambda = vectors + n_in * n_in;
        source = lambda + n_in;
        for (int i = 0; i < n_in; ++i) {
          for (int j = 0; j < n_pts; ++j) {
            at[j * n_in + i] = mass[(i + 1) * n_pts + j];
            at[TPMG_CPU_MAX_MATRIX + j * n_in + i] = stiffness[(i + 1) * n_pts + j];
          }
          for (int j = 0; j < n_in; ++j) {
            at[2 * TPMG_CPU_MAX_MATRIX + j * n_in + i] = vectors[j * n_in + i];
            at[3 * TPMG_CPU_MAX_MATRIX + j * n_in + i] = vectors[i * n_in + j];
          }
          at[4 * TPMG_CPU_MAX_MATRIX + i] = lambda[i];
        }
      }
    }
  }

  const tpmg_index all[2] = {1, lvl->cells[dim - 1]};
  for (int d = 0; d < 3; ++d)
    data.m[d] = d < dim ? tpmg_level_patches_1d(lvl, d, colour) : 1;
  tpmg_level_patch_layers(lvl, colour, vertices ? vertices : all, &data.t_first, &data.m[dim - 1]);
  const tpmg_index m0 = data.m[0], m1 = data.m[1], m2 = data.m[2];
#if TPMG_CPU_HAVE_SIMD
  /* a variable coefficient's surrogate and graded patches (not mirror
   * symmetric): the scalar kernels only, so far */
  if (tpmg_cpu_simd(ctx) != TPMG_CPU_SIMD_SCALAR && !data.coefficient && !sets) {
    const int avx512 = tpmg_cpu_simd(ctx) == TPMG_CPU_SIMD_AVX512;
    const size_t vector_bytes = avx512 ? 64 : 32, lanes = vector_bytes / sizeof(T);
    TPMG_CALL(TPMG_CPU_NAME(patch_mirror_data)(ctx, lvl, &data));
    TPMG_CPU_NAME(patch_batch_kernel) *batch =
        avx512 ? TPMG_CPU_SIMD_NAME(tpmg_cpu_patch_batch_kernels, avx512)[dim - 2][k]
               : TPMG_CPU_SIMD_NAME(tpmg_cpu_patch_batch_kernels, avx2)[dim - 2][k];
    char *scratch;
    size_t stride;
    TPMG_CALL(tpmg_cpu_scratch(ctx, TPMG_CPU_NAME(patch_scratch)(dim, k) * vector_bytes, &stride,
                               &scratch));
    const tpmg_index n_batches = (m0 * m1 * m2 + (tpmg_index)lanes - 1) / (tpmg_index)lanes;
#pragma omp parallel num_threads(tpmg_backend_threads(ctx))
    {
      char *mine = scratch + (size_t)omp_get_thread_num() * stride;
#pragma omp for schedule(static)
      for (tpmg_index i = 0; i < n_batches; ++i)
        batch(&data, mode, colour, i * (tpmg_index)lanes, mine);
    }
    free(scratch);
    return TPMG_SUCCESS;
  }
#endif
  const int none[3] = {0, 0, 0}, begin[3] = {0, 0, 0};
  const int end[3] = {n_in, n_in, dim == 3 ? n_in : 1};
#pragma omp parallel for collapse(3) schedule(static) num_threads(tpmg_backend_threads(ctx))
  for (tpmg_index t2 = 0; t2 < m2; ++t2)
    for (tpmg_index t1 = 0; t1 < m1; ++t1)
      for (tpmg_index t0 = 0; t0 < m0; ++t0) {
        /* vertex v_d = 1 + colour_d + 2 t_d */
        const tpmg_index t[3] = {t0, t1 + (dim == 2 ? data.t_first : 0),
                                 t2 + (dim == 3 ? data.t_first : 0)};
        tpmg_index origin[3] = {0, 0, 0}, interior[3] = {0, 0, 0};
        int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
        for (int d = 0; d < dim; ++d) {
          const tpmg_index v = 1 + ((colour >> d) & 1) + 2 * t[d];
          origin[d] = (v - 1) * k;
          interior[d] = origin[d] + 1;
          lo[d] = v == 1;
          hi[d] = v == lvl->cells[d] - 1;
        }
        T r[TPMG_CPU_MAX_TENSOR];
        if (mode == PATCH_SOLVE)
          TPMG_CPU_NAME(tpmg_cpu_gather)(dim, n_in, b, lvl->n, interior, none, none, 0, r);
        else
          residual(&data, origin, lo, hi, r);
        if (mode == PATCH_RESIDUAL)
          TPMG_CPU_NAME(tpmg_cpu_scatter)(dim, n_in, r, lvl->n, interior, begin, end, r_out, 0);
        else
          solve(&data, interior, r);
      }
  free(sets);
  return TPMG_SUCCESS;
}

#endif
