// JPEG files decoded on an NVIDIA GPU by nvJPEG, many in one call: the decode stage of GPU jobs. Built only with the
// CUDA backend where the toolkit has nvJPEG (target rsz::gpu_jpeg, RSZ_GPU_JPEG defined).
//
// Baseline JPEGs go to the GPU's JPEG engines where it has them (A100, H100, H200: nvJPEG's hardware backend, a whole
// batch at once); the others (progressive files, GPUs without the engines) to nvJPEG's CUDA decoder one by one. The
// pixels are nvJPEG's, not libjpeg-turbo's: they differ by a few levels (docs/CUDA.md says how much, measured over the
// sample photos). EXIF orientation is not applied (the caller does, as it reads the header).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rsz/resample.h"
#include "rsz/tensor.h"

namespace rsz::io::gpu {

// One file's result: `height` rows of `row_bytes` bytes in device memory, each `width` RGB pixels interleaved (a gray
// file: `channels` 1, with R = G = B). Valid until the decoder's next decode() or its end.
struct DeviceImage {
  std::int64_t width = 0;
  std::int64_t height = 0;
  int channels = 0;  // the file's: 1 (gray) or 3
  std::uint8_t* data = nullptr;
  std::int64_t row_bytes = 0;
  // Bytes from one pixel to the next: 3 for nvJPEG's (a gray file's too, R = G = B), `channels` for pixels handed
  // in decoded already (GpuJob::pixels).
  std::int64_t pixel_bytes = 3;
  bool engine = false;  // decoded by the GPU's JPEG engines (else nvJPEG's CUDA decoder)
  // Why it was not decoded ("" when it was): not a JPEG nvJPEG reads, CMYK, damaged, over `max_pixels`. The caller
  // decodes such a file on the CPU or fails it with this line.
  std::string error;
};

class JpegBatchDecoder {
 public:
  // On CUDA device `device`, for batches of up to `max_batch` files. Throws rsz::Error (Io) saying why nvJPEG cannot
  // be used there (no device, no nvJPEG).
  explicit JpegBatchDecoder(int device, int max_batch = 64, std::int64_t max_pixels = std::int64_t{1} << 28);
  ~JpegBatchDecoder();
  JpegBatchDecoder(const JpegBatchDecoder&) = delete;
  JpegBatchDecoder& operator=(const JpegBatchDecoder&) = delete;
  // Another decoder on the same device, for another thread: its own state, stream and memory, nvJPEG's library
  // handles shared with this one (made once: the hardware backend's takes most of a decoder's start-up).
  std::unique_ptr<JpegBatchDecoder> sibling() const;
  int device() const;
  // "hardware" (the GPU's JPEG engines decode baseline files) or "cuda" (nvJPEG's CUDA decoder alone).
  const char* engine() const;
  // Decodes the files' bytes (at most max_batch of them), one result each in order; returns once they are on the
  // device, or with `stream` (a cudaStream_t on the decoder's device) once their decoding is queued, the stream's
  // later work waiting for it (the files' bytes must then stay until that work is done). One thread at a time.
  std::vector<DeviceImage> decode(const std::vector<std::string_view>& files, void* stream = nullptr);

