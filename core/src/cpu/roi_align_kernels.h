// ROI_ALIGN inner loops, written once with GCC vector extensions and compiled once per instruction set, inside the
// namespace of each SimdKernels table (simd.h): simd_avx2.cpp under its target pragma with 8-lane vectors,
// simd_baseline.cpp with 4-lane vectors. No include guard on purpose. The includer defines RSZ_SIMD_LANES and has
// included cpu/simd.h, rsz/float16.h and, on x86-64, <immintrin.h>.
//
// Every function here evaluates, per channel and per sample, exactly the reference's expressions in the reference's
// order (lerp along x on the top and bottom rows, then along y, `a + w * (b - a)`, a zero weight taking the first
// tap; accumulation over iy outer, ix inner; max keeps the first sample and replaces it by any larger one). Vector
// lanes only ever hold different channels or different output columns, never parts of one sum.

constexpr int kLanes = RSZ_SIMD_LANES;
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

inline Vec load_vec(const float* p) {
  Vec v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

// kLanes float16 values (bits), widened exactly.
inline Vec load_vec(const std::uint16_t* p) {
#if RSZ_SIMD_LANES == 8
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#else
  Vec v;
  for (int i = 0; i < kLanes; ++i) v[i] = float16_bits_to_float(p[i]);
  return v;
#endif
}

inline void store_vec(float* p, Vec v) { __builtin_memcpy(p, &v, sizeof v); }

// One broadcast (an element-by-element fill compiles to a chain of inserts).
inline Vec splat(float x) {
#if RSZ_SIMD_LANES == 8
  return _mm256_set1_ps(x);
#elif RSZ_CPU_X86_64
  return _mm_set1_ps(x);
#else
  return Vec{} + x;  // GCC broadcasts the scalar operand (a dup on aarch64)
#endif
}

// Folds one sample into the running reduction (the first sample of an average starts from 0.0f + v, as in the
// reference; the first of a max is taken as is).
inline float reduce_scalar(float acc, float v, bool average, bool first) {
  if (average) return (first ? 0.0f : acc) + v;
  if (first) return v;
  return v > acc ? v : acc;
}

// The value of one sample at kVecs vectors of channels, each passed to fold(k, value): `a`/`b` are the x taps on
// the top row, `c`/`d` on the bottom row; a zero weight reads the first tap only, as the reference does. The four
// weight cases are separate loops so that no test is left inside them.
template <int kVecs, typename T, typename Fold>
inline void sample_taps(const T* a, const T* b, const T* c, const T* d, float wx, float wy,
                        Fold fold) {
  const Vec wx_v = splat(wx);
  const Vec wy_v = splat(wy);
  if (wy == 0.0f) {
    if (wx == 0.0f) {
      for (int k = 0; k < kVecs; ++k) fold(k, load_vec(a + k * kLanes));
    } else {
      for (int k = 0; k < kVecs; ++k) {
        const Vec top = load_vec(a + k * kLanes);
        fold(k, top + wx_v * (load_vec(b + k * kLanes) - top));
      }
    }
  } else if (wx == 0.0f) {
    for (int k = 0; k < kVecs; ++k) {
      const Vec top = load_vec(a + k * kLanes);
      fold(k, top + wy_v * (load_vec(c + k * kLanes) - top));
    }
  } else {
    for (int k = 0; k < kVecs; ++k) {
      const int o = k * kLanes;
      const Vec top0 = load_vec(a + o);
      const Vec top = top0 + wx_v * (load_vec(b + o) - top0);
      const Vec bottom0 = load_vec(c + o);
      const Vec bottom = bottom0 + wx_v * (load_vec(d + o) - bottom0);
      fold(k, top + wy_v * (bottom - top));
    }
  }
}

// Channels-last pooling of one ROI: `map` holds pixels of kPixel float32 channels (row stride in the tables), the
// result `res` holds out_h * out_w pixels of kPixel channels. The running reduction of a pixel stays in registers;
// an average starts from zero (the reference's 0.0f + first sample), a max from its first sample.
template <int kPixel, bool kAverage, typename T>
void pool_channels_last(const RoiAxisTable& tx, const RoiAxisTable& ty, const T* map, std::int64_t out_h,
                        std::int64_t out_w, float oob, float count, float* res) {
  constexpr int kVecs = kPixel / kLanes;
  const std::uint32_t sx = tx.samples;
  const std::uint32_t sy = ty.samples;
  const std::int64_t* x0 = tx.t0.data();
  const std::int64_t* x1 = tx.t1.data();
  const float* wxs = tx.w.data();
  const unsigned char* x_inside = tx.inside.data();
  const Vec oob_v = splat(oob);
  const Vec count_v = splat(count);
  for (std::int64_t oy = 0; oy < out_h; ++oy) {
    for (std::int64_t ox = 0; ox < out_w; ++ox) {
      Vec acc[kVecs];
      for (int k = 0; k < kVecs; ++k) acc[k] = splat(0.0f);
      bool first = !kAverage;
      for (std::uint32_t iy = 0; iy < sy; ++iy) {
        const auto ey = static_cast<std::size_t>(oy) * sy + iy;
        const bool y_inside = ty.inside[ey];
        const float wy = ty.w[ey];
        const T* row0 = map + ty.t0[ey];
        const T* row1 = map + ty.t1[ey];
        for (std::uint32_t ix = 0; ix < sx; ++ix) {
          const auto ex = static_cast<std::size_t>(ox) * sx + ix;
          const auto fold = [&](int k, Vec v) {
            if (kAverage) {
              acc[k] = acc[k] + v;
            } else {
              acc[k] = first ? v : (v > acc[k] ? v : acc[k]);
            }
          };
          if (y_inside && x_inside[ex]) {
            sample_taps<kVecs>(row0 + x0[ex], row0 + x1[ex], row1 + x0[ex], row1 + x1[ex], wxs[ex], wy, fold);
          } else {
            for (int k = 0; k < kVecs; ++k) fold(k, oob_v);
          }
          first = false;
        }
      }
      float* out = res + (oy * out_w + ox) * kPixel;
      for (int k = 0; k < kVecs; ++k) store_vec(out + k * kLanes, kAverage ? acc[k] / count_v : acc[k]);
    }
  }
}

inline PlaneFold pass_of(const PlaneFold& f, std::uint32_t ix, std::uint32_t sx) {
  PlaneFold pass = f;
  pass.first = f.first && ix == 0;
  pass.last = f.last && ix + 1 == sx;
  return pass;
}

// Folds one column value into the row, as PlaneFold says.
inline void fold_scalar(const PlaneFold& f, std::int64_t ox, float v) {
  const float r = reduce_scalar(f.acc[ox], v, f.average, f.first);
  if (!f.last) {
    f.acc[ox] = r;
  } else {
    f.out[ox] = f.average ? r / f.count : r;
  }
}

// One pass (one ix) of a y sample over the output columns, with the fold's flags as template parameters so that
// the loop holds no tests: v = lerp of the x-lerped rows t and b (t alone where wy is 0; `oob` where `in` says the
// x sample is outside), folded into acc, or finished into out on the last pass.
template <bool kFirst, bool kLast, bool kAverage>
void y_pass(const float* t, const float* b, float wy, const unsigned char* in, std::int64_t out_w, float oob,
            const PlaneFold& f) {
  float* acc = f.acc;
  float* out = f.out;
  const Vec wy_v = splat(wy);
  const Vec count_v = splat(f.count);
  const bool blend = wy != 0.0f;
  const auto fold = [&](std::int64_t ox, Vec v) {
    Vec r = v;
    if (kAverage) {
      r = (kFirst ? splat(0.0f) : load_vec(acc + ox)) + v;
    } else if (!kFirst) {
      const Vec a = load_vec(acc + ox);
      r = v > a ? v : a;
    }
    if (kLast) {
      store_vec(out + ox, kAverage ? r / count_v : r);
    } else {
      store_vec(acc + ox, r);
    }
  };
  std::int64_t ox = 0;
  for (; ox + kLanes <= out_w; ox += kLanes) {
    Vec v = load_vec(t + ox);
    if (blend) v = v + wy_v * (load_vec(b + ox) - v);
    if (in) {
      for (int l = 0; l < kLanes; ++l) {
        if (!in[ox + l]) v[l] = oob;
      }
    }
    fold(ox, v);
  }
  for (; ox < out_w; ++ox) {
    float v = t[ox];
    if (blend) v = v + wy * (b[ox] - v);
    if (in && !in[ox]) v = oob;
    fold_scalar(f, ox, v);
  }
}

// Plane path, one y sample: folds the samples (iy, ix) for ix = 0..sx-1 of every output column.
// `top` and `bottom` are the x-lerped source rows, laid out ix-major (entry ix * out_w + ox); `inside_x` is null
// when every x sample is in bounds. wy == 0 reads the top row only.
inline void accumulate_y_sample(const float* top, const float* bottom, float wy, const unsigned char* inside_x,
                                std::uint32_t sx, std::int64_t out_w, float oob, const PlaneFold& fold) {
  for (std::uint32_t ix = 0; ix < sx; ++ix) {
    const float* t = top + static_cast<std::int64_t>(ix) * out_w;
    const float* b = bottom + static_cast<std::int64_t>(ix) * out_w;
    const unsigned char* in = inside_x ? inside_x + static_cast<std::int64_t>(ix) * out_w : nullptr;
    const PlaneFold f = pass_of(fold, ix, sx);
    const int mode = (f.first ? 1 : 0) | (f.last ? 2 : 0) | (f.average ? 4 : 0);
    switch (mode) {
#define RSZ_Y_PASS(M)                                                                                         \
  case M:                                                                                                     \
    y_pass<((M)&1) != 0, ((M)&2) != 0, ((M)&4) != 0>(t, b, wy, in, out_w, oob, f);                           \
    break;
      RSZ_Y_PASS(0)
      RSZ_Y_PASS(1)
      RSZ_Y_PASS(2)
      RSZ_Y_PASS(3)
      RSZ_Y_PASS(4)
      RSZ_Y_PASS(5)
      RSZ_Y_PASS(6)
      RSZ_Y_PASS(7)
#undef RSZ_Y_PASS
      default:
        break;
    }
  }
}

// Plane path, a y sample that is out of bounds: every one of its sx samples per column reads `oob`.
inline void accumulate_outside(std::uint32_t sx, std::int64_t out_w, float oob, const PlaneFold& fold) {
  for (std::uint32_t ix = 0; ix < sx; ++ix) {
    const PlaneFold pass = pass_of(fold, ix, sx);
    for (std::int64_t ox = 0; ox < out_w; ++ox) fold_scalar(pass, ox, oob);
  }
}

// dst[j * dst_stride + i] = src[i * src_stride + j] for i, j < 8 (an 8 x 8 block transposed; moves only).
inline void transpose8x8(const float* src, std::int64_t src_stride, float* dst, std::int64_t dst_stride) {
#if RSZ_SIMD_LANES == 8  // the AVX2 build (a target pragma does not define __AVX2__ in C++)
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * src_stride);
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  __m256 u[8];
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_ps(dst + j * dst_stride, _mm256_permute2f128_ps(u[j], u[j + 4], 0x20));
    _mm256_storeu_ps(dst + (j + 4) * dst_stride, _mm256_permute2f128_ps(u[j], u[j + 4], 0x31));
  }
