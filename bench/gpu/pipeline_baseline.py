"""Files in, files out on the GPU machine: a folder of 1080p JPEGs resized to 224 x 224 JPEG files (antialiased), by
rsz's CPU job (every core), rsz's --backend cuda job and torchvision's GPU path (nvJPEG decode in batches, resize,
GPU JPEG encode, bytes written), in one call on the same files: the baseline of the GPU pipeline.

    python3 bench/gpu/pipeline_baseline.py --rsz build-cuda/app/rsz --count 512 --work /tmp/pipeline

The photos are made here from a sample photo (scaled to 1920 x 1080, each with its own noise, JPEG quality 90), so
the run needs no data. Each job runs `--runs` times after a warm-up; the best time is reported as images a second.
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import time

import torch
import torchvision
from torchvision.io import decode_jpeg, encode_jpeg, read_file
from torchvision.transforms.v2 import functional as F


def make_photos(rsz, source, folder, count):
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, "..", "base.png")
    subprocess.run([rsz, "resample", "-i", source, "-o", base, "--size", "1920x1080!", "-q"], check=True)
    image = torchvision.io.decode_image(read_file(base))[:3]

    def make(i):
        # Light noise: each file its own (seeded by its number), about 250 KB at 1080p like a camera photo there (more
        # noise makes larger files, which the JPEG engines decode more slowly).
        generator = torch.Generator().manual_seed(1 + i)
        noise = torch.randint(-2, 3, image.shape, generator=generator, dtype=torch.int16)
        noisy = (image.to(torch.int16) + noise).clamp(0, 255).to(torch.uint8)
        with open(os.path.join(folder, "p%04d.jpg" % i), "wb") as f:
            f.write(encode_jpeg(noisy, quality=90).numpy().tobytes())

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:  # torch's work lets the GIL go
        list(pool.map(make, range(count)))


def photos_for(args, what):
    """The photos made in args.work (args.count of them from args.source), their sorted paths, and the line saying
    the machine and the files."""
    shutil.rmtree(args.work, ignore_errors=True)
    photos = os.path.join(args.work, "photos")
    make_photos(args.rsz, args.source, photos, args.count)
    made = sorted(os.listdir(photos))
    for copy in range(1, args.links):  # a larger job without making more photos: each also under other names
        for name in made:
            os.link(os.path.join(photos, name), os.path.join(photos, "l%d_%s" % (copy, name)))
    files = sorted(os.path.join(photos, f) for f in os.listdir(photos))
    size = sum(os.path.getsize(f) for f in files) / len(files)
    print("gpu: %s; torch %s, torchvision %s; %d cpus; %d photos 1920x1080 JPEG, %.0f KB each%s%s"
          % (torch.cuda.get_device_name(0), torch.__version__, torchvision.__version__, os.cpu_count(), len(files),
             size / 1024, " (%d made, each under %d names)" % (len(made), args.links) if args.links > 1 else "",
             what))
    return photos, files


def torchvision_gpu(files, out, batch):
    os.makedirs(out, exist_ok=True)
    for i in range(0, len(files), batch):
        names = files[i:i + batch]
        images = decode_jpeg([read_file(f) for f in names], device="cuda")
        small = [F.resize(im, [224, 224], antialias=True) for im in images]
        encoded = encode_jpeg(small, quality=95)
        for name, data in zip(names, encoded):
            with open(os.path.join(out, os.path.basename(name)), "wb") as f:
                f.write(data.cpu().numpy().tobytes())
    torch.cuda.synchronize()


def timed(run, runs):
    run()  # warm-up
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def photo_arguments(description, work):
    """The arguments of a GPU pipeline benchmark over the photos photos_for makes: --rsz, --source, --count, --work,
    --runs, --batch, --links, --no-sync (a parser to add more to)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rsz", required=True)
    parser.add_argument("--source", default="samples/photos/chelsea.png")
    parser.add_argument("--count", type=int, default=512)
    parser.add_argument("--work", default=work)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--links", type=int, default=1,
                        help="each photo made also linked under LINKS - 1 more names: LINKS x --count inputs, made "
                             "in the time of --count (the decode's cost does not depend on the photo)")
    parser.add_argument("--no-sync", action="store_true",
                        help="rsz's outputs not flushed to the disk one by one (--no-sync), as torchvision's are not")
    return parser


