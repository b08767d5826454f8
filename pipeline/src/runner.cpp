// The command line's job runner: plans every job from its input's header before anything is written (usage errors
// stop the run, unusable inputs fail alone), predicts what chained steps will read, then runs the jobs on --jobs
// threads within the memory budget, with the progress line, --json records, the manifest and the summary.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <tuple>

#include "pipeline.h"
#include "pipeline_internal.h"
#include "report_json.h"
#include "streams.h"
#include "rsz/error.h"
#include "rsz/io/image.h"
#include "rsz/io/tar.h"
#include "rsz/io/temporary_files.h"

namespace fs = std::filesystem;

namespace rsz::app {

using detail::output_channels;
using detail::output_depth;

namespace {

// The progress line on a terminal: a bar, done/total, the rate and the time left (from the rate so far).
class Progress {
 public:
  Progress(std::size_t total, bool enabled)
      : total_(total), enabled_(enabled && total > 0), start_(std::chrono::steady_clock::now()) {
    draw(0);
  }
  void step(std::size_t done) { draw(done); }
  void finish() {
    if (enabled_) to_stderr("\r\033[K");
  }

 private:
  void draw(std::size_t done) {
    if (!enabled_) return;
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = total_ ? done * kWidth / total_ : kWidth;
    std::string line = "\r[" + std::string(filled, '=') + std::string(kWidth - filled, ' ') + "] " +
                       std::to_string(done) + "/" + std::to_string(total_);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (done > 0 && seconds > 0.0) {
      const double rate = static_cast<double>(done) / seconds;
      const auto left = static_cast<long long>(static_cast<double>(total_ - done) / rate + 0.5);
      char text[64];
      std::snprintf(text, sizeof text, "  %.1f/s  ETA %lld:%02lld", rate, left / 60, left % 60);
      line += text;
    }
    to_stderr(line + "\033[K");
  }
  std::size_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

namespace {

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

std::uint64_t tensor_bytes(const Dims& sizes, std::uint64_t element_bytes) {
  std::uint64_t bytes = element_bytes;
  for (const std::int64_t s : sizes) bytes = saturating_mul(bytes, static_cast<std::uint64_t>(std::max<std::int64_t>(s, 0)));
  return bytes;
}

std::string with_input(const std::string& input, const std::string& message) {
  return message.rfind(input, 0) == 0 ? for_cli(message) : input + ": " + for_cli(message);
}

// The code of what was thrown: rsz::Error's own, io for anything else (a file system or allocation failure).
ErrorCode code_of(const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  return error != nullptr ? error->code() : ErrorCode::Io;
}

// `value` as compact JSON with every string as io::json_string writes it.
void dump_keeping_bytes(const nlohmann::json& value, std::string& out) {
  if (value.is_string()) {
    out += io::json_string(value.get_ref<const std::string&>());
  } else if (value.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, item] : value.items()) {
      out += first ? "" : ",";
      first = false;
      out += io::json_string(key) + ":";
      dump_keeping_bytes(item, out);
    }
    out += '}';
  } else if (value.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (i > 0) out += ',';
      dump_keeping_bytes(value[i], out);
    }
    out += ']';
  } else {
    out += value.dump();
  }
}

// JSON text for stdout: invalid UTF-8 in a file name is replaced (U+FFFD), so that every JSON parser reads the line.
// In-process runs for Python (cli.h) keep the bytes as the manifests do instead (io::json_string: each such byte the
// escape of U+DC80..U+DCFF, which json.loads turns into the str open() takes), so every record names its file.
std::string json_line(const nlohmann::json& record) {
  if (!detail::current_run().json_keeps_bytes) return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  try {
    return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const nlohmann::json::type_error&) {
    std::string out;
    dump_keeping_bytes(record, out);
    return out;
  }
}

// What planning found for one job: a failure (the input cannot be used: exit 1, the others run), a usage error (the
// request cannot be met: exit 2, nothing runs), or the memory the job holds while it runs.
struct Prepared {
  std::string failure;
  ErrorCode failure_code = ErrorCode::Io;  // its kind (pipeline::Record::code)
  std::string usage;
  std::string warning;
  bool flattened = false;  // an output's alpha is flattened onto --background (its format has none)
  bool reduced = false;    // an output's 16-bit samples are reduced to 8 (its format has no 16 bits)
  std::uint64_t bytes = 0;
  // A job the GPU stage may decode (--decode gpu): the share it holds first (hold_whole_job_share); 0: bytes from the
  // start.
  std::uint64_t gpu_bytes = 0;
  bool skipped = false;  // --skip-existing: every output is there already
  InputProbe probe;
  JobPlan plan;
  // The input file's size and modification time when it was planned: a file changed since (a plan run later) is
  // planned again before it runs.
  std::optional<std::pair<std::int64_t, std::int64_t>> stamp;
};

// What --dry-run --json says of a job's plan besides each output's shape and data type: for a resize the exact call
// (scales, offsets, the canvas it is placed on, the scaled decode).
nlohmann::json plan_fields(const JobPlan& plan) {
  nlohmann::json fields = nlohmann::json::object();
  if (plan.resize) {
    const ResampleParams& p = plan.resize->params;
    // float32 values in their shortest decimal form (0.1, not 0.10000000149011612).
    const auto floats = [](const std::array<float, 4>& values) {
      nlohmann::json list = nlohmann::json::array();
      for (const float v : values) {
        char text[32];
        const auto end = std::to_chars(text, text + sizeof text, v).ptr;
        list.push_back(std::strtod(std::string(text, end).c_str(), nullptr));
      }
      return list;
    };
    fields["resize"] = {{"input_sizes", plan.probe.sizes},
                        {"mode", to_string(p.interpolation)},
                        {"scales", floats(p.scales)},
                        {"input_pixel_offsets", floats(p.input_pixel_offsets)},
                        {"output_pixel_offsets", floats(p.output_pixel_offsets)},
                        {"antialiased", p.antialiased},
                        {"call_sizes", plan.resize->call_sizes},
                        {"canvas", plan.resize->canvas},
                        {"top", plan.resize->top},
                        {"left", plan.resize->left},
                        {"shrink_on_load", plan.shrink}};
  }
  return fields;
}

// Whether `path` is a finished output: a file that is not empty. An empty file is what a power loss can leave of an
// output written under --no-sync (its name was renamed into place before its bytes reached the disk): it is made
// again, never kept.
bool finished_output(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && fs::file_size(path, ec) > 0 && !ec;
}

bool all_exist(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    if (!finished_output(p)) return false;
  }
  return !paths.empty();
}

// The job's probe and plan; false (with its usage error or failure set) when it cannot be planned.
bool probe_and_plan(const Job& job, const CommonOptions& options, Prepared& prepared) {
  for (const std::string& out : job.planned_outputs) {
    if (!is_tensor_path(out) && !io::is_image_path(out)) {  // whatever the input: a usage error
      prepared.usage = out + ": " + io::image_output_problem(out, 1, 1, 3, 8) + ", or .npy for tensors";
      return false;
    }
  }
  InputProbe& probe = prepared.probe;
  JobPlan& plan = prepared.plan;
  try {
    probe = job.probe ? *job.probe : probe_input(job.input, options);
    plan = job.plan(probe);
    plan.probe = probe;
    prepared.warning = plan.warning;
    if (!plan.failure.empty()) {  // roi-align: the image's size is not the one its annotations state
      prepared.failure = plan.failure;
      prepared.failure_code = ErrorCode::InvalidShape;
      return false;
    }
  } catch (const Error& e) {
    // Parameters that cannot be met for this input's size (a scale whose output overflows...) are the request's
    // fault; shapes, types, unreadable or corrupt files are the input's.
    const bool request = e.code() == ErrorCode::InvalidArgument;
    (request ? prepared.usage : prepared.failure) = with_input(job.input, e.what());
    prepared.failure_code = e.code();
    return false;
  } catch (const std::exception& e) {
    prepared.failure = with_input(job.input, e.what());
    return false;
  }
  return true;
}

