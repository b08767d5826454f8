// rsz/io/gpu_jpeg.h: nvJPEG's hardware backend for a batch of baseline files (nvjpegDecodeBatched), its default
// backend for the rest (nvjpegDecode, one by one), into one device arena of interleaved RGB; and nvJPEG's encoder on
// its default backend (JpegBatchEncoder).
#include <cuda_runtime.h>
#include <nvjpeg.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "rsz/error.h"
#include "cuda_util.h"
#include "rsz/io/gpu_jpeg.h"

namespace rsz::io::gpu {

namespace {

using detail::check_cuda;
using detail::aligned_bytes;
using detail::Arena;
using detail::BlockingEvent;
using detail::OnDevice;

const char* status_text(nvjpegStatus_t s) {
  switch (s) {
    case NVJPEG_STATUS_SUCCESS: return "success";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "not initialized";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "invalid parameter";
    case NVJPEG_STATUS_BAD_JPEG: return "not a JPEG file nvJPEG reads, or damaged";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "a JPEG nvJPEG does not decode";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "out of memory";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "decoding failed on the GPU";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "not supported by this GPU";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "nvJPEG internal error";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "not implemented by nvJPEG for this backend";
    default: return "nvJPEG error";
  }
}

void check(nvjpegStatus_t s, const char* what, const char* who = "GPU JPEG decoder") {
  if (s != NVJPEG_STATUS_SUCCESS) {
    throw Error(ErrorCode::Io, std::string(who) + ": " + what + ": " + status_text(s) + " (status " +
                                   std::to_string(static_cast<int>(s)) + ")");
  }
}

}  // namespace

// nvJPEG's library handles, shared by the decoders of one device (JpegBatchDecoder::sibling): a handle is thread
// safe, and the hardware backend's is most of a decoder's start-up (on an H200 the first decoder took 0.76 s, each
// sibling about 0.1 s); the states and streams are each decoder's own.
struct JpegHandles {
  int device = 0;
  nvjpegHandle_t hardware = nullptr;  // null where the GPU has no JPEG engines
  std::mutex mutex;                   // making `cuda`
  nvjpegHandle_t cuda = nullptr;      // nvJPEG's CUDA decoder, made when a file first needs it

  explicit JpegHandles(int device_) : device(device_) {
    // The JPEG engines, where the GPU has them (NVJPEG_STATUS_ARCH_MISMATCH or NOT_SUPPORTED where not); nvJPEG's
    // CUDA decoder where not, and for the files the engines do not take.
    if (nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &hardware) !=
        NVJPEG_STATUS_SUCCESS) {
      hardware = nullptr;
    }
  }
  ~JpegHandles() {
    if (hardware != nullptr) nvjpegDestroy(hardware);
    if (cuda != nullptr) nvjpegDestroy(cuda);
  }
  JpegHandles(const JpegHandles&) = delete;
  JpegHandles& operator=(const JpegHandles&) = delete;

  nvjpegHandle_t cuda_handle() {
    const std::lock_guard<std::mutex> lock(mutex);
    if (cuda == nullptr) {
      check(nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &cuda), "nvjpegCreate");
    }
    return cuda;
  }
};

struct JpegBatchDecoder::Impl {
  int device = 0;
  int max_batch = 0;
  std::int64_t max_pixels = 0;
  std::shared_ptr<JpegHandles> handles;
  cudaStream_t stream = nullptr;
  nvjpegHandle_t hardware = nullptr;  // handles->hardware
  nvjpegJpegState_t hardware_state = nullptr;
  nvjpegJpegStream_t hardware_stream = nullptr;
  int initialized_batch = 0;  // the batch size the engines' state was initialized for
  nvjpegHandle_t cuda = nullptr;  // handles->cuda, once this decoder needs it
  nvjpegJpegState_t cuda_state = nullptr;
  Arena arena{false, "GPU JPEG decoder", "device memory for the decoded images"};  // the batch's images
  BlockingEvent decoded;  // the batch on the device

