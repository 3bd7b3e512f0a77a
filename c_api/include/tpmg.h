/* tpmg: tensor-product multigrid with vertex-patch smoothers.
 *
 * The public C header (the user API; tpmg-bench.h adds instrumentation for
 * benchmarks and tests). It solves -∇·(a∇u) + c u = f (Poisson's equation for
 * a = 1, c = 0; a > 0 given per cell or at the quadrature points:
 * tpmg_grid_set_coefficient; a reaction term c >= 0 constant:
 * tpmg_grid_options.reaction), u = g on the
 * boundary of an axis-parallel box, with continuous Q_k elements (Gauss-Lobatto
 * support points, as deal.II's FE_Q) on a Cartesian mesh of n_0 x n_1 (x n_2)
 * equal cells refined globally L times, by geometric multigrid whose smoother is
 * the multiplicative vertex-patch (overlapping Schwarz) method with local solves
 * by fast diagonalization (Cui, Grosse-Bley, Kanschat, Strzodka, "An
 * implementation of tensor product patch smoothers on GPU", 2024,
 * arXiv:2405.19004).
 *
 * Conventions
 * - Every function returns a tpmg_status; TPMG_SUCCESS is 0. On failure the
 *   context keeps a message (tpmg_context_last_error) and no output was changed.
 * - Vectors are raw pointers to `double` or `float` (see tpmg_precision) that the
 *   caller owns; tpmg borrows them for the call and never frees them. Their
 *   memory space is the context's backend's (tpmg_context_memory_type): host
 *   memory for "cpu", device memory for "cuda" (tpmg_vector_create allocates
 *   such memory).
 * - A vector made by tpmg_vector_create is registered in its context with its
 *   length and precision. Every call that takes vectors checks those of its
 *   context that are registered (the exact pointer tpmg_vector_create
 *   returned): the precision must be the call's and the length at least what
 *   the call reads or writes, else TPMG_ERROR_ARGUMENT and nothing is written.
 *   Any other pointer (memory of your own, a deal.II vector's data, a pointer
 *   into a tpmg vector) is borrowed and cannot be checked: its length and
 *   precision are the caller's responsibility.
 * - Lifetimes: the caller owns every object it creates and destroys it with
 *   its tpmg_X_destroy, which sets the handle to NULL. Objects made from a
 *   grid (operator, smoother, transfer, coarse solver, multigrid, solver) hold
 *   a reference on it, so a grid and its users may be destroyed in any order:
 *   the grid is freed with the last of them. tpmg_context_destroy is refused
 *   (TPMG_ERROR_ARGUMENT, the context kept) while a grid (also one kept alive
 *   by its users), a vector of tpmg_vector_create or other backend memory of
 *   the context lives; destroy the context last.
 * - A level vector holds every DoF of the level, Dirichlet DoFs included, in
 *   global lexicographic order, x fastest: index = i + N_0 (j + N_1 m), where
 *   N_d = n_d 2^level k + 1.
 * - Processes: a context made with tpmg_context_options.mpi_comm spans the
 *   ranks of that communicator. Every function of its grids and the objects
 *   made from them is then collective (every rank calls it, with the same
 *   options) and returns the same status on every rank; a level vector holds
 *   the rank's slab of the level and its ghost planes (tpmg_grid_create,
 *   tpmg_grid_level_layout), so "index" above is offset by the rank's first
 *   plane. The tpmg_vector_* functions act on the rank's own entries (no
 *   communication, no sum over ranks); the objects' dot products and norms
 *   are the whole level's.
 * - The level operator is the matrix of -∇·(a∇) + c (stiffness plus c times
 *   mass; a = 1 unless tpmg_grid_set_coefficient) with Dirichlet DoFs
 *   eliminated:
 *   interior rows and columns are those of the finite element matrix, a
 *   Dirichlet row is the identity row. Every object takes its grid's context.
 * - Threads: one object must not be used by two threads at once (a solver,
 *   its multigrid, a vector). Different objects may be used by different
 *   threads at once, also objects of one context ("cpu" backend, one
 *   process): e.g. each thread its own solver, all on one grid, with vectors
 *   created and destroyed as it goes; the context's memory count, vector
 *   registry and reference counts are synchronized for that. Not so on a
 *   context of the "cuda" backend (its objects share the context's stream and
 *   reduction buffers) nor on one spanning several ranks (its collective calls
 *   share one communicator, which MPI requires to be called in the same order
 *   on every rank): there, use a context per thread, or one thread at a time.
 *   The context's own calls that change it (tpmg_context_destroy,
 *   tpmg_context_stopwatch, tpmg_context_measure_limits) need every other call
 *   on the context finished. Error messages are per thread:
 *   tpmg_context_last_error gives the calling thread's last failure on the
 *   context, unaffected by other threads' failures.
 */
#ifndef TPMG_H
#define TPMG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version, written here only: CMake reads it from these lines. */
#define TPMG_VERSION_MAJOR 0
#define TPMG_VERSION_MINOR 1
#define TPMG_VERSION_PATCH 0

/** Status of every tpmg call. */
typedef enum {
  TPMG_SUCCESS = 0,
  TPMG_ERROR_ARGUMENT = 1,    /**< a bad argument: NULL, out of range, mismatched */
  TPMG_ERROR_UNSUPPORTED = 2, /**< valid but not supported (degree, backend) */
  TPMG_ERROR_MEMORY = 3,      /**< an allocation failed or would overflow */
  TPMG_ERROR_BACKEND = 4,     /**< the backend (CUDA) reported an error */
  TPMG_ERROR_NUMERICAL = 5    /**< a numerical check failed (breakdown, eigen residual) */
} tpmg_status;

/** Where a context's vectors live (libCEED's CEED_MEM_HOST, CEED_MEM_DEVICE). */
typedef enum {
  TPMG_MEMORY_HOST = 0,  /**< host memory: plain pointers of this process */
  TPMG_MEMORY_DEVICE = 1 /**< the memory of the context's GPU (cudaMalloc'd for "cuda") */
} tpmg_memory_type;

/** Scalar type of a vector. */
typedef enum { TPMG_DOUBLE = 0, TPMG_FLOAT = 1 } tpmg_precision;

/** Global DoF index: 64 bit, a level may exceed 2^31 DoFs. */
typedef int64_t tpmg_index;

typedef struct tpmg_context tpmg_context;
typedef struct tpmg_grid tpmg_grid;
typedef struct tpmg_operator tpmg_operator;
typedef struct tpmg_smoother tpmg_smoother;
typedef struct tpmg_transfer tpmg_transfer;
typedef struct tpmg_multigrid tpmg_multigrid;
typedef struct tpmg_solver tpmg_solver;

/* ------------------------------------------------------------------------ */
/* Context                                                                   */
/* ------------------------------------------------------------------------ */

/** Options of a context.
 *
 *  Backends are chosen by name. "cpu" is the reference backend (OpenMP, host
 *  memory); "cuda" runs every operation on one NVIDIA GPU (device memory). A
 *  backend may offer variants of its kernels as "name/variant"; the plain name
 *  takes the fastest measured kernels for every dimension, degree and
 *  precision (doc/benchmarks.md). The CUDA variants run the same arithmetic up
 *  to rounding, for the level operator and the smoother alike:
 *  - "cuda/basic": a thread team per patch (per vertex for the operator), the
 *    1D matrices read from device memory;
 *  - "cuda/constant": the unit patch's 1D matrices in the kernel parameters,
 *    read from the constant cache;
 *  - "cuda/tiled": "cuda/constant" with two lines per thread (register tiling);
 *  - "cuda/thread": one thread per patch (and per row of the operator), its
 *    3^dim window in registers; degree 1 only (tpmg_operator_create and
 *    tpmg_smoother_create refuse other degrees);
 *  - "cuda/brick": the operator by bricks of cells (each window point read
 *    once), the smoother as "cuda".
 *  The CPU backend's variants choose the SIMD width of its kernels:
 *  "cpu/scalar", "cpu/avx2", "cpu/avx512" (a width the processor lacks is
 *  refused); plain "cpu" takes the one named by the environment variable
 *  TPMG_CPU_SIMD=scalar|avx2|avx512 if set, else the widest the processor
 *  runs. Results agree across widths up to rounding.
 *  Which names a build has: tpmg_backend_available. */
