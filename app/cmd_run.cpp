// rsz run on the command line: its flags (the batch itself is pipeline/src/batch.cpp).
#include "commands.h"
#include "shard_run.h"

namespace rsz::app {

void setup_run(CLI::App& app, RunOptions& o) {
  CLI::App* cmd = app.add_subcommand("run", "Run a batch file: inputs (files, folders, globs) and the steps to apply");
  cmd->add_option("batch", o.batch_file, "Batch JSON file")->required();
  cmd->add_option("-o,--output", o.common.output, "Output folder (overrides the file's \"output_dir\")");
  // Every run-level setting but those of single-output commands (--format, --tar-part-size: a batch's steps name
  // their outputs); a flag given here wins over the batch file's key.
  add_setting_flags(*cmd, o.common, io::kUseRun);
  cmd->footer("Examples:\n  rsz run configs/batch.json\n  rsz run configs/batch.json --dry-run\n"
              "  rsz run configs/batch.json -o /tmp/build --jobs 2 --json");
}

int run_run(const RunOptions& o) {
  return run_shard_command(pinned_command("run", {{"batch", o.batch_file}}, o.common), o.common,
                           [&o] { return run_batch(o.batch_file, o.common); });
}

}  // namespace rsz::app
