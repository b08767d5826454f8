// RESAMPLE1/2/3 and UPSAMPLE_2D on CUDA, bit-identical to the reference twins.
//
// The usual case goes through the plane kernel: every axis but H and W selects its own index (resample's N and C
// with scale 1 and offsets that cancel, upsample's N, C and D always), and H and W are 2-tap lerps or selections
// (nothing antialiased). Each block computes a tile of 128 x 8k outputs of some planes: every thread computes the
// taps of its 4 columns once (one division each) and reuses them over its rows and planes, and each row's taps
// once for its 4 columns; a thread's rows are consecutive, and each input row it needs is read (and lerped along x)
// once for all the output rows that share it; a warp writes 32 neighbouring elements at a time. Everything else (blended N or C,
// antialiased H or W) runs the generic kernel, one thread per output element evaluating the reference's combine,
// axis by axis.
#include <algorithm>

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
__host__ __device__ __forceinline__ Tap<Index> axis_tap(const Axis& ax, std::int64_t o) {
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
constexpr int kMaxTileRows = kBlockRows * kMaxRowsPerThread;

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
  int rows_per_thread;  // 1..kMaxRowsPerThread: a tile is 8 * rows_per_thread rows high, a thread's rows consecutive
  Axis h;
  Axis w;
};

// One input row's part of a thread's 4 columns, as the output rows read it: the horizontal lerps (linear) or the
// selected elements (nearest), and the row's element offset (kNoRow: none yet).
template <typename In, typename Index, bool Nearest>
struct RowValues {
  using Value = std::conditional_t<Nearest, In, float>;
  Index row;
  Value v[kColsPerThread];
};

template <typename Index>
constexpr Index kNoRow = static_cast<Index>(-1);

template <typename In, typename Index, bool Nearest>
__device__ __forceinline__ void read_row(RowValues<In, Index, Nearest>& r, const In* __restrict__ in, Index row,
                                         const Tap<Index>* tx, const bool* col_ok) {
  r.row = row;
  const In* src = in + row;
#pragma unroll
  for (int k = 0; k < kColsPerThread; ++k) {
    if constexpr (Nearest) {
      r.v[k] = col_ok[k] ? src[tx[k].a] : In{};
    } else {
      // reference/plane.h's read_bilinear, along x first; lerp takes the first tap alone where the weight is 0, so
      // reading the second tap too changes nothing.
      r.v[k] = col_ok[k] ? lerp(widen(src[tx[k].a]), widen(src[tx[k].b]), tx[k].w) : 0.0f;
    }
  }
}

// Makes `first` hold input row `a` (and, where b is wanted, `second` hold row b), reading only the rows neither holds
// yet: consecutive output rows of an upscale share their input rows, so most rows are read once for several.
template <typename In, typename Index, bool Nearest>
__device__ __forceinline__ void hold_rows(RowValues<In, Index, Nearest>& first, RowValues<In, Index, Nearest>& second,
                                          const In* __restrict__ in, Index a, Index b, bool want_b,
                                          const Tap<Index>* tx, const bool* col_ok) {
  if (first.row != a) {
    if (second.row == a) {
      first = second;
    } else {
      read_row(first, in, a, tx, col_ok);
    }
  }
  if (want_b && second.row != b) {
    if (b == a) {
      second = first;
    } else {
      read_row(second, in, b, tx, col_ok);
    }
  }
}

// The stored bits of an output element: a computed value (NaN canonical, as store_computed) or a selection.
template <typename Out>
using Bits = std::conditional_t<sizeof(Out) == 4, std::uint32_t, std::uint16_t>;

template <typename Out>
__device__ __forceinline__ Bits<Out> computed_bits(float value) {
  Out o;
  store_computed(&o, value);
  return *reinterpret_cast<const Bits<Out>*>(&o);
}

template <typename Out, typename In>
__device__ __forceinline__ Bits<Out> selected_bits(In value) {
  Out o;
  store_selected(&o, value);
  return *reinterpret_cast<const Bits<Out>*>(&o);
}

