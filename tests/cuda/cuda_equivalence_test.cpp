// The CUDA backend against the CPU backend, bit for bit (NaNs, infinities, signed zeros and denormals included),
// over the equivalence sweeps' parameters: data types (float32, float16, unorm8 inputs), packed and channels-last
// inputs, packed and strided outputs, every resample mode (nearest with the four rounding directions, linear,
// antialiased), upsample2d ranks 4 and 5, roi_align modes, reductions, sample counts and hostile boxes. Also: the
// caller's stream is used, the ROI value rules refuse bad boxes on the device, and host pointers marked as device
// memory are refused. Every test skips, saying why, where no CUDA device can be used.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "equivalence/equivalence_util.h"
#include "rsz/error.h"
#include "rsz/exec.h"
#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"

namespace rsz {
namespace {

using test::Input;
using test::make_input;

std::string cuda_unusable() {
  for (const BackendInfo& b : backends()) {
    if (b.backend == Backend::Cuda) return b.available ? "" : b.note;
  }
  return "this build has no CUDA backend";
}

#define RSZ_NEED_CUDA()                                           \
  do {                                                            \
    const std::string why = cuda_unusable();                      \
    if (!why.empty()) GTEST_SKIP() << "CUDA tests skipped: " << why; \
  } while (0)

// Device memory holding a copy of host bytes (or a fill pattern).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    EXPECT_EQ(cudaMalloc(&data_, bytes == 0 ? 1 : bytes), cudaSuccess);
  }
  DeviceBuffer(const void* host, std::size_t bytes) : DeviceBuffer(bytes) {
    EXPECT_EQ(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }
  std::vector<unsigned char> download() const {
    std::vector<unsigned char> out(bytes_);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(out.data(), data_, bytes_, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

std::size_t bytes_of(const TensorLayout& layout) {
  return static_cast<std::size_t>(layout.extent()) * element_size(layout.dtype());
}

// A device copy of a host view (its whole extent, so strided views keep their layout).
struct DeviceInput {
  explicit DeviceInput(const ConstTensorView& host) : buffer(host.data(), bytes_of(host.layout())), layout(host.layout()) {}
  ConstTensorView view() const { return ConstTensorView(buffer.data(), layout, MemorySpace::Device); }
  DeviceBuffer buffer;
  TensorLayout layout;
};

// Output layouts: packed, or strided with gaps (every other element, padded rows).
TensorLayout output_layout(const Dims& sizes, DataType type, bool strided) {
  Dims strides = packed_strides(sizes);
  if (strided) {
    strides.back() = 2;
    for (int a = static_cast<int>(sizes.size()) - 2; a >= 0; --a) {
      const auto i = static_cast<std::size_t>(a);
      strides[i] = strides[i + 1] * sizes[i + 1] + (a == 0 ? 0 : 3);
    }
  }
  return TensorLayout(type, sizes, strides);
}

// Output layouts of the doubling and halving tests: packed (0), strided as output_layout's (1), or rows padded by 8
// elements and planes by 8 more (2: still on the 16-byte boundaries those kernels store on).
TensorLayout form_layout(const Dims& sizes, DataType type, int form) {
  if (form < 2) return output_layout(sizes, type, form == 1);
  Dims strides(sizes.size(), 1);
  const auto rank = static_cast<int>(sizes.size());
  strides[static_cast<std::size_t>(rank - 2)] = (sizes.back() + 7) / 8 * 8 + 8;
  for (int a = rank - 3; a >= 0; --a) {
    const auto i = static_cast<std::size_t>(a);
    strides[i] = strides[i + 1] * sizes[i + 1] + 8;
  }
  return TensorLayout(type, sizes, strides);
}

// `sizes` in the buffer of `whole`, `skip` elements in, laid out as a packed tensor of `buffer_sizes` (wider rows:
// padded rows).
ConstTensorView view_in(const ConstTensorView& whole, const Dims& sizes, const Dims& buffer_sizes, std::int64_t skip) {
  return ConstTensorView(static_cast<const unsigned char*>(whole.data()) + skip * element_size(whole.dtype()),
                         TensorLayout(whole.dtype(), sizes, packed_strides(buffer_sizes)), whole.memory());
}

// The views of `in` (and of its device copy) the doubling and halving tests read: `sizes` packed, then in rows as wide
// as `in`'s (padded), then the same one element in (off every boundary).
struct InputView {
  ConstTensorView host;
  ConstTensorView device;
  std::string what;
};

std::vector<InputView> input_views(const ConstTensorView& in, const ConstTensorView& device, const Dims& sizes) {
  std::vector<InputView> views = {{view_in(in, sizes, sizes, 0), view_in(device, sizes, sizes, 0), " packed"}};
  for (const std::int64_t skip : {0, 1}) {
    views.push_back({view_in(in, sizes, in.sizes(), skip), view_in(device, sizes, in.sizes(), skip),
                     " rows padded, " + std::to_string(skip) + " in"});
  }
  return views;
}

// Runs `op` on the host (CPU backend) and on the device (CUDA backend) into outputs filled with the same pattern,
// and returns both raw buffers. The outputs start `shift` elements into their buffers (1: not aligned to the
// 4-element boundary the packed stores of the plane kernels need; 4 float16: not to the 8-element one of float16
// nearest).
template <typename HostOp, typename DeviceOp>
std::pair<std::vector<unsigned char>, std::vector<unsigned char>> both(const TensorLayout& layout, const HostOp& host,
                                                                       const DeviceOp& device, std::size_t shift = 0) {
  const std::size_t skip = shift * element_size(layout.dtype());
  std::vector<unsigned char> cpu(skip + bytes_of(layout), 0xa5);
  host(TensorView(cpu.data() + skip, layout));
  DeviceBuffer out(cpu.data(), cpu.size());  // the same fill: untouched gaps must match too
  device(TensorView(static_cast<unsigned char*>(out.data()) + skip, layout, MemorySpace::Device));
  return {cpu, out.download()};
}

::testing::AssertionResult same_bytes(const std::vector<unsigned char>& cpu, const std::vector<unsigned char>& gpu,
                                      DataType type, const std::string& what) {
  const std::size_t size = element_size(type);
  if (cpu.size() != gpu.size()) return ::testing::AssertionFailure() << what << ": sizes differ";
  for (std::size_t at = 0; at < cpu.size(); at += size) {
    if (std::memcmp(&cpu[at], &gpu[at], size) != 0) {
      return ::testing::AssertionFailure() << what << ": element " << at / size << " cpu "
                                           << test::hex_bytes(cpu, at, size) << " cuda "
                                           << test::hex_bytes(gpu, at, size);
    }
  }
  return ::testing::AssertionSuccess();
}

// An interleaved 8-bit RGB image of h x w pixels, as the command line decodes it, seen as a strided NCHW unorm8
// tensor; its samples follow (i * mul + i / div) % 256.
struct Image8 {
  Image8(std::int64_t h, std::int64_t w, std::size_t mul, std::size_t div)
      : pixels(static_cast<std::size_t>(h * w * 3)), sizes{1, 3, h, w}, strides{h * w * 3, 1, w * 3, 3} {
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>((i * mul + i / div) % 256);
  }
  ConstTensorView view() const { return ConstTensorView(pixels.data(), DataType::UNorm8, sizes, strides); }
  std::vector<std::uint8_t> pixels;
  Dims sizes;
  Dims strides;
};

// The CUDA backend's resample of `device` (a device copy of `host`) against the CPU backend's, bit for bit, into
// outputs of `layout` that start from the same fill.
::testing::AssertionResult resample_matches(const ConstTensorView& host, const ConstTensorView& device,
                                            const TensorLayout& layout, const ResampleParams& p,
                                            const std::string& what, std::size_t shift = 0) {
  const auto [cpu, gpu] = both(
      layout, [&](const TensorView& out) { resample(host, out, p, {Backend::Cpu, 2}); },
      [&](const TensorView& out) { resample(device, out, p, {Backend::Cuda}); }, shift);
  return same_bytes(cpu, gpu, layout.dtype(), what);
}

// The same for upsample2d.
::testing::AssertionResult upsample2d_matches(const ConstTensorView& host, const ConstTensorView& device,
                                              const TensorLayout& layout, const Upsample2dParams& p,
                                              const std::string& what, std::size_t shift = 0) {
  const auto [cpu, gpu] = both(
      layout, [&](const TensorView& out) { upsample2d(host, out, p, {Backend::Cpu, 2}); },
      [&](const TensorView& out) { upsample2d(device, out, p, {Backend::Cuda}); }, shift);
  return same_bytes(cpu, gpu, layout.dtype(), what);
}

// Both for a test input `in` (on the device: `device`) and what the sweeps below vary: the mode and the factors or
// scales, into a packed or strided output of the input's type.
::testing::AssertionResult upsample2d_matches(const Input& in, const DeviceInput& device, InterpolationMode mode,
                                              ScaleSize factors, bool strided, const std::string& what,
                                              std::size_t shift = 0) {
  Upsample2dParams p;
  p.interpolation = mode;
  p.scale_size = factors;
  return upsample2d_matches(in.view(), device.view(),
                            output_layout(upsample2d_output_sizes(in.sizes, factors), in.type, strided), p, what,
                            shift);
}

::testing::AssertionResult resample_matches(const Input& in, const DeviceInput& device, InterpolationMode mode,
                                            const std::array<float, 4>& scales, bool strided, const std::string& what,
                                            std::size_t shift = 0) {
  ResampleParams p;
  p.interpolation = mode;
  p.scales = scales;
  return resample_matches(in.view(), device.view(),
                          output_layout(resample_output_sizes(in.sizes, scales), in.type, strided), p, what, shift);
}

struct ResampleMode {
  InterpolationMode interpolation;
  NearestRounding rounding;
  bool antialiased;
};

// A resample sweep: float32 and float16, packed and channels-last inputs of `sizes`, every mode, scale set and
// offset pair; every third output strided (starting at `strided_phase`). Returns the number of cases compared.
int resample_sweep(const Dims& sizes, const std::vector<ResampleMode>& modes,
                   const std::vector<std::array<float, 4>>& scale_sets,
                   const std::vector<std::pair<float, float>>& offsets, std::uint32_t seed, std::size_t special_every,
                   int strided_phase) {
  int cases = 0;
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    for (const bool channels_last : {false, true}) {
      Input in = make_input(sizes, type, channels_last, seed++);
      test::sprinkle_special_values(in, special_every);
      const DeviceInput device_in(in.view());
      for (const ResampleMode& mode : modes) {
        for (const auto& scales : scale_sets) {
          for (const auto& [ip, op] : offsets) {
            ResampleParams p;
            p.interpolation = mode.interpolation;
            p.rounding_direction = mode.rounding;
            p.antialiased = mode.antialiased;
            p.scales = scales;
            p.input_pixel_offsets = {ip, ip, ip, ip};
            p.output_pixel_offsets = {op, op, op, op};
            const TensorLayout layout =
                output_layout(resample_output_sizes(in.sizes, scales), type, cases % 3 == strided_phase);
            std::ostringstream what;
            what << dims_to_string(sizes) << " " << to_string(type) << (channels_last ? " nhwc " : " nchw ")
                 << to_string(mode.interpolation) << " " << to_string(mode.rounding)
                 << (mode.antialiased ? " antialiased" : "") << " scales {" << scales[0] << "," << scales[1] << ","
                 << scales[2] << "," << scales[3] << "} offsets " << ip << "/" << op;
            EXPECT_TRUE(resample_matches(in.view(), device_in.view(), layout, p, what.str()));
            if (::testing::Test::HasFailure()) return cases;
            ++cases;
          }
        }
      }
    }
  }
  return cases;
}

TEST(CudaEquivalence, ResampleEveryMode) {
  RSZ_NEED_CUDA();
  const std::vector<ResampleMode> modes = {{InterpolationMode::Nearest, NearestRounding::RoundPreferCeil, false},
                                           {InterpolationMode::Nearest, NearestRounding::RoundPreferFloor, false},
                                           {InterpolationMode::Nearest, NearestRounding::Floor, false},
                                           {InterpolationMode::Nearest, NearestRounding::Ceil, false},
                                           {InterpolationMode::Linear, NearestRounding::RoundPreferCeil, false},
                                           {InterpolationMode::Linear, NearestRounding::RoundPreferCeil, true}};
  EXPECT_EQ(resample_sweep({2, 3, 19, 37}, modes,
                           {{1, 1, 1, 1},
                            {1, 1, 0.5f, 0.5f},
                            {1, 1, 2.0f / 3.0f, 0.37f},
                            {1, 1, 2, 3},
                            {1, 1, 1.7f, 2.9f},
                            {2, 0.5f, 1.25f, 0.8f},
                            {1.5f, 3, 1, 1},
                            {1, 1, 0.08f, 0.3f},
                            {0.6f, 0.7f, 0.8f, 0.45f}},
                           {{0.5f, -0.5f}, {0.0f, 0.0f}, {0.5f, 0.0f}, {0.25f, 1.5f}}, 9000, 13, 1),
            2 * 2 * 6 * 9 * 4);
}

TEST(CudaEquivalence, ResampleUnormImages) {
  RSZ_NEED_CUDA();
  const Image8 pixels(41, 67, 37, 7);
  const ConstTensorView in = pixels.view();
  const DeviceInput device_in(in);
  for (const DataType out_type : {DataType::Float32, DataType::Float16}) {
    for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
      for (const bool antialiased : {false, true}) {
        ResampleParams p;
        p.interpolation = mode;
        p.antialiased = antialiased;
        p.scales = {1, 1, 0.3f, 1.7f};
        const TensorLayout layout = output_layout(resample_output_sizes(in.sizes(), p.scales), out_type, false);
        ASSERT_TRUE(resample_matches(in, device_in.view(), layout, p, std::string("unorm8 ") + to_string(mode)));
      }
    }
  }
}

TEST(CudaEquivalence, Upsample2dRanks4And5) {
  RSZ_NEED_CUDA();
  std::uint32_t seed = 9100;
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    for (const Dims& sizes : {Dims{2, 3, 7, 19}, Dims{1, 2, 3, 5, 6}}) {
      Input in = make_input(sizes, type, false, seed++);
      test::sprinkle_special_values(in, 7);
      const DeviceInput device_in(in.view());
      for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
        for (const std::uint32_t f : {1u, 2u, 3u}) {
          ASSERT_TRUE(upsample2d_matches(in, device_in, mode, {f, f + 1}, f == 2,
                                         std::string("upsample2d ") + to_string(mode) + " " + dims_to_string(sizes) +
                                             " x" + std::to_string(f)));
        }
      }
    }
  }
}

