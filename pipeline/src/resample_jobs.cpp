// Resample jobs (resample, thumbnail, their batch steps): each input's resize planned from its header and run as
// planned, an image read band by band where it can (InputRows: a decoder thread filling a ring of rows), or decoded
// smaller first (--shrink-on-load: the codec's scaled decode).
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "jobs.h"
#include "mirrored_ring.h"
#include "rsz/error.h"
#include "rsz/io/config.h"
#include "rsz/io/image.h"
#include "rsz/resample.h"
#include "shard_files.h"
#if defined(RSZ_GPU_JPEG)
#include "rsz/io/gpu_jpeg.h"
#endif

namespace rsz::app {
namespace {

// --shrink-on-load: the codec's scaled decode (a capability of its row: JPEG's DCT scaling, io::ImageInfo::max_shrink)
// by the largest of 8, 4 and 2 it offers that still leaves the resample a shrink of 2x or more on both axes
// (vipsthumbnail's rule), so the antialiased filter has the last word; 1 where none does.
int shrink_for(const io::ResizePlan& plan, int max_shrink) {
  const float least = std::max(plan.params.scales[2], plan.params.scales[3]);  // the axis shrunk least
  for (const int d : {8, 4, 2}) {
    if (d <= max_shrink && least * static_cast<float>(2 * d) <= 1.0f) return d;
  }
  return 1;
}

// The plan for the image decoded smaller (`shrunk`, from `full`): the same output grid, each scale widened by the
// ratio of the sizes (pixel centres stay where they were, as in the half-pixel convention).
void widen_scales(io::ResizePlan& plan, const Dims& full, const Dims& shrunk) {
  for (const std::size_t a : {std::size_t{2}, std::size_t{3}}) {
    plan.params.scales[a] *= static_cast<float>(full[a]) / static_cast<float>(shrunk[a]);
  }
}

// An image input decoded band by band as a resample reads it: the rows the next output rows read
// (rsz::resample_rows_read) are decoded when they are needed and dropped once no later output row reads them, so a
// camera-size JPEG never exists whole. About kWindowBytes of input rows are held at most (more only where one output
// row reads more).
class InputRows {
 public:
  static constexpr std::size_t kWindowBytes = std::size_t{16} << 20;
  // Background decoding: input rows a resample step reads (about), and rows the decoder writes at a time.
  static constexpr std::int64_t kBackgroundRows = 64;
  static constexpr std::int64_t kDecodeRows = 16;
  // Foreground decoding on one thread: input bytes a step reads (about).
  static constexpr std::size_t kCachedStepBytes = std::size_t{512} << 10;

  // The input rows one output row of `plan` reads at most: an output row away from the edges reads the most.
  static std::int64_t rows_one_output_reads(std::int64_t height, const io::ResizePlan& plan) {
    ResampleParams middle = plan.params;
    middle.output_pixel_offsets[2] -= static_cast<float>(plan.call_sizes[2] / 2);
    const auto read = resample_rows_read(height, 1, middle);
    return read[1] - read[0];
  }

  // The samples an InputRows holds for `plan` over an image of `sizes` at most (the memory budget counts them): a
  // window of kWindowBytes, or the ring of rows a background decoder keeps where one output row reads more than half
  // of that; never more than the whole image.
  static std::uint64_t bytes(const Dims& sizes, const io::ResizePlan& plan, int bit_depth) {
    const auto row_bytes = static_cast<std::uint64_t>(sizes[1] * sizes[3] * (bit_depth / 8));
    const auto whole = row_bytes * static_cast<std::uint64_t>(sizes[2]);
    const std::int64_t ring = ring_rows(sizes[2], row_bytes, rows_one_output_reads(sizes[2], plan));
    return std::min(whole, std::max<std::uint64_t>(kWindowBytes, row_bytes * static_cast<std::uint64_t>(ring)));
  }

  // With `background`, a thread of its own decodes the rows into a ring of a few steps' rows (MirroredRing) while
  // the caller resamples the rows already there (the decode, libjpeg's or libpng's, is serial; resampling and
  // encoding overlap it): the same rows, so the same bits. Otherwise (or where no ring can be mapped) rows are
  // decoded as they are asked for. `most_read`: rows_one_output_reads of the plan.
  InputRows(std::unique_ptr<io::ImageRows> rows, bool background, std::int64_t most_read)
      : rows_(std::move(rows)),
        height_(rows_->header().height),
        sample_bytes_(rows_->header().bit_depth / 8),
        row_bytes_(static_cast<std::size_t>(rows_->header().width * rows_->header().channels * sample_bytes_)),
        most_read_(most_read) {
    if (background) start_decoder();
  }
  InputRows(const InputRows&) = delete;
  InputRows& operator=(const InputRows&) = delete;
  ~InputRows() {
    if (decoder_.joinable()) {
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
      }
      room_.notify_one();
      decoder_.join();
    }
  }
  // Whether a thread decodes the rows (the caller then has one thread fewer for the kernels).
  bool decodes_in_background() const { return decoder_.joinable(); }

