// A ring of bytes mapped twice, back to back, so that any run of at most size() bytes is contiguous in memory: rows
// written at (offset mod size) and read as one strided view never wrap. The background decoder of resample jobs
// (resample_jobs.cpp) keeps a few bands of input rows in one, instead of the whole image.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace rsz::app {

class MirroredRing {
 public:
  // A ring of at least `bytes` (whole pages), or nullptr where the system has no way to map one (not Linux, no
  // memfd_create, no address space left): the caller then does without.
  static std::unique_ptr<MirroredRing> create(std::size_t bytes);
  ~MirroredRing();
  MirroredRing(const MirroredRing&) = delete;
  MirroredRing& operator=(const MirroredRing&) = delete;

  std::size_t size() const { return size_; }
  // The byte at `offset` of the endless ring; the size() bytes from there on are contiguous.
  std::uint8_t* at(std::uint64_t offset) const { return base_ + offset % size_; }

 private:
  MirroredRing(std::uint8_t* base, std::size_t size) : base_(base), size_(size) {}
  std::uint8_t* base_;
  std::size_t size_;
};

}  // namespace rsz::app
