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

// One hierarchy: a broken invariant (RSZ_ASSERT) is an rsz::Error with code Internal, told apart from the caller's
// mistakes by its code, never by a second exception family.
TEST(ErrorHierarchy, InternalErrorsAreErrorsWithTheirOwnCode) {
  const auto broken = [](int x) { RSZ_ASSERT(x == 1); };
  try {
    broken(2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Internal);
    EXPECT_NE(std::string(e.what()).find("assertion 'x == 1' failed"), std::string::npos) << e.what();
    EXPECT_NE(dynamic_cast<const InternalError*>(&e), nullptr);
  }
  EXPECT_NO_THROW(broken(1));
  EXPECT_STREQ(to_string(ErrorCode::Internal), "internal error");
}

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
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument, {"upsample2d: ", "scale_size.height = 0", ">= 1"},
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
  void run() { run_with({}); }
  void run_with(const ExecOptions& options) {
    roi_align(input.const_view(), rois.const_view(), batch_indices.const_view(),
              TensorView(out.data(), out_type, out_sizes), params, options);
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

TEST(RoiAlignValidation, RoiExtentsMustBeFinite) {
  RoiCase c;
  c.rois.data_as<float>()[4] = -3e38f;  // ROI 1: x1 = -3e38, x2 = 3e38, each finite; x2 - x1 overflows
  c.rois.data_as<float>()[6] = 3e38f;
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument,
                  {"roi_align: ", "rois[1]", "width X2 - X1", "overflows float32"}, &c.out);
  RoiCase h;
  h.rois.data_as<float>()[1] = -3e38f;  // ROI 0: the height
  h.rois.data_as<float>()[3] = 3e38f;
  expect_rejected([&] { h.run(); }, ErrorCode::InvalidArgument, {"rois[0]", "height Y2 - Y1"}, &h.out);
}

// An extent overflows where each scaled coordinate is finite but their difference is not, here through the
// spatial scale (and from float16 ROI coordinates, whose float32 extents only overflow scaled).
TEST(RoiAlignValidation, ScaledRoiExtentsMustBeFinite) {
  RoiCase c;
  c.rois = test::make_f32({2, 4}, {0, 0, 2, 2, -2e30f, 1, 2e30f, 3});
  c.params.spatial_scale_x = 1e8f;  // -2e38 and 2e38: finite; the width 4e38 is not
  expect_rejected([&] { c.run(); }, ErrorCode::InvalidArgument,
                  {"roi_align: rois[1]: the scaled width X2 - X1 = 2e+38 - -2e+38 overflows float32",
                   "box extents must be finite"},
                  &c.out);
  std::vector<std::uint16_t> out16(2 * 3 * 2 * 2, 0x1234u);
  const Tensor in16 = test::convert(c.input.const_view(), DataType::Float16);
  const Tensor rois16 = test::convert(test::make_f32({2, 4}, {0, -65504, 2, 65504, 0, 0, 1, 1}).const_view(),
                                      DataType::Float16);
  RoiAlignParams p;
  p.spatial_scale_y = 3e33f;  // +-1.97e38: finite; the height is not
  expect_rejected(
      [&] {
        roi_align(in16.const_view(), rois16.const_view(), c.batch_indices.const_view(),
                  TensorView(out16.data(), DataType::Float16, c.out_sizes), p);
      },
      ErrorCode::InvalidArgument, {"roi_align: rois[0]: the scaled height Y2 - Y1", "overflows float32"});
  for (const std::uint16_t v : out16) ASSERT_EQ(v, 0x1234u) << "output written after a validation error";
}

