#!/usr/bin/env bash
# Set up, build and test tpmg from the repository root:
#   1. tests/setup.sh installs missing packages (Debian 12);
#   2. a Release build in build/ and its whole test suite;
#   3. an AddressSanitizer + UndefinedBehaviorSanitizer build (CPU backend only,
#      without the deal.II bridge: deal.II itself is not built with sanitizers)
#      in build-sanitize/ and its tests, except those labelled gpu, slow or
#      valgrind (valgrind does not run sanitized programs), t751 with
#      TPMG_TEST_SAMPLE=1 (each solver in one arithmetic per case: step 2
#      runs them all);
#   4. the fuzz targets (tests/fuzz/: the setup file reader and the programs'
#      option parser), built with clang, libFuzzer and the sanitizers in
#      build-fuzz/, each run for TPMG_FUZZ_SECONDS (default 60) from the seed
#      corpus; a crash or sanitizer report fails the step;
#   5. the deal.II bridge against Debian 13's deal.II (9.6.2; step 2 tests it
#      against the system's, Debian 12's 9.4.1): tests/dealii-root.sh makes a
#      Debian 13 root with debootstrap and libdeal.ii-dev (or reuses the one
#      in TPMG_DEALII_ROOT), builds tpmg in it and runs the tests labelled
#      bridge there. TPMG_SKIP_DEALII96=1 skips it (CI runs it).
# Exits nonzero if any step fails; ends with a summary. TPMG_JOBS sets the
# parallelism of builds and tests (default 2).
#
#   bash tests/run-all.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

jobs=${TPMG_JOBS:-2}

# The CUDA toolkit's usual place, where it is installed but not on PATH: CI
# compiles all CUDA code even though no GPU runs it there.
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
summary=()
failed=0

# step NAME COMMAND...: run, time and record one step; returns its status.
step() {
  local name=$1 start=$SECONDS status
  shift
  echo
  echo "==> $name"
  "$@"
  status=$?
  if [ $status -eq 0 ]; then
    summary+=("PASS  $name ($((SECONDS - start)) s)")
  else
    summary+=("FAIL  $name ($((SECONDS - start)) s, status $status)")
    failed=1
  fi
  return $status
}

report() {
  echo
  echo "==> Summary"
  printf '  %s\n' "${summary[@]}"
  if [ $failed -eq 0 ]; then
    echo "run-all: all steps passed in $SECONDS s"
  else
    echo "run-all: FAILED ($SECONDS s)"
  fi
  exit $failed
}

step "set-up (tests/setup.sh)" bash tests/setup.sh || report

if step "Release: configure and build (build/)" \
  bash -c "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j$jobs"; then
  step "Release: tests" ctest --test-dir build --output-on-failure -j"$jobs"
fi

if step "Sanitizers: configure and build (build-sanitize/)" \
  bash -c "cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPMG_SANITIZE=ON \
             -DTPMG_ENABLE_CUDA=OFF -DTPMG_ENABLE_BRIDGE=OFF \
             && cmake --build build-sanitize -j$jobs"; then
  step "Sanitizers: tests (without labels gpu, slow, valgrind; t751 sampled)" \
    env TPMG_TEST_SAMPLE=1 ctest --test-dir build-sanitize --output-on-failure -j"$jobs" -LE '^(gpu|slow|valgrind)$'
fi

if step "Fuzzing: configure and build (build-fuzz/, clang)" \
  bash -c "cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
             -DCMAKE_CXX_COMPILER=clang++ -DTPMG_FUZZ=ON -DTPMG_FUZZ_SECONDS=${TPMG_FUZZ_SECONDS:-60} \
             -DTPMG_ENABLE_CUDA=OFF -DTPMG_ENABLE_BRIDGE=OFF \
             && cmake --build build-fuzz -j$jobs"; then
  step "Fuzzing: run (${TPMG_FUZZ_SECONDS:-60} s per target)" \
    ctest --test-dir build-fuzz --output-on-failure -L fuzz
fi

if [ "${TPMG_SKIP_DEALII96:-0}" = 1 ]; then
  echo
  echo "==> deal.II of Debian 13: skipped (TPMG_SKIP_DEALII96=1)"
  summary+=("SKIP  deal.II of Debian 13 (TPMG_SKIP_DEALII96=1)")
elif step "deal.II of Debian 13: make or reuse its root (tests/dealii-root.sh root)" \
  bash tests/dealii-root.sh root; then
  step "deal.II $(bash tests/dealii-root.sh version) (Debian 13): build, tests labelled bridge" \
    bash tests/dealii-root.sh test
fi

report
