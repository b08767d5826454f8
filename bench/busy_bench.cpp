// One small resample, timed call by call, for the busy-machine test of bench/threads_device.sh (RESULTS_THREADS.md):
// how a call with threads = 0 (every usable CPU), 1 and N behaves while other processes keep every core busy.
// rsz_bench's --threads takes 1 to 1024 only; this also times 0, the default of ExecOptions.
//
// usage: busy_bench SECONDS THREADS
//   e.g. busy_bench 5 0,1,16
// For each case (float32 linear: 1x3x1080x1920 -> 224x224, about 1 ms on one thread, and 1x3x540x960 -> 270x480),
// the thread settings of THREADS are timed in turns, one call each per round (so that a slow spell of the machine hits
// them alike), for about SECONDS per case (at least 10 rounds, at most 5000). Prints one JSON line per case and setting:
// calls, median, mean, 10th and 90th percentile and worst ms. Builds against either threading runtime (see
// threads_device.sh): the public API is the same.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "rsz/exec.h"
#include "rsz/resample.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
  const char* name;
  rsz::Dims in;
  rsz::Dims out;
};

double at(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: busy_bench SECONDS THREADS (e.g. 5 0,1,16)\n";
    return 2;
  }
  const double seconds = std::atof(argv[1]);
  std::vector<int> threads;
  for (std::string s = argv[2]; !s.empty();) {
    const std::size_t comma = s.find(',');
    threads.push_back(std::atoi(s.substr(0, comma).c_str()));
    s = comma == std::string::npos ? "" : s.substr(comma + 1);
  }
  std::cout << "{\"usable_cpus\": " << rsz::usable_cpus() << "}" << std::endl;
  const Case cases[] = {{"resample_1080p_to_224", {1, 3, 1080, 1920}, {1, 3, 224, 224}},
                        {"resample_540x960_x0.5", {1, 3, 540, 960}, {1, 3, 270, 480}}};
  for (const Case& c : cases) {
    std::vector<float> input(static_cast<std::size_t>(rsz::element_count(c.in)));
    std::vector<float> output(static_cast<std::size_t>(rsz::element_count(c.out)));
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(0.0f, 1.0f);
    for (float& v : input) v = dist(rng);
    rsz::ResampleParams p;
    p.interpolation = rsz::InterpolationMode::Linear;
    for (std::size_t a = 0; a < 4; ++a) p.scales[a] = static_cast<float>(c.out[a]) / static_cast<float>(c.in[a]);
    const auto call = [&](int t) {
      rsz::resample(rsz::ConstTensorView(input.data(), rsz::DataType::Float32, c.in),
                    rsz::TensorView(output.data(), rsz::DataType::Float32, c.out), p, {rsz::Backend::Cpu, t});
    };
    for (const int t : threads) call(t);  // warm-up: starts the workers, touches the buffers
    std::vector<std::vector<double>> ms(threads.size());
    const auto start = Clock::now();
    for (int round = 0; round < 5000; ++round) {
      if (round >= 10 && std::chrono::duration<double>(Clock::now() - start).count() > seconds) break;
      for (std::size_t i = 0; i < threads.size(); ++i) {
        const auto t0 = Clock::now();
        call(threads[i]);
        ms[i].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    }
    for (std::size_t i = 0; i < threads.size(); ++i) {
      double sum = 0;
      for (const double v : ms[i]) sum += v;
      std::cout << "{\"case\": \"" << c.name << "\", \"threads\": " << threads[i] << ", \"calls\": " << ms[i].size()
                << ", \"median_ms\": " << at(ms[i], 0.5) << ", \"mean_ms\": " << sum / static_cast<double>(ms[i].size())
                << ", \"p10_ms\": " << at(ms[i], 0.1) << ", \"p90_ms\": " << at(ms[i], 0.9)
                << ", \"max_ms\": " << at(ms[i], 1.0) << "}" << std::endl;
    }
  }
  return 0;
}
