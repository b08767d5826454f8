// What the GPU stage's files share: CUDA runtime errors as rsz::Error, and the calling thread's current device set
// for a scope and put back (a host program's own, PyTorch's).
#pragma once

#include <cuda_runtime.h>

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

}  // namespace rsz::io::gpu::detail