#else
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) dst[j * dst_stride + i] = src[i * src_stride + j];
  }
#endif
}

// The same for 16-bit elements (float16 bits), with SSE2 (every x86-64 CPU): pairs, then quads, then halves of
// the rows interleaved; elsewhere element by element (the compiler vectorizes what it can).
inline void transpose8x8(const std::uint16_t* src, std::int64_t src_stride, std::uint16_t* dst,
                         std::int64_t dst_stride) {
#if !RSZ_CPU_X86_64
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) dst[j * dst_stride + i] = src[i * src_stride + j];
  }
#else
  __m128i r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_stride));
  __m128i a[8];
  for (int i = 0; i < 8; i += 2) {
    a[i] = _mm_unpacklo_epi16(r[i], r[i + 1]);      // columns 0-3 of rows i, i + 1
    a[i + 1] = _mm_unpackhi_epi16(r[i], r[i + 1]);  // columns 4-7
  }
  __m128i b[8];
  for (int i = 0; i < 8; i += 4) {
    b[i] = _mm_unpacklo_epi32(a[i], a[i + 2]);          // columns 0-1 of rows i .. i + 3
    b[i + 1] = _mm_unpackhi_epi32(a[i], a[i + 2]);      // columns 2-3
    b[i + 2] = _mm_unpacklo_epi32(a[i + 1], a[i + 3]);  // columns 4-5
    b[i + 3] = _mm_unpackhi_epi32(a[i + 1], a[i + 3]);  // columns 6-7
  }
  for (int j = 0; j < 4; ++j) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * j) * dst_stride), _mm_unpacklo_epi64(b[j], b[j + 4]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * j + 1) * dst_stride), _mm_unpackhi_epi64(b[j], b[j + 4]));
  }
#endif
}

// dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols: 8 x 8 blocks, then the edges.
template <typename T>
void transpose(const T* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols, T* dst,
               std::int64_t dst_stride) {
  const std::int64_t rows8 = rows / 8 * 8;
  const std::int64_t cols8 = cols / 8 * 8;
  for (std::int64_t i = 0; i < rows8; i += 8) {
    for (std::int64_t j = 0; j < cols8; j += 8) {
      transpose8x8(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
    }
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = i < rows8 ? cols8 : 0; j < cols; ++j) dst[j * dst_stride + i] = src[i * src_stride + j];
  }
}

// This ISA's channels-last kernels for maps of T, as its SimdKernels table holds them.
template <typename T>
constexpr MapKernels<T> map_kernels() {
  return {{{{pool_channels_last<8, false, T>, pool_channels_last<16, false, T>, pool_channels_last<24, false, T>,
             pool_channels_last<32, false, T>},
            {pool_channels_last<8, true, T>, pool_channels_last<16, true, T>, pool_channels_last<24, true, T>,
             pool_channels_last<32, true, T>}}},
          transpose<T>};
}
