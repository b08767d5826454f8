// Tar archives through libarchive (tar.h), written atomically through AtomicFile.
#include "rsz/io/tar.h"

#include <archive.h>
#include <archive_entry.h>

#include <exception>
#include <memory>
#include <set>

#include "file_util.h"

namespace rsz::io {

namespace {

struct ArchiveFree {
  void operator()(archive* a) const noexcept { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const noexcept { archive_entry_free(e); }
};

// libarchive's write callback: the bytes go to the temporary file (an exception may not cross libarchive's C frames,
// so it is kept for the caller to rethrow).
struct Sink {
  detail::AtomicFile* file = nullptr;
  std::exception_ptr error;
};

la_ssize_t write_callback(archive*, void* data, const void* buffer, size_t length) {
  auto* sink = static_cast<Sink*>(data);
  try {
    sink->file->write(buffer, length);
    return static_cast<la_ssize_t>(length);
  } catch (...) {
    sink->error = std::current_exception();
    return -1;
  }
}

}  // namespace

void write_tar(const std::string& path, const std::vector<TarMember>& members) {
  std::set<std::string> names;
  for (const TarMember& m : members) {
    if (m.name.empty()) detail::fail(ErrorCode::InvalidArgument, path, "a tar member without a name");
    if (!names.insert(m.name).second) {
      detail::fail(ErrorCode::InvalidArgument, path, "two tar members named '" + m.name + "'");
    }
  }
  detail::AtomicFile file(path);
  Sink sink{&file, nullptr};
  const std::unique_ptr<archive, ArchiveFree> a(archive_write_new());
  if (!a) detail::fail(ErrorCode::Io, path, "cannot start a tar archive (out of memory)");
  const auto check = [&](int status, const char* what) {
    if (status >= ARCHIVE_WARN) return;
    if (sink.error) std::rethrow_exception(sink.error);
    const char* message = archive_error_string(a.get());
    detail::fail(ErrorCode::Io, path, std::string("cannot ") + what + ": " + (message ? message : "libarchive error"));
  };
  // pax "restricted": plain ustar headers, with a pax extended header only where ustar cannot hold a name.
  check(archive_write_set_format_pax_restricted(a.get()), "choose the tar format");
  check(archive_write_open2(a.get(), &sink, nullptr, write_callback, nullptr, nullptr), "write the archive");
  const std::unique_ptr<archive_entry, EntryFree> entry(archive_entry_new());
  for (const TarMember& m : members) {
    archive_entry_clear(entry.get());
    archive_entry_set_pathname(entry.get(), m.name.c_str());
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), 0644);
    archive_entry_set_size(entry.get(), static_cast<la_int64_t>(m.bytes.size()));
    archive_entry_set_mtime(entry.get(), 0, 0);
    archive_entry_set_uid(entry.get(), 0);
    archive_entry_set_gid(entry.get(), 0);
    check(archive_write_header(a.get(), entry.get()), ("write the header of '" + m.name + "'").c_str());
    if (!m.bytes.empty()) {
      const la_ssize_t wrote = archive_write_data(a.get(), m.bytes.data(), m.bytes.size());
      if (wrote < 0 || static_cast<std::size_t>(wrote) != m.bytes.size()) {
        check(ARCHIVE_FATAL, ("write '" + m.name + "'").c_str());
      }
    }
  }
  check(archive_write_close(a.get()), "finish the archive");
  file.commit();
}

}  // namespace rsz::io
