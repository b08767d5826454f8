// Which x86-64 extensions the optimized kernels may use, decided once per process: what the CPU supports, unless
// the environment variable RSZ_CPU_BASELINE is set to something other than "" or "0", which keeps every kernel on
// its baseline x86-64 code path (the tests use it to check those paths on any machine). Results never depend on it.
#pragma once

namespace rsz::cpu {

bool cpu_has_avx2_f16c();  // AVX2 and F16C (with AVX)
bool cpu_has_f16c();       // F16C (with AVX)

}  // namespace rsz::cpu