  // Output rows of `out` from row 0 as `params` place them (their output offset shifted to the band), resampled
  // from the whole input's rows.
  void resample(const TensorView& out, const ResampleParams& params, const ExecOptions& exec) {
    const std::int64_t rows = out.size(2);
    // Input rows a step reads (about): while a thread decodes, step_rows_, so that resampling follows the decoder
    // closely in a small ring; on one thread, kCachedStepBytes, so that the rows just decoded are still in the
    // core's cache when the kernel reads them (a 1080p JPEG decoded whole first: 1.1x the job's time, waiting for
    // memory), but at least four output rows' worth, since rows that two steps read are filtered by both (a camera
    // JPEG to a thumbnail, 31 rows an output row, took 1.06x the time in steps of 512 KiB); on several threads, the
    // window (enough rows for every thread).
    const std::size_t cached = std::max(kCachedStepBytes, 4 * static_cast<std::size_t>(most_read_) * row_bytes_);
    const std::size_t most = decoder_.joinable()     ? static_cast<std::size_t>(step_rows_) * row_bytes_
                             : exec.num_threads <= 1 ? std::min(cached, kWindowBytes)
                                                     : kWindowBytes;
    std::int64_t step = rows;
    while (step > 1) {
      const auto read = resample_rows_read(height_, step, params);
      if (static_cast<std::size_t>(read[1] - read[0]) * row_bytes_ <= most) break;
      step = (step + 1) / 2;
    }
    for (std::int64_t o = 0; o < rows; o += step) {
      const std::int64_t count = std::min(step, rows - o);
      ResampleParams shifted = params;
      shifted.output_pixel_offsets[2] -= static_cast<float>(o);
      const auto read = resample_rows_read(height_, count, shifted);
      hold(read[0], read[1]);
      resample_rows(view(), first_, height_, slice_of(out, 2, o, count), shifted, exec);
    }
  }

  // Decodes the rows no output row read, so that damage at the end of the file fails the input as a whole read
  // would.
  void finish() {
    hold(height_, height_);
    if (decoder_.joinable()) decoder_.join();
  }

 private:
  // Input rows of a background step: kBackgroundRows, or four output rows' worth where one reads more (rows that two
  // steps read are filtered by both), fewer where those would pass half the window (but never fewer than one output
  // row reads: ring_rows).
  static std::int64_t step_rows(std::uint64_t row_bytes, std::int64_t most_read) {
    const auto half_window = static_cast<std::int64_t>(kWindowBytes / 2 / std::max<std::uint64_t>(1, row_bytes));
    return std::max<std::int64_t>(1, std::min(std::max(kBackgroundRows, 4 * most_read), half_window));
  }
  // Rows of the ring for an image of `height` rows of `row_bytes`: two steps and two decoder writes, so that the
  // decoder works a step ahead; no more than the image.
  static std::int64_t ring_rows(std::int64_t height, std::uint64_t row_bytes, std::int64_t most_read) {
    return std::min(height, 2 * std::max(step_rows(row_bytes, most_read), most_read) + 2 * kDecodeRows);
  }

  ConstTensorView view() const {
    const io::Image& h = rows_->header();
    const std::uint8_t* origin =
        ring_ ? ring_->at(static_cast<std::uint64_t>(first_) * row_bytes_) : buffer_.get();
    return ConstTensorView(origin, sample_bytes_ == 2 ? DataType::UNorm16 : DataType::UNorm8,
                           {1, h.channels, held_, h.width},
                           {held_ * h.width * h.channels, 1, h.width * h.channels, h.channels});
  }

  void start_decoder() {
    step_rows_ = step_rows(row_bytes_, most_read_);
    ring_rows_ = ring_rows(height_, row_bytes_, most_read_);
    ring_ = MirroredRing::create(static_cast<std::size_t>(ring_rows_) * row_bytes_);
    if (!ring_) return;
    decoder_ = std::thread([this] {
      try {
        for (std::int64_t y = 0; y < height_; y += kDecodeRows) {
          const std::int64_t count = std::min(kDecodeRows, height_ - y);
          {
            // Room in the ring: rows before released_ are read no more.
            std::unique_lock<std::mutex> lock(mutex_);
            room_.wait(lock, [&] { return stop_ || y + count - released_ <= ring_rows_; });
            if (stop_) return;
          }
          rows_->read(ring_->at(static_cast<std::uint64_t>(y) * row_bytes_), count);
          const std::lock_guard<std::mutex> lock(mutex_);
          decoded_ = y + count;
          ready_.notify_one();
        }
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex_);
        error_ = std::current_exception();
        ready_.notify_one();
      }
    });
  }

