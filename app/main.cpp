// rsz command-line entry point. The full CLI (resample, upsample, roi-align, run, info) is built on rsz::core and
// rsz::io; this entry answers --version and --help.
#include <cstring>
#include <iostream>

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-V") == 0)) {
    std::cout << "rsz " << RSZ_VERSION << "\n";
    return 0;
  }
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::cout << "rsz " << RSZ_VERSION
              << ": resize images and tensors and cut ROI crops with DirectML semantics\n"
                 "usage: rsz --version | --help\n";
    return 0;
  }
  std::cerr << "rsz: unknown arguments; usage: rsz --version | --help\n";
  return 2;
}
