// --plan's pinned parameters and the marker protocol of a shard run (run_shard_command, shard_run.h): the parameters
// that decide a run's outputs, from what the command was given (its options and run-level settings by their flags'
// names), pinned in STATE/params.json by the first shard, refused when another differs; a finished shard's marker
// written last.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "pipeline_internal.h"
#include "shard_run.h"
#include "rsz/error.h"
#include "rsz/io/temporary_files.h"

#include "shard_files.h"

namespace fs = std::filesystem;

namespace rsz::app {

using namespace shard_files;

namespace {

using Fnv = io::Fnv1a64;

// The parameters that decide a run's outputs: "key=value" lines of the command line's options, sorted, without the
// ones that do not change a pixel or a name; files that the options name (config, ROIs, batch) by their contents.
struct Params {
  std::string command;
  std::vector<std::string> lines;
  std::string hash;
  std::string output;  // where outputs go (-o, or a batch file's output folder): merge --clean looks there
};

// Inputs are the shard's list; the run-level settings say themselves whether they change outputs (the table's
// changes_outputs).
bool params_ignore(const std::string& key) {
  return key == "input" || key == "inputs" || !setting_changes_outputs(key);
}

// Adds a file's bytes to `fnv`, 64 KiB at a time.
void hash_file(const std::string& path, Fnv& fnv) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::Io, path + ": cannot read the file");
  std::vector<char> chunk(std::size_t{64} << 10);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    fnv.add(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(ErrorCode::Io, path + ": cannot read the file");
}

// A VOC or YOLO folder as its readers see it: the names and bytes of its .xml and .txt files, in name order.
void hash_annotation_folder(const std::string& folder, Fnv& fnv) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string ext = io::lower_extension(it->path().string());
    std::error_code entry_ec;
    if ((ext == ".xml" || ext == ".txt") && it->is_regular_file(entry_ec)) files.push_back(it->path());
  }
  if (ec) throw Error(ErrorCode::Io, folder + ": cannot list the folder: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    fnv.add(file.filename().string() + '\0');
    hash_file(file.string(), fnv);
    fnv.add(std::string(1, '\0'));
  }
}

// A flag's value as the parameters compare it: a plain number in its shortest form ("0.50", ".5" and "5e-1" are
// "0.5"), so that the same value written another way is not another parameter; paths and other text as CLI11 gives
// them.
std::string canonical_value(const std::string& key, const std::string& value) {
  static const std::set<std::string> paths = {"output", "config", "rois", "names", "batch-indices", "batch",
                                              "image-root", "manifest"};
  if (paths.count(key) != 0 || value.empty() ||
      value.find_first_not_of("0123456789.eE+-") != std::string::npos) {
    return value;
  }
  double number = 0;
  const char* first = value.data() + (value[0] == '+' ? 1 : 0);  // from_chars takes no leading '+'
  const auto parsed = std::from_chars(first, value.data() + value.size(), number);
  if (parsed.ec != std::errc() || parsed.ptr != value.data() + value.size() || !std::isfinite(number)) return value;
  char text[64];
  const auto written = std::to_chars(text, text + sizeof text, number);
  return written.ec == std::errc() ? std::string(text, written.ptr) : value;
}

// The hash of a file's bytes, or of an annotation folder's files; "" for a path that is neither (the run reports it).
std::string contents_hash(const std::string& path) {
  std::error_code ec;
  Fnv fnv;
  if (fs::is_regular_file(path, ec)) {
    hash_file(path, fnv);
  } else if (fs::is_directory(path, ec)) {
    hash_annotation_folder(path, fnv);
  } else {
    return "";
  }
  return hex64(fnv.value());
}

// A value as CLI11's config text wrote it (the form of the pinned parameters since --plan began, so that plans pinned
// by an earlier rsz keep their hash): numbers, true and false as they are, one character in '', other text in "".
std::string quoted_value(const std::string& value) {
  if (value.empty()) return "\"\"";
  if (value == "true" || value == "false" || value == "nan" || value == "inf") return value;
  if (value.compare(0, 2, "0x") != 0 && value.compare(0, 2, "0X") != 0) {
    char* end = nullptr;
    errno = 0;
    (void)std::strtod(value.c_str(), &end);
    if (end == value.c_str() + value.size() && !std::isspace(static_cast<unsigned char>(value[0]))) return value;
  }
  if (value.size() == 1) return "'" + value + "'";
  // 0x<hex>, 0o<octal>, 0b<binary> as they are.
  const auto all_of = [&value](const char* digits) {
    return value.find_first_not_of(digits, 2) == std::string::npos;
  };
  if (value[0] == '0' && ((value[1] == 'x' && all_of("0123456789ABCDEFabcdef")) ||
                          (value[1] == 'o' && all_of("01234567")) || (value[1] == 'b' && all_of("01")))) {
    return value;
  }
  return value.find('"') == std::string::npos ? "\"" + value + "\"" : "'" + value + "'";
}

