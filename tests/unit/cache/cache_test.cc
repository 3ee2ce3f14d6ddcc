#include "cache/cache.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

using rockcache::cache::Cache;
using rockcache::cache::Lookup;
using rockcache::cache::Options;
using rockcache::cache::Policy;
using rockcache::cache::Stats;
using rockcache::cache::Value;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace cache_test {

namespace {

constexpr int64_t kNow = 1'700'000'000'000;  // a Unix-ms "now"

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "k%03d", i);
  return buf;
}

// The cached string, "<miss>" when not cached. Peek: no hit/miss counted.
std::string Get(Cache& cache, std::string_view key, int64_t now = kNow) {
  std::string out = "<miss>";
  cache.Peek(key, now, [&](const Value& v) { out = v.str; });
  return out;
}

bool Cached(Cache& cache, std::string_view key, int64_t now = kNow) {
  return cache.Peek(key, now, [](const Value&) {}) == Lookup::kHit;
}

Options OneShard(uint64_t bytes, Policy policy = Policy::kAllKeysLru) {
  Options o;
  o.max_memory_bytes = bytes;
  o.shards = 1;
  o.policy = policy;
  return o;
}

// Charge of Key(i) -> "v": all the small entries of these tests.
const uint64_t kSmall = Cache::Charge(Key(0), Value::String("v"));

uint64_t SumOfCharges(const Cache& cache) {
  uint64_t sum = 0;
  cache.ForEachSnapshot(0, [&](const std::string& key, const Value& value, int64_t) {
    sum += Cache::Charge(key, value);
  });
  return sum;
}

}  // namespace

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

