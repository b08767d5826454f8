// A consumer of rsz::ops alone: plans a thumbnail's resize and reads an operator config, linking no codec (the
// package test checks that its link line names no image library).
#include <cstdio>

#include "rsz/io/config.h"
#include "rsz/io/ops.h"
#include "rsz/io/resize.h"

int main() {
  rsz::io::ResizeIntent intent;
  intent.box = rsz::io::parse_size("256", "size", true);
  rsz::io::apply_thumbnail_defaults(intent, false);
  const rsz::io::ResizePlan plan = rsz::io::plan_resize(intent, {1, 3, 3024, 4032}, true);
  const rsz::io::ResampleConfig config =
      rsz::io::parse_resample_config("{\"scales\": [1, 1, 0.5, 0.5], \"interpolation\": \"nearest\"}", "inline");
  std::printf("%lld %lld %zu\n", static_cast<long long>(plan.canvas[2]), static_cast<long long>(plan.canvas[3]),
              rsz::io::resample_spec().fields.size());
  return plan.canvas[2] == 192 && plan.canvas[3] == 256 && config.scales ? 0 : 1;
}
