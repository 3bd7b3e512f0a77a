# Setup files through tpmg-poisson under mpiexec (label mpi): run as
#   cmake -DPROGRAM=... -DMPIEXEC=... -DNUMPROC_FLAG=... -DFLAGS=a|b -DARGS=a|b -DNAME=... -P mpi-setup.cmake
# it writes the problem of ARGS ('|'-separated) with --write-setup from one
# process (started directly) and from 3 ranks, checks that the two files are
# the same bytes, then solves the 3 ranks' file with 2 ranks (--setup), and
# checks that the three runs report the same problem, iterations and L2 error
# (the residual norms differ in the last digits: the order of the sums does).
# Files NAME-one.tpmg and NAME-three.tpmg in the working directory, removed.

string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" flags "${FLAGS}")
set(one "${NAME}-one.tpmg")
set(three "${NAME}-three.tpmg")

function(fail message)
  file(REMOVE "${one}" "${three}")
  message(FATAL_ERROR "${message}")
endfunction()

# Run the program on `ranks` ranks (0: directly, one process) with the extra
# arguments; the last stdout line, a JSON object, into out_var.
function(run_json out_var ranks)
  if(ranks EQUAL 0)
    set(command "${PROGRAM}")
  else()
    set(command "${MPIEXEC}" ${NUMPROC_FLAG} ${ranks} ${flags} "${PROGRAM}")
  endif()
  execute_process(COMMAND ${command} ${ARGN} --json OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  string(REPLACE ";" " " shown "${command};${ARGN}")
  if(NOT rc STREQUAL "0")
    fail("${shown}: expected exit status 0, got '${rc}'\nstderr: ${err}")
  endif()
  string(REGEX REPLACE "\n+$" "" text "${out}")
  string(REGEX MATCH "[^\n]*$" line "${text}")
  string(JSON type ERROR_VARIABLE json_error TYPE "${line}")
  if(json_error OR NOT type STREQUAL "OBJECT")
    fail("${shown}: expected the last stdout line to be a JSON object, got '${line}'")
  endif()
  string(JSON converged GET "${line}" converged)
  string(JSON got_ranks GET "${line}" ranks)
  set(want_ranks ${ranks})
  if(ranks EQUAL 0)
    set(want_ranks 1)
  endif()
  if(NOT converged OR NOT got_ranks EQUAL want_ranks)
    fail("${shown}: expected a converged solve on ${want_ranks} ranks, got ${line}")
  endif()
  set(${out_var} "${line}" PARENT_SCOPE)
endfunction()

file(REMOVE "${one}" "${three}")
run_json(written_one 0 ${args} --write-setup "${one}")
run_json(written_three 3 ${args} --write-setup "${three}")
foreach(file "${one}" "${three}")
  if(NOT EXISTS "${file}")
    fail("expected --write-setup to create ${file}")
  endif()
endforeach()
file(SHA256 "${one}" hash_one)
file(SHA256 "${three}" hash_three)
file(SIZE "${one}" size_one)
file(SIZE "${three}" size_three)
if(NOT hash_one STREQUAL hash_three)
  fail("the setup file written by 3 ranks (${size_three} bytes) is not the one written by one "
       "process (${size_one} bytes)")
endif()
run_json(read_two 2 --setup "${three}")

foreach(key dim degree level cells box n_dofs rhs iterations l2_error)
  string(JSON want GET "${written_one}" ${key})
  foreach(run written_three read_two)
    string(JSON got GET "${${run}}" ${key})
    if(NOT got STREQUAL want)
      fail("expected ${key} ${want} as on one process, got ${got} (${run})\none process: "
           "${written_one}\n${run}: ${${run}}")
    endif()
  endforeach()
endforeach()
file(REMOVE "${one}" "${three}")
