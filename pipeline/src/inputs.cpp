// The command line's inputs: files, folders (recursively with -r), patterns with "**", hidden names left out
// unless --hidden; the header probe planning works from; loading an input as the operator's tensor.
#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <set>

#include "pipeline.h"
#include "pipeline_internal.h"
#include "streams.h"
#include "rsz/error.h"
#include "rsz/io/npy.h"

namespace fs = std::filesystem;

namespace rsz::app {
namespace detail {

std::string canonical_or_absolute(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) return fs::absolute(path).lexically_normal().string();
  // A folder that does not exist yet followed by ".." ("new/../linked/a.png") goes lexically; what is left may name
  // existing folders and links again, through which the kernel resolves it once the folder is made (an output there
  // would replace linked/'s input): resolved again until nothing changes.
  for (int round = 0; round < 16; ++round) {
    fs::path again = fs::weakly_canonical(p, ec);
    if (ec || again == p) break;
    p = std::move(again);
  }
  return p.string();
}

std::string CanonicalPaths::of(const std::string& path, bool* folder) {
  if (folder != nullptr) *folder = false;
  const fs::path given(path);
  const fs::path name = given.filename();
  struct stat st {};
  const bool found = ::lstat(path.c_str(), &st) == 0;
  const bool plain = found ? S_ISREG(st.st_mode) : errno == ENOENT;
  // ".." after a folder that does not exist yet leaves the name in another folder than the one lstat looked in.
  if (!plain || name.empty() || name == "." || path.find("..") != std::string::npos) {
    if (folder != nullptr) {
      std::error_code ec;
      *folder = fs::is_directory(given, ec);
    }
    return canonical_or_absolute(path);
  }
  const std::string parent = given.has_parent_path() ? given.parent_path().string() : std::string(".");
  auto known = folders_.find(parent);
  if (known == folders_.end()) known = folders_.emplace(parent, canonical_or_absolute(parent)).first;
  return (fs::path(known->second) / name).string();
}

std::map<std::string, std::string>& input_dirs() { return current_run().input_dirs; }

std::map<std::string, std::string>& input_keys() { return current_run().input_keys; }

std::string key_below(const fs::path& file, const fs::path& root) {
  return io::shard_key(file.string(), root.string());
}

}  // namespace detail

using detail::canonical_or_absolute;
using detail::input_dirs;
using detail::input_keys;
using detail::key_below;

