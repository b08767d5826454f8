// rsz's pipeline (the rsz_pipeline library, no command-line parser in it): what a job is and how a run plans and
// runs jobs, implemented by stage: options.cpp (messages, standard streams, the memory budget, backend and execution
// options), settings.cpp (the run-level settings bound to CommonOptions), inputs.cpp (input expansion, header probes,
// loading), outputs.cpp (writing results, output names and their checks), runner.cpp (planning every job before
// anything is written, chained-step prediction, the parallel job runner with progress, --json records, the manifest
// and the summary), tar_output.cpp (webdataset parts), streams.cpp (-i - and -o -), shards.cpp and shard_files.cpp
// (shard selection and a plan's state files), run_state.cpp (the run object). The command line (app/) registers
// flags and calls these. No math lives here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rsz/error.h"
#include "rsz/exec.h"
#include "rsz/io/annotations.h"
#include "rsz/io/batch_file.h"
#include "rsz/io/colour.h"
#include "rsz/io/formats.h"
#include "rsz/io/image.h"
#include "rsz/io/naming.h"
#include "rsz/io/ops.h"
#include "rsz/io/resize.h"
#include "rsz/io/run_settings.h"
#include "rsz/pipeline/report.h"
#include "rsz/tensor.h"

namespace rsz::app {

// Exit statuses (CLI contract): 0 all written, 1 some input failed, 2 usage or config error (nothing was run).
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// The memory budget of a run without --max-memory, in bytes: min(4 GiB, half of the physical memory, half of
// RLIMIT_AS, half of the cgroup's memory.max), at least 64 MiB. Read from the system once per process.
std::uint64_t default_memory_budget();

// The flags as the command line (or a batch file) set them: each is typed once, as it is parsed, not at each use.
struct CommonOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string config;
  DataType dtype = DataType::Float32;  // --dtype: the compute type of images (float32 or float16)
  int jobs = 0;
  bool json = false;
  bool dry_run = false;
  bool quiet = false;
  bool recursive = false;
  bool hidden = false;  // --hidden: names starting with '.' are inputs too
  bool no_exif = false;
  io::AlphaMode alpha = io::AlphaMode::Premultiplied;  // --alpha
  Backend backend = Backend::Auto;                      // --backend
  // --device: the GPUs of --backend cuda and --decode gpu, as given (distinct); empty: all of them (--device all),
  // resolved by gpu_devices() when a job needs them.
  std::vector<int> devices{0};
  bool verbose = false;  // --verbose: one line on stderr saying which backend runs and why
  std::int64_t max_pixels = io::kDefaultMaxPixels;
  std::uint64_t max_memory = 0;  // --max-memory in bytes; 0: not given (memory_budget() is then the default)
  std::uint64_t max_samples = ExecOptions{}.max_samples;  // roi-align's sample budget (0: none)
  int quality = 0;           // 0: the format's default
  int png_compression = -1;  // -1: the fast default
  std::string manifest;      // roi-align: the crop manifest (.jsonl or .csv) written after the run; "" for none
  io::RoisCheck rois_check = io::RoisCheck::Warn;  // roi-align on images: boxes outside, empty or inverted
  // roi-align with COCO / VOC annotations: an image whose size differs from the one they state fails, or its boxes
  // are scaled to it (--size-mismatch).
  io::SizeMismatch size_mismatch = io::SizeMismatch::Fail;
  bool skip_existing = false;       // keep inputs whose outputs all exist (a resumed run), without reading them
  std::string format;      // -i - / -o - and .tar members: the format (an extension without the dot); "" to detect
  std::int64_t tar_part_size = 0;  // --tar-part-size: samples per part of a .tar output; 0: not given (1000)
  bool strip = false;      // image outputs without the input's metadata (ICC profile, EXIF, XMP)
  bool no_sync = false;    // --no-sync: outputs are not flushed to disk one by one (io::set_sync_outputs)
  bool grayscale = false;  // image outputs in gray (BT.601 luma), alpha kept
  bool to_srgb = false;    // --colorspace srgb: image outputs converted from the input's ICC profile to sRGB
  bool decode_gpu = false;  // resample / thumbnail --decode gpu: JPEGs decoded by nvJPEG in batches, resized on the GPU
  bool encode_gpu = false;  // --encode gpu: what the GPU stage resized or cropped encoded there as JPEG (nvJPEG)
  bool linear = false;     // --linear: images resized in linear light (sRGB decoded, the operator, re-encoded)
  int depth = 0;           // bits per sample of image outputs: 8 or 16; 0 follows the input
  // Alpha or 16 bits into a format without them (JPEG, BMP, PPM; 16 bits into WebP): by default the alpha is
  // flattened onto `background` and the samples reduced to 8 bits, with one note per run; --strict refuses instead.
  bool strict = false;
  std::array<float, 3> background{1.0f, 1.0f, 1.0f};  // --background: RGB in [0, 1], white by default
  bool lossless = false;                               // --lossless: WebP outputs lossless (default lossy)
  bool shrink_on_load = false;  // resample / thumbnail --shrink-on-load: JPEGs decoded at 1/2, 1/4 or 1/8 first
  // --shard I/N: only the inputs whose shard (a stable hash of their key, shards.h) is `shard_index` run; with --plan
  // the shard's list is read instead of -i (`shard_count` is then the plan's). -1 / 0: not given.
  std::int64_t shard_index = -1;
  std::int64_t shard_count = 0;
  std::string plan;            // --plan STATE: the folder `rsz plan` wrote; "" for none
  std::string summary_prefix;  // "shard 1/3: 4 of 11 inputs; ": said in front of the run's summary
  // The run-level settings given (flags, a library request's settings), by key, with their text ("true" for a Bool):
  // they win over a batch file's keys, and --plan pins them.
  std::map<std::string, std::string> given;
  // The run's memory budget: --max-memory, else default_memory_budget(), read from the system only when a command
  // needs it (not at start-up, where every subcommand's options are made, --version and --help included).
  std::uint64_t memory_budget() const { return max_memory != 0 ? max_memory : default_memory_budget(); }
};

