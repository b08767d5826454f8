#!/usr/bin/env bash
# The core library (portable kernels, no x86 code) cross-compiled for aarch64 with Debian's toolchain and its whole
# test suite run under qemu-user: what keeps rsz building and exact on ARM servers and Apple-silicon Linux VMs.
# Installs g++-aarch64-linux-gnu and qemu-user where missing (apt, as root or through sudo). Builds in
# build-aarch64/. The io library and the command line need the codec libraries for aarch64, which this script does
# not install (see README: "Portability").
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v aarch64-linux-gnu-g++ > /dev/null || missing+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 > /dev/null || missing+=(qemu-user)
[[ -d /usr/src/googletest ]] || missing+=(googletest)
if ((${#missing[@]})); then
  sudo_cmd=()
  ((EUID == 0)) || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" > /dev/null
fi

cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
  -DRSZ_BUILD_IO=OFF -DRSZ_GTEST_SOURCE=/usr/src/googletest -DRSZ_WARNINGS_AS_ERRORS=ON > /dev/null
cmake --build build-aarch64 -j"$(nproc)"
# Under emulation every test is slower: the default timeout (1500 s) is kept, tests run side by side.
ctest --test-dir build-aarch64 --output-on-failure -j"$(nproc)"
