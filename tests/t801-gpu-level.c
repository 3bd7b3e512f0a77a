/* GPU test: the CUDA backend's level objects against the CPU backend, through
 * the public API only, on contexts of each name of the CUDA backend ("cuda",
 * "cuda/basic", "cuda/constant", "cuda/tiled", "cuda/thread" for degree 1,
 * "cuda/brick"): tpmg_operator_apply and tpmg_operator_diagonal on every level,
 * tpmg_transfer_prolongate_add and tpmg_transfer_restrict between each pair of
 * levels, tpmg_coarse_apply on level 0, on grids made with the same options,
 * on random inputs, for dim 2 and 3, every degree of the table and both
 * precisions; then the operator on grids of several bricks per direction.
 * The grids carry a reaction term (tpmg_grid_options.reaction) for every other
 * degree (c = 0 for odd k + dim, 123 for even) and on the brick grids (31),
 * so that each kernel runs with and without one.
 * Outputs are poisoned with NaN first and every entry must be written.
 * "cuda/thread" must refuse the operator for degrees other than 1
 * (TPMG_ERROR_UNSUPPORTED). Then the operator on every level of grids with a
 * variable coefficient (tpmg_grid_set_coefficient, the same random values in
 * [0.1, 10) on both sides), per cell and at the quadrature points, with and
 * without a reaction, several degrees up to the highest, level 0 of odd cell
 * counts (3 x 5, 3 x 3 x 5). Skipped (exit 77) without a GPU.
 * TPMG_TEST_GPU_BACKEND=NAME checks the backend NAME instead of the CUDA
 * names (e.g. "cpu/scalar": this test's logic without a GPU).
 * Usage: t801-gpu-level [dim [degree]] limits the cases. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-pair.h"

static const char *names[GPU_VARIANTS];
static int n_names;
static tpmg_context *backend_ctx[GPU_VARIANTS];
static int64_t refused; /* operator cases "cuda/thread" refused, as it must */

/* The operator of level l on both sides of pr: apply, and with `diagonal` the
 * diagonal. Returns without a check where the backend refuses the degree,
 * after checking that it does. */
static void check_operator(const gpu_pair *pr, const char *name, int l, const char *label,
                           int diagonal, uint64_t *seed) {
  tpmg_index n = 0;
  REF_CALL(pr->ctx[0], tpmg_grid_level_size(pr->grid[0], l, &n, NULL));
  tpmg_grid_options go = tpmg_grid_options_default();
  REF_CALL(pr->ctx[0], tpmg_grid_get_options(pr->grid[0], &go));
  const int dim = go.dim, k = go.degree;
  tpmg_operator *op[2] = {NULL, NULL};
  REF_CALL(pr->ctx[0], tpmg_operator_create(pr->grid[0], l, pr->p, &op[0]));
  tpmg_status status = tpmg_operator_create(pr->grid[1], l, pr->p, &op[1]);
  if (gpu_backend_refuses(name, k)) {
    REF_CHECK(status == TPMG_ERROR_UNSUPPORTED && !op[1],
              "tpmg_operator_create on %s for %dD Q%d: status %d, expected %d", name, dim, k,
              (int)status, (int)TPMG_ERROR_UNSUPPORTED);
    tpmg_operator_destroy(&op[1]);
    tpmg_operator_destroy(&op[0]);
    refused++;
    return;
  }
  REF_CALL(pr->ctx[1], status);
  if (!op[1]) {
    tpmg_operator_destroy(&op[0]);
    return;
  }
  double *src = gpu_host_data(seed, n, 0), *nan = gpu_host_data(seed, n, 1);
  void *s[2], *d[2];
  char what[160];
  gpu_vectors(pr, n, src, s);
  gpu_vectors(pr, n, nan, d);
  for (int b = 0; b < 2; b++)
    REF_CALL(pr->ctx[b], tpmg_operator_apply(op[b], s[b], d[b]));
  snprintf(what, sizeof(what), "tpmg_operator_apply %s%s", name, label);
  gpu_compare_written(pr, n, d, what, dim, k, l);
  gpu_destroy(pr, d);
  if (diagonal) {
    gpu_vectors(pr, n, nan, d);
    for (int b = 0; b < 2; b++)
      REF_CALL(pr->ctx[b], tpmg_operator_diagonal(op[b], d[b]));
    snprintf(what, sizeof(what), "tpmg_operator_diagonal %s%s", name, label);
    gpu_compare_written(pr, n, d, what, dim, k, l);
    gpu_destroy(pr, d);
  }
  gpu_destroy(pr, s);
  for (int b = 0; b < 2; b++)
    tpmg_operator_destroy(&op[b]);
  free(src);
  free(nan);
}

