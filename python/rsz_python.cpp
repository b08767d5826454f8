// _rsz: the C++ half of the Python module (python/rsz/__init__.py is the other half: argument conveniences and
// DLPack). Arrays become tensor views of their own memory: any strides, no conversion, no contiguous copy. The GIL is
// released while a kernel or codec runs; rsz::Error becomes ValueError with rsz's message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "report_json.h"
#include "rsz/error.h"
#include "rsz/io/config.h"
#include "rsz/io/naming.h"
#include "rsz/io/image.h"
#include "rsz/io/ops.h"
#include "rsz/io/resize.h"
#include "rsz/io/run_settings.h"
#include "rsz/pipeline.h"
#include "rsz/pipeline/commands.h"
#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"

namespace py = pybind11;

namespace rsz::python {
namespace {

[[noreturn]] void value_error(const std::string& message) { throw py::value_error(message); }

// The rsz data type of an array: float32, float16, uint8 / uint16 (unorm8 / unorm16: image samples p standing for
// p / (2^b - 1)), uint32 (batch indices).
DataType data_type(const py::array& a, const std::string& name) {
  const py::dtype dt = a.dtype();
  if (!dt.attr("isnative").cast<bool>()) {
    value_error(name + " has dtype " + py::str(dt.attr("str")).cast<std::string>() +
                ", not in this machine's byte order; convert it first (x.astype(x.dtype.newbyteorder('=')))");
  }
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f' && size == 4) return DataType::Float32;
  if (kind == 'f' && size == 2) return DataType::Float16;
  if (kind == 'u' && size == 1) return DataType::UNorm8;
  if (kind == 'u' && size == 2) return DataType::UNorm16;
  if (kind == 'u' && size == 4) return DataType::UInt32;
  value_error(name + " has dtype " + dt.attr("name").cast<std::string>() +
              "; float32 or float16 is needed (uint8 / uint16 image samples as inputs)");
}

struct Layout {
  DataType type;
  Dims sizes;
  Dims strides;  // in elements
};

Layout layout_of(const py::array& a, const std::string& name) {
  Layout l{data_type(a, name), {}, {}};
  const auto item = static_cast<py::ssize_t>(a.itemsize());
  if (reinterpret_cast<std::uintptr_t>(a.data()) % static_cast<std::uintptr_t>(item) != 0) {
    value_error(name + " is not aligned to its element size; pass a copy (numpy.ascontiguousarray)");
  }
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    // An axis of one element (or none) is never stepped along: its stride does not matter.
    const py::ssize_t stride = a.shape(i) <= 1 ? 0 : a.strides(i);
    if (stride < 0 || stride % item != 0) {
      value_error(name + " has a byte stride of " + std::to_string(stride) + " on axis " + std::to_string(i) +
                  "; strides must be non-negative multiples of the element size (pass a copy, e.g. "
                  "numpy.ascontiguousarray)");
    }
    l.sizes.push_back(a.shape(i));
    l.strides.push_back(stride / item);
  }
  return l;
}

ConstTensorView const_view(const py::array& a, const std::string& name) {
  const Layout l = layout_of(a, name);
  return ConstTensorView(a.data(), l.type, l.sizes, l.strides);
}

TensorView mutable_view(py::array& a, const std::string& name) {
  if (!a.writeable()) value_error(name + " is read-only; an output array must be writeable");
  const Layout l = layout_of(a, name);
  return TensorView(a.mutable_data(), l.type, l.sizes, l.strides);
}

// The float type of an operator's output for an input of `type`: the input's, float32 for image samples.
DataType result_type(DataType type) {
  return type == DataType::UNorm8 || type == DataType::UNorm16 ? DataType::Float32 : type;
}

py::dtype numpy_dtype(DataType type) {
  switch (type) {
    case DataType::Float32: return py::dtype("float32");
    case DataType::Float16: return py::dtype("float16");
    case DataType::UNorm8: return py::dtype("uint8");
    case DataType::UNorm16: return py::dtype("uint16");
    case DataType::UInt32: return py::dtype("uint32");
  }
  return py::dtype("float32");
}

// The output: `out` as given (checked), or a new packed array of `sizes` and `type`. The operator checks the rest.
py::array output_array(const std::optional<py::array>& out, const Dims& sizes, DataType type, const char* op) {
  if (!out) return py::array(numpy_dtype(type), std::vector<py::ssize_t>(sizes.begin(), sizes.end()));
  const Layout l = layout_of(*out, "out");
  if (l.sizes != sizes) {
    value_error(std::string(op) + ": out has shape " + dims_to_string(l.sizes) + "; " + dims_to_string(sizes) +
                " is needed");
  }
  return *out;
}

// An enum keyword (mode=, reduction=, rounding_direction=) read as its config field's text is, through the operator
// spec table (rsz/io/ops.h): the same spellings, the refusal naming the keyword. None leaves the field unset.
template <typename Config>
void set_keyword(Config& config, const char* key, const std::optional<std::string>& text, const std::string& what) {
  if (text) io::set_field(config, key, *text, what);
}

// threads, backend ("auto", "cpu", "reference" or "cuda": numpy arrays are in host memory, so cuda copies them to
// the GPU and the results back) and device: the call's ExecOptions.
// For CUDA device tensors (rsz/__init__.py hands them in as DeviceArg): `stream`, the caller's current CUDA stream
// (torch's), which the call is queued on; `allocate(shape, dtype, zero)`, which makes an output on the tensors'
// device (torch.empty or torch.zeros) and returns it as a DeviceArg.
struct Exec {
  int threads;
  std::string backend;
  int device;
  std::uintptr_t stream = 0;
  py::object allocate;
};

ExecOptions exec(const Exec& x) {
  if (x.threads < 0 || x.threads > kMaxThreads) {
    value_error("threads = " + std::to_string(x.threads) + "; 0 (every CPU this process may use) to " +
                std::to_string(kMaxThreads) + " is allowed");
  }
  if (x.device < 0) value_error("device = " + std::to_string(x.device) + "; 0 or more is allowed");
  ExecOptions e;
  e.num_threads = x.threads;
  e.device = x.device;
  e.backend = io::parse_backend(x.backend, "backend");
  return e;
}

// A tensor in CUDA device memory (a torch CUDA tensor, read by rsz/__init__.py): its address, element type, shape
// and strides in elements, and its device; `owner` (the tensor) keeps the memory alive while rsz holds this.
struct DeviceArg {
  std::uintptr_t data = 0;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  int device = 0;
  py::object owner;
};

DataType device_dtype(const std::string& name) {
  if (name == "float32") return DataType::Float32;
  if (name == "float16") return DataType::Float16;
  if (name == "uint8") return DataType::UNorm8;
  if (name == "uint16") return DataType::UNorm16;
  if (name == "uint32") return DataType::UInt32;
  value_error("a device tensor of dtype " + name + "; float32, float16, uint8 or uint16 is allowed");
}

bool on_device(const py::object& x) { return py::isinstance<DeviceArg>(x); }

ConstTensorView device_view(const DeviceArg& d) {
  return ConstTensorView(reinterpret_cast<const void*>(d.data), device_dtype(d.dtype), Dims(d.shape.begin(), d.shape.end()),
                         Dims(d.strides.begin(), d.strides.end()), MemorySpace::Device);
}

// An operand: a numpy array (host memory) or a DeviceArg.
ConstTensorView const_view(const py::object& x, const std::string& name) {
  if (on_device(x)) return device_view(x.cast<const DeviceArg&>());
  // Not a conversion: a view of a temporary array would outlive its memory (rsz/__init__.py passes arrays).
  if (!py::isinstance<py::array>(x)) value_error(name + " is not an array");
  return const_view(py::reinterpret_borrow<py::array>(x), name);
}

// A host output given by the caller: the array itself (never a converted copy, which would not be the caller's).
std::optional<py::array> host_out(const std::optional<py::object>& out) {
  if (!out) return std::nullopt;
  if (!py::isinstance<py::array>(*out)) value_error("out is not an array");
  return py::reinterpret_borrow<py::array>(*out);
}

// The device of the call's device tensors (the first one's), or -1 where they are all in host memory; a call that
// mixes host and device memory, or two devices, is refused.
int call_device(const std::vector<std::pair<const py::object*, const char*>>& operands, const char* op) {
  int device = -1;
  const char* first = nullptr;
  bool host = false;
  const char* host_name = nullptr;
  for (const auto& [x, name] : operands) {
    if (x == nullptr || x->is_none()) continue;
    if (!on_device(*x)) {
      host = true;
      if (host_name == nullptr) host_name = name;
      continue;
    }
    const int d = x->cast<const DeviceArg&>().device;
    if (first == nullptr) {
      device = d;
      first = name;
    } else if (d != device) {
      value_error(std::string(op) + ": " + first + " is on cuda:" + std::to_string(device) + " and " + name +
                  " on cuda:" + std::to_string(d) + "; one device is allowed");
    }
  }
  if (first != nullptr && host) {
    value_error(std::string(op) + ": " + first + " is a CUDA tensor and " + host_name +
                " is in host memory; give both on the device (torch: .cuda()) or both on the host");
  }
  return device;
}

// The output of a call on device tensors: `out` as given (a DeviceArg of `sizes`, zeroed first with `zero`), or one
// made on the device by exec.allocate.
py::object device_output(const std::optional<py::object>& out, const Dims& sizes, DataType type, const char* op,
                         bool zero, const Exec& x) {
  if (out) {
    const auto& d = out->cast<const DeviceArg&>();
    if (Dims(d.shape.begin(), d.shape.end()) != sizes) {
      value_error(std::string(op) + ": out has shape " + dims_to_string(Dims(d.shape.begin(), d.shape.end())) + "; " +
                  dims_to_string(sizes) + " is needed");
    }
    if (zero) d.owner.attr("zero_")();
    return *out;
  }
  py::list shape;
  for (const std::int64_t v : sizes) shape.append(v);
  return x.allocate(shape, to_string(type), zero);
}

TensorView device_mutable_view(const py::object& out) {
  const ConstTensorView v = device_view(out.cast<const DeviceArg&>());
  return TensorView(const_cast<void*>(v.data()), v.layout(), MemorySpace::Device);
}

// The call's ExecOptions where its tensors are `device_tensors` (then on the CUDA device `device`, queued on the
// caller's stream): backend auto runs them on CUDA, cpu and reference cannot read them.
ExecOptions exec_for(const Exec& x, bool device_tensors, int device) {
  ExecOptions e = exec(x);
  if (!device_tensors) return e;
  if (e.backend == Backend::Cpu || e.backend == Backend::Reference) {
    value_error("backend = \"" + x.backend + "\" reads host memory, and the tensors are on cuda:" +
                std::to_string(device) + "; backend \"cuda\" or \"auto\" is allowed with CUDA tensors");
  }
  e.backend = Backend::Cuda;
  e.device = device;
  e.stream = reinterpret_cast<void*>(x.stream);
  return e;
}

// rsz.backends(): every backend of this build, as rsz info --backends lists them.
py::list backends_py() {
  py::list out;
  for (const BackendInfo& b : backends()) {
    py::dict d;
    d["name"] = to_string(b.backend);
    d["memory"] = to_string(b.memory);
    d["available"] = b.available;
    d["devices"] = b.devices;
    d["note"] = b.note;
    out.append(d);
  }
  return out;
}

// rsz.resample (tensor mode, no box), rsz.resize and rsz.thumbnail (image mode, a box): one resize intent
// (rsz/io/resize.h) planned by the same function as the command line's.
py::object resample_py(const py::object& x, std::optional<py::object> out, std::optional<std::array<float, 4>> scales,
                      std::optional<std::array<std::int64_t, 4>> sizes, std::optional<std::string> mode,
                      std::optional<std::array<float, 4>> input_offsets,
                      std::optional<std::array<float, 4>> output_offsets, std::optional<std::string> preset,
                      std::optional<bool> antialias, std::optional<std::string> rounding_direction,
                      std::optional<std::string> size, std::optional<std::string> fit,
                      std::optional<std::string> gravity, bool thumbnail, bool enlarge, bool image,
                      const Exec& x_exec) {
  const char* op = thumbnail ? "thumbnail" : image ? "resize" : "resample";
  const int device = call_device({{&x, image ? "image" : "x"}, {out ? &*out : nullptr, "out"}}, op);
  const ConstTensorView in = const_view(x, image ? "image" : "x");
  if (image && (in.rank() != 4 || in.size(0) != 1 || in.size(1) < 1 || in.size(1) > 4)) {
    value_error(std::string(op) + ": image has shape " + dims_to_string(in.sizes()) +
                "; an image is (1, C, H, W) or (C, H, W) with 1 to 4 channels, as read_image gives it (an (H, W, C) "
                "array is image.transpose(2, 0, 1))");
  }
  io::ResizeIntent intent;
  intent.spelling.scales = "scales, sizes or out";
  io::ResampleConfig& config = intent.config;
  // plan_resize puts the preset's offsets and mode under the keywords'.
  if (preset) intent.preset = io::parse_resample_preset(*preset, "preset");
  set_keyword(config, "interpolation", mode, std::string(op) + ": mode");
  if (input_offsets) config.input_pixel_offsets = input_offsets;
  if (output_offsets) config.output_pixel_offsets = output_offsets;
  if (antialias) config.antialiased = *antialias;
  set_keyword(config, "rounding_direction", rounding_direction, std::string(op) + ": rounding_direction");
  config.scales = scales;
  config.output_sizes = sizes;
  if (size) intent.box = io::parse_size(*size, "size", thumbnail);
  if (fit) intent.fit = io::parse_fit(*fit, "fit");
  if (gravity) intent.gravity = io::parse_gravity(*gravity, "gravity");
  if (thumbnail) io::apply_thumbnail_defaults(intent, enlarge);
  if (!intent.box && !config.output_sizes && out) {
    const Dims sizes_out = const_view(*out, "out").sizes();
    if (sizes_out.size() != 4) {
      value_error(std::string(op) + ": out has rank " + std::to_string(sizes_out.size()) + "; rank 4 is needed");
    }
    config.output_sizes = std::array<std::int64_t, 4>{sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]};
  }
  if (!intent.box && !config.scales && !config.output_sizes) {
    value_error(std::string(op) + ": give " + (image ? "size, scales, sizes or out" : "scales, sizes or out"));
  }
  const io::ResizePlan plan = io::plan_resize(intent, in.sizes(), image);
  const ExecOptions e = exec_for(x_exec, device >= 0, device);  // refused before `out` is touched
  // The canvas: zero where the plan pads it (fit contain), the call's output at (top, left) in it.
  py::object result;
  std::optional<TensorView> canvas;
  if (device >= 0) {
    result = device_output(out, plan.canvas, result_type(in.dtype()), op, plan.padded(), x_exec);
    canvas = device_mutable_view(result);
  } else {
    py::array host = output_array(host_out(out), plan.canvas,
                                  result_type(in.dtype()), op);
    if (plan.padded()) host.attr("fill")(0);
    canvas = mutable_view(host, "out");
    result = host;
  }
  const TensorView& whole = *canvas;
  auto* origin = static_cast<std::byte*>(whole.data()) + (plan.top * whole.stride(2) + plan.left * whole.stride(3)) *
                                                             static_cast<std::int64_t>(element_size(whole.dtype()));
  const TensorView o(origin, whole.dtype(), plan.call_sizes, whole.strides(), whole.memory());
  {
    const py::gil_scoped_release release;
    resample(in, o, plan.params, e);
  }
  return result;
}

