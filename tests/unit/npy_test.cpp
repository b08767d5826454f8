// rsz::io::read_npy / write_npy: numpy-written fixtures (tests/data/npy, made by tests/data/make_npy_fixtures.py),
// round trips, byte-identity with numpy's writer, atomic replacement, and every refused file.
#include "rsz/io/npy.h"
#include "rsz/io/formats.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "rsz/error.h"
#include "rsz/float16.h"
#include "rsz/tensor.h"
#include "support/scratch_test.h"
#include "support/test_util.h"

namespace rsz::io {
namespace {

namespace fs = std::filesystem;
using test::read_file;
using test::write_file;

std::string fixture(const std::string& name) { return std::string(RSZ_TEST_DATA_DIR) + "/npy/" + name; }


class NpyTest : public test::ScratchTest {};

// Runs `action`, which must throw rsz::Error with `code`, a one-line message starting with "<path>: " and
// containing every one of `parts`.
void expect_error(const std::function<void()>& action, ErrorCode code, const std::string& path,
                  std::initializer_list<std::string> parts) {
  try {
    action();
    ADD_FAILURE() << "no rsz::Error thrown for " << path;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), code) << "code " << to_string(e.code()) << ", message: " << message;
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << "the message must start with the path: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "the message must be one line: " << message;
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos) << "missing \"" << part << "\" in: " << message;
    }
  }
}

void expect_read_error(const std::string& path, ErrorCode code, std::initializer_list<std::string> parts) {
  expect_error([&] { (void)read_npy(path); }, code, path, parts);
}

// A .npy file with the given header dict text, padded like numpy pads it, followed by `data`.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < preamble - 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string float_bytes(std::initializer_list<float> values) {
  std::string out;
  for (const float v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

std::vector<float> floats_of(const Tensor& t) {
  const float* p = t.data_as<float>();
  return std::vector<float>(p, p + t.element_count());
}

std::size_t data_offset(const std::string& file) {
  EXPECT_GE(file.size(), 10u);
  const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(file[i])); };
  if (file[6] == 1) return 10 + (byte(8) | byte(9) << 8);
  return 12 + (byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24);
}

// ---------------------------------------------------------------------------------------------------------------
// Files written by numpy

