#include "rsz/io/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "file_util.h"
#include "rsz/error.h"

namespace rsz::io {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "rsz::io reads and writes little-endian .npy data by copying bytes; big-endian hosts are not supported");

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = sizeof(kMagic) - 1;
constexpr std::size_t kAlignment = 64;
constexpr std::size_t kMaxShownHeader = 160;
constexpr const char* kAllowedDtypes = "'<f4' (float32), '<f2' (float16) or '<u4' (uint32) is allowed";
constexpr const char* kRequiredKeys = "'descr', 'fortran_order' and 'shape'";

using detail::fail;
using detail::FileDescriptor;
using detail::system_message;

// Bytes as a one-line, printable string: non-printable bytes become \xHH.
std::string escape(const std::string& bytes, std::size_t max_length = std::string::npos) {
  std::string out;
  const std::size_t n = bytes.size() < max_length ? bytes.size() : max_length;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (n < bytes.size()) out += "...";
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading

// Reads exactly `size` bytes at `offset`. The size was checked against fstat before, so an early end of file
// means the file changed while being read.
void read_exact(int fd, const std::string& path, void* buffer, std::size_t size, std::uint64_t offset) {
  auto* out = static_cast<char*>(buffer);
  while (size > 0) {
    const ssize_t got = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(ErrorCode::Io, path, "cannot read: " + system_message(errno));
    }
    if (got == 0) fail(ErrorCode::Io, path, "cannot read: the file became shorter while it was being read");
    out += got;
    size -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
}

// A value of the header's Python literal: a string, True/False, an integer, or a tuple/list of values.
struct Value {
  enum class Kind { String, Bool, Integer, Tuple, List };
  Kind kind = Kind::String;
  std::string source;  // the literal as written, for messages
  std::string text;    // String: the content
  bool boolean = false;
  std::int64_t integer = 0;
  bool integer_fits = true;  // Integer: false when it does not fit int64
  std::vector<Value> items;
};

// A small recursive-descent parser for the header dict, e.g. "{'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }": keys in any order, any whitespace, trailing commas, Python 2 long suffixes (3L).
class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& header) : path_(path), text_(header) {}

  std::vector<std::pair<std::string, Value>> parse_dict() {
    std::vector<std::pair<std::string, Value>> entries;
    skip_space();
    expect('{', "the header must be a dict that starts with '{'");
    skip_space();
    while (!at('}')) {
      const Value key = parse_value();
      if (key.kind != Value::Kind::String) error("a dict key must be a string, got " + key.source);
      skip_space();
      expect(':', "expected ':' after key " + key.source);
      skip_space();
      Value value = parse_value();
      entries.emplace_back(key.text, std::move(value));
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at('}')) {
        error("expected ',' or '}' after the value of key " + key.source);
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) error("unexpected text after the closing '}'");
    return entries;
  }

 private:
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  void expect(char c, const std::string& what) {
    if (!at(c)) error(what);
    ++pos_;
  }

  [[noreturn]] void error(const std::string& what) const {
    fail(ErrorCode::Format, path_,
         "cannot parse the header at character " + std::to_string(pos_) + ": " + what + "; header: " +
             escape(text_, kMaxShownHeader) + "; a .npy header is a Python dict literal like {'descr': '<f4', " +
             "'fortran_order': False, 'shape': (2, 3), }");
  }

  Value parse_value() {
    const std::size_t start = pos_;
    Value value;
    if (pos_ >= text_.size()) error("unexpected end of the header");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') {
      value.kind = Value::Kind::String;
      value.text = parse_string();
    } else if (c == '(' || c == '[') {
      value.kind = c == '(' ? Value::Kind::Tuple : Value::Kind::List;
      value.items = parse_sequence(c == '(' ? ')' : ']');
    } else if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      value.kind = Value::Kind::Integer;
      parse_integer(value);
    } else if (text_.compare(pos_, 4, "True") == 0) {
      value.kind = Value::Kind::Bool;
      value.boolean = true;
      pos_ += 4;
    } else if (text_.compare(pos_, 5, "False") == 0) {
      value.kind = Value::Kind::Bool;
      pos_ += 5;
    } else {
      error("expected a string, True, False, an integer, a tuple or a list");
    }
    value.source = text_.substr(start, pos_ - start);
    return value;
  }

  std::string parse_string() {
    const char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') {
        ++pos_;
        if (pos_ >= text_.size()) break;
      }
      out += text_[pos_++];
    }
    if (pos_ >= text_.size()) error("a string is not closed");
    ++pos_;
    return out;
  }

  std::vector<Value> parse_sequence(char close) {
    // Nested sequences recurse; a header of thousands of '(' must end in an error, not a stack overflow.
    if (++depth_ > kMaxNesting) error("tuples and lists are nested more than " + std::to_string(kMaxNesting) + " deep");
    ++pos_;
    std::vector<Value> items;
    skip_space();
    while (!at(close)) {
      items.push_back(parse_value());
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at(close)) {
        error(std::string("expected ',' or '") + close + "' in a sequence");
      }
    }
    ++pos_;
    --depth_;
    return items;
  }

  void parse_integer(Value& value) {
    const bool negative = text_[pos_] == '-';
    if (text_[pos_] == '-' || text_[pos_] == '+') ++pos_;
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') error("expected digits after the sign");
    std::int64_t magnitude = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_++] - '0';
      if (__builtin_mul_overflow(magnitude, 10, &magnitude) || __builtin_add_overflow(magnitude, digit, &magnitude)) {
        value.integer_fits = false;
      }
    }
    if (at('L') || at('l')) ++pos_;
    value.integer = negative ? -magnitude : magnitude;
  }

  const std::string& path_;
  static constexpr int kMaxNesting = 16;
  const std::string& text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

