// Options, statistics and small enums of the cache (see cache/cache.h for the contract).
//
// Every option with its default; the config table (config/) maps cache-maxmemory,
// cache-shards, cache-policy and cache-max-hash-fields onto these fields.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rockcache::cache {

// Which entry leaves when a shard is over its budget (after expired entries, which always go
// first when eviction finds them).
enum class Policy {
  // Segmented least recently used, per shard (scan-resistant; "Segmented LRU" in cache.h): a
  // new key enters a probation segment; a hit there promotes it to a protected segment of up to
  // 80% of the shard's budget, whose oldest entries are demoted back to probation when it is
  // full; eviction takes the oldest of probation first. A sweep of keys read once therefore only
  // cycles through probation and leaves the protected hot set in place. An entry already among
  // the newest quarter of protected is not moved on a hit (it keeps hot keys read-mostly; see
  // Shard::Touch). Best when recent keys are hot.
  kAllKeysLru,
  // Least frequently used, approximated as Redis does: an 8-bit logarithmic counter per entry
  // (starts at 5, +1 with probability 1/((counter-5)*10+1), -1 per idle minute) and eviction of
  // the lowest counter among a random sample. Best when a stable hot set must survive scans.
  kAllKeysLfu,
};

const char* PolicyName(Policy policy);  // "allkeys-lru" | "allkeys-lfu"

struct Options {
  // Budget for keys + values + per-entry overhead (see Cache::Charge), split evenly over the
  // shards: each shard may use max_memory_bytes / shards. 0 turns the cache off (Put installs
  // nothing, Visit always misses). Changeable later with Cache::SetMaxMemory.
  uint64_t max_memory_bytes = 256ull << 20;
  // Number of independently locked shards; fixed for the cache's life. More shards mean less
  // lock contention but a smaller budget per shard (a value bigger than one shard's budget is
  // never cached). Values < 1 are treated as 1.
  int shards = 16;
  Policy policy = Policy::kAllKeysLru;
  // A hash with more fields is not cached (it is read from storage every time): bounds the work
  // done under a shard lock and the size of one entry.
  size_t max_hash_fields = 1024;
  // The most elements of a list's head (its first elements) the cache keeps for LRANGE, LINDEX
  // and LLEN; 0: lists are not cached. Bounds the same as max_hash_fields.
  size_t max_list_elements = 1024;
};

// kAbsent: the cache holds a negative entry: the key is known not to exist (no visitor ran).
enum class Lookup { kHit, kMiss, kAbsent };

// Counters of one shard, or of the whole cache (merged: sums; max_memory is the sum of the
// shard budgets). Gauges reflect the moment of the read; counters run since creation or the
// last ResetStats.
struct Stats {
  // Gauges. Exact at the read (each shard's under its lock), except that expired entries not yet
  // removed count as live. Entries of a flushed database generation (stale: FLUSHDB/FLUSHALL
  // since they were filled, see "Flushes" in cache.h) are not live: they count only in
  // stale_keys and bytes_used until eviction, a lookup or RemoveExpired frees them.
  uint64_t keys = 0;           // live entries (expired but not yet removed ones included)
  uint64_t keys_with_ttl = 0;  // live entries with an expire-at
  uint64_t bytes_used = 0;     // sum of Cache::Charge over the entries, stale ones included
  uint64_t negative_keys = 0;  // live negative entries (keys known absent), included in `keys`
  uint64_t stale_keys = 0;     // entries of a flushed generation, not yet freed
  uint64_t max_memory = 0;     // budget (a shard's, or the sum of the shards')
  // The allkeys-lru segments ("Segmented LRU" in cache.h), stale entries included (so
  // probation_keys + protected_keys == keys + stale_keys). Under allkeys-lfu new entries all go
  // to probation and nothing is promoted.
  uint64_t probation_keys = 0;   // entries in the probation segment
  uint64_t protected_keys = 0;   // entries in the protected segment
  uint64_t protected_bytes = 0;  // their charge (<= 80% of max_memory; the rest of bytes_used
                                 // is probation's)
  // Counters.
  uint64_t hits = 0;           // Visit found a live entry (negative entries included)
  uint64_t negative_hits = 0;  // of which negative entries (the key is known absent)
  uint64_t misses = 0;         // Visit found nothing (or an expired entry)
  uint64_t fills = 0;          // Put calls that installed an entry
  uint64_t rejected = 0;    // Put calls that did not install (cache off, too big, too many fields)
  uint64_t updates = 0;     // Update calls whose mutator kept the entry
  uint64_t erases = 0;      // entries removed by Erase, an Update mutator or a rejected Put
  uint64_t evictions = 0;   // live entries removed to stay under the budget
  uint64_t expired = 0;     // expired entries removed (on access, by eviction or RemoveExpired)
  uint64_t flushed = 0;     // stale entries freed (on access, by eviction or RemoveExpired)
  uint64_t swept = 0;       // of expired + flushed: the entries RemoveExpired freed
  uint64_t promotions = 0;  // allkeys-lru: probation entries hit, moved to protected
  uint64_t demotions = 0;   // allkeys-lru: protected entries moved back to probation (over share)

  void Merge(const Stats& other) {
    keys += other.keys;
    keys_with_ttl += other.keys_with_ttl;
    bytes_used += other.bytes_used;
    negative_keys += other.negative_keys;
    stale_keys += other.stale_keys;
    max_memory += other.max_memory;
    probation_keys += other.probation_keys;
    protected_keys += other.protected_keys;
    protected_bytes += other.protected_bytes;
    hits += other.hits;
    negative_hits += other.negative_hits;
    misses += other.misses;
    fills += other.fills;
    rejected += other.rejected;
    updates += other.updates;
    erases += other.erases;
    evictions += other.evictions;
    expired += other.expired;
    flushed += other.flushed;
    swept += other.swept;
    promotions += other.promotions;
    demotions += other.demotions;
  }
  // Zeroes the counters, keeps the gauges.
  void ResetCounters() {
    hits = negative_hits = misses = fills = rejected = updates = erases = evictions = expired =
        flushed = swept = promotions = demotions = 0;
  }
};

}  // namespace rockcache::cache
