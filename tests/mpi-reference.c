#include "mpi-reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double get(tpmg_precision p, const void *v, int64_t i) {
  return p == TPMG_DOUBLE ? ((const double *)v)[i] : (double)((const float *)v)[i];
}

void mref_local(const tpmg_level_layout *layout, tpmg_precision p, const double *whole,
                void *local) {
  for (int64_t plane = 0; plane < layout->count; ++plane) {
    int64_t global = layout->first + plane;
    int owned = global >= layout->owned_first && global < layout->owned_end;
    for (int64_t i = 0; i < layout->plane; ++i) {
      double value = owned ? whole[global * layout->plane + i] : NAN;
      if (p == TPMG_DOUBLE)
        ((double *)local)[plane * layout->plane + i] = value;
      else
        ((float *)local)[plane * layout->plane + i] = (float)value;
    }
  }
}

double mref_owned_difference(const tpmg_level_layout *layout, tpmg_precision p, const void *local,
                             const double *whole) {
  double scale = 0.0, difference = 0.0;
  for (int64_t global = layout->owned_first; global < layout->owned_end; ++global)
    for (int64_t i = 0; i < layout->plane; ++i) {
      double a = get(p, local, (global - layout->first) * layout->plane + i);
      double b = whole[global * layout->plane + i];
      if (isnan(a)) return NAN;
      scale = fmax(scale, fabs(b));
      difference = fmax(difference, fabs(a - b));
    }
  return scale > 0.0 ? difference / scale : difference;
}

const char *mref_backend(void) {
  const char *name = getenv("TPMG_TEST_MPI_BACKEND");
  return name && *name ? name : "cpu";
}

/* SKIPPED (77) on every rank where any rank lacks the backend. */
static void require(const char *name) {
  int available = 0, all = 0;
  if (tpmg_backend_available(name, &available) != TPMG_SUCCESS) {
    fprintf(stderr, "no backend named \"%s\"\n", name);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Allreduce(&available, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("SKIPPED: no usable backend %s\n", name);
    MPI_Finalize();
    exit(77);
  }
}

tpmg_context *mref_context_create(int n_threads) {
  static MPI_Comm world;
  world = MPI_COMM_WORLD;
  require(mref_backend());
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = mref_backend();
  options.n_threads = n_threads;
  options.mpi_comm = &world;
  /* every level that can be split is, unless the test asks otherwise */
  const char *whole = getenv("TPMG_TEST_WHOLE_LEVEL_DOFS");
  options.whole_level_dofs = whole && *whole ? atoll(whole) : 0;
  tpmg_context *ctx = NULL;
  tpmg_status status = tpmg_context_create(&options, &ctx);
  if (status != TPMG_SUCCESS) {
    fprintf(stderr, "tpmg_context_create(%s) on MPI_COMM_WORLD returned %d\n", options.backend,
            (int)status);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return ctx;
}

tpmg_context *mref_one_context_create(int n_threads) {
  require(mref_backend());
  /* on the GPU of the rank's distributed context where each rank has one of
   * its own (tpmg.h: device + local rank); where ranks share GPUs, the
   * highest there is up to that */
  MPI_Comm node;
  int local = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  tpmg_context_options options = tpmg_context_options_default();
  options.backend = mref_backend();
  options.n_threads = n_threads;
  tpmg_context *ctx = NULL;
  tpmg_status status = TPMG_ERROR_UNSUPPORTED;
  /* device numbers wrap where ranks share GPUs: try the next lower */
  for (options.device = local; options.device >= 0 && status == TPMG_ERROR_UNSUPPORTED;
       --options.device)
    status = tpmg_context_create(&options, &ctx);
  if (status != TPMG_SUCCESS) {
    fprintf(stderr, "tpmg_context_create(%s) on one process returned %d\n", options.backend,
            (int)status);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return ctx;
}

int mref_exit_code(const char *test_name) {
  int failures = ref_failures, total = 0, rank = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (total > 0 && rank == 0) fprintf(stderr, "%s: %d check(s) failed on all ranks\n", test_name, total);
  return total > 0;
}