  // Holds input rows [begin, end): rows before `begin` are dropped, rows up to `end` decoded (rows that no output
  // reads are decoded and dropped: the decoder gives rows in order).
  void hold(std::int64_t begin, std::int64_t end) {
    if (decoder_.joinable()) {
      // The decoder must have room for the rows up to `end` beside the held ones, or both would wait for the other.
      if (ring_rows_ < height_ && end - begin + kDecodeRows > ring_rows_) {
        throw InternalError("input rows " + std::to_string(begin) + " to " + std::to_string(end) +
                            " do not fit the decoder's ring of " + std::to_string(ring_rows_));
      }
      std::unique_lock<std::mutex> lock(mutex_);
      if (begin > released_) {
        released_ = begin;
        room_.notify_one();
      }
      ready_.wait(lock, [&] { return decoded_ >= end || error_; });
      if (error_) {
        const std::exception_ptr error = error_;
        lock.unlock();
        decoder_.join();
        std::rethrow_exception(error);
      }
      first_ = begin;
      held_ = end - begin;
      return;
    }
    const std::int64_t kept = std::max<std::int64_t>(0, first_ + held_ - begin);
    if (kept > 0 && begin > first_) {
      std::memmove(buffer_.get(), buffer_.get() + static_cast<std::size_t>(begin - first_) * row_bytes_,
                   static_cast<std::size_t>(kept) * row_bytes_);
    }
    held_ = kept;
    while (rows_->next_row() < begin) {  // rows between the bands: decoded into the buffer and dropped
      const std::int64_t count = std::min<std::int64_t>(begin - rows_->next_row(), 64);
      reserve(count);
      rows_->read(buffer_.get(), count);
    }
    first_ = begin;
    reserve(end - first_);
    if (rows_->next_row() < end) {
      rows_->read(buffer_.get() + static_cast<std::size_t>(held_) * row_bytes_, end - rows_->next_row());
    }
    held_ = end - first_;
  }

  // Room for `rows` rows, the held ones kept at the front; new bytes are left uninitialized (the decoder writes them).
  void reserve(std::int64_t rows) {
    const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(rows, 1)) * row_bytes_;
    if (capacity_ >= bytes) return;
    std::unique_ptr<std::uint8_t[]> grown(new std::uint8_t[bytes]);
    if (held_ > 0) std::memcpy(grown.get(), buffer_.get(), static_cast<std::size_t>(held_) * row_bytes_);
    buffer_ = std::move(grown);
    capacity_ = bytes;
  }

  std::unique_ptr<io::ImageRows> rows_;
  std::int64_t height_;
  int sample_bytes_;  // 1, or 2 for 16-bit samples (host order)
  std::size_t row_bytes_;
  std::int64_t most_read_;  // rows_one_output_reads of the plan
  // Rows [first_, first_ + held_) are held: in buffer_ from its start (decoded in the foreground), or in ring_ at
  // first_ * row_bytes_ (decoded by decoder_).
  std::int64_t first_ = 0;
  std::int64_t held_ = 0;
  std::unique_ptr<std::uint8_t[]> buffer_;
  std::size_t capacity_ = 0;
  // Background decoding (start_decoder): rows [released_, decoded_) are in ring_, or error_ says why not. The
  // decoder waits (room_) while its next rows would overwrite released_ and later; the caller waits (ready_) for rows.
  std::unique_ptr<MirroredRing> ring_;
  std::int64_t step_rows_ = 0;
  std::int64_t ring_rows_ = 0;
  std::thread decoder_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable room_;
  std::int64_t decoded_ = 0;
  std::int64_t released_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

// Whether resample jobs read image inputs band by band where they can (InputRows): on the host backends, images used
// in place (float32; the files open_image_rows reads have no alpha).
// Rows decoded band by band go to the kernels as unorm samples: not with --linear, whose values are converted first.
bool reads_rows(const CommonOptions& common) {
  return host_backend(common) && common.dtype == DataType::Float32 && !common.linear;
}

// What the outputs of an image read by rows (or on the GPU) carry, from its header: metadata, depth, result type and
// the colour conversion; no samples.
LoadedInput header_source(const io::Image& header, const CommonOptions& common, const std::string& input) {
  LoadedInput source;
  source.from_image = true;
  source.bit_depth = header.bit_depth;
  source.result_type = common.dtype;
  source.icc_profile = header.icc_profile;
  source.exif = header.exif;
  source.xmp = header.xmp;
  plan_colour(source, common, header.channels, input);
  return source;
}

// Output rows [first, ...) are the rows of a call whose output offset is shifted by `first`: the same bits, so PNG
// and JPEG outputs are encoded band by band as they are computed (not with contain's padded canvas).
bool banded(const io::ResizePlan& plan) {
  return !plan.padded() && offset_shifts_exactly(plan.params.output_pixel_offsets[2], plan.call_sizes[2]);
}

// What every resample job of one request shares: the resize intent and the run's settings.
struct ResampleRequest {
  io::ResizeIntent intent;
  CommonOptions common;

  // The RESAMPLE1 call for an input of `sizes` (an image's, upright, or a .npy tensor's).
  io::ResizePlan plan(const std::string& input, const Dims& sizes, bool image) const {
    if (sizes.size() != 4) {
      throw Error(ErrorCode::InvalidShape,
                  input + ": resample needs a rank-4 tensor; this one has sizes " + dims_to_string(sizes));
    }
    return io::plan_resize(intent, sizes, image);
  }
};

// One input's resample job: its output, and the request it belongs to.
struct ResampleJob {
  std::shared_ptr<const ResampleRequest> request;
  std::string input;
  std::string out;
};

