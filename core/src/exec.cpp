#include "rsz/exec.h"

namespace rsz {

const char* to_string(Backend backend) {
  switch (backend) {
    case Backend::Auto: return "auto";
    case Backend::Reference: return "reference";
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
  }
  return "unknown";
}

}  // namespace rsz