// The job's image outputs checked against their formats and --max-pixels (a usage error set where one cannot be
// written as asked); whether it has any.
bool check_image_outputs(const Job& job, const CommonOptions& options, Prepared& prepared) {
  const InputProbe& probe = prepared.probe;
  const JobPlan& plan = prepared.plan;
  const int depth = output_depth(options, probe.from_image, probe.bit_depth);
  bool image_outputs = false;
  for (const std::string& out : job.planned_outputs) {
    if (is_tensor_path(out)) continue;
    image_outputs = true;
    const Dims& o = plan.output;
    if (o.size() != 4 || o[0] != 1 || o[1] < 1 || o[1] > 4) {
      prepared.usage = out + ": a " + dims_to_string(o) +
                       " tensor cannot be written as an image (1 x C x H x W with C from 1 to 4 is needed); write "
                       ".npy instead";
      return image_outputs;
    }
    const int channels = output_channels(options, o[1], out);
    const int out_depth = output_depth(options, probe.from_image, probe.bit_depth, out);
    prepared.flattened = prepared.flattened || channels < output_channels(options, o[1]);
    prepared.reduced = prepared.reduced || out_depth < depth;
    if (const std::string problem = io::image_output_problem(out, o[3], o[2], channels, out_depth);
        !problem.empty()) {
      const bool deep = out_depth == 16 && !io::format_keeps_16_bits(out);
      prepared.usage = out + ": " + problem + (deep ? " (--depth 8)" : "");
      return image_outputs;
    }
    std::int64_t pixels = 0;
    if (__builtin_mul_overflow(o[2], o[3], &pixels) || pixels > options.max_pixels) {
      prepared.usage = job.input + ": the output would be " + std::to_string(o[3]) + " x " + std::to_string(o[2]) +
                       " pixels, more than --max-pixels " + std::to_string(options.max_pixels) + "; lower " +
                       job.size_flags + " (or raise --max-pixels)";
      return image_outputs;
    }
  }
  return image_outputs;
}

// What a job holds at its peak, and what reading its input alone does (for the refusal's words).
struct JobBytes {
  std::uint64_t peak = 0;
  std::uint64_t gpu = 0;  // a job the GPU stage may decode: its peak while the GPU decodes it (0: none)
  std::uint64_t input_alone = 0;
  std::uint64_t metadata = 0;
};

JobBytes job_bytes(const Job& job, const CommonOptions& options, const Prepared& prepared, bool image_outputs) {
  const InputProbe& probe = prepared.probe;
  const JobPlan& plan = prepared.plan;
  const int depth = output_depth(options, probe.from_image, probe.bit_depth);
  // Peak memory: the decoded input, the float copy of an image (when it is not used in place), the result, and the
  // encoded form of one output image (pixels + file bytes). A banded job writing PNG or JPEG holds one band of the
  // result and of its pixels at a time, and the encoded file (at most the raw pixels' size is counted).
  // --decode gpu: a resample or roi-align job whose image the GPU stage may decode holds its whole result, copied out
  // of the batch's pinned staging, which holds it too (kept at its largest size until the stage ends): the whole
  // result counted twice, never one band. --backend cuda's batches (batches_on_gpu) the same, and the decoded pixels
  // twice as well: the stage gathers them in pinned memory.
  const bool stage_job = probe.from_image && job.op != "upsample2d";
  const bool batched =
      stage_job && probe.sizes.size() == 4 && batches_image(static_cast<int>(probe.sizes[1]), probe.bit_depth, options);
  const bool on_gpu = batched || (stage_job && plan.shrink == 1 && decodes_on_gpu(options));
  const bool one_band = !on_gpu && plan.banded && job.planned_outputs.size() == 1 &&
                        !is_tensor_path(job.planned_outputs[0]) &&
                        io::encodes_image_rows(job.planned_outputs[0]) && plan.result.size() == 4 &&
                        plan.result[0] == 1;
  // An input decoded band by band (plan.input_bytes) holds its file and a window of rows for the whole job.
  const std::uint64_t decoded =
      plan.input_bytes != 0
          ? saturating_add(plan.input_bytes, probe.file_bytes)
          : tensor_bytes(probe.sizes, probe.from_image ? static_cast<std::uint64_t>(depth / 8) : element_size(probe.type));
  const bool in_place = probe.from_image && image_runs_in_place(static_cast<int>(probe.sizes[1]), options);
  std::uint64_t float_copy =
      probe.from_image && !in_place ? tensor_bytes(probe.sizes, element_size(probe.type)) : 0;
  // --linear: the straight float32 copy the decoding goes through as well.
  if (probe.from_image && options.linear) float_copy = saturating_add(float_copy, tensor_bytes(probe.sizes, 4));
  Dims band = plan.result;
  if (one_band) band[2] = band_rows(plan.result);
  std::uint64_t result = tensor_bytes(band, element_size(plan.type));
  // --linear: the result encoded back, a float32 copy of it (a band's where the output is banded).
  if (probe.from_image && options.linear) result = saturating_add(result, tensor_bytes(band, 4));
  const auto sample = static_cast<std::uint64_t>(depth / 8);
  const std::uint64_t scratch =
      image_outputs && !job.planned_outputs.empty()
          ? io::encode_scratch_bytes(job.planned_outputs[0], tensor_bytes(plan.output, sample), options.png_compression)
          : 0;
  const std::uint64_t encode =
      !image_outputs ? 0
      : one_band     ? saturating_add(saturating_add(2 * tensor_bytes(band, sample), tensor_bytes(plan.output, sample)),
                                      scratch)
                     : saturating_add(2 * tensor_bytes(plan.output, sample), scratch);
  // The metadata an image carries (a 16 MB ICC profile in a 30 x 20 JPEG) is copied by the decoder, the input and
  // output images and the encoder: counted kMetadataCopies times, beside the pixels.
  constexpr std::uint64_t kMetadataCopies = 8;
  const std::uint64_t metadata = saturating_mul(probe.metadata_bytes, kMetadataCopies);
  const std::uint64_t staged = saturating_add(on_gpu ? tensor_bytes(plan.result, element_size(plan.type)) : 0,
                                              batched ? decoded : 0);
  const std::uint64_t after = saturating_add(
      saturating_add(saturating_add(saturating_add(saturating_add(float_copy, result), staged), encode),
                     plan.extra_bytes),
      metadata);
  // While it decodes, a decoder that takes the whole file (all formats but PNG) holds it beside the pixels, and a
  // progressive JPEG's decoder its coefficients (--shrink-on-load included: libjpeg keeps them at full size).
  const std::uint64_t reading = saturating_add(
      saturating_add(plan.input_bytes != 0 ? decoded : saturating_add(decoded, probe.file_bytes), probe.decoder_bytes),
      metadata);
  JobBytes bytes;
  bytes.peak = float_copy > 0 ? std::max({reading, saturating_add(decoded, float_copy), after})
                              : std::max(reading, saturating_add(decoded, after));
  bytes.input_alone = std::max(reading, saturating_add(decoded, float_copy));
  // --decode gpu: a JPEG of 8 bits read in order (not progressive, no orientation to apply) goes to the GPU stage, the
  // job holding its file (read whole), the result (staged twice) and its encoding; the CPU decodes the others.
  if (stage_job && plan.shrink == 1 && decodes_on_gpu(options) && probe.jpeg && probe.bit_depth == 8 &&
      probe.rows_in_order && probe.file_bytes > 0) {
    bytes.gpu = std::min(bytes.peak, saturating_add(after - float_copy, probe.file_bytes));
  }
  bytes.metadata = metadata;
  return bytes;
}

