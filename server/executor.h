// Runs commands under the cache discipline that keeps the cache coherent with RocksDB.
//
// The rules (see "Cache coherence" in DESIGN.md and cache/key_locks.h):
// - A write holds the key-stripe locks of all its keys across its RocksDB write and its cache
//   update, and finishes both before its reply exists. A kCacheAware single-key write updates
//   the cache itself after writing (write-through); every other write erases its keys from the
//   cache *before* writing, so while it runs a reader misses and waits for the lock.
// - A read miss holds the key lock of its key(s) across its RocksDB read and the fill, so a fill
//   can never install a value older than a write that finished meanwhile. A second reader of the
//   same key waits on that lock and then finds the value cached: a coalesced miss, one RocksDB
//   read for both.
// - A multi-key read answered from the cache (MGET, EXISTS k1 k2) must not mix values from
//   before and after a write: every write bumps a fence (CacheWriteFence) and such a read
//   retries on a worker when the fence moved while it looked.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "server/command.h"

namespace rockcache::server {

class Server;

// A seqlock-like fence between cache-mutating writes and multi-key cache reads. Writers: Begin
// before touching the cache, End after. Readers: Snapshot before, Validate after their lookups.
// All operations are seq_cst: the argument in executor.cc needs the total order.
class CacheWriteFence {
 public:
  void BeginWrite() { active_.fetch_add(1); }
  void EndWrite() {
    epoch_.fetch_add(1);
    active_.fetch_sub(1);
  }
  // False when a write is in progress (the read should not use the cache).
  bool Snapshot(uint64_t* epoch) const {
    if (active_.load() != 0) return false;
    *epoch = epoch_.load();
    return true;
  }
  // True when no write touched the cache since Snapshot returned `epoch`.
  bool Validate(uint64_t epoch) const {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return active_.load() == 0 && epoch_.load() == epoch;
  }

 private:
  std::atomic<uint64_t> active_{0};
  std::atomic<uint64_t> epoch_{0};
};

// Worker thread: runs one command (may block on disk and on key locks). `rtc_missed`: the
// network thread already looked this command up in the cache and missed (so a hit now is a
// coalesced miss, and the lookup is not counted twice).
void ExecuteOnWorker(Server& server, const CommandSpec& spec, Args& argv, int64_t now_ms,
                     bool rtc_missed, std::string* out);

// Network thread: tries to answer a kCacheRead command from the cache alone. Never blocks.
// True when the reply was appended.
bool TryAnswerFromCache(Server& server, const CommandSpec& spec, const Args& argv, int64_t now_ms,
                        std::string* out);

}  // namespace rockcache::server
