// rsz benchmark: the workloads of bench/workloads.json for rsz (float32 and float16, 1 and 2 threads or --threads) and OpenCV
// (in-process, float32), plus this machine's copy bandwidth and its own scaling over --threads (a register-only loop)
// measured in the same run. Prints one JSON line per
// measurement on stdout (bench/report.py turns them, with the peers' lines, into bench/RESULTS.md) and writes the
// generated ROI boxes to the output folder so the peer scripts time the very same boxes.
//
// usage: rsz_bench WORKLOADS.json OUT_DIR [--quick] [--only SUBSTRING] [--threads 1,4,16]
//   --only: the workloads whose name has it; --threads: the thread counts to time (default 1,2), so the same binary
//   measures scaling on a 2-core machine and a 16-core one.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"

#ifdef RSZ_BENCH_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

bool g_quick = false;
std::string g_only;  // run only the workloads whose name contains this
std::vector<int> g_threads{1, 2};

// "1,4,16": thread counts from 1 to 1024; empty on anything else.
std::vector<int> parse_threads(const std::string& text) {
  std::vector<int> counts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 1024) return {};
    counts.push_back(static_cast<int>(v));
    start = comma + 1;
  }
  return counts;
}

bool selected(const json& w) { return w["name"].get<std::string>().find(g_only) != std::string::npos; }

// Median seconds of each of `fns`, timed in turn within each repetition (so that a slow spell of a shared machine
// hits every implementation alike), over at least 7 repetitions and about 0.6 s each (3 and 0.1 s with --quick).
std::vector<double> median_seconds(const std::vector<std::function<void(int)>>& fns) {
  for (const auto& fn : fns) fn(0);  // warm-up
  std::vector<std::vector<double>> times(fns.size());
  const double budget = g_quick ? 0.1 : 0.6;
  const std::size_t min_reps = g_quick ? 3 : 7;
  std::vector<double> total(fns.size(), 0.0);
  const auto done = [&] {
    for (std::size_t i = 0; i < fns.size(); ++i) {
      if (times[i].size() < min_reps || (total[i] < budget && times[i].size() < 100)) return false;
    }
    return true;
  };
  for (int rep = 1; !done(); ++rep) {
    for (std::size_t i = 0; i < fns.size(); ++i) {
      const auto t0 = Clock::now();
      fns[i](rep);
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      times[i].push_back(s);
      total[i] += s;
    }
  }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t[t.size() / 2]);
  }
  return medians;
}

double median_seconds(const std::function<void(int)>& fn) { return median_seconds(std::vector{fn})[0]; }

// Several input/output buffer sets, used in turn, so large workloads are not served from cache.
struct Buffers {
  std::vector<std::vector<std::byte>> inputs;
  std::vector<std::vector<std::byte>> outputs;
  Buffers(std::size_t in_bytes, std::size_t out_bytes) {
    const std::size_t set = in_bytes + out_bytes;
    const std::size_t count = std::clamp<std::size_t>((std::size_t{256} << 20) / std::max<std::size_t>(set, 1), 1, 8);
    for (std::size_t i = 0; i < count; ++i) {
      inputs.emplace_back(in_bytes);
      outputs.emplace_back(out_bytes, std::byte{0});
    }
  }
  std::size_t count() const { return inputs.size(); }
};

void fill(std::vector<std::byte>& buffer, rsz::DataType type, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  if (type == rsz::DataType::Float32) {
    auto* p = reinterpret_cast<float*>(buffer.data());
    for (std::size_t i = 0; i < buffer.size() / 4; ++i) p[i] = dist(rng);
  } else {
    auto* p = reinterpret_cast<std::uint16_t*>(buffer.data());
    for (std::size_t i = 0; i < buffer.size() / 2; ++i) p[i] = rsz::float_to_float16_bits(dist(rng));
  }
}

rsz::Dims dims(const json& j) { return j.get<rsz::Dims>(); }

void emit(const std::string& workload, const std::string& variant, rsz::DataType type, int threads,
          const std::string& impl, double seconds, double bytes) {
  std::cout << json{{"workload", workload}, {"variant", variant},   {"dtype", rsz::to_string(type)},
                    {"threads", threads},   {"impl", impl},         {"median_ms", seconds * 1e3},
                    {"bytes", bytes}}
                   .dump()
            << std::endl;
}

double copy_bandwidth() {
  const std::size_t bytes = std::size_t{256} << 20;
  std::vector<char> a(bytes, 1);
  std::vector<char> b(bytes, 0);
  const double s = median_seconds([&](int) { std::memcpy(b.data(), a.data(), bytes); });
  return 2.0 * static_cast<double>(bytes) / s;  // read + write
}