// The refusal of a job over the memory budget: the input's failure where reading it alone is over (exit 1), else a
// usage error naming what sets the size (exit 2).
void refuse_over_budget(const Job& job, const JobBytes& bytes, std::uint64_t budget, Prepared& prepared) {
  const InputProbe& probe = prepared.probe;
  const JobPlan& plan = prepared.plan;
  if (bytes.input_alone > budget) {
    const std::string file = probe.file_bytes > 0 ? "its " + bytes_text(probe.file_bytes) + " file" : "";
    const std::string held =
        plan.input_bytes != 0
            ? " (" + (file.empty() ? std::string() : file + " and ") + bytes_text(plan.input_bytes) +
                  " of decoded rows)"
            : (file.empty() ? std::string() : " (" + file + " is decoded whole)");
    std::string also;  // what the decoder holds besides: a progressive JPEG's coefficients, copies of the metadata
    if (probe.decoder_bytes > 0) also += " plus " + bytes_text(probe.decoder_bytes) + " of progressive JPEG coefficients";
    if (bytes.metadata > 0 && probe.metadata_bytes >= (std::uint64_t{1} << 20)) {
      also += " plus copies of its " + bytes_text(probe.metadata_bytes) + " of metadata (EXIF, ICC, XMP)";
    }
    prepared.failure_code = ErrorCode::InvalidArgument;  // over the budget that --max-memory sets
    prepared.failure = job.input + ": reading this " + dims_to_string(probe.sizes) + " input needs about " +
                       bytes_text(bytes.input_alone) + held + also + ", over the memory budget of " +
                       bytes_text(budget) + " (--max-memory)";
    return;
  }
  prepared.usage = job.input + ": this " + job.op + " needs about " + bytes_text(bytes.peak) +
                   " of memory (its result is " + dims_to_string(plan.result) + " " + to_string(plan.type) +
                   "), over the memory budget of " + bytes_text(budget) + " (--max-memory); lower " + job.size_flags +
                   " or raise --max-memory";
}

Prepared prepare(const Job& job, const CommonOptions& options, std::uint64_t budget) {
  Prepared prepared;
  if (!job.probe) prepared.stamp = file_stamp(job.input);
  if (!probe_and_plan(job, options, prepared)) return prepared;
  const bool image_outputs = check_image_outputs(job, options, prepared);
  if (!prepared.usage.empty()) return prepared;
  const JobBytes bytes = job_bytes(job, options, prepared, image_outputs);
  prepared.bytes = bytes.peak;
  prepared.gpu_bytes = bytes.gpu;
  if (prepared.bytes > budget) refuse_over_budget(job, bytes, budget, prepared);
  return prepared;
}

// Shares the memory budget between the jobs that run at once: a job waits until its share is free. Every job fits
// the whole budget (planning refused the others), so a waiting job only waits for running ones.
class MemoryBudget {
 public:
  // `in_order`: jobs get their share in the order they asked (a budget several runs share, so that a run's large job
  // is not starved by another run's stream of small ones); otherwise whichever fits first (one run's jobs).
  explicit MemoryBudget(std::uint64_t total, bool in_order = false) : free_(total), in_order_(in_order) {}
  // `first`: a job that gave its share back to wait for its whole one (hold_whole_job_share); while one waits, the
  // others do not take memory before it (a stream of small shares would keep it waiting to the run's end; a budget
  // in order serves it in its turn already).
  void acquire(std::uint64_t bytes, bool first = false) {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t ticket = next_ticket_++;
    if (first) ++first_waiting_;
    freed_.wait(lock, [&] {
      return bytes <= free_ && (!in_order_ || ticket == serving_) && (first || in_order_ || first_waiting_ == 0);
    });
    free_ -= bytes;
    ++serving_;
    if (first) --first_waiting_;
    lock.unlock();
    if (in_order_ || first) freed_.notify_all();  // the next in line (or those that let it go first) may fit too
  }
  // Gives back `held` and keeps `bytes` of it in one step where `reserve` stays free beside them (a job's share that
  // becomes the encoded members it leaves); whether it kept them. Never waits.
  bool release_keeping(std::uint64_t held, std::uint64_t bytes, std::uint64_t reserve) {
    bool kept = false;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      free_ += held;
      kept = free_ >= reserve && free_ - reserve >= bytes;
      if (kept) free_ -= bytes;
    }
    freed_.notify_all();
    return kept;
  }
  void release(std::uint64_t bytes) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      free_ += bytes;
    }
    freed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  std::uint64_t free_;
  const bool in_order_;
  std::uint64_t next_ticket_ = 0;
  std::uint64_t serving_ = 0;
  int first_waiting_ = 0;  // jobs waiting in acquire(bytes, true)
};

// The default memory budget as one budget for the process: in-process runs of several threads (Python's) without
// --max-memory hold their jobs' memory in it together, so that together they stay within it.
MemoryBudget& process_budget() {
  static MemoryBudget budget(default_memory_budget(), true);
  return budget;
}


// parallel_tasks whose tasks work for the calling thread's run: its RunState is installed on the pool's threads for
// each task, so that runs of several threads of one process (in-process runs) keep their own state.
template <typename Task>
void run_tasks(std::int64_t count, int threads, const Task& task) {
  detail::RunState& run = detail::current_run();
  parallel_tasks(count, threads, [&](std::int64_t i) {
    const detail::RunScope scope(run);
    task(i);
  });
}

// Planning of every job (in parallel): a usage error found for any job is thrown, before anything is written.
// `skip`: jobs of .tar parts that exist (--skip-existing), skipped without being probed.
std::vector<Prepared> prepare_all(const std::vector<Job>& jobs, const CommonOptions& options, std::uint64_t budget,
                                  int threads, const std::vector<char>* skip = nullptr) {
  const auto count = static_cast<std::int64_t>(jobs.size());
  std::vector<Prepared> prepared(jobs.size());
  run_tasks(count, std::max(1, std::min(threads, static_cast<int>(jobs.size()))), [&](std::int64_t i) {
    const auto k = static_cast<std::size_t>(i);
    if (!jobs[k].plan) return;  // nothing to compute (roi-align: every box left out): not even probed
    if (skip != nullptr && (*skip)[k]) {
      prepared[k].skipped = true;  // its .tar part is there: not even probed
      return;
    }
    if (options.skip_existing && !tar_output_on() && !jobs[k].probe && all_exist(jobs[k].planned_outputs)) {
      prepared[k].skipped = true;  // a resumed run: not even probed
      return;
    }
    try {  // a job's failure is its own: the other jobs are still planned
      prepared[k] = prepare(jobs[k], options, budget);
    } catch (const std::exception& e) {
      prepared[k].failure = with_input(jobs[k].input, e.what());
      prepared[k].failure_code = code_of(e);
    }
  });
  // Every problem of the request at once, so that a user fixes them in one go: one line per kind of problem (the same
  // text after the output's name: "out/a.gif: extension '.gif' ... (and 199 more like it)"), then the count.
  std::vector<std::pair<std::string, std::size_t>> kinds;  // the first message of each kind, and how many
  std::map<std::string, std::size_t> kind_of;              // the text after the name -> index in kinds
  std::size_t problems = 0;
  for (const Prepared& p : prepared) {
    if (p.usage.empty()) continue;
    ++problems;
    const std::size_t colon = p.usage.find(": ");
    const std::string what = colon == std::string::npos ? p.usage : p.usage.substr(colon + 2);
    const auto [it, added] = kind_of.emplace(what, kinds.size());
    if (added) kinds.emplace_back(p.usage, 0);
    ++kinds[it->second].second;
  }
  const auto line = [](const std::pair<std::string, std::size_t>& kind) {
    return kind.first + (kind.second > 1 ? " (and " + std::to_string(kind.second - 1) + " more like it)" : "");
  };
  if (kinds.size() == 1) throw Error(ErrorCode::InvalidArgument, line(kinds.front()));
  if (!kinds.empty()) {
    constexpr std::size_t kShown = 20;
    for (std::size_t i = 0; i < kinds.size() && i < kShown; ++i) to_stderr("rsz: " + printable(line(kinds[i])) + "\n");
    throw Error(ErrorCode::InvalidArgument,
                std::to_string(problems) + " outputs cannot be written as asked" +
                    (kinds.size() > kShown ? " (the first kinds above)" : " (above)") + "; nothing was written");
  }
  return prepared;
}

