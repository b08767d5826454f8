// rsz/io/gpu_jpeg.h's BatchResampler: threads queue their jobs; a worker takes every job waiting (up to a batch, after
// a short wait for a fuller one), decodes their files at once (on the GPU's JPEG engines) while the GPU resizes the
// batch before, queues this batch's calls and copy-back into pinned memory, then hands the batch before out: each
// job's thread reads its result out of that memory while the worker goes on. Jobs whose results become JPEG files on
// the GPU (--encode gpu) are handed with their batch to the lane's encoder thread instead, which encodes them on a
// stream of its own (nvJPEG's encode calls wait on the host) while the worker decodes and resizes the next batches.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <optional>
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


// The device bytes one batch holds at most, its decoded images and results (with the files that fit beside them; one
// file alone may be larger).
constexpr std::size_t kBatchBytes = std::size_t{512} << 20;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Where a lane's time went (RSZ_GPU_STATS=1 prints it when the stage ends).
struct LaneStats {
  std::size_t batches = 0;
  std::size_t files = 0;
  double idle = 0;    // waiting for jobs
  double slot_wait = 0;  // the worker waiting for the queue thread to free a slot
  double decode = 0;  // the worker in nvJPEG's decode calls (on the engines, they return once the batch is decoded)
  double queue = 0;   // the queue thread queueing a batch's resize and copy-back
  double readers = 0;  // of which waiting for the jobs of the slot's batch before to read their results
  double wait = 0;    // waiting for a batch's results in host memory (the jobs' threads then read them)
  // --encode gpu, on the lane's encoder thread: encoding its batches' JPEG files (queueing nvJPEG's calls, which wait
  // on the host, and taking the files), and the lane waiting for that thread to give a slot back.
  double encode = 0;
  double encoder_wait = 0;
  bool started = false;
  Clock::time_point first;  // its first batch taken
  Clock::time_point last;   // its last batch handed out
};

// Pinned host memory that a batch's results are copied back into, read out by the jobs' own threads (in parallel,
// while the lane goes on with its next batches); it is used again once every job has read its result.
struct Staging {
  Arena memory{true, "GPU resize", "pinned host memory for the results", kBatchBytes};
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
  const GpuJob* job;
  std::promise<void> done;
  std::string error;
  const std::uint8_t* staged = nullptr;
  Staging* staging = nullptr;
  const std::uint8_t* jpeg_pixels = nullptr;  // a job with `jpeg`: its 8-bit images on the device, to encode
  std::vector<std::string> files;             // and its files
  bool released = false;
  std::uint8_t* pinned = nullptr;  // a job with `pixels`: their copy in pinned memory (PinnedPool), made by its thread
  std::size_t pinned_bytes = 0;

  void release() {
    if (released) return;
    released = true;
    done.set_value();
  }
};

// Pinned host blocks that the threads of jobs with `pixels` copy them into, each its own and all at once, before they
// queue the job: the lane then only queues their copies to the device. Gathering them on the lane's thread instead
// (one memcpy after another) bounded --backend cuda's 1080p jobs at about 1 ms a photo. A block goes back to the pool
// once its job is handed out (its batch is done); the pool keeps at most kMostPinned bytes (beyond, a job's pixels are
// gathered by the lane).
class PinnedPool {
 public:
  static constexpr std::size_t kMostPinned = std::size_t{1} << 30;
  // Allocated with `device` current (a job's thread has no GPU of its own: its first CUDA call would start one on
  // GPU 0, even in a process told --device 1).
  explicit PinnedPool(int device) : device_(device) {}
  ~PinnedPool() {
    std::vector<std::uint8_t*> blocks;
    for (const auto& [bytes, block] : free_) blocks.push_back(block);
    free_blocks(blocks);
  }
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;
  // A block of at least `bytes` (the size in `got`), or null where none can be had. A full pool frees its free blocks
  // to make room (a kept stage's blocks of 1080p photos, say, for a run of 4K ones).
  std::uint8_t* take(std::size_t bytes, std::size_t& got) noexcept {
    std::vector<std::uint8_t*> evicted;
    bool room = false;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      const auto fits = free_.lower_bound(bytes);
      if (fits != free_.end() && fits->first <= bytes + bytes / 2) {  // not a much larger one
        got = fits->first;
        std::uint8_t* block = fits->second;
        free_.erase(fits);
        return block;
      }
      try {
        while (held_ + bytes > kMostPinned && !free_.empty()) {
          const auto largest = std::prev(free_.end());
          held_ -= largest->first;
          evicted.push_back(largest->second);
          free_.erase(largest);
        }
      } catch (...) {  // no memory for the list: nothing more evicted
      }
      room = held_ + bytes <= kMostPinned;
      if (room) held_ += bytes;  // reserved for the block made below
    }
    free_blocks(evicted);
    if (!room) return nullptr;
    void* block = nullptr;
    bool made = false;
    try {
      const OnDevice on(device_);
      made = cudaMallocHost(&block, bytes) == cudaSuccess;
    } catch (...) {
      made = false;
    }
    if (!made) {
      cudaGetLastError();  // not left for the next call to find
      const std::lock_guard<std::mutex> lock(mutex_);
      held_ -= bytes;
      return nullptr;
    }
    got = bytes;
    return static_cast<std::uint8_t*>(block);
  }
  void give(std::uint8_t* block, std::size_t bytes) noexcept {
    try {
      const std::lock_guard<std::mutex> lock(mutex_);
      free_.emplace(bytes, block);
      return;
    } catch (...) {  // no memory for the entry: the block goes
    }
    free_blocks({block});
    const std::lock_guard<std::mutex> lock(mutex_);
    held_ -= bytes;
  }

 private:
  void free_blocks(const std::vector<std::uint8_t*>& blocks) noexcept {
    if (blocks.empty()) return;
    std::optional<OnDevice> on;
    try {
      on.emplace(device_);
    } catch (...) {  // freed from where this thread is
    }
    for (std::uint8_t* block : blocks) cudaFreeHost(block);
  }

  int device_;
  std::mutex mutex_;
  std::multimap<std::size_t, std::uint8_t*> free_;
  std::size_t held_ = 0;  // bytes allocated, free or taken
};

