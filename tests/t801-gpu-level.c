/* GPU test: the CUDA backend's level operations (laplace with the kernels of
 * each variant of the backend's name: "cuda", "cuda/basic", "cuda/constant",
 * "cuda/tiled", "cuda/thread" for degree 1, "cuda/brick"; copy_boundary,
 * prolongate_add, restrict_, coarse_solve), called through the backend tables
 * of CUDA contexts and a CPU context on grids made with the same options, on random
 * inputs, for dim 2 and 3, every degree of the table and both precisions. CUDA
 * outputs are poisoned with NaN first; entries an operation must not write stay
 * NaN on both sides. Skipped (exit 77) without a GPU.
 * Usage: t801-gpu-level [dim [degree]] limits the cases. */
#include <math.h>
#include <stdlib.h>

#include "gpu-pair.h"
#include "tpmg-impl.h" /* an internal test: the backend tables */

/* The CUDA contexts and grids of each variant (gpu_variant_names). */
static tpmg_context *variant_ctx[GPU_VARIANTS];
static tpmg_grid *variant_grid[GPU_VARIANTS];

static void check_level(const gpu_pair *pr, int l, uint64_t *seed) {
  const tpmg_level *lvl[2] = {&pr->grid[0]->levels[l], &pr->grid[1]->levels[l]};
  const int64_t n = lvl[0]->n_dofs;
  const int dim = lvl[0]->dim, k = lvl[0]->degree;
  double *src = gpu_host_data(seed, n, 0), *nan = gpu_host_data(seed, n, 1);
  void *s[2], *d[2];
  gpu_vectors(pr, n, src, s);

  /* laplace: every entry written, by the kernels of every variant */
  for (int v = 0; v < GPU_VARIANTS; v++) {
    if (!gpu_variant_has_degree(v, k))
      continue;
    const gpu_pair pv = gpu_pair_with(pr, variant_ctx[v], variant_grid[v]);
    const tpmg_level *lv = &variant_grid[v]->levels[l];
    void *sv[2];
    gpu_vectors(&pv, n, src, sv);
    gpu_vectors(&pv, n, nan, d);
    REF_CALL(pv.ctx[0], pv.ctx[0]->ops->laplace(pv.ctx[0], lvl[0], pv.p, sv[0], d[0]));
    REF_CALL(pv.ctx[1], pv.ctx[1]->ops->laplace(pv.ctx[1], lv, pv.p, sv[1], d[1]));
    char what[64];
    snprintf(what, sizeof(what), "laplace %s", gpu_variant_names[v]);
    gpu_compare(&pv, n, d, what, dim, k, l);
    gpu_destroy(&pv, d);
    gpu_destroy(&pv, sv);
  }

  /* copy_boundary: the interior stays NaN */
  gpu_vectors(pr, n, nan, d);
  for (int b = 0; b < 2; b++)
    REF_CALL(pr->ctx[b], pr->ctx[b]->ops->copy_boundary(pr->ctx[b], lvl[b], pr->p, s[b], d[b]));
  gpu_compare(pr, n, d, "copy_boundary", dim, k, l);
  gpu_destroy(pr, d);

  if (l == 0) {
    /* coarse_solve with a random dense "inverse" */
    int64_t n_interior = 1;
    for (int dd = 0; dd < dim; dd++)
      n_interior *= lvl[0]->n[dd] - 2;
    if (n_interior > 0) {
      double *inv = gpu_host_data(seed, n_interior * n_interior, 0);
      void *m[2];
      gpu_vectors(pr, n_interior * n_interior, inv, m);
      gpu_vectors(pr, n, nan, d);
      for (int b = 0; b < 2; b++)
        REF_CALL(pr->ctx[b],
                 pr->ctx[b]->ops->coarse_solve(pr->ctx[b], lvl[b], pr->p, m[b], s[b], d[b]));
      gpu_compare(pr, n, d, "coarse_solve", dim, k, l);
      gpu_destroy(pr, d);
      gpu_destroy(pr, m);
      free(inv);
    }
  } else {
    const tpmg_level *coarse[2] = {&pr->grid[0]->levels[l - 1], &pr->grid[1]->levels[l - 1]};
    const int64_t nc = coarse[0]->n_dofs;
    double *hc = gpu_host_data(seed, nc, 0), *nanc = gpu_host_data(seed, nc, 1);
    void *c[2];
    /* prolongate_add: fine += P coarse, fine starts random */
    gpu_vectors(pr, nc, hc, c);
    double *hf = gpu_host_data(seed, n, 0);
    gpu_vectors(pr, n, hf, d);
    for (int b = 0; b < 2; b++)
      REF_CALL(pr->ctx[b],
               pr->ctx[b]->ops->prolongate_add(pr->ctx[b], coarse[b], lvl[b], pr->p, c[b], d[b]));
    gpu_compare(pr, n, d, "prolongate_add", dim, k, l);
    gpu_destroy(pr, d);
    gpu_destroy(pr, c);
    /* restrict_: every coarse entry written */
    gpu_vectors(pr, nc, nanc, c);
    for (int b = 0; b < 2; b++)
      REF_CALL(pr->ctx[b],
               pr->ctx[b]->ops->restrict_(pr->ctx[b], coarse[b], lvl[b], pr->p, s[b], c[b]));
    gpu_compare(pr, nc, c, "restrict_", dim, k, l);
    gpu_destroy(pr, c);
    free(hc);
    free(nanc);
    free(hf);
  }
  gpu_destroy(pr, s);
  free(src);
  free(nan);
}

