// PubSub: the server-wide registry of channel and pattern subscriptions, PUBLISH's fan-out across
// network loops, and the keyspace-notification switch (notify-keyspace-events).
//
// Who calls what:
// - Subscribe/Unsubscribe/PSubscribe/PUnsubscribe: the subscriber's own network thread (SUBSCRIBE
//   and friends are kConnection commands; a closing connection drops its subscriptions).
// - Publish, counts and listings: any thread (PUBLISH on a network thread, keyspace events on
//   workers and the expiry sweep).
//
// Locks: channels live in kShards hash shards, each under its own reader-writer lock; patterns
// under one reader-writer lock (PUBLISH must match every pattern anyway, as Redis does). Publish
// holds a shard's lock in shared mode only while it copies the subscribers' ids, never while it
// writes a socket: the message bytes go to each subscriber loop's PubSubInbox (one post per
// loop per PUBLISH, carrying the ids of that loop's receivers), and that loop writes them. So a
// publisher never waits on a slow subscriber, and a subscriber on any loop hears every publisher.
//
// Ordering: one publisher's messages reach each subscriber in publish order (each loop's inbox is
// FIFO). A subscription is in the registry before its SUBSCRIBE reply is written, so a message
// published after the client saw the reply reaches it. After UNSUBSCRIBE's reply no message of
// that channel is delivered: the loop drops a queued message whose channel (or pattern) the
// connection no longer has.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rockcache::config {
class Config;
}
namespace rockcache::storage {
class Store;
}
namespace rockcache::cache {
class KeyLocks;
}

namespace rockcache::server {

class Server;

// One PUBLISH's message for the receivers on one loop.
struct PubSubDelivery {
  std::shared_ptr<const std::string> bytes;  // the whole RESP message, shared by all receivers
  std::string source;                        // the channel, or the pattern for a pmessage
  bool pattern = false;
  std::vector<uint64_t> conn_ids;  // receivers on that loop, in subscription order
};

class PubSub {
 public:
  // Registers an OnChange callback on `config` for notify-keyspace-events.
  PubSub(Server* server, config::Config* config);
  PubSub(const PubSub&) = delete;
  PubSub& operator=(const PubSub&) = delete;

  // ---- the subscriber's network thread; the caller keeps per-connection membership, so each
  // (connection, channel) pair is added at most once and removed only when present ----
  void Subscribe(std::string_view channel, uint64_t conn_id, uint32_t loop);
  void Unsubscribe(std::string_view channel, uint64_t conn_id);
  void PSubscribe(std::string_view pattern, uint64_t conn_id, uint32_t loop);
  void PUnsubscribe(std::string_view pattern, uint64_t conn_id);

  // Any thread; never blocks on I/O. Queues the message for every subscriber of `channel` and
  // every subscription of a matching pattern; returns how many that is (PUBLISH's reply).
  int64_t Publish(std::string_view channel, std::string_view message);

  // Any thread.
  int64_t ChannelCount() const { return channel_count_.load(std::memory_order_relaxed); }
  int64_t PatternCount() const { return pattern_count_.load(std::memory_order_relaxed); }
  // PUBSUB CHANNELS [pattern]: active channels (empty pattern = all).
  std::vector<std::string> Channels(std::string_view pattern) const;
  // PUBSUB NUMSUB: subscribers of one channel.
  int64_t NumSub(std::string_view channel) const;

  // The notify-keyspace-events classes (server/pubsub/notify.h); one relaxed load per write.
  uint32_t notify_flags() const { return notify_flags_.load(std::memory_order_relaxed); }

  // ---- `expired` events (Redis emits one when a key is found expired on access, or removed by
  // the expiry cycle, and deletes the key then) ----
  // Main thread, at start-up: has `store` report the keys its reads find stored but expired.
  // While `expired` events are on, they are queued (at most kMaxExpiredSeen; beyond that the
  // sweep finds them in its own time).
  void WatchExpiries(storage::Store* store);
  // Worker (the expiry sweep): removes the queued keys that are still expired, each under its
  // key lock, announcing each with `expired`. Returns how many it removed.
  int64_t ReapExpired(storage::Store* store, cache::KeyLocks& locks);
  // Announces a key the sweep removed. Any thread.
  void NotifyExpired(std::string_view key);
  // Held by the expiry sweep on its thread: the expired keys its own reads find are not queued.
  class SweepScope {
   public:
    SweepScope();
    ~SweepScope();
    SweepScope(const SweepScope&) = delete;
    SweepScope& operator=(const SweepScope&) = delete;
  };

 private:
  struct Subscriber {
    uint64_t conn_id;
    uint32_t loop;
  };
  using SubscriberMap = std::unordered_map<std::string, std::vector<Subscriber>>;
  static constexpr size_t kShards = 16;
  struct alignas(64) Shard {
    mutable std::shared_mutex mu;
    SubscriberMap channels;  // GUARDED_BY(mu)
  };
  Shard& ShardOf(std::string_view channel) const;
  // Appends `subscribers` to the per-loop deliveries of one message.
  void AddDeliveries(const std::vector<Subscriber>& subscribers,
                     const std::shared_ptr<const std::string>& bytes, std::string_view source,
                     bool pattern, std::vector<std::vector<PubSubDelivery>>* per_loop) const;

  Server* const server_;
  mutable Shard shards_[kShards];
  mutable std::shared_mutex patterns_mu_;
  SubscriberMap patterns_;  // GUARDED_BY(patterns_mu_)
  std::atomic<int64_t> channel_count_{0};
  std::atomic<int64_t> pattern_count_{0};
  std::atomic<uint32_t> notify_flags_{0};
  static constexpr size_t kMaxExpiredSeen = 1024;
  std::mutex expired_mu_;
  // (physical database, key) pairs. GUARDED_BY(expired_mu_)
  std::vector<std::pair<int, std::string>> expired_seen_;
};

}  // namespace rockcache::server