  // On the current device (the caller's OnDevice), `max_batch` checked by the caller.
  Impl(std::shared_ptr<JpegHandles> shared, int max_batch_, std::int64_t max_pixels_)
      : device(shared->device), max_batch(max_batch_), max_pixels(max_pixels_), handles(std::move(shared)) {
    try {
      check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "GPU JPEG decoder", "cudaStreamCreate");
      hardware = handles->hardware;
      if (hardware != nullptr) {
        check(nvjpegJpegStateCreate(hardware, &hardware_state), "nvjpegJpegStateCreate (hardware)");
        check(nvjpegJpegStreamCreate(hardware, &hardware_stream), "nvjpegJpegStreamCreate");
      } else {
        make_cuda();
      }
    } catch (...) {  // what was made goes (the destructor does not run for a constructor that throws)
      release();
      throw;
    }
  }

  ~Impl() { release(); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // The states, the stream and its event (the arena frees itself); before the shared handles they were made from.
  void release() {
    if (stream != nullptr) cudaStreamSynchronize(stream);
    if (hardware_stream != nullptr) nvjpegJpegStreamDestroy(hardware_stream);
    if (hardware_state != nullptr) nvjpegJpegStateDestroy(hardware_state);
    if (cuda_state != nullptr) nvjpegJpegStateDestroy(cuda_state);
    decoded.release();
    if (stream != nullptr) cudaStreamDestroy(stream);
    hardware_stream = nullptr;
    hardware_state = nullptr;
    cuda_state = nullptr;
    stream = nullptr;
  }

  // nvJPEG's CUDA decoder and this decoder's state for it, on first use.
  void make_cuda() {
    if (cuda_state != nullptr) return;
    cuda = handles->cuda_handle();
    check(nvjpegJpegStateCreate(cuda, &cuda_state), "nvjpegJpegStateCreate");
  }

  // A file's size and components into `image` (or its error): the header alone parsed where the engines are (the
  // whole stream is read by the decode), which also says whether they decode it; nvJPEG's image info where not.
  // Returns whether the engines decode it.
  bool inspect(std::string_view file, DeviceImage& image) {
    const auto* data = reinterpret_cast<const unsigned char*>(file.data());
    int components = 0;
    bool engine = false;
    if (hardware != nullptr &&
        nvjpegJpegStreamParseHeader(hardware, data, file.size(), hardware_stream) == NVJPEG_STATUS_SUCCESS) {
      unsigned int width = 0;
      unsigned int height = 0;
      unsigned int count = 0;
      int unsupported = 1;  // 0: the engines decode it
      if (nvjpegJpegStreamGetFrameDimensions(hardware_stream, &width, &height) == NVJPEG_STATUS_SUCCESS &&
          nvjpegJpegStreamGetComponentsNum(hardware_stream, &count) == NVJPEG_STATUS_SUCCESS &&
          nvjpegDecodeBatchedSupported(hardware, hardware_stream, &unsupported) == NVJPEG_STATUS_SUCCESS) {
        image.width = width;
        image.height = height;
        components = static_cast<int>(count);
        engine = unsupported == 0;
      }
    }
    if (components == 0) {
      make_cuda();
      nvjpegChromaSubsampling_t subsampling{};
      int widths[NVJPEG_MAX_COMPONENT] = {};
      int heights[NVJPEG_MAX_COMPONENT] = {};
      const nvjpegStatus_t info = nvjpegGetImageInfo(cuda, data, file.size(), &components, &subsampling, widths, heights);
      if (info != NVJPEG_STATUS_SUCCESS) {
        image.error = status_text(info);
        return false;
      }
      image.width = widths[0];
      image.height = heights[0];
    }
    if (components != 1 && components != 3) {
      image.error = std::to_string(components) + " colour components (CMYK or YCCK): decoded on the CPU";
      return false;
    }
    image.channels = components;
    if (image.width < 1 || image.height < 1 || image.width * image.height > max_pixels) {
      image.error = std::to_string(image.width) + "x" + std::to_string(image.height) + " is over " +
                    std::to_string(max_pixels) + " pixels";
      return false;
    }
    image.row_bytes = image.width * 3;
    return engine;
  }

  // One file on nvJPEG's CUDA decoder into image.data (queued on the stream), or its error.
  void decode_one(std::string_view file, DeviceImage& image) {
    make_cuda();
    nvjpegImage_t target{};
    target.channel[0] = image.data;
    target.pitch[0] = static_cast<unsigned int>(image.row_bytes);
    const nvjpegStatus_t s = nvjpegDecode(cuda, cuda_state, reinterpret_cast<const unsigned char*>(file.data()),
                                          file.size(), NVJPEG_OUTPUT_RGBI, &target, stream);
    if (s != NVJPEG_STATUS_SUCCESS) {
      image.error = status_text(s);
      image.data = nullptr;
    }
  }

  // The files `on_engines` (of `files`, into `out`'s places) in one batch on the engines; where the batch fails
  // whole, each file alone on the CUDA decoder.
  void decode_on_engines(const std::vector<std::string_view>& files, const std::vector<std::size_t>& on_engines,
                         std::vector<DeviceImage>& out) {
    std::vector<const unsigned char*> data;
    std::vector<std::size_t> lengths;
    std::vector<nvjpegImage_t> targets;
    for (const std::size_t i : on_engines) {
      data.push_back(reinterpret_cast<const unsigned char*>(files[i].data()));
      lengths.push_back(files[i].size());
      nvjpegImage_t target{};
      target.channel[0] = out[i].data;
      target.pitch[0] = static_cast<unsigned int>(out[i].row_bytes);
      targets.push_back(target);
      out[i].engine = true;
    }
    const int count = static_cast<int>(data.size());
    nvjpegStatus_t s = NVJPEG_STATUS_SUCCESS;
    if (count != initialized_batch) {  // the engines' state, for this many files
      initialized_batch = 0;
      s = nvjpegDecodeBatchedInitialize(hardware, hardware_state, count, 1, NVJPEG_OUTPUT_RGBI);
      if (s == NVJPEG_STATUS_SUCCESS) initialized_batch = count;
    }
    if (s == NVJPEG_STATUS_SUCCESS) {
      s = nvjpegDecodeBatched(hardware, hardware_state, data.data(), lengths.data(), targets.data(), stream);
    }
    if (s == NVJPEG_STATUS_SUCCESS) return;
    for (const std::size_t i : on_engines) {
      out[i].engine = false;
      decode_one(files[i], out[i]);
    }
  }
};

