// rsz plan and rsz merge: a job's inputs split into shard lists, and the shards' markers checked and joined.
// (The command line registers their flags: app/cmd_plan.cpp.)
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

#include "plan_merge.h"
#include "pipeline_internal.h"
#include "rsz/error.h"
#include "rsz/io/temporary_files.h"

#include "shard_files.h"

namespace fs = std::filesystem;

namespace rsz::app {

using namespace shard_files;
using io::fnv1a64;
using Fnv = io::Fnv1a64;

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


namespace {

// STATE checked and made: only a new or empty folder (rsz never deletes files it did not make; a plan stopped halfway,
// which leaves no plan.json, is removed by hand). Whether it was new.
bool make_state_folder(const PlanOptions& o) {
  const fs::path state(o.output);
  std::error_code ec;
  if (fs::exists(state / "plan.json", ec)) {
    usage_error("-o " + o.output + ": holds a plan already (plan.json); remove the folder or give another -o");
  }
  if (fs::exists(state, ec) && !(fs::is_directory(state, ec) && fs::is_empty(state, ec))) {
    usage_error("-o " + o.output + ": exists and is not an empty folder; give a new folder for the plan's state");
  }
  const fs::path lists = state / "shards";
  const bool new_state = !fs::exists(state, ec);
  fs::create_directories(lists, ec);
  if (ec) usage_error("-o " + o.output + ": cannot create the folder " + lists.string() + ": " + ec.message());
  return new_state;
}

// A plan refused or failed before its plan.json (no input matched, a folder that cannot be listed) takes back what it
// made, the lists and their folders, so that the corrected command runs (the folder was new or empty).
struct UndoPlan {
  const PlanOptions& o;
  bool new_state;
  bool done = false;
  ~UndoPlan() {
    if (done) return;
    std::error_code ec;
    for (std::int64_t i = 0; i < o.shards; ++i) fs::remove(list_path(o.output, i), ec);
    fs::remove(fs::path(o.output) / "shards", ec);  // only when empty
    if (new_state) fs::remove(o.output, ec);
  }
};

// The shard lists written as the walk goes, 8 MiB at a time, with each list's fingerprint and count.
class ShardLists {
 public:
  explicit ShardLists(const PlanOptions& o)
      : o_(o), pending_(static_cast<std::size_t>(o.shards)), fingerprints_(pending_.size()), counts_(pending_.size()) {
    flush(true);
  }
  void add(std::size_t shard, const std::string& line) {
    pending_[shard] += line;
    fingerprints_[shard].add(line);
    ++counts_[shard];
    buffered_ += line.size();
    if (buffered_ > kBuffered) flush(false);
  }
  void flush(bool create) {
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      if (pending_[i].empty() && !create) continue;
      const std::string path = list_path(o_.output, static_cast<std::int64_t>(i));
      std::ofstream out(path, std::ios::binary | (create ? std::ios::trunc : std::ios::app));
      out << pending_[i];
      if (!out) throw Error(ErrorCode::Io, path + ": cannot write the shard list");
      pending_[i].clear();
    }
    buffered_ = 0;
  }
  nlohmann::json fingerprints() const {
    nlohmann::json prints = nlohmann::json::array();
    for (const Fnv& f : fingerprints_) prints.push_back(hex64(f.value()));
    return prints;
  }
  const std::vector<std::int64_t>& counts() const { return counts_; }

 private:
  static constexpr std::size_t kBuffered = std::size_t{8} << 20;
  const PlanOptions& o_;
  std::vector<std::string> pending_;
  std::vector<Fnv> fingerprints_;
  std::vector<std::int64_t> counts_;
  std::size_t buffered_ = 0;
};

// The plan's id: its shards' temporary files carry it (merge --clean removes those and no other file).
std::string new_plan_id(const nlohmann::json& prints) {
  Fnv id;
  id.add(now_text());
  id.add(std::to_string(std::random_device{}()) + std::to_string(std::random_device{}()));
  for (const auto& print : prints) id.add(print.get<std::string>());
  char id_text[20];
  std::snprintf(id_text, sizeof id_text, "%016llx", static_cast<unsigned long long>(id.value()));
  return id_text;
}

}  // namespace

