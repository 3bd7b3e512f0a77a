/* t502-multigrid-vcycle: the multigrid hierarchy against a V-cycle built from
 * the reference pieces (assembled level matrices, dense patch smoother,
 * reference prolongation/restriction, dense Cholesky on level 0), paper
 * Algorithm 1 with one pre- (forward colours) and one post-smoothing step
 * (reverse colours when symmetric):
 * - tpmg_multigrid_vcycle(b, x) for random b, x, symmetric or not, GLOBAL and
 *   FUSED smoothers, to 1e-10;
 * - tpmg_multigrid_precondition(r) = V(0, r), double hierarchy with double
 *   vectors, float hierarchy with float and with double vectors;
 * - tpmg_multigrid_fmg(b) = Algorithm 2 lines 1-5, Dirichlet entries zero;
 * - a float hierarchy agrees to 1e-4.
 * 2D k = 1, 2, 3 and 3D k = 1, 2 on an anisotropic box with several coarse cells,
 * on the backend named by argv[1] (default "cpu"); outputs poisoned with NaN. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

typedef struct {
  int L;
  ref_mesh m[8];
  ref_csr A[8];
  int n_coarse;          /* interior DoFs of level 0 */
  int64_t *coarse_index; /* their indices */
  double *coarse_chol;   /* Cholesky factor of A_0 on them */
} ref_hierarchy;

static void hierarchy_init(ref_hierarchy *h, int dim, int k, int L, const int cells[3],
                           const double *box) {
  h->L = L;
  for (int l = 0; l <= L; l++) {
    ref_mesh_init(&h->m[l], dim, k, cells, box, l);
    ref_assemble_laplace(&h->m[l], &h->A[l]);
  }
  const ref_mesh *m0 = &h->m[0];
  h->coarse_index = ref_malloc(sizeof(int64_t) * m0->n_dofs);
  h->n_coarse = 0;
  for (int64_t i = 0; i < m0->n_dofs; i++)
    if (!ref_mesh_is_boundary(m0, i)) h->coarse_index[h->n_coarse++] = i;
  int nc = h->n_coarse;
  h->coarse_chol = ref_malloc(sizeof(double) * (size_t)(nc > 0 ? nc * nc : 1));
  if (nc > 0) {
    ref_csr_submatrix(&h->A[0], nc, h->coarse_index, h->coarse_chol);
    if (ref_cholesky(nc, h->coarse_chol)) exit(2);
  }
}

static void hierarchy_free(ref_hierarchy *h) {
  for (int l = 0; l <= h->L; l++) ref_csr_free(&h->A[l]);
  free(h->coarse_index);
  free(h->coarse_chol);
}

/* x <- V_l(x, b) */
static void ref_vcycle(const ref_hierarchy *h, int l, int symmetric, const double *b, double *x) {
  const ref_mesh *m = &h->m[l];
  int64_t n = m->n_dofs;
  if (l == 0) {
    double *y = ref_malloc(sizeof(double) * (h->n_coarse + 1));
    for (int a = 0; a < h->n_coarse; a++) y[a] = b[h->coarse_index[a]];
    if (h->n_coarse > 0) ref_cholesky_solve(h->n_coarse, h->coarse_chol, y);
    for (int64_t i = 0; i < n; i++) x[i] = 0;
    for (int a = 0; a < h->n_coarse; a++) x[h->coarse_index[a]] = y[a];
    free(y);
    return;
  }
  const ref_mesh *mc = &h->m[l - 1];
  ref_smoother_step(m, &h->A[l], 0, b, x);
  double *r = ref_malloc(sizeof(double) * n), *x0 = ref_malloc(sizeof(double) * n);
  for (int64_t i = 0; i < n; i++)
    x0[i] = ref_mesh_is_boundary(m, i) ? 0 : x[i];
  ref_csr_apply(&h->A[l], x0, r);
  for (int64_t i = 0; i < n; i++) r[i] = b[i] - r[i];
  double *rc = ref_malloc(sizeof(double) * mc->n_dofs), *xc = ref_malloc(sizeof(double) * mc->n_dofs);
  ref_restrict(mc, m, r, rc);
  for (int64_t i = 0; i < mc->n_dofs; i++) xc[i] = 0;
  ref_vcycle(h, l - 1, symmetric, rc, xc);
  ref_prolongate(mc, m, xc, r);
  for (int64_t i = 0; i < n; i++) x[i] += r[i];
  ref_smoother_step(m, &h->A[l], symmetric, b, x);
  free(xc);
  free(rc);
  free(x0);
  free(r);
}

/* FMG's first pass in double: b restricted to every level, level 0 solved,
 * prolongation and one V-cycle (symmetric) per level; x on level L. */
