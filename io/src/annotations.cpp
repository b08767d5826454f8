// Dataset annotations (COCO, Pascal VOC, YOLO) as ROI lists, and the crop manifest (annotations.h).
#include "rsz/io/annotations.h"

#include <pugixml.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <system_error>

#include "file_util.h"
#include "json_util.h"
#include "rsz/error.h"
#include "rsz/io/image.h"
#include "rsz/io/naming.h"

namespace rsz::io {
namespace {

namespace fs = std::filesystem;
using detail::Json;
using detail::Ref;

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

// Ids and stems become parts of file names: separators and control characters become '_', and so does the second
// dot of "..". Labels stay the dataset's class names (the manifest records them); the {label} placeholder makes
// them safe where a file name is made.
std::string name_part(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += c == '/' || c == '\\' || u < 0x20 || u == 0x7f || (c == '.' && !out.empty() && out.back() == '.') ? '_' : c;
  }
  return out;
}

// Text without leading and trailing white space (and a UTF-8 byte order mark).
std::string trimmed(std::string text) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

float to_float32(double v, const std::string& where) {
  if (!std::isfinite(v) || std::fabs(v) > 3.4028234663852886e38) usage(where + ": the box coordinate overflows float32");
  return static_cast<float>(v);
}

std::string root_for(const std::string& annotation_path, const AnnotationOptions& options) {
  if (!options.image_root.empty()) return options.image_root;
  std::error_code ec;
  if (fs::is_directory(annotation_path, ec)) return annotation_path;
  return fs::path(annotation_path).parent_path().string();
}

// A COCO / VOC image name resolved under `base`; one that leaves it is refused unless the options allow it.
std::string image_under_root(const std::string& base, const std::string& name, const std::string& where,
                             const AnnotationOptions& options) {
  if (!options.allow_outside_root) {
    const fs::path normal = fs::path(name).lexically_normal();
    if (normal.is_absolute() || normal.has_root_name() || (!normal.empty() && *normal.begin() == "..")) {
      usage(where + ": the image name \"" + name + "\" leaves the image root " + (base.empty() ? "." : base) +
            " (absolute, or '..' above it); --allow-outside-root takes such names");
    }
  }
  return detail::resolve_path(base, name);
}

// The files of a folder with this extension (lowercase compared), sorted by name.
std::vector<std::string> files_with_extension(const std::string& folder, const std::string& ext) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string e = lower_extension(it->path().string());
    if (e == ext && it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  if (ec) throw Error(ErrorCode::Io, folder + ": cannot list the folder: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// ---- COCO ----

// COCO ids are integers (some tools write strings): the text form names the entry.
std::string coco_id(const Ref& ref) {
  if (ref.json().is_string()) return detail::get_nonempty_string(ref);
  return std::to_string(detail::get_int(ref, std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::int64_t>::max()));
}

RoiFile read_coco(const std::string& path, const AnnotationOptions& options) {
  const std::string text = detail::read_text_file(path, detail::kMaxAnnotationFileBytes, "an annotation file");
  // Segmentations (polygons, RLE) are never read: checked as JSON, not kept.
  const Json json = detail::parse_json(text, path, {{"annotations", "*", "segmentation"}});
  const Ref root(json, path);
  if (!json.is_object()) root.fail_expected("a COCO object {\"images\", \"annotations\", \"categories\"}");
  const std::string base = root_for(path, options);

  std::map<std::string, std::string> names;  // category id -> name
  if (const auto categories = root.find("categories")) {
    detail::expect_array(*categories, "category objects");
    for (std::size_t i = 0; i < categories->json().size(); ++i) {
      const Ref c = categories->element(i);
      if (!c.json().is_object()) c.fail_expected("a category object {\"id\", \"name\"}");
      names[coco_id(c.required("id"))] = detail::get_nonempty_string(c.required("name"));  // as the dataset says
    }
  }
  RoiFile file;
  file.dataset = true;
  std::map<std::string, std::size_t> image_of;  // image id -> index in file.images
  const Ref images = root.required("images");
  detail::expect_array(images, "image objects");
  for (std::size_t i = 0; i < images.json().size(); ++i) {
    const Ref im = images.element(i);
    if (!im.json().is_object()) im.fail_expected("an image object {\"id\", \"file_name\"}");
    const Ref id = im.required("id");
    const auto [at, fresh] = image_of.emplace(coco_id(id), file.images.size());
    if (!fresh) id.fail("image id " + at->first + " is listed twice; image ids must be unique");
    const std::string file_name = detail::get_nonempty_string(im.required("file_name"));
    RoiImage image;
    image.path = image_under_root(base, file_name, path + ": " + im.pointer() + "/file_name", options);
    // The size the boxes were drawn on, checked against the image by the caller (0 or absent: not stated).
    constexpr std::int64_t kMaxSide = std::numeric_limits<std::int32_t>::max();
    if (const auto width = im.find("width"); width && !width->json().is_null()) {
      image.width = detail::get_int(*width, 0, kMaxSide);
    }
    if (const auto height = im.find("height"); height && !height->json().is_null()) {
      image.height = detail::get_int(*height, 0, kMaxSide);
    }
    image.where = path + ": image " + at->first + " (" + file_name + ")";
    file.images.push_back(std::move(image));
  }
  std::map<std::string, std::string> ids_seen;
  const Ref annotations = root.required("annotations");
  detail::expect_array(annotations, "annotation objects");
  for (std::size_t i = 0; i < annotations.json().size(); ++i) {
    const Ref a = annotations.element(i);
    if (!a.json().is_object()) a.fail_expected("an annotation object {\"id\", \"image_id\", \"bbox\", ...}");
    const Ref image_id = a.required("image_id");
    const auto image = image_of.find(coco_id(image_id));
    if (image == image_of.end()) image_id.fail("no image has id " + coco_id(image_id));
    const Ref bbox = a.required("bbox");
    detail::expect_array(bbox, "numbers [x, y, width, height]", 4);
    std::array<double, 4> v{};
    for (std::size_t k = 0; k < 4; ++k) {
      const Ref n = bbox.element(k);
      if (!n.json().is_number()) n.fail_expected("a number");
      v[k] = n.json().get<double>();
    }
    RoiEntry roi;
    const std::string where = path + ": " + bbox.pointer();
    roi.box = {to_float32(v[0], where), to_float32(v[1], where), to_float32(v[0] + v[2], where),
               to_float32(v[1] + v[3], where)};
    const bool malformed = v[2] < 0 || v[3] < 0;
    if (malformed && !options.skip_malformed) {
      const auto id = a.find("id");
      bbox.fail((id ? "annotation " + coco_id(*id) + ": " : std::string()) +
                "a box of negative width or height; COCO boxes are [x, y, width, height] (--rois-check skip leaves "
                "such boxes out)");
    }
    if (const auto category = a.find("category_id")) {
      const auto name = names.find(coco_id(*category));
      if (name == names.end()) category->fail("no category has id " + coco_id(*category));
      roi.label = name->second;
    }
    if (const auto id = a.find("id")) {
      roi.id = name_part(coco_id(*id));
      const auto [first, unique] = ids_seen.emplace(roi.id, id->pointer());
      if (!unique) id->fail("duplicate annotation id " + roi.id + " (first at " + first->second + ")");
    }
    // "iscrowd" is read only when asked to act on it: files whose tools write it otherwise keep working.
    if (const auto crowd = a.find("iscrowd"); crowd && options.skip_crowd) {
      const bool is_crowd = crowd->json().is_boolean() ? crowd->json().get<bool>() : detail::get_int(*crowd, 0, 1) == 1;
      if (is_crowd) {
        file.images[image->second].left_out.push_back({std::move(roi), "crowd"});
        continue;
      }
    }
    if (malformed) {
      file.images[image->second].left_out.push_back({std::move(roi), "malformed"});
      continue;
    }
    file.images[image->second].rois.push_back(std::move(roi));
  }
  return file;
}

// ---- Pascal VOC ----

std::string voc_where(const std::string& path, const pugi::xml_node& node) {
  std::string where;
  for (pugi::xml_node n = node; n && n.type() == pugi::node_element; n = n.parent()) {
    where = "/" + std::string(n.name()) + where;
  }
  return path + ": <" + where.substr(1) + ">";
}

double voc_number(const std::string& path, const pugi::xml_node& box, const char* name) {
  const pugi::xml_node node = box.child(name);
  if (!node) usage(voc_where(path, box) + ": <" + name + "> is missing");
  std::string text = node.child_value();
  text.erase(0, text.find_first_not_of(" \t\r\n"));
  text.erase(text.find_last_not_of(" \t\r\n") + 1);
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(v)) {
    usage(voc_where(path, node) + ": expected a number, got \"" + text + "\"");
  }
  return v;
}

RoiImage read_voc_file(const std::string& path, const std::string& base, const AnnotationOptions& options) {
  const std::string text = detail::read_text_file(path, detail::kMaxAnnotationFileBytes, "an annotation file");
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size());
  if (!parsed) {
    usage(path + ": not well-formed XML at byte " + std::to_string(parsed.offset) + ": " + parsed.description());
  }
  const pugi::xml_node annotation = doc.child("annotation");
  if (!annotation) usage(path + ": no <annotation> element; a Pascal VOC file is <annotation>...</annotation>");
  const pugi::xml_node filename = annotation.child("filename");
  const std::string name = trimmed(filename.child_value());
  if (!filename || name.empty()) usage(voc_where(path, annotation) + ": <filename> is missing or empty");
  RoiImage image;
  image.path = image_under_root(base, name, voc_where(path, filename), options);
  image.where = path + " (" + name + ")";
  // <size>: the size the boxes were drawn on, checked against the image by the caller (0 or absent: not stated).
  if (const pugi::xml_node size = annotation.child("size")) {
    for (const char* side : {"width", "height"}) {
      if (!size.child(side)) continue;
      const double v = voc_number(path, size, side);
      if (v < 0 || v != std::floor(v) || v > std::numeric_limits<std::int32_t>::max()) {
        usage(voc_where(path, size.child(side)) + ": expected a whole number of pixels, got " +
              trimmed(size.child_value(side)));
      }
      (std::string(side) == "width" ? image.width : image.height) = static_cast<std::int64_t>(v);
    }
  }
  const std::string stem = name_part(fs::path(path).stem().string());
  std::size_t k = 0;
  for (const pugi::xml_node object : annotation.children("object")) {
    const pugi::xml_node box = object.child("bndbox");
    if (!box) usage(voc_where(path, object) + " #" + std::to_string(k) + ": <bndbox> is missing");
    const double xmin = voc_number(path, box, "xmin");
    const double ymin = voc_number(path, box, "ymin");
    const double xmax = voc_number(path, box, "xmax");
    const double ymax = voc_number(path, box, "ymax");
    const std::string where = voc_where(path, box) + " #" + std::to_string(k);
    if (xmax < xmin || ymax < ymin) usage(where + ": xmax < xmin or ymax < ymin");
    RoiEntry roi;
    roi.box = {to_float32(xmin - 1, where), to_float32(ymin - 1, where), to_float32(xmax, where),
               to_float32(ymax, where)};
    roi.label = trimmed(object.child_value("name"));
    roi.id = stem + "-" + std::to_string(k);
    ++k;
    if (options.skip_difficult && object.child("difficult")) {
      const std::string difficult = trimmed(object.child_value("difficult"));
      if (difficult != "0" && difficult != "1") {
        usage(voc_where(path, object.child("difficult")) + " #" + std::to_string(k - 1) + ": expected 0 or 1, got \"" +
              difficult + "\"");
      }
      if (difficult == "1") {
        image.left_out.push_back({std::move(roi), "difficult"});
        continue;
      }
    }
    image.rois.push_back(std::move(roi));
  }
  return image;
}

RoiFile read_voc(const std::string& path, const AnnotationOptions& options) {
  RoiFile file;
  file.dataset = true;
  const std::string base = root_for(path, options);
  std::error_code ec;
  const std::vector<std::string> files =
      fs::is_directory(path, ec) ? files_with_extension(path, ".xml") : std::vector<std::string>{path};
  if (files.empty()) usage(path + ": the folder holds no .xml files");
  std::map<std::string, std::string> seen;  // image path -> the file naming it
  for (const std::string& f : files) {
    RoiImage image = read_voc_file(f, base, options);
    const auto [first, fresh] = seen.emplace(image.path, f);
    if (!fresh) usage(f + ": image \"" + image.path + "\" is also annotated by " + first->second);
    file.images.push_back(std::move(image));
  }
  return file;
}

// ---- YOLO ----

// Class names by class number.
using ClassNames = std::map<std::size_t, std::string>;

// "FILE: line N" for a YAML node or error mark (just FILE where yaml-cpp knows no position).
std::string yaml_where(const std::string& path, const YAML::Mark& mark) {
  return mark.is_null() ? path : path + ": line " + std::to_string(mark.line + 1);
}

// What a YAML node is, for messages.
std::string yaml_kind(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  if (node.IsNull()) return "empty (null)";
  return "\"" + node.Scalar() + "\"";
}

// The type PyYAML (YAML 1.1, Ultralytics' reader) gives a plain scalar other than a string: "boolean", "number", or
// nullptr for a string. Its implicit resolvers: yes/no/on/off/true/false in three cases are booleans (y and n are
// strings), a float has a '.' (1e3 is a string; 1.0e+3 a number), integers may be 0b, 0x, octal or base 60.
const char* pyyaml_type(const std::string& text) {
  static const std::regex boolean("yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF");
  static const std::regex number(
      "[-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+][0-9]+)?|\\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|"
      "[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN)|"
      "[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+");
  // std::regex recurses about once a character: a long scalar (a hostile file's 100,000 digits) is judged by hand, as
  // the resolvers would read it (digits, '_' and at most one '.', after an optional sign, are a number).
  if (text.size() > 64) {
    const std::size_t start = text[0] == '-' || text[0] == '+' ? 1 : 0;
    const bool digits = start < text.size() && std::isdigit(static_cast<unsigned char>(text[start])) &&
                        std::all_of(text.begin() + static_cast<std::ptrdiff_t>(start), text.end(),
                                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }) &&
                        std::count(text.begin(), text.end(), '.') <= 1;
    return digits ? "number" : nullptr;
  }
  if (std::regex_match(text, boolean)) return "boolean";
  if (std::regex_match(text, number)) return "number";
  return nullptr;
}