// The output of an operator: on the device for device operands (device_output), else a numpy array (output_array);
// with its view.
std::pair<py::object, TensorView> operator_output(int device, const std::optional<py::object>& out, const Dims& sizes,
                                                  DataType type, const char* op, const Exec& x) {
  if (device >= 0) {
    py::object result = device_output(out, sizes, type, op, false, x);
    const TensorView view = device_mutable_view(result);
    return {result, view};
  }
  py::array host = output_array(host_out(out), sizes, type, op);
  const TensorView view = mutable_view(host, "out");
  return {host, view};
}

py::object upsample2d_py(const py::object& x, std::optional<py::object> out, std::uint32_t factor_h,
                         std::uint32_t factor_w, std::optional<std::string> mode, const Exec& x_exec) {
  const int device = call_device({{&x, "x"}, {out ? &*out : nullptr, "out"}}, "upsample2d");
  const ConstTensorView in = const_view(x, "x");
  io::Upsample2dConfig config;
  set_keyword(config, "interpolation", mode, "upsample2d: mode");
  config.scale_size = ScaleSize{factor_h, factor_w};
  const Upsample2dParams params = io::resolve(config);
  const ExecOptions e = exec_for(x_exec, device >= 0, device);
  const auto [result, o] = operator_output(device, out, upsample2d_output_sizes(in.sizes(), params.scale_size),
                                           result_type(in.dtype()), "upsample2d", x_exec);
  {
    const py::gil_scoped_release release;
    upsample2d(in, o, params, e);
  }
  return result;
}

