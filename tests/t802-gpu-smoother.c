/* GPU test: the CUDA backend's vertex-patch smoother against the CPU backend,
 * through the public API only: tpmg_smoother_apply of each smoother variant
 * (global, separate, fused, boundary), forward then reverse colour order, on
 * contexts of each name of the CUDA backend ("cuda", "cuda/basic",
 * "cuda/constant", "cuda/tiled", "cuda/thread" for degree 1, "cuda/brick"),
 * on every level >= 1 of grids made with the same options, on random inputs,
 * for dim 2 and 3, every degree of the table and both precisions, with a
 * reaction term for every other degree (c = 123 for even k + dim, else 0). No
 * entry may be left NaN. "cuda/thread" must refuse every other degree
 * (TPMG_ERROR_UNSUPPORTED, the message saying degree 1). Then GLOBAL (the
 * only variant on such grids) on every level >= 1 of grids with a variable
 * coefficient (tpmg_grid_set_coefficient, the same random values in
 * [0.1, 10) on both sides), per cell and at the quadrature points, with and
 * without a reaction, several degrees up to the highest: the exact
 * operator's residual and the patches' surrogate solves. Skipped (exit 77)
 * without a GPU. TPMG_TEST_GPU_BACKEND=NAME checks the backend NAME instead of
 * the CUDA names (e.g. "cpu/scalar": this test's logic without a GPU).
 * Usage: t802-gpu-smoother [dim [global|separate|fused|boundary [degree [level]]]]
 * limits the cases; level is the grid's finest level, every level 1..level is
 * smoothed (the sanitizer runs of tests/gpu/run-all.sh use this). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-pair.h"

static const char *variant_names[4] = {"global", "separate", "fused", "boundary"};

/* One smoother variant on level l of both sides of pr, forward then reverse.
 * Returns 1 if checked, 0 where the backend refuses the degree (after checking
 * that it does, with a message saying degree 1). label: added to the
 * messages. */
static int check_smoother(const gpu_pair *pr, const char *name, int l, int variant,
                          const char *label, uint64_t *seed) {
  tpmg_grid_options go = tpmg_grid_options_default();
  REF_CALL(pr->ctx[0], tpmg_grid_get_options(pr->grid[0], &go));
  const int dim = go.dim, k = go.degree;
  tpmg_index n = 0;
  REF_CALL(pr->ctx[0], tpmg_grid_level_size(pr->grid[0], l, &n, NULL));
  tpmg_smoother_options options = tpmg_smoother_options_default();
  options.variant = (tpmg_smoother_variant)variant;
  tpmg_smoother *smoother[2] = {NULL, NULL};
  REF_CALL(pr->ctx[0], tpmg_smoother_create(pr->grid[0], l, pr->p, &options, &smoother[0]));
  tpmg_status status = tpmg_smoother_create(pr->grid[1], l, pr->p, &options, &smoother[1]);
  if (gpu_backend_refuses(name, k)) {
    REF_CHECK(status == TPMG_ERROR_UNSUPPORTED && !smoother[1],
              "tpmg_smoother_create %s on %s for %dD Q%d: status %d, expected %d",
              variant_names[variant], name, dim, k, (int)status, (int)TPMG_ERROR_UNSUPPORTED);
    REF_CHECK(strstr(tpmg_context_last_error(pr->ctx[1]), "degree 1") != NULL,
              "tpmg_smoother_create on %s for Q%d: message \"%s\" does not say degree 1", name, k,
              tpmg_context_last_error(pr->ctx[1]));
    tpmg_smoother_destroy(&smoother[1]);
    tpmg_smoother_destroy(&smoother[0]);
    return 0;
  }
  REF_CALL(pr->ctx[1], status);
  if (smoother[1]) {
    double *hb = gpu_host_data(seed, n, 0), *hx = gpu_host_data(seed, n, 0);
    void *b[2], *x[2];
    gpu_vectors(pr, n, hb, b);
    gpu_vectors(pr, n, hx, x);
    for (int reverse = 0; reverse < 2; reverse++) {
      for (int s = 0; s < 2; s++)
        REF_CALL(pr->ctx[s], tpmg_smoother_apply(smoother[s], reverse, b[s], x[s]));
      char what[160];
      snprintf(what, sizeof(what), "tpmg_smoother_apply %s %s%s%s", variant_names[variant], name,
               label, reverse ? " reverse" : "");
      gpu_compare_written(pr, n, x, what, dim, k, l);
    }
    gpu_destroy(pr, x);
    gpu_destroy(pr, b);
    free(hb);
    free(hx);
  }
  for (int s = 0; s < 2; s++)
    tpmg_smoother_destroy(&smoother[s]);
  return smoother[1] != NULL || status == TPMG_SUCCESS;
}

/* GLOBAL on every level >= 1 of a grid with a variable coefficient in
 * `layout` and reaction c, each backend against the CPU (coarse cells 3 x 5
 * or 3 x 3 x 5; the coarser levels take the coefficient's means). Adds the
 * cases checked and refused to the counts. */
