#include "json_util.h"

#include "rsz/io/temporary_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "file_util.h"
#include "rsz/error.h"

namespace rsz::io::detail {
namespace {

// Control characters (newlines included) as spaces: messages stay on one line.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return text;
}

// Cuts `text` to at most `max` bytes without splitting a UTF-8 sequence, marking the cut with "...".
std::string shorten(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// Frames of the parse callback: the containers being parsed, to name the path of a duplicate key.
struct Frame {
  bool object = false;
  // The object's keys so far: the first kFewKeys in `keys` (compared one by one), all of them in `many` past that. An
  // object's frame takes its `keys` from the frames that closed before it, so that a file of many small objects (a
  // COCO file's annotations) does not allocate a set node a key: that took a fifth of a train2017-size file's parse.
  std::vector<std::string> keys;
  std::unique_ptr<std::unordered_set<std::string>> many;
  std::string key;
  std::size_t index = 0;
};
constexpr std::size_t kFewKeys = 16;

// Whether `key` is new to the frame's object (and now recorded).
bool first_time(Frame& frame, const std::string& key) {
  if (frame.many) return frame.many->insert(key).second;
  if (std::find(frame.keys.begin(), frame.keys.end(), key) != frame.keys.end()) return false;
  if (frame.keys.size() < kFewKeys) {
    frame.keys.push_back(key);
  } else {
    frame.many = std::make_unique<std::unordered_set<std::string>>(frame.keys.begin(), frame.keys.end());
    frame.many->insert(key);
  }
  return true;
}

std::string frames_pointer(const std::vector<Frame>& frames) {
  std::string pointer;
  for (const Frame& frame : frames) {
    pointer += "/" + (frame.object ? pointer_token(frame.key) : std::to_string(frame.index));
  }
  return pointer;
}

std::string format_int_range(std::int64_t min, std::int64_t max) {
  if (max == std::numeric_limits<std::int64_t>::max()) {
    return "an integer >= " + std::to_string(min) + " (at most " + std::to_string(max) + ")";
  }
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

}  // namespace

std::string read_text_file(const std::string& path, std::size_t max_bytes, const char* what) {
  std::size_t size = 0;
  const FileDescriptor fd = open_input_file(path, what, size);
  if (size > max_bytes) {
    fail(ErrorCode::InvalidArgument, path,
         "the file is " + std::to_string(size >> 20) + " MiB, larger than " + std::to_string(max_bytes >> 20) +
             " MiB; files of this kind are read up to " + std::to_string(max_bytes >> 20) + " MiB");
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(ErrorCode::Io, path, "cannot read: " + system_message(errno));
    }
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > max_bytes) {
      fail(ErrorCode::InvalidArgument, path, "larger than " + std::to_string(max_bytes >> 20) + " MiB; not a file rsz reads");
    }
  }
  return text;
}

std::string pointer_token(const std::string& key) {
  std::string token;
  for (const char c : key) {
    if (c == '~') {
      token += "~0";
    } else if (c == '/') {
      token += "~1";
    } else {
      token += c;
    }
  }
  return token;
}

// The DOM of a JSON text, built by nlohmann's SAX DOM builder with rsz's checks on the way: the nesting depth, keys
// given twice in one object, and the path being read (for messages). Not nlohmann's callback parser, which does the
// same checks through a callback: in nlohmann 3.11 it scans a container from its first element each time an object
// inside it ends, so a COCO file of 500k annotations took minutes instead of a second.
std::atomic<std::uint64_t> g_json_budget{std::numeric_limits<std::uint64_t>::max()};

// What the parsed document takes, counted as it is built (libstdc++ on 64 bits): a value 16 bytes in its container
// (with the container's spare capacity, about 24), a string 32 more and its characters past the 15 kept inline, an
// object member a tree node of about 80 bytes with its key, an object or array 48 bytes of its own.
constexpr std::uint64_t kValueBytes = 24;
constexpr std::uint64_t kStringBytes = 32;
constexpr std::uint64_t kMemberBytes = 80;
constexpr std::uint64_t kContainerBytes = 48;
std::uint64_t heap_characters(const std::string& s) { return s.size() > 15 ? s.size() + 1 : 0; }

