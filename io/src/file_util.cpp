#include "file_util.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <cstdint>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "rsz/io/temporary_files.h"

namespace rsz::io::detail {
namespace {

// The live temporary files, for remove_temporary_files() in a signal handler: a fixed table of atomic pointers to
// copies of the names, so the handler needs no lock and no allocation. A copy is freed only when its entry is cleared
// outside a removal (see `creating` below): the handler never reads a name that another thread frees meanwhile. More
// outputs than slots being written at once is far beyond --jobs' limit; such a file is simply not registered.
constexpr std::size_t kLiveSlots = 8192;
std::atomic<const char*> live_temporaries[kLiveSlots];

// Registers a copy of `name` (under the handshake: create_registered); -1 where no slot or memory is left.
int register_temporary(const char* name) noexcept {
  const std::size_t size = std::strlen(name) + 1;
  char* copy = new (std::nothrow) char[size];
  if (copy == nullptr) return -1;
  std::memcpy(copy, name, size);
  for (std::size_t i = 0; i < kLiveSlots; ++i) {
    const char* expected = nullptr;
    if (live_temporaries[i].compare_exchange_strong(expected, copy)) return static_cast<int>(i);
  }
  delete[] copy;
  return -1;
}

// Clears `slot` and frees its copy of the name (under the handshake, or on the thread that just registered it).
void clear_temporary(int slot) noexcept {
  if (slot >= 0) delete[] live_temporaries[static_cast<std::size_t>(slot)].exchange(nullptr);
}

// The handshake between threads creating temporary files and remove_temporary_files (a signal handler on another
// thread, while the creating threads run on): a creation counts itself in `creating` and then looks at `removing`;
// the removal sets `removing` and then waits for `creating` to be 0 before it reads the table. With both orders
// sequentially consistent, either the removal sees the creation (waits for it, then finds its file) or the creation
// sees the removal (and creates nothing). The creating thread blocks the ending signals meanwhile, so the handler
// never runs on a thread it would wait for.
std::atomic<int> creating{0};
std::atomic<bool> removing{false};

// The signals whose handlers remove the temporary files, blocked on this thread for its lifetime.
class EndingSignalsBlocked {
 public:
  EndingSignalsBlocked() {
    sigset_t block;
    sigemptyset(&block);
    for (const int s : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT}) sigaddset(&block, s);
    pthread_sigmask(SIG_BLOCK, &block, &old_);
  }
  ~EndingSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  EndingSignalsBlocked(const EndingSignalsBlocked&) = delete;
  EndingSignalsBlocked& operator=(const EndingSignalsBlocked&) = delete;

