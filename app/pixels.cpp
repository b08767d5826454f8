// Per-pixel work of the rsz program, kept apart from the command-line wiring: this file is built fully optimized,
// the wiring at -O1 (app/CMakeLists.txt).
#include "common.h"

#include "rsz/float16.h"

namespace rsz::app {

Tensor to_grayscale(const ConstTensorView& tensor) {
  const std::int64_t c = tensor.size(1);
  const std::int64_t h = tensor.size(2);
  const std::int64_t w = tensor.size(3);
  const bool alpha = c == 2 || c == 4;
  Tensor gray(DataType::Float32, {1, alpha ? 2 : 1, h, w}, TensorInit::Uninitialized);
  float* out = gray.data_as<float>();
  const auto at = [&](std::int64_t ch, std::int64_t y, std::int64_t x) {
    const std::int64_t offset = ch * tensor.stride(1) + y * tensor.stride(2) + x * tensor.stride(3);
    return tensor.dtype() == DataType::Float32 ? static_cast<const float*>(tensor.data())[offset]
                                               : static_cast<const Float16*>(tensor.data())[offset].to_float();
  };
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = 0; x < w; ++x) {
      // ITU-R BT.601 luma, as libjpeg's and Pillow's RGB -> L: 0.299 R + 0.587 G + 0.114 B (in double, rounded once).
      const double luma = c >= 3 ? 0.299 * at(0, y, x) + 0.587 * at(1, y, x) + 0.114 * at(2, y, x) : at(0, y, x);
      out[y * w + x] = static_cast<float>(luma);
      if (alpha) out[h * w + y * w + x] = at(c - 1, y, x);
    }
  }
  return gray;
}

}  // namespace rsz::app