// A name must be a string as YAML reads it: not a list or map, not null, and not an unquoted scalar that YAML reads
// as a boolean or a number (PyYAML, which Ultralytics uses, reads `no` as False and `1` as 1, not as the name).
std::string yaml_name(const std::string& path, const YAML::Node& node, const std::string& what) {
  const std::string quote_hint = "; names are strings (quote one that YAML would read otherwise: \"1\", \"no\")";
  // yaml-cpp marks an empty (null) item where the next token starts, often the next line: no line is better.
  if (node.IsNull()) usage(path + ": " + what + " is empty (null)" + quote_hint);
  if (!node.IsScalar()) usage(yaml_where(path, node.Mark()) + ": " + what + " is " + yaml_kind(node) + quote_hint);
  if (node.Tag() == "?") {  // plain (unquoted): YAML's own types come first, as PyYAML resolves them
    if (const char* type = pyyaml_type(node.Scalar())) {
      usage(yaml_where(path, node.Mark()) + ": " + what + " is " + yaml_kind(node) + ", which YAML reads as a " +
            type + quote_hint);
    }
  }
  const std::string name = trimmed(node.Scalar());
  if (name.empty()) usage(yaml_where(path, node.Mark()) + ": " + what + " is empty" + quote_hint);
  return name;
}