py::object roi_align_py(const py::object& x, const py::object& rois, const py::object& batch_indices,
                        std::optional<py::object> out, std::int64_t output_height, std::int64_t output_width,
                        const io::RoiAlignConfig& fields, const Exec& x_exec) {
  const int device = call_device({{&x, "x"}, {&rois, "rois"}, {&batch_indices, "batch_indices"}, {out ? &*out : nullptr, "out"}},
                                 "roi_align");
  const ConstTensorView in = const_view(x, "x");
  const ConstTensorView boxes = const_view(rois, "rois");
  const ConstTensorView indices = const_view(batch_indices, "batch_indices");
  io::RoiAlignConfig config = fields;
  config.output_height = output_height;
  config.output_width = output_width;
  const io::ResolvedRoiAlign resolved = io::resolve(config);
  const ExecOptions e = exec_for(x_exec, device >= 0, device);
  const auto [result, o] =
      operator_output(device, out, roi_align_output_sizes(in.sizes(), boxes.sizes(), output_height, output_width),
                      result_type(in.dtype()), "roi_align", x_exec);
  {
    const py::gil_scoped_release release;
    roi_align(in, boxes, indices, o, resolved.params, e);
    // Boxes on the device are checked there: waiting for the call says whether they broke a rule (its message),
    // where the output would otherwise be left unwritten without a word.
    if (device >= 0) synchronize(e);
  }
  return result;
}

