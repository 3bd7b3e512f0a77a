#!/usr/bin/env bash
# Iterations to 1e-9 with a variable coefficient a (tpmg-poisson --coefficient),
# CPU: the default solver (fmg-gmres, mixed), V-cycle preconditioned GMRES and
# plain V-cycles in double (the V-cycle's own contraction), all with the
# global smoother (the only one with a coefficient), on the unit square/cube:
# a = 1 and step-37's a with u = prod sin(pi x_d); the checkerboards (4 parts
# per direction, a = C on every other) and the rough random:C (per cell) with
# f = 1. TPMG_COEFFICIENTS sets the coefficients (default: one, step37 and
# three checkerboards). Output: one line per case.
#   bash doc/benchmarks/coefficient-iterations.sh build/bin/tpmg-poisson [CASES]
bin=${1:?usage: coefficient-iterations.sh PATH/TO/tpmg-poisson [dim:k:L ...]}
shift
cases=${*:-2:1:9 2:2:8 2:4:7 2:7:6 3:1:6 3:2:5 3:4:4 3:7:3}
export OMP_WAIT_POLICY=passive
echo "dim k L coefficient default gmres_double vcycle_double l2_error_default"
for case in $cases; do
  IFS=: read -r dim k L <<< "$case"
  for a in ${TPMG_COEFFICIENTS:-one step37 checkerboard:10 checkerboard:1e3 checkerboard:1e6}; do
    rhs=sine
    [[ $a == checkerboard* || $a == random* ]] && rhs=one
    line=""
    l2=-
    for solver in "fmg-gmres mixed" "gmres double" "vcycle double"; do
      set -- $solver
      json=$("$bin" --dim "$dim" --degree "$k" --level "$L" --coefficient "$a" --rhs "$rhs" \
        --smoother global --solver "$1" --precision "$2" --json | tail -1)
      it=$(sed -E 's/.*"iterations":([0-9]+).*/\1/' <<< "$json")
      grep -q '"converged":true' <<< "$json" || it="$it(not converged)"
      line="$line $it"
      if [ "$1" = fmg-gmres ] && [ "$rhs" = sine ]; then
        l2=$(sed -E 's/.*"l2_error":([^,}]*).*/\1/' <<< "$json")
      fi
    done
    echo "$dim $k $L $a$line $l2"
  done
done
