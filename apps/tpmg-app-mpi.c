/* MPI for the C programs. Under mpirun (seen in the environment that MPI
 * launchers set) MPI is initialized and the programs run on MPI_COMM_WORLD,
 * rank 0 printing; started directly they run as one process without MPI, as
 * before. Without MPI built in, always one process. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>

#include "tpmg-app-common.h"

#ifdef TPMG_APP_MPI
#include <mpi.h>

static MPI_Comm world;
static int initialized;

static void finalize(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
#endif

static int rank, size = 1;

void app_mpi_init(int *argc, char ***argv) {
#ifdef TPMG_APP_MPI
  const char *launched[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"};
  int under_mpirun = 0;
  for (size_t i = 0; i < sizeof launched / sizeof launched[0]; ++i)
    under_mpirun |= getenv(launched[i]) != NULL;
  if (!under_mpirun) return;
  MPI_Init(argc, argv);
  atexit(finalize); /* also after a bad option, which every rank sees alike */
  initialized = 1;
  world = MPI_COMM_WORLD;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  /* rank 0 prints the results; errors go to stderr on every rank */
  if (rank != 0 && !freopen("/dev/null", "w", stdout)) {
    fprintf(stderr, "%s: rank %d cannot silence its output\n", app_program(), rank);
  }
#else
  (void)argc;
  (void)argv;
#endif
}

const void *app_mpi_comm(void) {
#ifdef TPMG_APP_MPI
  return initialized ? &world : NULL;
#else
  return NULL;
#endif
}

int app_mpi_rank(void) { return rank; }

int app_mpi_size(void) { return size; }

double app_mpi_sum(double value) {
#ifdef TPMG_APP_MPI
  if (initialized) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, world);
#endif
  return value;
}

double app_mpi_max(double value) {
#ifdef TPMG_APP_MPI
  if (initialized) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, world);
#endif
  return value;
}
