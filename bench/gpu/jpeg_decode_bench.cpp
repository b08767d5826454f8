// The GPU JPEG decoder's throughput (rsz/io/gpu_jpeg.h): JPEG files read into memory once, then decoded in batches
// on the GPU, best of --runs after a warm-up. bench/gpu/decode_bench.py runs it beside torchvision's decode_jpeg on
// the same files in the same call.
//   rsz_gpu_jpeg_bench [--batch 64] [--runs 3] FILE...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rsz/io/gpu_jpeg.h"

int main(int argc, char** argv) {
  int batch = 64;
  int runs = 3;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--batch" || arg == "--runs") && i + 1 < argc) {
      (arg == "--batch" ? batch : runs) = std::atoi(argv[++i]);
    } else {
      std::ifstream in(arg, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "rsz_gpu_jpeg_bench: cannot read %s\n", arg.c_str());
        return 2;
      }
      std::ostringstream s;
      s << in.rdbuf();
      files.push_back(s.str());
    }
  }
  if (files.empty() || batch < 1 || runs < 1) {
    std::fprintf(stderr, "usage: rsz_gpu_jpeg_bench [--batch N] [--runs N] FILE...\n");
    return 2;
  }
  try {
    const auto made = std::chrono::steady_clock::now();
    rsz::io::gpu::JpegBatchDecoder decoder(0, batch);
    const double startup = std::chrono::duration<double>(std::chrono::steady_clock::now() - made).count();
    std::size_t engine = 0;
    std::size_t failed = 0;
    const auto all = [&] {
      engine = failed = 0;
      for (std::size_t first = 0; first < files.size(); first += static_cast<std::size_t>(batch)) {
        std::vector<std::string_view> views;
        for (std::size_t i = first; i < std::min(files.size(), first + static_cast<std::size_t>(batch)); ++i) {
          views.emplace_back(files[i]);
        }
        for (const rsz::io::gpu::DeviceImage& image : decoder.decode(views)) {
          engine += image.engine ? 1 : 0;
          failed += image.error.empty() ? 0 : 1;
        }
      }
    };
    all();  // warm-up
    double best = 1e30;
    for (int r = 0; r < runs; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      all();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("{\"images\": %zu, \"batch\": %d, \"seconds\": %.6f, \"images_per_second\": %.1f, \"engine\": \"%s\", "
                "\"on_engine\": %zu, \"failed\": %zu, \"startup_seconds\": %.3f}\n",
                files.size(), batch, best, static_cast<double>(files.size()) / best, decoder.engine(), engine, failed, startup);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rsz_gpu_jpeg_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
