// Per-pixel work of the rsz program, kept apart from the command-line wiring: this file is built fully optimized,
// the wiring at -O1 (app/CMakeLists.txt).
#include "pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "rsz/float16.h"

namespace rsz::app {
namespace {

// Element (0, ch, y, x) of a float32 or float16 result.
float sample(const ConstTensorView& tensor, std::int64_t ch, std::int64_t y, std::int64_t x) {
  const std::int64_t offset = ch * tensor.stride(1) + y * tensor.stride(2) + x * tensor.stride(3);
  return tensor.dtype() == DataType::Float32 ? static_cast<const float*>(tensor.data())[offset]
                                             : static_cast<const Float16*>(tensor.data())[offset].to_float();
}

// ITU-R BT.601 luma with Pillow's fixed-point weights (convert('L'): 19595, 38470 and 7471 of 65536, that is 0.299,
// 0.587 and 0.114 to 4 digits), on values in [0, 1] (in double).
double luma(double r, double g, double b) { return (19595.0 * r + 38470.0 * g + 7471.0 * b) / 65536.0; }


}  // namespace

Tensor to_grayscale(const ConstTensorView& tensor, int depth, io::AlphaMode mode) {
  const std::int64_t c = tensor.size(1);
  const std::int64_t h = tensor.size(2);
  const std::int64_t w = tensor.size(3);
  const bool alpha = c == 2 || c == 4;
  const double max = depth == 16 ? 65535.0 : 255.0;
  // Pillow's integers where the colour is written as it is computed; with premultiplied alpha the writer divides by
  // alpha first, so the weights apply to the values themselves.
  const bool on_samples = !(alpha && mode == io::AlphaMode::Premultiplied);
  Tensor gray(DataType::Float32, {1, alpha ? 2 : 1, h, w}, TensorInit::Uninitialized);
  float* out = gray.data_as<float>();
  const auto at = [&](std::int64_t ch, std::int64_t y, std::int64_t x) { return sample(tensor, ch, y, x); };
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = 0; x < w; ++x) {
      double value = at(0, y, x);
      if (c >= 3 && on_samples) {  // (19595 R + 38470 G + 7471 B + 32768) >> 16 on the samples written
        const std::uint32_t l = (19595 * io::sample_of(at(0, y, x), depth) + 38470 * io::sample_of(at(1, y, x), depth) +
                                 7471 * io::sample_of(at(2, y, x), depth) + 32768) >> 16;
        value = l / max;  // written back as l exactly
      } else if (c >= 3) {
        value = luma(at(0, y, x), at(1, y, x), at(2, y, x));
      }
      out[y * w + x] = static_cast<float>(value);  // rounded to float32 once
      if (alpha) out[h * w + y * w + x] = at(c - 1, y, x);
    }
  }
  return gray;
}

Tensor to_srgb(const ConstTensorView& tensor, const io::SrgbTransform& transform, io::AlphaMode mode) {
  const std::int64_t c = tensor.size(1);
  const std::int64_t h = tensor.size(2);
  const std::int64_t w = tensor.size(3);
  const bool alpha = c == 2 || c == 4;
  const bool premultiplied = alpha && mode == io::AlphaMode::Premultiplied;
  Tensor out(DataType::Float32, {1, c, h, w}, TensorInit::Uninitialized);
  float* o = out.data_as<float>();
  std::vector<float> row(static_cast<std::size_t>(w * c));
  const auto clamped = [](float v) { return v > 0.0f ? std::min(v, 1.0f) : 0.0f; };  // NaN: 0
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = 0; x < w; ++x) {
      const float a = alpha ? clamped(sample(tensor, c - 1, y, x)) : 1.0f;
      for (std::int64_t ch = 0; ch < c; ++ch) {
        float v = sample(tensor, ch, y, x);
        if (alpha && ch == c - 1) {
          v = a;
        } else if (premultiplied) {
          v = a > 0.0f ? clamped(v / a) : 0.0f;
        } else {
          v = clamped(v);
        }
        row[static_cast<std::size_t>(x * c + ch)] = v;
      }
    }
    transform.apply(row.data(), static_cast<std::size_t>(w));
    for (std::int64_t ch = 0; ch < c; ++ch) {
      float* dst = o + (ch * h + y) * w;
      for (std::int64_t x = 0; x < w; ++x) {
        float v = row[static_cast<std::size_t>(x * c + ch)];
        if (premultiplied && ch != c - 1) v *= row[static_cast<std::size_t>(x * c + c - 1)];
        dst[x] = v;
      }
    }
  }
  return out;
}

namespace {

double srgb_to_linear(double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); }

double linear_to_srgb(double v) {
  if (!(v > 0.0)) return 0.0;  // NaN too
  if (v >= 1.0) return 1.0;
  return v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1.0 / 2.4) - 0.055;
}

}  // namespace

Tensor to_linear(const Tensor& straight, DataType type, io::AlphaMode mode) {
  const std::int64_t c = straight.size(1);
  const std::int64_t plane = straight.size(2) * straight.size(3);
  const bool alpha = c == 2 || c == 4;
  const bool premultiply = alpha && mode == io::AlphaMode::Premultiplied;
  Tensor out(type, straight.sizes(), TensorInit::Uninitialized);
  const float* in = straight.data_as<float>();
  const float* a = in + (c - 1) * plane;
  for (std::int64_t ch = 0; ch < c; ++ch) {
    const bool colour = !(alpha && ch == c - 1);
    for (std::int64_t i = 0; i < plane; ++i) {
      double v = in[ch * plane + i];
      if (colour) v = srgb_to_linear(v) * (premultiply ? static_cast<double>(a[i]) : 1.0);
      if (type == DataType::Float32) {
        out.data_as<float>()[ch * plane + i] = static_cast<float>(v);
      } else {
        out.data_as<Float16>()[ch * plane + i] = Float16(static_cast<float>(v));
      }
    }
  }
  return out;
}

Tensor from_linear(const ConstTensorView& tensor, io::AlphaMode mode) {
  const std::int64_t c = tensor.size(1);
  const std::int64_t h = tensor.size(2);
  const std::int64_t w = tensor.size(3);
  const bool alpha = c == 2 || c == 4;
  const bool premultiplied = alpha && mode == io::AlphaMode::Premultiplied;
  Tensor out(DataType::Float32, {1, c, h, w}, TensorInit::Uninitialized);
  float* o = out.data_as<float>();
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = 0; x < w; ++x) {
      const double a = alpha ? std::clamp(static_cast<double>(sample(tensor, c - 1, y, x)), 0.0, 1.0) : 1.0;
      for (std::int64_t ch = 0; ch < c; ++ch) {
        double v = sample(tensor, ch, y, x);
        if (!(alpha && ch == c - 1)) {
          if (premultiplied) v = a > 0.0 ? v / a : 0.0;
          v = linear_to_srgb(v) * (premultiplied ? a : 1.0);
        }
        o[(ch * h + y) * w + x] = static_cast<float>(v);
      }
    }
  }
  return out;
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
