#include "cpu/parallel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "rsz/exec.h"

namespace rsz::cpu {

int resolve_threads(int requested) { return requested > 0 ? requested : usable_cpus(); }

std::int64_t grain_elements() {
  static const std::int64_t grain = [] {
    const char* value = std::getenv("RSZ_CPU_GRAIN");
    char* end = nullptr;
    const long long v = value != nullptr ? std::strtoll(value, &end, 10) : 0;
    return value != nullptr && end != value && *end == '\0' && v >= 1 ? static_cast<std::int64_t>(v) : kGrainElements;
  }();
  return grain;
}

int threads_for(int requested, std::int64_t elements, std::int64_t grain) {
  const std::int64_t by_work = std::max<std::int64_t>(1, elements / std::max<std::int64_t>(grain, 1));
  return static_cast<int>(std::min<std::int64_t>(resolve_threads(requested), by_work));
}

int threads_for(int requested, std::int64_t elements) { return threads_for(requested, elements, grain_elements()); }

void parallel_copy(void* target, const void* source, std::size_t bytes, int threads) {
  constexpr std::int64_t kGrain = std::int64_t{1} << 20;  // 1 MiB a task: enough to amortize scheduling
  parallel_for(static_cast<std::int64_t>(bytes), kGrain, threads, [&](std::int64_t begin, std::int64_t end) {
    std::memcpy(static_cast<unsigned char*>(target) + begin, static_cast<const unsigned char*>(source) + begin,
                static_cast<std::size_t>(end - begin));
  });
}

}  // namespace rsz::cpu

namespace rsz {

void parallel_tasks(std::int64_t count, int threads, const std::function<void(std::int64_t)>& task) {
  cpu::run_tasks(count, cpu::resolve_threads(threads), [](void* c, std::int64_t i) {
    (*static_cast<const std::function<void(std::int64_t)>*>(c))(i);
  }, const_cast<std::function<void(std::int64_t)>*>(&task));
}

}  // namespace rsz