TEST_F(NpyTest, ReadsNumpyFloat32) {
  const Tensor t = read_npy(fixture("f4_2x3_v1.npy"));
  EXPECT_EQ(t.dtype(), DataType::Float32);
  EXPECT_EQ(t.sizes(), (Dims{2, 3}));
  EXPECT_EQ(floats_of(t), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
}

TEST_F(NpyTest, ReadsNumpyFloat16) {
  const Tensor t = read_npy(fixture("f2_2x1x3_v1.npy"));
  EXPECT_EQ(t.dtype(), DataType::Float16);
  EXPECT_EQ(t.sizes(), (Dims{2, 1, 3}));
  const Float16* p = t.data_as<Float16>();
  const std::uint16_t expected[] = {0x0000, 0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(p[i].bits(), expected[i]) << "element " << i;
}

TEST_F(NpyTest, ReadsNumpyUInt32) {
  const Tensor t = read_npy(fixture("u4_4_v1.npy"));
  EXPECT_EQ(t.dtype(), DataType::UInt32);
  EXPECT_EQ(t.sizes(), (Dims{4}));
  const std::uint32_t* p = t.data_as<std::uint32_t>();
  EXPECT_EQ(std::vector<std::uint32_t>(p, p + 4), (std::vector<std::uint32_t>{0, 1, 7, 4294967295u}));
}

TEST_F(NpyTest, ReadsNumpyRank5) {
  const Tensor t = read_npy(fixture("f4_rank5_v1.npy"));
  EXPECT_EQ(t.sizes(), (Dims{1, 2, 1, 2, 3}));
  std::vector<float> expected(12);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<float>(i);
  EXPECT_EQ(floats_of(t), expected);
}

TEST_F(NpyTest, ReadsNumpyEmptyArray) {
  const Tensor t = read_npy(fixture("f4_0x3_v1.npy"));
  EXPECT_EQ(t.dtype(), DataType::Float32);
  EXPECT_EQ(t.sizes(), (Dims{0, 3}));
  EXPECT_EQ(t.byte_size(), 0u);
}

TEST_F(NpyTest, ReadsFormatVersions2And3) {
  for (const auto& [name, major] : {std::pair<const char*, char>{"f4_2x3_v2.npy", 2}, {"f4_2x3_v3.npy", 3}}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(read_file(fixture(name))[6], major) << "the fixture is not the format version it claims";
    const Tensor t = read_npy(fixture(name));
    EXPECT_EQ(t.sizes(), (Dims{2, 3}));
    EXPECT_EQ(floats_of(t), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
  }
}

TEST_F(NpyTest, WritesTheBytesNumpyWrites) {
  for (const char* name : {"f4_2x3_v1.npy", "f2_2x1x3_v1.npy", "u4_4_v1.npy", "f4_rank5_v1.npy", "f4_0x3_v1.npy"}) {
    SCOPED_TRACE(name);
    const Tensor t = read_npy(fixture(name));
    write_npy(path(name), t.view());
    EXPECT_EQ(read_file(path(name)), read_file(fixture(name)));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Round trips

// Distinct byte patterns (NaN payloads included for floats): a round trip must keep every bit.
Tensor patterned(DataType type, const Dims& sizes, std::uint32_t seed) {
  Tensor t(type, sizes);
  auto* bytes = static_cast<unsigned char*>(t.data());
  std::uint32_t state = seed;
  for (std::size_t i = 0; i < t.byte_size(); ++i) {
    state = state * 1664525u + 1013904223u;
    bytes[i] = static_cast<unsigned char>(state >> 24);
  }
  return t;
}

TEST_F(NpyTest, RoundTripsEveryDataTypeAndRank) {
  const Dims all_sizes = {3, 1, 4, 2, 5};
  int files = 0;
  for (const DataType type : {DataType::Float32, DataType::Float16, DataType::UInt32}) {
    for (std::size_t rank = 1; rank <= 5; ++rank) {
      const Dims sizes(all_sizes.begin(), all_sizes.begin() + static_cast<std::ptrdiff_t>(rank));
      SCOPED_TRACE(std::string(to_string(type)) + " " + dims_to_string(sizes));
      const Tensor original = patterned(type, sizes, static_cast<std::uint32_t>(rank * 7 + element_size(type)));
      const std::string file = path("t.npy");
      write_npy(file, original.view());
      ++files;
      const Tensor back = read_npy(file);
      EXPECT_EQ(back.dtype(), type);
      EXPECT_EQ(back.sizes(), sizes);
      ASSERT_EQ(back.byte_size(), original.byte_size());
      EXPECT_EQ(std::memcmp(back.data(), original.data(), original.byte_size()), 0);
      const std::string bytes = read_file(file);
      EXPECT_EQ(data_offset(bytes) % 64, 0u);
      EXPECT_EQ(bytes[data_offset(bytes) - 1], '\n');
      EXPECT_EQ(bytes.size(), data_offset(bytes) + original.byte_size());
      EXPECT_EQ(folder_entries(), std::vector<std::string>{"t.npy"}) << "a temporary file was left behind";
    }
  }
  EXPECT_EQ(files, 15);
}

TEST_F(NpyTest, HeaderIsPaddedSoDataStartsAtAMultipleOf64) {
  // Empty arrays with sizes of many digit counts give header dicts of many lengths, each needing its own padding.
  std::vector<std::size_t> dict_ends;
  // (The product of the non-zero sizes stays below 2^63, as packed strides must.)
  for (std::int64_t big = 1; big < 1'000'000'000'000'000'000; big = big * 10 + 7) {
    for (const Dims& sizes : {Dims{0, big}, Dims{big, 0, 3}, Dims{0, big, 1, 1, 9}}) {
      SCOPED_TRACE(dims_to_string(sizes));
      const Tensor empty(DataType::Float16, sizes);
      write_npy(path("e.npy"), empty.view());
      const std::string bytes = read_file(path("e.npy"));
      ASSERT_EQ(bytes[6], 1) << "format version 1.0 expected";
      EXPECT_EQ(bytes.size() % 64, 0u);
      EXPECT_EQ(data_offset(bytes), bytes.size());
      EXPECT_EQ(bytes.back(), '\n');
      dict_ends.push_back(bytes.find('}'));
      EXPECT_EQ(read_npy(path("e.npy")).sizes(), sizes);
    }
  }
  std::sort(dict_ends.begin(), dict_ends.end());
  EXPECT_GE(std::unique(dict_ends.begin(), dict_ends.end()) - dict_ends.begin(), 20) << "the dicts did not vary";
}

TEST_F(NpyTest, WritesStridedViewsPacked) {
  // A 4x5 buffer of i; the view picks rows 0 and 2 and columns 1, 3: a {2, 2} view with strides {10, 2}, offset 1.
  std::vector<float> buffer(20);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
  write_npy(path("s.npy"), ConstTensorView(buffer.data() + 1, DataType::Float32, {2, 2}, {10, 2}));
  Tensor t = read_npy(path("s.npy"));
  EXPECT_EQ(t.sizes(), (Dims{2, 2}));
  EXPECT_EQ(floats_of(t), (std::vector<float>{1, 3, 11, 13}));

  // The transpose: a {5, 4} view with strides {1, 5}.
  write_npy(path("s.npy"), ConstTensorView(buffer.data(), DataType::Float32, {5, 4}, {1, 5}));
  t = read_npy(path("s.npy"));
  EXPECT_EQ(t.sizes(), (Dims{5, 4}));
  const std::vector<float> got = floats_of(t);
  for (std::size_t r = 0; r < 5; ++r) {
    for (std::size_t c = 0; c < 4; ++c) EXPECT_EQ(got[r * 4 + c], static_cast<float>(c * 5 + r));
  }

  // An interleaved HWC uint32 image read as NCHW {1, 3, 2, 2} (strides {12, 1, 6, 3}), and a broadcast (stride 0).
  std::vector<std::uint32_t> hwc(12);
  for (std::uint32_t i = 0; i < 12; ++i) hwc[i] = 100 + i;
  write_npy(path("s.npy"), ConstTensorView(hwc.data(), DataType::UInt32, {1, 3, 2, 2}, {12, 1, 6, 3}));
  t = read_npy(path("s.npy"));
  const std::uint32_t* p = t.data_as<std::uint32_t>();
  EXPECT_EQ(std::vector<std::uint32_t>(p, p + 12),
            (std::vector<std::uint32_t>{100, 103, 106, 109, 101, 104, 107, 110, 102, 105, 108, 111}));
  write_npy(path("s.npy"), ConstTensorView(hwc.data() + 2, DataType::UInt32, {3, 2}, {0, 1}));
  t = read_npy(path("s.npy"));
  p = t.data_as<std::uint32_t>();
  EXPECT_EQ(std::vector<std::uint32_t>(p, p + 6), (std::vector<std::uint32_t>{102, 103, 102, 103, 102, 103}));
}

TEST_F(NpyTest, WritesLargeStridedViewAcrossBufferChunks) {
  // More than the writer's 1 MiB gathering buffer, strided, float16.
  const std::int64_t rows = 700, cols = 1024;
  std::vector<std::uint16_t> buffer(static_cast<std::size_t>(rows * cols * 2));
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<std::uint16_t>(i * 2654435761u >> 7);
  write_npy(path("big.npy"), ConstTensorView(buffer.data(), DataType::Float16, {rows, cols}, {cols * 2, 2}));
  const Tensor t = read_npy(path("big.npy"));
  ASSERT_EQ(t.sizes(), (Dims{rows, cols}));
  const Float16* p = t.data_as<Float16>();
  std::int64_t mismatches = 0;
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    mismatches += p[i].bits() != buffer[static_cast<std::size_t>(i * 2)];
  }
  EXPECT_EQ(mismatches, 0);
}

// ---------------------------------------------------------------------------------------------------------------
// Header parsing

TEST_F(NpyTest, ParsesHeaderVariants) {
  const std::string data = float_bytes({1.0f, 2.0f, 3.0f});
  const struct {
    const char* dict;
    Dims shape;
  } cases[] = {
      {"{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}", {3}},
      {"{ 'fortran_order' :False ,'descr':'<f4','shape':( 3 , ) , }", {3}},
      {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}", {3}},
      {"{'descr': '<f4',\n\t'fortran_order': False,\n\t'shape': (1, 3, 1), }", {1, 3, 1}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }", {3}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 3)}", {1, 1, 1, 1, 3}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.dict);
    for (const int major : {1, 2, 3}) {
      write_file(path("h.npy"), make_npy(c.dict, data, major));
      const Tensor t = read_npy(path("h.npy"));
      EXPECT_EQ(t.sizes(), c.shape);
      EXPECT_EQ(floats_of(t), (std::vector<float>{1.0f, 2.0f, 3.0f}));
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Refused files

TEST_F(NpyTest, RefusesUnsupportedDtypes) {
  expect_read_error(fixture("f8_2x3.npy"), ErrorCode::Format,
                    {"dtype '<f8' is not supported", "'<f4' (float32), '<f2' (float16) or '<u4' (uint32) is allowed"});
  expect_read_error(fixture("f4_big_endian.npy"), ErrorCode::Format,
                    {"dtype '>f4' (big-endian) is not supported", "'<f4' (float32)"});
  expect_read_error(fixture("structured.npy"), ErrorCode::Format,
                    {"dtype [('a', '<f4')] is not supported", "'<u4' (uint32) is allowed"});
  for (const char* descr : {"<i4", "|u1", "<u2", "=f4", "f4", "<U3", "|b1"}) {
    SCOPED_TRACE(descr);
    write_file(path("d.npy"),
               make_npy(std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (1,), }", "abcd"));
    expect_read_error(path("d.npy"), ErrorCode::Format, {std::string("dtype '") + descr + "' is not supported"});
  }
}

TEST_F(NpyTest, RefusesFortranOrder) {
  expect_read_error(fixture("f4_fortran.npy"), ErrorCode::Format,
                    {"fortran_order True", "not supported", "C order (fortran_order False) is allowed"});
  write_file(path("f.npy"), make_npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }", "abcd"));
  expect_read_error(path("f.npy"), ErrorCode::Format, {"fortran_order 0 is not a boolean"});
}

TEST_F(NpyTest, RefusesRank0AndRankAbove5) {
  expect_read_error(fixture("f4_scalar.npy"), ErrorCode::Format, {"shape () has rank 0", "rank 1 to 5 is allowed"});
  expect_read_error(fixture("f4_rank6.npy"), ErrorCode::Format,
                    {"shape (1, 1, 1, 1, 1, 2) has rank 6", "rank 1 to 5 is allowed"});
}

TEST_F(NpyTest, RefusesTruncatedData) {
  expect_read_error(fixture("f4_2x3_truncated.npy"), ErrorCode::Format,
                    {"the data is truncated", "shape (2, 3) of '<f4' needs 24 data bytes", "the file has 19"});
}

TEST_F(NpyTest, RefusesTrailingBytes) {
  expect_read_error(fixture("f4_2x3_trailing.npy"), ErrorCode::Format,
                    {"3 unexpected bytes follow the data", "needs 24 data bytes", "the file has 27"});
}

TEST_F(NpyTest, RefusesHugeShapesWithoutAllocating) {
  // 2^40 float32 would be 4 TiB: the size check must fail before any allocation (ASan aborts on such a request).
  write_file(path("huge.npy"),
             make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", float_bytes({1.0f})));
  expect_read_error(path("huge.npy"), ErrorCode::Format,
                    {"the data is truncated", "needs 4398046511104 data bytes", "the file has 4"});
  write_file(path("overflow.npy"),
             make_npy("{'descr': '<f2', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", ""));
  expect_read_error(path("overflow.npy"), ErrorCode::Format,
                    {"shape (1099511627776, 1099511627776) of '<f2' is too large", "overflows int64"});
  // No data at all, but the packed strides of this empty array would overflow int64.
  write_file(path("empty.npy"),
             make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }", ""));
  expect_read_error(path("empty.npy"), ErrorCode::Format,
                    {"shape (0, 4294967296, 4294967296) of '<f4' is too large", "overflows int64"});
  write_file(path("digits.npy"),
             make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", ""));
  expect_read_error(path("digits.npy"), ErrorCode::Format, {"does not fit in int64"});
}

TEST_F(NpyTest, RefusesNegativeSizes) {
  write_file(path("n.npy"), make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", ""));
  expect_read_error(path("n.npy"), ErrorCode::Format, {"shape (2, -1) has a negative size", "sizes must be >= 0"});
}

TEST_F(NpyTest, RefusesBadShapeValues) {
  for (const char* shape : {"[2, 3]", "(2, 'a')", "3", "(2.5,)"}) {
    SCOPED_TRACE(shape);
    write_file(path("s.npy"),
               make_npy(std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") + shape + ", }", ""));
    // "2.5" stops the parser at '.', the others parse but are not tuples of integers.
    expect_read_error(path("s.npy"), ErrorCode::Format,
                      {std::string(shape) == "(2.5,)" ? "cannot parse the header" : "is not a tuple of integers"});
  }
}

TEST_F(NpyTest, RefusesBadMagicAndShortFiles) {
  write_file(path("png.npy"), std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  expect_read_error(path("png.npy"), ErrorCode::Format,
                    {"not a .npy file", "starts with \"\\x89PNG\\x0d\\x0a\"", "\\x93NUMPY"});
  write_file(path("short.npy"), std::string("\x93NUMPY\x01", 7));
  expect_read_error(path("short.npy"), ErrorCode::Format, {"not a .npy file", "7 bytes long"});
  write_file(path("empty.npy"), "");
  expect_read_error(path("empty.npy"), ErrorCode::Format, {"0 bytes long"});
}

TEST_F(NpyTest, RefusesUnsupportedVersions) {
  const std::string good = read_file(fixture("f4_2x3_v1.npy"));
  for (const auto& [major, minor, text] :
       {std::tuple<char, char, const char*>{4, 0, "version 4.0"}, {1, 1, "version 1.1"}, {0, 0, "version 0.0"}}) {
    std::string bytes = good;
    bytes[6] = major;
    bytes[7] = minor;
    write_file(path("v.npy"), bytes);
    expect_read_error(path("v.npy"), ErrorCode::Format, {text, "is not supported", "1.0, 2.0 or 3.0 is allowed"});
  }
}

TEST_F(NpyTest, RefusesHeaderRunningPastTheEnd) {
  std::string bytes = read_file(fixture("f4_2x3_v1.npy")).substr(0, 40);
  write_file(path("cut.npy"), bytes);
  expect_read_error(path("cut.npy"), ErrorCode::Format, {"truncated", "the header is 118 bytes long", "only 30"});
  // Version 2.0 with a 4 GiB header length: refused from the file size, nothing allocated.
  bytes = read_file(fixture("f4_2x3_v2.npy"));
  bytes[8] = bytes[9] = bytes[10] = bytes[11] = '\xff';
  write_file(path("len.npy"), bytes);
  expect_read_error(path("len.npy"), ErrorCode::Format, {"the header is 4294967295 bytes long"});
}

TEST_F(NpyTest, RefusesUnparseableHeaders) {
  for (const char* dict : {"{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}",
                           "{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
                           "{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}",
                           "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", "['descr', '<f4']",
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} extra", "{1: '<f4'}"}) {
    SCOPED_TRACE(dict);
    write_file(path("p.npy"), make_npy(dict, "abcd"));
    expect_read_error(path("p.npy"), ErrorCode::Format, {"cannot parse the header at character", "Python dict"});
  }
}

TEST_F(NpyTest, RefusesMissingUnknownAndDuplicateKeys) {
  write_file(path("k.npy"), make_npy("{'descr': '<f4', 'shape': (1,)}", "abcd"));
  expect_read_error(path("k.npy"), ErrorCode::Format,
                    {"no 'fortran_order' key", "'descr', 'fortran_order' and 'shape' are required"});
  write_file(path("k.npy"), make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "abcd"));
  expect_read_error(path("k.npy"), ErrorCode::Format, {"unknown key 'x'"});
  write_file(path("k.npy"), make_npy("{'descr': '<f4', 'shape': (1,), 'fortran_order': False, 'shape': (1,)}", "abcd"));
  expect_read_error(path("k.npy"), ErrorCode::Format, {"key 'shape' twice"});
}

TEST_F(NpyTest, ReadReportsIoErrors) {
  expect_read_error(path("missing.npy"), ErrorCode::Io, {"cannot open for reading", "No such file or directory"});
  expect_read_error(dir_.string(), ErrorCode::Io, {"it is a folder"});
}

// ---------------------------------------------------------------------------------------------------------------
// Atomic writes

TEST_F(NpyTest, WriteReplacesAnExistingFile) {
  write_file(path("x.npy"), "old content");
  const Tensor t = read_npy(fixture("u4_4_v1.npy"));
  write_npy(path("x.npy"), t.view());
  EXPECT_EQ(read_file(path("x.npy")), read_file(fixture("u4_4_v1.npy")));
  EXPECT_EQ(folder_entries(), std::vector<std::string>{"x.npy"});
}

TEST_F(NpyTest, WriteIntoAMissingFolderFails) {
  const Tensor t = read_npy(fixture("u4_4_v1.npy"));
  const std::string target = path("no/such/folder/x.npy");
  expect_error([&] { write_npy(target, t.view()); }, ErrorCode::Io, target,
               {"cannot create a temporary file", "No such file or directory"});
  EXPECT_TRUE(folder_entries().empty());
}

TEST_F(NpyTest, FailedRenameRemovesTheTemporaryFile) {
  // The target is a non-empty folder: the temporary file is written, the rename fails, and it must be removed.
  fs::create_directory(path("target.npy"));
  write_file(path("target.npy/keep"), "kept");
  const Tensor t = read_npy(fixture("f4_2x3_v1.npy"));
  expect_error([&] { write_npy(path("target.npy"), t.view()); }, ErrorCode::Io, path("target.npy"),
               {"cannot replace the file"});
  EXPECT_EQ(folder_entries(), std::vector<std::string>{"target.npy"});
  EXPECT_EQ(read_file(path("target.npy/keep")), "kept");
}

TEST_F(NpyTest, FailedDataWriteLeavesTheTargetAsItWas) {
  // Limit the file size so the data write fails midway (EFBIG); the old target must survive untouched.
  write_file(path("x.npy"), "old content");
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limited = saved;
  limited.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  const Tensor big(DataType::Float32, {4, 1024});
  bool threw = false;
  try {
    write_npy(path("x.npy"), big.view());
  } catch (const Error& e) {
    threw = true;
    EXPECT_EQ(e.code(), ErrorCode::Io);
    EXPECT_NE(std::string(e.what()).find("cannot write the temporary file"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(path("x.npy") + ": ", 0), 0u) << e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(read_file(path("x.npy")), "old content");
  EXPECT_EQ(folder_entries(), std::vector<std::string>{"x.npy"});
}

TEST_F(NpyTest, WriteToAFolderPathFails) {
  const Tensor t = read_npy(fixture("u4_4_v1.npy"));
  const std::string target = dir_.string() + "/";
  expect_error([&] { write_npy(target, t.view()); }, ErrorCode::Io, target, {"names a folder"});
}

// .npy is the tensor formats' row (rsz/io/formats.h): names are asked of the tables, and the row reads, probes and
// writes what read_npy, read_npy_info and write_npy do.
TEST_F(NpyTest, NpyIsTheTensorFormatsRow) {
  const std::pair<const char*, FileKind> names[] = {
      {"x.npy", FileKind::Tensor}, {"dir.d/X.NPY", FileKind::Tensor}, {"a.png", FileKind::Image},
      {"b.JPG", FileKind::Image},  {"c.gif", FileKind::Image},        {"notes.txt", FileKind::None},
      {"npy", FileKind::None},     {".npy", FileKind::None},          {"x.npy.bak", FileKind::None}};
  for (const auto& [name, kind] : names) EXPECT_EQ(file_kind(name), kind) << name;
  const TensorFormat* format = find_tensor_format("out/Y.Npy");
  ASSERT_NE(format, nullptr);
  EXPECT_STREQ(format->name, "npy");
  EXPECT_EQ(find_tensor_format("y.png"), nullptr);
  Tensor t(DataType::Float16, {1, 2, 3, 4});
  Float16* p = t.data_as<Float16>();
  for (std::int64_t i = 0; i < t.element_count(); ++i) p[i] = Float16(static_cast<float>(i) - 7.5f);
  format->write(path("t.npy"), t.view());
  const TensorInfo info = format->probe(path("t.npy"));
  EXPECT_EQ(info.dtype, DataType::Float16);
  EXPECT_EQ(info.sizes, (Dims{1, 2, 3, 4}));
  const Tensor back = format->read(path("t.npy"));
  const Tensor direct = read_npy(path("t.npy"));
  ASSERT_EQ(back.element_count(), t.element_count());
  for (std::int64_t i = 0; i < t.element_count(); ++i) {
    EXPECT_EQ(back.data_as<Float16>()[i].bits(), p[i].bits());
    EXPECT_EQ(direct.data_as<Float16>()[i].bits(), p[i].bits());
  }
}

}  // namespace
}  // namespace rsz::io