// The parameters of a command. Reads the files the options name (streaming), so it is only called with --plan.
Params params_of(const PinnedCommand& command) {
  Params params;
  params.command = command.command;
  std::set<std::string> lines{"command=" + params.command};
  for (const auto& [key, value] : command.given) {
    if (params_ignore(key)) continue;
    lines.insert(key + "=" + canonical_value(key, quoted_value(value)));
  }
  // The files the options name by their bytes (a VOC or YOLO folder's files): a config changed between shards changes
  // the outputs as a flag does.
  for (const auto& [key, path] : command.files) {
    try {
      if (const std::string hash = path.empty() ? "" : contents_hash(path); !hash.empty()) {
        lines.insert(key + " contents=" + hash);
      }
    } catch (const Error&) {
    }
  }
  // rsz run: the files a batch file's steps name (ROIs, class names) by their contents too, as the flags' are.
  if (!command.batch.empty()) {
    try {
      const io::BatchFile file = io::read_batch_file(command.batch);
      for (std::size_t i = 0; i < file.steps.size(); ++i) {
        const io::BatchStep& step = file.steps[i];
        for (const auto& [key, path] : {std::pair<const char*, const std::string&>{"rois", step.rois_path},
                                        std::pair<const char*, const std::string&>{"names", step.names_path}}) {
          const std::string hash = path.empty() ? "" : contents_hash(path);
          if (!hash.empty()) lines.insert("steps[" + std::to_string(i) + "]." + key + " contents=" + hash);
        }
      }
      if (command.output.empty()) params.output = file.output_dir;
    } catch (const Error&) {  // a batch file that cannot be read is refused by the run itself
    }
  }
  if (!command.output.empty()) params.output = command.output;
  Fnv fnv;
  for (const std::string& line : lines) fnv.add(line + "\n");
  params.lines.assign(lines.begin(), lines.end());
  params.hash = hex64(fnv.value());
  return params;
}

// "scale=0.25 here, scale=0.5 there" for each key whose lines differ.
std::string params_difference(const std::vector<std::string>& here, const std::vector<std::string>& there) {
  const auto by_key = [](const std::vector<std::string>& lines) {
    std::map<std::string, std::string> keys;
    for (const std::string& line : lines) {
      const std::size_t eq = line.find('=');
      keys[line.substr(0, eq)] = line;
    }
    return keys;
  };
  const auto a = by_key(here);
  const auto b = by_key(there);
  std::set<std::string> keys;
  for (const auto& [key, line] : a) keys.insert(key);
  for (const auto& [key, line] : b) keys.insert(key);
  std::string text;
  for (const std::string& key : keys) {
    const auto x = a.find(key);
    const auto y = b.find(key);
    const std::string mine = x == a.end() ? "" : x->second;
    const std::string theirs = y == b.end() ? "" : y->second;
    if (mine == theirs) continue;
    text += (text.empty() ? "" : "; ") + (mine.empty() ? key + " not given" : mine) + " here, " +
            (theirs.empty() ? "not given" : theirs) + " there";
  }
  return text;
}

// Refuses (exit 2) parameters other than the ones pinned in STATE/params.json.
void check_pinned(const std::string& state, const Params& params) {
  const std::string path = (fs::path(state) / "params.json").string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return;
  const nlohmann::json pinned = read_params(path);
  if (pinned["hash"].get<std::string>() == params.hash) return;
  std::vector<std::string> lines;
  for (const auto& line : pinned["params"]) lines.push_back(line.get<std::string>());
  usage_error("the parameters differ from the ones this plan was run with (" + path + "): " +
              printable(params_difference(params.lines, lines)) +
              "; run every shard with the same command, or write a new plan");
}

void pin_params(const std::string& state, const Params& params) {
  const nlohmann::json pinned = {
      {"command", params.command}, {"params", params.lines}, {"hash", params.hash}, {"output", params.output}};
  if (!write_atomically((fs::path(state) / "params.json").string(), dump(pinned), true)) {
    check_pinned(state, params);  // another shard pinned them first
  }
}

}  // namespace

