// The one place that schedules work: split [0, count) into fixed chunks and hand them to threads. Kernels only
// ever see a range of independent outputs, so results are bit-identical for any thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <cstddef>
#include <cstdint>

#include "cpu/threads.h"

namespace rsz::cpu {

// memcpy of `bytes` on up to `threads` threads, 1 MiB a task (the CUDA backend's copies through pinned memory).
void parallel_copy(void* target, const void* source, std::size_t bytes, int threads);

template <typename Body>
void parallel_for(std::int64_t count, std::int64_t grain, int threads, const Body& body) {
  if (count <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t chunks = (count + grain - 1) / grain;
  if (threads <= 1 || chunks <= 1) {
    body(std::int64_t{0}, count);
    return;
  }
  // An exception must not leave an OpenMP region (that terminates the process): the first one is kept, the
  // remaining chunks are skipped, and it is rethrown on the calling thread.
  std::exception_ptr error;
  std::atomic<bool> failed{false};
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    if (failed.load(std::memory_order_relaxed)) continue;
    const std::int64_t begin = chunk * grain;
    try {
      body(begin, std::min(count, begin + grain));
    } catch (...) {
#pragma omp critical(rsz_parallel_for_error)
      if (!error) error = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace rsz::cpu
