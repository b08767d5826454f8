// The CPU backend's ROI_ALIGN tables, shared by roi_align_cpu.cpp and the vector kernels of every instruction set
// (roi_align_kernels.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace rsz::cpu {

// A run of table entries in the call's one table allocation (roi_align_cpu.cpp, TableArena): the tables of a
// thousand ROIs are eight thousand small arrays, and allocating and freeing them one by one on 16 threads took
// as long as everything else the call did before pooling (the allocator's locks), so they are carved from one block.
template <typename T>
struct TableRun {
  T* begin = nullptr;
  T* data() const { return begin; }
  T& operator[](std::size_t i) const { return begin[i]; }
};

// One axis of one ROI: the entries of its out_size * samples sample positions.
struct RoiAxisTable {
  std::uint32_t samples = 1;
  TableRun<std::int64_t> t0;       // first tap, as an offset (roi_align_cpu.cpp, make_axis)
  TableRun<std::int64_t> t1;       // second tap
  TableRun<float> w;               // weight of the second tap; 0 for nearest
  TableRun<unsigned char> inside;  // the coordinate is within [-1, size]
  bool all_inside = true;
  std::int64_t lo = 0;  // smallest and largest tap index
  std::int64_t hi = 0;
};

// Where the plane path's fold of one pass over the output columns goes: into the accumulators, or, on the last
// pass of an output row, finished (an average divided by the sample count) into the row's result.
struct PlaneFold {
  bool average;
  bool first;  // the first sample of every output in the row: the reduction starts here
  bool last;   // the last sample: the result goes to `out`
  float count;
  float* acc;
  float* out;
};

}  // namespace rsz::cpu