typedef struct {
  const char *backend; /**< backend name; NULL (default) means "cpu". Borrowed: only read
                            during tpmg_context_create */
  int n_threads;       /**< CPU threads: the CPU backend's kernels and any backend's host-side
                            setup (right-hand sides, L2 errors), 1..TPMG_MAX_THREADS;
                            0 (default): OpenMP's default */
  int device;          /**< GPU number for a GPU backend; default 0. On several ranks (mpi_comm)
                            the rank with index i among the ranks of its node takes GPU
                            device + i, modulo the GPUs it sees (so one GPU per rank where
                            each rank sees all GPUs of the node, or sees one) */
  const void *mpi_comm; /**< NULL (default): this process alone. Else a pointer to an MPI_Comm
                            (of an initialized MPI) whose ranks create the context together and
                            share every grid and solve made from it (tpmg_grid_create says how
                            levels are split); duplicated at creation, so the pointer is
                            borrowed for the call only. Needs tpmg built with MPI
                            (TPMG_ERROR_UNSUPPORTED otherwise). */
  tpmg_index whole_level_dofs; /**< on several ranks: the levels of at most this many DoFs are
                            kept whole on every rank and computed redundantly, instead of split
                            into slabs whose ghosts each smoothing colour exchanges
                            (tpmg_grid_create); 0 splits every level that can be split; -1
                            (default): the backend's choice, 0 for "cpu" and 1,000,000 for
                            "cuda" (doc/benchmarks.md, "Several GPUs"); at most
                            TPMG_MAX_WHOLE_LEVEL_DOFS */
  int overlap;          /**< on several ranks: 1 (default) the ghost exchanges of the FUSED and
                            BOUNDARY smoothers travel while the patches away from the cuts are
                            computed (doc/design.md, "Overlap"); 0: each exchange completes
                            before any patch of its colour. The results are the same. */
} tpmg_context_options;

/** The largest tpmg_context_options.whole_level_dofs. */
#define TPMG_MAX_WHOLE_LEVEL_DOFS ((tpmg_index)1 << 40)

/** The most CPU threads a context takes (tpmg_context_options.n_threads): far
 *  more than any machine's cores, few enough that the OpenMP runtime can start
 *  them (a runtime asked for 100000 threads crashes). */
#define TPMG_MAX_THREADS 1024

/** Default context options: the "cpu" backend, OpenMP's thread count, device 0,
 *  one process, the backend's whole levels, overlap on. */
tpmg_context_options tpmg_context_options_default(void);

/** Whether a backend (or backend variant) is compiled in and has a usable device.
 *  @param[in]  name the backend's name, e.g. "cpu", "cuda", "cuda/tiled"
 *  @param[out] available 1 if a context can be created with it, else 0
 *  @return TPMG_SUCCESS, or TPMG_ERROR_ARGUMENT for a NULL argument or a name that
 *  is no backend tpmg knows (compiled in or not). */
tpmg_status tpmg_backend_available(const char *name, int *available);

/** Create a context: the backend, its threads or device, and the error message.
 *  @param[in]  options options, or NULL for the defaults
 *  @param[out] ctx the new context; owned by the caller, free with tpmg_context_destroy
 *  @return TPMG_ERROR_ARGUMENT for a name tpmg does not know, n_threads outside
 *  0..TPMG_MAX_THREADS, a negative device number, whole_level_dofs outside
 *  -1..TPMG_MAX_WHOLE_LEVEL_DOFS or overlap not 0 or 1; TPMG_ERROR_UNSUPPORTED if the
 *  backend is not compiled in, has no device or does not have the variant asked for.
 *  With mpi_comm: collective on that communicator; every rank returns the worst status
 *  of all (a failure on one rank fails the creation everywhere); TPMG_ERROR_ARGUMENT if
 *  MPI is not initialized or the ranks name different backends, TPMG_ERROR_UNSUPPORTED
 *  for more than one rank with a backend that runs on one process only ("cuda" so far)
 *  or without MPI built in.
 *  On failure *ctx is NULL and no message can be read: the status says what went wrong. */
tpmg_status tpmg_context_create(const tpmg_context_options *options, tpmg_context **ctx);

/** This process's rank and the number of ranks of the context's communicator
 *  (0 and 1 for a context of one process). */
tpmg_status tpmg_context_ranks(const tpmg_context *ctx, int *rank, int *size);

/** How the context's ranks exchange vectors, a static string: "none" (one
 *  process); "mpi" (MPI on host memory: the CPU backend); for "cuda", chosen
 *  at creation by the environment variable TPMG_CUDA_TRANSPORT=nccl|mpi|host
 *  where set (the same on every rank), else the first that works of "nccl"
 *  (NCCL send/receive on the context's stream: tpmg built with NCCL, each rank
 *  on a GPU of its own), "mpi" (an MPI library that takes device memory,
 *  asked at run time) and "host" (vectors' planes staged through host memory
 *  and sent by MPI). */
tpmg_status tpmg_context_transport(const tpmg_context *ctx, const char **name);

/** Destroy a context, which must be the last thing destroyed.
 *  @param[in,out] ctx the context; set to NULL. A NULL *ctx is accepted.
 *  @return TPMG_ERROR_ARGUMENT, leaving the context as it was, while anything
 *  made from it lives: a grid (the caller's handle or one kept alive by the
 *  objects made from it), a vector of tpmg_vector_create, or other backend
 *  memory; the message counts them ("still live: 1 grid, 2 vectors, 1.2 MB of
 *  backend memory"). Destroy those, then the context. */
tpmg_status tpmg_context_destroy(tpmg_context **ctx);

/** The message of the calling thread's last failed call on this context;
 *  where this thread had none, the last of any thread ("" if none). The
 *  string belongs to the context (and this thread) and is valid until this
 *  thread's next call on the context; the fallback to another thread's
 *  message is valid only while no other thread's call on the context fails. */
const char *tpmg_context_last_error(const tpmg_context *ctx);

/** Backend memory currently allocated through this context, in bytes (device
 *  memory for CUDA). Host arrays (the CPU backend's work arrays, the coarse
 *  solver's host factors, the test problems' host copies) count too where the
 *  backend's memory is the host; they are checked against the host's
 *  available memory on every backend (TPMG_ERROR_MEMORY saying how much they
 *  need and how much is available). The CPU backend writes its memory as it
 *  allocates it, so that this count is resident memory.
 *  @param[out] bytes the byte count */
tpmg_status tpmg_context_memory(const tpmg_context *ctx, size_t *bytes);

/** The context's backend as it was named at creation ("cpu", "cuda/tiled", ...).
 *  @param[out] name a string owned by the context, valid while it lives */
tpmg_status tpmg_context_backend(const tpmg_context *ctx, const char **name);

/** Where the context's vectors live: host or device memory. */
tpmg_status tpmg_context_memory_type(const tpmg_context *ctx, tpmg_memory_type *type);

/** The number of CPU threads the context uses. */
tpmg_status tpmg_context_threads(const tpmg_context *ctx, int *n_threads);

/** Wait until all backend work of this context has finished (for timing). */
tpmg_status tpmg_context_synchronize(tpmg_context *ctx);

/* ------------------------------------------------------------------------ */
/* Vectors on the context's memory space                                     */
/* ------------------------------------------------------------------------ */

/** Allocate a vector of n entries in the context's memory space, set to zero.
 *  The vector is registered in the context with n and precision: calls that
 *  receive this pointer check both (see the conventions above), and the
 *  context cannot be destroyed while it lives. n = 0 gives a distinct
 *  non-NULL pointer, to be destroyed as well.
 *  @param[out] v the vector; owned by the caller, free with tpmg_vector_destroy
 *                on the same context */
tpmg_status tpmg_vector_create(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, void **v);

/** Free a vector made by tpmg_vector_create on this context; sets *v to NULL
 *  (NULL accepted).
 *  @return TPMG_ERROR_ARGUMENT, with nothing freed and *v unchanged, for a
 *  pointer that is not a live vector of this context (another context's
 *  vector, memory of the caller's, a pointer into a vector, one destroyed
 *  already). */
tpmg_status tpmg_vector_destroy(tpmg_context *ctx, void **v);

/** Copy n entries from host memory into a context vector. */
tpmg_status tpmg_vector_upload(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                               const void *host, void *v);

/** Copy n entries of a context vector into host memory. */
tpmg_status tpmg_vector_download(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                                 const void *v, void *host);

