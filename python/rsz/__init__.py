"""rsz: DirectML's RESAMPLE1, UPSAMPLE_2D and ROI_ALIGN, exact, on numpy arrays and DLPack tensors.

Every function takes numpy arrays or any DLPack producer (torch CPU tensors, ...) of float32 or float16, with any
non-negative strides, and reads them in place: no conversion, no contiguous copy. uint8 / uint16 arrays are image
samples (the value of p is p / 255 or p / 65535, docs/SEMANTICS.md §0) and give float32 results. float64 (numpy's
default) is converted to float32, a copy, and gives float32 results: the kernels compute in float32, so a float64
result would only claim digits it does not have. Torch tensors with the negative or conjugate bit set (lazy views
such as t.conj().imag) are resolved first (a copy). The result is a new array of the input's kind (a torch tensor
for a torch input), or ``out`` when given, written in place. The parameters are those of rsz's JSON configs
(docs/SEMANTICS.md), with the same names and defaults. The GIL is released while the kernels run. Errors raise
ValueError with rsz's one-line message; a dtype that is not allowed raises rsz.DTypeError, both a TypeError (numpy's
habit) and a ValueError.

    >>> import numpy as np, rsz
    >>> x = np.random.rand(1, 3, 480, 640)
    >>> rsz.resample(x, scales=0.5).shape, rsz.resample(x, scales=0.5).dtype
    ((1, 3, 240, 320), dtype('float32'))
"""

# Imports under private names: dir(rsz) shows the module's own names only.
import importlib.machinery as _machinery
import numbers as _numbers
import json as _json
import os as _os
import sys as _sys

import numpy as _np


def _extension_error(error):
    """Why `from . import _rsz` failed, said so that it can be fixed: the extension missing (only this file was
    copied or installed), or there and not loading (built for another Python, a library missing)."""
    folder = _os.path.dirname(_os.path.abspath(__file__))
    found = sorted(name for name in _os.listdir(folder) if name.startswith("_rsz.") and not name.endswith(".py"))
    loadable = [name for name in found if name in ["_rsz" + suffix for suffix in _machinery.EXTENSION_SUFFIXES]]
    build = ("with `cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target _rsz` "
             "(bash scripts/test.sh installs pybind11-dev and python3-dev and builds everything), then import it from "
             "the build tree (PYTHONPATH=build/python) or install it (cmake --install build)")
    if loadable:
        return ImportError("rsz: the compiled extension %s in %s does not load (%s); rebuild it %s"
                           % (loadable[0], folder, error, build))
    if found:
        return ImportError("rsz: the compiled extension %s in %s was built for another Python than this one (%s, "
                           "which loads _rsz%s); build it %s"
                           % (found[0], folder, _sys.executable, _machinery.EXTENSION_SUFFIXES[0], build))
    return ImportError("rsz: the compiled extension _rsz is not in %s (only the Python half is there); build it %s"
                       % (folder, build))


try:
    from . import _rsz
except ImportError as _error:  # without this, Python reports a misleading "circular import"
    raise _extension_error(_error) from None

__version__ = _rsz.__version__
_SETTINGS = _rsz.run_settings()
_SETTINGS_BY_KEY = {s["key"]: s for s in _SETTINGS}
# The operator commands' own options (rsz/pipeline/commands.h), by command and key: the other keywords of run,
# run_shard and map_paths.
_COMMAND_OPTIONS = {command: {o["key"]: o for o in rows} for command, rows in _rsz.command_options().items()}
__all__ = ["resample", "resize", "thumbnail", "upsample2d", "roi_align", "torchvision_roi_align", "info",
           "read_image", "write_image", "shard_key", "shard_of", "plan", "plan_job", "Plan", "run", "run_shard",
           "map_paths", "merge", "release_gpu",
           "CommandError", "RunError", "InputError", "Report", "backends", "run_settings", "DTypeError"]


class DTypeError(TypeError, ValueError):
    """An array of a dtype the argument does not take. A TypeError, as numpy raises for unsupported dtypes, and a
    ValueError, as every other rsz refusal is (numpy's AxisError is an IndexError and a ValueError the same way)."""


def backends():
    """The backends of this build: dicts of name, memory, available, devices (how many it runs on here: the GPUs
    that device="all" takes for "cuda", 1 for the host backends) and note (why not, or what it runs on)."""
    return _rsz.backends()


def release_gpu():
    """Lets go of the GPU stage that jobs with decode="gpu" keep in this process for its next jobs on the same device
    (nvJPEG's decoders on the GPU's JPEG engines, two batches' GPU memory and pinned host memory; making it takes most
    of a second, once a process), and returns how many were let go (0 where none is kept, or the build has no
    nvJPEG). A job under way, or a Plan not run yet, that holds the stage keeps it until it ends, and does not keep
    it then. With RSZ_GPU_STATS=1 in the environment, a stage prints what it did (over all its jobs) when it ends."""
    return _rsz.release_gpu_stages()


def run_settings():
    """The run-level settings of rsz's commands, one dict each: key (the keyword of run_shard and map_paths, and of a
    batch file unless batch_key says another; None where a batch file cannot set it), flag, help, kind ("bool",
    "int", "choice" or "text"), choices, min and max (int), commands (which take it) and changes_outputs (whether
    --plan pins it). The command line's flags, batch files and these keywords come from this one table."""
    return [dict(s) for s in _SETTINGS]


def _exec(threads, backend, device):
    return _rsz.Exec(int(threads), str(backend), int(device))


# What each kind of argument takes, as the refusals say it.
_OPERAND = "float32, float16, float64 (computed as float32) or uint8 / uint16 image samples is allowed"
_BOXES = "float or integer coordinates are allowed"
_INDICES = "integers (or whole floats) are allowed"
_OUT = "float32 or float16 is allowed (out is written in place, in the type the kernels write)"


# The torch dtypes numpy's from_dlpack reads; the rest are refused before it is asked.
_TORCH_DLPACK_TYPES = {"torch." + t for t in ("float16", "float32", "float64", "uint8", "int8", "int16", "int32",
                                              "int64", "complex64", "complex128")}


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _as_array(x, name, allowed=_OPERAND):
    """A numpy view of x (itself for numpy, np.from_dlpack for DLPack producers) and how to give results back.

    Torch tensors are checked first for what DLPack cannot carry, or would carry wrongly: the negative and conjugate
    bits (the memory holds the values un-negated, so DLPack readers would read the wrong sign) are resolved into a
    copy; tensors off the CPU or requiring grad are refused as torch's .numpy() refuses them."""
    if isinstance(x, _np.ndarray):
        return x, None
    if type(x).__name__ == "Tensor" and _is_torch(x):
        # The fast path for a plain CPU tensor: .numpy() is a view of the same memory and refuses (raises) exactly
        # what needs a word or a copy below (grad, another device, the negative or conjugate bit, bfloat16); torch's
        # from_numpy gives the result back. About 10 us a call less than two DLPack exchanges.
        # Float and unsigned samples only: other types take the path below, whose messages name torch's dtype.
        try:
            array = x.numpy()
            if array.dtype.kind in "fu":
                return array, _sys.modules["torch"].from_numpy
        except (RuntimeError, TypeError):
            pass
    if not hasattr(x, "__dlpack__"):
        raise ValueError("%s is a %s; a numpy array or a DLPack tensor (e.g. a torch CPU tensor) is needed"
                         % (name, type(x).__name__))
    module = _sys.modules.get(type(x).__module__.split(".")[0])
    back = getattr(module, "from_dlpack", None)
    if _is_torch(x):
        if str(x.dtype) not in _TORCH_DLPACK_TYPES:  # bfloat16, bool, quantized: numpy raises a bare RuntimeError
            raise DTypeError("%s has dtype %s; %s" % (name, x.dtype, allowed))
        if x.device.type != "cpu":
            raise ValueError("%s is on device %s; a CPU tensor is needed here (.cpu()); resample, upsample2d and "
                             "roi_align take CUDA tensors" % (name, x.device))
        if x.requires_grad:
            raise ValueError("%s requires grad; rsz computes no gradients: pass %s.detach()"
                             % (name, name.rsplit(": ", 1)[-1]))
        x = x.resolve_conj().resolve_neg()
    try:
        return _np.from_dlpack(x), back
    except (RuntimeError, BufferError, TypeError) as error:  # what another producer's DLPack (or numpy) cannot carry
        dtype = getattr(x, "dtype", None)
        if dtype is not None and "type" in str(error).lower():
            raise DTypeError("%s has dtype %s; %s" % (name, dtype, allowed)) from None
        raise ValueError("%s (a %s) cannot be read through DLPack: %s" % (name, type(x).__name__, error)) from None


