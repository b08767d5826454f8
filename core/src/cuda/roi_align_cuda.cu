// ROI_ALIGN on CUDA, bit-identical to the reference twin.
//
// Three kernels, chosen per call from the shapes:
// * The shared-plane kernel, for many ROIs on feature maps whose plane fits in shared memory (FPN levels: 1000 ROIs
//   on 256 channels of 200 x 272). First roi_taps_kernel computes each ROI's sample taps per axis once (offsets and
//   weights, -1 for out of bounds: SEMANTICS.md §3's rules split by axis, exactly) into scratch memory; then one block
//   per (image, channel) plane, or two float16 / unorm planes side by side (one read fetches a tap of both), copies
//   the plane into shared memory once (16 bytes a thread where rows allow), and its warps take the ROIs of that image
//   from its work list (roi_order_kernel: the ROIs grouped by image; with one image, every ROI in order), the next
//   32 / G whenever a warp is free, G lanes each (G: the output width rounded up to 8, 16 or 32): lane ox computes
//   output column ox of every output row from the row taps of its group's table and its own column taps, each
//   sample's four reads coming from shared memory. Every input element is read from device memory once per call,
//   where a per-element kernel reads it about 20 times from the caches.
// * The gather kernel otherwise (crops from a large image): the same tap tables, then one thread per output element
//   reading its taps and its samples from device memory.
// * The per-element kernel where neither applies (no memory pools, outputs or inputs beyond 32-bit offsets): one
//   thread per output element, everything evaluated from the box as the reference does.
// Before them, unless the host checked the values already, roi_check_kernel applies SEMANTICS.md §3's value rules and
// the sample budget on the device (its blocks each a share of the ROIs, the last to finish combining their findings:
// the first bad ROI, the saturating total and the first ROI with the most samples, as the host check finds them) and
// writes the call's verdict, which every later kernel of the call reads before it writes anything outside scratch
// memory: a failing call writes nothing, and its error waits in the stream's DeferredRoiError record. For the
// shared-plane kernel's work lists it also counts the ROIs of each image.
#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include <cub/block/block_scan.cuh>

#include "common.cuh"

namespace rsz::detail::cuda {
namespace {

struct RoiArgs {
  DeviceView in;
  DeviceView rois;
  DeviceView indices;
  DeviceView out;
  RoiAlignParams p;
};

// Programmatic dependent launch (compute capability 9.0 and later): a kernel launched with it (launch_early) starts
// while the kernel before it in the stream runs, once that one's blocks have all let it (let_next_kernel_start), and
// waits for that kernel to finish and its writes to be visible at wait_for_previous_kernel: roi_taps_kernel computes
// the taps beside the value check, and the shared-plane kernel copies its first planes beside the work lists. Before
// 9.0 both are no-ops and the launch is plain.
__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// 16 bytes from device memory into shared memory: asynchronous from compute capability 8.0 on (done at
// wait_for_copies), a load and a store before.
__device__ __forceinline__ void copy_16_bytes(void* shared_target, const void* source) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(static_cast<unsigned>(
                                                                __cvta_generic_to_shared(shared_target))),
               "l"(source)
               : "memory");
#else
  *static_cast<uint4*>(shared_target) = __ldg(static_cast<const uint4*>(source));
#endif
}
__device__ __forceinline__ void wait_for_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// One ROI's box, scaled, and its samples per output element (SEMANTICS.md §3.1-3.2).
struct RoiBox {
  std::int64_t batch;
  float x1;
  float y1;
  float w;
  float h;
  std::uint32_t sx;
  std::uint32_t sy;
};

__device__ __forceinline__ RoiBox roi_box(const RoiArgs& a, std::int64_t r) {
  const int rois_rank = a.rois.rank;
  const std::int64_t roi_stride = a.rois.stride[rois_rank - 2];
  const std::int64_t coord_stride = a.rois.stride[rois_rank - 1];
  const std::int64_t index_stride = a.indices.stride[a.indices.rank - 1];
  const auto coord = [&](int j) { return load(a.rois, r * roi_stride + j * coord_stride); };
  RoiBox b;
  b.batch = static_cast<const std::uint32_t*>(a.indices.data)[r * index_stride];
  b.x1 = coord(0) * a.p.spatial_scale_x;
  b.y1 = coord(1) * a.p.spatial_scale_y;
  const float x2 = coord(2) * a.p.spatial_scale_x;
  const float y2 = coord(3) * a.p.spatial_scale_y;
  b.w = x2 - b.x1;
  b.h = y2 - b.y1;
  b.sx = roi_sample_count(b.w, a.out.size[3], a.p.minimum_samples_per_output, a.p.maximum_samples_per_output);
  b.sy = roi_sample_count(b.h, a.out.size[2], a.p.minimum_samples_per_output, a.p.maximum_samples_per_output);
  return b;
}

__device__ __forceinline__ float sample_x(const RoiArgs& a, const RoiBox& b, std::int64_t ox, std::uint32_t ix) {
  return roi_sample_coord(b.x1, b.w, a.out.size[3], b.sx, ox, ix, a.p.input_pixel_offset, a.p.output_pixel_offset,
                          a.p.align_regions_to_corners);
}
__device__ __forceinline__ float sample_y(const RoiArgs& a, const RoiBox& b, std::int64_t oy, std::uint32_t iy) {
  return roi_sample_coord(b.y1, b.h, a.out.size[2], b.sy, oy, iy, a.p.input_pixel_offset, a.p.output_pixel_offset,
                          a.p.align_regions_to_corners);
}

// §3.4-3.5 over one output element: the samples in row-major order, each read by read(x, y).
template <typename Read>
__device__ __forceinline__ float reduce_samples(const RoiArgs& a, const RoiBox& b, std::int64_t oy, std::int64_t ox,
                                                const Read& read) {
  float acc = 0.0f;
  bool first = true;
  for (std::uint32_t iy = 0; iy < b.sy; ++iy) {
    const float y = sample_y(a, b, oy, iy);
    for (std::uint32_t ix = 0; ix < b.sx; ++ix) {
      const float v = read(sample_x(a, b, ox, ix), y);
      if (a.p.reduction == RoiReduction::Average) {
        acc += v;
      } else if (first || v > acc) {
        acc = v;
      }
      first = false;
    }
  }
  const auto count = static_cast<float>(static_cast<std::uint64_t>(b.sx) * b.sy);
  return a.p.reduction == RoiReduction::Average ? acc / count : acc;
}

// §3.4: one sample of a plane whose element (y, x) is fetch(y, x).
template <typename Fetch>
__device__ __forceinline__ float read_sample(const RoiAlignParams& p, std::int64_t height, std::int64_t width, float x,
                                             float y, const Fetch& fetch) {
  if (!roi_sample_in_bounds(x, y, width, height)) return p.out_of_bounds_input_value;
  const float xc = clamp_coord(x, width);
  const float yc = clamp_coord(y, height);
  if (p.interpolation == InterpolationMode::Nearest) return fetch(nearest_index(yc, height), nearest_index(xc, width));
  const LinearTaps ty = linear_taps(yc, height);
  const LinearTaps tx = linear_taps(xc, width);
  const auto row = [&](std::int64_t yi) {
    const float v = fetch(yi, tx.i0);
    if (tx.w == 0.0f) return v;
    return lerp(v, fetch(yi, tx.i1), tx.w);
  };
  const float top = row(ty.i0);
  if (ty.w == 0.0f) return top;
  return lerp(top, row(ty.i1), ty.w);
}

// An entry of the shared-plane kernel's work lists: a ROI and its header's sample counts, so that a warp can read the
// entries of its next ROIs while it computes the last ones.
struct alignas(16) RoiWork {
  int roi;  // -1: none
  std::uint32_t sx;
  std::uint32_t sy;
  std::int32_t fits;
};

// The shared-plane kernel's work lists, built in two steps: roi_check_kernel counts the ROIs of each image and its
// last block turns the counts into the lists' starts, then roi_order_kernel places each ROI in its image's list.
struct WorkLists {
  int* counts;       // N, zero before roi_check_kernel
  int* starts;       // N + 1: image b's ROIs are order[starts[b] .. starts[b + 1])
  int* cursor;       // N: the next free place of each image's list
  RoiWork* order;    // R
};

constexpr int kCheckThreads = 512;  // roi_check_kernel's block

