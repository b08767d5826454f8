#!/usr/bin/env bash
# Builds rsz_bench twice for bench/threads_device.sh (RESULTS_THREADS.md): the OpenMP tree (fa03ef8, unpacked into
# build-omp-src) into build-omp, and this checkout (rsz's own pool) into build-pool. Core library only, Release,
# Ninja, -j16, no CUDA, no tests. Where no nlohmann_json package is installed, build-deps/ holds one (its include/ and
# share/cmake/nlohmann_json/, copied from a machine that has it).
#
# usage (repository root): bench/threads_build.sh
#   before, on a machine with the repository: mkdir build-omp-src && git archive fa03ef8 CMakeLists.txt cmake core bench
#   | tar -x -C build-omp-src
set -euo pipefail
log=${OUT:-/tmp}/build.log
options=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DRSZ_BUILD_IO=OFF -DRSZ_BUILD_TESTS=OFF -DRSZ_BUILD_BENCH=ON
         -DRSZ_CUDA=OFF "-DCMAKE_CXX_FLAGS=-include system_error")
# -include system_error: core/src/cpu/pool.cpp (447936c) catches std::system_error without including <system_error>;
# GCC 12's <thread> brings it along, GCC 13's (Ubuntu 24.04) does not, and the pool build fails there. Both trees
# get the flag, so that they build alike.
if [ -d build-deps/share/cmake/nlohmann_json ]; then
  options+=(-Dnlohmann_json_DIR="$PWD/build-deps/share/cmake/nlohmann_json")
fi
{
  echo "== compiler"; c++ --version | head -1; cmake --version | head -1
  for tree in omp pool; do
    src=build-omp-src
    [ "$tree" = pool ] && src=.
    echo "== $tree ($src)"
    start=$SECONDS
    cmake -S "$src" -B "build-$tree" "${options[@]}"
    cmake --build "build-$tree" -j16 --target rsz_bench
    echo "== $tree built in $((SECONDS - start)) s"
  done
} 2>&1 | tee "$log"