static void check_coefficient(tpmg_context *cpu, tpmg_context *const *backend_ctx,
                              const char *const *names, int n_names, int dim, int k,
                              tpmg_coefficient_layout layout, double c, uint64_t *seed,
                              int64_t *checked, int64_t *refused) {
  static const int cells[2][3] = {{3, 5, 1}, {3, 3, 5}};
  static const double box[6] = {0.0, 1.0, -0.5, 1.0, 0.25, 1.0};
  const int levels = dim == 2 || k <= 2 ? 2 : 1;
  tpmg_grid *cpu_grid = ref_grid_create_reaction(cpu, dim, k, levels, cells[dim - 2], box, c);
  double *a = gpu_coefficient_values(cpu, cpu_grid, layout, seed);
  REF_CALL(cpu, tpmg_grid_set_coefficient(cpu_grid, layout, a));
  char label[64];
  snprintf(label, sizeof(label), ", coefficient %s, c = %g",
           layout == TPMG_COEFFICIENT_CELLS ? "per cell" : "at quadrature points", c);
  for (int v = 0; v < n_names; v++) {
    gpu_pair pr = {{cpu, backend_ctx[v]},
                   {cpu_grid, ref_grid_create_reaction(backend_ctx[v], dim, k, levels,
                                                       cells[dim - 2], box, c)},
                   TPMG_DOUBLE, layout == TPMG_COEFFICIENT_QUADRATURE ? 4.0 : 1.0};
    REF_CALL(pr.ctx[1], tpmg_grid_set_coefficient(pr.grid[1], layout, a));
    for (int p = 0; p < 2; p++) {
      pr.p = (tpmg_precision)p;
      for (int l = 1; l <= levels; l++) {
        if (check_smoother(&pr, names[v], l, TPMG_SMOOTHER_GLOBAL, label, seed))
          (*checked)++;
        else
          (*refused)++;
      }
    }
    tpmg_grid_destroy(&pr.grid[1]);
  }
  free(a);
  tpmg_grid_destroy(&cpu_grid);
}

int main(int argc, char **argv) {
  const char *names[GPU_VARIANTS];
  const int n_names = gpu_test_backends(names);
  if (n_names == 0) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  const int only_dim = argc > 1 ? atoi(argv[1]) : 0;
  int only_variant = -1;
  for (int v = 0; v < 4 && argc > 2; v++)
    if (strcmp(argv[2], variant_names[v]) == 0)
      only_variant = v;
  if (argc > 2 && only_variant < 0) {
    fprintf(stderr, "unknown variant %s (global, separate, fused, boundary)\n", argv[2]);
    return 2;
  }
  const int only_degree = argc > 3 ? atoi(argv[3]) : 0;
  const int only_level = argc > 4 ? atoi(argv[4]) : 0;
  tpmg_context *cpu = ref_context_create("cpu", 0);
  tpmg_context *backend_ctx[GPU_VARIANTS];
  for (int v = 0; v < n_names; v++)
    backend_ctx[v] = ref_context_create(names[v], 0);
  uint64_t seed = 802;
  int64_t checked = 0, refused = 0;
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
      /* a reaction for every other degree: each kernel with and without one */
      const double c = (k + dim) % 2 ? 0.0 : 123.0;
      gpu_pair pr = {
          {cpu, NULL}, {ref_grid_create_reaction(cpu, dim, k, levels, cells, box, c), NULL}, 0, 1.0};
      for (int v = 0; v < n_names; v++) {
        pr.ctx[1] = backend_ctx[v];
        pr.grid[1] = ref_grid_create_reaction(backend_ctx[v], dim, k, levels, cells, box, c);
        for (int p = 0; p < 2; p++) {
          pr.p = (tpmg_precision)p;
          for (int variant = 0; variant < 4; variant++)
            if (only_variant < 0 || variant == only_variant)
              for (int l = 1; l <= levels; l++) {
                if (check_smoother(&pr, names[v], l, variant, "", &seed))
                  checked++;
                else
                  refused++;
              }
        }
        tpmg_grid_destroy(&pr.grid[1]);
      }
      tpmg_grid_destroy(&pr.grid[0]);
    }
  }
  /* a variable coefficient: GLOBAL only; degrees 1, 2, 3, a middle one and
   * the highest; each layout with and without a reaction over the degrees */
  static const int coefficient_degrees[2][5] = {{1, 2, 3, 6, TPMG_MAX_DEGREE_2D},
                                                {1, 2, 3, 5, TPMG_MAX_DEGREE_3D}};
  for (int dim = 2; dim <= 3 && (only_variant < 0 || only_variant == TPMG_SMOOTHER_GLOBAL); dim++) {
    if (only_dim && dim != only_dim)
      continue;
    for (int i = 0; i < 5; i++) {
      const int k = coefficient_degrees[dim - 2][i];
      if (only_degree && k != only_degree)
        continue;
      for (int layout = 0; layout < 2; layout++)
        check_coefficient(cpu, backend_ctx, names, n_names, dim, k, (tpmg_coefficient_layout)layout,
                          (k + layout) % 2 ? 0.0 : 123.0, &seed, &checked, &refused);
    }
  }
  REF_CHECK(checked > 0, "no case checked (dim %d, degree %d)", only_dim, only_degree);
  if (getenv("TPMG_TEST_VERBOSE"))
    printf("%lld smoother cases checked; %lld refused by cuda/thread\n", (long long)checked,
           (long long)refused);
  for (int v = 0; v < n_names; v++)
    tpmg_context_destroy(&backend_ctx[v]);
  tpmg_context_destroy(&cpu);
  return ref_exit_code("t802-gpu-smoother");
}
