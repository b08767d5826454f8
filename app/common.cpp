#include "common.h"

#include <glob.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "rsz/error.h"
#include "rsz/io/npy.h"

namespace fs = std::filesystem;

namespace rsz::app {
namespace {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has_glob_characters(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

std::vector<std::string> list_folder(const std::string& folder, bool recursive) {
  std::vector<std::string> files;
  const auto consider = [&](const fs::directory_entry& entry) {
    std::error_code ec;
    const std::string path = entry.path().string();
    if (entry.is_regular_file(ec) && (io::is_readable_image_path(path) || is_npy_path(path))) {
      files.push_back(path);
    }
  };
  std::error_code ec;
  if (recursive) {
    for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      consider(*it);
    }
  } else {
    for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      consider(*it);
    }
  }
  if (ec) usage_error(folder + ": cannot list the folder: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
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
    const bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ' ';
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

class Progress {
 public:
  Progress(std::size_t total, bool enabled) : total_(total), enabled_(enabled && total > 0) { draw(0); }
  void step(std::size_t done) { draw(done); }
  void finish() {
    if (enabled_) std::cerr << "\r\033[K" << std::flush;
  }

 private:
  void draw(std::size_t done) {
    if (!enabled_) return;
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = total_ ? done * kWidth / total_ : kWidth;
    std::cerr << "\r[" << std::string(filled, '=') << std::string(kWidth - filled, ' ') << "] " << done << "/"
              << total_ << std::flush;
  }
  std::size_t total_;
  bool enabled_;
};

}  // namespace

void usage_error(const std::string& message) { throw Error(ErrorCode::Usage, message); }

void add_common_options(CLI::App& command, CommonOptions& options, bool with_config) {
  command.add_option("-i,--input", options.inputs,
                     "Input images or .npy tensors: files, folders or quoted globs ('photos/*.jpg'); repeatable");
  command.add_option("-o,--output", options.output,
                     "Output file, folder, or name template using {stem} {ext} {op} {index} {label} {id}");
  if (with_config) command.add_option("--config", options.config, "Operator config JSON; flags override its keys");
  command.add_option("--dtype", options.dtype, "Compute type for images: float32 or float16 (default float32)")
      ->check(CLI::IsMember({"float32", "float16"}));
  command.add_option("-j,--jobs", options.jobs, "Inputs processed in parallel (default 0: all cores)")
      ->check(CLI::Range(0, 4096));
  command.add_flag("--json", options.json, "Print one JSON line per output (path, shape, dtype, seconds) on stdout");
  command.add_flag("-n,--dry-run", options.dry_run, "List what would be written and write nothing");
  command.add_flag("-q,--quiet", options.quiet, "No progress bar and no summary (errors are still reported)");
  command.add_flag("-r,--recursive", options.recursive, "Descend into sub-folders of input folders");
  command.add_flag("--no-exif", options.no_exif, "Do not apply JPEG EXIF orientation (keep pixels as stored)");
  command.add_option("--alpha", options.alpha,
                     "Alpha handling: premultiplied (default; no dark fringes) or straight")
      ->check(CLI::IsMember({"premultiplied", "straight"}));
  command.add_option("--backend", options.backend, "Kernel backend: auto (default) or reference (the naive oracle)")
      ->check(CLI::IsMember({"auto", "reference"}));
  command.add_option("--max-pixels", options.max_pixels,
                     "Refuse images with more pixels than this, before decoding (default 268435456)")
      ->check(CLI::PositiveNumber);
  command.add_option("--quality", options.quality,
                     "JPEG quality 1-100 (default 95); for .webp, a quality makes the file lossy (default lossless)")
      ->check(CLI::Range(1, 100));
  command.add_option("--png-compression", options.png_compression,
                     "PNG zlib level 0-9 with adaptive filters (9: smallest, slowest); default: a fast setting "
                     "(level 2, Sub filter)")
      ->check(CLI::Range(0, 9));
}

std::vector<std::string> expand_inputs(const std::vector<std::string>& patterns, bool recursive) {
  if (patterns.empty()) usage_error("no input given; use -i FILE, -i FOLDER or -i 'PATTERN'");
  std::vector<std::string> result;
  std::set<std::string> seen;
  const auto add = [&](const std::string& path) {
    if (seen.insert(canonical_or_absolute(path)).second) result.push_back(path);
  };
  for (const std::string& pattern : patterns) {
    std::error_code ec;
    if (fs::is_directory(pattern, ec)) {
      const auto files = list_folder(pattern, recursive);
      if (files.empty()) usage_error(pattern + ": the folder holds no images or .npy files");
      for (const auto& f : files) add(f);
    } else if (fs::exists(pattern, ec)) {
      add(pattern);
    } else if (has_glob_characters(pattern)) {
      const auto files = glob_paths(pattern);
      std::size_t matched = 0;
      for (const auto& f : files) {
        if (fs::is_regular_file(f, ec)) {
          add(f);
          ++matched;
        }
      }
      if (matched == 0) usage_error(pattern + ": the pattern matches no file");
    } else {
      usage_error(pattern + ": no such file or folder");
    }
  }
  return result;
}

bool is_npy_path(const std::string& path) { return lowercase(fs::path(path).extension().string()) == ".npy"; }

DataType compute_type(const CommonOptions& options) {
  return options.dtype == "float16" ? DataType::Float16 : DataType::Float32;
}

io::AlphaMode alpha_mode(const CommonOptions& options) {
  return options.alpha == "straight" ? io::AlphaMode::Straight : io::AlphaMode::Premultiplied;
}

ExecOptions exec_options(const CommonOptions& options, int threads) {
  ExecOptions exec;
  exec.backend = options.backend == "reference" ? Backend::Reference : Backend::Auto;
  exec.num_threads = std::max(1, threads);
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

LoadedInput load_input(const std::string& path, const CommonOptions& options, bool in_place_ok) {
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
  const bool has_alpha = loaded.image.channels == 2 || loaded.image.channels == 4;
  // The unorm view holds p / M exactly as image_to_tensor's float32 tensor would (same double quotient, rounded
  // once), so results are the same bits; float16 tensors and premultiplied alpha need the conversion.
  loaded.in_place = in_place_ok && loaded.result_type == DataType::Float32 &&
                    (!has_alpha || alpha_mode(options) == io::AlphaMode::Straight);
  if (!loaded.in_place) {
    loaded.tensor = io::image_to_tensor(loaded.image, loaded.result_type, alpha_mode(options));
    loaded.image = io::Image{};  // the pixels are not needed any more
  }
  return loaded;
}

void save_output(const std::string& path, const ConstTensorView& tensor, const LoadedInput& source,
                 const CommonOptions& options) {
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) throw Error(ErrorCode::Io, path + ": cannot create the folder " + parent.string() + ": " + ec.message());
  if (is_npy_path(path)) {
    io::write_npy(path, tensor);
  } else {
    io::ImageWriteOptions write;
    write.quality = options.quality;
    write.png_compression = options.png_compression;
    io::write_image(path, io::tensor_to_image(tensor, source.from_image ? source.bit_depth : 8, alpha_mode(options)),
                    write);
  }
}

bool output_is_template(const std::string& output) { return output.find('{') != std::string::npos; }

bool output_is_folder(const std::string& output, std::size_t input_count) {
  std::error_code ec;
  return fs::is_directory(output, ec) || (!output.empty() && output.back() == '/') || input_count > 1;
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
    if (key == "stem") {
      out += fs::path(f.input).stem().string();
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
      usage_error("output template '" + pattern + "': unknown placeholder {" + key +
                  "}; allowed: {stem} {ext} {op} {index} {label} {id}");
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

std::string default_extension(const std::string& input) { return fs::path(input).extension().string(); }

void check_outputs(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  std::set<std::string> input_set;
  for (const auto& in : inputs) input_set.insert(canonical_or_absolute(in));
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

void check_jobs(const std::vector<std::string>& inputs, const std::vector<Job>& jobs) {
  std::vector<std::string> outputs;
  for (const Job& job : jobs) outputs.insert(outputs.end(), job.planned_outputs.begin(), job.planned_outputs.end());
  check_outputs(inputs, outputs);
}

int run_jobs(const std::vector<Job>& jobs, const CommonOptions& options, const std::string& op) {
  if (options.dry_run) {
    for (const Job& job : jobs) {
      for (const auto& out : job.planned_outputs) {
        if (options.json) {
          std::cout << nlohmann::json{{"input", job.input}, {"output", out}, {"op", op}, {"dry_run", true}}.dump()
                    << "\n";
        } else {
          std::cout << job.input << " -> " << out << "\n";
        }
      }
    }
    return kExitOk;
  }
  const int threads =
      options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Inputs run in parallel first; cores left over when there are fewer inputs than threads go to the kernels.
  const std::size_t parallel_inputs = std::clamp<std::size_t>(jobs.size(), 1, static_cast<std::size_t>(threads));
  const int kernel_threads = std::max(1, threads / static_cast<int>(parallel_inputs));
  std::mutex mutex;
  std::size_t done = 0;
  std::size_t failed = 0;
  std::size_t written = 0;
  Progress progress(jobs.size(), !options.quiet && ::isatty(STDERR_FILENO) != 0);
  const auto start = std::chrono::steady_clock::now();

  const auto run_one = [&](const Job& job) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<OutputRecord> records;
    std::string error;
    try {
      records = job.run(kernel_threads);
    } catch (const std::exception& e) {
      error = e.what();
      if (error.rfind(job.input, 0) != 0) error = job.input + ": " + error;
    } catch (...) {
      error = job.input + ": failed with an unknown error";
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::lock_guard<std::mutex> lock(mutex);
    ++done;
    if (!error.empty()) {
      ++failed;
      progress.finish();
      std::cerr << "rsz: " << error << "\n";
    }
    written += records.size();
    if (options.json) {
      for (const auto& r : records) {
        std::cout << nlohmann::json{{"input", job.input}, {"output", r.path},  {"op", op},
                                    {"shape", r.shape},   {"dtype", r.dtype}, {"seconds", seconds}}
                         .dump()
                  << "\n"
                  << std::flush;
      }
    }
    progress.step(done);
  };

  // One threading runtime for the whole program: the inputs are spread over an OpenMP team and each input's kernels
  // open a nested team of `kernel_threads`, so at most `threads` threads compute at once.
  if (kernel_threads > 1 && parallel_inputs > 1) omp_set_max_active_levels(2);
  const auto count = static_cast<std::int64_t>(jobs.size());
#pragma omp parallel for num_threads(static_cast<int>(parallel_inputs)) schedule(dynamic, 1)
  for (std::int64_t i = 0; i < count; ++i) run_one(jobs[static_cast<std::size_t>(i)]);
  progress.finish();
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failed > 0) {
    std::cerr << "rsz: " << failed << " of " << jobs.size() << " input" << (jobs.size() == 1 ? "" : "s")
              << " failed; " << written << " file" << (written == 1 ? "" : "s") << " written\n";
    return kExitFailed;
  }
  if (!options.quiet) {
    std::ostringstream s;
    s.precision(3);
    s << "rsz: wrote " << written << " file" << (written == 1 ? "" : "s") << " in " << total << " s";
    std::cerr << s.str() << "\n";
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
