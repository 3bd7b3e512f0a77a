/* Independent reference implementations for the tpmg tests (see reference.h). */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REF_PI 3.14159265358979323846

int ref_failures = 0;

/* ---- harness ------------------------------------------------------------ */

void ref_call_check(const tpmg_context *ctx, tpmg_status status, const char *expr, const char *file,
                    int line) {
  if (status == TPMG_SUCCESS)
    return;
  fprintf(stderr, "%s:%d: %s returned status %d, expected TPMG_SUCCESS; message: %s\n", file, line,
          expr, (int)status, ctx ? tpmg_context_last_error(ctx) : "(no context)");
  exit(1);
}

int ref_skipped = 0, ref_checked = 0;

int ref_refused(const tpmg_context *ctx, int degree, tpmg_status status, const char *what) {
  const char *name = NULL;
  if (tpmg_context_backend(ctx, &name) != TPMG_SUCCESS || !name ||
      strcmp(name, "cuda/thread") != 0 || degree == 1)
    return 0;
  REF_CHECK(status == TPMG_ERROR_UNSUPPORTED, "%s on %s for Q%d: status %d, expected %d", what,
            name, degree, (int)status, (int)TPMG_ERROR_UNSUPPORTED);
  ref_skipped++;
  return 1;
}

int ref_exit_code(const char *test_name) {
  if (ref_failures == 0 && ref_skipped > 0) {
    printf("%s: %d case(s) skipped, their degree refused by the backend; %d checked\n", test_name,
           ref_skipped, ref_checked);
    return ref_checked > 0 ? 0 : 77;
  }
  if (ref_failures == 0) return 0;
  fprintf(stderr, "%s: %d check(s) failed\n", test_name, ref_failures);
  return 1;
}

double ref_random(uint64_t *state) {
  /* splitmix64 */
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  double u = (double)(z >> 11) * (1.0 / 9007199254740992.0); /* [0,1) */
  double magnitude = 0.1 + 0.9 * u;
  return (z & 1) ? -magnitude : magnitude;
}

void ref_fill_random(uint64_t *state, int64_t n, double *x) {
  for (int64_t i = 0; i < n; i++) x[i] = ref_random(state);
}

void ref_fill_nan(int64_t n, double *x) {
  for (int64_t i = 0; i < n; i++) x[i] = NAN;
}

void ref_fill_nan_float(int64_t n, float *x) {
  for (int64_t i = 0; i < n; i++) x[i] = NAN;
}

void *ref_malloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "reference: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

double ref_max_abs(int64_t n, const double *x) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = fabs(x[i]);
    if (a > m || isnan(a)) m = a;
    if (isnan(m)) return NAN;
  }
  return m;
}

double ref_relative_difference(int64_t n, const double *a, const double *b) {
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs(a[i] - b[i]);
    if (isnan(d)) return NAN;
    if (d > diff) diff = d;
    if (fabs(b[i]) > scale) scale = fabs(b[i]);
  }
  return diff / (scale > 1e-300 ? scale : 1e-300);
}

double ref_norm2(int64_t n, const double *x) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

const char *ref_backend(int argc, char **argv) {
  return argc > 1 ? argv[1] : "cpu";
}

tpmg_context *ref_context_create(const char *backend, int n_threads) {
  const char *name = backend ? backend : "cpu";
  int available = 0;
  tpmg_status status = tpmg_backend_available(name, &available);
  if (status != TPMG_SUCCESS) {
    fprintf(stderr, "tpmg_backend_available(\"%s\") returned %d: no backend of that name\n", name,
            (int)status);
    exit(1);
  }
  if (!available) {
    printf("SKIPPED: no usable backend %s\n", name);
    exit(77);
  }
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = name;
  options.n_threads = n_threads;
  tpmg_context *ctx = NULL;
  status = tpmg_context_create(&options, &ctx);
  if (status != TPMG_SUCCESS || !ctx) {
    fprintf(stderr, "tpmg_context_create(%s, %d threads) returned %d\n", name, n_threads,
            (int)status);
    exit(1);
  }
  return ctx;
}

/* ---- vectors ------------------------------------------------------------ */

void *ref_vector_create(tpmg_context *ctx, tpmg_precision p, int64_t n, const void *host) {
  void *v = NULL;
  REF_CALL(ctx, tpmg_vector_create(ctx, p, n, &v));
  if (host)
    ref_vector_upload(ctx, p, n, host, v);
  else
    ref_vector_poison(ctx, p, n, v);
  return v;
}

