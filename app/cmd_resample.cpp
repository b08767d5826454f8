#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

#include "commands.h"
#include "mirrored_ring.h"
#include "streams.h"
#include "rsz/error.h"
#include "rsz/io/config.h"
#include "rsz/io/image.h"
#include "rsz/resample.h"

namespace rsz::app {
namespace {

// Flag values that do not depend on the input; --size/--width/--height are applied per input.
io::ResampleConfig fixed_flags(const ResampleOptions& o) {
  io::ResampleConfig flags;
  // A --preset flag sets its offsets (and mode) over the config file's; the other flags over both. plan_resize puts
  // intent.preset under the whole config (the file's offsets would win), so the flag's fields are set here.
  if (!o.preset.empty()) flags = io::preset_config(io::parse_resample_preset(o.preset, "--preset"));
  flags = io::overlay(flags, field_config<io::ResampleConfig>(o.fields));
  if (!o.scale.empty()) {  // the shorthand of --scales for images: H and W
    const auto v = io::parse_float_list(o.scale, "--scale", {1, 2}, "1 to 2 comma-separated numbers are allowed");
    const float sx = v[0];
    const float sy = v.size() == 2 ? v[1] : v[0];
    flags.scales = std::array<float, 4>{1.0f, 1.0f, sy, sx};
    ResampleParams scales_only;
    scales_only.scales = *flags.scales;
    check_flag("--scale", o.scale, scales_only);
  }
  return flags;
}

}  // namespace


void setup_resample(CLI::App& app, ResampleOptions& o) {
  CLI::App* cmd = app.add_subcommand("resample", "Resize images or rank-4 tensors (DirectML RESAMPLE1)");
  add_common_options(*cmd, o.common, io::kUseOperators | io::kUseResize);
  auto* scale = cmd->add_option("--scale", o.scale, "Scale factor S, or SX,SY (x first)");
  auto* size = cmd->add_option("--size", o.size,
                               "Output size: WxH (exactly, unless --fit says otherwise), Wx or xH (aspect kept), N%, "
                               "or WxH with a suffix as in ImageMagick: > shrink only, < enlarge only (both fit "
                               "inside, aspect kept), ^ cover the box, ! exactly");
  cmd->add_option("--fit", o.fit,
                  "How WxH is met, as in sharp: fill (default: exactly), inside (within, aspect kept; ImageMagick's "
                  "plain WxH), outside (covering, aspect kept), cover (outside, then cropped to WxH), contain "
                  "(inside, then padded to WxH with black / transparent)")
      ->check(CLI::IsMember(io::fit_names()));
  cmd->add_option("--gravity", o.gravity,
                  "Where cover crops and contain pads: center (default), north, south, east, west, northeast, "
                  "northwest, southeast, southwest")
      ->check(CLI::IsMember(io::gravity_names()));
  auto* width = cmd->add_option("--width", o.width, "Output width; the height keeps the aspect ratio")
                    ->check(whole_number(1, std::numeric_limits<std::int64_t>::max()));
  auto* height = cmd->add_option("--height", o.height, "Output height; the width keeps the aspect ratio")
                     ->check(whole_number(1, std::numeric_limits<std::int64_t>::max()));
  cmd->add_option("--preset", o.preset,
                  "Coordinate convention: half_pixel (default: DirectML RESAMPLE, PyTorch align_corners=False, "
                  "OpenCV INTER_LINEAR), align_corners, asymmetric, nearest_floor (PyTorch/OpenCV nearest)")
      ->check(CLI::IsMember(io::resample_preset_names()));
  // The config fields' flags: --mode, --scales, --input-offsets, --output-offsets, --output-sizes,
  // --rounding-direction, --antialias (io/ops.h).
  const auto fields = add_field_flags(*cmd, io::resample_spec(), o.fields);
  CLI::Option* scales = fields.at("scales");
  CLI::Option* sizes = fields.at("output_sizes");
  scale->excludes(size)->excludes(width)->excludes(height)->excludes(scales);
  size->excludes(width)->excludes(height)->excludes(sizes);
  width->excludes(sizes);
  height->excludes(sizes);
  cmd->footer(
      "Examples:\n"
      "  rsz resample -i photo.jpg -o small.jpg --scale 0.5\n"
      "  rsz resample -i 'photos/*.jpg' -o out/ --size 224x224\n"
      "  rsz resample -i photo.png -o thumb.png --width 160 --mode nearest\n"
      "  rsz resample -i 'photos/*.jpg' -o thumbs/ --size '256x256>'      (fit within 256x256, only shrink)\n"
      "  rsz resample -i photo.jpg -o square.jpg --size 224x224 --fit cover --gravity north\n"
      "  rsz resample -i photo.jpg -o half.jpg --size 50%\n"
      "  rsz resample -i photo.jpg -o small.jpg --scale 0.125 --antialias   (no aliasing when shrinking a lot)\n"
      "  rsz resample -i big.jpg -o small.jpg --width 800 --antialias --shrink-on-load   (fast, not exact)\n"
      "  rsz resample -i x.npy -o y.npy --scale 0.5 --mode nearest --rounding-direction round_prefer_floor\n"
      "  rsz resample -i x.npy -o y.npy --config configs/resample_scale.json");
}

OperatorCommand resample_command() {
  OperatorCommand c;
  c.command = "resample";
  c.op = "resample";
  c.setup = subcommand(setup_resample, run_resample);
  return c;
}

io::ResizeIntent resample_intent(const ResampleOptions& o) {
  const CommonOptions& common = o.common;
  if (!common.config.empty()) check_json_budget(common.config, "--config", common.memory_budget());
  const io::ResampleConfig file_config =
      common.config.empty() ? io::ResampleConfig{} : io::read_resample_config(common.config);
  io::ResizeIntent intent;
  intent.spelling = io::kFlagSpelling;
  intent.config = io::overlay(file_config, fixed_flags(o));
  if (!o.preset.empty()) intent.preset = io::parse_resample_preset(o.preset, "--preset");
  if (!o.size.empty()) {
    intent.box = io::parse_size(o.size, "--size", o.square_size);
  } else if (o.width > 0 || o.height > 0) {
    intent.box = io::ResizeBox{};
    intent.box->width = o.width;
    intent.box->height = o.height;
  }
  if (!o.fit.empty()) intent.fit = io::parse_fit(o.fit, "--fit");
  if (!o.gravity.empty()) intent.gravity = io::parse_gravity(o.gravity, "--gravity");
  if (intent.box) {  // the size flags replace a config file's scales and output sizes (flags over the file)
    intent.config.scales.reset();
    intent.config.output_sizes.reset();
  }
  if (!intent.box && !intent.fit && !intent.gravity && !intent.config.scales && !intent.config.output_sizes) {
    usage_error("resample: no scale given; use --scale, --size, --width, --height, --scales, --output-sizes or a "
                "config with \"scales\" or \"output_sizes\"");
  }
  io::check_intent(intent);
  return intent;
}

int run_resample(const ResampleOptions& o) {
  if (o.common.output.empty()) usage_error("resample: -o/--output is required");
  return run_resize(o.common, resample_intent(o), "resample");
}

int run_resize(const CommonOptions& common, const io::ResizeIntent& intent, const char* op) {
  return run_operator({op, intent, {}, {common.config}}, common);
}

}  // namespace rsz::app
