"""COCO-style crops on the GPU machine: a folder of 640 x 480 JPEGs with about 7 boxes each in a COCO annotation file,
every box cropped to a 224 x 224 JPEG file, by rsz's CPU job (every core), rsz's `--backend cuda --decode gpu` job
and torchvision's GPU path (nvJPEG decode in batches, roi_align, GPU JPEG encode, bytes written), in one call on the
same files.

    python3 bench/gpu/coco_baseline.py --rsz build-cuda/app/rsz --count 5000 --work /tmp/coco

The photos and boxes are made here from a sample photo (each photo with its own noise and crop, JPEG quality 90; box
count 4-10 a photo, sizes 24-320 pixels, from a fixed seed), so the run needs no data. Each job runs `--runs` times
after a warm-up; the best time is reported as photos and crops a second. rsz's times are whole processes (start-up
included: the CUDA context, nvJPEG's engines), torchvision's calls in a warm process.
"""
import argparse
import json
import os
import random
import shutil
import subprocess

import torch
import torchvision
from torchvision.io import decode_jpeg, encode_jpeg, read_file

from pipeline_baseline import timed


def make_dataset(rsz, source, work, count):
    photos = os.path.join(work, "photos")
    os.makedirs(photos, exist_ok=True)
    base = os.path.join(work, "base.png")
    subprocess.run([rsz, "resample", "-i", source, "-o", base, "--size", "960x720!", "-q"], check=True)
    image = torchvision.io.decode_image(read_file(base))[:3]
    generator = torch.Generator().manual_seed(1)
    chooser = random.Random(1)
    images, annotations = [], []
    for i in range(count):
        top, left = chooser.randrange(0, 240), chooser.randrange(0, 320)
        part = image[:, top:top + 480, left:left + 640].to(torch.int16)
        noise = torch.randint(-2, 3, part.shape, generator=generator, dtype=torch.int16)
        name = "c%05d.jpg" % i
        with open(os.path.join(photos, name), "wb") as f:
            f.write(encode_jpeg((part + noise).clamp(0, 255).to(torch.uint8), quality=90).numpy().tobytes())
        images.append({"id": i + 1, "file_name": name, "width": 640, "height": 480})
        for _ in range(chooser.randint(4, 10)):
            w, h = chooser.randint(24, 320), chooser.randint(24, 320)
            x, y = chooser.randint(0, 640 - w), chooser.randint(0, 480 - h)
            annotations.append({"id": len(annotations) + 1, "image_id": i + 1, "category_id": 1 + len(annotations) % 3,
                                "bbox": [x, y, w, h], "area": w * h, "iscrowd": 0})
    categories = [{"id": 1, "name": "person"}, {"id": 2, "name": "car"}, {"id": 3, "name": "dog"}]
    path = os.path.join(work, "instances.json")
    with open(path, "w") as f:
        json.dump({"images": images, "annotations": annotations, "categories": categories}, f)
    return photos, path, images, annotations