void ref_vector_upload(tpmg_context *ctx, tpmg_precision p, int64_t n, const void *host, void *v) {
  REF_CALL(ctx, tpmg_vector_upload(ctx, p, n, host, v));
}

void ref_vector_download(tpmg_context *ctx, tpmg_precision p, int64_t n, const void *v,
                         void *host) {
  REF_CALL(ctx, tpmg_vector_download(ctx, p, n, v, host));
}

void ref_vector_poison(tpmg_context *ctx, tpmg_precision p, int64_t n, void *v) {
  void *nan =
      ref_malloc((size_t)(n > 0 ? n : 1) * (p == TPMG_DOUBLE ? sizeof(double) : sizeof(float)));
  if (p == TPMG_DOUBLE)
    ref_fill_nan(n, nan);
  else
    ref_fill_nan_float(n, nan);
  ref_vector_upload(ctx, p, n, nan, v);
  free(nan);
}

double *ref_sine_rhs(tpmg_context *ctx, tpmg_grid *grid, tpmg_index *n) {
  tpmg_grid_options options;
  REF_CALL(ctx, tpmg_grid_get_options(grid, &options));
  REF_CALL(ctx, tpmg_grid_level_size(grid, options.fine_level, n, NULL));
  double *b = ref_malloc(sizeof(double) * (size_t)*n);
  void *vb = ref_vector_create(ctx, TPMG_DOUBLE, *n, NULL);
  REF_CALL(ctx, tpmg_problem_rhs(grid, TPMG_RHS_SINE, TPMG_DOUBLE, vb));
  REF_DOWNLOAD(ctx, TPMG_DOUBLE, *n, vb, b);
  ref_vector_destroy(ctx, &vb);
  return b;
}

void ref_vector_destroy(tpmg_context *ctx, void **v) {
  REF_CALL(ctx, tpmg_vector_destroy(ctx, v));
}

int64_t ref_count_nan(tpmg_precision p, int64_t n, const void *host, int64_t *first) {
  int64_t count = 0;
  *first = -1;
  for (int64_t i = 0; i < n; i++) {
    double x = p == TPMG_DOUBLE ? ((const double *)host)[i] : ((const float *)host)[i];
    if (isnan(x)) {
      if (count++ == 0)
        *first = i;
    }
  }
  return count;
}

tpmg_grid *ref_grid_create(tpmg_context *ctx, int dim, int degree, int fine_level,
                           const int cells[3], const double *box) {
  return ref_grid_create_reaction(ctx, dim, degree, fine_level, cells, box, 0.0);
}

tpmg_grid *ref_grid_create_reaction(tpmg_context *ctx, int dim, int degree, int fine_level,
                                    const int cells[3], const double *box, double reaction) {
  tpmg_grid_options options = tpmg_grid_options_default();
  options.reaction = reaction;
  options.dim = dim;
  options.degree = degree;
  options.fine_level = fine_level;
  for (int d = 0; d < 3; d++) {
    options.cells[d] = (cells && d < dim) ? cells[d] : 1;
    options.box[2 * d] = (box && d < dim) ? box[2 * d] : 0.0;
    options.box[2 * d + 1] = (box && d < dim) ? box[2 * d + 1] : 1.0;
  }
  tpmg_grid *grid = NULL;
  tpmg_status status = tpmg_grid_create(ctx, &options, &grid);
  if (status != TPMG_SUCCESS || !grid) {
    fprintf(stderr, "tpmg_grid_create(dim %d, degree %d, level %d, reaction %g) returned %d: %s\n",
            dim, degree, fine_level, reaction, (int)status, tpmg_context_last_error(ctx));
    exit(1);
  }
  return grid;
}

/* ---- 1D bases ----------------------------------------------------------- */

/* Legendre P_n and P_{n-1} at x by the three-term recurrence. */
static void legendre(int n, double x, double *p_n, double *p_nm1) {
  double p0 = 1, p1 = x;
  if (n == 0) {
    *p_n = 1;
    *p_nm1 = 0;
    return;
  }
  for (int m = 2; m <= n; m++) {
    double p2 = ((2 * m - 1) * x * p1 - (m - 1) * p0) / m;
    p0 = p1;
    p1 = p2;
  }
  *p_n = p1;
  *p_nm1 = p0;
}

