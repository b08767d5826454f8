// RESAMPLE1/2/3 and UPSAMPLE_2D on CUDA, bit-identical to the reference twins.
//
// The usual case goes through the plane kernels: every axis but H and W selects its own index (resample's N and C
// with scale 1 and offsets that cancel, upsample's N, C and D always), and H and W are 2-tap lerps or selections
// (nothing antialiased). Each block computes a tile of 128 x 8k outputs (256 x 4k for float16 nearest) of some
// planes: each of the tile's column and row taps is computed once, by one thread, into shared memory, and serves
// every plane of the block; a thread takes 4 (8) columns of a band of consecutive rows, reads each input row it
// needs (and lerps it along x) once for all the output rows that share it, and, where the output is packed, stores
// its neighbouring columns of a row at once. Linear outputs whose tiles read few input rows (upscales, mild
// downscales) go through the staged kernel, which lerps those rows along x into shared memory first, with every
// load independent (float16 inputs whose rows are whole 16-byte chunks: the pipelined kernel, which copies each
// plane's rows into shared memory asynchronously, one plane ahead). Float16 linear upscales and downscales by 2 along
// H and W, and float16 upsample x2 nearest, read their inputs at fixed positions, so the doubling, halving and nearest
// doubling kernels take them without shared memory: a thread loads every input row of its outputs at once into
// registers. Antialiased H and W both (planes that select their own index) go through the separable kernels: each
// output index's taps once, then every input row's W sums, then their H sums. Everything else (blended N or C, one
// axis antialiased) runs the generic kernel, one thread per output element evaluating the reference's combine, axis
// by axis.
#include <algorithm>
#include <cstring>
#include <optional>

#include "common.cuh"
#include "rsz/error.h"

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

constexpr int kBlockRows = 8;  // blockDim = (32, 8)
constexpr int kBlockThreads = kWarp * kBlockRows;
// A thread computes Cols columns of each of its rows: 4, or 8 for a packed float16 nearest output, so that its
// stores are 16 bytes (linear float16 stays at 4: with 8, its taps and values took too many registers for enough
// warps to hide its loads, 0.058 against 0.048 ms for the upsample x2 of 256 x 136 x 200 on an H100). A tile is
// 32 * Cols columns wide and up to 8 * 32 / Cols rows high (the same number of outputs), a thread's rows up to
// 32 / Cols.
template <int Cols>
constexpr int kMaxRowsPerThread = 32 / Cols;
template <int Cols>
constexpr int kTileCols = kWarp * Cols;
template <int Cols>
constexpr int kMaxTileRows = kBlockRows * kMaxRowsPerThread<Cols>;
// Blocks a multiprocessor at least: the plane kernel 4 (at most 64 registers a thread), the staged kernel 6 (40
// registers; its loads wait behind a barrier, so it needs more warps in flight: the float16 upsample x2 of
// 256 x 136 x 200 took 0.048 ms on an H100 against 0.057 ms with 4). That is for float32 and float16 inputs with
// 32-bit indexing; unorm inputs (widened in double precision) and 64-bit indexing (inputs of 2 GB and more) need
// the registers of 4 blocks (at 40 they spilled).
constexpr int kPlaneMinBlocks = 4;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kStagedMinBlocks = 4;  // Turing: 1024 threads a multiprocessor
#else
constexpr int kStagedMinBlocks = 6;
#endif
template <typename In, typename Index>
constexpr int staged_min_blocks() {
  return sizeof(Index) == 4 && (std::is_same_v<In, float> || std::is_same_v<In, __half>) ? kStagedMinBlocks
                                                                                          : kPlaneMinBlocks;
}

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
  int rows_per_thread;  // 1..kMaxRowsPerThread<Cols>: a full tile is 8 * rows_per_thread rows high
  Axis h;
  Axis w;
};

// One input row's part of a thread's Cols columns, as the output rows read it: the horizontal lerps (linear) or the
// selected elements (nearest), and the row's element offset (kNoRow: none yet).
template <typename In, typename Index, bool Nearest, int Cols>
struct RowValues {
  using Value = std::conditional_t<Nearest, In, float>;
  Index row;
  Value v[Cols];
};

template <typename Index>
constexpr Index kNoRow = static_cast<Index>(-1);

// A column's taps as read_row reads them: byte offsets.
template <typename In, typename Index>
__device__ __forceinline__ Tap<Index> in_bytes(Tap<Index> t) {
  constexpr auto size = static_cast<Index>(sizeof(In));
  return {t.a * size, t.b * size, t.w};
}

template <typename In, typename Index, bool Nearest, int Cols>
__device__ __forceinline__ void read_row(RowValues<In, Index, Nearest, Cols>& r, const In* __restrict__ in, Index row,
                                         const Tap<Index>* tx, const bool* col_ok) {
  r.row = row;
  const char* const src = reinterpret_cast<const char*>(in + row);
  // tx holds byte offsets (in_bytes): those of a column in bounds are >= 0 and, with 32-bit indexing, below 2^31
  // (plane_index_fits), so each tap's address is one 64-bit add of an unsigned offset.
  using Offset = std::conditional_t<sizeof(Index) == 4, std::uint32_t, Index>;
  const auto at = [&](Index bytes) { return *reinterpret_cast<const In*>(src + static_cast<Offset>(bytes)); };
#pragma unroll
  for (int k = 0; k < Cols; ++k) {
    if constexpr (Nearest) {
      r.v[k] = col_ok[k] ? at(tx[k].a) : In{};
    } else {
      // reference/plane.h's read_bilinear, along x first; lerp takes the first tap alone where the weight is 0, so
      // reading the second tap too changes nothing.
      r.v[k] = col_ok[k] ? lerp(widen(at(tx[k].a)), widen(at(tx[k].b)), tx[k].w) : 0.0f;
    }
  }
}

// Makes `first` hold input row `a` (and, where b is wanted, `second` hold row b), reading only the rows neither holds
// yet: consecutive output rows of an upscale share their input rows, so most rows are read once for several.
template <typename In, typename Index, bool Nearest, int Cols>
__device__ __forceinline__ void hold_rows(RowValues<In, Index, Nearest, Cols>& first,
                                          RowValues<In, Index, Nearest, Cols>& second, const In* __restrict__ in,
                                          Index a, Index b, bool want_b, const Tap<Index>* tx, const bool* col_ok) {
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

// One store of v at dst; Streaming: with the evict-first hint (st.global.cs), so that the output's lines leave the L2
// cache before the input's. The nearest plane kernels store that way: the upsample x2 of 256 x 136 x 200 float16
// took 0.033 ms against 0.036 on an H100, 1080p -> 4K float16 0.027 against 0.031 (the linear kernels gained
// nothing, and the staged kernel spilled registers).
template <bool Streaming, typename T>
__device__ __forceinline__ void put(void* dst, T v) {
  if constexpr (Streaming) {
    __stcs(reinterpret_cast<T*>(dst), v);
  } else {
    *reinterpret_cast<T*>(dst) = v;
  }
}

// Cols neighbouring output elements in one store (16 bytes, but 8 for four float16): `dst` is aligned to it.
template <int Cols, bool Streaming = false>
__device__ __forceinline__ void store_cols(float* dst, const std::uint32_t* b) {
  static_assert(Cols == 4);
  put<Streaming>(dst, make_uint4(b[0], b[1], b[2], b[3]));
}
template <int Cols, bool Streaming = false>
__device__ __forceinline__ void store_cols(__half* dst, const std::uint16_t* b) {
  const auto pair = [&](int k) { return b[k] | static_cast<std::uint32_t>(b[k + 1]) << 16; };
  if constexpr (Cols == 4) {
    put<Streaming>(dst, make_uint2(pair(0), pair(2)));
  } else {
    static_assert(Cols == 8);
    put<Streaming>(dst, make_uint4(pair(0), pair(2), pair(4), pair(6)));
  }
}

// Cols neighbouring computed values stored at once (as store_computed stores each): float32 with the canonical NaN;
// float16 two at a time, one conversion of a pair (round to nearest even, as __float2half_rn) and the NaNs of the
// pair, found in one comparison, replaced by the canonical float16 NaN.
__device__ __forceinline__ std::uint32_t half2_bits(float lo, float hi) {
#if __CUDA_ARCH__ >= 800  // the pair conversion is PTX for sm_80 and later
  std::uint32_t pair;
  std::uint32_t nan;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(hi), "f"(lo));  // hi to the upper half, lo to the lower
  asm("set.nan.u32.f16x2 %0, %1, %1;" : "=r"(nan) : "r"(pair));      // 0xffff in each half that is a NaN
  return (pair & ~nan) | (0x7e007e00u & nan);
#else
  return computed_bits<__half>(lo) | static_cast<std::uint32_t>(computed_bits<__half>(hi)) << 16;
#endif
}

template <int Cols>
__device__ __forceinline__ void store_computed_cols(float* dst, const float* v) {
  std::uint32_t b[Cols];
#pragma unroll
  for (int k = 0; k < Cols; ++k) b[k] = computed_bits<float>(v[k]);
  store_cols<Cols>(dst, b);
}

