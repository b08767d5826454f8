// The operator spec layer (ops.h): the three operators' field tables, the generic readers they are made of, and the
// readers of numbers in flag text that the command line's shorthands share with them.
#include "rsz/io/ops.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>

#include "op_fields.h"
#include "rsz/error.h"

namespace rsz::io {
namespace detail {
namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kUInt32Max = std::numeric_limits<std::uint32_t>::max();

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

// ---- defaults as JSON text, from the core Params ----

std::string json_of(float v) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}
std::string json_of(bool v) { return v ? "true" : "false"; }
std::string json_of(std::uint32_t v) { return std::to_string(v); }
std::string json_of(const std::array<float, 4>& v) {
  return "[" + json_of(v[0]) + ", " + json_of(v[1]) + ", " + json_of(v[2]) + ", " + json_of(v[3]) + "]";
}
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
std::string json_of(E v) {
  return std::string("\"") + to_string(v) + "\"";
}

template <typename E>
using Choices = std::vector<std::pair<std::string, E>>;

template <typename E>
std::string allowed_list(const Choices<E>& choices) {
  std::string list;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i].first;
  }
  return list;
}

// ---- one binding per kind ----

template <typename Config>
using Params = typename ParamsOf<Config>::type;

template <typename Config, typename T>
FieldBinding<Config> bind(FieldSpec spec, std::optional<T> Config::*member,
                          std::function<T(const Ref&)> from_json,
                          std::function<T(const std::string&, const std::string&)> from_text) {
  FieldBinding<Config> b;
  b.spec = std::move(spec);
  b.from_json = [member, from_json](const Ref& r, Config& c) { c.*member = from_json(r); };
  b.from_text = [member, from_text](const std::string& flag, const std::string& text, Config& c) {
    c.*member = from_text(flag, text);
  };
  b.overlay = [member](Config& base, const Config& over) {
    if (over.*member) base.*member = over.*member;
  };
  return b;
}

// Ranges live in the core (check_params): a field's value is checked there as soon as it is read, alone among the
// core's defaults (which pass), so a config key or a flag is refused with the file and key, or the flag and its
// text, in front of the core's message. Rules between fields (minimum <= maximum samples) wait for resolve, which
// checks the whole Params the same way.
template <typename Config, typename T>
FieldBinding<Config> checked_by_core(FieldBinding<Config> b, std::optional<T> Config::*member,
                                     std::function<void(const T&, Params<Config>&)> set) {
  auto check = [member, set](const Config& c, const std::function<void(const std::string&)>& refuse) {
    Params<Config> p;
    set(*(c.*member), p);
    try {
      rsz::check_params(p);
    } catch (const InternalError&) {
      throw;
    } catch (const Error& e) {
      refuse(e.what());
    }
  };
  b.from_json = [read = b.from_json, check](const Ref& r, Config& c) {
    read(r, c);
    check(c, [&r](const std::string& what) { r.fail(what); });
  };
  b.from_text = [read = b.from_text, check](const std::string& flag, const std::string& text, Config& c) {
    read(flag, text, c);
    check(c, [&](const std::string& what) { usage(flag + " " + text + ": " + what); });
  };
  return b;
}

// The field is a member of the core Params: its default is read from there, its range is the core's, and resolve
// copies it there.
template <typename Config, typename T>
FieldBinding<Config> in_params(FieldBinding<Config> b, std::optional<T> Config::*member, T Params<Config>::*param) {
  b.spec.default_json = json_of(Params<Config>{}.*param);
  b.to_params = [member, param](const Config& c, Params<Config>& p) {
    if (c.*member) p.*param = *(c.*member);
  };
  return checked_by_core<Config, T>(std::move(b), member, [param](const T& v, Params<Config>& p) { p.*param = v; });
}

