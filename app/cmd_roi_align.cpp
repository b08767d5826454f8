#include <array>
#include <functional>
#include <limits>
#include <memory>
#include <variant>

#include "commands.h"
#include "streams.h"
#include "rsz/error.h"
#include "rsz/io/npy.h"
#include "rsz/roi_align.h"

namespace rsz::app {

void setup_roi_align(CLI::App& app, RoiAlignOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "roi-align", "Cut ROI crops out of images or pool ROIs of tensors (DirectML ROI_ALIGN / ROI_ALIGN1)");
  add_common_options(*cmd, o.common, io::kUseOperators | io::kUseRoiAlign);
  cmd->add_option("--rois", o.rois,
                  "ROIs: JSON ({\"rois\": [[x1,y1,x2,y2],...]} or a dataset {\"images\": [...]}), .npy [R,4], or "
                  "dataset annotations: COCO instances JSON, Pascal VOC .xml (file or folder), YOLO .txt (file or "
                  "folder, with -i)")
      ->required();
  cmd->add_option("--image-root", o.image_root,
                  "COCO / VOC: folder the annotations' image file names are relative to (default: the annotation "
                  "file's folder)");
  cmd->add_flag("--allow-outside-root", o.allow_outside_root,
                "COCO / VOC: take image names that leave the image root (absolute, or '..' above it); refused by "
                "default, since a dataset file could otherwise point rsz at any file");
  cmd->add_option("--names", o.names,
                  "YOLO: class names: a text file, one per line, or Ultralytics' data.yaml (its names: list or map) "
                  "(default: class numbers as labels)");
  add_choice_option(*cmd, "--rois-check", o.common.rois_check, io::rois_check_names(), io::parse_rois_check,
                    "Boxes outside the image, empty or inverted (legal ROI_ALIGN, likely dataset mistakes): warn "
                    "(default: one line per image, crops still written), error (refuse the run), skip (no crop: "
                    "counted in the summary, listed in the manifest with the reason) or off; images only");
  add_choice_option(*cmd, "--size-mismatch", o.common.size_mismatch, io::size_mismatch_names(),
                    io::parse_size_mismatch,
                    "COCO / VOC: an image whose size is not the one the annotations state (width/height, <size>; "
                    "after EXIF orientation unless --no-exif): fail (default: that image fails, exit 1, the others "
                    "are cropped) or scale (its boxes are scaled to the image: x by w_image/w_stated, y likewise)");
  cmd->add_flag("--skip-crowd", o.skip_crowd,
                "COCO: leave out annotations with \"iscrowd\": 1 (regions of many objects); counted in the summary, "
                "listed in the manifest");
  cmd->add_flag("--skip-difficult", o.skip_difficult,
                "Pascal VOC: leave out objects marked <difficult>1</difficult>; counted in the summary, listed in "
                "the manifest");
  cmd->add_option("--manifest", o.common.manifest,
                  "Also write a crop manifest: one line per crop with its path, source image, box, label and id "
                  "(.jsonl or .csv); with --plan, each shard writes its own, its number before the extension "
                  "(m.jsonl -> m.00003.jsonl), and rsz merge joins them into the name given");
  cmd->add_option("--batch-indices", o.batch_indices, "uint32 .npy [R] batch index per ROI (default: all 0)");
  cmd->add_option("--output-size", o.output_size, "Crop size WxH (output_width x output_height)");
  // The config fields' flags: --mode, --reduction, --oob-value, --input-offset, --output-offset, --align-corners.
  add_field_flags(*cmd, io::roi_align_spec(), o.fields);
  cmd->add_option("--samples", o.samples,
                  "Samples per output pixel and axis: N, or MIN:MAX (default 1:4294967295, adaptive)");
  cmd->add_option("--spatial-scale", o.spatial_scale, "ROI coordinate scale S, or SX,SY (default 1)");
  cmd->footer(
      "Examples:\n"
      "  rsz roi-align -i photo.jpg --rois boxes.json --output-size 128x128 -o crops/\n"
      "  rsz roi-align --rois dataset.json --output-size 64x64 -o 'crops/{label}/{stem}_{id}.png'\n"
      "  rsz roi-align --rois instances_val2017.json --image-root val2017 --output-size 224x224 \\\n"
      "      -o 'crops/{label}/{id}.jpg' --manifest crops.jsonl\n"
      "  rsz roi-align -i 'images/*.jpg' --rois labels/ --names classes.txt --output-size 96x96 -o 'crops/{label}/{id}.png'\n"
      "  rsz roi-align -i features.npy --rois rois.npy --batch-indices bi.npy -o pooled.npy "
      "--output-size 7x7 --spatial-scale 0.25 --samples 2");
}

OperatorCommand roi_align_command() {
  OperatorCommand c;
  c.command = "roi-align";
  c.op = "roi_align";
  c.setup = subcommand(setup_roi_align, run_roi_align);
  return c;
}

int run_roi_align(const RoiAlignOptions& o) {
  const CommonOptions& common = o.common;
  if (common.output.empty()) usage_error("roi-align: -o/--output is required");
  const std::uint64_t budget = common.memory_budget();
  if (!common.config.empty()) check_json_budget(common.config, "--config", budget);
  if (!is_npy_path(o.rois)) check_json_budget(o.rois, "--rois", budget);
  if (!o.names.empty()) check_json_budget(o.names, "--names", budget);
  const io::RoiAlignConfig file_config =
      common.config.empty() ? io::RoiAlignConfig{} : io::read_roi_align_config(common.config);
  io::RoiAlignConfig flags = field_config<io::RoiAlignConfig>(o.fields);
  if (!o.output_size.empty()) {
    const auto v = io::parse_int_list(o.output_size, "--output-size", 'x', 2);
    flags.output_width = v[0];
    flags.output_height = v[1];
  }
  if (!o.samples.empty()) {
    const bool range = o.samples.find(':') != std::string::npos;
    const auto v = io::parse_int_list(o.samples, "--samples", ':', range ? 2 : 1);
    if (v[0] > UINT32_MAX || v.back() > UINT32_MAX) usage_error("--samples " + o.samples + ": at most 4294967295");
    flags.minimum_samples_per_output = static_cast<std::uint32_t>(v[0]);
    flags.maximum_samples_per_output = static_cast<std::uint32_t>(v.back());
  }
  if (!o.spatial_scale.empty()) {
    const auto v = io::parse_float_list(o.spatial_scale, "--spatial-scale", {1, 2},
                                        "1 to 2 comma-separated numbers are allowed");
    flags.spatial_scale_x = v[0];
    flags.spatial_scale_y = v.back();
  }
  const io::RoiAlignConfig merged = io::overlay(file_config, flags);
  if (!merged.output_height || !merged.output_width) {
    usage_error("roi-align: no crop size given; use --output-size WxH or a config with \"output_height\" and "
                "\"output_width\"");
  }
  OperatorRequest request;
  request.op = "roi_align";
  request.config = merged;
  request.source = RoiSource{o.rois,          o.batch_indices, o.image_root,    o.names,
                             o.allow_outside_root, o.skip_crowd,     o.skip_difficult};
  request.other_inputs = {common.config, o.rois, o.batch_indices, o.names};
  return run_operator(request, common);
}

}  // namespace rsz::app
