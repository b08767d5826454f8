// Uses an installed rsz::pipeline through its public header only: a thumbnail job over one photo, its report
// checked (one output written, its shape), then a refusal with its code. Exit status 0 when everything holds.
// Usage: pipeline_consumer PHOTO OUTPUT_FOLDER
#include <rsz/pipeline.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pipeline_consumer PHOTO OUTPUT_FOLDER\n");
    return 2;
  }
  rsz::pipeline::Request request;
  request.op = "thumbnail";
  rsz::io::ResizeIntent intent;
  intent.box = rsz::io::parse_size("32", "size", true);
  rsz::io::apply_thumbnail_defaults(intent, false);
  request.config = intent;
  request.inputs = {argv[1]};
  request.output = std::string(argv[2]) + "/{stem}.jpg";
  request.settings = {{"quality", "85"}};
  const rsz::pipeline::Report report = rsz::pipeline::run(request);
  if (report.status != 0 || report.written != 1 || report.records.size() != 1 ||
      report.records[0].kind != rsz::pipeline::RecordKind::Written || report.records[0].shape.size() != 4 ||
      report.records[0].shape[3] != 32) {
    std::fprintf(stderr, "pipeline_consumer: unexpected report: status %d, %zu written, %s\n", report.status,
                 report.written, report.error.c_str());
    return 1;
  }
  request.settings = {{"quality", "900"}};
  const rsz::pipeline::Report refused = rsz::pipeline::run(request);
  if (refused.status != 2 || refused.error_code != rsz::ErrorCode::InvalidArgument) {
    std::fprintf(stderr, "pipeline_consumer: quality 900 was not refused\n");
    return 1;
  }
  std::printf("pipeline_consumer: ok (%s; refused: %s)\n", rsz::pipeline::record_json(report.records[0]).c_str(),
              refused.error.c_str());
  return 0;
}
