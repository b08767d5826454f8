// rsz plan and rsz merge on the command line: their flags (the work is pipeline/src/plan_merge.cpp).
#include "commands.h"

namespace rsz::app {

void setup_plan(CLI::App& app, PlanOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "List the inputs once and split them into N shard lists for rsz <command> --plan STATE --shard I");
  cmd->add_option("-i,--input,inputs", o.inputs, "Input images or .npy tensors: files, folders or quoted globs")
      ->required();
  cmd->add_flag("-r,--recursive", o.recursive, "Descend into sub-folders of input folders");
  cmd->add_flag("--hidden", o.hidden, "Also take files and folders whose names start with '.'");
  cmd->add_option("--shards", o.shards, "Number of shards N (shard I holds the inputs whose key hashes to I mod N)")
      ->required()
      ->check(whole_number(1, 1000000));
  cmd->add_option("-o,--output", o.output,
                  "State folder to create: plan.json and shards/00000.txt ... (one input per line); shards write "
                  "params.json and done/ markers there")
      ->required();
  cmd->add_flag("-q,--quiet", o.quiet, "No summary");
  cmd->footer("Examples:\n  rsz plan -i photos/ -r --shards 64 -o state/\n"
              "  rsz thumbnail --plan state/ --shard $SLURM_ARRAY_TASK_ID -o 'thumbs/{relpath}{ext}' --size 256\n"
              "  rsz merge state/");
}

void setup_merge(CLI::App& app, MergeOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "merge", "Check the shards of a plan: totals, and the missing or failed ones in Slurm's --array syntax");
  cmd->add_option("state", o.state, "The plan's state folder (rsz plan -o)")->required();
  cmd->add_flag("--json", o.json, "Print the report as one JSON object on stdout");
  cmd->add_flag("--clean", o.clean,
                "Remove the temporary files killed shards of this plan left: those of its state files, and those "
                "below the output folder the shards were run with that carry the plan's id (.NAME.tmp-ID-PID-N); "
                "no other file. Only files untouched for a minute (a running shard's are seconds old)");
  cmd->footer("Once every shard is done, the shards' roi-align manifests (m.00000.jsonl ...) are joined into the "
              "name given to --manifest, in shard order (a .csv's header once); relative names are taken from "
              "the folder merge runs in, as the shards took them.\n"
              "Exit status: 0 when every shard finished with no failed input, 1 otherwise.\n"
              "Example:\n  rsz merge state/ || sbatch --array=$(rsz merge state/ --json | jq -r .rerun) job.sh");
}

}  // namespace rsz::app