io::AlphaMode alpha_mode(const std::string& alpha) { return io::parse_alpha_mode(alpha, "alpha"); }

// A path argument, refused when it holds a NUL byte: Python strings may, and the C library would end the name there,
// reading or writing another file than the one named. (rsz/__init__.py refuses them first, naming the path.)
void checked_path(const std::string& path, const char* op) {
  const std::size_t nul = path.find('\0');
  if (nul != std::string::npos) {
    value_error(std::string(op) + ": path has a NUL byte (at index " + std::to_string(nul) +
                "); file names cannot hold one");
  }
}

// An array owning a heap object (a Tensor or an Image) through a capsule: no copy of the pixels.
// The capsule is made first: from then on it owns `owner` (a failure below deletes it once, through the capsule).
template <typename T>
py::array owning_array(T* owner, const void* data, DataType type, const Dims& sizes, const Dims& strides) {
  const py::capsule keep(owner, [](void* p) { delete static_cast<T*>(p); });
  std::vector<py::ssize_t> shape(sizes.begin(), sizes.end());
  std::vector<py::ssize_t> bytes;
  for (const std::int64_t s : strides) bytes.push_back(static_cast<py::ssize_t>(s * element_size(type)));
  return py::array(numpy_dtype(type), shape, bytes, data, keep);
}

