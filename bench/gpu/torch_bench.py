"""Times torch.nn.functional.interpolate and torchvision.ops.roi_align on the GPU over the plan written by plan.py
(the same shapes and boxes as rsz_gpu_bench), with CUDA events: median of 20 runs after warm-ups of at least 25 ms.
One JSON line per workload, mode and dtype.

usage: python3 bench/gpu/torch_bench.py WORK_DIR
Mappings: resample and upsample linear are bilinear (trilinear with a depth factor of 1 for rank 5) with
align_corners=False (rsz's pixel-centre offsets); nearest is torch's nearest (floor, where rsz rounds: the same
memory traffic, not the same pixels); roi_align is aligned=True with sampling_ratio = the workload's sampling
(0: adaptive, as rsz's default sample counts)."""
import array
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
import torchvision

work = sys.argv[1]


def median_ms(run):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # Warm-ups: 3 runs and at least 25 ms, each waited for (as rsz_gpu_bench's: each workload in its own steady state).
    begin, warm = time.perf_counter(), 0
    while warm < 3 or time.perf_counter() - begin < 0.025:
        run()
        torch.cuda.synchronize()
        warm += 1
    times = []
    for _ in range(20):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def read_array(code, path):
    values = array.array(code)
    with open(path, "rb") as f:
        values.frombytes(f.read())
    return values.tolist()


def emit(kind, name, mode, dtype, peer, ms):
    print(json.dumps({"workload": name, "mode": mode, "dtype": dtype, "peer": peer, "ms": ms}), flush=True)


plan = [line.split() for line in open(os.path.join(work, "plan.txt")) if line.strip()]
for dtype, dname in [(torch.float32, "float32"), (torch.float16, "float16")]:
    for f in plan:
        kind, name = f[0], f[1]
        if kind == "resample":
            mode, dims = f[2], list(map(int, f[3:]))
            x = torch.rand(*dims[:4], device="cuda", dtype=dtype)
            tmode = "bilinear" if mode == "linear" else "nearest"
            kwargs = {"align_corners": False} if mode == "linear" else {}
            ms = median_ms(lambda: F.interpolate(x, size=tuple(dims[4:6]), mode=tmode, **kwargs))
            emit(kind, name, mode, dname, "torch.nn.functional.interpolate", ms)
        elif kind == "upsample":
            mode, factor, dims = f[2], int(f[3]), list(map(int, f[4:]))
            x = torch.rand(*dims, device="cuda", dtype=dtype)
            scale = (factor, factor) if len(dims) == 4 else (1, factor, factor)
            tmode = "nearest" if mode == "nearest" else ("bilinear" if len(dims) == 4 else "trilinear")
            kwargs = {"align_corners": False} if mode == "linear" else {}
            ms = median_ms(lambda: F.interpolate(x, scale_factor=scale, mode=tmode, **kwargs))
            emit(kind, name, mode, dname, "torch.nn.functional.interpolate", ms)
        else:
            n, c, h, w, r, out, sampling = map(int, f[2:9])
            spatial_scale = float(f[9])
            boxes = torch.tensor(read_array("f", os.path.join(work, name + ".rois.f32"))).reshape(r, 4)
            batch = torch.tensor(read_array("I", os.path.join(work, name + ".batch.u32")), dtype=torch.float32)
            rois = torch.cat([batch[:, None], boxes], dim=1).to(device="cuda", dtype=dtype)
            x = torch.rand(n, c, h, w, device="cuda", dtype=dtype)
            ms = median_ms(lambda: torchvision.ops.roi_align(x, rois, (out, out), spatial_scale, sampling, True))
            emit(kind, name, "average", dname, "torchvision.ops.roi_align", ms)
