// WorkerPool: the threads that run rockcache's commands and housekeeping, fed by any thread.
//
// A Task is an intrusive unit of work: subclass it, hand it to Submit() (run as soon as a worker
// is free) or ScheduleAt() (run at or after a time point), and the pool owns it from then on. It
// deletes the task after calling exactly one of Run() (on a worker) or Cancel() (when the pool
// cannot run it), so the task's owner always gets an answer. Submit allocates nothing beyond the
// task itself: the task carries its own list link and enqueue timestamp.
//
// Two modes, same API and Stats, so benchmarks can compare them side by side:
//  * Mode::kAdaptive (default). ceil(threads / workers_per_list) lock-free multi-producer lists;
//    `workers_per_list` workers share each list. A producer links its task at the list head with
//    one compare-and-swap (seq_cst; release publishes the task's fields). A worker takes the
//    whole stack at once with one exchange (acquire), reverses it onto the list's backlog and
//    runs the backlog's oldest task; list-mates take the next ones (one task at a time). An
//    idle worker spins, then yields, then blocks on the list's condition variable (the three
//    phases and their numbers are explained in pool/task_list.cc). A push never gets lost by a
//    worker about to block: the worker increments the list's sleeper count and re-checks the
//    list under the list mutex before waiting; the producer reads the sleeper count after its
//    push and, if non-zero and no list-mate is spinning, takes that mutex and notifies. Both
//    sides use seq_cst operations, so at least one of them sees the other (pool/task_list.h). An
//    idle pool has every worker blocked: ~0% CPU.
//  * Mode::kClassic. One std::deque behind one mutex and condition variable shared by all
//    workers; a producer pushes and notify_one()s, a worker pops one task per lock. Kept as the
//    "before" of the adaptive design; every wake-up is a "block" wake-up.
//
// Ordering: with one worker per list (workers_per_list == 1, or threads == 1), tasks submitted
// with the same non-zero hint (or, in classic mode with threads == 1, all tasks) run in the order
// their Submit calls were linked in: one producer's tasks run in its submission order. When
// several workers share a list, each takes the oldest waiting task, so tasks of one list run
// concurrently, started in push order; a task never waits behind another one while a list-mate
// is free (pool/task_list.h: the backlog). Across lists there is no stealing
// (docs/work-stealing.md).
//
// Backpressure: each list keeps an approximate depth (incremented before the push, decremented
// when a worker takes the task). A producer that finds its list deeper than queue_slow_size
// yields once; one that finds it at queue_max_size waits until a worker drains it below that.
// Producers racing past the check may overshoot queue_max_size by one task each (so by at most
// the number of concurrent producers); Submit calls from the pool's own worker threads and from
// its timer never wait (a worker waiting on its own list could deadlock) and may overshoot too.
//
// Shutdown runs, it does not drop: every task whose Submit returned before Shutdown() was called
// is run. The timer's pending delayed tasks are Cancel()ed. A Submit racing with Shutdown is
// either run or Cancel()ed; a Submit or ScheduleAt that sees the pool stopped calls Cancel()
// inline on the caller's thread. Tasks a worker submits while the pool drains are Cancel()ed
// inline, so a task that resubmits itself cannot keep Shutdown from finishing.
//
// Multi-level feedback queue (adaptive mode, Options::mlfq; pool/mlfq.h has the whole rule).
// Every task has a level, 0 (small) to 2 (big). Level 0 is what the lists above carry, at the
// same cost as without the MLFQ while no level 1-2 task exists. A task's level is, in order:
// the one set with Task::set_level; else its client's (Task::set_client), from the execution
// time that client consumed recently, decayed (ClientLevel); else 0. Levels 1 and 2 wait in two
// FIFO queues shared by all lists; while small and big work are both waiting, an idle worker
// takes big work only while it has had less than (100 - small_share)% of the contended time, and
// at most max(1, round(threads x (100 - small_share) / 100)) workers run big work at once while
// small work is around. With the MLFQ off (Options::mlfq false, SetTunables) every Submit goes
// to level 0; tasks already queued at levels 1-2 still run. Classic mode ignores levels.
//
// The heavy lane (Options::heavy_lane, on by default; adaptive mode with the MLFQ). Levels 1-2
// run on threads of their own, as many as the workers, which run at the OS's idle priority
// (Linux SCHED_IDLE, set once per thread, so no privilege is needed) and take nothing else; the
// workers then take level 0 only. The shares above still bound big work from above; the kernel
// adds that a big slice never holds a core a small request's thread wakes up for: it is
// preempted at once. On a machine whose cores the small requests' chain (client, network
// thread, worker) keeps nearly busy, that is what keeps big work from costing them throughput
// (scripts/mlfq-bench.sh). The price: big work gets only what the normal threads leave (3/1024 of
// a contended core at worst), so under a load that saturates every core it slows to a crawl,
// though it never stops. Off (CONFIG SET pool-heavy-lane no), the workers run levels 1-2 too,
// at normal priority, and the lane's threads sleep.
//
// The API for work done for a client (a connection id), e.g. the resumable slices of a heavy
// command, each a Task submitted from the worker running the slice before it:
//   auto next = std::make_unique<MySlice>(...);
//   next->set_client(conn_id);                                   // the client's level, charged
//   next->set_elapsed_ns(WorkerPool::RunningTaskElapsedNs());    // the command's time so far
//   pool->Submit(std::move(next), conn_id);
// The pool queues the slice at the higher of its client's level and the level of the command's
// time so far (pool/mlfq.h: 5 ms -> level 1, 100 ms -> level 2), measures its Run and reports
// elapsed + run to the client's record (ClientTable), so a big command sinks slice by slice and
// its client's next command starts at that level too; nobody else's level moves. A task that
// works for several clients at once (a network loop's group of batches) leaves client 0, picks
// its level with set_level(ClientLevel(...)) and reports each client's part itself with Charge().
// Order: tasks of one hint keep their submission order only among tasks of the same level.
//
// Threads: Submit, ScheduleAt, GetStats, SetTunables, mode, ClientLevel, Charge, ForgetClient
// and ResetStats may be called from any thread, including the pool's workers, concurrently.
// Shutdown (and the destructor) from any thread except the pool's own workers. Task::Run and
// Task::Cancel must not throw.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "config/mutex.h"

