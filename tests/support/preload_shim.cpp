// Preloaded (LD_PRELOAD) into rsz by tests/cli/shards_test.cpp to stand for the places shards run in: getpid() is 1 in
// every process, as in containers where rsz is each pod's first process, and with RSZ_TEST_NO_LINK set link(2) fails
// with EPERM, as on shared storage without hard links.
#include <dlfcn.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdlib>

extern "C" pid_t getpid() { return 1; }

extern "C" int link(const char* from, const char* to) {
  if (std::getenv("RSZ_TEST_NO_LINK") != nullptr) {
    errno = EPERM;
    return -1;
  }
  using Link = int (*)(const char*, const char*);
  static const auto real = reinterpret_cast<Link>(dlsym(RTLD_NEXT, "link"));
  return real(from, to);
}
