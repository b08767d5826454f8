// Driving the real rsz binary from tests: run a command line in a scratch folder, capture exit status, stdout and
// stderr.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace rsz::test {

struct CommandResult {
  int status = -1;
  std::string out;
  std::string err;
};

// A fresh folder under the system temp folder, removed when the object dies.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  // Copies samples/ and configs/ of the source tree in, so README commands run as written.
  void copy_project_files() const;

 private:
  std::filesystem::path path_;
};

// Runs `rsz ARGS` (the word rsz is replaced by the built binary) with the scratch folder as working directory.
CommandResult run_rsz(const ScratchDir& dir, const std::string& args);
// Runs an arbitrary shell command line in the scratch folder (for README lines).
CommandResult run_shell(const ScratchDir& dir, const std::string& command_line);

// Runs `rsz ARGS` under a small Python parent (after the shell words in `env`, e.g. "VAR=value") and returns one
// field of its resource usage (`field`: "ru_maxrss", KiB, or "ru_minflt", page faults), or -1 when rsz failed. The
// test process itself is no parent: a child forked from it starts with its pages.
long rsz_usage(const ScratchDir& dir, const std::string& args, const std::string& field, const std::string& env = "");

std::string read_text(const std::filesystem::path& path);
// The sample photo `name` of the source tree (samples/photos/NAME).
std::string photo(const std::string& name);
// Every regular file under `root`, relative, sorted.
std::vector<std::string> list_files(const std::filesystem::path& root);

}  // namespace rsz::test
