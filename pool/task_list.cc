#include "pool/task_list.h"

#include <thread>

namespace rockcache::pool::internal {

bool TaskList::Push(Task* task, bool may_wait) {
  if (may_wait) {
    // Backpressure, checked before linking (as Pika's Schedule does): the yield first, then the
    // wait, so the list is re-checked after the yield. Producers racing past the check may each
    // link one task beyond queue_max_size.
    const int max = tunables_->queue_max_size.load(std::memory_order_relaxed);
    int64_t depth = depth_.load(std::memory_order_relaxed);
    if (depth > tunables_->queue_slow_size.load(std::memory_order_relaxed) && depth < max) {
      counters_.producer_yields.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::yield();
      depth = depth_.load(std::memory_order_relaxed);
    }
    if (depth >= max) WaitForRoom();
  }
  // depth_ sits on head_'s cache line: the increment fetches the line the CAS needs anyway.
  const int64_t depth = depth_.fetch_add(1, std::memory_order_relaxed) + 1;
  TaskAccess::EnqueueNs(task) = NowNs();
  Task* head = head_.load(std::memory_order_relaxed);
  do {
    if (head == Closed()) {
      depth_.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    TaskAccess::Next(task) = head;
  } while (!head_.compare_exchange_weak(head, task, std::memory_order_seq_cst,
                                        std::memory_order_relaxed));
  // Wake a blocked worker, unless a spinning one will see the task. Both are Dekker pairs, all
  // seq_cst, so one side always sees the other:
  //  * CAS(head_) then load(spinners_) here; fetch_sub(spinners_) then load(head_) in Spin or,
  //    later, in BlockForWork. Every way out of Spin looks at the list again after leaving.
  //  * CAS(head_) then load(sleepers_) here; fetch_add(sleepers_) then load(head_) under mu_ in
  //    BlockForWork. Taking mu_ in WakeOne waits out a worker between that check and its wait.
  // Pushes onto a list that already holds tasks wake too (not only the first push): a woken
  // worker counts as a sleeper until it has taken the chain, so a burst wakes up to
  // workers_per_list workers; if the first one is slow to get a CPU, a list-mate may be faster.
  if (spinners_.load(std::memory_order_seq_cst) == 0 &&
      sleepers_.load(std::memory_order_seq_cst) > 0) {
    WakeOne();
  }
  counters_.NoteDepth(depth);
  return true;
}

void TaskList::WaitForRoom() {
  counters_.producer_waits.fetch_add(1, std::memory_order_relaxed);
  room_waiters_.fetch_add(1, std::memory_order_seq_cst);
  {
    MutexLock lock(&mu_);
    while (depth_.load(std::memory_order_seq_cst) >=
               tunables_->queue_max_size.load(std::memory_order_relaxed) &&
           !stop_.load(std::memory_order_acquire)) {
      room_cv_.Wait(&mu_);
    }
  }
  room_waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void TaskList::WakeOne() {
  { MutexLock lock(&mu_); }
  work_cv_.Signal();
}

void TaskList::WakeWorkers() {
  { MutexLock lock(&mu_); }
  work_cv_.SignalAll();
}

void TaskList::NotifyRoom() {
  { MutexLock lock(&mu_); }
  room_cv_.SignalAll();
}

Task* TaskList::TryTakeOldest(bool* left_work) {
  // Plain loads first: an idle spinner must not keep stealing the lines from producers.
  if (taken_count_.load(std::memory_order_relaxed) == 0 &&
      head_.load(std::memory_order_relaxed) == nullptr) {
    return nullptr;
  }
  Task* task = nullptr;
  int64_t left = 0;
  {
    MutexLock lock(&taken_mu_);
    int64_t count = taken_count_.load(std::memory_order_relaxed);
    if (taken_front_ == nullptr) {
      Task* newest = head_.exchange(nullptr, std::memory_order_acquire);
      Task* oldest = nullptr;
      Task* back = newest;
      while (newest != nullptr) {  // reverse: the stack is newest first, we run oldest first
        Task* next = TaskAccess::Next(newest);
        TaskAccess::Next(newest) = oldest;
        oldest = newest;
        newest = next;
        ++count;
      }
      taken_front_ = oldest;
      taken_back_ = back;
    }
    if (taken_front_ != nullptr) {
      task = taken_front_;
      taken_front_ = TaskAccess::Next(task);
      if (taken_front_ == nullptr) taken_back_ = nullptr;
      TaskAccess::Next(task) = nullptr;
      --count;
    }
    left = count;
    // seq_cst: Dekker with BlockForWork (fetch_add(sleepers_) then HasWork's load of it).
    taken_count_.store(count, std::memory_order_seq_cst);
  }
  if (task == nullptr) return nullptr;
  // seq_cst: Dekker with WaitForRoom (fetch_sub(depth_) then load(room_waiters_) in RunWorker).
  depth_.fetch_sub(1, std::memory_order_seq_cst);
  *left_work = left > 0;
  return task;
}

TaskList::Taken TaskList::Take(WorkerState* w, bool drain) {
  // The common case, and the whole story with the MLFQ off: one relaxed-enough load more.
  if (sched_ == nullptr || sched_->HighActive() == 0) {
    w->hold = false;
    Taken t;
    t.chain = TryTakeOldest(&t.left_work);
    return t;
  }
  if (!TakesHigh()) {
    // Level 0 only (the other role runs high tasks now). The chain still counts as contended
    // level-0 time in the shares.
    w->hold = false;
    Taken t;
    t.chain = TryTakeOldest(&t.left_work);
    t.chosen = t.chain != nullptr;
    return t;
  }
  return TakeMixed(w, drain);
}

TaskList::Taken TaskList::TakeMixed(WorkerState* w, bool drain) {
  Taken t;
  const bool level0 = head_.load(std::memory_order_seq_cst) != nullptr;
  const int64_t now = NowNs();
  if (level0) sched_->NoteLevel0(now);
  const Choice c = sched_->Choose(level0, now, drain);
  if (c.kind == Choice::kHigh) {
    w->hold = false;
    t.chain = c.task;
    TaskAccess::Next(t.chain) = nullptr;
    t.level = c.level;
    t.chosen = true;
  } else if (c.kind == Choice::kLevel0) {
    w->hold = false;
    t.chain = TryTakeOldest(&t.left_work);  // nullptr if a list-mate was faster
    t.chosen = true;
  } else {
    w->hold = sched_->HighQueued() > 0;
  }
  return t;
}

void TaskList::RunWorker(WorkerStats* stats) {
  WorkerState w{stats};
  for (;;) {
    // Read stop_ before looking at the list: a push that happened before Stop() is then visible
    // to the take below, so nothing submitted before Shutdown is left behind.
    const bool stopping = stop_.load(std::memory_order_acquire);
    Taken t = Take(&w, stopping);
    if (t.chain == nullptr) {
      if (stopping) return;
      t = AwaitWork(&w);
      if (t.chain == nullptr) continue;  // stopped (returns above next time) or a hold timeout
    }
    if (room_waiters_.load(std::memory_order_seq_cst) > 0) NotifyRoom();
    // Dekker with BlockForWork: taken_count_ (stored seq_cst in TryTakeOldest) then sleepers_.
    if (t.left_work && spinners_.load(std::memory_order_seq_cst) == 0 &&
        sleepers_.load(std::memory_order_seq_cst) > 0) {
      WakeOne();  // a list-mate takes the next task instead of waiting behind this one
    }
    stats->RunChain(t.chain, t.level,
                    tunables_->mlfq.load(std::memory_order_relaxed) ? clients_ : nullptr, sched_,
                    t.chosen);
  }
}

// The three-phase wait of an idle worker, after RocksDB's WriteThread::AwaitState.
//
// Blocking on a condition variable costs the producer a futex wake (~2-5 µs of syscall, during
// which the woken worker may preempt it) and the worker a scheduler wake-up (~3-10 µs, more from a
// deep C-state), so a worker whose next task is a few µs away should not block. Under load that is
// the common case: the next push is usually already on its way.
//
// 1. Spin: spin_count (200) loads of head_, each followed by a PAUSE. RocksDB measured 200 pauses
//    at ~1 µs on older Xeons; PAUSE is ~20 ns on our 2-vCPU Xeon VM (~140 cycles on Skylake+), so
//    200 are ~4 µs: enough to catch back-to-back pushes, short enough to always do. No clock read
//    here: the wait timer starts after it. While spinning, the worker counts in spinners_, and a
//    producer that sees a spinner does not wake a sleeper (that futex wake was most of a
//    producer's time in pool-bench before this). The spinner pays it back: on leaving the phase
//    it re-checks the list, and wakes a sleeper if a task it did not take is still there.
// 2. Yield: std::this_thread::yield() in a loop for up to max_yield_usec (100 µs). A yield that
//    returns fast (< slow_yield_usec, 3 µs) means nobody else wanted the core, so we burn only our
//    own idle CPU; a slow one means another thread ran, i.e. we are taking CPU from real work.
//    After max_slow_yields (3) slow ones, give up and block. Because the phase costs CPU, it is
//    entered only when the worker's yield credit says it recently paid off, or on a 1-in-
//    yield_sampling (256) sample so a negative credit can recover. A yielding worker may sit
//    behind other runnable threads for a whole time slice (ms), so producers do not count on it:
//    they still wake a sleeper.
// 3. Block on work_cv_, counted in sleepers_ (see Push for the no-lost-wake-up argument).
//
// The credit is fixed point with exponential decay (RocksDB's constants): each sampled attempt
// does credit = credit - credit/1024 +/- 2^17 (+ if the yield phase found work). The 1/1024
// decay gives it a memory of ~1000 samples, and the +/-2^17 step bounds it by 2^17 * 1024 = 2^27
// (it would fit an int32). A credit >= 0 means the weighted recent samples succeeded at least
// half of the time. Samples are per worker, so no two threads write one credit.
TaskList::Taken TaskList::AwaitWork(WorkerState* w) {
  Taken t = Spin(w);
  if (t.chain == nullptr) t = Yield(w);
  if (t.chain == nullptr) t = BlockForWork(w);
  return t;
}

TaskList::Taken TaskList::Spin(WorkerState* w) {
  Taken t;
  const int spins = tunables_->spin_count.load(std::memory_order_relaxed);
  if (spins <= 0) return t;
  spinners_.fetch_add(1, std::memory_order_seq_cst);
  for (int i = 0; i < spins && t.chain == nullptr; ++i) {
    if (HasWork(w, std::memory_order_relaxed)) t = Take(w, /*drain=*/false);
    CpuRelax();
  }
  spinners_.fetch_sub(1, std::memory_order_seq_cst);
  // Dekker with Push: CAS(head_) then load(spinners_) there; fetch_sub(spinners_) then
  // load(head_) here. A producer that saw us spinning linked its task before this load.
  if (HasWork(w, std::memory_order_seq_cst)) {
    if (t.chain == nullptr) {
      t = Take(w, /*drain=*/false);
    } else if (spinners_.load(std::memory_order_seq_cst) == 0 &&
               sleepers_.load(std::memory_order_seq_cst) > 0) {
      WakeOne();  // it would otherwise wait behind our chain
    }
  }
  if (t.chain != nullptr) w->stats->wakeups_spin.Add(1);
  return t;
}

TaskList::Taken TaskList::Yield(WorkerState* w) {
  Taken t;
  WorkerStats* stats = w->stats;
  const int max_yield_usec = tunables_->max_yield_usec.load(std::memory_order_relaxed);
  if (max_yield_usec <= 0) return t;
  bool update_credit = stats->OneIn(tunables_->yield_sampling.load(std::memory_order_relaxed));
  if (update_credit || stats->yield_credit.load(std::memory_order_relaxed) >= 0) {
    using Clock = std::chrono::steady_clock;
    const auto max_yield = std::chrono::microseconds(max_yield_usec);
    const auto slow_yield =
        std::chrono::microseconds(tunables_->slow_yield_usec.load(std::memory_order_relaxed));
    const int max_slow_yields = tunables_->max_slow_yields.load(std::memory_order_relaxed);
    const auto begin = Clock::now();
    auto iter_begin = begin;
    int slow_yields = 0;  // not counting the yield after which work showed up
    while (iter_begin - begin <= max_yield) {
      std::this_thread::yield();
      if (HasWork(w, std::memory_order_relaxed) &&
          (t = Take(w, /*drain=*/false)).chain != nullptr) {
        break;
      }
      const auto now = Clock::now();
      // An unchanged clock reads as slow: too coarse a clock must not make yields look free.
      if (now == iter_begin || now - iter_begin >= slow_yield) {
        if (++slow_yields >= max_slow_yields) {
          update_credit = true;  // several involuntary switches: record the failure now
          break;
        }
      }
      iter_begin = now;
    }
  }
  if (update_credit) {
    int64_t credit = stats->yield_credit.load(std::memory_order_relaxed);
    credit = credit - credit / 1024 +
             (t.chain != nullptr ? WorkerStats::kCreditStep : -WorkerStats::kCreditStep);
    stats->yield_credit.store(credit, std::memory_order_relaxed);
  }
  if (t.chain != nullptr) stats->wakeups_yield.Add(1);
  return t;
}

// A holding worker (high work queued, but the MLFQ keeps it for level 0) waits with a timeout of
// kHoldPollNs and asks the scheduler again after each: the answer changes with time (level 0
// stops being "recent", a running high task ends) with no push to announce it.
TaskList::Taken TaskList::BlockForWork(WorkerState* w) {
  Taken t;
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  {
    MutexLock lock(&mu_);
    for (;;) {
      const bool stopping = stop_.load(std::memory_order_acquire);  // before the list, as above
      // seq_cst: Dekker with Push (head_) and WorkerPool::Submit's PushHigh (the high count).
      // A holding worker asks the scheduler again on every pass.
      if ((w->hold || HasWork(w, std::memory_order_seq_cst)) &&
          (t = Take(w, stopping)).chain != nullptr) {
        break;
      }
      if (stopping) break;
      if (w->hold) {
        work_cv_.WaitFor(&mu_, std::chrono::nanoseconds(ShareScheduler::kHoldPollNs));
      } else {
        work_cv_.Wait(&mu_);
      }
    }
  }
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  if (t.chain != nullptr) w->stats->wakeups_block.Add(1);
  return t;
}

void TaskList::Stop() {
  stop_.store(true, std::memory_order_release);
  { MutexLock lock(&mu_); }
  work_cv_.SignalAll();
  room_cv_.SignalAll();
}

Task* TaskList::Close() {
  Task* newest = head_.exchange(Closed(), std::memory_order_acq_rel);
  Task* oldest = nullptr;
  while (newest != nullptr && newest != Closed()) {
    Task* next = TaskAccess::Next(newest);
    TaskAccess::Next(newest) = oldest;
    oldest = newest;
    newest = next;
  }
  // Tasks a worker took off the stack but nobody ran (none once every worker returned from
  // RunWorker; kept for safety) go first: they are older.
  MutexLock lock(&taken_mu_);
  if (taken_front_ != nullptr) {
    TaskAccess::Next(taken_back_) = oldest;
    oldest = taken_front_;
    taken_front_ = nullptr;
    taken_back_ = nullptr;
    taken_count_.store(0, std::memory_order_relaxed);
  }
  depth_.store(0, std::memory_order_relaxed);
  return oldest;
}

}  // namespace rockcache::pool::internal
