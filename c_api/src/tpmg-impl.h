/* The object structs of tpmg, for the object files of c_api/src/. Backends
 * include tpmg-backend.h instead. Never included by users. */
#ifndef TPMG_IMPL_H
#define TPMG_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "tpmg-backend.h"
#include "tpmg-basis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- backends ------------------------------------------------------------ */

/* The backend registered under `name` (tpmg-backends.c): NULL if no backend
 * of that name is compiled in; *known is 1 if the name is one tpmg knows
 * (compiled in or not). */
const tpmg_backend_ops *tpmg_backend_find(const char *name, int *known);

/* ---- objects ----------------------------------------------------------- */

typedef struct tpmg_vector_registry tpmg_vector_registry;

/* Threads (tpmg.h, "Threads"): objects of one context may be used by
 * different threads at once, so what they share in the context is
 * synchronized: the counts are atomic, the vector registry and the shared copy
 * of the error message are guarded by `lock`. Everything else in the context
 * is set at creation and only read afterwards (or belongs to calls that tpmg.h
 * excludes from concurrent use: MPI, CUDA, the stopwatch). */
struct tpmg_context {
  char backend[64];          /* the backend's name as given ("name/variant") */
  const char *variant;       /* inside backend: what follows the first '/', or NULL */
  int n_threads;
  int device;
  uint64_t id;              /* unique among the process's contexts (tpmg_error_set) */
  atomic_size_t bytes;      /* backend memory allocated through tpmg_malloc */
  atomic_size_t host_bytes; /* host memory of tpmg_host_malloc where that is not backend memory */
  atomic_int refs;          /* the caller's 1 plus one per live grid (tpmg_grid_release) */
  pthread_mutex_t lock;     /* guards vectors and error */
  tpmg_vector_registry *vectors; /* what tpmg_vector_create made (tpmg-vector.c) */
  const tpmg_backend_ops *ops;
  void *backend_data;        /* owned by the backend */
  int stopwatch_started;     /* a start mark without its end mark yet */
  int rank, size;            /* in comm; 0 and 1 on one process */
  void *comm;                /* an MPI_Comm duplicated from the caller's, or NULL (tpmg-comm.c) */
  void *pending;             /* MPI_Request[pending_capacity]: host messages in flight */
  int n_pending, pending_capacity;
  int local_rank;            /* index among the ranks on this node; 0 on one process */
  tpmg_index whole_level_dofs; /* levels this small are kept whole on every rank */
  int overlap;               /* smoothers overlap exchanges with patches (tpmg-smoother.c) */
  const char *transport;     /* how messages travel (tpmg_context_transport) */
  tpmg_communication traffic; /* counted by tpmg-partition.c and tpmg-comm.c */
  char error[1024];           /* the last message of any thread; mutable through const in
                                 tpmg_error_set, under lock */
};

/* Backend memory that the calling thread's tpmg_malloc and tpmg_free added
 * (net, modulo 2^64, over all contexts): the difference of two readings is
 * what this thread's calls in between allocated, unaffected by other threads
 * (as the difference of two tpmg_context_memory readings is not). */
size_t tpmg_thread_memory(void);

/* "1.2 MB", "3.4 kB" or "56 bytes" into out (size bytes), for messages. */
void tpmg_format_bytes(size_t bytes, char *out, size_t size);

/* Replace the calling thread's message on ctx, and the context's, by `message`
 * as it is (no file and line): for a message agreed on among ranks. */
void tpmg_error_replace(tpmg_context *ctx, const char *message);

/* How one level is stored on this rank (tpmg-partition.c). Levels are split
 * along their last direction D (y in 2D, z in 3D) into slabs of whole cells,
 * one per rank in rank order; a rank stores its slab and two more cells on
 * each side where there are cells (ghosts), as a lexicographic box of planes
 * (a plane: the DoFs with one index along D). It owns the planes above its
 * first cell's lower face up to and including its last cell's upper face,
 * and the first rank also the bottom plane (deal.II's owner of an interface
 * DoF: the lower subdomain id). With one rank, or on levels too
 * coarse to split (each rank keeps the whole level), stored = owned = all. */
typedef struct {
  int distributed;                    /* split among the ranks */
  tpmg_index plane;                   /* DoFs per plane */
  tpmg_index cells;                   /* cells of the whole level along D */
  tpmg_index first, count;            /* stored planes: [first, first + count), global */
  tpmg_index owned_first, owned_end;  /* owned planes, global */
  tpmg_index cell_first, cell_end;    /* owned cells along D */
} tpmg_part;

