/* The CPU kernels' SIMD building blocks of one scalar type T and one width
 * (tpmg-cpu-simd.h): the lane-vector type V of W lanes of T, the contractions
 * of sum factorization on W cells or patches at once, and their gather and
 * scatter.
 *
 * A template: the including source defines TPMG_CPU_SCALAR, TPMG_CPU_ISA and
 * TPMG_CPU_SIMD_BYTES first and is compiled for that instruction set; one
 * instance per translation unit. */
#ifndef TPMG_CPU_SIMD_TEMPLATES_H
#define TPMG_CPU_SIMD_TEMPLATES_H

#if !defined(TPMG_CPU_SCALAR) || !defined(TPMG_CPU_ISA) || !defined(TPMG_CPU_SIMD_BYTES)
#error                                                                                             \
    "define TPMG_CPU_SCALAR, TPMG_CPU_ISA and TPMG_CPU_SIMD_BYTES before tpmg-cpu-simd-templates.h"
#endif

#include "tpmg-cpu-simd.h"
#include "tpmg-cpu.h"

/* The flags that c_api/CMakeLists.txt sets for the width's sources: without
 * them the vector code would compile, slowly and without FMAs. */
#if TPMG_CPU_SIMD_BYTES == 32 && !(defined(__AVX2__) && defined(__FMA__))
#error "an AVX2 instance is compiled with -mavx2 -mfma"
#endif
#if TPMG_CPU_SIMD_BYTES == 64 && !(defined(__AVX512F__) && defined(__FMA__))
#error "an AVX-512 instance is compiled with -mavx512f -mfma"
#endif

/* ---- lane vectors of T, once per scalar type and instruction set -------- */
typedef T TPMG_CPU_VNAME(vec) __attribute__((vector_size(TPMG_CPU_SIMD_BYTES)));
#define V TPMG_CPU_VNAME(vec)
#define W ((int)(TPMG_CPU_SIMD_BYTES / sizeof(T)))

/* tpmg_cpu_contract on lane vectors: out[q][i][p] (+)= sum_j A_ij in[q][j][p],
 * `at` column-major. The rows of one output line stay in registers. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(simd_contract)(int rows, int cols, int pre, int post,
                                                   const T *restrict at, const V *restrict in,
                                                   V *restrict out, int add) {
  for (int q = 0; q < post; ++q)
    for (int p = 0; p < pre; ++p) {
      V acc[TPMG_CPU_MAX_POINTS];
      TPMG_CPU_UNROLL
      for (int i = 0; i < rows; ++i)
        acc[i] = add ? out[(q * rows + i) * pre + p] : (V){0};
      for (int j = 0; j < cols; ++j) {
        const V u = in[(q * cols + j) * pre + p];
        TPMG_CPU_UNROLL
        for (int i = 0; i < rows; ++i)
          acc[i] += at[j * rows + i] * u;
      }
      TPMG_CPU_UNROLL
      for (int i = 0; i < rows; ++i)
        out[(q * rows + i) * pre + p] = acc[i];
    }
}

/* tpmg_cpu_kron_laplace on lane vectors; t0, t1 hold rows cols^(dim-1), t2
 * rows^2 cols (3D only). */
TPMG_CPU_INLINE void
TPMG_CPU_VNAME(simd_kron_laplace)(int dim, int rows, int cols, const T *const mass[3],
                                  const T *const stiffness[3], const V *restrict in, V *restrict t0,
                                  V *restrict t1, V *restrict t2, V *restrict out) {
  const int slower = dim == 3 ? cols * cols : cols;
  TPMG_CPU_VNAME(simd_contract)(rows, cols, 1, slower, mass[0], in, t0, 0);
  TPMG_CPU_VNAME(simd_contract)(rows, cols, 1, slower, stiffness[0], in, t1, 0);
  if (dim == 2) {
    TPMG_CPU_VNAME(simd_contract)(rows, cols, rows, 1, stiffness[1], t0, out, 0);
    TPMG_CPU_VNAME(simd_contract)(rows, cols, rows, 1, mass[1], t1, out, 1);
    return;
  }
  TPMG_CPU_VNAME(simd_contract)(rows, cols, rows, cols, mass[1], t0, t2, 0);
  TPMG_CPU_VNAME(simd_contract)(rows, cols, rows * rows, 1, stiffness[2], t2, out, 0);
  TPMG_CPU_VNAME(simd_contract)(rows, cols, rows, cols, stiffness[1], t0, t2, 0);
  TPMG_CPU_VNAME(simd_contract)(rows, cols, rows, cols, mass[1], t1, t2, 1);
  TPMG_CPU_VNAME(simd_contract)(rows, cols, rows * rows, 1, mass[2], t2, out, 1);
}

