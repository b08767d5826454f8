"""The Python module: values against the rsz CLI on the same files, against PyTorch and torchvision under the mappings
of docs/SEMANTICS.md §5 (their tolerances), zero-copy inputs and outputs, DLPack, errors.

Run by ctest (python.pytest) with PYTHONPATH=build/python, RSZ_BINARY (the CLI) and RSZ_SOURCE_DIR set.
"""

import inspect
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import rsz

SOURCE = os.path.abspath(os.environ.get("RSZ_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
BINARY = os.environ.get("RSZ_BINARY", "rsz")
PHOTO = os.path.join(SOURCE, "samples", "photos", "chelsea.png")
CAMERA = os.path.join(SOURCE, "samples", "photos", "camera.png")


def cli(*args):
    done = subprocess.run([BINARY, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def random_tensor(shape, seed, dtype=np.float32, low=-2.0, high=3.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


def close(got, want, what):
    """SEMANTICS.md §5: |diff| <= 1e-5 * max(1, |value|) against a faithful float32 implementation, on data of
    magnitude ~1 (the coordinates' rounding differs between implementations, so the bound scales with the data's
    slope)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, what
    bound = 1e-5 * np.maximum(1.0, np.abs(want))
    worst = np.max(np.abs(got - want) - bound)
    assert worst <= 0, "%s: off by %g beyond the tolerance" % (what, worst)


# ---- the same values as the CLI on the same files ----

def test_resample_matches_the_cli(tmp_path):
    out = tmp_path / "half.npy"
    cli("resample", "-i", PHOTO, "-o", str(out), "--scale", "0.5", "-q")
    image = rsz.read_image(PHOTO)
    got = rsz.resample(image, scales=0.5)
    assert got.dtype == np.float32 and got.shape == (1, 3, 150, 225)
    assert np.array_equal(got, np.load(out))
    # The decoded samples read in place give the same bits.
    assert np.array_equal(rsz.resample(rsz.read_image(PHOTO, dtype="uint"), scales=0.5), got)


@pytest.mark.parametrize("flags,kwargs", [
    (["--size", "100x70", "--mode", "nearest"], dict(sizes=(70, 100), mode="nearest")),
    (["--width", "64", "--preset", "align_corners"], dict(sizes=(43, 64), preset="align_corners")),
    (["--scale", "1.7", "--preset", "nearest_floor"], dict(scales=1.7, preset="nearest_floor")),
    (["--scale", "0.3", "--antialias"], dict(scales=0.3, antialias=True)),
    (["--scale", "0.5", "--mode", "nearest", "--rounding-direction", "round_prefer_floor"],
     dict(scales=0.5, mode="nearest", rounding_direction="round_prefer_floor")),
])
def test_resample_flags_match_the_keywords(tmp_path, flags, kwargs):
    out = tmp_path / "out.npy"
    cli("resample", "-i", PHOTO, "-o", str(out), "-q", *flags)
    assert np.array_equal(rsz.resample(rsz.read_image(PHOTO), **kwargs), np.load(out))


@pytest.mark.parametrize("command,flags,call", [
    ("resample", ["--size", "200x200", "--fit", "cover", "--gravity", "north"],
     lambda im: rsz.resize(im, "200x200", fit="cover", gravity="north")),
    ("resample", ["--size", "200x200", "--fit", "cover", "--preset", "align_corners"],
     lambda im: rsz.resize(im, (200, 200), fit="cover", preset="align_corners")),
    ("resample", ["--size", "90x60", "--preset", "nearest_floor", "--mode", "linear"],  # keywords over the preset
     lambda im: rsz.resize(im, (60, 90), preset="nearest_floor", mode="linear")),
    ("resample", ["--size", "300x300", "--fit", "contain", "--gravity", "southeast"],
     lambda im: rsz.resize(im[0], 300, fit="contain", gravity="southeast")[np.newaxis]),
    ("resample", ["--height", "100"], lambda im: rsz.resize(im, (100, None))),
    ("resample", ["--size", "50%"], lambda im: rsz.resize(im, "50%")),
    ("thumbnail", ["--size", "128"], lambda im: rsz.thumbnail(im, 128)),
    ("thumbnail", ["--size", "96", "--fit", "cover"], lambda im: rsz.thumbnail(im, 96, fit="cover")),
    ("thumbnail", ["--size", "1000", "--enlarge"], lambda im: rsz.thumbnail(im, 1000, enlarge=True)),
])
def test_resize_and_thumbnail_match_the_cli(tmp_path, command, flags, call):
    """rsz.resize / rsz.thumbnail plan as the command line does (one planning function), to the bit."""
    out = tmp_path / "out.npy"
    cli(command, "-i", PHOTO, "-o", str(out), "-q", *flags)
    got = call(rsz.read_image(PHOTO))
    want = np.load(out)
    assert got.shape == want.shape
    assert np.array_equal(got, want)


def test_resize_keeps_an_images_channels_and_refuses_what_means_nothing():
    rgba = np.zeros((1, 4, 30, 40), np.float32)
    rgba[:, 0] = 1.0
    rgba[:, 3] = 1.0
    small = rsz.resize(rgba, scales=0.5)
    assert small.shape == (1, 4, 15, 20)
    assert np.all(small[:, 0] == 1.0) and np.all(small[:, 1:3] == 0.0) and np.all(small[:, 3] == 1.0)
    assert rsz.thumbnail(rgba, 64).shape == (1, 4, 30, 40)  # only shrinking
    with pytest.raises(ValueError, match="only with fit cover or contain"):
        rsz.resize(rgba, "20x20", gravity="north")
    with pytest.raises(ValueError, match="sides up to"):
        rsz.resize(rgba, "1e20%")
    with pytest.raises(ValueError, match="give size"):
        rsz.resize(rgba)


# Python keywords that spell a config field otherwise (the rest are the JSON keys themselves).
RENAMED = {
    "resample": {"interpolation": "mode", "output_sizes": "sizes", "antialiased": "antialias"},
    "upsample2d": {"interpolation": "mode", "scale_size": "factor"},
    "roi_align": {"interpolation": "mode", "spatial_scale_x": "spatial_scale", "spatial_scale_y": "spatial_scale",
                  "output_height": "output_size", "output_width": "output_size"},
}


def test_every_config_field_is_a_keyword_with_the_cores_default():
    """The operator spec tables (rsz/io/ops.h) against the Python signatures: a field added to an operator without
    its keyword, or a keyword whose default differs from the core's, fails here."""
    functions = {"resample": rsz.resample, "upsample2d": rsz.upsample2d, "roi_align": rsz.roi_align}
    specs = rsz._rsz.operator_specs()
    assert [s["op"] for s in specs] == ["resample", "upsample2d", "roi_align"]
    for spec in specs:
        parameters = inspect.signature(functions[spec["op"]]).parameters
        for field in spec["fields"]:
            keyword = RENAMED[spec["op"]].get(field["key"], field["key"])
            assert keyword in parameters, (spec["op"], field["key"])
            default = parameters[keyword].default
            if keyword == field["key"] and field["default"] and default is not None:
                assert default == json.loads(field["default"]), (spec["op"], keyword)
            if field["kind"] == "enum" and default is not None and isinstance(default, str):
                assert default in field["choices"], (spec["op"], keyword)


def test_info_reads_headers_as_the_cli_does(tmp_path):
    assert rsz.info(PHOTO) == {"width": 451, "height": 300, "channels": 3, "bit_depth": 8, "format": "png"}
    np.save(tmp_path / "x.npy", np.zeros((2, 3, 4, 5), np.float16))
    assert rsz.info(tmp_path / "x.npy") == {"shape": (2, 3, 4, 5), "dtype": "float16"}
    with pytest.raises(ValueError, match="no-such.png"):
        rsz.info(tmp_path / "no-such.png")


def test_upsample_and_roi_align_match_the_cli(tmp_path):
    up = tmp_path / "up.npy"
    cli("upsample", "-i", CAMERA, "-o", str(up), "--factor", "2,3", "--mode", "linear", "-q")
    assert np.array_equal(rsz.upsample2d(rsz.read_image(CAMERA), (2, 3), mode="linear"), np.load(up))

    boxes = [[10.5, 20.0, 200.25, 180.0], [300.0, 40.0, 120.0, 90.0], [-30.0, -10.0, 40.0, 50.0]]
    (tmp_path / "boxes.json").write_text(json.dumps({"rois": boxes}))
    crops = tmp_path / "crops.npy"
    cli("roi-align", "-i", PHOTO, "--rois", str(tmp_path / "boxes.json"), "--output-size", "7x5", "--reduction",
        "max", "-o", str(crops), "-q", "--rois-check", "off")  # the inverted box is on purpose
    # --output-size is W x H; output_size is (height, width), as in torchvision.
    got = rsz.roi_align(rsz.read_image(PHOTO), np.array(boxes, np.float32), output_size=(5, 7), reduction="max")
    assert got.shape == (3, 3, 5, 7)
    assert np.array_equal(got, np.load(crops))


def test_images_round_trip(tmp_path):
    image = rsz.read_image(PHOTO)
    rsz.write_image(tmp_path / "copy.png", image)
    assert np.array_equal(rsz.read_image(tmp_path / "copy.png"), image)
    rsz.write_image(tmp_path / "copy16.png", image[0], bit_depth=16)  # (C, H, W) is accepted too
    assert np.array_equal(rsz.read_image(tmp_path / "copy16.png", dtype="uint").dtype, np.uint16)
    samples = rsz.read_image(PHOTO, dtype="uint")
    assert samples.dtype == np.uint8 and samples.shape == (1, 3, 300, 451)
    assert np.array_equal(samples.astype(np.float32) / 255, image)


# ---- PyTorch and torchvision, under the documented mappings ----

def test_resample_against_torch_interpolate():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = random_tensor((2, 3, 37, 53), 1, low=0.0, high=1.0)
    t = torch.from_numpy(x)
    for size in [(74, 106), (18, 26), (41, 29), (111, 17)]:
        close(rsz.resample(x, sizes=size), F.interpolate(t, size=size, mode="bilinear", align_corners=False).numpy(),
              "bilinear %s" % (size,))
        close(rsz.resample(x, sizes=size, preset="align_corners"),
              F.interpolate(t, size=size, mode="bilinear", align_corners=True).numpy(), "align_corners %s" % (size,))
    # Nearest: integer factors have no ties, so the results are the same bits.
    for factor in [2, 3]:
        want = F.interpolate(t, scale_factor=factor, mode="nearest").numpy()
        assert np.array_equal(rsz.resample(x, scales=factor, preset="nearest_floor"), want)
        assert np.array_equal(rsz.upsample2d(x, factor), want)


def test_antialias_against_torch_and_pillow():
    """SEMANTICS.md section 1.7: the same taps and weights as torch's antialias=True and Pillow's BILINEAR; torch
    fuses each multiply-add (FMA) and Pillow computes in double, so the values agree to rounding only."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = random_tensor((1, 3, 97, 131), 2, low=0.0, high=1.0)
    for size in [(48, 65), (24, 32), (60, 17), (9, 130)]:
        ours = rsz.resample(x, sizes=size, antialias=True)
        want = F.interpolate(torch.from_numpy(x), size=size, mode="bilinear", align_corners=False,
                             antialias=True).numpy()
        close(ours, want, "antialias %s" % (size,))
        plain = rsz.resample(x, sizes=size)
        assert not np.allclose(plain, want, atol=1e-3), "the 2-tap filter should differ"
    Image = pytest.importorskip("PIL.Image")
    pil = np.stack([np.asarray(Image.fromarray(x[0, c]).resize((65, 48), Image.BILINEAR)) for c in range(3)])
    close(rsz.resample(x, sizes=(48, 65), antialias=True)[0], pil, "Pillow BILINEAR")


def test_rounding_directions_on_exact_ties():
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 1, 8)
    # scale 0.5, offsets 0.5 / -0.5: x = 2 o + 0.5, every coordinate an exact tie.
    assert rsz.resample(x, scales=(1, 0.5), mode="nearest").ravel().tolist() == [1, 3, 5, 7]
    assert rsz.resample(x, scales=(1, 0.5), mode="nearest",
                        rounding_direction="round_prefer_floor").ravel().tolist() == [0, 2, 4, 6]
    assert rsz.resample(x, scales=(1, 0.5), mode="nearest", rounding_direction="floor").ravel().tolist() == [0, 2, 4, 6]
    assert rsz.resample(x, scales=(1, 0.5), mode="nearest", rounding_direction="ceil").ravel().tolist() == [1, 3, 5, 7]
    with pytest.raises(ValueError, match="rounding_direction"):
        rsz.resample(x, scales=0.5, mode="nearest", rounding_direction="up")


def test_roi_align_against_torchvision():
    torch = pytest.importorskip("torch")
    ops = pytest.importorskip("torchvision.ops")
    x = random_tensor((2, 8, 40, 50), 2, low=0.0, high=1.0)
    rng = np.random.default_rng(3)
    corners = rng.uniform(-5, 55, size=(20, 2, 2))
    # At least 1 pixel wide after spatial_scale 0.5 (torchvision widens smaller boxes when aligned=False).
    boxes = np.concatenate([corners.min(axis=1), corners.max(axis=1) + 2.0], axis=1)
    batch = rng.integers(0, 2, size=(20, 1)).astype(np.float64)
    table = torch.from_numpy(np.concatenate([batch, boxes], axis=1).astype(np.float32))
    t = torch.from_numpy(x)
    for aligned in [True, False]:
        for ratio in [1, 2, 3]:
            want = ops.roi_align(t, table, output_size=(7, 6), spatial_scale=0.5, sampling_ratio=ratio,
                                 aligned=aligned)
            got = rsz.roi_align(t, table, output_size=(7, 6), spatial_scale=0.5, sampling_ratio=ratio,
                                aligned=aligned)
            assert isinstance(got, torch.Tensor)  # a torch input gives a torch output
            close(got.numpy(), want.numpy(), "aligned=%s, sampling_ratio=%d" % (aligned, ratio))


# ---- zero-copy, DLPack, float16 ----

def test_out_is_written_in_place():
    x = random_tensor((1, 2, 9, 7), 4)
    out = np.full((1, 2, 18, 14), np.nan, np.float32)
    got = rsz.resample(x, out=out)  # the output shape gives the sizes
    assert got is out
    assert np.array_equal(out, rsz.resample(x, scales=2))
    # A strided output view is written where it points, and nothing else is touched.
    big = np.zeros((1, 2, 18, 28), np.float32)
    rsz.upsample2d(x, 2, out=big[:, :, :, ::2])
    assert np.array_equal(big[:, :, :, ::2], rsz.upsample2d(x, 2))
    assert not big[:, :, :, 1::2].any()


def test_strided_inputs_are_read_in_place():
    x = random_tensor((1, 24, 31, 3), 5)  # N H W C
    nchw = x.transpose(0, 3, 1, 2)  # a strided view, not contiguous
    assert not nchw.flags.c_contiguous
    assert np.array_equal(rsz.resample(nchw, scales=0.6), rsz.resample(np.ascontiguousarray(nchw), scales=0.6))
    # A view of 1 x 3 x 100000 x 100000 floats (120 GB if it were copied) over 12 bytes: only the taps are read.
    huge = np.lib.stride_tricks.as_strided(np.array([0.25, 0.5, 0.75], np.float32), shape=(1, 3, 100000, 100000),
                                           strides=(0, 4, 0, 0))
    small = rsz.resample(huge, sizes=(4, 5))
    assert np.array_equal(small, np.broadcast_to(np.array([0.25, 0.5, 0.75], np.float32)[None, :, None, None],
                                                 (1, 3, 4, 5)))
    crops = rsz.roi_align(huge, [[0, 0, 90000.0, 90000.0]], output_size=2, sampling_ratio=2)
    assert np.array_equal(crops[0, :, 0, 0], [0.25, 0.5, 0.75])


def test_torch_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(random_tensor((1, 3, 10, 12), 6))
    out = torch.empty((1, 3, 20, 24))
    got = rsz.resample(t, out=out)
    assert got is out
    assert np.array_equal(out.numpy(), rsz.resample(t.numpy(), scales=2))
    half = rsz.upsample2d(t.half(), 2)
    assert isinstance(half, torch.Tensor) and half.dtype == torch.float16


def test_float16_is_widened_computed_in_float32_and_rounded_once():
    x16 = random_tensor((1, 2, 13, 17), 7, np.float16)
    got = rsz.resample(x16, scales=(0.7, 1.9))
    assert got.dtype == np.float16
    want = rsz.resample(x16.astype(np.float32), scales=(0.7, 1.9)).astype(np.float16)
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))


def test_threads_do_not_change_results_and_calls_run_concurrently():
    x = random_tensor((1, 3, 300, 400), 8)
    want = rsz.resample(x, scales=0.37, threads=1)
    results = [None] * 4

    def work(i):
        results[i] = rsz.resample(x, scales=0.37, threads=2)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert np.array_equal(r, want)


def test_backends_are_listed_and_give_the_same_bits():
    listed = {b["name"]: b for b in rsz.backends()}
    assert listed["reference"]["available"] and listed["cpu"]["available"]
    assert listed["cpu"]["memory"] == "host"
    assert listed["cpu"]["devices"] == 1 and listed["reference"]["devices"] == 1
    if "cuda" in listed:
        assert listed["cuda"]["devices"] >= (1 if listed["cuda"]["available"] else 0)
    x = random_tensor((2, 3, 37, 41), 10)
    boxes = np.array([[1.5, 2.0, 30.0, 20.0], [-3.0, 4.0, 12.0, 40.0]], np.float32)
    calls = [
        lambda **k: rsz.resample(x, scales=(0.61, 1.7), **k),
        lambda **k: rsz.upsample2d(x, (2, 3), mode="linear", **k),
        lambda **k: rsz.roi_align(x, boxes, [1, 0], output_size=(5, 4), sampling_ratio=2, **k),
    ]
    for call in calls:
        want = call(backend="cpu")
        assert np.array_equal(call(backend="reference").view(np.uint32), want.view(np.uint32))
        assert np.array_equal(call().view(np.uint32), want.view(np.uint32))
        cuda = listed.get("cuda")
        if cuda is not None and cuda["available"]:
            assert np.array_equal(call(backend="cuda", device=0).view(np.uint32), want.view(np.uint32))
        else:
            with pytest.raises(ValueError) as caught:
                call(backend="cuda")
            assert "cuda" in str(caught.value)


# ---- errors: ValueError with rsz's message ----

@pytest.mark.parametrize("call,needle", [
    (lambda x: rsz.resample(x, scales=-1), "each scale must be finite and > 0"),
    (lambda x: rsz.resample(x), "give scales, sizes or out"),
    (lambda x: rsz.resample(x, scales=2, mode="cubic"), "nearest or linear is allowed"),
    (lambda x: rsz.resample(x, scales=2, preset="bicubic"), "is not a preset"),
    (lambda x: rsz.resample(x[:, :, ::-1], scales=2), "strides must be non-negative"),
    (lambda x: rsz.resample(x.astype(np.int32), scales=2), "has dtype int32"),
    (lambda x: rsz.upsample2d(x, 2, out=np.zeros((1, 2, 12, 11), np.float32)), "out has shape"),
    (lambda x: rsz.resample(x[0], scales=2), "rank"),
    (lambda x: rsz.upsample2d(x, 0), "both must be >= 1"),
    (lambda x: rsz.roi_align(x, [[0, 0, 1, 1]], [5], output_size=2), "batch_indices[0] = 5"),
    (lambda x: rsz.roi_align(x, [[0, 0, 1, 1]]), "output_size is required"),
    (lambda x: rsz.read_image("/no/such/image.png"), "/no/such/image.png"),
    (lambda x: rsz.resample(x.astype(">f4"), scales=2), "byte order"),
    (lambda x: rsz.resample(x, sizes=(1, 2, 3)), "sizes has 3 values"),
    (lambda x: rsz.resample(x[0], sizes=(2, 2)), "rank 4"),
    (lambda x: rsz.resample(np.frombuffer(bytes(4 * 31), np.float32, count=30, offset=2).reshape(1, 1, 5, 6),
                            scales=2), "not aligned"),
    (lambda x: rsz.upsample2d(x, 1.5), "whole numbers"),
    (lambda x: rsz.resample(x, scales=2, backend="gpu"), "auto, cpu, reference or cuda is allowed"),
    (lambda x: rsz.upsample2d(x, 2, device=-1), "device = -1"),
])
def test_errors_are_value_errors_with_rsz_messages(call, needle):
    x = random_tensor((1, 2, 6, 5), 9)
    with pytest.raises(ValueError) as caught:
        call(x)
    assert needle in str(caught.value)


def test_image_samples_with_a_float16_output_take_float16_boxes():
    samples = rsz.read_image(PHOTO, dtype="uint")
    out = np.empty((1, 3, 4, 4), np.float16)
    got = rsz.roi_align(samples, [[10, 20, 60, 80]], output_size=4, out=out)
    assert got is out
    want = rsz.roi_align(rsz.read_image(PHOTO), np.array([[10, 20, 60, 80]], np.float16).astype(np.float32),
                         output_size=4)
    assert np.array_equal(out.view(np.uint16), want.astype(np.float16).view(np.uint16))


def test_negative_strides_on_single_element_axes_are_harmless():
    x = random_tensor((1, 1, 6, 5), 11)
    assert np.array_equal(rsz.resample(x[:, ::-1], scales=2), rsz.resample(x, scales=2))


def test_read_only_output_is_refused():
    x = random_tensor((1, 1, 4, 4), 10)
    out = np.zeros((1, 1, 8, 8), np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        rsz.resample(x, out=out)


# The README's and docs/' Python examples run in test_docs.py.


# ---- numpy and torch habits: float64, torchvision's list of boxes, dtypes, lazy torch views ----

def test_float64_is_computed_as_float32_and_gives_float32():
    """numpy's default dtype: converted to float32 (the kernels compute in float32), a float32 result, the same bits
    as the float32 call; torch float64 tensors give float32 tensors."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x64 = np.random.default_rng(12).uniform(0.0, 1.0, size=(2, 3, 21, 34))
    x32 = x64.astype(np.float32)
    boxes64 = np.array([[1.25, 2.0, 30.5, 17.0], [-3.0, 4.0, 12.0, 20.0]])
    calls = [
        lambda x, b: rsz.resample(x, scales=(0.61, 1.7)),
        lambda x, b: rsz.resize(x[:1], "20x12"),
        lambda x, b: rsz.resize(x[0], scales=0.5),
        lambda x, b: rsz.thumbnail(x[:1], 16),
        lambda x, b: rsz.upsample2d(x, (2, 3), mode="linear"),
        lambda x, b: rsz.roi_align(x, b, [1, 0], output_size=(5, 4), sampling_ratio=2),
    ]
    for call in calls:
        got = call(x64, boxes64)
        assert got.dtype == np.float32
        # Float64 boxes take x's float type the same way: float32 here.
        assert np.array_equal(got.view(np.uint32), call(x32, boxes64.astype(np.float32)).view(np.uint32))
        t = call(torch.from_numpy(x64), torch.from_numpy(boxes64))
        assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
        assert np.array_equal(t.numpy(), got)
    # Against torch computing in float64: float32's rounding only, within SEMANTICS.md §5's tolerance.
    close(rsz.resample(x64, sizes=(40, 50)),
          F.interpolate(torch.from_numpy(x64), size=(40, 50), mode="bilinear", align_corners=False).numpy(),
          "float64 bilinear")
    # float16 x with float64 boxes: the boxes become float16, as x's float type.
    x16 = x32.astype(np.float16)
    assert np.array_equal(rsz.roi_align(x16, boxes64, output_size=3).view(np.uint16),
                          rsz.roi_align(x16, boxes64.astype(np.float16), output_size=3).view(np.uint16))


def test_roi_align_takes_torchvisions_list_of_boxes_per_image():
    """torchvision.ops.roi_align's List[Tensor] form: rois[i] holds image i's (K_i, 4) boxes, results in list order."""
    torch = pytest.importorskip("torch")
    ops = pytest.importorskip("torchvision.ops")
    x = random_tensor((3, 4, 30, 40), 13, low=0.0, high=1.0)
    rng = np.random.default_rng(14)
    per_image = []
    for count in [4, 0, 3]:  # an image without boxes too
        corners = rng.uniform(-3, 42, size=(count, 2, 2))
        per_image.append(np.concatenate([corners.min(axis=1), corners.max(axis=1) + 2.0], axis=1).astype(np.float32))
    tensors = [torch.from_numpy(b) for b in per_image]
    t = torch.from_numpy(x)
    for aligned in [True, False]:
        want = ops.roi_align(t, tensors, output_size=(5, 6), spatial_scale=0.75, sampling_ratio=2, aligned=aligned)
        got = rsz.roi_align(t, tensors, output_size=(5, 6), spatial_scale=0.75, sampling_ratio=2, aligned=aligned)
        assert isinstance(got, torch.Tensor) and tuple(got.shape) == (7, 4, 5, 6)
        close(got.numpy(), want.numpy(), "list of boxes, aligned=%s" % aligned)
    # The same boxes as the (R, 5) table, and as numpy arrays or nested lists per image: the same bits.
    table = np.concatenate([np.concatenate([np.full((len(b), 1), i, np.float32), b], axis=1)
                            for i, b in enumerate(per_image)])
    want = rsz.roi_align(x, table, output_size=3, sampling_ratio=2)
    assert np.array_equal(rsz.roi_align(x, per_image, output_size=3, sampling_ratio=2), want)
    assert np.array_equal(rsz.roi_align(x, tuple(b.tolist() for b in per_image), output_size=3, sampling_ratio=2),
                          want)
    with pytest.raises(ValueError) as caught:
        rsz.roi_align(x, [table[:2], table[2:]], output_size=3)
    assert str(caught.value) == ("roi_align: rois[0] has shape (2, 5); a list of boxes per image holds (K_i, 4) "
                                 "arrays, [x1, y1, x2, y2] for image i")
    with pytest.raises(ValueError) as caught:
        rsz.roi_align(x, per_image, [0] * 7, output_size=3)
    assert str(caught.value) == ("roi_align: rois is a list of boxes per image (its positions are the batch indices) "
                                 "and batch_indices is given; give one")
    assert rsz.roi_align(x, [], output_size=3).shape == (0, 4, 3, 3)


OPERAND = "float32, float16, float64 (computed as float32) or uint8 / uint16 image samples is allowed"


@pytest.mark.parametrize("call,message", [
    (lambda x, torch: rsz.resample(x.astype(np.int32), scales=2), "resample: x has dtype int32; " + OPERAND),
    (lambda x, torch: rsz.upsample2d(x.astype(np.complex64), 2), "upsample2d: x has dtype complex64; " + OPERAND),
    (lambda x, torch: rsz.resize(x > 0, "4x4"), "resize: image has dtype bool; " + OPERAND),
    (lambda x, torch: rsz.thumbnail(x.astype(np.uint32), 4), "thumbnail: image has dtype uint32; " + OPERAND),
    (lambda x, torch: rsz.resample(torch.from_numpy(x).bfloat16(), scales=2),
     "resample: x has dtype torch.bfloat16; " + OPERAND),
    (lambda x, torch: rsz.resample(torch.from_numpy(x) > 0, scales=2), "resample: x has dtype torch.bool; " + OPERAND),
    (lambda x, torch: rsz.roi_align(torch.from_numpy(x).long(), [[0, 0, 1, 1]], output_size=2),
     "roi_align: x has dtype int64; " + OPERAND),
    (lambda x, torch: rsz.roi_align(x, np.zeros((1, 4), np.complex64), output_size=2),
     "roi_align: rois has dtype complex64; float or integer coordinates are allowed"),
    (lambda x, torch: rsz.roi_align(x, [torch.zeros((1, 4), dtype=torch.bfloat16)], output_size=2),
     "roi_align: rois[0] has dtype torch.bfloat16; float or integer coordinates are allowed"),
    (lambda x, torch: rsz.roi_align(x, [[0, 0, 1, 1]], np.array([True]), output_size=2),
     "roi_align: batch_indices has dtype bool; integers (or whole floats) are allowed"),
    (lambda x, torch: rsz.resample(x, out=np.zeros((1, 2, 12, 10))),
     "resample: out has dtype float64; float32 or float16 is allowed (out is written in place, in the type the "
     "kernels write)"),
    (lambda x, torch: rsz.upsample2d(x, 2, out=torch.zeros((1, 2, 12, 10), dtype=torch.bfloat16)),
     "upsample2d: out has dtype torch.bfloat16; float32 or float16 is allowed (out is written in place, in the type "
     "the kernels write)"),
    (lambda x, torch: rsz.write_image("never.png", x.astype(np.int16)),
     "write_image: image has dtype int16; " + OPERAND),
])
def test_unsupported_dtypes_name_the_argument_the_dtype_and_what_is_allowed(call, message):
    """One DTypeError, a TypeError (numpy's habit) and a ValueError (rsz's) at once, never a bare RuntimeError."""
    torch = pytest.importorskip("torch")
    x = random_tensor((1, 2, 6, 5), 15)
    with pytest.raises(rsz.DTypeError) as caught:
        call(x, torch)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)
    assert str(caught.value) == message


def test_torch_negative_and_conjugate_bits_are_resolved_not_misread():
    """t.conj().imag is a lazy view: its memory holds imag, the tensor shows -imag. Read through DLPack as is, the
    sign would be wrong; rsz resolves such inputs and refuses such an out."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    real = torch.from_numpy(random_tensor((1, 2, 9, 11), 16))
    imag = torch.from_numpy(random_tensor((1, 2, 9, 11), 17))
    lazy = torch.complex(real, imag).conj().imag
    assert lazy.is_neg()
    plain = -imag
    got = rsz.resample(lazy, sizes=(18, 22))
    assert torch.equal(got, rsz.resample(plain, sizes=(18, 22)))
    close(got.numpy(), F.interpolate(plain, size=(18, 22), mode="bilinear", align_corners=False).numpy(), "neg view")
    assert torch.equal(rsz.upsample2d(lazy, 2), F.interpolate(plain, scale_factor=2, mode="nearest"))
    boxes = torch.complex(torch.zeros(1, 4), -torch.tensor([[1.0, 2.0, 7.0, 8.0]])).conj().imag  # shows 1, 2, 7, 8
    assert torch.equal(rsz.roi_align(real, boxes, output_size=2),
                       rsz.roi_align(real, torch.tensor([[1.0, 2.0, 7.0, 8.0]]), output_size=2))
    out = torch.complex(torch.zeros(1, 2, 18, 22), torch.zeros(1, 2, 18, 22)).conj().imag
    with pytest.raises(ValueError) as caught:
        rsz.resample(real, out=out)
    assert str(caught.value) == ("resample: out has its negative bit set (a lazy view such as t.conj().imag): the "
                                 "memory holds other values than the tensor shows, so it cannot be written in place; "
                                 "pass a plain tensor")
    # What DLPack cannot carry, said as torch's .numpy() would.
    with pytest.raises(ValueError) as caught:
        rsz.resample(real.clone().requires_grad_(), scales=2)
    assert str(caught.value) == "resample: x requires grad; rsz computes no gradients: pass x.detach()"
    with pytest.raises(ValueError) as caught:
        rsz.resample(torch.empty((1, 1, 2, 2), device="meta"), scales=2)
    assert str(caught.value) == ("resample: x is on device meta; a CPU tensor is needed here (.cpu()); resample, "
                                 "upsample2d and roi_align take CUDA tensors")


# ---- files: uint samples written back, NUL bytes in paths ----

def test_webp_is_lossy_by_default_and_lossless_on_request(tmp_path):
    samples = rsz.read_image(PHOTO, dtype="uint")
    rsz.write_image(tmp_path / "lossy.webp", samples)
    rsz.write_image(tmp_path / "exact.webp", samples, lossless=True)
    assert (tmp_path / "lossy.webp").read_bytes()[12:16] == b"VP8 "
    assert (tmp_path / "exact.webp").read_bytes()[12:16] == b"VP8L"
    assert np.array_equal(rsz.read_image(tmp_path / "exact.webp", dtype="uint"), samples)
    assert (tmp_path / "lossy.webp").stat().st_size < (tmp_path / "exact.webp").stat().st_size


def test_uint_samples_round_trip_through_write_image(tmp_path):
    samples = rsz.read_image(PHOTO, dtype="uint")
    rsz.write_image(tmp_path / "copy.png", samples)
    back = rsz.read_image(tmp_path / "copy.png", dtype="uint")
    assert back.dtype == np.uint8 and np.array_equal(back, samples)
    rsz.write_image(tmp_path / "chw.png", samples[0])  # (C, H, W) too
    assert np.array_equal(rsz.read_image(tmp_path / "chw.png", dtype="uint"), samples)
    # 16-bit samples keep their depth; 8-bit ones written at 16 bits are p * 257.
    deep = (np.arange(3 * 7 * 5, dtype=np.uint32).reshape(1, 3, 7, 5) * 619 % 65536).astype(np.uint16)
    rsz.write_image(tmp_path / "deep.png", deep)
    back16 = rsz.read_image(tmp_path / "deep.png", dtype="uint")
    assert back16.dtype == np.uint16 and np.array_equal(back16, deep)
    rsz.write_image(tmp_path / "wide.png", samples, bit_depth=16)
    assert np.array_equal(rsz.read_image(tmp_path / "wide.png", dtype="uint"), samples.astype(np.uint16) * 257)
    # Decoded samples are straight alpha: colour under alpha 0 is kept, as it was read.
    rgba = np.zeros((1, 4, 2, 3), np.uint8)
    rgba[0, :3] = 200
    rgba[0, 3, 0] = 255
    rsz.write_image(tmp_path / "rgba.png", rgba)
    assert np.array_equal(rsz.read_image(tmp_path / "rgba.png", dtype="uint"), rgba)
    # The float values the samples stand for give the same file.
    rsz.write_image(tmp_path / "float.png", samples.astype(np.float64) / 255)
    assert np.array_equal(rsz.read_image(tmp_path / "float.png", dtype="uint"), samples)


@pytest.mark.parametrize("call,op", [
    (lambda d: rsz.write_image(str(d / "out.png") + "\0.jpg", np.zeros((1, 3, 2, 2), np.float32)), "write_image"),
    (lambda d: rsz.read_image(PHOTO + "\0.jpg"), "read_image"),
    (lambda d: rsz.info(PHOTO + "\0.jpg"), "info"),
    (lambda d: rsz.info(str(d / "x.npy") + "\0.npy"), "info"),
    (lambda d: rsz.read_image(os.fsencode(PHOTO) + b"\0"), "read_image"),
])
def test_paths_with_a_nul_byte_are_refused(tmp_path, call, op):
    """The C library would end the name at the NUL: out.png\\0.jpg would silently write out.png as a PNG."""
    np.save(tmp_path / "x.npy", np.zeros(2, np.float32))
    with pytest.raises(ValueError) as caught:
        call(tmp_path)
    path = str(caught.value).split(": path ", 1)[1].rsplit(" has a NUL byte", 1)[0]
    assert str(caught.value) == "%s: path %s has a NUL byte; file names cannot hold one" % (op, path)
    assert "\\x00" in path
    assert sorted(os.listdir(tmp_path)) == ["x.npy"]  # nothing written
    # The extension refuses them too, when called directly.
    with pytest.raises(ValueError) as caught:
        rsz._rsz.write_image(str(tmp_path / "out.png") + "\0.jpg", np.zeros((1, 3, 2, 2), np.float32), 8,
                             "premultiplied", 0, -1, False)
    assert str(caught.value) == ("write_image: path has a NUL byte (at index %d); file names cannot hold one"
                                 % len(str(tmp_path / "out.png")))
    assert sorted(os.listdir(tmp_path)) == ["x.npy"]


# ---- shards ----

def test_shard_of_routes_inputs_as_the_command_line_does(tmp_path):
    """rsz.shard_of gives each input of a folder the shard `rsz thumbnail --shard I/N` takes it in (a nested file,
    a dotted name and a name that is not UTF-8 included), and rsz.shard_key its key; bad counts are refused."""
    photos = tmp_path / "photos"
    (photos / "cats").mkdir(parents=True)
    names = ["a.png", "b.png", "cats/c.png", "cats/d.e.png", os.fsdecode(b"caf\xe9.png")]
    names += ["n%02d.png" % i for i in range(12)]
    for name in names:
        shutil.copyfile(PHOTO, photos / name)
    assert rsz.shard_key(photos / "cats" / "d.e.png", root=photos) == "cats/d.e"
    assert rsz.shard_key(photos / "cats" / "c.png") == "c"
    assert rsz.shard_key(photos / "a.png", root=tmp_path / "elsewhere") == "a"
    shards = 3
    for index in range(shards):
        done = subprocess.run([BINARY, "thumbnail", "-r", "-i", str(photos), "-o", str(tmp_path / "out") + "/",
                               "--size", "8", "--shard", "%d/%d" % (index, shards), "--dry-run"],
                              capture_output=True)
        assert done.returncode == 0, done.stderr
        taken = sorted(os.fsdecode(line.split(b" -> ")[0]) for line in done.stdout.splitlines() if b" -> " in line)
        want = sorted(str(photos / name) for name in names if rsz.shard_of(photos / name, shards, root=photos) == index)
        assert taken == want, (index, taken, want)
    counts = [sum(rsz.shard_of(photos / n, shards, root=photos) == i for n in names) for i in range(shards)]
    assert sum(counts) == len(names) and min(counts) > 0
    for bad in [0, -1, 2.5, True, "3"]:
        with pytest.raises(ValueError, match="shard_of: shards="):
            rsz.shard_of(photos / "a.png", bad)


def _photo_tree(root):
    """A nested folder of the samples' photos under several names: nested, dotted and non-UTF-8 ones."""
    (root / "cats" / "old").mkdir(parents=True)
    photos = sorted(os.listdir(os.path.join(SOURCE, "samples", "photos")))
    names = ["a.png", "cats/b.jpg", "cats/old/c.d.png", os.fsdecode(b"caf\xe9.png")]
    names += ["n%02d%s" % (i, os.path.splitext(photos[i % len(photos)])[1]) for i in range(10)]
    for i, name in enumerate(names):
        source = photos[i % len(photos)]
        if os.path.splitext(source)[1] != os.path.splitext(name)[1]:
            source = next(p for p in photos if os.path.splitext(p)[1] == os.path.splitext(name)[1])
        shutil.copyfile(os.path.join(SOURCE, "samples", "photos", source), root / name)
    return names


def _tree_bytes(root):
    """{relative path: bytes} of every file below root."""
    out = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def test_plan_and_run_shard_make_what_one_command_line_run_makes(tmp_path):
    """rsz.plan + rsz.run_shard in this process, over every shard, write the bytes one `rsz thumbnail -r` run writes;
    a finished shard returns its marker at once, a shard stopped midway goes on where it stopped, other parameters
    are refused, and merge totals it."""
    photos = tmp_path / "photos"
    names = _photo_tree(photos)
    cli("thumbnail", "-r", "-i", str(photos), "--size", "24", "-o", str(tmp_path / "whole") + "/{relpath}{ext}", "-q")
    state = tmp_path / "state"
    plan = rsz.plan(photos, state, 3, recursive=True)
    assert plan["shards"] == 3 and plan["total"] == len(names) and sum(plan["counts"]) == len(names)
    out = str(tmp_path / "sharded") + "/{relpath}{ext}"
    markers = [rsz.run_shard(state, i, "thumbnail", size=24, output=out) for i in range(3)]
    assert [m["inputs"] for m in markers] == plan["counts"]
    assert [m["written"] for m in markers] == plan["counts"] and all(m["failed"] == 0 for m in markers)
    assert _tree_bytes(tmp_path / "sharded") == _tree_bytes(tmp_path / "whole")
    # Done already: the same marker back at once, saying so.
    again = rsz.run_shard(state, 1, "thumbnail", size=24, output=out)
    assert again["finished"] == markers[1]["finished"] and "is done already" in again["messages"][0]
    # Stopped midway (its marker and one output gone): the rerun writes that one and keeps the rest.
    os.remove(state / "done" / "00002.json")
    victim = next(p for p in _tree_bytes(tmp_path / "sharded")
                  if rsz.shard_of(photos / p, 3, root=photos) == 2)
    os.remove(tmp_path / "sharded" / victim)
    resumed = rsz.run_shard(state, 2, "thumbnail", "--size", "24", "-o", out)
    assert (resumed["written"], resumed["kept"]) == (1, plan["counts"][2] - 1)
    assert _tree_bytes(tmp_path / "sharded") == _tree_bytes(tmp_path / "whole")
    with pytest.raises(rsz.CommandError, match="size=32 here, size=24 there") as refused:
        rsz.run_shard(state, 0, "thumbnail", size=32, output=out)
    assert refused.value.status == 2 and isinstance(refused.value, ValueError)
    report = rsz.merge(state)
    assert (report["done"], report["rerun"], report["inputs"]) == (3, "", len(names))
    with pytest.raises(rsz.CommandError, match="--plan"):
        rsz.run_shard(tmp_path / "no-plan", 0, "thumbnail", size=24, output=out)
    for bad in [-1, 1.5, True, "0"]:
        with pytest.raises(ValueError, match="run_shard: shard="):
            rsz.run_shard(state, bad, "thumbnail", size=24, output=out)
    with pytest.raises(ValueError, match="run_shard: command="):
        rsz.run_shard(state, 0, "--size", output=out)


def test_run_shard_from_threads_and_a_shard_that_fails_an_input(tmp_path):
    """Shards run from a thread pool (calls are serialized, each complete); a corrupt input fails alone: counted in
    the marker, said in its messages, not raised."""
    import concurrent.futures
    photos = tmp_path / "photos"
    names = _photo_tree(photos)
    (photos / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not a png")
    state = tmp_path / "state"
    rsz.plan(photos, state, 4, recursive=True)
    out = str(tmp_path / "sharded") + "/{relpath}{ext}"
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        markers = list(pool.map(lambda i: rsz.run_shard(state, i, "thumbnail", size=20, output=out, jobs=1), range(4)))
    assert sum(m["inputs"] for m in markers) == len(names) + 1
    assert sum(m["written"] for m in markers) == len(names) and sum(m["failed"] for m in markers) == 1
    broken = next(m for m in markers if m["failed"])
    assert broken["status"] == 1 and any("broken.png" in line for line in broken["messages"])
    report = rsz.merge(state)
    assert report["failed"] == [broken["shard"]] and report["rerun"] == str(broken["shard"])


def test_map_paths_runs_a_partition_named_below_its_root(tmp_path):
    """rsz.map_paths (dask.bag's map_partitions) writes what `rsz thumbnail -i ROOT -r` writes for the same files, named
    below `root`, returns a record per output and per failed input, and takes an empty partition."""
    photos = tmp_path / "photos"
    names = _photo_tree(photos)
    cli("thumbnail", "-r", "-i", str(photos), "--size", "16", "-o", str(tmp_path / "whole") + "/{relpath}{ext}", "-q")
    paths = [photos / name for name in names]
    records = []
    for part in (paths[:5], paths[5:], [tmp_path / "missing.png"], []):
        records += rsz.map_paths(part, "thumbnail", root=photos, size=16, output=str(tmp_path / "m") + "/{relpath}{ext}")
    assert _tree_bytes(tmp_path / "m") == _tree_bytes(tmp_path / "whole")
    written = [r for r in records if "output" in r]
    assert sorted(os.path.relpath(r["output"], tmp_path / "m") for r in written) == sorted(names)
    failed = [r for r in records if "error" in r]
    assert len(failed) == 1 and "missing.png" in failed[0]["input"] and "no such file" in failed[0]["error"]
    # Without root, names are the files' own: two "c"s in different folders would collide, and are refused.
    (photos / "cats" / "a.png").write_bytes((photos / "a.png").read_bytes())
    with pytest.raises(rsz.CommandError, match="a.png"):
        rsz.map_paths([photos / "a.png", photos / "cats" / "a.png"], "thumbnail", size=16, output=str(tmp_path / "flat") + "/")


def test_merge_clean_removes_what_killed_runs_left(tmp_path):
    """merge(clean=True) removes the temporaries a minute old of the plan's own shards (tagged with its id) and of its
    state files, and nothing else: not a fresh one (a shard may be writing it), not a user's file that looks alike
    (.draft.tmp-backup, .budget.tmp-2023-07), not another plan's or another run's temporaries."""
    photos = tmp_path / "photos"
    _photo_tree(photos)
    state = tmp_path / "state"
    rsz.plan(photos, state, 2, recursive=True)
    plan_id = json.loads((state / "plan.json").read_text())["id"]
    assert len(plan_id) == 16
    out = tmp_path / "out"
    rsz.run_shard(state, 0, "thumbnail", size=12, output=str(out) + "/{relpath}{ext}")
    old = [out / "cats" / (".b.jpg.tmp-%s-1-123456789" % plan_id), out / (".n01.png.tmp-%s-7-0" % plan_id),
           state / ".params.json.tmp-aB3xY9", state / "done" / ".00001.json.tmp-Zz9zz9"]
    keep = [out / (".fresh.png.tmp-%s-1-2" % plan_id), out / ".b.jpg.tmp-1-123456789", out / ".draft.tmp-backup",
            out / ".budget.tmp-2023-07", out / "cats" / ".n.png.tmp-0123456789abcdef-1-2",
            out / (".a.png.tmp-%s-" % plan_id), out / ("a.png.tmp-%s-1-2" % plan_id), state / ".plan.json.tmp-abc",
            state / ".notes.txt.tmp-abc123", state / "shards" / ".x.tmp-abcdef"]
    for path in old + keep:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"partial")
    for path in old + keep[1:]:
        os.utime(path, (1e9, 1e9))
    report = rsz.merge(state, clean=True)
    assert report["cleaned"] == len(old) and report["rerun"] == "1"
    assert not any(p.exists() for p in old) and all(p.exists() for p in keep)


def test_a_shards_temporaries_carry_its_plans_id(tmp_path):
    """What merge --clean relies on: a shard's temporary output files are named .NAME.tmp-ID-PID-N (seen by a
    process that stops the shard while it writes: a large .npy output stays a temporary for a while)."""
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(PHOTO, photos / "a.png")
    state = tmp_path / "state"
    rsz.plan(photos, state, 1)
    plan_id = json.loads((state / "plan.json").read_text())["id"]
    out = tmp_path / "out"
    proc = subprocess.Popen([BINARY, "upsample", "--plan", str(state), "--shard", "0", "--factor", "8",
                             "-o", str(out) + "/{stem}.npy"], stderr=subprocess.PIPE)
    seen = []
    while proc.poll() is None and not seen:
        seen = [p.name for p in out.glob(".*")] if out.exists() else []
        time.sleep(0.0002)
    proc.kill()
    proc.wait()
    assert seen, "the shard finished before its temporary file was seen"
    assert seen[0].startswith(".a.npy.tmp-%s-" % plan_id), seen


# ---- the package itself ----

def test_the_namespace_holds_the_public_names_only():
    public = sorted(name for name in dir(rsz) if not name.startswith("_"))
    assert public == sorted(rsz.__all__)
    assert public == ["CommandError", "DTypeError", "InputError", "Plan", "Report", "RunError", "backends", "info",
                      "map_paths", "merge", "plan", "plan_job", "read_image", "release_gpu", "resample", "resize", "roi_align", "run", "run_settings", "run_shard",
                      "shard_key", "shard_of", "thumbnail", "torchvision_roi_align", "upsample2d", "write_image"]
    for imported in ["np", "numbers", "sys", "os", "numpy", "json"]:
        assert not hasattr(rsz, imported)
    scope = {}
    exec("from rsz import *", scope)
    assert sorted(name for name in scope if name != "__builtins__") == public


def test_import_without_the_extension_says_what_is_missing_and_how_to_build_it(tmp_path):
    """The Python half alone (copied or installed without _rsz): not Python's misleading "circular import"."""
    package = tmp_path / "rsz"
    package.mkdir()
    shutil.copy(os.path.join(SOURCE, "python", "rsz", "__init__.py"), package / "__init__.py")
    build = ("with `cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target _rsz` "
             "(bash scripts/test.sh installs pybind11-dev and python3-dev and builds everything), then import it from "
             "the build tree (PYTHONPATH=build/python) or install it (cmake --install build)")

    def failure():
        done = subprocess.run([sys.executable, "-c", "import rsz"], capture_output=True, text=True, cwd=tmp_path,
                              env=dict(os.environ, PYTHONPATH=str(tmp_path)))
        assert done.returncode == 1
        assert "circular import" not in done.stderr
        return done.stderr.strip().splitlines()[-1]

    assert failure() == ("ImportError: rsz: the compiled extension _rsz is not in %s (only the Python half is "
                         "there); build it %s" % (package, build))
    # An extension for another Python (another ABI tag) is named as such.
    (package / "_rsz.cpython-39-x86_64-linux-gnu.so").write_bytes(b"")
    assert failure() == ("ImportError: rsz: the compiled extension _rsz.cpython-39-x86_64-linux-gnu.so in %s was "
                         "built for another Python than this one (%s, which loads _rsz%s); build it %s"
                         % (package, sys.executable, importlib.machinery.EXTENSION_SUFFIXES[0], build))
    # One for this Python that does not load: the loader's reason is kept.
    broken = "_rsz" + importlib.machinery.EXTENSION_SUFFIXES[0]
    (package / broken).write_bytes(b"not an ELF file")
    last = failure()
    assert last.startswith("ImportError: rsz: the compiled extension %s in %s does not load (" % (broken, package))
    assert last.endswith("); rebuild it " + build)
