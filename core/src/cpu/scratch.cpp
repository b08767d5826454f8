#include "cpu/scratch.h"

#include <mutex>

namespace rsz::cpu {
namespace {

std::mutex g_mutex;
bool g_taken = false;
std::unique_ptr<std::byte[]> g_buffer;  // default-initialized: pages are touched first by the call that writes them
std::size_t g_size = 0;

}  // namespace

Scratch::Scratch(std::size_t bytes) {
  if (bytes <= kKeptScratchBytes) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_taken) {
      if (g_size < bytes) {
        g_buffer.reset();
        g_size = 0;
        g_buffer.reset(new std::byte[bytes]);
        g_size = bytes;
      }
      g_taken = true;
      kept_ = true;
      data_ = g_buffer.get();
      return;
    }
  }
  own_.reset(new std::byte[bytes]);
  data_ = own_.get();
}

Scratch::~Scratch() {
  if (!kept_) return;
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_taken = false;
}

}  // namespace rsz::cpu