// One batch on its way through a lane: its decoder (whose device memory holds the batch's images until this slot
// decodes again), its results on the device and in pinned host memory, and the event that says they are there.
struct Slot {
  std::unique_ptr<JpegBatchDecoder> decoder;
  Arena results{false, "GPU resize", "device memory for the results", kBatchBytes};
  Arena scratch{false, "GPU resize", "device memory for the jobs' scratch", kBatchBytes};
  Arena uploads{false, "GPU resize", "device memory for the jobs' uploads", kBatchBytes};
  Arena pinned_uploads{true, "GPU resize", "pinned host memory for the jobs' uploads", kBatchBytes};
  Arena jpeg_pixels{false, "GPU resize", "device memory for the images to encode", kBatchBytes};
  // Images handed in decoded already (GpuJob::pixels): gathered in pinned memory, one copy to the device a batch.
  Arena pinned_pixels{true, "GPU resize", "pinned host memory for the decoded images", kBatchBytes};
  Arena pixels{false, "GPU resize", "device memory for the decoded images", kBatchBytes};
  std::vector<Pending*> to_encode;             // the batch's jobs with `jpeg`, handed to the encoder thread
  bool encoding = false;                       // the encoder thread has the slot (its images and encoder states)
  Staging staging;
  BlockingEvent done;
  std::vector<Pending*> batch;  // decoded (or queued on the GPU), not handed out yet
  std::vector<DeviceImage> images;  // the batch's decoded images (decode_batch), for its work (queue_batch)
  BlockingEvent decoded;            // the batch's decode, on the lane's decode stream
  bool in_use = false;  // decoded by the worker, not yet handed out by the queue thread (guarded by Lane::hand_mutex)
  std::vector<std::string> errors;
  std::vector<std::size_t> offsets;
  std::uint8_t* host_out = nullptr;
};

// The JPEG files an encoder thread encodes between two waits for the GPU (--encode gpu), and so the encoder states it
// holds (each made once, with device memory of its own). With one state an image of a batch, a first run of 1,024
// thumbnails on an H200 took 1.38 s to encode where a warm process, whose states existed, ran the whole job in
// 0.35 s; COCO's batches of crops needed hundreds of states.
constexpr std::size_t kEncodeChunk = 32;

// One worker: two slots (one batch decoding while the one before is resized and copied back: the decode runs on the
// GPU's JPEG engines, the resize on its cores), one stream for the resizes, taking batches from the shared queue.
// The worker decodes each batch into a free slot on the decode stream (nvJPEG's call on the engines holds the calling
// thread for the whole batch: 13 ms a batch of 64 1080p photos on an H200) and hands the slot to the lane's queue
// thread, which queues the batch's work on `stream` after its decode, waits for it, hands the results out and frees
// the slot; so the engines decode the next batch meanwhile. (With the worker doing both, one after the other, the
// queueing took 12% of its time, the engines idle.)
struct Lane {
  int device;
  cudaStream_t stream = nullptr;
  cudaStream_t decode_stream = nullptr;
  Slot slots[2];
  int next_slot = 0;
  // The hand-off between the worker and the queue thread: the slots decoded, in order, and whether the worker has
  // ended (no more batches).
  std::mutex hand_mutex;
  std::condition_variable hand_wake;
  Slot* decoded[2] = {nullptr, nullptr};  // a ring of the two slots: `handed` of them from `first`
  int first_decoded = 0;
  int handed = 0;
  bool decoding_ended = false;
  LaneStats stats;
  std::atomic<std::size_t>* failures;  // the stage's count of failed batches
  // --encode gpu: the lane's encoder thread (started with the first batch that has JPEG files to make), its stream,
  // and the slots it has to encode, in order.
  cudaStream_t encode_stream = nullptr;
  std::unique_ptr<JpegBatchEncoder> encoder;  // the thread's, made with it
  BlockingEvent encoded;
  std::thread encoder_thread;
  std::mutex encode_mutex;
  std::condition_variable encode_wake;
  std::vector<Slot*> to_encode;  // at most the two slots (room reserved: handing one over cannot throw)
  bool encode_stop = false;

