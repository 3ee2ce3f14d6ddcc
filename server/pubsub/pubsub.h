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
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/mutex.h"

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
  bool shard = false;              // an SPUBLISH (smessage): `source` is a shard channel
  std::vector<uint64_t> conn_ids;  // receivers on that loop, in subscription order
  // Client-side caching (server/tracking/tracking.h): an invalidation of these keys (every key
  // when invalidate_all) for the receivers, written in each one's protocol; `bytes` unused.
  std::shared_ptr<const std::vector<std::string>> invalidation;
  bool invalidate_all = false;
  // Not 0: the receivers track with REDIRECT to this client id, which is gone; each gets
  // redirect_broken_count tracking-redir-broken pushes (RESP3 only).
  uint64_t redirect_broken = 0;
  uint32_t redirect_broken_count = 0;
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

  // Shard channels (SSUBSCRIBE, SPUBLISH; Redis 7 outside cluster mode: one shard): a namespace
  // of their own, no patterns, messages as ["smessage", channel, message]. Same threads as the
  // plain ones above.
  void SSubscribe(std::string_view channel, uint64_t conn_id, uint32_t loop);
  void SUnsubscribe(std::string_view channel, uint64_t conn_id);
  int64_t SPublish(std::string_view channel, std::string_view message);
  std::vector<std::string> ShardChannels(std::string_view pattern) const;
  int64_t ShardNumSub(std::string_view channel) const;

  // Any thread.
  int64_t ChannelCount() const { return channel_count_.load(std::memory_order_relaxed); }
  int64_t PatternCount() const { return pattern_count_.load(std::memory_order_relaxed); }
  // PUBSUB CHANNELS [pattern]: active channels (empty pattern = all).
  std::vector<std::string> Channels(std::string_view pattern) const;
  // PUBSUB NUMSUB: subscribers of one channel.
  int64_t NumSub(std::string_view channel) const;

  // The keyspace-event classes somebody wants (server/pubsub/notify.h): this server's
  // notify-keyspace-events and, on a primary, the classes its replicas asked for
  // (AddShippedFlags). The gate of every event; one relaxed load per write.
  uint32_t notify_flags() const { return notify_flags_.load(std::memory_order_relaxed); }
  // This server's own notify-keyspace-events: what it publishes to its subscribers.
  uint32_t local_notify_flags() const { return local_flags_.load(std::memory_order_relaxed); }
  // The event classes written into the WAL for replicas (NoteForReplicas): what replicas
  // declared with REPLCONF rc-events since start (it only grows, so a replica that reconnects
  // after a cut still finds the events of what it missed).
  uint32_t shipped_flags() const { return shipped_flags_.load(std::memory_order_relaxed); }
  // A replica wants the events of `classes` (its notify-keyspace-events). Any thread.
  void AddShippedFlags(uint32_t classes);
  // Notes an encoded event (EncodeShippedEvent) into the calling thread's write group, if one is
  // open: it reaches replicas with the write that caused it. Any thread.
  void ShipEvent(std::string note);

  // ---- `expired` events (Redis emits one when a key is found expired on access, or removed by
  // the expiry cycle, and deletes the key then) ----
  // Main thread, at start-up: has `store` report the keys its reads find stored but expired.
  // While `expired` events are on, they are queued (at most kMaxExpiredSeen; beyond that the
  // sweep finds them in its own time).
  void WatchExpiries(storage::Store* store);
  // Worker (the expiry sweep): removes the queued keys that are still expired, each under its
  // key lock, announcing each with `expired`. Returns how many it removed.
  // `on_removed`, when set, is called with each key removed, under its key lock and inside its
  // database's DbScope.
  int64_t ReapExpired(storage::Store* store, cache::KeyLocks& locks,
                      const std::function<void(std::string_view key)>& on_removed = nullptr);
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
    mutable SharedMutex mu;
    SubscriberMap channels GUARDED_BY(mu);
  };
  Shard& ShardOf(std::string_view channel) const;
  // The registry of plain channels (shards_) or of shard channels (sharded_).
  struct Space {
    Shard* shards;
    std::atomic<int64_t>* count;
  };
  Space Plain() const { return Space{shards_, &channel_count_}; }
  Space Sharded() const { return Space{sharded_, &shard_channel_count_}; }
  static Shard& ShardIn(Space space, std::string_view channel);
  void Add(Space space, std::string_view channel, uint64_t conn_id, uint32_t loop);
  void Remove(Space space, std::string_view channel, uint64_t conn_id);
  std::vector<std::string> List(Space space, std::string_view pattern) const;
  int64_t Count(Space space, std::string_view channel) const;
  // Adds the deliveries of `channel`'s subscribers in `space` (kind: "message" / "smessage").
  int64_t DeliverTo(Space space, std::string_view kind, std::string_view channel,
                    std::string_view message, bool shard,
                    std::vector<std::vector<PubSubDelivery>>* per_loop) const;
  void PostAll(std::vector<std::vector<PubSubDelivery>>* per_loop);
  // Appends `subscribers` to the per-loop deliveries of one message.
  void AddDeliveries(const std::vector<Subscriber>& subscribers,
                     const std::shared_ptr<const std::string>& bytes, std::string_view source,
                     bool pattern, std::vector<std::vector<PubSubDelivery>>* per_loop) const;

  Server* const server_;
  mutable Shard shards_[kShards];
  mutable Shard sharded_[kShards];  // shard channels
  mutable SharedMutex patterns_mu_;
  SubscriberMap patterns_ GUARDED_BY(patterns_mu_);
  mutable std::atomic<int64_t> channel_count_{0};
  mutable std::atomic<int64_t> shard_channel_count_{0};
  std::atomic<int64_t> pattern_count_{0};
  std::atomic<uint32_t> notify_flags_{0};  // local_flags_ | shipped_flags_
  std::atomic<uint32_t> local_flags_{0};
  std::atomic<uint32_t> shipped_flags_{0};
  Mutex flags_mu_;  // serializes the updates of the three
  void UpdateFlags(uint32_t local, uint32_t shipped) EXCLUDES(flags_mu_);
  static constexpr size_t kMaxExpiredSeen = 1024;
  Mutex expired_mu_;
  // (physical database, key) pairs.
  std::vector<std::pair<int, std::string>> expired_seen_ GUARDED_BY(expired_mu_);
};

}  // namespace rockcache::server
