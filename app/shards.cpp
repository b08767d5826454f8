// Shards: one job split over machines (Slurm job arrays, Kubernetes Indexed Jobs, GNU parallel). Each input's shard is
// a stable hash of its key, so the union of shards 0..N-1 is the whole job, disjoint, and adding inputs never moves
// an existing input to another shard.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "commands.h"
#include "common.h"
#include "pipeline_internal.h"
#include "rsz/error.h"

namespace fs = std::filesystem;

namespace rsz::app {

namespace {

std::uint64_t fnv1a64(const std::string& bytes) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

// "7" or "7/16" as numbers; false for other text.
bool parse_shard(const std::string& text, std::int64_t& index, std::int64_t& count) {
  const std::size_t slash = text.find('/');
  const std::string first = text.substr(0, slash);
  const std::string second = slash == std::string::npos ? "" : text.substr(slash + 1);
  const auto number = [](const std::string& digits, std::int64_t& value) {
    if (digits.empty() || digits.size() > 9) return false;
    for (const char c : digits) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    value = std::stoll(digits);
    return true;
  };
  count = 0;
  return number(first, index) && (slash == std::string::npos || number(second, count));
}

}  // namespace

std::string shard_key(const std::string& input) {
  const auto found = detail::input_keys().find(input);
  if (found != detail::input_keys().end()) return found->second;
  return fs::path(input).stem().string();
}

void set_shard_key_below(const std::string& input, const std::string& root) {
  if (detail::input_keys().count(input)) return;
  fs::path relative = fs::path(input).lexically_relative(root.empty() ? fs::path(".") : fs::path(root));
  if (relative.empty() || *relative.begin() == "..") relative = fs::path(input).filename();
  detail::input_keys()[input] = relative.replace_extension().generic_string();
}

std::int64_t shard_of_key(const std::string& key, std::int64_t count) {
  return static_cast<std::int64_t>(fnv1a64(key) % static_cast<std::uint64_t>(count));
}

void add_shard_options(CLI::App& command, CommonOptions& options) {
  command.add_option_function<std::string>(
      "--shard",
      [&options](const std::string& text) {
        std::int64_t index = 0;
        std::int64_t count = 0;
        if (!parse_shard(text, index, count) || (text.find('/') != std::string::npos && count < 1)) {
          usage_error("--shard " + printable(text) + ": not a shard; I/N (0-based shard I of N, e.g. 3/16) or, "
                      "with --plan, I is allowed");
        }
        if (count > 0 && index >= count) {
          usage_error("--shard " + printable(text) + ": shard " + std::to_string(index) + " of " +
                      std::to_string(count) + " does not exist; 0 to " + std::to_string(count - 1) +
                      " is allowed (shards count from 0)");
        }
        options.shard_index = index;
        options.shard_count = count;
      },
      "Process only shard I of N (0-based; e.g. $SLURM_ARRAY_TASK_ID/16): the inputs whose key (their path below "
      "the -i folder, without extension) hashes to I (FNV-1a 64 mod N), so shards 0..N-1 together are the whole "
      "job and adding inputs never moves one to another shard; with --plan, I alone");
  command.add_option("--plan", options.plan,
                     "Take the inputs of shard I (--shard I) of the plan rsz plan wrote in this folder instead of -i; "
                     "the parameters are pinned in its params.json, a finished shard writes its done/ marker and "
                     "exits at once when run again, an unfinished one skips the outputs that exist");
}

std::vector<Job> select_plan_shard(std::vector<Job> jobs, CommonOptions& options);

std::vector<Job> select_shard(std::vector<Job> jobs, CommonOptions& options) {
  if (!options.plan.empty()) return select_plan_shard(std::move(jobs), options);
  if (options.shard_index < 0) return jobs;
  if (options.shard_count == 0) {
    usage_error("--shard " + std::to_string(options.shard_index) + ": give I/N (shard I of N), or --plan STATE to "
                "take shard I of a plan");
  }
  std::set<std::string> all;
  std::set<std::string> kept;
  std::vector<Job> selected;
  for (Job& job : jobs) {
    all.insert(job.input);
    if (shard_of_key(shard_key(job.input), options.shard_count) != options.shard_index) continue;
    kept.insert(job.input);
    selected.push_back(std::move(job));
  }
  options.summary_prefix = "shard " + std::to_string(options.shard_index) + "/" + std::to_string(options.shard_count) +
                           ": " + std::to_string(kept.size()) + " of " + std::to_string(all.size()) + " input" +
                           (all.size() == 1 ? "" : "s") + "; ";
  return selected;
}

}  // namespace rsz::app

