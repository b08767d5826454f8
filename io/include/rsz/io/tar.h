// Tar archives of files held in memory: the shards of a webdataset (rsz's -o 'out/{shard}-{part}.tar').
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz::io {

struct TarMember {
  std::string name;  // the path inside the archive ("photos/cat.jpg")
  std::vector<std::uint8_t> bytes;
};

// Writes a tar archive of `members`, in the order given, through libarchive: POSIX ustar headers (a pax extended
// header only for a name ustar cannot hold), each member a regular file of mode 0644, modified at time 0, owned by
// uid and gid 0 with no user or group name, so the same members always give the same bytes. Written as every output
// is (a temporary file in the target's folder, flushed unless set_sync_outputs(false), renamed over `path` when
// complete): a failure or a signal leaves no partial archive. Does not create folders. Throws ErrorCode::Io naming
// `path`, ErrorCode::InvalidArgument for an empty or duplicate member name.
void write_tar(const std::string& path, const std::vector<TarMember>& members);

// The same, with the members named by `names` (in that order) and each one's bytes asked of `bytes_of(i)` just before
// it is written, so that one member at a time is held in memory.
void write_tar(const std::string& path, const std::vector<std::string>& names,
               const std::function<std::vector<std::uint8_t>(std::size_t index)>& bytes_of);

}  // namespace rsz::io

#pragma GCC visibility pop