// One note line per kind of conversion a run makes for formats that cannot hold what it computed (not a stop; --strict
// refuses instead).
void note_conversions(const std::vector<Prepared>& prepared) {
  std::size_t flattened = 0;
  std::size_t reduced = 0;
  std::size_t animated = 0;
  for (const Prepared& p : prepared) {
    flattened += p.flattened ? 1 : 0;
    reduced += p.reduced ? 1 : 0;
    animated += p.failure.empty() && p.probe.animated ? 1 : 0;
  }
  const auto inputs = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " input" : " inputs"); };
  if (animated > 0) {
    to_stderr("rsz: note: " + inputs(animated) + " animated (GIF): the first frame is read, the others are not\n");
  }
  if (flattened > 0) {
    to_stderr("rsz: note: " + inputs(flattened) + " with alpha flattened onto the background for formats without "
              "alpha (--background sets it; --strict refuses instead)\n");
  }
  if (reduced > 0) {
    to_stderr("rsz: note: " + inputs(reduced) + " with 16-bit samples written with 8 bits for formats without 16 bits "
              "(--strict refuses instead)\n");
  }
}

// The summary's words for roi-align's boxes that were not cropped as given: "; skipped 3 boxes: 2 outside the
// image, 1 empty" (reasons in a fixed order), and "; scaled the boxes of 2 images to their size"; "" for none.
std::string boxes_note(const std::map<std::string, std::size_t>& left_out, std::size_t scaled) {
  static const std::pair<const char*, const char*> kReasons[] = {
      {"outside", "outside the image"}, {"empty", "empty"}, {"inverted", "inverted"},
      {"malformed", "malformed (negative width or height)"}, {"crowd", "crowd (iscrowd)"}, {"difficult", "difficult"}};
  std::size_t total = 0;
  std::string kinds;
  for (const auto& [reason, words] : kReasons) {
    const auto it = left_out.find(reason);
    if (it == left_out.end() || it->second == 0) continue;
    total += it->second;
    kinds += (kinds.empty() ? "" : ", ") + std::to_string(it->second) + " " + words;
  }
  std::string note;
  if (total > 0) note = "; skipped " + std::to_string(total) + " box" + (total == 1 ? "" : "es") + ": " + kinds;
  if (scaled > 0) {
    note += "; scaled the boxes of " + std::to_string(scaled) + " image" + (scaled == 1 ? "" : "s") +
            " to their size (--size-mismatch scale)";
  }
  return note;
}

// Threads for the run: --jobs, or the CPUs this process may use (its affinity and cgroup quota: Slurm, taskset,
// Kubernetes); at most 4 per usable CPU, since more only wait on one another.
int thread_count(const CommonOptions& options) {
  const int cpus = usable_cpus();
  return options.jobs > 0 ? std::min(options.jobs, 4 * cpus) : cpus;
}

}  // namespace

std::map<std::string, InputProbe> predict_outputs(const std::vector<Job>& jobs, const CommonOptions& options) {
  const std::vector<Prepared> prepared =
      prepare_all(jobs, options, options.memory_budget(), thread_count(options));
  std::map<std::string, InputProbe> probes;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const Prepared& p = prepared[k];
    if (!p.failure.empty()) continue;
    for (const std::string& out : jobs[k].planned_outputs) {
      if (p.skipped) {  // --skip-existing: the output is there to be read
        try {
          probes[out] = probe_input(out, options);
        } catch (const std::exception&) {
        }
        continue;
      }
      InputProbe read_back;
      read_back.sizes = p.plan.output;
      read_back.from_image = !is_tensor_path(out);
      read_back.max_shrink = read_back.from_image ? io::max_shrink_of(out) : 1;
      if (read_back.from_image) {
        read_back.type = options.dtype;
        read_back.bit_depth = output_depth(options, p.probe.from_image, p.probe.bit_depth, out);
        if (read_back.sizes.size() == 4) {  // what the file will hold: WebP writes gray as RGB
          read_back.sizes[1] = io::channels_read_back(out, output_channels(options, read_back.sizes[1], out));
        }
      } else {
        read_back.type = p.plan.type;
      }
      probes[out] = read_back;
    }
  }
  return probes;
}

// One planned run of jobs (PlannedJobs): the jobs with their plans, the shared budget, the counts and the progress
// line, and the stages that use them (the plan's records, dry run, the jobs one by one, .tar parts, standard output,
// manifest, summary).
class JobRun {
 public:
  JobRun(const std::vector<Job>& jobs, const CommonOptions& options);
  ~JobRun();
  JobRun(const JobRun&) = delete;
  JobRun& operator=(const JobRun&) = delete;
  // Planning: every input's header read (in parallel), .tar parts laid out, the warnings said.
  void plan();
  // The plan as records: each planned output (with its shape, data type and resize call) and each input planning
  // failed, in the order of the inputs.
  // `outputs`: each record's output as --dry-run names it ("" for a failure).
  std::vector<pipeline::Record> planned_records(std::vector<std::string>* outputs = nullptr) const;
  std::size_t skipped() const;
  int dry_run();
  // Runs the planned jobs: the exit status.
  int execute();

 private:
  void plan_parts();
  void plan_jobs();
  pipeline::Record record_of(std::size_t k, pipeline::RecordKind kind, const std::string& out = "") const;
  pipeline::Record written_record(std::size_t k, const OutputRecord& output, double seconds) const;
  void emit(pipeline::Record record, bool flush = true);
  void report_failure(std::size_t k, const std::string& error, ErrorCode code);
  // An output planned but not written (a .tar part, the manifest), its inputs having run: said, and a record.
  void report_unwritten(std::size_t k, const std::string& output, const std::string& error, ErrorCode code);
  void run_one(std::size_t k);
  void account_left_out(std::size_t k);
  void step_skipped(std::size_t k);
  std::string execute(std::size_t k, std::vector<OutputRecord>& records, ErrorCode& code);
  void hold_members(std::size_t k, const std::vector<OutputRecord>& records, std::uint64_t held, bool& released);
  void release_members(std::size_t p);
  void count_written(std::size_t k, std::vector<OutputRecord> records, double seconds);
  void run_all(const std::vector<std::size_t>& group);
  void run_parts();
  void part_ran(std::size_t p);
  bool end_part(std::size_t p);
  void write_part(std::size_t p);
  void deliver_stdout();
  bool write_manifest();
  int summary() const;
  // Whether the run has jobs the GPU stage may take (resample, roi_align: not upsample2d's).
  bool has_stage_jobs() const {
    return std::any_of(jobs_.begin(), jobs_.end(), [](const Job& job) { return job.op != "upsample2d"; });
  }

  const std::vector<Job>& jobs_;
  const CommonOptions& options_;
  const std::uint64_t budget_;
  const int threads_;
  const bool tar_;
  std::vector<TarPart> parts_;
  std::vector<char> part_exists_;
  std::vector<char> skip_;
  std::vector<std::size_t> part_index_;  // each job's part in parts_ (.tar output)
  std::vector<Prepared> prepared_;
  std::size_t parallel_inputs_ = 1;
  int kernel_threads_ = 1;
  MemoryBudget own_budget_;
  // The budget the jobs hold their memory in: the run's own (--max-memory, or a program's single run), or, for
  // in-process runs without --max-memory, the process's default budget, which runs of several threads share.
  MemoryBudget& shared_budget_;
  std::uint64_t largest_job_ = 0;
  std::unique_ptr<std::atomic<std::uint64_t>[]> part_held_;  // each part's members held in memory (.tar output)
  // The parts' ends, in order (part_ran): whether each part's jobs all ran, the next part to end, and whether a
  // thread is ending parts now.
  std::mutex parts_mutex_;
  std::condition_variable part_ended_;  // next_part_ moved on (run_parts' window)
  std::vector<char> part_ran_;
  std::vector<char> runs_;                // the jobs that run_parts runs (a part whose planning failed an input
                                         // runs only those inputs)
  std::vector<std::size_t> first_task_;  // each part's first task in run_parts' order
  std::size_t next_part_ = 0;
  bool ending_parts_ = false;
  bool parts_aborted_ = false;  // ending a part threw: no later part ends (none is written past one not written)
  std::mutex mutex_;  // the counts, the crops and the progress line below
  std::size_t failed_ = 0;
  std::size_t done_ = 0;
  std::size_t written_ = 0;
  std::size_t skipped_ = 0;
  std::size_t kept_ = 0;  // the output files of the skipped inputs
  std::map<std::string, std::size_t> left_out_;  // roi-align's boxes left out, by reason
  std::size_t scaled_ = 0;                       // roi-align's images whose boxes were scaled to their size
  std::vector<std::vector<io::CropRecord>> crops_;  // the manifest's lines, in job order
  // A .tar output's jobs keep what they wrote until their part is written (or not).
  std::vector<std::vector<OutputRecord>> job_records_;
  std::vector<double> job_seconds_;
  std::vector<char> job_failed_;
  std::vector<ErrorCode> job_failure_code_;  // a failed job's code (a .tar part not written says its first)
  std::size_t parts_written_ = 0;
  std::size_t parts_skipped_ = 0;
  std::size_t parts_failed_ = 0;
  std::size_t samples_written_ = 0;
  std::unique_ptr<Progress> progress_;
  std::chrono::steady_clock::time_point start_;
};

