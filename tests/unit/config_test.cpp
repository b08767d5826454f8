// rsz::io JSON files: operator configs, ROI files and batch files (config.h), their defaults (docs/CLI_CONTRACT.md),
// overlay and resolve, every class of refused file with its one-line message, and the JSON Schemas in
// configs/schema against the keys the parsers accept.
#include "rsz/io/batch_file.h"
#include "rsz/io/config.h"
#include "rsz/io/image.h"
#include "rsz/io/naming.h"
#include "rsz/io/run_settings.h"
#include "rsz/io/ops.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "rsz/error.h"
#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/tensor.h"
#include "rsz/upsample2d.h"

namespace rsz::io {
namespace {

namespace fs = std::filesystem;
using Keys = std::vector<std::string>;

// The keys each parser accepts, in the order its "unknown key" message lists them. The schemas must list the same.
const Keys kResampleKeys = {"op",           "interpolation", "scales", "input_pixel_offsets", "output_pixel_offsets",
                            "output_sizes", "rounding_direction", "antialiased", "$schema"};
// A resample or thumbnail step of a batch file: the resample keys and the resize intent's (resize.schema.json).
const Keys kResizeKeys = {"op",           "interpolation",      "scales",      "input_pixel_offsets", "output_pixel_offsets",
                          "output_sizes", "rounding_direction", "antialiased", "size",                "fit",
                          "gravity",      "preset",             "$schema"};
const Keys kThumbnailKeys = {"op",      "interpolation",      "scales",      "input_pixel_offsets", "output_pixel_offsets",
                             "output_sizes", "rounding_direction", "antialiased", "size", "fit",
                             "gravity", "preset", "enlarge", "$schema"};
const Keys kUpsample2dKeys = {"op", "interpolation", "scale_size", "$schema"};
const Keys kScaleSizeKeys = {"height", "width"};
const Keys kRoiAlignKeys = {"op",
                            "interpolation",
                            "reduction",
                            "spatial_scale_x",
                            "spatial_scale_y",
                            "out_of_bounds_input_value",
                            "minimum_samples_per_output",
                            "maximum_samples_per_output",
                            "output_height",
                            "output_width",
                            "input_pixel_offset",
                            "output_pixel_offset",
                            "align_regions_to_corners",
                            "$schema"};
const Keys kPlainRoiKeys = {"rois", "batch_indices", "$schema"};
const Keys kDatasetKeys = {"images", "$schema"};
const Keys kImageKeys = {"path", "rois"};
const Keys kRoiKeys = {"box", "label", "id"};
// A batch file's top-level keys: its inputs, output folder and steps, and the run-level settings' batch keys
// (run_settings.h).
Keys batch_keys() {
  Keys keys = {"inputs", "output_dir"};
  for (const RunSettingSpec& row : run_settings()) {
    if (!row.batch_key.empty()) keys.push_back(row.batch_key);
  }
  keys.insert(keys.end(), {"steps", "$schema"});
  return keys;
}
const Keys kBatchKeys = batch_keys();
const Keys kStepKeys = {"op", "config", "output", "rois", "image_root", "names", "manifest", "rois_check",
                        "size_mismatch", "skip_crowd", "skip_difficult", "input"};

std::string repo(const std::string& relative) { return std::string(RSZ_SOURCE_DIR) + "/" + relative; }

std::string normal(const fs::path& path) { return path.lexically_normal().string(); }

std::string join(const Keys& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

// The message of the rsz::Error that `f` throws; checks its code and that it is one line.
std::string error_of(const std::function<void()>& f, ErrorCode code = ErrorCode::InvalidArgument) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(to_string(e.code()), std::string(to_string(code))) << e.what();
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an rsz::Error: " << e.what();
    return {};
  }
  ADD_FAILURE() << "nothing was thrown";
  return {};
}

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

std::string resample_error(const std::string& json) {
  return error_of([&] { parse_resample_config(json, "x.json"); });
}
std::string upsample_error(const std::string& json) {
  return error_of([&] { parse_upsample2d_config(json, "x.json"); });
}
std::string roi_align_error(const std::string& json) {
  return error_of([&] { parse_roi_align_config(json, "x.json"); });
}
std::string roi_file_error(const std::string& json) {
  return error_of([&] { parse_roi_file(json, "r.json", "base"); });
}
std::string batch_error(const std::string& json) {
  return error_of([&] { parse_batch_file(json, "b.json", "base"); });
}

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("rsz_config_test_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------------------------
// The config files of the repository

TEST(ConfigFiles, ResampleScale) {
  const ResampleConfig c = read_resample_config(repo("configs/resample_scale.json"));
  EXPECT_EQ(c.interpolation, InterpolationMode::Linear);
  EXPECT_EQ(c.scales, (std::array<float, 4>{1, 1, 0.5f, 0.5f}));
  EXPECT_EQ(c.input_pixel_offsets, (std::array<float, 4>{0.5f, 0.5f, 0.5f, 0.5f}));
  EXPECT_EQ(c.output_pixel_offsets, (std::array<float, 4>{-0.5f, -0.5f, -0.5f, -0.5f}));
  EXPECT_FALSE(c.output_sizes.has_value());
  const ResolvedResample r = resolve(c, {1, 3, 451, 300});
  EXPECT_EQ(r.output_sizes, (Dims{1, 3, 225, 150}));
}

TEST(ConfigFiles, ResampleSize) {
  const ResampleConfig c = read_resample_config(repo("configs/resample_size.json"));
  EXPECT_EQ(c.interpolation, InterpolationMode::Linear);
  EXPECT_FALSE(c.scales.has_value());
  EXPECT_FALSE(c.input_pixel_offsets.has_value());
  EXPECT_FALSE(c.output_pixel_offsets.has_value());
  EXPECT_EQ(c.output_sizes, (std::array<std::int64_t, 4>{1, 3, 224, 224}));
  const ResolvedResample r = resolve(c, {1, 3, 448, 300});
  EXPECT_EQ(r.output_sizes, (Dims{1, 3, 224, 224}));
  EXPECT_EQ(r.params.scales, (std::array<float, 4>{1.0f, 1.0f, 0.5f, 224.0f / 300.0f}));
}

TEST(ConfigFiles, RoiAlignCrops) {
  const RoiAlignConfig c = read_roi_align_config(repo("configs/roi_align_crops.json"));
  EXPECT_EQ(c.interpolation, InterpolationMode::Linear);
  EXPECT_EQ(c.reduction, RoiReduction::Average);
  EXPECT_EQ(c.output_height, 96);
  EXPECT_EQ(c.output_width, 96);
  EXPECT_EQ(c.minimum_samples_per_output, 1u);
  EXPECT_EQ(c.maximum_samples_per_output, 4u);
  EXPECT_FALSE(c.spatial_scale_x || c.spatial_scale_y || c.out_of_bounds_input_value || c.input_pixel_offset ||
               c.output_pixel_offset || c.align_regions_to_corners);
  const ResolvedRoiAlign r = resolve(c);
  EXPECT_EQ(r.output_height, 96);
  EXPECT_EQ(r.output_width, 96);
  EXPECT_EQ(r.params.maximum_samples_per_output, 4u);
}

TEST(ConfigFiles, Upsample2xNearest) {
  const Upsample2dConfig c = read_upsample2d_config(repo("configs/upsample_2x_nearest.json"));
  EXPECT_EQ(c.interpolation, InterpolationMode::Nearest);
  ASSERT_TRUE(c.scale_size.has_value());
  EXPECT_EQ(c.scale_size->height, 2u);
  EXPECT_EQ(c.scale_size->width, 2u);
  const Upsample2dParams p = resolve(c);
  EXPECT_EQ(p.interpolation, InterpolationMode::Nearest);
  EXPECT_EQ(p.scale_size.height, 2u);
  EXPECT_EQ(p.scale_size.width, 2u);
}

// Every JSON file in configs/ (not only the ones above) is read by the parser its "op" (or name) selects.
TEST(ConfigFiles, EveryConfigInTheRepositoryParses) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(repo("configs"))) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    const std::string path = entry.path().string();
    const auto json = nlohmann::json::parse(std::ifstream(path));
    SCOPED_TRACE(path);
    if (json.contains("steps")) {
      EXPECT_NO_THROW(read_batch_file(path));
    } else if (json.value("op", "") == "resample") {
      EXPECT_NO_THROW(read_resample_config(path));
    } else if (json.value("op", "") == "upsample2d") {
      EXPECT_NO_THROW(read_upsample2d_config(path));
    } else if (json.value("op", "") == "roi_align") {
      EXPECT_NO_THROW(read_roi_align_config(path));
    } else {
      ADD_FAILURE() << "a config without \"op\": " << path;
    }
  }
  EXPECT_GE(count, 5);
}

// ---------------------------------------------------------------------------------------------------------------
// Defaults (docs/CLI_CONTRACT.md), resolve and overlay

TEST(ConfigResolve, ResampleDefaults) {
  ResampleConfig c;
  c.scales = std::array<float, 4>{1, 1, 2, 3};
  const ResolvedResample r = resolve(c, {2, 3, 5, 7});
  EXPECT_EQ(r.params.interpolation, InterpolationMode::Linear);
  EXPECT_EQ(r.params.scales, (std::array<float, 4>{1, 1, 2, 3}));
  EXPECT_EQ(r.params.input_pixel_offsets, (std::array<float, 4>{0.5f, 0.5f, 0.5f, 0.5f}));
  EXPECT_EQ(r.params.output_pixel_offsets, (std::array<float, 4>{-0.5f, -0.5f, -0.5f, -0.5f}));
  EXPECT_EQ(r.output_sizes, (Dims{2, 3, 10, 21}));
  // An empty config file is all defaults; "scales" is then missing.
  const ResampleConfig empty = parse_resample_config("{}", "e.json");
  EXPECT_FALSE(empty.interpolation || empty.scales || empty.input_pixel_offsets || empty.output_pixel_offsets ||
               empty.output_sizes);
}

