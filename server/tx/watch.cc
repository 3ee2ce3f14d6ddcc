#include "server/tx/watch.h"

#include <algorithm>

namespace rockcache::server {

Watcher::~Watcher() { registry_->Remove(this); }

void WatchRegistry::Add(Watcher* watcher, std::string_view key, int64_t expire_at_ms) {
  MutexLock lock(&mu_);
  watcher->AssertGuardedBy(this);
  for (const auto& k : watcher->keys_) {
    if (k.key == key) return;  // already watched: Redis keeps the first WATCH
  }
  watcher->keys_.push_back(Watcher::Key{std::string(key), expire_at_ms});
  by_key_[std::string(key)].push_back(watcher);
  watched_.fetch_add(1, std::memory_order_relaxed);
}

void WatchRegistry::Remove(Watcher* watcher) {
  MutexLock lock(&mu_);
  watcher->AssertGuardedBy(this);
  for (const auto& k : watcher->keys_) {
    auto it = by_key_.find(k.key);
    if (it == by_key_.end()) continue;
    auto& list = it->second;
    list.erase(std::remove(list.begin(), list.end(), watcher), list.end());
    if (list.empty()) by_key_.erase(it);
    watched_.fetch_sub(1, std::memory_order_relaxed);
  }
  watcher->keys_.clear();
  watcher->dirty_ = false;
}

bool WatchRegistry::Dirty(Watcher* watcher, int64_t now_ms) {
  MutexLock lock(&mu_);
  watcher->AssertGuardedBy(this);
  if (watcher->dirty_) return true;
  for (const auto& k : watcher->keys_) {
    if (k.expire_at_ms != 0 && now_ms >= k.expire_at_ms) return true;
  }
  return false;
}

std::vector<std::string> WatchRegistry::Keys(Watcher* watcher) {
  MutexLock lock(&mu_);
  watcher->AssertGuardedBy(this);
  std::vector<std::string> keys;
  keys.reserve(watcher->keys_.size());
  for (const auto& k : watcher->keys_) keys.push_back(k.key);
  return keys;
}

bool WatchRegistry::Watching(Watcher* watcher) {
  MutexLock lock(&mu_);
  watcher->AssertGuardedBy(this);
  return !watcher->keys_.empty();
}

void WatchRegistry::Touch(const std::vector<std::string_view>& keys) {
  MutexLock lock(&mu_);
  for (auto key : keys) {
    auto it = by_key_.find(std::string(key));
    if (it == by_key_.end()) continue;
    for (Watcher* w : it->second) {
      w->AssertGuardedBy(this);
      w->dirty_ = true;
    }
  }
}

void WatchRegistry::TouchAll() {
  MutexLock lock(&mu_);
  for (auto& [key, watchers] : by_key_) {
    for (Watcher* w : watchers) {
      w->AssertGuardedBy(this);
      w->dirty_ = true;
    }
  }
}

void WatchRegistry::NoteWrite(const CommandSpec& spec, const Args& argv, const std::string& out,
                              size_t reply_start) {
  // A write that failed (WRONGTYPE, not an integer...) changed nothing. Writes that succeed
  // without changing anything (DEL of a missing key, SET NX on an existing one) still mark: a
  // spurious EXEC abort is safe for optimistic locking, a missed one is not.
  if (reply_start < out.size() && out[reply_start] == '-') return;
  if (spec.flags & kAllKeys) {
    TouchAll();
    return;
  }
  Touch(CommandKeys(spec, argv));
}

}  // namespace rockcache::server
