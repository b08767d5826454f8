// External goldens: the ONNX 1.12 backend node tests of SEMANTICS.md §6, converted to .npy by
// tests/data/make_onnx_goldens.py (sources in tests/data/onnx/SOURCES.md), run through rsz with the §6 mapping.
//   nearest: bit-exact; linear and ROI average: |diff| <= 1e-5 * max(1, |expected|) (SEMANTICS.md §5);
//   float16 runs: within 1 float16 ulp of the float32 result rounded to float16 (nearest: identical).
// Every case runs on Backend::Reference and Backend::Auto.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "rsz/float16.h"
#include "rsz/io/npy.h"
#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/tensor.h"
#include "rsz/upsample2d.h"

namespace rsz {
namespace {

constexpr float kLinearTolerance = 1e-5f;  // SEMANTICS.md §5, relative to max(1, |expected|)
// ONNX's RoiAlign expected outputs are 4-decimal literals that differ from an exact evaluation on the shipped input
// by up to 8.4e-5 (tests/data/onnx/SOURCES.md); they can confirm rsz only to this accuracy. The strict §5 tolerance
// is applied against output_recomputed.npy, the float64 evaluation of the ONNX formula.
constexpr float kOnnxRoiLiteralAccuracy = 1e-4f;

const Backend kBackends[] = {Backend::Reference, Backend::Auto};

Tensor load(const std::string& onnx_case, const std::string& file) {
  return io::read_npy(std::string(RSZ_TEST_DATA_DIR) + "/onnx/" + onnx_case + "/" + file);
}

std::vector<float> values_of(const Tensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.element_count()));
  if (t.dtype() == DataType::Float16) {
    const Float16* p = t.data_as<Float16>();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = p[i].to_float();
  } else {
    const float* p = t.data_as<float>();
    out.assign(p, p + out.size());
  }
  return out;
}

// float32 -> float16 (round to nearest even) or float16 -> float32 (exact), packed.
Tensor converted(const Tensor& t, DataType type) {
  Tensor out(type, t.sizes());
  const std::vector<float> values = values_of(t);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (type == DataType::Float16) {
      out.data_as<Float16>()[i] = Float16(values[i]);
    } else {
      out.data_as<float>()[i] = values[i];
    }
  }
  return out;
}

// Distance in float16 steps between two finite float16 values.
int float16_ulps(Float16 a, Float16 b) {
  const auto ordered = [](Float16 h) {
    const int magnitude = h.bits() & 0x7fff;
    return (h.bits() & 0x8000) ? -magnitude : magnitude;
  };
  return std::abs(ordered(a) - ordered(b));
}

float float16_ulp_at(float value) {
  const Float16 h(std::fabs(value));
  return Float16::from_bits(static_cast<std::uint16_t>(h.bits() + 1)).to_float() - h.to_float();
}

std::string index_string(const Dims& sizes, std::size_t flat) {
  Dims index(sizes.size());
  for (std::size_t axis = sizes.size(); axis-- > 0;) {
    index[axis] = static_cast<std::int64_t>(flat) % sizes[axis];
    flat /= static_cast<std::size_t>(sizes[axis]);
  }
  return dims_to_string(index);
}

