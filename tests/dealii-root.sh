#!/usr/bin/env bash
# Build and test tpmg's deal.II bridge against Debian 13 (trixie)'s deal.II
# (9.6.2) on any Debian or Ubuntu machine, as root: the script makes a Debian 13
# root with debootstrap from Debian's archive, installs libdeal.ii-dev and the
# build tools in it with apt, and caches it; then it builds tpmg in the root
# (the bridge on, CUDA off) and runs the tests labelled bridge there.
#
#   bash tests/dealii-root.sh [test|root|version]
#     test     (default) make the root or reuse it, build, run `ctest -L bridge`
#     root     only make the root or reuse it
#     version  print the version of deal.II in the root (fails where none is)
#
# Environment:
#   TPMG_DEALII_ROOT    the root (default /var/cache/tpmg/trixie-root): one that
#                       a previous run completed is reused; one that a run left
#                       half made (in TPMG_DEALII_ROOT.partial) is made again
#   TPMG_DEBIAN_MIRROR  Debian's archive (default http://deb.debian.org/debian)
#   TPMG_JOBS           parallelism of the build and the tests (default 2)
#
# The source tree is bind-mounted read-only at /src/tpmg in the root and built
# in /build/tpmg there, afresh each run: the programs that the tests labelled
# bridge run, without warnings; /proc, /sys, /dev and a /dev/shm are
# mounted for apt and MPI. Every mount is undone on exit, also on failure or
# interruption. Exit status: 0 when every step passed, nonzero otherwise.
set -euo pipefail

mode=${1:-test}
case $mode in
  test | root | version) ;;
  *)
    echo "dealii-root.sh: unknown mode '$mode' (expected test, root or version)" >&2
    exit 2
    ;;
esac
if [ "$(id -u)" -ne 0 ]; then
  echo "dealii-root.sh: needs root (debootstrap, chroot, mount)" >&2
  exit 1
fi

