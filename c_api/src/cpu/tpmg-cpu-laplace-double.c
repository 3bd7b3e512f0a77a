/* The CPU level operator in double: the kernels of the scalar width and the driver
 * (tpmg_cpu_laplace_double and tpmg_cpu_laplace_kernels_double_scalar). */
#define TPMG_CPU_SCALAR double
#define TPMG_CPU_ISA scalar
#include "tpmg-cpu-laplace-templates.h"

#include "tpmg-cpu-laplace-driver-templates.h"