namespace {

bool has_glob_characters(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// A name starting with '.': hidden files (macOS's AppleDouble "._x.jpg" beside every copied photo, editors'
// swap files) and folders (.git, .cache) are left out of folder listings and patterns unless --hidden asks.
bool is_hidden(const fs::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name[0] == '.' && name != "." && name != "..";
}

// Every regular file below `folder` (recursively or not) for which `keep` says yes, sorted; hidden entries (and what
// is inside hidden folders) only with `hidden`.
// The files `keep` refused go to `not_read`.
template <typename Keep, typename NotRead>
std::vector<std::string> walk_folder(const std::string& folder, bool recursive, bool hidden, const Keep& keep,
                                     const NotRead& not_read) {
  std::vector<std::string> files;
  std::vector<std::string> skipped;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code entry_ec;
    const bool folder_entry = it->is_directory(entry_ec);
    if (!hidden && is_hidden(it->path())) {
      if (folder_entry) it.disable_recursion_pending();
      continue;
    }
    if (folder_entry) {
      if (!recursive) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(entry_ec)) continue;
    if (keep(it->path())) {
      files.push_back(it->path().string());
    } else {
      skipped.push_back(it->path().string());
    }
  }
  std::sort(skipped.begin(), skipped.end());
  not_read(skipped);
  if (ec) usage_error(folder + ": cannot list the folder: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// A folder's images and .npy files. The other files (what no codec reads: a .gif, a .txt beside the photos) are
// counted in the run's report, which the summary names once: a file is never left out without a word.
std::vector<std::string> list_folder(const std::string& folder, bool recursive, bool hidden) {
  return walk_folder(
      folder, recursive, hidden,
      [](const fs::path& p) { return is_input_path(p.string()); },
      [](const std::vector<std::string>& skipped) {
        if (skipped.empty()) return;
        detail::RunState& run = detail::current_run();
        const std::lock_guard<std::mutex> lock(run.totals_mutex);
        for (const std::string& f : skipped) {
          // Names are kept to drop duplicates (a folder given twice, or within another) up to a bound: a dataset's
          // million label files are counted without holding every name.
          if (run.not_read_seen.size() < 100000 && !run.not_read_seen.insert(canonical_or_absolute(f)).second) continue;
          ++run.totals.not_read;
          if (run.totals.not_read_files.size() < pipeline::Report::kMaxNotReadKept) run.totals.not_read_files.push_back(f);
        }
      });
}

std::vector<std::string> split_components(const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& part : fs::path(path)) {
    if (!part.empty()) parts.push_back(part.string());
  }
  return parts;
}

// Whether path components [si, end) match pattern components [pi, end): fnmatch per component, "**" any number of
// components (none included); a leading '.' is matched only by a '.' in the pattern unless `hidden`.
bool match_components(const std::vector<std::string>& pattern, std::size_t pi, const std::vector<std::string>& path,
                      std::size_t si, bool hidden) {
  if (pi == pattern.size()) return si == path.size();
  if (pattern[pi] == "**") {
    for (std::size_t k = si; k <= path.size(); ++k) {
      if (match_components(pattern, pi + 1, path, k, hidden)) return true;
    }
    return false;
  }
  if (si == path.size() || ::fnmatch(pattern[pi].c_str(), path[si].c_str(), hidden ? 0 : FNM_PERIOD) != 0) {
    return false;
  }
  return match_components(pattern, pi + 1, path, si + 1, hidden);
}

// The leading components of a pattern that hold no pattern characters: the folder a "**" walk starts from ("." for
// none); `fixed` is their count.
fs::path pattern_root(const std::vector<std::string>& parts, std::size_t& fixed) {
  fixed = 0;
  fs::path root;
  while (fixed < parts.size() && !has_glob_characters(parts[fixed]) && parts[fixed] != "**") root /= parts[fixed++];
  return root.empty() ? fs::path(".") : root;
}

// A pattern with a "**" component: the files below its fixed leading folders whose path matches, sorted.
std::vector<std::string> globstar_paths(const std::string& pattern, bool hidden) {
  const std::vector<std::string> parts = split_components(pattern);
  std::size_t fixed = 0;
  const fs::path root = pattern_root(parts, fixed);
  const std::vector<std::string> rest(parts.begin() + static_cast<std::ptrdiff_t>(fixed), parts.end());
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return {};
  return walk_folder(root.string(), true, hidden, [&](const fs::path& p) {
    return match_components(rest, 0, split_components(p.lexically_relative(root).string()), 0, hidden);
  }, [](const std::vector<std::string>&) {});  // a pattern chooses its files: the others are not meant
}

std::vector<std::string> glob_paths(const std::string& pattern) {
  glob_t result{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &result);
  std::vector<std::string> paths;
  if (rc == 0) {
    for (std::size_t i = 0; i < result.gl_pathc; ++i) paths.emplace_back(result.gl_pathv[i]);
  }
  ::globfree(&result);
  if (rc != 0 && rc != GLOB_NOMATCH) usage_error(pattern + ": cannot expand the pattern");
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& patterns, bool recursive, bool hidden) {
  if (patterns.empty()) usage_error("no input given; use -i FILE, -i FOLDER or -i 'PATTERN'");
  std::vector<std::string> result;
  std::set<std::string> seen;
  detail::CanonicalPaths canonical;
  const auto add = [&](const std::string& path) {
    if (seen.insert(canonical.of(path)).second) result.push_back(path);
  };
  for (const std::string& pattern : patterns) {
    if (pattern.empty()) usage_error("-i \"\": an empty name; give a file, a folder or a quoted pattern");
    std::error_code ec;
    if (fs::is_directory(pattern, ec)) {
      const auto files = list_folder(pattern, recursive, hidden);
      for (const auto& f : files) {
        add(f);
        const std::string dir = fs::path(f).parent_path().lexically_relative(pattern).string();
        input_dirs()[f] = dir == "." ? "" : dir;
        input_keys()[f] = key_below(f, pattern);
      }
      if (files.empty()) add(pattern);  // probe_input reports the empty folder as a failed input
    } else if (!fs::exists(pattern, ec) && has_glob_characters(pattern)) {
      std::size_t matched = 0;
      const std::vector<std::string> parts = split_components(pattern);
      const bool globstar = std::find(parts.begin(), parts.end(), "**") != parts.end();
      std::size_t fixed = 0;
      const fs::path root = pattern_root(parts, fixed);  // where a "**" walk starts
      for (const auto& f : globstar ? globstar_paths(pattern, hidden) : glob_paths(pattern)) {
        if (!fs::is_regular_file(f, ec)) continue;
        if (!hidden && !globstar && is_hidden(f)) continue;  // glob(3) leaves dot files out unless named with '.'
        add(f);
        ++matched;
        input_keys()[f] = key_below(f, root);
        if (globstar) {  // {dir} / {relpath}: the folders the "**" walked through
          const std::string dir = fs::path(f).parent_path().lexically_relative(root).string();
          input_dirs()[f] = dir == "." ? "" : dir;
        }
      }
      if (matched == 0) add(pattern);  // reported as a failed input: the others still run
    } else {
      add(pattern);  // a missing file is a failed input too (probe_input names it)
    }
  }
  return result;
}

void for_each_input(const std::vector<std::string>& patterns, bool recursive, bool hidden,
                    const std::function<void(const std::string& path, const std::string& dir,
                                             const std::string& key)>& visit) {
  if (patterns.empty()) usage_error("no input given; use -i FILE, -i FOLDER or -i 'PATTERN'");
  // Duplicates are dropped as expand_inputs drops them; with one pattern there are none, and no name is kept.
  std::set<std::string> seen;
  const bool several = patterns.size() > 1;
  std::size_t found = 0;  // files a pattern names, duplicates of an earlier pattern's included
  detail::CanonicalPaths canonical;
  const auto add = [&](const std::string& path, const std::string& dir, const std::string& key) {
    ++found;
    if (several && !seen.insert(canonical.of(path)).second) return;
    visit(path, dir, key);
  };
  const auto wanted = [](const fs::path& p) { return is_input_path(p.string()); };
  // One folder at a time, its entries sorted: what is held is the folders being walked, not the whole tree.
  std::function<void(const fs::path&, const fs::path&, const std::vector<std::string>*, bool)> walk =
      [&](const fs::path& root, const fs::path& folder, const std::vector<std::string>* rest, bool descend) {
        std::vector<std::pair<std::string, bool>> entries;  // name, is a folder
        std::error_code ec;
        for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
          if (!hidden && is_hidden(it->path())) continue;
          std::error_code entry_ec;
          const bool is_folder = it->is_directory(entry_ec);
          if (!is_folder && !it->is_regular_file(entry_ec)) continue;
          // A link to a folder is not walked into, as expand_inputs' listing does not: `ln -s .. loop` would never
          // end, and `ln -s . self` would list every file again below it.
          if (is_folder && it->is_symlink(entry_ec)) continue;
          entries.emplace_back(it->path().filename().string(), is_folder);
        }
        if (ec) usage_error(folder.string() + ": cannot list the folder: " + ec.message());
        std::sort(entries.begin(), entries.end());
        for (const auto& [name, is_folder] : entries) {
          const fs::path path = folder / name;
          if (is_folder) {
            if (descend) walk(root, path, rest, descend);
            continue;
          }
          if (!wanted(path)) continue;
          if (rest != nullptr &&
              !match_components(*rest, 0, split_components(path.lexically_relative(root).string()), 0, hidden)) {
            continue;
          }
          const std::string dir = path.parent_path().lexically_relative(root).string();
          add(path.string(), dir == "." ? "" : dir, key_below(path, root));
        }
      };
  for (const std::string& pattern : patterns) {
    if (pattern.empty()) usage_error("-i \"\": an empty name; give a file, a folder or a quoted pattern");
    if (pattern == "-") usage_error("-i -: standard input cannot be planned; give files, folders or patterns");
    std::error_code ec;
    const std::size_t before = found;
    if (fs::is_directory(pattern, ec)) {
      walk(pattern, pattern, nullptr, recursive);
      if (found == before) usage_error(pattern + ": the folder holds no images or .npy files" +
                                         (recursive ? "" : " (-r descends into sub-folders)"));
    } else if (!fs::exists(pattern, ec) && has_glob_characters(pattern)) {
      const std::vector<std::string> parts = split_components(pattern);
      std::size_t fixed = 0;
      const fs::path root = pattern_root(parts, fixed);
      if (std::find(parts.begin(), parts.end(), "**") != parts.end()) {
        const std::vector<std::string> rest(parts.begin() + static_cast<std::ptrdiff_t>(fixed), parts.end());
        if (fs::is_directory(root, ec)) walk(root, root, &rest, true);
      } else {
        for (const auto& f : glob_paths(pattern)) {  // glob(3) lists one pattern's matches
          if (!fs::is_regular_file(f, ec) || (!hidden && is_hidden(f))) continue;
          add(f, "", key_below(f, root));
        }
      }
      if (found == before) usage_error(pattern + ": the pattern matches no file");
    } else if (!fs::is_regular_file(pattern, ec)) {
      usage_error(pattern + ": no such file or folder");
    } else {
      add(pattern, "", fs::path(pattern).stem().string());
    }
  }
}

bool is_tensor_path(const std::string& path) { return io::find_tensor_format(path) != nullptr; }

bool is_input_path(const std::string& path) { return is_tensor_path(path) || io::is_readable_image_path(path); }

io::ImageReadOptions image_read_options(const CommonOptions& options) {
  io::ImageReadOptions read_options;
  read_options.apply_exif_orientation = !options.no_exif;
  read_options.max_pixels = options.max_pixels;
  read_options.max_file_bytes = options.memory_budget();  // a decoder that holds the whole file holds it in the budget
  return read_options;
}

std::optional<std::pair<std::int64_t, std::int64_t>> file_stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(static_cast<std::int64_t>(st.st_size),
                        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
}

InputProbe probe_input(const std::string& path, const CommonOptions& options) {
  check_stream_input(path);
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) {
    throw Error(ErrorCode::Io, path + (has_glob_characters(path) ? ": the pattern matches no file"
                                                                 : ": no such file or folder"));
  }
  if (fs::is_directory(status)) {
    throw Error(ErrorCode::Io, path + ": the folder holds no images or .npy files" +
                                   (options.recursive ? "" : " (-r descends into sub-folders)"));
  }
  InputProbe probe;
  if (const io::TensorFormat* format = io::find_tensor_format(path)) {
    const io::TensorInfo info = format->probe(path);
    if (info.dtype != DataType::Float32 && info.dtype != DataType::Float16) {
      throw Error(ErrorCode::InvalidDataType, path + ": a " + to_string(info.dtype) +
                                                  " tensor cannot be an operator input; float32 or float16 is needed");
    }
    probe.sizes = info.sizes;
    probe.type = info.dtype;
    return probe;
  }
  const io::ImageInfo info = io::read_image_info(path, image_read_options(options));
  probe.sizes = {1, info.channels, info.height, info.width};
  probe.type = options.dtype;
  probe.from_image = true;
  probe.bit_depth = info.bit_depth;
  probe.rows_in_order = info.rows_in_order;
  probe.jpeg = info.format == "jpeg";
  probe.max_shrink = info.max_shrink;
  probe.animated = info.animated;
  probe.file_bytes = info.file_bytes;
  probe.decoder_bytes = info.decoder_bytes;
  probe.metadata_bytes = info.metadata_bytes;
  return probe;
}


