// The float16 conversions, checked on all 65,536 bit patterns against independent arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "rsz/float16.h"

namespace rsz {
namespace {

// Value of a float16 pattern from the IEEE formula, in double.
double float16_value(std::uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

TEST(Float16, WideningIsExactForEveryPattern) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float widened = float16_bits_to_float(bits);
    const double expected = float16_value(bits);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(widened)) << "pattern 0x" << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(widened), expected) << "pattern 0x" << std::hex << h;
      ASSERT_EQ(std::signbit(widened), (h & 0x8000) != 0) << "pattern 0x" << std::hex << h;
    }
  }
}

TEST(Float16, RoundTripKeepsEveryPattern) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const std::uint16_t back = float_to_float16_bits(float16_bits_to_float(bits));
    const bool is_nan = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff) != 0;
    if (is_nan) {
      // NaN stays NaN, quiet, with its sign and payload (the quiet bit set).
      ASSERT_EQ(back, bits | 0x200) << "pattern 0x" << std::hex << h;
    } else {
      ASSERT_EQ(back, bits) << "pattern 0x" << std::hex << h;
    }
  }
}

// Every gap between neighbouring float16 values: just below the midpoint rounds down, just above rounds up, the
// midpoint itself goes to the even pattern. The gap above 65504 (to the would-be 65536) overflows to infinity.
TEST(Float16, NarrowingRoundsToNearestEvenAtEveryMidpoint) {
  for (std::uint32_t h = 0; h < 0x7c00; ++h) {
    const double lo = float16_value(static_cast<std::uint16_t>(h));
    const double hi = h + 1 < 0x7c00 ? float16_value(static_cast<std::uint16_t>(h + 1)) : 65536.0;
    const auto mid = static_cast<float>((lo + hi) / 2);  // exact: one bit more than float16 needs
    ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
    const auto up = static_cast<std::uint16_t>(h + 1);
    const auto down = static_cast<std::uint16_t>(h);
    for (const std::uint16_t sign : {std::uint16_t{0}, std::uint16_t{0x8000}}) {
      const float s = sign ? -1.0f : 1.0f;
      const auto tie = static_cast<std::uint16_t>((h % 2 == 0 ? down : up) | sign);
      ASSERT_EQ(float_to_float16_bits(s * mid), tie) << "midpoint above 0x" << std::hex << h;
      ASSERT_EQ(float_to_float16_bits(s * std::nextafter(mid, 0.0f)), down | sign) << "below mid of 0x" << std::hex << h;
      ASSERT_EQ(float_to_float16_bits(s * std::nextafter(mid, INFINITY)), up | sign) << "above mid of 0x" << std::hex << h;
      ASSERT_EQ(float_to_float16_bits(s * static_cast<float>(lo)), down | sign) << "exact 0x" << std::hex << h;
    }
  }
}

TEST(Float16, SpecialValues) {
  EXPECT_EQ(float_to_float16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_float16_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_float16_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_float16_bits(0.1f), 0x2e66);  // 0.0999755859375
  EXPECT_EQ(float_to_float16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_float16_bits(65519.99f), 0x7bff);
  EXPECT_EQ(float_to_float16_bits(65520.0f), 0x7c00);  // overflow rounds to infinity
  EXPECT_EQ(float_to_float16_bits(1e30f), 0x7c00);
  EXPECT_EQ(float_to_float16_bits(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(float_to_float16_bits(-INFINITY), 0xfc00);
  EXPECT_EQ(float_to_float16_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_float16_bits(std::ldexp(1.0f, -25)), 0x0000);  // a tie: to even (zero)
  EXPECT_EQ(float_to_float16_bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(float_to_float16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_float16_bits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_float16_bits(std::ldexp(1023.5f, -24)), 0x0400);  // subnormal carry into the normal range
  const std::uint16_t nan = float_to_float16_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x3ff, 0);
  EXPECT_TRUE(std::isnan(float16_bits_to_float(float_to_float16_bits(-std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Float16, TypeWrapsTheConversions) {
  const Float16 h(2.5f);
  EXPECT_EQ(h.bits(), 0x4100);
  EXPECT_EQ(static_cast<float>(h), 2.5f);
  EXPECT_TRUE(same_bits(Float16::from_bits(0x4100), h));
}

}  // namespace
}  // namespace rsz
