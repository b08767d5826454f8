// Element loads and stores by data type: float16 is widened on load and rounded once on store (SEMANTICS.md §0).
#pragma once

#include <cstdint>
#include <cstring>

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

// The one NaN a computed result may be (SEMANTICS.md §0): every NaN that linear interpolation or ROI_ALIGN produces
// is stored as the positive quiet NaN with a zero payload, float32 0x7fc00000 (float16 0x7e00 after narrowing), in
// every backend, so the bits never depend on which NaN operand the hardware or the compiler's operand order kept.
inline float the_canonical_nan() {
  const std::uint32_t bits = 0x7fc00000u;
  float nan;
  std::memcpy(&nan, &bits, sizeof nan);
  return nan;
}

inline float canonical_nan(float value) { return value == value ? value : the_canonical_nan(); }

// store_element for a computed result: a NaN is stored as canonical_nan.
inline void store_computed(void* base, DataType type, std::int64_t offset, float value) {
  store_element(base, type, offset, canonical_nan(value));
}

// A nearest-neighbour selection (SEMANTICS.md §0): the element is copied with every bit (a signalling NaN stays
// signalling) when input and output have the same type; a unorm input is converted as load_element does.
inline void copy_element(const void* in, DataType in_type, std::int64_t in_offset, void* out, DataType out_type,
                         std::int64_t out_offset) {
  if (in_type == DataType::Float32 && out_type == DataType::Float32) {
    std::memcpy(static_cast<float*>(out) + out_offset, static_cast<const float*>(in) + in_offset, sizeof(float));
  } else if (in_type == DataType::Float16 && out_type == DataType::Float16) {
    std::memcpy(static_cast<std::uint16_t*>(out) + out_offset, static_cast<const std::uint16_t*>(in) + in_offset,
                sizeof(std::uint16_t));
  } else {
    store_element(out, out_type, out_offset, load_element(in, in_type, in_offset));
  }
}

}  // namespace rsz::detail
