// io::read_annotations and io::write_manifest on small files: each format's conversion to [x1, y1, x2, y2], format
// detection, names made safe for file names, and the manifest's quoting and number formatting.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "rsz/error.h"
#include "rsz/io/annotations.h"
#include "rsz/io/image.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace rsz {
namespace {

class AnnotationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rsz-annotations-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(AnnotationsTest, CocoBoxesAreXYWidthHeight) {
  test::write_file(path("c.json"), R"({"images": [{"id": "img-1", "file_name": "sub/a.png"}],
    "annotations": [{"id": 5, "image_id": "img-1", "bbox": [0.5, 1.25, 10, 20.5], "category_id": 2},
                    {"id": 6, "image_id": "img-1", "bbox": [3, 4, 0, 0]}],
    "categories": [{"id": 2, "name": "a/b..c"}]})");
  EXPECT_EQ(io::detect_annotation_format(path("c.json")), io::AnnotationFormat::Coco);
  const io::RoiFile f = io::read_annotations(path("c.json"), io::AnnotationFormat::Coco, {});
  ASSERT_EQ(f.images.size(), 1u);
  EXPECT_EQ(f.images[0].path, path("sub/a.png"));
  ASSERT_EQ(f.images[0].rois.size(), 2u);
  EXPECT_EQ(f.images[0].rois[0].box, (std::array<float, 4>{0.5f, 1.25f, 10.5f, 21.75f}));
  EXPECT_EQ(f.images[0].rois[0].label, "a/b..c");  // the class name itself: file names make it safe
  EXPECT_EQ(f.images[0].rois[0].id, "5");
  EXPECT_EQ(f.images[0].rois[1].box, (std::array<float, 4>{3, 4, 3, 4}));
  EXPECT_EQ(f.images[0].rois[1].label, "");  // no category
  // An image root replaces the file's folder.
  io::AnnotationOptions options;
  options.image_root = "/data/images";
  EXPECT_EQ(io::read_annotations(path("c.json"), io::AnnotationFormat::Coco, options).images[0].path,
            "/data/images/sub/a.png");
}

// A COCO file of 150,000 annotations (the size class of real datasets: COCO train2017 has 860k) is read whole, each
// box where it belongs, and a defect deep in it is named by its path. (Its speed is bench/RESULTS_CLI.md's: the JSON
// reader builds the document in one pass, where nlohmann's callback parser rescanned the array at every annotation.)
TEST_F(AnnotationsTest, LargeCocoFilesAreReadWholeAndDefectsNamedByPath) {
  constexpr int kAnnotations = 150000;
  constexpr int kImages = 1000;
  std::string images;
  for (int i = 0; i < kImages; ++i) {
    images += (i ? "," : "") + std::string("{\"id\": ") + std::to_string(i) + ", \"file_name\": \"" +
              std::to_string(i) + ".png\"}";
  }
  const auto annotations = [&](const std::string& last_extra) {
    std::string text;
    for (int k = 0; k < kAnnotations; ++k) {
      text += (k ? "," : "") + std::string("{\"id\": ") + std::to_string(k) +
              ", \"image_id\": " + std::to_string(k % kImages) + ", \"bbox\": [" + std::to_string(k % 97) +
              ", 2, 3, 4], \"category_id\": 1" + (k + 1 == kAnnotations ? last_extra : "") + "}";
    }
    return text;
  };
  const std::string head = "{\"images\": [" + images + "], \"categories\": [{\"id\": 1, \"name\": \"x\"}], ";
  test::write_file(path("big.json"), head + "\"annotations\": [" + annotations("") + "]}");
  const io::RoiFile f = io::read_annotations(path("big.json"), io::AnnotationFormat::Coco, {});
  ASSERT_EQ(f.images.size(), static_cast<std::size_t>(kImages));
  std::size_t rois = 0;
  for (const auto& image : f.images) rois += image.rois.size();
  EXPECT_EQ(rois, static_cast<std::size_t>(kAnnotations));
  // Annotation 149999 is the last of image 999: x = 149999 % 97 = 37.
  EXPECT_EQ(f.images.back().rois.back().id, "149999");
  EXPECT_EQ(f.images.back().rois.back().box, (std::array<float, 4>{37, 2, 40, 6}));
  test::write_file(path("dup.json"), head + "\"annotations\": [" + annotations(", \"id\": 7") + "]}");
  EXPECT_EQ(test::error_message([&] { io::read_annotations(path("dup.json"), io::AnnotationFormat::Coco, {}); },
                                ErrorCode::InvalidArgument),
            path("dup.json") + ": duplicate key \"id\" at /annotations/149999/id; each key may appear once per object");
}

