// Image files: format detection, reading, header facts and atomic writing, through the codec table
// (codecs/codec.h), which names the functions that probe, decode and encode each format and what each can hold. The
// helpers shared with the codecs are declared in image_internal.h.
#include "rsz/io/image.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "codecs/codec.h"
#include "image_internal.h"

namespace rsz::io {
namespace detail {

std::string size_text(std::int64_t width, std::int64_t height) {
  return std::to_string(width) + " x " + std::to_string(height);
}

void check_pixel_limit(const std::string& path, std::int64_t width, std::int64_t height,
                       const ImageReadOptions& options) {
  std::int64_t pixels = 0;
  if (__builtin_mul_overflow(width, height, &pixels) || pixels > options.max_pixels) {
    fail(ErrorCode::Format, path,
         "the image is " + size_text(width, height) + " pixels, more than max_pixels (" +
             std::to_string(options.max_pixels) + "); images of at most " + std::to_string(options.max_pixels) +
             " pixels are allowed");
  }
}

void check_image(const std::string& path, const Image& image) {
  if (image.channels < 1 || image.channels > 4) {
    fail(ErrorCode::InvalidArgument, path,
         "the image has " + std::to_string(image.channels) + " channels; 1 to 4 are allowed");
  }
  if (image.bit_depth != 8 && image.bit_depth != 16) {
    fail(ErrorCode::InvalidArgument, path,
         "the image has bit depth " + std::to_string(image.bit_depth) + "; 8 or 16 is allowed");
  }
  if (image.width < 1 || image.height < 1) {
    fail(ErrorCode::InvalidArgument, path,
         "the image is " + size_text(image.width, image.height) + " pixels; width and height >= 1 are allowed");
  }
  std::int64_t samples = 0;
  if (__builtin_mul_overflow(image.width, image.height, &samples) ||
      __builtin_mul_overflow(samples, std::int64_t{image.channels}, &samples)) {
    fail(ErrorCode::InvalidArgument, path,
         "the image is " + size_text(image.width, image.height) + " pixels, too large to address");
  }
  const std::size_t have = image.bit_depth == 8 ? image.data8.size() : image.data16.size();
  if (have != static_cast<std::size_t>(samples)) {
    fail(ErrorCode::InvalidArgument, path,
         "the image is " + size_text(image.width, image.height) + " x " + std::to_string(image.channels) +
             " channels = " + std::to_string(samples) + " samples but its " +
             (image.bit_depth == 8 ? "data8" : "data16") + " buffer holds " + std::to_string(have));
  }
}

void write_file_atomic(const std::string& path, const std::uint8_t* data, std::size_t size) {
  AtomicFile file(path);
  file.write(data, size);
  file.commit();
}

Orientation::Orientation(int orientation, std::int64_t w, std::int64_t h) {
  const bool transpose = orientation >= 5;
  out_width = transpose ? h : w;
  out_height = transpose ? w : h;
  switch (orientation) {
    case 2: x0 = w - 1, xx = -1; break;                                       // mirrored left-right
    case 3: x0 = w - 1, xx = -1, y0 = h - 1, yy = -1; break;                  // turned 180 degrees
    case 4: y0 = h - 1, yy = -1; break;                                       // mirrored top-bottom
    case 5: xx = 0, xy = 1, yx = 1, yy = 0; break;                            // transposed
    case 6: x0 = h - 1, xx = 0, xy = -1, yx = 1, yy = 0; break;               // turn 90 degrees clockwise
    case 7: x0 = h - 1, xx = 0, xy = -1, y0 = w - 1, yx = -1, yy = 0; break;  // transverse
    case 8: xx = 0, xy = 1, y0 = w - 1, yx = -1, yy = 0; break;               // turn 90 degrees anticlockwise
    default: break;
  }
}

std::size_t FileSource::read(std::uint8_t* out, std::size_t length) noexcept {
  std::size_t done = 0;
  while (done < length) {
    if (position_ < prefix_.size) {  // the first bytes, read before decoding began
      const std::size_t n = std::min(length - done, prefix_.size - position_);
      std::memcpy(out + done, prefix_.data + position_, n);
      done += n;
      position_ += n;
      continue;
    }
    if (taken_ == buffered_) {
      const ssize_t got = ::read(fd_, buffer_.data(), buffer_.size());
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        error_ = got < 0 ? errno : 0;
        break;
      }
      buffered_ = static_cast<std::size_t>(got);
      taken_ = 0;
    }
    const std::size_t n = std::min(length - done, buffered_ - taken_);
    std::memcpy(out + done, buffer_.data() + taken_, n);
    done += n;
    taken_ += n;
    position_ += n;
  }
  return done;
}

ImageInfo info_from_header(const Codec& codec, const std::string& path, const FileBytes& bytes,
                           const ImageReadOptions& options) {
  HeaderFacts facts = codec.probe(codec, path, bytes, /*whole=*/false, options);
  if (facts.channels == 0) {
    if (!bytes.complete) throw NeedMoreBytes{};
    if (codec.decoded_facts == nullptr) throw InternalError("rsz::io: a header probe left the channels unknown");
    codec.decoded_facts(codec, path, bytes, facts);
  }
  ImageInfo info;
  // JPEG's EXIF orientation and TIFF's Orientation tag: the size of the image as read_image makes it.
  const bool transpose = options.apply_exif_orientation && facts.orientation >= 5;
  info.width = transpose ? facts.height : facts.width;
  info.height = transpose ? facts.width : facts.height;
  info.channels = facts.channels;
  info.bit_depth = facts.bit_depth;
  info.format = codec.name;
  info.max_shrink = codec.max_shrink;
  info.rows_in_order = codec.open_rows != nullptr && !facts.progressive &&
                       (!options.apply_exif_orientation || facts.orientation == 1);
  if (facts.progressive) {  // every 8 x 8 block of every component at full size (an upper bound for subsampled chroma)
    const auto blocks = static_cast<std::uint64_t>((facts.width + 15) / 8) * static_cast<std::uint64_t>((facts.height + 15) / 8);
    info.decoder_bytes = blocks * 128 * static_cast<std::uint64_t>(std::max(facts.components, 1));
  }
  info.metadata_bytes = facts.metadata_bytes;
  info.animated = facts.animated;
  info.decoder_bytes += facts.decoder_bytes;
  return info;
}

}  // namespace detail

