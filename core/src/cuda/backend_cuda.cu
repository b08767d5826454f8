// The CUDA backend: RESAMPLE1/2/3, UPSAMPLE_2D and ROI_ALIGN on device memory, bit-identical to the reference
// twins. Every output element is one thread (a grid-stride loop) that evaluates exactly the reference's float32
// expressions through detail/coords.h, in the same order: this file is compiled with -fmad=false (no contraction
// into FMA), IEEE division and square roots (no fast math); float16 is widened on load, computed in float32 and
// rounded once (round to nearest even) on store; computed NaNs are stored as the canonical NaN and nearest
// selections copy bits (SEMANTICS.md §0). Work is queued on ExecOptions::stream of ExecOptions::device; nothing
// synchronizes except roi_align's value check, which copies the R boxes and batch indices to the host to apply
// SEMANTICS.md §3's rules and the sample budget before any work is queued.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backend.h"
#include "detail/coords.h"
#include "detail/validate.h"

namespace rsz::detail {
namespace {

constexpr int kMaxRank = 5;

// A tensor view as the kernels see it: sizes and strides in plain arrays.
struct DeviceView {
  void* data;
  DataType type;
  int rank;
  std::int64_t size[kMaxRank];
  std::int64_t stride[kMaxRank];
};

DeviceView device_view(const ConstTensorView& t) {
  DeviceView v{};
  v.data = const_cast<void*>(t.data());
  v.type = t.dtype();
  v.rank = t.rank();
  for (int a = 0; a < t.rank() && a < kMaxRank; ++a) {
    v.size[a] = t.size(a);
    v.stride[a] = t.stride(a);
  }
  return v;
}

__device__ float load(const DeviceView& v, std::int64_t offset) {
  switch (v.type) {
    case DataType::Float32: return static_cast<const float*>(v.data)[offset];
    case DataType::Float16: return __half2float(static_cast<const __half*>(v.data)[offset]);
    case DataType::UNorm8:
      return static_cast<float>(static_cast<double>(static_cast<const std::uint8_t*>(v.data)[offset]) / 255.0);
    case DataType::UNorm16:
      return static_cast<float>(static_cast<double>(static_cast<const std::uint16_t*>(v.data)[offset]) / 65535.0);
    default: return 0.0f;
  }
}

// A computed result: a NaN becomes the canonical NaN (float32 0x7fc00000, float16 0x7e00).
__device__ void store_computed(const DeviceView& v, std::int64_t offset, float value) {
  if (v.type == DataType::Float32) {
    static_cast<std::uint32_t*>(v.data)[offset] = value == value ? __float_as_uint(value) : 0x7fc00000u;
  } else {
    static_cast<std::uint16_t*>(v.data)[offset] =
        value == value ? __half_as_ushort(__float2half_rn(value)) : static_cast<std::uint16_t>(0x7e00u);
  }
}

// A nearest selection: the same type copies every bit; a unorm input is converted and rounded once.
__device__ void copy_element(const DeviceView& in, std::int64_t in_offset, const DeviceView& out,
                             std::int64_t out_offset) {
  if (in.type == DataType::Float32 && out.type == DataType::Float32) {
    static_cast<std::uint32_t*>(out.data)[out_offset] = static_cast<const std::uint32_t*>(in.data)[in_offset];
  } else if (in.type == DataType::Float16 && out.type == DataType::Float16) {
    static_cast<std::uint16_t*>(out.data)[out_offset] = static_cast<const std::uint16_t*>(in.data)[in_offset];
  } else {
    const float value = load(in, in_offset);
    if (out.type == DataType::Float32) {
      static_cast<float*>(out.data)[out_offset] = value;
    } else {
      static_cast<__half*>(out.data)[out_offset] = __float2half_rn(value);
    }
  }
}

__device__ std::int64_t first_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ std::int64_t thread_step() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// detail::lerp along x of rows y0 and y1, then along y (reference/plane.h's read_bilinear).
__device__ float bilinear(const DeviceView& in, std::int64_t plane, std::int64_t stride_y, std::int64_t stride_x,
                          const LinearTaps& ty, const LinearTaps& tx) {
  const auto row = [&](std::int64_t y) {
    const std::int64_t base = plane + y * stride_y;
    const float a = load(in, base + tx.i0 * stride_x);
    if (tx.w == 0.0f) return a;
    return lerp(a, load(in, base + tx.i1 * stride_x), tx.w);
  };
  const float top = row(ty.i0);
  if (ty.w == 0.0f) return top;
  return lerp(top, row(ty.i1), ty.w);
}

// ---- resample ----

struct ResampleArgs {
  DeviceView in;
  DeviceView out;
  float scale[4];
  float ip[4];
  float op[4];
  bool nearest;
  NearestRounding rounding;
  bool antialiased;
};

// The reference's combine_linear: axis A's filter over the values of axes A+1.. (W innermost), each a 2-tap lerp or,
// on an antialiased axis, the normalized weighted sum in index order.
template <int A>
__device__ float combine(const ResampleArgs& a, const std::int64_t* o, std::int64_t offset) {
  if constexpr (A == 4) {
    return load(a.in, offset);
  } else {
    const std::int64_t n = a.in.size[A];
    const std::int64_t stride = a.in.stride[A];
    const float x = resample_source_coord(o[A], a.scale[A], a.ip[A], a.op[A]);
    if (a.antialiased && a.scale[A] < 1.0f) {
      const AntialiasRange r = antialias_range(x, n, a.scale[A]);
      std::int64_t first = -1;
      std::int64_t last = r.hi;
      float total = 0.0f;
      for (std::int64_t i = r.lo; i <= r.hi; ++i) {
        const float w = antialias_weight(i, r.xc, a.scale[A]);
        if (!(w > 0.0f)) {
          if (first >= 0) {
            last = i - 1;
            break;
          }
          continue;
        }
        if (first < 0) first = i;
        total = total + w;
      }
      if (first < 0) return 1.0f * combine<A + 1>(a, o, offset + static_cast<std::int64_t>(floorf(r.xc)) * stride);
      float acc = 0.0f;
      for (std::int64_t i = first; i <= last; ++i) {
        const float w = antialias_weight(i, r.xc, a.scale[A]) / total;
        const float v = combine<A + 1>(a, o, offset + i * stride);
        acc = i == first ? w * v : weighted_tap(acc, w, v);
      }
      return acc;
    } else {
      const LinearTaps t = linear_taps(x, n);
      const float va = combine<A + 1>(a, o, offset + t.i0 * stride);
      if (t.w == 0.0f) return va;
      return lerp(va, combine<A + 1>(a, o, offset + t.i1 * stride), t.w);
    }
  }
}

__device__ void resample_element(const ResampleArgs& a, const std::int64_t* o) {
  std::int64_t out_offset = 0;
#pragma unroll
  for (int axis = 0; axis < 4; ++axis) out_offset += o[axis] * a.out.stride[axis];
  if (a.nearest) {
    std::int64_t in_offset = 0;
#pragma unroll
    for (int axis = 0; axis < 4; ++axis) {
      const float x = resample_source_coord(o[axis], a.scale[axis], a.ip[axis], a.op[axis]);
      in_offset += nearest_index(x, a.in.size[axis], a.rounding) * a.in.stride[axis];
    }
    copy_element(a.in, in_offset, a.out, out_offset);
  } else {
    store_computed(a.out, out_offset, combine<0>(a, o, 0));
  }
}

// The common case: the N and C axes select their own index (no blending: scale 1 with offsets that cancel, as
// pixel-centre offsets do) and nothing is antialiased. Each output row is then one plane's H taps, computed once
// per row, and the W taps per thread: the reference's combine (N and C take one tap, then H over W lerps), by value
// in registers.
struct PlaneArgs {
  DeviceView in;
  DeviceView out;
  float scale_h, scale_w, ip_h, ip_w, op_h, op_w;
  bool nearest;
  NearestRounding rounding;
};

__global__ void resample_plane_kernel(PlaneArgs a, std::int64_t rows) {
  const std::int64_t out_h = a.out.size[2];
  const std::int64_t channels = a.out.size[1];
  const std::int64_t width = a.out.size[3];
  const std::int64_t in_h = a.in.size[2];
  const std::int64_t in_w = a.in.size[3];
  for (std::int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const std::int64_t h = row % out_h;
    const std::int64_t c = (row / out_h) % channels;
    const std::int64_t n = row / (out_h * channels);
    const std::int64_t plane = n * a.in.stride[0] + c * a.in.stride[1];
    const std::int64_t out_row = n * a.out.stride[0] + c * a.out.stride[1] + h * a.out.stride[2];
    const float y = resample_source_coord(h, a.scale_h, a.ip_h, a.op_h);
    if (a.nearest) {
      const std::int64_t in_row = plane + nearest_index(y, in_h, a.rounding) * a.in.stride[2];
      for (std::int64_t w = first_thread(); w < width; w += thread_step()) {
        const float x = resample_source_coord(w, a.scale_w, a.ip_w, a.op_w);
        copy_element(a.in, in_row + nearest_index(x, in_w, a.rounding) * a.in.stride[3], a.out,
                     out_row + w * a.out.stride[3]);
      }
    } else {
      const LinearTaps ty = linear_taps(y, in_h);
      for (std::int64_t w = first_thread(); w < width; w += thread_step()) {
        const LinearTaps tx = linear_taps(resample_source_coord(w, a.scale_w, a.ip_w, a.op_w), in_w);
        store_computed(a.out, out_row + w * a.out.stride[3],
                       bilinear(a.in, plane, a.in.stride[2], a.in.stride[3], ty, tx));
      }
    }
  }
}

// Rows (n, c, h) over blockIdx.y, the W axis over threads: the integer divisions happen once per row, and
// neighbouring threads read and write neighbouring elements.
__global__ void resample_kernel(ResampleArgs a, std::int64_t rows) {
  const std::int64_t width = a.out.size[3];
  for (std::int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const std::int64_t h = row % a.out.size[2];
    const std::int64_t c = (row / a.out.size[2]) % a.out.size[1];
    const std::int64_t n = row / (a.out.size[2] * a.out.size[1]);
    for (std::int64_t w = first_thread(); w < width; w += thread_step()) {
      const std::int64_t o[4] = {n, c, h, w};
      resample_element(a, o);
    }
  }
}


// ---- upsample2d ----

struct UpsampleArgs {
  DeviceView in;
  DeviceView out;
  std::int64_t sh;
  std::int64_t sw;
  bool nearest;
};

// Rows (every axis but W) over blockIdx.y, W over threads, as resample_kernel.
__global__ void upsample2d_kernel(UpsampleArgs a, std::int64_t rows) {
  const int rank = a.out.rank;
  const int h_axis = rank - 2;
  const int w_axis = rank - 1;
  for (std::int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    std::int64_t plane_in = 0;
    std::int64_t row_out = 0;
    std::int64_t rest = row;
    std::int64_t oh = 0;
    for (int axis = h_axis; axis >= 0; --axis) {
      const std::int64_t i = rest % a.out.size[axis];
      rest /= a.out.size[axis];
      row_out += i * a.out.stride[axis];
      if (axis < h_axis) plane_in += i * a.in.stride[axis];
      if (axis == h_axis) oh = i;
    }
    LinearTaps ty{};
    if (!a.nearest) {
      ty = linear_taps(resample_source_coord(oh, static_cast<float>(a.sh), 0.5f, -0.5f), a.in.size[h_axis]);
    }
    for (std::int64_t ow = first_thread(); ow < a.out.size[w_axis]; ow += thread_step()) {
      const std::int64_t out_offset = row_out + ow * a.out.stride[w_axis];
      if (a.nearest) {
        copy_element(a.in, plane_in + (oh / a.sh) * a.in.stride[h_axis] + (ow / a.sw) * a.in.stride[w_axis], a.out,
                     out_offset);
      } else {
        const LinearTaps tx =
            linear_taps(resample_source_coord(ow, static_cast<float>(a.sw), 0.5f, -0.5f), a.in.size[w_axis]);
        store_computed(a.out, out_offset,
                       bilinear(a.in, plane_in, a.in.stride[h_axis], a.in.stride[w_axis], ty, tx));
      }
    }
  }
}

// ---- roi_align ----

struct RoiArgs {
  DeviceView in;
  DeviceView rois;
  DeviceView indices;
  DeviceView out;
  RoiAlignParams p;
};

__device__ float read_sample(const RoiArgs& a, std::int64_t plane, float x, float y) {
  const std::int64_t height = a.in.size[2];
  const std::int64_t width = a.in.size[3];
  if (!roi_sample_in_bounds(x, y, width, height)) return a.p.out_of_bounds_input_value;
  const float xc = clamp_coord(x, width);
  const float yc = clamp_coord(y, height);
  if (a.p.interpolation == InterpolationMode::Nearest) {
    return load(a.in, plane + nearest_index(yc, height) * a.in.stride[2] + nearest_index(xc, width) * a.in.stride[3]);
  }
  return bilinear(a.in, plane, a.in.stride[2], a.in.stride[3], linear_taps(yc, height), linear_taps(xc, width));
}

// One thread per output element; Index is 32-bit where the output is small enough (integer division is much
// faster), 64-bit otherwise.
template <typename Index>
__global__ void roi_align_kernel(RoiArgs a, std::int64_t total) {
  const int rois_rank = a.rois.rank;
  const std::int64_t roi_stride = a.rois.stride[rois_rank - 2];
  const std::int64_t coord_stride = a.rois.stride[rois_rank - 1];
  const std::int64_t index_stride = a.indices.stride[a.indices.rank - 1];
  const std::int64_t channels = a.out.size[1];
  const std::int64_t out_h = a.out.size[2];
  const std::int64_t out_w = a.out.size[3];
  for (std::int64_t flat = first_thread(); flat < total; flat += thread_step()) {
    const auto f = static_cast<Index>(flat);
    const auto w = static_cast<Index>(out_w);
    const auto h = static_cast<Index>(out_h);
    const std::int64_t ox = f % w;
    const std::int64_t oy = (f / w) % h;
    const std::int64_t c = (f / (w * h)) % static_cast<Index>(channels);
    const std::int64_t r = f / (w * h * static_cast<Index>(channels));
    const auto coord = [&](int j) { return load(a.rois, r * roi_stride + j * coord_stride); };
    const std::int64_t batch = static_cast<const std::uint32_t*>(a.indices.data)[r * index_stride];
    const float x1 = coord(0) * a.p.spatial_scale_x;
    const float y1 = coord(1) * a.p.spatial_scale_y;
    const float x2 = coord(2) * a.p.spatial_scale_x;
    const float y2 = coord(3) * a.p.spatial_scale_y;
    const float roi_w = x2 - x1;
    const float roi_h = y2 - y1;
    const std::uint32_t sx =
        roi_sample_count(roi_w, out_w, a.p.minimum_samples_per_output, a.p.maximum_samples_per_output);
    const std::uint32_t sy =
        roi_sample_count(roi_h, out_h, a.p.minimum_samples_per_output, a.p.maximum_samples_per_output);
    const auto count = static_cast<float>(static_cast<std::uint64_t>(sx) * sy);
    const std::int64_t plane = batch * a.in.stride[0] + c * a.in.stride[1];
    float acc = 0.0f;
    bool first = true;
    for (std::uint32_t iy = 0; iy < sy; ++iy) {
      const float y = roi_sample_coord(y1, roi_h, out_h, sy, oy, iy, a.p.input_pixel_offset, a.p.output_pixel_offset,
                                       a.p.align_regions_to_corners);
      for (std::uint32_t ix = 0; ix < sx; ++ix) {
        const float x = roi_sample_coord(x1, roi_w, out_w, sx, ox, ix, a.p.input_pixel_offset,
                                         a.p.output_pixel_offset, a.p.align_regions_to_corners);
        const float v = read_sample(a, plane, x, y);
        if (a.p.reduction == RoiReduction::Average) {
          acc += v;
        } else if (first || v > acc) {
          acc = v;
        }
        first = false;
      }
    }
    store_computed(a.out,
                   r * a.out.stride[0] + c * a.out.stride[1] + oy * a.out.stride[2] + ox * a.out.stride[3],
                   a.p.reduction == RoiReduction::Average ? acc / count : acc);
  }
}

// ---- host side ----

[[noreturn]] void cuda_fail(const char* op, const std::string& what, cudaError_t status) {
  fail(ErrorCode::InvalidArgument, op, what + ": " + cudaGetErrorString(status));
}

// Makes options.device current for the scope of a call, and restores the caller's device.
class DeviceScope {
 public:
  DeviceScope(const char* op, int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    const cudaError_t status = cudaSetDevice(device);
    if (status != cudaSuccess) cuda_fail(op, "device " + std::to_string(device) + " cannot be used", status);
  }
  ~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

// Every view must point at memory the device can read (device or managed memory).
void check_device_pointer(const char* op, const char* name, const ConstTensorView& t) {
  if (t.element_count() == 0) return;
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, t.data());
  if (status != cudaSuccess || (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)) {
    cudaGetLastError();  // clear the sticky-free error a host pointer leaves
    fail(ErrorCode::InvalidArgument, op,
         std::string(name) + " is marked as device memory but is not memory a CUDA device can read; allocate it "
                             "with cudaMalloc (or cudaMallocManaged)");
  }
}

void launch_check(const char* op) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) cuda_fail(op, "the kernel could not be launched", status);
}

