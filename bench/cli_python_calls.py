#!/usr/bin/python3
"""Per-call overhead of rsz's Python module against PyTorch, for bench/cli_bench.sh: rsz.resample of a float32 numpy
array (N, C, H, W) = (1, 3, 64, 64) to 32x32, linear (half-pixel centres), against torch.nn.functional.interpolate(...,
mode='bilinear', align_corners=False, antialias=False) of the same data, each with its default threads and with one
thread; then the same at 1x3x512x512 -> 256x256. timeit: the best of REPEATS repeats, microseconds per call. The
largest absolute difference between rsz's and torch's results is printed, so that both compute the same thing.
Then the busy-machine rows: the same rsz calls with default threads and with threads=1 while one busy-loop process
per CPU keeps the machine busy (medians of single calls there: the best of a repeat hides the scheduler's delays).
Writes the results as JSON to OUT (stdout without it).
usage: PYTHONPATH=build/python cli_python_calls.py [--quick] [OUT]
"""

import json
import sys
import timeit

import numpy as np
import torch
import torch.nn.functional as F

import rsz


def best_us(call, repeats):
    """The best of `repeats` timeit repeats, each of enough calls to last about 0.1 s, in microseconds per call."""
    number, _ = timeit.Timer(call).autorange()  # enough calls for at least 0.2 s
    number = max(1, number // 2)
    return min(timeit.repeat(call, number=number, repeat=repeats)) / number * 1e6


def busy_rows(rng, calls=2000):
    """rsz.resample with default threads and threads=1 while every CPU runs a busy loop of another process: the
    median and mean microseconds of single calls."""
    import os
    import statistics
    import subprocess
    import time
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    rows = []
    try:
        time.sleep(0.5)
        for side in (64, 512):
            half = side // 2
            x = rng.random((1, 3, side, side), dtype=np.float32)
            shape = "1x3x%dx%d -> %dx%d" % (side, side, half, half)
            for name, threads in (("default threads", 0), ("threads=1", 1)):
                times = []
                for _ in range(calls if side == 64 else calls // 10):
                    start = time.perf_counter()
                    rsz.resample(x, sizes=(half, half), mode="linear", threads=threads)
                    times.append((time.perf_counter() - start) * 1e6)
                median, mean = statistics.median(times), statistics.fmean(times)
                call = "busy machine (%d busy processes): rsz.resample, numpy array, %s" % (len(hogs), name)
                print("python-calls: %s: %s: median %.1f us, mean %.1f us" % (shape, call, median, mean),
                      file=sys.stderr)
                rows.append({"shape": shape, "call": call, "us": median, "mean_us": mean})
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    return rows


def main():
    args = [a for a in sys.argv[1:] if a != "--quick"]
    repeats = 3 if "--quick" in sys.argv[1:] else 7
    torch_threads = torch.get_num_threads()
    rows = []
    rng = np.random.default_rng(64)
    for side in (64, 512):
        half = side // 2
        x = rng.random((1, 3, side, side), dtype=np.float32)
        t = torch.from_numpy(x)  # the same memory

        def rsz_call(threads):
            return lambda: rsz.resample(x, sizes=(half, half), mode="linear", threads=threads)

        def rsz_torch_call(threads):
            return lambda: rsz.resample(t, sizes=(half, half), mode="linear", threads=threads)

        def torch_call():
            return F.interpolate(t, size=(half, half), mode="bilinear", align_corners=False, antialias=False)

        diff = float(np.abs(rsz.resample(x, sizes=(half, half), mode="linear") - torch_call().numpy()).max())
        shape = "1x3x%dx%d -> %dx%d" % (side, side, half, half)
        print("python-calls: %s: max |rsz - torch| = %.3g" % (shape, diff), file=sys.stderr)
        cases = [("rsz.resample, numpy array, default threads", rsz_call(0), None),
                 ("rsz.resample, numpy array, threads=1", rsz_call(1), None),
                 ("rsz.resample, torch tensor, default threads", rsz_torch_call(0), None),
                 ("torch interpolate, default threads (%d)" % torch_threads, torch_call, torch_threads),
                 ("torch interpolate, torch.set_num_threads(1)", torch_call, 1)]
        for name, call, threads in cases:
            if threads is not None:
                torch.set_num_threads(threads)
            us = best_us(call, repeats)
            torch.set_num_threads(torch_threads)
            print("python-calls: %s: %s: %.1f us" % (shape, name, us), file=sys.stderr)
            rows.append({"shape": shape, "call": name, "us": us, "max_abs_diff": diff})
    rows += busy_rows(rng)
    text = json.dumps({"rsz": rsz.__version__, "torch": torch.__version__, "torch_threads": torch_threads,
                       "repeats": repeats, "rows": rows}, indent=1)
    if args:
        with open(args[0], "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
