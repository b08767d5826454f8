// The command line's outputs: writing results (atomically, PNG and JPEG band by band), output names (templates,
// folders, files) and the checks that no output replaces an input or another output.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "pipeline.h"
#include "pipeline_internal.h"
#include "rsz/error.h"
#include "rsz/io/naming.h"
#include "rsz/io/npy.h"

namespace fs = std::filesystem;

namespace rsz::app {
namespace detail {

int output_depth(const CommonOptions& options, bool from_image, int input_depth) {
  if (options.depth != 0) return options.depth;
  return from_image ? input_depth : 8;
}

int output_depth(const CommonOptions& options, bool from_image, int input_depth, const std::string& path) {
  const int depth = output_depth(options, from_image, input_depth);
  if (options.depth != 0 || options.strict || is_tensor_path(path)) return depth;
  return depth == 16 && !io::format_keeps_16_bits(path) ? 8 : depth;
}

int output_channels(const CommonOptions& options, std::int64_t channels) {
  if (!options.grayscale) return static_cast<int>(channels);
  return channels == 2 || channels == 4 ? 2 : 1;
}

int output_channels(const CommonOptions& options, std::int64_t channels, const std::string& path) {
  const int c = output_channels(options, channels);
  if (options.strict || is_tensor_path(path) || !io::is_image_path(path)) return c;
  return (c == 2 || c == 4) && !io::format_keeps_alpha(path) ? c - 1 : c;
}

}  // namespace detail

using detail::input_dirs;
using detail::output_channels;
using detail::output_depth;

namespace {

// {stem}: the input's name without its extension, as a name of one path component. A stem of "." or ".." (a file
// named "..." has one) would climb folders once placed in a path, and a missing folder given with a trailing '/'
// ("-i photos/") has none: they are "_" and the folder's own name.
std::string input_stem(const std::string& input) {
  fs::path path(input);
  while (!path.has_filename() && path.has_relative_path()) path = path.parent_path();
  const std::string stem = path.stem().string();
  return stem.empty() || stem == "." || stem == ".." ? std::string("_") : stem;
}

}  // namespace

namespace {

std::string sanitize_name_part(const std::string& text) {
  std::string out;
  for (char c : text) {
    // Bytes of multi-byte UTF-8 characters (>= 0x80) are kept, so "猫" and "狗" stay two different folders.
    const auto u = static_cast<unsigned char>(c);
    const bool safe = std::isalnum(u) || u >= 0x80 || c == '-' || c == '_' || c == '.' || c == ' ';
    out += safe ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_";
  return out;
}

void create_parent(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) throw Error(ErrorCode::Io, path + ": cannot create the folder " + parent.string() + ": " + ec.message());
}

// Whether a result of `channels` is converted to sRGB (result_image).
bool converts(const LoadedInput& source, std::int64_t channels) {
  return source.to_srgb && source.to_srgb->channels() == channels;
}

// The ICC profile an output of a result of `channels` carries (unless --strip): sRGB's where its pixels were
// converted (the gray twin for --grayscale), else the input's.
const std::string& output_profile(const LoadedInput& source, const CommonOptions& options, std::int64_t channels) {
  if (!converts(source, channels)) return source.icc_profile;
  return options.grayscale && channels >= 3 ? io::srgb_gray_profile() : source.to_srgb->profile();
}

// The image a result tensor becomes at `path`: converted to sRGB where planned, gray when asked, flattened onto --background where the format has no
// alpha, the output depth, the alpha convention.
io::Image result_image(const ConstTensorView& tensor, const LoadedInput& source, const CommonOptions& options,
                       const std::string& path) {
  const int depth = output_depth(options, source.from_image, source.bit_depth, path);
  std::optional<Tensor> encoded;
  ConstTensorView image = tensor;
  if (options.linear && source.from_image) {  // linear light back to sRGB's encoding
    encoded = from_linear(tensor, options.alpha);
    image = encoded->view();
  }
  std::optional<Tensor> srgb;
  if (converts(source, tensor.size(1))) {
    srgb = to_srgb(image, *source.to_srgb, options.alpha);
    image = srgb->view();
  }
  std::optional<Tensor> gray;
  if (options.grayscale) {
    gray = to_grayscale(image, depth, options.alpha);
    image = gray->view();
  }
  std::optional<Tensor> flat;
  if (output_channels(options, tensor.size(1), path) < image.size(1)) {
    flat = flatten_alpha(image, options.alpha, options.background);
    image = flat->view();
  }
  return io::tensor_to_image(image, depth, options.alpha);
}


// The metadata an output of a result of `channels` channels carries (none with --strip).
void carry_metadata(io::Image& image, std::int64_t channels, const LoadedInput& source, const CommonOptions& options) {
  if (options.strip) return;
  image.icc_profile = output_profile(source, options, channels);
  image.exif = source.exif;
  image.xmp = source.xmp;
}

io::ImageWriteOptions write_options(const CommonOptions& options) {
  io::ImageWriteOptions write;
  write.quality = options.quality;
  write.lossless = options.lossless;
  write.png_compression = options.png_compression;
  return write;
}

// An output's encoded bytes written whole at `path`, or kept for the part being written where it is a .tar member.
void store_encoded(const std::string& path, std::vector<std::uint8_t> bytes, bool member) {
  if (member) {
    keep_tar_member(path, std::move(bytes));
  } else {
    io::write_encoded_image(path, bytes);
  }
}

bool names_output_file(const std::string& output) {
  return is_input_path(output);
}

}  // namespace

bool offset_shifts_exactly(float output_pixel_offset, std::int64_t rows) {
  for (std::int64_t y = 0; y < rows; ++y) {
    const float shifted = output_pixel_offset - static_cast<float>(y);
    if (static_cast<double>(shifted) != static_cast<double>(output_pixel_offset) - static_cast<double>(y) ||
        static_cast<float>(y) != static_cast<double>(y)) {
      return false;
    }
  }
  return true;
}

std::int64_t band_rows(const Dims& sizes, int threads) {
  // About 256 KiB of float32 results a thread, 4 MiB at most: a band's results and its 8/16-bit samples are still in
  // the core's cache when they are converted and encoded (bands of 4 MiB on one thread took 1.2x the time of a
  // 1080p JPEG job, mostly waiting for memory and faulting in fresh pages), and every thread gets rows.
  const std::int64_t h = sizes.size() == 4 ? sizes[2] : 1;
  const std::int64_t row = sizes.size() == 4 ? sizes[1] * sizes[3] * 4 : 1;
  const std::int64_t bytes = std::int64_t{256 << 10} * std::clamp(threads, 1, kBandThreads);
  return std::min(h, std::max<std::int64_t>(16, bytes / std::max<std::int64_t>(1, row)));
}

void save_output_rows(const std::string& path, const Dims& sizes, DataType type, const LoadedInput& source,
                      const CommonOptions& options, int threads, const BandCompute& compute) {
  if (is_tensor_path(path) || !io::encodes_image_rows(path) || sizes.size() != 4 || sizes[0] != 1) {
    Tensor result(type, sizes, TensorInit::Uninitialized);
    compute(0, result.view());
    save_output(path, result.view(), source, options);
    return;
  }
  const bool member = !tar_member_name(path).empty();  // a .tar output's member: encoded in memory
  if (!member) create_parent(path);
  const std::int64_t c = sizes[1];
  const std::int64_t h = sizes[2];
  const std::int64_t w = sizes[3];
  const std::int64_t rows_per_band = band_rows(sizes, threads);
  Tensor band(type, {1, c, rows_per_band, w}, TensorInit::Uninitialized);
  io::Image header;
  header.width = w;
  header.height = h;
  header.channels = output_channels(options, c, path);
  header.bit_depth = output_depth(options, source.from_image, source.bit_depth, path);
  carry_metadata(header, c, source, options);
  const io::RowProducer produce = [&](std::int64_t first, io::Image& rows) {
    const TensorView view(band.data(), type, {1, c, rows.height, w}, band.layout().strides());
    compute(first, view);
    io::Image image = result_image(view, source, options, path);
    rows.data8.swap(image.data8);
    rows.data16.swap(image.data16);
  };
  store_encoded(path, io::encode_image_rows(path, header, rows_per_band, produce, write_options(options)), member);
}

namespace {

// Writes the image of a result of `channels` channels (result_image's) at `path`, with the metadata it carries.
void save_image(const std::string& path, io::Image image, std::int64_t channels, const LoadedInput& source,
                const CommonOptions& options, bool member) {
  // The colour profile travels with the pixels (io writes it where the format and channels allow).
  carry_metadata(image, channels, source, options);
  store_encoded(path, io::encode_image(path, image, write_options(options)), member);
}

}  // namespace

void save_output(const std::string& path, const ConstTensorView& tensor, const LoadedInput& source,
                 const CommonOptions& options) {
  const bool member = !tar_member_name(path).empty();  // a .tar output's member: encoded in memory
  if (!member) create_parent(path);
  if (const io::TensorFormat* format = io::find_tensor_format(path)) {
    if (options.linear && source.from_image) {  // encoded back, as image outputs are
      format->write(path, from_linear(tensor, options.alpha).view());
    } else {
      format->write(path, tensor);
    }
  } else {
    save_image(path, result_image(tensor, source, options, path), tensor.size(1), source, options, member);
  }
}

bool quantizes_only(const std::string& path, std::int64_t channels, DataType type, const LoadedInput& source,
                    const CommonOptions& options) {
  return io::find_tensor_format(path) == nullptr && type == DataType::Float32 && (channels == 1 || channels == 3) &&
         output_depth(options, source.from_image, source.bit_depth, path) == 8 &&
         !(options.linear && source.from_image) && !converts(source, channels) && !options.grayscale &&
         output_channels(options, channels, path) == channels;
}

bool encodes_on_gpu(const std::string& path, std::int64_t channels, DataType type, const LoadedInput& source,
                    const CommonOptions& options) {
  return options.encode_gpu && io::image_format_name(path) == "jpeg" &&
         quantizes_only(path, channels, type, source, options);
}

void save_encoded_jpeg(const std::string& path, std::string_view file, std::int64_t channels,
                       const LoadedInput& source, const CommonOptions& options) {
  const bool member = !tar_member_name(path).empty();
  if (!member) create_parent(path);
  io::Image metadata;
  carry_metadata(metadata, channels, source, options);
  store_encoded(path, io::with_jpeg_metadata(file, metadata, static_cast<int>(channels)), member);
}

int jpeg_quality(const CommonOptions& options) {
  return options.quality > 0 ? options.quality : io::kDefaultJpegQuality;
}

void save_output8(const std::string& path, io::Image pixels, const LoadedInput& source, const CommonOptions& options) {
  const bool member = !tar_member_name(path).empty();
  if (!member) create_parent(path);
  const int channels = pixels.channels;
  save_image(path, std::move(pixels), channels, source, options, member);
}

bool output_is_template(const std::string& output) { return output.find('{') != std::string::npos; }

bool output_is_folder(const std::string& output, std::size_t input_count) {
  if (!output.empty() && output.back() == '/') return true;
  std::error_code ec;
  if (fs::is_directory(output, ec)) {
    if (names_output_file(output)) {
      usage_error("-o " + output + ": this is an existing folder with a file name; end it with '/' to write into it, "
                  "or choose another file name");
    }
    return true;
  }
  if (input_count > 1) {
    if (names_output_file(output)) {
      usage_error("-o " + output + ": one file name for " + std::to_string(input_count) +
                  " inputs; give a folder (ending in '/') or a name template such as 'out/{stem}" +
                  fs::path(output).extension().string() + "'");
    }
    return true;
  }
  return false;
}

std::string expand_template(const std::string& pattern, const NameFields& f) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    const std::size_t close = pattern.find('}', i);
    if (close == std::string::npos) usage_error("output template '" + pattern + "': '{' without a closing '}'");
    const std::string key = pattern.substr(i + 1, close - i - 1);
    if (key == "dir" || key == "relpath") {
      // The input's folder below the -i folder it came from (-r mirrors a tree); relpath adds the stem.
      const auto found = input_dirs().find(f.input);
      const std::string dir = found == input_dirs().end() ? "" : found->second;
      const std::string stem = input_stem(f.input);
      out += key == "dir" ? (dir.empty() ? "." : dir) : (dir.empty() ? stem : dir + "/" + stem);
    } else if (key == "parent") {
      const std::string parent = fs::absolute(f.input).parent_path().filename().string();
      out += parent.empty() || parent == "." || parent == ".." ? std::string("_") : parent;
    } else if (key == "stem") {
      out += input_stem(f.input);
    } else if (key == "ext") {
      out += f.ext;
    } else if (key == "op") {
      out += f.op;
    } else if (key == "index") {
      if (f.index.empty()) usage_error("output template '" + pattern + "': {index} is only for roi-align crops");
      out += f.index;
    } else if (key == "label") {
      out += f.label.empty() ? std::string("unlabeled") : sanitize_name_part(f.label);
    } else if (key == "id") {
      out += f.id.empty() ? (f.index.empty() ? std::string("0") : f.index) : sanitize_name_part(f.id);
    } else {
      usage_error("output template '" + pattern + "': unknown placeholder {" + key + "}; allowed: " +
                  io::placeholder_list(true));
    }
    i = close;
  }
  return out;
}

