#include "pool/classic_queue.h"

#include <thread>

namespace rockcache::pool::internal {

bool ClassicQueue::Push(Task* task, bool may_wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (may_wait) {
    auto size = [this] { return static_cast<int64_t>(queue_.size()); };
    auto max = [this] { return tunables_->queue_max_size.load(std::memory_order_relaxed); };
    if (!stop_ && size() > tunables_->queue_slow_size.load(std::memory_order_relaxed) &&
        size() < max()) {
      counters_.producer_yields.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    }
    // Checked under mu_ right before the push: the bound is exact.
    if (!stop_ && size() >= max()) {
      counters_.producer_waits.fetch_add(1, std::memory_order_relaxed);
      ++room_waiters_;
      not_full_.wait(lock, [&] { return size() < max() || stop_; });
      --room_waiters_;
    }
  }
  if (stop_) return false;
  TaskAccess::EnqueueNs(task) = NowNs();
  queue_.push_back(task);
  const auto depth = static_cast<int64_t>(queue_.size());
  depth_.store(depth, std::memory_order_relaxed);
  lock.unlock();
  not_empty_.notify_one();
  counters_.NoteDepth(depth);
  return true;
}

void ClassicQueue::RunWorker(WorkerStats* stats) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (queue_.empty()) {
      if (stop_) return;
      not_empty_.wait(lock, [this] { return !queue_.empty() || stop_; });
      if (queue_.empty()) return;  // stopped and drained
      stats->wakeups_block.Add(1);
    }
    Task* task = queue_.front();
    queue_.pop_front();
    depth_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
    const bool wake_producer = room_waiters_ > 0;
    lock.unlock();
    if (wake_producer) not_full_.notify_one();
    TaskAccess::Next(task) = nullptr;
    stats->RunChain(task, 0, nullptr, nullptr, false);  // a chain of one
    lock.lock();
  }
}

void ClassicQueue::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  not_empty_.notify_all();
  not_full_.notify_all();
}

void ClassicQueue::NotifyRoom() {
  { std::lock_guard<std::mutex> lock(mu_); }
  not_full_.notify_all();
}

}  // namespace rockcache::pool::internal