  Lane(int device_, std::unique_ptr<JpegBatchDecoder> first, std::unique_ptr<JpegBatchDecoder> second,
       std::atomic<std::size_t>* failures_)
      : device(device_), failures(failures_) {
    slots[0].decoder = std::move(first);
    slots[1].decoder = std::move(second);
    to_encode.reserve(2);
    const OnDevice on(device);
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "GPU resize", "cudaStreamCreate");
    if (cudaStreamCreateWithFlags(&decode_stream, cudaStreamNonBlocking) != cudaSuccess) {
      cudaStreamDestroy(stream);
      throw Error(ErrorCode::Io, "GPU resize: cannot create the decode stream");
    }
  }
  ~Lane() {
    stop_encoder();
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return;
    cudaSetDevice(device);
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    cudaStreamSynchronize(decode_stream);
    for (Slot& slot : slots) slot.decoded.release();
    cudaStreamDestroy(decode_stream);
    if (encode_stream != nullptr) cudaStreamSynchronize(encode_stream);
    encoder.reset();  // before the stream its states were made with
    if (encode_stream != nullptr) {
      encoded.release();
      cudaStreamDestroy(encode_stream);
    }
    for (Slot& slot : slots) {
      slot.done.release();
      slot.results.release();  // on its device
      slot.scratch.release();
      slot.jpeg_pixels.release();
      slot.uploads.release();
      slot.pixels.release();
    }
    cudaSetDevice(previous);
  }
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  // The slot a batch is queued in: other than the one whose batch is on the GPU.
  Slot& take_slot() {
    Slot& slot = slots[next_slot];
    next_slot ^= 1;
    return slot;
  }

  // The slot the worker decodes its next batch into, once the queue thread has handed out its batch before.
  Slot& free_slot() {
    Slot& slot = take_slot();
    const Clock::time_point start = Clock::now();
    std::unique_lock<std::mutex> lock(hand_mutex);
    hand_wake.wait(lock, [&slot] { return !slot.in_use; });
    stats.slot_wait += seconds_since(start);
    return slot;
  }

  // Hands a decoded slot to the queue thread. Throws nothing.
  void hand(Slot& slot) noexcept {
    {
      const std::lock_guard<std::mutex> lock(hand_mutex);
      slot.in_use = true;
      decoded[(first_decoded + handed) % 2] = &slot;  // at most the two slots are handed at once
      ++handed;
    }
    hand_wake.notify_all();
  }

  // The queue thread's next decoded slot, in order; null once the worker has ended and none is left.
  Slot* next_decoded() {
    std::unique_lock<std::mutex> lock(hand_mutex);
    hand_wake.wait(lock, [this] { return decoding_ended || handed > 0; });
    if (handed == 0) return nullptr;
    Slot* slot = decoded[first_decoded];
    first_decoded = (first_decoded + 1) % 2;
    --handed;
    return slot;
  }

  // The queue thread is done with the slot: the worker may decode into it again.
  void release_slot(Slot& slot) {
    {
      const std::lock_guard<std::mutex> lock(hand_mutex);
      slot.in_use = false;
    }
    hand_wake.notify_all();
  }

  void end_decoding() {
    {
      const std::lock_guard<std::mutex> lock(hand_mutex);
      decoding_ended = true;
    }
    hand_wake.notify_all();
  }

  // Decodes the batch into `slot` on the decode stream (returning once it is queued there; the slot's `decoded` event
  // marks it) and puts the batch in the slot. Where the GPU fails it, throws with the slot left free and nothing of
  // the batch still running.
  void decode_batch(Slot& slot, const std::vector<Pending*>& batch) {
    const OnDevice on(device);
    std::vector<std::string_view> files;
    std::vector<std::size_t> file_jobs;  // the batch's jobs with files (the others hand their pixels in)
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!batch[i]->job->pixels.empty()) continue;
      files.push_back(batch[i]->job->file);
      file_jobs.push_back(i);
    }
    const Clock::time_point start = Clock::now();
    if (!stats.started) {
      stats.started = true;
      stats.first = start;
    }
    std::vector<DeviceImage> images(batch.size());
    try {
      if (!files.empty() && !slot.decoder) {
        for (const std::size_t i : file_jobs) images[i].error = "this GPU stage decodes no files";
      } else if (!files.empty()) {
        std::vector<DeviceImage> decoded_files = slot.decoder->decode(files, decode_stream);
        for (std::size_t k = 0; k < file_jobs.size(); ++k) images[file_jobs[k]] = std::move(decoded_files[k]);
      }
      slot.decoded.record(decode_stream, "GPU resize", "the batch's decode");
      slot.batch = batch;
    } catch (...) {
      cudaStreamSynchronize(decode_stream);  // its status is the error being thrown, or a later one's
      slot.batch.clear();
      throw;
    }
    slot.images = std::move(images);
    stats.decode += seconds_since(start);
  }

  // Queues the decoded batch's uploads, resizes and copy-back on the lane's stream, after its decode (returning once
  // queued: the GPU's work is handed out by finish()). Where the GPU fails it, throws with the batch still in the slot
  // and nothing of it still running.
  void queue_batch(Slot& slot) {
    const OnDevice on(device);
    const Clock::time_point start = Clock::now();
    try {
      slot.decoded.wait_on(stream, "GPU resize", "the batch's decode");
      upload_pixels(slot, slot.batch, slot.images);
      queue_work(slot, slot.batch, slot.images);
    } catch (...) {
      // Nothing of the batch left running: its work, and its decode (whose files' bytes go with its jobs; the wait
      // for it may be what failed).
      cudaStreamSynchronize(stream);
      cudaStreamSynchronize(decode_stream);
      throw;
    }
    stats.queue += seconds_since(start);
  }

  // Both, one after the other (a lane without its queue thread).
  void submit(Slot& slot, const std::vector<Pending*>& batch) {
    decode_batch(slot, batch);
    try {
      queue_batch(slot);
    } catch (...) {
      slot.batch.clear();  // the caller fails the batch
      throw;
    }
  }

  // The batch's images handed in decoded already (GpuJob::pixels), gathered in the slot's pinned memory (its copy of
  // the batch before is done: finished) and copied to the device on the lane's stream, each then one of `images`.
  void upload_pixels(Slot& slot, const std::vector<Pending*>& batch, std::vector<DeviceImage>& images) {
    std::vector<std::size_t> offsets(batch.size(), 0);
    std::size_t total = 0;
    std::size_t gathered = 0;  // of which the pixels its jobs' threads did not copy into pinned blocks (gathered here)
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const GpuJob& job = *batch[i]->job;
      if (job.pixels.empty()) continue;
      const Dims& s = job.input_sizes;
      if (s.size() != 4 || s[0] != 1 || (s[1] != 1 && s[1] != 3) ||
          job.pixels.size() != static_cast<std::size_t>(s[1] * s[2] * s[3])) {
        throw Error(ErrorCode::InvalidArgument, "GPU resize: a job's pixels are not 1 image of its input sizes");
      }
      offsets[i] = total;
      total += aligned_bytes(job.pixels.size());
      if (batch[i]->pinned == nullptr) gathered += aligned_bytes(job.pixels.size());
    }
    if (total == 0) return;
    // Those in pinned blocks are copied to the device from there, the others from the slot's pinned memory.
    std::uint8_t* pinned = gathered > 0 ? slot.pinned_pixels.reserve(gathered) : nullptr;
    std::uint8_t* on_device = slot.pixels.reserve(total);
    std::size_t at = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const std::string_view pixels = batch[i]->job->pixels;
      if (pixels.empty()) continue;
      if (batch[i]->pinned != nullptr) {
        check_cuda(cudaMemcpyAsync(on_device + offsets[i], batch[i]->pinned, pixels.size(), cudaMemcpyHostToDevice,
                                   stream),
                   "GPU resize", "a decoded image");
        continue;
      }
      std::memcpy(pinned + at, pixels.data(), pixels.size());
      check_cuda(cudaMemcpyAsync(on_device + offsets[i], pinned + at, pixels.size(), cudaMemcpyHostToDevice, stream),
                 "GPU resize", "a decoded image");
      at += aligned_bytes(pixels.size());
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const GpuJob& job = *batch[i]->job;
      if (job.pixels.empty()) continue;
      DeviceImage& image = images[i];
      image.channels = static_cast<int>(job.input_sizes[1]);
      image.height = job.input_sizes[2];
      image.width = job.input_sizes[3];
      image.data = on_device + offsets[i];
      image.pixel_bytes = image.channels;
      image.row_bytes = image.width * image.pixel_bytes;
    }
  }

  // submit's second half: the jobs' uploads copied to the device, their work and the copy-back of their results
  // queued on the lane's stream, the slot's event after them.
  void queue_work(Slot& slot, const std::vector<Pending*>& batch, const std::vector<DeviceImage>& images) {
    {  // the encoder thread done with the slot's batch before (its images and encoder states)
      const Clock::time_point before = Clock::now();
      std::unique_lock<std::mutex> lock(encode_mutex);
      encode_wake.wait(lock, [&slot] { return !slot.encoding; });
      stats.encoder_wait += seconds_since(before);
    }
    slot.errors.assign(batch.size(), std::string());
    slot.offsets.assign(batch.size(), 0);
    std::vector<std::size_t> upload_offsets(batch.size(), 0);
    std::vector<std::size_t> scratch_offsets(batch.size(), 0);
    std::vector<std::size_t> jpeg_offsets(batch.size(), 0);
    std::size_t total = 0;  // the results copied back (not those of jobs with `jpeg`, encoded instead)
    std::size_t upload_total = 0;
    std::size_t scratch_total = 0;
    std::size_t jpeg_total = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const GpuJob& job = *batch[i]->job;
      const DeviceImage& image = images[i];
      slot.errors[i] = image.error;
      if (slot.errors[i].empty() && (job.input_sizes.size() != 4 || job.input_sizes[1] != image.channels ||
                                     job.input_sizes[2] != image.height || job.input_sizes[3] != image.width)) {
        slot.errors[i] = "decoded at " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                         ", not the planned size";
      }
      if (slot.errors[i].empty() && job.jpeg) {
        const GpuJob::Jpeg& j = *job.jpeg;
        if (j.images < 1 || static_cast<std::size_t>(j.images * j.height * j.width * j.channels) != job.result_bytes) {
          throw Error(ErrorCode::InvalidArgument, "GPU resize: a job's JPEG images are not its result's bytes");
        }
      }
      slot.offsets[i] = total;
      upload_offsets[i] = upload_total;
      scratch_offsets[i] = scratch_total;
      jpeg_offsets[i] = jpeg_total;
      if (slot.errors[i].empty()) {
        (job.jpeg ? jpeg_total : total) += aligned_bytes(job.result_bytes);
        upload_total += aligned_bytes(job.upload.size());
        scratch_total += aligned_bytes(job.scratch_bytes);
      }
    }
    std::uint8_t* device_out = slot.results.reserve(std::max<std::size_t>(total, 256));
    std::uint8_t* device_scratch = scratch_total > 0 ? slot.scratch.reserve(scratch_total) : nullptr;
    std::uint8_t* device_jpeg = jpeg_total > 0 ? slot.jpeg_pixels.reserve(jpeg_total) : nullptr;
    std::uint8_t* device_uploads = nullptr;
    if (upload_total > 0) {  // one copy for the batch, from pinned memory (the slot's last copy is done: finished)
      std::uint8_t* pinned = slot.pinned_uploads.reserve(upload_total);
      for (std::size_t i = 0; i < batch.size(); ++i) {
        const std::string_view upload = batch[i]->job->upload;
        if (slot.errors[i].empty() && !upload.empty()) {
          std::memcpy(pinned + upload_offsets[i], upload.data(), upload.size());
        }
      }
      device_uploads = slot.uploads.reserve(upload_total);
      check_cuda(cudaMemcpyAsync(device_uploads, pinned, upload_total, cudaMemcpyHostToDevice, stream), "GPU resize",
                 "the jobs' uploads");
    }
    const Clock::time_point before_readers = Clock::now();
    slot.staging.wait_until_read();  // the jobs of this slot's last batch have read their results
    stats.readers += seconds_since(before_readers);
    slot.host_out = slot.staging.memory.reserve(std::max<std::size_t>(total, 256));
    ExecOptions exec;
    exec.backend = Backend::Cuda;
    exec.device = device;
    exec.stream = stream;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!slot.errors[i].empty()) continue;
      const GpuJob& job = *batch[i]->job;
      const DeviceImage& image = images[i];
      const ConstTensorView input(image.data, DataType::UNorm8, job.input_sizes,
                                  {image.row_bytes * image.height, 1, image.row_bytes, image.pixel_bytes},
                                  MemorySpace::Device);
      std::uint8_t* out = job.jpeg ? device_jpeg + jpeg_offsets[i] : device_out + slot.offsets[i];
      job.queue(input, device_uploads == nullptr ? nullptr : device_uploads + upload_offsets[i],
                job.scratch_bytes == 0 ? nullptr : device_scratch + scratch_offsets[i], out, exec);
      if (job.jpeg) batch[i]->jpeg_pixels = out;  // encoded by the encoder thread once the batch is done
    }
    if (total > 0) {
      check_cuda(cudaMemcpyAsync(slot.host_out, device_out, total, cudaMemcpyDeviceToHost, stream), "GPU resize",
                 "copy back");
    }
    slot.done.record(stream, "GPU resize", "the batch's work");
  }

  // Waits for the slot's batch to be in host memory and hands its results out (without a step that can throw once
  // the first job sees its result: the errors moved in, the buffer's readers counted, then every job released).
  // Throws, with the batch still in the slot, where the GPU failed it.
  void finish(Slot& slot) {
    const OnDevice on(device);
    const Clock::time_point start = Clock::now();
    slot.done.synchronize("GPU resize", "the batch's resize");
    stats.wait += seconds_since(start);
    // What can throw comes before the batch is taken out of the slot (a throw fails the batch, whose jobs the CPU
    // then runs): the encoder thread started where the batch has JPEG files to make, the lists' room reserved.
    bool has_jpeg = false;
    std::size_t staged = 0;  // the jobs that read a result out of the staging memory
    for (std::size_t i = 0; i < slot.batch.size(); ++i) {
      if (!slot.errors[i].empty()) continue;
      if (slot.batch[i]->job->jpeg) {
        has_jpeg = true;
      } else {
        ++staged;
      }
    }
    if (has_jpeg) start_encoder();
    std::vector<Pending*> jpeg_jobs;  // released by the encoder thread, with their files
    std::vector<Pending*> done;  // released here (a released job's thread may end it at once: not touched after)
    jpeg_jobs.reserve(slot.batch.size());
    done.reserve(slot.batch.size());
    {
      const std::lock_guard<std::mutex> lock(slot.staging.mutex);
      slot.staging.unread = staged;
    }
    std::vector<Pending*> batch = std::move(slot.batch);
    slot.batch.clear();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      batch[i]->error = std::move(slot.errors[i]);
      if (batch[i]->error.empty() && batch[i]->job->jpeg) {
        jpeg_jobs.push_back(batch[i]);
        continue;
      }
      if (batch[i]->error.empty()) {
        batch[i]->staged = slot.host_out + slot.offsets[i];
        batch[i]->staging = &slot.staging;
      }
      done.push_back(batch[i]);
    }
    ++stats.batches;
    stats.files += batch.size();
    stats.last = Clock::now();
    if (!jpeg_jobs.empty()) hand_to_encoder(slot, std::move(jpeg_jobs));
    for (Pending* p : done) p->release();
  }

  // The encoder thread, on the first batch with JPEG files to make. Throws where it cannot start.
  void start_encoder() {
    const std::lock_guard<std::mutex> lock(encode_mutex);
    if (!encoder_thread.joinable()) encoder_thread = std::thread([this] { encode_loop(); });
  }

  // --encode gpu: the slot's jobs with JPEG files go to the encoder thread (start_encoder), which encodes them on
  // its own stream while this lane decodes and resizes its next batches; the slot is the thread's until then.
  // Throws nothing (the queue has room for both slots).
  void hand_to_encoder(Slot& slot, std::vector<Pending*> jobs) noexcept {
    {
      const std::lock_guard<std::mutex> lock(encode_mutex);
      slot.to_encode = std::move(jobs);
      slot.encoding = true;
      to_encode.push_back(&slot);
    }
    encode_wake.notify_all();
  }

  void encode_loop() {
    for (;;) {
      Slot* slot = nullptr;
      {
        std::unique_lock<std::mutex> lock(encode_mutex);
        encode_wake.wait(lock, [this] { return encode_stop || !to_encode.empty(); });
        if (to_encode.empty()) return;  // stopping, nothing left
        slot = to_encode.front();
        to_encode.erase(to_encode.begin());
      }
      const Clock::time_point start = Clock::now();
      encode_slot(*slot);
      stats.encode += seconds_since(start);
      {
        const std::lock_guard<std::mutex> lock(encode_mutex);
        slot->encoding = false;
        slot->to_encode.clear();
      }
      encode_wake.notify_all();
    }
  }

  // Encodes a slot's JPEG jobs (their images are on the device: the batch was waited for) and releases them with
  // their files, or where the GPU fails, with the error (the CPU then makes their outputs). The images go
  // kEncodeChunk at a time: the encoder holds that many states (each made once, with device memory of its own).
  void encode_slot(Slot& slot) {
    std::vector<std::vector<std::string>> files(slot.to_encode.size());
    try {
      const OnDevice on(device);
      if (encode_stream == nullptr) {
        check_cuda(cudaStreamCreateWithFlags(&encode_stream, cudaStreamNonBlocking), "GPU JPEG encoder",
                   "cudaStreamCreate");
      }
      if (!slot.decoder) throw Error(ErrorCode::InvalidArgument, "this GPU stage has no JPEG encoder");
      if (!encoder) encoder = std::make_unique<JpegBatchEncoder>(*slot.decoder);
      std::vector<std::pair<std::size_t, std::int64_t>> chunk;  // (job, image) of each queued image, in order
      const auto take_chunk = [&] {
        encoded.wait(encode_stream, "GPU JPEG encoder", "the batch's encoding");
        for (std::size_t n = 0; n < chunk.size(); ++n) files[chunk[n].first].push_back(encoder->take(n, encode_stream));
        chunk.clear();
        encoder->clear();
      };
      encoder->clear();
      for (std::size_t i = 0; i < slot.to_encode.size(); ++i) {
        const GpuJob::Jpeg& j = *slot.to_encode[i]->job->jpeg;
        const auto image_bytes = static_cast<std::size_t>(j.height * j.width * j.channels);
        for (std::int64_t k = 0; k < j.images; ++k) {
          encoder->queue(slot.to_encode[i]->jpeg_pixels + static_cast<std::size_t>(k) * image_bytes, j.width,
                         j.height, j.channels, j.quality, encode_stream);
          chunk.emplace_back(i, k);
          if (chunk.size() == kEncodeChunk) take_chunk();
        }
      }
      if (!chunk.empty()) take_chunk();
    } catch (const std::exception& e) {
      std::string error;
      try {
        error = std::string("the GPU failed: ") + e.what();
      } catch (...) {
      }
      fail_encoding(slot, error);
      return;
    } catch (...) {
      fail_encoding(slot, "");
      return;
    }
    for (std::size_t i = 0; i < slot.to_encode.size(); ++i) {
      slot.to_encode[i]->files = std::move(files[i]);
      slot.to_encode[i]->release();
    }
  }

  void fail_encoding(Slot& slot, const std::string& error) noexcept {
    if (encode_stream != nullptr) cudaStreamSynchronize(encode_stream);
    failures->fetch_add(1, std::memory_order_relaxed);
    for (Pending* p : slot.to_encode) {
      try {
        p->error = error;
      } catch (...) {  // out of memory: the job still goes to the CPU
        p->error.clear();
      }
      if (p->error.empty()) p->error.assign("the GPU failed");  // short enough to need no allocation
      p->release();
    }
  }

  // Lets the encoder thread finish the slots handed to it, then ends it.
  void stop_encoder() {
    {
      const std::lock_guard<std::mutex> lock(encode_mutex);
      encode_stop = true;
    }
    encode_wake.notify_all();
    if (encoder_thread.joinable()) encoder_thread.join();
  }
};

