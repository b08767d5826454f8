// What the command line's pipeline files (options.cpp, inputs.cpp, outputs.cpp, runner.cpp) share among
// themselves; the commands use common.h only.
#pragma once

#include <map>
#include <string>

#include "common.h"

namespace rsz::app::detail {

std::string lowercase(std::string s);
// The path made absolute and canonical where it exists (lexically normal where it does not): the key under which
// inputs and outputs are compared.
std::string canonical_or_absolute(const std::string& path);
// Each expanded input's folder relative to the folder it was found in ({dir}; "" for files given by name or glob).
std::map<std::string, std::string>& input_dirs();
// Bits per sample of an image output: --depth, else the input image's, else 8.
int output_depth(const CommonOptions& options, bool from_image, int input_depth);
// The same for an output at `path`: 16 bits into a format without them become 8, unless --strict or --depth said.
int output_depth(const CommonOptions& options, bool from_image, int input_depth, const std::string& path);
// Channels of an image output of a result of `channels`: with --grayscale 1, or 2 where there is alpha.
int output_channels(const CommonOptions& options, std::int64_t channels);
// The same for an output at `path`: alpha into an image format without it is flattened (one channel fewer), unless
// --strict.
int output_channels(const CommonOptions& options, std::int64_t channels, const std::string& path);

}  // namespace rsz::app::detail