// Ultralytics' dataset YAML (data.yaml: path, train, val, nc, names): "names" as a list or a map of class numbers.
ClassNames read_yaml_names(const std::string& path, const std::string& text) {
  const std::string expected =
      "expected Ultralytics' dataset YAML with \"names:\" a list ([person, car]) or a map of class numbers "
      "({0: person, 1: car})";
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    usage(yaml_where(path, e.mark) + ": not valid YAML (" + e.msg + "); " + expected);
  }
  if (!root.IsMap()) usage(path + ": the YAML is " + yaml_kind(root) + ", not a mapping; " + expected);
  // A key given twice: yaml-cpp keeps the first, PyYAML (Ultralytics) the last; neither is sure to be what was meant.
  std::map<std::string, YAML::Mark> keys;
  for (const auto& entry : root) {
    if (!entry.first.IsScalar()) continue;
    const auto [at, fresh] = keys.emplace(entry.first.Scalar(), entry.first.Mark());
    if (!fresh && (at->first == "names" || at->first == "nc")) {
      usage(yaml_where(path, entry.first.Mark()) + ": \"" + at->first + "\" is given twice (first at line " +
            std::to_string(at->second.line + 1) + "); Ultralytics would take the last, so give it once");
    }
  }
  const YAML::Node names = static_cast<const YAML::Node&>(root)["names"];
  if (!names) usage(path + ": no \"names\" key; " + expected);
  ClassNames classes;
  if (names.IsSequence()) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      classes[i] = yaml_name(path, names[i], "name " + std::to_string(i));
    }
  } else if (names.IsMap()) {
    std::map<std::size_t, YAML::Mark> first;  // class number -> where it was first given
    for (const auto& entry : names) {
      const YAML::Node& key = entry.first;
      long long number = -1;
      if (!key.IsScalar() || !YAML::convert<long long>::decode(key, number) || number < 0 ||
          number > 1000000000) {
        usage(yaml_where(path, key.Mark()) + ": the key " + yaml_kind(key) +
              " of \"names\" is not a class number (0, 1, ...)");
      }
      const auto cls = static_cast<std::size_t>(number);
      const auto [at, fresh] = first.emplace(cls, key.Mark());
      if (!fresh) {
        usage(yaml_where(path, key.Mark()) + ": class " + std::to_string(cls) + " is named twice (first at line " +
              std::to_string(at->second.line + 1) + ")");
      }
      classes[cls] = yaml_name(path, entry.second, "the name of class " + std::to_string(cls));
    }
  } else {
    usage(yaml_where(path, names.Mark()) + ": \"names\" is " + yaml_kind(names) + "; " + expected);
  }
  if (classes.empty()) usage(yaml_where(path, names.Mark()) + ": \"names\" is empty; " + expected);
  // Ultralytics refuses a file whose class count disagrees with its names: so does rsz.
  if (const YAML::Node nc = static_cast<const YAML::Node&>(root)["nc"]; nc && !nc.IsNull()) {
    long long count = -1;
    if (!nc.IsScalar() || !YAML::convert<long long>::decode(nc, count) || count < 0 ||
        static_cast<std::size_t>(count) != classes.size()) {
      usage(yaml_where(path, nc.Mark()) + ": \"nc\" is " + (nc.IsScalar() ? nc.Scalar() : yaml_kind(nc)) +
            ", but \"names\" has " + std::to_string(classes.size()) + " classes; nc counts the names");
    }
  }
  return classes;
}

