// roi-align on dataset annotations (COCO, Pascal VOC, YOLO) and the crop manifest, end to end: the sample
// annotations (samples/annotations, the boxes of samples/rois/dataset.json in each format) give the very crops of
// rsz's own ROI file; malformed files are one-line usage errors naming the file and the entry, with nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace rsz {
namespace {

using test::list_files;
using test::run_rsz;
using test::ScratchDir;

std::string source(const std::string& relative) { return std::string(RSZ_SOURCE_DIR) + "/" + relative; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void expect_same_tree(const fs::path& a, const fs::path& b, const std::string& context) {
  const auto files = list_files(a);
  ASSERT_EQ(files, list_files(b)) << context;
  ASSERT_EQ(files.size(), 5u) << context;
  for (const auto& f : files) {
    EXPECT_EQ(test::read_text(a / f), test::read_text(b / f)) << context << ": " << f;
  }
}

TEST(Annotations, CocoVocAndYoloGiveTheCropsOfTheSameBoxes) {
  ScratchDir dir("annotations");
  const std::string common = " --output-size 24x20 -q";
  const std::string photos = source("samples/photos");
  auto r = run_rsz(dir, "roi-align --rois " + source("samples/rois/dataset.json") + common +
                            " -o 'rsz/{stem}_{index}.png' --manifest rsz.csv");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, "roi-align --rois " + source("samples/annotations/coco.json") + " --image-root " + photos +
                       common + " -o 'coco/{stem}_{index}.png' --manifest coco.jsonl");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, "roi-align --rois " + source("samples/annotations/voc") + " --image-root " + photos + common +
                       " -o 'voc/{stem}_{index}.png' --manifest voc.csv");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, "roi-align -i " + photos + "/chelsea.png -i " + photos + "/coffee.png --rois " +
                       source("samples/annotations/yolo") + " --names " + source("samples/annotations/classes.txt") +
                       common + " -o 'yolo/{stem}_{index}.png' --manifest yolo.jsonl");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* format : {"coco", "voc", "yolo"}) expect_same_tree(dir.path() / "rsz", dir.path() / format, format);

  // The manifests: one line per crop, the box in source pixels after conversion, labels and ids of each format.
  const auto rsz_csv = lines_of(test::read_text(dir.path() / "rsz.csv"));
  ASSERT_EQ(rsz_csv.size(), 6u);
  EXPECT_EQ(rsz_csv[0], "crop,source,x1,y1,x2,y2,label,id");
  EXPECT_EQ(rsz_csv[1], "rsz/chelsea_0.png," + photos + "/chelsea.png,130,80,215,150,eye,chelsea-left-eye");
  const auto voc_csv = lines_of(test::read_text(dir.path() / "voc.csv"));
  ASSERT_EQ(voc_csv.size(), 6u);
  EXPECT_EQ(voc_csv[5], "voc/coffee_1.png," + photos + "/coffee.png,320,60,425,330,spoon,coffee-1");
  const auto coco = lines_of(test::read_text(dir.path() / "coco.jsonl"));
  ASSERT_EQ(coco.size(), 5u);
  const auto first = nlohmann::json::parse(coco[0]);
  EXPECT_EQ(first["crop"], "coco/chelsea_0.png");
  EXPECT_EQ(first["source"], photos + "/chelsea.png");
  EXPECT_EQ(first["box"], nlohmann::json({130, 80, 215, 150}));
  EXPECT_EQ(first["label"], "eye");
  EXPECT_EQ(first["id"], "101");
  const auto yolo = lines_of(test::read_text(dir.path() / "yolo.jsonl"));
  ASSERT_EQ(yolo.size(), 5u);
  const auto nose = nlohmann::json::parse(yolo[2]);
  EXPECT_EQ(nose["box"], nlohmann::json({228, 212, 296, 272}));
  EXPECT_EQ(nose["label"], "nose");
  EXPECT_EQ(nose["id"], "chelsea-2");
}

