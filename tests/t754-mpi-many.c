/* Many ranks (32 and 64, oversubscribed): meshes sized by the rank count so
 * that the finest level is cut into slabs of 2 and 4 cells and the level
 * under it is kept whole on every rank, longer there than a rank's slab of
 * the finest (issue 29: mixed FMG's work vector had the finest level's
 * length). The default solver, FMG in mixed precision and CG in double, one
 * on each mesh: the one-process iterations, convergence, solution on the
 * owned entries and L2 error. Rank 0 alone solves on one process and
 * broadcasts its result, so that the reference costs one solve, not one per
 * rank. P: a multiple of 4. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi-reference.h"

typedef struct {
  int dim, degree, level, cells[3];
  double box[6];
} mesh_case;

typedef struct {
  tpmg_solver_result result;
  double l2;
} outcome;

/* Solve on ctx (double or mixed) from x = 0, b the sine problem's; the
 * solution downloaded (this rank's vector, or the whole level on one process). */
static outcome solve(tpmg_context *ctx, const mesh_case *m, const tpmg_solver_options *o,
                     double **solution, tpmg_level_layout *layout) {
  tpmg_grid *grid = ref_grid_create(ctx, m->dim, m->degree, m->level, m->cells, m->box);
  const tpmg_precision p = TPMG_DOUBLE; /* the vectors of double and mixed solves */
  tpmg_index n = 0;
  REF_CALL(ctx, tpmg_grid_level_size(grid, m->level, &n, NULL));
  REF_CALL(ctx, tpmg_grid_level_layout(grid, m->level, layout));
  void *b = ref_vector_create(ctx, p, n, NULL), *x = ref_vector_create(ctx, p, n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, p, b));
  REF_CALL(ctx, tpmg_vector_set(ctx, p, n, 0.0, x));
  tpmg_solver *solver = NULL;
  REF_CALL(ctx, tpmg_solver_create(grid, o, &solver));
  outcome out;
  memset(&out, 0, sizeof out);
  REF_CALL(ctx, tpmg_solver_solve(solver, b, x, &out.result));
  REF_CALL(ctx, tpmg_problem_l2_error(grid, TPMG_RHS_SINE, p, x, &out.l2));
  *solution = ref_malloc(sizeof(double) * (size_t)n);
  ref_vector_download(ctx, p, n, x, *solution);
  ref_vector_destroy(ctx, &b);
  ref_vector_destroy(ctx, &x);
  REF_CALL(ctx, tpmg_solver_destroy(&solver));
  REF_CALL(ctx, tpmg_grid_destroy(&grid));
  return out;
}

static void compare(tpmg_context *one, tpmg_context *all, const mesh_case *m,
                    const tpmg_solver_options *o) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  tpmg_level_layout layout;
  double *x1 = NULL, *x2 = NULL;
  outcome r1;
  int64_t n1 = 0;
  if (rank == 0) {
    r1 = solve(one, m, o, &x1, &layout);
    n1 = layout.n_global[0] * layout.n_global[1] * layout.n_global[2];
  }
  MPI_Bcast(&r1, (int)sizeof r1, MPI_BYTE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&n1, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (rank != 0)
    x1 = ref_malloc(sizeof(double) * (size_t)n1);
  MPI_Bcast(x1, (int)n1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  outcome r2 = solve(all, m, o, &x2, &layout);
  double difference = mref_owned_difference(&layout, TPMG_DOUBLE, x2, x1);
  char name[160];
  snprintf(name, sizeof name, "%dD Q%d L%d cells %d,%d,%d, %s %s", m->dim, m->degree, m->level,
           m->cells[0], m->cells[1], m->cells[2], tpmg_solver_type_name(o->type),
           tpmg_arithmetic_name(o->arithmetic));
  REF_CHECK(r1.result.converged, "%s: did not converge on one process", name);
  REF_CHECK(r1.result.iterations == r2.result.iterations &&
                r1.result.converged == r2.result.converged,
            "%s: one process %d iterations (converged %d), P ranks %d (converged %d)", name,
            r1.result.iterations, r1.result.converged, r2.result.iterations, r2.result.converged);
  /* the sums' order differs: rounding of double (t751's bounds) */
  REF_CHECK(difference <= 1e-10, "%s: solutions differ by %.3e (tolerance 1e-10)", name,
            difference);
  REF_CHECK(fabs(r1.l2 - r2.l2) <= 1e-6 * r1.l2, "%s: L2 error %.9e on one process, %.9e", name,
            r1.l2, r2.l2);
  free(x1);
  free(x2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P % 4 != 0) {
    fprintf(stderr, "t754-mpi-many: %d ranks, expected a multiple of 4\n", P);
    MPI_Finalize();
    return 1;
  }
  tpmg_context *all = mref_context_create(1), *one = mref_one_context_create(1);
  /* level L - 1 whole with P to 2P - 1 cells along the last direction, level
   * L cut: slabs of 2 cells (P a power of two), or of 2 and 4 */
  int L = 1;
  while ((1 << L) < 2 * P)
    ++L;
  const mesh_case cases[] = {
      {2, 1, L, {1, 1, 1}, {0, 1, 0, 1, 0, 1}},
      /* 3 P / 4 cells along z: slabs of 2 and 4 cells */
      {3, 2, 2, {1, 1, 3 * P / 4}, {0, 1, 0, 1, 0, 3 * P / 4}},
      /* a hidden level (2 x 3P/2 halved), the user's level 0 whole */
      {2, 3, 1, {2, 3 * P / 2, 1}, {0, 1, 0, 3 * P / 4, 0, 1}},
  };
  /* one solver each (64 oversubscribed ranks take seconds a solve): the
   * default, FMG-GMRES mixed; FMG mixed; CG in double */
  const tpmg_solver_type types[] = {TPMG_SOLVER_FMG_GMRES, TPMG_SOLVER_FMG, TPMG_SOLVER_CG};
  const tpmg_arithmetic arithmetics[] = {TPMG_ARITHMETIC_MIXED, TPMG_ARITHMETIC_MIXED,
                                         TPMG_ARITHMETIC_DOUBLE};
  for (int c = 0; c < 3; ++c) {
    tpmg_solver_options o = tpmg_solver_options_default();
    o.type = types[c];
    o.arithmetic = arithmetics[c];
    compare(one, all, &cases[c], &o);
  }
  REF_CALL(one, tpmg_context_destroy(&one));
  REF_CALL(all, tpmg_context_destroy(&all));
  int code = mref_exit_code("t754-mpi-many");
  MPI_Finalize();
  return code;
}