struct tpmg_grid {
  tpmg_context *ctx;                 /* referenced: ctx->refs counts this grid */
  atomic_int refs;                   /* the caller's handle plus one per object using the grid */
  tpmg_grid_options options;
  int hidden;                           /* levels below the user's level 0 (tpmg-grid.c) */
  int n_levels;                         /* hidden + fine_level + 1 */
  tpmg_level levels[TPMG_MAX_LEVELS];   /* the hidden levels, then the user's 0..fine_level */
  void *data_block[TPMG_MAX_LEVELS][2]; /* backend memory behind levels[l].data[p] */
  size_t data_bytes[TPMG_MAX_LEVELS][2];
  tpmg_unit_data unit; /* levels[l].unit points here */
  /* the partition: levels[l] is this rank's box of level l (what backends
   * see), global[l] the whole level (the same 1D data); levels above
   * cut_level are distributed (none with one rank) */
  tpmg_part part[TPMG_MAX_LEVELS];
  tpmg_level global[TPMG_MAX_LEVELS];
  int cut_level;
  /* a variable coefficient (tpmg-coefficient.c): the backend memory behind
   * levels[l].coefficient[p] and, on the finest level, .quadrature[p]; and
   * the whole per-cell coefficient of the levels up to the user's level 0
   * (hidden + 1 of them) on the host in double (tpmg_host_malloc), for the
   * coarse solver's assembly */
  tpmg_coefficient_layout coefficient_layout;
  void *coefficient_block[TPMG_MAX_LEVELS][2];
  size_t coefficient_bytes[TPMG_MAX_LEVELS][2];
  void *quadrature_block[2];
  size_t quadrature_bytes[2];
  double *whole_coefficient[TPMG_MAX_LEVELS];
  size_t whole_coefficient_bytes[TPMG_MAX_LEVELS];
  /* graded cells (tpmg_grid_options.cell_widths): the copies of the given
   * widths (options.cell_widths points here), and per level one host block
   * (malloc) behind global[l].widths, .vertices and .vertex_set (levels[l]'s
   * point into it at this rank's box); NULL where the cells are equal */
  int graded;
  double *cell_widths[3];
  void *graded_block[TPMG_MAX_LEVELS];
};

/* ---- grid data (tpmg-grid.c) ---------------------------------------------- */

/* Build level l's 1D data on the host and upload them into its blocks in both
 * precisions: the reaction folded into the last direction unless the level has
 * a coefficient (levels[l].coefficient[0] != NULL). */
tpmg_status tpmg_grid_level_data(tpmg_grid *grid, int l);
/* Free what tpmg_grid_set_coefficient allocated (tpmg-coefficient.c). */
void tpmg_coefficient_free(tpmg_grid *grid);
/* This rank's owned values as given to tpmg_grid_set_coefficient, bit for bit,
 * in backend memory (the owned cells of the finest box's double block:
 * QUADRATURE keeps the values themselves, CELLS a cell's mean of its one
 * value, which is that value): *n doubles from *values, in the caller's
 * order. *values = NULL and *n = 0 on a grid without a coefficient. For
 * tpmg_setup_write, which writes them. */
void tpmg_coefficient_owned(const tpmg_grid *grid, const void **values, tpmg_index *n);

/* Validated access for the object files, the one place where a user's level
 * number (0 = the coarse mesh as given) becomes an index into grid->levels:
 * level must be min_level..fine_level; *index = hidden + level. */
tpmg_status tpmg_grid_check_level(const tpmg_grid *grid, int level, int min_level, int *index);

/* The objects of one level by its index into grid->levels (hidden levels
 * included), for the multigrid hierarchy. The public create functions check
 * their arguments and the user's level, then call these with the index; a
 * smoother needs index >= 1. */
tpmg_status tpmg_smoother_create_index(tpmg_grid *grid, int index, tpmg_precision precision,
                                       const tpmg_smoother_options *options,
                                       tpmg_smoother **smoother);
tpmg_status tpmg_coarse_create_index(tpmg_grid *grid, int index, tpmg_precision precision,
                                     tpmg_coarse **coarse);

/* Lifetimes. An object that uses a grid takes a reference on it when it is
 * created (tpmg_grid_reference) and drops it as the last step of being freed
 * (tpmg_grid_release); the grid is freed, and drops its reference on the
 * context, when its count reaches zero. So the caller may destroy a grid and
 * its users in any order. The context is not freed by references: its destroy
 * is refused while anything made from it is live (tpmg_context_destroy). */
void tpmg_grid_reference(tpmg_grid *grid);
void tpmg_grid_release(tpmg_grid *grid);

