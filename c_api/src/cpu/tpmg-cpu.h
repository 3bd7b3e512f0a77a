/* Private header of the CPU backend: the entry points its files share, and the
 * building blocks of its kernels.
 *
 * Precision and width. C has no templates: a kernel family's generic body is
 * a header, tpmg-cpu-laplace-templates.h, tpmg-cpu-patch-templates.h, ...,
 * written with the scalar type T and names made unique by TPMG_CPU_NAME
 * (name_double, name_float) and, in its lane kernels, TPMG_CPU_VNAME
 * (name_double_avx2, ...; tpmg-cpu-simd.h). Small sources instantiate it,
 * one scalar type and one width each: tpmg-cpu-laplace-double.c defines
 * TPMG_CPU_SCALAR as double and TPMG_CPU_ISA as scalar and includes the body
 * (the plain C kernels) and the family's driver (its -driver-templates.h: the
 * data of a call, the threads, the choice of width at run time);
 * tpmg-cpu-laplace-double-avx512.c defines TPMG_CPU_ISA as avx512 and
 * TPMG_CPU_SIMD_BYTES as 64 and includes the body alone, compiled with that
 * instruction set's flags (c_api/CMakeLists.txt). A template has an include
 * guard: a translation unit holds one instance. The building blocks of one
 * scalar type are in tpmg-cpu-templates.h, those of one width in
 * tpmg-cpu-simd-templates.h.
 *
 * Degree. Hot kernels are static inline functions taking dim and k as
 * arguments; TPMG_CPU_FOR_EACH_DEGREE instantiates them with constant dim and k
 * (so loop bounds are compile-time constants), and a table indexed by [dim-2][k]
 * selects the instance at run time. OpenMP regions are outlined before
 * inlining, so they live in the generic drivers, which call an instance per row
 * or layer of cells or patches. */
#ifndef TPMG_CPU_H
#define TPMG_CPU_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-backend.h"

/* Points per direction of the largest local tensor: the vertex patch of Q_10 in 2D. */
#define TPMG_CPU_MAX_POINTS (2 * TPMG_MAX_DEGREE_2D + 1)
/* Entries of a 1D matrix and of a local tensor: 21^2 in 2D < 17^3 in 3D. */
#define TPMG_CPU_MAX_MATRIX (TPMG_CPU_MAX_POINTS * TPMG_CPU_MAX_POINTS)
#define TPMG_CPU_MAX_TENSOR                                                                        \
  ((2 * TPMG_MAX_DEGREE_3D + 1) * (2 * TPMG_MAX_DEGREE_3D + 1) * (2 * TPMG_MAX_DEGREE_3D + 1))

/* X(dim, k) for every supported dimension and degree. */
#define TPMG_CPU_FOR_EACH_DEGREE(X)                                                                \
  X(2, 1)                                                                                          \
  X(2, 2)                                                                                          \
  X(2, 3)                                                                                          \
  X(2, 4)                                                                                          \
  X(2, 5)                                                                                          \
  X(2, 6) X(2, 7) X(2, 8) X(2, 9) X(2, 10) X(3, 1) X(3, 2) X(3, 3) X(3, 4) X(3, 5) X(3, 6) X(3, 7) \
      X(3, 8)

#if defined(__GNUC__)
#define TPMG_CPU_INLINE static inline __attribute__((always_inline))
#else
#define TPMG_CPU_INLINE static inline
#endif

/* The scalar type and unique names inside a precision-generic part. */
#define T TPMG_CPU_SCALAR
#define TPMG_CPU_PASTE_(name, type) name##_##type
#define TPMG_CPU_PASTE(name, type) TPMG_CPU_PASTE_(name, type)
#define TPMG_CPU_NAME(name) TPMG_CPU_PASTE(name, TPMG_CPU_SCALAR)
#define TPMG_CPU_PRECISION (sizeof(T) == sizeof(float) ? TPMG_FLOAT : TPMG_DOUBLE)

/* What the backend keeps behind tpmg_backend_data. */
typedef struct {
  double stopwatch_start; /* the stopwatch's start mark */
  int simd;               /* the kernels' width, TPMG_CPU_SIMD_* (tpmg-cpu-simd.h) */
} tpmg_cpu_data;

static inline int tpmg_cpu_simd(const tpmg_context *ctx) {
  return ((const tpmg_cpu_data *)tpmg_backend_data(ctx))->simd;
}

/* Scratch for the batched kernels: tpmg_backend_threads(ctx) blocks of at least `bytes`
 * each, `*stride` bytes apart, 64-byte aligned, in *ptr (free with free()).
 * bytes = 0: *ptr = NULL, *stride = 0. */
tpmg_status tpmg_cpu_scratch(tpmg_context *ctx, size_t bytes, size_t *stride, char **ptr);

/* The operations of the backend table implemented outside tpmg-cpu-backend.c;
 * arguments as in tpmg_backend_ops. */
