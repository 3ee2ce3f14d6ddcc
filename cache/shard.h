// Internals of cache::Cache, in a header only because Cache's templates (Visit, Peek, Update,
// ForEachSnapshot) run inline in the caller. Not an API: use cache/cache.h.
//
// One Shard = one std::mutex + a chained hash table of Entry + the eviction structures:
//   - two intrusive doubly-linked lists, the segments of a segmented LRU (kAllKeysLru; oldest at
//     head.next, newest at head.prev): *probation*, where every new key starts, and *protected*,
//     for keys hit again while in probation. Every entry is in exactly one of them, under either
//     policy (LFU never promotes: new keys enter probation, rewrites keep their segment);
//   - a vector of every entry (Entry::slot is its index; removal swaps the last one in), which
//     gives the O(1) random sampling that LFU eviction and the expired-first probes need.
//
// Segmented LRU (kAllKeysLru), as RocksDB's LRUCache high-priority pool, InnoDB's midpoint
// insertion or memcached's segmented LRU. The moves, all O(1) and allocation-free:
//   install of a new key          -> newest end of probation;
//   hit (Touch) in probation      -> promoted: newest end of protected (counted in `promotions`);
//   hit in protected              -> newest end of protected, unless already among its newest
//                                    quarter (the lazy touch; see Touch);
//   protected over kProtectedPercent of the budget -> its oldest entries demoted to the newest
//                                    end of probation (`demotions`), where a hit promotes again;
//   rewrite (Install over a live entry of the same key, FinishUpdate) -> newest end of the
//                                    segment the old entry was in: a write neither promotes
//                                    nor demotes (see "Segmented LRU" in cache/cache.h);
//   eviction                      -> expired/stale probes first, then the oldest of probation,
//                                    then (only when probation holds nothing else) the oldest
//                                    of protected.
// An entry whose charge exceeds the protected share is never promoted (it would demote all the
// others).
//
// Each entry is one heap block: the Entry header, the key bytes, then the Value. A lookup never
// allocates: it hashes the string_view once, walks one bucket chain comparing the stored 64-bit
// hash, and memcmp's the key only on a hash match.
//
// Generations (FLUSHDB/FLUSHALL in O(1), see "Flushes" in cache/cache.h): each entry carries the
// generation its database had when it was filled; the Cache owns one atomic generation per
// physical database and the shard reads it through the pointer given to Init. An entry whose
// generation differs from its database's current one is *stale*: every lookup treats it as absent
// and removes it on sight (counted in `flushed`), eviction and RemoveExpired take it first, and
// until then it stays in the table, the lists and usage_ (it still costs memory). For the stats
// the shard counts entries per database and generation (DbCount): a database's count moves to
// the stale totals when the shard notices its generation changed (Refresh, O(kMaxDatabases) once
// per flush, off the lookup path).
//
// Locking: every Shard method REQUIRES mu() held. Entries that leave the shard are unlinked under
// the lock and chained (through Entry::next_hash) onto a caller-provided `garbage` list, which the
// caller frees with DeleteChain after unlocking: destroying a value (up to a 1024-field hash)
// never lengthens a critical section.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <string_view>
#include <vector>

#include "cache/options.h"
#include "cache/value.h"
#include "config/current_db.h"
#include "config/mutex.h"

