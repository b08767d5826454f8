// Webdataset output: -o 'out/{shard}-{part}.tar' writes tar shards as webdataset reads them. Each sample's key is
// its input's key (app/shards.cpp) with '.' made '_', and each output a member KEY.EXT encoded in memory; run_jobs
// writes a part's members sorted by key, with fixed metadata, through a temporary name, once every input of the part
// succeeded.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "pipeline.h"
#include "pipeline_internal.h"
#include "rsz/error.h"

namespace rsz::app {

namespace fs = std::filesystem;

namespace {

// A member kept until its part is written: its bytes in memory, or their place in its part's spill file.
struct Held {
  std::vector<std::uint8_t> bytes;
  bool spilled = false;
  std::size_t part = 0;  // spilled: the part whose spill file holds it
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// A part's spill file (spill_tar_members): its descriptor, -1 until one is needed, and where the next member goes.
struct Spill {
  int fd = -1;
  std::uint64_t end = 0;
};

}  // namespace

struct detail::TarState {
  ~TarState() {
    for (const auto& [part, spill] : spills) {
      if (spill.fd >= 0) ::close(spill.fd);
    }
  }
  bool on = false;
  std::string pattern;  // -o as given
  std::string ext;      // "." + --format, or "" for each input's default
  std::int64_t part_size = 1000;
  std::int64_t shard = 0;
  std::mutex mutex;
  std::map<std::string, Held> members;  // the encoded members of the parts being run, by planned path
  std::map<std::size_t, Spill> spills;  // the parts' spill files, each its own (a part's goes once it ends)
};

namespace {

using detail::TarState;

TarState& tar_state() {
  detail::RunState& run = detail::current_run();
  const std::lock_guard<std::mutex> lock(run.slots_mutex);
  if (!run.tar) run.tar = std::make_shared<TarState>();
  return *run.tar;
}

constexpr std::int64_t kDefaultPartSize = 1000;

bool ends_with_tar(const std::string& output) {
  if (output.size() < 4) return false;
  std::string ext = output.substr(output.size() - 4);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".tar";
}

// A crop's id in a key: letters, digits, '-', '_' and the bytes of multi-byte UTF-8 characters kept, others '_'.
std::string safe_id(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) || u >= 0x80 || c == '-' || c == '_' ? c : '_';
  }
  return out.empty() ? "_" : out;
}

std::string digits(std::int64_t value, int width) {
  char text[32];
  std::snprintf(text, sizeof text, "%0*lld", width, static_cast<long long>(value));
  return text;
}

void close_spill(TarState& s, std::size_t part) {
  const auto found = s.spills.find(part);
  if (found == s.spills.end()) return;
  if (found->second.fd >= 0) ::close(found->second.fd);
  s.spills.erase(found);
}

// An unnamed file for members that wait for their part on disk: O_TMPFILE in the output's folder (or the nearest
// folder above it that exists), so that it is on the outputs' storage, never in memory (a tmpfs /tmp), and has no name
// that a kill could leave behind. Where the file system has no O_TMPFILE, a named file is unlinked at once.
int open_spill(const std::string& pattern) {
  fs::path folder = fs::path(pattern.substr(0, pattern.find('{'))).parent_path();
  std::error_code ec;
  while (!folder.empty() && !fs::is_directory(folder, ec)) folder = folder.parent_path();
  if (folder.empty()) folder = ".";
  int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::string name = (folder / ".rsz-tar-spill-XXXXXX").string();
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(name.c_str());
  }
  if (fd < 0) {
    throw Error(ErrorCode::Io, pattern + ": cannot make a file in " + folder.string() +
                                   " for the members waiting for their part: " + std::strerror(errno));
  }
  return fd;
}

std::string part_path(const std::string& pattern, std::int64_t shard, std::int64_t part) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 7, "{shard}") == 0) {
      out += digits(shard, 5);
      i += 6;
    } else if (pattern.compare(i, 6, "{part}") == 0) {
      out += digits(part, 6);
      i += 5;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

}  // namespace

