// Errors raised by rsz.
//
// Two kinds, kept apart on purpose:
//  * rsz::Error: the caller asked for something the contract does not allow (a bad shape, parameter, file...).
//    Its message names the operator or file, the parameter, the value received and what was allowed, on one line.
//  * rsz::InternalError: a broken invariant inside rsz itself (a bug). Raised by RSZ_ASSERT, which is active in
//    every build type; it is never used to validate user input.
#pragma once

#include <stdexcept>
#include <string>

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz {

enum class ErrorCode {
  InvalidArgument,  // a parameter value outside its allowed range
  InvalidShape,     // tensor sizes, strides or ranks that do not fit the operator
  InvalidDataType,  // a data type the operator does not accept here
  Io,               // a file that cannot be opened, read or written
  Format,           // a file whose content is not in the expected format
  Usage,            // a command-line flag or config file that cannot be used as given (nothing was run)
};

const char* to_string(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {
[[noreturn]] void internal_assert_failed(const char* condition, const char* file, int line);
}  // namespace detail

}  // namespace rsz

#define RSZ_ASSERT(condition) \
  ((condition) ? static_cast<void>(0) : ::rsz::detail::internal_assert_failed(#condition, __FILE__, __LINE__))

#pragma GCC visibility pop
