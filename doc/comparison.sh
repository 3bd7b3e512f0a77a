#!/usr/bin/env bash
# Runs the comparison of doc/comparison.md: dealii-compare for 3D k = 1..6 and
# 2D k = 1..8 at 1-4 M DoFs (deal.II's Chebyshev multigrid, tpmg in deal.II's
# multigrid, tpmg's solver on the CPU and, where a GPU is usable, on the GPU),
# and deal.II's RelaxationBlockSOR with tpmg at the largest size where the
# dense patch inverses fit, and writes the results as CSV and as markdown.
#
# Usage: bash doc/comparison.sh [BUILD_DIR]          (default BUILD_DIR: build)
#
# Environment (all optional):
#   OUT            where the results go (default comparison-results/): runs.log (the
#                  programs' output), comparison.csv, block-sor.csv, comparison.md
#   THREADS        deal.II's TBB threads and tpmg's OpenMP threads (default 2)
#   REPEAT         solves per method, the fastest counts (default 3)
#   SOLVER         gmres or cg (default gmres)
#   BLOCK_SOR_MIB  memory the block-SOR patch inverses may take, MiB (default 4096)
#   QUICK=1        tiny problems (about 10^4 DoFs, block SOR within 64 MiB), to check
#                  that the script works
#   DIMS           which dimensions to run (default "3 2")
#
# Each method runs in its own process (dealii-compare --methods), so that its
# memory (the growth of the peak resident set size) is its own. OpenMP waits
# passively unless OMP_WAIT_POLICY says otherwise, since deal.II's TBB threads
# share the cores with tpmg's OpenMP threads in tpmg-in-dealii.
set -euo pipefail

build=${1:-build}
program="$build/bin/dealii-compare"
if [[ ! -x $program ]]; then
  echo "comparison.sh: $program not found: build it first (deal.II must be found)" >&2
  exit 2
fi
out=${OUT:-comparison-results}
threads=${THREADS:-2}
repeat=${REPEAT:-3}
solver=${SOLVER:-gmres}
quick=${QUICK:-0}
if [[ $quick == 1 ]]; then
  block_sor_mib=${BLOCK_SOR_MIB:-64}
else
  block_sor_mib=${BLOCK_SOR_MIB:-4096}
fi
dims=${DIMS:-3 2}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

mkdir -p "$out"
csv="$out/comparison.csv"
block_csv="$out/block-sor.csv"
log="$out/runs.log"
rm -f "$csv" "$block_csv" "$log"

