// `rsz thumbnail`: the everyday photo job in one line. A preset of `rsz resample`: the image is fitted within the
// --size box keeping its aspect ratio, only shrunk unless --enlarge, with antialiased linear filtering (DirectML
// RESAMPLE3's Antialiased, SEMANTICS.md §1.7) unless --no-antialias; EXIF orientation is applied and ICC, EXIF and
// XMP are kept, as in every command (--no-exif, --strip).
#include "commands.h"

namespace rsz::app {

void setup_thumbnail(CLI::App& app, ThumbnailOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "thumbnail", "Fit photos within a box, antialiased, auto-oriented, metadata kept (resample preset)");
  ResampleOptions& r = o.resample;
  add_common_options(*cmd, r.common, io::kUseOperators | io::kUseResize);
  cmd->add_option("--size", r.size,
                  "The box: N (NxN, also with a suffix: 256> is a 256x256 box), WxH, Wx or xH, or N%; a suffix as "
                  "in --help of resample (! ^ > <) replaces the default (fit inside, only shrink)")
      ->required();
  cmd->add_option("--fit", r.fit,
                  "inside (default), cover (fill the box, then crop it at --gravity: square thumbnails), contain "
                  "(pad to the box), outside, fill")
      ->check(CLI::IsMember(io::fit_names()));
  cmd->add_option("--gravity", r.gravity, "Where cover crops and contain pads (default center)")
      ->check(CLI::IsMember(io::gravity_names()));
  cmd->add_option_function<std::string>(
         "--mode", [&r](const std::string& mode) { r.fields["interpolation"] = mode; },
         "linear (default) or nearest (not antialiased)")
      ->check(CLI::IsMember(io::resample_spec().find("interpolation")->choices));
  cmd->add_flag("--enlarge", o.enlarge, "Also enlarge images smaller than the box (default: they keep their size)");
  cmd->add_flag("--no-antialias", o.no_antialias,
                "Exact RESAMPLE1 2-tap filtering (aliases when shrinking by more than 2x)");
  cmd->footer(
      "Examples:\n"
      "  rsz thumbnail -i 'photos/*.jpg' -o thumbs/ --size 256\n"
      "  rsz thumbnail -r -i photos/ -o 'thumbs/{relpath}.jpg' --size 320x240 --quality 85   (photos/cats/a.png -> "
      "thumbs/cats/a.jpg)\n"
      "  rsz thumbnail -i 'photos/*.jpg' -o squares/ --size 128 --fit cover --jobs 2\n"
      "  rsz thumbnail -i 'camera/*.jpg' -o thumbs/ --size 512 --shrink-on-load   (fast, not exact)\n"
      "Large JPEGs are decoded band by band into the filter, so a camera-size photo is never whole in memory.\n"
      "Differences from vipsthumbnail: no shrink-on-load unless --shrink-on-load (by default every pixel is read, "
      "results are exact and the same on every machine), and images smaller than the box are kept as they are "
      "unless --enlarge.");
}

int run_thumbnail(const ThumbnailOptions& t) {
  // The intent of resample's flags, then the thumbnail defaults: a plain N is an N x N box, fitted inside it unless
  // --fit or the size's suffix says otherwise, never enlarged unless --enlarge or the '<' suffix, antialiased.
  ResampleOptions o = t.resample;
  o.square_size = true;
  const CommonOptions& common = o.common;
  if (common.output.empty()) usage_error("thumbnail: -o/--output is required");
  io::ResizeIntent intent = resample_intent(o);
  if (t.no_antialias) intent.config.antialiased = false;
  io::apply_thumbnail_defaults(intent, t.enlarge);
  return run_resize(common, intent, "thumbnail");
}

OperatorCommand thumbnail_command() {
  OperatorCommand c;
  c.command = "thumbnail";
  c.op = "thumbnail";
  c.setup = subcommand(setup_thumbnail, run_thumbnail);
  return c;
}

}  // namespace rsz::app
