// One test per validation rule of SEMANTICS.md §1-3: the call throws rsz::Error with the right code, the message
// names the operator and the parameter (and the value), and the output is left untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "rsz/error.h"
#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"
#include "support/test_util.h"

namespace rsz {
namespace {

constexpr float kSentinel = -12345.0f;
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

void expect_rejected(const std::function<void()>& call, ErrorCode code, const std::vector<std::string>& needles,
                     const std::vector<float>* untouched = nullptr) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one naming '" << needles.front() << "'";
    return;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "message must be one line: " << message;
    for (const std::string& needle : needles) {
      EXPECT_NE(message.find(needle), std::string::npos) << "'" << needle << "' missing from: " << message;
    }
  }
  if (untouched) {
    for (float v : *untouched) ASSERT_EQ(v, kSentinel) << "output written after a validation error";
  }
}

// ---- resample ----

struct ResampleCase {
  Tensor input = test::iota_f32({1, 1, 2, 2});
  std::vector<float> out = std::vector<float>(16, kSentinel);
  Dims out_sizes{1, 1, 4, 4};
  ResampleParams params;
  void run() {
    resample(input.const_view(), TensorView(out.data(), DataType::Float32, out_sizes), params);
  }
};

TEST(ResampleValidation, InputRankMustBe4) {
  ResampleCase c;
  Tensor in3 = test::iota_f32({1, 2, 2});
  expect_rejected([&] { resample(in3.const_view(), TensorView(c.out.data(), DataType::Float32, c.out_sizes), {}); },
                  ErrorCode::InvalidShape, {"resample: ", "input has rank 3", "rank 4 is required"}, &c.out);
}

TEST(ResampleValidation, OutputRankMustBe4) {
  ResampleCase c;
  c.out_sizes = {1, 4, 4};
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidShape, {"resample: ", "output has rank 3"}, &c.out);
}

TEST(ResampleValidation, DataTypesMustMatch) {
  ResampleCase c;
  expect_rejected(
      [&] { resample(c.input.const_view(), TensorView(c.out.data(), DataType::Float16, c.out_sizes), {}); },
      ErrorCode::InvalidDataType, {"resample: ", "output has data type float16", "float32"}, &c.out);
}

TEST(ResampleValidation, DataTypeMustBeFloatOrUnorm) {
  ResampleCase c;
  Tensor in = test::make_u32({1, 1, 2, 2}, {1, 2, 3, 4});
  expect_rejected(
      [&] { resample(in.const_view(), TensorView(c.out.data(), DataType::UInt32, c.out_sizes), {}); },
      ErrorCode::InvalidDataType,
      {"resample: ", "input has data type uint32", "float32, float16, unorm8 or unorm16"}, &c.out);
}

TEST(ResampleValidation, SizesMustBePositive) {
  ResampleCase c;
  Tensor empty(DataType::Float32, {1, 1, 0, 2});
  expect_rejected([&] { resample(empty.const_view(), TensorView(c.out.data(), DataType::Float32, c.out_sizes), {}); },
                  ErrorCode::InvalidShape, {"resample: ", "input sizes {1, 1, 0, 2}", ">= 1"}, &c.out);
  c.out_sizes = {1, 1, 0, 4};
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidShape, {"resample: ", "output sizes {1, 1, 0, 4}"}, &c.out);
}

TEST(ResampleValidation, ScalesMustBeFiniteAndPositive) {
  for (const float bad : {0.0f, -2.0f, kInf, kNan, -0.0f}) {
    ResampleCase c;
    c.params.scales = {1, 1, 2, bad};
    expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument,
                    {"resample: ", "scales[3] = ", "finite and > 0"}, &c.out);
  }
}

TEST(ResampleValidation, OffsetsMustBeFinite) {
  ResampleCase c;
  c.params.input_pixel_offsets[1] = kNan;
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument, {"resample: ", "input_pixel_offsets[1] = nan", "finite"},
                  &c.out);
  ResampleCase d;
  d.params.output_pixel_offsets[2] = -kInf;
  expect_rejected([&] { d.run(); }, ErrorCode::InvalidArgument, {"resample: ", "output_pixel_offsets[2] = -inf"},
                  &d.out);
}