int run_plan(const PlanOptions& o) {
  UndoPlan undo{o, make_state_folder(o)};
  ShardLists lists(o);
  std::int64_t total = 0;
  // (FNV-1a of the name without extension, of the key) of every input, 16 bytes each: two inputs of one name in
  // different folders are found after the walk (plan.json's "same_name"; a shard then refuses outputs named without
  // the folder).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> names;
  for_each_input(o.inputs, o.recursive, o.hidden, [&](const std::string& path, const std::string& dir,
                                                      const std::string& key) {
    const std::string line = escape_field(path) + "\t" + escape_field(dir) + "\t" + escape_field(key) + "\n";
    lists.add(static_cast<std::size_t>(shard_of_key(key, o.shards)), line);
    ++total;
    names.emplace_back(fnv1a64(fs::path(path).stem().string()), fnv1a64(key));
  });
  lists.flush(false);
  const nlohmann::json prints = lists.fingerprints();
  const nlohmann::json same_name = find_same_names(names, o.output, o.shards);
  const std::vector<std::int64_t>& counts = lists.counts();
  const nlohmann::json plan = {{"rsz_plan", 1},
                               {"id", new_plan_id(prints)},
                               {"shards", o.shards},
                               {"inputs", o.inputs},
                               {"recursive", o.recursive},
                               {"hidden", o.hidden},
                               {"total", total},
                               {"counts", counts},
                               {"fingerprints", prints},
                               {"same_name", same_name},
                               {"created", now_text()}};
  write_atomically((fs::path(o.output) / "plan.json").string(), dump(plan));
  undo.done = true;
  if (!o.quiet) {
    const auto [low, high] = std::minmax_element(counts.begin(), counts.end());
    to_stderr("rsz: planned " + std::to_string(total) + " input" + (total == 1 ? "" : "s") + " in " +
              std::to_string(o.shards) + " shard" + (o.shards == 1 ? "" : "s") + " (" + std::to_string(*low) +
              " to " + std::to_string(*high) + " a shard) under " + printable(o.output) + "\n");
  }
  return kExitOk;
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

namespace {

// What rsz merge found in a plan's markers.
struct MergeReport {
  std::int64_t shards = 0;
  std::vector<std::int64_t> missing;
  std::vector<std::int64_t> failed;
  std::vector<std::string> unusable;  // markers rsz did not write as they are (truncated, another shape)
  nlohmann::json failures = nlohmann::json::array();  // the failed inputs the markers name
  std::int64_t inputs = 0, outputs = 0, written = 0, kept = 0, failed_inputs = 0, skipped = 0, cleaned = 0;
  double seconds = 0;
  std::string first_start;
  std::string last_end;
  std::vector<std::string> manifest_names;                   // as given, in the order first seen
  std::map<std::string, std::vector<std::string>> manifests;  // given -> the shards' files, in shard order
  std::vector<std::int64_t> rerun;                           // missing and failed, sorted
  nlohmann::json joined = nlohmann::json::array();            // the manifests joined
  std::string manifest_error;
};

// Shard i's marker (of this plan's list and parameters) added to the report.
void add_marker(MergeReport& r, const nlohmann::json& done, std::int64_t i) {
  r.inputs += done.value("inputs", std::int64_t{0});
  r.outputs += done.value("outputs", std::int64_t{0});
  r.written += done.value("written", std::int64_t{0});
  r.kept += done.value("kept", std::int64_t{0});
  r.failed_inputs += done.value("failed", std::int64_t{0});
  r.skipped += done.value("skipped", std::int64_t{0});
  r.seconds += done.value("seconds", 0.0);
  const std::string started = done.value("started", std::string());
  const std::string finished = done.value("finished", std::string());
  if (r.first_start.empty() || started < r.first_start) r.first_start = started;
  if (finished > r.last_end) r.last_end = finished;
  if (done.value("failed", 1) != 0 || done.value("status", 1) != 0) r.failed.push_back(i);
  if (done.contains("failures") && done["failures"].is_array()) {
    for (const auto& f : done["failures"]) {
      if (f.is_object() && f.contains("input") && f["input"].is_string() && f.contains("error") &&
          f["error"].is_string()) {
        nlohmann::json failure = {{"shard", i}, {"input", f["input"]}, {"error", f["error"]}};
        if (f.contains("code") && f["code"].is_string()) failure["code"] = f["code"];
        r.failures.push_back(std::move(failure));
      }
    }
  }
  if (done.contains("manifests") && done["manifests"].is_array()) {
    for (const auto& m : done["manifests"]) {
      const std::string given = m.value("given", std::string());
      const std::string file = m.value("written", std::string());
      if (given.empty() || file.empty()) continue;
      if (!r.manifests.count(given)) r.manifest_names.push_back(given);
      r.manifests[given].push_back(file);
    }
  }
}

// Every shard's marker read: a missing, unusable or stale one (another list or other parameters) is a shard still to
// run; then, every shard done, the shards' manifests joined into the name given.
MergeReport read_markers(const std::string& state, const nlohmann::json& plan) {
  MergeReport r;
  r.shards = plan["shards"].get<std::int64_t>();
  std::string pinned;
  std::error_code ec;
  const std::string params_path = (fs::path(state) / "params.json").string();
  if (fs::is_regular_file(params_path, ec)) pinned = read_params(params_path)["hash"].get<std::string>();
  for (std::int64_t i = 0; i < r.shards; ++i) {
    const std::string path = marker_path(state, i);
    const std::optional<nlohmann::json> marker = read_marker(path);
    if (!marker) {
      if (fs::exists(path, ec)) r.unusable.push_back(path);
      r.missing.push_back(i);
      continue;
    }
    if (marker->value("list_fingerprint", std::string()) !=
            plan["fingerprints"][static_cast<std::size_t>(i)].get<std::string>() ||
        marker->value("params_hash", std::string()) != pinned) {
      r.missing.push_back(i);
      continue;
    }
    add_marker(r, *marker, i);
  }
  r.rerun = r.missing;
  r.rerun.insert(r.rerun.end(), r.failed.begin(), r.failed.end());
  std::sort(r.rerun.begin(), r.rerun.end());
  if (!r.rerun.empty()) return r;
  for (const std::string& given : r.manifest_names) {
    try {
      r.joined.push_back(
          {{"path", given}, {"rows", join_manifests(given, r.manifests[given])}, {"shards", r.manifests[given].size()}});
    } catch (const Error& e) {
      r.manifest_error = e.what();
      break;
    }
  }
  return r;
}

nlohmann::json report_json(const MergeReport& r) {
  return {{"shards", r.shards},
          {"done", r.shards - static_cast<std::int64_t>(r.rerun.size())},
          {"missing", r.missing},
          {"failed", r.failed},
          {"rerun", array_syntax(r.rerun)},
          {"inputs", r.inputs},
          {"outputs", r.outputs},
          {"written", r.written},
          {"kept", r.kept},
          {"failed_inputs", r.failed_inputs},
          {"skipped", r.skipped},
          {"manifests", r.joined},
          {"cleaned", r.cleaned},
          {"unusable_markers", r.unusable},
          {"failures", r.failures},
          {"seconds", r.seconds},
          {"started", r.first_start},
          {"finished", r.last_end}};
}

std::string report_text(const MergeReport& r, bool clean) {
  std::ostringstream s;
  s.precision(3);
  s << "rsz: " << r.shards - static_cast<std::int64_t>(r.rerun.size()) << " of " << r.shards << " shards done";
  if (!r.missing.empty()) s << "; " << r.missing.size() << " missing";
  if (!r.failed.empty()) s << "; " << r.failed.size() << " failed";
  s << "\nrsz: " << r.inputs << " inputs (" << r.skipped << " skipped: their outputs existed; " << r.failed_inputs
    << " failed); " << r.outputs << " output files (" << r.written << " written by the shards' last runs, " << r.kept
    << " kept); " << r.seconds << " s of shard time";
  if (!r.first_start.empty()) s << ", " << r.first_start << " to " << r.last_end;
  s << "\n";
  if (clean) s << "rsz: removed " << r.cleaned << " temporary file" << (r.cleaned == 1 ? "" : "s") << " of killed runs\n";
  for (const auto& m : r.joined) {
    s << "rsz: manifest " << printable(m["path"].get<std::string>()) << ": " << m["rows"].get<std::int64_t>()
      << " rows from " << m["shards"].get<std::size_t>() << " shards\n";
  }
  for (const std::string& path : r.unusable) {
    s << "rsz: " << printable(path) << ": not a marker as rsz writes it (truncated or of another shape); its shard "
      << "runs again and replaces it\n";
  }
  if (!r.missing.empty()) s << "rsz: missing shards (no marker): --array=" << array_syntax(r.missing) << "\n";
  for (const auto& f : r.failures) {
    s << "rsz: shard " << f["shard"].get<std::int64_t>() << ": " << printable(f["error"].get<std::string>()) << "\n";
  }
  if (!r.failed.empty()) s << "rsz: failed shards (an input failed): --array=" << array_syntax(r.failed) << "\n";
  if (!r.rerun.empty()) s << "rsz: to run again: --array=" << array_syntax(r.rerun) << "\n";
  return s.str();
}

}  // namespace

int run_merge(const MergeOptions& o) {
  const nlohmann::json plan = read_plan(o.state);
  const std::int64_t cleaned = o.clean ? clean_temporaries(o.state) : 0;
  MergeReport report = read_markers(o.state, plan);
  report.cleaned = cleaned;
  to_stdout(o.json ? report_json(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                   : report_text(report, o.clean));
  if (!report.manifest_error.empty()) {
    to_stderr("rsz: " + printable(report.manifest_error) + "; the manifest is not joined\n");
    return kExitFailed;
  }
  return report.rerun.empty() ? kExitOk : kExitFailed;
}

}  // namespace rsz::app
