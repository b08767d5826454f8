"""The Python API's traps, closed: rsz.torchvision_roi_align (torchvision.ops.roi_align's signature, defaults and
values) beside rsz.roi_align (DirectML's), resize's size string (WIDTHxHEIGHT) against its tuple ((height, width)),
image samples with their channels last, and map_paths given a single path.

Run by ctest (python.pytest) with PYTHONPATH=build/python, RSZ_BINARY (the CLI) and RSZ_SOURCE_DIR set.
"""

import inspect
import os
import pathlib

import numpy as np
import pytest

import rsz
from test_rsz import close  # SEMANTICS.md §5's tolerance, as the other tests apply it

SOURCE = os.path.abspath(os.environ.get("RSZ_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
PHOTO = os.path.join(SOURCE, "samples", "photos", "chelsea.png")


# ---- torchvision_roi_align: torchvision.ops.roi_align's drop-in ----

def _boxes(seed):
    """Per image, (K_i, 4) float32 boxes [x1, y1, x2, y2] on a 48 x 60 image seen at spatial_scale 0.5: ordinary
    boxes, boxes narrower or lower than 1 pixel after the scale (torchvision widens them when aligned=False) and a
    box of zero size (torchvision samples nothing in it when aligned=True with adaptive sampling)."""
    rng = np.random.default_rng(seed)
    per_image = []
    for count in [7, 5]:
        corners = rng.uniform(-6, 64, size=(count, 2, 2))
        boxes = np.concatenate([corners.min(axis=1), corners.max(axis=1) + 2.5], axis=1)
        per_image.append(boxes)
    x1, y1 = rng.uniform(0, 40, size=(2, 4))
    per_image[0] = np.concatenate([per_image[0], [
        [x1[0], y1[0], x1[0] + 0.6, y1[0] + 9.0],     # 0.3 pixel wide after the scale
        [x1[1], y1[1], x1[1] + 11.0, y1[1] + 1.1],    # 0.55 pixel high
        [x1[2], y1[2], x1[2] + 0.2, y1[2] + 0.3],     # both
    ]])
    per_image[1] = np.concatenate([per_image[1], [[x1[3], y1[3], x1[3], y1[3]]]])  # zero size
    return [b.astype(np.float32) for b in per_image]


def _table(per_image):
    """The (K, 5) form: the batch index first."""
    return np.concatenate([np.concatenate([np.full((len(b), 1), i, np.float32), b], axis=1)
                           for i, b in enumerate(per_image)])


def test_torchvision_roi_align_has_torchvisions_signature_and_defaults():
    ops = pytest.importorskip("torchvision.ops")
    ours = inspect.signature(rsz.torchvision_roi_align).parameters
    theirs = inspect.signature(ops.roi_align).parameters
    assert [(p.name, p.default) for p in ours.values()] == [(p.name, p.default) for p in theirs.values()]
    assert [(p.name, p.default) for p in ours.values()] == [
        ("input", inspect.Parameter.empty), ("boxes", inspect.Parameter.empty),
        ("output_size", inspect.Parameter.empty), ("spatial_scale", 1.0), ("sampling_ratio", -1), ("aligned", False)]
    assert "torchvision_roi_align" in rsz.__all__


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [-1, 2])
def test_torchvision_roi_align_gives_torchvisions_values(aligned, sampling_ratio):
    """The same call on the same random inputs, positional as torchvision code writes it: the (K, 5) form and the
    list form, torch in and torch out, numpy in and numpy out, small boxes included."""
    torch = pytest.importorskip("torch")
    ops = pytest.importorskip("torchvision.ops")
    x = np.random.default_rng(21).uniform(0.0, 1.0, size=(2, 4, 24, 30)).astype(np.float32)
    per_image = _boxes(22)
    table = _table(per_image)
    t = torch.from_numpy(x)
    want = ops.roi_align(t, torch.from_numpy(table), (5, 4), 0.5, sampling_ratio, aligned)
    assert tuple(want.shape) == (16, 4, 5, 4)
    what = "aligned=%s, sampling_ratio=%d" % (aligned, sampling_ratio)

    got = rsz.torchvision_roi_align(t, torch.from_numpy(table), (5, 4), 0.5, sampling_ratio, aligned)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
    close(got.numpy(), want.numpy(), what + ", (K, 5) tensor")
    got = rsz.torchvision_roi_align(t, [torch.from_numpy(b) for b in per_image], output_size=(5, 4),
                                    spatial_scale=0.5, sampling_ratio=sampling_ratio, aligned=aligned)
    close(got.numpy(), want.numpy(), what + ", list of (L, 4) tensors")
    got = rsz.torchvision_roi_align(x, table, (5, 4), 0.5, sampling_ratio, aligned)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    close(got, want.numpy(), what + ", numpy")
    # An integer output_size is (n, n), as in torchvision.
    close(rsz.torchvision_roi_align(t, torch.from_numpy(table), 3, 0.5, sampling_ratio, aligned).numpy(),
          ops.roi_align(t, torch.from_numpy(table), 3, 0.5, sampling_ratio, aligned).numpy(), what + ", output 3")

    # rsz.roi_align with the same keywords differs on the small boxes where torchvision has rules of its own: the
    # widened boxes, the zero-size one too (aligned=False), and the zero-size box (aligned=True, adaptive
    # sampling); elsewhere it agrees.
    plain = rsz.roi_align(t, torch.from_numpy(table), output_size=(5, 4), spatial_scale=0.5,
                          sampling_ratio=sampling_ratio, aligned=aligned).numpy()
    small = [7, 8, 9, 15] if not aligned else [15] if sampling_ratio <= 0 else []
    ordinary = [r for r in range(16) if r not in small]
    close(plain[ordinary], want.numpy()[ordinary], what + ", rsz.roi_align on the ordinary boxes")
    if small:
        assert np.all(np.max(np.abs(plain[small] - want.numpy()[small]), axis=(1, 2, 3)) > 1e-2)
    if aligned and sampling_ratio <= 0:
        assert np.all(want.numpy()[15] == 0) and np.all(got[15] == 0) and np.all(plain[15] != 0)


def test_torchvision_style_calls_to_roi_align_are_not_the_drop_in():
    """torchvision code moved to rsz.roi_align as it is: its third positional is batch_indices there (refused, not
    misread), and with keywords the default aligned is DirectML's half-pixel form, not torchvision's legacy one."""
    torch = pytest.importorskip("torch")
    ops = pytest.importorskip("torchvision.ops")
    t = torch.from_numpy(np.random.default_rng(23).uniform(0.0, 1.0, size=(2, 3, 20, 26)).astype(np.float32))
    table = torch.from_numpy(_table(_boxes(24))[:12])  # the ordinary boxes
    want = ops.roi_align(t, table, (3, 3), 0.5)  # sampling_ratio=-1, aligned=False
    close(rsz.torchvision_roi_align(t, table, (3, 3), 0.5).numpy(), want.numpy(), "the drop-in, positional")
    with pytest.raises(ValueError) as caught:
        rsz.roi_align(t, table, (3, 3))
    assert str(caught.value) == "roi_align: output_size is required (an integer or (height, width))"
    with pytest.raises(ValueError) as caught:
        rsz.roi_align(t, table, (3, 3), 0.5)
    assert str(caught.value) == "output_size = 0.5; whole numbers are needed"
    keywords = rsz.roi_align(t, table, output_size=(3, 3), spatial_scale=0.5).numpy()
    assert np.max(np.abs(keywords - want.numpy())) > 1e-2  # aligned=True there: other values
    close(keywords, ops.roi_align(t, table, (3, 3), 0.5, aligned=True).numpy(), "rsz.roi_align is aligned=True")


def test_torchvision_roi_align_refuses_what_torchvision_refuses():
    """A (K, 4) table has no batch index: torchvision refuses it, and rsz.roi_align would take it as image 0's."""
    x = np.zeros((2, 1, 8, 8), np.float32)
    with pytest.raises(ValueError) as caught:
        rsz.torchvision_roi_align(x, np.zeros((3, 4), np.float32), 2)
    assert str(caught.value) == (
        "torchvision_roi_align: boxes has shape (3, 4); torchvision's forms are a (K, 5) tensor, [batch index, x1, "
        "y1, x2, y2], or a list of (L, 4) tensors, one per image (rsz.roi_align takes (K, 4) boxes with "
        "batch_indices)")
    with pytest.raises(ValueError) as caught:
        rsz.torchvision_roi_align(x, [np.zeros((2, 5), np.float32)], 2)
    assert str(caught.value) == ("torchvision_roi_align: boxes[0] has shape (2, 5); a list of boxes holds one (L, 4) "
                                 "tensor per image, [x1, y1, x2, y2] for image i")
    with pytest.raises(ValueError, match="spatial_scale = \\(0.5, 0.5\\); one number is needed"):
        rsz.torchvision_roi_align(x, np.zeros((1, 5), np.float32), 2, (0.5, 0.5))
    # An image without boxes, and no boxes at all.
    assert rsz.torchvision_roi_align(x, [np.zeros((0, 4), np.float32), np.ones((1, 4), np.float32)], 2).shape == \
        (1, 1, 2, 2)
    assert rsz.torchvision_roi_align(x, np.zeros((0, 5), np.float32), 2).shape == (0, 1, 2, 2)


# ---- resize's size: a string is WIDTHxHEIGHT, a tuple (height, width) ----

def test_resize_size_string_is_width_first_and_tuple_height_first():
    image = rsz.read_image(PHOTO)  # (1, 3, 300, 451)
    assert rsz.resize(image, size="200x300").shape == (1, 3, 300, 200)  # 200 wide, 300 high, as --size 200x300
    assert rsz.resize(image, size=(200, 300)).shape == (1, 3, 200, 300)  # 200 high, 300 wide
    assert np.array_equal(rsz.resize(image, size="200x300"), rsz.resize(image, size=(300, 200)))
    assert np.array_equal(rsz.resize(image, size="x100"), rsz.resize(image, size=(100, None)))
    assert rsz.thumbnail(image, "200x100").shape == (1, 3, 100, 150)
    assert rsz.thumbnail(image, (200, 100)).shape == (1, 3, 67, 100)
    assert np.array_equal(rsz.thumbnail(image, "200x100"), rsz.thumbnail(image, (100, 200)))
    for function in (rsz.resize, rsz.thumbnail):
        doc = " ".join(function.__doc__.split())
        assert 'size="200x300"' in doc and "size=(300, 200) are the same box" in doc


# ---- pixels with their channels last ----

@pytest.mark.parametrize("call,name", [
    (lambda im, folder: rsz.resample(im, scales=0.5), "resample: x"),
    (lambda im, folder: rsz.upsample2d(im, 2), "upsample2d: x"),
    (lambda im, folder: rsz.roi_align(im, [[0, 0, 8, 8]], output_size=2), "roi_align: x"),
    (lambda im, folder: rsz.resize(im, "16x16"), "resize: image"),
    (lambda im, folder: rsz.thumbnail(im, 16), "thumbnail: image"),
    (lambda im, folder: rsz.write_image(folder / "never.png", im), "write_image: image"),
])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_channels_last_image_samples_are_refused_with_how_to_transpose(tmp_path, call, name, dtype):
    """(N, H, W, C) image samples were read as H channels of W x C images: resample gave a (1, 32, 24, 1) result
    without a word, resize said to transpose (2, 0, 1) a 4-D array, write_image named no layout."""
    arg = name.split(": ")[1]
    with pytest.raises(ValueError) as caught:
        call(np.zeros((1, 32, 48, 3), dtype), tmp_path)
    assert str(caught.value) == (
        "%s has shape (1, 32, 48, 3), which looks like (N, H, W, C), channels last as image libraries give pixels; "
        "rsz takes (N, C, H, W), channels first: pass %s.transpose(0, 3, 1, 2) (a view, no copy; a torch tensor: "
        "%s.permute(0, 3, 1, 2))" % (name, arg, arg))
    if name.startswith(("resize", "thumbnail", "write_image")):  # images may be (C, H, W)
        with pytest.raises(ValueError) as caught:
            call(np.zeros((32, 48, 4), dtype), tmp_path)
        assert str(caught.value) == (
            "%s has shape (32, 48, 4), which looks like (H, W, C), channels last as image libraries give pixels; rsz "
            "takes (C, H, W), channels first: pass %s.transpose(2, 0, 1) (a view, no copy; a torch tensor: "
            "%s.permute(2, 0, 1))" % (name, arg, arg))
    assert os.listdir(tmp_path) == []


def test_channels_last_pixels_transposed_give_the_images_values():
    """Pixels as Pillow gives them, (H, W, C) uint8: refused as they are, and their transposed view (no copy) is the
    image read_image gives. Channels first stays accepted whatever the width, and float tensors with many channels
    of width 3 are tensors, not refused."""
    pixels = np.ascontiguousarray(rsz.read_image(PHOTO, dtype="uint")[0].transpose(1, 2, 0))
    assert pixels.shape == (300, 451, 3) and pixels.dtype == np.uint8
    with pytest.raises(ValueError, match=r"image.transpose\(2, 0, 1\)"):
        rsz.resize(pixels, "100x70")
    with pytest.raises(ValueError, match=r"x.transpose\(0, 3, 1, 2\)"):
        rsz.resample(pixels[None], scales=0.5)
    want = rsz.resize(rsz.read_image(PHOTO), "100x70")
    assert np.array_equal(rsz.resize(pixels.transpose(2, 0, 1), "100x70"), want[0])
    assert np.array_equal(rsz.resize(pixels[None].transpose(0, 3, 1, 2), "100x70"), want)
    assert np.array_equal(rsz.resample(pixels[None].transpose(0, 3, 1, 2), scales=0.5),
                          rsz.resample(rsz.read_image(PHOTO), scales=0.5))
    assert rsz.resize(np.zeros((1, 4, 32, 3), np.uint8), "6x8").shape == (1, 4, 8, 6)
    assert rsz.resample(np.zeros((2, 4, 32, 3), np.uint8), scales=0.5).shape == (2, 4, 16, 1)
    assert rsz.resample(np.zeros((1, 32, 48, 3), np.float32), scales=0.5).shape == (1, 32, 24, 1)
    assert rsz.upsample2d(np.zeros((1, 32, 48, 3), np.float16), 2).shape == (1, 32, 96, 6)


# ---- map_paths: one path is one input ----

@pytest.mark.parametrize("kind", [str, pathlib.Path, os.fsencode])
def test_map_paths_takes_a_single_path_as_one_input(tmp_path, kind):
    records = rsz.map_paths(kind(PHOTO), "thumbnail", size=16, output=str(tmp_path / "one") + "/{stem}{ext}")
    listed = rsz.map_paths([PHOTO], "thumbnail", size=16, output=str(tmp_path / "list") + "/{stem}{ext}")
    assert [r["input"] for r in records] == [PHOTO]
    assert [r["shape"] for r in records] == [r["shape"] for r in listed] == [[1, 3, 11, 16]]
    assert os.listdir(tmp_path / "one") == ["chelsea.png"]
    assert (tmp_path / "one" / "chelsea.png").read_bytes() == (tmp_path / "list" / "chelsea.png").read_bytes()


# ---- run_settings: one table behind flags, batch keys and keywords ----

def test_run_settings_are_the_keywords_of_run_shard_and_map_paths(tmp_path):
    settings = {s["key"]: s for s in rsz.run_settings()}
    assert {"quality", "strict", "shrink_on_load", "skip_existing", "no_exif", "jobs"} <= set(settings)
    for key, s in settings.items():
        assert s["flag"] == "--" + key.replace("_", "-")  # the keyword is the flag, '-' made '_'
        assert s["kind"] in ("bool", "int", "choice", "text")
    assert settings["no_exif"]["batch_key"] == "exif" and settings["jobs"]["batch_key"] is None
    assert settings["quality"]["changes_outputs"] and not settings["jobs"]["changes_outputs"]
    # A keyword sets what its flag sets: the same bytes as the command line.
    jpeg = os.path.join(SOURCE, "samples", "photos", "rocket.jpg")
    rsz.map_paths(jpeg, "thumbnail", size=24, quality=30, strip=True, output=str(tmp_path / "py") + "/{stem}{ext}")
    rsz.map_paths(jpeg, "thumbnail", size=24, output=str(tmp_path / "default") + "/{stem}{ext}")
    cli = os.environ.get("RSZ_BINARY")
    if cli:
        import subprocess
        subprocess.run([cli, "thumbnail", "-i", jpeg, "--size", "24", "--quality", "30", "--strip", "-q",
                        "-o", str(tmp_path / "cli.jpg")], check=True)
        assert (tmp_path / "py" / "rocket.jpg").read_bytes() == (tmp_path / "cli.jpg").read_bytes()
    assert (tmp_path / "py" / "rocket.jpg").read_bytes() != (tmp_path / "default" / "rocket.jpg").read_bytes()
    # Values are checked against the row before anything runs.
    for bad, message in [({"strict": 1}, "strict=1 is not allowed; True or False is"),
                         ({"quality": 0}, "quality=0 is not allowed; a whole number from 1 to 100 is"),
                         ({"alpha": "linear"}, "alpha='linear' is not allowed; one of premultiplied, straight is")]:
        with pytest.raises(ValueError, match=message):
            rsz.map_paths(jpeg, "thumbnail", size=24, output=str(tmp_path / "bad") + "/{stem}{ext}", **bad)
    assert not (tmp_path / "bad").exists()


# ---- runs in threads: each call is a run of its own ----

def test_calls_from_several_threads_run_at_once_and_share_nothing(tmp_path):
    """Two plans run shard by shard from 4 threads at once, and map_paths calls beside them: every output and marker
    is what the same calls give one after another (the same bytes), each call's records and messages are its own."""
    import concurrent.futures
    import shutil

    photos = os.path.join(SOURCE, "samples", "photos")
    names = sorted(n for n in os.listdir(photos) if n.endswith((".png", ".jpg")))

    def job(root, label):
        state, out = root / (label + "_state"), root / (label + "_out")
        rsz.plan(photos, str(state), 3)
        return state, out

    def run(root, concurrent):
        calls = []
        for label, size in [("a", 24), ("b", 40)]:
            state, out = job(root, label)
            for shard in range(3):
                calls.append(("shard", str(state), shard, size, str(out) + "/{stem}{ext}"))
        for i, name in enumerate(names[:4]):
            calls.append(("map", os.path.join(photos, name), None, 16 + i, str(root / "mapped") + "/{stem}{ext}"))

        def one(call):
            kind, where, shard, size, output = call
            if kind == "shard":
                marker = rsz.run_shard(where, shard, "thumbnail", size=size, output=output, jobs=2)
                return (kind, shard, marker["inputs"], marker["failed"])
            records = rsz.map_paths(where, "thumbnail", size=size, output=output, jobs=2)
            return (kind, [r["input"] for r in records], [r["shape"] for r in records])

        if concurrent:
            with concurrent_futures.ThreadPoolExecutor(max_workers=4) as pool:
                results = list(pool.map(one, calls))
        else:
            results = [one(c) for c in calls]
        files = {}
        for path in sorted(root.rglob("*")):
            if path.is_file() and "_state" not in str(path):
                files[str(path.relative_to(root))] = path.read_bytes()
        return results, files

    concurrent_futures = concurrent.futures
    (tmp_path / "seq").mkdir()
    (tmp_path / "par").mkdir()
    sequential = run(tmp_path / "seq", False)
    parallel = run(tmp_path / "par", True)
    assert parallel[0] == sequential[0]
    assert sorted(parallel[1]) == sorted(sequential[1])
    for name, data in sequential[1].items():
        assert parallel[1][name] == data, name
    assert any("a_out" in name for name in sequential[1]) and any("mapped" in name for name in sequential[1])
    shutil.rmtree(tmp_path)


def test_help_of_an_in_process_run_is_its_output_and_tar_runs_in_threads_match(tmp_path):
    import concurrent.futures
    from rsz import _rsz

    result = _rsz.cli([b"thumbnail", b"--help"], b"", True, False)
    assert result["status"] == 0 and b"Usage: rsz thumbnail" in result["stdout"] and result["messages"] == []
    assert result["records"] == [] and result["code"] is None
    # .tar outputs of calls in several threads (sharing the default budget, their members wait on disk): the same
    # parts as one call after another.
    photos = os.path.join(SOURCE, "samples", "photos")
    paths = sorted(os.path.join(photos, n) for n in os.listdir(photos) if n.endswith((".png", ".jpg")))

    def one(label):
        return rsz.map_paths(paths, "thumbnail", size=20, output=str(tmp_path / label) + "/{part}.tar", jobs=2)

    sequential = [one("s%d" % i) for i in range(3)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        parallel = list(pool.map(one, ["p%d" % i for i in range(3)]))
    assert [len(r) for r in parallel] == [len(r) for r in sequential] == [len(paths)] * 3
    for i in range(3):
        assert (tmp_path / ("p%d" % i) / "000000.tar").read_bytes() == (tmp_path / ("s%d" % i) / "000000.tar").read_bytes()


# ---- rsz.run: a file job with a report; errors with their code, input and message ----

def test_run_returns_a_report_whose_records_are_the_json_lines(tmp_path):
    """rsz.run writes what the command line writes, and its records are `rsz ... --json`'s lines (every key, the
    failure's code included); a failed input raises InputError with its input, code and message, the other inputs'
    outputs written and in its report; check=False returns the report instead."""
    import json
    import subprocess
    photos = tmp_path / "photos"
    photos.mkdir()
    for name in ["chelsea.png", "rocket.jpg"]:
        (photos / name).write_bytes(pathlib.Path(SOURCE, "samples", "photos", name).read_bytes())
    (photos / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a JPEG body")
    with pytest.raises(rsz.InputError) as failed:
        rsz.run("thumbnail", photos, tmp_path / "py", size=32)
    e = failed.value
    assert e.input == str(photos / "broken.jpg") and e.code == "format" and e.message.startswith(e.input + ": ")
    assert str(e) == e.message and e.failures == e.report.failures and len(e.failures) == 1
    report = e.report
    assert (report.status, report.jobs, report.written, report.failed, report.skipped) == (1, 3, 2, 1, 0)
    assert sorted(os.path.basename(p) for p in report.outputs) == ["chelsea.png", "rocket.jpg"]
    cli = subprocess.run([os.environ["RSZ_BINARY"], "thumbnail", "-i", str(photos), "-o", str(tmp_path / "cli"),
                          "--size", "32", "--json", "-q"], capture_output=True)
    assert cli.returncode == 1
    lines = [json.loads(line) for line in cli.stdout.decode().splitlines()]
    strip = lambda records: sorted((json.dumps({k: v for k, v in r.items() if k not in ("output", "seconds")},
                                               sort_keys=True) for r in records))
    assert strip(lines) == strip(report.records)
    assert {k for r in lines for k in r} == {k for r in report.records for k in r}
    assert [r for r in lines if "error" in r][0]["code"] == "format"
    for name in ["chelsea.png", "rocket.jpg"]:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    # check=False: the report, status 1; skip_existing: the written ones are kept, the broken one fails again.
    again = rsz.run("thumbnail", [photos], tmp_path / "py", check=False, size=32, skip_existing=True)
    assert (again.status, again.written, again.skipped, again.kept, again.failed) == (1, 0, 2, 2, 1)
    assert sorted(r["skipped"] for r in again.records if "skipped" in r) == [True, True] and again.outputs == []
    # A dry run plans: records with the plan, nothing written.
    planned = rsz.run("thumbnail", photos / "chelsea.png", str(tmp_path / "dry") + "/", size=32, dry_run=True)
    assert planned.outputs == [] and not (tmp_path / "dry").exists()
    assert planned.records[0]["dry_run"] and planned.records[0]["shape"] == [1, 3, 21, 32]
    assert planned.records[0]["resize"]["input_sizes"] == [1, 3, 300, 451]


def test_plan_job_plans_once_and_runs_the_plan_once(tmp_path):
    """rsz.plan_job lists and plans a job without writing anything (the plan's records are its dry run's); its run()
    runs those inputs as planned, once: a file added to the folder since is not an input, a removed one fails alone,
    and the outputs are rsz.run's bytes. Refusals raise CommandError at planning, as rsz.run's do."""
    photos = tmp_path / "photos"
    photos.mkdir()
    for name in ["chelsea.png", "rocket.jpg"]:
        (photos / name).write_bytes(pathlib.Path(SOURCE, "samples", "photos", name).read_bytes())
    (photos / "gone.png").write_bytes((photos / "chelsea.png").read_bytes())
    plan = rsz.plan_job("thumbnail", photos, str(tmp_path / "out") + "/", size=32, quality=70)
    assert plan.runnable and (plan.report.status, plan.report.jobs, plan.report.failed) == (0, 3, 0)
    assert sorted(os.path.basename(r["output"]) for r in plan.report.records) == ["chelsea.png", "gone.png",
                                                                                  "rocket.jpg"]
    assert all(r["dry_run"] and r["resize"]["antialiased"] for r in plan.report.records)
    assert plan.report.outputs == [] and not (tmp_path / "out").exists()
    (photos / "gone.png").unlink()
    (photos / "late.jpg").write_bytes((photos / "rocket.jpg").read_bytes())
    with pytest.raises(rsz.InputError) as failed:
        plan.run()
    assert failed.value.input == str(photos / "gone.png") and failed.value.code == "io"
    report = failed.value.report
    assert (report.jobs, report.written, report.failed) == (3, 2, 1) and not (tmp_path / "out" / "late.jpg").exists()
    assert not plan.runnable
    with pytest.raises(rsz.CommandError, match="ran already"):
        plan.run()
    rsz.run("thumbnail", [photos / "chelsea.png", photos / "rocket.jpg"], str(tmp_path / "run") + "/", size=32,
            quality=70)
    for name in ["chelsea.png", "rocket.jpg"]:
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "run" / name).read_bytes()
    with pytest.raises(rsz.CommandError, match="--size is required"):
        rsz.plan_job("thumbnail", photos, tmp_path / "no/", fit="cover")
    dry = rsz.plan_job("thumbnail", photos / "chelsea.png", str(tmp_path / "dry") + "/", size=8, dry_run=True)
    assert not dry.runnable and dry.run().outputs == [] and not (tmp_path / "dry").exists()


def test_run_refusals_are_command_errors_with_a_code_and_nothing_written(tmp_path):
    with pytest.raises(rsz.CommandError) as refused:
        rsz.run("thumbnail", PHOTO, tmp_path / "o", size="abc")
    assert refused.value.code == "invalid_argument" and refused.value.status == 2
    assert str(refused.value).startswith("thumbnail: --size abc: not a size")
    with pytest.raises(rsz.CommandError) as refused:  # a ROI file that is not JSON: found before anything ran
        (tmp_path / "boxes.json").write_text("{not json")
        rsz.run("roi-align", PHOTO, tmp_path / "crops", rois=tmp_path / "boxes.json", output_size="8x8")
    assert refused.value.code == "invalid_argument" and "boxes.json: invalid JSON" in str(refused.value)
    assert not (tmp_path / "o").exists() and not (tmp_path / "crops").exists()
    for bad, match in [({"command": "info"}, "command='info' is not allowed"),
                       ({"command": "run", "inputs": ["a.json", "b.json"]}, "one batch file")]:
        with pytest.raises(ValueError, match=match):
            rsz.run(bad["command"], bad.get("inputs", PHOTO), tmp_path / "o")
    # A missing input is the input's failure, named with the path the caller gave (a folder's trailing '/' kept).
    with pytest.raises(rsz.InputError) as missing:
        rsz.run("thumbnail", str(tmp_path / "nowhere") + "/", str(tmp_path / "o") + "/", size=8)
    assert missing.value.code == "io" and missing.value.input == str(tmp_path / "nowhere") + "/"
    assert "no such file or folder" in missing.value.message


def test_decode_gpu_is_the_command_lines_setting(tmp_path):
    """decode="gpu" is --decode gpu: a build without nvJPEG (or a machine without a usable GPU) refuses it in rsz's
    words with its code before anything is written; a build with it writes the thumbnail. decode="cpu" is the
    default's job, and a value the setting does not take is a ValueError naming the allowed ones."""
    jpeg = os.path.join(SOURCE, "samples", "photos", "rocket.jpg")
    try:
        report = rsz.run("thumbnail", jpeg, str(tmp_path / "gpu") + "/", size=16, decode="gpu")
    except rsz.CommandError as refused:
        assert refused.code == "invalid_argument" and refused.status == 2
        assert "GPU" in str(refused) and "cpu is allowed" in str(refused)
        assert not (tmp_path / "gpu").exists()
    else:
        assert report.outputs == [str(tmp_path / "gpu" / "rocket.jpg")]
    cpu = rsz.run("thumbnail", jpeg, str(tmp_path / "cpu") + "/", size=16, decode="cpu")
    default = rsz.run("thumbnail", jpeg, str(tmp_path / "default") + "/", size=16)
    assert (tmp_path / "cpu" / "rocket.jpg").read_bytes() == (tmp_path / "default" / "rocket.jpg").read_bytes()
    assert cpu.outputs and default.outputs
    with pytest.raises(ValueError, match="decode='tpu' is not allowed; one of cpu, gpu is"):
        rsz.run("thumbnail", jpeg, str(tmp_path / "tpu") + "/", size=16, decode="tpu")


def test_device_takes_a_gpu_a_list_or_all(tmp_path):
    """device= is --device: a GPU number, a list of distinct ones or "all"; a repeated or malformed one is refused in
    rsz's words before anything is written, and a job without a GPU does not look at it."""
    jpeg = os.path.join(SOURCE, "samples", "photos", "rocket.jpg")
    for bad, said in (([0, 0], "GPU 0 is named twice"), ("gpu1", "or all is allowed"), ([1, "x"], "or all is allowed")):
        with pytest.raises(rsz.CommandError) as refused:
            rsz.run("thumbnail", jpeg, str(tmp_path / "bad") + "/", size=16, device=bad)
        assert refused.value.status == 2 and said in str(refused.value), str(refused.value)
        assert not (tmp_path / "bad").exists()
    for run, device in enumerate((3, [0, 1], (1, 0), "all")):
        report = rsz.run("thumbnail", jpeg, str(tmp_path / ("cpu%d" % run)) + "/", size=16, device=device)
        assert report.status == 0 and report.written == 1


def test_encode_gpu_is_the_command_lines_setting(tmp_path):
    """encode="gpu" is --encode gpu: refused in rsz's words before anything is written without decode="gpu" (or
    where the build or machine cannot run it); with both, a build that can writes the thumbnail as a JPEG file."""
    jpeg = os.path.join(SOURCE, "samples", "photos", "rocket.jpg")
    with pytest.raises(rsz.CommandError) as alone:
        rsz.run("thumbnail", jpeg, str(tmp_path / "alone") + "/", size=16, encode="gpu")
    assert alone.value.status == 2
    assert "--decode gpu is needed" in str(alone.value) or "no GPU JPEG encoder" in str(alone.value) or \
        "the GPU cannot be used" in str(alone.value)
    assert not (tmp_path / "alone").exists()
    try:
        report = rsz.run("thumbnail", jpeg, str(tmp_path / "gpu") + "/", size=16, decode="gpu", encode="gpu")
    except rsz.CommandError as refused:
        assert refused.status == 2 and "cpu is allowed" in str(refused)
        assert not (tmp_path / "gpu").exists()
    else:
        assert report.outputs == [str(tmp_path / "gpu" / "rocket.jpg")]
        assert (tmp_path / "gpu" / "rocket.jpg").read_bytes()[:2] == b"\xff\xd8"


def test_run_of_a_batch_file_and_map_paths_records_carry_codes(tmp_path):
    import json
    batch = tmp_path / "b.json"
    batch.write_text(json.dumps({"inputs": [PHOTO], "output_dir": "out",
                                 "steps": [{"op": "thumbnail", "config": {"size": "16"}}]}))
    report = rsz.run("run", batch)
    assert report.status == 0 and report.written == 1 and os.path.exists(report.outputs[0])
    assert report.records[0]["op"] == "thumbnail" and report.records[0]["shape"][2:] == [11, 16]
    records = rsz.map_paths([tmp_path / "missing.png"], "thumbnail", size=8, output=str(tmp_path / "m") + "/")
    assert records == [{"input": str(tmp_path / "missing.png"), "op": "thumbnail", "code": "io",
                        "error": str(tmp_path / "missing.png") + ": no such file or folder"}]


def test_run_keeps_records_in_input_order_refuses_streams_and_raises_run_error(tmp_path):
    """Records (and .outputs) follow the inputs whatever order the jobs finish in; a .tar part is one output;
    "-" is the command line's; a run that fails without a failed input (its manifest cannot be written) raises
    RunError with its report; files in the input folders that no codec reads are counted."""
    photos = tmp_path / "photos"
    photos.mkdir()
    names = ["camera.png", "chelsea.png", "coffee.png", "rocket.jpg"]
    for name in names:
        (photos / name).write_bytes(pathlib.Path(SOURCE, "samples", "photos", name).read_bytes())
    (photos / "notes.txt").write_text("not an image")
    for attempt in range(3):
        report = rsz.run("thumbnail", photos, str(tmp_path / ("o%d" % attempt)) + "/", size=16, jobs=4)
        assert [os.path.basename(p) for p in report.outputs] == names
        assert (report.not_read, report.not_read_files) == (1, [str(photos / "notes.txt")])
    tar = rsz.run("thumbnail", photos, str(tmp_path / "t") + "/{part}.tar", size=16)
    assert tar.outputs == [str(tmp_path / "t" / "000000.tar")] and len(tar.records) == 4
    for bad in [dict(inputs="-", output=str(tmp_path / "x.png")), dict(inputs=PHOTO, output="-")]:
        with pytest.raises(ValueError, match="command line's"):
            rsz.run("thumbnail", bad["inputs"], bad["output"], size=8)
    with pytest.raises(ValueError, match="command line's"):
        rsz.map_paths([PHOTO], "thumbnail", size=8, output="-")
    with pytest.raises(ValueError, match="names its own"):
        rsz.run("run", tmp_path / "b.json", root=tmp_path)
    (tmp_path / "afile").write_text("a file where the manifest's folder would be")
    boxes = tmp_path / "boxes.json"
    boxes.write_text('{"rois": [[0, 0, 10, 10]]}')
    with pytest.raises(rsz.CommandError, match="afile is a file, not a folder"):  # refused before any crop
        rsz.run("roi-align", PHOTO, str(tmp_path / "crops") + "/", rois=boxes, output_size="4x4",
                manifest=tmp_path / "afile" / "m.jsonl")
    assert not (tmp_path / "crops").exists()
    # A manifest the file system refuses once the crops are written (a name over 255 bytes): the run's own record.
    long_name = "m" * 300 + ".jsonl"
    with pytest.raises(rsz.RunError) as failed:
        rsz.run("roi-align", PHOTO, str(tmp_path / "crops") + "/", rois=boxes, output_size="4x4",
                manifest=tmp_path / long_name)
    assert not isinstance(failed.value, rsz.InputError) and failed.value.status == 1
    assert failed.value.report.written == 1 and long_name in str(failed.value)
    assert not failed.value.report.messages[-1].startswith("rsz: ")
    unwritten = failed.value.report.unwritten
    assert [(r["output"], r["code"]) for r in unwritten] == [(str(tmp_path / long_name), "io")]
    assert failed.value.report.failures == [] and long_name in unwritten[0]["not_written"]
    # A .tar part with a failed input is not written (whole or not at all): the input's failure, and the part's own
    # record with the input's code.
    (photos / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a JPEG body")
    parts = rsz.run("thumbnail", photos, str(tmp_path / "t2") + "/{part}.tar", size=16, check=False)
    assert parts.status == 1 and parts.outputs == [] and [r["input"] for r in parts.failures] == [str(photos / "broken.jpg")]
    assert [(r["output"], r["code"]) for r in parts.unwritten] == [(str(tmp_path / "t2" / "000000.tar"), "format")]
    assert "1 of its 5 inputs failed" in parts.unwritten[0]["not_written"]


def test_keywords_reach_the_library_without_command_line_words(tmp_path, monkeypatch):
    """run, map_paths and run_shard given keywords build the library's request (the command's options and the
    run-level settings by key): no command-line words (the in-process command line is not called), the same bytes as
    the rsz program's flags, and refusals in the flags' words (an unknown keyword names the allowed ones, options that
    exclude each other, a required option missing, a bool option given another value)."""
    import subprocess
    from rsz import _rsz

    def no_words(*args, **kwargs):
        raise AssertionError("a keyword call went through command-line words")

    monkeypatch.setattr(_rsz, "cli", no_words)
    boxes = tmp_path / "boxes.json"
    boxes.write_text('{"rois": [[3, 4, 40, 30], [10, 10, 90, 70]]}')
    jobs = [
        ("thumbnail", dict(size="24x24", fit="cover", gravity="north", quality=80, strip=True), "t.jpg",
         ["--size", "24x24", "--fit", "cover", "--gravity", "north", "--quality", "80", "--strip"]),
        ("resample", dict(scale=(0.5, 0.25), mode="nearest", preset="asymmetric"), "r.png",
         ["--scale", "0.5,0.25", "--mode", "nearest", "--preset", "asymmetric"]),
        ("resample", dict(width=40, antialias=True, linear=True), "w.png", ["--width", "40", "--antialias", "--linear"]),
        ("upsample", dict(factor="2,3", mode="linear", depth=16), "u.png",
         ["--factor", "2,3", "--mode", "linear", "--depth", "16"]),
        ("roi-align", dict(rois=boxes, output_size="12x8", samples="2:3", reduction="max"), "c{index}.png",
         ["--rois", str(boxes), "--output-size", "12x8", "--samples", "2:3", "--reduction", "max"]),
    ]
    for command, flags, name, words in jobs:
        report = rsz.run(command, PHOTO, tmp_path / "py" / name, **flags)
        cli = subprocess.run([os.environ["RSZ_BINARY"], command, "-i", PHOTO, "-o", str(tmp_path / "cli" / name)]
                             + words + ["-q"], capture_output=True)
        assert cli.returncode == 0, cli.stderr
        assert report.status == 0 and report.outputs
        for out in report.outputs:
            mine = pathlib.Path(out)
            assert mine.read_bytes() == (tmp_path / "cli" / mine.name).read_bytes(), (command, mine.name)
    records = rsz.map_paths([PHOTO], "thumbnail", size=16, output=str(tmp_path / "m") + "/", no_exif=True)
    assert [r["shape"] for r in records] == [[1, 3, 11, 16]]
    for flags, match in [(dict(size=8, sizee=3), '"sizee" is not an option of thumbnail.*its options are config, '
                                                 'size, fit'),
                         (dict(scale=0.5, size="8x8"), "--scale excludes --size"),
                         (dict(fit="cover"), "--size is required"),
                         (dict(size=8, fit="sideways"), "--fit sideways: one of .*cover.* is allowed")]:
        with pytest.raises(rsz.CommandError, match=match) as refused:
            rsz.run("resample" if "scale" in flags else "thumbnail", PHOTO, tmp_path / "no" / "x.png", **flags)
        assert refused.value.code == "invalid_argument"
    with pytest.raises(ValueError, match="enlarge=1 is not allowed; True or False is"):
        rsz.run("thumbnail", PHOTO, tmp_path / "no" / "x.png", size=8, enlarge=1)
    with pytest.raises(rsz.CommandError, match='"jobs" is not taken by run|"format" is not taken by run'):
        rsz.run("run", tmp_path / "b.json", format="png")
    assert not (tmp_path / "no").exists()
    # A plan's shard from keywords pins what the command line pins: the program's shard then runs with the same
    # parameters, and other ones are refused in the flags' words.
    rsz.plan(tmp_path / "py", tmp_path / "state", 2)
    for shard in range(2):
        done = rsz.run_shard(tmp_path / "state", shard, "thumbnail", size=8, fit="cover",
                             output=str(tmp_path / "sh") + "/{stem}.png")
        assert done["status"] == 0
    again = subprocess.run([os.environ["RSZ_BINARY"], "thumbnail", "--plan", str(tmp_path / "state"), "--shard", "1",
                            "--size", "8", "--fit", "cover", "-o", str(tmp_path / "sh") + "/{stem}.png"],
                           capture_output=True, text=True)
    assert again.returncode == 0 and "is done already" in again.stderr
    merged = rsz.merge(tmp_path / "state")  # through the library too: no command-line words
    assert merged["rerun"] == "" and merged["done"] == 2
    with pytest.raises(rsz.CommandError) as refused:
        rsz.merge(tmp_path / "no-plan")
    assert refused.value.code == "invalid_argument" and "no-plan" in str(refused.value)
    with pytest.raises(rsz.CommandError, match="size=9 here, size=8 there"):
        rsz.run_shard(tmp_path / "state", 0, "thumbnail", size=9, fit="cover", output=str(tmp_path / "sh") + "/{stem}.png")


def test_gif_pixels_are_pillows(tmp_path):
    """GIF inputs give Pillow's pixels for the first frame: a photo quantized to 64 colours (interlaced too), and a
    frame with a transparent colour (alpha 0 where Pillow's RGBA has it, the colour elsewhere)."""
    Image = pytest.importorskip("PIL.Image", reason="python3-pil is not installed")
    photo = Image.open(PHOTO).convert("RGB")
    quantized = photo.quantize(64)
    cases = {"plain.gif": {}, "interlaced.gif": {"interlace": True}}
    for name, options in cases.items():
        quantized.save(tmp_path / name, optimize=False, **options)
        mine = rsz.read_image(tmp_path / name, dtype="uint")[0].transpose(1, 2, 0)
        theirs = np.asarray(Image.open(tmp_path / name).convert("RGB"))
        assert mine.shape == theirs.shape and np.array_equal(mine, theirs), name
    small = photo.resize((40, 30)).quantize(16)
    small.save(tmp_path / "clear.gif", transparency=3, optimize=False)
    mine = rsz.read_image(tmp_path / "clear.gif", dtype="uint")[0].transpose(1, 2, 0)
    theirs = np.asarray(Image.open(tmp_path / "clear.gif").convert("RGBA"))
    assert mine.shape == (30, 40, 4) and (theirs[..., 3] == 0).any()
    assert np.array_equal(mine[..., 3], theirs[..., 3])
    opaque = theirs[..., 3] == 255
    assert np.array_equal(mine[opaque], theirs[opaque])
    assert rsz.info(tmp_path / "clear.gif")["format"] == "gif"


def test_grayscale_is_pillows_convert_l(tmp_path):
    """--grayscale writes Pillow's convert('L') of the colour image, byte for byte, over 65,536 RGB samples (the
    exact ties of the weighted sum among them), from an 8-bit PNG and from the 8-bit JPEG of a photo."""
    Image = pytest.importorskip("PIL.Image", reason="python3-pil is not installed")
    x, y = np.meshgrid(np.arange(256), np.arange(256))
    rgb = np.stack([x, y, (x * 7 + y * 13) % 256], axis=-1).astype(np.uint8)
    Image.fromarray(rgb).save(tmp_path / "grid.png")
    photo = pathlib.Path(SOURCE, "samples", "photos", "rocket.jpg")
    for source in [tmp_path / "grid.png", photo]:
        out = tmp_path / (source.stem + "_gray.png")
        rsz.run("resample", source, out, scale=1, grayscale=True)
        mine = np.asarray(Image.open(out))
        theirs = np.asarray(Image.open(source).convert("RGB").convert("L"))
        assert mine.shape == theirs.shape and np.array_equal(mine, theirs), source


def _srgb_to_linear(v):
    v = v.astype(np.float64)
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4).astype(np.float32)


def _linear_to_srgb(v):
    v = np.clip(np.nan_to_num(v.astype(np.float64)), 0.0, 1.0)
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * v ** (1 / 2.4) - 0.055).astype(np.float32)


def test_linear_resizes_in_linear_light(tmp_path):
    """--linear (linear=True): a 1-pixel black-and-white grid halves to 188 (the sRGB encoding of 0.5), not 128; an
    identity resize gives the input's bytes back; a thumbnail is the exact operator on the decoded values, encoded
    again: the array API's rsz.thumbnail of sRGB-decoded pixels, rounded as outputs are."""
    grid = (np.indices((64, 64)).sum(axis=0) % 2).astype(np.float32)
    rsz.write_image(tmp_path / "grid.png", np.stack([grid] * 3)[np.newaxis])
    rsz.run("resample", tmp_path / "grid.png", tmp_path / "lin.png", scale=0.5, linear=True)
    rsz.run("resample", tmp_path / "grid.png", tmp_path / "gamma.png", scale=0.5)
    assert np.unique(rsz.read_image(tmp_path / "lin.png", dtype="uint")).tolist() == [188]
    assert np.unique(rsz.read_image(tmp_path / "gamma.png", dtype="uint")).tolist() == [128]
    # .npy outputs hold the values encoded back; --shrink-on-load (libjpeg averaging encoded values) is not used.
    rsz.run("resample", tmp_path / "grid.png", tmp_path / "lin.npy", scale=0.5, linear=True)
    assert np.allclose(np.load(tmp_path / "lin.npy"), 188 / 255, atol=0.5 / 255)
    rsz.run("resample", tmp_path / "grid.png", tmp_path / "grid.jpg", scale=8, mode="nearest", quality=100)
    rsz.run("thumbnail", tmp_path / "grid.jpg", tmp_path / "small.png", size=64, linear=True, shrink_on_load=True)
    assert abs(float(rsz.read_image(tmp_path / "small.png", dtype="uint").mean()) - 188) < 3
    rsz.run("resample", PHOTO, tmp_path / "same.png", scale=1, linear=True)
    assert np.array_equal(rsz.read_image(tmp_path / "same.png", dtype="uint"), rsz.read_image(PHOTO, dtype="uint"))
    rsz.run("thumbnail", PHOTO, tmp_path / "thumb.png", size=64, linear=True)
    expected = _linear_to_srgb(rsz.thumbnail(_srgb_to_linear(rsz.read_image(PHOTO)), 64))
    expected = np.round(expected.astype(np.float64) * 255).astype(np.uint8)
    mine = rsz.read_image(tmp_path / "thumb.png", dtype="uint")
    assert mine.shape == expected.shape and np.array_equal(mine, expected)
