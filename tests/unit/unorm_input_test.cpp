// Resampling unorm8/unorm16 inputs (an interleaved image read in place, as the CLI does) gives the same bits as
// resampling the float32 tensor io::image_to_tensor makes of the same image: for both backends, nearest and linear,
// up- and downscales, several offset conventions, thread counts, and float32 and float16 outputs; likewise
// upsample2d and roi_align (plane and channels-last paths). Also the data type rules: unorm is an input type only.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rsz/error.h"
#include "rsz/float16.h"
#include "rsz/io/image.h"
#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"

namespace rsz {
namespace {

io::Image make_image(std::int64_t w, std::int64_t h, int channels, int bits) {
  io::Image image;
  image.width = w;
  image.height = h;
  image.channels = channels;
  image.bit_depth = bits;
  const auto samples = static_cast<std::size_t>(w * h * channels);
  std::uint32_t state = 7;
  for (std::size_t i = 0; i < samples; ++i) {
    state = state * 1103515245u + 12345u;
    // Every extreme appears: 0, the maximum, and values between.
    const std::uint32_t v = i % 17 == 0 ? 0 : i % 13 == 0 ? 0xffffffffu : state >> 8;
    if (bits == 8) {
      image.data8.push_back(static_cast<std::uint8_t>(v & 0xff));
    } else {
      image.data16.push_back(static_cast<std::uint16_t>(v & 0xffff));
    }
  }
  return image;
}

ConstTensorView unorm_view(const io::Image& image) {
  const std::int64_t c = image.channels;
  const void* data = image.bit_depth == 8 ? static_cast<const void*>(image.data8.data()) : image.data16.data();
  return ConstTensorView(data, image.bit_depth == 8 ? DataType::UNorm8 : DataType::UNorm16,
                         {1, c, image.height, image.width}, {image.height * image.width * c, 1, image.width * c, c});
}

struct Case {
  float sy, sx;
  float in_offset, out_offset;
};

TEST(UnormInput, ResampleMatchesTheFloatTensorOfTheSameImage) {
  const Case cases[] = {{0.5f, 0.5f, 0.5f, -0.5f},     {2.0f, 2.0f, 0.5f, -0.5f}, {0.37f, 1.7f, 0.5f, -0.5f},
                        {224.0f / 61, 0.11f, 0.5f, -0.5f}, {1.0f, 1.0f, 0.5f, -0.5f}, {0.45f, 3.0f, 0.0f, 0.0f},
                        {0.8f, 0.25f, 0.5f, 0.0f}};
  int checked = 0;
  for (const int bits : {8, 16}) {
    for (const int channels : {1, 3}) {
      const io::Image image = make_image(61, 43, channels, bits);
      const Tensor floats = io::image_to_tensor(image, DataType::Float32, io::AlphaMode::Straight);
      for (const Case& k : cases) {
        for (const InterpolationMode mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
          for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
            for (const int threads : {1, 2}) {
              ResampleParams params;
              params.interpolation = mode;
              params.scales = {1.0f, 1.0f, k.sy, k.sx};
              params.input_pixel_offsets = {k.in_offset, k.in_offset, k.in_offset, k.in_offset};
              params.output_pixel_offsets = {k.out_offset, k.out_offset, k.out_offset, k.out_offset};
              ExecOptions exec;
              exec.backend = backend;
              exec.num_threads = threads;
              const Dims sizes = resample_output_sizes(floats.sizes(), params.scales);
              Tensor expected(DataType::Float32, sizes);
              resample(floats.view(), expected.view(), params, exec);
              Tensor got(DataType::Float32, sizes, TensorInit::Uninitialized);
              resample(unorm_view(image), got.view(), params, exec);
              const std::string what = "bits " + std::to_string(bits) + ", C " + std::to_string(channels) +
                                       ", scales " + std::to_string(k.sy) + " x " + std::to_string(k.sx) + ", " +
                                       to_string(mode) + ", backend " + std::to_string(static_cast<int>(backend));
              ASSERT_EQ(std::memcmp(expected.data(), got.data(), expected.byte_size()), 0) << what;
              // float16 output: the same float32 results, each rounded once.
              Tensor half(DataType::Float16, sizes, TensorInit::Uninitialized);
              resample(unorm_view(image), half.view(), params, exec);
              const auto* e = expected.data_as<float>();
              const auto* h = half.data_as<Float16>();
              for (std::int64_t i = 0; i < expected.element_count(); ++i) {
                ASSERT_EQ(h[i].bits(), Float16(e[i]).bits()) << what << ", float16 element " << i;
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 2 * 7 * 2 * 2 * 2);
}

// float16 results of a unorm input: the float32 results, each rounded once.
void expect_float16_of(const Tensor& expected, const Tensor& half, const std::string& what) {
  const auto* e = expected.data_as<float>();
  const auto* h = half.data_as<Float16>();
  for (std::int64_t i = 0; i < expected.element_count(); ++i) {
    ASSERT_EQ(h[i].bits(), Float16(e[i]).bits()) << what << ", float16 element " << i;
  }
}

TEST(UnormInput, Upsample2dMatchesTheFloatTensorOfTheSameImage) {
  const ScaleSize factors[] = {{2, 2}, {3, 1}, {1, 4}, {1, 1}};
  int checked = 0;
  for (const int bits : {8, 16}) {
    for (const int channels : {1, 3, 4}) {
      const io::Image image = make_image(37, 23, channels, bits);
      const Tensor floats = io::image_to_tensor(image, DataType::Float32, io::AlphaMode::Straight);
      for (const ScaleSize& f : factors) {
        for (const InterpolationMode mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
          for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
            for (const int threads : {1, 2}) {
              Upsample2dParams params;
              params.interpolation = mode;
              params.scale_size = f;
              ExecOptions exec;
              exec.backend = backend;
              exec.num_threads = threads;
              const Dims sizes = upsample2d_output_sizes(floats.sizes(), f);
              Tensor expected(DataType::Float32, sizes);
              upsample2d(floats.view(), expected.view(), params, exec);
              Tensor got(DataType::Float32, sizes, TensorInit::Uninitialized);
              upsample2d(unorm_view(image), got.view(), params, exec);
              const std::string what = "bits " + std::to_string(bits) + ", C " + std::to_string(channels) +
                                       ", factor " + std::to_string(f.height) + " x " + std::to_string(f.width) +
                                       ", " + to_string(mode) + ", backend " +
                                       std::to_string(static_cast<int>(backend));
              ASSERT_EQ(std::memcmp(expected.data(), got.data(), expected.byte_size()), 0) << what;
              Tensor half(DataType::Float16, sizes, TensorInit::Uninitialized);
              upsample2d(unorm_view(image), half.view(), params, exec);
              expect_float16_of(expected, half, what);
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 3 * 4 * 2 * 2 * 2);
}

// The float32 NCHW tensor of an image of any channel count: p / (2^b - 1) in double, rounded once (what
// io::image_to_tensor makes of images of 1 to 4 channels).
Tensor float_tensor(const io::Image& image) {
  const std::int64_t c = image.channels;
  const std::int64_t plane = image.height * image.width;
  Tensor t(DataType::Float32, {1, c, image.height, image.width});
  const double max = image.bit_depth == 8 ? 255.0 : 65535.0;
  for (std::int64_t i = 0; i < plane * c; ++i) {
    const double p = image.bit_depth == 8 ? image.data8[static_cast<std::size_t>(i)]
                                          : image.data16[static_cast<std::size_t>(i)];
    t.data_as<float>()[(i % c) * plane + i / c] = static_cast<float>(p / max);
  }
  return t;
}

TEST(UnormInput, RoiAlignMatchesTheFloatTensorOfTheSameImage) {
  // Boxes inside, across the edge, fully outside, inverted, zero-size and huge (adaptive sampling); 1 and 3
  // channels take the plane path, 9 the channels-last path of the CPU backend.
  const std::vector<float> boxes = {3.5f, 2.25f, 30.0f, 20.0f,  -5.0f, -3.0f, 12.0f, 9.0f,  70.0f, 50.0f, 90.0f, 60.0f,
                                    20.0f, 15.0f, 4.0f, 2.0f,    10.0f, 10.0f, 10.0f, 10.0f, 0.0f, 0.0f, 61.0f, 43.0f};
  const auto roi_count = static_cast<std::int64_t>(boxes.size() / 4);
  Tensor rois(DataType::Float32, {roi_count, 4});
  std::memcpy(rois.data(), boxes.data(), boxes.size() * sizeof(float));
  Tensor rois16(DataType::Float16, {roi_count, 4});
  Tensor rois16_widened(DataType::Float32, {roi_count, 4});  // the float16 coordinates, as float32
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    rois16.data_as<Float16>()[i] = Float16(boxes[i]);
    rois16_widened.data_as<float>()[i] = static_cast<float>(Float16(boxes[i]));
  }
  Tensor indices(DataType::UInt32, {roi_count});  // zero-filled: every ROI on image 0
  int checked = 0;
  for (const int bits : {8, 16}) {
    for (const int channels : {1, 3, 9}) {
      const io::Image image = make_image(61, 43, channels, bits);
      const Tensor floats = channels <= 4 ? io::image_to_tensor(image, DataType::Float32, io::AlphaMode::Straight)
                                          : float_tensor(image);
      if (channels <= 4) {  // the helper is what image_to_tensor computes
        const Tensor mine = float_tensor(image);
        ASSERT_EQ(std::memcmp(mine.data(), floats.data(), floats.byte_size()), 0);
      }
      for (const InterpolationMode mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
        for (const RoiReduction reduction : {RoiReduction::Average, RoiReduction::Max}) {
          for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
            for (const int threads : {1, 2}) {
              RoiAlignParams params;
              params.interpolation = mode;
              params.reduction = reduction;
              params.spatial_scale_x = 0.75f;
              params.out_of_bounds_input_value = -0.25f;
              ExecOptions exec;
              exec.backend = backend;
              exec.num_threads = threads;
              const Dims sizes = roi_align_output_sizes(floats.sizes(), rois.sizes(), 5, 4);
              Tensor expected(DataType::Float32, sizes);
              roi_align(floats.view(), rois.view(), indices.view(), expected.view(), params, exec);
              Tensor got(DataType::Float32, sizes, TensorInit::Uninitialized);
              roi_align(unorm_view(image), rois.view(), indices.view(), got.view(), params, exec);
              const std::string what = "bits " + std::to_string(bits) + ", C " + std::to_string(channels) + ", " +
                                       to_string(mode) + ", " + to_string(reduction) + ", backend " +
                                       std::to_string(static_cast<int>(backend));
              ASSERT_EQ(std::memcmp(expected.data(), got.data(), expected.byte_size()), 0) << what;
              // float16 output: float16 ROIs (the output's type), computed in float32, rounded once.
              Tensor expected16(DataType::Float32, sizes);
              roi_align(floats.view(), rois16_widened.view(), indices.view(), expected16.view(), params, exec);
              Tensor half(DataType::Float16, sizes, TensorInit::Uninitialized);
              roi_align(unorm_view(image), rois16.view(), indices.view(), half.view(), params, exec);
              expect_float16_of(expected16, half, what);
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 3 * 2 * 2 * 2 * 2);
}

TEST(UnormInput, IsAnInputTypeOnly) {
  const io::Image image = make_image(8, 6, 3, 8);
  ResampleParams params;
  params.scales = {1.0f, 1.0f, 2.0f, 2.0f};
  // A unorm output is refused by every operator, naming the types allowed.
  std::vector<std::uint8_t> bytes(3 * 12 * 16);
  const TensorView unorm_out(bytes.data(), DataType::UNorm8, {1, 3, 12, 16});
  const auto expect_type_error = [](const auto& call, const char* needle) {
    try {
      call();
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidDataType) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_type_error([&] { resample(unorm_view(image), unorm_out, params); }, "float32 or float16 is required");
  Upsample2dParams up;
  up.scale_size = {2, 2};
  expect_type_error([&] { upsample2d(unorm_view(image), unorm_out, up); }, "float32 or float16 is required");
  // ROI coordinates have the output's data type.
  Tensor rois(DataType::Float16, {1, 4});
  Tensor indices(DataType::UInt32, {1});
  Tensor crops(DataType::Float32, {1, 3, 2, 2});
  expect_type_error([&] { roi_align(unorm_view(image), rois.view(), indices.view(), crops.view(), RoiAlignParams{}); },
                    "rois has data type float16; it must match the output (float32)");
  // uint32 is no data input.
  Tensor words(DataType::UInt32, {1, 3, 6, 8});
  Tensor out(DataType::Float32, {1, 3, 12, 16});
  expect_type_error([&] { upsample2d(words.view(), out.view(), up); }, "float32, float16, unorm8 or unorm16");
  EXPECT_STREQ(to_string(DataType::UNorm16), "unorm16");
  EXPECT_EQ(element_size(DataType::UNorm8), 1u);
}

TEST(UnormInput, UninitializedTensorsAreWrittenCompletely) {
  // An output allocated without zeroing ends up with every element written by the operator.
  const io::Image image = make_image(9, 7, 1, 8);
  ResampleParams params;
  params.scales = {1.0f, 1.0f, 3.0f, 3.0f};
  Tensor zeroed(DataType::Float32, {1, 1, 21, 27});
  Tensor raw(DataType::Float32, {1, 1, 21, 27}, TensorInit::Uninitialized);
  std::memset(raw.data(), 0xff, raw.byte_size());  // NaN everywhere until written
  resample(unorm_view(image), zeroed.view(), params);
  resample(unorm_view(image), raw.view(), params);
  EXPECT_EQ(std::memcmp(zeroed.data(), raw.data(), raw.byte_size()), 0);
  const Tensor copy = raw;  // deep copy
  EXPECT_NE(copy.data(), raw.data());
  EXPECT_EQ(std::memcmp(copy.data(), raw.data(), raw.byte_size()), 0);
}

}  // namespace
}  // namespace rsz
