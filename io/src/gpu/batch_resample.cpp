// rsz/io/gpu_jpeg.h's BatchResampler: threads queue their jobs; one worker takes every job waiting (up to a batch),
// decodes their files at once, runs their calls on the GPU, copies the results back through pinned memory and hands
// each thread its result.
#include <cuda_runtime.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <thread>

#include "rsz/error.h"
#include "rsz/exec.h"
#include "cuda_util.h"
#include "rsz/io/gpu_jpeg.h"

namespace rsz::io::gpu {

namespace {

using detail::check_cuda;
using detail::aligned_bytes;
using detail::Arena;
using detail::OnDevice;

std::size_t bytes_of(const Dims& sizes, DataType type) {
  std::size_t n = element_size(type);
  for (const std::int64_t s : sizes) n *= static_cast<std::size_t>(s);
  return n;
}


// The decoded bytes one batch holds at most (with the files that fit beside them; one file alone may be larger).
constexpr std::size_t kBatchBytes = std::size_t{1} << 30;

struct Pending {
  const ResampleJob* job;
  std::promise<Resampled> done;
};

// One worker: its own decoder (nvJPEG state and stream), stream and memory, taking batches from the shared queue.
// Two of them overlap one batch's decoding with the other's resizing and copying.
struct Lane {
  int device;
  JpegBatchDecoder decoder;
  cudaStream_t stream = nullptr;
  Arena results{false, "GPU resize", "device memory for the results"};
  Arena staging{true, "GPU resize", "pinned host memory for the results"};

  Lane(int device_, int max_batch) : device(device_), decoder(device_, max_batch) {
    const OnDevice on(device);
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "GPU resize", "cudaStreamCreate");
  }
  ~Lane() {
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return;
    cudaSetDevice(device);
    cudaStreamDestroy(stream);
    cudaSetDevice(previous);
  }
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  void run_batch(const std::vector<Pending*>& batch) {
    const OnDevice on(device);
    std::vector<std::string_view> files;
    for (const Pending* p : batch) files.push_back(p->job->file);
    const std::vector<DeviceImage> images = decoder.decode(files);
    std::vector<std::string> errors(batch.size());
    std::vector<std::size_t> offsets(batch.size(), 0);
    std::size_t total = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const ResampleJob& job = *batch[i]->job;
      const DeviceImage& image = images[i];
      errors[i] = image.error;
      if (errors[i].empty() && (job.input_sizes.size() != 4 || job.input_sizes[1] != image.channels ||
                                job.input_sizes[2] != image.height || job.input_sizes[3] != image.width)) {
        errors[i] = "decoded at " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                    ", not the planned size";
      }
      offsets[i] = total;
      if (errors[i].empty()) total += aligned_bytes(bytes_of(job.canvas, job.type));
    }
    std::uint8_t* device_out = results.reserve(std::max<std::size_t>(total, 256));
    std::uint8_t* host_out = staging.reserve(std::max<std::size_t>(total, 256));
    ExecOptions exec;
    exec.backend = Backend::Cuda;
    exec.device = device;
    exec.stream = stream;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!errors[i].empty()) continue;
      const ResampleJob& job = *batch[i]->job;
      const DeviceImage& image = images[i];
      const ConstTensorView input(image.data, DataType::UNorm8, job.input_sizes,
                                  {image.row_bytes * image.height, 1, image.row_bytes, 3}, MemorySpace::Device);
      std::uint8_t* canvas = device_out + offsets[i];
      const TensorLayout layout(job.type, job.canvas);
      const Dims& strides = layout.strides();
      if (job.canvas != job.call_sizes) {
        check_cuda(cudaMemsetAsync(canvas, 0, bytes_of(job.canvas, job.type), stream), "GPU resize", "cudaMemset");
      }
      std::uint8_t* origin =
          canvas + (job.top * strides[2] + job.left * strides[3]) * static_cast<std::int64_t>(element_size(job.type));
      resample(input, TensorView(origin, job.type, job.call_sizes, strides, MemorySpace::Device), job.params, exec);
    }
    if (total > 0) {
      check_cuda(cudaMemcpyAsync(host_out, device_out, total, cudaMemcpyDeviceToHost, stream), "GPU resize",
                 "copy back");
    }
    check_cuda(cudaStreamSynchronize(stream), "GPU resize", "the batch's resize");
    std::vector<Resampled> out(batch.size());  // all made before any is handed out (a failure fails the batch)
    for (std::size_t i = 0; i < batch.size(); ++i) {
      out[i].error = errors[i];
      if (!errors[i].empty()) continue;
      const ResampleJob& job = *batch[i]->job;
      out[i].result.emplace(job.type, job.canvas, TensorInit::Uninitialized);
      std::memcpy(out[i].result->data(), host_out + offsets[i], bytes_of(job.canvas, job.type));
    }
    for (std::size_t i = 0; i < batch.size(); ++i) batch[i]->done.set_value(std::move(out[i]));
  }
};

constexpr int kLanes = 2;

}  // namespace

struct BatchResampler::Impl {
  int max_batch = 0;
  std::vector<std::unique_ptr<Lane>> lanes;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Pending*> queue;
  bool stopping = false;
  std::vector<std::thread> workers;

  Impl(int device, int max_batch_) : max_batch(max_batch_) {
    for (int i = 0; i < kLanes; ++i) lanes.push_back(std::make_unique<Lane>(device, max_batch));
    try {
      for (auto& lane : lanes) workers.emplace_back([this, l = lane.get()] { loop(*l); });
    } catch (...) {  // a thread that could not start: the started ones stop before the lanes go
      stop();
      throw;
    }
  }

  ~Impl() { stop(); }

  void stop() {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread& w : workers) w.join();
    workers.clear();
  }

  static std::size_t decoded_bytes(const Pending* p) {
    const Dims& s = p->job->input_sizes;
    return s.size() == 4 ? static_cast<std::size_t>(s[2] * s[3] * 3) : 0;
  }

  void loop(Lane& lane) {
    for (;;) {
      std::vector<Pending*> batch;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [this] { return stopping || !queue.empty(); });
        if (queue.empty()) return;  // stopping, nothing left
        std::size_t bytes = 0;
        while (!queue.empty() && batch.size() < static_cast<std::size_t>(max_batch) &&
               (batch.empty() || bytes + decoded_bytes(queue.front()) <= kBatchBytes)) {
          bytes += decoded_bytes(queue.front());
          batch.push_back(queue.front());
          queue.pop_front();
        }
      }
      try {
        lane.run_batch(batch);  // hands out every result, or throws before handing out any
      } catch (const std::exception& e) {  // the GPU failed the batch (out of memory): its files go to the CPU
        for (Pending* p : batch) p->done.set_value(Resampled{std::nullopt, std::string("the GPU failed: ") + e.what()});
      } catch (...) {
        for (Pending* p : batch) p->done.set_value(Resampled{std::nullopt, "the GPU failed"});
      }
    }
  }
};

BatchResampler::BatchResampler(int device, int max_batch) : impl_(std::make_unique<Impl>(device, max_batch)) {}

BatchResampler::~BatchResampler() = default;

const char* BatchResampler::engine() const { return impl_->lanes.front()->decoder.engine(); }

Resampled BatchResampler::run(const ResampleJob& job) {
  Pending pending{&job, {}};
  std::future<Resampled> result = pending.done.get_future();
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->queue.push_back(&pending);
  }
  impl_->wake.notify_one();
  return result.get();
}

}  // namespace rsz::io::gpu