TEST(ConfigResolve, ResampleOutputSizesFollowTheCore) {
  ResampleConfig c;
  c.scales = std::array<float, 4>{1.0f, 0.1f, 0.5f, 0.3f};
  const Dims in{1, 3, 5, 10};
  const ResolvedResample r = resolve(c, in);
  EXPECT_EQ(r.output_sizes, (Dims{1, 1, 2, 3}));  // max(1, floor(n * s)) in float32
  EXPECT_EQ(r.output_sizes, resample_output_sizes(in, *c.scales));
}

TEST(ConfigResolve, ResampleScalesFromOutputSizes) {
  ResampleConfig c;
  c.output_sizes = std::array<std::int64_t, 4>{1, 3, 30, 50};
  const ResolvedResample r = resolve(c, {1, 3, 100, 200});
  EXPECT_EQ(r.params.scales, (std::array<float, 4>{1.0f, 1.0f, 30.0f / 100.0f, 50.0f / 200.0f}));
  EXPECT_EQ(r.output_sizes, (Dims{1, 3, 30, 50}));
  // Both given: used as given.
  c.scales = std::array<float, 4>{1, 1, 2, 2};
  const ResolvedResample both = resolve(c, {1, 3, 100, 200});
  EXPECT_EQ(both.params.scales, (std::array<float, 4>{1, 1, 2, 2}));
  EXPECT_EQ(both.output_sizes, (Dims{1, 3, 30, 50}));
}

TEST(ConfigResolve, ResampleRefusals) {
  const std::string missing = error_of([] { resolve(ResampleConfig{}, {1, 1, 4, 4}); });
  EXPECT_CONTAINS(missing, "\"scales\" is required");
  EXPECT_CONTAINS(missing, "output_sizes");
  ResampleConfig c;
  c.scales = std::array<float, 4>{1, 1, 0, 1};
  EXPECT_CONTAINS(error_of([&] { resolve(c, {1, 1, 4, 4}); }), "resample: scales[2] = 0 is not allowed");
  c.scales = std::array<float, 4>{1, 1, std::numeric_limits<float>::infinity(), 1};
  EXPECT_CONTAINS(error_of([&] { resolve(c, {1, 1, 4, 4}); }), "resample: scales[2] = inf");
  c.scales = std::array<float, 4>{1, 1, 1, 1};
  c.output_sizes = std::array<std::int64_t, 4>{1, 0, 4, 4};
  EXPECT_CONTAINS(error_of([&] { resolve(c, {1, 1, 4, 4}); }), "\"output_sizes\"[1] = 0");
  c.output_sizes.reset();
  c.input_pixel_offsets = std::array<float, 4>{0, 0, 0, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_CONTAINS(error_of([&] { resolve(c, {1, 1, 4, 4}); }), "resample: input_pixel_offsets[3] = nan");
  c.input_pixel_offsets.reset();
  EXPECT_CONTAINS(error_of([&] { resolve(c, {1, 4, 4}); }, ErrorCode::InvalidShape), "rank 3");
  EXPECT_CONTAINS(error_of([&] { resolve(c, {1, 0, 4, 4}); }, ErrorCode::InvalidShape), "axis 1");
}

TEST(ConfigResolve, Upsample2dDefaultsAndRefusals) {
  Upsample2dConfig c;
  const std::string missing = error_of([&] { resolve(c); });
  EXPECT_CONTAINS(missing, "\"scale_size\" is required");
  c.scale_size = ScaleSize{3, 4};
  const Upsample2dParams p = resolve(c);
  EXPECT_EQ(p.interpolation, InterpolationMode::Nearest);
  EXPECT_EQ(p.scale_size.height, 3u);
  EXPECT_EQ(p.scale_size.width, 4u);
  c.scale_size = ScaleSize{0, 4};
  EXPECT_CONTAINS(error_of([&] { resolve(c); }), "upsample2d: scale_size.height = 0 is not allowed; it must be >= 1");
}

TEST(ConfigResolve, RoiAlignDefaults) {
  RoiAlignConfig c;
  c.output_height = 7;
  c.output_width = 5;
  const ResolvedRoiAlign r = resolve(c);
  EXPECT_EQ(r.output_height, 7);
  EXPECT_EQ(r.output_width, 5);
  EXPECT_EQ(r.params.interpolation, InterpolationMode::Linear);
  EXPECT_EQ(r.params.reduction, RoiReduction::Average);
  EXPECT_EQ(r.params.spatial_scale_x, 1.0f);
  EXPECT_EQ(r.params.spatial_scale_y, 1.0f);
  EXPECT_EQ(r.params.out_of_bounds_input_value, 0.0f);
  EXPECT_EQ(r.params.minimum_samples_per_output, 1u);
  EXPECT_EQ(r.params.maximum_samples_per_output, 4294967295u);
  EXPECT_EQ(r.params.input_pixel_offset, 0.5f);
  EXPECT_EQ(r.params.output_pixel_offset, -0.5f);
  EXPECT_FALSE(r.params.align_regions_to_corners);
}

TEST(ConfigResolve, RoiAlignEveryKey) {
  const RoiAlignConfig c = parse_roi_align_config(
      R"({"op": "roi_align", "interpolation": "nearest", "reduction": "max", "spatial_scale_x": 0.25,
          "spatial_scale_y": 0.125, "out_of_bounds_input_value": -1.5, "minimum_samples_per_output": 2,
          "maximum_samples_per_output": 3, "output_height": 4, "output_width": 6.0, "input_pixel_offset": 0,
          "output_pixel_offset": 0.25, "align_regions_to_corners": true, "$schema": "../schema/roi_align.schema.json"})",
      "all.json");
  const ResolvedRoiAlign r = resolve(c);
  EXPECT_EQ(r.params.interpolation, InterpolationMode::Nearest);
  EXPECT_EQ(r.params.reduction, RoiReduction::Max);
  EXPECT_EQ(r.params.spatial_scale_x, 0.25f);
  EXPECT_EQ(r.params.spatial_scale_y, 0.125f);
  EXPECT_EQ(r.params.out_of_bounds_input_value, -1.5f);
  EXPECT_EQ(r.params.minimum_samples_per_output, 2u);
  EXPECT_EQ(r.params.maximum_samples_per_output, 3u);
  EXPECT_EQ(r.output_height, 4);
  EXPECT_EQ(r.output_width, 6);  // 6.0 is an integer
  EXPECT_EQ(r.params.input_pixel_offset, 0.0f);
  EXPECT_EQ(r.params.output_pixel_offset, 0.25f);
  EXPECT_TRUE(r.params.align_regions_to_corners);
}

TEST(ConfigResolve, RoiAlignRefusals) {
  RoiAlignConfig c;
  c.output_width = 3;
  EXPECT_CONTAINS(error_of([&] { resolve(c); }), "\"output_height\" is required");
  c.output_height = 3;
  c.output_width.reset();
  EXPECT_CONTAINS(error_of([&] { resolve(c); }), "\"output_width\" is required");
  c.output_width = 0;
  EXPECT_CONTAINS(error_of([&] { resolve(c); }), "\"output_width\" = 0");
  c.output_width = 3;
  c.minimum_samples_per_output = 5;
  c.maximum_samples_per_output = 4;
  const std::string order = error_of([&] { resolve(c); });
  EXPECT_CONTAINS(order, "roi_align: maximum_samples_per_output = 4 is below minimum_samples_per_output = 5");
  c.minimum_samples_per_output = 0;
  EXPECT_CONTAINS(error_of([&] { resolve(c); }), "roi_align: minimum_samples_per_output = 0 is not allowed");
  c.minimum_samples_per_output.reset();
  c.spatial_scale_y = std::numeric_limits<float>::infinity();
  EXPECT_CONTAINS(error_of([&] { resolve(c); }), "roi_align: spatial_scale_y = inf is not allowed");
}

TEST(ConfigOverlay, SetFieldsOfOverWinAndUnsetOnesKeepBase) {
  const ResampleConfig file = parse_resample_config(
      R"({"interpolation": "nearest", "scales": [1, 1, 2, 2], "output_pixel_offsets": [0, 0, 0, 0]})", "f.json");
  ResampleConfig flags;
  flags.scales = std::array<float, 4>{1, 1, 3, 3};
  flags.output_sizes = std::array<std::int64_t, 4>{1, 1, 9, 9};
  const ResampleConfig merged = overlay(file, flags);
  EXPECT_EQ(merged.interpolation, InterpolationMode::Nearest);
  EXPECT_EQ(merged.scales, (std::array<float, 4>{1, 1, 3, 3}));
  EXPECT_EQ(merged.output_pixel_offsets, (std::array<float, 4>{0, 0, 0, 0}));
  EXPECT_FALSE(merged.input_pixel_offsets.has_value());
  EXPECT_EQ(merged.output_sizes, (std::array<std::int64_t, 4>{1, 1, 9, 9}));
  // The defaults apply only where neither sets a field.
  const ResolvedResample r = resolve(merged, {1, 1, 3, 3});
  EXPECT_EQ(r.params.input_pixel_offsets, (std::array<float, 4>{0.5f, 0.5f, 0.5f, 0.5f}));

  const Upsample2dConfig up_file = parse_upsample2d_config(R"({"interpolation": "linear",
      "scale_size": {"height": 2, "width": 2}})",
                                                           "u.json");
  Upsample2dConfig up_flags;
  up_flags.scale_size = ScaleSize{4, 5};
  const Upsample2dConfig up = overlay(up_file, up_flags);
  EXPECT_EQ(up.interpolation, InterpolationMode::Linear);
  EXPECT_EQ(up.scale_size->height, 4u);
  EXPECT_EQ(up.scale_size->width, 5u);
  EXPECT_EQ(overlay(up_flags, up_file).scale_size->height, 2u);

  const RoiAlignConfig roi_file = read_roi_align_config(repo("configs/roi_align_crops.json"));
  RoiAlignConfig roi_flags;
  roi_flags.output_width = 32;
  roi_flags.reduction = RoiReduction::Max;
  roi_flags.align_regions_to_corners = false;
  const RoiAlignConfig roi = overlay(roi_file, roi_flags);
  EXPECT_EQ(roi.output_height, 96);
  EXPECT_EQ(roi.output_width, 32);
  EXPECT_EQ(roi.reduction, RoiReduction::Max);
  EXPECT_EQ(roi.maximum_samples_per_output, 4u);
  EXPECT_EQ(roi.align_regions_to_corners, false);
  EXPECT_FALSE(roi.spatial_scale_x.has_value());
}