JpegBatchDecoder::JpegBatchDecoder(int device, int max_batch, std::int64_t max_pixels) {
  if (max_batch < 1) throw Error(ErrorCode::InvalidArgument, "GPU JPEG decoder: a batch of at least 1 file");
  const OnDevice on(device);
  impl_ = std::make_unique<Impl>(std::make_shared<JpegHandles>(device), max_batch, max_pixels);
}

JpegBatchDecoder::JpegBatchDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

JpegBatchDecoder::~JpegBatchDecoder() {
  if (!impl_) return;
  int previous = 0;  // the stream, states and memory go on their device; the caller's stays current
  const bool put_back = cudaGetDevice(&previous) == cudaSuccess;
  cudaSetDevice(impl_->device);
  impl_.reset();
  if (put_back) cudaSetDevice(previous);
}

std::unique_ptr<JpegBatchDecoder> JpegBatchDecoder::sibling() const {
  const OnDevice on(impl_->device);
  return std::unique_ptr<JpegBatchDecoder>(
      new JpegBatchDecoder(std::make_unique<Impl>(impl_->handles, impl_->max_batch, impl_->max_pixels)));
}

int JpegBatchDecoder::device() const { return impl_->device; }

const char* JpegBatchDecoder::engine() const { return impl_->hardware != nullptr ? "hardware" : "cuda"; }

