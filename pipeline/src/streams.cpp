#include "streams.h"

#include <stdio_ext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "pipeline.h"
#include "pipeline_internal.h"
#include "rsz/error.h"
#include "rsz/io/image.h"
#include "rsz/io/npy.h"

namespace rsz::app {
namespace {

namespace fs = std::filesystem;

// Fixed buffers, so that the signal handler can unlink them without allocating.
char g_dir[4096];
char g_files[2][4096];

const char* scratch_dir() {
  if (g_dir[0] == '\0') {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/rsz-stream-XXXXXX";
    if (pattern.size() >= sizeof g_dir || ::mkdtemp(pattern.data()) == nullptr) {
      throw Error(ErrorCode::Io, pattern + ": cannot make a scratch folder for standard input or output: " +
                                     std::strerror(errno));
    }
    std::memcpy(g_dir, pattern.c_str(), pattern.size() + 1);
    std::atexit(remove_stream_files);
  }
  return g_dir;
}

std::string scratch_file(int slot, const std::string& name) {
  const std::string path = std::string(scratch_dir()) + "/" + name;
  if (path.size() >= sizeof g_files[slot]) throw Error(ErrorCode::Io, path + ": path too long");
  std::memcpy(g_files[slot], path.c_str(), path.size() + 1);
  return path;
}

// The extension of a stream's format from its first bytes, as a file's would be identified: io's codec table, or
// .npy ("" when neither knows them).
std::string sniff(const std::string& head) { return io::starts_as_npy(head) ? ".npy" : io::sniff_image_extension(head); }

std::string format_extension(const std::string& format) { return format.empty() ? "" : "." + format; }

// Enough of a stream's first bytes for every sniffer (BMP's needs 18).
constexpr std::size_t kSniffBytes = 64;

// Why the copy of standard input cannot be read ("" when it can): the stream was larger than the memory budget.

}  // namespace

std::string with_stream_names(const std::string& text) {
  std::string out = text;
  const std::pair<const char*, const char*> names[] = {{g_files[0], "standard input (-i -)"},
                                                       {g_files[1], "standard output (-o -)"}};
  for (const auto& [path, name] : names) {
    if (path[0] == '\0') continue;
    for (std::size_t at = out.find(path); at != std::string::npos; at = out.find(path, at + std::strlen(name))) {
      out.replace(at, std::strlen(path), name);
    }
  }
  return out;
}

void check_stream_input(const std::string& path) {
  const std::string& problem = detail::current_run().stdin_problem;
  if (!problem.empty() && path == g_files[0]) throw Error(ErrorCode::Io, problem);
}

void remove_stream_files() noexcept {
  for (char* f : g_files) {
    if (f[0] != '\0') ::unlink(f);
  }
  if (g_dir[0] != '\0') ::rmdir(g_dir);
}

std::vector<std::string> input_list(const CommonOptions& options, std::uint64_t budget) {
  if (!options.plan.empty()) return plan_shard_inputs(options);
  std::vector<std::string> patterns;
  std::string stdin_path;
  for (const std::string& p : options.inputs) {
    if (p != "-") {
      patterns.push_back(p);
      continue;
    }
    if (!stdin_path.empty()) usage_error("-i -: standard input can be given once");
    // The first bytes name the format: a stream no codec knows is refused before the rest is read.
    char buffer[65536];
    std::size_t got = std::fread(buffer, 1, kSniffBytes, stdin);
    if (std::ferror(stdin)) throw Error(ErrorCode::Io, "-i -: cannot read standard input");
    const std::string ext =
        options.format.empty() ? sniff(std::string(buffer, got)) : format_extension(options.format);
    if (ext.empty()) {
      usage_error("-i -: standard input is not a " + io::readable_image_formats() +
                  " image or a .npy tensor (or is empty); give --format");
    }
    // The rest goes to the scratch copy as it comes, never held whole; a stream larger than the memory budget is
    // not read further and fails as an input over the budget does.
    stdin_path = scratch_file(0, "stdin" + ext);
    std::FILE* f = std::fopen(stdin_path.c_str(), "wb");
    if (f == nullptr) throw Error(ErrorCode::Io, stdin_path + ": cannot write the copy of standard input");
    std::uint64_t total = 0;
    bool ok = true;
    for (;;) {
      total += got;
      if (total > budget) break;
      ok = ok && std::fwrite(buffer, 1, got, f) == got;
      if (got == 0 || std::feof(stdin) || std::ferror(stdin)) break;
      got = std::fread(buffer, 1, sizeof buffer, stdin);
    }
    ok = std::fclose(f) == 0 && ok;
    if (std::ferror(stdin)) throw Error(ErrorCode::Io, "-i -: cannot read standard input");
    if (!ok) throw Error(ErrorCode::Io, stdin_path + ": cannot write the copy of standard input");
    if (total > budget) {
      if (std::FILE* empty = std::fopen(stdin_path.c_str(), "wb")) std::fclose(empty);  // the part read is no use
      detail::current_run().stdin_problem = stdin_path + ": the stream is larger than the memory budget of " + bytes_text(budget) +
                        " (rsz stopped reading it there); raise --max-memory to read it";
    }
    patterns.push_back(stdin_path);
  }
  return expand_inputs(patterns, options.recursive, options.hidden);
}

std::string output_target(const CommonOptions& options, const std::vector<std::string>& inputs) {
  configure_tar_output(options, options.output);
  if (options.output != "-") return shard_output_target(options, options.output);
  if (!options.plan.empty() || options.shard_index >= 0) {
    usage_error("-o -: standard output takes one output; --plan and --shard split many inputs");
  }
  if (inputs.size() != 1) {
    usage_error("-o -: standard output takes one output; " + std::to_string(inputs.size()) + " inputs were given");
  }
  if (options.json) usage_error("-o -: standard output carries the image; --json cannot share it");
  std::string ext = format_extension(options.format);
  if (ext.empty()) ext = default_extension(inputs.front());
  return scratch_file(1, "stdout" + ext);
}

bool is_stdout_copy(const std::string& path) { return g_files[1][0] != '\0' && path == g_files[1]; }

std::string send_to_stdout(const std::string& target) {
  std::FILE* in = std::fopen(target.c_str(), "rb");
  if (in == nullptr) return "-o -: cannot read the output written (" + std::string(std::strerror(errno)) + ")";
  char buffer[65536];
  std::size_t got = 0;
  bool ok = true;
  int error = 0;
  errno = 0;
  while (ok && (got = std::fread(buffer, 1, sizeof buffer, in)) > 0) {
    ok = std::fwrite(buffer, 1, got, stdout) == got;
    if (!ok) error = errno;
  }
  const bool read_ok = std::ferror(in) == 0;
  std::fclose(in);
  if (ok && std::fflush(stdout) != 0) {
    ok = false;
    error = errno;
  }
  ::unlink(target.c_str());
  if (!read_ok && ok) return "-o -: cannot read the output written";
  if (ok) return "";
  if (error == 0) error = EIO;
  // Reported as this input's failure: what stdio still holds is dropped, so that the end of the command does not
  // report the same failure again.
  __fpurge(stdout);
  std::clearerr(stdout);
  return std::string("-o -: cannot write standard output: ") + std::strerror(error);
}

}  // namespace rsz::app
