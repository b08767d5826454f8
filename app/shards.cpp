// Shards: one job split over machines (Slurm job arrays, Kubernetes Indexed Jobs, GNU parallel). Each input's shard is
// a stable hash of its key, so the union of shards 0..N-1 is the whole job, disjoint, and adding inputs never moves
// an existing input to another shard.
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

#include "commands.h"
#include "common.h"
#include "pipeline_internal.h"
#include "rsz/error.h"
#include "rsz/io/temporary_files.h"

namespace fs = std::filesystem;

namespace rsz::app {

namespace {

using Fnv = io::Fnv1a64;
using io::fnv1a64;

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
  detail::input_keys()[input] = detail::key_below(input, root.empty() ? fs::path(".") : fs::path(root));
}

std::int64_t shard_of_key(const std::string& key, std::int64_t count) { return io::shard_of(key, count); }

void parse_shard_option(const std::string& text, const std::string& what, std::int64_t& index, std::int64_t& count) {
  std::int64_t i = 0;
  std::int64_t n = 0;
  if (!parse_shard(text, i, n) || (text.find('/') != std::string::npos && n < 1)) {
    usage_error(what + " " + printable(text) + ": not a shard; I/N (0-based shard I of N, e.g. 3/16) or, with --plan, "
                "I is allowed");
  }
  if (n > 0 && i >= n) {
    usage_error(what + " " + printable(text) + ": shard " + std::to_string(i) + " of " + std::to_string(n) +
                " does not exist; 0 to " + std::to_string(n - 1) + " is allowed (shards count from 0)");
  }
  index = i;
  count = n;
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

// A shard list's line: the path with '\\', newline, carriage return and tab escaped, then a tab and its {dir} (empty
// for an input named alone or by a plain pattern), then a tab and its key (the path below -i without extension: the
// sample key of a .tar output). Lists of earlier plans have no key (and no tab where {dir} is empty): the key is then
// {dir}/stem.
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

// A new file beside `path` under a name no other writer has: mkstemp (O_CREAT | O_EXCL with a random suffix, tried
// again on a clash), never a name made of the PID, which is 1 in every container of a Kubernetes Job. Removed when
// the object dies unless committed; nobody else ever opens it, so it is written and never truncated under a reader.
class TempFile {
 public:
  explicit TempFile(const std::string& path) : path_(path) {
    const fs::path folder = fs::path(path).parent_path();
    std::error_code ec;
    if (!folder.empty()) fs::create_directories(folder, ec);
    if (ec) throw Error(ErrorCode::Io, folder.string() + ": cannot create the folder: " + ec.message());
    name_ = (folder / ("." + fs::path(path).filename().string() + ".tmp-XXXXXX")).string();
    fd_ = ::mkstemp(name_.data());
    if (fd_ < 0) throw Error(ErrorCode::Io, path + ": cannot create a temporary file beside it: " + std::strerror(errno));
    ::fchmod(fd_, 0644);  // mkstemp's 0600 would keep the state from the other users of a shared folder
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!name_.empty()) ::unlink(name_.c_str());
  }
  void write(const char* data, std::size_t size) { write_all(fd_, data, size, name_); }
  void write(const std::string& text) { write(text.data(), text.size()); }
  // Synced and closed: ready to take its name.
  void finish() {
    if (::fsync(fd_) != 0 && errno != EINVAL) fail(name_, "cannot write the file");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(name_, "cannot write the file");
  }
  // Replaces `path` at once (rename): readers see the old file or the new one.
  void replace() {
    finish();
    if (std::rename(name_.c_str(), path_.c_str()) != 0) fail(path_, "cannot write the file");
    name_.clear();
  }
  // Gives `path` this file only where none exists (link); false when one did. Storage without hard links (EPERM,
  // ENOTSUP, EXDEV, EMLINK) gets `text` written to a file made with O_CREAT | O_EXCL instead: the first writer still
  // wins, and its readers wait out the moment it is being written (read_json_settled).
  bool create(const std::string& text) {
    finish();
    if (::link(name_.c_str(), path_.c_str()) == 0) return true;
    const int err = errno;
    if (err == EEXIST) return false;
    if (err != EPERM && err != ENOTSUP && err != EOPNOTSUPP && err != EXDEV && err != EMLINK) {
      errno = err;
      fail(path_, "cannot create the file");
    }
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (errno == EEXIST) return false;
      fail(path_, "cannot create the file");
    }
    try {
      write_all(fd, text.data(), text.size(), path_);
      if (::fsync(fd) != 0 && errno != EINVAL) fail(path_, "cannot write the file");
    } catch (...) {
      ::close(fd);
      ::unlink(path_.c_str());
      throw;
    }
    ::close(fd);
    return true;
  }

