// Helpers shared by the tests: building small tensors, random fills with fixed seeds, and comparisons that print
// every parameter and the first mismatching index with both values.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rsz/error.h"
#include "rsz/tensor.h"

namespace rsz::test {

// A packed float32 tensor holding `values` (its length must match the sizes).
Tensor make_f32(const Dims& sizes, const std::vector<float>& values);
Tensor make_u32(const Dims& sizes, const std::vector<std::uint32_t>& values);
// Values 0, 1, 2, ... in packed order.
Tensor iota_f32(const Dims& sizes);
// Uniform values in [lo, hi) from a fixed seed.
Tensor random_f32(const Dims& sizes, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f);

// Elements of a view as float32 (float16 widened), in packed index order.
std::vector<float> to_vector(const ConstTensorView& view);
// A packed copy of `view` converted to `type` (float32 <-> float16 with round-to-nearest-even).
Tensor convert(const ConstTensorView& view, DataType type);

// A buffer holding a tensor laid out with padding: the view's element (i...) lives at
// offset sum(i_j * stride_j) of a buffer `extent + margin` elements long filled with `fill`.
struct StridedBuffer {
  std::vector<float> storage;
  Dims sizes;
  Dims strides;
  TensorView view() { return TensorView(storage.data(), DataType::Float32, sizes, strides); }
  ConstTensorView cview() const { return ConstTensorView(storage.data(), DataType::Float32, sizes, strides); }
};
StridedBuffer make_strided(const Dims& sizes, const Dims& strides, float fill, std::int64_t margin = 7);
// Copies a packed float32 tensor into a strided buffer's view.
void copy_into(const ConstTensorView& packed, StridedBuffer& target);
// Strides of an NCHW view over an interleaved NHWC buffer.
Dims nhwc_strides(const Dims& nchw_sizes);

// Bitwise float comparison (NaN == NaN of the same bits).
::testing::AssertionResult bits_equal(const std::vector<float>& expected, const std::vector<float>& actual,
                                      const std::string& context);
// |e - a| <= rel * max(1, |e|) everywhere.
::testing::AssertionResult near_equal(const std::vector<float>& expected, const std::vector<float>& actual,
                                      float rel, const std::string& context);

// A whole file's bytes (a failed expectation if it cannot be opened), and a file written with exactly `bytes`.
std::string read_file(const std::string& path);

// The message of the rsz::Error that `call` throws, after checking its code; a test failure (and "no error") when it
// throws none.
std::string error_message(const std::function<void()>& call, ErrorCode expected);
void write_file(const std::string& path, const std::string& bytes);

// An APP1 Exif segment holding a Make tag and the orientation tag (1-8; others are invalid), in big- or
// little-endian TIFF order; inserted right after a JPEG's SOI marker it gives the image that orientation.
std::string exif_segment(int orientation, bool little_endian);
// A JPEG file's bytes with an Exif orientation segment inserted after its SOI marker.
std::string with_exif_orientation(const std::string& jpeg, int orientation, bool little_endian = false);

// Distance in float16 ulps between two float16 values given as floats (they must be float16-representable).
int float16_ulp_distance(float a, float b);

}  // namespace rsz::test