namespace rockcache::pool {

namespace internal {
class TaskAccess;
class TaskList;
class ClassicQueue;
class TimerQueue;
class ClientTable;
class ShareScheduler;
struct Tunables;
struct WorkerStats;
struct RawStats;
}  // namespace internal

// Intrusive unit of work. Subclass it. The pool owns a submitted task and deletes it after Run or
// Cancel.
class Task {
 public:
  Task() = default;
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  virtual ~Task() = default;

  // On a worker thread. Must not throw.
  virtual void Run() = 0;

  // Instead of Run, when the pool cannot run the task: a delayed task still pending at Shutdown
  // (on the Shutdown caller's thread), a Submit/ScheduleAt after Shutdown began (inline, on the
  // caller's thread), a task linked while Shutdown closed the lists. The owner must still get an
  // answer. Must not throw.
  virtual void Cancel() {}

  // The client (connection id, non-zero) this task works for: before Submit, so the pool queues
  // it at the client's level and charges its Run time to the client. 0 (the default): none.
  void set_client(uint64_t client) { client_ = client; }
  uint64_t client() const { return client_; }
  // Forces the level (0..2, clamped) whatever the client's; -1 (the default) = from the client.
  // Before Submit.
  void set_level(int level) { level_ = level < 0 ? -1 : (level > 2 ? 2 : level); }
  int level() const { return level_; }
  // Execution time the work this task continues has taken already (earlier slices of one
  // command), in ns: raises the task's level (see the top of this file) and is added to this
  // run when the client is charged. Before Submit.
  void set_elapsed_ns(int64_t ns) { elapsed_ns_ = ns < 0 ? 0 : ns; }
  int64_t elapsed_ns() const { return elapsed_ns_; }

