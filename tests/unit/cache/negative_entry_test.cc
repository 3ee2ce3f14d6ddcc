// Negative entries (Value::Absent()): reported as Lookup::kAbsent, charged, evicted, replaced by
// Put, dropped by Update and Erase, counted in the stats.
#include <catch2/catch.hpp>
#include <string>

#include "cache/cache.h"

using rockcache::cache::Cache;
using rockcache::cache::Lookup;
using rockcache::cache::Options;
using rockcache::cache::Stats;
using rockcache::cache::Value;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace negative_entry_test {

namespace {

constexpr int64_t kNow = 1'700'000'000'000;

Options Small(uint64_t bytes) {
  Options o;
  o.max_memory_bytes = bytes;
  o.shards = 1;
  return o;
}

}  // namespace

TEST_CASE("a negative entry is a kAbsent lookup that runs no visitor", "[cache]") {
  Cache cache(Small(1 << 20));
  REQUIRE(cache.Put("k", Value::Absent(), 0, kNow));
  bool visited = false;
  CHECK(cache.Visit("k", kNow, [&](const Value&) { visited = true; }) == Lookup::kAbsent);
  CHECK(cache.Peek("k", kNow, [&](const Value&) { visited = true; }) == Lookup::kAbsent);
  CHECK_FALSE(visited);
  Stats s = cache.GetStats();
  CHECK(s.keys == 1);
  CHECK(s.negative_keys == 1);
  CHECK(s.hits == 1);  // Visit counted, Peek not
  CHECK(s.negative_hits == 1);
  CHECK(s.misses == 0);
  CHECK(s.bytes_used == Cache::kEntryOverhead + 1);
  CHECK(Cache::Charge("key", Value::Absent()) == Cache::kEntryOverhead + 3);
}

TEST_CASE("writes replace or drop a negative entry", "[cache]") {
  Cache cache(Small(1 << 20));
  // Put (write-through of SET) replaces it.
  REQUIRE(cache.Put("k", Value::Absent(), 0, kNow));
  REQUIRE(cache.Put("k", Value::String("v"), 0, kNow));
  std::string got;
  CHECK(cache.Visit("k", kNow, [&](const Value& v) { got = v.str; }) == Lookup::kHit);
  CHECK(got == "v");
  // Update (HSET, INCR, APPEND... of a cached key) never mutates it: it is dropped.
  REQUIRE(cache.Put("h", Value::Absent(), 0, kNow));
  bool mutated = false;
  CHECK_FALSE(cache.Update("h", kNow, [&](Value&, int64_t&) {
    mutated = true;
    return true;
  }));
  CHECK_FALSE(mutated);
  CHECK(cache.Peek("h", kNow, [](const Value&) {}) == Lookup::kMiss);
  // Erase drops it.
  REQUIRE(cache.Put("e", Value::Absent(), 0, kNow));
  cache.Erase("e");
  CHECK(cache.Peek("e", kNow, [](const Value&) {}) == Lookup::kMiss);
  CHECK(cache.GetStats().negative_keys == 0);
  // Clear drops them all.
  REQUIRE(cache.Put("a", Value::Absent(), 0, kNow));
  cache.Clear();
  CHECK(cache.GetStats().negative_keys == 0);
  CHECK(cache.GetStats().keys == 0);
}

TEST_CASE("negative entries are evicted under cache-maxmemory like any entry", "[cache]") {
  const uint64_t budget = 64 * 1024;
  Cache cache(Small(budget));
  for (int i = 0; i < 10000; ++i) {
    (void)cache.Put("absent:" + std::to_string(i), Value::Absent(), 0, kNow);
  }
  Stats s = cache.GetStats();
  CHECK(s.bytes_used <= budget);
  CHECK(s.evictions > 0);
  CHECK(s.negative_keys == s.keys);
  CHECK(s.keys < 10000);
}

}  // namespace negative_entry_test