/** v_i = value. */
tpmg_status tpmg_vector_set(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, double value,
                            void *v);

/** y = a x + b y (b = 0 overwrites y without reading it). */
tpmg_status tpmg_vector_axpby(tpmg_context *ctx, tpmg_precision precision, tpmg_index n, double a,
                              const void *x, double b, void *y);

/** result = x . y, summed in double in a fixed order that does not depend on
 *  the thread count or launch configuration. */
tpmg_status tpmg_vector_dot(tpmg_context *ctx, tpmg_precision precision, tpmg_index n,
                            const void *x, const void *y, double *result);

/** dst = src converted between precisions (equal precisions copy). */
tpmg_status tpmg_vector_convert(tpmg_context *ctx, tpmg_index n, tpmg_precision src_precision,
                                const void *src, tpmg_precision dst_precision, void *dst);

/* ------------------------------------------------------------------------ */
/* Grid hierarchy                                                            */
/* ------------------------------------------------------------------------ */

/** The largest polynomial degree in 2D and in 3D. */
#define TPMG_MAX_DEGREE_2D 10
#define TPMG_MAX_DEGREE_3D 8

/** The largest fine level (refinements of the coarse mesh); a grid also needs
 *  its finest level's vectors to fit in memory. */
#define TPMG_MAX_FINE_LEVEL 30

/** The box's safe range (tpmg_grid_options.box): coordinates up to 1e30 in
 *  magnitude and cells down to 1e-30 wide keep the 1D patch eigenproblems
 *  (whose matrices scale with the cell width h and 1/h) far from overflow and
 *  underflow (they fail beyond about 1e70 and 1e-70); the widths' ratios are
 *  then at most 1e60 (anisotropy slows the solver, it does not break it). */
#define TPMG_MAX_BOX_COORDINATE 1e30
#define TPMG_MIN_CELL_WIDTH 1e-30

/** The reaction's bound (tpmg_grid_options.reaction): c, and c times the
 *  volume and every width of the coarsest cells of the hierarchy (the mass
 *  matrix's scale), at most this, so that the operator's data stay finite in
 *  float. */
#define TPMG_MAX_REACTION 1e30

/** Options of the mesh hierarchy (deal.II's subdivided_hyper_rectangle, refined). */
typedef struct {
  int dim;         /**< 2 or 3; default 3 */
  int degree;      /**< k: 1..TPMG_MAX_DEGREE_2D in 2D, 1..TPMG_MAX_DEGREE_3D in 3D; default 3 */
  int fine_level;  /**< L, refinements of the coarse mesh, 1..TPMG_MAX_FINE_LEVEL; default 4 */
  int cells[3];    /**< coarse cells per direction, >= 1; default 1,1,1 */
  double box[6];   /**< a_0,b_0,a_1,b_1[,a_2,b_2], finite, a_d < b_d, |a_d|, |b_d| <=
                        TPMG_MAX_BOX_COORDINATE, the finest cells' width (b_d - a_d) /
                        (cells[d] 2^fine_level) >= TPMG_MIN_CELL_WIDTH and >= 1e-12
                        max(|a_d|, |b_d|); default unit cube */
  double reaction; /**< c of -Δu + c u = f: finite, >= 0, within TPMG_MAX_REACTION; default 0
                        (Poisson). Every level's operator, smoother and coarse solve then
                        hold stiffness + c mass (the mass matrix of each level: the coarse
                        operators are the Galerkin products of the fine one, as for c = 0);
                        the patch solves stay exact (c adds to the patch eigenvalues). The
                        reaction of implicit time stepping, M + τK = τ(K + M/τ): c = 1/τ */
  const double *cell_widths[3]; /**< graded coarse cells (deal.II's subdivided_hyper_rectangle
                        with step sizes): NULL, or cells[d] widths of the coarse cells along
                        d, in order from a_d, each positive and finite, their sum b_d - a_d to a
                        relative 1e-12; the finest cells (each coarse cell bisected
                        fine_level times) at least TPMG_MIN_CELL_WIDTH and 1e-12 max(|a_d|,
                        |b_d|) wide. NULL, or widths all equal: equal cells of width
                        (b_d - a_d) / cells[d]. Read by tpmg_grid_create and copied:
                        borrowed for that call only (tpmg_grid_get_options returns the grid's
                        copies). A graded grid (unequal widths along some direction) has no
                        hidden levels below level 0 (merging two unequal cells is no
                        bisection), runs on the CPU backend only so far (the CUDA backend
                        refuses it with TPMG_ERROR_UNSUPPORTED), and its smoother and
                        operator take the CPU's scalar patch kernels and cell-by-cell
                        operator kernels; default NULL, NULL, NULL */
} tpmg_grid_options;

/** Default grid: 3D, Q3, level 4, one coarse cell, unit cube, no reaction. */
tpmg_grid_options tpmg_grid_options_default(void);

/** Create the level hierarchy 0..fine_level and its 1D data (mass, stiffness,
 *  patch eigenpairs, transfer) in both precisions on the context's memory space.
 *  Level 0 is the coarse mesh as given, of any size. Below it the grid keeps
 *  hidden levels for the multigrid hierarchy: while every direction has an
 *  even number of cells, all are halved at once (24 x 24 x 24 -> 12 -> 6 -> 3;
 *  7 x 5 x 3: none; a graded grid, tpmg_grid_options.cell_widths: none). Level numbers in this API are the user's, 0..fine_level;
 *  the hidden levels are reached only by tpmg_multigrid and tpmg_solver.
 *
 *  On a context of P > 1 ranks (tpmg_context_options.mpi_comm) the call is
 *  collective and the options must be the same on every rank. Levels are split
 *  along their last direction (y in 2D, z in 3D) into P slabs of whole cells,
 *  in rank order: the coarsest level (hidden levels included) with at least 2P
 *  cells along it is cut into nearly equal slabs, and every finer level is cut
 *  where those cuts refine to; coarser levels are kept whole on every rank. A
 *  rank's level vector holds its slab and up to two ghost cells on each side
 *  (tpmg_grid_level_layout); it owns the DoF planes above its slab's lower
 *  face up to its upper face, inclusive, the first rank also the bottom face
 *  (as deal.II gives a DoF on the interface of two subdomains to the lower
 *  one). Ghost
 *  entries are the library's: any call may overwrite them, and results are
 *  defined on the owned entries. Results equal the one-process results up to
 *  the order of the sums in dot products.
 *  @param[out] grid the grid; owned by the caller, free with tpmg_grid_destroy
 *  @return TPMG_ERROR_ARGUMENT naming the bad option (a bad cell width: its
 *  direction, index and value), also when the options
 *  differ between ranks or the finest level has fewer than 2P cells along its
 *  last direction; TPMG_ERROR_MEMORY if the finest level's vectors would
 *  overflow tpmg_index or size_t; TPMG_ERROR_UNSUPPORTED for graded cells on
 *  a backend other than "cpu" ("cuda*"). On P ranks every rank returns the same
 *  status, with the message of the lowest failing rank. */
tpmg_status tpmg_grid_create(tpmg_context *ctx, const tpmg_grid_options *options, tpmg_grid **grid);

/** The exact coarse solver (tpmg_coarse, the multigrid's bottom level) keeps a
 *  dense inverse in the context's memory, applied by the backend, for a level
 *  with at most this many interior DoFs; above, it solves by fast
 *  diagonalization on the host (b downloaded, x uploaded). Not a limit. */
#define TPMG_MAX_COARSE_DOFS 4096

/** Drop the caller's grid; *grid = NULL (NULL accepted). The grid is freed
 *  now, or with the last object made from it that still lives: those keep
 *  working, so objects and grid may be destroyed in any order. */
tpmg_status tpmg_grid_destroy(tpmg_grid **grid);

/** The options the grid was made with. */
tpmg_status tpmg_grid_get_options(const tpmg_grid *grid, tpmg_grid_options *options);

/** The grid's context. */
tpmg_status tpmg_grid_context(const tpmg_grid *grid, tpmg_context **ctx);

/** How a level's vector is laid out on this rank: its planes along the last
 *  direction D (a plane holds the DoFs with one index along D). */