namespace {

using detail::Codec;
using detail::fail;
using detail::FileBytes;

// Refuses a file of `size` bytes above options.max_file_bytes for a codec that decodes it whole in memory.
void check_whole_file(const std::string& path, const Codec& codec, std::size_t size, const ImageReadOptions& options) {
  if (options.max_file_bytes > 0 && size > options.max_file_bytes) {
    fail(ErrorCode::Format, path,
         "the file is " + std::to_string(size) + " bytes, more than max_file_bytes (" +
             std::to_string(options.max_file_bytes) + ") for a " + codec.display_name +
             " file, which is decoded whole in memory");
  }
}

// Reads a file on demand: a prefix first, all of it when asked.
class FileReader {
 public:
  explicit FileReader(const std::string& path)
      : path_(path), fd_(detail::open_input_file(path, "an image file", expected_size_)) {}

  // Reads until at least `limit` bytes are held or the file ends.
  FileBytes read_up_to(std::size_t limit) {
    while (!eof_ && bytes_.size() < limit) {
      std::size_t chunk = limit - bytes_.size();
      chunk = expected_size_ > bytes_.size() ? std::min(chunk, expected_size_ - bytes_.size())
                                             : std::min<std::size_t>(chunk, std::size_t{1} << 16);
      chunk = std::min<std::size_t>(chunk, std::size_t{1} << 26);
      const std::size_t old = bytes_.size();
      bytes_.resize(old + chunk);
      const ssize_t got = ::read(fd_.get(), bytes_.data() + old, chunk);
      if (got < 0) {
        const int err = errno;
        bytes_.resize(old);
        if (err == EINTR) continue;
        fail(ErrorCode::Io, path_, "cannot read: " + detail::system_message(err));
      }
      bytes_.resize(old + static_cast<std::size_t>(got));
      if (got == 0) eof_ = true;
    }
    return FileBytes{bytes_.data(), bytes_.size(), eof_};
  }
  // All of it, for a decoder that takes the whole file in memory: refused above options.max_file_bytes.
  FileBytes read_all(const Codec& codec, const ImageReadOptions& options) {
    check_whole_file(path_, codec, expected_size_, options);
    bytes_.reserve(expected_size_ + (std::size_t{1} << 16));  // one allocation, with room for the read that finds the end
    return read_up_to(static_cast<std::size_t>(-1));
  }
  // The file from its start for a codec that reads it as it decodes: the bytes held so far, then the rest.
  detail::FileSource source() { return detail::FileSource(FileBytes{bytes_.data(), bytes_.size(), eof_}, fd_.get()); }
  std::size_t size() const { return expected_size_; }