TEST(Annotations, LabelsBecomeSafeFolderNamesAndImagesWithoutBoxesAreSkipped) {
  ScratchDir dir("annotation-names");
  test::write_file(dir / "coco.json", R"({"images": [{"id": 1, "file_name": "chelsea.png"},
    {"id": 2, "file_name": "missing-but-unannotated.png"}],
    "annotations": [{"id": 7, "image_id": 1, "bbox": [10, 20, 30, 40], "category_id": 3},
                    {"id": 8, "image_id": 1, "bbox": [10, 20, 30, 40], "category_id": 4},
                    {"id": 9, "image_id": 1, "bbox": [10, 20, 30, 40], "category_id": 5}],
    "categories": [{"id": 3, "name": "cat/dog"}, {"id": 4, "name": "猫"}, {"id": 5, "name": "狗"}]})");
  const auto r = run_rsz(dir, "roi-align --rois coco.json --image-root " + source("samples/photos") +
                                  " --output-size 8x8 -o 'crops/{label}/{id}.png' -q --manifest crops.jsonl");
  ASSERT_EQ(r.status, 0) << r.err;
  // Separators become '_'; other characters, non-ASCII ones included, stay (two classes, two folders).
  EXPECT_EQ(list_files(dir.path() / "crops"), (std::vector<std::string>{"cat_dog/7.png", "狗/9.png", "猫/8.png"}));
  // The manifest keeps the class name itself beside the safe path.
  const std::string manifest = test::read_text(dir.path() / "crops.jsonl");
  EXPECT_NE(manifest.find("\"crop\":\"crops/cat_dog/7.png\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"label\":\"cat/dog\""), std::string::npos) << manifest;
}

TEST(Annotations, AMissingImageFailsAloneAndTheManifestListsWhatWasWritten) {
  ScratchDir dir("annotation-missing");
  test::write_file(dir / "coco.json", R"({"images": [{"id": 1, "file_name": "chelsea.png"},
    {"id": 2, "file_name": "nowhere.png"}],
    "annotations": [{"id": 1, "image_id": 1, "bbox": [10, 20, 30, 40], "category_id": 1},
                    {"id": 2, "image_id": 2, "bbox": [10, 20, 30, 40], "category_id": 1}],
    "categories": [{"id": 1, "name": "thing"}]})");
  const auto r = run_rsz(dir, "roi-align --rois coco.json --image-root " + source("samples/photos") +
                                  " --output-size 8x8 -o 'crops/{id}.png' -q --manifest crops.csv");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("nowhere.png"), std::string::npos) << r.err;
  EXPECT_EQ(list_files(dir.path() / "crops"), std::vector<std::string>{"1.png"});
  const auto lines = lines_of(test::read_text(dir.path() / "crops.csv"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].substr(0, 12), "crops/1.png,");
  // A manifest in a folder that does not exist yet is written there, as outputs are.
  const auto again = run_rsz(dir, "roi-align --rois coco.json --image-root " + source("samples/photos") +
                                      " --output-size 8x8 -o 'crops2/{id}.png' -q --manifest new/folder/crops.csv");
  EXPECT_EQ(again.status, 1);
  EXPECT_EQ(lines_of(test::read_text(dir.path() / "new/folder/crops.csv")).size(), 2u) << again.err;
}

