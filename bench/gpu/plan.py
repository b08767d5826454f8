"""Writes the GPU benchmark's plan: the workloads of bench/workloads.json and bench/gpu/workloads_gpu.json, one line
each in WORK_DIR/plan.txt, and the ROI boxes and batch indices of each roi_align workload as raw files, so that
rsz_gpu_bench and torch_bench.py time the very same work.

usage: python3 bench/gpu/plan.py WORK_DIR
Lines: `resample NAME MODE N C H W OH OW`, `upsample NAME MODE FACTOR D1 .. Dk` (rank 4 or 5),
`roi NAME N C H W R OUT SAMPLING SPATIAL_SCALE` with NAME.rois.f32 (R x 4 float32, input-image pixels) and
NAME.batch.u32 (R uint32). Boxes follow bench.cpp's rule (seeded, up to 30% of the image a side)."""
import array
import json
import os
import random
import sys

here = os.path.dirname(os.path.abspath(__file__))
work = sys.argv[1]
sets = [json.load(open(os.path.join(here, "..", "workloads.json"))), json.load(open(os.path.join(here, "workloads_gpu.json")))]
lines = []
for s in sets:
    for w in s["resample"]:
        for mode in ("linear", "nearest"):
            lines.append(" ".join(map(str, ["resample", w["name"], mode, *w["input"], *w["output"][2:]])))
for s in sets:
    for w in s["upsample"]:
        for mode in ("linear", "nearest"):
            lines.append(" ".join(map(str, ["upsample", w["name"], mode, w["factor"], *w["input"]])))
for s in sets:
    for w in s["roi_align"]:
        n, c, h, wd = w["input"]
        img_w, img_h = wd / w["spatial_scale"], h / w["spatial_scale"]
        rng = random.Random(w["seed"])
        boxes = array.array("f")
        for _ in range(w["rois"]):
            x1, y1, bw, bh = (rng.random() for _ in range(4))
            x1, y1 = x1 * img_w * 0.8, y1 * img_h * 0.8
            bw, bh = 8 + bw * img_w * 0.3, 8 + bh * img_h * 0.3
            boxes.extend([x1, y1, min(x1 + bw, img_w), min(y1 + bh, img_h)])
        with open(os.path.join(work, w["name"] + ".rois.f32"), "wb") as f:
            boxes.tofile(f)
        per_image = w.get("per_image", w["rois"])
        with open(os.path.join(work, w["name"] + ".batch.u32"), "wb") as f:
            array.array("I", [r // per_image for r in range(w["rois"])]).tofile(f)
        lines.append(" ".join(map(str, ["roi", w["name"], n, c, h, wd, w["rois"], w["output"], w["sampling"],
                                        w["spatial_scale"]])))
open(os.path.join(work, "plan.txt"), "w").write("\n".join(lines) + "\n")