// --decode gpu (resample_jobs.cpp), for the jobs that decode on the GPU. Whether a run's JPEGs are decoded there:
// float32 results (float16's convert the samples before the operator, as the CPU does), no --linear (its decoding to
// linear light is the CPU's).
bool decodes_on_gpu(const CommonOptions& common);
// A job whose JPEG the GPU stage may decode (--decode gpu) first holds the share of the memory budget it needs while the
// GPU decodes it (its file, its result and their encoding: not its decoded pixels nor their float copy, which it never
// holds then). Where the CPU decodes it after all (a file the GPU does not take, a batch the GPU failed), the job calls
// hold_whole_job_share() before it decodes: it gives that share back and waits, holding nothing, for its whole one
// (so that no job waits for more while holding some). Nothing where the thread runs no job or holds its whole share.
void hold_whole_job_share();
// --backend cuda, in builds with the GPU stage (nvJPEG): an 8-bit image's pixels, decoded on the CPU as the CPU job
// decodes them (every image without --decode gpu; with it, the files the GPU does not decode: PNGs, progressive or
// CMYK JPEGs, ...), go to the GPU stage, which runs the operator on a batch of inputs at once (their outputs are the
// CPU job's bytes). Float32 results and no --linear, as decodes_on_gpu.
bool batches_on_gpu(const CommonOptions& common);
// Whether batches_on_gpu takes an image of `channels` and `bit_depth` (8-bit, 1 or 3 channels: what the stage reads).
bool batches_image(int channels, int bit_depth, const CommonOptions& common);
// Whether a run's resample and roi_align jobs use the GPU stage: decodes_on_gpu or batches_on_gpu.
bool uses_gpu_stage(const CommonOptions& common);

// --device's text (`what` names it in the usage error): a GPU number, a list of distinct ones (0,1) or all (empty).
std::vector<int> parse_devices(const std::string& text, const std::string& what);
// Why --device's text is not allowed ("" when it is), as the command line's check says it.
std::string devices_problem(const std::string& text);
// The GPUs a run's jobs use (--device resolved: `all` is every GPU the process sees). A usage error where the machine
// has no GPU it names (checked once a run needs them: check_devices).
std::vector<int> gpu_devices(const CommonOptions& options);
// A list of GPUs as --device takes it: "0,1".
std::string listed_devices(const std::vector<int>& devices);
// Whether the run uses a GPU (--backend cuda, or decodes_on_gpu), and then that --device names GPUs this machine has.
void check_devices(const CommonOptions& options);

// --background and a batch file's "background" (`what` names it in the usage error): white, black, gray, #RRGGBB or
// R,G,B (0 to 255) as RGB in [0, 1].
std::array<float, 3> parse_background(const std::string& text, const std::string& what);

// "1.5 GiB"-style text for a byte count.
using io::bytes_text;
// Writes `text` to stderr through C stdio. rsz never prints through std::cerr: the OpenCV codec module mutes
// std::cerr while OpenCV runs (OpenCV writes decoder failures there directly).
void to_stderr(const std::string& text);
// Writes `text` to standard output through C stdio (--json records, rsz info, --dry-run lists, merge's report), and
// with `flush` flushes it, so that a reader sees each record as it is made. A write that fails (a full disk, a closed
// descriptor) is remembered: the command then exits 1 saying why (cli.cpp), instead of reporting success.
void to_stdout(const std::string& text, bool flush = true);
// A one-line, control-character-free form of a message or file name: newlines, tabs and other control bytes are
// shown as \n, \t, \xHH, so a hostile file name cannot forge or split message lines.
// Standard input's and output's scratch copies are named as such ("standard input (-i -)").
std::string printable(const std::string& text);
// Refuses a JSON file (config, ROI or batch file) or an annotation file whose parsed form would not fit the memory
// budget, before reading; for a folder (VOC, YOLO), each .xml and .txt file in it.
void check_json_budget(const std::string& path, const std::string& flag, std::uint64_t budget);