source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=${TPMG_DEALII_ROOT:-/var/cache/tpmg/trixie-root}
mirror=${TPMG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
jobs=${TPMG_JOBS:-2}
suite=trixie
# deal.II with its MPI, p4est, Trilinos, PETSc and Kokkos, and what builds tpmg
# (CMake, the GNU compilers with OpenMP, make).
packages=(libdeal.ii-dev cmake g++ make)
stamp=.tpmg-root-packages

# Mounts made so far, undone in reverse order on exit.
mounts=()
unmount_all() {
  local i status=0
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    # processes of an interrupted build may still be ending
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      umount "${mounts[i]}" 2> /dev/null && continue 2
      sleep 1
    done
    echo "dealii-root.sh: could not unmount ${mounts[i]}; detaching it lazily" >&2
    umount -l "${mounts[i]}" || status=1
  done
  mounts=()
  return $status
}
trap unmount_all EXIT
trap 'exit 130' INT TERM

# mount_in DIR MOUNT-ARGS...: mount under the root DIR, remembered for unmounting.
mount_in() {
  local target=$1
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounts+=("$target")
}

# The file systems apt's maintainer scripts and MPI need in root DIR.
mount_system() {
  mount_in "$1/proc" -t proc proc
  mount_in "$1/sys" -t sysfs sysfs
  mount_in "$1/dev" --bind /dev
  mount_in "$1/dev/shm" -t tmpfs -o mode=1777,nosuid,nodev tmpfs
}

# Whether anything is mounted at or under DIR (a root never deleted then).
mounted_under() {
  findmnt -rn -o TARGET | grep -q -e "^$1\$" -e "^$1/"
}

# in_root DIR COMMAND...: run COMMAND in root DIR with a clean environment.
in_root() {
  local dir=$1
  shift
  chroot "$dir" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# install_packages DIR: install the packages in root DIR with apt.
install_packages() {
  cp /etc/resolv.conf "$1/etc/resolv.conf"
  # no services are started in the root
  printf '#!/bin/sh\nexit 101\n' > "$1/usr/sbin/policy-rc.d"
  chmod +x "$1/usr/sbin/policy-rc.d"
  mount_system "$1"
  local log=$1/var/log/tpmg-apt.log
  if ! {
    in_root "$1" apt-get -q -o Acquire::Retries=3 update &&
      in_root "$1" apt-get -q -y -o Acquire::Retries=3 install --no-install-recommends \
        "${packages[@]}" &&
      in_root "$1" apt-get clean
  } > "$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "dealii-root.sh: apt failed in $1 (log: $log)" >&2
    exit 1
  fi
  unmount_all
  printf '%s\n' "${packages[@]}" > "$1/$stamp"
}

make_root() {
  local start=$SECONDS parent tmp
  if [ -f "$root/$stamp" ]; then
    if [ "$(cat "$root/$stamp")" = "$(printf '%s\n' "${packages[@]}")" ]; then
      echo "dealii-root.sh: reusing the root $root"
      return
    fi
    echo "dealii-root.sh: the root $root lacks packages; installing them"
    install_packages "$root"
    echo "dealii-root.sh: packages installed in $((SECONDS - start)) s"
    return
  fi

  # made in a side directory and moved into place when complete, so that an
  # interrupted run leaves no root that looks usable
  parent=$(dirname "$root")
  tmp=$root.partial
  if [ -e "$root" ]; then
    # a complete root has the stamp, and nothing else is ever moved there
    echo "dealii-root.sh: $root exists and is not a root this script made;" \
      "remove it or set TPMG_DEALII_ROOT elsewhere" >&2
    exit 1
  fi
  mkdir -p "$parent"
  if [ -e "$tmp" ]; then
    if mounted_under "$tmp"; then
      echo "dealii-root.sh: $tmp has file systems mounted in it; unmount them first" >&2
      exit 1
    fi
    echo "dealii-root.sh: removing the incomplete root $tmp"
    rm -rf --one-file-system "$tmp"
  fi

  if ! command -v debootstrap > /dev/null ||
    [ ! -f /usr/share/keyrings/debian-archive-keyring.gpg ]; then
    echo "dealii-root.sh: installing debootstrap and Debian's archive keys"
    DEBIAN_FRONTEND=noninteractive apt-get -q update
    DEBIAN_FRONTEND=noninteractive apt-get -q -y install --no-install-recommends \
      debootstrap debian-archive-keyring
  fi

  echo "dealii-root.sh: debootstrap $suite from $mirror into $tmp"
  debootstrap --variant=minbase "$suite" "$tmp" "$mirror" > "$parent/debootstrap.log" 2>&1 || {
    tail -n 30 "$parent/debootstrap.log" >&2
    [ -f "$tmp/debootstrap/debootstrap.log" ] && tail -n 30 "$tmp/debootstrap/debootstrap.log" >&2
    echo "dealii-root.sh: debootstrap failed (log: $parent/debootstrap.log)" >&2
    exit 1
  }
  echo "dealii-root.sh: bootstrapped in $((SECONDS - start)) s"

  local install_start=$SECONDS
  echo "dealii-root.sh: installing ${packages[*]}"
  install_packages "$tmp"
  echo "dealii-root.sh: packages installed in $((SECONDS - install_start)) s"
  mv "$tmp" "$root"
}

# The upstream version of deal.II in the root, e.g. 9.6.2.
dealii_version() {
  [ -f "$root/$stamp" ] || return 1
  dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Version}\n' libdeal.ii-dev |
    sed 's/-[^-]*$//'
}

build_and_test() {
  local start=$SECONDS build=/build/tpmg version log
  version=$(dealii_version)
  echo "dealii-root.sh: deal.II $version (Debian $suite's libdeal.ii-dev)"

  mount_system "$root"
  mount_in "$root/src/tpmg" --bind "$source_dir"
  mount -o remount,bind,ro "$root/src/tpmg"
  rm -rf --one-file-system "${root:?}$build"
  mkdir -p "$root$build"

  # ctest's children run as root in the root: MPI_Init as a singleton
  local env=(OMP_WAIT_POLICY=PASSIVE OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
  log=$root$build/configure.log
  if ! in_root "$root" "${env[@]}" cmake -S /src/tpmg -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DTPMG_ENABLE_CUDA=OFF -DTPMG_ENABLE_BRIDGE=ON > "$log" 2>&1; then
    cat "$log" >&2
    echo "dealii-root.sh: configuring failed" >&2
    return 1
  fi
  if ! grep -q "deal.II .* found: building the bridge" "$log"; then
    cat "$log" >&2
    echo "dealii-root.sh: CMake did not find deal.II in the root" >&2
    return 1
  fi
  grep "deal.II .* found" "$log"
  # only the programs that the tests labelled bridge run, as their add_test()
  # lines in the CTestTestfile.cmake files name them (targets are named as
  # their programs)
  local tests targets
  tests=$(in_root "$root" ctest --test-dir "$build" -N -L bridge |
    sed -n 's/^ *Test *#[0-9]*: \(.*\)$/add_test([=[\1]=]/p')
  mapfile -t targets < <(find "$root$build" -name CTestTestfile.cmake -exec grep -h '^add_test(' {} + |
    grep -F "$tests" | grep -o "$build/bin/[A-Za-z0-9_.-]*" | sed 's#.*/##' | sort -u)
  if [ -z "$tests" ] || [ ${#targets[@]} -eq 0 ]; then
    echo "dealii-root.sh: CMake defined no tests labelled bridge" >&2
    return 1
  fi
  echo "dealii-root.sh: building ${targets[*]}"
  in_root "$root" "${env[@]}" cmake --build "$build" -j"$jobs" --target "${targets[@]}" \
    > "$root$build/build.log" 2>&1 || {
    tail -n 60 "$root$build/build.log" >&2
    echo "dealii-root.sh: the build failed (log: $root$build/build.log)" >&2
    return 1
  }
  if grep -q "warning:" "$root$build/build.log"; then
    grep -A3 "warning:" "$root$build/build.log" >&2
    echo "dealii-root.sh: the build has warnings" >&2
    return 1
  fi
  echo "dealii-root.sh: built in $((SECONDS - start)) s"

  local test_start=$SECONDS
  in_root "$root" "${env[@]}" ctest --test-dir "$build" --output-on-failure --no-tests=error \
    -j"$jobs" -L bridge
  echo "dealii-root.sh: deal.II $version: the bridge tests passed in $((SECONDS - test_start)) s"
}

if [ "$mode" = version ]; then
  dealii_version
  exit
fi

# one run at a time on a root
mkdir -p "$(dirname "$root")"
exec 9> "$root.lock"
flock 9
make_root
if [ "$mode" = test ]; then
  build_and_test
  unmount_all
fi