std::string plan_output(const std::string& output, std::size_t input_count, const NameFields& fields,
                        const std::string& folder_template) {
  if (output.empty()) usage_error("-o/--output is required");
  if (is_tar_output(output)) return tar_member_path(fields);
  if (output_is_template(output)) return expand_template(output, fields);
  if (output_is_folder(output, input_count)) {
    return (fs::path(output) / expand_template(folder_template, fields)).string();
  }
  return output;
}

std::string default_extension(const std::string& input) {
  // Formats rsz reads but cannot write (PBM, PNM) give PNG results.
  if (!is_tensor_path(input) && !io::is_image_path(input)) return ".png";
  return fs::path(input).extension().string();
}

bool single_tap(const ResampleParams& params) {
  if (params.interpolation == InterpolationMode::Nearest) return true;
  for (const std::size_t a : {std::size_t{2}, std::size_t{3}}) {
    if (params.scales[a] != 1.0f || params.input_pixel_offsets[a] + params.output_pixel_offsets[a] != 0.0f) {
      return false;
    }
  }
  return true;
}

CommonOptions alpha_for(const CommonOptions& options, const ResampleParams& params, const std::string& output) {
  CommonOptions out = options;
  if (single_tap(params) && !is_tensor_path(output)) out.alpha = io::AlphaMode::Straight;
  return out;
}

