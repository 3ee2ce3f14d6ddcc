// storage::Store sets against a real RocksDB in a temp dir.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
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
namespace set_test {

namespace {

using Fixture = StoreFixture;

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE_METHOD(Fixture, "SAdd / SRem / SMembers / SCard / SIsMember", "[storage][set]") {
  CHECK(Ok(store->SAdd("s", {"b", "a", "b", "\0"s})) == 3);
  CHECK(Ok(store->SAdd("s", {"a", "c"})) == 1);
  CHECK(Ok(store->SMembers("s")) == Strings{"\0"s, "a", "b", "c"});
  CHECK(Ok(store->SCard("s")) == 4);
  CHECK(Ok(store->SIsMember("s", "a")));
  CHECK_FALSE(Ok(store->SIsMember("s", "z")));
  CHECK_FALSE(Ok(store->SIsMember("none", "a")));
  CHECK(Ok(store->SMIsMember("s", {"a", "z", "c"})) == std::vector<bool>{true, false, true});
  CHECK(Ok(store->SRem("s", {"a", "a", "z"})) == 1);
  CHECK(Ok(store->SCard("s")) == 3);
  CHECK(Ok(store->SRem("s", {"\0"s, "b", "c"})) == 3);
  CHECK(Ok(store->Exists({"s"})) == 0);
  CHECK(Ok(store->SCard("s")) == 0);
  CHECK(Ok(store->SMembers("s")).empty());
  CHECK(Ok(store->DbSize()) == 0);
}

TEST_CASE_METHOD(Fixture, "SPop and SRandMember count rules", "[storage][set]") {
  CHECK(Ok(store->SPop("none", 1)).empty());
  CHECK(Ok(store->SRandMember("none", 3)).empty());
  std::vector<std::string> members;
  for (int i = 0; i < 20; ++i) members.push_back("m" + std::to_string(i));
  std::vector<std::string_view> views(members.begin(), members.end());
  Ok(store->SAdd("s", views));
  auto r = Ok(store->SRandMember("s", 5));
  CHECK(std::set<std::string>(r.begin(), r.end()).size() == 5);
  CHECK(Ok(store->SRandMember("s", 100)).size() == 20);
  CHECK(Ok(store->SRandMember("s", -50)).size() == 50);
  CHECK(Ok(store->SRandMember("s", 0)).empty());
  CHECK(Ok(store->SCard("s")) == 20);

  auto popped = Ok(store->SPop("s", 7));
  CHECK(popped.size() == 7);
  CHECK(Ok(store->SCard("s")) == 13);
  for (const auto& m : popped) CHECK_FALSE(Ok(store->SIsMember("s", m)));
  CHECK(Ok(store->SPop("s", 0)).empty());
  auto rest = Ok(store->SPop("s", 100));
  CHECK(rest.size() == 13);
  CHECK(Ok(store->Exists({"s"})) == 0);
  std::set<std::string> all(popped.begin(), popped.end());
  all.insert(rest.begin(), rest.end());
  CHECK(all.size() == 20);
}

TEST_CASE_METHOD(Fixture, "SPop on a large set", "[storage][set]") {
  std::vector<std::string> members;
  for (int i = 0; i < 3000; ++i) members.push_back("element:" + std::to_string(i * 7919 % 100000));
  std::vector<std::string_view> views(members.begin(), members.end());
  Ok(store->SAdd("s", views));
  std::set<std::string> popped;
  for (int i = 0; i < 100; ++i) {
    auto p = Ok(store->SPop("s", 1));
    REQUIRE(p.size() == 1);
    CHECK(popped.insert(p[0]).second);
  }
  CHECK(Ok(store->SCard("s")) == 2900);
  auto r = Ok(store->SRandMember("s", 10));
  CHECK(std::set<std::string>(r.begin(), r.end()).size() == 10);
  for (const auto& m : r) CHECK(Ok(store->SIsMember("s", m)));
}

TEST_CASE_METHOD(Fixture, "SMove", "[storage][set]") {
  Ok(store->SAdd("a", {"x", "y"}));
  CHECK(Ok(store->SMove("a", "b", "x")));
  CHECK(Ok(store->SMembers("a")) == Strings{"y"});
  CHECK(Ok(store->SMembers("b")) == Strings{"x"});
  CHECK_FALSE(Ok(store->SMove("a", "b", "zz")));
  CHECK_FALSE(Ok(store->SMove("none", "b", "x")));
  Ok(store->SAdd("b", {"y"}));
  CHECK(Ok(store->SMove("a", "b", "y")));  // already in dst: just leaves src
  CHECK(Ok(store->Exists({"a"})) == 0);
  CHECK(Ok(store->SCard("b")) == 2);
  CHECK(Ok(store->SMove("b", "b", "y")));
  CHECK_FALSE(Ok(store->SMove("b", "b", "q")));
  CHECK(Ok(store->DbSize()) == 1);
  Ok(store->Set("str", "v", {}));
  CHECK_FALSE(Ok(store->SMove("none", "str", "x")));  // absent src wins over dst's type
  CHECK(store->SMove("b", "str", "x").status().IsWrongType());
  CHECK(store->SMove("str", "b", "x").status().IsWrongType());
  CHECK(Ok(store->SCard("b")) == 2);
}

TEST_CASE_METHOD(Fixture, "SInter / SUnion / SDiff and STORE variants", "[storage][set]") {
  Ok(store->SAdd("k1", {"a", "b", "c", "d"}));
  Ok(store->SAdd("k2", {"c"}));
  Ok(store->SAdd("k3", {"a", "c", "e"}));
  CHECK(Ok(store->SInter({"k1", "k2", "k3"})) == Strings{"c"});
  CHECK(Ok(store->SInter({"k1", "k3"})) == Strings{"a", "c"});
  CHECK(Ok(store->SInter({"k1", "none"})).empty());
  CHECK(Ok(store->SUnion({"k1", "k2", "k3", "none"})) == Strings{"a", "b", "c", "d", "e"});
  CHECK(Ok(store->SDiff({"k1", "k2", "k3"})) == Strings{"b", "d"});
  CHECK(Ok(store->SDiff({"k1", "none"})) == Strings{"a", "b", "c", "d"});
  CHECK(Ok(store->SDiff({"none", "k1"})).empty());
  CHECK(Ok(store->SInterCard({"k1", "k3"}, 0)) == 2);
  CHECK(Ok(store->SInterCard({"k1", "k3"}, 1)) == 1);

  CHECK(Ok(store->SInterStore("dst", {"k1", "k3"})) == 2);
  CHECK(Ok(store->SMembers("dst")) == Strings{"a", "c"});
  CHECK(Ok(store->SUnionStore("dst", {"k2", "k3"})) == 3);
  CHECK(Ok(store->SMembers("dst")) == Strings{"a", "c", "e"});
  CHECK(Ok(store->SDiffStore("k1", {"k1", "k3"})) == 2);  // dst among the sources
  CHECK(Ok(store->SMembers("k1")) == Strings{"b", "d"});
  // An empty result deletes dst, of any type; the TTL does not survive.
  Ok(store->Set("str", "v", {}));
  CHECK(Ok(store->SInterStore("str", {"k1", "k2"})) == 0);
  CHECK(Ok(store->Exists({"str"})) == 0);
  Ok(store->Set("str", "v", {}));
  CHECK(Ok(store->ExpireAt("str", 4102444800000, ExpireCondition::kAlways)));
  CHECK(Ok(store->SUnionStore("str", {"k2"})) == 1);
  CHECK(Ok(store->Type("str")) == KeyType::kSet);
  CHECK(Ok(store->PTtl("str")) == -1);
  CHECK(Ok(store->DbSize()) == 5);

  // Any non-set key is an error, even after an absent one.
  CHECK(store->SInter({"none", "k2", "str2"}).ok());
  Ok(store->Set("str2", "v", {}));
  CHECK(store->SInter({"none", "str2"}).status().IsWrongType());
  CHECK(store->SUnion({"k1", "str2"}).status().IsWrongType());
  CHECK(store->SDiff({"k1", "str2"}).status().IsWrongType());
  CHECK(store->SInterStore("dst", {"k1", "str2"}).status().IsWrongType());
  CHECK(Ok(store->SMembers("dst")) == Strings{"a", "c", "e"});
}

TEST_CASE_METHOD(Fixture, "SScan covers every member once", "[storage][set]") {
  std::vector<std::string> members;
  for (int i = 0; i < 43; ++i) members.push_back("m" + std::to_string(i));
  std::vector<std::string_view> views(members.begin(), members.end());
  Ok(store->SAdd("s", views));
  for (uint64_t count : {1, 3, 42, 43, 100}) {
    std::multiset<std::string> seen;
    uint64_t cursor = 0;
    do {
      auto r = Ok(store->SScan("s", cursor, "", count));
      seen.insert(r.keys.begin(), r.keys.end());
      cursor = r.next_cursor;
    } while (cursor != 0);
    CHECK(seen.size() == 43);
    CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 43);
  }
  CHECK(Ok(store->SScan("s", 0, "m4*", 100)).keys.size() == 4);  // m4 m40 m41 m42
}

TEST_CASE_METHOD(Fixture, "set WRONGTYPE and version isolation", "[storage][set]") {
  Ok(store->HSet("h", {{"f", "v"}}));
  CHECK(store->SAdd("h", {"a"}).status().IsWrongType());
  CHECK(store->SRem("h", {"a"}).status().IsWrongType());
  CHECK(store->SMembers("h").status().IsWrongType());
  CHECK(store->SIsMember("h", "a").status().IsWrongType());
  CHECK(store->SCard("h").status().IsWrongType());
  CHECK(store->SPop("h", 1).status().IsWrongType());
  CHECK(store->SRandMember("h", 1).status().IsWrongType());
  CHECK(store->SScan("h", 0, "", 10).status().IsWrongType());

  Ok(store->SAdd("s", {"old1", "old2"}));
  Ok(store->Del({"s"}));
  Ok(store->SAdd("s", {"new"}));
  CHECK(Ok(store->SMembers("s")) == Strings{"new"});
  CHECK_FALSE(Ok(store->SIsMember("s", "old1")));
  // SPOP of everything drops the meta only; the next set starts clean.
  Ok(store->SAdd("p", {"1", "2", "3"}));
  CHECK(Ok(store->SPop("p", 3)).size() == 3);
  Ok(store->SAdd("p", {"x"}));
  CHECK(Ok(store->SMembers("p")) == Strings{"x"});
}

}  // namespace set_test
