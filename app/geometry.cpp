#include "geometry.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "common.h"

namespace rsz::app {
namespace {

constexpr const char* kForms = "WxH, Wx, xH, W or N%, optionally followed by ! (exact), ^ (fill the box), "
                               "> (only shrink) or < (only enlarge)";

std::int64_t side(double in, double scale) {
  return std::max<std::int64_t>(1, std::llround(in * scale));
}

// Where a span of `inner` sits in `outer` (either may be larger) along one axis: 0, centred, or at the far end.
std::int64_t align(std::int64_t outer, std::int64_t inner, int where) {
  const std::int64_t room = std::max(outer, inner) - std::min(outer, inner);
  return where < 0 ? 0 : where > 0 ? room : room / 2;
}

}  // namespace

Geometry parse_geometry(const std::string& text, const std::string& flag) {
  Geometry g;
  std::string body = text;
  if (!body.empty() && std::string("!^><").find(body.back()) != std::string::npos) {
    switch (body.back()) {
      case '!': g.fit = Fit::Fill; break;
      case '^': g.fit = Fit::Outside; break;
      case '>': g.fit = Fit::Inside; g.only_shrink = true; break;
      default: g.fit = Fit::Inside; g.only_enlarge = true; break;
    }
    body.pop_back();
  }
  const auto bad = [&] { usage_error(flag + " " + text + ": not a size; " + kForms); };
  if (!body.empty() && body.back() == '%') {
    body.pop_back();
    double v = 0;
    const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
    if (ec != std::errc() || end != body.data() + body.size() || !(v > 0) || !std::isfinite(v) || g.fit) bad();
    g.percent = v;
    return g;
  }
  const std::size_t x = body.find('x');
  const auto number = [&](const std::string& part, std::int64_t& out) {
    if (part.empty()) return;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    if (ec != std::errc() || end != part.data() + part.size() || out < 1) bad();
  };
  number(x == std::string::npos ? body : body.substr(0, x), g.width);
  if (x != std::string::npos) number(body.substr(x + 1), g.height);
  if (g.width == 0 && g.height == 0) bad();
  if (g.fit && (g.width == 0 || g.height == 0) && *g.fit != Fit::Inside) {
    usage_error(flag + " " + text + ": ! and ^ need both sides (WxH)");
  }
  return g;
}

Fit parse_fit(const std::string& text) {
  if (text == "fill") return Fit::Fill;
  if (text == "inside") return Fit::Inside;
  if (text == "outside") return Fit::Outside;
  if (text == "cover") return Fit::Cover;
  if (text == "contain") return Fit::Contain;
  usage_error("--fit " + text + ": fill, inside, outside, cover or contain is allowed");
}

Gravity parse_gravity(const std::string& text) {
  static const std::pair<const char*, Gravity> names[] = {
      {"center", Gravity::Center},       {"north", Gravity::North},         {"south", Gravity::South},
      {"east", Gravity::East},           {"west", Gravity::West},           {"northeast", Gravity::NorthEast},
      {"northwest", Gravity::NorthWest}, {"southeast", Gravity::SouthEast}, {"southwest", Gravity::SouthWest}};
  for (const auto& [name, g] : names) {
    if (text == name) return g;
  }
  usage_error("--gravity " + text + ": center, north, south, east, west, northeast, northwest, southeast or southwest "
              "is allowed");
}

FitPlan plan_fit(std::int64_t in_w, std::int64_t in_h, const Geometry& g, Fit fit, Gravity gravity) {
  FitPlan p;
  const auto w = static_cast<double>(in_w);
  const auto h = static_cast<double>(in_h);
  if (g.percent > 0) {
    p.resized_w = side(w, g.percent / 100.0);
    p.resized_h = side(h, g.percent / 100.0);
  } else if (g.width == 0 || g.height == 0) {  // one side given: the other keeps the aspect ratio
    const double s = g.width > 0 ? static_cast<double>(g.width) / w : static_cast<double>(g.height) / h;
    p.resized_w = g.width > 0 ? g.width : side(w, s);
    p.resized_h = g.height > 0 ? g.height : side(h, s);
    if ((g.only_shrink && p.resized_w >= in_w && p.resized_h >= in_h) ||
        (g.only_enlarge && p.resized_w <= in_w && p.resized_h <= in_h)) {
      p.resized_w = in_w;
      p.resized_h = in_h;
    }
  } else {
    const double sx = static_cast<double>(g.width) / w;
    const double sy = static_cast<double>(g.height) / h;
    switch (fit) {
      case Fit::Fill:
        p.resized_w = g.width;
        p.resized_h = g.height;
        break;
      case Fit::Inside:
      case Fit::Contain:
        p.resized_w = sx <= sy ? g.width : side(w, sy);
        p.resized_h = sx <= sy ? side(h, sx) : g.height;
        break;
      case Fit::Outside:
      case Fit::Cover:
        p.resized_w = sx >= sy ? g.width : side(w, sy);
        p.resized_h = sx >= sy ? side(h, sx) : g.height;
        break;
    }
    const bool larger = in_w > g.width || in_h > g.height;
    const bool smaller = in_w < g.width && in_h < g.height;
    if ((g.only_shrink && !larger) || (g.only_enlarge && !smaller)) {
      p.resized_w = in_w;
      p.resized_h = in_h;
    }
  }
  p.canvas_w = p.resized_w;
  p.canvas_h = p.resized_h;
  if (g.percent == 0 && g.width > 0 && g.height > 0 && (fit == Fit::Cover || fit == Fit::Contain)) {
    p.canvas_w = g.width;
    p.canvas_h = g.height;
    const int gx = gravity == Gravity::West || gravity == Gravity::NorthWest || gravity == Gravity::SouthWest   ? -1
                   : gravity == Gravity::East || gravity == Gravity::NorthEast || gravity == Gravity::SouthEast ? 1
                                                                                                                : 0;
    const int gy = gravity == Gravity::North || gravity == Gravity::NorthWest || gravity == Gravity::NorthEast   ? -1
                   : gravity == Gravity::South || gravity == Gravity::SouthWest || gravity == Gravity::SouthEast ? 1
                                                                                                                 : 0;
    p.offset_x = align(p.canvas_w, p.resized_w, gx);
    p.offset_y = align(p.canvas_h, p.resized_h, gy);
  }
  return p;
}

}  // namespace rsz::app
