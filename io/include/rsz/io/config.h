// JSON files: operator configs (docs/CLI_CONTRACT.md), ROI files and batch files.
//
// Every parse error is an rsz::Error with ErrorCode::InvalidArgument and a one-line message naming the file, the key, its
// JSON pointer path, the value received and what is allowed, e.g.
//   configs/x.json: key "scales" at /scales/2: expected a finite number, got "abc"
//   configs/x.json: unknown key "scale" at /scale; allowed keys: op, interpolation, scales, ...
// Unknown keys, wrong types and unknown enum strings are errors, never silently defaulted. Enum values are the
// lowercase words of the C++ to_string functions ("nearest", "linear", "average", "max").
// Also refused: JSON syntax errors (message names line, column and byte), a key repeated in one object, nesting
// deeper than 64 levels, integers given as non-integral numbers (2.5; 2.0 is accepted as 2) or outside their range
// (unsigned fields refuse negatives), and numbers that are not finite in float32 (1e39). A file that cannot be read
// is ErrorCode::Io. Every top-level object (config, ROI and batch files) may carry a "$schema" string, which is
// ignored: the JSON Schemas (draft 2020-12) in configs/schema/ describe exactly what the parsers accept, e.g.
// {"$schema": "schema/resample.schema.json", ...} for editors.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz::io {

// ---- operator configs: what a config file (or the flags) sets; unset fields take the defaults ----

struct ResampleConfig {
  std::optional<InterpolationMode> interpolation;
  std::optional<std::array<float, 4>> scales;
  std::optional<std::array<float, 4>> input_pixel_offsets;
  std::optional<std::array<float, 4>> output_pixel_offsets;
  std::optional<std::array<std::int64_t, 4>> output_sizes;
  std::optional<NearestRounding> rounding_direction;  // "rounding_direction" (DML_RESAMPLE2)
  std::optional<bool> antialiased;                    // "antialiased" (DML_RESAMPLE3)
};

// "auto", "cpu", "reference" or "cuda" (the command line's --backend, the Python module's backend=). Throws
// ErrorCode::InvalidArgument naming `what`, the text and the allowed names.
Backend parse_backend(const std::string& text, const std::string& what);
std::vector<std::string> backend_names();  // "auto", "cpu", "reference", "cuda"

struct Upsample2dConfig {
  std::optional<InterpolationMode> interpolation;
  std::optional<ScaleSize> scale_size;
};

struct RoiAlignConfig {
  std::optional<InterpolationMode> interpolation;
  std::optional<RoiReduction> reduction;
  std::optional<float> spatial_scale_x;
  std::optional<float> spatial_scale_y;
  std::optional<float> out_of_bounds_input_value;
  std::optional<std::uint32_t> minimum_samples_per_output;
  std::optional<std::uint32_t> maximum_samples_per_output;
  std::optional<std::int64_t> output_height;
  std::optional<std::int64_t> output_width;
  std::optional<float> input_pixel_offset;
  std::optional<float> output_pixel_offset;
  std::optional<bool> align_regions_to_corners;
};

// Parse a config from JSON text; `source` names it in messages (usually the path). The optional "op" key must equal
// "resample", "upsample2d" or "roi_align" respectively.
ResampleConfig parse_resample_config(const std::string& json_text, const std::string& source);
Upsample2dConfig parse_upsample2d_config(const std::string& json_text, const std::string& source);
RoiAlignConfig parse_roi_align_config(const std::string& json_text, const std::string& source);
// Read and parse a config file (ErrorCode::Io if it cannot be read).
ResampleConfig read_resample_config(const std::string& path);
Upsample2dConfig read_upsample2d_config(const std::string& path);
RoiAlignConfig read_roi_align_config(const std::string& path);

// Every field set in `over` replaces the one in `base` (flags over config).
ResampleConfig overlay(const ResampleConfig& base, const ResampleConfig& over);
Upsample2dConfig overlay(const Upsample2dConfig& base, const Upsample2dConfig& over);
RoiAlignConfig overlay(const RoiAlignConfig& base, const RoiAlignConfig& over);

// Final parameters. resample: `scales` is required unless `output_sizes` is given, in which case each missing scale
// is output / input per axis (float32); output sizes default to max(1, floor(in * scale)). upsample2d: scale_size
// is required. roi_align: output_height and output_width are required. Missing required fields, output sizes and
// output_height/width below 1 throw ErrorCode::InvalidArgument naming the key; the parameters' ranges are the core's
// own check_params (resample.h, upsample2d.h, roi_align.h), run on the resolved Params, with its message.
// resample's input_sizes must be rank 4 with sizes >= 1 (ErrorCode::InvalidShape otherwise).
struct ResolvedResample {
  ResampleParams params;
  Dims output_sizes;
};
ResolvedResample resolve(const ResampleConfig& config, const Dims& input_sizes);
Upsample2dParams resolve(const Upsample2dConfig& config);
struct ResolvedRoiAlign {
  RoiAlignParams params;
  std::int64_t output_height = 0;
  std::int64_t output_width = 0;
};
ResolvedRoiAlign resolve(const RoiAlignConfig& config);