// The ROIs' counts of each image into the lists' starts (and cursors): the exclusive sums, by one block of
// roi_check_kernel.
__device__ void scan_counts(const WorkLists& w, int images) {
  using Scan = cub::BlockScan<int, kCheckThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ int carry;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (int first = 0; first <= images; first += kCheckThreads) {
    const int b = first + static_cast<int>(threadIdx.x);
    const int count = b < images ? w.counts[b] : 0;
    int start = 0;
    int sum = 0;
    Scan(scan).ExclusiveSum(count, start, sum);
    start += carry;
    if (b <= images) w.starts[b] = start;
    if (b < images) w.cursor[b] = start;
    __syncthreads();
    if (threadIdx.x == 0) carry += sum;
    __syncthreads();
  }
}

// Each ROI of this thread's share (a grid-stride loop) with a batch index in range into its image's slot of
// `slots`: one atomic a warp and image adds the warp's ROIs of that image, and place(r, at) gets the slot's value
// before them plus the ROI's rank among them. Every lane of a warp runs the same number of rounds: __match_any_sync
// takes the whole warp.
template <typename Place>
__device__ __forceinline__ void add_to_images(const RoiArgs& a, std::int64_t rois, int* slots, const Place& place) {
  const std::int64_t images = a.in.size[0];
  const std::int64_t index_stride = a.indices.stride[a.indices.rank - 1];
  const auto* const indices = static_cast<const std::uint32_t*>(a.indices.data);
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  for (std::int64_t first = first_thread() - lane; first < rois; first += thread_step()) {
    const std::int64_t r = first + lane;
    const std::uint32_t index = r < rois ? indices[r * index_stride] : UINT32_MAX;
    const int image = index < images ? static_cast<int>(index) : -1;
    const unsigned peers = __match_any_sync(0xffffffffu, image);
    const int leader = __ffs(peers) - 1;
    int at = 0;
    if (image >= 0 && lane == leader) at = atomicAdd(slots + image, __popc(peers));
    at = __shfl_sync(0xffffffffu, at, leader) + __popc(peers & ((1u << lane) - 1u));
    if (image >= 0) place(r, at);
  }
}

// ---- the device-side value check ----

// One thread's (then the block's) findings: the first ROI breaking a value rule (INT64_MAX: none), the saturating
// sample total, and the first ROI with the most samples.
struct CheckPart {
  std::int64_t bad;
  std::uint64_t total;
  std::uint64_t worst_samples;
  std::int64_t worst;
  std::uint32_t worst_sx;
  std::uint32_t worst_sy;
};

__device__ __forceinline__ void combine(CheckPart& a, const CheckPart& b) {
  a.bad = min(a.bad, b.bad);
  a.total = a.total > UINT64_MAX - b.total ? UINT64_MAX : a.total + b.total;
  if (b.worst_samples > a.worst_samples || (b.worst_samples == a.worst_samples && b.worst < a.worst)) {
    a.worst_samples = b.worst_samples;
    a.worst = b.worst;
    a.worst_sx = b.worst_sx;
    a.worst_sy = b.worst_sy;
  }
}

// ROI r's batch index and coordinates (as float32).
__device__ __forceinline__ void roi_values(const RoiArgs& a, std::int64_t r, std::uint32_t& index, float box[4]) {
  const int rank = a.rois.rank;
  index = static_cast<const std::uint32_t*>(a.indices.data)[r * a.indices.stride[a.indices.rank - 1]];
  for (int j = 0; j < 4; ++j) box[j] = load(a.rois, r * a.rois.stride[rank - 2] + j * a.rois.stride[rank - 1]);
}

// detail::check_roi's rules, as a predicate.
__device__ __forceinline__ bool roi_breaks_rules(const RoiArgs& a, std::int64_t r) {
  std::uint32_t index;
  float box[4];
  roi_values(a, r, index, box);
  if (index >= a.in.size[0]) return true;
  const float x1 = box[0] * a.p.spatial_scale_x, y1 = box[1] * a.p.spatial_scale_y;
  const float x2 = box[2] * a.p.spatial_scale_x, y2 = box[3] * a.p.spatial_scale_y;
  return !isfinite(x1) || !isfinite(y1) || !isfinite(x2) || !isfinite(y2) || !isfinite(x2 - x1) ||
         !isfinite(y2 - y1);
}

// The findings of a block's threads, combined into parts[0] (kCheckThreads of them).
__device__ __forceinline__ void combine_block(CheckPart* parts) {
  __syncthreads();
  for (unsigned half = kCheckThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) combine(parts[threadIdx.x], parts[threadIdx.x + half]);
    __syncthreads();
  }
}

// Each block checks its share of the ROIs (where verdict is not null) and leaves its findings in block_parts, and
// counts the ROIs of each image (where there are work lists); the last block to finish (ticket: zero before the
// launch) combines the findings and writes the verdict, and turns the counts into the lists' starts.
__global__ void __launch_bounds__(kCheckThreads) roi_check_kernel(RoiArgs a, std::int64_t rois,
                                                                  std::uint64_t max_samples, int* verdict,
                                                                  CheckPart* block_parts, unsigned* ticket,
                                                                  DeferredRoiError* record, WorkLists lists) {
  let_next_kernel_start();  // roi_taps_kernel computes the taps meanwhile
  __shared__ CheckPart parts[kCheckThreads];
  __shared__ bool last;
  const auto images = static_cast<int>(min(a.in.size[0], static_cast<std::int64_t>(INT32_MAX)));
  // The counts of each image (a batch index out of range: the call is refused, the ROI not counted).
  if (lists.counts != nullptr) add_to_images(a, rois, lists.counts, [](std::int64_t, int) {});
  const std::uint64_t per_sample = saturating_mul(
      static_cast<std::uint64_t>(a.in.size[1]),
      saturating_mul(static_cast<std::uint64_t>(a.out.size[2]), static_cast<std::uint64_t>(a.out.size[3])));
  CheckPart mine{INT64_MAX, 0, 0, INT64_MAX, 0, 0};
  for (std::int64_t r = first_thread(); verdict != nullptr && r < rois; r += thread_step()) {
    if (roi_breaks_rules(a, r)) {
      mine.bad = r;  // this thread's later ROIs come after it
      break;
    }
    const RoiBox b = roi_box(a, r);
    const std::uint64_t samples = saturating_mul(saturating_mul(per_sample, b.sx), b.sy);
    combine(mine, CheckPart{INT64_MAX, samples, samples, r, b.sx, b.sy});
  }
  if (verdict != nullptr) {
    parts[threadIdx.x] = mine;
    combine_block(parts);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (verdict != nullptr) block_parts[blockIdx.x] = parts[0];
    __threadfence();  // the findings and counts are visible before the ticket says so
    last = gridDim.x == 1 || atomicAdd(ticket, 1u) == gridDim.x - 1;  // one block: no ticket
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (lists.counts != nullptr) scan_counts(lists, images);
  if (verdict == nullptr) return;
  mine = CheckPart{INT64_MAX, 0, 0, INT64_MAX, 0, 0};
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kCheckThreads) combine(mine, block_parts[b]);
  parts[threadIdx.x] = mine;
  combine_block(parts);
  if (threadIdx.x != 0) return;
  const CheckPart all = parts[0];
  const int state = all.bad != INT64_MAX ? 1 : (max_samples != 0 && all.total > max_samples ? 2 : 0);
  *verdict = state;
  if (state == 0 || record->state != 0) return;  // the stream keeps its first error
  DeferredRoiError e{};
  if (state == 1) {
    e.roi = all.bad;
    roi_values(a, all.bad, e.batch_index, e.box);
    e.scale_x = a.p.spatial_scale_x;
    e.scale_y = a.p.spatial_scale_y;
    e.batch = a.in.size[0];
  } else {
    e.total = all.total;
    e.max_samples = max_samples;
    e.worst = all.worst;
    e.worst_sx = all.worst_sx;
    e.worst_sy = all.worst_sy;
    e.out_h = a.out.size[2];
    e.out_w = a.out.size[3];
    e.channels = static_cast<std::uint64_t>(a.in.size[1]);
  }
  e.sequence = record->sequence + 1;
  *record = e;
  __threadfence_system();
  record->state = state;
}

// Whether the call's values failed the device-side check (verdict null: they were checked on the host).
__device__ __forceinline__ bool refused(const int* verdict) { return verdict != nullptr && *verdict != 0; }

// ---- the per-element kernel ----