// Milliseconds of a fixed register-only loop (8 independent chains of 4-lane multiply and add) on each of `threads`
// threads started together: the median thread's time.
double spin_ms(int threads) {
  typedef float V4 __attribute__((vector_size(16)));  // SSE2, NEON: every target
  std::vector<double> ms(static_cast<std::size_t>(threads));
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      const auto start = Clock::now();
      V4 a[8];
      for (int k = 0; k < 8; ++k) a[k] = V4{} + (1.0f + 1e-3f * static_cast<float>(k));
      const V4 w = V4{} + 0.999999f;
      const V4 b = V4{} + 1e-7f;
      for (long i = 0; i < 18000000; ++i) {
        for (int k = 0; k < 8; ++k) a[k] = a[k] * w + b;
      }
      V4 sum = a[0];
      for (int k = 1; k < 8; ++k) sum += a[k];  // every chain and lane feeds the result: none can be left out
      ms[static_cast<std::size_t>(t)] = std::chrono::duration<double, std::milli>(Clock::now() - start).count() +
                                        (sum[0] + sum[1] + sum[2] + sum[3] == 12345.0f ? 1e-9 : 0.0);
    });
  }
  for (auto& th : pool) th.join();
  std::nth_element(ms.begin(), ms.begin() + threads / 2, ms.end());
  return ms[static_cast<std::size_t>(threads / 2)];
}

// The machine's own scaling, printed beside the kernels' (one JSON line per --threads count): the register-only
// loop's time per thread with that many threads at once, against one thread alone, as a speed-up (threads * one
// thread's time / the median thread's time; best of 3). Shared physical cores, a clock that drops with many cores
// busy, and other tenants of a virtual machine all show here, and no kernel outpaces it by computing alone: only
// one whose one-thread run waits on memory can scale past it.
void emit_compute_scaling() {
  const auto best = [](int threads) {
    double b = spin_ms(threads);
    for (int rep = 0; rep < 2; ++rep) b = std::min(b, spin_ms(threads));
    return b;
  };
  const double one = best(1);
  for (const int threads : g_threads) {
    const double t = threads == 1 ? one : best(threads);
    std::cout << json{{"compute_scaling", static_cast<double>(threads) * one / t}, {"threads", threads},
                      {"spin_ms", t}}
                     .dump()
              << std::endl;
  }
}

#ifdef RSZ_BENCH_OPENCV
// OpenCV on the same NCHW planes: cv::resize per H x W plane, as a repetition for median_seconds.
std::function<void(int)> opencv_resize(Buffers& buf, const rsz::Dims& in, const rsz::Dims& out, int interpolation) {
  const std::int64_t planes = in[0] * in[1] * (in.size() == 5 ? in[2] : 1);
  const int h = static_cast<int>(in[in.size() - 2]);
  const int w = static_cast<int>(in[in.size() - 1]);
  const int oh = static_cast<int>(out[out.size() - 2]);
  const int ow = static_cast<int>(out[out.size() - 1]);
  return [&buf, planes, h, w, oh, ow, interpolation](int rep) {
    const std::size_t k = static_cast<std::size_t>(rep) % buf.count();
    auto* src = reinterpret_cast<float*>(buf.inputs[k].data());
    auto* dst = reinterpret_cast<float*>(buf.outputs[k].data());
    for (std::int64_t p = 0; p < planes; ++p) {
      const cv::Mat s(h, w, CV_32F, src + p * h * w);
      cv::Mat d(oh, ow, CV_32F, dst + p * oh * ow);
      cv::resize(s, d, cv::Size(ow, oh), 0, 0, interpolation);
    }
  };
}

// rsz's repetition and, for float32, OpenCV's, timed interleaved; emits both.
void emit_with_opencv(const json& w, const std::string& variant, rsz::DataType type, int threads, double bytes,
                      const std::function<void(int)>& rsz_fn, Buffers& buf, const rsz::Dims& in,
                      const rsz::Dims& out, rsz::InterpolationMode mode) {
  if (type != rsz::DataType::Float32) {
    emit(w["name"], variant, type, threads, "rsz", median_seconds(rsz_fn), bytes);
    return;
  }
  cv::setNumThreads(threads);
  const int cv_mode = mode == rsz::InterpolationMode::Linear ? cv::INTER_LINEAR : cv::INTER_NEAREST;
  const std::vector<double> s = median_seconds({rsz_fn, opencv_resize(buf, in, out, cv_mode)});
  emit(w["name"], variant, type, threads, "rsz", s[0], bytes);
  emit(w["name"], variant, type, threads, "opencv", s[1], bytes);
}
#else
void emit_with_opencv(const json& w, const std::string& variant, rsz::DataType type, int threads, double bytes,
                      const std::function<void(int)>& rsz_fn, Buffers&, const rsz::Dims&, const rsz::Dims&,
                      rsz::InterpolationMode) {
  emit(w["name"], variant, type, threads, "rsz", median_seconds(rsz_fn), bytes);
}
#endif

