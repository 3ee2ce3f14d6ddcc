#include "server/unit_cache.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "config/current_db.h"

using rockcache::DbScope;
using rockcache::cache::Cache;
using rockcache::cache::Lookup;
using rockcache::cache::Value;
using rockcache::server::UnitCache;

namespace unit_cache_test {
namespace {

constexpr int64_t kNow = 1'000'000;

// What `cache` holds for `key`: "absent" (a negative entry), "miss", or the string and its TTL.
std::string Held(Cache& cache, const std::string& key) {
  std::string held = "miss";
  const Lookup found = cache.Inspect(key, kNow, [&](const Value& value, int64_t expire_at) {
    held = value.str + (expire_at != 0 ? "@" + std::to_string(expire_at) : "");
  });
  return found == Lookup::kAbsent ? "absent" : held;
}

Cache MakeCache() {
  rockcache::cache::Options options;
  options.max_memory_bytes = 1 << 20;
  return Cache(options);
}

}  // namespace

TEST_CASE("a unit's writes reach the shared cache at Publish, not before", "[unit-cache]") {
  rockcache::cache::Options options;
  options.max_memory_bytes = 1 << 20;
  Cache shared(options);
  shared.Put("counter", Value::String("5"), kNow + 60'000, kNow);
  shared.Put("gone", Value::String("x"), 0, kNow);
  shared.Put("absent", Value::Absent(), 0, kNow);
  shared.Put("untouched", Value::String("u"), 0, kNow);
  {
    UnitCache::Scope scope(&shared);
    UnitCache* unit = UnitCache::Current();
    REQUIRE(unit != nullptr);
    // A write stages its key: the staging cache starts from a copy of the shared entry.
    Cache* view = unit->Enter({"counter"}, /*write=*/true, kNow);
    REQUIRE(view != &shared);
    CHECK(Held(*view, "counter") == "5@" + std::to_string(kNow + 60'000));
    view->Put("counter", Value::String("6"), kNow + 60'000, kNow);
    // A read of a staged key sees the unit's value; the shared cache still the committed one.
    CHECK(unit->Enter({"counter"}, /*write=*/false, kNow) == view);
    CHECK(Held(*view, "counter") == "6@" + std::to_string(kNow + 60'000));
    CHECK(Held(shared, "counter") == "5@" + std::to_string(kNow + 60'000));
    // A read of keys none of which is staged uses the shared cache.
    CHECK(unit->Enter({"untouched", "other"}, /*write=*/false, kNow) == &shared);
    // A read of a staged key and another stages both (their lookups and fills go to staging).
    CHECK(unit->Enter({"counter", "untouched"}, /*write=*/false, kNow) == view);
    CHECK(unit->IsStaged("untouched", 0));
    CHECK(Held(*view, "untouched") == "u");
    // A write that does not keep the cache right erases its keys from the staging cache only.
    unit->Enter({"gone"}, /*write=*/true, kNow);
    view->Erase("gone");
    CHECK(Held(shared, "gone") == "x");
    // A write to a key known absent: its negative entry was copied; the write replaces it.
    unit->Enter({"absent"}, /*write=*/true, kNow);
    CHECK(Held(*view, "absent") == "absent");
    view->Put("absent", Value::String("now"), 0, kNow);
    // A new key the shared cache never held: nothing to copy.
    unit->Enter({"fresh"}, /*write=*/true, kNow);
    CHECK(Held(*view, "fresh") == "miss");
    CHECK(unit->staged_keys() == 5);

    scope.Publish(kNow);
    CHECK(Held(shared, "counter") == "6@" + std::to_string(kNow + 60'000));
    CHECK(Held(shared, "gone") == "miss");
    CHECK(Held(shared, "absent") == "now");
    CHECK(Held(shared, "untouched") == "u");
    CHECK(Held(shared, "fresh") == "miss");
    // Nothing is left in the staging cache for the next unit.
    for (const char* key : {"counter", "gone", "absent", "untouched", "fresh"}) {
      CHECK(Held(*view, key) == "miss");
    }
    CHECK(unit->staged_keys() == 0);
  }
  CHECK(UnitCache::Current() == nullptr);
}

TEST_CASE("a discarded or rolled-back unit leaves the shared cache as committed", "[unit-cache]") {
  Cache shared = MakeCache();
  shared.Put("a", Value::String("1"), 0, kNow);
  shared.Put("b", Value::String("2"), 0, kNow);
  SECTION("Discard, and a Scope that ends without Publish") {
    for (const bool explicit_discard : {true, false}) {
      UnitCache::Scope scope(&shared);
      UnitCache* unit = UnitCache::Current();
      unit->Enter({"a"}, true, kNow)->Put("a", Value::String("changed"), 0, kNow);
      if (explicit_discard) scope.Discard();
    }
    CHECK(Held(shared, "a") == "1");
    UnitCache::Scope scope(&shared);
    CHECK(Held(*UnitCache::Current()->Enter({"a"}, true, kNow), "a") == "1");  // not "changed"
  }
  SECTION("RollbackToSavepoint: the staged keys' shared entries are erased at Publish") {
    UnitCache::Scope scope(&shared);
    UnitCache* unit = UnitCache::Current();
    unit->Enter({"a"}, true, kNow)->Put("a", Value::String("first script"), 0, kNow);
    unit->Enter({"b"}, true, kNow)->Put("b", Value::String("second script"), 0, kNow);
    unit->RollbackToSavepoint();  // the second script is rolled back
    CHECK(Held(*unit->Enter({"b"}, false, kNow), "b") == "miss");
    scope.Publish(kNow);
    CHECK(Held(shared, "a") == "miss");  // conservative: no history to roll back to
    CHECK(Held(shared, "b") == "miss");
  }
  SECTION("DropAll clears the shared cache and forgets what was staged") {
    UnitCache::Scope scope(&shared);
    UnitCache* unit = UnitCache::Current();
    unit->Enter({"a"}, true, kNow)->Put("a", Value::String("before flush"), 0, kNow);
    unit->DropAll();
    CHECK(Held(shared, "a") == "miss");
    CHECK(Held(shared, "b") == "miss");
    CHECK(unit->staged_keys() == 0);
    CHECK(Held(*unit->staging(), "a") == "miss");
    unit->Enter({"b"}, true, kNow)->Put("b", Value::String("after flush"), 0, kNow);
    scope.Publish(kNow);
    CHECK(Held(shared, "b") == "after flush");
  }
}

TEST_CASE("a unit cache keeps databases apart and nests inside a running unit", "[unit-cache]") {
  Cache shared = MakeCache();
  {
    DbScope db(3);
    shared.Put("k", Value::String("db3"), 0, kNow);
  }
  shared.Put("k", Value::String("db0"), 0, kNow);
  UnitCache::Scope outer(&shared);
  UnitCache* unit = UnitCache::Current();
  {
    UnitCache::Scope inner(&shared);  // a script queued in EXEC: the outer unit serves both
    CHECK(UnitCache::Current() == unit);
    inner.Publish(kNow);  // nothing: the outer unit publishes
  }
  CHECK(UnitCache::Current() == unit);
  {
    DbScope db(3);
    Cache* view = unit->Enter({"k"}, true, kNow);
    CHECK(Held(*view, "k") == "db3");
    view->Put("k", Value::String("db3 new"), 0, kNow);
    CHECK(unit->IsStaged("k", 3));
    CHECK_FALSE(unit->IsStaged("k", 0));
  }
  CHECK(unit->Enter({"k"}, false, kNow) == &shared);
  outer.Publish(kNow);
  CHECK(Held(shared, "k") == "db0");
  DbScope db(3);
  CHECK(Held(shared, "k") == "db3 new");
}

TEST_CASE("without a cache there is no unit cache", "[unit-cache]") {
  UnitCache::Scope scope(nullptr);
  CHECK(UnitCache::Current() == nullptr);
  scope.Publish(kNow);  // nothing to do
}

}  // namespace unit_cache_test
