#include "support/test_util.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "rsz/float16.h"

namespace rsz::test {

Tensor make_f32(const Dims& sizes, const std::vector<float>& values) {
  Tensor t(DataType::Float32, sizes);
  if (static_cast<std::int64_t>(values.size()) != t.element_count()) {
    throw std::invalid_argument("make_f32: " + std::to_string(values.size()) + " values for sizes " +
                                dims_to_string(sizes));
  }
  std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

Tensor make_u32(const Dims& sizes, const std::vector<std::uint32_t>& values) {
  Tensor t(DataType::UInt32, sizes);
  if (static_cast<std::int64_t>(values.size()) != t.element_count()) {
    throw std::invalid_argument("make_u32: value count does not match the sizes");
  }
  std::memcpy(t.data(), values.data(), values.size() * sizeof(std::uint32_t));
  return t;
}

Tensor iota_f32(const Dims& sizes) {
  Tensor t(DataType::Float32, sizes);
  float* p = t.data_as<float>();
  for (std::int64_t i = 0; i < t.element_count(); ++i) p[i] = static_cast<float>(i);
  return t;
}

Tensor random_f32(const Dims& sizes, std::uint32_t seed, float lo, float hi) {
  Tensor t(DataType::Float32, sizes);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  float* p = t.data_as<float>();
  for (std::int64_t i = 0; i < t.element_count(); ++i) p[i] = dist(rng);
  return t;
}

namespace {

// Visits every element offset of a layout in packed index order: an odometer over the indices, the offset moved by
// one stride per step (the equivalence tests walk outputs of tens of millions of elements).
template <typename F>
void for_each_offset(const TensorLayout& layout, F&& f) {
  const std::int64_t total = layout.element_count();
  const int rank = layout.rank();
  if (total == 0) return;
  std::vector<std::int64_t> index(static_cast<std::size_t>(rank), 0);
  std::int64_t offset = 0;
  const std::int64_t inner_size = rank > 0 ? layout.size(rank - 1) : 1;
  const std::int64_t inner_stride = rank > 0 ? layout.stride(rank - 1) : 0;
  for (std::int64_t flat = 0; flat < total;) {
    for (std::int64_t i = 0; i < inner_size; ++i) f(flat++, offset + i * inner_stride);
    // Carry into the outer axes.
    for (int a = rank - 2; a >= 0; --a) {
      const auto k = static_cast<std::size_t>(a);
      offset += layout.stride(a);
      if (++index[k] < layout.size(a)) break;
      offset -= index[k] * layout.stride(a);
      index[k] = 0;
    }
  }
}

float load(const void* data, DataType type, std::int64_t offset) {
  if (type == DataType::Float32) return static_cast<const float*>(data)[offset];
  if (type == DataType::Float16) return float16_bits_to_float(static_cast<const std::uint16_t*>(data)[offset]);
  return static_cast<float>(static_cast<const std::uint32_t*>(data)[offset]);
}

}  // namespace

std::vector<float> to_vector(const ConstTensorView& view) {
  std::vector<float> out(static_cast<std::size_t>(view.element_count()));
  for_each_offset(view.layout(), [&](std::int64_t flat, std::int64_t offset) {
    out[static_cast<std::size_t>(flat)] = load(view.data(), view.dtype(), offset);
  });
  return out;
}

Tensor convert(const ConstTensorView& view, DataType type) {
  Tensor t(type, view.sizes());
  const std::vector<float> values = to_vector(view);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (type == DataType::Float32) {
      t.data_as<float>()[i] = values[i];
    } else {
      t.data_as<Float16>()[i] = Float16(values[i]);
    }
  }
  return t;
}

StridedBuffer make_strided(const Dims& sizes, const Dims& strides, float fill, std::int64_t margin) {
  StridedBuffer b;
  b.sizes = sizes;
  b.strides = strides;
  const TensorLayout layout(DataType::Float32, sizes, strides);
  b.storage.assign(static_cast<std::size_t>(layout.extent() + margin), fill);
  return b;
}

void copy_into(const ConstTensorView& packed, StridedBuffer& target) {
  const std::vector<float> values = to_vector(packed);
  for_each_offset(target.view().layout(), [&](std::int64_t flat, std::int64_t offset) {
    target.storage[static_cast<std::size_t>(offset)] = values[static_cast<std::size_t>(flat)];
  });
}

Dims nhwc_strides(const Dims& s) { return {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]}; }

::testing::AssertionResult bits_equal(const std::vector<float>& expected, const std::vector<float>& actual,
                                      const std::string& context) {
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure() << context << ": sizes differ, expected " << expected.size() << " got "
                                         << actual.size();
  }
  if (expected.empty() || std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(float)) == 0) {
    return ::testing::AssertionSuccess();
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(&expected[i], &actual[i], sizeof(float)) != 0) {
      return ::testing::AssertionFailure() << context << ": first mismatch at flat index " << i << ", expected "
                                           << expected[i] << " got " << actual[i];
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult near_equal(const std::vector<float>& expected, const std::vector<float>& actual, float rel,
                                      const std::string& context) {
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure() << context << ": sizes differ, expected " << expected.size() << " got "
                                         << actual.size();
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const float tolerance = rel * std::max(1.0f, std::fabs(expected[i]));
    if (!(std::fabs(expected[i] - actual[i]) <= tolerance)) {
      return ::testing::AssertionFailure() << context << ": first mismatch at flat index " << i << ", expected "
                                           << expected[i] << " got " << actual[i] << " (tolerance " << tolerance
                                           << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

int float16_ulp_distance(float a, float b) {
  // Map float16 bit patterns onto a monotonic integer line.
  const auto ordinal = [](float v) {
    const int bits = float_to_float16_bits(v);
    return (bits & 0x8000) ? -(bits & 0x7fff) : bits;
  };
  return std::abs(ordinal(a) - ordinal(b));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

std::string exif_segment(int orientation, bool little_endian) {
  auto u16 = [&](unsigned v) {
    return little_endian ? std::string{static_cast<char>(v & 0xff), static_cast<char>(v >> 8)}
                         : std::string{static_cast<char>(v >> 8), static_cast<char>(v & 0xff)};
  };
  auto u32 = [&](unsigned v) {
    return little_endian ? u16(v & 0xffff) + u16(v >> 16) : u16(v >> 16) + u16(v & 0xffff);
  };
  std::string tiff = little_endian ? std::string("II") : std::string("MM");
  tiff += u16(42) + u32(8);
  tiff += u16(2);                                                                            // two entries
  tiff += u16(0x010f) + u16(2) + u32(4) + std::string("rsz", 4);                             // Make = "rsz"
  tiff += u16(0x0112) + u16(3) + u32(1) + u16(static_cast<unsigned>(orientation)) + u16(0);  // Orientation
  tiff += u32(0);                                                                            // no next directory
  const std::string payload = std::string("Exif\0\0", 6) + tiff;
  const std::size_t length = payload.size() + 2;
  return std::string("\xff\xe1", 2) + static_cast<char>(length >> 8) + static_cast<char>(length & 0xff) + payload;
}

std::string with_exif_orientation(const std::string& jpeg, int orientation, bool little_endian) {
  return jpeg.substr(0, 2) + exif_segment(orientation, little_endian) + jpeg.substr(2);
}

std::string error_message(const std::function<void()>& call, ErrorCode expected) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), expected) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "no error";
}

}  // namespace rsz::test
