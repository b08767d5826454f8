// The placeholders of output name templates (naming.h).
#include <algorithm>
#include <cctype>
#include "rsz/io/naming.h"

#include <filesystem>

namespace rsz::io {

const std::vector<NamePlaceholder>& name_placeholders() {
  static const std::vector<NamePlaceholder> table = {
      {"stem", "the input's file name without extension", false},
      {"ext", "the output's extension with its dot (the input's for images, .npy for tensors)", false},
      {"op", "the operator or command (resample, thumbnail, upsample2d, roi_align)", false},
      {"dir", "the input's folder below the -i folder it was found in (\".\" at its top)", false},
      {"relpath", "the input's path below the -i folder, without extension", false},
      {"parent", "the name of the input's folder", false},
      {"index", "the crop's number in its image, from 0", true},
      {"label", "the crop's label, file-name-safe (\"unlabeled\" without one)", true},
      {"id", "the crop's id, file-name-safe (its index without one)", true},
  };
  return table;
}

std::string placeholder_list(bool crops) {
  std::string list;
  for (const NamePlaceholder& p : name_placeholders()) {
    if (p.crops_only && !crops) continue;
    list += (list.empty() ? "{" : " {") + std::string(p.name) + "}";
  }
  return list;
}

std::string template_problem(const std::string& text, bool crops) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') continue;
    const std::size_t close = text.find('}', i);
    if (close == std::string::npos) return "a template whose '{' placeholders are closed by '}'";
    const std::string name = text.substr(i + 1, close - i - 1);
    bool known = false;
    for (const NamePlaceholder& p : name_placeholders()) {
      if (name == p.name && (crops || !p.crops_only)) known = true;
    }
    if (!known) {
      return crops ? "a template with placeholders " + placeholder_list(true)
                   : "a template with placeholders " + placeholder_list(false) + " (" +
                         placeholder_list(true).substr(placeholder_list(false).size() + 1) +
                         " are only for roi_align steps)";
    }
    i = close;
  }
  return "";
}

std::string shard_key(const std::string& path, const std::string& root) {
  const std::filesystem::path file(path);
  std::filesystem::path relative = file.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") relative = file.filename();
  return relative.replace_extension().generic_string();
}

void Fnv1a64::add(const void* bytes, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < size; ++i) {
    hash_ ^= p[i];
    hash_ *= 1099511628211ull;
  }
}

std::uint64_t fnv1a64(const std::string& bytes) {
  Fnv1a64 fnv;
  fnv.add(bytes);
  return fnv.value();
}

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

std::int64_t shard_of(const std::string& key, std::int64_t count) {
  // The key as a .tar output's sample key spells it ('.' made '_'): keys that become one sample key ("p.q" and
  // "p_q") fall in one shard, whose run refuses them, instead of two shards each writing a sample "p_q".
  std::string sample = key;
  std::replace(sample.begin(), sample.end(), '.', '_');
  return static_cast<std::int64_t>(fnv1a64(sample) % static_cast<std::uint64_t>(count < 1 ? 1 : count));
}

}  // namespace rsz::io