// Compares element by element with `ok(expected, got)`; on failure lists the mismatching indices with both values.
::testing::AssertionResult compare(const std::vector<float>& expected, const std::vector<float>& got, const Dims& sizes,
                                   const std::function<bool(float, float)>& ok, const std::string& rule) {
  if (expected.size() != got.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << expected.size() << " expected, " << got.size()
                                         << " got";
  }
  std::ostringstream report;
  report.precision(9);
  int bad = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (ok(expected[i], got[i])) continue;
    if (++bad <= 10) {
      report << "\n  at " << index_string(sizes, i) << ": expected " << expected[i] << ", got " << got[i] << " (diff "
             << got[i] - expected[i] << ")";
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << expected.size() << " elements break " << rule << ":"
                                       << report.str();
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool within_linear_tolerance(float expected, float got) {
  return std::fabs(got - expected) <= kLinearTolerance * std::fmax(1.0f, std::fabs(expected));
}

::testing::AssertionResult compare_float32(InterpolationMode mode, const Tensor& expected, const Tensor& got) {
  if (mode == InterpolationMode::Nearest) {
    return compare(values_of(expected), values_of(got), got.sizes(), same_bits, "bit-exact equality");
  }
  return compare(values_of(expected), values_of(got), got.sizes(), within_linear_tolerance,
                 "|diff| <= 1e-5 * max(1, |expected|)");
}

// float16 results against float32 results rounded to float16: identical for nearest, within 1 ulp otherwise.
::testing::AssertionResult compare_float16(InterpolationMode mode, const Tensor& float32_result, const Tensor& got16) {
  const int allowed = mode == InterpolationMode::Nearest ? 0 : 1;
  return compare(
      values_of(float32_result), values_of(got16), got16.sizes(),
      [allowed](float e, float g) { return float16_ulps(Float16(e), Float16(g)) <= allowed; },
      allowed == 0 ? "equality with the float32 result rounded to float16"
                   : "1 float16 ulp of the float32 result rounded to float16");
}

// "resize_upsample_scales_nearest_reference": the ONNX case without "test_", and the backend.
std::string test_name(const char* onnx_case, Backend backend) {
  return std::string(onnx_case).substr(5) + "_" + to_string(backend);
}

// ---------------------------------------------------------------------------------------------------------------
// Resize (RESAMPLE1)

enum class ScaleRule {
  CaseScales,    // the case's scales.npy
  AlignCorners,  // (out - 1) / (in - 1), float32
  OutOverIn,     // out / in, float32
};

// How the ONNX case sets its output size: a scales input (output floor(n * s)) or a sizes input.
enum class SizeInput { Scales, Sizes };

struct ResizeCase {
  const char* name;
  SizeInput size_input;
  InterpolationMode mode;
  ScaleRule rule;
  float input_offset;
  float output_offset;
};

// SEMANTICS.md §6.
const ResizeCase kResizeCases[] = {
    {"test_resize_upsample_scales_nearest", SizeInput::Scales, InterpolationMode::Nearest, ScaleRule::CaseScales, 0.5f,
     -0.5f},
    {"test_resize_downsample_scales_nearest", SizeInput::Scales, InterpolationMode::Nearest, ScaleRule::CaseScales,
     0.5f, -0.5f},
    {"test_resize_upsample_sizes_nearest_floor_align_corners", SizeInput::Sizes, InterpolationMode::Nearest,
     ScaleRule::AlignCorners, 0.5f, 0.0f},
    {"test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric", SizeInput::Sizes, InterpolationMode::Nearest,
     ScaleRule::OutOverIn, 0.0f, 0.0f},
    {"test_resize_upsample_scales_linear", SizeInput::Scales, InterpolationMode::Linear, ScaleRule::CaseScales, 0.5f,
     -0.5f},
    {"test_resize_downsample_scales_linear", SizeInput::Scales, InterpolationMode::Linear, ScaleRule::CaseScales, 0.5f,
     -0.5f},
    {"test_resize_upsample_scales_linear_align_corners", SizeInput::Scales, InterpolationMode::Linear,
     ScaleRule::AlignCorners, 0.0f, 0.0f},
};

// The §6 parameters for a case: H and W by the case's rule, N and C scale 1; the same offsets on every axis.
// Also checks that the golden's output sizes are the ones the case's scales or sizes input asks for.
ResampleParams resize_params(const ResizeCase& c, const Dims& in, const Dims& out) {
  ResampleParams params;
  params.interpolation = c.mode;
  std::vector<float> case_scales;
  if (c.size_input == SizeInput::Scales) {
    case_scales = values_of(load(c.name, "scales.npy"));
    EXPECT_EQ(case_scales.size(), 4u);
    EXPECT_EQ(case_scales.at(0), 1.0f);
    EXPECT_EQ(case_scales.at(1), 1.0f);
    // ONNX sizes a scales output floor(n * s), as SEMANTICS.md §1.6 does.
    EXPECT_EQ(resample_output_sizes(in, {case_scales.at(0), case_scales.at(1), case_scales.at(2), case_scales.at(3)}),
              out);
  } else {
    const std::vector<float> sizes = values_of(load(c.name, "sizes.npy"));
    EXPECT_EQ(sizes.size(), 4u);
    for (std::size_t axis = 0; axis < 4; ++axis) EXPECT_EQ(sizes.at(axis), static_cast<float>(out[axis]));
  }
  for (std::size_t axis = 0; axis < 4; ++axis) {
    float scale = 1.0f;
    if (axis >= 2) {
      switch (c.rule) {
        case ScaleRule::CaseScales: scale = case_scales.at(axis); break;
        case ScaleRule::AlignCorners:
          scale = static_cast<float>(out[axis] - 1) / static_cast<float>(in[axis] - 1);
          break;
        case ScaleRule::OutOverIn: scale = static_cast<float>(out[axis]) / static_cast<float>(in[axis]); break;
      }
    } else {
      EXPECT_EQ(in[axis], out[axis]) << "axis " << axis;
    }
    params.scales[axis] = scale;
    params.input_pixel_offsets[axis] = c.input_offset;
    params.output_pixel_offsets[axis] = c.output_offset;
  }
  return params;
}

Tensor run_resample(const Tensor& input, const Dims& out_sizes, const ResampleParams& params, Backend backend) {
  Tensor out(input.dtype(), out_sizes);
  resample(input.const_view(), out.view(), params, {backend, 0});
  return out;
}

class OnnxResizeGolden : public ::testing::TestWithParam<std::tuple<int, Backend>> {
 protected:
  const ResizeCase& onnx_case() const { return kResizeCases[std::get<0>(GetParam())]; }
  Backend backend() const { return std::get<1>(GetParam()); }
};

TEST_P(OnnxResizeGolden, Float32MatchesOnnx) {
  const ResizeCase& c = onnx_case();
  SCOPED_TRACE(c.name);
  const Tensor input = load(c.name, "input.npy");
  const Tensor expected = load(c.name, "output.npy");
  const ResampleParams params = resize_params(c, input.sizes(), expected.sizes());
  const Tensor got = run_resample(input, expected.sizes(), params, backend());
  EXPECT_TRUE(compare_float32(c.mode, expected, got));
}

TEST_P(OnnxResizeGolden, Float16WithinOneUlp) {
  const ResizeCase& c = onnx_case();
  SCOPED_TRACE(c.name);
  const Tensor input = load(c.name, "input.npy");
  const Tensor expected = load(c.name, "output.npy");
  const ResampleParams params = resize_params(c, input.sizes(), expected.sizes());
  const Tensor input16 = converted(input, DataType::Float16);
  // These inputs are small integers, exact in float16: the float32 result on them is ONNX's output itself.
  ASSERT_TRUE(compare(values_of(input), values_of(input16), input.sizes(), same_bits, "exactness in float16"));
  const Tensor got16 = run_resample(input16, expected.sizes(), params, backend());
  EXPECT_TRUE(compare_float16(c.mode, expected, got16));
  const Tensor ours32 = run_resample(input, expected.sizes(), params, Backend::Reference);
  EXPECT_TRUE(compare_float16(c.mode, ours32, got16));
}

INSTANTIATE_TEST_SUITE_P(Cases, OnnxResizeGolden,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kResizeCases))),
                                            ::testing::ValuesIn(kBackends)),
                         [](const ::testing::TestParamInfo<std::tuple<int, Backend>>& param_info) {
                           return test_name(kResizeCases[std::get<0>(param_info.param)].name,
                                            std::get<1>(param_info.param));
                         });