/* The transfer into level l >= 1, or the coarse solver on l = 0. */
static void check_transfer_coarse(const gpu_pair *pr, const char *name, int l, uint64_t *seed) {
  tpmg_index n = 0;
  REF_CALL(pr->ctx[0], tpmg_grid_level_size(pr->grid[0], l, &n, NULL));
  tpmg_grid_options go = tpmg_grid_options_default();
  REF_CALL(pr->ctx[0], tpmg_grid_get_options(pr->grid[0], &go));
  const int dim = go.dim, k = go.degree;
  char what[96];
  if (l == 0) {
    tpmg_coarse *coarse[2] = {NULL, NULL};
    for (int b = 0; b < 2; b++)
      REF_CALL(pr->ctx[b], tpmg_coarse_create(pr->grid[b], pr->p, &coarse[b]));
    if (coarse[0] && coarse[1]) {
      double *hb = gpu_host_data(seed, n, 0), *nan = gpu_host_data(seed, n, 1);
      void *b[2], *x[2];
      gpu_vectors(pr, n, hb, b);
      gpu_vectors(pr, n, nan, x);
      for (int s = 0; s < 2; s++)
        REF_CALL(pr->ctx[s], tpmg_coarse_apply(coarse[s], b[s], x[s]));
      snprintf(what, sizeof(what), "tpmg_coarse_apply %s", name);
      gpu_compare_written(pr, n, x, what, dim, k, l);
      gpu_destroy(pr, x);
      gpu_destroy(pr, b);
      free(hb);
      free(nan);
    }
    for (int b = 0; b < 2; b++)
      tpmg_coarse_destroy(&coarse[b]);
    return;
  }
  tpmg_index nc = 0;
  REF_CALL(pr->ctx[0], tpmg_grid_level_size(pr->grid[0], l - 1, &nc, NULL));
  tpmg_transfer *transfer[2] = {NULL, NULL};
  for (int b = 0; b < 2; b++)
    REF_CALL(pr->ctx[b], tpmg_transfer_create(pr->grid[b], l, pr->p, &transfer[b]));
  if (transfer[0] && transfer[1]) {
    double *hc = gpu_host_data(seed, nc, 0), *nanc = gpu_host_data(seed, nc, 1),
           *hf = gpu_host_data(seed, n, 0);
    void *c[2], *f[2];
    /* prolongate_add: fine += P coarse, fine starts random */
    gpu_vectors(pr, nc, hc, c);
    gpu_vectors(pr, n, hf, f);
    for (int b = 0; b < 2; b++)
      REF_CALL(pr->ctx[b], tpmg_transfer_prolongate_add(transfer[b], c[b], f[b]));
    snprintf(what, sizeof(what), "tpmg_transfer_prolongate_add %s", name);
    gpu_compare_written(pr, n, f, what, dim, k, l);
    gpu_destroy(pr, c);
    /* restrict: every coarse entry written */
    gpu_vectors(pr, nc, nanc, c);
    for (int b = 0; b < 2; b++)
      REF_CALL(pr->ctx[b], tpmg_transfer_restrict(transfer[b], f[b], c[b]));
    snprintf(what, sizeof(what), "tpmg_transfer_restrict %s", name);
    gpu_compare_written(pr, nc, c, what, dim, k, l);
    gpu_destroy(pr, c);
    gpu_destroy(pr, f);
    free(hc);
    free(nanc);
    free(hf);
  }
  for (int b = 0; b < 2; b++)
    tpmg_transfer_destroy(&transfer[b]);
}

/* The operator of every backend against the CPU backend on the finest level
 * of a grid of the given coarse cells and box (several bricks). */