// Lanes (workers, each with its own decoders, stream and memory): one a GPU. On an H200, 1,024 photos took 1.82-2.00 s
// with one lane, 2.00-2.29 s with two (each decoding and resizing its own batches) and 2.23 s with three: the lanes'
// decodes ran at once and each took longer. One lane overlaps its batches instead (a batch decoding while the one
// before resizes).
// How long a lane waits for a fuller batch before it takes what is waiting (each decode call has a fixed cost).
constexpr auto kGather = std::chrono::milliseconds(2);

}  // namespace

struct BatchResampler::Impl {
  int max_batch = 0;
  bool decodes = true;
  std::vector<std::unique_ptr<Lane>> lanes;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Pending*> queue;
  std::size_t queued_bytes = 0;  // the batch bytes of the queue's jobs
  std::size_t queued_files = 0;  // the queue's jobs with files (the others hand their pixels in)
  bool stopping = false;
  bool said = false;  // RSZ_GPU_STATS' lines
  std::vector<std::thread> workers;                // the lanes' (guarded by `mutex` while lanes join)
  std::mutex join_mutex;                           // joining `joiners`
  std::vector<std::thread> joiners;                // making the later GPUs' lanes
  std::vector<std::string> lane_errors;            // why a later GPU's lane could not be made (guarded by `mutex`)
  std::vector<Clock::time_point> joined_at;        // when each later lane joined

