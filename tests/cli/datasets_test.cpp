// roi-align on datasets without silent bad data, end to end: image sizes stated by COCO / VOC checked against the
// decoded image (--size-mismatch), boxes that crop nothing left out and listed (--rois-check skip), crowd and
// difficult annotations filtered (--skip-crowd, --skip-difficult), and YOLO class names from Ultralytics' data.yaml.
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
const std::string kPhotos = source("samples/photos");

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// chelsea.png is 451 x 300 and coffee.png 600 x 400; this file says coffee.png is 300 x 200.
const char* const kCocoHalfCoffee = R"({"images": [
    {"id": 1, "file_name": "chelsea.png", "width": 451, "height": 300},
    {"id": 12, "file_name": "coffee.png", "width": 300, "height": 200}],
  "annotations": [{"id": 1, "image_id": 1, "bbox": [10, 20, 30, 40], "category_id": 1},
                  {"id": 5, "image_id": 12, "bbox": [10, 20, 30, 40], "category_id": 1}],
  "categories": [{"id": 1, "name": "thing"}]})";

TEST(DatasetSizes, AnImageOfAnotherSizeThanCocoStatesFailsAloneOrHasItsBoxesScaled) {
  ScratchDir dir("dataset-size-coco");
  test::write_file(dir / "coco.json", kCocoHalfCoffee);
  const std::string base = "roi-align --rois coco.json --image-root " + kPhotos + " --output-size 8x8";
  auto r = run_rsz(dir, base + " -o 'a/{id}.png' --manifest a.csv");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(lines_of(r.err),
            (std::vector<std::string>{
                "rsz: coco.json: image 12 (coffee.png): the annotation says 300x200, the image is 600x400; the boxes "
                "may belong to another image, or to this one before it was resized: --size-mismatch scale scales "
                "them to the image",
                "rsz: 1 of 2 inputs failed; 1 file written"}));
  EXPECT_EQ(list_files(dir.path() / "a"), std::vector<std::string>{"1.png"});  // the other image's crops are written
  EXPECT_EQ(lines_of(test::read_text(dir.path() / "a.csv")),
            (std::vector<std::string>{"crop,source,x1,y1,x2,y2,label,id",
                                      "a/1.png," + kPhotos + "/chelsea.png,10,20,40,60,thing,1"}));
  // --dry-run finds it too (from the header: nothing is decoded).
  r = run_rsz(dir, base + " -o 'b/{id}.png' --dry-run");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "the annotation says 300x200, the image is 600x400")) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "b"));

  // scale: x by 600 / 300, y by 400 / 200; the summary says so.
  r = run_rsz(dir, base + " -o 'c/{id}.png' --manifest c.jsonl --size-mismatch scale");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "rsz: wrote 2 files in ")) << r.err;
  EXPECT_TRUE(contains(r.err, "; scaled the boxes of 1 image to their size (--size-mismatch scale)\n")) << r.err;
  const auto lines = lines_of(test::read_text(dir.path() / "c.jsonl"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(lines[0])["box"], nlohmann::json({10, 20, 40, 60}));
  EXPECT_EQ(nlohmann::json::parse(lines[1])["box"], nlohmann::json({20, 40, 80, 120}));
  // The scaled crop is the crop of the scaled box given directly.
  test::write_file(dir / "direct.json", R"({"rois": [[20, 40, 80, 120]]})");
  r = run_rsz(dir, "roi-align -i " + kPhotos + "/coffee.png --rois direct.json --output-size 8x8 -o direct.png -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::read_text(dir.path() / "c/5.png"), test::read_text(dir.path() / "direct.png"));
}

TEST(DatasetSizes, VocSizeIsCheckedAndScaledLikeCoco) {
  ScratchDir dir("dataset-size-voc");
  fs::create_directories(dir.path() / "voc");
  test::write_file(dir / "voc/chelsea.xml",
                   "<annotation><filename>chelsea.png</filename><size><width>451</width><height>300</height>"
                   "<depth>3</depth></size><object><name>eye</name><bndbox><xmin>11</xmin><ymin>21</ymin>"
                   "<xmax>40</xmax><ymax>60</ymax></bndbox></object></annotation>");
  test::write_file(dir / "voc/coffee.xml",
                   "<annotation><filename>coffee.png</filename><size><width>1200</width><height>800</height>"
                   "</size><object><name>cup</name><bndbox><xmin>11</xmin><ymin>21</ymin><xmax>40</xmax>"
                   "<ymax>60</ymax></bndbox></object></annotation>");
  const std::string base = "roi-align --rois voc --image-root " + kPhotos + " --output-size 8x8";
  auto r = run_rsz(dir, base + " -o 'a/{id}.png'");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "rsz: voc/coffee.xml (coffee.png): the annotation says 1200x800, the image is 600x400; "))
      << r.err;
  EXPECT_EQ(list_files(dir.path() / "a"), std::vector<std::string>{"chelsea-0.png"});
  r = run_rsz(dir, base + " -o 'b/{id}.png' --size-mismatch scale --manifest b.csv -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto csv = lines_of(test::read_text(dir.path() / "b.csv"));
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[2], "b/coffee-0.png," + kPhotos + "/coffee.png,5,10,20,30,cup,coffee-0");  // [10, 20, 40, 60] / 2
}

