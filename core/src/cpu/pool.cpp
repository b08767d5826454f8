#include "cpu/pool.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "rsz/exec.h"

namespace rsz::cpu {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Calls `done()` between pauses for up to kSpinMicroseconds; whether it returned true (the clock is read every 64
// rounds). The short spin of both waits of the pool, before they sleep.
template <typename Done>
bool spin_for(const Done& done) {
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0;; ++round) {
    if (done()) return true;
    if (round % 64 == 63 && std::chrono::steady_clock::now() - start > std::chrono::microseconds(kSpinMicroseconds)) {
      return false;
    }
    cpu_relax();
  }
}

// One call of run_tasks: its tasks, claimed by index, and the threads inside it.
struct Call {
  std::int64_t tasks = 0;
  void (*task)(void*, std::int64_t) = nullptr;
  void* context = nullptr;
  std::atomic<std::int64_t> next{0};
  int helpers_wanted = 0;          // workers that may still join (under the pool's mutex)
  std::atomic<int> helpers_in{0};  // workers inside (joined under the pool's mutex; leaving is their last access)
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;

  // Claims and runs tasks until none is left (or one failed).
  void work() {
    while (!failed.load(std::memory_order_relaxed)) {
      const std::int64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= tasks) return;
      try {
        task(context, i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
  }
};

class Pool {
 public:
  void run(Call& call, int helpers) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      call.helpers_wanted = helpers;
      queue_.push_back(&call);
      open_.fetch_add(helpers, std::memory_order_release);
      // Enough workers for this call besides those busy with others (nested calls add to the running ones).
      const int free_workers = workers_ - busy_.load(std::memory_order_relaxed);
      for (int k = free_workers; k < helpers && workers_ < kMaxWorkers; ++k) start_worker();
      for (int k = 0; k < std::min(helpers, sleeping_); ++k) work_cv_.notify_one();
    }
    call.work();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      withdraw(call);
    }
    // The workers inside finish the tasks they claimed: a short spin, then sleep (the last one to leave wakes us).
    const auto left = [&] { return call.helpers_in.load(std::memory_order_acquire) == 0; };
    if (!spin_for(left)) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_cv_.wait(lock, left);
    }
  }

  int workers() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return workers_;
  }

 private:
  static constexpr int kMaxWorkers = kMaxThreads * 4;  // nested calls of kMaxThreads each stay far below

  // Takes `call` off the queue (under mutex_): no worker joins it any more.
  void withdraw(Call& call) {
    const auto it = std::find(queue_.begin(), queue_.end(), &call);
    if (it == queue_.end()) return;
    open_.fetch_sub(call.helpers_wanted, std::memory_order_relaxed);
    call.helpers_wanted = 0;
    queue_.erase(it);
  }

  void start_worker() {  // under mutex_
    // Workers leave the asynchronous signals to the program's other threads (its handlers run there, as they did
    // before any worker existed); a worker inherits the mask of the thread that creates it.
    sigset_t block;
    sigset_t old;
    sigemptyset(&block);
    for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD}) sigaddset(&block, s);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    try {
      std::thread([this] { worker(); }).detach();
      ++workers_;
    } catch (const std::system_error&) {  // no thread to be had: the callers do the work themselves
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }

  // Joins the oldest call that takes helpers (under mutex_); nullptr when none does.
  Call* join() {
    if (queue_.empty()) return nullptr;
    Call* call = queue_.front();
    open_.fetch_sub(1, std::memory_order_relaxed);
    if (--call->helpers_wanted == 0) queue_.erase(queue_.begin());
    call->helpers_in.fetch_add(1, std::memory_order_relaxed);
    busy_.fetch_add(1, std::memory_order_relaxed);
    return call;
  }

  // Waits for a call that takes a helper and joins it. For kSpinMicroseconds it watches the count of open places
  // without the lock, and takes the lock only with try_lock while places are open (so that the idle workers of a wide
  // pool do not queue up on the mutex for a call that wants a few of them); then it sleeps until woken.
  Call* next_call() {
    Call* joined = nullptr;
    if (spin_for([&] {
          if (open_.load(std::memory_order_acquire) <= 0 || !mutex_.try_lock()) return false;
          joined = join();
          mutex_.unlock();
          return joined != nullptr;
        })) {
      return joined;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (Call* call = join()) return call;
      ++sleeping_;
      work_cv_.wait(lock);
      --sleeping_;
    }
  }

  void worker() {
    for (;;) {
      Call* call = next_call();
      call->work();
      busy_.fetch_sub(1, std::memory_order_relaxed);
      // The last access to `call`: its caller may return (and free it) as soon as this is 0. The caller sleeps on
      // done_cv_ under the mutex, checking the count: a notify under the mutex cannot come between its check and
      // its wait.
      if (call->helpers_in.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        const std::lock_guard<std::mutex> lock(mutex_);
        done_cv_.notify_all();
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::vector<Call*> queue_;      // calls that still take helpers, oldest first
  std::atomic<int> open_{0};      // places for helpers over the queued calls (sum of their helpers_wanted)
  std::atomic<int> busy_{0};      // workers inside a call
  int workers_ = 0;
  int sleeping_ = 0;
};

// The process's pool. A child process forked while the parent had workers has none of them; it leaves the parent's
// pool as it is (its mutex may have been held by a thread that does not exist here) and starts a new one.
std::atomic<Pool*> g_pool{nullptr};

void forget_pool_in_child() { g_pool.store(nullptr, std::memory_order_relaxed); }

Pool& pool() {
  Pool* p = g_pool.load(std::memory_order_acquire);
  if (p != nullptr) return *p;
  static const int registered = pthread_atfork(nullptr, nullptr, forget_pool_in_child);
  (void)registered;
  auto* fresh = new Pool();  // never deleted: detached workers use it until the process ends
  if (g_pool.compare_exchange_strong(p, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;
  return *p;
}

}  // namespace

void run_tasks(std::int64_t tasks, int threads, void (*task)(void*, std::int64_t), void* context) {
  if (tasks <= 0) return;
  Call call;
  call.tasks = tasks;
  call.task = task;
  call.context = context;
  const int helpers = static_cast<int>(std::min<std::int64_t>(std::max(threads, 1), tasks)) - 1;
  if (helpers <= 0) {
    call.work();
  } else {
    pool().run(call, helpers);
  }
  if (call.error) std::rethrow_exception(call.error);
}

int pool_workers() {
  Pool* p = g_pool.load(std::memory_order_acquire);
  return p != nullptr ? p->workers() : 0;
}

}  // namespace rsz::cpu
