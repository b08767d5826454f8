// Batch files (rsz run): inputs, output folder, dtype and the steps with their operator configs (config.h).
#include <filesystem>

#include "enum_names.h"
#include "rsz/io/run_settings.h"
#include "json_util.h"
#include "rsz/error.h"
#include "rsz/io/batch_file.h"
#include "rsz/io/config.h"
#include "rsz/io/image.h"
#include "rsz/io/naming.h"

namespace rsz::io {
namespace {

using detail::Json;
using detail::Ref;

constexpr const char* kStepContext = "the step's \"op\"";

// One of `names`, as written; a refusal names the JSON path, so an enum's parse_* then types the text without fail.
std::string one_of(const Ref& ref, const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> choices;
  for (const std::string& name : names) choices.emplace_back(name, name);
  return detail::get_enum<std::string>(ref, choices);
}

// Whether a setting's choices are numbers ("depth": 8 or 16): a batch file writes them as JSON integers.
bool numeric_choices(const RunSettingSpec& row) {
  return !row.choices.empty() && row.choices.front().find_first_not_of("0123456789") == std::string::npos;
}

// One of the numbers `names`, as a JSON integer; its text.
std::string one_number_of(const Ref& ref, const std::vector<std::string>& names) {
  std::string allowed;
  for (std::size_t i = 0; i < names.size(); ++i) allowed += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  if (ref.json().is_number_integer()) {
    const std::string text = ref.json().dump();
    for (const std::string& name : names) {
      if (text == name) return text;
    }
  }
  ref.fail_expected(allowed);
}

bool is_glob(const std::string& pattern) { return pattern.find_first_of("*?[") != std::string::npos; }

// Inputs relative to the batch file's folder; glob patterns are only prefixed (never normalized), so "*" and "["
// keep their meaning for the app's expansion.
std::string resolve_input(const std::string& base_dir, const std::string& input) {
  if (!is_glob(input)) return detail::resolve_path(base_dir, input);
  const std::filesystem::path p(input);
  if (p.is_absolute() || base_dir.empty()) return input;
  return (std::filesystem::path(base_dir) / p).string();
}

// An output name template: relative (it goes under the output folder), known placeholders only; {index}, {label}
// and {id} name ROI crops and are only for roi_align steps.
std::string get_output_template(const Ref& ref, bool roi_align) {
  const std::string text = detail::get_nonempty_string(ref);
  if (std::filesystem::path(text).is_absolute()) {
    ref.fail_expected("a relative name template (it is placed under the output folder)");
  }
  // Placeholders add no ".." ({dir} and {relpath} add only the folders found below an input folder), so a template
  // without ".." components cannot leave the output folder.
  for (const auto& part : std::filesystem::path(text)) {
    if (part == "..") ref.fail_expected("a template that stays inside the output folder (no \"..\" components)");
  }
  if (const std::string problem = template_problem(text, roi_align); !problem.empty()) ref.fail_expected(problem);
  return text;
}

// The operators a step may name: the op, its config object's parser, and whether it cuts crops from "rois". A new
// operator is one row here (and one in the CLI's operator table, app/commands.h).
struct StepOperator {
  const char* op;
  BatchStep::Config (*parse)(const Ref& config, const char* op_context);
  bool crops;
};
const StepOperator kStepOperators[] = {
    {"resample", [](const Ref& c, const char* context) -> BatchStep::Config {
       return detail::parse_resize_object(c, context, false);
     }, false},
    {"thumbnail", [](const Ref& c, const char* context) -> BatchStep::Config {
       return detail::parse_resize_object(c, context, true);
     }, false},
    {"upsample2d", [](const Ref& c, const char* context) -> BatchStep::Config {
       return detail::parse_upsample2d_object(c, context);
     }, false},
    {"roi_align", [](const Ref& c, const char* context) -> BatchStep::Config {
       return detail::parse_roi_align_object(c, context);
     }, true},
};

const StepOperator& step_operator(const Ref& op) {
  std::string allowed;
  for (const StepOperator& entry : kStepOperators) {
    if (op.json().is_string() && op.json().get_ref<const std::string&>() == entry.op) return entry;
    allowed += std::string(allowed.empty() ? "" : ", ") + "\"" + entry.op + "\"";
  }
  op.fail_expected("one of " + allowed);
}

BatchStep parse_step(const Ref& step, const std::string& base_dir, bool first) {
  detail::expect_object(step,
                        {"op", "config", "output", "rois", "image_root", "names", "manifest", "rois_check",
                         "size_mismatch", "skip_crowd", "skip_difficult", "input"});
  const Ref op = step.required("op");
  const StepOperator& entry = step_operator(op);
  BatchStep out;
  out.op = entry.op;
  out.config = entry.parse(step.required("config"), kStepContext);
  const bool roi_align = entry.crops;
  if (roi_align) {
    out.rois_path = detail::resolve_path(base_dir, detail::get_nonempty_string(step.required("rois")));
    if (const auto root = step.find("image_root")) {
      out.image_root = detail::resolve_path(base_dir, detail::get_nonempty_string(*root));
    }
    if (const auto names = step.find("names")) {
      out.names_path = detail::resolve_path(base_dir, detail::get_nonempty_string(*names));
    }
    if (const auto check = step.find("rois_check")) {
      out.rois_check = parse_rois_check(one_of(*check, rois_check_names()), "\"rois_check\"");
    }
    if (const auto mismatch = step.find("size_mismatch")) {
      out.size_mismatch = parse_size_mismatch(one_of(*mismatch, size_mismatch_names()), "\"size_mismatch\"");
    }
    if (const auto crowd = step.find("skip_crowd")) out.skip_crowd = detail::get_bool(*crowd);
    if (const auto difficult = step.find("skip_difficult")) out.skip_difficult = detail::get_bool(*difficult);
    if (const auto manifest = step.find("manifest")) {
      const std::string text = detail::get_nonempty_string(*manifest);
      const std::filesystem::path path(text);
      if (path.is_absolute()) manifest->fail_expected("a relative path (it is placed under the output folder)");
      for (const auto& part : path) {
        if (part == "..") manifest->fail_expected("a path that stays inside the output folder (no \"..\")");
      }
      const std::string ext = path.extension().string();
      if (ext != ".jsonl" && ext != ".csv") manifest->fail_expected("a .jsonl or .csv file name");
      out.manifest = text;
    }
  } else {
    for (const char* key :
         {"rois", "image_root", "names", "manifest", "rois_check", "size_mismatch", "skip_crowd", "skip_difficult"}) {
      if (const auto ref = step.find(key)) {
        ref->fail(std::string("\"") + key + "\" is only for roi_align steps; this step's op is \"" + out.op + "\"");
      }
    }
  }
  if (const auto input = step.find("input")) {
    if (!input->json().is_string() || input->json().get_ref<const std::string&>() != "previous") {
      input->fail_expected("\"previous\" (the step takes the previous step's outputs as its inputs)");
    }
    if (first) input->fail("the first step has no previous step; it takes the batch's \"inputs\"");
    out.chained = true;
  }
  if (const auto output = step.find("output")) {
    out.output_template = get_output_template(*output, roi_align);
  } else {
    out.output_template = roi_align ? "{stem}_{index}{ext}" : "{stem}_{op}{ext}";
  }
  return out;
}

}  // namespace

const char* to_string(RoisCheck check) {
  switch (check) {
    case RoisCheck::Warn:
      return "warn";
    case RoisCheck::Error:
      return "error";
    case RoisCheck::Off:
      return "off";
    case RoisCheck::Skip:
      return "skip";
  }
  return "?";
}

const char* to_string(SizeMismatch mode) { return mode == SizeMismatch::Scale ? "scale" : "fail"; }

namespace {
constexpr RoisCheck kRoisChecks[] = {RoisCheck::Warn, RoisCheck::Error, RoisCheck::Off, RoisCheck::Skip};
constexpr SizeMismatch kSizeMismatches[] = {SizeMismatch::Fail, SizeMismatch::Scale};
}  // namespace

std::vector<std::string> size_mismatch_names() { return detail::enum_names(kSizeMismatches); }

SizeMismatch parse_size_mismatch(const std::string& text, const std::string& what) {
  return detail::parse_enum(kSizeMismatches, text, what);
}

std::vector<std::string> rois_check_names() { return detail::enum_names(kRoisChecks); }

RoisCheck parse_rois_check(const std::string& text, const std::string& what) {
  return detail::parse_enum(kRoisChecks, text, what);
}

BatchFile parse_batch_file(const std::string& json_text, const std::string& source, const std::string& base_dir) {
  const Json json = detail::parse_json(json_text, source);
  const Ref root(json, source);
  std::vector<std::string> keys = {"inputs", "output_dir"};
  for (const RunSettingSpec& row : run_settings()) {
    if (!row.batch_key.empty()) keys.push_back(row.batch_key);
  }
  keys.insert(keys.end(), {"steps", "$schema"});
  detail::expect_object(root, keys);
  if (const auto schema = root.find("$schema")) detail::get_string(*schema);
  BatchFile batch;

  const Ref steps = root.required("steps");
  if (!steps.json().is_array() || steps.json().empty()) steps.fail_expected("a non-empty array of step objects");
  bool only_roi_align = true;
  for (std::size_t i = 0; i < steps.json().size(); ++i) {
    batch.steps.push_back(parse_step(steps.element(i), base_dir, i == 0));
    only_roi_align = only_roi_align && std::holds_alternative<RoiAlignConfig>(batch.steps.back().config);
  }

  // "inputs" may be left out only when every step is roi_align (dataset ROI files name their own images).
  const std::optional<Ref> inputs = only_roi_align ? root.find("inputs") : root.required("inputs");
  if (inputs) {
    if (!inputs->json().is_array() || (inputs->json().empty() && !only_roi_align)) {
      inputs->fail_expected("a non-empty array of strings (files, folders or glob patterns)");
    }
    for (std::size_t i = 0; i < inputs->json().size(); ++i) {
      batch.inputs.push_back(resolve_input(base_dir, detail::get_nonempty_string(inputs->element(i))));
    }
  }

  if (const auto output_dir = root.find("output_dir")) {
    batch.output_dir = detail::resolve_path(base_dir, detail::get_nonempty_string(*output_dir));
  } else {
    batch.output_dir = detail::resolve_path(base_dir, "out");
  }

  for (const RunSettingSpec& row : run_settings()) {
    if (row.batch_key.empty()) continue;
    const auto value = root.find(row.batch_key);
    if (!value) continue;
    std::string text;
    switch (row.kind) {
      case SettingKind::Bool:
        text = detail::get_bool(*value) != row.batch_inverted ? "true" : "false";
        break;
      case SettingKind::Int:
        text = std::to_string(detail::get_int(*value, row.min, row.max));
        break;
      case SettingKind::Choice:
        text = numeric_choices(row) ? one_number_of(*value, row.choices) : one_of(*value, row.choices);
        break;
      case SettingKind::Text:
        text = detail::get_nonempty_string(*value);
        break;
    }
    batch.settings[row.key] = text;
  }
  return batch;
}

BatchFile read_batch_file(const std::string& path) {
  return parse_batch_file(detail::read_text_file(path), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace rsz::io
