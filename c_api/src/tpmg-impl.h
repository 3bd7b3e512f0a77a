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
};

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

/* tpmg_multigrid_precondition without its argument checks (for the solvers). */
tpmg_status tpmg_multigrid_apply(tpmg_multigrid *mg, tpmg_precision precision, const void *r,
                                 void *z);
/* The solvers' hierarchy: tpmg_multigrid_create for a caller whose vectors are
 * all of precision `outer`. A hierarchy of that precision converts nothing and
 * holds no fine-level b and x (the caller's take their place). A float
 * hierarchy under double vectors (TPMG_MODE_MIXED) converts the argument into
 * its fine-level b; with native != 0 the caller takes every result in float,
 * from tpmg_multigrid_apply_native only (never apply or fmg, which need the
 * fine-level x it then lacks), and the fine-level b and r are the halves of
 * one block of at least n doubles, lent between calls (tpmg_multigrid_scratch). */
tpmg_status tpmg_multigrid_create_outer(tpmg_grid *grid, const tpmg_multigrid_options *options,
                                        tpmg_precision outer, int native, tpmg_multigrid **mg);
/* z = V(0, r) with r in `precision` (converted into the fine-level b if that is
 * not the hierarchy's) and z in the hierarchy's precision, written by the
 * V-cycle itself. */
tpmg_status tpmg_multigrid_apply_native(tpmg_multigrid *mg, tpmg_precision precision, const void *r,
                                        void *z);
/* x += V(0, r) for a hierarchy that converts (tpmg_multigrid_create_outer
 * with outer = precision != its own, native = 0): the V-cycle's result in its
 * fine-level x added to x from the hierarchy's precision, as x += z with z
 * that result converted (bitwise). */
tpmg_status tpmg_multigrid_correct(tpmg_multigrid *mg, tpmg_precision precision, const void *r,
                                   void *x);
/* A lending hierarchy's block (tpmg_multigrid_create_outer) as a vector of the
 * finest level's n doubles, NULL for others. Between calls of the hierarchy it
 * is the caller's to overwrite; the next call writes its fine-level b and r
 * before reading them. */
void *tpmg_multigrid_scratch(const tpmg_multigrid *mg);

/* tpmg_multigrid_fmg without its argument checks (for the solvers). b and x in
 * double on a float hierarchy (mixed FMG): work is a double vector of the
 * finest level's length the call may overwrite, or NULL for the hierarchy's
 * own (made by the first such call); the hierarchy uses its own anyway where
 * a coarser level is longer on this rank (a level kept whole on every rank
 * against this rank's slab of the finest), made by tpmg_multigrid_reserve_fmg.
 * r0 NULL: FMG from x = 0, x written. Otherwise FMG from the start vector in
 * x: r0 = b - A x (precision's, Dirichlet entries zero) replaces b on the
 * coarser levels, which so solve for the correction of x, and the finest
 * level adds the prolongated correction to x before its V-cycle on b. Where x
 * is zero but for its Dirichlet entries, r0 is b's interior and the result is
 * that of r0 NULL. r0 may be work: it is read before work is written.
 * fine_z: a vector of the hierarchy's precision and level L's length for the
 * last V-cycle's result where the hierarchy has no x_L of its own (mixed, made
 * by tpmg_multigrid_create_outer with native), else NULL. */
tpmg_status tpmg_multigrid_fmg_work(tpmg_multigrid *mg, tpmg_precision precision, const void *b,
                                    const void *r0, void *x, void *work, void *fine_z);

/* Makes the double level vectors of mixed FMG (and with `work`, or where a
 * coarser level is longer than the finest on this rank, its own work vector)
 * now rather than at the first mixed FMG; nothing for a double hierarchy.
 * Collective. */
tpmg_status tpmg_multigrid_reserve_fmg(tpmg_multigrid *mg, int work);

/* tpmg_coarse_apply without its argument checks (for the multigrid). */
tpmg_status tpmg_coarse_solve(tpmg_coarse *coarse, const void *b, void *x);

/* The vectors of tpmg_vector_create, registered in their context (tpmg-vector.c).
 * tpmg_vector_check is the one check of a vector argument: where v is
 * registered in ctx, its precision must be `precision` and its length at least
 * n; unregistered pointers (borrowed memory, e.g. a deal.II vector's) pass.
 * `what` names the call and the argument for the message. */
tpmg_status tpmg_vector_check(tpmg_context *ctx, const char *what, const void *v,
                              tpmg_precision precision, tpmg_index n);
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