def torchvision_gpu(photos, images, annotations, out, batch):
    """Decode a batch of photos on the GPU, roi_align every box of the batch to 224 x 224 (uint8 back), encode on the
    GPU and write the files."""
    os.makedirs(out, exist_ok=True)
    boxes_of = {}
    for a in annotations:
        boxes_of.setdefault(a["image_id"], []).append(a)
    for i in range(0, len(images), batch):
        chunk = images[i:i + batch]
        decoded = decode_jpeg([read_file(os.path.join(photos, im["file_name"])) for im in chunk], device="cuda")
        stacked = torch.stack(decoded).float()
        rois, ids = [], []
        for k, im in enumerate(chunk):
            for a in boxes_of.get(im["id"], []):
                x, y, w, h = a["bbox"]
                rois.append([k, x, y, x + w, y + h])
                ids.append(a["id"])
        crops = torchvision.ops.roi_align(stacked, torch.tensor(rois, dtype=torch.float32, device="cuda"), (224, 224),
                                          spatial_scale=1.0, sampling_ratio=2, aligned=True)
        crops = crops.round_().clamp_(0, 255).to(torch.uint8)
        encoded = encode_jpeg(list(crops.unbind(0)), quality=95)
        for crop_id, data in zip(ids, encoded):
            with open(os.path.join(out, "%d.jpg" % crop_id), "wb") as f:
                f.write(data.cpu().numpy().tobytes())
    torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rsz", required=True)
    parser.add_argument("--source", default="samples/photos/chelsea.png")
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--work", default="/tmp/coco")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--no-sync", action="store_true",
                        help="rsz's outputs not flushed to the disk one by one (--no-sync), as torchvision's are not")
    parser.add_argument("--jobs", default="cpu,cuda,cuda_encode,python,python_encode,torchvision",
                        help="which of cpu, batched (--backend cuda alone), cuda, cuda_all (--device all), cuda_encode, python, python_encode (rsz.run "
                             "where rsz imports), torchvision to run")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    photos, annotation_file, images, annotations = make_dataset(args.rsz, args.source, args.work, args.count)
    size = sum(os.path.getsize(os.path.join(photos, im["file_name"])) for im in images) / len(images)
    print("gpu: %s; torch %s, torchvision %s; %d cpus; %d photos 640x480 JPEG, %.0f KB each, %d boxes"
          % (torch.cuda.get_device_name(0), torch.__version__, torchvision.__version__, os.cpu_count(), len(images),
             size / 1024, len(annotations)))

    def rsz_job(name, *more):
        out = os.path.join(args.work, name)

        # The files of the run before are written over, as torchvision's are (on the device machine's disk, mounted
        # with `discard`, deleting thousands of files first made the next run's writes several times slower).
        def run():
            subprocess.run([args.rsz, "roi-align", "--rois", annotation_file, "--image-root", photos,
                            "--output-size", "224x224", "-o", out + "/{id}.jpg", "--quality", "95", "-q"] + list(more) +
                           (["--no-sync"] if args.no_sync else []), check=True)
        return run

    jobs = {"cpu": ("rsz roi-align, CPU (every core)", rsz_job("rsz_cpu", "--backend", "cpu")),
            "batched": ("rsz roi-align, --backend cuda (CPU decode, GPU batches)",
                        rsz_job("rsz_batched", "--backend", "cuda")),
            "cuda": ("rsz roi-align, --backend cuda --decode gpu", rsz_job("rsz_gpu", "--backend", "cuda",
                                                                           "--decode", "gpu")),
            "cuda_all": ("rsz roi-align, --backend cuda --decode gpu --device all",
                         rsz_job("rsz_gpu_all", "--backend", "cuda", "--decode", "gpu", "--device", "all")),
            "cuda_encode": ("rsz roi-align, --backend cuda --decode gpu --encode gpu",
                            rsz_job("rsz_gpu_encode", "--backend", "cuda", "--decode", "gpu", "--encode", "gpu")),
            "torchvision": ("torchvision, GPU decode + roi_align + GPU encode + write",
                            lambda: torchvision_gpu(photos, images, annotations, os.path.join(args.work, "tv"),
                                                    args.batch))}
    try:  # rsz's Python module (PYTHONPATH=build-cuda/python): the GPU job in this warm process, its stage kept
        import rsz
        jobs["python"] = ("rsz.run in this process, decode=\"gpu\" (stage kept)",
                          lambda: rsz.run("roi-align", None, os.path.join(args.work, "rsz_python") + "/{id}.jpg",
                                          rois=annotation_file, image_root=photos, output_size="224x224", quality=95,
                                          backend="cuda", decode="gpu", no_sync=args.no_sync))
        jobs["python_encode"] = ("rsz.run in this process, decode=encode=\"gpu\"",
                                 lambda: rsz.run("roi-align", None,
                                                 os.path.join(args.work, "rsz_python_encode") + "/{id}.jpg",
                                                 rois=annotation_file, image_root=photos, output_size="224x224",
                                                 quality=95, backend="cuda", decode="gpu", encode="gpu",
                                                 no_sync=args.no_sync))
    except ImportError:
        pass
    if args.no_sync:
        print("rsz's rows: --no-sync (outputs not flushed one by one, as torchvision's are not)")
    for key in args.jobs.split(","):
        if key not in jobs:
            continue
        name, run = jobs[key]
        seconds = timed(run, args.runs)
        print("%-58s %7.0f photos/s %8.0f crops/s  (%.3f s)"
              % (name, len(images) / seconds, len(annotations) / seconds, seconds))


if __name__ == "__main__":
    main()