int grid_for(std::int64_t total) {
  constexpr std::int64_t kBlock = 256;
  const std::int64_t blocks = (total + kBlock - 1) / kBlock;
  return static_cast<int>(blocks < 65535 * 32 ? blocks : 65535 * 32);
}

// Row kernels: blocks of kRowBlock threads along W, as many as cover a row (at most 64), and up to 65535 rows.
constexpr int kRowBlock = 128;
dim3 row_grid(std::int64_t rows, std::int64_t width) {
  const std::int64_t x = (width + kRowBlock - 1) / kRowBlock;
  return dim3(static_cast<unsigned>(x < 64 ? x : 64), static_cast<unsigned>(rows < 65535 ? rows : 65535));
}

cudaStream_t stream_of(const ExecOptions& options) { return static_cast<cudaStream_t>(options.stream); }

bool cuda_available(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    why = std::string("no usable CUDA driver or device (") + cudaGetErrorString(status) + ")";
    return false;
  }
  if (count == 0) {
    why = "no CUDA device";
    return false;
  }
  return true;
}

std::string cuda_describe(const ExecOptions& options) {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, options.device) != cudaSuccess) return "";
  return "device " + std::to_string(options.device) + ": " + properties.name + ", compute capability " +
         std::to_string(properties.major) + "." + std::to_string(properties.minor);
}

