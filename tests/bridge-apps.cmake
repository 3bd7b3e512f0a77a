# Tests of the deal.II programs dealii-poisson, dealii-compare and dealii-step37 (ctest label
# `bridge`), added where the bridge is built.
#
# Like cli.cmake this file has two roles. Included from tests/CMakeLists.txt it
# adds the tests. Run as `cmake -DMODE=... -P bridge-apps.cmake` it is the test
# driver: it runs the programs and checks their exit status and output.
#
# Driver variables: PROGRAM, ARGS ('|'-separated), MODE, and
#   MODE usage  exit status 2, exactly one line on stderr matching EXPECT, no stdout
#   MODE json   exit status 0; the last stdout line is a JSON object for which every
#               CHECKS entry holds ('|'-separated)
#   MODE pair   MODE json for PROGRAM ARGS, then for PROGRAM2 ARGS2; the fields SAME
#               are equal in the two objects, the fields CLOSE agree to a
#               relative 1e-6 and the integer fields NEAR differ by at most 1
#   MODE file   MODE json, and FILE then exists and contains EXPECT
#   MODE csv    MODE json with --csv CSV on a removed CSV; the file then has a
#               header and ROWS rows of its width
#   MODE cuda   exit status 2 naming --backend cuda (no usable GPU), or MODE json
#               (a GPU is present)
#   MODE ranks  a nonzero exit status and RANKS lines on stderr matching EXPECT (a
#               refusal that every rank of an mpiexec run reports; where the
#               launcher split a line with another rank's, RANKS PREFIX prefixes
#               ("<program>: ") and at least one whole matching line)
#
# A check is "key op value": op one of == != < <= > >= ~= (~=: relative 1e-6);
# key a top-level field, or "method.field" for the entry of the "methods" array
# of dealii-compare whose "method" is `method`; value a number, true, false,
# null, a word, or another key, optionally followed by +n or -n.