std::string output_extension(const std::string& input, const CommonOptions& options) {
  return options.format.empty() ? default_extension(input) : "." + options.format;
}

void check_output_format(const std::string& path, const std::string& output, const CommonOptions& options) {
  // With -i -, --format may name standard input's format (a JPEG stream written to out.png is a conversion).
  const bool stdin_input = std::find(options.inputs.begin(), options.inputs.end(), "-") != options.inputs.end();
  if (options.format.empty() || is_tar_output(output) || output == "-" || stdin_input) return;
  // The format's row of the codec table, as the writer picks it from the extension (.jpg and .jpeg are one).
  const std::string wanted = "output." + options.format;
  if (is_tensor_path(wanted) ? is_tensor_path(path) : io::same_image_format(path, wanted)) return;
  const std::string ext = fs::path(path).extension().string();
  usage_error("--format " + options.format + ": -o " + output + " names " + (ext.empty() ? "files without an extension" : ext + " files") +
              " (" + path + "); name the outputs with {ext} or a folder, which take --format's extension, or drop "
              "--format");
}

void check_outputs(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                   const std::vector<std::string>& other_inputs) {
  detail::CanonicalPaths canonical;
  std::set<std::string> input_set;
  for (const auto& in : inputs) input_set.insert(canonical.of(in));
  for (const auto& in : other_inputs) {
    if (!in.empty()) input_set.insert(canonical.of(in));
  }
  std::set<std::string> planned;
  for (const auto& out : outputs) {
    bool folder = false;
    const std::string key = canonical.of(out, &folder);
    if (input_set.count(key)) {
      usage_error(out + ": the output would overwrite an input; choose another -o");
    }
    if (!planned.insert(key).second) {
      usage_error(out + ": two outputs would get this same name; use a template with {stem}, {index} or {id}");
    }
    if (folder) usage_error(out + ": the output is an existing folder, not a file name");
  }
}