// Whether every output index o of `axis` reads input index o alone (nearest: the selected index is o; linear: one
// tap, i0 = o, weight 0; an antialiased axis with scale < 1 never counts), computed with the same functions.
bool selects_own_index(const ConstTensorView& input, const TensorView& output, const ResampleParams& p, int axis) {
  const auto i = static_cast<std::size_t>(axis);
  if (p.antialiased && p.scales[i] < 1.0f) return false;
  for (std::int64_t o = 0; o < output.size(axis); ++o) {
    const float x = resample_source_coord(o, p.scales[i], p.input_pixel_offsets[i], p.output_pixel_offsets[i]);
    if (p.interpolation == InterpolationMode::Nearest) {
      if (nearest_index(x, input.size(axis), p.rounding_direction) != o) return false;
    } else {
      const LinearTaps t = linear_taps(x, input.size(axis));
      if (t.w != 0.0f || t.i0 != o) return false;
    }
  }
  return true;
}

void cuda_resample(const ConstTensorView& input, const TensorView& output, const ResampleParams& p,
                   const ExecOptions& options) {
  const DeviceScope scope("resample", options.device);
  check_device_pointer("resample", "input", input);
  check_device_pointer("resample", "output", output);
  ResampleArgs a{};
  a.in = device_view(input);
  a.out = device_view(output);
  for (int i = 0; i < 4; ++i) {
    a.scale[i] = p.scales[static_cast<std::size_t>(i)];
    a.ip[i] = p.input_pixel_offsets[static_cast<std::size_t>(i)];
    a.op[i] = p.output_pixel_offsets[static_cast<std::size_t>(i)];
  }
  a.nearest = p.interpolation == InterpolationMode::Nearest;
  a.rounding = p.rounding_direction;
  a.antialiased = p.antialiased;
  const std::int64_t rows = output.size(0) * output.size(1) * output.size(2);
  if (selects_own_index(input, output, p, 0) && selects_own_index(input, output, p, 1) &&
      !(p.antialiased && (p.scales[2] < 1.0f || p.scales[3] < 1.0f))) {
    PlaneArgs plane{a.in,    a.out,   a.scale[2], a.scale[3], a.ip[2],   a.ip[3],
                    a.op[2], a.op[3], a.nearest,  a.rounding};
    resample_plane_kernel<<<row_grid(rows, output.size(3)), kRowBlock, 0, stream_of(options)>>>(plane, rows);
  } else {
    resample_kernel<<<row_grid(rows, output.size(3)), kRowBlock, 0, stream_of(options)>>>(a, rows);
  }
  launch_check("resample");
}