// The sample budget counts R x C x OH x OW x sy x sx with the per-ROI sample counts of §3.2, in both backends:
// refused above the limit, run at exactly the limit, no limit with 0.
TEST(RoiAlignValidation, SampleBudget) {
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    RoiCase c;  // ROIs 2 x 2 wide, output 2 x 2: one sample per axis each: 2 ROIs x 3 channels x 4 outputs = 24
    ExecOptions options;
    options.backend = backend;
    const auto run = [&](std::uint64_t limit) {
      options.max_samples = limit;
      roi_align(c.input.const_view(), c.rois.const_view(), c.batch_indices.const_view(),
                TensorView(c.out.data(), c.out_type, c.out_sizes), c.params, options);
    };
    expect_rejected([&] { run(23); }, ErrorCode::InvalidArgument,
                    {"roi_align: the ROIs need 24 samples (ROI 0 alone: 2 x 2 outputs x 1 x 1 samples each per "
                     "channel, 3 channels), over the limit of 23 (ExecOptions::max_samples); lower "
                     "maximum_samples_per_output or the ROI sizes"},
                    &c.out);
    run(24);  // exactly at the limit: runs
    for (const float v : c.out) EXPECT_NE(v, kSentinel);
    const std::vector<float> at_limit = c.out;
    std::fill(c.out.begin(), c.out.end(), kSentinel);
    run(0);  // no limit: the same results
    EXPECT_EQ(c.out, at_limit);
    std::fill(c.out.begin(), c.out.end(), kSentinel);
    run(ExecOptions{}.max_samples);  // the default
    EXPECT_EQ(c.out, at_limit);
  }
}

// The default budget (2^36) refuses a [0, 0, 1e7, 1e7] box with adaptive sampling (the default
// maximum_samples_per_output) before any work, naming the largest ROI's counts.
TEST(RoiAlignValidation, SampleBudgetRefusesHugeBoxes) {
  EXPECT_EQ(ExecOptions{}.max_samples, std::uint64_t{1} << 36);
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    RoiCase huge;
    huge.rois = test::make_f32({2, 4}, {0, 0, 1, 1, 0, 0, 1e7f, 1e7f});
    expect_rejected(
        [&] {
          roi_align(huge.input.const_view(), huge.rois.const_view(), huge.batch_indices.const_view(),
                    TensorView(huge.out.data(), huge.out_type, huge.out_sizes), huge.params, {backend, 1});
        },
        ErrorCode::InvalidArgument,
        {"roi_align: the ROIs need 3e+14 samples (ROI 1 alone: 2 x 2 outputs x 5000000 x 5000000 samples each per "
         "channel, 3 channels), over the limit of 68719476736 (ExecOptions::max_samples)"},
        &huge.out);
  }
}

// Counts that overflow uint64 saturate instead of wrapping below the limit: ~3.4e38-wide boxes with
// maximum_samples_per_output = UINT32_MAX need (2^32 - 1)^2 samples per output element.
TEST(RoiAlignValidation, SampleBudgetSaturates) {
  RoiCase c;
  c.rois = test::make_f32({2, 4}, {-1.5e38f, -1.5e38f, 1.5e38f, 1.5e38f, -1.5e38f, -1.5e38f, 1.5e38f, 1.5e38f});
  ExecOptions options;
  options.max_samples = UINT64_MAX - 1;
  expect_rejected([&] { c.run_with(options); }, ErrorCode::InvalidArgument,
                  {"the ROIs need more than 1.8e+19 samples",
                   "2 x 2 outputs x 4294967295 x 4294967295 samples each per channel",
                   "over the limit of 18446744073709551614"},
                  &c.out);
  // The sum over ROIs saturates too: each ROI alone fits in uint64, the two together do not.
  RoiCase one;
  one.input = test::iota_f32({2, 1, 4, 4});
  one.rois = c.rois;
  one.out.assign(2 * 1 * 1 * 1, kSentinel);
  one.out_sizes = {2, 1, 1, 1};
  one.params.maximum_samples_per_output = 3500000000u;  // 3.5e9^2 = 1.2e19 per ROI, 2.4e19 > UINT64_MAX together
  expect_rejected([&] { one.run_with(options); }, ErrorCode::InvalidArgument,
                  {"the ROIs need more than 1.8e+19 samples", "1 x 1 outputs x 3500000000 x 3500000000"}, &one.out);
}