// The extra check of a row's text that its binding makes (--backend cuda where no usable CUDA backend is: why not),
// "" when the text is allowed; the command line reports it as a flag's check.
std::string setting_check(const io::RunSettingSpec& row, const std::string& text);
// "one of a, b, c is allowed": the refusal's end for a choice that is none of `choices` (the command line's words).
std::string one_of_allowed(const std::vector<std::string>& choices);
// A whole number's text as the command line's check (strtoll) takes it, a leading '+' allowed: io::parse_int's
// refusals, naming `what`.
std::int64_t parse_whole(const std::string& text, const std::string& what, std::int64_t min, std::int64_t max);
// Sets a row's member of `options` from the text its flag takes; `what` names the flag or batch key in messages.
void apply_setting(CommonOptions& options, const io::RunSettingSpec& row, const std::string& text,
                   const std::string& what);
// A batch file's settings laid under the flags: each key whose flag was not given (options.given) is applied.
void apply_batch_settings(CommonOptions& options, const io::BatchFile& batch, const std::string& source);
// Whether the flag `long_name` ("quality", "jobs") changes what an input's outputs are: false for the rows that say
// so (scheduling, input selection, reporting), true for every other flag. --plan pins only these.
bool setting_changes_outputs(const std::string& long_name);
// --max-memory's text ("4G", "512M", "1.5GiB", "100000000") in bytes; a usage error naming `what` and the text for
// text that is not a size of at least 1M.
std::uint64_t parse_memory_size(const std::string& text, const std::string& what);
// --shard's text: I/N or (with --plan) I; a usage error naming `what` otherwise.
void parse_shard_option(const std::string& text, const std::string& what, std::int64_t& index, std::int64_t& count);


// A library message for the command line: the library names its own knobs (ExecOptions::max_samples, the
// max_pixels option); a command-line user is told the flag that sets them.
std::string for_cli(std::string message);

// Throws rsz::Error with ErrorCode::InvalidArgument (exit status 2).
[[noreturn]] void usage_error(const std::string& message);

// Files, folders (their images and .npy files, sorted; recursively with --recursive) and quoted globs, expanded in
// order, duplicates dropped. A path that does not exist, or a pattern or folder that matches nothing, is a usage
// error.
// Patterns may use "**" for any number of folders ('photos/**/*.jpg'); {dir} and {relpath} then follow the folders it
// matched. Hidden files and folders (names starting with '.') are left out of folders and patterns unless `hidden`.
std::vector<std::string> expand_inputs(const std::vector<std::string>& patterns, bool recursive, bool hidden = false);

// expand_inputs as a stream, for rsz plan: each input is handed to `visit` as it is found (with its {dir} and its
// shard key), folders walked one at a time with their entries sorted, so a tree of millions of files is never held
// whole (only several -i keep the names seen, to drop duplicates). What expand_inputs reports as a failed input (a
// missing file, a pattern or folder without inputs) is a usage error here; standard input cannot be planned.
void for_each_input(const std::vector<std::string>& patterns, bool recursive, bool hidden,
                    const std::function<void(const std::string& path, const std::string& dir,
                                             const std::string& key)>& visit);

// Whether the name is a tensor format's (rsz/io/formats.h: .npy): read and written as its values, not as pixels.
bool is_tensor_path(const std::string& path);
// Whether the name is one rsz reads as an input: a tensor format's, or an image codec's that reads.
bool is_input_path(const std::string& path);

// A tensor read from an image or .npy file, with what is needed to write results back in kind.
struct LoadedInput {
  Tensor tensor{DataType::Float32, {0}};  // the input as a float tensor; unused when `in_place`
  io::Image image;                        // the decoded pixels, the operator's input themselves when `in_place`
  bool in_place = false;
  bool from_image = false;
  int bit_depth = 8;
  DataType result_type = DataType::Float32;  // the data type of the operator's output
  std::string icc_profile;                   // the input image's colour profile, carried to image outputs
  std::string exif;                          // and its EXIF (orientation 1 once applied) and XMP
  std::string xmp;
  // The conversion of the results to sRGB (--colorspace srgb, or --strip of a profile that is not sRGB); null when
  // the colours are written as computed.
  std::shared_ptr<const io::SrgbTransform> to_srgb;

  // The operator input: `tensor`, or when `in_place` a unorm8/unorm16 1 x C x H x W view of the interleaved pixels.
  ConstTensorView view() const;
  Dims sizes() const { return view().sizes(); }
};

