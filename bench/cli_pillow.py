#!/usr/bin/python3
"""The Pillow side of bench/cli_bench.sh, one process per command as a user's script would be.
usage: cli_pillow.py resize IN OUT W H | folder IN_DIR OUT_DIR WIDTH JOBS | crops IN OUT_DIR | thumbnail IN OUT SIZE
"""

import multiprocessing
import os
import sys

from PIL import Image


def resize(src, dst, width, height):
    with Image.open(src) as im:
        im.resize((width, height), Image.BILINEAR).save(dst)


def thumb(args):
    src, dst, width = args
    with Image.open(src) as im:
        im.resize((width, round(im.height * width / im.width)), Image.BILINEAR).save(dst)


def thumbnail(src, dst, size):
    """What a Pillow user writes for a thumbnail: draft (libjpeg DCT scaling, the shrink-on-load of JPEGs), then
    thumbnail (fit inside SIZE x SIZE), saved at quality 95 (rsz's default)."""
    with Image.open(src) as im:
        im.draft("RGB", (size, size))
        im.thumbnail((size, size))
        im.save(dst, quality=95)


def main():
    cmd = sys.argv[1]
    if cmd == "resize":
        resize(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "folder":
        src, dst, width, jobs = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        os.makedirs(dst, exist_ok=True)
        work = [(os.path.join(src, n), os.path.join(dst, n), width) for n in sorted(os.listdir(src))]
        with multiprocessing.Pool(jobs) as pool:
            pool.map(thumb, work)
    elif cmd == "thumbnail":
        thumbnail(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "crops":
        src, dst = sys.argv[2], sys.argv[3]
        os.makedirs(dst, exist_ok=True)
        with Image.open(src) as im:
            im.load()
            for y in range(0, 1792, 224):
                for x in range(0, 1792, 224):
                    im.crop((x, y, x + 224, y + 224)).save(os.path.join(dst, "%d-%d.png" % (x, y)))


if __name__ == "__main__":
    main()