// A roi_align sweep: float32 and float16, packed and channels-last inputs of `input_sizes`, both interpolations and
// reductions, the sample ranges `samples`, regions aligned or not to corners, packed and strided outputs of
// out_h x out_w; the CUDA backend against the CPU backend, bit for bit. Returns the number of cases compared.
int roi_align_sweep(const char* name, const Dims& input_sizes, const std::vector<float>& boxes,
                    const std::vector<std::uint32_t>& batch,
                    const std::vector<std::pair<std::uint32_t, std::uint32_t>>& samples, std::int64_t out_h,
                    std::int64_t out_w, const RoiAlignParams& base, std::uint32_t seed, std::size_t special_every) {
  const std::int64_t r = static_cast<std::int64_t>(boxes.size() / 4);
  int cases = 0;
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    for (const bool channels_last : {false, true}) {
      Input in = make_input(input_sizes, type, channels_last, seed++);
      test::sprinkle_special_values(in, special_every);
      std::vector<std::uint16_t> boxes16(boxes.size());
      for (std::size_t i = 0; i < boxes.size(); ++i) boxes16[i] = float_to_float16_bits(boxes[i]);
      const ConstTensorView rois = type == DataType::Float32 ? ConstTensorView(boxes.data(), type, {r, 4})
                                                             : ConstTensorView(boxes16.data(), type, {r, 4});
      const ConstTensorView indices(batch.data(), DataType::UInt32, {r});
      const DeviceInput device_in(in.view());
      const DeviceInput device_rois(rois);
      const DeviceInput device_indices(indices);
      for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
        for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
          for (const auto& [lo, hi] : samples) {
            for (const bool corners : {false, true}) {
              RoiAlignParams p = base;
              p.interpolation = mode;
              p.reduction = reduction;
              p.minimum_samples_per_output = lo;
              p.maximum_samples_per_output = hi;
              p.align_regions_to_corners = corners;
              const TensorLayout layout = output_layout({r, input_sizes[1], out_h, out_w}, type, cases % 2 == 1);
              const auto [cpu, gpu] = both(
                  layout,
                  [&](const TensorView& out) { roi_align(in.view(), rois, indices, out, p, {Backend::Cpu, 2}); },
                  [&](const TensorView& out) {
                    roi_align(device_in.view(), device_rois.view(), device_indices.view(), out, p, {Backend::Cuda});
                  });
              std::ostringstream what;
              what << name << " " << to_string(type) << (channels_last ? " nhwc " : " nchw ") << to_string(mode)
                   << " " << to_string(reduction) << " samples " << lo << ":" << hi << (corners ? " corners" : "");
              EXPECT_TRUE(same_bytes(cpu, gpu, type, what.str()));
              if (::testing::Test::HasFailure()) return cases;
              ++cases;
            }
          }
        }
      }
    }
  }
  return cases;
}

TEST(CudaEquivalence, RoiAlignEveryMode) {
  RSZ_NEED_CUDA();
  // Boxes inside, across the edges, outside, inverted, zero-size, sub-pixel, large (adaptive sampling), and one so
  // large that adaptive sampling needs more taps than the gather kernel's tables hold (25 x 17 samples an output).
  const std::vector<float> boxes = {2.5f,  3.0f,  20.25f, 14.0f, -6.0f,  -4.0f,  9.0f,  7.5f,  30.0f, 20.0f,
                                    45.0f, 31.0f, 18.0f,  12.0f, 4.0f,   2.0f,   7.0f,  7.0f,  7.0f,  7.0f,
                                    5.1f,  5.2f,  5.3f,   5.35f, 0.0f,   0.0f,   36.0f, 22.0f, -40.0f, -30.0f,
                                    70.0f, 55.0f};
  std::vector<std::uint32_t> batch(boxes.size() / 4);
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<std::uint32_t>(i % 2);
  RoiAlignParams base;
  base.spatial_scale_x = 0.9f;
  base.out_of_bounds_input_value = -2.5f;
  EXPECT_EQ(roi_align_sweep("roi_align", {2, 3, 23, 37}, boxes, batch, {{1, 4294967295u}, {2, 2}, {1, 3}}, 5, 4, base,
                            9200, 17),
            2 * 2 * 2 * 2 * 3 * 2);
}

// Shapes large enough for the plane kernel's tiles (128 x 64 outputs, 4 columns and up to 8 rows a thread, several
// tiles and planes a block): partial tiles at the right and bottom edges, exact halves and doubles, odd ratios,
// channels-last inputs and strided outputs, and unorm8 inputs.
TEST(CudaEquivalence, ResampleLargePlanes) {
  RSZ_NEED_CUDA();
  const std::vector<ResampleMode> modes = {{InterpolationMode::Nearest, NearestRounding::RoundPreferCeil, false},
                                           {InterpolationMode::Linear, NearestRounding::RoundPreferCeil, false}};
  EXPECT_EQ(resample_sweep({2, 3, 150, 301}, modes,
                           {{1, 1, 0.5f, 0.5f}, {1, 1, 2, 2}, {1, 1, 2.0f / 3.0f, 0.37f}, {1, 1, 1.7f, 2.9f},
                            {1, 1, 4, 4}},
                           {{0.5f, -0.5f}, {0.25f, 1.5f}}, 9400, 101, 2),
            2 * 2 * 2 * 5 * 2);
  if (HasFailure()) return;
  // An interleaved 8-bit image, as the command line decodes it, to float32 and float16.
  const Image8 pixels(333, 517, 131, 11);
  const ConstTensorView image = pixels.view();
  const DeviceInput device_image(image);
  for (const DataType out_type : {DataType::Float32, DataType::Float16}) {
    for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
      for (const float scale : {0.5f, 1.9f}) {
        ResampleParams p;
        p.interpolation = mode;
        p.scales = {1, 1, scale, scale};
        const TensorLayout layout = output_layout(resample_output_sizes(image.sizes(), p.scales), out_type, false);
        ASSERT_TRUE(
            resample_matches(image, device_image.view(), layout, p, std::string("unorm8 image ") + to_string(mode)));
      }
    }
  }
  // A batch large enough for 8 rows a thread (a tile of 128 x 64 outputs) on a GPU of up to 300 multiprocessors.
  std::uint32_t seed = 9410;
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    Input batch = make_input({8, 3, 150, 301}, type, false, seed++);
    test::sprinkle_special_values(batch, 997);
    const DeviceInput device_batch(batch.view());
    for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
      ASSERT_TRUE(resample_matches(batch, device_batch, mode, {1, 1, 4.1f, 3.9f}, false,
                                   std::string("batch of 8 ") + to_string(type) + " " + to_string(mode)));
    }
  }
}

// The separable antialiased path (H and W both antialiased, N and C selecting their own index): a photo-like unorm8
// image to thumbnail sizes in float32 and float16, with odd pixel offsets; float inputs with special values, packed,
// channels-last and strided outputs; output sizes that are not the scales' (a one-row input, fewer batch items out
// than in, a few output rows far apart); and a downscale so deep that each output reads hundreds of taps.
TEST(CudaEquivalence, ResampleAntialiasedSeparable) {
  RSZ_NEED_CUDA();
  const Image8 photo(270, 480, 131, 7);
  const ConstTensorView image = photo.view();
  const DeviceInput device_image(image);
  for (const DataType out_type : {DataType::Float32, DataType::Float16}) {
    for (const auto& [ip, op] : std::vector<std::pair<float, float>>{{0.5f, -0.5f}, {0.37f, 1.25f}, {0, 0}}) {
      for (const auto& scales : std::vector<std::array<float, 4>>{{1, 1, 224.0f / 270, 224.0f / 480},
                                                                 {1, 1, 0.25f, 0.13f},
                                                                 {1, 1, 0.01f, 0.007f}}) {
        ResampleParams p;
        p.interpolation = InterpolationMode::Linear;
        p.antialiased = true;
        p.scales = scales;
        p.input_pixel_offsets = {ip, ip, ip, ip};
        p.output_pixel_offsets = {op, op, op, op};
        Dims out_sizes = resample_output_sizes(image.sizes(), p.scales);
        for (std::size_t a = 2; a < 4; ++a) out_sizes[a] = std::max<std::int64_t>(out_sizes[a], 1);
        const TensorLayout layout = output_layout(out_sizes, out_type, scales[2] < 0.5f);
        std::ostringstream what;
        what << "unorm8 photo to " << to_string(out_type) << " " << dims_to_string(out_sizes) << " offsets " << ip
             << "/" << op;
        ASSERT_TRUE(resample_matches(image, device_image.view(), layout, p, what.str()));
      }
    }
  }
  std::uint32_t seed = 9450;
  struct Case {
    Dims in;
    Dims out;
    std::array<float, 4> scales;
  };
  const std::vector<Case> cases = {
      {{2, 3, 61, 97}, {2, 3, 23, 31}, {1, 1, 0.38f, 0.33f}},  // a packed batch
      {{3, 2, 61, 97}, {2, 2, 23, 31}, {1, 1, 0.38f, 0.33f}},  // fewer batch items out than in
      {{2, 3, 1, 97}, {2, 3, 3, 40}, {1, 1, 0.5f, 0.41f}},     // a one-row input, read by every output row
      {{1, 3, 400, 90}, {1, 3, 2, 30}, {1, 1, 0.9f, 0.31f}},   // two output rows near the top of many input rows
      {{1, 2, 700, 650}, {1, 2, 3, 2}, {1, 1, 0.004f, 0.003f}}, // hundreds of taps an output
  };
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    for (const bool channels_last : {false, true}) {
      for (const Case& c : cases) {
        Input in = make_input(c.in, type, channels_last, seed++);
        test::sprinkle_special_values(in, 41);
        const DeviceInput device_in(in.view());
        for (const bool strided : {false, true}) {
          ResampleParams p;
          p.interpolation = InterpolationMode::Linear;
          p.antialiased = true;
          p.scales = c.scales;
          p.input_pixel_offsets = {0.5f, 0.5f, 0.5f, 0.5f};
          p.output_pixel_offsets = {-0.5f, -0.5f, -0.5f, -0.5f};
          std::ostringstream what;
          what << dims_to_string(c.in) << " to " << dims_to_string(c.out) << " " << to_string(type)
               << (channels_last ? " nhwc" : " nchw") << (strided ? " strided" : " packed");
          ASSERT_TRUE(
              resample_matches(in.view(), device_in.view(), output_layout(c.out, type, strided), p, what.str(), 1));
        }
      }
    }
  }
}

TEST(CudaEquivalence, Upsample2dLargePlanes) {
  RSZ_NEED_CUDA();
  std::uint32_t seed = 9500;
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    for (const Dims& sizes : {Dims{2, 20, 61, 139}, Dims{1, 4, 3, 45, 70}}) {
      Input in = make_input(sizes, type, sizes.size() == 4, seed++);
      test::sprinkle_special_values(in, 53);
      const DeviceInput device_in(in.view());
      for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
        for (const std::uint32_t f : {2u, 3u}) {
          ASSERT_TRUE(upsample2d_matches(in, device_in, mode, {f, 5 - f}, f == 3,
                                         std::string("upsample2d ") + to_string(mode) + " " + dims_to_string(sizes) +
                                             " x" + std::to_string(f)));
        }
      }
    }
  }
}

// The plane kernel's layouts: so many small planes that each block takes several (16000 one-tile planes: at least 2
// a block on GPUs of up to 200 multiprocessors, whose launches aim at 32 blocks a multiprocessor), in ranks 4 and 5;
// widths a multiple of 4 (a thread's 4 columns stored at once, where the output is packed and aligned) and not;
// outputs packed, strided, and shifted by one element off the 4-element boundary; upscales whose neighbouring output
// rows share input rows, downscales, and rows of weight 0.
TEST(CudaEquivalence, PlaneKernelLayouts) {
  RSZ_NEED_CUDA();
  std::uint32_t seed = 9600;
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    for (const Dims& sizes : {Dims{1, 16000, 8, 32}, Dims{2, 8000, 7, 31}, Dims{2, 2000, 4, 9, 16}}) {
      Input in = make_input(sizes, type, false, seed++);
      test::sprinkle_special_values(in, 89);
      const DeviceInput device_in(in.view());
      for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
        for (int variant = 0; variant < 3; ++variant) {
          const bool strided = variant == 1;
          const std::size_t shift = variant == 2 ? 1 : 0;
          const std::string what = std::string(to_string(type)) + " " + to_string(mode) + " " +
                                   dims_to_string(sizes) + (strided ? " strided" : "") + (shift ? " shifted" : "");
          ASSERT_TRUE(upsample2d_matches(in, device_in, mode, {2, 2}, strided, "upsample2d x2 " + what, shift));
          if (sizes.size() != 4) continue;
          for (const std::array<float, 4>& scales :
               {std::array<float, 4>{1, 1, 0.5f, 0.5f}, std::array<float, 4>{1, 1, 3.0f, 1.25f}}) {
            ASSERT_TRUE(resample_matches(in, device_in, mode, scales, strided,
                                         "resample x" + std::to_string(scales[2]) + " " + what, shift));
          }
        }
      }
    }
  }
}