// What an input is, from its header alone (nothing decoded): the planning phase checks outputs and memory with it.
struct InputProbe {
  Dims sizes;                          // the operator input: 1 x C x H x W for images (upright), the .npy shape
  DataType type = DataType::Float32;   // the compute type of images, the .npy tensor's type
  bool from_image = false;
  int bit_depth = 8;                   // images
  bool rows_in_order = false;          // images that io::open_image_rows reads band by band
  bool jpeg = false;                   // images: a JPEG file (what --decode gpu's stage may decode)
  int max_shrink = 1;                  // images: io::ImageInfo::max_shrink (scaled decode: JPEG's 1/8)
  bool animated = false;               // images: an animation (GIF), of which the first frame is read
  std::uint64_t file_bytes = 0;        // images: the bytes of the file their decoder holds (io::ImageInfo::file_bytes)
  std::uint64_t decoder_bytes = 0;     // images: the decoder's own (io::ImageInfo::decoder_bytes)
  std::uint64_t metadata_bytes = 0;    // images: the metadata carried (io::ImageInfo::metadata_bytes)
};
// How the command line reads images: EXIF orientation unless --no-exif, --max-pixels, and files that a decoder holds
// whole (all formats but PNG) within the memory budget.
io::ImageReadOptions image_read_options(const CommonOptions& options);
// A file's size and modification time (in nanoseconds): a file whose stamp differs from an earlier one changed in
// between. nullopt where it cannot be read.
std::optional<std::pair<std::int64_t, std::int64_t>> file_stamp(const std::string& path);
// Throws rsz::Error naming the path: a missing file ("no such file or folder"), a pattern that matched nothing, a
// folder with no inputs, an unreadable or corrupt header, an image over --max-pixels, a non-float .npy.
InputProbe probe_input(const std::string& path, const CommonOptions& options);

// Sets `input.to_srgb` where its results are to be converted to sRGB: an image with an ICC profile that is not sRGB
// (io::is_srgb_profile), under --colorspace srgb or --strip. A profile whose colour space does not fit the image's
// `channels` (a CMYK JPEG's, converted as it is decoded) is left as it is.
void plan_colour(LoadedInput& input, const CommonOptions& options, int channels, const std::string& path);
// A result of an image converted to sRGB (input.to_srgb), in float32: straight colour values clamped to [0, 1]
// (premultiplied ones divided by their alpha first, and multiplied again after), alpha as it is (pixels.cpp).
Tensor to_srgb(const ConstTensorView& tensor, const io::SrgbTransform& transform, io::AlphaMode mode);
// --linear: a float32 image tensor of straight, sRGB-encoded values as linear light (IEC 61966-2-1's decoding in
// double, alpha as it is), premultiplied when `mode` says so, in `type`; and a result back to sRGB encoding (values
// clamped to [0, 1], premultiplied ones divided by their alpha first and multiplied again after), in float32.
Tensor to_linear(const Tensor& straight, DataType type, io::AlphaMode mode);
Tensor from_linear(const ConstTensorView& tensor, io::AlphaMode mode);
// True when load_input keeps an image of `channels` as decoded (no float copy).
bool image_runs_in_place(int channels, const CommonOptions& options);
// `threads`: kernel threads for this call (run_jobs hands out the cores left over when there are fewer inputs than
// --jobs); results do not depend on it.
ExecOptions exec_options(const CommonOptions& options, int threads);
// Whether --backend runs on the host (auto, cpu, reference), where views of the input are used where they lie.
bool host_backend(const CommonOptions& options);
// Indices [first, first + count) of `whole` along `axis`, as a view with the same strides (TensorView or
// ConstTensorView).
template <typename View>
View slice_of(const View& whole, int axis, std::int64_t first, std::int64_t count) {
  Dims sizes = whole.sizes();
  sizes[static_cast<std::size_t>(axis)] = count;
  using Byte = std::conditional_t<std::is_same_v<View, TensorView>, std::byte, const std::byte>;
  auto* origin = static_cast<Byte*>(whole.data()) +
                 first * whole.stride(axis) * static_cast<std::int64_t>(element_size(whole.dtype()));
  return View(origin, whole.dtype(), sizes, whole.strides());
}
// Every operator reads unorm inputs, so an image whose values need no conversion other than p / (2^b - 1) (float32
// compute type; no premultiplied alpha) is kept as decoded, with no float copy (image_runs_in_place).
// `jpeg_shrink`: a JPEG is decoded at 1 / jpeg_shrink of its size (io::ImageReadOptions::jpeg_shrink).
LoadedInput load_input(const std::string& path, const CommonOptions& options, int jpeg_shrink = 1);
// Writes a tensor as .npy or as an image (the format follows the extension), creating parent folders.
void save_output(const std::string& path, const ConstTensorView& tensor, const LoadedInput& source,
                 const CommonOptions& options);
// Whether save_output turns a `type` result of `channels` channels into its image at `path` by quantizing its samples
// alone (tensor_to_image to 8 bits): an image format, float32, 1 or 3 channels kept, 8-bit output, no sRGB conversion,
// --grayscale or --linear step. Its 8-bit samples may then be made elsewhere (on the GPU) and saved by save_output8.
bool quantizes_only(const std::string& path, std::int64_t channels, DataType type, const LoadedInput& source,
                    const CommonOptions& options);