// A phone photo stored 640 x 427 with EXIF orientation 6 is 427 x 640 upright; boxes drawn on the stored pixels are
// named as such, with the flag that crops those.
TEST(DatasetSizes, AnExifRotatedImageIsNamedAndNoExifCropsTheStoredPixels) {
  ScratchDir dir("dataset-size-exif");
  test::write_file(dir / "rotated.jpg",
                   test::with_exif_orientation(test::read_file(source("samples/photos/rocket.jpg")), 6));
  test::write_file(dir / "coco.json", R"({"images": [{"id": 1, "file_name": "rotated.jpg", "width": 640,
    "height": 427}], "annotations": [{"id": 3, "image_id": 1, "bbox": [500, 20, 100, 40], "category_id": 1}],
    "categories": [{"id": 1, "name": "thing"}]})");
  auto r = run_rsz(dir, "roi-align --rois coco.json --output-size 8x8 -o 'a/{id}.png'");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(lines_of(r.err).at(0),
            "rsz: coco.json: image 1 (rotated.jpg): the annotation says 640x427, the image is 427x640 after its EXIF "
            "orientation; the boxes were likely drawn on the stored pixels: add --no-exif to crop those "
            "(--size-mismatch scale would stretch the boxes, not turn them)");
  EXPECT_FALSE(fs::exists(dir.path() / "a"));
  r = run_rsz(dir, "roi-align --rois coco.json --output-size 8x8 -o 'b/{id}.png' --no-exif -q");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "b"), std::vector<std::string>{"3.png"});
}

TEST(DatasetSizes, ASizeOfZeroOrNoneIsNotChecked) {
  ScratchDir dir("dataset-size-none");
  test::write_file(dir / "coco.json", R"({"images": [{"id": 1, "file_name": "chelsea.png", "width": 0, "height": 0},
    {"id": 2, "file_name": "coffee.png"}, {"id": 3, "file_name": "camera.png", "width": null, "height": 9}],
    "annotations": [{"id": 1, "image_id": 1, "bbox": [1, 2, 3, 4]}, {"id": 2, "image_id": 2, "bbox": [1, 2, 3, 4]},
                    {"id": 3, "image_id": 3, "bbox": [1, 2, 3, 4]}]})");
  const auto r = run_rsz(dir, "roi-align --rois coco.json --image-root " + kPhotos + " --output-size 8x8 -o c/ -q");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "c").size(), 3u);
}

