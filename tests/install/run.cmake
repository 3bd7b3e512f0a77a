# Test driver, run as cmake -P (see tests/install.cmake): MODE (package or
# subproject), SOURCE_DIR (tpmg's source), BUILD_DIR (a tpmg build, for
# package), WORK_DIR (scratch, emptied first), C_COMPILER, CXX_COMPILER.
# Extracts the first ```c block of README.md, builds it by tests/install/ and
# runs it; fails with what went wrong unless it prints one line
# "N iterations, residual reduction R, L2 error E" with R <= 1e-9 and
# E < 1e-6 (the README's problem: 2D Q4 on level 6, the sine solution).

function(fail message)
  message(FATAL_ERROR "install-readme-${MODE}: ${message}")
endfunction()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    fail("${what} failed (status ${status}):\n${ARGN}\n${out}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# the example: the lines between "```c" and the next "```" of README.md
file(READ ${SOURCE_DIR}/README.md readme)
string(FIND "${readme}" "\n```c\n" begin)
if(begin LESS 0)
  fail("README.md has no ```c block")
endif()
math(EXPR begin "${begin} + 6")
string(SUBSTRING "${readme}" ${begin} -1 rest)
string(FIND "${rest}" "\n```" end)
if(end LESS 0)
  fail("README.md: the ```c block does not end")
endif()
math(EXPR end "${end} + 1")
string(SUBSTRING "${rest}" 0 ${end} example_code)
file(WRITE ${WORK_DIR}/readme-example.c "${example_code}")

set(configure ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install -B ${WORK_DIR}/build
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DEXAMPLE_SOURCE=${WORK_DIR}/readme-example.c)
if(MODE STREQUAL "package")
  run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  if(NOT EXISTS ${WORK_DIR}/prefix/include/tpmg.h)
    fail("cmake --install put no include/tpmg.h under ${WORK_DIR}/prefix")
  endif()
  run("configure" ${configure} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
elseif(MODE STREQUAL "subproject")
  # the CPU backend only; first without a build type, which tpmg must leave
  # empty (tests/install/CMakeLists.txt checks), then the project's own, Debug
  set(configure ${configure} -DTPMG_SOURCE_DIR=${SOURCE_DIR} -DTPMG_ENABLE_CUDA=OFF
      -DTPMG_ENABLE_BRIDGE=OFF)
  run("configure without a build type" ${configure})
  run("configure" ${configure} -DCMAKE_BUILD_TYPE=Debug)
  file(STRINGS ${WORK_DIR}/build/CMakeCache.txt cached_type REGEX "^CMAKE_BUILD_TYPE:")
  if(NOT cached_type MATCHES "=Debug$")
    fail("the build type in the cache is '${cached_type}', expected Debug")
  endif()
else()
  fail("MODE must be package or subproject, not '${MODE}'")
endif()
run("build" ${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2 --target readme-example)

find_program(example_program readme-example PATHS ${WORK_DIR}/build ${WORK_DIR}/build/bin
             NO_DEFAULT_PATH NO_CACHE)
if(NOT example_program)
  fail("no readme-example built under ${WORK_DIR}/build")
endif()
run("the example" ${example_program})
string(STRIP "${run_output}" line)
set(number "[0-9]+(\\.[0-9]+)?(e[-+][0-9]+)?")
if(NOT line MATCHES "^([0-9]+) iterations, residual reduction (${number}), L2 error (${number})$")
  fail("expected one line 'N iterations, residual reduction R, L2 error E', got:\n${run_output}")
endif()
set(reduction ${CMAKE_MATCH_2})
set(error ${CMAKE_MATCH_5})
# compare as numbers: the exponents (the printed form is %.1e)
string(REGEX MATCH "e([-+][0-9]+)$" _ "${reduction}")
set(reduction_exponent ${CMAKE_MATCH_1})
string(REGEX MATCH "e([-+][0-9]+)$" _ "${error}")
set(error_exponent ${CMAKE_MATCH_1})
if(reduction_exponent GREATER -10 AND NOT reduction STREQUAL "1.0e-09")
  fail("residual reduction ${reduction}, expected <= 1e-9: ${line}")
endif()
if(error_exponent GREATER -7)
  fail("L2 error ${error}, expected < 1e-6: ${line}")
endif()
