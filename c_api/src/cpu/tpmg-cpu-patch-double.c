/* The CPU vertex-patch smoother in double: the kernels of the scalar width and the driver
 * (tpmg_cpu_patch_pass_double). */
#define TPMG_CPU_SCALAR double
#define TPMG_CPU_ISA scalar
#include "tpmg-cpu-patch-templates.h"

#include "tpmg-cpu-patch-driver-templates.h"