namespace rockcache::cache::internal {

struct LruLink {
  LruLink* prev = nullptr;
  LruLink* next = nullptr;
};

// One cached key, in one heap block laid out for the lookup path:
//   [0, 64)        this header: everything a lookup compares and the eviction structures touch
//   [64, 64+k)     the key bytes
//   [64+round8(k)) the Value (type + std::string + std::vector + a list head's pointer, 72 bytes)
// A hit reads one contiguous run (152 bytes for a 16-byte key: 2-3 cache lines) rather than a
// header plus a key stored after the Value, one more line away.
struct Entry : LruLink {
  Entry* next_hash = nullptr;  // bucket chain; after removal, the garbage chain
  uint64_t hash = 0;           // HashKey(key)
  int64_t expire_at_ms = 0;    // 0 = no TTL
  uint32_t charge = 0;         // Cache::Charge(key, value) (<= kMaxCharge), as in Shard::usage_
  uint32_t generation = 0;     // its database's generation when filled (stale when different)
  uint32_t key_size = 0;
  uint32_t slot = 0;  // index in Shard::entries_
  // kAllKeysLfu: the minute clock (mod 2^16) of the last access and the logarithmic access
  // counter. kAllKeysLru: the two hold instead the second clock (mod 2^24) of the last access,
  // Redis's 24-bit LRU clock (OBJECT IDLETIME): access_seconds().
  uint16_t lfu_minutes = 0;
  uint8_t lfu_counter = 0;
  uint8_t db = 0;  // the physical database of the key (config/current_db.h)
  // Which LRU segment e is in, and its recency there: kInProbation (0) while in probation; in
  // protected, Shard::lru_clock_ when e last moved to protected's newest end (the clock skips 0).
  // Reusing the stamp keeps the header at 64 bytes: a probation entry needs no stamp (its first
  // hit always moves it) and a protected one needs no flag.
  uint32_t lru_stamp = 0;
  static constexpr uint32_t kInProbation = 0;
  bool in_protected() const { return lru_stamp != kInProbation; }
  uint32_t access_seconds() const { return lfu_minutes | (uint32_t{lfu_counter} << 16); }
  void set_access_seconds(uint32_t seconds) {
    lfu_minutes = static_cast<uint16_t>(seconds & 0xffff);
    lfu_counter = static_cast<uint8_t>((seconds >> 16) & 0xff);
  }

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
// The largest charge an entry may have: a value whose Charge is above it is never cached (Put
// rejects it, Update drops it). 4 GiB is far above what a cache entry should be (a shard's
// budget is max_memory / shards, and a string above proto-max-bulk-len, 512 MB by default,
// never reaches the cache).
inline constexpr uint64_t kMaxCharge = UINT32_MAX;
static_assert(alignof(Value) <= 8, "Value sits at an 8-aligned offset");

// Allocates one block for the header and the key. Thread-safe (no shard state).
// REQUIRES: charge <= kMaxCharge.
Entry* NewEntry(std::string_view key, uint64_t hash, Value&& value, int64_t expire_at_ms,
                uint64_t charge, int db = 0, uint32_t generation = 0);
// Frees `chain` and every entry linked after it through next_hash. Call without any shard lock.
void DeleteChain(Entry* chain);

// Chained hash table over Entry::next_hash, indexed by the high half of the hash (the shard
// index took the low bits). Grows by doubling when entries exceed buckets (load <= 1);
// shrinks only on Reset.
//
// A bucket is one word: its first entry's address (bits 0-47: x86-64 and AArch64 user space),
// 15 bits of that entry's hash (bits 16-30, used by neither the shard nor the bucket index) and
// whether more entries follow it. With a million keys every entry is a cache miss: a lookup of
// a key that is not there (a GET miss, the first write of a key) then loads no entry at all when
// its bucket is empty or holds one entry with another tag, as two thirds of nonempty buckets do
// at load 1, instead of loading that entry to compare its hash.
class EntryTable {
 public:
  EntryTable();
  ~EntryTable();
  EntryTable(const EntryTable&) = delete;
  EntryTable& operator=(const EntryTable&) = delete;

  Entry* Lookup(std::string_view key, uint64_t hash, int db) const {
    const uintptr_t head = buckets_[Bucket(hash)];
    Entry* e = First(head);
    if (e != nullptr && (head & kTagMask) != Tag(hash)) {
      if ((head & kMoreBit) == 0) return nullptr;  // its one entry is another key's
      e = e->next_hash;
    }
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
  static constexpr uintptr_t kAddressMask = (uintptr_t{1} << 48) - 1;
  static constexpr uintptr_t kTagMask = uintptr_t{0x7fff} << 48;
  static constexpr uintptr_t kMoreBit = uintptr_t{1} << 63;
  static uintptr_t Tag(uint64_t hash) {
    return static_cast<uintptr_t>((hash >> 16) & 0x7fff) << 48;
  }
  static Entry* First(uintptr_t head) { return reinterpret_cast<Entry*>(head & kAddressMask); }
  // The bucket word of a chain that starts at `first` (nullptr: an empty bucket).
  static uintptr_t Head(Entry* first);

  size_t Bucket(uint64_t hash) const { return static_cast<size_t>(hash >> 32) & mask_; }
  // Links e at the front of its bucket in `buckets` (of mask + 1).
  static void Link(uintptr_t* buckets, size_t mask, Entry* e);
  void Grow();

  uintptr_t* buckets_ = nullptr;
  size_t mask_ = 0;  // bucket count - 1 (a power of two)
  size_t size_ = 0;
};

class alignas(64) Shard {
 public:
  Shard() = default;
  ~Shard();
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  // Before first use (no lock needed then). `generations` (kMaxDatabases of them, the current
  // generation of each physical database) and `flushes` (+1 after every generation change)
  // belong to the Cache and outlive the shard. Not analysed: no other thread sees the shard yet.
  void Init(Policy policy, uint64_t capacity, uint64_t seed,
            const std::atomic<uint32_t>* generations,
            const std::atomic<uint64_t>* flushes) NO_THREAD_SAFETY_ANALYSIS;
  // Cache::SetPolicy. Under LFU the segments are still kept (new entries appended to probation,
  // nothing moved), so either switch leaves every structure valid; entries keep their segment.
  void set_policy(Policy policy) { policy_ = policy; }

