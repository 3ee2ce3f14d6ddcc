// allkeys-lru is a segmented LRU ("Segmented LRU" in cache/cache.h): a sweep of keys read once
// cycles through probation and leaves the promoted hot set cached; a new hot set still takes
// over; rewrites keep their segment; the segment gauges add up and protected stays in its share.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cache/cache.h"

using rockcache::cache::Cache;
using rockcache::cache::Lookup;
using rockcache::cache::Options;
using rockcache::cache::Policy;
using rockcache::cache::Stats;
using rockcache::cache::Value;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace segmented_lru_test {

namespace {

constexpr int64_t kNow = 1'700'000'000'000;
constexpr uint64_t kProtectedPercent = rockcache::cache::internal::Shard::kProtectedPercent;

Options Sized(uint64_t bytes, int shards) {
  Options o;
  o.max_memory_bytes = bytes;
  o.shards = shards;
  o.policy = Policy::kAllKeysLru;
  return o;
}

// Keys of one width per prefix, so that every entry of a set has the same charge.
std::string Key(const char* prefix, int i) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s:%08d", prefix, i);
  return buf;
}

const std::string kValue(100, 'v');

uint64_t ChargeOf(const char* prefix) {
  return Cache::Charge(Key(prefix, 0), Value::String(kValue));
}

// A GET as the server serves it: Visit on the network thread; on a miss, the worker's re-check
// (Peek) and a fill. A key read once is a miss and a fill, never a hit.
void Read(Cache& cache, const std::string& key) {
  if (cache.Visit(key, kNow, [](const Value&) {}) != Lookup::kMiss) return;
  if (cache.Peek(key, kNow, [](const Value&) {}) != Lookup::kMiss) return;
  cache.Put(key, Value::String(kValue), 0, kNow);
}

// A GET answered from RocksDB's memory on the network thread (server/executor.cc,
// TryAnswerFromMemory): the lookup misses, the value is installed, and the reply is built from the
// new entry with Inspect, which is not a second read.
void ReadFilledInPlace(Cache& cache, const std::string& key) {
  if (cache.Visit(key, kNow, [](const Value&) {}) != Lookup::kMiss) return;
  cache.Put(key, Value::String(kValue), 0, kNow);
  REQUIRE(cache.Inspect(key, kNow, [](const Value&) {}) == Lookup::kHit);
}

// A SET and then an APPEND of the key, written through (never read).
void Write(Cache& cache, const std::string& key) {
  cache.Put(key, Value::String(kValue), 0, kNow);
  cache.Update(key, kNow, [](Value& v, int64_t&) {
    v.str.back() = 'w';
    return true;
  });
}

bool Cached(Cache& cache, const std::string& key) {
  return cache.Peek(key, kNow, [](const Value&) {}) == Lookup::kHit;
}

// How many of prefix:0..n-1 are cached. Peek counts as an access: call it only at the end.
int CountCached(Cache& cache, const char* prefix, int n) {
  int cached = 0;
  for (int i = 0; i < n; ++i) cached += Cached(cache, Key(prefix, i));
  return cached;
}

// How a sweep reaches its keys.
enum class SweepBy {
  kReads,         // Read
  kWrites,        // every other key written (Write) instead of read
  kInPlaceFills,  // every other key read through ReadFilledInPlace
};

// Distinct cold keys totalling `bytes` of charge, each read once (or written).
void Sweep(Cache& cache, const char* prefix, uint64_t bytes, SweepBy by = SweepBy::kReads) {
  const int n = static_cast<int>(bytes / ChargeOf(prefix)) + 1;
  for (int i = 0; i < n; ++i) {
    const std::string key = Key(prefix, i);
    if (i % 2 == 0 || by == SweepBy::kReads) {
      Read(cache, key);
    } else if (by == SweepBy::kWrites) {
      Write(cache, key);
    } else {
      ReadFilledInPlace(cache, key);
    }
  }
}

void CheckSegmentGauges(const Cache& cache) {
  for (const Stats& s : cache.GetShardStats()) {
    CHECK(s.probation_keys + s.protected_keys == s.keys + s.stale_keys);
    CHECK(s.protected_bytes <= s.max_memory * kProtectedPercent / 100);
    CHECK(s.protected_bytes <= s.bytes_used);
  }
}

}  // namespace