 private:
  std::string path_;
  std::size_t expected_size_ = 0;  // declared before fd_: open_input_file fills it
  detail::FileDescriptor fd_;
  std::vector<std::uint8_t> bytes_;
  bool eof_ = false;
};

constexpr std::size_t kHeaderPrefix = std::size_t{256} << 10;
// Enough first bytes for every codec's sniffer (BMP's needs 18).
constexpr std::size_t kSniffPrefix = 64;

void check_read_options(const std::string& path, const ImageReadOptions& options) {
  if (options.max_pixels < 1) {
    fail(ErrorCode::InvalidArgument, path,
         "max_pixels " + std::to_string(options.max_pixels) + " is not allowed; a value >= 1 is required");
  }
  if (options.jpeg_shrink != 1 && options.jpeg_shrink != 2 && options.jpeg_shrink != 4 && options.jpeg_shrink != 8) {
    fail(ErrorCode::InvalidArgument, path,
         "jpeg_shrink " + std::to_string(options.jpeg_shrink) + " is not allowed; 1, 2, 4 or 8 is");
  }
}

// Identifies a file's format from its first bytes (`head`, up to kSniffPrefix of them).
const Codec& identify(const std::string& path, const FileBytes& head) {
  if (head.size == 0)
    fail(ErrorCode::Format, path,
         "the file is empty (0 bytes); an image file is required: " + detail::readable_formats_text());
  const Codec* codec = detail::sniff_codec(head.data, head.size);
  // The message shows none of the file's bytes: a name from an untrusted dataset could point at a secret file.
  if (codec == nullptr) {
    fail(ErrorCode::Format, path, "not an image file of a known format; " + detail::readable_formats_text());
  }
  return *codec;
}

// Opens the file and identifies its format from its first bytes.
const Codec& identify(const std::string& path, FileReader& reader) {
  return identify(path, reader.read_up_to(kSniffPrefix));
}

void check_write_options(const std::string& path, const ImageWriteOptions& options) {
  if (options.quality < 0 || options.quality > 100) {
    fail(ErrorCode::InvalidArgument, path,
         "quality " + std::to_string(options.quality) + " is not allowed; 1 to 100 (or 0 for the default) is allowed");
  }
  if (options.png_compression < -1 || options.png_compression > 9) {
    fail(ErrorCode::InvalidArgument, path,
         "PNG compression " + std::to_string(options.png_compression) +
             " is not allowed; 0 (none) to 9 (smallest), or -1 for the fast default, is allowed");
  }
}

}  // namespace

bool is_image_path(const std::string& path) { return detail::codec_for_extension(path) != nullptr; }

bool is_readable_image_path(const std::string& path) {
  return detail::codec_for_extension(path, /*read_only_too=*/true) != nullptr;  // with .pbm and .pnm
}

bool same_image_format(const std::string& a, const std::string& b) {
  const Codec* codec = detail::codec_for_extension(a);
  return codec != nullptr && codec == detail::codec_for_extension(b);
}

std::vector<std::string> writable_image_extensions() {
  std::vector<std::string> extensions;
  for (const Codec& codec : detail::codecs()) {
    if (!codec.writable()) continue;
    for (const char* ext : codec.extensions) {
      if (ext != nullptr) extensions.emplace_back(ext);
    }
  }
  return extensions;
}

bool format_keeps_alpha(const std::string& path) {
  const Codec* codec = detail::codec_for_extension(path);
  return codec != nullptr && (codec->writes_channels(2) || codec->writes_channels(4));
}

bool format_keeps_16_bits(const std::string& path) {
  const Codec* codec = detail::codec_for_extension(path);
  return codec != nullptr && codec->writes_depth(16);
}

std::string image_format_name(const std::string& path) {
  const Codec* codec = detail::codec_for_extension(path);
  return codec != nullptr ? codec->name : "";
}

int max_shrink_of(const std::string& path) {
  const Codec* codec = detail::codec_for_extension(path);
  return codec != nullptr ? codec->max_shrink : 1;
}

int channels_read_back(const std::string& path, int channels) {
  const Codec* codec = detail::codec_for_extension(path);
  if (codec == nullptr || !codec->gray_as_rgb || channels > 2) return channels;
  return channels == 1 ? 3 : 4;  // gray + alpha comes back as RGBA
}

std::string sniff_image_extension(const std::string& head) {
  const Codec* codec = detail::sniff_codec(reinterpret_cast<const std::uint8_t*>(head.data()), head.size());
  return codec != nullptr ? codec->extensions[0] : "";
}

const std::string& readable_image_formats() { return detail::readable_formats_list(); }

