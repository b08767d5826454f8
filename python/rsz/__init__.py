"""rsz: DirectML's RESAMPLE1, UPSAMPLE_2D and ROI_ALIGN, exact, on numpy arrays and DLPack tensors.

Every function takes numpy arrays or any DLPack producer (torch CPU tensors, ...) of float32 or float16, with any
non-negative strides, and reads them in place: no conversion, no contiguous copy. uint8 / uint16 arrays are image
samples (the value of p is p / 255 or p / 65535, docs/SEMANTICS.md §0) and give float32 results. The result is a
new array of the input's kind (a torch tensor for a torch input), or ``out`` when given, written in place. The
parameters are those of rsz's JSON configs (docs/SEMANTICS.md), with the same names and defaults. The GIL is
released while the kernels run. Errors raise ValueError with rsz's one-line message.

    >>> import numpy as np, rsz
    >>> x = np.random.rand(1, 3, 480, 640).astype(np.float32)
    >>> rsz.resample(x, scales=0.5).shape
    (1, 3, 240, 320)
"""

import numbers
import sys

import numpy as np

from . import _rsz

__version__ = _rsz.__version__
__all__ = ["resample", "resize", "thumbnail", "upsample2d", "roi_align", "info", "read_image", "write_image",
           "backends"]


def backends():
    """The backends of this build: dicts of name, memory, available and note (why not, or what it runs on)."""
    return _rsz.backends()


def _exec(threads, backend, device):
    return _rsz.Exec(int(threads), str(backend), int(device))


def _as_array(x, name):
    """A numpy view of x (itself for numpy, np.from_dlpack for DLPack producers) and how to give results back."""
    if isinstance(x, np.ndarray):
        return x, None
    if hasattr(x, "__dlpack__"):
        module = sys.modules.get(type(x).__module__.split(".")[0])
        back = getattr(module, "from_dlpack", None)
        return np.from_dlpack(x), back
    raise ValueError("%s is a %s; a numpy array or a DLPack tensor (e.g. a torch CPU tensor) is needed"
                     % (name, type(x).__name__))


def _as_out(out):
    """out as a writeable numpy view of the same memory (torch CPU tensors through .numpy())."""
    if out is None or isinstance(out, np.ndarray):
        return out
    if hasattr(out, "numpy") and hasattr(out, "__dlpack__"):
        return out.numpy()  # shares the tensor's memory, writeable
    raise ValueError("out is a %s; a writeable numpy array or torch CPU tensor is needed" % type(out).__name__)


def _give_back(result, out, back):
    if out is not None:
        return out
    return back(result) if back is not None else result


def _four(value, name, fill):
    """A scalar (H and W; N and C take fill), 2 values (H, W) or 4 values (N, C, H, W)."""
    if value is None:
        return None
    if isinstance(value, numbers.Number):
        return [fill, fill, value, value]
    values = list(value)
    if len(values) == 2:
        return [fill, fill] + values
    if len(values) == 4:
        return values
    raise ValueError("%s has %d values; give 1 (H and W), 2 (H, W) or 4 (N, C, H, W)" % (name, len(values)))


def _offsets(value, name):
    """One number (every axis) or 4 values (N, C, H, W)."""
    if value is None:
        return None
    if isinstance(value, numbers.Number):
        return [float(value)] * 4
    values = [float(v) for v in value]
    if len(values) != 4:
        raise ValueError("%s has %d values; give 1 (every axis) or 4 (N, C, H, W)" % (name, len(values)))
    return values


def _pair(value, name):
    if isinstance(value, numbers.Number):
        if value != int(value):
            raise ValueError("%s = %r; whole numbers are needed" % (name, value))
        return int(value), int(value)
    values = list(value)
    if len(values) != 2:
        raise ValueError("%s has %d values; give one integer or (height, width)" % (name, len(values)))
    return int(values[0]), int(values[1])


