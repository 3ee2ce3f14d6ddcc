// cache::Cache's eviction policies: LRU (least recently used first, the idle time OBJECT IDLETIME
// reads) and LFU (frequently read keys stay, counters age by the minute).
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>

#include "cache/cache.h"
#include "tests/support/cache_unit_helpers.h"

using rockcache::cache::Cache;
using rockcache::cache::Policy;
using rockcache::cache::Stats;
using rockcache::cache::Value;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace lru_lfu_test {

using rockcache::cache::testing::Cached;
using rockcache::cache::testing::Key;
using rockcache::cache::testing::kNow;
using rockcache::cache::testing::kSmall;
using rockcache::cache::testing::OneShard;

TEST_CASE("LRU evicts the least recently used entries first", "[cache][lru]") {
  Cache cache(OneShard(10 * kSmall));
  for (int i = 0; i < 10; ++i) REQUIRE(cache.Put(Key(i), Value::String("v"), 0));
  REQUIRE(cache.GetStats().evictions == 0);
  // Touch 0, 1, 2 (Visit) and 3 (Update): 4..6 are now the oldest.
  for (int i = 0; i < 3; ++i) cache.Visit(Key(i), kNow, [](const Value&) {});
  cache.Update(Key(3), kNow, [](Value&, int64_t&) { return true; });
  for (int i = 10; i < 13; ++i) REQUIRE(cache.Put(Key(i), Value::String("v"), 0));

  for (int i : {0, 1, 2, 3, 7, 8, 9, 10, 11, 12}) CHECK(Cached(cache, Key(i)));
  for (int i : {4, 5, 6}) CHECK_FALSE(Cached(cache, Key(i)));
  const Stats s = cache.GetStats();
  CHECK(s.evictions == 3);
  CHECK(s.keys == 10);
  CHECK(s.bytes_used == 10 * kSmall);
}

TEST_CASE("LRU keeps each entry's last access second for OBJECT IDLETIME", "[cache][lru]") {
  Cache cache(OneShard(1 << 20));
  REQUIRE(cache.Put("a", Value::String("v"), 0, kNow));
  CHECK(cache.IdleSeconds("a", kNow) == 0);
  CHECK(cache.IdleSeconds("a", kNow + 5'500) == 5);
  CHECK(cache.IdleSeconds("a", kNow + 5'500) == 5);  // reading the idle time is no access
  (void)cache.Inspect("a", kNow + 6'000, [](const Value&) {});
  CHECK(cache.IdleSeconds("a", kNow + 7'000) == 7);  // nor is an Inspect
  cache.Visit("a", kNow + 7'000, [](const Value&) {});
  CHECK(cache.IdleSeconds("a", kNow + 9'000) == 2);  // a read is
  CHECK(cache.Update("a", kNow + 10'000, [](Value&, int64_t&) { return true; }));
  CHECK(cache.IdleSeconds("a", kNow + 10'000) == 0);  // and a write through the cache
  CHECK(cache.IdleSeconds("absent", kNow) == std::nullopt);
  // The clock is Redis's 24 bits of seconds: it wraps after 194 days, as Redis's.
  const int64_t wrap = int64_t{1} << 24;
  CHECK(cache.IdleSeconds("a", kNow + 10'000 + (wrap + 3) * 1000) == 3);

  Cache lfu(OneShard(1 << 20, Policy::kAllKeysLfu));
  REQUIRE(lfu.Put("a", Value::String("v"), 0, kNow));
  CHECK(lfu.IdleSeconds("a", kNow) == std::nullopt);
}

TEST_CASE("LFU keeps frequently read keys and ages counters by the minute", "[cache][lfu]") {
  Cache cache(OneShard(100 * kSmall, Policy::kAllKeysLfu));
  for (int i = 0; i < 100; ++i) REQUIRE(cache.Put(Key(i), Value::String("v"), 0, kNow));
  CHECK(cache.LfuFrequency(Key(0), kNow) == 5);  // LFU_INIT_VAL
  // Keys 0, 10, 20, ... 90 are hot.
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 100; i += 10) cache.Visit(Key(i), kNow, [](const Value&) {});
  }
  const int hot = *cache.LfuFrequency(Key(10), kNow);
  CHECK(hot >= 8);  // log counter: ~10 after 100 accesses
  CHECK(hot <= 12);
  // 300 cold inserts, all through a full cache.
  for (int i = 100; i < 400; ++i) REQUIRE(cache.Put(Key(i), Value::String("v"), 0, kNow));
  for (int i = 0; i < 100; i += 10) CHECK(Cached(cache, Key(i)));
  CHECK(cache.GetStats().evictions == 300);
  CHECK(cache.GetStats().keys == 100);

  // Three idle minutes take three off the counter (lfu-decay-time 1); OBJECT FREQ-like reads do
  // not count as accesses.
  const int now10 = *cache.LfuFrequency(Key(10), kNow);
  CHECK(cache.LfuFrequency(Key(10), kNow + 3 * 60'000) == now10 - 3);
  CHECK(cache.LfuFrequency(Key(10), kNow + 3 * 60'000) == now10 - 3);
  CHECK(cache.LfuFrequency("absent", kNow) == std::nullopt);
  // An overwrite keeps the key's frequency.
  REQUIRE(cache.Put(Key(10), Value::String("w"), 0, kNow + 3 * 60'000));
  CHECK(cache.LfuFrequency(Key(10), kNow + 3 * 60'000) == now10 - 3);

  Cache lru(OneShard(1 << 20));
  REQUIRE(lru.Put("a", Value::String("v"), 0));
  CHECK(lru.LfuFrequency("a", kNow) == std::nullopt);
}

TEST_CASE("LFU: long-idle hot keys decay and become evictable", "[cache][lfu]") {
  Cache cache(OneShard(20 * kSmall, Policy::kAllKeysLfu));
  for (int i = 0; i < 10; ++i) REQUIRE(cache.Put(Key(i), Value::String("v"), 0, kNow));
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 10; ++i) cache.Visit(Key(i), kNow, [](const Value&) {});
  }
  // An hour later the old hot set has decayed to 0; fresh keys start at 5 and are read once.
  const int64_t later = kNow + 60 * 60'000;
  for (int i = 100; i < 110; ++i) {
    REQUIRE(cache.Put(Key(i), Value::String("v"), 0, later));
    cache.Visit(Key(i), later, [](const Value&) {});
  }
  CHECK(cache.LfuFrequency(Key(0), later) == 0);
  for (int i = 110; i < 120; ++i) REQUIRE(cache.Put(Key(i), Value::String("v"), 0, later));
  int old_left = 0;
  for (int i = 0; i < 10; ++i) old_left += Cached(cache, Key(i), later);
  CHECK(old_left <= 2);  // sampled, not exact: almost all of the decayed set went first
}

}  // namespace lru_lfu_test