// A job's plan from its input's probe: the call, the scaled decode (--shrink-on-load) and the input memory it holds.
JobPlan plan_resample_job(const ResampleJob& job, const InputProbe& probe) {
  const CommonOptions& common = job.request->common;
  JobPlan plan;
  const io::ResizePlan resize = job.request->plan(job.input, probe.sizes, probe.from_image);
  plan.result = resize.canvas;
  plan.banded = banded(resize);
  // What the decoder holds: a window of rows (a JPEG read band by band), or the image decoded smaller
  // (--shrink-on-load), instead of the whole image.
  // Not with --linear: libjpeg's scaled decode averages encoded values, which --linear is there to avoid.
  const int shrink =
      probe.from_image && common.shrink_on_load && !common.linear ? shrink_for(resize, probe.max_shrink) : 1;
  Dims decoded = probe.sizes;
  io::ResizePlan decoded_plan = resize;
  if (shrink > 1) {
    for (const std::size_t a : {std::size_t{2}, std::size_t{3}}) decoded[a] = (decoded[a] + shrink - 1) / shrink;
    widen_scales(decoded_plan, probe.sizes, decoded);
  }
  if (probe.from_image && probe.rows_in_order && reads_rows(common) && banded(decoded_plan)) {
    plan.input_bytes = InputRows::bytes(decoded, decoded_plan, probe.bit_depth);
  } else if (shrink > 1) {
    plan.input_bytes = static_cast<std::uint64_t>(decoded[1] * decoded[2] * decoded[3]);
  }
  plan.type = probe.type;
  plan.output = plan.result;
  plan.resize = resize;
  plan.shrink = shrink;
  return plan;
}

// The call for an image as it was decoded (`sizes`): the plan made from its probe (its full size), its scales
// widened where the scaled decode (--shrink-on-load) made it smaller. Sizes other than the probe's (the file changed
// since it was planned) are planned again, or fail the input where the planned scaled decode no longer fits them.
io::ResizePlan plan_decoded(const ResampleJob& job, const JobPlan& job_plan, const Dims& sizes) {
  const Dims& full = job_plan.probe.sizes;
  io::ResizePlan planned =
      job_plan.resize && job_plan.probe.from_image ? *job_plan.resize : job.request->plan(job.input, full, true);
  const int shrink = job_plan.shrink;
  if (shrink == 1) return sizes == full ? planned : job.request->plan(job.input, sizes, true);
  for (const std::size_t a : {std::size_t{2}, std::size_t{3}}) {
    if (sizes[a] != (full[a] + shrink - 1) / shrink) {
      throw Error(ErrorCode::Io, job.input + ": the file changed while rsz ran (planned at " + std::to_string(full[3]) +
                                     "x" + std::to_string(full[2]) + "); run it again");
    }
  }
  widen_scales(planned, full, sizes);
  return planned;
}

// A JPEG or PNG read in place on a host backend, into output rows that can be banded: decoded band by band as the
// output rows are computed and encoded. nullopt where the file is not read so (an orientation to apply, a
// progressive file, a padded canvas).
std::optional<std::vector<OutputRecord>> resample_by_rows(const ResampleJob& job, const JobPlan& job_plan,
                                                          const ExecOptions& exec) {
  const CommonOptions& common = job.request->common;
  io::ImageReadOptions read = image_read_options(common);
  read.jpeg_shrink = job_plan.shrink;
  std::unique_ptr<io::ImageRows> rows = io::open_image_rows(job.input, read);
  if (!rows) return std::nullopt;
  const io::Image& header = rows->header();
  const io::ResizePlan plan = plan_decoded(job, job_plan, {1, header.channels, header.height, header.width});
  if (!banded(plan)) return std::nullopt;
  const LoadedInput source = header_source(header, common, job.input);
  // Two threads or more for this job: one decodes while the others resample and encode.
  InputRows input_rows(std::move(rows), exec.num_threads >= 2, InputRows::rows_one_output_reads(header.height, plan));
  ExecOptions kernels = exec;
  // The kernels get the job's other threads, and no more than the CPUs left beside the decoder: with more (-j 4 on 2
  // cores), their waits between the small steps spin on the cores the decoder needs (a 4K JPEG job took 2.2x as
  // long).
  if (input_rows.decodes_in_background()) {
    kernels.num_threads = std::max(1, std::min(exec.num_threads, usable_cpus()) - 1);
  }
  save_output_rows(job.out, plan.call_sizes, source.result_type, source, common, kernels.num_threads,
                   [&](std::int64_t first, const TensorView& band) {
                     ResampleParams params = plan.params;
                     params.output_pixel_offsets[2] -= static_cast<float>(first);
                     input_rows.resample(band, params, kernels);
                     if (first + band.size(2) == plan.call_sizes[2]) input_rows.finish();
                   });
  return std::vector<OutputRecord>{{job.out, plan.canvas, to_string(source.result_type), std::nullopt}};
}

#if defined(RSZ_GPU_JPEG)
std::optional<std::vector<OutputRecord>> resample_on_gpu(const ResampleJob& resample_job, const io::ResizePlan& plan,
                                                         const GpuImage& in, GpuJobPhases& phases);
#endif

