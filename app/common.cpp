#include "common.h"

#include <fnmatch.h>
#include <glob.h>
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "rsz/error.h"
#include "rsz/float16.h"
#include "rsz/io/npy.h"
#include "rsz/io/naming.h"

namespace fs = std::filesystem;

namespace rsz::app {
namespace {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has_glob_characters(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// A name starting with '.': hidden files (macOS's AppleDouble "._x.jpg" beside every copied photo, editors'
// swap files) and folders (.git, .cache) are left out of folder listings and patterns unless --hidden asks.
bool is_hidden(const fs::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name[0] == '.' && name != "." && name != "..";
}

// Every regular file below `folder` (recursively or not) for which `keep` says yes, sorted; hidden entries (and what
// is inside hidden folders) only with `hidden`.
template <typename Keep>
std::vector<std::string> walk_folder(const std::string& folder, bool recursive, bool hidden, const Keep& keep) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code entry_ec;
    const bool folder_entry = it->is_directory(entry_ec);
    if (!hidden && is_hidden(it->path())) {
      if (folder_entry) it.disable_recursion_pending();
      continue;
    }
    if (folder_entry) {
      if (!recursive) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(entry_ec) && keep(it->path())) files.push_back(it->path().string());
  }
  if (ec) usage_error(folder + ": cannot list the folder: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> list_folder(const std::string& folder, bool recursive, bool hidden) {
  return walk_folder(folder, recursive, hidden, [](const fs::path& p) {
    return io::is_readable_image_path(p.string()) || is_npy_path(p.string());
  });
}

std::vector<std::string> split_components(const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& part : fs::path(path)) {
    if (!part.empty()) parts.push_back(part.string());
  }
  return parts;
}

// Whether path components [si, end) match pattern components [pi, end): fnmatch per component, "**" any number of
// components (none included); a leading '.' is matched only by a '.' in the pattern unless `hidden`.
bool match_components(const std::vector<std::string>& pattern, std::size_t pi, const std::vector<std::string>& path,
                      std::size_t si, bool hidden) {
  if (pi == pattern.size()) return si == path.size();
  if (pattern[pi] == "**") {
    for (std::size_t k = si; k <= path.size(); ++k) {
      if (match_components(pattern, pi + 1, path, k, hidden)) return true;
    }
    return false;
  }
  if (si == path.size() || ::fnmatch(pattern[pi].c_str(), path[si].c_str(), hidden ? 0 : FNM_PERIOD) != 0) {
    return false;
  }
  return match_components(pattern, pi + 1, path, si + 1, hidden);
}

// A pattern with a "**" component: the files below its fixed leading folders whose path matches, sorted; each
// input's folder below those leading folders is recorded for {dir} and {relpath}.
// The leading components of a pattern that hold no pattern characters: the folder a "**" walk starts from ("." for
// none); `fixed` is their count.
fs::path pattern_root(const std::vector<std::string>& parts, std::size_t& fixed) {
  fixed = 0;
  fs::path root;
  while (fixed < parts.size() && !has_glob_characters(parts[fixed]) && parts[fixed] != "**") root /= parts[fixed++];
  return root.empty() ? fs::path(".") : root;
}

std::vector<std::string> globstar_paths(const std::string& pattern, bool hidden) {
  const std::vector<std::string> parts = split_components(pattern);
  std::size_t fixed = 0;
  const fs::path root = pattern_root(parts, fixed);
  const std::vector<std::string> rest(parts.begin() + static_cast<std::ptrdiff_t>(fixed), parts.end());
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return {};
  return walk_folder(root.string(), true, hidden, [&](const fs::path& p) {
    return match_components(rest, 0, split_components(p.lexically_relative(root).string()), 0, hidden);
  });
}

std::vector<std::string> glob_paths(const std::string& pattern) {
  glob_t result{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &result);
  std::vector<std::string> paths;
  if (rc == 0) {
    for (std::size_t i = 0; i < result.gl_pathc; ++i) paths.emplace_back(result.gl_pathv[i]);
  }
  ::globfree(&result);
  if (rc != 0 && rc != GLOB_NOMATCH) usage_error(pattern + ": cannot expand the pattern");
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string sanitize_name_part(const std::string& text) {
  std::string out;
  for (char c : text) {
    // Bytes of multi-byte UTF-8 characters (>= 0x80) are kept, so "猫" and "狗" stay two different folders.
    const auto u = static_cast<unsigned char>(c);
    const bool safe = std::isalnum(u) || u >= 0x80 || c == '-' || c == '_' || c == '.' || c == ' ';
    out += safe ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_";
  return out;
}

std::string canonical_or_absolute(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? fs::absolute(path).lexically_normal().string() : p.string();
}

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

void usage_error(const std::string& message) { throw Error(ErrorCode::Usage, message); }

void to_stderr(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

std::string printable(const std::string& text) {
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

std::string bytes_text(std::uint64_t bytes) {
  static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  std::ostringstream s;
  if (unit == 0) {
    s << bytes << " bytes";
  } else {
    s.setf(std::ios::fixed);
    s.precision(value < 10 ? 2 : 1);
    s << value << " " << units[unit];
  }
  return s.str();
}

namespace {

// The memory this process may use by default: min(4 GiB, half the RAM, half of RLIMIT_AS, half the cgroup limit).
std::uint64_t default_memory_budget() {
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

std::uint64_t memory_budget(const std::string& text) {
  if (text.empty()) return default_memory_budget();
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

void check_json_budget(const std::string& path, const std::string& flag, std::uint64_t budget) {
  // A parsed JSON document takes up to about 40 times its text (a number becomes a 16-byte value in a vector).
  constexpr std::uint64_t kParsedPerByte = 40;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return;  // the reader reports missing and unreadable files
  if (static_cast<std::uint64_t>(size) > budget / kParsedPerByte) {
    usage_error(flag + " " + path + ": a " + bytes_text(size) + " JSON file needs about " +
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
                     "-r -o 'out/{relpath}.png' mirrors a tree)");
  if (with_config) command.add_option("--config", options.config, "Operator config JSON; flags override its keys");
  command.add_option("--dtype", options.dtype, "Compute type for images: float32 or float16 (default float32)")
      ->check(CLI::IsMember({"float32", "float16"}));
  command.add_option("-j,--jobs", options.jobs, "Inputs processed in parallel (default 0: all cores)")
      ->check(whole_number(0, 4096));
  command.add_flag("--json", options.json, "Print one JSON line per output (path, shape, dtype, seconds) on stdout");
  command.add_flag("-n,--dry-run", options.dry_run, "List what would be written and write nothing");
  command.add_flag("-q,--quiet", options.quiet, "No progress bar and no summary (errors are still reported)");
  command.add_flag("-r,--recursive", options.recursive, "Descend into sub-folders of input folders");
  command.add_flag("--hidden", options.hidden,
                   "Also take hidden files and folders (names starting with '.', such as macOS's ._photo.jpg) from "
                   "folders and patterns; a file named on its own is always taken");
  command.add_flag("--no-exif", options.no_exif, "Do not apply the EXIF orientation of JPEGs and TIFFs (keep pixels as stored)");
  command.add_option("--alpha", options.alpha,
                     "Alpha handling: premultiplied (default; no dark fringes) or straight")
      ->check(CLI::IsMember({"premultiplied", "straight"}));
  add_backend_options(command, options);
  command.add_option("--max-pixels", options.max_pixels,
                     "Refuse input and output images with more pixels than this, before decoding (default 268435456)")
      ->check(whole_number(1, std::numeric_limits<std::int64_t>::max()));
  command.add_option("--max-memory", options.max_memory,
                     "Memory budget, e.g. 2G or 512M: inputs and outputs that would need more are refused before "
                     "anything is allocated (default: min(4G, half the RAM))");
  command.add_option("--quality", options.quality,
                     "JPEG quality 1-100 (default 95); for .webp, a quality makes the file lossy (default lossless)")
      ->check(whole_number(1, 100));
  command.add_option("--format", options.format,
                     "Format of -i - (else detected from its first bytes) and -o - (else the input's): png, jpg, "
                     "bmp, tif, webp, ppm, pgm or npy")
      ->check(CLI::IsMember({"png", "jpg", "jpeg", "bmp", "tif", "tiff", "webp", "ppm", "pgm", "npy"}));
  command.add_flag("--strip", options.strip,
                   "Leave the input's metadata out of image outputs: the ICC colour profile, EXIF and XMP (by "
                   "default PNG and JPEG outputs keep them; EXIF's orientation reads 1 once applied)");
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
                     "(level 2, Sub filter)")
      ->check(whole_number(0, 9));
}

namespace {

// Each expanded input's folder relative to the folder it was found in ({dir}; "" for files given by name or glob).
std::map<std::string, std::string>& input_dirs() {
  static std::map<std::string, std::string> dirs;
  return dirs;
}

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& patterns, bool recursive, bool hidden) {
  if (patterns.empty()) usage_error("no input given; use -i FILE, -i FOLDER or -i 'PATTERN'");
  std::vector<std::string> result;
  std::set<std::string> seen;
  const auto add = [&](const std::string& path) {
    if (seen.insert(canonical_or_absolute(path)).second) result.push_back(path);
  };
  for (const std::string& pattern : patterns) {
    std::error_code ec;
    if (fs::is_directory(pattern, ec)) {
      const auto files = list_folder(pattern, recursive, hidden);
      for (const auto& f : files) {
        add(f);
        const std::string dir = fs::path(f).parent_path().lexically_relative(pattern).string();
        input_dirs()[f] = dir == "." ? "" : dir;
      }
      if (files.empty()) add(pattern);  // probe_input reports the empty folder as a failed input
    } else if (!fs::exists(pattern, ec) && has_glob_characters(pattern)) {
      std::size_t matched = 0;
      const std::vector<std::string> parts = split_components(pattern);
      const bool globstar = std::find(parts.begin(), parts.end(), "**") != parts.end();
      for (const auto& f : globstar ? globstar_paths(pattern, hidden) : glob_paths(pattern)) {
        if (!fs::is_regular_file(f, ec)) continue;
        if (!hidden && !globstar && is_hidden(f)) continue;  // glob(3) leaves dot files out unless named with '.'
        add(f);
        ++matched;
        if (globstar) {  // {dir} / {relpath}: the folders the "**" walked through
          std::size_t fixed = 0;
          const std::string dir = fs::path(f).parent_path().lexically_relative(pattern_root(parts, fixed)).string();
          input_dirs()[f] = dir == "." ? "" : dir;
        }
      }
      if (matched == 0) add(pattern);  // reported as a failed input: the others still run
    } else {
      add(pattern);  // a missing file is a failed input too (probe_input names it)
    }
  }
  return result;
}

bool is_npy_path(const std::string& path) { return lowercase(fs::path(path).extension().string()) == ".npy"; }

DataType compute_type(const CommonOptions& options) {
  return options.dtype == "float16" ? DataType::Float16 : DataType::Float32;
}

bool image_runs_in_place(int channels, const CommonOptions& options) {
  // The unorm view holds p / M exactly as image_to_tensor's float32 tensor would (same double quotient, rounded
  // once), so results are the same bits; float16 tensors and premultiplied alpha need the conversion.
  const bool has_alpha = channels == 2 || channels == 4;
  return compute_type(options) == DataType::Float32 && (!has_alpha || alpha_mode(options) == io::AlphaMode::Straight);
}

InputProbe probe_input(const std::string& path, const CommonOptions& options) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) {
    throw Error(ErrorCode::Io, path + (has_glob_characters(path) ? ": the pattern matches no file"
                                                                 : ": no such file or folder"));
  }
  if (fs::is_directory(status)) {
    throw Error(ErrorCode::Io, path + ": the folder holds no images or .npy files" +
                                   (options.recursive ? "" : " (-r descends into sub-folders)"));
  }
  InputProbe probe;
  if (is_npy_path(path)) {
    const io::NpyInfo info = io::read_npy_info(path);
    if (info.dtype != DataType::Float32 && info.dtype != DataType::Float16) {
      throw Error(ErrorCode::InvalidDataType, path + ": a " + to_string(info.dtype) +
                                                  " tensor cannot be an operator input; float32 or float16 is needed");
    }
    probe.sizes = info.sizes;
    probe.type = info.dtype;
    return probe;
  }
  io::ImageReadOptions read_options;
  read_options.apply_exif_orientation = !options.no_exif;
  read_options.max_pixels = options.max_pixels;
  const io::ImageInfo info = io::read_image_info(path, read_options);
  probe.sizes = {1, info.channels, info.height, info.width};
  probe.type = compute_type(options);
  probe.from_image = true;
  probe.bit_depth = info.bit_depth;
  return probe;
}

io::AlphaMode alpha_mode(const CommonOptions& options) {
  return options.alpha == "straight" ? io::AlphaMode::Straight : io::AlphaMode::Premultiplied;
}

std::map<std::string, CLI::Option*> add_field_flags(CLI::App& command, const io::OperatorSpec& spec, FieldTexts& texts) {
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
    if (value != "cuda") return "";
    for (const BackendInfo& b : backends()) {
      if (b.backend == Backend::Cuda) return b.available ? "" : "cuda cannot run here: " + b.note;
    }
    return "this build of rsz has no CUDA backend (build it with -DRSZ_CUDA=ON where nvcc and a GPU are present); "
           "auto, cpu or reference is allowed";
  };
  command
      .add_option("--backend", options.backend,
                  "Kernel backend: auto (default: cpu), cpu, reference (the naive oracle), or cuda (an NVIDIA GPU, in "
                  "builds with RSZ_CUDA: pixels go to the GPU and results come back, the same bits as cpu); rsz info "
                  "--backends lists them")
      ->check(CLI::IsMember({"auto", "cpu", "reference", "cuda"}))
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
  if (options.backend == "cuda") {
    return "rsz: backend cuda (" + cuda_note + "; pixels are copied to the GPU and the results back)";
  }
  if (options.backend == "reference") return "rsz: backend reference (the naive oracle: one output at a time)";
  if (options.backend == "cpu") return "rsz: backend cpu (" + cpu + ")";
  return "rsz: backend auto: cpu (" + cpu + "); " +
         (cuda_available ? "cuda (" + cuda_note +
                               ") only with --backend cuda: the pixels are in host memory, and a GPU's start-up and "
                               "copies cost more than the CPU needs for one image"
                         : cuda_note);
}

ExecOptions exec_options(const CommonOptions& options, int threads) {
  ExecOptions exec;
  exec.backend = io::parse_backend(options.backend, "--backend");
  exec.device = options.device;
  exec.num_threads = std::max(1, threads);
  exec.max_samples = options.max_samples;
  return exec;
}

ConstTensorView LoadedInput::view() const {
  if (!in_place) return tensor.view();
  const std::int64_t c = image.channels;
  const bool deep = image.bit_depth == 16;
  return ConstTensorView(deep ? static_cast<const void*>(image.data16.data()) : image.data8.data(),
                         deep ? DataType::UNorm16 : DataType::UNorm8, {1, c, image.height, image.width},
                         {image.height * image.width * c, 1, image.width * c, c});
}

LoadedInput load_input(const std::string& path, const CommonOptions& options) {
  LoadedInput loaded;
  if (is_npy_path(path)) {
    loaded.tensor = io::read_npy(path);
    if (loaded.tensor.dtype() != DataType::Float32 && loaded.tensor.dtype() != DataType::Float16) {
      throw Error(ErrorCode::InvalidDataType, path + ": a " + to_string(loaded.tensor.dtype()) +
                                                  " tensor cannot be an operator input; float32 or float16 is needed");
    }
    loaded.result_type = loaded.tensor.dtype();
    return loaded;
  }
  io::ImageReadOptions read_options;
  read_options.apply_exif_orientation = !options.no_exif;
  read_options.max_pixels = options.max_pixels;
  loaded.image = io::read_image(path, read_options);
  loaded.from_image = true;
  loaded.bit_depth = loaded.image.bit_depth;
  loaded.result_type = compute_type(options);
  loaded.icc_profile = loaded.image.icc_profile;
  loaded.exif = loaded.image.exif;
  loaded.xmp = loaded.image.xmp;
  loaded.in_place = image_runs_in_place(loaded.image.channels, options);
  if (!loaded.in_place) {
    loaded.tensor = io::image_to_tensor(loaded.image, loaded.result_type, alpha_mode(options));
    loaded.image = io::Image{};  // the pixels are not needed any more
  }
  return loaded;
}

namespace {

int output_depth(const CommonOptions& options, bool from_image, int input_depth) {
  if (options.depth != 0) return options.depth;
  return from_image ? input_depth : 8;
}

}  // namespace

namespace {

void create_parent(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) throw Error(ErrorCode::Io, path + ": cannot create the folder " + parent.string() + ": " + ec.message());
}

// The image a result tensor becomes: gray when asked, the output depth, the alpha convention.
io::Image result_image(const ConstTensorView& tensor, const LoadedInput& source, const CommonOptions& options) {
  const int depth = output_depth(options, source.from_image, source.bit_depth);
  return options.grayscale ? io::tensor_to_image(to_grayscale(tensor).view(), depth, alpha_mode(options))
                           : io::tensor_to_image(tensor, depth, alpha_mode(options));
}

bool encodes_rows(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

}  // namespace

bool offset_shifts_exactly(float output_pixel_offset, std::int64_t rows) {
  for (std::int64_t y = 0; y < rows; ++y) {
    const float shifted = output_pixel_offset - static_cast<float>(y);
    if (static_cast<double>(shifted) != static_cast<double>(output_pixel_offset) - static_cast<double>(y) ||
        static_cast<float>(y) != static_cast<double>(y)) {
      return false;
    }
  }
  return true;
}

void save_output_rows(const std::string& path, const Dims& sizes, DataType type, const LoadedInput& source,
                      const CommonOptions& options, const BandCompute& compute) {
  if (is_npy_path(path) || !encodes_rows(path) || sizes.size() != 4 || sizes[0] != 1) {
    Tensor result(type, sizes, TensorInit::Uninitialized);
    compute(0, result.view());
    save_output(path, result.view(), source, options);
    return;
  }
  create_parent(path);
  const std::int64_t c = sizes[1];
  const std::int64_t h = sizes[2];
  const std::int64_t w = sizes[3];
  // Bands of about 4 MiB of float32 results: large enough to keep every thread busy, small next to any image.
  const std::int64_t band_rows =
      std::min(h, std::max<std::int64_t>(16, (std::int64_t{4} << 20) / std::max<std::int64_t>(1, w * c * 4)));
  Tensor band(type, {1, c, band_rows, w}, TensorInit::Uninitialized);
  io::Image header;
  header.width = w;
  header.height = h;
  header.channels = options.grayscale ? (c == 2 || c == 4 ? 2 : 1) : static_cast<int>(c);
  header.bit_depth = output_depth(options, source.from_image, source.bit_depth);
  if (!options.strip) {
    header.icc_profile = source.icc_profile;
    header.exif = source.exif;
    header.xmp = source.xmp;
  }
  io::ImageWriteOptions write;
  write.quality = options.quality;
  write.png_compression = options.png_compression;
  io::write_image_rows(path, header, band_rows, [&](std::int64_t first, io::Image& rows) {
    const TensorView view(band.data(), type, {1, c, rows.height, w}, band.layout().strides());
    compute(first, view);
    io::Image image = result_image(view, source, options);
    rows.data8.swap(image.data8);
    rows.data16.swap(image.data16);
  }, write);
}

void save_output(const std::string& path, const ConstTensorView& tensor, const LoadedInput& source,
                 const CommonOptions& options) {
  create_parent(path);
  if (is_npy_path(path)) {
    io::write_npy(path, tensor);
  } else {
    io::ImageWriteOptions write;
    write.quality = options.quality;
    write.png_compression = options.png_compression;
    io::Image image = result_image(tensor, source, options);
    // The colour profile travels with the pixels (io writes it where the format and channels allow).
    if (!options.strip) {
      image.icc_profile = source.icc_profile;
      image.exif = source.exif;
      image.xmp = source.xmp;
    }
    io::write_image(path, image, write);
  }
}

bool output_is_template(const std::string& output) { return output.find('{') != std::string::npos; }

namespace {

bool names_output_file(const std::string& output) {
  return is_npy_path(output) || io::is_readable_image_path(output);
}

}  // namespace

bool output_is_folder(const std::string& output, std::size_t input_count) {
  if (!output.empty() && output.back() == '/') return true;
  std::error_code ec;
  if (fs::is_directory(output, ec)) {
    if (names_output_file(output)) {
      usage_error("-o " + output + ": this is an existing folder with a file name; end it with '/' to write into it, "
                  "or choose another file name");
    }
    return true;
  }
  if (input_count > 1) {
    if (names_output_file(output)) {
      usage_error("-o " + output + ": one file name for " + std::to_string(input_count) +
                  " inputs; give a folder (ending in '/') or a name template such as 'out/{stem}" +
                  fs::path(output).extension().string() + "'");
    }
    return true;
  }
  return false;
}

std::string expand_template(const std::string& pattern, const NameFields& f) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    const std::size_t close = pattern.find('}', i);
    if (close == std::string::npos) usage_error("output template '" + pattern + "': '{' without a closing '}'");
    const std::string key = pattern.substr(i + 1, close - i - 1);
    if (key == "dir" || key == "relpath") {
      // The input's folder below the -i folder it came from (-r mirrors a tree); relpath adds the stem.
      const auto found = input_dirs().find(f.input);
      const std::string dir = found == input_dirs().end() ? "" : found->second;
      std::string stem = fs::path(f.input).stem().string();
      if (stem == "." || stem == "..") stem = "_";
      out += key == "dir" ? (dir.empty() ? "." : dir) : (dir.empty() ? stem : dir + "/" + stem);
    } else if (key == "parent") {
      const std::string parent = fs::absolute(f.input).parent_path().filename().string();
      out += parent.empty() || parent == "." || parent == ".." ? std::string("_") : parent;
    } else if (key == "stem") {
      // A stem of "." or ".." (a file named "..." has one) would climb folders once placed in a path.
      const std::string stem = fs::path(f.input).stem().string();
      out += stem == "." || stem == ".." ? std::string("_") : stem;
    } else if (key == "ext") {
      out += f.ext;
    } else if (key == "op") {
      out += f.op;
    } else if (key == "index") {
      if (f.index.empty()) usage_error("output template '" + pattern + "': {index} is only for roi-align crops");
      out += f.index;
    } else if (key == "label") {
      out += f.label.empty() ? std::string("unlabeled") : sanitize_name_part(f.label);
    } else if (key == "id") {
      out += f.id.empty() ? (f.index.empty() ? std::string("0") : f.index) : sanitize_name_part(f.id);
    } else {
      usage_error("output template '" + pattern + "': unknown placeholder {" + key + "}; allowed: " +
                  io::placeholder_list(true));
    }
    i = close;
  }
  return out;
}

std::string plan_output(const std::string& output, std::size_t input_count, const NameFields& fields,
                        const std::string& folder_template) {
  if (output.empty()) usage_error("-o/--output is required");
  if (output_is_template(output)) return expand_template(output, fields);
  if (output_is_folder(output, input_count)) {
    return (fs::path(output) / expand_template(folder_template, fields)).string();
  }
  return output;
}

std::string default_extension(const std::string& input) {
  // Formats rsz reads but cannot write (PBM, PNM) give PNG results.
  if (!is_npy_path(input) && !io::is_image_path(input)) return ".png";
  return fs::path(input).extension().string();
}

void check_outputs(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                   const std::vector<std::string>& other_inputs) {
  std::set<std::string> input_set;
  for (const auto& in : inputs) input_set.insert(canonical_or_absolute(in));
  for (const auto& in : other_inputs) {
    if (!in.empty()) input_set.insert(canonical_or_absolute(in));
  }
  std::set<std::string> planned;
  for (const auto& out : outputs) {
    const std::string key = canonical_or_absolute(out);
    if (input_set.count(key)) {
      usage_error(out + ": the output would overwrite an input; choose another -o");
    }
    if (!planned.insert(key).second) {
      usage_error(out + ": two outputs would get this same name; use a template with {stem}, {index} or {id}");
    }
    std::error_code ec;
    if (fs::is_directory(out, ec)) usage_error(out + ": the output is an existing folder, not a file name");
  }
}

void check_jobs(const std::vector<std::string>& inputs, const std::vector<Job>& jobs,
                const std::vector<std::string>& other_inputs) {
  std::vector<std::string> outputs;
  for (const Job& job : jobs) outputs.insert(outputs.end(), job.planned_outputs.begin(), job.planned_outputs.end());
  check_outputs(inputs, outputs, other_inputs);
}

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

// The library names its own knobs (ExecOptions::max_samples); a CLI user is told the flag that sets it.
std::string for_cli(std::string message) {
  const std::string knob = "(ExecOptions::max_samples)";
  const std::size_t at = message.find(knob);
  if (at != std::string::npos) message.replace(at, knob.size(), "(--max-samples; 0 lifts it)");
  return message;
}

std::string with_input(const std::string& input, const std::string& message) {
  return message.rfind(input, 0) == 0 ? for_cli(message) : input + ": " + for_cli(message);
}

// JSON text for stdout: invalid UTF-8 in a file name is replaced (U+FFFD) rather than failing the dump.
std::string json_line(const nlohmann::json& record) {
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// What planning found for one job: a failure (the input cannot be used: exit 1, the others run), a usage error (the
// request cannot be met: exit 2, nothing runs), or the memory the job holds while it runs.
struct Prepared {
  std::string failure;
  std::string usage;
  std::string warning;
  std::uint64_t bytes = 0;
  bool skipped = false;  // --skip-existing: every output is there already
  InputProbe probe;
  JobPlan plan;
};

// Whether every path names an existing regular file (and there is at least one).
bool all_exist(const std::vector<std::string>& paths) {
  std::error_code ec;
  for (const std::string& p : paths) {
    if (!fs::is_regular_file(p, ec)) return false;
  }
  return !paths.empty();
}

Prepared prepare(const Job& job, const CommonOptions& options, std::uint64_t budget) {
  Prepared prepared;
  for (const std::string& out : job.planned_outputs) {
    if (!is_npy_path(out) && !io::is_image_path(out)) {  // whatever the input: a usage error
      prepared.usage = out + ": " + io::image_output_problem(out, 1, 1, 3, 8) + ", or .npy for tensors";
      return prepared;
    }
  }
  InputProbe& probe = prepared.probe;
  JobPlan& plan = prepared.plan;
  try {
    probe = job.probe ? *job.probe : probe_input(job.input, options);
    plan = job.plan(probe);
    prepared.warning = plan.warning;
  } catch (const Error& e) {
    // Parameters that cannot be met for this input's size (a scale whose output overflows...) are the request's
    // fault; shapes, types, unreadable or corrupt files are the input's.
    const bool request = e.code() == ErrorCode::Usage || e.code() == ErrorCode::InvalidArgument;
    (request ? prepared.usage : prepared.failure) = with_input(job.input, e.what());
    return prepared;
  } catch (const std::exception& e) {
    prepared.failure = with_input(job.input, e.what());
    return prepared;
  }
  const int depth = output_depth(options, probe.from_image, probe.bit_depth);
  bool image_outputs = false;
  for (const std::string& out : job.planned_outputs) {
    if (is_npy_path(out)) continue;
    image_outputs = true;
    const Dims& o = plan.output;
    if (o.size() != 4 || o[0] != 1 || o[1] < 1 || o[1] > 4) {
      prepared.usage = out + ": a " + dims_to_string(o) +
                       " tensor cannot be written as an image (1 x C x H x W with C from 1 to 4 is needed); write "
                       ".npy instead";
      return prepared;
    }
    const int channels = options.grayscale ? (o[1] == 2 || o[1] == 4 ? 2 : 1) : static_cast<int>(o[1]);
    if (const std::string problem = io::image_output_problem(out, o[3], o[2], channels, depth);
        !problem.empty()) {
      prepared.usage = out + ": " + problem;
      return prepared;
    }
    std::int64_t pixels = 0;
    if (__builtin_mul_overflow(o[2], o[3], &pixels) || pixels > options.max_pixels) {
      prepared.usage = job.input + ": the output would be " + std::to_string(o[3]) + " x " + std::to_string(o[2]) +
                       " pixels, more than --max-pixels " + std::to_string(options.max_pixels) + "; lower " +
                       job.size_flags + " (or raise --max-pixels)";
      return prepared;
    }
  }
  // Peak memory: the decoded input, the float copy of an image (when it is not used in place), the result, and the
  // encoded form of one output image (pixels + file bytes).
  const std::uint64_t decoded =
      tensor_bytes(probe.sizes, probe.from_image ? static_cast<std::uint64_t>(depth / 8) : element_size(probe.type));
  const bool in_place = probe.from_image && image_runs_in_place(static_cast<int>(probe.sizes[1]), options);
  const std::uint64_t float_copy =
      probe.from_image && !in_place ? tensor_bytes(probe.sizes, element_size(probe.type)) : 0;
  const std::uint64_t result = tensor_bytes(plan.result, element_size(plan.type));
  const std::uint64_t encode = image_outputs ? 2 * tensor_bytes(plan.output, static_cast<std::uint64_t>(depth / 8)) : 0;
  const std::uint64_t after = saturating_add(saturating_add(saturating_add(float_copy, result), encode), plan.extra_bytes);
  prepared.bytes = float_copy > 0 ? std::max(saturating_add(decoded, float_copy), after) : saturating_add(decoded, after);
  if (prepared.bytes > budget) {
    const std::uint64_t input_alone = saturating_add(decoded, float_copy);
    if (input_alone > budget) {
      prepared.failure = job.input + ": reading this " + dims_to_string(probe.sizes) + " input needs about " +
                         bytes_text(input_alone) + ", over the memory budget of " + bytes_text(budget) +
                         " (--max-memory)";
    } else {
      prepared.usage = job.input + ": this " + job.op + " needs about " + bytes_text(prepared.bytes) +
                       " of memory (its result is " + dims_to_string(plan.result) + " " + to_string(plan.type) +
                       "), over the memory budget of " + bytes_text(budget) + " (--max-memory); lower " +
                       job.size_flags + " or raise --max-memory";
    }
  }
  return prepared;
}

// Shares the memory budget between the jobs that run at once: a job waits until its share is free. Every job fits
// the whole budget (planning refused the others), so a waiting job only waits for running ones.
class MemoryBudget {
 public:
  explicit MemoryBudget(std::uint64_t total) : free_(total) {}
  void acquire(std::uint64_t bytes) {
    std::unique_lock<std::mutex> lock(mutex_);
    freed_.wait(lock, [&] { return bytes <= free_; });
    free_ -= bytes;
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
};

// Planning of every job (in parallel): a usage error found for any job is thrown, before anything is written.
std::vector<Prepared> prepare_all(const std::vector<Job>& jobs, const CommonOptions& options, std::uint64_t budget,
                                  int threads) {
  const auto count = static_cast<std::int64_t>(jobs.size());
  std::vector<Prepared> prepared(jobs.size());
#pragma omp parallel for num_threads(std::max(1, std::min(threads, static_cast<int>(jobs.size())))) schedule(dynamic, 1)
  for (std::int64_t i = 0; i < count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (options.skip_existing && !jobs[k].probe && all_exist(jobs[k].planned_outputs)) {
      prepared[k].skipped = true;  // a resumed run: not even probed
      continue;
    }
    try {  // nothing may leave an OpenMP region by exception
      prepared[k] = prepare(jobs[k], options, budget);
    } catch (const std::exception& e) {
      prepared[k].failure = with_input(jobs[k].input, e.what());
    }
  }
  for (const Prepared& p : prepared) {
    if (!p.usage.empty()) throw Error(ErrorCode::Usage, p.usage);
  }
  return prepared;
}

int thread_count(const CommonOptions& options) {
  return options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

std::map<std::string, InputProbe> predict_outputs(const std::vector<Job>& jobs, const CommonOptions& options) {
  const std::vector<Prepared> prepared =
      prepare_all(jobs, options, memory_budget(options.max_memory), thread_count(options));
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
      read_back.from_image = !is_npy_path(out);
      if (read_back.from_image) {
        read_back.type = compute_type(options);
        read_back.bit_depth = p.skipped ? 8 : output_depth(options, p.probe.from_image, p.probe.bit_depth);
        if (options.grayscale && read_back.sizes.size() == 4) {
          read_back.sizes[1] = read_back.sizes[1] == 2 || read_back.sizes[1] == 4 ? 2 : 1;
        }
      } else {
        read_back.type = p.plan.type;
      }
      probes[out] = read_back;
    }
  }
  return probes;
}

int run_jobs(const std::vector<Job>& jobs, const CommonOptions& options) {
  if (options.verbose) std::fprintf(stderr, "%s\n", backend_note(options).c_str());
  const std::uint64_t budget = memory_budget(options.max_memory);
  const int threads = thread_count(options);
  const auto count = static_cast<std::int64_t>(jobs.size());

  // Planning: every input's header, before anything is written.
  const std::vector<Prepared> prepared = prepare_all(jobs, options, budget, threads);
  for (std::size_t k = 0; k < prepared.size(); ++k) {
    if (prepared[k].warning.empty()) continue;
    to_stderr("rsz: " + printable(prepared[k].warning) + "\n");
    if (options.json) {
      std::cout << json_line({{"input", jobs[k].input}, {"op", jobs[k].op}, {"warning", prepared[k].warning}}) << "\n"
                << std::flush;
    }
  }

  std::mutex mutex;
  std::size_t failed = 0;
  const auto report_failure = [&](const Job& job, const std::string& error) {
    ++failed;
    to_stderr("rsz: " + printable(error) + "\n");
    if (options.json) {
      std::cout << json_line({{"input", job.input}, {"op", job.op}, {"error", error}}) << "\n" << std::flush;
    }
  };

  if (options.dry_run) {
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      const Job& job = jobs[k];
      if (!prepared[k].failure.empty()) {
        report_failure(job, prepared[k].failure);
        continue;
      }
      if (prepared[k].skipped) continue;  // nothing would be written
      for (const auto& out : job.planned_outputs) {
        if (options.json) {
          std::cout << json_line({{"input", job.input}, {"output", out}, {"op", job.op}, {"dry_run", true}}) << "\n";
        } else {
          std::cout << printable(job.input) << " -> " << printable(out) << "\n";
        }
      }
    }
    return failed > 0 ? kExitFailed : kExitOk;
  }

  // Inputs run in parallel first; cores left over when there are fewer inputs than threads go to the kernels.
  const std::size_t parallel_inputs = std::clamp<std::size_t>(jobs.size(), 1, static_cast<std::size_t>(threads));
  const int kernel_threads = std::max(1, threads / static_cast<int>(parallel_inputs));
  MemoryBudget shared_budget(budget);
  std::vector<std::vector<io::CropRecord>> crops(jobs.size());  // the manifest's lines, in job order
  std::size_t done = 0;
  std::size_t written = 0;
  std::size_t skipped = 0;
  Progress progress(jobs.size(), !options.quiet && ::isatty(STDERR_FILENO) != 0);
  const auto start = std::chrono::steady_clock::now();

  const auto run_one = [&](const Job& job, const Prepared& plan, std::vector<io::CropRecord>& job_crops) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<OutputRecord> records;
    std::string error = plan.failure;
    if (plan.skipped) {
      const std::lock_guard<std::mutex> lock(mutex);
      ++done;
      ++skipped;
      job_crops = job.planned_crops;
      if (options.json) {
        for (const auto& out : job.planned_outputs) {
          std::cout << json_line({{"input", job.input}, {"output", out}, {"op", job.op}, {"skipped", true}}) << "\n"
                    << std::flush;
        }
      }
      progress.step(done);
      return;
    }
    if (error.empty()) {
      shared_budget.acquire(plan.bytes);
      try {
        records = job.run(kernel_threads);
      } catch (const PartialFailure& e) {
        records = e.written();
        error = with_input(job.input, e.what());
      } catch (const std::exception& e) {
        error = with_input(job.input, e.what());
      } catch (...) {
        error = job.input + ": failed with an unknown error";
      }
      shared_budget.release(plan.bytes);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::lock_guard<std::mutex> lock(mutex);
    ++done;
    if (!error.empty()) {
      progress.finish();
      report_failure(job, error);
    }
    written += records.size();
    for (const auto& r : records) {
      if (r.crop) job_crops.push_back(*r.crop);
    }
    if (options.json) {
      for (const auto& r : records) {
        std::cout << json_line({{"input", job.input},
                                {"output", r.path},
                                {"op", job.op},
                                {"shape", r.shape},
                                {"dtype", r.dtype},
                                {"seconds", seconds}})
                  << "\n"
                  << std::flush;
      }
    }
    progress.step(done);
  };

  // One threading runtime for the whole program: the inputs are spread over an OpenMP team and each input's kernels
  // open a nested team of `kernel_threads`, so at most `threads` threads compute at once.
  if (kernel_threads > 1 && parallel_inputs > 1) omp_set_max_active_levels(2);
#pragma omp parallel for num_threads(static_cast<int>(parallel_inputs)) schedule(dynamic, 1)
  for (std::int64_t i = 0; i < count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    run_one(jobs[k], prepared[k], crops[k]);
  }
  progress.finish();
  if (!options.manifest.empty()) {
    std::vector<io::CropRecord> lines;
    for (auto& c : crops) lines.insert(lines.end(), c.begin(), c.end());
    try {
      io::write_manifest(options.manifest, lines);
    } catch (const std::exception& e) {
      to_stderr("rsz: " + printable(e.what()) + "\n");
      return kExitFailed;
    }
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failed > 0) {
    to_stderr("rsz: " + std::to_string(failed) + " of " + std::to_string(jobs.size()) + " input" +
              (jobs.size() == 1 ? "" : "s") + " failed; " + std::to_string(written) + " file" +
              (written == 1 ? "" : "s") + " written" +
              (skipped > 0 ? "; " + std::to_string(skipped) + " skipped (outputs exist)" : "") + "\n");
    return kExitFailed;
  }
  if (!options.quiet) {
    std::ostringstream s;
    s.precision(3);
    s << "rsz: wrote " << written << " file" << (written == 1 ? "" : "s") << " in " << total << " s";
    if (skipped > 0) s << "; skipped " << skipped << " input" << (skipped == 1 ? "" : "s") << " whose outputs exist";
    to_stderr(s.str() + "\n");
  }
  return kExitOk;
}

std::vector<float> parse_float_list(const std::string& flag, const std::string& text, std::size_t min_count,
                                    std::size_t max_count) {
  std::vector<float> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    char* end = nullptr;
    const float v = std::strtof(item.c_str(), &end);
    if (item.empty() || end == item.c_str() || *end != '\0' || !std::isfinite(v)) {
      usage_error(flag + " " + text + ": '" + item + "' is not a finite number");
    }
    values.push_back(v);
  }
  if (values.size() < min_count || values.size() > max_count) {
    usage_error(flag + " " + text + ": " + std::to_string(values.size()) + " values given; " +
                (min_count == max_count ? std::to_string(min_count)
                                        : std::to_string(min_count) + " to " + std::to_string(max_count)) +
                " comma-separated numbers are allowed");
  }
  return values;
}

std::vector<std::int64_t> parse_int_list(const std::string& flag, const std::string& text, char separator,
                                         std::size_t count) {
  std::vector<std::int64_t> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, separator)) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || end == item.c_str() || *end != '\0' || v < 1) {
      usage_error(flag + " " + text + ": '" + item + "' is not a whole number >= 1");
    }
    values.push_back(v);
  }
  if (values.size() != count) {
    usage_error(flag + " " + text + ": expected " + std::to_string(count) + " whole numbers separated by '" +
                std::string(1, separator) + "'");
  }
  return values;
}

}  // namespace rsz::app
