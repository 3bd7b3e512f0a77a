#!/usr/bin/env bash
# Runs the comparison of doc/comparison.md: dealii-compare for 3D k = 1..6 and
# 2D k = 2, 4 at 1-2 M DoFs, each method the way its users run it: under
# mpirun with P ranks and cores / P threads per rank (P = 1: 2 threads, P = 2:
# 1 thread on 2 cores), with CG and GMRES, and writes the results as CSV and
# as markdown: per problem the fastest configuration of deal.II's Chebyshev
# multigrid (step-37), of tpmg inside deal.II's multigrid and of tpmg's own
# solver, the ratio of the fastest tpmg to the fastest deal.II solve, and
# every run.
#
# Usage: bash doc/comparison.sh [BUILD_DIR]          (default BUILD_DIR: build)
#
# Environment (all optional):
#   OUT            where the results go (default comparison-results/): runs.log (the
#                  programs' output), comparison.csv, block-sor.csv, comparison.md
#   RANKS          the MPI rank counts P to run (default "1 2")
#   CORES          cores to use (default: nproc); threads per rank = CORES / P
#   SOLVERS        Krylov methods (default "cg gmres")
#   PRECISION      mixed (float multigrid levels, as step-37) or double (default mixed)
#   METHODS        default "dealii-chebyshev tpmg-in-dealii tpmg-cpu"; add tpmg-cuda
#                  where there is a GPU
#   REPEAT         solves per run, the fastest counts (default 2)
#   MPIRUN         the launcher (default "mpirun", with --allow-run-as-root as root)
#   QUICK=1        tiny problems (at most 2*10^4 DoFs), to check that the script works
#   DIMS           which dimensions to run (default "3 2")
#   BLOCK_SOR=1    also deal.II's RelaxationBlockSOR (one rank only: it has no MPI
#                  version) with tpmg at the largest level whose patch inverses take
#                  at most BLOCK_SOR_MIB MiB (default 4096; QUICK: 64). Its set-up
#                  takes up to 1000 s: not in the default run.
#
# Each method runs in its own mpirun (dealii-compare --methods), so that its
# memory (the growth of the peak resident set size, summed over the ranks) is
# its own. One thread per rank: Open MPI's default binding, one core per rank
# (as step-37 is run); several threads per rank: --bind-to none, so that the
# threads spread over the cores. OpenMP waits passively unless
# OMP_WAIT_POLICY says otherwise, since deal.II's TBB threads share the cores
# with tpmg's OpenMP threads in tpmg-in-dealii.
set -euo pipefail

build=${1:-build}
program="$build/bin/dealii-compare"
if [[ ! -x $program ]]; then
  echo "comparison.sh: $program not found: build it first (deal.II must be found)" >&2
  exit 2
fi
out=${OUT:-comparison-results}
ranks_list=${RANKS:-1 2}
cores=${CORES:-$(nproc)}
solvers=${SOLVERS:-cg gmres}
precision=${PRECISION:-mixed}
methods=${METHODS:-dealii-chebyshev tpmg-in-dealii tpmg-cpu}
repeat=${REPEAT:-2}
quick=${QUICK:-0}
block_sor=${BLOCK_SOR:-0}
if [[ $quick == 1 ]]; then
  block_sor_mib=${BLOCK_SOR_MIB:-64}
else
  block_sor_mib=${BLOCK_SOR_MIB:-4096}
fi
dims=${DIMS:-3 2}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
if [[ -n ${MPIRUN:-} ]]; then
  read -r -a mpirun <<<"$MPIRUN"
else
  mpirun=(mpirun)
  if ((EUID == 0)); then
    mpirun+=(--allow-run-as-root)
  fi
fi

mkdir -p "$out"
csv="$out/comparison.csv"
block_csv="$out/block-sor.csv"
log="$out/runs.log"
rm -f "$csv" "$block_csv" "$log"