template <int Cols>
__device__ __forceinline__ void store_computed_cols(__half* dst, const float* v) {
  static_assert(Cols == 4);  // linear outputs take 4 columns a thread
  *reinterpret_cast<uint2*>(dst) = make_uint2(half2_bits(v[0], v[1]), half2_bits(v[2], v[3]));
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
    const Index i = a == 0 ? rest : rest % size;  // plane < count: the outermost index needs no division
    rest /= size;
    o.in += i * static_cast<Index>(g.in_stride[a]);
    o.out += i * static_cast<Index>(g.out_stride[a]);
  }
  return o;
}

// How many of a tile's rows (or columns) from `start` on lie inside the output's `total`.
__device__ __forceinline__ int tile_extent(std::int64_t total, std::int64_t start, int tile) {
  return static_cast<int>(total - start < tile ? total - start : tile);
}

// What thread t computes in a tile of `groups` groups of columns (32, fewer in a packed row's last tile) and `rows`
// rows: group t % groups, and a band of consecutive rows (so that the input rows neighbouring output rows share are
// read once). A full tile gives warp y the band y, rows_per_thread rows; a narrower or lower tile (the last of a row
// or of a plane) spreads its groups and rows over all the block's threads, as evenly as whole bands allow, rather
// than leaving most warps idle while a few do a full tile's work.
struct Share {
  int group;
  int first_row;
  int rows;  // 0: nothing to do in this tile
};

__device__ __forceinline__ Share share_of(int t, int groups, int rows) {
  const int bands = min(kBlockThreads / groups, rows);
  const int per_band = (rows + bands - 1) / bands;
  const int band = t / groups;
  const int first = band * per_band;
  return {t % groups, first, band < bands ? max(0, min(per_band, rows - first)) : 0};
}

// Each block computes tiles of 32 * Cols columns x 8 * rows_per_thread rows, for the planes blockIdx.z, + gridDim.z,
// ...: the tile's row and column taps go to shared memory once per tile (one thread each), and each thread's Cols
// column taps, read from there, serve all its rows and planes. Packed (output W packed, rows and planes aligned to
// Cols elements): a thread's Cols columns are neighbours, stored at once; otherwise a thread's columns are 32 apart
// and a warp stores 32 neighbouring elements at a time.
template <typename In, typename Out, bool Nearest, bool Packed, int Cols, typename Index>
__global__ void __launch_bounds__(kBlockThreads, kPlaneMinBlocks)
    plane_kernel(const In* __restrict__ in, Out* __restrict__ out, Planes g) {
  __shared__ Tap<Index> row_taps[kMaxTileRows<Cols>];
  __shared__ Tap<Index> col_taps[kTileCols<Cols>];
  const int tile_rows = kBlockRows * g.rows_per_thread;
  const int t = static_cast<int>(threadIdx.y * kWarp + threadIdx.x);
  for (std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * tile_rows; y0 < g.out_h;
       y0 += static_cast<std::int64_t>(gridDim.y) * tile_rows) {
    const int rows_here = tile_extent(g.out_h, y0, tile_rows);
    if (t < rows_here) row_taps[t] = axis_tap<Index>(g.h, y0 + t);
    for (std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * kTileCols<Cols>; x0 < g.out_w;
         x0 += static_cast<std::int64_t>(gridDim.x) * kTileCols<Cols>) {
      // Each of the tile's row and column taps is computed once, by one thread.
      const int cols_here = tile_extent(g.out_w, x0, kTileCols<Cols>);
      if (t < cols_here) col_taps[t] = axis_tap<Index>(g.w, x0 + t);
      __syncthreads();
      const Share s = share_of(t, Packed && cols_here < kTileCols<Cols> ? cols_here / Cols : kWarp, rows_here);
      if (s.rows > 0) {
        Tap<Index> tx[Cols];
        bool col_ok[Cols];
#pragma unroll
        for (int k = 0; k < Cols; ++k) {
          // Packed: a group's Cols columns are all in the output (its width is a multiple of Cols).
          const int c = Packed ? Cols * s.group + k : s.group + kWarp * k;
          col_ok[k] = Packed || c < cols_here;
          tx[k] = col_ok[k] ? in_bytes<In>(col_taps[c]) : Tap<Index>{0, 0, 0.0f};
        }
        const Index out_x = static_cast<Index>((x0 + s.group * (Packed ? Cols : 1)) * g.out_stride_w);
        const Index out_step = static_cast<Index>(kWarp * g.out_stride_w);  // not packed: a thread's columns apart
        for (std::int64_t plane = blockIdx.z; plane < g.count; plane += gridDim.z) {
          const auto [in_base, out_base] = plane_offsets<Index>(g, plane);
          const In* const plane_in = in + in_base;
          Out* const plane_out =
              out + (out_base + static_cast<Index>(y0 + s.first_row) * static_cast<Index>(g.out_stride_h) + out_x);
          RowValues<In, Index, Nearest, Cols> first;
          RowValues<In, Index, Nearest, Cols> second;
          first.row = kNoRow<Index>;
          second.row = kNoRow<Index>;
#pragma unroll 1
          for (int j = 0; j < s.rows; ++j) {
            const Tap<Index> ty = row_taps[s.first_row + j];
            // lerp(t, b, 0) is t alone: the second row is read only where its weight is not 0.
            const bool want_b = !Nearest && ty.w != 0.0f;
            hold_rows(first, second, plane_in, ty.a, ty.b, want_b, tx, col_ok);
            Out* const row = plane_out + static_cast<Index>(j) * static_cast<Index>(g.out_stride_h);
            // A thread's columns are neighbours (packed: one store) or 32 apart.
            const auto store = [&](const auto* bits) {
              if constexpr (Packed) {
                store_cols<Cols, Nearest>(row, bits);
              } else {
#pragma unroll
                for (int k = 0; k < Cols; ++k) {
                  if (col_ok[k]) *reinterpret_cast<Bits<Out>*>(row + static_cast<Index>(k) * out_step) = bits[k];
                }
              }
            };
            if constexpr (Nearest) {
              Bits<Out> bits[Cols];
#pragma unroll
              for (int k = 0; k < Cols; ++k) bits[k] = selected_bits<Out>(first.v[k]);
              store(bits);
            } else {
              float v[Cols];
#pragma unroll
              for (int k = 0; k < Cols; ++k) v[k] = want_b ? lerp_weighted(first.v[k], second.v[k], ty.w) : first.v[k];
              if constexpr (Packed) {
                store_computed_cols<Cols>(row, v);
              } else {
                Bits<Out> bits[Cols];
#pragma unroll
                for (int k = 0; k < Cols; ++k) bits[k] = computed_bits<Out>(v[k]);
                store(bits);
              }
            }
          }
        }
      }
      __syncthreads();  // every thread is done with this tile's taps before the next tile's
    }
  }
}

// The staged plane kernel (linear, packed outputs, and every tile reading at most kMaxTileRows + 2 input rows: upscales
// along H and mild downscales): per tile and plane, the block first lerps along x every input row the tile reads,
// once each, into shared memory, all loads independent; then each output is one lerp along y of two of those rows.
// The same operations as the plane kernel (reference/plane.h's read_bilinear), in the same order.
// The host admits tiles of up to kMaxTileRows + 2 input rows; the shared rows leave 2 more, so a host evaluation of
// the taps that differed from the device's by a row at either end could not overflow them.
constexpr int kStagedCols = 4;  // a thread's columns: one float4 of lerped values a row
constexpr int kStagedRows = kMaxTileRows<kStagedCols> + 4;

struct RowPair {
  int a;  // input rows, counted from the tile's first
  int b;
  float w;
};

// The staged kernels' second phase: a thread's s.rows output rows from `row` on (g.out_stride_h apart), each one lerp
// along y of two lerped rows (pairs: the tile's rows from s.first_row on). Its arguments as they are: passing the
// stride by value made the staged kernel spill.
template <typename Out, int Rows>
__device__ __forceinline__ void store_lerped_rows(Out* row, const Planes& g, Share s,
                                                  const RowPair (&pairs)[kMaxTileRows<kStagedCols>],
                                                  const float4 (&lerped)[Rows][kWarp]) {
#pragma unroll 2
  for (int j = 0; j < s.rows; ++j, row += g.out_stride_h) {
    const RowPair p = pairs[s.first_row + j];
    const float4 top = lerped[p.a][s.group];
    float v[kStagedCols] = {top.x, top.y, top.z, top.w};  // lerp(t, b, 0) is t alone
    if (p.w != 0.0f) {
      const float4 bottom = lerped[p.b][s.group];
      v[0] = lerp_weighted(top.x, bottom.x, p.w);
      v[1] = lerp_weighted(top.y, bottom.y, p.w);
      v[2] = lerp_weighted(top.z, bottom.z, p.w);
      v[3] = lerp_weighted(top.w, bottom.w, p.w);
    }
    store_computed_cols<kStagedCols>(row, v);
  }
}

