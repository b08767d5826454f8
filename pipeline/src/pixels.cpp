// Per-pixel work of the rsz program, kept apart from the command-line wiring: this file is built fully optimized,
// the wiring at -O1 (app/CMakeLists.txt).
#include "pipeline.h"

#include <algorithm>

#include "rsz/float16.h"

namespace rsz::app {
namespace {

// Element (0, ch, y, x) of a float32 or float16 result.
float sample(const ConstTensorView& tensor, std::int64_t ch, std::int64_t y, std::int64_t x) {
  const std::int64_t offset = ch * tensor.stride(1) + y * tensor.stride(2) + x * tensor.stride(3);
  return tensor.dtype() == DataType::Float32 ? static_cast<const float*>(tensor.data())[offset]
                                             : static_cast<const Float16*>(tensor.data())[offset].to_float();
}

// ITU-R BT.601 luma, as libjpeg's and Pillow's RGB -> L: 0.299 R + 0.587 G + 0.114 B (in double).
double luma(double r, double g, double b) { return 0.299 * r + 0.587 * g + 0.114 * b; }

}  // namespace

Tensor to_grayscale(const ConstTensorView& tensor) {
  const std::int64_t c = tensor.size(1);
  const std::int64_t h = tensor.size(2);
  const std::int64_t w = tensor.size(3);
  const bool alpha = c == 2 || c == 4;
  Tensor gray(DataType::Float32, {1, alpha ? 2 : 1, h, w}, TensorInit::Uninitialized);
  float* out = gray.data_as<float>();
  const auto at = [&](std::int64_t ch, std::int64_t y, std::int64_t x) { return sample(tensor, ch, y, x); };
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = 0; x < w; ++x) {
      // Rounded to float32 once.
      const double value = c >= 3 ? luma(at(0, y, x), at(1, y, x), at(2, y, x)) : at(0, y, x);
      out[y * w + x] = static_cast<float>(value);
      if (alpha) out[h * w + y * w + x] = at(c - 1, y, x);
    }
  }
  return gray;
}

Tensor flatten_alpha(const ConstTensorView& tensor, io::AlphaMode mode, const std::array<float, 3>& background) {
  const std::int64_t c = tensor.size(1);
  const std::int64_t h = tensor.size(2);
  const std::int64_t w = tensor.size(3);
  Tensor flat(DataType::Float32, {1, c - 1, h, w}, TensorInit::Uninitialized);
  float* out = flat.data_as<float>();
  const auto at = [&](std::int64_t ch, std::int64_t y, std::int64_t x) { return sample(tensor, ch, y, x); };
  // A gray image's background is the colour's BT.601 luma, as --grayscale would make it.
  const std::array<double, 3> bg =
      c == 4 ? std::array<double, 3>{background[0], background[1], background[2]}
             : std::array<double, 3>{luma(background[0], background[1], background[2]), 0, 0};
  const bool premultiplied = mode == io::AlphaMode::Premultiplied;
  for (std::int64_t ch = 0; ch < c - 1; ++ch) {
    for (std::int64_t y = 0; y < h; ++y) {
      for (std::int64_t x = 0; x < w; ++x) {
        // Over: colour x alpha + background x (1 - alpha); a premultiplied colour already holds colour x alpha.
        const double a = std::clamp(static_cast<double>(at(c - 1, y, x)), 0.0, 1.0);
        const double colour = premultiplied ? at(ch, y, x) : at(ch, y, x) * a;
        out[(ch * h + y) * w + x] = static_cast<float>(colour + bg[static_cast<std::size_t>(ch)] * (1.0 - a));
      }
    }
  }
  return flat;
}

}  // namespace rsz::app
