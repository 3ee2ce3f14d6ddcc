// cache::Cache — the sharded in-memory cache of hot keys (strings, whole hashes, the heads of
// lists, and keys known absent: cache/value.h) in front of RocksDB, with TTLs, byte accounting,
// segmented-LRU or LFU eviction and per-shard stats.
//
// Shape: `Options::shards` shards (default 16) chosen by HashKey(key) % shards, each a hash table
// + eviction structures behind its own std::mutex (see cache/shard.h), as leveldb's
// util/cache.cc. Each shard has an equal budget, max_memory / shards, and evicts on its own; the
// total accounted bytes therefore never exceed max_memory once a Put has returned.
//
// Threads. Every method is thread-safe. Each call takes at most one shard lock at a time, holds
// it for a hash lookup plus O(1) list/vector work (plus the visitor or mutator you pass), never
// across I/O. New entries are built before locking and replaced/evicted ones destroyed after
// unlocking; under the lock only the table's and the sampling vector's amortized growth (and a
// mutator's own edits) allocate. So:
//   - network threads may call Visit (the run-to-completion read path) and must call nothing
//     that blocks; Visit never blocks except on the shard lock, held by others just as briefly;
//   - workers call Peek/Put/Update/Erase under a KeyLocks guard (below);
//   - admin commands (FLUSHALL, CONFIG SET, INFO, DEBUG) call Clear/SetMaxMemory/GetStats/...
// A Visitor or Mutator runs under the shard lock: it must be short, must not block, and must not
// call back into this Cache (self-deadlock). Lock order: KeyLocks stripe -> shard mutex; nothing
// in the cache takes a stripe.
//
// Coherence rule (docs/DESIGN.md "Cache coherence": never serve a value older than the last
// acknowledged write). The cache alone cannot know whether a value is current; the server
// fences every fill and every write with the key's stripe of cache::KeyLocks (key_locks.h):
//   read miss (worker):  guard = locks.Lock(key);
//                        if (cache.Peek(key, now, ...) == kHit) { coalesced: another worker
//                                                                 filled it meanwhile }
//                        else { v = store.Get(key); if found: cache.Put(key, v, expire_at); }
//   write (worker):      guard = locks.Lock(keys...); store.Write(...);
//                        cache.Put / cache.Update / cache.Erase for each key;  // then reply
// Because the stripe is held across (RocksDB read + fill) and across (RocksDB write + cache
// update), a fill and a write of one key are serialized: the classic race (A reads v0, B writes
// v1 and updates the cache, A fills v0 — stale forever) cannot happen, because B cannot start
// its write until A has filled, and B's update then replaces A's v0. Visit on a network thread
// takes no stripe: it sees either the value before a write's cache update or after, and the
// write is acknowledged only after that update, so no client sees an older value after +OK.
//
// Why stripes rather than fill tickets (a per-slot version read before the storage read; the
// fill is dropped if a write bumped it): the stripe also coalesces concurrent misses on one key
// (the second worker re-checks with Peek and finds the first one's fill instead of reading
// RocksDB again), it gives read-modify-write commands (INCR, HSET...) the atomicity storage needs
// anyway, and correctness does not hinge on every write path remembering to bump a version
// before its cache update. The cost: workers that hit the same stripe (4096 by default) wait for
// one RocksDB read or write; network threads never take a stripe, so they never wait for I/O.
// Under heavy write contention tickets would drop fills while stripes serialize them; for a cache
// in front of a key-value store the serialization is the behaviour we want.
//
// Fills without the stripe. A network thread may fill from RocksDB's memory (memtables and block
// cache, never a file read) without taking the key's stripe, which would block
// (server/executor.h, TryAnswerFromMemory):
//   ticket = locks.TicketFor(key);  if (!ticket.usable()) give up;   // a write is in progress
//   generation = cache.generation(); v = store.TryGetString(key);     // memory only
//   cache.Put(key, v, expire_at, now, generation, &ticket);           // checks the ticket
// A write keeps its stripe's sequence odd from before its first cache change until its RocksDB
// write is committed (cache/key_locks.h). Put checks the sequence under the shard lock, so for
// any write W of the key: (a) if W's commit happened before the ticket was taken, the storage
// read sees W; (b) if W's odd store happened after the ticket, then either W's cache change
// (taken under the same shard lock) comes before the install, and the install sees the sequence
// moved and refuses, or it comes after the install and replaces, erases or updates the filled
// entry. In case (b) the storage read cannot have seen W's value unless the odd store already
// happened before it (RocksDB publishes a write with release/acquire), which the install would
// see; so an Update's mutator always starts from the value before W. A stale value is never
// installed.
//
// Negative entries. Value::Absent() records that storage, read under the key's stripe, holds no
// such key. It is filled and invalidated exactly like a positive entry (a miss fills it under the
// stripe; a write Puts over it, Erases it, or Updates it — which drops it), it is charged like an
// empty string (kEntryOverhead + key) against max_memory and evicted like any other entry. Visit
// and Peek report it as Lookup::kAbsent without running the visitor, so code that only knows
// kHit treats it as a miss and falls back to storage.
//
// Flushes (FLUSHDB / FLUSHALL) in O(1): generations. The cache keeps one generation number per
// physical database (config/current_db.h); every entry records the generation of its database
// when it was filled. ClearDb(db) only advances db's generation, Clear() every database's:
// O(kMaxDatabases), no shard lock, whatever the cache holds. An entry whose generation is not its
// database's current one is *stale*: every reader (Visit, Peek, Update, Erase, LfuFrequency,
// ForEachSnapshot, the stats' key counts) treats it as absent, and a lookup that meets it frees
// it (counted in `flushed`), as it frees an expired entry. Memory: a stale entry keeps its
// charge in bytes_used until it is freed, so the budget still bounds the whole cache; eviction
// and RemoveExpired take stale entries first (random probes, like expired ones; LRU order after
// that), so a flushed cache is refilled at the cost of evicting dead entries, never live ones
// while the probes find dead ones. Nothing walks the table on a flush (the one exception: a
// database's 32-bit generation wrapping around, once per 2^32 flushes of it, first removes that
// database's entries the old way, so that an ancient entry can never match again).
//
// Fill fencing across a flush. A fill reads storage, then installs; a flush may complete in
// between. The rule: a fill captures Generation() *before* it reads storage and passes it to
// Put, which installs the entry only if that generation is still current (checked under the
// shard lock) and stamps the entry with it. So a value read before a flush is either installed
// before the flush's generation bump (and made stale by it) or refused after: it is never live
// after ClearDb/Clear has returned. (The server also holds every key stripe across FLUSHDB,
// FLUSHALL and SWAPDB, so its fills cannot overlap them; the generation check does not depend
// on that.) A Put without a generation stamps the current one: only for callers that exclude
// concurrent flushes of the key's database otherwise (tests, single-threaded tools).
//
// SWAPDB needs nothing: entries are tagged with their physical database, and SWAPDB only swaps
// the logical -> physical mapping (storage::Store::PhysicalDb), so a generation follows the data
// it belongs to.
//
// Segmented LRU (allkeys-lru, the default; cache/shard.h has the moves). Each shard splits its
// entries into two LRU lists. A key enters *probation* (at its newest end) when it is filled or
// first written; a Visit or Peek hit while it is there promotes it to *protected*. Protected holds
// at most Shard::kProtectedPercent (80%) of the shard's budget: past that, its oldest entries are
// demoted to the newest end of probation (a hit there promotes them again). Eviction takes
// expired and stale entries first, then probation's oldest, and protected's oldest only when
// probation is empty. So:
//   - a sweep (SCAN-driven GETs of every key, a one-off export, a uniform read of a keyspace many
//     times the cache) fills and misses but never hits: its keys enter probation and push each
//     other out, and every key promoted before it stays cached (up to 80% of the budget);
//   - what a sweep does evict: probation's entries (keys read once, and demoted ones);
//   - a new hot set takes over: its keys, read twice within probation's turnover (~20% of the
//     budget's bytes of fills), are promoted, and the old set, no longer read, ages to
//     protected's oldest end and is demoted, then evicted, as the new one needs the room;
//   - the price: a key re-read only after more fills than probation holds is never promoted
//     while protected is full. A new working set read in a loop bigger than probation's room
//     (say 50% of the budget, with protected still full of an old set nobody reads) keeps
//     missing, where plain LRU would have cached it; keys read twice in a row, or more often
//     than that window, are not affected.
// Writes. A rewrite of a cached key (Put over a live entry of the same key, Update) puts the new
// value at the newest end of the segment the old one was in: a write of a hot key keeps it
// protected, and a write of a key on probation leaves it there, since a write is not a second
// read (a sweep of read-modify-writes, read once and written once, must not flush the hot set).
// A Put of a key that is not cached (or only stale) enters probation.
// Reads that are not reads. Peek records an access like Visit (a Peek hit on probation
// promotes). A lookup that is not a client's read of the key — above all the answer to the
// request whose miss just filled the entry — must use Inspect, which records nothing, or a sweep
// of such fills promotes every key it reads.
// allkeys-lfu does not use the segments (new entries just enter probation; its eviction is
// sampled by frequency). Stats has the segment gauges and the promotion/demotion counters.
//
// Values that are never cached: a hash with more than Options::max_hash_fields fields or with no
// fields, and any entry whose Charge exceeds one shard's budget or internal::kMaxCharge (4 GiB).
// Put of such a value still removes the old entry (the write path relies on that to stay
// coherent).
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "cache/hash.h"
#include "cache/key_locks.h"
#include "cache/options.h"
#include "cache/shard.h"
#include "cache/value.h"
#include "config/current_db.h"
#include "config/mutex.h"