// ---------------------------------------------------------------------------------------------------------------
// Upsample (UPSAMPLE_2D)

class OnnxUpsampleGolden : public ::testing::TestWithParam<Backend> {};

constexpr const char* kUpsampleCase = "test_upsample_nearest";

Upsample2dParams upsample_params() {
  const std::vector<float> scales = values_of(load(kUpsampleCase, "scales.npy"));
  EXPECT_EQ(scales, (std::vector<float>{1.0f, 1.0f, 2.0f, 3.0f}));
  Upsample2dParams params;
  params.interpolation = InterpolationMode::Nearest;
  params.scale_size = {2, 3};
  return params;
}

TEST_P(OnnxUpsampleGolden, Float32MatchesOnnx) {
  const Tensor input = load(kUpsampleCase, "input.npy");
  const Tensor expected = load(kUpsampleCase, "output.npy");
  const Upsample2dParams params = upsample_params();
  ASSERT_EQ(upsample2d_output_sizes(input.sizes(), params.scale_size), expected.sizes());
  Tensor got(DataType::Float32, expected.sizes());
  upsample2d(input.const_view(), got.view(), params, {GetParam(), 0});
  EXPECT_TRUE(compare_float32(InterpolationMode::Nearest, expected, got));
}

TEST_P(OnnxUpsampleGolden, Float16Identical) {
  const Tensor input = load(kUpsampleCase, "input.npy");
  const Tensor expected = load(kUpsampleCase, "output.npy");
  const Tensor input16 = converted(input, DataType::Float16);
  Tensor got16(DataType::Float16, expected.sizes());
  upsample2d(input16.const_view(), got16.view(), upsample_params(), {GetParam(), 0});
  EXPECT_TRUE(compare_float16(InterpolationMode::Nearest, expected, got16));
}

