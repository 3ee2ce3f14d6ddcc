// FLUSHDB / FLUSHALL in O(1) (cache/cache.h, "Flushes"): ClearDb and Clear advance per-database
// generations; stale entries are invisible to every reader, evicted and sampled first, and a
// fill stamped with a generation taken before a flush is never installed as live after it.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache.h"
#include "config/current_db.h"

using rockcache::DbScope;
using rockcache::cache::Cache;
using rockcache::cache::Generation;
using rockcache::cache::Lookup;
using rockcache::cache::Options;
using rockcache::cache::Policy;
using rockcache::cache::Stats;
using rockcache::cache::Value;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace generation_test {

namespace {

constexpr int64_t kNow = 1'700'000'000'000;

std::string Key(int i) { return "key:" + std::to_string(i); }

// "miss", "absent" or the cached string, in database `db` (Peek: nothing counted).
std::string Read(Cache& cache, int db, const std::string& key) {
  DbScope scope(db);
  std::string out = "miss";
  Lookup l = cache.Peek(key, kNow, [&](const Value& v) { out = v.is_hash() ? "hash" : v.str; });
  if (l == Lookup::kAbsent) out = "absent";
  return out;
}

void Fill(Cache& cache, int db, int from, int to, const std::string& value) {
  DbScope scope(db);
  for (int i = from; i < to; ++i) REQUIRE(cache.Put(Key(i), Value::String(value), 0, kNow));
}

Options Sized(uint64_t bytes, int shards, Policy policy = Policy::kAllKeysLru) {
  Options o;
  o.max_memory_bytes = bytes;
  o.shards = shards;
  o.policy = policy;
  return o;
}

}  // namespace

TEST_CASE("ClearDb hides only that database's entries, of every kind", "[cache][generation]") {
  Cache cache(Sized(1 << 20, 4));
  Fill(cache, 0, 0, 50, "zero");
  Fill(cache, 2, 0, 50, "two");
  {
    DbScope scope(2);
    REQUIRE(cache.Put("negative", Value::Absent(), 0, kNow));
    REQUIRE(cache.Put("ttl", Value::String("t"), kNow + 60'000, kNow));
    REQUIRE(cache.Put("hash", Value::Hash({{"f", "v"}}), 0, kNow));
  }
  Stats before = cache.GetStats();
  REQUIRE(before.keys == 103);
  REQUIRE(before.negative_keys == 1);
  REQUIRE(before.keys_with_ttl == 1);

  cache.ClearDb(2);

  // The stats: exact live counts; the stale entries are still charged.
  Stats after = cache.GetStats();
  CHECK(after.keys == 50);
  CHECK(after.stale_keys == 53);
  CHECK(after.negative_keys == 0);
  CHECK(after.keys_with_ttl == 0);
  CHECK(after.bytes_used == before.bytes_used);

  // Every reader sees database 2 empty, database 0 untouched.
  for (int i = 0; i < 50; ++i) {
    CHECK(Read(cache, 0, Key(i)) == "zero");
    CHECK(Read(cache, 2, Key(i)) == "miss");
  }
  CHECK(Read(cache, 2, "negative") == "miss");  // a negative entry is gone too: not "absent"
  CHECK(Read(cache, 2, "hash") == "miss");
  {
    DbScope scope(2);
    bool called = false;
    CHECK_FALSE(cache.Update("ttl", kNow, [&](Value&, int64_t&) { return called = true; }));
    CHECK_FALSE(called);
    std::vector<std::string> seen;
    cache.ForEachSnapshot(kNow, [&](const std::string& key, const Value&, int64_t) {
      if (rockcache::CurrentDb() == 2) seen.push_back(key);
    });
    CHECK(seen.empty());
  }
  // The lookups above freed what they met: only the 50 of database 0 are left, nothing stale.
  after = cache.GetStats();
  CHECK(after.keys == 50);
  CHECK(after.stale_keys == 0);
  CHECK(after.flushed == 53);
  uint64_t live_bytes = 0;
  for (int i = 0; i < 50; ++i) live_bytes += Cache::Charge(Key(i), Value::String("zero"));
  CHECK(after.bytes_used == live_bytes);

  // Refill after the clear works, and a second clear hides the refill.
  Fill(cache, 2, 0, 10, "again");
  CHECK(Read(cache, 2, Key(3)) == "again");
  CHECK(cache.GetStats().keys == 60);
  cache.ClearDb(2);
  CHECK(Read(cache, 2, Key(3)) == "miss");
  CHECK(Read(cache, 0, Key(3)) == "zero");
}

TEST_CASE("Clear hides every database; refills are live", "[cache][generation]") {
  Cache cache(Sized(1 << 20, 4));
  for (int db : {0, 1, 15, 255}) Fill(cache, db, 0, 20, "v" + std::to_string(db));
  cache.Clear();
  Stats s = cache.GetStats();
  CHECK(s.keys == 0);
  CHECK(s.stale_keys == 80);
  for (int db : {0, 1, 15, 255}) CHECK(Read(cache, db, Key(7)) == "miss");
  Fill(cache, 15, 0, 5, "new");
  CHECK(Read(cache, 15, Key(4)) == "new");
  CHECK(Read(cache, 15, Key(5)) == "miss");
  s = cache.GetStats();
  CHECK(s.keys == 5);
  // Replacing a stale entry by a Put counts the stale one as flushed, not erased.
  CHECK(s.erases == 0);
}

TEST_CASE("Erase and LfuFrequency treat a stale entry as absent", "[cache][generation]") {
  Cache cache(Sized(1 << 20, 1, Policy::kAllKeysLfu));
  REQUIRE(cache.Put("k", Value::String("v"), 0, kNow));
  REQUIRE(cache.LfuFrequency("k", kNow).has_value());
  cache.ClearDb(0);
  CHECK_FALSE(cache.LfuFrequency("k", kNow).has_value());
  cache.Erase("k");
  Stats s = cache.GetStats();
  CHECK(s.erases == 0);  // nothing live was erased
  CHECK(s.flushed == 1);
  CHECK(s.stale_keys == 0);
  CHECK(s.bytes_used == 0);
}

TEST_CASE("stale entries are evicted before live ones", "[cache][generation]") {
  for (Policy policy : {Policy::kAllKeysLru, Policy::kAllKeysLfu}) {
    DYNAMIC_SECTION(rockcache::cache::PolicyName(policy)) {
      const uint64_t charge = Cache::Charge(Key(100), Value::String("v"));
      Cache cache(Sized(200 * charge, 1, policy));
      // 20 live entries, the least recently used (and, under LFU, never read again)...
      Fill(cache, 0, 100, 120, "v");
      // ...then 180 newer ones in database 1, read often, then flushed.
      Fill(cache, 1, 200, 380, "v");
      for (int round = 0; round < 3; ++round) {
        for (int i = 200; i < 380; ++i) (void)Read(cache, 1, Key(i));
      }
      cache.ClearDb(1);
      REQUIRE(cache.GetStats().bytes_used == 200 * charge);  // full
      // 20 more live entries: 20 evictions, all of them stale ones.
      Fill(cache, 0, 120, 140, "v");
      Stats s = cache.GetStats();
      CHECK(s.evictions == 0);
      CHECK(s.flushed == 20);
      CHECK(s.keys == 40);
      for (int i = 100; i < 140; ++i) CHECK(Read(cache, 0, Key(i)) == "v");
    }
  }
}

TEST_CASE("RemoveExpired frees stale entries and skips a clean cache", "[cache][generation]") {
  Cache cache(Sized(1 << 20, 2));
  Fill(cache, 3, 0, 100, "v");
  CHECK(cache.RemoveExpired(kNow, 50) == 0);  // nothing stale, nothing with a TTL
  cache.ClearDb(3);
  size_t removed = 0;
  for (int round = 0; round < 100 && cache.GetStats().stale_keys > 0; ++round) {
    removed += cache.RemoveExpired(kNow, 10);
  }
  CHECK(removed == 100);
  Stats s = cache.GetStats();
  CHECK(s.bytes_used == 0);
  CHECK(s.flushed == 100);
  CHECK(s.expired == 0);
  CHECK(s.swept == 100);
}

TEST_CASE("RemoveExpired counts what it frees in swept, lookups do not", "[cache][generation]") {
  Cache cache(Sized(1 << 20, 2));
  // 50 entries with a TTL and 50 without in database 0, 100 in database 1 (flushed below).
  for (int i = 0; i < 50; ++i) REQUIRE(cache.Put(Key(i), Value::String("v"), kNow + 10, kNow));
  Fill(cache, 0, 50, 100, "v");
  Fill(cache, 1, 0, 100, "v");
  cache.ClearDb(1);
  // A lookup frees one expired entry itself: counted in expired, not in swept.
  CHECK(Read(cache, 0, Key(0)) == "v");
  {
    DbScope scope(0);
    CHECK(cache.Visit(Key(0), kNow + 10, [](const Value&) {}) == Lookup::kMiss);
  }
  CHECK(cache.GetStats().expired == 1);
  CHECK(cache.GetStats().swept == 0);
  // Bounded: one call probes at most `samples` entries per shard.
  CHECK(cache.RemoveExpired(kNow + 10, 5) <= 10);
  for (int round = 0;
       round < 1000 && cache.GetStats().keys_with_ttl + cache.GetStats().stale_keys > 0; ++round) {
    cache.RemoveExpired(kNow + 10, 5);
  }
  Stats s = cache.GetStats();
  CHECK(s.keys == 50);  // the entries without a TTL stay
  CHECK(s.stale_keys == 0);
  CHECK(s.expired == 50);
  CHECK(s.flushed == 100);
  CHECK(s.swept == 149);  // 49 expired + 100 stale
  cache.ResetStats();
  CHECK(cache.GetStats().swept == 0);
}

TEST_CASE("a fill stamped with a generation from before a flush stays invisible",
          "[cache][generation]") {
  Cache cache(Sized(1 << 20, 4));
  SECTION("captured before the flush, Put after it: refused, old entry dropped") {
    REQUIRE(cache.Put("k", Value::String("old"), 0, kNow));
    const Generation g = cache.generation();  // the fill starts: generation, then storage read
    cache.ClearDb(0);                         // FLUSHDB completes meanwhile
    CHECK_FALSE(cache.Put("k", Value::String("pre-flush read"), 0, kNow, g));
    CHECK(Read(cache, 0, "k") == "miss");
    CHECK(cache.GetStats().rejected == 1);
    // A fill that starts after the flush is cached.
    CHECK(cache.Put("k", Value::String("new"), 0, kNow, cache.generation()));
    CHECK(Read(cache, 0, "k") == "new");
  }
  SECTION("installed before the flush: stale at once when it happens") {
    const Generation g = cache.generation();
    REQUIRE(cache.Put("k", Value::Absent(), 0, kNow, g));
    CHECK(Read(cache, 0, "k") == "absent");
    cache.ClearDb(0);
    CHECK(Read(cache, 0, "k") == "miss");
  }
  SECTION("another database's flush does not refuse the fill") {
    const Generation g = cache.generation();
    cache.ClearDb(1);
    CHECK(cache.Put("k", Value::String("v"), 0, kNow, g));
    CHECK(Read(cache, 0, "k") == "v");
  }
  SECTION("Clear refuses fills of every database") {
    Generation g5 = 0;
    {
      DbScope scope(5);
      g5 = cache.generation();
    }
    cache.Clear();
    DbScope scope(5);
    CHECK_FALSE(cache.Put("k", Value::String("v"), 0, kNow, g5));
  }
}

TEST_CASE("racing fills never show a pre-flush value after ClearDb returns",
          "[cache][generation][concurrency]") {
  Cache cache(Sized(1 << 20, 4));
  constexpr int kKeys = 32;
  std::atomic<uint64_t> storage_epoch{0};  // "storage": every key's value is the current epoch
  std::atomic<bool> stop{false};
  std::vector<std::thread> fillers;
  for (int t = 0; t < 3; ++t) {
    fillers.emplace_back([&, t] {
      for (uint64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
        const std::string key = Key(static_cast<int>((n * 7 + t) % kKeys));
        const Generation g = cache.generation();      // before the storage read
        const uint64_t epoch = storage_epoch.load();  // the storage read
        (void)cache.Put(key, Value::String(std::to_string(epoch)), 0, kNow, g);
      }
    });
  }
  int violations = 0;
  for (int flush = 0; flush < 2000; ++flush) {
    const uint64_t epoch = storage_epoch.fetch_add(1) + 1;  // the storage flush
    cache.ClearDb(0);                                       // then the cache's
    for (int i = 0; i < kKeys; ++i) {
      cache.Peek(Key(i), kNow, [&](const Value& v) {
        if (std::stoull(v.str) < epoch) ++violations;
      });
    }
  }
  stop = true;
  for (auto& t : fillers) t.join();
  CHECK(violations == 0);
  CHECK(cache.GetStats().keys <= kKeys);
}

TEST_CASE("the 32-bit generation wraps around without resurrecting old entries",
          "[cache][generation]") {
  Cache cache(Sized(1 << 20, 4));
  Fill(cache, 7, 0, 10, "ancient");  // stamped with generation 0
  Fill(cache, 8, 0, 10, "other");
  // As if 2^32 - 1 flushes of database 7 had happened since, none of them meeting these entries.
  cache.SetGenerationForTesting(7, UINT32_MAX);
  CHECK(cache.GetStats().stale_keys == 10);
  Fill(cache, 7, 10, 12, "last");  // stamped UINT32_MAX
  cache.ClearDb(7);                // back to generation 0: first removes database 7's entries
  {
    DbScope scope(7);
    CHECK(cache.generation() == 0);
  }
  for (int i = 0; i < 12; ++i) CHECK(Read(cache, 7, Key(i)) == "miss");
  for (int i = 0; i < 10; ++i) CHECK(Read(cache, 8, Key(i)) == "other");
  Stats s = cache.GetStats();
  CHECK(s.keys == 10);
  CHECK(s.stale_keys == 0);
  Fill(cache, 7, 0, 3, "fresh");
  CHECK(Read(cache, 7, Key(2)) == "fresh");
}

}  // namespace generation_test
