#!/usr/bin/python3
"""Writes the PNG fixtures of tests/unit/image_test.cpp into tests/data/images/.

Only the Python standard library (zlib, struct) is used: each file is assembled chunk by chunk, so the fixtures
cover PNG variants that rsz's own writer never produces (palettes, 1/2/4-bit samples, tRNS, Adam7 interlacing,
a header claiming a huge size, a damaged CRC). Run from anywhere with /usr/bin/python3; the output is
deterministic, and the generated files are committed so that the tests need no Python. The pixel values are
spelled out again in image_test.cpp. MANIFEST.md lists the files.

truncated.jpg is not generated here: it is scikit-image's damaged test JPEG (see MANIFEST.md).
"""

import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "images")

GRAY, RGB, PALETTE, GRAY_ALPHA, RGBA = 0, 2, 3, 4, 6
SAMPLES = {GRAY: 1, RGB: 3, PALETTE: 1, GRAY_ALPHA: 2, RGBA: 4}


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def pack_row(samples, bit_depth):
    """One scanline of sample values (already flattened over channels), without the filter byte."""
    if bit_depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    if bit_depth == 8:
        return bytes(samples)
    out = bytearray()
    per_byte = 8 // bit_depth
    for i in range(0, len(samples), per_byte):
        group = samples[i:i + per_byte]
        byte = 0
        for j, s in enumerate(group):
            byte |= s << (8 - bit_depth * (j + 1))
        out.append(byte)
    return bytes(out)


# Adam7 passes: (x start, y start, x step, y step).
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def png(width, height, bit_depth, color_type, pixels, palette=None, trns=None, interlace=False):
    """pixels[y][x] is a tuple of sample values."""
    channels = SAMPLES[color_type]
    raw = bytearray()
    if interlace:
        for x0, y0, dx, dy in ADAM7:
            xs = list(range(x0, width, dx))
            if not xs:
                continue
            for y in range(y0, height, dy):
                flat = [s for x in xs for s in pixels[y][x]]
                raw += b"\x00" + pack_row(flat, bit_depth)
    else:
        for y in range(height):
            flat = [s for x in range(width) for s in pixels[y][x]]
            assert len(flat) == width * channels
            raw += b"\x00" + pack_row(flat, bit_depth)
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 1 if interlace else 0))
    if palette is not None:
        out += chunk(b"PLTE", b"".join(bytes(c) for c in palette))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    out += chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    out += chunk(b"IEND", b"")
    return out


FIXTURES = []  # (file name, description, bytes)


def add(name, description, data):
    FIXTURES.append((name, description, data))


def main():
    palette = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255), (10, 20, 30)]
    add("palette8.png", "4x2 8-bit palette (red, green, blue, white, (10,20,30)); indices 0 1 2 3 / 4 3 2 1",
        png(4, 2, 8, PALETTE, [[(0,), (1,), (2,), (3,)], [(4,), (3,), (2,), (1,)]], palette=palette))
    add("palette4_trns.png",
        "3x2 4-bit palette (red, green, blue, white) with tRNS alphas 0, 128, 255 (white opaque); "
        "indices 0 1 2 / 3 2 1",
        png(3, 2, 4, PALETTE, [[(0,), (1,), (2,)], [(3,), (2,), (1,)]], palette=palette[:4],
            trns=bytes([0, 128, 255])))
    add("palette1.png", "8x1 1-bit palette ((10,20,30), (200,100,50)); indices 0 1 1 0 1 0 0 1",
        png(8, 1, 1, PALETTE, [[(i,) for i in (0, 1, 1, 0, 1, 0, 0, 1)]], palette=[(10, 20, 30), (200, 100, 50)]))
    add("gray1.png", "10x1 1-bit gray: 1 0 1 1 0 0 1 0 1 1 (expands to 255/0)",
        png(10, 1, 1, GRAY, [[(v,) for v in (1, 0, 1, 1, 0, 0, 1, 0, 1, 1)]]))
    add("gray2.png", "5x1 2-bit gray: 0 1 2 3 2 (expands to 0 85 170 255 170)",
        png(5, 1, 2, GRAY, [[(v,) for v in (0, 1, 2, 3, 2)]]))
    add("gray4.png", "16x1 4-bit gray: 0..15 (expands to 17 * v)", png(16, 1, 4, GRAY, [[(v,) for v in range(16)]]))
    add("gray8_trns.png", "3x1 8-bit gray 0 50 200 with tRNS gray 50 (-> gray + alpha 255 0 255)",
        png(3, 1, 8, GRAY, [[(0,), (50,), (200,)]], trns=struct.pack(">H", 50)))
    add("rgb8_trns.png", "2x1 8-bit RGB (10,20,30) (40,50,60) with tRNS (10,20,30) (-> RGBA alpha 0 255)",
        png(2, 1, 8, RGB, [[(10, 20, 30), (40, 50, 60)]], trns=struct.pack(">HHH", 10, 20, 30)))
    add("gray16_trns.png", "3x1 16-bit gray 0 1000 65535 with tRNS gray 1000 (-> 16-bit gray + alpha)",
        png(3, 1, 16, GRAY, [[(0,), (1000,), (65535,)]], trns=struct.pack(">H", 1000)))
    add("rgb8_interlaced.png", "7x5 8-bit RGB, Adam7 interlaced; pixel (x, y) = (30x, 50y, x + y)",
        png(7, 5, 8, RGB, [[(30 * x, 50 * y, x + y) for x in range(7)] for y in range(5)], interlace=True))
    add("rgb16.png", "3x1 16-bit RGB (0,1,2) (256,4660,65535) (65534,32768,7)",
        png(3, 1, 16, RGB, [[(0, 1, 2), (256, 4660, 65535), (65534, 32768, 7)]]))

    huge = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 70000, 70000, 8, RGB, 0, 0, 0))
    huge += chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b"")
    add("huge_header.png", "a PNG whose header claims 70000x70000 RGB (4.9 gigapixels); its data is 64 bytes", huge)

    damaged = bytearray(png(4, 2, 8, PALETTE, [[(0,), (1,), (2,), (3,)], [(4,), (3,), (2,), (1,)]], palette=palette))
    idat = damaged.index(b"IDAT")
    damaged[idat + 6] ^= 0xFF  # a byte of the compressed data: the IDAT CRC no longer matches
    add("bad_crc.png", "palette8.png with one IDAT data byte flipped (CRC mismatch)", bytes(damaged))

    os.makedirs(OUT, exist_ok=True)
    for name, _, data in FIXTURES:
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    with open(os.path.join(OUT, "MANIFEST.md"), "w") as f:
        f.write("# Image fixtures\n\n")
        f.write("The PNG files are generated by `tests/data/make_image_fixtures.py` (Python standard library only); "
                "do not edit by hand.\n`truncated.jpg` is scikit-image's damaged test JPEG (a 100x100 JPEG cut short "
                "inside its headers, 400 bytes), copied unchanged.\n\n")
        f.write("| file | content |\n| --- | --- |\n")
        for name, description, _ in FIXTURES:
            f.write(f"| {name} | {description} |\n")
        f.write("| truncated.jpg | a JPEG cut short on purpose (scikit-image test data, public domain) |\n")


if __name__ == "__main__":
    main()
