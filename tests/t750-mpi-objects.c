/* The objects on P ranks against one process: the operator, every smoother
 * variant in both colour orders, prolongation and restriction between every
 * pair of levels, the coarse solve and the V-cycle, on random data, in double
 * and float, 2D and 3D, anisotropic boxes, several coarse cells, uneven slabs
 * and levels kept whole below the cut. Every rank computes the one-process
 * result itself and compares the entries it owns; its inputs' ghost planes
 * are NaN, so a value the exchange failed to bring shows. Run under mpirun
 * with any number of ranks the meshes can be split into (2, 3, 4). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi-reference.h"

typedef struct {
  int dim, degree, level, cells[3];
  double box[6];
} mesh_case;

static const mesh_case cases[] = {
    {2, 2, 3, {3, 5, 1}, {0, 2, 0, 1, 0, 1}},  /* uneven slabs, anisotropic */
    {2, 4, 2, {1, 7, 1}, {0, 1, -1, 2, 0, 1}}, /* level 0 split for P <= 3 */
    {3, 3, 3, {1, 1, 1}, {0, 1, 0, 1, 0, 1}},  /* coarse levels whole on every rank */
    {3, 1, 3, {2, 1, 3}, {0, 2, 0, 1, 0, 3}},  /* several coarse cells */
    {3, 2, 2, {1, 2, 8}, {0, 1, 0, 1, 0, 0.5}}, /* level 0 split */
    {3, 2, 2, {2, 2, 8}, {0, 1, 0, 1, 0, 4}},    /* a hidden level below level 0 */
    {2, 5, 1, {5, 41, 1}, {0, 1, 0, 8, 0, 1}},   /* level 0 split, solved on the host */
};

static uint64_t seed = 12345;

/* A whole level's random vector, the same on every rank. */
static double *random_whole(int64_t n) {
  double *v = ref_malloc(sizeof(double) * (size_t)n);
  ref_fill_random(&seed, n, v);
  return v;
}

typedef struct {
  tpmg_context *one, *all;
  tpmg_grid *grid_one, *grid_all;
  tpmg_precision p;
  double tolerance;
  const char *name;
} pair;

static size_t size_of(tpmg_precision p) { return p == TPMG_DOUBLE ? sizeof(double) : sizeof(float); }

/* The one-process vector of a whole level from host doubles (converted). */
static void *one_vector(const pair *t, int64_t n, const double *whole) {
  void *host = ref_malloc(size_of(t->p) * (size_t)n);
  for (int64_t i = 0; i < n; ++i)
    if (t->p == TPMG_DOUBLE)
      ((double *)host)[i] = whole[i];
    else
      ((float *)host)[i] = (float)whole[i];
  void *v = ref_vector_create(t->one, t->p, n, host);
  free(host);
  return v;
}

/* The whole level's one-process vector, downloaded into doubles. */
static double *one_result(const pair *t, int64_t n, void *v) {
  void *host = ref_malloc(size_of(t->p) * (size_t)n);
  REF_DOWNLOAD(t->one, t->p, n, v, host);
  double *whole = ref_malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; ++i)
    whole[i] = t->p == TPMG_DOUBLE ? ((double *)host)[i] : (double)((float *)host)[i];
  free(host);
  return whole;
}

typedef struct {
  tpmg_level_layout layout;
  int64_t n_whole, n_local;
} level_info;

static level_info info(const pair *t, int level) {
  level_info i;
  ref_call_check(t->all, tpmg_grid_level_layout(t->grid_all, level, &i.layout), "layout", __FILE__,
                 __LINE__);
  i.n_whole = i.layout.n_global[0] * i.layout.n_global[1] * i.layout.n_global[2];
  i.n_local = i.layout.count * i.layout.plane;
  return i;
}