void ref_gauss_lobatto(int n, double *points) {
  int N = n - 1; /* interior points are the roots of P'_N */
  points[0] = 0;
  points[n - 1] = 1;
  for (int i = 1; i < N; i++) {
    double x = -cos(REF_PI * i / N);
    for (int it = 0; it < 100; it++) {
      double p, pm1;
      legendre(N, x, &p, &pm1);
      double dp = N * (x * p - pm1) / (x * x - 1);               /* P'_N */
      double ddp = (2 * x * dp - N * (N + 1) * p) / (1 - x * x); /* P''_N from Legendre's ODE */
      double dx = dp / ddp;
      x -= dx;
      if (fabs(dx) < 1e-16) break;
    }
    points[i] = 0.5 * (x + 1);
  }
}

void ref_gauss(int n, double *points, double *weights) {
  for (int i = 0; i < n; i++) {
    double x = -cos(REF_PI * (i + 0.75) / (n + 0.5));
    double dp = 1;
    for (int it = 0; it < 100; it++) {
      double p, pm1;
      legendre(n, x, &p, &pm1);
      dp = n * (x * p - pm1) / (x * x - 1);
      double dx = p / dp;
      x -= dx;
      if (fabs(dx) < 1e-16) break;
    }
    double p, pm1;
    legendre(n, x, &p, &pm1);
    dp = n * (x * p - pm1) / (x * x - 1);
    points[i] = 0.5 * (x + 1);
    weights[i] = 1.0 / ((1 - x * x) * dp * dp); /* 2/((1-x^2)P'^2), halved for [0,1] */
  }
}

double ref_lagrange(int n, const double *nodes, int i, double x) {
  double v = 1;
  for (int m = 0; m < n; m++)
    if (m != i) v *= (x - nodes[m]) / (nodes[i] - nodes[m]);
  return v;
}

double ref_lagrange_derivative(int n, const double *nodes, int i, double x) {
  double s = 0;
  for (int m = 0; m < n; m++) {
    if (m == i) continue;
    double term = 1 / (nodes[i] - nodes[m]);
    for (int l = 0; l < n; l++)
      if (l != i && l != m) term *= (x - nodes[l]) / (nodes[i] - nodes[l]);
    s += term;
  }
  return s;
}

void ref_cell_matrices(int degree, double *mass, double *stiffness) {
  int n = degree + 1, nq = degree + 2;
  double nodes[16], qp[16], qw[16];
  ref_gauss_lobatto(n, nodes);
  ref_gauss(nq, qp, qw);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double m = 0, k = 0;
      for (int q = 0; q < nq; q++) {
        m += qw[q] * ref_lagrange(n, nodes, i, qp[q]) * ref_lagrange(n, nodes, j, qp[q]);
        k += qw[q] * ref_lagrange_derivative(n, nodes, i, qp[q]) *
             ref_lagrange_derivative(n, nodes, j, qp[q]);
      }
      mass[i * n + j] = m;
      stiffness[i * n + j] = k;
    }
}

/* ---- mesh --------------------------------------------------------------- */

void ref_mesh_init(ref_mesh *m, int dim, int degree, const int coarse_cells[3], const double *box,
                   int level) {
  memset(m, 0, sizeof(*m));
  m->dim = dim;
  m->degree = degree;
  m->level = level;
  m->n_dofs = 1;
  for (int d = 0; d < 3; d++) {
    if (d < dim) {
      int64_t c = coarse_cells ? coarse_cells[d] : 1;
      double a = box ? box[2 * d] : 0.0, b = box ? box[2 * d + 1] : 1.0;
      m->cells[d] = c << level;
      m->n[d] = m->cells[d] * degree + 1;
      m->a[d] = a;
      m->h[d] = (b - a) / (double)m->cells[d];
    } else {
      m->cells[d] = 1;
      m->n[d] = 1;
      m->a[d] = 0;
      m->h[d] = 1;
    }
    m->n_dofs *= m->n[d];
  }
  ref_gauss_lobatto(degree + 1, m->gl);
}

void ref_mesh_index(const ref_mesh *m, int64_t idx, int64_t i[3]) {
  i[0] = idx % m->n[0];
  i[1] = (idx / m->n[0]) % m->n[1];
  i[2] = idx / (m->n[0] * m->n[1]);
}