bool has_yaml_extension(const std::string& path) {
  const std::string e = lower_extension(path);
  return e == ".yaml" || e == ".yml";
}

// Whether a names file without a YAML extension is a YAML mapping with a "names" key all the same (a data.yaml
// copied as classes.txt): read line by line it would give classes such as "path: ." and "names:".
bool is_yaml_with_names(const std::string& text) {
  if (text.find("names") == std::string::npos) return false;
  try {
    const YAML::Node root = YAML::Load(text);
    return root.IsMap() && static_cast<bool>(static_cast<const YAML::Node&>(root)["names"]);
  } catch (const YAML::Exception&) {
    return false;  // plain text that is not YAML at all
  }
}

// The class names of a names file: Ultralytics' dataset YAML, or plain text with the name of class k on line k.
ClassNames read_names(const std::string& path) {
  ClassNames names;
  if (path.empty()) return names;
  const std::string text = detail::read_text_file(path, detail::kMaxAnnotationFileBytes, "an annotation file");
  if (has_yaml_extension(path) || is_yaml_with_names(text)) return read_yaml_names(path, text);
  std::istringstream lines(text);
  std::vector<std::string> list;
  for (std::string line; std::getline(lines, line);) list.push_back(trimmed(line));
  while (!list.empty() && list.back().empty()) list.pop_back();
  for (std::size_t k = 0; k < list.size(); ++k) names[k] = list[k];
  return names;
}

