#include "server/blocking/wait_registry.h"

#include <algorithm>

namespace rockcache::server {

std::string WaitRegistry::MapKey(int db, std::string_view key) {
  std::string k = std::to_string(db);
  k.push_back(':');
  k.append(key);
  return k;
}

bool WaitRegistry::Add(const std::shared_ptr<Waiter>& waiter) {
  MutexLock lock(&mu_);
  WaitState expected = WaitState::kPending;
  if (!waiter->state.compare_exchange_strong(expected, WaitState::kWaiting)) return false;
  for (const auto& key : waiter->keys) by_key_[MapKey(waiter->db, key)].push_back(waiter);
  by_client_[waiter->client_id] = waiter;
  waiter->info->blocked.store(true, std::memory_order_relaxed);
  waiting_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void WaitRegistry::Unqueue(Waiter* waiter) {
  for (const auto& key : waiter->keys) {
    auto it = by_key_.find(MapKey(waiter->db, key));
    if (it == by_key_.end()) continue;
    auto& queue = it->second;
    queue.erase(std::remove_if(queue.begin(), queue.end(),
                               [&](const std::shared_ptr<Waiter>& w) { return w.get() == waiter; }),
                queue.end());
    if (queue.empty()) by_key_.erase(it);
  }
  auto it = by_client_.find(waiter->client_id);
  if (it != by_client_.end() && it->second.get() == waiter) by_client_.erase(it);
  waiter->info->blocked.store(false, std::memory_order_relaxed);
  waiting_.fetch_sub(1, std::memory_order_relaxed);
}

bool WaitRegistry::Finish(Waiter* waiter, WaitState to) {
  WaitState expected = WaitState::kWaiting;
  if (!waiter->state.compare_exchange_strong(expected, to)) return false;
  MutexLock lock(&mu_);
  Unqueue(waiter);
  return true;
}

bool WaitRegistry::TimeOut(Waiter* waiter) {
  WaitState expected = WaitState::kPending;
  if (waiter->state.compare_exchange_strong(expected, WaitState::kExpired)) return false;
  return Finish(waiter, WaitState::kTimedOut);
}

void WaitRegistry::Abandon(Waiter* waiter) {
  WaitState expected = WaitState::kPending;
  if (waiter->state.compare_exchange_strong(expected, WaitState::kGone)) return;
  Finish(waiter, WaitState::kGone);
}

std::shared_ptr<Waiter> WaitRegistry::FindByClient(uint64_t client_id) const {
  MutexLock lock(&mu_);
  auto it = by_client_.find(client_id);
  return it == by_client_.end() ? nullptr : it->second;
}

bool WaitRegistry::HasWaiters(int db, std::string_view key) const {
  MutexLock lock(&mu_);
  return by_key_.count(MapKey(db, key)) != 0;
}

std::vector<std::pair<int, std::string>> WaitRegistry::GroupReadKeys() const {
  std::vector<std::pair<int, std::string>> out;
  MutexLock lock(&mu_);
  for (const auto& [client, waiter] : by_client_) {
    if (waiter->op.kind != WaitOp::Kind::kStreamGroupRead) continue;
    for (const auto& key : waiter->keys) out.emplace_back(waiter->db, key);
  }
  return out;
}

std::vector<std::pair<int, std::string>> WaitRegistry::WaitedKeys() const {
  std::vector<std::pair<int, std::string>> out;
  MutexLock lock(&mu_);
  for (const auto& [client, waiter] : by_client_) {
    for (const auto& key : waiter->keys) out.emplace_back(waiter->db, key);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::shared_ptr<Waiter>> WaitRegistry::All() const {
  std::vector<std::shared_ptr<Waiter>> out;
  MutexLock lock(&mu_);
  out.reserve(by_client_.size());
  for (const auto& [client, waiter] : by_client_) out.push_back(waiter);
  return out;
}

std::vector<std::shared_ptr<Waiter>> WaitRegistry::WaitersOn(int db, std::string_view key) const {
  MutexLock lock(&mu_);
  auto it = by_key_.find(MapKey(db, key));
  if (it == by_key_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

}  // namespace rockcache::server
