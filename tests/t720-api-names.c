/* The enum name maps (tpmg_X_from_name, tpmg_X_name): every value's name as
 * the documentation lists it, round trips, and refused names and values. */
#include <stdio.h>
#include <string.h>

#include "tpmg.h"

static int failures = 0;

#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                              \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

/* Names that no enum has: case, prefixes, padding, empty. */
static const char *const bad_names[] = {"",       "GMRES",   "gmre",    "gmres ", " cg",
                                        "Double", "doubles", "fuse",    "sin",    "one\n",
                                        "lef",    "x",       "vcycle2", "mixed,"};

/* Check one enum: `names` is the documented list, indexed by value. */
#define CHECK_ENUM(type, ctype, ...)                                                               \
  do {                                                                                             \
    const char *const names[] = {__VA_ARGS__};                                                     \
    const int n = (int)(sizeof names / sizeof names[0]);                                           \
    for (int v = 0; v < n; ++v) {                                                                  \
      const char *got = tpmg_##type##_name((ctype)v);                                              \
      EXPECT(got &&strcmp(got, names[v]) == 0, "tpmg_" #type "_name(%d): expected '%s', got '%s'", \
             v, names[v], got ? got : "(null)");                                                   \
      ctype value = (ctype)(n + 7);                                                                \
      tpmg_status s = tpmg_##type##_from_name(names[v], &value);                                   \
      EXPECT(s == TPMG_SUCCESS && (int)value == v,                                                 \
             "tpmg_" #type "_from_name(\"%s\"): expected status 0 and %d, got %d and %d",          \
             names[v], v, (int)s, (int)value);                                                     \
    }                                                                                              \
    EXPECT(tpmg_##type##_name((ctype)n) == NULL, "tpmg_" #type "_name(%d) is not NULL", n);        \
    EXPECT(tpmg_##type##_name((ctype)-1) == NULL, "tpmg_" #type "_name(-1) is not NULL");          \
    for (size_t b = 0; b < sizeof bad_names / sizeof bad_names[0]; ++b) {                          \
      int known = 0;                                                                               \
      for (int v = 0; v < n; ++v)                                                                  \
        known |= strcmp(bad_names[b], names[v]) == 0;                                              \
      if (known)                                                                                   \
        continue;                                                                                  \
      ctype value = (ctype)1;                                                                      \
      tpmg_status s = tpmg_##type##_from_name(bad_names[b], &value);                               \
      EXPECT(s == TPMG_ERROR_ARGUMENT && (int)value == 1,                                          \
             "tpmg_" #type "_from_name(\"%s\"): expected TPMG_ERROR_ARGUMENT and value "           \
             "unchanged, got %d and %d",                                                           \
             bad_names[b], (int)s, (int)value);                                                    \
    }                                                                                              \
    ctype value = (ctype)1;                                                                        \
    EXPECT(tpmg_##type##_from_name(NULL, &value) == TPMG_ERROR_ARGUMENT && (int)value == 1,        \
           "tpmg_" #type "_from_name(NULL) not refused");                                          \
    EXPECT(tpmg_##type##_from_name(names[0], NULL) == TPMG_ERROR_ARGUMENT,                         \
           "tpmg_" #type "_from_name with a NULL value not refused");                              \
  } while (0)

int main(void) {
  CHECK_ENUM(solver_type, tpmg_solver_type, "gmres", "cg", "fmg", "vcycle", "fmg-gmres");
  CHECK_ENUM(arithmetic, tpmg_arithmetic, "double", "mixed", "float");
  CHECK_ENUM(smoother_variant, tpmg_smoother_variant, "global", "separate", "fused", "boundary");
  CHECK_ENUM(rhs, tpmg_rhs, "one", "sine", "ones");
  CHECK_ENUM(preconditioning, tpmg_preconditioning, "right", "left");
  CHECK_ENUM(precision, tpmg_precision, "double", "float");
  /* the values behind the names are the enum constants themselves */
  tpmg_solver_type type = TPMG_SOLVER_GMRES;
  EXPECT(tpmg_solver_type_from_name("vcycle", &type) == 0 && type == TPMG_SOLVER_VCYCLE,
         "vcycle is not TPMG_SOLVER_VCYCLE");
  EXPECT(tpmg_solver_type_from_name("fmg-gmres", &type) == 0 && type == TPMG_SOLVER_FMG_GMRES,
         "fmg-gmres is not TPMG_SOLVER_FMG_GMRES");
  tpmg_smoother_variant variant = TPMG_SMOOTHER_GLOBAL;
  EXPECT(tpmg_smoother_variant_from_name("boundary", &variant) == 0 &&
             variant == TPMG_SMOOTHER_BOUNDARY,
         "boundary is not TPMG_SMOOTHER_BOUNDARY");
  tpmg_rhs rhs = TPMG_RHS_ONE;
  EXPECT(tpmg_rhs_from_name("ones", &rhs) == 0 && rhs == TPMG_RHS_ONES,
         "ones is not TPMG_RHS_ONES");
  tpmg_preconditioning pre = TPMG_PRECONDITION_RIGHT;
  EXPECT(tpmg_preconditioning_from_name("left", &pre) == 0 && pre == TPMG_PRECONDITION_LEFT,
         "left is not TPMG_PRECONDITION_LEFT");
  tpmg_arithmetic arithmetic = TPMG_ARITHMETIC_DOUBLE;
  EXPECT(tpmg_arithmetic_from_name("mixed", &arithmetic) == 0 &&
             arithmetic == TPMG_ARITHMETIC_MIXED,
         "mixed is not TPMG_ARITHMETIC_MIXED");
  tpmg_precision precision = TPMG_DOUBLE;
  EXPECT(tpmg_precision_from_name("float", &precision) == 0 && precision == TPMG_FLOAT,
         "float is not TPMG_FLOAT");
  return failures != 0;
}