// Tiles whose work the block spreads over all its threads, and float16 nearest outputs stored 8 columns a thread:
// widths a multiple of 8 whose last tile is narrower than a full one (400 = 3 x 128 + 16 columns; float16 nearest
// 256 + 144), heights whose last tile is lower than a full one, float16 outputs 16-byte aligned (8 columns a thread),
// off that boundary by 4 elements (4 columns) and by 1 (not packed), and an 8-bit image to float16. Then 4000 planes
// of 20 x 176 upscaled x2 (40 x 352): several planes a block, bands of several rows (4 a thread in float16 nearest's
// 256 x 32 tiles, 5 in the others' 40-row tiles), and a last tile of 96 columns spread over uneven bands.
TEST(CudaEquivalence, PlaneKernelPartialTiles) {
  RSZ_NEED_CUDA();
  std::uint32_t seed = 9650;
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    Input in = make_input({2, 5, 70, 200}, type, false, seed++);
    test::sprinkle_special_values(in, 61);
    const DeviceInput device_in(in.view());
    for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
      for (const std::size_t shift : {0, 4, 1}) {
        const std::string what = std::string(to_string(type)) + " " + to_string(mode) + " shift " +
                                 std::to_string(shift);
        for (const std::uint32_t f : {2u, 3u}) {
          ASSERT_TRUE(upsample2d_matches(in, device_in, mode, {f, f}, false,
                                         "upsample2d x" + std::to_string(f) + " " + what, shift));
        }
        // 70 x 200 -> 119 x 400, 52 x 160 (a downscale the staged kernel takes) and 35 x 104.
        for (const std::array<float, 4>& scales : {std::array<float, 4>{1, 1, 1.7f, 2.0f},
                                                   std::array<float, 4>{1, 1, 0.75f, 0.8f},
                                                   std::array<float, 4>{1, 1, 0.5f, 0.52f}}) {
          ASSERT_TRUE(resample_matches(in, device_in, mode, scales, false,
                                       "resample x" + std::to_string(scales[3]) + " " + what, shift));
        }
      }
    }
  }
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    Input in = make_input({1, 4000, 20, 176}, type, false, seed++);
    test::sprinkle_special_values(in, 4099);
    const DeviceInput device_in(in.view());
    for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
      ASSERT_TRUE(upsample2d_matches(in, device_in, mode, {2, 2}, false,
                                     std::string("upsample2d x2 of 4000 planes ") + to_string(type) + " " +
                                         to_string(mode)));
    }
  }
  const Image8 pixels(333, 517, 131, 11);
  const DeviceInput device_image(pixels.view());
  for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
    ResampleParams p;
    p.interpolation = mode;
    p.scales = {1, 1, 1.3f, 1.3f};  // 432 x 672
    const TensorLayout layout =
        output_layout(resample_output_sizes(pixels.view().sizes(), p.scales), DataType::Float16, false);
    ASSERT_TRUE(resample_matches(pixels.view(), device_image.view(), layout, p,
                                 std::string("unorm8 image to float16 ") + to_string(mode)));
  }
}

// The pipelined kernel (linear upscales of float16 inputs whose rows are whole 16-byte chunks), and the staged kernel
// on the same float32 inputs: 601 planes of 34 x 200 (several planes a block, not all blocks as many: the copies run
// a plane ahead), upscaled x2, x3 and x4 and resampled by 2.0 x 2.5 and 2.3 x 1.1 with both pixel offsets; planes
// packed and padded (rows 34 of 40), last tiles narrower and lower than full ones; and, taking the other kernels, the
// same planes one element in (rows off the 16-byte boundary, 199 wide).
TEST(CudaEquivalence, PipelinedPlaneKernel) {
  RSZ_NEED_CUDA();
  std::uint32_t seed = 9700;
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    const Input padded = [&] {
      Input in = make_input({1, 601, 40, 200}, type, false, seed++);
      test::sprinkle_special_values(in, 811);
      return in;
    }();
    Input packed = make_input({1, 601, 34, 200}, type, false, seed++);
    test::sprinkle_special_values(packed, 809);
    const DeviceInput device_padded(padded.view());
    const DeviceInput device_packed(packed.view());
    const auto planes = [&](const ConstTensorView& whole, std::int64_t skip, MemorySpace memory) {
      return ConstTensorView(static_cast<const unsigned char*>(whole.data()) + skip * element_size(type),
                             TensorLayout(type, Dims{1, 601, 34, 200 - skip}, Dims{601 * 8000, 8000, 200, 1}), memory);
    };
    struct Case {
      ConstTensorView host;
      ConstTensorView device;
      std::string what;
    };
    const std::vector<Case> cases = {
        {packed.view(), device_packed.view(), "packed"},
        {planes(padded.view(), 0, MemorySpace::Host), planes(device_padded.view(), 0, MemorySpace::Device), "padded"},
        {planes(padded.view(), 1, MemorySpace::Host), planes(device_padded.view(), 1, MemorySpace::Device),
         "one element in"}};
    for (const Case& c : cases) {
      const std::string what = std::string(to_string(type)) + " " + c.what;
      for (const std::uint32_t f : {2u, 3u, 4u}) {
        Upsample2dParams p;
        p.interpolation = InterpolationMode::Linear;
        p.scale_size = {f, f};
        const TensorLayout layout = output_layout(upsample2d_output_sizes(c.host.sizes(), p.scale_size), type, false);
        ASSERT_TRUE(upsample2d_matches(c.host, c.device, layout, p, "upsample2d x" + std::to_string(f) + " " + what));
      }
      for (const std::array<float, 4>& scales :
           {std::array<float, 4>{1, 1, 2.0f, 2.5f}, std::array<float, 4>{1, 1, 2.3f, 1.1f}}) {
        for (const auto& [ip, op] : {std::pair{0.5f, -0.5f}, std::pair{0.0f, 0.0f}}) {
          ResampleParams p;
          p.interpolation = InterpolationMode::Linear;
          p.scales = scales;
          p.input_pixel_offsets = {ip, ip, ip, ip};
          p.output_pixel_offsets = {op, op, op, op};
          ASSERT_TRUE(resample_matches(c.host, c.device,
                                       output_layout(resample_output_sizes(c.host.sizes(), scales), type, false), p,
                                       "resample x" + std::to_string(scales[2]) + " x " + std::to_string(scales[3]) +
                                           " offsets " + std::to_string(ip) + " " + what));
        }
      }
    }
  }
}

// The doubling kernel (float16, linear, H and W doubled with pixel-centre offsets: upsample x2, resample by 2 with
// offsets 0.5 / -0.5): rows of 1, 3, 50 and 51 chunks of 4 (a warp's threads across rows and planes), heights of 1,
// 7, 37 and 70 (short last groups of rows), rank 5, special values; packed and row-padded inputs; packed and
// row-padded outputs; offsets 0.5 / -0.5 and 0.25 / -0.25 (the same taps, other weights), and offsets whose taps
// leave the window positions part way (threads that compute tap by tap beside threads that do not). Taking the other
// kernels: the same for float32 and planar unorm8 inputs, H scaled by 1, 0.6 and 3.7, offsets 0 / 0 and 0.75 / -0.25,
// inputs and outputs off their chunk boundaries, strided outputs.
TEST(CudaEquivalence, DoublingKernel) {
  RSZ_NEED_CUDA();
  std::uint32_t seed = 9900;
  const std::vector<Dims> shapes = {Dims{2, 3, 1, 4}, Dims{1, 5, 7, 12}, Dims{1, 7, 37, 200}, Dims{3, 1, 70, 204}};
  const auto check = [&](const ConstTensorView& host, const ConstTensorView& device, DataType out_type,
                         const std::string& what) {
    for (const int form : {0, 1, 2}) {
      for (const std::size_t shift : {std::size_t{0}, std::size_t{1}}) {
        if (form != 0 && shift == 1) continue;
        const std::string how =
            what + (form == 1 ? " strided" : (form == 2 ? " rows padded" : "")) + (shift == 1 ? " shifted" : "");
        Upsample2dParams u;
        u.interpolation = InterpolationMode::Linear;
        u.scale_size = {2, 2};
        ASSERT_TRUE(upsample2d_matches(host, device,
                                       form_layout(upsample2d_output_sizes(host.sizes(), u.scale_size), out_type, form),
                                       u, "upsample2d x2 " + how, shift));
        for (const float h : {2.0f, 1.0f, 0.6f, 3.7f}) {
          for (const auto& [ip, op] : {std::pair{0.5f, -0.5f}, std::pair{0.0f, 0.0f}, std::pair{0.25f, -0.25f},
                                       std::pair{0.75f, -0.25f}}) {
            ResampleParams p;
            p.interpolation = InterpolationMode::Linear;
            p.scales = {1, 1, h, 2.0f};
            p.input_pixel_offsets = {ip, ip, ip, ip};
            p.output_pixel_offsets = {op, op, op, op};
            ASSERT_TRUE(resample_matches(host, device,
                                         form_layout(resample_output_sizes(host.sizes(), p.scales), out_type, form), p,
                                         "resample " + std::to_string(h) + " x 2 offsets " + std::to_string(ip) + " " +
                                             how,
                                         shift));
          }
        }
      }
    }
  };
  for (const Dims& sizes : shapes) {
    for (const DataType type : {DataType::Float32, DataType::Float16}) {
      Input in = make_input(sizes, type, false, seed++);
      test::sprinkle_special_values(in, 13);
      const DeviceInput device_in(in.view());
      check(in.view(), device_in.view(), type, dims_to_string(sizes) + " " + to_string(type));
      // Rows padded to W + 4 (still whole chunks), and the same one element in (off the chunk boundary).
      Dims padded_sizes = sizes;
      padded_sizes[3] += 4;
      Input padded = make_input(padded_sizes, type, false, seed++);
      test::sprinkle_special_values(padded, 11);
      const DeviceInput device_padded(padded.view());
      for (const std::int64_t skip : {0, 1}) {
        check(view_in(padded.view(), sizes, padded_sizes, skip),
              view_in(device_padded.view(), sizes, padded_sizes, skip), type,
              dims_to_string(sizes) + " " + to_string(type) + " rows padded, " + std::to_string(skip) + " in");
      }
    }
    // Offsets whose taps leave the window positions from output 18 on, along H and W (float rounding of
    // o / 2 - 3e-7): the host's check of the first outputs passes, and the threads past them compute tap by tap.
    for (const DataType type : {DataType::Float32, DataType::Float16}) {
      Input in = make_input(sizes, type, false, seed++);
      test::sprinkle_special_values(in, 7);
      const DeviceInput device_in(in.view());
      ResampleParams p;
      p.interpolation = InterpolationMode::Linear;
      p.scales = {1, 1, 2.0f, 2.0f};
      p.input_pixel_offsets = {0, 0, 3e-7f, 3e-7f};
      p.output_pixel_offsets = {0, 0, 0, 0};
      ASSERT_TRUE(resample_matches(in.view(), device_in.view(),
                                   output_layout(resample_output_sizes(in.sizes, p.scales), type, false), p,
                                   dims_to_string(sizes) + " " + to_string(type) + " offsets 3e-7"));
    }
    std::vector<std::uint8_t> pixels(static_cast<std::size_t>(sizes[0] * sizes[1] * sizes[2] * sizes[3]));
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>((i * 37 + i / 5) % 256);
    const ConstTensorView host(pixels.data(), DataType::UNorm8, sizes, packed_strides(sizes));
    const DeviceInput device(host);
    for (const DataType out_type : {DataType::Float32, DataType::Float16}) {
      check(host, device.view(), out_type, dims_to_string(sizes) + " unorm8 to " + to_string(out_type));
    }
  }
  // Rank 5: D is a plane axis.
  Input in5 = make_input({2, 3, 4, 9, 16}, DataType::Float16, false, seed++);
  test::sprinkle_special_values(in5, 17);
  const DeviceInput device5(in5.view());
  for (const int form : {0, 2}) {
    Upsample2dParams u;
    u.interpolation = InterpolationMode::Linear;
    u.scale_size = {2, 2};
    ASSERT_TRUE(upsample2d_matches(in5.view(), device5.view(),
                                   form_layout(upsample2d_output_sizes(in5.sizes, u.scale_size), in5.type, form),
                                   u, "upsample2d x2 rank 5 form " + std::to_string(form)));
  }
}

