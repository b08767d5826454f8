// Images to and from 1 x C x H x W tensors (float32 or float16).
//
// Values: a sample p of bit depth b becomes p / M with M = 2^b - 1, computed in double and rounded once to float32
// (then once more to float16 for a float16 tensor). The way back is round(v * M) in double, saturated to [0, M],
// with NaN (and anything not above 0) giving 0. Float32 keeps p / M to a relative error of 2^-24 and float16 to
// 2^-11, so v * M lies within 65535 * 2^-24 < 0.01 (16 bits, float32) or 255 * 2^-11 < 0.13 (8 bits, float16) of p:
// the identity round trip is exact there, as the image tests check for every value.
//
// Premultiplied alpha (C = 2 or 4, alpha last): the tensor holds colour (c / M) * (a / M), computed in double and
// rounded once, and alpha a / M. The way back quantises alpha first; colour under a quantised alpha of 0 becomes 0
// (it carries no information), otherwise it is round(v_c / v_a * M) saturated to [0, M], so colour brighter than
// its alpha (ringing after filtering) saturates instead of wrapping. With alpha = M the tensor colour equals the
// straight value and the round trip is exact. With partial alpha the premultiplied colour and the alpha are each
// rounded once, so the recovered colour is off by a relative 2^-23 (float32) or 2^-10 (float16) before rounding:
// at 8 bits that is still exact for every colour and alpha > 0 in both types (checked exhaustively by the tests);
// at 16 bits in float16 small alphas lose colour precision, as float16 itself cannot hold 16-bit values exactly.
// Colour under alpha 0 is lost by design (it becomes 0).
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include "enum_names.h"
#include "rsz/error.h"
#include "rsz/float16.h"
#include "rsz/io/image.h"

