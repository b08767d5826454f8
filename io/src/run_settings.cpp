// The table of run-level settings (run_settings.h).
#include "rsz/io/run_settings.h"

#include <limits>

#include "rsz/io/config.h"
#include "rsz/io/image.h"

namespace rsz::io {

namespace {

constexpr std::int64_t kNoMax = std::numeric_limits<std::int64_t>::max();

RunSettingSpec flag(std::string key, std::string flag_names, std::string help, bool changes_outputs,
                    std::string batch_key = "", unsigned uses = kUseOperators | kUseRun) {
  RunSettingSpec s;
  s.key = std::move(key);
  s.flag = std::move(flag_names);
  s.help = std::move(help);
  s.kind = SettingKind::Bool;
  s.changes_outputs = changes_outputs;
  s.batch_key = std::move(batch_key);
  s.uses = uses;
  return s;
}

RunSettingSpec number(std::string key, std::string flag_names, std::string help, std::int64_t min, std::int64_t max,
                      bool changes_outputs, std::string batch_key = "", unsigned uses = kUseOperators | kUseRun) {
  RunSettingSpec s = flag(std::move(key), std::move(flag_names), std::move(help), changes_outputs,
                          std::move(batch_key), uses);
  s.kind = SettingKind::Int;
  s.min = min;
  s.max = max;
  return s;
}

RunSettingSpec choice(std::string key, std::string flag_names, std::string help, std::vector<std::string> choices,
                      bool changes_outputs, std::string batch_key = "", unsigned uses = kUseOperators | kUseRun) {
  RunSettingSpec s = flag(std::move(key), std::move(flag_names), std::move(help), changes_outputs,
                          std::move(batch_key), uses);
  s.kind = SettingKind::Choice;
  s.choices = std::move(choices);
  return s;
}

RunSettingSpec text(std::string key, std::string flag_names, std::string help, bool changes_outputs,
                    std::string batch_key = "", unsigned uses = kUseOperators | kUseRun) {
  RunSettingSpec s = flag(std::move(key), std::move(flag_names), std::move(help), changes_outputs,
                          std::move(batch_key), uses);
  s.kind = SettingKind::Text;
  return s;
}

// --format's choices: the writable formats of the codec table, and npy.
std::vector<std::string> output_formats() {
  std::vector<std::string> formats;
  for (const std::string& ext : writable_image_extensions()) formats.push_back(ext.substr(1));
  formats.emplace_back("npy");
  return formats;
}

std::string listed(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) text += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return text;
}

std::vector<RunSettingSpec> make_table() {
  std::vector<RunSettingSpec> t;
  t.push_back(choice("dtype", "--dtype", "Compute type for images: float32 or float16 (default float32)",
                     compute_type_names(), true, "dtype"));
  t.push_back(number("jobs", "-j,--jobs",
                     "Threads: inputs processed in parallel, each input's kernels sharing the rest (default 0: the "
                     "CPUs this process may use, its affinity and cgroup quota; at most 4 per such CPU)",
                     0, 4096, false));
  t.push_back(flag("json", "--json", "Print one JSON line per output (path, shape, dtype, seconds) on stdout", false));
  t.push_back(flag("dry_run", "-n,--dry-run", "List what would be written and write nothing", false));
  t.push_back(flag("quiet", "-q,--quiet", "No progress bar and no summary (errors are still reported)", false));
  t.push_back(flag("recursive", "-r,--recursive", "Descend into sub-folders of input folders", false, "recursive"));
  t.push_back(flag("hidden", "--hidden",
                   "Also take hidden files and folders (names starting with '.', such as macOS's ._photo.jpg) from "
                   "folders and patterns; a file named on its own is always taken",
                   false, "hidden"));
  RunSettingSpec no_exif = flag("no_exif", "--no-exif",
                                "Do not apply the EXIF orientation of JPEGs and TIFFs (keep pixels as stored)", true,
                                "exif");
  no_exif.batch_inverted = true;
  t.push_back(no_exif);
  t.push_back(choice("alpha", "--alpha", "Alpha handling: premultiplied (default; no dark fringes) or straight",
                     alpha_mode_names(), true, "alpha"));
  t.push_back(choice("backend", "--backend",
                     "Kernel backend: auto (default: cpu), cpu, reference (the naive oracle), or cuda (an NVIDIA GPU, "
                     "in builds with RSZ_CUDA: the same bits as cpu; resample, thumbnail and roi-align decode images "
                     "on the CPU and resize or crop 8-bit ones in batches on the GPU); rsz info --backends lists them",
                     backend_names(), false));
  t.push_back(text("device", "--device",
                   "The GPUs that --backend cuda and --decode=gpu run on: N (default 0), a list of distinct ones "
                   "(0,1) or all. With several, the GPU stage takes its batches to whichever GPU is free (inputs it "
                   "does not batch take the GPUs in turn); the outputs are the same",
                   false));
  t.push_back(flag("verbose", "-v,--verbose", "Say on stderr which backend runs the operators, and why", false));
  t.push_back(number("max_pixels", "--max-pixels",
                     "Refuse input and output images with more pixels than this, before decoding (default 268435456)",
                     1, kNoMax, true));
  t.push_back(text("max_memory", "--max-memory",
                   "Memory budget, e.g. 2G or 512M: inputs and outputs that would need more are refused before "
                   "anything is allocated (default: the smallest of 4G, half the RAM, half of ulimit -v and half the "
                   "cgroup's memory.max)",
                   false));
  t.push_back(number("max_samples", "--max-samples",
                     "roi-align: refuse ROIs that need more interpolated samples than this in total (R x C x outputs "
                     "x samples; default 68719476736, 0: no limit)",
                     0, kNoMax, true, "", kUseRoiAlign | kUseRun));
  t.push_back(number("quality", "--quality", "JPEG, WebP, AVIF and JPEG XL quality 1-100 (default 95 for JPEG, 80 for WebP, 50 for AVIF, 90 for JPEG XL: "
                     "distance 1; 100 is lossless)", 1, 100,
                     true, "quality"));
  t.push_back(flag("lossless", "--lossless", "Write WebP, AVIF and JPEG XL outputs lossless (default: lossy, --quality)", true,
                   "lossless"));
  t.push_back(flag("strict", "--strict",
                   "Refuse alpha or 16-bit samples into a format that cannot hold them (JPEG, BMP, PPM; 16 bits into "
                   "WebP and AVIF) instead of flattening the alpha onto --background and reducing to 8 bits",
                   true, "strict"));
  t.push_back(text("background", "--background",
                   "What alpha is flattened onto for formats without alpha: white (default), black, gray, #RRGGBB or "
                   "R,G,B (0-255)",
                   true, "background"));
  t.push_back(choice("format", "--format",
                     "Format of the outputs that a folder or {ext} names, of -o - and of the image members of a .tar "
                     "output (else the input's: -o jpgs/ --format jpg converts a folder to JPEG; a template with "
                     "another extension is refused), and of -i - (else detected from its first bytes): " +
                         listed(output_formats()),
                     output_formats(), true, "", kUseOperators));
  t.push_back(number("tar_part_size", "--tar-part-size",
                     "Samples per part of a .tar output (default 1000; an image's crops are never split, so a part "
                     "of crops may hold more). Each sample's key is its input's path below -i without extension, "
                     "'.' made '_' (crops: KEY/ID, with a KEY.json member holding the manifest row); members sorted "
                     "by key, mtime 0, uid/gid 0, mode 0644: the same inputs give the same bytes whatever -j. A part "
                     "is written whole through a temporary name or not at all (an input of it that fails leaves it "
                     "out, exit 1); --skip-existing (and --plan) skip a part whose file exists without reading its "
                     "inputs. A part's encoded members wait in memory within --max-memory, the rest on disk",
                     1, 100000000, true, "", kUseOperators));
  t.push_back(flag("no_sync", "--no-sync",
                   "Do not flush each output to disk before renaming it into place (about half the time of many "
                   "small outputs; errors and signals still leave no partial file, but after a power loss an output "
                   "written in the last seconds may be empty, and --skip-existing then makes it again)",
                   false));
  t.push_back(flag("strip", "--strip",
                   "Leave the input's metadata out of image outputs: the ICC colour profile, EXIF and XMP (by "
                   "default PNG, JPEG and WebP outputs keep them, TIFF outputs the ICC profile and XMP; EXIF's "
                   "orientation reads 1 once applied)",
                   true, "strip"));
  t.push_back(flag("grayscale", "--grayscale",
                   "Write image outputs in gray (alpha kept): ITU-R BT.601 luma as Pillow's convert('L') computes "
                   "it, (19595 R + 38470 G + 7471 B + 32768) >> 16 on the samples written (8 or 16 bits; with "
                   "premultiplied alpha, the same weights on the unrounded values); .npy outputs are left as computed",
                   true, "grayscale"));
  t.push_back(choice("colorspace", "--colorspace",
                     "Colour of image outputs: keep (default: the input's pixels and ICC profile as they are) or srgb "
                     "(pixels converted from the input's ICC profile to sRGB with lcms2, relative colorimetric, and "
                     "the sRGB profile embedded; inputs without a profile are taken as sRGB). --strip converts a "
                     "profile that is not sRGB too, so that a stripped photo looks as it did",
                     {"keep", "srgb"}, true, "colorspace"));
  t.push_back(flag("linear", "--linear",
                   "Resize images in linear light: sRGB-encoded samples decoded to linear values (IEC 61966-2-1), "
                   "the exact operator on them, the results encoded back (vips --linear); a fine high-contrast "
                   "pattern keeps its brightness (a 1-pixel black-and-white grid halves to 188, not 128). Slower; "
                   "images are read whole",
                   true, "linear", kUseResize | kUseRun));
  t.push_back(choice("depth", "--depth", "Bits per sample of image outputs: 8 or 16 (default: the input's)",
                     {"8", "16"}, true, "depth"));
  t.push_back(flag("skip_existing", "--skip-existing",
                   "Resume an interrupted run: an input whose outputs all exist is skipped without being read "
                   "(outputs are written complete or not at all, so an existing one is whole; an empty file is not "
                   "an output and is made again)",
                   false));
  t.push_back(number("png_compression", "--png-compression",
                     "PNG zlib level 0-9 with adaptive filters (9: smallest, slowest); default: a fast setting (Sub "
                     "filter, libdeflate level 1: smaller than zlib's level 2, about twice as fast)",
                     0, 9, true, "png_compression"));
  t.push_back(flag("shrink_on_load", "--shrink-on-load",
                   "JPEG inputs shrunk 4x or more are first decoded at 1/2, 1/4 or 1/8 size (libjpeg's DCT scaling, "
                   "as vipsthumbnail does), leaving at least 2x to the filter: several times faster on camera-size "
                   "photos, but not exact (the pixels differ from a full decode's); off by default",
                   true, "shrink_on_load", kUseResize | kUseRun));
  t.push_back(choice("decode", "--decode",
                     "Where JPEG inputs are decoded: cpu (default: libjpeg-turbo) or gpu (nvJPEG, many files at once "
                     "on the GPU's JPEG engines, then resized or cropped there; needs --backend cuda or auto and a "
                     "build with nvJPEG; for large jobs: the engines take about a second to start; many small crops "
                     "an image, COCO-style, are bound by their encoding and files on the CPU, where the CPU job on "
                     "many cores is as fast or faster). The pixels are "
                     "nvJPEG's: within 32 levels of libjpeg-turbo's on photos (0.8 on average), 4:4:4 and gray files "
                     "exact. PNGs, progressive and CMYK JPEGs, JPEGs with an EXIF orientation to apply, --linear, "
                     "--dtype float16, --shrink-on-load's scaled decodes and more than 64 MiB of crops an image stay "
                     "on the CPU. A JPEG damaged after its header may be written from what nvJPEG decoded, where the "
                     "CPU decoder fails it",
                     {"cpu", "gpu"}, true, "decode", kUseResize | kUseRoiAlign | kUseRun));
  t.push_back(choice("encode", "--encode",
                     "Where JPEG outputs are encoded: cpu (default: libjpeg-turbo) or gpu (nvJPEG: with --decode gpu, "
                     "the images the GPU resized or cropped are encoded there and only their files come back). The "
                     "files are nvJPEG's: the same quality scaling of the standard tables, 4:2:0 colour and metadata "
                     "as the CPU's, not the same bytes (their pixels differ by a few levels). Outputs the GPU does not "
                     "make, and those that need more than their 8-bit samples (an sRGB conversion, 16 bits, "
                     "--grayscale, --linear), are encoded on the CPU",
                     {"cpu", "gpu"}, true, "encode", kUseResize | kUseRoiAlign | kUseRun));
  t.push_back(text("shard", "--shard",
                   "Process only shard I of N (0-based; e.g. $SLURM_ARRAY_TASK_ID/16): the inputs whose key (their "
                   "path below the -i folder, without extension, '.' made '_') hashes to I (FNV-1a 64 mod N), so "
                   "shards 0..N-1 together are the whole job and adding inputs never moves one to another shard; "
                   "with --plan, I alone",
                   false));
  t.push_back(text("plan", "--plan",
                   "Take the inputs of shard I (--shard I) of the plan rsz plan wrote in this folder instead of -i; "
                   "the parameters are pinned in its params.json, a finished shard writes its done/ marker and exits "
                   "at once when run again, an unfinished one skips the outputs that exist",
                   false));
  return t;
}

}  // namespace

std::string RunSettingSpec::long_name() const {
  const std::size_t at = flag.rfind("--");
  return at == std::string::npos ? flag : flag.substr(at + 2);
}

const std::vector<RunSettingSpec>& run_settings() {
  static const std::vector<RunSettingSpec> table = make_table();
  return table;
}

const RunSettingSpec* find_run_setting(const std::string& key) {
  for (const RunSettingSpec& s : run_settings()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

}  // namespace rsz::io
