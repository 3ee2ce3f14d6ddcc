// WATCH bookkeeping: which connections watch which keys, and which of them a write has made
// dirty (their EXEC then replies a null array, as Redis).
//
// Cost on the plain path: a write asks active() — one relaxed atomic load — and does nothing more
// while no connection watches anything.
//
// Ordering argument: WATCH registers its keys on a worker while holding their key-stripe locks
// (server/tx/transaction.cc), and every write marks watchers while holding the stripe locks of
// its keys (server/executor.cc, server/tx/transaction.cc). So a write that takes a stripe after
// WATCH released it sees active() != 0 and the registration (mutex acquire/release through the
// stripe), and EXEC, which takes the stripes of its watched keys before checking, sees every
// mark made by a write that released them before.
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/mutex.h"
#include "server/commands/command.h"

namespace rockcache::server {

class Watcher;

class WatchRegistry {
 public:
  WatchRegistry() = default;
  WatchRegistry(const WatchRegistry&) = delete;
  WatchRegistry& operator=(const WatchRegistry&) = delete;

  // Any thread: true while some connection watches some key. One relaxed load.
  bool active() const { return watched_.load(std::memory_order_relaxed) != 0; }

  // Worker: `watcher` watches `key`, alive until `expire_at_ms` (0 = no TTL or absent).
  // REQUIRES: the caller holds key's stripe lock.
  void Add(Watcher* watcher, std::string_view key, int64_t expire_at_ms);
  // Any thread: forgets every key of `watcher` and clears its dirty mark (UNWATCH, EXEC,
  // DISCARD, connection close).
  void Remove(Watcher* watcher);
  // True when `watcher` watches something and a watched key was modified since, or was alive
  // with a TTL when watched and has expired by `now_ms` (Redis 7). REQUIRES: the caller holds
  // the stripe locks of every watched key.
  bool Dirty(Watcher* watcher, int64_t now_ms);
  // The keys `watcher` watches (for EXEC's lock set).
  std::vector<std::string> Keys(Watcher* watcher);
  bool Watching(Watcher* watcher);

  // Marks the watchers of `keys` dirty. REQUIRES: the caller holds the keys' stripe locks.
  void Touch(const std::vector<std::string_view>& keys);
  // Marks every watcher dirty (FLUSHALL; FLUSHDB).
  void TouchAll();
  // Every watcher of database `db` (SWAPDB, FLUSHDB once databases exist): until keys carry their
  // database here, every watcher.
  void TouchDb(int db) { TouchAll(); }

  // After a write command ran (its reply appended to `out` from `reply_start`): marks the
  // watchers of its keys dirty, unless the command failed. Call only when active().
  void NoteWrite(const CommandSpec& spec, const Args& argv, const std::string& out,
                 size_t reply_start);

 private:
  friend class Watcher;

  Mutex mu_;
  std::unordered_map<std::string, std::vector<Watcher*>> by_key_ GUARDED_BY(mu_);
  std::atomic<size_t> watched_{0};  // keys registered, over all watchers
};

// The watches of one connection. Shared by the connection and the WATCH/EXEC it has in flight;
// the last owner's destruction removes it from the registry.
class Watcher {
 public:
  explicit Watcher(WatchRegistry* registry) : registry_(registry) {}
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

 private:
  friend class WatchRegistry;
  // Tells the analysis that `registry`'s mu_, held by the caller, guards this watcher: a watcher
  // is only ever handed to the registry it was made for (asserted).
  void AssertGuardedBy(const WatchRegistry* registry) const ASSERT_CAPABILITY(registry_->mu_) {
    assert(registry == registry_);
  }

  struct Key {
    std::string key;
    int64_t expire_at_ms;  // 0: no TTL (or absent) when watched
  };
  WatchRegistry* const registry_;
  std::vector<Key> keys_ GUARDED_BY(registry_->mu_);
  bool dirty_ GUARDED_BY(registry_->mu_) = false;
};

// The hook every write path calls after running a write command; costs one relaxed load while
// nobody watches.
inline void NoteWriteForWatch(WatchRegistry& registry, const CommandSpec& spec, const Args& argv,
                              const std::string& out, size_t reply_start) {
  if (registry.active()) registry.NoteWrite(spec, argv, out, reply_start);
}

}  // namespace rockcache::server
