// rsz run: a batch file's inputs and steps (rsz/io/batch_file.h) as jobs, planned whole before anything is
// written, then run phase by phase.
#pragma once

#include <string>

#include "pipeline.h"

namespace rsz::app {

// Reads the batch file, lays its run-level settings under `options` (a flag given wins), plans every step's jobs (a
// chained step from what the step before it will write: a request that cannot be met anywhere stops the run with
// nothing written), then runs the phases; the exit status.
int run_batch(const std::string& batch_file, const CommonOptions& options);

}  // namespace rsz::app
