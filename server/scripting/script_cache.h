// The EVAL script cache: script bodies by SHA-1 (EVAL adds, EVALSHA and SCRIPT EXISTS look up,
// SCRIPT FLUSH empties), shared by every thread of a server. Not persisted (as Redis: scripts
// are gone after a restart; clients reload them on NOSCRIPT).
//
// Bounded in bytes: past lua-script-cache-bytes of bodies, the scripts added longest ago are
// dropped (their clients get NOSCRIPT and reload, as after a restart). Each worker thread compiles
// a script once into its own Lua state (script_vm.h) and drops its compiled scripts when
// generation() moves (SCRIPT FLUSH). Any thread; a mutex guards the map (held for a lookup or an
// insert, never across a script run).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "config/mutex.h"

namespace rockcache::server::scripting {

class ScriptCache {
 public:
  ScriptCache() = default;
  ScriptCache(const ScriptCache&) = delete;
  ScriptCache& operator=(const ScriptCache&) = delete;

  // Adds `body` under `sha` (its SHA-1 in lowercase hex) unless it is there, then drops the
  // oldest scripts while the bodies pass `max_bytes` (lua-script-cache-bytes).
  void Add(const std::string& sha, std::string_view body, uint64_t max_bytes);
  // The body of `sha` (lowercase hex), or null. The body stays valid while the pointer is held,
  // even if the script is flushed or evicted meanwhile.
  std::shared_ptr<const std::string> Find(const std::string& sha) const;
  bool Exists(std::string_view sha) const;
  // Drops every script and moves generation().
  void Flush();
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  size_t count() const;
  uint64_t bytes() const;

 private:
  void EvictLocked(uint64_t max_bytes) REQUIRES(mu_);

  mutable Mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> scripts_ GUARDED_BY(mu_);
  std::deque<std::string> order_ GUARDED_BY(mu_);  // oldest first
  uint64_t bytes_ GUARDED_BY(mu_) = 0;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace rockcache::server::scripting
