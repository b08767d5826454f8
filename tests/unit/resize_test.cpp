// The resize intent (rsz/io/resize.h): plan_resize's exact parameters for each target, fit and preset, image mode
// against tensor mode, and the refusals; and batch steps that say what the command line's flags say.
#include "rsz/io/resize.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>

#include "rsz/error.h"
#include "rsz/io/batch_file.h"
#include "support/test_util.h"

namespace rsz::io {
namespace {

ResizeIntent box_intent(const std::string& size) {
  ResizeIntent intent;
  intent.box = parse_size(size, "size");
  return intent;
}

std::string usage_of(const std::function<void()>& f) { return test::error_message(f, ErrorCode::InvalidArgument); }

TEST(ResizeIntent, ImageModeCopiesTheBatchAndChannelAxes) {
  // The shipped configs/resample_size.json: output_sizes [1, 3, 224, 224].
  ResizeIntent intent;
  intent.config.output_sizes = std::array<std::int64_t, 4>{1, 3, 224, 224};
  intent.config.input_pixel_offsets = std::array<float, 4>{3, 3, 0.5f, 0.5f};
  const ResizePlan image = plan_resize(intent, {1, 4, 100, 150}, true);
  EXPECT_EQ(image.call_sizes, (Dims{1, 4, 224, 224}));
  EXPECT_EQ(image.canvas, image.call_sizes);
  EXPECT_EQ(image.params.scales[0], 1.0f);
  EXPECT_EQ(image.params.scales[1], 1.0f);
  EXPECT_EQ(image.params.scales[2], 224.0f / 100.0f);
  EXPECT_EQ(image.params.scales[3], 224.0f / 150.0f);
  EXPECT_EQ(image.params.input_pixel_offsets, (std::array<float, 4>{0, 0, 0.5f, 0.5f}));
  EXPECT_EQ(image.params.output_pixel_offsets, (std::array<float, 4>{0, 0, -0.5f, -0.5f}));
  // Tensor mode is DirectML's RESAMPLE1 on every axis, as configured.
  const ResizePlan tensor = plan_resize(intent, {2, 4, 100, 150}, false);
  EXPECT_EQ(tensor.call_sizes, (Dims{1, 3, 224, 224}));
  EXPECT_EQ(tensor.params.scales[0], 0.5f);
  EXPECT_EQ(tensor.params.scales[1], 0.75f);
  EXPECT_EQ(tensor.params.input_pixel_offsets[1], 3.0f);
}

TEST(ResizeIntent, CoverWithAlignCornersScalesTheResizedImageNotTheWindow) {
  ResizeIntent intent = box_intent("200x200");
  intent.fit = Fit::Cover;
  intent.preset = ResamplePreset::AlignCorners;
  const ResizePlan p = plan_resize(intent, {1, 3, 300, 450}, true);  // resized to 300 x 200, window 200 x 200
  EXPECT_EQ(p.call_sizes, (Dims{1, 3, 200, 200}));
  EXPECT_EQ(p.params.scales[2], 199.0f / 299.0f);
  EXPECT_EQ(p.params.scales[3], 299.0f / 449.0f);  // from the resized width, 300
  EXPECT_EQ(p.params.output_pixel_offsets[3], -50.0f);  // the centred window starts at column 50
  EXPECT_EQ(p.params.output_pixel_offsets[2], 0.0f);
  // The same image resized whole: the window's columns are its columns 50..249.
  ResizeIntent whole = box_intent("300x200");
  whole.preset = ResamplePreset::AlignCorners;
  const ResizePlan w = plan_resize(whole, {1, 3, 300, 450}, true);
  EXPECT_EQ(w.params.scales, p.params.scales);
  EXPECT_EQ(w.params.output_pixel_offsets[3], 0.0f);
}

// plan_resize is the one place a preset is applied: its offsets and mode, under the intent's own fields (a batch
// step's keys, Python's keywords), in both modes.
TEST(ResizeIntent, APresetLiesUnderTheIntentsOwnFields) {
  ResizeIntent intent;
  intent.config.scales = std::array<float, 4>{1, 1, 2, 2};
  intent.preset = ResamplePreset::NearestFloor;
  for (const bool image : {true, false}) {
    const ResizePlan p = plan_resize(intent, {1, 1, 4, 4}, image);
    EXPECT_EQ(p.params.interpolation, InterpolationMode::Nearest) << image;
    EXPECT_EQ(p.params.input_pixel_offsets[2], 0.5f) << image;
    EXPECT_EQ(p.params.output_pixel_offsets[2], 0.0f) << image;
  }
  intent.config.interpolation = InterpolationMode::Linear;
  intent.config.output_pixel_offsets = std::array<float, 4>{0, 0, 0.25f, 0.25f};
  const ResizePlan own = plan_resize(intent, {1, 1, 4, 4}, false);
  EXPECT_EQ(own.params.interpolation, InterpolationMode::Linear);
  EXPECT_EQ(own.params.output_pixel_offsets, (std::array<float, 4>{0, 0, 0.25f, 0.25f}));
  EXPECT_EQ(own.params.input_pixel_offsets, (std::array<float, 4>{0.5f, 0.5f, 0.5f, 0.5f}));  // still the preset's
  // A batch step says the same: its keys over its preset.
  const BatchFile b = parse_batch_file(
      R"({"inputs": ["a.npy"], "steps": [{"op": "resample", "config": {"scales": [1, 1, 2, 2],
          "preset": "nearest_floor", "interpolation": "linear", "output_pixel_offsets": [0, 0, 0.25, 0.25]}}]})",
      "b.json", "");
  const ResizePlan step = plan_resize(std::get<ResizeIntent>(b.steps[0].config), {1, 1, 4, 4}, false);
  EXPECT_EQ(step.params.interpolation, own.params.interpolation);
  EXPECT_EQ(step.params.input_pixel_offsets, own.params.input_pixel_offsets);
  EXPECT_EQ(step.params.output_pixel_offsets, own.params.output_pixel_offsets);
}

