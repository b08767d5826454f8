// Resize intent (resize.h): parsing of sizes, fits and gravities, and the one planning function every front end
// calls.
#include "rsz/io/resize.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

#include "rsz/error.h"

namespace rsz::io {
namespace {

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

constexpr const char* kForms = "WxH, Wx, xH, W or N%, optionally followed by ! (exact), ^ (fill the box), "
                               "> (only shrink) or < (only enlarge)";

constexpr std::pair<const char*, Fit> kFits[] = {
    {"fill", Fit::Fill}, {"inside", Fit::Inside}, {"outside", Fit::Outside}, {"cover", Fit::Cover},
    {"contain", Fit::Contain}};
constexpr std::pair<const char*, Gravity> kGravities[] = {
    {"center", Gravity::Center},       {"north", Gravity::North},         {"south", Gravity::South},
    {"east", Gravity::East},           {"west", Gravity::West},           {"northeast", Gravity::NorthEast},
    {"northwest", Gravity::NorthWest}, {"southeast", Gravity::SouthEast}, {"southwest", Gravity::SouthWest}};

template <typename Enum, std::size_t N>
const char* name_of(const std::pair<const char*, Enum> (&table)[N], Enum value) {
  for (const auto& [name, v] : table) {
    if (v == value) return name;
  }
  return "?";
}

template <typename Enum, std::size_t N>
Enum parse_named(const std::pair<const char*, Enum> (&table)[N], const std::string& text, const std::string& what) {
  std::string allowed;
  for (std::size_t i = 0; i < N; ++i) {
    if (text == table[i].first) return table[i].second;
    allowed += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(table[i].first);
  }
  usage(what + " \"" + text + "\": " + allowed + " is allowed");
}

// Sides beyond this are refused: no image or tensor axis is that long, and the products below stay exact.
constexpr double kMaxSide = 2147483647.0;

std::int64_t side(double in, double scale, const std::string& what) {
  const double v = std::round(in * scale);
  if (!(v < kMaxSide)) {
    char amount[32];
    std::snprintf(amount, sizeof amount, "%.3g", in * scale);
    usage(what + ": the resized side would be " + amount + " pixels; sides up to 2147483646 are allowed");
  }
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(v));
}

// Where a span of `inner` sits in `outer` (either may be larger) along one axis: 0, centred, or at the far end.
std::int64_t align(std::int64_t outer, std::int64_t inner, int where) {
  const std::int64_t room = std::max(outer, inner) - std::min(outer, inner);
  return where < 0 ? 0 : where > 0 ? room : room / 2;
}

// -1 west / north, 1 east / south, 0 centred.
int horizontal(Gravity g) {
  if (g == Gravity::West || g == Gravity::NorthWest || g == Gravity::SouthWest) return -1;
  if (g == Gravity::East || g == Gravity::NorthEast || g == Gravity::SouthEast) return 1;
  return 0;
}
int vertical(Gravity g) {
  if (g == Gravity::North || g == Gravity::NorthWest || g == Gravity::NorthEast) return -1;
  if (g == Gravity::South || g == Gravity::SouthWest || g == Gravity::SouthEast) return 1;
  return 0;
}

Fit effective_fit(const ResizeIntent& intent) {
  if (intent.fit) return *intent.fit;
  if (intent.box && intent.box->fit) return *intent.box->fit;
  return Fit::Fill;
}

// The image's size after the resize (before cover's crop or contain's padding), and the canvas.
struct BoxPlan {
  std::int64_t resized_w = 0, resized_h = 0;
  std::int64_t canvas_w = 0, canvas_h = 0;
  std::int64_t offset_x = 0, offset_y = 0;
};

BoxPlan plan_box(std::int64_t in_w, std::int64_t in_h, const ResizeIntent& intent) {
  const ResizeBox& b = *intent.box;
  const Fit fit = effective_fit(intent);
  const bool only_shrink = intent.only_shrink || b.only_shrink;
  const bool only_enlarge = intent.only_enlarge || b.only_enlarge;
  const std::string what = intent.spelling.size + " " + to_string(b);
  BoxPlan p;
  const auto w = static_cast<double>(in_w);
  const auto h = static_cast<double>(in_h);
  bool keep = false;
  if (b.percent > 0) {
    p.resized_w = side(w, b.percent / 100.0, what);
    p.resized_h = side(h, b.percent / 100.0, what);
    keep = (only_shrink && b.percent >= 100) || (only_enlarge && b.percent <= 100);
  } else if (b.width == 0 || b.height == 0) {  // one side given: the other keeps the aspect ratio
    const double s = b.width > 0 ? static_cast<double>(b.width) / w : static_cast<double>(b.height) / h;
    p.resized_w = b.width > 0 ? b.width : side(w, s, what);
    p.resized_h = b.height > 0 ? b.height : side(h, s, what);
    keep = (only_shrink && p.resized_w >= in_w && p.resized_h >= in_h) ||
           (only_enlarge && p.resized_w <= in_w && p.resized_h <= in_h);
  } else {
    const double sx = static_cast<double>(b.width) / w;
    const double sy = static_cast<double>(b.height) / h;
    switch (fit) {
      case Fit::Fill:
        p.resized_w = b.width;
        p.resized_h = b.height;
        break;
      case Fit::Inside:
      case Fit::Contain:
        p.resized_w = sx <= sy ? b.width : side(w, sy, what);
        p.resized_h = sx <= sy ? side(h, sx, what) : b.height;
        break;
      case Fit::Outside:
      case Fit::Cover:
        p.resized_w = sx >= sy ? b.width : side(w, sy, what);
        p.resized_h = sx >= sy ? side(h, sx, what) : b.height;
        break;
    }
    const bool smaller = in_w < b.width && in_h < b.height;
    if (only_shrink && fit == Fit::Fill) {  // each axis at most the input's
      p.resized_w = std::min(p.resized_w, in_w);
      p.resized_h = std::min(p.resized_h, in_h);
    }
    keep = (only_shrink && (p.resized_w > in_w || p.resized_h > in_h)) || (only_enlarge && !smaller);
  }
  if (keep) {
    p.resized_w = in_w;
    p.resized_h = in_h;
  }
  p.canvas_w = p.resized_w;
  p.canvas_h = p.resized_h;
  if (b.percent == 0 && b.width > 0 && b.height > 0 && (fit == Fit::Cover || fit == Fit::Contain)) {
    p.canvas_w = b.width;
    p.canvas_h = b.height;
    if (fit == Fit::Cover && keep) {  // an image kept at its size is cropped to the box, never enlarged to it
      p.canvas_w = std::min(b.width, in_w);
      p.canvas_h = std::min(b.height, in_h);
    }
    const Gravity gravity = intent.gravity.value_or(Gravity::Center);
    p.offset_x = align(p.canvas_w, p.resized_w, horizontal(gravity));
    p.offset_y = align(p.canvas_h, p.resized_h, vertical(gravity));
  }
  return p;
}

}  // namespace