namespace rockcache::cache {

// A physical database's generation (see "Flushes" above). Wraps around after 2^32 flushes.
using Generation = uint32_t;

class Cache {
 public:
  explicit Cache(const Options& options);
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // --- Byte accounting ---------------------------------------------------------------------
  // Charge(key, value) — what one entry counts against max_memory:
  //   kEntryOverhead + key.size() + StringCharge(str)                                (string)
  //   kEntryOverhead + key.size() + kHeapBlockOverhead
  //       + sum over fields (kFieldOverhead + StringCharge(name) + StringCharge(value))  (hash)
  //   kEntryOverhead + key.size()                                                 (negative)
  //   kEntryOverhead + key.size() + kHeapBlockOverhead + kListHeadOverhead
  //       + sum over the head's elements (kElementOverhead + StringCharge(element))  (list head;
  //       O(1): ListHead keeps the sums as it is edited)
  // with StringCharge(n) = n + (n > kInlineStringCapacity ? kHeapBlockOverhead : 0).
  //
  // The constants follow what the process really allocates on 64-bit Linux (glibc malloc,
  // libstdc++), so that RSS growth tracks bytes_used (checked by a test: 1M keys into 64 MB):
  //   kEntryOverhead 184 = the entry's heap block without its key bytes (a 64-byte header:
  //     list links, bucket chain, hash, expire-at, charge, generation, sizes, LFU/LRU stamps;
  //     then the 72-byte Value: std::string + std::vector + the list head's pointer; the key
  //     padded to 8 in between, ~4) +
  //     the malloc chunk header and rounding to 16 (~12) + the shard's bucket pointer (8-16 at
  //     load 0.5-1) + the shard's sampling-vector slot (8-16 with growth slack).
  //   kFieldOverhead 64 = the std::pair<std::string, std::string> in the fields vector.
  //   kListHeadOverhead 96 = the ListHead (length + std::deque: 88 bytes) in its own block; the
  //     deque's map and first node block are counted in kElementOverhead.
  //   kElementOverhead 40 = the std::string in the deque's 512-byte node blocks (32) + the
  //     blocks' chunk headers and the map, amortized over their 16 strings (~8).
  //   kHeapBlockOverhead 16 = a separate heap block's chunk header and rounding: strings longer
  //     than std::string's inline capacity (15 bytes), the fields vector and the list head have
  //     one.
  // A short string value is stored inside the Entry yet still charged its size: conservative by
  // at most 15 bytes per entry. Measured (tests/unit/cache/cache_bench_test.cc, 1M keys of 16
  // bytes into 64 MB): heap growth / bytes_used = 0.95 with 3-byte and 100-byte values; RSS
  // growth / bytes_used = 0.93 and 0.95.
  static constexpr size_t kEntryOverhead = 184;
  static constexpr size_t kFieldOverhead = 64;
  static constexpr size_t kListHeadOverhead = 96;
  static constexpr size_t kElementOverhead = 40;
  static constexpr size_t kHeapBlockOverhead = 16;
  static constexpr size_t kInlineStringCapacity = cache::kInlineStringCapacity;
  static size_t StringCharge(size_t n) {
    return n + (n > kInlineStringCapacity ? kHeapBlockOverhead : 0);
  }
  static size_t Charge(std::string_view key, const Value& value);