template <typename In, typename Out, typename Index>
__global__ void __launch_bounds__(kBlockThreads, staged_min_blocks<In, Index>())
    staged_plane_kernel(const In* __restrict__ in, Out* __restrict__ out, Planes g) {
  constexpr int Cols = kStagedCols;
  __shared__ float4 lerped[kStagedRows][kWarp];  // [input row][group of 4 columns]
  __shared__ RowPair pairs[kMaxTileRows<Cols>];
  __shared__ Tap<Index> col_taps[kTileCols<Cols>];
  __shared__ std::int64_t tile_first;  // the tile's first input row
  __shared__ int tile_span;            // and how many it reads
  const int tile_rows = kBlockRows * g.rows_per_thread;
  const int t = static_cast<int>(threadIdx.y * kWarp + threadIdx.x);
  Axis rows_of = g.h;  // the same rule, in row indices
  rows_of.stride = 1;
  for (std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * tile_rows; y0 < g.out_h;
       y0 += static_cast<std::int64_t>(gridDim.y) * tile_rows) {
    // Taps only grow with the output index: the tile reads input rows [first, last]. Each row's taps are computed
    // once, by one thread.
    const int rows_here = tile_extent(g.out_h, y0, tile_rows);
    if (t < rows_here) {
      const std::int64_t first = axis_tap<std::int64_t>(rows_of, y0).a;
      const Tap<std::int64_t> r = axis_tap<std::int64_t>(rows_of, y0 + t);
      pairs[t] = {static_cast<int>(r.a - first), static_cast<int>(r.b - first), r.w};
      if (t == 0) tile_first = first;
      if (t == rows_here - 1) tile_span = static_cast<int>(r.b - first + 1);
    }
    for (std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * kTileCols<Cols>; x0 < g.out_w;
         x0 += static_cast<std::int64_t>(gridDim.x) * kTileCols<Cols>) {
      const int cols_here = tile_extent(g.out_w, x0, kTileCols<Cols>);
      if (t < cols_here) col_taps[t] = axis_tap<Index>(g.w, x0 + t);
      __syncthreads();
      const std::int64_t first = tile_first;
      const int span = tile_span;
      const int groups = cols_here / Cols;
      // Along x, thread t lerps the input rows band, band + bands, ... of its group; along y it computes s.
      const int bands = kBlockThreads / groups;
      const int band = t / groups;
      const Share s = share_of(t, groups, rows_here);
      Tap<Index> tx[Cols];
      bool col_ok[Cols];
#pragma unroll
      for (int k = 0; k < Cols; ++k) {
        col_ok[k] = band < bands;
        tx[k] = col_ok[k] ? in_bytes<In>(col_taps[Cols * s.group + k]) : Tap<Index>{0, 0, 0.0f};
      }
      for (std::int64_t plane = blockIdx.z; plane < g.count; plane += gridDim.z) {
        const auto [in_base, out_base] = plane_offsets<Index>(g, plane);
        const In* const plane_in = in + in_base;
        if (plane != blockIdx.z) __syncthreads();  // the previous plane's lerped rows all read
        if (band < bands) {
#pragma unroll 2
          for (int r = band; r < span; r += bands) {
            RowValues<In, Index, false, Cols> v;
            read_row(v, plane_in, static_cast<Index>((first + r) * g.h.stride), tx, col_ok);
            lerped[r][s.group] = make_float4(v.v[0], v.v[1], v.v[2], v.v[3]);
          }
        }
        __syncthreads();
        if (s.rows == 0) continue;  // (its row offset could lie past the output)
        store_lerped_rows(out + (out_base + static_cast<Index>(y0 + s.first_row) * static_cast<Index>(g.out_stride_h) +
                                 static_cast<Index>(x0 + Cols * s.group)),
                          g, s, pairs, lerped);
      }
      __syncthreads();  // every thread is done with this tile's taps and lerped rows before the next tile's
    }
  }
}

// ---- the pipelined staged kernel ----

// The staged kernel's loads wait behind its barrier: a block reads a plane's rows, then computes them, and its loads
// overlap only other blocks' work. The pipelined kernel, for float16 inputs whose rows are whole 16-byte chunks,
// copies each plane's input window (the tile's rows; the columns its taps read, widened to 16-byte chunks) into
// shared memory with cp.async, which holds no registers, one plane ahead: while the block lerps plane p, the copies
// of plane p + 1 are in flight. Then the staged kernel's two phases, reading the window instead of device memory:
// the same operations in the same order. On an H100 (one process, A/B) it took the float16 upsample x2 of
// 256 x 136 x 200 from 0.046 to 0.040 ms, 1080p -> 4K from 0.037 to 0.033; float32 inputs gained nothing on balance
// (-7% to +10%; ncu: their warps then waited on shared-memory reads, not device memory), so they stay with the staged
// kernel.
constexpr int kPipeRows = 36;       // a tile's input rows: the 64 output rows of a 2x upscale read 34
constexpr int kPipeRowBytes = 304;  // a row's window: 152 float16 (128 output columns read 129 at most, upscaling)
constexpr int kPipeChunks = kPipeRowBytes / 16;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr int kPipeMinBlocks = 4;  // not launched there (and Turing has 1024 threads a multiprocessor)
#else
constexpr int kPipeMinBlocks = 5;  // resident a multiprocessor (its shared memory: 42.6 KB a block)
#endif
// Blocks a multiprocessor its launches aim at, about two waves (H100, upsample x2: 5 and 40 took 11% and 20% longer,
// 20 1-3%). The host launches it on compute capability 8.0 and later only (cp.async); the synchronous copies below
// keep it compiling for older targets.
constexpr int kPipeBlocks = 10;

__device__ __forceinline__ void copy_chunk(void* shared, const void* global) {
#if __CUDA_ARCH__ >= 800
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(global) : "memory");
#else
  *static_cast<uint4*>(shared) = *static_cast<const uint4*>(global);
#endif
}

__device__ __forceinline__ void commit_chunks() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits for this thread's copies but the last `Pending` groups.
template <int Pending>
__device__ __forceinline__ void wait_chunks() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
#endif
}

struct PipeTile {
  std::int64_t first_row;  // the tile's first input row
  std::int32_t span;       // its input rows
  std::int32_t window;     // its first input column (a multiple of 16 / sizeof(In))
  std::int32_t chunks;     // 16-byte chunks a row
};

template <typename In, typename Out>
__global__ void __launch_bounds__(kBlockThreads, kPipeMinBlocks)
    piped_plane_kernel(const In* __restrict__ in, Out* __restrict__ out, Planes g) {
  constexpr int Cols = kStagedCols;
  constexpr int kChunkElements = 16 / static_cast<int>(sizeof(In));
  __shared__ float4 lerped[kPipeRows][kWarp];
  __shared__ __align__(16) unsigned char raw[2][kPipeRows][kPipeRowBytes];
  __shared__ RowPair pairs[kMaxTileRows<Cols>];
  __shared__ Tap<int> col_taps[kTileCols<Cols>];  // byte offsets in the window's rows
  __shared__ PipeTile tile;
  const int tile_rows = kBlockRows * g.rows_per_thread;
  const int t = static_cast<int>(threadIdx.y * kWarp + threadIdx.x);
  const auto row_bytes = static_cast<std::uint32_t>(g.h.stride * static_cast<std::int64_t>(sizeof(In)));
  Axis rows_of = g.h;
  rows_of.stride = 1;
  for (std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * tile_rows; y0 < g.out_h;
       y0 += static_cast<std::int64_t>(gridDim.y) * tile_rows) {
    const int rows_here = tile_extent(g.out_h, y0, tile_rows);
    // The tile's row pairs, and below each thread's work, as the staged kernel computes them. Written out in both:
    // shared device helpers left both kernels' registers as they were, yet made every float32 workload 2-12% slower
    // on an H100 (plane kernel included; the same host code was not).
    if (t < rows_here) {
      const std::int64_t first = axis_tap<std::int64_t>(rows_of, y0).a;
      const Tap<std::int64_t> r = axis_tap<std::int64_t>(rows_of, y0 + t);
      pairs[t] = {static_cast<int>(r.a - first), static_cast<int>(r.b - first), r.w};
      if (t == 0) tile.first_row = first;
      if (t == rows_here - 1) tile.span = static_cast<int>(r.b - first + 1);
    }
    for (std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * kTileCols<Cols>; x0 < g.out_w;
         x0 += static_cast<std::int64_t>(gridDim.x) * kTileCols<Cols>) {
      const int cols_here = tile_extent(g.out_w, x0, kTileCols<Cols>);
      if (t < cols_here) {
        const int window = axis_tap<int>(g.w, x0).a / kChunkElements * kChunkElements;
        const Tap<int> c = axis_tap<int>(g.w, x0 + t);
        col_taps[t] = in_bytes<In>(Tap<int>{c.a - window, c.b - window, c.w});
        if (t == 0) tile.window = window;
        if (t == cols_here - 1) tile.chunks = (c.b - window) / kChunkElements + 1;
      }
      __syncthreads();
      const int span = min(tile.span, kPipeRows);  // (the host checked it fits: min only guards the copies)
      const int chunks = min(tile.chunks, kPipeChunks);
      // Copies: thread t takes chunk t % chunks of the rows t / chunks, + 256 / chunks, ... (none where t is past the
      // last whole row of chunks).
      const int copy_rows = kBlockThreads / chunks;
      const bool copies = t < copy_rows * chunks;
      const int copy_first = copies ? t / chunks : span;
      const int copy_unit = copies ? t - (t / chunks) * chunks : 0;  // the chunk of its rows
      const std::uint32_t copy_from = static_cast<std::uint32_t>(tile.first_row) * row_bytes +
                                      static_cast<std::uint32_t>(tile.window * static_cast<int>(sizeof(In))) +
                                      static_cast<std::uint32_t>(16 * copy_unit);
      const auto copy_plane = [&](std::int64_t plane, int buffer) {
        const char* const src =
            reinterpret_cast<const char*>(in + plane_offsets<std::int32_t>(g, plane).in) + copy_from;
        for (int r = copy_first; r < span; r += copy_rows) {
          copy_chunk(&raw[buffer][r][16 * copy_unit], src + static_cast<std::uint32_t>(r) * row_bytes);
        }
        commit_chunks();
      };
      const int groups = cols_here / Cols;
      const int bands = kBlockThreads / groups;
      const int band = t / groups;
      const Share s = share_of(t, groups, rows_here);
      Tap<int> tx[Cols];
      bool col_ok[Cols];
#pragma unroll
      for (int k = 0; k < Cols; ++k) {
        col_ok[k] = band < bands;
        tx[k] = col_ok[k] ? col_taps[Cols * s.group + k] : Tap<int>{0, 0, 0.0f};
      }
      copy_plane(blockIdx.z, 0);
      int buffer = 0;
      for (std::int64_t plane = blockIdx.z; plane < g.count; plane += gridDim.z, buffer ^= 1) {
        if (plane + gridDim.z < g.count) {
          copy_plane(plane + gridDim.z, buffer ^ 1);
          wait_chunks<1>();  // this plane's copies done, the next plane's in flight
        } else {
          wait_chunks<0>();
        }
        // This plane's window is in, and every thread is done with the previous plane's lerped rows.
        __syncthreads();
        if (band < bands) {
#pragma unroll 2
          for (int r = band; r < span; r += bands) {
            RowValues<In, std::int32_t, false, Cols> v;
            read_row(v, reinterpret_cast<const In*>(raw[buffer][r]), 0, tx, col_ok);
            lerped[r][s.group] = make_float4(v.v[0], v.v[1], v.v[2], v.v[3]);
          }
        }
        __syncthreads();  // (also: the window of this plane all read before the copies of plane + 2 replace it)
        if (s.rows == 0) continue;
        const std::int32_t out_base = plane_offsets<std::int32_t>(g, plane).out;
        store_lerped_rows(out + (out_base + static_cast<std::int32_t>(y0 + s.first_row) *
                                                static_cast<std::int32_t>(g.out_stride_h) +
                                 static_cast<std::int32_t>(x0 + Cols * s.group)),
                          g, s, pairs, lerped);
      }
      __syncthreads();  // every thread is done with this tile's taps and lerped rows before the next tile's
    }
  }
}

