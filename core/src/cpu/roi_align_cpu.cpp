// ROI_ALIGN on the CPU. Per ROI, the sample positions of every output column and row are computed once (the
// out-of-bounds test, the clamped taps and weights) and shared by all channels. Samples are read, combined and
// accumulated exactly as in the reference, so results are bit-identical to it for any thread count (a NaN result is
// stored as the canonical NaN, SEMANTICS.md §0, as the reference stores it).
//
// Two paths:
// * many channels: per batch and block of channels, the map is copied to rows of W x block (channels-last: float32,
//   or float16 bits for float16 input, widened per tap), then every ROI is pooled over the block with the four taps
//   of a sample being contiguous runs of channels (one vector op serves 8 channels), and its result transposed back
//   to planes in cache. Where every thread gets four blocks or more, blocks are one cache line a pixel (16 float32 or
//   32 float16 channels) and each thread copies its blocks into a ring of bands of 8 rows, only as many as the tallest
//   ROI spans, so the copy stays in the core's cache; else teams of threads share whole-block copies of up to 32
//   channels (run_channels_last);
// * few channels: per (ROI, channel), separably: each source row a y sample needs is widened once to float32 and
//   lerped along x at every x sample (kept in a two-row cache, since y samples visit rows in order), then every y
//   sample is a vector lerp of two such rows over the output columns. x samples are stored ix-major so the samples
//   ix of consecutive output columns are contiguous.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <numeric>
#include <thread>
#include <type_traits>
#include <vector>

#include "cpu/cpu.h"
#include "cpu/parallel.h"
#include "cpu/roi_tables.h"
#include "cpu/rows.h"
#include "cpu/scratch.h"
#include "cpu/simd.h"
#include "detail/access.h"
#include "detail/coords.h"
#include "reference/reference.h"
#include "rsz/float16.h"

namespace rsz::cpu {
namespace {

// Table storage of one call: every ROI's two axes in one allocation, each axis's four arrays side by side (an
// axis's entries are read together, and a ROI's tables stay within a few cache lines of one another).
class TableArena {
 public:
  // The bytes of an axis of `count` entries: its four arrays, rounded up to keep the next axis's int64s aligned.
  static std::size_t bytes(std::size_t count) {
    return (count * (2 * sizeof(std::int64_t) + sizeof(float) + 1) + 7) / 8 * 8;
  }
  explicit TableArena(std::size_t bytes) : storage_(new std::byte[bytes]) {}
  // Gives `axis` the `count` entries that start `offset` bytes into the arena.
  void assign(RoiAxisTable& axis, std::size_t offset, std::size_t count) const {
    std::byte* const base = storage_.get() + offset;
    axis.t0.begin = reinterpret_cast<std::int64_t*>(base);
    axis.t1.begin = reinterpret_cast<std::int64_t*>(base) + count;
    axis.w.begin = reinterpret_cast<float*>(base + 2 * count * sizeof(std::int64_t));
    axis.inside.begin = reinterpret_cast<unsigned char*>(base + count * (2 * sizeof(std::int64_t) + sizeof(float)));
  }

