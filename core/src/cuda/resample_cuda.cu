// RESAMPLE1/2/3 and UPSAMPLE_2D on CUDA, bit-identical to the reference twins.
//
// The usual case goes through the plane kernel: every axis but H and W selects its own index (resample's N and C
// with scale 1 and offsets that cancel, upsample's N, C and D always), and H and W are 2-tap lerps or selections
// (nothing antialiased). Each block computes a tile of 128 x 8k outputs of some planes: every thread computes the
// taps of its 4 columns once (one division each) and reuses them over its rows and planes, and each row's taps
// once for its 4 columns; a warp writes 32 neighbouring elements at a time. Everything else (blended N or C,
// antialiased H or W) runs the generic kernel, one thread per output element evaluating the reference's combine,
// axis by axis.
#include "common.cuh"

namespace rsz::detail::cuda {
namespace {

// ---- the plane kernel ----

enum class AxisRule : int {
  Nearest,    // resample nearest: nearest_index of the source coordinate, with the rounding direction
  Linear,     // resample / upsample linear: linear_taps of the source coordinate
  Replicate,  // upsample nearest: o / factor
};

// How output index o of one axis (H or W) reads the input.
struct Axis {
  AxisRule rule;
  float scale;
  float ip;
  float op;
  NearestRounding rounding;
  std::int64_t factor;
  std::int64_t n;       // input length
  std::int64_t stride;  // input stride
};

// The element offsets of the two taps along one axis and the weight of the second (a selection: a == b, w == 0).
template <typename Index>
struct Tap {
  Index a;
  Index b;
  float w;
};

template <typename Index>
__device__ __forceinline__ Tap<Index> axis_tap(const Axis& ax, std::int64_t o) {
  if (ax.rule == AxisRule::Replicate) {
    const auto i = static_cast<Index>((o / ax.factor) * ax.stride);
    return {i, i, 0.0f};
  }
  const float x = resample_source_coord(o, ax.scale, ax.ip, ax.op);
  if (ax.rule == AxisRule::Nearest) {
    const auto i = static_cast<Index>(nearest_index(x, ax.n, ax.rounding) * ax.stride);
    return {i, i, 0.0f};
  }
  const LinearTaps t = linear_taps(x, ax.n);
  return {static_cast<Index>(t.i0 * ax.stride), static_cast<Index>(t.i1 * ax.stride), t.w};
}

constexpr int kBlockRows = 8;      // blockDim = (32, 8)
constexpr int kColsPerThread = 4;  // a tile is 128 columns wide
constexpr int kMaxRowsPerThread = 8;
constexpr int kTileCols = kWarp * kColsPerThread;

// The planes: every axis but the last two (at most 3), each selecting its own index.
struct Planes {
  int outer;
  std::int64_t size[3];
  std::int64_t in_stride[3];
  std::int64_t out_stride[3];
  std::int64_t count;
  std::int64_t out_h;
  std::int64_t out_w;
  std::int64_t out_stride_h;
  std::int64_t out_stride_w;
  int rows_per_thread;  // 1..kMaxRowsPerThread: a tile is 8 * rows_per_thread rows high, the rows one at a time
  Axis h;
  Axis w;
};

// Four blocks of 256 threads a multiprocessor at least (at most 64 registers a thread): the loads of a row's 4
// columns are in flight together, and enough warps hide the memory latency. (8 columns a thread was measured
// slower: more registers, fewer resident warps.)
template <typename In, typename Out, bool Nearest, typename Index>
__global__ void __launch_bounds__(kWarp* kBlockRows, 4)
    plane_kernel(const In* __restrict__ in, Out* __restrict__ out, Planes g) {
  const std::int64_t tile_rows = static_cast<std::int64_t>(kBlockRows) * g.rows_per_thread;
  for (std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * kTileCols; x0 < g.out_w;
       x0 += static_cast<std::int64_t>(gridDim.x) * kTileCols) {
    Tap<Index> tx[kColsPerThread];
    Index out_x[kColsPerThread];
    bool col_ok[kColsPerThread];
#pragma unroll
    for (int k = 0; k < kColsPerThread; ++k) {
      const std::int64_t ox = x0 + threadIdx.x + kWarp * k;
      col_ok[k] = ox < g.out_w;
      tx[k] = col_ok[k] ? axis_tap<Index>(g.w, ox) : Tap<Index>{0, 0, 0.0f};
      out_x[k] = static_cast<Index>(col_ok[k] ? ox * g.out_stride_w : 0);
    }
    for (std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * tile_rows; y0 < g.out_h;
         y0 += static_cast<std::int64_t>(gridDim.y) * tile_rows) {
      for (std::int64_t plane = blockIdx.z; plane < g.count; plane += gridDim.z) {
        // Index arithmetic: every plane index is an element count of the output, so it fits Index too.
        Index in_base = 0;
        Index out_base = 0;
        auto rest = static_cast<Index>(plane);
#pragma unroll
        for (int a = 2; a >= 0; --a) {
          if (a >= g.outer) continue;
          const auto size = static_cast<Index>(g.size[a]);
          const Index i = rest % size;
          rest /= size;
          in_base += i * static_cast<Index>(g.in_stride[a]);
          out_base += i * static_cast<Index>(g.out_stride[a]);
        }
#pragma unroll 1
        for (int j = 0; j < g.rows_per_thread; ++j) {
          const std::int64_t oy = y0 + threadIdx.y + kBlockRows * j;
          if (oy >= g.out_h) break;
          const Tap<Index> ty = axis_tap<Index>(g.h, oy);
          const In* top = in + (in_base + ty.a);
          const In* bottom = in + (in_base + ty.b);
          Out* row = out + (out_base + static_cast<Index>(oy * g.out_stride_h));
#pragma unroll
          for (int k = 0; k < kColsPerThread; ++k) {
            if (!col_ok[k]) continue;
            if constexpr (Nearest) {
              copy_selected(top + tx[k].a, row + out_x[k]);
            } else {
              // reference/plane.h's read_bilinear: along x, then along y; lerp takes the first tap alone where the
              // weight is 0, so reading the second tap too changes nothing.
              const float t = lerp(widen(top[tx[k].a]), widen(top[tx[k].b]), tx[k].w);
              const float b = lerp(widen(bottom[tx[k].a]), widen(bottom[tx[k].b]), tx[k].w);
              store_computed(row + out_x[k], lerp(t, b, ty.w));
            }
          }
        }
      }
    }
  }
}

template <typename In, typename Out, bool Nearest>
void launch_planes(const ConstTensorView& input, const TensorView& output, const Planes& g, cudaStream_t stream) {
  const auto* in = static_cast<const In*>(input.data());
  auto* out = static_cast<Out*>(output.data());
  const std::int64_t tiles_x = (g.out_w + kTileCols - 1) / kTileCols;
  const std::int64_t tile_h = static_cast<std::int64_t>(kBlockRows) * g.rows_per_thread;
  const std::int64_t tiles_y = (g.out_h + tile_h - 1) / tile_h;
  const dim3 grid(static_cast<unsigned>(tiles_x < 65535 * 1024 ? tiles_x : 65535 * 1024),
                  static_cast<unsigned>(tiles_y < 65535 ? tiles_y : 65535),
                  static_cast<unsigned>(g.count < 65535 ? g.count : 65535));
  const dim3 block(kWarp, kBlockRows);
  if (fits_32_bits(input.layout()) && fits_32_bits(output.layout())) {
    plane_kernel<In, Out, Nearest, std::uint32_t><<<grid, block, 0, stream>>>(in, out, g);
  } else {
    plane_kernel<In, Out, Nearest, std::int64_t><<<grid, block, 0, stream>>>(in, out, g);
  }
}

// Runs the plane kernel over `output`: its last two axes are H and W (rules h and w), every other axis is a plane
// axis (at most 3).
void run_planes(const ConstTensorView& input, const TensorView& output, const Axis& h, const Axis& w, bool nearest,
                const ExecOptions& options) {
  const int rank = output.rank();
  Planes g{};
  g.outer = rank - 2;
  g.count = 1;
  for (int a = 0; a < g.outer; ++a) {
    g.size[a] = output.size(a);
    g.in_stride[a] = input.stride(a);
    g.out_stride[a] = output.stride(a);
    g.count *= output.size(a);
  }
  g.out_h = output.size(rank - 2);
  g.out_w = output.size(rank - 1);
  g.out_stride_h = output.stride(rank - 2);
  g.out_stride_w = output.stride(rank - 1);
  g.h = h;
  g.w = w;
  // 8 rows per thread where that still gives every multiprocessor a few blocks, fewer on small outputs.
  const std::int64_t tiles_x = (g.out_w + kTileCols - 1) / kTileCols;
  const std::int64_t wanted = 8 * static_cast<std::int64_t>(device_limits(options.device).multiprocessors);
  g.rows_per_thread = kMaxRowsPerThread;
  while (g.rows_per_thread > 1 &&
         tiles_x * g.count * ((g.out_h + kBlockRows * g.rows_per_thread - 1) / (kBlockRows * g.rows_per_thread)) <
             wanted) {
    g.rows_per_thread /= 2;
  }
  dispatch_types(input.dtype(), output.dtype(), [&](auto* in_tag, auto* out_tag) {
    using In = std::remove_pointer_t<decltype(in_tag)>;
    using Out = std::remove_pointer_t<decltype(out_tag)>;
    if (nearest) {
      launch_planes<In, Out, true>(input, output, g, stream_of(options));
    } else {
      launch_planes<In, Out, false>(input, output, g, stream_of(options));
    }
  });
}

// ---- the generic resample kernel ----

struct ResampleArgs {
  DeviceView in;
  DeviceView out;
  float scale[4];
  float ip[4];
  float op[4];
  bool nearest;
  NearestRounding rounding;
  bool antialiased;
};

// The reference's combine_linear: axis A's filter over the values of axes A+1.. (W innermost), each a 2-tap lerp or,
// on an antialiased axis, the normalized weighted sum in index order.
template <int A>
__device__ float combine(const ResampleArgs& a, const std::int64_t* o, std::int64_t offset) {
  if constexpr (A == 4) {
    return load(a.in, offset);
  } else {
    const std::int64_t n = a.in.size[A];
    const std::int64_t stride = a.in.stride[A];
    const float x = resample_source_coord(o[A], a.scale[A], a.ip[A], a.op[A]);
    if (a.antialiased && a.scale[A] < 1.0f) {
      const AntialiasRange r = antialias_range(x, n, a.scale[A]);
      std::int64_t first = -1;
      std::int64_t last = r.hi;
      float total = 0.0f;
      for (std::int64_t i = r.lo; i <= r.hi; ++i) {
        const float w = antialias_weight(i, r.xc, a.scale[A]);
        if (!(w > 0.0f)) {
          if (first >= 0) {
            last = i - 1;
            break;
          }
          continue;
        }
        if (first < 0) first = i;
        total = total + w;
      }
      if (first < 0) return 1.0f * combine<A + 1>(a, o, offset + static_cast<std::int64_t>(floorf(r.xc)) * stride);
      float acc = 0.0f;
      for (std::int64_t i = first; i <= last; ++i) {
        const float w = antialias_weight(i, r.xc, a.scale[A]) / total;
        const float v = combine<A + 1>(a, o, offset + i * stride);
        acc = i == first ? w * v : weighted_tap(acc, w, v);
      }
      return acc;
    } else {
      const LinearTaps t = linear_taps(x, n);
      const float va = combine<A + 1>(a, o, offset + t.i0 * stride);
      if (t.w == 0.0f) return va;
      return lerp(va, combine<A + 1>(a, o, offset + t.i1 * stride), t.w);
    }
  }
}

__device__ void resample_element(const ResampleArgs& a, const std::int64_t* o) {
  std::int64_t out_offset = 0;
#pragma unroll
  for (int axis = 0; axis < 4; ++axis) out_offset += o[axis] * a.out.stride[axis];
  if (a.nearest) {
    std::int64_t in_offset = 0;
#pragma unroll
    for (int axis = 0; axis < 4; ++axis) {
      const float x = resample_source_coord(o[axis], a.scale[axis], a.ip[axis], a.op[axis]);
      in_offset += nearest_index(x, a.in.size[axis], a.rounding) * a.in.stride[axis];
    }
    copy_element(a.in, in_offset, a.out, out_offset);
  } else {
    store_computed(a.out, out_offset, combine<0>(a, o, 0));
  }
}

// Rows (n, c, h) over blockIdx.y, the W axis over threads: the integer divisions happen once per row, and
// neighbouring threads read and write neighbouring elements.
__global__ void resample_kernel(ResampleArgs a, std::int64_t rows) {
  const std::int64_t width = a.out.size[3];
  for (std::int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const std::int64_t h = row % a.out.size[2];
    const std::int64_t c = (row / a.out.size[2]) % a.out.size[1];
    const std::int64_t n = row / (a.out.size[2] * a.out.size[1]);
    for (std::int64_t w = first_thread(); w < width; w += thread_step()) {
      const std::int64_t o[4] = {n, c, h, w};
      resample_element(a, o);
    }
  }
}

// Blocks of kRowBlock threads along W, as many as cover a row (at most 64), and up to 65535 rows.
constexpr int kRowBlock = 128;
dim3 row_grid(std::int64_t rows, std::int64_t width) {
  const std::int64_t x = (width + kRowBlock - 1) / kRowBlock;
  return dim3(static_cast<unsigned>(x < 64 ? x : 64), static_cast<unsigned>(rows < 65535 ? rows : 65535));
}

// Whether every output index o of `axis` reads input index o alone (nearest: the selected index is o; linear: one
// tap, i0 = o, weight 0; an antialiased axis with scale < 1 never counts), computed with the same functions.
bool selects_own_index(const ConstTensorView& input, const TensorView& output, const ResampleParams& p, int axis) {
  const auto i = static_cast<std::size_t>(axis);
  if (p.antialiased && p.scales[i] < 1.0f) return false;
  for (std::int64_t o = 0; o < output.size(axis); ++o) {
    const float x = resample_source_coord(o, p.scales[i], p.input_pixel_offsets[i], p.output_pixel_offsets[i]);
    if (p.interpolation == InterpolationMode::Nearest) {
      if (nearest_index(x, input.size(axis), p.rounding_direction) != o) return false;
    } else {
      const LinearTaps t = linear_taps(x, input.size(axis));
      if (t.w != 0.0f || t.i0 != o) return false;
    }
  }
  return true;
}

Axis resample_axis(const ConstTensorView& input, const ResampleParams& p, int axis) {
  const auto i = static_cast<std::size_t>(axis);
  return {p.interpolation == InterpolationMode::Nearest ? AxisRule::Nearest : AxisRule::Linear,
          p.scales[i],
          p.input_pixel_offsets[i],
          p.output_pixel_offsets[i],
          p.rounding_direction,
          1,
          input.size(axis),
          input.stride(axis)};
}

}  // namespace

void cuda_resample(const ConstTensorView& input, const TensorView& output, const ResampleParams& p,
                   const ExecOptions& options) {
  const DeviceScope scope("resample", options.device);
  check_device_pointer("resample", "input", input);
  check_device_pointer("resample", "output", output);
  const bool nearest = p.interpolation == InterpolationMode::Nearest;
  if (selects_own_index(input, output, p, 0) && selects_own_index(input, output, p, 1) &&
      !(p.antialiased && !nearest && (p.scales[2] < 1.0f || p.scales[3] < 1.0f))) {
    run_planes(input, output, resample_axis(input, p, 2), resample_axis(input, p, 3), nearest, options);
  } else {
    ResampleArgs a{};
    a.in = device_view(input);
    a.out = device_view(output);
    for (int i = 0; i < 4; ++i) {
      a.scale[i] = p.scales[static_cast<std::size_t>(i)];
      a.ip[i] = p.input_pixel_offsets[static_cast<std::size_t>(i)];
      a.op[i] = p.output_pixel_offsets[static_cast<std::size_t>(i)];
    }
    a.nearest = nearest;
    a.rounding = p.rounding_direction;
    a.antialiased = p.antialiased;
    const std::int64_t rows = output.size(0) * output.size(1) * output.size(2);
    resample_kernel<<<row_grid(rows, output.size(3)), kRowBlock, 0, stream_of(options)>>>(a, rows);
  }
  launch_check("resample");
}

// UPSAMPLE_2D: every axis but H and W is a plane axis; nearest replicates (o / factor), linear is RESAMPLE1 linear
// with the factor as the scale and pixel-centre offsets (SEMANTICS.md §2).
void cuda_upsample2d(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& p,
                     const ExecOptions& options) {
  const DeviceScope scope("upsample2d", options.device);
  check_device_pointer("upsample2d", "input", input);
  check_device_pointer("upsample2d", "output", output);
  const bool nearest = p.interpolation == InterpolationMode::Nearest;
  const int rank = input.rank();
  const auto axis = [&](int a, std::int64_t factor) {
    return Axis{nearest ? AxisRule::Replicate : AxisRule::Linear,
                static_cast<float>(factor),
                0.5f,
                -0.5f,
                NearestRounding::RoundPreferCeil,
                factor,
                input.size(a),
                input.stride(a)};
  };
  run_planes(input, output, axis(rank - 2, p.scale_size.height), axis(rank - 1, p.scale_size.width), nearest,
             options);
  launch_check("upsample2d");
}

}  // namespace rsz::detail::cuda
