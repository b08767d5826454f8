// The backends as one table. Each backend is a row of function pointers (the three operators, which memory it
// reads and writes, whether it can run here, how it checks ROI values), registered in one place (backend.cpp), and
// pick_backend is the only place that chooses one: an entry point checks shapes, picks the backend, has the backend
// check the values it needs to read (where they live), and runs it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "rsz/exec.h"
#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"

namespace rsz::detail {

struct BackendOps {
  Backend id;
  MemorySpace memory;  // the memory space of every tensor it takes
  // Whether it also takes host tensors, copying them to its memory and the results back (Cuda: host staging).
  bool stages_host;
  // Whether it can run here; when not, `why` says so in a few words.
  bool (*available)(std::string& why);
  // A line for rsz::backends() (the device's name for a GPU backend); "" for none.
  std::string (*describe)(const ExecOptions& options);
  void (*resample)(const ConstTensorView& input, const TensorView& output, const ResampleParams& params,
                   const ExecOptions& options);
  void (*upsample2d)(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& params,
                     const ExecOptions& options);
  // SEMANTICS.md §3's value rules (finite coordinates and extents, batch indices < N) and the sample budget
  // (ExecOptions::max_samples), checked before anything is written, on the memory the values live in.
  void (*check_roi_values)(const ConstTensorView& input, const ConstTensorView& rois,
                           const ConstTensorView& batch_indices, const TensorView& output,
                           const RoiAlignParams& params, const ExecOptions& options);
  void (*roi_align)(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                    const TensorView& output, const RoiAlignParams& params, const ExecOptions& options);
  // rsz::synchronize for this backend: waits for its queued work and throws the errors its device-side checks
  // deferred; null for backends that finish every call before returning.
  void (*synchronize)(const ExecOptions& options);
  // How many devices it can run on here (a GPU backend: the devices the process sees, 0 where it cannot run); null
  // for the host backends (one: the host).
  int (*device_count)();
};

// Every backend of this build, in the order rsz::backends() lists them (Reference, Cpu, then Cuda when built).
const std::vector<const BackendOps*>& registered_backends();

// The memory space a call's tensors share; throws InvalidArgument naming `op` when they differ.
MemorySpace common_memory(const char* op, std::initializer_list<const ConstTensorView*> tensors);

// The backend that runs a call of `op` on tensors in `memory`: options.backend when it is registered, available and
// takes that memory (or stages host tensors); for Auto the one backend for that memory (Cpu for host memory, Cuda
// for device memory). This is the only place the `auto` policy lives. Throws InvalidArgument naming the operator,
// the backend and why.
const BackendOps& pick_backend(const char* op, const ExecOptions& options, MemorySpace memory);

// The host backends' ROI value check (roi_align.cpp), shared by Reference and Cpu.
void check_roi_values_on_host(const ConstTensorView& input, const ConstTensorView& rois,
                              const ConstTensorView& batch_indices, const TensorView& output,
                              const RoiAlignParams& params, const ExecOptions& options);

// SEMANTICS.md §3's value rules for ROI r (its batch index and its four coordinates, as float32): throws
// InvalidArgument naming the first rule it breaks (the batch index < batch, finite scaled coordinates, finite scaled
// extents). The host check runs it on every ROI; the CUDA backend's device-side check on the first ROI it found bad,
// so both give the same message.
void check_roi(std::int64_t r, std::uint32_t batch_index, const std::array<float, 4>& box, std::int64_t batch,
               float scale_x, float scale_y);
// Throws the sample budget's InvalidArgument (ExecOptions::max_samples): the total, and the first ROI with the most
// samples (`worst`) with its counts.
[[noreturn]] void fail_sample_budget(std::uint64_t total, std::uint64_t max_samples, std::int64_t worst,
                                     std::uint32_t worst_sy, std::uint32_t worst_sx, std::int64_t out_h,
                                     std::int64_t out_w, std::uint64_t channels);

#ifdef RSZ_WITH_CUDA
// cuda/backend_cuda.cu
const BackendOps& cuda_backend();
#endif

}  // namespace rsz::detail