TEST_CASE("a sweep of keys read once leaves the promoted hot set cached", "[cache][lru][sweep]") {
  constexpr uint64_t kBudget = 1 << 20;
  const SweepBy by = GENERATE(SweepBy::kReads, SweepBy::kWrites, SweepBy::kInPlaceFills);
  CAPTURE(static_cast<int>(by));
  Cache cache(Sized(kBudget, 4));
  // The hot set: ~30% of the budget, each key read twice (a fill, then a hit that promotes it).
  const int hot = static_cast<int>(kBudget * 3 / 10 / ChargeOf("hot"));
  for (int i = 0; i < hot; ++i) {
    Read(cache, Key("hot", i));
    Read(cache, Key("hot", i));
  }
  REQUIRE(cache.GetStats().promotions == static_cast<uint64_t>(hot));
  // A sweep of 10x the budget of distinct keys read once (or half of them written twice instead:
  // a write is not a second read; or read with a fill answered in place), none of them hot.
  Sweep(cache, "cold", 10 * kBudget, by);
  const Stats s = cache.GetStats();
  CHECK(s.evictions > 0);
  CHECK(s.promotions == static_cast<uint64_t>(hot));  // no cold key was promoted
  CHECK(s.protected_keys == static_cast<uint64_t>(hot));
  CHECK(s.protected_bytes == hot * ChargeOf("hot"));
  CheckSegmentGauges(cache);
  // Every hot key is still cached (with plain LRU, none would be).
  CHECK(CountCached(cache, "hot", hot) == hot);
}

TEST_CASE("a new hot set replaces one that is no longer read", "[cache][lru][sweep]") {
  constexpr uint64_t kBudget = 1 << 20;
  Cache cache(Sized(kBudget, 1));
  const uint64_t charge = ChargeOf("old");
  const int old_hot = static_cast<int>(kBudget * 3 / 10 / charge);  // 30% of the budget
  const int new_hot = static_cast<int>(kBudget * 3 / 4 / charge);   // 75%: both do not fit
  for (int i = 0; i < old_hot; ++i) {
    Read(cache, Key("old", i));
    Read(cache, Key("old", i));
  }
  Sweep(cache, "cold", 10 * kBudget);
  REQUIRE(cache.GetStats().protected_keys == static_cast<uint64_t>(old_hot));

  // The workload moves on: the old set is no longer read, a new one is read twice a key.
  for (int i = 0; i < new_hot; ++i) {
    Read(cache, Key("new", i));
    Read(cache, Key("new", i));
  }
  Sweep(cache, "cold2", 10 * kBudget);
  const Stats s = cache.GetStats();
  CHECK(s.promotions == static_cast<uint64_t>(old_hot + new_hot));
  CHECK(s.demotions > 0);
  CheckSegmentGauges(cache);
  // The new set is all cached; of the old one only what protected had room left for (5% of the
  // budget: the oldest of the old set were demoted, then evicted by the sweep).
  CHECK(CountCached(cache, "new", new_hot) == new_hot);
  const uint64_t room = kBudget * kProtectedPercent / 100 - new_hot * charge;
  const int old_left = CountCached(cache, "old", old_hot);
  CHECK(old_left == static_cast<int>(room / charge));
  CHECK(old_left < old_hot / 5);
}

