// Messages and the standard streams of a run, the memory budget, colour and size texts, and the execution options a
// job runs with.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "pipeline.h"
#include "pipeline_internal.h"
#include "rsz/io/temporary_files.h"
#include "streams.h"
#include "rsz/error.h"
#include "rsz/io/config.h"
#include "rsz/io/ops.h"

namespace fs = std::filesystem;

namespace rsz::app {

std::string for_cli(std::string message) {
  const std::pair<const char*, const char*> knobs[] = {{"(ExecOptions::max_samples)", "(--max-samples; 0 lifts it)"},
                                                       {"more than max_pixels (", "more than --max-pixels ("},
                                                       {"more than max_file_bytes (",
                                                        "more than the memory budget (--max-memory, "}};
  for (const auto& [knob, flag] : knobs) {
    const std::size_t at = message.find(knob);
    if (at != std::string::npos) message.replace(at, std::strlen(knob), flag);
  }
  return message;
}

void usage_error(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

int detail::take_stdout_error() {
  detail::RunState& run = detail::current_run();
  const std::lock_guard<std::mutex> lock(run.stdout_mutex);
  return std::exchange(run.stdout_error, 0);
}

void to_stdout(const std::string& text, bool flush) {
  detail::RunState& run = detail::current_run();
  const std::lock_guard<std::mutex> lock(run.stdout_mutex);  // lines of several threads never interleave
  if (run.discard_stdout) return;
  if (run.stdout_sink != nullptr) {
    run.stdout_sink->append(text);
    return;
  }
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && (!flush || std::fflush(stdout) == 0);
  const int error = errno;
  if (!ok && run.stdout_error == 0) run.stdout_error = error != 0 ? error : EIO;
}

void to_stderr(const std::string& text) {
  detail::RunState& run = detail::current_run();
  {
    const std::lock_guard<std::mutex> lock(run.stderr_mutex);
    if (run.stderr_sink != nullptr) {
      if (run.stderr_sink->size() < run.stderr_sink_limit) {
        run.stderr_sink->append(text);
      } else {  // past the limit only the last text is kept (a run's summary comes last)
        run.stderr_last = text;
        ++run.stderr_dropped;
      }
      if (run.quiet_stderr) return;
    }
  }
  const std::unique_lock<std::mutex> quiet = io::lock_stderr();  // not while a codec's output is muted
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

std::string printable(const std::string& message) {
  const std::string text = with_stream_names(message);
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += ch;
    }
  }
  return out;
}



namespace {

// The memory this process may use by default: min(4 GiB, half the RAM, half of RLIMIT_AS, half the cgroup limit).
std::uint64_t system_memory_budget() {
  std::uint64_t budget = std::uint64_t{4} << 30;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    budget = std::min(budget, static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 2);
  }
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    budget = std::min(budget, static_cast<std::uint64_t>(limit.rlim_cur) / 2);
  }
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");
  std::uint64_t cgroup_limit = 0;
  if (cgroup >> cgroup_limit && cgroup_limit > 0) budget = std::min(budget, cgroup_limit / 2);
  return std::max<std::uint64_t>(budget, std::uint64_t{64} << 20);
}

}  // namespace

std::uint64_t parse_memory_size(const std::string& text, const std::string& what) {
  const auto refuse = [&]() -> std::uint64_t {
    usage_error(what + " " + printable(text) +
                ": not a memory size; a number with an optional unit K, M, G or T (powers of 1024, e.g. 512M or "
                "1.5G) of at least 1M is allowed");
  };
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(number) || number <= 0) return refuse();
  std::string unit(end);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::toupper(c); });
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  double scale = 1;
  if (unit == "K") {
    scale = 1024.0;
  } else if (unit == "M") {
    scale = 1024.0 * 1024;
  } else if (unit == "G") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "T") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else if (!unit.empty() && unit != "B") {
    return refuse();
  }
  const double bytes = number * scale;
  if (bytes < 1024.0 * 1024 || bytes > 1e19) return refuse();
  return static_cast<std::uint64_t>(bytes);
}


std::uint64_t default_memory_budget() {
  // Read once, the first time a command needs it (CommonOptions::memory_budget).
  static const std::uint64_t budget = system_memory_budget();
  return budget;
}

