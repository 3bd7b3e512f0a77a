/* The user-facing names of the public enums, defined once for the programs,
 * the setup files and the deal.II bridge: each table is indexed by the enum's
 * value (the enums are dense from 0). */
#include <string.h>

#include "tpmg.h"

static const char *const solver_type_names[] = {"gmres", "cg", "fmg", "vcycle", "fmg-gmres"};
static const char *const arithmetic_names[] = {"double", "mixed", "float"};
static const char *const smoother_variant_names[] = {"global", "separate", "fused", "boundary"};
static const char *const rhs_names[] = {"one", "sine", "ones"};
static const char *const preconditioning_names[] = {"right", "left"};
static const char *const precision_names[] = {"double", "float"};

#define COUNT(table) ((int)(sizeof(table) / sizeof((table)[0])))

/* The index of name in table, or -1 (also for a NULL name). */
static int find(const char *const *table, int count, const char *name) {
  if (!name)
    return -1;
  for (int i = 0; i < count; ++i)
    if (strcmp(table[i], name) == 0)
      return i;
  return -1;
}

/* Defines tpmg_<type>_from_name and tpmg_<type>_name over the table <type>_names. */
#define TPMG_NAMES(type, ctype)                                                                    \
  tpmg_status tpmg_##type##_from_name(const char *name, ctype *value) {                            \
    int i = find(type##_names, COUNT(type##_names), name);                                         \
    if (!value || i < 0)                                                                           \
      return TPMG_ERROR_ARGUMENT;                                                                  \
    *value = (ctype)i;                                                                             \
    return TPMG_SUCCESS;                                                                           \
  }                                                                                                \
  const char *tpmg_##type##_name(ctype value) {                                                    \
    int i = (int)value;                                                                            \
    return i >= 0 && i < COUNT(type##_names) ? type##_names[i] : NULL;                             \
  }

TPMG_NAMES(solver_type, tpmg_solver_type)
TPMG_NAMES(arithmetic, tpmg_arithmetic)
TPMG_NAMES(smoother_variant, tpmg_smoother_variant)
TPMG_NAMES(rhs, tpmg_rhs)
TPMG_NAMES(preconditioning, tpmg_preconditioning)
TPMG_NAMES(precision, tpmg_precision)
