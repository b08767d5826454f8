// Resize intent: what a user asks of a resize (a target as scales, output sizes or a box; how the image fits the box
// and where; shrink- or enlarge-only; a coordinate convention; the operator's own fields) as one value, and one pure
// function that turns it, for an input of given sizes, into the exact RESAMPLE1 parameters and the output canvas.
//
// The command line (resample, thumbnail), batch steps and the Python module (rsz.resize, rsz.thumbnail) all build a
// ResizeIntent and call plan_resize, so anything one of them can say, the others can say, with the same result.
//
// Image mode and tensor mode. An image is 1 x C x H x W: sizes, scales, boxes and presets address its height and
// width only; its batch and channel axes are copied (scale 1, offsets 0), whatever the config's N and C entries say
// (an RGBA photo resized with output_sizes [1, 3, 224, 224] stays RGBA). Tensor mode (.npy inputs, rsz.resample) is
// DirectML's RESAMPLE1 on all four axes exactly as configured.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rsz/io/config.h"

#pragma GCC visibility push(default)

namespace rsz::io {

// fill: exactly the box (the aspect ratio may change; rsz's plain WxH, sharp's fill, ImageMagick's WxH!).
// inside: as large as fits within the box, aspect kept (ImageMagick's plain WxH). outside: as small as covers the
// box, aspect kept (WxH^). cover: outside, then cropped to the box at the gravity. contain: inside, then padded to
// the box with zeros (black; transparent where there is alpha) at the gravity.
enum class Fit { Fill, Inside, Outside, Cover, Contain };
enum class Gravity { Center, North, South, East, West, NorthEast, NorthWest, SouthEast, SouthWest };
const char* to_string(Fit fit);          // "fill", "inside", "outside", "cover", "contain"
const char* to_string(Gravity gravity);  // "center", "north", ..., "southwest"
// Throw ErrorCode::InvalidArgument naming `what`, the text and the allowed names.
Fit parse_fit(const std::string& text, const std::string& what);
Gravity parse_gravity(const std::string& text, const std::string& what);
// Every spelling, in the order messages list them (for choices of flags).
std::vector<std::string> fit_names();
std::vector<std::string> gravity_names();

// A box or a percentage. parse_size reads ImageMagick's geometry: "WxH", "Wx", "xH", "W" (a width), "N%", each
// optionally followed by ! (fill), ^ (outside), > (inside, only shrink) or < (inside, only enlarge); `square` makes
// a plain "N" an N x N box (rsz thumbnail) instead of a width.
struct ResizeBox {
  std::string text;         // as the user wrote it, for messages ("" when built in code)
  std::int64_t width = 0;   // 0: from the other side and the aspect ratio
  std::int64_t height = 0;
  double percent = 0;       // N%: both sides times N / 100 (width and height unused)
  std::optional<Fit> fit;   // from a suffix
  bool only_shrink = false;   // '>'
  bool only_enlarge = false;  // '<'
};
ResizeBox parse_size(const std::string& text, const std::string& what, bool square = false);
std::string to_string(const ResizeBox& box);  // "200x100", "x100", "50%", with the suffix it was given

// How a front end spells the intent's fields in messages: JSON keys and Python keywords by default; the command line
// names its flags.
struct IntentSpelling {
  std::string size = "size";
  std::string fit = "fit";
  std::string gravity = "gravity";
  std::string enlarge = "enlarge";
  std::string scales = "scales or output sizes";
};
extern const IntentSpelling kFlagSpelling;  // --size, --fit, --gravity, --enlarge, --scale

// Where the target comes from: `box` (a size), or the config's scales / output_sizes (not both).
struct ResizeIntent {
  ResampleConfig config;                   // operator fields; scales / output_sizes when there is no box
  // A coordinate convention: plan_resize applies its fields (preset_config) under the config's own offsets and
  // mode, so a front end leaves them out of `config`.
  std::optional<ResamplePreset> preset;
  std::optional<ResizeBox> box;            // --size / --width / --height
  std::optional<Fit> fit;                  // how the box is met (default: the box's suffix, else fill)
  std::optional<Gravity> gravity;          // where cover crops and contain pads (default center)
  bool only_shrink = false;                // never enlarged (thumbnail's default): see plan_resize
  bool only_enlarge = false;
  IntentSpelling spelling;                 // for messages
};

// Refuses an intent that cannot mean anything, whatever the input (ErrorCode::InvalidArgument): no target; a box together with
// scales or output sizes; fit or gravity without a box; gravity without cover / contain; cover / contain without
// both sides; a fit given twice (suffix and fit); both only_shrink and only_enlarge. Messages name the fields as
// `intent.spelling` says.
void check_intent(const ResizeIntent& intent);

// rsz thumbnail's defaults, for an intent with a box: fitted inside the box unless a fit or the box's suffix says
// otherwise; never enlarged unless `enlarge` (a suffix replaces both defaults); antialiased linear filtering unless
// the config says otherwise or asks for nearest. Throws ErrorCode::InvalidArgument for enlarge with the '>' suffix.
void apply_thumbnail_defaults(ResizeIntent& intent, bool enlarge);

// Only shrinking (the '>' suffix, thumbnail's default): an image is never enlarged on either axis. Where the fit
// would enlarge it (any side of the resized image larger than the input's), it keeps its size; fill clamps each
// axis to the input's; cover then crops the kept image to the box where it is larger (never pads); contain always
// gives the box, the kept image padded. Only enlarging ('<') keeps images that are not smaller than the box.
//
// The exact operator call for one input, and where its result goes. The resample call writes `call_sizes`; the
// output tensor is `canvas`, with the call's result at (top, left) (contain pads: the rest is zero). For every other
// fit canvas == call_sizes and top == left == 0 (cover crops through the output offsets, not a copy).
struct ResizePlan {
  ResampleParams params;
  Dims call_sizes;
  Dims canvas;
  std::int64_t top = 0;
  std::int64_t left = 0;
  bool padded() const { return canvas != call_sizes; }
};
// `image`: image mode (H and W only, see above); otherwise tensor mode. Input sizes must be rank 4, each >= 1
// (ErrorCode::InvalidShape); a target whose sides overflow (2^31 or more) or an invalid intent is ErrorCode::InvalidArgument.
ResizePlan plan_resize(const ResizeIntent& intent, const Dims& input_sizes, bool image);

}  // namespace rsz::io

#pragma GCC visibility pop
