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

 private:
  static void OnWake(int fd, short events, void* arg);
  void Drain();  // loop thread

  NetLoop* const loop_;
  int wake_fd_ = -1;
  event* wake_event_ = nullptr;
  Mutex mu_;
  std::vector<PubSubDelivery> queue_ GUARDED_BY(mu_);
};

}  // namespace rockcache::server