  // --- Reads -------------------------------------------------------------------------------
  // When `key` is cached, not stale (flushed) and not expired at now_ms, runs visit(const
  // Value&, int64_t expire_at_ms /* 0 = none */) — or visit(const Value&) — under the shard
  // lock, counts a hit, records the access (LRU: promotes an entry on probation, refreshes a
  // protected one; LFU: frequency) and returns kHit. When the entry is a negative one
  // (Value::Absent()), it does not run `visit`, counts a hit and a negative hit, records the
  // access and returns kAbsent: the key does not exist. Otherwise
  // counts a miss and returns kMiss; an entry with now_ms >= expire_at is removed then and
  // counted in `expired`, a stale one in `flushed`. Never blocks on I/O: for network threads.
  // `visit` must not block or call into the cache; copy out or append reply bytes only.
  template <typename Visitor>
  Lookup Visit(std::string_view key, int64_t now_ms, Visitor&& visit) {
    return Find(key, now_ms, /*count=*/true, /*touch=*/true, visit);
  }
  // Visit that does not record the access (it counts the hit or miss): the reads Redis makes
  // with LOOKUP_NOTOUCH (TTL, TYPE, EXISTS), which leave OBJECT IDLETIME and the eviction order
  // as they were.
  template <typename Visitor>
  Lookup VisitNoTouch(std::string_view key, int64_t now_ms, Visitor&& visit) {
    return Find(key, now_ms, /*count=*/true, /*touch=*/false, visit);
  }
  // Visit without counting the hit or miss (it still records the access and removes an expired
  // or stale entry): the worker's re-check under the key's stripe, and tests.
  template <typename Visitor>
  Lookup Peek(std::string_view key, int64_t now_ms, Visitor&& visit) {
    return Find(key, now_ms, /*count=*/false, /*touch=*/true, visit);
  }
  // Peek that does not record the access either (no LRU promotion or move, no LFU increment); it
  // still removes an expired or stale entry. For lookups that are not a client's read of the key:
  // answering the very request whose miss just filled the entry (otherwise a fill-then-answer
  // counts as two reads and promotes every key of a sweep, see "Segmented LRU"), probing
  // whether a key is cached before writing or reading ahead, and introspection.
  template <typename Visitor>
  Lookup Inspect(std::string_view key, int64_t now_ms, Visitor&& visit) {
    return Find(key, now_ms, /*count=*/false, /*touch=*/false, visit);
  }

