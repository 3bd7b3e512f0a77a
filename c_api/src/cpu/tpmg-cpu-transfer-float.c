/* The CPU grid transfer in float: the kernels of the scalar width and the driver
 * (tpmg_cpu_prolongate_add_float, tpmg_cpu_restrict_float). */
#define TPMG_CPU_SCALAR float
#define TPMG_CPU_ISA scalar
#include "tpmg-cpu-transfer-templates.h"

#include "tpmg-cpu-transfer-driver-templates.h"