typedef struct {
  int distributed;           /**< 1: split among the ranks; 0: whole on every rank */
  tpmg_index n_global[3];    /**< DoFs per direction of the whole level (1 beyond dim) */
  tpmg_index plane;          /**< DoFs per plane: n_global[0] (2D), n_global[0] n_global[1] (3D) */
  tpmg_index first, count;   /**< the vector holds the planes [first, first + count), in
                                  order: entry i + plane (p - first) is DoF i of plane p */
  tpmg_index owned_first, owned_end; /**< this rank owns planes [owned_first, owned_end) */
  tpmg_index cell_first, cell_end;   /**< this rank's cells along the last direction (its slab;
                                          the whole level where not distributed) */
} tpmg_level_layout;

/** How the coefficient a of -∇·(a∇u) + c u is given (tpmg_grid_set_coefficient). */
typedef enum {
  TPMG_COEFFICIENT_CELLS = 0,     /**< one value per cell: a constant on each cell */
  TPMG_COEFFICIENT_QUADRATURE = 1 /**< (k+1)^dim values per cell, a at the cell's Gauss points
                                       (deal.II's QGauss(k+1), as step-37 stores it) */
} tpmg_coefficient_layout;

/** The bounds of the coefficient's values (tpmg_grid_set_coefficient): within
 *  them, every level's data stay finite and normal in float. */
#define TPMG_MIN_COEFFICIENT 1e-15
#define TPMG_MAX_COEFFICIENT 1e15

/** A variable coefficient a > 0: the grid then stands for -∇·(a∇u) + c u = f
 *  (a = 1 without this call). Collective; call it before any object is made
 *  from the grid (operator, smoother, transfer, coarse solver, multigrid,
 *  solver), once: refused afterwards, and on a grid that has a coefficient.
 *
 *  values: host memory, copied (the caller may free them after the call), for
 *  the cells this rank owns on the finest level: the cells c_D of
 *  [cell_first, cell_end) of tpmg_grid_level_layout(fine_level) along the last
 *  direction, every cell along the others (one rank: every cell), in
 *  lexicographic order, x fastest. CELLS: one value per cell; QUADRATURE:
 *  (k+1)^dim values per cell, the points of a cell consecutive, lexicographic
 *  with x fastest, at the Gauss points of QGauss(k+1) mapped to the cell
 *  (tpmg_grid_quadrature_points gives them). Every value finite and within
 *  [TPMG_MIN_COEFFICIENT, TPMG_MAX_COEFFICIENT].
 *
 *  What each part of the method does with it:
 *  - the finest level's operator is exact: sum factorization with a per cell
 *    (CELLS) or at the quadrature points (QUADRATURE);
 *  - a coarser level's operator is rediscretized with a per coarse cell, the
 *    mean over its children of each fine cell's mean of a (QUADRATURE: the
 *    Gauss-weighted mean over the cell), so the coarse solve is exact for that
 *    operator (a dense Cholesky factorization of its interior: at most
 *    TPMG_MAX_COARSE_DOFS interior DoFs, else TPMG_ERROR_UNSUPPORTED at the
 *    coarse solver's creation);
 *  - the patch smoother solves a separable surrogate: each patch's local
 *    problem with a replaced by one value, its mean over the patch's 2^dim
 *    cells or 2/3 of their largest value if that is more (so that every local
 *    correction stays below 3/2 of the exact one; a cell's value is its
 *    largest quadrature point value with QUADRATURE), by fast diagonalization
 *    (exact where a is constant on the patch); its residual is the exact
 *    operator's, which only TPMG_SMOOTHER_GLOBAL computes so far: the other
 *    variants are refused (TPMG_ERROR_UNSUPPORTED) on such a grid.
 *  Memory: every level keeps a value per cell of this rank's box in both
 *  precisions; the finest level with QUADRATURE (k+1)^dim per cell. During
 *  the call every rank holds the whole finest level's cell means once. The
 *  finest level's values in double are the given ones, bit for bit, so
 *  tpmg_setup_write writes them from there: no other copy is kept.
 *  @return TPMG_ERROR_ARGUMENT for a bad layout, NULL values, a value out of
 *  range (naming the rank, the cell and the value), a grid already in use or
 *  with a coefficient. Every rank returns the same status. A backend without
 *  kernels for such levels refuses the objects made from the grid
 *  (TPMG_ERROR_UNSUPPORTED at their creation), as for any level it lacks. */
tpmg_status tpmg_grid_set_coefficient(tpmg_grid *grid, tpmg_coefficient_layout layout,
                                      const double *values);

/** Whether the grid has a variable coefficient (tpmg_grid_set_coefficient),
 *  and its layout.
 *  @param[out] has    1 with a coefficient, 0 without
 *  @param[out] layout its layout where *has is 1 (else unchanged); may be NULL
 *  @return TPMG_ERROR_ARGUMENT for a NULL grid or has */
tpmg_status tpmg_grid_get_coefficient(const tpmg_grid *grid, int *has,
                                      tpmg_coefficient_layout *layout);

/** The coordinates of the quadrature points of QGauss(k+1) on the cell of
 *  indices cell[0..dim-1] of the finest level (global indices): points[q * 3 +
 *  d] is coordinate d of point q, q lexicographic with x fastest, (k+1)^dim
 *  points; points[q * 3 + 2] = 0 in 2D. For filling the values of
 *  tpmg_grid_set_coefficient with QUADRATURE from a function. */
tpmg_status tpmg_grid_quadrature_points(const tpmg_grid *grid, const tpmg_index cell[3],
                                        double *points);

/** The layout of level `level` on this rank (with one rank: everything, owned). */
tpmg_status tpmg_grid_level_layout(const tpmg_grid *grid, int level, tpmg_level_layout *layout);

/** DoFs of a level's vector on this rank, in all and per direction (n_1d[2] =
 *  1 in 2D): the whole level with one rank; with several, this rank's box
 *  (tpmg_grid_level_layout), the length of every vector of the level.
 *  @param[in]  level 0..fine_level
 *  @param[out] n_dofs total DoFs (may be NULL)
 *  @param[out] n_1d DoFs per direction (may be NULL) */
tpmg_status tpmg_grid_level_size(const tpmg_grid *grid, int level, tpmg_index *n_dofs,
                                 tpmg_index n_1d[3]);

/* ------------------------------------------------------------------------ */
/* Level operator                                                            */
/* ------------------------------------------------------------------------ */

/** The matrix-free operator -Δ + c (tpmg_grid_options.reaction) of one level in one precision.
 *  @param[out] op owned by the caller, free with tpmg_operator_destroy
 *  @return TPMG_ERROR_UNSUPPORTED where the context's backend (variant) has no
 *          operator kernel for the level, e.g. "cuda/thread" for a degree other than 1. */
tpmg_status tpmg_operator_create(tpmg_grid *grid, int level, tpmg_precision precision,
                                 tpmg_operator **op);

/** dst = A src (sum factorization; Dirichlet rows act as identity). src and dst
 *  must not overlap. */
tpmg_status tpmg_operator_apply(tpmg_operator *op, const void *src, void *dst);

/** The diagonal of the level operator: interior entries those of the finite
 *  element matrix (a Kronecker sum of the global 1D mass and stiffness
 *  diagonals), 1 on Dirichlet rows. Computed on the host, then copied into
 *  `diagonal`, a level vector of the operator's precision in the context's
 *  memory (for Jacobi and Chebyshev smoothers, e.g. in the deal.II bridge). */
tpmg_status tpmg_operator_diagonal(tpmg_operator *op, void *diagonal);

/** Destroy an operator and drop its reference on the grid; *op = NULL (NULL
 *  accepted). */
tpmg_status tpmg_operator_destroy(tpmg_operator **op);

/* ------------------------------------------------------------------------ */
/* Vertex-patch smoother                                                     */
/* ------------------------------------------------------------------------ */

/** How a smoothing step computes the patch residuals (paper Table 4). */
typedef enum {
  TPMG_SMOOTHER_GLOBAL = 0,   /**< r = b - A x with the level operator once per colour */
  TPMG_SMOOTHER_SEPARATE = 1, /**< patch-local residuals, then the local solves, in two passes */
  TPMG_SMOOTHER_FUSED = 2,    /**< residual and local solve on each patch in one pass */
  TPMG_SMOOTHER_BOUNDARY = 3  /**< the paper's Boundary: x_I = A_II^-1 (b_I - A_IB x_B), FUSED
                                   without reading x_I (equal to FUSED up to rounding) */
} tpmg_smoother_variant;