// An input decoded whole (or a .npy tensor read) and resampled: band by band into the encoder where the call allows,
// whole otherwise, or into its place on contain's zero-filled canvas (a strided view).
std::vector<OutputRecord> resample_whole(const ResampleJob& job, const JobPlan& job_plan, const ExecOptions& exec) {
  const CommonOptions& common = job.request->common;
  const Dims& full = job_plan.probe.sizes;
  const bool image = !is_tensor_path(job.input);
  // An image whose resize takes each output sample from one pixel is read and written with straight alpha (see
  // single_tap): planned from its header first.
  CommonOptions options = common;
  if (image && common.alpha == io::AlphaMode::Premultiplied && (full[1] == 2 || full[1] == 4)) {
    options = alpha_for(
        common, job_plan.resize ? job_plan.resize->params : job.request->plan(job.input, full, true).params, job.out);
  }
#if defined(RSZ_GPU_JPEG)
  GpuJobPhases phases;  // RSZ_GPU_STATS: decoding here is the GPU job's reading
#endif
  const LoadedInput loaded = load_input(job.input, options, job_plan.shrink);
  const io::ResizePlan plan = loaded.from_image ? plan_decoded(job, job_plan, loaded.sizes())
                              : job_plan.resize && loaded.sizes() == full
                                  ? *job_plan.resize
                                  : job.request->plan(job.input, loaded.sizes(), false);
#if defined(RSZ_GPU_JPEG)
  // --backend cuda: the pixels decoded here go to the GPU stage, batched with the other jobs' (alone where it
  // cannot take them).
  if (const std::optional<GpuImage> on_gpu = gpu_image(loaded, options)) {
    phases.read();
    if (auto done = resample_on_gpu(job, plan, *on_gpu, phases)) return *done;
  }
#endif
  const std::vector<OutputRecord> record{{job.out, plan.canvas, to_string(loaded.result_type), std::nullopt}};
  if (!plan.padded() && banded(plan)) {
    save_output_rows(job.out, plan.call_sizes, loaded.result_type, loaded, options, exec.num_threads,
                     [&](std::int64_t first, const TensorView& band) {
                       ResampleParams params = plan.params;
                       params.output_pixel_offsets[2] -= static_cast<float>(first);
                       resample(loaded.view(), band, params, exec);
                     });
    return record;
  }
  if (!plan.padded()) {
    Tensor result(loaded.result_type, plan.call_sizes, TensorInit::Uninitialized);
    resample(loaded.view(), result.view(), plan.params, exec);
    save_output(job.out, result.view(), loaded, options);
    return record;
  }
  Tensor result(loaded.result_type, plan.canvas, TensorInit::Zero);
  const Dims& strides = result.layout().strides();
  auto* origin = static_cast<std::byte*>(result.data()) +
                 (plan.top * strides[2] + plan.left * strides[3]) * static_cast<std::int64_t>(element_size(result.dtype()));
  resample(loaded.view(), TensorView(origin, result.dtype(), plan.call_sizes, strides), plan.params, exec);
  save_output(job.out, result.view(), loaded, options);
  return record;
}

#if defined(RSZ_GPU_JPEG)
// The GPU stages that in-process runs (Python, the library) keep for the process's next runs, one a list of devices:
// making one (the CUDA contexts, nvJPEG's hardware decoders) takes most of a second, paid once a process. A keeper is never
// destroyed: kept stages are not let go at exit, when the CUDA runtime may be gone already. A forked child starts
// with a keeper of its own, empty: the parent's stage threads and CUDA context are not the child's.
struct GpuKeeper {
  std::mutex mutex;
  std::map<std::pair<bool, std::vector<int>>, std::shared_ptr<void>> stages;  // by RunState::gpu_stage_key
  std::uint64_t generation = 0;                 // release_gpu_stages() counts it up
};

std::atomic<GpuKeeper*> g_keeper{nullptr};

GpuKeeper& keeper() {
  static std::once_flag registered;
  std::call_once(registered, [] { ::pthread_atfork(nullptr, nullptr, [] { g_keeper.store(nullptr); }); });
  GpuKeeper* k = g_keeper.load();
  if (k == nullptr) {
    auto* fresh = new GpuKeeper;  // never deleted (above)
    k = g_keeper.compare_exchange_strong(k, fresh) ? fresh : (delete fresh, k);
  }
  return *k;
}

// An in-process run's stage on `devices` (decoding files or not) from the keeper (true), or the keeper's generation
// noted for the stage the run will make (false). run.gpu_mutex held.
bool take_kept_stage(detail::RunState& run, bool decodes, const std::vector<int>& devices) {
  // The keeper's key: the set of GPUs (--device 1,0 takes the stage kept for 0,1).
  run.gpu_stage_key = {decodes, devices};
  std::sort(run.gpu_stage_key.second.begin(), run.gpu_stage_key.second.end());
  run.gpu_pid = ::getpid();
  if (!run.in_process) return false;
  GpuKeeper& k = keeper();
  const std::lock_guard<std::mutex> lock(k.mutex);
  run.gpu_generation = k.generation;
  const auto kept = k.stages.find(run.gpu_stage_key);
  if (kept == k.stages.end()) return false;
  run.gpu = kept->second;
  return true;
}

