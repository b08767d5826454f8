// Element loads and stores by data type: float16 is widened on load and rounded once on store (SEMANTICS.md §0).
#pragma once

#include <cstdint>

#include "rsz/float16.h"
#include "rsz/tensor.h"

namespace rsz::detail {

// The float32 value of a UNorm sample p of `bits` bits: p / (2^bits - 1) in double, rounded once (tensor.h).
inline float unorm_to_float(std::uint32_t p, int bits) {
  return static_cast<float>(static_cast<double>(p) / (bits == 8 ? 255.0 : 65535.0));
}

inline float load_element(const void* base, DataType type, std::int64_t offset) {
  switch (type) {
    case DataType::Float32: return static_cast<const float*>(base)[offset];
    case DataType::UNorm8: return unorm_to_float(static_cast<const std::uint8_t*>(base)[offset], 8);
    case DataType::UNorm16: return unorm_to_float(static_cast<const std::uint16_t*>(base)[offset], 16);
    default: return float16_bits_to_float(static_cast<const std::uint16_t*>(base)[offset]);
  }
}

inline void store_element(void* base, DataType type, std::int64_t offset, float value) {
  if (type == DataType::Float32) {
    static_cast<float*>(base)[offset] = value;
  } else {
    static_cast<std::uint16_t*>(base)[offset] = float_to_float16_bits(value);
  }
}

}  // namespace rsz::detail