void bench_resample(const json& w, rsz::DataType type, int threads) {
  const rsz::Dims in = dims(w["input"]);
  const rsz::Dims out = dims(w["output"]);
  const std::size_t es = rsz::element_size(type);
  Buffers buf(static_cast<std::size_t>(rsz::element_count(in)) * es,
              static_cast<std::size_t>(rsz::element_count(out)) * es);
  for (std::size_t k = 0; k < buf.count(); ++k) fill(buf.inputs[k], type, static_cast<std::uint32_t>(k));
  const double bytes = static_cast<double>(buf.inputs[0].size() + buf.outputs[0].size());
  for (const auto mode : {rsz::InterpolationMode::Linear, rsz::InterpolationMode::Nearest}) {
    rsz::ResampleParams p;
    p.interpolation = mode;
    for (std::size_t a = 0; a < 4; ++a) p.scales[a] = static_cast<float>(out[a]) / static_cast<float>(in[a]);
    const auto rsz_fn = [&](int rep) {
      const std::size_t k = static_cast<std::size_t>(rep) % buf.count();
      rsz::resample(rsz::ConstTensorView(buf.inputs[k].data(), type, in),
                    rsz::TensorView(buf.outputs[k].data(), type, out), p, {rsz::Backend::Cpu, threads});
    };
    emit_with_opencv(w, rsz::to_string(mode), type, threads, bytes, rsz_fn, buf, in, out, mode);
  }
}

void bench_upsample(const json& w, rsz::DataType type, int threads) {
  const rsz::Dims in = dims(w["input"]);
  const auto factor = w["factor"].get<std::uint32_t>();
  const rsz::Dims out = rsz::upsample2d_output_sizes(in, {factor, factor});
  const std::size_t es = rsz::element_size(type);
  Buffers buf(static_cast<std::size_t>(rsz::element_count(in)) * es,
              static_cast<std::size_t>(rsz::element_count(out)) * es);
  for (std::size_t k = 0; k < buf.count(); ++k) fill(buf.inputs[k], type, static_cast<std::uint32_t>(k));
  const double bytes = static_cast<double>(buf.inputs[0].size() + buf.outputs[0].size());
  for (const auto mode : {rsz::InterpolationMode::Nearest, rsz::InterpolationMode::Linear}) {
    const rsz::Upsample2dParams p{mode, {factor, factor}};
    const auto rsz_fn = [&](int rep) {
      const std::size_t k = static_cast<std::size_t>(rep) % buf.count();
      rsz::upsample2d(rsz::ConstTensorView(buf.inputs[k].data(), type, in),
                      rsz::TensorView(buf.outputs[k].data(), type, out), p, {rsz::Backend::Cpu, threads});
    };
    emit_with_opencv(w, rsz::to_string(mode), type, threads, bytes, rsz_fn, buf, in, out, mode);
  }
}

// Boxes in input-image coordinates (feature-map size / spatial_scale), seeded, written for the peers.
std::vector<float> make_rois(const json& w, const std::string& out_dir) {
  const rsz::Dims in = dims(w["input"]);
  const float scale = w["spatial_scale"].get<float>();
  const float img_w = static_cast<float>(in[3]) / scale;
  const float img_h = static_cast<float>(in[2]) / scale;
  std::mt19937 rng(w["seed"].get<std::uint32_t>());
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const int count = w["rois"].get<int>();
  std::vector<float> boxes;
  for (int r = 0; r < count; ++r) {
    const float x1 = u(rng) * img_w * 0.8f;
    const float y1 = u(rng) * img_h * 0.8f;
    const float bw = 8.0f + u(rng) * img_w * 0.3f;
    const float bh = 8.0f + u(rng) * img_h * 0.3f;
    boxes.insert(boxes.end(), {x1, y1, std::min(x1 + bw, img_w), std::min(y1 + bh, img_h)});
  }
  std::ofstream file(out_dir + "/" + w["name"].get<std::string>() + ".rois.f32", std::ios::binary);
  file.write(reinterpret_cast<const char*>(boxes.data()), static_cast<std::streamsize>(boxes.size() * sizeof(float)));
  return boxes;
}

