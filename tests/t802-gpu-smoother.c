/* GPU test: the CUDA backend's vertex-patch smoother against the CPU backend:
 * the operations patch_residual, patch_solve and patch_fused (FUSED and
 * BOUNDARY) for every colour through the backend tables, and
 * tpmg_smoother_apply of each variant (forward and reverse colour order)
 * through the public API, each with the kernels of every variant of the CUDA
 * backend's name ("cuda", "cuda/basic", "cuda/constant", "cuda/tiled",
 * "cuda/thread" for degree 1; "cuda/brick" runs the smoother of "cuda"), on
 * random inputs, for dim 2
 * and 3, every degree of the table and both precisions. CUDA outputs are
 * poisoned with NaN first; entries an operation must not write stay NaN on
 * both sides. BOUNDARY's patch_fused gets x with NaN on the interiors of the
 * colour's patches, which it must overwrite without reading them.
 * Skipped (exit 77) without a GPU.
 * Usage: t802-gpu-smoother [dim [global|separate|fused|boundary [degree [level]]]]
 * limits the cases (the sanitizer runs of tests/gpu/run-all.sh use this). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-pair.h"
#include "tpmg-impl.h" /* an internal test: the backend tables */

static const char *variant_names[4] = {"global", "separate", "fused", "boundary"};

/* The CUDA contexts and grids of each variant (gpu_variant_names). */
static tpmg_context *variant_ctx[GPU_VARIANTS];
static tpmg_grid *variant_grid[GPU_VARIANTS];

/* The variants whose smoother kernels to check for degree k: all that have
 * the degree, but "cuda/brick" (the smoother of "cuda"). */
static int variants_of(int k, int *variants) {
  int n = 0;
  for (int v = 0; v < GPU_VARIANTS; v++)
    if (gpu_variant_has_degree(v, k) && strcmp(gpu_variant_names[v], "cuda/brick") != 0)
      variants[n++] = v;
  return n;
}

/* A copy of hx with NaN on the interiors of the patches of `colour`:
 * vertices v_d = 1 + c_d + 2 t <= cells_d - 1, points (v_d - 1) k + 1 ..
 * (v_d + 1) k - 1. The caller frees it. */
static double *poison_interiors(const tpmg_level *lvl, int colour, const double *hx) {
  double *x = ref_malloc(sizeof(double) * (size_t)lvl->n_dofs);
  memcpy(x, hx, sizeof(double) * (size_t)lvl->n_dofs);
  const int k = lvl->degree;
  tpmg_index first[3] = {0, 0, 0}, last[3] = {0, 0, 0};
  for (int d = 0; d < lvl->dim; d++) {
    first[d] = 1 + ((colour >> d) & 1);
    last[d] = lvl->cells[d] - 1;
  }
  for (tpmg_index v2 = first[2]; v2 <= last[2]; v2 += 2)
    for (tpmg_index v1 = first[1]; v1 <= last[1]; v1 += 2)
      for (tpmg_index v0 = first[0]; v0 <= last[0]; v0 += 2) {
        const tpmg_index v[3] = {v0, v1, v2};
        tpmg_index lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
        for (int d = 0; d < lvl->dim; d++) {
          lo[d] = (v[d] - 1) * k + 1;
          hi[d] = (v[d] + 1) * k - 1;
        }
        for (tpmg_index i2 = lo[2]; i2 <= hi[2]; i2++)
          for (tpmg_index i1 = lo[1]; i1 <= hi[1]; i1++)
            for (tpmg_index i0 = lo[0]; i0 <= hi[0]; i0++)
              x[i0 + lvl->n[0] * (i1 + lvl->n[1] * i2)] = NAN;
      }
  return x;
}

/* One patch operation of one colour: the CPU result once, then the CUDA result
 * of each variant's kernels from the same inputs. op: 0 residual, 1 solve, 2 fused,
 * 3 fused with boundary (from x poisoned on the colour's patch interiors). */