TEST(ResizeIntent, ContainPlacesTheCallOnThePaddedCanvas) {
  ResizeIntent intent = box_intent("200x200");
  intent.fit = Fit::Contain;
  intent.gravity = Gravity::South;
  const ResizePlan p = plan_resize(intent, {1, 3, 300, 450}, true);
  EXPECT_TRUE(p.padded());
  EXPECT_EQ(p.canvas, (Dims{1, 3, 200, 200}));
  EXPECT_EQ(p.call_sizes, (Dims{1, 3, 133, 200}));
  EXPECT_EQ(p.top, 67);
  EXPECT_EQ(p.left, 0);
}

TEST(ResizeIntent, OnlyShrinkKeepsSmallImagesWhateverTheFit) {
  for (const Fit fit : {Fit::Inside, Fit::Fill, Fit::Outside}) {
    ResizeIntent intent = box_intent("64x64");
    intent.fit = fit;
    intent.only_shrink = true;
    EXPECT_EQ(plan_resize(intent, {1, 3, 10, 20}, true).canvas, (Dims{1, 3, 10, 20})) << to_string(fit);
  }
  ResizeIntent cover = box_intent("64x64");
  cover.fit = Fit::Cover;
  cover.only_shrink = true;
  EXPECT_EQ(plan_resize(cover, {1, 3, 10, 20}, true).canvas, (Dims{1, 3, 10, 20}));  // not enlarged to the box
  // A box larger than the image on one side only: cover and outside would still enlarge, fill would stretch that
  // side; under only_shrink nothing grows (cover crops the kept image to the box where it is larger).
  ResizeIntent wide_cover = box_intent("2000x300");
  wide_cover.fit = Fit::Cover;
  wide_cover.only_shrink = true;
  const ResizePlan kept = plan_resize(wide_cover, {1, 3, 400, 600}, true);
  EXPECT_EQ(kept.canvas, (Dims{1, 3, 300, 600}));
  EXPECT_EQ(kept.params.scales[2], 1.0f);
  EXPECT_EQ(kept.params.output_pixel_offsets[2], -0.5f - 50.0f);  // the centred window of rows 50..349
  ResizeIntent wide_outside = box_intent("2000x100");
  wide_outside.fit = Fit::Outside;
  wide_outside.only_shrink = true;
  EXPECT_EQ(plan_resize(wide_outside, {1, 3, 400, 600}, true).canvas, (Dims{1, 3, 400, 600}));
  ResizeIntent wide_fill = box_intent("2000x100");
  wide_fill.fit = Fit::Fill;
  wide_fill.only_shrink = true;
  EXPECT_EQ(plan_resize(wide_fill, {1, 3, 400, 600}, true).canvas, (Dims{1, 3, 100, 600}));
  ResizeIntent percent = box_intent("150%");
  percent.only_shrink = true;
  EXPECT_EQ(plan_resize(percent, {1, 3, 10, 20}, true).canvas, (Dims{1, 3, 10, 20}));
  // thumbnail's defaults: fit inside, only shrinking; --enlarge lifts it.
  ResizeIntent thumb;
  thumb.box = parse_size("64", "size", true);
  apply_thumbnail_defaults(thumb, false);
  EXPECT_EQ(plan_resize(thumb, {1, 3, 10, 20}, true).canvas, (Dims{1, 3, 10, 20}));
  EXPECT_TRUE(*thumb.config.antialiased);
  ResizeIntent big;
  big.box = parse_size("64", "size", true);
  apply_thumbnail_defaults(big, true);
  EXPECT_EQ(plan_resize(big, {1, 3, 10, 20}, true).canvas, (Dims{1, 3, 32, 64}));
}

