// The command line: registers the subcommands (one file each), parses, dispatches, and maps errors to the exit
// statuses of the CLI contract (0 done, 1 some input failed, 2 usage or config error).
#include "cli.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "jobs.h"
#include "pipeline_internal.h"
#include "rsz/error.h"

namespace rsz::app {

namespace {

// Edits (insertions, deletions, substitutions) between two words: how a misspelt flag is matched to one that exists.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The first word of `args` (after the command) that looks like a long flag and is none of `command`'s (or rsz's own:
// --help, --version), as a one-line message with the nearest flag when one is close ("--sise: no such flag of rsz
// thumbnail; did you mean --size?"); "" when every flag exists. Checked before CLI11 parses, which would otherwise
// report a required flag first ("--size is required") and never the misspelt one.
std::string unknown_flag(const CLI::App& app, const CLI::App& command, const std::vector<std::string>& args) {
  std::vector<std::string> flags;
  for (const CLI::App* owner : {&app, &command}) {
    for (const CLI::Option* option : owner->get_options()) {
      for (const std::string& name : option->get_lnames()) flags.push_back(name);
    }
  }
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;  // the rest are values
    if (word.size() < 3 || word.compare(0, 2, "--") != 0) continue;
    const std::string name = word.substr(2, word.find('=') == std::string::npos ? std::string::npos : word.find('=') - 2);
    if (std::find(flags.begin(), flags.end(), name) != flags.end()) continue;
    std::string nearest;
    std::size_t best = std::max<std::size_t>(2, name.size() / 3) + 1;
    for (const std::string& flag : flags) {
      const std::size_t d = edit_distance(name, flag);
      if (d < best) {
        best = d;
        nearest = flag;
      }
    }
    return "--" + printable(name) + ": no such flag of rsz " + command.get_name() +
           (nearest.empty() ? "" : "; did you mean --" + nearest + "?") + " (see rsz " + command.get_name() +
           " --help)";
  }
  return "";
}

// A refusal before anything ran (exit 2): said on one line, and kept in the run's report with its code.
int refuse(const std::string& message, ErrorCode code = ErrorCode::InvalidArgument) {
  detail::RunTotals& report = detail::run_totals();
  report.error_code = code;
  report.error = printable(message);
  to_stderr("rsz: " + report.error + "\n");
  return kExitUsage;
}

constexpr const char* kExamples =
    "Examples:\n"
    "  rsz resample -i photo.jpg -o small.jpg --scale 0.5\n"
    "  rsz resample -i 'photos/*.jpg' -o out/ --size 224x224 --jobs 4\n"
    "  rsz thumbnail -i 'photos/*.jpg' -o thumbs/ --size 256\n"
    "  rsz upsample -i icon.png -o icon@2x.png --factor 2\n"
    "  rsz roi-align -i photo.jpg --rois boxes.json --output-size 128x128 -o crops/\n"
    "  rsz run configs/batch.json\n"
    "  rsz plan -i photos/ -r --shards 64 -o state/   (then --plan state/ --shard I on each machine)\n"
    "  rsz info photo.jpg\n"
    "Run 'rsz <command> --help' for the flags of a command.";

// The exit status of the exception being handled while `app` parsed or ran a command, its line said on stderr.
int failure_status(CLI::App& app) {
  try {
    throw;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version: through the run's standard output (captured in-process)
      std::ostringstream out;
      std::ostringstream err;
      const int status = app.exit(e, out, err);
      to_stdout(out.str());
      if (!err.str().empty()) to_stderr(err.str());
      return status == 0 ? kExitOk : kExitUsage;
    }
    // One line: what was wrong and where to look.
    return refuse(std::string(e.what()) + " (see rsz --help)");
  } catch (const rsz::Error& e) {
    // Errors raised while inputs are processed are caught and counted by the job runner; one that reaches here was
    // found before anything ran (a flag, a config or ROI file that cannot be read or used): a usage error, unless it
    // is a bug inside rsz (exit 1, said as such).
    if (e.code() == rsz::ErrorCode::Internal) {
      to_stderr("rsz: " + printable(e.what()) + " (a bug in rsz; please report it)\n");
      return kExitFailed;
    }
    return refuse(e.what(), e.code());
  } catch (const std::exception& e) {
    to_stderr("rsz: " + printable(e.what()) + "\n");
    return kExitFailed;
  }
}

