// The run a thread works for (pipeline_internal.h's RunState and RunScope).
#include "pipeline_internal.h"

namespace rsz::app::detail {

namespace {
thread_local RunState* t_run = nullptr;
}  // namespace

RunState& current_run() {
  if (t_run != nullptr) return *t_run;
  static RunState process_run;  // a caller that installed none: one run for the process, as before runs had objects
  return process_run;
}

RunScope::RunScope(RunState& run) : previous_(t_run), io_(&run.io) { t_run = &run; }

RunScope::~RunScope() { t_run = previous_; }

RunTotals& run_totals() { return current_run().totals; }

}  // namespace rsz::app::detail