TEST(ResizeIntent, RefusesWhatCannotMeanAnything) {
  EXPECT_EQ(usage_of([] { plan_resize(box_intent("1e20%"), {1, 3, 10, 20}, true); }),
            "size 1e20%: the resized side would be 2e+19 pixels; sides up to 2147483646 are allowed");
  EXPECT_NE(usage_of([] { parse_size("99999999999x2", "size"); }).find("not a size"), std::string::npos);
  EXPECT_NE(usage_of([] { check_intent(ResizeIntent{}); }).find("no target size"), std::string::npos);
  ResizeIntent gravity = box_intent("20x20");
  gravity.gravity = Gravity::North;
  EXPECT_NE(usage_of([&] { check_intent(gravity); }).find("only with fit cover or contain"), std::string::npos);
  ResizeIntent twice = box_intent("20x20>");
  twice.fit = Fit::Cover;
  EXPECT_NE(usage_of([&] { check_intent(twice); }).find("drop one"), std::string::npos);
  ResizeIntent one_side = box_intent("20x");
  one_side.fit = Fit::Contain;
  EXPECT_NE(usage_of([&] { check_intent(one_side); }).find("needs both sides"), std::string::npos);
  EXPECT_NE(usage_of([] { parse_fit("crop", "fit"); }).find("fill, inside, outside, cover or contain is allowed"),
            std::string::npos);
}

TEST(ResizeIntent, BatchStepsSayWhatTheFlagsSay) {
  const BatchFile b = parse_batch_file(
      R"({"inputs": ["a.png"], "steps": [
          {"op": "resample", "config": {"size": "200x200", "fit": "cover", "gravity": "north", "preset": "align_corners"}},
          {"op": "thumbnail", "config": {"size": "128"}},
          {"op": "thumbnail", "config": {"size": "128", "enlarge": true, "interpolation": "nearest"}}]})",
      "b.json", "");
  const auto& cover = std::get<ResizeIntent>(b.steps[0].config);
  EXPECT_EQ(cover.fit, Fit::Cover);
  EXPECT_EQ(cover.gravity, Gravity::North);
  EXPECT_EQ(cover.preset, ResamplePreset::AlignCorners);
  EXPECT_FALSE(cover.config.input_pixel_offsets);  // the step's own fields only: plan_resize applies the preset
  EXPECT_EQ(cover.box->width, 200);
  // Planned, the step has the preset's offsets (0, not half-pixel) and scales, as --preset align_corners gives.
  const ResizePlan planned = plan_resize(cover, {1, 3, 300, 450}, true);
  EXPECT_EQ(planned.params.input_pixel_offsets, (std::array<float, 4>{0, 0, 0, 0}));
  EXPECT_EQ(planned.params.output_pixel_offsets, (std::array<float, 4>{0, 0, 0, -50}));  // north: the window at x 50
  EXPECT_EQ(planned.params.scales[3], 299.0f / 449.0f);
  const auto& thumb = std::get<ResizeIntent>(b.steps[1].config);
  EXPECT_EQ(b.steps[1].op, "thumbnail");
  EXPECT_EQ(thumb.box->height, 128);  // N is an N x N box
  EXPECT_EQ(thumb.fit, Fit::Inside);
  EXPECT_TRUE(thumb.only_shrink);
  EXPECT_EQ(thumb.config.antialiased, true);
  const auto& enlarged = std::get<ResizeIntent>(b.steps[2].config);
  EXPECT_FALSE(enlarged.only_shrink);
  EXPECT_EQ(enlarged.config.antialiased, false);  // nearest is not antialiased

  const auto error = [](const std::string& step) {
    return usage_of([&] { parse_batch_file(R"({"inputs": ["a.png"], "steps": [)" + step + "]}", "b.json", ""); });
  };
  EXPECT_EQ(error(R"({"op": "resample", "config": {"size": "20x20", "gravity": "north"}})"),
            "b.json: key \"config\" at /steps/0/config: gravity north: only with fit cover or contain (it places the "
            "crop or the padding)");
  EXPECT_NE(error(R"({"op": "resample", "config": {"size": "big"}})").find("at /steps/0/config/size: size big: not a "
                                                                            "size"),
            std::string::npos);
  EXPECT_NE(error(R"({"op": "resample", "config": {}})").find("no target size"), std::string::npos);
  EXPECT_NE(error(R"({"op": "resample", "config": {"size": "9x9", "enlarge": true}})").find("unknown key \"enlarge\""),
            std::string::npos);
  EXPECT_EQ(error(R"({"op": "thumbnail", "config": {}})"),
            "b.json: key \"size\" at /steps/0/config/size: required key is missing");
  EXPECT_NE(error(R"({"op": "resample", "config": {"size": "9x9", "scales": [1, 1, 2, 2]}})")
                .find("size 9x9 and scales or output sizes both set the output size; give one"),
            std::string::npos);
  EXPECT_NE(error(R"({"op": "thumbnail", "config": {"size": "9", "preset": "align_corners"}})")
                .find("unknown key \"preset\""),
            std::string::npos);
}

}  // namespace
}  // namespace rsz::io
