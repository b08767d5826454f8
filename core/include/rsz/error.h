// Errors raised by rsz.
//
// One hierarchy: every exception rsz throws is an rsz::Error, so one handler catches them all, and its code tells
// the two kinds apart:
//  * the caller asked for something the contract does not allow (a bad shape, parameter, file...): every code but
//    Internal. The message names the operator or file, the parameter, the value received and what was allowed, on
//    one line.
//  * rsz::InternalError (code Internal): a broken invariant inside rsz itself (a bug). Raised by RSZ_ASSERT, which
//    is active in every build type, and by the io library where it finds its own state inconsistent; it is never
//    used to validate user input. Front ends report it as a bug (the command line exits 1, Python raises
//    RuntimeError), and the fuzzers let it abort the run.
// A code says what was wrong, not how a front end reports it: the command line's "usage or config error" (exit 2)
// is its own reading of any non-internal error found before anything ran, and Python raises ValueError for them.
#pragma once

#include <stdexcept>
#include <string>

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz {

enum class ErrorCode {
  InvalidArgument,  // a parameter value outside its allowed range, or a setting (flag, config key) that cannot be
                    // used as given
  InvalidShape,     // tensor sizes, strides or ranks that do not fit the operator
  InvalidDataType,  // a data type the operator does not accept here
  Io,               // a file that cannot be opened, read or written
  Format,           // a file whose content is not in the expected format
  Internal,         // a bug inside rsz (InternalError)
};

const char* to_string(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

class InternalError : public Error {
 public:
  explicit InternalError(const std::string& message) : Error(ErrorCode::Internal, message) {}
};

namespace detail {
[[noreturn]] void internal_assert_failed(const char* condition, const char* file, int line);
}  // namespace detail

}  // namespace rsz

#define RSZ_ASSERT(condition) \
  ((condition) ? static_cast<void>(0) : ::rsz::detail::internal_assert_failed(#condition, __FILE__, __LINE__))

#pragma GCC visibility pop
