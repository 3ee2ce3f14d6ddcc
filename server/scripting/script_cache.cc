#include "server/scripting/script_cache.h"

namespace rockcache::server::scripting {

void ScriptCache::Add(const std::string& sha, std::string_view body, uint64_t max_bytes) {
  MutexLock lock(&mu_);
  if (scripts_.count(sha) != 0) return;
  scripts_.emplace(sha, std::make_shared<const std::string>(body));
  order_.push_back(sha);
  bytes_ += body.size() + sha.size();
  EvictLocked(max_bytes);
}

std::shared_ptr<const std::string> ScriptCache::Find(const std::string& sha) const {
  MutexLock lock(&mu_);
  auto it = scripts_.find(sha);
  if (it == scripts_.end()) return nullptr;
  return it->second;
}

bool ScriptCache::Exists(std::string_view sha) const {
  MutexLock lock(&mu_);
  return scripts_.count(std::string(sha)) != 0;
}

void ScriptCache::Flush() {
  MutexLock lock(&mu_);
  scripts_.clear();
  order_.clear();
  bytes_ = 0;
  generation_.fetch_add(1, std::memory_order_release);
}

size_t ScriptCache::count() const {
  MutexLock lock(&mu_);
  return scripts_.size();
}

uint64_t ScriptCache::bytes() const {
  MutexLock lock(&mu_);
  return bytes_;
}

void ScriptCache::EvictLocked(uint64_t max_bytes) {
  // The newest script always stays, however big: EVAL of it is running.
  while (bytes_ > max_bytes && order_.size() > 1) {
    auto it = scripts_.find(order_.front());
    if (it != scripts_.end()) {
      bytes_ -= it->second->size() + it->first.size();
      scripts_.erase(it);
    }
    order_.pop_front();
  }
}

}  // namespace rockcache::server::scripting
