// Internals of cache::Cache, in a header only because Cache's templates (Visit, Peek, Update,
// ForEachSnapshot) run inline in the caller. Not an API: use cache/cache.h.
//
// One Shard = one std::mutex + a chained hash table of Entry + the eviction structures:
//   - an intrusive doubly-linked list in access order (kAllKeysLru: oldest at lru_.next);
//   - a vector of every entry (Entry::slot is its index; removal swaps the last one in), which
//     gives the O(1) random sampling that LFU eviction and the expired-first probes need.
// Each entry is one heap block: the Entry header, the key bytes, then the Value. A lookup never
// allocates: it hashes the string_view once, walks one bucket chain comparing the stored 64-bit
// hash, and memcmp's the key only on a hash match.
//
// Locking: every Shard method REQUIRES mu() held. Entries that leave the shard are unlinked under
// the lock and chained (through Entry::next_hash) onto a caller-provided `garbage` list, which the
// caller frees with DeleteChain after unlocking: destroying a value (up to a 1024-field hash)
// never lengthens a critical section.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <string_view>
#include <vector>

#include "cache/options.h"
#include "cache/value.h"

namespace rockcache::cache::internal {

struct LruLink {
  LruLink* prev = nullptr;
  LruLink* next = nullptr;
};

// One cached key, in one heap block laid out for the lookup path:
//   [0, 64)        this header: everything a lookup compares and the eviction structures touch
//   [64, 64+k)     the key bytes
//   [64+round8(k)) the Value (type + std::string + std::vector, 64 bytes)
// A hit reads one contiguous run (144 bytes for a 16-byte key: 2-3 cache lines) rather than a
// header plus a key stored after the Value, one more line away.
struct Entry : LruLink {
  Entry* next_hash = nullptr;  // bucket chain; after removal, the garbage chain
  uint64_t hash = 0;           // HashKey(key)
  int64_t expire_at_ms = 0;    // 0 = no TTL
  uint64_t charge = 0;         // Cache::Charge(key, value), as accounted in Shard::usage_
  uint32_t key_size = 0;
  uint32_t slot = 0;         // index in Shard::entries_
  uint16_t lfu_minutes = 0;  // kAllKeysLfu: minute clock (mod 2^16) of the last access
  uint8_t lfu_counter = 0;   // kAllKeysLfu: logarithmic access counter
  uint8_t db = 0;            // the physical database of the key (config/current_db.h)
  uint32_t lru_stamp = 0;    // kAllKeysLru: Shard::lru_clock_ when last moved to the newest end

  static size_t ValueOffset(size_t key_size) {
    return sizeof(Entry) + ((key_size + 7) & ~size_t{7});
  }
  static size_t BlockSize(size_t key_size) { return ValueOffset(key_size) + sizeof(Value); }

  std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_size}; }
  Value& value() {
    return *std::launder(
        reinterpret_cast<Value*>(reinterpret_cast<char*>(this) + ValueOffset(key_size)));
  }
  const Value& value() const { return const_cast<Entry*>(this)->value(); }
  bool ExpiredAt(int64_t now_ms) const { return expire_at_ms != 0 && now_ms >= expire_at_ms; }
};
static_assert(sizeof(Entry) == 64, "the header is one cache line");
static_assert(alignof(Value) <= 8, "Value sits at an 8-aligned offset");

// Allocates one block for the header and the key. Thread-safe (no shard state).
Entry* NewEntry(std::string_view key, uint64_t hash, Value&& value, int64_t expire_at_ms,
                uint64_t charge, int db = 0);
// Frees `chain` and every entry linked after it through next_hash. Call without any shard lock.
void DeleteChain(Entry* chain);

// Chained hash table over Entry::next_hash, indexed by the high half of the hash (the shard
// index took the low bits). Grows by doubling when entries exceed buckets (load <= 1);
// shrinks only on Reset.
class EntryTable {
 public:
  EntryTable();
  ~EntryTable();
  EntryTable(const EntryTable&) = delete;
  EntryTable& operator=(const EntryTable&) = delete;

  Entry* Lookup(std::string_view key, uint64_t hash, int db) const {
    Entry* e = buckets_[Bucket(hash)];
    while (e != nullptr && (e->hash != hash || e->db != db || e->key() != key)) e = e->next_hash;
    return e;
  }
  // REQUIRES: no entry with e's key is present.
  void Insert(Entry* e);
  // REQUIRES: e is present.
  void Remove(Entry* e);
  size_t size() const { return size_; }
  size_t bucket_count() const { return mask_ + 1; }
  // Forgets every entry (the caller owns them) and returns to the initial bucket count.
  void Reset();

 private:
  size_t Bucket(uint64_t hash) const { return static_cast<size_t>(hash >> 32) & mask_; }
  void Grow();

  Entry** buckets_ = nullptr;
  size_t mask_ = 0;  // bucket count - 1 (a power of two)
  size_t size_ = 0;
};

class alignas(64) Shard {
 public:
  Shard() = default;
  ~Shard();
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  // Before first use (no lock needed then).
  void Init(Policy policy, uint64_t capacity, uint64_t seed);
  // Cache::SetPolicy. Under LFU the LRU list is still kept (in insertion order), so either switch
  // leaves every structure valid.
  void set_policy(Policy policy) { policy_ = policy; }

  std::mutex& mu() const { return mu_; }

  // --- Everything below REQUIRES mu() held. ---

