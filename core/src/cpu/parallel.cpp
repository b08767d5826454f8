#include "cpu/parallel.h"

#include <cstring>
#include <thread>

namespace rsz::cpu {

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? static_cast<int>(hardware) : 1;
}

void parallel_copy(void* target, const void* source, std::size_t bytes, int threads) {
  constexpr std::int64_t kGrain = std::int64_t{1} << 20;  // 1 MiB a task: enough to amortize scheduling
  parallel_for(static_cast<std::int64_t>(bytes), kGrain, threads, [&](std::int64_t begin, std::int64_t end) {
    std::memcpy(static_cast<unsigned char*>(target) + begin, static_cast<const unsigned char*>(source) + begin,
                static_cast<std::size_t>(end - begin));
  });
}

}  // namespace rsz::cpu
