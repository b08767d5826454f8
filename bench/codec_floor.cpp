// The codecs alone, for bench/cli_bench.sh's floor rows: decodes an input with libjpeg-turbo or libpng and encodes a
// raster with the settings rsz's defaults use, nothing else (no resize, no conversion to float, no planning), so
// that each single-file job's rsz time has beside it what its codecs cost in one process.
//
// usage: codec_floor IN RAW.ppm|RAW.pgm OUT [QUALITY]
//   IN: the job's input (.jpg or .png), decoded whole as rsz decodes it (JPEG: accurate integer IDCT, fancy
//       upsampling, RGB or gray; PNG: palette and low bit depths expanded, 16-bit samples swapped to host order,
//       interlace handled) into one row buffer, and thrown away.
//   RAW: the job's output pixels (rsz writes them with -o x.ppm), 8 or 16 bits, read into memory.
//   OUT: encoded from RAW as rsz encodes by default (JPEG: jpeg_set_defaults + jpeg_set_quality(QUALITY, baseline),
//        4:2:0, QUALITY 95 by default; PNG: zlib level 2 over rows filtered with Sub), in memory, then written.
// Exits 1 with a line on stderr for a file it cannot read or write.
#include <cstddef>
#include <cstdio>  // jpeglib.h needs size_t and FILE declared first

#include <jpeglib.h>
#include <png.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Raster {
  int width = 0, height = 0, channels = 0, depth = 8;
  std::vector<unsigned char> bytes;  // rows top to bottom; 16-bit samples big-endian, as in the PNM file
};

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::vector<unsigned char> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error(path + ": cannot open");
  std::vector<unsigned char> bytes;
  unsigned char chunk[1 << 16];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) bytes.insert(bytes.end(), chunk, chunk + n);
  std::fclose(f);
  return bytes;
}

void write_file(const std::string& path, const unsigned char* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) {
    throw std::runtime_error(path + ": cannot write");
  }
}

void decode_jpeg(const std::vector<unsigned char>& file) {
  jpeg_decompress_struct cinfo{};
  jpeg_error_mgr err{};
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, file.data(), static_cast<unsigned long>(file.size()));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space != JCS_GRAYSCALE) cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  std::vector<unsigned char> rows(static_cast<std::size_t>(cinfo.output_width) * cinfo.output_components *
                                  cinfo.output_height);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = rows.data() + static_cast<std::size_t>(cinfo.output_scanline) * cinfo.output_width *
                                     cinfo.output_components;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
}

void decode_png(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error(path + ": cannot open");
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    std::fclose(f);
    throw std::runtime_error(path + ": not a PNG libpng reads");
  }
  png_init_io(png, f);
  png_read_info(png, info);
  png_set_expand(png);
  if (png_get_bit_depth(png, info) == 16) png_set_swap(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const png_size_t row_bytes = png_get_rowbytes(png, info);
  const png_uint_32 height = png_get_image_height(png, info);
  std::vector<unsigned char> rows(row_bytes * height);
  for (int pass = 0; pass < passes; ++pass) {
    for (png_uint_32 y = 0; y < height; ++y) png_read_row(png, rows.data() + row_bytes * y, nullptr);
  }
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  std::fclose(f);
}

Raster read_pnm(const std::string& path) {
  const std::vector<unsigned char> file = read_file(path);
  Raster r;
  std::size_t pos = 2;
  long fields[3] = {0, 0, 0};
  if (file.size() < 2 || file[0] != 'P' || (file[1] != '5' && file[1] != '6')) {
    throw std::runtime_error(path + ": not a binary PPM or PGM");
  }
  for (long& field : fields) {
    while (pos < file.size() && (file[pos] == ' ' || file[pos] == '\n' || file[pos] == '\r' || file[pos] == '\t')) ++pos;
    while (pos < file.size() && file[pos] >= '0' && file[pos] <= '9') field = field * 10 + (file[pos++] - '0');
  }
  ++pos;  // the one whitespace byte before the samples
  r.width = static_cast<int>(fields[0]);
  r.height = static_cast<int>(fields[1]);
  r.depth = fields[2] > 255 ? 16 : 8;
  r.channels = file[1] == '6' ? 3 : 1;
  const std::size_t size = static_cast<std::size_t>(r.width) * r.height * r.channels * (r.depth / 8);
  if (pos + size > file.size()) throw std::runtime_error(path + ": truncated");
  r.bytes.assign(file.begin() + static_cast<std::ptrdiff_t>(pos), file.begin() + static_cast<std::ptrdiff_t>(pos + size));
  return r;
}

std::vector<unsigned char> encode_jpeg(const Raster& r, int quality) {
  if (r.depth != 8) throw std::runtime_error("JPEG output takes 8-bit samples");
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr err{};
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &out, &size);
  cinfo.image_width = static_cast<JDIMENSION>(r.width);
  cinfo.image_height = static_cast<JDIMENSION>(r.height);
  cinfo.input_components = r.channels;
  cinfo.in_color_space = r.channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  const std::size_t stride = static_cast<std::size_t>(r.width) * r.channels;
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<unsigned char*>(r.bytes.data()) + stride * cinfo.next_scanline;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::vector<unsigned char> bytes(out, out + size);
  jpeg_destroy_compress(&cinfo);
  std::free(out);
  return bytes;
}

void append(png_structp png, png_bytep data, png_size_t length) {
  auto* out = static_cast<std::vector<unsigned char>*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + length);
}

void flush(png_structp) {}

std::vector<unsigned char> encode_png(const Raster& r) {
  std::vector<unsigned char> out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("libpng failed to encode");
  }
  png_set_write_fn(png, &out, append, flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(r.width), static_cast<png_uint_32>(r.height), r.depth,
               r.channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, 2);  // rsz's default (io/src/image_png.cpp): level 2, Sub filter
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
  png_write_info(png, info);
  const std::size_t stride = static_cast<std::size_t>(r.width) * r.channels * (r.depth / 8);
  for (int y = 0; y < r.height; ++y) {
    png_write_row(png, const_cast<unsigned char*>(r.bytes.data()) + stride * static_cast<std::size_t>(y));
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: codec_floor IN RAW.ppm|RAW.pgm OUT [QUALITY]\n");
    return 2;
  }
  try {
    const std::string in = argv[1], raw = argv[2], out = argv[3];
    const int quality = argc == 5 ? std::atoi(argv[4]) : 95;
    if (ends_with(in, ".png")) {
      decode_png(in);
    } else {
      decode_jpeg(read_file(in));
    }
    const Raster r = read_pnm(raw);
    const std::vector<unsigned char> bytes = ends_with(out, ".png") ? encode_png(r) : encode_jpeg(r, quality);
    write_file(out, bytes.data(), bytes.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "codec_floor: %s\n", e.what());
    return 1;
  }
  return 0;
}