// ---- rsz plan, --plan STATE --shard I, the markers, rsz merge ----
namespace rsz::app {

namespace {

std::string hex64(std::uint64_t value) {
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return "fnv1a64:" + std::string(text);
}

// Incremental FNV-1a 64.
struct Fnv {
  std::uint64_t hash = 14695981039346656037ull;
  void add(const std::string& bytes) {
    for (const char c : bytes) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ull;
    }
  }
};

// A shard list's line: the path with '\\', newline, carriage return and tab escaped, then, for an input found in a
// folder or a "**" pattern, a tab and its {dir}.
std::string escape_field(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out;
}

std::string unescape_field(const std::string& text, const std::string& where) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (next == '\\') out += '\\';
    else if (next == 'n') out += '\n';
    else if (next == 'r') out += '\r';
    else if (next == 't') out += '\t';
    else usage_error(where + ": a '\\' that escapes nothing (\\\\, \\n, \\r and \\t are allowed)");
    ++i;
  }
  return out;
}

std::string shard_name(std::int64_t index) {
  char text[32];
  std::snprintf(text, sizeof text, "%05lld", static_cast<long long>(index));
  return text;
}

std::string list_path(const std::string& state, std::int64_t index) {
  return (fs::path(state) / "shards" / (shard_name(index) + ".txt")).string();
}

std::string marker_path(const std::string& state, std::int64_t index) {
  return (fs::path(state) / "done" / (shard_name(index) + ".json")).string();
}

std::string now_text() {
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::Io, path + ": cannot read the file");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `text` to `path` through a temporary file in its folder and a rename: readers see the old file or the new,
// never a part. With `exclusive`, the file is only made where none exists (link(2)); false when one did.
bool write_atomically(const std::string& path, const std::string& text, bool exclusive = false) {
  const fs::path folder = fs::path(path).parent_path();
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw Error(ErrorCode::Io, folder.string() + ": cannot create the folder: " + ec.message());
  const std::string temp = (folder / ("." + fs::path(path).filename().string() + ".tmp-" +
                                      std::to_string(::getpid())))
                               .string();
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw Error(ErrorCode::Io, temp + ": cannot write the file");
  }
  if (exclusive) {
    const bool made = ::link(temp.c_str(), path.c_str()) == 0;
    const int err = errno;
    ::unlink(temp.c_str());
    if (!made && err != EEXIST) throw Error(ErrorCode::Io, path + ": cannot create the file: " + std::strerror(err));
    return made;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw Error(ErrorCode::Io, path + ": cannot write the file: " + std::strerror(err));
  }
  return true;
}