const char* to_string(Fit fit) { return name_of(kFits, fit); }
const char* to_string(Gravity gravity) { return name_of(kGravities, gravity); }
Fit parse_fit(const std::string& text, const std::string& what) { return parse_named(kFits, text, what); }
template <typename Enum, std::size_t N>
std::vector<std::string> names_of(const std::pair<const char*, Enum> (&table)[N]) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(entry.first);
  return names;
}

std::vector<std::string> fit_names() { return names_of(kFits); }
std::vector<std::string> gravity_names() { return names_of(kGravities); }

Gravity parse_gravity(const std::string& text, const std::string& what) {
  return parse_named(kGravities, text, what);
}

ResizeBox parse_size(const std::string& text, const std::string& what, bool square) {
  ResizeBox b;
  std::string body = text;
  if (!body.empty() && std::string("!^><").find(body.back()) != std::string::npos) {
    switch (body.back()) {
      case '!': b.fit = Fit::Fill; break;
      case '^': b.fit = Fit::Outside; break;
      case '>': b.fit = Fit::Inside; b.only_shrink = true; break;
      default: b.fit = Fit::Inside; b.only_enlarge = true; break;
    }
    body.pop_back();
  }
  const auto bad = [&] { usage(what + " " + text + ": not a size; " + kForms); };
  if (!body.empty() && body.back() == '%') {
    body.pop_back();
    double v = 0;
    const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
    if (ec != std::errc() || end != body.data() + body.size() || !(v > 0) || !std::isfinite(v) || b.fit) bad();
    b.percent = v;
    b.text = text;
    return b;
  }
  const std::size_t x = body.find('x');
  const auto number = [&](const std::string& part, std::int64_t& out) {
    if (part.empty()) return;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    if (ec != std::errc() || end != part.data() + part.size() || out < 1 || out > 2147483646) bad();
  };
  number(x == std::string::npos ? body : body.substr(0, x), b.width);
  if (x != std::string::npos) number(body.substr(x + 1), b.height);
  if (b.width == 0 && b.height == 0) bad();
  if (square && x == std::string::npos) b.height = b.width;
  b.text = text;
  if (b.fit && (b.width == 0 || b.height == 0) && *b.fit != Fit::Inside) {
    usage(what + " " + text + ": ! and ^ need both sides (WxH)");
  }
  return b;
}

