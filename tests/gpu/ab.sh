#!/usr/bin/env bash
# tpmg-poisson of this tree against a base version's, on the GPUs of one
# machine in one run (timings compare only on the same card in the same run):
#   1. Release builds for sm_90 (MPI and NCCL where found) of this tree in
#      build-gpu-ab/ (everything, so that ctest can follow) and of the base's
#      source (a directory, e.g. from `git archive BASE | tar -x -C DIR`) in
#      /tmp/tpmg-ab-base (tpmg-poisson only), side by side;
#   2. table6: the paper's Table 6 problems (3D Q1 L9, Q3 L8, Q7 L7) on one GPU
#      with the default solver, base and new alternately, $TPMG_ROUNDS rounds
#      (default 3) of --repeat 3 each; per build the median over the rounds of
#      each round's fastest solve, the iterations, and new / base;
#   3. first: the first solve against the later ones on every GPU count from 2
#      to the GPUs there are (one rank per GPU, 3D Q2 L7 with --cells 1,1,P,
#      --repeat 3), base and new: NCCL's connections made in the first solve
#      or at set-up;
#   4. reaction: the new build alone on Table 6's problems with a reaction
#      term, --reaction 0 and --reaction C alternately (C = 4^L: c h^2 = 1 on
#      the finest cells), $TPMG_ROUNDS rounds of --repeat 3: what the
#      reaction costs (the medians, the iterations, C / 0);
# and a summary last (summary.txt). Logs go to $OUT (if set) or
# build-gpu-ab/logs. TPMG_JOBS sets the build parallelism (default: all cores);
# TPMG_AB_TARGETS the targets built of this tree (default: all), e.g.
# "tpmg-poisson t803-gpu-solve" where no whole ctest follows.
#
#   bash tests/gpu/ab.sh BASE_SOURCE_DIR [table6] [first] [reaction]
set -uo pipefail
base_src=$(cd "${1:?usage: ab.sh BASE_SOURCE_DIR [table6] [first]}" && pwd) || exit 2
shift
parts=${*:-table6 first}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

jobs=${TPMG_JOBS:-$(nproc)}
rounds=${TPMG_ROUNDS:-3}
new=build-gpu-ab
base=/tmp/tpmg-ab-base
logs=${OUT:-$new/logs}
mkdir -p "$logs"
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
export NCCL_NVLS_ENABLE=0 OMP_WAIT_POLICY=passive
# NCCL beside the CUDA toolkit, or Python's wheel (as run-mpi.sh)
if [ -z "${NCCL_HOME:-}" ] && ! ls /usr/local/cuda/include/nccl.h /usr/include/nccl.h > /dev/null 2>&1; then
  wheel=$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2> /dev/null)
  [ -n "$wheel" ] && export NCCL_HOME=$wheel
fi
n_gpus=$(nvidia-smi --list-gpus | wc -l)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"
summary=()
tmp=$(mktemp -d)

configure() { # SOURCE BUILD
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DTPMG_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTPMG_ENABLE_BRIDGE=OFF > /dev/null
}
start=$SECONDS
targets=()
for t in ${TPMG_AB_TARGETS:-}; do targets+=(--target "$t"); done
(configure . "$new" && cmake --build "$new" -j $((jobs / 2 + 1)) "${targets[@]}") \
  > "$logs/build-new.log" 2>&1 &
new_pid=$!
(configure "$base_src" "$base" && cmake --build "$base" -j $((jobs / 2 + 1)) --target tpmg-poisson) \
  > "$logs/build-base.log" 2>&1
base_status=$?
wait $new_pid
new_status=$?
summary+=("build: new $new_status, base $base_status ($((SECONDS - start)) s)")
if [ $new_status -ne 0 ] || [ $base_status -ne 0 ]; then
  tail -20 "$logs/build-new.log" "$logs/build-base.log"
  printf '%s\n' "${summary[@]}"
  exit 1
fi

# field JSON NAME: a number or string field of a JSON line
field() { sed -E "s/.*\"$2\":\"?([^,\"}]*).*/\1/" <<< "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# compare LABEL NAME_A FILE_A NAME_B FILE_B: a summary line of two files of
# "seconds iterations" lines, their medians, iterations seen and B / A
compare() {
  local a b
  a=$(cut -d' ' -f1 "$3" | median)
  b=$(cut -d' ' -f1 "$5" | median)
  summary+=("$(printf '%s: %s %.4f s (%s it), %s %.4f s (%s it), ratio %.3f' "$1" "$2" "$a" \
    "$(cut -d' ' -f2 "$3" | sort -u | tr '\n' ' ')" "$4" "$b" \
    "$(cut -d' ' -f2 "$5" | sort -u | tr '\n' ' ')" "$(awk "BEGIN{print $b/$a}")")")
}

for part in $parts; do
  case $part in
  table6)
    for kl in 1:9 3:8 7:7; do
      k=${kl%:*} l=${kl#*:}
      for round in $(seq "$rounds"); do
        for which in base new; do
          bin=$([ $which = base ] && echo "$base" || echo "$new")/bin/tpmg-poisson
          line=$("$bin" --backend cuda --dim 3 --degree "$k" --level "$l" --repeat 3 --json |
            tee -a "$logs/table6-$which.log" | grep '^{')
          echo "$(field "$line" solve_seconds) $(field "$line" iterations)" >> "$tmp/t6-$k-$which"
        done
      done
      compare "table6 Q$k L$l" base "$tmp/t6-$k-base" new "$tmp/t6-$k-new"
    done
    ;;
  first)
    for p in $(seq 2 "$n_gpus"); do
      for which in base new; do
        bin=$([ $which = base ] && echo "$base" || echo "$new")/bin/tpmg-poisson
        out=$(mpirun --allow-run-as-root --oversubscribe -np "$p" "$bin" --backend cuda --dim 3 \
          --degree 2 --level 7 --cells 1,1,"$p" --box 0,1,0,1,0,"$p" --threads 1 --repeat 3 2>&1 |
          tee -a "$logs/first.log")
        times=$(grep -oE '^solve [0-9]+ of 3: [0-9.]+' <<< "$out" | awk '{print $5}' | tr '\n' ' ')
        setup=$(grep -oE '^setup [0-9.]+ s( \(the context [0-9.]+)?' <<< "$out" | tr -d '(' |
          awk '{print $2 " s" ($6 == "" ? " (context not timed)" : ", of which the context " $6 " s")}')
        summary+=("first P=$p $which: setup $setup, solves $times s")
      done
    done
    ;;
  reaction)
    for kl in 1:9 3:8 7:7; do
      k=${kl%:*} l=${kl#*:} c=$((4 ** ${kl#*:}))
      for round in $(seq "$rounds"); do
        for r in 0 "$c"; do
          line=$("$new/bin/tpmg-poisson" --backend cuda --dim 3 --degree "$k" --level "$l" \
            --reaction "$r" --repeat 3 --json | tee -a "$logs/reaction.log" | grep '^{')
          echo "$(field "$line" solve_seconds) $(field "$line" iterations)" >> "$tmp/r-$k-$r"
        done
      done
      compare "reaction Q$k L$l" "c = 0" "$tmp/r-$k-0" "c = $c" "$tmp/r-$k-$c"
    done
    ;;
  *)
    echo "ab.sh: unknown part $part (table6, first, reaction)" >&2
    exit 2
    ;;
  esac
done

echo
echo "==> Summary (logs in $logs)"
printf '  %s\n' "${summary[@]}" | tee "$logs/summary.txt"
