# GPU tests (label gpu): the CUDA backend against the CPU backend. Each prints
# SKIPPED and exits 77 where tpmg_backend_available reports no CUDA device.
# t801 and t802 check each CUDA variant's level objects and smoothers through
# the public API only (TPMG_TEST_GPU_BACKEND=NAME runs them on one other
# backend, e.g. "cpu/scalar", without a GPU).
add_library(tpmg_test_gpu_pair STATIC gpu-pair.c)
target_include_directories(tpmg_test_gpu_pair PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(tpmg_test_gpu_pair PUBLIC tpmg_test_reference tpmg m)
foreach(name t800-gpu-vector t801-gpu-level t802-gpu-smoother t803-gpu-solve)
  add_executable(${name} ${name}.c)
  target_link_libraries(${name} PRIVATE tpmg_test_gpu_pair)
  target_compile_options(${name} PRIVATE -Wall -Wextra)
  add_test(NAME ${name} COMMAND ${name})
  # RESOURCE_LOCK: one GPU test at a time, also under ctest -j. Each one's
  # CPU reference uses every core (OpenMP); three at once on the H200 host's
  # 16 cores took 93-101 s where one after another took under 14 s.
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu TIMEOUT 1200
                                          RESOURCE_LOCK gpu)
endforeach()
