# The MPI tests (label mpi), where tpmg is built with MPI: each runs under
# mpiexec with 2, 3 and 4 ranks (oversubscribed on small machines) and
# compares what the ranks own with the one-process result every rank computes
# itself. One thread per rank, passive OpenMP waiting: ranks share the cores.
add_library(tpmg_test_mpi STATIC mpi-reference.c)
target_link_libraries(tpmg_test_mpi PUBLIC tpmg_test_reference MPI::MPI_C)
target_compile_options(tpmg_test_mpi PRIVATE -Wall -Wextra)

# Open MPI refuses to start as root and more ranks than cores unless told
set(tpmg_mpiexec_flags ${MPIEXEC_PREFLAGS})
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE tpmg_mpiexec_version
                ERROR_QUIET)
if(tpmg_mpiexec_version MATCHES "Open MPI|OpenRTE")
  list(APPEND tpmg_mpiexec_flags --allow-run-as-root --oversubscribe)
endif()

# tpmg_mpi_test(NAME RANKS...): NAME.c run with each rank count, NAME-npP
function(tpmg_mpi_test name)
  add_executable(${name} ${name}.c)
  target_link_libraries(${name} PRIVATE tpmg_test_mpi tpmg m)
  target_compile_options(${name} PRIVATE -Wall -Wextra)
  foreach(ranks ${ARGN})
    add_test(NAME ${name}-np${ranks}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${tpmg_mpiexec_flags}
                     $<TARGET_FILE:${name}>)
    set_tests_properties(${name}-np${ranks} PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS ${ranks}
                         ENVIRONMENT "OMP_WAIT_POLICY=PASSIVE;OMP_NUM_THREADS=1")
  endforeach()
endfunction()

tpmg_mpi_test(t750-mpi-objects 1 2 3 4)
tpmg_mpi_test(t751-mpi-solvers 2 3 4)
tpmg_mpi_test(t752-mpi-errors 1 2 3 4)