// The command line without the check of standard output (in_process_run captures it).
int run_words(const std::vector<std::string>& words) {
  // `rsz help` and `rsz help COMMAND`, as git and cargo take them: the top-level help, or the command's.
  std::vector<std::string> args = words;
  if (args.size() <= 2 && !args.empty() && args[0] == "help") {
    args = args.size() == 2 ? std::vector<std::string>{args[1], "--help"} : std::vector<std::string>{"--help"};
  }
  CLI::App app{"rsz: resize images and tensors and cut ROI crops with the exact semantics of DirectML's "
               "RESAMPLE1, UPSAMPLE_2D and ROI_ALIGN"};
  app.name("rsz");  // as parse(argc, argv) would name it: "Usage: rsz thumbnail ..."
  app.set_version_flag("-V,--version", std::string("rsz ") + RSZ_VERSION);
  app.require_subcommand(1);
  app.footer(kExamples);
  // The operator subcommands (thumbnail, a resample preset, among them) come from the operator table; run, plan,
  // merge and info are the others.
  // When the first word names a command, only that command is registered: registering every command's flags is
  // most of rsz's start-up (about 1 ms of the 3 ms of `rsz thumbnail ...` here), paid once a file by scripts that
  // run rsz in a loop. Otherwise (top-level --help or --version, a mistake) all are, so that help lists them and
  // errors name them.
  std::vector<std::string> names;
  for (const OperatorCommand& entry : operator_commands()) names.emplace_back(entry.command);
  names.insert(names.end(), {"run", "plan", "merge", "info"});
  const bool named = !args.empty() && std::find(names.begin(), names.end(), args[0]) != names.end();
  const auto wanted = [&](const std::string& name) { return !named || args[0] == name; };
  std::vector<std::pair<std::string, std::function<int()>>> commands;  // each registered command and its run
  for (const OperatorCommand& entry : operator_commands()) {
    if (wanted(entry.command)) commands.emplace_back(entry.command, entry.setup(app));
  }
  RunOptions run;
  PlanOptions plan;
  MergeOptions merge;
  InfoOptions info;
  if (wanted("run")) {
    setup_run(app, run);
    commands.emplace_back("run", [&run] { return run_run(run); });
  }
  if (wanted("plan")) {
    setup_plan(app, plan);
    commands.emplace_back("plan", [&plan] { return run_plan(plan); });
  }
  if (wanted("merge")) {
    setup_merge(app, merge);
    commands.emplace_back("merge", [&merge] { return run_merge(merge); });
  }
  if (wanted("info")) {
    setup_info(app, info);
    commands.emplace_back("info", [&info] { return run_info(info); });
  }
  if (!named && !args.empty() && !args[0].empty() && args[0][0] != '-') {  // CLI11 would say "A subcommand is required"
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
    return refuse(args[0] + ": no such command; the commands are " + list + " (see rsz --help)");
  }
  if (named) {
    if (const std::string problem = unknown_flag(app, *app.get_subcommand(args[0]), args); !problem.empty()) {
      return refuse(problem);
    }
  }
  try {
    // Parsing types the flags' values once (common.h's CommonOptions); --max-memory's text that is not a size throws
    // rsz::Error from here, with rsz's own message.
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the words last first
    app.parse(reversed);
    for (const auto& [command, run_command] : commands) {
      if (app.got_subcommand(command)) return run_command();
    }
  } catch (...) {
    return failure_status(app);
  }
  return kExitUsage;
}

}  // namespace

int cli_main(const std::vector<std::string>& words) {
  detail::RunState run;
  const detail::RunScope scope(run);
  const int status = run_words(words);
  try {
    const std::lock_guard<std::mutex> lock(run.gpu_mutex);
    end_gpu_stage(run, true);  // the GPU stage ends: each GPU joined or left out (said), RSZ_GPU_STATS said
  } catch (const std::exception&) {  // the outputs are written: only the notes are lost
  }
  // What went to standard output (--json records, rsz info, merge's report, help) must have got there: a write that
  // failed (a full disk, a closed descriptor) is the run's failure, said once, exit 1 (a usage error stays 2).
  int error = detail::take_stdout_error();
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  if ((!flushed || !std::cout.good()) && error == 0) error = errno != 0 ? errno : EIO;
  std::cout.clear();
  if (error == 0) return status;
  to_stderr(std::string("rsz: cannot write standard output: ") + std::strerror(error) + "\n");
  return std::max(status, kExitFailed);
}

InProcessResult in_process_run(const std::vector<std::string>& args, const std::string& inputs_below,
                               bool quiet_stderr, bool keep_records) {
  // A run of its own: calls from several threads run at once and share nothing (RunState).
  InProcessResult result;
  detail::RunState run;
  const detail::RunScope scope(run);
  run.json_keeps_bytes = true;
  run.in_process = true;
  run.stderr_sink = &result.stderr_text;
  run.quiet_stderr = quiet_stderr;
  run.stdout_sink = &result.stdout_text;
  run.totals.keep_records = keep_records;
  if (!inputs_below.empty()) {
    // The words after -i / --input / --input= that name files: their {dir} and key are their path below the folder.
    for (std::size_t i = 0; i < args.size(); ++i) {
      std::string value;
      if ((args[i] == "-i" || args[i] == "--input") && i + 1 < args.size()) {
        value = args[++i];
      } else if (args[i].rfind("--input=", 0) == 0) {
        value = args[i].substr(8);
      } else {
        continue;
      }
      detail::set_input_below(value, inputs_below);
    }
  }
  result.status = run_words(args);
  {
    const std::lock_guard<std::mutex> lock(run.gpu_mutex);
    end_gpu_stage(run);  // --decode gpu: kept for the process's next runs
  }
  result.report = std::move(run.totals);
  result.report.status = result.status;
  return result;
}

}  // namespace rsz::app