// Many small ROIs add up: the limit is on the sum over all ROIs, and the message names the largest one.
TEST(RoiAlignValidation, SampleBudgetSumsOverRois) {
  RoiCase c;
  std::vector<float> boxes;
  for (int r = 0; r < 100; ++r) boxes.insert(boxes.end(), {0, 0, r == 37 ? 8.0f : 2.0f, 2});
  c.rois = test::make_f32({100, 4}, boxes);
  c.batch_indices = test::make_u32({100}, std::vector<std::uint32_t>(100, 1));
  c.out.assign(100 * 3 * 2 * 2, kSentinel);
  c.out_sizes = {100, 3, 2, 2};
  // 99 ROIs x 12 samples + ROI 37 (4 samples per output along x) x 48 = 1236.
  ExecOptions options;
  options.max_samples = 1235;
  expect_rejected([&] { c.run_with(options); }, ErrorCode::InvalidArgument,
                  {"the ROIs need 1236 samples (ROI 37 alone: 2 x 2 outputs x 1 x 4 samples each per channel"},
                  &c.out);
  options.max_samples = 1236;
  c.run_with(options);
  for (const float v : c.out) EXPECT_NE(v, kSentinel);
}

// check_roi_align runs roi_align's checks over all the ROIs without computing: the same refusals (a batch index out of
// range, a box that overflows, a sample total over the budget summed over every ROI, a shape that does not match),
// nothing for valid arguments; and a call per group of ROIs then gives the same values as one call.
TEST(RoiAlignValidation, CheckWithoutComputingRefusesWhatTheCallRefuses) {
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    ExecOptions options;
    options.backend = backend;
    RoiCase c;
    const auto check = [&](const RoiCase& k, const ExecOptions& o) {
      check_roi_align(k.input.const_view(), k.rois.const_view(), k.batch_indices.const_view(), k.out_type,
                      k.out_sizes, k.params, o);
    };
    check(c, options);  // valid: no error
    RoiCase bad_index = c;
    bad_index.batch_indices = test::make_u32({2}, {0, 2});
    expect_rejected([&] { check(bad_index, options); }, ErrorCode::InvalidArgument, {"roi_align: ", "batch"});
    RoiCase bad_box = c;
    bad_box.rois = test::make_f32({2, 4}, {0, 0, 2, 2, 1, std::nanf(""), 3, 3});
    expect_rejected([&] { check(bad_box, options); }, ErrorCode::InvalidArgument, {"roi_align: rois[1]"});
    RoiCase bad_shape = c;
    bad_shape.out_sizes = {3, 3, 2, 2};
    expect_rejected([&] { check(bad_shape, options); }, ErrorCode::InvalidShape, {"roi_align: output sizes"});
    ExecOptions tight = options;
    tight.max_samples = 23;  // 24 samples for both ROIs; 12 for either alone
    expect_rejected([&] { check(c, tight); }, ErrorCode::InvalidArgument,
                    {"the ROIs need 24 samples", "over the limit of 23"});
    // One call per ROI into a buffer of one crop: the values of the whole call.
    c.run_with(options);
    const std::vector<float> whole = c.out;
    for (std::int64_t r = 0; r < 2; ++r) {
      std::vector<float> one(3 * 2 * 2, kSentinel);
      roi_align(c.input.const_view(),
                ConstTensorView(c.rois.data_as<float>() + 4 * r, DataType::Float32, {1, 4}),
                ConstTensorView(c.batch_indices.data_as<std::uint32_t>() + r, DataType::UInt32, {1}),
                TensorView(one.data(), DataType::Float32, {1, 3, 2, 2}), c.params, options);
      EXPECT_TRUE(std::equal(one.begin(), one.end(), whole.begin() + 12 * r)) << "ROI " << r;
    }
  }
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
