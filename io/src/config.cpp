// Operator config files (docs/CLI_CONTRACT.md): parsing, overlay and resolution to the core parameter structs.
#include "rsz/io/config.h"
#include "rsz/io/resize.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "enum_names.h"
#include "json_util.h"
#include "op_fields.h"
#include "rsz/error.h"

namespace rsz::io {
namespace detail {
namespace {

// The optional "op" key must name the operator being read.
void check_op(const Ref& object, const char* op, const char* op_context) {
  const std::optional<Ref> ref = object.find("op");
  if (!ref) return;
  if (!ref->json().is_string() || ref->json().get_ref<const std::string&>() != op) {
    ref->fail_expected(std::string("\"") + op + "\" (" + op_context + ")");
  }
}

// An operator config object: only `keys` besides the optional "op" (which must name `op`) and "$schema" (a string,
// for editors); "op" is listed first and "$schema" last in the message for an unknown key.
void check_config_object(const Ref& ref, std::vector<std::string> keys, const char* op, const char* op_context) {
  keys.insert(keys.begin(), "op");
  keys.push_back("$schema");
  expect_object(ref, keys);
  check_op(ref, op, op_context);
  if (const auto schema = ref.find("$schema")) get_string(*schema);
}

}  // namespace

// Every operator config object is read field by field through the operator's table (ops.cpp): its keys are the
// table's, in the table's order.
ResampleConfig parse_resample_object(const Ref& ref, const char* op_context) {
  check_config_object(ref, resample_spec().keys(), "resample", op_context);
  return read_fields(ref, resample_table());
}

ResizeIntent parse_resize_object(const Ref& ref, const char* op_context, bool thumbnail) {
  // A thumbnail step takes what rsz thumbnail's flags say (--size --fit --gravity --mode --enlarge --no-antialias).
  std::vector<std::string> keys =
      thumbnail ? std::vector<std::string>{"interpolation", "antialiased"} : resample_spec().keys();
  for (const char* key : {"size", "fit", "gravity"}) keys.emplace_back(key);
  keys.emplace_back(thumbnail ? "enlarge" : "preset");
  check_config_object(ref, keys, thumbnail ? "thumbnail" : "resample", op_context);
  ResizeIntent intent;
  intent.config = read_fields(ref, resample_table());
  // A string key read by one of resize.h's parsers, whose usage error then names the key's JSON path.
  const auto text_of = [](const Ref& r, auto parse) {
    const std::string text = get_string(r);
    try {
      return parse(text);
    } catch (const Error& e) {
      r.fail(e.what());
    }
  };
  if (const auto r = ref.find("size")) {
    intent.box = text_of(*r, [&](const std::string& t) { return parse_size(t, "size", thumbnail); });
  }
  if (const auto r = ref.find("fit")) {
    intent.fit = text_of(*r, [](const std::string& t) { return parse_fit(t, "fit"); });
  }
  if (const auto r = ref.find("gravity")) {
    intent.gravity = text_of(*r, [](const std::string& t) { return parse_gravity(t, "gravity"); });
  }
  if (const auto r = ref.find("preset")) {
    // Kept as the step says it: plan_resize puts the preset's fields under the step's own.
    intent.preset = text_of(*r, [](const std::string& t) { return parse_resample_preset(t, "preset"); });
  }
  if (thumbnail && !intent.box) ref.required("size");
  const auto enlarge = ref.find("enlarge");
  const bool enlarged = enlarge && get_bool(*enlarge);
  try {
    if (thumbnail) apply_thumbnail_defaults(intent, enlarged);
    check_intent(intent);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::InvalidArgument) throw;
    ref.fail(e.what());
  }
  return intent;
}

Upsample2dConfig parse_upsample2d_object(const Ref& ref, const char* op_context) {
  check_config_object(ref, upsample2d_spec().keys(), "upsample2d", op_context);
  return read_fields(ref, upsample2d_table());
}

RoiAlignConfig parse_roi_align_object(const Ref& ref, const char* op_context) {
  check_config_object(ref, roi_align_spec().keys(), "roi_align", op_context);
  return read_fields(ref, roi_align_table());
}

}  // namespace detail

namespace {

constexpr const char* kFileContext = "the operator this config file is read for";

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

}  // namespace

ResampleConfig parse_resample_config(const std::string& json_text, const std::string& source) {
  const detail::Json json = detail::parse_json(json_text, source);
  return detail::parse_resample_object(detail::Ref(json, source), kFileContext);
}

Upsample2dConfig parse_upsample2d_config(const std::string& json_text, const std::string& source) {
  const detail::Json json = detail::parse_json(json_text, source);
  return detail::parse_upsample2d_object(detail::Ref(json, source), kFileContext);
}

RoiAlignConfig parse_roi_align_config(const std::string& json_text, const std::string& source) {
  const detail::Json json = detail::parse_json(json_text, source);
  return detail::parse_roi_align_object(detail::Ref(json, source), kFileContext);
}

ResampleConfig read_resample_config(const std::string& path) {
  return parse_resample_config(detail::read_text_file(path), path);
}

Upsample2dConfig read_upsample2d_config(const std::string& path) {
  return parse_upsample2d_config(detail::read_text_file(path), path);
}

RoiAlignConfig read_roi_align_config(const std::string& path) {
  return parse_roi_align_config(detail::read_text_file(path), path);
}

ResampleConfig overlay(const ResampleConfig& base, const ResampleConfig& over) {
  return detail::overlay_fields(base, over, detail::resample_table());
}

