/* The MPI tests' reference: every rank computes the one-process result on a
 * context of its own (the reference), and compares the part it owns of the
 * distributed result with it. These move whole-level host vectors to a rank's
 * box and back. */
#ifndef TPMG_TESTS_MPI_REFERENCE_H
#define TPMG_TESTS_MPI_REFERENCE_H

#include <mpi.h>

#include "reference.h"

/* A rank's vector (host, precision p) from the whole level's values: the
 * owned planes copied, the ghost planes NaN, so that a call reading a ghost
 * it did not receive shows it. */
void mref_local(const tpmg_level_layout *layout, tpmg_precision p, const double *whole,
                void *local);
/* max over owned entries |local - whole| / max |whole| (local host in
 * precision p); NaN if an owned entry is NaN. */
double mref_owned_difference(const tpmg_level_layout *layout, tpmg_precision p, const void *local,
                             const double *whole);
/* The backend of the tests' distributed contexts: the environment variable
 * TPMG_TEST_MPI_BACKEND (the gpu-mpi tests set "cuda"), else "cpu". */
const char *mref_backend(void);
/* A distributed context of mref_backend() with n_threads on MPI_COMM_WORLD,
 * whole_level_dofs from the environment variable TPMG_TEST_WHOLE_LEVEL_DOFS
 * (default 0: every level split that can be); every rank exits 77 (SKIPPED)
 * where a rank lacks the backend. */
tpmg_context *mref_context_create(int n_threads);
/* A context of this process alone, of mref_backend(), on the GPU that the
 * rank's distributed context uses. */
tpmg_context *mref_one_context_create(int n_threads);
/* 0 if every rank passed every check, else 1 (summary on rank 0's stderr). */
int mref_exit_code(const char *test_name);

#endif