nlohmann::json read_json(const std::string& path) {
  try {
    return nlohmann::json::parse(read_whole(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::InvalidArgument, path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

std::string dump(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// What was read of a plan for this run.
struct PlanState {
  std::string folder;
  std::int64_t shards = 0;
  std::int64_t index = -1;
  std::int64_t total = 0;   // inputs of the whole plan
  std::int64_t listed = 0;  // inputs of this shard
  std::string fingerprint;  // of this shard's list
};

PlanState& plan_state() {
  static PlanState state;
  return state;
}

// plan.json of `state`: a usage error naming the folder when it is missing or not a plan.
nlohmann::json read_plan(const std::string& state) {
  const std::string path = (fs::path(state) / "plan.json").string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    usage_error("--plan " + state + ": no plan.json there; write one with rsz plan -i INPUTS --shards N -o " + state);
  }
  nlohmann::json plan = read_json(path);
  if (!plan.is_object() || !plan.contains("shards") || !plan["shards"].is_number_integer() ||
      !plan.contains("fingerprints") || !plan["fingerprints"].is_array() ||
      plan["fingerprints"].size() != plan["shards"].get<std::size_t>()) {
    usage_error(path + ": not a plan written by rsz plan (\"shards\" and one \"fingerprints\" entry per shard)");
  }
  return plan;
}

// The parameters that decide a run's outputs: "key=value" lines of the command line's options, sorted, without the
// ones that do not change a pixel or a name; files that the options name (config, ROIs, batch) by their contents.
struct Params {
  std::string command;
  std::vector<std::string> lines;
  std::string hash;
};

Params& command_params() {
  static Params params;
  return params;
}

// The scheduling and input-selection options: they do not change what an input's outputs are.
bool params_ignore(const std::string& key) {
  static const std::set<std::string> ignored = {
      "jobs",   "json",   "quiet",  "verbose",       "no-sync",   "plan",      "shard",  "dry-run",
      "max-memory", "skip-existing", "backend", "device", "input", "inputs", "recursive", "hidden"};
  return ignored.count(key) > 0;
}

}  // namespace

void set_command_params(const CLI::App& command) {
  Params params;
  params.command = command.get_name();
  std::istringstream text(command.config_to_str(false, false));
  std::set<std::string> lines{"command=" + params.command};
  for (std::string line; std::getline(text, line);) {
    if (line.empty() || line[0] == '[' || line[0] == '#') continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq);
    if (params_ignore(key)) continue;
    lines.insert(line);
    static const std::set<std::string> files = {"config", "rois", "names", "batch-indices", "batch"};
    if (files.count(key) == 0) continue;
    // The file's bytes: a config changed between shards changes the outputs as a flag does.
    for (const CLI::Option* option : command.get_options()) {
      if (option->get_single_name() != key || option->count() == 0) continue;
      const std::string path = option->as<std::string>();
      std::error_code ec;
      if (!fs::is_regular_file(path, ec)) continue;
      Fnv fnv;
      try {
        fnv.add(read_whole(path));
        lines.insert(key + " contents=" + hex64(fnv.hash));
      } catch (const Error&) {
      }
    }
  }
  Fnv fnv;
  for (const std::string& line : lines) fnv.add(line + "\n");
  params.lines.assign(lines.begin(), lines.end());
  params.hash = hex64(fnv.hash);
  command_params() = std::move(params);
}

std::vector<std::string> plan_shard_inputs(const CommonOptions& options) {
  const std::string& state = options.plan;
  if (!options.inputs.empty()) {
    usage_error("--plan " + state + ": the inputs come from the plan's shard list; drop -i");
  }
  if (options.shard_index < 0) {
    usage_error("--plan " + state + ": give --shard I, the shard of the plan to run");
  }
  const nlohmann::json plan = read_plan(state);
  const auto shards = plan["shards"].get<std::int64_t>();
  if (options.shard_count > 0 && options.shard_count != shards) {
    usage_error("--shard " + std::to_string(options.shard_index) + "/" + std::to_string(options.shard_count) +
                ": the plan " + state + " has " + std::to_string(shards) + " shards; give --shard I alone");
  }
  if (options.shard_index >= shards) {
    usage_error("--shard " + std::to_string(options.shard_index) + ": the plan " + state + " has " +
                std::to_string(shards) + " shard" + (shards == 1 ? "" : "s") + "; 0 to " +
                std::to_string(shards - 1) + " is allowed");
  }
  const std::string path = list_path(state, options.shard_index);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) usage_error(path + ": the shard list is missing; write the plan again");
  const std::string text = read_whole(path);
  Fnv fnv;
  fnv.add(text);
  const std::string fingerprint = hex64(fnv.hash);
  if (fingerprint != plan["fingerprints"][static_cast<std::size_t>(options.shard_index)].get<std::string>()) {
    usage_error(path + ": the list differs from the one rsz plan wrote (its fingerprint in plan.json); write the "
                "plan again");
  }
  std::vector<std::string> inputs;
  std::istringstream lines(text);
  std::size_t number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const std::string where = path + ":" + std::to_string(number);
    const std::size_t tab = line.find('\t');
    const std::string input = unescape_field(line.substr(0, tab), where);
    if (input.empty()) usage_error(where + ": an empty line; each line names one input");
    if (tab != std::string::npos) detail::input_dirs()[input] = unescape_field(line.substr(tab + 1), where);
    inputs.push_back(input);
  }
  PlanState& s = plan_state();
  s.folder = state;
  s.shards = shards;
  s.index = options.shard_index;
  s.total = plan.value("total", std::int64_t{0});
  s.listed = static_cast<std::int64_t>(inputs.size());
  s.fingerprint = fingerprint;
  return inputs;
}