py::array read_image_py(const std::string& path, const std::string& dtype, const std::string& alpha, bool exif,
                        std::int64_t max_pixels) {
  checked_path(path, "read_image");
  if (dtype != "float32" && dtype != "float16" && dtype != "uint") {
    value_error("read_image: dtype = \"" + dtype + "\"; float32, float16 or uint (the decoded samples) is allowed");
  }
  const io::AlphaMode mode = alpha_mode(alpha);
  io::ImageReadOptions options;
  options.apply_exif_orientation = exif;
  options.max_pixels = max_pixels;
  auto* image = new io::Image;
  try {
    {
      const py::gil_scoped_release release;
      *image = io::read_image(path, options);
    }
    const std::int64_t c = image->channels;
    if (dtype == "uint") {  // 1 x C x H x W over the interleaved samples, as every operator reads them
      const bool deep = image->bit_depth == 16;
      const void* data = deep ? static_cast<const void*>(image->data16.data()) : image->data8.data();
      io::Image* owned = image;
      image = nullptr;  // the array's capsule owns it from here, even when making the array fails
      return owning_array(owned, data, deep ? DataType::UNorm16 : DataType::UNorm8, {1, c, owned->height, owned->width},
                          {owned->height * owned->width * c, 1, owned->width * c, c});
    }
    auto* tensor = new Tensor(image_to_tensor(*image, dtype == "float16" ? DataType::Float16 : DataType::Float32, mode));
    delete image;
    image = nullptr;  // the tensor is owned by the array's capsule below
    return owning_array(tensor, tensor->data(), tensor->dtype(), tensor->sizes(), tensor->layout().strides());
  } catch (...) {
    delete image;
    throw;
  }
}

void write_image_py(const std::string& path, const py::array& array, int bit_depth, const std::string& alpha,
                    int quality, int png_compression, bool lossless) {
  checked_path(path, "write_image");
  const ConstTensorView tensor = const_view(array, "image");
  if (tensor.dtype() != DataType::Float32 && tensor.dtype() != DataType::Float16) {
    value_error("write_image: image has dtype " + std::string(to_string(tensor.dtype())) +
                "; a float32 or float16 1 x C x H x W tensor of values in [0, 1] is needed");
  }
  if (bit_depth != 8 && bit_depth != 16) {
    value_error("write_image: bit_depth = " + std::to_string(bit_depth) + "; 8 or 16 is allowed");
  }
  const io::AlphaMode mode = alpha_mode(alpha);
  io::ImageWriteOptions options;
  options.quality = quality;
  options.lossless = lossless;
  options.png_compression = png_compression;
  const py::gil_scoped_release release;
  io::write_image(path, io::tensor_to_image(tensor, bit_depth, mode), options);
}

// One command line run in this process (cli.h): its words and the folder inputs are named below as bytes (os.fsencode),
// the GIL released. While it runs, freed buffers are kept for the next input, as the rsz program keeps them (main.cpp):
// the host's allocator settings (Dask's workers set MALLOC_TRIM_THRESHOLD_=65536) would otherwise fault in fresh
// pages for every image. After it, the trim threshold is the environment's again (glibc's default where it sets
// none) and the heap is trimmed, so the host gets back what the run freed.
// Text from rsz (file names, messages) as str: UTF-8, with the bytes of a name that is not UTF-8 kept as
// os.fsdecode keeps them (surrogateescape), so that every record names a file open() takes.
py::str text_of(const std::string& text) {
  PyObject* str = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "surrogateescape");
  if (str == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(str);
}

