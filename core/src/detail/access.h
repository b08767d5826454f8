// Element loads and stores by data type: float16 is widened on load and rounded once on store (SEMANTICS.md §0).
#pragma once

#include <cstdint>

#include "rsz/float16.h"
#include "rsz/tensor.h"

namespace rsz::detail {

inline float load_element(const void* base, DataType type, std::int64_t offset) {
  if (type == DataType::Float32) return static_cast<const float*>(base)[offset];
  return float16_bits_to_float(static_cast<const std::uint16_t*>(base)[offset]);
}

inline void store_element(void* base, DataType type, std::int64_t offset, float value) {
  if (type == DataType::Float32) {
    static_cast<float*>(base)[offset] = value;
  } else {
    static_cast<std::uint16_t*>(base)[offset] = float_to_float16_bits(value);
  }
}

}  // namespace rsz::detail