/** Options of the smoother. Which kernels run it is the backend's choice,
 *  by its name: "cuda/basic", "cuda/constant", ... (tpmg_context_options). */
typedef struct {
  tpmg_smoother_variant variant; /**< default TPMG_SMOOTHER_FUSED */
} tpmg_smoother_options;

/** Default smoother options: FUSED. */
tpmg_smoother_options tpmg_smoother_options_default(void);

/** The colourised multiplicative vertex-patch smoother of one level (paper
 *  Algorithm 3): 2^dim colours by vertex-index parity, exact patch solves by fast
 *  diagonalization. Level must be >= 1 (level 0 may have no interior vertex).
 *  @param[in]  options options, or NULL for the defaults
 *  @param[out] smoother owned by the caller, free with tpmg_smoother_destroy
 *  @return TPMG_ERROR_UNSUPPORTED where the context's backend (variant) has no
 *          smoother kernels for the level, e.g. "cuda/thread" for a degree other than 1. */
tpmg_status tpmg_smoother_create(tpmg_grid *grid, int level, tpmg_precision precision,
                                 const tpmg_smoother_options *options, tpmg_smoother **smoother);

/** One smoothing step in place: x <- S(x, b). Colours run in order 0..2^dim-1,
 *  or in reverse order if `reverse` is nonzero (a forward pre-smoother and a
 *  reverse post-smoother make the V-cycle symmetric). Dirichlet entries of x are
 *  read as zero and not changed. b and x must not overlap. */
tpmg_status tpmg_smoother_apply(tpmg_smoother *smoother, int reverse, const void *b, void *x);

/** Destroy a smoother and drop its reference on the grid; *smoother = NULL
 *  (NULL accepted). */
tpmg_status tpmg_smoother_destroy(tpmg_smoother **smoother);

/* ------------------------------------------------------------------------ */
/* Grid transfer between level-1 and level                                   */
/* ------------------------------------------------------------------------ */

/** Prolongation (interpolation of the coarse Q_k function) from fine_level-1 to
 *  fine_level and its exact transpose, restriction. Dirichlet DoFs are zero in
 *  both directions.
 *  @param[out] transfer owned by the caller, free with tpmg_transfer_destroy */
tpmg_status tpmg_transfer_create(tpmg_grid *grid, int fine_level, tpmg_precision precision,
                                 tpmg_transfer **transfer);

/** fine += P coarse. */
tpmg_status tpmg_transfer_prolongate_add(tpmg_transfer *transfer, const void *coarse, void *fine);

/** coarse = P^T fine. */
tpmg_status tpmg_transfer_restrict(tpmg_transfer *transfer, const void *fine, void *coarse);

/** Destroy a transfer and drop its reference on the grid; *transfer = NULL
 *  (NULL accepted). */
tpmg_status tpmg_transfer_destroy(tpmg_transfer **transfer);

/* ------------------------------------------------------------------------ */
/* Multigrid                                                                 */
/* ------------------------------------------------------------------------ */

/** Options of the multigrid hierarchy. */
typedef struct {
  tpmg_precision precision;      /**< of every level vector; default TPMG_DOUBLE */
  tpmg_smoother_variant smoother; /**< default TPMG_SMOOTHER_FUSED */
  int symmetric;                  /**< nonzero: post-smoother in reverse colour order; default 1 */
} tpmg_multigrid_options;

/** Default multigrid options: double, FUSED, symmetric. */
tpmg_multigrid_options tpmg_multigrid_options_default(void);

/** The V-cycle hierarchy on levels 0..fine_level and the grid's hidden levels
 *  below level 0 (paper Algorithm 1): one pre- and one post-smoothing step on
 *  every level but the bottom one, the bottom level (the coarsest hidden level,
 *  or level 0 if there is none) solved exactly as tpmg_coarse solves a level.
 *  Allocates all level vectors once.
 *  @param[in]  options options, or NULL for the defaults
 *  @param[out] mg owned by the caller, free with tpmg_multigrid_destroy */
tpmg_status tpmg_multigrid_create(tpmg_grid *grid, const tpmg_multigrid_options *options,
                                  tpmg_multigrid **mg);

/** One V-cycle on the finest level in place: x <- V(x, b). Vectors in the
 *  hierarchy's precision. */
tpmg_status tpmg_multigrid_vcycle(tpmg_multigrid *mg, const void *b, void *x);

/** The preconditioner z = V(0, r). r and z are in the hierarchy's precision,
 *  or double for a float hierarchy (converted on the way in and out). */
tpmg_status tpmg_multigrid_precondition(tpmg_multigrid *mg, tpmg_precision precision,
                                        const void *r, void *z);

/** Full multigrid's first pass (paper Algorithm 2, lines 1-5): b is restricted
 *  to every level (hidden levels included), the bottom level solved, then
 *  prolongation and one V-cycle per level.
 *  Writes x on the finest level (Dirichlet entries zero). b and x are in the
 *  hierarchy's precision, or double for a float hierarchy: then b and the
 *  iterates stay in double on every level and each level's V-cycle runs in
 *  float on the double residual, x_l += V(0, b_l - A_l x_l) (mixed FMG; its
 *  double level vectors and a work vector of the longest level's length on
 *  this rank (the finest, unless a level kept whole on every rank is longer
 *  than this rank's slab of it) are allocated by the first such call and kept
 *  until tpmg_multigrid_destroy). */
tpmg_status tpmg_multigrid_fmg(tpmg_multigrid *mg, tpmg_precision precision, const void *b,
                               void *x);

/** Destroy a hierarchy (its smoothers, coarse solver and level vectors) and
 *  drop its reference on the grid; *mg = NULL (NULL accepted). */
tpmg_status tpmg_multigrid_destroy(tpmg_multigrid **mg);

/* ------------------------------------------------------------------------ */
/* Coarse solver                                                             */
/* ------------------------------------------------------------------------ */

typedef struct tpmg_coarse tpmg_coarse;

/** The exact solver of level 0 (the coarse mesh as given), as the V-cycle
 *  solves its bottom level. The interior matrix is a Kronecker sum of 1D
 *  matrices, as a patch's, so it is inverted by fast diagonalization with the
 *  1D eigenpairs of every direction but the one with the most points, D,
 *  along which a banded Cholesky factorization per eigenvalue sum solves: up
 *  to TPMG_MAX_COARSE_DOFS interior DoFs into a dense inverse kept in the
 *  context's memory and applied there; above, applied on the host in double
 *  in O(n_I (sum_{d != D} n_d + k)) operations (tpmg_coarse_apply then moves b
 *  and x between the context's memory and the host). Set-up takes
 *  O(sum_{d != D} n_d^3 + n_I k^2) operations (dense eigenproblems), and for
 *  the dense inverse O(n_I^2 (sum_{d != D} n_d + k)).
 *  @param[out] coarse owned by the caller, free with tpmg_coarse_destroy
 *  @return TPMG_ERROR_UNSUPPORTED for more than 46340 interior points in one
 *  direction (tpmg_multigrid_create and tpmg_solver_create refuse such a
 *  bottom level likewise); TPMG_ERROR_MEMORY where its host arrays do not fit
 *  in the host's available memory, the message saying how much they need */
tpmg_status tpmg_coarse_create(tpmg_grid *grid, tpmg_precision precision, tpmg_coarse **coarse);

/** x_I = A_II^{-1} b_I on level 0, x_B = 0 on Dirichlet DoFs. b and x are
 *  level-0 vectors of the solver's precision and must not overlap. */
tpmg_status tpmg_coarse_apply(tpmg_coarse *coarse, const void *b, void *x);

/** Destroy a coarse solver and drop its reference on the grid; *coarse =
 *  NULL (NULL accepted). */
tpmg_status tpmg_coarse_destroy(tpmg_coarse **coarse);

/* ------------------------------------------------------------------------ */
/* Solver                                                                    */
/* ------------------------------------------------------------------------ */

/** The iteration. */
typedef enum {
  TPMG_SOLVER_GMRES = 0,  /**< GMRES(restart) preconditioned by one V-cycle (tpmg_preconditioning) */
  TPMG_SOLVER_CG = 1,     /**< flexible CG with the symmetric V-cycle */
  TPMG_SOLVER_FMG = 2,    /**< full multigrid, then V-cycles (paper Algorithm 2) */
  TPMG_SOLVER_VCYCLE = 3, /**< V-cycles from the start vector, x += V(0, b - A x) */
  TPMG_SOLVER_FMG_GMRES = 4 /**< FMG's first pass, then GMRES(restart) from its result;
                                 the default */
} tpmg_solver_type;

