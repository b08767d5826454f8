// rsz plan (a job's inputs listed once and split into shard lists in a state folder) and rsz merge (every shard's
// marker checked and totalled, manifests joined, killed runs' temporaries cleaned).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rsz::app {

// `rsz plan`: the inputs listed once, split into shard lists.
struct PlanOptions {
  std::vector<std::string> inputs;
  bool recursive = false;
  bool hidden = false;
  std::int64_t shards = 0;
  std::string output;
  bool quiet = false;
};
int run_plan(const PlanOptions& options);

// `rsz merge STATE`: every shard's marker checked and totalled.
struct MergeOptions {
  std::string state;
  bool json = false;
  bool clean = false;
};
int run_merge(const MergeOptions& options);

// The flags of both: app/cmd_plan.cpp.

}  // namespace rsz::app