// ---- the doubling kernel ----

// Float16 linear upscales that double H and W with pixel-centre offsets (upsample x2, resample by 2 with offsets
// 0.5 / -0.5: the commonest upscale). Along each axis, output 8c + k reads inputs 4c - 1 + p and 4c + p (clamped)
// with p = doubled_tap(k), whatever c: so a thread takes the 8 output columns of one chunk of 4 input columns and the
// 8 output rows of 4 input rows, loads the 6 input rows it reads (each a chunk and its two neighbouring elements) at
// once, lerps each along x in registers once, and each output row is one lerp along y of two of them: no shared
// memory, no barrier, 18 loads in flight a thread. The pipelined kernel reads every tap from shared memory, which
// bound it (L1 busy with shared wavefronts). The same operations as the plane kernel (reference/plane.h's
// read_bilinear), in the same order. On an H100 (one process, A/B): 1080p -> 4K 0.033 -> 0.030 ms, the upsample x2
// of 256 x 136 x 200 0.040 -> 0.032. Float32 inputs stay with the staged kernel: with 2 input rows a thread (4 held
// more than 64 registers) the same kernel took 4-20% longer.
constexpr int kPairIn = 4;             // input columns a thread reads a row, as one 8-byte load
constexpr int kPairOut = 2 * kPairIn;  // its output columns (one 16-byte store a row)
constexpr int kPairRows = 4;           // input rows a thread advances (its output rows: 8)
constexpr int kPairThreads = 256;
constexpr int kPairMinBlocks = 4;  // 64 registers

// Output k of a thread's 8 (along either axis) lerps window positions doubled_tap(k) and doubled_tap(k) + 1.
__host__ __device__ constexpr int doubled_tap(int k) { return (k + 1) / 2; }

// A thread's part of one input row: its chunk (columns 4c .. 4c + 3) and the elements either side (clamped).
struct PairRow {
  uint2 chunk;
  __half left;
  __half right;
};

__device__ __forceinline__ PairRow load_pair_row(const __half* __restrict__ row, int col, int last) {
  return {*reinterpret_cast<const uint2*>(row + col), row[col > 0 ? col - 1 : 0],
          row[col + kPairIn <= last ? col + kPairIn : last]};
}

// The row's lerps along x for the thread's 8 output columns.
__device__ __forceinline__ void lerp_pair_row(float (&h)[kPairOut], const PairRow& r, const float (&w)[kPairOut]) {
  __half e[kPairIn];
  memcpy(e, &r.chunk, sizeof r.chunk);
  float win[kPairIn + 2];
  win[0] = widen(r.left);
#pragma unroll
  for (int k = 0; k < kPairIn; ++k) win[k + 1] = widen(e[k]);
  win[kPairIn + 1] = widen(r.right);
#pragma unroll
  for (int k = 0; k < kPairOut; ++k) h[k] = lerp(win[doubled_tap(k)], win[doubled_tap(k) + 1], w[k]);
}

// A thread's 8 computed outputs of a row, 16-byte aligned, in one store with the evict-first hint (as the nearest
// plane kernels: 1-2% faster here).
__device__ __forceinline__ void store_pair_row(__half* dst, const float (&v)[kPairOut]) {
  put<true>(dst, make_uint4(half2_bits(v[0], v[1]), half2_bits(v[2], v[3]), half2_bits(v[4], v[5]),
                            half2_bits(v[6], v[7])));
}

// axis_tap of a linear axis of scale 2 (Halve: 0.5), in element indices, for the doubling and halving kernels:
// dividing by the constant 2 (0.5) is multiplying by 0.5 (2), exact, so the coordinate is resample_source_coord's, bit
// for bit, without a division. With 32-bit indices (their axes have at most 2^24 inputs).
template <bool Halve>
__host__ __device__ __forceinline__ Tap<std::int32_t> fixed_axis_tap(const Axis& ax, std::int32_t o) {
  const LinearTapsOf<std::int32_t> t = linear_taps<std::int32_t>(
      resample_source_coord<std::int32_t>(o, Halve ? 0.5f : 2.0f, ax.ip, ax.op), static_cast<std::int32_t>(ax.n));
  return {t.i0, t.i1, t.w};
}

// Whether tap t reads window positions p and p + 1 of a window of inputs start, start + 1, ... (clamped to
// [0, last]); a weight of 0 reads the first tap alone.
__host__ __device__ __forceinline__ bool reads_window(const Tap<std::int32_t>& t, std::int32_t start, int p,
                                                     std::int32_t last) {
  const auto at = [&](int q) {
    const std::int32_t i = start + q;
    return i < 0 ? 0 : (i > last ? last : i);
  };
  return t.a == at(p) && (t.w == 0.0f || t.b == at(p + 1));
}

// What a thread of the doubling, halving and nearest doubling kernels computes (thread i: chunk i % chunks of the rows
// of group (i / chunks) % groups of plane i / (chunks * groups)): the 8 output columns from 8 * chunk on of the `rows`
// output rows from first_y on (a group: rows_per_group, fewer in the last) of the plane at `at`, the first of them at
// dst in `out`. False past the last thread.
struct PairWork {
  std::int32_t chunk;
  std::int32_t group;
  std::int32_t first_y;
  int rows;
  PlaneOffsets<std::int32_t> at;
  __half* dst;
};

__device__ __forceinline__ bool pair_work(const Planes& g, int rows_per_group, __half* out, PairWork& w) {
  const auto chunks = static_cast<std::int32_t>(g.out_w / kPairOut);
  const auto groups = static_cast<std::int32_t>((g.out_h + rows_per_group - 1) / rows_per_group);
  const std::int64_t id = first_thread();
  if (id >= g.count * groups * chunks) return false;
  const auto i = static_cast<std::int32_t>(id);  // < the output's elements / 8: 32 bits (checked on the host)
  w.chunk = i % chunks;
  const std::int32_t rest = i / chunks;
  w.group = rest % groups;
  w.at = plane_offsets<std::int32_t>(g, rest / groups);
  w.first_y = rows_per_group * w.group;
  w.rows = min(rows_per_group, static_cast<int>(g.out_h - w.first_y));
  w.dst = out + (w.at.out + w.first_y * static_cast<std::int32_t>(g.out_stride_h) + kPairOut * w.chunk);
  return true;
}

// The blocks of such a launch over `g`, rows_per_group output rows a thread.
unsigned pair_blocks(const Planes& g, int rows_per_group) {
  const std::int64_t threads = g.count * (g.out_w / kPairOut) * ((g.out_h + rows_per_group - 1) / rows_per_group);
  return static_cast<unsigned>((threads + kPairThreads - 1) / kPairThreads);
}

