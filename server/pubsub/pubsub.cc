#include "server/pubsub/pubsub.h"

#include <algorithm>
#include <functional>
#include <mutex>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "config/config.h"
#include "config/current_db.h"
#include "config/glob.h"
#include "server/net_loop.h"
#include "server/protocol/reply.h"
#include "server/pubsub/inbox.h"
#include "server/pubsub/notify.h"
#include "server/server.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using Subscribers = std::vector<std::pair<uint64_t, uint32_t>>;

template <typename List>
void EraseConn(List* list, uint64_t conn_id) {
  auto it = std::find_if(list->begin(), list->end(),
                         [conn_id](const auto& s) { return s.conn_id == conn_id; });
  if (it != list->end()) list->erase(it);
}

}  // namespace

PubSub::PubSub(Server* server, config::Config* config) : server_(server) {
  UpdateFlags(ParseNotifyFlags(config->Get("notify-keyspace-events")), 0);
  config->OnChange([this](const std::string& name, const std::string& value) {
    if (name == "notify-keyspace-events") UpdateFlags(ParseNotifyFlags(value), 0);
  });
}

void PubSub::UpdateFlags(uint32_t local, uint32_t shipped) {
  MutexLock lock(&flags_mu_);
  local_flags_.store(local, std::memory_order_relaxed);
  const uint32_t all = shipped_flags_.fetch_or(shipped, std::memory_order_relaxed) | shipped;
  notify_flags_.store(local | all, std::memory_order_relaxed);
}

void PubSub::AddShippedFlags(uint32_t classes) {
  // Only event classes: K/E say how this server publishes; keymiss and evicted are never
  // shipped (a read's miss is the replica's own; nothing is evicted).
  classes &= ~(kNotifyKeyspace | kNotifyKeyevent | kNotifyKeyMiss | kNotifyEvicted);
  if ((shipped_flags() & classes) == classes) return;
  UpdateFlags(local_notify_flags(), classes);
}

PubSub::Shard& PubSub::ShardOf(std::string_view channel) const { return ShardIn(Plain(), channel); }

PubSub::Shard& PubSub::ShardIn(Space space, std::string_view channel) {
  return space.shards[std::hash<std::string_view>()(channel) % kShards];
}

void PubSub::Add(Space space, std::string_view channel, uint64_t conn_id, uint32_t loop) {
  Shard& shard = ShardIn(space, channel);
  WriterMutexLock lock(&shard.mu);
  auto [it, inserted] = shard.channels.try_emplace(std::string(channel));
  if (inserted) space.count->fetch_add(1, std::memory_order_relaxed);
  it->second.push_back(Subscriber{conn_id, loop});
}

void PubSub::Remove(Space space, std::string_view channel, uint64_t conn_id) {
  Shard& shard = ShardIn(space, channel);
  WriterMutexLock lock(&shard.mu);
  auto it = shard.channels.find(std::string(channel));
  if (it == shard.channels.end()) return;
  EraseConn(&it->second, conn_id);
  if (it->second.empty()) {
    shard.channels.erase(it);
    space.count->fetch_sub(1, std::memory_order_relaxed);
  }
}

void PubSub::Subscribe(std::string_view channel, uint64_t conn_id, uint32_t loop) {
  Add(Plain(), channel, conn_id, loop);
}
void PubSub::Unsubscribe(std::string_view channel, uint64_t conn_id) {
  Remove(Plain(), channel, conn_id);
}
void PubSub::SSubscribe(std::string_view channel, uint64_t conn_id, uint32_t loop) {
  Add(Sharded(), channel, conn_id, loop);
}
void PubSub::SUnsubscribe(std::string_view channel, uint64_t conn_id) {
  Remove(Sharded(), channel, conn_id);
}

void PubSub::PSubscribe(std::string_view pattern, uint64_t conn_id, uint32_t loop) {
  WriterMutexLock lock(&patterns_mu_);
  auto [it, inserted] = patterns_.try_emplace(std::string(pattern));
  if (inserted) pattern_count_.fetch_add(1, std::memory_order_relaxed);
  it->second.push_back(Subscriber{conn_id, loop});
}

