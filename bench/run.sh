#!/usr/bin/env bash
# Runs the benchmark and writes bench/RESULTS.md: rsz and OpenCV in one process, then PyTorch/torchvision and ONNX
# Runtime, one library per process, all on the same workloads (bench/workloads.json) and the same ROI boxes.
# Installs what it needs (Debian: python3-torch, python3-torchvision, python3-onnx; npm: onnxruntime-node).
# usage: bash bench/run.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
quick="${1:-}"

peers=(python3-torch python3-torchvision python3-onnx python3-numpy libopencv-imgproc-dev)
# Any node and npm will do (a machine may have them from elsewhere than Debian).
command -v node > /dev/null || peers+=(nodejs)
command -v npm > /dev/null || peers+=(npm)
bash scripts/install-deps.sh "${peers[@]}"
if [ ! -d bench/node_modules/onnxruntime-node ]; then
  (cd bench && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save --no-audit --no-fund onnxruntime-node@1 >/dev/null)
fi

cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DRSZ_BUILD_BENCH=ON -DRSZ_BUILD_TESTS=OFF > /dev/null
cmake --build build-bench -j"$(nproc)" --target rsz_bench
out=build-bench/results
rm -rf "$out"
mkdir -p "$out"
# Rounds of every library in turn; the report keeps each row's lowest median, so a slow spell of a shared machine
# during one round does not decide a result.
rounds=3
[ -z "$quick" ] || rounds=1
for round in $(seq "$rounds"); do
  echo "bench: round $round of $rounds: rsz + OpenCV" >&2
  build-bench/bench/rsz_bench bench/workloads.json "$out" $quick | tee "$out/rsz-$round.jsonl"
  # The ONNX models read the ROI boxes that rsz_bench writes.
  [ "$round" -gt 1 ] || /usr/bin/python3 bench/make_ort_models.py bench/workloads.json "$out"
  echo "bench: round $round of $rounds: PyTorch + torchvision" >&2
  /usr/bin/python3 bench/peers_torch.py bench/workloads.json "$out" $quick | tee "$out/torch-$round.jsonl"
  echo "bench: round $round of $rounds: ONNX Runtime" >&2
  node bench/peers_ort.js "$out" $quick | tee "$out/ort-$round.jsonl" ||
    echo "bench: ONNX Runtime failed; its column stays n/a" >&2
done
/usr/bin/python3 bench/report.py bench/RESULTS.md "$out"/*.jsonl
echo "bench: wrote bench/RESULTS.md" >&2