static void *all_vector(const pair *t, const level_info *i, const double *whole) {
  void *host = ref_malloc(size_of(t->p) * (size_t)i->n_local);
  mref_local(&i->layout, t->p, whole, host);
  void *v = ref_vector_create(t->all, t->p, i->n_local, host);
  free(host);
  return v;
}

static void compare(const pair *t, const level_info *i, void *v, const double *whole,
                    const char *what, int level) {
  void *host = ref_malloc(size_of(t->p) * (size_t)i->n_local);
  ref_vector_download(t->all, t->p, i->n_local, v, host);
  double difference = mref_owned_difference(&i->layout, t->p, host, whole);
  REF_CHECK(difference <= t->tolerance, "%s, %s, level %d: owned entries differ from one process "
            "by %.3e (tolerance %.1e)", t->name, what, level, difference, t->tolerance);
  free(host);
}

static void test_operator(const pair *t, int level) {
  level_info i = info(t, level);
  double *src = random_whole(i.n_whole);
  tpmg_operator *one = NULL, *all = NULL;
  REF_CALL(t->one, tpmg_operator_create(t->grid_one, level, t->p, &one));
  REF_CALL(t->all, tpmg_operator_create(t->grid_all, level, t->p, &all));
  void *s1 = one_vector(t, i.n_whole, src), *d1 = ref_vector_create(t->one, t->p, i.n_whole, NULL);
  REF_CALL(t->one, tpmg_operator_apply(one, s1, d1));
  double *expected = one_result(t, i.n_whole, d1);
  void *s2 = all_vector(t, &i, src), *d2 = ref_vector_create(t->all, t->p, i.n_local, NULL);
  REF_CALL(t->all, tpmg_operator_apply(all, s2, d2));
  compare(t, &i, d2, expected, "operator", level);
  /* the diagonal: no communication, but the Dirichlet planes are the level's */
  REF_CALL(t->one, tpmg_operator_diagonal(one, d1));
  free(expected);
  expected = one_result(t, i.n_whole, d1);
  REF_CALL(t->all, tpmg_operator_diagonal(all, d2));
  compare(t, &i, d2, expected, "diagonal", level);
  ref_vector_destroy(t->one, &s1);
  ref_vector_destroy(t->one, &d1);
  ref_vector_destroy(t->all, &s2);
  ref_vector_destroy(t->all, &d2);
  tpmg_operator_destroy(&one);
  tpmg_operator_destroy(&all);
  free(src);
  free(expected);
}

static void test_smoother(const pair *t, int level, tpmg_smoother_variant variant, int reverse) {
  level_info i = info(t, level);
  double *b = random_whole(i.n_whole), *x = random_whole(i.n_whole);
  tpmg_smoother_options options = tpmg_smoother_options_default();
  options.variant = variant;
  tpmg_smoother *one = NULL, *all = NULL;
  REF_CALL(t->one, tpmg_smoother_create(t->grid_one, level, t->p, &options, &one));
  REF_CALL(t->all, tpmg_smoother_create(t->grid_all, level, t->p, &options, &all));
  void *b1 = one_vector(t, i.n_whole, b), *x1 = one_vector(t, i.n_whole, x);
  REF_CALL(t->one, tpmg_smoother_apply(one, reverse, b1, x1));
  double *expected = one_result(t, i.n_whole, x1);
  void *b2 = all_vector(t, &i, b), *x2 = all_vector(t, &i, x);
  REF_CALL(t->all, tpmg_smoother_apply(all, reverse, b2, x2));
  char what[64];
  snprintf(what, sizeof what, "smoother %s%s", tpmg_smoother_variant_name(variant),
           reverse ? " reverse" : "");
  compare(t, &i, x2, expected, what, level);
  ref_vector_destroy(t->one, &b1);
  ref_vector_destroy(t->one, &x1);
  ref_vector_destroy(t->all, &b2);
  ref_vector_destroy(t->all, &x2);
  tpmg_smoother_destroy(&one);
  tpmg_smoother_destroy(&all);
  free(b);
  free(x);
  free(expected);
}