// save_output of such a result from its image: `pixels`, its 8-bit samples (tensor_to_image's for the result), whose
// metadata this fills in. The same bytes as save_output of the result.
void save_output8(const std::string& path, io::Image pixels, const LoadedInput& source, const CommonOptions& options);
// Whether such a result (quantizes_only) at `path` is encoded on the GPU (--encode gpu): a JPEG output.
bool encodes_on_gpu(const std::string& path, std::int64_t channels, DataType type, const LoadedInput& source,
                    const CommonOptions& options);
// save_output of such a result from its JPEG file encoded on the GPU (`file`, no metadata): the metadata save_output
// gives added (io::with_jpeg_metadata), written whole (or kept as a .tar member).
void save_encoded_jpeg(const std::string& path, std::string_view file, std::int64_t channels,
                       const LoadedInput& source, const CommonOptions& options);
// The quality JPEG outputs are encoded at: --quality, or io's default.
int jpeg_quality(const CommonOptions& options);
// The rows of one band of save_output_rows for a result of these sizes computed by `threads` threads: about 256 KiB
// of float32 results a thread, up to kBandThreads threads (the default: the most a band holds).
constexpr int kBandThreads = 16;
std::int64_t band_rows(const Dims& sizes, int threads = kBandThreads);
// Writes output rows [first_row, first_row + band rows) of the result into `band` (a 1 x C x rows x W view).
using BandCompute = std::function<void(std::int64_t first_row, const TensorView& band)>;
// save_output for a 1 x C x H x W result (`sizes`, `type`) that can be computed band by band: a PNG or JPEG image
// is encoded as the bands are computed, so the whole result (nor its 8/16-bit image) never exists in memory; any
// other output computes the whole result with compute(0, all of it) and goes through save_output. The bytes
// written are the same either way. `threads`: the threads that compute a band (band_rows).
void save_output_rows(const std::string& path, const Dims& sizes, DataType type, const LoadedInput& source,
                      const CommonOptions& options, int threads, const BandCompute& compute);
// A float tensor of 1 or 3 channels (2 or 4 with alpha) as gray, alpha kept (pixels.cpp): ITU-R BT.601 luma as
// Pillow's convert('L') computes it on the samples of an output of `depth` bits, (19595 R + 38470 G + 7471 B + 32768)
// >> 16, so that writing gives those integers; with premultiplied alpha, the same weights on the values.
Tensor to_grayscale(const ConstTensorView& tensor, int depth, io::AlphaMode mode);
// A result with alpha (2 or 4 channels) laid over `background` (RGB in [0, 1]; its luma for gray), without the alpha
// channel: for formats that cannot hold alpha. `mode` says how the colours hold the alpha (premultiplied or not).
Tensor flatten_alpha(const ConstTensorView& tensor, io::AlphaMode mode, const std::array<float, 3>& background);
// Whether output_pixel_offset - y is exact in float32 for every whole y in [0, rows): then output row y of an
// operator equals row 0 of the same call with that offset, bit for bit (SEMANTICS.md §1.1's o - op is the same
// real number rounded once), which is what lets a result be computed in bands.
bool offset_shifts_exactly(float output_pixel_offset, std::int64_t rows);

// Output naming. A template (contains '{') expands {stem} {ext} {op} {index} {label} {id}; otherwise `output` is a
// folder when it exists as one, ends with '/', or there are several inputs (names then follow `default_name`), and a
// file path for a single input.
struct NameFields {
  std::string input;
  std::string op;
  std::string ext;  // the output extension with its dot
  std::string index;
  std::string label;
  std::string id;
};
std::string expand_template(const std::string& pattern, const NameFields& fields);
bool output_is_template(const std::string& output);
bool output_is_folder(const std::string& output, std::size_t input_count);
// The output path of one result: `output` expanded when it is a template; `folder_template` expanded inside it
// when it is a folder; `output` itself otherwise.
std::string plan_output(const std::string& output, std::size_t input_count, const NameFields& fields,
                        const std::string& folder_template);
// The extension results of `input` get by default: its own for images, .npy for tensors.
std::string default_extension(const std::string& input);
// Whether every output sample of a resample with `params` is one input pixel with weight 1 (nearest mode, or scale 1
// with offsets that cancel on H and W): premultiplying alpha then cannot change a visible colour, but would zero the
// colour of fully transparent pixels, so such jobs run with straight alpha (an identity resize reproduces an image).
bool single_tap(const ResampleParams& params);
// `options` with straight alpha where `params` is single_tap and `output` is an image, else as they are (a .npy
// tensor keeps the documented premultiplied colours, whatever the resize).
CommonOptions alpha_for(const CommonOptions& options, const ResampleParams& params, const std::string& output);