RoiImage read_yolo_file(const std::string& txt, const std::string& image_path, const ClassNames& names,
                        const AnnotationOptions& options) {
  const std::string& names_path = options.yolo_names;
  RoiImage image;
  image.path = image_path;
  std::error_code ec;
  if (!fs::exists(txt, ec)) {  // no label file: no boxes, and the image is not read; one that is not there still fails
    if (!fs::exists(image_path, ec)) image.error = image_path + ": no such file or folder";
    return image;
  }
  // The size the boxes are relative to: the image as the operator will see it (upright unless --no-exif). An image
  // that cannot be read fails alone: its error goes with it, the other images keep their boxes.
  ImageInfo info;
  try {
    info = read_image_info(image_path, options.image_options);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::InvalidArgument) throw;  // the options, not the image
    image.error = e.what();
    return image;
  }
  image.width = info.width;
  image.height = info.height;
  image.where = txt;
  std::istringstream lines(detail::read_text_file(txt, detail::kMaxAnnotationFileBytes, "a YOLO label file"));
  const std::string stem = name_part(fs::path(image_path).stem().string());
  std::string line;
  std::size_t number = 0;
  std::size_t k = 0;
  while (std::getline(lines, line)) {
    ++number;
    const std::string where = txt + ": line " + std::to_string(number);
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string w; fields >> w;) words.push_back(w);
    if (words.empty()) continue;
    if (words.size() != 5) {
      usage(where + ": expected 5 fields \"class cx cy w h\", got " + std::to_string(words.size()) +
            " (segmentation polygons are not boxes)");
    }
    std::array<double, 5> v{};
    for (std::size_t i = 0; i < 5; ++i) {
      const std::string& w = words[i];
      const auto [end, err] = std::from_chars(w.data(), w.data() + w.size(), v[i]);
      if (err != std::errc() || end != w.data() + w.size() || !std::isfinite(v[i])) {
        usage(where + ": field " + std::to_string(i + 1) + " \"" + w + "\" is not a number");
      }
    }
    if (v[0] < 0 || v[0] != std::floor(v[0]) || v[0] > 1e9) {
      usage(where + ": the class \"" + words[0] + "\" is not a class number (0, 1, ...)");
    }
    const auto cls = static_cast<std::size_t>(v[0]);
    const auto name = names.find(cls);
    if (!names.empty() && name == names.end()) {
      usage(where + ": class " + words[0] + " has no name in " + names_path + " (" + std::to_string(names.size()) +
            " names)");
    }
    const bool malformed = v[3] < 0 || v[4] < 0;
    if (malformed && !options.skip_malformed) {
      usage(where + ": a box of negative width or height (--rois-check skip leaves such boxes out)");
    }
    const auto w = static_cast<double>(info.width);
    const auto h = static_cast<double>(info.height);
    RoiEntry roi;
    roi.box = {to_float32((v[1] - v[3] / 2) * w, where), to_float32((v[2] - v[4] / 2) * h, where),
               to_float32((v[1] + v[3] / 2) * w, where), to_float32((v[2] + v[4] / 2) * h, where)};
    roi.label = names.empty() ? std::to_string(cls) : name->second;
    roi.id = stem + "-" + std::to_string(k++);
    if (malformed) {
      image.left_out.push_back({std::move(roi), "malformed"});
      continue;
    }
    image.rois.push_back(std::move(roi));
  }
  return image;
}

