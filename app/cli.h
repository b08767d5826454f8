// The rsz command line as a function: what the rsz program runs, and what Python's rsz.run_shard / rsz.map_paths run
// in-process (python/rsz_python.cpp).
#pragma once

#include <string>
#include <vector>

#include "rsz/pipeline/report.h"

namespace rsz::app {

// Parses `args` (the words after the program's name: {"thumbnail", "-i", ...}), runs the command and returns its
// exit status (0 done, 1 some input failed, 2 usage or config error), reporting on stderr as the program does.
// Each call is a run of its own (a RunState installed on its thread and on the pool's threads that work for it), so
// calls of several threads run at once and share nothing; the program's own signal handlers and allocator settings
// are main.cpp's, not this function's.
int cli_main(const std::vector<std::string>& args);

// One in-process run of the command line, for a host program such as Python: a run of its own (calls of several
// threads run at once; without --max-memory they share the process's default budget), whose lines on stderr are
// kept (and still written unless `quiet_stderr`) and whose standard output (--json records, --help) is returned
// instead of printed. Standard input and output as files (-i -, -o -) are the program's: not for concurrent calls.
// `inputs_below`: inputs given one by one (-i FILE) are named as if found in that folder: their {dir}, {relpath} and
// shard key are their path below it.
// `keep_records`: the report keeps a record of every output and failure (rsz.map_paths and rsz.run return them);
// without it, only the counts and the first failures.
struct InProcessResult {
  int status = 0;
  std::string stdout_text;  // what went to standard output (--json lines, --help)
  std::string stderr_text;  // the lines rsz wrote to stderr
  pipeline::Report report;  // what the run did; a refusal (status 2) with its code and message
};
InProcessResult in_process_run(const std::vector<std::string>& args, const std::string& inputs_below,
                               bool quiet_stderr, bool keep_records = false);

}  // namespace rsz::app
