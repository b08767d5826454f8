#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "rsz/exec.h"
#include "rsz/io/formats.h"

namespace rsz::app {
namespace {

const char* channel_names(int channels) {
  switch (channels) {
    case 1: return "gray";
    case 2: return "gray+alpha";
    case 3: return "RGB";
    case 4: return "RGBA";
  }
  return "?";
}

}  // namespace

void setup_info(CLI::App& app, InfoOptions& o) {
  CLI::App* cmd = app.add_subcommand("info", "Show size, channels and bit depth of images, dtype and shape of .npy");
  cmd->add_option("files", o.inputs, "Images or .npy files, folders or quoted globs");
  cmd->add_flag("--backends", o.backends,
                "List the kernel backends of this build: whether each can run here, on what memory, and how many "
                "devices (a GPU backend: the GPUs --device all takes)");
  cmd->add_flag("-r,--recursive", o.recursive, "Descend into sub-folders of folders");
  cmd->add_flag("--json", o.json, "One JSON object per file on stdout");
  cmd->add_flag("--no-exif", o.no_exif, "Report the stored size, not the EXIF-upright one");
  cmd->footer(
      "Examples:\n  rsz info photo.jpg\n  rsz info --json samples/photos features.npy\n  rsz info 'photos/*.jpg'\n"
      "  rsz info --backends");
}

int run_info(const InfoOptions& o) {
  if (o.backends) {
    for (const BackendInfo& b : rsz::backends()) {
      nlohmann::json record{{"backend", to_string(b.backend)},
                            {"memory", to_string(b.memory)},
                            {"available", b.available},
                            {"devices", b.devices},
                            {"note", b.note}};
      // A GPU backend says how many GPUs it sees: what --device all takes.
      const std::string gpus = b.memory == MemorySpace::Device && b.available
                                   ? "; " + std::to_string(b.devices) + (b.devices == 1 ? " GPU" : " GPUs") +
                                         " (--device all)"
                                   : std::string();
      to_stdout((o.json ? record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                        : std::string(to_string(b.backend)) + ": " + (b.available ? "available" : "not available") +
                              ", " + to_string(b.memory) + " memory" + gpus + (b.note.empty() ? "" : "; " + b.note)) +
                "\n");
    }
    if (o.inputs.empty()) return kExitOk;
  } else if (o.inputs.empty()) {
    usage_error("info: give files, folders or globs to describe, or --backends");
  }
  int status = kExitOk;
  for (const std::string& path : expand_inputs(o.inputs, o.recursive)) {
    try {
      nlohmann::json record{{"path", path}};
      std::string text;
      if (const io::TensorFormat* format = io::find_tensor_format(path)) {
        const io::TensorInfo t = format->probe(path);  // the header alone: the data is checked, not read
        record["kind"] = "tensor";
        record["dtype"] = to_string(t.dtype);
        record["shape"] = t.sizes;
        text = std::string("tensor ") + to_string(t.dtype) + " " + dims_to_string(t.sizes);
      } else {
        io::ImageReadOptions options;
        options.apply_exif_orientation = !o.no_exif;
        const io::ImageInfo info = io::read_image_info(path, options);
        record["kind"] = "image";
        record["format"] = info.format;
        record["width"] = info.width;
        record["height"] = info.height;
        record["channels"] = info.channels;
        record["bit_depth"] = info.bit_depth;
        text = info.format + " " + std::to_string(info.width) + "x" + std::to_string(info.height) + ", " +
               std::to_string(info.channels) + " channel" + (info.channels == 1 ? "" : "s") + " (" +
               channel_names(info.channels) + "), " + std::to_string(info.bit_depth) + "-bit";
        if (info.animated) {  // only where it is one: the records of other images keep their keys
          record["animated"] = true;
          text += ", animated (the first frame is read)";
        }
      }
      to_stdout((o.json ? record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                        : printable(path) + ": " + text) +
                "\n");
    } catch (const std::exception& e) {
      const std::string message = for_cli(e.what());
      to_stderr("rsz: " + printable(message.rfind(path, 0) == 0 ? message : path + ": " + message) + "\n");
      status = kExitFailed;
    }
  }
  return status;
}

}  // namespace rsz::app