static void check_bricks(tpmg_context *cpu, tpmg_precision p, int dim, int k, int level,
                         const int cells[3], const double box[6], const char *label,
                         uint64_t *seed) {
  const double c = 31.0;
  gpu_pair pr = {
      {cpu, NULL}, {ref_grid_create_reaction(cpu, dim, k, level, cells, box, c), NULL}, p, 1.0};
  for (int v = 0; v < n_names; v++) {
    pr.ctx[1] = backend_ctx[v];
    pr.grid[1] = ref_grid_create_reaction(backend_ctx[v], dim, k, level, cells, box, c);
    check_operator(&pr, names[v], level, label, 1, seed);
    tpmg_grid_destroy(&pr.grid[1]);
  }
  tpmg_grid_destroy(&pr.grid[0]);
}

/* A 2D grid with several bricks per direction, the last ones partial (3 x 5
 * coarse cells, level 5: 96 x 160 cells, more than the brick's cells in y for
 * every degree); the levels of main's grids fit one brick in y. */
static void check_bricks_2d(tpmg_context *cpu, tpmg_precision p, int k, uint64_t *seed) {
  static const int cells[3] = {3, 5, 1};
  static const double box[6] = {0.0, 1.0, -0.5, 1.0, 0.0, 1.0};
  check_bricks(cpu, p, 2, k, 5, cells, box, ", 3 x 5 cells", seed);
}

/* A 3D grid with several bricks in x and y (C cells each) and several z blocks
 * (G segments of C_s cells each, marched), by brick_table. Per degree a coarse
 * mesh and a level: the level is at least 1 and the coarse mesh has at most
 * TPMG_MAX_COARSE_DOFS interior DoFs (k = 8: 7 * 15 * 39 = 4095), so that its
 * coarse solve is the backend's dense one, checked here. The level's
 * cells per direction as full bricks + the last one: the number of bricks (in
 * z: G x C_s of the precision)
 *   k  coarse     level C  x         y          z double             z float            DoFs
 *   1  3 x 5 x 17   2   8  8+4: 2    2*8+4: 3   2*32+4: 3 (4 x 8)    64+4: 2 (4 x 16)    18837
 *   2  3 x 4 x 7    2   5  2*5+2: 3  3*5+1: 4   3*8+4: 4 (2 x 4)     24+4: 2 (4 x 6)     47025
 *   3  3 x 3 x 17   1   4  4+2: 2    4+2: 2     5*6+4: 6 (2 x 3)     24+10: 2 (4 x 6)    37183
 *   4  1 x 2 x 5    2   3  3+1: 2    2*3+2: 3   2*8+4: 3 (4 x 2)     12+8: 2 (4 x 3)     45441
 *   5  1 x 2 x 5    2   2  2+2: 2    3*2+2: 4   2*8+4: 3 (4 x 2)     12+8: 2 (4 x 3)     86961
 *   6  1 x 2 x 5    2   2  2+2: 2    3*2+2: 4   2*8+4: 3 (8 x 1)     2*8+4: 3 (8 x 1)   148225
 *   7  1 x 2 x 5    2   2  2+2: 2    3*2+2: 4   2*8+4: 3 (8 x 1)     16+4: 2 (8 x 2)    233073
 *   8  1 x 2 x 5    2   2  2+2: 2    3*2+2: 4   16+4: 2 (16 x 1)     2*8+4: 3 (4 x 2)   345345
 * The last z block is partial for every degree; the last brick in x and y is
 * too, except for C = 2: the level's cells are even, so its last brick is full
 * (and owns the last point). */
static void check_bricks_3d(tpmg_context *cpu, tpmg_precision p, int k, uint64_t *seed) {
  static const int cells[8][3] = {{3, 5, 17}, {3, 4, 7}, {3, 3, 17}, {1, 2, 5},
                                  {1, 2, 5},  {1, 2, 5}, {1, 2, 5},  {1, 2, 5}};
  static const int levels[8] = {2, 2, 1, 2, 2, 2, 2, 2};
  static const double box[6] = {0.0, 1.0, -0.5, 1.0, 0.25, 1.0};
  check_bricks(cpu, p, 3, k, levels[k - 1], cells[k - 1], box, ", 3D bricks", seed);
}

