// The state files of a plan (the folder rsz plan writes): shard lists (one line an input: its path, {dir} and key,
// escaped), plan.json, params.json and the done/ markers. Written atomically through mkstemp temporaries, read back
// with checks: shared by the --plan runs (shards.cpp, shard_run.cpp) and rsz plan / rsz merge (plan_merge.cpp).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "pipeline_internal.h"
#include "rsz/error.h"

namespace rsz::app {

namespace detail {
// What was read of a plan for this run.
struct PlanState {
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
}  // namespace detail

namespace shard_files {

using detail::PlanState;

// "7" or "7/16" as numbers; false for other text.
bool parse_shard(const std::string& text, std::int64_t& index, std::int64_t& count);
// "fnv1a64:" and the hash in 16 hex digits.
std::string hex64(std::uint64_t value);
// A shard list's field with '\\', newline, carriage return and tab escaped; and back (a usage error naming `where`
// for an escape rsz does not write).
std::string escape_field(const std::string& text);
std::string unescape_field(const std::string& text, const std::string& where);
std::string shard_name(std::int64_t index);  // "00003"
std::string list_path(const std::string& state, std::int64_t index);    // STATE/shards/00003.txt
std::string marker_path(const std::string& state, std::int64_t index);  // STATE/done/00003.json
std::string now_text();  // UTC, ISO 8601
std::string read_whole(const std::string& path);
// The same, but only a file whose first bytes (up to 64 KiB, all of a smaller file) `wanted` accepts, and (`most` > 0)
// of at most `most` bytes: nullopt for another, of which no more is read.
std::optional<std::string> read_whole_if(const std::string& path, bool (*wanted)(std::string_view head),
                                         std::uint64_t most = 0);

// A new file beside `path` under a name no other writer has: mkstemp (O_CREAT | O_EXCL with a random suffix, tried
// again on a clash), never a name made of the PID, which is 1 in every container of a Kubernetes Job. Removed when
// the object dies unless committed; nobody else ever opens it, so it is written and never truncated under a reader.
class TempFile {
 public:
  explicit TempFile(const std::string& path) : path_(path) {
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!folder.empty()) std::filesystem::create_directories(folder, ec);
    if (ec) throw Error(ErrorCode::Io, folder.string() + ": cannot create the folder: " + ec.message());
    name_ = (folder / ("." + std::filesystem::path(path).filename().string() + ".tmp-XXXXXX")).string();
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
bool write_atomically(const std::string& path, const std::string& text, bool exclusive = false);
nlohmann::json read_json(const std::string& path);
// read_json, tried again for 5 s while another shard may be writing the file (O_EXCL storage without links).
nlohmann::json read_json_settled(const std::string& path);
std::string dump(const nlohmann::json& value);  // two-space indented, a newline at the end

// What was read of the plan for this run (current_run()'s).
PlanState& plan_state();
// plan.json's "same_name" object as rsz plan writes it.
bool same_name_shape(const nlohmann::json& v);
// A done/ marker as rsz writes it, or nothing (missing, truncated, of another shape).
std::optional<nlohmann::json> read_marker(const std::string& path);
// params.json: a usage error naming the file when it is not as rsz writes it.
nlohmann::json read_params(const std::string& path);
// The plan's id (plan.json's "id"); "" for a plan of an earlier rsz.
std::string plan_id_of(const nlohmann::json& plan, const std::string& path);
// plan.json of `state`: a usage error naming the folder when it is missing or not a plan.
nlohmann::json read_plan(const std::string& state);
// The checks of --plan STATE --shard I (or I/N, N the plan's): -i is refused, --shard needed, and the shard must be
// one of the plan's. The plan.
nlohmann::json checked_plan(const std::string& state, bool inputs_given, std::int64_t index, std::int64_t count);

}  // namespace shard_files

}  // namespace rsz::app
