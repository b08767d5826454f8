// Uses an installed rsz through its public headers only: resizes a tensor, checks a value, round-trips it through
// .npy. Exit status 0 when everything holds.
#include <rsz/error.h>
#include <rsz/io/npy.h>
#include <rsz/resample.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  rsz::Tensor image(rsz::DataType::Float32, {1, 1, 2, 2});
  const float values[4] = {0.0f, 1.0f, 2.0f, 3.0f};
  for (int i = 0; i < 4; ++i) image.data_as<float>()[i] = values[i];
  rsz::ResampleParams params;  // linear, offsets 0.5 / -0.5
  params.scales = {1.0f, 1.0f, 2.0f, 2.0f};
  rsz::Tensor big(rsz::DataType::Float32, rsz::resample_output_sizes(image.sizes(), params.scales));
  rsz::resample(image.view(), big.view(), params);
  // Output (1, 1) of a 2x upscale samples source (0.25, 0.25): 0.75 * 0.75 * 0 + ... = 0.75 exactly.
  const float got = big.data_as<float>()[1 * 4 + 1];
  if (got != 0.75f) {
    std::fprintf(stderr, "consumer: expected 0.75 at (1, 1), got %g\n", static_cast<double>(got));
    return 1;
  }
  const std::string file = argc > 1 ? argv[1] : "consumer_out.npy";
  rsz::io::write_npy(file, big.view());
  const rsz::Tensor back = rsz::io::read_npy(file);
  if (back.sizes() != big.sizes() || back.data_as<float>()[5] != 0.75f) {
    std::fprintf(stderr, "consumer: the .npy round trip changed the tensor\n");
    return 1;
  }
  try {
    rsz::resample(image.view(), image.view(), params);  // wrong output size: rsz::Error crosses the library boundary
    return 1;
  } catch (const rsz::Error& e) {
    std::printf("consumer: ok (%s)\n", e.what());
  }
  return 0;
}