  Mutex& mu() const RETURN_CAPABILITY(mu_) { return mu_; }

  // --- Everything below REQUIRES mu() held (checked: REQUIRES(mu_)). ---

  // Records that the caller's clock reads now_ms: the shard keeps the largest value seen as its
  // clock for LFU ageing and for expiry checks during eviction (Put carries no clock).
  void Observe(int64_t now_ms) REQUIRES(mu_) {
    if (now_ms > clock_ms_) clock_ms_ = now_ms;
  }
  // The entry for key, expired or stale or not, or nullptr. No side effect.
  const Entry* Lookup(std::string_view key, uint64_t hash, int db) const REQUIRES(mu_) {
    return table_.Lookup(key, hash, db);
  }
  // Whether e belongs to an older generation of its database (flushed since it was filled).
  // One acquire load (a plain load on x86) and a compare.
  bool IsStale(const Entry* e) const REQUIRES(mu_) {
    return e->generation != generations_[e->db].load(std::memory_order_acquire);
  }
  // The live entry for key, or nullptr. An expired entry is unlinked, counted in `expired` and
  // chained onto *garbage; a stale one likewise, counted in `flushed`. Does not touch recency;
  // call Touch for that.
  Entry* Find(std::string_view key, uint64_t hash, int db, int64_t now_ms, Entry** garbage)
      REQUIRES(mu_);
  // An access (a Visit or Peek hit). LRU: an entry in probation is promoted to the newest end of
  // protected (then protected is trimmed back to its share); an entry in protected moves to its
  // newest end, unless it already is among protected's newest quarter (fewer than
  // protected_entries_/4 moves into protected happened since its own): such an entry is safe from
  // demotion for at least 3/4 of protected's turnover anyway, and skipping the move spares the
  // hot path two writes to random neighbour entries (two likely cache misses) and keeps hot keys
  // read-mostly. The skip is decided on the protected stamp only, so it never keeps a probation
  // entry from being promoted. LFU ages and increments its counter.
  void Touch(Entry* e) REQUIRES(mu_);
  // Installs e (built outside the lock by NewEntry), first removing any entry with the same key
  // (LFU keeps a live old entry's counter; e takes a live old entry's LRU segment, at its newest
  // end, else starts in probation), then evicting until e fits. When e->charge exceeds
  // the budget, or e is stale already (its fill started before a flush of its database), e
  // itself goes to *garbage instead, a live old entry counts as erased (a stale one as
  // flushed), and it returns false.
  bool Install(Entry* e, Entry** garbage) REQUIRES(mu_);
  // Removes key's entry, if there is one, and counts it in `erases` (in `flushed` if stale, and
  // then returns false: the key was not cached).
  bool Erase(std::string_view key, uint64_t hash, int db, Entry** garbage) REQUIRES(mu_);
  // For a Put that will not install (e.g. too many fields): removes any old entry, counts it.
  void Reject(std::string_view key, uint64_t hash, int db, Entry** garbage) REQUIRES(mu_);
  // For a fill whose ticket no longer holds (Cache::Put): e, never linked, goes to *garbage and
  // counts as rejected; the table is left as it is.
  void Refuse(Entry* e, Entry** garbage) REQUIRES(mu_) {
    ++stats_.rejected;
    e->next_hash = *garbage;
    *garbage = e;
  }
  // Removes every entry of database `db` onto *garbage: O(entries). Only for the generation
  // wrap-around (Cache::ClearDb, once per 2^32 flushes of one database).
  size_t ClearDb(int db, Entry** garbage) REQUIRES(mu_);
  // After an Update mutator ran on e: with keep == false, or with an expire-at already reached,
  // removes e; otherwise recharges it to new_charge (removing it if over the budget), records
  // the new expire-at, moves e to the newest end of its own LRU segment (LFU: counts an access)
  // and evicts others back under the budget. Returns whether e stays.
  bool FinishUpdate(Entry* e, bool keep, int64_t expire_at_ms, uint64_t new_charge, int64_t now_ms,
                    Entry** garbage) REQUIRES(mu_);
  // Unlinks every entry onto *garbage; releases the table's and the vector's memory.
  void Clear(Entry** garbage) REQUIRES(mu_);
  // New budget; demotes protected entries down to its new share, then evicts down to it at once.
  void SetCapacity(uint64_t capacity, Entry** garbage) REQUIRES(mu_);
  // Active expiry: probes up to `samples` random entries and removes the expired and stale ones.
  size_t RemoveExpired(int64_t now_ms, size_t samples, Entry** garbage) REQUIRES(mu_);
  // kAllKeysLfu: e's counter aged to the shard clock (as Redis OBJECT FREQ); 0 under LRU.
  uint8_t LfuFrequency(const Entry* e) const REQUIRES(mu_);
  // kAllKeysLru: seconds since e's last access (Touch, Install, FinishUpdate) by the shard
  // clock, as Redis OBJECT IDLETIME (its 24-bit clock wraps after 194 days, as Redis's); 0 under
  // LFU.
  int64_t IdleSeconds(const Entry* e) const REQUIRES(mu_);