JobRun::JobRun(const std::vector<Job>& jobs, const CommonOptions& options)
    : jobs_(jobs),
      options_(options),
      budget_(options.memory_budget()),
      threads_(thread_count(options)),
      tar_(tar_output_on()),
      skip_(jobs.size(), 0),
      part_index_(jobs.size(), 0),
      own_budget_(options.memory_budget()),
      shared_budget_(detail::current_run().in_process && options.max_memory == 0 ? process_budget() : own_budget_),
      crops_(jobs.size()),
      job_records_(tar_output_on() ? jobs.size() : 0),
      job_seconds_(tar_output_on() ? jobs.size() : 0),
      job_failed_(jobs.size(), 0),
      job_failure_code_(jobs.size(), ErrorCode::Io) {}

// Whatever way the run ends, the members it kept give their memory back (a budget other runs share outlives it).
JobRun::~JobRun() {
  if (!tar_) return;
  drop_tar_members();  // and the parts' spill files
  if (!part_held_) return;
  std::uint64_t held = 0;
  for (std::size_t p = 0; p < parts_.size(); ++p) held += part_held_[p].exchange(0);
  shared_budget_.release(held);
}

// A .tar output: the jobs in parts (their outputs are members of the part's file); with --skip-existing, a part whose
// file exists is skipped whole, its inputs not read.
void JobRun::plan_parts() {
  if (!tar_) return;
  parts_ = tar_parts(jobs_, options_);
  part_exists_.assign(parts_.size(), 0);
  part_held_ = std::make_unique<std::atomic<std::uint64_t>[]>(parts_.size());
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    part_exists_[p] = options_.skip_existing && parts_[p].samples > 0 && finished_output(parts_[p].path);
    for (const std::size_t k : parts_[p].jobs) {
      part_index_[k] = p;
      skip_[k] = part_exists_[p];
    }
  }
}

// Planning: every input's header, before anything is written; the warnings said once.
void JobRun::plan_jobs() {
  prepared_ = prepare_all(jobs_, options_, budget_, threads_, tar_ ? &skip_ : nullptr);
  note_conversions(prepared_);
  for (std::size_t k = 0; k < prepared_.size(); ++k) {
    if (prepared_[k].warning.empty()) continue;
    to_stderr("rsz: " + printable(prepared_[k].warning) + "\n");
    pipeline::Record warning = record_of(k, pipeline::RecordKind::Warning);
    warning.message = prepared_[k].warning;
    emit(std::move(warning));
  }
}

// A record of job k: its input and operator, and where `out` goes: its file, or a .tar part and the member in it.
pipeline::Record JobRun::record_of(std::size_t k, pipeline::RecordKind kind, const std::string& out) const {
  pipeline::Record r;
  r.kind = kind;
  r.index = k;
  r.op = jobs_[k].op;
  r.input = jobs_[k].input;
  if (out.empty()) return r;
  r.output = tar_ ? parts_[part_index_[k]].path : is_stdout_copy(out) ? "-" : out;
  if (tar_) r.member = tar_member_name(out);
  return r;
}

// A record made: its --json line (a view of it), and kept in the run's report where the run keeps them (in-process
// runs; a program's run holds none, however many files it writes).
void JobRun::emit(pipeline::Record record, bool flush) {
  if (options_.json) to_stdout(json_line(pipeline::record_object(record)) + "\n", flush);
  detail::RunState& run = detail::current_run();
  const bool failure = record.kind == pipeline::RecordKind::Failed;
  if (!run.totals.keep_records && !failure) return;
  const std::lock_guard<std::mutex> lock(run.totals_mutex);
  if (failure && run.totals.failures.size() < pipeline::Report::kMaxFailuresKept) run.totals.failures.push_back(record);
  if (run.totals.keep_records) run.totals.records.push_back(std::move(record));
}

pipeline::Record JobRun::written_record(std::size_t k, const OutputRecord& output, double seconds) const {
  pipeline::Record r = record_of(k, pipeline::RecordKind::Written, output.path);
  r.shape = output.shape;
  r.dtype = output.dtype;
  r.seconds = seconds;
  return r;
}

void JobRun::report_failure(std::size_t k, const std::string& error, ErrorCode code) {
  ++failed_;
  to_stderr("rsz: " + printable(error) + "\n");
  pipeline::Record failure = record_of(k, pipeline::RecordKind::Failed);
  failure.code = code;
  failure.message = error;
  emit(std::move(failure));
}

void JobRun::report_unwritten(std::size_t k, const std::string& output, const std::string& error, ErrorCode code) {
  to_stderr("rsz: " + printable(error) + "\n");
  pipeline::Record record = record_of(k, pipeline::RecordKind::Unwritten);
  record.input.clear();
  record.output = output;
  record.code = code;
  record.message = error;
  emit(std::move(record));
}

std::vector<pipeline::Record> JobRun::planned_records(std::vector<std::string>* outputs) const {
  std::vector<pipeline::Record> records;
  for (std::size_t k = 0; k < jobs_.size(); ++k) {
    if (!prepared_[k].failure.empty()) {
      pipeline::Record failure = record_of(k, pipeline::RecordKind::Failed);
      failure.code = prepared_[k].failure_code;
      failure.message = prepared_[k].failure;
      records.push_back(std::move(failure));
      if (outputs != nullptr) outputs->emplace_back();
      continue;
    }
    if (prepared_[k].skipped) continue;  // nothing would be written
    for (const auto& out : jobs_[k].planned_outputs) {
      pipeline::Record planned = record_of(k, pipeline::RecordKind::Planned, out);
      planned.shape = prepared_[k].plan.output;
      planned.dtype = to_string(prepared_[k].plan.type);
      const nlohmann::json fields = plan_fields(prepared_[k].plan);
      if (!fields.empty()) planned.plan = fields.dump().substr(1, fields.dump().size() - 2);  // its members
      records.push_back(std::move(planned));
      if (outputs != nullptr) outputs->push_back(out);
    }
  }
  return records;
}

std::size_t JobRun::skipped() const {
  return static_cast<std::size_t>(
      std::count_if(prepared_.begin(), prepared_.end(), [](const Prepared& p) { return p.skipped; }));
}

// --dry-run: a view of the plan: its records (--json lines), "INPUT -> OUTPUT" lines, the failures said.
int JobRun::dry_run() {
  std::vector<std::string> outputs;
  std::vector<pipeline::Record> records = planned_records(&outputs);
  for (std::size_t i = 0; i < records.size(); ++i) {
    pipeline::Record& record = records[i];
    if (record.kind == pipeline::RecordKind::Failed) {
      report_failure(record.index, record.message, record.code);
      continue;
    }
    const std::string line = printable(record.input) + " -> " +
                             (tar_ ? printable(record.output) + " (" + printable(record.member) + ")"
                                   : printable(outputs[i])) +
                             "\n";
    emit(std::move(record), false);  // --json: its line
    if (!options_.json) to_stdout(line, false);
  }
  return failed_ > 0 ? kExitFailed : kExitOk;
}

// The boxes left out are listed and counted with the job's crops, unless planning found the job unusable (under
// mutex_).
void JobRun::account_left_out(std::size_t k) {
  const Job& job = jobs_[k];
  if (!prepared_[k].failure.empty()) return;
  crops_[k].insert(crops_[k].end(), job.left_out.begin(), job.left_out.end());
  for (const io::CropRecord& box : job.left_out) ++left_out_[box.skipped];
  scaled_ += job.boxes_scaled ? 1 : 0;
}

