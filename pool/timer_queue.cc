#include "pool/timer_queue.h"

namespace rockcache::pool::internal {

bool TimerQueue::Add(Clock::time_point when, Task* task) {
  bool earliest;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return false;
    earliest = heap_.empty() || when < heap_.top().when;
    heap_.push(Entry{when, next_seq_++, task});
  }
  if (earliest) cv_.notify_one();  // the timer thread may be sleeping until a later deadline
  return true;
}

void TimerQueue::Run(const std::function<void(Task*)>& dispatch) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (heap_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const Clock::time_point when = heap_.top().when;
    if (Clock::now() < when) {
      cv_.wait_until(lock, when);  // woken early by Add (new earliest) or Stop
      continue;
    }
    Task* task = heap_.top().task;
    heap_.pop();
    lock.unlock();
    dispatch(task);
    lock.lock();
  }
}

void TimerQueue::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

std::vector<Task*> TimerQueue::TakePending() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Task*> pending;
  pending.reserve(heap_.size());
  while (!heap_.empty()) {
    pending.push_back(heap_.top().task);
    heap_.pop();
  }
  return pending;
}

size_t TimerQueue::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return heap_.size();
}

}  // namespace rockcache::pool::internal
