/* The CPU level operator's kernels in double for AVX2, compiled with -mavx2 -mfma
 * (c_api/CMakeLists.txt): tpmg_cpu_laplace_kernels_double_avx2,
 * tpmg_cpu_laplace_cells_kernels_double_avx2. */
#include "tpmg-cpu-simd.h"
#if TPMG_CPU_HAVE_SIMD
#define TPMG_CPU_SCALAR double
#define TPMG_CPU_ISA avx2
#define TPMG_CPU_SIMD_BYTES 32
#include "tpmg-cpu-laplace-templates.h"
#endif