TEST(RoisCheckSkip, BoxesThatCropNothingAreLeftOutCountedAndListed) {
  ScratchDir dir("rois-check-skip");
  // chelsea.png is 451 x 300: boxes 1 and 5 crop something; 2 and 4 are outside, 3 is empty. nowhere.png (100 x 100
  // by the file) has only a box outside it: it is not read at all.
  test::write_file(dir / "coco.json", R"({"images": [
      {"id": 1, "file_name": "chelsea.png", "width": 451, "height": 300},
      {"id": 2, "file_name": "nowhere.png", "width": 100, "height": 100}],
    "annotations": [{"id": 1, "image_id": 1, "bbox": [10, 20, 30, 40], "category_id": 1},
                    {"id": 2, "image_id": 1, "bbox": [500, 20, 30, 40], "category_id": 1},
                    {"id": 3, "image_id": 1, "bbox": [10, 20, 0, 40], "category_id": 1},
                    {"id": 4, "image_id": 1, "bbox": [-50, -50, 10, 10], "category_id": 1},
                    {"id": 5, "image_id": 1, "bbox": [100, 100, 20, 20], "category_id": 1},
                    {"id": 9, "image_id": 2, "bbox": [200, 200, 10, 10], "category_id": 1}],
    "categories": [{"id": 1, "name": "thing"}]})");
  const std::string base =
      "roi-align --rois coco.json --image-root " + kPhotos + " --output-size 8x8 --rois-check skip";
  auto r = run_rsz(dir, base + " -o 'crops/{index}_{id}.png' --manifest m.csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // no warning: the summary says it
  EXPECT_TRUE(contains(r.err, "rsz: wrote 2 files in ")) << r.err;
  EXPECT_TRUE(contains(r.err, " s; skipped 4 boxes: 3 outside the image, 1 empty\n")) << r.err;
  // The boxes left out do not renumber the others' {index}.
  EXPECT_EQ(list_files(dir.path() / "crops"), (std::vector<std::string>{"0_1.png", "4_5.png"}));
  const std::string chelsea = kPhotos + "/chelsea.png";
  EXPECT_EQ(lines_of(test::read_text(dir.path() / "m.csv")),
            (std::vector<std::string>{"crop,source,x1,y1,x2,y2,label,id,skipped",
                                      "crops/0_1.png," + chelsea + ",10,20,40,60,thing,1,",
                                      "crops/4_5.png," + chelsea + ",100,100,120,120,thing,5,",
                                      "," + chelsea + ",500,20,530,60,thing,2,outside",
                                      "," + chelsea + ",10,20,10,60,thing,3,empty",
                                      "," + chelsea + ",-50,-50,-40,-40,thing,4,outside",
                                      "," + kPhotos + "/nowhere.png,200,200,210,210,thing,9,outside"}));
  // JSON Lines: a left-out box has "skipped" and no "crop".
  r = run_rsz(dir, base + " -o 'crops2/{id}.png' --manifest m.jsonl -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto jsonl = lines_of(test::read_text(dir.path() / "m.jsonl"));
  ASSERT_EQ(jsonl.size(), 6u);
  EXPECT_EQ(nlohmann::json::parse(jsonl[0]),
            nlohmann::json::parse(R"({"crop": "crops2/1.png", "source": ")" + chelsea +
                                  R"(", "box": [10, 20, 40, 60], "label": "thing", "id": "1"})"));
  EXPECT_EQ(nlohmann::json::parse(jsonl[3]),
            nlohmann::json::parse(R"({"source": ")" + chelsea +
                                  R"(", "box": [10, 20, 10, 60], "label": "thing", "id": "3", "skipped": "empty"})"));
  // rsz's own ROI files too (the image's size then comes from its header), an inverted box included.
  test::write_file(dir / "boxes.json", R"({"rois": [[10, 10, 50, 50], [50, 10, 10, 50], [460, 10, 500, 50]]})");
  r = run_rsz(dir, "roi-align -i " + chelsea + " --rois boxes.json --output-size 8x8 -o plain/ --rois-check skip");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "; skipped 2 boxes: 1 outside the image, 1 inverted\n")) << r.err;
  EXPECT_EQ(list_files(dir.path() / "plain"), std::vector<std::string>{"chelsea_0.png"});
}

