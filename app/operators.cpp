// The operator table (commands.h): the rows, in the order `rsz --help` lists the subcommands.
#include "commands.h"

namespace rsz::app {

const std::vector<OperatorCommand>& operator_commands() {
  static const std::vector<OperatorCommand> table = {resample_command(), upsample_command(), roi_align_command(),
                                                           thumbnail_command()};
  return table;
}

}  // namespace rsz::app