void cuda_upsample2d(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& p,
                     const ExecOptions& options) {
  const DeviceScope scope("upsample2d", options.device);
  check_device_pointer("upsample2d", "input", input);
  check_device_pointer("upsample2d", "output", output);
  UpsampleArgs a{};
  a.in = device_view(input);
  a.out = device_view(output);
  a.sh = p.scale_size.height;
  a.sw = p.scale_size.width;
  a.nearest = p.interpolation == InterpolationMode::Nearest;
  const std::int64_t rows = output.element_count() / output.size(output.rank() - 1);
  upsample2d_kernel<<<row_grid(rows, output.size(output.rank() - 1)), kRowBlock, 0, stream_of(options)>>>(a, rows);
  launch_check("upsample2d");
}

// A host copy of a small device tensor's elements at its strides (the ROI boxes, the batch indices).
ConstTensorView host_copy(const char* op, const ConstTensorView& t, std::vector<unsigned char>& storage,
                          cudaStream_t stream) {
  const std::size_t bytes = static_cast<std::size_t>(t.layout().extent()) * element_size(t.dtype());
  storage.resize(bytes);
  if (bytes > 0) {
    cudaError_t status = cudaMemcpyAsync(storage.data(), t.data(), bytes, cudaMemcpyDeviceToHost, stream);
    if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
    if (status != cudaSuccess) cuda_fail(op, "the ROI values could not be read for their checks", status);
  }
  return ConstTensorView(storage.data(), t.layout());
}