# The problems: dim, degree, level, coarse cells, box. 4 coarse cells along
# the last direction, so that every problem runs on P = 1, 2 and 4 ranks (a
# slab of coarse cells per rank: tpmg's partition), with equal unit cells
# (the sine solution vanishes on the boundary). 2D is a subset (k = 2, 4), so
# that the default run (12 runs a problem: P = 1, 2 x CG, GMRES x 3 methods)
# stays within about 25 minutes on 2 cores; the 3D problems take most of it.
problems=(
  "3 1 6 1,1,4 0,1,0,1,0,4"
  "3 2 5 1,1,4 0,1,0,1,0,4"
  "3 3 4 2,2,4 0,2,0,2,0,4"
  "3 4 4 1,1,4 0,1,0,1,0,4"
  "3 5 3 2,2,4 0,2,0,2,0,4"
  "3 6 3 2,2,4 0,2,0,2,0,4"
  "2 2 8 1,4 0,1,0,4"
  "2 4 7 1,4 0,1,0,4"
)

# DoFs of a level: prod_d (n_d 2^level k + 1).
n_dofs() { # degree level cells
  awk -v k="$1" -v l="$2" -v cells="$3" 'BEGIN {
    n = split(cells, c, ","); d = 1
    for (i = 1; i <= n; ++i) d *= c[i] * 2^l * k + 1
    printf "%.0f", d }'
}

# Bytes of block SOR's dense patch inverses on levels 1..level, as
# dealii-compare estimates them: prod_d (n_d 2^l - 1) patches of (2k-1)^dim DoFs.
block_sor_bytes() { # degree level cells
  awk -v k="$1" -v L="$2" -v cells="$3" 'BEGIN {
    n = split(cells, c, ","); bytes = 0
    for (l = 1; l <= L; ++l) {
      patches = 1
      for (i = 1; i <= n; ++i) patches *= c[i] * 2^l - 1
      bytes += patches * (2 * k - 1)^(2 * n) * 8
    }
    printf "%.0f", bytes }'
}

run() { # csv-file ranks solver arguments...
  local file=$1 ranks=$2 solver=$3
  shift 3
  local threads=$((cores / ranks))
  ((threads >= 1)) || threads=1
  local launch=("${mpirun[@]}" -np "$ranks")
  if ((threads > 1)); then
    launch+=(--bind-to none)
  fi
  echo "\$ ${launch[*]} $program $* --threads $threads --solver $solver" >>"$log"
  "${launch[@]}" "$program" "$@" --threads "$threads" --repeat "$repeat" \
    --solver "$solver" --precision "$precision" --block-sor-max-mib "$block_sor_mib" \
    --csv "$file" >>"$log" 2>&1 || {
    echo "comparison.sh: dealii-compare failed (see $log): $*" >&2
    exit 1
  }
}

start=$(date +%s)
for problem in "${problems[@]}"; do
  read -r dim k level cells box <<<"$problem"
  [[ " $dims " == *" $dim "* ]] || continue
  if [[ $quick == 1 ]]; then
    while (($(n_dofs "$k" "$level" "$cells") > 20000 && level > 1)); do
      level=$((level - 1))
    done
  fi
  args=(--dim "$dim" --degree "$k" --level "$level" --cells "$cells" --box "$box")
  echo "${dim}D Q$k, level $level, cells $cells: $(n_dofs "$k" "$level" "$cells") DoFs" \
    "($(($(date +%s) - start)) s)"
  for ranks in $ranks_list; do
    for solver in $solvers; do
      for method in $methods; do
        run "$csv" "$ranks" "$solver" "${args[@]}" --methods "$method"
      done
    done
  done

  [[ $block_sor == 1 ]] || continue
  # Block SOR at the largest level whose patch inverses fit, on one rank, with
  # tpmg at the same size for the ratio (where none fits, its row says
  # "skipped (size)").
  block_level=$level
  while ((block_level > 1)) &&
    (($(block_sor_bytes "$k" "$block_level" "$cells") > block_sor_mib * 1048576)); do
    block_level=$((block_level - 1))
  done
  block_args=(--dim "$dim" --degree "$k" --level "$block_level" --cells "$cells" --box "$box")
  echo "  block SOR at level $block_level: $(n_dofs "$k" "$block_level" "$cells") DoFs"
  for solver in $solvers; do
    for method in dealii-block-sor tpmg-in-dealii tpmg-cpu; do
      run "$block_csv" 1 "$solver" "${block_args[@]}" --methods "$method"
    done
  done
done
elapsed=$(($(date +%s) - start))
echo "runs took $elapsed s"