/* ---- communicator (tpmg-comm.c) ------------------------------------------ */

/* Duplicate the caller's MPI_Comm (comm points to one), or one process for
 * NULL; TPMG_ERROR_UNSUPPORTED without MPI built in. Collective. */
tpmg_status tpmg_comm_create(tpmg_context *ctx, const void *comm);
/* This process's index among the ranks of `comm` (an MPI_Comm *) that share
 * its node (MPI_COMM_TYPE_SHARED); 0 for NULL. Collective. */
tpmg_status tpmg_comm_local_rank(const void *comm, int *local);
void tpmg_comm_destroy(tpmg_context *ctx);
/* The largest status of all ranks of `comm` (an MPI_Comm *, or NULL for one
 * process), for calls without a context. Collective. */
tpmg_status tpmg_comm_status(const void *comm, tpmg_status status);
/* tpmg_comm_agree, tpmg_comm_allgather: tpmg-backend.h */
/* TPMG_ERROR_ARGUMENT on every rank if the n bytes differ from rank 0's;
 * `what` names them in the message. Collective. */
tpmg_status tpmg_comm_same(tpmg_context *ctx, const void *bytes, size_t n, const char *what);
/* In place over all ranks (host memory). Collective. */
tpmg_status tpmg_comm_sum(tpmg_context *ctx, double *values, int n);
tpmg_status tpmg_comm_min(tpmg_context *ctx, double *values, int n);

/* ---- partition (tpmg-partition.c) ---------------------------------------- */

/* Split the levels of a grid whose levels[] hold the whole levels: sets
 * global[], part[], cut_level and turns levels[] into this rank's boxes. */
tpmg_status tpmg_partition_create(tpmg_grid *grid);
/* Make the ghost planes of v on level l current: `below` planes under the
 * owned ones and `above` planes over them, from the neighbours that own them.
 * Collective on distributed levels, nothing to do on others. */
tpmg_status tpmg_partition_exchange(const tpmg_grid *grid, int l, tpmg_precision p, void *v,
                                    tpmg_index below, tpmg_index above);
/* The same for the n (1 or 2) vectors v[], in two halves: between _start and
 * _wait the backend may compute what neither reads the ghost planes nor
 * writes the planes sent (the owned `above` planes at the lower cut, `below`
 * at the upper one). _wait follows every _start, whatever failed between. */
tpmg_status tpmg_partition_exchange_start(const tpmg_grid *grid, int l, tpmg_precision p, int n,
                                          void *const *v, tpmg_index below, tpmg_index above);
tpmg_status tpmg_partition_exchange_wait(const tpmg_grid *grid, int l);
/* The cells along the last direction that `rank` owns on level l: its slab
 * on a distributed level, every cell on a whole one. */
void tpmg_partition_cells(const tpmg_grid *grid, int l, int rank, tpmg_index *first,
                          tpmg_index *end);
/* The patches of level l's box that the smoother updates, by their vertices
 * v along the last direction, each range [first, end): `inner` reads no
 * ghost plane and writes no plane sent by an exchange of k + 1 planes below
 * and k above, so it may run while that exchange travels; edge[0] and
 * edge[1] (next to the lower and the upper cut) are the others. Patches whose
 * interior is ghost planes only are in none of them. One rank or a whole
 * level: inner is every patch, the edges are empty. */
void tpmg_partition_patches(const tpmg_grid *grid, int l, tpmg_index inner[2],
                            tpmg_index edge[2][2]);
/* The owned entries of level l's local vector: [offset, offset + n). */
void tpmg_partition_owned(const tpmg_grid *grid, int l, tpmg_index *offset, tpmg_index *n);
/* Dots over the owned entries, summed over the ranks: as the backend's dot,
 * dots and axpys (norm2), on level l's vectors (axpys' x_i in x_prec). */
tpmg_status tpmg_partition_dot(const tpmg_grid *grid, int l, tpmg_precision p, const void *x,
                               const void *y, double *result);
tpmg_status tpmg_partition_dots(const tpmg_grid *grid, int l, tpmg_precision p, int m,
                                const void *const *x, const void *y, double *result);
tpmg_status tpmg_partition_axpys(const tpmg_grid *grid, int l, tpmg_precision p, int m,
                                 const double *a, tpmg_precision x_prec, const void *const *x,
                                 void *y, double *norm2);
/* dst = A src on level l, src's ghosts made current first. */
tpmg_status tpmg_partition_laplace(const tpmg_grid *grid, int l, tpmg_precision p,
                                   const void *src, void *dst);
