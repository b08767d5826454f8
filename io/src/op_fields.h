// The operator spec layer's bindings (ops.h): for every field of an operator config, its spec and how it is read
// from JSON and from flag text, laid over another config, and copied into the core Params. config.cpp parses,
// overlays and resolves through these; ops.cpp declares them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "json_util.h"
#include "rsz/io/config.h"
#include "rsz/io/ops.h"

namespace rsz::io::detail {

template <typename Config>
struct ParamsOf;
template <>
struct ParamsOf<ResampleConfig> {
  using type = ResampleParams;
};
template <>
struct ParamsOf<Upsample2dConfig> {
  using type = Upsample2dParams;
};
template <>
struct ParamsOf<RoiAlignConfig> {
  using type = RoiAlignParams;
};

template <typename Config>
struct FieldBinding {
  FieldSpec spec;
  std::function<void(const Ref& value, Config& config)> from_json;
  std::function<void(const std::string& flag, const std::string& text, Config& config)> from_text;
  std::function<void(Config& base, const Config& over)> overlay;
  // Copies a set field into the Params; null for fields that are not Params members (sizes, scales).
  std::function<void(const Config& config, typename ParamsOf<Config>::type& params)> to_params;
};

template <typename Config>
struct OperatorTable {
  OperatorSpec spec;
  std::vector<FieldBinding<Config>> fields;
};

const OperatorTable<ResampleConfig>& resample_table();
const OperatorTable<Upsample2dConfig>& upsample2d_table();
const OperatorTable<RoiAlignConfig>& roi_align_table();

// The fields of an object whose keys were checked, read into a config.
template <typename Config>
Config read_fields(const Ref& object, const OperatorTable<Config>& table) {
  Config config;
  for (const auto& field : table.fields) {
    if (const auto value = object.find(field.spec.key)) field.from_json(*value, config);
  }
  return config;
}

template <typename Config>
Config overlay_fields(const Config& base, const Config& over, const OperatorTable<Config>& table) {
  Config out = base;
  for (const auto& field : table.fields) field.overlay(out, over);
  return out;
}

template <typename Config>
void copy_to_params(const Config& config, typename ParamsOf<Config>::type& params, const OperatorTable<Config>& table) {
  for (const auto& field : table.fields) {
    if (field.to_params) field.to_params(config, params);
  }
}

}  // namespace rsz::io::detail
