#!/usr/bin/python3
"""Makes the inputs of bench/cli_bench.sh from the sample photos: a 1080p JPEG and PNG, a 4K JPEG, a folder of 200
1024x768 JPEG photos, and crops.json (64 labelled 224x224 boxes, an 8x8 grid over the 4K photo's top-left corner).
Pillow (Debian's python3-pil), bicubic upscales; deterministic.
usage: cli_inputs.py SAMPLES_DIR OUT_DIR
"""

import json
import os
import sys

from PIL import Image


def main():
    samples, out = sys.argv[1], sys.argv[2]
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


if __name__ == "__main__":
    main()