 private:
  std::unique_ptr<std::byte[]> storage_;
};

// The sample count of an axis and its entries (out_size * samples).
std::uint32_t axis_samples(float extent, std::int64_t out_size, const RoiAlignParams& p) {
  return detail::roi_sample_count(extent, out_size, p.minimum_samples_per_output, p.maximum_samples_per_output);
}

// A ROI's sample counts per output element along x and y (SEMANTICS.md §3.2), computed once a call: the sample
// budget, the table sizes and the tables all use them.
struct RoiSamples {
  std::uint32_t x = 1;
  std::uint32_t y = 1;
};

// ROI r's box in the input's pixels (the spatial scales applied, in float32): x1, y1, x2, y2.
std::array<float, 4> scaled_box(const ConstTensorView& rois, std::int64_t r, const RoiAlignParams& p) {
  const std::int64_t roi_stride = rois.stride(rois.rank() - 2);
  const std::int64_t coord_stride = rois.stride(rois.rank() - 1);
  const auto coord = [&](int j) {
    return detail::load_element(rois.data(), rois.dtype(), r * roi_stride + j * coord_stride);
  };
  return {coord(0) * p.spatial_scale_x, coord(1) * p.spatial_scale_y, coord(2) * p.spatial_scale_x,
          coord(3) * p.spatial_scale_y};
}

// Entry e of the table is sample k of output index o, at e = o * samples + k, or e = k * out_size + o when
// `ix_major`. Offsets are index * stride - `base_index * stride`, where base_index is the smallest tap index when
// `relative` (the plane path reads a span of each row starting there) and 0 otherwise. The entries go to `arena`,
// `offset` bytes in.
RoiAxisTable make_axis(float start, float extent, std::uint32_t samples, std::int64_t out_size, std::int64_t in_size,
                       std::int64_t stride, bool ix_major, bool relative, const RoiAlignParams& p,
                       const TableArena& arena, std::size_t offset) {
  RoiAxisTable axis;
  axis.samples = samples;
  const auto count = static_cast<std::size_t>(out_size) * axis.samples;
  arena.assign(axis, offset, count);
  axis.lo = in_size;
  axis.hi = 0;
  for (std::int64_t o = 0; o < out_size; ++o) {
    for (std::uint32_t k = 0; k < axis.samples; ++k) {
      const std::size_t e = ix_major ? static_cast<std::size_t>(k) * static_cast<std::size_t>(out_size) +
                                           static_cast<std::size_t>(o)
                                     : static_cast<std::size_t>(o) * axis.samples + k;
      const float x = detail::roi_sample_coord(start, extent, out_size, axis.samples, o, k, p.input_pixel_offset,
                                               p.output_pixel_offset, p.align_regions_to_corners);
      axis.inside[e] = !(x < -1.0f || x > static_cast<float>(in_size));
      axis.all_inside = axis.all_inside && axis.inside[e];
      const float clamped = detail::clamp_coord(x, in_size);
      if (p.interpolation == InterpolationMode::Nearest) {
        axis.t0[e] = axis.t1[e] = detail::nearest_index(clamped, in_size);
        axis.w[e] = 0.0f;
      } else {
        const auto taps = detail::linear_taps(clamped, in_size);
        axis.t0[e] = taps.i0;
        axis.t1[e] = taps.i1;
        axis.w[e] = taps.w;
      }
      axis.lo = std::min(axis.lo, axis.t0[e]);
      axis.hi = std::max(axis.hi, std::max(axis.t0[e], axis.t1[e]));
    }
  }
  const std::int64_t base = relative ? axis.lo : 0;
  for (std::size_t e = 0; e < count; ++e) {
    axis.t0[e] = (axis.t0[e] - base) * stride;
    axis.t1[e] = (axis.t1[e] - base) * stride;
  }
  return axis;
}

struct RoiTables {
  std::int64_t batch = 0;
  RoiAxisTable x;
  RoiAxisTable y;
  float count = 1.0f;
};

// Stable sort of `order` by key(r) in [0, range): a counting sort where the histogram is small beside the ROIs,
// else a stable comparison sort (the same order either way).
template <typename Key>
void stable_sort_by(std::vector<std::int64_t>& order, std::int64_t range, const Key& key) {
  if (range > 4 * static_cast<std::int64_t>(order.size()) + 4096) {
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return key(a) < key(b); });
    return;
  }
  std::vector<std::int64_t> start(static_cast<std::size_t>(range) + 1, 0);
  for (const std::int64_t r : order) ++start[static_cast<std::size_t>(key(r)) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::int64_t> sorted(order.size());
  for (const std::int64_t r : order) sorted[static_cast<std::size_t>(start[static_cast<std::size_t>(key(r))]++)] = r;
  order.swap(sorted);
}

// Channels handled together by the team path (and the in-place one): a multiple of 8 (one AVX2 vector), wide enough
// that the per-sample decisions are shared by many channels, small enough that the H x W x block scratch map stays a
// fraction of the input (1/8 of it for 256 channels). The ring path takes blocks of one cache line a pixel.
constexpr std::int64_t kChannelBlock = 32;

// Channels-last pays when many channels share each sample's taps and weights.
constexpr std::int64_t kChannelsLastMinChannels = 8;

// Whether channels_last_copy can move the input's own elements (channel runs, or rows of unit stride) instead of
// widening them to float32: what a float16 map needs.
bool copies_elements(const ConstTensorView& input) { return input.stride(1) == 1 || input.stride(3) == 1; }

// Rows [y_begin, y_end) of channels [c0, c0 + count) of one batch's map as rows of W x pixel elements from `rows_at`
// on (pixel >= count, a multiple of 8; the extra channels are zero): float32, or float16 bits for a float16 input with
// unit W or C stride. Every element of those rows is written. Input of that element type is copied one channel run per
// pixel where channels are contiguous, else its rows with unit stride are transposed straight from the input; others
// are widened channel by channel into a small float32 buffer, then transposed.
template <typename T>
void copy_rows(const SimdKernels& vec, const ConstTensorView& input, std::int64_t batch, std::int64_t c0,
               std::int64_t count, std::int64_t pixel, std::int64_t y_begin, std::int64_t y_end, T* rows_at) {
  const std::int64_t width = input.size(3);
  // Where row y goes: row y - y_begin from rows_at.
  const auto row_at = [&](std::int64_t y) { return rows_at + (y - y_begin) * width * pixel; };
  constexpr DataType kType = std::is_same_v<T, float> ? DataType::Float32 : DataType::Float16;
  const bool direct = input.dtype() == kType && input.stride(3) == 1;
  // Channels-last input: each pixel's channels are one run to copy.
  const bool runs = input.dtype() == kType && input.stride(1) == 1;
  const auto transpose = vec.map<T>().transpose;
  // Rows are copied in bands, 8 channels at a time, so that each source channel is read as one run of kBand rows
  // while the band's part of the map stays in cache.
  constexpr std::int64_t kBand = 8;
  const auto source_row = [&](std::int64_t y) {
    return batch * input.stride(0) + c0 * input.stride(1) + y * input.stride(2);
  };
  if (runs) {
    const T* src = static_cast<const T*>(input.data());
    for (std::int64_t y = y_begin; y < y_end; ++y) {
      for (std::int64_t x = 0; x < width; ++x) {
        T* to = row_at(y) + x * pixel;
        std::memcpy(to, src + source_row(y) + x * input.stride(3), static_cast<std::size_t>(count) * sizeof(T));
        for (std::int64_t c = count; c < pixel; ++c) to[c] = T{0};
      }
    }
    return;
  }
  if (direct) {
    const T* src = static_cast<const T*>(input.data());
    for (std::int64_t y0 = y_begin; y0 < y_end; y0 += kBand) {
      const std::int64_t y1 = std::min(y_end, y0 + kBand);
      for (std::int64_t c = 0; c < count; c += 8) {
        for (std::int64_t y = y0; y < y1; ++y) {
          const T* from = src + source_row(y) + c * input.stride(1);
          const std::int64_t n = std::min<std::int64_t>(8, count - c);
          transpose(from, input.stride(1), n, width, row_at(y) + c, pixel);
        }
      }
      if (count == pixel) continue;
      for (std::int64_t y = y0; y < y1; ++y) {
        T* const row = row_at(y);
        for (std::int64_t x = 0; x < width; ++x) std::fill(row + x * pixel + count, row + (x + 1) * pixel, T{0});
      }
    }
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    std::vector<float> rows(static_cast<std::size_t>(pixel * width), 0.0f);
    for (std::int64_t y = y_begin; y < y_end; ++y) {
      for (std::int64_t c = 0; c < count; ++c) {
        load_row(vec, input.data(), input.dtype(), source_row(y) + c * input.stride(1), input.stride(3), width,
                 rows.data() + c * width);
      }
      // rows is pixel x width; the map row is width x pixel.
      transpose(rows.data(), width, pixel, width, row_at(y), pixel);
    }
  }
}

// Channels-last copies a team keeps at most: one being pooled while the next is copied (by threads that came to help,
// see run_channels_last). More would leave the cache: the copies of a 256 x 200 x 272 float32 map are 7 MB a block.
constexpr std::int64_t kRingBlocks = 2;

// Rows of the map per copy task (a band): the unit in which a block's copy is spread over the pooling that needs it.
// A pooling task is one ROI over one block.
constexpr std::int64_t kCopyRowsPerTask = 8;

// The band of map row `row` (a tap index, 0 or more).
constexpr std::int64_t band_of(std::int64_t row) { return row / kCopyRowsPerTask; }

// How many bands ahead of the ROIs that need them last the bands are copied: a thread that takes a pooling task then
// rarely finds its rows still being copied by its teammate (copied just before, they waited 0.9 ms of a 5.8 ms call
// on 16 threads).
constexpr std::int64_t kBandsAhead = 2;

// Tasks a thread claims at once from its team's counter: each claim is a locked add, which waits for the thread's
// streaming stores of output to reach memory (x86).
constexpr std::int64_t kClaimTasks = 2;

// How a call's work is laid out, and why (measured on 16 cores: bench/RESULTS_SCALING.md).
// Ring path (ring_bands > 0): each thread takes (batch, block) tasks in turn and keeps its copy of the block in a
// ring of ring_bands bands of kCopyRowsPerTask rows (the y tables point into it: band k in slot k % ring_bands). It
// copies the bands of the block in order, skipping those no ROI of the batch reads, and after band k pools the ROIs
// whose last band is k: their first band is at most ring_bands - 1 before, so all their rows are still there. No
// thread waits for another, and the ring (1.2 MB for the ROIs of bench/workloads.json over a 272-wide map) stays in
// the core's L2.
// Team path: threads work in teams of
// threads / gcd(threads, blocks), each team on blocks of its own (16 threads and 8 blocks of 32 channels: 8 teams of
// 2, a block each): a block's copy is read by the threads that wrote it, not by all of them, and no thread waits for
// work on another team's block. Within a block, the tasks are a sequence of copy bands and ROIs, each ROI just after
// the band it needs last (and the copies two bands ahead): the map's rows are read from memory a little at a time
// while the pooling goes on, instead of the whole block first (on 16 threads at once, that burst took longer than
// the pooling). A thread whose team is done helps the others with their remaining tasks, in their order. One thread
// takes its tasks in order: copy, pool, copy, pool... The copies go to scratch kept between calls (cpu/scratch.h),
// so pages are not faulted and zeroed anew on every call.
template <typename T>
void run_channels_last(const SimdKernels& vec, const ConstTensorView& input, const std::vector<RoiTables>& tables,
                       const TensorView& output, const RoiAlignParams& p, std::int64_t block_channels,
                       std::int64_t pixel, bool in_place, std::int64_t ring_bands, int threads) {
  const DataType type = output.dtype();
  const std::int64_t channels = output.size(1);
  const std::int64_t out_h = output.size(2);
  const std::int64_t out_w = output.size(3);
  const std::int64_t pixels = out_h * out_w;
  const std::int64_t height = input.size(2);
  const std::int64_t block_elements = height * input.size(3) * pixel;
  const std::int64_t blocks = (channels + block_channels - 1) / block_channels;
  const bool average = p.reduction == RoiReduction::Average;
  // Output planes whose rows follow each other are written with one row store per channel.
  const bool packed_planes = output.stride(3) == 1 && output.stride(2) == out_w;
  // A large output is written with streaming stores, from a block of planes transposed in cache.
  const bool stream = packed_planes && stream_output(output);
  const auto transpose = vec.map_f32.transpose;  // of the float32 results
  const PoolChannelsLast<T> pool = vec.map<T>().pool[average ? 1 : 0][static_cast<std::size_t>(pixel / 8 - 1)];
  const std::int64_t copy_tasks = (height + kCopyRowsPerTask - 1) / kCopyRowsPerTask;
  // The copy bands of the first and the last row a ROI's taps read.
  const auto band = [&](std::int64_t row) {
    return std::min(copy_tasks - 1, band_of(std::max<std::int64_t>(row, 0)));
  };
  // Threads work in teams, each team on blocks of its own: team t copies and pools blocks t, t + teams, ...
  const int teams = in_place ? 1 : static_cast<int>(std::gcd<std::int64_t>(threads, blocks));
  const std::int64_t team_blocks = blocks / teams;
  // Threads that help other teams may copy a team's next block while its own threads still pool the last one: two
  // slots a team then.
  const std::int64_t slots = threads > 1 ? std::min(kRingBlocks, team_blocks) : 1;
  // Each copy starts on a cache line (as the scratch does), so that a pixel of 32 channels spans as few lines as it
  // can.
  constexpr std::int64_t kLine = 64 / sizeof(T);
  const std::int64_t slot_elements = (block_elements + kLine - 1) / kLine * kLine;
  // A thread's ring of bands (ring path).
  const std::int64_t ring_elements =
      (ring_bands * kCopyRowsPerTask * input.size(3) * pixel + kLine - 1) / kLine * kLine;
  const Scratch maps(in_place ? 0
                     : ring_bands > 0 ? static_cast<std::size_t>(threads * ring_elements) * sizeof(T)
                                      : static_cast<std::size_t>(teams * slots * slot_elements) * sizeof(T));
  // ROIs grouped by batch and, within a batch, ordered by the band of their last row (then their first row), so that
  // a ROI is pooled soon after the band it needs last is copied, and consecutive ROIs (on a thread) overlap and find
  // their taps in cache. The order does not change any result. Two stable counting passes over the ROIs in index
  // order (by first row, then by batch and band) give the order (batch, band of the last row, first row, index) in a
  // few microseconds, where a comparison sort of those keys took 0.09 ms for 1000 ROIs, on one thread ahead of all
  // the pooling.
  std::vector<std::int64_t> order(tables.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  const auto roi_tables = [&](std::int64_t r) -> const RoiTables& { return tables[static_cast<std::size_t>(r)]; };
  stable_sort_by(order, height, [&](std::int64_t r) { return roi_tables(r).y.lo; });
  const std::int64_t bands = in_place ? 1 : copy_tasks;
  stable_sort_by(order, input.size(0) * bands, [&](std::int64_t r) {
    const RoiTables& t = roi_tables(r);
    return t.batch * bands + (in_place ? 0 : band(t.y.hi));
  });
  // A task's results (pixels x pixel, channels innermost) and their planes.
  struct Results {
    std::vector<float> res;
    std::vector<float> planes;
  };
  const auto results = [&] {
    return Results{std::vector<float>(static_cast<std::size_t>(pixels * pixel)),
                   std::vector<float>(static_cast<std::size_t>(pixels * pixel))};
  };
  // Pools ROI r over the block of channels [c0, c0 + block_channels) whose taps start at `base` and writes its planes.
  const auto pool_block = [&](Results& buffers, const T* base, std::int64_t c0, std::int64_t r) {
    std::vector<float>& res = buffers.res;
    std::vector<float>& planes = buffers.planes;
    const std::int64_t count = std::min(block_channels, channels - c0);
    const RoiTables& t = tables[static_cast<std::size_t>(r)];
    pool(t.x, t.y, base, out_h, out_w, p.out_of_bounds_input_value, t.count, res.data());
    vec.canonicalize_nans(res.data(), pixels * pixel);  // results are computed: a NaN is the canonical one
    // res is pixels x pixel (channels innermost); the output wants one plane per channel.
    transpose(res.data(), pixel, pixels, pixel, planes.data(), pixels);
    const std::int64_t plane = r * output.stride(0) + c0 * output.stride(1);
    if (packed_planes && output.stride(1) == pixels) {  // the block's planes are one run of the output
      store_row(vec, output.data(), type, plane, 1, count * pixels, planes.data(), stream);
      return;
    }
    for (std::int64_t c = 0; c < count; ++c) {
      const float* src = planes.data() + c * pixels;
      if (packed_planes) {
        store_row(vec, output.data(), type, plane + c * output.stride(1), 1, pixels, src, stream);
        continue;
      }
      for (std::int64_t oy = 0; oy < out_h; ++oy) {
        store_row(vec, output.data(), type, plane + c * output.stride(1) + oy * output.stride(2), output.stride(3),
                  out_w, src + oy * out_w);
      }
    }
  };
  if (ring_bands > 0) {
    // The ROIs of each batch: [begin, end) of `order`, and the bands some ROI of the batch reads.
    struct Group {
      std::size_t begin;
      std::size_t end;
      std::vector<unsigned char> read;
    };
    std::vector<Group> groups;
    for (std::size_t first = 0; first < order.size();) {
      Group g{first, first, std::vector<unsigned char>(static_cast<std::size_t>(copy_tasks), 0)};
      const std::int64_t batch = roi_tables(order[first]).batch;
      while (g.end < order.size() && roi_tables(order[g.end]).batch == batch) {
        const RoiTables& t = roi_tables(order[g.end++]);
        for (std::int64_t k = band(t.y.lo); k <= band(t.y.hi); ++k) g.read[static_cast<std::size_t>(k)] = 1;
      }
      first = g.end;
      groups.push_back(std::move(g));
    }
    const auto tasks = static_cast<std::int64_t>(groups.size()) * blocks;
    std::atomic<std::int64_t> next{0};
    // Worker w (at most one runs at a time per w) takes (batch, block) tasks in order and keeps its ring at slot w.
    parallel_for(threads, 1, threads, [&](std::int64_t begin, std::int64_t end) {
      Results buffers = results();
      for (std::int64_t w = begin; w < end; ++w) {
        T* const ring = maps.as<T>() + w * ring_elements;
        for (std::int64_t u = next.fetch_add(1); u < tasks; u = next.fetch_add(1)) {
          const Group& g = groups[static_cast<std::size_t>(u / blocks)];
          const std::int64_t c0 = (u % blocks) * block_channels;
          const std::int64_t batch = roi_tables(order[g.begin]).batch;
          std::size_t i = g.begin;
          for (std::int64_t k = 0; k < copy_tasks && i < g.end; ++k) {
            if (g.read[static_cast<std::size_t>(k)] != 0) {
              const std::int64_t y0 = k * kCopyRowsPerTask;
              copy_rows(vec, input, batch, c0, std::min(block_channels, channels - c0), pixel, y0,
                        std::min(height, y0 + kCopyRowsPerTask),
                        ring + (k % ring_bands) * kCopyRowsPerTask * input.size(3) * pixel);
            }
            for (; i < g.end && band(roi_tables(order[i]).y.hi) <= k; ++i) pool_block(buffers, ring, c0, order[i]);
          }
        }
      }
      if (stream) stream_fence();
    });
    return;
  }
  for (std::size_t first = 0; first < order.size();) {
    const std::int64_t batch = tables[static_cast<std::size_t>(order[first])].batch;
    std::size_t last = first;
    while (last < order.size() && tables[static_cast<std::size_t>(order[last])].batch == batch) ++last;
    const auto rois = static_cast<std::int64_t>(last - first);
    const auto roi = [&](std::int64_t i) { return order[first + static_cast<std::size_t>(i)]; };
    if (in_place) {
      // Each ROI over every block in turn: the blocks of one tap are neighbouring runs of the same pixel.
      const T* base = static_cast<const T*>(input.data()) + batch * input.stride(0);
      parallel_for(rois, 1, threads, [&](std::int64_t begin, std::int64_t end) {
        Results buffers = results();
        for (std::int64_t i = begin; i < end; ++i) {
          for (std::int64_t c0 = 0; c0 < channels; c0 += block_channels) pool_block(buffers, base + c0, c0, roi(i));
        }
        if (stream) stream_fence();
      });
      first = last;
      continue;
    }
    // The tasks of one block, in the order they are taken: copy band k as ~k, pooling ROI i as i. A band is copied
    // kBandsAhead bands before the ROIs whose last band it is are pooled, so that a thread that takes a pooling task
    // rarely finds its rows still being copied by another.
    std::vector<std::int64_t> seq;
    seq.reserve(static_cast<std::size_t>(copy_tasks + rois));
    {
      std::int64_t i = 0;
      for (std::int64_t k = 0; k < std::min(kBandsAhead, copy_tasks); ++k) seq.push_back(~k);
      for (std::int64_t k = 0; k < copy_tasks; ++k) {
        if (k + kBandsAhead < copy_tasks) seq.push_back(~(k + kBandsAhead));
        while (i < rois && band(tables[static_cast<std::size_t>(roi(i))].y.hi) <= k) seq.push_back(i++);
      }
      while (i < rois) seq.push_back(i++);
    }
    const auto block_tasks = static_cast<std::int64_t>(seq.size());
    const std::int64_t team_tasks = team_blocks * block_tasks;
    // Bands copied and ROIs pooled, a flag each per block, set with plain stores: an atomic add is a locked
    // instruction, which waits for the streaming stores of output before it to reach memory (x86).
    const std::unique_ptr<std::atomic<unsigned char>[]> copied(new std::atomic<unsigned char>[blocks * copy_tasks]);
    const std::unique_ptr<std::atomic<unsigned char>[]> pooled(new std::atomic<unsigned char>[blocks * rois]);
    for (std::int64_t i = 0; i < blocks * copy_tasks; ++i) copied[i].store(0, std::memory_order_relaxed);
    for (std::int64_t i = 0; i < blocks * rois; ++i) pooled[i].store(0, std::memory_order_relaxed);
    // The next task of each team, claimed kClaimTasks at a time (a locked add, see above), on a cache line each.
    struct alignas(64) Next {
      std::atomic<std::int64_t> task{0};
    };
    const std::unique_ptr<Next[]> next(new Next[static_cast<std::size_t>(teams)]);
    std::atomic<bool> failed{false};  // a task threw: nobody may wait for its work
    // Waits until flag is set; false when a task failed (parallel_for rethrows its exception).
    const auto wait_for = [&](const std::atomic<unsigned char>& flag) {
      while (flag.load(std::memory_order_acquire) == 0) {
        if (failed.load(std::memory_order_relaxed)) return false;
        std::this_thread::yield();
      }
      return true;
    };
    // Task u of team `team`. Tasks are claimed in order, and a task waits only for tasks before it in its team's
    // order (its bands, the pooling of the block that used its slot before), each taken by a thread that is running
    // it: the waits end.
    const auto run_task = [&](Results& buffers, std::int64_t team, std::int64_t u) {
      const std::int64_t m = u / block_tasks;
      const std::int64_t j = team + m * teams;
      const std::int64_t c0 = j * block_channels;
      T* const block_map = maps.as<T>() + (team * slots + m % slots) * slot_elements;
      const std::int64_t code = seq[static_cast<std::size_t>(u % block_tasks)];
      if (code < 0) {
        const std::int64_t k = ~code;
        if (m >= slots) {
          const std::int64_t before = j - slots * teams;  // the block whose copy this slot holds
          for (std::int64_t i = 0; i < rois; ++i) {
            if (!wait_for(pooled[before * rois + i])) return;
          }
        }
        const std::int64_t y0 = k * kCopyRowsPerTask;
        const std::int64_t y1 = std::min(height, y0 + kCopyRowsPerTask);
        copy_rows(vec, input, batch, c0, std::min(block_channels, channels - c0), pixel, y0, y1,
                  block_map + y0 * input.size(3) * pixel);
        copied[j * copy_tasks + k].store(1, std::memory_order_release);
        return;
      }
      const std::int64_t r = roi(code);
      const RoiTables& t = tables[static_cast<std::size_t>(r)];
      for (std::int64_t k = band(t.y.lo); copy_tasks > 0 && k <= band(t.y.hi); ++k) {
        if (!wait_for(copied[j * copy_tasks + k])) return;
      }
      pool_block(buffers, block_map, c0, r);
      pooled[j * rois + code].store(1, std::memory_order_release);
    };
    if (threads == 1) {  // one thread takes the tasks in order, without claiming them
      Results buffers = results();
      for (std::int64_t u = 0; u < team_tasks; ++u) run_task(buffers, 0, u);
      if (stream) stream_fence();
    } else {
      // Each thread works for its own team, then helps the others with what is left of theirs.
      parallel_for(threads, 1, threads, [&](std::int64_t begin, std::int64_t end) {
        Results buffers = results();
        for (std::int64_t thread = begin; thread < end; ++thread) {
          const std::int64_t own = thread * teams / threads;
          for (std::int64_t step = 0; step < teams; ++step) {
            const std::int64_t team = (own + step) % teams;
            std::atomic<std::int64_t>& task = next[static_cast<std::size_t>(team)].task;
            while (task.load(std::memory_order_relaxed) < team_tasks) {
              const std::int64_t u0 = task.fetch_add(kClaimTasks, std::memory_order_relaxed);
              try {
                for (std::int64_t u = u0; u < std::min(team_tasks, u0 + kClaimTasks); ++u) {
                  if (failed.load(std::memory_order_relaxed)) return;
                  run_task(buffers, team, u);
                }
              } catch (...) {
                failed.store(true, std::memory_order_relaxed);
                throw;
              }
            }
          }
        }
        if (stream) stream_fence();
      });
    }
    first = last;
  }
}

// Scratch of one thread of the plane path: the source row span, two x-lerped rows, the accumulators.
struct PlaneScratch {
  std::vector<float> span;
  std::vector<float> lerped[2];
  std::int64_t cached[2] = {-1, -1};
  std::vector<float> acc;
  std::vector<float> out;
};

void run_planes(const SimdKernels& vec, const ConstTensorView& input, const std::vector<RoiTables>& tables,
                const TensorView& output, const RoiAlignParams& p, int threads) {
  const DataType in_type = input.dtype();  // float32, float16, or unorm (widened as rows are loaded)
  const DataType type = output.dtype();
  const std::int64_t channels = output.size(1);
  const std::int64_t out_h = output.size(2);
  const std::int64_t out_w = output.size(3);
  const bool average = p.reduction == RoiReduction::Average;
  const float oob = p.out_of_bounds_input_value;
  const bool direct = in_type == DataType::Float32 && input.stride(3) == 1;
  const bool stream = stream_output(output);
  const auto units = static_cast<std::int64_t>(tables.size()) * channels;
  const bool unit_stride = input.stride(3) == 1;
  const auto elem = static_cast<std::int64_t>(element_size(in_type));
  parallel_for(units, 1, threads, [&](std::int64_t begin, std::int64_t end) {
    PlaneScratch s;
    s.acc.resize(static_cast<std::size_t>(out_w));
    s.out.resize(static_cast<std::size_t>(out_w));
    for (std::int64_t unit = begin; unit < end; ++unit) {
      const std::int64_t r = unit / channels;
      const std::int64_t c = unit % channels;
      const RoiTables& t = tables[static_cast<std::size_t>(r)];
      const std::int64_t plane = t.batch * input.stride(0) + c * input.stride(1);
      const std::uint32_t sx = t.x.samples;
      const std::uint32_t sy = t.y.samples;
      const std::int64_t n = out_w * sx;
      const std::int64_t span = t.x.hi - t.x.lo + 1;
      // The paired x taps read row[t0 + 1] for every sample, one past the span for its last element: in place
      // where that is still in the row, else from a copy with a zero after it.
      const bool in_place = direct && t.x.hi + 1 < input.size(3);
      if (!in_place) s.span.assign(static_cast<std::size_t>(span + 1), 0.0f);
      for (auto& l : s.lerped) l.resize(static_cast<std::size_t>(n));
      s.cached[0] = s.cached[1] = -1;
      // The x-lerped source row y, computed at most once while it stays in one of the two slots; `keep` is the
      // row the current sample also needs, whose slot must not be reused.
      const auto lerped_row = [&](std::int64_t y, std::int64_t keep) -> const float* {
        for (int k = 0; k < 2; ++k) {
          if (s.cached[k] == y) return s.lerped[k].data();
        }
        const int k = s.cached[0] == keep ? 1 : 0;
        const std::int64_t offset = plane + y * input.stride(2) + t.x.lo * input.stride(3);
        if (unit_stride && y + 1 < input.size(2)) {
          // The next row down is usually the next one needed (y samples are at most a row apart): fetched ahead.
          const char* next = static_cast<const char*>(input.data()) + (offset + input.stride(2)) * elem;
          for (std::int64_t b = 0; b < span * elem; b += 64) __builtin_prefetch(next + b);
        }
        const float* row = s.span.data();
        if (in_place) {
          row = static_cast<const float*>(input.data()) + offset;  // float32 with unit stride
        } else {
          load_row(vec, input.data(), in_type, offset, input.stride(3), span, s.span.data());
        }
        float* out = s.lerped[k].data();
        const std::int64_t done = vec.lerp_pairs(row, t.x.t0.data(), t.x.w.data(), n, out);
        lerp_taps(row, t.x.t0.data(), t.x.t1.data(), t.x.w.data(), done, n, out);
        s.cached[k] = y;
        return s.lerped[k].data();
      };
      const unsigned char* inside_x = t.x.all_inside ? nullptr : t.x.inside.data();
      for (std::int64_t oy = 0; oy < out_h; ++oy) {
        const std::int64_t row = r * output.stride(0) + c * output.stride(1) + oy * output.stride(2);
        for (std::uint32_t iy = 0; iy < sy; ++iy) {
          const auto ey = static_cast<std::size_t>(oy) * sy + iy;
          const PlaneFold fold{average, iy == 0, iy + 1 == sy, t.count, s.acc.data(), s.out.data()};
          if (!t.y.inside[ey]) {
            vec.accumulate_outside(sx, out_w, oob, fold);
            continue;
          }
          const float wy = t.y.w[ey];
          const float* top = lerped_row(t.y.t0[ey], wy == 0.0f ? t.y.t0[ey] : t.y.t1[ey]);
          const float* bottom = wy == 0.0f ? top : lerped_row(t.y.t1[ey], t.y.t0[ey]);
          vec.accumulate_y_sample(top, bottom, wy, inside_x, sx, out_w, oob, fold);
        }
        vec.canonicalize_nans(s.out.data(), out_w);  // results are computed: a NaN is the canonical one
        store_row(vec, output.data(), type, row, output.stride(3), out_w, s.out.data(), stream);
      }
    }
    if (stream) stream_fence();
  });
}

// The tabled ROI_ALIGN of ROIs whose tables fit kMaxTableEntries together (see roi_align_cpu).
void roi_align_tabled(const SimdKernels& vec, const ConstTensorView& input, const ConstTensorView& rois,
                      const ConstTensorView& batch_indices, const TensorView& output, const RoiAlignParams& p,
                      const RoiSamples* samples, int threads) {
  const DataType type = input.dtype();
  const std::int64_t roi_count = output.size(0);
  const std::int64_t channels = output.size(1);
  const std::int64_t out_h = output.size(2);
  const std::int64_t out_w = output.size(3);
  const std::int64_t index_stride = batch_indices.stride(batch_indices.rank() - 1);

  const bool channels_last = channels >= kChannelsLastMinChannels;
  // Channels-last: equal blocks of at most kChannelBlock channels, each stored as `pixel` elements (rounded up to a
  // whole vector, the extra lanes zero), so one set of tables (element offsets into the H x W x pixel copy, or into
  // the input itself when it is pooled in place) serves every block. Plane tables hold x offsets within the loaded
  // row span and y row indices.
  std::int64_t blocks = (channels + kChannelBlock - 1) / kChannelBlock;
  std::int64_t block_channels = channels_last ? (channels + blocks - 1) / blocks : 1;
  std::int64_t pixel = (block_channels + 7) / 8 * 8;
  // The map is gathered as float16 bits where the input is float16 and the CPU converts them (half the bytes;
  // widened exactly per tap), else as float32.
  const bool f16_map = type == DataType::Float16 && vec.f16_maps;
  const bool f16_copies = f16_map && copies_elements(input);  // the channels-last copies hold float16 bits
  // Channels-last input (unit channel stride) cut into equal blocks of whole vectors is pooled in place, without a
  // copy.
  const bool in_place = channels_last && input.stride(1) == 1 && block_channels == pixel &&
                        channels % block_channels == 0 && (type == DataType::Float32 || f16_map);
  // Copied maps take the ring path (run_channels_last) where every thread gets four blocks or more of pixels of one
  // cache line (16 float32 or 32 float16 channels): up to 1.28x faster than the teams on one thread of a 16-core
  // Xeon, and up to 1.16x on four. With fewer blocks a thread, one slow thread decides when the call ends: on 16
  // threads of that machine the ring path took 1.04-1.37x the time of the teams, which share out the last block's
  // tasks (bench/RESULTS_SCALING.md).
  std::int64_t ring_bands = 0;
  if (channels_last && !in_place) {
    const std::int64_t line = f16_copies ? 32 : 16;
    if ((channels + line - 1) / line >= 4 * static_cast<std::int64_t>(threads)) {
      ring_bands = 1;  // sized once the tables say how many bands a ROI reads
      blocks = (channels + line - 1) / line;
      block_channels = (channels + blocks - 1) / blocks;
      pixel = (block_channels + 7) / 8 * 8;
    }
  }
  const std::int64_t x_stride = in_place ? input.stride(3) : pixel;
  const std::int64_t y_stride = in_place ? input.stride(2) : pixel * input.size(3);
  const auto box = [&](std::int64_t r) { return scaled_box(rois, r, p); };
  // Where each ROI's tables start in the arena (bytes): its x axis, then its y axis.
  std::vector<std::size_t> offsets(static_cast<std::size_t>(roi_count) + 1, 0);
  for (std::int64_t r = 0; r < roi_count; ++r) {
    offsets[static_cast<std::size_t>(r) + 1] = offsets[static_cast<std::size_t>(r)] +
                                                TableArena::bytes(static_cast<std::size_t>(out_w) * samples[r].x) +
                                                TableArena::bytes(static_cast<std::size_t>(out_h) * samples[r].y);
  }
  const TableArena arena(offsets.back());
  std::vector<RoiTables> tables(static_cast<std::size_t>(roi_count));
  parallel_for(roi_count, 16, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      RoiTables& t = tables[static_cast<std::size_t>(r)];
      t.batch = static_cast<const std::uint32_t*>(batch_indices.data())[r * index_stride];
      const auto [x1, y1, x2, y2] = box(r);
      const std::size_t offset = offsets[static_cast<std::size_t>(r)];
      t.x = make_axis(x1, x2 - x1, samples[r].x, out_w, input.size(3), channels_last ? x_stride : 1, !channels_last,
                      !channels_last, p, arena, offset);
      t.y = make_axis(y1, y2 - y1, samples[r].y, out_h, input.size(2), channels_last ? y_stride : 1, false, false,
                      p, arena, offset + TableArena::bytes(static_cast<std::size_t>(out_w) * t.x.samples));
      t.count = static_cast<float>(static_cast<std::uint64_t>(t.x.samples) * t.y.samples);
    }
  });

