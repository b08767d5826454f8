// The backend table (core/src/backend.h): what rsz::backends() lists, how a call picks its backend from
// ExecOptions and the tensors' memory space, and the one-line refusals (unknown or missing backend, tensors in
// memory the backend does not take, tensors in different memory) made before anything is written.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "rsz/error.h"
#include "rsz/exec.h"
#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"
#include "support/test_util.h"

namespace rsz {
namespace {

std::string message_of(const std::function<void()>& call) {
  return test::error_message(call, ErrorCode::InvalidArgument);
}

TEST(Backends, TheRegistryListsReferenceAndCpuOnHostMemory) {
  const std::vector<BackendInfo> list = backends();
  ASSERT_GE(list.size(), 2u);
  EXPECT_EQ(list[0].backend, Backend::Reference);
  EXPECT_EQ(list[1].backend, Backend::Cpu);
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(list[static_cast<std::size_t>(i)].available);
    EXPECT_EQ(list[static_cast<std::size_t>(i)].memory, MemorySpace::Host);
    EXPECT_FALSE(list[static_cast<std::size_t>(i)].note.empty());
  }
  for (const BackendInfo& b : list) {
    if (b.backend == Backend::Cuda) {
      EXPECT_EQ(b.memory, MemorySpace::Device);
      EXPECT_FALSE(b.note.empty()) << "a GPU's name, or why none can be used";
    }
  }
  EXPECT_STREQ(to_string(Backend::Cuda), "cuda");
  EXPECT_STREQ(to_string(MemorySpace::Device), "device");
}

TEST(Backends, EveryHostBackendGivesTheSameBitsThroughTheTable) {
  std::vector<float> in(2 * 3 * 5 * 7);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 11) * 0.37f - 1.0f;
  const ConstTensorView x(in.data(), DataType::Float32, {2, 3, 5, 7});
  ResampleParams p;
  p.scales = {1, 1, 1.7f, 0.6f};
  const Dims out_sizes = resample_output_sizes(x.sizes(), p.scales);
  std::vector<float> want(static_cast<std::size_t>(element_count(out_sizes)));
  resample(x, TensorView(want.data(), DataType::Float32, out_sizes), p, {Backend::Reference});
  for (const Backend backend : {Backend::Auto, Backend::Cpu}) {
    std::vector<float> got(want.size(), -7.0f);
    resample(x, TensorView(got.data(), DataType::Float32, out_sizes), p, {backend});
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << to_string(backend);
  }
}

TEST(Backends, RefusalsNameTheBackendAndTheMemory) {
  std::vector<float> in(16, 1.0f);
  std::vector<float> out(64, -7.0f);
  const ConstTensorView host_in(in.data(), DataType::Float32, {1, 1, 4, 4});
  const TensorView host_out(out.data(), DataType::Float32, {1, 1, 8, 8});
  const ConstTensorView device_in(in.data(), DataType::Float32, {1, 1, 4, 4}, {}, MemorySpace::Device);
  const TensorView device_out(out.data(), DataType::Float32, {1, 1, 8, 8}, {}, MemorySpace::Device);
  ResampleParams p;
  p.scales = {1, 1, 2, 2};
  bool cuda_built = false;
  for (const BackendInfo& b : backends()) cuda_built = cuda_built || b.backend == Backend::Cuda;
  // Mixed memory: refused whatever the backend.
  EXPECT_NE(message_of([&] { resample(host_in, device_out, p); }).find("different memory (host and device)"),
            std::string::npos);
  // A host backend asked to read device memory.
  EXPECT_NE(message_of([&] { resample(device_in, device_out, p, {Backend::Cpu}); })
                .find("backend cpu takes tensors in host memory, these are in device memory"),
            std::string::npos);
  if (!cuda_built) {
    EXPECT_NE(message_of([&] { resample(host_in, host_out, p, {Backend::Cuda}); })
                  .find("backend cuda is not in this build (configure with -DRSZ_CUDA=ON)"),
              std::string::npos);
    EXPECT_NE(message_of([&] { upsample2d(device_in, device_out, Upsample2dParams{InterpolationMode::Nearest, {2, 2}}); })
                  .find("this build has no CUDA backend"),
              std::string::npos);
  }
  EXPECT_NE(message_of([&] { resample(host_in, host_out, p, {static_cast<Backend>(42)}); })
                .find("backend has an unknown value; auto, reference, cpu or cuda is allowed"),
            std::string::npos);
  // Thread counts are bounded: a clear refusal, not a thread team the system cannot start.
  for (const int threads : {-1, kMaxThreads + 1, 100000}) {
    ExecOptions options;
    options.num_threads = threads;
    EXPECT_EQ(message_of([&] { resample(host_in, host_out, p, options); }),
              "resample: num_threads = " + std::to_string(threads) + " is not allowed; 0 (every usable CPU) to 1024 is "
              "allowed");
  }
  for (const float v : out) ASSERT_EQ(v, -7.0f) << "nothing is written before a refusal";

  // roi_align: the ROI values are read by the backend that runs the call; device ROIs never reach a host check.
  std::vector<float> rois{0, 0, 2, 2};
  std::vector<std::uint32_t> indices{0};
  const ConstTensorView device_rois(rois.data(), DataType::Float32, {1, 4}, {}, MemorySpace::Device);
  const ConstTensorView device_indices(indices.data(), DataType::UInt32, {1}, {}, MemorySpace::Device);
  const TensorView device_crops(out.data(), DataType::Float32, {1, 1, 2, 2}, {}, MemorySpace::Device);
  if (!cuda_built) {
    EXPECT_NE(message_of([&] { roi_align(device_in, device_rois, device_indices, device_crops, RoiAlignParams{}); })
                  .find("this build has no CUDA backend"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace rsz
