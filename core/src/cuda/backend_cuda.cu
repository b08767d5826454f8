// The CUDA backend's row of the backend table, and the host-side helpers its operators share (device scope, pointer
// checks, launch checks, device limits). The kernels: resample_cuda.cu (RESAMPLE1/2/3, UPSAMPLE_2D) and
// roi_align_cuda.cu. Work on device tensors is queued on ExecOptions::stream of ExecOptions::device and nothing
// synchronizes: roi_align's value checks run on the device, and a failing call's error waits in the stream's
// DeferredRoiError record for rsz::synchronize (or, with ExecOptions::check_values_on_host, the values are copied to
// the host and checked there first). Host tensors are staged: copied to the device, computed there, and copied back
// before the call returns.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common.cuh"
#include "cpu/parallel.h"

namespace rsz::detail {
namespace cuda {

// Every failure first takes the CUDA error it leaves pending off the thread, so that it is not reported again by a
// later call's launch check (a launch that succeeded would throw an old error).
void cuda_fail(const char* op, const std::string& what, cudaError_t status) {
  cudaGetLastError();
  fail(ErrorCode::InvalidArgument, op, what + ": " + cudaGetErrorString(status));
}

namespace {
std::atomic<bool> backend_used{false};  // whether this process has run the CUDA backend (rsz::synchronize's guard)
}  // namespace

// A call starts with no CUDA error pending on its thread: an error that something before it left there (the caller's
// failed cudaMalloc, say; the caller had it as that call's return value) would otherwise fail this call's launch
// check after its kernels were queued.
DeviceScope::DeviceScope(const char* op, int device) {
  backend_used.store(true, std::memory_order_relaxed);
  cudaGetLastError();
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  const cudaError_t status = cudaSetDevice(device);
  if (status != cudaSuccess) cuda_fail(op, "device " + std::to_string(device) + " cannot be used", status);
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

void check_device_pointer(const char* op, const char* name, const ConstTensorView& t, int device) {
  if (t.element_count() == 0) return;
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, t.data());
  if (status != cudaSuccess || (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)) {
    cudaGetLastError();  // clear the sticky-free error a host pointer leaves
    fail(ErrorCode::InvalidArgument, op,
         std::string(name) + " is marked as device memory but is not memory a CUDA device can read; allocate it "
                             "with cudaMalloc (or cudaMallocManaged)");
  }
  // Another device's memory: without peer access the kernels would fault on it (an error that ends every later CUDA
  // call of the process); refused even where peer access is on, which the runtime cannot tell from here.
  if (attributes.type == cudaMemoryTypeDevice && attributes.device != device) {
    fail(ErrorCode::InvalidArgument, op,
         std::string(name) + " is in device " + std::to_string(attributes.device) +
             "'s memory but the call runs on device " + std::to_string(device) + "; set ExecOptions::device to " +
             std::to_string(attributes.device));
  }
}

void launch_check(const char* op) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) cuda_fail(op, "the kernel could not be launched", status);
}

int grid_for(std::int64_t total) {
  constexpr std::int64_t kBlock = 256;
  const std::int64_t blocks = (total + kBlock - 1) / kBlock;
  return static_cast<int>(blocks < 65535 * 32 ? blocks : 65535 * 32);
}

namespace {

// What make(device) gives for a device ordinal, made once (under a lock) and kept for the life of the process; `none`
// for ordinals out of range. make returns std::nullopt where nothing should be kept yet (the next call tries again).
// Each call site (each Make) has its own table.
template <typename T, typename Make>
T per_device(int device, T none, const Make& make) {
  constexpr int kDevices = 64;
  static std::mutex mutex;
  static std::array<std::optional<T>, kDevices> made{};
  if (device < 0 || device >= kDevices) return none;
  const std::lock_guard<std::mutex> lock(mutex);
  std::optional<T>& slot = made[static_cast<std::size_t>(device)];
  if (!slot) slot = make(device);
  return slot ? *slot : none;
}

// rsz's memory pool of `device` (null where the device has none), kept for the life of the process.
cudaMemPool_t scratch_pool(int device) {
  return per_device(device, cudaMemPool_t{}, [](int d) -> std::optional<cudaMemPool_t> {
    cudaMemPool_t pool = nullptr;
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, d) == cudaSuccess && supported) {
      cudaMemPoolProps props{};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = d;
      if (cudaMemPoolCreate(&pool, &props) == cudaSuccess) {
        std::uint64_t keep = UINT64_MAX;  // never hand reserved memory back at a synchronization
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
      } else {
        pool = nullptr;
      }
    }
    cudaGetLastError();
    return pool;  // kept, null included: tried once
  });
}

}  // namespace

