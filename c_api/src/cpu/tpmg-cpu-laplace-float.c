/* The CPU level operator in float: the kernels of the scalar width and the driver
 * (tpmg_cpu_laplace_float and tpmg_cpu_laplace_kernels_float_scalar). */
#define TPMG_CPU_SCALAR float
#define TPMG_CPU_ISA scalar
#include "tpmg-cpu-laplace-templates.h"

#include "tpmg-cpu-laplace-driver-templates.h"
