#!/usr/bin/env bash
# Multi-GPU checks and scaling of tpmg on one machine with several NVIDIA GPUs
# (Hopper; CUDA 13, Open MPI, NCCL; no deal.II needed), one rank per GPU,
# from any directory:
#   1. a Release build for sm_90 in build-gpu-mpi/ (-j$TPMG_JOBS, default 16),
#      with NCCL where found (beside CUDA, under $NCCL_HOME, or in Python's
#      nvidia-nccl package);
#   2. ctest -L gpu-mpi: t750 (every level object) and t751 (whole solves) with
#      their distributed contexts on "cuda" with 2 and 4 ranks against one
#      process, t750 by host staging too, t850 (the transports), tpmg-poisson
#      on P GPUs against one GPU;
#   (TPMG_SKIP_TESTS=1 skips steps 2 and 3; TPMG_TESTS=REGEX runs only those)
#   3. compute-sanitizer memcheck on a 2-rank run of t850 (one per rank), its
#      report of failed API calls off: NCCL probes its kernels with calls that
#      fail by design (tpmg checks every call of its own);
#   4. unless TPMG_SKIP_SCALING=1, the scaling table (tpmg-poisson --json,
#      fastest of $TPMG_REPEAT solves, default 5; mixed precision, to 1e-9;
#      on the rank counts $TPMG_RANKS, default "1 2 4", up to the GPUs there are;
#      the parts named in $TPMG_SCALING, default all of them):
#      weak:   the Table 6 problem per GPU, P coarse cells along z (the slabs'
#              direction): Q1 L9, Q3 L8, Q7 L7 with --cells 1,1,P, GMRES and FMG
#      strong: the Table 6 problems (one coarse cell) on 1, 2, 4 GPUs, GMRES
#      overlap: Q1 L9, Q3 L8, Q7 L7 weak (GMRES) on all GPUs (up to 4) with
#              --overlap 1 and 0 (the smoothers' exchanges hidden behind the
#              inner patches, or not) against one GPU, in one run
#      Q4:     degree 4, level 7, --cells 1,1,4 (539 M DoFs) on 4 GPUs (or 2)
#      large:  the largest Q3 problem the GPUs' memory takes with FMG, on all;
#      whole:  Q1 L9 and Q3 L8 weak on all GPUs by --whole-level-dofs (0, 1e5,
#              1e6, 1e7: the levels kept whole on every rank) against one GPU;
#      breakdown: tpmg-bench --breakdown (each component timed alone, the
#              slowest rank's time) on one GPU and on all (up to 4): Q1 L9 weak,
#              Q3 L8 and Q7 L7 strong, and the strong problems' one-rank share
#              (a 1/P slab: --cells P,P,1 two levels lower for P = 4) on one
#              GPU, so that each component's cost of the distribution shows
#              (breakdown.txt);
#      host:   the V-cycle of the levels kept whole (Q1 L9 and Q3 L8 weak on 4
#              GPUs: their levels <= 1e6 DoFs) on the host's CPU cores against
#              the same levels on the GPUs (host.txt);
# and a summary last (scaling.txt: the table; *.jsonl: every run). Logs go
# to $OUT (if set) or build-gpu-mpi/logs.
#
#   bash tests/gpu/run-mpi.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

jobs=${TPMG_JOBS:-16}
repeat=${TPMG_REPEAT:-5}
ranks=${TPMG_RANKS:-1 2 4}
parts=${TPMG_SCALING:-weak strong overlap whole breakdown host q4 large}
build=build-gpu-mpi
logs=${OUT:-$build/logs}
mkdir -p "$logs"
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# never NVLink multicast on these shared machines (the device tool's KINDS.md)
export NCCL_NVLS_ENABLE=0
summary=()
failed=0

step() { # NAME LOG COMMAND...: one step, its output in LOG and on the terminal
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

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$logs/gpu.txt" 2>&1
cat "$logs/gpu.txt"
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
memory_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | sort -n | head -1)
mpiexec=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE)

# NCCL beside the CUDA toolkit, or Python's wheel (nvidia-nccl-cu13)
if [ -z "${NCCL_HOME:-}" ] && ! ls /usr/local/cuda/include/nccl.h /usr/include/nccl.h > /dev/null 2>&1; then
  wheel=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2> /dev/null ||
    python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2> /dev/null)
  [ -n "$wheel" ] && export NCCL_HOME=$wheel
fi
echo "GPUs: $gpus; NCCL_HOME=${NCCL_HOME:-(beside CUDA)}"

configure() {
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTPMG_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTPMG_ENABLE_BRIDGE=OFF &&
    grep '^TPMG_NCCL_LIBRARY:FILEPATH=/' "$build/CMakeCache.txt"
}
build_all() { cmake --build "$build" -j "$jobs"; }
step "configure (with NCCL)" configure.log configure
step "build (-j$jobs)" build.log build_all
built=$?

