#include "cpu/parallel.h"

#include <thread>

namespace rsz::cpu {

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? static_cast<int>(hardware) : 1;
}

}  // namespace rsz::cpu