 private:
  friend class JpegBatchEncoder;
  struct Impl;
  explicit JpegBatchDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// JPEG files encoded on the GPU by nvJPEG (--encode gpu): 8-bit images in device memory, interleaved RGB or gray,
// queued on a stream one by one and taken back once the stream's work is done. The files are nvJPEG's, not
// libjpeg-turbo's: baseline, the standard tables scaled by the quality, 4:2:0 colour (gray: one component), no
// metadata (with_jpeg_metadata adds it); their pixels differ from the CPU encoder's by a few levels (docs/CUDA.md).
class JpegBatchEncoder {
 public:
  // On the decoder's device, with its library handles (nvJPEG's CUDA backend). Throws rsz::Error (Io).
  explicit JpegBatchEncoder(const JpegBatchDecoder& decoder);
  ~JpegBatchEncoder();
  JpegBatchEncoder(const JpegBatchEncoder&) = delete;
  JpegBatchEncoder& operator=(const JpegBatchEncoder&) = delete;
  // Queues the encoding of `pixels` (device memory: height rows of width * channels bytes, channels 1 or 3) at
  // `quality` (1 to 100) on `stream` (a cudaStream_t on the decoder's device, which is current); returns its number
  // (0, 1, ... since the last clear()). Throws rsz::Error where nvJPEG refuses it.
  std::size_t queue(const std::uint8_t* pixels, std::int64_t width, std::int64_t height, int channels, int quality,
                    void* stream);
  // The file of image `index`, once the work queued on `stream` before is done.
  std::string take(std::size_t index, void* stream);
  // Every image queued so far taken: their states encode the next ones.
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The GPU part of a resize job over JPEG files (--decode gpu): each calling thread hands its file and its resample
// call over, and one worker decodes the files of every waiting thread in one batch (JpegBatchDecoder), runs each call
// on the GPU (rsz::resample, Backend::Cuda: the CPU backend's bits for the same decoded pixels) and copies the
// results back, a batch decoding while the one before is resized. The GPU memory it holds is bounded by its batches:
// the decoded images and the results of two batches (each of up to max_batch files and 512 MiB).
struct ResampleJob {
  std::string_view file;  // the JPEG file's bytes
  std::string_view pixels;  // or its pixels, decoded already (GpuJob::pixels)
  Dims input_sizes;       // 1 x C x H x W as planned (C: 1 for a gray file, 3); another decoded size is an error
  ResampleParams params;
  Dims call_sizes;  // the call's output: 1 x C x h x w
  // The result: call_sizes, or (fit contain) a zero canvas with the call's output at (top, left).
  Dims canvas;
  std::int64_t top = 0;
  std::int64_t left = 0;
  DataType type = DataType::Float32;  // the result's type
};

// Queues on `stream` (a cudaStream_t on the current device; null: the default stream) the float32 samples of `src`
// (N x C x H x W in device memory, any strides, C 1 to 4) quantized to 8 bits with the bits of rsz::io::tensor_to_image
// for straight samples (v * 255 rounded half up; NaN and v <= 0 give 0, v >= 1 gives 255; no alpha is unpremultiplied)
// into `dst`: N images of H x W x C interleaved bytes, one after another. Throws rsz::Error where it cannot launch.
void quantize8(const ConstTensorView& src, std::uint8_t* dst, void* stream);

// Any job's work on its decoded file (BatchResampler::run): `queue` puts it on the GPU with the decoded image, the
// job's `upload` bytes copied to the device (ROI boxes and batch indices, say) and `result_bytes` of device memory for
// its result, which is copied back into the caller's memory.
struct GpuJob {
  std::string_view file;       // the JPEG file's bytes
  // Or (`file` empty) the image decoded already, on the host: input_sizes[2] rows of input_sizes[3] pixels of
  // input_sizes[1] (1 or 3) interleaved 8-bit samples, copied to the device with its batch (through pinned memory).
  std::string_view pixels;
  Dims input_sizes;            // 1 x C x H x W as planned (C: 1 for a gray file, 3); another decoded size is an error
  std::string_view upload;     // host bytes the work reads on the device (may be empty)
  std::size_t result_bytes = 0;
  std::size_t scratch_bytes = 0;  // device memory the work may use besides (not copied back)
  // JPEG files made from the result on the GPU (JpegBatchEncoder) instead of copying it back: the result is then
  // `images` 8-bit images of height x width x channels (1 or 3) one after another, each becoming one file.
  struct Jpeg {
    int quality = 95;
    std::int64_t images = 1;
    std::int64_t height = 0;
    std::int64_t width = 0;
    int channels = 3;
  };
  std::optional<Jpeg> jpeg;
  // Queues the work on exec.stream (exec.device, Backend::Cuda): reads `image` (the decoded pixels, device memory)
  // and `uploaded` (upload's bytes on the device), may use `scratch` (scratch_bytes of device memory; null for none),
  // writes `out` (result_bytes of device memory); all 256-byte aligned. Runs on the stage's worker; a throw fails the
  // batch (each of its jobs gets the error).
  std::function<void(const ConstTensorView& image, const std::uint8_t* uploaded, std::uint8_t* scratch,
                     std::uint8_t* out, const ExecOptions& exec)>
      queue;
};

struct Resampled {
  std::optional<Tensor> result;  // host memory, `canvas` sizes (none with an error)
  // Why the file was not decoded here ("" when it was): not a JPEG nvJPEG reads, CMYK, a damaged header, another
  // size than planned, the GPU failed the batch. The caller decodes it on the CPU instead (whose message a damaged
  // file then fails with). Damage in the compressed data after the header is not found by nvJPEG: its pixels come
  // back as decoded, where libjpeg-turbo's decoder fails the file.
  std::string error;
};

class BatchResampler {
 public:
  // On the GPUs `devices` (distinct; one worker each, taking the next batch when it is free). Returns once the first
  // one's worker is made; the others join as they are made. Throws rsz::Error (Io) saying why the first GPU cannot be
  // used; a later one that cannot is left out (unusable_gpus). Without `decodes`, no JPEG decoder is made (most of a
  // second a GPU): its jobs hand their pixels in (GpuJob::pixels), and a job with a file gets an error.
  BatchResampler(const std::vector<int>& devices, int max_batch, bool decodes = true);
  ~BatchResampler();
  BatchResampler(const BatchResampler&) = delete;
  BatchResampler& operator=(const BatchResampler&) = delete;
  // "hardware" or "cuda" (JpegBatchDecoder::engine), "none" without decoders.
  const char* engine() const;
  // How many batches the GPU failed so far (their jobs went to the CPU), and GPUs left out: a stage that failed one
  // is not kept for later runs.
  std::size_t failures() const;
  // Waits until every GPU of the stage has joined it or been left out (each takes most of a second to make).
  void wait_for_gpus();
  // Finishes the jobs queued, then stops the stage's threads (each GPU's worker and encoder thread) and says
  // RSZ_GPU_STATS' lines; a job handed in after gets the error "the GPU stage has stopped". Its GPU and pinned memory
  // go with the stage (or with the process: the command line leaves them to its exit, which is faster).
  void stop();
  // Why each GPU left out of the stage could not be used ("GPU 1: ..."), so far.
  std::vector<std::string> unusable_gpus() const;
  // From any thread: returns once the job's batch is done. A batch the GPU failed (out of device memory) gives each
  // of its jobs the error, for the CPU to decode them instead. Batches hold at most 512 MiB of decoded pixels and
  // results (a larger job goes alone).
  Resampled run(const ResampleJob& job);
  // The same job's result (float32 only) as 8-bit samples, quantized on the GPU (quantize8: one canvas[2] x canvas[3]
  // image of canvas[1] interleaved channels) into `pixels` (host memory); returns "" or why the file was not run here.
  // A quarter of the float32 result's bytes come back, with tensor_to_image's bits.
  std::string run(const ResampleJob& job, std::uint8_t* pixels);
  // The same job's 8-bit result encoded as a JPEG file at `quality` on the GPU (JpegBatchEncoder), into `file`.
  std::string run(const ResampleJob& job, int quality, std::string& file);
  // The same for any job: its result's result_bytes bytes into `result` (host memory); returns "" or why the file was
  // not run here (as Resampled::error says).
  std::string run(const GpuJob& job, void* result);
  // The same for a job with `jpeg`: its files (one an image, in order) into `files`.
  std::string run(const GpuJob& job, std::vector<std::string>& files);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rsz::io::gpu
