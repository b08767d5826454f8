// Times rsz's CUDA backend on the workloads of bench/gpu/run.sh and the device-to-device copy bandwidth, with CUDA
// events (median of 20 runs after 3 warm-ups). Prints one JSON object per line: workload, dtype, ms, bytes moved
// (inputs read once + outputs written once).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "rsz/resample.h"
#include "rsz/roi_align.h"

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
  for (int i = 0; i < 3; ++i) run();
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
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void* device_fill(std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "malloc");
  check(cudaMemset(p, 0x3c, bytes), "memset");  // 0x3c3c: float16 1.06; float32 0.0115
  return p;
}

void report(const char* workload, const char* dtype, double ms, double bytes) {
  std::printf("{\"workload\": \"%s\", \"dtype\": \"%s\", \"ms\": %.4f, \"bytes\": %.0f}\n", workload, dtype, ms, bytes);
}

}  // namespace

int main() {
  // Device-to-device copy bandwidth: 1 GiB read + 1 GiB written.
  {
    const std::size_t bytes = std::size_t{1} << 30;
    void* a = device_fill(bytes);
    void* b = device_fill(bytes);
    const double ms = median_ms([&] { check(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "copy"); });
    report("copy_d2d_1GiB", "bytes", ms, 2.0 * static_cast<double>(bytes));
    cudaFree(a);
    cudaFree(b);
  }
  for (const rsz::DataType type : {rsz::DataType::Float32, rsz::DataType::Float16}) {
    const char* name = type == rsz::DataType::Float32 ? "float32" : "float16";
    const double es = static_cast<double>(rsz::element_size(type));
    struct Resize {
      const char* workload;
      rsz::Dims in;
      rsz::Dims out;
    };
    for (const Resize& r : {Resize{"resample_1080p_to_4k_bilinear", {1, 3, 1080, 1920}, {1, 3, 2160, 3840}},
                            Resize{"resample_8x4k_to_1080p_bilinear", {8, 3, 2160, 3840}, {8, 3, 1080, 1920}}}) {
      void* in = device_fill(static_cast<std::size_t>(rsz::element_count(r.in) * es));
      void* out = device_fill(static_cast<std::size_t>(rsz::element_count(r.out) * es));
      rsz::ResampleParams p;
      p.scales = {1, 1, static_cast<float>(r.out[2]) / static_cast<float>(r.in[2]),
                  static_cast<float>(r.out[3]) / static_cast<float>(r.in[3])};
      const rsz::ConstTensorView x(in, type, r.in, {}, rsz::MemorySpace::Device);
      const rsz::TensorView y(out, type, r.out, {}, rsz::MemorySpace::Device);
      const double ms = median_ms([&] { rsz::resample(x, y, p); });
      report(r.workload, name, ms, es * static_cast<double>(rsz::element_count(r.in) + rsz::element_count(r.out)));
      cudaFree(in);
      cudaFree(out);
    }
    // ROI align, the FPN case of bench/workloads.json: 1000 ROIs, 7 x 7, 256 channels of 200 x 272, 2 x 2 samples.
    {
      const rsz::Dims in_sizes{1, 256, 200, 272};
      const std::int64_t r = 1000;
      std::vector<float> boxes(static_cast<std::size_t>(r * 4));
      std::uint32_t state = 1;
      const auto next = [&] {
        state = state * 1103515245u + 12345u;
        return static_cast<float>(state >> 8) / 16777216.0f;
      };
      for (std::int64_t i = 0; i < r; ++i) {
        const float x = next() * 250.0f, y = next() * 180.0f;
        boxes[static_cast<std::size_t>(i * 4)] = x;
        boxes[static_cast<std::size_t>(i * 4 + 1)] = y;
        boxes[static_cast<std::size_t>(i * 4 + 2)] = x + 4.0f + next() * 60.0f;
        boxes[static_cast<std::size_t>(i * 4 + 3)] = y + 4.0f + next() * 60.0f;
      }
      std::vector<unsigned char> box_bytes;
      if (type == rsz::DataType::Float32) {
        box_bytes.assign(reinterpret_cast<unsigned char*>(boxes.data()),
                         reinterpret_cast<unsigned char*>(boxes.data() + boxes.size()));
      } else {
        std::vector<__half> h(boxes.size());
        for (std::size_t i = 0; i < h.size(); ++i) h[i] = __float2half(boxes[i]);
        box_bytes.assign(reinterpret_cast<unsigned char*>(h.data()), reinterpret_cast<unsigned char*>(h.data() + h.size()));
      }
      void* rois = nullptr;
      check(cudaMalloc(&rois, box_bytes.size()), "malloc");
      check(cudaMemcpy(rois, box_bytes.data(), box_bytes.size(), cudaMemcpyHostToDevice), "copy");
      void* indices = device_fill(static_cast<std::size_t>(r) * 4);
      check(cudaMemset(indices, 0, static_cast<std::size_t>(r) * 4), "memset");
      void* in = device_fill(static_cast<std::size_t>(rsz::element_count(in_sizes) * es));
      const rsz::Dims out_sizes{r, 256, 7, 7};
      void* out = device_fill(static_cast<std::size_t>(rsz::element_count(out_sizes) * es));
      rsz::RoiAlignParams p;
      p.minimum_samples_per_output = p.maximum_samples_per_output = 2;
      p.spatial_scale_x = p.spatial_scale_y = 1.0f;
      const rsz::ConstTensorView x(in, type, in_sizes, {}, rsz::MemorySpace::Device);
      const rsz::ConstTensorView b(rois, type, {r, 4}, {}, rsz::MemorySpace::Device);
      const rsz::ConstTensorView k(indices, rsz::DataType::UInt32, {r}, {}, rsz::MemorySpace::Device);
      const rsz::TensorView y(out, type, out_sizes, {}, rsz::MemorySpace::Device);
      const double ms = median_ms([&] { rsz::roi_align(x, b, k, y, p); });
      report("roi_align_fpn_1000x7x7x256", name, ms,
             es * static_cast<double>(rsz::element_count(in_sizes) + rsz::element_count(out_sizes)));
      cudaFree(in);
      cudaFree(out);
      cudaFree(rois);
      cudaFree(indices);
    }
  }
  return 0;
}
