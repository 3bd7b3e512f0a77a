/* The CPU grid transfer in double: the kernels of the scalar width and the driver
 * (tpmg_cpu_prolongate_add_double, tpmg_cpu_restrict_double). */
#define TPMG_CPU_SCALAR double
#define TPMG_CPU_ISA scalar
#include "tpmg-cpu-transfer-templates.h"

#include "tpmg-cpu-transfer-driver-templates.h"