// The weights of the 8 columns of chunk `chunk` of axis `ax` (fixed_axis_tap) into wx, and whether each reads the
// inputs its kernel reads at fixed positions: the doubling kernel's window positions doubled_tap(k) from input
// 4 * chunk - 1, the halving kernel's inputs 2o and 2o + 1.
template <bool Halve>
__device__ __forceinline__ bool fixed_columns(const Axis& ax, std::int32_t chunk, float (&wx)[kPairOut]) {
  const std::int32_t start = Halve ? 2 * kPairOut * chunk : kPairIn * chunk - 1;
  const auto last = static_cast<std::int32_t>(ax.n - 1);
  bool exact = true;
#pragma unroll
  for (int k = 0; k < kPairOut; ++k) {
    const Tap<std::int32_t> t = fixed_axis_tap<Halve>(ax, kPairOut * chunk + k);
    wx[k] = t.w;
    exact &= reads_window(t, start, Halve ? 2 * k : doubled_tap(k), last);
  }
  return exact;
}

// A thread's 8 output columns from first_x on of `rows` rows from first_y on, tap by tap, as the plane kernel computes
// them: where a tap is not at the position the doubling or halving kernel reads.
template <bool Halve>
__device__ __forceinline__ void fixed_by_taps(const __half* __restrict__ plane_in, __half* dst, const Planes& g,
                                              std::int32_t first_x, std::int32_t first_y, int rows) {
  const auto row_stride = static_cast<std::int32_t>(g.h.stride);
  for (int k = 0; k < rows; ++k) {
    const Tap<std::int32_t> ty = fixed_axis_tap<Halve>(g.h, first_y + k);
    const __half* const top = plane_in + ty.a * row_stride;
    const __half* const bottom = plane_in + ty.b * row_stride;
#pragma unroll 1
    for (int c = 0; c < kPairOut; ++c) {
      const Tap<std::int32_t> tx = fixed_axis_tap<Halve>(g.w, first_x + c);
      float v = lerp(widen(top[tx.a]), widen(top[tx.b]), tx.w);
      if (ty.w != 0.0f) v = lerp_weighted(v, lerp(widen(bottom[tx.a]), widen(bottom[tx.b]), tx.w), ty.w);
      store_computed(dst + (k * static_cast<std::int32_t>(g.out_stride_h) + c), v);  // lerp(t, b, 0) is t alone
    }
  }
}

// A thread: pair_work.
__global__ void __launch_bounds__(kPairThreads, kPairMinBlocks)
    doubling_kernel(const __half* __restrict__ in, __half* __restrict__ out, Planes g) {
  constexpr int K = kPairRows;
  PairWork w;
  if (!pair_work(g, 2 * K, out, w)) return;
  const std::int32_t chunk = w.chunk;
  const std::int32_t group = w.group;
  const std::int32_t in_base = w.at.in;
  const std::int32_t col = kPairIn * chunk;
  const auto last_col = static_cast<std::int32_t>(g.w.n - 1);
  const auto last_row = static_cast<std::int32_t>(g.h.n - 1);
  const std::int32_t first_y = w.first_y;
  const int rows_here = w.rows;
  const auto out_stride = static_cast<std::int32_t>(g.out_stride_h);
  __half* const dst = w.dst;
  // The host checked the first outputs of each axis; every thread checks its own (a rounding could move a tap), and
  // where one is not at its window position computes its outputs tap by tap (again, for rows already stored).
  float wx[kPairOut];
  bool exact = fixed_columns<false>(g.w, chunk, wx);
  if (exact) {
    // Every load at once: input rows K * group - 1 .. K * group + K, clamped.
    const auto row_stride = static_cast<std::int32_t>(g.h.stride);
    PairRow rows[K + 2];
#pragma unroll
    for (int p = 0; p < K + 2; ++p) {
      const std::int32_t r = min(max(K * group - 1 + p, 0), last_row);
      rows[p] = load_pair_row(in + (in_base + r * row_stride), col, last_col);
    }
    // Rows p and p + 1, lerped along x, serve output rows 2p - 1 and 2p.
    float top[kPairOut];
    float bottom[kPairOut];
    lerp_pair_row(top, rows[0], wx);
#pragma unroll
    for (int p = 0; p <= K; ++p) {
      lerp_pair_row(bottom, rows[p + 1], wx);
#pragma unroll
      for (int k = 2 * p - 1; k <= 2 * p; ++k) {
        if (k < 0 || k >= rows_here) continue;
        const Tap<std::int32_t> ty = fixed_axis_tap<false>(g.h, first_y + k);
        exact &= reads_window(ty, K * group - 1, doubled_tap(k), last_row);
        float v[kPairOut];
#pragma unroll
        for (int c = 0; c < kPairOut; ++c) v[c] = ty.w != 0.0f ? lerp_weighted(top[c], bottom[c], ty.w) : top[c];
        store_pair_row(dst + k * out_stride, v);  // lerp(t, b, 0) is t alone
      }
#pragma unroll
      for (int c = 0; c < kPairOut; ++c) top[c] = bottom[c];
    }
  }
  if (!exact) fixed_by_taps<false>(in + in_base, dst, g, kPairOut * chunk, first_y, rows_here);
}

// Whether `axis` (of `out` outputs) is linear with scale 2, of at most 2^24 inputs, and its first outputs read the
// doubling kernel's window positions (the kernel checks the others; only the first: offsets whose rounding drifts
// away later, such as 3e-7, then take the tap-by-tap path, slower, but they are what tests it).
bool doubles(const Axis& axis, std::int64_t out) {
  if (axis.rule != AxisRule::Linear || axis.scale != 2.0f || out != 2 * axis.n || axis.n > (1 << 24)) {
    return false;
  }
  for (std::int32_t o = 0; o < std::min<std::int64_t>(out, 2 * kPairOut); ++o) {
    if (!reads_window(fixed_axis_tap<false>(axis, o), kPairIn * (o / kPairOut) - 1, doubled_tap(o % kPairOut),
                      static_cast<std::int32_t>(axis.n - 1))) {
      return false;
    }
  }
  return true;
}

// ---- the nearest doubling kernel ----

// Float16 upsample x2 nearest along H and W (Replicate with factor 2: output o selects input o / 2, integer
// arithmetic, so no tap needs checking): a thread takes 8 output columns (one 8-byte chunk of 4 inputs, each stored
// twice) of 8 output rows (4 input rows, each stored twice), its 4 loads at once, each output row one 16-byte store,
// where the plane kernel read every output's element with a 2-byte load (float16 took as long as float32 on the
// 5-D upsample of 16 x 8 x 128 x 128). Selections are copies of the input's bits, as the plane kernel stores them.
// Resample by 2 nearest stays with the plane kernel: checking its nearest_index taps a thread made it slower there
// (1080p -> 4K 0.0289 -> 0.0306 ms on an H100).
// A thread: pair_work.
__global__ void __launch_bounds__(kPairThreads, kPairMinBlocks)
    doubling_nearest_kernel(const __half* __restrict__ in, __half* __restrict__ out, Planes g) {
  constexpr int K = kPairRows;
  PairWork w;
  if (!pair_work(g, 2 * K, out, w)) return;
  const auto row_stride = static_cast<std::int32_t>(g.h.stride);
  const auto out_stride = static_cast<std::int32_t>(g.out_stride_h);
  __half* const dst = w.dst;
  uint2 rows[K];
#pragma unroll
  for (int p = 0; p < K; ++p) {
    const std::int32_t r = min(K * w.group + p, static_cast<std::int32_t>(g.h.n - 1));  // (rows past the last: unused)
    rows[p] = *reinterpret_cast<const uint2*>(in + (w.at.in + r * row_stride + kPairIn * w.chunk));
  }
#pragma unroll
  for (int p = 0; p < K; ++p) {
    // Each element twice: a word's low half into both halves (bytes 1 0 1 0), then its high half (3 2 3 2).
    const uint4 v = make_uint4(__byte_perm(rows[p].x, 0, 0x1010), __byte_perm(rows[p].x, 0, 0x3232),
                               __byte_perm(rows[p].y, 0, 0x1010), __byte_perm(rows[p].y, 0, 0x3232));
#pragma unroll
    for (int k = 2 * p; k < 2 * p + 2; ++k) {
      if (k < w.rows) put<true>(dst + k * out_stride, v);
    }
  }
}

// Whether `axis` (of `out` outputs) replicates each of at most 2^24 inputs twice (upsample x2 nearest).
bool doubles_nearest(const Axis& axis, std::int64_t out) {
  return axis.rule == AxisRule::Replicate && axis.factor == 2 && out == 2 * axis.n && axis.n <= (1 << 24);
}

// Whether the doubling kernel (nearest: the nearest doubling kernel) can take `g` (float16): H and W doubled (doubles,
// doubles_nearest; any H); input rows read as whole chunks (W, rows and planes on multiples of 4 elements, the data on
// 8 bytes); outputs stored 8 at a time, 16-byte aligned.
bool doubling_fits(const Planes& g, const void* in, const void* out, bool nearest) {
  const auto multiple = [](std::int64_t v, std::int64_t of) { return v % of == 0; };
  bool fits = g.w.stride == 1 && multiple(g.h.stride, kPairIn) &&
              reinterpret_cast<std::uintptr_t>(in) % sizeof(uint2) == 0 && g.out_stride_w == 1 &&
              multiple(g.out_stride_h, kPairOut) && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  for (int a = 0; a < g.outer; ++a) {
    fits = fits && multiple(g.in_stride[a], kPairIn) && multiple(g.out_stride[a], kPairOut);
  }
  if (nearest) return fits && g.w.n % kPairIn == 0 && doubles_nearest(g.h, g.out_h) && doubles_nearest(g.w, g.out_w);
  return fits && g.w.n % kPairIn == 0 && doubles(g.h, g.out_h) && doubles(g.w, g.out_w);
}

