// Standard input and output as an image or .npy stream: `-i -` copies standard input (up to the memory budget) into a
// file of a private scratch folder (its format from --format or its first bytes), and `-o -` writes the one output to
// a file there that is copied to standard output when the run ends. The scratch folder is removed at exit and on a signal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rsz::app {

struct CommonOptions;

// expand_inputs, with "-" read from standard input into a scratch file: a usage error when its first bytes are of no
// format rsz reads (and no --format says one); a stream of more than `budget` bytes is read no further, and its copy
// fails as an input (check_stream_input).
std::vector<std::string> input_list(const CommonOptions& options, std::uint64_t budget);
// Throws rsz::Error (ErrorCode::Io) when `path` is the copy of a standard input that was larger than the memory
// budget, naming standard input, the budget and --max-memory.
void check_stream_input(const std::string& path);
// The output path jobs write: `options.output`, or for "-" a scratch file named for the format (--format, else
// the single input's extension). A usage error unless there is exactly one input, and with --json.
std::string output_target(const CommonOptions& options, const std::vector<std::string>& inputs);
// With -o -, once the output is written (run_jobs, before its summary): copies the scratch file `target` to standard
// output and removes it. "" when done, else what went wrong ("-o -: cannot write standard output: No space left on
// device"): the input then failed.
std::string send_to_stdout(const std::string& target);
// Whether `path` is the scratch file output_target made for -o - (not a folder or file named "-", as rsz run's -o is).
bool is_stdout_copy(const std::string& path);
// Unlinks the scratch files and folder; async-signal-safe (the signal handler calls it).
void remove_stream_files() noexcept;
// `text` with the scratch copies of standard input and output named as such ("standard input (-i -)"): messages
// speak of what the user gave, not of rsz's temporary files.
std::string with_stream_names(const std::string& text);

}  // namespace rsz::app
