// Names and parsing of the small enums that flags, batch files and Python spell out (resample presets, backends,
// alpha modes, ROI checks): a name is the value's to_string, the order is the `values` array's, and a refusal is
// `WHAT = "TEXT"[ is not a NOUN]; a, b or c is allowed`. One definition for every such enum.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rsz/error.h"

namespace rsz::io::detail {

template <typename E, std::size_t N>
std::vector<std::string> enum_names(const E (&values)[N]) {
  std::vector<std::string> names;
  for (const E value : values) names.emplace_back(to_string(value));
  return names;
}

template <typename E, std::size_t N>
E parse_enum(const E (&values)[N], const std::string& text, const std::string& what, const char* noun = nullptr) {
  std::string allowed;
  for (std::size_t i = 0; i < N; ++i) {
    if (text == to_string(values[i])) return values[i];
    allowed += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(to_string(values[i]));
  }
  throw Error(ErrorCode::InvalidArgument, what + " = \"" + text + "\"" +
                                              (noun != nullptr ? std::string(" is not a ") + noun : "") + "; " +
                                              allowed + " is allowed");
}

}  // namespace rsz::io::detail
