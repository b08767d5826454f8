#!/usr/bin/python3
"""The Pillow side of bench/cli_bench.sh, one process per command as a user's script would be.
usage: cli_pillow.py resize IN OUT W H | folder IN_DIR OUT_DIR WIDTH JOBS | crops IN OUT_DIR
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