 private:
  friend class internal::TaskAccess;
  Task* next_ = nullptr;    // intrusive list link, owned by the pool while queued
  int64_t enqueue_ns_ = 0;  // steady_clock nanoseconds at Submit, for the queue-wait histogram
  uint64_t client_ = 0;
  int level_ = -1;
  int64_t elapsed_ns_ = 0;
};

enum class Mode { kAdaptive, kClassic };

// Create() clamps out-of-range values to the nearest valid one (noted per field).
struct Options {
  Mode mode = Mode::kAdaptive;
  // pool-threads: worker threads (>= 1).
  int threads = 4;
  // Workers sharing one lock-free list (adaptive; clamped to [1, threads]). More sharing means a
  // spinning list-mate more often catches a push before anyone blocks, but more CAS contention.
  int workers_per_list = 2;
  // pool-spin-count: pause-instruction spins before yielding (>= 0). 200 ≈ 1-8 µs of one core.
  int spin_count = 200;
  // pool-max-yield-usec: longest yield phase (>= 0; 0 skips it). Longer catches slower producers
  // without a futex wake, at the price of CPU burnt by idle workers.
  int max_yield_usec = 100;
  // pool-slow-yield-usec: a yield taking at least this long means another thread got the core.
  int slow_yield_usec = 3;
  // pool-max-slow-yields: that many slow yields end the yield phase early (>= 1).
  int max_slow_yields = 3;
  // pool-yield-sampling: 1-in-N waits try the yield phase even when its credit is negative, and
  // update the credit (>= 1). Smaller adapts faster but makes more futile yields.
  int yield_sampling = 256;
  // pool-queue-slow-size: a producer yields once when its list holds more tasks (>= 0).
  int queue_slow_size = 100;
  // pool-queue-max-size: a producer waits while its list holds this many tasks (>= 1).
  int queue_max_size = 100000;
  // pool-cpu-affinity: pin worker i to core i % hardware_concurrency (Linux only).
  bool cpu_affinity = false;
  // pool-mlfq: the multi-level feedback queue (adaptive mode only). Off: every task at level 0,
  // plain FIFO per list.
  bool mlfq = true;
  // pool-small-share: percent of the workers' time level 0 gets while small and big work both
  // wait (clamped to [1, 99]).
  int small_share = 80;
  // pool-heavy-lane: levels 1-2 run on their own idle-priority threads (see the top of this
  // file); adaptive mode with the MLFQ only.
  bool heavy_lane = true;
};

// One MLFQ level's figures (Stats::levels).
struct LevelStats {
  uint64_t tasks = 0;       // tasks run at this level
  uint64_t queued_now = 0;  // waiting now (levels 1-2; level 0 is in Stats::queued_now)
  double queue_wait_sum_us = 0;
  double queue_wait_p50_us = 0;
  double queue_wait_p99_us = 0;
  double exec_sum_us = 0;
  double exec_p50_us = 0;
  double exec_p99_us = 0;
  // Of the time workers spent while small and big work were both active, the fraction this
  // level got (0 when there was none).
  double contended_share = 0;
};

// A snapshot; counters count since Create or the last ResetStats.
struct Stats {
  uint64_t tasks_run = 0;         // Run calls completed (Cancel calls are not counted)
  uint64_t wakeups_spin = 0;      // an idle worker found work while spinning
  uint64_t wakeups_yield = 0;     // ... while yielding
  uint64_t wakeups_block = 0;     // ... after blocking on the condition variable
  uint64_t producer_yields = 0;   // Submit yielded because a list was above queue_slow_size
  uint64_t producer_waits = 0;    // Submit waited because a list was at queue_max_size
  uint64_t depth_high_water = 0;  // deepest any list got (since ResetStats)
  uint64_t queued_now = 0;        // tasks linked but not yet taken by a worker
  uint64_t delayed_pending = 0;   // ScheduleAt tasks not yet due
  // Average over workers of the adaptive yield credit scaled to [-1, 1]: +1 = the yield phase
  // (nearly) always finds work, -1 = it never does and waits skip it. 0 in classic mode.
  double yield_credit = 0;
  // Queue wait of each run task: Submit (or timer dispatch) -> taken off the list by a worker.
  uint64_t queue_wait_count = 0;
  double queue_wait_sum_us = 0;
  double queue_wait_p50_us = 0;
  double queue_wait_p99_us = 0;
  double queue_wait_p999_us = 0;
  // MLFQ.
  bool mlfq = false;  // on (adaptive mode and Options::mlfq)
  int small_share = 0;
  bool heavy_lane = false;          // levels 1-2 run on the heavy lane now
  int heavy_lane_idle_threads = 0;  // lane threads the OS put at idle priority (SCHED_IDLE)
  LevelStats levels[3];
  uint64_t demotions = 0;   // a client's level went up between two of its submits
  uint64_t promotions = 0;  // ... went down
  uint64_t clients_tracked = 0;
};

class WorkerPool {
 public:
  // Starts options.threads workers and one timer thread. Never fails (options are clamped).
  static std::unique_ptr<WorkerPool> Create(const Options& options);

  // Calls Shutdown(). REQUIRES: not on one of this pool's workers.
  ~WorkerPool();

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Takes ownership. Any thread. Lock-free in adaptive mode unless backpressure applies: yields
  // once above queue_slow_size, blocks while the list is at queue_max_size (never forever unless
  // the workers are stuck; never when called from a worker or the timer). `hint` picks the list
  // (hint % number of lists; e.g. a connection id): tasks with the same non-zero hint go to the
  // same list; hint 0 round-robins per calling thread. After Shutdown began: Cancel() inline.
  // With the MLFQ on, a task of level 1-2 (see the top of this file) skips the lists and their
  // backpressure: it goes to the shared high-level queues (one mutex), never waits for room.
  void Submit(std::unique_ptr<Task> task, uint64_t hint = 0);