  if (ring_bands > 0) {
    // A thread keeps the bands of the map the ROI it pools reads, and those of the ROIs after it (ordered by the
    // band they read last): as many bands as the tallest ROI reads (the whole map at most). Band k of the map
    // lives in slot k % ring_bands, so its rows' offsets in the y tables move there.
    const std::int64_t height = input.size(2);
    const std::int64_t map_bands = (height + kCopyRowsPerTask - 1) / kCopyRowsPerTask;
    for (const RoiTables& t : tables) {
      ring_bands = std::max(ring_bands, band_of(t.y.hi) - band_of(t.y.lo) + 1);
    }
    ring_bands = std::min(ring_bands, map_bands);
    const auto ring_offset = [&](std::int64_t offset) {
      const std::int64_t row = offset / y_stride;
      return (band_of(row) % ring_bands * kCopyRowsPerTask + row % kCopyRowsPerTask) * y_stride;
    };
    for (RoiTables& t : tables) {
      const auto count = static_cast<std::size_t>(out_h) * t.y.samples;
      for (std::size_t e = 0; e < count; ++e) {
        t.y.t0[e] = ring_offset(t.y.t0[e]);
        t.y.t1[e] = ring_offset(t.y.t1[e]);
      }
    }
  }
  if (channels_last) {
    if (f16_copies) {
      run_channels_last<std::uint16_t>(vec, input, tables, output, p, block_channels, pixel, in_place, ring_bands,
                                       threads);
    } else {
      run_channels_last<float>(vec, input, tables, output, p, block_channels, pixel, in_place, ring_bands, threads);
    }
  } else {
    run_planes(vec, input, tables, output, p, threads);
  }
}

