// Scratch memory the CPU kernels keep between calls. ROI_ALIGN's channels-last copies of channel blocks of a feature
// map (a ring of map bands a thread, 1.2 MB for the boxes of bench/workloads.json, or one or two whole blocks a team
// of threads: 7 MB each for a 256 x 200 x 272 float32 level, 56 MB on 16 threads), and fresh
// pages for them on every call cost a page fault per 4 KiB and the kernel zeroing each page (or, from the allocator's
// heap, a zeroing pass on one thread).
// The process keeps one buffer: a call takes it when no other call holds it (growing it when it is too small), and
// otherwise, or for more than kKeptScratchBytes, allocates one of its own for the call. Contents are never read
// before the call writes them, so what an earlier call left there cannot reach a result.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace rsz::cpu {

// The largest buffer kept for the next call: what a process may hold after its calls return.
constexpr std::size_t kKeptScratchBytes = std::size_t{64} << 20;

// Memory from std::aligned_alloc, given back with std::free.
struct FreeBytes {
  void operator()(std::byte* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<std::byte, FreeBytes>;

class Scratch {
 public:
  explicit Scratch(std::size_t bytes);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data_);
  }

 private:
  Buffer own_;  // a buffer of this call's own, when the kept one is taken or too large
  std::byte* data_ = nullptr;
  bool kept_ = false;  // data_ is the process's kept buffer
};

}  // namespace rsz::cpu
