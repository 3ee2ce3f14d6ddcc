#include "pool/classic_queue.h"

#include <thread>

namespace rockcache::pool::internal {

bool ClassicQueue::Push(Task* task, bool may_wait) {
  int64_t depth = 0;
  {
    MutexLock lock(&mu_);
    if (may_wait) {
      auto max = [this] { return tunables_->queue_max_size.load(std::memory_order_relaxed); };
      if (!stop_ && Size() > tunables_->queue_slow_size.load(std::memory_order_relaxed) &&
          Size() < max()) {
        counters_.producer_yields.fetch_add(1, std::memory_order_relaxed);
        mu_.Unlock();
        std::this_thread::yield();
        mu_.Lock();
      }
      // Checked under mu_ right before the push: the bound is exact.
      if (!stop_ && Size() >= max()) {
        counters_.producer_waits.fetch_add(1, std::memory_order_relaxed);
        ++room_waiters_;
        while (Size() >= max() && !stop_) not_full_.Wait(&mu_);
        --room_waiters_;
      }
    }
    if (stop_) return false;
    TaskAccess::EnqueueNs(task) = NowNs();
    queue_.push_back(task);
    depth = static_cast<int64_t>(queue_.size());
    depth_.store(depth, std::memory_order_relaxed);
  }
  not_empty_.Signal();
  counters_.NoteDepth(depth);
  return true;
}

void ClassicQueue::RunWorker(WorkerStats* stats) {
  MutexLock lock(&mu_);
  for (;;) {
    if (queue_.empty()) {
      if (stop_) return;
      while (queue_.empty() && !stop_) not_empty_.Wait(&mu_);
      if (queue_.empty()) return;  // stopped and drained
      stats->wakeups_block.Add(1);
    }
    Task* task = queue_.front();
    queue_.pop_front();
    depth_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
    const bool wake_producer = room_waiters_ > 0;
    mu_.Unlock();
    if (wake_producer) not_full_.Signal();
    TaskAccess::Next(task) = nullptr;
    stats->RunChain(task, 0, nullptr, nullptr, false);  // a chain of one
    mu_.Lock();
  }
}

void ClassicQueue::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  not_empty_.SignalAll();
  not_full_.SignalAll();
}

void ClassicQueue::NotifyRoom() {
  { MutexLock lock(&mu_); }
  not_full_.SignalAll();
}

}  // namespace rockcache::pool::internal
