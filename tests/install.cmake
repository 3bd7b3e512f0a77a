# The README's C example built by a separate CMake project (tests/install/)
# the two ways a user's project takes tpmg (label install):
#   install-readme-package     `cmake --install` of this build into a scratch
#                              prefix, then find_package(tpmg 0.1 REQUIRED);
#   install-readme-subproject  add_subdirectory() of this source tree, in a
#                              build type of its own (Debug), CPU backend only.
# tests/install/run.cmake extracts the example from README.md at test time, so
# the README and the test cannot drift, and checks the line it prints.
foreach(mode package subproject)
  add_test(NAME install-readme-${mode}
           COMMAND ${CMAKE_COMMAND} -DMODE=${mode} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DBUILD_DIR=${PROJECT_BINARY_DIR}
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install-readme-${mode}
                   -DC_COMPILER=${CMAKE_C_COMPILER} -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/install/run.cmake)
  set_tests_properties(install-readme-${mode} PROPERTIES LABELS install TIMEOUT 900
                       ENVIRONMENT OMP_WAIT_POLICY=PASSIVE)
endforeach()
