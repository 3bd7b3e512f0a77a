#!/usr/bin/env bash
# Iterations to 1e-9 with a reaction term c (tpmg-poisson --reaction), CPU:
# the default solver (fmg-gmres, mixed), and V-cycle preconditioned GMRES and
# plain V-cycles in double (the V-cycle's own contraction), on the unit
# square/cube, u = prod sin(pi x_d). Output: one line per solve.
#   bash doc/benchmarks/reaction-iterations.sh build/bin/tpmg-poisson
bin=${1:?usage: reaction-iterations.sh PATH/TO/tpmg-poisson}
export OMP_WAIT_POLICY=passive
echo "dim k L c c_h2 default gmres_double vcycle_double l2_error_default"
for case in 2:1:9 2:2:8 2:4:7 2:7:6 3:1:6 3:2:5 3:4:4 3:7:3; do
  IFS=: read -r dim k L <<< "$case"
  for c in 0 1 1e3 1e6 1e9; do
    line=""
    for solver in "fmg-gmres mixed" "gmres double" "vcycle double"; do
      set -- $solver
      json=$("$bin" --dim "$dim" --degree "$k" --level "$L" --reaction "$c" --solver "$1" \
        --precision "$2" --json | tail -1)
      line="$line $(sed -E 's/.*"iterations":([0-9]+).*/\1/' <<< "$json")"
      [ "$1" = fmg-gmres ] && l2=$(sed -E 's/.*"l2_error":([^,}]*).*/\1/' <<< "$json")
    done
    echo "$dim $k $L $c $(awk "BEGIN{printf \"%.3g\", $c * 2^(-2 * $L)}")$line $l2"
  done
done