  // Every entry, expired or stale or not, in no particular order.
  const std::vector<Entry*>& entries() const REQUIRES(mu_) { return entries_; }
  Stats& counters() REQUIRES(mu_) {
    return stats_;
  }  // counters only; gauges are filled by GetStats
  // Counters and gauges; keys / keys_with_ttl / negative_keys exclude stale entries (exact as of
  // the call: it runs Refresh).
  Stats GetStats() REQUIRES(mu_);

  // LFU parameters, as Redis's defaults (lfu-log-factor 10, lfu-decay-time 1 minute).
  static constexpr uint8_t kLfuInitVal = 5;
  static constexpr double kLfuLogFactor = 10.0;
  static constexpr int64_t kLfuDecayMs = 60'000;
  // Entries sampled per LFU eviction: the lowest aged counter of 8 random entries goes. More
  // samples approach exact LFU but each one is a likely cache miss (~0.1 us at scale).
  static constexpr int kLfuSamples = 8;
  // Random entries probed for an expired or stale one before an eviction, when any entry has a
  // TTL or is known stale.
  static constexpr int kExpireProbes = 5;
  // The protected segment's share of the shard's budget, in percent (charge bytes, stale entries
  // included). A sweep of keys read once only ever cycles through the rest, so a hot set of up
  // to 80% of the budget survives any scan; the price is that, once protected is full, a new
  // key must be hit again within 20% of the budget's worth of fills (the probation window) to
  // be promoted. A higher share protects more but narrows that window; a lower one admits new
  // hot keys more easily but lets a scan take more (InnoDB keeps 63% of its pool "new",
  // RocksDB's high-priority pool is commonly half of the cache). 80% favours keeping the hot set
  // (the reason this policy exists) and still gives a key a fifth of the cache's turnover to
  // show a second read.
  static constexpr uint64_t kProtectedPercent = 80;

