// How many threads a CPU kernel call runs on (parallel.cpp): what the caller asked for, and no more than its work
// needs. Separate from parallel.h, whose templates most callers do not need.
#pragma once

#include <cstdint>

namespace rsz::cpu {

// Threads to use for `requested` (0: every CPU this process may use, rsz::usable_cpus).
int resolve_threads(int requested);

// Elements read and written per thread below which a call does not add threads: PyTorch's grain size for its CPU
// loops. Waking a team costs tens of microseconds; a 64 x 64 image's resample costs less than that on one thread.
constexpr std::int64_t kGrainElements = 32768;

// kGrainElements, or the environment's RSZ_CPU_GRAIN (a whole number >= 1; the tests set 1, so that small tensors
// still run on every thread they ask for and the sweeps reach the threaded paths). Read once per process.
std::int64_t grain_elements();

// Threads for a call that reads and writes about `elements` elements: resolve_threads(requested), but no more than
// one per grain_elements(), and at least one.
int threads_for(int requested, std::int64_t elements);
int threads_for(int requested, std::int64_t elements, std::int64_t grain);  // the same with this grain

}  // namespace rsz::cpu
