#include "cache/shard.h"

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace rockcache::cache::internal {

Entry* NewEntry(std::string_view key, uint64_t hash, Value&& value, int64_t expire_at_ms,
                uint64_t charge, int db, uint32_t generation) {
  assert(key.size() <= UINT32_MAX);
  assert(charge <= kMaxCharge);
  char* block = static_cast<char*>(::operator new(Entry::BlockSize(key.size())));
  auto* e = new (block) Entry();
  e->hash = hash;
  e->expire_at_ms = expire_at_ms;
  e->charge = static_cast<uint32_t>(charge);
  e->generation = generation;
  e->key_size = static_cast<uint32_t>(key.size());
  e->lfu_counter = Shard::kLfuInitVal;
  e->db = static_cast<uint8_t>(db);
  if (!key.empty()) std::memcpy(block + sizeof(Entry), key.data(), key.size());
  new (block + Entry::ValueOffset(key.size())) Value(std::move(value));
  return e;
}

void DeleteChain(Entry* chain) {
  while (chain != nullptr) {
    Entry* next = chain->next_hash;
    chain->value().~Value();
    chain->~Entry();
    ::operator delete(chain);
    chain = next;
  }
}

// ---------------------------------------------------------------------------------------------
// EntryTable

namespace {
constexpr size_t kInitialBuckets = 64;
}

EntryTable::EntryTable() { Reset(); }

EntryTable::~EntryTable() { delete[] buckets_; }

void EntryTable::Reset() {
  delete[] buckets_;
  buckets_ = new uintptr_t[kInitialBuckets]();
  mask_ = kInitialBuckets - 1;
  size_ = 0;
}

uintptr_t EntryTable::Head(Entry* first) {
  if (first == nullptr) return 0;
  const auto address = reinterpret_cast<uintptr_t>(first);
  if ((address & ~kAddressMask) != 0) {
    // Not a 48-bit user-space address (a 5-level page table handing out addresses above 2^47
    // only to mmap calls that ask for them): the bucket word cannot hold it.
    std::fprintf(stderr, "cache: entry address %p above 48 bits\n", static_cast<void*>(first));
    std::abort();
  }
  return address | Tag(first->hash) | (first->next_hash != nullptr ? kMoreBit : 0);
}

void EntryTable::Link(uintptr_t* buckets, size_t mask, Entry* e) {
  uintptr_t& head = buckets[static_cast<size_t>(e->hash >> 32) & mask];
  e->next_hash = First(head);
  head = Head(e);
}

void EntryTable::Insert(Entry* e) {
  Link(buckets_, mask_, e);
  if (++size_ > mask_ + 1) Grow();
}

void EntryTable::Remove(Entry* e) {
  uintptr_t& head = buckets_[Bucket(e->hash)];
  Entry* first = First(head);
  if (first == e) {
    first = e->next_hash;
  } else {
    Entry* p = first;
    while (p->next_hash != e) {
      assert(p->next_hash != nullptr);
      p = p->next_hash;
    }
    p->next_hash = e->next_hash;
  }
  head = Head(first);  // its tag, and whether more follow it now
  e->next_hash = nullptr;
  --size_;
}

void EntryTable::Grow() {
  const size_t new_count = (mask_ + 1) * 2;
  auto* fresh = new uintptr_t[new_count]();
  const size_t new_mask = new_count - 1;
  for (size_t i = 0; i <= mask_; ++i) {
    Entry* e = First(buckets_[i]);
    while (e != nullptr) {
      Entry* next = e->next_hash;
      Link(fresh, new_mask, e);
      e = next;
    }
  }
  delete[] buckets_;
  buckets_ = fresh;
  mask_ = new_mask;
}

// ---------------------------------------------------------------------------------------------
// Shard

namespace {
// kProtectedPercent of a shard's budget, without overflowing for any budget.
uint64_t ProtectedShare(uint64_t capacity) {
  return capacity / 100 * Shard::kProtectedPercent +
         capacity % 100 * Shard::kProtectedPercent / 100;
}
}  // namespace

Shard::~Shard() {
  Entry* garbage = nullptr;
  Clear(&garbage);
  DeleteChain(garbage);
}

void Shard::Init(Policy policy, uint64_t capacity, uint64_t seed,
                 const std::atomic<uint32_t>* generations, const std::atomic<uint64_t>* flushes) {
  policy_ = policy;
  capacity_ = capacity;
  protected_capacity_ = ProtectedShare(capacity);
  rng_ = seed | 1;  // xorshift state must not be 0
  generations_ = generations;
  flushes_ = flushes;
  refreshed_flushes_ = flushes->load(std::memory_order_acquire);
  for (int db = 0; db < kMaxDatabases; ++db) {
    db_counts_[db].generation = generations[db].load(std::memory_order_acquire);
  }
}

Entry* Shard::Find(std::string_view key, uint64_t hash, int db, int64_t now_ms, Entry** garbage) {
  Entry* e = table_.Lookup(key, hash, db);
  if (e == nullptr) return nullptr;
  // IsStale(e), with the db already in a register (e->db == db): the lookup path's one extra load
  // and compare (~5 instructions per GET measured with callgrind).
  if (e->ExpiredAt(now_ms) || e->generation != generations_[db].load(std::memory_order_acquire)) {
    Drop(e, e->ExpiredAt(now_ms) ? Gone::kExpired : Gone::kFlushed, garbage);
    return nullptr;
  }
  return e;
}

void Shard::Touch(Entry* e) {
  if (policy_ == Policy::kAllKeysLru) {
    // Written only when the second changes: a hot key's header stays read-mostly.
    if (const uint32_t now = SecondClock(); e->access_seconds() != now) {
      e->set_access_seconds(now);
    }
    if (!e->in_protected()) return Promote(e);
    if (lru_clock_ - e->lru_stamp < protected_entries_ / 4) return;  // among protected's newest
    ListRemove(e);
    AppendProtected(e);
  } else {
    e->lfu_counter = LogIncrement(DecayedCounter(e));
    e->lfu_minutes = MinuteClock();
  }
}

bool Shard::Install(Entry* e, Entry** garbage) {
  Entry* old = table_.Lookup(e->key(), e->hash, e->db);
  const bool old_stale = old != nullptr && IsStale(old);
  // A rewrite keeps the key's segment (see "Segmented LRU" in cache.h); a new key is on probation.
  const bool to_protected = old != nullptr && !old_stale && old->in_protected();
  if (old != nullptr) {
    // A write to a hot key keeps it hot (Redis does the same on overwrite); a flushed key's
    // history does not carry over.
    if (policy_ == Policy::kAllKeysLfu && !old_stale) e->lfu_counter = DecayedCounter(old);
    Unlink(old);
    old->next_hash = *garbage;
    *garbage = old;
    if (old_stale) ++stats_.flushed;
  }
  // A fill stamped with a generation that is no longer current read storage before a flush of
  // its database finished: installing it would be stale at once (and invisible); drop it.
  if (e->charge > capacity_ || IsStale(e)) {
    if (old != nullptr && !old_stale) ++stats_.erases;
    ++stats_.rejected;
    e->next_hash = *garbage;
    *garbage = e;
    return false;
  }
  if (policy_ == Policy::kAllKeysLfu) {
    e->lfu_minutes = MinuteClock();
  } else {
    e->set_access_seconds(SecondClock());
  }
  EvictFor(e->charge, nullptr, garbage);
  Link(e, to_protected && e->charge <= protected_capacity_);
  if (to_protected) TrimProtected();
  ++stats_.fills;
  return true;
}

bool Shard::Erase(std::string_view key, uint64_t hash, int db, Entry** garbage) {
  Entry* e = table_.Lookup(key, hash, db);
  if (e == nullptr) return false;
  const bool stale = IsStale(e);
  Unlink(e);
  e->next_hash = *garbage;
  *garbage = e;
  ++(stale ? stats_.flushed : stats_.erases);
  return !stale;
}

void Shard::Reject(std::string_view key, uint64_t hash, int db, Entry** garbage) {
  Erase(key, hash, db, garbage);
  ++stats_.rejected;
}

size_t Shard::ClearDb(int db, Entry** garbage) {
  size_t removed = 0;
  for (size_t i = 0; i < entries_.size();) {
    Entry* e = entries_[i];
    if (e->db != db) {
      ++i;
      continue;
    }
    Drop(e, Gone::kFlushed, garbage);  // swaps the last entry into slot i
    ++removed;
  }
  return removed;
}

bool Shard::FinishUpdate(Entry* e, bool keep, int64_t expire_at_ms, uint64_t new_charge,
                         int64_t now_ms, Entry** garbage) {
  Count(e, -1);
  e->expire_at_ms = expire_at_ms;
  Count(e, +1);
  if (!keep || e->ExpiredAt(now_ms) || new_charge > capacity_) {
    Unlink(e);
    e->next_hash = *garbage;
    *garbage = e;
    ++stats_.erases;
    return false;
  }
  usage_ = usage_ - e->charge + new_charge;
  if (e->in_protected()) protected_bytes_ = protected_bytes_ - e->charge + new_charge;
  e->charge = static_cast<uint32_t>(new_charge);  // <= capacity_ and <= kMaxCharge (Cache)
  if (policy_ == Policy::kAllKeysLru) {
    e->set_access_seconds(SecondClock());  // a write is an access (OBJECT IDLETIME 0 after it)
  }
  if (policy_ == Policy::kAllKeysLfu) {
    Touch(e);  // an access
  } else if (!e->in_protected()) {
    ListRemove(e);  // a write is recent, but not a second read: it stays on probation
    AppendProbation(e);
  } else {
    ListRemove(e);
    if (e->charge <= protected_capacity_) {
      AppendProtected(e);
      TrimProtected();  // e may have grown
    } else {
      RemoveProtected(e);  // grown past the protected share
      AppendProbation(e);
      ++stats_.demotions;
    }
  }
  ++stats_.updates;
  if (usage_ > capacity_) EvictFor(0, e, garbage);
  return true;
}

void Shard::Clear(Entry** garbage) {
  for (Entry* e : entries_) {
    e->next_hash = *garbage;
    *garbage = e;
  }
  std::vector<Entry*>().swap(entries_);
  table_.Reset();
  probation_.next = probation_.prev = &probation_;
  protected_.next = protected_.prev = &protected_;
  protected_bytes_ = protected_entries_ = 0;
  usage_ = 0;
  ttl_entries_ = 0;
  negative_entries_ = 0;
  stale_keys_ = stale_ttl_ = stale_negative_ = 0;
  for (DbCount& count : db_counts_) count.keys = count.ttl = count.negative = 0;
}

void Shard::SetCapacity(uint64_t capacity, Entry** garbage) {
  capacity_ = capacity;
  protected_capacity_ = ProtectedShare(capacity);
  TrimProtected();  // so that eviction takes the demoted entries before the protected ones
  EvictFor(0, nullptr, garbage);
}

size_t Shard::RemoveExpired(int64_t now_ms, size_t samples, Entry** garbage) {
  size_t removed = 0;
  Refresh();
  for (size_t i = 0; i < samples && (ttl_entries_ > 0 || stale_keys_ > 0) && !entries_.empty();
       ++i) {
    Entry* e = entries_[RandomIndex(entries_.size())];
    if (e->ExpiredAt(now_ms)) {
      Drop(e, Gone::kExpired, garbage);
    } else if (IsStale(e)) {
      Drop(e, Gone::kFlushed, garbage);
    } else {
      continue;
    }
    ++removed;
  }
  stats_.swept += removed;
  return removed;
}

uint8_t Shard::LfuFrequency(const Entry* e) const {
  return policy_ == Policy::kAllKeysLfu ? DecayedCounter(e) : 0;
}

int64_t Shard::IdleSeconds(const Entry* e) const {
  if (policy_ != Policy::kAllKeysLru) return 0;
  return (SecondClock() - e->access_seconds()) & kSecondClockMask;
}

Stats Shard::GetStats() {
  Refresh();
  Stats s = stats_;
  s.keys = table_.size() - stale_keys_;
  s.keys_with_ttl = ttl_entries_ - stale_ttl_;
  s.negative_keys = negative_entries_ - stale_negative_;
  s.stale_keys = stale_keys_;
  s.bytes_used = usage_;
  s.max_memory = capacity_;
  s.protected_keys = protected_entries_;
  s.protected_bytes = protected_bytes_;
  s.probation_keys = table_.size() - protected_entries_;
  return s;
}

void Shard::Count(const Entry* e, int sign) {
  const auto d = static_cast<uint64_t>(sign);  // +1 or -1 (wraps: unsigned arithmetic)
  const uint64_t ttl = e->expire_at_ms != 0 ? d : 0;
  const uint64_t negative = e->value().is_absent() ? d : 0;
  ttl_entries_ += ttl;
  negative_entries_ += negative;
  DbCount& count = db_counts_[e->db];
  if (e->generation == count.generation) {
    count.keys += static_cast<uint32_t>(d);
    count.ttl += static_cast<uint32_t>(ttl);
    count.negative += static_cast<uint32_t>(negative);
  } else {
    stale_keys_ += d;
    stale_ttl_ += ttl;
    stale_negative_ += negative;
  }
}

void Shard::Retire(DbCount& count) {
  stale_keys_ += count.keys;
  stale_ttl_ += count.ttl;
  stale_negative_ += count.negative;
  count.keys = count.ttl = count.negative = 0;
}

void Shard::Refresh() {
  const uint64_t flushes = flushes_->load(std::memory_order_acquire);
  if (flushes == refreshed_flushes_) return;
  refreshed_flushes_ = flushes;
  // Any entry of generation `current` was linked under this lock after the bump to it, and its
  // Link already moved the DbCount to `current`: a DbCount still on an older generation counts
  // only stale entries.
  for (int db = 0; db < kMaxDatabases; ++db) {
    DbCount& count = db_counts_[db];
    const uint32_t current = generations_[db].load(std::memory_order_acquire);
    if (count.generation == current) continue;
    Retire(count);
    count.generation = current;
  }
}

void Shard::Link(Entry* e, bool to_protected) {
  table_.Insert(e);
  if (to_protected) {
    AppendProtected(e);
    AddProtected(e);
  } else {
    AppendProbation(e);
  }
  e->slot = static_cast<uint32_t>(entries_.size());
  entries_.push_back(e);
  usage_ += e->charge;
  // Install linked e only when current: a DbCount on another generation is on an older one.
  DbCount& count = db_counts_[e->db];
  if (e->generation != count.generation) {
    Retire(count);
    count.generation = e->generation;
  }
  Count(e, +1);
}

void Shard::Unlink(Entry* e) {
  table_.Remove(e);
  ListRemove(e);
  if (e->in_protected()) RemoveProtected(e);
  Entry* last = entries_.back();
  entries_[e->slot] = last;
  last->slot = e->slot;
  entries_.pop_back();
  usage_ -= e->charge;
  Count(e, -1);
}

void Shard::Drop(Entry* e, Gone why, Entry** garbage) {
  Unlink(e);
  e->next_hash = *garbage;
  *garbage = e;
  switch (why) {
    case Gone::kEvicted:
      ++stats_.evictions;
      break;
    case Gone::kExpired:
      ++stats_.expired;
      break;
    case Gone::kFlushed:
      ++stats_.flushed;
      break;
  }
}

void Shard::EvictFor(uint64_t incoming, const Entry* keep, Entry** garbage) {
  if (usage_ + incoming <= capacity_) return;
  Refresh();  // so that stale_keys_ knows about the latest flushes
  while (usage_ + incoming > capacity_) {
    Gone why = Gone::kEvicted;
    Entry* victim = PickVictim(keep, &why);
    if (victim == nullptr) break;
    Drop(victim, why, garbage);
  }
}

Entry* Shard::PickVictim(const Entry* keep, Gone* why) {
  const size_t n = entries_.size();
  if (n == 0 || (n == 1 && entries_[0] == keep)) return nullptr;
  // Expired and stale entries go first: both are dead to every reader already.
  if (ttl_entries_ > 0 || stale_keys_ > 0) {
    for (int i = 0; i < kExpireProbes; ++i) {
      Entry* e = entries_[RandomIndex(n)];
      if (e == keep) continue;
      if (e->ExpiredAt(clock_ms_)) {
        *why = Gone::kExpired;
        return e;
      }
      if (IsStale(e)) {
        *why = Gone::kFlushed;
        return e;
      }
    }
  }
  if (policy_ == Policy::kAllKeysLru) {
    Entry* victim = OldestExcept(&probation_, keep);
    if (victim == nullptr) victim = OldestExcept(&protected_, keep);  // n >= 2 or e != keep
    if (IsStale(victim)) *why = Gone::kFlushed;
    return victim;
  }
  Entry* best = nullptr;
  uint8_t best_counter = 0;
  for (int i = 0; i < kLfuSamples; ++i) {
    Entry* e = entries_[RandomIndex(n)];
    if (e == keep) continue;
    const uint8_t c = DecayedCounter(e);
    if (best == nullptr || c < best_counter) {
      best = e;
      best_counter = c;
    }
  }
  if (best == nullptr) best = entries_[0] != keep ? entries_[0] : entries_[1];
  if (IsStale(best)) *why = Gone::kFlushed;
  return best;
}

void Shard::Promote(Entry* e) {
  ListRemove(e);
  if (e->charge > protected_capacity_) {
    AppendProbation(e);  // would demote every other protected entry: stays on probation
    return;
  }
  AppendProtected(e);
  AddProtected(e);
  ++stats_.promotions;
  if (protected_bytes_ > protected_capacity_) TrimProtected();
}

void Shard::TrimProtected() {
  while (protected_bytes_ > protected_capacity_) {
    Entry* oldest = static_cast<Entry*>(protected_.next);  // not the head: protected_bytes_ > 0
    ListRemove(oldest);
    RemoveProtected(oldest);
    AppendProbation(oldest);
    ++stats_.demotions;
  }
}

Entry* Shard::OldestExcept(LruLink* head, const Entry* keep) {
  LruLink* oldest = head->next;
  if (oldest == keep) oldest = oldest->next;
  return oldest == head ? nullptr : static_cast<Entry*>(oldest);
}

void Shard::ListAppend(LruLink* head, Entry* e) {
  e->next = head;
  e->prev = head->prev;
  e->prev->next = e;
  head->prev = e;
}

void Shard::ListRemove(Entry* e) {
  e->prev->next = e->next;
  e->next->prev = e->prev;
}

// Minutes since the last access, modulo 2^16 (as Redis's LFUTimeElapsed), each taking one
// from the counter (lfu-decay-time 1).
uint8_t Shard::DecayedCounter(const Entry* e) const {
  const uint16_t now = MinuteClock();
  const unsigned elapsed =
      now >= e->lfu_minutes ? unsigned{now} - e->lfu_minutes : 65535u - e->lfu_minutes + now;
  return elapsed >= e->lfu_counter ? 0 : static_cast<uint8_t>(e->lfu_counter - elapsed);
}

// Redis's LFULogIncr: the higher the counter, the less likely an access raises it; with a log
// factor of 10 a counter reaches ~10 after 100 accesses, ~18 after 1k, 255 after ~1M.
uint8_t Shard::LogIncrement(uint8_t counter) {
  if (counter == 255) return counter;
  const double r = static_cast<double>(NextRandom() >> 11) * 0x1.0p-53;
  const double base = counter > kLfuInitVal ? counter - kLfuInitVal : 0;
  return r < 1.0 / (base * kLfuLogFactor + 1) ? counter + 1 : counter;
}

// xorshift64*: a few cycles, statistically fine for sampling; state guarded by mu_.
uint64_t Shard::NextRandom() {
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return rng_ * 0x2545f4914f6cdd1dull;
}

}  // namespace rockcache::cache::internal
