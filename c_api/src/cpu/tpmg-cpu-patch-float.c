/* The CPU vertex-patch smoother in float: the kernels of the scalar width and the driver
 * (tpmg_cpu_patch_pass_float). */
#define TPMG_CPU_SCALAR float
#define TPMG_CPU_ISA scalar
#include "tpmg-cpu-patch-templates.h"

#include "tpmg-cpu-patch-driver-templates.h"