 private:
  sigset_t old_;
};

// Registers `name` and creates its file as one step for remove_temporary_files (see `creating`); -1 with errno set
// when the open fails (the name is then unregistered), or with errno ECANCELED once the removal has begun.
int create_registered(const char* name, int& slot) noexcept {
  const EndingSignalsBlocked blocked;
  creating.fetch_add(1);
  int fd = -1;
  int err = ECANCELED;
  if (!removing.load()) {
    slot = register_temporary(name);
    fd = ::open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    err = errno;
    if (fd < 0) {
      clear_temporary(slot);
      slot = -1;
    }
  }
  creating.fetch_sub(1);
  errno = err;
  return fd;
}

// Takes `slot` out of the table as one step with remove_temporary_files: once the removal has begun the entry stays
// (the handler may be reading it, and the process is ending).
void unregister_temporary(int slot) noexcept {
  if (slot < 0) return;
  const EndingSignalsBlocked blocked;
  creating.fetch_add(1);
  if (!removing.load()) clear_temporary(slot);
  creating.fetch_sub(1);
}

// set_temporary_tag's tag followed by '-' (nullptr: none). An immutable string that stays allocated, so that a
// thread creating a temporary reads it while another sets the next (Python's calls run with the GIL released).
std::atomic<const std::string*> tag_of_temporaries{nullptr};
std::string temporary_tag() {
  if (const ThreadSettings* settings = thread_settings()) {
    return settings->temporary_tag.empty() ? std::string() : settings->temporary_tag + "-";
  }
  const std::string* tag = tag_of_temporaries.load(std::memory_order_acquire);
  return tag != nullptr ? *tag : std::string();
}

// Creating a file in a folder and renaming one there take the folder's lock in the kernel, whose waiters spin on their
// cores while its holder runs: with 192 job threads writing 14,000 crops into one folder (a GPU job on 32 cores), half
// the run's CPU time went to that spinning (perf: osq_lock under path_openat and do_renameat2), and a third of the CPU
// job's. At most kFolderWriters threads a folder (striped by the folder's name) go into the kernel for those at once;
// the others wait here, asleep.
constexpr int kFolderWriters = 2;
constexpr std::size_t kFolderStripes = 64;

struct FolderStripe {
  std::mutex mutex;
  std::condition_variable turn;
  int inside = 0;
};

// The stripes; a forked child makes them anew in place (a parent's thread may have held a stripe's mutex at the fork,
// and the parent's threads inside are not the child's).
FolderStripe* folder_stripes = nullptr;

FolderStripe& folder_stripe(const std::string& folder) {
  static std::once_flag made;
  std::call_once(made, [] {
    folder_stripes = new FolderStripe[kFolderStripes];  // never deleted: threads may use it until the process ends
    ::pthread_atfork(nullptr, nullptr, [] {
      for (std::size_t i = 0; i < kFolderStripes; ++i) new (&folder_stripes[i]) FolderStripe();
    });
  });
  return folder_stripes[std::hash<std::string>()(folder) % kFolderStripes];
}

// A thread's turn at creating or renaming files in a folder (kFolderWriters at once).
class FolderTurn {
 public:
  explicit FolderTurn(const std::string& folder) : stripe_(folder_stripe(folder)) {
    std::unique_lock<std::mutex> lock(stripe_.mutex);
    stripe_.turn.wait(lock, [this] { return stripe_.inside < kFolderWriters; });
    ++stripe_.inside;
  }
  ~FolderTurn() {
    {
      const std::lock_guard<std::mutex> lock(stripe_.mutex);
      --stripe_.inside;
    }
    stripe_.turn.notify_one();
  }
  FolderTurn(const FolderTurn&) = delete;
  FolderTurn& operator=(const FolderTurn&) = delete;

 private:
  FolderStripe& stripe_;
};

std::string folder_of(const std::string& path) {
  const std::filesystem::path target(path);
  return target.has_parent_path() ? target.parent_path().string() : std::string(".");
}

// The file name limit of common file systems (NAME_MAX): a temporary name must fit too.
constexpr std::size_t kMaxNameBytes = 255;

// Creates a new file next to `path` with the permissions a plain create would give; returns its descriptor and
// fills `temp_path`.
// The name is registered (`slot`) and the file created as one step (create_registered), so that a signal's
// remove_temporary_files finds every file that exists.
int create_temp_file(const std::string& path, std::string& temp_path, int& slot) {
  static std::atomic<std::uint64_t> counter{0};
  const std::filesystem::path target(path);
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") {
    fail(ErrorCode::Io, path, "cannot write: the path names a folder, not a file");
  }
  const std::filesystem::path folder(folder_of(path));
  const auto ticks = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint64_t unique = ticks ^ (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
    const std::string suffix = ".tmp-" + temporary_tag() + std::to_string(::getpid()) + "-" + std::to_string(unique);
    // A target name near the limit gets a shortened temporary name (the prefix only makes it recognizable).
    const std::string shown = name.substr(0, std::min(name.size(), kMaxNameBytes - 1 - suffix.size()));
    temp_path = (folder / ("." + shown + suffix)).string();
    int fd = -1;
    {
      const FolderTurn turn(folder.string());
      fd = create_registered(temp_path.c_str(), slot);
    }
    if (fd >= 0) return fd;
    if (errno == ECANCELED) fail(ErrorCode::Io, path, "not written: the program is ending on a signal");
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

FileDescriptor open_input_file(const std::string& path, const char* what, std::size_t& size) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever; it is cleared again below.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) fail(ErrorCode::Io, path, "cannot open for reading: " + system_message(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) fail(ErrorCode::Io, path, "cannot read: " + system_message(errno));
  if (!S_ISREG(info.st_mode)) {
    const char* kind = S_ISDIR(info.st_mode)    ? "a folder"
                       : S_ISFIFO(info.st_mode) ? "a pipe (FIFO)"
                       : S_ISCHR(info.st_mode)  ? "a character device"
                       : S_ISBLK(info.st_mode)  ? "a block device"
                       : S_ISSOCK(info.st_mode) ? "a socket"
                                                : "not a regular file";
    fail(ErrorCode::Io, path, std::string("cannot read: it is ") + kind + "; " + what + " (a regular file) is required");
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    fail(ErrorCode::Io, path, "cannot read: " + system_message(errno));
  }
  size = static_cast<std::size_t>(info.st_size);
  return fd;
}

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), fd_(create_temp_file(path_, temp_, slot_)) {}

