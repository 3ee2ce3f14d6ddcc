// The multi-level feedback queue (MLFQ) of the adaptive pool, after TiKV's yatp multilevel queue:
// which level a task runs at, and which level an idle worker takes from. Internal to pool/;
// include pool/worker_pool.h instead. Both classes take the clock as an argument (nanoseconds,
// any monotonic origin), so tests drive them with a synthetic one.
//
// Levels. A task's level comes from its client (a connection id): the execution time the
// client's recent pieces of work took on a CPU (pool/thread_cpu.h: time a worker sat preempted
// is not charged), decayed over time. A piece is what one Charge reports: a
// network loop's batch of the client's commands, or a resumable command's slices so far (a slice
// reports the time of the slices before it too, Task::set_elapsed_ns). The client keeps the
// biggest recent piece, decayed with a half-life of LevelPolicy::half_life_ns (100 ms): below
// level1_ns (5 ms) the client is at level 0, below level2_ns (100 ms) at level 1, else at level 2
// (yatp's thresholds). It is the size of the work, not the rate: a client sending 50,000 GETs a
// second in batches of 20 µs stays at level 0, however much of a core that adds up to, while a
// client whose KEYS * took 400 ms is at level 2 for its next command, and back at level 0 ~700
// ms after its last big piece. (A decayed *sum* would demote a busy small client, and on a slow
// machine — valgrind, a loaded box — every client.) Only a client's own work counts: a client
// that sends small commands is never demoted by another's big ones. A task's own accumulated
// time (its command's earlier slices) can raise its level above its client's, as in yatp where
// the level follows the task.

// Shares. Level 0 stays on the pool's lock-free lists (pool/task_list.h), untouched while no
// task of level 1 or 2 exists (one relaxed load of HighActive() per chain). Levels 1 and 2 wait
// in two FIFO deques here, shared by every list, under one mutex: they are big by definition, so
// a lock per task costs nothing next to their run time. An idle worker asks Choose() what to run
// while high work exists. The rule, applied between level 0 and levels 1-2 and again between
// level 1 and level 2:
//  * Only time spent while both sides are active counts ("contended" time: some high task is
//    queued or running, and level-0 work was seen within kLevel0LingerNs). Counted time decays
//    with a half-life of kShareHalfLifeNs (1 s) so the share follows recent behaviour.
//  * When both sides are waiting, the high side runs only while its counted time (including the
//    time its running tasks have taken so far) is at most (100 - share)% of the total. share is
//    pool-small-share (80 by default). Without that in-flight term every idle worker would pick
//    a big task before the first one finished and charged its time.
//  * Whatever the shares, while level-0 work was seen within kLevel0LingerNs, high tasks get
//    at most (100 - share)% of the pool's contended capacity (contended wall time x the workers
//    that can be on a CPU at once, decayed like the counted time: WorkerPool passes the usable
//    cores less the network threads' default, at least 1, at most pool-threads), and at most
//    HighCap() = max(1, round(threads x (100 - share) / 100)) workers run them at once. This holds
//    even while no level-0 task is queued at the moment a worker looks: small requests from clients
//    waiting for their replies arrive one at a time, so they rarely queue, and an idle worker is
//    not an idle CPU (network threads and the clients themselves run on the same cores). Without
//    it, big work took a whole worker and light clients beside it lost half their throughput on 2
//    cores. A worker that finds only high work beyond the cap or the budget waits (re-checking
//    every kHoldPollNs) for level-0 work.
//  * With no level-0 work seen for kLevel0LingerNs, high tasks run on every worker (work
//    conserving), and with no high work level 0 runs as if the MLFQ did not exist.
//
// Threads: every method of both classes is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "config/mutex.h"

namespace rockcache::pool {
class Task;
}

namespace rockcache::pool::internal {

constexpr int kLevels = 3;

struct LevelPolicy {
  int64_t half_life_ns = 100'000'000;  // decay of a client's biggest recent piece of work
  int64_t level1_ns = 5'000'000;       // a piece (decayed) from which a client is at level 1
  int64_t level2_ns = 100'000'000;     // ... at level 2