def resample(x, scales=None, sizes=None, mode=None, input_pixel_offsets=None, output_pixel_offsets=None,
             preset=None, antialias=False, rounding_direction=None, out=None, threads=0, backend="auto", device=0):
    """DirectML RESAMPLE1 on a rank-4 (N, C, H, W) tensor.

    scales: the output/input ratio: one number (H and W), (H, W), or 4 values (N, C, H, W; N and C default to 1).
    sizes: the output sizes instead, (H, W) or 4 values; the scales are then sizes / input sizes (float32).
    Give scales, sizes, or out (whose shape is the output's). With both, scales place the samples and sizes
    crop or pad the output (as the JSON config's "scales" and "output_sizes").
    mode: "linear" (the default, unless the preset says nearest) or "nearest".
    input_pixel_offsets / output_pixel_offsets: one number or 4 (default 0.5 and -0.5: pixel centres, as PyTorch's
    bilinear with align_corners=False).
    preset: "half_pixel", "align_corners" (PyTorch align_corners=True), "asymmetric" or "nearest_floor" (PyTorch
    and OpenCV nearest); explicit mode or offsets override it.
    antialias: DirectML RESAMPLE3 / ONNX antialias=1: linear mode widens its triangle filter by 1 / scale on each
    downscaled axis (close to torch's interpolate(..., antialias=True); docs/SEMANTICS.md section 1.7).
    rounding_direction: nearest mode's rounding (DirectML RESAMPLE2, ONNX nearest_mode): "round_prefer_ceil" (the
    default), "round_prefer_floor" (ONNX's default), "floor" or "ceil".
    threads: at most this many worker threads, 0 for every CPU this process may use (its affinity and cgroup
    quota), up to 1024; a small call uses fewer (one per 32768 elements); results never depend on it. backend: "auto" (the CPU), "cpu",
    "reference" or "cuda" (copies to the GPU `device` and back); results never depend on it either.
    """
    array, back = _as_array(x, "x")
    array_out = _as_out(out)
    scales4 = _four(scales, "scales", 1.0)
    if sizes is not None:
        sizes_list = list(sizes) if not isinstance(sizes, numbers.Number) else [sizes, sizes]
        if len(sizes_list) not in (2, 4):
            raise ValueError("sizes has %d values; give 1 (H and W), 2 (H, W) or 4 (N, C, H, W)" % len(sizes_list))
        if array.ndim != 4:
            raise ValueError("resample: x has rank %d (shape %s); rank 4 (N, C, H, W) is needed"
                             % (array.ndim, tuple(array.shape)))
        if len(sizes_list) == 2:
            sizes_list = [array.shape[0], array.shape[1]] + sizes_list
        sizes4 = [int(s) for s in sizes_list]
    else:
        sizes4 = None
    result = _rsz.resample(array, array_out,
                           None if scales4 is None else [float(s) for s in scales4], sizes4, mode,
                           _offsets(input_pixel_offsets, "input_pixel_offsets"),
                           _offsets(output_pixel_offsets, "output_pixel_offsets"), preset, bool(antialias),
                           rounding_direction, None, None, None, False, False, False, _exec(threads, backend, device))
    return _give_back(result, out, back)


def _size_text(size, name):
    """size as the command line's --size text: a string as written, N (an N x N box) or (height, width)."""
    if isinstance(size, str):
        return size
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        return "%dx%d" % (size, size)
    try:
        values = list(size)
    except TypeError:
        values = None
    if values is None or len(values) != 2:
        raise ValueError("%s = %r; give a string as --size takes ('256x256>', 'x100', '50%%'), an integer N (an N x N "
                         "box) or (height, width) with None for a side that keeps the aspect ratio" % (name, size))
    height, width = values
    return "%sx%s" % ("" if width is None else int(width), "" if height is None else int(height))


def _image(x, name):
    array, back = _as_array(x, name)
    if array.ndim == 2:
        raise ValueError("%s has shape %s; an image is (1, C, H, W) or (C, H, W), as read_image gives it (a gray "
                         "(H, W) array is image[None])" % (name, tuple(array.shape)))
    if array.ndim == 3:
        array = array[np.newaxis]
    return array, back


def resize(image, size=None, fit=None, gravity=None, scales=None, mode=None, preset=None, antialias=None,
           rounding_direction=None, out=None, threads=0, backend="auto", device=0):
    """Resizes an image, (1, C, H, W) or (C, H, W) as read_image returns it, as rsz resample does on image files.

    size: the box, as the command line's --size ("224x224", "256x256>" shrink only, "x100", "50%", ...), an
    integer N (an N x N box) or (height, width) (None for a side that keeps the aspect ratio). Or scales: one
    number or (H, W). fit: "fill" (the default: exactly the box), "inside", "outside", "cover" (cropped at gravity) or
    "contain" (padded with zeros at gravity). gravity: "center" (default), "north", "southeast", ... The image's
    channels are never resampled: sizes and scales address height and width. mode, preset, antialias and
    rounding_direction as in resample. The result has the image's layout ((C, H, W) in, (C, H, W) out).
    """
    return _resize(image, size, fit, gravity, scales, mode, preset, antialias, rounding_direction, False, False, out,
                   threads, backend, device)


