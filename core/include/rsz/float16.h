// IEEE 754 binary16 as a storage type.
//
// float16 is only stored, never computed in: values are widened to float32 (exact), all arithmetic is float32,
// and results are rounded once to float16 with round-to-nearest-even. NaN stays NaN (quiet, sign and the top
// payload bits kept), infinities stay infinite, finite values >= 65520 in magnitude become infinity, values below
// half the smallest subnormal become (signed) zero. Conversions are explicit; the type has no arithmetic.
#pragma once

#include <cstdint>

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz {

// Exact widening of float16 bits to float32.
float float16_bits_to_float(std::uint16_t bits) noexcept;
// Round-to-nearest-even narrowing of a float32 to float16 bits.
std::uint16_t float_to_float16_bits(float value) noexcept;

class Float16 {
 public:
  constexpr Float16() noexcept = default;
  explicit Float16(float value) noexcept : bits_(float_to_float16_bits(value)) {}
  static constexpr Float16 from_bits(std::uint16_t bits) noexcept {
    Float16 h;
    h.bits_ = bits;
    return h;
  }
  constexpr std::uint16_t bits() const noexcept { return bits_; }
  float to_float() const noexcept { return float16_bits_to_float(bits_); }
  explicit operator float() const noexcept { return to_float(); }
  friend constexpr bool same_bits(Float16 a, Float16 b) noexcept { return a.bits_ == b.bits_; }

 private:
  std::uint16_t bits_ = 0;
};

static_assert(sizeof(Float16) == 2, "Float16 must be exactly two bytes");

}  // namespace rsz

#pragma GCC visibility pop