void bench_roi_align(const json& w, rsz::DataType type, int threads, const std::vector<float>& boxes32) {
  const rsz::Dims in = dims(w["input"]);
  const auto count = static_cast<std::int64_t>(boxes32.size() / 4);
  const std::int64_t side = w["output"].get<std::int64_t>();
  const rsz::Dims out{count, in[1], side, side};
  const std::size_t es = rsz::element_size(type);
  Buffers buf(static_cast<std::size_t>(rsz::element_count(in)) * es,
              static_cast<std::size_t>(rsz::element_count(out)) * es);
  for (std::size_t k = 0; k < buf.count(); ++k) fill(buf.inputs[k], type, static_cast<std::uint32_t>(k));
  std::vector<std::uint16_t> boxes16;
  for (float v : boxes32) boxes16.push_back(rsz::float_to_float16_bits(v));
  const void* boxes = type == rsz::DataType::Float32 ? static_cast<const void*>(boxes32.data()) : boxes16.data();
  const std::vector<std::uint32_t> batch(static_cast<std::size_t>(count), 0);
  const double bytes = static_cast<double>(buf.inputs[0].size() + buf.outputs[0].size());
  struct Variant {
    const char* name;
    rsz::RoiReduction reduction;
    rsz::InterpolationMode mode;
  };
  for (const Variant v : {Variant{"average_linear", rsz::RoiReduction::Average, rsz::InterpolationMode::Linear},
                          Variant{"max_linear", rsz::RoiReduction::Max, rsz::InterpolationMode::Linear},
                          Variant{"average_nearest", rsz::RoiReduction::Average, rsz::InterpolationMode::Nearest}}) {
    rsz::RoiAlignParams p;
    p.reduction = v.reduction;
    p.interpolation = v.mode;
    p.spatial_scale_x = p.spatial_scale_y = w["spatial_scale"].get<float>();
    const auto sampling = w["sampling"].get<std::uint32_t>();
    if (sampling > 0) p.minimum_samples_per_output = p.maximum_samples_per_output = sampling;
    const double s = median_seconds([&](int rep) {
      const std::size_t k = static_cast<std::size_t>(rep) % buf.count();
      rsz::roi_align(rsz::ConstTensorView(buf.inputs[k].data(), type, in),
                     rsz::ConstTensorView(boxes, type, {count, 4}),
                     rsz::ConstTensorView(batch.data(), rsz::DataType::UInt32, {count}),
                     rsz::TensorView(buf.outputs[k].data(), type, out), p, {rsz::Backend::Cpu, threads});
    });
    emit(w["name"], v.name, type, threads, "rsz", s, bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: rsz_bench WORKLOADS.json OUT_DIR [--quick] [--only SUBSTRING] [--threads 1,4,16]\n";
    return 2;
  }
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      g_quick = true;
    } else if (arg == "--only" && i + 1 < argc) {
      g_only = argv[++i];
    } else if (arg == "--threads" && i + 1 < argc) {
      g_threads = parse_threads(argv[++i]);
      if (g_threads.empty()) {
        std::cerr << "rsz_bench: --threads " << argv[i] << ": give counts from 1 to 1024 separated by ','\n";
        return 2;
      }
    } else {
      std::cerr << "rsz_bench: unknown argument '" << arg
                << "'; allowed: --quick, --only SUBSTRING, --threads COUNTS\n";
      return 2;
    }
  }
  std::ifstream file(argv[1]);
  const json workloads = json::parse(file);
  const std::string out_dir = argv[2];
  std::cout << json{{"copy_bandwidth_gbs", copy_bandwidth() / 1e9}}.dump() << std::endl;
  emit_compute_scaling();
  for (const auto& w : workloads["roi_align"]) {
    if (!selected(w)) continue;
    const std::vector<float> boxes = make_rois(w, out_dir);
    for (const auto type : {rsz::DataType::Float32, rsz::DataType::Float16}) {
      for (const int threads : g_threads) bench_roi_align(w, type, threads, boxes);
    }
  }
  for (const auto type : {rsz::DataType::Float32, rsz::DataType::Float16}) {
    for (const int threads : g_threads) {
      for (const auto& w : workloads["resample"]) {
        if (selected(w)) bench_resample(w, type, threads);
      }
      for (const auto& w : workloads["upsample"]) {
        if (selected(w)) bench_upsample(w, type, threads);
      }
    }
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::cout << json{{"impl", "rsz+opencv"}, {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0}}.dump()
            << std::endl;
  return 0;
}