TEST_CASE("TTL: an expired entry is a miss, removed and counted", "[cache][ttl]") {
  Cache cache(Options{});
  REQUIRE(cache.Put("t", Value::String("v"), kNow + 1000));
  int64_t expire_at = 0;
  CHECK(cache.Visit("t", kNow + 999, [&](const Value&, int64_t e) { expire_at = e; }) ==
        Lookup::kHit);
  CHECK(expire_at == kNow + 1000);
  CHECK(cache.GetStats().keys_with_ttl == 1);
  CHECK(cache.Visit("t", kNow + 1000, [](const Value&) {}) == Lookup::kMiss);  // now >= expire
  Stats s = cache.GetStats();
  CHECK(s.expired == 1);
  CHECK(s.misses == 1);
  CHECK(s.keys == 0);
  CHECK(s.keys_with_ttl == 0);
  CHECK(s.bytes_used == 0);

  SECTION("Update sees expiry and can set or clear a TTL") {
    REQUIRE(cache.Put("u", Value::String("v"), kNow + 10));
    CHECK_FALSE(cache.Update("u", kNow + 10, [](Value&, int64_t&) { return true; }));
    REQUIRE(cache.Put("u", Value::String("v"), 0));
    CHECK(cache.Update("u", kNow, [](Value&, int64_t& e) {
      e = kNow + 50;  // EXPIRE
      return true;
    }));
    CHECK(cache.GetStats().keys_with_ttl == 1);
    CHECK_FALSE(Cached(cache, "u", kNow + 50));
    REQUIRE(cache.Put("p", Value::String("v"), kNow + 50));
    CHECK(cache.Update("p", kNow, [](Value&, int64_t& e) {
      e = 0;  // PERSIST
      return true;
    }));
    CHECK(Cached(cache, "p", kNow + 1'000'000));
    CHECK(cache.GetStats().keys_with_ttl == 0);
  }

  SECTION("eviction removes expired entries before live ones") {
    Cache small(OneShard(10 * kSmall));
    // The oldest two have no TTL; the eight newest expire at kNow + 1.
    for (int i = 0; i < 10; ++i) {
      REQUIRE(small.Put(Key(i), Value::String("v"), i < 2 ? 0 : kNow + 1));
    }
    small.Visit("clock", kNow + 5, [](const Value&) {});  // the shard's clock passes expiry
    REQUIRE(small.Put(Key(10), Value::String("v"), 0));
    CHECK(Cached(small, Key(0), kNow + 5));  // LRU alone would have evicted this one
    CHECK(Cached(small, Key(1), kNow + 5));
    const Stats st = small.GetStats();
    CHECK(st.evictions == 0);
    CHECK(st.expired >= 1);
  }

  SECTION("RemoveExpired sweeps sampled expired entries") {
    Cache sweep(Options{});
    for (int i = 0; i < 200; ++i) REQUIRE(sweep.Put(Key(i), Value::String("v"), kNow + 1));
    for (int i = 200; i < 220; ++i) REQUIRE(sweep.Put(Key(i), Value::String("v"), 0));
    CHECK(sweep.RemoveExpired(kNow, 100) == 0);
    size_t removed = 0;
    for (int pass = 0; pass < 50 && sweep.GetStats().keys_with_ttl > 0; ++pass) {
      removed += sweep.RemoveExpired(kNow + 1, 20);
    }
    CHECK(removed == 200);
    CHECK(sweep.GetStats().keys == 20);
    CHECK(sweep.GetStats().expired == 200);
  }
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

TEST_CASE("hashes: FindField, sorted order, size limit, Update mutators", "[cache][hash]") {
  const Value unsorted =
      Value::HashFromUnsorted({{"b", "2"}, {"\xff", "hi"}, {"a", "1"}, {"b", "3"}, {"B", "upper"}});
  REQUIRE(unsorted.IsWellFormed());
  REQUIRE(unsorted.fields.size() == 4);
  CHECK(unsorted.fields[0].first == "B");     // 0x42
  CHECK(unsorted.fields[1].first == "a");     // 0x61
  CHECK(unsorted.fields[3].first == "\xff");  // binary order: above ASCII
  CHECK(*unsorted.FindField("b") == "3");     // the last of a repeated name wins
  CHECK(unsorted.FindField("c") == nullptr);

  Options o;
  o.max_hash_fields = 4;
  Cache cache(o);
  REQUIRE(cache.Put("h", Value::Hash({{"f1", "v1"}, {"f2", "v2"}}), 0));
  std::string f2;
  CHECK(cache.Visit("h", kNow, [&](const Value& v) {
    REQUIRE(v.is_hash());
    f2 = *v.FindField("f2");
  }) == Lookup::kHit);
  CHECK(f2 == "v2");

  SECTION("a hash with too many fields is not cached and drops the old entry") {
    CHECK_FALSE(cache.Put(
        "h", Value::Hash({{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}}), 0));
    CHECK_FALSE(Cached(cache, "h"));
    CHECK(cache.GetStats().rejected == 1);
    CHECK_FALSE(cache.Put("empty", Value::Hash({}), 0));
  }
  SECTION("HSET / HDEL in place") {
    CHECK(cache.Update("h", kNow, [](Value& v, int64_t&) {
      CHECK(v.SetField("f0", "v0"));         // new, inserted in order
      CHECK_FALSE(v.SetField("f1", "v1b"));  // replaced
      CHECK(v.EraseField("f2"));
      return true;
    }));
    std::vector<Value::Field> fields;
    cache.Peek("h", kNow, [&](const Value& v) { fields = v.fields; });
    CHECK(fields == std::vector<Value::Field>{{"f0", "v0"}, {"f1", "v1b"}});
    CHECK(cache.GetStats().updates == 1);
    CHECK(cache.GetStats().bytes_used == SumOfCharges(cache));
  }
  SECTION("a mutator returning false erases") {
    CHECK(cache.Update("h", kNow, [](Value&, int64_t&) { return false; }));
    CHECK_FALSE(Cached(cache, "h"));
    CHECK(cache.GetStats().erases == 1);
    CHECK(cache.GetStats().bytes_used == 0);
  }
  SECTION("growing past max_hash_fields or emptying erases") {
    CHECK(cache.Update("h", kNow, [](Value& v, int64_t&) {
      for (const char* f : {"x", "y", "z"}) v.SetField(f, "1");
      return true;
    }));
    CHECK_FALSE(Cached(cache, "h"));
    REQUIRE(cache.Put("h2", Value::Hash({{"only", "1"}}), 0));
    CHECK(cache.Update("h2", kNow, [](Value& v, int64_t&) { return v.EraseField("only"); }));
    CHECK_FALSE(Cached(cache, "h2"));
    CHECK(cache.GetStats().bytes_used == 0);
  }
  SECTION("Update of an absent key does nothing") {
    bool called = false;
    CHECK_FALSE(cache.Update("nope", kNow, [&](Value&, int64_t&) { return called = true; }));
    CHECK_FALSE(called);
  }
}

TEST_CASE("list heads: charge, copies, size limit, Update keep rule", "[cache][list]") {
  const Value head = Value::List({"a", std::string(20, 'b')}, 5);
  REQUIRE(head.IsWellFormed());
  CHECK(Cache::Charge("l", head) == Cache::kEntryOverhead + 1 + Cache::kHeapBlockOverhead +
                                        Cache::kListHeadOverhead + (Cache::kElementOverhead + 1) +
                                        (Cache::kElementOverhead + 20 + Cache::kHeapBlockOverhead));
  Value copy = head;  // a deep copy: editing it leaves the original alone
  copy.list->PopFront();
  CHECK(head.list->elements.size() == 2);
  CHECK(copy != head);
  // The charge follows edits without walking the head: equal to a head built from scratch.
  copy.list->PushBack(std::string(30, 'c'));
  copy.list->PushFront("d");
  copy.list->PopBack();
  copy.list->PushBack("e");
  CHECK(Cache::Charge("l", copy) == Cache::Charge("l", Value::List(copy.list->elements, 5)));
  CHECK(copy.list->element_bytes == 20 + 1 + 1);
  CHECK(copy.list->heap_elements == 1);

  Options o;
  o.max_list_elements = 3;
  Cache cache(o);
  REQUIRE(cache.Put("l", Value::List({"a", "b"}, 10), 0));
  uint64_t length = 0;
  CHECK(cache.Visit("l", kNow, [&](const Value& v) {
    REQUIRE(v.is_list());
    length = v.list->length;
  }) == Lookup::kHit);
  CHECK(length == 10);

  SECTION("a head longer than max_list_elements is not cached and drops the old entry") {
    CHECK_FALSE(cache.Put("l", Value::List({"a", "b", "c", "d"}, 4), 0));
    CHECK_FALSE(Cached(cache, "l"));
    CHECK(cache.GetStats().rejected == 1);
  }
  SECTION("an edited head is kept while it is well formed and within the limit") {
    CHECK(cache.Update("l", kNow, [](Value& v, int64_t&) {
      v.list->PushFront("z");
      v.list->length = 11;
      return true;
    }));
    CHECK(Cached(cache, "l"));
    CHECK(cache.GetStats().bytes_used == SumOfCharges(cache));
    CHECK(cache.Update("l", kNow, [](Value& v, int64_t&) {
      v.list->PushFront("y");  // 4 elements: past the limit
      return true;
    }));
    CHECK_FALSE(Cached(cache, "l"));
    REQUIRE(cache.Put("l2", Value::List({"a"}, 1), 0));
    CHECK(cache.Update("l2", kNow, [](Value& v, int64_t&) {
      v.list->length = 0;  // longer than its list: dropped
      return true;
    }));
    CHECK_FALSE(Cached(cache, "l2"));
    REQUIRE(cache.Put("l3", Value::List({"a"}, 1), 0));
    CHECK(cache.Update("l3", kNow, [](Value& v, int64_t&) {
      v.list->PopFront();  // an empty head answers nothing: dropped
      return true;
    }));
    CHECK_FALSE(Cached(cache, "l3"));
    CHECK(cache.GetStats().bytes_used == 0);
  }
  SECTION("max_list_elements 0: lists are not cached") {
    Options none;
    none.max_list_elements = 0;
    Cache off(none);
    CHECK_FALSE(off.Put("l", Value::List({"a"}, 1), 0));
    CHECK(off.Put("s", Value::String("a"), 0));
  }
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