INSTANTIATE_TEST_SUITE_P(Backends, OnnxUpsampleGolden, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<Backend>& param_info) {
                           return to_string(param_info.param);
                         });

// ---------------------------------------------------------------------------------------------------------------
// RoiAlign (ROI_ALIGN)

struct RoiCase {
  const char* name;
  float input_pixel_offset;
};

// SEMANTICS.md §6: linear average, min = max = 2 samples; aligned_false is input_pixel_offset 0.
const RoiCase kRoiCases[] = {
    {"test_roialign_aligned_true", 0.5f},
    {"test_roialign_aligned_false", 0.0f},
};

RoiAlignParams roi_params(const RoiCase& c) {
  RoiAlignParams params;
  params.reduction = RoiReduction::Average;
  params.interpolation = InterpolationMode::Linear;
  params.spatial_scale_x = 1.0f;
  params.spatial_scale_y = 1.0f;
  params.minimum_samples_per_output = 2;
  params.maximum_samples_per_output = 2;
  params.input_pixel_offset = c.input_pixel_offset;
  params.output_pixel_offset = -0.5f;
  return params;
}

Tensor run_roi_align(const Tensor& input, const Tensor& rois, const Tensor& batch_indices, const Dims& out_sizes,
                     const RoiAlignParams& params, Backend backend) {
  Tensor out(input.dtype(), out_sizes);
  roi_align(input.const_view(), rois.const_view(), batch_indices.const_view(), out.view(), params, {backend, 0});
  return out;
}

class OnnxRoiAlignGolden : public ::testing::TestWithParam<std::tuple<int, Backend>> {
 protected:
  void SetUp() override {
    const RoiCase& c = onnx_case();
    input_ = load(c.name, "input.npy");
    rois_ = load(c.name, "rois.npy");
    batch_indices_ = load(c.name, "batch_indices.npy");
    onnx_output_ = load(c.name, "output.npy");
    recomputed_ = load(c.name, "output_recomputed.npy");
    ASSERT_EQ(recomputed_.sizes(), onnx_output_.sizes());
    ASSERT_EQ(roi_align_output_sizes(input_.sizes(), rois_.sizes(), 5, 5), onnx_output_.sizes());
  }
  const RoiCase& onnx_case() const { return kRoiCases[std::get<0>(GetParam())]; }
  Backend backend() const { return std::get<1>(GetParam()); }

  Tensor input_{DataType::Float32, {1}};
  Tensor rois_{DataType::Float32, {1}};
  Tensor batch_indices_{DataType::UInt32, {1}};
  Tensor onnx_output_{DataType::Float32, {1}};
  Tensor recomputed_{DataType::Float32, {1}};
};

TEST_P(OnnxRoiAlignGolden, Float32MatchesOnnx) {
  SCOPED_TRACE(onnx_case().name);
  const Tensor got =
      run_roi_align(input_, rois_, batch_indices_, onnx_output_.sizes(), roi_params(onnx_case()), backend());
  EXPECT_TRUE(compare_float32(InterpolationMode::Linear, recomputed_, got))
      << "against output_recomputed.npy (the ONNX formula in float64)";
  EXPECT_TRUE(compare(
      values_of(onnx_output_), values_of(got), got.sizes(),
      [](float e, float g) { return std::fabs(g - e) <= kOnnxRoiLiteralAccuracy; },
      "|diff| <= 1e-4 (the accuracy of ONNX's 4-decimal literal)"))
      << "against output.npy (ONNX's Y as shipped)";
}

