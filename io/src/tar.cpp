// Tar archives through libarchive (tar.h), written atomically through AtomicFile. libarchive is loaded with dlopen the
// first time an archive is written: linked, it pulls in a dozen libraries (ICU's 30 MB of data, libxml2, nettle,
// zstd, ...) that every rsz process would load at start-up for an output few runs write (start-up went from 2.5 to
// 3.6 ms, paid by every file of a shell loop).
#include "rsz/io/tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>

#include <exception>
#include <memory>
#include <set>

#include "file_util.h"

namespace rsz::io {

namespace {

// The libarchive functions write_tar calls, resolved from the library once.
struct Libarchive {
  decltype(&archive_write_new) write_new = nullptr;
  decltype(&archive_write_free) write_free = nullptr;
  decltype(&archive_error_string) error_string = nullptr;
  decltype(&archive_write_set_format_pax_restricted) set_format_pax_restricted = nullptr;
  decltype(&archive_write_open2) open2 = nullptr;
  decltype(&archive_write_header) write_header = nullptr;
  decltype(&archive_write_data) write_data = nullptr;
  decltype(&archive_write_close) close = nullptr;
  decltype(&archive_entry_new) entry_new = nullptr;
  decltype(&archive_entry_free) entry_free = nullptr;
  decltype(&archive_entry_clear) entry_clear = nullptr;
  decltype(&archive_entry_set_pathname) set_pathname = nullptr;
  decltype(&archive_entry_set_filetype) set_filetype = nullptr;
  decltype(&archive_entry_set_perm) set_perm = nullptr;
  decltype(&archive_entry_set_size) set_size = nullptr;
  decltype(&archive_entry_set_mtime) set_mtime = nullptr;
  decltype(&archive_entry_set_uid) set_uid = nullptr;
  decltype(&archive_entry_set_gid) set_gid = nullptr;
  std::string error;  // why it could not be loaded; "" when loaded
};

const Libarchive& libarchive() {
  static const Libarchive lib = [] {
    Libarchive l;
    detail::SharedLibrary library;
    if (!library.open(RSZ_LIBARCHIVE_SONAME)) {
      l.error = std::string("libarchive (") + RSZ_LIBARCHIVE_SONAME +
                ") cannot be loaded: " + (library.why().empty() ? "unknown" : library.why());
      return l;
    }
    const bool all = library.resolve("archive_write_new", l.write_new) &&
                     library.resolve("archive_write_free", l.write_free) &&
                     library.resolve("archive_error_string", l.error_string) &&
                     library.resolve("archive_write_set_format_pax_restricted", l.set_format_pax_restricted) &&
                     library.resolve("archive_write_open2", l.open2) &&
                     library.resolve("archive_write_header", l.write_header) &&
                     library.resolve("archive_write_data", l.write_data) &&
                     library.resolve("archive_write_close", l.close) &&
                     library.resolve("archive_entry_new", l.entry_new) &&
                     library.resolve("archive_entry_free", l.entry_free) &&
                     library.resolve("archive_entry_clear", l.entry_clear) &&
                     library.resolve("archive_entry_set_pathname", l.set_pathname) &&
                     library.resolve("archive_entry_set_filetype", l.set_filetype) &&
                     library.resolve("archive_entry_set_perm", l.set_perm) &&
                     library.resolve("archive_entry_set_size", l.set_size) &&
                     library.resolve("archive_entry_set_mtime", l.set_mtime) &&
                     library.resolve("archive_entry_set_uid", l.set_uid) &&
                     library.resolve("archive_entry_set_gid", l.set_gid);
    if (!all) l.error = std::string("libarchive (") + RSZ_LIBARCHIVE_SONAME + ") lacks a function rsz needs";
    return l;
  }();
  return lib;
}

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
  std::vector<std::string> names;
  names.reserve(members.size());
  for (const TarMember& m : members) names.push_back(m.name);
  write_tar(path, names, [&members](std::size_t i) { return members[i].bytes; });
}

void write_tar(const std::string& path, const std::vector<std::string>& names,
               const std::function<std::vector<std::uint8_t>(std::size_t)>& bytes_of) {
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (name.empty()) detail::fail(ErrorCode::InvalidArgument, path, "a tar member without a name");
    if (!seen.insert(name).second) {
      detail::fail(ErrorCode::InvalidArgument, path, "two tar members named '" + name + "'");
    }
  }
  const Libarchive& lib = libarchive();
  if (!lib.error.empty()) detail::fail(ErrorCode::Io, path, "cannot write a tar archive: " + lib.error);
  // Names are read as UTF-8 whatever the process's locale: libarchive takes the locale's character set for them, and
  // under the C locale a non-ASCII name got a pax header "hdrcharset=BINARY", which GNU tar warns about on every
  // listing. This thread's locale only, for this call. A name that is not valid UTF-8 still goes as binary.
  struct Utf8Names {
    locale_t utf8 = ::newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
    locale_t before = utf8 != static_cast<locale_t>(nullptr) ? ::uselocale(utf8) : static_cast<locale_t>(nullptr);
    ~Utf8Names() {
      if (utf8 == static_cast<locale_t>(nullptr)) return;
      ::uselocale(before);
      ::freelocale(utf8);
    }
  } utf8_names;
  detail::AtomicFile file(path);
  Sink sink{&file, nullptr};
  const auto free_archive = [&lib](archive* a) { lib.write_free(a); };
  const auto free_entry = [&lib](archive_entry* e) { lib.entry_free(e); };
  const std::unique_ptr<archive, decltype(free_archive)> a(lib.write_new(), free_archive);
  if (!a) detail::fail(ErrorCode::Io, path, "cannot start a tar archive (out of memory)");
  const auto check = [&](int status, const char* what) {
    if (status >= ARCHIVE_WARN) return;
    if (sink.error) std::rethrow_exception(sink.error);
    const char* message = lib.error_string(a.get());
    detail::fail(ErrorCode::Io, path, std::string("cannot ") + what + ": " + (message ? message : "libarchive error"));
  };
  // pax "restricted": plain ustar headers, with a pax extended header only where ustar cannot hold a name.
  check(lib.set_format_pax_restricted(a.get()), "choose the tar format");
  check(lib.open2(a.get(), &sink, nullptr, write_callback, nullptr, nullptr), "write the archive");
  const std::unique_ptr<archive_entry, decltype(free_entry)> entry(lib.entry_new(), free_entry);
  if (!entry) detail::fail(ErrorCode::Io, path, "cannot start a tar member (out of memory)");
  for (std::size_t i = 0; i < names.size(); ++i) {
    const TarMember m{names[i], bytes_of(i)};
    lib.entry_clear(entry.get());
    lib.set_pathname(entry.get(), m.name.c_str());
    lib.set_filetype(entry.get(), AE_IFREG);
    lib.set_perm(entry.get(), 0644);
    lib.set_size(entry.get(), static_cast<la_int64_t>(m.bytes.size()));
    lib.set_mtime(entry.get(), 0, 0);
    lib.set_uid(entry.get(), 0);
    lib.set_gid(entry.get(), 0);
    check(lib.write_header(a.get(), entry.get()), ("write the header of '" + m.name + "'").c_str());
    if (!m.bytes.empty()) {
      const la_ssize_t wrote = lib.write_data(a.get(), m.bytes.data(), m.bytes.size());
      if (wrote < 0 || static_cast<std::size_t>(wrote) != m.bytes.size()) {
        check(ARCHIVE_FATAL, ("write '" + m.name + "'").c_str());
      }
    }
  }
  check(lib.close(a.get()), "finish the archive");
  file.commit();
}

}  // namespace rsz::io
