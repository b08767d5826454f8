// rsz/io/gpu_jpeg.h's BatchResampler: threads queue their jobs; a worker takes every job waiting (up to a batch, after
// a short wait for a fuller one), decodes their files at once, runs their calls on the GPU and copies the results back
// into pinned memory, which each job's thread reads its result out of while the worker goes on with the next batch.
#include <cuda_runtime.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
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
using detail::BlockingEvent;
using detail::OnDevice;

std::size_t bytes_of(const Dims& sizes, DataType type) {
  std::size_t n = element_size(type);
  for (const std::int64_t s : sizes) n *= static_cast<std::size_t>(s);
  return n;
}


// The decoded bytes one batch holds at most (with the files that fit beside them; one file alone may be larger).
constexpr std::size_t kBatchBytes = std::size_t{512} << 20;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Where a lane's time went (RSZ_GPU_STATS=1 prints it when the stage ends).
struct LaneStats {
  std::size_t batches = 0;
  std::size_t files = 0;
  double idle = 0;    // waiting for jobs
  double decode = 0;  // decoding a batch (until its images are on the device)
  double resize = 0;  // resizing and copying back, until the results are in host memory (the jobs' threads read them)
  Clock::time_point first;  // its first batch taken
  Clock::time_point last;   // its last batch handed out
};

// Pinned host memory that a batch's results are copied back into, read out by the jobs' own threads (in parallel,
// while the lane goes on with its next batch into its other staging); it is used again once every job has read its
// result.
struct Staging {
  Arena memory{true, "GPU resize", "pinned host memory for the results"};
  std::mutex mutex;
  std::condition_variable read;
  std::size_t unread = 0;

  void wait_until_read() {
    std::unique_lock<std::mutex> lock(mutex);
    read.wait(lock, [this] { return unread == 0; });
  }
  void read_one() {
    const std::lock_guard<std::mutex> lock(mutex);
    if (unread > 0 && --unread == 0) read.notify_all();
  }
};

// A job handed in: done once its batch has run, with its error, or its result at `staged` (in `staging`, to be read
// and released by the job's thread).
struct Pending {
  const ResampleJob* job;
  std::promise<void> done;
  std::string error;
  const std::uint8_t* staged = nullptr;
  Staging* staging = nullptr;
  bool released = false;

  void release() {
    if (released) return;
    released = true;
    done.set_value();
  }
};

// One worker: its own decoder (nvJPEG state and stream; the library handles shared with the other lanes'), stream
// and memory, taking batches from the shared queue (kLanes says how many there are).
struct Lane {
  int device;
  std::unique_ptr<JpegBatchDecoder> decoder;
  cudaStream_t stream = nullptr;
  Arena results{false, "GPU resize", "device memory for the results"};
  Staging staging[2];
  int next_staging = 0;
  BlockingEvent done;  // the batch's results in host memory, waited for without spinning
  LaneStats stats;

  Lane(int device_, std::unique_ptr<JpegBatchDecoder> decoder_) : device(device_), decoder(std::move(decoder_)) {
    const OnDevice on(device);
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "GPU resize", "cudaStreamCreate");
  }
  ~Lane() {
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return;
    cudaSetDevice(device);
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    done.release();
    results.release();  // on its device
    cudaSetDevice(previous);
  }
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  void run_batch(const std::vector<Pending*>& batch) {
    const OnDevice on(device);
    std::vector<std::string_view> files;
    for (const Pending* p : batch) files.push_back(p->job->file);
    Clock::time_point start = Clock::now();
    if (stats.batches == 0) stats.first = start;
    const std::vector<DeviceImage> images = decoder->decode(files);
    stats.decode += seconds_since(start);
    start = Clock::now();
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
    Staging& into = staging[next_staging];
    next_staging ^= 1;
    into.wait_until_read();  // the jobs of the batch before the last have read their results
    std::uint8_t* host_out = into.memory.reserve(std::max<std::size_t>(total, 256));
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
    done.wait(stream, "GPU resize", "the batch's resize");
    stats.resize += seconds_since(start);
    // Handed out without a step that can throw once the first job sees its result: the errors moved in, the
    // buffer's readers counted, then every job released.
    std::size_t staged = 0;
    for (const std::string& e : errors) staged += e.empty() ? 1 : 0;
    {
      const std::lock_guard<std::mutex> lock(into.mutex);
      into.unread = staged;
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      batch[i]->error = std::move(errors[i]);
      if (batch[i]->error.empty()) {
        batch[i]->staged = host_out + offsets[i];
        batch[i]->staging = &into;
      }
    }
    ++stats.batches;
    stats.files += batch.size();
    stats.last = Clock::now();
    for (Pending* p : batch) p->release();
  }
};

// Lanes (workers, each with its own decoder, stream and memory): one. On an H200, 1,024 photos took 1.82-2.00 s with
// one lane, 2.00-2.29 s with two (one decoding while the other resized, the engines taken in turn) and 2.23 s with
// three (decoding at once, which slowed each decode): a batch's decode (nvJPEG's colour conversion runs on the GPU's
// cores) and the resize kernels share the cores, so overlapping them gained nothing. The lanes stay for several GPUs.
constexpr int kLanes = 1;
// How long a lane waits for a fuller batch before it takes what is waiting (each decode call has a fixed cost).
constexpr auto kGather = std::chrono::milliseconds(2);

}  // namespace