void PubSub::PUnsubscribe(std::string_view pattern, uint64_t conn_id) {
  WriterMutexLock lock(&patterns_mu_);
  auto it = patterns_.find(std::string(pattern));
  if (it == patterns_.end()) return;
  EraseConn(&it->second, conn_id);
  if (it->second.empty()) {
    patterns_.erase(it);
    pattern_count_.fetch_sub(1, std::memory_order_relaxed);
  }
}

void PubSub::AddDeliveries(const std::vector<Subscriber>& subscribers,
                           const std::shared_ptr<const std::string>& bytes, std::string_view source,
                           bool pattern, std::vector<std::vector<PubSubDelivery>>* per_loop) const {
  for (const Subscriber& s : subscribers) {
    if (s.loop >= per_loop->size()) continue;
    std::vector<PubSubDelivery>& deliveries = (*per_loop)[s.loop];
    if (deliveries.empty() || deliveries.back().bytes != bytes) {
      PubSubDelivery delivery;
      delivery.bytes = bytes;
      delivery.source.assign(source);
      delivery.pattern = pattern;
      deliveries.push_back(std::move(delivery));
    }
    deliveries.back().conn_ids.push_back(s.conn_id);
  }
}

int64_t PubSub::DeliverTo(Space space, std::string_view kind, std::string_view channel,
                          std::string_view message, bool shard,
                          std::vector<std::vector<PubSubDelivery>>* per_loop) const {
  Shard& sh = ShardIn(space, channel);
  ReaderMutexLock lock(&sh.mu);
  auto it = sh.channels.find(std::string(channel));
  if (it == sh.channels.end()) return 0;
  auto bytes = std::make_shared<std::string>();
  AppendArrayHeader(bytes.get(), 3);
  AppendBulk(bytes.get(), kind);
  AppendBulk(bytes.get(), channel);
  AppendBulk(bytes.get(), message);
  std::shared_ptr<const std::string> shared = std::move(bytes);
  AddDeliveries(it->second, shared, channel, /*pattern=*/false, per_loop);
  if (shard) {
    for (auto& deliveries : *per_loop) {
      if (!deliveries.empty() && deliveries.back().bytes == shared) deliveries.back().shard = true;
    }
  }
  return static_cast<int64_t>(it->second.size());
}

void PubSub::PostAll(std::vector<std::vector<PubSubDelivery>>* per_loop) {
  for (size_t i = 0; i < per_loop->size(); ++i) {
    if (!(*per_loop)[i].empty()) {
      server_->loop(static_cast<uint32_t>(i))->pubsub_inbox().Post(std::move((*per_loop)[i]));
    }
  }
}

int64_t PubSub::Publish(std::string_view channel, std::string_view message) {
  std::vector<std::vector<PubSubDelivery>> per_loop(server_->loop_count());
  int64_t receivers = DeliverTo(Plain(), "message", channel, message, false, &per_loop);
  if (pattern_count_.load(std::memory_order_relaxed) > 0) {
    ReaderMutexLock lock(&patterns_mu_);
    for (const auto& [pattern, subscribers] : patterns_) {
      if (!GlobMatch(pattern, channel)) continue;
      auto bytes = std::make_shared<std::string>();
      AppendArrayHeader(bytes.get(), 4);
      AppendBulk(bytes.get(), "pmessage");
      AppendBulk(bytes.get(), pattern);
      AppendBulk(bytes.get(), channel);
      AppendBulk(bytes.get(), message);
      std::shared_ptr<const std::string> shared = std::move(bytes);
      AddDeliveries(subscribers, shared, pattern, /*pattern=*/true, &per_loop);
      receivers += static_cast<int64_t>(subscribers.size());
    }
  }
  PostAll(&per_loop);
  return receivers;
}

int64_t PubSub::SPublish(std::string_view channel, std::string_view message) {
  std::vector<std::vector<PubSubDelivery>> per_loop(server_->loop_count());
  const int64_t receivers = DeliverTo(Sharded(), "smessage", channel, message, true, &per_loop);
  PostAll(&per_loop);
  return receivers;
}