// Starts making the run's GPU resampler on --device's GPUs in the background, while the run plans (once a run),
// unless the process keeps one for them.
void start_gpu_resampler(const CommonOptions& common) {
  detail::RunState& run = detail::current_run();
  const std::lock_guard<std::mutex> lock(run.gpu_mutex);
  if (run.gpu || run.gpu_error || run.gpu_making.valid()) return;
  const std::vector<int> devices = gpu_devices(common);
  const bool decodes = decodes_on_gpu(common);
  if (take_kept_stage(run, decodes, devices)) return;
  try {
    run.gpu_making = std::async(std::launch::async, [devices, decodes] {
      return std::static_pointer_cast<void>(std::make_shared<io::gpu::BatchResampler>(devices, kGpuBatch, decodes));
    });
  } catch (const std::system_error&) {  // no thread to make it on: the first job makes it
  }
}

bool starts_as_jpeg(std::string_view head) { return head.size() >= 3 && head.substr(0, 3) == "\xff\xd8\xff"; }

}  // namespace

// The run's GPU resampler on --device's GPUs (made in the background while the run planned, or by its first job; a failure
// to make it is kept, and every job fails with it at once): every job's thread hands it its file and call.
io::gpu::BatchResampler& gpu_resampler(const CommonOptions& common) {
  detail::RunState& run = detail::current_run();
  const std::lock_guard<std::mutex> lock(run.gpu_mutex);
  if (run.gpu_error) std::rethrow_exception(run.gpu_error);
  if (!run.gpu && !run.gpu_making.valid()) take_kept_stage(run, decodes_on_gpu(common), gpu_devices(common));
  if (!run.gpu) {
    try {
      if (run.gpu_making.valid()) {
        std::future<std::shared_ptr<void>> making = std::move(run.gpu_making);
        run.gpu = making.get();
      } else {
        run.gpu = std::make_shared<io::gpu::BatchResampler>(gpu_devices(common), kGpuBatch, decodes_on_gpu(common));
      }
    } catch (...) {
      run.gpu_error = std::current_exception();
      throw;
    }
  }
  return *std::static_pointer_cast<io::gpu::BatchResampler>(run.gpu);
}

GpuJobPhases::GpuJobPhases() : run_(detail::current_run()), start_(std::chrono::steady_clock::now()) {}

void GpuJobPhases::add(std::atomic<std::uint64_t>& sum) {
  const auto now = std::chrono::steady_clock::now();
  sum.fetch_add(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now - start_).count()),
                std::memory_order_relaxed);
  start_ = now;
}

void GpuJobPhases::read() { add(run_.gpu_read_us); }

void GpuJobPhases::waited() { add(run_.gpu_wait_us); }

void GpuJobPhases::saved() {
  add(run_.gpu_save_us);
  run_.gpu_jobs.fetch_add(1, std::memory_order_relaxed);
}

std::optional<GpuInput> read_gpu_jpeg(const std::string& input, const CommonOptions& common) {
  // The file read once: its header comes from the bytes the GPU decodes. A file that cannot be read, is not a JPEG or
  // is larger than a decoder may hold (max_file_bytes) goes to the CPU, which says why where it fails.
  const io::ImageReadOptions options = image_read_options(common);
  std::shared_ptr<const std::string> file;
  try {
    std::optional<std::string> bytes = shard_files::read_whole_if(input, starts_as_jpeg, options.max_file_bytes);
    if (!bytes) return std::nullopt;
    file = std::make_shared<const std::string>(std::move(*bytes));
  } catch (const std::exception&) {  // rsz::Error, or no memory for its bytes
    return std::nullopt;
  }
  std::unique_ptr<io::ImageRows> rows = io::open_image_rows(input, file, options);
  if (!rows) return std::nullopt;  // not rows in order: an orientation to apply, or a progressive file
  const io::Image& header = rows->header();
  if (header.bit_depth != 8) return std::nullopt;
  GpuInput read;
  read.sizes = {1, header.channels, header.height, header.width};
  read.source = header_source(header, common, input);
  read.file = std::move(file);
  return read;
}

GpuImage gpu_image(const GpuInput& read) { return GpuImage{*read.file, {}, read.sizes, &read.source}; }

io::gpu::BatchResampler* gpu_stage_for(const GpuImage& in, const CommonOptions& common) {
  try {
    return &gpu_resampler(common);
  } catch (const Error&) {
    if (in.pixels.empty()) throw;
    return nullptr;
  }
}

std::optional<GpuImage> gpu_image(const LoadedInput& loaded, const CommonOptions& common) {
  if (!loaded.from_image || !loaded.in_place || !batches_image(loaded.image.channels, loaded.image.bit_depth, common)) {
    return std::nullopt;
  }
  const io::Image& image = loaded.image;
  const std::string_view pixels(reinterpret_cast<const char*>(image.data8.data()), image.data8.size());
  return GpuImage{{}, pixels, {1, image.channels, image.height, image.width}, &loaded};
}

