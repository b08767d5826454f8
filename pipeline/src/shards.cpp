// Shards: one job split over machines (Slurm job arrays, Kubernetes Indexed Jobs, GNU parallel). Each input's shard is
// a stable hash of its key, so the union of shards 0..N-1 is the whole job, disjoint, and adding inputs never moves
// an existing input to another shard.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "pipeline.h"
#include "pipeline_internal.h"
#include "rsz/error.h"
#include "rsz/io/temporary_files.h"

#include "shard_files.h"

namespace fs = std::filesystem;

namespace rsz::app {

using shard_files::parse_shard;
using shard_files::plan_state;
using shard_files::shard_name;

std::string shard_key(const std::string& input) {
  const auto found = detail::input_keys().find(input);
  if (found != detail::input_keys().end()) return found->second;
  return fs::path(input).stem().string();
}

void set_shard_key_below(const std::string& input, const std::string& root) {
  if (detail::input_keys().count(input)) return;
  detail::input_keys()[input] = detail::key_below(input, root.empty() ? fs::path(".") : fs::path(root));
}

std::int64_t shard_of_key(const std::string& key, std::int64_t count) { return io::shard_of(key, count); }

void parse_shard_option(const std::string& text, const std::string& what, std::int64_t& index, std::int64_t& count) {
  std::int64_t i = 0;
  std::int64_t n = 0;
  if (!parse_shard(text, i, n) || (text.find('/') != std::string::npos && n < 1)) {
    usage_error(what + " " + printable(text) + ": not a shard; I/N (0-based shard I of N, e.g. 3/16) or, with --plan, "
                "I is allowed");
  }
  if (n > 0 && i >= n) {
    usage_error(what + " " + printable(text) + ": shard " + std::to_string(i) + " of " + std::to_string(n) +
                " does not exist; 0 to " + std::to_string(n - 1) + " is allowed (shards count from 0)");
  }
  index = i;
  count = n;
}

std::vector<Job> select_plan_shard(std::vector<Job> jobs, CommonOptions& options);

std::vector<Job> select_shard(std::vector<Job> jobs, CommonOptions& options) {
  if (!options.plan.empty()) return select_plan_shard(std::move(jobs), options);
  if (options.shard_index < 0) return jobs;
  if (options.shard_count == 0) {
    usage_error("--shard " + std::to_string(options.shard_index) + ": give I/N (shard I of N), or --plan STATE to "
                "take shard I of a plan");
  }
  std::set<std::string> all;
  std::set<std::string> kept;
  std::vector<Job> selected;
  for (Job& job : jobs) {
    all.insert(job.input);
    if (shard_of_key(shard_key(job.input), options.shard_count) != options.shard_index) continue;
    kept.insert(job.input);
    selected.push_back(std::move(job));
  }
  options.summary_prefix = "shard " + std::to_string(options.shard_index) + "/" + std::to_string(options.shard_count) +
                           ": " + std::to_string(kept.size()) + " of " + std::to_string(all.size()) + " input" +
                           (all.size() == 1 ? "" : "s") + "; ";
  return selected;
}

}  // namespace rsz::app

namespace rsz::app {

using namespace shard_files;
using Fnv = io::Fnv1a64;
using io::fnv1a64;

std::vector<std::string> plan_shard_inputs(const CommonOptions& options) {
  const std::string& state = options.plan;
  const nlohmann::json plan = checked_plan(state, !options.inputs.empty(), options.shard_index, options.shard_count);
  const auto shards = plan["shards"].get<std::int64_t>();
  const std::string path = list_path(state, options.shard_index);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) usage_error(path + ": the shard list is missing; write the plan again");
  const std::string text = read_whole(path);
  Fnv fnv;
  fnv.add(text);
  const std::string fingerprint = hex64(fnv.value());
  if (fingerprint != plan["fingerprints"][static_cast<std::size_t>(options.shard_index)].get<std::string>()) {
    usage_error(path + ": the list differs from the one rsz plan wrote (its fingerprint in plan.json); write the "
                "plan again");
  }
  std::vector<std::string> inputs;
  std::istringstream lines(text);
  std::size_t number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const std::string where = path + ":" + std::to_string(number);
    const std::size_t tab = line.find('\t');
    const std::string input = unescape_field(line.substr(0, tab), where);
    if (input.empty()) usage_error(where + ": an empty line; each line names one input");
    const std::size_t tab2 = tab == std::string::npos ? tab : line.find('\t', tab + 1);
    const std::string dir =
        tab == std::string::npos ? "" : unescape_field(line.substr(tab + 1, tab2 - (tab + 1)), where);
    if (!dir.empty()) detail::input_dirs()[input] = dir;
    // The key the plan hashed: a sample's key keeps its folders, as without --plan. A list of an earlier rsz has
    // none: its samples keep the stem as their key, as its other shards named them.
    if (tab2 != std::string::npos) detail::input_keys()[input] = unescape_field(line.substr(tab2 + 1), where);
    inputs.push_back(input);
  }
  PlanState& s = plan_state();
  s.folder = state;
  s.shards = shards;
  s.index = options.shard_index;
  s.total = plan.value("total", std::int64_t{0});
  s.listed = static_cast<std::int64_t>(inputs.size());
  s.fingerprint = fingerprint;
  s.same_name = plan.contains("same_name") ? plan["same_name"] : nlohmann::json();
  s.legacy = !plan.contains("id");
  return inputs;
}

