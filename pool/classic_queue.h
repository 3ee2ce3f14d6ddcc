// ClassicQueue: the classic mode's queue, one std::deque behind one mutex and two condition
// variables, shared by every worker. This is the "before" of the adaptive design (Pika's old
// ThreadPool): every push and every pop takes the same lock, and an idle worker always blocks.
// Internal to pool/.
//
// Threads: Push from any thread; RunWorker from the workers; Stop, NotifyRoom, depth and counters
// from any thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

#include "config/mutex.h"
#include "pool/internal.h"

namespace rockcache::pool::internal {

class ClassicQueue {
 public:
  explicit ClassicQueue(const Tunables* tunables) : tunables_(tunables) {}
  ClassicQueue(const ClassicQueue&) = delete;
  ClassicQueue& operator=(const ClassicQueue&) = delete;

  // Appends `task` and notifies one worker. Takes mu_; if `may_wait`, yields once above
  // queue_slow_size and blocks at queue_max_size until a worker pops or Stop(). Returns false
  // without touching `task` once Stop() ran.
  bool Push(Task* task, bool may_wait) EXCLUDES(mu_);

  // The body of a worker thread: pops and runs one task at a time until Stop() and empty.
  void RunWorker(WorkerStats* stats) EXCLUDES(mu_);

  // Refuses later pushes; workers drain the queue and return; waiting producers return false.
  void Stop();

  void NotifyRoom();
  int64_t depth() const { return depth_.load(std::memory_order_relaxed); }
  QueueCounters& counters() { return counters_; }
  const QueueCounters& counters() const { return counters_; }

 private:
  int64_t Size() const REQUIRES(mu_) { return static_cast<int64_t>(queue_.size()); }

  const Tunables* const tunables_;
  Mutex mu_;
  CondVar not_empty_;  // waited on with mu_
  CondVar not_full_;   // waited on with mu_
  std::deque<Task*> queue_ GUARDED_BY(mu_);
  int room_waiters_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::atomic<int64_t> depth_{0};  // queue_.size(), readable without mu_
  QueueCounters counters_;
};

}  // namespace rockcache::pool::internal
