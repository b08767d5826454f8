// The operator commands' options (rsz/pipeline/commands.h): their table, and their reading into the operator request
// (jobs.h's OperatorRequest) that the command line and rsz::pipeline::run both run.
#include "rsz/pipeline/commands.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "jobs.h"
#include "pipeline.h"
#include "rsz/io/ops.h"
#include "rsz/io/run_settings.h"

namespace rsz::pipeline {

namespace {

CommandOption text(const char* key, const char* help) {
  CommandOption o;
  o.key = key;
  o.flag = "--" + o.long_name();
  o.help = help;
  return o;
}
CommandOption flag(const char* key, const char* help) {
  CommandOption o = text(key, help);
  o.kind = OptionKind::Bool;
  return o;
}
CommandOption choice(const char* key, const char* help, std::vector<std::string> choices) {
  CommandOption o = text(key, help);
  o.kind = OptionKind::Choice;
  o.choices = std::move(choices);
  return o;
}
CommandOption whole(const char* key, const char* help) {
  CommandOption o = text(key, help);
  o.kind = OptionKind::Int;
  o.min = 1;
  o.max = std::numeric_limits<std::int64_t>::max();
  return o;
}
CommandOption required(CommandOption o) {
  o.required = true;
  return o;
}
CommandOption file(CommandOption o) {
  o.file = true;
  return o;
}
CommandOption excluding(CommandOption o, std::vector<std::string> keys) {
  o.excludes = std::move(keys);
  return o;
}

// The rows of an operator's config fields that have a flag (io/ops.h): the spec's help with its default, its choices.
void add_fields(std::vector<CommandOption>& options, const io::OperatorSpec& spec,
                const std::map<std::string, std::vector<std::string>>& excludes = {}) {
  for (const io::FieldSpec& field : spec.fields) {
    if (field.flag.empty()) continue;  // set through a shorthand of the command (--output-size, --samples, ...)
    CommandOption o;
    o.flag = field.flag;
    o.key = o.flag.substr(2);
    std::replace(o.key.begin(), o.key.end(), '-', '_');
    o.help = field.help;
    if (!field.default_json.empty() && field.kind != io::FieldKind::Bool) {  // a flag's default is its absence
      std::string shown = field.default_json;
      shown.erase(std::remove(shown.begin(), shown.end(), '"'), shown.end());
      o.help += " (default " + shown + ")";
    }
    o.kind = field.kind == io::FieldKind::Bool   ? OptionKind::Bool
             : field.kind == io::FieldKind::Enum ? OptionKind::Choice
                                                 : OptionKind::Text;
    if (field.kind == io::FieldKind::Enum) o.choices = field.choices;
    o.field = field.key;
    if (const auto it = excludes.find(o.key); it != excludes.end()) o.excludes = it->second;
    options.push_back(std::move(o));
  }
}

CommandSpec resample_spec() {
  CommandSpec c;
  c.command = "resample";
  c.op = "resample";
  c.summary = "Resize images or rank-4 tensors (DirectML RESAMPLE1)";
  c.uses = io::kUseOperators | io::kUseResize;
  c.options = {
      excluding(text("scale", "Scale factor S, or SX,SY (x first)"), {"size", "width", "height", "scales"}),
      excluding(text("size", "Output size: WxH (exactly, unless --fit says otherwise), Wx or xH (aspect kept), N%, "
                             "or WxH with a suffix as in ImageMagick: > shrink only, < enlarge only (both fit "
                             "inside, aspect kept), ^ cover the box, ! exactly"),
                {"width", "height", "output_sizes"}),
      choice("fit",
             "How WxH is met, as in sharp: fill (default: exactly), inside (within, aspect kept; ImageMagick's "
             "plain WxH), outside (covering, aspect kept), cover (outside, then cropped to WxH), contain "
             "(inside, then padded to WxH with black / transparent)",
             io::fit_names()),
      choice("gravity",
             "Where cover crops and contain pads: center (default), north, south, east, west, northeast, "
             "northwest, southeast, southwest",
             io::gravity_names()),
      excluding(whole("width", "Output width; the height keeps the aspect ratio"), {"output_sizes"}),
      excluding(whole("height", "Output height; the width keeps the aspect ratio"), {"output_sizes"}),
      choice("preset",
             "Coordinate convention: half_pixel (default: DirectML RESAMPLE, PyTorch align_corners=False, "
             "OpenCV INTER_LINEAR), align_corners, asymmetric, nearest_floor (PyTorch/OpenCV nearest)",
             io::resample_preset_names()),
  };
  // The config fields' flags: --mode, --scales, --input-offsets, --output-offsets, --output-sizes,
  // --rounding-direction, --antialias.
  add_fields(c.options, io::resample_spec());
  c.footer =
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
      "  rsz resample -i x.npy -o y.npy --config configs/resample_scale.json";
  return c;
}

CommandSpec upsample_spec() {
  CommandSpec c;
  c.command = "upsample";
  c.op = "upsample2d";
  c.summary = "Upsample images or rank-4/5 tensors by integer factors (DirectML UPSAMPLE_2D)";
  c.uses = io::kUseOperators;
  c.options = {text("factor", "Integer factor F, or H,W (height first)")};
  add_fields(c.options, io::upsample2d_spec());  // --mode
  c.footer =
      "Examples:\n"
      "  rsz upsample -i icon.png -o icon@2x.png --factor 2\n"
      "  rsz upsample -i features.npy -o up.npy --factor 2,3 --mode linear\n"
      "  rsz upsample -i 'tiles/*.png' -o out/ --config configs/upsample_2x_nearest.json";
  return c;
}

CommandSpec roi_align_spec() {
  CommandSpec c;
  c.command = "roi-align";
  c.op = "roi_align";
  c.summary = "Cut ROI crops out of images or pool ROIs of tensors (DirectML ROI_ALIGN / ROI_ALIGN1)";
  c.uses = io::kUseOperators | io::kUseRoiAlign;
  c.options = {
      required(file(text("rois",
                         "ROIs: JSON ({\"rois\": [[x1,y1,x2,y2],...]} or a dataset {\"images\": [...]}), .npy [R,4], or "
                         "dataset annotations: COCO instances JSON, Pascal VOC .xml (file or folder), YOLO .txt (file or "
                         "folder, with -i)"))),
      text("image_root",
           "COCO / VOC: folder the annotations' image file names are relative to (default: the annotation "
           "file's folder)"),
      flag("allow_outside_root",
           "COCO / VOC: take image names that leave the image root (absolute, or '..' above it); refused by "
           "default, since a dataset file could otherwise point rsz at any file"),
      file(text("names",
                "YOLO: class names: a text file, one per line, or Ultralytics' data.yaml (its names: list or map) "
                "(default: class numbers as labels)")),
      choice("rois_check",
             "Boxes outside the image, empty or inverted (legal ROI_ALIGN, likely dataset mistakes): warn "
             "(default: one line per image, crops still written), error (refuse the run), skip (no crop: "
             "counted in the summary, listed in the manifest with the reason) or off; images only",
             io::rois_check_names()),
      choice("size_mismatch",
             "COCO / VOC: an image whose size is not the one the annotations state (width/height, <size>; "
             "after EXIF orientation unless --no-exif): fail (default: that image fails, exit 1, the others "
             "are cropped) or scale (its boxes are scaled to the image: x by w_image/w_stated, y likewise)",
             io::size_mismatch_names()),
      flag("skip_crowd",
           "COCO: leave out annotations with \"iscrowd\": 1 (regions of many objects); counted in the summary, "
           "listed in the manifest"),
      flag("skip_difficult",
           "Pascal VOC: leave out objects marked <difficult>1</difficult>; counted in the summary, listed in "
           "the manifest"),
      text("manifest",
           "Also write a crop manifest: one line per crop with its path, source image, box, label and id "
           "(.jsonl or .csv); with --plan, each shard writes its own, its number before the extension "
           "(m.jsonl -> m.00003.jsonl), and rsz merge joins them into the name given"),
      file(text("batch_indices", "uint32 .npy [R] batch index per ROI (default: all 0)")),
      text("output_size", "Crop size WxH (output_width x output_height)"),
  };
  // The config fields' flags: --mode, --reduction, --oob-value, --input-offset, --output-offset, --align-corners.
  add_fields(c.options, io::roi_align_spec());
  c.options.push_back(text("samples", "Samples per output pixel and axis: N, or MIN:MAX (default 1:4294967295, adaptive)"));
  c.options.push_back(text("spatial_scale", "ROI coordinate scale S, or SX,SY (default 1)"));
  c.footer =
      "Examples:\n"
      "  rsz roi-align -i photo.jpg --rois boxes.json --output-size 128x128 -o crops/\n"
      "  rsz roi-align --rois dataset.json --output-size 64x64 -o 'crops/{label}/{stem}_{id}.png'\n"
      "  rsz roi-align --rois instances_val2017.json --image-root val2017 --output-size 224x224 \\\n"
      "      -o 'crops/{label}/{id}.jpg' --manifest crops.jsonl\n"
      "  rsz roi-align -i 'images/*.jpg' --rois labels/ --names classes.txt --output-size 96x96 -o 'crops/{label}/{id}.png'\n"
      "  rsz roi-align -i features.npy --rois rois.npy --batch-indices bi.npy -o pooled.npy "
      "--output-size 7x7 --spatial-scale 0.25 --samples 2";
  return c;
}

CommandSpec thumbnail_spec() {
  CommandSpec c;
  c.command = "thumbnail";
  c.op = "thumbnail";
  c.summary = "Fit photos within a box, antialiased, auto-oriented, metadata kept (resample preset)";
  c.uses = io::kUseOperators | io::kUseResize;
  c.options = {
      required(text("size",
                    "The box: N (NxN, also with a suffix: 256> is a 256x256 box), WxH, Wx or xH, or N%; a suffix as "
                    "in --help of resample (! ^ > <) replaces the default (fit inside, only shrink)")),
      choice("fit",
             "inside (default), cover (fill the box, then crop it at --gravity: square thumbnails), contain "
             "(pad to the box), outside, fill",
             io::fit_names()),
      choice("gravity", "Where cover crops and contain pads (default center)", io::gravity_names()),
      choice("mode", "linear (default) or nearest (not antialiased)",
             io::resample_spec().find("interpolation")->choices),
      flag("enlarge", "Also enlarge images smaller than the box (default: they keep their size)"),
      flag("no_antialias", "Exact RESAMPLE1 2-tap filtering (aliases when shrinking by more than 2x)"),
  };
  c.options[3].field = "interpolation";
  c.footer =
      "Examples:\n"
      "  rsz thumbnail -i 'photos/*.jpg' -o thumbs/ --size 256\n"
      "  rsz thumbnail -r -i photos/ -o 'thumbs/{relpath}.jpg' --size 320x240 --quality 85   (photos/cats/a.png -> "
      "thumbs/cats/a.jpg)\n"
      "  rsz thumbnail -i 'photos/*.jpg' -o squares/ --size 128 --fit cover --jobs 2\n"
      "  rsz thumbnail -i 'camera/*.jpg' -o thumbs/ --size 512 --shrink-on-load   (fast, not exact)\n"
      "  rsz thumbnail -i photos/ -o thumbs/ --size 224 --decode gpu --device all   (JPEGs decoded and resized on every "
      "GPU)\n"
      "Large JPEGs are decoded band by band into the filter, so a camera-size photo is never whole in memory.\n"
      "Differences from vipsthumbnail: no shrink-on-load unless --shrink-on-load (by default every pixel is read, "
      "results are exact and the same on every machine), and images smaller than the box are kept as they are "
      "unless --enlarge.";
  return c;
}

}  // namespace

std::string CommandOption::long_name() const {
  std::string name = key;
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

const CommandOption* CommandSpec::find(const std::string& key) const {
  for (const CommandOption& o : options) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

const std::vector<CommandSpec>& command_specs() {
  static const std::vector<CommandSpec> table = {resample_spec(), upsample_spec(), roi_align_spec(),
                                                 thumbnail_spec()};
  return table;
}

const CommandSpec* find_command(const std::string& command) {
  for (const CommandSpec& c : command_specs()) {
    if (c.command == command || c.op == command) return &c;
  }
  return nullptr;
}

}  // namespace rsz::pipeline

namespace rsz::app {

namespace {

using pipeline::CommandOption;
using pipeline::CommandSpec;
using pipeline::OptionKind;
using Texts = std::map<std::string, std::string>;

std::string given(const Texts& texts, const char* key) {
  const auto it = texts.find(key);
  return it == texts.end() ? std::string() : it->second;
}
bool flag_given(const Texts& texts, const char* key) { return given(texts, key) == "true"; }

// The checks the command line's parser makes of each option (its name, its text, required, excludes), for options
// that come from a library call: the same refusals, in the flags' words.
void check_options(const CommandSpec& spec, const Texts& texts) {
  for (const auto& [key, value] : texts) {
    const CommandOption* o = spec.find(key);
    if (o == nullptr) {
      std::string keys;
      for (const CommandOption& row : spec.options) keys += (keys.empty() ? "" : ", ") + row.key;
      usage_error("\"" + printable(key) + "\" is not an option of " + spec.command +
                  " or a run-level setting; its options are config, " + keys);
    }
    const std::string what = o->flag + " " + printable(value);
    if (o->kind == OptionKind::Bool && value != "true" && value != "false") {
      usage_error(what + ": true or false is allowed");
    }
    if (o->kind == OptionKind::Choice && std::find(o->choices.begin(), o->choices.end(), value) == o->choices.end()) {
      usage_error(what + ": " + one_of_allowed(o->choices));
    }
    if (o->kind == OptionKind::Int) parse_whole(value, o->flag, o->min, o->max);
    for (const std::string& other : o->excludes) {
      if (texts.count(other) != 0) usage_error(o->flag + " excludes " + spec.find(other)->flag);
    }
  }
  for (const CommandOption& o : spec.options) {
    if (o.required && texts.count(o.key) == 0) usage_error(o.flag + " is required");
  }
}

// The config fields set alone by their flags (--mode, --scales, ...), over a default config.
template <typename Config>
Config field_flags(const CommandSpec& spec, const Texts& texts) {
  Config config;
  for (const CommandOption& o : spec.options) {
    const auto it = texts.find(o.key);
    if (!o.field.empty() && it != texts.end()) io::set_field(config, o.field, it->second, o.flag);
  }
  return config;
}

// resample's and thumbnail's flags that do not depend on the input; --size/--width/--height are applied per input.
io::ResampleConfig fixed_resample_flags(const CommandSpec& spec, const Texts& texts) {
  io::ResampleConfig flags;
  // A --preset flag sets its offsets (and mode) over the config file's; the other flags over both. plan_resize puts
  // intent.preset under the whole config (the file's offsets would win), so the flag's fields are set here.
  const std::string preset = given(texts, "preset");
  if (!preset.empty()) flags = io::preset_config(io::parse_resample_preset(preset, "--preset"));
  flags = io::overlay(flags, field_flags<io::ResampleConfig>(spec, texts));
  const std::string scale = given(texts, "scale");
  if (!scale.empty()) {  // the shorthand of --scales for images: H and W
    const auto v = io::parse_float_list(scale, "--scale", {1, 2}, "1 to 2 comma-separated numbers are allowed");
    const float sx = v[0];
    const float sy = v.size() == 2 ? v[1] : v[0];
    flags.scales = std::array<float, 4>{1.0f, 1.0f, sy, sx};
    ResampleParams scales_only;
    scales_only.scales = *flags.scales;
    check_flag("--scale", scale, scales_only);
  }
  return flags;
}

io::ResizeIntent resize_intent(const CommandSpec& spec, const Texts& texts, const CommonOptions& common) {
  if (!common.config.empty()) check_json_budget(common.config, "--config", common.memory_budget());
  const io::ResampleConfig file_config =
      common.config.empty() ? io::ResampleConfig{} : io::read_resample_config(common.config);
  const bool thumbnail = spec.op == "thumbnail";
  io::ResizeIntent intent;
  intent.spelling = io::kFlagSpelling;
  intent.config = io::overlay(file_config, fixed_resample_flags(spec, texts));
  if (const std::string preset = given(texts, "preset"); !preset.empty()) {
    intent.preset = io::parse_resample_preset(preset, "--preset");
  }
  const std::string size = given(texts, "size");
  const std::string width = given(texts, "width");
  const std::string height = given(texts, "height");
  if (!size.empty()) {
    intent.box = io::parse_size(size, "--size", thumbnail);  // a thumbnail's plain N is an N x N box
  } else if (!width.empty() || !height.empty()) {
    intent.box = io::ResizeBox{};
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    if (!width.empty()) intent.box->width = parse_whole(width, "--width", 1, kMax);
    if (!height.empty()) intent.box->height = parse_whole(height, "--height", 1, kMax);
  }
  if (const std::string fit = given(texts, "fit"); !fit.empty()) intent.fit = io::parse_fit(fit, "--fit");
  if (const std::string gravity = given(texts, "gravity"); !gravity.empty()) {
    intent.gravity = io::parse_gravity(gravity, "--gravity");
  }
  if (intent.box) {  // the size flags replace a config file's scales and output sizes (flags over the file)
    intent.config.scales.reset();
    intent.config.output_sizes.reset();
  }
  if (!intent.box && !intent.fit && !intent.gravity && !intent.config.scales && !intent.config.output_sizes) {
    usage_error("resample: no scale given; use --scale, --size, --width, --height, --scales, --output-sizes or a "
                "config with \"scales\" or \"output_sizes\"");
  }
  io::check_intent(intent);
  if (thumbnail) {
    // The thumbnail defaults: a plain N is an N x N box, fitted inside it unless --fit or the size's suffix says
    // otherwise, never enlarged unless --enlarge or the '<' suffix, antialiased unless --no-antialias.
    if (flag_given(texts, "no_antialias")) intent.config.antialiased = false;
    io::apply_thumbnail_defaults(intent, flag_given(texts, "enlarge"));
  }
  return intent;
}

io::Upsample2dConfig upsample_config(const CommandSpec& spec, const Texts& texts, const CommonOptions& common) {
  if (!common.config.empty()) check_json_budget(common.config, "--config", common.memory_budget());
  const io::Upsample2dConfig file_config =
      common.config.empty() ? io::Upsample2dConfig{} : io::read_upsample2d_config(common.config);
  io::Upsample2dConfig flags = field_flags<io::Upsample2dConfig>(spec, texts);
  if (const std::string factor = given(texts, "factor"); !factor.empty()) {
    const bool pair = factor.find(',') != std::string::npos;
    const auto v = io::parse_int_list(factor, "--factor", ',', pair ? 2 : 1);
    if (v[0] > UINT32_MAX || v.back() > UINT32_MAX) usage_error("--factor " + factor + ": factors must be <= 4294967295");
    flags.scale_size = ScaleSize{static_cast<std::uint32_t>(v[0]), static_cast<std::uint32_t>(v.back())};
  }
  const io::Upsample2dConfig merged = io::overlay(file_config, flags);
  if (!merged.scale_size) usage_error("upsample: no factor given; use --factor or a config with \"scale_size\"");
  return merged;
}

io::RoiAlignConfig roi_align_config(const CommandSpec& spec, const Texts& texts, const CommonOptions& common) {
  const io::RoiAlignConfig file_config =
      common.config.empty() ? io::RoiAlignConfig{} : io::read_roi_align_config(common.config);
  io::RoiAlignConfig flags = field_flags<io::RoiAlignConfig>(spec, texts);
  if (const std::string size = given(texts, "output_size"); !size.empty()) {
    const auto v = io::parse_int_list(size, "--output-size", 'x', 2);
    flags.output_width = v[0];
    flags.output_height = v[1];
  }
  if (const std::string samples = given(texts, "samples"); !samples.empty()) {
    const bool range = samples.find(':') != std::string::npos;
    const auto v = io::parse_int_list(samples, "--samples", ':', range ? 2 : 1);
    if (v[0] > UINT32_MAX || v.back() > UINT32_MAX) usage_error("--samples " + samples + ": at most 4294967295");
    flags.minimum_samples_per_output = static_cast<std::uint32_t>(v[0]);
    flags.maximum_samples_per_output = static_cast<std::uint32_t>(v.back());
  }
  if (const std::string scale = given(texts, "spatial_scale"); !scale.empty()) {
    const auto v = io::parse_float_list(scale, "--spatial-scale", {1, 2}, "1 to 2 comma-separated numbers are allowed");
    flags.spatial_scale_x = v[0];
    flags.spatial_scale_y = v.back();
  }
  const io::RoiAlignConfig merged = io::overlay(file_config, flags);
  if (!merged.output_height || !merged.output_width) {
    usage_error("roi-align: no crop size given; use --output-size WxH or a config with \"output_height\" and "
                "\"output_width\"");
  }
  return merged;
}

OperatorRequest roi_align_request(const CommandSpec& spec, const Texts& texts, CommonOptions& common) {
  const std::uint64_t budget = common.memory_budget();
  const std::string rois = given(texts, "rois");
  const std::string names = given(texts, "names");
  if (!common.config.empty()) check_json_budget(common.config, "--config", budget);
  if (!is_tensor_path(rois)) check_json_budget(rois, "--rois", budget);
  if (!names.empty()) check_json_budget(names, "--names", budget);
  if (const std::string check = given(texts, "rois_check"); !check.empty()) {
    common.rois_check = io::parse_rois_check(check, "--rois-check");
  }
  if (const std::string mismatch = given(texts, "size_mismatch"); !mismatch.empty()) {
    common.size_mismatch = io::parse_size_mismatch(mismatch, "--size-mismatch");
  }
  common.manifest = given(texts, "manifest");
  OperatorRequest request;
  request.op = "roi_align";
  request.config = roi_align_config(spec, texts, common);
  request.source = RoiSource{rois,
                             given(texts, "batch_indices"),
                             given(texts, "image_root"),
                             names,
                             flag_given(texts, "allow_outside_root"),
                             flag_given(texts, "skip_crowd"),
                             flag_given(texts, "skip_difficult")};
  request.other_inputs = {common.config, rois, request.source.batch_indices_path, names};
  return request;
}

}  // namespace

OperatorRequest command_request(const std::string& command, const std::map<std::string, std::string>& texts,
                                CommonOptions& common) {
  const CommandSpec* spec = pipeline::find_command(command);
  if (spec == nullptr) throw InternalError("command_request of an unknown command " + command);
  check_options(*spec, texts);
  if (common.output.empty()) usage_error(spec->command + ": -o/--output is required");
  if (spec->op == "roi_align") return roi_align_request(*spec, texts, common);
  OperatorRequest request;
  request.op = spec->op;
  if (spec->op == "upsample2d") {
    request.config = upsample_config(*spec, texts, common);
  } else {
    request.config = resize_intent(*spec, texts, common);
  }
  request.other_inputs = {common.config};
  return request;
}

}  // namespace rsz::app

namespace rsz::app {

PinnedCommand pinned_command(const std::string& command, const std::map<std::string, std::string>& options,
                             const CommonOptions& common) {
  PinnedCommand pinned;
  pinned.command = command;
  const pipeline::CommandSpec* spec = pipeline::find_command(command);
  for (const auto& [key, text] : options) {
    const pipeline::CommandOption* row = spec == nullptr ? nullptr : spec->find(key);
    const std::string name = row != nullptr ? row->long_name() : key;
    pinned.given.emplace_back(name, text);
    if (row != nullptr && row->file) pinned.files.emplace_back(name, text);
    if (key == "batch") {  // rsz run's batch file
      pinned.files.emplace_back(name, text);
      pinned.batch = text;
    }
  }
  for (const auto& [key, text] : common.given) {
    if (const io::RunSettingSpec* row = io::find_run_setting(key)) pinned.given.emplace_back(row->long_name(), text);
  }
  if (!common.config.empty()) {
    pinned.given.emplace_back("config", common.config);
    pinned.files.emplace_back("config", common.config);
  }
  if (!common.output.empty()) pinned.given.emplace_back("output", common.output);
  pinned.output = common.output;
  return pinned;
}

}  // namespace rsz::app
