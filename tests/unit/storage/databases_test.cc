// Storage databases (store.h "Databases"): per-database keys and counters under DbScope, MOVE
// and COPY across databases, SWAPDB's persisted mapping, FLUSHDB, and the compaction filter
// judging entries by the meta of any database.
#include <catch2/catch.hpp>
#include <chrono>

#include "config/current_db.h"
#include "tests/support/store_fixture.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::storage::databases_test {
namespace {

using testing::Ok;
using testing::StoreFixture;
using testing::TempDir;

TEST_CASE("databases are separate keyspaces with their own counters", "[storage][databases]") {
  StoreFixture f;
  Store& s = *f.store;
  CHECK(s.databases() == 16);
  CHECK(s.PhysicalDb(5) == 5);
  REQUIRE(Ok(s.Set("k", "zero", {})).written);
  {
    DbScope scope(s.PhysicalDb(2));
    CHECK_FALSE(Ok(s.Get("k")).has_value());
    REQUIRE(Ok(s.HSet("k", {{"f", "two"}})) == 1);
    SetOptions ttl;
    ttl.expiry.mode = Expiry::Mode::kAt;
    ttl.expiry.at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count() +
                       100000;
    REQUIRE(Ok(s.Set("t", "v", ttl)).written);
    CHECK(Ok(s.DbSize()) == 2);
    KeyStats stats = s.GetKeyStats();
    CHECK(stats.keys == 2);
    CHECK(stats.expires == 1);
    CHECK(stats.avg_ttl_ms > 90000);
    CHECK(stats.avg_ttl_ms <= 100000);
    CHECK(Ok(s.Keys("*")) == std::vector<std::string>{"k", "t"});
  }
  CHECK(*Ok(s.Get("k")) == "zero");
  CHECK(Ok(s.DbSize()) == 1);
  CHECK(s.GetKeyStats().expires == 0);
  CHECK(Ok(s.Keys("*")) == std::vector<std::string>{"k"});
}

TEST_CASE("MOVE keeps a collection's entries, and compaction keeps them too",
          "[storage][databases]") {
  StoreFixture f;
  Store& s = *f.store;
  REQUIRE(Ok(s.RPush("l", {"a", "b", "c"})) == 3);
  REQUIRE(Ok(s.SAdd("set", {"x"})) == 1);
  CHECK(Ok(s.Move("l", 1)));
  CHECK(Ok(s.Copy("set", "set", 4, false)));
  CHECK_FALSE(Ok(s.Move("absent", 1)));
  REQUIRE(s.CompactAll().ok());
  CHECK(Ok(s.LLen("l")) == 0);
  CHECK(Ok(s.DbSize()) == 1);
  {
    DbScope scope(s.PhysicalDb(1));
    CHECK(Ok(s.LRange("l", 0, -1)) == std::vector<std::string>{"a", "b", "c"});
    CHECK(Ok(s.DbSize()) == 1);
  }
  {
    DbScope scope(s.PhysicalDb(4));
    CHECK(Ok(s.SMembers("set")) == std::vector<std::string>{"x"});
  }
  CHECK(Ok(s.CountDataEntries()) == 5);  // l's 3 elements, set's member twice
  // FLUSHDB of database 1: its list's entries are unreachable and compaction drops them.
  {
    DbScope scope(s.PhysicalDb(1));
    REQUIRE(s.FlushDb().ok());
    CHECK(Ok(s.DbSize()) == 0);
  }
  REQUIRE(s.CompactAll().ok());
  CHECK(Ok(s.CountDataEntries()) == 2);
  CHECK(Ok(s.SMembers("set")) == std::vector<std::string>{"x"});
}

TEST_CASE(
    "SWAPDB's mapping survives reopening; a smaller databases is refused while it holds "
    "keys",
    "[storage][databases]") {
  TempDir dir;
  Options o;
  o.dir = dir.path();
  o.databases = 8;
  {
    auto store = Ok(Store::Open(o));
    {
      DbScope scope(store->PhysicalDb(6));
      REQUIRE(Ok(store->Set("k", "six", {})).written);
    }
    REQUIRE(store->SwapDb(0, 6).ok());
    CHECK(store->PhysicalDb(0) == 6);
    CHECK(store->PhysicalDb(6) == 0);
    DbScope scope(store->PhysicalDb(0));
    CHECK(*Ok(store->Get("k")) == "six");
  }
  o.databases = 4;  // logical 6 is empty (it maps to the physical 0, which is): fine
  {
    auto store = Ok(Store::Open(o));
    CHECK(store->PhysicalDb(0) == 6);
    DbScope scope(store->PhysicalDb(0));
    CHECK(*Ok(store->Get("k")) == "six");
    REQUIRE(store->SwapDb(0, 3).ok());  // logical 3 now holds the key
  }
  o.databases = 3;
  auto refused = Store::Open(o);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("database 3 holds 1 keys but databases is 3") == 0);
  o.databases = 16;
  auto store = Ok(Store::Open(o));
  CHECK(store->PhysicalDb(3) == 6);
  DbScope scope(store->PhysicalDb(3));
  CHECK(*Ok(store->Get("k")) == "six");
}

}  // namespace
}  // namespace rockcache::storage::databases_test
