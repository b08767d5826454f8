// Batch files: the steps of `rsz run`, each an operator config or a resize intent.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "rsz/io/config.h"
#include "rsz/io/image.h"
#include "rsz/io/resize.h"

#pragma GCC visibility push(default)

namespace rsz::io {

// ---- batch files (rsz run) ----
// {"inputs": ["photos/", "more/*.jpg", "one.png"], "output_dir": "out/batch", "dtype": "float32",
//  "steps": [{"op": "resample", "config": {...resample keys...}, "output": "{stem}_small.png"},
//            {"op": "roi_align", "config": {...}, "rois": "boxes.json", "output": "crops/{stem}_{index}.png"}]}
// inputs are resolved against the batch file's folder; each step runs on every input independently.
// A "thumbnail" step is a resample step with rsz thumbnail's defaults (apply_thumbnail_defaults): its config
// needs "size" and may say "enlarge". Resample and thumbnail configs take the resize intent's keys besides the
// resample keys: "size" ('256x256>', '50%', ...), "fit", "gravity", "preset" (resize.h).
// "output" is a name template ({stem}, {ext}, {index}, {label}, {id}); default "{stem}_{op}{ext}" ("{stem}_{index}{ext}"
// for roi_align). dtype is optional ("float32" default, or "float16").
// Details: "steps" is a non-empty array; each step needs "op" and "config" (an object of that op's config keys; an
// "op" inside it must match the step's). "rois" is required for roi_align steps and refused for the others.
// "output" must be relative (it is placed under the output folder) and use only the placeholders above ({index},
// {label} and {id} only in roi_align steps). "inputs" (a non-empty array of files, folders or glob patterns) is
// required unless every step is roi_align (dataset ROI files name their own images). Relative inputs are prefixed
// with base_dir; plain paths are also lexically normalized, glob patterns (containing * ? [) are left as written.
// A step with "input": "previous" runs on the outputs the previous step wrote (not the batch's inputs), once that
// step is done: "half then double" chains (not allowed on the first step).
// "output_dir" is resolved against base_dir; when absent it is "out" in base_dir. Messages name JSON paths such as
// /steps/1/config/scales/2.

// What a roi_align step's "rois_check" and the command line's --rois-check do with boxes outside the image, empty or
// inverted (legal ROI_ALIGN, likely dataset mistakes) on images.
enum class RoisCheck {
  Warn,   // one line per image; the crops are still written
  Error,  // the input is refused
  Off,
  Skip,   // such boxes are left out (no crop), counted in the summary and listed in the manifest
};
const char* to_string(RoisCheck check);  // "warn", "error", "off", "skip"
// The spellings of a roi_align step's "rois_check" and of the command line's --rois-check: "warn", "error", "off",
// "skip".
std::vector<std::string> rois_check_names();
// Throws ErrorCode::InvalidArgument: `what` = "TEXT"; warn, error, off or skip is allowed.
RoisCheck parse_rois_check(const std::string& text, const std::string& what);

// What a roi_align step's "size_mismatch" and the command line's --size-mismatch do when COCO / VOC annotations
// state an image size other than the image's (after its EXIF orientation unless "exif" is false / --no-exif).
enum class SizeMismatch {
  Fail,   // the image fails (its crops are not cut; the other images' are)
  Scale,  // the boxes are scaled from the stated size to the image's: x by w_image / w_stated, y likewise
};
const char* to_string(SizeMismatch mode);  // "fail", "scale"
std::vector<std::string> size_mismatch_names();
// Throws ErrorCode::InvalidArgument: `what` = "TEXT"; fail or scale is allowed.
SizeMismatch parse_size_mismatch(const std::string& text, const std::string& what);

struct BatchStep {
  using Config = std::variant<ResizeIntent, Upsample2dConfig, RoiAlignConfig>;
  std::string op;  // "resample", "thumbnail", "upsample2d" or "roi_align": the step's operator, matching `config`
  Config config;
  std::string output_template;
  std::string rois_path;   // roi_align only: resolved against the batch file's folder
  std::string image_root;  // roi_align only, "image_root": COCO / VOC image folder (--image-root), resolved likewise
  std::string names_path;  // roi_align only, "names": YOLO class names (--names), resolved likewise
  std::string manifest;    // roi_align only, "manifest": the crop manifest, relative to the output folder
  std::optional<RoisCheck> rois_check;  // roi_align only, "rois_check" (--rois-check); unset: warn
  std::optional<SizeMismatch> size_mismatch;  // roi_align only, "size_mismatch" (--size-mismatch); unset: fail
  bool skip_crowd = false;      // roi_align only, "skip_crowd" (--skip-crowd): COCO iscrowd annotations left out
  bool skip_difficult = false;  // roi_align only, "skip_difficult" (--skip-difficult): VOC difficult objects left out
  bool chained = false;   // "input": "previous": the step runs on the previous step's outputs, after it
};
struct BatchFile {
  std::vector<std::string> inputs;
  std::string output_dir;
  // The run-level settings the file sets (run_settings.h: the rows with a batch key, "quality", "strip", "exif",
  // ...), by the row's key, as the text its flag takes: "true" / "false" for a Bool ("exif": false is no_exif
  // "true"), "95", "float16", "#ff8000". Checked as JSON here; read by the command line as its flags are.
  std::map<std::string, std::string> settings;
  std::string setting(const std::string& key) const {
    const auto it = settings.find(key);
    return it == settings.end() ? std::string() : it->second;
  }
  std::vector<BatchStep> steps;
};
BatchFile parse_batch_file(const std::string& json_text, const std::string& source, const std::string& base_dir);
BatchFile read_batch_file(const std::string& path);

}  // namespace rsz::io

#pragma GCC visibility pop