# The problems: dim, degree, level, coarse cells, box. One coarse cell where a
# level lands in 1-4 M DoFs; otherwise 3 (or 2,2,3) equal unit cells, which
# keeps the cells cubes and the sine solution zero on the boundary.
problems=(
  "3 1 7 1,1,1 0,1,0,1,0,1"
  "3 2 6 1,1,1 0,1,0,1,0,1"
  "3 3 4 3,3,3 0,3,0,3,0,3"
  "3 4 5 1,1,1 0,1,0,1,0,1"
  "3 5 3 3,3,3 0,3,0,3,0,3"
  "3 6 3 2,2,3 0,2,0,2,0,3"
  "2 1 10 1,1 0,1,0,1"
  "2 2 9 1,1 0,1,0,1"
  "2 3 9 1,1 0,1,0,1"
  "2 4 8 1,1 0,1,0,1"
  "2 5 8 1,1 0,1,0,1"
  "2 6 8 1,1 0,1,0,1"
  "2 7 8 1,1 0,1,0,1"
  "2 8 7 1,1 0,1,0,1"
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

run() { # csv-file arguments...
  local file=$1
  shift
  echo "\$ $program $*" >>"$log"
  "$program" "$@" --threads "$threads" --repeat "$repeat" --solver "$solver" \
    --block-sor-max-mib "$block_sor_mib" --csv "$file" >>"$log" 2>&1 || {
    echo "comparison.sh: dealii-compare failed (see $log): $*" >&2
    exit 1
  }
}

for problem in "${problems[@]}"; do
  read -r dim k level cells box <<<"$problem"
  [[ " $dims " == *" $dim "* ]] || continue
  if [[ $quick == 1 ]]; then
    while (($(n_dofs "$k" "$level" "$cells") > 20000 && level > 1)); do
      level=$((level - 1))
    done
  fi
  args=(--dim "$dim" --degree "$k" --level "$level" --cells "$cells" --box "$box")
  echo "${dim}D Q$k, level $level, cells $cells: $(n_dofs "$k" "$level" "$cells") DoFs"
  for method in dealii-chebyshev tpmg-in-dealii tpmg-cpu tpmg-cuda; do
    run "$csv" "${args[@]}" --methods "$method"
  done

  # Block SOR at the largest level whose patch inverses fit, with tpmg at the
  # same size for the ratio (where none fits, its row says "skipped (size)").
  block_level=$level
  while ((block_level > 1)) &&
    (($(block_sor_bytes "$k" "$block_level" "$cells") > block_sor_mib * 1048576)); do
    block_level=$((block_level - 1))
  done
  block_args=(--dim "$dim" --degree "$k" --level "$block_level" --cells "$cells" --box "$box")
  echo "  block SOR at level $block_level: $(n_dofs "$k" "$block_level" "$cells") DoFs"
  for method in dealii-block-sor tpmg-in-dealii tpmg-cpu; do
    run "$block_csv" "${block_args[@]}" --methods "$method"
  done
done

# The markdown: one row per problem and method, then the ratios the targets
# are stated in (solve times; set-up is in the rows).
markdown() { # csv-file
  awk -F, '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    {
      key = $col["dim"] "," $col["degree"] "," $col["level"]
      if (!(key in seen)) { seen[key] = 1; order[++n] = key; dofs[key] = $col["n_dofs"] }
      m = $col["method"]
      row[key, m] = $0
      if ($col["status"] == "ok") solve[key, m] = $col["solve_seconds"]
    }
    END {
      print "| dim | k | level | DoFs | method | iterations | setup [s] | solve [s] | MDoF/s | L2 error | memory [MiB] |"
      print "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"
      split("dealii-chebyshev dealii-block-sor tpmg-in-dealii tpmg-cpu tpmg-cuda", methods, " ")
      for (p = 1; p <= n; ++p) {
        key = order[p]
        for (j = 1; j <= 5; ++j) {
          if (!((key, methods[j]) in row)) continue
          split(row[key, methods[j]], f, ",")
          printf "| %s | %s | %s | %s | %s | ", f[col["dim"]], f[col["degree"]], f[col["level"]], f[col["n_dofs"]], methods[j]
          if (f[col["status"]] != "ok") { printf "%s | | | | | |\n", f[col["status"]]; continue }
          printf "%s%s | %.3g | %.3g | %.3g | %.2e | %.0f |\n", f[col["iterations"]],
            f[col["converged"]] == "true" ? "" : " (not converged)", f[col["setup_seconds"]],
            f[col["solve_seconds"]], f[col["dofs_per_second"]] / 1e6, f[col["l2_error"]],
            f[col["memory_bytes"]] / 1048576
        }
      }
      print ""
      print "| dim | k | DoFs | Chebyshev / tpmg-in-dealii | Chebyshev / tpmg-cpu | block SOR / tpmg-in-dealii | block SOR / tpmg-cpu |"
      print "|---:|---:|---:|---:|---:|---:|---:|"
      for (p = 1; p <= n; ++p) {
        key = order[p]
        split(key, kk, ",")
        printf "| %s | %s | %s |", kk[1], kk[2], dofs[key]
        split("dealii-chebyshev dealii-block-sor", slow, " ")
        for (s = 1; s <= 2; ++s)
          for (t = 1; t <= 2; ++t) {
            fast = t == 1 ? "tpmg-in-dealii" : "tpmg-cpu"
            if (((key, slow[s]) in solve) && ((key, fast) in solve) && solve[key, fast] > 0)
              printf " %.1f |", solve[key, slow[s]] / solve[key, fast]
            else
              printf " |"
          }
        printf "\n"
      }
    }' "$1"
}

{
  echo "# dealii-compare results"
  echo
  echo "$(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
  echo "$(nproc) cores; $threads threads (deal.II: TBB, tpmg: OpenMP), solver $solver,"
  echo "fastest of $repeat solves, OMP_WAIT_POLICY=$OMP_WAIT_POLICY. Ratios are of solve times."
  echo
  echo "## 1-4 M DoFs"
  echo
  markdown "$csv"
  echo
  echo "## deal.II's RelaxationBlockSOR at the sizes where it fits (patch inverses <= $block_sor_mib MiB)"
  echo
  markdown "$block_csv"
} >"$out/comparison.md"
echo "wrote $csv, $block_csv and $out/comparison.md"