  // The level of a piece of work that took `ns` (a task's own accumulated time).
  int LevelOf(double ns) const {
    return ns >= static_cast<double>(level2_ns) ? 2 : ns >= static_cast<double>(level1_ns) ? 1 : 0;
  }
};

// Per-client biggest recent piece of work, decayed. 32 shards, each a mutex and a hash map; one
// lookup per batch a network loop submits and one charge per batch run while the MLFQ is on.
class ClientTable {
 public:
  explicit ClientTable(LevelPolicy policy = LevelPolicy()) : policy_(policy) {}
  const LevelPolicy& policy() const { return policy_; }
  ClientTable(const ClientTable&) = delete;
  ClientTable& operator=(const ClientTable&) = delete;

  // The level `client` should run at now (0 for a client never charged). Counts a demotion or a
  // promotion when it differs from the level this returned last time for the client.
  int Level(uint64_t client, int64_t now_ns);
  // Reports a piece of work of `ns` done for `client` (creating its entry): the client's
  // figure becomes max(its decayed figure, ns).
  void Charge(uint64_t client, int64_t ns, int64_t now_ns);
  // Drops the client's entry (its connection closed). A later Charge recreates it; such entries
  // are dropped once decayed (below 1 µs) when their shard passes kSweepAt entries.
  void Forget(uint64_t client);
  // The decayed figure of `client` now, in ns (tests).
  double Load(uint64_t client, int64_t now_ns);

  uint64_t demotions() const { return demotions_.load(std::memory_order_relaxed); }
  uint64_t promotions() const { return promotions_.load(std::memory_order_relaxed); }
  size_t size() const;

 private:
  struct Entry {
    double load_ns = 0;  // the biggest recent piece, decayed to at_ns
    int64_t at_ns = 0;
    int level = 0;  // what Level() returned last
  };
  struct alignas(64) Shard {
    mutable Mutex mu;
    std::unordered_map<uint64_t, Entry> map GUARDED_BY(mu);
  };
  static constexpr size_t kShards = 32;
  static constexpr size_t kSweepAt = 1024;  // a shard this big drops decayed entries on insert
  Shard& ShardOf(uint64_t client) { return shards_[(client * 0x9E3779B97F4A7C15ull) >> 59]; }
  void Decay(Entry* e, int64_t now_ns) const;

  const LevelPolicy policy_;
  Shard shards_[kShards];
  std::atomic<uint64_t> demotions_{0};
  std::atomic<uint64_t> promotions_{0};
};

// What Choose() tells a worker to do.
struct Choice {
  enum Kind { kLevel0, kHigh, kWait };
  Kind kind = kWait;
  Task* task = nullptr;  // kHigh: the task, dequeued; the worker must call Finished for it
  int level = 0;         // kHigh: its level (1 or 2)
};

// The levels-1-2 queues and the share accounting (see the top of this file).
class ShareScheduler {
 public:
  static constexpr int64_t kLevel0LingerNs = 5'000'000;  // level 0 counts as active this long
  static constexpr int64_t kShareHalfLifeNs = 1'000'000'000;
  static constexpr int64_t kHoldPollNs = 1'000'000;  // a holding worker re-checks this often
  // High work may run this far ahead of its budget (one slice), so it starts when contention
  // begins and the budget has not accrued yet.
  static constexpr int64_t kBudgetSlackNs = 2'000'000;

  // `cpu_workers`: how many workers can be on a CPU at once (the pool's capacity in the budget
  // below); 0 means `threads`.
  ShareScheduler(int threads, int small_share_percent, int cpu_workers = 0);
  ShareScheduler(const ShareScheduler&) = delete;
  ShareScheduler& operator=(const ShareScheduler&) = delete;