int ref_mesh_is_boundary(const ref_mesh *m, int64_t idx) {
  int64_t i[3];
  ref_mesh_index(m, idx, i);
  for (int d = 0; d < m->dim; d++)
    if (i[d] == 0 || i[d] == m->n[d] - 1) return 1;
  return 0;
}

double ref_mesh_coordinate(const ref_mesh *m, int d, int64_t i) {
  int k = m->degree;
  if (m->widths[0]) {
    const int64_t cell = i / k < m->cells[d] ? i / k : m->cells[d] - 1;
    return m->faces[d][cell] + m->widths[d][cell] * m->gl[i - cell * k];
  }
  return m->a[d] + ((double)(i / k) + m->gl[i % k]) * m->h[d];
}

void ref_mesh_grade(ref_mesh *m, const double *const widths[3]) {
  for (int d = 0; d < 3; d++) {
    const int64_t n = m->cells[d];
    m->widths[d] = ref_malloc(sizeof(double) * (size_t)n);
    m->faces[d] = ref_malloc(sizeof(double) * (size_t)(n + 1));
    m->faces[d][0] = m->a[d];
    for (int64_t i = 0; i < n; i++) {
      m->widths[d][i] =
          d < m->dim && widths[d] ? ldexp(widths[d][i >> m->level], -m->level) : m->h[d];
      m->faces[d][i + 1] = m->faces[d][i] + m->widths[d][i];
    }
  }
}

void ref_mesh_free(ref_mesh *m) {
  for (int d = 0; d < 3; d++) {
    free(m->widths[d]);
    free(m->faces[d]);
    m->widths[d] = m->faces[d] = NULL;
  }
}

/* ---- assembly ----------------------------------------------------------- */

/* The basis of a cell at the points of the nq-point Gauss rule (per
 * direction), scaled by sqrt(w |J|) at each point q: the gradients G
 * ((n_loc n_q) x dim) and the values V (n_loc x n_q), so that sums over q of
 * products of two of them are the quadrature of the integrals. All cells are
 * equal but for a coefficient. */
typedef struct {
  int n_loc, n_q, dim;
  double *G, *V;
} ref_element;

static void element_init(const ref_mesh *m, int nq, const double h[3], ref_element *e) {
  int k = m->degree, dim = m->dim, n1 = k + 1;
  int n_loc = 1, n_q = 1;
  for (int d = 0; d < dim; d++) {
    n_loc *= n1;
    n_q *= nq;
  }
  double qp[16], qw[16], phi[16][16], dphi[16][16];
  ref_gauss(nq, qp, qw);
  for (int j = 0; j < n1; j++)
    for (int q = 0; q < nq; q++) {
      phi[j][q] = ref_lagrange(n1, m->gl, j, qp[q]);
      dphi[j][q] = ref_lagrange_derivative(n1, m->gl, j, qp[q]);
    }
  double *G = ref_malloc(sizeof(double) * (size_t)n_loc * n_q * dim);
  double *V = ref_malloc(sizeof(double) * (size_t)n_loc * n_q);
  for (int j = 0; j < n_loc; j++) {
    int jd[3] = {j % n1, (j / n1) % n1, j / (n1 * n1)};
    for (int q = 0; q < n_q; q++) {
      int qd[3] = {q % nq, (q / nq) % nq, q / (nq * nq)};
      double w = 1;
      for (int d = 0; d < dim; d++) w *= qw[qd[d]] * h[d];
      double v = sqrt(w);
      for (int d = 0; d < dim; d++) v *= phi[jd[d]][qd[d]];
      V[(size_t)j * n_q + q] = v;
      for (int e = 0; e < dim; e++) {
        double g = 1;
        for (int d = 0; d < dim; d++)
          g *= (d == e) ? dphi[jd[d]][qd[d]] / h[d] : phi[jd[d]][qd[d]];
        G[((size_t)j * n_q + q) * dim + e] = g * sqrt(w);
      }
    }
  }
  e->n_loc = n_loc;
  e->n_q = n_q;
  e->dim = dim;
  e->G = G;
  e->V = V;
}

static void element_free(ref_element *e) {
  free(e->G);
  free(e->V);
}

/* Ke = sum_q (b a_q grad phi_i . grad phi_j + c phi_i phi_j) w_q |J| with a_q
 * = a[q] (a NULL: 1), n_loc^2 row-major. */