def thumbnail(image, size, fit=None, gravity=None, enlarge=False, mode=None, antialias=None, out=None, threads=0,
              backend="auto", device=0):
    """rsz thumbnail on an image: fitted within the box, aspect kept, only shrinking unless enlarge, antialiased.

    size: an integer N (an N x N box), "WxH" or any --size form (a suffix replaces the defaults), or (height, width).
    fit: "inside" (default), "cover" (square thumbnails, cropped at gravity), "contain", "outside" or "fill".
    """
    return _resize(image, size, fit, gravity, None, mode, None, antialias, None, True, bool(enlarge), out, threads,
                   backend, device)


def _resize(image, size, fit, gravity, scales, mode, preset, antialias, rounding_direction, thumb, enlarge, out,
            threads, backend, device):
    array, back = _image(image, "image")
    squeeze = np.ndim(image) == 3
    array_out = _as_out(out)
    if array_out is not None and array_out.ndim == 3:
        array_out = array_out[np.newaxis]
    if size is None and scales is None and out is None:
        raise ValueError("%s: give size%s" % ("thumbnail" if thumb else "resize", "" if thumb else ", scales or out"))
    size_text = None if size is None else _size_text(size, "size")
    scales4 = _four(scales, "scales", 1.0)
    result = _rsz.resample(array, array_out, None if scales4 is None else [float(s) for s in scales4], None, mode,
                           None, None, preset, None if antialias is None else bool(antialias), rounding_direction,
                           size_text, fit, gravity, thumb, enlarge, True, _exec(threads, backend, device))
    if out is not None:
        return out
    if squeeze:
        result = result[0]
    return back(result) if back is not None else result


def upsample2d(x, factor, mode="nearest", out=None, threads=0, backend="auto", device=0):
    """DirectML UPSAMPLE_2D on a rank-4 (N, C, H, W) or rank-5 (N, C, D, H, W) tensor.

    factor: an integer (H and W) or (height, width), the JSON config's scale_size. mode: "nearest" (default:
    replication) or "linear" (RESAMPLE1 linear with scales factor and pixel-centre offsets).
    """
    array, back = _as_array(x, "x")
    array_out = _as_out(out)
    fh, fw = _pair(factor, "factor")
    if fh < 1 or fw < 1:
        raise ValueError("upsample2d: factor = (%d, %d); both must be >= 1" % (fh, fw))
    result = _rsz.upsample2d(array, array_out, fh, fw, mode, _exec(threads, backend, device))
    return _give_back(result, out, back)


