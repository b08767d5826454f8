#!/usr/bin/env bash
# Builds rsz with the CUDA backend (RSZ_CUDA=ON) and runs the CUDA tests (ctest label `cuda`: the CUDA backend
# against the CPU backend, bit for bit) and the core tests, on a machine with an NVIDIA GPU and nvcc.
# usage: bash scripts/test-cuda.sh [BUILD_DIR]
# Environment: RSZ_BUILD_IO=OFF builds the core library alone (a machine without the codec libraries);
# RSZ_DEPS_DIR=third_party/device-deps builds rsz::io and the program against the Debian libraries that
# scripts/device-deps.sh packed there (a machine without Debian packages; no OpenCV module);
# RSZ_GTEST_SOURCE points at GoogleTest's sources where no GoogleTest package is installed (default: /usr/src/googletest
# or third_party/googletest when present); RSZ_CUDA_SANITIZE=1 also runs the CUDA tests under compute-sanitizer
# (memcheck, racecheck, synccheck; about 5 minutes on an H100), failing on any error it reports. Where the default
# python3 has torch and pybind11 (the device machine's), the Python module is built too and
# tests/python/test_cuda_tensors.py runs: torch CUDA tensors in and out of rsz's array functions.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cuda}
gtest=${RSZ_GTEST_SOURCE:-}
deps=()
if [[ -n ${RSZ_DEPS_DIR:-} ]]; then
  d=$(realpath "$RSZ_DEPS_DIR")
  multiarch=$d/usr/lib/x86_64-linux-gnu
  deps=(-DCMAKE_PREFIX_PATH="$d/usr;$multiarch/cmake;$d/usr/share/cmake"
        -DCMAKE_INCLUDE_PATH="$d/usr/include;$d/usr/include/x86_64-linux-gnu" -DCMAKE_LIBRARY_PATH="$multiarch"
        -DRSZ_OPENCV_MODULE=OFF -DRSZ_PYTHON=OFF)
  if pybind=$(python3 -c 'import torch, pybind11; print(pybind11.get_cmake_dir())' 2> /dev/null); then
    deps+=(-DRSZ_PYTHON=ON -DPython3_EXECUTABLE="$(command -v python3)" -Dpybind11_DIR="$pybind")
    # The device machine's default C++ compiler (CXX=/opt/gcc/bin/g++, a wrapper) links libstdc++ into what it builds:
    # in a Python process, which has the system's libstdc++ already, the module's own copy crashed in its first call.
    # The system compiler (the same GCC) links the shared library instead.
    # (Set through CXX and CUDAHOSTCXX, as run on an H200: passing -DCMAKE_CXX_COMPILER alone still crashed.)
    if [[ -x /usr/bin/g++ ]]; then
      export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
    fi
  fi
  export LD_LIBRARY_PATH="$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [[ -z $gtest && -f $d/usr/src/googletest/CMakeLists.txt ]] && gtest=$d/usr/src/googletest
fi
for candidate in third_party/googletest /usr/src/googletest; do
  if [[ -z $gtest && -f $candidate/CMakeLists.txt ]]; then gtest=$(realpath "$candidate"); fi
done
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DRSZ_CUDA=ON \
  -DRSZ_BUILD_IO="${RSZ_BUILD_IO:-ON}" -DRSZ_GTEST_SOURCE="$gtest" "${deps[@]}"
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" -L cuda --output-on-failure
if [[ -d $build/python/rsz ]] && python3 -c 'import torch, pytest' 2> /dev/null; then
  PYTHONPATH=$(realpath "$build")/python python3 -m pytest -q -p no:cacheprovider tests/python/test_cuda_tensors.py
fi
if [[ ${RSZ_BUILD_IO:-ON} == OFF ]]; then
  ctest --test-dir "$build" -LE cuda -j "$(nproc)" --output-on-failure
fi
if [[ ${RSZ_CUDA_SANITIZE:-0} == 1 ]]; then
  sanitizer=$(command -v compute-sanitizer || true)
  nvcc_dir=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
  for candidate in "$nvcc_dir/compute-sanitizer" /usr/local/cuda/bin/compute-sanitizer; do
    if [[ -z $sanitizer && -x $candidate ]]; then sanitizer=$candidate; fi
  done
  if [[ -z $sanitizer ]]; then
    echo "test-cuda: RSZ_CUDA_SANITIZE=1 needs compute-sanitizer (from the CUDA toolkit), found none" >&2
    exit 1
  fi
  tests=$build/tests/rsz_cuda_tests
  # Device memory accesses of every CUDA test but the largest staging one (minutes under the tool) and the one that
  # counts free device memory (the tool's own allocations change it); the API errors that tests cause on purpose
  # (an unusable device, a failed allocation) are not errors here.
  "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 3 "$tests" \
    --gtest_filter='-*LargeHostTensors*:*StagingReleasesLargeDeviceCopies*'
  # Shared-memory hazards and barriers of the kernels whose threads share memory, on their smaller tests.
  "$sanitizer" --tool racecheck --error-exitcode 3 "$tests" \
    --gtest_filter='*PlaneKernel*:*Pipelined*:*DoublingKernel*:*HalvingKernel*:*SharedPlanesOneImage*:*SharedPlanesUnorm8*:*SharedPlanesWorkLists*'
  "$sanitizer" --tool synccheck --error-exitcode 3 "$tests" --gtest_filter='*SharedPlanes*:*Pipelined*'
  # The GPU JPEG decoder (nvJPEG builds): its device memory accesses too (clean on an H200).
  if [[ -x $build/tests/rsz_gpu_jpeg_tests ]]; then
    "$sanitizer" --tool memcheck --error-exitcode 3 "$build/tests/rsz_gpu_jpeg_tests"
  fi
fi
