// Helpers for the pool's tests and benchmark (header only, not part of the API): a Task built
// from lambdas, a gate that holds workers, a one-shot signal with a timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "pool/worker_pool.h"

namespace rockcache::pool::testing {

// Sanitizer builds run the stress loops this many times fewer iterations.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kSlowdown = 2;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
constexpr int kSlowdown = 2;
#else
constexpr int kSlowdown = 1;
#endif
#else
constexpr int kSlowdown = 1;
#endif

class FnTask : public Task {
 public:
  explicit FnTask(std::function<void()> run, std::function<void()> cancel = nullptr)
      : run_(std::move(run)), cancel_(std::move(cancel)) {}
  void Run() override { run_(); }
  void Cancel() override {
    if (cancel_) cancel_();
  }

 private:
  std::function<void()> run_;
  std::function<void()> cancel_;
};

template <typename Run>
std::unique_ptr<Task> MakeTask(Run run) {
  return std::make_unique<FnTask>(std::move(run));
}

template <typename Run, typename Cancel>
std::unique_ptr<Task> MakeTask(Run run, Cancel cancel) {
  return std::make_unique<FnTask>(std::move(run), std::move(cancel));
}

// A flag that threads wait on until someone sets it. Thread-safe.
class Signal {
 public:
  // Notifies under the lock, so a waiter cannot return (and free the Signal) before it is done.
  void Set() {
    std::lock_guard<std::mutex> lock(mu_);
    set_ = true;
    cv_.notify_all();
  }
  // Blocks until Set() or the timeout; true if set.
  bool WaitFor(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return set_; });
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return set_; });
  }
  bool IsSet() {
    std::lock_guard<std::mutex> lock(mu_);
    return set_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool set_ = false;
};

// Polls `pred` every 100 µs until it holds or `timeout` passes; returns its last value.
template <typename Pred>
bool Eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return pred();
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

inline const char* ModeName(Mode mode) { return mode == Mode::kAdaptive ? "adaptive" : "classic"; }

}  // namespace rockcache::pool::testing