# CUDA tensors (torch's): read and written in device memory, on the tensor's device, queued on torch's current
# stream there (no copy to the host, no wait; roi_align waits to check device boxes).
_DEVICE_TYPES = {"torch.float32": "float32", "torch.float16": "float16", "torch.uint8": "uint8",
                 "torch.uint16": "uint16"}


def _cuda_tensor(x):
    """Whether x is a torch tensor (or parameter) in CUDA memory."""
    torch = _sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor) and x.device.type == "cuda"


def _device_arg(x, name, allowed=_OPERAND):
    """A CUDA tensor as the extension reads it (its memory, type, shape and strides; the tensor keeps it alive)."""
    if x.requires_grad:
        raise ValueError("%s requires grad; rsz computes no gradients: pass %s.detach()"
                         % (name, name.rsplit(": ", 1)[-1]))
    x = x.resolve_conj().resolve_neg()
    if str(x.dtype) == "torch.float64":
        x = x.float()
    kind = _DEVICE_TYPES.get(str(x.dtype))
    if kind is None:
        raise DTypeError("%s has dtype %s; %s" % (name, x.dtype, allowed))
    return _rsz.DeviceArg(x.data_ptr(), kind, list(x.shape), list(x.stride()), x.device.index, x)


def _device_out(out, x, op):
    """out for a call on CUDA tensors: a CUDA tensor of float32 or float16, written in place."""
    if out is None:
        return None
    if not _cuda_tensor(out):
        raise ValueError("%s: x is a CUDA tensor and out is a %s in host memory; give out on x's device (%s)"
                         % (op, type(out).__name__, x.device))
    if out.is_neg() or out.is_conj():
        raise ValueError("%s: out has its %s bit set (a lazy view such as t.conj().imag): the memory holds other "
                         "values than the tensor shows, so it cannot be written in place; pass a plain tensor"
                         % (op, "negative" if out.is_neg() else "conjugate"))
    if out.requires_grad:
        raise ValueError("%s: out requires grad; rsz computes no gradients: pass a tensor that does not" % op)
    if str(out.dtype) not in ("torch.float32", "torch.float16"):
        raise DTypeError("%s: out has dtype %s; %s" % (op, out.dtype, _OUT))
    return _device_arg(out, op + ": out")


def _device_exec(threads, backend, x):
    """The call's settings for CUDA tensors: torch's current stream on x's device, and outputs made by torch there."""
    torch = _sys.modules["torch"]
    stream = torch.cuda.current_stream(x.device).cuda_stream

    def allocate(shape, dtype, zero):
        make = torch.zeros if zero else torch.empty
        return _device_arg(make(shape, dtype=getattr(torch, dtype), device=x.device), "out")

    return _rsz.Exec(int(threads), str(backend), int(x.device.index), int(stream), allocate)


def _tensor_call(x, out, op, threads, backend, device):
    """A tensor operator's operand, how to give its result back, its out and its settings: a CUDA tensor's on its
    device (_device_arg), a host array's as _operand reads it; image samples with their channels last refused."""
    if _cuda_tensor(x):
        array, back, array_out = _device_arg(x, op + ": x"), _owner, _device_out(out, x, op)
        exec_ = _device_exec(threads, backend, x)
    else:
        array, back = _operand(x, op + ": x")
        array_out, exec_ = _as_out(out, op), _exec(threads, backend, device)
    if _samples(array) and array.ndim == 4:
        _refuse_channels_last(array, op + ": x")
    return array, back, array_out, exec_


def _samples(array):
    """Whether an operand (a numpy array or a CUDA tensor's DeviceArg) holds image samples (uint8 / uint16)."""
    return array.dtype in ("uint8", "uint16") if isinstance(array, _rsz.DeviceArg) else array.dtype.kind == "u"


def _refuse_channels_last(array, name):
    """Refuses pixels with their channels last, as Pillow, OpenCV and imageio give them: (N, H, W, C) or (H, W, C)
    with C = 1, 3 or 4 and H > 4, which would otherwise be read as H channels of W x C images. For every image
    argument (resize, thumbnail, write_image: 1 to 4 channels, so the shape says which layout it is) and for image
    samples (uint8 / uint16) given to the tensor operators (float tensors may well have many channels of width 3)."""
    if array.ndim in (3, 4) and array.shape[-1] in (1, 3, 4) and array.shape[-3] > 4:
        last, first, axes = (("(N, H, W, C)", "(N, C, H, W)", "0, 3, 1, 2") if array.ndim == 4 else
                             ("(H, W, C)", "(C, H, W)", "2, 0, 1"))
        arg = name.rsplit(": ", 1)[-1]
        raise ValueError("%s has shape %s, which looks like %s, channels last as image libraries give pixels; rsz "
                         "takes %s, channels first: pass %s.transpose(%s) (a view, no copy; a torch tensor: "
                         "%s.permute(%s))" % (name, tuple(array.shape), last, first, arg, axes, arg, axes))


def _operand(x, name):
    """An operator's input (or write_image's image) as an array the kernels read: float32, float16 or image samples
    as they are, float64 converted to float32 (the kernels compute in float32 anyway)."""
    array, back = _as_array(x, name)
    dtype = array.dtype
    if dtype.kind == "f" and dtype.itemsize == 8:
        return array.astype(_np.float32), back
    if not ((dtype.kind == "f" and dtype.itemsize in (2, 4)) or (dtype.kind == "u" and dtype.itemsize in (1, 2))):
        raise DTypeError("%s has dtype %s; %s" % (name, dtype.name, _OPERAND))
    return array, back


def _as_out(out, op):
    """out as a writeable numpy view of the same memory (torch CPU tensors through .numpy())."""
    if out is None:
        return None
    if isinstance(out, _np.ndarray):
        array = out
    elif hasattr(out, "numpy") and hasattr(out, "__dlpack__"):
        if _is_torch(out):
            if out.is_neg() or out.is_conj():
                raise ValueError("%s: out has its %s bit set (a lazy view such as t.conj().imag): the memory holds "
                                 "other values than the tensor shows, so it cannot be written in place; pass a plain "
                                 "tensor" % (op, "negative" if out.is_neg() else "conjugate"))
            if out.device.type != "cpu":
                raise ValueError("%s: out is on device %s; a CPU tensor is needed" % (op, out.device))
            if out.requires_grad:
                raise ValueError("%s: out requires grad; rsz computes no gradients: pass a tensor that does not"
                                 % op)
            if str(out.dtype) not in ("torch.float32", "torch.float16"):
                raise DTypeError("%s: out has dtype %s; %s" % (op, out.dtype, _OUT))
        array = out.numpy()  # shares the tensor's memory, writeable
    else:
        raise ValueError("%s: out is a %s; a writeable numpy array or torch CPU tensor is needed"
                         % (op, type(out).__name__))
    if not (array.dtype.kind == "f" and array.dtype.itemsize in (2, 4)):
        raise DTypeError("%s: out has dtype %s; %s" % (op, array.dtype.name, _OUT))
    return array


def _owner(result):
    """The tensor of an output made on the device."""
    return result.owner


def _give_back(result, out, back):
    if out is not None:
        return out
    return back(result) if back is not None else result


def _four(value, name, fill):
    """A scalar (H and W; N and C take fill), 2 values (H, W) or 4 values (N, C, H, W)."""
    if value is None:
        return None
    if isinstance(value, _numbers.Number):
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
    if isinstance(value, _numbers.Number):
        return [float(value)] * 4
    values = [float(v) for v in value]
    if len(values) != 4:
        raise ValueError("%s has %d values; give 1 (every axis) or 4 (N, C, H, W)" % (name, len(values)))
    return values


