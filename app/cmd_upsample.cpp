#include <functional>
#include <memory>
#include <variant>

#include "commands.h"
#include "streams.h"
#include "rsz/error.h"
#include "rsz/resample.h"
#include "rsz/upsample2d.h"

namespace rsz::app {

void setup_upsample(CLI::App& app, UpsampleOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "upsample", "Upsample images or rank-4/5 tensors by integer factors (DirectML UPSAMPLE_2D)");
  add_common_options(*cmd, o.common, io::kUseOperators);
  cmd->add_option("--factor", o.factor, "Integer factor F, or H,W (height first)");
  add_field_flags(*cmd, io::upsample2d_spec(), o.fields);  // --mode
  cmd->footer(
      "Examples:\n"
      "  rsz upsample -i icon.png -o icon@2x.png --factor 2\n"
      "  rsz upsample -i features.npy -o up.npy --factor 2,3 --mode linear\n"
      "  rsz upsample -i 'tiles/*.png' -o out/ --config configs/upsample_2x_nearest.json");
}

OperatorCommand upsample_command() {
  OperatorCommand c;
  c.command = "upsample";
  c.op = "upsample2d";
  c.setup = subcommand(setup_upsample, run_upsample);
  return c;
}

int run_upsample(const UpsampleOptions& o) {
  const CommonOptions& common = o.common;
  if (common.output.empty()) usage_error("upsample: -o/--output is required");
  if (!common.config.empty()) check_json_budget(common.config, "--config", common.memory_budget());
  const io::Upsample2dConfig file_config =
      common.config.empty() ? io::Upsample2dConfig{} : io::read_upsample2d_config(common.config);
  io::Upsample2dConfig flags = field_config<io::Upsample2dConfig>(o.fields);
  if (!o.factor.empty()) {
    const bool pair = o.factor.find(',') != std::string::npos;
    const auto v = io::parse_int_list(o.factor, "--factor", ',', pair ? 2 : 1);
    if (v[0] > UINT32_MAX || v.back() > UINT32_MAX) {
      usage_error("--factor " + o.factor + ": factors must be <= 4294967295");
    }
    flags.scale_size = ScaleSize{static_cast<std::uint32_t>(v[0]), static_cast<std::uint32_t>(v.back())};
  }
  const io::Upsample2dConfig merged = io::overlay(file_config, flags);
  if (!merged.scale_size) usage_error("upsample: no factor given; use --factor or a config with \"scale_size\"");
  return run_operator({"upsample2d", merged, {}, {common.config}}, common);
}

}  // namespace rsz::app