/* Bytes of scratch that restriction from level `fine` needs (0: none). */
size_t tpmg_partition_restrict_scratch(const tpmg_grid *grid, int fine, tpmg_precision p);
/* The backend's restrict_ and prolongate_add between levels fine - 1 and
 * fine, across ranks; fine's ghosts (restrict) or coarse's (prolongate) are
 * made current first. scratch: tpmg_partition_restrict_scratch bytes. */
tpmg_status tpmg_partition_restrict(const tpmg_grid *grid, int fine, tpmg_precision p,
                                    const void *f, void *c, void *scratch);
tpmg_status tpmg_partition_prolongate_add(const tpmg_grid *grid, int fine, tpmg_precision p,
                                          const void *c, void *f);
/* The whole level l on every rank from the owned planes of each (global: the
 * whole level's length), and this rank's stored planes out of a whole one. */
tpmg_status tpmg_partition_gather(const tpmg_grid *grid, int l, tpmg_precision p,
                                  const void *local, void *global);
tpmg_status tpmg_partition_extract(const tpmg_grid *grid, int l, tpmg_precision p,
                                   const void *global, void *local);
/* The backend's patch smoother colour of this rank's box for a global colour. */
int tpmg_partition_colour(const tpmg_grid *grid, int l, int colour);

/* tpmg_smoother_apply without its argument checks (for the multigrid). */
tpmg_status tpmg_smoother_sweep(tpmg_smoother *smoother, int reverse, const void *b, void *x);

/* ---- multigrid hierarchy (tpmg-multigrid.c) ------------------------------ */

/* A hierarchy reads and writes vectors of its own precision only; levels are
 * grid indices (0 the bottom, L = grid->n_levels - 1 the finest). On level L
 * the caller's vectors take the place of b_L and x_L, so the hierarchy holds
 * neither. */

/* tpmg_multigrid_create without the adapter that a public float hierarchy
 * keeps for double vectors, and with fine_r: a vector of the hierarchy's
 * precision and level L's length that the hierarchy uses as its residual r_L
 * (borrowed, until destroy; its contents are the hierarchy's during its calls
 * only), or NULL for one of its own. Collective. */
tpmg_status tpmg_multigrid_create_hierarchy(tpmg_grid *grid, const tpmg_multigrid_options *options,
                                            void *fine_r, tpmg_multigrid **mg);
/* z = V(0, r) on the finest level: tpmg_multigrid_precondition without its
 * argument checks, in the hierarchy's precision. */
tpmg_status tpmg_multigrid_apply(tpmg_multigrid *mg, const void *r, void *z);
/* Full multigrid's first pass: tpmg_multigrid_fmg without its argument
 * checks, in the hierarchy's precision. r0 NULL: FMG from x = 0, x written.
 * Otherwise FMG from the start vector in x: r0 = b - A x (Dirichlet entries
 * zero) replaces b on the coarser levels, which so solve for the correction
 * of x, and the finest level adds the prolongated correction to x before its
 * V-cycle on b. Where x is zero but for its Dirichlet entries, r0 is b's
 * interior and the result is that of r0 NULL. */
tpmg_status tpmg_multigrid_fmg_from(tpmg_multigrid *mg, const void *b, const void *r0, void *x);

/* The pieces of one level, for an algorithm that composes them in another
 * precision (mixed FMG, tpmg-mixed.c). */
/* z = V_l(0, r) on level l, 0 <= l <= L: the V-cycle from zero (Algorithm
 * 1), on level 0 the bottom solve. r and z of level l's length in the
 * hierarchy's precision; for l < L they may be its own b_l and x_l
 * (tpmg_multigrid_level_vectors), which a V-cycle on level l does not use
 * otherwise. */
tpmg_status tpmg_multigrid_level_apply(tpmg_multigrid *mg, int l, const void *r, void *z);
/* The hierarchy's b_l and x_l of level l < L: the caller's between calls of
 * the hierarchy, which writes them before it reads them. */
void tpmg_multigrid_level_vectors(const tpmg_multigrid *mg, int l, void **b, void **x);
/* Restriction from level `fine` to fine - 1 (tpmg_partition_restrict) of
 * vectors of precision p, either, through the hierarchy's scratch. */
tpmg_status tpmg_multigrid_restrict(const tpmg_multigrid *mg, int fine, tpmg_precision p,
                                    const void *f, void *c);

/* ---- mixed-precision adapter (tpmg-mixed.c) ------------------------------ */

/* Double vectors on a float hierarchy: r converted into float, the float
 * V-cycle, its result converted back or added to x; and mixed FMG. */