// One bad image of a dataset fails that image alone, in every annotation format: exit 1, one line naming the file, the
// other images' crops written. YOLO reads each labelled image's header for its size: a missing or corrupt one
// stopped the whole run (exit 2, no crops), and a -i pattern matching nothing was ignored (exit 0).
TEST(Annotations, ABadImageFailsAloneInEveryFormat) {
  ScratchDir dir("annotation-bad-image");
  const std::string photos = source("samples/photos");
  fs::create_directories(dir.path() / "images");
  fs::copy_file(photos + "/chelsea.png", dir.path() / "images/chelsea.png");
  test::write_file(dir / "images/coffee.png", "not a picture at all\n");  // named like a PNG, of no image format
  fs::create_directories(dir.path() / "labels");
  for (const char* stem : {"chelsea", "coffee", "gone"}) {
    fs::copy_file(source("samples/annotations/yolo/chelsea.txt"), dir.path() / "labels" / (std::string(stem) + ".txt"));
  }
  const std::string corrupt =
      "rsz: images/coffee.png: not an image file of a known format; PNG, JPEG, BMP, TIFF, WebP, PPM/PGM, GIF, HEIC, "
      "AVIF and JPEG XL are allowed\n";
  auto r = run_rsz(dir, "roi-align -i images/chelsea.png -i images/coffee.png -i images/gone.png -i 'images/none*.png'"
                        " --rois labels --output-size 8x8 -o yolo/");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, corrupt + "rsz: images/gone.png: no such file or folder\n"
                             "rsz: images/none*.png: the pattern matches no file\n"
                             "rsz: 3 of 4 inputs failed; 3 files written\n");
  EXPECT_EQ(list_files(dir.path() / "yolo"),
            (std::vector<std::string>{"chelsea_0.png", "chelsea_1.png", "chelsea_2.png"}));
  // Pascal VOC and COCO name their images: the same images fail alone there too.
  fs::create_directories(dir.path() / "voc");
  for (const char* stem : {"chelsea", "coffee", "gone"}) {
    test::write_file(dir / ("voc/" + std::string(stem) + ".xml"),
                     "<annotation><filename>" + std::string(stem) + ".png</filename><object><name>eye</name>"
                     "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>9</xmax><ymax>9</ymax></bndbox></object>"
                     "</annotation>");
  }
  r = run_rsz(dir, "roi-align --rois voc --image-root images --output-size 8x8 -o 'voc_crops/{stem}_{index}.png'");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, corrupt + "rsz: images/gone.png: no such file or folder\n"
                             "rsz: 2 of 3 inputs failed; 1 file written\n");
  EXPECT_EQ(list_files(dir.path() / "voc_crops"), std::vector<std::string>{"chelsea_0.png"});
  test::write_file(dir / "coco.json", R"({"images": [{"id": 1, "file_name": "chelsea.png"},
    {"id": 2, "file_name": "coffee.png"}, {"id": 3, "file_name": "gone.png"}],
    "annotations": [{"id": 1, "image_id": 1, "bbox": [1, 1, 8, 8]}, {"id": 2, "image_id": 2, "bbox": [1, 1, 8, 8]},
                    {"id": 3, "image_id": 3, "bbox": [1, 1, 8, 8]}]})");
  r = run_rsz(dir, "roi-align --rois coco.json --image-root images --output-size 8x8 -o 'coco_crops/{id}.png'");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, corrupt + "rsz: images/gone.png: no such file or folder\n"
                             "rsz: 2 of 3 inputs failed; 1 file written\n");
  EXPECT_EQ(list_files(dir.path() / "coco_crops"), std::vector<std::string>{"1.png"});
}

// A float16 run crops with float16 boxes (ROI_ALIGN's rois have the output's type): it says so, and the manifest
// records the boxes the crops were cut with, not the ones given.
TEST(Annotations, Float16BoxesAreRecordedAsUsedAndAnnounced) {
  ScratchDir dir("annotation-float16");
  test::write_file(dir / "coco.json", R"({"images": [{"id": 1, "file_name": "chelsea.png"}],
    "annotations": [{"id": 7, "image_id": 1, "bbox": [10.3, 20.7, 89.8, 60.2], "category_id": 1}],
    "categories": [{"id": 1, "name": "thing"}]})");
  const std::string common = "roi-align --rois coco.json --image-root " + source("samples/photos") +
                             " --output-size 8x8 -o 'crops/{id}.png' --manifest m.jsonl -q";
  auto r = run_rsz(dir, common);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(test::read_text(dir.path() / "m.jsonl").find("\"box\":[10.3,20.7,100.1,80.9]"), std::string::npos)
      << test::read_text(dir.path() / "m.jsonl");
  r = run_rsz(dir, common + " --dtype float16");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("1 of 1 boxes are not float16 values and are rounded to float16"), std::string::npos) << r.err;
  // float16(10.3) = 10.296875, float16(20.7) = 20.703125, float16(100.1) = 100.125, float16(80.9) = 80.875.
  EXPECT_NE(test::read_text(dir.path() / "m.jsonl").find("\"box\":[10.296875,20.703125,100.125,80.875]"),
            std::string::npos)
      << test::read_text(dir.path() / "m.jsonl");
}

