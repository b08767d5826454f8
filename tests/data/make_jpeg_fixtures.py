#!/usr/bin/python3
"""Writes the JPEG fixtures of tests/unit/jpeg_codec_test.cpp into tests/data/images/ with Pillow (Debian's
python3-pil). They cover the JPEG variants rsz's own writer never produces (4:4:4 and 4:2:2 subsampling,
progressive scans, Adobe CMYK) on a size that is not a whole number of blocks. The tests decode each file with
rsz's libjpeg-turbo reader and with OpenCV imgcodecs and require the same pixels, so the content only needs to be
busy. Deterministic; the generated files are committed so that the tests need no Python.
"""

import os

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "images")
W, H = 61, 47


def pixel(x, y):
    return ((x * 37 + y * 11) % 256, (x * x + 3 * y * y) % 256, (x * y * 5 + 90) % 256)


def main():
    rgb = Image.new("RGB", (W, H))
    rgb.putdata([pixel(x, y) for y in range(H) for x in range(W)])
    rgb.save(os.path.join(OUT, "jpeg_420.jpg"), quality=90, subsampling=2)
    rgb.save(os.path.join(OUT, "jpeg_422.jpg"), quality=90, subsampling=1)
    rgb.save(os.path.join(OUT, "jpeg_444.jpg"), quality=97, subsampling=0)
    rgb.save(os.path.join(OUT, "jpeg_progressive.jpg"), quality=85, progressive=True)
    rgb.convert("L").save(os.path.join(OUT, "jpeg_gray.jpg"), quality=90)
    rgb.convert("CMYK").save(os.path.join(OUT, "jpeg_cmyk.jpg"), quality=90)


if __name__ == "__main__":
    main()