static void element_matrix(const ref_element *e, const double *a, double b, double c, double *Ke) {
  int n_loc = e->n_loc, n_q = e->n_q, dim = e->dim;
  for (int i = 0; i < n_loc; i++)
    for (int j = 0; j < n_loc; j++) {
      double s = 0;
      const double *gi = e->G + (size_t)i * n_q * dim, *gj = e->G + (size_t)j * n_q * dim;
      if (a) {
        for (int q = 0; q < n_q; q++) {
          double sq = 0;
          for (int d = 0; d < dim; d++) sq += gi[q * dim + d] * gj[q * dim + d];
          s += a[q] * sq;
        }
      } else {
        for (int t = 0; t < n_q * dim; t++) s += gi[t] * gj[t];
      }
      double mass = 0;
      for (int q = 0; q < n_q; q++)
        mass += e->V[(size_t)i * n_q + q] * e->V[(size_t)j * n_q + q];
      Ke[i * n_loc + j] = b * s + c * mass;
    }
}

/* Assembly of the element matrices of the cells, cell c's at Ke + c stride
 * (stride 0: the same for all), n_loc^2 each: Dirichlet DoFs eliminated (see
 * ref_assemble_laplace). */
static void assemble(const ref_mesh *m, const double *Ke, int64_t stride, int n_loc, ref_csr *A) {
  int k = m->degree, n1 = k + 1;
  int64_t n = m->n_dofs;
  char *boundary = ref_malloc((size_t)n);
  for (int64_t i = 0; i < n; i++) boundary[i] = (char)ref_mesh_is_boundary(m, i);
  int64_t *loc = ref_malloc(sizeof(int64_t) * n_loc);
  int64_t *count = calloc((size_t)n + 1, sizeof(int64_t));
  if (!count) exit(2);
  int64_t n_cells = m->cells[0] * m->cells[1] * m->cells[2];
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t c = 0; c < n_cells; c++) {
      int64_t c0 = c % m->cells[0], c1 = (c / m->cells[0]) % m->cells[1],
              c2 = c / (m->cells[0] * m->cells[1]);
      const double *Kc = Ke + c * stride;
      for (int j = 0; j < n_loc; j++) {
        int64_t i0 = c0 * k + j % n1;
        int64_t i1 = m->dim > 1 ? c1 * k + (j / n1) % n1 : 0;
        int64_t i2 = m->dim > 2 ? c2 * k + j / (n1 * n1) : 0;
        loc[j] = i0 + m->n[0] * (i1 + m->n[1] * i2);
      }
      for (int i = 0; i < n_loc; i++) {
        if (boundary[loc[i]]) continue;
        for (int j = 0; j < n_loc; j++) {
          if (boundary[loc[j]]) continue;
          if (pass == 0) {
            count[loc[i] + 1]++;
          } else {
            int64_t p = count[loc[i]]++;
            A->col[p] = loc[j];
            A->val[p] = Kc[i * n_loc + j];
          }
        }
      }
    }
    if (pass == 0) {
      for (int64_t i = 0; i < n; i++)
        if (boundary[i]) count[i + 1]++;
      for (int64_t i = 0; i < n; i++) count[i + 1] += count[i];
      A->n = n;
      A->row_ptr = ref_malloc(sizeof(int64_t) * (size_t)(n + 1));
      memcpy(A->row_ptr, count, sizeof(int64_t) * (size_t)(n + 1));
      A->col = ref_malloc(sizeof(int64_t) * (size_t)count[n]);
      A->val = ref_malloc(sizeof(double) * (size_t)count[n]);
    } else {
      for (int64_t i = 0; i < n; i++)
        if (boundary[i]) {
          int64_t p = count[i]++;
          A->col[p] = i;
          A->val[p] = 1.0;
        }
    }
  }
  for (int64_t i = 0; i < n; i++)
    if (count[i] != A->row_ptr[i + 1]) {
      fprintf(stderr, "reference assembly: row %lld inconsistent\n", (long long)i);
      exit(2);
    }
  free(count);
  free(loc);
  free(boundary);
}

/* Graded meshes: every cell's element matrix by its own widths, a (NULL: 1)
 * per cell or, quadrature, per point, into Ke (n_cells n_loc^2). */