TEST(RoisCheckSkip, WhereBoxesCannotBeLeftOutItIsAUsageError) {
  ScratchDir dir("rois-check-skip-refused");
  test::write_file(dir / "boxes.json", R"({"rois": [[10, 10, 50, 50], [460, 10, 500, 50]]})");
  const std::string chelsea = " -i " + kPhotos + "/chelsea.png --output-size 8x8 --rois-check skip";
  // One .npy of all crops would shift its rows.
  auto r = run_rsz(dir, "roi-align --rois boxes.json -o crops.npy" + chelsea);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "crops.npy: --rois-check skip leaves out 1 of the boxes of")) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "crops.npy"));
  // .npy ROIs are one tensor.
  r = run_rsz(dir, "resample -i " + kPhotos + "/chelsea.png -o map.npy --scale 0.5 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, "roi-align --rois map.npy -o out/" + chelsea);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "--rois-check skip leaves out boxes of JSON ROI files and dataset annotations")) << r.err;
}

TEST(AnnotationFilters, CrowdAndDifficultAnnotationsAreLeftOutOnRequest) {
  ScratchDir dir("annotation-filters");
  test::write_file(dir / "coco.json", R"({"images": [{"id": 1, "file_name": "chelsea.png"}],
    "annotations": [{"id": 1, "image_id": 1, "bbox": [10, 20, 30, 40], "category_id": 1, "iscrowd": 0},
                    {"id": 2, "image_id": 1, "bbox": [50, 60, 70, 80], "category_id": 1, "iscrowd": 1},
                    {"id": 3, "image_id": 1, "bbox": [5, 6, 7, 8], "category_id": 1}],
    "categories": [{"id": 1, "name": "person"}]})");
  fs::create_directories(dir.path() / "voc");
  test::write_file(dir / "voc/chelsea.xml",
                   "<annotation><filename>chelsea.png</filename>"
                   "<object><name>eye</name><difficult>1</difficult><bndbox><xmin>11</xmin><ymin>21</ymin>"
                   "<xmax>40</xmax><ymax>60</ymax></bndbox></object>"
                   "<object><name>nose</name><difficult>0</difficult><bndbox><xmin>51</xmin><ymin>61</ymin>"
                   "<xmax>120</xmax><ymax>140</ymax></bndbox></object></annotation>");
  const std::string common = " --image-root " + kPhotos + " --output-size 8x8";
  auto r = run_rsz(dir, "roi-align --rois coco.json -o 'all/{id}.png' -q" + common);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "all").size(), 3u);  // without the flag, crowd boxes are boxes
  r = run_rsz(dir, "roi-align --rois coco.json -o 'coco/{id}.png' --manifest coco.csv --skip-crowd" + common);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "; skipped 1 box: 1 crowd (iscrowd)\n")) << r.err;
  EXPECT_EQ(list_files(dir.path() / "coco"), (std::vector<std::string>{"1.png", "3.png"}));
  EXPECT_EQ(lines_of(test::read_text(dir.path() / "coco.csv")).back(),
            "," + kPhotos + "/chelsea.png,50,60,120,140,person,2,crowd");
  r = run_rsz(dir, "roi-align --rois voc -o 'vocs/{id}.png' --manifest voc.jsonl --skip-difficult" + common);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "; skipped 1 box: 1 difficult\n")) << r.err;
  EXPECT_EQ(list_files(dir.path() / "vocs"), std::vector<std::string>{"chelsea-1.png"});  // ids keep their numbers
  const auto voc = lines_of(test::read_text(dir.path() / "voc.jsonl"));
  ASSERT_EQ(voc.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(voc[1])["skipped"], "difficult");
  EXPECT_EQ(nlohmann::json::parse(voc[1])["id"], "chelsea-0");
  EXPECT_EQ(nlohmann::json::parse(voc[1])["box"], nlohmann::json({10, 20, 40, 60}));

  // Each filter with a format that has no such field; --size-mismatch scale where no size is stated.
  fs::create_directories(dir.path() / "yolo");
  test::write_file(dir / "yolo/chelsea.txt", "0 0.5 0.5 0.1 0.1\n");
  const std::string yolo = "--rois yolo -i " + kPhotos + "/chelsea.png";
  const struct {
    std::string args;
    std::string needle;
  } cases[] = {
      {"--rois voc --skip-crowd", "--skip-crowd: only for COCO annotations (their \"iscrowd\"); voc is voc"},
      {yolo + " --skip-crowd", "--skip-crowd: only for COCO annotations"},
      {"--rois coco.json --skip-difficult",
       "--skip-difficult: only for Pascal VOC annotations (their <difficult>); coco.json is coco"},
      {yolo + " --skip-difficult", "--skip-difficult: only for Pascal VOC annotations"},
      {yolo + " --size-mismatch scale", "--size-mismatch scale: only for COCO and Pascal VOC annotations"},
  };
  for (const auto& c : cases) {
    r = run_rsz(dir, "roi-align " + c.args + " --output-size 8x8 -o refused/ -q");
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_TRUE(contains(r.err, c.needle)) << c.args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "refused"));
  }
}

