// cache::Cache and TTLs: an expired entry is a miss, removed and counted; Update sets or clears
// a TTL; eviction takes expired entries first; RemoveExpired sweeps them.
#include <catch2/catch.hpp>
#include <cstddef>

#include "cache/cache.h"
#include "tests/support/cache_unit_helpers.h"

using rockcache::cache::Cache;
using rockcache::cache::Lookup;
using rockcache::cache::Options;
using rockcache::cache::Stats;
using rockcache::cache::Value;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace expiry_test {

using rockcache::cache::testing::Cached;
using rockcache::cache::testing::Key;
using rockcache::cache::testing::kNow;
using rockcache::cache::testing::kSmall;
using rockcache::cache::testing::OneShard;

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

}  // namespace expiry_test