static void graded_elements(const ref_mesh *m, int nq, int quadrature, const double *values,
                            double *Ke) {
  const int64_t n_cells = m->cells[0] * m->cells[1] * m->cells[2];
  for (int64_t c = 0; c < n_cells; c++) {
    const int64_t ci[3] = {c % m->cells[0], (c / m->cells[0]) % m->cells[1],
                           c / (m->cells[0] * m->cells[1])};
    const double h[3] = {m->widths[0][ci[0]], m->widths[1][ci[1]], m->widths[2][ci[2]]};
    ref_element e;
    element_init(m, nq, h, &e);
    const int64_t size = (int64_t)e.n_loc * e.n_loc;
    if (quadrature) {
      element_matrix(&e, values + c * e.n_q, 1.0, m->reaction, Ke + c * size);
    } else {
      element_matrix(&e, NULL, values ? values[c] : 1.0, m->reaction, Ke + c * size);
    }
    element_free(&e);
  }
}

void ref_assemble_laplace(const ref_mesh *m, ref_csr *A) {
  ref_element e;
  element_init(m, m->degree + 2, m->h, &e);
  if (m->widths[0]) {
    const int64_t n_cells = m->cells[0] * m->cells[1] * m->cells[2];
    const int64_t size = (int64_t)e.n_loc * e.n_loc;
    double *Ke = ref_malloc(sizeof(double) * (size_t)(n_cells * size));
    graded_elements(m, m->degree + 2, 0, NULL, Ke);
    assemble(m, Ke, size, e.n_loc, A);
    free(Ke);
    element_free(&e);
    return;
  }
  double *Ke = ref_malloc(sizeof(double) * (size_t)e.n_loc * e.n_loc);
  element_matrix(&e, NULL, 1.0, m->reaction, Ke);
  assemble(m, Ke, 0, e.n_loc, A);
  free(Ke);
  element_free(&e);
}

void ref_assemble_coefficient(const ref_mesh *m, tpmg_coefficient_layout layout,
                              const double *values, ref_csr *A) {
  ref_element e;
  const int quadrature = layout == TPMG_COEFFICIENT_QUADRATURE;
  element_init(m, quadrature ? m->degree + 1 : m->degree + 2, m->h, &e);
  int64_t n_cells = m->cells[0] * m->cells[1] * m->cells[2], size = (int64_t)e.n_loc * e.n_loc;
  double *Ke = ref_malloc(sizeof(double) * (size_t)(n_cells * size));
  if (m->widths[0]) {
    graded_elements(m, quadrature ? m->degree + 1 : m->degree + 2, quadrature, values, Ke);
  } else if (quadrature) {
    for (int64_t c = 0; c < n_cells; c++)
      element_matrix(&e, values + c * e.n_q, 1.0, m->reaction, Ke + c * size);
  } else {
    /* a_K S + c M from the cell's stiffness S and mass M */
    double *S = ref_malloc(sizeof(double) * (size_t)size);
    double *M = ref_malloc(sizeof(double) * (size_t)size);
    element_matrix(&e, NULL, 1.0, 0.0, S);
    element_matrix(&e, NULL, 0.0, 1.0, M);
    for (int64_t c = 0; c < n_cells; c++)
      for (int64_t i = 0; i < size; i++) Ke[c * size + i] = values[c] * S[i] + m->reaction * M[i];
    free(M);
    free(S);
  }
  assemble(m, Ke, size, e.n_loc, A);
  free(Ke);
  element_free(&e);
}

void ref_csr_apply(const ref_csr *A, const double *x, double *y) {
  for (int64_t i = 0; i < A->n; i++) {
    double s = 0;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) s += A->val[p] * x[A->col[p]];
    y[i] = s;
  }
}

void ref_csr_free(ref_csr *A) {
  free(A->row_ptr);
  free(A->col);
  free(A->val);
  memset(A, 0, sizeof(*A));
}

void ref_csr_submatrix(const ref_csr *A, int m, const int64_t *idx, double *dense) {
  int *pos = ref_malloc(sizeof(int) * (size_t)A->n);
  for (int64_t i = 0; i < A->n; i++) pos[i] = -1;
  for (int a = 0; a < m; a++) pos[idx[a]] = a;
  memset(dense, 0, sizeof(double) * (size_t)m * m);
  for (int a = 0; a < m; a++)
    for (int64_t p = A->row_ptr[idx[a]]; p < A->row_ptr[idx[a] + 1]; p++) {
      int b = pos[A->col[p]];
      if (b >= 0) dense[(size_t)a * m + b] += A->val[p];
    }
  free(pos);
}