namespace rsz::io {

const char* to_string(AlphaMode mode) { return mode == AlphaMode::Straight ? "straight" : "premultiplied"; }

namespace {
constexpr AlphaMode kAlphaModes[] = {AlphaMode::Premultiplied, AlphaMode::Straight};
constexpr DataType kComputeTypes[] = {DataType::Float32, DataType::Float16};
}  // namespace

std::vector<std::string> compute_type_names() { return detail::enum_names(kComputeTypes); }

DataType parse_compute_type(const std::string& text, const std::string& what) {
  return detail::parse_enum(kComputeTypes, text, what);
}

std::vector<std::string> alpha_mode_names() { return detail::enum_names(kAlphaModes); }

AlphaMode parse_alpha_mode(const std::string& text, const std::string& what) {
  return detail::parse_enum(kAlphaModes, text, what);
}
namespace {

[[noreturn]] void fail(ErrorCode code, const char* function, const std::string& what) {
  throw Error(code, std::string("rsz::io::") + function + ": " + what);
}

inline void store(float* out, double value) { *out = static_cast<float>(value); }
inline void store(Float16* out, double value) { *out = Float16(static_cast<float>(value)); }
inline float load(const float* in) { return *in; }
inline float load(const Float16* in) { return in->to_float(); }

template <typename Sample, typename Out>
void fill_tensor(const Image& image, const std::vector<Sample, SampleAllocator<Sample>>& data, AlphaMode alpha, Out* out) {
  const double max_value = image.bit_depth == 16 ? 65535.0 : 255.0;
  const int c_count = image.channels;
  const bool premultiply = alpha == AlphaMode::Premultiplied && (c_count == 2 || c_count == 4);
  const int colour_channels = premultiply ? c_count - 1 : c_count;
  const auto plane = static_cast<std::size_t>(image.width * image.height);
  const auto channels = static_cast<std::size_t>(c_count);
  // Straight values through a table made by the same store(), so each sample costs a lookup, not a division.
  std::vector<Out> lut(premultiply ? 0 : static_cast<std::size_t>(max_value) + 1);
  for (std::size_t p = 0; p < lut.size(); ++p) store(&lut[p], static_cast<double>(p) / max_value);
  for (std::size_t i = 0; i < plane; ++i) {
    const Sample* pixel = data.data() + i * channels;
    if (premultiply) {
      const double a = pixel[c_count - 1];
      store(out + static_cast<std::size_t>(c_count - 1) * plane + i, a / max_value);
      for (int k = 0; k < colour_channels; ++k) {
        store(out + static_cast<std::size_t>(k) * plane + i,
              static_cast<double>(pixel[k]) * a / (max_value * max_value));
      }
    } else {
      for (int k = 0; k < c_count; ++k) out[static_cast<std::size_t>(k) * plane + i] = lut[pixel[k]];
    }
  }
}

// round(v * max) saturated to [0, max]; NaN and values <= 0 give 0.
inline std::uint32_t quantize(double v, double max_value) {
  if (!(v > 0.0)) return 0;
  const double scaled = v * max_value;
  if (scaled >= max_value) return static_cast<std::uint32_t>(max_value);
  return static_cast<std::uint32_t>(std::round(scaled));
}

}  // namespace

std::uint32_t sample_of(double v, int bit_depth) { return quantize(v, bit_depth == 16 ? 65535.0 : 255.0); }

namespace {

// quantize() of a float32 (or float16) value, without a libm call per sample: v * max (max 255 or 65535) is exact in
// double, with at most 40 significant bits, so adding 0.5 is exact too (its lowest bit is no finer than the sum's
// last place), or for a product below 0.5 stays below 1; truncating the sum is then round() (halves away from zero).
inline std::uint32_t quantize_sample(float v, double max_value) {
  if (!(v > 0.0f)) return 0;
  const double scaled = static_cast<double>(v) * max_value;
  if (scaled >= max_value) return static_cast<std::uint32_t>(max_value);
  return static_cast<std::uint32_t>(scaled + 0.5);
}

// quantize_sample over a contiguous row of float32 into every `step`-th sample of `dst`; x86-64 with AVX2 takes 8
// values a step in double (the same operations, so the same bits: max(v * M, 0) also turns NaN into 0, min(., M)
// saturates, truncating s + 0.5 rounds), the rest one at a time.
template <typename Sample>
void quantize_row_scalar(const float* src, std::int64_t n, double max_value, Sample* dst, int step) {
  for (std::int64_t x = 0; x < n; ++x) dst[x * step] = static_cast<Sample>(quantize_sample(src[x], max_value));
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// Eight quantize_sample values of src[0..7] as 32-bit lanes, in order.
__attribute__((target("avx2"))) inline __m256i quantize8_avx2(const float* src, __m256d m) {
  const __m256d half = _mm256_set1_pd(0.5);
  const __m256d zero = _mm256_setzero_pd();
  const __m256 v = _mm256_loadu_ps(src);
  __m256d lo = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), m);
  __m256d hi = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), m);
  lo = _mm256_min_pd(_mm256_max_pd(lo, zero), m);  // maxpd gives its second operand for a NaN first
  hi = _mm256_min_pd(_mm256_max_pd(hi, zero), m);
  const __m128i qlo = _mm256_cvttpd_epi32(_mm256_add_pd(lo, half));
  const __m128i qhi = _mm256_cvttpd_epi32(_mm256_add_pd(hi, half));
  return _mm256_set_m128i(qhi, qlo);
}

template <typename Sample>
__attribute__((target("avx2"))) void quantize_row_avx2(const float* src, std::int64_t n, double max_value,
                                                       Sample* dst, int step) {
  const __m256d m = _mm256_set1_pd(max_value);
  alignas(32) std::int32_t q[8];
  std::int64_t x = 0;
  for (; x + 8 <= n; x += 8) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(q), quantize8_avx2(src + x, m));
    Sample* d = dst + x * step;
    for (int i = 0; i < 8; ++i) d[i * step] = static_cast<Sample>(q[i]);
  }
  quantize_row_scalar(src + x, n - x, max_value, dst + x * step, step);
}

// quantize_sample of three contiguous float32 rows (R, G, B) into one row of 8-bit RGB pixels: eight pixels a step,
// packed and interleaved in registers (24 bytes: two 16-byte stores, the second over the first's 4 spare bytes, so a
// step writes 4 bytes past its pixels and the loop leaves the last ones to quantize_row_scalar).
__attribute__((target("avx2"))) void quantize_rgb8_avx2(const float* r, const float* g, const float* b,
                                                       std::int64_t n, std::uint8_t* dst) {
  const __m256d m = _mm256_set1_pd(255.0);
  // Per 128-bit lane after the packs: r0..r3 g0..g3 b0..b3 b0..b3 (and r4.. in the upper lane) -> r0 g0 b0 r1 ...
  const __m256i order = _mm256_setr_epi8(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, -1, -1, -1, -1,  //
                                         0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, -1, -1, -1, -1);
  std::int64_t x = 0;
  for (; x + 10 <= n; x += 8) {
    const __m256i rg = _mm256_packus_epi32(quantize8_avx2(r + x, m), quantize8_avx2(g + x, m));
    const __m256i bb = quantize8_avx2(b + x, m);
    const __m256i bytes = _mm256_shuffle_epi8(_mm256_packus_epi16(rg, _mm256_packus_epi32(bb, bb)), order);
    std::uint8_t* d = dst + x * 3;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_castsi256_si128(bytes));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 12), _mm256_extracti128_si256(bytes, 1));
  }
  quantize_row_scalar(r + x, n - x, 255.0, dst + x * 3, 3);
  quantize_row_scalar(g + x, n - x, 255.0, dst + x * 3 + 1, 3);
  quantize_row_scalar(b + x, n - x, 255.0, dst + x * 3 + 2, 3);
}

