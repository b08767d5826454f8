#!/usr/bin/env bash
# The GPU benchmark: builds rsz with the CUDA backend (core only), writes the plan (bench/workloads.json and
# bench/gpu/workloads_gpu.json: shapes and boxes), times rsz (rsz_gpu_bench) and PyTorch / torchvision
# (torch_bench.py) on the same GPU in one run, three passes each, and writes bench/gpu/RESULTS_GPU.md.
# usage: bash bench/gpu/run.sh [BUILD_DIR]   (a machine with an NVIDIA GPU, nvcc, and a python3 with torch)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpubench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DRSZ_CUDA=ON -DRSZ_BUILD_IO=OFF \
  -DRSZ_BUILD_TESTS=OFF > /dev/null
cmake --build "$build" --target rsz_gpu_bench > /dev/null
python3 bench/gpu/plan.py "$work"
# Three passes, rsz's and the peers' alternating: a single pass's times moved between runs of the same code on the
# same kind of GPU by up to 1.6x on the smallest workloads (about 0.01 ms) and about 10% on the others, so each
# reported time is the median of its three passes (make_results.py).
for pass in 1 2 3; do
  "$build/bench/gpu/rsz_gpu_bench" "$work" >> "$work/rsz.jsonl"
  python3 bench/gpu/torch_bench.py "$work" >> "$work/torch.jsonl"
done
python3 bench/gpu/make_results.py "$work/rsz.jsonl" "$work/torch.jsonl" \
  "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" \
  "$(python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)')" \
  bench/gpu/RESULTS_GPU.md
"$build/bench/gpu/rsz_gpu_bench" --host >> bench/gpu/RESULTS_GPU.md
cat bench/gpu/RESULTS_GPU.md
