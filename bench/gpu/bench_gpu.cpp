// Times rsz's CUDA backend on the plan written by plan.py (the workloads of bench/workloads.json and
// workloads_gpu.json) and the device-to-device copy bandwidth, with CUDA events: median of 20 runs after warm-ups
// of at least 25 ms, of the library call as a user makes it (roi_align's included: its ROI values are checked on the
// device, in stream order). With --host: host tensors, Backend::Cuda (staged) against Backend::Cpu (see host_mode).
// Prints one JSON object per line: workload, mode, dtype, ms, bytes moved (inputs read once + outputs written once).
// usage: rsz_gpu_bench WORK_DIR | rsz_gpu_bench --host
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "rsz_gpu_bench: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

double median_ms(const std::function<void()>& run) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  // Warm-ups: 3 runs and at least 25 ms, each waited for. A workload timed right after a heavy one (the copies, the
  // 8 x 4K batch) ran up to 10% slower for its first millisecond or two (on an H100 the float32 upsample x2 took
  // 0.0675 ms over its first 23 runs after the copies, 0.0617 over the next 23), so each is timed in its own steady
  // state.
  const auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i < 3 || std::chrono::steady_clock::now() - begin < std::chrono::milliseconds(25); ++i) {
    run();
    check(cudaDeviceSynchronize(), "sync");
  }
  std::vector<float> times;
  for (int i = 0; i < 20; ++i) {
    check(cudaEventRecord(start), "record");
    run();
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Device memory filled with a byte pattern (0x3c3c: float16 1.06; float32 0.0115), freed at scope exit.
struct DeviceBuffer {
  explicit DeviceBuffer(std::size_t bytes) {
    check(cudaMalloc(&data, bytes), "malloc");
    check(cudaMemset(data, 0x3c, bytes), "memset");
  }
  DeviceBuffer(const void* host, std::size_t bytes) : DeviceBuffer(bytes) {
    check(cudaMemcpy(data, host, bytes, cudaMemcpyHostToDevice), "copy");
  }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data = nullptr;
};

std::size_t bytes_of(const rsz::Dims& dims, rsz::DataType type) {
  return static_cast<std::size_t>(rsz::element_count(dims)) * rsz::element_size(type);
}

void report(const std::string& workload, const std::string& mode, const char* dtype, double ms, double bytes) {
  std::printf("{\"workload\": \"%s\", \"mode\": \"%s\", \"dtype\": \"%s\", \"ms\": %.4f, \"bytes\": %.0f}\n",
              workload.c_str(), mode.c_str(), dtype, ms, bytes);
  std::fflush(stdout);
}

std::vector<char> read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "rsz_gpu_bench: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

rsz::InterpolationMode mode_of(const std::string& mode) {
  return mode == "nearest" ? rsz::InterpolationMode::Nearest : rsz::InterpolationMode::Linear;
}

void run_resample(std::istringstream& line, rsz::DataType type, const char* dtype) {
  std::string name, mode;
  rsz::Dims in(4), out(4);
  line >> name >> mode >> in[0] >> in[1] >> in[2] >> in[3] >> out[2] >> out[3];
  out[0] = in[0];
  out[1] = in[1];
  const DeviceBuffer x(bytes_of(in, type)), y(bytes_of(out, type));
  rsz::ResampleParams p;
  p.interpolation = mode_of(mode);
  p.scales = {1, 1, static_cast<float>(out[2]) / static_cast<float>(in[2]),
              static_cast<float>(out[3]) / static_cast<float>(in[3])};
  const rsz::ConstTensorView xv(x.data, type, in, {}, rsz::MemorySpace::Device);
  const rsz::TensorView yv(y.data, type, out, {}, rsz::MemorySpace::Device);
  report(name, mode, dtype, median_ms([&] { rsz::resample(xv, yv, p); }),
         static_cast<double>(bytes_of(in, type) + bytes_of(out, type)));
}

void run_upsample(std::istringstream& line, rsz::DataType type, const char* dtype) {
  std::string name, mode;
  std::uint32_t factor = 0;
  line >> name >> mode >> factor;
  rsz::Dims in;
  for (std::int64_t d = 0; line >> d;) in.push_back(d);
  rsz::Upsample2dParams p;
  p.interpolation = mode_of(mode);
  p.scale_size = {factor, factor};
  const rsz::Dims out = rsz::upsample2d_output_sizes(in, p.scale_size);
  const DeviceBuffer x(bytes_of(in, type)), y(bytes_of(out, type));
  const rsz::ConstTensorView xv(x.data, type, in, {}, rsz::MemorySpace::Device);
  const rsz::TensorView yv(y.data, type, out, {}, rsz::MemorySpace::Device);
  report(name, mode, dtype, median_ms([&] { rsz::upsample2d(xv, yv, p); }),
         static_cast<double>(bytes_of(in, type) + bytes_of(out, type)));
}

void run_roi_align(std::istringstream& line, const std::string& work, rsz::DataType type, const char* dtype) {
  std::string name;
  rsz::Dims in(4);
  std::int64_t r = 0, side = 0;
  std::uint32_t sampling = 0;
  float spatial_scale = 1.0f;
  line >> name >> in[0] >> in[1] >> in[2] >> in[3] >> r >> side >> sampling >> spatial_scale;
  const std::vector<char> boxes32 = read_file(work + "/" + name + ".rois.f32");
  const std::vector<char> batch = read_file(work + "/" + name + ".batch.u32");
  std::vector<__half> boxes16;
  const auto* b32 = reinterpret_cast<const float*>(boxes32.data());
  for (std::size_t i = 0; i < boxes32.size() / sizeof(float); ++i) boxes16.push_back(__float2half(b32[i]));
  const bool f32 = type == rsz::DataType::Float32;
  const DeviceBuffer rois(f32 ? static_cast<const void*>(boxes32.data()) : boxes16.data(),
                          f32 ? boxes32.size() : boxes16.size() * sizeof(__half));
  const DeviceBuffer indices(batch.data(), batch.size());
  const rsz::Dims out{r, in[1], side, side};
  const DeviceBuffer x(bytes_of(in, type)), y(bytes_of(out, type));
  rsz::RoiAlignParams p;
  if (sampling > 0) p.minimum_samples_per_output = p.maximum_samples_per_output = sampling;
  p.spatial_scale_x = p.spatial_scale_y = spatial_scale;
  const rsz::ConstTensorView xv(x.data, type, in, {}, rsz::MemorySpace::Device);
  const rsz::ConstTensorView bv(rois.data, type, {r, 4}, {}, rsz::MemorySpace::Device);
  const rsz::ConstTensorView kv(indices.data, rsz::DataType::UInt32, {r}, {}, rsz::MemorySpace::Device);
  const rsz::TensorView yv(y.data, type, out, {}, rsz::MemorySpace::Device);
  report(name, "average", dtype, median_ms([&] { rsz::roi_align(xv, bv, kv, yv, p); }),
         static_cast<double>(bytes_of(in, type) + bytes_of(out, type)));
}

// Wall-clock median of 7 runs after one warm-up, in ms (host tensors: the call returns when the results are back).
double wall_median_ms(const std::function<void()>& run) {
  run();
  std::vector<double> times;
  for (int i = 0; i < 7; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// --host: tensors in host memory, as the command line and the Python module hold them: Backend::Cuda (staged: copied
// to the device and back) against Backend::Cpu on every core of this machine, and the first CUDA call of a process
// (its context creation), which a one-image command pays. Prints a Markdown section for RESULTS_GPU.md: the data
// behind Backend::Auto's choice of the CPU for host tensors.
int host_mode() {
  const auto start = std::chrono::steady_clock::now();
  check(cudaFree(nullptr), "context");
  const double init_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::printf("\n## Host tensors: Backend::Cuda (staged) against Backend::Cpu (%u threads)\n\n", threads);
  std::printf("The first CUDA call of a process (context creation) took %.1f ms. Wall-clock medians of 7 calls after "
              "a warm-up; the CUDA calls include the copies to the device and back.\n\n", init_ms);
  std::printf("| workload | cpu ms | cuda staged ms | cpu / cuda |\n| --- | --- | --- | --- |\n");
  struct Host {
    const char* name;
    rsz::Dims in;
    rsz::Dims in_strides;
    rsz::DataType in_type;
    rsz::Dims out;
    bool upsample;
  };
  const rsz::Dims rgb_strides{1080 * 1920 * 3, 1, 1920 * 3, 3};
  const std::vector<Host> workloads = {
      {"1080p 8-bit RGB image -> 960 x 540 float32, bilinear", {1, 3, 1080, 1920}, rgb_strides, rsz::DataType::UNorm8,
       {1, 3, 540, 960}, false},
      {"1080p 8-bit RGB image -> 4K float32, bilinear", {1, 3, 1080, 1920}, rgb_strides, rsz::DataType::UNorm8,
       {1, 3, 2160, 3840}, false},
      {"8 x 4K float32 -> 1080p, bilinear", {8, 3, 2160, 3840}, {}, rsz::DataType::Float32, {8, 3, 1080, 1920}, false},
      {"upsample x2 1 x 256 x 136 x 200 float32, bilinear", {1, 256, 136, 200}, {}, rsz::DataType::Float32,
       {1, 256, 272, 400}, true},
  };
  for (const Host& w : workloads) {
    std::vector<unsigned char> x(bytes_of(w.in, w.in_type), 0x3c);
    std::vector<float> y(static_cast<std::size_t>(rsz::element_count(w.out)));
    const rsz::ConstTensorView xv(x.data(), w.in_type, w.in, w.in_strides);
    const rsz::TensorView yv(y.data(), rsz::DataType::Float32, w.out);
    const auto call = [&](rsz::Backend backend) {
      const rsz::ExecOptions options{backend};
      if (w.upsample) {
        rsz::Upsample2dParams p;
        p.scale_size = {2, 2};
        rsz::upsample2d(xv, yv, p, options);
      } else {
        rsz::ResampleParams p;
        p.scales = {1, 1, static_cast<float>(w.out[2]) / static_cast<float>(w.in[2]),
                    static_cast<float>(w.out[3]) / static_cast<float>(w.in[3])};
        rsz::resample(xv, yv, p, options);
      }
    };
    const double cpu = wall_median_ms([&] { call(rsz::Backend::Cpu); });
    const double cuda = wall_median_ms([&] { call(rsz::Backend::Cuda); });
    std::printf("| %s | %.2f | %.2f | %.2f |\n", w.name, cpu, cuda, cpu / cuda);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--host") return host_mode();
  if (argc != 2) {
    std::fprintf(stderr,
                 "usage: rsz_gpu_bench WORK_DIR (the folder bench/gpu/plan.py wrote) | rsz_gpu_bench --host\n");
    return 2;
  }
  const std::string work = argv[1];
  {  // device-to-device copy bandwidth: 1 GiB read + 1 GiB written
    const std::size_t bytes = std::size_t{1} << 30;
    const DeviceBuffer a(bytes), b(bytes);
    // Half a second of copies first, so that the GPU's clocks are up before anything is timed (the first workloads
    // of a run otherwise took up to 2x longer than the same workloads later in it).
    for (int i = 0; i < 700; ++i) check(cudaMemcpy(b.data, a.data, bytes, cudaMemcpyDeviceToDevice), "copy");
    const double ms = median_ms([&] { check(cudaMemcpy(b.data, a.data, bytes, cudaMemcpyDeviceToDevice), "copy"); });
    report("copy_d2d_1GiB", "copy", "bytes", ms, 2.0 * static_cast<double>(bytes));
  }
  std::vector<std::string> plan;
  {
    std::ifstream file(work + "/plan.txt");
    for (std::string line; std::getline(file, line);) {
      if (!line.empty()) plan.push_back(line);
    }
  }
  for (const rsz::DataType type : {rsz::DataType::Float32, rsz::DataType::Float16}) {
    const char* dtype = type == rsz::DataType::Float32 ? "float32" : "float16";
    for (const std::string& text : plan) {
      std::istringstream line(text);
      std::string kind;
      line >> kind;
      try {
        if (kind == "resample") {
          run_resample(line, type, dtype);
        } else if (kind == "upsample") {
          run_upsample(line, type, dtype);
        } else if (kind == "roi") {
          run_roi_align(line, work, type, dtype);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rsz_gpu_bench: %s: %s\n", text.c_str(), e.what());
        return 1;
      }
    }
  }
  return 0;
}