static void check_op(const gpu_pair *pr, int l, int op, int colour, const double *hb,
                     const double *hx, const double *nan) {
  const tpmg_level *lvl0 = &pr->grid[0]->levels[l];
  const int64_t n = lvl0->n_dofs;
  const int dim = lvl0->dim, k = lvl0->degree;
  static const char *op_names[4] = {"patch_residual", "patch_solve", "patch_fused",
                                    "patch_fused (boundary)"};
  double *poisoned = op == 3 ? poison_interiors(lvl0, colour, hx) : NULL;
  int variants[GPU_VARIANTS];
  const int n_variants = variants_of(k, variants);
  void *out[2] = {NULL, NULL};
  for (int run = -1; run < n_variants; run++) {
    /* run -1: the CPU; then one CUDA run per variant */
    const int s = run < 0 ? 0 : 1;
    tpmg_context *ctx = run < 0 ? pr->ctx[0] : variant_ctx[variants[run]];
    const tpmg_level *lvl = run < 0 ? lvl0 : &variant_grid[variants[run]]->levels[l];
    void *b = gpu_vector_from(ctx, pr->p, n, hb);
    void *x = gpu_vector_from(ctx, pr->p, n, poisoned ? poisoned : hx);
    if (op == 0) {
      out[s] = gpu_vector_from(ctx, pr->p, n, nan);
      REF_CALL(ctx, ctx->ops->patch_residual(ctx, lvl, pr->p, colour, b, x, out[s]));
      tpmg_vector_destroy(ctx, &x);
    } else if (op == 1) {
      /* b serves as the residual */
      REF_CALL(ctx, ctx->ops->patch_solve(ctx, lvl, pr->p, colour, b, x));
      out[s] = x;
    } else {
      REF_CALL(ctx, ctx->ops->patch_fused(ctx, lvl, pr->p, colour, op == 3, b, x));
      out[s] = x;
      if (op == 3 && s == 0) {
        /* the reference overwrote every poisoned entry */
        double *h = ref_malloc(sizeof(double) * (size_t)n);
        gpu_vector_to(ctx, pr->p, n, x, h);
        int64_t nans = 0;
        for (int64_t i = 0; i < n; i++)
          nans += isnan(h[i]) != 0;
        REF_CHECK(nans == 0,
                  "%s colour %d %dD Q%d level %d: the CPU result has %lld NaN, expected 0",
                  op_names[op], colour, dim, k, l, (long long)nans);
        free(h);
      }
    }
    tpmg_vector_destroy(ctx, &b);
    if (s == 1) {
      char what[96];
      snprintf(what, sizeof(what), "%s colour %d %s", op_names[op], colour,
               gpu_variant_names[variants[run]]);
      const gpu_pair pv = gpu_pair_with(pr, ctx, variant_grid[variants[run]]);
      gpu_compare(&pv, n, out, what, dim, k, l);
      tpmg_vector_destroy(ctx, &out[1]);
    }
  }
  tpmg_vector_destroy(pr->ctx[0], &out[0]);
  free(poisoned);
}

