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

# The sanitizer build runs them too. Open MPI keeps memory until exit, some of
# it in plugins it unloads at MPI_Finalize, whose frames LeakSanitizer could not
# name: the test programs run with tests/mpi-noclose.c preloaded (after the
# AddressSanitizer runtime, which must come first), the slow unwinder, and
# suppressions naming Open MPI's modules only (tests/lsan-openmpi.supp). The
# programs' tests (run through cmake -P, which is not instrumented) check
# everything but leaks; the leaks of their code paths are the test programs'.
set(tpmg_mpi_environment "OMP_WAIT_POLICY=PASSIVE;OMP_NUM_THREADS=1")
set(tpmg_mpi_cli_environment ${tpmg_mpi_environment})
if(TPMG_SANITIZE)
  add_library(tpmg_test_noclose SHARED mpi-noclose.c)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE tpmg_libasan OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(APPEND tpmg_mpi_environment
       "LD_PRELOAD=${tpmg_libasan}:$<TARGET_FILE:tpmg_test_noclose>"
       "ASAN_OPTIONS=fast_unwind_on_malloc=0"
       "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan-openmpi.supp")
  list(APPEND tpmg_mpi_cli_environment "ASAN_OPTIONS=detect_leaks=0")
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
                         ENVIRONMENT "${tpmg_mpi_environment}")
  endforeach()
endfunction()

tpmg_mpi_test(t750-mpi-objects 1 2 3 4)
tpmg_mpi_test(t751-mpi-solvers 2 3 4)
tpmg_mpi_test(t752-mpi-errors 1 2 3 4)
tpmg_mpi_test(t753-mpi-setup 1 2 3 4)
# many ranks, few cells each, the levels kept whole longer than a rank's slab
tpmg_mpi_test(t754-mpi-many 32 64)
# small levels kept whole on every rank (tpmg_context_options.whole_level_dofs):
# the cut moves up, the results stay the one-process ones
foreach(name t750-mpi-objects t751-mpi-solvers)
  add_test(NAME ${name}-whole-np3
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${tpmg_mpiexec_flags}
                   $<TARGET_FILE:${name}>)
  set_tests_properties(${name}-whole-np3 PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 3
                       ENVIRONMENT "${tpmg_mpi_environment};TPMG_TEST_WHOLE_LEVEL_DOFS=2000")
endforeach()

# The programs under mpiexec: the one-process results with P ranks, and errors
# that every rank reports (tests/mpi-cli.cmake).
function(tpmg_mpi_cli_program name program ranks mode)
  string(REPLACE ";" "|" flags "${tpmg_mpiexec_flags}")
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${program}>
                   -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DFLAGS=${flags} -DRANKS=${ranks}
                   -DMODE=${mode} ${ARGN} -P ${CMAKE_CURRENT_SOURCE_DIR}/mpi-cli.cmake)
  set_tests_properties(${name} PROPERTIES LABELS "mpi;cli" TIMEOUT 600 PROCESSORS ${ranks}
                       ENVIRONMENT "${tpmg_mpi_cli_environment}")
endfunction()
function(tpmg_mpi_cli name ranks mode)
  tpmg_mpi_cli_program(${name} tpmg-poisson ${ranks} ${mode} ${ARGN})
endfunction()
tpmg_mpi_cli(mpi-poisson-3d-np4 4 same "-DARGS=--level|3|--threads|1")
tpmg_mpi_cli(mpi-poisson-2d-np4 4 same
             "-DARGS=--dim|2|--degree|4|--level|3|--cells|3,2|--box|0,3,0,1|--threads|1")
tpmg_mpi_cli(mpi-poisson-fmg-mixed-np3 3 same
             "-DARGS=--dim|3|--degree|2|--level|3|--cells|1,1,2|--solver|fmg|--precision|mixed|--threads|1")
tpmg_mpi_cli(mpi-poisson-cg-np2 2 same "-DARGS=--degree|5|--level|2|--solver|cg|--threads|1")
# a variable coefficient (quadrature values; per cell) on 2, 3, 4 ranks
tpmg_mpi_cli(mpi-poisson-step37-np3 3 same
             "-DARGS=--dim|2|--degree|2|--level|5|--coefficient|step37|--reaction|10|--threads|1")
tpmg_mpi_cli(mpi-poisson-step37-3d-np2 2 same
             "-DARGS=--degree|2|--level|3|--coefficient|step37|--threads|1")
tpmg_mpi_cli(mpi-poisson-checkerboard-np4 4 same
             "-DARGS=--degree|3|--level|3|--coefficient|checkerboard:1e3|--rhs|one|--threads|1")