// ---------------------------------------------------------------------------------------------------------------
// Refused config files: each message names the source, the key and its JSON path

TEST(ConfigErrors, UnknownKeyListsTheAllowedKeys) {
  EXPECT_EQ(resample_error(R"({"scale": [1, 1, 2, 2]})"),
            "x.json: unknown key \"scale\" at /scale; allowed keys: " + join(kResampleKeys));
  EXPECT_EQ(upsample_error(R"({"scale_size": {"height": 2, "width": 2, "depth": 2}})"),
            "x.json: unknown key \"depth\" at /scale_size/depth; allowed keys: height, width");
  EXPECT_EQ(roi_align_error(R"({"sampling_ratio": 2})"),
            "x.json: unknown key \"sampling_ratio\" at /sampling_ratio; allowed keys: " + join(kRoiAlignKeys));
  EXPECT_CONTAINS(upsample_error(R"({"a/b~c": 1})"), "unknown key \"a/b~c\" at /a~1b~0c;");
}

TEST(ConfigErrors, WrongType) {
  EXPECT_EQ(resample_error(R"({"scales": [1, 1, "abc", 1]})"),
            "x.json: key \"scales\" at /scales/2: expected a finite number, got \"abc\"");
  EXPECT_EQ(resample_error(R"({"scales": [1, 1, 2]})"),
            "x.json: key \"scales\" at /scales: expected an array of 4 numbers, got [1,1,2]");
  EXPECT_EQ(resample_error(R"({"scales": 2})"),
            "x.json: key \"scales\" at /scales: expected an array of 4 numbers, got 2");
  EXPECT_EQ(roi_align_error(R"({"align_regions_to_corners": 1})"),
            "x.json: key \"align_regions_to_corners\" at /align_regions_to_corners: expected true or false, got 1");
  EXPECT_EQ(roi_align_error(R"({"output_height": "96"})"),
            "x.json: key \"output_height\" at /output_height: expected an integer >= 1 (at most 9223372036854775807), "
            "got \"96\"");
  EXPECT_EQ(upsample_error(R"({"scale_size": [2, 2]})"),
            "x.json: key \"scale_size\" at /scale_size: expected an object, got [2,2]");
  EXPECT_EQ(upsample_error(R"([1, 2])"), "x.json: at the top level: expected an object, got [1,2]");
  EXPECT_EQ(roi_align_error(R"({"spatial_scale_x": null})"),
            "x.json: key \"spatial_scale_x\" at /spatial_scale_x: expected a finite number, got null");
  // Long values are cut in the message.
  const std::string long_value = roi_align_error(R"({"reduction": ")" + std::string(500, 'x') + "\"}");
  EXPECT_LT(long_value.size(), 200u);
}

TEST(ConfigErrors, UnknownEnum) {
  EXPECT_EQ(resample_error(R"({"interpolation": "cubic"})"),
            "x.json: key \"interpolation\" at /interpolation: expected one of \"nearest\", \"linear\", got \"cubic\"");
  EXPECT_EQ(roi_align_error(R"({"reduction": "Max"})"),
            "x.json: key \"reduction\" at /reduction: expected one of \"average\", \"max\", got \"Max\"");
  EXPECT_EQ(upsample_error(R"({"interpolation": 0})"),
            "x.json: key \"interpolation\" at /interpolation: expected one of \"nearest\", \"linear\", got 0");
}

TEST(ConfigErrors, WrongOp) {
  const std::string m = resample_error(R"({"op": "roi_align", "scales": [1, 1, 2, 2]})");
  EXPECT_CONTAINS(m, "x.json: key \"op\" at /op: expected \"resample\"");
  EXPECT_CONTAINS(m, "got \"roi_align\"");
  EXPECT_CONTAINS(upsample_error(R"({"op": "upsample"})"), "expected \"upsample2d\"");
  EXPECT_CONTAINS(roi_align_error(R"({"op": null})"), "key \"op\" at /op: expected \"roi_align\"");
  EXPECT_NO_THROW(parse_upsample2d_config(R"({"op": "upsample2d"})", "x.json"));
}

TEST(ConfigErrors, NonIntegerAndOutOfRange) {
  EXPECT_EQ(roi_align_error(R"({"output_height": 2.5})"),
            "x.json: key \"output_height\" at /output_height: expected an integer >= 1 (at most "
            "9223372036854775807), got 2.5");
  EXPECT_CONTAINS(roi_align_error(R"({"output_width": 0})"), "key \"output_width\" at /output_width: expected");
  EXPECT_CONTAINS(roi_align_error(R"({"output_width": -3})"), "got -3");
  EXPECT_CONTAINS(roi_align_error(R"({"output_width": 9223372036854775808})"), "got 9223372036854775808");
  EXPECT_CONTAINS(roi_align_error(R"({"output_width": 99999999999999999999999})"), "at /output_width: expected");
  EXPECT_EQ(roi_align_error(R"({"output_width": 1e400})"),
            "x.json: key \"output_width\" at /output_width: number overflow parsing '1e400'; expected a finite "
            "number");
  EXPECT_CONTAINS(resample_error(R"({"scales": [1, 1, 1, -1e999]})"), "key \"scales\" at /scales/3: number overflow");
  EXPECT_EQ(roi_align_error(R"({"minimum_samples_per_output": 4294967296})"),
            "x.json: key \"minimum_samples_per_output\" at /minimum_samples_per_output: expected an integer in "
            "[0, 4294967295], got 4294967296");
  // A count's type is uint32; its range is the core's (check_params), named after the file and key.
  EXPECT_EQ(roi_align_error(R"({"maximum_samples_per_output": 0})"),
            "x.json: key \"maximum_samples_per_output\" at /maximum_samples_per_output: roi_align: "
            "maximum_samples_per_output = 0 is below minimum_samples_per_output = 1; 1 <= minimum <= maximum is "
            "required");
  EXPECT_EQ(upsample_error(R"({"scale_size": {"height": -1, "width": 2}})"),
            "x.json: key \"height\" at /scale_size/height: expected an integer in [0, 4294967295], got -1");
  EXPECT_EQ(upsample_error(R"({"scale_size": {"height": 0, "width": 2}})"),
            "x.json: key \"scale_size\" at /scale_size: upsample2d: scale_size.height = 0 is not allowed; it must "
            "be >= 1");
  EXPECT_EQ(resample_error(R"({"output_sizes": [1, 3, 0, 4]})"),
            "x.json: key \"output_sizes\" at /output_sizes/2: expected an integer >= 1 (at most "
            "9223372036854775807), got 0");
  EXPECT_EQ(resample_error(R"({"output_sizes": [1, 3, 4.5, 4]})"),
            "x.json: key \"output_sizes\" at /output_sizes/2: expected an integer >= 1 (at most "
            "9223372036854775807), got 4.5");
  EXPECT_EQ(resample_error(R"({"scales": [1, 1, 0, 1]})"),
            "x.json: key \"scales\" at /scales: resample: scales[2] = 0 is not allowed; each scale must be finite "
            "and > 0");
  EXPECT_EQ(resample_error(R"({"scales": [1, 1, -2, 1]})"),
            "x.json: key \"scales\" at /scales: resample: scales[2] = -2 is not allowed; each scale must be finite "
            "and > 0");
  // Finite in JSON (float64) but not in float32.
  EXPECT_EQ(resample_error(R"({"input_pixel_offsets": [0, 0, 1e39, 0]})"),
            "x.json: key \"input_pixel_offsets\" at /input_pixel_offsets/2: expected a finite number (float32: "
            "magnitude at most 3.40282347e+38), got 1e+39");
  EXPECT_CONTAINS(roi_align_error(R"({"spatial_scale_x": -1e400})"), "at /spatial_scale_x: number overflow");
  // The float32 extremes themselves are fine.
  EXPECT_EQ(parse_roi_align_config(R"({"out_of_bounds_input_value": -3.4028234663852886e38})", "x.json")
                .out_of_bounds_input_value,
            std::numeric_limits<float>::lowest());
  EXPECT_EQ(
      parse_roi_align_config(R"({"maximum_samples_per_output": 4294967295})", "x.json").maximum_samples_per_output,
      4294967295u);
  EXPECT_EQ(parse_roi_align_config(R"({"output_height": 9223372036854775807})", "x.json").output_height,
            std::numeric_limits<std::int64_t>::max());
}

TEST(ConfigErrors, MissingRequiredKey) {
  EXPECT_EQ(upsample_error(R"({"scale_size": {"height": 2}})"),
            "x.json: key \"width\" at /scale_size/width: required key is missing");
  // Keys that may come from the flags are required at resolve time, naming the key.
  const Upsample2dConfig up = parse_upsample2d_config(R"({"interpolation": "linear"})", "x.json");
  EXPECT_CONTAINS(error_of([&] { resolve(up); }), "\"scale_size\"");
  const RoiAlignConfig roi = parse_roi_align_config(R"({"output_width": 8})", "x.json");
  EXPECT_CONTAINS(error_of([&] { resolve(roi); }), "\"output_height\"");
}

