// The temporary files rsz::io writes outputs through (a file is written under a temporary name in its folder and
// renamed over the target when complete). A program that ends on a signal calls remove_temporary_files() from its
// handler, so that an interrupted run leaves no partial file behind.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz::io {

// Unlinks every temporary file being written at this moment, and from then on no write of an output starts (it fails
// with rsz::Error, naming the signal). Async-signal-safe (atomics, a fixed table, nanosleep and unlink), so a SIGINT /
// SIGTERM / SIGPIPE handler may call it before it ends the process, while other threads write on: a temporary file
// being created on another thread at that moment is waited for (threads block these signals while they create one)
// and removed too. The writes in progress are then abandoned, and their targets are left as they were.
void remove_temporary_files() noexcept;

// A tag in the names of the temporary files created from now on: ".NAME.tmp-TAG-PID-N" instead of ".NAME.tmp-PID-N"
// ("" for none, the default). Letters and digits, at most 32 (std::invalid_argument otherwise). The command line tags
// a --plan shard's temporary files with its plan's id, so that `rsz merge --clean` removes those and nothing else.
// Process-wide; set it while no output is being written.
void set_temporary_tag(const std::string& tag);

// Whether each output file is flushed to the storage device (fsync) before it is renamed over its target. true (the
// default): every output is complete or absent even after a power loss or a kernel crash. false: the system flushes
// when it sees fit, so an output renamed in the seconds before such a crash may be found empty or truncated; errors,
// signals and killed processes still leave no partial file. The flush is most of the cost of many small outputs on a
// disk (half the time of 200 thumbnails). Process-wide; the command line's --no-sync sets false.
void set_sync_outputs(bool sync) noexcept;
bool sync_outputs() noexcept;

// Codec libraries that print on standard error by themselves (Debian's libjxl prints a trace of every failure it
// meets in a damaged JPEG XL file). With set_mute_codec_stderr(true) (the rsz program's setting, whose stderr holds
// its own lines only), standard error (descriptor 2) goes to /dev/null while such a library works, one at a time, and
// rsz's own writes to it wait meanwhile (lock_stderr). Off by default: a host process (Python) keeps its stderr, and
// such traces reach it.
void set_mute_codec_stderr(bool mute) noexcept;
// Held while writing to standard error, so that no line is written (and lost) while a codec's output is muted.
std::unique_lock<std::mutex> lock_stderr();

// The same settings for one thread, for a host that runs several jobs at once in one process (the command line's
// in-process runs: each installs its own on every thread that works for it). While a ThreadSettingsScope is alive on
// a thread, the temporary files that thread creates carry `temporary_tag`, its outputs are flushed per
// `sync_outputs`, and the JSON documents it parses are held to `json_memory_budget` (json budget: config.h's
// set_json_memory_budget), instead of the process-wide values. The settings are read, not copied: they must outlive
// the scope, and change only while no thread of the scope writes or parses.
struct ThreadSettings {
  std::string temporary_tag;  // as set_temporary_tag takes it (checked when set through set_thread_temporary_tag)
  bool sync_outputs = true;
  std::uint64_t json_memory_budget = ~std::uint64_t{0};
};
// `tag` checked as set_temporary_tag checks it (std::invalid_argument), then stored in `settings`.
void set_thread_temporary_tag(ThreadSettings& settings, const std::string& tag);
class ThreadSettingsScope {
 public:
  explicit ThreadSettingsScope(const ThreadSettings* settings) noexcept;
  ~ThreadSettingsScope();
  ThreadSettingsScope(const ThreadSettingsScope&) = delete;
  ThreadSettingsScope& operator=(const ThreadSettingsScope&) = delete;

 private:
  const ThreadSettings* previous_;
};
// The calling thread's settings (nullptr: the process-wide ones).
const ThreadSettings* thread_settings() noexcept;

// Files that no output may replace while an object lists them (the inputs of the runs in progress, process-wide): a
// write whose target is one of them fails where it would be renamed over it, its temporary file removed (rsz::Error,
// ErrorCode::Io). A file is its name in its folder, the folder known by device and inode, so that a link to the
// folder, a bind mount of it or a folder made on the way ("new/../link/x") name it too, while another hard link to the
// same data may be replaced (the input keeps its name and bytes); standard input is known by its inode. A last check
// behind the caller's own checks of names, which refuse such a run before anything is written.
class ProtectedFiles {
 public:
  ProtectedFiles() = default;
  ~ProtectedFiles();
  ProtectedFiles(const ProtectedFiles&) = delete;
  ProtectedFiles& operator=(const ProtectedFiles&) = delete;
  // The files at these canonical paths (absolute, without links: the caller resolves them); those whose folder does
  // not exist are left out. "-": standard input, where it is a regular file.
  void add(const std::vector<std::string>& canonical_paths);

 private:
  std::vector<std::string> keys_;  // as the registry holds them
};

}  // namespace rsz::io

#pragma GCC visibility pop