std::vector<Job> plan_shard_of_named_images(std::vector<Job> jobs, const CommonOptions& options) {
  if (options.plan.empty()) return jobs;
  PlanState& s = plan_state();
  // Every shard sees every image the annotations name: the whole job's output names are checked here, exactly.
  std::vector<std::string> inputs;
  for (const Job& job : jobs) inputs.push_back(job.input);
  check_jobs(inputs, jobs, {});
  s.names_checked = true;
  std::vector<Job> kept;
  std::set<std::string> images;
  std::set<std::string> all;
  for (Job& job : jobs) {
    all.insert(job.input);
    const std::string key = shard_key(job.input);
    const std::int64_t shard = s.legacy ? static_cast<std::int64_t>(fnv1a64(key) % static_cast<std::uint64_t>(s.shards))
                                        : shard_of_key(key, s.shards);
    if (shard != s.index) continue;
    images.insert(job.input);
    kept.push_back(std::move(job));
  }
  s.total = static_cast<std::int64_t>(all.size());
  s.listed = static_cast<std::int64_t>(images.size());
  return kept;
}

std::string shard_output_target(const CommonOptions& options, const std::string& output) {
  if (options.plan.empty() || output.empty() || output == "-" || output_is_template(output)) return output;
  // Named as in the whole run: a folder when the whole plan has several inputs, whatever this shard holds.
  const auto total = static_cast<std::size_t>(std::max<std::int64_t>(plan_state().total, 1));
  if (output.back() != '/' && output_is_folder(output, total)) return output + "/";
  return output;
}

std::vector<Job> select_plan_shard(std::vector<Job> jobs, CommonOptions& options) {
  const PlanState& s = plan_state();
  // A shard checks the names of its own inputs only. Two inputs of one name in different folders have different keys,
  // so they may fall in different shards, where outputs named without the folder would be the same file (the second
  // shard would keep the first's output as its own): refused unless the names hold the folder ({relpath}, {dir}) or
  // the outputs are tar members (keyed by path). rsz run's step templates have no {relpath}: such a plan is refused.
  const std::string& output = options.output;
  const bool by_folder = output.find("{relpath}") != std::string::npos || output.find("{dir}") != std::string::npos;
  if (s.same_name.is_object() && !by_folder && !tar_output_on() && !s.names_checked) {
    const auto paths = s.same_name.value("paths", std::vector<std::string>{});
    const auto count = s.same_name.value("count", std::int64_t{0});
    usage_error("-o " + output + ": the plan has inputs of one name in different folders (" +
                printable(paths.size() == 2 ? paths[0] + " and " + paths[1] : s.same_name.value("name", "")) + "; " +
                std::to_string(count) + (count == 1 ? " name is" : " names are") +
                " shared), which other shards may write to the same output files; name outputs by folder "
                "({relpath} in -o, e.g. -o 'out/{relpath}{ext}'), or plan such folders apart");
  }
  options.skip_existing = true;  // a shard run again goes on where it stopped
  options.summary_prefix = "shard " + std::to_string(s.index) + "/" + std::to_string(s.shards) + ": " +
                           std::to_string(s.listed) + " of " + std::to_string(s.total) + " input" +
                           (s.total == 1 ? "" : "s") + "; ";
  return jobs;
}

namespace detail {

void set_input_below(const std::string& input, const std::string& root) {
  const fs::path file(input);
  const std::string dir = file.parent_path().lexically_relative(root).string();
  input_dirs()[input] = dir == "." || dir.rfind("..", 0) == 0 ? "" : dir;
  input_keys()[input] = key_below(file, root);
}

}  // namespace detail

std::vector<std::string> plan_all_inputs(const CommonOptions& options) {
  if (options.plan.empty()) return {};
  const nlohmann::json plan = checked_plan(options.plan, !options.inputs.empty(), options.shard_index,
                                           options.shard_count);
  std::vector<std::string> inputs;
  for (std::int64_t k = 0; k < plan["shards"].get<std::int64_t>(); ++k) {
    const std::string path = list_path(options.plan, k);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) continue;
    try {
      std::istringstream lines(read_whole(path));
      std::size_t number = 0;
      for (std::string line; std::getline(lines, line);) {
        ++number;
        std::string input = unescape_field(line.substr(0, line.find('\t')), path + ":" + std::to_string(number));
        if (!input.empty()) inputs.push_back(std::move(input));
      }
    } catch (const std::exception&) {  // a damaged list: its own shard refuses it
    }
  }
  return inputs;
}

std::string shard_manifest(const CommonOptions& options, const std::string& manifest) {
  if (options.plan.empty() || manifest.empty()) return manifest;
  const fs::path path(manifest);
  return (path.parent_path() / (path.stem().string() + "." + shard_name(options.shard_index) +
                                path.extension().string()))
      .string();
}

}  // namespace rsz::app
