// Dataset annotations as ROI lists, and the crop manifest.
//
// Besides rsz's own ROI files (config.h), roi-align reads the boxes of three dataset formats, recognized by content:
// * COCO instances JSON: an object with "images" ([{"id", "file_name", ...}]), "annotations" ([{"id", "image_id",
//   "bbox": [x, y, w, h], "category_id", ...}]) and "categories" ([{"id", "name"}]). COCO boxes are in continuous
//   pixel coordinates (the image spans [0, W] x [0, H], pixel i covers [i, i + 1)), rsz's own convention, so the box
//   is [x, y, x + w, y + h] (the sums in double, rounded to float32 once). Label: the category name; id: the
//   annotation id. Crowd annotations ("iscrowd": 1) are boxes like the others unless skip_crowd leaves them out;
//   images without annotations give no crops. An image's "width" and "height" (whole numbers; 0 or absent: not
//   stated) become RoiImage::width / height, which the caller checks against the image it reads.
// * Pascal VOC XML: an <annotation> with <filename> and <object>s holding <name> and <bndbox> (<xmin> <ymin> <xmax>
//   <ymax>); a file, or a folder of such .xml files (sorted by name). VOC coordinates are 1-based pixel indices with
//   the max inclusive, so pixels xmin..xmax cover [xmin - 1, xmax): the box is [xmin - 1, ymin - 1, xmax, ymax].
//   Label: <name>; id: "<file stem>-<k>" (k: the object's position in the file, from 0). <size><width> / <height>
//   become RoiImage::width / height as COCO's do; objects with <difficult>1</difficult> are left out with
//   skip_difficult (k still counts them, so ids do not depend on the option).
// * YOLO txt: one "class cx cy w h" line per box, normalized to the image size (cx, cy the centre); one .txt per
//   image, named like it (a folder of them, or one file for one image). The image's size comes from its header:
//   the box is [(cx - w / 2) W, (cy - h / 2) H, (cx + w / 2) W, (cy + h / 2) H] in double, rounded once. Label: the
//   class name from a names file, or the class number without one; id: "<stem>-<k>" (k: the line's box index). An
//   image without a .txt has no boxes; a source where no image has one is refused. An image that is missing or whose
//   header cannot be read gets RoiImage::error instead of boxes (the others are read).
//   A names file is plain text (line k names class k) or Ultralytics' dataset YAML (a .yaml / .yml file, or any
//   file that is a YAML mapping with a "names" key): "names" is a list ([person, car], or a block list) or a map of
//   class numbers to names ({0: person, 5: car}: numbers may have gaps); names are strings (quote a name YAML would
//   read as a number, a boolean or null), and a "nc" key, when present, must count them.
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
  std::string yolo_names;               // YOLO class names (text or YAML, see above); "": class numbers as labels
  std::vector<std::string> yolo_images; // YOLO: the images whose .txt files are looked up (required)
  ImageReadOptions image_options;       // YOLO: how the images' sizes are read (EXIF orientation, pixel limit)
  // COCO annotations with "iscrowd": 1 (a region of many objects, not one object's box), VOC objects with
  // <difficult>1</difficult>: left out (RoiImage::left_out) rather than read as boxes. The other formats have no such
  // field; the options are then unused (the command line refuses them).
  bool skip_crowd = false;
  bool skip_difficult = false;
  // A COCO or YOLO box of negative width or height: left out (RoiImage::left_out, reason "malformed") rather than
  // refusing the file (the command line's --rois-check skip).
  bool skip_malformed = false;
};

// The boxes of a COCO, VOC or YOLO source in rsz's dataset form (RoiFile::dataset = true, one RoiImage per image).
RoiFile read_annotations(const std::string& path, AnnotationFormat format, const AnnotationOptions& options);

// One crop written by roi-align: the file, the image it was cut from, its box as the ROI source gives it after the
// conversion from the annotation format (ROI coordinates: the image's pixels unless a spatial scale applies), its
// label and id (empty when absent). A box left out instead has no crop file and says why in `skipped`: "outside"
// (the image), "empty", "inverted" (--rois-check skip), "crowd" or "difficult" (the annotation filters).
struct CropRecord {
  std::string crop;
  std::string source;
  std::array<float, 4> box{};
  std::string label;
  std::string id;
  std::string skipped;  // "" for a crop that was written
};

// Writes the crop manifest atomically: JSON Lines (one {"crop", "source", "box", "label", "id"} object per line; a
// left-out box has "skipped" instead of "crop") for .jsonl, CSV with a header line (crop,source,x1,y1,x2,y2,label,id,
// and a last column "skipped" when some box was left out, whose crop cell is then empty; fields quoted as RFC 4180
// asks) for .csv.
// Boxes are written as the shortest decimal that reads back as the same float32. Throws ErrorCode::InvalidArgument for
// another extension, ErrorCode::Io when the file cannot be written.
void write_manifest(const std::string& path, const std::vector<CropRecord>& records);
// One line of the .jsonl manifest, without its newline: {"crop", "source", "box", "label", "id"} ("skipped" instead
// of "crop" for a box left out), boxes as write_manifest writes them.
std::string manifest_json(const CropRecord& record);
// A JSON string literal (quotes included) of `bytes` for the .jsonl manifest: UTF-8 as it is, quotes, backslashes and
// control characters escaped, and each byte that is not UTF-8 (a file name in another encoding) as the escape of
// U+DC80..U+DCFF: Python's json.loads then gives the str that open() and os.fsencode() turn back into those bytes
// (PEP 383's surrogateescape), so every row names its file.
std::string json_string(const std::string& bytes);
// Whether write_manifest accepts this path's extension.
bool is_manifest_path(const std::string& path);

}  // namespace rsz::io

#pragma GCC visibility pop