// ---- resample conventions: shared by the CLI and the Python module ----
// Coordinate conventions of other tools (SEMANTICS.md §1 mappings): half_pixel (the default: DirectML RESAMPLE,
// ONNX half_pixel, PyTorch align_corners=False, OpenCV INTER_LINEAR), align_corners (scales (out - 1) / (in - 1),
// offsets 0 / 0), asymmetric (offsets 0 / 0), nearest_floor (PyTorch / OpenCV nearest: nearest, offsets 0.5 / 0).
enum class ResamplePreset { HalfPixel, AlignCorners, Asymmetric, NearestFloor };
const char* to_string(ResamplePreset preset);  // "half_pixel", "align_corners", "asymmetric", "nearest_floor"
// Throws ErrorCode::InvalidArgument naming `what` (a flag or parameter name), the text and the allowed names.
ResamplePreset parse_resample_preset(const std::string& text, const std::string& what);
std::vector<std::string> resample_preset_names();  // every preset's name, in the order above
// The config fields a preset sets: both offsets, and for nearest_floor the interpolation.
ResampleConfig preset_config(ResamplePreset preset);
// Sizes, boxes, fits and the align_corners preset's scales are planned by rsz/io/resize.h (plan_resize).

// ---- ROI files ----
// Plain tensor form: {"rois": [[x1, y1, x2, y2], ...], "batch_indices": [b, ...]} (batch_indices optional, default 0)
//   -> one RoiImage with an empty path.
// Dataset form: {"images": [{"path": "photo.jpg", "rois": [{"box": [x1, y1, x2, y2], "label": "cat", "id": "c1"},
//   ...]}, ...]} (label and id optional) -> one RoiImage per image; relative paths are resolved against the folder
//   of the ROI file (base_dir; "" keeps them relative) and lexically normalized ("a/../b.png" -> "b.png").
// Either form, not both. Zero ROIs are allowed. batch_indices, when given, has one integer in [0, 2^32) per ROI.
// Labels and ids become parts of file names: non-empty, without '/', '\', "..", or control characters (NUL
// included); ids are unique within the file, and each image is listed once.
struct RoiEntry {
  std::array<float, 4> box{};
  std::uint32_t batch_index = 0;
  std::string label;  // empty when absent
  std::string id;     // empty when absent
};
// A box an annotation reader left out on request (io/annotations.h: --skip-crowd, --skip-difficult), and why:
// "crowd" (COCO iscrowd) or "difficult" (VOC <difficult>).
struct LeftOutRoi {
  RoiEntry roi;
  std::string reason;
};
struct RoiImage {
  std::string path;  // empty in the plain tensor form
  std::vector<RoiEntry> rois;
  // Dataset annotations (io/annotations.h): the size of the image the boxes were drawn on as the source states it
  // (COCO "width" / "height", VOC <size>; YOLO: the header's size its boxes were scaled with); 0 when not stated.
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::string where;  // how messages name the image's entry ("coco.json: image 12 (photo.jpg)"); "" for rsz files
  std::vector<LeftOutRoi> left_out;
  // Why the image cannot be cropped ("" when it can): YOLO's boxes need the image's size, so an image that is missing
  // or unreadable is listed without boxes and with the error, for its caller to fail that image alone.
  std::string error;
};
struct RoiFile {
  bool dataset = false;
  std::vector<RoiImage> images;
};
RoiFile parse_roi_file(const std::string& json_text, const std::string& source, const std::string& base_dir);
RoiFile read_roi_file(const std::string& path);

// The memory a parsed JSON document (a config, ROI file, COCO annotations, a batch file) may take, its text
// included: the parser counts what it builds and stops with ErrorCode::InvalidArgument, naming the file, the budget
// and --max-memory, past it. The command line sets its memory budget; the default is no limit.
void set_json_memory_budget(std::uint64_t bytes) noexcept;
// A byte count for messages: "512 bytes", "1.50 KiB", "286.2 MiB", "4.00 GiB".
std::string bytes_text(std::uint64_t bytes);

// Batch files (rsz run): rsz/io/batch_file.h.

}  // namespace rsz::io

#pragma GCC visibility pop
