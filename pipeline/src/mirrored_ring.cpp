#include "mirrored_ring.h"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace rsz::app {

std::unique_ptr<MirroredRing> MirroredRing::create(std::size_t bytes) {
#if defined(__linux__)
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0 || bytes == 0 || bytes > (std::size_t{1} << 40)) return nullptr;
  const auto p = static_cast<std::size_t>(page);
  const std::size_t size = (bytes + p - 1) / p * p;
  const int fd = memfd_create("rsz-rows", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  void* whole = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(size)) == 0) {
    // Both halves are placed inside one reservation, so no other mapping can land between them.
    whole = mmap(nullptr, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (whole != MAP_FAILED) {
    auto* base = static_cast<std::uint8_t*>(whole);
    const int rw = PROT_READ | PROT_WRITE;
    if (mmap(base, size, rw, MAP_SHARED | MAP_FIXED, fd, 0) == base &&
        mmap(base + size, size, rw, MAP_SHARED | MAP_FIXED, fd, 0) == base + size) {
      close(fd);  // the mappings keep the memory
      return std::unique_ptr<MirroredRing>(new MirroredRing(base, size));
    }
    munmap(whole, 2 * size);
  }
  close(fd);
#else
  (void)bytes;
#endif
  return nullptr;
}

MirroredRing::~MirroredRing() {
#if defined(__linux__)
  munmap(base_, 2 * size_);
#endif
}

}  // namespace rsz::app