/** The arithmetic of a solve: the precisions of its Krylov method and its V-cycle. */
typedef enum {
  TPMG_ARITHMETIC_DOUBLE = 0, /**< everything in double */
  TPMG_ARITHMETIC_MIXED = 1,  /**< Krylov and residuals in double, V-cycle in float (§4.2) */
  TPMG_ARITHMETIC_FLOAT = 2   /**< everything in float */
} tpmg_arithmetic;

/** Where GMRES applies the V-cycle P, and what its stopping test measures. */
typedef enum {
  TPMG_PRECONDITION_RIGHT = 0, /**< flexible GMRES on A P; stops on the true residual,
                                    ||b - A x|| <= tolerance ||b|| (default) */
  TPMG_PRECONDITION_LEFT = 1   /**< GMRES on P A, deal.II's SolverGMRES default and the
                                    paper's convention; stops on the preconditioned
                                    residual, ||P (b - A x)|| <= tolerance ||P (b - A x_0)||,
                                    x_0 the start vector passed in (for
                                    TPMG_SOLVER_FMG_GMRES: before its FMG pass);
                                    ||b - A x|| / ||b|| may then be above or below the
                                    tolerance (result->residual_reduction says) */
} tpmg_preconditioning;

/** Called after every iteration with its number and the solver's own estimate of
 *  the relative residual: ||r|| / ||b||, or ||P r|| / ||P r_0|| for
 *  TPMG_PRECONDITION_LEFT (r_0 of the start vector passed in). It runs inside tpmg_solver_solve: tpmg_solver_solve
 *  and tpmg_solver_destroy on the solver that calls it are refused
 *  (TPMG_ERROR_ARGUMENT, nothing changed) and its solve goes on. Other
 *  objects may be used: another solver may solve, and the grid may be
 *  destroyed (the solver keeps its reference on it); tpmg_context_destroy is
 *  refused while the solver lives. */
typedef void (*tpmg_monitor)(void *data, int iteration, double relative_residual);

/** Options of the solver. */
typedef struct {
  tpmg_solver_type type;          /**< default TPMG_SOLVER_FMG_GMRES */
  tpmg_arithmetic arithmetic;     /**< default TPMG_ARITHMETIC_MIXED */
  tpmg_smoother_variant smoother; /**< default TPMG_SMOOTHER_FUSED */
  double tolerance;               /**< stop at ||b - A x|| <= tolerance ||b|| (see
                                       tpmg_preconditioning), in (0, 1); default 1e-9 */
  int max_iterations;             /**< >= 1; default 100 */
  int restart;                    /**< GMRES restart length, 1..TPMG_MAX_RESTART; default 30 */
  tpmg_monitor monitor;           /**< default NULL */
  void *monitor_data;             /**< passed to monitor */
  tpmg_preconditioning preconditioning; /**< GMRES and FMG_GMRES only; default
                                             TPMG_PRECONDITION_RIGHT */
} tpmg_solver_options;

/** The longest GMRES restart (tpmg_solver_options.restart). */
#define TPMG_MAX_RESTART 1000

/** Default solver options: FMG_GMRES (FMG's first pass, then GMRES(30) from
 *  the right) in TPMG_ARITHMETIC_MIXED, FUSED, 1e-9, 100 iterations; why these, and
 *  their times against the other solvers and arithmetic, in doc/benchmarks.md
 *  ("The default solver"). */
tpmg_solver_options tpmg_solver_options_default(void);

/** What a solve did. */
typedef struct {
  int iterations;            /**< Krylov iterations (after the FMG pass for FMG_GMRES),
                                  or V-cycles after the FMG pass */
  int converged;             /**< 1 if the tolerance was reached (by the preconditioned
                                  residual for TPMG_PRECONDITION_LEFT) */
  double residual_norm_0;    /**< ||b - A x_0|| in the outer precision, x_0 the start vector
                                  with its Dirichlet entries set (after the FMG pass for FMG) */
  double residual_norm;      /**< ||b - A x|| recomputed in double after the solve */
  double residual_reduction; /**< residual_norm / ||b|| */
} tpmg_solver_result;

/** A solver on the grid's finest level; owns its multigrid hierarchy and work
 *  vectors, allocated here, except the GMRES basis: this call allocates its
 *  first vectors (V_0, and Z_0 with right preconditioning), and the first
 *  solve whose cycle reaches iteration j allocates the pair j, kept for every
 *  later solve (see tpmg_solver_restart and tpmg_solver_memory). The basis
 *  leaves free 5% of the backend memory that was free at this call.
 *  TPMG_ERROR_MEMORY where not even a restart length of 1 fits.
 *  @param[in]  options options, or NULL for the defaults
 *  @param[out] solver owned by the caller, free with tpmg_solver_destroy */
tpmg_status tpmg_solver_create(tpmg_grid *grid, const tpmg_solver_options *options,
                               tpmg_solver **solver);

/** Solve A x = b on the finest level. b and x are double, except in
 *  TPMG_ARITHMETIC_FLOAT where they are float. x is the start vector; its Dirichlet
 *  entries are set to those of b first. FMG from x = 0 (every entry) is paper
 *  Algorithm 2; from any other x its coarser levels solve for the correction:
 *  they restrict b - A x instead of b, and the finest level adds the
 *  prolongated correction to x before its V-cycle (one residual more). From an
 *  x that is zero but for its Dirichlet entries both give the same x.
 *  Any b whose entries the format holds is solved alike: where ||b|| is far
 *  from 1 (outside [2^-256, 2^257) in TPMG_ARITHMETIC_DOUBLE, [2^-16, 2^17) where
 *  the V-cycle runs in float), the solve runs on b and x scaled by the power
 *  of two that brings ||b|| into [1, 2), in a vector allocated for the
 *  call's duration. A power of two changes no rounding, so s b gives s x in
 *  the iterations of b, bitwise so for a power of two s; b of ordinary size
 *  is solved unscaled. TPMG_ERROR_ARGUMENT for a b with an entry that is not
 *  finite, TPMG_ERROR_MEMORY where the scaled b does not fit; x unchanged.
 *  TPMG_ERROR_ARGUMENT, x unchanged, for a solver inside its own solve (a
 *  call from its monitor). These errors are found before x is read; an error
 *  during the iteration (TPMG_ERROR_BACKEND, or one of MPI's) leaves x where
 *  the iteration was, an exception to the convention that a failed call
 *  changes no output: keeping x would take a copy of it in every solve.
 *  Not converging is not an error: result->converged is 0, result->iterations
 *  counts those done and x is the last iterate, whether max_iterations ran out
 *  or the iteration stopped early: CG where (p, A p) or (r, z) is no longer
 *  positive and finite (a tolerance below what rounding lets it reach; its
 *  recursive residual has then parted from b - A x), GMRES where a new Krylov
 *  column is zero or not finite (its cycle ends with the columns before).
 *  @param[out] result what the solve did (may be NULL) */
tpmg_status tpmg_solver_solve(tpmg_solver *solver, const void *b, void *x,
                              tpmg_solver_result *result);

/** The GMRES restart length in use (GMRES and FMG_GMRES; 0 for other solvers): the requested one,
 *  until a solve needs a basis vector that does not fit in backend memory (its
 *  allocation fails, or it would leave less than the 5% kept free, see
 *  tpmg_solver_create); from that iteration on, in that solve and every later
 *  one, the number of basis vector pairs that fitted. The solve itself goes
 *  on: its cycle ends at that iteration and GMRES restarts. */
tpmg_status tpmg_solver_restart(const tpmg_solver *solver, int *restart);

/** The backend memory this solver holds on this rank, in bytes: its multigrid
 *  hierarchy, its work vectors and the GMRES basis vectors allocated so far
 *  (all counted in tpmg_context_memory too). It grows only at a GMRES solve
 *  that needs more iterations in one cycle than every earlier solve, never
 *  beyond the restart length, and is returned by tpmg_solver_destroy (a solve
 *  that scales b holds one vector more while it runs). Whether
 *  a basis vector fits is agreed by all ranks: the restart length is the same
 *  on every rank.
 *  @param[out] bytes the byte count */
