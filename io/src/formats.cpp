// The tensor formats' table and file_kind (rsz/io/formats.h).
#include "rsz/io/formats.h"

#include <algorithm>

#include "rsz/io/image.h"
#include "rsz/io/naming.h"

namespace rsz::io {

const std::vector<TensorFormat>& tensor_formats() {
  static const std::vector<TensorFormat> table = {
      {"npy", ".npy", {".npy"}, read_npy_info, read_npy, write_npy},
  };
  return table;
}

const TensorFormat* find_tensor_format(const std::string& path) {
  const std::string ext = lower_extension(path);
  for (const TensorFormat& format : tensor_formats()) {
    if (std::find(format.extensions.begin(), format.extensions.end(), ext) != format.extensions.end()) return &format;
  }
  return nullptr;
}

FileKind file_kind(const std::string& path) {
  if (find_tensor_format(path) != nullptr) return FileKind::Tensor;
  return is_image_path(path) || is_readable_image_path(path) ? FileKind::Image : FileKind::None;
}

}  // namespace rsz::io
