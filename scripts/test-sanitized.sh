#!/usr/bin/env bash
# Builds rsz with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/, -O1, line tables) and runs the tests
# under them; any report fails the run.
#   usage: bash scripts/test-sanitized.sh          everything: core, io, the rsz program and every test
#          bash scripts/test-sanitized.sh --core   the core library and its tests only (CI: the io parsers and
#                                                  decoders are fuzzed under the same sanitizers by tests/fuzz/run.sh)
# Left out of the sanitized run (the README test command runs them): the baseline-ISA repeat of the equivalence
# tests (the same loops through the SSE2 kernels) and the equivalence tests whose time goes to the reference
# computing outputs of 16 MiB and more or ROI tables of millions of samples (their streaming stores are intrinsics,
# which the sanitizers do not check).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build-asan
io=ON
case ${1:-} in
  "") ;;
  --core) build=build-asan-core; io=OFF ;;
  *) echo "usage: bash scripts/test-sanitized.sh [--core]" >&2; exit 2 ;;
esac
bash scripts/install-deps.sh
jobs=$(nproc)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-O1" -DCMAKE_CXX_FLAGS_DEBUG="-g1" \
  -DRSZ_SANITIZE=ON -DRSZ_WARNINGS_AS_ERRORS=ON -DRSZ_BUILD_IO="$io" -DRSZ_CUDA=OFF > /dev/null
cmake --build "$build" -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$build" --output-on-failure -j"$jobs" \
    -E '^baseline_isa\.|LargeOutputsWrittenWithStreamingStores|RoisWithHugeSampleTables'