// ---- the halving kernel ----

// Float16 linear downscales by 2 along H and W with pixel-centre offsets (resample by 0.5 with offsets 0.5 / -0.5:
// 4K -> 1080p, image pyramids): output o reads inputs 2o and 2o + 1 along each axis. A thread takes 8 output columns
// (16 input columns, two 16-byte loads a row) of kHalfRows output rows (2 * kHalfRows input rows), every load at once,
// and stores each output row in one 16-byte store: the plane kernel's loads are one element a column and wait row by
// row. The same operations as the plane kernel, in the same order; taps checked as the doubling kernel checks its.
constexpr int kHalfRows = 2;  // output rows a thread

__device__ __forceinline__ void lerp_half_row(float (&h)[kPairOut], const uint4 (&r)[2], const float (&w)[kPairOut]) {
  __half e[2 * kPairOut];
  memcpy(e, r, sizeof r);
#pragma unroll
  for (int k = 0; k < kPairOut; ++k) h[k] = lerp(widen(e[2 * k]), widen(e[2 * k + 1]), w[k]);
}

// A thread: pair_work.
__global__ void __launch_bounds__(kPairThreads, kPairMinBlocks)
    halving_kernel(const __half* __restrict__ in, __half* __restrict__ out, Planes g) {
  PairWork w;
  if (!pair_work(g, kHalfRows, out, w)) return;
  const std::int32_t chunk = w.chunk;
  const std::int32_t in_base = w.at.in;
  const std::int32_t col = 2 * kPairOut * chunk;
  const auto last_row = static_cast<std::int32_t>(g.h.n - 1);
  const std::int32_t first_y = w.first_y;
  const int rows_here = w.rows;
  const auto out_stride = static_cast<std::int32_t>(g.out_stride_h);
  __half* const dst = w.dst;
  float wx[kPairOut];
  bool exact = fixed_columns<true>(g.w, chunk, wx);
  if (exact) {
    const auto row_stride = static_cast<std::int32_t>(g.h.stride);
    uint4 rows[2 * kHalfRows][2];
#pragma unroll
    for (int j = 0; j < 2 * kHalfRows; ++j) {
      const uint4* const from =
          reinterpret_cast<const uint4*>(in + (in_base + min(2 * first_y + j, last_row) * row_stride + col));
      rows[j][0] = from[0];
      rows[j][1] = from[1];
    }
#pragma unroll
    for (int k = 0; k < kHalfRows; ++k) {
      if (k >= rows_here) continue;
      const Tap<std::int32_t> ty = fixed_axis_tap<true>(g.h, first_y + k);
      exact &= reads_window(ty, 2 * (first_y + k), 0, last_row);
      float top[kPairOut];
      float v[kPairOut];
      lerp_half_row(top, rows[2 * k], wx);
      if (ty.w != 0.0f) {  // lerp(t, b, 0) is t alone
        float bottom[kPairOut];
        lerp_half_row(bottom, rows[2 * k + 1], wx);
#pragma unroll
        for (int c = 0; c < kPairOut; ++c) v[c] = lerp_weighted(top[c], bottom[c], ty.w);
      } else {
#pragma unroll
        for (int c = 0; c < kPairOut; ++c) v[c] = top[c];
      }
      store_pair_row(dst + k * out_stride, v);
    }
  }
  if (!exact) fixed_by_taps<true>(in + in_base, dst, g, kPairOut * chunk, first_y, rows_here);
}

// Whether `axis` (of `out` outputs) is linear with scale 0.5, of at most 2^24 inputs, and its first outputs read
// inputs 2o and 2o + 1 (the kernel checks the others).
bool halves(const Axis& axis, std::int64_t out) {
  if (axis.rule != AxisRule::Linear || axis.scale != 0.5f || 2 * out > axis.n || axis.n > (1 << 24)) return false;
  for (std::int32_t o = 0; o < std::min<std::int64_t>(out, 2 * kPairOut); ++o) {
    if (!reads_window(fixed_axis_tap<true>(axis, o), 2 * o, 0, static_cast<std::int32_t>(axis.n - 1))) return false;
  }
  return true;
}

// Whether the halving kernel can take `g` (float16, linear): H and W halved (halves), outputs a whole number of
// chunks of 8 a row; input rows read 16 bytes at a time (rows and planes on multiples of 8 elements, the data on 16
// bytes); outputs stored 8 at a time, 16-byte aligned.
bool halving_fits(const Planes& g, const void* in, const void* out) {
  const auto multiple = [](std::int64_t v, std::int64_t of) { return v % of == 0; };
  bool fits = g.w.stride == 1 && multiple(g.h.stride, kPairOut) && multiple(g.out_w, kPairOut) &&
              reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && g.out_stride_w == 1 &&
              multiple(g.out_stride_h, kPairOut) && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  for (int a = 0; a < g.outer; ++a) {
    fits = fits && multiple(g.in_stride[a], kPairOut) && multiple(g.out_stride[a], kPairOut);
  }
  return fits && halves(g.h, g.out_h) && halves(g.w, g.out_w);
}

// The most input rows a tile of `g` reads (computed with the kernels' own taps).
std::int64_t max_tile_span(const Planes& g) {
  Axis rows_of = g.h;
  rows_of.stride = 1;
  const std::int64_t tile_rows = static_cast<std::int64_t>(kBlockRows) * g.rows_per_thread;
  std::int64_t most = 0;
  for (std::int64_t y0 = 0; y0 < g.out_h; y0 += tile_rows) {
    const std::int64_t end = std::min(y0 + tile_rows, g.out_h);
    most = std::max(most, axis_tap<std::int64_t>(rows_of, end - 1).b - axis_tap<std::int64_t>(rows_of, y0).a + 1);
  }
  return most;
}

// Whether every tile of `g` reads at most kMaxTileRows + 2 input rows.
bool staged_rows_fit(const Planes& g) { return max_tile_span(g) <= kMaxTileRows<kStagedCols> + 2; }

// Whether the pipelined kernel can take `g`: input rows of whole 16-byte chunks (the data, every row and plane on a
// 16-byte boundary, W a whole number of chunks), and every tile's window within its buffers, with a row and a chunk
// to spare (computed with the kernel's own taps).
template <typename In>
bool piped_fits(const Planes& g, const void* data) {
  constexpr std::int64_t e = 16 / static_cast<std::int64_t>(sizeof(In));
  bool fits = g.w.stride == 1 && g.w.n % e == 0 && g.h.stride % e == 0 &&
              reinterpret_cast<std::uintptr_t>(data) % 16 == 0;
  for (int a = 0; a < g.outer; ++a) fits = fits && g.in_stride[a] % e == 0;
  if (!fits || max_tile_span(g) > kPipeRows - 1) return false;
  constexpr std::int64_t tile_cols = kTileCols<kStagedCols>;
  for (std::int64_t x0 = 0; x0 < g.out_w; x0 += tile_cols) {
    const std::int64_t end = std::min(x0 + tile_cols, g.out_w);
    const std::int64_t window = axis_tap<std::int64_t>(g.w, x0).a / e * e;
    if ((axis_tap<std::int64_t>(g.w, end - 1).b - window) / e + 1 > kPipeChunks - 1) return false;
  }
  return true;
}

template <typename In, typename Out>
using PlaneKernel = void (*)(const In*, Out*, Planes);

// Whether the plane kernels may index `input` with 32 bits: its taps are byte offsets (in_bytes), so its extent in
// bytes, not only in elements, must stay below 2^31.
bool plane_index_fits(const ConstTensorView& input) {
  return input.layout().extent() < (std::int64_t{1} << 31) / static_cast<std::int64_t>(element_size(input.dtype()));
}

// The kernel for a plane launch: nearest, linear staged through shared memory, or linear; packed or not (Cols 8:
// nearest and packed only).
template <typename In, typename Out, int Cols, typename Index>
PlaneKernel<In, Out> plane_kernel_for(bool nearest, bool packed, bool staged) {
  if constexpr (Cols == 8) {
    return plane_kernel<In, Out, true, true, 8, Index>;
  } else {
    if (nearest) {
      return packed ? plane_kernel<In, Out, true, true, 4, Index> : plane_kernel<In, Out, true, false, 4, Index>;
    }
    if (staged) return staged_plane_kernel<In, Out, Index>;
    return packed ? plane_kernel<In, Out, false, true, 4, Index> : plane_kernel<In, Out, false, false, 4, Index>;
  }
}

