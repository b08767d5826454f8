// How an operator call is executed.
//
// Results never depend on these settings: every backend computes the same values (nearest results bit-identical,
// linear results within the tolerances of SEMANTICS.md §5), and a backend's results are bit-identical for any
// thread count. All operators are thread-safe: concurrent calls are fine as long as their outputs do not overlap.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rsz/tensor.h"

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz {

enum class Backend {
  Auto,       // the backend for the tensors' memory: Cpu for host memory, Cuda for device memory
  Reference,  // the naive twins: one output element at a time, no tables, threads or SIMD; the oracle (host)
  Cpu,        // tables, separable passes, threads; bit-identical to Reference (host memory)
  Cuda,       // NVIDIA GPUs through CUDA (device memory; host tensors are copied to the device and the results
              // back, and the call returns when they are there); present only in builds configured with RSZ_CUDA
};

// "auto", "reference", "cpu", "cuda".
const char* to_string(Backend backend);

// The most worker threads a call may ask for (ExecOptions::num_threads).
constexpr int kMaxThreads = 1024;

// The CPUs this process may use: those of its affinity mask (taskset, Slurm's binding, Kubernetes' cpuset), and no
// more than its cgroup's CPU quota (cgroup v2 cpu.max, rounded up), at least 1. Read once per process.
int usable_cpus();

// Runs task(i) for every i in [0, count) on the calling thread and up to threads - 1 (0: rsz::usable_cpus) worker
// threads of rsz's own pool, the one threading runtime of the operators, and returns when every task has returned.
// Tasks are claimed in index order by whichever thread is free. Calls may nest (a task may call an operator, whose
// threads come from the same pool) and may come from several threads at once. Idle workers spin for about 50
// microseconds, then sleep. A process forked after using the pool starts workers of its own on its first call (the
// parent's do not exist there). A task that throws stops the tasks not yet claimed; the first exception is rethrown
// here once the claimed ones have returned.
void parallel_tasks(std::int64_t count, int threads, const std::function<void(std::int64_t)>& task);

struct ExecOptions {
  Backend backend = Backend::Auto;
  // Worker threads for backends that use them (Cpu): at most this many, 0 for every CPU this process may use
  // (rsz::usable_cpus), and 0 to kMaxThreads allowed (InvalidArgument otherwise). A call runs on fewer when its work
  // is small: one thread per 32768 elements read or written (the work-size grain of PyTorch's CPU loops), so a 64 x 64
  // image stays on one thread instead of waking a team for microseconds of work. Ignored by Reference.
  int num_threads = 0;
  // Cuda: the device ordinal, and the cudaStream_t the work is queued on (null: the default stream). Calls on device
  // tensors return once the work is queued, without synchronizing; the caller synchronizes the stream (with
  // rsz::synchronize to hear of values that failed their device-side checks). Device tensors must be in this
  // device's memory (another device's is refused, peer access or not). A call first clears any CUDA error left
  // pending on the calling thread (as cudaGetLastError does), so that it reports only its own. Ignored by host
  // backends.
  int device = 0;
  void* stream = nullptr;
  // roi_align's sample budget: the most bilinear/nearest sample evaluations one roi_align call may make, summed over
  // all ROIs, channels and output elements: sum over ROIs of C x OH x OW x sy x sx (sy, sx: the ROI's samples per
  // output element, SEMANTICS.md §3.2), computed per ROI in saturating 64-bit arithmetic. 0 means no limit. Checked
  // after the ROI values are validated and before any work, by every backend; a call over the limit throws
  // rsz::Error (InvalidArgument) naming the total and the largest ROI's counts; a total equal to it runs. The default
  // 2^36 (68719476736) is about a minute of work on one core and far above ordinary use (1000 ROIs x 256 channels x
  // 7 x 7 outputs x 2 x 2 samples = 5e7), yet refuses adaptive sampling over absurd boxes ([0, 0, 1e7, 1e7]).
  std::uint64_t max_samples = std::uint64_t{1} << 36;
  // Cuda, roi_align with ROIs in device memory. false (the default): the ROI values and the sample budget are checked
  // on the device, in stream order, without synchronizing; a call whose values break a rule writes nothing to its
  // output, and rsz::synchronize throws its error (the message the host check gives). true: the values are copied to
  // the host and checked before any work is queued, so the call itself throws, at the cost of one synchronization of
  // the stream. Host ROIs are always checked on the host, by the call.
  bool check_values_on_host = false;
};

// Waits for the work queued on options.stream of options.device (the Cuda backend) and throws rsz::Error
// (InvalidArgument) for the first call queued there since the last rsz::synchronize whose ROI values failed their
// device-side checks; then that stream is clear again. The clearing is queued on the stream, so a failing call that
// another thread queues there meanwhile counts as before it or after it: reported by this synchronize or a later one,
// once. nullptr and cudaStreamLegacy name one stream; cudaStreamPerThread is each host thread's own. A CUDA error of
// the queued work is thrown as rsz::Error too.
// Does nothing for the host backends (options.backend Reference or Cpu), in a build or on a machine without CUDA, or
// in a process that has not run the Cuda backend yet (so it never starts a CUDA context of its own).
void synchronize(const ExecOptions& options = {});

// A backend of this build: whether it can run here (`available`; when not, `note` says why, e.g. no GPU or no
// driver), the memory its tensors must live in, and a line about it (the device's name for Cuda).
struct BackendInfo {
  Backend backend;
  MemorySpace memory;
  bool available;
  std::string note;
  int devices = 0;  // how many devices it runs on here: the GPUs the process sees (Cuda), 1 (the host), 0 (cannot run)
};
// Every backend compiled into this build, Reference first, described as `options` would run them (Cuda: the name of
// options.device; Cpu: its thread count).
std::vector<BackendInfo> backends(const ExecOptions& options = {});

}  // namespace rsz

#pragma GCC visibility pop