void configure_tar_output(const CommonOptions& options, const std::string& output) {
  TarState& s = tar_state();
  if (!ends_with_tar(output)) {
    if (options.tar_part_size != 0) {
      usage_error("--tar-part-size: goes with a .tar output (-o 'out/{shard}-{part}.tar'); -o " + output +
                  " writes files");
    }
    s.on = false;
    return;
  }
  bool part = false;
  bool shard = false;
  for (std::size_t i = 0; i < output.size(); ++i) {
    if (output[i] != '{') continue;
    const std::size_t close = output.find('}', i);
    const std::string name = close == std::string::npos ? "" : output.substr(i + 1, close - i - 1);
    if (name != "shard" && name != "part") {
      usage_error("-o " + output + ": a .tar output's name takes {part} (the part, 6 digits; required) and {shard} "
                  "(the --shard index, 5 digits) only; each sample's key inside is its input's path below -i");
    }
    part = part || name == "part";
    shard = shard || name == "shard";
    i = close;
  }
  if (!part) {
    usage_error("-o " + output + ": a .tar output is written in parts; put {part} in its name (e.g. "
                "'out/{shard}-{part}.tar')");
  }
  // Each shard numbers its parts from 0: without {shard} in their names, the shards' parts would be the same files.
  if (!shard && (!options.plan.empty() || (options.shard_index >= 0 && options.shard_count != 1))) {
    usage_error("-o " + output + ": each shard writes parts of its own; put {shard} in the name (e.g. "
                "'out/{shard}-{part}.tar'), or the shards' parts would be the same files");
  }
  if (options.format == "npy") {
    usage_error("--format npy: the members of a .tar output are images (jpg, png, webp, ...); write .npy tensors "
                "as files");
  }
  if (!options.manifest.empty()) {
    usage_error("--manifest " + options.manifest + ": a .tar output holds each crop's manifest row as its KEY.json "
                "member; drop --manifest");
  }
  s.on = true;
  s.pattern = output;
  s.ext = options.format.empty() ? "" : "." + options.format;
  s.part_size = options.tar_part_size > 0 ? options.tar_part_size : kDefaultPartSize;
  s.shard = std::max<std::int64_t>(options.shard_index, 0);
}

bool tar_output_on() { return tar_state().on; }

bool is_tar_output(const std::string& output) { return tar_state().on && output == tar_state().pattern; }

std::string tar_key(const std::string& input) {
  std::string key = shard_key(input);
  std::replace(key.begin(), key.end(), '.', '_');
  return key.empty() ? "_" : key;
}

std::string tar_member_path(const NameFields& fields) {
  const TarState& s = tar_state();
  std::string key = tar_key(fields.input);
  if (!fields.index.empty()) key += "/" + safe_id(fields.id.empty() ? fields.index : fields.id);
  const std::string ext = s.ext.empty() ? fields.ext : s.ext;
  if (is_tensor_path("member" + ext)) {  // (".npy" alone is a name without an extension)
    usage_error(fields.input + ": a tensor (.npy) cannot be a member of the .tar output " + s.pattern +
                ", whose members are images; write .npy tensors as files");
  }
  return s.pattern + "/" + key + ext;
}

std::string tar_member_name(const std::string& path) {
  const TarState& s = tar_state();
  if (!s.on || path.size() <= s.pattern.size() + 1 || path.compare(0, s.pattern.size(), s.pattern) != 0 ||
      path[s.pattern.size()] != '/') {
    return "";
  }
  return path.substr(s.pattern.size() + 1);
}

void keep_tar_member(const std::string& path, std::vector<std::uint8_t> bytes) {
  TarState& s = tar_state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.members[path] = Held{std::move(bytes)};
}