// The extension of `input`'s outputs named by a folder or {ext}: --format's where given ("convert this folder to
// JPEG"), else default_extension(input).
std::string output_extension(const std::string& input, const CommonOptions& options);
// A usage error where --format is given and `path`, planned from -o `output`, has another extension (a template with
// a literal one): --format never silently loses to the name. Not for .tar members or -o -.
void check_output_format(const std::string& path, const std::string& output, const CommonOptions& options);
// Refuses an output that is one of the inputs (images, tensors, and `other_inputs`: config, ROI, batch-index and
// batch files), or the same output planned twice.
void check_outputs(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                   const std::vector<std::string>& other_inputs = {});

// What one processed input produced, for --json and --dry-run.
struct OutputRecord {
  std::string path;
  Dims shape;
  std::string dtype;
  std::optional<io::CropRecord> crop;  // roi-align crops: a line of the manifest
};

// A job that fails after some of its outputs were written (a crop that cannot be saved after others were): those
// outputs are complete (written atomically) and stay; the runner counts them, prints their --json lines and lists them
// in the manifest, and reports the failure.
class PartialFailure : public Error {
 public:
  PartialFailure(ErrorCode code, const std::string& message, std::vector<OutputRecord> written)
      : Error(code, message), written_(std::move(written)) {}
  const std::vector<OutputRecord>& written() const { return written_; }

 private:
  std::vector<OutputRecord> written_;
};

// What a job will produce, computed from its input's probe before anything runs.
struct JobPlan {
  Dims result;                        // the operator's output tensor
  DataType type = DataType::Float32;  // its data type
  Dims output;                        // the tensor of one output file (the result, or one ROI's crop)
  std::uint64_t extra_bytes = 0;      // other working memory (ROI tensors)
  // Nonzero: the memory the input's samples take while the job runs, instead of the whole decoded image (a JPEG
  // decoded band by band: a window of its rows; its file, InputProbe::file_bytes, is held too).
  std::uint64_t input_bytes = 0;
  std::string warning;                // one line for stderr (and a --json record) before anything runs; "" for none
  // The input cannot be used as planned (annotations that state another image size): it fails alone (exit 1) with
  // this message as it is; "" for none. A request that cannot be met is thrown as InvalidArgument instead.
  std::string failure;
  // The job computes its one output with save_output_rows: an output whose format encodes rows (PNG, JPEG) then
  // holds one band of the result at a time, not the whole result (the memory budget counts it so).
  bool banded = false;
  // Resample jobs: the exact RESAMPLE1 call planned for the input (from its probe's sizes, before any scaled decode)
  // and the scaled decode chosen (--shrink-on-load: 1, 2, 4 or 8). The job runs this plan (nothing is planned twice)
  // and --dry-run --json shows it.
  std::optional<io::ResizePlan> resize;
  int shrink = 1;
  InputProbe probe;  // what the plan was made from (the runner fills it)
};

// One unit of work: an input, its planned outputs, the plan from its probe, and the function that processes it with
// the given kernel thread count (returns what it wrote).
struct Job {
  std::string input;
  std::string op;          // "resample", "upsample2d" or "roi_align": the operator in --json records
  std::string size_flags;  // what sets the output size, named when an output would be too large
  std::vector<std::string> planned_outputs;
  // roi-align's crops as manifest lines, known before the run: a job skipped by --skip-existing still lists them.
  std::vector<io::CropRecord> planned_crops;
  // roi-align's boxes left out of the crops (--rois-check skip, --skip-crowd, --skip-difficult), each with its
  // reason: manifest lines without a crop, counted in the summary (unless the job fails at planning). A job with no
  // box left to crop has no plan and no run: its image is not read.
  std::vector<io::CropRecord> left_out;
  bool boxes_scaled = false;  // roi-align: the boxes were scaled to the image's size (--size-mismatch scale)
  std::function<JobPlan(const InputProbe&)> plan;
  // Runs with the plan `plan` made (JobPlan::probe set).
  std::function<std::vector<OutputRecord>(const JobPlan& plan, int threads)> run;
  // A chained batch step's input does not exist before the step it comes from has run: planning (and --dry-run)
  // use this probe, predicted from that step's plan (predict_outputs), instead of reading the file.
  std::optional<InputProbe> probe;
};

// Plans the jobs as run_jobs would (throwing the usage error it would, before anything is written) and returns, for
// every planned output of every job that would succeed, the probe reading that output back would give: what a
// chained step that takes these outputs as inputs is planned with.
std::map<std::string, InputProbe> predict_outputs(const std::vector<Job>& jobs, const CommonOptions& options);

// check_outputs over every planned output of the jobs.
void check_jobs(const std::vector<std::string>& inputs, const std::vector<Job>& jobs,
                const std::vector<std::string>& other_inputs = {});
// Files the run reads that exist now ("-": standard input): no output of the run is renamed over one of them
// (io::ProtectedFiles, until the run ends), however it is named: a link made live by a folder the run makes, a bind
// mount, standard input redirected from an output's file.
void protect_inputs(const std::vector<std::string>& inputs);
// Of `candidates` (another --plan shard's inputs), those in a folder where an output of `jobs` (or `more_outputs`)
// goes: the only ones an output could replace but through a link to a file elsewhere. Each folder is resolved once,
// so a shard of a plan of 10^6 inputs compares a few with its outputs instead of all.
std::vector<std::string> inputs_where_outputs_go(const std::vector<std::string>& candidates, const std::vector<Job>& jobs,
                                                 const std::vector<std::string>& more_outputs = {});