// Sample tables are built for all ROIs of a call before any pooling, (OW * sx + OH * sy) entries of 21 bytes per ROI
// (and the plane path keeps two x-lerped rows of OW * sx floats per thread). Within the sample budget one ROI can ask
// for billions of entries (a 4e9-wide box over 16 output columns: sx = 2.5e8), so the tables of one pass are capped:
// about 88 MB.
constexpr std::uint64_t kMaxTableEntries = std::uint64_t{1} << 22;

// ROIs [first, first + count) of the call, as views of their own: the rows of rois and batch_indices, the output
// planes.
struct RoiRange {
  ConstTensorView rois;
  ConstTensorView batch_indices;
  TensorView output;
};

RoiRange roi_range(const ConstTensorView& rois, const ConstTensorView& batch_indices, const TensorView& output,
                   std::int64_t first, std::int64_t count) {
  const std::int64_t roi_stride = rois.stride(rois.rank() - 2);
  const std::int64_t coord_stride = rois.stride(rois.rank() - 1);
  const std::int64_t index_stride = batch_indices.stride(batch_indices.rank() - 1);
  const auto roi_elem = static_cast<std::int64_t>(element_size(rois.dtype()));
  const auto out_elem = static_cast<std::int64_t>(element_size(output.dtype()));
  return {ConstTensorView(static_cast<const std::byte*>(rois.data()) + first * roi_stride * roi_elem, rois.dtype(),
                          {count, 4}, {roi_stride, coord_stride}),
          ConstTensorView(static_cast<const std::uint32_t*>(batch_indices.data()) + first * index_stride,
                          DataType::UInt32, {count}, {index_stride}),
          TensorView(static_cast<std::byte*>(output.data()) + first * output.stride(0) * out_elem, output.dtype(),
                     {count, output.size(1), output.size(2), output.size(3)},
                     {output.stride(0), output.stride(1), output.stride(2), output.stride(3)})};
}

}  // namespace