// One thread per output element; Index is 32-bit where the output is small enough (integer division is much
// faster), 64-bit otherwise.
template <typename Index>
__global__ void roi_align_kernel(RoiArgs a, std::int64_t total, const int* verdict) {
  if (refused(verdict)) return;
  const std::int64_t channels = a.out.size[1];
  const std::int64_t out_h = a.out.size[2];
  const std::int64_t out_w = a.out.size[3];
  for (std::int64_t flat = first_thread(); flat < total; flat += thread_step()) {
    const auto f = static_cast<Index>(flat);
    const auto w = static_cast<Index>(out_w);
    const auto h = static_cast<Index>(out_h);
    const std::int64_t ox = f % w;
    const std::int64_t oy = (f / w) % h;
    const std::int64_t c = (f / (w * h)) % static_cast<Index>(channels);
    const std::int64_t r = f / (w * h * static_cast<Index>(channels));
    const RoiBox b = roi_box(a, r);
    const std::int64_t plane = b.batch * a.in.stride[0] + c * a.in.stride[1];
    const float value = reduce_samples(a, b, oy, ox, [&](float x, float y) {
      return read_sample(a.p, a.in.size[2], a.in.size[3], x, y, [&](std::int64_t yi, std::int64_t xi) {
        return load(a.in, plane + yi * a.in.stride[2] + xi * a.in.stride[3]);
      });
    });
    store_computed(a.out, r * a.out.stride[0] + c * a.out.stride[1] + oy * a.out.stride[2] + ox * a.out.stride[3],
                   value);
  }
}

// ---- the shared-plane kernel ----

// 640 threads a block: their registers (96 a thread) fit one block a multiprocessor without spilling, and their row
// tap tables fit beside a float32 FPN plane's 219 KB (FPN-P2 on an H100: 1.377 -> 1.345 ms float32, 0.817 -> 0.805
// float16 against 16 warps; 24 spilled and took 2-5% longer; 21-23 untried).
constexpr int kPlaneWarps = 20;
constexpr int kTapCap = 32;      // taps per axis in a shared-plane kernel's record: OW * sx and OH * sy up to 32
constexpr int kTwoPlaneBatch = 4;  // 16-byte units of each plane a thread loads at once copying two planes

// One axis of one sample position: the element offsets of its two taps in a plane (the shared copy's or the
// input's; a < 0: the sample is out of bounds on this axis, SEMANTICS.md §3.4) and the weight of the second
// (nearest: a alone).
struct SampleTap {
  int a;
  int b;
  float w;
};

// The shared-plane kernel's form of a tap (its records and its warps' tables): the first tap's offset (-1 where the
// sample is out of bounds on this axis) and the weight of the second. The second tap is always the next row or
// column: where it is not (the last one, or nearest), the weight is 0 and lerp ignores its value; the shared plane
// has a padding row (and column, or the next row) so that its read stays in bounds.
struct RowTap {
  int a;
  float w;
};

__device__ __forceinline__ void put_tap(SampleTap* at, const SampleTap& t) { *at = t; }
__device__ __forceinline__ void put_tap(RowTap* at, const SampleTap& t) { *at = {t.a, t.w}; }

__device__ __forceinline__ SampleTap sample_tap(float x, std::int64_t n, std::int64_t stride, bool nearest) {
  if (x < -1.0f || x > static_cast<float>(n)) return {-1, -1, 0.0f};
  const float xc = clamp_coord(x, n);
  if (nearest) {
    const auto i = static_cast<int>(nearest_index(xc, n) * stride);
    return {i, i, 0.0f};
  }
  const LinearTaps t = linear_taps(xc, n);
  return {static_cast<int>(t.i0 * stride), static_cast<int>(t.i1 * stride), t.w};
}

// A ROI's sample taps, computed once a call by roi_taps_kernel into scratch memory: a header (its batch index, its
// samples per output element, whether its taps were written: OW * sx <= cap_x and OH * sy <= cap_y), and a record
// of cap_x column taps then cap_y row taps, as element offsets (index times stride_x or stride_y: the shared plane's
// 1 and pitch, or the input's strides).
struct RoiHeader {
  std::int64_t batch;
  std::uint32_t sx;
  std::uint32_t sy;
  std::int32_t fits;
};

struct TapLayout {
  int cap_x;
  int cap_y;
  std::int64_t stride_x;
  std::int64_t stride_y;
};

// Index: 32-bit where every ROI's record fits (the division by the record's length is much faster), 64-bit otherwise.
// Launched early, beside the value check: the taps of ROIs that the check refuses are computed too (into scratch
// memory, nothing else reads them), and the kernel waits for the check before it ends, so that the kernels after it
// see the verdict.
template <typename Tap, typename Index>
__global__ void roi_taps_kernel(RoiArgs a, std::int64_t rois, RoiHeader* headers, Tap* taps, TapLayout t) {
  let_next_kernel_start();  // the shared-plane kernel (with one image) copies its planes meanwhile
  const bool nearest = a.p.interpolation == InterpolationMode::Nearest;
  const std::int64_t out_h = a.out.size[2];
  const std::int64_t out_w = a.out.size[3];
  const auto record_taps = static_cast<Index>(t.cap_x + t.cap_y);
  const auto total = static_cast<Index>(rois) * record_taps;
  for (auto flat = static_cast<Index>(first_thread()); flat < total; flat += static_cast<Index>(thread_step())) {
    const auto r = static_cast<std::int64_t>(flat / record_taps);
    const auto j = static_cast<int>(flat % record_taps);
    const RoiBox b = roi_box(a, r);
    const std::uint64_t columns = static_cast<std::uint64_t>(out_w) * b.sx;
    const std::uint64_t rows = static_cast<std::uint64_t>(out_h) * b.sy;
    const bool fits = columns <= static_cast<std::uint64_t>(t.cap_x) && rows <= static_cast<std::uint64_t>(t.cap_y);
    if (j == 0) headers[r] = {b.batch, b.sx, b.sy, fits ? 1 : 0};
    if (!fits) continue;
    Tap* const record = taps + r * record_taps;
    if (j < t.cap_x) {
      if (static_cast<std::uint64_t>(j) < columns) {
        put_tap(record + j, sample_tap(sample_x(a, b, j / b.sx, j % b.sx), a.in.size[3], t.stride_x, nearest));
      }
    } else {
      const int k = j - t.cap_x;
      if (static_cast<std::uint64_t>(k) < rows) {
        put_tap(record + j, sample_tap(sample_y(a, b, k / b.sy, k % b.sy), a.in.size[2], t.stride_y, nearest));
      }
    }
  }
  wait_for_previous_kernel();
}

// Each ROI into its image's work list with its header's sample counts (after roi_check_kernel, which wrote the lists'
// starts, and roi_taps_kernel, the headers): one atomic a warp and image. The order within an image is not fixed, and
// need not be: every ROI's outputs are computed alone. With the lists, a block of the shared-plane kernel takes only
// its image's ROIs and its warps share them evenly, whatever the order of the batch indices.
__global__ void roi_order_kernel(RoiArgs a, int rois, const RoiHeader* __restrict__ headers, WorkLists lists,
                                 const int* verdict) {
  let_next_kernel_start();  // the shared-plane kernel copies its planes meanwhile
  if (refused(verdict)) return;
  add_to_images(a, rois, lists.cursor, [&](std::int64_t r, int at) {
    const RoiHeader h = headers[r];
    lists.order[at] = RoiWork{static_cast<int>(r), h.sx, h.sy, h.fits};
  });
}

// One sample from its row and column taps (SEMANTICS.md §3.4, split by axis), reading plane[offset]. Branch-free:
// an out-of-bounds tap (offset < 0) reads offset 0 instead, and the select returns out_of_bounds_input_value for it.
template <bool Nearest, typename In>
__device__ __forceinline__ float tap_sample(const In* plane, const SampleTap& y, const SampleTap& x, float outside) {
  const int ya = max(y.a, 0);
  const int xa = max(x.a, 0);
  float v;
  if constexpr (Nearest) {
    v = widen(plane[ya + xa]);
  } else {
    const int yb = max(y.b, 0);
    const int xb = max(x.b, 0);
    const float top = lerp(widen(plane[ya + xa]), widen(plane[ya + xb]), x.w);
    const float bottom = lerp(widen(plane[yb + xa]), widen(plane[yb + xb]), x.w);
    v = lerp(top, bottom, y.w);
  }
  return (y.a | x.a) < 0 ? outside : v;
}