// The nearest doubling kernel (float16 upsample x2 nearest): rows of 1, 3, 50 and 51 chunks of 4, heights of 1, 7, 37
// and 70, rank 5, special values (their bits copied); packed and row-padded inputs and outputs. Taking the plane
// kernel: float32, resample by 2 nearest (every rounding direction; offsets 0.5 / -0.5, 0 / 0, and offsets whose
// selections leave o / 2 from output 17 on), inputs and outputs off their chunk boundaries, strided outputs.
TEST(CudaEquivalence, NearestDoublingKernel) {
  RSZ_NEED_CUDA();
  std::uint32_t seed = 9980;
  for (const Dims& sizes :
       {Dims{2, 3, 1, 4}, Dims{1, 5, 7, 12}, Dims{1, 7, 37, 200}, Dims{3, 1, 70, 204}, Dims{2, 3, 4, 9, 16}}) {
    for (const DataType type : {DataType::Float16, DataType::Float32}) {
      Dims padded_sizes = sizes;
      padded_sizes.back() += 4;
      Input in = make_input(padded_sizes, type, false, seed++);
      test::sprinkle_special_values(in, 13);
      const DeviceInput device_in(in.view());
      for (const auto& [host, device, view] : input_views(in.view(), device_in.view(), sizes)) {
        const std::string what = dims_to_string(sizes) + " " + to_string(type) + view;
        for (const int form : {0, 1, 2}) {
          for (const std::size_t shift : {std::size_t{0}, std::size_t{1}}) {
            if (form != 0 && shift == 1) continue;
            const std::string how = what + " form " + std::to_string(form) + (shift == 1 ? " shifted" : "");
            Upsample2dParams u;
            u.interpolation = InterpolationMode::Nearest;
            u.scale_size = {2, 2};
            ASSERT_TRUE(upsample2d_matches(host, device,
                                           form_layout(upsample2d_output_sizes(sizes, u.scale_size), type, form), u,
                                           "upsample2d x2 nearest " + how, shift));
            if (sizes.size() != 4) continue;
            for (const NearestRounding rounding :
                 {NearestRounding::RoundPreferCeil, NearestRounding::RoundPreferFloor, NearestRounding::Floor,
                  NearestRounding::Ceil}) {
              for (const auto& [ip, op] :
                   {std::pair{0.5f, -0.5f}, std::pair{0.0f, 0.0f}, std::pair{-0.4999997f, 0.0f}}) {
                ResampleParams p;
                p.interpolation = InterpolationMode::Nearest;
                p.rounding_direction = rounding;
                p.scales = {1, 1, 2.0f, 2.0f};
                p.input_pixel_offsets = {0, 0, ip, ip};
                p.output_pixel_offsets = {0, 0, op, op};
                ASSERT_TRUE(resample_matches(
                    host, device, form_layout(resample_output_sizes(sizes, p.scales), type, form), p,
                    "resample x2 nearest " + std::string(to_string(rounding)) + " offsets " + std::to_string(ip) +
                        " " + how,
                    shift));
              }
            }
          }
        }
      }
    }
  }
}

// The halving kernel (float16, linear, H and W halved: resample by 0.5, offsets 0.5 / -0.5, 0 / 0, and one of each
// on H and W): rows of 1, 2, 3, 25 and 26 chunks of 8 outputs (an odd width, its last column unread), odd and even
// heights (short last groups of rows, an unread last row), special values; packed and row-padded inputs; packed and
// row-padded outputs; offsets whose taps leave the kernel's positions from output 16 on (threads that compute tap by
// tap beside threads that do not). Taking the other kernels: float32, inputs and outputs off their 16-byte
// boundaries, an odd packed width, strided outputs.
TEST(CudaEquivalence, HalvingKernel) {
  RSZ_NEED_CUDA();
  std::uint32_t seed = 9950;
  struct Offsets {
    float ip_h, op_h, ip_w, op_w;
  };
  const std::vector<Offsets> offsets = {
      {0.5f, -0.5f, 0.5f, -0.5f}, {0, 0, 0, 0}, {0.5f, -0.5f, 0, 0}, {-0.9999985f, 0, -0.9999985f, 0}};
  for (const Dims& sizes :
       {Dims{2, 3, 2, 16}, Dims{1, 2, 5, 33}, Dims{1, 5, 7, 48}, Dims{1, 7, 75, 400}, Dims{3, 1, 64, 416}}) {
    for (const DataType type : {DataType::Float16, DataType::Float32}) {
      Dims padded_sizes = sizes;
      padded_sizes[3] = (sizes[3] + 7) / 8 * 8 + 8;
      Input in = make_input(padded_sizes, type, false, seed++);
      test::sprinkle_special_values(in, 13);
      const DeviceInput device_in(in.view());
      for (const auto& [host, device, view] : input_views(in.view(), device_in.view(), sizes)) {
        for (const Offsets& o : offsets) {
          for (const int form : {0, 1, 2}) {
            for (const std::size_t shift : {std::size_t{0}, std::size_t{1}}) {
              if (form != 0 && shift == 1) continue;
              ResampleParams p;
              p.interpolation = InterpolationMode::Linear;
              p.scales = {1, 1, 0.5f, 0.5f};
              p.input_pixel_offsets = {0, 0, o.ip_h, o.ip_w};
              p.output_pixel_offsets = {0, 0, o.op_h, o.op_w};
              ASSERT_TRUE(resample_matches(
                  host, device, form_layout(resample_output_sizes(sizes, p.scales), type, form), p,
                  dims_to_string(sizes) + " " + to_string(type) + view + ", offsets " + std::to_string(o.ip_h) + " / " +
                      std::to_string(o.op_h) + " and " + std::to_string(o.ip_w) + " / " + std::to_string(o.op_w) +
                      " form " + std::to_string(form) + (shift == 1 ? " shifted" : ""),
                  shift));
            }
          }
        }
      }
    }
  }
}

// Enough planes (2 x 81) and ROIs for the shared-plane kernel on any current GPU: boxes inside, across the edges,
// outside, inverted, zero-size, sub-pixel, and one so large that adaptive sampling overflows a warp's tap table
// (36 columns of samples), which takes the kernel's per-sample path.
TEST(CudaEquivalence, RoiAlignSharedPlanes) {
  RSZ_NEED_CUDA();
  const std::vector<float> shapes = {2.5f,  3.0f,  20.25f, 14.0f, -6.0f, -4.0f, 9.0f,  7.5f, 30.0f, 20.0f,
                                     45.0f, 31.0f, 18.0f,  12.0f, 4.0f,  2.0f,  7.0f,  7.0f, 7.0f,  7.0f,
                                     5.1f,  5.2f,  5.3f,   5.35f, 0.0f,  0.0f,  36.0f, 22.0f};
  std::vector<float> boxes;
  for (int k = 0; k < 6; ++k) {
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      boxes.push_back(shapes[i] + (i % 2 == 0 ? 0.37f : 0.21f) * static_cast<float>(k));
    }
  }
  std::vector<std::uint32_t> batch(boxes.size() / 4);
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<std::uint32_t>((i / 3) % 2);
  RoiAlignParams base;
  base.spatial_scale_y = 0.8f;
  base.out_of_bounds_input_value = 1.5f;
  // 81 channels: float16 takes two planes a block, the last block one. A warp takes 4 ROIs at a time for outputs
  // up to 8 wide (5 x 4, 7 x 7; 9 x 8 with 2 x 2 samples has more rows of samples than a group's table: evaluated
  // from the boxes), 2 up to 16 (4 x 9, 16 x 16), 1 up to 32 (2 x 24); wider outputs (3 x 40) have more columns of
  // samples than a record holds and are evaluated from the boxes; adaptive sampling mixes ROIs of different sample
  // counts and large boxes whose taps were not tabled.
  for (const auto& [out_h, out_w] : {std::pair<int, int>{5, 4}, {7, 7}, {4, 9}, {9, 8}, {16, 16}, {2, 24}, {3, 40}}) {
    EXPECT_EQ(roi_align_sweep("roi_align shared planes", {2, 81, 23, 37}, boxes, batch, {{1, 4294967295u}, {2, 2}},
                              out_h, out_w, base, 9600, 29),
              2 * 2 * 2 * 2 * 2 * 2);
  }
  // Boxes inside the plane: with 2 x 2 samples every tap is in bounds and the warps skip the bounds checks. Rows of
  // 40 elements (160 and 80 bytes): NCHW planes are copied to shared memory 16 bytes at a time.
  std::vector<float> inside;
  for (int k = 0; k < 40; ++k) {
    const float x1 = 1.3f + static_cast<float>(k * 7 % 20);
    const float y1 = 1.1f + static_cast<float>(k * 5 % 12);
    inside.insert(inside.end(), {x1, y1, x1 + 3.0f + static_cast<float>(k % 13) * 0.9f,
                                 y1 + 2.0f + static_cast<float>(k % 9) * 1.1f});
  }
  std::vector<std::uint32_t> inside_batch(inside.size() / 4);
  for (std::size_t i = 0; i < inside_batch.size(); ++i) inside_batch[i] = static_cast<std::uint32_t>((i / 5) % 2);
  EXPECT_EQ(roi_align_sweep("roi_align shared planes, taps in bounds", {2, 81, 23, 40}, inside, inside_batch,
                            {{2, 2}, {1, 4294967295u}}, 7, 7, base, 9700, 31),
            2 * 2 * 2 * 2 * 2 * 2);
}

// unorm8 feature maps (81 channels: two planes a block, their bytes side by side in shared memory, the last block
// one plane), packed rows of 48 bytes (copied 16 bytes at a time) and channels-last (element by element), into
// float32 and float16 outputs; boxes inside the plane, across its edges and outside.
TEST(CudaEquivalence, RoiAlignSharedPlanesUnorm8) {
  RSZ_NEED_CUDA();
  const std::int64_t c = 81, h = 23, w = 48;
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(2 * c * h * w));
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>((i * 131 + i / 7) % 256);
  std::vector<float> boxes;
  for (int k = 0; k < 60; ++k) {
    const float x1 = static_cast<float>(k * 11 % 56) - 6.0f + 0.3f * static_cast<float>(k % 3);
    const float y1 = static_cast<float>(k * 7 % 28) - 4.0f + 0.45f * static_cast<float>(k % 2);
    boxes.insert(boxes.end(), {x1, y1, x1 + 2.0f + 1.1f * static_cast<float>(k % 13),
                               y1 + 1.5f + 0.9f * static_cast<float>(k % 10)});
  }
  const auto r = static_cast<std::int64_t>(boxes.size() / 4);
  std::vector<std::uint32_t> batch(static_cast<std::size_t>(r));
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<std::uint32_t>(i % 2);
  const ConstTensorView indices(batch.data(), DataType::UInt32, {r});
  const DeviceInput device_indices(indices);
  const DeviceInput device_bytes(ConstTensorView(bytes.data(), DataType::UNorm8, {2 * c * h * w}));
  int cases = 0;
  for (const bool channels_last : {false, true}) {
    const Dims strides = channels_last ? Dims{c * h * w, 1, w * c, c} : Dims{c * h * w, h * w, w, 1};
    const ConstTensorView in(bytes.data(), DataType::UNorm8, {2, c, h, w}, strides);
    const ConstTensorView device_in(device_bytes.view().data(), DataType::UNorm8, {2, c, h, w}, strides,
                                    MemorySpace::Device);
    for (const DataType out_type : {DataType::Float32, DataType::Float16}) {
      std::vector<std::uint16_t> boxes16(boxes.size());
      for (std::size_t i = 0; i < boxes.size(); ++i) boxes16[i] = float_to_float16_bits(boxes[i]);
      const ConstTensorView rois = out_type == DataType::Float32 ? ConstTensorView(boxes.data(), out_type, {r, 4})
                                                                 : ConstTensorView(boxes16.data(), out_type, {r, 4});
      const DeviceInput device_rois(rois);
      for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
        for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
          RoiAlignParams p;
          p.interpolation = mode;
          p.reduction = reduction;
          p.minimum_samples_per_output = 2;
          p.maximum_samples_per_output = 2;
          p.out_of_bounds_input_value = 0.25f;
          const auto [cpu, gpu] = both(
              output_layout({r, c, 7, 7}, out_type, cases % 2 == 1),
              [&](const TensorView& out) { roi_align(in, rois, indices, out, p, {Backend::Cpu, 2}); },
              [&](const TensorView& out) {
                roi_align(device_in, device_rois.view(), device_indices.view(), out, p, {Backend::Cuda});
              });
          const std::string what = std::string("roi_align unorm8 ") + (channels_last ? "nhwc " : "nchw ") +
                                   to_string(out_type) + " " + to_string(mode) + " " + to_string(reduction);
          ASSERT_TRUE(same_bytes(cpu, gpu, out_type, what));
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 16);
}

// `count` boxes of 1 to 22 by 1 to 18 elements over a 50 x 36 area from (-3, -2): inside a plane of at least 40 x 56
// and across its edges.
std::vector<float> scattered_boxes(int count) {
  std::vector<float> boxes;
  for (int k = 0; k < count; ++k) {
    const float x1 = static_cast<float>(k * 37 % 50) - 3.0f + 0.25f * static_cast<float>(k % 4);
    const float y1 = static_cast<float>(k * 23 % 36) - 2.0f + 0.3f * static_cast<float>(k % 3);
    boxes.insert(boxes.end(), {x1, y1, x1 + 1.0f + 1.3f * static_cast<float>(k % 17),
                               y1 + 1.0f + 1.7f * static_cast<float>(k % 11)});
  }
  return boxes;
}

