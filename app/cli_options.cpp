// The command line's shared flags: -i/-o/--config with the run-level settings (add_common_options), and the
// whole-number check of number flags.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>

#include "common.h"

namespace rsz::app {

CLI::Validator whole_number(std::int64_t min, std::int64_t max) {
  const std::string allowed = max == std::numeric_limits<std::int64_t>::max()
                                  ? "a whole number >= " + std::to_string(min)
                                  : "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, allowed](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE || v < min || v > max) {
          return "'" + printable(text) + "' is not allowed; " + allowed + " is";
        }
        return std::string();
      },
      allowed);
}

void add_common_options(CLI::App& command, CommonOptions& options, unsigned uses, bool with_config) {
  command.add_option("-i,--input,inputs", options.inputs,
                     "Input images or .npy tensors: files, folders or quoted globs ('photos/*.jpg'); repeatable, "
                     "or given as arguments: rsz resample a.jpg b.jpg -o out/ --scale 0.5; - reads standard input");
  command.add_option("-o,--output", options.output,
                     "Output file, folder (- is standard output), or name template using {stem} {ext} {op} {index} "
                     "{label} {id}, and "
                     "{dir} {relpath} {parent} (the input's folder below -i's, with its stem, its folder's name: "
                     "-r -o 'out/{relpath}.png' mirrors a tree); or webdataset tar shards, 'out/{shard}-{part}.tar' "
                     "(a name ending in .tar: {part} required, {shard} allowed; see --tar-part-size)");
  if (with_config) command.add_option("--config", options.config, "Operator config JSON; flags override its keys");
  add_setting_flags(command, options, uses);
}

}  // namespace rsz::app
