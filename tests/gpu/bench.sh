#!/usr/bin/env bash
# Benchmarks of tpmg on a machine with an NVIDIA GPU (Hopper, CUDA 13), from
# any directory: a Release build for sm_90 in build-gpu/ (as run-all.sh), then
# the steps named on the command line, in order:
#   blocks-3d, blocks-2d  tpmg-bench --backend cuda per dimension, float and
#                         double, --dofs $TPMG_BENCH_DOFS (default 5e7), --repeat 10:
#                         a column per kernel variant (cuda/basic, cuda/constant,
#                         cuda/tiled, cuda/thread, cuda/brick) and cuda itself
#   breakdown             tpmg-bench --breakdown for the paper's Table 6 problems
#                         (Q1 L9, Q3 L8, Q7 L7), mixed precision
#   breakdown-small       the same one level lower (1/8 the DoFs)
#   table6                tpmg-poisson --json for the Table 6 problems, GMRES in
#                         mixed and double, fastest of 3 solves
# Output (CSV, JSON lines, logs) goes to $OUT (if set) or build-gpu/bench-logs,
# a short summary last. TPMG_JOBS sets the build parallelism (default 16).
#
#   bash tests/gpu/bench.sh blocks-3d breakdown table6
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

jobs=${TPMG_JOBS:-16}
build=build-gpu
logs=${OUT:-$build/bench-logs}
dofs=${TPMG_BENCH_DOFS:-5e7}
mkdir -p "$logs"
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
summary=()

run() { # NAME LOG COMMAND...: run one step, its output in LOG and on the terminal
  local name=$1 log=$2 start=$SECONDS
  shift 2
  echo "==> $name"
  "$@" 2>&1 | tee -a "$logs/$log"
  local status=${PIPESTATUS[0]}
  summary+=("$([ "$status" -eq 0 ] && echo PASS || echo "FAIL($status)")  $name ($((SECONDS - start)) s)")
}

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTPMG_ENABLE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTPMG_ENABLE_BRIDGE=OFF > "$logs/configure.log" 2>&1 &&
  cmake --build "$build" -j "$jobs" --target tpmg-bench tpmg-poisson > "$logs/build.log" 2>&1 ||
  { tail -30 "$logs/build.log"; echo "build failed"; exit 1; }
bench=$build/bin/tpmg-bench
poisson=$build/bin/tpmg-poisson
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader

for what in "$@"; do
  case $what in
  blocks-3d | blocks-2d)
    dim=${what#blocks-}
    dim=${dim%d}
    for precision in float double; do
      run "tpmg-bench ${dim}D $precision" bench.log "$bench" --backend cuda --dim "$dim" \
        --precision "$precision" --dofs "$dofs" --repeat 10 \
        --csv "$logs/h200-bench-${dim}d-$precision.csv"
    done
    ;;
  breakdown | breakdown-small)
    shift_level=$([ "$what" = breakdown ] && echo 0 || echo 1)
    for kl in 1:9 3:8 7:7; do
      k=${kl%:*}
      level=$((${kl#*:} - shift_level))
      run "breakdown Q$k L$level mixed" breakdown.log "$bench" --backend cuda --breakdown \
        --dim 3 --degree "$k" --level "$level" --arithmetic mixed --repeat 5 \
        --csv "$logs/breakdown-q$k-l$level.csv"
    done
    ;;
  table6)
    for precision in mixed double; do
      for kl in 1:9 3:8 7:7; do
        run "tpmg-poisson Q${kl%:*} L${kl#*:} $precision" table6.jsonl "$poisson" --backend cuda \
          --dim 3 --degree "${kl%:*}" --level "${kl#*:}" --solver gmres --precision "$precision" \
          --repeat 3 --json
      done
    done
    ;;
  *)
    echo "unknown step $what" >&2
    exit 2
    ;;
  esac
done

echo
echo "==> Summary (logs in $logs)"
printf '  %s\n' "${summary[@]}"
[ -f "$logs/table6.jsonl" ] && grep '^{' "$logs/table6.jsonl" |
  sed -E 's/.*"degree":([0-9]+).*"level":([0-9]+).*"arithmetic":"([a-z]+)".*"iterations":([0-9]+).*"solve_seconds":([0-9.e+-]+).*/  Q\1 L\2 \3: \4 it, \5 s/' || true
exit 0
