#include "server/flat_key_set.h"

#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

using rockcache::server::FlatKeySet;

TEST_CASE("a flat key set agrees with std::set across growth and clears", "[flat-key-set]") {
  // Keys drawn from a small space so that inserts repeat; the set is cleared and refilled, as a
  // group's set is after each commit, with sizes that cross several growths.
  std::mt19937 random(7);
  std::vector<std::string> space;
  for (int i = 0; i < 3000; ++i) space.push_back("key:" + std::to_string(i));
  FlatKeySet set;
  for (int round = 0; round < 6; ++round) {
    std::set<std::string> reference;
    const int inserts = 1 << (round * 2);  // 1, 4, ... 1024
    for (int i = 0; i < inserts; ++i) {
      const std::string& key = space[random() % space.size()];
      set.Insert(key);
      reference.insert(key);
    }
    CHECK(set.size() == reference.size());
    for (const std::string& key : space) {
      INFO(key);
      REQUIRE(set.Contains(key) == (reference.count(key) == 1));
    }
    set.Clear();
    CHECK(set.empty());
    for (const std::string& key : reference) REQUIRE_FALSE(set.Contains(key));
  }
}

TEST_CASE("a flat key set compares the bytes, not only the hash", "[flat-key-set]") {
  FlatKeySet set;
  const std::string a = "same";
  const std::string b = "same";  // other bytes, equal content: one entry
  set.Insert(a);
  set.Insert(b);
  CHECK(set.size() == 1);
  CHECK(set.Contains("same"));
  CHECK_FALSE(set.Contains("sam"));
  CHECK_FALSE(set.Contains(""));
  set.Insert("");
  CHECK(set.Contains(""));
  CHECK(set.size() == 2);
}