// Segmentations (polygons, RLE) are never read: parsed and checked as JSON, not kept. What follows them in their
// annotation is read as before, a repeated key after them is still refused, and so are broken or over-deep ones.
TEST_F(AnnotationsTest, CocoSegmentationsAreCheckedAsJsonButNotKept) {
  const std::string head = R"({"images": [{"id": 1, "file_name": "a.png", "segmentation": [1]}],
    "categories": [{"id": 1, "name": "x"}], "annotations": [)";
  test::write_file(path("c.json"), head + R"(
    {"id": 1, "image_id": 1, "segmentation": [[1, 2, 3.5, 4, 5, 6]], "bbox": [1, 2, 3, 4], "category_id": 1},
    {"segmentation": {"counts": [0, 5, {"deep": [[[]]]}], "size": [9, 9]}, "id": 2, "image_id": 1,
     "bbox": [5, 6, 1, 1]},
    {"id": 3, "image_id": 1, "segmentation": "text", "bbox": [0, 0, 2, 2], "iscrowd": 0}]})");
  const io::RoiFile f = io::read_annotations(path("c.json"), io::AnnotationFormat::Coco, {});
  ASSERT_EQ(f.images.size(), 1u);
  ASSERT_EQ(f.images[0].rois.size(), 3u);
  EXPECT_EQ(f.images[0].rois[0].box, (std::array<float, 4>{1, 2, 4, 6}));
  EXPECT_EQ(f.images[0].rois[0].label, "x");
  EXPECT_EQ(f.images[0].rois[1].id, "2");
  EXPECT_EQ(f.images[0].rois[1].box, (std::array<float, 4>{5, 6, 6, 7}));
  EXPECT_EQ(f.images[0].rois[2].box, (std::array<float, 4>{0, 0, 2, 2}));

  test::write_file(path("dup.json"), head + R"({"id": 1, "image_id": 1, "segmentation": [[1, 2]],
    "bbox": [1, 2, 3, 4], "id": 2}]})");
  EXPECT_EQ(test::error_message([&] { io::read_annotations(path("dup.json"), io::AnnotationFormat::Coco, {}); },
                                ErrorCode::InvalidArgument),
            path("dup.json") + ": duplicate key \"id\" at /annotations/0/id; each key may appear once per object");

  test::write_file(path("broken.json"), head + R"({"id": 1, "image_id": 1, "segmentation": [[1, 2,]],
    "bbox": [1, 2, 3, 4]}]})");
  const std::string broken = test::error_message(
      [&] { io::read_annotations(path("broken.json"), io::AnnotationFormat::Coco, {}); }, ErrorCode::InvalidArgument);
  EXPECT_NE(broken.find(path("broken.json") + ": invalid JSON at line 2, column 109"), std::string::npos) << broken;

  test::write_file(path("deep.json"), head + R"({"id": 1, "image_id": 1, "segmentation": )" + std::string(80, '[') +
                                          std::string(80, ']') + R"(, "bbox": [1, 2, 3, 4]}]})");
  const std::string deep = test::error_message(
      [&] { io::read_annotations(path("deep.json"), io::AnnotationFormat::Coco, {}); }, ErrorCode::InvalidArgument);
  EXPECT_EQ(deep, path("deep.json") + ": JSON nested deeper than 64 levels at /annotations/0/segmentation");
}

// A dataset file must not point rsz at any file of the machine: image names that leave the image root (absolute, or
// '..' above it) are refused, naming the entry, unless allowed.
TEST_F(AnnotationsTest, ImageNamesStayUnderTheRootUnlessAllowed) {
  for (const std::string name : {"../secret.png", "/etc/passwd", "a/../../b.png"}) {
    test::write_file(path("c.json"), R"({"images": [{"id": 1, "file_name": ")" + name +
                                         R"("}], "annotations": [{"id": 1, "image_id": 1, "bbox": [0, 0, 1, 1]}]})");
    EXPECT_EQ(test::error_message([&] { io::read_annotations(path("c.json"), io::AnnotationFormat::Coco, {}); },
                                  ErrorCode::InvalidArgument),
              path("c.json") + ": /images/0/file_name: the image name \"" + name + "\" leaves the image root " +
                  dir_.string() + " (absolute, or '..' above it); --allow-outside-root takes such names")
        << name;
    io::AnnotationOptions allowed;
    allowed.allow_outside_root = true;
    EXPECT_EQ(io::read_annotations(path("c.json"), io::AnnotationFormat::Coco, allowed).images.size(), 1u) << name;
  }
  // Inside the root, '..' that stays inside is fine.
  test::write_file(path("c.json"), R"({"images": [{"id": 1, "file_name": "a/../b.png"}], "annotations": []})");
  EXPECT_EQ(io::read_annotations(path("c.json"), io::AnnotationFormat::Coco, {}).images.size(), 1u);
  test::write_file(path("v.xml"), "<annotation><filename>../x.png</filename></annotation>");
  EXPECT_NE(test::error_message([&] { io::read_annotations(path("v.xml"), io::AnnotationFormat::Voc, {}); },
                                ErrorCode::InvalidArgument)
                .find("the image name \"../x.png\" leaves the image root"),
            std::string::npos);
}

