"""The GPU decode stage on the GPU machine: 1080p JPEGs decoded in batches by rsz's nvJPEG decoder
(rsz_gpu_jpeg_bench) and by torchvision's decode_jpeg(device="cuda") in the same call, on the same files held in
memory (best of --runs after a warm-up), and a CPU decode of the same files by every core (torchvision.io on the
host, libjpeg-turbo) for scale.

    python3 bench/gpu/decode_bench.py --rsz build-cuda/app/rsz --bench build-cuda/bench/gpu/rsz_gpu_jpeg_bench

The photos are made as bench/gpu/pipeline_baseline.py makes them.
"""
import concurrent.futures
import json
import os
import subprocess
import sys

import torch
from torchvision.io import decode_jpeg, read_file

sys.path.insert(0, os.path.dirname(__file__))
from pipeline_baseline import photo_arguments, photos_for, timed  # noqa: E402


def main():
    parser = photo_arguments(__doc__.splitlines()[0], "/tmp/decode")
    parser.add_argument("--bench", required=True)
    args = parser.parse_args()
    _, files = photos_for(args, "; batch %d" % args.batch)
    data = [read_file(f) for f in files]

    def torchvision_gpu():
        for i in range(0, len(data), args.batch):
            decode_jpeg(data[i:i + args.batch], device="cuda")
        torch.cuda.synchronize()

    def torchvision_cpu():
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
            list(pool.map(decode_jpeg, data))

    rows = []
    rsz = subprocess.run([args.bench, "--batch", str(args.batch), "--runs", str(args.runs)] + files, check=True,
                         capture_output=True, text=True)
    result = json.loads(rsz.stdout)
    rows.append(("rsz nvJPEG batched (%s, %d of %d on the engines)" % (result["engine"], result["on_engine"],
                                                                       result["images"]), result["seconds"]))
    rows.append(("torchvision decode_jpeg(device='cuda'), batched", timed(torchvision_gpu, args.runs)))
    rows.append(("torchvision decode_jpeg on the CPU, every core", timed(torchvision_cpu, args.runs)))
    for name, seconds in rows:
        print("%-60s %8.0f images/s  (%.3f s)" % (name, len(files) / seconds, seconds))


if __name__ == "__main__":
    main()