std::array<float, 3> parse_background(const std::string& text, const std::string& what) {
  const auto refuse = [&]() -> std::array<float, 3> {
    usage_error(what + " " + printable(text) + ": white, black, gray, #RRGGBB or R,G,B (each 0 to 255) is allowed");
  };
  if (text == "white") return {1.0f, 1.0f, 1.0f};
  if (text == "black") return {0.0f, 0.0f, 0.0f};
  if (text == "gray" || text == "grey") return {128.0f / 255.0f, 128.0f / 255.0f, 128.0f / 255.0f};
  std::array<int, 3> rgb{};
  if (text.size() == 7 && text[0] == '#') {
    for (std::size_t i = 0; i < 3; ++i) {
      const std::string pair = text.substr(1 + 2 * i, 2);
      if (!std::isxdigit(static_cast<unsigned char>(pair[0])) || !std::isxdigit(static_cast<unsigned char>(pair[1]))) {
        return refuse();
      }
      rgb[i] = std::stoi(pair, nullptr, 16);
    }
  } else {
    std::vector<std::int64_t> values;
    try {
      values = io::parse_int_list(text, what, ',', 3, 0, 255);
    } catch (const Error&) {
      return refuse();
    }
    for (std::size_t i = 0; i < 3; ++i) rgb[i] = static_cast<int>(values[i]);
  }
  return {static_cast<float>(rgb[0]) / 255.0f, static_cast<float>(rgb[1]) / 255.0f,
          static_cast<float>(rgb[2]) / 255.0f};
}

void check_json_budget(const std::string& path, const std::string& flag, std::uint64_t budget) {
  // A JSON document is held to the budget while it is parsed (io::set_json_memory_budget counts what it builds: COCO
  // annotations take about 7 times their text); here its text must fit twice, so that a file that cannot fit is
  // refused before it is read. An XML tree or YAML takes up to about 40 times its text, counted from the size.
  detail::current_run().io.json_memory_budget = budget;
  const std::string ext = io::lower_extension(path);
  // YAML (yaml-cpp's nodes, about 270 bytes an item: a data.yaml of a million short names took 274 times its text).
  const bool yaml = ext == ".yaml" || ext == ".yml";
  const std::uint64_t kParsedPerByte = yaml ? 300 : ext == ".xml" || ext == ".txt" ? 40 : 2;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    // An annotation folder (Pascal VOC .xml, YOLO .txt): each file it holds is read as one file would be.
    std::vector<std::string> files;
    for (std::filesystem::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code entry_ec;
      const std::string entry_ext = io::lower_extension(it->path().string());
      if ((entry_ext == ".xml" || entry_ext == ".txt") && it->is_regular_file(entry_ec)) {
        files.push_back(it->path().string());
      }
    }
    std::sort(files.begin(), files.end());  // the first file over the budget, in the readers' order
    for (const std::string& file : files) check_json_budget(file, flag, budget);
    return;
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return;  // the reader reports missing and unreadable files
  if (static_cast<std::uint64_t>(size) > budget / kParsedPerByte) {
    const char* kind = yaml ? "YAML" : ext == ".xml" ? "XML" : ext == ".txt" ? "text" : "JSON";
    usage_error(flag + " " + path + ": a " + bytes_text(size) + " " + kind + " file needs about " +
                bytes_text(static_cast<std::uint64_t>(size) * kParsedPerByte) + " to read, over the memory budget of " +
                bytes_text(budget) + " (--max-memory)");
  }
}


bool image_runs_in_place(int channels, const CommonOptions& options) {
  // The unorm view holds p / M exactly as image_to_tensor's float32 tensor would (same double quotient, rounded
  // once), so results are the same bits; float16 tensors and premultiplied alpha need the conversion.
  const bool has_alpha = channels == 2 || channels == 4;
  return options.dtype == DataType::Float32 && !options.linear &&
         (!has_alpha || options.alpha == io::AlphaMode::Straight);
}


std::string backend_note(const CommonOptions& options, bool staged) {
  std::string cpu;
  std::string cuda_note = "cuda is not in this build (configured without RSZ_CUDA)";
  bool cuda_available = false;
  ExecOptions described;
  const std::vector<int> devices =
      options.backend == Backend::Cuda ? gpu_devices(options) : std::vector<int>{options.devices.empty() ? 0 : options.devices[0]};
  described.device = devices.front();
  for (const BackendInfo& b : backends(described)) {
    if (b.backend == Backend::Cpu) cpu = b.note;
    if (b.backend == Backend::Cuda) {
      cuda_available = b.available;
      cuda_note = b.available ? b.note : "cuda cannot run here: " + b.note;
    }
  }
  switch (options.backend) {
    case Backend::Cuda:
      if (staged && batches_on_gpu(options)) {
        return "rsz: backend cuda (" + cuda_note +
               (decodes_on_gpu(options) ? "; JPEGs the GPU decodes and other 8-bit images decoded on the CPU go"
                                        : "; 8-bit images decoded on the CPU go") +
               " to the GPU stage in batches" +
               (devices.size() > 1 ? ", a worker on each of GPUs " + listed_devices(devices) : std::string()) +
               "; other inputs are copied to the GPU and back alone" +
               (devices.size() > 1 ? ", taking the GPUs in turn" : std::string()) + ")";
      }
      return "rsz: backend cuda (" + cuda_note + "; pixels are copied to the GPU and the results back" +
             (devices.size() > 1 ? "; inputs take GPUs " + listed_devices(devices) + " in turn" : std::string()) + ")";
    case Backend::Reference:
      return "rsz: backend reference (the naive oracle: one output at a time)";
    case Backend::Cpu:
      return "rsz: backend cpu (" + cpu + ")";
    case Backend::Auto:
      break;
  }
  return "rsz: backend auto: cpu (" + cpu + "); " +
         (cuda_available ? "cuda (" + cuda_note +
                               ") only with --backend cuda: the pixels are in host memory, and a GPU's start-up and "
                               "copies cost more than the CPU needs for one image"
                         : cuda_note);
}