tpmg_mpi_cli(mpi-poisson-random-np3 3 same
             "-DARGS=--dim|2|--degree|3|--level|4|--cells|1,3|--coefficient|random:100|--rhs|one|--threads|1")
# graded coarse cells (--grading) on 2, 3, 4 ranks: the one-process iterations
tpmg_mpi_cli(mpi-poisson-grading-np2 2 same
             "-DARGS=--dim|2|--degree|3|--level|3|--cells|3,4|--grading|1.5|--threads|1")
tpmg_mpi_cli(mpi-poisson-grading-3d-np3 3 same
             "-DARGS=--degree|2|--level|2|--cells|2,2,3|--grading|2|--reaction|10|--threads|1")
tpmg_mpi_cli(mpi-poisson-grading-step37-np4 4 same
             "-DARGS=--dim|2|--degree|2|--level|3|--cells|2,3|--grading|1.5|--coefficient|step37|\
--threads|1")
tpmg_mpi_cli(mpi-poisson-no-overlap-np3 3 same
             "-DARGS=--degree|2|--level|3|--cells|1,1,3|--box|0,1,0,1,0,3|--overlap|0|--threads|1")
tpmg_mpi_cli(mpi-poisson-split-np4 4 error "-DARGS=--dim|2|--level|1|--threads|1" -DEXIT=1
             "-DEXPECT=ranks need at least 8")
tpmg_mpi_cli(mpi-poisson-option-np3 3 error "-DARGS=--no-such-option" -DEXIT=2
             "-DEXPECT=unknown option")
# Rank counts 1..40, 48 and 64 (label slow: minutes on 2 cores): each run gives
# the one-process result or is refused on every rank. 2D Q1 level 7 splits among
# all of them; 3D Q1 on 1x1x2 cells, level 5, among up to 32 (from 9 on, level
# 4 is kept whole, longer than some ranks' slabs of level 5: issue 29).
set(tpmg_sweep_ranks "")
foreach(ranks RANGE 1 40)
  string(APPEND tpmg_sweep_ranks "${ranks}|")