tpmg_status tpmg_cpu_laplace(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                             const void *src, void *dst);
/* The work per DoF of one tpmg_cpu_laplace, counted from its kernel. */
void tpmg_cpu_laplace_work(const tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                           tpmg_work *work);
tpmg_status tpmg_cpu_copy_boundary(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                   const void *src, void *dst);
tpmg_status tpmg_cpu_patch_fused(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                 int colour, int boundary, const tpmg_index vertices[2],
                                 const void *b, void *x);
tpmg_status tpmg_cpu_patch_residual(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                    int colour, const void *b, const void *x, void *r);
tpmg_status tpmg_cpu_patch_solve(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                 int colour, const void *r, void *x);
tpmg_status tpmg_cpu_prolongate_add(tpmg_context *ctx, const tpmg_level *coarse,
                                    const tpmg_level *fine, tpmg_precision prec, const void *c,
                                    void *f);
tpmg_status tpmg_cpu_restrict(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                              tpmg_precision prec, const void *f, void *c);

/* Dot products sum this many contiguous blocks, fixed by n alone, one after the
 * other: the result does not depend on the thread count. */
#define TPMG_CPU_DOT_BLOCKS 256
/* Accumulators per block, in a fixed interleaving, so the sum vectorizes. */
#define TPMG_CPU_DOT_LANES 8
/* Vectors shorter than this are handled by one thread. */
#define TPMG_CPU_PARALLEL_MIN 16384

/* What a pass over the patches of one colour does. */
enum { PATCH_RESIDUAL, PATCH_SOLVE, PATCH_FUSED, PATCH_BOUNDARY };

/* The functions of one scalar type behind the entry points: the vector
 * operations and the coarse solve (tpmg-cpu-vector-templates.h), the drivers of
 * the kernel families (tpmg-cpu-laplace-driver-templates.h, ...), defined by
 * the instances tpmg-cpu-vector-double.c, tpmg-cpu-laplace-double.c, ...;
 * arguments as the entry points above, tpmg_cpu_patch_pass_T's at its
 * definition. */
#define TPMG_CPU_DECLARE_PRECISION(type)                                                           \
  void tpmg_cpu_set_##type(tpmg_context *ctx, tpmg_index n, double value, type *v);                \
  void tpmg_cpu_axpby_##type(tpmg_context *ctx, tpmg_index n, double a, const type *restrict x,    \
                             double b, type *restrict y);                                          \
  double tpmg_cpu_dot_##type(tpmg_context *ctx, tpmg_index n, const type *restrict x,              \
                             const type *restrict y);                                              \
  void tpmg_cpu_dots_##type(tpmg_context *ctx, tpmg_index n, int m, const type *const *x,          \
                            const type *restrict y, double *result);                               \
  void tpmg_cpu_axpys_##type(tpmg_context *ctx, tpmg_index n, int m, const double *a, int x_float, \
                             const void *const *x, type *restrict y, double *norm2);               \
  void tpmg_cpu_coarse_solve_##type(tpmg_context *ctx, const tpmg_level *lvl,                      \
                                    tpmg_index n_interior, const type *inverse, const type *b,     \
                                    type *x);                                                      \
  tpmg_status tpmg_cpu_laplace_##type(tpmg_context *ctx, const tpmg_level *lvl, const type *src,   \
                                      type *dst);                                                  \
  tpmg_status tpmg_cpu_patch_pass_##type(tpmg_context *ctx, const tpmg_level *lvl, int mode,       \
                                         int colour, const tpmg_index *vertices, const type *b,    \
                                         const type *x, type *r_out, type *x_out);                 \
  tpmg_status tpmg_cpu_prolongate_add_##type(tpmg_context *ctx, const tpmg_level *coarse,          \
                                             const tpmg_level *fine, const type *c, type *f);      \
  tpmg_status tpmg_cpu_restrict_##type(tpmg_context *ctx, const tpmg_level *coarse,                \
                                       const tpmg_level *fine, const type *f, type *c);
TPMG_CPU_DECLARE_PRECISION(double)
TPMG_CPU_DECLARE_PRECISION(float)
#undef TPMG_CPU_DECLARE_PRECISION

/* Cells are scattered into a global vector in layers along the slowest
 * direction, even layers first, then odd ones: layers of one parity share no
 * DoF, and one thread adds up a whole layer, so the summation order is fixed.
 * Layer c (DoF planes c k .. c k + k) zeroes the planes that no layer of the
 * previous parity has written before it adds: all of them if c is even, all but
 * the first and (unless c is the last layer) the last if c is odd. */
static inline void tpmg_cpu_layer_planes(tpmg_index c, tpmg_index n_layers, int k,
                                         tpmg_index *first, tpmg_index *last) {
  int odd = (int)(c & 1);
  *first = c * k + odd;
  *last = c * k + k - (odd && c != n_layers - 1);
}

#endif
