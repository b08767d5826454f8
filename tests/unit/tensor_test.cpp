#include <gtest/gtest.h>

#include "rsz/error.h"
#include "rsz/tensor.h"

namespace rsz {
namespace {

TEST(TensorLayout, PackedStridesAndExtent) {
  const TensorLayout layout(DataType::Float32, {2, 3, 4, 5});
  EXPECT_EQ(layout.strides(), (Dims{60, 20, 5, 1}));
  EXPECT_EQ(layout.extent(), 120);
  EXPECT_EQ(layout.element_count(), 120);
  EXPECT_TRUE(layout.is_packed());
  EXPECT_FALSE(layout.has_overlapping_elements());
}

TEST(TensorLayout, InterleavedImageViewedAsNchw) {
  // A 2x3 RGB image stored HWC, viewed as NCHW {1, 3, 2, 3}.
  const TensorLayout layout(DataType::Float32, {1, 3, 2, 3}, {18, 1, 9, 3});
  EXPECT_EQ(layout.extent(), 18);
  EXPECT_FALSE(layout.is_packed());
  EXPECT_FALSE(layout.has_overlapping_elements());
}

TEST(TensorLayout, OverlapDetection) {
  EXPECT_TRUE(TensorLayout(DataType::Float32, {1, 1, 2, 3}, {0, 0, 0, 1}).has_overlapping_elements());
  EXPECT_TRUE(TensorLayout(DataType::Float32, {1, 1, 2, 3}, {6, 6, 2, 1}).has_overlapping_elements());
  EXPECT_FALSE(TensorLayout(DataType::Float32, {1, 1, 2, 3}, {0, 0, 3, 1}).has_overlapping_elements());
  EXPECT_FALSE(TensorLayout(DataType::Float32, {1, 1, 2, 3}, {0, 0, 10, 2}).has_overlapping_elements());
  EXPECT_FALSE(TensorLayout(DataType::Float32, {1, 1, 1, 1}, {0, 0, 0, 0}).has_overlapping_elements());
}

TEST(TensorLayout, EmptyTensorHasNoExtent) {
  const TensorLayout layout(DataType::Float16, {0, 3});
  EXPECT_EQ(layout.element_count(), 0);
  EXPECT_EQ(layout.extent(), 0);
}

TEST(TensorLayout, RejectsBadShapes) {
  const auto expect_shape_error = [](auto&& make, const char* needle) {
    try {
      make();
      FAIL() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidShape);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_shape_error([] { TensorLayout(DataType::Float32, {}); }, "rank 0");
  expect_shape_error([] { TensorLayout(DataType::Float32, {1, 1, 1, 1, 1, 1}); }, "rank 6");
  expect_shape_error([] { TensorLayout(DataType::Float32, {2, -1}); }, "size -1");
  expect_shape_error([] { TensorLayout(DataType::Float32, {2, 3}, {3}); }, "strides have rank 1");
  expect_shape_error([] { TensorLayout(DataType::Float32, {2, 3}, {-3, 1}); }, "stride -3");
  expect_shape_error([] { TensorLayout(DataType::Float32, {1 << 30, 1 << 30, 1 << 30}); }, "overflows");
  expect_shape_error([] { TensorLayout(DataType::Float32, {3, 2}, {INT64_MAX / 2, 1}); }, "overflow");
  expect_shape_error([] { TensorLayout(DataType::Float16, {0, 1LL << 40, 1LL << 40}); }, "packed strides overflow");
  expect_shape_error([] { Tensor(DataType::Float32, {(1LL << 62) + 1}); }, "too large");
}

TEST(Tensor, OwnsZeroedPackedStorageAndChecksTypedAccess) {
  Tensor t(DataType::Float16, {2, 3});
  EXPECT_EQ(t.byte_size(), 12u);
  EXPECT_EQ(t.data_as<Float16>()[5].bits(), 0);
  EXPECT_THROW(t.data_as<float>(), Error);
  const TensorView v = t.view();
  const ConstTensorView cv = v;
  EXPECT_EQ(cv.data(), t.data());
  EXPECT_EQ(cv.byte_end() - cv.byte_begin(), 12);
}

TEST(DataType, NamesAndSizes) {
  EXPECT_STREQ(to_string(DataType::Float32), "float32");
  EXPECT_STREQ(to_string(DataType::Float16), "float16");
  EXPECT_STREQ(to_string(DataType::UInt32), "uint32");
  EXPECT_EQ(element_size(DataType::Float16), 2u);
  EXPECT_EQ(dims_to_string({1, 3, 224, 224}), "{1, 3, 224, 224}");
}

}  // namespace
}  // namespace rsz