endforeach()
string(APPEND tpmg_sweep_ranks "48|64")
foreach(sweep "2d;--dim|2|--degree|1|--level|7"
              "3d;--dim|3|--degree|1|--level|5|--cells|1,1,2|--box|0,1,0,1,0,2")
  list(GET sweep 0 name)
  list(GET sweep 1 args)
  string(REPLACE ";" "|" flags "${tpmg_mpiexec_flags}")
  add_test(NAME mpi-poisson-sweep-${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:tpmg-poisson>
                   -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DFLAGS=${flags} -DRANKS=${tpmg_sweep_ranks}
                   -DMODE=sweep "-DARGS=${args}|--threads|1" "-DEXPECT=ranks need at least"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/mpi-cli.cmake)
  set_tests_properties(mpi-poisson-sweep-${name} PROPERTIES LABELS "mpi;cli;slow" TIMEOUT 3600
                       PROCESSORS 64 ENVIRONMENT "${tpmg_mpi_cli_environment}")
endforeach()

# Ranks given different command lines (MPMD, ':'): a usage error or --help on
# some ranks only, or options that differ, end every rank with exit status 2
# and the same line, instead of leaving the others waiting in a collective call
# (issue 29)
set(small "--dim|2|--degree|2|--level|3|--threads|1")
tpmg_mpi_cli(mpi-poisson-option-rank1-np2 2 error "-DARGS=${small}" "-DOTHER_ARGS=--dim|4"
             -DEXIT=2 "-DEXPECT=--dim 4: expected an integer in 2..3")
tpmg_mpi_cli(mpi-poisson-option-rank0-np3 3 error "-DARGS=--dim|4" "-DOTHER_ARGS=${small}"
             -DEXIT=2 "-DEXPECT=--dim 4: expected an integer in 2..3")
tpmg_mpi_cli(mpi-poisson-help-rank1-np2 2 error "-DARGS=${small}" "-DOTHER_ARGS=--help" -DEXIT=2
             "-DEXPECT=--help given on rank 1 but not on every rank")
tpmg_mpi_cli(mpi-poisson-differ-repeat-np3 3 error "-DARGS=${small}"
             "-DOTHER_ARGS=${small}|--repeat|2" -DEXIT=2
             "-DEXPECT=options differ: no --repeat on rank 0, --repeat 2 on rank 1 ")
tpmg_mpi_cli(mpi-poisson-differ-rhs-np2 2 error "-DARGS=${small}|--rhs|one"
             "-DOTHER_ARGS=${small}|--rhs=ones" -DEXIT=2
             "-DEXPECT=options differ: --rhs one on rank 0, --rhs ones on rank 1 ")
tpmg_mpi_cli(mpi-poisson-differ-write-setup-np2 2 error "-DARGS=${small}"
             "-DOTHER_ARGS=${small}|--write-setup|mpi-cli-never-written.tpmg" -DEXIT=2
             "-DEXPECT=options differ: no --write-setup on rank 0, --write-setup mpi-cli-never-written.tpmg on rank 1 ")
tpmg_mpi_cli(mpi-poisson-differ-program-np2 2 error "-DARGS=${small}" "-DOTHER_ARGS=${small}"
             "-DOTHER_PROGRAM=$<TARGET_FILE:tpmg-bench>" -DEXIT=2
             "-DEXPECT=tpmg-poisson on rank 0, tpmg-bench on rank 1: every rank must run the same program")
set(small "--dim|2|--degree|2|--level|3|--threads|1|--repeat|1")
tpmg_mpi_cli_program(mpi-bench-option-rank1-np2 tpmg-bench 2 error "-DARGS=${small}"
                     "-DOTHER_ARGS=--breakdown=yes" -DEXIT=2
                     "-DEXPECT=--breakdown takes no value: --breakdown=yes")
# --help on every rank: the help, exit status 0
add_test(NAME mpi-poisson-help-np2
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${tpmg_mpiexec_flags}
                 $<TARGET_FILE:tpmg-poisson> --help)
set_tests_properties(mpi-poisson-help-np2 PROPERTIES LABELS "mpi;cli" TIMEOUT 120 PROCESSORS 2
                     ENVIRONMENT "${tpmg_mpi_cli_environment}"
                     PASS_REGULAR_EXPRESSION "Usage: tpmg-poisson")
# rank 0 alone writes --csv: its failure is every rank's
if(EXISTS /dev/full)
  tpmg_mpi_cli_program(mpi-bench-csv-full-np2 tpmg-bench 2 error
                       "-DARGS=--dim|2|--degree|1|--level|3|--threads|1|--repeat|1|--csv|/dev/full"
                       -DEXIT=1 "-DEXPECT=--csv /dev/full: writing it failed")
endif()
tpmg_mpi_cli_program(mpi-bench-differ-level-np2 tpmg-bench 2 error "-DARGS=${small}"
                     "-DOTHER_ARGS=--dim|2|--degree|2|--level|4|--threads|1|--repeat|1" -DEXIT=2
                     "-DEXPECT=options differ: --level 3 on rank 0, --level 4 on rank 1 ")

# tpmg-bench --breakdown on a mesh of 3 coarse cells along z, on 3 ranks with
# the exchanges not overlapped: it runs and prints its model
add_test(NAME mpi-bench-breakdown-np3
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${tpmg_mpiexec_flags}
                 $<TARGET_FILE:tpmg-bench> --breakdown --dim 3 --degree 2 --level 2 --cells 1,1,3
                 --box 0,1,0,1,0,3 --overlap 0 --threads 1 --repeat 1)
set_tests_properties(mpi-bench-breakdown-np3 PROPERTIES LABELS "mpi;cli" TIMEOUT 300 PROCESSORS 3
                     ENVIRONMENT "${tpmg_mpi_cli_environment}"
                     PASS_REGULAR_EXPRESSION "breakdown: 3D Q2 level 2, [0-9]+ DoFs, GMRES\\(30\\) mixed, [0-9]+ iterations")

# tpmg-poisson --write-setup on one process and on 3 ranks gives the same
# file, and --setup on 2 ranks the same solve (tests/mpi-setup.cmake); with a
# coefficient at the quadrature points and per cell too
function(tpmg_mpi_setup_test name)
  string(REPLACE ";" "|" args "${ARGN}")
  string(REPLACE ";" "|" flags "${tpmg_mpiexec_flags}")
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} "-DPROGRAM=$<TARGET_FILE:tpmg-poisson>"
                   "-DMPIEXEC=${MPIEXEC_EXECUTABLE}" "-DNUMPROC_FLAG=${MPIEXEC_NUMPROC_FLAG}"
                   "-DFLAGS=${flags}" "-DARGS=${args}" "-DNAME=${name}"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/mpi-setup.cmake)
  set_tests_properties(${name} PROPERTIES LABELS "mpi;cli" TIMEOUT 300 PROCESSORS 3
                       ENVIRONMENT "${tpmg_mpi_cli_environment}")
endfunction()
tpmg_mpi_setup_test(mpi-setup-poisson-3d --level 3)
tpmg_mpi_setup_test(mpi-setup-poisson-2d --dim 2 --degree 4 --level 4 --cells 3,2 --box 0,3,-1,1)
tpmg_mpi_setup_test(mpi-setup-poisson-step37 --dim 2 --degree 3 --level 4 --coefficient step37)
tpmg_mpi_setup_test(mpi-setup-poisson-checkerboard --dim 2 --degree 3 --level 4 --rhs one
                    --coefficient checkerboard:10)

