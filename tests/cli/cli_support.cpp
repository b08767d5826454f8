#include "cli/cli_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace rsz::test {

ScratchDir::ScratchDir(const std::string& name) {
  path_ = fs::temp_directory_path() / ("rsz_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void ScratchDir::copy_project_files() const {
  for (const char* folder : {"samples", "configs"}) {
    fs::copy(fs::path(RSZ_SOURCE_DIR) / folder, path_ / folder, fs::copy_options::recursive);
  }
}

std::string photo(const std::string& name) { return std::string(RSZ_SOURCE_DIR) + "/samples/photos/" + name; }

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> list_files(const fs::path& root) {
  std::vector<std::string> files;
  if (!fs::exists(root)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), root).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

CommandResult run_shell(const ScratchDir& dir, const std::string& command_line) {
  const fs::path out = dir.path() / ".stdout";
  const fs::path err = dir.path() / ".stderr";
  const std::string full = "cd '" + dir.path().string() + "' && { " + command_line + " ; } > '" + out.string() +
                           "' 2> '" + err.string() + "' < /dev/null";
  const int raw = std::system(full.c_str());
  CommandResult result;
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  result.out = read_text(out);
  result.err = read_text(err);
  fs::remove(out);
  fs::remove(err);
  return result;
}

CommandResult run_rsz(const ScratchDir& dir, const std::string& args) {
  return run_shell(dir, std::string("'") + RSZ_BINARY + "' " + args);
}

long rsz_usage(const ScratchDir& dir, const std::string& args, const std::string& field, const std::string& env) {
  const CommandResult r = run_shell(
      dir, env + " /usr/bin/python3 -c 'import resource, subprocess, sys; "
                 "code = subprocess.run(sys.argv[1:]).returncode; "
                 "print(getattr(resource.getrusage(resource.RUSAGE_CHILDREN), \"" +
               field + "\") if code == 0 else -1)' '" + std::string(RSZ_BINARY) + "' " + args);
  return r.status == 0 ? std::stol(r.out) : -1;
}

}  // namespace rsz::test