  double made_in = 0;  // seconds the first GPU's lane took to make (nvJPEG's handles, streams)
  Clock::time_point made_at;
  // The jobs' side (RSZ_GPU_STATS): how many ran, their total microseconds from queued to handed out, and copying
  // their results out of the staging memory.
  std::atomic<std::uint64_t> jobs{0};
  std::atomic<std::uint64_t> waited_us{0};
  std::atomic<std::uint64_t> copied_us{0};
  std::atomic<std::size_t> failures{0};  // batches the GPU failed
  PinnedPool pinned;  // the jobs' copies of their pixels (on the first GPU)

  Impl(const std::vector<int>& devices, int max_batch_, bool decodes_)
      : max_batch(max_batch_), decodes(decodes_), pinned(devices.empty() ? 0 : devices.front()) {
    if (devices.empty()) throw Error(ErrorCode::InvalidArgument, "GPU resize: no GPU to run on");
    const Clock::time_point start = Clock::now();
    lanes.reserve(devices.size());  // never moved while the workers use them
    joined_at.reserve(devices.size());
    lane_errors.reserve(devices.size());
    workers.reserve(devices.size());
    // The first GPU's lane here: the stage is ready with it (nvJPEG's hardware decoder takes most of a second a GPU,
    // and two GPUs made at once by one process took 1.2-1.7 s on an H200 pair against 0.85 s for one). The others
    // are made on threads of their own and join the stage when they are ready, taking batches from then on.
    lanes.push_back(make_lane(devices.front(), devices.size() > 1));
    try {
      workers.emplace_back([this, l = lanes.front().get()] { loop(*l); });
      for (std::size_t i = 1; i < devices.size(); ++i) {
        joiners.emplace_back([this, device = devices[i]] { join_lane(device); });
      }
    } catch (...) {  // a thread that could not start: the started ones stop before the lanes go
      stop();
      throw;
    }
    made_at = Clock::now();
    made_in = std::chrono::duration<double>(made_at - start).count();
  }

