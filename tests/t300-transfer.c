/* t300-transfer: prolongation and restriction between levels l-1 and l.
 * - fine += P coarse against the global prolongation matrix of reference.c (the
 *   coarse basis evaluated at the fine support points), Dirichlet entries of
 *   fine unchanged, Dirichlet entries of coarse read as zero;
 * - coarse = P^T fine against the reference, Dirichlet entries of coarse zero;
 * - restriction is the exact transpose: (P u, v) == (u, R v) to 1e-12;
 * - a coarse Q_k polynomial vanishing on the boundary is prolongated exactly;
 * - float agrees with double to 1e-6.
 * 2D k = 1,2,3,5 and 3D k = 1,2,3 on an anisotropic box with several coarse
 * cells, plus the unit square; on the backend named by argv[1] (default
 * "cpu"), outputs poisoned with NaN before each call. */
#include <math.h>
#include <stdlib.h>

#include "reference.h"

static double poly_eval(int n, const double *c, double x) {
  double v = 0;
  for (int i = n - 1; i >= 0; i--) v = v * x + c[i];
  return v;
}

static void check_transfer(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                           const double *box) {
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, cells, box);
  uint64_t seed = 300 + 13 * dim + k;
  for (int l = 1; l <= L; l++) {
    ref_mesh mc, mf;
    ref_mesh_init(&mc, dim, k, cells, box, l - 1);
    ref_mesh_init(&mf, dim, k, cells, box, l);
    int64_t nc = mc.n_dofs, nf = mf.n_dofs;
    double *uc = ref_malloc(sizeof(double) * nc), *vc = ref_malloc(sizeof(double) * nc);
    double *ec = ref_malloc(sizeof(double) * nc);
    double *uf = ref_malloc(sizeof(double) * nf), *vf = ref_malloc(sizeof(double) * nf);
    double *ef = ref_malloc(sizeof(double) * nf), *f0 = ref_malloc(sizeof(double) * nf);
    float *ucf = ref_malloc(sizeof(float) * nc), *uff = ref_malloc(sizeof(float) * nf);
    ref_fill_random(&seed, nc, uc);
    ref_fill_random(&seed, nf, f0);
    ref_fill_random(&seed, nf, vf);

    tpmg_transfer *tr = NULL;
    REF_CALL(ctx, tpmg_transfer_create(grid, l, TPMG_DOUBLE, &tr));
    /* vectors in the context's memory: coarse and fine, double and float */
    void *dc = ref_vector_create(ctx, TPMG_DOUBLE, nc, NULL);
    void *df = ref_vector_create(ctx, TPMG_DOUBLE, nf, NULL);
    void *fc = ref_vector_create(ctx, TPMG_FLOAT, nc, NULL);
    void *ff = ref_vector_create(ctx, TPMG_FLOAT, nf, NULL);

    /* prolongation against the reference matrix */
    ref_vector_upload(ctx, TPMG_DOUBLE, nc, uc, dc);
    ref_vector_upload(ctx, TPMG_DOUBLE, nf, f0, df);
    REF_CALL(ctx, tpmg_transfer_prolongate_add(tr, dc, df));
    REF_DOWNLOAD(ctx, TPMG_DOUBLE, nf, df, uf);
    ref_prolongate(&mc, &mf, uc, ef);
    for (int64_t i = 0; i < nf; i++) uf[i] -= f0[i];
    double err = ref_relative_difference(nf, uf, ef);
    REF_CHECK(err <= 1e-12,
              "prolongation dim %d k %d level %d: relative difference to reference P expected <= "
              "1e-12, got %.3g",
              dim, k, l, err);
    for (int64_t i = 0; i < nf; i++)
      if (ref_mesh_is_boundary(&mf, i) && uf[i] != 0.0) {
        REF_CHECK(0,
                  "prolongation dim %d k %d level %d: Dirichlet fine entry %lld changed by %.17g "
                  "(expected unchanged)",
                  dim, k, l, (long long)i, uf[i]);
        break;
      }

    /* restriction against the reference transpose; Dirichlet coarse entries zero */
    ref_vector_upload(ctx, TPMG_DOUBLE, nf, vf, df);
    ref_vector_poison(ctx, TPMG_DOUBLE, nc, dc);
    REF_CALL(ctx, tpmg_transfer_restrict(tr, df, dc));
    REF_DOWNLOAD(ctx, TPMG_DOUBLE, nc, dc, vc);
    ref_restrict(&mc, &mf, vf, ec);
    err = ref_relative_difference(nc, vc, ec);
    REF_CHECK(err <= 1e-12,
              "restriction dim %d k %d level %d: relative difference to reference P^T expected <= "
              "1e-12, got %.3g",
              dim, k, l, err);
    for (int64_t i = 0; i < nc; i++)
      if (ref_mesh_is_boundary(&mc, i) && vc[i] != 0.0) {
        REF_CHECK(
            0,
            "restriction dim %d k %d level %d: Dirichlet coarse entry %lld: expected 0, got %.17g",
            dim, k, l, (long long)i, vc[i]);
        break;
      }

    /* exact transpose: (P u, v) = (u, R v) with the library's own P and R */
    ref_vector_upload(ctx, TPMG_DOUBLE, nc, uc, dc);
    REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, nf, 0.0, df));
    REF_CALL(ctx, tpmg_transfer_prolongate_add(tr, dc, df));
    REF_DOWNLOAD(ctx, TPMG_DOUBLE, nf, df, uf);
    double pu_v = 0, u_rv = 0;
    for (int64_t i = 0; i < nf; i++) pu_v += uf[i] * vf[i];
    for (int64_t i = 0; i < nc; i++) u_rv += uc[i] * vc[i];
    double scale = ref_norm2(nf, uf) * ref_norm2(nf, vf);
    REF_CHECK(fabs(pu_v - u_rv) <= 1e-12 * scale,
              "adjointness dim %d k %d level %d: (P u, v) = %.17g, (u, R v) = %.17g, difference "
              "%.3g > 1e-12 |Pu||v|",
              dim, k, l, pu_v, u_rv, fabs(pu_v - u_rv));

    /* a Q_k polynomial vanishing on the boundary is reproduced exactly */
    if (k >= 2) {
      double coef[3][16];
      for (int d = 0; d < dim; d++) ref_fill_random(&seed, k - 1, coef[d]);
      const ref_mesh *ms[2] = {&mc, &mf};
      double *vals[2] = {uc, ef};
      for (int s = 0; s < 2; s++)
        for (int64_t i = 0; i < ms[s]->n_dofs; i++) {
          int64_t id[3];
          ref_mesh_index(ms[s], i, id);
          double p = 1;
          for (int d = 0; d < dim; d++) {
            double x = ref_mesh_coordinate(ms[s], d, id[d]);
            double a = box ? box[2 * d] : 0, b = box ? box[2 * d + 1] : 1;
            p *= (x - a) * (b - x) * poly_eval(k - 1, coef[d], x);
          }
          vals[s][i] = p;
        }
      ref_vector_upload(ctx, TPMG_DOUBLE, nc, uc, dc);
      REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, nf, 0.0, df));
      REF_CALL(ctx, tpmg_transfer_prolongate_add(tr, dc, df));
      REF_DOWNLOAD(ctx, TPMG_DOUBLE, nf, df, uf);
      err = ref_relative_difference(nf, uf, ef);
      REF_CHECK(err <= 1e-12,
                "polynomial reproduction dim %d k %d level %d: relative error expected <= 1e-12, "
                "got %.3g",
                dim, k, l, err);
    }
    REF_CALL(ctx, tpmg_transfer_destroy(&tr));
    REF_CHECK(tr == NULL, "tpmg_transfer_destroy did not set the pointer to NULL");

    /* float */
    REF_CALL(ctx, tpmg_transfer_create(grid, l, TPMG_FLOAT, &tr));
    for (int64_t i = 0; i < nc; i++)
      uc[i] = ucf[i] = (float)uc[i];
    for (int64_t i = 0; i < nf; i++)
      uff[i] = 0;
    ref_vector_upload(ctx, TPMG_FLOAT, nc, ucf, fc);
    ref_vector_upload(ctx, TPMG_FLOAT, nf, uff, ff);
    REF_CALL(ctx, tpmg_transfer_prolongate_add(tr, fc, ff));
    REF_DOWNLOAD(ctx, TPMG_FLOAT, nf, ff, uff);
    ref_prolongate(&mc, &mf, uc, ef);
    for (int64_t i = 0; i < nf; i++) uf[i] = uff[i];
    err = ref_relative_difference(nf, uf, ef);
    REF_CHECK(
        err <= 1e-6,
        "float prolongation dim %d k %d level %d: relative difference expected <= 1e-6, got %.3g",
        dim, k, l, err);
    for (int64_t i = 0; i < nf; i++)
      vf[i] = uff[i] = (float)vf[i];
    ref_vector_upload(ctx, TPMG_FLOAT, nf, uff, ff);
    ref_vector_poison(ctx, TPMG_FLOAT, nc, fc);
    REF_CALL(ctx, tpmg_transfer_restrict(tr, ff, fc));
    REF_DOWNLOAD(ctx, TPMG_FLOAT, nc, fc, ucf);
    ref_restrict(&mc, &mf, vf, ec);
    for (int64_t i = 0; i < nc; i++) vc[i] = ucf[i];
    err = ref_relative_difference(nc, vc, ec);
    REF_CHECK(
        err <= 1e-6,
        "float restriction dim %d k %d level %d: relative difference expected <= 1e-6, got %.3g",
        dim, k, l, err);
    REF_CALL(ctx, tpmg_transfer_destroy(&tr));

    ref_vector_destroy(ctx, &ff);
    ref_vector_destroy(ctx, &fc);
    ref_vector_destroy(ctx, &df);
    ref_vector_destroy(ctx, &dc);
    free(uff);
    free(ucf);
    free(f0);
    free(ef);
    free(vf);
    free(uf);
    free(ec);
    free(vc);
    free(uc);
  }
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const int cells[3] = {2, 3, 1};
  const double box[6] = {0, 2, -1, 0.5, 0, 0.3};
  const int k2[] = {1, 2, 3, 5}, k3[] = {1, 2, 3};
  for (int t = 0; t < 4; t++) check_transfer(ctx, 2, k2[t], 2, cells, box);
  check_transfer(ctx, 2, 4, 3, NULL, NULL);
  for (int t = 0; t < 3; t++) check_transfer(ctx, 3, k3[t], k3[t] == 3 ? 1 : 2, cells, box);
  check_transfer(ctx, 3, 2, 2, NULL, NULL);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t300-transfer");
}
