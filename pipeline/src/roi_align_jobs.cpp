// ROI_ALIGN jobs (rsz roi-align, roi_align batch steps): each image's boxes from a ROI file or dataset annotations,
// checked against its size, cropped and named, with their manifest rows.
#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <system_error>
#include <variant>
#include "rsz/error.h"
#include "rsz/io/npy.h"
#include "rsz/roi_align.h"
#if defined(RSZ_GPU_JPEG)
#include "rsz/io/gpu_jpeg.h"
#endif
#include "jobs.h"
#include "streams.h"

namespace rsz::app {
namespace {

// The ROIs one input is cropped with, in float32 until the input's data type is known.
struct RoiList {
  std::vector<io::RoiEntry> entries;
  std::shared_ptr<const Tensor> tensor;  // .npy rois, used as given (tensor inputs must match their dtype)
  std::shared_ptr<const Tensor> batch_indices;
  // Each entry's position among the image's boxes as read ({index}: a box left out by --rois-check skip does not
  // renumber the others); empty: 0, 1, ...
  std::vector<std::size_t> indices;
  // Dataset annotations: the image size they state (0: not stated), how messages name the image's entry, and the
  // boxes left out (by the annotation filters, then by --rois-check skip).
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::string where;
  std::vector<io::LeftOutRoi> left_out;
  bool scaled = false;  // the boxes were scaled to the image's size (--size-mismatch scale)

