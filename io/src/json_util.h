// Internal helpers of rsz::io's JSON files (configs, ROI files, batch files): reading a file, parsing with
// duplicate-key and depth checks, and typed getters that throw the one-line messages described in config.h:
//   SOURCE: key "scales" at /scales/2: expected a finite number, got "abc"
//   SOURCE: unknown key "scale" at /scale; allowed keys: op, interpolation, ...
// Every error is rsz::Error with ErrorCode::InvalidArgument, except read_text_file's ErrorCode::Io.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rsz/io/config.h"
#include "rsz/io/resize.h"

namespace rsz::io::detail {

// Objects keep the order of the file, so the first problem reported is the first one in the file.
using Json = nlohmann::ordered_json;

// The whole file as bytes; ErrorCode::Io naming the path when it cannot be opened or read (or is a folder).
// Files over kMaxJsonFileBytes are refused with ErrorCode::InvalidArgument (they are not configs).
constexpr std::size_t kMaxJsonFileBytes = std::size_t{64} << 20;
// Dataset annotations (COCO's train set is about 450 MB); the caller's memory budget applies as well.
constexpr std::size_t kMaxAnnotationFileBytes = std::size_t{1} << 30;
// `what` names the expected content in messages ("a JSON file").
std::string read_text_file(const std::string& path, std::size_t max_bytes = kMaxJsonFileBytes,
                           const char* what = "a JSON file");

// Parses JSON text. Syntax errors name the source, line, column and byte; duplicate keys in one object and nesting
// deeper than kMaxJsonDepth are refused too.
constexpr int kMaxJsonDepth = 64;
// Values the caller never reads: each a path from the document's root of keys and "*" (any element of an array),
// ending in a key. Such a value that is an object or an array is parsed as JSON (syntax, numbers, nesting depth) but
// not kept, null in its place, and its keys are not checked for repeats; an error inside it names the value's key. A
// COCO file's segmentation polygons are most of its bytes, and of the memory its whole document would take.
using SkippedValues = std::vector<std::vector<std::string>>;
Json parse_json(const std::string& text, const std::string& source, const SkippedValues& skipped = {});

// "/a/b~1c/0": the RFC 6901 pointer token of a key.
std::string pointer_token(const std::string& key);

// A value inside a parsed document with what messages need: the source, its JSON pointer ("" for the document
// itself) and the nearest enclosing object key ("" at the top level).
class Ref {
 public:
  Ref(const Json& value, const std::string& source) : value_(&value), source_(&source) {}

  const Json& json() const { return *value_; }
  const std::string& source() const { return *source_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& key() const { return key_; }

  // The member `name` of this object (nullopt when absent); call expect_object first.
  std::optional<Ref> find(const std::string& name) const;
  // The member `name`, or a "required key is missing" error.
  Ref required(const std::string& name) const;
  // Element i of this array.
  Ref element(std::size_t i) const;

  // "SOURCE: key "k" at /p: WHAT" (or "SOURCE: at the top level: WHAT").
  [[noreturn]] void fail(const std::string& what) const;
  // fail("expected EXPECTED, got <the value>").
  [[noreturn]] void fail_expected(const std::string& expected) const;

 private:
  Ref(const Json& value, const std::string& source, std::string pointer, std::string key)
      : value_(&value), source_(&source), pointer_(std::move(pointer)), key_(std::move(key)) {}

  const Json* value_;
  const std::string* source_;
  std::string pointer_;
  std::string key_;
};

// A short one-line rendering of a value for messages: "abc" with quotes, 2.5, [1,2], {"a":1} (cut after ~60 chars).
std::string describe(const Json& value);

// Makes sure the value is an object whose keys are all in `allowed` (listed in that order in the message).
void expect_object(const Ref& ref, const std::vector<std::string>& allowed);
// Makes sure the value is an array; with `size`, of exactly that many elements (`what` names them: "numbers").
void expect_array(const Ref& ref, const char* what, std::optional<std::size_t> size = std::nullopt);

std::string get_string(const Ref& ref);
// A string that is not empty.
std::string get_nonempty_string(const Ref& ref);
bool get_bool(const Ref& ref);
// A number representable as a finite float32.
float get_float(const Ref& ref);
// An integral number (2 or 2.0, not 2.5) in [min, max].
std::int64_t get_int(const Ref& ref, std::int64_t min, std::int64_t max);
std::uint32_t get_uint32(const Ref& ref, std::uint32_t min);
std::array<float, 4> get_float4(const Ref& ref);

// One of the listed strings (`choices`: pairs of a spelling and its value, in any container); the message lists
// them all.
template <typename T, typename Choices>
T get_enum(const Ref& ref, const Choices& choices) {
  std::string allowed;
  for (const auto& choice : choices) {
    if (!allowed.empty()) allowed += ", ";
    allowed += "\"" + std::string(choice.first) + "\"";
  }
  if (!ref.json().is_string()) ref.fail_expected("one of " + allowed);
  const std::string& text = ref.json().get_ref<const std::string&>();
  for (const auto& choice : choices) {
    if (text == choice.first) return choice.second;
  }
  ref.fail_expected("one of " + allowed);
}
template <typename T>
T get_enum(const Ref& ref, std::initializer_list<std::pair<const char*, T>> choices) {
  return get_enum<T, std::initializer_list<std::pair<const char*, T>>>(ref, choices);
}

// A path written in a file, resolved against `base_dir` when relative, lexically normalized ("a/../b" -> "b").
std::string resolve_path(const std::string& base_dir, const std::string& path);

// ---- the per-operator config objects (config.cpp), shared by the config files and the steps of batch files ----
// `op_context` says where the expected op comes from in the message for a mismatching "op" key.
ResampleConfig parse_resample_object(const Ref& ref, const char* op_context);
// A resample (or, with `thumbnail`, a thumbnail) step's config: the resample keys plus the resize intent's "size",
// "fit", "gravity", "preset" (and thumbnail's "enlarge"), checked as a whole (resize.h).
ResizeIntent parse_resize_object(const Ref& ref, const char* op_context, bool thumbnail);
Upsample2dConfig parse_upsample2d_object(const Ref& ref, const char* op_context);
RoiAlignConfig parse_roi_align_object(const Ref& ref, const char* op_context);

}  // namespace rsz::io::detail