// Four neighbouring output elements in one store (16 bytes float32, 8 bytes float16): `dst` is aligned to it.
__device__ __forceinline__ void store_four(float* dst, const std::uint32_t* b) {
  *reinterpret_cast<uint4*>(dst) = make_uint4(b[0], b[1], b[2], b[3]);
}
__device__ __forceinline__ void store_four(__half* dst, const std::uint16_t* b) {
  *reinterpret_cast<uint2*>(dst) = make_uint2(b[0] | static_cast<std::uint32_t>(b[1]) << 16,
                                              b[2] | static_cast<std::uint32_t>(b[3]) << 16);
}

// The offsets of plane `plane` (its outer indices, flattened) in the input and the output. Index arithmetic: every
// plane index is an element count of the output, so it fits Index too.
template <typename Index>
struct PlaneOffsets {
  Index in;
  Index out;
};

template <typename Index>
__device__ __forceinline__ PlaneOffsets<Index> plane_offsets(const Planes& g, std::int64_t plane) {
  PlaneOffsets<Index> o{0, 0};
  auto rest = static_cast<Index>(plane);
#pragma unroll
  for (int a = 2; a >= 0; --a) {
    if (a >= g.outer) continue;
    const auto size = static_cast<Index>(g.size[a]);
    const Index i = rest % size;
    rest /= size;
    o.in += i * static_cast<Index>(g.in_stride[a]);
    o.out += i * static_cast<Index>(g.out_stride[a]);
  }
  return o;
}

// Each block computes tiles of 128 columns x 8 * rows_per_thread rows, for the planes blockIdx.z, + gridDim.z, ...:
// its row taps go to shared memory once per tile, each thread's 4 column taps are computed once and serve every row
// and plane. A thread's rows are consecutive (a band of rows_per_thread), so the input rows neighbouring output rows
// share (an upscale's) are read, and lerped along x, once. Packed (output W packed, rows and planes aligned to 4
// elements): a thread's 4 columns are neighbours, stored at once, and in the last tile of a row, narrower than 128,
// the threads are spread over its columns and all bands (so its warps are full rather than mostly idle); otherwise a
// thread's columns are 32 apart, a warp stores 32 neighbouring elements at a time, and warp y takes band y. Four
// blocks a multiprocessor at least (at most 64 registers a thread).
template <typename In, typename Out, bool Nearest, bool Packed, typename Index>
__global__ void __launch_bounds__(kWarp* kBlockRows, 4)
    plane_kernel(const In* __restrict__ in, Out* __restrict__ out, Planes g) {
  __shared__ Tap<Index> row_taps[kMaxTileRows];
  const int tile_rows = kBlockRows * g.rows_per_thread;
  const int t = static_cast<int>(threadIdx.y * kWarp + threadIdx.x);
  for (std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * tile_rows; y0 < g.out_h;
       y0 += static_cast<std::int64_t>(gridDim.y) * tile_rows) {
    if (t < tile_rows && y0 + t < g.out_h) row_taps[t] = axis_tap<Index>(g.h, y0 + t);
    __syncthreads();
    for (std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * kTileCols; x0 < g.out_w;
         x0 += static_cast<std::int64_t>(gridDim.x) * kTileCols) {
      // This thread's group of 4 columns in the tile, and its band of rows.
      int group = static_cast<int>(threadIdx.x);
      int band = static_cast<int>(threadIdx.y);
      if constexpr (Packed) {
        const std::int64_t left = (g.out_w - x0) / kColsPerThread;
        if (left < kWarp) {
          const int groups = static_cast<int>(left);
          group = t % groups;
          band = t / groups;
        }
      }
      if (band >= kBlockRows) continue;  // a thread left over in a narrow tile
      Tap<Index> tx[kColsPerThread];
      Index out_x[kColsPerThread];
      bool col_ok[kColsPerThread];
#pragma unroll
      for (int k = 0; k < kColsPerThread; ++k) {
        const std::int64_t ox = Packed ? x0 + kColsPerThread * group + k : x0 + group + kWarp * k;
        col_ok[k] = ox < g.out_w;
        tx[k] = col_ok[k] ? axis_tap<Index>(g.w, ox) : Tap<Index>{0, 0, 0.0f};
        out_x[k] = static_cast<Index>(col_ok[k] ? ox * g.out_stride_w : 0);
      }
      const int first_row = band * g.rows_per_thread;
      const std::int64_t below = g.out_h - y0 - first_row;  // output rows from this band's first on
      const int rows = below < g.rows_per_thread ? static_cast<int>(below) : g.rows_per_thread;
      for (std::int64_t plane = blockIdx.z; plane < g.count; plane += gridDim.z) {
        const auto [in_base, out_base] = plane_offsets<Index>(g, plane);
        const In* const plane_in = in + in_base;
        Out* const plane_out = out + (out_base + static_cast<Index>(y0 + first_row) * static_cast<Index>(g.out_stride_h));
        RowValues<In, Index, Nearest> first;
        RowValues<In, Index, Nearest> second;
        first.row = kNoRow<Index>;
        second.row = kNoRow<Index>;
#pragma unroll 1
        for (int j = 0; j < rows; ++j) {
          const Tap<Index> ty = row_taps[first_row + j];
          // lerp(t, b, 0) is t alone: the second row is read only where its weight is not 0.
          const bool want_b = !Nearest && ty.w != 0.0f;
          hold_rows(first, second, plane_in, ty.a, ty.b, want_b, tx, col_ok);
          Out* const row = plane_out + static_cast<Index>(j) * static_cast<Index>(g.out_stride_h);
          Bits<Out> bits[kColsPerThread];
          if constexpr (Nearest) {
#pragma unroll
            for (int k = 0; k < kColsPerThread; ++k) bits[k] = selected_bits<Out>(first.v[k]);
          } else if (want_b) {
#pragma unroll
            for (int k = 0; k < kColsPerThread; ++k) {
              bits[k] = computed_bits<Out>(lerp_weighted(first.v[k], second.v[k], ty.w));
            }
          } else {
#pragma unroll
            for (int k = 0; k < kColsPerThread; ++k) bits[k] = computed_bits<Out>(first.v[k]);
          }
          if constexpr (Packed) {
            if (col_ok[0]) store_four(row + out_x[0], bits);
          } else {
#pragma unroll
            for (int k = 0; k < kColsPerThread; ++k) {
              if (col_ok[k]) *reinterpret_cast<Bits<Out>*>(row + out_x[k]) = bits[k];
            }
          }
        }
      }
    }
    __syncthreads();  // every thread is done with row_taps before the next tile's
  }
}