// A job whose outputs exist (--skip-existing): counted and listed, not run.
void JobRun::step_skipped(std::size_t k) {
  const Job& job = jobs_[k];
  const std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  ++skipped_;
  kept_ += tar_ ? 0 : job.planned_outputs.size();  // a .tar output's files are its parts: counted by part
  crops_[k] = job.planned_crops;
  account_left_out(k);
  for (const auto& out : job.planned_outputs) emit(record_of(k, pipeline::RecordKind::Skipped, out));
  progress_->step(done_);
}

namespace {

// The share of the memory budget that the job of this thread holds (JobRun::execute), and its whole share.
struct JobShare {
  MemoryBudget& budget;
  std::uint64_t held;
  std::uint64_t whole;
};
thread_local JobShare* job_share = nullptr;

// This thread's job share while a job runs (the one before it back after, should a job's thread run another's).
class JobShareScope {
 public:
  explicit JobShareScope(JobShare& share) : before_(job_share) { job_share = &share; }
  ~JobShareScope() { job_share = before_; }
  JobShareScope(const JobShareScope&) = delete;
  JobShareScope& operator=(const JobShareScope&) = delete;

 private:
  JobShare* before_;
};

}  // namespace

void hold_whole_job_share() {
  JobShare* share = job_share;
  if (share == nullptr || share->held >= share->whole) return;
  share->budget.release(share->held);  // holding nothing while it waits: a waiting job only waits for running ones
  share->held = 0;
  share->budget.acquire(share->whole, true);
  share->held = share->whole;
}

// Runs job k within its share of the memory budget; its error ("" when none). A .tar output's members are kept for
// their part (in memory where the budget holds them, else on disk).
std::string JobRun::execute(std::size_t k, std::vector<OutputRecord>& records, ErrorCode& code) {
  const Job& job = jobs_[k];
  const Prepared& plan = prepared_[k];
  std::string error;
  // A job the GPU stage may decode holds its share for that first (hold_whole_job_share).
  JobShare share{shared_budget_, plan.gpu_bytes != 0 ? plan.gpu_bytes : plan.bytes, plan.bytes};
  shared_budget_.acquire(share.held);
  try {
    const JobShareScope scope(share);
    records = job.run(plan.plan, kernel_threads_);
  } catch (const PartialFailure& e) {
    records = e.written();
    error = with_input(job.input, e.what());
    code = e.code();
  } catch (const std::exception& e) {
    error = with_input(job.input, e.what());
    code = code_of(e);
  } catch (...) {
    error = job.input + ": failed with an unknown error";
    code = ErrorCode::Internal;
  }
  if (!tar_) {
    shared_budget_.release(share.held);
    return error;
  }
  bool released = false;
  try {
    hold_members(k, records, share.held, released);
  } catch (const std::exception& e) {
    if (!released) shared_budget_.release(share.held);
    error = with_input(job.input, e.what());
    code = code_of(e);
  }
  return error;
}

// A .tar output's members wait in memory for their part while the budget holds them beside the largest job (so that
// every job can still run); the others wait on disk (spill_tar_members). The job's share (`held`) is given back as
// its members are kept or moved to disk; they are released once the part is written.
void JobRun::hold_members(std::size_t k, const std::vector<OutputRecord>& records, std::uint64_t held,
                          bool& released) {
  std::vector<std::string> paths;
  for (const OutputRecord& r : records) paths.push_back(r.path);
  const std::uint64_t bytes = tar_member_bytes(paths);
  released = true;
  // In a budget other runs share, members always wait on disk: a run that kept some would wait, for its next job,
  // behind another run's job that waits for them (the shared budget serves in order).
  const bool alone = &shared_budget_ == &own_budget_;
  const std::size_t p = part_index_[k];
  if (!alone) {
    shared_budget_.release(held);
    spill_tar_members(paths, p);
    return;
  }
  if (shared_budget_.release_keeping(held, bytes, largest_job_)) {
    part_held_[p] += bytes;
  } else {
    spill_tar_members(paths, p);
  }
}

// Part p's members forgotten (written, or not to be) and their memory given back.
void JobRun::release_members(std::size_t p) {
  std::vector<std::string> paths;
  for (const std::size_t k : parts_[p].jobs) {
    for (const OutputRecord& r : job_records_[k]) paths.push_back(r.path);
  }
  drop_tar_members(paths, p);
  shared_budget_.release(part_held_[p].exchange(0));
}

void JobRun::run_one(std::size_t k) {
  const Job& job = jobs_[k];
  if (!job.run) {  // every box left out: nothing to read or write
    const std::lock_guard<std::mutex> lock(mutex_);
    ++done_;
    account_left_out(k);
    progress_->step(done_);
    return;
  }
  if (prepared_[k].skipped) return step_skipped(k);
  const auto t0 = std::chrono::steady_clock::now();
  // A plan run later than it was made: an input changed (or gone) since is planned again, with the checks of its
  // outputs and the memory budget.
  if (prepared_[k].failure.empty() && prepared_[k].stamp && file_stamp(job.input) != prepared_[k].stamp) {
    Prepared again = prepare(job, options_, budget_);
    if (!again.usage.empty()) {
      again.failure = again.usage;
      again.failure_code = ErrorCode::InvalidArgument;
    }
    prepared_[k] = std::move(again);
  }
  std::vector<OutputRecord> records;
  std::string error = prepared_[k].failure;
  ErrorCode code = prepared_[k].failure_code;
  if (error.empty()) error = execute(k, records, code);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  if (!error.empty()) {
    progress_->finish();
    report_failure(k, error, code);
    job_failed_[k] = 1;
    job_failure_code_[k] = code;
  }
  count_written(k, std::move(records), seconds);
  progress_->step(done_);
}

// What job k wrote, counted and listed (under mutex_); a .tar output's once its part is written.
void JobRun::count_written(std::size_t k, std::vector<OutputRecord> records, double seconds) {
  if (tar_) {
    job_records_[k] = std::move(records);
    job_seconds_[k] = seconds;
    return;
  }
  written_ += records.size();
  for (const auto& r : records) {
    if (r.crop) crops_[k].push_back(*r.crop);
  }
  account_left_out(k);
  for (const auto& r : records) emit(written_record(k, r, seconds));
}

// One threading runtime for the whole program (rsz::parallel_tasks): the inputs are spread over the pool and each
// input's kernels make a nested call of `kernel_threads_`, so at most `threads_` threads compute at once.
void JobRun::run_all(const std::vector<std::size_t>& group) {
  run_tasks(static_cast<std::int64_t>(group.size()), static_cast<int>(parallel_inputs_),
            [&](std::int64_t i) { run_one(group[static_cast<std::size_t>(i)]); });
}

// A .tar output: the jobs of the parts run in parallel, in the parts' order, each part's members kept until its
// jobs all ran; the parts then end in order (part_ran), each written whole once every one of its inputs succeeded (a
// part with a failed input is not written at all). The next part's jobs run meanwhile, so that a part's last, slowest
// jobs and its writing do not hold the others up; no job runs further ahead than the part after the next one to end
// and twice the inputs in flight past its first (what waits for its part, in memory or on disk, stays about two
// parts' worth). Parts whose planning failed an input run only those inputs (to say why); a part that exists
// (--skip-existing) counts and lists its inputs.
void JobRun::run_parts() {
  struct Task {
    std::size_t part;
    std::size_t job;
  };
  std::vector<Task> tasks;
  runs_.assign(jobs_.size(), 0);
  first_task_.assign(parts_.size() + 1, 0);
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    const TarPart& part = parts_[p];
    first_task_[p] = tasks.size();
    const bool planning_failed = !part_exists_[p] && std::any_of(part.jobs.begin(), part.jobs.end(), [&](std::size_t k) {
      return !prepared_[k].failure.empty();
    });
    for (const std::size_t k : part.jobs) {
      if (planning_failed && prepared_[k].failure.empty()) continue;  // not even run
      tasks.push_back({p, k});
      runs_[k] = 1;
    }
  }
  first_task_[parts_.size()] = tasks.size();
  const auto left = std::make_unique<std::atomic<std::size_t>[]>(parts_.size());
  part_ran_.assign(parts_.size(), 0);
  next_part_ = 0;
  parts_aborted_ = false;
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    left[p] = first_task_[p + 1] - first_task_[p];
    if (left[p] == 0) part_ran(p);  // none to run (tar_parts makes none such; kept in order all the same)
  }
  const std::size_t ahead = 2 * parallel_inputs_;
  run_tasks(static_cast<std::int64_t>(tasks.size()), static_cast<int>(parallel_inputs_), [&](std::int64_t i) {
    const auto index = static_cast<std::size_t>(i);
    const Task& task = tasks[index];
    {
      // The window: the jobs before this one are all claimed already, so the next part to end never waits here.
      std::unique_lock<std::mutex> lock(parts_mutex_);
      part_ended_.wait(lock, [&] {
        return parts_aborted_ || next_part_ >= parts_.size() || task.part <= next_part_ + 1 ||
               index < first_task_[next_part_] + ahead;
      });
    }
    run_one(task.job);
    if (left[task.part].fetch_sub(1, std::memory_order_acq_rel) == 1) part_ran(task.part);
  });
}

