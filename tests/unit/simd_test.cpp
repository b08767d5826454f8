// The CPU backend's vector kernel tables (core/src/cpu/simd.h): which table a process runs, and every kernel of
// every table this CPU can run against the scalar expression it stands for, bit for bit, in one process. Lengths
// 0 to 41 cover every prefix and tail split of the 4- and 8-lane kernels; the values include NaNs, infinities,
// zeros of both signs, subnormals and zero weights (which take the first tap alone). The operators' equivalence
// tests run both tables through whole calls (the baseline_isa. repeat).
#include "cpu/simd.h"
#include "cpu/threads.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cpu/tables.h"
#include "detail/access.h"
#include "detail/coords.h"
#include "rsz/float16.h"

namespace rsz::cpu {
namespace {

bool cpu_runs_avx2() {
#if RSZ_CPU_X86_64
  return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx2");
#else
  return false;  // the AVX2 table exists on x86-64 only
#endif
}

// The AVX2 table where this build has one (x86-64), else the baseline.
const SimdKernels& widest_table() {
#if RSZ_CPU_X86_64
  return kAvx2Kernels;
#else
  return kBaselineKernels;
#endif
}

// The tables this CPU can run.
std::vector<const SimdKernels*> tables() {
  std::vector<const SimdKernels*> all = {&kBaselineKernels};
  if (cpu_runs_avx2()) all.push_back(&widest_table());
  return all;
}

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Intermediate values (a widened element, a lerp, a weighted sum) must be the same bits, except that a NaN may be
// any NaN: which payload and sign an operation on NaNs gives depends on the instruction and on the order the
// compiler puts a commutative operation's operands in (F16C quiets a signalling float16 NaN, the portable widening
// keeps it), and every computed result is stored as the canonical NaN (SEMANTICS.md §0), so no output can tell.
::testing::AssertionResult same_value(float actual, float expected) {
  if (std::isnan(actual) && std::isnan(expected)) return ::testing::AssertionSuccess();
  if (bits_of(actual) == bits_of(expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "bits 0x" << std::hex << bits_of(actual) << " (" << actual << "), expected 0x"
                                       << bits_of(expected) << " (" << expected << ")";
}

// Values with the specials mixed in (about one in `every`).
std::vector<float> values(std::size_t n, std::uint32_t seed, std::size_t every = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            0.0f,
                            -0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max()};
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = rng() % every == 0 ? specials[rng() % (sizeof specials / sizeof specials[0])] : dist(rng);
  }
  return v;
}

// Weights in [0, 1), about one in four exactly 0.
std::vector<float> weights(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = rng() % 4 == 0 ? 0.0f : dist(rng);
  return w;
}

std::string where(const SimdKernels& vec, const char* kernel, std::int64_t n, std::int64_t i) {
  return std::string(vec.name) + " " + kernel + " length " + std::to_string(n) + " element " + std::to_string(i);
}

float blended(float a, float b, float w) { return detail::canonical_nan(a + w * (b - a)); }

// Small work stays on few threads: one per grain of elements read and written, never more than asked, at least one;
// 0 asks for every CPU this process may use.
TEST(ThreadCounts, FollowTheWorkSize) {
  EXPECT_EQ(cpu::threads_for(8, 0, 32768), 1);
  EXPECT_EQ(cpu::threads_for(8, 15360, 32768), 1);  // a 1x3x64x64 -> 32x32 resample: 12288 + 3072 elements
  EXPECT_EQ(cpu::threads_for(8, 3 * 32768 + 5, 32768), 3);
  EXPECT_EQ(cpu::threads_for(8, std::int64_t{1} << 40, 32768), 8);
  EXPECT_EQ(cpu::threads_for(0, std::int64_t{1} << 40, 32768), usable_cpus());
  EXPECT_EQ(cpu::threads_for(3, 100, 1), 3);
  EXPECT_GE(usable_cpus(), 1);
  // ctest runs every test with RSZ_CPU_GRAIN=1 (tests/CMakeLists.txt), so the sweeps thread small tensors.
  const char* grain = std::getenv("RSZ_CPU_GRAIN");
  if (grain != nullptr && std::string(grain) == "1") {
    EXPECT_EQ(cpu::grain_elements(), 1);
  }
}

TEST(SimdDispatch, ChoosesAvx2WhereTheCpuHasItUnlessTheBaselineIsAsked) {
  const char* env = std::getenv("RSZ_CPU_BASELINE");
  const bool baseline = env != nullptr && std::strcmp(env, "") != 0 && std::strcmp(env, "0") != 0;
  const SimdKernels& expected = !baseline && cpu_runs_avx2() ? widest_table() : kBaselineKernels;
  EXPECT_EQ(&simd(), &expected) << "running " << simd().name << ", expected " << expected.name;
}

TEST(SimdKernels, TablesAreComplete) {
  for (const SimdKernels* vec : tables()) {
    SCOPED_TRACE(vec->name);
    EXPECT_NE(vec->widen_f16, nullptr);
    EXPECT_NE(vec->widen_u8, nullptr);
    EXPECT_NE(vec->narrow_f16, nullptr);
    EXPECT_NE(vec->canonicalize_nans, nullptr);
    EXPECT_NE(vec->lerp_pairs, nullptr);
    EXPECT_NE(vec->filter_row_halving, nullptr);
    EXPECT_NE(vec->blend_rows, nullptr);
    for (std::size_t a = 0; a < 2; ++a) {
      for (std::size_t p = 0; p < 4; ++p) {
        EXPECT_NE(vec->map_f32.pool[a][p], nullptr);
        EXPECT_NE(vec->map_f16.pool[a][p], nullptr);
      }
    }
    EXPECT_NE(vec->map_f32.transpose, nullptr);
    EXPECT_NE(vec->map_f16.transpose, nullptr);
    EXPECT_NE(vec->accumulate_y_sample, nullptr);
    EXPECT_NE(vec->accumulate_outside, nullptr);
  }
#if RSZ_CPU_X86_64
  // The AVX2 table has every strategy.
  EXPECT_NE(kAvx2Kernels.filter_row_doubling, nullptr);
  EXPECT_NE(kAvx2Kernels.halve_and_blend, nullptr);
  EXPECT_NE(kAvx2Kernels.pairs_and_blend, nullptr);
  EXPECT_NE(kAvx2Kernels.blend_rows_f16, nullptr);
  EXPECT_NE(kAvx2Kernels.blend_rows_stream, nullptr);
  EXPECT_NE(kAvx2Kernels.sum_taps, nullptr);
  EXPECT_TRUE(kAvx2Kernels.f16_maps);
  EXPECT_EQ(kAvx2Kernels.isa, Isa::Avx2);
#endif
  EXPECT_EQ(kBaselineKernels.isa, Isa::Baseline);
  EXPECT_FALSE(kBaselineKernels.f16_maps);
}

// Every float16 pattern, in runs starting at every phase of a vector.
TEST(SimdKernels, WidenFloat16MatchesThePortableConversion) {
  std::vector<std::uint16_t> all(65536 + 7);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  for (const SimdKernels* vec : tables()) {
    for (std::int64_t phase = 0; phase < 8; phase += 3) {
      std::vector<float> out(all.size(), -1.0f);
      const std::int64_t count = 65536;
      const std::int64_t done = vec->widen_f16(all.data() + phase, count, out.data());
      ASSERT_GE(done, 0);
      ASSERT_LE(done, count);
      if (vec->isa == Isa::Avx2) {
        EXPECT_EQ(done, count);
      }
      for (std::int64_t i = 0; i < done; ++i) {
        const float expected = float16_bits_to_float(all[static_cast<std::size_t>(phase + i)]);
        ASSERT_TRUE(same_value(out[static_cast<std::size_t>(i)], expected)) << where(*vec, "widen_f16", count, i);
      }
    }
  }
}

// Every 8-bit sample at strides 1 to 5 (gray, NCHW planes, RGB, RGBA rows) and at the edges of a buffer that ends
// right after its last sample (an exact-size allocation, so a read past it would fault under the sanitizers): the
// unorm value p / 255 of detail::unorm_to_float.
TEST(SimdKernels, WidenUnorm8MatchesTheSampleValues) {
  for (const SimdKernels* vec : tables()) {
    for (std::int64_t stride = 1; stride <= 5; ++stride) {
      for (const std::int64_t count : {std::int64_t{0}, std::int64_t{1}, std::int64_t{8}, std::int64_t{9},
                                       std::int64_t{17}, std::int64_t{256}, std::int64_t{301}}) {
        const auto bytes = static_cast<std::size_t>(count == 0 ? 0 : (count - 1) * stride + 1);
        std::unique_ptr<std::uint8_t[]> src(new std::uint8_t[bytes]);
        for (std::size_t b = 0; b < bytes; ++b) src[b] = static_cast<std::uint8_t>((b / static_cast<std::size_t>(stride)) * 7 + b);
        std::vector<float> out(static_cast<std::size_t>(count), -1.0f);
        const std::int64_t done = vec->widen_u8(src.get(), stride, count, out.data());
        ASSERT_GE(done, 0);
        ASSERT_LE(done, count);
        if (vec->isa == Isa::Avx2 && count >= 256) {
          EXPECT_GE(done, count - 16) << "stride " << stride;
        }
        for (std::int64_t i = 0; i < done; ++i) {
          const std::uint8_t p = src[static_cast<std::size_t>(i * stride)];
          ASSERT_EQ(out[static_cast<std::size_t>(i)], detail::unorm_to_float(p, 8))
              << where(*vec, "widen_u8", count, i) << " stride " << stride << " sample " << int{p};
        }
      }
    }
    // Every value 0..255 as every channel of an interleaved row (the vector conversion is a corrected product, not a
    // division: each of the 256 values must come out as the division rounds it).
    for (std::int64_t stride = 1; stride <= 5; ++stride) {
      std::vector<std::uint8_t> all(static_cast<std::size_t>(256 * stride + 64));
      const auto s = static_cast<std::size_t>(stride);
      for (std::size_t b = 0; b < all.size(); ++b) all[b] = static_cast<std::uint8_t>(b / s + b % s * 85);
      for (std::int64_t channel = 0; channel < stride; ++channel) {
        std::vector<float> out(264);
        const std::int64_t done = vec->widen_u8(all.data() + channel, stride, 264, out.data());
        if (vec->isa == Isa::Avx2) {
          EXPECT_GE(done, 256) << "stride " << stride;
        }
        for (std::int64_t i = 0; i < done; ++i) {
          const std::uint8_t p = all[static_cast<std::size_t>(channel + i * stride)];
          ASSERT_EQ(out[static_cast<std::size_t>(i)], detail::unorm_to_float(p, 8))
              << where(*vec, "widen_u8", 264, i) << " stride " << stride << " sample " << int{p};
        }
      }
    }
  }
}

TEST(SimdKernels, NarrowFloat16MatchesThePortableConversion) {
  // Random values of every magnitude float16 has (and beyond it), the specials, and ties between float16 values.
  std::vector<float> v = values(4096, 11);
  std::mt19937 rng(12);
  for (std::size_t i = 0; i < v.size(); i += 3) v[i] = std::ldexp(v[i], static_cast<int>(rng() % 50) - 30);
  for (std::uint32_t h = 0; h < 0x7c00; h += 97) {
    const float lo = float16_bits_to_float(static_cast<std::uint16_t>(h));
    const float hi = float16_bits_to_float(static_cast<std::uint16_t>(h + 1));
    v.push_back(lo + (hi - lo) / 2.0f);  // a tie: to the even one
  }
  for (const SimdKernels* vec : tables()) {
    for (std::int64_t n = 0; n <= 41; ++n) {
      std::vector<std::uint16_t> out(static_cast<std::size_t>(n), 0xdead);
      const std::int64_t done = vec->narrow_f16(v.data(), n, out.data());
      ASSERT_LE(done, n);
      for (std::int64_t i = 0; i < done; ++i) {
        ASSERT_EQ(out[static_cast<std::size_t>(i)], float_to_float16_bits(v[static_cast<std::size_t>(i)]))
            << where(*vec, "narrow_f16", n, i);
      }
    }
    std::vector<std::uint16_t> out(v.size());
    const auto count = static_cast<std::int64_t>(v.size());
    const std::int64_t done = vec->narrow_f16(v.data(), count, out.data());
    for (std::int64_t i = 0; i < done; ++i) {
      ASSERT_EQ(out[static_cast<std::size_t>(i)], float_to_float16_bits(v[static_cast<std::size_t>(i)]))
          << where(*vec, "narrow_f16", count, i) << " value " << v[static_cast<std::size_t>(i)];
    }
    if (vec->isa == Isa::Avx2) {
      EXPECT_EQ(done, count / 8 * 8);
    }
  }
}

TEST(SimdKernels, CanonicalizeNansAndBlendRows) {
  const float canonical = detail::the_canonical_nan();
  std::vector<float> nans = values(64, 21, 3);
  nans[5] = -std::numeric_limits<float>::quiet_NaN();
  std::uint32_t payload = 0x7fa00001u;  // a signalling NaN with a payload
  std::memcpy(&nans[9], &payload, sizeof payload);
  for (const SimdKernels* vec : tables()) {
    for (std::int64_t n = 0; n <= 41; ++n) {
      std::vector<float> row(nans.begin(), nans.begin() + n);
      vec->canonicalize_nans(row.data(), n);
      for (std::int64_t i = 0; i < n; ++i) {
        const float in = nans[static_cast<std::size_t>(i)];
        const float expected = std::isnan(in) ? canonical : in;
        ASSERT_EQ(bits_of(row[static_cast<std::size_t>(i)]), bits_of(expected))
            << where(*vec, "canonicalize_nans", n, i);
      }
      const std::vector<float> a = values(static_cast<std::size_t>(n), 22);
      const std::vector<float> b = values(static_cast<std::size_t>(n), 23);
      for (const float w : {0.0f, 0.25f, 0.8125f, 0.3f}) {
        std::vector<float> dst(static_cast<std::size_t>(n), 9.0f);
        vec->blend_rows(dst.data(), a.data(), b.data(), w, n);
        std::vector<float> same = a;  // dst may be a
        vec->blend_rows(same.data(), same.data(), b.data(), w, n);
        std::vector<float> streamed(static_cast<std::size_t>(n) + 8, 9.0f);
        std::vector<std::uint16_t> narrowed(static_cast<std::size_t>(n) + 8, 0xdead);
        for (std::int64_t i = 0; i < n; ++i) {
          const auto u = static_cast<std::size_t>(i);
          const float expected = blended(a[u], b[u], w);
          ASSERT_EQ(bits_of(dst[u]), bits_of(expected)) << where(*vec, "blend_rows", n, i);
          ASSERT_EQ(bits_of(same[u]), bits_of(expected)) << where(*vec, "blend_rows in place", n, i);
        }
        // The streaming forms start at every offset from their alignment.
        for (std::int64_t shift = 0; shift < 8; shift += 3) {
          for (bool stream : {false, true}) {
            if (vec->blend_rows_f16 == nullptr) break;
            std::fill(narrowed.begin(), narrowed.end(), std::uint16_t{0xdead});
            vec->blend_rows_f16(narrowed.data() + shift, a.data(), b.data(), w, n, stream);
            for (std::int64_t i = 0; i < n; ++i) {
              const auto u = static_cast<std::size_t>(i);
              ASSERT_EQ(narrowed[u + static_cast<std::size_t>(shift)], float_to_float16_bits(blended(a[u], b[u], w)))
                  << where(*vec, "blend_rows_f16", n, i);
            }
          }
          if (vec->blend_rows_stream == nullptr) continue;
          vec->blend_rows_stream(streamed.data() + shift, a.data(), b.data(), w, n);
          for (std::int64_t i = 0; i < n; ++i) {
            const auto u = static_cast<std::size_t>(i);
            ASSERT_EQ(bits_of(streamed[u + static_cast<std::size_t>(shift)]), bits_of(blended(a[u], b[u], w)))
                << where(*vec, "blend_rows_stream", n, i);
          }
        }
      }
    }
  }
}

// lerp_pairs and filter_row_halving against detail::lerp over tables of adjacent taps (halving: i0 = 2 x + base),
// and the fused halve_and_blend / pairs_and_blend against the lerps blended along H.
TEST(SimdKernels, PairedTapsMatchTheScalarLerps) {
  const std::vector<float> r0 = values(200, 31);
  const std::vector<float> r1 = values(200, 32);
  for (const SimdKernels* vec : tables()) {
    for (std::int64_t n = 0; n <= 41; ++n) {
      const std::vector<float> w = weights(static_cast<std::size_t>(n), 33 + static_cast<std::uint32_t>(n));
      std::vector<std::int64_t> scattered(static_cast<std::size_t>(n));
      std::vector<std::int64_t> halving(static_cast<std::size_t>(n));
      std::mt19937 rng(34);
      for (std::int64_t x = 0; x < n; ++x) {
        scattered[static_cast<std::size_t>(x)] = static_cast<std::int64_t>(rng() % 150);
        halving[static_cast<std::size_t>(x)] = 3 + 2 * x;
      }
      for (const bool halve : {false, true}) {
        const std::vector<std::int64_t>& i0 = halve ? halving : scattered;
        const auto lerp_at = [&](const std::vector<float>& row, std::int64_t x) {
          const auto u = static_cast<std::size_t>(x);
          return detail::lerp(row[static_cast<std::size_t>(i0[u])], row[static_cast<std::size_t>(i0[u] + 1)], w[u]);
        };
        std::vector<float> dst(static_cast<std::size_t>(n), 7.0f);
        const std::int64_t done = halve ? vec->filter_row_halving(r0.data(), i0.data(), w.data(), n, dst.data())
                                        : vec->lerp_pairs(r0.data(), i0.data(), w.data(), n, dst.data());
        ASSERT_LE(done, n);
        if (vec->isa == Isa::Avx2) {
          EXPECT_EQ(done, n / 8 * 8);
        }
        for (std::int64_t x = 0; x < done; ++x) {
          ASSERT_TRUE(same_value(dst[static_cast<std::size_t>(x)], lerp_at(r0, x)))
              << where(*vec, halve ? "filter_row_halving" : "lerp_pairs", n, x);
        }
        const auto fused = halve ? vec->halve_and_blend != nullptr : vec->pairs_and_blend != nullptr;
        if (!fused) continue;
        for (const float wy : {0.5f, 0.0625f}) {
          std::vector<float> out(static_cast<std::size_t>(n), 7.0f);
          const std::int64_t fused_done =
              halve
                  ? vec->halve_and_blend(r0.data(), r1.data(), i0.empty() ? 0 : i0[0], w.data(), wy, n, 64, out.data())
                  : vec->pairs_and_blend(r0.data(), r1.data(), i0.data(), w.data(), wy, n, out.data());
          ASSERT_LE(fused_done, n);
          EXPECT_EQ(fused_done, n / 8 * 8);  // every table with these kernels does whole vectors
          for (std::int64_t x = 0; x < fused_done; ++x) {
            const float top = lerp_at(r0, x);
            ASSERT_EQ(bits_of(out[static_cast<std::size_t>(x)]), bits_of(blended(top, lerp_at(r1, x), wy)))
                << where(*vec, halve ? "halve_and_blend" : "pairs_and_blend", n, x);
          }
        }
      }
    }
  }
}

// A doubling run: output 2m + j reads taps m + d[j] and m + d[j] + 1 with weight w[j].
TEST(SimdKernels, DoublingRunMatchesTheScalarLerps) {
  const std::vector<float> src = values(120, 41);
  for (const SimdKernels* vec : tables()) {
    if (vec->filter_row_doubling == nullptr) continue;
    for (const auto& [w0, w1] : {std::pair<float, float>{0.75f, 0.25f}, {0.0f, 0.5f}, {0.25f, 0.0f}}) {
      DoublingRun run;
      run.begin = 4;
      run.end = 4 + 48;
      run.d[0] = -1;
      run.d[1] = 0;
      run.w[0] = w0;
      run.w[1] = w1;
      std::vector<float> dst(60, 5.0f);
      vec->filter_row_doubling(src.data(), run, dst.data());
      for (std::int64_t o = 0; o < 60; ++o) {
        const auto u = static_cast<std::size_t>(o);
        if (o < run.begin || o >= run.end) {
          ASSERT_EQ(dst[u], 5.0f) << where(*vec, "filter_row_doubling (outside the run)", 48, o);
          continue;
        }
        const std::int64_t j = o % 2;
        const auto tap = static_cast<std::size_t>(o / 2 + run.d[j]);
        ASSERT_TRUE(same_value(dst[u], detail::lerp(src[tap], src[tap + 1], run.w[j])))
            << where(*vec, "filter_row_doubling", 48, o);
      }
    }
  }
}

// The antialiased W filter: weighted sums in index order (acc = w0 v0, then acc + w v), lanes of 3 to 40 taps (up to
// five vectors of them: the transposed plain loads inside the row, gathers at its right end).
TEST(SimdKernels, SumTapsMatchTheWeightedSums) {
  const std::vector<float> src = values(300, 51, 11);
  for (const SimdKernels* vec : tables()) {
    if (vec->sum_taps == nullptr) continue;
    for (const float scale : {0.3f, 0.5f, 0.137f, 0.05f}) {
      const auto out = static_cast<std::int64_t>(300 * scale);
      const TapTable t = make_tap_table(out, 300, scale, 0.5f, 0.5f, true);
      ASSERT_TRUE(t.sum);
      std::vector<float> wt(static_cast<std::size_t>(t.max_count * out), 0.0f);
      for (std::int64_t x = 0; x < out; ++x) {
        const auto i = static_cast<std::size_t>(x);
        for (std::int32_t k = 0; k < t.count[i]; ++k) {
          wt[static_cast<std::size_t>(k * out + x)] = t.weights[static_cast<std::size_t>(t.start[i] + k)];
        }
      }
      std::vector<float> dst(static_cast<std::size_t>(out), 3.0f);
      const std::int64_t done = vec->sum_taps(src.data(), t, wt.data(), out, dst.data());
      ASSERT_EQ(done, out / 8 * 8);
      for (std::int64_t x = 0; x < done; ++x) {
        const auto i = static_cast<std::size_t>(x);
        const float* v = src.data() + t.first[i];
        const float* w = t.weights.data() + t.start[i];
        float acc = w[0] * v[0];
        for (std::int32_t k = 1; k < t.count[i]; ++k) acc = detail::weighted_tap(acc, w[k], v[k]);
        ASSERT_TRUE(same_value(dst[i], acc)) << where(*vec, "sum_taps", out, x);
      }
    }
  }
}

TEST(SimdKernels, TransposesMoveEveryElement) {
  for (const SimdKernels* vec : tables()) {
    for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{8, 8}, {3, 5}, {17, 9}, {16, 24}}) {
      std::vector<float> src(static_cast<std::size_t>(rows * (cols + 2)));
      std::vector<std::uint16_t> src16(src.size());
      for (std::size_t i = 0; i < src.size(); ++i) {
        src[i] = static_cast<float>(i) + 0.5f;
        src16[i] = static_cast<std::uint16_t>(i * 7);
      }
      std::vector<float> dst(static_cast<std::size_t>(cols * (rows + 3)), -1.0f);
      std::vector<std::uint16_t> dst16(dst.size(), 0xffff);
      vec->map_f32.transpose(src.data(), cols + 2, rows, cols, dst.data(), rows + 3);
      vec->map_f16.transpose(src16.data(), cols + 2, rows, cols, dst16.data(), rows + 3);
      for (std::int64_t i = 0; i < rows; ++i) {
        for (std::int64_t j = 0; j < cols; ++j) {
          const auto from = static_cast<std::size_t>(i * (cols + 2) + j);
          const auto to = static_cast<std::size_t>(j * (rows + 3) + i);
          ASSERT_EQ(dst[to], src[from]) << where(*vec, "transpose_f32", rows * cols, i * cols + j);
          ASSERT_EQ(dst16[to], src16[from]) << where(*vec, "transpose_f16", rows * cols, i * cols + j);
        }
      }
    }
  }
}

}  // namespace
}  // namespace rsz::cpu
