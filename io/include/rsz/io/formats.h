// What a file of a given name holds, asked of one place: the image codecs' table (rsz/io/image.h: PNG, JPEG, ...) and,
// beside it, the tensor formats' table, whose one row today is NumPy's .npy (rsz/io/npy.h). A tensor format holds a
// tensor of any rank with its data type, read and written as its values (no pixels, no metadata, no colour); an image
// format holds pixels. Callers ask `file_kind` and the tensor row's functions instead of testing extensions, so a new
// tensor format is one row here.
#pragma once

#include <string>
#include <vector>

#include "rsz/io/npy.h"
#include "rsz/tensor.h"

#pragma GCC visibility push(default)

namespace rsz::io {

enum class FileKind {
  None,    // no format rsz reads or writes has this extension
  Image,   // an image codec's (rsz/io/image.h)
  Tensor,  // a tensor format's (tensor_formats())
};
// By the name's extension, case-insensitive ("photo.JPG" is Image, "x.npy" Tensor, "notes.txt" None).
FileKind file_kind(const std::string& path);

// A tensor from a file's header alone (the data is checked for its size, not read).
using TensorInfo = NpyInfo;

struct TensorFormat {
  const char* name = "";                 // "npy"
  const char* display_name = "";         // in messages: ".npy"
  std::vector<std::string> extensions;   // lower case, with the dot; the first is written
  TensorInfo (*probe)(const std::string& path) = nullptr;
  Tensor (*read)(const std::string& path) = nullptr;
  void (*write)(const std::string& path, const ConstTensorView& tensor) = nullptr;  // atomically
};
// Every tensor format: .npy.
const std::vector<TensorFormat>& tensor_formats();
// The tensor format of the name's extension, or nullptr.
const TensorFormat* find_tensor_format(const std::string& path);

}  // namespace rsz::io

#pragma GCC visibility pop
