#!/usr/bin/env bash
# GPU checks of tpmg on a machine with an NVIDIA GPU (Hopper; CUDA 13, cmake,
# gcc; no deal.II needed), from any directory:
#   1. a Release build for sm_90 in build-gpu/ (-j16);
#   2. ctest -L gpu: every CUDA backend operation and whole solves against the
#      CPU backend, each operation with the kernels of every variant of the
#      backend's name ("cuda", "cuda/basic", "cuda/constant", "cuda/tiled",
#      "cuda/thread" for degree 1, "cuda/brick"; the object tests t2xx..t6xx
#      on each name, "cuda/thread" only t200, t300, t400), and the benchmark interface
#      (stopwatch, limits, work counts) on "cuda";
#   3. compute-sanitizer memcheck and racecheck on a small smoother test per
#      smoother variant (global, separate, fused, boundary; each with the
#      kernels of every backend variant, as in step 2), in 2D and 3D,
#      racecheck for 3D fused and separate at degree 5, and memcheck for
#      degrees 1 and 7; memcheck of the 3D level objects (t801: operator of
#      every variant, transfer, coarse solver) for degrees 1, 3 and 7;
#   4. tpmg-bench --backend cuda on a small level (every variant's column, the
#      limit loops and the work counts run);
#   5. a small solve table with tpmg-poisson --backend cuda --json;
# and a summary last. Logs go to $OUT (if set) or build-gpu/gpu-logs.
# TPMG_JOBS sets the build parallelism (default 16).
#
#   bash tests/gpu/run-all.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

jobs=${TPMG_JOBS:-16}
build=build-gpu
logs=${OUT:-$build/gpu-logs}
mkdir -p "$logs"
summary=()
failed=0

# step NAME LOG COMMAND...: run one step with its output in LOG (and on the
# terminal), record PASS/FAIL and its time.
step() {
  local name=$1 log=$2 start=$SECONDS status
  shift 2
  echo
  echo "==> $name"
  "$@" 2>&1 | tee "$logs/$log"
  status=${PIPESTATUS[0]}
  if [ "$status" -eq 0 ]; then
    summary+=("PASS  $name ($((SECONDS - start)) s)")
  else
    summary+=("FAIL  $name ($((SECONDS - start)) s, status $status, log $logs/$log)")
    failed=1
  fi
  return "$status"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$logs/gpu.txt" 2>&1
cat "$logs/gpu.txt"

configure() {
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTPMG_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTPMG_ENABLE_BRIDGE=OFF
}
build_all() { cmake --build "$build" -j "$jobs"; }

step "configure" configure.log configure &&
  step "build (-j$jobs)" build.log build_all
built=$?

if [ $built -eq 0 ]; then
  step "ctest -L gpu" ctest-gpu.log \
    ctest --test-dir "$build" -L '^gpu$' --output-on-failure --no-tests=error -j3
  # The sanitizers must see real runs: a skipped test (77) counts as failure.
  # Each case is TOOL|NAME|LOG|PROGRAM ARGS...; they run four at a time.
  cases=()
  for tool in memcheck racecheck; do
    for dim in 2 3; do
      for variant in global separate fused boundary; do
        cases+=("$tool|${dim}D $variant|sanitizer-$tool-${dim}d-$variant.log|t802-gpu-smoother $dim $variant 2 2")
      done
    done
  done
  # the conflict-free 3D stages with one patch per block, whose local solve
  # alternates between two tensors
  for variant in fused separate; do
    cases+=("racecheck|3D $variant Q5|sanitizer-racecheck-3d-$variant-q5.log|t802-gpu-smoother 3 $variant 5 1")
  done
  # degree 1 (the THREAD kernels) and a high degree (the largest kernel parameters)
  for dim in 2 3; do
    for degree in 1 7; do
      cases+=("memcheck|${dim}D Q$degree fused|sanitizer-memcheck-${dim}d-q$degree.log|t802-gpu-smoother $dim fused $degree 1")
    done
  done
  for degree in 1 3 7; do
    cases+=("memcheck|t801-gpu-level 3D Q$degree|sanitizer-memcheck-level-q$degree.log|t801-gpu-level 3 $degree")
  done
  run_case() {
    local tool name log command start=$SECONDS
    IFS='|' read -r tool name log command <<< "$1"
    # shellcheck disable=SC2086
    compute-sanitizer --tool "$tool" --error-exitcode 99 $build/bin/$command > "$logs/$log" 2>&1
    echo "$? $((SECONDS - start))" > "$logs/$log.status"
  }
  echo
  echo "==> compute-sanitizer (${#cases[@]} runs, four at a time)"
  n=0
  for c in "${cases[@]}"; do
    run_case "$c" &
    n=$((n + 1))
    [ $((n % 4)) -eq 0 ] && wait
  done
  wait
  for c in "${cases[@]}"; do
    IFS='|' read -r tool name log command <<< "$c"
    read -r status seconds < "$logs/$log.status"
    if [ "$status" = 0 ]; then
      summary+=("PASS  compute-sanitizer $tool $name ($seconds s)")
    else
      summary+=("FAIL  compute-sanitizer $tool $name ($seconds s, status $status, log $logs/$log)")
      failed=1
    fi
  done

  # The benchmark on every variant: a small level per dimension and precision,
  # and the breakdown of one solve.
  bench_small() {
    local dim precision
    for dim in 2 3; do
      for precision in double float; do
        "$build/bin/tpmg-bench" --backend cuda --dim "$dim" --degree all --dofs 2e5 \
          --precision "$precision" --repeat 3 || return 1
      done
    done
    "$build/bin/tpmg-bench" --backend cuda --breakdown --dim 3 --degree 3 --level 4 --repeat 3
  }
  step "tpmg-bench --backend cuda (small)" bench-small.log bench_small

  # A small solve table: GMRES with the sine solution, double and mixed.
  solves() {
    local dim degree level precision
    for dim in 2 3; do
      for degree in 1 3 5 8; do
        level=$([ "$dim" -eq 2 ] && echo 8 || echo 5)
        [ "$dim" -eq 3 ] && [ "$degree" -ge 5 ] && level=4
        for precision in double mixed; do
          "$build/bin/tpmg-poisson" --backend cuda --json --dim "$dim" --degree "$degree" \
            --level "$level" --precision "$precision" --rhs sine || return 1
        done
      done
    done
  }
  step "solve table (tpmg-poisson --backend cuda --json)" solves.jsonl solves
fi

echo
echo "==> Summary (logs in $logs)"
printf '  %s\n' "${summary[@]}"
if [ $failed -eq 0 ]; then
  echo "  ALL PASSED"
else
  echo "  SOME STEPS FAILED"
fi
exit $failed