namespace {

// An image through the GPU stage with the call planned for its size (`plan`), its outputs made here; nullopt where
// the stage did not run it (the caller runs it on the CPU or alone).
std::optional<std::vector<OutputRecord>> resample_on_gpu(const ResampleJob& resample_job, const io::ResizePlan& plan,
                                                         const GpuImage& in, GpuJobPhases& phases) {
  const CommonOptions& common = resample_job.request->common;
  const LoadedInput& source = *in.source;
  io::gpu::BatchResampler* stage = gpu_stage_for(in, common);
  if (stage == nullptr) return std::nullopt;
  io::gpu::ResampleJob job;
  job.file = in.file;
  job.pixels = in.pixels;
  job.input_sizes = in.sizes;
  job.params = plan.params;
  job.call_sizes = plan.call_sizes;
  job.canvas = plan.canvas;
  job.top = plan.top;
  job.left = plan.left;
  job.type = source.result_type;
  const std::vector<OutputRecord> record{{resample_job.out, plan.canvas, to_string(source.result_type), std::nullopt}};
  if (encodes_on_gpu(resample_job.out, plan.canvas[1], job.type, source, common)) {  // its JPEG file comes back
    std::string file;
    if (!stage->run(job, jpeg_quality(common), file).empty()) return std::nullopt;
    phases.waited();
    save_encoded_jpeg(resample_job.out, file, plan.canvas[1], source, common);
    phases.saved();
    return record;
  }
  if (quantizes_only(resample_job.out, plan.canvas[1], job.type, source, common)) {  // 8-bit samples come back
    io::Image pixels;
    pixels.width = plan.canvas[3];
    pixels.height = plan.canvas[2];
    pixels.channels = static_cast<int>(plan.canvas[1]);
    pixels.bit_depth = 8;
    pixels.data8.resize(static_cast<std::size_t>(element_count(plan.canvas)));
    if (!stage->run(job, pixels.data8.data()).empty()) return std::nullopt;
    phases.waited();
    save_output8(resample_job.out, std::move(pixels), source, common);
    phases.saved();
    return record;
  }
  io::gpu::Resampled resampled = stage->run(job);
  if (!resampled.error.empty()) return std::nullopt;
  phases.waited();
  save_output(resample_job.out, resampled.result->view(), source, common);
  phases.saved();
  return record;
}

// --decode gpu: a JPEG decoded by nvJPEG among the other jobs' files, resized on the GPU with the call planned for
// its size, encoded here. nullopt for what the CPU decodes instead (read_gpu_jpeg's, and a file nvJPEG cannot read:
// a damaged header, whose CPU decoder's message then fails it).
std::optional<std::vector<OutputRecord>> decode_on_gpu(const ResampleJob& resample_job, const JobPlan& job_plan) {
  GpuJobPhases phases;
  const std::optional<GpuInput> read = read_gpu_jpeg(resample_job.input, resample_job.request->common);
  if (!read) return std::nullopt;
  phases.read();
  const io::ResizePlan plan = plan_decoded(resample_job, job_plan, read->sizes);  // no scaled decode here: shrink is 1
  return resample_on_gpu(resample_job, plan, gpu_image(*read), phases);
}
#endif

// Runs a job as planned: on the GPU (--decode gpu) where it can, band by band where it can, else whole.
std::vector<OutputRecord> run_resample_job(const ResampleJob& job, const JobPlan& job_plan, int threads) {
  const CommonOptions& common = job.request->common;
  const ExecOptions exec = exec_options(common, threads);
  const bool image = !is_tensor_path(job.input);
#if defined(RSZ_GPU_JPEG)
  // --decode gpu where it can: also no scaled decode (--shrink-on-load's is libjpeg's).
  if (image && decodes_on_gpu(common) && job_plan.shrink == 1) {
    if (auto done = decode_on_gpu(job, job_plan)) return *done;
    hold_whole_job_share();  // the CPU decodes it: its whole share of the memory budget first
  }
#endif
  if (image && reads_rows(common)) {
    if (auto done = resample_by_rows(job, job_plan, exec)) return *done;
  }
  return resample_whole(job, job_plan, exec);
}

}  // namespace

bool decodes_on_gpu(const CommonOptions& common) {
  return common.decode_gpu && !common.linear && common.dtype == DataType::Float32;
}

bool batches_on_gpu(const CommonOptions& common) {
#if defined(RSZ_GPU_JPEG)
  return common.backend == Backend::Cuda && !common.linear && common.dtype == DataType::Float32;
#else
  (void)common;
  return false;
#endif
}

bool batches_image(int channels, int bit_depth, const CommonOptions& common) {
  return batches_on_gpu(common) && bit_depth == 8 && (channels == 1 || channels == 3);
}

bool uses_gpu_stage(const CommonOptions& common) { return decodes_on_gpu(common) || batches_on_gpu(common); }

void check_decode_backend(const CommonOptions& common, const char* what) {
  if (common.decode_gpu && (common.backend == Backend::Cpu || common.backend == Backend::Reference)) {
    usage_error(std::string("--decode gpu ") + what + " on the GPU: --backend cuda or auto is allowed with it, not " +
                "--backend " + to_string(common.backend));
  }
  if (common.encode_gpu && !common.decode_gpu) {
    const char* made = std::string(what) == "crops" ? "cropped" : "resized";
    usage_error(std::string("--encode gpu encodes the images the GPU ") + made +
                " from the files it decoded: --decode gpu is needed with it");
  }
  check_devices(common);
}

