/* GPU test: the CUDA backend's vertex-patch smoother against the CPU backend:
 * the operations patch_residual, patch_solve and patch_fused for every colour
 * through the backend tables, and tpmg_smoother_apply of each variant (forward
 * and reverse colour order) through the public API, on random inputs, for dim 2
 * and 3, every degree of the table and both precisions. CUDA outputs are
 * poisoned with NaN first; entries an operation must not write stay NaN on
 * both sides. Skipped (exit 77) without a GPU.
 * Usage: t802-gpu-smoother [dim [global|separate|fused [degree [level]]]] limits
 * the cases (the sanitizer runs of tests/gpu/run-all.sh use this). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-pair.h"

static const char *variant_names[3] = {"global", "separate", "fused"};

static void check_smoother(const gpu_pair *pr, int l, int variant, uint64_t *seed) {
  const tpmg_level *lvl[2] = {&pr->grid[0]->levels[l], &pr->grid[1]->levels[l]};
  const int64_t n = lvl[0]->n_dofs;
  const int dim = lvl[0]->dim, k = lvl[0]->degree;
  double *hb = gpu_host_data(seed, n, 0), *hx = gpu_host_data(seed, n, 0), *nan = gpu_host_data(seed, n, 1);
  void *b[2], *x[2], *r[2];
  gpu_vectors(pr, n, hb, b);
  char what[64];
  for (int colour = 0; colour < (1 << dim); colour++) {
    /* the backend operations the variant uses */
    if (variant == TPMG_SMOOTHER_SEPARATE) {
      gpu_vectors(pr, n, hx, x);
      gpu_vectors(pr, n, nan, r);
      for (int s = 0; s < 2; s++)
        REF_CALL(pr->ctx[s], pr->ctx[s]->ops->patch_residual(pr->ctx[s], lvl[s], pr->p, colour,
                                                             b[s], x[s], r[s]));
      snprintf(what, sizeof(what), "patch_residual colour %d", colour);
      gpu_compare(pr, n, r, what, dim, k, l);
      gpu_destroy(pr, r);
      gpu_destroy(pr, x);
    }
    if (variant != TPMG_SMOOTHER_FUSED) {
      gpu_vectors(pr, n, hx, x);
      gpu_vectors(pr, n, hb, r);
      for (int s = 0; s < 2; s++)
        REF_CALL(pr->ctx[s],
                 pr->ctx[s]->ops->patch_solve(pr->ctx[s], lvl[s], pr->p, colour, r[s], x[s]));
      snprintf(what, sizeof(what), "patch_solve colour %d", colour);
      gpu_compare(pr, n, x, what, dim, k, l);
      gpu_destroy(pr, r);
      gpu_destroy(pr, x);
    } else {
      gpu_vectors(pr, n, hx, x);
      for (int s = 0; s < 2; s++)
        REF_CALL(pr->ctx[s],
                 pr->ctx[s]->ops->patch_fused(pr->ctx[s], lvl[s], pr->p, colour, b[s], x[s]));
      snprintf(what, sizeof(what), "patch_fused colour %d", colour);
      gpu_compare(pr, n, x, what, dim, k, l);
      gpu_destroy(pr, x);
    }
  }
  /* whole smoothing steps through the public API, forward then reverse */
  tpmg_smoother_options options = tpmg_smoother_options_default();
  options.variant = (tpmg_smoother_variant)variant;
  tpmg_smoother *smoother[2];
  for (int s = 0; s < 2; s++)
    REF_CALL(pr->ctx[s], tpmg_smoother_create(pr->grid[s], l, pr->p, &options, &smoother[s]));
  gpu_vectors(pr, n, hx, x);
  for (int reverse = 0; reverse < 2; reverse++) {
    for (int s = 0; s < 2; s++)
      REF_CALL(pr->ctx[s], tpmg_smoother_apply(smoother[s], reverse, b[s], x[s]));
    snprintf(what, sizeof(what), "tpmg_smoother_apply %s%s", variant_names[variant],
             reverse ? " reverse" : "");
    gpu_compare(pr, n, x, what, dim, k, l);
  }
  gpu_destroy(pr, x);
  for (int s = 0; s < 2; s++)
    tpmg_smoother_destroy(&smoother[s]);
  gpu_destroy(pr, b);
  free(hb);
  free(hx);
  free(nan);
}

int main(int argc, char **argv) {
  int available = 0;
  if (tpmg_backend_available(TPMG_BACKEND_CUDA, &available) != TPMG_SUCCESS || !available) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  const int only_dim = argc > 1 ? atoi(argv[1]) : 0;
  int only_variant = -1;
  for (int v = 0; v < 3 && argc > 2; v++)
    if (strcmp(argv[2], variant_names[v]) == 0)
      only_variant = v;
  if (argc > 2 && only_variant < 0) {
    fprintf(stderr, "unknown variant %s (global, separate, fused)\n", argv[2]);
    return 2;
  }
  const int only_degree = argc > 3 ? atoi(argv[3]) : 0;
  const int only_level = argc > 4 ? atoi(argv[4]) : 0;
  tpmg_context_options options = tpmg_context_options_default();
  gpu_pair pr;
  pr.ctx[0] = ref_context_create(0);
  options.backend = TPMG_BACKEND_CUDA;
  REF_CALL(NULL, tpmg_context_create(&options, &pr.ctx[1]));
  uint64_t seed = 802;
  /* unequal cells and cell sizes per direction; one coarse cell in x */
  const int cells[3] = {1, 2, 1};
  const double box[6] = {0.0, 1.0, -0.5, 1.0, 0.25, 1.0};
  for (int dim = 2; dim <= 3; dim++) {
    if (only_dim && dim != only_dim)
      continue;
    const int max_degree = dim == 2 ? TPMG_MAX_DEGREE_2D : TPMG_MAX_DEGREE_3D;
    for (int k = 1; k <= max_degree; k++) {
      if (only_degree && k != only_degree)
        continue;
      const int levels = only_level ? only_level : dim == 2 ? 3 : (k <= 3 ? 3 : 2);
      for (int s = 0; s < 2; s++)
        pr.grid[s] = ref_grid_create(pr.ctx[s], dim, k, levels, cells, box);
      for (int p = 0; p < 2; p++) {
        pr.p = (tpmg_precision)p;
        for (int v = 0; v < 3; v++)
          if (only_variant < 0 || v == only_variant)
            for (int l = 1; l <= levels; l++)
              check_smoother(&pr, l, v, &seed);
      }
      for (int s = 0; s < 2; s++)
        tpmg_grid_destroy(&pr.grid[s]);
    }
  }
  tpmg_context_destroy(&pr.ctx[1]);
  tpmg_context_destroy(&pr.ctx[0]);
  return ref_exit_code("t802-gpu-smoother");
}