 private:
  [[noreturn]] static void fail(const std::string& path, const std::string& what) {
    throw Error(ErrorCode::Io, path + ": " + what + ": " + std::strerror(errno));
  }
  static void write_all(int fd, const char* data, std::size_t size, const std::string& name) {
    while (size > 0) {
      const ssize_t n = ::write(fd, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(name, "cannot write the file");
      data += n;
      size -= static_cast<std::size_t>(n);
    }
  }

  std::string path_;
  std::string name_;
  int fd_ = -1;
};

// Writes `text` to `path` through a temporary file in its folder: readers see the old file or the new, never a part.
// With `exclusive`, the file is only made where none exists; false when one did.
bool write_atomically(const std::string& path, const std::string& text, bool exclusive = false) {
  TempFile temp(path);
  temp.write(text);
  if (exclusive) return temp.create(text);
  temp.replace();
  return true;
}

nlohmann::json read_json(const std::string& path) {
  try {
    return nlohmann::json::parse(read_whole(path));
  } catch (const nlohmann::json::exception& e) {
    std::string why = e.what();  // "[json.exception.parse_error.101] parse error at ...": the library's tag dropped
    if (why.rfind("[json.exception.", 0) == 0 && why.find("] ") != std::string::npos) why = why.substr(why.find("] ") + 2);
    throw Error(ErrorCode::InvalidArgument, path + ": not valid JSON (" + why + ")");
  }
}

// A file another shard may be making on storage without hard links (TempFile::create): read again, for up to 5 s,
// while it is not yet valid JSON.
nlohmann::json read_json_settled(const std::string& path) {
  for (int attempt = 0;; ++attempt) {
    try {
      return read_json(path);
    } catch (const Error&) {
      if (attempt == 50) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::string dump(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

// What was read of a plan for this run.
struct detail::PlanState {
  std::string folder;
  std::int64_t shards = 0;
  std::int64_t index = -1;
  std::int64_t total = 0;   // inputs of the whole plan
  std::int64_t listed = 0;  // inputs of this shard
  std::string fingerprint;  // of this shard's list
  nlohmann::json same_name;  // plan.json's "same_name": two inputs of one name in different folders, or null
  bool names_checked = false;  // the whole job's output names were checked (annotations that name their images)
  // A plan of an earlier rsz (no "id"): its shards keep hashing keys as they were ('.' not made '_'), so that images
  // its shards pick from annotations stay in the shard they started in; its lists' keys are the file stems.
  bool legacy = false;
};

namespace {

using detail::PlanState;

PlanState& plan_state() {
  detail::RunState& run = detail::current_run();
  const std::lock_guard<std::mutex> lock(run.slots_mutex);
  if (!run.plan) run.plan = std::make_shared<PlanState>();
  return *run.plan;
}

// plan.json of `state`: a usage error naming the folder when it is missing or not a plan.
// plan.json's "same_name" object as rsz plan writes it.
bool same_name_shape(const nlohmann::json& v) {
  return v.is_object() && v.contains("name") && v["name"].is_string() && v.contains("count") &&
         v["count"].is_number_integer() && v.contains("paths") && v["paths"].is_array() &&
         std::all_of(v["paths"].begin(), v["paths"].end(), [](const nlohmann::json& x) { return x.is_string(); });
}

// A done marker as rsz writes it (every field merge and a shard read, of its type); nullopt for anything else: a file
// that is missing, unreadable, truncated, or of another shape. Such a marker is no marker: merge lists its shard to
// run again, and the shard's run replaces it.
std::optional<nlohmann::json> read_marker(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  nlohmann::json done;
  try {
    done = read_json(path);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (!done.is_object()) return std::nullopt;
  for (const char* key : {"list_fingerprint", "params_hash", "started", "finished"}) {
    if (!done.contains(key) || !done[key].is_string()) return std::nullopt;
  }
  for (const char* key : {"inputs", "outputs", "written", "kept", "failed", "skipped", "status"}) {
    if (!done.contains(key) || !done[key].is_number_integer()) return std::nullopt;
  }
  if (!done.contains("seconds") || !done["seconds"].is_number()) return std::nullopt;
  if (done.contains("manifests")) {
    if (!done["manifests"].is_array()) return std::nullopt;
    for (const auto& m : done["manifests"]) {
      if (!m.is_object() || !m.contains("given") || !m["given"].is_string() || !m.contains("written") ||
          !m["written"].is_string()) {
        return std::nullopt;
      }
    }
  }
  return done;
}

// STATE/params.json as rsz writes it: an object with "hash" and "output" strings and "params", a list of strings.
// Anything else is refused (exit 2), naming the file.
nlohmann::json read_params(const std::string& path) {
  nlohmann::json pinned;
  try {
    pinned = read_json_settled(path);
  } catch (const Error& e) {
    usage_error(std::string(e.what()) + "; remove it and run a shard again to pin the parameters");
  }
  const auto is_list_of_strings = [](const nlohmann::json& v) {
    return v.is_array() && std::all_of(v.begin(), v.end(), [](const nlohmann::json& x) { return x.is_string(); });
  };
  if (!pinned.is_object() || !pinned.contains("hash") || !pinned["hash"].is_string() ||
      !pinned.contains("params") || !is_list_of_strings(pinned["params"]) ||
      (pinned.contains("output") && !pinned["output"].is_string())) {
    usage_error(path + ": not the parameters rsz pins (an object with \"hash\", \"params\" and \"output\"); "
                "remove it and run a shard again to pin the parameters");
  }
  return pinned;
}

// plan.json's "id" (16 hex digits; "" for a plan of an earlier rsz, which has none): the tag of its shards'
// temporary files (.NAME.tmp-ID-PID-N), by which merge --clean knows them. Anything else is refused, naming the file.
std::string plan_id_of(const nlohmann::json& plan, const std::string& path) {
  if (!plan.contains("id")) return "";
  const nlohmann::json& id = plan["id"];
  if (!id.is_string() || id.get<std::string>().size() != 16 ||
      !std::all_of(id.get_ref<const std::string&>().begin(), id.get_ref<const std::string&>().end(),
                   [](unsigned char c) { return std::isxdigit(c) != 0; })) {
    usage_error(path + ": \"id\" is not a plan id (16 hex digits, as rsz plan writes it); write the plan again");
  }
  return id.get<std::string>();
}

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
  const auto shards = plan["shards"].get<std::int64_t>();
  const bool prints = std::all_of(plan["fingerprints"].begin(), plan["fingerprints"].end(),
                                  [](const nlohmann::json& f) { return f.is_string(); });
  if (shards < 1 || !prints || (plan.contains("total") && !plan["total"].is_number_integer()) ||
      (plan.contains("same_name") && !plan["same_name"].is_null() && !same_name_shape(plan["same_name"]))) {
    usage_error(path + ": not a plan written by rsz plan (\"shards\" >= 1, a fingerprint string per shard, a whole "
                "\"total\"); write the plan again");
  }
  plan_id_of(plan, path);  // refused here when malformed
  return plan;
}

// The checks of --plan STATE --shard I (or I/N, N the plan's): -i is refused, --shard needed, and the shard must be
// one of the plan's. The plan.
nlohmann::json checked_plan(const std::string& state, bool inputs_given, std::int64_t index, std::int64_t count) {
  if (inputs_given) usage_error("--plan " + state + ": the inputs come from the plan's shard list; drop -i");
  if (index < 0) usage_error("--plan " + state + ": give --shard I, the shard of the plan to run");
  nlohmann::json plan = read_plan(state);
  const auto shards = plan["shards"].get<std::int64_t>();
  if (count > 0 && count != shards) {
    usage_error("--shard " + std::to_string(index) + "/" + std::to_string(count) + ": the plan " + state + " has " +
                std::to_string(shards) + " shards; give --shard I alone");
  }
  if (index >= shards) {
    usage_error("--shard " + std::to_string(index) + ": the plan " + state + " has " + std::to_string(shards) +
                " shard" + (shards == 1 ? "" : "s") + "; 0 to " + std::to_string(shards - 1) + " is allowed");
  }
  return plan;
}

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

// The parameters of a parsed command. Reads the files the options name (streaming), so it is only called with --plan.
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

Params params_of(const CLI::App& command) {
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
    lines.insert(key + "=" + canonical_value(key, line.substr(eq + 1)));
    static const std::set<std::string> files = {"config", "rois", "names", "batch-indices", "batch"};
    if (files.count(key) == 0) continue;
    // The file's bytes (a VOC or YOLO folder's files): a config changed between shards changes the outputs as a flag
    // does.
    for (const CLI::Option* option : command.get_options()) {
      if (option->get_single_name() != key || option->count() == 0) continue;
      try {
        if (const std::string hash = contents_hash(option->as<std::string>()); !hash.empty()) {
          lines.insert(key + " contents=" + hash);
        }
      } catch (const Error&) {
      }
    }
  }
  // rsz run: the files a batch file's steps name (ROIs, class names) by their contents too, as the flags' are.
  if (params.command == "run") {
    const CLI::Option* batch = command.get_option_no_throw("batch");
    try {
      if (batch != nullptr && batch->count() > 0) {
        const io::BatchFile file = io::read_batch_file(batch->as<std::string>());
        for (std::size_t i = 0; i < file.steps.size(); ++i) {
          const io::BatchStep& step = file.steps[i];
          for (const auto& [key, path] : {std::pair<const char*, const std::string&>{"rois", step.rois_path},
                                          std::pair<const char*, const std::string&>{"names", step.names_path}}) {
            const std::string hash = path.empty() ? "" : contents_hash(path);
            if (!hash.empty()) lines.insert("steps[" + std::to_string(i) + "]." + key + " contents=" + hash);
          }
        }
      }
    } catch (const Error&) {  // a batch file that cannot be read is refused by the run itself
    }
  }
  const CLI::Option* output = command.get_option_no_throw("--output");
  if (output != nullptr && output->count() > 0) {
    params.output = output->as<std::string>();
  } else if (params.command == "run") {
    const CLI::Option* batch = command.get_option_no_throw("batch");
    try {
      if (batch != nullptr && batch->count() > 0) params.output = io::read_batch_file(batch->as<std::string>()).output_dir;
    } catch (const Error&) {
    }
  }
  Fnv fnv;
  for (const std::string& line : lines) fnv.add(line + "\n");
  params.lines.assign(lines.begin(), lines.end());
  params.hash = hex64(fnv.value());
  return params;
}

}  // namespace

std::vector<std::string> plan_shard_inputs(const CommonOptions& options) {
  const std::string& state = options.plan;
  const nlohmann::json plan = checked_plan(state, !options.inputs.empty(), options.shard_index, options.shard_count);
  const auto shards = plan["shards"].get<std::int64_t>();
  const std::string path = list_path(state, options.shard_index);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) usage_error(path + ": the shard list is missing; write the plan again");
  const std::string text = read_whole(path);
  Fnv fnv;
  fnv.add(text);
  const std::string fingerprint = hex64(fnv.value());
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
    const std::size_t tab2 = tab == std::string::npos ? tab : line.find('\t', tab + 1);
    const std::string dir =
        tab == std::string::npos ? "" : unescape_field(line.substr(tab + 1, tab2 - (tab + 1)), where);
    if (!dir.empty()) detail::input_dirs()[input] = dir;
    // The key the plan hashed: a sample's key keeps its folders, as without --plan. A list of an earlier rsz has
    // none: its samples keep the stem as their key, as its other shards named them.
    if (tab2 != std::string::npos) detail::input_keys()[input] = unescape_field(line.substr(tab2 + 1), where);
    inputs.push_back(input);
  }
  PlanState& s = plan_state();
  s.folder = state;
  s.shards = shards;
  s.index = options.shard_index;
  s.total = plan.value("total", std::int64_t{0});
  s.listed = static_cast<std::int64_t>(inputs.size());
  s.fingerprint = fingerprint;
  s.same_name = plan.contains("same_name") ? plan["same_name"] : nlohmann::json();
  s.legacy = !plan.contains("id");
  return inputs;
}

std::vector<Job> plan_shard_of_named_images(std::vector<Job> jobs, const CommonOptions& options) {
  if (options.plan.empty()) return jobs;
  PlanState& s = plan_state();
  // Every shard sees every image the annotations name: the whole job's output names are checked here, exactly.
  std::vector<std::string> inputs;
  for (const Job& job : jobs) inputs.push_back(job.input);
  check_jobs(inputs, jobs, {});
  s.names_checked = true;
  std::vector<Job> kept;
  std::set<std::string> images;
  std::set<std::string> all;
  for (Job& job : jobs) {
    all.insert(job.input);
    const std::string key = shard_key(job.input);
    const std::int64_t shard = s.legacy ? static_cast<std::int64_t>(fnv1a64(key) % static_cast<std::uint64_t>(s.shards))
                                        : shard_of_key(key, s.shards);
    if (shard != s.index) continue;
    images.insert(job.input);
    kept.push_back(std::move(job));
  }
  s.total = static_cast<std::int64_t>(all.size());
  s.listed = static_cast<std::int64_t>(images.size());
  return kept;
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
  // A shard checks the names of its own inputs only. Two inputs of one name in different folders have different keys,
  // so they may fall in different shards, where outputs named without the folder would be the same file (the second
  // shard would keep the first's output as its own): refused unless the names hold the folder ({relpath}, {dir}) or
  // the outputs are tar members (keyed by path). rsz run's step templates have no {relpath}: such a plan is refused.
  const std::string& output = options.output;
  const bool by_folder = output.find("{relpath}") != std::string::npos || output.find("{dir}") != std::string::npos;
  if (s.same_name.is_object() && !by_folder && !tar_output_on() && !s.names_checked) {
    const auto paths = s.same_name.value("paths", std::vector<std::string>{});
    const auto count = s.same_name.value("count", std::int64_t{0});
    usage_error("-o " + output + ": the plan has inputs of one name in different folders (" +
                printable(paths.size() == 2 ? paths[0] + " and " + paths[1] : s.same_name.value("name", "")) + "; " +
                std::to_string(count) + (count == 1 ? " name is" : " names are") +
                " shared), which other shards may write to the same output files; name outputs by folder "
                "({relpath} in -o, e.g. -o 'out/{relpath}{ext}'), or plan such folders apart");
  }
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

namespace detail {

void set_input_below(const std::string& input, const std::string& root) {
  const fs::path file(input);
  const std::string dir = file.parent_path().lexically_relative(root).string();
  input_dirs()[input] = dir == "." || dir.rfind("..", 0) == 0 ? "" : dir;
  input_keys()[input] = key_below(file, root);
}

}  // namespace detail

int run_command(const CLI::App& command, const std::function<int()>& run) {
  const CLI::Option* plan_option = command.get_option_no_throw("--plan");
  const CLI::Option* dry_run = command.get_option_no_throw("--dry-run");
  if (plan_option == nullptr || plan_option->count() == 0 || (dry_run != nullptr && dry_run->count() > 0)) {
    return run();
  }
  const std::string state = plan_option->as<std::string>();
  const CLI::Option* input_option = command.get_option_no_throw("--input");
  const CLI::Option* shard_option = command.get_option_no_throw("--shard");
  std::int64_t index = -1;
  std::int64_t count = 0;
  if (shard_option != nullptr && shard_option->count() > 0) parse_shard(shard_option->as<std::string>(), index, count);
  const nlohmann::json plan =
      checked_plan(state, input_option != nullptr && input_option->count() > 0, index, count);
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
  detail::run_totals() = {};
  const std::string started = now_text();
  const auto start = std::chrono::steady_clock::now();
  const int status = run();
  this_run.before_writing = nullptr;
  const detail::RunTotals& totals = detail::run_totals();
  nlohmann::json manifests = nlohmann::json::array();
  for (const auto& [given, written] : totals.manifests) manifests.push_back({{"given", given}, {"written", written}});
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& [input, error] : totals.failures) failures.push_back({{"input", input}, {"error", error}});
  const nlohmann::json done = {
      {"shard", index},
      {"shards", shards},
      {"command", parameters().command},
      {"list_fingerprint", fingerprint},
      {"params_hash", parameters().hash},
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
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
  try {
    write_atomically(marker, dump(done));
  } catch (const std::exception& e) {
    to_stderr("rsz: " + printable(e.what()) + "\n");
    return kExitFailed;
  }
  return status;
}

std::string shard_manifest(const CommonOptions& options, const std::string& manifest) {
  if (options.plan.empty() || manifest.empty()) return manifest;
  const fs::path path(manifest);
  return (path.parent_path() / (path.stem().string() + "." + shard_name(options.shard_index) +
                                path.extension().string()))
      .string();
}

}  // namespace rsz::app

// ---- the plan and merge commands ----
namespace rsz::app {

namespace {

// plan.json's "same_name": null, or the first name (without extension) that inputs in different folders share, two
// such inputs and how many names are shared, from the (name hash, key hash) pairs of the walk and the lists written.
nlohmann::json find_same_names(std::vector<std::pair<std::uint64_t, std::uint64_t>>& names, const std::string& state,
                               std::int64_t shards) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());  // one folder's a.jpg and a.png: one key
  std::set<std::uint64_t> shared;
  for (std::size_t i = 1; i < names.size(); ++i) {
    if (names[i].first == names[i - 1].first) shared.insert(names[i].first);
  }
  const std::size_t count = shared.size();
  names.clear();
  names.shrink_to_fit();
  if (count == 0) return nullptr;
  // Two paths of the first shared name in the lists' order.
  std::map<std::uint64_t, std::vector<std::string>> seen;
  for (std::int64_t i = 0; i < shards; ++i) {
    std::ifstream list(list_path(state, i), std::ios::binary);
    for (std::string line; std::getline(list, line);) {
      const std::string path = unescape_field(line.substr(0, line.find('\t')), list_path(state, i));
      const std::uint64_t name = fnv1a64(fs::path(path).stem().string());
      if (shared.count(name) == 0) continue;
      std::vector<std::string>& paths = seen[name];
      paths.push_back(path);
      if (paths.size() == 2 && fs::path(paths[0]).parent_path() != fs::path(paths[1]).parent_path()) {
        return {{"name", fs::path(path).stem().string()}, {"paths", paths}, {"count", count}};
      }
      if (paths.size() == 2) paths.pop_back();
    }
  }
  return {{"name", ""}, {"paths", nlohmann::json::array()}, {"count", count}};
}

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
  // Only a new or empty folder: rsz never deletes files it did not make (a plan stopped halfway, which leaves no
  // plan.json, is removed by hand).
  if (fs::exists(state, ec) && !(fs::is_directory(state, ec) && fs::is_empty(state, ec))) {
    usage_error("-o " + o.output + ": exists and is not an empty folder; give a new folder for the plan's state");
  }
  const fs::path lists = state / "shards";
  const bool new_state = !fs::exists(state, ec);
  fs::create_directories(lists, ec);
  if (ec) usage_error("-o " + o.output + ": cannot create the folder " + lists.string() + ": " + ec.message());
  const auto n = static_cast<std::size_t>(o.shards);
  // A plan refused or failed before its plan.json (no input matched, a folder that cannot be listed) takes back what
  // it made, the lists and their folders, so that the corrected command runs (the folder was new or empty).
  struct Undo {
    const PlanOptions& o;
    fs::path state, lists;
    bool new_state;
    std::size_t shards;
    bool done = false;
    ~Undo() {
      if (done) return;
      std::error_code ec;
      for (std::size_t i = 0; i < shards; ++i) fs::remove(list_path(o.output, static_cast<std::int64_t>(i)), ec);
      fs::remove(lists, ec);  // only when empty
      if (new_state) fs::remove(state, ec);
    }
  } undo{o, state, lists, new_state, n};
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
  // (FNV-1a of the name without extension, of the key) of every input, 16 bytes each: two inputs of one name in
  // different folders are found after the walk (plan.json's "same_name"; a shard then refuses outputs named without
  // the folder).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> names;
  constexpr std::size_t kBuffered = std::size_t{8} << 20;  // lists are written as the walk goes, 8 MiB at a time
  for_each_input(o.inputs, o.recursive, o.hidden, [&](const std::string& path, const std::string& dir,
                                                      const std::string& key) {
    const std::string line = escape_field(path) + "\t" + escape_field(dir) + "\t" + escape_field(key) + "\n";
    const auto shard = static_cast<std::size_t>(shard_of_key(key, o.shards));
    pending[shard] += line;
    fingerprints[shard].add(line);
    ++counts[shard];
    ++total;
    names.emplace_back(fnv1a64(fs::path(path).stem().string()), fnv1a64(key));
    buffered += line.size();
    if (buffered > kBuffered) flush(false);
  });
  flush(false);
  nlohmann::json prints = nlohmann::json::array();
  for (const Fnv& f : fingerprints) prints.push_back(hex64(f.value()));
  const nlohmann::json same_name = find_same_names(names, o.output, o.shards);
  // The plan's id: its shards' temporary files carry it (merge --clean removes those and no other file).
  Fnv id;
  id.add(now_text());
  id.add(std::to_string(std::random_device{}()) + std::to_string(std::random_device{}()));
  for (const auto& print : prints) id.add(print.get<std::string>());
  char id_text[20];
  std::snprintf(id_text, sizeof id_text, "%016llx", static_cast<unsigned long long>(id.value()));
  const nlohmann::json plan = {{"rsz_plan", 1},
                               {"id", id_text},
                               {"shards", o.shards},
                               {"inputs", o.inputs},
                               {"recursive", o.recursive},
                               {"hidden", o.hidden},
                               {"total", total},
                               {"counts", counts},
                               {"fingerprints", prints},
                               {"same_name", same_name},
                               {"created", now_text()}};
  write_atomically((state / "plan.json").string(), dump(plan));
  undo.done = true;
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
  cmd->add_flag("--clean", o.clean,
                "Remove the temporary files killed shards of this plan left: those of its state files, and those "
                "below the output folder the shards were run with that carry the plan's id (.NAME.tmp-ID-PID-N); "
                "no other file. Only files untouched for a minute (a running shard's are seconds old)");
  cmd->footer("Once every shard is done, the shards' roi-align manifests (m.00000.jsonl ...) are joined into the "
              "name given to --manifest, in shard order (a .csv's header once); relative names are taken from "
              "the folder merge runs in, as the shards took them.\n"
              "Exit status: 0 when every shard finished with no failed input, 1 otherwise.\n"
              "Example:\n  rsz merge state/ || sbatch --array=$(rsz merge state/ --json | jq -r .rerun) job.sh");
}

namespace {

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// Whether `name` is a temporary file of the shards of the plan `id` beside an output: ".NAME.tmp-ID-PID-N" (io's
// temporary names under io::set_temporary_tag). No other file is, whatever its name looks like.
bool is_shard_temporary(const std::string& name, const std::string& id) {
  const std::string mark = ".tmp-" + id + "-";
  const std::size_t at = name.rfind(mark);
  if (id.empty() || name.size() < 2 || name[0] != '.' || at == std::string::npos || at < 2) return false;
  const std::string tail = name.substr(at + mark.size());
  const std::size_t dash = tail.find('-');
  return dash != std::string::npos && all_digits(tail.substr(0, dash)) && all_digits(tail.substr(dash + 1));
}

// Whether `name`, in the state folder (`in_done`: its done/ folder), is the temporary file of a state file that
// rsz writes there: ".plan.json.tmp-XXXXXX" or ".params.json.tmp-XXXXXX", or ".NNNNN.json.tmp-XXXXXX" in done/
// (TempFile's mkstemp names).
bool is_state_temporary(const std::string& name, bool in_done) {
  const std::size_t at = name.rfind(".tmp-");
  if (name.size() < 2 || name[0] != '.' || at == std::string::npos || name.size() != at + 11) return false;
  const std::string target = name.substr(1, at - 1);
  const std::string random = name.substr(at + 5);
  if (!std::all_of(random.begin(), random.end(), [](unsigned char c) { return std::isalnum(c) != 0; })) return false;
  if (!in_done) return target == "plan.json" || target == "params.json";
  // Markers are named by the shard in 5 digits or more (shard_name).
  return target.size() >= 10 && target.compare(target.size() - 5, 5, ".json") == 0 &&
         all_digits(target.substr(0, target.size() - 5));
}

// The folder below which a -o value's files go: a template's folders up to its first placeholder, a folder, or a
// file's folder.
fs::path output_folder(const std::string& output) {
  const std::size_t brace = output.find('{');
  std::string fixed = output.substr(0, brace);
  if (brace != std::string::npos || (!fixed.empty() && fixed.back() != '/')) {
    std::error_code ec;
    if (brace != std::string::npos || !fs::is_directory(fixed, ec)) fixed = fs::path(fixed).parent_path().string();
  }
  return fixed.empty() ? fs::path(".") : fs::path(fixed);
}

// merge --clean: removes the temporary files of the plan's own shards below the pinned output folder (those tagged
// with the plan's id) and of the state files, that no one has touched for a minute; returns how many. A plan of an
// earlier rsz has no id: only its state files' temporaries are removed.
std::int64_t clean_temporaries(const std::string& state) {
  const std::string id = plan_id_of(read_plan(state), (fs::path(state) / "plan.json").string());
  const auto now = fs::file_time_type::clock::now();
  std::int64_t removed = 0;
  const auto remove_if_stale = [&](const fs::directory_entry& entry) {
    std::error_code ec;
    const auto modified = entry.last_write_time(ec);
    if (!ec && now - modified >= std::chrono::minutes(1) && fs::remove(entry.path(), ec)) ++removed;
  };
  std::error_code ec;
  for (const bool in_done : {false, true}) {
    const fs::path folder = in_done ? fs::path(state) / "done" : fs::path(state);
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code entry_ec;
      if (it->is_symlink(entry_ec) || !it->is_regular_file(entry_ec)) continue;
      if (is_state_temporary(it->path().filename().string(), in_done)) remove_if_stale(*it);
    }
    ec.clear();
  }
  const std::string params_path = (fs::path(state) / "params.json").string();
  if (id.empty() || !fs::is_regular_file(params_path, ec)) return removed;
  const nlohmann::json params = read_json_settled(params_path);
  const std::string output =
      params.is_object() && params.contains("output") && params["output"].is_string() ? params["output"].get<std::string>()
                                                                                      : "";
  if (output.empty() || output == "-") return removed;
  const fs::path folder = output_folder(output);
  if (!fs::is_directory(folder, ec)) return removed;
  for (auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code entry_ec;
    if (it->is_symlink(entry_ec) || !it->is_regular_file(entry_ec)) continue;
    if (is_shard_temporary(it->path().filename().string(), id)) remove_if_stale(*it);
  }
  return removed;
}

// Joins the shards' manifests into `target`, in shard order, through a temporary file: a .csv's header once (the
// widest: a shard that left a box out has the "skipped" column, and the rows of the others get an empty one). The
// number of rows.
std::int64_t join_manifests(const std::string& target, const std::vector<std::string>& parts) {
  const std::string ext = io::lower_extension(target);
  const bool csv = ext == ".csv";
  std::vector<std::string> headers(parts.size());
  std::string header;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::ifstream in(parts[i], std::ios::binary);
    if (!in) throw Error(ErrorCode::Io, parts[i] + ": cannot read the shard's manifest");
    if (csv) std::getline(in, headers[i]);
    if (headers[i].size() > header.size()) header = headers[i];
  }
  TempFile out(target);
  if (csv) out.write(header + "\n");
  std::int64_t rows = 0;
  std::vector<char> chunk(std::size_t{64} << 10);
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::ifstream in(parts[i], std::ios::binary);
    std::string skip;
    if (csv) std::getline(in, skip);
    const bool pad = csv && headers[i] != header;  // no "skipped" column
    bool quoted = false;
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      const auto n = static_cast<std::size_t>(in.gcount());
      text.clear();
      for (std::size_t k = 0; k < n; ++k) {
        const char c = chunk[k];
        if (csv && c == '"') quoted = !quoted;
        if (c == '\n' && !quoted) {
          ++rows;
          if (pad) text += ',';
        }
        text += c;
      }
      out.write(text);
    }
    if (in.bad()) throw Error(ErrorCode::Io, parts[i] + ": cannot read the shard's manifest");
  }
  out.replace();
  return rows;
}

}  // namespace

