// The run-level settings: each row of io's table (rsz/io/run_settings.h) bound to its member of CommonOptions, and
// a batch file's keys laid under the flags given to rsz run. The command line registers the rows' flags
// (app/setting_flags.cpp).
#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "pipeline.h"
#include "rsz/io/config.h"
#include "rsz/io/run_settings.h"

namespace rsz::app {

std::string one_of_allowed(const std::vector<std::string>& choices) {
  std::string allowed;
  for (const std::string& c : choices) allowed += (allowed.empty() ? "" : ", ") + c;
  return "one of " + allowed + " is allowed";
}

std::int64_t parse_whole(const std::string& text, const std::string& what, std::int64_t min, std::int64_t max) {
  return io::parse_int(!text.empty() && text[0] == '+' ? text.substr(1) : text, what, min, max);
}

namespace {

// What a row's text does to the options: `what` names the flag or batch key in messages.
using Setter = std::function<void(CommonOptions& options, const std::string& text, const std::string& what,
                                  const io::RunSettingSpec& row)>;

struct Binding {
  Setter set;
  // An extra check of the text on the command line, as CLI11 validators report them ("" when allowed).
  std::function<std::string(const std::string& text)> check;
};

Setter boolean(bool CommonOptions::*member) {
  return [member](CommonOptions& o, const std::string& text, const std::string&, const io::RunSettingSpec&) {
    o.*member = text == "true";
  };
}

template <typename Int>
Setter whole(Int CommonOptions::*member) {
  return [member](CommonOptions& o, const std::string& text, const std::string& what, const io::RunSettingSpec& row) {
    o.*member = static_cast<Int>(parse_whole(text, what, row.min, row.max));
  };
}

template <typename Enum>
Setter enumerated(Enum CommonOptions::*member, Enum (*parse)(const std::string&, const std::string&)) {
  return [member, parse](CommonOptions& o, const std::string& text, const std::string& what,
                         const io::RunSettingSpec&) { o.*member = parse(text, what); };
}

std::string usable_backend(const std::string& text) {
  if (text != to_string(Backend::Cuda)) return "";
  for (const BackendInfo& b : backends()) {
    if (b.backend == Backend::Cuda) return b.available ? "" : "cuda cannot run here: " + b.note;
  }
  return "this build of rsz has no CUDA backend (build it with -DRSZ_CUDA=ON where nvcc and a GPU are present); "
         "auto, cpu or reference is allowed";
}

// --decode gpu / --encode gpu: why not here ("" where they can run). `what`: "decoder" or "encoder".
std::string usable_gpu_jpeg(const std::string& text, const char* what) {
  if (text != "gpu") return "";
#if defined(RSZ_GPU_JPEG)
  (void)what;
  const std::string cuda = usable_backend(to_string(Backend::Cuda));
  return cuda.empty() ? "" : "the GPU cannot be used (" + cuda + "); cpu is allowed";
#else
  return std::string("this build of rsz has no GPU JPEG ") + what +
         " (nvJPEG, built with the CUDA backend where the CUDA toolkit has it); cpu is allowed";
#endif
}

std::string usable_gpu_decode(const std::string& text) { return usable_gpu_jpeg(text, "decoder"); }
std::string usable_gpu_encode(const std::string& text) { return usable_gpu_jpeg(text, "encoder"); }

// Every row's binding, by key. A row without one is an internal error as soon as a command registers its flags, so
// every test of the command line fails on it.
const std::map<std::string, Binding>& bindings() {
  static const std::map<std::string, Binding> table = {
      {"dtype", {enumerated(&CommonOptions::dtype, io::parse_compute_type), {}}},
      {"jobs", {whole(&CommonOptions::jobs), {}}},
      {"json", {boolean(&CommonOptions::json), {}}},
      {"dry_run", {boolean(&CommonOptions::dry_run), {}}},
      {"quiet", {boolean(&CommonOptions::quiet), {}}},
      {"recursive", {boolean(&CommonOptions::recursive), {}}},
      {"hidden", {boolean(&CommonOptions::hidden), {}}},
      {"no_exif", {boolean(&CommonOptions::no_exif), {}}},
      {"alpha", {enumerated(&CommonOptions::alpha, io::parse_alpha_mode), {}}},
      {"backend", {enumerated(&CommonOptions::backend, io::parse_backend), usable_backend}},
      {"device",
       {[](CommonOptions& o, const std::string& text, const std::string& what, const io::RunSettingSpec&) {
          o.devices = parse_devices(text, what);
        },
        devices_problem}},
      {"verbose", {boolean(&CommonOptions::verbose), {}}},
      {"max_pixels", {whole(&CommonOptions::max_pixels), {}}},
      {"max_memory",
       {[](CommonOptions& o, const std::string& text, const std::string& what, const io::RunSettingSpec&) {
          o.max_memory = parse_memory_size(text, what);
        },
        {}}},
      {"max_samples", {whole(&CommonOptions::max_samples), {}}},
      {"quality", {whole(&CommonOptions::quality), {}}},
      {"lossless", {boolean(&CommonOptions::lossless), {}}},
      {"strict", {boolean(&CommonOptions::strict), {}}},
      {"background",
       {[](CommonOptions& o, const std::string& text, const std::string& what, const io::RunSettingSpec&) {
          o.background = parse_background(text, what);
        },
        {}}},
      {"format",
       {[](CommonOptions& o, const std::string& text, const std::string&, const io::RunSettingSpec&) {
          o.format = text;
        },
        {}}},
      {"tar_part_size", {whole(&CommonOptions::tar_part_size), {}}},
      {"no_sync", {boolean(&CommonOptions::no_sync), {}}},
      {"strip", {boolean(&CommonOptions::strip), {}}},
      {"grayscale", {boolean(&CommonOptions::grayscale), {}}},
      {"linear", {boolean(&CommonOptions::linear), {}}},
      {"colorspace",
       {[](CommonOptions& o, const std::string& text, const std::string& what, const io::RunSettingSpec& row) {
          if (std::find(row.choices.begin(), row.choices.end(), text) == row.choices.end()) {
            usage_error(what + " " + printable(text) + ": keep or srgb is allowed");
          }
          o.to_srgb = text == "srgb";
        },
        {}}},
      {"depth",
       {[](CommonOptions& o, const std::string& text, const std::string& what, const io::RunSettingSpec& row) {
          if (std::find(row.choices.begin(), row.choices.end(), text) == row.choices.end()) {
            usage_error(what + " " + printable(text) + ": 8 or 16 is allowed");
          }
          o.depth = text == "16" ? 16 : 8;
        },
        {}}},
      {"skip_existing", {boolean(&CommonOptions::skip_existing), {}}},
      {"png_compression", {whole(&CommonOptions::png_compression), {}}},
      {"shrink_on_load", {boolean(&CommonOptions::shrink_on_load), {}}},
      {"decode",
       {[](CommonOptions& o, const std::string& text, const std::string&, const io::RunSettingSpec&) {
          o.decode_gpu = text == "gpu";
        },
        usable_gpu_decode}},
      {"encode",
       {[](CommonOptions& o, const std::string& text, const std::string&, const io::RunSettingSpec&) {
          o.encode_gpu = text == "gpu";
        },
        usable_gpu_encode}},
      {"shard",
       {[](CommonOptions& o, const std::string& text, const std::string& what, const io::RunSettingSpec&) {
          parse_shard_option(text, what, o.shard_index, o.shard_count);
        },
        {}}},
      {"plan",
       {[](CommonOptions& o, const std::string& text, const std::string&, const io::RunSettingSpec&) { o.plan = text; },
        {}}},
  };
  return table;
}

const Binding& binding_of(const io::RunSettingSpec& row) {
  const auto it = bindings().find(row.key);
  if (it == bindings().end()) throw InternalError("run setting " + row.key + " has no binding in app/settings.cpp");
  return it->second;
}

}  // namespace

std::string setting_check(const io::RunSettingSpec& row, const std::string& text) {
  const Binding& binding = binding_of(row);
  return binding.check ? binding.check(text) : std::string();
}

void apply_setting(CommonOptions& options, const io::RunSettingSpec& row, const std::string& text,
                   const std::string& what) {
  binding_of(row).set(options, text, what, row);
}


void apply_batch_settings(CommonOptions& options, const io::BatchFile& batch, const std::string& source) {
  for (const auto& [key, text] : batch.settings) {
    if (options.given.count(key) != 0) continue;  // the flag given to rsz run wins over the file's key
    const io::RunSettingSpec* row = io::find_run_setting(key);
    if (row == nullptr) throw InternalError("batch setting " + key + " has no row");
    apply_setting(options, *row, text, source + ": \"" + row->batch_key + "\"");
  }
}

bool setting_changes_outputs(const std::string& long_name) {
  for (const io::RunSettingSpec& row : io::run_settings()) {
    if (row.long_name() == long_name) return row.changes_outputs;
  }
  return true;  // a command's own flag (--size, --rois, ...): it decides the outputs
}

}  // namespace rsz::app