  // MLFQ. The level a task of `client` would get now (0 with the MLFQ off or in classic mode).
  // Any thread; takes one shard mutex of the client table briefly.
  int ClientLevel(uint64_t client);
  // Adds `ns` of execution time to `client` (work done for it outside a task of its own). Any
  // thread; takes one shard mutex. No-op with the MLFQ off.
  void Charge(uint64_t client, int64_t ns);
  // Forgets `client` (its connection closed). Any thread.
  void ForgetClient(uint64_t client);
  // True when Submit applies levels (adaptive mode and the MLFQ on). A relaxed load.
  bool mlfq_enabled() const;
  // On a pool worker inside Task::Run: the running task's elapsed_ns() plus its run so far (the
  // elapsed_ns a continuation of it should carry). 0 on other threads. Lock-free. "Run so far"
  // is time on the CPU, not time preempted (pool/thread_cpu.h), as everything the MLFQ charges:
  // runs of 1 ms or more cost one read of the thread's CPU clock (a syscall).
  static int64_t RunningTaskElapsedNs();
  // On a pool worker inside Task::Run: the running task's run so far on the CPU (without the
  // elapsed_ns it carried); a task that splits its run among clients (a group of batches)
  // scales its wall-clock split by this. 0 on other threads.
  static int64_t RunningTaskCpuNs();

  // Marks the calling thread as one that must never wait (a network loop): its Submit calls
  // never yield or block for room, like the pool's own threads; they may overshoot
  // queue_max_size, so such a thread asks HasRoom() first and holds its work back itself.
  static void NeverWaitOnThisThread();
  // True when the list `hint` maps to (any list for hint 0; the queue in classic mode) holds
  // fewer than queue_max_size tasks. Any thread; a relaxed snapshot, never blocks.
  bool HasRoom(uint64_t hint) const;
  // queue_max_size as currently tuned. Any thread; a relaxed load.
  int QueueMaxSize() const;

  // Takes ownership. Any thread; takes the timer mutex briefly, never blocks on workers. Runs
  // `task` on a worker at or after `when` (a time in the past means now). Due tasks are handed
  // to the same list in (when, ScheduleAt order), so with workers_per_list == 1 tasks due at the
  // same time run in ScheduleAt order. A waiting timer never delays a normal task: only the timer
  // thread sleeps on it. After Shutdown began: Cancel() inline.
  void ScheduleAt(std::chrono::steady_clock::time_point when, std::unique_ptr<Task> task);

  // Stops accepting (later Submit/ScheduleAt Cancel inline), Cancel()s pending delayed tasks, runs
  // every queued task, joins the workers and the timer. Blocks until then. Idempotent; concurrent
  // callers all return once it is done. REQUIRES: not on one of this pool's workers.
  void Shutdown();

  // Any thread; never blocks on the hot path (takes two small mutexes: stats and timer).
  Stats GetStats() const;

  // Live tunables (CONFIG SET): spin_count, max_yield_usec, slow_yield_usec, max_slow_yields,
  // yield_sampling, queue_slow_size, queue_max_size, mlfq, small_share, heavy_lane, clamped as in
  // Options.
  // Thread-safe (relaxed atomics: workers and producers pick new values up on their next read).
  // Other fields are ignored.
  void SetTunables(const Options& options);

  Mode mode() const { return mode_; }

  // CONFIG RESETSTAT: counters and the histogram restart from zero (by remembering a baseline,
  // so workers keep writing without locks); depth_high_water restarts from the current depths.
  void ResetStats();

 private:
  explicit WorkerPool(const Options& options);
  void WorkerMain(int index);
  void HeavyLaneMain(int index);
  // Links `task` on `list` (or the classic queue). False if the queue refused it (stopped).
  bool Enqueue(Task* task, size_t list, bool may_wait);
  // Queues a level 1-2 task with the scheduler and wakes a blocked worker.
  void SubmitHigh(Task* task, int level);
  void CollectRaw(internal::RawStats* raw) const;

  const Mode mode_;
  const int threads_;
  const int workers_per_list_;
  const bool cpu_affinity_;
  std::unique_ptr<internal::Tunables> tunables_;
  std::unique_ptr<internal::ClientTable> clients_;
  std::unique_ptr<internal::ShareScheduler> sched_;  // adaptive mode
  std::atomic<bool> accepting_{true};
  std::vector<std::unique_ptr<internal::TaskList>> lists_;  // adaptive mode
  std::unique_ptr<internal::TaskList> heavy_lane_;          // adaptive mode; never pushed to
  std::atomic<int> heavy_lane_idle_{0};                     // lane threads at SCHED_IDLE
  std::unique_ptr<internal::ClassicQueue> classic_;         // classic mode
  std::vector<std::unique_ptr<internal::WorkerStats>> worker_stats_;
  std::vector<std::thread> workers_;
  std::unique_ptr<internal::TimerQueue> timer_;
  std::thread timer_thread_;

  Mutex shutdown_mu_;
  bool shut_down_ GUARDED_BY(shutdown_mu_) = false;

  mutable Mutex stats_mu_;
  std::unique_ptr<internal::RawStats> baseline_ GUARDED_BY(stats_mu_);
};

}  // namespace rockcache::pool