TEST(ConfigErrors, BadJsonSyntaxNamesSourceLineAndByte) {
  const std::string m = resample_error("{\n  \"scales\": [1, 1, 2, 2],\n  \"interpolation\": linear\n}");
  EXPECT_CONTAINS(m, "x.json: invalid JSON at line 3, column ");
  EXPECT_CONTAINS(m, "(byte ");
  EXPECT_CONTAINS(m, "syntax error");
  EXPECT_CONTAINS(resample_error("{\"scales\": [1, 2,]}"), "x.json: invalid JSON at line 1, column 18 (byte 18)");
  EXPECT_CONTAINS(resample_error(""), "x.json: invalid JSON at line 1");
  EXPECT_CONTAINS(resample_error("{} {}"), "x.json: invalid JSON");
  EXPECT_CONTAINS(resample_error("{\"interpolation\": \"\xff\"}"), "x.json: invalid JSON");
  // Comments are not JSON.
  EXPECT_CONTAINS(resample_error("{} // note"), "x.json: invalid JSON");
}

TEST(ConfigErrors, DuplicateKeysAndDeepNesting) {
  EXPECT_EQ(resample_error(R"({"interpolation": "linear", "interpolation": "nearest"})"),
            "x.json: duplicate key \"interpolation\" at /interpolation; each key may appear once per object");
  EXPECT_EQ(batch_error(R"({"steps": [{"op": "resample", "config": {"scales": [1, [2], {"a": 1}], "scales": 1}}]})"),
            "b.json: duplicate key \"scales\" at /steps/0/config/scales; each key may appear once per object");
  EXPECT_EQ(batch_error(R"({"steps": [{}, {"op": "resample", "op": "x"}]})"),
            "b.json: duplicate key \"op\" at /steps/1/op; each key may appear once per object");
  // Deep nesting is refused without recursion trouble.
  const std::string deep = "{\"scales\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_CONTAINS(resample_error(deep), "nested deeper than 64 levels");
}

TEST_F(ConfigFileTest, UnreadableAndRefusedFiles) {
  const std::string missing = (dir_ / "no_such.json").string();
  EXPECT_EQ(error_of([&] { read_resample_config(missing); }, ErrorCode::Io),
            missing + ": cannot open for reading: No such file or directory");
  EXPECT_CONTAINS(error_of([&] { read_roi_align_config(dir_.string()); }, ErrorCode::Io), "folder");
  EXPECT_CONTAINS(error_of([&] { read_roi_file(missing); }, ErrorCode::Io), missing);
  EXPECT_CONTAINS(error_of([&] { read_batch_file(missing); }, ErrorCode::Io), missing);
  EXPECT_CONTAINS(error_of([&] { read_upsample2d_config(missing); }, ErrorCode::Io), missing);
  const std::string bad = write("bad.json", R"({"op": "upsample2d", "scale_size": {"height": 2, "width": 2.5}})");
  EXPECT_EQ(error_of([&] { read_upsample2d_config(bad); }),
            bad + ": key \"width\" at /scale_size/width: expected an integer in [0, 4294967295], got 2.5");
  const std::string good = write("good.json", R"({"$schema": "schema/upsample2d.schema.json",
      "scale_size": {"height": 3, "width": 1}})");
  EXPECT_EQ(read_upsample2d_config(good).scale_size->height, 3u);
  EXPECT_CONTAINS(upsample_error(R"({"$schema": 1})"), "key \"$schema\" at /$schema: expected a string");
}

// ---------------------------------------------------------------------------------------------------------------
// ROI files

TEST(ConfigRoiFiles, PlainFormOfTheRepository) {
  const RoiFile f = read_roi_file(repo("samples/rois/chelsea_eyes.json"));
  EXPECT_FALSE(f.dataset);
  ASSERT_EQ(f.images.size(), 1u);
  EXPECT_EQ(f.images[0].path, "");
  ASSERT_EQ(f.images[0].rois.size(), 2u);
  EXPECT_EQ(f.images[0].rois[0].box, (std::array<float, 4>{130, 80, 215, 150}));
  EXPECT_EQ(f.images[0].rois[1].box, (std::array<float, 4>{290, 105, 350, 165}));
  for (const RoiEntry& e : f.images[0].rois) {
    EXPECT_EQ(e.batch_index, 0u);
    EXPECT_EQ(e.label, "");
    EXPECT_EQ(e.id, "");
  }
}

TEST(ConfigRoiFiles, PlainFormBatchIndices) {
  const RoiFile f = parse_roi_file(R"({"rois": [[0, 0, 1, 1], [1.5, 2.5, -3, 4e3]], "batch_indices": [4294967295, 3]})",
                                   "r.json", "base");
  ASSERT_EQ(f.images[0].rois.size(), 2u);
  EXPECT_EQ(f.images[0].rois[0].batch_index, 4294967295u);
  EXPECT_EQ(f.images[0].rois[1].batch_index, 3u);
  EXPECT_EQ(f.images[0].rois[1].box, (std::array<float, 4>{1.5f, 2.5f, -3.0f, 4000.0f}));
  const RoiFile defaults = parse_roi_file(R"({"rois": [[0, 0, 1, 1]]})", "r.json", "");
  EXPECT_EQ(defaults.images[0].rois[0].batch_index, 0u);
  // Zero ROIs are valid (R = 0).
  const RoiFile empty =
      parse_roi_file(R"({"rois": [], "batch_indices": [], "$schema": "rois.schema.json"})", "r.json", "");
  EXPECT_FALSE(empty.dataset);
  ASSERT_EQ(empty.images.size(), 1u);
  EXPECT_TRUE(empty.images[0].rois.empty());
}

TEST(ConfigRoiFiles, PlainFormRefusals) {
  EXPECT_EQ(
      roi_file_error(R"({"rois": [[0, 0, 1, 1]], "batch_indices": [0, 1]})"),
      "r.json: key \"batch_indices\" at /batch_indices: expected an array of 1 integers (one per ROI), got [0,1]");
  EXPECT_EQ(roi_file_error(R"({"rois": [[0, 0, 1, 1]], "batch_indices": [-1]})"),
            "r.json: key \"batch_indices\" at /batch_indices/0: expected an integer in [0, 4294967295], got -1");
  EXPECT_CONTAINS(roi_file_error(R"({"rois": [[0, 0, 1, 1]], "batch_indices": [4294967296]})"),
                  "at /batch_indices/0: expected an integer in [0, 4294967295], got 4294967296");
  EXPECT_CONTAINS(roi_file_error(R"({"rois": [[0, 0, 1, 1]], "batch_indices": [0.5]})"), "got 0.5");
  EXPECT_EQ(roi_file_error(R"({"rois": [[0, 0, 1, 1], [0, 1, 2]]})"),
            "r.json: key \"rois\" at /rois/1: expected an array of 4 numbers, got [0,1,2]");
  EXPECT_EQ(roi_file_error(R"({"rois": [[0, 0, 1, "x"]]})"),
            "r.json: key \"rois\" at /rois/0/3: expected a finite number, got \"x\"");
  EXPECT_CONTAINS(roi_file_error(R"({"rois": [[0, 0, 1, 1e39]]})"), "at /rois/0/3: expected a finite number");
  EXPECT_EQ(roi_file_error(R"({"rois": [[0, 0, 1, 1]], "labels": ["a"]})"),
            "r.json: unknown key \"labels\" at /labels; allowed keys: " + join(kPlainRoiKeys));
  EXPECT_CONTAINS(roi_file_error(R"({"rois": [], "images": []})"), "\"rois\" and \"images\" cannot both be given");
  EXPECT_CONTAINS(roi_file_error(R"({"batch_indices": []})"), "key \"rois\" at /rois: required key is missing");
  EXPECT_CONTAINS(roi_file_error(R"({"boxes": []})"), "unknown key \"boxes\" at /boxes");
  EXPECT_CONTAINS(roi_file_error(R"([[0, 0, 1, 1]])"), "r.json: at the top level: expected an object");
}

TEST(ConfigRoiFiles, DatasetFormOfTheRepository) {
  const std::string path = repo("samples/rois/dataset.json");
  const RoiFile f = read_roi_file(path);
  EXPECT_TRUE(f.dataset);
  ASSERT_EQ(f.images.size(), 2u);
  EXPECT_EQ(f.images[0].path, normal(fs::path(RSZ_SOURCE_DIR) / "samples/photos/chelsea.png"));
  EXPECT_EQ(f.images[1].path, normal(fs::path(RSZ_SOURCE_DIR) / "samples/photos/coffee.png"));
  ASSERT_EQ(f.images[0].rois.size(), 3u);
  ASSERT_EQ(f.images[1].rois.size(), 2u);
  EXPECT_EQ(f.images[0].rois[0].box, (std::array<float, 4>{130, 80, 215, 150}));
  EXPECT_EQ(f.images[0].rois[0].label, "eye");
  EXPECT_EQ(f.images[0].rois[0].id, "chelsea-left-eye");
  EXPECT_EQ(f.images[0].rois[2].label, "nose");
  EXPECT_EQ(f.images[0].rois[2].id, "chelsea-nose");
  EXPECT_EQ(f.images[1].rois[1].box, (std::array<float, 4>{320, 60, 425, 330}));
  EXPECT_EQ(f.images[1].rois[1].label, "spoon");
  EXPECT_EQ(f.images[1].rois[1].id, "coffee-spoon");
  for (const RoiImage& image : f.images) {
    for (const RoiEntry& e : image.rois) EXPECT_EQ(e.batch_index, 0u);
  }
}

TEST(ConfigRoiFiles, DatasetPathResolution) {
  const std::string text = R"({"images": [{"path": "../photos/a.png", "rois": [{"box": [0, 0, 1, 1]}]},
      {"path": "./b.png", "rois": []}, {"path": "/abs/c.png", "rois": [{"box": [1, 2, 3, 4], "label": "x"}]}]})";
  const RoiFile relative = parse_roi_file(text, "r.json", "samples/rois");
  ASSERT_EQ(relative.images.size(), 3u);
  EXPECT_EQ(relative.images[0].path, "samples/photos/a.png");
  EXPECT_EQ(relative.images[1].path, "samples/rois/b.png");
  EXPECT_EQ(relative.images[2].path, "/abs/c.png");
  EXPECT_TRUE(relative.images[1].rois.empty());
  EXPECT_EQ(relative.images[0].rois[0].label, "");
  EXPECT_EQ(relative.images[0].rois[0].id, "");
  EXPECT_EQ(relative.images[2].rois[0].label, "x");
  const RoiFile no_base = parse_roi_file(text, "r.json", "");
  EXPECT_EQ(no_base.images[0].path, "../photos/a.png");
  EXPECT_EQ(no_base.images[1].path, "b.png");
  const RoiFile absolute = parse_roi_file(text, "r.json", "/data/sets/rois/");
  EXPECT_EQ(absolute.images[0].path, "/data/sets/photos/a.png");
  EXPECT_TRUE(parse_roi_file(R"({"images": []})", "r.json", "").dataset);
}