// The staged plane kernel (linear, packed outputs, and every tile reading at most kMaxTileRows + 2 input rows: upscales
// along H and mild downscales): per tile and plane, the block first lerps along x every input row the tile reads,
// once each, into shared memory, all loads independent; then each output is one lerp along y of two of those rows.
// The same operations as the plane kernel (reference/plane.h's read_bilinear), in the same order.
// The host admits tiles of up to kMaxTileRows + 2 input rows; the shared rows leave 2 more, so a host evaluation of
// the taps that differed from the device's by a row at either end could not overflow them.
constexpr int kStagedRows = kMaxTileRows + 4;

struct RowPair {
  int a;  // input rows, counted from the tile's first
  int b;
  float w;
};

template <typename In, typename Out, typename Index>
__global__ void __launch_bounds__(kWarp* kBlockRows, 4)
    staged_plane_kernel(const In* __restrict__ in, Out* __restrict__ out, Planes g) {
  __shared__ float4 lerped[kStagedRows][kWarp];  // [input row][group of 4 columns]
  __shared__ RowPair pairs[kMaxTileRows];
  const int tile_rows = kBlockRows * g.rows_per_thread;
  const int t = static_cast<int>(threadIdx.y * kWarp + threadIdx.x);
  Axis rows_of = g.h;  // the same rule, in row indices
  rows_of.stride = 1;
  for (std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * tile_rows; y0 < g.out_h;
       y0 += static_cast<std::int64_t>(gridDim.y) * tile_rows) {
    // Taps only grow with the output index: the tile reads input rows [first, last].
    const std::int64_t tile_end = y0 + tile_rows < g.out_h ? y0 + tile_rows : g.out_h;
    const std::int64_t first = axis_tap<std::int64_t>(rows_of, y0).a;
    const int span = static_cast<int>(axis_tap<std::int64_t>(rows_of, tile_end - 1).b - first + 1);
    if (t < tile_end - y0) {
      const Tap<std::int64_t> r = axis_tap<std::int64_t>(rows_of, y0 + t);
      pairs[t] = {static_cast<int>(r.a - first), static_cast<int>(r.b - first), r.w};
    }
    for (std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * kTileCols; x0 < g.out_w;
         x0 += static_cast<std::int64_t>(gridDim.x) * kTileCols) {
      const std::int64_t left = (g.out_w - x0) / kColsPerThread;
      const int groups = left < kWarp ? static_cast<int>(left) : kWarp;
      // Along x: lane `threadIdx.x`'s group. Along y: thread t's group and band (a narrow tile spreads its threads).
      Tap<Index> tx[kColsPerThread];
      bool col_ok[kColsPerThread];
#pragma unroll
      for (int k = 0; k < kColsPerThread; ++k) {
        col_ok[k] = static_cast<int>(threadIdx.x) < groups;
        tx[k] = col_ok[k] ? axis_tap<Index>(g.w, x0 + kColsPerThread * threadIdx.x + k) : Tap<Index>{0, 0, 0.0f};
      }
      const int group = groups == kWarp ? static_cast<int>(threadIdx.x) : t % groups;
      const int band = groups == kWarp ? static_cast<int>(threadIdx.y) : t / groups;
      const int first_row = band * g.rows_per_thread;
      const std::int64_t below = tile_end - y0 - first_row;
      const int rows = band >= kBlockRows ? 0 : (below < g.rows_per_thread ? static_cast<int>(below) : g.rows_per_thread);
      for (std::int64_t plane = blockIdx.z; plane < g.count; plane += gridDim.z) {
        const auto [in_base, out_base] = plane_offsets<Index>(g, plane);
        const In* const plane_in = in + in_base;
        __syncthreads();  // pairs written; the previous plane's lerped rows all read
        if (static_cast<int>(threadIdx.x) < groups) {
#pragma unroll 2
          for (int r = static_cast<int>(threadIdx.y); r < span; r += kBlockRows) {
            RowValues<In, Index, false> v;
            read_row(v, plane_in, static_cast<Index>((first + r) * g.h.stride), tx, col_ok);
            lerped[r][threadIdx.x] = make_float4(v.v[0], v.v[1], v.v[2], v.v[3]);
          }
        }
        __syncthreads();
        Out* const plane_out =
            out + (out_base + static_cast<Index>(y0 + first_row) * static_cast<Index>(g.out_stride_h) +
                   static_cast<Index>(x0 + kColsPerThread * group));
#pragma unroll 2
        for (int j = 0; j < rows; ++j) {
          const RowPair p = pairs[first_row + j];
          const float4 top = lerped[p.a][group];
          Bits<Out> bits[kColsPerThread];
          if (p.w != 0.0f) {
            const float4 bottom = lerped[p.b][group];
            bits[0] = computed_bits<Out>(lerp_weighted(top.x, bottom.x, p.w));
            bits[1] = computed_bits<Out>(lerp_weighted(top.y, bottom.y, p.w));
            bits[2] = computed_bits<Out>(lerp_weighted(top.z, bottom.z, p.w));
            bits[3] = computed_bits<Out>(lerp_weighted(top.w, bottom.w, p.w));
          } else {  // lerp(t, b, 0) is t alone
            bits[0] = computed_bits<Out>(top.x);
            bits[1] = computed_bits<Out>(top.y);
            bits[2] = computed_bits<Out>(top.z);
            bits[3] = computed_bits<Out>(top.w);
          }
          store_four(plane_out + static_cast<Index>(j) * static_cast<Index>(g.out_stride_h), bits);
        }
      }
    }
    __syncthreads();  // every thread is done with pairs and lerped before the next tile's
  }
}

