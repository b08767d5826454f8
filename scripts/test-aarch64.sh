#!/usr/bin/env bash
# rsz cross-compiled for aarch64 with Debian's toolchain and its test suite run under qemu-user: what keeps rsz
# building and exact on ARM servers and Apple-silicon Linux VMs.
#
#   bash scripts/test-aarch64.sh          core, io and the rsz program, and every test of theirs
#   bash scripts/test-aarch64.sh --core   the core library and its tests only (needs no codec libraries)
#
# Installs g++-aarch64-linux-gnu, qemu-user and mmdebstrap where missing (apt, as root or through sudo). The codec
# libraries for aarch64 (libpng, libjpeg-turbo, libtiff, libwebp, OpenCV imgcodecs, pugixml) come from Debian's arm64
# archive into a tree of their own, build-aarch64/sysroot (mmdebstrap --variant=extract: unpacked, nothing of this
# machine's changes), made once and kept. The Python module and the installed-package test are left out: they need
# an aarch64 interpreter and compiler to run.
set -euo pipefail
cd "$(dirname "$0")/.."

core_only=0
case "${1:-}" in
  --core) core_only=1 ;;
  "") ;;
  *) echo "usage: bash scripts/test-aarch64.sh [--core]" >&2; exit 2 ;;
esac

missing=()
command -v aarch64-linux-gnu-g++ > /dev/null || missing+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 > /dev/null || missing+=(qemu-user)
[[ -d /usr/src/googletest ]] || missing+=(googletest)
((core_only)) || command -v mmdebstrap > /dev/null || missing+=(mmdebstrap)
if ((${#missing[@]})); then
  sudo_cmd=()
  ((EUID == 0)) || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
    > /dev/null
fi

build=build-aarch64
options=(-DRSZ_BUILD_IO=OFF)
if ((!core_only)); then
  sysroot=$PWD/$build/sysroot
  packages=libc6-dev,libstdc++-12-dev,libgomp1,zlib1g-dev,libpng-dev,libjpeg62-turbo-dev,libgif-dev,libheif-dev,liblcms2-dev,libjxl-dev,libtiff-dev,libwebp-dev,libopencv-imgcodecs-dev,libpugixml-dev,libyaml-cpp-dev,libarchive-dev,libdeflate-dev,nlohmann-json3-dev,libcli11-dev
  # The stamp holds the package list: a sysroot made from another list is made again.
  if [[ ! -f $sysroot/.complete || $(cat "$sysroot/.complete") != "$packages" ]]; then
    rm -rf "$sysroot"
    mkdir -p "$build"
    # The same Debian release as this machine (bookworm where it cannot be read).
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    mmdebstrap --quiet --arch=arm64 --variant=extract --include="$packages" \
      "$suite" "$sysroot" http://deb.debian.org/debian
    # An unpacked tree runs no package scripts: BLAS and LAPACK (needed by OpenCV) have their names through Debian's
    # alternatives, which only the scripts make.
    lib=$sysroot/usr/lib/aarch64-linux-gnu
    ln -sf blas/libblas.so.3 "$lib/libblas.so.3"
    ln -sf lapack/liblapack.so.3 "$lib/liblapack.so.3"
    echo "$packages" > "$sysroot/.complete"
  fi
  options=(-DRSZ_BUILD_IO=ON -DRSZ_PYTHON=OFF -DRSZ_AARCH64_SYSROOT="$sysroot")
fi

cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
  "${options[@]}" -DRSZ_GTEST_SOURCE=/usr/src/googletest -DRSZ_WARNINGS_AS_ERRORS=ON > /dev/null
cmake --build "$build" -j"$(nproc)"
# Under emulation every test is slower: the default timeout (1500 s) is kept, tests run side by side.
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
