// NumPy .npy files <-> rsz tensors.
//
// Read: format versions 1.0, 2.0 and 3.0; data types '<f4' (float32), '<f2' (float16) and '<u4' (uint32); C order
// only; rank 1 to 5 (sizes >= 0). The header dict may list its keys in any order, with any spacing and a trailing
// comma. The file must hold exactly the bytes the shape needs: the size is checked against the shape before anything
// is allocated, so a corrupt header claiming a huge shape fails cleanly, and truncated data or trailing bytes are
// refused.
// Write: any view (strided views are written packed, C order) as format version 1.0 (2.0 if the header would not
// fit in 65535 bytes), the header padded with spaces so that the data starts at a multiple of 64 bytes, as numpy
// writes it. The write is atomic: the data goes to a temporary file in the target's folder that is renamed over
// the target only once complete; on failure the temporary file is removed and the target is left as it was.
//
// Errors: rsz::Error with ErrorCode::Io when a file cannot be opened, read or written, and ErrorCode::Format when
// its content is not an allowed .npy file. The message is one line that starts with the path and names what was
// wrong and what is allowed, e.g.
//   x.npy: dtype '<f8' is not supported; '<f4' (float32), '<f2' (float16) or '<u4' (uint32) is allowed
//
// Data is little-endian on disk; rsz supports little-endian hosts only. Both functions are thread-safe for
// distinct paths.
#pragma once

#include <string>

#include "rsz/tensor.h"

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz::io {

Tensor read_npy(const std::string& path);

// What read_npy would return, from the header alone (every check of read_npy but the data read): dtype and shape.
struct NpyInfo {
  DataType dtype = DataType::Float32;
  Dims sizes;
};
NpyInfo read_npy_info(const std::string& path);

void write_npy(const std::string& path, const ConstTensorView& tensor);

// True when `head`, the first bytes of some data, starts as a .npy file does (its magic string).
bool starts_as_npy(const std::string& head);

}  // namespace rsz::io

#pragma GCC visibility pop