struct Header {
  DataType dtype = DataType::Float32;
  std::string descr;
  Dims shape;
  std::string shape_source;
};

Header interpret_header(const std::string& path, const std::vector<std::pair<std::string, Value>>& entries) {
  const Value* descr = nullptr;
  const Value* fortran_order = nullptr;
  const Value* shape = nullptr;
  for (const auto& [key, value] : entries) {
    const Value** slot = key == "descr"           ? &descr
                         : key == "fortran_order" ? &fortran_order
                         : key == "shape"         ? &shape
                                                  : nullptr;
    if (slot == nullptr) {
      fail(ErrorCode::Format, path,
           "the header has an unknown key '" + escape(key) + "'; only " + kRequiredKeys + " are allowed");
    }
    if (*slot != nullptr) fail(ErrorCode::Format, path, "the header lists key '" + key + "' twice");
    *slot = &value;
  }
  for (const auto& [name, value] :
       {std::pair<const char*, const Value*>{"descr", descr}, {"fortran_order", fortran_order}, {"shape", shape}}) {
    if (value == nullptr) {
      fail(ErrorCode::Format, path,
           std::string("the header has no '") + name + "' key; " + kRequiredKeys + " are required");
    }
  }

  Header header;
  if (descr->kind != Value::Kind::String) {
    fail(ErrorCode::Format, path,
         "dtype " + escape(descr->source, kMaxShownHeader) + " is not supported (not a simple data type); " +
             kAllowedDtypes);
  }
  header.descr = descr->text;
  if (header.descr == "<f4") {
    header.dtype = DataType::Float32;
  } else if (header.descr == "<f2") {
    header.dtype = DataType::Float16;
  } else if (header.descr == "<u4") {
    header.dtype = DataType::UInt32;
  } else {
    const bool big_endian = !header.descr.empty() && header.descr[0] == '>';
    fail(ErrorCode::Format, path,
         "dtype '" + escape(header.descr) + "'" + (big_endian ? " (big-endian)" : "") + " is not supported; " +
             kAllowedDtypes);
  }

  if (fortran_order->kind != Value::Kind::Bool) {
    fail(ErrorCode::Format, path,
         "fortran_order " + escape(fortran_order->source) + " is not a boolean; False (C order) is allowed");
  }
  if (fortran_order->boolean) {
    fail(ErrorCode::Format, path,
         "fortran_order True (column-major data) is not supported; only C order "
         "(fortran_order False) is allowed");
  }

  header.shape_source = escape(shape->source, kMaxShownHeader);
  if (shape->kind != Value::Kind::Tuple) {
    fail(ErrorCode::Format, path, "shape " + header.shape_source + " is not a tuple of integers");
  }
  for (const Value& item : shape->items) {
    if (item.kind != Value::Kind::Integer) {
      fail(ErrorCode::Format, path, "shape " + header.shape_source + " is not a tuple of integers");
    }
    if (item.integer < 0) {
      fail(ErrorCode::Format, path, "shape " + header.shape_source + " has a negative size; sizes must be >= 0");
    }
    if (!item.integer_fits) {
      fail(ErrorCode::Format, path, "shape " + header.shape_source + " has a size that does not fit in int64");
    }
    header.shape.push_back(item.integer);
  }
  if (header.shape.empty() || header.shape.size() > static_cast<std::size_t>(kMaxRank)) {
    fail(ErrorCode::Format, path,
         "shape " + header.shape_source + " has rank " + std::to_string(header.shape.size()) +
             ", which is not supported; rank 1 to " + std::to_string(kMaxRank) + " is allowed");
  }
  return header;
}

