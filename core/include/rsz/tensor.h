// Tensors: sizes + strides (in elements) over a caller's buffer, like DML_TENSOR_DESC.
//
// Shared rules for every operator in rsz:
//  * Data types: float32 and float16 for data (float16 is stored as rsz::Float16 bits), uint32 for ROI batch indices.
//  * Rank 1 to 5. Sizes are >= 0. Strides are >= 0 and counted in elements, not bytes. Empty strides mean packed
//    row-major (the last axis is contiguous), i.e. NCHW / NCDHW.
//  * Element (i0, ..., ik) lives at data + sum(i_j * stride_j) elements. Any non-negative strides are legal for
//    inputs (an interleaved HWC image is the NCHW view with strides {H*W*C, 1, W*C, C}; a stride of 0 broadcasts).
//  * Outputs may be strided too, but no two output elements may share an address (see has_overlapping_elements).
//    An operator writes exactly the elements its output view addresses; everything else in the buffer is left
//    untouched.
//  * A view does not own or bound-check its buffer: the caller guarantees that every addressed element lies inside
//    it. Views are cheap to copy.
//  * Constructing a view with a bad rank, a negative size or stride, or offsets that overflow int64 throws
//    rsz::Error (ErrorCode::InvalidShape).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rsz/float16.h"

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz {

// UNorm8 / UNorm16: unsigned normalized samples (DXGI's UNORM), as decoded images hold them: a sample p stands for
// the value p / (2^b - 1), widened to float32 as that quotient computed in double and rounded once. They are input
// types only, accepted by rsz::resample, rsz::upsample2d and rsz::roi_align (whose output is then float32 or
// float16), so that an interleaved 8- or 16-bit image is the operator's input in place, with no float copy of it.
enum class DataType { Float32, Float16, UInt32, UNorm8, UNorm16 };

constexpr int kMaxRank = 5;

// "float32", "float16", "uint32", "unorm8", "unorm16".
const char* to_string(DataType type);
std::size_t element_size(DataType type);

using Dims = std::vector<std::int64_t>;

// Packed row-major strides for `sizes`.
Dims packed_strides(const Dims& sizes);
// "{1, 3, 224, 224}".
std::string dims_to_string(const Dims& dims);
// Product of the sizes (0 when any size is 0).
std::int64_t element_count(const Dims& sizes);

// Sizes, strides and data type of a tensor: the part of a view that is not the pointer.
class TensorLayout {
 public:
  TensorLayout(DataType type, Dims sizes, Dims strides = {});

  DataType dtype() const noexcept { return dtype_; }
  int rank() const noexcept { return static_cast<int>(sizes_.size()); }
  const Dims& sizes() const noexcept { return sizes_; }
  const Dims& strides() const noexcept { return strides_; }
  std::int64_t size(int axis) const { return sizes_.at(static_cast<std::size_t>(axis)); }
  std::int64_t stride(int axis) const { return strides_.at(static_cast<std::size_t>(axis)); }
  std::int64_t element_count() const noexcept { return rsz::element_count(sizes_); }
  // One past the largest element offset addressed (0 for an empty tensor): the buffer length the view needs.
  std::int64_t extent() const noexcept { return extent_; }
  bool is_packed() const { return strides_ == packed_strides(sizes_); }
  // False when every element provably has its own offset: with the axes of size > 1 sorted by stride, each
  // stride exceeds the largest offset the smaller-stride axes reach (true of packed, NHWC, padded-row and
  // channel-slice views). True otherwise, e.g. a zero stride on an axis of size > 1. Fine for an input; an output
  // must be free of overlap.
  bool has_overlapping_elements() const;

 private:
  DataType dtype_;
  Dims sizes_;
  Dims strides_;
  std::int64_t extent_ = 0;
};

// Where a view's elements live: host memory (the default: every view made from a pointer the CPU can read) or a
// GPU's memory (a CUDA device pointer, for the CUDA backend). Backends accept one memory space (rsz::backends()).
enum class MemorySpace { Host, Device };

// "host", "device".
const char* to_string(MemorySpace memory);

class ConstTensorView {
 public:
  ConstTensorView(const void* data, DataType type, Dims sizes, Dims strides = {},
                  MemorySpace memory = MemorySpace::Host)
      : data_(data), layout_(type, std::move(sizes), std::move(strides)), memory_(memory) {}
  ConstTensorView(const void* data, TensorLayout layout, MemorySpace memory = MemorySpace::Host)
      : data_(data), layout_(std::move(layout)), memory_(memory) {}

  const void* data() const noexcept { return data_; }
  MemorySpace memory() const noexcept { return memory_; }
  const TensorLayout& layout() const noexcept { return layout_; }
  DataType dtype() const noexcept { return layout_.dtype(); }
  int rank() const noexcept { return layout_.rank(); }
  const Dims& sizes() const noexcept { return layout_.sizes(); }
  const Dims& strides() const noexcept { return layout_.strides(); }
  std::int64_t size(int axis) const { return layout_.size(axis); }
  std::int64_t stride(int axis) const { return layout_.stride(axis); }
  std::int64_t element_count() const noexcept { return layout_.element_count(); }
  // Byte range [begin, end) that the view may touch.
  const std::byte* byte_begin() const noexcept { return static_cast<const std::byte*>(data_); }
  const std::byte* byte_end() const noexcept {
    return byte_begin() + layout_.extent() * static_cast<std::int64_t>(element_size(dtype()));
  }

 private:
  const void* data_;
  TensorLayout layout_;
  MemorySpace memory_;
};

class TensorView {
 public:
  TensorView(void* data, DataType type, Dims sizes, Dims strides = {}, MemorySpace memory = MemorySpace::Host)
      : data_(data), layout_(type, std::move(sizes), std::move(strides)), memory_(memory) {}
  TensorView(void* data, TensorLayout layout, MemorySpace memory = MemorySpace::Host)
      : data_(data), layout_(std::move(layout)), memory_(memory) {}

  void* data() const noexcept { return data_; }
  MemorySpace memory() const noexcept { return memory_; }
  const TensorLayout& layout() const noexcept { return layout_; }
  DataType dtype() const noexcept { return layout_.dtype(); }
  int rank() const noexcept { return layout_.rank(); }
  const Dims& sizes() const noexcept { return layout_.sizes(); }
  const Dims& strides() const noexcept { return layout_.strides(); }
  std::int64_t size(int axis) const { return layout_.size(axis); }
  std::int64_t stride(int axis) const { return layout_.stride(axis); }
  std::int64_t element_count() const noexcept { return layout_.element_count(); }

  operator ConstTensorView() const { return ConstTensorView(data_, layout_, memory_); }  // NOLINT: implicit

 private:
  void* data_;
  TensorLayout layout_;
  MemorySpace memory_;
};

// Memory for large tensor and pixel buffers (Tensor's storage, io::Image's samples): 64-byte aligned; buffers of
// 4 MiB and more are 2 MiB aligned and, on Linux, offered to transparent huge pages, so that touching a fresh
// 100 MB buffer takes a few hundred page faults instead of tens of thousands. Release with free_buffer. Throws
// std::bad_alloc.
void* allocate_buffer(std::size_t bytes);
void free_buffer(void* p) noexcept;

// Whether a new Tensor's elements start at zero or are left as the allocator gives them (for a tensor that is about
// to be overwritten completely, such as an operator's output: no pass over the memory before the real one).
enum class TensorInit { Zero, Uninitialized };

// An owning, packed tensor, zero-initialised unless asked otherwise.
class Tensor {
 public:
  Tensor(DataType type, Dims sizes, TensorInit init = TensorInit::Zero);
  // Copies are deep; moves take the buffer.
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  ~Tensor() = default;

  DataType dtype() const noexcept { return layout_.dtype(); }
  int rank() const noexcept { return layout_.rank(); }
  const Dims& sizes() const noexcept { return layout_.sizes(); }
  std::int64_t size(int axis) const { return layout_.size(axis); }
  const TensorLayout& layout() const noexcept { return layout_; }
  std::int64_t element_count() const noexcept { return layout_.element_count(); }
  std::size_t byte_size() const noexcept { return bytes_; }

  void* data() noexcept { return storage_.get(); }
  const void* data() const noexcept { return storage_.get(); }
  // Typed access; T must match the data type (float, Float16, std::uint32_t).
  template <typename T>
  T* data_as();
  template <typename T>
  const T* data_as() const;

  TensorView view() { return TensorView(data(), layout_); }
  ConstTensorView view() const { return ConstTensorView(data(), layout_); }
  ConstTensorView const_view() const { return view(); }

 private:
  void check_type(DataType requested) const;

  TensorLayout layout_;
  struct FreeStorage {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, FreeStorage> storage_;
  std::size_t bytes_ = 0;
};

template <typename T>
constexpr DataType data_type_of();
template <>
constexpr DataType data_type_of<float>() { return DataType::Float32; }
template <>
constexpr DataType data_type_of<Float16>() { return DataType::Float16; }
template <>
constexpr DataType data_type_of<std::uint32_t>() { return DataType::UInt32; }

template <typename T>
T* Tensor::data_as() {
  check_type(data_type_of<T>());
  return reinterpret_cast<T*>(storage_.get());
}

template <typename T>
const T* Tensor::data_as() const {
  check_type(data_type_of<T>());
  return reinterpret_cast<const T*>(storage_.get());
}

}  // namespace rsz

#pragma GCC visibility pop
