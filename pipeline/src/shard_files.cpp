// The state files of a plan (rsz plan's folder): shard lists, plan.json, params.json, done/ markers, written
// atomically and read back with checks (shard_files.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
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

#include "pipeline.h"
#include "pipeline_internal.h"
#include "rsz/error.h"
#include "rsz/io/temporary_files.h"

#include "shard_files.h"

namespace fs = std::filesystem;

namespace rsz::app {

namespace shard_files {

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

std::string read_whole(const std::string& path) { return *read_whole_if(path, nullptr); }

std::optional<std::string> read_whole_if(const std::string& path, bool (*wanted)(std::string_view head),
                                         std::uint64_t most) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorCode::Io, path + ": cannot read the file: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    throw Error(ErrorCode::Io, path + ": cannot read the file: " + (S_ISDIR(st.st_mode) ? "a folder" : std::strerror(errno)));
  }
  if (most > 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > most) return std::nullopt;
  std::string bytes;
  // A file: read into its size (once its first bytes are wanted).
  const auto reserve = [&] {
    if (S_ISREG(st.st_mode)) bytes.reserve(static_cast<std::size_t>(st.st_size));
  };
  if (wanted == nullptr) reserve();
  char chunk[1 << 16];
  for (;;) {  // to its end, however it changed since its size was taken (pipes and /proc files have none)
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorCode::Io, path + ": cannot read the file: " + std::strerror(errno));
    }
    const bool first = bytes.empty();
    bytes.append(chunk, static_cast<std::size_t>(got));
    if (wanted != nullptr && first) {
      if (!wanted(bytes)) return std::nullopt;
      reserve();
    }
    if (got == 0) return bytes;
  }
}

// Writes `text` to `path` through a temporary file in its folder: readers see the old file or the new, never a part.
// With `exclusive`, the file is only made where none exists; false when one did.
bool write_atomically(const std::string& path, const std::string& text, bool exclusive) {
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

}  // namespace shard_files

}  // namespace rsz::app