std::uint32_t read_le(const unsigned char* bytes, std::size_t count) {
  std::uint32_t value = 0;
  for (std::size_t i = count; i-- > 0;) value = (value << 8) | bytes[i];
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// Writing

std::string shape_literal(const Dims& sizes) {
  std::string out = "(";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  if (sizes.size() == 1) out += ",";
  return out + ")";
}

const char* descr_of(DataType type) {
  switch (type) {
    case DataType::Float32: return "<f4";
    case DataType::Float16: return "<f2";
    case DataType::UInt32: return "<u4";
    case DataType::UNorm8:
    case DataType::UNorm16: break;  // not stored as .npy (write_npy refuses them)
  }
  return "";
}

// Magic, version, header length and the space-padded header dict ending in '\n', so that the data starts at a
// multiple of kAlignment bytes: what numpy.save writes.
std::string make_preamble(const ConstTensorView& tensor) {
  const std::string dict = std::string("{'descr': '") + descr_of(tensor.dtype()) +
                           "', 'fortran_order': False, 'shape': " + shape_literal(tensor.sizes()) + ", }";
  for (const int major : {1, 2}) {
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    const std::size_t unpadded = kMagicSize + 2 + length_bytes + dict.size() + 1;
    const std::size_t header_length = dict.size() + (kAlignment - unpadded % kAlignment) % kAlignment + 1;
    if (major == 1 && header_length > 0xffff) continue;
    std::string out(kMagic, kMagicSize);
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < length_bytes; ++i) out += static_cast<char>((header_length >> (8 * i)) & 0xff);
    out += dict;
    out.append(header_length - dict.size() - 1, ' ');
    out += '\n';
    return out;
  }
  throw InternalError("rsz::io::write_npy: a .npy header longer than 4 GiB");
}

// Writes the elements of `tensor` in packed C order, gathering strided views through a bounded buffer.
void write_elements(detail::AtomicFile& file, const ConstTensorView& tensor) {
  const std::int64_t count = tensor.element_count();
  if (count == 0) return;
  const std::size_t esize = element_size(tensor.dtype());
  if (tensor.layout().is_packed()) {
    file.write(tensor.data(), static_cast<std::size_t>(count) * esize);
    return;
  }
  constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  std::vector<char> buffer;
  buffer.reserve(kBufferBytes);
  const int rank = tensor.rank();
  const auto* base = static_cast<const char*>(tensor.data());
  Dims index(static_cast<std::size_t>(rank), 0);
  for (std::int64_t done = 0; done < count; ++done) {
    std::int64_t offset = 0;
    for (int axis = 0; axis < rank; ++axis) offset += index[static_cast<std::size_t>(axis)] * tensor.stride(axis);
    const char* element = base + offset * static_cast<std::int64_t>(esize);
    buffer.insert(buffer.end(), element, element + esize);
    if (buffer.size() + esize > kBufferBytes) {
      file.write(buffer.data(), buffer.size());
      buffer.clear();
    }
    for (int axis = rank - 1; axis >= 0; --axis) {
      auto& i = index[static_cast<std::size_t>(axis)];
      if (++i < tensor.size(axis)) break;
      i = 0;
    }
  }
  file.write(buffer.data(), buffer.size());
}

// Reads and checks the preamble and header of an open .npy file, and checks the data size against the file.
struct CheckedHeader {
  Header header;
  std::uint64_t data_start = 0;
};