def main():
    parser = photo_arguments(__doc__.splitlines()[0], "/tmp/pipeline")
    parser.add_argument("--jobs", default="cpu,cuda,decode,encode,python,python_encode,torchvision",
                        help="the rows to run, in order, of: cpu, cuda, decode, decode_all, encode, encode_all, "
                             "python, python_all, python_encode, torchvision (*_all: --device all)")
    args = parser.parse_args()
    photos, files = photos_for(args, "")

    sync = ["--no-sync"] if args.no_sync else []

    def rsz_job(backend, *more, source=photos):
        out = os.path.join(args.work, "rsz_" + backend + "_".join(more))
        return lambda: subprocess.run([args.rsz, "resample", "-i", source, "-o", out + "/", "--size", "224x224",
                                       "--antialias", "--quality", "95", "--backend", backend, "-q"] + list(more) +
                                      sync, check=True)

    # rsz's times are whole processes (start-up included: the CUDA context, nvJPEG's engines), but for rsz.run's, calls
    # in this warm process (its GPU stage kept from the warm-up run), as torchvision's are. The rows "after start-up"
    # take a one-photo run's time off the whole run's, so that both are compared the same way.
    every = ["--device", "all"]  # every GPU of the machine: the GPU stage has a lane on each
    jobs = {"cpu": ("rsz, CPU (every core)", rsz_job("cpu")),
            "cuda": ("rsz, --backend cuda (CPU decode, GPU batches)", rsz_job("cuda")),
            "cuda_all": ("rsz, --backend cuda --device all", rsz_job("cuda", *every)),
            "decode": ("rsz, --backend cuda --decode gpu", rsz_job("cuda", "--decode", "gpu")),
            "decode_all": ("rsz, --backend cuda --decode gpu --device all", rsz_job("cuda", "--decode", "gpu", *every)),
            "encode": ("rsz, --backend cuda --decode gpu --encode gpu",
                       rsz_job("cuda", "--decode", "gpu", "--encode", "gpu")),
            "encode_all": ("rsz, --backend cuda --decode gpu --encode gpu --device all",
                           rsz_job("cuda", "--decode", "gpu", "--encode", "gpu", *every)),
            "torchvision": ("torchvision, GPU decode + resize + GPU encode + write",
                            lambda: torchvision_gpu(files, os.path.join(args.work, "tv"), args.batch))}
    try:  # rsz's Python module (PYTHONPATH=build-cuda/python): the same job in this warm process, as torchvision's
        import rsz

        def python_job(name, **more):
            return lambda: rsz.run("resample", photos, os.path.join(args.work, name) + "/", size="224x224",
                                   antialias=True, quality=95, backend="cuda", decode="gpu", no_sync=args.no_sync,
                                   **more)
        jobs["python"] = ("rsz.run in this process, decode=\"gpu\" (stage kept)", python_job("rsz_python"))
        jobs["python_all"] = ("rsz.run in this process, decode=\"gpu\", device=\"all\"",
                              python_job("rsz_python_all", device="all"))
        jobs["python_encode"] = ("rsz.run in this process, decode=encode=\"gpu\"",
                                 python_job("rsz_python_encode", encode="gpu"))
    except ImportError:
        pass
    one = {"cpu": rsz_job("cpu", source=files[0]),
           "cuda": rsz_job("cuda", source=files[0]),
           "cuda_all": rsz_job("cuda", *every, source=files[0]),
           "decode": rsz_job("cuda", "--decode", "gpu", source=files[0]),
           "decode_all": rsz_job("cuda", "--decode", "gpu", *every, source=files[0]),
           "encode": rsz_job("cuda", "--decode", "gpu", "--encode", "gpu", source=files[0]),
           "encode_all": rsz_job("cuda", "--decode", "gpu", "--encode", "gpu", *every, source=files[0])}
    if args.no_sync:
        print("rsz's rows: --no-sync (outputs not flushed one by one, as torchvision's are not)")
    print("%d GPUs: --device all is %s" % (torch.cuda.device_count(),
                                           ",".join(str(d) for d in range(torch.cuda.device_count()))))
    for key in args.jobs.split(","):
        if key not in jobs:
            continue
        name, run = jobs[key]
        seconds = timed(run, args.runs)
        print("%-55s %8.0f images/s  (%.3f s)" % (name, len(files) / seconds, seconds))
        if key in one:
            start = timed(one[key], args.runs)
            print("%-55s %8.0f images/s  (%.3f s; start-up %.3f s)"
                  % ("  after start-up", (len(files) - 1) / (seconds - start), seconds - start, start))


if __name__ == "__main__":
    main()
