/* Counted work per DoF of the vertex-patch kernels, for the backends'
 * operator_work and smoother_work (tpmg_operator_work, tpmg_smoother_work):
 * multiply-adds, shared-memory words and device-memory words counted from the
 * code of the kernels (cuda_kernels/tpmg-cuda-tensor.cuh; the CPU backend's
 * loops are the dense team kernels' arithmetic). With P = 2k+1 window points
 * and I = 2k-1 interior points of a patch per direction. */
#include <math.h>

#include "tpmg-backend.h"

/* One operator apply by the gather kernels: per vertex (prod (cells_d + 1) of
 * them) the rows k..2k-1 of the vertex patch (R = k rows per direction;
 * sparse: k^2 + 2k nonzeros in these rows, not k (2k+1)); one thread per row
 * (k = 1): the centre row per DoF, the same count. Memory: src read and dst
 * written once. */
void tpmg_work_operator(const tpmg_level *lvl, int sparse, int shared, int matrices_loaded,
                        tpmg_work *work) {
  const int dim = lvl->dim, k = lvl->degree;
  const double P = 2 * k + 1, R = k;
  const double rows = sparse ? (double)k * k + 2 * k : R * P;
  double n_vertices = 1;
  for (int d = 0; d < dim; ++d)
    n_vertices *= (double)(lvl->cells[d] + 1);
  const double per = n_vertices / (double)lvl->n_dofs;
  double fma, words;
  if (dim == 2) {
    fma = 2 * rows * P + 2 * rows * R;
    words = 4 * R * P + R * R;
  } else {
    fma = 2 * rows * P * P + 3 * rows * R * P + 2 * rows * R * R;
    words = 4 * R * P * P + 4 * R * R * P + R * R * R;
  }
  work->flops = 2 * fma * per;
  work->shared_words = shared ? words * per : 0;
  work->matrix_words = matrices_loaded ? fma * per : 0;
  work->memory_words = 2;
}

/* One smoothing step (all 2^dim colours), n_patches = prod_d (cells_d - 1)
 * patches: per patch the residual on the I^dim interior rows of the P^dim
 * window and the fast diagonalization. sparse: rows 1..2k-1 of the patch
 * matrices hold 2k^2 + 2k - 1 nonzeros, not I P, and a line transform by the
 * even and odd eigenvectors takes k^2 + (k-1)^2 multiply-adds, not I^2.
 * mirror (TPMG_WORK_MIRROR, the CPU's batched kernels): every 1D matrix block
 * diagonal in mirror coordinates, 2k^2 multiply-adds per line of the patch
 * matrices' rows and k^2 + (k-1)^2 per transform, plus the passes to and from
 * these coordinates.
 * GLOBAL computes its residual with 2^dim operator applies (`apply`) instead
 * of the patch residuals. Device memory per colour, with the windows' shared
 * planes read once and f = (I / 2k)^dim the fraction of DoFs in the colour's
 * patch interiors: FUSED reads x on the whole window, b_I, x_I again and
 * writes x_I: 1 + 3f, counted as 3; BOUNDARY reads x on the patch boundaries
 * only, b_I and stores x_I: 1 + f; SEPARATE writes r_I in its first pass
 * (1 + 2f) and reads r_I and x_I and writes x_I in its second (3f); GLOBAL an
 * operator apply (2), r = b - r (3) and the solves (3f). */
void tpmg_work_smoother(const tpmg_level *lvl, tpmg_smoother_variant variant, int kind, int shared,
                        int matrices_loaded, const tpmg_work *apply, tpmg_work *work) {
  const int dim = lvl->dim, k = lvl->degree, colours = 1 << dim;
  const int sparse = kind == TPMG_WORK_SPARSE, mirror = kind == TPMG_WORK_MIRROR;
  const double P = 2 * k + 1, I = 2 * k - 1;
  /* per line, rows 1..2k-1 */
  const double rows = sparse ? 2.0 * k * k + 2 * k - 1 : mirror ? 2.0 * k * k : I * P;
  const double transform = sparse || mirror ? (double)k * k + (double)(k - 1) * (k - 1) : I * I;
  /* mirror: a pass to (from) mirror coordinates over an n^dim tensor adds
   * (adds and halves) the n - 1 entries off the centre of every line in every
   * direction, reading and writing them: xbar and b_I to, z_I from; SEPARATE
   * also r_I from and back to, GLOBAL only r_I to and z_I from */
  const double pass_p = mirror ? dim * (P - 1) * pow(P, dim - 1) : 0;
  const double pass_i = mirror ? dim * (I - 1) * pow(I, dim - 1) : 0;
  const double to = variant == TPMG_SMOOTHER_GLOBAL     ? pass_i
                    : variant == TPMG_SMOOTHER_SEPARATE ? pass_p + 2 * pass_i
                                                        : pass_p + pass_i;
  const double from = variant == TPMG_SMOOTHER_SEPARATE ? 2 * pass_i : pass_i;
  double n_patches = 1;
  for (int d = 0; d < dim; ++d)
    n_patches *= (double)(lvl->cells[d] - 1);
  const double per = n_patches / (double)lvl->n_dofs;
  double residual_fma, residual_words, solve_fma, solve_words, extra;
  if (dim == 2) {
    residual_fma = 2 * rows * P + 2 * rows * I;
    residual_words = 4 * I * P;
    solve_fma = 4 * transform * I;
    solve_words = 8 * I * I;
    extra = 3 * I * I; /* subtraction, division, scaling */
  } else {
    residual_fma = 2 * rows * P * P + 3 * rows * I * P + 2 * rows * I * I;
    residual_words = 4 * I * P * P + 4 * I * I * P;
    solve_fma = 6 * transform * I * I;
    /* the block-linear (sparse) kernels subtract their residual from b in the
     * first stage of the solve, not in a pass of its own (2 I^3) */
    solve_words = (sparse ? 10 : 12) * I * I * I;
    extra = 3 * I * I * I;
  }
  extra += to + 2 * from;
  solve_words += 2 * (to + from);
  const double f = pow((2.0 * k - 1) / (2.0 * k), dim);
  if (variant == TPMG_SMOOTHER_GLOBAL) {
    work->flops = colours * apply->flops + (2 * solve_fma + extra) * per;
    work->shared_words = colours * apply->shared_words + (shared ? solve_words * per : 0);
    work->matrix_words = colours * apply->matrix_words + (matrices_loaded ? solve_fma * per : 0);
    work->memory_words = colours * (5 + 3 * f);
    return;
  }
  work->flops = (2 * (residual_fma + solve_fma) + extra) * per;
  work->shared_words = shared ? (residual_words + solve_words) * per : 0;
  work->matrix_words = matrices_loaded ? (residual_fma + solve_fma) * per : 0;
  work->memory_words = colours * (variant == TPMG_SMOOTHER_BOUNDARY   ? 1 + f
                                  : variant == TPMG_SMOOTHER_SEPARATE ? 1 + 5 * f
                                                                      : 3);
}