// The reduction (§3.5) of a 2 x 2 sampled output's samples (row-major: v01 is the first row's second), in the
// reference's order.
__device__ __forceinline__ float reduce_four(float v00, float v01, float v10, float v11, bool average) {
  if (average) {
    float acc = 0.0f;
    acc += v00;
    acc += v01;
    acc += v10;
    acc += v11;
    return acc / 4.0f;
  }
  float value = v00;
  if (v01 > value) value = v01;
  if (v10 > value) value = v10;
  if (v11 > value) value = v11;
  return value;
}

// The reduction of a 2 x 2 sampled output from its row taps y0, y1 and column taps x0, x1, the four samples' reads
// in flight together.
template <bool Nearest, typename In>
__device__ __forceinline__ float reduce_2x2(const In* plane, const SampleTap& y0, const SampleTap& y1,
                                            const SampleTap& x0, const SampleTap& x1, bool average, float outside) {
  return reduce_four(tap_sample<Nearest>(plane, y0, x0, outside), tap_sample<Nearest>(plane, y0, x1, outside),
                     tap_sample<Nearest>(plane, y1, x0, outside), tap_sample<Nearest>(plane, y1, x1, outside),
                     average);
}

// The reduction of one output's samples from its sy row taps taps.y(ty + i) and sx column taps taps.x(tx + i), in
// the reference's order (2 x 2, the usual sampling ratio, unrolled).
template <bool Nearest, typename In, typename Taps>
__device__ __forceinline__ float reduce_taps(const In* plane, const Taps& taps, int ty, int tx, int sy, int sx,
                                             bool average, float outside) {
  if (sx == 2 && sy == 2) {
    return reduce_2x2<Nearest>(plane, taps.y(ty), taps.y(ty + 1), taps.x(tx), taps.x(tx + 1), average, outside);
  }
  float acc = 0.0f;
  bool first = true;
  for (int iy = 0; iy < sy; ++iy) {
    const SampleTap y = taps.y(ty + iy);
    for (int ix = 0; ix < sx; ++ix) {
      const float v = tap_sample<Nearest>(plane, y, taps.x(tx + ix), outside);
      if (average) {
        acc += v;
      } else if (first || v > acc) {
        acc = v;
      }
      first = false;
    }
  }
  return average ? acc / static_cast<float>(sx * sy) : acc;
}

// A ROI's record of taps in device memory (the gather kernel's tables).
struct RecordTaps {
  const SampleTap* columns;
  const SampleTap* rows;
  __device__ __forceinline__ SampleTap x(int i) const { return columns[i]; }
  __device__ __forceinline__ SampleTap y(int i) const { return rows[i]; }
};

// The per-element kernel over the tap tables, where planes do not fit in shared memory (crops from a large image):
// one thread per output element, reading its ROI's header and taps (cached) and its samples from device memory.
// 32-bit indices: the host checks that the output's element count and the input's offsets fit.
template <typename In, typename Out, bool Nearest>
__global__ void roi_gather_kernel(RoiArgs a, std::uint32_t total, const RoiHeader* __restrict__ headers,
                                  const SampleTap* __restrict__ taps, TapLayout t, const int* verdict) {
  if (refused(verdict)) return;
  const auto out_w = static_cast<std::uint32_t>(a.out.size[3]);
  const auto out_h = static_cast<std::uint32_t>(a.out.size[2]);
  const auto channels = static_cast<std::uint32_t>(a.out.size[1]);
  const bool average = a.p.reduction == RoiReduction::Average;
  const float outside = a.p.out_of_bounds_input_value;
  const In* const in = static_cast<const In*>(a.in.data);
  Out* const out = static_cast<Out*>(a.out.data);
  const int record_taps = t.cap_x + t.cap_y;
  for (std::uint32_t f = static_cast<std::uint32_t>(first_thread()); f < total;
       f += static_cast<std::uint32_t>(thread_step())) {
    const std::uint32_t ox = f % out_w;
    std::uint32_t rest = f / out_w;
    const std::uint32_t oy = rest % out_h;
    rest /= out_h;
    const std::uint32_t c = rest % channels;
    const std::uint32_t r = rest / channels;
    const RoiHeader header = headers[r];
    const In* const plane = in + header.batch * a.in.stride[0] + c * a.in.stride[1];
    float value;
    if (header.fits) {
      const SampleTap* const record = taps + static_cast<std::int64_t>(r) * record_taps;
      const int sx = static_cast<int>(header.sx);
      const int sy = static_cast<int>(header.sy);
      value = reduce_taps<Nearest>(plane, RecordTaps{record, record + t.cap_x}, static_cast<int>(oy) * sy,
                                   static_cast<int>(ox) * sx, sy, sx, average, outside);
    } else {
      const RoiBox b = roi_box(a, r);
      value = reduce_samples(a, b, oy, ox, [&](float x, float y) {
        return read_sample(a.p, a.in.size[2], a.in.size[3], x, y, [&](std::int64_t yi, std::int64_t xi) {
          return widen(plane[yi * a.in.stride[2] + xi * a.in.stride[3]]);
        });
      });
    }
    store_computed(out + r * a.out.stride[0] + c * a.out.stride[1] + oy * a.out.stride[2] + ox * a.out.stride[3],
                   value);
  }
}

constexpr int kRecordTaps = 2 * kTapCap;  // the shared-plane kernel's records: kTapCap column and row taps

// Row taps in a warp's tables: 2 * G for each of its 32 / G ROIs, each table one tap longer than that, so that the
// groups' reads of the same row (tap 2 * oy of each table) fall in different banks: with tables exactly 2 * G taps
// apart, the four groups of a 7 x 7 output read the same banks, a 4-way conflict on every row-tap read (FPN-P2 on
// an H100: 1.393 -> 1.371 ms float32, 0.821 -> 0.811 ms float16).
constexpr int kTableTaps = 2 * kWarp + 4;
constexpr std::size_t kTableBytes = sizeof(RowTap) * kTableTaps * kPlaneWarps;
constexpr std::size_t kCounterBytes = 16;  // the block's ROI counter, after the tables: the grid starts on 16 bytes
static_assert(kTableBytes % 16 == 0, "the grid after the tables starts on 16 bytes");

// The elements of one plane in shared memory: its rows, a padding row, and one more element (the second taps of the
// last row and column read up to H * pitch + W), rounded up to 16 elements (so that planes start on 16 bytes).
__host__ __device__ constexpr std::int64_t plane_extent(std::int64_t height, std::int64_t pitch) {
  return ((height + 1) * pitch + 16) / 16 * 16;
}

// Whether an input's planes can be copied to shared memory 16 bytes at a time (rows packed, everything on 16 bytes)
// into rows `pitch` elements apart.
__host__ __device__ inline bool vector_rows(const void* data, const std::int64_t* stride, std::int64_t width,
                                            std::int64_t pitch, std::int64_t element) {
  const auto aligned = [](std::int64_t bytes) { return bytes % 16 == 0; };
  return stride[3] == 1 && aligned(width * element) && aligned(pitch * element) && aligned(stride[2] * element) &&
         aligned(stride[1] * element) && aligned(stride[0] * element) &&
         reinterpret_cast<std::uintptr_t>(data) % 16 == 0;
}

// The shared-plane kernel's element: one channel's In, or with two planes a block the two channels' elements of one
// position side by side, so that one shared-memory read fetches a tap of both (float16: 32 bits).
template <typename In>
struct alignas(2 * sizeof(In)) Pair {
  In v[2];
};

template <typename In, int Planes>
using Cell = std::conditional_t<Planes == 2, Pair<In>, In>;

// The float32 value of plane p's element in a cell.
template <typename In>
__device__ __forceinline__ float cell_value(const In& c, int) {
  return widen(c);
}
template <typename In>
__device__ __forceinline__ float cell_value(const Pair<In>& c, int p) {
  return widen(c.v[p]);
}

// One sample of each of a cell's planes.
template <int Planes>
struct Samples {
  float v[Planes];
};

