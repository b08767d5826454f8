"""CUDA tensors through rsz's Python functions against torch on the same tensors, in one process on one GPU: an
antialiased downscale of a batch of 1080p frames to 224 x 224 (float32, and uint8 frames to float32), and ROI align of
FPN-like boxes, each the median of 20 timed calls after a warm-up, synchronized around each call.

    PYTHONPATH=build-cuda/python python3 bench/gpu/tensor_bench.py
"""
import statistics
import time

import torch
import torch.nn.functional as F
import torchvision

import rsz


def timed(call, runs=20):
    call()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def row(name, ours, theirs):
    print("%-58s rsz %8.3f ms   torch %8.3f ms   torch / rsz %5.2f" % (name, ours * 1e3, theirs * 1e3, theirs / ours))


def main():
    print("gpu: %s; torch %s, torchvision %s" % (torch.cuda.get_device_name(0), torch.__version__,
                                                torchvision.__version__))
    frames = torch.rand(16, 3, 1080, 1920, device="cuda")
    row("16 x 3 x 1080 x 1920 float32 -> 224 x 224, antialiased",
        timed(lambda: rsz.resample(frames, sizes=(224, 224), antialias=True)),
        timed(lambda: F.interpolate(frames, size=(224, 224), mode="bilinear", antialias=True, align_corners=False)))
    pixels = (frames * 255).to(torch.uint8)
    row("16 x 3 x 1080 x 1920 uint8 -> 224 x 224 float32, antialiased",
        timed(lambda: rsz.resample(pixels, sizes=(224, 224), antialias=True)),
        timed(lambda: F.interpolate(pixels.float() / 255, size=(224, 224), mode="bilinear", antialias=True,
                                    align_corners=False)))
    row("16 x 3 x 1080 x 1920 float32 -> 540 x 960, linear",
        timed(lambda: rsz.resample(frames, sizes=(540, 960))),
        timed(lambda: F.interpolate(frames, size=(540, 960), mode="bilinear", align_corners=False)))
    features = torch.rand(2, 256, 200, 272, device="cuda")
    generator = torch.Generator(device="cuda").manual_seed(1)
    xy = torch.rand(1000, 2, device="cuda", generator=generator) * 250
    wh = torch.rand(1000, 2, device="cuda", generator=generator) * 60 + 2
    boxes = torch.cat([torch.randint(0, 2, (1000, 1), device="cuda").float(), xy, xy + wh], 1)
    row("ROI align, 1,000 boxes on 2 x 256 x 200 x 272, 7 x 7, 2 samples",
        timed(lambda: rsz.roi_align(features, boxes, output_size=7, sampling_ratio=2)),
        timed(lambda: torchvision.ops.roi_align(features, boxes, output_size=7, sampling_ratio=2, aligned=True)))


if __name__ == "__main__":
    main()
