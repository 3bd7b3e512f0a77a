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
/* A distributed context with n_threads on MPI_COMM_WORLD ("cpu"). */
tpmg_context *mref_context_create(int n_threads);
/* 0 if every rank passed every check, else 1 (summary on rank 0's stderr). */
int mref_exit_code(const char *test_name);

#endif
