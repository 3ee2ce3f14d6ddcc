// storage::Store: the keyspace commands (DEL, EXISTS, TYPE, TTLs, KEYS, SCAN, DBSIZE,
// FLUSHALL, the expiry sweep) against a real RocksDB in a temp dir.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "storage/store.h"
#include "tests/support/store_commands_fixture.h"

using namespace rockcache;
using namespace rockcache::storage;
using namespace std::string_literals;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace keyspace_test {

using rockcache::storage::testing::store_commands::At;
using rockcache::storage::testing::store_commands::Fixture;
using rockcache::storage::testing::store_commands::Now;

TEST_CASE_METHOD(Fixture, "Del / Exists / Type", "[storage][keyspace]") {
  Set("a", "1");
  Set("b", "2");
  auto e = store->Exists({"a", "b", "a", "c"});
  REQUIRE(e.ok());
  CHECK(*e == 3);
  CHECK(*store->Type("a") == KeyType::kString);
  CHECK(*store->Type("c") == KeyType::kNone);
  auto d = store->Del({"a", "a", "c"});
  REQUIRE(d.ok());
  CHECK(*d == 1);
  CHECK(*store->Exists({"a"}) == 0);
  CHECK(DbSize() == 1);
}

TEST_CASE_METHOD(Fixture, "TTL commands", "[storage][keyspace]") {
  Set("k", "v");
  CHECK(*store->PTtl("k") == -1);
  CHECK(*store->ExpireTimeMs("k") == -1);
  CHECK(*store->PTtl("none") == -2);
  CHECK(*store->ExpireTimeMs("none") == -2);
  CHECK_FALSE(*store->ExpireAt("none", Now() + 1000, ExpireCondition::kAlways));

  int64_t at = Now() + 100000;
  CHECK_FALSE(*store->ExpireAt("k", at, ExpireCondition::kXX));  // no TTL yet
  CHECK_FALSE(*store->ExpireAt("k", at, ExpireCondition::kGT));  // no TTL = infinite
  CHECK(*store->ExpireAt("k", at, ExpireCondition::kNX));
  CHECK(*store->ExpireTimeMs("k") == at);
  CHECK_FALSE(*store->ExpireAt("k", at + 1, ExpireCondition::kNX));
  CHECK_FALSE(*store->ExpireAt("k", at - 1, ExpireCondition::kGT));
  CHECK(*store->ExpireAt("k", at + 1, ExpireCondition::kGT));
  CHECK_FALSE(*store->ExpireAt("k", at + 2, ExpireCondition::kLT));
  CHECK(*store->ExpireAt("k", at, ExpireCondition::kLT));
  CHECK(*store->ExpireAt("k", at + 5, ExpireCondition::kXX));
  auto ttl = *store->PTtl("k");
  CHECK(ttl > 90000);
  CHECK(ttl <= 100005);
  CHECK(Get("k") == "v");  // rewriting the meta keeps the value

  CHECK(*store->Persist("k"));
  CHECK_FALSE(*store->Persist("k"));
  CHECK_FALSE(*store->Persist("none"));
  CHECK(*store->PTtl("k") == -1);
  CHECK(*store->ExpireAt("k", Now() + 100000, ExpireCondition::kLT));  // LT: none = infinite

  // A time in the past deletes.
  CHECK(*store->ExpireAt("k", Now() - 1000, ExpireCondition::kAlways));
  CHECK_FALSE(Get("k").has_value());
  CHECK(DbSize() == 0);

  // A key that expires on its own is absent everywhere at once.
  SetOptions ex;
  ex.expiry = At(Now() + 30);
  Set("short", "v", ex);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK_FALSE(Get("short").has_value());
  CHECK(*store->Exists({"short"}) == 0);
  CHECK(*store->Type("short") == KeyType::kNone);
  CHECK(*store->PTtl("short") == -2);
  CHECK_FALSE(*store->Persist("short"));
  CHECK(store->Keys("*")->empty());
  auto inc = store->IncrBy("short", 1);  // starts over from 0
  REQUIRE(inc.ok());
  CHECK(*inc == 1);
  CHECK(*store->PTtl("short") == -1);
}

TEST_CASE_METHOD(Fixture, "Keys with patterns", "[storage][keyspace]") {
  for (auto k : {"hello", "hallo", "hxllo", "hllo", "heeeello", "world"}) Set(k, "v");
  Set("h\0llo"s, "v");
  auto keys = [&](std::string_view p) {
    auto r = store->Keys(p);
    REQUIRE(r.ok());
    return *r;
  };
  CHECK(keys("*").size() == 7);
  CHECK(keys("h?llo") == std::vector<std::string>{"h\0llo"s, "hallo", "hello", "hxllo"});
  CHECK(keys("h*llo").size() == 6);
  CHECK(keys("h[ae]llo") == std::vector<std::string>{"hallo", "hello"});
  CHECK(keys("h[^e]llo") == std::vector<std::string>{"h\0llo"s, "hallo", "hxllo"});
  CHECK(keys("wor*") == std::vector<std::string>{"world"});
  CHECK(keys("world") == std::vector<std::string>{"world"});
  CHECK(keys("nothing*").empty());
  CHECK(keys("h\\*").empty());
}

TEST_CASE_METHOD(Fixture, "Scan returns every key exactly once for any count",
                 "[storage][keyspace]") {
  std::set<std::string> all;
  for (int i = 0; i < 137; ++i) {
    std::string k = "key:" + std::to_string(i);
    Set(k, "v");
    all.insert(k);
  }
  for (uint64_t count : {1, 2, 7, 10, 136, 137, 138, 1000}) {
    INFO("count " << count);
    std::multiset<std::string> seen;
    uint64_t cursor = 0;
    int calls = 0;
    do {
      auto r = store->Scan(cursor, "", count, std::nullopt);
      REQUIRE(r.ok());
      CHECK(r->keys.size() <= count);
      seen.insert(r->keys.begin(), r->keys.end());
      cursor = r->next_cursor;
      REQUIRE(++calls < 1000);
    } while (cursor != 0);
    CHECK(seen.size() == all.size());
    CHECK(std::set<std::string>(seen.begin(), seen.end()) == all);
  }
  // Pattern and type filters apply after examining.
  auto r = store->Scan(0, "key:1*", 1000, std::nullopt);
  REQUIRE(r.ok());
  CHECK(r->keys.size() == 1 + 10 + 37);
  CHECK(r->next_cursor == 0);
  r = store->Scan(0, "", 1000, KeyType::kHash);
  REQUIRE(r.ok());
  CHECK(r->keys.empty());
  r = store->Scan(0, "", 1000, KeyType::kString);
  REQUIRE(r.ok());
  CHECK(r->keys.size() == 137);
  // An unknown cursor restarts.
  r = store->Scan(987654321, "", 1000, std::nullopt);
  REQUIRE(r.ok());
  CHECK(r->keys.size() == 137);
}

TEST_CASE_METHOD(Fixture, "DbSize and FlushAll", "[storage][keyspace]") {
  for (int i = 0; i < 50; ++i) Set("k" + std::to_string(i), "v");
  CHECK(DbSize() == 50);
  Set("k1", "again");
  CHECK(DbSize() == 50);
  REQUIRE(store->Del({"k1", "k2"}).ok());
  CHECK(DbSize() == 48);
  REQUIRE(store->FlushAll().ok());
  CHECK(DbSize() == 0);
  CHECK(store->Keys("*")->empty());
  CHECK_FALSE(Get("k3").has_value());
  REQUIRE(store->FlushAll().ok());  // on an empty store too
  Set("after", "flush");
  CHECK(DbSize() == 1);
  CHECK(Get("after") == "flush");
}

TEST_CASE_METHOD(Fixture, "SweepExpired removes expired keys, resumably", "[storage][keyspace]") {
  SetOptions ex;
  ex.expiry = At(Now() + 30);
  for (int i = 0; i < 20; ++i) Set("e" + std::to_string(i), "v", ex);
  for (int i = 0; i < 10; ++i) Set("l" + std::to_string(i), "v");
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK(DbSize() == 30);  // expired keys count until swept, as in Redis
  int64_t removed = 0;
  for (int i = 0; i < 10; ++i) {
    auto r = store->SweepExpired(7, with_lock);
    REQUIRE(r.ok());
    removed += *r;
  }
  CHECK(removed == 20);
  CHECK(DbSize() == 10);
  CHECK(*store->SweepExpired(100, with_lock) == 0);
}

}  // namespace keyspace_test