/* The operator on every level of a grid with a variable coefficient in
 * `layout` and reaction c, each backend against the CPU: coarse cells 3 x 5
 * (2D) or 3 x 3 x 5 (3D), odd, so that level 0's cell colours have unequal
 * counts; the coarser levels take the coefficient's means (per cell). */
static void check_coefficient(tpmg_context *cpu, int dim, int k, tpmg_coefficient_layout layout,
                              double c, uint64_t *seed) {
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
                   TPMG_DOUBLE, 1.0};
    REF_CALL(pr.ctx[1], tpmg_grid_set_coefficient(pr.grid[1], layout, a));
    for (int p = 0; p < 2; p++) {
      pr.p = (tpmg_precision)p;
      for (int l = 0; l <= levels; l++)
        check_operator(&pr, names[v], l, label, 0, seed);
    }
    tpmg_grid_destroy(&pr.grid[1]);
  }
  free(a);
  tpmg_grid_destroy(&cpu_grid);
}

int main(int argc, char **argv) {
  n_names = gpu_test_backends(names);
  if (n_names == 0) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  const int only_dim = argc > 1 ? atoi(argv[1]) : 0, only_degree = argc > 2 ? atoi(argv[2]) : 0;
  tpmg_context *cpu = ref_context_create("cpu", 0);
  for (int v = 0; v < n_names; v++)
    backend_ctx[v] = ref_context_create(names[v], 0);
  uint64_t seed = 801;
  int64_t checked = 0;
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
      const int levels = dim == 2 ? 3 : (k <= 3 ? 3 : 2);
      const double c = (k + dim) % 2 ? 0.0 : 123.0;
      gpu_pair pr = {
          {cpu, NULL}, {ref_grid_create_reaction(cpu, dim, k, levels, cells, box, c), NULL}, 0, 1.0};
      for (int v = 0; v < n_names; v++) {
        pr.ctx[1] = backend_ctx[v];
        pr.grid[1] = ref_grid_create_reaction(backend_ctx[v], dim, k, levels, cells, box, c);
        for (int p = 0; p < 2; p++) {
          pr.p = (tpmg_precision)p;
          for (int l = 0; l <= levels; l++) {
            check_operator(&pr, names[v], l, "", 1, &seed);
            check_transfer_coarse(&pr, names[v], l, &seed);
            checked++;
          }
        }
        tpmg_grid_destroy(&pr.grid[1]);
      }
      tpmg_grid_destroy(&pr.grid[0]);
      for (int p = 0; p < 2; p++) {
        if (dim == 2)
          check_bricks_2d(cpu, (tpmg_precision)p, k, &seed);
        else
          check_bricks_3d(cpu, (tpmg_precision)p, k, &seed);
      }
    }
  }
  /* a variable coefficient: degrees 1, 2, 3, a middle one and the highest;
   * each layout with and without a reaction over the degrees */
  static const int coefficient_degrees[2][5] = {{1, 2, 3, 6, TPMG_MAX_DEGREE_2D},
                                                {1, 2, 3, 5, TPMG_MAX_DEGREE_3D}};
  for (int dim = 2; dim <= 3; dim++) {
    if (only_dim && dim != only_dim)
      continue;
    for (int i = 0; i < 5; i++) {
      const int k = coefficient_degrees[dim - 2][i];
      if (only_degree && k != only_degree)
        continue;
      for (int layout = 0; layout < 2; layout++) {
        check_coefficient(cpu, dim, k, (tpmg_coefficient_layout)layout,
                          (k + layout) % 2 ? 0.0 : 123.0, &seed);
        checked++;
      }
    }
  }
  REF_CHECK(checked > 0, "no case checked (dim %d, degree %d)", only_dim, only_degree);
  if (getenv("TPMG_TEST_VERBOSE"))
    printf("%lld level cases checked; %lld operator cases refused by cuda/thread\n",
           (long long)checked, (long long)refused);
  for (int v = 0; v < n_names; v++)
    tpmg_context_destroy(&backend_ctx[v]);
  tpmg_context_destroy(&cpu);
  return ref_exit_code("t801-gpu-level");
}