TEST(Annotations, MalformedFilesAndMisusedFlagsAreOneLineUsageErrors) {
  ScratchDir dir("annotation-errors");
  test::write_file(dir / "coco.json", R"({"images": [{"id": 1, "file_name": "a.png"}],
    "annotations": [{"id": 1, "image_id": 1, "bbox": [1, 2, 3], "category_id": 1}],
    "categories": [{"id": 1, "name": "x"}]})");
  test::write_file(dir / "orphan.json", R"({"images": [{"id": 1, "file_name": "a.png"}],
    "annotations": [{"id": 1, "image_id": 9, "bbox": [1, 2, 3, 4], "category_id": 1}],
    "categories": [{"id": 1, "name": "x"}]})");
  fs::create_directories(dir.path() / "voc");
  test::write_file(dir / "voc/bad.xml",
                   "<annotation><filename>a.png</filename><object><name>x</name><bndbox><xmin>1</xmin>"
                   "<ymin>1</ymin><ymax>5</ymax></bndbox></object></annotation>");
  test::write_file(dir / "broken.xml", "<annotation><filename>a.png</filename><object>");
  fs::create_directories(dir.path() / "yolo");
  test::write_file(dir / "yolo/chelsea.txt", "0 0.5 0.5 0.1 0.1\n0 0.5 0.5 0.1\n");
  fs::create_directories(dir.path() / "yolo2");
  test::write_file(dir / "yolo2/chelsea.txt", "7 0.5 0.5 0.1 0.1\n");
  test::write_file(dir / "names.txt", "a\nb\n");
  fs::create_directories(dir.path() / "empty_labels");
  test::write_file(dir / "empty_labels/other.txt", "0 0.5 0.5 0.1 0.1\n");
  const std::string chelsea = " -i " + source("samples/photos/chelsea.png");
  const struct {
    std::string args;
    std::vector<std::string> needles;
  } cases[] = {
      {"--rois coco.json", {"coco.json", "/annotations/0/bbox", "4"}},
      {"--rois orphan.json", {"orphan.json", "/annotations/0/image_id", "no image has id 9"}},
      {"--rois voc", {"bad.xml", "<annotation/object/bndbox>", "<xmax> is missing"}},
      {"--rois broken.xml", {"broken.xml", "not well-formed XML"}},
      {"--rois yolo" + chelsea, {"chelsea.txt: line 2", "expected 5 fields"}},
      {"--rois yolo2 --names names.txt" + chelsea, {"line 1", "class 7 has no name in names.txt"}},
      {"--rois yolo", {"YOLO labels name no images", "-i"}},
      {"--rois missing.txt" + chelsea, {"missing.txt: no such YOLO label file"}},
      {"--rois empty_labels -i " + source("samples/photos/coffee.png"), {"none of the 1 images has a label file"}},
      {"--rois " + source("samples/rois/chelsea_eyes.json") + " --names names.txt" + chelsea, {"only for YOLO"}},
      {"--rois " + source("samples/annotations/coco.json") + chelsea, {"name their own images; drop -i"}},
      {"--rois " + source("samples/annotations/coco.json") + " --names names.txt", {"--names", "only for YOLO"}},
      {"--rois " + source("samples/rois/dataset.json") + " --image-root x", {"--image-root", "only for COCO"}},
      {"--rois " + source("samples/rois/dataset.json") + " --manifest m.txt", {"--manifest m.txt", ".jsonl"}},
  };
  for (const auto& c : cases) {
    const auto r = run_rsz(dir, "roi-align " + c.args + " --output-size 8x8 -o crops/ -q");
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("rsz: ", 0), 0u) << c.args << "\n" << r.err;
    for (const auto& needle : c.needles) EXPECT_NE(r.err.find(needle), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "crops")) << c.args;
  }
}

TEST(Annotations, TheManifestCannotReplaceAnInput) {
  ScratchDir dir("annotation-manifest");
  fs::create_directories(dir.path() / "yolo");
  test::write_file(dir / "yolo/chelsea.txt", "0 0.5 0.5 0.1 0.1\n");
  test::write_file(dir / "names.csv", "keep me\n");
  const auto r = run_rsz(dir, "roi-align -i " + source("samples/photos/chelsea.png") +
                                  " --rois yolo --names names.csv --output-size 8x8 -o crops/ -q --manifest names.csv");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("would overwrite an input"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_text(dir.path() / "names.csv"), "keep me\n");
  EXPECT_FALSE(fs::exists(dir.path() / "crops"));
}