/* The operator of "cuda" and "cuda/brick" against the CPU backend, on random
 * data, on the finest level of a grid of the given coarse cells and box;
 * what: the labels of the two. */
static void check_bricks(gpu_pair *pr, int dim, int k, int level, const int cells[3],
                         const double box[6], const char *const what[2], uint64_t *seed) {
  static const int variants[2] = {0, GPU_VARIANTS - 1}; /* "cuda", "cuda/brick" */
  tpmg_grid *cpu_grid = ref_grid_create(pr->ctx[0], dim, k, level, cells, box);
  const int64_t n = cpu_grid->levels[level].n_dofs;
  double *src = gpu_host_data(seed, n, 0), *nan = gpu_host_data(seed, n, 1);
  for (int b = 0; b < 2; b++) {
    tpmg_context *ctx = variant_ctx[variants[b]];
    tpmg_grid *grid = ref_grid_create(ctx, dim, k, level, cells, box);
    gpu_pair pv = gpu_pair_with(pr, ctx, grid);
    pv.grid[0] = cpu_grid;
    const tpmg_level *lvl[2] = {&cpu_grid->levels[level], &grid->levels[level]};
    for (int p = 0; p < 2; p++) {
      pv.p = (tpmg_precision)p;
      void *s[2], *d[2];
      gpu_vectors(&pv, n, src, s);
      gpu_vectors(&pv, n, nan, d);
      for (int c = 0; c < 2; c++)
        REF_CALL(pv.ctx[c], pv.ctx[c]->ops->laplace(pv.ctx[c], lvl[c], pv.p, s[c], d[c]));
      gpu_compare(&pv, n, d, what[b], dim, k, level);
      gpu_destroy(&pv, d);
      gpu_destroy(&pv, s);
    }
    tpmg_grid_destroy(&grid);
  }
  free(src);
  free(nan);
  tpmg_grid_destroy(&cpu_grid);
}

/* A 2D grid with several bricks per direction, the last ones partial (3 x 5
 * coarse cells, level 5: 96 x 160 cells, more than the brick's cells in y for
 * every degree); the levels of check_level fit one brick in y. */
static void check_bricks_2d(gpu_pair *pr, int k, uint64_t *seed) {
  static const int cells[3] = {3, 5, 1};
  static const double box[6] = {0.0, 1.0, -0.5, 1.0, 0.0, 1.0};
  static const char *const what[2] = {"laplace, 3 x 5 cells", "laplace cuda/brick, 3 x 5 cells"};
  check_bricks(pr, 2, k, 5, cells, box, what, seed);
}

