/* t600-solver-convergence: the discretization converges at order k+1 in L2 for
 * u = prod sin(pi x_d) (TPMG_RHS_SINE), solved by GMRES to 1e-12:
 * - the rate log2(e_L / e_{L+1}) is within 0.3 of k+1, on the unit square/cube
 *   and on an anisotropic box with several coarse cells where g != 0;
 * - tpmg_problem_l2_error agrees with an independent L2 error computed here
 *   (Gauss quadrature, k+2 points, reference Lagrange basis);
 * - Dirichlet entries of the right-hand side are g at the support points.
 * On the backend named by argv[1] (default "cpu"). */
#include <math.h>
#include <stdlib.h>

#include "reference.h"

#define PI 3.14159265358979323846

static double exact(const ref_mesh *m, const double x[3]) {
  double u = 1;
  for (int d = 0; d < m->dim; d++) u *= sin(PI * x[d]);
  return u;
}

static double reference_l2_error(const ref_mesh *m, const double *u) {
  int k = m->degree, n1 = k + 1, nq = k + 2, dim = m->dim;
  double qp[16], qw[16], phi[16][16];
  ref_gauss(nq, qp, qw);
  for (int j = 0; j < n1; j++)
    for (int q = 0; q < nq; q++) phi[j][q] = ref_lagrange(n1, m->gl, j, qp[q]);
  int n_q = 1, n_loc = 1;
  for (int d = 0; d < dim; d++) {
    n_q *= nq;
    n_loc *= n1;
  }
  double sum = 0;
  for (int64_t c2 = 0; c2 < (dim > 2 ? m->cells[2] : 1); c2++)
    for (int64_t c1 = 0; c1 < m->cells[1]; c1++)
      for (int64_t c0 = 0; c0 < m->cells[0]; c0++)
        for (int q = 0; q < n_q; q++) {
          int qd[3] = {q % nq, (q / nq) % nq, q / (nq * nq)};
          int64_t c[3] = {c0, c1, c2};
          double x[3] = {0, 0, 0}, w = 1;
          for (int d = 0; d < dim; d++) {
            x[d] = m->a[d] + (c[d] + qp[qd[d]]) * m->h[d];
            w *= qw[qd[d]] * m->h[d];
          }
          double uh = 0;
          for (int j = 0; j < n_loc; j++) {
            int jd[3] = {j % n1, (j / n1) % n1, j / (n1 * n1)};
            double v = 1;
            int64_t gi[3] = {0, 0, 0};
            for (int d = 0; d < dim; d++) {
              v *= phi[jd[d]][qd[d]];
              gi[d] = c[d] * k + jd[d];
            }
            uh += v * u[gi[0] + m->n[0] * (gi[1] + m->n[1] * gi[2])];
          }
          double e = uh - exact(m, x);
          sum += w * e * e;
        }
  return sqrt(sum);
}

static double solve_error(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                          const double *box) {
  tpmg_grid *grid = ref_grid_create(ctx, dim, k, L, cells, box);
  ref_mesh m;
  ref_mesh_init(&m, dim, k, cells, box, L);
  int64_t n = m.n_dofs;
  double *b = ref_malloc(sizeof(double) * n), *x = ref_malloc(sizeof(double) * n);
  void *vb = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  void *vx = ref_vector_create(ctx, TPMG_DOUBLE, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, vb));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vb, b);
  for (int64_t i = 0; i < n; i++) {
    if (!ref_mesh_is_boundary(&m, i)) continue;
    int64_t id[3];
    ref_mesh_index(&m, i, id);
    double xs[3] = {0, 0, 0};
    for (int d = 0; d < dim; d++) xs[d] = ref_mesh_coordinate(&m, d, id[d]);
    double g = exact(&m, xs);
    if (!(fabs(b[i] - g) <= 1e-13)) {
      REF_CHECK(0, "SINE rhs dim %d k %d L %d: Dirichlet entry %lld: expected g = %.17g, got %.17g",
                dim, k, L, (long long)i, g, b[i]);
      break;
    }
  }
  REF_CALL(ctx, tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, vx));
  tpmg_solver_options options = tpmg_solver_options_default();
  options.type = TPMG_SOLVER_GMRES;
  options.arithmetic = TPMG_ARITHMETIC_DOUBLE;
  options.tolerance = 1e-12;
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, &options, &solver));
  tpmg_solver_result result;
  REF_CALL(ctx, tpmg_solver_solve(solver, vb, vx, &result));
  REF_CHECK(result.converged == 1, "GMRES SINE dim %d k %d L %d: not converged, reduction %.3g",
            dim, k, L, result.residual_reduction);
  double error = NAN;
  REF_CALL(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, TPMG_DOUBLE, vx, &error));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, n, vx, x);
  double expected = reference_l2_error(&m, x);
  REF_CHECK(
      fabs(error - expected) <= 1e-9 * expected,
      "tpmg_problem_l2_error dim %d k %d L %d: expected %.15g (reference quadrature), got %.15g",
      dim, k, L, expected, error);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  ref_vector_destroy(ctx, &vx);
  ref_vector_destroy(ctx, &vb);
  free(x);
  free(b);
  return error;
}

static void check_rate(tpmg_context *ctx, int dim, int k, int L, const int cells[3],
                       const double *box) {
  double e1 = solve_error(ctx, dim, k, L, cells, box);
  double e2 = solve_error(ctx, dim, k, L + 1, cells, box);
  double rate = log2(e1 / e2);
  REF_CHECK(e2 > 1e-11, "dim %d k %d L %d: error %.3g at the rounding floor; choose coarser levels",
            dim, k, L + 1, e2);
  REF_CHECK(fabs(rate - (k + 1)) <= 0.3,
            "L2 rate dim %d k %d levels %d,%d%s: expected %d +- 0.3, got %.3f (errors %.6g, %.6g)",
            dim, k, L, L + 1, box ? " (box)" : "", k + 1, rate, e1, e2);
}

int main(int argc, char **argv) {
  tpmg_context *ctx = ref_context_create(ref_backend(argc, argv), 0);
  const int cells[3] = {2, 3, 1};
  const double box[6] = {0, 2, -1, 0.5, 0, 0.3};
  check_rate(ctx, 2, 1, 3, NULL, NULL);
  check_rate(ctx, 2, 2, 3, NULL, NULL);
  check_rate(ctx, 2, 3, 2, NULL, NULL);
  check_rate(ctx, 2, 4, 2, NULL, NULL);
  check_rate(ctx, 2, 1, 2, cells, box);
  check_rate(ctx, 2, 2, 2, cells, box);
  check_rate(ctx, 2, 3, 1, cells, box);
  check_rate(ctx, 3, 1, 2, NULL, NULL);
  check_rate(ctx, 3, 2, 2, NULL, NULL);
  check_rate(ctx, 3, 3, 1, NULL, NULL);
  check_rate(ctx, 3, 2, 1, cells, box);
  REF_CALL(ctx, tpmg_context_destroy(&ctx));
  return ref_exit_code("t600-solver-convergence");
}
