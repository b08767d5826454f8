#!/usr/bin/python3
"""Converts the ONNX backend node tests of SEMANTICS.md §6 into small .npy goldens under tests/data/onnx/.

Source: Debian's libonnx-testdata (ONNX 1.12 backend node tests: /usr/share/libonnx-testdata/data/node/<case>/
test_data_set_0/{input_N.pb, output_0.pb}), read with python3-onnx's numpy_helper. Run with /usr/bin/python3; it
rewrites tests/data/onnx/ and its SOURCES.md (package versions, source files with their SHA-256, the ONNX node
attributes). The generated files are committed: the tests need neither the package nor Python.

Per case folder: input.npy (float32 X), output.npy (float32 Y, exactly as ONNX ships it), scales.npy or sizes.npy
(float32) for Resize/Upsample, rois.npy (float32) and batch_indices.npy (uint32) for RoiAlign, params.json (the
ONNX node: op type, opset, attributes, which .pb became which .npy).

RoiAlign outputs: ONNX's expected Y for the roialign cases is a literal typed with 4 decimals
(onnx/backend/test/case/node/roialign.py), and it differs from an exact evaluation on the shipped X (also 4-decimal
literals) by up to 8.4e-5, more than its own rounding explains (presumably it was computed from an X with more
digits). It is accurate to about 1e-4 only. For those cases this script also writes output_recomputed.npy: the ONNX
RoiAlign formula (half_pixel / output_half_pixel, sampling_ratio samples per axis, average) evaluated in float64 on
the shipped X and rois, written here independently of rsz, and checked to lie within 1e-4 of ONNX's Y.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

SOURCE_ROOT = "/usr/share/libonnx-testdata/data/node"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "onnx")

# (case, role of each input_N.pb, how rsz maps it: the §6 table)
CASES = [
    ("test_resize_upsample_scales_nearest", ["input", "scales"],
     "resample nearest, the case's scales, offsets 0.5 / -0.5"),
    ("test_resize_downsample_scales_nearest", ["input", "scales"],
     "resample nearest, the case's scales, offsets 0.5 / -0.5"),
    ("test_resize_upsample_sizes_nearest_floor_align_corners", ["input", "sizes"],
     "resample nearest, scale (out-1)/(in-1), offsets 0.5 / 0"),
    ("test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric", ["input", "sizes"],
     "resample nearest, scale out/in, offsets 0 / 0"),
    ("test_resize_upsample_scales_linear", ["input", "scales"],
     "resample linear, the case's scales, offsets 0.5 / -0.5"),
    ("test_resize_downsample_scales_linear", ["input", "scales"],
     "resample linear, the case's scales, offsets 0.5 / -0.5"),
    ("test_resize_upsample_scales_linear_align_corners", ["input", "scales"],
     "resample linear, scale (out-1)/(in-1), offsets 0 / 0"),
    ("test_upsample_nearest", ["input", "scales"], "upsample2d nearest, scale_size {2, 3}"),
    ("test_roialign_aligned_true", ["input", "rois", "batch_indices"],
     "roi_align linear average, min = max = 2, offsets 0.5 / -0.5"),
    ("test_roialign_aligned_false", ["input", "rois", "batch_indices"],
     "roi_align linear average, min = max = 2, input_pixel_offset 0, output_pixel_offset -0.5"),
    # Kept to show the documented mismatch: ONNX rounds exact nearest ties down, rsz rounds them up.
    ("test_resize_upsample_sizes_nearest", ["input", "sizes"],
     "does NOT match by design (ties): resample nearest, scale out/in, offsets 0.5 / -0.5"),
    ("test_resize_downsample_sizes_nearest", ["input", "sizes"],
     "does NOT match by design (ties): resample nearest, scale out/in, offsets 0.5 / -0.5"),
]


def package_version(name):
    try:
        return subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], check=True, capture_output=True,
                              text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def attribute_value(attribute):
    value = onnx.helper.get_attribute_value(attribute)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, float):
        return float(np.float32(value))
    return value


def roi_align_float64(x, rois, batch_indices, output_height, output_width, sampling_ratio, spatial_scale,
                      half_pixel):
    """ONNX RoiAlign (opset 16), mode avg, fixed sampling_ratio > 0, in float64."""
    _, channels, height, width = x.shape
    y = np.zeros((rois.shape[0], channels, output_height, output_width), dtype=np.float64)
    offset = 0.5 if half_pixel else 0.0
    for r, (x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        start_x, start_y = x1 * spatial_scale - offset, y1 * spatial_scale - offset
        roi_width, roi_height = x2 * spatial_scale - offset - start_x, y2 * spatial_scale - offset - start_y
        if not half_pixel:
            roi_width, roi_height = max(roi_width, 1.0), max(roi_height, 1.0)
        bin_w, bin_h = roi_width / output_width, roi_height / output_height
        image = x[int(batch_indices[r])].astype(np.float64)
        for oy in range(output_height):
            for ox in range(output_width):
                total = np.zeros(channels)
                for iy in range(sampling_ratio):
                    sy = start_y + oy * bin_h + (iy + 0.5) * bin_h / sampling_ratio
                    for ix in range(sampling_ratio):
                        sx = start_x + ox * bin_w + (ix + 0.5) * bin_w / sampling_ratio
                        if sy < -1.0 or sy > height or sx < -1.0 or sx > width:
                            continue
                        sy_c, sx_c = min(max(sy, 0.0), height - 1.0), min(max(sx, 0.0), width - 1.0)
                        y_lo, x_lo = int(np.floor(sy_c)), int(np.floor(sx_c))
                        y_hi, x_hi = min(y_lo + 1, height - 1), min(x_lo + 1, width - 1)
                        ly, lx = sy_c - y_lo, sx_c - x_lo
                        total += ((1 - ly) * (1 - lx) * image[:, y_lo, x_lo] + (1 - ly) * lx * image[:, y_lo, x_hi]
                                  + ly * (1 - lx) * image[:, y_hi, x_lo] + ly * lx * image[:, y_hi, x_hi])
                y[r, :, oy, ox] = total / (sampling_ratio * sampling_ratio)
    return y


def save(folder, name, array, dtype):
    converted = np.ascontiguousarray(array.astype(dtype))
    if np.issubdtype(dtype, np.floating):
        assert np.array_equal(converted.astype(array.dtype), array), "%s: not exact as %s" % (name, dtype)
    else:
        assert np.array_equal(converted.astype(np.int64), array.astype(np.int64)), "%s: out of range" % name
    np.save(os.path.join(folder, name), converted, allow_pickle=False)
    return "%s %s %s" % (name, np.dtype(dtype).str, tuple(converted.shape))


def convert(case, roles, mapping):
    source = os.path.join(SOURCE_ROOT, case)
    folder = os.path.join(OUT, case)
    os.makedirs(folder)
    model = onnx.load(os.path.join(source, "model.onnx"))
    (node,) = model.graph.node
    attributes = {a.name: attribute_value(a) for a in node.attribute}
    data_dir = os.path.join(source, "test_data_set_0")
    arrays, files, rows = {}, {}, []
    for index, role in enumerate(roles + ["output"]):
        pb = "output_0.pb" if role == "output" else "input_%d.pb" % index
        tensor = onnx.load_tensor(os.path.join(data_dir, pb))
        array = numpy_helper.to_array(tensor)
        arrays[role] = array
        dtype = np.uint32 if role == "batch_indices" else np.float32
        written = save(folder, role + ".npy", array, dtype)
        files[role + ".npy"] = "%s (ONNX '%s', %s %s)" % (pb, tensor.name, array.dtype, tuple(array.shape))
        rows.append((case, written, "test_data_set_0/%s" % pb, sha256(os.path.join(data_dir, pb))))
    if node.op_type == "RoiAlign":
        assert attributes.get("mode", "avg") == "avg"
        recomputed = roi_align_float64(arrays["input"], arrays["rois"], arrays["batch_indices"],
                                       attributes["output_height"], attributes["output_width"],
                                       attributes["sampling_ratio"], attributes["spatial_scale"],
                                       attributes["coordinate_transformation_mode"] == "half_pixel")
        deviation = np.abs(recomputed - arrays["output"]).max()
        assert deviation <= 1e-4, "%s: the float64 recomputation is %g from ONNX's Y" % (case, deviation)
        np.save(os.path.join(folder, "output_recomputed.npy"), recomputed.astype(np.float32), allow_pickle=False)
        files["output_recomputed.npy"] = ("the ONNX RoiAlign formula in float64 on input.npy and rois.npy "
                                          "(make_onnx_goldens.py), rounded to float32; max |diff| to ONNX's Y: %.3g"
                                          % deviation)
        rows.append((case, "output_recomputed.npy <f4 %s" % (recomputed.shape,),
                     "input.npy, rois.npy (recomputed)", ""))
    params = {
        "source": "libonnx-testdata %s: %s/%s" % (package_version("libonnx-testdata"), SOURCE_ROOT, case),
        "op_type": node.op_type,
        "opset": [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")][0],
        "attributes": attributes,
        "files": files,
        "rsz_mapping": mapping,
    }
    with open(os.path.join(folder, "params.json"), "w") as f:
        json.dump(params, f, indent=2, sort_keys=True)
        f.write("\n")
    rows.append((case, "params.json", "model.onnx", sha256(os.path.join(source, "model.onnx"))))
    return rows


def main():
    if not os.path.isdir(SOURCE_ROOT):
        sys.exit("missing %s: apt-get install libonnx-testdata" % SOURCE_ROOT)
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    rows = []
    for case, roles, mapping in CASES:
        rows += convert(case, roles, mapping)
    lines = [
        "# ONNX goldens: sources",
        "",
        "Generated by `tests/data/make_onnx_goldens.py`; do not edit by hand.",
        "Read by `tests/golden/onnx_golden_test.cpp`.",
        "",
        "* Source package: Debian `libonnx-testdata` %s (ONNX 1.12 backend node tests), `%s/<case>/`"
        % (package_version("libonnx-testdata"), SOURCE_ROOT),
        "* Read with Debian `python3-onnx` %s (onnx %s, `numpy_helper.to_array`), written with numpy %s"
        % (package_version("python3-onnx"), onnx.__version__, np.__version__),
        "* The mapping of each case onto rsz parameters is SEMANTICS.md §6; each folder's params.json repeats it with",
        "  the ONNX node's attributes. The last two cases do NOT match by design (ONNX rounds exact nearest ties",
        "  down).",
        "* Conversions are exact (checked): float32 stays float32, int64 sizes become float32, int64 batch indices",
        "  become uint32.",
        "* RoiAlign: ONNX's Y is a 4-decimal literal that differs from an exact evaluation on the shipped X by up to",
        "  8.4e-5 (presumably computed from an X with more digits): it is accurate to about 1e-4 only.",
        "  output_recomputed.npy is the float64 evaluation of the ONNX formula on the shipped X and rois, rounded to",
        "  float32 (see the script's docstring).",
        "",
        "| case | file | from | SHA-256 of the source file |",
        "| --- | --- | --- | --- |",
    ]
    lines += ["| %s | %s | %s | %s |" % row for row in rows]
    with open(os.path.join(OUT, "SOURCES.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d cases to %s" % (len(CASES), OUT))


if __name__ == "__main__":
    main()
