/* SIMD widths of the CPU backend: which the processor runs, and how the
 * kernels use them (their building blocks: tpmg-cpu-simd-templates.h).
 *
 * Lanes run across cells or patches, as deal.II batches cells: a kernel
 * gathers W cells (or patches) into a tensor of lane vectors, local[p][l] =
 * point p of item l, applies the 1D matrices to all of them at once (a matrix
 * entry broadcast, times a lane vector, plus an accumulator: one FMA for W
 * items), and scatters lane by lane, item after item, so that every global
 * entry gets its contributions in the order of the scalar kernels. The last
 * batch repeats its last item in the unused lanes and scatters only the used
 * ones. Results differ from the scalar kernels by rounding only (the vector
 * code contracts a * b + c into FMAs).
 *
 * Widths. The vector type is a GCC vector extension (vector_size), so the
 * same source compiles for any width. Each kernel family's lane kernels are
 * instantiated once per scalar type and instruction set, each in a source of
 * its own compiled with that instruction set's flags (c_api/CMakeLists.txt;
 * tpmg-cpu-laplace-double-avx2.c with -mavx2 -mfma, ...), so the default build
 * (no -march) runs on any x86-64 and elsewhere: the context picks a width at
 * creation: the backend's variant (cpu/scalar, cpu/avx2, cpu/avx512), else the
 * environment variable
 *   TPMG_CPU_SIMD=scalar|avx2|avx512,
 * else the widest the processor supports (__builtin_cpu_supports); scalar: the
 * plain C kernels. Only the kernels, reached through the tables the drivers
 * choose from, are compiled for an instruction set. Compilers other than GCC
 * on x86-64 build the scalar kernels only.
 *
 * Use. An instance source defines TPMG_CPU_SCALAR, TPMG_CPU_ISA (the width's
 * name: avx2, avx512) and TPMG_CPU_SIMD_BYTES (the vector size: 32, 64) and
 * includes its family's body, which includes tpmg-cpu-simd-templates.h for
 * the lane-vector type V of W lanes of T and the building blocks there, named
 * by TPMG_CPU_VNAME (name_double_avx2, ...). */
#ifndef TPMG_CPU_SIMD_H
#define TPMG_CPU_SIMD_H

/* The widths, in tpmg_cpu_data.simd. */
enum { TPMG_CPU_SIMD_SCALAR = 0, TPMG_CPU_SIMD_AVX2 = 1, TPMG_CPU_SIMD_AVX512 = 2 };

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && __GNUC__ >= 8
#define TPMG_CPU_HAVE_SIMD 1
#else
#define TPMG_CPU_HAVE_SIMD 0
#endif

/* The rows of a contraction unrolled, so that its accumulators stay in
 * registers; not in sanitizer builds, where the unrolled instances take GCC
 * minutes to compile. */
#if defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define TPMG_CPU_UNROLL _Pragma("GCC unroll 32")
#else
#define TPMG_CPU_UNROLL
#endif

/* Whether this processor runs the kernels of width `simd`. */
static inline int tpmg_cpu_simd_supported(int simd) {
  if (simd == TPMG_CPU_SIMD_SCALAR)
    return 1;
#if TPMG_CPU_HAVE_SIMD
  __builtin_cpu_init();
  if (simd == TPMG_CPU_SIMD_AVX2)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (simd == TPMG_CPU_SIMD_AVX512)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
  return 0;
}

/* name_T_isa: a name of the batched part of instruction set isa. */
#define TPMG_CPU_SIMD_NAME(name, isa) TPMG_CPU_PASTE(TPMG_CPU_NAME(name), isa)
#define TPMG_CPU_VNAME(name) TPMG_CPU_SIMD_NAME(name, TPMG_CPU_ISA)

/* The table `name` of width isa: its kernels, of type `kernel`, by [dim - 2][k]. */
#define TPMG_CPU_TABLE(kernel, name, isa)                                                          \
  kernel *const TPMG_CPU_SIMD_NAME(name, isa)[2][TPMG_MAX_DEGREE_2D + 1]
/* The tables `name` of the SIMD widths, defined by the instances. */
#define TPMG_CPU_DECLARE_SIMD_TABLES(kernel, name)                                                 \
  extern TPMG_CPU_TABLE(kernel, name, avx2);                                                       \
  extern TPMG_CPU_TABLE(kernel, name, avx512)

#endif