TEST_P(OnnxRoiAlignGolden, Float16WithinOneUlp) {
  SCOPED_TRACE(onnx_case().name);
  const RoiAlignParams params = roi_params(onnx_case());
  const Tensor input16 = converted(input_, DataType::Float16);
  const Tensor rois16 = converted(rois_, DataType::Float16);
  const Tensor got16 = run_roi_align(input16, rois16, batch_indices_, onnx_output_.sizes(), params, backend());
  // The float32 result on the same (float16-quantized) data.
  const Tensor ours32 = run_roi_align(converted(input16, DataType::Float32), converted(rois16, DataType::Float32),
                                      batch_indices_, onnx_output_.sizes(), params, Backend::Reference);
  EXPECT_TRUE(compare_float16(InterpolationMode::Linear, ours32, got16));
  // Against the exact result on the unquantized data: every ROI here lies inside the image, so each output is a
  // convex combination of input values and moves by at most the largest input quantization error, plus the final
  // rounding of half a float16 ulp.
  const std::vector<float> in32 = values_of(input_);
  const std::vector<float> in16 = values_of(input16);
  float quantization = 0.0f;
  for (std::size_t i = 0; i < in32.size(); ++i) quantization = std::fmax(quantization, std::fabs(in16[i] - in32[i]));
  ASSERT_GT(quantization, 0.0f) << "the input should not be exact in float16";
  ASSERT_EQ(values_of(rois16), values_of(rois_)) << "integer ROI corners are exact in float16";
  EXPECT_TRUE(compare(
      values_of(recomputed_), values_of(got16), got16.sizes(),
      [quantization](float e, float g) { return std::fabs(g - e) <= quantization + 0.5f * float16_ulp_at(e) + 1e-6f; },
      "|diff| <= input quantization + half a float16 ulp"));
}

INSTANTIATE_TEST_SUITE_P(Cases, OnnxRoiAlignGolden,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kRoiCases))),
                                            ::testing::ValuesIn(kBackends)),
                         [](const ::testing::TestParamInfo<std::tuple<int, Backend>>& param_info) {
                           return test_name(kRoiCases[std::get<0>(param_info.param)].name,
                                            std::get<1>(param_info.param));
                         });

// ---------------------------------------------------------------------------------------------------------------
// Cases that do NOT match by design (SEMANTICS.md §6): ONNX's default nearest_mode round_prefer_floor sends exact
// ties down, rsz sends them up. With half_pixel offsets and scale out/in, rsz must equal the ties-up choice made
// from the exact (float64) coordinate, ONNX's output the ties-down choice, and the two must differ somewhere.

class OnnxNearestTiesByDesign : public ::testing::TestWithParam<std::tuple<const char*, Backend>> {};

TEST_P(OnnxNearestTiesByDesign, OnnxRoundsTiesDownRszRoundsThemUp) {
  const std::string name = std::get<0>(GetParam());
  const Tensor input = load(name, "input.npy");
  const Tensor onnx_output = load(name, "output.npy");
  const Dims& in = input.sizes();
  const Dims& out = onnx_output.sizes();
  const ResizeCase c{name.c_str(), SizeInput::Sizes, InterpolationMode::Nearest, ScaleRule::OutOverIn, 0.5f, -0.5f};
  const Tensor got = run_resample(input, out, resize_params(c, in, out), std::get<1>(GetParam()));

  // Per axis and output index: the source index with ties rounded up (rsz) and down (ONNX).
  std::vector<std::vector<std::int64_t>> up(4), down(4);
  int ties = 0;
  for (std::size_t axis = 0; axis < 4; ++axis) {
    for (std::int64_t o = 0; o < out[axis]; ++o) {
      const double x =
          (static_cast<double>(o) + 0.5) * static_cast<double>(in[axis]) / static_cast<double>(out[axis]) - 0.5;
      const bool tie = std::fabs(x - (std::floor(x) + 0.5)) < 1e-9;
      ties += tie;
      const auto clamp = [&](double i) {
        return std::min<std::int64_t>(static_cast<std::int64_t>(std::max(0.0, i)), in[axis] - 1);
      };
      up[axis].push_back(clamp(std::floor(x + 0.5)));
      down[axis].push_back(clamp(tie ? std::floor(x) : std::floor(x + 0.5)));
    }
  }
  ASSERT_GT(ties, 0) << name << " has no exact tie";
  const auto pick = [&](const std::vector<std::vector<std::int64_t>>& rule) {
    Tensor picked(DataType::Float32, out);
    const std::vector<float> source = values_of(input);
    float* p = picked.data_as<float>();
    for (std::int64_t n = 0; n < out[0]; ++n)
      for (std::int64_t ch = 0; ch < out[1]; ++ch)
        for (std::int64_t h = 0; h < out[2]; ++h)
          for (std::int64_t w = 0; w < out[3]; ++w) {
            const auto i = [&](std::size_t axis, std::int64_t o) { return rule[axis][static_cast<std::size_t>(o)]; };
            *p++ = source[static_cast<std::size_t>(((i(0, n) * in[1] + i(1, ch)) * in[2] + i(2, h)) * in[3] + i(3, w))];
          }
    return picked;
  };
  EXPECT_TRUE(compare_float32(InterpolationMode::Nearest, pick(up), got)) << "rsz against ties-up";
  EXPECT_TRUE(compare_float32(InterpolationMode::Nearest, pick(down), onnx_output)) << "ONNX against ties-down";
  EXPECT_FALSE(compare_float32(InterpolationMode::Nearest, onnx_output, got)) << "rsz unexpectedly matches ONNX";
}