// The data.yaml of an Ultralytics dataset, as its tools write it: names as a block list, or as a map.
const char* const kDataYamlList = R"(# Ultralytics YOLO dataset
path: ../datasets/pets  # dataset root dir
train: images/train
val: images/val
test:  # optional

nc: 3
names:
  - cat
  - dog
  - person
)";
const char* const kDataYamlMap = R"(path: ../datasets/pets
train: images/train
val: images/val

# Classes
names:
  0: cat
  2: person
  7: traffic light
)";

TEST(YoloNames, UltralyticsDataYamlGivesTheClassNames) {
  ScratchDir dir("yolo-yaml");
  fs::create_directories(dir.path() / "labels");
  test::write_file(dir / "labels/chelsea.txt", "0 0.5 0.5 0.2 0.2\n2 0.3 0.3 0.1 0.1\n");
  test::write_file(dir / "data.yaml", kDataYamlList);
  test::write_file(dir / "map.yml", kDataYamlMap);
  test::write_file(dir / "data_copy.txt", kDataYamlList);  // read line by line it gave "path_ .." labels
  test::write_file(dir / "flow.yaml", "names: [cat, dog, person]\n");
  for (const char* names : {"data.yaml", "map.yml", "data_copy.txt", "flow.yaml"}) {
    const auto r = run_rsz(dir, "roi-align -i " + kPhotos + "/chelsea.png --rois labels --names " + names +
                                    " --output-size 8x8 -o 'out_" + names + "/{label}/{id}.png' -q");
    ASSERT_EQ(r.status, 0) << names << "\n" << r.err;
    EXPECT_EQ(list_files(dir.path() / ("out_" + std::string(names))),
              (std::vector<std::string>{"cat/chelsea-0.png", "person/chelsea-1.png"}))
        << names;
  }
  // A class the map leaves out has no name.
  test::write_file(dir / "labels/chelsea.txt", "1 0.5 0.5 0.2 0.2\n");
  auto r = run_rsz(dir, "roi-align -i " + kPhotos + "/chelsea.png --rois labels --names map.yml --output-size 8x8 "
                        "-o out/ -q");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "labels/chelsea.txt: line 1: class 1 has no name in map.yml (3 names)")) << r.err;
  // Plain text files keep working, one name per line.
  test::write_file(dir / "labels/chelsea.txt", "1 0.5 0.5 0.2 0.2\n");
  test::write_file(dir / "classes.txt", "cat\ndog\n");
  r = run_rsz(dir, "roi-align -i " + kPhotos + "/chelsea.png --rois labels --names classes.txt --output-size 8x8 "
                   "-o 'txt/{label}/{id}.png' -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "txt"), std::vector<std::string>{"dog/chelsea-0.png"});
}

