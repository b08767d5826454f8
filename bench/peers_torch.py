#!/usr/bin/python3
"""PyTorch and torchvision timings of the bench/workloads.json workloads (run by bench/run.sh).

usage: /usr/bin/python3 bench/peers_torch.py WORKLOADS.json OUT_DIR [--quick] [--only SUBSTRING] [--threads 1,4,16]
(--only and --threads as rsz_bench's: the workloads whose name has SUBSTRING; the thread counts, default 1,2)
Prints one JSON line per measurement, like rsz_bench: median time of
torch.nn.functional.interpolate (resample: bilinear/nearest, align_corners=False; upsample: scale_factor) and
torchvision.ops.roi_align (aligned=True, the same boxes rsz_bench wrote to OUT_DIR). float16 is attempted and
reported as unsupported where PyTorch refuses it.
"""
import json
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

QUICK = "--quick" in sys.argv


def option(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv[:-1] else default


ONLY = option("--only", "")
THREADS = [int(t) for t in option("--threads", "1,2").split(",")]


def median_seconds(fn):
    """Median seconds of fn(rep), rep = 1, 2, ... (fn(0) warms up)."""
    fn(0)
    times, total = [], 0.0
    budget, min_reps = (0.1, 3) if QUICK else (0.4, 5)
    while len(times) < min_reps or (total < budget and len(times) < 60):
        t0 = time.perf_counter()
        fn(len(times) + 1)
        dt = time.perf_counter() - t0
        times.append(dt)
        total += dt
    return statistics.median(times)


def emit(workload, variant, dtype, threads, impl, seconds, note=None):
    record = {"workload": workload, "variant": variant, "dtype": dtype, "threads": threads, "impl": impl,
              "median_ms": None if seconds is None else seconds * 1e3}
    if note:
        record["note"] = note
    print(json.dumps(record), flush=True)


def inputs(shape, dtype, output_shape):
    """Random inputs of `shape`, as many as rsz_bench uses for the workload (its Buffers: 256 MiB of input + output
    sets, 1 to 8), taken in turn by the repetitions: every library reads its input from the same level of the memory
    hierarchy (a large input from memory, not from the cache the previous repetition filled)."""
    size = 2 if dtype == torch.float16 else 4
    set_bytes = (int(np.prod(shape)) + int(np.prod(output_shape))) * size
    count = min(8, max(1, (256 << 20) // max(set_bytes, 1)))
    return [torch.rand(shape).to(dtype) for _ in range(count)]


def timed(workload, variant, dtype, threads, impl, fn):
    try:
        emit(workload, variant, dtype, threads, impl, median_seconds(fn))
    except RuntimeError as error:
        emit(workload, variant, dtype, threads, impl, None, str(error).splitlines()[0][:120])


def main():
    workloads = json.load(open(sys.argv[1]))
    out_dir = sys.argv[2]
    dtypes = {"float32": torch.float32, "float16": torch.float16}
    for kind in ("resample", "upsample", "roi_align"):
        workloads[kind] = [w for w in workloads[kind] if ONLY in w["name"]]
    for threads in THREADS:
        torch.set_num_threads(threads)
        for name, dtype in dtypes.items():
            for w in workloads["resample"]:
                xs = inputs(w["input"], dtype, w["output"])
                size = tuple(w["output"][2:])
                timed(w["name"], "linear", name, threads, "torch",
                      lambda rep: F.interpolate(xs[rep % len(xs)], size=size, mode="bilinear", align_corners=False))
                timed(w["name"], "nearest", name, threads, "torch",
                      lambda rep: F.interpolate(xs[rep % len(xs)], size=size, mode="nearest"))
            for w in workloads["upsample"]:
                f = w["factor"]
                if len(w["input"]) == 5:
                    factor, linear = (1, f, f), "trilinear"  # depth kept, H and W scaled
                    output = w["input"][:3] + [d * f for d in w["input"][3:]]
                else:
                    factor, linear = (f, f), "bilinear"
                    output = w["input"][:2] + [d * f for d in w["input"][2:]]
                xs = inputs(w["input"], dtype, output)
                timed(w["name"], "nearest", name, threads, "torch",
                      lambda rep: F.interpolate(xs[rep % len(xs)], scale_factor=factor, mode="nearest"))
                timed(w["name"], "linear", name, threads, "torch",
                      lambda rep: F.interpolate(xs[rep % len(xs)], scale_factor=factor, mode=linear,
                                                align_corners=False))
            for w in workloads["roi_align"]:
                xs = inputs(w["input"], dtype, [w["rois"], w["input"][1], w["output"], w["output"]])
                boxes = np.fromfile(f"{out_dir}/{w['name']}.rois.f32", dtype=np.float32).reshape(-1, 4)
                rois = torch.cat([torch.zeros(len(boxes), 1), torch.from_numpy(boxes)], dim=1).to(dtype)
                size = (w["output"], w["output"])
                sampling = w["sampling"] if w["sampling"] > 0 else -1
                timed(w["name"], "average_linear", name, threads, "torchvision",
                      lambda rep: torchvision.ops.roi_align(xs[rep % len(xs)], rois, size, w["spatial_scale"], sampling,
                                                            aligned=True))


if __name__ == "__main__":
    main()
