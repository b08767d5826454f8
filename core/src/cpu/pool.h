// rsz's one threading runtime: a pool of worker threads of the project's own, behind parallel_for (parallel.h) and
// rsz::parallel_tasks (exec.h).
//
// What it guarantees, and why it is not OpenMP:
// - It survives fork(). A child process starts with no workers and an empty pool; its first parallel call starts
//   workers of its own (libgomp's team is left waiting forever on threads that do not exist in the child: a torch
//   DataLoader worker forked after its parent called rsz hung for good).
// - Idle workers do not spin for long: a worker that finds no work spins for kSpinMicroseconds, then sleeps on a
//   condition variable until work arrives (OpenMP's default spin of ~300,000 rounds took a busy machine's cores
//   from the thread doing the work: a small call took 12x its one-thread time).
// - The calling thread always works on its own call, and a task is run by the thread that claims it, so a call
//   finishes even when no worker ever comes to help: calls may nest (the command line spreads its inputs over the
//   pool and each input's kernels open a call of their own) and may come from many threads at once.
// - Tasks are claimed one at a time in index order by whichever thread is free: the split of the work into tasks is
//   fixed by the caller, never by the threads, so results are bit-identical for any thread count.
#pragma once

#include <cstdint>

namespace rsz::cpu {

// How long a worker with nothing to do keeps looking for work before it sleeps.
constexpr int kSpinMicroseconds = 50;

// Runs task(context, i) for every i in [0, tasks) on the calling thread and up to threads - 1 of the pool's
// workers, and returns when every task has returned. A task that throws stops the tasks not yet claimed; the first
// exception is rethrown here once the claimed ones have returned.
void run_tasks(std::int64_t tasks, int threads, void (*task)(void* context, std::int64_t index), void* context);

// Worker threads the pool of this process has started (for tests: 0 in a child forked after its parent used the
// pool, until the child makes a parallel call).
int pool_workers();

}  // namespace rsz::cpu
