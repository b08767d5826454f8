// The operator spec layer: one declaration per operator and per field of its config, from which everything above
// the kernels is made. A field says its JSON key (also the Python keyword), its command-line flag, its help, its
// kind, its enum spellings (core's own to_string names) and its default (read from the core's Params struct). From
// these tables, generically:
//   * config files and batch steps: the JSON parse of every field, the unknown-key check and its list, the overlay
//     of flags over a file (config.cpp);
//   * the command line: each field's flag, its help ("(default ...)" appended), its choices and the parse of its text
//     (the pipeline's command table, rsz/pipeline/commands.h); shorthands that set several fields (--scale, --output-size, --samples,
//     --spatial-scale, --factor) stay with their commands, and read their numbers with the same readers (below);
//   * the JSON Schemas in configs/schema and the Python keywords, checked against these tables by tests that fail
//     on any drift (tests/unit/config_test.cpp, tests/python/test_rsz.py); the completions are checked against
//     --help, which comes from here.
// Adding a field to an operator: the core Params member, the optional in its Config (config.h), one line in its
// table (ops.cpp), the schema property and the Python keyword (the tests say so if they are missing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "rsz/io/config.h"

#pragma GCC visibility push(default)

namespace rsz::io {

enum class FieldKind {
  Enum,       // one of `choices`
  Bool,       // a JSON boolean; on the command line a flag without a value
  Float,      // a finite float32
  Floats4,    // 4 finite float32s (N, C, H, W); on the command line 1 value (every axis) or 4
  Scales4,    // 4 float32s > 0; on the command line exactly 4
  Sizes4,     // 4 integers >= 1
  Count,      // an integer in [1, 2^32)
  Size,       // an integer >= 1 (64-bit)
  ScaleSize,  // {"height": H, "width": W}, integers in [1, 2^32)
};
const char* to_string(FieldKind kind);

struct FieldSpec {
  std::string key;    // JSON key and Python keyword: "out_of_bounds_input_value"
  std::string flag;   // the command-line flag that sets it alone ("--oob-value"); "" where only a shorthand does
  std::string help;   // one line, without the default
  FieldKind kind = FieldKind::Float;
  std::vector<std::string> choices;  // Enum: every accepted spelling, core's names first
  std::string default_json;          // the default as JSON text, from the core's Params{}; "" where there is none
};

struct OperatorSpec {
  std::string op;                // "roi_align": configs, batch steps, --json records
  std::string command;           // "roi-align": the subcommand
  std::vector<FieldSpec> fields;  // in the order messages, schemas and --help list them
  std::vector<std::string> keys() const;
  const FieldSpec* find(const std::string& key) const;  // nullptr when absent
};

const OperatorSpec& resample_spec();
const OperatorSpec& upsample2d_spec();
const OperatorSpec& roi_align_spec();
const std::vector<const OperatorSpec*>& operator_specs();  // the three, in that order

// Sets field `key` of a config from the text of its flag (numbers, comma lists, enum names; a Bool field takes
// "true" or "false"). Throws ErrorCode::InvalidArgument naming `what` (by default the flag, or the key where the
// field has no flag of its own), the text and what is allowed, or a key the operator does not have. Python passes
// its keyword as `what` ("roi_align: reduction").
void set_field(ResampleConfig& config, const std::string& key, const std::string& text, const std::string& what = "");
void set_field(Upsample2dConfig& config, const std::string& key, const std::string& text,
               const std::string& what = "");
void set_field(RoiAlignConfig& config, const std::string& key, const std::string& text, const std::string& what = "");

// Numbers in the text of a flag: the one reader behind set_field and the commands' shorthands (--scale, --factor,
// --output-size, --samples, --spatial-scale), so that every flag takes and refuses the same text. Items are read
// whole by std::from_chars (no spaces, no '+', no hex, no locale); an empty item ("1,,2", "1,") is refused.
// Refusals throw ErrorCode::InvalidArgument beginning "<what> <text>: ", e.g. "--scale 0.5,x: 'x' is not a finite
// number", "--output-size 8x0: '0' is not a whole number >= 1".
//
// Finite float32s separated by ','; a count not in `counts` is refused with "<n> values given; <allowed>"
// ("1 to 2 comma-separated numbers are allowed", "one number is allowed": each caller words what it takes).
std::vector<float> parse_float_list(const std::string& text, const std::string& what,
                                    const std::vector<std::size_t>& counts, const std::string& allowed);
// `count` whole numbers in [min, max] separated by `separator`. The count is checked first (the separator gives the
// shape: "8,8" is not a WxH), refused with `allowed`, by default "expected <count> whole numbers separated by '<s>'".
std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& what, char separator,
                                         std::size_t count, std::int64_t min = 1,
                                         std::int64_t max = std::numeric_limits<std::int64_t>::max(),
                                         const std::string& allowed = "");
// One whole number in [min, max]: "'<text>' is not a whole number >= <min>", with " (at most <max>)" below 2^63 - 1.
std::int64_t parse_int(const std::string& text, const std::string& what, std::int64_t min, std::int64_t max);

}  // namespace rsz::io

#pragma GCC visibility pop
