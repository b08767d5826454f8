// What the header probes of codecs/*.cpp share (not installed, not public): bounds-checked access to a file's bytes,
// TIFF-style integers of either byte order, and the truncation complaint.
//
// Before a codec sees the bytes, a small bounds-checked probe per format reads the image size, so that images above
// max_pixels are refused before any pixel buffer exists, and catches files cut short that a codec would otherwise
// decode partially with only a warning. No codec library is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "codecs/codec.h"

namespace rsz::io::detail {

// Bounds-checked access to the file bytes. Asking for bytes past the end of an incomplete prefix throws
// NeedMoreBytes; past the end of the whole file, has() answers false.
class Bytes {
 public:
  explicit Bytes(const FileBytes& bytes) : b_(bytes) {}
  std::size_t size() const { return b_.size; }
  bool has(std::size_t offset, std::size_t count) const {
    if (offset <= b_.size && count <= b_.size - offset) return true;
    if (!b_.complete) throw NeedMoreBytes{};
    return false;
  }
  const std::uint8_t* at(std::size_t offset) const { return b_.data + offset; }
  std::uint32_t u8(std::size_t offset) const { return b_.data[offset]; }
  std::uint32_t be16(std::size_t offset) const { return (u8(offset) << 8) | u8(offset + 1); }
  std::uint32_t le16(std::size_t offset) const { return u8(offset) | (u8(offset + 1) << 8); }
  std::uint32_t le24(std::size_t offset) const { return le16(offset) | (u8(offset + 2) << 16); }
  std::uint32_t le32(std::size_t offset) const { return le16(offset) | (le16(offset + 2) << 16); }

 private:
  FileBytes b_;
};

// Reads 16/32/64-bit TIFF-style integers of either byte order from a buffer.
struct EndianReader {
  const std::uint8_t* data;
  bool little;
  std::uint64_t get(std::size_t offset, int count) const {
    std::uint64_t value = 0;
    for (int i = 0; i < count; ++i) {
      const int index = little ? count - 1 - i : i;
      value = (value << 8) | data[offset + static_cast<std::size_t>(index)];
    }
    return value;
  }
};

// "the <format> file is truncated: it ends after <size> bytes, <before>; a complete <format> file is required".
[[noreturn]] void fail_truncated(const std::string& path, const Codec& codec, std::size_t size,
                                 const std::string& before);

// True when the file starts with `length` bytes of `magic` at `at`.
inline bool starts_with(const std::uint8_t* data, std::size_t size, const char* magic, std::size_t length,
                        std::size_t at = 0) {
  return size >= at + length && std::memcmp(data + at, magic, length) == 0;
}

}  // namespace rsz::io::detail
