// File helpers shared inside rsz::io (not installed, not public): error messages naming the path, an owned file
// descriptor, AtomicFile, through which every output file of rsz is written, and SharedLibrary, through which the
// optional libraries are loaded.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>

#include "rsz/error.h"

namespace rsz::io::detail {

// Throws rsz::Error(code, "<path>: <what>").
[[noreturn]] void fail(ErrorCode code, const std::string& path, const std::string& what);
// strerror-like text for an errno value.
std::string system_message(int err);

// Owns a POSIX file descriptor (closed on destruction).
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();
  int get() const noexcept { return fd_; }
  // Closes now and returns the errno close() reported (a deferred write error on some file systems), or 0.
  int close() noexcept;

 private:
  int fd_;
};

// Opens an existing file for reading. Only a regular file is accepted: a folder, FIFO, socket or device is refused
// with a message naming what it is (the open itself cannot block, even on a FIFO without a writer). `what` names
// the expected content in messages ("an image file", "a JSON file"...). Fills `size` with the file's length.
FileDescriptor open_input_file(const std::string& path, const char* what, std::size_t& size);

// A file written completely or not at all: the bytes go to a new temporary file in the target's folder
// (".<name>.tmp-<pid>-<n>", so the final rename cannot cross file systems), which commit() flushes and renames over
// the target. Until then the target is untouched; if commit() is never reached (an exception, a failed write) the
// destructor removes the temporary file. Does not create folders. Errors: ErrorCode::Io naming the target.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();
  void write(const void* data, std::size_t size);
  void commit();

 private:
  [[noreturn]] void fail_write(int err) const;
  std::string path_;
  std::string temp_;
  int slot_ = -1;  // in the table of live temporary files (remove_temporary_files), or -1; set before fd_
  FileDescriptor fd_;
  bool committed_ = false;
};

// While alive (and set_mute_codec_stderr(true)), descriptor 2 goes to /dev/null, stderr's writers wait
// (lock_stderr), and no other mute runs: around a codec library's calls that may print on stderr.
class CodecStderrMute {
 public:
  CodecStderrMute();
  ~CodecStderrMute();
  CodecStderrMute(const CodecStderrMute&) = delete;
  CodecStderrMute& operator=(const CodecStderrMute&) = delete;

 private:
  std::unique_lock<std::mutex> lock_;
  int saved_ = -1;
};

// An optional library that rsz loads on first use (libarchive, the OpenCV codec module) with dlopen (RTLD_NOW |
// RTLD_LOCAL): open() says why not, resolve() fills a function pointer from it. A library kept open stays loaded for
// the process's life; close() gives back one found unusable.
class SharedLibrary {
 public:
  // False when `file` cannot be loaded; why() then has dlerror's reason ("" when it gives none).
  bool open(const std::string& file);
  // The symbol `name` as a pointer of type F; false when the library has no such symbol.
  template <typename F>
  bool resolve(const char* name, F& function) const {
    function = reinterpret_cast<F>(symbol(name));
    return function != nullptr;
  }
  void close();
  const std::string& why() const { return why_; }

 private:
  void* symbol(const char* name) const;
  void* handle_ = nullptr;
  std::string why_;
};

}  // namespace rsz::io::detail
