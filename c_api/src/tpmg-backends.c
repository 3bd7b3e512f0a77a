/* The registry of backends: one line per backend, its name and its function
 * table. A new backend is a folder of its own (the table's functions) and one
 * line here; variants of a backend's kernels are the backend's business and
 * reach it as the part of the name after a slash (tpmg_backend_variant). */
#include <string.h>

#include "tpmg-impl.h"

extern const tpmg_backend_ops tpmg_cpu_backend;
#ifdef TPMG_HAVE_CUDA
extern const tpmg_backend_ops tpmg_cuda_backend;
#define TPMG_CUDA_BACKEND &tpmg_cuda_backend
#else
#define TPMG_CUDA_BACKEND NULL
#endif

/* NULL: a backend tpmg knows that this build does not have. */
static const struct {
  const char *name;
  const tpmg_backend_ops *ops;
} registry[] = {
    {"cpu", &tpmg_cpu_backend},
    {"cuda", TPMG_CUDA_BACKEND},
};

const tpmg_backend_ops *tpmg_backend_find(const char *name, int *known) {
  *known = 0;
  for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); ++i)
    if (strcmp(registry[i].name, name) == 0) {
      *known = 1;
      return registry[i].ops;
    }
  return NULL;
}