// A usage error where the nearest existing folder above `path` is not a folder (a file), so that `path` could not be
// made: a file written once the run's other outputs are (--manifest) fails before them instead. `what` names it.
void check_output_folder(const std::string& path, const std::string& what);
// -o -: a usage error where standard output is redirected into one of the files the run reads (`>> input.png`).
void check_standard_output(const std::vector<std::string>& inputs, const std::vector<std::string>& other_inputs);

// Plans, then runs the jobs. Planning probes every input's header (in parallel) before anything is written: an
// input that cannot be used is a failed input (reported, the others still run; exit 1), while an output that cannot
// be written as asked (unknown extension, 16 bits into JPEG, over --max-pixels or the memory budget because of the
// requested size) is a usage error: exit 2, nothing created. Then the jobs run on --jobs threads, each holding its
// share of the memory budget while it runs; a progress bar shows on a terminal, --json prints a line per output and
// per failure, each failure is reported on one line, and the exit status is returned. With --dry-run it lists the
// planned outputs (and failures) and writes nothing.
int run_jobs(const std::vector<Job>& jobs, const CommonOptions& options);
// --decode gpu: the files the GPU decodes in one batch, and the inputs a run keeps in flight (at least): a batch
// decoding, the one before it resizing, and one filling (its files read, the last batch's results encoded and
// written) meanwhile.
constexpr int kGpuBatch = 64;
constexpr int kGpuInFlight = 3 * kGpuBatch;
// run_jobs in two steps: planned when made (every input's header read, .tar parts laid out, warnings said, a usage
// error thrown before anything is written), then run once: with --dry-run the plan's view (its records, its lines),
// else the jobs. Planning and running happen in the calling thread's run (detail::current_run()).
namespace detail {
struct RunState;
}  // namespace detail
class JobRun;
class PlannedJobs {
 public:
  PlannedJobs(std::vector<Job> jobs, CommonOptions options);
  // Planned on jobs the caller keeps (for as long as this lives).
  struct Borrowed {};
  PlannedJobs(const std::vector<Job>& jobs, CommonOptions options, Borrowed);
  ~PlannedJobs();
  PlannedJobs(const PlannedJobs&) = delete;
  PlannedJobs& operator=(const PlannedJobs&) = delete;
  // The plan as records: each planned output (Planned: shape, data type, resize call) and each input that failed
  // planning (Failed), in the order of the inputs. Outputs kept by --skip-existing are not listed (skipped() counts
  // their jobs).
  std::vector<pipeline::Record> records() const;
  std::size_t size() const;  // the jobs
  std::size_t skipped() const;
  const CommonOptions& options() const { return *options_; }
  // The exit status. An input changed since it was planned (its size or time) is planned again first.
  int run();

 private:
  void plan(CommonOptions options);
  std::unique_ptr<std::vector<Job>> owned_jobs_;
  const std::vector<Job>* jobs_ = nullptr;  // where JobRun refers to them
  std::unique_ptr<CommonOptions> options_;
  detail::RunState* run_state_ = nullptr;  // the run it was planned in, which it runs in
  std::size_t first_record_ = 0;  // the run's records before planning's
  std::unique_ptr<JobRun> run_;
  bool ran_ = false;
};