if(CMAKE_SCRIPT_MODE_FILE)
  function(fail message)
    string(REPLACE "|" " " command "${PROGRAM} ${ARGS}")
    message(FATAL_ERROR "${command}\n${message}")
  endfunction()

  # Run `program` with the '|'-separated `arg_text` and the extra arguments:
  # sets out, err and rc in the caller.
  macro(run_program program arg_text)
    string(REPLACE "|" ";" run_args "${arg_text}")
    execute_process(COMMAND "${program}" ${run_args} ${ARGN}
                    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  endmacro()

  # Exit status 0 and a JSON object as the last stdout line, into out_var.
  function(json_output out_var)
    if(NOT rc STREQUAL "0")
      fail("expected exit status 0, got '${rc}'\nstdout: ${out}\nstderr: ${err}")
    endif()
    string(REGEX REPLACE "\n+$" "" text "${out}")
    string(REGEX MATCH "[^\n]*$" line "${text}")
    string(JSON type ERROR_VARIABLE json_error TYPE "${line}")
    if(json_error OR NOT type STREQUAL "OBJECT")
      fail("expected the last stdout line to be a JSON object, got: '${line}'")
    endif()
    set(${out_var} "${line}" PARENT_SCOPE)
  endfunction()

  # The value of `key` ("field" or "method.field") as text: numbers as printed,
  # booleans as true/false, null as null. Sets <out_var> and <out_var>_found.
  function(json_value json key out_var)
    set(path "${key}")
    if(key MATCHES "^([a-z0-9-]+)\\.([a-z_0-9]+)$")
      set(method "${CMAKE_MATCH_1}")
      set(field "${CMAKE_MATCH_2}")
      string(JSON n ERROR_VARIABLE json_error LENGTH "${json}" methods)
      set(path "")
      if(NOT json_error AND n GREATER 0)
        math(EXPR last "${n} - 1")
        foreach(i RANGE ${last})
          string(JSON name GET "${json}" methods ${i} method)
          if(name STREQUAL method)
            set(path methods ${i} ${field})
          endif()
        endforeach()
      endif()
    endif()
    set(${out_var}_found FALSE PARENT_SCOPE)
    if(NOT path)
      return()
    endif()
    string(JSON type ERROR_VARIABLE json_error TYPE "${json}" ${path})
    if(json_error)
      return()
    endif()
    if(type STREQUAL "NULL")
      set(value null)
    else()
      string(JSON value GET "${json}" ${path})
    endif()
    if(type STREQUAL "BOOLEAN")
      if(value)
        set(value true)
      else()
        set(value false)
      endif()
    endif()
    set(${out_var} "${value}" PARENT_SCOPE)
    set(${out_var}_found TRUE PARENT_SCOPE)
  endfunction()

  # A nonnegative decimal times `factor`, as text that if(LESS) reads: CMake has
  # no floating-point arithmetic, so the mantissas are multiplied as integers.
  function(scale value factor out_var)
    foreach(x value factor)
      if(NOT "${${x}}" MATCHES "^([0-9]*)\\.?([0-9]*)([eE]([-+]?[0-9]+))?$")
        fail("not a nonnegative number: '${${x}}'")
      endif()
      set(exponent 0)
      if(CMAKE_MATCH_4)
        set(exponent "${CMAKE_MATCH_4}")
      endif()
      string(LENGTH "${CMAKE_MATCH_2}" n_fraction)
      string(REGEX REPLACE "^0+" "" mantissa "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
      if(mantissa STREQUAL "")
        set(mantissa 0)
      endif()
      # string(JSON) prints 17 digits; 12 keep the product within 64 bits
      string(LENGTH "${mantissa}" n_digits)
      if(n_digits GREATER 12)
        math(EXPR n_fraction "${n_fraction} - (${n_digits} - 12)")
        string(SUBSTRING "${mantissa}" 0 12 mantissa)
      endif()
      math(EXPR ${x}_exponent "${exponent} - ${n_fraction}")
      set(${x}_mantissa "${mantissa}")
    endforeach()
    math(EXPR mantissa "${value_mantissa} * ${factor_mantissa}")
    math(EXPR exponent "${value_exponent} + ${factor_exponent}")
    set(${out_var} "${mantissa}e${exponent}" PARENT_SCOPE)
  endfunction()

  # Whether two nonnegative numbers agree to a relative 1e-6.
  function(close a b out_var)
    scale("${a}" "1.000001" a_high)
    scale("${b}" "1.000001" b_high)
    if(a GREATER b_high OR b GREATER a_high)
      set(${out_var} FALSE PARENT_SCOPE)
    else()
      set(${out_var} TRUE PARENT_SCOPE)
    endif()
  endfunction()

  # Check "key op value" against a JSON object.
  function(check_json json check)
    if(NOT check MATCHES "^([a-z0-9_.-]+) *(==|!=|<=|>=|<|>|~=) *(.+)$")
      fail("bad check '${check}'")
    endif()
    set(key "${CMAKE_MATCH_1}")
    set(op "${CMAKE_MATCH_2}")
    set(want "${CMAKE_MATCH_3}")
    json_value("${json}" "${key}" got)
    if(NOT got_found)
      fail("JSON has no field '${key}': ${json}")
    endif()
    # the value may be another key, with an integer offset
    if(want MATCHES "^([a-z][a-z0-9_.-]*[a-z_])([-+][0-9]+)?$")
      set(offset "${CMAKE_MATCH_2}")
      json_value("${json}" "${CMAKE_MATCH_1}" other)
      if(other_found)
        set(want "${other}")
        if(offset)
          math(EXPR want "${want} ${offset}")
        endif()
      endif()
    endif()
    set(ok FALSE)
    if(got STREQUAL "null" OR want MATCHES "^(true|false|null)$" OR
       NOT got MATCHES "^[-+0-9.eE]+$" OR NOT want MATCHES "^[-+0-9.eE]+$")
      if(op STREQUAL "==" AND got STREQUAL want)
        set(ok TRUE)
      elseif(op STREQUAL "!=" AND NOT got STREQUAL want)
        set(ok TRUE)
      endif()
    elseif(op STREQUAL "~=")
      close("${got}" "${want}" ok)
    elseif(op STREQUAL "==" AND got EQUAL want)
      set(ok TRUE)
    elseif(op STREQUAL "!=" AND NOT got EQUAL want)
      set(ok TRUE)
    elseif(op STREQUAL "<" AND got LESS want)
      set(ok TRUE)
    elseif(op STREQUAL "<=" AND got LESS_EQUAL want)
      set(ok TRUE)
    elseif(op STREQUAL ">" AND got GREATER want)
      set(ok TRUE)
    elseif(op STREQUAL ">=" AND got GREATER_EQUAL want)
      set(ok TRUE)
    endif()
    if(NOT ok)
      fail("expected ${check} (${want}), got ${key} = ${got}\nJSON: ${json}")
    endif()
  endfunction()

  function(check_all json)
    string(REPLACE "|" ";" checks "${CHECKS}")
    foreach(check IN LISTS checks)
      check_json("${json}" "${check}")
    endforeach()
  endfunction()

  if(MODE STREQUAL "usage")
    run_program("${PROGRAM}" "${ARGS}")
    if(NOT rc STREQUAL "2")
      fail("expected exit status 2, got '${rc}'\nstderr: ${err}")
    endif()
    string(REGEX REPLACE "\n$" "" line "${err}")
    if(line STREQUAL "" OR line MATCHES "\n")
      fail("expected exactly one line on stderr, got:\n${err}")
    endif()
    if(NOT line MATCHES "${EXPECT}")
      fail("expected stderr to match '${EXPECT}', got: ${line}")
    endif()
    if(NOT out STREQUAL "")
      fail("expected no stdout on a usage error, got:\n${out}")
    endif()
  elseif(MODE STREQUAL "json" OR MODE STREQUAL "file" OR MODE STREQUAL "csv")
    if(MODE STREQUAL "file")
      file(REMOVE "${FILE}")
    elseif(MODE STREQUAL "csv")
      file(REMOVE "${CSV}")
      set(ARGS "${ARGS}|--csv|${CSV}")
    endif()
    run_program("${PROGRAM}" "${ARGS}")
    json_output(json)
    check_all("${json}")
    if(MODE STREQUAL "file")
      if(NOT EXISTS "${FILE}")
        fail("expected the program to write ${FILE}")
      endif()
      file(READ "${FILE}" head LIMIT 4096)
      if(NOT head MATCHES "${EXPECT}")
        fail("expected ${FILE} to contain '${EXPECT}', it begins with:\n${head}")
      endif()
      file(REMOVE "${FILE}")
    elseif(MODE STREQUAL "csv")
      file(STRINGS "${CSV}" lines)
      list(LENGTH lines n_lines)
      math(EXPR want_lines "${ROWS} + 1")
      if(NOT n_lines EQUAL want_lines)
        fail("expected ${want_lines} lines in ${CSV}, got ${n_lines}")
      endif()
      list(GET lines 0 header)
      if(NOT header MATCHES "^dim,degree,level,n_dofs,")
        fail("unexpected CSV header: ${header}")
      endif()
      string(REGEX REPLACE "[^,]" "" header_commas "${header}")
      foreach(line IN LISTS lines)
        string(REGEX REPLACE "[^,]" "" commas "${line}")
        if(NOT commas STREQUAL header_commas)
          fail("CSV row and header differ in width:\n${header}\n${line}")
        endif()
      endforeach()
      file(REMOVE "${CSV}")
    endif()
  elseif(MODE STREQUAL "cuda")
    run_program("${PROGRAM}" "${ARGS}")
    if(rc STREQUAL "2")
      if(NOT err MATCHES "--backend cuda: backend not available")
        fail("expected a message naming --backend cuda, got: ${err}")
      endif()
    else()
      json_output(json)
      check_all("${json}")
    endif()
  elseif(MODE STREQUAL "ranks")
    run_program("${PROGRAM}" "${ARGS}")
    if(rc STREQUAL "0")
      fail("expected a nonzero exit status\nstdout: ${out}\nstderr: ${err}")
    endif()
    # semicolons would split the lines as a CMake list
    string(REPLACE ";" "," text "${err}")
    string(REGEX REPLACE "\n$" "" text "${text}")
    string(REPLACE "\n" ";" lines "${text}")
    set(n_matching 0)
    foreach(line IN LISTS lines)
      if(line MATCHES "${EXPECT}")
        math(EXPR n_matching "${n_matching} + 1")
      endif()
    endforeach()
    # Open MPI 5's launcher forwards a rank's long line in pieces, between which
    # another rank's line can land (seen in CI with deal.II 9.6.2's root): then
    # every rank's line still begins with the program's prefix, which its one
    # write puts in the first piece, and at least one line is whole
    string(REGEX MATCHALL "${PREFIX}" prefixes "${err}")
    list(LENGTH prefixes n_prefixes)
    if(NOT n_matching EQUAL RANKS AND NOT (n_prefixes EQUAL RANKS AND n_matching GREATER 0))
      fail("expected ${RANKS} lines on stderr matching '${EXPECT}' (or ${RANKS} lines begun "
           "and one whole), got ${n_matching} (${n_prefixes} begun):\n${err}")
    endif()
  elseif(MODE STREQUAL "pair")
    run_program("${PROGRAM}" "${ARGS}")
    json_output(first)
    check_all("${first}")
    set(PROGRAM "${PROGRAM2}")
    set(ARGS "${ARGS2}")
    run_program("${PROGRAM}" "${ARGS}")
    json_output(second)
    string(REPLACE "|" ";" same "${SAME}")
    string(REPLACE "|" ";" close_fields "${CLOSE}")
    string(REPLACE "|" ";" near_fields "${NEAR}")
    foreach(key IN LISTS near_fields)
      json_value("${first}" "${key}" a)
      json_value("${second}" "${key}" b)
      if(NOT a_found OR NOT b_found OR NOT a MATCHES "^[0-9]+$" OR NOT b MATCHES "^[0-9]+$")
        fail("expected both programs to report the integer '${key}'\nfirst: ${first}\nsecond: ${second}")
      endif()
      math(EXPR difference "${a} - ${b}")
      if(difference GREATER 1 OR difference LESS -1)
        fail("expected ${key} within one of each other, got ${a} and ${b}\n"
             "first: ${first}\nsecond: ${second}")
      endif()
    endforeach()
    foreach(key IN LISTS same close_fields)
      json_value("${first}" "${key}" a)
      json_value("${second}" "${key}" b)
      if(NOT a_found OR NOT b_found)
        fail("expected both programs to report '${key}'\nfirst: ${first}\nsecond: ${second}")
      endif()
      list(FIND same "${key}" same_index)
      if(NOT same_index EQUAL -1)
        set(ok FALSE)
        if(a STREQUAL b)
          set(ok TRUE)
        endif()
      else()
        close("${a}" "${b}" ok)
      endif()
      if(NOT ok)
        fail("expected the same ${key} from both programs, got ${a} and ${b}\n"
             "first: ${first}\nsecond: ${second}")
      endif()
    endforeach()
  else()
    fail("unknown MODE '${MODE}'")
  endif()

else()
  set(tpmg_bridge_apps_driver "${CMAKE_CURRENT_LIST_FILE}")

  # tpmg_bridge_app_test(name program MODE mode ARGS a b ... [EXPECT re] [CHECKS c ...]
  #                      [PROGRAM2 p] [ARGS2 a ...] [SAME k ...] [CLOSE k ...] [NEAR k ...]
  #                      [FILE f] [CSV f] [ROWS n])
  function(tpmg_bridge_app_test name program)
    cmake_parse_arguments(t "" "MODE;EXPECT;PROGRAM2;FILE;CSV;ROWS" "ARGS;ARGS2;CHECKS;SAME;CLOSE;NEAR"
                          ${ARGN})
    foreach(list ARGS ARGS2 CHECKS SAME CLOSE NEAR)
      string(REPLACE ";" "|" ${list} "${t_${list}}")
    endforeach()
    set(program2 "")
    if(t_PROGRAM2)
      set(program2 "$<TARGET_FILE:${t_PROGRAM2}>")
    endif()
    add_test(NAME bridge-${name}
             COMMAND ${CMAKE_COMMAND} "-DPROGRAM=$<TARGET_FILE:${program}>" "-DMODE=${t_MODE}"
                     "-DARGS=${ARGS}" "-DEXPECT=${t_EXPECT}" "-DCHECKS=${CHECKS}"
                     "-DPROGRAM2=${program2}" "-DARGS2=${ARGS2}" "-DSAME=${SAME}"
                     "-DCLOSE=${CLOSE}" "-DNEAR=${NEAR}" "-DFILE=${t_FILE}" "-DCSV=${t_CSV}" "-DROWS=${t_ROWS}"
                     -P "${tpmg_bridge_apps_driver}")
    # One thread unless a test asks for more (ctest runs tests side by side);
    # passive OpenMP waiting, since deal.II's TBB threads share the cores.
    set_tests_properties(bridge-${name} PROPERTIES LABELS bridge TIMEOUT 600
                         ENVIRONMENT "OMP_NUM_THREADS=1;OMP_WAIT_POLICY=PASSIVE")
  endfunction()

  set(out ${CMAKE_CURRENT_BINARY_DIR})

  # Bad options: exit status 2 and one line naming the option.
  foreach(program dealii-poisson dealii-compare)
    tpmg_bridge_app_test(${program}-unknown-option ${program} MODE usage
                         EXPECT "^${program}: unknown option '--frobnicate'" ARGS --frobnicate)
    tpmg_bridge_app_test(${program}-degree-9-3d ${program} MODE usage
                         EXPECT "--degree 9: must be 1..8 for dim 3" ARGS --degree 9)
    tpmg_bridge_app_test(${program}-missing-value ${program} MODE usage
                         EXPECT "--level needs a value" ARGS --level)
    # the app layer's ranges, those of the library (tpmg.h)
    tpmg_bridge_app_test(${program}-threads-huge ${program} MODE usage
                         EXPECT "--threads 100000: expected an integer in 1..1024"
                         ARGS --threads 100000)
    tpmg_bridge_app_test(${program}-tol-1 ${program} MODE usage
                         EXPECT "--tol 1: expected a number in" ARGS --tol 1)
    tpmg_bridge_app_test(${program}-restart-1001 ${program} MODE usage
                         EXPECT "--restart 1001: expected an integer in 1..1000" ARGS --restart 1001)
    tpmg_bridge_app_test(${program}-solver-fmg ${program} MODE usage
                         EXPECT "--solver fmg: expected one of gmres, cg" ARGS --solver fmg)
    tpmg_bridge_app_test(${program}-box-huge ${program} MODE usage
                         EXPECT "--box 0,1e300,0,1: coordinates beyond"
                         ARGS --dim 2 --box 0,1e300,0,1)
    tpmg_bridge_app_test(${program}-dim-twice ${program} MODE usage
                         EXPECT "--dim given twice" ARGS --dim 2 --dim 3)
  endforeach()
  # tpmg-poisson's --precision: dealii-poisson has none; dealii-compare has
  # double and mixed (float levels, as step-37), not float (its Krylov
  # methods stay in double)
  tpmg_bridge_app_test(dealii-poisson-precision dealii-poisson MODE usage
                       EXPECT "unknown option '--precision'" ARGS --precision float)
  tpmg_bridge_app_test(dealii-compare-precision dealii-compare MODE usage
                       EXPECT "--precision float: expected one of double, mixed"
                       ARGS --precision float)
  tpmg_bridge_app_test(dealii-poisson-rhs-ones dealii-poisson MODE usage
                       EXPECT "--rhs ones: expected one of one, sine" ARGS --rhs ones)
  tpmg_bridge_app_test(dealii-compare-rhs dealii-compare MODE usage
                       EXPECT "unknown option '--rhs'" ARGS --rhs sine)
  tpmg_bridge_app_test(dealii-poisson-use-foo dealii-poisson MODE usage
                       EXPECT "--use foo: expected one of multigrid" ARGS --use foo)
  tpmg_bridge_app_test(dealii-poisson-box-count dealii-poisson MODE usage
                       EXPECT "--box 0,1,0,1: needs 6 values for dim 3" ARGS --box 0,1,0,1)
  tpmg_bridge_app_test(dealii-compare-methods-foo dealii-compare MODE usage
                       EXPECT "--methods tpmg-cpu,foo: unknown method 'foo'"
                       ARGS --methods tpmg-cpu,foo)
  tpmg_bridge_app_test(dealii-compare-level-and-dofs dealii-compare MODE usage
                       EXPECT "--level and --dofs exclude each other" ARGS --level 2 --dofs 1e4)

  # deal.II's multigrid with tpmg's classes. n_dofs = prod_d (n_d 2^L k + 1);
  # the L2 error bounds are 1.5 times what tpmg-poisson reports on the mesh
  # (2D Q2, h = 1/8: 2.45e-4; 3D Q3, h = 1/4: 7.59e-5).
  tpmg_bridge_app_test(dealii-poisson-2d-gmres dealii-poisson MODE json
                       ARGS --dim 2 --degree 2 --level 3 --json
                       CHECKS "n_dofs == 289" "use == multigrid" "converged == true"
                              "residual_reduction <= 1e-9" "iterations >= 1" "iterations <= 12"
                              "l2_error < 3.7e-4" "l2_error > 0")
  tpmg_bridge_app_test(dealii-poisson-3d-cg dealii-poisson MODE json
                       ARGS --dim 3 --degree 3 --level 2 --solver cg --threads 2 --json
                       CHECKS "n_dofs == 2197" "solver == cg" "threads == 2" "converged == true"
                              "residual_reduction <= 1e-9" "iterations <= 12"
                              "l2_error < 1.14e-4")
  tpmg_bridge_app_test(dealii-poisson-rhs-one dealii-poisson MODE json
                       ARGS --dim 2 --degree 3 --level 2 --rhs one --json
                       CHECKS "converged == true" "l2_error == null")

  # The same problem solved by tpmg-poisson: the same iterations, the same
  # L2 error. The shifted box has inhomogeneous boundary values, which both
  # programs lift into the right-hand side the same way.
  foreach(solver gmres cg)
    tpmg_bridge_app_test(dealii-poisson-vs-tpmg-${solver} dealii-poisson MODE pair
                         ARGS --dim 2 --degree 3 --level 3 --cells 2,1 --box 0.25,1.75,0.1,0.9
                              --solver ${solver} --json
                         CHECKS "converged == true"
                         PROGRAM2 tpmg-poisson
                         ARGS2 --dim 2 --degree 3 --level 3 --cells 2,1 --box 0.25,1.75,0.1,0.9
                               --solver ${solver} --precision double --json
                         SAME n_dofs iterations converged CLOSE l2_error)
  endforeach()
  tpmg_bridge_app_test(dealii-poisson-vs-tpmg-3d dealii-poisson MODE pair
                       ARGS --dim 3 --degree 2 --level 2 --cells 1,2,1 --box 0,1,0,2,0,1 --json
                       CHECKS "converged == true"
                       PROGRAM2 tpmg-poisson
                       ARGS2 --dim 3 --degree 2 --level 2 --cells 1,2,1 --box 0,1,0,2,0,1
                             --solver gmres --precision double --json
                       SAME n_dofs iterations CLOSE l2_error)

  # The other two ways in: GpuPreconditioner and solve_on_gpu (CPU backend
  # here, the same code path as on the GPU) give the same solve.
  foreach(use preconditioner solve)
    tpmg_bridge_app_test(dealii-poisson-use-${use} dealii-poisson MODE pair
                         ARGS --dim 2 --degree 4 --level 3 --use ${use} --json
                         CHECKS "use == ${use}" "converged == true"
                                "residual_reduction <= 1e-9"
                         PROGRAM2 dealii-poisson
                         ARGS2 --dim 2 --degree 4 --level 3 --json
                         SAME n_dofs iterations CLOSE l2_error)
  endforeach()

  # --coarse: the assembled coarse matrix solved by Trilinos (ML's AMG in CG,
  # or KLU) on coarse meshes of many cells (2D Q2 30x24: 2989 coarse DoFs,
  # 3D Q2 6x6x6: 2197, above the 2000 below which deal.II's ML setup solves
  # directly): the same solve as with tpmg's coarse solver, iterations within
  # one; the coarse times reported. Where the bridge has no Trilinos,
  # --coarse trilinos-* is a usage error.
  tpmg_bridge_app_test(dealii-poisson-coarse-foo dealii-poisson MODE usage
                       EXPECT "--coarse foo: expected one of tpmg, trilinos-amg, trilinos-direct"
                       ARGS --coarse foo)
  tpmg_bridge_app_test(dealii-poisson-coarse-tol-alone dealii-poisson MODE usage
                       EXPECT "--coarse-tol 1e-3: only with --coarse trilinos-amg"
                       ARGS --coarse-tol 1e-3)
  if(TPMG_HAVE_TRILINOS)
    tpmg_bridge_app_test(dealii-poisson-coarse-use dealii-poisson MODE usage
                         EXPECT "--coarse trilinos-amg: only with --use multigrid \\(--use solve"
                         ARGS --coarse trilinos-amg --use solve)
    tpmg_bridge_app_test(dealii-poisson-coarse-tol-1 dealii-poisson MODE usage
                         EXPECT "--coarse-tol 1: expected a number in"
                         ARGS --coarse trilinos-amg --coarse-tol 1)
    foreach(coarse trilinos-amg trilinos-direct)
      foreach(solver gmres cg)
        tpmg_bridge_app_test(dealii-poisson-coarse-${coarse}-${solver} dealii-poisson MODE pair
                             ARGS --dim 2 --degree 2 --level 2 --cells 30,24 --box 0,2,0,1.6
                                  --solver ${solver} --coarse ${coarse} --json
                             CHECKS "coarse == ${coarse}" "converged == true"
                                    "residual_reduction <= 1e-9"
                                    "coarse_solves >= iterations" "coarse_seconds > 0"
                                    "coarse_setup_seconds > 0"
                             PROGRAM2 dealii-poisson
                             ARGS2 --dim 2 --degree 2 --level 2 --cells 30,24 --box 0,2,0,1.6
                                   --solver ${solver} --json
                             SAME n_dofs NEAR iterations CLOSE l2_error)
      endforeach()
    endforeach()
    tpmg_bridge_app_test(dealii-poisson-coarse-3d dealii-poisson MODE pair
                         ARGS --dim 3 --degree 2 --level 1 --cells 6,6,6 --coarse trilinos-amg
                              --coarse-tol 1e-4 --json
                         CHECKS "coarse == trilinos-amg" "coarse_tolerance == 1e-4"
                                "converged == true" "coarse_iterations_per_cycle >= 1"
                         PROGRAM2 dealii-poisson
                         ARGS2 --dim 3 --degree 2 --level 1 --cells 6,6,6 --json
                         SAME n_dofs NEAR iterations CLOSE l2_error)
  else()
    tpmg_bridge_app_test(dealii-poisson-coarse-no-trilinos dealii-poisson MODE usage
                         EXPECT "--coarse trilinos-amg: this build has no Trilinos"
                         ARGS --coarse trilinos-amg)
  endif()

  # --backend cuda: a clear usage error without a GPU, the same solve with one.
  foreach(use multigrid preconditioner solve)
    tpmg_bridge_app_test(dealii-poisson-cuda-${use} dealii-poisson MODE cuda
                         ARGS --dim 2 --degree 3 --level 4 --backend cuda --use ${use}
                              --json
                         CHECKS "backend == cuda" "converged == true"
                                "residual_reduction <= 1e-9" "l2_error < 1e-6")
  endforeach()

  # A setup written by dealii-poisson is solved by tpmg-poisson without
  # deal.II, with the same result.
  tpmg_bridge_app_test(dealii-poisson-write-setup dealii-poisson MODE pair
                       ARGS --dim 2 --degree 3 --level 3 --box 0.5,1.5,0,1
                            --write-setup ${out}/bridge-setup.tpmg --json
                       CHECKS "converged == true"
                       PROGRAM2 tpmg-poisson
                       ARGS2 --setup ${out}/bridge-setup.tpmg --solver gmres --precision double --json
                       SAME n_dofs iterations CLOSE l2_error)

  tpmg_bridge_app_test(dealii-poisson-vtu dealii-poisson MODE file
                       ARGS --dim 2 --degree 2 --level 2 --vtu ${out}/bridge-solution.vtu --json
                       CHECKS "converged == true"
                       FILE ${out}/bridge-solution.vtu EXPECT "<VTKFile type=\"UnstructuredGrid\"")

  # The comparison on a small problem: every method converges; tpmg inside
  # deal.II's multigrid takes exactly the iterations of tpmg's own solver, and
  # with GMRES deal.II's RelaxationBlockSOR on the same vertex patches (in
  # vertex order, not in colours) is within one iteration of it; the L2
  # errors agree. (With CG, whose V-cycle is symmetric, block SOR takes up
  # to two iterations fewer here: 2D Q3, 4 against 6.)
  foreach(solver gmres cg)
    set(block_sor_checks "")
    if(solver STREQUAL "gmres")
      set(block_sor_checks "dealii-block-sor.iterations <= tpmg-cpu.iterations+1"
                           "dealii-block-sor.iterations >= tpmg-cpu.iterations-1")
    endif()
    tpmg_bridge_app_test(dealii-compare-2d-${solver} dealii-compare MODE json
                         ARGS --dim 2 --degree 3 --level 3 --solver ${solver} --threads 1 --json
                         CHECKS "n_dofs == 625" "threads == 1"
                                "dealii-chebyshev.converged == true"
                                "dealii-chebyshev.residual_reduction <= 1e-9"
                                "dealii-block-sor.converged == true"
                                "dealii-block-sor.residual_reduction <= 1e-9"
                                "tpmg-in-dealii.converged == true" "tpmg-cpu.converged == true"
                                "tpmg-in-dealii.residual_reduction <= 1e-9"
                                "tpmg-in-dealii.iterations == tpmg-cpu.iterations"
                                ${block_sor_checks}
                                "tpmg-in-dealii.l2_error ~= tpmg-cpu.l2_error"
                                "dealii-block-sor.l2_error ~= tpmg-cpu.l2_error"
                                "dealii-chebyshev.l2_error ~= tpmg-cpu.l2_error"
                                "tpmg-cpu.l2_error < 1e-5")
  endforeach()
  tpmg_bridge_app_test(dealii-compare-3d dealii-compare MODE json
                       ARGS --dim 3 --degree 2 --level 2 --cells 2,1,1 --box 0,2,0,1,0,1
                            --threads 2 --json
                       CHECKS "n_dofs == 1377" "dealii-chebyshev.converged == true"
                              "dealii-block-sor.converged == true"
                              "tpmg-in-dealii.iterations == tpmg-cpu.iterations"
                              "dealii-block-sor.iterations <= tpmg-cpu.iterations+1"
                              "dealii-block-sor.iterations >= tpmg-cpu.iterations-1"
                              "tpmg-in-dealii.l2_error ~= tpmg-cpu.l2_error")
  # Without a GPU the CUDA method says so; with one it converges like the CPU.
  tpmg_bridge_app_test(dealii-compare-skips dealii-compare MODE json
                       ARGS --dim 2 --degree 2 --level 3 --methods dealii-block-sor,tpmg-cuda
                            --block-sor-max-mib 0.001 --json
                       CHECKS "dealii-block-sor.status == skipped (size)"
                              "dealii-block-sor.iterations == null")
  tpmg_bridge_app_test(dealii-compare-csv dealii-compare MODE csv
                       ARGS --dim 2 --degree 2 --level 2 --methods tpmg-in-dealii,tpmg-cpu --json
                       CHECKS "tpmg-in-dealii.iterations == tpmg-cpu.iterations"
                       CSV ${out}/bridge-compare.csv ROWS 2)

  # dealii-step37: step-37's problem three ways on one rank, every method
  # converged to the same solution (|x - x_A| / |x_A|, the solvers' 1e-12
  # times the condition number) in few iterations; its own usage errors.
  tpmg_bridge_app_test(dealii-step37-2d dealii-step37 MODE json
                       ARGS --dim 2 --level 5 --threads 1 --json
                       CHECKS "degree == 2" "tolerance == 1e-12"
                              "dealii.converged == true" "dealii.iterations <= 12"
                              "multigrid.converged == true" "multigrid.iterations <= 12"
                              "solve.converged == true" "solve.iterations <= 12"
                              "multigrid.difference < 1e-10" "solve.difference < 1e-10")
  tpmg_bridge_app_test(dealii-step37-3d dealii-step37 MODE json
                       ARGS --dim 3 --level 3 --threads 1 --json
                       CHECKS "dealii.converged == true" "dealii.iterations <= 12"
                              "multigrid.converged == true" "multigrid.iterations <= 12"
                              "solve.converged == true" "solve.iterations <= 12"
                              "multigrid.difference < 1e-10" "solve.difference < 1e-10")
  tpmg_bridge_app_test(dealii-step37-2d-q3 dealii-step37 MODE json
                       ARGS --dim 2 --degree 3 --level 4 --threads 1 --json
                       CHECKS "degree == 3" "dealii.converged == true"
                              "multigrid.converged == true" "solve.converged == true"
                              "multigrid.difference < 1e-10" "solve.difference < 1e-10")
  tpmg_bridge_app_test(dealii-step37-solver-gmres dealii-step37 MODE usage
                       EXPECT "--solver gmres: step-37 solves with CG" ARGS --solver gmres)
  tpmg_bridge_app_test(dealii-step37-box dealii-step37 MODE usage
                       EXPECT "--box: step-37's domain is the unit square or cube"
                       ARGS --dim 2 --box 0,2,0,1)

  # dealii-poisson on P MPI ranks (labels bridge and mpi): the one-rank
  # iterations and L2 error, on meshes whose coarse level tpmg distributes
  # (--cells 2,12: 3D 1,2,6) and keeps whole (2,8: its hidden level below has
  # 4 cells along y), through Multigrid, GpuPreconditioner and solve_on_gpu;
  # a mesh p4est does not cut into slabs is refused by every rank.
  if(TPMG_HAVE_MPI AND MPIEXEC_EXECUTABLE)
    # tpmg_bridge_mpi_app_test(name ranks MODE pair|ranks [PROGRAM p] ARGS ... [ARGS2 ...]
    #                          [CHECKS ...] [SAME ...] [CLOSE ...] [EXPECT re]):
    # PROGRAM (default dealii-poisson) on `ranks` ranks; pair: then on one
    # rank, without mpiexec
    function(tpmg_bridge_mpi_app_test name ranks)
      cmake_parse_arguments(t "" "MODE;EXPECT;PROGRAM" "ARGS;ARGS2;CHECKS;SAME;CLOSE" ${ARGN})
      if(NOT t_PROGRAM)
        set(t_PROGRAM dealii-poisson)
      endif()
      set(launch ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${tpmg_bridge_mpiexec_flags}
                 $<TARGET_FILE:${t_PROGRAM}>)
      foreach(list ARGS ARGS2 CHECKS SAME CLOSE)
        string(REPLACE ";" "|" ${list} "${t_${list}}")
      endforeach()
      string(REPLACE ";" "|" launch "${launch}")
      if(NOT ARGS2)
        set(ARGS2 "${ARGS}")
      endif()
      add_test(NAME bridge-${name}
               COMMAND ${CMAKE_COMMAND} "-DPROGRAM=${MPIEXEC_EXECUTABLE}" "-DMODE=${t_MODE}"
                       "-DARGS=${launch}|${ARGS}" "-DEXPECT=${t_EXPECT}" "-DRANKS=${ranks}"
                       "-DCHECKS=${CHECKS}" "-DPROGRAM2=$<TARGET_FILE:${t_PROGRAM}>"
                       "-DARGS2=${ARGS2}" "-DSAME=${SAME}" "-DCLOSE=${CLOSE}"
                       "-DPREFIX=${t_PROGRAM}: "
                       -P "${tpmg_bridge_apps_driver}")
      set_tests_properties(bridge-${name} PROPERTIES LABELS "bridge;mpi" TIMEOUT 600
                           PROCESSORS ${ranks}
                           ENVIRONMENT "OMP_NUM_THREADS=1;OMP_WAIT_POLICY=PASSIVE")
    endfunction()
    tpmg_bridge_mpi_app_test(dealii-poisson-np2-gmres 2 MODE pair
                             ARGS --dim 2 --degree 3 --level 3 --cells 2,12 --box 0,1,0,6
                                  --threads 1 --json
                             CHECKS "converged == true" "residual_reduction <= 1e-9"
                             SAME n_dofs iterations converged CLOSE l2_error)
    tpmg_bridge_mpi_app_test(dealii-poisson-np3-cg-3d 3 MODE pair
                             ARGS --dim 3 --degree 2 --level 2 --cells 1,2,6 --box 0,1,0,2,0,6
                                  --solver cg --threads 1 --json
                             CHECKS "converged == true" "solver == cg"
                             SAME n_dofs iterations converged CLOSE l2_error)
    tpmg_bridge_mpi_app_test(dealii-poisson-np4-whole-coarse 4 MODE pair
                             ARGS --dim 2 --degree 3 --level 3 --cells 2,8 --box 0,1,0,4
                                  --threads 1 --json
                             CHECKS "converged == true"
                             SAME n_dofs iterations converged CLOSE l2_error)
    foreach(use preconditioner solve)
      tpmg_bridge_mpi_app_test(dealii-poisson-np2-use-${use} 2 MODE pair
                               ARGS --dim 3 --degree 2 --level 3 --cells 2,2,4 --solver cg
                                    --use ${use} --threads 1 --json
                               ARGS2 --dim 3 --degree 2 --level 3 --cells 2,2,4 --solver cg
                                     --threads 1 --json
                               CHECKS "converged == true" "use == ${use}"
                               SAME n_dofs iterations CLOSE l2_error)
    endforeach()
    # TrilinosCoarseSolver on 2 ranks (ML distributed over them, KLU
    # gathered): the one-rank solve with the same coarse solver
    if(TPMG_HAVE_TRILINOS)
      foreach(coarse trilinos-amg trilinos-direct)
        tpmg_bridge_mpi_app_test(dealii-poisson-np2-${coarse} 2 MODE pair
                                 ARGS --dim 2 --degree 3 --level 1 --cells 8,32 --box 0,1,0,4
                                      --coarse ${coarse} --threads 1 --json
                                 CHECKS "converged == true" "coarse == ${coarse}"
                                        "residual_reduction <= 1e-9"
                                 SAME n_dofs iterations converged CLOSE l2_error)
      endforeach()
    endif()
    tpmg_bridge_mpi_app_test(dealii-poisson-np2-refused 2 MODE ranks
                             ARGS --dim 2 --degree 2 --level 2 --cells 6,4 --box 0,3,0,2
                                  --threads 1
                             EXPECT "^dealii-poisson: .*rank [0-9] of 2: .*outside its slab.*make_slab_triangulation")

    # dealii-compare on P ranks (deal.II's Chebyshev multigrid as step-37
    # runs it, tpmg inside deal.II's Multigrid, tpmg's own solver): each
    # method's one-rank iterations and L2 error, in 2D and 3D, with double
    # and with float (mixed) levels, GMRES and CG; tpmg in deal.II's
    # multigrid takes tpmg's own solver's iterations; block SOR (serial
    # matrices) is skipped on P > 1 ranks.
    set(compare_cases
        # name         ranks dim degree level cells  box          precision solver
        "np2-2d-double 2     2   3      2     2,4    0,1,0,2      double    gmres"
        "np2-3d-mixed  2     3   2      2     1,1,4  0,1,0,1,0,4  mixed     cg"
        "np3-2d-mixed  3     2   4      2     2,6    0,1,0,3      mixed     gmres"
        "np3-3d-double 3     3   2      2     1,2,6  0,1,0,2,0,6  double    cg"
        "np4-2d-double 4     2   2      3     2,8    0,1,0,4      double    cg"
        "np4-3d-mixed  4     3   3      1     2,2,8  0,1,0,1,0,4  mixed     gmres")
    foreach(case IN LISTS compare_cases)
      string(REGEX REPLACE " +" ";" case "${case}")
      list(GET case 0 name)
      list(GET case 1 ranks)
      list(GET case 2 dim)
      list(GET case 3 degree)
      list(GET case 4 level)
      list(GET case 5 cells)
      list(GET case 6 box)
      list(GET case 7 precision)
      list(GET case 8 solver)
      set(same n_dofs)
      set(close "")
      foreach(method dealii-chebyshev tpmg-in-dealii tpmg-cpu)
        list(APPEND same ${method}.iterations ${method}.converged)
        list(APPEND close ${method}.l2_error)
      endforeach()
      tpmg_bridge_mpi_app_test(dealii-compare-${name} ${ranks} MODE pair PROGRAM dealii-compare
                               ARGS --dim ${dim} --degree ${degree} --level ${level}
                                    --cells ${cells} --box ${box} --precision ${precision}
                                    --solver ${solver} --threads 1 --json
                               CHECKS "ranks == ${ranks}" "threads == 1"
                                      "precision == ${precision}"
                                      "dealii-chebyshev.precision == ${precision}"
                                      "tpmg-in-dealii.precision == ${precision}"
                                      "tpmg-cpu.precision == ${precision}"
                                      "dealii-chebyshev.converged == true"
                                      "dealii-chebyshev.residual_reduction <= 1e-9"
                                      "tpmg-in-dealii.converged == true"
                                      "tpmg-in-dealii.residual_reduction <= 1e-9"
                                      "tpmg-cpu.converged == true"
                                      "tpmg-in-dealii.iterations == tpmg-cpu.iterations"
                                      "tpmg-in-dealii.l2_error ~= tpmg-cpu.l2_error"
                                      "dealii-chebyshev.l2_error ~= tpmg-cpu.l2_error"
                                      "dealii-block-sor.status == skipped (ranks)"
                                      "dealii-block-sor.iterations == null"
                               SAME ${same} CLOSE ${close})
    endforeach()
    # dealii-step37 on P ranks: on tpmg's slabs and on p4est's partition of
    # step-37's one coarse cell (on 2 ranks its active cells are slabs, on 3
    # and 4 not: the coefficient and the vectors move), every method
    # converges, (B) and (C) to (A)'s solution and in the iterations of one
    # rank, (A) too (its Chebyshev's eigenvalue estimates do not depend on
    # the partition); 2^level >= 2 P cells along the last direction
    tpmg_bridge_mpi_app_test(dealii-step37-np2 2 MODE json PROGRAM dealii-step37
                             ARGS --dim 2 --level 4 --cells 2,4 --threads 1 --json
                             CHECKS "dealii.converged == true" "multigrid.converged == true"
                                    "solve.converged == true" "multigrid.difference < 1e-10"
                                    "solve.difference < 1e-10")
    set(step37_cases
        # name       ranks dim degree level
        "np2-2d      2     2   2      5"
        "np3-2d      3     2   2      5"
        "np4-2d-q3   4     2   3      4"
        "np3-3d      3     3   2      3"
        "np4-3d      4     3   2      3")
    foreach(case IN LISTS step37_cases)
      string(REGEX REPLACE " +" ";" case "${case}")
      list(GET case 0 name)
      list(GET case 1 ranks)
      list(GET case 2 dim)
      list(GET case 3 degree)
      list(GET case 4 level)
      set(args --dim ${dim} --degree ${degree} --level ${level} --threads 1 --json)
      tpmg_bridge_mpi_app_test(dealii-step37-hyper-cube-${name} ${ranks} MODE pair
                               PROGRAM dealii-step37 ARGS ${args}
                               CHECKS "ranks == ${ranks}"
                                      "dealii.converged == true" "multigrid.converged == true"
                                      "solve.converged == true" "multigrid.difference < 1e-9"
                                      "solve.difference < 1e-9"
                               SAME dofs dealii.iterations multigrid.iterations
                                    solve.iterations)
    endforeach()
    # too few finest cells along the last direction for tpmg's slabs (4 on 3
    # ranks): refused by every rank, saying what to change
    tpmg_bridge_mpi_app_test(dealii-step37-np3-refused 3 MODE ranks PROGRAM dealii-step37
                             ARGS --dim 2 --level 2 --threads 1
                             EXPECT "^dealii-step37: .*rank [0-9] of 3: .*3 ranks need at least 6 .two each.")
    # a mesh p4est does not cut into slabs: refused by every rank; a failure
    # of one rank (rank 0 cannot write the CSV file) ends every rank with it
    tpmg_bridge_mpi_app_test(dealii-compare-np2-refused 2 MODE ranks PROGRAM dealii-compare
                             ARGS --dim 2 --degree 2 --level 2 --cells 6,4 --box 0,3,0,2
                                  --threads 1
                             EXPECT "^dealii-compare: .*rank [0-9] of 2: .*outside its slab.*make_slab_triangulation")
    tpmg_bridge_mpi_app_test(dealii-compare-np3-csv-fails 3 MODE ranks PROGRAM dealii-compare
                             ARGS --dim 2 --degree 2 --level 2 --cells 2,6 --threads 1
                                  --box 0,1,0,3 --methods tpmg-cpu
                                  --csv ${out}/no-such-directory/compare.csv
                             EXPECT "^dealii-compare: cannot open .*no-such-directory/compare.csv for appending$")
  endif()
endif()
