#include "rsz/error.h"

namespace rsz {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::InvalidShape: return "invalid shape";
    case ErrorCode::InvalidDataType: return "invalid data type";
    case ErrorCode::Io: return "i/o error";
    case ErrorCode::Format: return "format error";
    case ErrorCode::Internal: return "internal error";
  }
  return "unknown error";
}

namespace detail {
void internal_assert_failed(const char* condition, const char* file, int line) {
  throw InternalError(std::string("rsz internal error: assertion '") + condition + "' failed at " + file + ":" +
                      std::to_string(line));
}
}  // namespace detail

}  // namespace rsz
