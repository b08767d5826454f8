// UPSAMPLE_2D on the CPU. Nearest: each input row is expanded once (every value repeated `width` times, as raw
// bits; a unorm row is widened first, and the float16 output narrowed on the store) and written to its `height`
// output rows. Linear: RESAMPLE1 linear with scales {1, 1, sh, sw} on each
// batch of the (N, C, D) planes, which is its definition.
#include <cstring>
#include <type_traits>
#include <vector>

#include "cpu/cpu.h"
#include "cpu/parallel.h"
#include "cpu/rows.h"
#include "cpu/simd.h"

namespace rsz::cpu {
namespace {

// T: the element copied as raw bits (float or float16 bits) where input and output types agree; for a unorm input,
// float: each row is loaded (widened exactly, as load_element does) before it is expanded, and stored by store_row.
template <typename T>
void nearest(const SimdKernels& vec, const ConstTensorView& input, const TensorView& output, const ScaleSize& scale,
             int threads) {
  const int rank = input.rank();
  const int h_axis = rank - 2;
  const std::int64_t in_h = input.size(h_axis);
  const std::int64_t in_w = input.size(rank - 1);
  const std::int64_t out_w = output.size(rank - 1);
  const std::int64_t sh = scale.height;
  const std::int64_t sw = scale.width;
  std::int64_t planes = 1;
  for (int a = 0; a < h_axis; ++a) planes *= input.size(a);
  const T* in = static_cast<const T*>(input.data());
  T* out = static_cast<T*>(output.data());
  const std::int64_t in_sw = input.stride(rank - 1);
  const std::int64_t out_sw = output.stride(rank - 1);
  const std::int64_t units = planes * in_h;
  const std::int64_t grain = std::max<std::int64_t>(1, std::min<std::int64_t>(units / (threads * 8LL), 64));
  const bool stream = stream_output(output);
  const bool widen = input.dtype() != output.dtype();  // a unorm input
  parallel_for(units, grain, threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> row(static_cast<std::size_t>(out_w));
    std::vector<float> loaded(widen ? static_cast<std::size_t>(in_w) : 0);
    for (std::int64_t unit = begin; unit < end; ++unit) {
      const std::int64_t h = unit % in_h;
      std::int64_t plane = unit / in_h;
      std::int64_t in_off = h * input.stride(h_axis);
      std::int64_t out_off = 0;
      for (int a = h_axis - 1; a >= 0; --a) {
        const std::int64_t i = plane % input.size(a);
        plane /= input.size(a);
        in_off += i * input.stride(a);
        out_off += i * output.stride(a);
      }
      if constexpr (std::is_same_v<T, float>) {
        if (widen) {
          load_row(vec, input.data(), input.dtype(), in_off, in_sw, in_w, loaded.data());
          repeat_row(loaded.data(), in_w, 1, sw, row.data());
          for (std::int64_t r = 0; r < sh; ++r) {
            store_row(vec, output.data(), output.dtype(), out_off + (h * sh + r) * output.stride(h_axis), out_sw, out_w,
                      row.data(), stream);
          }
          continue;
        }
      }
      repeat_row(in + in_off, in_w, in_sw, sw, row.data());
      for (std::int64_t r = 0; r < sh; ++r) {
        T* dst = out + out_off + (h * sh + r) * output.stride(h_axis);
        if (out_sw == 1) {
          copy_bytes(dst, row.data(), static_cast<std::size_t>(out_w) * sizeof(T), stream);
        } else {
          for (std::int64_t x = 0; x < out_w; ++x) dst[x * out_sw] = row[static_cast<std::size_t>(x)];
        }
      }
    }
    if (stream) stream_fence();
  });
}

}  // namespace

void upsample2d_cpu(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& params,
                    int threads) {
  if (params.interpolation == InterpolationMode::Nearest) {
    const SimdKernels& vec = simd();
    if (input.dtype() != DataType::Float16) {  // float32, or unorm widened to float
      nearest<float>(vec, input, output, params.scale_size, threads);
    } else {
      nearest<std::uint16_t>(vec, input, output, params.scale_size, threads);
    }
    return;
  }
  ResampleParams p;
  p.interpolation = InterpolationMode::Linear;
  p.scales = {1.0f, 1.0f, static_cast<float>(params.scale_size.height), static_cast<float>(params.scale_size.width)};
  if (input.rank() == 4) {
    resample_cpu(input, output, p, threads);
    return;
  }
  // Rank 5: each batch n is a rank-4 {C, D, H, W} resample with unit scales on C and D (whole indices, no blend).
  const auto elem = static_cast<std::int64_t>(element_size(input.dtype()));
  const auto out_elem = static_cast<std::int64_t>(element_size(output.dtype()));
  for (std::int64_t n = 0; n < input.size(0); ++n) {
    const ConstTensorView in(static_cast<const std::byte*>(input.data()) + n * input.stride(0) * elem, input.dtype(),
                             {input.size(1), input.size(2), input.size(3), input.size(4)},
                             {input.stride(1), input.stride(2), input.stride(3), input.stride(4)});
    const TensorView out(static_cast<std::byte*>(output.data()) + n * output.stride(0) * out_elem, output.dtype(),
                         {output.size(1), output.size(2), output.size(3), output.size(4)},
                         {output.stride(1), output.stride(2), output.stride(3), output.stride(4)});
    resample_cpu(in, out, p, threads);
  }
}

}  // namespace rsz::cpu