  // --- Writes (workers; hold the key's KeyLocks stripe, see the coherence rule) -------------
  // Installs `value` for `key` (expire_at_ms 0 = no TTL), replacing any entry (in the old
  // entry's LRU segment; a new key enters probation), evicting others (expired ones first, then
  // by policy) until the shard is back under its budget. Returns false and removes any old entry
  // when the value is not cached: cache off, hash with no fields or more than max_hash_fields
  // fields, list head of more than max_list_elements elements (none when it is 0), or Charge
  // above one shard's budget. Does not block on I/O; allocates the entry before taking the shard
  // lock and frees replaced/evicted entries after releasing it. now_ms: the caller's clock, as
  // given to Visit. It stamps the entry's LFU access minute and tells eviction which entries have
  // expired. Pass it (the server does); 0 falls back to the latest now_ms this shard has seen from
  // any call, which lags during write-only periods. generation: what Generation() returned before
  // the caller read `value` from storage (see "Fill fencing" above); when it is no longer current
  // the value is not cached (returns false, the old entry is removed, counted in `rejected`).
  // nullopt: the current generation. ticket: for a fill made without holding the key's stripe (see
  // "Fills without the stripe" above): installs only if ticket->Unchanged() under the shard lock;
  // otherwise nothing changes (counted in `rejected`) and it returns false. nullptr: the caller
  // holds the stripe.
  bool Put(std::string_view key, Value value, int64_t expire_at_ms, int64_t now_ms = 0,
           std::optional<Generation> generation = std::nullopt,
           const KeyLocks::FillTicket* ticket = nullptr);