def _pair(value, name):
    if isinstance(value, _numbers.Number):
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

    x: float32 or float16 (the result has its type), uint8 / uint16 image samples (float32 results), or float64,
    converted to float32 (the kernels compute in float32) with a float32 result. Image samples with their channels
    last, (N, H, W, C) with C = 1, 3 or 4 and H > 4 (as Pillow or OpenCV give pixels), are refused with a ValueError
    that says how to transpose them (a view: any strides are read in place).
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
    quota), up to 1024; a small call uses fewer (one per 32768 elements); results never depend on it. backend:
    "auto" (the CPU), "cpu", "reference" or "cuda" (copies to the GPU `device` and back); results never depend on
    it either.
    """
    array, back, array_out, exec_ = _tensor_call(x, out, "resample", threads, backend, device)
    scales4 = _four(scales, "scales", 1.0)
    if sizes is not None:
        sizes_list = list(sizes) if not isinstance(sizes, _numbers.Number) else [sizes, sizes]
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
                           rounding_direction, None, None, None, False, False, False, exec_)
    return _give_back(result, out, back)


def _size_text(size, name):
    """size as the command line's --size text: a string as written, N (an N x N box) or (height, width)."""
    if isinstance(size, str):
        return size
    if isinstance(size, _numbers.Integral) and not isinstance(size, bool):
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
    array, back = _operand(x, name)
    if array.ndim == 2:
        raise ValueError("%s has shape %s; an image is (1, C, H, W) or (C, H, W), as read_image gives it (a gray "
                         "(H, W) array is image[None])" % (name, tuple(array.shape)))
    _refuse_channels_last(array, name)
    return array, back


def resize(image, size=None, fit=None, gravity=None, scales=None, mode=None, preset=None, antialias=None,
           rounding_direction=None, out=None, threads=0, backend="auto", device=0):
    """Resizes an image, (1, C, H, W) or (C, H, W) as read_image returns it, as rsz resample does on image files.

    size: the box, as the command line's --size ("224x224", "256x256>" shrink only, "x100", "50%", ...), an
    integer N (an N x N box) or (height, width) (None for a side that keeps the aspect ratio). Or scales: one
    number or (H, W). Mind the order: a string is the command line's WIDTHxHEIGHT and a tuple is (height, width),
    numpy's and torch's order, so size="200x300" (200 wide, 300 high) and size=(300, 200) are the same box, and
    size=(200, 300) is 300 wide and 200 high. fit: "fill" (the default: exactly the box), "inside", "outside",
    "cover" (cropped at gravity) or "contain" (padded with zeros at gravity). gravity: "center" (default), "north",
    "southeast", ... The image's channels are never resampled: sizes and scales address height and width. mode,
    preset, antialias and rounding_direction as in resample. The result has the image's layout ((C, H, W) in,
    (C, H, W) out), and the types are resample's (float64 computed as float32, a float32 result). Pixels with
    their channels last, (1, H, W, C) or (H, W, C) with C = 1, 3 or 4 (as Pillow, OpenCV or imageio give them),
    are refused with a ValueError that says how to transpose them.
    """
    return _resize(image, size, fit, gravity, scales, mode, preset, antialias, rounding_direction, False, False, out,
                   threads, backend, device)


def thumbnail(image, size, fit=None, gravity=None, enlarge=False, mode=None, antialias=None, out=None, threads=0,
              backend="auto", device=0):
    """rsz thumbnail on an image: fitted within the box, aspect kept, only shrinking unless enlarge, antialiased.

    size: an integer N (an N x N box), "WxH" or any --size form (a suffix replaces the defaults), or (height, width):
    size="200x300" and size=(300, 200) are the same box (the string is width first, the tuple height first).
    fit: "inside" (default), "cover" (square thumbnails, cropped at gravity), "contain", "outside" or "fill". Types
    and layouts as in resize.
    """
    return _resize(image, size, fit, gravity, None, mode, None, antialias, None, True, bool(enlarge), out, threads,
                   backend, device)