  // A GPU's lane: its two decoders (siblings: nvJPEG's handles made once) and its stream. `named`: the error says
  // which GPU.
  std::unique_ptr<Lane> make_lane(int device, bool named) {
    try {
      if (!decodes) return std::make_unique<Lane>(device, nullptr, nullptr, &failures);
      auto first = std::make_unique<JpegBatchDecoder>(device, max_batch);
      auto second = first->sibling();
      return std::make_unique<Lane>(device, std::move(first), std::move(second), &failures);
    } catch (const Error& e) {
      if (!named) throw;
      throw Error(e.code(), "GPU " + std::to_string(device) + ": " + e.what());
    }
  }

  // Makes a later GPU's lane and starts its worker (unless the stage is stopping by then). A GPU that cannot be made
  // leaves the stage on the others, with the reason in `lane_errors` (the stage counts as failed: not kept).
  void join_lane(int device) noexcept {
    std::unique_ptr<Lane> lane;
    std::string error;
    try {
      lane = make_lane(device, true);
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "GPU " + std::to_string(device) + ": could not be used";
    }
    const std::lock_guard<std::mutex> lock(mutex);
    if (!lane) {
      left_out(std::move(error));
      return;
    }
    if (stopping) return;  // the lane goes here, after the lock: its worker never started
    Lane* joined = lane.get();
    try {
      workers.emplace_back([this, joined] { loop(*joined); });
    } catch (...) {  // no thread for it: the others run the job
      left_out("GPU " + std::to_string(device) + ": no thread for it");
      return;
    }
    lanes.push_back(std::move(lane));       // room reserved: cannot throw
    joined_at.push_back(Clock::now());      // the same
  }

  // A later GPU left out of the stage, and why (`mutex` held; room for the reason reserved). The stage counts as
  // failed: not kept.
  void left_out(std::string why) noexcept {
    lane_errors.push_back(std::move(why));
    failures.fetch_add(1, std::memory_order_relaxed);
  }

  // Waits for the later GPUs' lanes to join (or be left out); from any thread, more than once.
  void wait_for_lanes() {
    const std::lock_guard<std::mutex> lock(join_mutex);
    for (std::thread& j : joiners) j.join();
    joiners.clear();
  }

  ~Impl() {
    stop();
    say_stats();
  }

