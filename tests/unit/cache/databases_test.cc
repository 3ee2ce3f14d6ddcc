// The cache across databases (config/current_db.h): one entry per (database, key), each method
// working in the calling thread's database, ClearDb dropping one database only, and
// ForEachSnapshot visiting each entry inside its own database.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <utility>

#include "cache/cache.h"
#include "config/current_db.h"

using rockcache::DbScope;
using rockcache::cache::Cache;
using rockcache::cache::Lookup;
using rockcache::cache::Options;
using rockcache::cache::Value;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace databases_test {

namespace {

constexpr int64_t kNow = 1'700'000'000'000;

std::string Read(Cache& cache, int db) {
  DbScope scope(db);
  std::string out = "miss";
  Lookup l = cache.Peek("k", kNow, [&](const Value& v) { out = v.str; });
  if (l == Lookup::kAbsent) out = "absent";
  return out;
}

}  // namespace

TEST_CASE("one key name is one entry per database", "[cache][databases]") {
  Options o;
  o.max_memory_bytes = 1 << 20;
  o.shards = 4;
  Cache cache(o);
  REQUIRE(cache.Put("k", Value::String("zero"), 0, kNow));
  {
    DbScope scope(3);
    REQUIRE(cache.Put("k", Value::String("three"), 0, kNow));
  }
  {
    DbScope scope(255);
    REQUIRE(cache.Put("k", Value::Absent(), 0, kNow));
  }
  CHECK(Read(cache, 0) == "zero");
  CHECK(Read(cache, 3) == "three");
  CHECK(Read(cache, 255) == "absent");
  CHECK(Read(cache, 1) == "miss");
  {
    DbScope scope(3);
    cache.Update("k", kNow, [](Value& v, int64_t&) {
      v.str += "!";
      return true;
    });
  }
  CHECK(Read(cache, 3) == "three!");
  CHECK(Read(cache, 0) == "zero");
  {
    DbScope scope(0);
    cache.Erase("k");
  }
  CHECK(Read(cache, 0) == "miss");
  CHECK(Read(cache, 3) == "three!");

  REQUIRE(cache.Put("a", Value::String("0"), 0, kNow));
  std::set<std::pair<int, std::string>> seen;
  cache.ForEachSnapshot(kNow, [&](const std::string& key, const Value&, int64_t) {
    seen.emplace(rockcache::CurrentDb(), key);
  });
  CHECK(seen == std::set<std::pair<int, std::string>>{{0, "a"}, {3, "k"}, {255, "k"}});
  cache.ClearDb(3);
  CHECK(Read(cache, 3) == "miss");
  CHECK(Read(cache, 255) == "absent");
  CHECK(cache.GetStats().keys == 2);
}

}  // namespace databases_test
