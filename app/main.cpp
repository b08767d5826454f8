// rsz command-line entry point: registers the subcommands (one file each), parses, dispatches, and maps errors to
// the exit statuses of the CLI contract (0 done, 1 some input failed, 2 usage or config error).
#include <CLI/CLI.hpp>

#include <iostream>

#include "commands.h"
#include "rsz/error.h"

int main(int argc, char** argv) {
  using namespace rsz::app;
  CLI::App app{"rsz: resize images and tensors and cut ROI crops with the exact semantics of DirectML's "
               "RESAMPLE1, UPSAMPLE_2D and ROI_ALIGN"};
  app.set_version_flag("-V,--version", std::string("rsz ") + RSZ_VERSION);
  app.require_subcommand(1);
  ResampleOptions resample;
  UpsampleOptions upsample;
  RoiAlignOptions roi_align;
  RunOptions run;
  InfoOptions info;
  setup_resample(app, resample);
  setup_upsample(app, upsample);
  setup_roi_align(app, roi_align);
  setup_run(app, run);
  setup_info(app, info);
  app.footer(
      "Examples:\n"
      "  rsz resample -i photo.jpg -o small.jpg --scale 0.5\n"
      "  rsz resample -i 'photos/*.jpg' -o out/ --size 224x224 --jobs 4\n"
      "  rsz upsample -i icon.png -o icon@2x.png --factor 2\n"
      "  rsz roi-align -i photo.jpg --rois boxes.json --output-size 128x128 -o crops/\n"
      "  rsz run configs/batch.json\n"
      "  rsz info photo.jpg\n"
      "Run 'rsz <command> --help' for the flags of a command.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  try {
    if (app.got_subcommand("resample")) return run_resample(resample);
    if (app.got_subcommand("upsample")) return run_upsample(upsample);
    if (app.got_subcommand("roi-align")) return run_roi_align(roi_align);
    if (app.got_subcommand("run")) return run_run(run);
    if (app.got_subcommand("info")) return run_info(info);
  } catch (const rsz::Error& e) {
    // Errors raised while inputs are processed are caught and counted by the job runner; one that reaches here was
    // found before anything ran (a flag, a config or ROI file that cannot be read or used): a usage error.
    std::cerr << "rsz: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "rsz: " << e.what() << "\n";
    return kExitFailed;
  }
  return kExitUsage;
}
