/* What a backend implements and may use: the function table, the levels and
 * their 1D data, errors, memory accounting and the context's settings.
 * Backends (c_api/src/cpu/, cuda_kernels/) include this header and nothing
 * else of the core; the object structs are in tpmg-impl.h. Never included by
 * users. */
#ifndef TPMG_BACKEND_H
#define TPMG_BACKEND_H

#include <stdio.h>

#include "tpmg-bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* levels 0..TPMG_MAX_FINE_LEVEL, one to spare, and the hidden levels below
 * level 0 (tpmg-grid.c): at most 30 halvings of an int cell count */
#define TPMG_MAX_LEVELS (TPMG_MAX_FINE_LEVEL + 2 + 31)
#define TPMG_PI 3.14159265358979323846

/* ---- errors ------------------------------------------------------------ */

/* Record a message in the context (file, line, text) and return the status. */
tpmg_status tpmg_error_set(const tpmg_context *ctx, tpmg_status status, const char *file, int line,
                           const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Usage check, always on: if cond fails, set the message and return status. */
#define TPMG_CHECK(ctx, cond, status, ...)                                                         \
  do {                                                                                             \
    if (!(cond)) return tpmg_error_set((ctx), (status), __FILE__, __LINE__, __VA_ARGS__);          \
  } while (0)

/* Propagate a failed status (its message is already set). */
#define TPMG_CALL(expr)                                                                            \
  do {                                                                                             \
    tpmg_status tpmg_call_status_ = (expr);                                                        \
    if (tpmg_call_status_ != TPMG_SUCCESS) return tpmg_call_status_;                               \
  } while (0)

size_t tpmg_precision_size(tpmg_precision precision);

/* ---- levels ------------------------------------------------------------ */

/* 1D data of one level in one precision: pointers into backend memory, arrays
 * row-major, one set per direction d < dim (they differ when h_d differs).
 * Without a variable coefficient (tpmg_level.coefficient NULL) the last
 * direction D = dim - 1 carries the reaction c (tpmg_level.reaction): its
 * stiffness matrices are K + c M and its eigenvalues lambda + c, so every
 * Kronecker sum of these data is the operator -Δ + c (tpmg-grid.c). With a
 * variable coefficient they hold no reaction: the kernels add it.
 * With P = 2k+1 patch points and I = 2k-1 interior patch points:
 *   cell_mass, cell_stiffness   (k+1) x (k+1)  M = h Mref, K = Kref / h
 *   patch_mass, patch_stiffness  P x P          the two cells of a vertex patch
 *   eigenvectors                 I x I          column j solves K s = lambda_j M s
 *                                               on the patch interior, S^T M S = I
 *   eigenvalues                  I
 * and, the same for every direction and level,
 *   prolongation                 P x (k+1)      the coarse cell's basis at the
 *                                               support points of its two children */
typedef struct {
  const void *cell_mass[3];
  const void *cell_stiffness[3];
  const void *patch_mass[3];
  const void *patch_stiffness[3];
  const void *eigenvectors[3];
  const void *eigenvalues[3];
  const void *prolongation;
  /* Graded levels (tpmg_level.widths): per direction tpmg_level.n_sets[d]
   * sets of the vertex patches' 1D data, a patch around vertex v taking set
   * tpmg_level.vertex_set[d][v_d] (its two cells' widths along d), each set
   * patch_mass P x P, patch_stiffness P x P, eigenvectors I x I, eigenvalues
   * I consecutive (the reaction in the last direction's where coefficient is
   * NULL, as above). NULL on other levels. */
  const void *sets[3];
} tpmg_level_data;

/* The 1D data of the unit patch (two cells of size h = 1) for one degree k, in
 * double in host memory, built once per grid by the core as the level data
 * are (the same matrices for h_d = 1; P = 2k+1, I = 2k-1, row-major with
 * these sizes): backends whose kernels take the level's matrices as the unit
 * ones times scale factors (M_d = h_d M, K_d = K / h_d, S_d = S / sqrt(h_d),
 * Lambda_d = Lambda / h_d^2) start from here, and add the reaction
 * (tpmg_level.reaction) themselves. */
typedef struct {
  double patch_mass[(2 * TPMG_MAX_DEGREE_2D + 1) * (2 * TPMG_MAX_DEGREE_2D + 1)];      /* P x P */
  double patch_stiffness[(2 * TPMG_MAX_DEGREE_2D + 1) * (2 * TPMG_MAX_DEGREE_2D + 1)]; /* P x P */
  double eigenvectors[(2 * TPMG_MAX_DEGREE_2D - 1) * (2 * TPMG_MAX_DEGREE_2D - 1)];    /* I x I */
  double eigenvalues[2 * TPMG_MAX_DEGREE_2D - 1];                                      /* I */
  double prolongation[(2 * TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)]; /* P x (k+1) */
  /* The k+1 points x_q and weights w_q of QGauss(k+1) on [0,1] (where the
   * coefficient is given, tpmg_level.quadrature) and, (k+1) x (k+1):
   * gauss_values N_qj = phi_j(x_q), the cell's basis at the points, and
   * gauss_gradients D_qp = l_p'(x_q), l_p the Lagrange polynomials through
   * the points: the derivative at the points of the polynomial of degree k
   * with values v there is D v (exact: k+1 values determine it). */
  double gauss_points[TPMG_MAX_DEGREE_2D + 1];
  double gauss_weights[TPMG_MAX_DEGREE_2D + 1];
  double gauss_values[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
  double gauss_gradients[(TPMG_MAX_DEGREE_2D + 1) * (TPMG_MAX_DEGREE_2D + 1)];
} tpmg_unit_data;

/* The smoother's surrogate with a variable coefficient (tpmg_level's
 * patch_solve) takes abar >= TPMG_SURROGATE_FLOOR a_max, a_max the patch's
 * largest cell value: then Ã = abar L + c M >= (2/3) A_I, so a local
 * correction is below 3/2 the exact one (the local error propagation
 * I - Ã^-1 A_I has its eigenvalues in [-1/2, 1)). A floor of 1/2 is reached
 * on the cell-interior functions (k >= 2) of the patch's largest cell, whose
 * error it flips instead of reducing: V-cycles diverged on 2D Q4 with a per
 * cell log-uniform in [1, 10] (doc/benchmarks.md). */
#define TPMG_SURROGATE_FLOOR (2.0 / 3.0)

/* One level of the hierarchy. In 2D, n[2] = cells[2] = 1 and h[2] = 1. */
typedef struct {
  int dim;
  int degree;
  int level;            /* the user's level number; < 0: hidden (below level 0) */
  tpmg_index cells[3];  /* cells per direction */
  tpmg_index n[3];      /* DoFs per direction: cells k + 1 */
  tpmg_index n_dofs;    /* n[0] n[1] n[2] */
  double h[3];          /* cell size per direction */
  double reaction;      /* c of -Δu + c u (tpmg_grid_options.reaction), in data[]'s direction
                           dim - 1 already where coefficient is NULL; the unit data hold none */
  tpmg_level_data data[2]; /* indexed by tpmg_precision */
  /* A variable coefficient a (tpmg_grid_set_coefficient), backend memory per
   * precision, NULL where a = 1. coefficient: a per cell of this level's box
   * (cells[0] x cells[1] x cells[2], lexicographic, x fastest; on a coarser
   * level than the finest the mean of its children's means). quadrature: on
   * the finest level given as TPMG_COEFFICIENT_QUADRATURE only, (k+1)^dim
   * values per cell of the box, a at the Gauss points of QGauss(k+1)
   * (lexicographic, x fastest), the cells as above; the operator then uses
   * these, and coefficient, each cell's largest point value (so that the
   * smoother's bound below holds: a_h(u,u) <= max_q a_q |u|_1^2 on the cell),
   * serves the smoother only.
   *   laplace: dst = sum_K (a_K A^K + c M^K) src (QUADRATURE: A^K with a at
   *     the quadrature points), Dirichlet entries as without coefficient;
   *   patch_solve: the patch's surrogate, a replaced by abar, the mean of
   *     coefficient over the patch's 2^dim cells or TPMG_SURROGATE_FLOOR times
   *     their largest value, whichever is larger (summed x fastest, then y, z;
   *     mean = sum / 2^dim):
   *     x_I += S (abar Lambda + c)^-1 S^T r_I with Lambda the sums of the 1D
   *     eigenvalues (no c in them);
   *   patch_fused, patch_residual: never called (the core refuses every
   *     smoother variant but GLOBAL). */
  const void *coefficient[2];
  const void *quadrature[2];
  const tpmg_unit_data *unit; /* host memory, owned by the grid; the same for every level */
  /* Graded cells (tpmg_grid_options.cell_widths), host memory owned by the
   * grid, NULL on levels of equal cells along every direction (h[] then).
   * On a graded level every direction has them, for the cells of this box:
   *   widths[d]      cells[d] widths along d;
   *   vertices[d]    cells[d] + 1 coordinates of the cells' faces along d;
   *   vertex_set[d]  per vertex 0..cells[d], the index of its patch's set in
   *                  data[p].sets[d] (vertices 1..cells[d] - 1 have patches).
   * The 1D data of such a level: cell_mass and cell_stiffness are the
   * reference cell's (h = 1, no reaction); the operator scales them per cell
   * (gradient term along d by prod_e w_e / w_d^2, mass by prod_e w_e) and adds
   * the reaction itself, as with a coefficient; the patch data are in sets. */
  const double *widths[3];
  const double *vertices[3];
  const int *vertex_set[3];
  int n_sets[3];
} tpmg_level;

/* The width of cell `cell` of the level along d. */
static inline double tpmg_level_width(const tpmg_level *lvl, int d, tpmg_index cell) {
  return lvl->widths[0] ? lvl->widths[d][cell] : lvl->h[d];
}

/* The coordinate along d of the point at reference position t (0..1) of cell
 * `cell`; lower: the level's lower face along d (the box's a_d). */
static inline double tpmg_level_coordinate(const tpmg_level *lvl, int d, double lower,
                                           tpmg_index cell, double t) {
  return lvl->widths[0] ? lvl->vertices[d][cell] + lvl->widths[d][cell] * t
                        : lower + lvl->h[d] * ((double)cell + t);
}

/* Patches of one colour per direction: vertices v_d = 1 + c_d + 2 t, t >= 0,
 * v_d <= cells_d - 1, where c_d = (colour >> d) & 1. */
static inline tpmg_index tpmg_level_patches_1d(const tpmg_level *lvl, int d, int colour) {
  tpmg_index last = lvl->cells[d] - 1 - 1 - ((colour >> d) & 1);
  return last < 0 ? 0 : last / 2 + 1;
}

/* The patches of one colour around vertices v_D in [vertices[0], vertices[1])
 * along the last direction D = dim - 1 (every direction before D whole): the
 * indices t_D = first .. first + count - 1 of tpmg_level_patches_1d's. The
 * whole colour: vertices {1, cells[D]}. */
static inline void tpmg_level_patch_layers(const tpmg_level *lvl, int colour,
                                           const tpmg_index vertices[2], tpmg_index *first,
                                           tpmg_index *count) {
  const int D = lvl->dim - 1;
  const tpmg_index c = (colour >> D) & 1, all = tpmg_level_patches_1d(lvl, D, colour);
  /* v = 1 + c + 2 t: the first t with v >= vertices[0], the first with v >= vertices[1] */
  tpmg_index t0 = vertices[0] - 1 - c, t1 = vertices[1] - 1 - c;
  t0 = t0 <= 0 ? 0 : (t0 + 1) / 2;
  t1 = t1 <= 0 ? 0 : (t1 + 1) / 2;
  if (t1 > all) t1 = all;
  *first = t0;
  *count = t1 > t0 ? t1 - t0 : 0;
}

/* ---- backends ---------------------------------------------------------- */

/* What a level is checked for (check_level). */
typedef enum { TPMG_USE_OPERATOR = 0, TPMG_USE_SMOOTHER = 1 } tpmg_level_use;

/* The most vectors one call of the backend's dots or axpys takes; the core
 * splits longer lists. */
#define TPMG_MULTI_MAX 16

/* One message between this rank and `peer` of the context's communicator:
 * send_bytes from `send` and recv_bytes into `recv`, both backend memory; a
 * count of 0 sends or receives nothing. Between two ranks, the messages of
 * one call pair up in the order given. */
typedef struct {
  int peer;
  const void *send;
  size_t send_bytes;
  void *recv;
  size_t recv_bytes;
} tpmg_message;

/* What every backend provides. The core validates arguments, then calls these;
 * a backend may assume valid arguments. Vector pointers are in the backend's
 * memory space; `prec` selects float or double. Each returns a status and sets
 * the context's message on failure. */
typedef struct {
  const char *name;
  tpmg_memory_type memory; /* where alloc puts vectors */
  /* on several ranks, levels of at most this many DoFs are kept whole on
   * every rank by default (tpmg_context_options.whole_level_dofs): where
   * computing such a level redundantly takes less time than the latency of
   * its exchanges */
  tpmg_index whole_level_dofs;
  /* set up the backend's state (tpmg_backend_set_data); refuse a variant
   * (tpmg_backend_variant) it does not have with TPMG_ERROR_UNSUPPORTED */
  tpmg_status (*init)(tpmg_context *ctx);
  void (*finalize)(tpmg_context *ctx);
  tpmg_status (*alloc)(tpmg_context *ctx, size_t bytes, void **ptr);
  void (*release)(tpmg_context *ctx, void *ptr);
  tpmg_status (*upload)(tpmg_context *ctx, void *dst, const void *host, size_t bytes);
  tpmg_status (*download)(tpmg_context *ctx, void *host, const void *src, size_t bytes);
  tpmg_status (*synchronize)(tpmg_context *ctx);
  /* backend memory free for allocation (SIZE_MAX where unknown) */
  tpmg_status (*free_memory)(tpmg_context *ctx, size_t *bytes);

  /* vector operations */
  tpmg_status (*set)(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double value, void *v);
  tpmg_status (*axpby)(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, double a,
                       const void *x, double b, void *y);
  tpmg_status (*dot)(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, const void *x,
                     const void *y, double *result);
  tpmg_status (*convert)(tpmg_context *ctx, tpmg_index n, tpmg_precision src_prec, const void *src,
                         tpmg_precision dst_prec, void *dst);
  /* Several vectors in one pass (GMRES' classical Gram-Schmidt), 1 <= m <=
   * TPMG_MULTI_MAX, each sum in double in an order fixed by n alone.
   * dots: result[i] = (x_i, y) for i < m and result[m] = (y, y) */
  tpmg_status (*dots)(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, int m,
                      const void *const *x, const void *y, double *result);
  /* axpys: y += a_0 x_0 + ... + a_{m-1} x_{m-1}, added in that order in y's
   * precision `prec`; the x_i are in x_prec: prec, or float for a double y
   * (each entry widened exactly, then as for double x_i: TPMG_ARITHMETIC_MIXED's
   * GMRES update x += Z y with Z in float). norm2 != NULL: (y, y) of the new y
   * as stored */
  tpmg_status (*axpys)(tpmg_context *ctx, tpmg_precision prec, tpmg_index n, int m, const double *a,
                       tpmg_precision x_prec, const void *const *x, void *y, double *norm2);

  /* dst = A src; Dirichlet entries of src read as zero, dst_B = src_B */
  tpmg_status (*laplace)(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                         const void *src, void *dst);
  /* dst_B = src_B, interior of dst untouched */
  tpmg_status (*copy_boundary)(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                               const void *src, void *dst);
  /* FUSED, for the patches of one colour around vertices v_D in [vertices[0],
   * vertices[1]) along the last direction (tpmg_level_patch_layers): r_I =
   * b_I - (Abar x)_I on the patch, x_I += A_I^{-1} r_I. boundary != 0:
   * BOUNDARY, the window read with the patch interior as zero (x_I not
   * loaded), so r_I = b_I - A_IB x_B, and x_I = A_I^{-1} r_I stored */
  tpmg_status (*patch_fused)(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             int colour, int boundary, const tpmg_index vertices[2],
                             const void *b, void *x);
  /* SEPARATE, first half: r_I = b_I - (Abar x)_I on the interiors of one colour's
   * patches (other entries of r untouched) */
  tpmg_status (*patch_residual)(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                int colour, const void *b, const void *x, void *r);
  /* GLOBAL and SEPARATE: x_I += A_I^{-1} r_I for every patch of one colour */
  tpmg_status (*patch_solve)(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             int colour, const void *r, void *x);
  /* fine += P coarse, Dirichlet entries of coarse read as zero, of fine unchanged */
  tpmg_status (*prolongate_add)(tpmg_context *ctx, const tpmg_level *coarse,
                                const tpmg_level *fine, tpmg_precision prec, const void *c,
                                void *f);
  /* coarse = P^T fine, Dirichlet entries of fine read as zero, of coarse set to 0 */
  tpmg_status (*restrict_)(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                           tpmg_precision prec, const void *f, void *c);
  /* x_I = inverse b_I on level 0 (inverse: dense n_I x n_I row-major over the
   * interior DoFs in lexicographic order), x_B = 0 */
  tpmg_status (*coarse_solve)(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                              const void *inverse, const void *b, void *x);

  /* Start the n messages on the context's communicator; messages_wait
   * completes them. Between the two, the backend's operations may run while
   * the messages travel (they neither read the receive ranges nor write the
   * send ranges: the caller sees to that); after messages_wait they see what
   * was received and may write the send ranges. A backend may complete the
   * messages in messages_start already. At most one set of messages is
   * started at a time, and every messages_start is followed by messages_wait,
   * whatever failed in between. NULL where the backend runs on one process
   * only, and a context on more than one rank is refused. Host-memory
   * backends take tpmg_comm_host_messages_start and _wait. */
  tpmg_status (*messages_start)(tpmg_context *ctx, int n, const tpmg_message *messages);
  tpmg_status (*messages_wait)(tpmg_context *ctx);
  /* Set up what messages needs among the context's ranks, and name it in
   * *transport (a static string: "nccl", "mpi", ...). Called on every rank of
   * a context of more than one rank, once init has succeeded on all of them;
   * collective (tpmg_comm_allgather); the core agrees on its status. NULL:
   * nothing to set up, the transport is host MPI ("mpi"). finalize undoes it. */
  tpmg_status (*connect)(tpmg_context *ctx, const char **transport);

  /* NULL, or: whether the backend (its variant) has kernels for `use` on this
   * level and precision; TPMG_ERROR_UNSUPPORTED with a message if not. The
   * core calls it when an operator (TPMG_USE_OPERATOR, laplace) or a smoother
   * (TPMG_USE_SMOOTHER, the patch operations, and laplace for GLOBAL) is
   * created. */
  tpmg_status (*check_level)(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             tpmg_level_use use);

  /* For benchmarks. start != 0: mark the start on the backend's queue of work;
   * start == 0: mark the end, wait for it and return the seconds between the
   * two marks (CUDA events on the CUDA backend, the wall clock on the CPU). */
  tpmg_status (*stopwatch)(tpmg_context *ctx, int start, double *seconds);
  /* For benchmarks, NULL where not measured: the device's limits measured by
   * small loops. */
  tpmg_status (*measure_limits)(tpmg_context *ctx, tpmg_device_limits *limits);
  /* For benchmarks: the work per DoF of laplace on this level, and of one
   * smoothing step of `variant` (tpmg_work_* give the counts of the
   * vertex-patch kernels) */
  tpmg_status (*operator_work)(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                               tpmg_work *work);
  tpmg_status (*smoother_work)(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                               tpmg_smoother_variant variant, tpmg_work *work);
} tpmg_backend_ops;

/* Kinds of smoother arithmetic for tpmg_work_smoother: dense, sparse (the
 * CUDA kernels other than basic), mirror (the CPU's batched kernels). */
enum { TPMG_WORK_DENSE = 0, TPMG_WORK_SPARSE = 1, TPMG_WORK_MIRROR = 2 };

/* Counted work per DoF of the vertex-patch kernels (tpmg-work.c), for the
 * backends' operator_work and smoother_work: `sparse` kernels skip the zero
 * blocks of the patch matrices and split the eigenvectors into even and odd
 * ones (tpmg_work_smoother's kind TPMG_WORK_SPARSE; TPMG_WORK_MIRROR: all 1D
 * matrices split so, in mirror coordinates); `shared` kernels keep their
 * intermediate tensors in shared memory; `matrices_loaded` kernels load each
 * 1D matrix entry per multiply-add.
 * work->kernel is left to the caller. */
void tpmg_work_operator(const tpmg_level *lvl, int sparse, int shared, int matrices_loaded,
                        tpmg_work *work);
void tpmg_work_smoother(const tpmg_level *lvl, tpmg_smoother_variant variant, int kind,
                        int shared, int matrices_loaded, const tpmg_work *apply, tpmg_work *work);

/* Backend memory with accounting; a failed allocation sets the message. */
tpmg_status tpmg_malloc(tpmg_context *ctx, size_t bytes, const char *what, void **ptr);
void tpmg_free(tpmg_context *ctx, size_t bytes, void *ptr);
/* Host memory for host-side work (the coarse solver's host arrays, the test
 * problems' host copies), checked against the host's available memory like
 * tpmg_malloc (TPMG_ERROR_MEMORY saying how much is needed and available):
 * tpmg_malloc itself where the backend's memory is the host, so counted in
 * tpmg_context_memory; else plain host memory counted apart (host_bytes,
 * which tpmg_context_destroy also requires to be zero). */
tpmg_status tpmg_host_malloc(tpmg_context *ctx, size_t bytes, const char *what, void **ptr);
void tpmg_host_free(tpmg_context *ctx, size_t bytes, void *ptr);
/* MemAvailable of /proc/meminfo in bytes, SIZE_MAX where it cannot be read. */
tpmg_status tpmg_host_available(size_t *bytes);

/* The messages ops of host-memory backends: MPI point to point on the
 * context's communicator (device memory too where MPI takes it:
 * tpmg_comm_device_aware), nonblocking between _start and _wait; and both in
 * one call. */
tpmg_status tpmg_comm_host_messages_start(tpmg_context *ctx, int n, const tpmg_message *messages);
tpmg_status tpmg_comm_host_messages_wait(tpmg_context *ctx);
tpmg_status tpmg_comm_host_messages(tpmg_context *ctx, int n, const tpmg_message *messages);
/* all = the `bytes` bytes of `mine` from every rank, in rank order (host
 * memory). Collective. */
tpmg_status tpmg_comm_allgather(tpmg_context *ctx, const void *mine, size_t bytes, void *all);
/* After a step that may fail on some ranks only: every rank returns the
 * status of the lowest failing rank, with its message prefixed by "rank R of
 * P: ". Collective; nothing to do on one process. */
tpmg_status tpmg_comm_agree(tpmg_context *ctx, tpmg_status status);
/* 1 if the MPI library says at run time that it takes CUDA device memory
 * (Open MPI's MPIX_Query_cuda_support), else 0. */
int tpmg_comm_device_aware(void);

/* ---- what a backend may read of its context ------------------------------ */

/* The CPU threads of the context (>= 1). */
int tpmg_backend_threads(const tpmg_context *ctx);
/* The device number asked for in the context options. */
int tpmg_backend_device(const tpmg_context *ctx);
/* This process's index among the context's ranks on its node (0 on one
 * process): a GPU backend's rank takes the device tpmg_backend_device +
 * tpmg_backend_local_rank, modulo the devices it sees. */
int tpmg_backend_local_rank(const tpmg_context *ctx);
/* The variant named after the backend's name ("variant" of "name/variant"), or
 * NULL; init refuses a variant it does not know. */
const char *tpmg_backend_variant(const tpmg_context *ctx);
/* The backend's own state: set by init, freed by finalize. */
void *tpmg_backend_data(const tpmg_context *ctx);
void tpmg_backend_set_data(tpmg_context *ctx, void *data);

#ifdef __cplusplus
}
#endif

#endif