// Many ROIs an image (700, as FPN levels have: many more than a block has warps, so that every warp takes ROIs from
// its image's list again and again), inside the plane and across its edges, on planes copied 16 bytes at a time.
TEST(CudaEquivalence, RoiAlignSharedPlanesManyRois) {
  RSZ_NEED_CUDA();
  const std::vector<float> boxes = scattered_boxes(1400);
  std::vector<std::uint32_t> batch(boxes.size() / 4);
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<std::uint32_t>(2 * i / batch.size());
  RoiAlignParams base;
  base.spatial_scale_x = 0.9f;
  base.out_of_bounds_input_value = -2.5f;
  EXPECT_EQ(roi_align_sweep("roi_align shared planes, many ROIs", {2, 67, 40, 56}, boxes, batch, {{2, 2}}, 7, 7, base,
                            9800, 37),
            2 * 2 * 2 * 2 * 2);
}

// The shared-plane kernel's work lists: five images whose ROIs come in no order of batch index, image 3 with none and
// image 0 with a few; float32 planes of 150 x 190 (one a block) and float16 (two a block). Boxes from under a row to 40
// rows high and as wide, some across the edges.
TEST(CudaEquivalence, RoiAlignSharedPlanesWorkLists) {
  RSZ_NEED_CUDA();
  std::vector<float> boxes;
  std::vector<std::uint32_t> batch;
  for (int k = 0; k < 1500; ++k) {
    const float x1 = static_cast<float>(k * 53 % 200) - 8.0f + 0.37f * static_cast<float>(k % 5);
    const float y1 = static_cast<float>(k * 29 % 160) - 6.0f + 0.23f * static_cast<float>(k % 7);
    const float w = 0.4f + 2.9f * static_cast<float>(k % 14);
    const float h = 0.3f + 1.7f * static_cast<float>(k * 7 % 24);
    boxes.insert(boxes.end(), {x1, y1, x1 + w, y1 + h});
    const std::uint32_t images[4] = {4, 1, 2, 4};  // image 3 gets none, image 0 only every 300th
    batch.push_back(k % 300 == 7 ? 0 : images[(static_cast<std::uint32_t>(k) * 2654435761u >> 7) % 4]);
  }
  RoiAlignParams base;
  base.out_of_bounds_input_value = 0.75f;
  EXPECT_EQ(roi_align_sweep("roi_align shared planes, work lists", {5, 29, 150, 190}, boxes, batch, {{2, 2}}, 7, 7,
                            base, 9900, 41),
            2 * 2 * 2 * 2 * 2);
}

// Far more plane groups than the device runs blocks at once (340: two planes a block, float32 and float16; many waves
// of blocks), with images of very different ROI counts (1, none, 398, 39, in no order of batch index).
TEST(CudaEquivalence, RoiAlignSharedPlanesManyPlaneGroups) {
  RSZ_NEED_CUDA();
  const std::vector<float> boxes = scattered_boxes(438);
  std::vector<std::uint32_t> batch;
  for (std::uint32_t k = 0; k < 438; ++k) batch.push_back(k == 200 ? 0 : (k * 2654435761u >> 9) % 11 < 1 ? 3 : 2);
  batch.resize(boxes.size() / 4);
  const auto in_image = [&](std::uint32_t image) { return std::count(batch.begin(), batch.end(), image); };
  ASSERT_EQ(in_image(0), 1);
  ASSERT_EQ(in_image(1), 0);
  ASSERT_GT(in_image(3), 20);
  RoiAlignParams base;
  base.out_of_bounds_input_value = -1.25f;
  EXPECT_EQ(roi_align_sweep("roi_align shared planes, many plane groups", {4, 170, 40, 56}, boxes, batch, {{2, 2}}, 7,
                            7, base, 9970, 47),
            2 * 2 * 2 * 2 * 2);
}

// Planes as large as FPN-P2's (200 x 272) on the shared-plane path, copied 16 bytes at a time where the input is NCHW:
// float32 one plane a block (two do not fit in shared memory; the asynchronous copy), float16 two a block (6800
// units of 16 bytes a plane, each thread loading several before it stores, the last batch partial); channels-last
// inputs element by element. 640 boxes from 1 x 1 to 80 x 60 elements, over the whole plane and across its edges.
TEST(CudaEquivalence, RoiAlignSharedPlanesLargePlanes) {
  RSZ_NEED_CUDA();
  std::vector<float> boxes;
  for (int k = 0; k < 640; ++k) {
    const float x1 = static_cast<float>(k * 97 % 300) - 14.0f + 0.31f * static_cast<float>(k % 3);
    const float y1 = static_cast<float>(k * 61 % 220) - 10.0f + 0.27f * static_cast<float>(k % 5);
    boxes.insert(boxes.end(), {x1, y1, x1 + 1.0f + static_cast<float>(k * 13 % 80),
                               y1 + 1.0f + static_cast<float>(k * 7 % 60)});
  }
  const std::vector<std::uint32_t> batch(boxes.size() / 4, 0);
  RoiAlignParams base;
  base.out_of_bounds_input_value = 1.5f;
  EXPECT_EQ(roi_align_sweep("roi_align shared planes, large planes", {1, 160, 200, 272}, boxes, batch, {{2, 2}}, 7, 7,
                            base, 9990, 53),
            2 * 2 * 2 * 2 * 2);
}

// One image on the shared-plane path: no work list, the warps take the ROIs in order.
TEST(CudaEquivalence, RoiAlignSharedPlanesOneImage) {
  RSZ_NEED_CUDA();
  const std::vector<float> boxes = scattered_boxes(300);
  const std::vector<std::uint32_t> batch(boxes.size() / 4, 0);
  RoiAlignParams base;
  base.out_of_bounds_input_value = 0.5f;
  EXPECT_EQ(roi_align_sweep("roi_align shared planes, one image", {1, 140, 40, 56}, boxes, batch, {{2, 2}}, 7, 7, base,
                            9950, 43),
            2 * 2 * 2 * 2 * 2);
}

std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return "no error";
}

// Inputs that broadcast (a stride of 0: every channel, or every row of every channel, the same) through the float16
// kernels that read rows as whole chunks (doubling, nearest doubling, halving, pipelined) and the plane kernels,
// float16 and float32, against the CPU backend.
TEST(CudaEquivalence, BroadcastInputs) {
  RSZ_NEED_CUDA();
  for (const DataType type : {DataType::Float16, DataType::Float32}) {
    Input base = make_input({1, 1, 24, 64}, type, false, 9370);
    test::sprinkle_special_values(base, 37);
    for (const auto& [sizes, strides] : {std::pair{Dims{2, 5, 24, 64}, Dims{0, 0, 64, 1}},
                                         std::pair{Dims{1, 3, 24, 64}, Dims{0, 0, 0, 1}}}) {
      const ConstTensorView host(base.view().data(), type, sizes, strides);
      const DeviceInput device(host);
      const std::string what = std::string(to_string(type)) + " strides " + dims_to_string(strides);
      for (const auto mode : {InterpolationMode::Linear, InterpolationMode::Nearest}) {
        Upsample2dParams u;
        u.interpolation = mode;
        u.scale_size = {2, 2};
        EXPECT_TRUE(upsample2d_matches(host, device.view(),
                                       TensorLayout(type, upsample2d_output_sizes(sizes, u.scale_size)), u,
                                       "upsample2d x2 " + std::string(to_string(mode)) + " " + what));
      }
      struct Case {
        InterpolationMode mode;
        float scale;
        float in_offset;
        float out_offset;
      };
      // Halving (0.5 with pixel-centre offsets), pipelined (float16 1.7), plane kernels (0.45), nearest doubling.
      for (const Case c : {Case{InterpolationMode::Linear, 0.5f, 0.5f, -0.5f},
                           Case{InterpolationMode::Linear, 1.7f, 0.5f, -0.5f},
                           Case{InterpolationMode::Linear, 0.45f, 0.0f, 0.0f},
                           Case{InterpolationMode::Nearest, 2.0f, 0.5f, -0.5f}}) {
        ResampleParams p;
        p.interpolation = c.mode;
        p.scales = {1, 1, c.scale, c.scale};
        p.input_pixel_offsets = {c.in_offset, c.in_offset, c.in_offset, c.in_offset};
        p.output_pixel_offsets = {c.out_offset, c.out_offset, c.out_offset, c.out_offset};
        EXPECT_TRUE(resample_matches(host, device.view(), TensorLayout(type, resample_output_sizes(sizes, p.scales)), p,
                                     "resample x" + std::to_string(c.scale) + " " + to_string(c.mode) + " " + what));
      }
    }
  }
}

// A rank-4 tensor whose rows lie `row_stride` elements apart, so that its extent passes 2^31 elements while only its
// rows are touched: on the host (calloc maps the pages in between lazily) and on the device (the rows copied plane
// by plane with cudaMemcpy2D).
class SparseRows {
 public:
  enum class Where { Host, Device, Both };
  SparseRows(DataType type, const Dims& sizes, std::int64_t row_stride, Where where)
      : layout_(type, sizes, {sizes[1] * sizes[2] * row_stride, sizes[2] * row_stride, row_stride, 1}),
        element_(element_size(type)),
        bytes_(static_cast<std::size_t>(layout_.extent()) * element_) {
    if (where != Where::Device) host_ = static_cast<unsigned char*>(std::calloc(bytes_, 1));
    if (where != Where::Host && cudaMalloc(&device_, bytes_) != cudaSuccess) {
      cudaGetLastError();
      device_ = nullptr;
    }
    ok_ = (where == Where::Device || host_ != nullptr) && (where == Where::Host || device_ != nullptr);
  }
  // Whether the memory it asked for could be had (the test skips otherwise).
  bool ok() const { return ok_; }
  ~SparseRows() {
    std::free(host_);
    cudaFree(device_);
  }
  SparseRows(const SparseRows&) = delete;
  SparseRows& operator=(const SparseRows&) = delete;

  std::int64_t extent() const { return layout_.extent(); }
  ConstTensorView host_in() const { return ConstTensorView(host_, layout_); }
  ConstTensorView device_in() const { return ConstTensorView(device_, layout_, MemorySpace::Device); }
  TensorView host_out() const { return TensorView(host_, layout_); }
  TensorView device_out() const { return TensorView(device_, layout_, MemorySpace::Device); }

  // Random values in [-3, 3) in every row (test::random_f32, a plane at a time), then the rows to the device.
  void fill(std::uint32_t seed) {
    for_each_plane([&](std::size_t at) {
      const Tensor plane = test::random_f32({layout_.size(2), layout_.size(3)}, seed++, -3.0f, 3.0f);
      const auto* const values = static_cast<const float*>(plane.data());
      for (std::int64_t y = 0; y < layout_.size(2); ++y) {
        for (std::int64_t x = 0; x < layout_.size(3); ++x) {
          const float v = values[y * layout_.size(3) + x];
          unsigned char* const e = host_ + at + static_cast<std::size_t>(y * layout_.stride(2) + x) * element_;
          if (layout_.dtype() == DataType::Float32) {
            std::memcpy(e, &v, sizeof v);
          } else {
            const std::uint16_t bits = float_to_float16_bits(v);
            std::memcpy(e, &bits, sizeof bits);
          }
        }
      }
      EXPECT_EQ(cudaMemcpy2D(static_cast<unsigned char*>(device_) + at, pitch(), host_ + at, pitch(), row_bytes(),
                             static_cast<std::size_t>(layout_.size(2)), cudaMemcpyHostToDevice),
                cudaSuccess);
    });
  }

  // Whether the device's rows hold the same bytes as `host`'s (the same layout) rows; the first difference on `why`.
  bool device_rows_equal(const SparseRows& host, std::string& why) const {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<unsigned char> rows(row_bytes() * static_cast<std::size_t>(layout_.size(2)));
    bool same = true;
    for_each_plane([&](std::size_t at) {
      EXPECT_EQ(cudaMemcpy2D(rows.data(), row_bytes(), static_cast<unsigned char*>(device_) + at, pitch(),
                             row_bytes(), static_cast<std::size_t>(layout_.size(2)), cudaMemcpyDeviceToHost),
                cudaSuccess);
      for (std::int64_t y = 0; same && y < layout_.size(2); ++y) {
        const unsigned char* const want = host.host_ + at + static_cast<std::size_t>(y * layout_.stride(2)) * element_;
        if (std::memcmp(rows.data() + static_cast<std::size_t>(y) * row_bytes(), want, row_bytes()) != 0) {
          same = false;
          why = "row " + std::to_string(y) + " of the plane at element " + std::to_string(at / element_) + " differs";
        }
      }
    });
    return same;
  }

 private:
  template <typename F>
  void for_each_plane(const F& f) const {
    for (std::int64_t n = 0; n < layout_.size(0); ++n) {
      for (std::int64_t c = 0; c < layout_.size(1); ++c) {
        f(static_cast<std::size_t>(n * layout_.stride(0) + c * layout_.stride(1)) * element_);
      }
    }
  }
  std::size_t pitch() const { return static_cast<std::size_t>(layout_.stride(2)) * element_; }
  std::size_t row_bytes() const { return static_cast<std::size_t>(layout_.size(3)) * element_; }

  TensorLayout layout_;
  std::size_t element_;
  std::size_t bytes_;
  unsigned char* host_ = nullptr;
  void* device_ = nullptr;
  bool ok_ = false;
};

