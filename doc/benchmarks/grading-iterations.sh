#!/usr/bin/env bash
# Iterations to 1e-9 on graded coarse cells (tpmg-poisson --grading R), CPU:
# the default solver (fmg-gmres, mixed, fused smoother) and plain V-cycles in
# double, u = prod sin(pi x_d) on the unit square/cube with 4 coarse cells per
# direction whose widths grow as R^i (R = 1: equal cells, the reference).
# Output: one line per case, the default solver's L2 error last.
#   bash doc/benchmarks/grading-iterations.sh build/bin/tpmg-poisson [CASES]
bin=${1:?usage: grading-iterations.sh PATH/TO/tpmg-poisson [dim:k:L ...]}
shift
cases=${*:-2:1:6 2:2:5 2:4:4 2:7:3 3:1:3 3:2:2 3:4:1 3:7:1}
export OMP_WAIT_POLICY=passive
echo "dim k L R default vcycle_double l2_error_default"
for case in $cases; do
  IFS=: read -r dim k L <<< "$case"
  cells=4,4
  [ "$dim" = 3 ] && cells=4,4,4
  for R in 1 1.5 4; do
    line=""
    l2=-
    for solver in "fmg-gmres mixed" "vcycle double"; do
      set -- $solver
      json=$("$bin" --dim "$dim" --degree "$k" --level "$L" --cells "$cells" --grading "$R" \
        --solver "$1" --precision "$2" --json | tail -1)
      it=$(sed -E 's/.*"iterations":([0-9]+).*/\1/' <<< "$json")
      grep -q '"converged":true' <<< "$json" || it="$it(n.c.)"
      line="$line $it"
      [ "$1" = fmg-gmres ] && l2=$(sed -E 's/.*"l2_error":([^,}]*).*/\1/' <<< "$json")
    done
    echo "$dim $k $L $R$line $l2"
  done
done
