// storage::Store sorted sets against a real RocksDB in a temp dir.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
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
namespace zset_test {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using Members = std::vector<ScoredMember>;

std::vector<std::string> Names(const Members& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) out.push_back(m.member);
  return out;
}

struct Fixture : StoreFixture {
  int64_t Add(std::string_view key, std::vector<std::pair<double, std::string_view>> ms,
              ZAddOptions o = {}) {
    return Ok(store->ZAdd(key, ms, o)).count;
  }
  std::vector<std::string> Range(std::string_view key, ZRangeSpec spec) {
    return Names(Ok(store->ZRange(key, spec)));
  }
  // a:1 b:2 c:3 d:4 e:5
  void Five() { Add("z", {{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"}, {5, "e"}}); }
};

using Strings = std::vector<std::string>;

ZRangeSpec Rank(int64_t start, int64_t stop, bool rev = false) {
  ZRangeSpec s;
  s.start = start;
  s.stop = stop;
  s.reverse = rev;
  return s;
}

ZRangeSpec ByScore(std::string_view min, std::string_view max, bool rev = false, int64_t offset = 0,
                   int64_t limit = -1) {
  ZRangeSpec s;
  s.by = ZRangeSpec::By::kScore;
  REQUIRE(ParseScoreRange(min, max, &s.score).ok());
  s.reverse = rev;
  s.offset = offset;
  s.limit = limit;
  return s;
}

ZRangeSpec ByLex(std::string_view min, std::string_view max, bool rev = false, int64_t offset = 0,
                 int64_t limit = -1) {
  ZRangeSpec s;
  s.by = ZRangeSpec::By::kLex;
  REQUIRE(ParseLexRange(min, max, &s.lex).ok());
  s.reverse = rev;
  s.offset = offset;
  s.limit = limit;
  return s;
}

}  // namespace

TEST_CASE_METHOD(Fixture, "ZAdd basics, ZScore, ZCard, ordering", "[storage][zset]") {
  CHECK(Add("z", {{2, "b"}, {1, "a"}, {-3.5, "neg"}, {kInf, "top"}, {-kInf, "bottom"}}) == 5);
  CHECK(Add("z", {{1, "a"}, {5, "b"}}) == 0);  // nothing new
  CHECK(Ok(store->ZCard("z")) == 5);
  CHECK(Ok(store->ZScore("z", "b")) == 5.0);
  CHECK_FALSE(Ok(store->ZScore("z", "zz")).has_value());
  CHECK_FALSE(Ok(store->ZScore("none", "a")).has_value());
  CHECK(Range("z", Rank(0, -1)) == Strings{"bottom", "neg", "a", "b", "top"});
  auto ms = Ok(store->ZMScore("z", {"a", "nope", "top"}));
  REQUIRE(ms.size() == 3);
  CHECK(ms[0] == 1.0);
  CHECK_FALSE(ms[1].has_value());
  CHECK(ms[2] == kInf);
  // Same score: member byte order.
  Add("same", {{1, "b"}, {1, "a"}, {1, "a\0"s}, {1, ""}});
  CHECK(Range("same", Rank(0, -1)) == Strings{"", "a", "a\0"s, "b"});
  // -0 is stored as 0.
  Add("zero", {{-0.0, "m"}});
  CHECK_FALSE(std::signbit(*Ok(store->ZScore("zero", "m"))));
  CHECK(Ok(store->Type("z")) == KeyType::kZSet);
}

TEST_CASE_METHOD(Fixture, "ZAdd NX / XX / GT / LT / CH / INCR", "[storage][zset]") {
  Add("z", {{1, "a"}, {2, "b"}});
  ZAddOptions o;
  o.condition = ZAddOptions::Condition::kIfAbsent;
  CHECK(Add("z", {{10, "a"}, {3, "c"}}, o) == 1);
  CHECK(Ok(store->ZScore("z", "a")) == 1.0);
  o = {};
  o.condition = ZAddOptions::Condition::kIfPresent;
  CHECK(Add("z", {{10, "a"}, {4, "d"}}, o) == 0);
  CHECK(Ok(store->ZScore("z", "a")) == 10.0);
  CHECK_FALSE(Ok(store->ZScore("z", "d")).has_value());
  o.ch = true;
  CHECK(Add("z", {{11, "a"}, {2, "b"}}, o) == 1);  // only a changed
  o = {};
  o.gt = true;
  o.ch = true;
  CHECK(Add("z", {{5, "a"}, {20, "b"}, {7, "new"}}, o) == 2);  // b raised, new added
  CHECK(Ok(store->ZScore("z", "a")) == 11.0);
  CHECK(Ok(store->ZScore("z", "b")) == 20.0);
  o = {};
  o.lt = true;
  CHECK(Add("z", {{5, "a"}, {30, "b"}}, o) == 0);
  CHECK(Ok(store->ZScore("z", "a")) == 5.0);
  CHECK(Ok(store->ZScore("z", "b")) == 20.0);
  // No key + XX: nothing, not even the key.
  o = {};
  o.condition = ZAddOptions::Condition::kIfPresent;
  CHECK(Add("none", {{1, "a"}}, o) == 0);
  CHECK(Ok(store->Exists({"none"})) == 0);
  // Duplicates in one call apply in order.
  o = {};
  o.ch = true;
  CHECK(Add("dup", {{1, "m"}, {2, "m"}}, o) == 2);
  CHECK(Ok(store->ZScore("dup", "m")) == 2.0);
  CHECK(Ok(store->ZCard("dup")) == 1);

  // INCR.
  o = {};
  o.incr = true;
  auto r = Ok(store->ZAdd("z", {{2.5, "a"}}, o));
  CHECK(r.score == 7.5);
  r = Ok(store->ZAdd("z", {{2, "fresh"}}, o));
  CHECK(r.score == 2.0);
  o.condition = ZAddOptions::Condition::kIfAbsent;
  r = Ok(store->ZAdd("z", {{1, "a"}}, o));
  CHECK_FALSE(r.score.has_value());
  o = {};
  o.incr = true;
  o.gt = true;
  r = Ok(store->ZAdd("z", {{-1, "a"}}, o));
  CHECK_FALSE(r.score.has_value());
  CHECK(Ok(store->ZScore("z", "a")) == 7.5);
  CHECK(store->ZAdd("z", {{1, "a"}, {2, "b"}}, o).status().IsInvalidArgument());

  CHECK(Ok(store->ZIncrBy("z", -0.5, "a")) == 7.0);
  CHECK(Ok(store->ZIncrBy("inc", 3, "m")) == 3.0);
  Add("z", {{kInf, "inf"}});
  auto nan = store->ZIncrBy("z", -kInf, "inf");
  REQUIRE_FALSE(nan.ok());
  CHECK(nan.status().message() == "resulting score is not a number (NaN)");
  CHECK(Ok(store->ZScore("z", "inf")) == kInf);
  CHECK(Ok(store->ZIncrBy("z", 1, "inf")) == kInf);
}

TEST_CASE_METHOD(Fixture, "ZRange by rank", "[storage][zset]") {
  Five();
  CHECK(Range("z", Rank(0, -1)) == Strings{"a", "b", "c", "d", "e"});
  CHECK(Range("z", Rank(1, 2)) == Strings{"b", "c"});
  CHECK(Range("z", Rank(-2, -1)) == Strings{"d", "e"});
  CHECK(Range("z", Rank(-100, 1)) == Strings{"a", "b"});
  CHECK(Range("z", Rank(3, 1)).empty());
  CHECK(Range("z", Rank(5, 10)).empty());
  CHECK(Range("z", Rank(0, 1, true)) == Strings{"e", "d"});
  CHECK(Range("z", Rank(-1, -1, true)) == Strings{"a"});
  CHECK(Range("none", Rank(0, -1)).empty());
  auto with = Ok(store->ZRange("z", Rank(0, 0)));
  REQUIRE(with.size() == 1);
  CHECK(with[0].score == 1.0);
}

TEST_CASE_METHOD(Fixture, "ZRange by score, exclusive bounds, REV, LIMIT", "[storage][zset]") {
  Five();
  CHECK(Range("z", ByScore("2", "4")) == Strings{"b", "c", "d"});
  CHECK(Range("z", ByScore("(2", "4")) == Strings{"c", "d"});
  CHECK(Range("z", ByScore("(2", "(4")) == Strings{"c"});
  CHECK(Range("z", ByScore("-inf", "+inf")) == Strings{"a", "b", "c", "d", "e"});
  CHECK(Range("z", ByScore("-inf", "(1")).empty());
  CHECK(Range("z", ByScore("4", "2")).empty());
  CHECK(Range("z", ByScore("(3", "(3")).empty());
  CHECK(Range("z", ByScore("3", "3")) == Strings{"c"});
  CHECK(Range("z", ByScore("2", "4", true)) == Strings{"d", "c", "b"});
  CHECK(Range("z", ByScore("(2", "(5", true)) == Strings{"d", "c"});
  CHECK(Range("z", ByScore("-inf", "inf", false, 1, 2)) == Strings{"b", "c"});
  CHECK(Range("z", ByScore("-inf", "inf", true, 1, 2)) == Strings{"d", "c"});
  CHECK(Range("z", ByScore("-inf", "inf", false, 3, -1)) == Strings{"d", "e"});
  CHECK(Range("z", ByScore("-inf", "inf", false, 0, 0)).empty());
  CHECK(Range("z", ByScore("-inf", "inf", false, -1, 2)).empty());
  CHECK(Range("z", ByScore("-inf", "inf", false, 10, 2)).empty());
  // Negative scores and neighbours of the bounds.
  Add("n", {{-2, "m2"}, {-1, "m1"}, {0, "zero"}, {0.5, "half"}});
  CHECK(Range("n", ByScore("-1.5", "0")) == Strings{"m1", "zero"});
  CHECK(Range("n", ByScore("(-1", "(0.5", true)) == Strings{"zero"});
  CHECK(Ok(store->ZCount("z", ScoreRange{2, 4, true, false})) == 2);
  CHECK(Ok(store->ZCount("z", ScoreRange{})) == 5);
  CHECK(Ok(store->ZCount("none", ScoreRange{})) == 0);
}

TEST_CASE_METHOD(Fixture, "ZRange by lex", "[storage][zset]") {
  Add("l", {{0, "a"}, {0, "b"}, {0, "c"}, {0, "d"}, {0, "e"}});
  CHECK(Range("l", ByLex("-", "+")) == Strings{"a", "b", "c", "d", "e"});
  CHECK(Range("l", ByLex("[b", "[d")) == Strings{"b", "c", "d"});
  CHECK(Range("l", ByLex("(b", "(d")) == Strings{"c"});
  CHECK(Range("l", ByLex("(b", "+")) == Strings{"c", "d", "e"});
  CHECK(Range("l", ByLex("-", "(c")) == Strings{"a", "b"});
  CHECK(Range("l", ByLex("+", "-")).empty());
  CHECK(Range("l", ByLex("[d", "[b")).empty());
  CHECK(Range("l", ByLex("[bb", "[dd")) == Strings{"c", "d"});
  CHECK(Range("l", ByLex("-", "+", true)) == Strings{"e", "d", "c", "b", "a"});
  CHECK(Range("l", ByLex("[b", "(e", true)) == Strings{"d", "c", "b"});
  CHECK(Range("l", ByLex("[b", "[dd", true)) == Strings{"d", "c", "b"});
  CHECK(Range("l", ByLex("-", "+", false, 1, 2)) == Strings{"b", "c"});
  CHECK(Range("l", ByLex("-", "+", true, 1, 2)) == Strings{"d", "c"});
  LexRange lr;
  REQUIRE(ParseLexRange("[b", "(d", &lr).ok());
  CHECK(Ok(store->ZLexCount("l", lr)) == 2);

  LexRange bad;
  Status s = ParseLexRange("b", "[c", &bad);
  CHECK(s.message() == "min or max not valid string range item");
  CHECK_FALSE(ParseLexRange("[a", "++", &bad).ok());
  CHECK_FALSE(ParseLexRange("", "+", &bad).ok());
  ScoreRange sr;
  s = ParseScoreRange("abc", "1", &sr);
  CHECK(s.message() == "min or max is not a float");
  CHECK_FALSE(ParseScoreRange("1", "(x", &sr).ok());
  CHECK_FALSE(ParseScoreRange("nan", "1", &sr).ok());
  REQUIRE(ParseScoreRange("(1.5", "+inf", &sr).ok());
  CHECK(sr.min == 1.5);
  CHECK(sr.min_exclusive);
  CHECK(sr.max == kInf);
  CHECK_FALSE(sr.max_exclusive);
}

TEST_CASE_METHOD(Fixture, "ZRank / ZRevRank", "[storage][zset]") {
  Five();
  CHECK(Ok(store->ZRank("z", "a", false)) == 0);
  CHECK(Ok(store->ZRank("z", "d", false)) == 3);
  CHECK(Ok(store->ZRank("z", "d", true)) == 1);
  CHECK(Ok(store->ZRank("z", "e", true)) == 0);
  CHECK_FALSE(Ok(store->ZRank("z", "nope", false)).has_value());
  CHECK_FALSE(Ok(store->ZRank("none", "a", true)).has_value());
}

TEST_CASE_METHOD(Fixture, "ZRem / ZRemRangeBy* / ZPopMin / ZPopMax", "[storage][zset]") {
  Five();
  CHECK(Ok(store->ZRem("z", {"a", "a", "zz"})) == 1);
  CHECK(Ok(store->ZCard("z")) == 4);
  CHECK(Ok(store->ZRemRangeByScore("z", ScoreRange{3, 4, false, false})) == 2);
  CHECK(Range("z", Rank(0, -1)) == Strings{"b", "e"});
  Five();
  CHECK(Ok(store->ZRemRangeByRank("z", 1, -2)) == 3);
  CHECK(Range("z", Rank(0, -1)) == Strings{"a", "e"});
  Add("l", {{0, "a"}, {0, "b"}, {0, "c"}});
  LexRange lr;
  REQUIRE(ParseLexRange("(a", "+", &lr).ok());
  CHECK(Ok(store->ZRemRangeByLex("l", lr)) == 2);
  CHECK(Range("l", Rank(0, -1)) == Strings{"a"});

  Five();
  auto low = Ok(store->ZPopMin("z", 2));
  REQUIRE(low.size() == 2);
  CHECK(low[0] == ScoredMember{"a", 1});
  CHECK(low[1] == ScoredMember{"b", 2});
  auto high = Ok(store->ZPopMax("z", 1));
  REQUIRE(high.size() == 1);
  CHECK(high[0] == ScoredMember{"e", 5});
  CHECK(Ok(store->ZPopMin("z", 0)).empty());
  CHECK(Ok(store->ZPopMax("z", 100)).size() == 2);
  CHECK(Ok(store->Exists({"z"})) == 0);
  CHECK(Ok(store->ZPopMin("z", 1)).empty());
  CHECK(Ok(store->ZRem("z", {"a"})) == 0);
  // Removing everything by range deletes the key.
  Five();
  CHECK(Ok(store->ZRemRangeByScore("z", ScoreRange{})) == 5);
  CHECK(Ok(store->Exists({"z"})) == 0);
}

TEST_CASE_METHOD(Fixture, "ZRangeStore", "[storage][zset]") {
  Five();
  CHECK(Ok(store->ZRangeStore("dst", "z", ByScore("2", "4"))) == 3);
  CHECK(Range("dst", Rank(0, -1)) == Strings{"b", "c", "d"});
  CHECK(Ok(store->ZScore("dst", "c")) == 3.0);
  Ok(store->Set("str", "v", {}));
  CHECK(Ok(store->ZRangeStore("str", "z", Rank(0, 0))) == 1);
  CHECK(Ok(store->Type("str")) == KeyType::kZSet);
  CHECK(Ok(store->ZRangeStore("dst", "none", Rank(0, -1))) == 0);
  CHECK(Ok(store->Exists({"dst"})) == 0);
  CHECK(store->ZRangeStore("dst", "str2", Rank(0, -1)).ok());
  Ok(store->Set("str2", "v", {}));
  CHECK(store->ZRangeStore("dst", "str2", Rank(0, -1)).status().IsWrongType());
}

TEST_CASE_METHOD(Fixture, "ZScan covers every member once", "[storage][zset]") {
  std::vector<std::string> names;
  for (int i = 0; i < 31; ++i) names.push_back("m" + std::to_string(i));
  std::vector<std::pair<double, std::string_view>> ms;
  for (size_t i = 0; i < names.size(); ++i) ms.emplace_back(static_cast<double>(i), names[i]);
  Add("z", ms);
  for (uint64_t count : {1, 4, 31, 64}) {
    std::set<std::string> seen;
    size_t total = 0;
    uint64_t cursor = 0;
    do {
      auto r = Ok(store->ZScan("z", cursor, "", count));
      for (const auto& item : r.items) {
        seen.insert(item.member);
        CHECK(item.score == static_cast<double>(std::stoi(item.member.substr(1))));
      }
      total += r.items.size();
      cursor = r.next_cursor;
    } while (cursor != 0);
    CHECK(total == 31);
    CHECK(seen.size() == 31);
  }
}

TEST_CASE_METHOD(Fixture, "zset WRONGTYPE and version isolation", "[storage][zset]") {
  Ok(store->SAdd("s", {"a"}));
  CHECK(store->ZAdd("s", {{1, "a"}}, {}).status().IsWrongType());
  CHECK(store->ZScore("s", "a").status().IsWrongType());
  CHECK(store->ZCard("s").status().IsWrongType());
  CHECK(store->ZRange("s", Rank(0, -1)).status().IsWrongType());
  CHECK(store->ZRank("s", "a", false).status().IsWrongType());
  CHECK(store->ZRem("s", {"a"}).status().IsWrongType());
  CHECK(store->ZPopMin("s", 1).status().IsWrongType());
  CHECK(store->ZPopMin("s", 0).status().IsWrongType());
  CHECK(store->ZIncrBy("s", 1, "a").status().IsWrongType());
  CHECK(store->ZScan("s", 0, "", 10).status().IsWrongType());

  Five();
  Ok(store->Del({"z"}));
  Add("z", {{9, "c"}});
  CHECK(Range("z", Rank(0, -1)) == Strings{"c"});
  CHECK(Ok(store->ZScore("z", "c")) == 9.0);
  CHECK(Range("z", ByScore("-inf", "+inf")) == Strings{"c"});
  CHECK(Range("z", ByLex("-", "+")) == Strings{"c"});
  CHECK(Ok(store->ZCard("z")) == 1);
}

}  // namespace zset_test