/* ---- dense -------------------------------------------------------------- */

int ref_cholesky(int n, double *a) {
  for (int j = 0; j < n; j++) {
    double d = a[j * n + j];
    for (int p = 0; p < j; p++) d -= a[j * n + p] * a[j * n + p];
    if (!(d > 0)) return 1;
    d = sqrt(d);
    a[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      double s = a[i * n + j];
      for (int p = 0; p < j; p++) s -= a[i * n + p] * a[j * n + p];
      a[i * n + j] = s / d;
    }
  }
  return 0;
}

void ref_cholesky_solve(int n, const double *l, double *x) {
  for (int i = 0; i < n; i++) {
    double s = x[i];
    for (int p = 0; p < i; p++) s -= l[i * n + p] * x[p];
    x[i] = s / l[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = x[i];
    for (int p = i + 1; p < n; p++) s -= l[p * n + i] * x[p];
    x[i] = s / l[i * n + i];
  }
}

/* ---- patches ------------------------------------------------------------ */

int ref_patch_interior(const ref_mesh *m, const int64_t v[3], int64_t *idx) {
  int k = m->degree, cnt = 0;
  int64_t lo[3], hi[3];
  for (int d = 0; d < 3; d++) {
    if (d < m->dim) {
      lo[d] = (v[d] - 1) * k + 1;
      hi[d] = (v[d] + 1) * k - 1;
    } else {
      lo[d] = hi[d] = 0;
    }
  }
  for (int64_t i2 = lo[2]; i2 <= hi[2]; i2++)
    for (int64_t i1 = lo[1]; i1 <= hi[1]; i1++)
      for (int64_t i0 = lo[0]; i0 <= hi[0]; i0++) idx[cnt++] = i0 + m->n[0] * (i1 + m->n[1] * i2);
  return cnt;
}

/* abar of the patch around vertex v (ref_smoother_step_surrogate) */
static double surrogate_abar(const ref_mesh *m, const double *cell_values, const int64_t v[3]) {
  double sum = 0.0, top = 0.0;
  for (int e = 0; e < (1 << m->dim); ++e) {
    int64_t c[3] = {v[0] - 1 + (e & 1), v[1] - 1 + ((e >> 1) & 1), m->dim == 3 ? v[2] - 1 + (e >> 2) : 0};
    double a = cell_values[c[0] + m->cells[0] * (c[1] + m->cells[1] * c[2])];
    sum += a;
    top = a > top ? a : top;
  }
  double mean = sum / (double)(1 << m->dim), least = 2.0 / 3.0 * top;
  return mean > least ? mean : least;
}

/* ref_smoother_step (S NULL: the patch matrices from A) and
 * ref_smoother_step_surrogate */
static void smoother_step(const ref_mesh *m, const ref_csr *A, const ref_csr *S, const ref_csr *L,
                          const double *cell_values, int reverse, const double *b, double *x) {
  int64_t n = m->n_dofs;
  int n_colours = 1 << m->dim, np = 1;
  for (int d = 0; d < m->dim; d++)
    np *= 2 * m->degree - 1;
  double *x0 = ref_malloc(sizeof(double) * (size_t)n), *r = ref_malloc(sizeof(double) * (size_t)n);
  double *Aj = ref_malloc(sizeof(double) * (size_t)np * np), *rj = ref_malloc(sizeof(double) * np);
  double *Lj = ref_malloc(sizeof(double) * (size_t)np * np);
  int64_t *idx = ref_malloc(sizeof(int64_t) * np);
  int64_t nv[3];
  for (int d = 0; d < 3; d++) nv[d] = d < m->dim ? m->cells[d] - 1 : 1;
  for (int cc = 0; cc < n_colours; cc++) {
    int colour = reverse ? n_colours - 1 - cc : cc;
    for (int64_t i = 0; i < n; i++) x0[i] = ref_mesh_is_boundary(m, i) ? 0.0 : x[i];
    ref_csr_apply(A, x0, r);
    for (int64_t i = 0; i < n; i++) r[i] = b[i] - r[i];
    for (int64_t w2 = 0; w2 < nv[2]; w2++)
      for (int64_t w1 = 0; w1 < nv[1]; w1++)
        for (int64_t w0 = 0; w0 < nv[0]; w0++) {
          int64_t v[3] = {w0 + 1, w1 + 1, w2 + 1};
          int c = 0;
          for (int d = 0; d < m->dim; d++) c |= (int)(((v[d] - 1) & 1) << d);
          if (c != colour) continue;
          int cnt = ref_patch_interior(m, v, idx);
          ref_csr_submatrix(S ? S : A, cnt, idx, Aj);
          if (S) {
            const double abar = surrogate_abar(m, cell_values, v);
            ref_csr_submatrix(L, cnt, idx, Lj);
            for (int a = 0; a < cnt * cnt; a++)
              Aj[a] = abar * Aj[a] + (Lj[a] - Aj[a]);
          }
          if (ref_cholesky(cnt, Aj)) {
            fprintf(stderr, "reference: patch matrix not SPD\n");
            exit(2);
          }
          for (int a = 0; a < cnt; a++) rj[a] = r[idx[a]];
          ref_cholesky_solve(cnt, Aj, rj);
          for (int a = 0; a < cnt; a++) x[idx[a]] += rj[a];
        }
  }
  free(idx);
  free(rj);
  free(Lj);
  free(Aj);
  free(r);
  free(x0);
}

void ref_smoother_step(const ref_mesh *m, const ref_csr *A, int reverse, const double *b,
                       double *x) {
  smoother_step(m, A, NULL, NULL, NULL, reverse, b, x);
}

void ref_smoother_step_surrogate(const ref_mesh *m, const ref_csr *A, const ref_csr *S,
                                 const ref_csr *L, const double *cell_values, int reverse,
                                 const double *b, double *x) {
  smoother_step(m, A, S, L, cell_values, reverse, b, x);
}

/* ---- transfer ----------------------------------------------------------- */

void ref_prolongation_1d(const ref_mesh *coarse, const ref_mesh *fine, int d, double *P) {
  int k = fine->degree;
  int64_t nf = fine->n[d], nc = coarse->n[d];
  for (int64_t i = 0; i < nf; i++) {
    /* fine cell f and local point l of fine point i */
    int64_t f = i / k;
    int l = (int)(i % k);
    if (f == fine->cells[d]) {
      f--;
      l = k;
    }
    int64_t cc = f / 2;                             /* the coarse cell containing it */
    double t = ((double)(f % 2) + fine->gl[l]) / 2; /* its coordinate in that cell */
    for (int64_t j = 0; j < nc; j++) {
      int64_t jl = j - cc * k; /* local index of coarse DoF j in cell cc */
      P[i * nc + j] = (jl >= 0 && jl <= k) ? ref_lagrange(k + 1, coarse->gl, (int)jl, t) : 0.0;
    }
  }
}

/* Global P restricted to interior rows and columns: P[i][j] = prod_d P_d[i_d][j_d]. */
static void transfer(const ref_mesh *coarse, const ref_mesh *fine, int transpose, const double *in,
                     double *out) {
  double *P[3] = {NULL, NULL, NULL};
  for (int d = 0; d < coarse->dim; d++) {
    P[d] = ref_malloc(sizeof(double) * (size_t)(fine->n[d] * coarse->n[d]));
    ref_prolongation_1d(coarse, fine, d, P[d]);
  }
  int64_t nf = fine->n_dofs, nc = coarse->n_dofs;
  int64_t nout = transpose ? nc : nf;
  for (int64_t i = 0; i < nout; i++) out[i] = 0;
  for (int64_t i = 0; i < nf; i++) {
    if (ref_mesh_is_boundary(fine, i)) continue;
    int64_t fi[3];
    ref_mesh_index(fine, i, fi);
    for (int64_t j = 0; j < nc; j++) {
      int64_t cj[3];
      ref_mesh_index(coarse, j, cj);
      double p = 1;
      for (int d = 0; d < coarse->dim && p != 0; d++) p *= P[d][fi[d] * coarse->n[d] + cj[d]];
      if (p == 0 || ref_mesh_is_boundary(coarse, j)) continue;
      if (transpose)
        out[j] += p * in[i];
      else
        out[i] += p * in[j];
    }
  }
  for (int d = 0; d < 3; d++) free(P[d]);
}

void ref_prolongate(const ref_mesh *coarse, const ref_mesh *fine, const double *c, double *f) {
  transfer(coarse, fine, 0, c, f);
}

void ref_restrict(const ref_mesh *coarse, const ref_mesh *fine, const double *f, double *c) {
  transfer(coarse, fine, 1, f, c);
}