std::string shard_output_target(const CommonOptions& options, const std::string& output) {
  if (options.plan.empty() || output.empty() || output == "-" || output_is_template(output)) return output;
  // Named as in the whole run: a folder when the whole plan has several inputs, whatever this shard holds.
  const auto total = static_cast<std::size_t>(std::max<std::int64_t>(plan_state().total, 1));
  if (output.back() != '/' && output_is_folder(output, total)) return output + "/";
  return output;
}

std::vector<Job> select_plan_shard(std::vector<Job> jobs, CommonOptions& options) {
  const PlanState& s = plan_state();
  options.skip_existing = true;  // a shard run again goes on where it stopped
  options.summary_prefix = "shard " + std::to_string(s.index) + "/" + std::to_string(s.shards) + ": " +
                           std::to_string(s.listed) + " of " + std::to_string(s.total) + " input" +
                           (s.total == 1 ? "" : "s") + "; ";
  return jobs;
}

}  // namespace rsz::app

namespace rsz::app {

namespace {

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
  const nlohmann::json pinned = read_json(path);
  if (pinned.value("hash", std::string()) == params.hash) return;
  std::vector<std::string> lines;
  if (pinned.contains("params") && pinned["params"].is_array()) {
    for (const auto& line : pinned["params"]) {
      if (line.is_string()) lines.push_back(line.get<std::string>());
    }
  }
  usage_error("the parameters differ from the ones this plan was run with (" + path + "): " +
              printable(params_difference(params.lines, lines)) +
              "; run every shard with the same command, or write a new plan");
}

void pin_params(const std::string& state, const Params& params) {
  const nlohmann::json pinned = {{"command", params.command}, {"params", params.lines}, {"hash", params.hash}};
  if (!write_atomically((fs::path(state) / "params.json").string(), dump(pinned), true)) {
    check_pinned(state, params);  // another shard pinned them first
  }
}

}  // namespace

namespace detail {

RunTotals& run_totals() {
  static RunTotals totals;
  return totals;
}

std::function<void()>& before_writing() {
  static std::function<void()> hook;
  return hook;
}

}  // namespace detail