DeviceLimits device_limits(int device) {
  return per_device(device, DeviceLimits{1, 48 * 1024, 0}, [](int d) -> std::optional<DeviceLimits> {
    int sms = 0;
    int shared = 0;
    int major = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d) != cudaSuccess ||
        cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, d) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) != cudaSuccess) {
      cudaGetLastError();
      return std::nullopt;  // asked again next time
    }
    return DeviceLimits{sms, shared, major};
  });
}

Scratch::Scratch(const char* op, const char* what, std::size_t bytes, const ExecOptions& options)
    : stream_(stream_of(options)) {
  cudaMemPool_t pool = scratch_pool(options.device);
  if (pool == nullptr || bytes == 0) return;
  const cudaError_t status = cudaMallocFromPoolAsync(&data_, bytes, pool, stream_);
  if (status != cudaSuccess) {
    cudaGetLastError();
    data_ = nullptr;
    cuda_fail(op,
              std::string("the ") + what + " (" + std::to_string(bytes) + " bytes) do not fit in device " +
                  std::to_string(options.device) + "'s free memory",
              status);
  }
}

namespace {

// A stream's record: its host address (read by rsz::synchronize), its device address (written by the check), and the
// sequence number of the last error rsz::synchronize reported from it.
struct DeferredRecord {
  DeferredRoiError* host;
  DeferredRoiError* device;
  std::uint32_t reported;
};

// Which record options.stream uses: the legacy default stream has two names (nullptr and cudaStreamLegacy), and
// cudaStreamPerThread names a different stream in every host thread.
struct RecordKey {
  int device;
  void* stream;
  std::thread::id thread;
  bool operator<(const RecordKey& o) const {
    return std::tie(device, stream, thread) < std::tie(o.device, o.stream, o.thread);
  }
};

RecordKey record_key(const ExecOptions& options) {
  const auto stream = static_cast<cudaStream_t>(options.stream);
  if (stream == cudaStreamLegacy) return {options.device, nullptr, {}};
  if (stream == cudaStreamPerThread) return {options.device, options.stream, std::this_thread::get_id()};
  return {options.device, options.stream, {}};
}

struct DeferredRecords {
  std::mutex mutex;
  std::map<RecordKey, DeferredRecord> by_stream;  // never freed (one per stream)
};

DeferredRecords& deferred_records() {
  static DeferredRecords records;
  return records;
}

__global__ void clear_record(DeferredRoiError* record) { record->state = 0; }

}  // namespace

