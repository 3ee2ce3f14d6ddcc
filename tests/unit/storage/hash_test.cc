// storage::Store hashes against a real RocksDB in a temp dir.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "storage/store.h"
#include "tests/support/store_fixture.h"

using namespace rockcache;
using namespace rockcache::storage;
using namespace rockcache::storage::testing;
using namespace std::string_literals;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace hash_test {

namespace {

using Fixture = StoreFixture;

using Pairs = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE_METHOD(Fixture, "HSet / HGet / HMGet / HGetAll / HLen", "[storage][hash]") {
  CHECK(Ok(store->HSet("h", {{"a", "1"}, {"b", "2"}, {"a", "3"}})) == 2);
  CHECK(Ok(store->HGet("h", "a")) == "3");  // the later pair won
  CHECK(Ok(store->HSet("h", {{"b", "x"}, {"c\0d"s, "\0"s}})) == 1);
  CHECK(Ok(store->HLen("h")) == 3);
  CHECK(Ok(store->HGetAll("h")) == Pairs{{"a", "3"}, {"b", "x"}, {"c\0d"s, "\0"s}});
  auto m = Ok(store->HMGet("h", {"a", "zz", "c\0d"s}));
  REQUIRE(m.size() == 3);
  CHECK(m[0] == "3");
  CHECK_FALSE(m[1].has_value());
  CHECK(m[2] == "\0"s);
  CHECK(Ok(store->HMGet("none", {"a", "b"})) == std::vector<std::optional<std::string>>(2));
  CHECK_FALSE(Ok(store->HGet("none", "a")).has_value());
  CHECK(Ok(store->HGetAll("none")).empty());
  CHECK(Ok(store->HLen("none")) == 0);
  CHECK(Ok(store->HKeys("h")) == std::vector<std::string>{"a", "b", "c\0d"s});
  CHECK(Ok(store->HVals("h")) == std::vector<std::string>{"3", "x", "\0"s});
  CHECK(Ok(store->HExists("h", "b")));
  CHECK_FALSE(Ok(store->HExists("h", "q")));
  CHECK(Ok(store->HStrLen("h", "a")) == 1);
  CHECK(Ok(store->HStrLen("h", "q")) == 0);
  CHECK(Ok(store->Type("h")) == KeyType::kHash);
  CHECK(Ok(store->DbSize()) == 1);
  // Empty field and empty value are fine.
  CHECK(Ok(store->HSet("h", {{"", ""}})) == 1);
  CHECK(Ok(store->HGet("h", "")) == "");
}

TEST_CASE_METHOD(Fixture, "HDel removes fields and the emptied key", "[storage][hash]") {
  Ok(store->HSet("h", {{"a", "1"}, {"b", "2"}}));
  CHECK(Ok(store->HDel("h", {"a", "a", "zz"})) == 1);
  CHECK(Ok(store->HLen("h")) == 1);
  CHECK(Ok(store->HDel("h", {"b"})) == 1);
  CHECK(Ok(store->Exists({"h"})) == 0);
  CHECK(Ok(store->Type("h")) == KeyType::kNone);
  CHECK(Ok(store->DbSize()) == 0);
  CHECK(Ok(store->HDel("h", {"b"})) == 0);
}

TEST_CASE_METHOD(Fixture, "HSetNx", "[storage][hash]") {
  CHECK(Ok(store->HSetNx("h", "f", "1")));
  CHECK_FALSE(Ok(store->HSetNx("h", "f", "2")));
  CHECK(Ok(store->HGet("h", "f")) == "1");
  CHECK(Ok(store->HSetNx("h", "g", "2")));
  CHECK(Ok(store->HLen("h")) == 2);
}

TEST_CASE_METHOD(Fixture, "HIncrBy / HIncrByFloat", "[storage][hash]") {
  CHECK(Ok(store->HIncrBy("h", "n", 5)) == 5);
  CHECK(Ok(store->HIncrBy("h", "n", -7)) == -2);
  CHECK(Ok(store->HGet("h", "n")) == "-2");
  Ok(store->HSet("h", {{"s", "abc"}, {"big", "9223372036854775807"}, {"f", "1.5"}}));
  auto r = store->HIncrBy("h", "s", 1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "hash value is not an integer");
  r = store->HIncrBy("h", "f", 1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "hash value is not an integer");
  r = store->HIncrBy("h", "big", 1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "increment or decrement would overflow");

  CHECK(Ok(store->HIncrByFloat("h", "f", 0.1L)) == "1.6");
  CHECK(Ok(store->HIncrByFloat("h", "new", 3.0L)) == "3");
  CHECK(Ok(store->HIncrByFloat("h", "n", 2.5L)) == "0.5");
  auto f = store->HIncrByFloat("h", "s", 1);
  REQUIRE_FALSE(f.ok());
  CHECK(f.status().message() == "hash value is not a float");
  Ok(store->HSet("h", {{"huge", "1e4932"}}));
  f = store->HIncrByFloat("h", "huge", 1e4932L);
  REQUIRE_FALSE(f.ok());
  CHECK(f.status().message() == "increment would produce NaN or Infinity");
  CHECK(Ok(store->HLen("h")) == 6);
}

TEST_CASE_METHOD(Fixture, "HRandField count rules", "[storage][hash]") {
  CHECK(Ok(store->HRandField("none", 5)).empty());
  Pairs all;
  std::vector<std::pair<std::string_view, std::string_view>> fv;
  std::vector<std::string> names, values;
  for (int i = 0; i < 30; ++i) names.push_back("f" + std::to_string(i));
  for (const auto& n : names) values.push_back(n + "v");
  for (size_t i = 0; i < names.size(); ++i) fv.emplace_back(names[i], values[i]);
  Ok(store->HSet("h", fv));
  CHECK(Ok(store->HRandField("h", 0)).empty());
  auto some = Ok(store->HRandField("h", 10));
  CHECK(some.size() == 10);
  std::set<std::string> distinct;
  for (auto& [f, v] : some) {
    distinct.insert(f);
    CHECK(v == f + "v");
  }
  CHECK(distinct.size() == 10);
  CHECK(Ok(store->HRandField("h", 100)).size() == 30);
  auto repeats = Ok(store->HRandField("h", -100));
  CHECK(repeats.size() == 100);
  for (auto& [f, v] : repeats) CHECK(v == f + "v");
}

TEST_CASE_METHOD(Fixture, "HRandField on a large hash uses random seeks", "[storage][hash]") {
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back("field:" + std::to_string(i));
  std::vector<std::pair<std::string_view, std::string_view>> fv;
  for (const auto& n : names) fv.emplace_back(n, n);
  Ok(store->HSet("h", fv));
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    auto r = Ok(store->HRandField("h", 3));
    REQUIRE(r.size() == 3);
    std::set<std::string> one;
    for (auto& [f, v] : r) {
      CHECK(f == v);
      one.insert(f);
      seen.insert(f);
    }
    CHECK(one.size() == 3);
  }
  CHECK(seen.size() > 120);  // spread out, not stuck on a few fields
  CHECK(Ok(store->HRandField("h", -7)).size() == 7);
}

TEST_CASE_METHOD(Fixture, "HScan covers every field once", "[storage][hash]") {
  std::vector<std::string> names;
  for (int i = 0; i < 57; ++i) names.push_back("f" + std::to_string(i));
  std::vector<std::pair<std::string_view, std::string_view>> fv;
  for (const auto& n : names) fv.emplace_back(n, "v");
  Ok(store->HSet("h", fv));
  for (uint64_t count : {1, 5, 56, 57, 1000}) {
    std::multiset<std::string> seen;
    uint64_t cursor = 0;
    int calls = 0;
    do {
      auto r = Ok(store->HScan("h", cursor, "", count));
      for (auto& [f, v] : r.items) {
        seen.insert(f);
        CHECK(v == "v");
      }
      cursor = r.next_cursor;
      REQUIRE(++calls < 500);
    } while (cursor != 0);
    CHECK(seen.size() == 57);
    CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 57);
  }
  auto r = Ok(store->HScan("h", 0, "f1*", 1000));
  CHECK(r.items.size() == 11);
  CHECK(r.next_cursor == 0);
  CHECK(Ok(store->HScan("none", 0, "", 10)).items.empty());
}

