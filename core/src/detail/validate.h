// Boundary validation helpers shared by the operator entry points. Every failure is an rsz::Error whose message
// starts with the operator name and names the parameter, the value and what was allowed.
#pragma once

#include <initializer_list>
#include <string>

#include "rsz/error.h"
#include "rsz/tensor.h"

namespace rsz::detail {

[[noreturn]] void fail(ErrorCode code, const char* op, const std::string& message);

// Shortest text that reads back as the same float32 ("0.5", "-inf", "nan").
std::string format_float(float value);

void check_rank(const char* op, const char* name, const TensorLayout& layout, int rank);
void check_float_type(const char* op, const char* name, DataType type);
void check_same_type(const char* op, const char* name, DataType type, const char* reference_name,
                     DataType reference_type);
// The data types of an operator's data input and output: float32 or float16 in and the same out, or a unorm8 /
// unorm16 input (read in place, tensor.h) with a float32 or float16 output.
void check_data_types(const char* op, DataType input, DataType output);
void check_sizes_positive(const char* op, const char* name, const TensorLayout& layout);
void check_finite(const char* op, const std::string& name, float value);
// The output must be free of self-overlap and must not share a byte with any input.
void check_output_writable(const char* op, const TensorView& output,
                           std::initializer_list<const ConstTensorView*> inputs);

}  // namespace rsz::detail