AtomicFile::~AtomicFile() {
  // Unlinked before it leaves the table: a signal in between still finds it (unlinking a missing name is harmless).
  if (!committed_) ::unlink(temp_.c_str());
  unregister_temporary(slot_);
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

namespace {

// ProtectedFiles' files of the whole process, each with how many objects list it: "E <folder device> <folder inode>
// <name>" for a name in a folder, "I <device> <inode>" for standard input. A forked child starts with none (a
// parent's thread may have held the mutex at the fork; the child's runs list their own).
struct Protected {
  std::mutex mutex;
  std::map<std::string, int> files;
  std::atomic<std::size_t> count{0};
};
Protected* protected_files = nullptr;

Protected& protected_registry() {
  static std::once_flag made;
  std::call_once(made, [] {
    protected_files = new Protected;  // never deleted: objects may unlist their files until the process ends
    ::pthread_atfork(nullptr, nullptr, [] { protected_files = new Protected; });
  });
  return *protected_files;
}

std::string entry_key(const struct stat& folder, const std::string& name) {
  return "E " + std::to_string(folder.st_dev) + " " + std::to_string(folder.st_ino) + " " + name;
}

std::string inode_key(const struct stat& file) {
  return "I " + std::to_string(file.st_dev) + " " + std::to_string(file.st_ino);
}

// Whether writing `path` would replace a file that ProtectedFiles lists: its name in its folder (as the kernel
// resolves the folder now), or the file there now being standard input's.
bool is_protected(const std::string& path) {
  Protected& registry = protected_registry();
  if (registry.count.load(std::memory_order_acquire) == 0) return false;
  const std::filesystem::path target(path);
  struct stat folder {};
  if (::stat(folder_of(path).c_str(), &folder) != 0) return false;
  std::vector<std::string> keys{entry_key(folder, target.filename().string())};
  struct stat file {};
  if (::stat(path.c_str(), &file) == 0) keys.push_back(inode_key(file));
  const std::lock_guard<std::mutex> lock(registry.mutex);
  return std::any_of(keys.begin(), keys.end(), [&](const std::string& key) { return registry.files.count(key) > 0; });
}

}  // namespace

void AtomicFile::commit() {
  // Flush before the rename, so that a crash cannot leave the target name on an incomplete file (unless the program
  // chose otherwise: set_sync_outputs).
  if (sync_outputs() && ::fsync(fd_.get()) != 0) fail_write(errno);
  if (const int err = fd_.close(); err != 0) fail_write(err);
  if (is_protected(path_)) {
    fail(ErrorCode::Io, path_,
         "not written: it is an input of the run (by this name, or through a link, a mount or standard input); "
         "choose another -o");
  }
  int renamed = 0;
  {
    const FolderTurn turn(folder_of(path_));
    renamed = std::rename(temp_.c_str(), path_.c_str()) == 0 ? 0 : errno;
  }
  if (renamed != 0) {
    fail(ErrorCode::Io, path_, "cannot replace the file with the finished temporary file: " + system_message(renamed));
  }
  unregister_temporary(slot_);
  slot_ = -1;
  committed_ = true;
}

bool SharedLibrary::open(const std::string& file) {
  handle_ = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ != nullptr) return true;
  const char* why = ::dlerror();
  why_ = why != nullptr ? why : "";
  return false;
}

void* SharedLibrary::symbol(const char* name) const { return handle_ != nullptr ? ::dlsym(handle_, name) : nullptr; }

void SharedLibrary::close() {
  if (handle_ != nullptr) ::dlclose(handle_);
  handle_ = nullptr;
}

namespace {

std::mutex g_stderr_mutex;
std::atomic<bool> g_mute_codec_stderr{false};

}  // namespace

CodecStderrMute::CodecStderrMute() {
  if (!g_mute_codec_stderr.load(std::memory_order_relaxed)) return;
  lock_ = std::unique_lock<std::mutex>(g_stderr_mutex);
  std::fflush(stderr);
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0) return;  // unmuted: the library's lines would show, nothing worse
  saved_ = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved_ >= 0 && ::dup2(null, STDERR_FILENO) < 0) {
    ::close(saved_);
    saved_ = -1;
  }
  ::close(null);
}