DeferredRoiError* deferred_error_record(const ExecOptions& options) {
  DeferredRecords& records = deferred_records();
  const std::lock_guard<std::mutex> lock(records.mutex);
  const RecordKey key = record_key(options);
  const auto found = records.by_stream.find(key);
  if (found != records.by_stream.end()) return found->second.device;
  void* memory = nullptr;
  void* device = nullptr;
  if (cudaHostAlloc(&memory, sizeof(DeferredRoiError), cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  if (cudaHostGetDevicePointer(&device, memory, 0) != cudaSuccess) {
    cudaGetLastError();
    cudaFreeHost(memory);
    return nullptr;
  }
  std::memset(memory, 0, sizeof(DeferredRoiError));
  records.by_stream[key] = {static_cast<DeferredRoiError*>(memory), static_cast<DeferredRoiError*>(device), 0};
  return static_cast<DeferredRoiError*>(device);
}

void cuda_synchronize(const ExecOptions& options) {
  if (!backend_used.load(std::memory_order_relaxed)) return;  // nothing of rsz's queued: no context to start
  const DeviceScope scope("synchronize", options.device);
  const cudaError_t status = cudaStreamSynchronize(stream_of(options));
  if (status != cudaSuccess) cuda_fail("synchronize", "the work queued on the stream failed", status);
  DeferredRoiError e{};
  {
    DeferredRecords& records = deferred_records();
    const std::lock_guard<std::mutex> lock(records.mutex);
    const auto found = records.by_stream.find(record_key(options));
    if (found == records.by_stream.end()) return;
    DeferredRecord& record = found->second;
    const volatile DeferredRoiError* const host = record.host;
    // The check writes the error, then (after a system fence) its state: a state seen set has its error complete.
    if (host->state == 0) return;
    std::atomic_thread_fence(std::memory_order_acquire);
    std::memcpy(&e, const_cast<const DeferredRoiError*>(host), sizeof e);
    // Reported already, its clearing still queued (another thread's synchronize got there first).
    if (e.sequence == record.reported) return;
    record.reported = e.sequence;
    clear_record<<<1, 1, 0, stream_of(options)>>>(record.device);
    launch_check("synchronize");
  }
  if (e.state == 1) {
    check_roi(e.roi, e.batch_index, {e.box[0], e.box[1], e.box[2], e.box[3]}, e.batch, e.scale_x, e.scale_y);
    fail(ErrorCode::InvalidArgument, "roi_align", "rois[" + std::to_string(e.roi) + "] failed its device-side checks");
  }
  fail_sample_budget(e.total, e.max_samples, e.worst, e.worst_sy, e.worst_sx, e.out_h, e.out_w, e.channels);
}

Scratch::~Scratch() {
  if (data_ != nullptr) cudaFreeAsync(data_, stream_);
}

namespace {

// The bytes of a tensor's extent that a call reads: [begin, end).
struct ByteRange {
  std::size_t begin;
  std::size_t end;
};

std::size_t bytes_of(const TensorLayout& layout) {
  return static_cast<std::size_t>(layout.extent()) * element_size(layout.dtype());
}

ByteRange whole(const TensorLayout& layout) { return {0, bytes_of(layout)}; }

// The bytes spanned by the box of indices [lo[a], hi[a]] (inclusive) of `layout` (strides are never negative).
ByteRange box_bytes(const TensorLayout& layout, const std::array<std::int64_t, 4>& lo,
                    const std::array<std::int64_t, 4>& hi) {
  std::int64_t first = 0;
  std::int64_t last = 0;
  for (std::size_t a = 0; a < 4; ++a) {
    first += lo[a] * layout.strides()[a];
    last += hi[a] * layout.strides()[a];
  }
  const auto size = static_cast<std::int64_t>(element_size(layout.dtype()));
  return {static_cast<std::size_t>(first * size), static_cast<std::size_t>((last + 1) * size)};
}

// The input elements a resample reads: per axis, the lowest and highest index any output index takes a tap from,
// evaluated with the kernels' own formulas (detail/coords.h) for every output index of the axis. The command line
// computes PNG and JPEG outputs in bands of rows, one call each: a band's call then copies only the input rows the
// band reads, and the input crosses to the device about once in all.
ByteRange resample_reads(const ConstTensorView& input, const TensorView& output, const ResampleParams& p) {
  std::array<std::int64_t, 4> lo{};
  std::array<std::int64_t, 4> hi{};
  for (std::size_t a = 0; a < 4; ++a) {
    const std::int64_t n = input.size(static_cast<int>(a));
    const std::int64_t outputs = output.size(static_cast<int>(a));
    lo[a] = 0;
    hi[a] = n - 1;
    if (outputs > (std::int64_t{1} << 20)) continue;  // not worth the scan: the whole axis
    std::int64_t first = n - 1;
    std::int64_t last = 0;
    for (std::int64_t o = 0; o < outputs; ++o) {
      const float x = resample_source_coord(o, p.scales[a], p.input_pixel_offsets[a], p.output_pixel_offsets[a]);
      std::int64_t i0, i1;
      if (p.interpolation == InterpolationMode::Nearest) {
        i0 = i1 = nearest_index(x, n, p.rounding_direction);
      } else if (p.antialiased && p.scales[a] < 1.0f) {
        const AntialiasRange r = antialias_range(x, n, p.scales[a]);
        i0 = r.lo;
        i1 = r.hi;
      } else {
        const LinearTaps t = linear_taps(x, n);
        i0 = t.i0;
        i1 = t.i1;
      }
      first = std::min(first, i0);
      last = std::max(last, i1);
    }
    if (first <= last) {
      lo[a] = first;
      hi[a] = last;
    }
  }
  return box_bytes(input.layout(), lo, hi);
}

// Pinned host memory for staging on one device: two slots and an event each. A host tensor of at least two slots
// crosses in slot-sized chunks: the host copies chunk k + 1 into one slot (on every core) while the DMA engine moves
// chunk k from the other, and the same in reverse for results (measured on an H100 host: 8 x 4K float32 -> 1080p
// staged in 41 ms instead of 114 from pageable memory). Smaller tensors are copied from pageable memory, which was
// faster for them (a 6 MB image: 1.1 ms for the whole call, 3.8 through the slots). Taken by one staging at a time;
// a staging that finds it taken (or a device where pinned memory cannot be had) copies from pageable memory.
struct PinnedSlots {
  static constexpr std::size_t kSlot = std::size_t{8} << 20;
  std::mutex busy;
  unsigned char* memory = nullptr;
  std::array<cudaEvent_t, 2> done{};
};

PinnedSlots* pinned_slots(int device) {
  return per_device(device, static_cast<PinnedSlots*>(nullptr), [](int) -> std::optional<PinnedSlots*> {
    auto made = std::make_unique<PinnedSlots>();
    void* memory = nullptr;
    bool ok = cudaHostAlloc(&memory, 2 * PinnedSlots::kSlot, cudaHostAllocPortable) == cudaSuccess;
    made->memory = static_cast<unsigned char*>(memory);
    for (cudaEvent_t& e : made->done) ok = ok && cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess;
    cudaGetLastError();
    if (ok) return made.release();  // kept for the life of the process
    if (memory != nullptr) cudaFreeHost(memory);
    for (cudaEvent_t e : made->done) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    return nullptr;  // tried once
  });
}

// Host tensors on the CUDA backend: each is copied to device memory from rsz's pool (laid out as its whole extent,
// so a strided view keeps its layout; of an input, only the bytes the call reads are copied), through the device's
// pinned slots where it can have them; the operator runs on the device copies, and the outputs come back before the
// call returns. Of an output with gaps (a strided view that does not address every element of its extent), only its
// elements reach the caller's buffer.
class HostStaging {
 public:
  static constexpr std::size_t kStagingKeep = std::size_t{256} << 20;  // device memory the pool keeps after a staging

  HostStaging(const char* op, const ExecOptions& options)
      : op_(op), options_(options), threads_(cpu::resolve_threads(options.num_threads)) {
    PinnedSlots* const slots = pinned_slots(options.device);
    if (slots != nullptr && slots->busy.try_lock()) slots_ = slots;
  }
  ~HostStaging() {
    release_device_copies();
    if (slots_ == nullptr) return;
    // On an early exit (an error) the slots' copies may still be queued: they finish before another staging
    // takes the slots.
    for (cudaEvent_t e : slots_->done) cudaEventSynchronize(e);
    cudaGetLastError();
    slots_->busy.unlock();
  }
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  ConstTensorView input(const char* name, const ConstTensorView& t) { return input(name, t, whole(t.layout())); }
  ConstTensorView input(const char* name, const ConstTensorView& t, ByteRange read) {
    return ConstTensorView(upload(name, t.data(), t.layout(), read), t.layout(), MemorySpace::Device);
  }
  TensorView output(const TensorView& t) {
    void* device = upload("output", t.data(), t.layout(), ByteRange{0, 0});
    downloads_.push_back({t.data(), device, bytes_of(t.layout()), t.layout(), {}});
    return TensorView(device, t.layout(), MemorySpace::Device);
  }
  // Copies the outputs back (queued after the operator's work) and waits for them. An output with gaps (a strided
  // view that does not address every element of its extent) comes back into host scratch memory first, and only
  // its elements go on to the caller's buffer: the gaps are never written, so another thread may be writing them
  // (the other channels of an interleaved image, say) meanwhile.
  void finish() {
    const cudaStream_t stream = stream_of(options_);
    for (Download& d : downloads_) {
      if (d.layout.extent() != d.layout.element_count()) d.scratch.reset(new unsigned char[d.bytes]);
      void* const target = d.scratch ? d.scratch.get() : d.host;
      if (through_slots(d.bytes)) {
        copy_out(target, d.device, d.bytes);
      } else {
        check(cudaMemcpyAsync(target, d.device, d.bytes, cudaMemcpyDeviceToHost, stream), "copied back");
      }
    }
    check(cudaStreamSynchronize(stream), "computed");
    for (const Download& d : downloads_) {
      if (d.scratch) copy_elements(d.host, d.scratch.get(), d.layout, threads_);
    }
  }

 private:
  struct Download {
    void* host;
    const void* device;
    std::size_t bytes;
    TensorLayout layout;
    std::unique_ptr<unsigned char[]> scratch;  // the whole extent, for an output with gaps
  };

  // The elements `layout` addresses, from `source` to `target` (both laid out as its extent), nothing in between:
  // row by row along the last axis (a row at once where it is contiguous), the rows spread over `threads`.
  static void copy_elements(void* target, const void* source, const TensorLayout& layout, int threads) {
    const std::int64_t count = layout.element_count();
    if (count == 0) return;
    const auto element = static_cast<std::int64_t>(element_size(layout.dtype()));
    const int last = layout.rank() - 1;
    const std::int64_t width = layout.size(last);
    const std::int64_t step = layout.stride(last);
    cpu::parallel_for(count / width, std::max<std::int64_t>(1, 16384 / width), threads,
                      [&](std::int64_t begin, std::int64_t end) {
                        for (std::int64_t row = begin; row < end; ++row) {
                          std::int64_t rest = row;
                          std::int64_t at = 0;
                          for (int a = last - 1; a >= 0; --a) {
                            at += rest % layout.size(a) * layout.stride(a);
                            rest /= layout.size(a);
                          }
                          auto* const to = static_cast<unsigned char*>(target) + at * element;
                          const auto* const from = static_cast<const unsigned char*>(source) + at * element;
                          if (step == 1) {
                            std::memcpy(to, from, static_cast<std::size_t>(width * element));
                            continue;
                          }
                          for (std::int64_t x = 0; x < width; ++x) {
                            std::memcpy(to + x * step * element, from + x * step * element,
                                        static_cast<std::size_t>(element));
                          }
                        }
                      });
  }

  // The device copies back to rsz's pool, and the pool's memory beyond kStagingKeep back to the device: the pool
  // keeps what it reserves (device calls allocate nothing on the hot path), but a large staged call (1 GB for 8 x 4K
  // float32 -> 1080p) would otherwise hold its memory for the life of the process, memory the caller's other GPU
  // work may need. Smaller stagings (a 4K image's) keep theirs for the next call.
  // At the end of every staging, failed ones included; throws nothing (the outputs may be delivered already).
  void release_device_copies() noexcept {
    buffers_.clear();  // freed in stream order
    const cudaMemPool_t pool = scratch_pool(options_.device);
    std::uint64_t reserved = 0;
    if (pool != nullptr &&
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
        reserved > kStagingKeep && cudaStreamSynchronize(stream_of(options_)) == cudaSuccess) {
      cudaMemPoolTrimTo(pool, kStagingKeep);  // the frees done: the pool can give their memory back
    }
    cudaGetLastError();
  }

  // Whether a copy of `bytes` goes through the pinned slots (at least two of them) rather than pageable memory.
  bool through_slots(std::size_t bytes) const { return slots_ != nullptr && bytes >= 2 * PinnedSlots::kSlot; }

  static std::size_t chunk_bytes(std::size_t bytes, std::size_t chunk) {
    return std::min(PinnedSlots::kSlot, bytes - chunk * PinnedSlots::kSlot);
  }

  // Host to device through the two slots: the host fills one slot while the other's DMA runs.
  void copy_in(void* device, const void* host, std::size_t bytes) {
    const cudaStream_t stream = stream_of(options_);
    for (std::size_t chunk = 0; chunk * PinnedSlots::kSlot < bytes; ++chunk) {
      const std::size_t k = chunk % 2;
      const std::size_t at = chunk * PinnedSlots::kSlot;
      const std::size_t n = chunk_bytes(bytes, chunk);
      unsigned char* const slot = slots_->memory + k * PinnedSlots::kSlot;
      check(cudaEventSynchronize(slots_->done[k]), "copied in");  // the slot's previous DMA has read it
      cpu::parallel_copy(slot, static_cast<const unsigned char*>(host) + at, n, threads_);
      check(cudaMemcpyAsync(static_cast<unsigned char*>(device) + at, slot, n, cudaMemcpyHostToDevice, stream),
            "copied in");
      check(cudaEventRecord(slots_->done[k], stream), "copied in");
    }
  }

  // Device to host through the two slots: the DMA fills one slot while the host empties the other.
  void copy_out(void* host, const void* device, std::size_t bytes) {
    const cudaStream_t stream = stream_of(options_);
    const std::size_t chunks = (bytes + PinnedSlots::kSlot - 1) / PinnedSlots::kSlot;
    const auto queue = [&](std::size_t chunk) {
      const std::size_t k = chunk % 2;
      check(cudaMemcpyAsync(slots_->memory + k * PinnedSlots::kSlot,
                            static_cast<const unsigned char*>(device) + chunk * PinnedSlots::kSlot,
                            chunk_bytes(bytes, chunk), cudaMemcpyDeviceToHost, stream),
            "copied back");
      check(cudaEventRecord(slots_->done[k], stream), "copied back");
    };
    for (std::size_t chunk = 0; chunk < std::min<std::size_t>(chunks, 2); ++chunk) queue(chunk);
    for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
      const std::size_t k = chunk % 2;
      check(cudaEventSynchronize(slots_->done[k]), "copied back");
      cpu::parallel_copy(static_cast<unsigned char*>(host) + chunk * PinnedSlots::kSlot,
                         slots_->memory + k * PinnedSlots::kSlot, chunk_bytes(bytes, chunk), threads_);
      if (chunk + 2 < chunks) queue(chunk + 2);
    }
  }

  // Device memory for the extent of `layout`, with the bytes `copy` of `host` copied in.
  void* upload(const char* name, const void* host, const TensorLayout& layout, ByteRange copy) {
    const std::size_t bytes = bytes_of(layout);
    const std::string what = std::string("device copy of the ") + name;
    buffers_.push_back(std::make_unique<Scratch>(op_, what.c_str(), bytes, options_));
    void* device = buffers_.back()->data();
    if (device == nullptr && bytes > 0) {
      fail(ErrorCode::InvalidArgument, op_,
           "device " + std::to_string(options_.device) +
               " has no memory pools for staging host tensors; pass tensors in device memory");
    }
    if (copy.end > copy.begin) {
      unsigned char* const target = static_cast<unsigned char*>(device) + copy.begin;
      const unsigned char* const source = static_cast<const unsigned char*>(host) + copy.begin;
      if (through_slots(copy.end - copy.begin)) {
        copy_in(target, source, copy.end - copy.begin);
      } else {
        check(cudaMemcpyAsync(target, source, copy.end - copy.begin, cudaMemcpyHostToDevice, stream_of(options_)),
              "copied in");
      }
    }
    return device;
  }

  void check(cudaError_t status, const char* what) const {
    if (status != cudaSuccess) cuda_fail(op_, std::string("a host tensor could not be ") + what, status);
  }

  const char* op_;
  const ExecOptions& options_;
  int threads_;
  PinnedSlots* slots_ = nullptr;
  std::vector<std::unique_ptr<Scratch>> buffers_;
  std::vector<Download> downloads_;
};

// An operator with one input and one output (resample, upsample2d) on host tensors, through HostStaging; `reads`:
// the input bytes the call reads.
template <typename Params>
void staged(const char* op,
            void (*run)(const ConstTensorView&, const TensorView&, const Params&, const ExecOptions&),
            const ConstTensorView& input, const TensorView& output, const Params& p, const ExecOptions& options,
            ByteRange reads) {
  if (input.memory() == MemorySpace::Device) return run(input, output, p, options);
  const DeviceScope scope(op, options.device);
  HostStaging staging(op, options);
  run(staging.input("input", input, reads), staging.output(output), p, options);
  staging.finish();
}

void staged_resample(const ConstTensorView& input, const TensorView& output, const ResampleParams& p,
                     const ExecOptions& options) {
  const bool host = input.memory() == MemorySpace::Host;
  staged("resample", cuda_resample, input, output, p, options,
         host ? resample_reads(input, output, p) : whole(input.layout()));
}

void staged_upsample2d(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& p,
                       const ExecOptions& options) {
  staged("upsample2d", cuda_upsample2d, input, output, p, options, whole(input.layout()));
}

// Host ROI values are checked where they are, with the host rules.
void staged_check_roi_values(const ConstTensorView& input, const ConstTensorView& rois,
                             const ConstTensorView& batch_indices, const TensorView& output,
                             const RoiAlignParams& params, const ExecOptions& options) {
  if (rois.memory() == MemorySpace::Device) {
    return cuda_check_roi_values(input, rois, batch_indices, output, params, options);
  }
  check_roi_values_on_host(input, rois, batch_indices, output, params, options);
}

void staged_roi_align(const ConstTensorView& input, const ConstTensorView& rois,
                      const ConstTensorView& batch_indices, const TensorView& output, const RoiAlignParams& p,
                      const ExecOptions& options) {
  if (input.memory() == MemorySpace::Device) {
    return cuda_roi_align(input, rois, batch_indices, output, p, options, options.check_values_on_host);
  }
  const DeviceScope scope("roi_align", options.device);
  HostStaging staging("roi_align", options);
  cuda_roi_align(staging.input("input", input), staging.input("rois", rois),
                 staging.input("batch_indices", batch_indices), staging.output(output), p, options, true);
  staging.finish();
}

bool cuda_available(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    why = std::string("no usable CUDA driver or device (") + cudaGetErrorString(status) + ")";
    return false;
  }
  if (count == 0) {
    why = "no CUDA device";
    return false;
  }
  return true;
}

std::string cuda_describe(const ExecOptions& options) {
  cudaDeviceProp properties{};
  const cudaError_t status = cudaGetDeviceProperties(&properties, options.device);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return "device " + std::to_string(options.device) + " cannot be used: " + cudaGetErrorString(status);
  }
  return "device " + std::to_string(options.device) + ": " + properties.name + ", compute capability " +
         std::to_string(properties.major) + "." + std::to_string(properties.minor);
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

const BackendOps kCuda{
    Backend::Cuda,     MemorySpace::Device,     true,           cuda_available,   cuda_describe, staged_resample,
    staged_upsample2d, staged_check_roi_values, staged_roi_align, cuda_synchronize, cuda_device_count,
};

}  // namespace
}  // namespace cuda

const BackendOps& cuda_backend() { return cuda::kCuda; }

}  // namespace rsz::detail