// One sample (SEMANTICS.md §3.4) of each plane at row tap (ra, rw) and column tap (ca, cw) of a grid of cells with
// rows `pitch` cells apart: the reads and float operations of tap_sample, the second taps read at +1 and +pitch, each
// cell read once for all its planes. Checked: a tap may be out of bounds (offset < 0: the sample is `outside`);
// otherwise both offsets are known to be >= 0.
template <bool Nearest, bool Checked, int Planes, typename C>
__device__ __forceinline__ Samples<Planes> grid_sample(const C* grid, int pitch, int ra, float rw, int ca, float cw,
                                                       float outside) {
  const C* const p = grid + (Checked ? max(ra, 0) + max(ca, 0) : ra + ca);
  Samples<Planes> s;
  if constexpr (Nearest) {
    const C c = p[0];
#pragma unroll
    for (int k = 0; k < Planes; ++k) s.v[k] = cell_value(c, k);
  } else {
    const C c00 = p[0], c01 = p[1], c10 = p[pitch], c11 = p[pitch + 1];
#pragma unroll
    for (int k = 0; k < Planes; ++k) {
      const float top = lerp(cell_value(c00, k), cell_value(c01, k), cw);
      const float bottom = lerp(cell_value(c10, k), cell_value(c11, k), cw);
      s.v[k] = lerp(top, bottom, rw);
    }
  }
  if constexpr (Checked) {
    if ((ra | ca) < 0) {
#pragma unroll
      for (int k = 0; k < Planes; ++k) s.v[k] = outside;
    }
  }
  return s;
}

