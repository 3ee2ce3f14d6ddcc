// TaskList: the adaptive mode's lock-free multi-producer task list, with the three-phase wait of
// the workers that share it. Internal to pool/.
//
// The list is an intrusive stack: head_ points at the newest task, each task's next_ at the one
// pushed before it. Producers push with a CAS on head_ (seq_cst; the release half publishes the
// task's fields); a worker takes the whole stack with one exchange (acquire) and reverses it onto
// the back of the list's backlog (oldest first), then runs the backlog's front task, one at a
// time. No ABA problem: nothing ever pops a single node off the stack, so a producer's CAS only
// needs head_ to still hold the value it copied into its task's next_, whatever object sits at
// that address.
//
// The backlog (taken_front_/taken_back_ under taken_mu_, workers only): a worker used to run the
// whole stack it took as one chain, so with two workers on a list the tasks at the end of a long
// chain waited for every task before them while the list-mate served newer ones (a P16 ZADD
// burst: queue wait p99 28 ms against classic mode's 12 ms). Now every task is taken singly in
// push order by whichever worker is free; one uncontended mutex a task (a task is a whole
// network-loop pass of commands). A worker that leaves tasks in the backlog wakes a sleeping
// list-mate (the Dekker pair below on taken_count_ instead of head_).
//
// Lost wake-up freedom: a worker about to block increments sleepers_ and re-checks head_ under
// mu_ before waiting on work_cv_; a producer reads sleepers_ after its CAS and, if non-zero, takes
// mu_ and notifies. All four are seq_cst, so either the producer sees the sleeper or the worker
// sees the task. Taking mu_ orders the notify after the worker's check-then-wait. A producer
// skips the wake when a list-mate is spinning (spinners_, same pattern: the spinner looks at the
// list again after leaving the count). Backpressure waits use the pattern on room_waiters_ /
// depth_.
//
// MLFQ (pool/mlfq.h): the list holds level-0 tasks only. While the pool-wide ShareScheduler has
// high-level (1-2) tasks queued or running, a worker asks it what to take (Take -> TakeMixed);
// otherwise Take is TryTakeOldest, as without the MLFQ. The wait phases treat queued high tasks as
// work too, unless the scheduler told this worker to keep itself for level 0 ("hold"): then it
// blocks with a timeout (kHoldPollNs) and asks again. A PushHigh wakes a sleeper with the same
// Dekker pattern (high count, then sleepers_; see WorkerPool::Submit).
//
// The heavy lane (Options::heavy_lane, pool-heavy-lane): the pool keeps one more list, of role
// kHeavyLane, that nobody pushes to. Its workers take only high tasks (asking Choose with no
// level-0 work of their own, so the cap and the budget hold as before) and run at the OS's idle
// priority. While the lane is on, the kShared lists' workers take level-0 chains only; while it is
// off, they take both, as above, and the lane's workers sleep.
//
// Threads: Push from any thread; RunWorker from the list's workers only; Stop, Close, NotifyRoom,
// WakeWorkers, depth and counters from any thread (see each).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "config/mutex.h"
#include "pool/internal.h"

namespace rockcache::pool::internal {

class TaskList {
 public:
  enum class Role {
    kShared,     // level-0 tasks pushed here; high ones too while the heavy lane is off
    kHeavyLane,  // no pushes; high tasks only, while the heavy lane is on
  };

  // `sched` and `clients` may be null (MLFQ off for good: classic tests, or no scheduler).
  TaskList(const Tunables* tunables, ShareScheduler* sched, ClientTable* clients,
           Role role = Role::kShared)
      : tunables_(tunables), sched_(sched), clients_(clients), role_(role) {}
  TaskList(const TaskList&) = delete;
  TaskList& operator=(const TaskList&) = delete;

  // Links `task`. Lock-free unless it has to wake a blocked worker (one mutex lock + notify) or,
  // if `may_wait`, backpressure applies (may yield once, or block while the list is at
  // queue_max_size until a worker drains it or Stop()). Returns false without touching `task`
  // once Close() ran.
  bool Push(Task* task, bool may_wait);

  // The body of a worker thread: takes chains and runs them (stats into *stats) until Stop() was
  // called and the list is empty. Blocks while idle.
  void RunWorker(WorkerStats* stats);

  // Any thread. Workers drain the list, then RunWorker returns; producers waiting for room go on.
  void Stop();

