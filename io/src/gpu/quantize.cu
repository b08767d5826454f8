// rsz/io/gpu_jpeg.h's quantize8: float32 results to 8-bit interleaved samples on the GPU, with the bits of
// io/src/image_tensor.cpp's quantize_sample (so an output's bytes do not depend on where its samples were quantized).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda_util.h"
#include "rsz/error.h"
#include "rsz/io/gpu_jpeg.h"

namespace rsz::io::gpu {

namespace {

// quantize_sample(v, 255.0): v * 255 in double is exact (a float's 24 bits times 8), so adding 0.5 is exact too and
// truncating the sum rounds halves up; NaN and v <= 0 give 0, a product at or above 255 gives 255. The intrinsics
// keep the compiler from fusing the two steps (the product is exact, so a fused one would round the same, but the
// CPU's steps are spelled out here).
__device__ __forceinline__ std::uint8_t quantize(float v) {
  if (!(v > 0.0f)) return 0;
  const double scaled = __dmul_rn(static_cast<double>(v), 255.0);
  if (scaled >= 255.0) return 255;
  return static_cast<std::uint8_t>(__double2uint_rz(__dadd_rn(scaled, 0.5)));
}

// One thread a sample of an output row (x * c + k), rows of every image in turn (blockIdx.y strides over them).
__global__ void quantize8_kernel(const float* src, std::int64_t sn, std::int64_t sc, std::int64_t sy, std::int64_t sx,
                                 std::int64_t h, std::int64_t w, int c, std::int64_t rows, std::uint8_t* dst) {
  const std::int64_t row_samples = w * c;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= row_samples) return;
  const std::int64_t x = i / c;
  const std::int64_t k = i - x * c;
  for (std::int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const std::int64_t n = row / h;
    const std::int64_t y = row - n * h;
    dst[row * row_samples + i] = quantize(src[n * sn + k * sc + y * sy + x * sx]);
  }
}

}  // namespace

void quantize8(const ConstTensorView& src, std::uint8_t* dst, void* stream) {
  constexpr const char* kWho = "GPU quantize";
  if (src.dtype() != DataType::Float32 || src.rank() != 4 || src.size(1) < 1 || src.size(1) > 4 ||
      src.memory() != MemorySpace::Device) {
    throw Error(ErrorCode::InvalidArgument, std::string(kWho) + ": a float32 N x C x H x W tensor in device memory "
                                                                "with C in 1..4 is allowed; got sizes " +
                                                dims_to_string(src.sizes()));
  }
  const std::int64_t n = src.size(0);
  const int c = static_cast<int>(src.size(1));
  const std::int64_t h = src.size(2);
  const std::int64_t w = src.size(3);
  const std::int64_t rows = n * h;
  if (rows == 0 || w == 0) return;
  constexpr int kThreads = 256;
  const std::int64_t blocks_x = (w * c + kThreads - 1) / kThreads;
  if (blocks_x > 0x7fffffff) throw Error(ErrorCode::InvalidArgument, std::string(kWho) + ": rows too long");
  const dim3 grid(static_cast<unsigned>(blocks_x), static_cast<unsigned>(std::min<std::int64_t>(rows, 65535)));
  quantize8_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(src.data()), src.stride(0), src.stride(1), src.stride(2), src.stride(3), h, w, c, rows,
      dst);
  detail::check_cuda(cudaGetLastError(), kWho, "the kernel's launch");
}

}  // namespace rsz::io::gpu