int run_merge(const MergeOptions& o) {
  const nlohmann::json plan = read_plan(o.state);
  const std::int64_t cleaned = o.clean ? clean_temporaries(o.state) : 0;
  const auto shards = plan["shards"].get<std::int64_t>();
  std::string pinned;
  std::error_code ec;
  const std::string params_path = (fs::path(o.state) / "params.json").string();
  if (fs::is_regular_file(params_path, ec)) pinned = read_params(params_path)["hash"].get<std::string>();
  std::vector<std::int64_t> missing;
  std::vector<std::int64_t> failed;
  std::vector<std::string> unusable;  // markers rsz did not write as they are (truncated, another shape)
  nlohmann::json failures = nlohmann::json::array();  // the failed inputs the markers name
  std::int64_t inputs = 0, outputs = 0, written = 0, kept = 0, failed_inputs = 0, skipped = 0;
  double seconds = 0;
  std::string first_start;
  std::string last_end;
  std::vector<std::string> manifest_names;                   // as given, in the order first seen
  std::map<std::string, std::vector<std::string>> manifests;  // given -> the shards' files, in shard order
  for (std::int64_t i = 0; i < shards; ++i) {
    const std::string path = marker_path(o.state, i);
    const std::optional<nlohmann::json> marker = read_marker(path);
    if (!marker) {
      if (fs::exists(path, ec)) unusable.push_back(path);
      missing.push_back(i);
      continue;
    }
    const nlohmann::json& done = *marker;
    // A marker of another list or other parameters is not this plan's: the shard is still to run.
    if (done.value("list_fingerprint", std::string()) !=
            plan["fingerprints"][static_cast<std::size_t>(i)].get<std::string>() ||
        done.value("params_hash", std::string()) != pinned) {
      missing.push_back(i);
      continue;
    }
    inputs += done.value("inputs", std::int64_t{0});
    outputs += done.value("outputs", std::int64_t{0});
    written += done.value("written", std::int64_t{0});
    kept += done.value("kept", std::int64_t{0});
    failed_inputs += done.value("failed", std::int64_t{0});
    skipped += done.value("skipped", std::int64_t{0});
    seconds += done.value("seconds", 0.0);
    const std::string started = done.value("started", std::string());
    const std::string finished = done.value("finished", std::string());
    if (first_start.empty() || started < first_start) first_start = started;
    if (finished > last_end) last_end = finished;
    if (done.value("failed", 1) != 0 || done.value("status", 1) != 0) failed.push_back(i);
    if (done.contains("failures") && done["failures"].is_array()) {
      for (const auto& f : done["failures"]) {
        if (f.is_object() && f.contains("input") && f["input"].is_string() && f.contains("error") &&
            f["error"].is_string()) {
          failures.push_back({{"shard", i}, {"input", f["input"]}, {"error", f["error"]}});
        }
      }
    }
    if (done.contains("manifests") && done["manifests"].is_array()) {
      for (const auto& m : done["manifests"]) {
        const std::string given = m.value("given", std::string());
        const std::string file = m.value("written", std::string());
        if (given.empty() || file.empty()) continue;
        if (!manifests.count(given)) manifest_names.push_back(given);
        manifests[given].push_back(file);
      }
    }
  }
  std::vector<std::int64_t> rerun = missing;
  rerun.insert(rerun.end(), failed.begin(), failed.end());
  std::sort(rerun.begin(), rerun.end());
  const std::int64_t finished = shards - static_cast<std::int64_t>(rerun.size());
  // Every shard done: the shards' manifests joined into the name given.
  nlohmann::json joined = nlohmann::json::array();
  std::string manifest_error;
  if (rerun.empty()) {
    for (const std::string& given : manifest_names) {
      try {
        joined.push_back({{"path", given},
                          {"rows", join_manifests(given, manifests[given])},
                          {"shards", manifests[given].size()}});
      } catch (const Error& e) {
        manifest_error = e.what();
        break;
      }
    }
  }
  if (o.json) {
    const nlohmann::json report = {{"shards", shards},
                                   {"done", finished},
                                   {"missing", missing},
                                   {"failed", failed},
                                   {"rerun", array_syntax(rerun)},
                                   {"inputs", inputs},
                                   {"outputs", outputs},
                                   {"written", written},
                                   {"kept", kept},
                                   {"failed_inputs", failed_inputs},
                                   {"skipped", skipped},
                                   {"manifests", joined},
                                   {"cleaned", cleaned},
                                   {"unusable_markers", unusable},
                                   {"failures", failures},
                                   {"seconds", seconds},
                                   {"started", first_start},
                                   {"finished", last_end}};
    to_stdout(report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  } else {
    std::ostringstream s;
    s.precision(3);
    s << "rsz: " << finished << " of " << shards << " shards done";
    if (!missing.empty()) s << "; " << missing.size() << " missing";
    if (!failed.empty()) s << "; " << failed.size() << " failed";
    s << "\nrsz: " << inputs << " inputs (" << skipped << " skipped: their outputs existed; " << failed_inputs
      << " failed); " << outputs << " output files (" << written << " written by the shards' last runs, " << kept
      << " kept); " << seconds << " s of shard time";
    if (!first_start.empty()) s << ", " << first_start << " to " << last_end;
    s << "\n";
    if (o.clean) s << "rsz: removed " << cleaned << " temporary file" << (cleaned == 1 ? "" : "s") << " of killed runs\n";
    for (const auto& m : joined) {
      s << "rsz: manifest " << printable(m["path"].get<std::string>()) << ": " << m["rows"].get<std::int64_t>()
        << " rows from " << m["shards"].get<std::size_t>() << " shards\n";
    }
    for (const std::string& path : unusable) {
      s << "rsz: " << printable(path) << ": not a marker as rsz writes it (truncated or of another shape); its shard "
        << "runs again and replaces it\n";
    }
    if (!missing.empty()) s << "rsz: missing shards (no marker): --array=" << array_syntax(missing) << "\n";
    for (const auto& f : failures) {
      s << "rsz: shard " << f["shard"].get<std::int64_t>() << ": " << printable(f["error"].get<std::string>()) << "\n";
    }
    if (!failed.empty()) s << "rsz: failed shards (an input failed): --array=" << array_syntax(failed) << "\n";
    if (!rerun.empty()) s << "rsz: to run again: --array=" << array_syntax(rerun) << "\n";
    to_stdout(s.str());
  }
  if (!manifest_error.empty()) {
    to_stderr("rsz: " + printable(manifest_error) + "; the manifest is not joined\n");
    return kExitFailed;
  }
  return rerun.empty() ? kExitOk : kExitFailed;
}

}  // namespace rsz::app