static void test_transfer(const pair *t, int fine) {
  level_info ic = info(t, fine - 1), jf = info(t, fine);
  double *c = random_whole(ic.n_whole), *f = random_whole(jf.n_whole);
  tpmg_transfer *one = NULL, *all = NULL;
  REF_CALL(t->one, tpmg_transfer_create(t->grid_one, fine, t->p, &one));
  REF_CALL(t->all, tpmg_transfer_create(t->grid_all, fine, t->p, &all));
  /* prolongation: fine += P coarse */
  void *c1 = one_vector(t, ic.n_whole, c), *f1 = one_vector(t, jf.n_whole, f);
  REF_CALL(t->one, tpmg_transfer_prolongate_add(one, c1, f1));
  double *expected = one_result(t, jf.n_whole, f1);
  void *c2 = all_vector(t, &ic, c), *f2 = all_vector(t, &jf, f);
  REF_CALL(t->all, tpmg_transfer_prolongate_add(all, c2, f2));
  compare(t, &jf, f2, expected, "prolongation", fine);
  free(expected);
  ref_vector_destroy(t->one, &f1);
  ref_vector_destroy(t->all, &f2);
  ref_vector_destroy(t->one, &c1);
  ref_vector_destroy(t->all, &c2);
  /* restriction: coarse = P^T fine, into poisoned outputs */
  f1 = one_vector(t, jf.n_whole, f);
  c1 = ref_vector_create(t->one, t->p, ic.n_whole, NULL);
  REF_CALL(t->one, tpmg_transfer_restrict(one, f1, c1));
  expected = one_result(t, ic.n_whole, c1);
  f2 = all_vector(t, &jf, f);
  c2 = ref_vector_create(t->all, t->p, ic.n_local, NULL);
  REF_CALL(t->all, tpmg_transfer_restrict(all, f2, c2));
  compare(t, &ic, c2, expected, "restriction", fine);
  ref_vector_destroy(t->one, &f1);
  ref_vector_destroy(t->all, &f2);
  ref_vector_destroy(t->one, &c1);
  ref_vector_destroy(t->all, &c2);
  tpmg_transfer_destroy(&one);
  tpmg_transfer_destroy(&all);
  free(c);
  free(f);
  free(expected);
}

static void test_coarse(const pair *t) {
  level_info i = info(t, 0);
  double *b = random_whole(i.n_whole);
  tpmg_coarse *one = NULL, *all = NULL;
  REF_CALL(t->one, tpmg_coarse_create(t->grid_one, t->p, &one));
  REF_CALL(t->all, tpmg_coarse_create(t->grid_all, t->p, &all));
  void *b1 = one_vector(t, i.n_whole, b), *x1 = ref_vector_create(t->one, t->p, i.n_whole, NULL);
  REF_CALL(t->one, tpmg_coarse_apply(one, b1, x1));
  double *expected = one_result(t, i.n_whole, x1);
  void *b2 = all_vector(t, &i, b), *x2 = ref_vector_create(t->all, t->p, i.n_local, NULL);
  REF_CALL(t->all, tpmg_coarse_apply(all, b2, x2));
  compare(t, &i, x2, expected, "coarse solve", 0);
  ref_vector_destroy(t->one, &b1);
  ref_vector_destroy(t->one, &x1);
  ref_vector_destroy(t->all, &b2);
  ref_vector_destroy(t->all, &x2);
  tpmg_coarse_destroy(&one);
  tpmg_coarse_destroy(&all);
  free(b);
  free(expected);
}