# The markdown: per problem the fastest converged run of each side with its
# configuration and the ratio of solve times, then every run.
markdown() { # csv-file
  awk -F, '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    {
      key = $col["dim"] "," $col["degree"] "," $col["level"]
      if (!(key in seen)) { seen[key] = 1; order[++n] = key; dofs[key] = $col["n_dofs"] }
      rows[++n_rows] = $0
      m = $col["method"]
      if ($col["status"] == "ok" && $col["converged"] == "true" &&
          (!((key, m) in best) || $col["solve_seconds"] < best[key, m])) {
        best[key, m] = $col["solve_seconds"]
        config[key, m] = sprintf("P = %s, %s thr., %s, %s it.", $col["ranks"], $col["threads"],
                                 $col["solver"], $col["iterations"])
      }
    }
    END {
      print "Fastest converged run of each method (solve time, the fastest of the repeats),"
      print "and the fastest tpmg run (tpmg-in-dealii or tpmg-cpu) over the fastest deal.II run:"
      print ""
      print "| dim | k | DoFs | dealii-chebyshev [s] | tpmg-in-dealii [s] | tpmg-cpu [s] | tpmg best / deal.II best |"
      print "|---:|---:|---:|---|---|---|---:|"
      for (p = 1; p <= n; ++p) {
        key = order[p]
        split(key, kk, ",")
        printf "| %s | %s | %s |", kk[1], kk[2], dofs[key]
        split("dealii-chebyshev tpmg-in-dealii tpmg-cpu", side, " ")
        for (s = 1; s <= 3; ++s)
          if ((key, side[s]) in best)
            printf " %.3g (%s) |", best[key, side[s]], config[key, side[s]]
          else
            printf " |"
        tpmg = ""
        if ((key, "tpmg-in-dealii") in best) tpmg = best[key, "tpmg-in-dealii"]
        if (((key, "tpmg-cpu") in best) && (tpmg == "" || best[key, "tpmg-cpu"] < tpmg))
          tpmg = best[key, "tpmg-cpu"]
        if (tpmg != "" && ((key, "dealii-chebyshev") in best) && best[key, "dealii-chebyshev"] > 0)
          printf " %.2f |\n", tpmg / best[key, "dealii-chebyshev"]
        else
          printf " |\n"
      }
      print ""
      print "Every run:"
      print ""
      print "| dim | k | level | DoFs | method | P | threads | precision | solver | iterations | setup [s] | solve [s] | MDoF/s | L2 error | memory [MiB] |"
      print "|---:|---:|---:|---:|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|"
      for (r = 1; r <= n_rows; ++r) {
        split(rows[r], f, ",")
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | ", f[col["dim"]], f[col["degree"]],
          f[col["level"]], f[col["n_dofs"]], f[col["method"]], f[col["ranks"]], f[col["threads"]],
          f[col["precision"]], f[col["solver"]]
        if (f[col["status"]] != "ok") { printf "%s | | | | | |\n", f[col["status"]]; continue }
        printf "%s%s | %.3g | %.3g | %.3g | %.2e | %.0f |\n", f[col["iterations"]],
          f[col["converged"]] == "true" ? "" : " (not converged)", f[col["setup_seconds"]],
          f[col["solve_seconds"]], f[col["dofs_per_second"]] / 1e6, f[col["l2_error"]],
          f[col["memory_bytes"]] / 1048576
      }
    }' "$1"
}

{
  echo "# dealii-compare results"
  echo
  echo "$(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
  echo "$(nproc) cores, $cores used; P MPI ranks ($ranks_list) with $cores / P threads each"
  echo "(deal.II: TBB, tpmg: OpenMP), solvers $solvers, precision $precision, fastest of"
  echo "$repeat solves, OMP_WAIT_POLICY=$OMP_WAIT_POLICY; times are the slowest rank's,"
  echo "memory the sum over the ranks. The runs took $elapsed s."
  echo
  echo "## 1-4 M DoFs"
  echo
  markdown "$csv"
  if [[ $block_sor == 1 ]]; then
    echo
    echo "## deal.II's RelaxationBlockSOR (one rank) at the sizes where it fits (patch inverses <= $block_sor_mib MiB)"
    echo
    markdown "$block_csv"
  fi
} >"$out/comparison.md"
echo "wrote $csv and $out/comparison.md"