  // The current generation of the calling thread's database (CurrentDb()). Any thread, never
  // blocks: one acquire load. A fill takes it before its storage read and passes it to Put.
  Generation generation() const {
    return generations_[CurrentDb()].load(std::memory_order_acquire);
  }

  // When `key` is cached and live at now_ms, calls mutate(Value&, int64_t& expire_at_ms) under
  // the shard lock and returns true; otherwise returns false (and removes an expired or stale
  // entry). A kept entry moves to the newest end of its own LRU segment (never promoted; LFU:
  // counts an access).
  // A negative entry is removed (counted in `erases`) without calling `mutate`, and false is
  // returned: every write path that may create a key calls Put, Update or Erase for it, so a
  // negative entry never outlives the write that made the key exist.
  // The mutator edits in place (HSET/HDEL via Value::SetField/EraseField, APPEND, SETRANGE,
  // EXPIRE/PERSIST via expire_at_ms) and returns false to drop the entry instead (e.g. when the
  // result is not worth the work under the lock). The entry is also dropped when it ends up a
  // hash with no fields or more than max_hash_fields, a list head that is empty, longer than the
  // list or than max_list_elements, already expired, or bigger than the shard's budget. The charge
  // is recomputed (O(fields)) and others are evicted if needed. A kept hash must stay sorted and
  // unique (asserted in debug builds).
  template <typename Mutator>
  bool Update(std::string_view key, int64_t now_ms, Mutator&& mutate);

  // Removes the entry, if any (DEL, and any write whose new value the server does not build).
  void Erase(std::string_view key);

  // --- Admin --------------------------------------------------------------------------------
  // FLUSHDB: every entry of physical database `db` becomes stale (invisible to every reader from
  // the moment this returns; freed lazily, see "Flushes"). O(1): advances db's generation; takes
  // no shard lock. Concurrent ClearDb/Clear calls are serialized (a short mutex of their own).
  // REQUIRES: 0 <= db < kMaxDatabases.
  void ClearDb(int db);
  // FLUSHALL: ClearDb of every database, O(kMaxDatabases). Counters are kept. The entries' and
  // the tables' memory is not returned at once: stale entries are freed by lookups, eviction
  // and RemoveExpired, and bytes_used counts them until then (the budget holds throughout).
  // A fill that captured its generation before this call is refused afterwards (see "Fill
  // fencing").
  void Clear();
  // CONFIG SET cache-maxmemory: new budget, split over the shards; a lower one evicts at once
  // (stale entries first when probes find them). 0 turns the cache off and frees every entry and
  // the shards' table memory (O(entries)). Concurrent calls are serialized.
  void SetMaxMemory(uint64_t bytes);
  uint64_t max_memory() const { return max_memory_.load(std::memory_order_relaxed); }
  bool enabled() const { return max_memory() > 0; }
  Policy policy() const { return policy_.load(std::memory_order_relaxed); }
  // CONFIG SET cache-policy / maxmemory-policy: switches every shard's eviction (and OBJECT FREQ
  // tracking) from now on; entries keep their place. Takes each shard lock in turn.
  void SetPolicy(Policy policy);
  size_t shard_count() const { return shard_count_; }
  size_t max_hash_fields() const { return max_hash_fields_; }
  size_t max_list_elements() const { return max_list_elements_; }
  size_t ShardOf(std::string_view key) const { return ShardIndex(HashKey(key, CurrentDb())); }