RoiFile read_yolo(const std::string& path, const AnnotationOptions& options) {
  if (options.yolo_images.empty()) usage(path + ": YOLO labels need their images (give them with -i)");
  const ClassNames names = read_names(options.yolo_names);
  std::error_code ec;
  const bool folder = fs::is_directory(path, ec);
  if (!folder && options.yolo_images.size() != 1) {
    usage(path + ": one YOLO .txt file labels one image; give a folder of .txt files for " +
          std::to_string(options.yolo_images.size()) + " images");
  }
  if (!folder && !fs::is_regular_file(path, ec)) usage(path + ": no such YOLO label file");
  RoiFile file;
  file.dataset = true;
  std::size_t labelled = 0;
  for (const std::string& image : options.yolo_images) {
    const std::string txt = folder ? (fs::path(path) / (fs::path(image).stem().string() + ".txt")).string() : path;
    labelled += fs::is_regular_file(txt, ec) ? 1 : 0;
    file.images.push_back(read_yolo_file(txt, image, names, options));
  }
  if (labelled == 0) {
    usage(path + ": none of the " + std::to_string(options.yolo_images.size()) +
          " images has a label file here (YOLO labels are <folder>/<image stem>.txt)");
  }
  return file;
}

// ---- the manifest ----

std::string float_text(float v) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