std::string to_string(const ResizeBox& b) {
  if (!b.text.empty()) return b.text;
  std::string text;
  if (b.percent > 0) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, b.percent);
    text = std::string(buf, ec == std::errc() ? end : buf) + "%";
  } else {
    text = (b.width > 0 ? std::to_string(b.width) : "") + "x" + (b.height > 0 ? std::to_string(b.height) : "");
  }
  if (b.only_shrink) return text + ">";
  if (b.only_enlarge) return text + "<";
  if (b.fit == Fit::Fill) return text + "!";
  if (b.fit == Fit::Outside) return text + "^";
  return text;
}

void check_intent(const ResizeIntent& intent) {
  const ResampleConfig& c = intent.config;
  const IntentSpelling& n = intent.spelling;
  if (!intent.box && (intent.fit || intent.gravity)) {
    usage(n.fit + " and " + n.gravity + " place an image in a box; give the box with " + n.size + " WxH");
  }
  if (!intent.box && !c.scales && !c.output_sizes) {
    usage("no target size: give " + n.size + " (WxH, Wx, xH, N%) or " + n.scales);
  }
  if (!intent.box) return;
  const ResizeBox& b = *intent.box;
  if (c.scales || c.output_sizes) {
    usage(n.size + " " + to_string(b) + " and " + n.scales + " both set the output size; give one");
  }
  if (b.fit && intent.fit) {
    usage(n.size + " " + to_string(b) + " with " + n.fit + " " + to_string(*intent.fit) +
          ": the size's suffix already says how it fits; drop one");
  }
  if ((intent.only_shrink || b.only_shrink) && (intent.only_enlarge || b.only_enlarge)) {
    usage(n.size + " " + to_string(b) + ": only shrinking and only enlarging at once leave nothing to do; drop one");
  }
  const Fit fit = effective_fit(intent);
  if (intent.gravity && fit != Fit::Cover && fit != Fit::Contain) {
    usage(n.gravity + " " + to_string(*intent.gravity) + ": only with " + n.fit +
          " cover or contain (it places the crop or the padding)");
  }
  if ((fit == Fit::Cover || fit == Fit::Contain) && (b.percent > 0 || b.width == 0 || b.height == 0)) {
    usage(n.fit + " " + to_string(fit) + " with " + n.size + " " + to_string(b) + ": needs both sides of the box (WxH)");
  }
}

const IntentSpelling kFlagSpelling = {"--size", "--fit", "--gravity", "--enlarge", "--scale"};