std::vector<std::uint8_t> take_tar_member(const std::string& path) {
  TarState& s = tar_state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  const auto found = s.members.find(path);
  if (found == s.members.end()) throw InternalError("rsz: no encoded bytes for the tar member " + path);
  Held held = std::move(found->second);
  s.members.erase(found);
  if (!held.spilled) return std::move(held.bytes);
  const auto spill = s.spills.find(held.part);
  if (spill == s.spills.end()) throw InternalError("rsz: no spill file for the tar member " + path);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(held.size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(spill->second.fd, bytes.data() + done, bytes.size() - done,
                              static_cast<off_t>(held.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw Error(ErrorCode::Io, path + ": cannot read the member back from disk: " +
                                     (n < 0 ? std::strerror(errno) : "the spill file is shorter than written"));
    }
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

void drop_tar_members() {
  TarState& s = tar_state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.members.clear();
  while (!s.spills.empty()) close_spill(s, s.spills.begin()->first);
}

void drop_tar_members(const std::vector<std::string>& paths, std::size_t part) {
  TarState& s = tar_state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  for (const std::string& path : paths) s.members.erase(path);
  close_spill(s, part);
}

std::uint64_t largest_spilled_tar_member(const std::vector<std::string>& paths) {
  TarState& s = tar_state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  std::uint64_t largest = 0;
  for (const std::string& path : paths) {
    const auto found = s.members.find(path);
    if (found != s.members.end() && found->second.spilled) largest = std::max(largest, found->second.size);
  }
  return largest;
}

std::uint64_t tar_member_bytes(const std::vector<std::string>& paths) {
  TarState& s = tar_state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  std::uint64_t bytes = 0;
  for (const std::string& path : paths) {
    const auto found = s.members.find(path);
    if (found != s.members.end()) bytes += found->second.bytes.size();
  }
  return bytes;
}

void spill_tar_members(const std::vector<std::string>& paths, std::size_t part) {
  TarState& s = tar_state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  for (const std::string& path : paths) {
    const auto found = s.members.find(path);
    if (found == s.members.end() || found->second.spilled) continue;
    Spill& spill = s.spills[part];
    if (spill.fd < 0) spill.fd = open_spill(s.pattern);
    Held& held = found->second;
    std::size_t done = 0;
    while (done < held.bytes.size()) {
      const ssize_t n = ::pwrite(spill.fd, held.bytes.data() + done, held.bytes.size() - done,
                                 static_cast<off_t>(spill.end + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        throw Error(ErrorCode::Io, s.pattern + ": cannot write the members waiting for their part to disk: " +
                                       std::strerror(n < 0 ? errno : ENOSPC));
      }
      done += static_cast<std::size_t>(n);
    }
    held.spilled = true;
    held.part = part;
    held.offset = spill.end;
    held.size = held.bytes.size();
    spill.end += held.size;
    std::vector<std::uint8_t>().swap(held.bytes);
  }
}

std::vector<TarPart> tar_parts(const std::vector<Job>& jobs, const CommonOptions&) {
  const TarState& s = tar_state();
  std::vector<std::pair<std::string, std::size_t>> keyed;
  keyed.reserve(jobs.size());
  for (std::size_t k = 0; k < jobs.size(); ++k) keyed.emplace_back(tar_key(jobs[k].input), k);
  std::sort(keyed.begin(), keyed.end());
  std::vector<TarPart> parts;
  TarPart current;
  for (const auto& [key, k] : keyed) {
    current.jobs.push_back(k);
    current.samples += jobs[k].planned_outputs.size();
    if (current.samples >= static_cast<std::size_t>(s.part_size)) {
      parts.push_back(std::move(current));
      current = TarPart{};
    }
  }
  if (!current.jobs.empty()) {
    if (current.samples == 0 && !parts.empty()) {
      parts.back().jobs.insert(parts.back().jobs.end(), current.jobs.begin(), current.jobs.end());
    } else {
      parts.push_back(std::move(current));  // of no sample when no job has one: its jobs run, no file is written
    }
  }
  for (std::size_t p = 0; p < parts.size(); ++p) {
    parts[p].path = part_path(s.pattern, s.shard, static_cast<std::int64_t>(p));
  }
  return parts;
}

}  // namespace rsz::app
