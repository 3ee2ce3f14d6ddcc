#include "server/tracking/tracking.h"

#include <memory>
#include <utility>

#include "server/net_loop.h"
#include "server/pubsub/pubsub.h"
#include "server/server.h"

namespace rockcache::server {

void Tracking::Enable(uint64_t id, uint32_t loop, TrackingOptions options) {
  MutexLock lock(&clients_mu_);
  auto [it, added] = clients_.try_emplace(id);
  it->second.loop = loop;
  it->second.options = std::move(options);
  it->second.broken_redirect = false;
  if (added) clients_count_.fetch_add(1, std::memory_order_relaxed);
}

void Tracking::Disable(uint64_t id) {
  MutexLock lock(&clients_mu_);
  if (clients_.erase(id) > 0) clients_count_.fetch_sub(1, std::memory_order_relaxed);
}

bool Tracking::Options(uint64_t id, TrackingOptions* options, bool* broken_redirect) const {
  MutexLock lock(&clients_mu_);
  auto it = clients_.find(id);
  if (it == clients_.end()) return false;
  *options = it->second.options;
  if (broken_redirect != nullptr) *broken_redirect = it->second.broken_redirect;
  return true;
}

void Tracking::Record(uint64_t id, const std::vector<std::string_view>& keys) {
  const uint64_t max_keys =
      server_->settings().tracking_table_max_keys.load(std::memory_order_relaxed);
  for (std::string_view key : keys) {
    Shard& shard = ShardOf(key);
    MutexLock lock(&shard.mu);
    auto it = shard.readers.find(std::string(key));
    if (it == shard.readers.end()) {
      // Past the limit: another key of this shard leaves the table, its readers told (under the
      // shard's lock, as Invalidate sends).
      if (max_keys > 0 && keys_.load(std::memory_order_relaxed) >= max_keys &&
          !shard.readers.empty()) {
        auto victim = shard.readers.begin();
        std::unordered_map<uint64_t, std::vector<std::string>> evicted;
        for (uint64_t reader : victim->second) evicted[reader].push_back(victim->first);
        items_.fetch_sub(victim->second.size(), std::memory_order_relaxed);
        keys_.fetch_sub(1, std::memory_order_relaxed);
        shard.readers.erase(victim);
        Send(evicted, /*all=*/false);
      }
      it = shard.readers.try_emplace(std::string(key)).first;
      keys_.fetch_add(1, std::memory_order_relaxed);
    }
    if (it->second.insert(id).second) items_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Tracking::Invalidate(const std::vector<std::string_view>& keys) {
  if (!active()) return;
  const uint64_t writer = WriterScope::current();
  for (std::string_view key : keys) {
    Shard& shard = ShardOf(key);
    MutexLock lock(&shard.mu);
    auto it = shard.readers.find(std::string(key));
    if (it == shard.readers.end()) continue;
    std::unordered_map<uint64_t, std::vector<std::string>> readers;
    for (uint64_t reader : it->second) readers[reader].emplace_back(key);
    items_.fetch_sub(it->second.size(), std::memory_order_relaxed);
    keys_.fetch_sub(1, std::memory_order_relaxed);
    shard.readers.erase(it);
    // Posted before the shard unlocks: a later lookup of this key that finds no reader (and
    // whose write may then be acknowledged at once) comes after this message is in the inbox
    // ("Ordering" in tracking.h).
    Send(readers, /*all=*/false, writer);
  }
  std::unordered_map<uint64_t, std::vector<std::string>> targets;
  {
    MutexLock lock(&clients_mu_);
    for (const auto& [id, client] : clients_) {
      if (!client.options.bcast) continue;
      for (std::string_view key : keys) {
        bool match = client.options.prefixes.empty();
        for (const std::string& prefix : client.options.prefixes) {
          if (key.substr(0, prefix.size()) == prefix) match = true;
        }
        if (match) targets[id].emplace_back(key);
      }
    }
  }
  if (!targets.empty()) Send(targets, /*all=*/false, writer);
}

void Tracking::InvalidateAll() {
  if (!active()) return;
  for (Shard& shard : shards_) {
    MutexLock lock(&shard.mu);
    shard.readers.clear();
  }
  keys_.store(0, std::memory_order_relaxed);
  items_.store(0, std::memory_order_relaxed);
  std::unordered_map<uint64_t, std::vector<std::string>> targets;
  {
    MutexLock lock(&clients_mu_);
    for (const auto& entry : clients_) targets[entry.first];
  }
  Send(targets, /*all=*/true);
}

void Tracking::Send(const std::unordered_map<uint64_t, std::vector<std::string>>& targets, bool all,
                    uint64_t writer) {
  // Per receiving loop, one delivery per receiver (its keys differ).
  std::unordered_map<uint32_t, std::vector<PubSubDelivery>> per_loop;
  {
    MutexLock lock(&clients_mu_);
    for (const auto& [id, keys] : targets) {
      auto it = clients_.find(id);
      if (it == clients_.end()) continue;                       // stopped tracking since it read
      if (id == writer && it->second.options.noloop) continue;  // its own write
      uint64_t receiver = id;
      uint32_t loop = it->second.loop;
      if (it->second.options.redirect != 0) {
        receiver = it->second.options.redirect;
        std::shared_ptr<ClientInfo> info = server_->clients().Find(receiver);
        if (info == nullptr) {
          // The redirect client is gone (Redis 7.0): tracking stays on, CLIENT TRACKINGINFO
          // shows broken_redirect, and a RESP3 client gets a tracking-redir-broken push in
          // place of each invalidation message (one per key, as Redis sends them).
          it->second.broken_redirect = true;
          PubSubDelivery delivery;
          delivery.redirect_broken = receiver;
          delivery.redirect_broken_count = all ? 1 : static_cast<uint32_t>(keys.size());
          delivery.conn_ids.push_back(id);
          per_loop[loop].push_back(std::move(delivery));
          continue;
        }
        loop = info->loop_index;
      }
      PubSubDelivery delivery;
      delivery.invalidation = std::make_shared<std::vector<std::string>>(keys);
      delivery.invalidate_all = all;
      delivery.conn_ids.push_back(receiver);
      per_loop[loop].push_back(std::move(delivery));
    }
  }
  for (auto& [loop, deliveries] : per_loop) {
    server_->loop(loop)->pubsub_inbox().Post(std::move(deliveries));
  }
}

Tracking::Counts Tracking::counts() const {
  Counts counts;
  counts.keys = keys_.load(std::memory_order_relaxed);
  counts.items = items_.load(std::memory_order_relaxed);
  MutexLock lock(&clients_mu_);
  counts.clients = clients_.size();
  for (const auto& entry : clients_) counts.prefixes += entry.second.options.prefixes.size();
  return counts;
}

}  // namespace rockcache::server
