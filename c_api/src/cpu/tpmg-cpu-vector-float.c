/* The CPU backend's vector operations and coarse solve in float:
 * tpmg_cpu_set_float, tpmg_cpu_dot_float, ... */
#define TPMG_CPU_SCALAR float
#include "tpmg-cpu-vector-templates.h"
