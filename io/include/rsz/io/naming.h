// Output name templates: the one table of placeholders that the command line's -o and batch files' "output" share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#pragma GCC visibility push(default)

namespace rsz::io {

struct NamePlaceholder {
  const char* name;     // "stem": written {stem}
  const char* meaning;  // for help texts and messages
  bool crops_only;      // {index}, {label}, {id}: name one ROI crop each (roi_align)
};
// {stem} {ext} {op} {dir} {relpath} {parent} {index} {label} {id}, in that order.
const std::vector<NamePlaceholder>& name_placeholders();
// "{stem} {ext} {op} {dir} {relpath} {parent}" and, with `crops`, " {index} {label} {id}".
std::string placeholder_list(bool crops);
// What is wrong with a template ("" when nothing): a '{' without '}', or a placeholder that is unknown or (without
// `crops`) names a crop. The text is "a template with placeholders ..." or "a template whose '{' ...", ready for
// "expected ..." messages.
std::string template_problem(const std::string& text, bool crops);

// ---- shards (rsz's --shard I/N, rsz plan; Python's rsz.shard_of)
// An input's key: its path below the folder `root` ("." for the current one) without extension, '/'-separated
// ("cats/a" for root/cats/a.jpg); the file's stem where the path is not below `root`.
std::string shard_key(const std::string& path, const std::string& root);
// FNV-1a 64, fed as bytes come: shard keys, shard lists' fingerprints, pinned parameters and the files they name.
class Fnv1a64 {
 public:
  void add(const void* bytes, std::size_t size);
  void add(const std::string& bytes) { add(bytes.data(), bytes.size()); }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 14695981039346656037ull;
};
// FNV-1a 64 of the key's bytes.
std::uint64_t fnv1a64(const std::string& bytes);
// A path's extension in lower case, with its dot (".jpg" for "a/B.JPG"; "" for none): the one spelling that the codec
// table, annotation readers and the command line compare.
std::string lower_extension(const std::string& path);
// The shard of a key among `count` (>= 1): fnv1a64 of the key with '.' made '_' (a .tar output's sample key, so that
// keys that become one sample key share a shard), mod count. Stable: adding inputs moves no key.
std::int64_t shard_of(const std::string& key, std::int64_t count);

}  // namespace rsz::io

#pragma GCC visibility pop