template <typename Config, typename E>
FieldBinding<Config> enum_field(const char* key, const char* flag, const char* help, std::optional<E> Config::*member,
                                E Params<Config>::*param, Choices<E> choices) {
  FieldSpec spec{key, flag, help, FieldKind::Enum, {}, ""};
  for (const auto& choice : choices) spec.choices.push_back(choice.first);
  auto from_json = [choices](const Ref& r) { return get_enum<E>(r, choices); };
  auto from_text = [choices](const std::string& what, const std::string& text) -> E {
    for (const auto& choice : choices) {
      if (text == choice.first) return choice.second;
    }
    usage(what + " " + text + ": " + allowed_list(choices) + " is allowed");
  };
  return in_params(bind<Config, E>(spec, member, from_json, from_text), member, param);
}

template <typename Config>
FieldBinding<Config> bool_field(const char* key, const char* flag, const char* help,
                                std::optional<bool> Config::*member, bool Params<Config>::*param) {
  auto from_text = [](const std::string& what, const std::string& text) {
    if (text == "true") return true;
    if (text == "false") return false;
    usage(what + " " + text + ": true or false is allowed");
  };
  return in_params(bind<Config, bool>({key, flag, help, FieldKind::Bool, {}, ""}, member, get_bool, from_text), member,
                   param);
}

template <typename Config>
FieldBinding<Config> float_field(const char* key, const char* flag, const char* help,
                                 std::optional<float> Config::*member, float Params<Config>::*param) {
  auto from_text = [](const std::string& what, const std::string& text) {
    return parse_float_list(text, what, {1}, "one number is allowed")[0];
  };
  return in_params(bind<Config, float>({key, flag, help, FieldKind::Float, {}, ""}, member, get_float, from_text),
                   member, param);
}

// 4 floats (N, C, H, W), or with `one_for_all` also 1 for every axis.
std::array<float, 4> floats4_of(const std::string& what, const std::string& text, bool one_for_all) {
  const std::vector<float> v =
      one_for_all ? parse_float_list(text, what, {1, 4}, "give 1 value (every axis) or 4 values (N,C,H,W)")
                  : parse_float_list(text, what, {4}, "give 4 values (N,C,H,W)");
  if (v.size() == 1) return {v[0], v[0], v[0], v[0]};
  return {v[0], v[1], v[2], v[3]};
}

template <typename Config>
FieldBinding<Config> floats4_field(const char* key, const char* flag, const char* help,
                                   std::optional<std::array<float, 4>> Config::*member,
                                   std::array<float, 4> Params<Config>::*param) {
  auto from_text = [](const std::string& what, const std::string& text) { return floats4_of(what, text, true); };
  return in_params(bind<Config, std::array<float, 4>>({key, flag, help, FieldKind::Floats4, {}, ""}, member,
                                                      get_float4, from_text),
                   member, param);
}

template <typename Config>
FieldBinding<Config> scales4_field(const char* key, const char* flag, const char* help,
                                   std::optional<std::array<float, 4>> Config::*member) {
  auto from_text = [](const std::string& what, const std::string& text) { return floats4_of(what, text, false); };
  return checked_by_core<Config, std::array<float, 4>>(
      bind<Config, std::array<float, 4>>({key, flag, help, FieldKind::Scales4, {}, ""}, member, get_float4, from_text),
      member, [](const std::array<float, 4>& v, Params<Config>& p) { p.scales = v; });
}

template <typename Config>
FieldBinding<Config> sizes4_field(const char* key, const char* flag, const char* help,
                                  std::optional<std::array<std::int64_t, 4>> Config::*member) {
  auto from_json = [](const Ref& r) {
    expect_array(r, "integers", 4);
    std::array<std::int64_t, 4> sizes{};
    for (std::size_t i = 0; i < 4; ++i) sizes[i] = get_int(r.element(i), 1, kInt64Max);
    return sizes;
  };
  auto from_text = [](const std::string& what, const std::string& text) {
    const std::vector<std::int64_t> v = parse_int_list(text, what, ',', 4);
    return std::array<std::int64_t, 4>{v[0], v[1], v[2], v[3]};
  };
  return bind<Config, std::array<std::int64_t, 4>>({key, flag, help, FieldKind::Sizes4, {}, ""}, member, from_json,
                                                   from_text);
}