template <typename In, typename Out, int Cols>
void launch_planes(const ConstTensorView& input, const TensorView& output, Planes g, bool nearest, bool packed,
                   const ExecOptions& options) {
  // 32 / Cols rows a thread where that still gives every multiprocessor a few blocks, fewer on small outputs; then
  // each block takes as many planes as keep about 32 blocks a multiprocessor (its row and column taps serve them all;
  // the pipelined kernel: kPipeBlocks).
  const std::int64_t tiles_x = (g.out_w + kTileCols<Cols> - 1) / kTileCols<Cols>;
  const std::int64_t multiprocessors = device_limits(options.device).multiprocessors;
  const auto tiles_y = [&] {
    const std::int64_t tile_h = static_cast<std::int64_t>(kBlockRows) * g.rows_per_thread;
    return (g.out_h + tile_h - 1) / tile_h;
  };
  g.rows_per_thread = kMaxRowsPerThread<Cols>;
  while (g.rows_per_thread > 1 && tiles_x * g.count * tiles_y() < 8 * multiprocessors) g.rows_per_thread /= 2;
  const bool staged = Cols == kStagedCols && !nearest && packed && staged_rows_fit(g);
  const bool index32 = plane_index_fits(input) && fits_32_bits(output.layout());
  const std::int64_t tiles = tiles_x * tiles_y();
  const dim3 block(kWarp, kBlockRows);
  const auto grid_of = [&](std::int64_t planes_per_block) {
    const std::int64_t blocks_z = (g.count + planes_per_block - 1) / planes_per_block;
    return dim3(static_cast<unsigned>(std::min<std::int64_t>(tiles_x, 65535 * 1024)),
                static_cast<unsigned>(std::min<std::int64_t>(tiles_y(), 65535)),
                static_cast<unsigned>(std::min<std::int64_t>(blocks_z, 65535)));
  };
  if constexpr (std::is_same_v<In, __half> && std::is_same_v<Out, __half>) {
    // Upscales and downscales by 2 with taps at fixed positions: 8 output columns a thread, 8 or 2 rows.
    const auto* const from = static_cast<const __half*>(input.data());
    auto* const to = static_cast<__half*>(output.data());
    const cudaStream_t stream = stream_of(options);
    if (nearest && index32 && doubling_fits(g, from, to, true)) {
      doubling_nearest_kernel<<<pair_blocks(g, 2 * kPairRows), kPairThreads, 0, stream>>>(from, to, g);
      return;
    }
    if (!nearest && index32 && doubling_fits(g, from, to, false)) {
      doubling_kernel<<<pair_blocks(g, 2 * kPairRows), kPairThreads, 0, stream>>>(from, to, g);
      return;
    }
    if (!nearest && index32 && halving_fits(g, from, to)) {
      halving_kernel<<<pair_blocks(g, kHalfRows), kPairThreads, 0, stream>>>(from, to, g);
      return;
    }
    if (staged && index32 && device_limits(options.device).compute_major >= 8 && piped_fits<In>(g, input.data())) {
      // Planes a block for about kPipeBlocks blocks a multiprocessor: several each, so that its copies run ahead.
      const std::int64_t planes_per_block = std::max<std::int64_t>(
          1, (tiles * g.count + kPipeBlocks * multiprocessors - 1) / (kPipeBlocks * multiprocessors));
      piped_plane_kernel<In, Out><<<grid_of(planes_per_block), block, 0, stream_of(options)>>>(
          static_cast<const In*>(input.data()), static_cast<Out*>(output.data()), g);
      return;
    }
  }
  const std::int64_t planes_per_block = std::max<std::int64_t>(1, tiles * g.count / (32 * multiprocessors));
  const dim3 grid = grid_of(planes_per_block);
  const auto kernel = index32 ? plane_kernel_for<In, Out, Cols, std::int32_t>(nearest, packed, staged)
                              : plane_kernel_for<In, Out, Cols, std::int64_t>(nearest, packed, staged);
  kernel<<<grid, block, 0, stream_of(options)>>>(static_cast<const In*>(input.data()),
                                                 static_cast<Out*>(output.data()), g);
}

