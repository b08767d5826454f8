#!/usr/bin/env bash
# The package test: installs the build tree BUILD into a fresh prefix, then builds the consumer in tests/package
# twice against it, with find_package(rsz) and with pkg-config, and runs both. Works for static and shared
# (-DBUILD_SHARED_LIBS=ON) builds.
# Usage: tests/package/run.sh BUILD_DIR WORK_DIR [FLAGS]
# FLAGS: compiler and linker flags the consumer needs to link the build's libraries (a sanitizer build's
# -fsanitize=..., which an ordinary user's build never needs).
set -euo pipefail
build=$1
work=$2
flags_extra=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
# step LOG COMMAND...: runs COMMAND with its output in $work/LOG, shown whole if it fails (CI keeps only stdout).
step() {
  local log=$work/$1
  shift
  if ! "$@" > "$log" 2>&1; then
    echo "package test: failed: $*" >&2
    cat "$log" >&2
    exit 1
  fi
}
step install.log cmake --install "$build" --prefix "$work/prefix"

step configure.log cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="$flags_extra" -DCMAKE_EXE_LINKER_FLAGS="$flags_extra"
step build.log cmake --build "$work/cmake-build" --verbose
"$work/cmake-build/consumer" "$work/cmake.npy"
samples=$here/../../samples/photos
"$work/cmake-build/pipeline_consumer" "$samples/rocket.jpg" "$work/cmake-pipeline"
test -s "$work/cmake-pipeline/rocket.jpg"
"$work/cmake-build/ops_consumer"
# rsz::ops links no codec: the consumer's link line names none of io's libraries.
if grep -E 'ops_consumer' "$work/build.log" | grep -E 'rsz_io|png|jpeg|gif|heif|pugixml|yaml' > /dev/null; then
  echo "package test: the consumer of rsz::ops links a codec library:" >&2
  grep -E 'ops_consumer' "$work/build.log" >&2
  exit 1
fi

pc_dir=$(dirname "$(find "$work/prefix" -name rsz.pc | head -1)")
flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --static --cflags --libs rsz)
step pkg-config-build.log c++ -std=c++17 "$here/consumer.cpp" -o "$work/consumer-pc" $flags_extra $flags
# pkg-config sets no run path: a shared build is found through LD_LIBRARY_PATH, as a user would do.
LD_LIBRARY_PATH="$(dirname "$pc_dir")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/consumer-pc" "$work/pkg-config.npy"
flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --static --cflags --libs rsz-ops)
step pkg-config-ops.log c++ -std=c++17 "$here/ops_consumer.cpp" -o "$work/ops-consumer-pc" $flags_extra $flags
LD_LIBRARY_PATH="$(dirname "$pc_dir")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/ops-consumer-pc"
flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --static --cflags --libs rsz-pipeline)
step pkg-config-pipeline.log c++ -std=c++17 "$here/pipeline_consumer.cpp" -o "$work/pipeline-consumer-pc" $flags_extra $flags
LD_LIBRARY_PATH="$(dirname "$pc_dir")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/pipeline-consumer-pc" \
  "$samples/rocket.jpg" "$work/pc-pipeline"
test -s "$work/pc-pipeline/rocket.jpg"

# The installed rsz runs from its prefix and loads the OpenCV codec module installed beside it (not the build tree's).
"$work/prefix/bin/rsz" --version
LD_DEBUG=files "$work/prefix/bin/rsz" resample -q -i "$samples/chelsea.png" -o "$work/chelsea.bmp" --scale 0.5 \
  2> "$work/ld_debug.log"
if ! grep -q "file=$work/prefix/.*librsz_opencv_codecs" "$work/ld_debug.log"; then
  echo "package test: the installed rsz did not load the module under $work/prefix:" >&2
  grep -i "opencv_codecs" "$work/ld_debug.log" >&2 || true
  exit 1
fi
test -s "$work/chelsea.bmp"

# The Python package, where the build has it: imported from the prefix, not from the build tree.
python_dir=$(find "$work/prefix" -path '*-packages/rsz' -type d | head -1)
if [ -n "$python_dir" ]; then
  PYTHONPATH=$(dirname "$python_dir") /usr/bin/python3 - "$work/prefix" <<'PY'
import sys
import numpy as np
import rsz
assert rsz.__file__.startswith(sys.argv[1]), rsz.__file__
up = rsz.upsample2d(np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2), 2)
assert up.shape == (1, 1, 4, 4) and up[0, 0, 3, 3] == 3.0, up
PY
  echo "package test: Python package at $python_dir ok"
fi
echo "package test: ok"
