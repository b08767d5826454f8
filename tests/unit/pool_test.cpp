// rsz's threading runtime (core/src/cpu/pool.h) through its public face, rsz::parallel_tasks, and through the
// operators: every task once, nested calls, calls from many threads, exceptions, idle workers that sleep, and a
// child process forked after its parent used the pool.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <thread>
#include <vector>

#include "rsz/exec.h"
#include "rsz/resample.h"
#include "support/test_util.h"

namespace rsz {
namespace {

TEST(Pool, EveryTaskRunsOnceForAnyThreadCount) {
  for (const int threads : {0, 1, 2, 3, 8, 33}) {
    for (const std::int64_t count : {0, 1, 2, 7, 100, 1000}) {
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(count));
      parallel_tasks(count, threads, [&](std::int64_t i) { runs[static_cast<std::size_t>(i)].fetch_add(1); });
      for (std::int64_t i = 0; i < count; ++i) {
        ASSERT_EQ(runs[static_cast<std::size_t>(i)].load(), 1) << "threads " << threads << ", task " << i;
      }
    }
  }
}

TEST(Pool, NestedCallsFromManyThreadsFinish) {
  // 4 caller threads, each 6 outer tasks on 3 threads, each of those 50 inner tasks on 4 threads.
  std::atomic<std::int64_t> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      parallel_tasks(6, 3, [&](std::int64_t outer) {
        parallel_tasks(50, 4, [&](std::int64_t inner) { sum.fetch_add(outer * 100 + inner); });
      });
    });
  }
  for (auto& t : callers) t.join();
  // Per caller: sum over outer of (50 * 100 * outer + 0 + ... + 49) = 5000 * 15 + 6 * 1225.
  EXPECT_EQ(sum.load(), 4 * (5000 * 15 + 6 * 1225));
}

TEST(Pool, TheFirstExceptionIsRethrownAndLaterTasksAreSkipped) {
  // One thread claims in order: the tasks after the failing one never start.
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_tasks(1000, 1, [&](std::int64_t i) {
                 ran.fetch_add(1);
                 if (i == 10) throw std::runtime_error("task 10 failed");
               }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 11);
  // Several threads: the exception comes back whichever thread ran the task (how many others started meanwhile
  // depends on the scheduler).
  for (int round = 0; round < 20; ++round) {
    try {
      parallel_tasks(1000, 4, [&](std::int64_t i) {
        if (i == 10 + round) throw std::runtime_error("task failed");
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "task failed");
    }
  }
  // The pool still works after failed calls.
  std::atomic<int> after{0};
  parallel_tasks(64, 4, [&](std::int64_t) { after.fetch_add(1); });
  EXPECT_EQ(after.load(), 64);
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

TEST(Pool, IdleWorkersSleep) {
  // 8 workers started; 200 ms later the process has used far less CPU time than 8 spinning threads would (1.6 s).
  parallel_tasks(64, 9, [](std::int64_t) { std::this_thread::sleep_for(std::chrono::microseconds(200)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_LT(process_cpu_seconds() - before, 0.1);
}

// A 2 x 3 x 150 x 170 resample to 0.37 of its size on `threads` threads.
Tensor resample_on(int threads) {
  const Tensor x = test::random_f32({2, 3, 150, 170}, 7);
  ResampleParams params;
  params.antialiased = true;
  params.scales = {1.0f, 1.0f, 0.37f, 0.37f};
  Tensor y(DataType::Float32, resample_output_sizes(x.sizes(), params.scales));
  ExecOptions exec;
  exec.backend = Backend::Cpu;
  exec.num_threads = threads;
  resample(x.view(), y.view(), params, exec);
  return y;
}

TEST(Pool, AChildForkedAfterItsParentUsedThePoolRunsOnManyThreads) {
#if defined(RSZ_TEST_EMULATED)
  // qemu-user aborts a forked child of a threaded process that starts threads (its own assertion, "cpu ==
  // current_cpu"), whatever the program: natively the test runs.
  GTEST_SKIP() << "qemu-user cannot start threads in a forked child of a threaded process";
#endif
  const Tensor expected = resample_on(1);
  const Tensor parent = resample_on(4);  // the parent's workers exist now
  ASSERT_EQ(std::memcmp(parent.data(), expected.data(), expected.byte_size()), 0);
  for (int round = 0; round < 3; ++round) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::atomic<int> runs{0};
      parallel_tasks(200, 4, [&](std::int64_t) { runs.fetch_add(1); });
      const Tensor child = resample_on(4);
      const bool same = std::memcmp(child.data(), expected.data(), expected.byte_size()) == 0;
      ::_exit(runs.load() == 200 && same ? 0 : 3);
    }
    // The child has 60 s; a child that waits forever (libgomp's team did) is killed and fails the test.
    int raw = 0;
    pid_t done = 0;
    for (int waited = 0; waited < 6000 && done == 0; ++waited) {
      done = ::waitpid(pid, &raw, WNOHANG);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (done == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &raw, 0);
      FAIL() << "the forked child hung (round " << round << ")";
    }
    ASSERT_TRUE(WIFEXITED(raw));
    EXPECT_EQ(WEXITSTATUS(raw), 0) << "round " << round;
    // The parent's pool is still its own.
    const Tensor again = resample_on(4);
    EXPECT_EQ(std::memcmp(again.data(), expected.data(), expected.byte_size()), 0);
  }
}

}  // namespace
}  // namespace rsz