CodecStderrMute::~CodecStderrMute() {
  if (saved_ < 0) return;
  std::fflush(stderr);
  ::dup2(saved_, STDERR_FILENO);
  ::close(saved_);
}

}  // namespace rsz::io::detail

namespace rsz::io {

void set_mute_codec_stderr(bool mute) noexcept { detail::g_mute_codec_stderr.store(mute); }

std::unique_lock<std::mutex> lock_stderr() { return std::unique_lock<std::mutex>(detail::g_stderr_mutex); }

namespace {
std::atomic<bool> g_sync_outputs{true};
thread_local const ThreadSettings* t_settings = nullptr;

void check_tag(const std::string& tag) {
  if (tag.size() > 32 ||
      !std::all_of(tag.begin(), tag.end(), [](unsigned char c) { return std::isalnum(c) != 0; })) {
    throw std::invalid_argument("rsz::io::set_temporary_tag: letters and digits, at most 32, are allowed");
  }
}
}  // namespace

const ThreadSettings* thread_settings() noexcept { return t_settings; }

ThreadSettingsScope::ThreadSettingsScope(const ThreadSettings* settings) noexcept : previous_(t_settings) {
  t_settings = settings;
}

ThreadSettingsScope::~ThreadSettingsScope() { t_settings = previous_; }

void set_thread_temporary_tag(ThreadSettings& settings, const std::string& tag) {
  check_tag(tag);
  settings.temporary_tag = tag;
}

void set_temporary_tag(const std::string& tag) {
  check_tag(tag);
  // Tags are few (one a plan): the ones replaced stay allocated for a reader that may still hold them.
  detail::tag_of_temporaries.store(tag.empty() ? nullptr : new std::string(tag + "-"), std::memory_order_release);
}

void set_sync_outputs(bool sync) noexcept { g_sync_outputs.store(sync, std::memory_order_relaxed); }
bool sync_outputs() noexcept {
  if (t_settings != nullptr) return t_settings->sync_outputs;
  return g_sync_outputs.load(std::memory_order_relaxed);
}

ProtectedFiles::~ProtectedFiles() {
  if (keys_.empty()) return;
  detail::Protected& registry = detail::protected_registry();
  const std::lock_guard<std::mutex> lock(registry.mutex);
  for (const std::string& key : keys_) {
    const auto found = registry.files.find(key);
    if (found == registry.files.end()) continue;  // listed before a fork, in the parent's registry
    if (--found->second == 0) {
      registry.files.erase(found);
      registry.count.fetch_sub(1, std::memory_order_release);
    }
  }
}

void ProtectedFiles::add(const std::vector<std::string>& canonical_paths) {
  std::vector<std::string> keys;
  std::map<std::string, std::optional<struct stat>> folders;  // each folder looked up once
  for (const std::string& path : canonical_paths) {
    if (path == "-") {
      struct stat in {};
      if (::fstat(STDIN_FILENO, &in) == 0 && S_ISREG(in.st_mode)) keys.push_back(detail::inode_key(in));
      continue;
    }
    const std::filesystem::path file(path);
    const std::string name = file.filename().string();
    if (name.empty()) continue;
    auto [folder, fresh] = folders.emplace(detail::folder_of(path), std::nullopt);
    if (fresh) {
      struct stat st {};
      if (::stat(folder->first.c_str(), &st) == 0) folder->second = st;
    }
    if (folder->second) keys.push_back(detail::entry_key(*folder->second, name));
  }
  detail::Protected& registry = detail::protected_registry();
  const std::lock_guard<std::mutex> lock(registry.mutex);
  for (std::string& key : keys) {
    if (registry.files[key]++ == 0) registry.count.fetch_add(1, std::memory_order_release);
    keys_.push_back(std::move(key));
  }
}

void remove_temporary_files() noexcept {
  // No file is created from here on, and those being created are waited for (an open(2) each; 2 s at most).
  detail::removing.store(true);
  for (int waited = 0; detail::creating.load() > 0 && waited < 2000; ++waited) {
    const timespec millisecond{0, 1000000};
    ::nanosleep(&millisecond, nullptr);
  }
  for (auto& slot : detail::live_temporaries) {
    if (const char* name = slot.load()) ::unlink(name);
  }
}

}  // namespace rsz::io