  std::size_t index(std::size_t r) const { return indices.empty() ? r : indices[r]; }
};

std::int64_t roi_count(const RoiList& list) {
  return list.tensor ? list.tensor->size(list.tensor->rank() - 2) : static_cast<std::int64_t>(list.entries.size());
}

// The ROIs as a tensor of `type`: .npy ROIs keep their shape and are converted when their data type differs (an
// image's compute type is chosen by --dtype, whatever the .npy holds); JSON boxes become an [R, 4] tensor.
Tensor rois_as(const RoiList& list, DataType type) {
  const auto store = [type](Tensor& rois, std::size_t i, float v) {
    if (type == DataType::Float32) {
      rois.data_as<float>()[i] = v;
    } else {
      rois.data_as<Float16>()[i] = Float16(v);
    }
  };
  if (list.tensor) {
    const Tensor& source = *list.tensor;
    Tensor rois(type, source.sizes());
    const auto count = static_cast<std::size_t>(source.element_count());
    for (std::size_t i = 0; i < count; ++i) {
      store(rois, i,
            source.dtype() == DataType::Float32 ? source.data_as<float>()[i]
                                                : static_cast<float>(source.data_as<Float16>()[i]));
    }
    return rois;
  }
  Tensor rois(type, {static_cast<std::int64_t>(list.entries.size()), 4});
  for (std::size_t r = 0; r < list.entries.size(); ++r) {
    for (std::size_t j = 0; j < 4; ++j) store(rois, r * 4 + j, list.entries[r].box[j]);
  }
  return rois;
}

// Box r of .npy ROIs, as float32.
std::array<float, 4> tensor_box(const Tensor& rois, std::int64_t r) {
  std::array<float, 4> box{};
  for (std::size_t j = 0; j < 4; ++j) {
    const auto i = static_cast<std::size_t>(r) * 4 + j;
    box[j] = rois.dtype() == DataType::Float32 ? rois.data_as<float>()[i]
                                               : static_cast<float>(rois.data_as<Float16>()[i]);
  }
  return box;
}

// Boxes that are legal ROI_ALIGN but crop nothing useful from an image of width x height (after the spatial
// scales): inverted (x2 < x1 or y2 < y1: a mirrored crop, the typical xywh / xyxy mix-up), empty (zero width or
// height: a flat crop) or fully outside the image (a crop of the out-of-bounds value). "" when every box is fine,
// else one line counting each kind with the first few ids (or #index where a box has none).
// The kind of such a box: 0 inverted, 1 empty, 2 outside, -1 for a box that crops something.
int box_problem(const std::array<float, 4>& b, const RoiAlignParams& p, std::int64_t width, std::int64_t height) {
  const float x1 = b[0] * p.spatial_scale_x;
  const float y1 = b[1] * p.spatial_scale_y;
  const float x2 = b[2] * p.spatial_scale_x;
  const float y2 = b[3] * p.spatial_scale_y;
  if (x2 < x1 || y2 < y1) return 0;
  if (x2 == x1 || y2 == y1) return 1;
  if (x2 <= 0.0f || y2 <= 0.0f || x1 >= static_cast<float>(width) || y1 >= static_cast<float>(height)) return 2;
  return -1;
}
// A box_problem kind as the manifest's "skipped" reason.
constexpr const char* kProblemReasons[] = {"inverted", "empty", "outside"};

std::string suspicious_boxes(const RoiList& list, const RoiAlignParams& p, std::int64_t width, std::int64_t height) {
  const std::int64_t count = roi_count(list);
  struct Kind {
    const char* what;
    std::int64_t count = 0;
    std::string names;
  };
  Kind kinds[] = {{"inverted (x2 < x1 or y2 < y1)", 0, ""}, {"empty (zero width or height)", 0, ""},
                  {"outside the image", 0, ""}};
  for (std::int64_t r = 0; r < count; ++r) {
    const std::array<float, 4> b =
        list.tensor ? tensor_box(*list.tensor, r) : list.entries[static_cast<std::size_t>(r)].box;
    const int kind = box_problem(b, p, width, height);
    if (kind < 0) continue;
    Kind& k = kinds[kind];
    if (++k.count <= 5) {
      const std::string& id = list.tensor ? std::string() : list.entries[static_cast<std::size_t>(r)].id;
      k.names += std::string(k.count > 1 ? ", " : "") + (id.empty() ? "#" + std::to_string(r) : id);
    } else if (k.count == 6) {
      k.names += ", ...";
    }
  }
  std::string text;
  std::int64_t total = 0;
  for (const Kind& k : kinds) {
    if (k.count == 0) continue;
    total += k.count;
    text += std::string(text.empty() ? "" : "; ") + std::to_string(k.count) + " " + k.what + ": " + k.names;
  }
  if (total == 0) return "";
  return std::to_string(total) + " of " + std::to_string(count) + " boxes crop nothing of this " +
         std::to_string(width) + "x" + std::to_string(height) + " image: " + text +
         " (legal ROI_ALIGN; --rois-check off allows them silently, skip leaves them out, error refuses them)";
}

// An image whose size is not the one its annotations state: one line saying both sizes and what to do. An image
// whose EXIF orientation swapped the stated size (its stored pixels have it) was likely annotated as stored.
std::string size_mismatch_message(const RoiList& list, const std::string& input, std::int64_t width,
                                  std::int64_t height, const CommonOptions& common) {
  const auto size = [](std::int64_t w, std::int64_t h) { return std::to_string(w) + "x" + std::to_string(h); };
  const std::string head = (list.where.empty() ? input : list.where) + ": the annotation says " +
                           size(list.width, list.height) + ", the image is " + size(width, height);
  if (!common.no_exif) {
    try {
      io::ImageReadOptions stored;
      stored.apply_exif_orientation = false;
      stored.max_pixels = common.max_pixels;
      const io::ImageInfo info = io::read_image_info(input, stored);
      if (info.width == list.width && info.height == list.height) {
        return head + " after its EXIF orientation; the boxes were likely drawn on the stored pixels: add --no-exif "
                      "to crop those (--size-mismatch scale would stretch the boxes, not turn them)";
      }
    } catch (const std::exception&) {
      // The header was read once already; whatever fails now is reported with the sizes alone.
    }
  }
  return head + "; the boxes may belong to another image, or to this one before it was resized: --size-mismatch "
                "scale scales them to the image";
}

// The boxes of an image input fitted to it before its crops are planned: scaled from the size the annotations state
// to the image's (--size-mismatch scale), and with --rois-check skip those that would crop nothing left out. Only
// these read the image's header here (planning reads it again); the stated size, when there is one, classifies the
// boxes without reading (planning then fails an image of another size). An image whose header cannot be read is left
// as it is: planning reports it.
void fit_boxes(RoiList& list, const std::string& input, const RoiAlignParams& params, const CommonOptions& common) {
  if (list.tensor || is_tensor_path(input)) return;  // tensor inputs are used as given
  const bool stated = list.width > 0 && list.height > 0;
  const bool scale = stated && common.size_mismatch == io::SizeMismatch::Scale;
  const bool skip = common.rois_check == io::RoisCheck::Skip && !list.entries.empty();
  std::int64_t width = list.width;
  std::int64_t height = list.height;
  if (scale || (skip && !stated)) {
    try {
      const InputProbe probe = probe_input(input, common);
      width = probe.sizes[3];
      height = probe.sizes[2];
    } catch (const std::exception&) {
      return;
    }
  }
  if (scale && (width != list.width || height != list.height)) {
    const double sx = static_cast<double>(width) / static_cast<double>(list.width);
    const double sy = static_cast<double>(height) / static_cast<double>(list.height);
    const auto scaled = [sx, sy](std::array<float, 4>& b) {
      b = {static_cast<float>(b[0] * sx), static_cast<float>(b[1] * sy), static_cast<float>(b[2] * sx),
           static_cast<float>(b[3] * sy)};
    };
    for (io::RoiEntry& e : list.entries) scaled(e.box);
    for (io::LeftOutRoi& l : list.left_out) scaled(l.roi.box);
    list.width = width;  // the boxes are now the image's: planning finds no mismatch
    list.height = height;
    list.scaled = true;
  }
  if (!skip || width <= 0 || height <= 0) return;
  RoiList kept;
  for (std::size_t r = 0; r < list.entries.size(); ++r) {
    const int kind = box_problem(list.entries[r].box, params, width, height);
    if (kind >= 0) {
      list.left_out.push_back({list.entries[r], kProblemReasons[kind]});
    } else {
      kept.entries.push_back(list.entries[r]);
      kept.indices.push_back(list.index(r));
    }
  }
  list.entries = std::move(kept.entries);
  list.indices = std::move(kept.indices);
}

// The box the operator uses for a float16 result: each coordinate rounded to float16 (ROI_ALIGN's rois have the
// output's type), as rois_as stores it; a float32 result uses the box as given.
std::array<float, 4> box_used(const std::array<float, 4>& box, DataType type) {
  if (type != DataType::Float16) return box;
  std::array<float, 4> used{};
  for (std::size_t j = 0; j < 4; ++j) used[j] = static_cast<float>(Float16(box[j]));
  return used;
}

// For a float16 result: "" when every JSON box is a float16 value, else one line saying how many were rounded
// (so the crops are not silently of other boxes than the ones given; the manifest records the boxes used).
std::string rounded_boxes(const RoiList& list, DataType type, bool from_image) {
  if (type != DataType::Float16 || list.tensor) return "";  // .npy ROIs are used in their own type
  std::size_t rounded = 0;
  std::string first;
  for (const io::RoiEntry& e : list.entries) {
    if (box_used(e.box, type) == e.box) continue;
    if (++rounded == 1) first = e.id;
  }
  if (rounded == 0) return "";
  return std::to_string(rounded) + " of " + std::to_string(list.entries.size()) +
         " boxes are not float16 values and are rounded to float16 for this float16 run (" +
         (first.empty() ? std::string("e.g. the first") : "e.g. " + first) +
         "; steps of 2 pixels from 2048, 4 from 4096); the manifest records the boxes used" +
         (from_image ? "; --dtype float32 keeps them as given" : "; a float32 tensor keeps them as given");
}

// The crops one roi_align call computes when each crop is a file of its own: about kCropGroupBytes of results, and
// at least a crop for each thread's share of the work (the plane path splits ROIs x channels among the threads);
// each group is written before the next is computed, instead of all of an image's crops first (64 crops of 224 x 224
// took 38 MB of fresh pages; 1000 boxes of an image, 600 MB). A crop's values do not depend on the other ROIs of its
// call. Only images on the host backends are grouped: their few channels are pooled in place (a map of 8 channels or
// more is copied channels-last on each call), and the CUDA backend uploads the image on each call. `threads`: the
// kernels' threads (the plan counts the most an input can get, the usable CPUs).
constexpr std::int64_t kCropGroupBytes = std::int64_t{16} << 20;
std::int64_t crop_group(std::int64_t count, const Dims& crop_sizes, DataType type, bool from_image,
                        const CommonOptions& common, int threads) {
  const std::int64_t channels = crop_sizes.size() == 4 ? crop_sizes[1] : 0;
  if (!host_backend(common) || !from_image || channels < 1 || channels > 4) return std::max<std::int64_t>(1, count);
  const std::int64_t crop_bytes =
      std::max<std::int64_t>(1, element_count(crop_sizes) * static_cast<std::int64_t>(element_size(type)));
  const std::int64_t for_threads = (std::max(1, threads) + channels - 1) / channels;
  return std::max<std::int64_t>(1, std::min(count, std::max(kCropGroupBytes / crop_bytes, for_threads)));
}

Tensor batch_indices_of(const RoiList& list) {
  if (list.batch_indices) {
    Tensor copy(DataType::UInt32, list.batch_indices->sizes());
    std::copy_n(list.batch_indices->data_as<std::uint32_t>(), copy.element_count(), copy.data_as<std::uint32_t>());
    return copy;
  }
  Tensor indices(DataType::UInt32, {static_cast<std::int64_t>(list.entries.size())});
  for (std::size_t r = 0; r < list.entries.size(); ++r) {
    indices.data_as<std::uint32_t>()[r] = list.entries[r].batch_index;
  }
  return indices;
}

// .npy rois (and batch indices) into a list; entries carry only the boxes' count for naming.
RoiList read_npy_rois(const RoiSource& source) {
  RoiList list;
  auto rois = std::make_shared<Tensor>(io::read_npy(source.rois_path));
  const std::int64_t count = rois->rank() >= 2 ? rois->size(rois->rank() - 2) : 0;
  if (rois->rank() < 2 || rois->sizes().back() != 4 || rois->dtype() == DataType::UInt32) {
    usage_error(source.rois_path + ": ROIs must be a float32 or float16 [R,4] tensor (or [1,R,4], [1,1,R,4]); got " +
                to_string(rois->dtype()) + " " + dims_to_string(rois->sizes()));
  }
  list.entries.resize(static_cast<std::size_t>(count));
  if (!source.batch_indices_path.empty()) {
    auto indices = std::make_shared<Tensor>(io::read_npy(source.batch_indices_path));
    if (indices->dtype() != DataType::UInt32) {
      usage_error(source.batch_indices_path + ": batch indices must be uint32 ('<u4'); got " +
                  to_string(indices->dtype()));
    }
    list.batch_indices = std::move(indices);
  }
  list.tensor = std::move(rois);
  return list;
}

struct PlannedCrops {
  bool whole_tensor = false;  // one {R, C, OH, OW} .npy instead of a file per ROI
  std::vector<std::string> paths;
};

bool mentions_roi_fields(const std::string& output) {
  return output.find("{index}") != std::string::npos || output.find("{label}") != std::string::npos ||
         output.find("{id}") != std::string::npos;
}

PlannedCrops plan_crops(const std::string& input, std::size_t input_count, const RoiList& list,
                        const std::string& output, const CommonOptions& common) {
  const std::string ext = output_extension(input, common);
  if (is_tar_output(output)) {  // one member per crop, keyed KEY/ID, whatever the count
    PlannedCrops planned;
    for (std::size_t r = 0; r < list.entries.size(); ++r) {
      planned.paths.push_back(tar_member_path(
          {input, "roi_align", ext, std::to_string(list.index(r)), list.entries[r].label, list.entries[r].id}));
    }
    return planned;
  }
  const NameFields whole{input, "roi_align", ext, "", "", ""};
  const bool template_output = output_is_template(output);
  const bool folder = !template_output && output_is_folder(output, input_count);
  // The one path that would hold every crop (a template without ROI fields, a file name, or in a folder the .npy
  // result of a tensor input); empty where each crop gets a file of its own.
  const std::string whole_path = [&]() -> std::string {
    if (template_output) return mentions_roi_fields(output) ? "" : expand_template(output, whole);
    if (!folder) return output;
    return is_tensor_path(input) ? plan_output(output, input_count, whole, "{stem}_roi_align.npy") : "";
  }();
  if (!whole_path.empty() && (is_tensor_path(whole_path) || list.entries.size() == 1)) {
    if (!is_tensor_path(whole_path)) check_output_format(whole_path, output, common);
    return {is_tensor_path(whole_path), {whole_path}};
  }
  if (!template_output && !folder) {
    usage_error(output + ": " + std::to_string(list.entries.size()) +
                " crops need a folder or a name template with {index}, {label} or {id}, or a .npy output");
  }
  PlannedCrops planned;
  for (std::size_t r = 0; r < list.entries.size(); ++r) {
    const NameFields f{input, "roi_align", ext, std::to_string(list.index(r)), list.entries[r].label,
                       list.entries[r].id};
    planned.paths.push_back(plan_output(output, input_count, f, "{stem}_{index}{ext}"));
    check_output_format(planned.paths.back(), output, common);
  }
  return planned;
}

// A .npy input's data type from its header; float32 where it cannot be read (the job then fails, reporting why).
DataType npy_type(const std::string& input, const CommonOptions& common) {
  try {
    return probe_input(input, common).type;
  } catch (const std::exception&) {
    return DataType::Float32;
  }
}

// What a roi-align job over `input` will produce and hold, from the input's probe: its boxes checked against the
// image (a size other than the annotations' fails it; suspicious boxes warn or fail per --rois-check).
// The most bytes of crops one input computes on the GPU (--decode gpu: its batch holds them all at once); more are
// computed on the CPU, in groups.
constexpr std::size_t kMostGpuCropBytes = std::size_t{64} << 20;

// Whether the GPU makes crops of `sizes` (all of an input's) at once: the GPU stage (--decode gpu, or --backend cuda's
// batches) and at most kMostGpuCropBytes.
bool gpu_crops_fit(const Dims& sizes, DataType type, const CommonOptions& common) {
#if defined(RSZ_GPU_JPEG)
  return uses_gpu_stage(common) &&
         static_cast<std::size_t>(element_count(sizes)) * element_size(type) <= kMostGpuCropBytes;
#else
  (void)sizes;
  (void)type;
  (void)common;
  return false;
#endif
}

JobPlan plan_roi_job(const std::string& input, const RoiList& list, const io::ResolvedRoiAlign& resolved,
                     const PlannedCrops& planned, const CommonOptions& common, const InputProbe& probe) {
  JobPlan plan;
  // Boxes drawn on an image of another size crop the wrong pixels: that image fails, the others run.
  if (probe.from_image && list.width > 0 && list.height > 0 &&
      (probe.sizes[3] != list.width || probe.sizes[2] != list.height)) {
    plan.failure = size_mismatch_message(list, input, probe.sizes[3], probe.sizes[2], common);
    return plan;
  }
  const io::RoisCheck check = common.rois_check;
  if (probe.from_image && check != io::RoisCheck::Off) {
    const std::string boxes = suspicious_boxes(list, resolved.params, probe.sizes[3], probe.sizes[2]);
    if (!boxes.empty() && check == io::RoisCheck::Error) {
      throw Error(ErrorCode::InvalidArgument, input + ": " + boxes);
    }
    if (!boxes.empty()) plan.warning = input + ": " + boxes;
  }
  if (const std::string rounded = rounded_boxes(list, probe.type, probe.from_image); !rounded.empty()) {
    plan.warning += (plan.warning.empty() ? input + ": " : "; ") + rounded;
  }
  const std::int64_t count = roi_count(list);
  const std::int64_t channels = probe.sizes.size() == 4 ? probe.sizes[1] : 0;
  plan.result = {count, channels, resolved.output_height, resolved.output_width};
  // What is held: one group of crops (crop_group), or every crop where the GPU makes them (--decode gpu: a JPEG's
  // crops up to kMostGpuCropBytes at once).
  if (!planned.whole_tensor && !(probe.from_image && gpu_crops_fit(plan.result, probe.type, common))) {
    plan.result[0] = crop_group(count, {1, channels, resolved.output_height, resolved.output_width}, probe.type,
                                probe.from_image, common, usable_cpus());
  }
  plan.type = probe.type;
  plan.output = planned.whole_tensor ? plan.result : Dims{1, channels, resolved.output_height, resolved.output_width};
  plan.extra_bytes = static_cast<std::uint64_t>(count) * (4 * sizeof(float) + sizeof(std::uint32_t));
  return plan;
}

// One manifest line per crop file (none for a whole-tensor .npy), known before the run.
std::vector<io::CropRecord> planned_crop_records(const std::string& input, const RoiList& list,
                                                 const PlannedCrops& planned, const CommonOptions& common) {
  std::vector<io::CropRecord> crops;
  if (!planned.whole_tensor) {
    for (std::size_t r = 0; r < planned.paths.size(); ++r) {
      const io::RoiEntry& e = list.entries[r];
      const std::array<float, 4> box = list.tensor ? tensor_box(*list.tensor, static_cast<std::int64_t>(r)) : e.box;
      // The type the operator will run in: an image's is --dtype's, a tensor's its own (from its header).
      const DataType type = is_tensor_path(input) ? npy_type(input, common) : common.dtype;
      crops.push_back({planned.paths[r], input, box_used(box, type), e.label, e.id, ""});
    }
  }
  return crops;
}

// Runs a roi-align job: the input loaded, its crops computed a group at a time and written (or one .npy of all).
// The crops of `planned`, one file each, written by save_crop(r) (which may compute a group of them first), with
// their records. A failure once some are written is a PartialFailure with those: they are complete and stay.
std::vector<OutputRecord> write_crops(const RoiList& list, DataType rois_type, const PlannedCrops& planned,
                                      const std::vector<io::CropRecord>& crops, const Dims& crop_sizes,
                                      DataType result_type, const std::function<void(std::size_t)>& save_crop) {
  std::vector<OutputRecord> records;
  for (std::size_t r = 0; r < planned.paths.size(); ++r) {
    try {
      save_crop(r);
    } catch (const std::exception& e) {
      const auto* error = dynamic_cast<const Error*>(&e);
      throw PartialFailure(error != nullptr ? error->code() : ErrorCode::Io,
                           std::string(e.what()) + " (after " + std::to_string(r) + " of its " +
                               std::to_string(planned.paths.size()) + " crops were written)",
                           records);
    }
    io::CropRecord crop = crops[r];
    crop.box = box_used(list.tensor ? tensor_box(*list.tensor, static_cast<std::int64_t>(r)) : list.entries[r].box,
                        rois_type);  // the box the operator used
    records.push_back({planned.paths[r], crop_sizes, to_string(result_type), crop});
  }
  return records;
}

// All of an input's crops as one tensor: the single output of a whole-tensor plan, else one file a crop.
std::vector<OutputRecord> write_all(const RoiList& list, DataType rois_type, const PlannedCrops& planned,
                                    const std::vector<io::CropRecord>& crops, const Tensor& result,
                                    const LoadedInput& loaded, const CommonOptions& common) {
  if (planned.whole_tensor) {
    save_output(planned.paths[0], result.view(), loaded, common);
    return {{planned.paths[0], result.sizes(), to_string(result.dtype()), std::nullopt}};
  }
  const Dims crop_sizes{1, result.size(1), result.size(2), result.size(3)};
  const std::int64_t crop_bytes = element_count(crop_sizes) * static_cast<std::int64_t>(element_size(result.dtype()));
  return write_crops(list, rois_type, planned, crops, crop_sizes, loaded.result_type, [&](std::size_t r) {
    save_output(planned.paths[r],
                ConstTensorView(static_cast<const std::byte*>(result.data()) + static_cast<std::int64_t>(r) * crop_bytes,
                                result.dtype(), crop_sizes),
                loaded, common);
  });
}

#if defined(RSZ_GPU_JPEG)
// An image through the GPU stage (a JPEG file it decodes among the other jobs' files, or pixels decoded here) and
// cropped there (its boxes and batch indices uploaded with it), the crops encoded here. The whole call's checks run
// first on the host, as the CPU job runs them, so a bad box fails the input before anything is computed. nullopt for
// what the CPU does instead (a file nvJPEG cannot read, crops over kMostGpuCropBytes).
std::optional<std::vector<OutputRecord>> roi_job_on_gpu(const GpuImage& in, const RoiList& list,
                                                        const io::ResolvedRoiAlign& resolved,
                                                        const PlannedCrops& planned,
                                                        const std::vector<io::CropRecord>& crops,
                                                        const CommonOptions& common, int threads,
                                                        GpuJobPhases& phases) {
  const DataType type = in.source->result_type;
  const Tensor rois = rois_as(list, type);
  const Tensor indices = batch_indices_of(list);
  const Dims all_sizes = roi_align_output_sizes(in.sizes, rois.sizes(), resolved.output_height, resolved.output_width);
  // No crops: nothing for the GPU (the CPU job writes what none give); more than the planned memory: the CPU's groups.
  if (all_sizes[0] == 0 || !gpu_crops_fit(all_sizes, type, common)) return std::nullopt;
  ExecOptions host = exec_options(common, threads);
  host.backend = Backend::Cpu;
  const Dims& s = in.sizes;  // the decoded pixels' layout (interleaved), for the checks: nothing is read
  check_roi_align(ConstTensorView(nullptr, DataType::UNorm8, s, {s[1] * s[2] * s[3], 1, s[1] * s[3], s[1]}),
                  rois.view(), indices.view(), type, all_sizes, resolved.params, host);
  // The boxes, then (256-byte aligned) the batch indices: one upload.
  const std::size_t roi_bytes = rois.byte_size();
  const std::size_t index_bytes = indices.byte_size();
  const std::size_t index_at = (roi_bytes + 255) / 256 * 256;
  std::string upload(index_at + index_bytes, '\0');
  if (roi_bytes > 0) std::memcpy(upload.data(), rois.data(), roi_bytes);
  if (index_bytes > 0) std::memcpy(upload.data() + index_at, indices.data(), index_bytes);
  // Crop files that are their 8-bit samples alone (quantizes_only) come back as those, quantized on the GPU: a
  // quarter of the float32 crops' bytes.
  const LoadedInput& source = *in.source;
  const Dims crop_sizes{1, all_sizes[1], all_sizes[2], all_sizes[3]};
  const bool to_8bit = !planned.whole_tensor && std::all_of(planned.paths.begin(), planned.paths.end(),
                                                            [&](const std::string& path) {
                                                              return quantizes_only(path, all_sizes[1], type, source,
                                                                                    common);
                                                            });
  const std::size_t float_bytes = static_cast<std::size_t>(element_count(all_sizes)) * element_size(type);
  io::gpu::GpuJob job;
  job.file = in.file;
  job.pixels = in.pixels;
  job.input_sizes = in.sizes;
  job.upload = upload;
  job.result_bytes = to_8bit ? float_bytes / element_size(type) : float_bytes;
  job.scratch_bytes = to_8bit ? float_bytes : 0;
  // The device checks the values again (roi_align does); they passed the host's check above, so its deferred error
  // record, which only rsz::synchronize would read, stays clear.
  const std::uint64_t max_samples = host.max_samples;
  job.queue = [&](const ConstTensorView& image, const std::uint8_t* uploaded, std::uint8_t* scratch,
                  std::uint8_t* out, const ExecOptions& exec) {
    ExecOptions on_gpu = exec;
    on_gpu.max_samples = max_samples;  // the run's budget, as checked above
    const TensorView crops_out(to_8bit ? scratch : out, type, all_sizes, {}, MemorySpace::Device);
    roi_align(image, ConstTensorView(uploaded, rois.dtype(), rois.sizes(), {}, MemorySpace::Device),
              ConstTensorView(uploaded == nullptr ? nullptr : uploaded + index_at, indices.dtype(), indices.sizes(),
                              {}, MemorySpace::Device),
              crops_out, resolved.params, on_gpu);
    if (to_8bit) io::gpu::quantize8(crops_out, out, exec.stream);
  };
  io::gpu::BatchResampler* stage = gpu_stage_for(in, common);
  if (stage == nullptr) return std::nullopt;
  if (!to_8bit) {
    Tensor result(type, all_sizes, TensorInit::Uninitialized);  // roi_align writes every element
    if (!stage->run(job, result.data()).empty()) return std::nullopt;
    phases.waited();
    std::vector<OutputRecord> records = write_all(list, rois.dtype(), planned, crops, result, source, common);
    phases.saved();
    return records;
  }
  if (std::all_of(planned.paths.begin(), planned.paths.end(), [&](const std::string& path) {
        return encodes_on_gpu(path, all_sizes[1], type, source, common);
      })) {  // each crop's JPEG file comes back
    job.jpeg = io::gpu::GpuJob::Jpeg{jpeg_quality(common), all_sizes[0], all_sizes[2], all_sizes[3],
                                     static_cast<int>(all_sizes[1])};
    std::vector<std::string> files;
    if (!stage->run(job, files).empty() || files.size() != planned.paths.size()) return std::nullopt;
    phases.waited();
    std::vector<OutputRecord> records =
        write_crops(list, rois.dtype(), planned, crops, crop_sizes, type, [&](std::size_t r) {
          save_encoded_jpeg(planned.paths[r], files[r], all_sizes[1], source, common);
        });
    phases.saved();
    return records;
  }
  io::Samples8 samples(job.result_bytes);
  if (!stage->run(job, samples.data()).empty()) return std::nullopt;
  phases.waited();
  const auto crop_samples = static_cast<std::size_t>(element_count(crop_sizes));
  std::vector<OutputRecord> records = write_crops(list, rois.dtype(), planned, crops, crop_sizes, type, [&](std::size_t r) {
    io::Image pixels;
    pixels.width = crop_sizes[3];
    pixels.height = crop_sizes[2];
    pixels.channels = static_cast<int>(crop_sizes[1]);
    pixels.bit_depth = 8;
    // resize and memcpy: SampleAllocator's construct() makes assign() copy a sample at a time (a fifth of a COCO
    // job's CPU time on 32 cores went there).
    pixels.data8.resize(crop_samples);
    std::memcpy(pixels.data8.data(), samples.data() + r * crop_samples, crop_samples);
    save_output8(planned.paths[r], std::move(pixels), source, common);
  });
  phases.saved();
  return records;
}

// --decode gpu: a JPEG decoded by nvJPEG among the other jobs' files; nullopt for what the CPU decodes instead
// (read_gpu_jpeg's) and what roi_job_on_gpu leaves to it.
std::optional<std::vector<OutputRecord>> roi_job_decoded_on_gpu(const std::string& input, const RoiList& list,
                                                                const io::ResolvedRoiAlign& resolved,
                                                                const PlannedCrops& planned,
                                                                const std::vector<io::CropRecord>& crops,
                                                                const CommonOptions& common, int threads) {
  GpuJobPhases phases;
  const std::optional<GpuInput> read = read_gpu_jpeg(input, common);
  if (!read) return std::nullopt;
  phases.read();
  return roi_job_on_gpu(gpu_image(*read), list, resolved, planned, crops, common, threads, phases);
}
#endif

std::vector<OutputRecord> run_roi_job(const std::string& input, const RoiList& list,
                                      const io::ResolvedRoiAlign& resolved, const PlannedCrops& planned,
                                      const std::vector<io::CropRecord>& crops, const CommonOptions& common,
                                      int threads) {
#if defined(RSZ_GPU_JPEG)
  if (decodes_on_gpu(common) && !is_tensor_path(input)) {
    if (auto done = roi_job_decoded_on_gpu(input, list, resolved, planned, crops, common, threads)) return *done;
    hold_whole_job_share();  // the CPU decodes it: its whole share of the memory budget first
  }
  GpuJobPhases phases;  // RSZ_GPU_STATS: decoding here is the GPU job's reading
#endif
  const LoadedInput loaded = load_input(input, common);
#if defined(RSZ_GPU_JPEG)
  // --backend cuda: the pixels decoded here go to the GPU stage, batched with the other jobs' (alone where it
  // cannot take them).
  if (const std::optional<GpuImage> on_gpu = gpu_image(loaded, common)) {
    phases.read();
    if (auto done = roi_job_on_gpu(*on_gpu, list, resolved, planned, crops, common, threads, phases)) return *done;
  }
#endif
  const DataType type = loaded.result_type;
  // Tensor inputs take .npy ROIs as given (the operator requires the input's type); images convert them.
  const Tensor rois = list.tensor && !loaded.from_image ? rois_as(list, list.tensor->dtype()) : rois_as(list, type);
  const Tensor indices = batch_indices_of(list);
  const Dims all_sizes =
      roi_align_output_sizes(loaded.sizes(), rois.sizes(), resolved.output_height, resolved.output_width);
  const ExecOptions exec = exec_options(common, threads);
  const Dims crop_sizes{1, all_sizes[1], all_sizes[2], all_sizes[3]};
  const std::int64_t group =
      planned.whole_tensor ? all_sizes[0]
                           : crop_group(all_sizes[0], crop_sizes, type, loaded.from_image, common, exec.num_threads);
  if (planned.whole_tensor) {
    Tensor result(type, all_sizes, TensorInit::Uninitialized);  // roi_align writes every element
    roi_align(loaded.view(), rois.view(), indices.view(), result.view(), resolved.params, exec);
    return write_all(list, rois.dtype(), planned, crops, result, loaded, common);
  }
  // A group of crops a call (crop_group), the whole call's checks first: a bad box or a sample total over the
  // budget is refused before any crop is written, as one call would refuse it.
  check_roi_align(loaded.view(), rois.view(), indices.view(), type, all_sizes, resolved.params, exec);
  const std::int64_t crop_elements = element_count(crop_sizes);
  const std::int64_t count = all_sizes[0];
  Tensor result(type, {group, crop_sizes[1], crop_sizes[2], crop_sizes[3]}, TensorInit::Uninitialized);
  // ROIs [first, first + n): rows of rois ({..., R, 4}) and of batch_indices ({..., R}).
  const int roi_axis = static_cast<int>(rois.sizes().size()) - 2;
  const int index_axis = static_cast<int>(indices.sizes().size()) - 1;
  return write_crops(list, rois.dtype(), planned, crops, crop_sizes, type, [&](std::size_t r) {
    const std::int64_t at = static_cast<std::int64_t>(r) % group;
    if (at == 0) {
      const auto first = static_cast<std::int64_t>(r);
      const std::int64_t n = std::min(group, count - first);
      roi_align(loaded.view(), slice_of(rois.view(), roi_axis, first, n),
                slice_of(indices.view(), index_axis, first, n),
                TensorView(result.data(), type, {n, crop_sizes[1], crop_sizes[2], crop_sizes[3]}), resolved.params,
                exec);
    }
    save_output(planned.paths[r],
                ConstTensorView(static_cast<const std::byte*>(result.data()) +
                                    at * crop_elements * static_cast<std::int64_t>(element_size(type)),
                                type, crop_sizes),
                loaded, common);
  });
}

Job make_job(const std::string& input, std::size_t input_count, RoiList list, const io::ResolvedRoiAlign& resolved,
             const std::string& output, const CommonOptions& common) {
  fit_boxes(list, input, resolved.params, common);
  Job job;
  job.input = input;
  job.op = "roi_align";
  job.size_flags = "--output-size or the number of ROIs";
  std::size_t checked_out = 0;  // boxes --rois-check skip left out
  for (const io::LeftOutRoi& l : list.left_out) {
    job.left_out.push_back({"", input, l.roi.box, l.roi.label, l.roi.id, l.reason});
    checked_out += l.reason == "crowd" || l.reason == "difficult" ? 0 : 1;
  }
  job.boxes_scaled = list.scaled;
  if (list.entries.empty() && !list.left_out.empty()) return job;  // nothing to crop: no plan, no run, not read
  const PlannedCrops planned = plan_crops(input, input_count, list, output, common);
  if (planned.whole_tensor && checked_out > 0) {
    usage_error(planned.paths[0] + ": --rois-check skip leaves out " + std::to_string(checked_out) +
                " of the boxes of " + input +
                ", which would shift the rows of this one .npy of all crops; write a file per crop (a folder, or a "
                "template with {index}, {label} or {id}) or choose another --rois-check");
  }
  job.planned_outputs = planned.paths;
  job.plan = [input, list, resolved, planned, common](const InputProbe& probe) {
    return plan_roi_job(input, list, resolved, planned, common, probe);
  };
  const std::vector<io::CropRecord> crops = planned_crop_records(input, list, planned, common);
  job.planned_crops = crops;
  job.run = [input, list, resolved, planned, crops, common](const JobPlan&, int threads) {
    return run_roi_job(input, list, resolved, planned, crops, common, threads);
  };
  return job;
}

// A job for an image that the annotations could not use (a YOLO image that is missing or unreadable): planning fails
// it alone, with the probe's message for the file, else `error`.
Job failed_job(const std::string& input, const std::string& error) {
  Job job;
  job.input = input;
  job.op = "roi_align";
  job.size_flags = "--output-size or the number of ROIs";
  job.plan = [error](const InputProbe&) -> JobPlan { throw Error(ErrorCode::Io, error); };
  job.run = [error](const JobPlan&, int) -> std::vector<OutputRecord> { throw Error(ErrorCode::Io, error); };
  return job;
}

// Jobs of .npy ROIs: every input gets the same ROI tensor (and batch indices).
std::vector<Job> npy_roi_jobs(const std::vector<std::string>& inputs, const io::ResolvedRoiAlign& resolved,
                              const RoiSource& source, const std::string& output, const CommonOptions& common) {
  if (!source.names_path.empty() || !source.image_root.empty()) {
    usage_error(source.rois_path + ": --names and --image-root go with dataset annotations, not .npy ROIs");
  }
  if (common.rois_check == io::RoisCheck::Skip) {
    usage_error(source.rois_path + ": --rois-check skip leaves out boxes of JSON ROI files and dataset annotations; "
                ".npy ROIs are used as one tensor (warn, error or off is allowed)");
  }
  if (source.skip_crowd || source.skip_difficult || common.size_mismatch == io::SizeMismatch::Scale) {
    usage_error(source.rois_path + ": --skip-crowd, --skip-difficult and --size-mismatch scale go with COCO / VOC "
                "annotations, not .npy ROIs");
  }
  const RoiList list = read_npy_rois(source);
  if (inputs.empty()) usage_error("roi-align: no input given; use -i with .npy ROIs");
  std::vector<Job> jobs;
  for (const auto& input : inputs) jobs.push_back(make_job(input, inputs.size(), list, resolved, output, common));
  return jobs;
}

// Refuses the annotation flags that do not go with the source's format (a usage error naming the format).
void check_source_flags(const RoiSource& source, io::AnnotationFormat format, const std::vector<std::string>& inputs,
                        const CommonOptions& common) {
  if (format == io::AnnotationFormat::Yolo && inputs.empty()) {
    usage_error(source.rois_path + ": YOLO labels name no images; give the images with -i");
  }
  const bool states_sizes = format == io::AnnotationFormat::Coco || format == io::AnnotationFormat::Voc;
  // A file taken for rsz's own ROI file may be a damaged COCO file (a truncated one is not recognized): what is wrong
  // with it comes before a flag that does not go with its format.
  const bool dataset_flags = !source.image_root.empty() || !source.names_path.empty() || source.skip_crowd ||
                             source.skip_difficult || common.size_mismatch == io::SizeMismatch::Scale;
  if (format == io::AnnotationFormat::Rsz && dataset_flags && !is_tensor_path(source.rois_path)) {
    io::read_roi_file(source.rois_path);
  }
  if (!source.image_root.empty() && !states_sizes) {
    usage_error("--image-root " + source.image_root + ": only for COCO and Pascal VOC annotations (" +
                to_string(format) + " sources name their images otherwise)");
  }
  if (!source.names_path.empty() && format != io::AnnotationFormat::Yolo) {
    usage_error("--names " + source.names_path + ": only for YOLO labels; " + source.rois_path + " is " +
                to_string(format));
  }
  if (source.skip_crowd && format != io::AnnotationFormat::Coco) {
    usage_error("--skip-crowd: only for COCO annotations (their \"iscrowd\"); " + source.rois_path + " is " +
                to_string(format));
  }
  if (source.skip_difficult && format != io::AnnotationFormat::Voc) {
    usage_error("--skip-difficult: only for Pascal VOC annotations (their <difficult>); " + source.rois_path + " is " +
                to_string(format));
  }
  if (common.size_mismatch == io::SizeMismatch::Scale && !states_sizes) {
    usage_error("--size-mismatch scale: only for COCO and Pascal VOC annotations, which state their images' sizes; " +
                source.rois_path + " is " + to_string(format));
  }
}

// Reads a JSON ROI file or dataset annotations, refusing (a usage error) a file whose boxes would take more than the
// memory budget to plan, and sets the shard key of every image it names.
io::RoiFile read_roi_file(const RoiSource& source, io::AnnotationFormat format, const std::vector<std::string>& inputs,
                          const CommonOptions& common) {
  io::AnnotationOptions options;
  options.image_root = source.image_root;
  options.allow_outside_root = source.allow_outside_root;
  options.yolo_names = source.names_path;
  options.skip_crowd = source.skip_crowd;
  options.skip_difficult = source.skip_difficult;
  options.skip_malformed = common.rois_check == io::RoisCheck::Skip;
  options.image_options = image_read_options(common);
  if (format == io::AnnotationFormat::Yolo) options.yolo_images = inputs;
  io::RoiFile file = io::read_annotations(source.rois_path, format, options);
  // Every box is planned before anything runs: its entry, its crop's name, manifest row and job take about 1 KiB
  // (300,000 boxes of one image: 276 MB), whatever its text took in the file.
  constexpr std::uint64_t kPlannedBytesPerBox = 1024;
  std::uint64_t boxes = 0;
  for (const io::RoiImage& image : file.images) boxes += image.rois.size() + image.left_out.size();
  if (boxes > common.memory_budget() / kPlannedBytesPerBox) {
    usage_error(source.rois_path + ": its " + std::to_string(boxes) + " boxes need about " +
                bytes_text(boxes * kPlannedBytesPerBox) + " to plan (about 1 KiB each), over the memory budget of " +
                bytes_text(common.memory_budget()) + " (--max-memory)");
  }
  // The shard key of an image the annotations name: its path below the image root, without extension.
  std::string image_root = source.image_root;
  if (image_root.empty()) {
    std::error_code ec;
    image_root = std::filesystem::is_directory(source.rois_path, ec)
                     ? source.rois_path
                     : std::filesystem::path(source.rois_path).parent_path().string();
  }
  for (const io::RoiImage& image : file.images) set_shard_key_below(image.path, image_root);
  return file;
}

// Jobs of dataset annotations (COCO, VOC, YOLO): one per image with boxes (or boxes left out); a missing or
// unreadable image fails alone. Images without boxes give no crops: they are not even decoded.
std::vector<Job> annotation_jobs(const io::RoiFile& file, io::AnnotationFormat format, const RoiSource& source,
                                 const std::vector<std::string>& inputs, bool inputs_given_by_user,
                                 const io::ResolvedRoiAlign& resolved, const std::string& output,
                                 const CommonOptions& common) {
  std::vector<Job> jobs;
  std::size_t with_boxes = 0;
  for (const io::RoiImage& image : file.images) with_boxes += image.rois.empty() ? 0 : 1;
  for (const io::RoiImage& image : file.images) {
    if (!image.error.empty()) {
      jobs.push_back(failed_job(image.path, image.error));
      continue;
    }
    if (image.rois.empty() && image.left_out.empty()) continue;
    if (format != io::AnnotationFormat::Yolo && inputs_given_by_user && !inputs.empty()) {
      usage_error(source.rois_path + ": these " + to_string(format) + " annotations name their own images; drop -i");
    }
    RoiList list;
    list.entries = image.rois;
    list.width = image.width;
    list.height = image.height;
    list.where = image.where;
    list.left_out = image.left_out;
    jobs.push_back(make_job(image.path, with_boxes, list, resolved, output, common));
  }
  // YOLO's images are the inputs (a plan's list); the others name their own.
  return format == io::AnnotationFormat::Yolo ? jobs : plan_shard_of_named_images(std::move(jobs), common);
}

}  // namespace

std::vector<Job> make_roi_align_jobs(const std::vector<std::string>& inputs, const io::RoiAlignConfig& config,
                                     const RoiSource& source, const std::string& output, const CommonOptions& common,
                                     bool inputs_given_by_user) {
  const io::ResolvedRoiAlign resolved = io::resolve(config);
  check_decode_backend(common, "crops");
  if (is_tensor_path(source.rois_path)) return npy_roi_jobs(inputs, resolved, source, output, common);
  if (!source.batch_indices_path.empty()) {
    usage_error("--batch-indices " + source.batch_indices_path +
                ": only for .npy ROIs; a JSON ROI file carries its own \"batch_indices\"");
  }
  const io::AnnotationFormat format = io::detect_annotation_format(source.rois_path);
  check_source_flags(source, format, inputs, common);
  const io::RoiFile file = read_roi_file(source, format, inputs, common);
  if (format != io::AnnotationFormat::Rsz) {
    return annotation_jobs(file, format, source, inputs, inputs_given_by_user, resolved, output, common);
  }
  std::vector<Job> jobs;
  if (file.dataset) {
    if (inputs_given_by_user && !inputs.empty()) {
      usage_error(source.rois_path + ": this dataset ROI file names its own images; drop -i");
    }
    for (const io::RoiImage& image : file.images) {
      RoiList list;
      list.entries = image.rois;
      jobs.push_back(make_job(image.path, file.images.size(), list, resolved, output, common));
    }
    return plan_shard_of_named_images(std::move(jobs), common);
  }
  if (inputs.empty()) usage_error("roi-align: no input given; use -i (the ROI file lists boxes, not images)");
  RoiList list;
  if (!file.images.empty()) list.entries = file.images.front().rois;
  for (const auto& input : inputs) jobs.push_back(make_job(input, inputs.size(), list, resolved, output, common));
  return jobs;
}

}  // namespace rsz::app
