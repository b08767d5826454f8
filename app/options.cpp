// The command line's options: common flags and their checks, the memory budget, the operator fields' flags, the
// backend flags, and the execution options a job runs with.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
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

#include "common.h"
#include "pipeline_internal.h"
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

namespace {
struct StderrCapture {
  std::mutex mutex;
  std::string* sink = nullptr;
  bool quiet = false;
  std::string* stdout_sink = nullptr;
  int stdout_error = 0;  // errno of the first failed write to standard output
};
StderrCapture& stderr_capture_state() {
  static StderrCapture state;
  return state;
}
}  // namespace

void detail::stderr_capture(std::string* sink, bool quiet) {
  StderrCapture& c = stderr_capture_state();
  const std::lock_guard<std::mutex> lock(c.mutex);
  c.sink = sink;
  c.quiet = quiet;
}

void detail::stdout_capture(std::string* sink) {
  StderrCapture& c = stderr_capture_state();
  const std::lock_guard<std::mutex> lock(c.mutex);
  c.stdout_sink = sink;
}

int detail::take_stdout_error() {
  StderrCapture& c = stderr_capture_state();
  const std::lock_guard<std::mutex> lock(c.mutex);
  return std::exchange(c.stdout_error, 0);
}

void to_stdout(const std::string& text, bool flush) {
  StderrCapture& c = stderr_capture_state();
  const std::lock_guard<std::mutex> lock(c.mutex);  // lines of several threads never interleave
  if (c.stdout_sink != nullptr) {
    c.stdout_sink->append(text);
    return;
  }
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && (!flush || std::fflush(stdout) == 0);
  if (!ok && c.stdout_error == 0) c.stdout_error = errno != 0 ? errno : EIO;
}

void to_stderr(const std::string& text) {
  StderrCapture& c = stderr_capture_state();
  {
    const std::lock_guard<std::mutex> lock(c.mutex);
    if (c.sink != nullptr) {
      c.sink->append(text);
      if (c.quiet) return;
    }
  }
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

CLI::Validator whole_number(std::int64_t min, std::int64_t max) {
  const std::string allowed = max == std::numeric_limits<std::int64_t>::max()
                                  ? "a whole number >= " + std::to_string(min)
                                  : "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, allowed](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE || v < min || v > max) {
          return "'" + printable(text) + "' is not allowed; " + allowed + " is";
        }
        return std::string();
      },
      allowed);
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

