// The one place that schedules work: split [0, count) into fixed chunks and hand them to threads. Kernels only
// ever see a range of independent outputs, so results are bit-identical for any thread count.
#pragma once

#include <algorithm>
#include <cstdint>

namespace rsz::cpu {

// Threads to use for `requested` (0: all hardware threads).
int resolve_threads(int requested);

template <typename Body>
void parallel_for(std::int64_t count, std::int64_t grain, int threads, const Body& body) {
  if (count <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t chunks = (count + grain - 1) / grain;
  if (threads <= 1 || chunks <= 1) {
    body(std::int64_t{0}, count);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    const std::int64_t begin = chunk * grain;
    body(begin, std::min(count, begin + grain));
  }
}

}  // namespace rsz::cpu