TEST(ResampleValidation, OutputElementsMustNotShareAnAddress) {
  ResampleCase c;
  expect_rejected(
      [&] { resample(c.input.const_view(), TensorView(c.out.data(), DataType::Float32, c.out_sizes, {0, 0, 0, 1}), {}); },
      ErrorCode::InvalidShape, {"resample: ", "output strides {0, 0, 0, 1}", "share an address"}, &c.out);
}

TEST(ResampleValidation, OutputMustNotOverlapInput) {
  std::vector<float> buffer(16, kSentinel);
  const ConstTensorView in(buffer.data(), DataType::Float32, {1, 1, 2, 2});
  expect_rejected([&] { resample(in, TensorView(buffer.data() + 3, DataType::Float32, {1, 1, 2, 2}), {}); },
                  ErrorCode::InvalidArgument, {"resample: ", "overlaps an input"}, &buffer);
}

TEST(ResampleValidation, DefaultOutputSizesCheckRankAndScales) {
  EXPECT_EQ(resample_output_sizes({1, 3, 5, 7}, {1, 1, 0.5f, 2.0f}), (Dims{1, 3, 2, 14}));
  EXPECT_EQ(resample_output_sizes({1, 3, 5, 7}, {1, 1, 0.1f, 1.0f}), (Dims{1, 3, 1, 7}));  // max(1, floor(0.5))
  expect_rejected([] { resample_output_sizes({3, 5, 7}, {1, 1, 1, 1}); }, ErrorCode::InvalidShape,
                  {"resample: ", "rank 3"});
  expect_rejected([] { resample_output_sizes({1, 3, 5, 7}, {1, 1, 1, -1}); }, ErrorCode::InvalidArgument,
                  {"resample: ", "scales[3] = -1"});
  expect_rejected([] { resample_output_sizes({1, 3, 5, 7}, {1, 1, 1, 3e38f}); }, ErrorCode::InvalidArgument,
                  {"resample: ", "scales[3] = 3e+38", "int64"});
}

// ---- upsample2d ----

struct UpsampleCase {
  Tensor input = test::iota_f32({1, 1, 2, 2});
  std::vector<float> out = std::vector<float>(24, kSentinel);
  Dims out_sizes{1, 1, 4, 6};
  Upsample2dParams params{InterpolationMode::Nearest, {2, 3}};
  void run() { upsample2d(input.const_view(), TensorView(out.data(), DataType::Float32, out_sizes), params); }
};

TEST(Upsample2dValidation, InputRankMustBe4Or5) {
  UpsampleCase c;
  c.input = test::iota_f32({2, 2});
  c.out_sizes = {4, 6};
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidShape, {"upsample2d: ", "input has rank 2", "4 (NCHW) or 5"},
                  &c.out);
  expect_rejected([] { upsample2d_output_sizes({1, 2, 2}, {2, 2}); }, ErrorCode::InvalidShape,
                  {"upsample2d: ", "rank 3"});
}

TEST(Upsample2dValidation, OutputRankMustMatch) {
  UpsampleCase c;
  c.out_sizes = {1, 1, 1, 4, 6};
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidShape, {"upsample2d: ", "output has rank 5", "rank 4"}, &c.out);
}

TEST(Upsample2dValidation, DataTypesMustMatch) {
  UpsampleCase c;
  expect_rejected(
      [&] { upsample2d(c.input.const_view(), TensorView(c.out.data(), DataType::Float16, c.out_sizes), c.params); },
      ErrorCode::InvalidDataType, {"upsample2d: ", "output has data type float16"}, &c.out);
}

TEST(Upsample2dValidation, ScaleMustBeAtLeastOne) {
  UpsampleCase c;
  c.params.scale_size.height = 0;
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument, {"upsample2d: ", "scale_size.height = 0", "[1, "},
                  &c.out);
  UpsampleCase d;
  d.params.scale_size.width = 0;
  expect_rejected([&] { d.run(); }, ErrorCode::InvalidArgument, {"upsample2d: ", "scale_size.width = 0"}, &d.out);
}

TEST(Upsample2dValidation, ScaleTimesSizeMustFitUint32) {
  UpsampleCase c;
  c.params.scale_size.width = 2147483648u;  // 2 * 2^31 > UINT32_MAX
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument,
                  {"upsample2d: ", "scale_size.width = 2147483648", "[1, 2147483647]", "input width 2"}, &c.out);
}

