// Shared by the equivalence tests: seeded inputs of either float type, packed or channels-last with padded rows, and
// outputs packed or strided with gaps, so that every backend is compared on the same layouts.
#pragma once

#include <cstdint>
#include <vector>

#include "rsz/float16.h"
#include "rsz/tensor.h"
#include "support/test_util.h"

namespace rsz::test {

// A tensor of `type` with the given sizes, optionally laid out NHWC-style (channels innermost) with padding, filled
// from a seeded float32 tensor. Returns the owner and a view.
struct Input {
  StridedBuffer f32;        // float32 storage when type is float32
  std::vector<std::uint16_t> f16;  // float16 storage otherwise
  Dims sizes;
  Dims strides;
  DataType type;
  ConstTensorView view() const {
    return type == DataType::Float32 ? f32.cview() : ConstTensorView(f16.data(), type, sizes, strides);
  }
};

inline Input make_input(const Dims& sizes, DataType type, bool channels_last, std::uint32_t seed) {
  Input in;
  in.sizes = sizes;
  in.type = type;
  if (channels_last && sizes.size() == 4) {
    in.strides = {sizes[1] * sizes[2] * (sizes[3] + 1), 1, sizes[1] * (sizes[3] + 1), sizes[1]};  // padded rows
  } else {
    in.strides = packed_strides(sizes);
  }
  const Tensor values = random_f32(sizes, seed, -3.0f, 3.0f);
  in.f32 = make_strided(sizes, in.strides, 0.0f);
  copy_into(values.view(), in.f32);
  if (type == DataType::Float16) {
    in.f16.resize(in.f32.storage.size());
    for (std::size_t i = 0; i < in.f16.size(); ++i) in.f16[i] = float_to_float16_bits(in.f32.storage[i]);
  }
  return in;
}

// Runs `op` into a fresh output of `sizes` (packed, or strided with padding between rows) and returns its values.
template <typename Op>
std::vector<float> run_into(const Dims& sizes, DataType type, bool strided_output, const Op& op) {
  Dims strides = packed_strides(sizes);
  if (strided_output) {
    strides.back() = 2;  // every other element
    for (int a = static_cast<int>(sizes.size()) - 2; a >= 0; --a) {
      strides[static_cast<std::size_t>(a)] =
          strides[static_cast<std::size_t>(a) + 1] * sizes[static_cast<std::size_t>(a) + 1] + (a == 0 ? 0 : 3);
    }
  }
  const TensorLayout layout(type, sizes, strides);
  std::vector<std::uint32_t> storage(static_cast<std::size_t>(layout.extent()) + 1, 0x7fc00badu);
  const TensorView view(storage.data(), layout);
  op(view);
  return to_vector(ConstTensorView(view));
}

}  // namespace rsz::test