void check_jobs(const std::vector<std::string>& inputs, const std::vector<Job>& jobs,
                const std::vector<std::string>& other_inputs) {
  if (tar_output_on()) {  // webdataset groups a sample's members by key: two samples may not share one
    std::map<std::string, std::string> sample_of;  // key -> its input
    for (const Job& job : jobs) {
      for (const std::string& out : job.planned_outputs) {
        const std::string name = tar_member_name(out);
        const std::string key = name.substr(0, name.find('.'));
        const auto [it, added] = sample_of.emplace(key, job.input);
        if (added) continue;
        usage_error(printable(job.input) + " and " + printable(it->second) + ": two samples would get the key '" +
                    printable(key) + "' in the .tar output (the key is the path below -i without extension, '.' "
                    "made '_'; a crop's adds /ID); rename one, or give them ids of their own");
      }
    }
  }
  std::vector<std::string> outputs;
  for (const Job& job : jobs) outputs.insert(outputs.end(), job.planned_outputs.begin(), job.planned_outputs.end());
  // The parts' files as the whole job would number them (a shard writes at most as many): each a file written like
  // any output.
  if (tar_output_on()) {
    for (const TarPart& part : tar_parts(jobs, CommonOptions{})) outputs.push_back(part.path);
  }
  check_outputs(inputs, outputs, other_inputs);
}