ConstTensorView LoadedInput::view() const {
  if (!in_place) return tensor.view();
  const std::int64_t c = image.channels;
  const bool deep = image.bit_depth == 16;
  return ConstTensorView(deep ? static_cast<const void*>(image.data16.data()) : image.data8.data(),
                         deep ? DataType::UNorm16 : DataType::UNorm8, {1, c, image.height, image.width},
                         {image.height * image.width * c, 1, image.width * c, c});
}

LoadedInput load_input(const std::string& path, const CommonOptions& options, int jpeg_shrink) {
  check_stream_input(path);
  LoadedInput loaded;
  if (const io::TensorFormat* format = io::find_tensor_format(path)) {
    loaded.tensor = format->read(path);
    if (loaded.tensor.dtype() != DataType::Float32 && loaded.tensor.dtype() != DataType::Float16) {
      throw Error(ErrorCode::InvalidDataType, path + ": a " + to_string(loaded.tensor.dtype()) +
                                                  " tensor cannot be an operator input; float32 or float16 is needed");
    }
    loaded.result_type = loaded.tensor.dtype();
    return loaded;
  }
  io::ImageReadOptions read_options = image_read_options(options);
  read_options.jpeg_shrink = jpeg_shrink;
  loaded.image = io::read_image(path, read_options);
  loaded.from_image = true;
  loaded.bit_depth = loaded.image.bit_depth;
  loaded.result_type = options.dtype;
  loaded.icc_profile = loaded.image.icc_profile;
  loaded.exif = loaded.image.exif;
  loaded.xmp = loaded.image.xmp;
  plan_colour(loaded, options, loaded.image.channels, path);
  loaded.in_place = image_runs_in_place(loaded.image.channels, options);
  if (options.linear) {  // sRGB-encoded samples to linear light, then premultiplied as asked (pixels.cpp)
    loaded.tensor = to_linear(io::image_to_tensor(loaded.image, DataType::Float32, io::AlphaMode::Straight),
                              loaded.result_type, options.alpha);
    loaded.image = io::Image{};
  } else if (!loaded.in_place) {
    loaded.tensor = io::image_to_tensor(loaded.image, loaded.result_type, options.alpha);
    loaded.image = io::Image{};  // the pixels are not needed any more
  }
  return loaded;
}

void plan_colour(LoadedInput& input, const CommonOptions& options, int channels, const std::string& path) {
  input.to_srgb.reset();
  if (!input.from_image || input.icc_profile.empty() || !(options.to_srgb || options.strip)) return;
  try {
    // A profile of another colour space than the pixels' (a CMYK JPEG's, converted as it is decoded) is left as it
    // is; one lcms2 cannot read fails the input under --colorspace srgb (its colours cannot be made sRGB).
    const int colours = io::profile_channels(input.icc_profile);
    if (colours < 0) {
      throw Error(ErrorCode::Format, path + ": its ICC profile cannot be read, so its colours cannot be converted to "
                                            "sRGB (--colorspace srgb)");
    }
    if (colours != (channels <= 2 ? 1 : 3) || io::is_srgb_profile(input.icc_profile)) return;
    input.to_srgb = std::make_shared<const io::SrgbTransform>(input.icc_profile, channels, path);
  } catch (const Error&) {
    // --colorspace srgb that cannot be met fails the input (lcms2 missing, a profile it cannot use); --strip alone
    // strips as it always did.
    if (options.to_srgb) throw;
  }
}

}  // namespace rsz::app