template <typename Config>
FieldBinding<Config> count_field(const char* key, const char* flag, const char* help,
                                 std::optional<std::uint32_t> Config::*member,
                                 std::uint32_t Params<Config>::*param) {
  auto from_json = [](const Ref& r) { return get_uint32(r, 0); };
  auto from_text = [](const std::string& what, const std::string& text) {
    return static_cast<std::uint32_t>(parse_int(text, what, 0, kUInt32Max));
  };
  return in_params(bind<Config, std::uint32_t>({key, flag, help, FieldKind::Count, {}, ""}, member, from_json,
                                               from_text),
                   member, param);
}

template <typename Config>
FieldBinding<Config> size_field(const char* key, const char* flag, const char* help,
                                std::optional<std::int64_t> Config::*member) {
  auto from_json = [](const Ref& r) { return get_int(r, 1, kInt64Max); };
  auto from_text = [](const std::string& what, const std::string& text) {
    return parse_int(text, what, 1, kInt64Max);
  };
  return bind<Config, std::int64_t>({key, flag, help, FieldKind::Size, {}, ""}, member, from_json, from_text);
}

template <typename Config>
FieldBinding<Config> scale_size_field(const char* key, const char* help, std::optional<ScaleSize> Config::*member,
                                      ScaleSize Params<Config>::*param) {
  auto from_json = [](const Ref& r) {
    expect_object(r, {"height", "width"});
    ScaleSize size;
    size.height = get_uint32(r.required("height"), 0);
    size.width = get_uint32(r.required("width"), 0);
    return size;
  };
  auto from_text = [](const std::string& what, const std::string& text) {
    const std::vector<std::int64_t> v = parse_int_list(text, what, 'x', 2, 0, kUInt32Max, "give HEIGHTxWIDTH");
    ScaleSize size;
    size.height = static_cast<std::uint32_t>(v[0]);
    size.width = static_cast<std::uint32_t>(v[1]);
    return size;
  };
  FieldBinding<Config> b =
      bind<Config, ScaleSize>({key, "", help, FieldKind::ScaleSize, {}, ""}, member, from_json, from_text);
  b.to_params = [member, param](const Config& c, Params<Config>& p) {
    if (c.*member) p.*param = *(c.*member);
  };
  return checked_by_core<Config, ScaleSize>(std::move(b), member,  // required: no default
                                            [param](const ScaleSize& v, Params<Config>& p) { p.*param = v; });
}

Choices<InterpolationMode> interpolations() {
  return {{to_string(InterpolationMode::Nearest), InterpolationMode::Nearest},
          {to_string(InterpolationMode::Linear), InterpolationMode::Linear}};
}

template <typename Config>
OperatorTable<Config> make_table(const char* op, const char* command, std::vector<FieldBinding<Config>> fields) {
  OperatorTable<Config> table;
  table.spec.op = op;
  table.spec.command = command;
  for (const auto& field : fields) table.spec.fields.push_back(field.spec);
  table.fields = std::move(fields);
  return table;
}

}  // namespace

const OperatorTable<ResampleConfig>& resample_table() {
  using C = ResampleConfig;
  using P = ResampleParams;
  static const OperatorTable<C> table = make_table<C>(
      "resample", "resample",
      {enum_field<C>("interpolation", "--mode", "nearest or linear", &C::interpolation, &P::interpolation,
                     interpolations()),
       scales4_field<C>("scales", "--scales",
                        "All four scales N,C,H,W (output / input; on images N and C are copied whatever they say)",
                        &C::scales),
       floats4_field<C>("input_pixel_offsets", "--input-offsets", "input_pixel_offsets: one value or N,C,H,W",
                        &C::input_pixel_offsets, &P::input_pixel_offsets),
       floats4_field<C>("output_pixel_offsets", "--output-offsets", "output_pixel_offsets: one value or N,C,H,W",
                        &C::output_pixel_offsets, &P::output_pixel_offsets),
       sizes4_field<C>("output_sizes", "--output-sizes",
                       "All four output sizes N,C,H,W (on images N and C are the image's whatever they say)",
                       &C::output_sizes),
       enum_field<C>("rounding_direction", "--rounding-direction",
                     "Nearest mode's rounding (DirectML RESAMPLE2, ONNX nearest_mode); DirectML's decreasing = floor, "
                     "increasing = ceil",
                     &C::rounding_direction, &P::rounding_direction,
                     {{to_string(NearestRounding::RoundPreferCeil), NearestRounding::RoundPreferCeil},
                      {to_string(NearestRounding::RoundPreferFloor), NearestRounding::RoundPreferFloor},
                      {to_string(NearestRounding::Floor), NearestRounding::Floor},
                      {to_string(NearestRounding::Ceil), NearestRounding::Ceil},
                      {"decreasing", NearestRounding::Floor},
                      {"increasing", NearestRounding::Ceil}}),
       bool_field<C>("antialiased", "--antialias",
                     "Antialiased linear downscaling (DirectML RESAMPLE3, ONNX antialias=1, like PyTorch's "
                     "antialias=True): the triangle filter widened by 1/scale on each shrunk axis; resample stays "
                     "exact RESAMPLE1 without it (rsz thumbnail turns it on)",
                     &C::antialiased, &P::antialiased)});
  return table;
}

