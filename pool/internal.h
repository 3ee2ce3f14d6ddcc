// Pieces shared by the pool's queues: access to a Task's intrusive fields, the live tunables,
// per-worker and per-queue statistics, the CPU pause. Internal to pool/; include
// pool/worker_pool.h instead.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "config/histogram.h"
#include "pool/mlfq.h"
#include "pool/thread_cpu.h"
#include "pool/worker_pool.h"

namespace rockcache::pool::internal {

// The spin-wait hint: x86 PAUSE (~10 cycles before Skylake, ~140 after) tells the core not to
// speculate past the loop and to give the sibling hyper-thread the pipeline; ARM YIELD is the
// equivalent hint. Elsewhere only a compiler barrier.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// steady_clock in nanoseconds (a vDSO call, ~20 ns).
inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class TaskAccess {
 public:
  static Task*& Next(Task* t) { return t->next_; }
  static int64_t& EnqueueNs(Task* t) { return t->enqueue_ns_; }
  static uint64_t Client(const Task* t) { return t->client_; }
  static int Level(const Task* t) { return t->level_; }
  static int64_t Elapsed(const Task* t) { return t->elapsed_ns_; }
  static void CancelAndDelete(Task* t) {
    t->Cancel();
    delete t;
  }
};

// A counter with a single writer and any number of readers: a relaxed load + store, no locked
// instruction on the writer's path.
class Counter {
 public:
  void Add(uint64_t n) {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  uint64_t Load() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// The CONFIG SET-able knobs. Relaxed atomics: a change reaches each reader on its next load.
struct Tunables {
  std::atomic<int> spin_count{0};
  std::atomic<int> max_yield_usec{0};
  std::atomic<int> slow_yield_usec{0};
  std::atomic<int> max_slow_yields{1};
  std::atomic<int> yield_sampling{1};
  std::atomic<int> queue_slow_size{0};
  std::atomic<int> queue_max_size{1};
  std::atomic<bool> mlfq{true};
  std::atomic<bool> heavy_lane{true};

  explicit Tunables(const Options& o) { Set(o); }
  void Set(const Options& o) {
    auto put = [](std::atomic<int>& a, int v, int lo) {
      a.store(std::max(v, lo), std::memory_order_relaxed);
    };
    put(spin_count, o.spin_count, 0);
    put(max_yield_usec, o.max_yield_usec, 0);
    put(slow_yield_usec, o.slow_yield_usec, 0);
    put(max_slow_yields, o.max_slow_yields, 1);
    put(yield_sampling, o.yield_sampling, 1);
    put(queue_slow_size, o.queue_slow_size, 0);
    put(queue_max_size, o.queue_max_size, 1);
    mlfq.store(o.mlfq, std::memory_order_relaxed);
    heavy_lane.store(o.heavy_lane, std::memory_order_relaxed);
  }
};

// The task running on this worker thread: its start and the elapsed time it carried
// (WorkerPool::RunningTaskElapsedNs). start_ns 0: none.
struct RunningTask {
  int64_t start_ns = 0;
  int64_t carried_ns = 0;
};
inline thread_local RunningTask tls_running_task;

// Everything one worker counts, on its own cache lines; GetStats merges them.
struct alignas(64) WorkerStats {
  // Fixed-point yield credit (see pool/task_list.cc); |credit| <= kCreditMax.
  static constexpr int64_t kCreditStep = int64_t{1} << 17;
  static constexpr int64_t kCreditMax = kCreditStep << 10;

  explicit WorkerStats(int index) : rng(0x9E3779B97F4A7C15ull * (index + 1)) {}

  Counter tasks_run;
  Counter wakeups_spin;
  Counter wakeups_yield;
  Counter wakeups_block;
  std::atomic<int64_t> yield_credit{0};  // written by the worker only
  Histogram queue_wait[kLevels];         // Submit -> taken by a worker, per level
  Histogram exec[kLevels];               // Run, per level
  uint64_t rng;                          // worker-only xorshift state for the 1-in-N sampling

  // True with probability 1/n. Worker thread only.
  bool OneIn(int n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n <= 1 || rng % static_cast<uint64_t>(n) == 0;
  }

  // Runs and deletes every task of an oldest-first chain of `level`, recording each one's queue
  // wait and run time (one clock read per task: a task's end is the next one's start). A task
  // with a client is charged its run time on the CPU (ThreadCpu) to `clients` (when non-null). A
  // level-0 chain tells `sched` (when non-null) that level 0 is active; a `chosen` one (taken
  // through ShareScheduler::Choose) reports its span and its time on the CPU with Finished.
  // Returns the end time.
  int64_t RunChain(Task* chain, int level, ClientTable* clients, ShareScheduler* sched,
                   bool chosen) {
    const int64_t begin = NowNs();
    if (sched != nullptr && level == 0) sched->NoteLevel0(begin);
    int64_t start = begin;
    while (chain != nullptr) {
      Task* next = TaskAccess::Next(chain);
      queue_wait[level].Record(
          static_cast<uint64_t>(std::max<int64_t>(0, start - TaskAccess::EnqueueNs(chain))));
      const int64_t carried = TaskAccess::Elapsed(chain);
      tls_running_task = RunningTask{start, carried};
      ThreadCpu::MarkStart(start);
      chain->Run();
      tls_running_task = RunningTask{};
      const int64_t end = NowNs();
      exec[level].Record(static_cast<uint64_t>(std::max<int64_t>(0, end - start)));
      const uint64_t client = TaskAccess::Client(chain);
      if (client != 0 && clients != nullptr) {
        clients->Charge(client, carried + ThreadCpu::Spent(start, end), end);
      }
      delete chain;
      tasks_run.Add(1);
      chain = next;
      start = end;
    }
    if (sched != nullptr && chosen) {
      sched->Finished(level, begin, start, ThreadCpu::Spent(begin, start));
    }
    return start;
  }
};

// Producer-side counters of one queue. Several writers (relaxed RMW), but they move only when a
// producer is slowed down or a list reaches a new depth.
struct alignas(64) QueueCounters {
  std::atomic<uint64_t> producer_yields{0};
  std::atomic<uint64_t> producer_waits{0};
  std::atomic<int64_t> depth_high_water{0};

  void NoteDepth(int64_t depth) {
    int64_t hw = depth_high_water.load(std::memory_order_relaxed);
    while (depth > hw &&
           !depth_high_water.compare_exchange_weak(hw, depth, std::memory_order_relaxed)) {
    }
  }
};

// Monotonic counters summed over workers and queues; ResetStats keeps one as the baseline.
struct RawStats {
  uint64_t tasks_run = 0, wakeups_spin = 0, wakeups_yield = 0, wakeups_block = 0;
  uint64_t producer_yields = 0, producer_waits = 0;
  Histogram::Data queue_wait[kLevels];
  Histogram::Data exec[kLevels];
  uint64_t given_ns[kLevels] = {};
  uint64_t demotions = 0, promotions = 0;
};

}  // namespace rockcache::pool::internal