static void test_vcycle(const pair *t, int fine, tpmg_smoother_variant variant) {
  level_info i = info(t, fine);
  double *b = random_whole(i.n_whole), *x = random_whole(i.n_whole);
  tpmg_multigrid_options options = tpmg_multigrid_options_default();
  options.precision = t->p;
  options.smoother = variant;
  tpmg_multigrid *one = NULL, *all = NULL;
  REF_CALL(t->one, tpmg_multigrid_create(t->grid_one, &options, &one));
  REF_CALL(t->all, tpmg_multigrid_create(t->grid_all, &options, &all));
  void *b1 = one_vector(t, i.n_whole, b), *x1 = one_vector(t, i.n_whole, x);
  REF_CALL(t->one, tpmg_multigrid_vcycle(one, b1, x1));
  double *expected = one_result(t, i.n_whole, x1);
  void *b2 = all_vector(t, &i, b), *x2 = all_vector(t, &i, x);
  REF_CALL(t->all, tpmg_multigrid_vcycle(all, b2, x2));
  compare(t, &i, x2, expected, "V-cycle", fine);
  /* FMG from b alone */
  ref_vector_poison(t->one, t->p, i.n_whole, x1);
  REF_CALL(t->one, tpmg_multigrid_fmg(one, t->p, b1, x1));
  free(expected);
  expected = one_result(t, i.n_whole, x1);
  ref_vector_poison(t->all, t->p, i.n_local, x2);
  REF_CALL(t->all, tpmg_multigrid_fmg(all, t->p, b2, x2));
  /* against the CPU from another backend (the gpu-mpi tests), float FMG adds
   * the two backends' rounding over a V-cycle per level: 4e-5 measured on two
   * H200 where a single V-cycle stays within 1e-5 */
  pair fmg = *t;
  if (t->p == TPMG_FLOAT && strcmp(mref_backend(), "cpu") != 0) fmg.tolerance = 1e-4;
  compare(&fmg, &i, x2, expected, "FMG", fine);
  ref_vector_destroy(t->one, &b1);
  ref_vector_destroy(t->one, &x1);
  ref_vector_destroy(t->all, &b2);
  ref_vector_destroy(t->all, &x2);
  tpmg_multigrid_destroy(&one);
  tpmg_multigrid_destroy(&all);
  free(b);
  free(x);
  free(expected);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  /* the reference is the CPU backend on one process, also where the
   * distributed context is another backend's (the gpu-mpi tests) */
  tpmg_context *all = mref_context_create(1), *one = ref_context_create("cpu", 1);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
    for (int q = 0; q < 2; ++q) {
      const mesh_case *m = &cases[c];
      pair t = {one, all, NULL, NULL, q == 0 ? TPMG_DOUBLE : TPMG_FLOAT, q == 0 ? 1e-12 : 1e-5,
                NULL};
      char name[96];
      snprintf(name, sizeof name, "%dD Q%d cells %d,%d,%d %s", m->dim, m->degree, m->cells[0],
               m->cells[1], m->cells[2], q == 0 ? "double" : "float");
      t.name = name;
      t.grid_one = ref_grid_create(one, m->dim, m->degree, m->level, m->cells, m->box);
      t.grid_all = ref_grid_create(all, m->dim, m->degree, m->level, m->cells, m->box);
      for (int l = 0; l <= m->level; ++l) test_operator(&t, l);
      for (int l = 1; l <= m->level; ++l) {
        test_transfer(&t, l);
        for (int v = TPMG_SMOOTHER_GLOBAL; v <= TPMG_SMOOTHER_BOUNDARY; ++v)
          for (int reverse = 0; reverse < 2; ++reverse)
            test_smoother(&t, l, (tpmg_smoother_variant)v, reverse);
      }
      test_coarse(&t);
      test_vcycle(&t, m->level, TPMG_SMOOTHER_FUSED);
      test_vcycle(&t, m->level, TPMG_SMOOTHER_GLOBAL);
      tpmg_grid_destroy(&t.grid_one);
      tpmg_grid_destroy(&t.grid_all);
    }
  REF_CALL(one, tpmg_context_destroy(&one));
  REF_CALL(all, tpmg_context_destroy(&all));
  int code = mref_exit_code("t750-mpi-objects");
  MPI_Finalize();
  return code;
}