/* A 3D grid with several bricks in x and y (C cells each) and several z blocks
 * (G segments of C_s cells each, marched), by brick_table. Per degree a coarse
 * mesh and a level: the level is at least 1 and the coarse mesh has at most
 * TPMG_MAX_COARSE_DOFS interior DoFs (k = 8: 7 * 15 * 39 = 4095). The level's
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
static void check_bricks_3d(gpu_pair *pr, int k, uint64_t *seed) {
  static const int cells[8][3] = {{3, 5, 17}, {3, 4, 7}, {3, 3, 17}, {1, 2, 5},
                                  {1, 2, 5},  {1, 2, 5}, {1, 2, 5},  {1, 2, 5}};
  static const int levels[8] = {2, 2, 1, 2, 2, 2, 2, 2};
  static const double box[6] = {0.0, 1.0, -0.5, 1.0, 0.25, 1.0};
  static const char *const what[2] = {"laplace, 3D bricks", "laplace cuda/brick, 3D bricks"};
  check_bricks(pr, 3, k, levels[k - 1], cells[k - 1], box, what, seed);
}

int main(int argc, char **argv) {
  int available = 0;
  if (tpmg_backend_available("cuda", &available) != TPMG_SUCCESS || !available) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  const int only_dim = argc > 1 ? atoi(argv[1]) : 0, only_degree = argc > 2 ? atoi(argv[2]) : 0;
  gpu_pair pr;
  pr.ctx[0] = ref_context_create("cpu", 0);
  gpu_variant_contexts(variant_ctx);
  pr.ctx[1] = variant_ctx[0];
  uint64_t seed = 801;
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
      pr.grid[0] = ref_grid_create(pr.ctx[0], dim, k, levels, cells, box);
      for (int v = 0; v < GPU_VARIANTS; v++)
        variant_grid[v] = ref_grid_create(variant_ctx[v], dim, k, levels, cells, box);
      pr.grid[1] = variant_grid[0];
      for (int p = 0; p < 2; p++) {
        pr.p = (tpmg_precision)p;
        for (int l = 0; l <= levels; l++)
          check_level(&pr, l, &seed);
      }
      tpmg_grid_destroy(&pr.grid[0]);
      for (int v = 0; v < GPU_VARIANTS; v++)
        tpmg_grid_destroy(&variant_grid[v]);
      if (dim == 2)
        check_bricks_2d(&pr, k, &seed);
      else
        check_bricks_3d(&pr, k, &seed);
    }
  }
  /* a degree outside the table is refused, not approximated */
  {
    tpmg_level lvl = {0};
    lvl.dim = 3;
    lvl.degree = TPMG_MAX_DEGREE_3D + 1;
    for (int d = 0; d < 3; d++)
      lvl.cells[d] = 2, lvl.n[d] = 2 * lvl.degree + 1;
    lvl.n_dofs = lvl.n[0] * lvl.n[1] * lvl.n[2];
    tpmg_status status =
        pr.ctx[1]->ops->laplace(pr.ctx[1], &lvl, TPMG_DOUBLE, (const void *)16, (void *)16);
    REF_CHECK(status == TPMG_ERROR_UNSUPPORTED, "laplace with Q%d in 3D returned %d, expected %d",
              lvl.degree, (int)status, (int)TPMG_ERROR_UNSUPPORTED);
  }
  /* "cuda/thread" has degree 1 only: its operator is refused for other degrees */
  {
    tpmg_context *thread = variant_ctx[4];
    tpmg_grid *grid = ref_grid_create(thread, 3, 2, 1, NULL, NULL);
    tpmg_operator *op = NULL;
    tpmg_status status = tpmg_operator_create(grid, 1, TPMG_DOUBLE, &op);
    REF_CHECK(status == TPMG_ERROR_UNSUPPORTED && !op,
              "tpmg_operator_create on cuda/thread with Q2: status %d, expected %d", (int)status,
              (int)TPMG_ERROR_UNSUPPORTED);
    status =
        thread->ops->laplace(thread, &grid->levels[1], TPMG_DOUBLE, (const void *)16, (void *)16);
    REF_CHECK(status == TPMG_ERROR_UNSUPPORTED, "laplace on cuda/thread with Q2: status %d",
              (int)status);
    tpmg_grid_destroy(&grid);
  }
  for (int v = 0; v < GPU_VARIANTS; v++)
    tpmg_context_destroy(&variant_ctx[v]);
  tpmg_context_destroy(&pr.ctx[0]);
  return ref_exit_code("t801-gpu-level");
}
