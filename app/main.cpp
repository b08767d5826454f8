// rsz command-line entry point. Subcommands (resample, upsample, roi-align, run, info) register here, one file each.
#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"rsz: resize images and tensors and cut ROI crops with the exact semantics of DirectML's "
               "RESAMPLE1, UPSAMPLE_2D and ROI_ALIGN"};
  app.set_version_flag("-V,--version", std::string("rsz ") + RSZ_VERSION);
  app.footer("Examples:\n  rsz --version");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version exit 0; every usage error exits 2 (CLI contract).
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::cout << app.help();
  return 0;
}
