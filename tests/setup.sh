#!/usr/bin/env bash
# Install what building and testing tpmg needs on Debian 12, as root (or through
# sudo). Idempotent: when every package is installed it only checks and exits,
# without touching the network.
#
#   bash tests/setup.sh
set -euo pipefail

# The C library, the programs and the tests: C compiler with OpenMP and the
# address/undefined-behaviour sanitizers (gcc's libgomp, libasan, libubsan),
# CMake >= 3.20, and the tools that tests call.
packages=(cmake gcc g++ make python3 valgrind)
# MPI: contexts on a communicator, the programs under mpirun, the MPI tests
mpi_packages=(libopenmpi-dev openmpi-bin)

# The fuzz targets (tests/fuzz/): clang with libFuzzer and the sanitizers'
# runtimes, and LLVM's OpenMP runtime for clang's -fopenmp.
fuzz_packages=(clang libomp-dev)

# The deal.II bridge (bridge/): deal.II 9.4 with MPI, p4est and Trilinos
# (Debian 12's package; it brings the MPI compilers and libraries).
bridge_packages=(libdeal.ii-dev)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

wanted=("${packages[@]}" "${mpi_packages[@]}" "${fuzz_packages[@]}" "${bridge_packages[@]}")
missing=()
for package in "${wanted[@]}"; do
  installed "$package" || missing+=("$package")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present (${wanted[*]})"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "setup: missing packages ${missing[*]}; run this script as root to install them" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
