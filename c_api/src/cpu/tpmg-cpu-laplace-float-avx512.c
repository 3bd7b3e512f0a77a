/* The CPU level operator's kernels in float for AVX-512, compiled with -mavx512f -mfma
 * (c_api/CMakeLists.txt): tpmg_cpu_laplace_kernels_float_avx512,
 * tpmg_cpu_laplace_cells_kernels_float_avx512. */
#include "tpmg-cpu-simd.h"
#if TPMG_CPU_HAVE_SIMD
#define TPMG_CPU_SCALAR float
#define TPMG_CPU_ISA avx512
#define TPMG_CPU_SIMD_BYTES 64
#include "tpmg-cpu-laplace-templates.h"
#endif