namespace {

// The marker a finished run of shard `index` writes: its counts, its failures, its manifests, its status and times.
nlohmann::json marker_of(std::int64_t index, const nlohmann::json& plan, const Params& params, int status,
                         const std::string& started, double seconds) {
  const detail::RunTotals& totals = detail::run_totals();
  nlohmann::json manifests = nlohmann::json::array();
  for (const auto& [given, written] : totals.manifests) manifests.push_back({{"given", given}, {"written", written}});
  nlohmann::json failures = nlohmann::json::array();
  for (const pipeline::Record& f : totals.failures) {
    failures.push_back({{"input", f.input}, {"error", f.message}, {"code", pipeline::code_name(f.code)}});
  }
  return {{"shard", index},
          {"shards", plan["shards"].get<std::int64_t>()},
          {"command", params.command},
          {"list_fingerprint", plan["fingerprints"][static_cast<std::size_t>(index)]},
          {"params_hash", params.hash},
          {"inputs", plan_state().listed},
          {"outputs", totals.written + totals.kept},
          {"written", totals.written},
          {"kept", totals.kept},
          {"skipped", totals.skipped},
          {"failed", totals.failed},
          {"counts",
           {{"inputs", "inputs in the shard's list"},
            {"outputs", "output files of the shard's inputs present after the run: written + kept"},
            {"written", "output files this run wrote"},
            {"kept", "output files that existed and were kept (their inputs skipped)"},
            {"skipped", "inputs whose outputs all existed, so they were not run again"},
            {"failed", "inputs that failed in this run"},
            {"failures", "the first 20 inputs that failed, with their messages"}}},
          {"manifests", manifests},
          {"failures", failures},
          {"status", status},
          {"started", started},
          {"finished", now_text()},
          {"seconds", seconds}};
}

}  // namespace

int run_shard_command(const PinnedCommand& command, const CommonOptions& common, const std::function<int()>& run) {
  if (common.given.count("plan") == 0 || common.dry_run) return run();
  const std::string state = common.plan;
  const auto shard_text = std::find_if(command.given.begin(), command.given.end(),
                                       [](const auto& entry) { return entry.first == "shard"; });
  std::int64_t index = -1;
  std::int64_t count = 0;
  if (shard_text != command.given.end()) parse_shard(shard_text->second, index, count);
  const nlohmann::json plan = checked_plan(state, !common.inputs.empty(), index, count);
  const auto shards = plan["shards"].get<std::int64_t>();
  // The parameters' hash reads the files the options name: not before the command's own checks of them (their size
  // against the memory budget) unless a marker asks for it, and once.
  std::optional<Params> params;
  const auto parameters = [&]() -> const Params& {
    if (!params) params = params_of(command);
    return *params;
  };
  const std::string name = "shard " + std::to_string(index) + "/" + std::to_string(shards);
  const std::string marker = marker_path(state, index);
  const std::string fingerprint = plan["fingerprints"][static_cast<std::size_t>(index)].get<std::string>();
  // A marker rsz cannot use (truncated, of another shape) is no marker: the shard runs and replaces it.
  if (const std::optional<nlohmann::json> done = read_marker(marker)) {
    if ((*done)["list_fingerprint"] == fingerprint && (*done)["failed"] == 0 && (*done)["status"] == 0 &&
        (*done)["params_hash"] == parameters().hash) {
      to_stderr("rsz: " + name + " is done already (" + printable(marker) + ": " +
                std::to_string((*done)["inputs"].get<std::int64_t>()) + " inputs, " +
                std::to_string((*done)["outputs"].get<std::int64_t>()) + " output files); nothing to do\n");
      return kExitOk;
    }
  }
  // Before the first output (after the run's planning and budget checks): refused when another shard pinned other
  // parameters, else pinned. rsz run calls it once a phase.
  bool pinned = false;
  detail::RunState& this_run = detail::current_run();
  this_run.before_writing = [&] {
    if (pinned) return;
    check_pinned(state, parameters());
    pin_params(state, parameters());
    pinned = true;
  };
  struct Unhook {
    detail::RunState& run;
    ~Unhook() {
      run.before_writing = nullptr;
      run.io.temporary_tag.clear();
    }
  } unhook{this_run};
  // The shard's temporary files carry the plan's id, so that merge --clean knows them from any other file: this run's
  // threads' (RunScope), not another run's of the same process.
  io::set_thread_temporary_tag(this_run.io, plan_id_of(plan, (fs::path(state) / "plan.json").string()));
  const bool keep_records = detail::run_totals().keep_records;
  detail::run_totals() = {};
  detail::run_totals().keep_records = keep_records;
  const std::string started = now_text();
  const auto start = std::chrono::steady_clock::now();
  const int status = run();
  this_run.before_writing = nullptr;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const nlohmann::json done = marker_of(index, plan, parameters(), status, started, seconds);
  try {
    write_atomically(marker, dump(done));
  } catch (const std::exception& e) {
    to_stderr("rsz: " + printable(e.what()) + "\n");
    return kExitFailed;
  }
  return status;
}

}  // namespace rsz::app