// Planes (1 or 2) channel planes of one image at a time in shared memory, as one grid of cells (rows `pitch` cells
// apart, plus a padding row); with two planes a cell holds both channels' elements, so that every tap read serves
// both. A warp takes the next 32 / G ROIs of the image's work list whenever it is free (G = 8, 16 or 32: the
// output width rounded up), G lanes each: lane ox computes output column ox of every output row, its column taps
// held in registers (2 x 2 samples) or read from the tap record, the row taps from its group's table in shared
// memory. ROIs whose taps were not tabled, or with more than 2 * G rows of samples, are evaluated from their boxes by
// the whole warp.
template <typename In, typename Out, bool Nearest, int Planes>
__global__ void __launch_bounds__(kWarp* kPlaneWarps, 1)
    roi_plane_kernel(RoiArgs a, const RoiHeader* __restrict__ headers, const RowTap* __restrict__ taps,
                     const int* starts, const RoiWork* order, int pitch,
                     const int* verdict) {
  extern __shared__ __align__(16) unsigned char shared[];
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  using C = Cell<In, Planes>;
  int* const next_roi = reinterpret_cast<int*>(shared + kTableBytes);  // the plane's next ROI of its image's list
  C* const grid = reinterpret_cast<C*>(shared + kTableBytes + kCounterBytes);
  const auto height = static_cast<int>(a.in.size[2]);
  const auto width = static_cast<int>(a.in.size[3]);
  const std::int64_t channels = a.in.size[1];
  const std::int64_t groups = (channels + Planes - 1) / Planes;  // of channels, per image
  const auto out_h = static_cast<int>(a.out.size[2]);
  const auto out_w = static_cast<int>(a.out.size[3]);
  const bool average = a.p.reduction == RoiReduction::Average;
  const float outside = a.p.out_of_bounds_input_value;
  const std::int64_t out_stride_c = a.out.stride[1];
  const std::int64_t out_stride_h = a.out.stride[2];
  const std::int64_t out_stride_w = a.out.stride[3];
  const In* const in = static_cast<const In*>(a.in.data);
  Out* const out = static_cast<Out*>(a.out.data);
  const bool packed_rows = a.in.stride[3] == 1;
  const bool vector = vector_rows(a.in.data, a.in.stride, width, pitch, sizeof(In));
  // This lane's group of G lanes, its output column, and its group's table.
  const int g_lanes = out_w <= 8 ? 8 : (out_w <= 16 ? 16 : kWarp);
  const int group = lane / g_lanes;
  const int ox = lane - group * g_lanes;
  const int table_rows = 2 * g_lanes;
  RowTap* const table = reinterpret_cast<RowTap*>(shared) + warp * kTableTaps + group * (table_rows + 1);
  for (std::int64_t plane_group = blockIdx.x; plane_group < a.in.size[0] * groups; plane_group += gridDim.x) {
    const std::int64_t batch = plane_group / groups;
    const std::int64_t c0 = (plane_group % groups) * Planes;
    const int planes = static_cast<int>(min(static_cast<std::int64_t>(Planes), channels - c0));
    __syncthreads();  // every warp is done with the previous planes
    // The planes' elements into the grid's cells (with one channel left of two planes, it fills both sides).
    const In* const source0 = in + batch * a.in.stride[0] + c0 * a.in.stride[1];
    const In* const source1 = planes == 2 ? source0 + a.in.stride[1] : source0;
    if (vector) {
      // 16 bytes of each plane a thread. One plane: asynchronous copies straight into shared memory (compute
      // capability 8.0 and later), as many in flight as the loop issues: a load and a store a step kept one load a
      // thread in flight, since the compiler does not move a load above the loop's exit branch before it (FPN-P2
      // float32 on an H100: 1.255 -> 1.105 ms). Two planes: their elements are interleaved on the way, through
      // registers, kTwoPlaneBatch units a thread loaded before any is stored; in a thread's last batch the units past
      // the plane load its last unit again rather than branching, and store nothing (float16 FPN-P2 0.678 -> 0.666
      // ms, 100 ROIs of 14 x 14 0.050 -> 0.047).
      constexpr int kPer = 16 / static_cast<int>(sizeof(In));
      const int units = width / kPer;  // per row
      const int count = height * units;
      const auto in_row = static_cast<int>(a.in.stride[2] / kPer);
      const uint4* const from0 = reinterpret_cast<const uint4*>(source0);
      const uint4* const from1 = reinterpret_cast<const uint4*>(source1);
      const int threads = static_cast<int>(blockDim.x);
      const auto source_of = [&](int unit) {
        const int y = unit / units;
        return y * in_row + (unit - y * units);
      };
      const auto target_of = [&](int unit) {
        const int y = unit / units;
        return grid + (y * pitch + (unit - y * units) * kPer);
      };
      if constexpr (Planes == 1) {
#pragma unroll 8
        for (int i = static_cast<int>(threadIdx.x); i < count; i += threads) {
          copy_16_bytes(target_of(i), from0 + source_of(i));
        }
        wait_for_copies();
      } else {
        for (int i = static_cast<int>(threadIdx.x); i < count; i += kTwoPlaneBatch * threads) {
          uint4 v0[kTwoPlaneBatch], v1[kTwoPlaneBatch];
#pragma unroll
          for (int k = 0; k < kTwoPlaneBatch; ++k) {
            const int at = source_of(min(i + k * threads, count - 1));
            v0[k] = __ldg(from0 + at);
            v1[k] = __ldg(from1 + at);
          }
#pragma unroll
          for (int k = 0; k < kTwoPlaneBatch; ++k) {
            if (i + k * threads >= count) break;  // past the plane: nothing to store
            const auto* const e0 = reinterpret_cast<const In*>(&v0[k]);
            const auto* const e1 = reinterpret_cast<const In*>(&v1[k]);
            uint4 cells[2];
            auto* const pairs = reinterpret_cast<C*>(cells);
#pragma unroll
            for (int e = 0; e < kPer; ++e) pairs[e] = C{{e0[e], e1[e]}};
            uint4* const to = reinterpret_cast<uint4*>(target_of(i + k * threads));
            to[0] = cells[0];
            to[1] = cells[1];
          }
        }
      }
    } else {
      // A warp a row at a time: consecutive lanes read consecutive elements, no division per element.
      const std::int64_t step = a.in.stride[3];
      for (int y = warp; y < height; y += kPlaneWarps) {
        const In* const row0 = source0 + y * a.in.stride[2];
        const In* const row1 = source1 + y * a.in.stride[2];
        C* const row_target = grid + y * pitch;
#pragma unroll 4
        for (int x = lane; x < width; x += kWarp) {
          const std::int64_t at = packed_rows ? x : x * step;
          if constexpr (Planes == 1) {
            row_target[x] = row0[at];
          } else {
            row_target[x] = C{{row0[at], row1[at]}};
          }
        }
      }
    }
    if (plane_group == blockIdx.x) {
      // The first planes are copied: the kernels before (the check, the taps and the lists) must be done now.
      wait_for_previous_kernel();
      if (refused(verdict)) return;  // the whole block returns: no barrier is left waiting
    }
    if (threadIdx.x == 0) *next_roi = 0;
    __syncthreads();
    // The image's ROIs, one a group at a time: each warp takes the next 32 / G of the list (so that the warps finish
    // together, whatever the ROIs' order or count), its first lanes read their list entries, and ballots say which of
    // them the groups take.
    const int listed = starts != nullptr ? starts[batch] : 0;
    const int image_rois = starts != nullptr ? starts[batch + 1] - listed : static_cast<int>(a.out.size[0]);
    const int take = kWarp / g_lanes;
    const auto grab = [&]() {
      int at = 0;
      if (lane == 0) at = atomicAdd(next_roi, take);
      return __shfl_sync(0xffffffffu, at, 0);
    };
    // Lane i < take's entry of the ROIs from list position `at` (roi -1: none).
    const auto entry = [&](int at) {
      RoiWork w{-1, 0, 0, 0};
      if (lane < take && at + lane < image_rois) {
        if (order != nullptr) {
          w = order[listed + at + lane];
        } else {
          const RoiHeader h = headers[at + lane];
          w = RoiWork{at + lane, h.sx, h.sy, h.fits};
        }
      }
      return w;
    };
    int at = grab();
    RoiWork header = entry(at);
    while (at < image_rois) {
      // The next ROIs' entries are read while these are computed.
      const int next_at = grab();
      const RoiWork next = entry(next_at);
      const bool of_image = header.roi >= 0;
      const int mine = header.roi;
      unsigned grouped = __ballot_sync(
          0xffffffffu, of_image && header.fits && static_cast<std::uint64_t>(out_h) * header.sy <=
                                                      static_cast<std::uint64_t>(table_rows));
      unsigned boxed = __ballot_sync(0xffffffffu, of_image) & ~grouped;
      while (boxed != 0) {
        // Taps that were not tabled (adaptive sampling of a large box): each lane evaluates its outputs' samples
        // from the box.
        const std::int64_t r = __shfl_sync(0xffffffffu, mine, __ffs(boxed) - 1);
        boxed &= boxed - 1;
        const RoiBox b = roi_box(a, r);
        Out* const target = out + r * a.out.stride[0] + c0 * out_stride_c;
        for (int p = 0; p < planes; ++p) {
          const auto fetch = [&](std::int64_t yi, std::int64_t xi) { return cell_value(grid[yi * pitch + xi], p); };
          for (int pos = lane; pos < out_h * out_w; pos += kWarp) {
            const int oy = pos / out_w;
            const int x = pos - oy * out_w;
            const float value = reduce_samples(a, b, oy, x, [&](float xs, float ys) {
              return read_sample(a.p, height, width, xs, ys, fetch);
            });
            store_computed(target + p * out_stride_c + oy * out_stride_h + x * out_stride_w, value);
          }
        }
      }
      while (grouped != 0) {
        // The next ROIs, one a group (k < 0: none for this group).
        int k = -1;
        for (int g = 0; g < kWarp / g_lanes; ++g) {
          const int next = grouped != 0 ? __ffs(grouped) - 1 : -1;
          if (next >= 0) grouped &= grouped - 1;
          if (g == group) k = next;
        }
        const bool active = k >= 0 && ox < out_w;
        const int source_lane = k >= 0 ? k : 0;
        const auto sx = static_cast<int>(__shfl_sync(0xffffffffu, header.sx, source_lane));
        const auto sy = static_cast<int>(__shfl_sync(0xffffffffu, header.sy, source_lane));
        const std::int64_t r = __shfl_sync(0xffffffffu, mine, source_lane);
        const RowTap* const record = taps + r * kRecordTaps;
        const int rows = k >= 0 ? out_h * sy : 0;
        __syncwarp();  // the group's previous table has been read
        bool outside_taps = false;
        for (int i = ox; i < table_rows; i += g_lanes) {
          RowTap t{0, 0.0f};
          if (i < rows) {
            t = record[kTapCap + i];
            outside_taps = outside_taps || t.a < 0;
          }
          table[i] = t;
        }
        __syncwarp();
        // 2 x 2 samples with every tap in bounds (FPN levels) unrolled, with the column taps in registers.
        // Lanes past the output's width read the taps of its last column (and compute it again, storing nothing):
        // reads of the same cells as an active lane cost nothing more, where column 0's cells, the same few banks
        // for every group, made a 7-wide output's reads a third slower (3.9 wavefronts a read against 3.0 in a
        // simulation of FPN-P2; on an H100 float16 took 0.768 -> 0.678 ms, float32 the same time).
        RowTap c0_tap{0, 0.0f}, c1_tap{0, 0.0f};
        if (k >= 0 && sx == 2) {
          const int tap_x = min(ox, out_w - 1);
          const float4 both = *reinterpret_cast<const float4*>(record + 2 * tap_x);  // records start on 16 bytes
          c0_tap = {__float_as_int(both.x), both.y};
          c1_tap = {__float_as_int(both.z), both.w};
          outside_taps = outside_taps || c0_tap.a < 0 || c1_tap.a < 0;
        }
        Out* const target = out + r * a.out.stride[0] + c0 * out_stride_c + ox * out_stride_w;
        const auto store = [&](int oy, int p, float value) {
          store_computed(target + oy * out_stride_h + p * out_stride_c, value);
        };
        const bool two_by_two = __all_sync(0xffffffffu, k < 0 || (sx == 2 && sy == 2));
        const bool checked = __any_sync(0xffffffffu, outside_taps);
        const auto two_by_two_pass = [&](auto checked_tag, auto average_tag) {
          constexpr bool kChecked = decltype(checked_tag)::value;
          constexpr bool kAverage = decltype(average_tag)::value;
          for (int oy = 0; oy < out_h; ++oy) {
            const RowTap r0 = table[2 * oy];
            const RowTap r1 = table[2 * oy + 1];
            const auto at = [&](const RowTap& row, const RowTap& column) {
              return grid_sample<Nearest, kChecked, Planes>(grid, pitch, row.a, row.w, column.a, column.w, outside);
            };
            const Samples<Planes> s00 = at(r0, c0_tap);
            const Samples<Planes> s01 = at(r0, c1_tap);
            const Samples<Planes> s10 = at(r1, c0_tap);
            const Samples<Planes> s11 = at(r1, c1_tap);
#pragma unroll
            for (int p = 0; p < Planes; ++p) {
              // With two planes and one channel left, the second plane's samples are computed and not stored.
              if (active && p < planes) store(oy, p, reduce_four(s00.v[p], s01.v[p], s10.v[p], s11.v[p], kAverage));
            }
          }
        };
        if (two_by_two) {
          const auto by_reduction = [&](auto checked_tag) {
            if (average) {
              two_by_two_pass(checked_tag, std::true_type{});
            } else {
              two_by_two_pass(checked_tag, std::false_type{});
            }
          };
          if (checked) {
            by_reduction(std::true_type{});
          } else {
            by_reduction(std::false_type{});
          }
          continue;
        }
        if (!active) continue;
        // Any other sample counts: the column taps from the record, every tap checked.
        const float count = static_cast<float>(sx * sy);
        for (int oy = 0; oy < out_h; ++oy) {
          float acc[Planes] = {};
          for (int iy = 0; iy < sy; ++iy) {
            const RowTap row = table[oy * sy + iy];
            for (int ix = 0; ix < sx; ++ix) {
              const RowTap column = record[ox * sx + ix];
              const bool first = iy == 0 && ix == 0;
              const Samples<Planes> s =
                  grid_sample<Nearest, true, Planes>(grid, pitch, row.a, row.w, column.a, column.w, outside);
#pragma unroll
              for (int p = 0; p < Planes; ++p) {
                const float u = s.v[p];
                if (average) {
                  acc[p] = (first ? 0.0f : acc[p]) + u;
                } else if (first || u > acc[p]) {
                  acc[p] = u;
                }
              }
            }
          }
#pragma unroll
          for (int p = 0; p < Planes; ++p) {
            if (p < planes) store(oy, p, average ? acc[p] / count : acc[p]);
          }
        }
      }
      at = next_at;
      header = next;
    }
  }
}

// The shared memory the shared-plane kernel needs for `planes` planes of rows of `pitch` elements.
std::size_t plane_bytes(const ConstTensorView& input, std::int64_t pitch, int planes) {
  return kTableBytes + kCounterBytes + static_cast<std::size_t>(planes) *
                                           static_cast<std::size_t>(plane_extent(input.size(2), pitch)) *
                                           element_size(input.dtype());
}