  // REQUIRES: Stop() called and every worker returned from RunWorker. Marks the list closed
  // (later Push calls return false) and returns what was pushed after the workers left, oldest
  // first, for the caller to Cancel.
  Task* Close();

  // Wakes producers waiting for room (after queue_max_size was raised). Any thread.
  void NotifyRoom();
  // Wakes every blocked worker to look again (after the heavy lane was switched). Any thread.
  void WakeWorkers();

  // Wakes one blocked worker if there is one (after a PushHigh). Any thread.
  void WakeSleeper() {
    if (sleepers_.load(std::memory_order_seq_cst) > 0) WakeOne();
  }
  bool HasSleeper() const { return sleepers_.load(std::memory_order_seq_cst) > 0; }

  // Tasks linked but not yet taken (the stack and the backlog). Approximate while producers and
  // workers run.
  int64_t depth() const { return depth_.load(std::memory_order_relaxed); }
  QueueCounters& counters() { return counters_; }
  const QueueCounters& counters() const { return counters_; }

 private:
  static Task* Closed() { return reinterpret_cast<Task*>(uintptr_t{1}); }

  // What a worker took: a level-0 chain or one high task.
  struct Taken {
    Task* chain = nullptr;
    int level = 0;
    bool chosen = false;     // through ShareScheduler::Choose: report its span with Finished
    bool left_work = false;  // level-0 tasks are still waiting: wake a list-mate (RunWorker)
  };
  // Per worker, across its waits.
  struct WorkerState {
    WorkerStats* stats;
    bool hold = false;  // Choose said: high work is queued but keep yourself for level 0
  };

  // The oldest task not yet taken (a chain of one), or nullptr if there is none: the backlog's
  // front, after moving the stack onto its back when it is empty. Sets *left_work when tasks
  // are left behind (the caller wakes a list-mate once it holds no lock: BlockForWork holds mu_).
  Task* TryTakeOldest(bool* left_work);
  // Level 0 or high work, as the MLFQ decides; TryTakeOldest when no high work exists.
  Taken Take(WorkerState* w, bool drain);
  Taken TakeMixed(WorkerState* w, bool drain);
  // Something the worker should look at: a level-0 task, or a high one unless holding or
  // another role takes high tasks now.
  bool HasWork(const WorkerState* w, std::memory_order order) const {
    return head_.load(order) != nullptr || taken_count_.load(order) > 0 ||
           (!w->hold && TakesHigh() && sched_->HighQueued() > 0);
  }
  // This list's workers take high tasks now: a kShared list while the lane is off, the lane's
  // list while it is on.
  bool TakesHigh() const {
    return sched_ != nullptr &&
           tunables_->heavy_lane.load(std::memory_order_relaxed) == (role_ == Role::kHeavyLane);
  }
  // Spin, yield, block (see task_list.cc). Empty only when stopped and empty, or after a
  // holding worker's poll timeout.
  Taken AwaitWork(WorkerState* w);
  Taken Spin(WorkerState* w);
  Taken Yield(WorkerState* w);
  Taken BlockForWork(WorkerState* w);
  void WakeOne();
  void WaitForRoom();

  const Tunables* const tunables_;
  ShareScheduler* const sched_;
  ClientTable* const clients_;
  const Role role_;

  // The hot line: every push and take touches these together.
  alignas(64) std::atomic<Task*> head_{nullptr};
  std::atomic<int64_t> depth_{0};
  std::atomic<int> spinners_{0};      // workers in the spin phase
  std::atomic<int> sleepers_{0};      // workers between "about to block" and "woken"
  std::atomic<int> room_waiters_{0};  // producers waiting for depth_ < queue_max_size
  std::atomic<bool> stop_{false};

  // Workers only: tasks taken off the stack and not yet run, oldest at the front.
  alignas(64) Mutex taken_mu_;
  Task* taken_front_ GUARDED_BY(taken_mu_) = nullptr;
  Task* taken_back_ GUARDED_BY(taken_mu_) = nullptr;
  std::atomic<int64_t> taken_count_{0};  // written under taken_mu_, read anywhere

  alignas(64) Mutex mu_;
  CondVar work_cv_;  // workers wait with mu_ for head_ != nullptr or stop_
  CondVar room_cv_;  // producers wait with mu_ for depth_ < queue_max_size or stop_

  QueueCounters counters_;
};

}  // namespace rockcache::pool::internal