// Webdataset tar output (app/tar_output.cpp): -o naming a .tar file, with {part} (6 digits) and {shard} (the
// --shard index, 0 without, 5 digits). Each output of a job is a member PATTERN/KEY.EXT while planning (a path that
// names no file: save_output encodes it in memory instead), and run_jobs writes the members part by part.
// Checks `output` and turns tar output on when it ends in .tar (a usage error for placeholders other than {shard}
// and {part}, no {part}, --format npy or --manifest); a usage error for --tar-part-size without it.
void configure_tar_output(const CommonOptions& options, const std::string& output);
// Whether -o names a .tar output (configure_tar_output found one), and whether `output` is that -o.
bool tar_output_on();
bool is_tar_output(const std::string& output);
// The key of an input's samples: shard_key(input) with '.' made '_' ("_" for none).
std::string tar_key(const std::string& input);
// The member path planned for an output of a .tar run: PATTERN/KEY.EXT, KEY being tar_key(input), for a crop
// tar_key(input)/ID (its id, else its index, tar-safe); EXT from --format, else fields.ext.
std::string tar_member_path(const NameFields& fields);
// The member name of a planned member path (PATTERN/ removed); "" for another path.
std::string tar_member_name(const std::string& path);
// save_output of a member path: keeps its encoded bytes for the part being written (replacing any).
void keep_tar_member(const std::string& path, std::vector<std::uint8_t> bytes);
// The bytes kept for a member path (moved out); throws InternalError where none were kept.
std::vector<std::uint8_t> take_tar_member(const std::string& path);
// Forgets the bytes kept, every part's (a run that ends early).
void drop_tar_members();
// Forgets the bytes kept for `paths`, the members of part `part`, and its spill file (a part written or not written).
void drop_tar_members(const std::vector<std::string>& paths, std::size_t part);
// The largest of the members of `paths` moved to disk (spill_tar_members), 0 for none: what reading one back holds.
std::uint64_t largest_spilled_tar_member(const std::vector<std::string>& paths);
// The bytes of the members of `paths` held in memory (0 for one moved to disk or not kept).
std::uint64_t tar_member_bytes(const std::vector<std::string>& paths);
// Moves the members of `paths` out of memory into part `part`'s spill file (an unnamed file beside the .tar output,
// which no signal or kill can leave behind; each part its own, so that one ends with its part); take_tar_member reads
// them back. For parts whose members would not fit the memory budget (--max-memory).
void spill_tar_members(const std::vector<std::string>& paths, std::size_t part);
// The parts of a .tar run: the jobs in the order of their keys, cut after every --tar-part-size samples (planned
// outputs; an image's crops are never split), each with its file name; a part of no sample is merged into the one
// before it (a run of no sample has no part).
struct TarPart {
  std::string path;
  std::vector<std::size_t> jobs;  // indices into the jobs, in key order
  std::size_t samples = 0;
};
std::vector<TarPart> tar_parts(const std::vector<Job>& jobs, const CommonOptions& options);

// Shards (app/shards.cpp): a job split over machines by a stable hash of each input's key, so that adding inputs
// never moves an existing one to another shard.
// The key of an input: its path below the -i folder (or below the fixed folders of a pattern, as {relpath} has it)
// without extension; a file given by name: its stem; roi-align's dataset images: their path below the image root.
std::string shard_key(const std::string& input);
// FNV-1a 64 of the key's bytes, modulo `count`.
std::int64_t shard_of_key(const std::string& key, std::int64_t count);
// Gives `input` the key of its path below `root` ("" for the current folder), unless it has one (an -i input).
void set_shard_key_below(const std::string& input, const std::string& root);
// With --shard I/N (no --plan): the jobs whose input's shard is I, in order, and options.summary_prefix set to
// "shard I/N: K of M inputs; "; without --shard, `jobs` as they are. A usage error for --shard I without /N or --plan.
// With --plan (the jobs are the shard's list already): `jobs`, options.summary_prefix set, and --skip-existing on.
std::vector<Job> select_shard(std::vector<Job> jobs, CommonOptions& options);
// --plan STATE --shard I: the inputs of STATE/shards/0000I.txt (a usage error for -i given too, a shard the plan does
// not have, or a list that is not the one rsz plan wrote), their {dir} as rsz plan found it.
std::vector<std::string> plan_shard_inputs(const CommonOptions& options);
// --plan: the inputs of every shard's list (none without --plan): a shard's outputs must not replace another shard's
// inputs either. A list that cannot be read is left out here (its shard says why).
std::vector<std::string> plan_all_inputs(const CommonOptions& options);
// With --plan, for roi-align's annotations that name their own images (COCO, VOC, a dataset JSON): the jobs of the
// images whose key (below the image root) falls in the plan's shard I of N, whatever the shard's list holds (plan the
// image folder: its lists then hold the same images), so every image the annotations name, a missing one included,
// runs in exactly one shard. The shard's counts become these images'. Without --plan, `jobs` as they are.
std::vector<Job> plan_shard_of_named_images(std::vector<Job> jobs, const CommonOptions& options);
// `output` as the whole plan names it: with --plan, a folder when the whole plan has several inputs, however many
// this shard holds.
std::string shard_output_target(const CommonOptions& options, const std::string& output);
// roi-align's --manifest as this run writes it: with --plan, the shard's own, its number before the extension
// (crops/m.jsonl -> crops/m.00003.jsonl; rsz merge joins them); else `manifest`.
std::string shard_manifest(const CommonOptions& options, const std::string& manifest);
// The line --verbose prints: the backend that runs the operators and why (for auto: why not cuda); `staged`: the run
// has resample or roi_align jobs, which --backend cuda batches through the GPU stage (batches_on_gpu).
std::string backend_note(const CommonOptions& options, bool staged);

// Flag values: numbers are read by io::parse_float_list / parse_int_list (rsz/io/ops.h), the readers of the operator
// fields' flags, so shorthands and fields take the same text and refuse it in the same words.
// The core's range check (check_params) of parameters set by a flag: refused as a usage error naming the flag and
// its text in front of the core's message.
template <typename Params>
void check_flag(const std::string& flag, const std::string& text, const Params& params) {
  try {
    check_params(params);
  } catch (const InternalError&) {
    throw;
  } catch (const Error& e) {
    usage_error(flag + " " + text + ": " + e.what());
  }
}

}  // namespace rsz::app
