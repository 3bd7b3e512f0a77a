/* t402-smoother-graded: one colourised multiplicative vertex-patch step on
 * graded cells (tpmg_grid_options.cell_widths) against the same sweep in
 * reference.c with dense patch matrices of the level matrix assembled with
 * each cell's widths (ref_mesh_grade) and Cholesky solves: with a = 1 each
 * patch's local solve by fast diagonalization with the patch's own 1D
 * eigenpairs (its two widths per direction) is exact, so GLOBAL, SEPARATE,
 * FUSED and BOUNDARY agree with the reference to 1e-12 in double, forward and
 * reverse, with and without the reaction (c = 57.3), Dirichlet entries
 * unchanged; random widths (neighbours up to 16 apart), 2D k = 1..4 and 3D
 * k = 1..3, every level from 1. On the CPU backend (other backends refuse
 * graded grids: t203). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

static const char *variant_name[4] = {"GLOBAL", "SEPARATE", "FUSED", "BOUNDARY"};
static const double box[6] = {0, 2, -1, 0.5, 0, 0.3};

static void check_smoother(tpmg_context *ctx, int dim, int k, int L, const int cells[3], double c,
                           uint64_t *seed) {
  double widths[3][8];
  const double *w[3] = {widths[0], widths[1], dim == 3 ? widths[2] : NULL};
  tpmg_grid_options o = tpmg_grid_options_default();
  o.dim = dim;
  o.degree = k;
  o.fine_level = L;
  memcpy(o.box, box, sizeof box);
  o.reaction = c;
  for (int d = 0; d < 3; d++) {
    o.cells[d] = d < dim ? cells[d] : 1;
    double sum = 0;
    for (int i = 0; i < o.cells[d]; i++)
      sum += widths[d][i] = pow(4.0, ref_random(seed));
    for (int i = 0; i < o.cells[d]; i++)
      widths[d][i] *= (box[2 * d + 1] - box[2 * d]) / sum;
    o.cell_widths[d] = w[d];
  }
  tpmg_grid *grid = NULL;
  REF_CALL(ctx, tpmg_grid_create(ctx, &o, &grid));
  for (int l = 1; l <= L; l++) {
    ref_mesh m;
    ref_mesh_init(&m, dim, k, cells, box, l);
    m.reaction = c;
    ref_mesh_grade(&m, w);
    const int64_t n = m.n_dofs;
    ref_csr A;
    ref_assemble_laplace(&m, &A);
    double *b = ref_malloc(sizeof(double) * n), *x0 = ref_malloc(sizeof(double) * n);
    double *x = ref_malloc(sizeof(double) * n), *expected = ref_malloc(sizeof(double) * n);
    ref_fill_random(seed, n, b);
    ref_fill_random(seed, n, x0);
    for (int reverse = 0; reverse <= 1; reverse++) {
      memcpy(expected, x0, sizeof(double) * n);
      ref_smoother_step(&m, &A, reverse, b, expected);
      for (int v = 0; v < 4; v++) {
        tpmg_smoother_options options = tpmg_smoother_options_default();
        options.variant = (tpmg_smoother_variant)v;
        tpmg_smoother *s = NULL;
        REF_CALL(ctx, tpmg_smoother_create(grid, l, TPMG_DOUBLE, &options, &s));
        void *vb = ref_vector_create(ctx, TPMG_DOUBLE, n, b);
        void *vx = ref_vector_create(ctx, TPMG_DOUBLE, n, x0);
        REF_CALL(ctx, tpmg_smoother_apply(s, reverse, vb, vx));
        REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vx, x);
        ref_vector_destroy(ctx, &vx);
        ref_vector_destroy(ctx, &vb);
        const double err = ref_relative_difference(n, x, expected);
        REF_CHECK(err <= 1e-12,
                  "graded smoother %s%s dim %d k %d level %d c %g: relative difference to the "
                  "dense reference sweep expected <= 1e-12, got %.3g",
                  variant_name[v], reverse ? " reverse" : "", dim, k, l, c, err);
        for (int64_t i = 0; i < n; i++)
          if (ref_mesh_is_boundary(&m, i) && x[i] != x0[i]) {
            REF_CHECK(0, "graded smoother %s dim %d k %d level %d: Dirichlet entry %lld changed",
                      variant_name[v], dim, k, l, (long long)i);
            break;
          }
        REF_CALL(ctx, tpmg_smoother_destroy(&s));
        ref_checked++;
      }
    }
    free(expected);
    free(x);
    free(x0);
    free(b);
    ref_csr_free(&A);
    ref_mesh_free(&m);
  }
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
}

int main(int argc, char **argv) {
  const char *backend = ref_backend(argc, argv);
  if (strncmp(backend, "cpu", 3) != 0) {
    printf("t402-smoother-graded: SKIPPED, graded cells run on the CPU backend only (t203 checks "
           "the refusal)\n");
    return 77;
  }
  tpmg_context *ctx = ref_context_create(backend, 0);
  uint64_t seed = 401;
  const int cells2[3] = {3, 4, 1}, cells3[3] = {2, 3, 2};
  for (int k = 1; k <= 4; k++) {
    check_smoother(ctx, 2, k, 2, cells2, 0.0, &seed);
    check_smoother(ctx, 2, k, 1, cells2, 57.3, &seed);
  }
  for (int k = 1; k <= 3; k++) {
    check_smoother(ctx, 3, k, 1, cells3, 0.0, &seed);
    check_smoother(ctx, 3, k, 1, cells3, 57.3, &seed);
  }
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t402-smoother-graded");
}