// A text cell of the CSV manifest. One that a spreadsheet would run as a formula (starting with =, +, -, @, a tab or
// a carriage return: a label "=cmd|' /C calc'!A0" from an untrusted dataset) gets a leading ' (OWASP's advice), which
// spreadsheets show as text; then cells with a comma, quote or line break are quoted.
std::string csv_field(const std::string& value) {
  const bool formula = !value.empty() && std::string("=+-@\t\r").find(value.front()) != std::string::npos;
  const std::string text = formula ? "'" + value : value;
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

const char* to_string(AnnotationFormat format) {
  switch (format) {
    case AnnotationFormat::Rsz: return "rsz";
    case AnnotationFormat::Coco: return "coco";
    case AnnotationFormat::Voc: return "voc";
    case AnnotationFormat::Yolo: return "yolo";
  }
  return "unknown";
}

namespace {

// A SAX reader that builds nothing: whether the text is a JSON object with `wanted` among its top-level keys. It
// stops at that key, or at the first error.
class TopLevelKey : public nlohmann::json_sax<Json> {
 public:
  explicit TopLevelKey(const std::string& wanted) : wanted_(wanted) {}
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    objects_.push_back(depth_++ == 0);
    return true;
  }
  bool key(string_t& key) override {
    found_ = objects_.back() && key == wanted_;
    return !found_;
  }
  bool end_object() override {
    objects_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    objects_.push_back(false);
    ++depth_;
    return true;
  }
  bool end_array() override {
    objects_.pop_back();
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
  bool found() const { return found_; }

 private:
  const std::string& wanted_;
  std::vector<bool> objects_;  // per open container: whether it is the top-level object
  int depth_ = 0;
  bool found_ = false;
};

bool has_top_level_key(const std::string& text, const std::string& key) {
  TopLevelKey reader(key);
  Json::sax_parse(text, &reader);
  return reader.found();
}

}  // namespace

AnnotationFormat detect_annotation_format(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (!files_with_extension(path, ".xml").empty()) return AnnotationFormat::Voc;
    if (!files_with_extension(path, ".txt").empty()) return AnnotationFormat::Yolo;
    usage(path + ": the folder holds neither Pascal VOC .xml nor YOLO .txt files");
  }
  const std::string ext = lower_extension(path);
  if (ext == ".txt") return AnnotationFormat::Yolo;
  if (ext == ".xml") return AnnotationFormat::Voc;
  if (ext == ".npy") return AnnotationFormat::Rsz;  // tensors: the caller's business
  // Any other file by content: XML is VOC; a JSON object with "annotations" at its top level is COCO; the rest is
  // rsz's own ROI file (whose parser reports what is wrong with it).
  const std::string text = detail::read_text_file(path, detail::kMaxAnnotationFileBytes, "an annotation file");
  const std::size_t first = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (first != std::string::npos && text[first] == '<') return AnnotationFormat::Voc;
  if (text.find("\"annotations\"") == std::string::npos) return AnnotationFormat::Rsz;
  // Read without building the document (COCO files run to hundreds of MB): stops at the top-level key. Text that is
  // not JSON is left to the rsz parser, which says where.
  return has_top_level_key(text, "annotations") ? AnnotationFormat::Coco : AnnotationFormat::Rsz;
}