def _resize(image, size, fit, gravity, scales, mode, preset, antialias, rounding_direction, thumb, enlarge, out,
            threads, backend, device):
    op = "thumbnail" if thumb else "resize"
    array, back = _image(image, op + ": image")
    squeeze = array.ndim == 3
    if squeeze:
        array = array[_np.newaxis]
    array_out = _as_out(out, op)
    if array_out is not None and array_out.ndim == 3:
        array_out = array_out[_np.newaxis]
    if size is None and scales is None and out is None:
        raise ValueError("%s: give size%s" % (op, "" if thumb else ", scales or out"))
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
    replication) or "linear" (RESAMPLE1 linear with scales factor and pixel-centre offsets). Types as in resample
    (float64 computed as float32, a float32 result).
    """
    array, back, array_out, exec_ = _tensor_call(x, out, "upsample2d", threads, backend, device)
    fh, fw = _pair(factor, "factor")
    if fh < 1 or fw < 1:
        raise ValueError("upsample2d: factor = (%d, %d); both must be >= 1" % (fh, fw))
    result = _rsz.upsample2d(array, array_out, fh, fw, mode, exec_)
    return _give_back(result, out, back)


def _numbers_of(value, name, allowed):
    """An argument of numbers as a numpy array: arrays and tensors through _as_array, nested lists through numpy."""
    if isinstance(value, _np.ndarray) or hasattr(value, "__dlpack__"):
        array = _as_array(value, name, allowed)[0]
    else:
        try:
            array = _np.asarray(value)
        except ValueError:  # ragged lists
            raise ValueError("%s is ragged (rows of different lengths); rows of 4 (or 5) numbers are needed"
                             % name) from None
    if array.dtype.kind not in "fiu":
        raise DTypeError("%s has dtype %s; %s" % (name, array.dtype.name, allowed))
    return array


def _box_table(rois, batch_indices, read=None, concat=None, stack=None, image_indices=None):
    """rois in any of its forms as (boxes (R, 4), batch indices or None): an (R, 4) array, torchvision's (R, 5)
    with the batch index first, a list of R boxes, or torchvision's list of (K_i, 4) boxes per image i. Read with
    numpy, or (_device_box_table) with the given functions: read(value, name), concat(parts), stack(parts) and
    image_indices(counts), the batch index of each box of images with `counts` boxes."""
    read = read or (lambda value, name: _numbers_of(value, name, _BOXES))
    concat = concat or _np.concatenate
    stack = stack or (lambda parts: _np.stack(parts) if parts else _np.zeros((0, 4), _np.float32))
    image_indices = image_indices or (lambda counts: _np.repeat(_np.arange(len(counts), dtype=_np.uint32), counts))
    if isinstance(rois, (list, tuple)):
        parts = [read(r, "roi_align: rois[%d]" % i) for i, r in enumerate(rois)]
        # torchvision's List[Tensor]: image i's boxes are rois[i] (an image without boxes may be an empty list).
        if any(p.ndim == 2 for p in parts) and all(p.ndim == 2 or tuple(p.shape) == (0,) for p in parts):
            parts = [p if p.ndim == 2 else p.reshape(0, 4) for p in parts]
            for i, p in enumerate(parts):
                if p.shape[1] != 4:
                    raise ValueError("roi_align: rois[%d] has shape %s; a list of boxes per image holds (K_i, 4) "
                                     "arrays, [x1, y1, x2, y2] for image i" % (i, tuple(p.shape)))
            if batch_indices is not None:
                raise ValueError("roi_align: rois is a list of boxes per image (its positions are the batch "
                                 "indices) and batch_indices is given; give one")
            return concat(parts), image_indices([p.shape[0] for p in parts])
        if any(p.ndim != 1 for p in parts):
            raise ValueError("roi_align: rois mixes shapes %s; give (R, 4) boxes, (R, 5) rows with the batch index "
                             "first, or one (K_i, 4) array per image" % sorted({tuple(p.shape) for p in parts}))
        boxes = stack(parts)
    else:
        boxes = read(rois, "roi_align: rois")
    if boxes.ndim == 2 and boxes.shape[1] == 5:
        if batch_indices is not None:
            raise ValueError("roi_align: rois has 5 columns (batch index first) and batch_indices is given; give one")
        return boxes[:, 1:], boxes[:, 0]
    return boxes, batch_indices


def roi_align(x, rois, batch_indices=None, output_size=None, reduction="average", mode="linear", spatial_scale=1.0,
              sampling_ratio=None, aligned=None, out_of_bounds_input_value=0.0, minimum_samples_per_output=1,
              maximum_samples_per_output=4294967295, input_pixel_offset=0.5, output_pixel_offset=-0.5,
              align_regions_to_corners=False, out=None, threads=0, backend="auto", device=0):
    """DirectML ROI_ALIGN (with the ROI_ALIGN1 extensions) on an (N, C, H, W) tensor; returns (R, C, OH, OW).

    x: types as in resample (float64 computed as float32, a float32 result).
    rois: (R, 4) boxes [x1, y1, x2, y2] in input pixels (times spatial_scale), torchvision's (R, 5) form with the
    batch index first, or torchvision's list form: one (K_i, 4) array or tensor per image i, the batch index of each
    box its list position, the results in list order (with either of these, batch_indices must be None). Float or
    integer coordinates, converted to x's float type (float32 for float64 and uint8/uint16 x; out's type when
    given). batch_indices: R integers (default all 0). output_size: an integer or (height, width).
    reduction: "average" or "max"; mode: "linear" or "nearest"; spatial_scale: one number or (x, y).
    Conveniences that map exactly (docs/SEMANTICS.md §5): sampling_ratio=k > 0 sets minimum and maximum samples per
    output to k (torchvision's sampling_ratio; k <= 0 keeps the adaptive default); aligned=False sets
    input_pixel_offset to 0 (torchvision's aligned=False, exactly for boxes at least 1 pixel wide after
    spatial_scale: torchvision widens smaller ones; aligned=True is the default offsets).
    """
    if output_size is None:
        raise ValueError("roi_align: output_size is required (an integer or (height, width))")
    oh, ow = _pair(output_size, "output_size")
    if isinstance(spatial_scale, _numbers.Number):
        scale_x = scale_y = float(spatial_scale)
    else:
        scale_x, scale_y = (float(v) for v in spatial_scale)
    lo, hi = int(minimum_samples_per_output), int(maximum_samples_per_output)
    if sampling_ratio is not None and sampling_ratio > 0:
        lo = hi = int(sampling_ratio)
    if aligned is False:
        input_pixel_offset = 0.0
    settings = (oh, ow, mode, reduction, scale_x, scale_y, float(out_of_bounds_input_value), lo, hi,
                float(input_pixel_offset), float(output_pixel_offset), bool(align_regions_to_corners))
    if _cuda_tensor(x):
        return _roi_align_device(x, rois, batch_indices, out, settings, threads, backend)
    array, back = _operand(x, "roi_align: x")
    if array.dtype.kind == "u" and array.ndim == 4:
        _refuse_channels_last(array, "roi_align: x")
    array_out = _as_out(out, "roi_align")
    boxes, batch_indices = _box_table(rois, batch_indices)
    # The boxes have the output's type: x's float type, float32 for image samples, or out's.
    box_type = array_out.dtype if array_out is not None else (_np.float32 if array.dtype.kind == "u" else array.dtype)
    if boxes.dtype != box_type:
        boxes = boxes.astype(box_type)
    count = boxes.shape[-2] if boxes.ndim >= 2 else 0
    if batch_indices is None:
        indices = _np.zeros(count, dtype=_np.uint32)
    else:
        raw = _numbers_of(batch_indices, "roi_align: batch_indices", _INDICES)
        if raw.dtype.kind == "f" and not _np.all(raw == _np.floor(raw)):
            raise ValueError("roi_align: batch_indices must be whole numbers")
        if raw.size and (raw.min() < 0 or raw.max() > 4294967295):
            raise ValueError("roi_align: batch_indices must be in [0, 2^32)")
        indices = raw.astype(_np.uint32)
    result = _rsz.roi_align(array, boxes, indices, array_out, *settings, _exec(threads, backend, device))
    return _give_back(result, out, back)


def _roi_align_device(x, rois, batch_indices, out, settings, threads, backend):
    """roi_align on a CUDA tensor: the boxes and batch indices (tensors on its device, or host numbers, copied
    there) in the forms the host call takes; the boxes' values are checked on the device, and the call waits for
    that check."""
    torch = _sys.modules["torch"]
    array = _device_arg(x, "roi_align: x")
    if _samples(array) and array.ndim == 4:
        _refuse_channels_last(array, "roi_align: x")
    array_out = _device_out(out, x, "roi_align")

    if _holds_cuda(rois):
        boxes, batch_indices = _device_box_table(rois, batch_indices, x.device)
    else:  # host numbers: read and checked as the host call reads them, then copied to the device
        boxes, batch_indices = _box_table(rois, batch_indices)
        boxes = torch.as_tensor(boxes).to(x.device)
    box_type = out.dtype if out is not None else (torch.float32 if _samples(array) else x.dtype)
    if str(box_type) == "torch.float64":
        box_type = torch.float32
    boxes = boxes.to(box_type)
    count = boxes.shape[-2] if boxes.ndim >= 2 else 0
    if batch_indices is None:
        indices = torch.zeros(count, dtype=torch.int32, device=x.device)
    elif _cuda_tensor(batch_indices):
        raw = _device_numbers(batch_indices, "roi_align: batch_indices", _INDICES, x.device)
        if raw.numel():
            if raw.dtype.is_floating_point:
                raw = raw.double()
                if bool((raw != torch.floor(raw)).any()):
                    raise ValueError("roi_align: batch_indices must be whole numbers")
            else:
                raw = raw.to(torch.int64)  # compared with 2^31 - 1 in a type that holds it
            if bool((raw < 0).any()) or bool((raw > 2147483647).any()):
                raise ValueError("roi_align: batch_indices must be in [0, 2^31) for a CUDA tensor")
        indices = raw.to(torch.int32)
    else:
        raw = _numbers_of(batch_indices, "roi_align: batch_indices", _INDICES)
        if raw.dtype.kind == "f" and not _np.all(raw == _np.floor(raw)):
            raise ValueError("roi_align: batch_indices must be whole numbers")
        if raw.size and (raw.min() < 0 or raw.max() > 2147483647):
            raise ValueError("roi_align: batch_indices must be in [0, 2^31) for a CUDA tensor")
        indices = torch.as_tensor(raw.astype(_np.int32)).to(x.device)
    # int32 holding values in [0, 2^31) has the bits of those values as uint32, the type the operator reads.
    index_arg = _rsz.DeviceArg(indices.data_ptr(), "uint32", list(indices.shape), list(indices.stride()),
                               x.device.index, indices)
    result = _rsz.roi_align(array, _device_arg(boxes, "roi_align: rois", _BOXES), index_arg, array_out, *settings,
                            _device_exec(threads, backend, x))
    return out if out is not None else result.owner


def _holds_cuda(value):
    """Whether a box argument is, or lists, CUDA tensors."""
    return _cuda_tensor(value) or (isinstance(value, (list, tuple)) and any(_cuda_tensor(v) for v in value))


def _device_numbers(value, name, allowed, device):
    """A box argument's numbers as a tensor on `device`: a tensor as it is, host numbers read as the host call reads
    them; types the host call refuses (bfloat16, bool, complex) refused alike."""
    torch = _sys.modules["torch"]
    if not isinstance(value, torch.Tensor):
        return torch.as_tensor(_numbers_of(value, name, allowed)).to(device)
    if value.dtype.is_complex or value.dtype in (torch.bool, torch.bfloat16) or not (
            value.dtype.is_floating_point or "int" in str(value.dtype)):
        raise DTypeError("%s has dtype %s; %s" % (name, value.dtype, allowed))
    return value.detach().to(device)


def _device_box_table(rois, batch_indices, device):
    """_box_table for boxes that are (or list) CUDA tensors, read with torch on `device`."""
    torch = _sys.modules["torch"]
    return _box_table(rois, batch_indices, read=lambda value, name: _device_numbers(value, name, _BOXES, device),
                      concat=torch.cat, stack=torch.stack,
                      image_indices=lambda counts: torch.repeat_interleave(torch.arange(len(counts), device=device),
                                                                           torch.tensor(counts, device=device)))


def _torchvision_boxes(boxes, op):
    """torchvision's boxes as (coordinates (K, 4), batch indices (K,)): a (K, 5) table with the batch index first,
    or a list (or tuple) of (L_i, 4) boxes per image i. Anything else is refused, a (K, 4) table too: torchvision
    refuses it, and rsz.roi_align would take it as boxes of image 0."""
    if isinstance(boxes, (list, tuple)):
        parts = []
        for i, part in enumerate(boxes):
            p = _numbers_of(part, "%s: boxes[%d]" % (op, i), _BOXES)
            if p.shape == (0,):  # an image without boxes, as an empty list
                p = p.reshape(0, 4)
            if p.ndim != 2 or p.shape[1] != 4:
                raise ValueError("%s: boxes[%d] has shape %s; a list of boxes holds one (L, 4) tensor per image, "
                                 "[x1, y1, x2, y2] for image i" % (op, i, tuple(p.shape)))
            parts.append(p)
        coordinates = _np.concatenate(parts) if parts else _np.zeros((0, 4))
        indices = _np.repeat(_np.arange(len(parts), dtype=_np.uint32), [len(p) for p in parts])
        return coordinates, indices
    table = _numbers_of(boxes, "%s: boxes" % op, _BOXES)
    if table.ndim != 2 or table.shape[1] != 5:
        raise ValueError("%s: boxes has shape %s; torchvision's forms are a (K, 5) tensor, [batch index, x1, y1, x2, "
                         "y2], or a list of (L, 4) tensors, one per image (rsz.roi_align takes (K, 4) boxes with "
                         "batch_indices)" % (op, tuple(table.shape)))
    return table[:, 1:], table[:, 0]


def torchvision_roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """torchvision.ops.roi_align's drop-in: its signature, defaults and results, on rsz's ROI_ALIGN.

    Code written for torchvision keeps its meaning here: the third positional is output_size and aligned defaults
    to False (torchvision's legacy form). rsz.roi_align is DirectML's operator instead: its third positional is
    batch_indices and its default is aligned=True (DirectML's half-pixel offsets), so the same call there gives other
    values.

    input: (N, C, H, W), a torch CPU tensor or numpy array (types as in resample: float64 is computed as float32
    and gives float32). boxes: a (K, 5) tensor or array, [batch index, x1, y1, x2, y2], or a list of (L_i, 4)
    tensors or arrays, one per image i. output_size: an integer or (height, width). spatial_scale: one number.
    sampling_ratio: k > 0 samples per bin and axis, k <= 0 adaptive (ceil(box size / output size)). Returns (K, C,
    OH, OW) of the input's kind (a torch tensor for a torch input).

    It gives rsz.roi_align(input, boxes, output_size=output_size, spatial_scale=spatial_scale,
    sampling_ratio=sampling_ratio, aligned=aligned)'s values, the mapping of docs/SEMANTICS.md §5, plus
    torchvision's two rules for small boxes that rsz.roi_align does not have: with aligned=False a box narrower or
    lower than 1 pixel after spatial_scale is widened to 1 pixel from its x1 (y1), and with aligned=True and
    adaptive sampling a box of zero or negative width or height gives zeros (no samples). The box corners are
    scaled and shifted as torchvision does it (box * spatial_scale - 0.5 with aligned=True), so the adaptive sample
    counts are torchvision's even where a box's extent is a whole multiple of the output size.
    """
    op = "torchvision_roi_align"
    array, back = _operand(input, op + ": input")
    coordinates, indices = _torchvision_boxes(boxes, op)
    if isinstance(spatial_scale, bool) or not isinstance(spatial_scale, _numbers.Real):
        raise ValueError("%s: spatial_scale = %r; one number is needed" % (op, spatial_scale))
    if isinstance(sampling_ratio, bool) or not isinstance(sampling_ratio, _numbers.Integral):
        raise ValueError("%s: sampling_ratio = %r; an integer is needed (<= 0: adaptive)" % (op, sampling_ratio))
    aligned = bool(aligned)
    # The box corners in input pixels as torchvision computes them, in the type rsz.roi_align computes them in (x's
    # float type, float32 for image samples): box * spatial_scale, minus 0.5 with aligned=True, each rounded. The
    # half pixel of aligned=True is rsz.roi_align's input_pixel_offset 0.5 (its aligned=True), which subtracts it
    # from every sample instead; subtracted from the corners, the box's extent (and so its adaptive sample count)
    # is torchvision's to the last bit, so the boxes go to rsz.roi_align shifted, with aligned=False
    # (input_pixel_offset 0) and spatial_scale 1.
    box_type = array.dtype if array.dtype.kind == "f" else _np.dtype(_np.float32)
    one = box_type.type(1)
    with _np.errstate(invalid="ignore", over="ignore"):
        corners = (coordinates.astype(box_type) * box_type.type(spatial_scale)
                   - box_type.type(0.5 if aligned else 0.0)).astype(box_type)
        width = corners[:, 2] - corners[:, 0]
        height = corners[:, 3] - corners[:, 1]
        if not aligned:
            # torchvision: roi_width = max(x2 - x1, 1) from x1, likewise the height. x1 + 1 is not always exact,
            # and an extent of 1 + 1 ulp takes 2 adaptive samples instead of 1: where it is not, x1 becomes
            # x2 - 1 (exact), for an extent of exactly 1.
            for lo, hi, narrow in ((0, 2, width < one), (1, 3, height < one)):
                corners[narrow, hi] = corners[narrow, lo] + one
                inexact = narrow & (corners[:, hi] - corners[:, lo] != one)
                corners[inexact, lo] = corners[inexact, hi] - one
    result = roi_align(array, corners, indices, output_size=output_size, spatial_scale=1.0,
                       sampling_ratio=int(sampling_ratio), aligned=False)
    if aligned and sampling_ratio <= 0:
        # torchvision: ceil(extent / output size) <= 0 samples per bin for an empty or inverted box: every bin 0.
        result[(width <= 0) | (height <= 0)] = 0
    return _give_back(result, None, back)


def _path(path, op):
    """A path argument as text: str, bytes or os.PathLike, refused when it holds a NUL byte (the C library would cut
    the name there and read or write another file than the one named)."""
    text = _os.fsdecode(path)
    if "\0" in text:
        raise ValueError("%s: path %r has a NUL byte; file names cannot hold one" % (op, text))
    return text


def shard_key(path, root=None):
    """The key rsz shards an input by (rsz --shard I/N, rsz plan): its path below the folder `root` without extension,
    '/'-separated ("cats/a" for root/cats/a.jpg), or the file's stem without `root` or outside it, as for a file
    given to -i by name. Paths are str, bytes or os.PathLike; the key is a str (bytes that are not UTF-8 as
    os.fsdecode gives them)."""
    path = _os.fsencode(_path(path, "shard_key"))
    root = b"" if root is None else _os.fsencode(_path(root, "shard_key"))
    return _os.fsdecode(_rsz.shard_key(path, root))


def shard_of(path, shards, root=None):
    """The shard, 0 to shards - 1, that rsz --shard I/N and rsz plan give the input `path` (with `root` as for
    shard_key): FNV-1a 64 of its key's bytes modulo `shards`. The same on every machine and stable as inputs are
    added, so a Dask, Ray or multiprocessing job can route the inputs of a folder as a Slurm array of rsz would:
    [p for p in paths if rsz.shard_of(p, 16, root="photos") == i]."""
    if isinstance(shards, bool) or not isinstance(shards, _numbers.Integral) or shards < 1:
        raise ValueError("shard_of: shards=%r is not allowed; a whole number >= 1 is" % (shards,))
    return int(_rsz.shard_of(_os.fsencode(shard_key(path, root)), int(shards)))


class CommandError(ValueError):
    """A command that rsz refused before running anything (the command line's exit status 2: a flag, a plan or a
    parameter that is not allowed): the message is rsz's own line. .code names the kind of problem
    ("invalid_argument", "io", "format", ...), .status is the exit status (2) and .stderr everything rsz said."""

    def __init__(self, message, status, stderr, code="invalid_argument"):
        super().__init__(message)
        self.status = status
        self.stderr = stderr
        self.code = code


class RunError(RuntimeError):
    """rsz.run(..., check=True): the run ended with status 1. .status is it, .report the whole Report (what was
    written stays written). InputError, its subclass, is raised when inputs failed; RunError itself when something
    else did (a manifest or a .tar part that could not be written: the message is rsz's line)."""

    def __init__(self, message, report):
        super().__init__(message)
        self.status = report.status
        self.report = report


class InputError(RunError):
    """rsz.run(..., check=True): an input failed (unreadable, corrupt, over a limit) while the others ran.
    .input is the first failed input, .code the kind of failure ("io", "format", "invalid_shape",
    "invalid_argument", "invalid_data_type", "internal"), .message rsz's line for it, .failures every failure record
    and .report the whole Report (what was written stays written)."""

    def __init__(self, report):
        first = report.failures[0]
        more = len(report.failures) - 1
        super().__init__(first["error"] + ("" if more == 0 else " (and %d more failed input%s)"
                                           % (more, "" if more == 1 else "s")), report)
        self.input = first["input"]
        self.code = first["code"]
        self.message = first["error"]
        self.failures = report.failures


class Report:
    """What rsz.run did: .status (0 done, 1 some input failed), .records (one dict per output written, kept, planned
    or failed input, as `rsz ... --json` prints them), .outputs (the files written, in order), .failures (the failed
    inputs' records: input, error, code; a "warning" record names an input that still ran), and the counts .jobs,
    .written, .failed, .skipped, .kept; .not_read counts
    the files in the input folders that no codec reads (.not_read_files names the first 1000); .messages holds the
    lines rsz said (without "rsz: ")."""

    def __init__(self, result):
        self.status = result["status"]
        self.records = result["records"]
        for name in ("jobs", "written", "failed", "skipped", "kept", "not_read", "not_read_files"):
            setattr(self, name, result[name])
        self.failures = [r for r in self.records if "error" in r]
        # Outputs planned but not written although their inputs ran (a .tar part, a manifest): output, not_written
        # (rsz's line), code.
        self.unwritten = [r for r in self.records if "not_written" in r]
        # The files written, in the order of the inputs; a .tar output's parts once each.
        written = [r["output"] for r in self.records if "shape" in r and not r.get("dry_run")]
        self.outputs = list(dict.fromkeys(written))
        self.messages = list(result["messages"])

    def __repr__(self):
        return "<rsz.Report status=%d written=%d failed=%d skipped=%d>" % (self.status, self.written, self.failed,
                                                                          self.skipped)


def _word(value, op):
    """One word of a command line as bytes: paths (str, bytes, os.PathLike) as os.fsencode gives them, numbers as
    text."""
    if isinstance(value, (str, bytes, _os.PathLike)):
        return _os.fsencode(_path(value, op))
    if isinstance(value, bool) or not isinstance(value, (_numbers.Real, _numbers.Integral)):
        raise ValueError("%s: %r is not allowed in a command line; paths, text and numbers are" % (op, value))
    return str(value).encode()


def _flag_words(flags, op):
    """Keyword arguments as flags: size=256 is --size 256, enlarge=True is --enlarge (False and None leave a flag out),
    a list or tuple repeats the flag for each item; '_' in a name is '-' (skip_existing=True is --skip-existing).
    A run-level setting's value is checked against its row of run_settings() first (strict=1 is refused: a bool
    setting takes True or False)."""
    words = []
    for name, value in flags.items():
        setting = _SETTINGS_BY_KEY.get(name)
        if setting is not None and value is not None:
            _check_setting(setting, value, op)
        flag = ("--" + name.replace("_", "-")).encode()
        if value is None or value is False:
            continue
        if value is True:
            words.append(flag)
        elif isinstance(value, (list, tuple)):
            for item in value:
                words += [flag, _word(item, op)]
        else:
            words += [flag, _word(value, op)]
    return words


def _check_setting(setting, value, op):
    kind = setting["kind"]
    if kind == "bool" and not isinstance(value, bool):
        raise ValueError("%s: %s=%r is not allowed; True or False is" % (op, setting["key"], value))
    if kind == "int" and (isinstance(value, bool) or not isinstance(value, _numbers.Integral)
                          or not setting["min"] <= value <= setting["max"]):
        raise ValueError("%s: %s=%r is not allowed; a whole number from %d to %d is"
                         % (op, setting["key"], value, setting["min"], setting["max"]))
    if kind == "choice" and str(value) not in setting["choices"]:
        raise ValueError("%s: %s=%r is not allowed; one of %s is" % (op, setting["key"], value,
                                                                     ", ".join(setting["choices"])))


def _refused(result, op):
    """CommandError for a run rsz refused before running anything (status 2): its code and message."""
    message = result["error"] if result["error"] is not None else "a usage error"
    code = result["code"] if result["code"] is not None else "invalid_argument"
    said = "".join("rsz: %s\n" % line for line in result["messages"])
    return CommandError("%s: %s" % (op, message), 2, said, code)


def _accepted(result, op):
    """The result of a call into rsz, or CommandError for a request rsz refused before running anything (status
    2)."""
    if result["status"] == 2:
        raise _refused(result, op)
    return result


def _run_command(words, op, quiet, inputs_below=None, keep_records=False):
    """Runs rsz's command line in this process (as the rsz program would, with the same checks, outputs and exit
    statuses): for merge, and for a job given command-line words (run(..., *args)). Returns its result (a dict:
    status, counts, records, failures, messages, stdout) and raises CommandError, with rsz's code and message, for a
    refusal (exit status 2)."""
    below = b"" if inputs_below is None else _os.fsencode(_path(inputs_below, op))
    return _accepted(_rsz.cli(words, below, bool(quiet), bool(keep_records)), op)


def _text(value, op, name):
    """A keyword's value as its flag's text (bytes): paths as os.fsencode gives them, numbers as text, a list or tuple
    as its items joined by ','."""
    if isinstance(value, (list, tuple)):
        return b",".join(_text(item, op, name) for item in value)
    if isinstance(value, (str, bytes, _os.PathLike)):
        return _os.fsencode(_path(value, op))
    if isinstance(value, bool) or not isinstance(value, (_numbers.Real, _numbers.Integral)):
        raise ValueError("%s: %s=%r is not allowed; paths, text and numbers are" % (op, name, value))
    return str(value).encode()


def _request(command, flags, op):
    """The keywords of a job as the library's request takes them: the command's own options (size=256, fit="cover",
    enlarge=True) and the run-level settings (quality=85, shrink_on_load=True), each by key with its flag's text.
    True is the flag given; False and None leave it out. A run-level setting's value is checked against its row of
    run_settings() first (strict=1 is refused: a bool setting takes True or False)."""
    known = _COMMAND_OPTIONS.get(command, {})
    options, settings = {}, {}
    for name, value in flags.items():
        if value is None or value is False:
            continue
        setting = _SETTINGS_BY_KEY.get(name)
        option = known.get(name)
        if setting is not None:
            _check_setting(setting, value, op)
        elif option is not None and option["kind"] == "bool" and value is not True:
            raise ValueError("%s: %s=%r is not allowed; True or False is" % (op, name, value))
        text = b"true" if value is True else _text(value, op, name)
        # A key that is neither goes to the command's options (or a batch's settings), which name what is allowed.
        (settings if setting is not None or (option is None and command == "run") else options)[name] = text
    return options, settings


def _run_request(command, flags, op, inputs=(), output=None, quiet=True, root=None, keep_records=True):
    """Runs a job through the library (rsz::pipeline::run): the command, its options and settings by key; no
    command-line words. Returns its result dict; raises CommandError for a refusal (nothing was written)."""
    return _accepted(_rsz.run_request(*_request_args(command, flags, op, inputs, output, root), bool(quiet),
                                      bool(keep_records)), op)


def _request_args(command, flags, op, inputs, output, root):
    """The library request's arguments (_rsz.run_request, _rsz.plan_request) of a job given by keywords."""
    options, settings = _request(command, flags, op)
    if command == "run":
        options = {"batch": _text(inputs[0], op, "inputs")}
        inputs = []
    below = b"" if root is None else _os.fsencode(_path(root, op))
    return (command, options, settings, [_os.fsencode(_path(i, op)) for i in inputs],
            b"" if output is None else _os.fsencode(_path(output, op)), below)


def _command_name(command, op):
    if not isinstance(command, str) or not command or command.startswith("-"):
        raise ValueError("%s: command=%r is not allowed; a command such as \"thumbnail\", \"resample\", "
                         "\"upsample\", \"roi-align\" or \"run\" is" % (op, command))
    return command.encode()


def plan(inputs, state, shards, recursive=False, hidden=False):
    """Lists the inputs once and splits them into `shards` shard lists in the folder `state`, as `rsz plan -i INPUTS
    --shards N -o STATE` does (a new or empty folder); returns the plan (plan.json: shards, total, counts, ...).
    inputs: a file, folder or pattern, or a list of them. Each shard then runs with rsz.run_shard(state, i, ...) or
    `rsz COMMAND --plan STATE --shard I`, on any machine that sees the same paths."""
    if isinstance(shards, bool) or not isinstance(shards, _numbers.Integral) or shards < 1:
        raise ValueError("plan: shards=%r is not allowed; a whole number >= 1 is" % (shards,))
    if isinstance(inputs, (str, bytes, _os.PathLike)):
        inputs = [inputs]
    for name, value in (("recursive", recursive), ("hidden", hidden)):
        if not isinstance(value, bool):
            raise ValueError("plan: %s=%r is not allowed; True or False is" % (name, value))
    result = _rsz.plan([_os.fsencode(_path(item, "plan")) for item in inputs], _os.fsencode(_path(state, "plan")),
                       int(shards), recursive, hidden)
    if result["status"] != 0:
        raise _refused(result, "plan")
    with open(_os.path.join(_path(state, "plan"), "plan.json"), "rb") as f:
        return _json.load(f)


def run_shard(state, shard, command, *args, quiet=True, **flags):
    """Runs shard `shard` of the plan in `state` in this process, as `rsz COMMAND ARGS... --plan STATE --shard I`
    does, and returns its marker (STATE/done/NNNNN.json: inputs, outputs, written, kept, skipped, failed, status,
    seconds, ...) with "messages", the lines rsz said.

    Idempotent, so a pool or a scheduler may run it again: a finished shard returns its marker at once, a shard
    stopped midway (a worker killed) goes on where it stopped, and a shard run with other parameters than the plan's
    first is refused (CommandError). Flags come as words (*args) or keywords (size=256 is --size 256, enlarge=True
    is --enlarge, '_' is '-'):

        rsz.run_shard("state", 3, "thumbnail", size=256, output="thumbs/{relpath}{ext}")

    An input that fails (corrupt, unreadable) does not raise: the marker's "failed" counts it and "messages" says
    why. quiet=False lets rsz write its progress and summary on stderr as the program does.

    Each call is a run of its own, the GIL released while it works: calls of several Python threads run at once and
    share nothing (their inputs' keys, plans, counts and messages stay apart). Each uses jobs=N threads (by default
    every CPU the process may use) from one pool, so a Dask worker with one thread (threads_per_worker=1) already
    gets rsz's cores; more threads gain little.
    """
    if isinstance(shard, bool) or not isinstance(shard, _numbers.Integral) or shard < 0:
        raise ValueError("run_shard: shard=%r is not allowed; a shard number >= 0 is" % (shard,))
    command = _command_name(command, "run_shard").decode()
    if args:
        words = [command.encode()] + [_word(a, "run_shard") for a in args] + _flag_words(flags, "run_shard")
        words += [b"--plan", _word(state, "run_shard"), b"--shard", str(int(shard)).encode()]
        if quiet:
            words.append(b"--quiet")
        result = _run_command(words, "run_shard", quiet)
    else:
        flags = dict(flags, plan=state, shard=str(int(shard)))
        output = flags.pop("output", None)
        if command == "run":
            raise ValueError("run_shard: command=\"run\" needs its batch file: give it as a word "
                             "(rsz.run_shard(state, i, \"run\", \"batch.json\"))")
        result = _run_request(command, flags, "run_shard", output=output, quiet=quiet, keep_records=False)
    status = result["status"]
    marker = _os.path.join(_path(state, "run_shard"), "done", "%05d.json" % int(shard))
    try:
        with open(marker, "rb") as f:
            done = _json.load(f)
    except OSError:
        raise RuntimeError("run_shard: shard %d ended with status %d and wrote no marker (%s): %s"
                           % (shard, status, marker, "; ".join(result["messages"]))) from None
    done["messages"] = list(result["messages"])
    return done


def map_paths(paths, command, *args, root=None, quiet=True, **flags):
    """Runs COMMAND over exactly the inputs `paths` in this process, as `rsz COMMAND -i PATH... ARGS... --json`
    does, and returns its records: one dict per output written (input, output, shape, ...), one per failed input
    (input, error, code), and one per output planned but not written although its inputs ran (a .tar part whose
    input failed: output, not_written, code; it names no input). For dask.bag's map_partitions, which hands each call a partition (a list of paths; its own
    keywords go to dask, which takes output= itself, so bind rsz's with functools.partial):

        thumbs = functools.partial(rsz.map_paths, root="/data/photos", size=256,
                                   output="/data/thumbs/{relpath}{ext}")
        records = dask.bag.from_sequence(paths, npartitions=64).map_partitions(thumbs, "thumbnail").compute()

    root: the folder the paths are below; their {relpath}, {dir} and shard keys are their path below it, as if
    `-i root -r` had found them (without it, a path's name alone). A single path (str, bytes or os.PathLike) is
    one input, as a list of one. Flags as for run_shard. Outputs are written
    whole or not at all, so a partition run again (a worker lost) writes the same bytes (skip_existing=True skips
    the outputs that exist instead). Calls of several threads run at once, as run_shard's.
    """
    if isinstance(paths, (str, bytes, _os.PathLike)):  # one path, not the characters of its name
        paths = [paths]
    paths = list(paths)
    if not paths:
        return []
    _refuse_streams(paths, flags.get("output"), "map_paths")
    command = _command_name(command, "map_paths").decode()
    if args:
        words = [command.encode()] + [_word(a, "map_paths") for a in args] + _flag_words(flags, "map_paths")
        for path in paths:
            words += [b"-i", _word(path, "map_paths")]
        if quiet:
            words.append(b"--quiet")
        return _run_command(words, "map_paths", quiet, inputs_below=root, keep_records=True)["records"]
    flags = dict(flags)
    output = flags.pop("output", None)
    return _run_request(command, flags, "map_paths", paths, output, quiet, root)["records"]


_JOB_COMMANDS = ("resample", "thumbnail", "upsample", "roi-align", "run")


def _job_inputs(command, inputs, output, root, op):
    """A job's inputs as a list, checked as run and plan_job take them."""
    if command not in _JOB_COMMANDS:
        raise ValueError("%s: command=%r is not allowed; one of %s is (plan, merge and info have functions of "
                         "their own)" % (op, command, ", ".join(_JOB_COMMANDS)))
    if isinstance(inputs, (str, bytes, _os.PathLike)):
        inputs = [inputs]
    inputs = [] if inputs is None else list(inputs)
    _refuse_streams(inputs, output, op)
    if command == "run":
        if len(inputs) != 1:
            raise ValueError("%s: the \"run\" command takes one batch file as inputs, not %d" % (op, len(inputs)))
        if root is not None:
            raise ValueError("%s: root= names the inputs of a command; a batch file names its own" % op)
    return inputs


def _checked(report, command, check):
    if check and report.failures:
        raise InputError(report)
    if check and report.status != 0:
        last = report.messages[-1] if report.messages else "no message"
        raise RunError("%s: %s" % (command, last), report)
    return report


class Plan:
    """A job planned by rsz.plan_job and not yet run: every input listed and its header read, every output named and
    checked, each resize call made; nothing written.

    .report: the plan as a Report whose records are what `rsz ... --dry-run --json` prints (one per output: input,
    output, shape, dtype, "dry_run": True and the resize call; one per input that cannot run: input, error, code),
    with .jobs, .failed, .status (0, or 1 when some input cannot run) and .messages.
    .run(check=True): runs the plan once, as planned (the inputs are not listed or read for planning again), and
    returns its Report as rsz.run does (InputError / RunError with check=True)."""

    def __init__(self, handle, result, command):
        self._handle = handle
        self._command = command
        self.report = Report(result)

    @property
    def runnable(self):
        """Whether .run() would run jobs: not run yet and not a dry run."""
        return self._handle.runnable

    def run(self, check=True):
        result = _accepted(_rsz.run_plan(self._handle), self._command)
        return _checked(Report(result), self._command, check)

    def __repr__(self):
        return "<rsz.Plan %s jobs=%d failed=%d%s>" % (self._command, self.report.jobs, self.report.failed,
                                                     "" if self.runnable else " (not runnable)")


def plan_job(command, inputs=None, output=None, quiet=True, root=None, **flags):
    """Plans a job over files as rsz.run would run it, and returns the Plan without running it: look at what it
    would write, then run it.

        plan = rsz.plan_job("thumbnail", "photos/", "thumbs/", size=256)
        for r in plan.report.records:   # {"input", "output", "shape", "dtype", "dry_run": True, "resize": {...}}
            ...
        report = plan.run()

    Arguments as for rsz.run, by keyword only (no command-line words). A request rsz refuses raises CommandError
    (.code, message); an input that cannot run is a record of the plan's report (and fails again when it runs). A
    plan of a shard (plan=..., shard=...) or of a batch file (command "run") is planned again when it runs: a shard
    is claimed then."""
    inputs = _job_inputs(command, inputs, output, root, "plan_job")
    handle, result = _rsz.plan_request(*_request_args(command, flags, command, inputs, output, root), bool(quiet),
                                       True)
    return Plan(handle, _accepted(result, command), command)


def run(command, inputs=None, output=None, *args, check=True, quiet=True, root=None, **flags):
    """Runs a job over files in this process, as `rsz COMMAND -i INPUTS -o OUTPUT ARGS...` does, and returns its
    Report: the records of every output written (input, output, shape, dtype, seconds) and every failed input
    (input, error, code), the counts, the status.

        report = rsz.run("thumbnail", "photos/", "thumbs/", size=256, shrink_on_load=True)
        report.outputs   # ['thumbs/a.jpg', ...]

    command: "resample", "thumbnail", "upsample", "roi-align", or "run" (then `inputs` is the batch file).
    inputs: a file, folder or quoted pattern, or a list of them (None for roi-align annotations that name their
    images). output: a file, folder or name template, as -o takes it. Flags as for run_shard (size=256 is --size 256,
    recursive=True is --recursive, '_' is '-'); root as for map_paths.

    check=True (the default) raises InputError, carrying the failed input, its code and message and the whole
    report, when an input failed (the other inputs' outputs are written); check=False returns the report, whose
    .status is then 1. A request rsz refuses before running anything raises CommandError (.code, message); nothing
    is written then. Calls of several threads run at once, as run_shard's.
    """
    inputs = _job_inputs(command, inputs, output, root, "run")
    if args:  # command-line words: the command line reads them
        words = [command.encode()]
        if command == "run":
            words.append(_word(inputs[0], "run"))
        else:
            for item in inputs:
                words += [b"-i", _word(item, "run")]
        if output is not None:
            words += [b"-o", _word(output, "run")]
        words += [_word(a, "run") for a in args]
        words += _flag_words(flags, "run")
        if quiet:
            words.append(b"--quiet")
        result = _run_command(words, command, quiet, inputs_below=root, keep_records=True)
    else:
        result = _run_request(command, flags, command, inputs, output, quiet, root)
    return _checked(Report(result), command, check)


def _refuse_streams(inputs, output, op):
    """Standard input and output are the command line's (-i -, -o -): in a Python process they are not files."""
    if any(_os.fsencode(i) == b"-" for i in inputs if isinstance(i, (str, bytes, _os.PathLike))):
        raise ValueError("%s: \"-\" (standard input) is the command line's; give files" % op)
    if isinstance(output, (str, bytes, _os.PathLike)) and _os.fsencode(output) == b"-":
        raise ValueError("%s: output=\"-\" (standard output) is the command line's; give a file or folder" % op)


def merge(state, clean=False):
    """Checks every shard of the plan in `state` as `rsz merge STATE --json` does and returns its report: shards,
    done, missing, failed, "rerun" (the shards to run again in Slurm's --array syntax, "" when none), the totals,
    the joined manifests. clean=True removes the temporary files killed runs left (rsz merge --clean)."""
    if not isinstance(clean, bool):
        raise ValueError("merge: clean=%r is not allowed; True or False is" % (clean,))
    return _json.loads(_accepted(_rsz.merge(_word(state, "merge"), clean), "merge")["json"])


def info(path, exif=True, max_pixels=1 << 28):
    """What an image or .npy file holds, from its header alone (nothing decoded), as rsz info says it.

    Images: a dict of width, height, channels, bit_depth and format ("png", "jpeg", "tiff", ...), the size upright
    unless exif=False. .npy files: a dict of shape (a tuple) and dtype ("float32", ...).
    """
    path = _path(path, "info")
    if path.lower().endswith(".npy"):
        array = _np.load(path, mmap_mode="r")
        return {"shape": tuple(array.shape), "dtype": str(array.dtype)}
    return _rsz.image_info(path, bool(exif), int(max_pixels))


def read_image(path, dtype="float32", alpha="premultiplied", exif=True, max_pixels=1 << 28):
    """An image file as a (1, C, H, W) tensor, with the CLI's rules.

    dtype "float32" or "float16": samples p become p / (2^bits - 1); with alpha="premultiplied" (the CLI's default)
    colour is multiplied by alpha, "straight" keeps them apart. dtype "uint": the decoded uint8 / uint16 samples
    themselves, as a strided view of the interleaved pixels (no copy), which every operator reads as p / (2^bits - 1)
    and write_image writes back as they are. exif: apply the JPEG EXIF orientation. Images over max_pixels are
    refused from their header.
    """
    return _rsz.read_image(_path(path, "read_image"), dtype, alpha, bool(exif), int(max_pixels))


def write_image(path, image, bit_depth=None, alpha=None, quality=0, png_compression=-1, lossless=False):
    """Writes a (1, C, H, W) or (C, H, W) image as a file; the extension picks the format (channels last, as
    Pillow or OpenCV give pixels, are refused with a ValueError that says how to transpose them, as in resize).

    image: float32 / float16 values in [0, 1] (float64 is converted to float32), rounded to bit_depth (8, the
    default, or 16) bits, saturated, with alpha as in read_image ("premultiplied" by default); or uint8 / uint16
    samples, as read_image(..., dtype="uint") gives them, written as they are (bit_depth defaults to theirs, and
    alpha to "straight": decoded samples are not premultiplied). quality: JPEG / WebP 1..100 (0: JPEG 95, WebP 80;
    WebP is lossy unless lossless=True). png_compression: zlib level 0..9 (-1: rsz's fast default). The file is written atomically (a
    temporary file renamed over the target).
    """
    path = _path(path, "write_image")
    array, _ = _image(image, "write_image: image")
    if array.ndim == 3:
        array = array[_np.newaxis]
    if array.dtype.kind == "u":
        depth = 8 * array.dtype.itemsize
        bit_depth = depth if bit_depth is None else bit_depth
        alpha = "straight" if alpha is None else alpha
        # As the values p / (2^depth - 1) they stand for: float32 holds them closely enough that rounding to
        # `depth` bits gives every p back, so the file holds the samples themselves.
        array = array.astype(_np.float32) / _np.float32((1 << depth) - 1)
    bit_depth = 8 if bit_depth is None else bit_depth
    alpha = "premultiplied" if alpha is None else alpha
    _rsz.write_image(path, array, int(bit_depth), alpha, int(quality), int(png_compression), bool(lossless))