int run_command(const CLI::App& command, const std::function<int()>& run) {
  set_command_params(command);
  const CLI::Option* plan_option = command.get_option_no_throw("--plan");
  const CLI::Option* dry_run = command.get_option_no_throw("--dry-run");
  if (plan_option == nullptr || plan_option->count() == 0 || (dry_run != nullptr && dry_run->count() > 0)) {
    return run();
  }
  const std::string state = plan_option->as<std::string>();
  const CLI::Option* input_option = command.get_option_no_throw("--input");
  if (input_option != nullptr && input_option->count() > 0) {
    usage_error("--plan " + state + ": the inputs come from the plan's shard list; drop -i");
  }
  const CLI::Option* shard_option = command.get_option_no_throw("--shard");
  if (shard_option == nullptr || shard_option->count() == 0) {
    usage_error("--plan " + state + ": give --shard I, the shard of the plan to run");
  }
  std::int64_t index = 0;
  std::int64_t count = 0;
  parse_shard(shard_option->as<std::string>(), index, count);
  const nlohmann::json plan = read_plan(state);
  const auto shards = plan["shards"].get<std::int64_t>();
  if (index >= shards) {
    usage_error("--shard " + std::to_string(index) + ": the plan " + state + " has " + std::to_string(shards) +
                " shard" + (shards == 1 ? "" : "s") + "; 0 to " + std::to_string(shards - 1) + " is allowed");
  }
  const Params params = command_params();
  check_pinned(state, params);
  const std::string name = "shard " + std::to_string(index) + "/" + std::to_string(shards);
  const std::string marker = marker_path(state, index);
  const std::string fingerprint = plan["fingerprints"][static_cast<std::size_t>(index)].get<std::string>();
  std::error_code ec;
  if (fs::is_regular_file(marker, ec)) {
    const nlohmann::json done = read_json(marker);
    if (done.value("list_fingerprint", std::string()) == fingerprint &&
        done.value("params_hash", std::string()) == params.hash && done.value("failed", 1) == 0 &&
        done.value("status", 1) == 0) {
      to_stderr("rsz: " + name + " is done already (" + printable(marker) + ": " +
                std::to_string(done.value("inputs", 0)) + " inputs, " + std::to_string(done.value("outputs", 0)) +
                " files written); nothing to do\n");
      return kExitOk;
    }
  }
  detail::before_writing() = [state, params] { pin_params(state, params); };
  detail::run_totals() = {};
  const std::string started = now_text();
  const auto start = std::chrono::steady_clock::now();
  const int status = run();
  detail::before_writing() = nullptr;
  const detail::RunTotals& totals = detail::run_totals();
  const nlohmann::json done = {
      {"shard", index},
      {"shards", shards},
      {"command", params.command},
      {"list_fingerprint", fingerprint},
      {"params_hash", params.hash},
      {"inputs", plan_state().listed},
      {"outputs", totals.written},
      {"failed", totals.failed},
      {"skipped", totals.skipped},
      {"status", status},
      {"started", started},
      {"finished", now_text()},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
  try {
    write_atomically(marker, dump(done));
  } catch (const std::exception& e) {
    to_stderr("rsz: " + printable(e.what()) + "\n");
    return kExitFailed;
  }
  return status;
}

}  // namespace rsz::app

