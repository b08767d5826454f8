// rsz command-line entry point: registers the subcommands (one file each), parses, dispatches, and maps errors to
// the exit statuses of the CLI contract (0 done, 1 some input failed, 2 usage or config error).
#include <CLI/CLI.hpp>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <csignal>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "streams.h"
#include "rsz/error.h"
#include "rsz/io/temporary_files.h"

namespace {

volatile sig_atomic_t stderr_is_terminal = 0;  // set once at start: the handler then clears a progress bar

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
    ssize_t ignored = stderr_is_terminal ? ::write(STDERR_FILENO, kClearLine, sizeof kClearLine - 1) : 0;
    ignored = ::write(STDERR_FILENO, interrupted ? kInterrupted : kTerminated,
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

}  // namespace

int main(int argc, char** argv) {
  using namespace rsz::app;
  keep_freed_buffers();
  install_signal_handlers();
  CLI::App app{"rsz: resize images and tensors and cut ROI crops with the exact semantics of DirectML's "
               "RESAMPLE1, UPSAMPLE_2D and ROI_ALIGN"};
  app.set_version_flag("-V,--version", std::string("rsz ") + RSZ_VERSION);
  app.require_subcommand(1);
  // The operator subcommands (thumbnail, a resample preset, among them) come from the operator table; run and info
  // are the others.
  std::vector<std::pair<std::string, std::function<int()>>> operators;
  for (const OperatorCommand& entry : operator_commands()) operators.emplace_back(entry.command, entry.setup(app));
  RunOptions run;
  InfoOptions info;
  PlanOptions plan;
  MergeOptions merge;
  setup_run(app, run);
  setup_plan(app, plan);
  setup_merge(app, merge);
  setup_info(app, info);
  app.footer(
      "Examples:\n"
      "  rsz resample -i photo.jpg -o small.jpg --scale 0.5\n"
      "  rsz resample -i 'photos/*.jpg' -o out/ --size 224x224 --jobs 4\n"
      "  rsz thumbnail -i 'photos/*.jpg' -o thumbs/ --size 256\n"
      "  rsz upsample -i icon.png -o icon@2x.png --factor 2\n"
      "  rsz roi-align -i photo.jpg --rois boxes.json --output-size 128x128 -o crops/\n"
      "  rsz run configs/batch.json\n"
      "  rsz plan -i photos/ -r --shards 64 -o state/   (then --plan state/ --shard I on each machine)\n"
      "  rsz info photo.jpg\n"
      "Run 'rsz <command> --help' for the flags of a command.");
  try {
    // Parsing types the flags' values once (common.h's CommonOptions); --max-memory's text that is not a size throws
    // rsz::Error from here, with rsz's own message.
    app.parse(argc, argv);
    for (const auto& [command, run_operator] : operators) {
      if (app.got_subcommand(command)) return run_command(*app.get_subcommand(command), run_operator);
    }
    if (app.got_subcommand("run")) return run_command(*app.get_subcommand("run"), [&run] { return run_run(run); });
    if (app.got_subcommand("plan")) return run_plan(plan);
    if (app.got_subcommand("merge")) return run_merge(merge);
    if (app.got_subcommand("info")) return run_info(info);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? kExitOk : kExitUsage;  // --help, --version
    // One line: what was wrong and where to look.
    to_stderr("rsz: " + printable(e.what()) + " (see rsz --help)\n");
    return kExitUsage;
  } catch (const rsz::Error& e) {
    // Errors raised while inputs are processed are caught and counted by the job runner; one that reaches here was
    // found before anything ran (a flag, a config or ROI file that cannot be read or used): a usage error, unless it
    // is a bug inside rsz (exit 1, said as such).
    if (e.code() == rsz::ErrorCode::Internal) {
      to_stderr("rsz: " + printable(e.what()) + " (a bug in rsz; please report it)\n");
      return kExitFailed;
    }
    to_stderr("rsz: " + printable(e.what()) + "\n");
    return kExitUsage;
  } catch (const std::exception& e) {
    to_stderr("rsz: " + printable(e.what()) + "\n");
    return kExitFailed;
  }
  return kExitUsage;
}
