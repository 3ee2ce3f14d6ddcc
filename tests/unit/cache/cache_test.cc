// cache::Cache: charges, Put / Visit / Peek / Erase and their counters, byte accounting within
// the budget, shards' separate budgets, Clear, SetMaxMemory, ForEachSnapshot, concurrent use.
#include "cache/cache.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/cache_unit_helpers.h"

using rockcache::cache::Cache;
using rockcache::cache::Lookup;
using rockcache::cache::Options;
using rockcache::cache::Policy;
using rockcache::cache::Stats;
using rockcache::cache::Value;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace cache_test {

using rockcache::cache::testing::Cached;
using rockcache::cache::testing::Get;
using rockcache::cache::testing::Key;
using rockcache::cache::testing::kNow;
using rockcache::cache::testing::kSmall;
using rockcache::cache::testing::SumOfCharges;

TEST_CASE("Charge follows the documented formula", "[cache]") {
  CHECK(kSmall == Cache::kEntryOverhead + 4 + 1);
  // A 20-byte string lives in its own heap block.
  CHECK(Cache::Charge("user:1", Value::String(std::string(20, 'x'))) ==
        Cache::kEntryOverhead + 6 + 20 + Cache::kHeapBlockOverhead);
  CHECK(Cache::Charge("k", Value::String(std::string(15, 'x'))) == Cache::kEntryOverhead + 1 + 15);
  const Value h = Value::Hash({{"a", "1"}, {std::string(20, 'b'), "x"}});
  CHECK(Cache::Charge("h", h) == Cache::kEntryOverhead + 1 + Cache::kHeapBlockOverhead +
                                     (Cache::kFieldOverhead + 1 + 1) +
                                     (Cache::kFieldOverhead + 20 + Cache::kHeapBlockOverhead + 1));
}

TEST_CASE("Put, Visit, Peek, Erase and hit/miss counters", "[cache]") {
  Cache cache(Options{});
  CHECK(cache.enabled());
  CHECK(cache.Put("a", Value::String("1"), 0));
  std::string seen;
  int64_t seen_expire = -1;
  CHECK(cache.Visit("a", kNow, [&](const Value& v, int64_t expire_at) {
    seen = v.str;
    seen_expire = expire_at;
  }) == Lookup::kHit);
  CHECK(seen == "1");
  CHECK(seen_expire == 0);
  CHECK(cache.Visit("b", kNow, [](const Value&) {}) == Lookup::kMiss);
  CHECK(cache.Peek("a", kNow, [](const Value&) {}) == Lookup::kHit);  // not counted

  Stats s = cache.GetStats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 1);
  CHECK(s.fills == 1);
  CHECK(s.keys == 1);

  CHECK(cache.Put("a", Value::String("2"), 0));  // replace
  CHECK(Get(cache, "a") == "2");
  CHECK(cache.GetStats().keys == 1);
  cache.Erase("a");
  cache.Erase("a");  // absent: no-op
  CHECK(Get(cache, "a") == "<miss>");
  s = cache.GetStats();
  CHECK(s.erases == 1);
  CHECK(s.bytes_used == 0);

  cache.ResetStats();
  s = cache.GetStats();
  CHECK(s.hits == 0);
  CHECK(s.misses == 0);
  CHECK(s.fills == 0);
  CHECK(s.erases == 0);
  CHECK(s.max_memory == Options{}.max_memory_bytes);
}

TEST_CASE("byte accounting: bytes_used is the sum of charges and never above max", "[cache]") {
  constexpr uint64_t kMax = 64 << 10;
  Options o;
  o.max_memory_bytes = kMax;
  o.shards = 4;
  Cache cache(o);
  std::mt19937 rng(42);
  for (int i = 0; i < 3000; ++i) {
    const std::string key = "key:" + std::to_string(rng() % 500);
    if (rng() % 4 == 0) {
      std::vector<Value::Field> fields;
      const int n = 1 + static_cast<int>(rng() % 10);
      for (int f = 0; f < n; ++f) {
        fields.emplace_back("f" + std::to_string(f), std::string(rng() % 40, 'h'));
      }
      cache.Put(key, Value::Hash(std::move(fields)), 0);
    } else {
      cache.Put(key, Value::String(std::string(rng() % 3000, 's')), 0);
    }
    const Stats s = cache.GetStats();
    REQUIRE(s.bytes_used <= kMax);
    for (const Stats& shard : cache.GetShardStats()) REQUIRE(shard.bytes_used <= kMax / 4);
  }
  const Stats s = cache.GetStats();
  CHECK(s.evictions > 0);
  CHECK(s.bytes_used == SumOfCharges(cache));

  // Update recharges.
  const std::string key = "hash-key";
  REQUIRE(cache.Put(key, Value::Hash({{"a", "1"}}), 0));
  const uint64_t before = cache.GetStats().bytes_used;
  REQUIRE(cache.Update(key, kNow, [](Value& v, int64_t&) {
    v.SetField("b", std::string(100, 'x'));
    return true;
  }));
  CHECK(cache.GetStats().bytes_used - before ==
        Cache::kFieldOverhead + 1 + 100 + Cache::kHeapBlockOverhead);
  CHECK(cache.GetStats().bytes_used == SumOfCharges(cache));

  SECTION("lowering max memory evicts at once") {
    const uint64_t evictions = cache.GetStats().evictions;
    cache.SetMaxMemory(kMax / 4);
    CHECK(cache.max_memory() == kMax / 4);
    const Stats after = cache.GetStats();
    CHECK(after.bytes_used <= kMax / 4);
    CHECK(after.max_memory == kMax / 4);
    CHECK(after.evictions > evictions);
    CHECK(after.bytes_used == SumOfCharges(cache));
  }
}