namespace {

// --device's text read into `devices` (empty for all); returns why it is not allowed ("" when it is).
std::string read_devices(const std::string& text, std::vector<int>& devices) {
  devices.clear();
  if (text == "all") return "";
  const std::string allowed = "a GPU number (0 to 1023), a list of distinct ones such as 0,1, or all is allowed";
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const bool digits = !item.empty() && item.size() <= 4 &&
                        std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    const int device = digits ? std::stoi(item) : -1;  // at most 4 digits: no overflow
    if (device < 0 || device > 1023) return "'" + printable(text) + "': " + allowed;
    if (std::find(devices.begin(), devices.end(), device) != devices.end()) {
      return "'" + printable(text) + "': GPU " + item + " is named twice; " + allowed;
    }
    devices.push_back(device);
    if (comma == std::string::npos) return "";
    start = comma + 1;
  }
}

}  // namespace

std::string devices_problem(const std::string& text) {
  std::vector<int> devices;
  return read_devices(text, devices);
}

std::vector<int> parse_devices(const std::string& text, const std::string& what) {
  std::vector<int> devices;
  if (const std::string problem = read_devices(text, devices); !problem.empty()) usage_error(what + ": " + problem);
  return devices;
}

namespace {

// How many GPUs the CUDA backend sees here (0 without it), asked once: the process's GPUs do not change while it runs.
int gpu_count() {
  static const int count = [] {
    for (const BackendInfo& b : backends()) {
      if (b.backend == Backend::Cuda) return b.devices;
    }
    return 0;
  }();
  return count;
}

}  // namespace

std::string listed_devices(const std::vector<int>& devices) {
  std::string text;
  for (const int d : devices) text += (text.empty() ? "" : ",") + std::to_string(d);
  return text;
}

std::vector<int> gpu_devices(const CommonOptions& options) {
  if (!options.devices.empty()) return options.devices;
  std::vector<int> all;
  for (int d = 0; d < gpu_count(); ++d) all.push_back(d);
  if (all.empty()) usage_error("--device all: this machine has no GPU that rsz can use");
  return all;
}

void check_devices(const CommonOptions& options) {
  if (options.backend != Backend::Cuda && !decodes_on_gpu(options)) return;
  const int count = gpu_count();
  for (const int d : gpu_devices(options)) {
    if (d >= count) {
      usage_error("--device " + listed_devices(options.devices) + ": this machine has " +
                  (count == 0   ? std::string("no GPU that rsz can use")
                   : count == 1 ? std::string("one GPU, 0")
                                : std::to_string(count) + " GPUs, 0 to " + std::to_string(count - 1)) +
                  "; GPU " + std::to_string(d) + " is not one of them");
    }
  }
}

bool host_backend(const CommonOptions& options) {
  return options.backend == Backend::Auto || options.backend == Backend::Cpu || options.backend == Backend::Reference;
}

// The GPU of a job's calls: the run's GPUs in turn, a job after another (--backend cuda's inputs that do not go to the
// GPU stage, which has a lane on each of them instead).
int next_gpu(const CommonOptions& options) {
  if (options.devices.size() == 1) return options.devices.front();
  static std::atomic<unsigned> turn{0};
  const std::vector<int> devices = gpu_devices(options);
  return devices[turn.fetch_add(1, std::memory_order_relaxed) % devices.size()];
}

ExecOptions exec_options(const CommonOptions& options, int threads) {
  ExecOptions exec;
  exec.backend = options.backend;
  exec.device = options.backend == Backend::Cuda ? next_gpu(options) : 0;
  exec.num_threads = std::max(1, threads);
  exec.max_samples = options.max_samples;
  return exec;
}

}  // namespace rsz::app
