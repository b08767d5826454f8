#include <functional>
#include <memory>
#include <variant>

#include "commands.h"
#include "streams.h"
#include "rsz/error.h"
#include "rsz/resample.h"
#include "rsz/upsample2d.h"

namespace rsz::app {

namespace {

// Image outputs are encoded in bands as they are computed (save_output_rows): a band other than the whole result is
// UPSAMPLE_2D's identity with RESAMPLE1 (SEMANTICS.md §2: integer scales, offsets 0.5 / -0.5), with the output offset
// shifted to the band's first row, exact where the factors and the shifted offsets are exact in float32.
bool upsample_bands(const Upsample2dParams& params, const Dims& sizes) {
  constexpr std::uint32_t kExactFloat = 1u << 24;
  return sizes.size() == 4 && params.scale_size.height < kExactFloat && params.scale_size.width < kExactFloat &&
         offset_shifts_exactly(-0.5f, sizes[2]) && offset_shifts_exactly(-0.5f, sizes[3]);
}

}  // namespace

std::vector<Job> make_upsample_jobs(const std::vector<std::string>& inputs, const io::Upsample2dConfig& config,
                                    const std::string& output, const CommonOptions& common) {
  const Upsample2dParams params = io::resolve(config);
  std::vector<Job> jobs;
  for (const std::string& input : inputs) {
    const std::string out = plan_output(output, inputs.size(),
                                        {input, "upsample2d", output_extension(input, common), "", "", ""}, "{stem}{ext}");
    check_output_format(out, output, common);
    Job job;
    job.input = input;
    job.op = "upsample2d";
    job.size_flags = "--factor or the config's scale_size";
    job.planned_outputs = {out};
    job.plan = [params](const InputProbe& probe) {
      JobPlan plan;
      plan.result = upsample2d_output_sizes(probe.sizes, params.scale_size);
      plan.banded = upsample_bands(params, plan.result);
      plan.type = probe.type;
      plan.output = plan.result;
      return plan;
    };
    job.run = [input, out, params, common](const JobPlan&, int threads) {
      // Nearest mode copies pixels: straight alpha keeps the colour of transparent ones in images (single_tap).
      ResampleParams taps;
      taps.interpolation = params.interpolation;
      taps.scales = {1.0f, 1.0f, static_cast<float>(params.scale_size.height),
                     static_cast<float>(params.scale_size.width)};
      const CommonOptions options = alpha_for(common, taps, out);
      const LoadedInput loaded = load_input(input, options);
      const Dims sizes = upsample2d_output_sizes(loaded.sizes(), params.scale_size);
      const ExecOptions exec = exec_options(common, threads);
      const std::vector<OutputRecord> record{{out, sizes, to_string(loaded.result_type), std::nullopt}};
      if (upsample_bands(params, sizes)) {
        save_output_rows(out, sizes, loaded.result_type, loaded, options, exec.num_threads,
                         [&](std::int64_t first, const TensorView& band) {
                           if (first == 0 && band.size(2) == sizes[2]) {
                             upsample2d(loaded.view(), band, params, exec);
                             return;
                           }
                           ResampleParams equivalent;
                           equivalent.interpolation = params.interpolation;
                           equivalent.scales = {1.0f, 1.0f, static_cast<float>(params.scale_size.height),
                                                static_cast<float>(params.scale_size.width)};
                           equivalent.output_pixel_offsets[2] -= static_cast<float>(first);
                           resample(loaded.view(), band, equivalent, exec);
                         });
        return record;
      }
      Tensor result(loaded.result_type, sizes, TensorInit::Uninitialized);
      upsample2d(loaded.view(), result.view(), params, exec);
      save_output(out, result.view(), loaded, options);
      return record;
    };
    jobs.push_back(std::move(job));
  }
  return jobs;
}

void setup_upsample(CLI::App& app, UpsampleOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "upsample", "Upsample images or rank-4/5 tensors by integer factors (DirectML UPSAMPLE_2D)");
  add_common_options(*cmd, o.common, io::kUseOperators);
  cmd->add_option("--factor", o.factor, "Integer factor F, or H,W (height first)");
  add_field_flags(*cmd, io::upsample2d_spec(), o.fields);  // --mode
  cmd->footer(
      "Examples:\n"
      "  rsz upsample -i icon.png -o icon@2x.png --factor 2\n"
      "  rsz upsample -i features.npy -o up.npy --factor 2,3 --mode linear\n"
      "  rsz upsample -i 'tiles/*.png' -o out/ --config configs/upsample_2x_nearest.json");
}

OperatorCommand upsample_command() {
  OperatorCommand c;
  c.command = "upsample";
  c.op = "upsample2d";
  c.setup = subcommand(setup_upsample, run_upsample);
  c.batch_jobs = [](const std::vector<std::string>& inputs, const io::BatchStep& step, const std::string& output,
                    const CommonOptions& common, std::vector<std::string>&) {
    return make_upsample_jobs(inputs, std::get<io::Upsample2dConfig>(step.config), output, common);
  };
  return c;
}

int run_upsample(const UpsampleOptions& o) {
  const CommonOptions& common = o.common;
  if (common.output.empty()) usage_error("upsample: -o/--output is required");
  if (!common.config.empty()) check_json_budget(common.config, "--config", common.memory_budget());
  const io::Upsample2dConfig file_config =
      common.config.empty() ? io::Upsample2dConfig{} : io::read_upsample2d_config(common.config);
  io::Upsample2dConfig flags = field_config<io::Upsample2dConfig>(o.fields);
  if (!o.factor.empty()) {
    const bool pair = o.factor.find(',') != std::string::npos;
    const auto v = io::parse_int_list(o.factor, "--factor", ',', pair ? 2 : 1);
    if (v[0] > UINT32_MAX || v.back() > UINT32_MAX) {
      usage_error("--factor " + o.factor + ": factors must be <= 4294967295");
    }
    flags.scale_size = ScaleSize{static_cast<std::uint32_t>(v[0]), static_cast<std::uint32_t>(v.back())};
  }
  const io::Upsample2dConfig merged = io::overlay(file_config, flags);
  if (!merged.scale_size) usage_error("upsample: no factor given; use --factor or a config with \"scale_size\"");
  const std::vector<std::string> inputs = input_list(common, common.memory_budget());
  const std::string output = output_target(common, inputs);
  std::vector<Job> jobs = make_upsample_jobs(inputs, merged, output, common);
  check_jobs(inputs, jobs, {common.config});  // over the whole job: names that collide across shards too
  CommonOptions options = common;
  jobs = select_shard(std::move(jobs), options);
  return run_jobs(jobs, options);
}

}  // namespace rsz::app
