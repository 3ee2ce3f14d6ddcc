// PubSubInbox: one network loop's queue of published messages for its subscribed connections.
//
// Post() (any thread) appends under a mutex and, when the queue was empty, wakes the loop through
// the inbox's own eventfd (the loop's event_base is not thread-safe; an eventfd write is). The
// loop thread then drains the whole queue in one pass: each message is appended to each
// receiver's output buffer (skipped when the receiver closed or no longer subscribes to the
// message's channel or pattern), and each touched connection is flushed once, where the pubsub
// class of client-output-buffer-limit cuts off a subscriber that does not keep up.
//
// Owned by its NetLoop; created by NetLoop::Listen (main thread) and freed before the loop's
// event_base.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "config/mutex.h"
#include "config/status.h"
#include "server/pubsub/pubsub.h"

struct event_base;
struct event;

namespace rockcache::server {

class NetLoop;

class PubSubInbox {
 public:
  explicit PubSubInbox(NetLoop* loop) : loop_(loop) {}
  ~PubSubInbox();
  PubSubInbox(const PubSubInbox&) = delete;
  PubSubInbox& operator=(const PubSubInbox&) = delete;

  // Main thread, before the loop runs.
  [[nodiscard]] Status Open(event_base* base);

  // Any thread. Never blocks on I/O (one short mutex hold).
  void Post(std::vector<PubSubDelivery> deliveries);

  // Loop thread, after reading a client's bytes and before parsing them: delivers what was
  // posted before they arrived (one acquire load when nothing was), so the invalidation or
  // message of a write acknowledged before the client sent its command precedes that command's
  // reply (server/tracking/tracking.h, order 3). True when it drained: it flushed and may have
  // closed connections, the reading one included, which the caller then looks up again.
  bool DrainPending() {
    if (!pending_.load(std::memory_order_acquire)) return false;
    Drain();
    return true;
  }

 private:
  static void OnWake(int fd, short events, void* arg);
  void Drain();  // loop thread

  NetLoop* const loop_;
  int wake_fd_ = -1;
  event* wake_event_ = nullptr;
  Mutex mu_;
  std::vector<PubSubDelivery> queue_ GUARDED_BY(mu_);
  std::atomic<bool> pending_{false};  // queue_ is not empty (set and cleared under mu_)
};

}  // namespace rockcache::server
