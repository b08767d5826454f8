"""Writes bench/gpu/RESULTS_GPU.md from one run's rsz.jsonl (rsz_gpu_bench) and torch.jsonl (torch_bench.py), each
holding one or more passes over the workloads, and the GPU's name: ms, GB/s (inputs read once + outputs written once) and the fraction of the device-to-device copy
bandwidth measured in the same run, and rsz's time over the peer's.

usage: python3 make_results.py RSZ.jsonl TORCH.jsonl GPU_NAME VERSIONS OUT.md"""
import json
import statistics
import sys

rsz_file, torch_file, gpu_name, versions, out = sys.argv[1:6]


def passes(path):
    """The records of every pass in `path`, one per workload in first-seen order, each with the median of its
    passes' times (the GPU's clocks and caches move between passes; the median of 3 is robust to one bad pass)."""
    records = {}
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            records.setdefault((r["workload"], r["mode"], r["dtype"]), []).append(r)
    merged = []
    for rs in records.values():
        r = dict(rs[0])
        r["ms"] = statistics.median(x["ms"] for x in rs)
        r["passes"] = len(rs)
        merged.append(r)
    return merged


rsz = passes(rsz_file)
peers = {(r["workload"], r["mode"], r["dtype"]): r for r in passes(torch_file)}
rounds = max(r["passes"] for r in rsz)
copy = next(r for r in rsz if r["workload"] == "copy_d2d_1GiB")
copy_gbs = copy["bytes"] / copy["ms"] / 1e6
f32 = {(r["workload"], r["mode"]): r["ms"] for r in rsz if r["dtype"] == "float32"}
lines = [
    "# GPU benchmark results",
    "",
    "Produced by `bench/gpu/run.sh` on **%s** (%s), rsz and its peers in the same run: %d passes over the "
    "workloads, rsz's and the peers' alternating; each time is the median over the passes of a pass's median of 20 "
    "runs after warm-ups of at least 25 ms (CUDA events, each a whole library call). GB/s counts the inputs read once and the outputs written "
    "once; \"/ copy\" is that rate over the device-to-device copy bandwidth measured in the same run: **%.0f GB/s** "
    "(1 GiB cudaMemcpy). \"f16 / f32\" is rsz's float16 time over its float32 time. \"peer / rsz\" is the peer's "
    "time over rsz's: above 1, rsz is faster." % (gpu_name.strip(), versions.strip(), rounds, copy_gbs),
    "",
    "| workload | mode | dtype | rsz ms | rsz GB/s | rsz / copy | f16 / f32 | peer | peer ms | peer / copy | peer / rsz |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
]
for r in rsz:
    if r["workload"] == "copy_d2d_1GiB":
        continue
    gbs = r["bytes"] / r["ms"] / 1e6
    ratio = "%.2f" % (r["ms"] / f32[(r["workload"], r["mode"])]) if r["dtype"] == "float16" else ""
    row = "| %s | %s | %s | %.3f | %.0f | %.3f | %s |" % (r["workload"], r["mode"], r["dtype"], r["ms"], gbs,
                                                         gbs / copy_gbs, ratio)
    peer = peers.get((r["workload"], r["mode"], r["dtype"]))
    if peer:
        pgbs = r["bytes"] / peer["ms"] / 1e6
        row += " %s | %.3f | %.3f | %.2f |" % (peer["peer"], peer["ms"], pgbs / copy_gbs, peer["ms"] / r["ms"])
    else:
        row += " | | | |"
    lines.append(row)
lines += [
    "",
    "Workloads: bench/workloads.json (the CPU benchmark's) and bench/gpu/workloads_gpu.json (batched: 8 x 4K -> "
    "1080p, 8 images x 1000 ROIs of an FPN P2 level), the same shapes and boxes for rsz and the peer. Resample and "
    "upsample linear compare with bilinear (trilinear for rank 5) align_corners=False, nearest with torch's "
    "nearest (the same memory traffic; torch floors where rsz rounds); ROI align with torchvision's "
    "aligned=True and the workload's sampling ratio (0: adaptive). rsz's results are bit-identical to its CPU "
    "backend (tests/cuda); torch's are not bit-identical to anything rsz promises (it fuses multiply-adds). rsz's "
    "roi_align time includes its value check (SEMANTICS.md §3's rules and the sample budget), run on the device "
    "in stream order; torchvision checks nothing.",
    "",
]
open(out, "w").write("\n".join(lines))