tpmg_status tpmg_solver_memory(const tpmg_solver *solver, size_t *bytes);

/** Describe the solver as one JSON object, as PETSc's KSPView describes a
 *  KSP: its options and the result of its last solve, for a program's output.
 *  The keys, in this order:
 *  - "solver", "arithmetic", "smoother": the options' names (tpmg_solver_type_name,
 *    tpmg_arithmetic_name, tpmg_smoother_variant_name);
 *  - "preconditioning": tpmg_preconditioning_name for GMRES and FMG_GMRES, else null;
 *  - "tolerance", "max_iterations": the options';
 *  - "restart": the GMRES restart length in use (tpmg_solver_restart) for GMRES
 *    and FMG_GMRES, else null;
 *  - "solves": how many tpmg_solver_solve calls returned TPMG_SUCCESS;
 *  - "iterations", "converged" (true or false), "residual_norm_0",
 *    "residual_norm", "residual_reduction": the tpmg_solver_result of the last
 *    of those solves; null before the first.
 *  E.g. {"solver":"fmg-gmres","arithmetic":"mixed","smoother":"fused",
 *  "preconditioning":"right","tolerance":1e-09,"max_iterations":100,"restart":30,
 *  "solves":1,"iterations":7,"converged":true,"residual_norm_0":0.0123,...}.
 *  Numbers have the fewest significant digits that read back as the same
 *  double; one that is not finite is null. No spaces, no newline. Later
 *  versions may add keys.
 *  As snprintf: at most size bytes are written, the text cut where it does
 *  not fit and always NUL-terminated (for size > 0); *length is the length of
 *  the whole text without the NUL, so a text was cut where *length >= size:
 *  call again with *length + 1 bytes. A cut text is not an error.
 *  Not collective: every rank writes the same text. It may be called from the
 *  solver's monitor (the result is then that of the solve before).
 *  @param[in]  solver the solver
 *  @param[out] text   size bytes owned by the caller; NULL with size 0 asks for
 *                     the length only
 *  @param[in]  size   bytes of text
 *  @param[out] length the whole text's length without the NUL (may be NULL)
 *  @return TPMG_ERROR_ARGUMENT for a NULL solver (no message: there is no
 *  context) or a NULL text with size > 0; then nothing is written. */
tpmg_status tpmg_solver_describe(const tpmg_solver *solver, char *text, size_t size,
                                 size_t *length);

/** Destroy a solver (its hierarchy and work vectors) and drop its reference
 *  on the grid; *solver = NULL (NULL accepted).
 *  @return TPMG_ERROR_ARGUMENT, nothing destroyed and *solver unchanged, for a
 *  solver inside its tpmg_solver_solve (a call from its monitor) */
tpmg_status tpmg_solver_destroy(tpmg_solver **solver);

/* ------------------------------------------------------------------------ */
/* Test problems                                                             */
/* ------------------------------------------------------------------------ */

/** Right-hand sides with known data. */
typedef enum {
  TPMG_RHS_ONE = 0,  /**< f = 1, g = 0: the load vector of f = 1 */
  TPMG_RHS_SINE = 1, /**< u = prod_i sin(pi x_i), f = (dim pi^2 + c) u with c the grid's
                          reaction, g = u (paper Table 6) */
  TPMG_RHS_ONES = 2  /**< b = 1 at every interior DoF, g = 0: a vector, not a load vector;
                          the right-hand side of the paper's iteration tables 1-3 (its
                          authors' code sets the vector to 1) */
} tpmg_rhs;

/** The right-hand side of the finest-level system A x = b: interior entries are
 *  the load vector (Gauss quadrature, k+2 points per direction) minus the
 *  lifting of g (for TPMG_RHS_ONES: 1); Dirichlet entries are g at the support
 *  points. TPMG_RHS_SINE is refused on a grid with a variable coefficient
 *  (tpmg_problem_rhs_function takes f and g there).
 *  @param[out] b a finest-level vector of the given precision */
tpmg_status tpmg_problem_rhs(tpmg_grid *grid, tpmg_rhs rhs, tpmg_precision precision, void *b);

/** A function of a point x (x[0..dim-1]; x[2] = 0 in 2D) and the caller's data. */
typedef double (*tpmg_problem_function)(const double *x, void *data);

/** The right-hand side of the finest-level system for a source f and Dirichlet
 *  data g of the caller: interior entries int f φ_i (Gauss quadrature, k+2
 *  points per direction, cell by cell) minus (A g~)_i, where g~ is g at the
 *  Dirichlet DoFs' support points and 0 inside and A the grid's operator
 *  (its coefficient and reaction included); Dirichlet entries g. For a grid
 *  with a variable coefficient, where TPMG_RHS_SINE's f does not apply: with
 *  g = prod sin(π x_d) and f = -∇·(a∇g) + c g, tpmg_problem_l2_error(...,
 *  TPMG_RHS_SINE, ...) measures the error. f is called from several threads
 *  at once (OpenMP) and must be safe for that.
 *  @param[out] b a finest-level vector of the given precision */
tpmg_status tpmg_problem_rhs_function(tpmg_grid *grid, tpmg_problem_function f,
                                      tpmg_problem_function g, void *data,
                                      tpmg_precision precision, void *b);

/** The L2 error ||u_h - u|| of a finest-level solution against the exact
 *  solution, by Gauss quadrature with k+2 points per direction.
 *  @return TPMG_ERROR_ARGUMENT for TPMG_RHS_ONE and TPMG_RHS_ONES (no exact solution known). */
tpmg_status tpmg_problem_l2_error(tpmg_grid *grid, tpmg_rhs rhs, tpmg_precision precision,
                                  const void *x, double *error);

/* ------------------------------------------------------------------------ */
/* Names of the enums                                                        */
/* ------------------------------------------------------------------------ */

/* Every enum that users choose by name (on a command line, in a setup file,
 * in JSON output) has one name per value, defined here once:
 *   tpmg_solver_type       gmres, cg, fmg, vcycle
 *   tpmg_arithmetic        double, mixed, float
 *   tpmg_smoother_variant  global, separate, fused, boundary
 *   tpmg_rhs               one, sine, ones
 *   tpmg_preconditioning   right, left
 *   tpmg_precision         double, float
 * For each, tpmg_X_from_name(name, &value) sets value from its exact
 * (case-sensitive) name and returns TPMG_SUCCESS, or returns
 * TPMG_ERROR_ARGUMENT for an unknown or NULL name or a NULL value (value is
 * then unchanged; there is no context, so no message); tpmg_X_name(value)
 * returns the name, a static string, or NULL for a value outside the enum. */

/** The solver type named `name` ("gmres", "cg", "fmg", "vcycle", "fmg-gmres").
 *  @param[in]  name  the name; NULL is refused
 *  @param[out] value the type
 *  @return TPMG_ERROR_ARGUMENT for an unknown or NULL name or a NULL value */
tpmg_status tpmg_solver_type_from_name(const char *name, tpmg_solver_type *value);

/** The name of a solver type, or NULL for an unknown value. */
const char *tpmg_solver_type_name(tpmg_solver_type value);

/** The solver arithmetic named `name` ("double", "mixed", "float"); as
 *  tpmg_solver_type_from_name. */
tpmg_status tpmg_arithmetic_from_name(const char *name, tpmg_arithmetic *value);

/** The name of a solver arithmetic, or NULL for an unknown value. */
const char *tpmg_arithmetic_name(tpmg_arithmetic value);

/** The smoother variant named `name` ("global", "separate", "fused",
 *  "boundary"); as tpmg_solver_type_from_name. */
tpmg_status tpmg_smoother_variant_from_name(const char *name, tpmg_smoother_variant *value);

/** The name of a smoother variant, or NULL for an unknown value. */
const char *tpmg_smoother_variant_name(tpmg_smoother_variant value);

/** The test problem named `name` ("one", "sine", "ones"); as
 *  tpmg_solver_type_from_name. */
tpmg_status tpmg_rhs_from_name(const char *name, tpmg_rhs *value);

/** The name of a test problem, or NULL for an unknown value. */
const char *tpmg_rhs_name(tpmg_rhs value);

/** The preconditioning named `name` ("right", "left"); as
 *  tpmg_solver_type_from_name. */