std::vector<std::string> inputs_where_outputs_go(const std::vector<std::string>& candidates, const std::vector<Job>& jobs,
                                                 const std::vector<std::string>& more_outputs) {
  if (candidates.empty()) return {};
  detail::CanonicalPaths canonical;
  std::set<std::string> folders;  // where the outputs go, canonical
  const auto add_folder = [&](const std::string& output) {
    folders.insert(fs::path(canonical.of(output)).parent_path().string());
  };
  for (const Job& job : jobs) {
    for (const std::string& output : job.planned_outputs) add_folder(output);
  }
  if (tar_output_on()) {
    for (const TarPart& part : tar_parts(jobs, CommonOptions{})) add_folder(part.path);
  }
  for (const std::string& output : more_outputs) add_folder(output);
  std::map<std::string, bool> beside;  // an input's folder as named -> whether an output goes there
  std::vector<std::string> kept;
  for (const std::string& input : candidates) {
    const fs::path path(input);
    const std::string folder = path.has_parent_path() ? path.parent_path().string() : std::string(".");
    auto known = beside.find(folder);
    if (known == beside.end()) {
      known = beside.emplace(folder, folders.count(detail::canonical_or_absolute(folder)) > 0).first;
    }
    if (known->second) kept.push_back(input);
  }
  return kept;
}

void check_output_folder(const std::string& path, const std::string& what) {
  for (fs::path folder = fs::path(path).parent_path(); !folder.empty(); folder = folder.parent_path()) {
    std::error_code ec;
    const fs::file_status st = fs::status(folder, ec);
    if (!fs::exists(st)) {
      if (folder == folder.parent_path()) break;
      continue;
    }
    if (!fs::is_directory(st)) {
      usage_error(what + " " + path + ": " + folder.string() + " is a file, not a folder; the " +
                  "file cannot be made there");
    }
    break;
  }
}

void check_standard_output(const std::vector<std::string>& inputs, const std::vector<std::string>& other_inputs) {
  struct stat out {};
  if (::fstat(STDOUT_FILENO, &out) != 0 || !S_ISREG(out.st_mode)) return;
  for (const std::vector<std::string>* list : {&inputs, &other_inputs}) {
    for (const std::string& in : *list) {
      struct stat st {};
      if (in.empty() || ::stat(in.c_str(), &st) != 0 || st.st_dev != out.st_dev || st.st_ino != out.st_ino) continue;
      usage_error("-o -: standard output is redirected into " + in + ", which the run reads; redirect it elsewhere");
    }
  }
}

void protect_inputs(const std::vector<std::string>& inputs) {
  detail::CanonicalPaths canonical;
  std::vector<std::string> paths;
  paths.reserve(inputs.size());
  for (const std::string& in : inputs) {
    if (!in.empty()) paths.push_back(in == "-" ? in : canonical.of(in));
  }
  detail::current_run().protected_inputs.add(paths);
}

}  // namespace rsz::app