TEST_F(AnnotationsTest, VocBoxesAreOneBasedInclusive) {
  test::write_file(path("v.xml"), "<?xml version=\"1.0\"?>\n<annotation><filename>b.jpg</filename>"
                                  "<object><name>dog</name><bndbox><xmin> 1 </xmin><ymin>2</ymin>"
                                  "<xmax>10</xmax><ymax>20.5</ymax></bndbox></object>"
                                  "<object><name>cat</name><bndbox><xmin>5</xmin><ymin>5</ymin>"
                                  "<xmax>5</xmax><ymax>5</ymax></bndbox></object></annotation>");
  EXPECT_EQ(io::detect_annotation_format(path("v.xml")), io::AnnotationFormat::Voc);
  EXPECT_EQ(io::detect_annotation_format(dir_.string()), io::AnnotationFormat::Voc);
  const io::RoiFile f = io::read_annotations(path("v.xml"), io::AnnotationFormat::Voc, {});
  ASSERT_EQ(f.images.size(), 1u);
  EXPECT_EQ(f.images[0].path, path("b.jpg"));
  ASSERT_EQ(f.images[0].rois.size(), 2u);
  EXPECT_EQ(f.images[0].rois[0].box, (std::array<float, 4>{0, 1, 10, 20.5f}));
  EXPECT_EQ(f.images[0].rois[0].id, "v-0");
  EXPECT_EQ(f.images[0].rois[1].box, (std::array<float, 4>{4, 4, 5, 5}));  // a one-pixel box
  EXPECT_EQ(f.images[0].rois[1].label, "cat");
}

TEST_F(AnnotationsTest, YoloBoxesAreScaledByTheImageSize) {
  // A 40 x 20 PNG (its header gives the size).
  fs::create_directories(path("labels"));
  test::write_file(path("labels/pic.txt"), "\n1 0.5 0.25 0.5 0.5\r\n\n0 0 0 0.25 1\n");
  io::Image image;
  image.width = 40;
  image.height = 20;
  image.channels = 1;
  image.data8.assign(800, 0);
  io::write_image(path("pic.png"), image);
  test::write_file(path("names.txt"), "zero\none\n\n");
  io::AnnotationOptions options;
  options.yolo_images = {path("pic.png"), path("other.png")};
  options.yolo_names = path("names.txt");
  EXPECT_EQ(io::detect_annotation_format(path("labels")), io::AnnotationFormat::Yolo);
  const io::RoiFile f = io::read_annotations(path("labels"), io::AnnotationFormat::Yolo, options);
  ASSERT_EQ(f.images.size(), 2u);
  ASSERT_EQ(f.images[0].rois.size(), 2u);  // empty lines skipped, CRLF accepted
  EXPECT_EQ(f.images[0].rois[0].box, (std::array<float, 4>{10, 0, 30, 10}));
  EXPECT_EQ(f.images[0].rois[0].label, "one");
  EXPECT_EQ(f.images[0].rois[0].id, "pic-0");
  EXPECT_EQ(f.images[0].rois[1].box, (std::array<float, 4>{-5, -10, 5, 10}));
  EXPECT_EQ(f.images[0].rois[1].label, "zero");
  EXPECT_TRUE(f.images[1].rois.empty());  // other.png has no label file (and is never opened)
}

