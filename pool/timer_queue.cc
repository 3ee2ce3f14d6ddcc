#include "pool/timer_queue.h"

namespace rockcache::pool::internal {

bool TimerQueue::Add(Clock::time_point when, Task* task) {
  bool earliest;
  {
    MutexLock lock(&mu_);
    if (stop_) return false;
    earliest = heap_.empty() || when < heap_.top().when;
    heap_.push(Entry{when, next_seq_++, task});
  }
  if (earliest) cv_.Signal();  // the timer thread may be sleeping until a later deadline
  return true;
}

void TimerQueue::Run(const std::function<void(Task*)>& dispatch) {
  MutexLock lock(&mu_);
  while (!stop_) {
    if (heap_.empty()) {
      cv_.Wait(&mu_);
      continue;
    }
    const Clock::time_point when = heap_.top().when;
    if (Clock::now() < when) {
      cv_.WaitUntil(&mu_, when);  // woken early by Add (new earliest) or Stop
      continue;
    }
    Task* task = heap_.top().task;
    heap_.pop();
    mu_.Unlock();
    dispatch(task);
    mu_.Lock();
  }
}

void TimerQueue::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
}

std::vector<Task*> TimerQueue::TakePending() {
  MutexLock lock(&mu_);
  std::vector<Task*> pending;
  pending.reserve(heap_.size());
  while (!heap_.empty()) {
    pending.push_back(heap_.top().task);
    heap_.pop();
  }
  return pending;
}

size_t TimerQueue::size() const {
  MutexLock lock(&mu_);
  return heap_.size();
}

}  // namespace rockcache::pool::internal