std::vector<DeviceImage> JpegBatchDecoder::decode(const std::vector<std::string_view>& files, void* stream) {
  Impl& d = *impl_;
  if (files.size() > static_cast<std::size_t>(d.max_batch)) {
    throw Error(ErrorCode::InvalidArgument, "GPU JPEG decoder: " + std::to_string(files.size()) +
                                                " files in one batch; at most " + std::to_string(d.max_batch));
  }
  const OnDevice on(d.device);
  std::vector<DeviceImage> out(files.size());
  std::vector<std::size_t> offsets(files.size(), 0);
  std::vector<char> on_engine(files.size(), 0);
  std::size_t total = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    on_engine[i] = d.inspect(files[i], out[i]) ? 1 : 0;
    if (!out[i].error.empty()) continue;
    offsets[i] = total;
    total += aligned_bytes(static_cast<std::size_t>(out[i].row_bytes * out[i].height));
  }
  std::uint8_t* const arena = d.arena.reserve(std::max<std::size_t>(total, 256));
  try {
    std::vector<std::size_t> on_engines;
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (!out[i].error.empty()) continue;
      out[i].data = arena + offsets[i];
      if (on_engine[i]) {
        on_engines.push_back(i);
      } else {
        d.decode_one(files[i], out[i]);
      }
    }
    if (!on_engines.empty()) d.decode_on_engines(files, on_engines, out);
    if (stream != nullptr) {
      d.decoded.join(d.stream, static_cast<cudaStream_t>(stream), "GPU JPEG decoder", "decoding");
    } else {
      d.decoded.wait(d.stream, "GPU JPEG decoder", "decoding");
    }
  } catch (...) {  // nothing of the batch left running (reading the files' bytes) where the caller hears of it
    cudaStreamSynchronize(d.stream);
    throw;
  }
  return out;
}

constexpr const char* kEncoderName = "GPU JPEG encoder";  // in the encoder's messages

// One encoder state an image queued since the last clear() (a state holds its image's file until it is taken), and
// one parameter set a quality and colour kind; all made on first need and kept.
struct JpegBatchEncoder::Impl {
  int device = 0;
  std::shared_ptr<JpegHandles> handles;  // kept alive for `handle`
  nvjpegHandle_t handle = nullptr;
  std::vector<nvjpegEncoderState_t> states;
  std::size_t used = 0;
  std::map<int, nvjpegEncoderParams_t> params;  // by quality * 2 + (gray ? 1 : 0)

  ~Impl() {
    for (nvjpegEncoderState_t state : states) nvjpegEncoderStateDestroy(state);
    for (const auto& p : params) nvjpegEncoderParamsDestroy(p.second);
  }

  nvjpegEncoderParams_t params_for(int quality, bool gray, cudaStream_t stream) {
    const int key = quality * 2 + (gray ? 1 : 0);
    const auto found = params.find(key);
    if (found != params.end()) return found->second;
    nvjpegEncoderParams_t made = nullptr;
    check(nvjpegEncoderParamsCreate(handle, &made, stream), "nvjpegEncoderParamsCreate", kEncoderName);
    try {
      // libjpeg's choices (jpeg_set_defaults, jpeg_set_quality): the standard tables scaled by the quality, baseline
      // Huffman tables, 4:2:0 colour.
      check(nvjpegEncoderParamsSetQuality(made, quality, stream), "nvjpegEncoderParamsSetQuality", kEncoderName);
      check(nvjpegEncoderParamsSetSamplingFactors(made, gray ? NVJPEG_CSS_GRAY : NVJPEG_CSS_420, stream),
            "nvjpegEncoderParamsSetSamplingFactors", kEncoderName);
      check(nvjpegEncoderParamsSetOptimizedHuffman(made, 0, stream), "nvjpegEncoderParamsSetOptimizedHuffman",
            kEncoderName);
    } catch (...) {
      nvjpegEncoderParamsDestroy(made);
      throw;
    }
    params.emplace(key, made);
    return made;
  }
};