// Views whose element offsets pass 2^31 (rows so far apart that each view's extent is just over 2^31 elements): the
// plane kernels' 64-bit indices for resample (shrinking, enlarging, nearest) and upsample2d, and roi_align's
// per-element kernel (the gather kernel needs 32-bit offsets), float32 and float16, against the CPU backend on the
// same views.
TEST(CudaEquivalence, OffsetsPast32Bits) {
  RSZ_NEED_CUDA();
  // The row stride that takes a view of `sizes` just past 2^31 elements: its last row starts past 2^31 - 64 * rows.
  const auto far = [](const Dims& sizes) {
    const std::int64_t rows = sizes[0] * sizes[1] * sizes[2];
    return (std::int64_t{1} << 31) / std::max<std::int64_t>(rows - 1, 1) + 64;
  };
  const Dims in_sizes{1, 2, 40, 60};
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    const std::string name = to_string(type);
    SparseRows in(type, in_sizes, far(in_sizes), SparseRows::Where::Both);
    if (!in.ok()) GTEST_SKIP() << "no memory for views past 2^31 elements";
    ASSERT_GT(in.extent(), std::int64_t{1} << 31);
    in.fill(9360);
    std::string why;
    struct Scale {
      InterpolationMode mode;
      float y;
      float x;
    };
    for (const Scale s : {Scale{InterpolationMode::Linear, 0.6f, 0.7f}, Scale{InterpolationMode::Linear, 1.7f, 1.3f},
                          Scale{InterpolationMode::Nearest, 1.5f, 0.5f}, Scale{InterpolationMode::Linear, 2.0f, 2.0f},
                          Scale{InterpolationMode::Linear, 0.5f, 0.5f}}) {
      ResampleParams p;
      p.interpolation = s.mode;
      p.scales = {1, 1, s.y, s.x};
      const Dims sizes = resample_output_sizes(in_sizes, p.scales);
      SparseRows cpu(type, sizes, far(sizes), SparseRows::Where::Host);
      SparseRows gpu(type, sizes, far(sizes), SparseRows::Where::Device);
      if (!cpu.ok() || !gpu.ok()) GTEST_SKIP() << "no memory for views past 2^31 elements";
      ASSERT_GT(gpu.extent(), std::int64_t{1} << 31);
      resample(in.host_in(), cpu.host_out(), p, {Backend::Cpu, 2});
      resample(in.device_in(), gpu.device_out(), p, {Backend::Cuda});
      EXPECT_TRUE(gpu.device_rows_equal(cpu, why))
          << name << " resample " << to_string(s.mode) << " x" << s.y << " x" << s.x << ": " << why;
    }
    for (const auto mode : {InterpolationMode::Linear, InterpolationMode::Nearest}) {
      Upsample2dParams up;
      up.interpolation = mode;
      up.scale_size = {2, 3};
      const Dims sizes = upsample2d_output_sizes(in_sizes, up.scale_size);
      SparseRows cpu(type, sizes, far(sizes), SparseRows::Where::Host);
      SparseRows gpu(type, sizes, far(sizes), SparseRows::Where::Device);
      if (!cpu.ok() || !gpu.ok()) GTEST_SKIP() << "no memory for views past 2^31 elements";
      ASSERT_GT(gpu.extent(), std::int64_t{1} << 31);
      upsample2d(in.host_in(), cpu.host_out(), up, {Backend::Cpu, 2});
      upsample2d(in.device_in(), gpu.device_out(), up, {Backend::Cuda});
      EXPECT_TRUE(gpu.device_rows_equal(cpu, why)) << name << " upsample2d " << to_string(mode) << ": " << why;
    }
    // roi_align: 24 boxes (inside the plane and across its edges) into a packed output, and 5 into one whose rows are
    // far apart too.
    std::vector<float> boxes;
    for (int k = 0; k < 24; ++k) {
      const float x1 = static_cast<float>(k * 37 % 64) - 4.0f + 0.3f * static_cast<float>(k % 3);
      const float y1 = static_cast<float>(k * 23 % 44) - 3.0f + 0.2f * static_cast<float>(k % 5);
      boxes.insert(boxes.end(),
                   {x1, y1, x1 + 1.0f + static_cast<float>(k % 19), y1 + 1.0f + static_cast<float>(k % 13)});
    }
    const std::vector<std::uint32_t> batch(boxes.size() / 4, 0);
    std::vector<std::uint16_t> boxes16;  // the boxes in the input's type
    for (const float v : boxes) boxes16.push_back(float_to_float16_bits(v));
    for (const auto mode : {InterpolationMode::Linear, InterpolationMode::Nearest}) {
      RoiAlignParams params;
      params.interpolation = mode;
      params.out_of_bounds_input_value = 0.5f;
      for (const std::int64_t r : {std::int64_t{24}, std::int64_t{5}}) {
        const ConstTensorView rois(type == DataType::Float32 ? static_cast<const void*>(boxes.data()) : boxes16.data(),
                                   type, {r, 4});
        const ConstTensorView indices(batch.data(), DataType::UInt32, {r});
        const DeviceInput device_rois(rois), device_indices(indices);
        const Dims sizes{r, 2, 7, 7};
        if (r == 24) {
          const TensorLayout layout(type, sizes);
          std::vector<unsigned char> cpu(bytes_of(layout));
          DeviceBuffer gpu(bytes_of(layout));
          roi_align(in.host_in(), rois, indices, TensorView(cpu.data(), layout), params, {Backend::Cpu, 2});
          roi_align(in.device_in(), device_rois.view(), device_indices.view(),
                    TensorView(gpu.data(), layout, MemorySpace::Device), params, {Backend::Cuda});
          EXPECT_TRUE(same_bytes(cpu, gpu.download(), type, name + " roi_align " + to_string(mode) + ", far rows"));
        } else {
          SparseRows cpu(type, sizes, far(sizes), SparseRows::Where::Host);
          SparseRows gpu(type, sizes, far(sizes), SparseRows::Where::Device);
          if (!cpu.ok() || !gpu.ok()) GTEST_SKIP() << "no memory for views past 2^31 elements";
          ASSERT_GT(gpu.extent(), std::int64_t{1} << 31);
          roi_align(in.host_in(), rois, indices, cpu.host_out(), params, {Backend::Cpu, 2});
          roi_align(in.device_in(), device_rois.view(), device_indices.view(), gpu.device_out(), params,
                    {Backend::Cuda});
          EXPECT_TRUE(gpu.device_rows_equal(cpu, why))
              << name << " roi_align " << to_string(mode) << ", far rows in and out: " << why;
        }
      }
    }
  }
}

// Host tensors with Backend::Cuda are copied to the device, computed there and copied back before the call returns:
// the same bytes as the CPU backend, gaps of strided outputs included (both outputs start from the same fill), for
// an interleaved 8-bit image, a float16 upsample and a roi_align with host boxes.
TEST(CudaBackend, StagesHostTensors) {
  RSZ_NEED_CUDA();
  const Image8 pixels(61, 83, 97, 5);
  const ConstTensorView image = pixels.view();
  for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
    ResampleParams p;
    p.interpolation = mode;
    p.scales = {1, 1, 0.45f, 1.6f};
    const TensorLayout layout = output_layout(resample_output_sizes(image.sizes(), p.scales), DataType::Float32, true);
    std::vector<unsigned char> cpu(bytes_of(layout), 0xa5), gpu(bytes_of(layout), 0xa5);
    resample(image, TensorView(cpu.data(), layout), p, {Backend::Cpu, 2});
    resample(image, TensorView(gpu.data(), layout), p, {Backend::Cuda});
    ASSERT_TRUE(same_bytes(cpu, gpu, DataType::Float32, std::string("staged resample ") + to_string(mode)));
  }
  Input in = make_input({1, 4, 3, 9, 11}, DataType::Float16, false, 9700);
  test::sprinkle_special_values(in, 11);
  Upsample2dParams up;
  up.interpolation = InterpolationMode::Linear;
  up.scale_size = {3, 2};
  const TensorLayout up_layout = output_layout(upsample2d_output_sizes(in.sizes, up.scale_size), DataType::Float16, false);
  std::vector<unsigned char> up_cpu(bytes_of(up_layout), 0x5a), up_gpu(bytes_of(up_layout), 0x5a);
  upsample2d(in.view(), TensorView(up_cpu.data(), up_layout), up, {Backend::Cpu, 2});
  upsample2d(in.view(), TensorView(up_gpu.data(), up_layout), up, {Backend::Cuda});
  ASSERT_TRUE(same_bytes(up_cpu, up_gpu, DataType::Float16, "staged upsample2d"));
  Input maps = make_input({2, 5, 23, 37}, DataType::Float32, true, 9701);
  const std::vector<float> boxes{2.5f, 3.0f, 20.25f, 14.0f, -6.0f, -4.0f, 9.0f, 7.5f, 0.0f, 0.0f, 36.0f, 22.0f};
  const std::vector<std::uint32_t> batch{1, 0, 1};
  const ConstTensorView rois(boxes.data(), DataType::Float32, {3, 4});
  const ConstTensorView indices(batch.data(), DataType::UInt32, {3});
  const TensorLayout crop_layout = output_layout({3, 5, 6, 4}, DataType::Float32, true);
  std::vector<unsigned char> crop_cpu(bytes_of(crop_layout), 0xa5), crop_gpu(bytes_of(crop_layout), 0xa5);
  roi_align(maps.view(), rois, indices, TensorView(crop_cpu.data(), crop_layout), RoiAlignParams{}, {Backend::Cpu, 2});
  roi_align(maps.view(), rois, indices, TensorView(crop_gpu.data(), crop_layout), RoiAlignParams{}, {Backend::Cuda});
  ASSERT_TRUE(same_bytes(crop_cpu, crop_gpu, DataType::Float32, "staged roi_align"));
}

// Host tensors of several staging chunks (8 MiB slots, pinned: at least two of them) cross in pipelined chunks, the
// last one partial: a float32 input of 18 MB, a packed output of 30 MB and a strided one with gaps (its 61 MB extent
// comes back into host scratch memory, and only its elements go on), and a 108 MB upsample, each against the CPU
// backend; each call reuses the slots of the one before.
TEST(CudaBackend, StagesLargeHostTensorsInPinnedChunks) {
  RSZ_NEED_CUDA();
  Input in = make_input({1, 3, 1500, 1001}, DataType::Float32, false, 9720);
  test::sprinkle_special_values(in, 100003);
  for (const bool strided : {false, true}) {
    ResampleParams p;
    p.scales = {1, 1, 1.3f, 1.3f};
    const TensorLayout layout =
        output_layout(resample_output_sizes(in.sizes, p.scales), DataType::Float32, strided);
    std::vector<unsigned char> cpu(bytes_of(layout), 0xa5), gpu(bytes_of(layout), 0xa5);
    resample(in.view(), TensorView(cpu.data(), layout), p, {Backend::Cpu, 2});
    resample(in.view(), TensorView(gpu.data(), layout), p, {Backend::Cuda});
    ASSERT_TRUE(same_bytes(cpu, gpu, DataType::Float32, strided ? "large strided output" : "large packed output"));
  }
  Upsample2dParams up;
  up.interpolation = InterpolationMode::Linear;
  up.scale_size = {2, 3};
  const TensorLayout up_layout(DataType::Float32, upsample2d_output_sizes(in.sizes, up.scale_size));
  std::vector<unsigned char> up_cpu(bytes_of(up_layout)), up_gpu(bytes_of(up_layout));
  upsample2d(in.view(), TensorView(up_cpu.data(), up_layout), up, {Backend::Cpu, 2});
  upsample2d(in.view(), TensorView(up_gpu.data(), up_layout), up, {Backend::Cuda});
  ASSERT_TRUE(same_bytes(up_cpu, up_gpu, DataType::Float32, "large upsample2d"));
}

// A staged call's device copies go back to the device afterwards, beyond the 256 MB rsz's pool keeps for the next
// staging: a call of about 1 GB (a 384 MB input, a 650 MB output) leaves at most that much less device memory free.
TEST(CudaBackend, StagingReleasesLargeDeviceCopies) {
  RSZ_NEED_CUDA();
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  const TensorLayout in_layout(DataType::Float32, {2, 3, 4000, 4000});
  ResampleParams p;
  p.scales = {1, 1, 1.3f, 1.3f};
  const TensorLayout out_layout(DataType::Float32, resample_output_sizes(in_layout.sizes(), p.scales));
  std::vector<float> in(static_cast<std::size_t>(in_layout.extent()), 0.25f);
  std::vector<float> out(static_cast<std::size_t>(out_layout.extent()), -1.0f);
  std::size_t free_before = 0, free_after = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  resample(ConstTensorView(in.data(), in_layout), TensorView(out.data(), out_layout), p, {Backend::Cuda});
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(out.front(), 0.25f);
  EXPECT_EQ(out.back(), 0.25f);
  EXPECT_GE(free_after + 256 * kMiB + 32 * kMiB, free_before)
      << "device memory free before " << free_before / kMiB << " MiB, after " << free_after / kMiB << " MiB";
}