// A record's JSON form (pipeline::record_json, the --json line's) as Python objects.
py::object python_of(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object: {
      py::dict d;
      for (const auto& [key, item] : value.items()) d[text_of(key)] = python_of(item);
      return std::move(d);
    }
    case nlohmann::json::value_t::array: {
      py::list l;
      for (const auto& item : value) l.append(python_of(item));
      return std::move(l);
    }
    case nlohmann::json::value_t::string: return text_of(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean: return py::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer: return py::int_(value.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(value.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: return py::float_(value.get<double>());
    default: return py::none();
  }
}

py::list records_of(const std::vector<rsz::pipeline::Record>& records) {
  py::list out;
  for (const auto& r : records) out.append(python_of(rsz::pipeline::record_object(r)));
  return out;
}

// Runs `run` with the GIL released. While any such call runs, freed buffers are kept for the next input, as the rsz
// program keeps them (main.cpp); the last one to end sets the environment's threshold back and trims the heap.
std::mutex calls_mutex;  // the runs under way, of every kind
int calls = 0;

template <typename Run>
auto released(const Run& run) {
  const py::gil_scoped_release release;
  {
    const std::lock_guard<std::mutex> lock(calls_mutex);
#if defined(__GLIBC__)
    if (calls++ == 0) {
      mallopt(M_MMAP_THRESHOLD, 32 << 20);
      mallopt(M_TRIM_THRESHOLD, 64 << 20);
    }
#else
    ++calls;
#endif
  }
  struct Restore {
    ~Restore() {
      const std::lock_guard<std::mutex> lock(calls_mutex);
      if (--calls > 0) return;
#if defined(__GLIBC__)
      const char* trim = std::getenv("MALLOC_TRIM_THRESHOLD_");
      const long threshold = trim != nullptr ? std::strtol(trim, nullptr, 10) : 128 * 1024;
      mallopt(M_TRIM_THRESHOLD, static_cast<int>(threshold > 0 && threshold < (1L << 30) ? threshold : 128 * 1024));
      malloc_trim(0);
#endif
    }
  } restore;
  return run();
}

// A run's report as a dict: status, counts, records (when kept), first failures, a refusal's code and message, and
// the lines rsz said ("messages", without "rsz: ").
py::dict report_dict(const rsz::pipeline::Report& report, int status) {
  py::dict d;
  d["status"] = status;
  d["jobs"] = report.jobs;
  d["written"] = report.written;
  d["failed"] = report.failed;
  d["skipped"] = report.skipped;
  d["kept"] = report.kept;
  d["not_read"] = report.not_read;
  py::list not_read_files;
  for (const std::string& f : report.not_read_files) not_read_files.append(text_of(f));
  d["not_read_files"] = not_read_files;
  d["records"] = records_of(report.records);
  d["failures"] = records_of(report.failures);
  d["code"] = report.error_code ? py::object(py::str(rsz::pipeline::code_name(*report.error_code))) : py::none();
  d["error"] = report.error_code ? py::object(text_of(report.error)) : py::none();
  py::list messages;
  for (const std::string& line : report.messages) messages.append(text_of(line));
  d["messages"] = messages;
  return d;
}

// One in-process run of the command line's words (rsz.merge and the words of rsz.run(..., *args)): the report's dict
// with what it wrote to standard output and standard error.
py::dict cli_py(const std::vector<py::bytes>& words, const py::bytes& inputs_below, bool quiet, bool keep_records) {
  std::vector<std::string> args;
  args.reserve(words.size());
  for (const py::bytes& word : words) args.emplace_back(word);
  const std::string below(inputs_below);
  const rsz::app::InProcessResult result =
      released([&] { return rsz::app::in_process_run(args, below, quiet, keep_records); });
  py::dict d = report_dict(result.report, result.status);
  py::list messages;
  std::istringstream lines(result.stderr_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("rsz: ", 0) == 0) line.erase(0, 5);
    if (!line.empty()) messages.append(text_of(line));
  }
  d["messages"] = messages;
  d["stdout"] = py::bytes(result.stdout_text);
  return d;
}

// One job through the library (rsz::pipeline::run of a Request by command): the command, its options and the
// run-level settings by key as their flags' text, the inputs and output as bytes (os.fsencode), no command-line words.
rsz::pipeline::Request request_of(const std::string& command, const std::map<std::string, py::bytes>& options,
                                  const std::map<std::string, py::bytes>& settings,
                                  const std::vector<py::bytes>& inputs, const py::bytes& output,
                                  const py::bytes& inputs_below, bool quiet, bool keep_records) {
  rsz::pipeline::Request request;
  request.command = command;
  for (const auto& [key, text] : options) request.options[key] = std::string(text);
  for (const auto& [key, text] : settings) request.settings[key] = std::string(text);
  for (const py::bytes& input : inputs) request.inputs.emplace_back(input);
  request.output = std::string(output);
  request.inputs_below = std::string(inputs_below);
  request.keep_records = keep_records;
  request.echo_stderr = !quiet;
  if (!quiet && request.settings.count("quiet") == 0) request.settings["quiet"] = "false";
  return request;
}

py::dict run_request_py(const std::string& command, const std::map<std::string, py::bytes>& options,
                        const std::map<std::string, py::bytes>& settings, const std::vector<py::bytes>& inputs,
                        const py::bytes& output, const py::bytes& inputs_below, bool quiet, bool keep_records) {
  const rsz::pipeline::Request request =
      request_of(command, options, settings, inputs, output, inputs_below, quiet, keep_records);
  const rsz::pipeline::Report report = released([&] { return rsz::pipeline::run(request); });
  return report_dict(report, report.status);
}

// A job planned through the library (rsz::pipeline::plan), as run_request takes it: the plan (to run once with
// run_plan) and its report's dict.
py::tuple plan_request_py(const std::string& command, const std::map<std::string, py::bytes>& options,
                          const std::map<std::string, py::bytes>& settings, const std::vector<py::bytes>& inputs,
                          const py::bytes& output, const py::bytes& inputs_below, bool quiet, bool keep_records) {
  const rsz::pipeline::Request request =
      request_of(command, options, settings, inputs, output, inputs_below, quiet, keep_records);
  auto planned = std::make_shared<rsz::pipeline::Plan>(released([&] { return rsz::pipeline::plan(request); }));
  py::dict report = report_dict(planned->report, planned->report.status);
  return py::make_tuple(py::cast(planned), report);
}

py::dict run_plan_py(const rsz::pipeline::Plan& planned) {
  const rsz::pipeline::Report report = released([&] { return rsz::pipeline::run(planned); });
  return report_dict(report, report.status);
}

// rsz plan through the library (rsz::pipeline::make_plan): the inputs and the state folder as bytes.
py::dict plan_py(const std::vector<py::bytes>& inputs, const py::bytes& state, std::int64_t shards, bool recursive,
                 bool hidden) {
  rsz::pipeline::PlanRequest request;
  for (const py::bytes& input : inputs) request.inputs.emplace_back(input);
  request.state = std::string(state);
  request.shards = shards;
  request.recursive = recursive;
  request.hidden = hidden;
  const rsz::pipeline::Report report = released([&] { return rsz::pipeline::make_plan(request); });
  return report_dict(report, report.status);
}

// rsz merge through the library (rsz::pipeline::merge): the report's dict with "json", the text of the merge's
// object ("" when refused).
py::dict merge_py(const py::bytes& state, bool clean) {
  rsz::pipeline::MergeRequest request;
  request.state = std::string(state);
  request.clean = clean;
  const rsz::pipeline::MergeResult result = released([&] { return rsz::pipeline::merge(request); });
  py::dict d = report_dict(result.report, result.report.status);
  d["json"] = py::bytes(result.json);
  return d;
}

// The operator commands' options (rsz/pipeline/commands.h): the keywords of rsz.run, run_shard and map_paths.
py::dict command_options_py() {
  static const char* const kKinds[] = {"text", "bool", "choice", "int"};
  py::dict out;
  for (const rsz::pipeline::CommandSpec& spec : rsz::pipeline::command_specs()) {
    py::list rows;
    for (const rsz::pipeline::CommandOption& o : spec.options) {
      py::dict d;
      d["key"] = o.key;
      d["flag"] = o.flag;
      d["kind"] = kKinds[static_cast<int>(o.kind)];
      d["choices"] = o.choices;
      d["required"] = o.required;
      rows.append(d);
    }
    out[py::str(spec.command)] = rows;
  }
  return out;
}

}  // namespace
}  // namespace rsz::python