// ROIs go through the tables in consecutive groups whose tables fit kMaxTableEntries together (all of them at once
// in any ordinary call). A single ROI whose tables alone would not fit is computed by the reference twin, which
// evaluates each sample position as it goes: the same expressions, hence the same bits, in constant memory, with
// the channels spread over the threads.
void roi_align_cpu(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                   const TensorView& output, const RoiAlignParams& p, int threads) {
  const SimdKernels& vec = simd();
  const std::int64_t roi_count = output.size(0);
  const std::int64_t out_h = output.size(2);
  const std::int64_t out_w = output.size(3);
  std::vector<std::uint64_t> entries(static_cast<std::size_t>(roi_count));
  std::vector<RoiSamples> samples(static_cast<std::size_t>(roi_count));
  std::uint64_t total = 0;
  for (std::int64_t r = 0; r < roi_count; ++r) {
    const auto [x1, y1, x2, y2] = scaled_box(rois, r, p);
    const std::uint32_t sx = axis_samples(x2 - x1, out_w, p);
    const std::uint32_t sy = axis_samples(y2 - y1, out_h, p);
    samples[static_cast<std::size_t>(r)] = {sx, sy};
    const std::uint64_t x_entries = detail::saturating_mul(static_cast<std::uint64_t>(out_w), sx);
    const std::uint64_t y_entries = detail::saturating_mul(static_cast<std::uint64_t>(out_h), sy);
    const std::uint64_t e = x_entries > UINT64_MAX - y_entries ? UINT64_MAX : x_entries + y_entries;
    entries[static_cast<std::size_t>(r)] = e;
    total = total > UINT64_MAX - e ? UINT64_MAX : total + e;
  }
  if (total <= kMaxTableEntries) {
    roi_align_tabled(vec, input, rois, batch_indices, output, p, samples.data(), threads);
    return;
  }
  std::int64_t first = 0;
  std::uint64_t group = 0;
  const auto flush = [&](std::int64_t end) {
    if (end > first) {
      const RoiRange range = roi_range(rois, batch_indices, output, first, end - first);
      roi_align_tabled(vec, input, range.rois, range.batch_indices, range.output, p,
                       samples.data() + first, threads);
    }
    first = end;
    group = 0;
  };
  for (std::int64_t r = 0; r < roi_count; ++r) {
    const std::uint64_t e = entries[static_cast<std::size_t>(r)];
    if (e > kMaxTableEntries) {
      flush(r);
      const RoiRange range = roi_range(rois, batch_indices, output, r, 1);
      const auto elem = static_cast<std::int64_t>(element_size(input.dtype()));
      const auto out_elem = static_cast<std::int64_t>(element_size(output.dtype()));
      parallel_for(input.size(1), 1, threads, [&](std::int64_t begin, std::int64_t end) {
        const ConstTensorView in(static_cast<const std::byte*>(input.data()) + begin * input.stride(1) * elem,
                                 input.dtype(), {input.size(0), end - begin, input.size(2), input.size(3)},
                                 {input.stride(0), input.stride(1), input.stride(2), input.stride(3)});
        const TensorView& o = range.output;
        const TensorView out(static_cast<std::byte*>(o.data()) + begin * o.stride(1) * out_elem, o.dtype(),
                             {1, end - begin, o.size(2), o.size(3)}, {o.stride(0), o.stride(1), o.stride(2), o.stride(3)});
        reference::roi_align_reference(in, range.rois, range.batch_indices, out, p);
      });
      first = r + 1;
      continue;
    }
    if (group + e > kMaxTableEntries) flush(r);
    group += e;
  }
  flush(roi_count);
}

}  // namespace rsz::cpu