TEST(RoisCheck, BoxesThatCropNothingAreReportedOncePerImage) {
  ScratchDir dir("rois-check");
  // chelsea.png is 451 x 300: one good box, one inverted (x2 < x1), one empty, two outside.
  test::write_file(dir / "boxes.json", R"({"images": [{"path": ")" + source("samples/photos/chelsea.png") +
                                           R"(", "rois": [
    {"box": [10, 10, 50, 50], "id": "good"}, {"box": [50, 10, 10, 50], "id": "flipped"},
    {"box": [20, 20, 20, 40], "id": "flat"}, {"box": [460, 10, 500, 50], "id": "right"},
    {"box": [-40, -40, -1, -1], "id": "above"}]}]})");
  const std::string base = "roi-align --rois boxes.json --output-size 8x8 -o 'crops/{id}.png' -q";
  auto r = run_rsz(dir, base);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const char* needle : {"chelsea.png: 4 of 5 boxes crop nothing of this 451x300 image",
                             "1 inverted (x2 < x1 or y2 < y1): flipped", "1 empty (zero width or height): flat",
                             "2 outside the image: right, above", "--rois-check off"}) {
    EXPECT_NE(r.err.find(needle), std::string::npos) << needle << "\n" << r.err;
  }
  EXPECT_EQ(list_files(dir.path() / "crops").size(), 5u);  // legal ROI_ALIGN: still written
  // --json carries the warning as a record; off is silent; error refuses the run before anything is written.
  fs::remove_all(dir.path() / "crops");
  r = run_rsz(dir, base + " --json");
  EXPECT_NE(r.out.find("\"warning\":\""), std::string::npos) << r.out;
  fs::remove_all(dir.path() / "crops");
  r = run_rsz(dir, base + " --rois-check off");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  fs::remove_all(dir.path() / "crops");
  r = run_rsz(dir, base + " --rois-check error");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("4 of 5 boxes"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "crops"));
  // Tensor inputs keep DirectML's semantics without a word.
  r = run_rsz(dir, "resample -i " + source("samples/photos/chelsea.png") + " -o map.npy --scale 0.5 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  test::write_file(dir / "plain.json", R"({"rois": [[50, 10, 10, 50], [-40, -40, -1, -1]]})");
  r = run_rsz(dir, "roi-align -i map.npy --rois plain.json --output-size 4x4 -o pooled.npy -q --rois-check error");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// A COCO box of negative width refuses the file, naming the annotation's id, unless --rois-check skip: then it is
// left out and counted like an empty one, and the other boxes are cropped.
TEST(RoisCheck, SkipLeavesOutMalformedCocoBoxesAndTheErrorNamesTheAnnotation) {
  ScratchDir dir("rois-malformed");
  fs::create_directories(dir.path() / "img");
  fs::copy_file(source("samples/photos/chelsea.png"), dir.path() / "img/chelsea.png");
  test::write_file(dir / "img/coco.json", R"({"images": [{"id": 1, "file_name": "chelsea.png"}],
    "annotations": [{"id": 41, "image_id": 1, "bbox": [10, 10, 40, 40], "category_id": 1},
                    {"id": 42, "image_id": 1, "bbox": [60, 10, -5, 40], "category_id": 1},
                    {"id": 43, "image_id": 1, "bbox": [100, 10, 30, 30], "category_id": 1}],
    "categories": [{"id": 1, "name": "cat"}]})");
  const std::string base = "roi-align --rois img/coco.json --output-size 8x8 -o 'crops/{id}.png'";
  auto r = run_rsz(dir, base);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("annotation 42: a box of negative width or height"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "crops"));
  r = run_rsz(dir, base + " --rois-check skip --manifest m.jsonl");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "crops"), (std::vector<std::string>{"41.png", "43.png"}));
  EXPECT_NE(r.err.find("skipped 1 box: 1 malformed (negative width or height)"), std::string::npos) << r.err;
  EXPECT_NE(test::read_file(dir / "m.jsonl").find("\"skipped\":\"malformed\""), std::string::npos);
}