TEST(YoloNames, YamlWithoutUsableNamesIsOneUsageError) {
  ScratchDir dir("yolo-yaml-errors");
  fs::create_directories(dir.path() / "labels");
  test::write_file(dir / "labels/chelsea.txt", "0 0.5 0.5 0.2 0.2\n");
  const struct {
    const char* file;
    const char* text;
    std::string needle;
  } cases[] = {
      {"no_names.yaml", "path: .\ntrain: images/train\nnc: 2\n",
       "no_names.yaml: no \"names\" key; expected Ultralytics' dataset YAML with \"names:\" a list ([person, car]) or "
       "a map of class numbers ({0: person, 1: car})"},
      {"nested.yaml", "names:\n  - cat\n  - [a, b]\n",
       "nested.yaml: line 3: name 1 is a list; names are strings (quote one that YAML would read otherwise"},
      {"number.yaml", "names: {0: cat, 1: 42}\n",
       "number.yaml: line 1: the name of class 1 is \"42\", which YAML reads as a number"},
      {"boolean.yaml", "names:\n  - cat\n  - no\n",
       "boolean.yaml: line 3: name 1 is \"no\", which YAML reads as a boolean"},
      {"empty_name.yaml", "names:\n  - cat\n  -\n", "empty_name.yaml: name 1 is empty (null)"},
      {"broken.yaml", "names: [cat, dog\n", "broken.yaml: line 2: not valid YAML ("},
      {"scalar.yaml", "names: cat\n", "scalar.yaml: line 1: \"names\" is \"cat\"; expected"},
      {"key.yaml", "names:\n  0: cat\n  one: dog\n",
       "key.yaml: line 3: the key \"one\" of \"names\" is not a class number"},
      {"twice.yaml", "names:\n  0: cat\n  0: dog\n", "twice.yaml: line 3: class 0 is named twice (first at line 2)"},
      {"nc.yaml", "nc: 3\nnames: [cat, dog]\n", "nc.yaml: line 1: \"nc\" is 3, but \"names\" has 2 classes"},
      {"list.yaml", "- cat\n- dog\n", "list.yaml: the YAML is a list, not a mapping"},
      {"names_twice.yaml", "names: [cat, dog]\nnc: 2\nnames: [dog, cat]\n",
       "names_twice.yaml: line 3: \"names\" is given twice (first at line 1); Ultralytics would take the last"},
      {"float.yaml", "names: [cat, 1.5e+3]\n", "float.yaml: line 1: name 1 is \"1.5e+3\", which YAML reads as a number"},
      {"on.yaml", "names: [cat, On]\n", "on.yaml: line 1: name 1 is \"On\", which YAML reads as a boolean"},
  };
  for (const auto& c : cases) {
    test::write_file(dir / c.file, c.text);
    const auto r = run_rsz(dir, "roi-align -i " + kPhotos + "/chelsea.png --rois labels --names " + c.file +
                                    " --output-size 8x8 -o out/ -q");
    EXPECT_EQ(r.status, 2) << c.file << "\n" << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_TRUE(contains(r.err, "rsz: " + c.needle)) << c.file << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "out"));
  }
}