const OperatorTable<Upsample2dConfig>& upsample2d_table() {
  using C = Upsample2dConfig;
  using P = Upsample2dParams;
  static const OperatorTable<C> table = make_table<C>(
      "upsample2d", "upsample",
      {enum_field<C>("interpolation", "--mode", "nearest (replication) or linear", &C::interpolation,
                     &P::interpolation, interpolations()),
       scale_size_field<C>("scale_size", "Integer factors {\"height\": H, \"width\": W} (the command line's --factor)",
                           &C::scale_size, &P::scale_size)});
  return table;
}

const OperatorTable<RoiAlignConfig>& roi_align_table() {
  using C = RoiAlignConfig;
  using P = RoiAlignParams;
  static const OperatorTable<C> table = make_table<C>(
      "roi_align", "roi-align",
      {enum_field<C>("interpolation", "--mode", "linear or nearest", &C::interpolation, &P::interpolation,
                     interpolations()),
       enum_field<C>("reduction", "--reduction", "average or max", &C::reduction, &P::reduction,
                     {{to_string(RoiReduction::Average), RoiReduction::Average},
                      {to_string(RoiReduction::Max), RoiReduction::Max}}),
       float_field<C>("spatial_scale_x", "", "Scale of the boxes' x coordinates (--spatial-scale S or SX,SY)",
                      &C::spatial_scale_x, &P::spatial_scale_x),
       float_field<C>("spatial_scale_y", "", "Scale of the boxes' y coordinates (--spatial-scale S or SX,SY)",
                      &C::spatial_scale_y, &P::spatial_scale_y),
       float_field<C>("out_of_bounds_input_value", "--oob-value", "out_of_bounds_input_value: the value of samples "
                      "outside the input", &C::out_of_bounds_input_value, &P::out_of_bounds_input_value),
       count_field<C>("minimum_samples_per_output", "", "Fewest samples per output pixel and axis (--samples N or "
                      "MIN:MAX)", &C::minimum_samples_per_output, &P::minimum_samples_per_output),
       count_field<C>("maximum_samples_per_output", "", "Most samples per output pixel and axis (--samples N or "
                      "MIN:MAX)", &C::maximum_samples_per_output, &P::maximum_samples_per_output),
       size_field<C>("output_height", "", "Crop height (--output-size WxH)", &C::output_height),
       size_field<C>("output_width", "", "Crop width (--output-size WxH)", &C::output_width),
       float_field<C>("input_pixel_offset", "--input-offset", "input_pixel_offset", &C::input_pixel_offset,
                      &P::input_pixel_offset),
       float_field<C>("output_pixel_offset", "--output-offset", "output_pixel_offset", &C::output_pixel_offset,
                      &P::output_pixel_offset),
       bool_field<C>("align_regions_to_corners", "--align-corners", "align_regions_to_corners",
                     &C::align_regions_to_corners, &P::align_regions_to_corners)});
  return table;
}

namespace {

template <typename Config>
void set_from_text(const OperatorTable<Config>& table, Config& config, const std::string& key,
                   const std::string& text, const std::string& what) {
  for (const auto& field : table.fields) {
    if (field.spec.key != key) continue;
    field.from_text(!what.empty() ? what : field.spec.flag.empty() ? key : field.spec.flag, text, config);
    return;
  }
  throw Error(ErrorCode::InvalidArgument, table.spec.op + " has no field \"" + key + "\"");
}

}  // namespace
}  // namespace detail