  // RSZ_GPU_STATS: what the stage did, said once (when it stops).
  void say_stats() {
    if (said) return;
    said = true;
    const char* wanted = std::getenv("RSZ_GPU_STATS");
    if (wanted == nullptr || *wanted == '\0' || *wanted == '0') return;
    std::fprintf(stderr, "rsz: GPU stage made in %.3f s, ended %.3f s later\n", made_in, seconds_since(made_at));
    const auto after = [this](Clock::time_point t) { return std::chrono::duration<double>(t - made_at).count(); };
    for (std::size_t i = 1; i < lanes.size(); ++i) {
      std::fprintf(stderr, "rsz: GPU stage, lane %zu (GPU %d) joined %.3f s after it was made\n", i, lanes[i]->device,
                   after(joined_at[i - 1]));
    }
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      const LaneStats& s = lanes[i]->stats;
      std::fprintf(stderr,
                   "rsz: GPU stage, lane %zu (GPU %d): %zu batches, %zu files, from %.3f s to %.3f s after it was made; idle "
                   "%.3f s, decoding %.3f s, waiting for a free slot %.3f s; its queue thread queueing the work %.3f s "
                   "(%.3f s of it for the readers of the batch before), waiting for results %.3f s; its encoder thread "
                   "encoding JPEG files %.3f s, the lane waiting for it %.3f s\n",
                   i, lanes[i]->device, s.batches, s.files, s.started ? after(s.first) : 0.0, s.batches > 0 ? after(s.last) : 0.0,
                   s.idle, s.decode, s.slot_wait, s.queue, s.readers, s.wait, s.encode, s.encoder_wait);
    }
    const auto n = static_cast<double>(std::max<std::uint64_t>(jobs.load(), 1));
    std::fprintf(stderr, "rsz: GPU stage, jobs: %llu, each %.2f ms from queued to handed out, %.3f ms copying out\n",
                 static_cast<unsigned long long>(jobs.load()), 1e-3 * static_cast<double>(waited_us.load()) / n,
                 1e-3 * static_cast<double>(copied_us.load()) / n);
  }

  void stop() {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    wait_for_lanes();  // no worker starts after this
    for (std::thread& w : workers) w.join();
    workers.clear();
    for (auto& lane : lanes) lane->stop_encoder();  // its last batches' files made and handed out
  }

  // The device bytes a job takes in its batch: its decoded pixels (nvJPEG's interleaved RGB, or those handed in),
  // its scratch and its result.
  static std::size_t batch_bytes(const Pending* p) {
    const Dims& s = p->job->input_sizes;
    const std::size_t image = !p->job->pixels.empty() ? p->job->pixels.size()
                              : s.size() == 4        ? static_cast<std::size_t>(s[2] * s[3] * 3)
                                                     : 0;
    return image + p->job->scratch_bytes + p->job->result_bytes;
  }

  // The jobs waiting (up to a batch, after waiting kGather for a fuller one), taken from the queue. With `block`,
  // waits for the first job (none back: stopping); without, returns none at once when there is none.
  std::vector<Pending*> take_batch(Lane& lane, bool block) {
    std::vector<Pending*> batch;
    const Clock::time_point start = Clock::now();
    std::unique_lock<std::mutex> lock(mutex);
    if (block) wake.wait(lock, [this] { return stopping || !queue.empty(); });
    if (queue.empty()) return batch;
    // A batch: up to max_batch files for the decoders, with the jobs handing their pixels in among them (bounded by
    // the batch's bytes alone: they take no decoder's place).
    const auto full = [this] {
      return stopping || queued_files >= static_cast<std::size_t>(max_batch) || queued_bytes >= kBatchBytes;
    };
    if (!full()) wake.wait_for(lock, kGather, full);
    lane.stats.idle += seconds_since(start);
    std::size_t bytes = 0;
    std::size_t files = 0;
    while (!queue.empty() && (batch.empty() || bytes + batch_bytes(queue.front()) <= kBatchBytes)) {
      const bool file = queue.front()->job->pixels.empty();
      if (file && files == static_cast<std::size_t>(max_batch)) break;
      files += file ? 1 : 0;
      bytes += batch_bytes(queue.front());
      queued_bytes -= batch_bytes(queue.front());
      batch.push_back(queue.front());
      queue.pop_front();
    }
    queued_files -= files;
    // Jobs left: another lane's turn (a job's wake-up may have gone to this lane while it gathered, with another one
    // asleep).
    if (!queue.empty() && lanes.size() > 1) wake.notify_one();
    return batch;
  }

  // A lane's work: its worker (here) takes the batches and decodes each into a free slot, its queue thread queues
  // their work and hands them out (Lane). Without a thread for the queueing, serial_loop does both.
  void loop(Lane& lane) {
    std::thread queuer;
    try {
      queuer = std::thread([this, &lane] { queue_loop(lane); });
    } catch (...) {
      serial_loop(lane);
      return;
    }
    struct Ending {  // the queue thread told and joined however this loop ends
      Lane& lane;
      std::thread& queuer;
      ~Ending() {
        lane.end_decoding();
        queuer.join();
      }
    } ending{lane, queuer};
    Slot* slot = nullptr;  // free, kept across a batch that did not come or did not decode
    for (;;) {
      if (slot == nullptr) slot = &lane.free_slot();
      std::vector<Pending*> batch = take_batch(lane, true);
      if (batch.empty()) {
        if (finished()) break;
        continue;  // another lane took the jobs while this one gathered
      }
      try {
        lane.decode_batch(*slot, batch);
      } catch (const std::exception& e) {  // the GPU failed it (out of memory): its files go to the CPU
        fail(batch, gpu_failed(e.what()));
        continue;
      } catch (...) {
        fail(batch, gpu_failed(nullptr));
        continue;
      }
      lane.hand(*slot);
      slot = nullptr;
    }
  }

  // The lane's queue thread: each decoded slot's work queued after its decode, waited for and handed out, in order.
  void queue_loop(Lane& lane) {
    while (Slot* slot = lane.next_decoded()) {
      bool queued = false;
      try {
        lane.queue_batch(*slot);
        queued = true;
      } catch (const std::exception& e) {  // the GPU failed it (out of memory): its files go to the CPU
        fail(slot->batch, gpu_failed(e.what()));
      } catch (...) {
        fail(slot->batch, gpu_failed(nullptr));
      }
      if (queued) {
        finish(lane, *slot);
      } else {
        slot->batch.clear();
      }
      slot->images.clear();  // pointers into its decoder's memory, decoded into again once the slot is free
      lane.release_slot(*slot);
    }
  }

  // A failed batch's error for its jobs: "the GPU failed: WHAT" (the CPU then runs them); a shorter one where there
  // is no memory for it.
  static std::string gpu_failed(const char* what) noexcept {
    try {
      return what != nullptr ? std::string("the GPU failed: ") + what : std::string("the GPU failed");
    } catch (...) {
      return std::string();
    }
  }

  // A batch decoded into one slot while the GPU resizes the batch in the other, then that one handed out; with no
  // batch waiting, the one on the GPU is handed out at once. One thread does it all (where no queue thread could be
  // made).
  void serial_loop(Lane& lane) {
    Slot* on_gpu = nullptr;  // the slot whose batch is queued on the GPU, not handed out yet
    for (;;) {
      std::vector<Pending*> batch = take_batch(lane, on_gpu == nullptr);
      if (batch.empty() && on_gpu == nullptr) {
        if (finished()) return;
        continue;  // another lane took the jobs while this one gathered
      }
      if (!batch.empty()) {
        Slot& slot = lane.take_slot();
        try {
          lane.submit(slot, batch);  // queues the batch, or throws before queueing any of it
        } catch (const std::exception& e) {  // the GPU failed it (out of memory): its files go to the CPU
          fail(batch, gpu_failed(e.what()));
        } catch (...) {
          fail(batch, gpu_failed(nullptr));
        }
        if (on_gpu != nullptr) finish(lane, *on_gpu);
        on_gpu = slot.batch.empty() ? nullptr : &slot;
      } else {
        finish(lane, *on_gpu);
        on_gpu = nullptr;
      }
    }
  }

  // A job through the stage: queued, waited for, then (without an error) `take` reads its result out (a staged one
  // is released for the lane's next batches after). Returns "" or why the file was not run here.
  std::string run(const GpuJob& job, const std::function<void(Pending&)>& take) {
    Pending pending{&job, {}, {}, nullptr, nullptr, nullptr, {}, false, nullptr, 0};
    if (!job.pixels.empty()) {  // copied into pinned memory here, in parallel with the other jobs' threads
      pending.pinned = pinned.take(job.pixels.size(), pending.pinned_bytes);
      if (pending.pinned != nullptr) std::memcpy(pending.pinned, job.pixels.data(), job.pixels.size());
    }
    struct GiveBack {
      PinnedPool& pool;
      Pending& p;
      ~GiveBack() {
        if (p.pinned != nullptr) pool.give(p.pinned, p.pinned_bytes);
      }
    } give_back{pinned, pending};  // once the job is handed out (its batch done), or on a throw before it is queued
    std::future<void> done = pending.done.get_future();
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (stopping) return "the GPU stage has stopped";
      queue.push_back(&pending);
      queued_bytes += batch_bytes(&pending);
      if (job.pixels.empty()) ++queued_files;
    }
    wake.notify_one();
    const Clock::time_point queued = Clock::now();
    done.get();
    const Clock::time_point handed = Clock::now();
    const auto microseconds = [](Clock::duration d) {
      return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
    };
    jobs.fetch_add(1, std::memory_order_relaxed);
    waited_us.fetch_add(microseconds(handed - queued), std::memory_order_relaxed);
    if (!pending.error.empty()) return pending.error;
    if (pending.staging == nullptr && !job.jpeg) return "the GPU gave no result";
    take(pending);
    if (pending.staging != nullptr) pending.staging->read_one();  // its lane may use the staged memory again
    copied_us.fetch_add(microseconds(Clock::now() - handed), std::memory_order_relaxed);
    return "";
  }

  // Whether the stage is stopping with no job left.
  bool finished() {
    const std::lock_guard<std::mutex> lock(mutex);
    return stopping && queue.empty();
  }

  // Hands out a slot's batch, or where the GPU failed it, gives each of its jobs the error.
  void finish(Lane& lane, Slot& slot) {
    try {
      lane.finish(slot);
    } catch (const std::exception& e) {
      fail(slot.batch, gpu_failed(e.what()));
    } catch (...) {
      fail(slot.batch, gpu_failed(nullptr));
    }
    slot.batch.clear();
  }

  // A batch the GPU failed before its results were handed out: each job gets the error (the CPU decodes it).
  void fail(const std::vector<Pending*>& batch, const std::string& error) noexcept {
    failures.fetch_add(1, std::memory_order_relaxed);
    for (Pending* p : batch) {
      if (p->released) continue;
      try {
        p->error = error;
      } catch (...) {  // out of memory: the job still goes to the CPU
        p->error.clear();
      }
      if (p->error.empty()) p->error.assign("the GPU failed");  // short enough to need no allocation
      p->staged = nullptr;
      p->staging = nullptr;
      p->release();
    }
  }
};

