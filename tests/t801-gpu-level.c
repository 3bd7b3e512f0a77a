/* GPU test: the CUDA backend's level operations (laplace with each kernel,
 * copy_boundary, prolongate_add, restrict_, coarse_solve), called through the backend tables
 * of a CUDA and a CPU context on grids made with the same options, on random
 * inputs, for dim 2 and 3, every degree of the table and both precisions. CUDA
 * outputs are poisoned with NaN first; entries an operation must not write stay
 * NaN on both sides. Skipped (exit 77) without a GPU.
 * Usage: t801-gpu-level [dim [degree]] limits the cases. */
#include <math.h>
#include <stdlib.h>

#include "gpu-pair.h"
#include "tpmg-impl.h" /* an internal test: the backend tables */

static void check_level(const gpu_pair *pr, int l, uint64_t *seed) {
  const tpmg_level *lvl[2] = {&pr->grid[0]->levels[l], &pr->grid[1]->levels[l]};
  const int64_t n = lvl[0]->n_dofs;
  const int dim = lvl[0]->dim, k = lvl[0]->degree;
  double *src = gpu_host_data(seed, n, 0), *nan = gpu_host_data(seed, n, 1);
  void *s[2], *d[2];
  gpu_vectors(pr, n, src, s);

  /* laplace: every entry written, by every kernel (THREAD: degree 1) */
  for (int kern = TPMG_KERNEL_DEFAULT; kern <= TPMG_KERNEL_BRICK; kern++) {
    static const char *names[6] = {"laplace",
                                   "laplace kernel basic",
                                   "laplace kernel constant",
                                   "laplace kernel thread",
                                   "laplace kernel tiled",
                                   "laplace kernel brick"};
    if (kern == TPMG_KERNEL_THREAD && k != 1)
      continue;
    gpu_vectors(pr, n, nan, d);
    REF_CALL(pr->ctx[0], pr->ctx[0]->ops->laplace(pr->ctx[0], lvl[0], pr->p, s[0], d[0]));
    if (kern == TPMG_KERNEL_DEFAULT)
      REF_CALL(pr->ctx[1], pr->ctx[1]->ops->laplace(pr->ctx[1], lvl[1], pr->p, s[1], d[1]));
    else
      REF_CALL(pr->ctx[1], pr->ctx[1]->ops->laplace_kernel(pr->ctx[1], lvl[1], pr->p,
                                                           (tpmg_kernel)kern, s[1], d[1]));
    gpu_compare(pr, n, d, names[kern], dim, k, l);
    gpu_destroy(pr, d);
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

/* The operator by the default and the BRICK kernel against the CPU backend, on
 * random data, on the finest level of a grid of the given coarse cells and
 * box; what: the labels of the two kernels. */
static void check_bricks(gpu_pair *pr, int dim, int k, int level, const int cells[3],
                         const double box[6], const char *const what[2], uint64_t *seed) {
  for (int s = 0; s < 2; s++)
    pr->grid[s] = ref_grid_create(pr->ctx[s], dim, k, level, cells, box);
  const tpmg_level *lvl[2] = {&pr->grid[0]->levels[level], &pr->grid[1]->levels[level]};
  const int64_t n = lvl[0]->n_dofs;
  double *src = gpu_host_data(seed, n, 0), *nan = gpu_host_data(seed, n, 1);
  for (int p = 0; p < 2; p++) {
    pr->p = (tpmg_precision)p;
    void *s[2], *d[2];
    gpu_vectors(pr, n, src, s);
    for (int brick = 0; brick < 2; brick++) {
      gpu_vectors(pr, n, nan, d);
      REF_CALL(pr->ctx[0], pr->ctx[0]->ops->laplace(pr->ctx[0], lvl[0], pr->p, s[0], d[0]));
      REF_CALL(pr->ctx[1], pr->ctx[1]->ops->laplace_kernel(
                               pr->ctx[1], lvl[1], pr->p,
                               brick ? TPMG_KERNEL_BRICK : TPMG_KERNEL_DEFAULT, s[1], d[1]));
      gpu_compare(pr, n, d, what[brick], dim, k, level);
      gpu_destroy(pr, d);
    }
    gpu_destroy(pr, s);
  }
  free(src);
  free(nan);
  for (int s = 0; s < 2; s++)
    tpmg_grid_destroy(&pr->grid[s]);
}

/* A 2D grid with several bricks per direction, the last ones partial (3 x 5
 * coarse cells, level 5: 96 x 160 cells, more than the brick's cells in y for
 * every degree); the levels of check_level fit one brick in y. */
static void check_bricks_2d(gpu_pair *pr, int k, uint64_t *seed) {
  static const int cells[3] = {3, 5, 1};
  static const double box[6] = {0.0, 1.0, -0.5, 1.0, 0.0, 1.0};
  static const char *const what[2] = {"laplace, 3 x 5 cells", "laplace kernel brick, 3 x 5 cells"};
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
  static const char *const what[2] = {"laplace, 3D bricks", "laplace kernel brick, 3D bricks"};
  check_bricks(pr, 3, k, levels[k - 1], cells[k - 1], box, what, seed);
}

int main(int argc, char **argv) {
  int available = 0;
  if (tpmg_backend_available("cuda", &available) != TPMG_SUCCESS || !available) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  const int only_dim = argc > 1 ? atoi(argv[1]) : 0, only_degree = argc > 2 ? atoi(argv[2]) : 0;
  tpmg_context_options options = tpmg_context_options_default();
  gpu_pair pr;
  pr.ctx[0] = ref_context_create("cpu", 0);
  options.backend = "cuda";
  REF_CALL(NULL, tpmg_context_create(&options, &pr.ctx[1]));
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
      for (int s = 0; s < 2; s++)
        pr.grid[s] = ref_grid_create(pr.ctx[s], dim, k, levels, cells, box);
      for (int p = 0; p < 2; p++) {
        pr.p = (tpmg_precision)p;
        for (int l = 0; l <= levels; l++)
          check_level(&pr, l, &seed);
      }
      for (int s = 0; s < 2; s++)
        tpmg_grid_destroy(&pr.grid[s]);
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
  tpmg_context_destroy(&pr.ctx[1]);
  tpmg_context_destroy(&pr.ctx[0]);
  return ref_exit_code("t801-gpu-level");
}
