#include "file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>

namespace rsz::io::detail {
namespace {

// Creates a new file next to `path` with the permissions a plain create would give; returns its descriptor and
// fills `temp_path`.
int create_temp_file(const std::string& path, std::string& temp_path) {
  static std::atomic<std::uint64_t> counter{0};
  const std::filesystem::path target(path);
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") {
    fail(ErrorCode::Io, path, "cannot write: the path names a folder, not a file");
  }
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  const auto ticks = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint64_t unique = ticks ^ (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
    temp_path = (folder / ("." + name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(unique))).string();
    const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) {
      fail(ErrorCode::Io, path,
           "cannot create a temporary file in folder '" + folder.string() + "': " + system_message(errno) +
               "; an existing, writable folder is required");
    }
  }
  fail(ErrorCode::Io, path, "cannot create a temporary file in folder '" + folder.string() + "': names taken");
}

}  // namespace

void fail(ErrorCode code, const std::string& path, const std::string& what) { throw Error(code, path + ": " + what); }

std::string system_message(int err) { return std::error_code(err, std::generic_category()).message(); }

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

int FileDescriptor::close() noexcept {
  const int result = ::close(fd_);
  fd_ = -1;
  return result == 0 ? 0 : errno;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), fd_(create_temp_file(path_, temp_)) {}

AtomicFile::~AtomicFile() {
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::fail_write(int err) const {
  fail(ErrorCode::Io, path_, "cannot write the temporary file '" + temp_ + "': " + system_message(err));
}

void AtomicFile::write(const void* data, std::size_t size) {
  const auto* in = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd_.get(), in, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail_write(errno);
    }
    in += written;
    size -= static_cast<std::size_t>(written);
  }
}

void AtomicFile::commit() {
  // Flush before the rename, so that a crash cannot leave the target name on an incomplete file.
  if (::fsync(fd_.get()) != 0) fail_write(errno);
  if (const int err = fd_.close(); err != 0) fail_write(err);
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    fail(ErrorCode::Io, path_, "cannot replace the file with the finished temporary file: " + system_message(errno));
  }
  committed_ = true;
}

}  // namespace rsz::io::detail
