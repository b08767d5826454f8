// What a run of rsz's pipeline did, as data: one record per output written, kept or planned, per failed input and per
// warning, with the run's counts and its exit status. The command line's --json lines, the summary's counts, a
// shard's marker and Python's rsz.run / rsz.map_paths results are views of it (record_json is the one JSON form).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rsz/error.h"

namespace rsz::pipeline {

enum class RecordKind {
  Written,  // an output file (or a .tar member) written
  Skipped,  // an output that existed and was kept (--skip-existing, a resumed shard): its input was not read
  Planned,  // --dry-run: an output that would be written, with its plan
  Failed,   // an input that failed: nothing of it written (a part of its crops, for roi-align: they are Written)
  Warning,  // a note on an input that still runs (roi-align's boxes outside the image)
  // An output that was not written although it was planned: a .tar part (it failed to write, or some of its inputs
  // failed: a part is written whole or not at all) or roi-align's manifest; `output`, `code` and `message` say it.
  // Not an input's failure: its inputs' own Failed records say theirs.
  Unwritten,
};
// "written", "skipped", "planned", "failed", "warning", "unwritten".
const char* to_string(RecordKind kind);
// The error code's name in records and Python's exceptions: "invalid_argument", "invalid_shape",
// "invalid_data_type", "io", "format", "internal".
const char* code_name(ErrorCode code);

struct Record {
  RecordKind kind = RecordKind::Written;
  std::size_t index = 0;  // the input's place in the run's list (records are kept in this order)
  std::string op;      // the operator: "resample", "thumbnail", "upsample2d", "roi_align"
  std::string input;   // the input file (roi-align's dataset images: the image)
  std::string output;  // Written, Skipped, Planned: the file; a .tar output's part; "-" for standard output
  std::string member;  // a .tar output: the member's name in the part; "" otherwise
  std::vector<std::int64_t> shape;  // Written, Planned: the output's shape
  std::string dtype;                // Written, Planned: "uint8", "float32", ...
  double seconds = 0;               // Written: the input's time, its reading and writing included
  ErrorCode code = ErrorCode::Io;   // Failed, Unwritten: what kind of failure
  std::string message;  // Failed, Warning, Unwritten: the line rsz says ("photos/a.jpg: not a JPEG file ...")
  // Planned: the plan's fields as a JSON object's members ("\"resize\":{...}": sizes, scales, offsets, canvas,
  // shrink_on_load), "" for none.
  std::string plan;
};

// A record as the one --json line rsz prints for it (without the newline): {"input", "op", "output", "shape",
// "dtype", "seconds"} for an output; {"input", "op", "error", "code"} for a failure; "skipped": true, "dry_run": true
// (with the plan), {"warning"} for the others, {"op", "output", "not_written", "code"} for an Unwritten output;
// "member" beside "output" in a .tar output.
std::string record_json(const Record& record);

struct Report {
  int status = 0;  // the exit status: 0 done, 1 some input failed, 2 refused before anything ran
  std::size_t jobs = 0;     // inputs run (or planned)
  std::size_t written = 0;  // output files written (a .tar output: parts)
  std::size_t failed = 0;   // inputs that failed
  std::size_t skipped = 0;  // inputs whose outputs all existed (--skip-existing)
  std::size_t kept = 0;     // the output files of those inputs
  // roi-align's manifests: the name given and the file written (with --plan, the shard's own).
  std::vector<std::pair<std::string, std::string>> manifests;
  // The first inputs that failed (at most kMaxFailuresKept), always kept: a shard's marker names them.
  static constexpr std::size_t kMaxFailuresKept = 20;
  std::vector<Record> failures;
  // Every record, in the order they were made, when the run keeps them (keep_records; a program's run streams them
  // to --json instead, so that a run over millions of files holds none).
  bool keep_records = false;
  std::vector<Record> records;
  // A run refused before anything ran (status 2): its code and message.
  std::optional<ErrorCode> error_code;
  std::string error;
  // Files in the input folders that no codec reads (a .gif, a .txt): their count, and the first kMaxNotReadKept of
  // them, sorted within each folder. They are not inputs; the summary names them once.
  static constexpr std::size_t kMaxNotReadKept = 1000;
  std::size_t not_read = 0;
  std::vector<std::string> not_read_files;
  // The lines rsz said (failures, notes, the summary), without their "rsz: " (rsz::pipeline::run; the command line
  // writes them to stderr).
  std::vector<std::string> messages;
};

}  // namespace rsz::pipeline