INSTANTIATE_TEST_SUITE_P(Cases, OnnxNearestTiesByDesign,
                         ::testing::Combine(::testing::Values("test_resize_upsample_sizes_nearest",
                                                              "test_resize_downsample_sizes_nearest"),
                                            ::testing::ValuesIn(kBackends)),
                         [](const ::testing::TestParamInfo<std::tuple<const char*, Backend>>& param_info) {
                           return test_name(std::get<0>(param_info.param), std::get<1>(param_info.param));
                         });

// ---------------------------------------------------------------------------------------------------------------
// RESAMPLE2's rounding directions (SEMANTICS.md §1.2) make ONNX's nearest modes exact with ONNX's own coordinates,
// no offset emulation: nearest_mode round_prefer_floor (ONNX's default, the two cases above) is
// NearestRounding::RoundPreferFloor with half_pixel offsets 0.5 / -0.5, and nearest_mode floor with align_corners
// is NearestRounding::Floor with offsets 0 / 0. Both give ONNX's output bit for bit.

struct RoundingCase {
  const char* name;
  NearestRounding rounding;
  ScaleRule rule;
  float input_offset;
  float output_offset;
};

const RoundingCase kRoundingCases[] = {
    {"test_resize_upsample_sizes_nearest", NearestRounding::RoundPreferFloor, ScaleRule::OutOverIn, 0.5f, -0.5f},
    {"test_resize_downsample_sizes_nearest", NearestRounding::RoundPreferFloor, ScaleRule::OutOverIn, 0.5f, -0.5f},
    {"test_resize_upsample_sizes_nearest_floor_align_corners", NearestRounding::Floor, ScaleRule::AlignCorners, 0.0f,
     0.0f},
};

class OnnxNearestModes : public ::testing::TestWithParam<std::tuple<int, Backend>> {};

TEST_P(OnnxNearestModes, RoundingDirectionMatchesOnnxBitForBit) {
  const RoundingCase& rc = kRoundingCases[std::get<0>(GetParam())];
  SCOPED_TRACE(rc.name);
  const Tensor input = load(rc.name, "input.npy");
  const Tensor expected = load(rc.name, "output.npy");
  const ResizeCase c{rc.name, SizeInput::Sizes, InterpolationMode::Nearest, rc.rule, rc.input_offset,
                     rc.output_offset};
  ResampleParams params = resize_params(c, input.sizes(), expected.sizes());
  params.rounding_direction = rc.rounding;
  const Tensor got = run_resample(input, expected.sizes(), params, std::get<1>(GetParam()));
  EXPECT_TRUE(compare(values_of(expected), values_of(got), got.sizes(), same_bits, "bit-exact equality"));
}

INSTANTIATE_TEST_SUITE_P(Cases, OnnxNearestModes,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kRoundingCases))),
                                            ::testing::ValuesIn(kBackends)),
                         [](const ::testing::TestParamInfo<std::tuple<int, Backend>>& param_info) {
                           return test_name(kRoundingCases[std::get<0>(param_info.param)].name,
                                            std::get<1>(param_info.param));
                         });

}  // namespace
}  // namespace rsz