// Whether every tile of `g` reads at most kMaxTileRows + 2 input rows (computed with the kernel's own taps).
bool staged_rows_fit(const Planes& g) {
  Axis rows_of = g.h;
  rows_of.stride = 1;
  const std::int64_t tile_rows = static_cast<std::int64_t>(kBlockRows) * g.rows_per_thread;
  for (std::int64_t y0 = 0; y0 < g.out_h; y0 += tile_rows) {
    const std::int64_t end = std::min(y0 + tile_rows, g.out_h);
    if (axis_tap<std::int64_t>(rows_of, end - 1).b - axis_tap<std::int64_t>(rows_of, y0).a + 1 > kMaxTileRows + 2) {
      return false;
    }
  }
  return true;
}

template <typename In, typename Out, bool Nearest, bool Packed>
void launch_planes(const ConstTensorView& input, const TensorView& output, const Planes& g, dim3 grid,
                   cudaStream_t stream) {
  const auto* in = static_cast<const In*>(input.data());
  auto* out = static_cast<Out*>(output.data());
  const dim3 block(kWarp, kBlockRows);
  if (fits_32_bits(input.layout()) && fits_32_bits(output.layout())) {
    plane_kernel<In, Out, Nearest, Packed, std::int32_t><<<grid, block, 0, stream>>>(in, out, g);
  } else {
    plane_kernel<In, Out, Nearest, Packed, std::int64_t><<<grid, block, 0, stream>>>(in, out, g);
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
  // 8 rows per thread where that still gives every multiprocessor a few blocks, fewer on small outputs; then each
  // block takes as many planes as keep about 16 blocks a multiprocessor (its row and column taps serve them all).
  const std::int64_t tiles_x = (g.out_w + kTileCols - 1) / kTileCols;
  const std::int64_t multiprocessors = device_limits(options.device).multiprocessors;
  const auto tiles_y = [&] {
    const std::int64_t tile_h = static_cast<std::int64_t>(kBlockRows) * g.rows_per_thread;
    return (g.out_h + tile_h - 1) / tile_h;
  };
  g.rows_per_thread = kMaxRowsPerThread;
  while (g.rows_per_thread > 1 && tiles_x * g.count * tiles_y() < 8 * multiprocessors) g.rows_per_thread /= 2;
  const std::int64_t tiles = tiles_x * tiles_y();
  const std::int64_t planes_per_block = std::max<std::int64_t>(1, tiles * g.count / (16 * multiprocessors));
  const std::int64_t blocks_z = (g.count + planes_per_block - 1) / planes_per_block;
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>(tiles_x, 65535 * 1024)),
                  static_cast<unsigned>(std::min<std::int64_t>(tiles_y(), 65535)),
                  static_cast<unsigned>(std::min<std::int64_t>(blocks_z, 65535)));
  // Packed: a thread's 4 columns are neighbours in memory, on a boundary of 4 elements in every row and plane. Not
  // where W shrinks more than 2x: a warp's loads would then spread over 4x more cache lines than with its 32 columns
  // side by side, which costs more than the stores save (1080p -> 224 took 0.018 ms packed, 0.010 not).
  const auto aligned = [](std::int64_t stride, std::int64_t size) { return size == 1 || stride % kColsPerThread == 0; };
  bool packed = g.out_stride_w == 1 && g.out_w % kColsPerThread == 0 && aligned(g.out_stride_h, g.out_h) &&
                !(g.w.scale < 0.5f) &&
                reinterpret_cast<std::uintptr_t>(output.data()) % (kColsPerThread * element_size(output.dtype())) == 0;
  for (int a = 0; a < g.outer; ++a) packed = packed && aligned(g.out_stride[a], g.size[a]);
  dispatch_types(input.dtype(), output.dtype(), [&](auto* in_tag, auto* out_tag) {
    using In = std::remove_pointer_t<decltype(in_tag)>;
    using Out = std::remove_pointer_t<decltype(out_tag)>;
    const cudaStream_t stream = stream_of(options);
    if (nearest) {
      packed ? launch_planes<In, Out, true, true>(input, output, g, grid, stream)
             : launch_planes<In, Out, true, false>(input, output, g, grid, stream);
    } else if (packed && staged_rows_fit(g)) {
      const dim3 block(kWarp, kBlockRows);
      const auto* in = static_cast<const In*>(input.data());
      auto* out = static_cast<Out*>(output.data());
      if (fits_32_bits(input.layout()) && fits_32_bits(output.layout())) {
        staged_plane_kernel<In, Out, std::int32_t><<<grid, block, 0, stream>>>(in, out, g);
      } else {
        staged_plane_kernel<In, Out, std::int64_t><<<grid, block, 0, stream>>>(in, out, g);
      }
    } else {
      packed ? launch_planes<In, Out, false, true>(input, output, g, grid, stream)
             : launch_planes<In, Out, false, false>(input, output, g, grid, stream);
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
