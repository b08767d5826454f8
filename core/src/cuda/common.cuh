// What the CUDA backend's files share: tensor views as kernels see them, typed element loads and stores with the
// float rules of SEMANTICS.md §0, and the host-side checks and launch helpers. Every .cu file of the backend is
// compiled with -fmad=false (no contraction into FMA) and IEEE division: kernels evaluate exactly the reference's
// float32 expressions from detail/coords.h, in the same order.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "backend.h"
#include "detail/coords.h"
#include "detail/validate.h"

namespace rsz::detail::cuda {

constexpr int kMaxRank = 5;
constexpr int kWarp = 32;

// A tensor view as the kernels see it: sizes and strides in plain arrays.
struct DeviceView {
  void* data;
  DataType type;
  int rank;
  std::int64_t size[kMaxRank];
  std::int64_t stride[kMaxRank];
};

inline DeviceView device_view(const ConstTensorView& t) {
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

// ---- typed elements: the storage types of the data types (float32, float16, unorm8, unorm16) ----

// The float32 value of a stored element (SEMANTICS.md §0: float16 widened exactly; a unorm sample p of b bits is
// float32(double(p) / (2^b - 1))).
__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }
__device__ __forceinline__ float widen(std::uint8_t v) {
  return static_cast<float>(static_cast<double>(v) / 255.0);
}
__device__ __forceinline__ float widen(std::uint16_t v) {
  return static_cast<float>(static_cast<double>(v) / 65535.0);
}

// A computed result: a NaN becomes the canonical NaN (float32 0x7fc00000, float16 0x7e00).
__device__ __forceinline__ void store_computed(float* p, float value) {
  *reinterpret_cast<std::uint32_t*>(p) = value == value ? __float_as_uint(value) : 0x7fc00000u;
}
__device__ __forceinline__ void store_computed(__half* p, float value) {
  *reinterpret_cast<std::uint16_t*>(p) =
      value == value ? __half_as_ushort(__float2half_rn(value)) : static_cast<std::uint16_t>(0x7e00u);
}

// A nearest selection of a value already read: the same type keeps every bit; a unorm input is converted and
// rounded once.
template <typename In, typename Out>
__device__ __forceinline__ void store_selected(Out* dst, In value) {
  if constexpr (std::is_same_v<In, Out>) {
    *dst = value;
  } else if constexpr (std::is_same_v<Out, float>) {
    *dst = widen(value);
  } else {
    *dst = __float2half_rn(widen(value));
  }
}

// ---- untyped access through a DeviceView (the generic kernels, ROI coordinates) ----

__device__ __forceinline__ float load(const DeviceView& v, std::int64_t offset) {
  switch (v.type) {
    case DataType::Float32: return static_cast<const float*>(v.data)[offset];
    case DataType::Float16: return widen(static_cast<const __half*>(v.data)[offset]);
    case DataType::UNorm8: return widen(static_cast<const std::uint8_t*>(v.data)[offset]);
    case DataType::UNorm16: return widen(static_cast<const std::uint16_t*>(v.data)[offset]);
    default: return 0.0f;
  }
}

__device__ __forceinline__ void store_computed(const DeviceView& v, std::int64_t offset, float value) {
  if (v.type == DataType::Float32) {
    store_computed(static_cast<float*>(v.data) + offset, value);
  } else {
    store_computed(static_cast<__half*>(v.data) + offset, value);
  }
}

__device__ __forceinline__ void copy_element(const DeviceView& in, std::int64_t in_offset, const DeviceView& out,
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

__device__ __forceinline__ std::int64_t first_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t thread_step() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// ---- host side ----

// Calls f(In*, Out*) with null pointers of the storage types of `in` and `out`: float32 -> float32,
// float16 -> float16, and unorm8/unorm16 -> float32/float16 (the pairs the operators' validation allows).
template <typename F>
void dispatch_types(DataType in, DataType out, F&& f) {
  const auto with_out = [&](auto* in_tag) {
    if (out == DataType::Float32) {
      f(in_tag, static_cast<float*>(nullptr));
    } else {
      f(in_tag, static_cast<__half*>(nullptr));
    }
  };
  switch (in) {
    case DataType::Float32: f(static_cast<float*>(nullptr), static_cast<float*>(nullptr)); break;
    case DataType::Float16: f(static_cast<__half*>(nullptr), static_cast<__half*>(nullptr)); break;
    case DataType::UNorm8: with_out(static_cast<std::uint8_t*>(nullptr)); break;
    case DataType::UNorm16: with_out(static_cast<std::uint16_t*>(nullptr)); break;
    default: break;
  }
}

// Whether every element offset of `t` fits in 32 bits (the kernels then index with 32-bit arithmetic).
inline bool fits_32_bits(const TensorLayout& t) { return t.extent() < (std::int64_t{1} << 31); }

[[noreturn]] void cuda_fail(const char* op, const std::string& what, cudaError_t status);

// Makes options.device current for the scope of a call, and restores the caller's device.
class DeviceScope {
 public:
  DeviceScope(const char* op, int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

// Every view must point at memory the device can read: its own memory, or managed memory.
void check_device_pointer(const char* op, const char* name, const ConstTensorView& t, int device);
void launch_check(const char* op);
// Grid-stride launches of one thread per element: blocks of 256, at most 65535 * 32 of them.
int grid_for(std::int64_t total);
// The device's multiprocessor count and the most dynamic shared memory one block may use (opt-in), cached.
struct DeviceLimits {
  int multiprocessors;
  int max_shared_per_block;
  int compute_major;  // the compute capability's major number (8: Ampere, 9: Hopper)
};
DeviceLimits device_limits(int device);

inline cudaStream_t stream_of(const ExecOptions& options) { return static_cast<cudaStream_t>(options.stream); }

// Scratch device memory for one call, stream-ordered on options.stream from rsz's own memory pool of the device
// (created at first use; it keeps what it has reserved, so after the first calls nothing is allocated from the
// driver and nothing synchronizes). Freed (back to the pool) after the work queued before the destructor.
// Where the device has no memory pools, `data` stays null and the caller takes a path that needs no scratch.
class Scratch {
 public:
  // `what` names the memory in the message of a failed allocation ("the ROI tap tables").
  Scratch(const char* op, const char* what, std::size_t bytes, const ExecOptions& options);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

// What the device-side ROI check (roi_align_cuda.cu) of a failing call leaves for rsz::synchronize: enough to throw
// the host check's message. One record per (device, stream), in mapped pinned host memory, written by the first
// failing call queued after the last clearing of that stream's record. Only the device writes it: rsz::synchronize
// reads it and clears it with a kernel queued on the stream, so a call queued meanwhile by another thread cannot race
// with the clearing (it sees the record in stream order).
struct DeferredRoiError {
  int state;  // 0: none; 1: ROI `roi` breaks a value rule; 2: the sample budget
  std::uint32_t sequence;  // counts the errors recorded on this stream: tells a reported error from a new one
  std::uint32_t batch_index;
  std::int64_t roi;
  float box[4];
  float scale_x;
  float scale_y;
  std::int64_t batch;
  std::uint64_t total;
  std::uint64_t max_samples;
  std::int64_t worst;
  std::uint32_t worst_sx;
  std::uint32_t worst_sy;
  std::int64_t out_h;
  std::int64_t out_w;
  std::uint64_t channels;
};
// The device address of options.stream's record, created at the stream's first use (null where mapped host memory
// cannot be had: the caller then checks on the host).
DeferredRoiError* deferred_error_record(const ExecOptions& options);
void cuda_synchronize(const ExecOptions& options);

// The operators (resample_cuda.cu, roi_align_cuda.cu).
void cuda_resample(const ConstTensorView& input, const TensorView& output, const ResampleParams& p,
                   const ExecOptions& options);
void cuda_upsample2d(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& p,
                     const ExecOptions& options);
void cuda_check_roi_values(const ConstTensorView& input, const ConstTensorView& rois,
                           const ConstTensorView& batch_indices, const TensorView& output,
                           const RoiAlignParams& params, const ExecOptions& options);
// values_checked: the ROI values were checked on the host already; otherwise they are checked on the device first.
void cuda_roi_align(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                    const TensorView& output, const RoiAlignParams& p, const ExecOptions& options,
                    bool values_checked);

}  // namespace rsz::detail::cuda