def roi_align(x, rois, batch_indices=None, output_size=None, reduction="average", mode="linear", spatial_scale=1.0,
              sampling_ratio=None, aligned=None, out_of_bounds_input_value=0.0, minimum_samples_per_output=1,
              maximum_samples_per_output=4294967295, input_pixel_offset=0.5, output_pixel_offset=-0.5,
              align_regions_to_corners=False, out=None, threads=0, backend="auto", device=0):
    """DirectML ROI_ALIGN (with the ROI_ALIGN1 extensions) on an (N, C, H, W) tensor; returns (R, C, OH, OW).

    rois: (R, 4) boxes [x1, y1, x2, y2] in input pixels (times spatial_scale), or torchvision's (R, 5) form with the
    batch index first (then batch_indices must be None). Converted to x's float type (float32 for uint8/uint16 x).
    batch_indices: R integers (default all 0). output_size: an integer or (height, width).
    reduction: "average" or "max"; mode: "linear" or "nearest"; spatial_scale: one number or (x, y).
    Conveniences that map exactly (docs/SEMANTICS.md §5): sampling_ratio=k > 0 sets minimum and maximum samples per
    output to k (torchvision's sampling_ratio; k <= 0 keeps the adaptive default); aligned=False sets
    input_pixel_offset to 0 (torchvision's aligned=False, exactly for boxes at least 1 pixel wide after
    spatial_scale: torchvision widens smaller ones; aligned=True is the default offsets).
    """
    array, back = _as_array(x, "x")
    array_out = _as_out(out)
    if output_size is None:
        raise ValueError("roi_align: output_size is required (an integer or (height, width))")
    oh, ow = _pair(output_size, "output_size")
    # The boxes have the output's type: x's float type, float32 for image samples, or out's.
    box_type = array_out.dtype if array_out is not None else (np.float32 if array.dtype.kind == "u" else array.dtype)
    boxes, _ = _as_array(rois, "rois") if not isinstance(rois, (list, tuple)) else (np.asarray(rois), None)
    boxes = np.asarray(boxes)
    if boxes.ndim == 2 and boxes.shape[1] == 5:
        if batch_indices is not None:
            raise ValueError("roi_align: rois has 5 columns (batch index first) and batch_indices is given; give one")
        batch_indices = boxes[:, 0]
        boxes = boxes[:, 1:]
    if boxes.dtype != box_type:
        boxes = boxes.astype(box_type)
    count = boxes.shape[-2] if boxes.ndim >= 2 else 0
    if batch_indices is None:
        indices = np.zeros(count, dtype=np.uint32)
    else:
        raw, _ = _as_array(batch_indices, "batch_indices") if not isinstance(batch_indices, (list, tuple)) else (
            np.asarray(batch_indices), None)
        raw = np.asarray(raw)
        if raw.dtype.kind == "f" and not np.all(raw == np.floor(raw)):
            raise ValueError("roi_align: batch_indices must be whole numbers")
        if raw.size and (raw.min() < 0 or raw.max() > 4294967295):
            raise ValueError("roi_align: batch_indices must be in [0, 2^32)")
        indices = raw.astype(np.uint32)
    if isinstance(spatial_scale, numbers.Number):
        scale_x = scale_y = float(spatial_scale)
    else:
        scale_x, scale_y = (float(v) for v in spatial_scale)
    lo, hi = int(minimum_samples_per_output), int(maximum_samples_per_output)
    if sampling_ratio is not None and sampling_ratio > 0:
        lo = hi = int(sampling_ratio)
    if aligned is False:
        input_pixel_offset = 0.0
    result = _rsz.roi_align(array, boxes, indices, array_out, oh, ow, mode, reduction, scale_x, scale_y,
                            float(out_of_bounds_input_value), lo, hi, float(input_pixel_offset),
                            float(output_pixel_offset), bool(align_regions_to_corners),
                            _exec(threads, backend, device))
    return _give_back(result, out, back)


def info(path, exif=True, max_pixels=1 << 28):
    """What an image or .npy file holds, from its header alone (nothing decoded), as rsz info says it.

    Images: a dict of width, height, channels, bit_depth and format ("png", "jpeg", "tiff", ...), the size upright
    unless exif=False. .npy files: a dict of shape (a tuple) and dtype ("float32", ...).
    """
    path = str(path)
    if path.lower().endswith(".npy"):
        array = np.load(path, mmap_mode="r")
        return {"shape": tuple(array.shape), "dtype": str(array.dtype)}
    return _rsz.image_info(path, bool(exif), int(max_pixels))


def read_image(path, dtype="float32", alpha="premultiplied", exif=True, max_pixels=1 << 28):
    """An image file as a (1, C, H, W) tensor, with the CLI's rules.

    dtype "float32" or "float16": samples p become p / (2^bits - 1); with alpha="premultiplied" (the CLI's default)
    colour is multiplied by alpha, "straight" keeps them apart. dtype "uint": the decoded uint8 / uint16 samples
    themselves, as a strided view of the interleaved pixels (no copy), which every operator reads as p / (2^bits - 1).
    exif: apply the JPEG EXIF orientation. Images over max_pixels are refused from their header.
    """
    return _rsz.read_image(str(path), dtype, alpha, bool(exif), int(max_pixels))


def write_image(path, image, bit_depth=8, alpha="premultiplied", quality=0, png_compression=-1):
    """Writes a float (1, C, H, W) or (C, H, W) tensor of values in [0, 1] as an image; the extension picks the format.

    Values are rounded to bit_depth (8 or 16) bits, saturated; alpha as in read_image. quality: JPEG / lossy WebP
    1..100 (0: JPEG 95, WebP lossless). png_compression: zlib level 0..9 (-1: rsz's fast default). The file is
    written atomically (a temporary file renamed over the target).
    """
    array, _ = _as_array(image, "image")
    if array.ndim == 3:
        array = array[np.newaxis]
    _rsz.write_image(str(path), array, int(bit_depth), alpha, int(quality), int(png_compression))
