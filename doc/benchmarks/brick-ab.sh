#!/usr/bin/env bash
# A/B of the CUDA 3D brick operator kernel (cuda_kernels/tpmg-cuda-brick.cuh):
# the working tree's kernel against the one of a base commit, on the same
# random vectors, in one process (doc/benchmarks.md, "The brick operator's
# machine code"). Builds on any machine with nvcc (sm_90); runs where there is
# a GPU:
#
#   bash doc/benchmarks/brick-ab.sh BASE [OUTPUT]   # build OUTPUT (default ./brick-ab)
#   ./brick-ab                                      # on the GPU machine
#
# The base header is taken from git, its names given a _base suffix, and both
# kernels are compiled into one program (doc/benchmarks/brick-ab.cu).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
base=${1:?usage: brick-ab.sh BASE-COMMIT [OUTPUT]}
out=${2:-brick-ab}
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git show "$base:cuda_kernels/tpmg-cuda-brick.cuh" |
  perl -pe 's/TPMG_CUDA_BRICK_CUH/TPMG_CUDA_BRICK_BASE_CUH/g;
            s/\b(brick_shape|brick_table|bank_stride|brick_config|brick_rows|brick_grid|laplace_brick_kernel|laplace_brick)\b/$1_base/g' \
    > "$tmp/tpmg-cuda-brick-base.cuh"
"$nvcc" -std=c++17 -O3 -arch=sm_90 -Icuda_kernels -Ic_api/include -Ic_api/src -I"$tmp" \
  -DTPMG_BRICK_BASE="\"$base\"" doc/benchmarks/brick-ab.cu -o "$out"
echo "built $out (base $base)"
