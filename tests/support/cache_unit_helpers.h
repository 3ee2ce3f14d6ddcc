// Helpers of the unit tests of cache::Cache (tests/unit/cache/cache_test.cc, lru_lfu_test.cc,
// expiry_test.cc, value_types_test.cc): a fixed "now", key names, a read that counts no hit or
// miss, a one-shard cache of a given size, the charge of the tests' small entries and the sum of
// a cache's charges.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "cache/cache.h"

namespace rockcache::cache::testing {

inline constexpr int64_t kNow = 1'700'000'000'000;  // a Unix-ms "now"

inline std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "k%03d", i);
  return buf;
}

// The cached string, "<miss>" when not cached. Peek: no hit/miss counted.
inline std::string Get(Cache& cache, std::string_view key, int64_t now = kNow) {
  std::string out = "<miss>";
  cache.Peek(key, now, [&](const Value& v) { out = v.str; });
  return out;
}

inline bool Cached(Cache& cache, std::string_view key, int64_t now = kNow) {
  return cache.Peek(key, now, [](const Value&) {}) == Lookup::kHit;
}

inline Options OneShard(uint64_t bytes, Policy policy = Policy::kAllKeysLru) {
  Options o;
  o.max_memory_bytes = bytes;
  o.shards = 1;
  o.policy = policy;
  return o;
}

// Charge of Key(i) -> "v": all the small entries of these tests.
inline const uint64_t kSmall = Cache::Charge(Key(0), Value::String("v"));

inline uint64_t SumOfCharges(const Cache& cache) {
  uint64_t sum = 0;
  cache.ForEachSnapshot(0, [&](const std::string& key, const Value& value, int64_t) {
    sum += Cache::Charge(key, value);
  });
  return sum;
}

}  // namespace rockcache::cache::testing