TEST_CASE_METHOD(Fixture, "hash WRONGTYPE both ways", "[storage][hash]") {
  Ok(store->Set("s", "v", {}));
  CHECK(store->HSet("s", {{"a", "b"}}).status().IsWrongType());
  CHECK(store->HGet("s", "a").status().IsWrongType());
  CHECK(store->HGetAll("s").status().IsWrongType());
  CHECK(store->HDel("s", {"a"}).status().IsWrongType());
  CHECK(store->HLen("s").status().IsWrongType());
  CHECK(store->HIncrBy("s", "a", 1).status().IsWrongType());
  CHECK(store->HScan("s", 0, "", 10).status().IsWrongType());
  CHECK(store->HRandField("s", 1).status().IsWrongType());
  Ok(store->HSet("h", {{"a", "b"}}));
  CHECK(store->Get("h").status().IsWrongType());
  CHECK(store->Append("h", "x").status().IsWrongType());
  CHECK(store->IncrBy("h", 1).status().IsWrongType());
  CHECK(store->StrLen("h").status().IsWrongType());
  CHECK(store->GetDel("h").status().IsWrongType());
  SetOptions get;
  get.return_old = true;
  CHECK(store->Set("h", "x", get).status().IsWrongType());
  CHECK(Ok(store->HGet("h", "a")) == "b");  // SET ... GET did not write
  auto mg = Ok(store->MGet({"h", "s"}));
  CHECK_FALSE(mg[0].has_value());
  CHECK(mg[1] == "v");
  // A plain SET replaces a hash; its fields never come back.
  CHECK(Ok(store->Set("h", "str", {})).written);
  CHECK(Ok(store->Get("h")) == "str");
  CHECK(Ok(store->Del({"h"})) == 1);
  CHECK(Ok(store->HSet("h", {{"z", "1"}})) == 1);
  CHECK(Ok(store->HGetAll("h")) == Pairs{{"z", "1"}});
}