// Whether this CPU runs the AVX2 conversions (asked once).
bool has_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}

template <typename Sample>
void quantize_row(const float* src, std::int64_t n, double max_value, Sample* dst, int step) {
  if (has_avx2()) {
    quantize_row_avx2(src, n, max_value, dst, step);
  } else {
    quantize_row_scalar(src, n, max_value, dst, step);
  }
}

// quantize_rgb8_avx2 where the CPU has AVX2; false (nothing written) where not.
bool quantize_rgb8(const float* r, const float* g, const float* b, std::int64_t n, std::uint8_t* dst) {
  if (has_avx2()) quantize_rgb8_avx2(r, g, b, n, dst);
  return has_avx2();
}
#else
template <typename Sample>
void quantize_row(const float* src, std::int64_t n, double max_value, Sample* dst, int step) {
  quantize_row_scalar(src, n, max_value, dst, step);
}

bool quantize_rgb8(const float*, const float*, const float*, std::int64_t, std::uint8_t*) { return false; }
#endif

template <typename In, typename Sample>
void fill_image(const ConstTensorView& tensor, AlphaMode alpha, double max_value,
                std::vector<Sample, SampleAllocator<Sample>>& out) {
  const auto* base = static_cast<const In*>(tensor.data());
  const int c_count = static_cast<int>(tensor.size(1));
  const std::int64_t height = tensor.size(2);
  const std::int64_t width = tensor.size(3);
  const std::int64_t sc = tensor.stride(1);
  const std::int64_t sy = tensor.stride(2);
  const std::int64_t sx = tensor.stride(3);
  const bool unpremultiply = alpha == AlphaMode::Premultiplied && (c_count == 2 || c_count == 4);
  const int colour_channels = unpremultiply ? c_count - 1 : c_count;
  if (!unpremultiply) {  // channel by channel along each row: one sample's quantize per step, no per-pixel setup
    for (std::int64_t y = 0; y < height; ++y) {
      Sample* row = out.data() + y * width * c_count;
      if constexpr (std::is_same_v<In, float> && std::is_same_v<Sample, std::uint8_t>) {  // RGB: whole pixels a step
        const In* src = base + y * sy;
        if (c_count == 3 && sx == 1 && max_value == 255.0 &&
            quantize_rgb8(src, src + sc, src + 2 * sc, width, row)) {
          continue;
        }
      }
      for (int k = 0; k < c_count; ++k) {
        const In* src = base + y * sy + k * sc;
        Sample* dst = row + k;
        if constexpr (std::is_same_v<In, float>) {
          if (sx == 1) {
            quantize_row(src, width, max_value, dst, c_count);
            continue;
          }
        }
        for (std::int64_t x = 0; x < width; ++x) {
          dst[x * c_count] = static_cast<Sample>(quantize_sample(load(src + x * sx), max_value));
        }
      }
    }
    return;
  }
  Sample* dst = out.data();
  for (std::int64_t y = 0; y < height; ++y) {
    for (std::int64_t x = 0; x < width; ++x, dst += c_count) {
      const In* pixel = base + y * sy + x * sx;
      const double a = load(pixel + (c_count - 1) * sc);
      const std::uint32_t qa = quantize_sample(static_cast<float>(a), max_value);
      dst[c_count - 1] = static_cast<Sample>(qa);
      for (int k = 0; k < colour_channels; ++k) {
        dst[k] = qa == 0 ? Sample{0} : static_cast<Sample>(quantize(load(pixel + k * sc) / a, max_value));
      }
    }
  }
}

}  // namespace