CheckedHeader read_checked_header(const std::string& path, const FileDescriptor& fd, std::size_t file_bytes) {
  const auto file_size = static_cast<std::uint64_t>(file_bytes);

  constexpr std::size_t kVersionEnd = kMagicSize + 2;
  if (file_size < kVersionEnd + 2) {
    fail(ErrorCode::Format, path,
         "not a .npy file: it is " + std::to_string(file_size) + " bytes long, shorter than the " +
             std::to_string(kVersionEnd + 2) + "-byte .npy preamble");
  }
  unsigned char preamble[kVersionEnd + 4] = {};
  read_exact(fd.get(), path, preamble, kVersionEnd, 0);
  if (std::memcmp(preamble, kMagic, kMagicSize) != 0) {
    fail(ErrorCode::Format, path,
         "not a .npy file: it starts with \"" + escape(std::string(reinterpret_cast<char*>(preamble), kMagicSize)) +
             "\"; a .npy file starts with \"\\x93NUMPY\"");
  }
  const unsigned major = preamble[kMagicSize];
  const unsigned minor = preamble[kMagicSize + 1];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    fail(ErrorCode::Format, path,
         ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
             " is not supported; 1.0, 2.0 or 3.0 is allowed");
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::uint64_t header_start = kVersionEnd + length_bytes;
  if (file_size < header_start) {
    fail(ErrorCode::Format, path,
         "the file is truncated: it is " + std::to_string(file_size) + " bytes long, shorter than the " +
             std::to_string(header_start) + "-byte preamble of format version " + std::to_string(major) + ".0");
  }
  read_exact(fd.get(), path, preamble + kVersionEnd, length_bytes, kVersionEnd);
  const std::uint64_t header_length = read_le(preamble + kVersionEnd, length_bytes);
  const std::uint64_t data_start = header_start + header_length;
  if (data_start > file_size) {
    fail(ErrorCode::Format, path,
         "the file is truncated: the header is " + std::to_string(header_length) + " bytes long but only " +
             std::to_string(file_size - header_start) + " bytes follow the preamble");
  }
  std::string header_text(static_cast<std::size_t>(header_length), '\0');
  read_exact(fd.get(), path, header_text.data(), header_text.size(), header_start);

  const Header header = interpret_header(path, HeaderParser(path, header_text).parse_dict());

  // Check the data size against the file before allocating anything.
  const std::uint64_t available = file_size - data_start;
  // Also the product of the sizes with zeros taken as 1: the packed strides of an empty array must fit as well.
  std::int64_t needed = static_cast<std::int64_t>(element_size(header.dtype));
  std::int64_t span = needed;
  for (const std::int64_t size : header.shape) {
    if (__builtin_mul_overflow(needed, size, &needed) || __builtin_mul_overflow(span, size > 1 ? size : 1, &span)) {
      fail(ErrorCode::Format, path,
           "shape " + header.shape_source + " of '" + header.descr +
               "' is too large: its byte size overflows int64; the file holds " + std::to_string(available) +
               " data bytes");
    }
  }
  const auto needed_bytes = static_cast<std::uint64_t>(needed);
  const std::string requirement = "shape " + header.shape_source + " of '" + header.descr + "' needs " +
                                  std::to_string(needed_bytes) + " data bytes after the " + std::to_string(data_start) +
                                  "-byte header and the file has " + std::to_string(available);
  if (available < needed_bytes) fail(ErrorCode::Format, path, "the data is truncated: " + requirement);
  if (available > needed_bytes) {
    fail(ErrorCode::Format, path,
         std::to_string(available - needed_bytes) + " unexpected bytes follow the data: " + requirement +
             "; the file must end with the data");
  }

  return {header, data_start};
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::size_t size = 0;
  const FileDescriptor fd = detail::open_input_file(path, "a .npy file", size);
  const CheckedHeader checked = read_checked_header(path, fd, size);
  Tensor tensor(checked.header.dtype, checked.header.shape);
  read_exact(fd.get(), path, tensor.data(), tensor.byte_size(), checked.data_start);
  return tensor;
}

NpyInfo read_npy_info(const std::string& path) {
  std::size_t size = 0;
  const FileDescriptor fd = detail::open_input_file(path, "a .npy file", size);
  const CheckedHeader checked = read_checked_header(path, fd, size);
  return {checked.header.dtype, checked.header.shape};
}

void write_npy(const std::string& path, const ConstTensorView& tensor) {
  if (tensor.dtype() == DataType::UNorm8 || tensor.dtype() == DataType::UNorm16) {
    detail::fail(ErrorCode::InvalidDataType, path,
                 std::string("a ") + to_string(tensor.dtype()) +
                     " tensor cannot be written as .npy; float32, float16 or uint32 is allowed");
  }
  const std::string preamble = make_preamble(tensor);
  detail::AtomicFile file(path);
  file.write(preamble.data(), preamble.size());
  write_elements(file, tensor);
  file.commit();
}

bool starts_as_npy(const std::string& head) { return head.compare(0, kMagicSize, kMagic, kMagicSize) == 0; }

}  // namespace rsz::io
