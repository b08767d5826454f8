#include "cpu/scratch.h"

#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace rsz::cpu {
namespace {

// Buffers of at least a huge page start on one and are asked to be backed by huge pages (Linux, where transparent
// huge pages are left to madvise): the pooling reads 128-byte pixels all over a 7 MB copy, one 4 KiB page each,
// and a miss in the TLB is two page walks in a virtual machine. Smaller buffers start on a cache line, so that a
// pixel of 32 float32 channels is two lines, not three (new[] of a large block returns an address 16 bytes past a
// page start).
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kLine = 64;

std::byte* allocate(std::size_t bytes) {
  const std::size_t align = bytes >= kHugePage ? kHugePage : kLine;
  if (bytes > SIZE_MAX - align) throw std::bad_alloc();
  const std::size_t size = (std::max<std::size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, size);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (align == kHugePage) madvise(p, size, MADV_HUGEPAGE);  // advice only: its failure changes nothing
#endif
  return static_cast<std::byte*>(p);
}

std::mutex g_mutex;
bool g_taken = false;
Buffer g_buffer;  // not initialized: pages are touched first by the call that writes them
std::size_t g_size = 0;

// fork(): the mutex is held across it, so that a child never starts with it locked by a thread it does not have; the
// child's copy of the kept buffer is its own, and free (the thread that held it is not there).
const int g_fork_handlers = pthread_atfork([] { g_mutex.lock(); }, [] { g_mutex.unlock(); },
                                           [] {
                                             g_taken = false;
                                             g_mutex.unlock();
                                           });

}  // namespace

Scratch::Scratch(std::size_t bytes) {
  if (bytes <= kKeptScratchBytes) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_taken) {
      if (g_size < bytes) {
        g_buffer.reset();
        g_size = 0;
        g_buffer.reset(allocate(bytes));
        g_size = bytes;
      }
      g_taken = true;
      kept_ = true;
      data_ = g_buffer.get();
      return;
    }
  }
  own_.reset(allocate(bytes));
  data_ = own_.get();
}

Scratch::~Scratch() {
  if (!kept_) return;
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_taken = false;
}

}  // namespace rsz::cpu
