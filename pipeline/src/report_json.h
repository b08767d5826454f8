// A record's JSON object (rsz/pipeline/report.h's record_json, as a value): the runner prints it (keeping the bytes of
// file names that are not UTF-8 for in-process runs) and Python turns it into a dict.
#pragma once

#include <nlohmann/json.hpp>

#include "rsz/pipeline/report.h"

namespace rsz::pipeline {

nlohmann::json record_object(const Record& record);

}  // namespace rsz::pipeline