TEST_CASE("segmented LRU: promotion, eviction order, rewrites keep their segment", "[cache][lru]") {
  const uint64_t small = Cache::Charge(Key("k", 0), Value::String("v"));
  Cache cache(Sized(10 * small, 1));  // 10 entries; protected holds 8
  auto put = [&](int i) { REQUIRE(cache.Put(Key("k", i), Value::String("v"), 0, kNow)); };
  auto visit = [&](int i) { return cache.Visit(Key("k", i), kNow, [](const Value&) {}); };
  for (int i = 0; i < 10; ++i) put(i);
  Stats s = cache.GetStats();
  CHECK(s.probation_keys == 10);
  CHECK(s.protected_keys == 0);

  // The newest entry's first hit promotes it (the lazy touch only skips protected entries).
  CHECK(visit(9) == Lookup::kHit);
  CHECK(cache.GetStats().promotions == 1);
  CHECK(cache.GetStats().protected_bytes == small);
  // A second hit, and a rewrite (Put over it, Update), keep it protected without a promotion.
  CHECK(visit(9) == Lookup::kHit);
  put(9);
  CHECK(cache.Update(Key("k", 9), kNow, [](Value& v, int64_t&) {
    v.str = "w";
    return true;
  }));
  s = cache.GetStats();
  CHECK(s.promotions == 1);
  CHECK(s.protected_keys == 1);
  // A rewrite of a probation entry leaves it on probation.
  put(0);
  CHECK(cache.Update(Key("k", 0), kNow, [](Value&, int64_t&) { return true; }));
  CHECK(cache.GetStats().protected_keys == 1);

  // Promote 1..7 as well: 8 protected entries, protected's share exactly.
  for (int i = 1; i < 8; ++i) visit(i);
  s = cache.GetStats();
  CHECK(s.protected_keys == 8);
  CHECK(s.demotions == 0);
  // Probation is 8 (then 0, rewritten after it): new keys evict those first, whatever their age.
  // (Misses only: a Peek hit would count as an access.)
  put(10);
  put(11);
  CHECK_FALSE(Cached(cache, Key("k", 8)));
  CHECK_FALSE(Cached(cache, Key("k", 0)));
  s = cache.GetStats();
  CHECK(s.evictions == 2);
  CHECK(s.protected_keys == 8);
  // A ninth promotion demotes protected's oldest (9 was touched first of the eight, 1 next...).
  CHECK(visit(10) == Lookup::kHit);
  s = cache.GetStats();
  CHECK(s.demotions == 1);
  CHECK(s.protected_keys == 8);
  // The demoted entry is back on probation: its next hit promotes it again.
  const uint64_t promotions = s.promotions;
  CHECK(visit(9) == Lookup::kHit);
  CHECK(cache.GetStats().promotions == promotions + 1);
  CHECK(cache.GetStats().demotions == 2);

  // Only when probation holds nothing else does eviction take protected's oldest: a new entry of
  // 5 small charges evicts probation's two, then the three oldest protected ones.
  const std::string big(5 * small - Cache::kEntryOverhead - 3 - Cache::kHeapBlockOverhead, 'x');
  REQUIRE(Cache::Charge("big", Value::String(big)) == 5 * small);
  s = cache.GetStats();
  REQUIRE(s.probation_keys == 2);
  REQUIRE(cache.Put("big", Value::String(big), 0, kNow));
  s = cache.GetStats();
  CHECK(s.evictions == 2 + 2 + 3);
  CHECK(s.protected_keys == 5);
  CHECK(s.probation_keys == 1);  // big itself: a new key
  CHECK(Cached(cache, "big"));
  CheckSegmentGauges(cache);
}

TEST_CASE("Inspect records no access; Peek does", "[cache][lru][lfu]") {
  Cache lru(Sized(1 << 20, 1));
  REQUIRE(lru.Put("k", Value::String("v"), 0, kNow));
  std::string seen;
  CHECK(lru.Inspect("k", kNow, [&](const Value& v) { seen = v.str; }) == Lookup::kHit);
  CHECK(seen == "v");
  CHECK(lru.Inspect("absent", kNow, [](const Value&) {}) == Lookup::kMiss);
  Stats s = lru.GetStats();
  CHECK(s.promotions == 0);
  CHECK(s.hits + s.misses == 0);  // not counted either
  CHECK(lru.Peek("k", kNow, [](const Value&) {}) == Lookup::kHit);
  CHECK(lru.GetStats().promotions == 1);
  // It still removes what it finds expired.
  REQUIRE(lru.Put("t", Value::String("v"), kNow + 1, kNow));
  CHECK(lru.Inspect("t", kNow + 1, [](const Value&) {}) == Lookup::kMiss);
  CHECK(lru.GetStats().expired == 1);

  Options o = Sized(1 << 20, 1);
  o.policy = Policy::kAllKeysLfu;
  Cache lfu(o);
  REQUIRE(lfu.Put("k", Value::String("v"), 0, kNow));
  for (int i = 0; i < 100; ++i) lfu.Inspect("k", kNow, [](const Value&) {});
  CHECK(lfu.LfuFrequency("k", kNow) == 5);  // LFU_INIT_VAL: no access counted
}