TEST_CASE("a value larger than a shard's budget is not cached and drops the old one", "[cache]") {
  Options o;
  o.max_memory_bytes = 4096;
  o.shards = 4;  // 1024 bytes per shard
  Cache cache(o);
  REQUIRE(cache.Put("k", Value::String("small"), 0));
  CHECK_FALSE(cache.Put("k", Value::String(std::string(2000, 'x')), 0));
  CHECK_FALSE(Cached(cache, "k"));
  const Stats s = cache.GetStats();
  CHECK(s.rejected == 1);
  CHECK(s.erases == 1);
  CHECK(s.bytes_used == 0);
}

TEST_CASE("shards have separate budgets: filling one never evicts another", "[cache][shards]") {
  Options o;
  o.shards = 4;
  o.max_memory_bytes = 4 * 20 * kSmall;  // 20 small entries per shard
  Cache cache(o);
  CHECK(cache.shard_count() == 4);
  std::vector<std::string> by_shard[4];
  for (int i = 0; by_shard[0].size() < 200 || by_shard[1].size() < 10; ++i) {
    const std::string key = Key(i % 1000) + "-" + std::to_string(i);
    by_shard[cache.ShardOf(key)].push_back(key);
  }
  // Shard 1 holds 10 entries, well inside its budget.
  for (int i = 0; i < 10; ++i) REQUIRE(cache.Put(by_shard[1][i], Value::String("v"), 0));
  // 200 entries into shard 0: it evicts on its own, staying under its own budget.
  for (int i = 0; i < 200; ++i) cache.Put(by_shard[0][i], Value::String("v"), 0);
  const std::vector<Stats> shards = cache.GetShardStats();
  REQUIRE(shards.size() == 4);
  CHECK(shards[0].evictions > 0);
  CHECK(shards[0].bytes_used <= o.max_memory_bytes / 4);
  CHECK(shards[1].evictions == 0);
  CHECK(shards[1].keys == 10);
  for (int i = 0; i < 10; ++i) CHECK(Cached(cache, by_shard[1][i]));
  CHECK(cache.GetStats().max_memory == o.max_memory_bytes);
}

TEST_CASE("Clear and SetMaxMemory(0)", "[cache]") {
  Cache cache(Options{});
  for (int i = 0; i < 100; ++i) REQUIRE(cache.Put(Key(i), Value::String("v"), 0));
  cache.Visit(Key(1), kNow, [](const Value&) {});
  const uint64_t bytes = cache.GetStats().bytes_used;
  cache.Clear();
  Stats s = cache.GetStats();
  CHECK(s.keys == 0);
  CHECK(s.stale_keys == 100);          // O(1) Clear: the entries are stale, freed lazily
  CHECK(s.bytes_used == bytes);        // and still charged until then
  CHECK(s.hits == 1);                  // counters survive FLUSHALL
  CHECK_FALSE(Cached(cache, Key(1)));  // the lookup freed Key(1)
  CHECK(cache.GetStats().stale_keys == 99);
  CHECK(cache.GetStats().flushed == 1);
  for (int round = 0; round < 1000 && cache.GetStats().stale_keys > 0; ++round) {
    cache.RemoveExpired(kNow, 20);  // the sampler frees stale entries too
  }
  CHECK(cache.GetStats().stale_keys == 0);
  CHECK(cache.GetStats().bytes_used == 0);
  CHECK(cache.GetStats().flushed == 100);
  REQUIRE(cache.Put(Key(1), Value::String("v"), 0));  // usable after Clear

  cache.SetMaxMemory(0);
  CHECK_FALSE(cache.enabled());
  CHECK(cache.GetStats().keys == 0);
  CHECK_FALSE(cache.Put(Key(2), Value::String("v"), 0));
  CHECK(cache.Visit(Key(2), kNow, [](const Value&) {}) == Lookup::kMiss);
  CHECK(cache.GetStats().bytes_used == 0);

  cache.SetMaxMemory(1 << 20);
  CHECK(cache.enabled());
  CHECK(cache.Put(Key(2), Value::String("v"), 0));
  CHECK(Get(cache, Key(2)) == "v");

  Options off;
  off.max_memory_bytes = 0;
  Cache disabled(off);
  CHECK_FALSE(disabled.enabled());
  CHECK_FALSE(disabled.Put("a", Value::String("v"), 0));
  CHECK(disabled.Visit("a", kNow, [](const Value&) {}) == Lookup::kMiss);
}