// Part p's jobs all ran: the parts that ran end in order, on whichever thread finds the next one ran (the others
// go on with their jobs); glibc's heaps are trimmed after a part that held members.
void JobRun::part_ran(std::size_t p) {
  std::unique_lock<std::mutex> lock(parts_mutex_);
  part_ran_[p] = 1;
  if (ending_parts_ || parts_aborted_) return;  // the thread ending parts ends this one too, in its turn
  ending_parts_ = true;
  while (next_part_ < parts_.size() && part_ran_[next_part_]) {
    const std::size_t q = next_part_;
    lock.unlock();
    bool held = false;
    try {
      held = end_part(q);
    } catch (...) {  // the run fails; no later part is written past this one
      lock.lock();
      parts_aborted_ = true;
      ending_parts_ = false;
      part_ended_.notify_all();
      throw;
    }
#if defined(__GLIBC__)
    // The part's members were freed on the threads that wrote and ran them, while the next parts' ran: glibc kept
    // them in those threads' heaps (up to 64 MiB, keep_freed_buffers), which held the peak 8-13 MB over a run that
    // ended parts one at a time (24 PNGs of 800 x 600 in parts of 5 under --max-memory 20M: 33-41 MB, 29.5 MB
    // trimmed, 25-28 MB before the parts ran together).
    if (held) malloc_trim(0);
#else
    (void)held;
#endif
    lock.lock();
    ++next_part_;
    part_ended_.notify_all();
  }
  ending_parts_ = false;
}

// A part whose jobs all ran: skipped, not written (an input failed: said, with its first failure's code) or
// written, its inputs' records then counted and listed. Whether it held members.
bool JobRun::end_part(std::size_t p) {
  const TarPart& part = parts_[p];
  if (part_exists_[p]) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++parts_skipped_;
    return false;
  }
  std::size_t failed_inputs = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const std::size_t k : part.jobs) {
      if (runs_[k]) {
        failed_inputs += job_failed_[k] ? 1 : 0;
      } else {  // a part whose planning failed an input: the others not run, counted here
        ++done_;
        progress_->step(done_);
      }
    }
  }
  if (failed_inputs > 0 || part.samples == 0) {
    release_members(p);
    if (part.samples > 0) {
      const std::lock_guard<std::mutex> lock(mutex_);
      progress_->finish();
      ++parts_failed_;
      ErrorCode code = ErrorCode::Io;  // the first failed input's
      for (const std::size_t k : part.jobs) {
        if (job_failed_[k]) {
          code = job_failure_code_[k];
          break;
        }
      }
      report_unwritten(part.jobs.front(), part.path,
                       part.path + ": not written: " + std::to_string(failed_inputs) + " of its " +
                           std::to_string(part.jobs.size()) +
                           " inputs failed (a part is written whole or not at all; run again once they are fixed)",
                       code);
    }
    return true;
  }
  try {
    write_part(p);
  } catch (const std::exception& e) {
    release_members(p);
    const std::lock_guard<std::mutex> lock(mutex_);
    progress_->finish();
    ++parts_failed_;  // a part, not an input: its inputs ran
    const auto* error = dynamic_cast<const Error*>(&e);
    report_unwritten(part.jobs.front(), part.path, e.what(), error != nullptr ? error->code() : ErrorCode::Internal);
    return true;
  }
  std::vector<pipeline::Record> records;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++parts_written_;
    ++written_;
    for (const std::size_t k : part.jobs) {
      samples_written_ += job_records_[k].size();
      for (const OutputRecord& r : job_records_[k]) records.push_back(written_record(k, r, job_seconds_[k]));
      job_records_[k].clear();
    }
  }
  for (std::size_t i = 0; i < records.size(); ++i) emit(std::move(records[i]), i + 1 == records.size());
  return true;
}

// The members sorted by key, then name (a crop's KEY.json beside its image), each fetched as it is written.
void JobRun::write_part(std::size_t p) {
  const TarPart& part = parts_[p];
  struct Source {
    std::string key, name;
    std::string path;  // the member's planned path (take_tar_member), or "" for `text`
    std::string text;  // a crop's manifest row
  };
  std::vector<Source> sources;
  for (const std::size_t k : part.jobs) {
    for (const OutputRecord& r : job_records_[k]) {
      const std::string name = tar_member_name(r.path);
      const std::string key = name.substr(0, name.find('.'));
      sources.push_back({key, name, r.path, ""});
      if (r.crop) {
        io::CropRecord row = *r.crop;
        row.crop = name;
        sources.push_back({key, key + ".json", "", io::manifest_json(row) + "\n"});
      }
    }
  }
  std::sort(sources.begin(), sources.end(),
            [](const Source& a, const Source& b) { return std::tie(a.key, a.name) < std::tie(b.key, b.name); });
  std::vector<std::string> names;
  for (const Source& m : sources) names.push_back(m.name);
  const fs::path folder = fs::path(part.path).parent_path();
  std::error_code ec;
  if (!folder.empty()) fs::create_directories(folder, ec);
  if (ec) throw Error(ErrorCode::Io, part.path + ": cannot create the folder " + folder.string() + ": " + ec.message());
  // A member read back from disk is held while it is written, beside the jobs of the next parts: its budget first.
  std::vector<std::string> paths;
  for (const Source& m : sources) {
    if (!m.path.empty()) paths.push_back(m.path);
  }
  struct ReadBack {
    MemoryBudget& budget;
    std::uint64_t bytes;
    ~ReadBack() { budget.release(bytes); }
  } read_back{shared_budget_, std::min(largest_spilled_tar_member(paths), largest_job_)};
  shared_budget_.acquire(read_back.bytes);
  io::write_tar(part.path, names, [&](std::size_t i) {
    const Source& m = sources[i];
    return m.path.empty() ? std::vector<std::uint8_t>(m.text.begin(), m.text.end()) : take_tar_member(m.path);
  });
  release_members(p);
}

// -o -: the output goes out now, before the summary counts it; standard output that cannot take it (closed, full)
// fails the input.
void JobRun::deliver_stdout() {
  if (written_ == 0 || jobs_.front().planned_outputs.empty()) return;
  const std::string& target = jobs_.front().planned_outputs.front();
  if (!is_stdout_copy(target)) return;
  const std::string problem = send_to_stdout(target);
  if (problem.empty()) return;
  written_ = 0;
  report_failure(0, with_input(jobs_.front().input, problem), ErrorCode::Io);
}

// roi-align's --manifest (with --plan, the shard's own), its folder made as an output's is; false when it cannot be
// written (said).
bool JobRun::write_manifest() {
  if (options_.manifest.empty()) return true;
  const std::string manifest = shard_manifest(options_, options_.manifest);
  detail::run_totals().manifests.emplace_back(options_.manifest, manifest);
  std::vector<io::CropRecord> lines;
  for (auto& c : crops_) lines.insert(lines.end(), c.begin(), c.end());
  try {
    const fs::path folder = fs::path(manifest).parent_path();
    std::error_code ec;
    if (!folder.empty()) fs::create_directories(folder, ec);
    if (ec) throw Error(ErrorCode::Io, manifest + ": cannot create the folder " + folder.string() + ": " + ec.message());
    io::write_manifest(manifest, lines);
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    if (jobs_.empty()) {
      to_stderr("rsz: " + printable(e.what()) + "\n");
    } else {
      report_unwritten(0, manifest, e.what(), error != nullptr ? error->code() : ErrorCode::Internal);
    }
    return false;
  }
  return true;
}