RoiFile read_annotations(const std::string& path, AnnotationFormat format, const AnnotationOptions& options) {
  switch (format) {
    case AnnotationFormat::Coco: return read_coco(path, options);
    case AnnotationFormat::Voc: return read_voc(path, options);
    case AnnotationFormat::Yolo: return read_yolo(path, options);
    case AnnotationFormat::Rsz: break;
  }
  return read_roi_file(path);
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (1 to 4), or 0 where the byte does not start one.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
  const std::size_t n = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  const unsigned char c = byte(i + 1);
  if ((b == 0xE0 && c < 0xA0) || (b == 0xED && c > 0x9F) || (b == 0xF0 && c < 0x90) || (b == 0xF4 && c > 0x8F)) {
    return 0;  // overlong, a surrogate, or past U+10FFFF
  }
  return n;
}

}  // namespace

std::string json_string(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < bytes.size();) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    const std::size_t n = utf8_length(bytes, i);
    if (n == 0) {  // a byte that is not UTF-8: U+DC80..U+DCFF, as Python's surrogateescape reads file names
      out += "\\udc";
      out += digits[b >> 4];
      out += digits[b & 15];
      ++i;
    } else if (b == '"' || b == '\\') {
      out += '\\';
      out += static_cast<char>(b);
      ++i;
    } else if (b < 0x20) {
      const char* const shorts = "\b\f\n\r\t";
      const char* const letters = "bfnrt";
      const char* at = std::strchr(shorts, static_cast<char>(b));
      if (b != 0 && at != nullptr) {
        out += '\\';
        out += letters[at - shorts];
        ++i;
        continue;
      }
      out += "\\u00";
      out += digits[b >> 4];
      out += digits[b & 15];
      ++i;
    } else {
      out.append(bytes, i, n);
      i += n;
    }
  }
  return out + "\"";
}

bool is_manifest_path(const std::string& path) {
  const std::string e = lower_extension(path);
  return e == ".jsonl" || e == ".csv";
}

std::string manifest_json(const CropRecord& r) {
  // Written by hand: a path's bytes that are not UTF-8 stay in the line (json_string), where a JSON library would
  // replace them and the row would name no file.
  std::string line = "{";
  if (r.skipped.empty()) line += "\"crop\":" + json_string(r.crop) + ",";
  line += "\"source\":" + json_string(r.source) + ",\"box\":[";
  for (std::size_t k = 0; k < r.box.size(); ++k) line += (k ? "," : "") + float_text(r.box[k]);
  line += "],\"label\":" + json_string(r.label) + ",\"id\":" + json_string(r.id);
  if (!r.skipped.empty()) line += ",\"skipped\":" + json_string(r.skipped);
  return line + "}";
}

void write_manifest(const std::string& path, const std::vector<CropRecord>& records) {
  if (!is_manifest_path(path)) {
    usage(path + ": a manifest is .jsonl (JSON Lines) or .csv; the extension says which");
  }
  const bool csv = lower_extension(path) == ".csv";
  // The "skipped" column only where a box was left out: a run that crops every box keeps the plain layout.
  const bool any_skipped =
      std::any_of(records.begin(), records.end(), [](const CropRecord& r) { return !r.skipped.empty(); });
  std::string text = csv ? std::string("crop,source,x1,y1,x2,y2,label,id") + (any_skipped ? ",skipped\n" : "\n") : "";
  for (const CropRecord& r : records) {
    if (csv) {
      text += csv_field(r.crop) + "," + csv_field(r.source);
      for (const float v : r.box) text += "," + float_text(v);
      text += "," + csv_field(r.label) + "," + csv_field(r.id) + (any_skipped ? "," + csv_field(r.skipped) : "") + "\n";
    } else {
      text += manifest_json(r) + "\n";
    }
  }
  detail::AtomicFile file(path);
  file.write(text.data(), text.size());
  file.commit();
}

}  // namespace rsz::io