TEST_CASE("segmented LRU: an entry above protected's share is never promoted", "[cache][lru]") {
  Cache cache(Sized(10'000, 1));
  for (int i = 0; i < 5; ++i) {
    REQUIRE(cache.Put(Key("k", i), Value::String("v"), 0, kNow));
    cache.Visit(Key("k", i), kNow, [](const Value&) {});
  }
  REQUIRE(cache.GetStats().protected_keys == 5);
  // 85% of the budget: a hit leaves it on probation rather than demoting every other entry.
  REQUIRE(cache.Put("big", Value::String(std::string(8'500 - 203, 'x')), 0, kNow));
  REQUIRE(cache.Visit("big", kNow, [](const Value&) {}) == Lookup::kHit);
  Stats s = cache.GetStats();
  CHECK(s.protected_keys == 5);
  CHECK(s.demotions == 0);
  // Growing a protected entry past the share by Update demotes it.
  CHECK(cache.Update(Key("k", 0), kNow, [](Value& v, int64_t&) {
    v.str.assign(8'200, 'y');
    return true;
  }));
  s = cache.GetStats();
  CHECK(s.protected_keys == 4);
  CHECK(s.demotions == 1);
  CHECK(s.evictions == 1);  // big, probation's oldest, made room for k:0's growth
  CHECK_FALSE(Cached(cache, "big"));
  CHECK(Cached(cache, Key("k", 0)));
  CheckSegmentGauges(cache);
}

TEST_CASE("segmented LRU: gauges add up and protected keeps its share under churn",
          "[cache][lru]") {
  constexpr uint64_t kMax = 64 << 10;
  Cache cache(Sized(kMax, 4));
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const std::string key = Key("k", static_cast<int>(rng() % 600));
    switch (rng() % 6) {
      case 0:
        cache.Put(key, Value::String(std::string(rng() % 400, 's')), rng() % 4 ? 0 : kNow + 5);
        break;
      case 1:
        cache.Update(key, kNow, [&](Value& v, int64_t&) {
          v.str.resize(rng() % 800);
          return rng() % 8 != 0;
        });
        break;
      case 2:
        cache.Erase(key);
        break;
      default:
        cache.Visit(key, kNow + static_cast<int64_t>(rng() % 10), [](const Value&) {});
    }
    if (step % 5000 == 4999) cache.ClearDb(0);
    if (step % 7000 == 6999) cache.SetMaxMemory(cache.max_memory() == kMax ? kMax / 3 : kMax);
    if (step % 97 == 0) CheckSegmentGauges(cache);
  }
  const Stats s = cache.GetStats();
  CHECK(s.promotions > 0);
  CHECK(s.demotions > 0);
  CheckSegmentGauges(cache);
  // The segment totals followed every move: with every key erased, nothing is left in either.
  for (int i = 0; i < 600; ++i) cache.Erase(Key("k", i));
  const Stats empty = cache.GetStats();
  CHECK(empty.bytes_used == 0);
  CHECK(empty.probation_keys == 0);
  CHECK(empty.protected_keys == 0);
  CHECK(empty.protected_bytes == 0);
  cache.ResetStats();
  CHECK(cache.GetStats().promotions == 0);
  CHECK(cache.GetStats().demotions == 0);
}

}  // namespace segmented_lru_test