/* tpmg_cpu_gather of W blocks into the lanes of local (n_pts^dim lane vectors):
 * lane l from origin[l] with lo[l], hi[l]; hollow is the same for all lanes.
 * Scalar loads: on AMD Zen 4 they beat the gather instructions (measured). */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(simd_gather)(int dim, int n_pts, const T *restrict x,
                                                 const tpmg_index n[3],
                                                 const tpmg_index origin[][3], const int lo[][3],
                                                 const int hi[][3], int hollow, V *restrict local) {
  const int n_2 = dim == 3 ? n_pts : 1;
  const T *block[W];
  int edge = 0;
  for (int l = 0; l < W; ++l) {
    block[l] = x + origin[l][0] + n[0] * (origin[l][1] + n[1] * origin[l][2]);
    for (int d = 0; d < 3; ++d)
      edge = edge || lo[l][d] || hi[l][d];
  }
  for (int a2 = 0; a2 < n_2; ++a2)
    for (int a1 = 0; a1 < n_pts; ++a1) {
      V *restrict row = local + (a2 * n_pts + a1) * n_pts;
      const tpmg_index line = n[0] * (a1 + n[1] * a2);
      const int inner = a1 > 0 && a1 < n_pts - 1 && (dim == 2 || (a2 > 0 && a2 < n_pts - 1));
      if (hollow && inner) {
        for (int a0 = 1; a0 < n_pts - 1; ++a0)
          row[a0] = (V){0};
        for (int l = 0; l < W; ++l) {
          row[0][l] = block[l][line];
          row[n_pts - 1][l] = block[l][line + n_pts - 1];
        }
        continue;
      }
      for (int a0 = 0; a0 < n_pts; ++a0) {
        V point;
        for (int l = 0; l < W; ++l)
          point[l] = block[l][line + a0];
        row[a0] = point;
      }
    }
  if (!edge)
    return;
  /* Dirichlet entries read as zero, lane by lane */
  for (int l = 0; l < W; ++l)
    for (int a2 = 0; a2 < n_2; ++a2)
      for (int a1 = 0; a1 < n_pts; ++a1) {
        V *restrict row = local + (a2 * n_pts + a1) * n_pts;
        int zero = (lo[l][1] && a1 == 0) || (hi[l][1] && a1 == n_pts - 1);
        if (dim == 3)
          zero = zero || (lo[l][2] && a2 == 0) || (hi[l][2] && a2 == n_pts - 1);
        for (int a0 = 0; a0 < n_pts; ++a0)
          if (zero || (lo[l][0] && a0 == 0) || (hi[l][0] && a0 == n_pts - 1))
            row[a0][l] = 0;
      }
}

/* Prefetch the n_pts^dim blocks of x at origin[0..W-1] into the cache, the
 * first and last entry of each of their x-lines: the next batch's gather is
 * scattered over many lines that the hardware prefetcher does not foresee. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(simd_prefetch)(int dim, int n_pts, const T *x,
                                                   const tpmg_index n[3],
                                                   const tpmg_index origin[][3]) {
  const int n_2 = dim == 3 ? n_pts : 1;
  for (int l = 0; l < W; ++l) {
    const T *block = x + origin[l][0] + n[0] * (origin[l][1] + n[1] * origin[l][2]);
    for (int a2 = 0; a2 < n_2; ++a2)
      for (int a1 = 0; a1 < n_pts; ++a1) {
        const T *line = block + n[0] * (a1 + n[1] * a2);
        __builtin_prefetch(line, 0, 2);
        __builtin_prefetch(line + n_pts - 1, 0, 2);
      }
  }
}

/* tpmg_cpu_scatter from lane `lane` of local. */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(simd_scatter)(int dim, int n_pts, const V *restrict local,
                                                  int lane, const tpmg_index n[3],
                                                  const tpmg_index origin[3], const int begin[3],
                                                  const int end[3], T *restrict x, int add) {
  for (int a2 = begin[2]; a2 < end[2]; ++a2)
    for (int a1 = begin[1]; a1 < end[1]; ++a1) {
      const V *restrict row = local + (a2 * n_pts + a1) * n_pts;
      T *restrict dst = x + origin[0] + n[0] * (origin[1] + a1 + n[1] * (origin[2] + a2));
      if (add)
        for (int a0 = begin[0]; a0 < end[0]; ++a0)
          dst[a0] += row[a0][lane];
      else
        for (int a0 = begin[0]; a0 < end[0]; ++a0)
          dst[a0] = row[a0][lane];
    }
}

/* tpmg_cpu_scatter of the first `used` lanes of local (n_pts^dim lane vectors)
 * to blocks at origin[l] that do not overlap (the interiors of one colour's
 * patches), so that the order of the lanes does not matter: vector by vector,
 * all lanes of each, reading local once (lane by lane, as simd_scatter, a
 * local larger than the L1 cache is read from L2 once per lane). */
TPMG_CPU_INLINE void TPMG_CPU_VNAME(simd_scatter_disjoint)(int dim, int n_pts,
                                                           const V *restrict local, int used,
                                                           const tpmg_index n[3],
                                                           const tpmg_index origin[][3],
                                                           T *restrict x, int add) {
  const int n_2 = dim == 3 ? n_pts : 1;
  T *block[W];
  for (int l = 0; l < used; ++l)
    block[l] = x + origin[l][0] + n[0] * (origin[l][1] + n[1] * origin[l][2]);
  for (int a2 = 0; a2 < n_2; ++a2)
    for (int a1 = 0; a1 < n_pts; ++a1) {
      const V *restrict row = local + (a2 * n_pts + a1) * n_pts;
      const tpmg_index line = n[0] * (a1 + n[1] * a2);
      for (int l = 0; l < used; ++l) {
        T *restrict dst = block[l] + line;
        if (add)
          for (int a0 = 0; a0 < n_pts; ++a0)
            dst[a0] += row[a0][l];
        else
          for (int a0 = 0; a0 < n_pts; ++a0)
            dst[a0] = row[a0][l];
      }
    }
}

#endif
