// Resampling unorm8/unorm16 inputs (an interleaved image read in place, as the CLI does) gives the same bits as
// resampling the float32 tensor io::image_to_tensor makes of the same image: for both backends, nearest and linear,
// up- and downscales, several offset conventions, thread counts, and float32 and float16 outputs. Also the data type
// rules: unorm is an input type of resample only.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rsz/error.h"
#include "rsz/float16.h"
#include "rsz/io/image.h"
#include "rsz/resample.h"
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

TEST(UnormInput, IsAnInputTypeOfResampleOnly) {
  const io::Image image = make_image(8, 6, 3, 8);
  ResampleParams params;
  params.scales = {1.0f, 1.0f, 2.0f, 2.0f};
  Tensor out(DataType::Float32, {1, 3, 12, 16});
  // A unorm output is refused.
  std::vector<std::uint8_t> bytes(3 * 12 * 16);
  const TensorView unorm_out(bytes.data(), DataType::UNorm8, {1, 3, 12, 16});
  EXPECT_THROW(resample(unorm_view(image), unorm_out, params), Error);
  // UPSAMPLE_2D takes float inputs only.
  Upsample2dParams up;
  up.scale_size = {2, 2};
  try {
    upsample2d(unorm_view(image), out.view(), up);
    ADD_FAILURE() << "unorm input accepted by upsample2d";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidDataType);
    EXPECT_NE(std::string(e.what()).find("unorm8"), std::string::npos) << e.what();
  }
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