TEST(Upsample2dValidation, OutputSizesMustEqualInputTimesScale) {
  UpsampleCase c;
  c.out_sizes = {1, 1, 4, 4};
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidShape,
                  {"upsample2d: ", "output sizes {1, 1, 4, 4}", "{1, 1, 4, 6} "}, &c.out);
}

TEST(Upsample2dValidation, OutputMustNotShareAddresses) {
  UpsampleCase c;
  expect_rejected(
      [&] { upsample2d(c.input.const_view(), TensorView(c.out.data(), DataType::Float32, c.out_sizes, {0, 0, 1, 1}), c.params); },
      ErrorCode::InvalidShape, {"upsample2d: ", "share an address"}, &c.out);
}

// ---- roi_align ----

struct RoiCase {
  Tensor input = test::iota_f32({2, 3, 4, 4});
  Tensor rois = test::make_f32({2, 4}, {0, 0, 2, 2, 1, 1, 3, 3});
  Tensor batch_indices = test::make_u32({2}, {0, 1});
  std::vector<float> out = std::vector<float>(2 * 3 * 2 * 2, kSentinel);
  Dims out_sizes{2, 3, 2, 2};
  DataType out_type = DataType::Float32;
  RoiAlignParams params;
  void run() {
    roi_align(input.const_view(), rois.const_view(), batch_indices.const_view(),
              TensorView(out.data(), out_type, out_sizes), params);
  }
};

TEST(RoiAlignValidation, InputMustBeRank4) {
  RoiCase c;
  c.input = test::iota_f32({3, 4, 4});
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidShape, {"roi_align: ", "input has rank 3", "rank 4"}, &c.out);
}

TEST(RoiAlignValidation, InputMustBeFloat) {
  RoiCase c;
  c.input = Tensor(DataType::UInt32, {2, 3, 4, 4});
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidDataType, {"roi_align: ", "input has data type uint32"}, &c.out);
}

TEST(RoiAlignValidation, RoisShape) {
  for (const Dims& bad : {Dims{2, 5}, Dims{2, 1, 4}, Dims{8}, Dims{1, 1, 1, 2, 4}}) {
    RoiCase c;
    c.rois = Tensor(DataType::Float32, bad);
    expect_rejected([&] { c.run(); }, ErrorCode::InvalidShape,
                    {"roi_align: ", "rois has sizes " + dims_to_string(bad), "{R, 4}, {1, R, 4} or {1, 1, R, 4}"},
                    &c.out);
  }
}

TEST(RoiAlignValidation, RoisTypeMustMatchInput) {
  RoiCase c;
  c.rois = test::convert(c.rois.const_view(), DataType::Float16);
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidDataType, {"roi_align: ", "rois has data type float16"}, &c.out);
}

TEST(RoiAlignValidation, BatchIndicesMustBeUint32) {
  RoiCase c;
  c.batch_indices = test::make_f32({2}, {0, 1});
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidDataType,
                  {"roi_align: ", "batch_indices has data type float32", "uint32"}, &c.out);
}

TEST(RoiAlignValidation, BatchIndicesShape) {
  RoiCase c;
  c.batch_indices = test::make_u32({2, 1}, {0, 1});
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidShape, {"roi_align: ", "batch_indices has sizes {2, 1}"}, &c.out);
}

TEST(RoiAlignValidation, RoisAndBatchIndicesMustAgreeOnR) {
  RoiCase c;
  c.batch_indices = test::make_u32({1, 1, 1, 3}, {0, 1, 1});
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidShape,
                  {"roi_align: ", "batch_indices has 3 entries", "rois has 2 rows"}, &c.out);
}

TEST(RoiAlignValidation, OutputShapeMustBeRCOhOw) {
  RoiCase c;
  c.out_sizes = {2, 2, 2, 2};
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidShape,
                  {"roi_align: ", "output sizes {2, 2, 2, 2}", "{2, 3, 2, 2}"}, &c.out);
  RoiCase d;
  d.out_sizes = {2, 3, 0, 2};
  expect_rejected([&] { d.run(); }, ErrorCode::InvalidShape, {"roi_align: ", "output height", "= 0", ">= 1"}, &d.out);
  RoiCase e;
  e.out_type = DataType::Float16;
  expect_rejected([&] { e.run(); }, ErrorCode::InvalidDataType, {"roi_align: ", "output has data type float16"}, &e.out);
  expect_rejected([] { roi_align_output_sizes({1, 3, 4, 4}, {5, 4}, 7, 0); }, ErrorCode::InvalidShape,
                  {"roi_align: ", "output_width = 0"});
  EXPECT_EQ(roi_align_output_sizes({1, 3, 4, 4}, {1, 5, 4}, 7, 6), (Dims{5, 3, 7, 6}));
}