TEST_CASE("ForEachSnapshot copies every live entry", "[cache]") {
  Cache cache(Options{});
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 50; ++i) {
    REQUIRE(cache.Put(Key(i), Value::String("v" + std::to_string(i)), 0));
    expected[Key(i)] = "v" + std::to_string(i);
  }
  REQUIRE(cache.Put("h", Value::Hash({{"f", "x"}}), kNow + 100));
  REQUIRE(cache.Put("gone", Value::String("old"), kNow + 1));  // expired at kNow + 10
  std::map<std::string, std::string> seen;
  int64_t h_expire = 0;
  cache.ForEachSnapshot(kNow + 10, [&](const std::string& key, const Value& v, int64_t e) {
    if (v.is_hash()) {
      h_expire = e;
      return;
    }
    seen[key] = v.str;
    // The visitor runs without any shard lock: calling back into the cache is allowed.
    CHECK(Cached(cache, key, kNow + 10));
  });
  CHECK(seen == expected);
  CHECK(h_expire == kNow + 100);
  CHECK(cache.GetStats().hits == 0);
}

TEST_CASE("concurrent mixed operations keep the invariants", "[cache][concurrency]") {
  Options o;
  o.shards = 4;
  o.max_memory_bytes = 4 * 6 * kSmall + 4 * 600;  // a few entries per shard: constant eviction
  o.policy = GENERATE(Policy::kAllKeysLru, Policy::kAllKeysLfu);
  Cache cache(o);
  constexpr int kThreads = 4;
  constexpr int kOps = 100'000;
  std::vector<std::thread> threads;
  std::vector<uint64_t> visits(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&cache, &visits, t] {
      std::mt19937 rng(t + 1);
      uint64_t sink = 0;
      for (int i = 0; i < kOps; ++i) {
        const std::string key = Key(static_cast<int>(rng() % 12));
        const int64_t now = kNow + i;
        switch (rng() % 8) {
          case 0:
          case 1:
            cache.Put(key, Value::String(std::string(rng() % 40, 'x')), rng() % 3 ? 0 : now + 50);
            break;
          case 2:
            cache.Put(key, Value::Hash({{"a", "1"}, {"b", std::string(rng() % 30, 'y')}}), 0);
            break;
          case 3:
          case 4:
            cache.Visit(key, now, [&](const Value& v) { sink += v.str.size() + v.fields.size(); });
            ++visits[t];
            break;
          case 5:
            cache.Erase(key);
            break;
          case 6:
            cache.Update(key, now, [&](Value& v, int64_t& e) {
              if (v.is_hash()) return v.SetField("c" + std::to_string(rng() % 3), "z");
              v.str.append("!");
              e = rng() % 2 ? 0 : now + 100;
              return true;
            });
            break;
          default:
            if (t == 0 && i % 1000 == 0) {
              cache.SetMaxMemory(i % 2000 == 0 ? cache.max_memory() / 2 : cache.max_memory() * 2);
            } else if (t == 1 && i % 500 == 0) {
              cache.ForEachSnapshot(
                  now, [&](const std::string& k, const Value&, int64_t) { sink += k.size(); });
            } else {
              sink += cache.GetStats().keys;
            }
        }
      }
      (void)sink;
    });
  }
  for (auto& th : threads) th.join();
  const Stats s = cache.GetStats();
  CHECK(s.bytes_used <= cache.max_memory());
  for (const Stats& shard : cache.GetShardStats()) CHECK(shard.bytes_used <= shard.max_memory);
  CHECK(s.bytes_used == SumOfCharges(cache));
  uint64_t total_visits = 0;
  for (uint64_t v : visits) total_visits += v;
  CHECK(s.hits + s.misses == total_visits);  // every Visit counted exactly once
  CHECK(s.fills > 0);
  CHECK(s.evictions > 0);
}

}  // namespace cache_test