typedef struct tpmg_mixed tpmg_mixed;

/* The adapter on grid's finest level around mg, a float hierarchy on grid
 * (borrowed: destroy the adapter first), or for mg NULL around a float
 * hierarchy of `options` that it makes and owns. It keeps level L's b (the
 * double argument in float) and x (the V-cycle's result) in float. lend
 * (only with mg NULL): the caller takes the V-cycle's result in float
 * (tpmg_mixed_precondition_float only, never tpmg_mixed_precondition or
 * tpmg_mixed_correct), the adapter keeps no x, and its b and its hierarchy's
 * r_L are the two halves of one block of at least n doubles (r_L at a
 * 256-byte boundary), which holds that result in double. fmg: mixed FMG's
 * double level vectors now (see tpmg_mixed_fmg), not at its first call.
 * Collective. */
tpmg_status tpmg_mixed_create(tpmg_grid *grid, const tpmg_multigrid_options *options,
                              tpmg_multigrid *mg, int lend, int fmg, tpmg_mixed **mixed);
tpmg_status tpmg_mixed_destroy(tpmg_mixed **mixed);
/* z = V(0, r), r and z double: the float V-cycle on r converted, its result
 * converted back. */
tpmg_status tpmg_mixed_precondition(tpmg_mixed *mixed, const void *r, void *z);
/* x += V(0, r), r and x double: the float V-cycle's result added to x from
 * float (each entry widened exactly: bitwise as x += z with z its double copy,
 * without z). */
tpmg_status tpmg_mixed_correct(tpmg_mixed *mixed, const void *r, void *x);
/* z = V(0, r) with r double and z float, the V-cycle writing z itself, for
 * a lending adapter; *z_double: z in double, in the lent block, valid until
 * the next call of the adapter. */
tpmg_status tpmg_mixed_precondition_float(tpmg_mixed *mixed, const void *r, void *z,
                                          const void **z_double);
/* Mixed FMG, b and x double: tpmg_multigrid_fmg_from's pass (r0 as there,
 * double) with b and the iterates in double on every level, each level's
 * V-cycle in float on the double residual. work: a double vector of level
 * L's length the call may overwrite, or NULL for the adapter's own (made by
 * the first such call); the adapter uses its own anyway where a coarser level
 * is longer on this rank (a level kept whole on every rank against this
 * rank's slab of the finest). r0 may be work: it is read before work is
 * written. fine_z: a float vector of level L's length for the last
 * V-cycle's result, needed by a lending adapter (it has no x), else unused. */
tpmg_status tpmg_mixed_fmg(tpmg_mixed *mixed, const void *b, const void *r0, void *x, void *work,
                           void *fine_z);

/* tpmg_coarse_apply without its argument checks (for the multigrid). */
tpmg_status tpmg_coarse_solve(tpmg_coarse *coarse, const void *b, void *x);

/* The vectors of tpmg_vector_create, registered in their context (tpmg-vector.c).
 * tpmg_vector_check is the one check of a vector argument: where v is
 * registered in ctx, its precision must be `precision` and its length at least
 * n; unregistered pointers (borrowed memory, e.g. a deal.II vector's) pass.
 * `what` names the call and the argument for the message. */
tpmg_status tpmg_vector_check(tpmg_context *ctx, const char *what, const void *v,
                              tpmg_precision precision, tpmg_index n);
/* What tpmg_solver_describe (tpmg-solver-describe.c) reports of a solver
 * (tpmg-solver.c keeps it). */
typedef struct {
  tpmg_context *ctx;
  tpmg_solver_options options;
  int restart;             /* GMRES: the restart length in use; 0 for other solvers */
  long long solves;        /* tpmg_solver_solve calls that returned TPMG_SUCCESS */
  tpmg_solver_result last; /* the last of them; zero while solves is 0 */
} tpmg_solver_state;
void tpmg_solver_get_state(const tpmg_solver *solver, tpmg_solver_state *state);

/* The vector arguments a and b of a collective call `call`: distinct, not NULL,
 * each checked by tpmg_vector_check; every rank returns the same status. */
tpmg_status tpmg_vector_check_pair(tpmg_context *ctx, const char *call, tpmg_precision precision,
                                   const char *name_a, const void *a, tpmg_index n_a,
                                   const char *name_b, const void *b, tpmg_index n_b);
/* The number of live vectors of ctx, and freeing its (empty) registry. */
size_t tpmg_vector_count(tpmg_context *ctx);
void tpmg_vector_registry_free(tpmg_context *ctx);

#ifdef __cplusplus
}
#endif

#endif
