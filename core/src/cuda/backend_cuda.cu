// The CUDA backend's row of the backend table, and the host-side helpers its operators share (device scope, pointer
// checks, launch checks, device limits). The kernels: resample_cuda.cu (RESAMPLE1/2/3, UPSAMPLE_2D) and
// roi_align_cuda.cu. Work on device tensors is queued on ExecOptions::stream of ExecOptions::device and nothing
// synchronizes: roi_align's value checks run on the device, and a failing call's error waits in the stream's
// DeferredRoiError record for rsz::synchronize (or, with ExecOptions::check_values_on_host, the values are copied to
// the host and checked there first). Host tensors are staged: copied to the device, computed there, and copied back
// before the call returns.
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <string>
#include <vector>

#include "common.cuh"

namespace rsz::detail {
namespace cuda {

void cuda_fail(const char* op, const std::string& what, cudaError_t status) {
  fail(ErrorCode::InvalidArgument, op, what + ": " + cudaGetErrorString(status));
}

DeviceScope::DeviceScope(const char* op, int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  const cudaError_t status = cudaSetDevice(device);
  if (status != cudaSuccess) cuda_fail(op, "device " + std::to_string(device) + " cannot be used", status);
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

void check_device_pointer(const char* op, const char* name, const ConstTensorView& t) {
  if (t.element_count() == 0) return;
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, t.data());
  if (status != cudaSuccess || (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)) {
    cudaGetLastError();  // clear the sticky-free error a host pointer leaves
    fail(ErrorCode::InvalidArgument, op,
         std::string(name) + " is marked as device memory but is not memory a CUDA device can read; allocate it "
                             "with cudaMalloc (or cudaMallocManaged)");
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

const DeviceLimits& device_limits(int device) {
  constexpr int kDevices = 64;
  static std::mutex mutex;
  static std::array<DeviceLimits, kDevices> limits{};
  static std::array<bool, kDevices> known{};
  const std::lock_guard<std::mutex> lock(mutex);
  static DeviceLimits fallback{1, 48 * 1024};
  if (device < 0 || device >= kDevices) return fallback;
  const auto i = static_cast<std::size_t>(device);
  if (!known[i]) {
    int sms = 0;
    int shared = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
      cudaGetLastError();
      return fallback;
    }
    limits[i] = {sms, shared};
    known[i] = true;
  }
  return limits[i];
}

namespace {

// rsz's memory pool of `device` (null where the device has none), kept for the life of the process.
cudaMemPool_t scratch_pool(int device) {
  constexpr int kDevices = 64;
  static std::mutex mutex;
  static std::array<cudaMemPool_t, kDevices> pools{};
  static std::array<bool, kDevices> tried{};
  if (device < 0 || device >= kDevices) return nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto i = static_cast<std::size_t>(device);
  if (!tried[i]) {
    tried[i] = true;
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess && supported) {
      cudaMemPoolProps props{};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = device;
      cudaMemPool_t pool = nullptr;
      if (cudaMemPoolCreate(&pool, &props) == cudaSuccess) {
        std::uint64_t keep = UINT64_MAX;  // never hand reserved memory back at a synchronization
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
        pools[i] = pool;
      }
    }
    cudaGetLastError();
  }
  return pools[i];
}

}  // namespace

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

struct DeferredRecords {
  std::mutex mutex;
  std::map<std::pair<int, void*>, DeferredRoiError*> by_stream;  // host addresses, never freed (one per stream)
};

DeferredRecords& deferred_records() {
  static DeferredRecords records;
  return records;
}

}  // namespace

DeferredRoiError* deferred_error_record(const ExecOptions& options) {
  DeferredRecords& records = deferred_records();
  const std::lock_guard<std::mutex> lock(records.mutex);
  DeferredRoiError*& host = records.by_stream[{options.device, options.stream}];
  if (host == nullptr) {
    void* memory = nullptr;
    if (cudaHostAlloc(&memory, sizeof(DeferredRoiError), cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      records.by_stream.erase({options.device, options.stream});
      return nullptr;
    }
    std::memset(memory, 0, sizeof(DeferredRoiError));
    host = static_cast<DeferredRoiError*>(memory);
  }
  void* device = nullptr;
  if (cudaHostGetDevicePointer(&device, host, 0) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return static_cast<DeferredRoiError*>(device);
}

void cuda_synchronize(const ExecOptions& options) {
  const DeviceScope scope("synchronize", options.device);
  const cudaError_t status = cudaStreamSynchronize(stream_of(options));
  if (status != cudaSuccess) cuda_fail("synchronize", "the work queued on the stream failed", status);
  DeferredRoiError e{};
  {
    DeferredRecords& records = deferred_records();
    const std::lock_guard<std::mutex> lock(records.mutex);
    const auto found = records.by_stream.find({options.device, options.stream});
    if (found == records.by_stream.end()) return;
    volatile DeferredRoiError* const record = found->second;
    if (record->state == 0) return;
    std::memcpy(&e, const_cast<DeferredRoiError*>(record), sizeof e);
    record->state = 0;
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

// Host tensors on the CUDA backend: each is copied to device memory from rsz's pool (laid out as its whole extent,
// so a strided view keeps its layout; of an input, only the bytes the call reads are copied), the operator runs on
// the device copies, and the outputs come back before the call returns. An output with gaps (a strided view that does
// not address every element of its extent) is uploaded first, so the gaps come back as they were.
class HostStaging {
 public:
  HostStaging(const char* op, const ExecOptions& options) : op_(op), options_(options) {}
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  ConstTensorView input(const char* name, const ConstTensorView& t) { return input(name, t, whole(t.layout())); }
  ConstTensorView input(const char* name, const ConstTensorView& t, ByteRange read) {
    return ConstTensorView(upload(name, t.data(), t.layout(), read), t.layout(), MemorySpace::Device);
  }
  TensorView output(const TensorView& t) {
    const bool gaps = t.layout().extent() != t.element_count();
    void* device = upload("output", t.data(), t.layout(), gaps ? whole(t.layout()) : ByteRange{0, 0});
    downloads_.push_back({t.data(), device, bytes_of(t.layout())});
    return TensorView(device, t.layout(), MemorySpace::Device);
  }
  // Queues the outputs' copies back and waits for them.
  void finish() {
    const cudaStream_t stream = stream_of(options_);
    for (const Download& d : downloads_) {
      check(cudaMemcpyAsync(d.host, d.device, d.bytes, cudaMemcpyDeviceToHost, stream), "copied back");
    }
    check(cudaStreamSynchronize(stream), "computed");
  }

 private:
  struct Download {
    void* host;
    const void* device;
    std::size_t bytes;
  };

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
      check(cudaMemcpyAsync(static_cast<unsigned char*>(device) + copy.begin,
                            static_cast<const unsigned char*>(host) + copy.begin, copy.end - copy.begin,
                            cudaMemcpyHostToDevice, stream_of(options_)),
            "copied in");
    }
    return device;
  }

  void check(cudaError_t status, const char* what) const {
    if (status != cudaSuccess) cuda_fail(op_, std::string("a host tensor could not be ") + what, status);
  }

  const char* op_;
  const ExecOptions& options_;
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
  if (cudaGetDeviceProperties(&properties, options.device) != cudaSuccess) return "";
  return "device " + std::to_string(options.device) + ": " + properties.name + ", compute capability " +
         std::to_string(properties.major) + "." + std::to_string(properties.minor);
}

const BackendOps kCuda{
    Backend::Cuda,     MemorySpace::Device,     true,           cuda_available, cuda_describe, staged_resample,
    staged_upsample2d, staged_check_roi_values, staged_roi_align, cuda_synchronize,
};

}  // namespace
}  // namespace cuda

const BackendOps& cuda_backend() { return cuda::kCuda; }

}  // namespace rsz::detail
