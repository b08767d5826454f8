#!/usr/bin/env bash
# Builds rsz with the CUDA backend (RSZ_CUDA=ON) and runs the CUDA tests (ctest label `cuda`: the CUDA backend
# against the CPU backend, bit for bit) and the core tests, on a machine with an NVIDIA GPU and nvcc.
# usage: bash scripts/test-cuda.sh [BUILD_DIR]
# Environment: RSZ_BUILD_IO=OFF builds the core library alone (a machine without the codec libraries);
# RSZ_GTEST_SOURCE points at GoogleTest's sources where no GoogleTest package is installed (default: /usr/src/googletest
# or third_party/googletest when present).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cuda}
gtest=${RSZ_GTEST_SOURCE:-}
for candidate in third_party/googletest /usr/src/googletest; do
  if [[ -z $gtest && -f $candidate/CMakeLists.txt ]]; then gtest=$(realpath "$candidate"); fi
done
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DRSZ_CUDA=ON \
  -DRSZ_BUILD_IO="${RSZ_BUILD_IO:-ON}" -DRSZ_GTEST_SOURCE="$gtest"
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" -L cuda --output-on-failure
if [[ ${RSZ_BUILD_IO:-ON} == OFF ]]; then
  ctest --test-dir "$build" -LE cuda -j "$(nproc)" --output-on-failure
fi