JpegBatchEncoder::JpegBatchEncoder(const JpegBatchDecoder& decoder) : impl_(std::make_unique<Impl>()) {
  impl_->device = decoder.impl_->device;
  impl_->handles = decoder.impl_->handles;
  const OnDevice on(impl_->device);
  impl_->handle = impl_->handles->cuda_handle();
}

JpegBatchEncoder::~JpegBatchEncoder() {
  if (!impl_) return;
  int previous = 0;
  const bool put_back = cudaGetDevice(&previous) == cudaSuccess;
  cudaSetDevice(impl_->device);
  impl_.reset();
  if (put_back) cudaSetDevice(previous);
}

std::size_t JpegBatchEncoder::queue(const std::uint8_t* pixels, std::int64_t width, std::int64_t height,
                                    int channels, int quality, void* stream) {
  Impl& e = *impl_;
  if ((channels != 1 && channels != 3) || width < 1 || height < 1 || width > 65535 || height > 65535 ||
      quality < 1 || quality > 100) {
    throw Error(ErrorCode::InvalidArgument,
                std::string(kEncoderName) + ": " + std::to_string(width) + "x" + std::to_string(height) + " with " +
                    std::to_string(channels) + " channels at quality " + std::to_string(quality) +
                    "; 1 or 3 channels, sizes 1 to 65535 and quality 1 to 100 are allowed");
  }
  const auto on_stream = static_cast<cudaStream_t>(stream);
  if (e.used == e.states.size()) {
    nvjpegEncoderState_t state = nullptr;
    check(nvjpegEncoderStateCreate(e.handle, &state, on_stream), "nvjpegEncoderStateCreate", kEncoderName);
    e.states.push_back(state);
  }
  const nvjpegEncoderParams_t params = e.params_for(quality, channels == 1, on_stream);
  nvjpegImage_t source{};
  source.channel[0] = const_cast<unsigned char*>(pixels);  // read only
  source.pitch[0] = static_cast<unsigned int>(width * channels);
  const nvjpegEncoderState_t state = e.states[e.used];
  if (channels == 3) {
    check(nvjpegEncodeImage(e.handle, state, params, &source, NVJPEG_INPUT_RGBI, static_cast<int>(width),
                            static_cast<int>(height), on_stream),
          "nvjpegEncodeImage", kEncoderName);
  } else {
    check(nvjpegEncodeYUV(e.handle, state, params, &source, NVJPEG_CSS_GRAY, static_cast<int>(width),
                          static_cast<int>(height), on_stream),
          "nvjpegEncodeYUV", kEncoderName);
  }
  return e.used++;
}

std::string JpegBatchEncoder::take(std::size_t index, void* stream) {
  Impl& e = *impl_;
  if (index >= e.used) {
    throw Error(ErrorCode::InvalidArgument, std::string(kEncoderName) + ": no image " + std::to_string(index));
  }
  const auto on_stream = static_cast<cudaStream_t>(stream);
  std::size_t length = 0;
  check(nvjpegEncodeRetrieveBitstream(e.handle, e.states[index], nullptr, &length, on_stream),
        "nvjpegEncodeRetrieveBitstream", kEncoderName);
  std::string file(length, '\0');
  check(nvjpegEncodeRetrieveBitstream(e.handle, e.states[index], reinterpret_cast<unsigned char*>(file.data()),
                                      &length, on_stream),
        "nvjpegEncodeRetrieveBitstream", kEncoderName);
  file.resize(length);
  return file;
}

void JpegBatchEncoder::clear() { impl_->used = 0; }

}  // namespace rsz::io::gpu