// --max-memory's text in bytes; a usage error naming the flag and the text for text that is not a size.
std::uint64_t memory_budget(const std::string& text) {
  const auto refuse = [&]() -> std::uint64_t {
    usage_error("--max-memory " + printable(text) +
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

}  // namespace

std::uint64_t default_memory_budget() {
  // Read once, the first time a command needs it (CommonOptions::memory_budget).
  static const std::uint64_t budget = system_memory_budget();
  return budget;
}

void add_jobs_option(CLI::App& command, CommonOptions& options) {
  command
      .add_option("-j,--jobs", options.jobs,
                  "Threads: inputs processed in parallel, each input's kernels sharing the rest (default 0: the CPUs "
                  "this process may use, its affinity and cgroup quota; at most 4 per such CPU)")
      ->check(whole_number(0, 4096));
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

void add_no_sync_option(CLI::App& command, CommonOptions& options) {
  command.add_flag("--no-sync", options.no_sync,
                   "Do not flush each output to disk before renaming it into place (about half the time of many "
                   "small outputs; errors and signals still leave no partial file, but after a power loss an output "
                   "written in the last seconds may be empty)");
}

void add_max_memory_option(CLI::App& command, CommonOptions& options, const std::string& help) {
  command.add_option_function<std::string>(
      "--max-memory", [&options](const std::string& text) { options.max_memory = memory_budget(text); }, help);
}

void check_json_budget(const std::string& path, const std::string& flag, std::uint64_t budget) {
  // A JSON document is held to the budget while it is parsed (io::set_json_memory_budget counts what it builds: COCO
  // annotations take about 7 times their text); here its text must fit twice, so that a file that cannot fit is
  // refused before it is read. An XML tree or YAML takes up to about 40 times its text, counted from the size.
  io::set_json_memory_budget(budget);
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

void add_common_options(CLI::App& command, CommonOptions& options, bool with_config) {
  command.add_option("-i,--input,inputs", options.inputs,
                     "Input images or .npy tensors: files, folders or quoted globs ('photos/*.jpg'); repeatable, "
                     "or given as arguments: rsz resample a.jpg b.jpg -o out/ --scale 0.5; - reads standard input");
  command.add_option("-o,--output", options.output,
                     "Output file, folder (- is standard output), or name template using {stem} {ext} {op} {index} "
                     "{label} {id}, and "
                     "{dir} {relpath} {parent} (the input's folder below -i's, with its stem, its folder's name: "
                     "-r -o 'out/{relpath}.png' mirrors a tree); or webdataset tar shards, 'out/{shard}-{part}.tar' "
                     "(a name ending in .tar: {part} required, {shard} allowed; see --tar-part-size)");
  if (with_config) command.add_option("--config", options.config, "Operator config JSON; flags override its keys");
  add_choice_option(command, "--dtype", options.dtype, io::compute_type_names(), io::parse_compute_type,
                    "Compute type for images: float32 or float16 (default float32)");
  add_jobs_option(command, options);
  command.add_flag("--json", options.json, "Print one JSON line per output (path, shape, dtype, seconds) on stdout");
  command.add_flag("-n,--dry-run", options.dry_run, "List what would be written and write nothing");
  command.add_flag("-q,--quiet", options.quiet, "No progress bar and no summary (errors are still reported)");
  command.add_flag("-r,--recursive", options.recursive, "Descend into sub-folders of input folders");
  command.add_flag("--hidden", options.hidden,
                   "Also take hidden files and folders (names starting with '.', such as macOS's ._photo.jpg) from "
                   "folders and patterns; a file named on its own is always taken");
  command.add_flag("--no-exif", options.no_exif,
                   "Do not apply the EXIF orientation of JPEGs and TIFFs (keep pixels as stored)");
  add_choice_option(command, "--alpha", options.alpha, io::alpha_mode_names(), io::parse_alpha_mode,
                    "Alpha handling: premultiplied (default; no dark fringes) or straight");
  add_backend_options(command, options);
  command.add_option("--max-pixels", options.max_pixels,
                     "Refuse input and output images with more pixels than this, before decoding (default 268435456)")
      ->check(whole_number(1, std::numeric_limits<std::int64_t>::max()));
  add_max_memory_option(command, options,
                        "Memory budget, e.g. 2G or 512M: inputs and outputs that would need more are refused before "
                        "anything is allocated (default: the smallest of 4G, half the RAM, half of ulimit -v and half "
                        "the cgroup's memory.max)");
  command.add_option("--quality", options.quality, "JPEG and WebP quality 1-100 (default 95 for JPEG, 80 for WebP)")
      ->check(whole_number(1, 100));
  command.add_flag("--lossless", options.lossless, "Write WebP outputs lossless (default: lossy, --quality)");
  command.add_flag("--strict", options.strict,
                   "Refuse alpha or 16-bit samples into a format that cannot hold them (JPEG, BMP, PPM; 16 bits into "
                   "WebP) instead of flattening the alpha onto --background and reducing to 8 bits");
  command.add_option_function<std::string>(
      "--background", [&options](const std::string& text) { options.background = parse_background(text, "--background"); },
      "What alpha is flattened onto for formats without alpha: white (default), black, gray, #RRGGBB or R,G,B (0-255)");
  // The choices are the writable formats of rsz::io's codec table, and npy.
  std::vector<std::string> formats;
  for (const std::string& ext : io::writable_image_extensions()) formats.push_back(ext.substr(1));
  formats.emplace_back("npy");
  std::string listed;
  for (std::size_t i = 0; i < formats.size(); ++i) {
    listed += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + formats[i];
  }
  command.add_option("--format", options.format,
                     "Format of the outputs that a folder or {ext} names, of -o - and of the image members of a "
                     ".tar output (else the input's: -o jpgs/ --format jpg converts a folder to JPEG; a template with "
                     "another extension is refused), and of -i - (else detected from its first bytes): " + listed)
      ->check(CLI::IsMember(formats));
  command.add_option("--tar-part-size", options.tar_part_size,
                     "Samples per part of a .tar output (default 1000; an image's crops are never split, so a part "
                     "of crops may hold more). Each sample's key is its input's path below -i without extension, "
                     "'.' made '_' (crops: KEY/ID, with a KEY.json member holding the manifest row); members sorted "
                     "by key, mtime 0, uid/gid 0, mode 0644: the same inputs give the same bytes whatever -j. A part "
                     "is written whole through a temporary name or not at all (an input of it that fails leaves it "
                     "out, exit 1); --skip-existing (and --plan) skip a part whose file exists without reading its "
                     "inputs. A part's encoded members wait in memory within --max-memory, the rest on disk")
      ->check(whole_number(1, 100000000));
  add_no_sync_option(command, options);
  command.add_flag("--strip", options.strip,
                   "Leave the input's metadata out of image outputs: the ICC colour profile, EXIF and XMP (by "
                   "default PNG, JPEG and WebP outputs keep them, TIFF outputs the ICC profile and XMP; EXIF's "
                   "orientation reads 1 once applied)");
  command.add_flag("--grayscale", options.grayscale,
                   "Write image outputs in gray (alpha kept): ITU-R BT.601 luma 0.299 R + 0.587 G + 0.114 B, as "
                   "libjpeg and Pillow convert; .npy outputs are left as computed");
  command.add_option("--depth", options.depth, "Bits per sample of image outputs: 8 or 16 (default: the input's)")
      ->check(CLI::IsMember({8, 16}));
  command.add_flag("--skip-existing", options.skip_existing,
                   "Resume an interrupted run: an input whose outputs all exist is skipped without being read "
                   "(outputs are written complete or not at all, so an existing one is whole)");
  command.add_option("--png-compression", options.png_compression,
                     "PNG zlib level 0-9 with adaptive filters (9: smallest, slowest); default: a fast setting "
                     "(Sub filter, libdeflate level 1: smaller than zlib's level 2, about twice as fast)")
      ->check(whole_number(0, 9));
  add_shard_options(command, options);
}

bool image_runs_in_place(int channels, const CommonOptions& options) {
  // The unorm view holds p / M exactly as image_to_tensor's float32 tensor would (same double quotient, rounded
  // once), so results are the same bits; float16 tensors and premultiplied alpha need the conversion.
  const bool has_alpha = channels == 2 || channels == 4;
  return options.dtype == DataType::Float32 && (!has_alpha || options.alpha == io::AlphaMode::Straight);
}

std::map<std::string, CLI::Option*> add_field_flags(CLI::App& command, const io::OperatorSpec& spec,
                                                     FieldTexts& texts) {
  std::map<std::string, CLI::Option*> options;
  for (const io::FieldSpec& field : spec.fields) {
    if (field.flag.empty()) continue;  // set through a shorthand of the command (--output-size, --samples, ...)
    std::string help = field.help;
    if (!field.default_json.empty() && field.kind != io::FieldKind::Bool) {  // a flag's default is its absence
      std::string shown = field.default_json;
      shown.erase(std::remove(shown.begin(), shown.end(), '"'), shown.end());
      help += " (default " + shown + ")";
    }
    const std::string key = field.key;
    CLI::Option* option = nullptr;
    if (field.kind == io::FieldKind::Bool) {
      option = command.add_flag_callback(field.flag, [&texts, key] { texts[key] = "true"; }, help);
    } else {
      option = command.add_option_function<std::string>(
          field.flag, [&texts, key](const std::string& text) { texts[key] = text; }, help);
      if (field.kind == io::FieldKind::Enum) option->check(CLI::IsMember(field.choices));
    }
    options[key] = option;
  }
  return options;
}

void add_backend_options(CLI::App& command, CommonOptions& options) {
  const auto usable = [](std::string& value) -> std::string {
    if (value != to_string(Backend::Cuda)) return "";
    for (const BackendInfo& b : backends()) {
      if (b.backend == Backend::Cuda) return b.available ? "" : "cuda cannot run here: " + b.note;
    }
    return "this build of rsz has no CUDA backend (build it with -DRSZ_CUDA=ON where nvcc and a GPU are present); "
           "auto, cpu or reference is allowed";
  };
  add_choice_option(command, "--backend", options.backend, io::backend_names(), io::parse_backend,
                    "Kernel backend: auto (default: cpu), cpu, reference (the naive oracle), or cuda (an NVIDIA GPU, "
                    "in builds with RSZ_CUDA: pixels go to the GPU and results come back, the same bits as cpu); rsz "
                    "info --backends lists them")
      ->check(CLI::Validator(usable, "", "usable backend"));
  command.add_option("--device", options.device, "The GPU that --backend cuda runs on (default 0)")
      ->check(whole_number(0, 1023));
  command.add_flag("-v,--verbose", options.verbose, "Say on stderr which backend runs the operators, and why");
}

std::string backend_note(const CommonOptions& options) {
  std::string cpu;
  std::string cuda_note = "cuda is not in this build (configured without RSZ_CUDA)";
  bool cuda_available = false;
  ExecOptions described;
  described.device = options.device;
  for (const BackendInfo& b : backends(described)) {
    if (b.backend == Backend::Cpu) cpu = b.note;
    if (b.backend == Backend::Cuda) {
      cuda_available = b.available;
      cuda_note = b.available ? b.note : "cuda cannot run here: " + b.note;
    }
  }
  switch (options.backend) {
    case Backend::Cuda:
      return "rsz: backend cuda (" + cuda_note + "; pixels are copied to the GPU and the results back)";
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

bool host_backend(const CommonOptions& options) {
  return options.backend == Backend::Auto || options.backend == Backend::Cpu || options.backend == Backend::Reference;
}

ExecOptions exec_options(const CommonOptions& options, int threads) {
  ExecOptions exec;
  exec.backend = options.backend;
  exec.device = options.device;
  exec.num_threads = std::max(1, threads);
  exec.max_samples = options.max_samples;
  return exec;
}

}  // namespace rsz::app
