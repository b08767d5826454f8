#include "detail/validate.h"

#include <cmath>
#include <charconv>

namespace rsz::detail {

void fail(ErrorCode code, const char* op, const std::string& message) {
  throw Error(code, std::string(op) + ": " + message);
}

std::string format_float(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest round-trip form
  return std::string(buffer, result.ptr);
}

void check_rank(const char* op, const char* name, const TensorLayout& layout, int rank) {
  if (layout.rank() != rank) {
    fail(ErrorCode::InvalidShape, op,
         std::string(name) + " has rank " + std::to_string(layout.rank()) + " (sizes " +
             dims_to_string(layout.sizes()) + "); rank " + std::to_string(rank) + " is required");
  }
}

void check_float_type(const char* op, const char* name, DataType type) {
  if (type != DataType::Float32 && type != DataType::Float16) {
    fail(ErrorCode::InvalidDataType, op,
         std::string(name) + " has data type " + to_string(type) + "; float32 or float16 is required");
  }
}

void check_same_type(const char* op, const char* name, DataType type, const char* reference_name,
                     DataType reference_type) {
  if (type != reference_type) {
    fail(ErrorCode::InvalidDataType, op,
         std::string(name) + " has data type " + to_string(type) + "; it must match " + reference_name + " (" +
             to_string(reference_type) + ")");
  }
}

void check_data_types(const char* op, DataType input, DataType output) {
  if (input == DataType::UNorm8 || input == DataType::UNorm16) {
    check_float_type(op, "output", output);  // a unorm input gives float32 or float16
    return;
  }
  if (input != DataType::Float32 && input != DataType::Float16) {
    fail(ErrorCode::InvalidDataType, op,
         std::string("input has data type ") + to_string(input) + "; float32, float16, unorm8 or unorm16 is required");
  }
  check_same_type(op, "output", output, "the input", input);
}

void check_sizes_positive(const char* op, const char* name, const TensorLayout& layout) {
  for (int axis = 0; axis < layout.rank(); ++axis) {
    if (layout.size(axis) < 1) {
      fail(ErrorCode::InvalidShape, op,
           std::string(name) + " sizes " + dims_to_string(layout.sizes()) + " have size " +
               std::to_string(layout.size(axis)) + " on axis " + std::to_string(axis) + "; every size must be >= 1");
    }
  }
}

void check_finite(const char* op, const std::string& name, float value) {
  if (!std::isfinite(value)) {
    fail(ErrorCode::InvalidArgument, op, name + " = " + format_float(value) + " is not allowed; it must be finite");
  }
}

void check_output_writable(const char* op, const TensorView& output,
                           std::initializer_list<const ConstTensorView*> inputs) {
  if (output.layout().has_overlapping_elements()) {
    fail(ErrorCode::InvalidShape, op,
         "output strides " + dims_to_string(output.strides()) + " for sizes " + dims_to_string(output.sizes()) +
             " make output elements share an address; each output element needs its own");
  }
  const ConstTensorView out = output;
  if (out.element_count() == 0) return;
  for (const ConstTensorView* input : inputs) {
    if (input->element_count() == 0) continue;
    if (out.byte_begin() < input->byte_end() && input->byte_begin() < out.byte_end()) {
      fail(ErrorCode::InvalidArgument, op, "the output buffer overlaps an input buffer; in-place operation is not "
                                           "supported, the output needs memory of its own");
    }
  }
}

}  // namespace rsz::detail
