// How an operator call is executed.
//
// Results never depend on these settings: every backend computes the same values (nearest results bit-identical,
// linear results within the tolerances of SEMANTICS.md §5), and a backend's results are bit-identical for any
// thread count. All operators are thread-safe: concurrent calls are fine as long as their outputs do not overlap.
#pragma once

namespace rsz {

enum class Backend {
  Auto,       // the fastest backend available for the call (today: Cpu)
  Reference,  // the naive twins: one output element at a time, no tables, threads or SIMD; the oracle
  Cpu,        // tables, separable passes, threads; bit-identical to Reference
};

const char* to_string(Backend backend);

struct ExecOptions {
  Backend backend = Backend::Auto;
  // Worker threads for backends that use them (Cpu); 0 means all hardware threads. Ignored by Reference.
  int num_threads = 0;
};

}  // namespace rsz