TEST(RoiAlignValidation, MinimumSamplesMustBeAtLeastOne) {
  RoiCase c;
  c.params.minimum_samples_per_output = 0;
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument, {"roi_align: ", "minimum_samples_per_output = 0"},
                  &c.out);
}

TEST(RoiAlignValidation, MinimumMustNotExceedMaximum) {
  RoiCase c;
  c.params.minimum_samples_per_output = 4;
  c.params.maximum_samples_per_output = 2;
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument,
                  {"roi_align: ", "maximum_samples_per_output = 2", "minimum_samples_per_output = 4"}, &c.out);
}

TEST(RoiAlignValidation, SpatialScalesMustBeFinite) {
  RoiCase c;
  c.params.spatial_scale_x = kInf;
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument, {"roi_align: ", "spatial_scale_x = inf"}, &c.out);
  RoiCase d;
  d.params.spatial_scale_y = kNan;
  expect_rejected([&] { d.run(); }, ErrorCode::InvalidArgument, {"roi_align: ", "spatial_scale_y = nan"}, &d.out);
}

TEST(RoiAlignValidation, PixelOffsetsMustBeFinite) {
  RoiCase c;
  c.params.input_pixel_offset = kNan;
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument, {"roi_align: ", "input_pixel_offset = nan"}, &c.out);
  RoiCase d;
  d.params.output_pixel_offset = kInf;
  expect_rejected([&] { d.run(); }, ErrorCode::InvalidArgument, {"roi_align: ", "output_pixel_offset = inf"}, &d.out);
}

TEST(RoiAlignValidation, BatchIndexMustBeBelowN) {
  RoiCase c;
  c.rois = test::make_f32({3, 4}, {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1});
  c.batch_indices = test::make_u32({3}, {0, 1, 7});
  c.out.assign(3 * 3 * 2 * 2, kSentinel);
  c.out_sizes = {3, 3, 2, 2};
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument, {"roi_align: batch_indices[2] = 7 is out of range [0, 2)"},
                  &c.out);
}

TEST(RoiAlignValidation, RoiCoordinatesMustBeFinite) {
  RoiCase c;
  c.rois.data_as<float>()[6] = kNan;
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument, {"roi_align: ", "rois[1][2] (x2) = nan", "finite"},
                  &c.out);
}

TEST(RoiAlignValidation, ScaledRoiCoordinatesMustBeFinite) {
  RoiCase c;
  c.rois.data_as<float>()[1] = 3e38f;
  c.params.spatial_scale_y = 10.0f;
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument,
                  {"roi_align: ", "rois[0][1] (y1) = 3e+38", "spatial_scale_y = 10", "overflows"}, &c.out);
}

TEST(RoiAlignValidation, OutputMustNotOverlapInputs) {
  RoiCase c;
  std::vector<float> shared(200, kSentinel);
  const ConstTensorView rois(shared.data(), DataType::Float32, {2, 4});
  expect_rejected(
      [&] {
        roi_align(c.input.const_view(), rois, c.batch_indices.const_view(),
                  TensorView(shared.data() + 4, DataType::Float32, c.out_sizes), c.params);
      },
      ErrorCode::InvalidArgument, {"roi_align: ", "overlaps an input"}, &shared);
}

TEST(RoiAlignValidation, EmptyRoiListIsANoOp) {
  RoiCase c;
  c.rois = Tensor(DataType::Float32, {0, 4});
  c.batch_indices = Tensor(DataType::UInt32, {0});
  c.out_sizes = {0, 3, 2, 2};
  EXPECT_NO_THROW(c.run());
  for (float v : c.out) EXPECT_EQ(v, kSentinel);
}

}  // namespace
}  // namespace rsz
