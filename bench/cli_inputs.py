#!/usr/bin/python3
"""Makes the inputs of bench/cli_bench.sh from the sample photos: a 1080p JPEG and PNG, a 4K JPEG, a folder of 200
1024x768 JPEG photos, crops.json (64 labelled 224x224 boxes, an 8x8 grid over the 4K photo's top-left corner),
cam8k.jpg (an 8000x6000 camera-size photo: the largest sample upscaled, with sensor-like noise, quality 92, about
9 MB) and coco_big.json (a COCO file of train2017's size: 118,287 images, 860,001 annotations, about 450 MB, whose
images are the 200 photos in turn). Pillow (Debian's python3-pil) and numpy, bicubic upscales; deterministic.
usage: cli_inputs.py SAMPLES_DIR OUT_DIR [--skip cam8k,coco_big]
"""

import json
import os
import sys

import numpy as np
from PIL import Image

# instances_train2017.json's counts.
COCO_IMAGES = 118287
COCO_ANNOTATIONS = 860001


def make_cam8k(base, path):
    """The largest sample upscaled bicubic to 8000x6000 plus gaussian noise of sigma 4 (fixed seed, made band by band
    so that no 8000x6000 float array is held), saved at quality 92: a JPEG with a camera photo's size and entropy."""
    pixels = np.asarray(base.resize((8000, 6000), Image.BICUBIC)).copy()
    rng = np.random.default_rng(8000)
    for top in range(0, pixels.shape[0], 500):
        band = pixels[top:top + 500]
        noisy = band + rng.standard_normal(band.shape, dtype=np.float32) * np.float32(4)
        band[...] = np.clip(np.rint(noisy), 0, 255).astype(np.uint8)
    Image.fromarray(pixels).save(path, quality=92)


def make_coco_big(path):
    """A COCO instances file of train2017's size and shape, written as text (no giant Python object): images with the
    fields of the real one, file_name cycling over the 200 photos (1024x768), 7 or 8 annotations each with a box inside
    1024x768 and a polygon segmentation of 26 points (the bulk of the real file's bytes), 80 categories."""
    rng = np.random.default_rng(2017)
    # A pool of polygons, reused in turn: the parser reads as many numbers as in a file of distinct ones.
    polygons = []
    for _ in range(4096):
        pts = rng.uniform(0, 700, 52)
        polygons.append("[[" + ",".join("%.2f" % v for v in pts) + "]]")
    n = COCO_ANNOTATIONS
    w = rng.uniform(8, 400, n)
    h = rng.uniform(8, 300, n)
    x = rng.uniform(0, 1, n) * (1024 - w)
    y = rng.uniform(0, 1, n) * (768 - h)
    cat = rng.integers(1, 81, n)
    # Annotation i belongs to image i * COCO_IMAGES // n (7 or 8 each, every image has some).
    image_of = (np.arange(n, dtype=np.int64) * COCO_IMAGES) // n
    with open(path, "w") as f:
        f.write('{"info":{"description":"rsz bench: COCO train2017-size synthetic","version":"1.0","year":2017},'
                '"licenses":[{"url":"http://creativecommons.org/licenses/by-nc-sa/2.0/","id":1,'
                '"name":"Attribution-NonCommercial-ShareAlike License"}],"images":[')
        f.write(",".join(
            '{"license":1,"file_name":"photo%03d.jpg","coco_url":"http://images.cocodataset.org/train2017/%012d.jpg",'
            '"height":768,"width":1024,"date_captured":"2013-11-14 16:28:13",'
            '"flickr_url":"http://farm4.staticflickr.com/3153/%012d_5e6fbe5d1b_z.jpg","id":%d}'
            % (i % 200, i + 1, i + 1, i + 1) for i in range(COCO_IMAGES)))
        f.write('],"annotations":[')
        for start in range(0, n, 100000):
            stop = min(n, start + 100000)
            f.write(("," if start else "") + ",".join(
                '{"segmentation":%s,"area":%.1f,"iscrowd":0,"image_id":%d,"bbox":[%.2f,%.2f,%.2f,%.2f],'
                '"category_id":%d,"id":%d}'
                % (polygons[i % 4096], w[i] * h[i] * 0.7, image_of[i] + 1, x[i], y[i], w[i], h[i], cat[i], i + 1)
                for i in range(start, stop)))
        f.write('],"categories":[')
        f.write(",".join('{"supercategory":"thing","id":%d,"name":"class%02d"}' % (c, c) for c in range(1, 81)))
        f.write("]}")


def main():
    samples, out = sys.argv[1], sys.argv[2]
    skip = set(sys.argv[4].split(",")) if len(sys.argv) > 4 and sys.argv[3] == "--skip" else set()
    photos = [Image.open(os.path.join(samples, name)).convert("RGB")
              for name in sorted(os.listdir(samples)) if name.lower().endswith((".png", ".jpg", ".jpeg"))]
    base = photos[0]
    for p in photos:
        if p.width * p.height > base.width * base.height:
            base = p
    base.resize((1920, 1080), Image.BICUBIC).save(os.path.join(out, "in1080.jpg"), quality=90)
    base.resize((1920, 1080), Image.BICUBIC).save(os.path.join(out, "in1080.png"))
    base.resize((3840, 2160), Image.BICUBIC).save(os.path.join(out, "in4k.jpg"), quality=90)
    folder = os.path.join(out, "photos")
    os.makedirs(folder, exist_ok=True)
    for i in range(200):
        photo = photos[i % len(photos)]
        # A different crop of each photo, scaled to 1024x768.
        left = (i * 7) % max(1, photo.width // 4)
        top = (i * 5) % max(1, photo.height // 4)
        crop = photo.crop((left, top, photo.width - (i % 3) * 4, photo.height - (i % 5) * 3))
        crop.resize((1024, 768), Image.BICUBIC).save(os.path.join(folder, "photo%03d.jpg" % i), quality=90)
    rois = [{"box": [x, y, x + 224, y + 224], "label": "tile", "id": "%d-%d" % (x, y)}
            for y in range(0, 1792, 224) for x in range(0, 1792, 224)]
    with open(os.path.join(out, "crops.json"), "w") as f:
        json.dump({"images": [{"path": "in4k.jpg", "rois": rois}]}, f)
    if "cam8k" not in skip:
        make_cam8k(base, os.path.join(out, "cam8k.jpg"))
    if "coco_big" not in skip:
        make_coco_big(os.path.join(out, "coco_big.json"))


if __name__ == "__main__":
    main()
