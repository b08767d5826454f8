// The temporary files rsz::io writes outputs through (a file is written under a temporary name in its folder and
// renamed over the target when complete). A program that ends on a signal calls remove_temporary_files() from its
// handler, so that an interrupted run leaves no partial file behind.
#pragma once

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz::io {

// Unlinks every temporary file being written at this moment. Async-signal-safe (it only reads a fixed table and
// calls unlink), so a SIGINT / SIGTERM / SIGPIPE handler may call it before it ends the process; the writes in
// progress are then abandoned, and their targets are left as they were.
void remove_temporary_files() noexcept;

// Whether each output file is flushed to the storage device (fsync) before it is renamed over its target. true (the
// default): every output is complete or absent even after a power loss or a kernel crash. false: the system flushes
// when it sees fit, so an output renamed in the seconds before such a crash may be found empty or truncated; errors,
// signals and killed processes still leave no partial file. The flush is most of the cost of many small outputs on a
// disk (half the time of 200 thumbnails). Process-wide; the command line's --no-sync sets false.
void set_sync_outputs(bool sync) noexcept;
bool sync_outputs() noexcept;

}  // namespace rsz::io

#pragma GCC visibility pop
