// The rsz program: its signal handlers and allocator settings, then the command line (cli.cpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <csignal>
#include <string>
#include <vector>

#include "cli.h"
#include "streams.h"
#include "rsz/io/temporary_files.h"

namespace {

volatile sig_atomic_t stderr_is_terminal = 0;  // set once at start: the handler then clears a progress bar
// A copy of standard error made at start: the handler writes there, since descriptor 2 may be muted at that moment
// (while a codec library that prints works: io::set_mute_codec_stderr).
volatile sig_atomic_t stderr_copy = STDERR_FILENO;

// SIGINT, SIGTERM, SIGPIPE (stdout closed under --json | head): remove the temporary files of the outputs being
// written, say so on a terminal, and exit 128 + the signal number. Only async-signal-safe calls.
extern "C" void on_fatal_signal(int signal_number) {
  rsz::io::remove_temporary_files();
  rsz::app::remove_stream_files();
  if (signal_number != SIGPIPE) {
    static const char kClearLine[] = "\r\033[K";
    static const char kInterrupted[] = "rsz: interrupted; outputs being written were removed\n";
    static const char kTerminated[] = "rsz: terminated; outputs being written were removed\n";
    const bool interrupted = signal_number == SIGINT;
    ssize_t ignored = stderr_is_terminal ? ::write(stderr_copy, kClearLine, sizeof kClearLine - 1) : 0;
    ignored = ::write(stderr_copy, interrupted ? kInterrupted : kTerminated,
                      (interrupted ? sizeof kInterrupted : sizeof kTerminated) - 1);
    (void)ignored;
  }
  ::_exit(128 + signal_number);
}

// One input's buffers are reused by the next: glibc keeps freed blocks up to 32 MiB in its heaps (64 MiB of them at
// most are kept free) instead of unmapping them and faulting fresh zeroed pages in for every input. Fixed here, so
// the environment does not decide the speed: Dask sets MALLOC_TRIM_THRESHOLD_=65536 for its workers and their
// children, with which 200 thumbnails took 16 times the page faults (175k instead of 11k) and 1.25x the time.
void keep_freed_buffers() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

void install_signal_handlers() {
  stderr_is_terminal = ::isatty(STDERR_FILENO) ? 1 : 0;
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  for (const int signal_number : {SIGINT, SIGTERM, SIGPIPE}) {
    struct sigaction old {};
    // A signal the caller chose to ignore (nohup, a shell's background job) stays ignored.
    if (::sigaction(signal_number, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(signal_number, &action, nullptr);
  }
}

// Standard input, output and error closed by the caller (>&-, 2>&-) are held by /dev/null opened the wrong way round
// (input for writing, output for reading), so that no file rsz opens gets one of their numbers (JSON records meant
// for stdout would land in an output; muting stderr would swap a file), while reading or writing them still fails as
// on a closed descriptor (EBADF: "cannot write standard output: Bad file descriptor").
void hold_closed_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null = ::open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);  // the lowest free number: fd itself
    if (null >= 0 && null != fd) ::close(null);
  }
}

}  // namespace

int main(int argc, char** argv) {
  hold_closed_standard_descriptors();
  keep_freed_buffers();
  const int copy = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (copy >= 0) stderr_copy = copy;
  install_signal_handlers();
  // Everything on rsz's stderr is rsz's own: codec libraries that print traces (libjxl) are muted while they work.
  rsz::io::set_mute_codec_stderr(true);
  return rsz::app::cli_main(std::vector<std::string>(argv + (argc > 0 ? 1 : 0), argv + argc));
}
