// Moving rows between tensors of either float type and float32 scratch buffers. float16 conversion uses the CPU's
// F16C instructions when it has them (checked at run time) and the portable conversion otherwise; both round to
// nearest even and keep NaN and infinity, so results do not depend on the machine.
#pragma once

#include <cstdint>

#include "rsz/tensor.h"

namespace rsz::cpu {

// dst[i] = element (offset + i * stride) of a float32 or float16 buffer, widened, for i < count.
void load_row(const void* base, DataType type, std::int64_t offset, std::int64_t stride, std::int64_t count,
              float* dst);
// Element (offset + i * stride) = src[i], rounded once to the buffer's type, for i < count.
void store_row(void* base, DataType type, std::int64_t offset, std::int64_t stride, std::int64_t count,
               const float* src);

}  // namespace rsz::cpu
