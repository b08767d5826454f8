#include "rsz/float16.h"

#include <cstring>

namespace rsz {
namespace {

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Shifts `mantissa` right by `shift` (1..31) with round-to-nearest-even on the bits shifted out.
std::uint32_t shift_right_rne(std::uint32_t mantissa, unsigned shift) {
  const std::uint32_t kept = mantissa >> shift;
  const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  return (rest > half || (rest == half && (kept & 1u) != 0)) ? kept + 1u : kept;
}

}  // namespace

float float16_bits_to_float(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float32.
    const float magnitude = static_cast<float>(mantissa) * bits_float(0x33800000u);
    return bits_float(sign | float_bits(magnitude));
  }
  if (exponent == 0x1f) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t float_to_float16_bits(float value) noexcept {
  const std::uint32_t u = float_bits(value);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // NaN: quiet it, keep the top payload bits.
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  if (magnitude >= 0x38800000u) {  // float16 normal range (or above it)
    std::uint32_t h = shift_right_rne(magnitude, 13) - (112u << 10);
    if (h >= 0x7c00u) h = 0x7c00u;  // overflow, and infinity itself
    return static_cast<std::uint16_t>(sign | h);
  }
  // float16 subnormal range: value / 2^-24 rounded to nearest even; a carry into 0x400 is the smallest normal.
  const std::uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return sign;  // below 2^-25: rounds to zero (2^-25 itself is a tie, handled below)
  const std::uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  return static_cast<std::uint16_t>(sign | shift_right_rne(mantissa, 126u - exponent));
}

}  // namespace rsz