// ---- the plan and merge commands ----
namespace rsz::app {

namespace {

// "3,7-9": the shard numbers in Slurm's --array syntax.
std::string array_syntax(const std::vector<std::int64_t>& shards) {
  std::string text;
  for (std::size_t i = 0; i < shards.size();) {
    std::size_t j = i;
    while (j + 1 < shards.size() && shards[j + 1] == shards[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(shards[i]);
    if (j > i) text += "-" + std::to_string(shards[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace

void setup_plan(CLI::App& app, PlanOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "List the inputs once and split them into N shard lists for rsz <command> --plan STATE --shard I");
  cmd->add_option("-i,--input,inputs", o.inputs, "Input images or .npy tensors: files, folders or quoted globs")
      ->required();
  cmd->add_flag("-r,--recursive", o.recursive, "Descend into sub-folders of input folders");
  cmd->add_flag("--hidden", o.hidden, "Also take files and folders whose names start with '.'");
  cmd->add_option("--shards", o.shards, "Number of shards N (shard I holds the inputs whose key hashes to I mod N)")
      ->required()
      ->check(whole_number(1, 1000000));
  cmd->add_option("-o,--output", o.output,
                  "State folder to create: plan.json and shards/00000.txt ... (one input per line); shards write "
                  "params.json and done/ markers there")
      ->required();
  cmd->add_flag("-q,--quiet", o.quiet, "No summary");
  cmd->footer("Examples:\n  rsz plan -i photos/ -r --shards 64 -o state/\n"
              "  rsz thumbnail --plan state/ --shard $SLURM_ARRAY_TASK_ID -o 'thumbs/{relpath}{ext}' --size 256\n"
              "  rsz merge state/");
}

int run_plan(const PlanOptions& o) {
  const fs::path state(o.output);
  std::error_code ec;
  if (fs::exists(state / "plan.json", ec)) {
    usage_error("-o " + o.output + ": holds a plan already (plan.json); remove the folder or give another -o");
  }
  const fs::path lists = state / "shards";
  fs::remove_all(lists, ec);  // what a plan stopped halfway left
  fs::create_directories(lists, ec);
  if (ec) usage_error("-o " + o.output + ": cannot create the folder " + lists.string() + ": " + ec.message());
  const auto n = static_cast<std::size_t>(o.shards);
  std::vector<std::string> pending(n);
  std::vector<Fnv> fingerprints(n);
  std::vector<std::int64_t> counts(n, 0);
  std::size_t buffered = 0;
  const auto flush = [&](bool create) {
    for (std::size_t i = 0; i < n; ++i) {
      if (pending[i].empty() && !create) continue;
      const std::string path = list_path(o.output, static_cast<std::int64_t>(i));
      std::ofstream out(path, std::ios::binary | (create ? std::ios::trunc : std::ios::app));
      out << pending[i];
      if (!out) throw Error(ErrorCode::Io, path + ": cannot write the shard list");
      pending[i].clear();
    }
    buffered = 0;
  };
  flush(true);
  std::int64_t total = 0;
  constexpr std::size_t kBuffered = std::size_t{8} << 20;  // lists are written as the walk goes, 8 MiB at a time
  for_each_input(o.inputs, o.recursive, o.hidden, [&](const std::string& path, const std::string& dir,
                                                      const std::string& key) {
    const std::string line = escape_field(path) + (dir.empty() ? "" : "\t" + escape_field(dir)) + "\n";
    const auto shard = static_cast<std::size_t>(shard_of_key(key, o.shards));
    pending[shard] += line;
    fingerprints[shard].add(line);
    ++counts[shard];
    ++total;
    buffered += line.size();
    if (buffered > kBuffered) flush(false);
  });
  flush(false);
  nlohmann::json prints = nlohmann::json::array();
  for (const Fnv& f : fingerprints) prints.push_back(hex64(f.hash));
  const nlohmann::json plan = {{"rsz_plan", 1},
                               {"shards", o.shards},
                               {"inputs", o.inputs},
                               {"recursive", o.recursive},
                               {"hidden", o.hidden},
                               {"total", total},
                               {"counts", counts},
                               {"fingerprints", prints},
                               {"created", now_text()}};
  write_atomically((state / "plan.json").string(), dump(plan));
  if (!o.quiet) {
    const auto [low, high] = std::minmax_element(counts.begin(), counts.end());
    to_stderr("rsz: planned " + std::to_string(total) + " input" + (total == 1 ? "" : "s") + " in " +
              std::to_string(o.shards) + " shard" + (o.shards == 1 ? "" : "s") + " (" + std::to_string(*low) +
              " to " + std::to_string(*high) + " a shard) under " + printable(o.output) + "\n");
  }
  return kExitOk;
}

void setup_merge(CLI::App& app, MergeOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "merge", "Check the shards of a plan: totals, and the missing or failed ones in Slurm's --array syntax");
  cmd->add_option("state", o.state, "The plan's state folder (rsz plan -o)")->required();
  cmd->add_flag("--json", o.json, "Print the report as one JSON object on stdout");
  cmd->footer("Exit status: 0 when every shard finished with no failed input, 1 otherwise.\n"
              "Example:\n  rsz merge state/ || sbatch --array=$(rsz merge state/ --json | jq -r .rerun) job.sh");
}

int run_merge(const MergeOptions& o) {
  const nlohmann::json plan = read_plan(o.state);
  const auto shards = plan["shards"].get<std::int64_t>();
  std::string pinned;
  std::error_code ec;
  const std::string params_path = (fs::path(o.state) / "params.json").string();
  if (fs::is_regular_file(params_path, ec)) pinned = read_json(params_path).value("hash", std::string());
  std::vector<std::int64_t> missing;
  std::vector<std::int64_t> failed;
  std::int64_t inputs = 0, outputs = 0, failed_inputs = 0, skipped = 0;
  double seconds = 0;
  std::string first_start;
  std::string last_end;
  for (std::int64_t i = 0; i < shards; ++i) {
    const std::string path = marker_path(o.state, i);
    nlohmann::json done;
    try {
      if (!fs::is_regular_file(path, ec)) throw Error(ErrorCode::Io, "absent");
      done = read_json(path);
    } catch (const Error&) {
      missing.push_back(i);
      continue;
    }
    // A marker of another list or other parameters is not this plan's: the shard is still to run.
    if (done.value("list_fingerprint", std::string()) !=
            plan["fingerprints"][static_cast<std::size_t>(i)].get<std::string>() ||
        done.value("params_hash", std::string()) != pinned) {
      missing.push_back(i);
      continue;
    }
    inputs += done.value("inputs", std::int64_t{0});
    outputs += done.value("outputs", std::int64_t{0});
    failed_inputs += done.value("failed", std::int64_t{0});
    skipped += done.value("skipped", std::int64_t{0});
    seconds += done.value("seconds", 0.0);
    const std::string started = done.value("started", std::string());
    const std::string finished = done.value("finished", std::string());
    if (first_start.empty() || started < first_start) first_start = started;
    if (finished > last_end) last_end = finished;
    if (done.value("failed", 1) != 0 || done.value("status", 1) != 0) failed.push_back(i);
  }
  std::vector<std::int64_t> rerun = missing;
  rerun.insert(rerun.end(), failed.begin(), failed.end());
  std::sort(rerun.begin(), rerun.end());
  const std::int64_t finished = shards - static_cast<std::int64_t>(rerun.size());
  if (o.json) {
    const nlohmann::json report = {{"shards", shards},
                                   {"done", finished},
                                   {"missing", missing},
                                   {"failed", failed},
                                   {"rerun", array_syntax(rerun)},
                                   {"inputs", inputs},
                                   {"outputs", outputs},
                                   {"failed_inputs", failed_inputs},
                                   {"skipped", skipped},
                                   {"seconds", seconds},
                                   {"started", first_start},
                                   {"finished", last_end}};
    std::cout << report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::ostringstream s;
    s.precision(3);
    s << "rsz: " << finished << " of " << shards << " shards done";
    if (!missing.empty()) s << "; " << missing.size() << " missing";
    if (!failed.empty()) s << "; " << failed.size() << " failed";
    s << "\nrsz: " << inputs << " inputs, " << outputs << " files written, " << skipped << " skipped (outputs "
      << "existed), " << failed_inputs << " failed; " << seconds << " s of shard time";
    if (!first_start.empty()) s << ", " << first_start << " to " << last_end;
    s << "\n";
    if (!missing.empty()) s << "rsz: missing shards (no marker): --array=" << array_syntax(missing) << "\n";
    if (!failed.empty()) s << "rsz: failed shards (an input failed): --array=" << array_syntax(failed) << "\n";
    if (!rerun.empty()) s << "rsz: to run again: --array=" << array_syntax(rerun) << "\n";
    std::cout << s.str() << std::flush;
  }
  return rerun.empty() ? kExitOk : kExitFailed;
}

}  // namespace rsz::app
