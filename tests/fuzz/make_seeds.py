#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets to tests/fuzz/corpus/<target>/ (small valid files, a few per target).

Copies fixtures from tests/data, configs/ and samples/rois, and generates tiny images with Pillow (python3-pil) and
libheif's heif-enc (libheif-examples):
    /usr/bin/python3 tests/fuzz/make_seeds.py
Rerunning rewrites the corpus (deterministically); keep each target's seeds small (well under 20 KB in all).
"""
import io
import json
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzz" / "corpus"


def target(name):
    folder = CORPUS / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def copy(folder, *paths):
    for path in paths:
        shutil.copyfile(ROOT / path, folder / Path(path).name)


def write_json(folder, name, value):
    (folder / name).write_text(json.dumps(value, indent=1) + "\n")


def sample(x, y, c, top):
    return (x * 37 + y * 91 + c * 53) * (top // 255) % (top + 1)


def image(width, height, mode):
    """A deterministic gradient in a Pillow mode: L, RGB, RGBA, CMYK (8 bits), I;16 (16-bit gray), 1 (bilevel)."""
    if mode == "1":
        gray = image(width, height, "L")
        return gray.point(lambda v: 255 if v > 100 else 0).convert("1", dither=Image.Dither.NONE)
    if mode == "I;16":
        data = b"".join(struct.pack("<H", sample(x, y, 0, 65535)) for y in range(height) for x in range(width))
        return Image.frombytes(mode, (width, height), data)
    channels = len(Image.getmodebands(mode) * [0])
    data = bytes(sample(x, y, c, 255) for y in range(height) for x in range(width) for c in range(channels))
    return Image.frombytes(mode, (width, height), data)


def npy_bytes(descr, shape, data):
    """A format 1.0 .npy file, laid out as numpy.save writes it (header padded to a multiple of 64 bytes)."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(n) for n in shape) if len(shape) != 1 else f"{shape[0]},")
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + data


def save(folder, name, image, **options):
    buffer = io.BytesIO()
    image.save(buffer, **options)
    (folder / name).write_bytes(buffer.getvalue())


def npy():
    folder = target("npy")
    copy(folder, "tests/data/npy/f4_2x3_v1.npy", "tests/data/npy/f2_2x1x3_v1.npy", "tests/data/npy/u4_4_v1.npy",
         "tests/data/npy/f4_rank5_v1.npy", "tests/data/npy/f4_0x3_v1.npy", "tests/data/npy/f4_2x3_v2.npy",
         "tests/data/npy/f4_2x3_v3.npy")
    (folder / "f4_1x3x4x5.npy").write_bytes(npy_bytes("<f4", (1, 3, 4, 5), struct.pack("<60f", *range(60))))
    (folder / "f2_3x2.npy").write_bytes(npy_bytes("<f2", (3, 2), struct.pack("<6e", 0, 1, -2, 0.5, 65504, 1e-7)))


def configs():
    folder = target("resample_config")
    copy(folder, "configs/resample_scale.json", "configs/resample_size.json")
    write_json(folder, "nearest.json", {"$schema": "schema/resample.schema.json", "interpolation": "nearest",
                                        "scales": [1, 1, 2.0, 0.25]})
    folder = target("upsample2d_config")
    copy(folder, "configs/upsample_2x_nearest.json")
    write_json(folder, "linear.json", {"op": "upsample2d", "interpolation": "linear",
                                       "scale_size": {"height": 3, "width": 1}})
    folder = target("roi_align_config")
    copy(folder, "configs/roi_align_crops.json")
    write_json(folder, "all_keys.json", {
        "op": "roi_align", "interpolation": "nearest", "reduction": "max", "spatial_scale_x": 0.5,
        "spatial_scale_y": 0.25, "out_of_bounds_input_value": -1, "minimum_samples_per_output": 2,
        "maximum_samples_per_output": 8, "output_height": 7, "output_width": 7, "input_pixel_offset": 0.5,
        "output_pixel_offset": -0.5, "align_regions_to_corners": True})
    folder = target("roi_file")
    copy(folder, "samples/rois/chelsea_eyes.json", "samples/rois/dataset.json")
    write_json(folder, "plain_no_indices.json", {"rois": [[0, 0, 1.5, 2.5]]})
    write_json(folder, "empty.json", {"$schema": "schema/rois.schema.json", "images": []})
    folder = target("batch_file")
    copy(folder, "configs/batch.json")
    write_json(folder, "rois_only.json", {
        "dtype": "float16",
        "steps": [{"op": "roi_align", "rois": "boxes.json", "config": {"output_height": 2, "output_width": 3},
                   "output": "{stem}_{label}_{id}_{index}{ext}"}]})