tpmg_status tpmg_preconditioning_from_name(const char *name, tpmg_preconditioning *value);

/** The name of a preconditioning, or NULL for an unknown value. */
const char *tpmg_preconditioning_name(tpmg_preconditioning value);

/** The vector precision named `name` ("double", "float"); as
 *  tpmg_solver_type_from_name. */
tpmg_status tpmg_precision_from_name(const char *name, tpmg_precision *value);

/** The name of a vector precision, or NULL for an unknown value. */
const char *tpmg_precision_name(tpmg_precision value);

/* ------------------------------------------------------------------------ */
/* Setup files                                                               */
/* ------------------------------------------------------------------------ */

/* A setup file holds one problem: the grid's options, the test problem (tpmg_rhs),
 * optionally the finest level's right-hand side vector and the grid's variable
 * coefficient (tpmg_grid_set_coefficient), so that a problem built elsewhere
 * (by a deal.II program through the bridge) can be solved by `tpmg-poisson
 * --setup FILE` with the same result. The format: a text header ("tpmg-setup
 * V", then the lines dim, degree, level, cells, box, rhs, reaction (if not 0),
 * vector, coefficient (if the grid has one) and "end"), then the vector and
 * the coefficient's values as binary little-endian doubles; doc/design.md
 * gives the details. V is the lowest format version that holds the problem:
 * 1, 2 with a reaction, 3 with a coefficient; every version is read.
 * Problems with a file (one that cannot be opened, read or written, or whose
 * contents are malformed) return TPMG_ERROR_ARGUMENT with a message naming the
 * file and what is wrong.
 *
 * On a context of P > 1 ranks both calls are collective, and the file is the
 * same, byte for byte, whatever P: it holds the whole fine level in its
 * lexicographic order. Each rank passes and receives the part of the vector
 * that its level vectors hold (tpmg_grid_level_layout of the fine level: the
 * planes [first, first + count), count * plane doubles, tpmg_grid_level_size's
 * n_dofs); the coefficient travels with the grid. A failure on one rank only
 * (a file that one rank cannot open, a non-finite entry on one rank's part)
 * fails the call on every rank with the same status and the message of the
 * lowest failing rank, prefixed "rank R of P: ". */

/** Write a setup file: the grid's options (dim, degree, fine level, coarse
 *  cells, box, reaction), the test problem, optionally the fine level's
 *  right-hand side vector, and the grid's variable coefficient if it has one.
 *  Doubles are written exactly (the box as 17 significant digits, the vector
 *  and the coefficient in binary). An existing file is replaced; if writing
 *  fails part way, the partial file is removed.
 *  The coefficient is the values given to tpmg_grid_set_coefficient, in its
 *  layout, bit for bit: read back from the grid's own copy of the finest
 *  level (its backend memory, in blocks), so a grid keeps nothing extra for
 *  this call; the call takes a block of 65536 doubles (512 KiB) of host memory
 *  on each rank that holds a part of the coefficient, or receives the other
 *  ranks' parts (rank 0).
 *  @param[in] grid the grid: its options and its coefficient are written
 *  @param[in] rhs  the test problem (TPMG_RHS_ONE, TPMG_RHS_SINE or
 *                  TPMG_RHS_ONES): its exact solution is the reference of the L2
 *                  error (SINE only), and when the file holds no vector its
 *                  right-hand side, made by tpmg_problem_rhs, is the one solved;
 *                  with a coefficient, where tpmg_problem_rhs refuses
 *                  TPMG_RHS_SINE, SINE needs b
 *  @param[in] b    NULL, or the fine level's right-hand side: n_dofs doubles in
 *                  host memory (whatever the context's backend), in the level's
 *                  lexicographic order with the Dirichlet entries holding g,
 *                  i.e. what tpmg_problem_rhs produces; borrowed. Every entry
 *                  must be finite. With P ranks: this rank's part, n_dofs of
 *                  tpmg_grid_level_size (the planes [first, first + count) of
 *                  tpmg_grid_level_layout, what a level vector of the rank holds
 *                  downloaded to the host); only the owned planes are checked and
 *                  written, the ghost planes are ignored. Either every rank
 *                  passes b or none does.
 *  @param[in] path the file to write: a new file, or a regular file that it
 *                  replaces. It is written to a temporary file beside path
 *                  (path.tmp-PID-N), which is renamed onto path once complete,
 *                  so that a failed write leaves no file, or the old file as it
 *                  was (path may be the setup file just read); a symbolic link
 *                  stays and the file it names is replaced. A path that exists
 *                  and is no regular file (a directory, a device, a pipe) is
 *                  refused. With P ranks rank 0 writes it (after
 *                  receiving every rank's owned planes in blocks, so that it
 *                  never holds more than its own part and one block); the
 *                  other ranks' path is only checked for being non-empty.
 *  @return TPMG_ERROR_ARGUMENT for a NULL grid or path, an unknown rhs, a
 *  non-finite entry of b (naming its index, and with P ranks its index in the
 *  whole fine level), TPMG_RHS_SINE without b on a grid with a coefficient, a
 *  file that cannot be written (naming the path and the system's reason), or
 *  ranks that disagree on rhs or on whether b is NULL; TPMG_ERROR_MEMORY if a
 *  rank cannot allocate its block. With P ranks every rank returns the same
 *  status (see above). */
tpmg_status tpmg_setup_write(const tpmg_grid *grid, tpmg_rhs rhs, const double *b,
                             const char *path);

/** Read a setup file written by tpmg_setup_write (or by hand in its format)
 *  and create its grid, with the file's coefficient set
 *  (tpmg_grid_set_coefficient) if it holds one. The header is checked line by
 *  line (magic and version, every key exactly once, values of the right form
 *  and count), the grid options by tpmg_grid_create, the vector for its length
 *  (that of the fine level) and for non-finite entries, the coefficient for
 *  its length (the fine level's cells, times (k+1)^dim for QUADRATURE) and
 *  for values that are not finite or outside [TPMG_MIN_COEFFICIENT,
 *  TPMG_MAX_COEFFICIENT] (naming the value's index, cell and point), and the
 *  file for missing or extra bytes. The vector is checked even when b is
 *  NULL. A file with a coefficient and rhs sine must hold the vector.
 *  With P ranks every rank opens and reads the file itself (a file system
 *  that every rank sees alike is assumed): the header, then only the planes
 *  that its level vectors hold and the coefficient of the cells it owns
 *  (together the whole file: every entry is still checked); the rank whose
 *  part ends the file checks the file's end. The ranks agree on the header
 *  before creating the grid.
 *  @param[in]  ctx  the context the grid is created on
 *  @param[in]  path the file to read (by every rank); a regular file (a
 *                   directory, a device or a pipe is refused, without waiting
 *                   for a pipe's writer)
 *  @param[out] grid the grid; owned by the caller, free with tpmg_grid_destroy
 *  @param[out] rhs  the test problem (TPMG_RHS_ONE, TPMG_RHS_SINE or TPMG_RHS_ONES)
 *  @param[out] b    NULL if the vector is not wanted; else *b is the file's
 *                   vector, n_dofs doubles of the fine level in host memory
 *                   allocated with malloc (the caller frees it with free()), or
 *                   NULL when the file holds none. With P ranks: this rank's
 *                   part, n_dofs of tpmg_grid_level_size (the planes [first,
 *                   first + count) of tpmg_grid_level_layout, ghost planes
 *                   included, from the file), ready to upload into a level
 *                   vector as is
 *  @return TPMG_ERROR_ARGUMENT for a NULL argument, a file that cannot be read
 *  or is malformed (the message names the path, the line and the value);
 *  TPMG_ERROR_UNSUPPORTED for a format version it does not read (0, or above
 *  3); any status of tpmg_grid_create and tpmg_grid_set_coefficient (its message after the
 *  path); TPMG_ERROR_MEMORY if the vector or the coefficient cannot be
 *  allocated. With P ranks every rank returns the same
 *  status (see above), also TPMG_ERROR_ARGUMENT where the ranks read headers
 *  that differ. On failure nothing is allocated, *grid is NULL, *b is NULL
 *  (where b is not NULL) and *rhs is unchanged. */
tpmg_status tpmg_setup_read(tpmg_context *ctx, const char *path, tpmg_grid **grid, tpmg_rhs *rhs,
                            double **b);

#ifdef __cplusplus
}
#endif

#endif