std::uint64_t encode_scratch_bytes(const std::string& path, std::uint64_t sample_bytes, int png_compression) {
#if defined(RSZ_HAVE_LIBDEFLATE)
  const Codec* codec = detail::codec_for_extension(path);
  if (codec != nullptr && codec->format == detail::ImageFormat::Png && png_compression < 0 &&
      sample_bytes <= detail::kPngDeflateMaxBytes) {
    return sample_bytes + sample_bytes / 64 + 64;  // the rows and their filter bytes
  }
#else
  (void)path;
  (void)sample_bytes;
  (void)png_compression;
#endif
  return 0;
}

bool encodes_image_rows(const std::string& path) {
  const Codec* codec = detail::codec_for_extension(path);
  return codec != nullptr && codec->streams_rows();
}

Image read_image(const std::string& path, const ImageReadOptions& options) {
  check_read_options(path, options);
  FileReader reader(path);
  const Codec& codec = identify(path, reader);
  if (codec.reads_stream()) {
    detail::FileSource source = reader.source();
    return codec.stream_decode(codec, path, source, options);
  }
  const FileBytes bytes = reader.read_all(codec, options);
  return codec.decode(codec, path, bytes, options);
}

void ImageRows::read(std::uint8_t* dst, std::int64_t count) {
  if (count < 0 || count > header_.height - next_) {
    throw Error(ErrorCode::InvalidArgument, "rsz::io::ImageRows::read: " + std::to_string(count) + " rows from row " +
                                                std::to_string(next_) + " of " + std::to_string(header_.height));
  }
  decode(dst, count);
  next_ += count;
}

std::unique_ptr<ImageRows> open_image_rows(const std::string& path, const ImageReadOptions& options) {
  check_read_options(path, options);
  auto reader = std::make_shared<FileReader>(path);
  const Codec& codec = identify(path, *reader);
  if (codec.open_rows == nullptr) return nullptr;
  if (codec.reads_stream()) {  // read as it decodes: the rows hold the file open, not its bytes
    struct Stream {
      std::shared_ptr<FileReader> reader;
      detail::FileSource source;
    };
    auto stream = std::make_shared<Stream>(Stream{reader, reader->source()});
    detail::FileSource* source = &stream->source;
    return codec.open_rows(codec, path, std::move(stream), FileBytes{}, source, options);
  }
  const FileBytes bytes = reader->read_all(codec, options);
  return codec.open_rows(codec, path, reader, bytes, nullptr, options);
}

std::unique_ptr<ImageRows> open_image_rows(const std::string& path, std::shared_ptr<const std::string> file,
                                           const ImageReadOptions& options) {
  check_read_options(path, options);
  if (!file) fail(ErrorCode::InvalidArgument, path, "rsz::io::open_image_rows: no file bytes");
  const FileBytes bytes{reinterpret_cast<const std::uint8_t*>(file->data()), file->size(), true};
  const Codec& codec = identify(path, FileBytes{bytes.data, std::min(bytes.size, kSniffPrefix), bytes.complete});
  if (codec.open_rows == nullptr || codec.reads_stream()) return nullptr;
  check_whole_file(path, codec, bytes.size, options);
  return codec.open_rows(codec, path, std::move(file), bytes, nullptr, options);
}

ImageInfo read_image_info(const std::string& path, const ImageReadOptions& options) {
  check_read_options(path, options);
  FileReader reader(path);
  const Codec& codec = identify(path, reader);
  if (codec.reads_stream()) {
    detail::FileSource source = reader.source();
    return codec.stream_info(codec, path, source, options);
  }
  FileBytes bytes = reader.read_up_to(kHeaderPrefix);
  for (;;) {
    try {
      ImageInfo info = codec.info(codec, path, bytes, options);
      info.file_bytes = reader.size();
      return info;
    } catch (const detail::NeedMoreBytes&) {
      if (bytes.complete) throw InternalError("rsz::io::read_image_info: NeedMoreBytes from a complete file");
      bytes = reader.read_all(codec, options);
    }
  }
}

std::string image_output_problem(const std::string& path, std::int64_t width, std::int64_t height, int channels,
                                 int bit_depth) {
  const Codec* codec = detail::codec_for_extension(path);
  if (codec == nullptr) {
    const std::string ext = std::filesystem::path(path).extension().string();
    return (ext.empty() ? std::string("the file name has no extension")
                        : "extension '" + ext + "' is not an image format") +
           " rsz can write; " + detail::writable_extensions_text();
  }
  Image facts;  // header facts only: write_problem reads no pixels
  facts.width = width;
  facts.height = height;
  facts.channels = channels;
  facts.bit_depth = bit_depth;
  return detail::write_problem(*codec, facts);
}