# The CUDA backend on P ranks (label gpu-mpi, run by tests/gpu/run-mpi.sh on a
# machine with several GPUs; skipped, exit 77, without a GPU): t750 and t751
# with their distributed contexts on "cuda" (TPMG_TEST_MPI_BACKEND), by the
# transport a context chooses and, for t750, by host staging too; t850 the
# transports themselves; tpmg-poisson with P GPUs against one GPU.
if(TPMG_ENABLE_CUDA)
  set(tpmg_gpu_mpi_environment ${tpmg_mpi_environment} "TPMG_TEST_MPI_BACKEND=cuda")
  # tpmg_gpu_mpi_test(TEST PROGRAM RANKS [ENV...])
  function(tpmg_gpu_mpi_test test program ranks)
    add_test(NAME ${test}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${tpmg_mpiexec_flags}
                     $<TARGET_FILE:${program}>)
    set_tests_properties(${test} PROPERTIES LABELS gpu-mpi TIMEOUT 1200 SKIP_RETURN_CODE 77
                         RESOURCE_LOCK gpu ENVIRONMENT "${tpmg_gpu_mpi_environment};${ARGN}")
  endfunction()
  find_package(CUDAToolkit REQUIRED) # t850 counts the GPUs
  add_executable(t850-gpu-mpi t850-gpu-mpi.c)
  target_link_libraries(t850-gpu-mpi PRIVATE tpmg_test_mpi tpmg m CUDA::cudart)
  target_compile_options(t850-gpu-mpi PRIVATE -Wall -Wextra)
  if(TPMG_HAVE_NCCL)
    target_compile_definitions(t850-gpu-mpi PRIVATE TPMG_TEST_HAVE_NCCL=1)
  else()
    target_compile_definitions(t850-gpu-mpi PRIVATE TPMG_TEST_HAVE_NCCL=0)
  endif()
  foreach(ranks 2 4)
    tpmg_gpu_mpi_test(gpu-mpi-objects-np${ranks} t750-mpi-objects ${ranks})
    tpmg_gpu_mpi_test(gpu-mpi-solvers-np${ranks} t751-mpi-solvers ${ranks})
    # the backend's choice of whole levels (1,000,000 DoFs): all but the finest
    tpmg_gpu_mpi_test(gpu-mpi-solvers-whole-np${ranks} t751-mpi-solvers ${ranks}
                      TPMG_TEST_WHOLE_LEVEL_DOFS=-1)
    tpmg_gpu_mpi_test(gpu-mpi-transport-np${ranks} t850-gpu-mpi ${ranks})
  endforeach()
  tpmg_gpu_mpi_test(gpu-mpi-objects-host-np2 t750-mpi-objects 2 TPMG_CUDA_TRANSPORT=host)
  tpmg_gpu_mpi_test(gpu-mpi-transport-host-np2 t850-gpu-mpi 2 TPMG_CUDA_TRANSPORT=host)
  function(tpmg_gpu_mpi_cli name ranks)
    string(REPLACE ";" "|" flags "${tpmg_mpiexec_flags}")
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:tpmg-poisson>
                     -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DFLAGS=${flags} -DRANKS=${ranks}
                     -DMODE=same ${ARGN} -P ${CMAKE_CURRENT_SOURCE_DIR}/mpi-cli.cmake)
    set_tests_properties(${name} PROPERTIES LABELS gpu-mpi TIMEOUT 1200 RESOURCE_LOCK gpu
                         SKIP_REGULAR_EXPRESSION "SKIPPED" ENVIRONMENT "${tpmg_mpi_cli_environment}")
  endfunction()
  tpmg_gpu_mpi_cli(gpu-mpi-poisson-3d-np4 4
                   "-DARGS=--backend|cuda|--degree|3|--level|5|--cells|1,1,4|--box|0,1,0,1,0,4")
  tpmg_gpu_mpi_cli(gpu-mpi-poisson-fmg-np2 2
                   "-DARGS=--backend|cuda|--degree|4|--level|4|--solver|fmg")
  # every level split, the boundary smoother; and without overlap
  tpmg_gpu_mpi_cli(gpu-mpi-poisson-boundary-np4 4
                   "-DARGS=--backend|cuda|--degree|2|--level|5|--cells|1,1,4|--box|0,1,0,1,0,4|--smoother|boundary|--whole-level-dofs|0")
  tpmg_gpu_mpi_cli(gpu-mpi-poisson-no-overlap-np2 2
                   "-DARGS=--backend|cuda|--degree|3|--level|4|--cells|1,1,2|--box|0,1,0,1,0,2|--overlap|0|--whole-level-dofs|0")
endif()