void end_gpu_stage(detail::RunState& run, [[maybe_unused]] bool process_ends) {
  std::shared_ptr<void> stage = std::move(run.gpu);  // leaves run.gpu empty
  if (run.gpu_making.valid()) {  // made for jobs that did not need it (all on the CPU, or none)
    std::future<std::shared_ptr<void>> making = std::move(run.gpu_making);
    try {
      std::shared_ptr<void> made = making.get();
      if (!stage) stage = std::move(made);
    } catch (...) {  // it could not be made: nothing to keep
    }
  }
  const bool had_stage = stage != nullptr;
  auto letting_go = std::chrono::steady_clock::now();  // RSZ_GPU_STATS: the stage's end, from here
#if defined(RSZ_GPU_JPEG)
  // Only where this process made or took it (not a forked child's copy of its parent's run: the parent's stage has
  // no worker there).
  if (stage && run.gpu_pid == ::getpid()) {
    auto& resampler = *std::static_pointer_cast<io::gpu::BatchResampler>(stage);
    resampler.wait_for_gpus();  // each later GPU joined or left out, before the stage is kept or said
    for (const std::string& why : resampler.unusable_gpus()) {  // its share ran on the others
      to_stderr("rsz: note: --device: " + printable(why) + "; the GPU stage ran on the other GPUs\n");
    }
    letting_go = std::chrono::steady_clock::now();
    if (run.in_process) {  // kept where no batch of it failed on the GPU; a kept one that failed since is let go
      GpuKeeper& k = keeper();
      const std::lock_guard<std::mutex> lock(k.mutex);
      if (!run.gpu_error && resampler.failures() == 0) {
        if (k.generation == run.gpu_generation) k.stages.emplace(run.gpu_stage_key, stage);  // the first one kept
      } else if (const auto kept = k.stages.find(run.gpu_stage_key);
                 kept != k.stages.end() && kept->second == stage) {
        k.stages.erase(kept);
      }
    } else if (process_ends) {
      // The command line's stage: its threads stopped here (RSZ_GPU_STATS said), its GPU and pinned memory left to
      // the process's exit, where the driver takes them back at once: freeing them here took 0.29-0.37 s on an H200
      // (a one-photo GPU job 1.19 s instead of 1.37 s).
      resampler.stop();
      static auto* const left = new std::vector<std::shared_ptr<void>>;  // never destroyed
      left->push_back(std::move(stage));
    }
  }
#endif
  stage.reset();  // a stage not kept ends here (its workers stop, its memory goes)
  const char* wanted = std::getenv("RSZ_GPU_STATS");
  const bool say = wanted != nullptr && *wanted != '\0' && *wanted != '0';
  if (had_stage && say) {
    std::fprintf(stderr, "rsz: GPU stage stopped (and let go, kept or left to the process's exit) in %.3f s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - letting_go).count());
  }
  const std::uint64_t jobs = run.gpu_jobs.exchange(0);
  if (jobs > 0 && say) {
    const double each = 1e-3 / static_cast<double>(jobs);  // ms a job
    std::fprintf(stderr,
                 "rsz: GPU jobs: %llu, each on its thread: reading its file %.2f ms, waiting for the GPU stage %.2f "
                 "ms, encoding and writing its outputs %.2f ms\n",
                 static_cast<unsigned long long>(jobs), each * static_cast<double>(run.gpu_read_us.exchange(0)),
                 each * static_cast<double>(run.gpu_wait_us.exchange(0)),
                 each * static_cast<double>(run.gpu_save_us.exchange(0)));
  }
}

std::size_t release_kept_gpu_stages() {
#if defined(RSZ_GPU_JPEG)
  std::map<std::pair<bool, std::vector<int>>, std::shared_ptr<void>> stages;
  {
    GpuKeeper& k = keeper();
    const std::lock_guard<std::mutex> lock(k.mutex);
    ++k.generation;
    stages.swap(k.stages);
  }
  return stages.size();  // they end here, outside the keeper's lock (or with the last run using one)
#else
  return 0;
#endif
}

void start_gpu_stage(const CommonOptions& common) {
#if defined(RSZ_GPU_JPEG)
  if (uses_gpu_stage(common) && !common.dry_run) start_gpu_resampler(common);
#else
  (void)common;
#endif
}

std::vector<Job> make_resample_jobs(const std::vector<std::string>& inputs, const io::ResizeIntent& intent,
                                    const std::string& output, const CommonOptions& common, const char* op) {
  io::check_intent(intent);
  check_decode_backend(common, "resizes");
  const auto request = std::make_shared<const ResampleRequest>(ResampleRequest{intent, common});
  std::vector<Job> jobs;
  jobs.reserve(inputs.size());
  for (const std::string& input : inputs) {
    const std::string out =
        plan_output(output, inputs.size(), {input, op, output_extension(input, common), "", "", ""}, "{stem}{ext}");
    check_output_format(out, output, common);
    Job job;
    job.input = input;
    job.op = op;
    job.size_flags = "--scale, --size, --width/--height or the config's scales/output_sizes";
    job.planned_outputs = {out};
    const ResampleJob resample_job{request, input, out};
    job.plan = [resample_job](const InputProbe& probe) { return plan_resample_job(resample_job, probe); };
    job.run = [resample_job](const JobPlan& job_plan, int threads) {
      return run_resample_job(resample_job, job_plan, threads);
    };
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace rsz::app
