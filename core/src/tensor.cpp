#include "rsz/tensor.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <numeric>
#include <sstream>

#include "rsz/error.h"

namespace rsz {

const char* to_string(MemorySpace memory) { return memory == MemorySpace::Host ? "host" : "device"; }
namespace {

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

bool multiply_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

bool add_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) { return __builtin_add_overflow(a, b, out); }

}  // namespace

const char* to_string(DataType type) {
  switch (type) {
    case DataType::Float32: return "float32";
    case DataType::Float16: return "float16";
    case DataType::UInt32: return "uint32";
    case DataType::UNorm8: return "unorm8";
    case DataType::UNorm16: return "unorm16";
  }
  return "unknown";
}

std::size_t element_size(DataType type) {
  switch (type) {
    case DataType::Float32: return 4;
    case DataType::Float16: return 2;
    case DataType::UInt32: return 4;
    case DataType::UNorm8: return 1;
    case DataType::UNorm16: return 2;
  }
  return 0;
}

Dims packed_strides(const Dims& sizes) {
  Dims strides(sizes.size());
  std::int64_t running = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = running;
    if (i > 0 && multiply_overflows(running, std::max<std::int64_t>(sizes[i], 1), &running)) {
      throw Error(ErrorCode::InvalidShape,
                  "tensor with sizes " + dims_to_string(sizes) + ": packed strides overflow int64");
    }
  }
  return strides;
}

std::string dims_to_string(const Dims& dims) {
  std::ostringstream out;
  out << '{';
  for (std::size_t i = 0; i < dims.size(); ++i) out << (i ? ", " : "") << dims[i];
  out << '}';
  return out.str();
}

std::int64_t element_count(const Dims& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), std::int64_t{1}, std::multiplies<>());
}

TensorLayout::TensorLayout(DataType type, Dims sizes, Dims strides)
    : dtype_(type), sizes_(std::move(sizes)), strides_(std::move(strides)) {
  const auto fail = [&](const std::string& what) {
    throw Error(ErrorCode::InvalidShape, "tensor with sizes " + dims_to_string(sizes_) + " and strides " +
                                             dims_to_string(strides_) + ": " + what);
  };
  if (sizes_.empty() || sizes_.size() > static_cast<std::size_t>(kMaxRank)) {
    fail("rank " + std::to_string(sizes_.size()) + " is not allowed; rank must be 1 to " + std::to_string(kMaxRank));
  }
  for (std::int64_t s : sizes_) {
    if (s < 0) fail("size " + std::to_string(s) + " is negative; sizes must be >= 0");
  }
  std::int64_t count = 1;
  for (std::int64_t s : sizes_) {
    if (multiply_overflows(count, s, &count)) fail("the element count overflows int64");
  }
  if (strides_.empty()) {
    strides_ = packed_strides(sizes_);
  } else if (strides_.size() != sizes_.size()) {
    fail("strides have rank " + std::to_string(strides_.size()) + "; it must equal the rank of the sizes, " +
         std::to_string(sizes_.size()));
  }
  for (std::int64_t s : strides_) {
    if (s < 0) fail("stride " + std::to_string(s) + " is negative; strides must be >= 0");
  }
  if (count == 0) return;
  std::int64_t last = 0;
  for (std::size_t i = 0; i < sizes_.size(); ++i) {
    std::int64_t span = 0;
    if (multiply_overflows(sizes_[i] - 1, strides_[i], &span) || add_overflows(last, span, &last)) {
      fail("element offsets overflow int64");
    }
  }
  if (last == kMaxInt64) fail("element offsets overflow int64");
  extent_ = last + 1;
}

bool TensorLayout::has_overlapping_elements() const {
  if (element_count() <= 1) return false;
  // Axes of size 1 never produce a second element. Sorted by stride, each axis must step past everything the
  // smaller-stride axes can reach; otherwise two index tuples meet at one offset.
  std::vector<std::size_t> axes;
  for (std::size_t i = 0; i < sizes_.size(); ++i) {
    if (sizes_[i] > 1) axes.push_back(i);
  }
  std::sort(axes.begin(), axes.end(), [&](std::size_t a, std::size_t b) { return strides_[a] < strides_[b]; });
  std::int64_t reach = 0;  // largest offset reachable with the axes seen so far
  for (std::size_t axis : axes) {
    if (strides_[axis] <= reach) return true;
    reach += (sizes_[axis] - 1) * strides_[axis];
  }
  return false;
}

void* allocate_buffer(std::size_t bytes) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t alignment = bytes >= 2 * kHugePage ? kHugePage : 64;
  if (bytes > std::numeric_limits<std::size_t>::max() - alignment) throw std::bad_alloc();
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
#ifdef __linux__
  if (alignment == kHugePage) ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure changes nothing
#endif
  return p;
}

void free_buffer(void* p) noexcept { std::free(p); }

Tensor::Tensor(DataType type, Dims sizes, TensorInit init) : layout_(type, std::move(sizes)) {
  std::int64_t bytes = 0;
  if (multiply_overflows(layout_.element_count(), static_cast<std::int64_t>(element_size(type)), &bytes)) {
    throw Error(ErrorCode::InvalidShape,
                "tensor with sizes " + dims_to_string(layout_.sizes()) + " is too large to allocate");
  }
  bytes_ = static_cast<std::size_t>(bytes);
  storage_.reset(static_cast<std::byte*>(allocate_buffer(bytes_)));
  if (init == TensorInit::Zero && bytes_ > 0) std::memset(storage_.get(), 0, bytes_);
}

Tensor::Tensor(const Tensor& other)
    : layout_(other.layout_), storage_(static_cast<std::byte*>(allocate_buffer(other.bytes_))), bytes_(other.bytes_) {
  if (bytes_ > 0) std::memcpy(storage_.get(), other.storage_.get(), bytes_);
}

void Tensor::FreeStorage::operator()(std::byte* p) const noexcept { free_buffer(p); }

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

void Tensor::check_type(DataType requested) const {
  if (requested != dtype()) {
    throw Error(ErrorCode::InvalidDataType, std::string("tensor of data type ") + to_string(dtype()) +
                                                " accessed as " + to_string(requested));
  }
}

}  // namespace rsz
