// GIF inputs (io/src/codecs/gif.cpp): files made here with giflib's encoder, read back through rsz::io, pixel by
// pixel: the palette colours, the transparent colour and the uncovered screen as alpha 0, interlaced rows in place,
// the first frame of an animation, and the header probe's refusals (truncated files, a declared size past
// max_pixels, frames past it) before any pixel buffer exists.
#include <gif_lib.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "rsz/error.h"
#include "rsz/io/image.h"
#include "support/scratch_test.h"

namespace rsz {
namespace {

struct Frame {
  int left = 0, top = 0, width = 0, height = 0;
  bool interlaced = false;
  int transparent = -1;             // the palette index shown as alpha 0; -1 for none
  std::vector<std::uint8_t> pixels;  // width * height palette indices, row by row
  std::vector<GifColorType> local;   // a local colour table ("" for the screen's)
};

int write_bytes(GifFileType* gif, const GifByteType* data, int count) {
  auto* out = static_cast<std::vector<std::uint8_t>*>(gif->UserData);
  out->insert(out->end(), data, data + count);
  return count;
}

// A GIF89a of a `width` x `height` screen with `palette` (a power of two of colours) and `frames`.
std::vector<std::uint8_t> make_gif(int width, int height, const std::vector<GifColorType>& palette,
                                   const std::vector<Frame>& frames) {
  std::vector<std::uint8_t> out;
  int error = 0;
  GifFileType* gif = EGifOpen(&out, write_bytes, &error);
  EXPECT_NE(gif, nullptr);
  EGifSetGifVersion(gif, true);
  ColorMapObject* screen = GifMakeMapObject(static_cast<int>(palette.size()), palette.data());
  EXPECT_EQ(EGifPutScreenDesc(gif, width, height, 8, 0, screen), GIF_OK);
  for (const Frame& f : frames) {
    if (f.transparent >= 0) {
      GraphicsControlBlock control{DISPOSAL_UNSPECIFIED, false, 10, f.transparent};
      GifByteType ext[4];
      const std::size_t n = EGifGCBToExtension(&control, ext);
      EXPECT_EQ(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(n), ext), GIF_OK);
    }
    ColorMapObject* local = f.local.empty() ? nullptr : GifMakeMapObject(static_cast<int>(f.local.size()), f.local.data());
    EXPECT_EQ(EGifPutImageDesc(gif, f.left, f.top, f.width, f.height, f.interlaced, local), GIF_OK);
    // An interlaced image's rows go out in its four passes.
    std::vector<int> rows;
    if (f.interlaced) {
      for (const auto& [start, step] : {std::pair{0, 8}, {4, 8}, {2, 4}, {1, 2}}) {
        for (int y = start; y < f.height; y += step) rows.push_back(y);
      }
    } else {
      for (int y = 0; y < f.height; ++y) rows.push_back(y);
    }
    for (const int y : rows) {
      std::vector<GifPixelType> line(f.pixels.begin() + y * f.width, f.pixels.begin() + (y + 1) * f.width);
      EXPECT_EQ(EGifPutLine(gif, line.data(), f.width), GIF_OK);
    }
    if (local != nullptr) GifFreeMapObject(local);
  }
  EXPECT_EQ(EGifCloseFile(gif, &error), GIF_OK);
  GifFreeMapObject(screen);
  return out;
}

const std::vector<GifColorType> kPalette = {{0, 0, 0}, {255, 0, 0}, {0, 200, 0}, {10, 20, 250}};

Frame full_frame(int width, int height) {
  Frame f;
  f.width = width;
  f.height = height;
  for (int i = 0; i < width * height; ++i) f.pixels.push_back(static_cast<std::uint8_t>((i * 7 + i / width) % 4));
  return f;
}

class GifTest : public test::ScratchTest {
 protected:
  std::string save(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(path(name), std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                      static_cast<std::streamsize>(bytes.size()));
    return path(name);
  }
};

TEST_F(GifTest, ReadsThePaletteColoursOfAnOpaqueImageAsRgb) {
  const Frame f = full_frame(7, 5);
  const std::string file = save("a.gif", make_gif(7, 5, kPalette, {f}));
  const io::ImageInfo info = io::read_image_info(file);
  EXPECT_EQ(info.format, "gif");
  EXPECT_EQ((std::vector<std::int64_t>{info.width, info.height, info.channels, info.bit_depth}),
            (std::vector<std::int64_t>{7, 5, 3, 8}));
  EXPECT_FALSE(info.animated);
  const io::Image image = io::read_image(file);
  ASSERT_EQ(image.channels, 3);
  for (int i = 0; i < 35; ++i) {
    const GifColorType c = kPalette[f.pixels[static_cast<std::size_t>(i)]];
    EXPECT_EQ(image.data8[static_cast<std::size_t>(3 * i)], c.Red) << i;
    EXPECT_EQ(image.data8[static_cast<std::size_t>(3 * i + 1)], c.Green) << i;
    EXPECT_EQ(image.data8[static_cast<std::size_t>(3 * i + 2)], c.Blue) << i;
  }
  EXPECT_TRUE(io::is_readable_image_path("x.GIF"));
  EXPECT_FALSE(io::is_image_path("x.gif"));  // read only
}

TEST_F(GifTest, TheTransparentColourAndTheUncoveredScreenAreAlphaZero) {
  Frame f = full_frame(4, 3);
  f.transparent = 2;
  const io::Image clear = io::read_image(save("t.gif", make_gif(4, 3, kPalette, {f})));
  ASSERT_EQ(clear.channels, 4);
  for (int i = 0; i < 12; ++i) {
    const std::uint8_t index = f.pixels[static_cast<std::size_t>(i)];
    EXPECT_EQ(clear.data8[static_cast<std::size_t>(4 * i + 3)], index == 2 ? 0 : 255) << i;
    if (index != 2) {
      EXPECT_EQ(clear.data8[static_cast<std::size_t>(4 * i)], kPalette[index].Red) << i;
    }
  }
  // A 2 x 2 frame at (3, 1) of a 6 x 4 screen, with colours of its own: the rest of the screen is transparent.
  Frame small = full_frame(2, 2);
  small.left = 3;
  small.top = 1;
  small.local = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {11, 12, 13}};
  const io::Image placed = io::read_image(save("s.gif", make_gif(6, 4, kPalette, {small})));
  ASSERT_EQ(placed.channels, 4);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) {
      const std::uint8_t* px = &placed.data8[static_cast<std::size_t>(4 * (y * 6 + x))];
      const bool inside = x >= 3 && x < 5 && y >= 1 && y < 3;
      EXPECT_EQ(px[3], inside ? 255 : 0) << x << "," << y;
      if (inside) {
        EXPECT_EQ(px[0], small.local[small.pixels[static_cast<std::size_t>((y - 1) * 2 + x - 3)]].Red);
      }
    }
  }
}

