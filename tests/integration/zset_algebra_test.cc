// Sorted-set algebra and the multi-key pops over a real socket, with Redis 7.0's replies and
// error strings (expected values taken from redis-server 7.0.15): ZUNION/ZINTER/ZDIFF and their
// STORE forms with WEIGHTS/AGGREGATE/WITHSCORES and plain sets in place of sorted sets,
// ZINTERCARD, ZRANDMEMBER, ZMPOP, LMPOP, LPOS ranks, SINTERCARD/SMISMEMBER, COMMAND GETKEYS.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::kWrongType;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace zset_algebra_test {

namespace {

void Fill(Client& c) {
  REQUIRE(Run(c, {"ZADD", "z1", "1", "a", "2", "b", "3", "c"}) == "int:3");
  REQUIRE(Run(c, {"ZADD", "z2", "4", "b", "5", "c", "6", "d"}) == "int:3");
  REQUIRE(Run(c, {"SADD", "s1", "a", "c", "e"}) == "int:3");
  REQUIRE(Run(c, {"SET", "str", "x"}) == "status:OK");
}
}  // namespace

TEST_CASE("ZUNION, ZINTER, ZDIFF: weights, aggregates, sets as sorted sets", "[zset][algebra]") {
  TestServer server;
  Client c(server.port());
  Fill(c);
  CHECK(Run(c, {"ZUNION", "2", "z1", "z2"}) == "[bulk:a, bulk:b, bulk:d, bulk:c]");
  CHECK(Run(c, {"ZUNION", "3", "z1", "z2", "s1", "WEIGHTS", "1", "2", "3", "WITHSCORES"}) ==
        "[bulk:e, bulk:3, bulk:a, bulk:4, bulk:b, bulk:10, bulk:d, bulk:12, bulk:c, bulk:16]");
  CHECK(Run(c, {"ZUNION", "3", "z1", "z2", "s1", "WEIGHTS", "1", "2", "3", "AGGREGATE", "min",
                "WITHSCORES"}) ==
        "[bulk:a, bulk:1, bulk:b, bulk:2, bulk:c, bulk:3, bulk:e, bulk:3, bulk:d, bulk:12]");
  CHECK(Run(c, {"ZUNION", "3", "z1", "z2", "s1", "WEIGHTS", "1", "2", "3", "AGGREGATE", "MAX",
                "WITHSCORES"}) ==
        "[bulk:a, bulk:3, bulk:e, bulk:3, bulk:b, bulk:8, bulk:c, bulk:10, bulk:d, bulk:12]");
  CHECK(Run(c, {"ZINTER", "3", "z1", "z2", "s1", "WITHSCORES"}) == "[bulk:c, bulk:9]");
  // inf + -inf is 0, as Redis.
  CHECK(Run(c, {"ZINTER", "2", "z1", "s1", "WEIGHTS", "inf", "-inf", "WITHSCORES"}) ==
        "[bulk:a, bulk:0, bulk:c, bulk:0]");
  CHECK(Run(c, {"ZINTER", "2", "z1", "nokey"}) == "[]");
  // A negative weight on a score of 0 is -0, printed "-0" as Redis 7.0 does (stored: 0).
  REQUIRE(Run(c, {"ZADD", "zero", "0", "a", "1", "b"}) == "int:2");
  CHECK(Run(c, {"ZUNION", "1", "zero", "WEIGHTS", "-1", "WITHSCORES"}) ==
        "[bulk:b, bulk:-1, bulk:a, bulk:-0]");
  CHECK(Run(c, {"ZINTER", "1", "zero", "WEIGHTS", "-0", "WITHSCORES"}) ==
        "[bulk:a, bulk:-0, bulk:b, bulk:-0]");
  CHECK(Run(c, {"ZUNIONSTORE", "zero2", "1", "zero", "WEIGHTS", "-1"}) == "int:2");
  CHECK(Run(c, {"ZRANGE", "zero2", "0", "-1", "WITHSCORES"}) ==
        "[bulk:b, bulk:-1, bulk:a, bulk:0]");
  CHECK(Run(c, {"ZINCRBY", "zero3", "-0", "m"}) == "bulk:-0");  // a new member: the increment
  CHECK(Run(c, {"ZINCRBY", "zero3", "-0", "m"}) == "bulk:0");   // 0 + -0
  CHECK(Run(c, {"ZSCORE", "zero3", "m"}) == "bulk:0");
  CHECK(Run(c, {"ZDIFF", "2", "z1", "z2", "WITHSCORES"}) == "[bulk:a, bulk:1]");
  CHECK(Run(c, {"ZDIFF", "2", "s1", "z1", "WITHSCORES"}) == "[bulk:e, bulk:1]");
  CHECK(Run(c, {"ZDIFF", "1", "nokey"}) == "[]");
  // Errors, in Redis's order: numkeys, key count, types, then options.
  CHECK(Run(c, {"ZUNION", "0", "z1"}) ==
        "err:ERR at least 1 input key is needed for 'zunion' command");
  CHECK(Run(c, {"ZUNION", "x", "z1"}) == "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"ZUNION", "3", "z1"}) == "err:ERR syntax error");
  CHECK(Run(c, {"ZUNION", "2", "z1", "str", "foo"}) == kWrongType);
  CHECK(Run(c, {"ZUNION", "2", "z1", "z2", "WEIGHTS", "1"}) == "err:ERR syntax error");
  CHECK(Run(c, {"ZUNION", "2", "z1", "z2", "WEIGHTS", "1", "x"}) ==
        "err:ERR weight value is not a float");
  CHECK(Run(c, {"ZUNION", "2", "z1", "z2", "AGGREGATE", "avg"}) == "err:ERR syntax error");
  CHECK(Run(c, {"ZDIFF", "2", "z1", "z2", "WEIGHTS", "1", "2"}) == "err:ERR syntax error");
  CHECK(Run(c, {"ZDIFF", "2", "z1", "z2", "AGGREGATE", "SUM"}) == "err:ERR syntax error");
}

TEST_CASE("ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE and ZINTERCARD", "[zset][algebra]") {
  TestServer server;
  Client c(server.port());
  Fill(c);
  CHECK(Run(c, {"ZUNIONSTORE", "d", "2", "z1", "z2", "WEIGHTS", "1", "1", "AGGREGATE", "MAX"}) ==
        "int:4");
  CHECK(Run(c, {"ZRANGE", "d", "0", "-1", "WITHSCORES"}) ==
        "[bulk:a, bulk:1, bulk:b, bulk:4, bulk:c, bulk:5, bulk:d, bulk:6]");
  CHECK(Run(c, {"ZUNIONSTORE", "d", "2", "z1", "z2", "WITHSCORES"}) == "err:ERR syntax error");
  CHECK(Run(c, {"ZINTERSTORE", "d", "2", "z1", "z2"}) == "int:2");
  CHECK(Run(c, {"ZRANGE", "d", "0", "-1", "WITHSCORES"}) == "[bulk:b, bulk:6, bulk:c, bulk:8]");
  CHECK(Run(c, {"ZINTERSTORE", "d", "2", "z1", "nokey"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "d"}) == "int:0");
  CHECK(Run(c, {"ZDIFFSTORE", "str", "1", "z1"}) == "int:3");  // any type of destination
  CHECK(Run(c, {"TYPE", "str"}) == "status:zset");
  CHECK(Run(c, {"EXPIRE", "s1", "1000"}) == "int:1");
  CHECK(Run(c, {"ZUNIONSTORE", "s1", "2", "s1", "z1"}) == "int:4");  // a source as destination
  CHECK(Run(c, {"TTL", "s1"}) == "int:-1");
  CHECK(Run(c, {"ZRANGE", "s1", "0", "-1", "WITHSCORES"}) ==
        "[bulk:e, bulk:1, bulk:a, bulk:2, bulk:b, bulk:2, bulk:c, bulk:4]");
  CHECK(Run(c, {"ZUNIONSTORE", "d", "0", "z1"}) ==
        "err:ERR at least 1 input key is needed for 'zunionstore' command");
  CHECK(Run(c, {"ZINTERCARD", "2", "z1", "z2"}) == "int:2");
  CHECK(Run(c, {"ZINTERCARD", "2", "z1", "z2", "LIMIT", "1"}) == "int:1");
  CHECK(Run(c, {"ZINTERCARD", "2", "z1", "z2", "LIMIT", "0"}) == "int:2");
  CHECK(Run(c, {"ZINTERCARD", "2", "z1", "z2", "LIMIT", "-1"}) ==
        "err:ERR LIMIT can't be negative");
  CHECK(Run(c, {"ZINTERCARD", "2", "z1", "z2", "LIMIT", "x"}) == "err:ERR LIMIT can't be negative");
  CHECK(Run(c, {"ZINTERCARD", "0", "z1"}) ==
        "err:ERR at least 1 input key is needed for 'zintercard' command");
  CHECK(Run(c, {"ZINTERCARD", "2", "z1", "z2", "WITHSCORES"}) == "err:ERR syntax error");
  CHECK(Run(c, {"RPUSH", "l", "x"}) == "int:1");
  CHECK(Run(c, {"ZINTERCARD", "2", "z1", "l"}) == kWrongType);
}

TEST_CASE("ZRANDMEMBER: counts, repeats, WITHSCORES, errors", "[zset][algebra]") {
  TestServer server;
  Client c(server.port());
  Fill(c);
  CHECK(Run(c, {"ZRANDMEMBER", "nokey"}) == "nil");
  CHECK(Run(c, {"ZRANDMEMBER", "nokey", "5"}) == "[]");
  CHECK(Run(c, {"ZRANDMEMBER", "z1", "0"}) == "[]");
  std::string one = Run(c, {"ZRANDMEMBER", "z1"});
  CHECK((one == "bulk:a" || one == "bulk:b" || one == "bulk:c"));
  auto all = c.Command({"ZRANDMEMBER", "z1", "10", "WITHSCORES"});
  REQUIRE(all.elements.size() == 6);
  std::set<std::string> seen;
  for (size_t i = 0; i < 6; i += 2) {
    seen.insert(all.elements[i].str);
    CHECK(all.elements[i + 1].str ==
          std::string(1, static_cast<char>('0' + (all.elements[i].str[0] - 'a' + 1))));
  }
  CHECK(seen == std::set<std::string>{"a", "b", "c"});
  auto repeats = c.Command({"ZRANDMEMBER", "z1", "-20"});
  CHECK(repeats.elements.size() == 20);
  for (const auto& e : repeats.elements) CHECK((e.str == "a" || e.str == "b" || e.str == "c"));
  CHECK(Run(c, {"ZRANDMEMBER", "z1", "x"}) == "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"ZRANDMEMBER", "z1", "1", "WITHSCORE"}) == "err:ERR syntax error");
  CHECK(Run(c, {"ZRANDMEMBER", "z1", "1", "WITHSCORES", "x"}) == "err:ERR syntax error");
  CHECK(Run(c, {"ZRANDMEMBER", "z1", "-9223372036854775808"}) ==
        "err:ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807");
  CHECK(Run(c, {"ZRANDMEMBER", "z1", "9223372036854775807", "WITHSCORES"}) ==
        "err:ERR value is out of range");
  CHECK(Run(c, {"ZRANDMEMBER", "str"}) == kWrongType);
}

TEST_CASE("ZMPOP and LMPOP: first non-empty key, COUNT, errors", "[zset][list][algebra]") {
  TestServer server;
  Client c(server.port());
  Fill(c);
  CHECK(Run(c, {"ZMPOP", "1", "nokey", "MIN"}) == "nil");
  CHECK(Run(c, {"ZMPOP", "2", "nokey", "z1", "MIN"}) == "[bulk:z1, [[bulk:a, bulk:1]]]");
  CHECK(Run(c, {"ZMPOP", "2", "nokey", "z1", "max", "COUNT", "10"}) ==
        "[bulk:z1, [[bulk:c, bulk:3], [bulk:b, bulk:2]]]");
  CHECK(Run(c, {"EXISTS", "z1"}) == "int:0");
  CHECK(Run(c, {"ZMPOP", "2", "str", "z2", "MAX"}) == kWrongType);
  CHECK(Run(c, {"ZMPOP", "0", "z2", "MAX"}) == "err:ERR numkeys should be greater than 0");
  CHECK(Run(c, {"ZMPOP", "1", "z2", "foo"}) == "err:ERR syntax error");
  CHECK(Run(c, {"ZMPOP", "1", "z2", "MIN", "COUNT", "0"}) ==
        "err:ERR count should be greater than 0");
  CHECK(Run(c, {"ZMPOP", "1", "z2", "MIN", "COUNT", "1", "COUNT", "1"}) == "err:ERR syntax error");
  CHECK(Run(c, {"ZMPOP", "5", "z2", "MIN"}) == "err:ERR syntax error");
  CHECK(Run(c, {"RPUSH", "l1", "a", "b", "c", "d"}) == "int:4");
  CHECK(Run(c, {"LMPOP", "2", "nokey", "l1", "LEFT"}) == "[bulk:l1, [bulk:a]]");
  CHECK(Run(c, {"LMPOP", "2", "nokey", "l1", "RIGHT", "COUNT", "2"}) ==
        "[bulk:l1, [bulk:d, bulk:c]]");
  CHECK(Run(c, {"LMPOP", "2", "nokey", "l1", "RIGHT", "COUNT", "10"}) == "[bulk:l1, [bulk:b]]");
  CHECK(Run(c, {"LMPOP", "2", "nokey", "l1", "RIGHT", "COUNT", "10"}) == "nil");
  CHECK(Run(c, {"LMPOP", "1", "str", "left"}) == kWrongType);
  CHECK(Run(c, {"LMPOP", "1", "l1", "middle"}) == "err:ERR syntax error");
  CHECK(Run(c, {"LMPOP", "1", "l1", "left", "COUNT", "-1"}) ==
        "err:ERR count should be greater than 0");
  CHECK(Run(c, {"LMPOP", "0", "l1", "left"}) == "err:ERR numkeys should be greater than 0");
  CHECK(Run(c, {"LMPOP", "1", "l1", "left", "COUNT"}) == "err:ERR syntax error");
  CHECK(Run(c, {"LMPOP", "1", "a"}) == "err:ERR wrong number of arguments for 'lmpop' command");
  // A drained-then-refilled list pops its new head.
  std::vector<std::string> push = {"RPUSH", "q"};
  for (int i = 0; i < 500; ++i) push.push_back("e" + std::to_string(i));
  CHECK(Run(c, push) == "int:500");
  CHECK(c.Command({"LMPOP", "1", "q", "LEFT", "COUNT", "499"}).elements.at(1).elements.size() ==
        499);
  CHECK(Run(c, {"LMPOP", "1", "q", "LEFT"}) == "[bulk:q, [bulk:e499]]");
  CHECK(Run(c, {"RPUSH", "q", "new"}) == "int:1");
  CHECK(Run(c, {"LMPOP", "1", "q", "LEFT"}) == "[bulk:q, [bulk:new]]");
}

TEST_CASE("LPOS ranks, SINTERCARD, SMISMEMBER and COMMAND GETKEYS of numkeys commands",
          "[list][set][algebra]") {
  TestServer server;
  Client c(server.port());
  Fill(c);
  CHECK(Run(c, {"RPUSH", "l2", "a", "b", "c", "a", "b", "c", "a"}) == "int:7");
  CHECK(Run(c, {"LPOS", "l2", "a", "RANK", "-1"}) == "int:6");
  CHECK(Run(c, {"LPOS", "l2", "a", "RANK", "-2", "COUNT", "0"}) == "[int:3, int:0]");
  CHECK(Run(c, {"LPOS", "l2", "a", "RANK", "2", "COUNT", "2", "MAXLEN", "4"}) == "[int:3]");
  CHECK(Run(c, {"LPOS", "l2", "a", "RANK", "-9223372036854775808"}) == "int:6");  // as 7.0
  CHECK(Run(c, {"SINTERCARD", "2", "s1", "nokey"}) == "int:0");
  CHECK(Run(c, {"SADD", "s2", "a", "c"}) == "int:2");
  CHECK(Run(c, {"SINTERCARD", "2", "s1", "s2", "LIMIT", "1"}) == "int:1");
  CHECK(Run(c, {"SMISMEMBER", "s1", "a", "b", "c"}) == "[int:1, int:0, int:1]");
  CHECK(Run(c, {"SMISMEMBER", "str", "a"}) == kWrongType);
  CHECK(Run(c, {"COMMAND", "GETKEYS", "ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"}) ==
        "[bulk:d, bulk:a, bulk:b]");
  CHECK(Run(c, {"COMMAND", "GETKEYS", "ZUNION", "2", "a", "b"}) == "[bulk:a, bulk:b]");
  CHECK(Run(c, {"COMMAND", "GETKEYS", "LMPOP", "2", "a", "b", "LEFT"}) == "[bulk:a, bulk:b]");
  CHECK(Run(c, {"COMMAND", "GETKEYS", "ZMPOP", "1", "a", "MIN"}) == "[bulk:a]");
  CHECK(Run(c, {"COMMAND", "GETKEYS", "SINTERCARD", "2", "a", "b"}) == "[bulk:a, bulk:b]");
  CHECK(Run(c, {"COMMAND", "GETKEYS", "LCS", "a", "b"}) == "[bulk:a, bulk:b]");
  CHECK(Run(c, {"COMMAND", "GETKEYS", "BITOP", "AND", "d", "a", "b"}) ==
        "[bulk:d, bulk:a, bulk:b]");
  // Key specs as Redis 7.0's: the destination (OW update), then the keys after numkeys.
  std::string info = Run(c, {"COMMAND", "INFO", "ZUNIONSTORE"});
  CHECK(info.find("[bulk:flags, [status:OW, status:update], bulk:begin_search, [bulk:type, "
                  "bulk:index, bulk:spec, [bulk:index, int:1]]") != std::string::npos);
  CHECK(info.find("[bulk:flags, [status:RO, status:access], bulk:begin_search, [bulk:type, "
                  "bulk:index, bulk:spec, [bulk:index, int:2]], bulk:find_keys, [bulk:type, "
                  "bulk:keynum, bulk:spec, [bulk:keynumidx, int:0, bulk:firstkey, int:1, "
                  "bulk:keystep, int:1]]]") != std::string::npos);
  CHECK(Run(c, {"COMMAND", "INFO", "LMPOP"}).find("[status:RW, status:access, status:delete]") !=
        std::string::npos);
}

}  // namespace zset_algebra_test
