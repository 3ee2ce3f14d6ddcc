#include "server/client_registry.h"

#include <algorithm>

namespace rockcache::server {

bool ClientRegistry::TryAdd(std::shared_ptr<ClientInfo> info, size_t max_clients) {
  MutexLock lock(&mu_);
  if (clients_.size() >= max_clients) return false;
  clients_.emplace(info->id, std::move(info));
  return true;
}

void ClientRegistry::Remove(uint64_t id) {
  MutexLock lock(&mu_);
  clients_.erase(id);
}

std::shared_ptr<ClientInfo> ClientRegistry::Find(uint64_t id) const {
  MutexLock lock(&mu_);
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<ClientInfo>> ClientRegistry::Snapshot() const {
  std::vector<std::shared_ptr<ClientInfo>> out;
  {
    MutexLock lock(&mu_);
    out.reserve(clients_.size());
    for (const auto& [id, info] : clients_) out.push_back(info);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->id < b->id; });
  return out;
}

size_t ClientRegistry::size() const {
  MutexLock lock(&mu_);
  return clients_.size();
}

}  // namespace rockcache::server
