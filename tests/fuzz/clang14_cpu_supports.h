// Force-included into core/src/cpu/simd.cpp by the RSZ_FUZZ build when the compiler is clang older than 15, whose
// __builtin_cpu_supports does not know "f16c" ("invalid cpu feature string for builtin"). Answers the four features
// simd.cpp asks about from CPUID as the builtin does (AVX also needs the OS to save the YMM state), so the fuzz build
// picks the same kernels as the GCC builds. Drop this file once simd.cpp no longer needs it.
#pragma once

#include <cpuid.h>

#include <cstring>

namespace rsz_fuzz_compat {

inline bool cpu_supports(const char* feature) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  const bool osxsave = (c & bit_OSXSAVE) != 0;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  if (osxsave) __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const bool avx = osxsave && (c & bit_AVX) != 0 && (xcr0_lo & 6u) == 6u;
  if (std::strcmp(feature, "avx") == 0) return avx;
  if (std::strcmp(feature, "f16c") == 0) return avx && (c & bit_F16C) != 0;
  if (std::strcmp(feature, "fma") == 0) return avx && (c & bit_FMA) != 0;
  if (std::strcmp(feature, "avx2") == 0) {
    unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
    return avx && __get_cpuid_count(7, 0, &a7, &b7, &c7, &d7) != 0 && (b7 & bit_AVX2) != 0;
  }
  return false;
}

}  // namespace rsz_fuzz_compat

#define __builtin_cpu_supports(feature) ::rsz_fuzz_compat::cpu_supports(feature)
