#include "rsz/exec.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

#ifdef __linux__
#include <sched.h>
#endif

namespace rsz {
namespace {

#ifdef __linux__
// The CPUs a cgroup v2 quota allows ("QUOTA PERIOD" in cpu.max, rounded up), the least over this process's cgroup and
// its ancestors; 0 where none is set or the files cannot be read (cgroup v1, no /sys).
int cgroup_cpus() {
  std::ifstream self("/proc/self/cgroup");
  std::string line;
  std::string relative;
  while (std::getline(self, line)) {
    if (line.rfind("0::", 0) == 0) relative = line.substr(3);
  }
  if (relative.empty()) return 0;
  int least = 0;
  for (std::string dir = "/sys/fs/cgroup" + (relative == "/" ? std::string() : relative);;) {
    std::ifstream max_file(dir + "/cpu.max");
    std::string quota;
    double period = 0.0;
    if (max_file >> quota >> period && quota != "max" && period > 0.0) {
      const double cpus = std::stod(quota) / period;
      const int whole = std::max(1, static_cast<int>(cpus + 0.999999));
      least = least == 0 ? whole : std::min(least, whole);
    }
    const std::size_t slash = dir.rfind('/');
    if (dir == "/sys/fs/cgroup" || slash == std::string::npos) break;
    dir.resize(slash);
  }
  return least;
}
#endif

}  // namespace

const char* to_string(Backend backend) {
  switch (backend) {
    case Backend::Auto: return "auto";
    case Backend::Reference: return "reference";
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
  }
  return "unknown";
}

int usable_cpus() {
  static const int cpus = [] {
    const unsigned hardware = std::thread::hardware_concurrency();
    int n = hardware > 0 ? static_cast<int>(hardware) : 1;
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) n = CPU_COUNT(&set);
    try {
      if (const int quota = cgroup_cpus(); quota > 0) n = std::min(n, quota);
    } catch (const std::exception&) {  // a cpu.max that std::stod cannot read: no quota
    }
#endif
    return std::max(1, n);
  }();
  return cpus;
}

}  // namespace rsz