def images():
    # PNG and JPEG: the fixtures of tests/data/images (all tiny).
    folder = target("image_png")
    copy(folder, *[f"tests/data/images/{name}.png" for name in (
        "palette8", "palette4_trns", "palette1", "gray1", "gray16_trns", "rgb8_interlaced", "rgb16", "rgb8_trns")])
    save(folder, "rgba.png", image(5, 4, "RGBA"), format="PNG")
    folder = target("image_jpeg")
    copy(folder, "tests/data/images/jpeg_420.jpg", "tests/data/images/jpeg_gray.jpg",
         "tests/data/images/jpeg_progressive.jpg")
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90
    save(folder, "exif_rotated.jpg", image(6, 4, "RGB"), format="JPEG", quality=80, exif=exif)
    save(folder, "cmyk.jpg", image(4, 4, "CMYK"), format="JPEG", quality=70)

    folder = target("image_tiff")
    save(folder, "rgb_raw.tiff", image(4, 3, "RGB"), format="TIFF")
    save(folder, "rgba_lzw.tiff", image(4, 3, "RGBA"), format="TIFF", compression="tiff_lzw")
    save(folder, "gray16_deflate.tiff", image(5, 2, "I;16"), format="TIFF",
         compression="tiff_adobe_deflate")
    save(folder, "gray_packbits.tiff", image(8, 2, "L"), format="TIFF", compression="packbits")
    save(folder, "bilevel.tiff", image(9, 3, "1"), format="TIFF")

    folder = target("image_webp")
    save(folder, "rgb_lossless.webp", image(4, 3, "RGB"), format="WEBP", lossless=True)
    save(folder, "rgba_lossless.webp", image(4, 3, "RGBA"), format="WEBP", lossless=True)
    save(folder, "rgb_lossy.webp", image(16, 8, "RGB"), format="WEBP", quality=50)
    save(folder, "rgba_lossy.webp", image(8, 8, "RGBA"), format="WEBP", quality=50)

    folder = target("image_bmp")
    save(folder, "rgb24.bmp", image(5, 3, "RGB"), format="BMP")
    save(folder, "gray8.bmp", image(3, 2, "L"), format="BMP")
    save(folder, "palette4.bmp", image(6, 2, "RGB").convert("P", colors=16), format="BMP")
    save(folder, "bilevel.bmp", image(9, 3, "1"), format="BMP")
    save(folder, "rgba32.bmp", image(2, 2, "RGBA"), format="BMP")

    folder = target("image_gif")
    save(folder, "palette.gif", image(5, 3, "RGB").convert("P", colors=8), format="GIF")
    save(folder, "transparent.gif", image(4, 4, "RGB").convert("P", colors=4), format="GIF", transparency=1,
         optimize=False)
    save(folder, "interlaced.gif", image(6, 9, "RGB").convert("P", colors=16), format="GIF", interlace=True)
    frames = [image(4, 3, "RGB").convert("P", colors=4), image(4, 3, "L").convert("P", colors=4)]
    save(folder, "animated.gif", frames[0], format="GIF", save_all=True, append_images=frames[1:], duration=50,
         transparency=0, optimize=False)

    # HEIC and AVIF: made with libheif's heif-enc (Debian: libheif-examples), where it is installed.
    if shutil.which("heif-enc"):
        with tempfile.TemporaryDirectory() as scratch:
            scratch = Path(scratch)
            save(scratch, "rgb.png", image(16, 8, "RGB"), format="PNG")
            save(scratch, "rgba.png", image(8, 8, "RGBA"), format="PNG")
            for kind, flags in (("heic", []), ("avif", ["-A"])):
                folder = target("image_" + kind)
                for name in ("rgb", "rgba"):
                    subprocess.run(["heif-enc", "-q", "40", *flags, str(scratch / (name + ".png")), "-o",
                                    str(folder / (name + "." + kind))], check=True, capture_output=True)

    # JPEG XL: made with libjxl's cjxl (Debian: libjxl-tools), where it is installed: lossy, lossless, alpha.
    if shutil.which("cjxl"):
        with tempfile.TemporaryDirectory() as scratch:
            scratch = Path(scratch)
            save(scratch, "rgb.png", image(16, 8, "RGB"), format="PNG")
            save(scratch, "rgba.png", image(8, 8, "RGBA"), format="PNG")
            folder = target("image_jxl")
            for name, source, flags in (("lossy", "rgb", ["-d", "2"]), ("lossless", "rgb", ["-d", "0"]),
                                        ("alpha", "rgba", ["-d", "1"])):
                subprocess.run(["cjxl", str(scratch / (source + ".png")), str(folder / (name + ".jxl")), *flags],
                               check=True, capture_output=True)

    folder = target("image_pnm")
    (folder / "p1.pbm").write_bytes(b"P1\n# a comment\n4 2\n1 0 1 0\n0 1 0 1\n")
    (folder / "p2.pgm").write_bytes(b"P2\n3 2\n255\n0 128 255\n1 2 3\n")
    (folder / "p3.ppm").write_bytes(b"P3\n2 1\n65535\n0 1 2 65535 32768 7\n")
    save(folder, "p4.pbm", image(9, 3, "1"), format="PPM")
    save(folder, "p5.pgm", image(3, 2, "L"), format="PPM")
    (folder / "p5_16.pgm").write_bytes(b"P5\n2 2\n65535\n" + struct.pack(">4H", 0, 1, 4660, 65535))
    save(folder, "p6.ppm", image(3, 2, "RGB"), format="PPM")


def main():
    npy()
    configs()
    images()
    for folder in sorted(CORPUS.iterdir()):
        files = sorted(folder.iterdir())
        total = sum(f.stat().st_size for f in files)
        assert total < 20_000, f"{folder.name}: {total} bytes of seeds; keep them under 20 KB"
        print(f"{folder.name}: {len(files)} files, {total} bytes")


if __name__ == "__main__":
    main()