TEST_F(GifTest, InterlacedRowsLandInPlaceAndAnAnimationGivesItsFirstFrame) {
  Frame f = full_frame(3, 19);
  f.interlaced = true;
  const io::Image interlaced = io::read_image(save("i.gif", make_gif(3, 19, kPalette, {f})));
  f.interlaced = false;
  const io::Image plain = io::read_image(save("p.gif", make_gif(3, 19, kPalette, {f})));
  EXPECT_EQ(interlaced.data8, plain.data8);
  Frame second = full_frame(3, 19);
  for (auto& p : second.pixels) p = static_cast<std::uint8_t>(3 - p);
  const std::string animation = save("anim.gif", make_gif(3, 19, kPalette, {f, second}));
  EXPECT_TRUE(io::read_image_info(animation).animated);
  EXPECT_EQ(io::read_image(animation).data8, plain.data8);
}

TEST_F(GifTest, DamagedFilesAndBombsAreRefusedBeforeDecoding) {
  const std::vector<std::uint8_t> whole = make_gif(40, 30, kPalette, {full_frame(40, 30)});
  for (const std::size_t cut : {std::size_t{10}, std::size_t{30}, whole.size() - 8}) {
    const std::string file = save("cut.gif", std::vector<std::uint8_t>(whole.begin(), whole.begin() + cut));
    try {
      io::read_image(file);
      ADD_FAILURE() << "a GIF cut at " << cut << " bytes was read";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::Format) << e.what();
      EXPECT_NE(std::string(e.what()).find("cut.gif"), std::string::npos) << e.what();
    }
  }
  // A header and a trailer, no image: refused from the probe (rsz info says so too).
  std::vector<std::uint8_t> empty(whole.begin(), whole.begin() + 13 + 3 * 4);
  empty.push_back(0x3B);
  EXPECT_THROW(io::read_image_info(save("empty.gif", empty)), Error);
  // A screen of 65535 x 65535 declared in 13 bytes: refused from the header, nothing allocated.
  std::vector<std::uint8_t> bomb = whole;
  bomb[6] = bomb[7] = bomb[8] = bomb[9] = 0xff;
  const std::string file = save("bomb.gif", bomb);
  try {
    io::read_image_info(file);
    ADD_FAILURE() << "a 65535 x 65535 GIF was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("65535"), std::string::npos) << e.what();
  }
  // A first frame past max_pixels in a small screen: refused too (its rows would all be decoded).
  Frame wide = full_frame(300, 2);
  io::ImageReadOptions options;
  options.max_pixels = 500;
  EXPECT_THROW(io::read_image(save("wide.gif", make_gif(10, 2, kPalette, {wide})), options), Error);
}

}  // namespace
}  // namespace rsz