  // Merged over the shards (INFO cache) / one Stats per shard (INFO cache-shards). Each shard is
  // read under its lock, one after another: the sums are not one atomic snapshot.
  Stats GetStats() const;
  std::vector<Stats> GetShardStats() const;
  // CONFIG RESETSTAT: zeroes the counters (hits, misses, ...), keeps keys and bytes.
  void ResetStats();

  // OBJECT FREQ: the key's LFU counter aged to now_ms; nullopt when not cached (or stale) or the
  // policy is not LFU. Does not count as an access.
  std::optional<int> LfuFrequency(std::string_view key, int64_t now_ms) const;
  // OBJECT IDLETIME: seconds since the key's last access (a read that touched it, a fill, a
  // write through the cache) by the shard's clock; nullopt when not cached (or stale) or the
  // policy is not LRU. Does not count as an access.
  std::optional<int64_t> IdleSeconds(std::string_view key, int64_t now_ms) const;

  // Active expiry for a periodic housekeeping task: in each shard, probes up to
  // `samples_per_shard` random entries and removes the expired and the stale ones. Returns how
  // many it removed. Skips shards with no TTL entries and no stale entries in O(1) (after a
  // flush, O(kMaxDatabases) once per shard to notice it).
  size_t RemoveExpired(int64_t now_ms, size_t samples_per_shard);

  // DEBUG CACHE-VERIFY: calls visit(const std::string& key, const Value& value, int64_t
  // expire_at_ms) for every live (unexpired, not stale) entry, of every database, each inside a
  // DbScope of the entry's database (so storage reads in `visit` read that database). Copies one
  // shard's entries under its lock, then calls `visit` without any lock (so it may block, e.g. to
  // read storage), shard after shard: not an atomic snapshot of the whole cache. Does not count
  // or touch anything.
  template <typename Visitor>
  void ForEachSnapshot(int64_t now_ms, Visitor&& visit) const;

  // Tests only: sets db's generation as if that many flushes had happened (to reach the wrap).
  void SetGenerationForTesting(int db, Generation generation);

 private:
  // Whether a value of this shape may be cached at all (before its charge is weighed): a hash
  // with 1..max_hash_fields fields, a list head of at most max_list_elements elements.
  bool Cacheable(const Value& value) const;
  struct SnapshotEntry {
    std::string key;
    Value value;
    int64_t expire_at_ms;
    int db;
  };

  size_t ShardIndex(uint64_t hash) const {
    return shard_pow2_ ? static_cast<size_t>(hash) & (shard_count_ - 1)
                       : static_cast<size_t>(hash % shard_count_);
  }
  internal::Shard& ShardFor(uint64_t hash) const { return shards_[ShardIndex(hash)]; }
  template <typename Visitor>
  Lookup Find(std::string_view key, int64_t now_ms, bool count, bool touch, Visitor& visit);
  void CopyShard(size_t index, int64_t now_ms, std::vector<SnapshotEntry>* out) const;
  // Advances db's generation; at the wrap, first removes db's entries.
  void AdvanceGeneration(int db) REQUIRES(flush_mu_);