class CheckedDomBuilder {
 public:
  CheckedDomBuilder(Json& result, const std::string& source, std::uint64_t text_bytes, const SkippedValues& skipped)
      : dom_(result, true), source_(source), skipped_(skipped), used_(text_bytes), budget_(thread_settings() != nullptr ? thread_settings()->json_memory_budget : g_json_budget.load()) {
    account(0);
  }

  bool null() { return skipping() || value(dom_.null()); }
  bool boolean(bool v) { return skipping() || value(dom_.boolean(v)); }
  bool number_integer(Json::number_integer_t v) { return skipping() || value(dom_.number_integer(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return skipping() || value(dom_.number_unsigned(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t& text) {
    return skipping() || value(dom_.number_float(v, text));
  }
  bool string(Json::string_t& v) {
    if (skipping()) return true;
    account(kStringBytes + heap_characters(v));
    return value(dom_.string(v));
  }
  bool binary(Json::binary_t& v) {
    if (skipping()) return true;
    account(kStringBytes + v.size());
    return value(dom_.binary(v));
  }
  bool start_object(std::size_t size) {
    if (skip_container()) return true;
    account(kContainerBytes);
    open(true);
    return dom_.start_object(size);
  }
  bool key(Json::string_t& key) {
    if (skip_depth_ > 0) return true;
    skip_next_ = is_skipped(key);
    account(kMemberBytes + heap_characters(key));
    Frame& frame = frames_.back();
    frame.key = key;
    if (!first_time(frame, key)) {
      fail(ErrorCode::InvalidArgument, source_,
           "duplicate key \"" + one_line(shorten(key, 60)) + "\" at " + frames_pointer(frames_) +
               "; each key may appear once per object");
    }
    return dom_.key(key);
  }
  bool end_object() { return skip_end() || close(dom_.end_object()); }
  bool start_array(std::size_t size) {
    if (skip_container()) return true;
    account(kContainerBytes);
    open(false);
    return dom_.start_array(size);
  }
  bool end_array() { return skip_end() || close(dom_.end_array()); }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& error) {
    return dom_.parse_error(position, token, error);  // throws `error`
  }

  const std::vector<Frame>& frames() const { return frames_; }

 private:
  void open(bool object) {
    if (frames_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
      fail(ErrorCode::InvalidArgument, source_,
           "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels at " + frames_pointer(frames_));
    }
    Frame frame;
    frame.object = object;
    if (object && !spare_keys_.empty()) {
      frame.keys = std::move(spare_keys_.back());
      frame.keys.clear();  // its room kept
      spare_keys_.pop_back();
    }
    frames_.push_back(std::move(frame));
  }
  bool close(bool ok) {
    if (frames_.back().object) spare_keys_.push_back(std::move(frames_.back().keys));
    frames_.pop_back();
    return value(ok);
  }
  // Inside a skipped value: nothing is kept. Otherwise a value other than a container ends the key's skip.
  bool skipping() {
    skip_next_ = false;
    return skip_depth_ > 0;
  }
  // A container that starts inside a skipped value or is one: counted, not kept.
  bool skip_container() {
    if (skip_depth_ == 0 && !skip_next_) return false;
    skip_next_ = false;
    if (frames_.size() + static_cast<std::size_t>(skip_depth_) >= static_cast<std::size_t>(kMaxJsonDepth)) {
      fail(ErrorCode::InvalidArgument, source_,
           "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels at " + frames_pointer(frames_));
    }
    ++skip_depth_;
    return true;
  }
  // A container of a skipped value ends; the value's own end puts null in its place. False outside skipped values.
  bool skip_end() {
    if (skip_depth_ == 0) return false;
    return --skip_depth_ > 0 || value(dom_.null());
  }
  // Whether the value of `key` (in the innermost object) is one of skipped_.
  bool is_skipped(const std::string& key) const {
    for (const std::vector<std::string>& path : skipped_) {
      if (path.size() != frames_.size() || path.back() != key) continue;
      bool match = true;
      for (std::size_t i = 0; i + 1 < path.size() && match; ++i) {
        const Frame& frame = frames_[i];
        match = frame.object ? path[i] != "*" && path[i] == frame.key : path[i] == "*";
      }
      if (match) return true;
    }
    return false;
  }
  // A value (or a whole container) of the enclosing array is done: the next one has the next index.
  bool value(bool ok) {
    account(kValueBytes);
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return ok;
  }
  // `bytes` more of the document: past the budget the parse stops (set_json_memory_budget).
  void account(std::uint64_t bytes) {
    used_ += bytes;
    if (used_ > budget_) {
      fail(ErrorCode::InvalidArgument, source_,
           "this JSON file needs more than the memory budget of " + bytes_text(budget_) +
               " once parsed (its text and the values read so far, up to " + frames_pointer(frames_) +
               "); raise --max-memory");
    }
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  const std::string& source_;
  const SkippedValues& skipped_;
  int skip_depth_ = 0;      // containers open inside a skipped value (0: none)
  bool skip_next_ = false;  // the key just read is a skipped value's
  std::vector<Frame> frames_;
  std::vector<std::vector<std::string>> spare_keys_;  // the closed objects' key lists, for the next ones
  std::uint64_t used_;
  std::uint64_t budget_;
};

Json parse_json(const std::string& text, const std::string& source, const SkippedValues& skipped) {
  Json result;
  CheckedDomBuilder builder(result, source, text.size(), skipped);
  const std::vector<Frame>& frames = builder.frames();
  try {
    Json::sax_parse(text, &builder);
    return result;
  } catch (const Json::parse_error& e) {
    // Line and column of the byte where parsing stopped (e.byte is 1-based).
    const std::size_t byte = e.byte == 0 ? 0 : static_cast<std::size_t>(e.byte) - 1;
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." -> "syntax error ..."
    const std::size_t column_at = what.find("column ");
    const std::size_t colon = column_at == std::string::npos ? std::string::npos : what.find(": ", column_at);
    if (colon != std::string::npos) {
      what = what.substr(colon + 2);
    } else if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos) {
      what = what.substr(what.find("] ") + 2);
    }
    fail(ErrorCode::InvalidArgument, source,
         "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
             std::to_string(e.byte) + "): " + one_line(shorten(what, 200)));
  } catch (const Json::exception& e) {
    // Number overflow (out_of_range.406, "1e400"): named by the key being parsed, which the frames still hold.
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos) {
      what = what.substr(what.find("] ") + 2);
    }
    std::string key;
    for (auto it = frames.rbegin(); it != frames.rend() && key.empty(); ++it) {
      if (it->object) key = it->key;
    }
    const std::string where = frames.empty()
                                  ? std::string("invalid JSON")
                                  : "key \"" + one_line(shorten(key, 60)) + "\" at " + one_line(frames_pointer(frames));
    fail(ErrorCode::InvalidArgument, source, where + ": " + one_line(shorten(what, 200)) + "; expected a finite number");
  }
}

// ---- Ref ----

std::optional<Ref> Ref::find(const std::string& name) const {
  const auto it = value_->find(name);
  if (it == value_->end()) return std::nullopt;
  return Ref(*it, *source_, pointer_ + "/" + pointer_token(name), name);
}

Ref Ref::required(const std::string& name) const {
  std::optional<Ref> member = find(name);
  if (!member) {
    throw Error(ErrorCode::InvalidArgument, *source_ + ": key \"" + name + "\" at " + pointer_ + "/" + pointer_token(name) +
                                      ": required key is missing");
  }
  return *member;
}

Ref Ref::element(std::size_t i) const { return Ref((*value_)[i], *source_, pointer_ + "/" + std::to_string(i), key_); }

void Ref::fail(const std::string& what) const {
  if (key_.empty() && pointer_.empty()) detail::fail(ErrorCode::InvalidArgument, *source_, "at the top level: " + what);
  const std::string where = pointer_.empty() ? std::string("the top level") : pointer_;
  detail::fail(ErrorCode::InvalidArgument, *source_,
               "key \"" + one_line(shorten(key_, 60)) + "\" at " + one_line(where) + ": " + what);
}

void Ref::fail_expected(const std::string& expected) const {
  fail("expected " + expected + ", got " + describe(*value_));
}

std::string describe(const Json& value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) return "a number beyond the float64 range";
  return one_line(shorten(value.dump(-1, ' ', false, Json::error_handler_t::replace), 60));
}

void expect_object(const Ref& ref, const std::vector<std::string>& allowed) {
  if (!ref.json().is_object()) ref.fail_expected("an object");
  for (auto it = ref.json().begin(); it != ref.json().end(); ++it) {
    bool known = false;
    for (const std::string& name : allowed) known = known || name == it.key();
    if (known) continue;
    std::string list;
    for (const std::string& name : allowed) list += (list.empty() ? "" : ", ") + name;
    fail(ErrorCode::InvalidArgument, ref.source(),
         "unknown key \"" + one_line(shorten(it.key(), 60)) + "\" at " + ref.pointer() + "/" +
             one_line(shorten(pointer_token(it.key()), 60)) + "; allowed keys: " + list);
  }
}

void expect_array(const Ref& ref, const char* what, std::optional<std::size_t> size) {
  if (!ref.json().is_array() || (size && ref.json().size() != *size)) {
    ref.fail_expected(size ? "an array of " + std::to_string(*size) + " " + what : std::string("an array of ") + what);
  }
}

std::string get_string(const Ref& ref) {
  if (!ref.json().is_string()) ref.fail_expected("a string");
  return ref.json().get<std::string>();
}

std::string get_nonempty_string(const Ref& ref) {
  if (!ref.json().is_string() || ref.json().get_ref<const std::string&>().empty()) {
    ref.fail_expected("a non-empty string");
  }
  return ref.json().get<std::string>();
}

bool get_bool(const Ref& ref) {
  if (!ref.json().is_boolean()) ref.fail_expected("true or false");
  return ref.json().get<bool>();
}

float get_float(const Ref& ref) {
  const Json& j = ref.json();
  if (!j.is_number()) ref.fail_expected("a finite number");
  const double value = j.get<double>();
  if (!std::isfinite(value) || std::fabs(value) > static_cast<double>(std::numeric_limits<float>::max())) {
    ref.fail_expected("a finite number (float32: magnitude at most 3.40282347e+38)");
  }
  return static_cast<float>(value);
}

std::int64_t get_int(const Ref& ref, std::int64_t min, std::int64_t max) {
  const Json& j = ref.json();
  const std::string expected = format_int_range(min, max);
  if (j.is_number_unsigned()) {
    const auto value = j.get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(max)) ref.fail_expected(expected);
    const auto signed_value = static_cast<std::int64_t>(value);
    if (signed_value < min) ref.fail_expected(expected);
    return signed_value;
  }
  if (j.is_number_integer()) {
    const auto value = j.get<std::int64_t>();
    if (value < min || value > max) ref.fail_expected(expected);
    return value;
  }
  if (j.is_number_float()) {
    const double value = j.get<double>();
    if (!std::isfinite(value) || std::floor(value) != value) ref.fail_expected(expected);
    // Integral doubles: compare in double, where min and max round to nearby powers of two at worst.
    if (value < static_cast<double>(min) || value >= static_cast<double>(max) + 1.0 || value >= 9223372036854775808.0) {
      ref.fail_expected(expected);
    }
    const auto result = static_cast<std::int64_t>(value);
    if (result < min || result > max) ref.fail_expected(expected);
    return result;
  }
  ref.fail_expected(expected);
}

std::uint32_t get_uint32(const Ref& ref, std::uint32_t min) {
  return static_cast<std::uint32_t>(get_int(ref, min, std::numeric_limits<std::uint32_t>::max()));
}

std::array<float, 4> get_float4(const Ref& ref) {
  expect_array(ref, "numbers", 4);
  std::array<float, 4> values{};
  for (std::size_t i = 0; i < 4; ++i) values[i] = get_float(ref.element(i));
  return values;
}

std::string resolve_path(const std::string& base_dir, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

}  // namespace rsz::io::detail

namespace rsz::io {

void set_json_memory_budget(std::uint64_t bytes) noexcept { detail::g_json_budget.store(bytes); }

std::string bytes_text(std::uint64_t bytes) {
  static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  std::ostringstream s;
  if (unit == 0) {
    s << bytes << " bytes";
  } else {
    s.setf(std::ios::fixed);
    s.precision(value < 10 ? 2 : 1);
    s << value << " " << units[unit];
  }
  return s.str();
}

}  // namespace rsz::io
