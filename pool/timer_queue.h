// TimerQueue: the pool's delayed tasks, a min-heap on (deadline, ScheduleAt order) behind one
// mutex, served by one timer thread that sleeps on a condition variable until the earliest
// deadline and then hands each due task to a dispatch function (the pool's lists). Only the timer
// thread ever sleeps on a deadline, so a waiting timer never holds up a worker. Housekeeping rate
// (expiry sweeps, stats), so a mutex and a vector-backed heap are fine. Internal to pool/.
//
// Threads: Add, Stop and size from any thread; Run on the timer thread only; TakePending after
// Run returned.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <vector>

#include "config/mutex.h"
#include "pool/worker_pool.h"

namespace rockcache::pool::internal {

class TimerQueue {
 public:
  using Clock = std::chrono::steady_clock;

  TimerQueue() = default;
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  // Queues `task` for `when`. Takes mu_ briefly. Returns false, leaving `task` to the caller, once
  // Stop() ran.
  bool Add(Clock::time_point when, Task* task);

  // Timer thread body: calls dispatch(task) for each due task, in (when, Add order), outside mu_.
  // Returns after Stop(). Blocks while nothing is due.
  void Run(const std::function<void(Task*)>& dispatch);

  // Makes Run return (after the dispatch in progress, if any). Any thread.
  void Stop();

  // REQUIRES: Run has returned. The tasks never dispatched, in deadline order.
  std::vector<Task*> TakePending();

  size_t size() const;

 private:
  struct Entry {
    Clock::time_point when;
    uint64_t seq;
    Task* task;
    bool operator>(const Entry& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };

  mutable Mutex mu_;
  CondVar cv_;  // waited on with mu_
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_ GUARDED_BY(mu_);
  uint64_t next_seq_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
};

}  // namespace rockcache::pool::internal