  const size_t shard_count_;
  const bool shard_pow2_;  // shard_count_ is a power of two: % is a mask
  std::atomic<Policy> policy_;
  const size_t max_hash_fields_;
  const size_t max_list_elements_;
  std::unique_ptr<internal::Shard[]> shards_;
  std::atomic<uint64_t> max_memory_;
  Mutex config_mu_;  // serializes SetMaxMemory
  // The current generation of each physical database, and how many times any of them changed
  // (lets a shard notice a flush with one load). Written under flush_mu_, read by any thread.
  std::atomic<Generation> generations_[kMaxDatabases] = {};
  std::atomic<uint64_t> flushes_{0};
  Mutex flush_mu_;  // serializes ClearDb / Clear
};

// ---------------------------------------------------------------------------------------------
// Template definitions.

template <typename Visitor>
Lookup Cache::Find(std::string_view key, int64_t now_ms, bool count, bool touch, Visitor& visit) {
  const int db = CurrentDb();
  const uint64_t hash = HashKey(key, db);
  internal::Shard& shard = ShardFor(hash);
  internal::Entry* garbage = nullptr;
  Lookup result = Lookup::kMiss;
  {
    MutexLock lock(&shard.mu());
    shard.Observe(now_ms);
    internal::Entry* e = shard.Find(key, hash, db, now_ms, &garbage);
    if (e != nullptr && e->value().is_absent()) {
      if (touch) shard.Touch(e);
      result = Lookup::kAbsent;
      if (count) ++shard.counters().negative_hits;
    } else if (e != nullptr) {
      if (touch) shard.Touch(e);
      const Value& value = e->value();
      if constexpr (std::is_invocable_v<Visitor&, const Value&, int64_t>) {
        visit(value, e->expire_at_ms);
      } else {
        visit(value);
      }
      result = Lookup::kHit;
    }
    if (count) ++(result == Lookup::kMiss ? shard.counters().misses : shard.counters().hits);
  }
  if (garbage != nullptr) internal::DeleteChain(garbage);
  return result;
}

template <typename Mutator>
bool Cache::Update(std::string_view key, int64_t now_ms, Mutator&& mutate) {
  const int db = CurrentDb();
  const uint64_t hash = HashKey(key, db);
  internal::Shard& shard = ShardFor(hash);
  internal::Entry* garbage = nullptr;
  bool found = false;
  {
    MutexLock lock(&shard.mu());
    shard.Observe(now_ms);
    internal::Entry* e = shard.Find(key, hash, db, now_ms, &garbage);
    if (e != nullptr && e->value().is_absent()) {
      // A write reached a key the cache knew absent: the negative entry is wrong from now on,
      // and the mutator cannot build the new value from nothing. Drop it.
      shard.FinishUpdate(e, /*keep=*/false, 0, 0, now_ms, &garbage);
    } else if (e != nullptr) {
      found = true;
      int64_t expire_at_ms = e->expire_at_ms;
      bool keep = mutate(e->value(), expire_at_ms);
      Value& v = e->value();
      if (keep && v.is_hash()) assert(v.IsWellFormed());
      if (keep && v.is_list()) keep = v.IsWellFormed();
      keep = keep && Cacheable(v);
      const uint64_t charge = keep ? Charge(key, v) : 0;
      if (charge > internal::kMaxCharge) keep = false;
      shard.FinishUpdate(e, keep, expire_at_ms, charge, now_ms, &garbage);
    }
  }
  if (garbage != nullptr) internal::DeleteChain(garbage);
  return found;
}

template <typename Visitor>
void Cache::ForEachSnapshot(int64_t now_ms, Visitor&& visit) const {
  std::vector<SnapshotEntry> copy;
  for (size_t i = 0; i < shard_count_; ++i) {
    copy.clear();
    CopyShard(i, now_ms, &copy);
    for (const SnapshotEntry& s : copy) {
      DbScope scope(s.db);
      visit(s.key, s.value, s.expire_at_ms);
    }
  }
}

}  // namespace rockcache::cache