// The command line's bands: a host image resampled band by band (rows [first, first + rows) of the output are the
// output of a call whose output offset is shifted by first), each call copying only the input rows its band reads.
// Before each band a call on other pixels of the same size leaves its bytes in the device memory the band's input
// copy may reuse, so a row the band reads but did not copy would show. Shrinking, enlarging and antialiased, linear
// and nearest, every band bit-identical to the CPU backend's whole result.
TEST(CudaBackend, StagedBandsCopyTheRowsTheyRead) {
  RSZ_NEED_CUDA();
  const Image8 pixels(157, 203, 97, 5);
  const Image8 other(157, 203, 31, 3);
  const ConstTensorView image = pixels.view();
  struct Mode {
    InterpolationMode mode;
    bool antialiased;
    float scale;
  };
  for (const Mode m : {Mode{InterpolationMode::Linear, false, 0.45f}, Mode{InterpolationMode::Linear, true, 0.3f},
                       Mode{InterpolationMode::Nearest, false, 1.7f}, Mode{InterpolationMode::Linear, false, 2.5f}}) {
    ResampleParams p;
    p.interpolation = m.mode;
    p.antialiased = m.antialiased;
    p.scales = {1, 1, m.scale, m.scale};
    const Dims sizes = resample_output_sizes(image.sizes(), p.scales);
    const TensorLayout layout(DataType::Float32, sizes);
    std::vector<unsigned char> cpu(bytes_of(layout));
    resample(image, TensorView(cpu.data(), layout), p, {Backend::Cpu, 2});
    const std::int64_t rows = 13;
    const std::size_t row_bytes = static_cast<std::size_t>(sizes[3]) * sizeof(float);
    for (std::int64_t first = 0; first < sizes[2]; first += rows) {
      const std::int64_t count = std::min(rows, sizes[2] - first);
      std::vector<unsigned char> scratch(bytes_of(layout));
      resample(other.view(), TensorView(scratch.data(), layout), p, {Backend::Cuda});
      const TensorLayout band_layout(DataType::Float32, {1, sizes[1], count, sizes[3]});
      std::vector<unsigned char> band(bytes_of(band_layout));
      ResampleParams shifted = p;
      shifted.output_pixel_offsets[2] -= static_cast<float>(first);
      resample(image, TensorView(band.data(), band_layout), shifted, {Backend::Cuda});
      for (std::int64_t c = 0; c < sizes[1]; ++c) {
        const auto at = [&](std::int64_t plane_rows, std::int64_t row) {
          return static_cast<std::size_t>(c * plane_rows + row) * row_bytes;
        };
        const std::vector<unsigned char> want(cpu.begin() + static_cast<std::ptrdiff_t>(at(sizes[2], first)),
                                              cpu.begin() + static_cast<std::ptrdiff_t>(at(sizes[2], first + count)));
        const std::vector<unsigned char> got(band.begin() + static_cast<std::ptrdiff_t>(at(count, 0)),
                                             band.begin() + static_cast<std::ptrdiff_t>(at(count, count)));
        ASSERT_TRUE(same_bytes(want, got, DataType::Float32,
                               std::string("band at row ") + std::to_string(first) + " channel " + std::to_string(c) +
                                   " " + to_string(m.mode) + (m.antialiased ? " antialiased" : "") + " scale " +
                                   std::to_string(m.scale)));
      }
    }
  }
}

TEST(CudaBackend, RunsOnTheCallersStreamAndRefusesWhatTheHostRefuses) {
  RSZ_NEED_CUDA();
  Input in = make_input({1, 2, 16, 16}, DataType::Float32, false, 9300);
  const DeviceInput device_in(in.view());
  ResampleParams p;
  p.scales = {1, 1, 0.5f, 0.5f};
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const TensorLayout layout = output_layout({1, 2, 8, 8}, DataType::Float32, false);
  std::vector<unsigned char> cpu(bytes_of(layout));
  resample(in.view(), TensorView(cpu.data(), layout), p, {Backend::Cpu});
  DeviceBuffer out(bytes_of(layout));
  ExecOptions options;
  options.stream = stream;  // Auto: device memory picks cuda
  resample(device_in.view(), TensorView(out.data(), layout, MemorySpace::Device), p, options);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_TRUE(same_bytes(cpu, out.download(), DataType::Float32, "stream"));
  cudaStreamDestroy(stream);

  // A host pointer marked as device memory.
  EXPECT_NE(message_of([&] {
              resample(ConstTensorView(in.view().data(), in.view().layout(), MemorySpace::Device),
                       TensorView(out.data(), layout, MemorySpace::Device), p, {Backend::Cuda});
            }).find("is not memory a CUDA device can read"),
            std::string::npos);
}

// ROI values in device memory are checked on the device without synchronizing: a call that breaks a rule returns,
// writes nothing, and rsz::synchronize throws the CPU backend's message for the same values (then the stream is
// clear); later calls on that stream compute as usual. With check_values_on_host the call itself throws.
TEST(CudaBackend, ChecksRoiValuesOnTheDeviceAndReportsThemAtSynchronize) {
  RSZ_NEED_CUDA();
  Input in = make_input({2, 3, 16, 16}, DataType::Float32, false, 9310);
  const DeviceInput device_in(in.view());
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ExecOptions on_stream;
  on_stream.stream = stream;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    const char* what;
    std::vector<float> boxes;
    std::vector<std::uint32_t> batch;
    std::uint64_t max_samples;
    RoiAlignParams params;
    const char* expected;  // a part of the message
  };
  RoiAlignParams adaptive;
  adaptive.maximum_samples_per_output = 1000;
  RoiAlignParams huge_scale;
  huge_scale.spatial_scale_y = 3e38f;
  std::vector<Case> cases = {
      {"batch index", {0, 0, 4, 4, 1, 1, 2, 3, 0, 0, 1, 1}, {0, 7, 9}, 0, {}, "batch_indices[1] = 7 is out of range [0, 2)"},
      {"nan coordinate", {0, 0, 4, 4, 1, 1, 2, 3, 0, nan, 1, 1}, {1, 0, 1}, 0, {}, "rois[2][1] (y1)"},
      {"infinite coordinate", {0, 0, 4, 4, 1, 1, inf, 3, 0, 0, 1, 1}, {1, 0, 1}, 0, {}, "rois[1][2] (x2)"},
      {"overflowing scale", {0, 0, 4, 4, 1, 1, 2, 3, 0, 2, 1, 1}, {1, 0, 1}, 0, huge_scale, "overflows float32"},
      {"infinite extent", {0, 0, 4, 4, -3e38f, 1, 3e38f, 3, 0, 0, 1, 1}, {1, 0, 1}, 0, {}, "box extents must be finite"},
      {"sample budget", {0, 0, 4, 4, 0, 0, 9000, 9000, 0, 0, 9000, 9000}, {1, 0, 1}, 100000, adaptive, "ROI 1 alone"},
  };
  // 3000 ROIs: the device check runs in 6 blocks of 512 threads (each ROI r in block r / 512), and the last to
  // finish combines their findings: the bad ROIs 600, 1300 and 1700 and the largest ROIs 1500 and 1700 are each in
  // another block.
  const auto many = [](std::vector<float>& boxes, std::vector<std::uint32_t>& batch) {
    for (int k = 0; k < 3000; ++k) {
      boxes.insert(boxes.end(), {1.0f, 2.0f, 5.0f + static_cast<float>(k % 7), 6.0f});
      batch.push_back(static_cast<std::uint32_t>(k % 2));
    }
  };
  Case later{"the first bad ROI of several blocks", {}, {}, 0, {}, "rois[600][1] (y1)"};
  many(later.boxes, later.batch);
  later.batch[1300] = 9;
  later.boxes[600 * 4 + 1] = nan;
  later.boxes[1700 * 4 + 3] = inf;
  cases.push_back(later);
  Case worst{"the first of the largest ROIs of several blocks", {}, {}, 100000, adaptive, "ROI 1500 alone"};
  many(worst.boxes, worst.batch);
  for (const int k : {1700, 1500}) {
    worst.boxes[4 * k] = 0.0f;
    worst.boxes[4 * k + 1] = 0.0f;
    worst.boxes[4 * k + 2] = 9000.0f;
    worst.boxes[4 * k + 3] = 9000.0f;
  }
  cases.push_back(worst);
  for (const Case& c : cases) {
    const std::int64_t r = static_cast<std::int64_t>(c.batch.size());
    const DeviceInput rois(ConstTensorView(c.boxes.data(), DataType::Float32, {r, 4}));
    const DeviceInput indices(ConstTensorView(c.batch.data(), DataType::UInt32, {r}));
    std::vector<float> host_out(static_cast<std::size_t>(r * 3 * 2 * 2));
    ExecOptions cpu{Backend::Cpu, 2};
    cpu.max_samples = c.max_samples;
    const std::string expected = message_of([&] {
      roi_align(in.view(), ConstTensorView(c.boxes.data(), DataType::Float32, {r, 4}),
                ConstTensorView(c.batch.data(), DataType::UInt32, {r}),
                TensorView(host_out.data(), DataType::Float32, {r, 3, 2, 2}), c.params, cpu);
    });
    ASSERT_NE(expected.find(c.expected), std::string::npos) << c.what << ": " << expected;
    const std::vector<float> fill(host_out.size(), -7.0f);
    DeviceBuffer out(fill.data(), fill.size() * sizeof(float));
    const TensorView out_view(out.data(), DataType::Float32, {r, 3, 2, 2}, {}, MemorySpace::Device);
    ExecOptions options = on_stream;
    options.max_samples = c.max_samples;
    EXPECT_EQ(message_of([&] { roi_align(device_in.view(), rois.view(), indices.view(), out_view, c.params, options); }),
              "no error")
        << c.what;
    EXPECT_EQ(message_of([&] { synchronize(options); }), expected) << c.what;
    EXPECT_EQ(message_of([&] { synchronize(options); }), "no error") << c.what << ": the stream is clear again";
    const std::vector<unsigned char> untouched = out.download();
    EXPECT_EQ(std::memcmp(untouched.data(), fill.data(), untouched.size()), 0) << c.what << ": the output was written";
    ExecOptions on_host = options;
    on_host.check_values_on_host = true;
    EXPECT_EQ(message_of([&] { roi_align(device_in.view(), rois.view(), indices.view(), out_view, c.params, on_host); }),
              expected)
        << c.what;
  }
  // Two failing calls, then a good one, on one stream: synchronize reports the first; the good call computes.
  const std::vector<float> boxes{0, 0, 4, 4, 1, 1, 9, 13};
  const std::vector<std::uint32_t> good{1, 0}, bad_first{0, 5}, bad_second{3, 0};
  const DeviceInput rois(ConstTensorView(boxes.data(), DataType::Float32, {2, 4}));
  const DeviceInput good_indices(ConstTensorView(good.data(), DataType::UInt32, {2}));
  const DeviceInput first_indices(ConstTensorView(bad_first.data(), DataType::UInt32, {2}));
  const DeviceInput second_indices(ConstTensorView(bad_second.data(), DataType::UInt32, {2}));
  const TensorLayout layout = output_layout({2, 3, 3, 3}, DataType::Float32, false);
  std::vector<unsigned char> cpu(bytes_of(layout));
  roi_align(in.view(), ConstTensorView(boxes.data(), DataType::Float32, {2, 4}),
            ConstTensorView(good.data(), DataType::UInt32, {2}), TensorView(cpu.data(), layout), RoiAlignParams{},
            {Backend::Cpu, 2});
  DeviceBuffer out(bytes_of(layout));
  const TensorView out_view(out.data(), layout, MemorySpace::Device);
  roi_align(device_in.view(), rois.view(), first_indices.view(), out_view, RoiAlignParams{}, on_stream);
  roi_align(device_in.view(), rois.view(), second_indices.view(), out_view, RoiAlignParams{}, on_stream);
  roi_align(device_in.view(), rois.view(), good_indices.view(), out_view, RoiAlignParams{}, on_stream);
  EXPECT_NE(message_of([&] { synchronize(on_stream); }).find("batch_indices[1] = 5 is out of range"), std::string::npos);
  EXPECT_TRUE(same_bytes(cpu, out.download(), DataType::Float32, "the good call after two failing ones"));
  // Another stream's record is its own.
  EXPECT_EQ(message_of([] { synchronize(ExecOptions{}); }), "no error");
  EXPECT_EQ(message_of([] { synchronize(ExecOptions{Backend::Cpu}); }), "no error");
  cudaStreamDestroy(stream);
  // The legacy default stream has two names (nullptr and cudaStreamLegacy): one record.
  const auto queue_failing = [&](const ExecOptions& options) {
    roi_align(device_in.view(), rois.view(), first_indices.view(), out_view, RoiAlignParams{}, options);
  };
  ExecOptions legacy;
  legacy.stream = cudaStreamLegacy;
  queue_failing(ExecOptions{});
  EXPECT_NE(message_of([&] { synchronize(legacy); }).find("batch_indices[1] = 5"), std::string::npos);
  EXPECT_EQ(message_of([] { synchronize(ExecOptions{}); }), "no error");
  // cudaStreamPerThread is a different stream in every thread: another thread's synchronize does not see the error.
  ExecOptions per_thread;
  per_thread.stream = cudaStreamPerThread;
  std::promise<void> queued;
  std::promise<void> looked;
  std::string in_worker;
  std::thread worker([&] {
    queue_failing(per_thread);
    queued.set_value();
    looked.get_future().wait();
    in_worker = message_of([&] { synchronize(per_thread); });
  });
  queued.get_future().wait();
  EXPECT_EQ(message_of([&] { synchronize(per_thread); }), "no error");
  looked.set_value();
  worker.join();
  EXPECT_NE(in_worker.find("batch_indices[1] = 5"), std::string::npos) << in_worker;
}