void cuda_check_roi_values(const ConstTensorView& input, const ConstTensorView& rois,
                           const ConstTensorView& batch_indices, const TensorView& output,
                           const RoiAlignParams& params, const ExecOptions& options) {
  const DeviceScope scope("roi_align", options.device);
  check_device_pointer("roi_align", "rois", rois);
  check_device_pointer("roi_align", "batch_indices", batch_indices);
  std::vector<unsigned char> rois_host;
  std::vector<unsigned char> indices_host;
  const ConstTensorView r = host_copy("roi_align", rois, rois_host, stream_of(options));
  const ConstTensorView b = host_copy("roi_align", batch_indices, indices_host, stream_of(options));
  // The host rules read only the input's and output's sizes, never their elements.
  check_roi_values_on_host(ConstTensorView(nullptr, input.layout()), r, b, TensorView(nullptr, output.layout()),
                           params, options);
}

void cuda_roi_align(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                    const TensorView& output, const RoiAlignParams& p, const ExecOptions& options) {
  const DeviceScope scope("roi_align", options.device);
  check_device_pointer("roi_align", "input", input);
  check_device_pointer("roi_align", "output", output);
  RoiArgs a{};
  a.in = device_view(input);
  a.rois = device_view(rois);
  a.indices = device_view(batch_indices);
  a.out = device_view(output);
  a.p = p;
  const std::int64_t total = output.element_count();
  if (total < (std::int64_t{1} << 31)) {
    roi_align_kernel<std::uint32_t><<<grid_for(total), 256, 0, stream_of(options)>>>(a, total);
  } else {
    roi_align_kernel<std::uint64_t><<<grid_for(total), 256, 0, stream_of(options)>>>(a, total);
  }
  launch_check("roi_align");
}

const BackendOps kCuda{
    Backend::Cuda,  MemorySpace::Device, cuda_available,         cuda_describe, cuda_resample,
    cuda_upsample2d, cuda_check_roi_values, cuda_roi_align,
};

}  // namespace

const BackendOps& cuda_backend() { return kCuda; }

}  // namespace rsz::detail