void apply_thumbnail_defaults(ResizeIntent& intent, bool enlarge) {
  const IntentSpelling& n = intent.spelling;
  if (!intent.box) usage("thumbnail: " + n.size + " is required (the box: N, WxH, Wx, xH or N%)");
  if (enlarge && intent.box->only_shrink) {
    usage("thumbnail: " + n.size + " " + to_string(*intent.box) + " with " + n.enlarge +
          ": the '>' suffix only shrinks; drop one");
  }
  if (!intent.box->fit) {
    if (!intent.fit) intent.fit = Fit::Inside;
    intent.only_shrink = !enlarge;
  }
  if (!intent.config.antialiased) {
    intent.config.antialiased = intent.config.interpolation.value_or(InterpolationMode::Linear) != InterpolationMode::Nearest;
  }
}

ResizePlan plan_resize(const ResizeIntent& intent, const Dims& in, bool image) {
  check_intent(intent);
  if (in.size() != 4) {
    throw Error(ErrorCode::InvalidShape, "resample: the input has rank " + std::to_string(in.size()) + " (sizes " +
                                             dims_to_string(in) + "); rank 4 is required");
  }
  ResampleConfig config = intent.preset ? overlay(preset_config(*intent.preset), intent.config) : intent.config;
  std::optional<BoxPlan> box;
  if (intent.box && in[2] >= 1 && in[3] >= 1) box = plan_box(in[3], in[2], intent);  // else resolve names the shape
  if (box) {  // a box addresses H and W; N and C are copied in both modes (scale 1)
    config.scales = std::array<float, 4>{1.0f, 1.0f, static_cast<float>(box->resized_h) / static_cast<float>(in[2]),
                                         static_cast<float>(box->resized_w) / static_cast<float>(in[3])};
    config.output_sizes = std::array<std::int64_t, 4>{in[0], in[1], box->canvas_h, box->canvas_w};
  }
  if (image) {  // the batch and channel axes are copied: scale 1, the input's sizes, offsets 0
    if (config.scales) (*config.scales)[0] = (*config.scales)[1] = 1.0f;
    if (config.output_sizes) {
      (*config.output_sizes)[0] = in[0];
      (*config.output_sizes)[1] = in[1];
    }
    std::array<float, 4> ip = config.input_pixel_offsets.value_or(ResampleParams{}.input_pixel_offsets);
    std::array<float, 4> op = config.output_pixel_offsets.value_or(ResampleParams{}.output_pixel_offsets);
    ip[0] = ip[1] = op[0] = op[1] = 0.0f;
    config.input_pixel_offsets = ip;
    config.output_pixel_offsets = op;
  }
  ResolvedResample resolved = resolve(config, in);
  ResizePlan plan;
  if (intent.preset == ResamplePreset::AlignCorners) {
    // (m - 1) / (n - 1) from the size the image is resized to: for cover that is the whole resized image, not the
    // window the output keeps of it.
    for (std::size_t a = 0; a < 4; ++a) {
      std::int64_t m = resolved.output_sizes[a];
      if (box && a == 2) m = box->resized_h;
      if (box && a == 3) m = box->resized_w;
      const std::int64_t n = in[a];
      resolved.params.scales[a] = n > 1 && m > 1 ? static_cast<float>(m - 1) / static_cast<float>(n - 1) : 1.0f;
    }
  }
  plan.call_sizes = resolved.output_sizes;
  plan.canvas = resolved.output_sizes;
  if (box) {
    const Fit fit = effective_fit(intent);
    if (fit == Fit::Cover) {  // the output window over the resized image: shifted output offsets, no copy
      resolved.params.output_pixel_offsets[2] -= static_cast<float>(box->offset_y);
      resolved.params.output_pixel_offsets[3] -= static_cast<float>(box->offset_x);
    } else if (fit == Fit::Contain) {
      plan.call_sizes[2] = box->resized_h;
      plan.call_sizes[3] = box->resized_w;
      plan.top = box->offset_y;
      plan.left = box->offset_x;
    }
  }
  plan.params = resolved.params;
  return plan;
}

}  // namespace rsz::io