TEST(ConfigRoiFiles, DatasetRefusals) {
  const auto one = [](const std::string& roi) {
    return roi_file_error(R"({"images": [{"path": "a.png", "rois": [)" + roi + "]}]}");
  };
  EXPECT_EQ(one(R"({"box": [0, 0, 1, 1], "id": "a/b"})"),
            "r.json: key \"id\" at /images/0/rois/0/id: expected a name without '/', '\\' or control characters (it "
            "becomes part of a file name), got \"a/b\"");
  EXPECT_CONTAINS(one(R"({"box": [0, 0, 1, 1], "label": "a\\b"})"), "key \"label\" at /images/0/rois/0/label");
  EXPECT_CONTAINS(one(R"({"box": [0, 0, 1, 1], "label": ".."})"),
                  "key \"label\" at /images/0/rois/0/label: expected a name without \"..\"");
  EXPECT_CONTAINS(one(R"({"box": [0, 0, 1, 1], "id": "x..y"})"), "at /images/0/rois/0/id");
  EXPECT_CONTAINS(one(R"({"box": [0, 0, 1, 1], "id": "nul\u0000"})"), "at /images/0/rois/0/id");
  EXPECT_CONTAINS(one(R"({"box": [0, 0, 1, 1], "id": ""})"), "at /images/0/rois/0/id: expected a non-empty string");
  EXPECT_CONTAINS(one(R"({"box": [0, 0, 1, 1], "label": 3})"),
                  "at /images/0/rois/0/label: expected a non-empty string, got 3");
  EXPECT_EQ(one(R"({"box": [0, 0, 1, 1], "id": "a"}, {"box": [0, 0, 1, 1], "id": "a"})"),
            "r.json: key \"id\" at /images/0/rois/1/id: duplicate id \"a\" (first at /images/0/rois/0/id); ids must "
            "be unique");
  EXPECT_EQ(one(R"({"box": [0, 0, 1]})"),
            "r.json: key \"box\" at /images/0/rois/0/box: expected an array of 4 numbers, got [0,0,1]");
  EXPECT_EQ(one(R"({"label": "x"})"), "r.json: key \"box\" at /images/0/rois/0/box: required key is missing");
  EXPECT_EQ(one(R"({"box": [0, 0, 1, 1], "class": "x"})"),
            "r.json: unknown key \"class\" at /images/0/rois/0/class; allowed keys: " + join(kRoiKeys));
  // Duplicate ids across images.
  EXPECT_CONTAINS(roi_file_error(R"({"images": [{"path": "a.png", "rois": [{"box": [0, 0, 1, 1], "id": "k"}]},
      {"path": "b.png", "rois": [{"box": [0, 0, 1, 1], "id": "k"}]}]})"),
                  "at /images/1/rois/0/id: duplicate id \"k\" (first at /images/0/rois/0/id)");
  // The same image twice (after resolution).
  EXPECT_EQ(roi_file_error(R"({"images": [{"path": "a.png", "rois": []}, {"path": "./x/../a.png", "rois": []}]})"),
            "r.json: key \"path\" at /images/1/path: image \"base/a.png\" is listed again (first at /images/0/path); "
            "list all its ROIs in one entry");
  EXPECT_EQ(roi_file_error(R"({"images": [{"rois": []}]})"),
            "r.json: key \"path\" at /images/0/path: required key is missing");
  EXPECT_EQ(roi_file_error(R"({"images": [{"path": "a.png"}]})"),
            "r.json: key \"rois\" at /images/0/rois: required key is missing");
  EXPECT_EQ(roi_file_error(R"({"images": [{"path": "a.png", "rois": [], "size": [1, 2]}]})"),
            "r.json: unknown key \"size\" at /images/0/size; allowed keys: " + join(kImageKeys));
  EXPECT_EQ(roi_file_error(R"({"images": [], "batch_indices": []})"),
            "r.json: unknown key \"batch_indices\" at /batch_indices; allowed keys: " + join(kDatasetKeys));
  EXPECT_EQ(roi_file_error(R"({"images": {"path": "a.png"}})"),
            "r.json: key \"images\" at /images: expected an array of image objects, got {\"path\":\"a.png\"}");
  EXPECT_CONTAINS(roi_file_error(R"({"images": [{"path": "", "rois": []}]})"),
                  "at /images/0/path: expected a non-empty string");
}

// ---------------------------------------------------------------------------------------------------------------
// Batch files

TEST(ConfigBatchFiles, TheRepositoryBatchFile) {
  const BatchFile b = read_batch_file(repo("configs/batch.json"));
  const fs::path root(RSZ_SOURCE_DIR);
  ASSERT_EQ(b.inputs.size(), 1u);
  EXPECT_EQ(b.inputs[0], normal(root / "samples/photos/"));
  EXPECT_EQ(b.output_dir, normal(root / "out"));
  EXPECT_EQ(b.settings.count("dtype"), 0u);
  ASSERT_EQ(b.steps.size(), 3u);

  const auto* intent = std::get_if<ResizeIntent>(&b.steps[0].config);
  ASSERT_NE(intent, nullptr);
  EXPECT_FALSE(intent->box.has_value());
  const ResampleConfig* resample = &intent->config;
  EXPECT_EQ(resample->scales, (std::array<float, 4>{1, 1, 0.5f, 0.5f}));
  EXPECT_FALSE(resample->interpolation.has_value());
  EXPECT_EQ(b.steps[0].output_template, "half/{stem}{ext}");
  EXPECT_EQ(b.steps[0].rois_path, "");

  const auto* upsample = std::get_if<Upsample2dConfig>(&b.steps[1].config);
  ASSERT_NE(upsample, nullptr);
  EXPECT_EQ(upsample->interpolation, InterpolationMode::Nearest);
  EXPECT_EQ(upsample->scale_size->height, 2u);
  EXPECT_EQ(upsample->scale_size->width, 2u);
  EXPECT_EQ(b.steps[1].output_template, "double/{stem}.png");

  const auto* roi = std::get_if<RoiAlignConfig>(&b.steps[2].config);
  ASSERT_NE(roi, nullptr);
  EXPECT_EQ(roi->output_height, 96);
  EXPECT_EQ(roi->output_width, 96);
  EXPECT_EQ(roi->maximum_samples_per_output, 4u);
  EXPECT_FALSE(roi->minimum_samples_per_output.has_value());
  EXPECT_EQ(b.steps[2].output_template, "crops/{label}/{id}.png");
  EXPECT_EQ(b.steps[2].rois_path, normal(root / "samples/rois/dataset.json"));
}

