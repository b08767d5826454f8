#include "backend.h"

#include "cpu/cpu.h"
#include "cpu/parallel.h"
#include "cpu/simd.h"
#include "detail/validate.h"
#include "reference/reference.h"

namespace rsz {
namespace detail {
namespace {

bool always(std::string&) { return true; }

const BackendOps kReference{
    Backend::Reference,
    MemorySpace::Host,
    false,
    always,
    [](const ExecOptions&) -> std::string { return "the naive twins: one output element at a time (the oracle)"; },
    [](const ConstTensorView& in, const TensorView& out, const ResampleParams& p, const ExecOptions&) {
      reference::resample_reference(in, out, p);
    },
    [](const ConstTensorView& in, const TensorView& out, const Upsample2dParams& p, const ExecOptions&) {
      reference::upsample2d_reference(in, out, p);
    },
    check_roi_values_on_host,
    [](const ConstTensorView& in, const ConstTensorView& rois, const ConstTensorView& indices, const TensorView& out,
       const RoiAlignParams& p, const ExecOptions&) { reference::roi_align_reference(in, rois, indices, out, p); },
    nullptr,
    nullptr,
};

const BackendOps kCpu{
    Backend::Cpu,
    MemorySpace::Host,
    false,
    always,
    [](const ExecOptions& o) -> std::string {
      return std::to_string(cpu::resolve_threads(o.num_threads)) + " threads, tables, separable passes, " +
             cpu::simd().name;
    },
    [](const ConstTensorView& in, const TensorView& out, const ResampleParams& p, const ExecOptions& o) {
      cpu::resample_cpu(in, out, p, cpu::threads_for(o.num_threads, in.element_count() + out.element_count()));
    },
    [](const ConstTensorView& in, const TensorView& out, const Upsample2dParams& p, const ExecOptions& o) {
      cpu::upsample2d_cpu(in, out, p, cpu::threads_for(o.num_threads, in.element_count() + out.element_count()));
    },
    check_roi_values_on_host,
    [](const ConstTensorView& in, const ConstTensorView& rois, const ConstTensorView& indices, const TensorView& out,
       const RoiAlignParams& p, const ExecOptions& o) {
      cpu::roi_align_cpu(in, rois, indices, out, p,
                         cpu::threads_for(o.num_threads, in.element_count() + out.element_count()));
    },
    nullptr,
    nullptr,
};

}  // namespace

const std::vector<const BackendOps*>& registered_backends() {
  static const std::vector<const BackendOps*> table = {
      &kReference, &kCpu,
#ifdef RSZ_WITH_CUDA
      &cuda_backend(),
#endif
  };
  return table;
}

MemorySpace common_memory(const char* op, std::initializer_list<const ConstTensorView*> tensors) {
  const MemorySpace first = (*tensors.begin())->memory();
  for (const ConstTensorView* t : tensors) {
    if (t->memory() != first) {
      fail(ErrorCode::InvalidArgument, op,
           std::string("the tensors are in different memory (") + to_string(first) + " and " +
               to_string(t->memory()) + "); every tensor of a call must be in host memory, or every one on the device");
    }
  }
  return first;
}

const BackendOps& pick_backend(const char* op, const ExecOptions& options, MemorySpace memory) {
  if (options.num_threads < 0 || options.num_threads > kMaxThreads) {
    fail(ErrorCode::InvalidArgument, op,
         "num_threads = " + std::to_string(options.num_threads) + " is not allowed; 0 (every usable CPU) to " +
             std::to_string(kMaxThreads) + " is allowed");
  }
  Backend wanted = options.backend;
  if (wanted == Backend::Auto) wanted = memory == MemorySpace::Host ? Backend::Cpu : Backend::Cuda;
  for (const BackendOps* b : registered_backends()) {
    if (b->id != wanted) continue;
    std::string why;
    if (!b->available(why)) {
      fail(ErrorCode::InvalidArgument, op, std::string("backend ") + to_string(wanted) + " is not available: " + why);
    }
    if (b->memory != memory && !(memory == MemorySpace::Host && b->stages_host)) {
      fail(ErrorCode::InvalidArgument, op,
           std::string("backend ") + to_string(wanted) + " takes tensors in " + to_string(b->memory) +
               " memory, these are in " + to_string(memory) + " memory");
    }
    return *b;
  }
  if (wanted == Backend::Cuda) {
    fail(ErrorCode::InvalidArgument, op,
         memory == MemorySpace::Device
             ? "the tensors are in device memory, but this build has no CUDA backend (configure with -DRSZ_CUDA=ON)"
             : "backend cuda is not in this build (configure with -DRSZ_CUDA=ON)");
  }
  fail(ErrorCode::InvalidArgument, op, "backend has an unknown value; auto, reference, cpu or cuda is allowed");
}

}  // namespace detail

void synchronize(const ExecOptions& options) {
  if (options.backend == Backend::Reference || options.backend == Backend::Cpu) return;
  for (const detail::BackendOps* b : detail::registered_backends()) {
    std::string why;
    if (b->synchronize != nullptr && b->available(why)) b->synchronize(options);
  }
}

std::vector<BackendInfo> backends(const ExecOptions& options) {
  std::vector<BackendInfo> out;
  for (const detail::BackendOps* b : detail::registered_backends()) {
    std::string why;
    const bool available = b->available(why);
    const int devices = !available ? 0 : b->device_count != nullptr ? b->device_count() : 1;
    out.push_back({b->id, b->memory, available, available ? b->describe(options) : why, devices});
  }
  return out;
}

}  // namespace rsz
