"""Times torch.nn.functional.interpolate and torchvision.ops.roi_align on the GPU, on the workloads of
bench_gpu.cpp (same sizes, same boxes rule), with CUDA events: median of 20 runs after 3 warm-ups. One JSON line per
workload and dtype."""
import json

import torch
import torch.nn.functional as F
import torchvision


def median_ms(run):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        run()
    times = []
    for _ in range(20):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def boxes_like_rsz(r):
    state = 1
    def nxt():
        nonlocal state
        state = (state * 1103515245 + 12345) & 0xffffffff
        return (state >> 8) / 16777216.0
    out = []
    for _ in range(r):
        x, y = nxt() * 250.0, nxt() * 180.0
        out.append([0.0, x, y, x + 4.0 + nxt() * 60.0, y + 4.0 + nxt() * 60.0])
    return out


for dtype, name in [(torch.float32, "float32"), (torch.float16, "float16")]:
    for workload, n, hw_in, hw_out in [("resample_1080p_to_4k_bilinear", 1, (1080, 1920), (2160, 3840)),
                                       ("resample_8x4k_to_1080p_bilinear", 8, (2160, 3840), (1080, 1920))]:
        x = torch.rand(n, 3, *hw_in, device="cuda", dtype=dtype)
        ms = median_ms(lambda: F.interpolate(x, size=hw_out, mode="bilinear", align_corners=False))
        print(json.dumps({"workload": workload, "dtype": name, "peer": "torch.nn.functional.interpolate",
                          "ms": ms}))
    x = torch.rand(1, 256, 200, 272, device="cuda", dtype=dtype)
    rois = torch.tensor(boxes_like_rsz(1000), device="cuda", dtype=dtype)
    ms = median_ms(lambda: torchvision.ops.roi_align(x, rois, (7, 7), 1.0, 2, True))
    print(json.dumps({"workload": "roi_align_fpn_1000x7x7x256", "dtype": name, "peer": "torchvision.ops.roi_align",
                      "ms": ms}))
