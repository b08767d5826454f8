// Dataset annotations as ROI lists, and the crop manifest.
//
// Besides rsz's own ROI files (config.h), roi-align reads the boxes of three dataset formats, recognized by content:
// * COCO instances JSON: an object with "images" ([{"id", "file_name", ...}]), "annotations" ([{"id", "image_id",
//   "bbox": [x, y, w, h], "category_id", ...}]) and "categories" ([{"id", "name"}]). COCO boxes are in continuous
//   pixel coordinates (the image spans [0, W] x [0, H], pixel i covers [i, i + 1)), rsz's own convention, so the box
//   is [x, y, x + w, y + h] (the sums in double, rounded to float32 once). Label: the category name; id: the
//   annotation id. Crowd annotations are boxes like the others; images without annotations give no crops.
// * Pascal VOC XML: an <annotation> with <filename> and <object>s holding <name> and <bndbox> (<xmin> <ymin> <xmax>
//   <ymax>); a file, or a folder of such .xml files (sorted by name). VOC coordinates are 1-based pixel indices with
//   the max inclusive, so pixels xmin..xmax cover [xmin - 1, xmax): the box is [xmin - 1, ymin - 1, xmax, ymax].
//   Label: <name>; id: "<file stem>-<k>" (k: the object's position in the file, from 0).
// * YOLO txt: one "class cx cy w h" line per box, normalized to the image size (cx, cy the centre); one .txt per
//   image, named like it (a folder of them, or one file for one image). The image's size comes from its header:
//   the box is [(cx - w / 2) W, (cy - h / 2) H, (cx + w / 2) W, (cy + h / 2) H] in double, rounded once. Label: the
//   class name from a names file (line k names class k), or the class number without one; id: "<stem>-<k>" (k: the
//   line's box index). An image without a .txt has no boxes; a source where no image has one is refused. An image
//   that is missing or whose header cannot be read gets RoiImage::error instead of boxes (the others are read).
// Relative image paths resolve against `image_root` ("": the folder of the annotation file). Labels are the class
// names as the dataset spells them (the {label} placeholder makes them safe in file names); ids become parts of file
// names, so '/', '\' and control characters in them become '_'. Every malformed file or entry is an
// rsz::Error (ErrorCode::InvalidArgument; Io for unreadable files) naming the file and the entry (a JSON pointer, an XML
// element path, a line number).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "rsz/io/config.h"
#include "rsz/io/image.h"

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz::io {

enum class AnnotationFormat { Rsz, Coco, Voc, Yolo };
const char* to_string(AnnotationFormat format);  // "rsz", "coco", "voc", "yolo"

// The format of a ROI source: a folder holding .xml files is VOC, one holding .txt files YOLO; a .txt file is YOLO,
// a .xml file or any file starting with '<' VOC, a JSON object with "annotations" at its top level COCO, anything
// else (and .npy) rsz's own ROI file.
AnnotationFormat detect_annotation_format(const std::string& path);

struct AnnotationOptions {
  std::string image_root;               // "": the annotation file's folder (a folder source: that folder)
  // COCO / VOC image names that leave the root (absolute, or ".." above it) are refused (InvalidArgument) unless
  // this is set: a dataset file from elsewhere must not point rsz at any file of the machine.
  bool allow_outside_root = false;
  std::string yolo_names;               // YOLO class names, one per line; "": class numbers as labels
  std::vector<std::string> yolo_images; // YOLO: the images whose .txt files are looked up (required)
  ImageReadOptions image_options;       // YOLO: how the images' sizes are read (EXIF orientation, pixel limit)
};

// The boxes of a COCO, VOC or YOLO source in rsz's dataset form (RoiFile::dataset = true, one RoiImage per image).
RoiFile read_annotations(const std::string& path, AnnotationFormat format, const AnnotationOptions& options);

// One crop written by roi-align: the file, the image it was cut from, its box as the ROI source gives it after the
// conversion from the annotation format (ROI coordinates: the image's pixels unless a spatial scale applies), its
// label and id (empty when absent).
struct CropRecord {
  std::string crop;
  std::string source;
  std::array<float, 4> box{};
  std::string label;
  std::string id;
};

// Writes the crop manifest atomically: JSON Lines (one {"crop", "source", "box", "label", "id"} object per line)
// for .jsonl, CSV with a header line (crop,source,x1,y1,x2,y2,label,id; fields quoted as RFC 4180 asks) for .csv.
// Boxes are written as the shortest decimal that reads back as the same float32. Throws ErrorCode::InvalidArgument for
// another extension, ErrorCode::Io when the file cannot be written.
void write_manifest(const std::string& path, const std::vector<CropRecord>& records);
// Whether write_manifest accepts this path's extension.
bool is_manifest_path(const std::string& path);

}  // namespace rsz::io

#pragma GCC visibility pop
