// The jobs of each operator over a list of inputs (pipeline.h's Job: the input, its planned outputs, how it is
// planned from the input's header and how it runs), for the command line's subcommands and batch steps alike.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "pipeline.h"
#include "shard_run.h"
#include "rsz/io/config.h"
#include "rsz/io/resize.h"

#if defined(RSZ_GPU_JPEG)
namespace rsz::io::gpu {
class BatchResampler;
}  // namespace rsz::io::gpu
#endif

namespace rsz::app {

namespace detail {
struct RunState;
}  // namespace detail

// Jobs applying one resize intent (io/resize.h) to every input: images in image mode (H and W only), .npy tensors
// in tensor mode; `output` is a file, folder or template (see plan_output).
// `op` names the jobs ("resample" or "thumbnail"): {op} in names, --json records.
std::vector<Job> make_resample_jobs(const std::vector<std::string>& inputs, const io::ResizeIntent& intent,
                                    const std::string& output, const CommonOptions& common, const char* op);
#if defined(RSZ_GPU_JPEG)
// A JPEG for the GPU: its bytes, its sizes (1 x C x H x W) and what its outputs carry (header_source); nullopt for
// what the CPU decodes instead: a file that cannot be read or is not a JPEG, an EXIF orientation to apply, a
// progressive file, 16-bit samples.
struct GpuInput {
  std::shared_ptr<const std::string> file;  // its bytes, read once
  Dims sizes;
  LoadedInput source;
};
// An input for the GPU stage: a JPEG file's bytes (read_gpu_jpeg), or an image decoded on the CPU (batches_on_gpu:
// `pixels`, interleaved 8-bit), its sizes (1 x C x H x W) and what its outputs carry.
struct GpuImage {
  std::string_view file;
  std::string_view pixels;
  Dims sizes;
  const LoadedInput* source = nullptr;
};
GpuImage gpu_image(const GpuInput& read);
// The run's GPU stage for `in`: for a file it decodes, gpu_resampler's (a stage that could not be made fails the job);
// for pixels decoded on the CPU, null where it could not be made (the job then runs alone on the GPU, as before).
io::gpu::BatchResampler* gpu_stage_for(const GpuImage& in, const CommonOptions& common);
// An image decoded on the CPU that the GPU stage takes (batches_on_gpu): 8-bit, 1 or 3 channels, used in place; else
// nullopt (the job then runs as --backend cuda runs an input alone).
std::optional<GpuImage> gpu_image(const LoadedInput& loaded, const CommonOptions& common);
// A GPU job's phases timed on its thread for RSZ_GPU_STATS (RunState's gpu_*_us): each call adds the time since the
// one before (or since it was made) to its phase.
class GpuJobPhases {
 public:
  GpuJobPhases();
  void read();
  void waited();
  void saved();  // and counts the job

 private:
  void add(std::atomic<std::uint64_t>& sum);
  detail::RunState& run_;
  std::chrono::steady_clock::time_point start_;
};
std::optional<GpuInput> read_gpu_jpeg(const std::string& input, const CommonOptions& common);
// The run's GPU stage on --device (made in the background while the run planned, or by its first job; a failure to
// make it is kept, and every job fails with it at once).
io::gpu::BatchResampler& gpu_resampler(const CommonOptions& common);
#endif
// --decode gpu with --backend cpu or reference: a usage error saying the operator `what` ("resizes", "crops") runs
// on the GPU; --encode gpu without --decode gpu: a usage error saying it needs it; then check_devices.
void check_decode_backend(const CommonOptions& common, const char* what);
// --decode gpu: starts making the run's GPU stage in the background (its CUDA context and nvJPEG's decoder), for
// resample and roi_align jobs that will decode on the GPU, while the run plans them; a no-op otherwise and in builds
// without nvJPEG.
void start_gpu_stage(const CommonOptions& common);
// Where `run` ends (run.gpu_mutex held): its GPU stage, or the one still being made (waited for), is let go, or in an
// in-process run kept for the process's next runs on its device (release_gpu_stages lets those go). `process_ends`
// (the command line, about to exit): its threads are stopped and its memory left to the exit.
void end_gpu_stage(detail::RunState& run, bool process_ends = false);
// rsz::pipeline::release_gpu_stages: the kept stages let go (stages made before, by runs under way, are not kept).
std::size_t release_kept_gpu_stages();
std::vector<Job> make_upsample_jobs(const std::vector<std::string>& inputs, const io::Upsample2dConfig& config,
                                    const std::string& output, const CommonOptions& common);
// roi_align: with a dataset-form ROI file the images come from the file (and `inputs` must be empty when
// `inputs_given_by_user`, otherwise they are ignored); with the plain form (or .npy rois) every input gets the same
// ROIs.
// The ROI source may also be COCO, Pascal VOC or YOLO annotations (io/annotations.h, detected by content).
struct RoiSource {
  std::string rois_path;
  std::string batch_indices_path;  // .npy only; empty: from the JSON, or all 0
  std::string image_root;          // COCO / VOC: where image paths resolve ("": the annotation file's folder)
  std::string names_path;          // YOLO: class names, one per line ("": class numbers as labels)
  bool allow_outside_root = false;  // COCO / VOC: image names may leave the image root (--allow-outside-root)
  bool skip_crowd = false;          // COCO: iscrowd annotations are left out (--skip-crowd)
  bool skip_difficult = false;      // VOC: difficult objects are left out (--skip-difficult)
};
std::vector<Job> make_roi_align_jobs(const std::vector<std::string>& inputs, const io::RoiAlignConfig& config,
                                     const RoiSource& source, const std::string& output, const CommonOptions& common,
                                     bool inputs_given_by_user = true);

// One operator's request over a run's inputs (CommonOptions: -i, -o, the run-level settings): the operator
// ("resample", "thumbnail", "upsample2d", "roi_align"), its config, roi-align's ROI source, and the files the run reads
// besides its inputs (--config, the ROI file, class names), which no output may replace.
struct OperatorRequest {
  std::string op;
  std::variant<io::ResizeIntent, io::Upsample2dConfig, io::RoiAlignConfig> config;
  RoiSource source;
  std::vector<std::string> other_inputs;
};
// Lists the inputs (-i, standard input, a --plan shard's list), plans the output target, makes the jobs, checks every
// planned output against every input, selects --shard's jobs and runs them: the exit status. A request that cannot
// be met throws rsz::Error (a usage error) before anything is written.
int run_operator(const OperatorRequest& request, const CommonOptions& common);
// run_operator's planning: the planned jobs, to run once (PlannedJobs::run).
std::unique_ptr<PlannedJobs> plan_operator(const OperatorRequest& request, const CommonOptions& common);

// The request of an operator command (rsz/pipeline/commands.h: "thumbnail", "roi-align") from its options by key, as
// their flags' text ({"size", "256"}, {"enlarge", "true"}), over the run's common options: each option checked as the
// command line's parser checks it (a known key, its text, required, excludes), the config file (common.config) read
// under the flags, roi-align's --rois-check, --size-mismatch and --manifest set into `common`. The command line and
// rsz::pipeline::run both make their requests here. Throws rsz::Error (a usage error) in the flags' words.
OperatorRequest command_request(const std::string& command, const std::map<std::string, std::string>& options,
                                CommonOptions& common);
// What --plan pins of a command (shard_run.h) given these options (rsz run: {"batch", FILE}) over `common`: the
// options, the run-level settings given, -o and --config, by their flags' names; the files they name.
PinnedCommand pinned_command(const std::string& command, const std::map<std::string, std::string>& options,
                             const CommonOptions& common);

}  // namespace rsz::app