PYBIND11_MODULE(_rsz, m) {
  using namespace rsz::python;
  namespace io = rsz::io;
  m.doc() = "rsz's kernels and codecs; use the rsz package, which wraps these.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rsz::Error& e) {  // a bug inside rsz is not the caller's value: RuntimeError
      PyErr_SetString(e.code() == rsz::ErrorCode::Internal ? PyExc_RuntimeError : PyExc_ValueError, e.what());
    }
  });
  m.attr("__version__") = RSZ_VERSION;
  py::class_<Exec>(m, "Exec")
      .def(py::init<int, std::string, int>(), py::arg("threads"), py::arg("backend"), py::arg("device"))
      .def(py::init<int, std::string, int, std::uintptr_t, py::object>(), py::arg("threads"), py::arg("backend"),
           py::arg("device"), py::arg("stream"), py::arg("allocate"));
  py::class_<DeviceArg>(m, "DeviceArg")
      .def(py::init<std::uintptr_t, std::string, std::vector<std::int64_t>, std::vector<std::int64_t>, int, py::object>(),
           py::arg("data"), py::arg("dtype"), py::arg("shape"), py::arg("strides"), py::arg("device"), py::arg("owner"))
      .def_readonly("owner", &DeviceArg::owner)
      .def_readonly("dtype", &DeviceArg::dtype)
      .def_property_readonly("shape", [](const DeviceArg& d) { return py::tuple(py::cast(d.shape)); })
      .def_property_readonly("ndim", [](const DeviceArg& d) { return d.shape.size(); });
  m.def("backends", &backends_py);
  // The run-level settings table (rsz/io/run_settings.h): rsz.run_settings(), and what run_shard / map_paths check
  // their keywords' values against.
  m.def("run_settings", [] {
    static const char* const kKinds[] = {"bool", "int", "choice", "text"};
    py::list out;
    for (const io::RunSettingSpec& s : io::run_settings()) {
      py::list commands;
      if (s.uses & io::kUseOperators) commands.append("operators");
      if (s.uses & io::kUseResize) commands.append("resample, thumbnail");
      if (s.uses & io::kUseRoiAlign) commands.append("roi-align");
      if (s.uses & io::kUseRun) commands.append("run");
      py::dict d;
      d["key"] = s.key;
      d["flag"] = "--" + s.long_name();
      d["help"] = s.help;
      d["kind"] = kKinds[static_cast<int>(s.kind)];
      d["choices"] = s.choices;
      if (s.kind == io::SettingKind::Int) {
        d["min"] = s.min;
        d["max"] = s.max;
      }
      d["commands"] = commands;
      d["changes_outputs"] = s.changes_outputs;
      d["batch_key"] = s.batch_key.empty() ? py::object(py::none()) : py::object(py::str(s.batch_key));
      out.append(d);
    }
    return out;
  });
  // The operator spec tables (rsz/io/ops.h): what the Python keywords are checked against (tests/python).
  m.def("operator_specs", [] {
    py::list out;
    for (const io::OperatorSpec* spec : io::operator_specs()) {
      py::list fields;
      for (const io::FieldSpec& f : spec->fields) {
        py::dict field;
        field["key"] = f.key;
        field["flag"] = f.flag;
        field["kind"] = io::to_string(f.kind);
        field["choices"] = f.choices;
        field["default"] = f.default_json;
        fields.append(field);
      }
      py::dict d;
      d["op"] = spec->op;
      d["command"] = spec->command;
      d["fields"] = fields;
      out.append(d);
    }
    return out;
  });
  m.def("resample", &resample_py, py::arg("x"), py::arg("out"), py::arg("scales"), py::arg("sizes"), py::arg("mode"),
        py::arg("input_pixel_offsets"), py::arg("output_pixel_offsets"), py::arg("preset"), py::arg("antialias"),
        py::arg("rounding_direction"), py::arg("size"), py::arg("fit"), py::arg("gravity"), py::arg("thumbnail"),
        py::arg("enlarge"), py::arg("image"), py::arg("exec"));
  m.def("upsample2d", &upsample2d_py, py::arg("x"), py::arg("out"), py::arg("factor_h"), py::arg("factor_w"),
        py::arg("mode"), py::arg("exec"));
  m.def(
      "roi_align",
      [](const py::object& x, const py::object& rois, const py::object& batch_indices, std::optional<py::object> out,
         std::int64_t output_height, std::int64_t output_width, std::optional<std::string> mode,
         std::optional<std::string> reduction, float spatial_scale_x, float spatial_scale_y,
         float out_of_bounds_input_value, std::uint32_t minimum_samples_per_output,
         std::uint32_t maximum_samples_per_output, float input_pixel_offset, float output_pixel_offset,
         bool align_regions_to_corners, const Exec& x_exec) {
        io::RoiAlignConfig c;
        set_keyword(c, "interpolation", mode, "roi_align: mode");
        set_keyword(c, "reduction", reduction, "roi_align: reduction");
        c.spatial_scale_x = spatial_scale_x;
        c.spatial_scale_y = spatial_scale_y;
        c.out_of_bounds_input_value = out_of_bounds_input_value;
        c.minimum_samples_per_output = minimum_samples_per_output;
        c.maximum_samples_per_output = maximum_samples_per_output;
        c.input_pixel_offset = input_pixel_offset;
        c.output_pixel_offset = output_pixel_offset;
        c.align_regions_to_corners = align_regions_to_corners;
        return roi_align_py(x, rois, batch_indices, std::move(out), output_height, output_width, c, x_exec);
      },
      py::arg("x"), py::arg("rois"), py::arg("batch_indices"), py::arg("out"), py::arg("output_height"),
      py::arg("output_width"), py::arg("mode"), py::arg("reduction"), py::arg("spatial_scale_x"),
      py::arg("spatial_scale_y"), py::arg("out_of_bounds_input_value"), py::arg("minimum_samples_per_output"),
      py::arg("maximum_samples_per_output"), py::arg("input_pixel_offset"), py::arg("output_pixel_offset"),
      py::arg("align_regions_to_corners"), py::arg("exec"));
  m.def(
      "image_info",
      [](const std::string& path, bool exif, std::int64_t max_pixels) {
        checked_path(path, "info");
        io::ImageReadOptions options;
        options.apply_exif_orientation = exif;
        options.max_pixels = max_pixels;
        io::ImageInfo info;
        {
          const py::gil_scoped_release release;
          info = io::read_image_info(path, options);
        }
        py::dict d;
        d["width"] = info.width;
        d["height"] = info.height;
        d["channels"] = info.channels;
        d["bit_depth"] = info.bit_depth;
        d["format"] = info.format;
        return d;
      },
      py::arg("path"), py::arg("exif"), py::arg("max_pixels"));
  m.def("read_image", &read_image_py, py::arg("path"), py::arg("dtype"), py::arg("alpha"), py::arg("exif"),
        py::arg("max_pixels"));
  m.def("write_image", &write_image_py, py::arg("path"), py::arg("image"), py::arg("bit_depth"), py::arg("alpha"),
        py::arg("quality"), py::arg("png_compression"), py::arg("lossless"));
  // Shards as the command line cuts them (io/naming.h): keys and paths as bytes, as os.fsencode gives them.
  m.def(
      "shard_key",
      [](const py::bytes& path, const py::bytes& root) {
        return py::bytes(io::shard_key(std::string(path), std::string(root)));
      },
      py::arg("path"), py::arg("root"));
  m.def("cli", &cli_py, py::arg("args"), py::arg("inputs_below"), py::arg("quiet"), py::arg("keep_records"));
  m.def("run_request", &run_request_py, py::arg("command"), py::arg("options"), py::arg("settings"),
        py::arg("inputs"), py::arg("output"), py::arg("inputs_below"), py::arg("quiet"), py::arg("keep_records"));
  m.def("command_options", &command_options_py);
  py::class_<rsz::pipeline::Plan, std::shared_ptr<rsz::pipeline::Plan>>(m, "Plan")
      .def_property_readonly("runnable", &rsz::pipeline::Plan::runnable);
  m.def("plan_request", &plan_request_py, py::arg("command"), py::arg("options"), py::arg("settings"),
        py::arg("inputs"), py::arg("output"), py::arg("inputs_below"), py::arg("quiet"), py::arg("keep_records"));
  m.def("run_plan", &run_plan_py, py::arg("plan"));
  m.def("merge", &merge_py, py::arg("state"), py::arg("clean"));
  m.def("release_gpu_stages", [] {
    const py::gil_scoped_release unlocked;  // a stage's end joins its worker
    return rsz::pipeline::release_gpu_stages();
  });
  m.def("plan", &plan_py, py::arg("inputs"), py::arg("state"), py::arg("shards"), py::arg("recursive"),
        py::arg("hidden"));
  m.def(
      "shard_of", [](const py::bytes& key, std::int64_t count) { return io::shard_of(std::string(key), count); },
      py::arg("key"), py::arg("count"));
}
