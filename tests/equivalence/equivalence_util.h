// Shared by the equivalence tests: seeded inputs of either float type, packed or channels-last with padded rows, and
// outputs packed or strided with gaps, so that every backend is compared on the same layouts.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "rsz/exec.h"
#include "rsz/float16.h"
#include "rsz/tensor.h"
#include "support/test_util.h"

namespace rsz::test {

// The backends compared with the reference twin: every backend registered in this build that can run here on host
// memory, except the reference itself (the tests iterate over the registry, not over a list of their own).
inline std::vector<Backend> backends_under_test() {
  std::vector<Backend> out;
  for (const BackendInfo& b : backends()) {
    if (b.available && b.memory == MemorySpace::Host && b.backend != Backend::Reference) out.push_back(b.backend);
  }
  return out;
}

// A name for a backend-parameterized test.
inline std::string backend_test_name(const ::testing::TestParamInfo<Backend>& info) { return to_string(info.param); }

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

// Special values, as raw bits of `type`: quiet and signalling NaN (both signs, with payloads), +-Inf, +-0, the
// smallest and largest denormals, the largest finite values. Written over every `every`-th stored element of `in`.
inline void sprinkle_special_values(Input& in, std::size_t every) {
  static const std::uint32_t f32[] = {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0xff812345u, 0x7f800000u, 0xff800000u,
                                      0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x7f7fffffu, 0xff7fffffu};
  static const std::uint16_t f16[] = {0x7e00u, 0xfe01u, 0x7c01u, 0xfd23u, 0x7c00u, 0xfc00u,
                                      0x0000u, 0x8000u, 0x0001u, 0x83ffu, 0x7bffu, 0xfbffu};
  const std::size_t n = in.type == DataType::Float32 ? in.f32.storage.size() : in.f16.size();
  for (std::size_t i = 0, k = 0; i < n; i += every, ++k) {
    if (in.type == DataType::Float32) {
      std::memcpy(&in.f32.storage[i], &f32[k % std::size(f32)], sizeof(float));
    } else {
      in.f16[i] = f16[k % std::size(f16)];
    }
  }
}

// Runs `op` into a fresh output of `sizes` (packed) and returns the raw bytes of the output, so NaN payloads and
// signalling bits are compared exactly.
template <typename Op>
std::vector<unsigned char> run_into_bytes(const Dims& sizes, DataType type, const Op& op) {
  const TensorLayout layout(type, sizes, packed_strides(sizes));
  std::vector<unsigned char> storage(static_cast<std::size_t>(layout.extent()) * element_size(type), 0xa5);
  op(TensorView(storage.data(), layout));
  return storage;
}

// The element at byte `at` of `size` bytes, as hex (little-endian value), for failure messages.
inline std::string hex_bytes(const std::vector<unsigned char>& bytes, std::size_t at, std::size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out = "0x";
  for (std::size_t i = size; i-- > 0;) {
    const unsigned char b = at + i < bytes.size() ? bytes[at + i] : 0;
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

// Equal raw outputs of `type`, compared bit for bit, NaNs included: selections copy the input's bits (a signalling
// NaN stays signalling) and computed results store every NaN as the canonical one (SEMANTICS.md §0), so every
// backend gives the same bits. Returns the byte offset of the first difference, or bytes.size() when equal.
inline std::size_t first_difference(const std::vector<unsigned char>& expected, const std::vector<unsigned char>& got,
                                    DataType type) {
  const std::size_t size = element_size(type);
  if (expected.size() != got.size()) return 0;
  for (std::size_t at = 0; at < expected.size(); at += size) {
    if (std::memcmp(&expected[at], &got[at], size) != 0) return at;
  }
  return expected.size();
}

// Whether the element at byte `at` of `size` (4 or 2) bytes is a NaN other than the canonical computed NaN
// (float32 0x7fc00000, float16 0x7e00): what no computed result may hold.
inline bool is_non_canonical_nan(const std::vector<unsigned char>& bytes, std::size_t at, std::size_t size) {
  std::uint32_t v = 0;
  std::memcpy(&v, &bytes[at], size);
  if (size == 4) return (v & 0x7fffffffu) > 0x7f800000u && v != 0x7fc00000u;
  return (v & 0x7fffu) > 0x7c00u && v != 0x7e00u;
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