TEST_F(AnnotationsTest, ManifestQuotesCsvAndEscapesJson) {
  const std::vector<io::CropRecord> records = {
      {"out/a,1.png", "in/\"x\".png", {0.1f, 2, 3.5f, -4}, "cat, big", "id\n2", ""},
      {"out/b.png", "in/y.png", {1e-8f, 1e20f, 0, 0}, "", "", ""},
      {"out/c.png", "in/z.png", {0, 0, 1, 1}, "=cmd|' /C calc'!A0", "@SUM(1,2)", ""}};
  io::write_manifest(path("m.csv"), records);
  // Cells a spreadsheet would run as formulas start with ' (numbers such as -4 are not text cells).
  EXPECT_EQ(test::read_file(path("m.csv")),
            "crop,source,x1,y1,x2,y2,label,id\n"
            "\"out/a,1.png\",\"in/\"\"x\"\".png\",0.1,2,3.5,-4,\"cat, big\",\"id\n2\"\n"
            "out/b.png,in/y.png,1e-08,1e+20,0,0,,\n"
            "out/c.png,in/z.png,0,0,1,1,'=cmd|' /C calc'!A0,\"'@SUM(1,2)\"\n");
  io::write_manifest(path("m.jsonl"), records);
  EXPECT_EQ(test::read_file(path("m.jsonl")),
            "{\"crop\":\"out/a,1.png\",\"source\":\"in/\\\"x\\\".png\",\"box\":[0.1,2,3.5,-4],\"label\":\"cat, big\","
            "\"id\":\"id\\n2\"}\n"
            "{\"crop\":\"out/b.png\",\"source\":\"in/y.png\",\"box\":[1e-08,1e+20,0,0],\"label\":\"\",\"id\":\"\"}\n"
            "{\"crop\":\"out/c.png\",\"source\":\"in/z.png\",\"box\":[0,0,1,1],\"label\":\"=cmd|' /C calc'!A0\","
            "\"id\":\"@SUM(1,2)\"}\n");  // JSON keeps the text as it is
  try {
    io::write_manifest(path("m.txt"), records);
    ADD_FAILURE() << "a .txt manifest was written";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  }
  EXPECT_FALSE(fs::exists(path("m.txt")));
}

// JSON Lines manifests keep every byte of a path: UTF-8 as it is, a byte that is not UTF-8 (a Latin-1 file name,
// an overlong form, an encoded surrogate, a cut sequence) as U+DC80..U+DCFF, which Python reads back with
// surrogateescape; quotes, backslashes and control characters escaped as JSON libraries escape them.
TEST(ManifestJson, EveryByteOfAPathSurvives) {
  EXPECT_EQ(io::json_string("plain/ascii.png"), "\"plain/ascii.png\"");
  EXPECT_EQ(io::json_string("chat/\xe7\x8c\xab/\xf0\x9f\x90\x88.png"), "\"chat/\xe7\x8c\xab/\xf0\x9f\x90\x88.png\"");
  EXPECT_EQ(io::json_string("ch\xe9lsea.png"), "\"ch\\udce9lsea.png\"");
  EXPECT_EQ(io::json_string("\xc0\xaf"), "\"\\udcc0\\udcaf\"");            // overlong '/'
  EXPECT_EQ(io::json_string("\xed\xa0\x80"), "\"\\udced\\udca0\\udc80\"");  // an encoded surrogate
  EXPECT_EQ(io::json_string("a\xe7\x8c"), "\"a\\udce7\\udc8c\"");          // a cut sequence
  EXPECT_EQ(io::json_string("\xf4\x90\x80\x80"), "\"\\udcf4\\udc90\\udc80\\udc80\"");  // past U+10FFFF
  EXPECT_EQ(io::json_string(std::string("q\"b\\n\n\t\x01\x7f", 9)), "\"q\\\"b\\\\n\\n\\t\\u0001\x7f\"");
  EXPECT_EQ(io::json_string(std::string("\0", 1)), "\"\\u0000\"");
}