// The row pitch of the shared plane (W where its rows can be copied 16 bytes at a time; otherwise W + 1, so that
// the rows of neighbouring samples fall in different banks, or W where only that fits), or 0 where the shared-plane
// kernel is not the better choice: the plane must fit in a block's shared memory, there must be enough planes to
// fill the device, and enough output per input element that copying every plane pays off.
std::int64_t plane_pitch(const ConstTensorView& input, const TensorView& output, const ExecOptions& options) {
  const DeviceLimits limits = device_limits(options.device);
  const std::int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
  if (n * c < limits.multiprocessors) return 0;
  // The work lists' 32-bit indices (a block's counter runs up to a warp's grab past the last ROI).
  if (n >= INT32_MAX || output.size(0) >= INT32_MAX - 1024) return 0;
  if (h * w >= (std::int64_t{1} << 24)) return 0;
  const auto budget = static_cast<std::size_t>(limits.max_shared_per_block);
  const auto pitch = [&]() -> std::int64_t {
    // Rows copied 16 bytes at a time where the input allows it (the lanes of a warp's ROIs read distinct columns of
    // a row, so the pitch need not be odd).
    if (vector_rows(input.data(), input.strides().data(), w, w,
                    static_cast<std::int64_t>(element_size(input.dtype()))) &&
        plane_bytes(input, w, 1) <= budget) {
      return w;
    }
    if (plane_bytes(input, w + 1, 1) <= budget) return w + 1;
    if (plane_bytes(input, w, 1) <= budget) return w;
    return 0;
  }();
  if (pitch == 0) return 0;
  // Enough output: an output element per 4 input elements where a block holds two planes (launch_plane_kernel, where
  // two fit: each tap read serves both), per 2 where it holds one (float32 planes as large as FPN levels). On an
  // H100, 100 ROIs of 14 x 14 on 256 x 200 x 272 (an output per 2.8 input elements) took 0.155 ms float32 on the
  // shared planes and 0.117 ms gathering from device memory, but 0.090 and 0.105 ms float16; 1000 ROIs of 7 x 7 (one
  // per 1.1) 0.178 and 0.364 ms float32.
  const bool two_planes = c >= 2 && plane_bytes(input, pitch, 2) <= budget;
  const std::int64_t outputs_per_plane = output.size(0) * output.size(2) * output.size(3);
  return outputs_per_plane * (two_planes ? 4 : 2) < n * h * w ? 0 : pitch;
}

// What make() gives for `kernel` on `device`, asked once (under a lock) and kept for the life of the process; each
// caller has its own table. Where make throws, nothing is kept: the next call asks again.
template <typename Make>
bool per_kernel(const void* kernel, int device, const Make& make) {
  static std::mutex guard;
  static std::map<std::pair<const void*, int>, bool> known;
  const std::lock_guard<std::mutex> lock(guard);
  const auto at = known.find({kernel, device});
  if (at != known.end()) return at->second;
  const bool value = make();
  known.emplace(std::make_pair(kernel, device), value);
  return value;
}

// Whether kernel's code for `device` waits for the kernel before it (compiled for compute capability 9.0 or later,
// where wait_for_previous_kernel is not a no-op) and the device can start it early: a build for older architectures
// that runs on a newer device launches plainly.
bool can_start_early(const void* kernel, int device) {
  return per_kernel(kernel, device, [&] {
    if (device_limits(device).compute_major < 9) return false;
    cudaFuncAttributes attributes{};
    if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess) {
      cudaGetLastError();  // a failed query leaves no error behind: the launch is plain
      return false;
    }
    return attributes.ptxVersion >= 90;
  });
}

// Launches kernel with programmatic dependent launch where it can start early (see let_next_kernel_start) and
// `early` allows it: the kernel before it in the stream must be this call's (a caller's kernel could let it start
// before its own writes are done).
template <typename... Params, typename... Args>
void launch_early(void (*kernel)(Params...), bool early, int blocks, int threads, std::size_t shared_bytes,
                  const ExecOptions& options, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream_of(options);
  cudaLaunchAttribute programmatic{};
  programmatic.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  programmatic.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &programmatic;
  config.numAttrs = early && can_start_early(reinterpret_cast<const void*>(kernel), options.device) ? 1 : 0;
  const cudaError_t launched = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (launched != cudaSuccess) cuda_fail("roi_align", "the kernel could not be launched", launched);
}

// Lets `kernel` use all the shared memory a block of `device` can have, once per kernel and device. The limit is the
// process's, not the call's: set to each call's own size, a call in one thread could lower it between another
// thread's setting it and launching (two threads on FPN levels of different sizes), and that launch would fail.
void allow_all_shared_memory(const void* kernel, int device) {
  per_kernel(kernel, device, [&] {
    const cudaError_t status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    device_limits(device).max_shared_per_block);
    if (status != cudaSuccess) cuda_fail("roi_align", "the kernel's shared memory could not be reserved", status);
    return true;
  });
}

template <typename In, typename Out, bool Nearest>
void launch_plane_kernel(const RoiArgs& a, const RoiHeader* headers, const RowTap* taps, const int* starts,
                         const RoiWork* order, std::int64_t pitch, const int* verdict, const ExecOptions& options) {
  // Two planes a block where they fit (float16, unorm inputs on FPN levels): every tap read serves two channels.
  const std::int64_t channels = a.in.size[1];
  const auto bytes_for = [&](int planes) {
    return kTableBytes + kCounterBytes + static_cast<std::size_t>(planes) *
                                             static_cast<std::size_t>(plane_extent(a.in.size[2], pitch)) * sizeof(In);
  };
  const bool two =
      channels >= 2 && bytes_for(2) <= static_cast<std::size_t>(device_limits(options.device).max_shared_per_block);
  const auto launch = [&](auto kernel, int planes) {
    const std::size_t bytes = bytes_for(planes);
    allow_all_shared_memory(reinterpret_cast<const void*>(kernel), options.device);
    const std::int64_t groups = a.in.size[0] * ((channels + planes - 1) / planes);
    // After roi_taps_kernel or roi_order_kernel.
    launch_early(kernel, true, static_cast<int>(groups < 65535 * 32 ? groups : 65535 * 32), kWarp * kPlaneWarps, bytes,
                 options, a, headers, taps, starts, order, static_cast<int>(pitch), verdict);
  };
  if (two) {
    launch(roi_plane_kernel<In, Out, Nearest, 2>, 2);
  } else {
    launch(roi_plane_kernel<In, Out, Nearest, 1>, 1);
  }
}

// Queues a host copy of a small device tensor's elements at its strides (the ROI boxes, the batch indices); the caller
// synchronizes the stream before reading it.
ConstTensorView queue_host_copy(const char* op, const ConstTensorView& t, std::vector<unsigned char>& storage,
                                cudaStream_t stream) {
  const std::size_t bytes = static_cast<std::size_t>(t.layout().extent()) * element_size(t.dtype());
  storage.resize(bytes);
  if (bytes > 0) {
    const cudaError_t status = cudaMemcpyAsync(storage.data(), t.data(), bytes, cudaMemcpyDeviceToHost, stream);
    if (status != cudaSuccess) cuda_fail(op, "the ROI values could not be read for their checks", status);
  }
  return ConstTensorView(storage.data(), t.layout());
}

// The host check of device ROI values: one synchronization of the stream.
void check_on_host(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                   const TensorView& output, const RoiAlignParams& params, const ExecOptions& options) {
  std::vector<unsigned char> rois_host;
  std::vector<unsigned char> indices_host;
  const ConstTensorView r = queue_host_copy("roi_align", rois, rois_host, stream_of(options));
  const ConstTensorView b = queue_host_copy("roi_align", batch_indices, indices_host, stream_of(options));
  const cudaError_t status = cudaStreamSynchronize(stream_of(options));
  if (status != cudaSuccess) cuda_fail("roi_align", "the ROI values could not be read for their checks", status);
  // The host rules read only the input's and output's sizes, never their elements.
  check_roi_values_on_host(ConstTensorView(nullptr, input.layout()), r, b, TensorView(nullptr, output.layout()),
                           params, options);
}

}  // namespace

void cuda_check_roi_values(const ConstTensorView& input, const ConstTensorView& rois,
                           const ConstTensorView& batch_indices, const TensorView& output,
                           const RoiAlignParams& params, const ExecOptions& options) {
  const DeviceScope scope("roi_align", options.device);
  check_device_pointer("roi_align", "rois", rois, options.device);
  check_device_pointer("roi_align", "batch_indices", batch_indices, options.device);
  // By default the values are checked on the device by cuda_roi_align, in stream order.
  if (options.check_values_on_host) check_on_host(input, rois, batch_indices, output, params, options);
}