namespace detail {

RowFeed whole_image_feed(const Image& image) {
  RowFeed feed;
  const std::size_t row_bytes = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.channels) *
                                static_cast<std::size_t>(image.bit_depth / 8);
  const auto* base = image.bit_depth == 16 ? reinterpret_cast<const std::uint8_t*>(image.data16.data())
                                           : image.data8.data();
  feed.band = [base, row_bytes](std::int64_t first, std::int64_t) {
    return base + row_bytes * static_cast<std::size_t>(first);
  };
  return feed;
}

}  // namespace detail

namespace {

const Codec& writable_codec(const std::string& path, const Image& image) {
  const Codec* codec = detail::codec_for_extension(path);
  if (codec == nullptr) {
    fail(ErrorCode::Format, path, image_output_problem(path, image.width, image.height, image.channels, 8));
  }
  return *codec;
}

}  // namespace

std::vector<std::uint8_t> encode_image(const std::string& path, const Image& image, const ImageWriteOptions& options) {
  const Codec& codec = writable_codec(path, image);
  detail::check_image(path, image);
  check_write_options(path, options);
  if (codec.streams_rows()) return codec.encode_rows(codec, path, image, options, detail::whole_image_feed(image));
  return codec.encode(codec, path, image, options);
}

void write_image(const std::string& path, const Image& image, const ImageWriteOptions& options) {
  const std::vector<std::uint8_t> encoded = encode_image(path, image, options);
  detail::write_file_atomic(path, encoded.data(), encoded.size());
}

std::vector<std::uint8_t> encode_image_rows(const std::string& path, const Image& header, std::int64_t band_rows,
                                            const RowProducer& produce, const ImageWriteOptions& options) {
  const Codec& codec = writable_codec(path, header);
  check_write_options(path, options);
  if (band_rows < 1) band_rows = 1;
  Image band;
  band.width = header.width;
  band.channels = header.channels;
  band.bit_depth = header.bit_depth;
  const auto samples = [&](std::int64_t rows) {
    return static_cast<std::size_t>(header.width) * static_cast<std::size_t>(header.channels) *
           static_cast<std::size_t>(rows);
  };
  const auto make_band = [&](std::int64_t first, std::int64_t rows) {
    band.height = rows;
    if (band.bit_depth == 16) {
      band.data16.resize(samples(rows));
    } else {
      band.data8.resize(samples(rows));
    }
    produce(first, band);
    detail::check_image(path, band);
  };
  if (!codec.streams_rows()) {
    // Encoders that take the whole image: the bands are gathered first.
    Image whole = header;
    whole.data8.clear();
    whole.data16.clear();
    for (std::int64_t y = 0; y < header.height; y += band_rows) {
      make_band(y, std::min(band_rows, header.height - y));
      if (whole.bit_depth == 16) {
        whole.data16.insert(whole.data16.end(), band.data16.begin(), band.data16.end());
      } else {
        whole.data8.insert(whole.data8.end(), band.data8.begin(), band.data8.end());
      }
    }
    return encode_image(path, whole, options);
  }
  Image checked = header;  // the header's size, channels and depth, checked with a one-row sample buffer
  checked.height = 1;
  checked.data8.resize(checked.bit_depth == 8 ? samples(1) : 0);
  checked.data16.resize(checked.bit_depth == 16 ? samples(1) : 0);
  detail::check_image(path, checked);
  if (header.height < 1) detail::check_image(path, header);
  std::exception_ptr error;
  detail::RowFeed feed;
  feed.band_rows = band_rows;
  feed.error = &error;
  feed.band = [&](std::int64_t first, std::int64_t count) -> const std::uint8_t* {
    try {
      make_band(first, count);
      return band.bit_depth == 16 ? reinterpret_cast<const std::uint8_t*>(band.data16.data()) : band.data8.data();
    } catch (...) {
      error = std::current_exception();
      return nullptr;
    }
  };
  return codec.encode_rows(codec, path, header, options, feed);
}

void write_image_rows(const std::string& path, const Image& header, std::int64_t band_rows,
                      const RowProducer& produce, const ImageWriteOptions& options) {
  const std::vector<std::uint8_t> encoded = encode_image_rows(path, header, band_rows, produce, options);
  detail::write_file_atomic(path, encoded.data(), encoded.size());
}

void write_encoded_image(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  detail::write_file_atomic(path, bytes.data(), bytes.size());
}

void write_image(const std::string& path, const Image& image, int quality) {
  ImageWriteOptions options;
  options.quality = quality;
  write_image(path, image, options);
}

}  // namespace rsz::io