  // Records that the caller's clock reads now_ms: the shard keeps the largest value seen as its
  // clock for LFU ageing and for expiry checks during eviction (Put carries no clock).
  void Observe(int64_t now_ms) {
    if (now_ms > clock_ms_) clock_ms_ = now_ms;
  }
  // The entry for key, expired or not, or nullptr. No side effect.
  const Entry* Lookup(std::string_view key, uint64_t hash, int db) const {
    return table_.Lookup(key, hash, db);
  }
  // The live entry for key, or nullptr. An expired entry is unlinked, counted in `expired` and
  // chained onto *garbage. Does not touch recency; call Touch for that.
  Entry* Find(std::string_view key, uint64_t hash, int db, int64_t now_ms, Entry** garbage);
  // An access. LRU moves e to the newest end, unless e already is among the newest quarter of
  // the list (fewer than size/4 moves happened since its own): such an entry is safe from
  // eviction for at least 3/4 of the shard's turnover anyway, and skipping the move spares the
  // hot path two writes to random neighbour entries (two likely cache misses) and keeps hot keys
  // read-mostly. LFU ages and increments its counter.
  void Touch(Entry* e);
  // Installs e (built outside the lock by NewEntry), first removing any entry with the same key
  // (LFU keeps the old entry's counter), then evicting until e fits. When e->charge exceeds the
  // budget, e itself goes to *garbage instead, the old entry counts as erased, and it returns
  // false.
  bool Install(Entry* e, Entry** garbage);
  // Removes key's entry and counts it in `erases`, if there is one (expired or not).
  bool Erase(std::string_view key, uint64_t hash, int db, Entry** garbage);
  // For a Put that will not install (e.g. too many fields): removes any old entry, counts it.
  void Reject(std::string_view key, uint64_t hash, int db, Entry** garbage);
  // Removes every entry of database `db` onto *garbage (FLUSHDB).
  size_t ClearDb(int db, Entry** garbage);
  // After an Update mutator ran on e: with keep == false, or with an expire-at already reached,
  // removes e; otherwise recharges it to new_charge (removing it if over the budget), records
  // the new expire-at and evicts others back under the budget. Returns whether e stays.
  bool FinishUpdate(Entry* e, bool keep, int64_t expire_at_ms, uint64_t new_charge, int64_t now_ms,
                    Entry** garbage);
  // Unlinks every entry onto *garbage; releases the table's and the vector's memory.
  void Clear(Entry** garbage);
  // New budget; evicts down to it at once.
  void SetCapacity(uint64_t capacity, Entry** garbage);
  // Active expiry: probes up to `samples` random entries and removes the expired ones.
  size_t RemoveExpired(int64_t now_ms, size_t samples, Entry** garbage);
  // kAllKeysLfu: e's counter aged to the shard clock (as Redis OBJECT FREQ); 0 under LRU.
  uint8_t LfuFrequency(const Entry* e) const;

  // Every entry, expired or not, in no particular order.
  const std::vector<Entry*>& entries() const { return entries_; }
  Stats& counters() { return stats_; }  // counters only; gauges are filled by GetStats
  Stats GetStats() const;

  // LFU parameters, as Redis's defaults (lfu-log-factor 10, lfu-decay-time 1 minute).
  static constexpr uint8_t kLfuInitVal = 5;
  static constexpr double kLfuLogFactor = 10.0;
  static constexpr int64_t kLfuDecayMs = 60'000;
  // Entries sampled per LFU eviction: the lowest aged counter of 8 random entries goes. More
  // samples approach exact LFU but each one is a likely cache miss (~0.1 us at scale).
  static constexpr int kLfuSamples = 8;
  // Random entries probed for an expired one before an eviction, when any entry has a TTL.
  static constexpr int kExpireProbes = 5;

 private:
  void Link(Entry* e);
  void Unlink(Entry* e);  // from table, list and vector; adjusts usage; caller chains it
  void EvictFor(uint64_t incoming, const Entry* keep, Entry** garbage);
  Entry* PickVictim(const Entry* keep, bool* expired);
  void LruAppend(Entry* e);
  static void LruRemove(Entry* e);
  uint8_t DecayedCounter(const Entry* e) const;
  uint8_t LogIncrement(uint8_t counter);
  uint64_t NextRandom();
  size_t RandomIndex(size_t n) {
    return static_cast<size_t>((static_cast<unsigned __int128>(NextRandom()) * n) >> 64);
  }
  uint16_t MinuteClock() const { return static_cast<uint16_t>((clock_ms_ / kLfuDecayMs) & 0xffff); }

  mutable std::mutex mu_;
  Policy policy_ = Policy::kAllKeysLru;
  uint64_t capacity_ = 0;          // GUARDED_BY(mu_)
  uint64_t usage_ = 0;             // GUARDED_BY(mu_)
  uint64_t ttl_entries_ = 0;       // GUARDED_BY(mu_)
  uint64_t negative_entries_ = 0;  // GUARDED_BY(mu_); entries holding Value::Absent()
  int64_t clock_ms_ = 0;           // GUARDED_BY(mu_)
  uint64_t rng_ = 1;               // GUARDED_BY(mu_)
  uint32_t lru_clock_ = 0;         // GUARDED_BY(mu_); +1 per move to the newest end (wraps)
  EntryTable table_;               // GUARDED_BY(mu_)
  LruLink lru_{&lru_, &lru_};      // GUARDED_BY(mu_); lru_.next = oldest, lru_.prev = newest
  std::vector<Entry*> entries_;    // GUARDED_BY(mu_)
  Stats stats_;                    // GUARDED_BY(mu_); counters only
};

}  // namespace rockcache::cache::internal
