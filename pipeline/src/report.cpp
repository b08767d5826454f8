// A run's records and their one JSON form (rsz/pipeline/report.h).
#include "rsz/pipeline/report.h"

#include <nlohmann/json.hpp>

#include "report_json.h"

namespace rsz::pipeline {

const char* to_string(RecordKind kind) {
  switch (kind) {
    case RecordKind::Written: return "written";
    case RecordKind::Skipped: return "skipped";
    case RecordKind::Planned: return "planned";
    case RecordKind::Failed: return "failed";
    case RecordKind::Warning: return "warning";
    case RecordKind::Unwritten: return "unwritten";
  }
  return "written";
}

const char* code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "invalid_argument";
    case ErrorCode::InvalidShape: return "invalid_shape";
    case ErrorCode::InvalidDataType: return "invalid_data_type";
    case ErrorCode::Io: return "io";
    case ErrorCode::Format: return "format";
    case ErrorCode::Internal: return "internal";
  }
  return "internal";
}

nlohmann::json record_object(const Record& r) {
  if (r.kind == RecordKind::Unwritten) {
    return {{"op", r.op}, {"output", r.output}, {"not_written", r.message}, {"code", code_name(r.code)}};
  }
  nlohmann::json j = {{"input", r.input}, {"op", r.op}};
  switch (r.kind) {
    case RecordKind::Unwritten:  // above
    case RecordKind::Failed:
      j["error"] = r.message;
      j["code"] = code_name(r.code);
      return j;
    case RecordKind::Warning:
      j["warning"] = r.message;
      return j;
    case RecordKind::Skipped:
      j["skipped"] = true;
      break;
    case RecordKind::Planned:
      j["dry_run"] = true;
      if (!r.plan.empty()) j.update(nlohmann::json::parse("{" + r.plan + "}"));  // "resize": the call it plans
      break;
    case RecordKind::Written:
      j["seconds"] = r.seconds;
      break;
  }
  j["output"] = r.output;
  if (!r.member.empty()) j["member"] = r.member;
  if (r.kind == RecordKind::Written || r.kind == RecordKind::Planned) {
    j["shape"] = r.shape;
    j["dtype"] = r.dtype;
  }
  return j;
}

std::string record_json(const Record& record) {
  return record_object(record).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace rsz::pipeline