static void ref_fmg(const ref_hierarchy *h, int L, const double *b, double *x) {
  double *bl[8], *xl[8];
  bl[L] = (double *)b;
  for (int l = L; l > 0; l--) {
    bl[l - 1] = ref_malloc(sizeof(double) * h->m[l - 1].n_dofs);
    ref_restrict(&h->m[l - 1], &h->m[l], bl[l], bl[l - 1]);
  }
  xl[0] = ref_malloc(sizeof(double) * h->m[0].n_dofs);
  ref_vcycle(h, 0, 1, bl[0], xl[0]);
  for (int l = 1; l <= L; l++) {
    xl[l] = l == L ? x : ref_malloc(sizeof(double) * h->m[l].n_dofs);
    ref_prolongate(&h->m[l - 1], &h->m[l], xl[l - 1], xl[l]);
    ref_vcycle(h, l, 1, bl[l], xl[l]);
  }
  for (int l = 0; l < L; l++) {
    free(bl[l]);
    free(xl[l]);
  }
}

static double interior_difference(const ref_mesh *m, const double *got, const double *expected) {
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < m->n_dofs; i++) {
    if (ref_mesh_is_boundary(m, i)) continue;
    double d = fabs(got[i] - expected[i]);
    if (isnan(d)) return NAN;
    if (d > diff) diff = d;
    if (fabs(expected[i]) > scale) scale = fabs(expected[i]);
  }
  return diff / scale;
}