// Runs the plane kernel over `output`: its last two axes are H and W (rules h and w), every other axis is a plane
// axis (at most 3).
void run_planes(const ConstTensorView& input, const TensorView& output, const Axis& h, const Axis& w, bool nearest,
                const ExecOptions& options) {
  const int rank = output.rank();
  Planes g{};
  // The plane axes, each of size > 1; neighbours that step through both tensors as one axis would (a packed N x C:
  // N * C planes) become one, so that the kernels split a plane index with fewer divisions (none for one axis).
  g.count = 1;
  for (int a = 0; a < rank - 2; ++a) {
    const std::int64_t size = output.size(a);
    g.count *= size;
    if (size == 1) continue;
    const int last = g.outer - 1;
    if (g.outer > 0 && g.in_stride[last] == input.stride(a) * size && g.out_stride[last] == output.stride(a) * size) {
      g.size[last] *= size;
      g.in_stride[last] = input.stride(a);
      g.out_stride[last] = output.stride(a);
    } else {
      g.size[g.outer] = size;
      g.in_stride[g.outer] = input.stride(a);
      g.out_stride[g.outer] = output.stride(a);
      ++g.outer;
    }
  }
  g.out_h = output.size(rank - 2);
  g.out_w = output.size(rank - 1);
  g.out_stride_h = output.stride(rank - 2);
  g.out_stride_w = output.stride(rank - 1);
  g.h = h;
  g.w = w;
  // Packed at `cols`: a thread's `cols` columns are neighbours in memory, on a boundary of `cols` elements in every
  // row and plane, and its store is 16 bytes aligned (8 for four float16). Not where W shrinks more than 2x: a warp's
  // loads would then spread over 4x more cache lines than with its 32 columns side by side, which costs more than the
  // stores save (1080p -> 224 took 0.018 ms packed, 0.010 not).
  const auto packed_at = [&](std::int64_t cols) {
    const auto aligned = [&](std::int64_t stride, std::int64_t size) { return size == 1 || stride % cols == 0; };
    bool packed = g.out_stride_w == 1 && g.out_w % cols == 0 && aligned(g.out_stride_h, g.out_h) &&
                  !(g.w.scale < 0.5f) &&
                  reinterpret_cast<std::uintptr_t>(output.data()) % (cols * element_size(output.dtype())) == 0;
    for (int a = 0; a < g.outer; ++a) packed = packed && aligned(g.out_stride[a], g.size[a]);
    return packed;
  };
  dispatch_types(input.dtype(), output.dtype(), [&](auto* in_tag, auto* out_tag) {
    using In = std::remove_pointer_t<decltype(in_tag)>;
    using Out = std::remove_pointer_t<decltype(out_tag)>;
    if constexpr (sizeof(Out) == 2) {
      if (nearest && packed_at(8)) return launch_planes<In, Out, 8>(input, output, g, nearest, true, options);
    }
    launch_planes<In, Out, 4>(input, output, g, nearest, packed_at(4), options);
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
      const AntialiasSpan taps = antialias_span(r, a.scale[A]);
      if (taps.first < 0) {
        return 1.0f * combine<A + 1>(a, o, offset + static_cast<std::int64_t>(floorf(r.xc)) * stride);
      }
      float acc = 0.0f;
      for (std::int64_t i = taps.first; i <= taps.last; ++i) {
        const float w = antialias_weight(i, r.xc, a.scale[A]) / taps.total;
        const float v = combine<A + 1>(a, o, offset + i * stride);
        acc = i == taps.first ? w * v : weighted_tap(acc, w, v);
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

// ---- antialiased H and W: separable, each output index's taps computed once ----
//
// The generic kernel evaluates combine<2> for every output element: for each of its H taps, combine<3>'s whole W sum,
// with every tap's weight computed again (a 1080p photo to 224 x 224: about 180 taps and 400 weight evaluations an
// output element). Where H and W are both antialiased (linear, scale < 1) and N and C select their own index, the
// same values come from three kernels: the taps of each output index of H and of W (combine's first, count and
// normalized weights, from the same functions: antialias_range, antialias_weight, the same float sums); every input
// row's W sums into a float32 buffer (combine<3> for each row and output column, its taps in the same order); and the
// H sums of those (combine<2>, reading combine<3>'s values instead of evaluating them). The floats are the generic
// kernel's, so the bits are the reference's.

// One axis's taps: output index o reads count[o] input indices from first[o], weights[o * max_taps + k] each.
struct TapTable {
  std::int32_t* first;
  std::int32_t* count;
  float* weights;
  std::int64_t max_taps;
};

// combine's tap search for an antialiased axis, for every output index.
__global__ void antialias_taps_kernel(TapTable t, std::int64_t n_out, std::int64_t n_in, float scale, float ip,
                                      float op) {
  for (std::int64_t o = first_thread(); o < n_out; o += thread_step()) {
    const float x = resample_source_coord(o, scale, ip, op);
    const AntialiasRange r = antialias_range(x, n_in, scale);
    const AntialiasSpan taps = antialias_span(r, scale);
    float* weights = t.weights + o * t.max_taps;
    if (taps.first < 0) {  // combine's guard: the value at floor(xc), times 1
      t.first[o] = static_cast<std::int32_t>(floorf(r.xc));
      t.count[o] = 1;
      weights[0] = 1.0f;
      continue;
    }
    t.first[o] = static_cast<std::int32_t>(taps.first);
    t.count[o] = static_cast<std::int32_t>(taps.last - taps.first + 1);
    for (std::int64_t i = taps.first; i <= taps.last; ++i) {
      weights[i - taps.first] = antialias_weight(i, r.xc, scale) / taps.total;
    }
  }
}

// combine<3> for the input rows [row0, row0 + span) of every plane (the rows some output row reads) and every output
// column: rows[(plane * span + h - row0) * w_out + ow].
__global__ void antialias_rows_kernel(DeviceView in, std::int64_t channels, std::int64_t row0, std::int64_t span,
                                      TapTable w_taps, std::int64_t w_out, float* rows, std::int64_t total) {
  for (std::int64_t e = first_thread(); e < total; e += thread_step()) {
    const std::int64_t ow = e % w_out;
    const std::int64_t h = row0 + (e / w_out) % span;
    const std::int64_t plane = e / (w_out * span);
    const std::int64_t offset = (plane / channels) * in.stride[0] + (plane % channels) * in.stride[1] + h * in.stride[2];
    const std::int64_t first = w_taps.first[ow];
    const std::int64_t count = w_taps.count[ow];
    const float* weights = w_taps.weights + ow * w_taps.max_taps;
    float acc = 0.0f;
    for (std::int64_t k = 0; k < count; ++k) {
      const float v = load(in, offset + (first + k) * in.stride[3]);
      acc = k == 0 ? weights[k] * v : weighted_tap(acc, weights[k], v);
    }
    rows[e] = acc;
  }
}

// combine<2> over the rows' values (rows [row0, row0 + span) of each plane), stored as the generic kernel stores.
__global__ void antialias_columns_kernel(const float* rows, std::int64_t row0, std::int64_t span,
                                         std::int64_t channels, TapTable h_taps, DeviceView out, std::int64_t total) {
  const std::int64_t w_out = out.size[3];
  const std::int64_t h_out = out.size[2];
  for (std::int64_t e = first_thread(); e < total; e += thread_step()) {
    const std::int64_t ow = e % w_out;
    const std::int64_t oh = (e / w_out) % h_out;
    const std::int64_t plane = e / (w_out * h_out);
    const std::int64_t first = h_taps.first[oh];
    const std::int64_t count = h_taps.count[oh];
    const float* weights = h_taps.weights + oh * h_taps.max_taps;
    const float* column = rows + (plane * span + first - row0) * w_out + ow;
    float acc = 0.0f;
    for (std::int64_t k = 0; k < count; ++k) {
      const float v = column[k * w_out];
      acc = k == 0 ? weights[k] * v : weighted_tap(acc, weights[k], v);
    }
    const std::int64_t offset = (plane / channels) * out.stride[0] + (plane % channels) * out.stride[1] +
                                oh * out.stride[2] + ow * out.stride[3];
    store_computed(out, offset, acc);
  }
}

// The most taps an output index of an antialiased axis can have: antialias_range's width (its support 1 / scale on
// each side, one more index on each, and room for the float rounding of xc +- support), no more than the axis.
std::int64_t most_antialias_taps(std::int64_t n_in, float scale) {
  // The float support 1.0f / scale may be above the exact one by half an ulp: the larger, with room.
  const double support = std::max(1.0 / static_cast<double>(scale), static_cast<double>(1.0f / scale)) * (1.0 + 0x1p-20);
  const double width = 2.0 * support + 10.0;
  return width < static_cast<double>(n_in) ? static_cast<std::int64_t>(width) : n_in;
}

// The separable path where it applies (see above); false where it does not (the caller runs the generic kernel):
// not both axes antialiased, output rows that read few of the input's rows, tables and rows over kMostBytes, no
// memory pool. The caller has checked that N and C select their own index.
bool resample_antialiased_separable(const ConstTensorView& input, const TensorView& output, const ResampleParams& p,
                                    const ExecOptions& options) {
  // Scratch is taken from rsz's pool, which keeps what it reserved: a bound on what this path adds to it.
  constexpr std::size_t kMostBytes = std::size_t{64} << 20;
  if (p.interpolation != InterpolationMode::Linear || !p.antialiased || !(p.scales[2] < 1.0f) ||
      !(p.scales[3] < 1.0f) || input.rank() != 4) {
    return false;
  }
  const std::int64_t h_in = input.size(2);
  const std::int64_t w_in = input.size(3);
  const std::int64_t h_out = output.size(2);
  const std::int64_t w_out = output.size(3);
  const std::int64_t planes = output.size(0) * output.size(1);
  constexpr std::int64_t kMostIndex = 0x7fffffff;  // the tables' first indices are int32
  if (planes == 0 || h_out == 0 || w_out == 0 || h_in > kMostIndex || w_in > kMostIndex) return false;
  const std::int64_t h_taps = most_antialias_taps(h_in, p.scales[2]);
  const std::int64_t w_taps = most_antialias_taps(w_in, p.scales[3]);
  // The input rows the output rows read: within antialias_range of the first and the last output row (the source
  // coordinate grows with the output index), the same functions as the kernels'.
  const auto range_of = [&](std::int64_t o) {
    return antialias_range(resample_source_coord(o, p.scales[2], p.input_pixel_offsets[2], p.output_pixel_offsets[2]),
                           h_in, p.scales[2]);
  };
  // The same rows as the staging of a host input copies (backend_cuda.cu's resample_reads): host and device compute
  // them alike (a division, a subtraction, floor and ceil: nothing a compiler may contract).
  const std::int64_t row0 = std::min(range_of(0).lo, range_of(h_out - 1).lo);
  const std::int64_t span = std::max(range_of(0).hi, range_of(h_out - 1).hi) - row0 + 1;
  // Each of those rows' W sums is computed once: not where the output rows read fewer rows than that (a few output
  // rows far apart, with a scale that does not make the input's height), whose W sums the generic kernel computes
  // for the rows they read alone.
  if (span < 1 || static_cast<double>(h_out) * static_cast<double>(h_taps) < static_cast<double>(span)) return false;
  // Four bytes an entry: the two tables' first and count (int32) and weights, and the rows (float32).
  const double entries = 2.0 * static_cast<double>(h_out + w_out) + static_cast<double>(h_out) * static_cast<double>(h_taps) +
                         static_cast<double>(w_out) * static_cast<double>(w_taps) +
                         static_cast<double>(planes) * static_cast<double>(span) * static_cast<double>(w_out);
  if (4.0 * entries + 7.0 * 256.0 > static_cast<double>(kMostBytes)) return false;
  const auto aligned = [](std::int64_t count) { return static_cast<std::size_t>((4 * count + 255) / 256 * 256); };
  const std::int64_t row_count = planes * span * w_out;
  const std::size_t bytes = 2 * aligned(h_out) + 2 * aligned(w_out) + aligned(h_out * h_taps) + aligned(w_out * w_taps) +
                            aligned(row_count);
  // Where the pool cannot give the memory, the generic kernel (which needs none) runs instead.
  std::optional<Scratch> scratch;
  try {
    scratch.emplace("resample", "antialiasing tables and rows", bytes, options);
  } catch (const rsz::Error&) {
    return false;
  }
  if (scratch->data() == nullptr) return false;
  auto* at = static_cast<std::uint8_t*>(scratch->data());
  const auto take = [&](std::int64_t count) {  // `count` four-byte entries
    std::uint8_t* block = at;
    at += aligned(count);
    return block;
  };
  TapTable h_table{reinterpret_cast<std::int32_t*>(take(h_out)), reinterpret_cast<std::int32_t*>(take(h_out)),
                   reinterpret_cast<float*>(take(h_out * h_taps)), h_taps};
  TapTable w_table{reinterpret_cast<std::int32_t*>(take(w_out)), reinterpret_cast<std::int32_t*>(take(w_out)),
                   reinterpret_cast<float*>(take(w_out * w_taps)), w_taps};
  auto* rows = reinterpret_cast<float*>(take(row_count));
  const cudaStream_t stream = stream_of(options);
  antialias_taps_kernel<<<grid_for(h_out), 256, 0, stream>>>(h_table, h_out, h_in, p.scales[2],
                                                              p.input_pixel_offsets[2], p.output_pixel_offsets[2]);
  antialias_taps_kernel<<<grid_for(w_out), 256, 0, stream>>>(w_table, w_out, w_in, p.scales[3],
                                                              p.input_pixel_offsets[3], p.output_pixel_offsets[3]);
  antialias_rows_kernel<<<grid_for(row_count), 256, 0, stream>>>(device_view(input), output.size(1), row0, span,
                                                                   w_table, w_out, rows, row_count);
  const std::int64_t out_total = planes * h_out * w_out;
  antialias_columns_kernel<<<grid_for(out_total), 256, 0, stream>>>(rows, row0, span, output.size(1), h_table,
                                                                     device_view(output), out_total);
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
  check_device_pointer("resample", "input", input, options.device);
  check_device_pointer("resample", "output", output, options.device);
  const bool nearest = p.interpolation == InterpolationMode::Nearest;
  if (selects_own_index(input, output, p, 0) && selects_own_index(input, output, p, 1) &&
      !(p.antialiased && !nearest && (p.scales[2] < 1.0f || p.scales[3] < 1.0f))) {
    run_planes(input, output, resample_axis(input, p, 2), resample_axis(input, p, 3), nearest, options);
  } else if (!(selects_own_index(input, output, p, 0) && selects_own_index(input, output, p, 1) &&
               resample_antialiased_separable(input, output, p, options))) {
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
  check_device_pointer("upsample2d", "input", input, options.device);
  check_device_pointer("upsample2d", "output", output, options.device);
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
