#!/usr/bin/env bash
# Runs the coarse-solver comparison of doc/comparison.md ("Coarse solvers:
# tpmg's and Trilinos"): dealii-poisson on 3D Q3 meshes of many coarse cells
# with each coarse solver (tpmg's CoarseSolver; TrilinosCoarseSolver with ML's
# AMG in CG to 1e-6 and to 1e-3; Amesos KLU), REPEAT runs each, and prints a
# markdown table of the medians.
#
# Usage: bash doc/comparison-coarse.sh [BUILD_DIR]     (default BUILD_DIR: build)
#
# Environment (all optional):
#   OUT      where the programs' JSON lines go (default comparison-coarse-results/)
#   THREADS  tpmg's OpenMP and deal.II's TBB threads (default 1)
#   REPEAT   runs per configuration, the median counts (default 3)
#   CASES    "cells,level ..." (default "8,1 8,2 16,1": 8x8x8 and 16x16x16 coarse
#            cells refined once or twice)
#   QUICK=1  2D Q2 meshes of 30x24 cells refined once, to check that the script works
set -euo pipefail

build=${1:-build}
program="$build/bin/dealii-poisson"
if [[ ! -x $program ]]; then
  echo "comparison-coarse.sh: $program not found: build it first (deal.II must be found)" >&2
  exit 2
fi
out=${OUT:-comparison-coarse-results}
threads=${THREADS:-1}
repeat=${REPEAT:-3}
cases=${CASES:-8,1 8,2 16,1}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
mkdir -p "$out"
runs="$out/runs.jsonl"
rm -f "$runs"

coarse_solvers=("tpmg" "trilinos-amg" "trilinos-amg --coarse-tol 1e-3" "trilinos-direct")
for c in $cases; do
  n=${c%,*}
  level=${c#*,}
  problem=(--dim 3 --degree 3 --level "$level" --cells "$n,$n,$n")
  if [[ ${QUICK:-0} == 1 ]]; then
    problem=(--dim 2 --degree 2 --level 1 --cells 30,24 --box 0,2,0,1.6)
  fi
  for coarse in "${coarse_solvers[@]}"; do
    for ((r = 0; r < repeat; ++r)); do
      # shellcheck disable=SC2086 # the coarse solver's words are options
      "$program" "${problem[@]}" --coarse $coarse --threads "$threads" --json |
        tail -n 1 >> "$runs"
    done
  done
done

python3 - "$runs" << 'EOF'
import json, statistics, sys
from collections import OrderedDict

groups = OrderedDict()
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (tuple(r["cells"]), r["level"], r["n_dofs"], r["coarse"], r["coarse_tolerance"])
    groups.setdefault(key, []).append(r)

def med(runs, field, scale=1.0):
    values = [r[field] for r in runs if r[field] is not None]
    return statistics.median(values) * scale if values else float("nan")

print("| coarse cells, level | DoFs | coarse solver | coarse set-up (s) "
      "| coarse solve per V-cycle (ms) | CG its per coarse solve | iterations "
      "| residual reduction | solve (s) | set-up, all (s) |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
for (cells, level, n_dofs, coarse, tol), runs in groups.items():
    name = coarse if tol is None else f"{coarse} ({tol:g})"
    its = sorted({r["iterations"] for r in runs})
    cg = med(runs, "coarse_iterations_per_cycle") if tol is not None else None
    print(f"| {'x'.join(map(str, cells))}, {level} | {n_dofs:,} | {name} "
          f"| {med(runs, 'coarse_setup_seconds'):.3g} "
          f"| {med(runs, 'coarse_seconds_per_cycle', 1e3):.3g} "
          f"| {'' if cg is None else f'{cg:.1f}'} "
          f"| {'/'.join(map(str, its))} "
          f"| {max(r['residual_reduction'] for r in runs):.2e} "
          f"| {med(runs, 'solve_seconds'):.3g} | {med(runs, 'setup_seconds'):.3g} |")
print(f"\n(median of {len(next(iter(groups.values())))} runs each)")
EOF
