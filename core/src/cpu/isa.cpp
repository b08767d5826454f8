#include "cpu/isa.h"

#include <cstdlib>
#include <cstring>

namespace rsz::cpu {
namespace {

bool baseline_requested() {
  const char* value = std::getenv("RSZ_CPU_BASELINE");
  return value != nullptr && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
}

}  // namespace

bool cpu_has_f16c() {
  static const bool supported =
      !baseline_requested() && __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return supported;
}

bool cpu_has_avx2_f16c() {
  static const bool supported = cpu_has_f16c() && __builtin_cpu_supports("avx2");
  return supported;
}

}  // namespace rsz::cpu