if [ $built -eq 0 ] && [ "${TPMG_SKIP_TESTS:-0}" != 1 ]; then
  step "ctest -L gpu-mpi" ctest-gpu-mpi.log \
    ctest --test-dir "$build" -L gpu-mpi -R "${TPMG_TESTS:-.}" --output-on-failure --no-tests=error
  step "compute-sanitizer memcheck, t850 on 2 ranks" sanitizer-t850-np2.log \
    "${mpiexec[@]}" -np 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 \
    "$build/bin/t850-gpu-mpi"
fi

poisson() { # P LOG ARGS...: tpmg-poisson on P ranks, its JSON line appended to LOG
  local np=$1 log=$2
  shift 2
  "${mpiexec[@]}" -np "$np" "$build/bin/tpmg-poisson" --backend cuda --dim 3 --json \
    --precision mixed --repeat "$repeat" "$@" > "$logs/last.txt" 2>&1
  local status=$?
  cat "$logs/last.txt"
  tail -1 "$logs/last.txt" | grep '^{' >> "$logs/$log"
  return $status
}

has_part() { [[ " $parts " == *" $1 "* ]]; }

bench() { # P LOG ARGS...: tpmg-bench --breakdown (mixed) on P ranks, appended to LOG
  local np=$1 log=$2
  shift 2
  echo "## tpmg-bench --breakdown on $np GPUs: $*" >> "$logs/$log"
  "${mpiexec[@]}" -np "$np" "$build/bin/tpmg-bench" --backend cuda --dim 3 --breakdown \
    --repeat 5 "$@" 2>&1 | grep -v '^tpmg-bench: breakdown' | tee -a "$logs/$log"
  return "${PIPESTATUS[0]}"
}