static void check_multigrid(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                            const double *box) {
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, cells, box);
  ref_hierarchy h;
  hierarchy_init(&h, dim, k, L, cells, box);
  const ref_mesh *m = &h.m[L];
  int64_t n = m->n_dofs;
  uint64_t seed = 502 + 7 * dim + k;
  double *b = ref_malloc(sizeof(double) * n), *x0 = ref_malloc(sizeof(double) * n);
  double *x = ref_malloc(sizeof(double) * n), *expected = ref_malloc(sizeof(double) * n);
  float *bf = ref_malloc(sizeof(float) * n), *xf = ref_malloc(sizeof(float) * n);
  ref_fill_random(&seed, n, b);
  ref_fill_random(&seed, n, x0);
  /* b and x in the context's memory, double and float */
  void *vb = ref_vector_create(ctx, TPMG_DOUBLE, n, b),
       *vx = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  void *vbf = ref_vector_create(ctx, TPMG_FLOAT, n, NULL),
       *vxf = ref_vector_create(ctx, TPMG_FLOAT, n, NULL);

  for (int symmetric = 0; symmetric <= 1; symmetric++)
    for (int v = 0; v < 3; v += 2) {
      tpmg_multigrid_options options = tpmg_multigrid_options_default();
      options.precision = TPMG_DOUBLE;
      options.smoother = (tpmg_smoother_variant)v;
      options.symmetric = symmetric;
      tpmg_multigrid *mg = NULL;
      REF_CALL(ctx, tpmg_multigrid_create(grid, &options, &mg));

      memcpy(expected, x0, sizeof(double) * n);
      ref_vcycle(&h, L, symmetric, b, expected);
      ref_vector_upload(ctx, TPMG_DOUBLE, n, x0, vx);
      REF_CALL(ctx, tpmg_multigrid_vcycle(mg, vb, vx));
      REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vx, x);
      double err = ref_relative_difference(n, x, expected);
      REF_CHECK(err <= 1e-10,
                "V-cycle dim %d k %d L %d symmetric %d smoother %d: relative difference to the "
                "reference expected <= 1e-10, got %.3g",
                dim, k, L, symmetric, v, err);

      if (symmetric && v == 2) {
        /* z = V(0, r) */
        for (int64_t i = 0; i < n; i++) expected[i] = 0;
        ref_vcycle(&h, L, symmetric, b, expected);
        ref_vector_poison(ctx, TPMG_DOUBLE, n, vx);
        REF_CALL(ctx, tpmg_multigrid_precondition(mg, TPMG_DOUBLE, vb, vx));
        REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vx, x);
        err = interior_difference(m, x, expected);
        REF_CHECK(err <= 1e-10,
                  "precondition dim %d k %d L %d: relative difference (interior) expected <= "
                  "1e-10, got %.3g",
                  dim, k, L, err);
        ref_fmg(&h, L, b, expected);
        ref_vector_poison(ctx, TPMG_DOUBLE, n, vx);
        REF_CALL(ctx, tpmg_multigrid_fmg(mg, TPMG_DOUBLE, vb, vx));
        REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vx, x);
        for (int64_t i = 0; i < n; i++)
          if (ref_mesh_is_boundary(m, i) && x[i] != 0.0) {
            REF_CHECK(0, "FMG pass dim %d k %d L %d: Dirichlet entry %lld: expected 0, got %.17g",
                      dim, k, L, (long long)i, x[i]);
            break;
          }
        err = interior_difference(m, x, expected);
        REF_CHECK(
            err <= 1e-10,
            "FMG pass dim %d k %d L %d: relative difference (interior) expected <= 1e-10, got %.3g",
            dim, k, L, err);
      }
      REF_CALL(ctx, tpmg_multigrid_destroy(&mg));
      REF_CHECK(mg == NULL, "tpmg_multigrid_destroy did not set the pointer to NULL");
    }

  /* a float hierarchy */
  {
    tpmg_multigrid_options options = tpmg_multigrid_options_default();
    options.precision = TPMG_FLOAT;
    tpmg_multigrid *mg = NULL;
    REF_CALL(ctx, tpmg_multigrid_create(grid, &options, &mg));
    for (int64_t i = 0; i < n; i++) {
      bf[i] = (float)b[i];
      xf[i] = (float)x0[i];
      b[i] = bf[i];
      expected[i] = xf[i];
    }
    ref_vcycle(&h, L, options.symmetric, b, expected);
    ref_vector_upload(ctx, TPMG_FLOAT, n, bf, vbf);
    ref_vector_upload(ctx, TPMG_FLOAT, n, xf, vxf);
    REF_CALL(ctx, tpmg_multigrid_vcycle(mg, vbf, vxf));
    REF_DOWNLOAD(ctx, TPMG_FLOAT, n, vxf, xf);
    for (int64_t i = 0; i < n; i++)
      x[i] = xf[i];
    double err = ref_relative_difference(n, x, expected);
    REF_CHECK(err <= 1e-4,
              "float V-cycle dim %d k %d L %d: relative difference expected <= 1e-4, got %.3g", dim,
              k, L, err);
    /* precondition z = V(0, r) with float and with double vectors */
    for (int64_t i = 0; i < n; i++) expected[i] = 0;
    ref_vcycle(&h, L, options.symmetric, b, expected);
    ref_vector_poison(ctx, TPMG_FLOAT, n, vxf);
    REF_CALL(ctx, tpmg_multigrid_precondition(mg, TPMG_FLOAT, vbf, vxf));
    REF_DOWNLOAD(ctx, TPMG_FLOAT, n, vxf, xf);
    for (int64_t i = 0; i < n; i++)
      x[i] = xf[i];
    err = interior_difference(m, x, expected);
    REF_CHECK(err <= 1e-4,
              "float precondition dim %d k %d L %d: relative difference (interior) expected <= "
              "1e-4, got %.3g",
              dim, k, L, err);
    /* b now holds the float-rounded values */
    ref_vector_upload(ctx, TPMG_DOUBLE, n, b, vb);
    ref_vector_poison(ctx, TPMG_DOUBLE, n, vx);
    REF_CALL(ctx, tpmg_multigrid_precondition(mg, TPMG_DOUBLE, vb, vx));
    REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vx, x);
    err = interior_difference(m, x, expected);
    REF_CHECK(err <= 1e-4,
              "float hierarchy, double precondition dim %d k %d L %d: relative difference "
              "(interior) expected <= 1e-4, got %.3g",
              dim, k, L, err);
    /* mixed FMG, double vectors: twice, the second with the vectors the first made */
    ref_fmg(&h, L, b, expected);
    for (int pass = 0; pass < 2; pass++) {
      ref_vector_poison(ctx, TPMG_DOUBLE, n, vx);
      REF_CALL(ctx, tpmg_multigrid_fmg(mg, TPMG_DOUBLE, vb, vx));
      REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vx, x);
      err = interior_difference(m, x, expected);
      REF_CHECK(err <= 1e-4,
                "float hierarchy, double FMG pass %d dim %d k %d L %d: relative difference "
                "(interior) expected <= 1e-4, got %.3g",
                pass, dim, k, L, err);
    }
    REF_CALL(ctx, tpmg_multigrid_destroy(&mg));
  }

  ref_vector_destroy(ctx, &vxf);
  ref_vector_destroy(ctx, &vbf);
  ref_vector_destroy(ctx, &vx);
  ref_vector_destroy(ctx, &vb);
  free(xf);
  free(bf);
  free(expected);
  free(x);
  free(x0);
  free(b);
  hierarchy_free(&h);
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const int cells[3] = {2, 3, 1};
  const double box[6] = {0, 2, -1, 0.5, 0, 0.3};
  check_multigrid(ctx, 2, 1, 3, cells, box);
  check_multigrid(ctx, 2, 2, 2, cells, box);
  check_multigrid(ctx, 2, 3, 2, cells, box);
  check_multigrid(ctx, 2, 2, 3, NULL, NULL);
  check_multigrid(ctx, 3, 1, 2, cells, box);
  check_multigrid(ctx, 3, 2, 1, cells, box);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t502-multigrid-vcycle");
}