// The image sizes the files state, and the annotations the filters leave out (with their boxes, labels and ids, for
// the manifest); without the filters, crowd and difficult boxes are boxes like the others.
TEST_F(AnnotationsTest, StatedSizesAndLeftOutAnnotations) {
  test::write_file(path("c.json"), R"({"images": [{"id": 7, "file_name": "a.png", "width": 640, "height": 480},
      {"id": 8, "file_name": "b.png"}],
    "annotations": [{"id": 1, "image_id": 7, "bbox": [1, 2, 3, 4], "iscrowd": 1, "category_id": 2},
                    {"id": 2, "image_id": 7, "bbox": [5, 6, 7, 8], "iscrowd": 0}],
    "categories": [{"id": 2, "name": "people"}]})");
  io::AnnotationOptions options;
  io::RoiFile f = io::read_annotations(path("c.json"), io::AnnotationFormat::Coco, options);
  ASSERT_EQ(f.images.size(), 2u);
  EXPECT_EQ(f.images[0].width, 640);
  EXPECT_EQ(f.images[0].height, 480);
  EXPECT_EQ(f.images[0].where, path("c.json") + ": image 7 (a.png)");
  EXPECT_EQ(f.images[1].width, 0);  // not stated
  EXPECT_EQ(f.images[0].rois.size(), 2u);
  options.skip_crowd = true;
  f = io::read_annotations(path("c.json"), io::AnnotationFormat::Coco, options);
  ASSERT_EQ(f.images[0].rois.size(), 1u);
  EXPECT_EQ(f.images[0].rois[0].id, "2");
  ASSERT_EQ(f.images[0].left_out.size(), 1u);
  EXPECT_EQ(f.images[0].left_out[0].reason, "crowd");
  EXPECT_EQ(f.images[0].left_out[0].roi.box, (std::array<float, 4>{1, 2, 4, 6}));
  EXPECT_EQ(f.images[0].left_out[0].roi.label, "people");

  test::write_file(path("v.xml"), "<annotation><filename>a.png</filename><size><width>320</width>"
                                  "<height>200</height></size><object><name>car</name><difficult>1</difficult>"
                                  "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox></object>"
                                  "<object><name>bus</name><bndbox><xmin>2</xmin><ymin>2</ymin><xmax>9</xmax>"
                                  "<ymax>9</ymax></bndbox></object></annotation>");
  options = {};
  f = io::read_annotations(path("v.xml"), io::AnnotationFormat::Voc, options);
  EXPECT_EQ(f.images[0].width, 320);
  EXPECT_EQ(f.images[0].height, 200);
  EXPECT_EQ(f.images[0].rois.size(), 2u);
  options.skip_difficult = true;
  f = io::read_annotations(path("v.xml"), io::AnnotationFormat::Voc, options);
  ASSERT_EQ(f.images[0].rois.size(), 1u);
  EXPECT_EQ(f.images[0].rois[0].id, "v-1");  // ids count the objects left out
  ASSERT_EQ(f.images[0].left_out.size(), 1u);
  EXPECT_EQ(f.images[0].left_out[0].reason, "difficult");
  EXPECT_EQ(f.images[0].left_out[0].roi.id, "v-0");

  // A stated size that is not a whole number of pixels names the entry.
  test::write_file(path("bad.json"), R"({"images": [{"id": 7, "file_name": "a.png", "width": -3}],
    "annotations": []})");
  EXPECT_NE(test::error_message([&] { io::read_annotations(path("bad.json"), io::AnnotationFormat::Coco, {}); },
                                ErrorCode::InvalidArgument)
                .find("/images/0/width"),
            std::string::npos);
}

TEST_F(AnnotationsTest, ManifestListsLeftOutBoxesWithTheirReason) {
  const std::vector<io::CropRecord> records = {{"out/a.png", "in/x.png", {1, 2, 3, 4}, "cat", "1", ""},
                                               {"", "in/x.png", {500, 2, 530, 4}, "dog", "2", "outside"}};
  io::write_manifest(path("m.csv"), records);
  EXPECT_EQ(test::read_file(path("m.csv")),
            "crop,source,x1,y1,x2,y2,label,id,skipped\n"
            "out/a.png,in/x.png,1,2,3,4,cat,1,\n"
            ",in/x.png,500,2,530,4,dog,2,outside\n");
  io::write_manifest(path("m.jsonl"), records);
  EXPECT_EQ(test::read_file(path("m.jsonl")),
            "{\"crop\":\"out/a.png\",\"source\":\"in/x.png\",\"box\":[1,2,3,4],\"label\":\"cat\",\"id\":\"1\"}\n"
            "{\"source\":\"in/x.png\",\"box\":[500,2,530,4],\"label\":\"dog\",\"id\":\"2\",\"skipped\":\"outside\"}\n");
}

TEST_F(AnnotationsTest, DetectionFallsBackToRszFiles) {
  test::write_file(path("r.json"), R"({"rois": [[0, 0, 1, 1]]})");
  EXPECT_EQ(io::detect_annotation_format(path("r.json")), io::AnnotationFormat::Rsz);
  EXPECT_EQ(io::detect_annotation_format(path("r.npy")), io::AnnotationFormat::Rsz);
  EXPECT_STREQ(io::to_string(io::AnnotationFormat::Voc), "voc");
  fs::create_directories(path("empty"));
  EXPECT_THROW(io::detect_annotation_format(path("empty")), Error);
}

}  // namespace
}  // namespace rsz