// The shared-plane path (two images of 80 channels: work lists) with values that break a rule: the call writes
// nothing and synchronize reports the CPU backend's error; checked on the host, the call itself throws it. With good
// values checked on the host, the check kernel only counts the ROIs of each image, and the call computes what the CPU
// backend does.
TEST(CudaBackend, RoiAlignSharedPlanesRefusedValues) {
  RSZ_NEED_CUDA();
  Input in = make_input({2, 80, 20, 24}, DataType::Float32, false, 9420);
  const DeviceInput device_in(in.view());
  std::vector<float> boxes;
  std::vector<std::uint32_t> good;
  for (int k = 0; k < 200; ++k) {
    const auto f = [&](int m) { return static_cast<float>(k % m); };
    boxes.insert(boxes.end(), {1.0f + f(9), 2.0f + f(5), 6.0f + f(13), 9.0f + 0.5f * f(7)});
    good.push_back(static_cast<std::uint32_t>(k * 7 % 3 == 0 ? 1 : 0));
  }
  std::vector<std::uint32_t> bad = good;
  bad[150] = 5;
  bad[170] = 9;
  const std::int64_t r = 200;
  const ConstTensorView host_rois(boxes.data(), DataType::Float32, {r, 4});
  const TensorLayout layout = output_layout({r, 80, 7, 7}, DataType::Float32, false);
  std::vector<unsigned char> cpu(bytes_of(layout));
  roi_align(in.view(), host_rois, ConstTensorView(good.data(), DataType::UInt32, {r}), TensorView(cpu.data(), layout),
            RoiAlignParams{}, {Backend::Cpu, 2});
  const std::string expected = message_of([&] {
    roi_align(in.view(), host_rois, ConstTensorView(bad.data(), DataType::UInt32, {r}), TensorView(cpu.data(), layout),
              RoiAlignParams{}, {Backend::Cpu, 2});
  });
  ASSERT_NE(expected.find("batch_indices[150] = 5 is out of range [0, 2)"), std::string::npos) << expected;
  const DeviceInput rois(host_rois);
  const DeviceInput good_indices(ConstTensorView(good.data(), DataType::UInt32, {r}));
  const DeviceInput bad_indices(ConstTensorView(bad.data(), DataType::UInt32, {r}));
  const std::vector<float> fill(static_cast<std::size_t>(layout.extent()), -7.0f);
  DeviceBuffer out(fill.data(), fill.size() * sizeof(float));
  const TensorView out_view(out.data(), layout, MemorySpace::Device);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ExecOptions options;
  options.stream = stream;
  EXPECT_EQ(message_of([&] { roi_align(device_in.view(), rois.view(), bad_indices.view(), out_view, {}, options); }),
            "no error");
  EXPECT_EQ(message_of([&] { synchronize(options); }), expected);
  const std::vector<unsigned char> untouched = out.download();
  EXPECT_EQ(std::memcmp(untouched.data(), fill.data(), untouched.size()), 0) << "the output was written";
  ExecOptions on_host = options;
  on_host.check_values_on_host = true;
  EXPECT_EQ(message_of([&] { roi_align(device_in.view(), rois.view(), bad_indices.view(), out_view, {}, on_host); }),
            expected);
  EXPECT_EQ(message_of([&] { roi_align(device_in.view(), rois.view(), good_indices.view(), out_view, {}, on_host); }),
            "no error");
  EXPECT_EQ(message_of([&] { synchronize(on_host); }), "no error");
  EXPECT_TRUE(same_bytes(cpu, out.download(), DataType::Float32, "good values checked on the host, shared planes"));
  cudaStreamDestroy(stream);
}

// A call that fails leaves no CUDA error pending: a later call's launch check would report it (after queuing its
// work). An unusable device ordinal, a description of one, and the caller's own failed allocation, each followed
// by a call that must compute.
TEST(CudaBackend, AFailedCallLeavesNoErrorBehind) {
  RSZ_NEED_CUDA();
  Input in = make_input({1, 2, 16, 16}, DataType::Float32, false, 9320);
  const DeviceInput device_in(in.view());
  ResampleParams p;
  p.scales = {1, 1, 0.5f, 0.5f};
  const TensorLayout layout = output_layout({1, 2, 8, 8}, DataType::Float32, false);
  std::vector<unsigned char> cpu(bytes_of(layout));
  resample(in.view(), TensorView(cpu.data(), layout), p, {Backend::Cpu});
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  DeviceBuffer out(bytes_of(layout));
  const auto good_call = [&](const std::string& after) {
    ASSERT_EQ(cudaMemset(out.data(), 0, bytes_of(layout)), cudaSuccess);
    EXPECT_EQ(message_of([&] {
                resample(device_in.view(), TensorView(out.data(), layout, MemorySpace::Device), p, {Backend::Cuda});
              }),
              "no error")
        << "after " << after;
    EXPECT_TRUE(same_bytes(cpu, out.download(), DataType::Float32, "after " + after));
  };
  ExecOptions missing;
  missing.backend = Backend::Cuda;
  missing.device = devices + 3;
  EXPECT_NE(message_of([&] {
              resample(device_in.view(), TensorView(out.data(), layout, MemorySpace::Device), p, missing);
            }).find("device " + std::to_string(devices + 3) + " cannot be used"),
            std::string::npos);
  good_call("a call on a missing device");
  for (const BackendInfo& b : backends(missing)) {
    if (b.backend == Backend::Cuda) {
      EXPECT_EQ(b.note.find("device " + std::to_string(devices + 3) + " cannot be used: "), 0u) << b.note;
    }
  }
  good_call("the backends of a missing device");
  void* huge = nullptr;
  ASSERT_NE(cudaMalloc(&huge, std::size_t{1} << 58), cudaSuccess);
  good_call("the caller's failed cudaMalloc");
}

// roi_align's shared-plane kernel on planes of different sizes from two threads at once, each on its own stream:
// float32 planes of 200 x 272 and 170 x 272 (600 ROIs, enough output for the shared planes), both one plane a block,
// so the same kernel with 229 KB and 197 KB of shared memory, 100 calls each, every result the CPU backend's. (The
// kernel's shared memory limit is the process's: set per call, one thread could lower it before the other's launch.
// That window is a few microseconds; on an H100 the per-call setting passed this test in 3 runs, so it guards the
// calls' independence more than that race.)
TEST(CudaBackend, ConcurrentRoiAlignOnPlanesOfDifferentSizes) {
  RSZ_NEED_CUDA();
  struct Level {
    Dims sizes;
    float scale;
  };
  const Level levels[2] = {{{1, 256, 200, 272}, 1.0f}, {{1, 256, 170, 272}, 0.85f}};
  std::vector<float> boxes;
  for (int k = 0; k < 600; ++k) {
    const float x1 = static_cast<float>(k * 97 % 250) + 0.31f * static_cast<float>(k % 3);
    const float y1 = static_cast<float>(k * 61 % 180) + 0.27f * static_cast<float>(k % 5);
    boxes.insert(boxes.end(), {x1, y1, x1 + 2.0f + static_cast<float>(k * 13 % 40),
                               y1 + 2.0f + static_cast<float>(k * 7 % 30)});
  }
  const std::vector<std::uint32_t> batch(boxes.size() / 4, 0);
  const ConstTensorView rois(boxes.data(), DataType::Float32, {static_cast<std::int64_t>(batch.size()), 4});
  const ConstTensorView indices(batch.data(), DataType::UInt32, {static_cast<std::int64_t>(batch.size())});
  const DeviceInput device_rois(rois), device_indices(indices);
  const auto run_level = [&](const Level& level, int seed) {
    Input in = make_input(level.sizes, DataType::Float32, false, seed);
    const DeviceInput device_in(in.view());
    RoiAlignParams params;
    params.spatial_scale_x = params.spatial_scale_y = level.scale;
    const TensorLayout layout(DataType::Float32, {static_cast<std::int64_t>(batch.size()), level.sizes[1], 7, 7});
    std::vector<unsigned char> cpu(bytes_of(layout));
    roi_align(in.view(), rois, indices, TensorView(cpu.data(), layout), params, {Backend::Cpu, 2});
    DeviceBuffer out(bytes_of(layout));
    cudaStream_t stream = nullptr;
    EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    ExecOptions options;
    options.backend = Backend::Cuda;
    options.stream = stream;
    std::string failures;
    for (int i = 0; i < 100; ++i) {
      const std::string message = message_of([&] {
        roi_align(device_in.view(), device_rois.view(), device_indices.view(),
                  TensorView(out.data(), layout, MemorySpace::Device), params, options);
        synchronize(options);
      });
      if (message != "no error") failures += message + "\n";
    }
    cudaStreamDestroy(stream);
    const bool same = same_bytes(cpu, out.download(), DataType::Float32,
                                 "roi_align on " + dims_to_string(level.sizes) + " beside another thread");
    return failures.empty() && same ? std::string("ok") : failures + (same ? "" : "results differ");
  };
  std::future<std::string> large = std::async(std::launch::async, [&] { return run_level(levels[0], 9330); });
  std::future<std::string> small = std::async(std::launch::async, [&] { return run_level(levels[1], 9331); });
  EXPECT_EQ(large.get(), "ok");
  EXPECT_EQ(small.get(), "ok");
}

// Staged calls write only their outputs' elements: two threads resample into channels 0 and 1 of one interleaved
// 3-channel host image at once, again and again; both channels must hold their results and channel 2 its fill
// afterwards (a call that copied its whole extent back would put back the other thread's channel as it was).
TEST(CudaBackend, StagedOutputsWithGapsLeaveTheGapsAlone) {
  RSZ_NEED_CUDA();
  const std::int64_t h = 600, w = 700;
  Input a = make_input({1, 1, 400, 500}, DataType::Float32, false, 9340);
  Input b = make_input({1, 1, 300, 350}, DataType::Float32, false, 9341);
  ResampleParams p;
  p.scales = {1, 1, static_cast<float>(h) / 400.0f, static_cast<float>(w) / 500.0f};
  ResampleParams q;
  q.scales = {1, 1, static_cast<float>(h) / 300.0f, static_cast<float>(w) / 350.0f};
  const TensorLayout plane(DataType::Float32, {1, 1, h, w});
  std::vector<float> expect_a(static_cast<std::size_t>(h * w)), expect_b(expect_a.size());
  resample(a.view(), TensorView(expect_a.data(), plane), p, {Backend::Cpu, 2});
  resample(b.view(), TensorView(expect_b.data(), plane), q, {Backend::Cpu, 2});
  const TensorLayout channel(DataType::Float32, {1, 1, h, w}, {h * w * 3, 1, w * 3, 3});
  std::vector<float> image(static_cast<std::size_t>(h * w * 3));
  for (int round = 0; round < 25; ++round) {
    std::fill(image.begin(), image.end(), -3.25f);
    std::future<std::string> first = std::async(std::launch::async, [&] {
      return message_of([&] { resample(a.view(), TensorView(image.data(), channel), p, {Backend::Cuda}); });
    });
    std::future<std::string> second = std::async(std::launch::async, [&] {
      return message_of([&] { resample(b.view(), TensorView(image.data() + 1, channel), q, {Backend::Cuda}); });
    });
    ASSERT_EQ(first.get(), "no error");
    ASSERT_EQ(second.get(), "no error");
    std::size_t wrong[3] = {0, 0, 0};
    for (std::size_t i = 0; i < expect_a.size(); ++i) {
      wrong[0] += std::memcmp(&image[3 * i], &expect_a[i], sizeof(float)) != 0;
      wrong[1] += std::memcmp(&image[3 * i + 1], &expect_b[i], sizeof(float)) != 0;
      wrong[2] += image[3 * i + 2] != -3.25f;
    }
    ASSERT_EQ(wrong[0] + wrong[1] + wrong[2], 0u)
        << "round " << round << ": channel 0 " << wrong[0] << ", channel 1 " << wrong[1] << ", channel 2 " << wrong[2]
        << " elements wrong";
  }
}

// A tensor in another device's memory is refused up front (a kernel reading it would fault, an error that ends every
// later CUDA call of the process). Needs two devices.
TEST(CudaBackend, RefusesAnotherDevicesMemory) {
  RSZ_NEED_CUDA();
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices < 2) GTEST_SKIP() << "needs two CUDA devices, this machine has " << devices;
  Input in = make_input({1, 2, 16, 16}, DataType::Float32, false, 9350);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  const DeviceInput on_one(in.view());
  DeviceBuffer out_on_one(2 * 8 * 8 * sizeof(float));
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ResampleParams p;
  p.scales = {1, 1, 0.5f, 0.5f};
  const TensorLayout layout(DataType::Float32, {1, 2, 8, 8});
  EXPECT_EQ(message_of([&] {
              resample(on_one.view(), TensorView(out_on_one.data(), layout, MemorySpace::Device), p, {Backend::Cuda});
            }),
            "resample: input is in device 1's memory but the call runs on device 0; set ExecOptions::device to 1");
  ExecOptions one;
  one.backend = Backend::Cuda;
  one.device = 1;
  std::vector<unsigned char> cpu(bytes_of(layout));
  resample(in.view(), TensorView(cpu.data(), layout), p, {Backend::Cpu});
  EXPECT_EQ(message_of([&] {
              resample(on_one.view(), TensorView(out_on_one.data(), layout, MemorySpace::Device), p, one);
              synchronize(one);
            }),
            "no error");
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  EXPECT_TRUE(same_bytes(cpu, out_on_one.download(), DataType::Float32, "on device 1"));
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
}

}  // namespace
}  // namespace rsz