// Names as PyYAML (Ultralytics' reader) reads them: y, n, Y, N and 1e3 are strings there (YAML 1.1 booleans are
// yes/no/on/off/true/false; a float has a '.'), so they are names here too, and crops are labelled by them.
TEST(YoloNames, ScalarsPyYamlReadsAsStringsAreNames) {
  ScratchDir dir("yolo-yaml-strings");
  fs::create_directories(dir.path() / "labels");
  test::write_file(dir / "labels/chelsea.txt", "0 0.3 0.3 0.2 0.2\n1 0.5 0.5 0.2 0.2\n2 0.7 0.7 0.2 0.2\n"
                                               "3 0.4 0.6 0.2 0.2\n4 0.6 0.4 0.2 0.2\n");
  test::write_file(dir / "data.yaml", "names: [y, n, Y, N, 1e3]\n");
  const auto r = run_rsz(dir, "roi-align -i " + kPhotos + "/chelsea.png --rois labels --names data.yaml "
                              "--output-size 8x8 -o 'out/{label}/{index}.png' -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"),
            (std::vector<std::string>{"1e3/4.png", "N/3.png", "Y/2.png", "n/1.png", "y/0.png"}));
}

TEST(DatasetFlags, HelpDescribesThem) {
  ScratchDir dir("dataset-help");
  const auto r = run_rsz(dir, "roi-align --help");
  ASSERT_EQ(r.status, 0);
  for (const char* needle :
       {"--size-mismatch", "fail (default: that image fails, exit 1, the others", "scale (its boxes are scaled",
        "--skip-crowd", "\"iscrowd\": 1", "--skip-difficult", "<difficult>1</difficult>",
        "skip (no crop: counted in the summary, listed in the manifest", "Ultralytics' data.yaml"}) {
    EXPECT_TRUE(contains(r.out, needle)) << needle;
  }
}

// A batch file's roi_align step says what the flags say.
TEST(DatasetFlags, BatchStepsTakeTheKeys) {
  ScratchDir dir("dataset-batch");
  test::write_file(dir / "coco.json", R"({"images": [
      {"id": 1, "file_name": "chelsea.png", "width": 451, "height": 300},
      {"id": 12, "file_name": "coffee.png", "width": 300, "height": 200}],
    "annotations": [{"id": 1, "image_id": 1, "bbox": [10, 20, 30, 40], "category_id": 1, "iscrowd": 1},
                    {"id": 2, "image_id": 1, "bbox": [900, 20, 30, 40], "category_id": 1},
                    {"id": 5, "image_id": 12, "bbox": [10, 20, 30, 40], "category_id": 1}],
    "categories": [{"id": 1, "name": "thing"}]})");
  test::write_file(dir / "batch.json",
                   R"({"output_dir": "out", "steps": [{"op": "roi_align", "config": {"output_height": 8,
      "output_width": 8}, "rois": "coco.json", "image_root": ")" + kPhotos + R"(", "manifest": "m.jsonl",
      "rois_check": "skip", "skip_crowd": true, "size_mismatch": "scale", "output": "c/{id}.png"}]})");
  auto r = run_rsz(dir, "run batch.json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "; skipped 2 boxes: 1 outside the image, 1 crowd (iscrowd); scaled the boxes of 1 "
                              "image to their size (--size-mismatch scale)"))
      << r.err;
  EXPECT_EQ(list_files(dir.path() / "out/c"), std::vector<std::string>{"5.png"});
  EXPECT_EQ(lines_of(test::read_text(dir.path() / "out/m.jsonl")).size(), 3u);
  // The default is fail.
  test::write_file(dir / "fail.json",
                   R"({"output_dir": "out2", "steps": [{"op": "roi_align", "config": {"output_height": 8,
      "output_width": 8}, "rois": "coco.json", "image_root": ")" + kPhotos + R"(", "output": "c/{id}.png"}]})");
  r = run_rsz(dir, "run fail.json -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "coco.json: image 12 (coffee.png): the annotation says 300x200")) << r.err;
  // The keys belong to roi_align steps.
  test::write_file(dir / "wrong.json", R"({"inputs": ["x.png"], "steps": [{"op": "resample",
      "config": {"scales": [1, 1, 0.5, 0.5]}, "skip_crowd": true}]})");
  r = run_rsz(dir, "run wrong.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "\"skip_crowd\" is only for roi_align steps")) << r.err;
}

}  // namespace
}  // namespace rsz
