// Upsample jobs (rsz upsample, upsample2d batch steps): UPSAMPLE_2D on each input, image outputs encoded in bands.
#include <functional>
#include <memory>
#include <variant>
#include "rsz/error.h"
#include "rsz/resample.h"
#include "rsz/upsample2d.h"
#include "jobs.h"
#include "streams.h"

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
  if (common.backend == Backend::Cuda) check_devices(common);  // (no GPU decoding here: --decode gpu is not its)
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

}  // namespace rsz::app