static void check_smoother(const gpu_pair *pr, int l, int variant, uint64_t *seed) {
  const tpmg_level *lvl0 = &pr->grid[0]->levels[l];
  const int64_t n = lvl0->n_dofs;
  const int dim = lvl0->dim, k = lvl0->degree;
  double *hb = gpu_host_data(seed, n, 0), *hx = gpu_host_data(seed, n, 0),
         *nan = gpu_host_data(seed, n, 1);
  /* the backend operations the variant uses */
  for (int colour = 0; colour < (1 << dim); colour++) {
    if (variant == TPMG_SMOOTHER_SEPARATE)
      check_op(pr, l, 0, colour, hb, hx, nan);
    const int op = variant == TPMG_SMOOTHER_FUSED ? 2 : variant == TPMG_SMOOTHER_BOUNDARY ? 3 : 1;
    check_op(pr, l, op, colour, hb, hx, nan);
  }
  /* whole smoothing steps through the public API, forward then reverse */
  int variants[GPU_VARIANTS];
  const int n_variants = variants_of(k, variants);
  for (int vv = 0; vv < n_variants; vv++) {
    const gpu_pair pv = gpu_pair_with(pr, variant_ctx[variants[vv]], variant_grid[variants[vv]]);
    tpmg_smoother_options options = tpmg_smoother_options_default();
    options.variant = (tpmg_smoother_variant)variant;
    tpmg_smoother *smoother[2];
    void *b[2], *x[2];
    for (int s = 0; s < 2; s++)
      REF_CALL(pv.ctx[s], tpmg_smoother_create(pv.grid[s], l, pv.p, &options, &smoother[s]));
    gpu_vectors(&pv, n, hb, b);
    gpu_vectors(&pv, n, hx, x);
    for (int reverse = 0; reverse < 2; reverse++) {
      for (int s = 0; s < 2; s++)
        REF_CALL(pv.ctx[s], tpmg_smoother_apply(smoother[s], reverse, b[s], x[s]));
      char what[96];
      snprintf(what, sizeof(what), "tpmg_smoother_apply %s %s%s", variant_names[variant],
               gpu_variant_names[variants[vv]], reverse ? " reverse" : "");
      gpu_compare(&pv, n, x, what, dim, k, l);
    }
    gpu_destroy(&pv, x);
    gpu_destroy(&pv, b);
    for (int s = 0; s < 2; s++)
      tpmg_smoother_destroy(&smoother[s]);
  }
  free(hb);
  free(hx);
  free(nan);
}

/* "cuda/thread" is refused for degrees other than 1, by tpmg_smoother_create
 * and by the backend's operations. */
static void check_thread_refused(const gpu_pair *pr) {
  const int k = pr->grid[0]->options.degree;
  if (k == 1)
    return;
  tpmg_context *thread = variant_ctx[4];
  tpmg_grid *grid = variant_grid[4];
  tpmg_smoother *smoother = NULL;
  tpmg_status status = tpmg_smoother_create(grid, 1, pr->p, NULL, &smoother);
  REF_CHECK(status == TPMG_ERROR_UNSUPPORTED && !smoother,
            "tpmg_smoother_create on cuda/thread for Q%d: status %d, expected %d", k, (int)status,
            (int)TPMG_ERROR_UNSUPPORTED);
  REF_CHECK(strstr(tpmg_context_last_error(thread), "degree 1") != NULL,
            "tpmg_smoother_create on cuda/thread for Q%d: message \"%s\" does not say degree 1", k,
            tpmg_context_last_error(thread));
  status =
      thread->ops->patch_fused(thread, &grid->levels[1], pr->p, 0, 0, (const void *)16, (void *)16);
  REF_CHECK(status == TPMG_ERROR_UNSUPPORTED, "patch_fused on cuda/thread for Q%d: status %d", k,
            (int)status);
}

int main(int argc, char **argv) {
  int available = 0;
  if (tpmg_backend_available("cuda", &available) != TPMG_SUCCESS || !available) {
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
  gpu_pair pr;
  pr.ctx[0] = ref_context_create("cpu", 0);
  gpu_variant_contexts(variant_ctx);
  pr.ctx[1] = variant_ctx[0];
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
      pr.grid[0] = ref_grid_create(pr.ctx[0], dim, k, levels, cells, box);
      for (int v = 0; v < GPU_VARIANTS; v++)
        variant_grid[v] = ref_grid_create(variant_ctx[v], dim, k, levels, cells, box);
      pr.grid[1] = variant_grid[0];
      for (int p = 0; p < 2; p++) {
        pr.p = (tpmg_precision)p;
        for (int v = 0; v < 4; v++)
          if (only_variant < 0 || v == only_variant)
            for (int l = 1; l <= levels; l++)
              check_smoother(&pr, l, v, &seed);
        check_thread_refused(&pr);
      }
      tpmg_grid_destroy(&pr.grid[0]);
      for (int v = 0; v < GPU_VARIANTS; v++)
        tpmg_grid_destroy(&variant_grid[v]);
    }
  }
  for (int v = 0; v < GPU_VARIANTS; v++)
    tpmg_context_destroy(&variant_ctx[v]);
  tpmg_context_destroy(&pr.ctx[0]);
  return ref_exit_code("t802-gpu-smoother");
}