BatchResampler::BatchResampler(const std::vector<int>& devices, int max_batch, bool decodes)
    : impl_(std::make_unique<Impl>(devices, max_batch, decodes)) {}

BatchResampler::~BatchResampler() = default;

const char* BatchResampler::engine() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  const auto& decoder = impl_->lanes.front()->slots[0].decoder;
  return decoder ? decoder->engine() : "none";
}

void BatchResampler::wait_for_gpus() { impl_->wait_for_lanes(); }

void BatchResampler::stop() {
  impl_->stop();
  impl_->say_stats();
}

std::vector<std::string> BatchResampler::unusable_gpus() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->lane_errors;
}

std::size_t BatchResampler::failures() const { return impl_->failures.load(std::memory_order_relaxed); }

std::string BatchResampler::run(const GpuJob& job, void* result) {
  if (job.jpeg) throw Error(ErrorCode::InvalidArgument, "GPU resize: a job with JPEG files returns them as files");
  return impl_->run(job, [&](Pending& done) {
    if (job.result_bytes > 0) std::memcpy(result, done.staged, job.result_bytes);
  });
}

std::string BatchResampler::run(const GpuJob& job, std::vector<std::string>& files) {
  if (!job.jpeg) throw Error(ErrorCode::InvalidArgument, "GPU resize: a job without JPEG files has no files");
  return impl_->run(job, [&](Pending& done) { files = std::move(done.files); });
}

namespace {

// A resample job's work on the GPU: its call into the result canvas (zero-filled around contain's placement), as
// float32 into `out`, or with `to_8bit` into the scratch memory and from there quantized into `out` (quantize8).
GpuJob resample_work(const ResampleJob& job, bool to_8bit) {
  GpuJob work;
  work.file = job.file;
  work.pixels = job.pixels;
  work.input_sizes = job.input_sizes;
  const std::size_t canvas_bytes = bytes_of(job.canvas, job.type);
  work.result_bytes = to_8bit ? canvas_bytes / element_size(job.type) : canvas_bytes;
  work.scratch_bytes = to_8bit ? canvas_bytes : 0;
  work.queue = [&job, to_8bit](const ConstTensorView& image, const std::uint8_t*, std::uint8_t* scratch,
                               std::uint8_t* out, const ExecOptions& exec) {
    std::uint8_t* canvas = to_8bit ? scratch : out;
    const TensorLayout layout(job.type, job.canvas);
    const Dims& strides = layout.strides();
    const auto stream = static_cast<cudaStream_t>(exec.stream);
    if (job.canvas != job.call_sizes) {
      check_cuda(cudaMemsetAsync(canvas, 0, bytes_of(job.canvas, job.type), stream), "GPU resize", "cudaMemset");
    }
    std::uint8_t* origin =
        canvas + (job.top * strides[2] + job.left * strides[3]) * static_cast<std::int64_t>(element_size(job.type));
    resample(image, TensorView(origin, job.type, job.call_sizes, strides, MemorySpace::Device), job.params, exec);
    if (to_8bit) quantize8(ConstTensorView(canvas, layout, MemorySpace::Device), out, stream);
  };
  return work;
}

}  // namespace

Resampled BatchResampler::run(const ResampleJob& job) {
  Resampled out;
  out.result.emplace(job.type, job.canvas, TensorInit::Uninitialized);
  out.error = run(resample_work(job, false), out.result->data());
  if (!out.error.empty()) out.result.reset();
  return out;
}

std::string BatchResampler::run(const ResampleJob& job, std::uint8_t* pixels) {
  if (job.type != DataType::Float32) {
    throw Error(ErrorCode::InvalidArgument, "GPU resize: 8-bit results are quantized from float32 results only");
  }
  return run(resample_work(job, true), pixels);
}

std::string BatchResampler::run(const ResampleJob& job, int quality, std::string& file) {
  if (job.type != DataType::Float32 || job.canvas.size() != 4 || job.canvas[0] != 1 ||
      (job.canvas[1] != 1 && job.canvas[1] != 3)) {
    throw Error(ErrorCode::InvalidArgument,
                "GPU resize: JPEG files are encoded from float32 results of 1 image of 1 or 3 channels only");
  }
  GpuJob work = resample_work(job, true);
  work.jpeg = GpuJob::Jpeg{quality, 1, job.canvas[2], job.canvas[3], static_cast<int>(job.canvas[1])};
  std::vector<std::string> files;
  std::string error = run(work, files);
  if (error.empty() && files.size() != 1) return "the GPU gave no JPEG file";
  if (error.empty()) file = std::move(files[0]);
  return error;
}

}  // namespace rsz::io::gpu
