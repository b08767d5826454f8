#include "cpu/simd.h"

#include <cstdlib>
#include <cstring>

namespace rsz::cpu {
namespace {

bool baseline_requested() {
  const char* value = std::getenv("RSZ_CPU_BASELINE");
  return value != nullptr && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
}

const SimdKernels& choose() {
#if RSZ_CPU_X86_64
  if (!baseline_requested() && __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c") &&
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return kAvx2Kernels;
  }
#else
  (void)baseline_requested;
#endif
  return kBaselineKernels;
}

}  // namespace

const SimdKernels& simd() {
  static const SimdKernels& table = choose();
  return table;
}

}  // namespace rsz::cpu