scaling() {
  local P kl k l solver
  for kl in 1:9 3:8 7:7; do
    has_part weak || has_part strong || break
    k=${kl%:*} l=${kl#*:}
    for solver in gmres fmg; do
      has_part weak || break
      for P in $ranks; do
        [ "$P" -le "$gpus" ] || continue
        poisson "$P" weak.jsonl --degree "$k" --level "$l" --solver "$solver" \
          --cells 1,1,$P --box 0,1,0,1,0,$P || return 1
      done
    done
    for P in $ranks; do
      has_part strong || break
      [ "$P" -gt 1 ] && [ "$P" -le "$gpus" ] || continue
      poisson "$P" strong.jsonl --degree "$k" --level "$l" --solver gmres || return 1
    done
  done
  if [ "$gpus" -ge 2 ] && has_part overlap; then
    P=$((gpus < 4 ? gpus : 4))
    for kl in 1:9 3:8 7:7; do
      k=${kl%:*} l=${kl#*:}
      poisson 1 overlap.jsonl --degree "$k" --level "$l" --solver gmres || return 1
      for o in 1 0; do
        poisson "$P" overlap.jsonl --degree "$k" --level "$l" --cells 1,1,$P --box 0,1,0,1,0,$P \
          --solver gmres --overlap $o || return 1
      done
    done
  fi
  if [ "$gpus" -ge 2 ] && has_part whole; then
    # which levels to keep whole on every rank: Q1 L9 and Q3 L8 weak on all
    # GPUs (up to 4) against one GPU, by --whole-level-dofs
    P=$((gpus < 4 ? gpus : 4))
    poisson 1 whole.jsonl --degree 1 --level 9 --solver gmres || return 1
    for w in 0 100000 1000000 10000000; do
      poisson "$P" whole.jsonl --degree 1 --level 9 --cells 1,1,$P --box 0,1,0,1,0,$P \
        --solver gmres --whole-level-dofs $w || return 1
    done
    for w in 0 1000000; do
      poisson "$P" whole.jsonl --degree 3 --level 8 --cells 1,1,$P --box 0,1,0,1,0,$P \
        --solver gmres --whole-level-dofs $w || return 1
    done
  fi
  if [ "$gpus" -ge 2 ] && has_part breakdown; then
    P=$((gpus < 4 ? gpus : 4))
    local lower=$((P == 4 ? 2 : 1)) # levels below the strong problem's for one rank's share
    bench 1 breakdown.txt --degree 1 --level 9 || return 1
    bench "$P" breakdown.txt --degree 1 --level 9 --cells 1,1,$P --box 0,1,0,1,0,$P || return 1
    for kl in 3:8 7:7; do
      k=${kl%:*} l=${kl#*:}
      bench 1 breakdown.txt --degree "$k" --level "$l" || return 1
      bench "$P" breakdown.txt --degree "$k" --level "$l" || return 1
      bench 1 breakdown.txt --degree "$k" --level $((l - lower)) --cells $P,$P,1 \
        --box 0,1,0,1,0,$(python3 -c "print(1 / $P)") || return 1
    done
  fi
  if [ "$gpus" -ge 4 ] && has_part host; then
    # the levels a 4-GPU weak run keeps whole (<= 1e6 DoFs): Q1 up to level 5,
    # Q3 up to level 4 of --cells 1,1,4; their V-cycle on all host cores
    local cores
    cores=$(nproc)
    for kl in 1:5 3:4; do
      k=${kl%:*} l=${kl#*:}
      OMP_WAIT_POLICY=PASSIVE "$build/bin/tpmg-bench" --backend cpu --threads "$cores" --dim 3 \
        --breakdown --degree "$k" --level "$l" --cells 1,1,4 --box 0,1,0,1,0,4 \
        >> "$logs/host.txt" 2>&1 || return 1
    done
    tail -40 "$logs/host.txt"
  fi
  if [ "$gpus" -ge 2 ] && has_part q4; then
    for solver in gmres fmg; do
      poisson $((gpus < 4 ? gpus : 4)) q4.jsonl --degree 4 --level 7 --solver "$solver" \
        --cells 1,1,4 --box 0,1,0,1,0,4 || return 1
    done
  fi
  if [ "$gpus" -ge 2 ] && has_part large; then
    # Q3 level 8 per unit cube is 454 M DoFs; FMG keeps about 46 bytes per DoF
    local cubes=$((memory_mib * 1048576 * 80 / 100 / 46 / 454000000))
    [ "$cubes" -ge 1 ] || cubes=1
    repeat=1 poisson "$gpus" large.jsonl --degree 3 --level 8 --solver fmg \
      --cells "$cubes,1,$gpus" --box "0,$cubes,0,1,0,$gpus" || return 1
  fi
}

if [ $built -eq 0 ] && [ "${TPMG_SKIP_SCALING:-0}" != 1 ]; then
  step "scaling (tpmg-poisson --backend cuda on 1..$gpus GPUs)" scaling.log scaling
  python3 - "$logs" > "$logs/scaling.txt" << 'EOF'
import json, os, sys
logs = sys.argv[1]
def load(name):
    path = os.path.join(logs, name)
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []
def row(r):
    return "%-5s %-6s Q%d L%d %13s DoFs  P=%d  %-5s  it %3d  %8.4f s  setup %7.2f s  %4.0f B/DoF" % (
        r.get("solver"), r.get("arithmetic"), r["degree"], r["level"], format(r["n_dofs"], ","),
        r["ranks"], r.get("transport", "?"), r["iterations"], r["solve_seconds"],
        r["setup_seconds"], r.get("bytes_per_dof", float("nan")))
weak, strong = load("weak.jsonl"), load("strong.jsonl")
print("weak scaling (the Table 6 problem per GPU):")
for r in weak:
    one = [s for s in weak if s["ranks"] == 1 and s["degree"] == r["degree"] and s["solver"] == r["solver"]]
    eff = one[0]["solve_seconds"] / r["solve_seconds"] if one else float("nan")
    print("  " + row(r) + "  efficiency %.2f" % eff)
print("strong scaling (the Table 6 problems):")
for r in strong:
    one = [s for s in weak if s["ranks"] == 1 and s["degree"] == r["degree"] and s["solver"] == "gmres"]
    speedup = one[0]["solve_seconds"] / r["solve_seconds"] if one else float("nan")
    print("  " + row(r) + "  speedup %.2f" % speedup)
for name, title in (("q4.jsonl", "Q4 539 M"), ("large.jsonl", "largest Q3")):
    for r in load(name):
        print(title + ": " + row(r))
for r in load("overlap.jsonl"):
    one = [s for s in load("overlap.jsonl") if s["ranks"] == 1 and s["degree"] == r["degree"]]
    eff = one[0]["solve_seconds"] / r["solve_seconds"] if one else float("nan")
    print("overlap %s: " % r.get("overlap", "-") + row(r) + "  efficiency %.2f" % eff)
for r in load("whole.jsonl"):
    print("whole levels <= %9d DoFs: " % r.get("whole_level_dofs", -1) + row(r))
EOF
  cat "$logs/scaling.txt"
fi

echo
echo "==> Summary (logs in $logs)"
printf '  %s\n' "${summary[@]}"
[ -f "$logs/scaling.txt" ] && cat "$logs/scaling.txt"
# the breakdowns' totals, components and finest-level times
[ -f "$logs/breakdown.txt" ] && grep -E '^## |^  solve|^  (levels|level L|GMRES)|finest level' "$logs/breakdown.txt"
[ -f "$logs/host.txt" ] && grep -E 'breakdown:|one V-cycle' "$logs/host.txt"
if [ $failed -eq 0 ]; then
  echo "  ALL PASSED"
else
  echo "  SOME STEPS FAILED"
fi
exit $failed
