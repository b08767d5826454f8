// --size as ImageMagick and sharp users write it, and --fit / --gravity: how an image of one size is placed in the
// requested box. All of it becomes one exact RESAMPLE1 call per image: sizes and scales (out / in), and for
// `cover` output offsets that shift the output window over the resized image (a crop without a copy); `contain`
// resamples into the middle of a zero-filled canvas (a strided output view).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rsz::app {

// fill: exactly the box (the aspect ratio may change; rsz's plain WxH, sharp's fill, ImageMagick's WxH!).
// inside: as large as fits within the box, aspect kept (ImageMagick's plain WxH). outside: as small as covers
// the box, aspect kept (WxH^). cover: outside, then cropped to the box at the gravity. contain: inside, then
// padded to the box with zeros (black; transparent where there is alpha) at the gravity.
enum class Fit { Fill, Inside, Outside, Cover, Contain };
enum class Gravity { Center, North, South, East, West, NorthEast, NorthWest, SouthEast, SouthWest };

struct Geometry {
  std::int64_t width = 0;   // 0: from the other side and the aspect ratio
  std::int64_t height = 0;
  double percent = 0;       // N%: both sides times N / 100 (width and height unused)
  std::optional<Fit> fit;   // from a suffix: '!' fill, '^' outside, '>' or '<' inside
  bool only_shrink = false;   // '>': only images larger than the box are resized
  bool only_enlarge = false;  // '<': only images smaller than the box are resized
};

// "WxH", "Wx", "xH", "W" (a width), "N%", each optionally followed by one of ! ^ > <. Throws a usage error naming
// `flag` and the accepted forms.
Geometry parse_geometry(const std::string& text, const std::string& flag);
Fit parse_fit(const std::string& text);          // fill, inside, outside, cover, contain
Gravity parse_gravity(const std::string& text);  // center, north, south, east, west, northeast, ...

// Where one image goes: resized to resized_w x resized_h; the output is canvas_w x canvas_h. For cover the canvas
// is the window (offset_x, offset_y) of the resized image; for contain the resized image sits at (offset_x,
// offset_y) of the canvas; otherwise canvas == resized and the offsets are 0.
struct FitPlan {
  std::int64_t resized_w = 0, resized_h = 0;
  std::int64_t canvas_w = 0, canvas_h = 0;
  std::int64_t offset_x = 0, offset_y = 0;
};
FitPlan plan_fit(std::int64_t in_w, std::int64_t in_h, const Geometry& geometry, Fit fit, Gravity gravity);

}  // namespace rsz::app
