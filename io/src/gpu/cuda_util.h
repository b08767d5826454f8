// What the GPU stage's files share: CUDA runtime errors as rsz::Error, and the calling thread's current device set
// for a scope and put back (a host program's own, PyTorch's).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "rsz/error.h"

namespace rsz::io::gpu::detail {

// rsz::Error (Io) "WHO: WHAT: <CUDA's message>" unless `status` is cudaSuccess.
inline void check_cuda(cudaError_t status, const char* who, const char* what) {
  if (status != cudaSuccess) throw Error(ErrorCode::Io, std::string(who) + ": " + what + ": " + cudaGetErrorString(status));
}

class OnDevice {
 public:
  explicit OnDevice(int device) {
    check_cuda(cudaGetDevice(&previous_), "GPU", "cudaGetDevice");
    check_cuda(cudaSetDevice(device), "GPU", "cudaSetDevice");
  }
  ~OnDevice() { cudaSetDevice(previous_); }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int previous_ = 0;
};

// The work queued on a stream, waited for by blocking the thread (cudaEventBlockingSync) rather than by spinning on a
// core as cudaStreamSynchronize does by default: the job threads and the encoders need the cores. Made on first use,
// on the current device.
class BlockingEvent {
 public:
  BlockingEvent() = default;
  ~BlockingEvent() { release(); }
  BlockingEvent(const BlockingEvent&) = delete;
  BlockingEvent& operator=(const BlockingEvent&) = delete;
  // Marks the work queued on `stream` so far; synchronize() waits for it.
  void record(cudaStream_t stream, const char* who, const char* what) {
    if (event_ == nullptr) {
      check_cuda(cudaEventCreateWithFlags(&event_, cudaEventBlockingSync | cudaEventDisableTiming), who, what);
    }
    check_cuda(cudaEventRecord(event_, stream), who, what);
  }
  void synchronize(const char* who, const char* what) { check_cuda(cudaEventSynchronize(event_), who, what); }
  void wait(cudaStream_t stream, const char* who, const char* what) {
    record(stream, who, what);
    synchronize(who, what);
  }
  // Marks the work queued on `stream` so far and makes `other`'s later work wait for it (the host does not wait).
  void join(cudaStream_t stream, cudaStream_t other, const char* who, const char* what) {
    record(stream, who, what);
    wait_on(other, who, what);
  }
  // Makes `other`'s later work wait for what record() marked (the host does not wait).
  void wait_on(cudaStream_t other, const char* who, const char* what) {
    check_cuda(cudaStreamWaitEvent(other, event_, 0), who, what);
  }
  void release() {
    if (event_ != nullptr) cudaEventDestroy(event_);
    event_ = nullptr;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

// A batch's bytes, each image's start aligned to 256 bytes (CUDA's allocation alignment).
inline std::size_t aligned_bytes(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// Device (or pinned host) memory that grows to the largest batch's need and is kept for the next batches (the GPU
// memory a run holds is bounded by its batches).
class Arena {
 public:
  // `who` and `what` name it in the error of an allocation that fails ("GPU resize", "device memory for the results").
  // Below `growth_limit` bytes it grows by half its size at least (each growth frees and allocates, which waits for
  // the device), so that batches growing a little at a time do not each pay for one; past it (0: always) it grows to
  // what is asked.
  Arena(bool pinned, const char* who, const char* what, std::size_t growth_limit = 0)
      : pinned_(pinned), growth_limit_(growth_limit), who_(who), what_(what) {}
  ~Arena() { release(); }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  // At least `bytes` bytes (their contents not kept from an earlier batch when it grows); `bytes` exactly where the
  // growth's extra cannot be had.
  std::uint8_t* reserve(std::size_t bytes) {
    if (bytes > size_) {
      const std::size_t grown = std::max(bytes, std::min(size_ + size_ / 2, growth_limit_));
      release();
      void* p = nullptr;
      if (allocate(&p, grown) == cudaSuccess) {
        size_ = grown;
      } else {
        cudaGetLastError();  // the failed allocation's error is not left for the next call to find
        check_cuda(allocate(&p, bytes), who_, what_);
        size_ = bytes;
      }
      data_ = static_cast<std::uint8_t*>(p);
    }
    return data_;
  }
  // Frees the memory (device memory on the device that is current).
  void release() {
    if (data_ != nullptr) pinned_ ? cudaFreeHost(data_) : cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }

 private:
  cudaError_t allocate(void** p, std::size_t bytes) const {
    return pinned_ ? cudaMallocHost(p, bytes) : cudaMalloc(p, bytes);
  }

  bool pinned_;
  std::size_t growth_limit_;
  const char* who_;
  const char* what_;
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace rsz::io::gpu::detail
