// The one place that schedules work: split [0, count) into fixed chunks and hand them to threads. Kernels only
// ever see a range of independent outputs, so results are bit-identical for any thread count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cpu/pool.h"
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
  // Fixed chunks of `grain`, claimed in order by the pool's threads (pool.h): the same split for any thread count.
  struct Context {
    const Body* body;
    std::int64_t count;
    std::int64_t grain;
  } context{&body, count, grain};
  run_tasks(chunks, threads, [](void* c, std::int64_t chunk) {
    const auto& ctx = *static_cast<const Context*>(c);
    const std::int64_t begin = chunk * ctx.grain;
    (*ctx.body)(begin, std::min(ctx.count, begin + ctx.grain));
  }, &context);
}

}  // namespace rsz::cpu