// The summary's words for the files in the input folders that no codec reads (a .gif, a .txt), once a run (rsz run's
// phases share its folders): "; 2 files in the input folders not read (no codec reads them): a.gif, b.txt", with
// --verbose a line for each; "" when there are none or they were said.
std::string not_read_note(bool verbose) {
  detail::RunState& run = detail::current_run();
  const std::lock_guard<std::mutex> lock(run.totals_mutex);
  const pipeline::Report& report = run.totals;
  if (report.not_read == 0 || run.not_read_said) return "";
  run.not_read_said = true;
  const std::string head = "; " + std::to_string(report.not_read) + " file" + (report.not_read == 1 ? "" : "s") +
                           " in the input folders not read (no codec reads " + (report.not_read == 1 ? "it" : "them") +
                           ")";
  if (verbose) {  // one line each, after the summary's
    std::string lines = head + ", listed below";
    for (const std::string& f : report.not_read_files) lines += "\nrsz: not read: " + printable(f);
    const std::size_t more = report.not_read - report.not_read_files.size();
    if (more > 0) lines += "\nrsz: not read: " + std::to_string(more) + " more, not listed";
    return lines;
  }
  const std::size_t shown = std::min<std::size_t>(3, report.not_read_files.size());
  std::string names;
  for (std::size_t i = 0; i < shown; ++i) names += (i == 0 ? "" : ", ") + printable(report.not_read_files[i]);
  const std::size_t more = report.not_read - shown;
  if (more > 0) names += " and " + std::to_string(more) + " more (-v lists them)";
  return head + ": " + names;
}

int JobRun::summary() const {
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string boxes = boxes_note(left_out_, scaled_);
  const auto notes = [&] { return boxes + not_read_note(options_.verbose); };
  const auto many = [](std::size_t n, const std::string& word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
  };
  std::ostringstream s;
  s.precision(3);
  s << "rsz: " << options_.summary_prefix;
  if (tar_) {
    if (failed_ > 0) s << failed_ << " of " << many(jobs_.size(), "input") << " failed; ";
    s << "wrote " << many(parts_written_, ".tar part") << " (" << many(samples_written_, "sample") << ") in "
      << total << " s";
    if (parts_failed_ > 0) s << "; " << parts_failed_ << " not written";
    if (parts_skipped_ > 0) s << "; skipped " << many(parts_skipped_, "part") << " whose file exists";
    if (failed_ > 0 || parts_failed_ > 0 || !options_.quiet) to_stderr(s.str() + notes() + "\n");
    return failed_ > 0 || parts_failed_ > 0 ? kExitFailed : kExitOk;
  }
  if (failed_ > 0) {
    s << failed_ << " of " << many(jobs_.size(), "input") << " failed; " << many(written_, "file") << " written";
    if (skipped_ > 0) s << "; " << skipped_ << " skipped (outputs exist)";
    to_stderr(s.str() + notes() + "\n");
    return kExitFailed;
  }
  if (options_.quiet) return kExitOk;
  s << "wrote " << many(written_, "file") << " in " << total << " s";
  if (skipped_ > 0) s << "; skipped " << many(skipped_, "input") << " whose outputs exist";
  to_stderr(s.str() + notes() + "\n");
  return kExitOk;
}

void JobRun::plan() {
  if (options_.verbose) to_stderr(backend_note(options_, has_stage_jobs()) + "\n");
  detail::current_run().io.sync_outputs = !options_.no_sync;
  plan_parts();
  plan_jobs();
}

int JobRun::execute() {
  if (detail::current_run().before_writing) detail::current_run().before_writing();  // --plan: the parameters pinned
  // Inputs run in parallel first; cores left over when there are fewer inputs than threads go to the kernels. More
  // --jobs than CPUs may overlap the waits of several inputs (slow storage), but the kernels of an input never get
  // more than the CPUs: their threads then wait on each other (a 1080p PNG upsampled with -j 4 on 2 cores took 1.6x
  // the time of -j 2).
  // --decode gpu: the threads mostly wait for the GPU's batches, and a batch fills from as many as it takes (on each
  // GPU of --device). --backend cuda's batches: the threads decode on the CPU, and twice as many as it has keep it
  // busy while the others wait for their batch (not for upsample2d, whose inputs go to the GPU one by one).
  const int gpus = decodes_on_gpu(options_) && options_.jobs == 0 ? static_cast<int>(gpu_devices(options_).size()) : 0;
  const bool staged = batches_on_gpu(options_) && options_.jobs == 0 && has_stage_jobs();
  const int in_flight = gpus > 0 ? std::max(threads_, kGpuInFlight * gpus) : staged ? 2 * threads_ : threads_;
  parallel_inputs_ = std::clamp<std::size_t>(jobs_.size(), 1, static_cast<std::size_t>(in_flight));
  kernel_threads_ = std::max(1, std::min(threads_, usable_cpus()) / static_cast<int>(parallel_inputs_));
  for (const Prepared& p : prepared_) largest_job_ = std::max(largest_job_, p.failure.empty() ? p.bytes : 0);
  progress_ = std::make_unique<Progress>(jobs_.size(), !options_.quiet && ::isatty(STDERR_FILENO) != 0);
  start_ = std::chrono::steady_clock::now();
  if (!tar_) {
    std::vector<std::size_t> all(jobs_.size());
    for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
    run_all(all);
  }
  if (tar_) run_parts();
  progress_->finish();
  deliver_stdout();
  if (tar_) kept_ += parts_skipped_;  // the output files of a .tar run are its parts, written or kept
  detail::RunTotals& totals = detail::run_totals();
  totals.jobs += jobs_.size();
  totals.written += written_;
  totals.failed += failed_;
  totals.skipped += skipped_;
  totals.kept += kept_;
  if (!write_manifest()) return kExitFailed;
  return summary();
}

PlannedJobs::PlannedJobs(std::vector<Job> jobs, CommonOptions options)
    : owned_jobs_(std::make_unique<std::vector<Job>>(std::move(jobs))), jobs_(owned_jobs_.get()) {
  plan(std::move(options));
}

PlannedJobs::PlannedJobs(const std::vector<Job>& jobs, CommonOptions options, Borrowed) : jobs_(&jobs) {
  plan(std::move(options));
}

void PlannedJobs::plan(CommonOptions options) {
  options_ = std::make_unique<CommonOptions>(std::move(options));
  run_state_ = &detail::current_run();
  const detail::RunScope scope(*run_state_);  // this thread's io settings are the run's, as its workers'
  first_record_ = run_state_->totals.records.size();
  run_ = std::make_unique<JobRun>(*jobs_, *options_);
  run_->plan();
}

// What the run holds (a .tar output's members) is given back in its own run.
PlannedJobs::~PlannedJobs() {
  const detail::RunScope scope(*run_state_);
  run_.reset();
}

std::vector<pipeline::Record> PlannedJobs::records() const { return run_->planned_records(); }

std::size_t PlannedJobs::size() const { return jobs_->size(); }

std::size_t PlannedJobs::skipped() const { return run_->skipped(); }

int PlannedJobs::run() {
  if (ran_) throw InternalError("a planned run of jobs ran twice");
  ran_ = true;
  detail::RunState& run = *run_state_;
  const detail::RunScope scope(run);
  const int status = options_->dry_run ? run_->dry_run() : run_->execute();
  // The records kept are made as jobs finish (and planning's warnings before them); they are kept in the order of the
  // inputs (the order --json lines, which stream, cannot promise).
  auto& records = run.totals.records;
  std::stable_sort(records.begin() + static_cast<std::ptrdiff_t>(std::min(first_record_, records.size())),
                   records.end(),
                   [](const pipeline::Record& a, const pipeline::Record& b) { return a.index < b.index; });
  return status;
}

int run_jobs(const std::vector<Job>& jobs, const CommonOptions& options) {
  return PlannedJobs(jobs, options, PlannedJobs::Borrowed{}).run();
}

}  // namespace rsz::app
