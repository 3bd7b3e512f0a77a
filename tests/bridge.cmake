# Tests of the deal.II bridge (label `bridge`): one program per object group
# in tests/bridge/, each silent on success. Included from tests/CMakeLists.txt
# where the bridge is built. deal.II translation units compile slowly, so the
# checks are grouped into few programs.
if(NOT TARGET tpmg::dealii)
  return()
endif()

# t904-bridge-trilinos checks TrilinosCoarseSolver, or where the bridge has no
# Trilinos (TPMG_HAVE_TRILINOS off) that the class refuses.
foreach(name t900-bridge-numbering t901-bridge-operator t902-bridge-multigrid
        t904-bridge-trilinos)
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/bridge/${name}.cc)
  target_link_libraries(${name} PRIVATE tpmg::dealii)
  set(args)
  if(name STREQUAL "t902-bridge-multigrid")
    # exports a setup and solves it with tpmg-poisson --setup
    set(args $<TARGET_FILE:tpmg-poisson>)
  endif()
  add_test(NAME ${name} COMMAND ${name} ${args})
  set_tests_properties(${name} PROPERTIES LABELS bridge TIMEOUT 600
                       ENVIRONMENT "OMP_WAIT_POLICY=PASSIVE;OMP_NUM_THREADS=1")
endforeach()

# The bridge on P ranks (labels bridge and mpi), where tpmg is built with MPI:
# t903 (tpmg's slabs) and t905 (p4est's partition) under mpiexec with 1 to 4
# ranks (oversubscribed on small machines), against the one-rank solve every
# rank repeats on MPI_COMM_SELF.
if(TPMG_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  set(tpmg_bridge_mpiexec_flags ${MPIEXEC_PREFLAGS})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version
                  OUTPUT_VARIABLE tpmg_bridge_mpiexec_version ERROR_QUIET)
  if(tpmg_bridge_mpiexec_version MATCHES "Open MPI|OpenRTE")
    list(APPEND tpmg_bridge_mpiexec_flags --allow-run-as-root --oversubscribe)
  endif()
  # t905: p4est's own partition (hyper_cube, 3 x 2 x 5), which the bridge
  # redistributes to tpmg's slabs
  foreach(name t903-bridge-mpi t905-bridge-partition)
    add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/bridge/${name}.cc)
    target_link_libraries(${name} PRIVATE tpmg::dealii)
    foreach(ranks 1 2 3 4)
      add_test(NAME ${name}-np${ranks}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks}
                       ${tpmg_bridge_mpiexec_flags} $<TARGET_FILE:${name}>)
      set_tests_properties(${name}-np${ranks} PROPERTIES LABELS "bridge;mpi"
                           TIMEOUT 600 PROCESSORS ${ranks}
                           ENVIRONMENT "OMP_WAIT_POLICY=PASSIVE;OMP_NUM_THREADS=1")
    endforeach()
  endforeach()

  # step-37's coefficient (Hierarchy::set_coefficient) on 1 and 2 ranks: the
  # operator against deal.II's, the solve against the one-rank solve
  add_executable(t906-bridge-coefficient
                 ${CMAKE_CURRENT_SOURCE_DIR}/bridge/t906-bridge-coefficient.cc)
  target_link_libraries(t906-bridge-coefficient PRIVATE tpmg::dealii)
  foreach(ranks 1 2 3)
    add_test(NAME t906-bridge-coefficient-np${ranks}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks}
                     ${tpmg_bridge_mpiexec_flags}
                     $<TARGET_FILE:t906-bridge-coefficient>)
    set_tests_properties(t906-bridge-coefficient-np${ranks} PROPERTIES
                         LABELS "bridge;mpi" TIMEOUT 600 PROCESSORS ${ranks}
                         ENVIRONMENT "OMP_WAIT_POLICY=PASSIVE;OMP_NUM_THREADS=1")
  endforeach()
endif()