 private:
  // Into the table, the vector and a segment: protected's newest end when `to_protected`, else
  // probation's.
  void Link(Entry* e, bool to_protected) REQUIRES(mu_);
  void Unlink(Entry* e)
      REQUIRES(mu_);  // from table, segment and vector; adjusts usage; caller chains it
  // Entries of one database in the shard, by generation: those whose Entry::generation equals
  // `generation`; entries of an older generation are in the stale_* totals instead.
  struct DbCount {
    uint32_t generation = 0;
    uint32_t keys = 0;
    uint32_t ttl = 0;
    uint32_t negative = 0;
  };
  // Why an entry left without being asked to (the counter it goes to).
  enum class Gone { kEvicted, kExpired, kFlushed };
  // Adds (+1) or removes (-1) e from the key/TTL/negative gauges of its DbCount or the stale
  // totals, whichever e's generation says.
  void Count(const Entry* e, int sign) REQUIRES(mu_);
  // Moves a DbCount into the stale totals.
  void Retire(DbCount& count) REQUIRES(mu_);
  // After any flush since the last call: retires the DbCount of every database whose generation
  // changed. O(kMaxDatabases) then, one atomic load otherwise.
  void Refresh() REQUIRES(mu_);
  void Drop(Entry* e, Gone why, Entry** garbage) REQUIRES(mu_);  // Unlink + chain + count
  void EvictFor(uint64_t incoming, const Entry* keep, Entry** garbage) REQUIRES(mu_);
  Entry* PickVictim(const Entry* keep, Gone* why) REQUIRES(mu_);
  // The segment moves (see the top of this file). Append* link an unlinked e at the newest end
  // and stamp it; the protected totals are the caller's (AddProtected / RemoveProtected).
  void AppendProbation(Entry* e) REQUIRES(mu_) {
    e->lru_stamp = Entry::kInProbation;
    ListAppend(&probation_, e);
  }
  void AppendProtected(Entry* e) REQUIRES(mu_) {
    if (++lru_clock_ == Entry::kInProbation) ++lru_clock_;
    e->lru_stamp = lru_clock_;
    ListAppend(&protected_, e);
  }
  void AddProtected(const Entry* e) REQUIRES(mu_) {
    protected_bytes_ += e->charge;
    ++protected_entries_;
  }
  void RemoveProtected(const Entry* e) REQUIRES(mu_) {
    protected_bytes_ -= e->charge;
    --protected_entries_;
  }
  void Promote(Entry* e) REQUIRES(mu_);  // REQUIRES: e in probation
  // Demotes protected's oldest entries until protected_bytes_ <= protected_capacity_.
  void TrimProtected() REQUIRES(mu_);
  // The oldest entry of a segment other than `keep`, or nullptr.
  static Entry* OldestExcept(LruLink* head, const Entry* keep);
  static void ListAppend(LruLink* head, Entry* e);
  static void ListRemove(Entry* e);
  uint8_t DecayedCounter(const Entry* e) const REQUIRES(mu_);
  uint8_t LogIncrement(uint8_t counter) REQUIRES(mu_);
  uint64_t NextRandom() REQUIRES(mu_);
  size_t RandomIndex(size_t n) REQUIRES(mu_) {
    return static_cast<size_t>((static_cast<unsigned __int128>(NextRandom()) * n) >> 64);
  }
  static constexpr uint32_t kSecondClockMask = (1u << 24) - 1;
  uint32_t SecondClock() const REQUIRES(mu_) {
    return static_cast<uint32_t>((clock_ms_ / 1000) & kSecondClockMask);
  }
  uint16_t MinuteClock() const REQUIRES(mu_) {
    return static_cast<uint16_t>((clock_ms_ / kLfuDecayMs) & 0xffff);
  }

  mutable Mutex mu_;
  Policy policy_ = Policy::kAllKeysLru;
  uint64_t capacity_ GUARDED_BY(mu_) = 0;
  uint64_t usage_ GUARDED_BY(mu_) = 0;
  uint64_t ttl_entries_ GUARDED_BY(mu_) = 0;            // stale ones included
  uint64_t negative_entries_ GUARDED_BY(mu_) = 0;       // entries holding Value::Absent(), ditto
  const std::atomic<uint32_t>* generations_ = nullptr;  // the Cache's, one per database
  const std::atomic<uint64_t>* flushes_ = nullptr;      // the Cache's flush count
  uint64_t refreshed_flushes_ GUARDED_BY(mu_) = 0;      // *flushes_ at the last Refresh
  uint64_t stale_keys_ GUARDED_BY(mu_) = 0;             // entries known stale (see DbCount)
  uint64_t stale_ttl_ GUARDED_BY(mu_) = 0;              // of which with a TTL
  uint64_t stale_negative_ GUARDED_BY(mu_) = 0;         // of which negative
  int64_t clock_ms_ GUARDED_BY(mu_) = 0;
  uint64_t rng_ GUARDED_BY(mu_) = 1;
  uint32_t lru_clock_ GUARDED_BY(mu_) = 0;           // +1 per move into protected, skips 0
  uint64_t protected_capacity_ GUARDED_BY(mu_) = 0;  // capacity_ * kProtectedPercent / 100
  uint64_t protected_bytes_ GUARDED_BY(mu_) = 0;     // sum of charge over protected
  uint64_t protected_entries_ GUARDED_BY(mu_) = 0;   // entries in protected
  EntryTable table_ GUARDED_BY(mu_);
  // The segments: head.next = oldest, head.prev = newest.
  LruLink probation_ GUARDED_BY(mu_){&probation_, &probation_};
  LruLink protected_ GUARDED_BY(mu_){&protected_, &protected_};
  std::vector<Entry*> entries_ GUARDED_BY(mu_);
  Stats stats_ GUARDED_BY(mu_);  // counters only
  // Last: 4 KiB that only Link/Unlink/Refresh touch, kept away from the lookup path's fields.
  DbCount db_counts_[kMaxDatabases] GUARDED_BY(mu_);
};

}  // namespace rockcache::cache::internal