struct BatchResampler::Impl {
  int max_batch = 0;
  std::vector<std::unique_ptr<Lane>> lanes;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Pending*> queue;
  std::size_t queued_bytes = 0;  // the decoded bytes of the queue's jobs
  bool stopping = false;
  std::vector<std::thread> workers;

  double made_in = 0;  // seconds the lanes took to make (nvJPEG's handles, streams)
  Clock::time_point made_at;

  Impl(int device, int max_batch_) : max_batch(max_batch_) {
    const Clock::time_point start = Clock::now();
    auto first = std::make_unique<JpegBatchDecoder>(device, max_batch);
    for (int i = 1; i < kLanes; ++i) lanes.push_back(std::make_unique<Lane>(device, first->sibling()));
    lanes.push_back(std::make_unique<Lane>(device, std::move(first)));
    try {
      for (auto& lane : lanes) workers.emplace_back([this, l = lane.get()] { loop(*l); });
    } catch (...) {  // a thread that could not start: the started ones stop before the lanes go
      stop();
      throw;
    }
    made_at = Clock::now();
    made_in = std::chrono::duration<double>(made_at - start).count();
  }

  ~Impl() {
    stop();
    const char* wanted = std::getenv("RSZ_GPU_STATS");
    if (wanted == nullptr || *wanted == '\0' || *wanted == '0') return;
    std::fprintf(stderr, "rsz: GPU stage made in %.3f s, ended %.3f s later\n", made_in, seconds_since(made_at));
    const auto after = [this](Clock::time_point t) { return std::chrono::duration<double>(t - made_at).count(); };
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      const LaneStats& s = lanes[i]->stats;
      std::fprintf(stderr,
                   "rsz: GPU stage, lane %zu: %zu batches, %zu files, from %.3f s to %.3f s after it was made; idle "
                   "%.3f s, decode %.3f s, resize and copy %.3f s\n",
                   i, s.batches, s.files, s.batches > 0 ? after(s.first) : 0.0, s.batches > 0 ? after(s.last) : 0.0,
                   s.idle, s.decode, s.resize);
    }
  }

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
        const Clock::time_point start = Clock::now();
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [this] { return stopping || !queue.empty(); });
        if (queue.empty()) return;  // stopping, nothing left
        const auto full = [this] {
          return stopping || queue.size() >= static_cast<std::size_t>(max_batch) || queued_bytes >= kBatchBytes;
        };
        if (!full()) wake.wait_for(lock, kGather, full);
        lane.stats.idle += seconds_since(start);
        if (queue.empty()) continue;  // another lane took them
        std::size_t bytes = 0;
        while (!queue.empty() && batch.size() < static_cast<std::size_t>(max_batch) &&
               (batch.empty() || bytes + decoded_bytes(queue.front()) <= kBatchBytes)) {
          bytes += decoded_bytes(queue.front());
          queued_bytes -= decoded_bytes(queue.front());
          batch.push_back(queue.front());
          queue.pop_front();
        }
      }
      try {
        lane.run_batch(batch);  // hands out every result, or throws before handing out any
      } catch (const std::exception& e) {  // the GPU failed the batch (out of memory): its files go to the CPU
        fail(batch, std::string("the GPU failed: ") + e.what());
      } catch (...) {
        fail(batch, "the GPU failed");
      }
    }
  }

  // A batch the GPU failed before its results were handed out: each job gets the error (the CPU decodes it).
  static void fail(const std::vector<Pending*>& batch, const std::string& error) {
    for (Pending* p : batch) {
      if (p->released) continue;
      p->error = error;
      p->staged = nullptr;
      p->staging = nullptr;
      p->release();
    }
  }
};

BatchResampler::BatchResampler(int device, int max_batch) : impl_(std::make_unique<Impl>(device, max_batch)) {}

BatchResampler::~BatchResampler() = default;

const char* BatchResampler::engine() const { return impl_->lanes.front()->decoder->engine(); }

Resampled BatchResampler::run(const ResampleJob& job) {
  Pending pending{&job, {}, {}, nullptr, nullptr, false};
  std::future<void> done = pending.done.get_future();
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->queue.push_back(&pending);
    impl_->queued_bytes += Impl::decoded_bytes(&pending);
  }
  impl_->wake.notify_one();
  done.get();
  if (!pending.error.empty() || pending.staging == nullptr) return Resampled{std::nullopt, pending.error};
  struct Release {  // the staged result read (or not, if the copy cannot be made): its lane may use it again
    Staging* staging;
    ~Release() { staging->read_one(); }
  } release{pending.staging};
  Resampled out;
  out.result.emplace(job.type, job.canvas, TensorInit::Uninitialized);
  std::memcpy(out.result->data(), pending.staged, bytes_of(job.canvas, job.type));
  return out;
}

}  // namespace rsz::io::gpu
