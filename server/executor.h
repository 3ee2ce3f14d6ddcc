// The cache discipline that keeps the cache coherent with RocksDB, and the network thread's
// cache answers. Call (server/call.h) applies the discipline to every command a worker runs;
// this header states it and holds what answers without a worker.
//
// The rules (see "Cache coherence" in docs/DESIGN.md and cache/key_locks.h):
// - One lock layer: the cache's key stripes (cache::KeyLocks) are the only per-key locks;
//   storage takes none and REQUIRES its caller to hold them (storage/store.h). A worker takes
//   them once per group of commands (server/group_commit.h), for all keys of the group, in
//   ascending stripe order.
// - A write holds the key-stripe locks of all its keys across its RocksDB write and its cache
//   update. A kCacheAware write updates the cache itself after writing, for each of its keys
//   (write-through); every other write erases its keys from the cache *before* writing, so while
//   it runs a reader misses and waits for the lock. Inside a group the RocksDB write is deferred
//   to the group's commit, which happens before the locks are released and before any reply is
//   handed back; a failed commit erases the keys it wrote from the cache (still under the locks)
//   and turns their replies into errors.
// - A unit (EXEC, a script) writes to a staging cache of its own and publishes it after its
//   commit, under its locks and window (server/unit_cache.h): the shared cache keeps the committed
//   values meanwhile, so readers never see part of a unit.
// - A read miss holds the key lock of its key(s) across its RocksDB read and the fill, so a fill
//   can never install a value older than a write that finished meanwhile. A second reader of the
//   same key waits on that lock and then finds the value cached: a coalesced miss, one RocksDB
//   read for both.
// - A multi-key read answered from the cache (MGET, EXISTS k1 k2) must not mix values from
//   before and after a write: every write marks the write sequence of its keys' stripes odd
//   before it changes the cache and even after (a KeyLocks::WriteWindow, per stripe, no
//   global counter); such a read snapshots the sequences of its keys' stripes first and retries
//   on a worker when one was odd or moved. Argument: if the read observed any cache change of a
//   write W (through the shard mutex that published it), W's odd store happened before, so the
//   read's validation sees a different sequence; a write W2 that finished before W1 began (one
//   client's acked writes, in order) likewise moved its own stripes before the read could see
//   W1's change. Writes to keys the read does not look at cannot make it inconsistent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/commands/command.h"
#include "storage/store_types.h"

namespace rockcache::cache {
class KeyLocks;
}

namespace rockcache::server {

class Server;

// The reader side of the per-stripe write sequence, for one multi-key cache read. Any thread;
// never blocks.
class CacheReadFence {
 public:
  explicit CacheReadFence(const cache::KeyLocks& locks) : locks_(locks) {}
  // Records the write sequence of the stripe of each argv[first..]; false when a write is in
  // progress on one (the read should not use the cache).
  bool Snapshot(const Args& argv, size_t first);
  // True when no write touched those stripes since Snapshot. Call after the lookups.
  bool Validate(const Args& argv, size_t first) const;

 private:
  const cache::KeyLocks& locks_;
  std::vector<uint64_t> seqs_;
};

// Network thread: tries to answer a kCacheRead command from the cache alone. Never blocks.
// True when the reply was appended.
bool TryAnswerFromCache(Server& server, const CommandSpec& spec, const Args& argv, int64_t now_ms,
                        std::string* out, int db = 0);

// Network thread, after TryAnswerFromCache missed: for a kStringRead command of one key, reads
// the key from memory (storage::Store::TryGetString: memtables, block cache and, as `reach` says,
// resident file pages; never a disk read; strings up to `max_value_bytes`), fills the cache with it
// (a string or a negative entry) under a fill ticket (cache/cache.h, "Fills without the stripe"),
// and answers from the filled entry. False, with nothing appended, when the key is not in memory,
// is of another type or too big, a write of it is in progress, or the fill was refused: the pool
// answers then. Never blocks on I/O or on a key lock; costs one RocksDB point read.
bool TryAnswerFromMemory(Server& server, const CommandSpec& spec, const Args& argv, int64_t now_ms,
                         std::string* out, int db, uint64_t max_value_bytes,
                         storage::MemoryReach reach);

}  // namespace rockcache::server