std::vector<std::string> PubSub::List(Space space, std::string_view pattern) const {
  std::vector<std::string> out;
  for (size_t i = 0; i < kShards; ++i) {
    const Shard& shard = space.shards[i];
    ReaderMutexLock lock(&shard.mu);
    for (const auto& [channel, subscribers] : shard.channels) {
      if (pattern.empty() || GlobMatch(pattern, channel)) out.push_back(channel);
    }
  }
  return out;
}

std::vector<std::string> PubSub::Channels(std::string_view pattern) const {
  return List(Plain(), pattern);
}
std::vector<std::string> PubSub::ShardChannels(std::string_view pattern) const {
  return List(Sharded(), pattern);
}

namespace {
// Set while the sweep itself reads metas: the keys it finds expired it handles itself.
thread_local bool t_reaping = false;
}  // namespace

PubSub::SweepScope::SweepScope() { t_reaping = true; }
PubSub::SweepScope::~SweepScope() { t_reaping = false; }

void PubSub::WatchExpiries(storage::Store* store) {
  store->SetExpiredObserver([this](std::string_view key) {
    // Client-side caches drop a key when it expires, as Redis invalidates on expiry.
    if (server_->tracking().active()) server_->tracking().Invalidate({key});
    const uint32_t flags = notify_flags();
    if (t_reaping || !(flags & kNotifyExpired) || !(flags & (kNotifyKeyspace | kNotifyKeyevent))) {
      return;
    }
    MutexLock lock(&expired_mu_);
    if (expired_seen_.size() < kMaxExpiredSeen) expired_seen_.emplace_back(CurrentDb(), key);
  });
}

int64_t PubSub::ReapExpired(storage::Store* store, cache::KeyLocks& locks,
                            const std::function<void(std::string_view key)>& on_removed) {
  std::vector<std::pair<int, std::string>> keys;
  {
    MutexLock lock(&expired_mu_);
    keys.swap(expired_seen_);
  }
  int64_t removed = 0;
  SweepScope sweeping;
  for (const auto& [physical_db, key] : keys) {
    auto guard = locks.Lock(key);
    DbScope scope(physical_db);
    // The deletion and its event for replicas in one batch (NotifyExpired).
    std::unique_ptr<storage::WriteGroup> group = store->OpenWriteGroup();
    auto deleted = store->DeleteIfExpired(key);
    if (!deleted.ok() || !*deleted) continue;
    ++removed;
    NotifyExpired(key);
    if (!group->Commit().ok()) continue;
    if (on_removed) on_removed(key);
  }
  return removed;
}

void PubSub::ShipEvent(std::string note) { server_->store()->NoteForReplicas(std::move(note)); }

void PubSub::NotifyExpired(std::string_view key) {
  // Called inside the DbScope of the key's physical database (sweep or ReapExpired), with the
  // write group of the deletion open: a Redis primary propagates an expired key as a DEL, so a
  // replica fires "del" for it (class g), and this server "expired".
  const int db = server_->store()->LogicalDb(CurrentDb());
  if (const uint32_t local = local_notify_flags(); local & kNotifyExpired) {
    PublishKeyspaceEventLocally(*this, local, kNotifyExpired, "expired", key, db);
  }
  if (shipped_flags() & kNotifyGeneric) {
    ShipEvent(EncodeShippedEvent(kNotifyGeneric, "del", key, db));
  }
}

int64_t PubSub::Count(Space space, std::string_view channel) const {
  const Shard& shard = ShardIn(space, channel);
  ReaderMutexLock lock(&shard.mu);
  auto it = shard.channels.find(std::string(channel));
  return it == shard.channels.end() ? 0 : static_cast<int64_t>(it->second.size());
}

int64_t PubSub::NumSub(std::string_view channel) const { return Count(Plain(), channel); }
int64_t PubSub::ShardNumSub(std::string_view channel) const { return Count(Sharded(), channel); }

}  // namespace rockcache::server