TEST(ConfigBatchFiles, DefaultsAndPaths) {
  const BatchFile b = parse_batch_file(
      R"({"$schema": "schema/batch.schema.json", "inputs": ["a.png", "../photos/", "/abs/x.png", "../more/*.jpg",
          "sub/[ab].png"], "dtype": "float16",
          "steps": [{"op": "resample", "config": {"op": "resample", "output_sizes": [1, 3, 8, 8]}},
                    {"op": "upsample2d", "config": {"scale_size": {"height": 2, "width": 3}}},
                    {"op": "roi_align", "config": {"output_height": 2, "output_width": 2}, "rois": "./r.json"}]})",
      "b.json", "jobs/one");
  EXPECT_EQ(b.inputs, (std::vector<std::string>{"jobs/one/a.png", "jobs/photos/", "/abs/x.png",
                                                "jobs/one/../more/*.jpg", "jobs/one/sub/[ab].png"}));
  EXPECT_EQ(b.output_dir, "jobs/one/out");
  EXPECT_EQ(b.setting("dtype"), "float16");
  ASSERT_EQ(b.steps.size(), 3u);
  EXPECT_EQ(b.steps[0].output_template, "{stem}_{op}{ext}");
  EXPECT_EQ(b.steps[1].output_template, "{stem}_{op}{ext}");
  EXPECT_EQ(b.steps[2].output_template, "{stem}_{index}{ext}");
  EXPECT_EQ(b.steps[2].rois_path, "jobs/one/r.json");
  EXPECT_EQ(std::get<ResizeIntent>(b.steps[0].config).config.output_sizes, (std::array<std::int64_t, 4>{1, 3, 8, 8}));

  const BatchFile no_base = parse_batch_file(
      R"({"inputs": ["x/./a.png"], "output_dir": "o/../p", "dtype": "float32",
          "steps": [{"op": "upsample2d", "config": {"scale_size": {"height": 2, "width": 3}}, "output": "u/{stem}_{op}.npy"}]})",
      "b.json", "");
  EXPECT_EQ(no_base.inputs, (std::vector<std::string>{"x/a.png"}));
  EXPECT_EQ(no_base.output_dir, "p");
  EXPECT_EQ(no_base.setting("dtype"), "float32");
  EXPECT_EQ(no_base.steps[0].output_template, "u/{stem}_{op}.npy");

  // Only roi_align steps: "inputs" may be left out (a dataset ROI file names its images).
  const BatchFile crops = parse_batch_file(
      R"({"output_dir": "/tmp/crops", "steps": [{"op": "roi_align", "rois": "d.json",
          "config": {"output_height": 2, "output_width": 2}, "output": "{label}/{id}_{index}{ext}"}]})",
      "b.json", "base");
  EXPECT_TRUE(crops.inputs.empty());
  EXPECT_EQ(crops.output_dir, "/tmp/crops");
  EXPECT_EQ(crops.steps[0].rois_path, "base/d.json");
}

TEST(ConfigBatchFiles, Refusals) {
  const std::string resample_step = R"({"op": "resample", "config": {"scales": [1, 1, 2, 2]}})";
  const auto with_steps = [](const std::string& steps) {
    return batch_error(R"({"inputs": ["a.png"], "steps": [)" + steps + "]}");
  };
  EXPECT_EQ(with_steps(resample_step + R"(, {"op": "resample", "config": {"scales": [1, 1, "x", 2]}})"),
            "b.json: key \"scales\" at /steps/1/config/scales/2: expected a finite number, got \"x\"");
  EXPECT_EQ(with_steps(R"({"op": "upsample2d", "config": {"op": "resample"}})"),
            "b.json: key \"op\" at /steps/0/config/op: expected \"upsample2d\" (the step's \"op\"), got \"resample\"");
  EXPECT_EQ(with_steps(R"({"op": "resize", "config": {}})"),
            "b.json: key \"op\" at /steps/0/op: expected one of \"resample\", \"thumbnail\", \"upsample2d\", \"roi_align\", got "
            "\"resize\"");
  EXPECT_EQ(with_steps(R"({"config": {}})"), "b.json: key \"op\" at /steps/0/op: required key is missing");
  EXPECT_EQ(with_steps(R"({"op": "resample"})"), "b.json: key \"config\" at /steps/0/config: required key is missing");
  EXPECT_EQ(with_steps(R"({"op": "resample", "config": "resample.json"})"),
            "b.json: key \"config\" at /steps/0/config: expected an object, got \"resample.json\"");
  EXPECT_EQ(with_steps(R"({"op": "resample", "config": {"scales": [1, 1, 2, 2]}, "rois": "r.json"})"),
            "b.json: key \"rois\" at /steps/0/rois: \"rois\" is only for roi_align steps; this step's op is "
            "\"resample\"");
  EXPECT_EQ(with_steps(R"({"op": "roi_align", "config": {"output_height": 2, "output_width": 2}})"),
            "b.json: key \"rois\" at /steps/0/rois: required key is missing");
  EXPECT_EQ(with_steps(R"({"op": "roi_align", "config": {"output_height": 0}, "rois": "r.json"})"),
            "b.json: key \"output_height\" at /steps/0/config/output_height: expected an integer >= 1 (at most "
            "9223372036854775807), got 0");
  EXPECT_EQ(with_steps(R"({"op": "resample", "config": {}, "outputs": "x"})"),
            "b.json: unknown key \"outputs\" at /steps/0/outputs; allowed keys: " + join(kStepKeys));
  EXPECT_EQ(with_steps(R"({"op": "resample", "config": {"scale": 2}})"),
            "b.json: unknown key \"scale\" at /steps/0/config/scale; allowed keys: " + join(kResizeKeys));
  EXPECT_CONTAINS(with_steps(R"({"op": "resample", "config": {"size": "8x8"}, "output": "{stem}_{index}{ext}"})"),
                  "key \"output\" at /steps/0/output: expected a template with placeholders {stem} {ext} {op} {dir} {relpath} {parent} "
                  "({index} {label} {id} are only for roi_align steps), got \"{stem}_{index}{ext}\"");
  EXPECT_CONTAINS(with_steps(R"({"op": "resample", "config": {"size": "8x8"}, "output": "{name}.png"})"), "at /steps/0/output");
  EXPECT_CONTAINS(with_steps(R"({"op": "resample", "config": {"size": "8x8"}, "output": "{stem.png"})"), "closed by '}'");
  EXPECT_CONTAINS(with_steps(R"({"op": "resample", "config": {"size": "8x8"}, "output": "/abs/{stem}.png"})"),
                  "at /steps/0/output: expected a relative name template");
  EXPECT_CONTAINS(with_steps(R"({"op": "resample", "config": {"size": "8x8"}, "output": ""})"), "expected a non-empty string");
  EXPECT_EQ(with_steps(R"(3)"), "b.json: key \"steps\" at /steps/0: expected an object, got 3");

  EXPECT_EQ(batch_error(R"({"inputs": ["a.png"], "steps": []})"),
            "b.json: key \"steps\" at /steps: expected a non-empty array of step objects, got []");
  EXPECT_EQ(batch_error(R"({"inputs": ["a.png"]})"), "b.json: key \"steps\" at /steps: required key is missing");
  EXPECT_EQ(batch_error(R"({"steps": [)" + resample_step + "]}"),
            "b.json: key \"inputs\" at /inputs: required key is missing");
  EXPECT_CONTAINS(batch_error(R"({"inputs": [], "steps": [)" + resample_step + "]}"),
                  "key \"inputs\" at /inputs: expected a non-empty array of strings");
  EXPECT_EQ(batch_error(R"({"inputs": ["a.png", 2], "steps": [)" + resample_step + "]}"),
            "b.json: key \"inputs\" at /inputs/1: expected a non-empty string, got 2");
  EXPECT_CONTAINS(batch_error(R"({"inputs": "a.png", "steps": [)" + resample_step + "]}"), "at /inputs: expected");
  EXPECT_EQ(batch_error(R"({"inputs": ["a.png"], "dtype": "uint32", "steps": [)" + resample_step + "]}"),
            "b.json: key \"dtype\" at /dtype: expected one of \"float32\", \"float16\", got \"uint32\"");
  EXPECT_EQ(batch_error(R"({"inputs": ["a.png"], "output_dir": "", "steps": [)" + resample_step + "]}"),
            "b.json: key \"output_dir\" at /output_dir: expected a non-empty string, got \"\"");
  EXPECT_EQ(batch_error(R"({"inputs": ["a.png"], "output": "o", "steps": [)" + resample_step + "]}"),
            "b.json: unknown key \"output\" at /output; allowed keys: " + join(kBatchKeys));
  EXPECT_CONTAINS(batch_error("{\"inputs\": [\"a.png\"],\n \"steps\": [}"), "b.json: invalid JSON at line 2");
}

// Damaged copies of every sample file (each byte replaced, or the text cut there) give rsz::Error or a result, never
// another exception or a crash.
TEST(ConfigErrors, DamagedFilesNeverEscapeAsOtherExceptions) {
  const std::vector<std::pair<std::string, std::function<void(const std::string&)>>> files = {
      {"configs/resample_scale.json", [](const std::string& t) { parse_resample_config(t, "x"); }},
      {"configs/resample_size.json", [](const std::string& t) { resolve(parse_resample_config(t, "x"), {1, 3, 5, 5}); }},
      {"configs/upsample_2x_nearest.json", [](const std::string& t) { parse_upsample2d_config(t, "x"); }},
      {"configs/roi_align_crops.json", [](const std::string& t) { resolve(parse_roi_align_config(t, "x")); }},
      {"samples/rois/chelsea_eyes.json", [](const std::string& t) { parse_roi_file(t, "x", "d"); }},
      {"samples/rois/dataset.json", [](const std::string& t) { parse_roi_file(t, "x", "d"); }},
      {"configs/batch.json", [](const std::string& t) { parse_batch_file(t, "x", "d"); }},
      {"configs/batch_chain.json", [](const std::string& t) { parse_batch_file(t, "x", "d"); }},
  };
  int refused = 0;
  for (const auto& [name, parse] : files) {
    std::ifstream in(repo(name), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(text.empty()) << name;
    std::vector<std::string> variants;
    for (std::size_t i = 0; i < text.size(); ++i) {
      variants.push_back(text.substr(0, i));
      for (const char c : std::string("\"1-[}x0\\.e")) {
        std::string damaged = text;
        damaged[i] = c;
        variants.push_back(damaged);
      }
    }
    for (const std::string& variant : variants) {
      try {
        parse(variant);
      } catch (const Error& e) {
        ++refused;
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << ": " << e.what() << "\n" << variant;
      }
    }
  }
  EXPECT_GT(refused, 1000);
}

// ---------------------------------------------------------------------------------------------------------------
// JSON Schemas: valid JSON, draft 2020-12, closed objects listing exactly the keys the parsers accept

using Json = nlohmann::json;

Json read_schema(const std::string& name) {
  const std::string path = repo("configs/schema/" + name);
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return Json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
}

// Every object schema ("type": "object" with "properties") by JSON pointer, with its property names.
void collect_object_schemas(const Json& node, const std::string& pointer,
                            std::map<std::string, std::set<std::string>>& out, std::vector<std::string>& open_objects) {
  if (node.is_object()) {
    if (node.value("type", "") == "object") {
      if (node.contains("properties")) {
        std::set<std::string> keys;
        for (const auto& item : node["properties"].items()) keys.insert(item.key());
        out[pointer] = keys;
      }
      if (node.value("additionalProperties", true) != false) open_objects.push_back(pointer);
    }
    for (const auto& item : node.items()) {
      collect_object_schemas(item.value(), pointer + "/" + item.key(), out, open_objects);
    }
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      collect_object_schemas(node[i], pointer + "/" + std::to_string(i), out, open_objects);
    }
  }
}

std::set<std::string> as_set(const Keys& keys) { return {keys.begin(), keys.end()}; }

// The operator spec tables (rsz/io/ops.h) are the source: each schema lists exactly a table's keys, each enum's
// spellings and each default (read from the core's Params) as the table says, and the batch steps' resize schema
// describes the resample keys as resample's own schema does. A field added to a table without its schema fails here.
TEST(OperatorSpecs, SchemasFollowTheTables) {
  const std::map<std::string, std::string> schema_of = {
      {"resample", "resample.schema.json"}, {"upsample2d", "upsample2d.schema.json"}, {"roi_align", "roi_align.schema.json"}};
  ASSERT_EQ(operator_specs().size(), 3u);
  for (const OperatorSpec* spec : operator_specs()) {
    SCOPED_TRACE(spec->op);
    const Json schema = read_schema(schema_of.at(spec->op));
    const Json& properties = schema.at("properties");
    std::set<std::string> listed;
    for (const auto& item : properties.items()) listed.insert(item.key());
    std::set<std::string> keys{"op", "$schema"};
    for (const FieldSpec& field : spec->fields) keys.insert(field.key);
    EXPECT_EQ(listed, keys);
    EXPECT_EQ(properties.at("op").value("const", ""), spec->op);
    for (const FieldSpec& field : spec->fields) {
      SCOPED_TRACE(field.key);
      if (!properties.contains(field.key)) continue;
      const Json& property = properties.at(field.key);
      if (field.kind == FieldKind::Enum) {
        EXPECT_EQ(property.at("enum"), Json(field.choices));
      }
      if (field.kind == FieldKind::Bool) {
        EXPECT_EQ(property.value("type", ""), "boolean");
      }
      if (field.default_json.empty()) {
        EXPECT_FALSE(property.contains("default"));
      } else {
        ASSERT_TRUE(property.contains("default"));
        EXPECT_EQ(property.at("default"), Json::parse(field.default_json));
      }
    }
  }
  const Json resample = read_schema("resample.schema.json").at("properties");
  const Json resize = read_schema("resize.schema.json").at("properties");
  for (const FieldSpec& field : resample_spec().fields) EXPECT_EQ(resize.at(field.key), resample.at(field.key)) << field.key;
}

// The flag text of every kind of field, through the tables.
TEST(OperatorSpecs, FlagTextSetsTheField) {
  ResampleConfig r;
  set_field(r, "interpolation", "nearest");
  set_field(r, "scales", "1,1,0.5,2");
  set_field(r, "input_pixel_offsets", "0");
  set_field(r, "output_sizes", "1,3,8,9");
  set_field(r, "rounding_direction", "decreasing");
  set_field(r, "antialiased", "true");
  EXPECT_EQ(r.interpolation, InterpolationMode::Nearest);
  EXPECT_EQ(r.scales, (std::array<float, 4>{1, 1, 0.5f, 2}));
  EXPECT_EQ(r.input_pixel_offsets, (std::array<float, 4>{0, 0, 0, 0}));
  EXPECT_EQ(r.output_sizes, (std::array<std::int64_t, 4>{1, 3, 8, 9}));
  EXPECT_EQ(r.rounding_direction, NearestRounding::Floor);
  EXPECT_EQ(r.antialiased, true);
  RoiAlignConfig a;
  set_field(a, "out_of_bounds_input_value", "-1.5");
  set_field(a, "maximum_samples_per_output", "4294967295");
  set_field(a, "output_height", "7");
  set_field(a, "reduction", "max");
  EXPECT_EQ(a.out_of_bounds_input_value, -1.5f);
  EXPECT_EQ(a.maximum_samples_per_output, 4294967295u);
  EXPECT_EQ(a.output_height, 7);
  EXPECT_EQ(a.reduction, RoiReduction::Max);
  Upsample2dConfig u;
  set_field(u, "scale_size", "2x3");
  EXPECT_EQ(u.scale_size->height, 2u);
  EXPECT_EQ(u.scale_size->width, 3u);
  EXPECT_EQ(error_of([&] { set_field(r, "scales", "1,1,0,1"); }),
            "--scales 1,1,0,1: resample: scales[2] = 0 is not allowed; each scale must be finite and > 0");
  EXPECT_EQ(error_of([&] { set_field(r, "output_pixel_offsets", "1,2"); }),
            "--output-offsets 1,2: 2 values given; give 1 value (every axis) or 4 values (N,C,H,W)");
  EXPECT_EQ(error_of([&] { set_field(a, "reduction", "sum"); }), "--reduction sum: average or max is allowed");
  EXPECT_EQ(error_of([&] { set_field(a, "minimum_samples_per_output", "0"); }),
            "minimum_samples_per_output 0: roi_align: minimum_samples_per_output = 0 is not allowed; it must be >= 1");
  EXPECT_EQ(error_of([&] { set_field(a, "minimum_samples_per_output", "-1"); }),
            "minimum_samples_per_output -1: '-1' is not a whole number >= 0 (at most 4294967295)");
  EXPECT_EQ(error_of([&] { set_field(u, "scale_size", "0x2"); }),
            "scale_size 0x2: upsample2d: scale_size.height = 0 is not allowed; it must be >= 1");
  EXPECT_EQ(error_of([&] { set_field(a, "input_pixel_offset", "x"); }), "--input-offset x: 'x' is not a finite number");
  EXPECT_EQ(error_of([&] { set_field(a, "sampling_ratio", "2"); }, ErrorCode::InvalidArgument),
            "roi_align has no field \"sampling_ratio\"");
}

// The readers of numbers in flag text, shared by the fields' flags (above) and the commands' shorthands (--scale,
// --factor, --output-size, --samples, --spatial-scale): one grammar, each caller's words for a wrong count.
TEST(OperatorSpecs, FlagNumbersAreReadOneWay) {
  constexpr const char* kScaleCounts = "1 to 2 comma-separated numbers are allowed";
  EXPECT_EQ(parse_float_list("0.5,2", "--scale", {1, 2}, kScaleCounts), (std::vector<float>{0.5f, 2.0f}));
  EXPECT_EQ(parse_float_list("-1.5e1", "--oob-value", {1}, "one number is allowed"), (std::vector<float>{-15.0f}));
  EXPECT_EQ(error_of([] { parse_float_list("1,2,3", "--scale", {1, 2}, kScaleCounts); }),
            "--scale 1,2,3: 3 values given; 1 to 2 comma-separated numbers are allowed");
  // Whole items only: no spaces, no '+', no hex, no empty item (a trailing separator included), finite.
  for (const std::string text : {"0.5,x", "0.5,", ",0.5", " 0.5", "+0.5", "0x1p-1", "0.5f", "inf", "nan", "1e39"}) {
    const std::string message = error_of([&] { parse_float_list(text, "--scale", {1, 2}, kScaleCounts); });
    EXPECT_EQ(message.rfind("--scale " + text + ": '", 0), 0u) << text << ": " << message;
    EXPECT_NE(message.find("' is not a finite number"), std::string::npos) << text << ": " << message;
  }
  // The fields' flags refuse the same text in the same words.
  ResampleConfig r;
  EXPECT_EQ(error_of([&] { set_field(r, "scales", "1,1,0.5,"); }), "--scales 1,1,0.5,: '' is not a finite number");
  EXPECT_EQ(error_of([&] { set_field(r, "scales", "1,1, 2,2"); }), "--scales 1,1, 2,2: ' 2' is not a finite number");

  EXPECT_EQ(parse_int_list("24x20", "--output-size", 'x', 2), (std::vector<std::int64_t>{24, 20}));
  EXPECT_EQ(parse_int_list("3", "--factor", ',', 1), (std::vector<std::int64_t>{3}));
  // The count first: the separator gives the shape.
  EXPECT_EQ(error_of([] { parse_int_list("8,8", "--output-size", 'x', 2); }),
            "--output-size 8,8: expected 2 whole numbers separated by 'x'");
  EXPECT_EQ(error_of([] { parse_int_list("8x", "--output-size", 'x', 2); }),
            "--output-size 8x: '' is not a whole number >= 1");
  EXPECT_EQ(error_of([] { parse_int_list("8x0", "--output-size", 'x', 2); }),
            "--output-size 8x0: '0' is not a whole number >= 1");
  EXPECT_EQ(error_of([] { parse_int_list("2:+3", "--samples", ':', 2); }),
            "--samples 2:+3: '+3' is not a whole number >= 1");
  EXPECT_EQ(error_of([] { parse_int_list("99999999999999999999", "--factor", ',', 1); }),
            "--factor 99999999999999999999: '99999999999999999999' is not a whole number >= 1");
  EXPECT_EQ(error_of([] { parse_int_list("2,3", "scale_size", 'x', 2, 0, 4294967295, "give HEIGHTxWIDTH"); }),
            "scale_size 2,3: give HEIGHTxWIDTH");
  EXPECT_EQ(parse_int("4294967295", "n", 0, 4294967295), 4294967295);
  EXPECT_EQ(error_of([] { parse_int("4294967296", "n", 0, 4294967295); }),
            "n 4294967296: '4294967296' is not a whole number >= 0 (at most 4294967295)");
  Upsample2dConfig u;
  EXPECT_EQ(error_of([&] { set_field(u, "scale_size", "2,3"); }), "scale_size 2,3: give HEIGHTxWIDTH");
  EXPECT_EQ(error_of([&] { set_field(r, "output_sizes", "1,3,8"); }),
            "--output-sizes 1,3,8: expected 4 whole numbers separated by ','");
}

TEST(ConfigSchemas, ListExactlyTheKeysTheParsersAccept) {
  const std::map<std::string, std::map<std::string, std::set<std::string>>> expected = {
      {"resample.schema.json", {{"", as_set(kResampleKeys)}}},
      {"resize.schema.json", {{"", as_set(kThumbnailKeys)}}},
      {"upsample2d.schema.json", {{"", as_set(kUpsample2dKeys)}, {"/properties/scale_size", as_set(kScaleSizeKeys)}}},
      {"roi_align.schema.json", {{"", as_set(kRoiAlignKeys)}}},
      {"rois.schema.json",
       {{"/$defs/plain", as_set(kPlainRoiKeys)},
        {"/$defs/dataset", as_set(kDatasetKeys)},
        {"/$defs/image", as_set(kImageKeys)},
        {"/$defs/roi", as_set(kRoiKeys)}}},
      {"batch.schema.json", {{"", as_set(kBatchKeys)}, {"/$defs/step", as_set(kStepKeys)}}},
  };
  std::set<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(repo("configs/schema")))
    on_disk.insert(entry.path().filename().string());
  std::set<std::string> listed;
  for (const auto& item : expected) listed.insert(item.first);
  EXPECT_EQ(on_disk, listed);

  for (const auto& [name, objects] : expected) {
    SCOPED_TRACE(name);
    const Json schema = read_schema(name);
    EXPECT_EQ(schema.value("$schema", ""), "https://json-schema.org/draft/2020-12/schema");
    std::map<std::string, std::set<std::string>> found;
    std::vector<std::string> open;
    collect_object_schemas(schema, "", found, open);
    EXPECT_EQ(found, objects);
    // The batch step's "config" is checked by the operator's schema ("allOf" on "op").
    const std::vector<std::string> expected_open = name == "batch.schema.json"
                                                       ? std::vector<std::string>{"/$defs/step/properties/config"}
                                                       : std::vector<std::string>{};
    EXPECT_EQ(open, expected_open);
  }
  // The batch step refers to the operator schemas (resample and thumbnail steps to the resize intent's).
  const std::string step = read_schema("batch.schema.json")["$defs"]["step"].dump();
  for (const char* ref : {"\"resize.schema.json\"", "\"upsample2d.schema.json\"", "\"roi_align.schema.json\""}) {
    EXPECT_NE(step.find(ref), std::string::npos) << ref;
  }
  // The top level of the ROI schema is one of the two forms.
  EXPECT_EQ(read_schema("rois.schema.json")["oneOf"].size(), 2u);
}

// The parsers accept every key the lists (and so the schemas) name, and name exactly those when refusing one.
TEST(ConfigSchemas, ParsersAcceptEveryListedKey) {
  EXPECT_NO_THROW(parse_resample_config(
      R"({"op": "resample", "interpolation": "nearest", "scales": [1, 1, 1, 1], "input_pixel_offsets": [0, 0, 0, 0],
          "output_pixel_offsets": [0, 0, 0, 0], "output_sizes": [1, 1, 1, 1], "$schema": "s"})",
      "x.json"));
  EXPECT_NO_THROW(parse_upsample2d_config(
      R"({"op": "upsample2d", "interpolation": "linear", "scale_size": {"height": 1, "width": 1}, "$schema": "s"})",
      "x.json"));
  EXPECT_NO_THROW(parse_roi_file(R"({"rois": [[0, 0, 1, 1]], "batch_indices": [0], "$schema": "s"})", "r.json", ""));
  EXPECT_NO_THROW(parse_roi_file(
      R"({"images": [{"path": "a", "rois": [{"box": [0, 0, 1, 1], "label": "l", "id": "i"}]}], "$schema": "s"})",
      "r.json", ""));
  EXPECT_NO_THROW(parse_batch_file(
      R"({"inputs": ["a"], "output_dir": "o", "dtype": "float32", "$schema": "s",
          "steps": [{"op": "roi_align", "config": {"output_height": 1, "output_width": 1}, "output": "{id}", "rois": "r"}]})",
      "b.json", ""));
  EXPECT_CONTAINS(upsample_error(R"({"x": 1})"), "allowed keys: " + join(kUpsample2dKeys));
  EXPECT_CONTAINS(upsample_error(R"({"scale_size": {"x": 1}})"), "allowed keys: " + join(kScaleSizeKeys));
}

// Enum values and defaults written in the schemas agree with the C++ names and the resolved defaults.
TEST(ConfigSchemas, EnumsAndDefaultsAgreeWithTheCode) {
  const Json interpolation = Json::array({to_string(InterpolationMode::Nearest), to_string(InterpolationMode::Linear)});
  const Json resample = read_schema("resample.schema.json")["properties"];
  const Json upsample = read_schema("upsample2d.schema.json")["properties"];
  const Json roi = read_schema("roi_align.schema.json")["properties"];
  EXPECT_EQ(resample["interpolation"]["enum"], interpolation);
  EXPECT_EQ(upsample["interpolation"]["enum"], interpolation);
  EXPECT_EQ(roi["interpolation"]["enum"], interpolation);
  EXPECT_EQ(roi["reduction"]["enum"], Json::array({to_string(RoiReduction::Average), to_string(RoiReduction::Max)}));
  EXPECT_EQ(read_schema("batch.schema.json")["properties"]["dtype"]["enum"],
            Json::array({to_string(DataType::Float32), to_string(DataType::Float16)}));

  ResampleConfig rc;
  rc.scales = std::array<float, 4>{1, 1, 1, 1};
  const ResampleParams rp = resolve(rc, {1, 1, 1, 1}).params;
  EXPECT_EQ(resample["interpolation"]["default"], to_string(rp.interpolation));
  EXPECT_EQ(resample["input_pixel_offsets"]["default"].get<std::vector<float>>(),
            std::vector<float>(rp.input_pixel_offsets.begin(), rp.input_pixel_offsets.end()));
  EXPECT_EQ(resample["output_pixel_offsets"]["default"].get<std::vector<float>>(),
            std::vector<float>(rp.output_pixel_offsets.begin(), rp.output_pixel_offsets.end()));
  EXPECT_EQ(resample["rounding_direction"]["default"], to_string(rp.rounding_direction));
  EXPECT_EQ(resample["rounding_direction"]["enum"],
            Json::array({to_string(NearestRounding::RoundPreferCeil), to_string(NearestRounding::RoundPreferFloor),
                         to_string(NearestRounding::Floor), to_string(NearestRounding::Ceil), "decreasing",
                         "increasing"}));
  EXPECT_EQ(resample["antialiased"]["default"], rp.antialiased);
  Upsample2dConfig uc;
  uc.scale_size = ScaleSize{};
  EXPECT_EQ(upsample["interpolation"]["default"], to_string(resolve(uc).interpolation));

  RoiAlignConfig ac;
  ac.output_height = 1;
  ac.output_width = 1;
  const RoiAlignParams ap = resolve(ac).params;
  EXPECT_EQ(roi["interpolation"]["default"], to_string(ap.interpolation));
  EXPECT_EQ(roi["reduction"]["default"], to_string(ap.reduction));
  EXPECT_EQ(roi["spatial_scale_x"]["default"].get<float>(), ap.spatial_scale_x);
  EXPECT_EQ(roi["spatial_scale_y"]["default"].get<float>(), ap.spatial_scale_y);
  EXPECT_EQ(roi["out_of_bounds_input_value"]["default"].get<float>(), ap.out_of_bounds_input_value);
  EXPECT_EQ(roi["minimum_samples_per_output"]["default"].get<std::uint32_t>(), ap.minimum_samples_per_output);
  EXPECT_EQ(roi["maximum_samples_per_output"]["default"].get<std::uint32_t>(), ap.maximum_samples_per_output);
  EXPECT_EQ(roi["input_pixel_offset"]["default"].get<float>(), ap.input_pixel_offset);
  EXPECT_EQ(roi["output_pixel_offset"]["default"].get<float>(), ap.output_pixel_offset);
  EXPECT_EQ(roi["align_regions_to_corners"]["default"].get<bool>(), ap.align_regions_to_corners);
}

// RESAMPLE2/3 keys: every rounding direction by name (DirectML's increasing / decreasing are ceil / floor), the
// antialiased flag, both carried into the resolved parameters; wrong values are refused with the allowed ones.
TEST(ConfigResample3, RoundingDirectionAndAntialiased) {
  const std::pair<const char*, NearestRounding> names[] = {
      {"round_prefer_ceil", NearestRounding::RoundPreferCeil}, {"round_prefer_floor", NearestRounding::RoundPreferFloor},
      {"floor", NearestRounding::Floor}, {"ceil", NearestRounding::Ceil}, {"decreasing", NearestRounding::Floor},
      {"increasing", NearestRounding::Ceil}};
  for (const auto& [name, rounding] : names) {
    const ResampleConfig c = parse_resample_config(
        std::string(R"({"scales": [1, 1, 2, 2], "rounding_direction": ")") + name + R"(", "antialiased": true})",
        "x.json");
    const ResampleParams p = resolve(c, {1, 1, 4, 4}).params;
    EXPECT_EQ(p.rounding_direction, rounding) << name;
    EXPECT_TRUE(p.antialiased);
    ResampleConfig flag;
    set_field(flag, "rounding_direction", name);
    EXPECT_EQ(flag.rounding_direction, rounding) << name;
  }
  const ResampleParams defaults = resolve(parse_resample_config(R"({"scales": [1, 1, 2, 2]})", "x.json"), {1, 1, 4, 4}).params;
  EXPECT_EQ(defaults.rounding_direction, NearestRounding::RoundPreferCeil);
  EXPECT_FALSE(defaults.antialiased);
  const auto message = [](const std::string& json) {
    try {
      parse_resample_config(json, "x.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"rounding_direction": "nearest"})").find("rounding_direction"), std::string::npos);
  EXPECT_NE(message(R"({"rounding_direction": "nearest"})").find("round_prefer_floor"), std::string::npos);
  EXPECT_NE(message(R"({"antialiased": 1})").find("true or false"), std::string::npos);
  ResampleConfig flag;
  EXPECT_EQ(error_of([&] { set_field(flag, "rounding_direction", "up"); }),
            "--rounding-direction up: round_prefer_ceil, round_prefer_floor, floor, ceil, decreasing or increasing is "
            "allowed");
  EXPECT_EQ(error_of([&] { set_field(flag, "rounding_direction", "up", "resample: rounding_direction"); }),
            "resample: rounding_direction up: round_prefer_ceil, round_prefer_floor, floor, ceil, decreasing or "
            "increasing is allowed");
}

TEST(Helpers, OneFnvOneExtensionOneEnumParser) {
  // FNV-1a 64's published vectors; fed in pieces it is the same hash.
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
  Fnv1a64 pieces;
  pieces.add("foo");
  pieces.add(std::string("bar"));
  EXPECT_EQ(pieces.value(), fnv1a64("foobar"));
  EXPECT_EQ(lower_extension("a/B.JPG"), ".jpg");
  EXPECT_EQ(lower_extension("dir.X/name"), "");
  EXPECT_EQ(lower_extension("x.tar.GZ"), ".gz");
  EXPECT_EQ(parse_compute_type("float16", "--dtype"), DataType::Float16);
  EXPECT_EQ(compute_type_names(), (std::vector<std::string>{"float32", "float16"}));
  try {
    parse_compute_type("fp16", "--dtype");
    ADD_FAILURE() << "fp16 was taken";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--dtype = \"fp16\"; float32 or float16 is allowed");
  }
}

}  // namespace
}  // namespace rsz::io