const char* to_string(FieldKind kind) {
  switch (kind) {
    case FieldKind::Enum: return "enum";
    case FieldKind::Bool: return "bool";
    case FieldKind::Float: return "float";
    case FieldKind::Floats4: return "floats4";
    case FieldKind::Scales4: return "scales4";
    case FieldKind::Sizes4: return "sizes4";
    case FieldKind::Count: return "count";
    case FieldKind::Size: return "size";
    case FieldKind::ScaleSize: return "scale_size";
  }
  return "?";
}

std::vector<std::string> OperatorSpec::keys() const {
  std::vector<std::string> out;
  for (const FieldSpec& f : fields) out.push_back(f.key);
  return out;
}

const FieldSpec* OperatorSpec::find(const std::string& key) const {
  for (const FieldSpec& f : fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

const OperatorSpec& resample_spec() { return detail::resample_table().spec; }
const OperatorSpec& upsample2d_spec() { return detail::upsample2d_table().spec; }
const OperatorSpec& roi_align_spec() { return detail::roi_align_table().spec; }

const std::vector<const OperatorSpec*>& operator_specs() {
  static const std::vector<const OperatorSpec*> specs = {&resample_spec(), &upsample2d_spec(), &roi_align_spec()};
  return specs;
}

void set_field(ResampleConfig& config, const std::string& key, const std::string& text, const std::string& what) {
  detail::set_from_text(detail::resample_table(), config, key, text, what);
}
void set_field(Upsample2dConfig& config, const std::string& key, const std::string& text, const std::string& what) {
  detail::set_from_text(detail::upsample2d_table(), config, key, text, what);
}
void set_field(RoiAlignConfig& config, const std::string& key, const std::string& text, const std::string& what) {
  detail::set_from_text(detail::roi_align_table(), config, key, text, what);
}

namespace {

// ---- numbers in flag text ----

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, separator)) items.push_back(item);
  if (!text.empty() && text.back() == separator) items.emplace_back();
  return items;
}

[[noreturn]] void refuse(const std::string& what, const std::string& text, const std::string& why) {
  throw Error(ErrorCode::InvalidArgument, what + " " + text + ": " + why);
}

// An item of `text`: sizes start at 1; counts and factors at 0, their range being the core's.
std::int64_t whole_number(const std::string& item, const std::string& text, const std::string& what,
                          std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
  if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v < min || v > max) {
    refuse(what, text,
           "'" + item + "' is not a whole number >= " + std::to_string(min) +
               (max < std::numeric_limits<std::int64_t>::max() ? " (at most " + std::to_string(max) + ")" : ""));
  }
  return v;
}

}  // namespace

std::vector<float> parse_float_list(const std::string& text, const std::string& what,
                                    const std::vector<std::size_t>& counts, const std::string& allowed) {
  std::vector<float> values;
  for (const std::string& item : split(text, ',')) {
    float v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || !std::isfinite(v)) {
      refuse(what, text, "'" + item + "' is not a finite number");
    }
    values.push_back(v);
  }
  if (std::find(counts.begin(), counts.end(), values.size()) == counts.end()) {
    refuse(what, text, std::to_string(values.size()) + " values given; " + allowed);
  }
  return values;
}

std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& what, char separator,
                                         std::size_t count, std::int64_t min, std::int64_t max,
                                         const std::string& allowed) {
  const std::vector<std::string> items = split(text, separator);
  if (items.size() != count) {
    refuse(what, text,
           !allowed.empty() ? allowed
                            : "expected " + std::to_string(count) + " whole numbers separated by '" +
                                  std::string(1, separator) + "'");
  }
  std::vector<std::int64_t> values;
  for (const std::string& item : items) values.push_back(whole_number(item, text, what, min, max));
  return values;
}

std::int64_t parse_int(const std::string& text, const std::string& what, std::int64_t min, std::int64_t max) {
  return whole_number(text, text, what, min, max);
}

}  // namespace rsz::io
