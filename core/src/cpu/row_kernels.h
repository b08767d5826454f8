// Row kernels written once in plain C++ and compiled once per instruction set, inside the namespace of each
// SimdKernels table (simd_avx2.cpp under its target pragma, where the compiler vectorizes them with 8 lanes;
// simd_baseline.cpp). No include guard on purpose; the includer has included detail/access.h.

// dst[x] = a[x] + w * (b[x] - a[x]), a NaN stored as detail::canonical_nan (harmless where the row is blended
// again: it stays a NaN, and every final NaN is canonical anyway); dst may be a.
void blend_rows(float* dst, const float* a, const float* b, float w, std::int64_t count) {
  const float nan = detail::the_canonical_nan();
  for (std::int64_t x = 0; x < count; ++x) {
    const float v = a[x] + w * (b[x] - a[x]);
    dst[x] = v == v ? v : nan;
  }
}

// Every NaN in row[0, count) becomes detail::canonical_nan (SEMANTICS.md §0, computed results).
void canonicalize_nans(float* row, std::int64_t count) {
  const float nan = detail::the_canonical_nan();
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = row[i];
    row[i] = v == v ? v : nan;
  }
}