// A file name that is not UTF-8 (Latin-1 'é'): the manifest's row still names the crop and its source, as Python reads
// them back (json.loads, then open() or os.fsencode(): surrogateescape), and the CSV form holds the raw bytes.
TEST(Annotations, ManifestRowsNameFilesWhoseNamesAreNotUtf8) {
  ScratchDir dir("manifest-latin1");
  const std::string name = "ch\xe9lsea";
  fs::copy_file(std::string(RSZ_SOURCE_DIR) + "/samples/photos/chelsea.png", dir / (name + ".png"));
  test::write_file(dir / (name + ".txt"), "0 0.5 0.5 0.2 0.2\n");
  auto r = run_rsz(dir, "roi-align -i '" + name + ".png' --rois . -o 'c/{stem}_{index}.png' --output-size 8x8 -q "
                        "--manifest m.jsonl");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / ("c/" + name + "_0.png")));
  const std::string line = test::read_text(dir / "m.jsonl");
  EXPECT_NE(line.find("\"crop\":\"c/ch\\udce9lsea_0.png\",\"source\":\"ch\\udce9lsea.png\""), std::string::npos) << line;
  r = test::run_shell(dir, "/usr/bin/python3 -c 'import json, os; r = json.loads(open(\"m.jsonl\").readline()); "
                           "print(os.path.exists(r[\"crop\"]), os.path.exists(r[\"source\"]))'");
  EXPECT_EQ(r.out, "True True\n") << r.err;
  r = run_rsz(dir, "roi-align -i '" + name + ".png' --rois . -o 'd/{stem}_{index}.png' --output-size 8x8 -q "
                   "--manifest m.csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(test::read_file(dir / "m.csv").find("d/" + name + "_0.png," + name + ".png,"), std::string::npos);
}

// A COCO file is held to the memory budget by what its parse builds, not by a multiple of its size: 4,000
// annotations with 26-point polygons (1.9 MB, mostly numbers rsz never turns into boxes, checked but not kept) plan
// under 40M, where a rule of 40 times the text refused them, and under 8M; under 4M the parse stops, naming the file,
// where it was and --max-memory.
// A file of many boxes is refused for the boxes it would plan (about 1 KiB each).
TEST(Annotations, CocoFilesAreHeldToTheBudgetByWhatTheyBuild) {
  ScratchDir dir("coco-budget");
  std::string text = "{\"images\": [{\"id\": 1, \"file_name\": \"chelsea.png\", \"width\": 451, \"height\": 300}], "
                     "\"categories\": [{\"id\": 1, \"name\": \"cat\"}], \"annotations\": [";
  for (int i = 0; i < 4000; ++i) {
    text += std::string(i ? "," : "") + "{\"id\": " + std::to_string(i + 1) +
            ", \"image_id\": 1, \"category_id\": 1, \"iscrowd\": 0, \"area\": 100.5, \"segmentation\": [[";
    for (int k = 0; k < 52; ++k) text += std::string(k ? "," : "") + std::to_string(100 + (i * 7 + k * 13) % 300) + ".25";
    text += "]], \"bbox\": [" + std::to_string(i % 400) + ", 10, 40, 30]}";
  }
  text += "]}";
  test::write_file(dir / "coco.json", text);
  fs::copy_file(std::string(RSZ_SOURCE_DIR) + "/samples/photos/chelsea.png", dir / "chelsea.png");
  ASSERT_GT(text.size(), std::size_t{1} << 20);
  auto r = run_rsz(dir, "roi-align --rois coco.json --output-size 8x8 -o 'c/{id}.png' --dry-run --max-memory 40M");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("c/4000.png"), std::string::npos);
  // The segmentations (about two thirds of the text) are checked as JSON but not kept: 8M holds what is built.
  r = run_rsz(dir, "roi-align --rois coco.json --output-size 8x8 -o 'c/{id}.png' --dry-run --max-memory 8M");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("c/4000.png"), std::string::npos);
  r = run_rsz(dir, "roi-align --rois coco.json --output-size 8x8 -o 'c/{id}.png' --dry-run --max-memory 4M");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("rsz: coco.json: this JSON file needs more than the memory budget of 4.00 MiB once parsed "
                       "(its text and the values read so far, up to /annotations/"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "c"));
  std::string many = "{\"images\": [{\"path\": \"chelsea.png\", \"rois\": [";
  for (int i = 0; i < 30000; ++i) many += std::string(i ? "," : "") + "{\"box\": [0, 0, 8, 8]}";
  many += "]}]}";
  test::write_file(dir / "many.json", many);
  r = run_rsz(dir, "roi-align --rois many.json --output-size 2x2 -o 'm/{index}.png' --dry-run --max-memory 20M");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("many.json: its 30000 boxes need about 29.3 MiB to plan (about 1 KiB each), over the memory "
                       "budget of 20.0 MiB (--max-memory)"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace rsz
