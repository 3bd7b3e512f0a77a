/* The CPU backend's vector operations and coarse solve in double:
 * tpmg_cpu_set_double, tpmg_cpu_dot_double, ... */
#define TPMG_CPU_SCALAR double
#include "tpmg-cpu-vector-templates.h"