TEST_CASE_METHOD(Fixture, "DEL + recreate never resurrects old fields", "[storage][hash]") {
  Ok(store->HSet("h", {{"a", "1"}, {"b", "2"}, {"c", "3"}}));
  CHECK(Ok(store->Del({"h"})) == 1);
  CHECK(Ok(store->HLen("h")) == 0);
  CHECK_FALSE(Ok(store->HGet("h", "a")).has_value());
  CHECK(Ok(store->HSet("h", {{"b", "new"}})) == 1);  // "b" counts as new
  CHECK(Ok(store->HGetAll("h")) == Pairs{{"b", "new"}});
  CHECK(Ok(store->HLen("h")) == 1);
  // Expiry: an expired hash is gone, and a new one starts empty and without TTL.
  CHECK(Ok(store->ExpireAt("h", 1, ExpireCondition::kAlways)));  // in the past: deleted
  CHECK(Ok(store->HLen("h")) == 0);
  CHECK(Ok(store->HSetNx("h", "x", "1")));
  CHECK(Ok(store->HGetAll("h")) == Pairs{{"x", "1"}});
  CHECK(Ok(store->PTtl("h")) == -1);
}

TEST_CASE_METHOD(Fixture, "hash writes keep the TTL", "[storage][hash]") {
  Ok(store->HSet("h", {{"a", "1"}}));
  int64_t at = 4102444800000;  // 2100-01-01
  CHECK(Ok(store->ExpireAt("h", at, ExpireCondition::kAlways)));
  Ok(store->HSet("h", {{"b", "2"}}));
  Ok(store->HIncrBy("h", "c", 1));
  Ok(store->HDel("h", {"a"}));
  CHECK(Ok(store->ExpireTimeMs("h")) == at);
  CHECK(Ok(store->HLen("h")) == 2);
}

}  // namespace hash_test
