// ROI files: the plain tensor form {"rois", "batch_indices"} and the dataset form {"images": [...]} (config.h).
#include <filesystem>
#include <limits>
#include <map>

#include "json_util.h"
#include "rsz/error.h"
#include "rsz/io/config.h"

namespace rsz::io {
namespace {

using detail::Json;
using detail::Ref;

// Labels and ids become parts of file names ({label}, {id} in output templates): no separators, no "..", no
// control characters (NUL included).
std::string get_name_part(const Ref& ref) {
  const std::string text = detail::get_nonempty_string(ref);
  for (const char c : text) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      ref.fail_expected("a name without '/', '\\' or control characters (it becomes part of a file name)");
    }
  }
  if (text.find("..") != std::string::npos) {
    ref.fail_expected("a name without \"..\" (it becomes part of a file name)");
  }
  return text;
}

RoiFile parse_plain(const Ref& root) {
  detail::expect_object(root, {"rois", "batch_indices", "$schema"});
  RoiImage image;
  const Ref rois = root.required("rois");
  detail::expect_array(rois, "[x1, y1, x2, y2] boxes");
  const std::size_t count = rois.json().size();
  image.rois.resize(count);
  for (std::size_t i = 0; i < count; ++i) image.rois[i].box = detail::get_float4(rois.element(i));
  if (const auto indices = root.find("batch_indices")) {
    detail::expect_array(*indices, "integers (one per ROI)", count);
    for (std::size_t i = 0; i < count; ++i) {
      image.rois[i].batch_index = detail::get_uint32(indices->element(i), 0);
    }
  }
  RoiFile file;
  file.dataset = false;
  file.images.push_back(std::move(image));
  return file;
}

RoiFile parse_dataset(const Ref& root, const std::string& base_dir) {
  detail::expect_object(root, {"images", "$schema"});
  const Ref images = root.required("images");
  detail::expect_array(images, "image objects");
  RoiFile file;
  file.dataset = true;
  std::map<std::string, std::string> paths_seen;  // resolved path -> JSON pointer
  std::map<std::string, std::string> ids_seen;    // id -> JSON pointer
  for (std::size_t i = 0; i < images.json().size(); ++i) {
    const Ref entry = images.element(i);
    detail::expect_object(entry, {"path", "rois"});
    RoiImage image;
    const Ref path = entry.required("path");
    image.path = detail::resolve_path(base_dir, detail::get_nonempty_string(path));
    const auto [seen, inserted] = paths_seen.emplace(image.path, path.pointer());
    if (!inserted) {
      path.fail("image \"" + image.path + "\" is listed again (first at " + seen->second +
                "); list all its ROIs in one entry");
    }
    const Ref rois = entry.required("rois");
    detail::expect_array(rois, "ROI objects");
    for (std::size_t r = 0; r < rois.json().size(); ++r) {
      const Ref roi = rois.element(r);
      detail::expect_object(roi, {"box", "label", "id"});
      RoiEntry out;
      out.box = detail::get_float4(roi.required("box"));
      if (const auto label = roi.find("label")) out.label = get_name_part(*label);
      if (const auto id = roi.find("id")) {
        out.id = get_name_part(*id);
        const auto [first, fresh] = ids_seen.emplace(out.id, id->pointer());
        if (!fresh) id->fail("duplicate id \"" + out.id + "\" (first at " + first->second + "); ids must be unique");
      }
      image.rois.push_back(std::move(out));
    }
    file.images.push_back(std::move(image));
  }
  return file;
}

}  // namespace

RoiFile parse_roi_file(const std::string& json_text, const std::string& source, const std::string& base_dir) {
  const Json json = detail::parse_json(json_text, source);
  const Ref root(json, source);
  if (!json.is_object())
    root.fail_expected("an object (plain form {\"rois\": [...]} or dataset form {\"images\": [...]})");
  const bool has_rois = json.contains("rois");
  const bool has_images = json.contains("images");
  if (has_rois && has_images) {
    root.required("images").fail(
        "\"rois\" and \"images\" cannot both be given: use the plain form {\"rois\", \"batch_indices\"} or the "
        "dataset form {\"images\"}");
  }
  if (!has_rois && !has_images) {
    detail::expect_object(root, {"rois", "batch_indices", "images", "$schema"});
    throw Error(ErrorCode::InvalidArgument, source +
                                      ": key \"rois\" at /rois: required key is missing (plain form "
                                      "{\"rois\": [[x1, y1, x2, y2], ...]}; or dataset form {\"images\": [...]})");
  }
  if (const auto schema = root.find("$schema")) detail::get_string(*schema);
  return has_images ? parse_dataset(root, base_dir) : parse_plain(root);
}

RoiFile read_roi_file(const std::string& path) {
  return parse_roi_file(detail::read_text_file(path), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace rsz::io