Upsample2dConfig overlay(const Upsample2dConfig& base, const Upsample2dConfig& over) {
  return detail::overlay_fields(base, over, detail::upsample2d_table());
}

RoiAlignConfig overlay(const RoiAlignConfig& base, const RoiAlignConfig& over) {
  return detail::overlay_fields(base, over, detail::roi_align_table());
}

ResolvedResample resolve(const ResampleConfig& config, const Dims& input_sizes) {
  if (input_sizes.size() != 4) {
    throw Error(ErrorCode::InvalidShape, "resample: the input has rank " + std::to_string(input_sizes.size()) +
                                             " (sizes " + dims_to_string(input_sizes) + "); rank 4 is required");
  }
  for (std::size_t i = 0; i < 4; ++i) {
    if (input_sizes[i] < 1) {
      throw Error(ErrorCode::InvalidShape, "resample: the input sizes " + dims_to_string(input_sizes) +
                                               " have a size below 1 on axis " + std::to_string(i));
    }
  }
  ResolvedResample out;
  detail::copy_to_params(config, out.params, detail::resample_table());
  if (config.output_sizes) {
    for (std::size_t i = 0; i < 4; ++i) {
      if ((*config.output_sizes)[i] < 1) {
        usage("resample: \"output_sizes\"[" + std::to_string(i) + "] = " + std::to_string((*config.output_sizes)[i]) +
              "; each output size must be >= 1");
      }
    }
  }
  if (config.scales) {
    out.params.scales = *config.scales;
  } else if (config.output_sizes) {
    for (std::size_t i = 0; i < 4; ++i) {
      out.params.scales[i] = static_cast<float>((*config.output_sizes)[i]) / static_cast<float>(input_sizes[i]);
    }
  } else {
    usage(
        "resample: \"scales\" is required unless \"output_sizes\" is given");
  }
  // The ranges are the core's (the scales from output sizes pass them: both sizes are >= 1).
  check_params(out.params);
  if (config.output_sizes) {
    out.output_sizes.assign(config.output_sizes->begin(), config.output_sizes->end());
  } else {
    out.output_sizes = resample_output_sizes(input_sizes, out.params.scales);
  }
  return out;
}

Upsample2dParams resolve(const Upsample2dConfig& config) {
  Upsample2dParams params;
  detail::copy_to_params(config, params, detail::upsample2d_table());
  if (!config.scale_size) {
    usage(
        "upsample2d: \"scale_size\" is required ({\"height\": H, \"width\": W})");
  }
  check_params(params);
  return params;
}

ResolvedRoiAlign resolve(const RoiAlignConfig& config) {
  ResolvedRoiAlign out;
  RoiAlignParams& p = out.params;
  if (!config.output_height || !config.output_width) {
    usage(std::string("roi_align: \"") + (config.output_height ? "output_width" : "output_height") +
          "\" is required (\"output_height\" and \"output_width\" set the crop size)");
  }
  if (*config.output_height < 1 || *config.output_width < 1) {
    usage("roi_align: \"output_height\" = " + std::to_string(*config.output_height) +
          ", \"output_width\" = " + std::to_string(*config.output_width) + "; both must be >= 1");
  }
  out.output_height = *config.output_height;
  out.output_width = *config.output_width;
  detail::copy_to_params(config, p, detail::roi_align_table());
  check_params(p);
  return out;
}

const char* to_string(ResamplePreset preset) {
  switch (preset) {
    case ResamplePreset::HalfPixel: return "half_pixel";
    case ResamplePreset::AlignCorners: return "align_corners";
    case ResamplePreset::Asymmetric: return "asymmetric";
    case ResamplePreset::NearestFloor: return "nearest_floor";
  }
  return "unknown";
}

namespace {
constexpr ResamplePreset kPresets[] = {ResamplePreset::HalfPixel, ResamplePreset::AlignCorners,
                                       ResamplePreset::Asymmetric, ResamplePreset::NearestFloor};
}  // namespace

std::vector<std::string> resample_preset_names() { return detail::enum_names(kPresets); }

ResamplePreset parse_resample_preset(const std::string& text, const std::string& what) {
  return detail::parse_enum(kPresets, text, what, "preset");
}

namespace {
// Every backend a caller may name, in the order --help lists them (a build without CUDA still knows the name).
constexpr Backend kBackends[] = {Backend::Auto, Backend::Cpu, Backend::Reference, Backend::Cuda};
}  // namespace

std::vector<std::string> backend_names() { return detail::enum_names(kBackends); }

Backend parse_backend(const std::string& text, const std::string& what) {
  return detail::parse_enum(kBackends, text, what);
}

ResampleConfig preset_config(ResamplePreset preset) {
  ResampleConfig config;
  const auto all = [](float v) { return std::array<float, 4>{v, v, v, v}; };
  switch (preset) {
    case ResamplePreset::HalfPixel:
      config.input_pixel_offsets = all(0.5f);
      config.output_pixel_offsets = all(-0.5f);
      break;
    case ResamplePreset::AlignCorners:
    case ResamplePreset::Asymmetric:
      config.input_pixel_offsets = all(0.0f);
      config.output_pixel_offsets = all(0.0f);
      break;
    case ResamplePreset::NearestFloor:
      config.interpolation = InterpolationMode::Nearest;
      config.input_pixel_offsets = all(0.5f);
      config.output_pixel_offsets = all(0.0f);
      break;
  }
  return config;
}

}  // namespace rsz::io
