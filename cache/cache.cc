#include "cache/cache.h"

namespace rockcache::cache {

const char* PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kAllKeysLru:
      return "allkeys-lru";
    case Policy::kAllKeysLfu:
      return "allkeys-lfu";
  }
  return "unknown";
}

namespace {

size_t ClampShards(int shards) { return shards < 1 ? 1 : static_cast<size_t>(shards); }

// splitmix64: decorrelated RNG seeds for the shards, reproducible from run to run.
uint64_t SeedFor(size_t index) {
  uint64_t z = 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

Cache::Cache(const Options& options)
    : shard_count_(ClampShards(options.shards)),
      shard_pow2_((shard_count_ & (shard_count_ - 1)) == 0),
      policy_(options.policy),
      max_hash_fields_(options.max_hash_fields),
      max_list_elements_(options.max_list_elements),
      shards_(new internal::Shard[shard_count_]),
      max_memory_(options.max_memory_bytes) {
  for (size_t i = 0; i < shard_count_; ++i) {
    shards_[i].Init(options.policy, options.max_memory_bytes / shard_count_, SeedFor(i),
                    generations_, &flushes_);
  }
}

Cache::~Cache() = default;

bool Cache::Cacheable(const Value& value) const {
  if (value.is_hash()) return !value.fields.empty() && value.fields.size() <= max_hash_fields_;
  if (value.is_list()) return value.list->elements.size() <= max_list_elements_;
  return true;
}

size_t Cache::Charge(std::string_view key, const Value& value) {
  size_t charge = kEntryOverhead + key.size();
  if (value.is_string()) return charge + StringCharge(value.str.size());
  if (value.is_absent()) return charge;
  charge += kHeapBlockOverhead;
  if (value.is_list()) {
    const ListHead& head = *value.list;
    return charge + kListHeadOverhead + head.elements.size() * kElementOverhead +
           head.element_bytes + head.heap_elements * kHeapBlockOverhead;
  }
  for (const auto& [name, field_value] : value.fields) {
    charge += kFieldOverhead + StringCharge(name.size()) + StringCharge(field_value.size());
  }
  return charge;
}

bool Cache::Put(std::string_view key, Value value, int64_t expire_at_ms, int64_t now_ms,
                std::optional<Generation> generation, const KeyLocks::FillTicket* ticket) {
  assert(value.IsWellFormed());
  const int db = CurrentDb();
  const uint64_t hash = HashKey(key, db);
  internal::Shard& shard = ShardFor(hash);
  internal::Entry* garbage = nullptr;
  bool installed = false;
  const bool cacheable = Cacheable(value);
  const uint64_t charge = cacheable ? Charge(key, value) : 0;
  // Unlocked read of the budget: only saves building an entry that cannot fit; the shard's own
  // capacity, read under its lock, decides.
  if (!cacheable || charge > max_memory() / shard_count_ || charge > internal::kMaxCharge) {
    MutexLock lock(&shard.mu());
    shard.Reject(key, hash, db, &garbage);
  } else {
    // Install checks the stamp against the current generation under the shard lock.
    const Generation stamp =
        generation ? *generation : generations_[db].load(std::memory_order_acquire);
    internal::Entry* e =
        internal::NewEntry(key, hash, std::move(value), expire_at_ms, charge, db, stamp);
    MutexLock lock(&shard.mu());
    shard.Observe(now_ms);
    if (ticket != nullptr && !ticket->Unchanged()) {
      shard.Refuse(e, &garbage);  // a write of the key began after the fill's storage read
    } else {
      installed = shard.Install(e, &garbage);
    }
  }
  internal::DeleteChain(garbage);
  return installed;
}

void Cache::Erase(std::string_view key) {
  const int db = CurrentDb();
  const uint64_t hash = HashKey(key, db);
  internal::Shard& shard = ShardFor(hash);
  internal::Entry* garbage = nullptr;
  {
    MutexLock lock(&shard.mu());
    shard.Erase(key, hash, db, &garbage);
  }
  internal::DeleteChain(garbage);
}

void Cache::AdvanceGeneration(int db) {
  const Generation current = generations_[db].load(std::memory_order_relaxed);
  if (current == UINT32_MAX) {
    // The next generation is 0 again, which entries filled 2^32 flushes ago may still carry:
    // remove every entry of db first (fills meanwhile are stamped UINT32_MAX, made stale below).
    for (size_t i = 0; i < shard_count_; ++i) {
      internal::Entry* garbage = nullptr;
      {
        MutexLock lock(&shards_[i].mu());
        shards_[i].ClearDb(db, &garbage);
      }
      internal::DeleteChain(garbage);
    }
  }
  // Release: a thread that sees the new generation (and so treats the old entries as absent)
  // also sees whatever the flusher did before, e.g. the storage flush its miss will read.
  generations_[db].store(current + 1, std::memory_order_release);
  flushes_.fetch_add(1, std::memory_order_release);
}

void Cache::ClearDb(int db) {
  assert(db >= 0 && db < kMaxDatabases);
  MutexLock lock(&flush_mu_);
  AdvanceGeneration(db);
}

void Cache::Clear() {
  MutexLock lock(&flush_mu_);
  for (int db = 0; db < kMaxDatabases; ++db) AdvanceGeneration(db);
}

void Cache::SetGenerationForTesting(int db, Generation generation) {
  MutexLock lock(&flush_mu_);
  generations_[db].store(generation, std::memory_order_release);
  flushes_.fetch_add(1, std::memory_order_release);
}

void Cache::SetMaxMemory(uint64_t bytes) {
  MutexLock config_lock(&config_mu_);
  max_memory_.store(bytes, std::memory_order_relaxed);
  for (size_t i = 0; i < shard_count_; ++i) {
    internal::Entry* garbage = nullptr;
    {
      MutexLock lock(&shards_[i].mu());
      shards_[i].SetCapacity(bytes / shard_count_, &garbage);
      if (bytes == 0) shards_[i].Clear(&garbage);
    }
    internal::DeleteChain(garbage);
  }
}

Stats Cache::GetStats() const {
  Stats total;
  for (const Stats& s : GetShardStats()) total.Merge(s);
  return total;
}

std::vector<Stats> Cache::GetShardStats() const {
  std::vector<Stats> out;
  out.reserve(shard_count_);
  for (size_t i = 0; i < shard_count_; ++i) {
    MutexLock lock(&shards_[i].mu());
    out.push_back(shards_[i].GetStats());
  }
  return out;
}

void Cache::ResetStats() {
  for (size_t i = 0; i < shard_count_; ++i) {
    MutexLock lock(&shards_[i].mu());
    shards_[i].counters().ResetCounters();
  }
}

void Cache::SetPolicy(Policy policy) {
  policy_.store(policy, std::memory_order_relaxed);
  for (size_t i = 0; i < shard_count_; ++i) {
    MutexLock lock(&shards_[i].mu());
    shards_[i].set_policy(policy);
  }
}

std::optional<int> Cache::LfuFrequency(std::string_view key, int64_t now_ms) const {
  if (policy() != Policy::kAllKeysLfu) return std::nullopt;
  const int db = CurrentDb();
  const uint64_t hash = HashKey(key, db);
  internal::Shard& shard = ShardFor(hash);
  MutexLock lock(&shard.mu());
  shard.Observe(now_ms);
  const internal::Entry* e = shard.Lookup(key, hash, db);
  if (e == nullptr || e->ExpiredAt(now_ms) || shard.IsStale(e)) return std::nullopt;
  return shard.LfuFrequency(e);
}

std::optional<int64_t> Cache::IdleSeconds(std::string_view key, int64_t now_ms) const {
  if (policy() != Policy::kAllKeysLru) return std::nullopt;
  const int db = CurrentDb();
  const uint64_t hash = HashKey(key, db);
  internal::Shard& shard = ShardFor(hash);
  MutexLock lock(&shard.mu());
  shard.Observe(now_ms);
  const internal::Entry* e = shard.Lookup(key, hash, db);
  if (e == nullptr || e->ExpiredAt(now_ms) || shard.IsStale(e)) return std::nullopt;
  return shard.IdleSeconds(e);
}

size_t Cache::RemoveExpired(int64_t now_ms, size_t samples_per_shard) {
  size_t removed = 0;
  for (size_t i = 0; i < shard_count_; ++i) {
    internal::Entry* garbage = nullptr;
    {
      MutexLock lock(&shards_[i].mu());
      shards_[i].Observe(now_ms);
      removed += shards_[i].RemoveExpired(now_ms, samples_per_shard, &garbage);
    }
    internal::DeleteChain(garbage);
  }
  return removed;
}

void Cache::CopyShard(size_t index, int64_t now_ms, std::vector<SnapshotEntry>* out) const {
  MutexLock lock(&shards_[index].mu());
  for (const internal::Entry* e : shards_[index].entries()) {
    if (e->ExpiredAt(now_ms) || shards_[index].IsStale(e)) continue;
    out->push_back(SnapshotEntry{std::string(e->key()), e->value(), e->expire_at_ms, e->db});
  }
}

}  // namespace rockcache::cache
