# Tests of the deal.II bridge (label `bridge`): one program per object group
# in tests/bridge/, each silent on success. Included from tests/CMakeLists.txt
# where the bridge is built. deal.II translation units compile slowly, so the
# checks are grouped into few programs.
if(NOT TARGET tpmg::dealii)
  return()
endif()

# t903-bridge-trilinos checks TrilinosCoarseSolver, or where the bridge has no
# Trilinos (TPMG_HAVE_TRILINOS off) that the class refuses.
foreach(name t900-bridge-numbering t901-bridge-operator t902-bridge-multigrid
        t903-bridge-trilinos)
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