void cuda_roi_align(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                    const TensorView& output, const RoiAlignParams& p, const ExecOptions& options,
                    bool values_checked) {
  const DeviceScope scope("roi_align", options.device);
  check_device_pointer("roi_align", "input", input, options.device);
  check_device_pointer("roi_align", "output", output, options.device);
  RoiArgs a{};
  a.in = device_view(input);
  a.rois = device_view(rois);
  a.indices = device_view(batch_indices);
  a.out = device_view(output);
  a.p = p;
  const std::int64_t total = output.element_count();
  if (total == 0) return;
  const std::int64_t rois_count = output.size(0);
  const std::int64_t pitch = plane_pitch(input, output, options);
  // The tap tables: the shared-plane kernel's (kTapCap a side), or the gather kernel's, OW and OH times up to 16
  // samples a side (ROIs that need more are computed from their boxes), where its 32-bit offsets fit and the
  // tables stay under 256 MiB.
  TapLayout layout{kTapCap, kTapCap, 1, pitch};
  bool gather = false;
  if (pitch == 0) {
    const auto samples = static_cast<std::int64_t>(std::min<std::uint32_t>(p.maximum_samples_per_output, 16));
    layout = {static_cast<int>(std::min<std::int64_t>(output.size(3) * samples, 4096)),
              static_cast<int>(std::min<std::int64_t>(output.size(2) * samples, 4096)), input.stride(3),
              input.stride(2)};
    const auto record_bytes = static_cast<std::uint64_t>(layout.cap_x + layout.cap_y) * sizeof(SampleTap);
    gather = total < (std::int64_t{1} << 31) && fits_32_bits(input.layout()) &&
             static_cast<std::uint64_t>(rois_count) * record_bytes <= (std::uint64_t{1} << 28);
  }
  // Scratch: a control block (the call's verdict where the device checks the values, and the check kernel's ticket:
  // its last block to finish combines the others' findings), the shared-plane kernel's counts of ROIs per image (these
  // two cleared first where the check runs in several blocks or counts), the check's findings per block, then the
  // tap tables and the work lists.
  DeferredRoiError* const record = values_checked ? nullptr : deferred_error_record(options);
  const bool tables = pitch > 0 || gather;
  const std::int64_t images = input.size(0);
  // Work lists where there are several images (with one, the list is every ROI in order).
  const bool lists = pitch > 0 && images > 1;
  const auto round16 = [](std::size_t bytes) { return (bytes + 15) / 16 * 16; };
  constexpr std::size_t kControlBytes = 16;
  const std::size_t zeroed_bytes =
      (record != nullptr || lists ? kControlBytes : 0) +
      (lists ? round16(static_cast<std::size_t>(images) * sizeof(int)) : 0);
  // The check's blocks: one where there are few ROIs and no lists (nothing to clear first: it needs no ticket).
  const auto check_blocks =
      static_cast<int>(lists || rois_count > 4 * kCheckThreads
                           ? std::min<std::int64_t>((rois_count + kCheckThreads - 1) / kCheckThreads, 256)
                           : 1);
  const std::size_t parts_bytes =
      record != nullptr ? round16(static_cast<std::size_t>(check_blocks) * sizeof(CheckPart)) : 0;
  // Headers rounded up to 16 bytes: the shared-plane kernel reads two column taps at once.
  const std::size_t header_bytes = tables ? round16(static_cast<std::size_t>(rois_count) * sizeof(RoiHeader)) : 0;
  const std::size_t tap_size = pitch > 0 ? sizeof(RowTap) : sizeof(SampleTap);
  const std::size_t tap_bytes =
      tables ? static_cast<std::size_t>(rois_count) * static_cast<std::size_t>(layout.cap_x + layout.cap_y) * tap_size
             : 0;
  const std::size_t list_bytes = lists ? static_cast<std::size_t>(rois_count) * sizeof(RoiWork) +
                                             static_cast<std::size_t>(2 * images + 1) * sizeof(int)
                                       : 0;
  const Scratch scratch("roi_align", "ROI tap tables",
                        zeroed_bytes + parts_bytes + header_bytes + tap_bytes + list_bytes, options);
  auto* const base = static_cast<unsigned char*>(scratch.data());
  if (base != nullptr && ((record != nullptr && check_blocks > 1) || lists)) {
    const cudaError_t status = cudaMemsetAsync(base, 0, zeroed_bytes, stream_of(options));
    if (status != cudaSuccess) cuda_fail("roi_align", "the scratch memory could not be cleared", status);
  }
  auto* const control = reinterpret_cast<unsigned*>(base);  // the verdict, then the check kernel's ticket
  auto* headers = reinterpret_cast<RoiHeader*>(base + zeroed_bytes + parts_bytes);
  unsigned char* const taps = base + zeroed_bytes + parts_bytes + header_bytes;
  WorkLists work{};
  if (lists && base != nullptr) {
    work.counts = reinterpret_cast<int*>(base + kControlBytes);
    work.order = reinterpret_cast<RoiWork*>(taps + tap_bytes);
    work.starts = reinterpret_cast<int*>(work.order + rois_count);
    work.cursor = work.starts + images + 1;
  }
  // The values are checked on the device (by default), or on the host where the device has no memory pool or no
  // mapped memory.
  const bool device_check = !values_checked && record != nullptr && base != nullptr;
  if (!values_checked && !device_check) check_on_host(input, rois, batch_indices, output, p, options);
  int* const verdict = device_check ? reinterpret_cast<int*>(control) : nullptr;
  const bool checking = device_check || work.counts != nullptr;  // roi_check_kernel runs
  if (checking) {
    roi_check_kernel<<<check_blocks, kCheckThreads, 0, stream_of(options)>>>(
        a, rois_count, options.max_samples, verdict,
        device_check ? reinterpret_cast<CheckPart*>(base + zeroed_bytes) : nullptr, control + 1, record, work);
    launch_check("roi_align");
  }
  if (base != nullptr && tables) {
    const auto fill_taps = [&](auto* records) {
      using Tap = std::remove_pointer_t<decltype(records)>;
      const std::int64_t threads = rois_count * (layout.cap_x + layout.cap_y);
      const auto kernel = threads < (std::int64_t{1} << 31) - grid_for(threads) * std::int64_t{256}
                              ? roi_taps_kernel<Tap, std::uint32_t>
                              : roi_taps_kernel<Tap, std::uint64_t>;
      // Early only right after roi_check_kernel.
      launch_early(kernel, checking, grid_for(threads), 256, 0, options, a, rois_count, headers, records, layout);
    };
    if (pitch > 0) {
      fill_taps(reinterpret_cast<RowTap*>(taps));
    } else {
      fill_taps(reinterpret_cast<SampleTap*>(taps));
    }
    if (lists) {
      roi_order_kernel<<<grid_for(rois_count), 256, 0, stream_of(options)>>>(a, static_cast<int>(rois_count), headers,
                                                                             work, verdict);
      launch_check("roi_align");
    }
    const int* const starts = work.starts;
    const RoiWork* const order = work.order;
    dispatch_types(input.dtype(), output.dtype(), [&](auto* in_tag, auto* out_tag) {
      using In = std::remove_pointer_t<decltype(in_tag)>;
      using Out = std::remove_pointer_t<decltype(out_tag)>;
      const auto run = [&](auto nearest_tag) {
        constexpr bool kNearest = decltype(nearest_tag)::value;
        if (pitch > 0) {
          launch_plane_kernel<In, Out, kNearest>(a, headers, reinterpret_cast<const RowTap*>(taps), starts, order,
                                                 pitch, verdict, options);
        } else {
          roi_gather_kernel<In, Out, kNearest><<<grid_for(total), 256, 0, stream_of(options)>>>(
              a, static_cast<std::uint32_t>(total), headers, reinterpret_cast<const SampleTap*>(taps), layout,
              verdict);
        }
      };
      if (p.interpolation == InterpolationMode::Nearest) {
        run(std::true_type{});
      } else {
        run(std::false_type{});
      }
    });
  } else if (total < (std::int64_t{1} << 31)) {
    roi_align_kernel<std::uint32_t><<<grid_for(total), 256, 0, stream_of(options)>>>(a, total, verdict);
  } else {
    roi_align_kernel<std::uint64_t><<<grid_for(total), 256, 0, stream_of(options)>>>(a, total, verdict);
  }
  launch_check("roi_align");
}

}  // namespace rsz::detail::cuda