Tensor image_to_tensor(const Image& image, DataType type, AlphaMode alpha) {
  constexpr const char* kName = "image_to_tensor";
  if (image.channels < 1 || image.channels > 4) {
    fail(ErrorCode::InvalidArgument, kName,
         "the image has " + std::to_string(image.channels) + " channels; 1 to 4 are allowed");
  }
  if (image.bit_depth != 8 && image.bit_depth != 16) {
    fail(ErrorCode::InvalidArgument, kName,
         "the image has bit depth " + std::to_string(image.bit_depth) + "; 8 or 16 is allowed");
  }
  if (image.width < 1 || image.height < 1) {
    fail(ErrorCode::InvalidArgument, kName,
         "the image is " + std::to_string(image.width) + " x " + std::to_string(image.height) +
             " pixels; width and height >= 1 are allowed");
  }
  std::int64_t samples = 0;
  if (__builtin_mul_overflow(image.width, image.height, &samples) ||
      __builtin_mul_overflow(samples, std::int64_t{image.channels}, &samples)) {
    fail(ErrorCode::InvalidArgument, kName, "the image size overflows int64");
  }
  const std::size_t have = image.bit_depth == 8 ? image.data8.size() : image.data16.size();
  if (have != static_cast<std::size_t>(samples)) {
    fail(ErrorCode::InvalidArgument, kName,
         "the image needs " + std::to_string(samples) + " samples but its " +
             (image.bit_depth == 8 ? "data8" : "data16") + " buffer holds " + std::to_string(have));
  }
  if (type != DataType::Float32 && type != DataType::Float16) {
    fail(ErrorCode::InvalidDataType, kName,
         std::string("data type ") + to_string(type) + " is not supported; float32 or float16 is allowed");
  }
  Tensor tensor(type, {1, image.channels, image.height, image.width}, TensorInit::Uninitialized);  // every element is written below
  if (type == DataType::Float32) {
    auto* out = tensor.data_as<float>();
    if (image.bit_depth == 8)
      fill_tensor(image, image.data8, alpha, out);
    else
      fill_tensor(image, image.data16, alpha, out);
  } else {
    auto* out = tensor.data_as<Float16>();
    if (image.bit_depth == 8)
      fill_tensor(image, image.data8, alpha, out);
    else
      fill_tensor(image, image.data16, alpha, out);
  }
  return tensor;
}

Image tensor_to_image(const ConstTensorView& tensor, int bit_depth, AlphaMode alpha) {
  constexpr const char* kName = "tensor_to_image";
  if (tensor.dtype() != DataType::Float32 && tensor.dtype() != DataType::Float16) {
    fail(ErrorCode::InvalidDataType, kName,
         std::string("data type ") + to_string(tensor.dtype()) + " is not supported; float32 or float16 is allowed");
  }
  if (tensor.rank() != 4 || tensor.size(0) != 1 || tensor.size(1) < 1 || tensor.size(1) > 4 || tensor.size(2) < 1 ||
      tensor.size(3) < 1) {
    fail(ErrorCode::InvalidShape, kName,
         "tensor sizes " + dims_to_string(tensor.sizes()) +
             " are not supported; 1 x C x H x W with C in 1..4 and H, W >= 1 is allowed");
  }
  if (bit_depth != 8 && bit_depth != 16) {
    fail(ErrorCode::InvalidArgument, kName,
         "bit_depth " + std::to_string(bit_depth) + " is not supported; 8 or 16 is allowed");
  }
  Image image;
  image.channels = static_cast<int>(tensor.size(1));
  image.height = tensor.size(2);
  image.width = tensor.size(3);
  image.bit_depth = bit_depth;
  std::int64_t samples = 0;
  if (__builtin_mul_overflow(image.width, image.height, &samples) ||
      __builtin_mul_overflow(samples, std::int64_t{image.channels}, &samples)) {
    fail(ErrorCode::InvalidShape, kName, "tensor sizes " + dims_to_string(tensor.sizes()) + " overflow int64");
  }
  const bool half = tensor.dtype() == DataType::Float16;
  if (bit_depth == 8) {
    image.data8.resize(static_cast<std::size_t>(samples));
    if (half)
      fill_image<Float16>(tensor, alpha, 255.0, image.data8);
    else
      fill_image<float>(tensor, alpha, 255.0, image.data8);
  } else {
    image.data16.resize(static_cast<std::size_t>(samples));
    if (half)
      fill_image<Float16>(tensor, alpha, 65535.0, image.data16);
    else
      fill_image<float>(tensor, alpha, 65535.0, image.data16);
  }
  return image;
}

}  // namespace rsz::io