  // pool-small-share, clamped to [1, 99]. Any thread.
  void SetSmallShare(int percent);
  int small_share() const { return share_.load(std::memory_order_relaxed); }
  // Workers allowed to run high tasks at once while level 0 is active.
  int HighCap() const;

  // Queues `task` at `level` (1 or 2). False once Close() ran (the caller cancels it).
  bool PushHigh(Task* task, int level, int64_t now_ns);
  // High tasks queued plus running: 0 means level 0 has the pool to itself. seq_cst: a worker
  // about to block and a PushHigh form a Dekker pair with the list's sleeper count.
  int HighActive() const { return high_active_.load(std::memory_order_seq_cst); }
  // High tasks queued (not running).
  int HighQueued() const { return high_queued_.load(std::memory_order_seq_cst); }
  // Level-0 work was seen (taken or waiting) at now_ns. Cheap: one relaxed load, and a store at
  // most every 100 µs.
  void NoteLevel0(int64_t now_ns) {
    if (now_ns - last_level0_ns_.load(std::memory_order_relaxed) > 100'000) {
      last_level0_ns_.store(now_ns, std::memory_order_relaxed);
    }
  }

  // What an idle worker should run. `level0_waiting`: its list holds level-0 work. `drain`:
  // the pool is shutting down; run anything. kLevel0 means "take your list's chain".
  Choice Choose(bool level0_waiting, int64_t now_ns, bool drain);
  // A task (or a level-0 chain taken through Choose) ran from start_ns to end_ns, of which it
  // spent cpu_ns on a CPU (-1: all of it); the shares count cpu_ns, so a task that sat
  // preempted (the heavy lane's idle-priority threads, a busy machine) is not charged for it. A
  // kHigh choice must be followed by exactly one Finished at its level.
  void Finished(int level, int64_t start_ns, int64_t end_ns, int64_t cpu_ns = -1);

  // Stats: contended time given to each level since construction (ns, not decayed), and the
  // current decayed shares.
  void GivenNs(uint64_t out[kLevels]) const;
  uint64_t queued(int level) const;
  // Refuses later pushes and returns the queued tasks, level 1 first, for the caller to Cancel.
  std::deque<Task*> Close();

 private:
  bool Contended(int64_t now_ns) const REQUIRES(mu_);
  void DecayTo(int64_t now_ns) REQUIRES(mu_);
  // The high side `hi` is owed time against `lo` (decayed + in-flight).
  bool Owed(double lo_ns, double hi_ns) const REQUIRES(mu_);
  // High work of `hi_ns` (decayed + in flight) is within (100 - share)% of the contended
  // capacity.
  bool HighUnderBudget(double hi_ns) const REQUIRES(mu_);
  double InFlight(int level, int64_t now_ns) const REQUIRES(mu_);
  Task* PopHigh(int64_t now_ns, int* level) REQUIRES(mu_);

  const int threads_;
  const int cpu_workers_;
  std::atomic<int> share_{80};
  std::atomic<int> high_active_{0};
  std::atomic<int> high_queued_{0};
  std::atomic<int64_t> last_level0_ns_{INT64_MIN / 2};

  mutable Mutex mu_;
  std::deque<Task*> queue_[kLevels] GUARDED_BY(mu_);  // [1] and [2] are used
  bool closed_ GUARDED_BY(mu_) = false;
  double used_ns_[kLevels] GUARDED_BY(mu_) = {};  // contended, decayed to decayed_at_
  int64_t decayed_at_ GUARDED_BY(mu_) = 0;
  double capacity_ns_ GUARDED_BY(mu_) = 0;     // cpu workers x contended wall time, decayed
  int running_[kLevels] GUARDED_BY(mu_) = {};  // high tasks running
  int64_t running_start_sum_[kLevels] GUARDED_BY(mu_) = {};  // sum of their start times
  uint64_t given_ns_[kLevels] GUARDED_BY(mu_) = {};          // contended, not decayed
};

}  // namespace rockcache::pool::internal
