// Sorted-set commands with Redis 7 semantics and error texts (replies checked against
// redis-server 7.0; scores are written as Redis 7.2 writes them, which differs from 7.0 only for
// non-integral values whose %.17g form is not the shortest, and for integers from 1e17): ZADD
// and its options, ZINCRBY, ZSCORE, ZMSCORE, ZCARD, ZCOUNT, ZLEXCOUNT, ZRANK, ZREVRANK, the
// ZRANGE family, ZRANGESTORE, ZREM, ZREMRANGEBY*, ZPOPMIN, ZPOPMAX, ZSCAN; WRONGTYPE; an emptied
// sorted set disappears.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::kNotInteger;
using rockcache::testing::kSyntax;
using rockcache::testing::kWrongType;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace zset_test {

namespace {

const char kNotFloat[] = "err:ERR value is not a valid float";
const char kMustBePositive[] = "err:ERR value is out of range, must be positive";
const char kMinMaxFloat[] = "err:ERR min or max is not a float";
const char kMinMaxLex[] = "err:ERR min or max not valid string range item";
const char kLimitRank[] =
    "err:ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
const char kScoresLex[] =
    "err:ERR syntax error, WITHSCORES not supported in combination with BYLEX";

// z: a=1 b=2 c=3 d=4 e=5.
void FillAbcde(Client& c) {
  REQUIRE(Run(c, {"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"}) == "int:5");
}

// l: eleven members with the same score, for the lex commands.
void FillLex(Client& c) {
  std::vector<std::string> args = {"ZADD", "l"};
  for (const char* m : {"a", "b", "c", "d", "e", "f", "g", "aa", "ab", "ba", ""}) {
    args.push_back("0");
    args.push_back(m);
  }
  REQUIRE(Run(c, args) == "int:11");
}

}  // namespace

TEST_CASE("ZADD, ZSCORE, ZMSCORE, ZCARD", "[zset]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"ZADD", "z", "1", "a", "2", "b", "1", "a"}) == "int:2");  // later pair wins
  CHECK(Run(c, {"TYPE", "z"}) == "status:zset");
  CHECK(Run(c, {"ZCARD", "z"}) == "int:2");
  CHECK(Run(c, {"ZCARD", "nokey"}) == "int:0");
  CHECK(Run(c, {"ZADD", "z", "3", "a", "4", "c"}) == "int:1");  // a updated, c added
  CHECK(Run(c, {"ZSCORE", "z", "a"}) == "bulk:3");
  CHECK(Run(c, {"ZSCORE", "z", "zz"}) == "nil");
  CHECK(Run(c, {"ZSCORE", "nokey", "a"}) == "nil");
  CHECK(Run(c, {"ZMSCORE", "z", "a", "zz", "c"}) == "[bulk:3, nil, bulk:4]");
  CHECK(Run(c, {"ZMSCORE", "nokey", "a", "b"}) == "[nil, nil]");
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1", "WITHSCORES"}) ==
        "[bulk:b, bulk:2, bulk:a, bulk:3, bulk:c, bulk:4]");

  // Score formats.
  CHECK(Run(c, {"ZADD", "f", "1.5",  "a", "-2.25",      "b", "inf",    "c",
                "-inf", "d", "1e20", "e", "0",          "g", "-0",     "h",
                "+7",   "i", "1e8",  "j", "1700000000", "k", "1.5e10", "l"}) == "int:11");
  CHECK(Run(c, {"ZMSCORE", "f", "a", "b", "c", "d", "e", "g", "h", "i", "j", "k", "l"}) ==
        "[bulk:1.5, bulk:-2.25, bulk:inf, bulk:-inf, bulk:1e+20, bulk:0, bulk:0, bulk:7, "
        "bulk:100000000, bulk:1700000000, bulk:15000000000]");
  CHECK(Run(c, {"ZADD", "f", "+inf", "x", "-INF", "y", "Infinity", "w"}) == "int:3");
  CHECK(Run(c, {"ZMSCORE", "f", "x", "y", "w"}) == "[bulk:inf, bulk:-inf, bulk:inf]");

  CHECK(Run(c, {"ZADD", "z", "x", "a"}) == kNotFloat);
  CHECK(Run(c, {"ZADD", "z", "nan", "a"}) == kNotFloat);
  CHECK(Run(c, {"ZADD", "z", "1", "a", "x", "b"}) == kNotFloat);  // nothing is written
  CHECK(Run(c, {"ZSCORE", "z", "a"}) == "bulk:3");
  CHECK(Run(c, {"ZADD", "z", "1"}) == "err:ERR wrong number of arguments for 'zadd' command");
  CHECK(Run(c, {"ZADD", "z", "1", "a", "2"}) == kSyntax);
  CHECK(Run(c, {"ZADD", "z", "NX", "1"}) == kSyntax);
  CHECK(Run(c, {"ZSCORE", "z"}) == "err:ERR wrong number of arguments for 'zscore' command");
  CHECK(Run(c, {"ZMSCORE", "z"}) == "err:ERR wrong number of arguments for 'zmscore' command");
}

TEST_CASE("scores are written as Redis 7.2 writes them", "[zset][redis72]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"ZADD", "f", "0.1", "a", "1e-7", "b", "123456789012345678", "c", "1e-5", "d"}) ==
        "int:4");
  CHECK(Run(c, {"ZMSCORE", "f", "a", "b", "c", "d"}) ==
        "[bulk:0.1, bulk:1e-7, bulk:123456789012345680, bulk:0.00001]");
  CHECK(Run(c, {"ZINCRBY", "f", "0.2", "a"}) == "bulk:0.30000000000000004");
}

TEST_CASE("ZADD NX, XX, GT, LT, CH, INCR", "[zset]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"ZADD", "z", "1", "a", "2", "b"}) == "int:2");
  CHECK(Run(c, {"ZADD", "z", "NX", "5", "a", "3", "c"}) == "int:1");
  CHECK(Run(c, {"ZSCORE", "z", "a"}) == "bulk:1");
  CHECK(Run(c, {"ZADD", "z", "XX", "5", "a", "4", "d"}) == "int:0");
  CHECK(Run(c, {"ZSCORE", "z", "a"}) == "bulk:5");
  CHECK(Run(c, {"ZSCORE", "z", "d"}) == "nil");
  CHECK(Run(c, {"ZADD", "z", "XX", "CH", "6", "a", "2", "b", "9", "d"}) == "int:1");
  CHECK(Run(c, {"ZADD", "z", "CH", "6", "a", "7", "b", "8", "e"}) == "int:2");
  CHECK(Run(c, {"ZADD", "z", "GT", "CH", "1", "a", "10", "b", "1", "f"}) == "int:2");  // b, f
  CHECK(Run(c, {"ZMSCORE", "z", "a", "b", "f"}) == "[bulk:6, bulk:10, bulk:1]");
  CHECK(Run(c, {"ZADD", "z", "LT", "CH", "1", "a", "20", "b"}) == "int:1");
  CHECK(Run(c, {"ZMSCORE", "z", "a", "b"}) == "[bulk:1, bulk:10]");
  CHECK(Run(c, {"ZADD", "z", "XX", "GT", "100", "a", "100", "new"}) == "int:0");
  CHECK(Run(c, {"ZMSCORE", "z", "a", "new"}) == "[bulk:100, nil]");

  CHECK(Run(c, {"ZADD", "z", "INCR", "5", "a"}) == "bulk:105");
  CHECK(Run(c, {"ZADD", "z", "INCR", "2.5", "g"}) == "bulk:2.5");
  CHECK(Run(c, {"ZADD", "z", "NX", "INCR", "1", "a"}) == "nil");
  CHECK(Run(c, {"ZADD", "z", "XX", "INCR", "1", "nope"}) == "nil");
  CHECK(Run(c, {"ZADD", "z", "GT", "INCR", "-1", "a"}) == "nil");
  CHECK(Run(c, {"ZADD", "z", "LT", "INCR", "-1", "a"}) == "bulk:104");
  CHECK(Run(c, {"ZADD", "z", "INCR", "inf", "a"}) == "bulk:inf");
  CHECK(Run(c, {"ZADD", "z", "INCR", "-inf", "a"}) ==
        "err:ERR resulting score is not a number (NaN)");
  CHECK(Run(c, {"ZSCORE", "z", "a"}) == "bulk:inf");
  CHECK(Run(c, {"ZADD", "nokey", "XX", "1", "a"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "nokey"}) == "int:0");

  CHECK(Run(c, {"ZADD", "z", "NX", "XX", "1", "a"}) ==
        "err:ERR XX and NX options at the same time are not compatible");
  const char kGtLtNx[] = "err:ERR GT, LT, and/or NX options at the same time are not compatible";
  CHECK(Run(c, {"ZADD", "z", "GT", "LT", "1", "a"}) == kGtLtNx);
  CHECK(Run(c, {"ZADD", "z", "NX", "GT", "1", "a"}) == kGtLtNx);
  CHECK(Run(c, {"ZADD", "z", "lt", "nx", "1", "a"}) == kGtLtNx);
  CHECK(Run(c, {"ZADD", "z", "INCR", "1", "a", "2", "b"}) ==
        "err:ERR INCR option supports a single increment-element pair");
  CHECK(Run(c, {"ZADD", "z", "INCR", "x", "a"}) == kNotFloat);
}

TEST_CASE("ZINCRBY", "[zset]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"ZINCRBY", "z", "2", "a"}) == "bulk:2");
  CHECK(Run(c, {"ZINCRBY", "z", "-0.5", "a"}) == "bulk:1.5");
  CHECK(Run(c, {"ZINCRBY", "z", "1e3", "b"}) == "bulk:1000");
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1", "WITHSCORES"}) ==
        "[bulk:a, bulk:1.5, bulk:b, bulk:1000]");
  CHECK(Run(c, {"ZINCRBY", "z", "x", "a"}) == kNotFloat);
  CHECK(Run(c, {"ZINCRBY", "z", "inf", "a"}) == "bulk:inf");
  CHECK(Run(c, {"ZINCRBY", "z", "-inf", "a"}) == "err:ERR resulting score is not a number (NaN)");
  CHECK(Run(c, {"ZINCRBY", "z", "1"}) == "err:ERR wrong number of arguments for 'zincrby' command");
}

TEST_CASE("ZRANGE by rank, ZREVRANGE, ZRANK, ZREVRANK, ZCOUNT", "[zset]") {
  TestServer server;
  Client c(server.port());
  FillAbcde(c);
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1"}) == "[bulk:a, bulk:b, bulk:c, bulk:d, bulk:e]");
  CHECK(Run(c, {"ZRANGE", "z", "1", "2", "WITHSCORES"}) == "[bulk:b, bulk:2, bulk:c, bulk:3]");
  CHECK(Run(c, {"ZRANGE", "z", "-2", "-1"}) == "[bulk:d, bulk:e]");
  CHECK(Run(c, {"ZRANGE", "z", "-100", "0"}) == "[bulk:a]");
  CHECK(Run(c, {"ZRANGE", "z", "3", "100"}) == "[bulk:d, bulk:e]");
  CHECK(Run(c, {"ZRANGE", "z", "3", "1"}) == "[]");
  CHECK(Run(c, {"ZRANGE", "z", "5", "10"}) == "[]");
  CHECK(Run(c, {"ZRANGE", "z", "0", "1", "REV"}) == "[bulk:e, bulk:d]");
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1", "rev", "withscores"}) ==
        "[bulk:e, bulk:5, bulk:d, bulk:4, bulk:c, bulk:3, bulk:b, bulk:2, bulk:a, bulk:1]");
  CHECK(Run(c, {"ZREVRANGE", "z", "0", "1"}) == "[bulk:e, bulk:d]");
  CHECK(Run(c, {"ZREVRANGE", "z", "-1", "-1", "WITHSCORES"}) == "[bulk:a, bulk:1]");
  CHECK(Run(c, {"ZRANGE", "nokey", "0", "-1"}) == "[]");
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1", "LIMIT", "0", "-1"}) ==  // a no-op LIMIT passes
        "[bulk:a, bulk:b, bulk:c, bulk:d, bulk:e]");

  CHECK(Run(c, {"ZRANK", "z", "a"}) == "int:0");
  CHECK(Run(c, {"ZRANK", "z", "e"}) == "int:4");
  CHECK(Run(c, {"ZREVRANK", "z", "e"}) == "int:0");
  CHECK(Run(c, {"ZREVRANK", "z", "b"}) == "int:3");
  CHECK(Run(c, {"ZRANK", "z", "zz"}) == "nil");
  CHECK(Run(c, {"ZREVRANK", "nokey", "a"}) == "nil");

  CHECK(Run(c, {"ZCOUNT", "z", "2", "4"}) == "int:3");
  CHECK(Run(c, {"ZCOUNT", "z", "(2", "4"}) == "int:2");
  CHECK(Run(c, {"ZCOUNT", "z", "(2", "(4"}) == "int:1");
  CHECK(Run(c, {"ZCOUNT", "z", "-inf", "+inf"}) == "int:5");
  CHECK(Run(c, {"ZCOUNT", "z", "4", "2"}) == "int:0");
  CHECK(Run(c, {"ZCOUNT", "nokey", "-inf", "+inf"}) == "int:0");
  CHECK(Run(c, {"ZCOUNT", "z", "x", "1"}) == kMinMaxFloat);
  CHECK(Run(c, {"ZCOUNT", "z", "1", "(x"}) == kMinMaxFloat);
  CHECK(Run(c, {"ZCOUNT", "nokey", "x", "1"}) == kMinMaxFloat);
}

TEST_CASE("ZRANGEBYSCORE, ZREVRANGEBYSCORE and ZRANGE BYSCORE with LIMIT", "[zset]") {
  TestServer server;
  Client c(server.port());
  FillAbcde(c);
  CHECK(Run(c, {"ZADD", "z", "-inf", "min", "+inf", "max"}) == "int:2");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "2", "4"}) == "[bulk:b, bulk:c, bulk:d]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "(2", "(4"}) == "[bulk:c]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "-inf", "1", "WITHSCORES"}) ==
        "[bulk:min, bulk:-inf, bulk:a, bulk:1]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "(5", "+inf", "WITHSCORES"}) == "[bulk:max, bulk:inf]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "(-inf", "(+inf"}) ==
        "[bulk:a, bulk:b, bulk:c, bulk:d, bulk:e]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "4", "2"}) == "[]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1.5", "2.5"}) == "[bulk:b]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "1", "2"}) == "[bulk:b, bulk:c]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "3", "-1", "WITHSCORES"}) ==
        "[bulk:d, bulk:4, bulk:e, bulk:5]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "-1", "2"}) == "[]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "10", "2"}) == "[]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "0", "0"}) == "[]");
  CHECK(Run(c, {"ZREVRANGEBYSCORE", "z", "4", "2"}) == "[bulk:d, bulk:c, bulk:b]");
  CHECK(Run(c, {"ZREVRANGEBYSCORE", "z", "(4", "-inf", "WITHSCORES", "LIMIT", "1", "2"}) ==
        "[bulk:b, bulk:2, bulk:a, bulk:1]");
  CHECK(Run(c, {"ZREVRANGEBYSCORE", "z", "2", "4"}) == "[]");
  CHECK(Run(c, {"ZRANGE", "z", "2", "4", "BYSCORE"}) == "[bulk:b, bulk:c, bulk:d]");
  CHECK(Run(c, {"ZRANGE", "z", "4", "2", "BYSCORE", "REV"}) == "[bulk:d, bulk:c, bulk:b]");
  CHECK(Run(c, {"ZRANGE", "z", "+inf", "(1", "BYSCORE", "REV", "LIMIT", "1", "3", "WITHSCORES"}) ==
        "[bulk:e, bulk:5, bulk:d, bulk:4, bulk:c, bulk:3]");
  CHECK(Run(c, {"ZRANGEBYSCORE", "nokey", "-inf", "+inf"}) == "[]");

  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "x", "1"}) == kMinMaxFloat);
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "x", "1"}) == kNotInteger);
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "1"}) == kSyntax);
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1", "5", "REV"}) == kSyntax);
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1", "5", "BYSCORE"}) == kSyntax);
  CHECK(Run(c, {"ZRANGEBYSCORE", "z", "1"}) ==
        "err:ERR wrong number of arguments for 'zrangebyscore' command");
}

TEST_CASE("ZRANGEBYLEX, ZREVRANGEBYLEX, ZRANGE BYLEX, ZLEXCOUNT, ZREMRANGEBYLEX", "[zset]") {
  TestServer server;
  Client c(server.port());
  FillLex(c);
  CHECK(Run(c, {"ZRANGEBYLEX", "l", "-", "+"}) ==
        "[bulk:, bulk:a, bulk:aa, bulk:ab, bulk:b, bulk:ba, bulk:c, bulk:d, bulk:e, bulk:f, "
        "bulk:g]");
  CHECK(Run(c, {"ZRANGEBYLEX", "l", "[a", "(b"}) == "[bulk:a, bulk:aa, bulk:ab]");
  CHECK(Run(c, {"ZRANGEBYLEX", "l", "(a", "[b"}) == "[bulk:aa, bulk:ab, bulk:b]");
  CHECK(Run(c, {"ZRANGEBYLEX", "l", "[", "(a"}) == "[bulk:]");
  CHECK(Run(c, {"ZRANGEBYLEX", "l", "(f", "+"}) == "[bulk:g]");
  CHECK(Run(c, {"ZRANGEBYLEX", "l", "+", "-"}) == "[]");
  CHECK(Run(c, {"ZRANGEBYLEX", "l", "-", "+", "LIMIT", "2", "3"}) == "[bulk:aa, bulk:ab, bulk:b]");
  CHECK(Run(c, {"ZREVRANGEBYLEX", "l", "[c", "(b"}) == "[bulk:c, bulk:ba]");
  CHECK(Run(c, {"ZREVRANGEBYLEX", "l", "+", "-", "LIMIT", "0", "2"}) == "[bulk:g, bulk:f]");
  CHECK(Run(c, {"ZRANGE", "l", "[b", "[c", "BYLEX"}) == "[bulk:b, bulk:ba, bulk:c]");
  CHECK(Run(c, {"ZRANGE", "l", "[c", "[b", "BYLEX", "REV", "LIMIT", "1", "5"}) ==
        "[bulk:ba, bulk:b]");
  CHECK(Run(c, {"ZRANGEBYLEX", "nokey", "-", "+"}) == "[]");
  CHECK(Run(c, {"ZLEXCOUNT", "l", "-", "+"}) == "int:11");
  CHECK(Run(c, {"ZLEXCOUNT", "l", "[a", "(b"}) == "int:3");
  CHECK(Run(c, {"ZLEXCOUNT", "nokey", "-", "+"}) == "int:0");

  CHECK(Run(c, {"ZRANGEBYLEX", "l", "a", "+"}) == kMinMaxLex);
  CHECK(Run(c, {"ZRANGEBYLEX", "l", "-", "b"}) == kMinMaxLex);
  CHECK(Run(c, {"ZLEXCOUNT", "l", "", "+"}) == kMinMaxLex);
  CHECK(Run(c, {"ZRANGEBYLEX", "l", "-", "+", "WITHSCORES"}) == kScoresLex);
  CHECK(Run(c, {"ZRANGE", "l", "-", "+", "BYLEX", "WITHSCORES"}) == kScoresLex);

  CHECK(Run(c, {"ZREMRANGEBYLEX", "l", "[a", "(b"}) == "int:3");
  CHECK(Run(c, {"ZREMRANGEBYLEX", "l", "(f", "+"}) == "int:1");
  CHECK(Run(c, {"ZREMRANGEBYLEX", "l", "x", "+"}) == kMinMaxLex);
  CHECK(Run(c, {"ZREMRANGEBYLEX", "nokey", "-", "+"}) == "int:0");
  CHECK(Run(c, {"ZCARD", "l"}) == "int:7");
  CHECK(Run(c, {"ZREMRANGEBYLEX", "l", "-", "+"}) == "int:7");
  CHECK(Run(c, {"EXISTS", "l"}) == "int:0");
}

TEST_CASE("ZRANGE argument errors", "[zset]") {
  TestServer server;
  Client c(server.port());
  FillAbcde(c);
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"}) == kLimitRank);
  CHECK(Run(c, {"ZREVRANGE", "z", "0", "-1", "LIMIT", "0", "1"}) == kLimitRank);
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1", "REV", "REV"}) == kSyntax);
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1", "BYSCORE", "BYLEX"}) == kSyntax);
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1", "FOO"}) == kSyntax);
  CHECK(Run(c, {"ZRANGE", "z", "0", "1", "BYSCORE", "LIMIT", "0"}) == kSyntax);
  CHECK(Run(c, {"ZRANGE", "z", "a", "1"}) == kNotInteger);
  CHECK(Run(c, {"ZRANGE", "z", "a", "1", "BYSCORE"}) == kMinMaxFloat);
  CHECK(Run(c, {"ZRANGE", "z", "a", "1", "BYLEX"}) == kMinMaxLex);
  CHECK(Run(c, {"ZRANGE", "nokey", "a", "1"}) == kNotInteger);  // arguments before the key
  CHECK(Run(c, {"ZREVRANGE", "z", "0", "-1", "BYSCORE"}) == kSyntax);
  CHECK(Run(c, {"ZREVRANGE", "z", "0", "-1", "REV"}) == kSyntax);
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1", "WITHSCORES", "WITHSCORES"}) ==
        "[bulk:a, bulk:1, bulk:b, bulk:2, bulk:c, bulk:3, bulk:d, bulk:4, bulk:e, bulk:5]");
  CHECK(Run(c, {"ZRANGE", "z", "0"}) == "err:ERR wrong number of arguments for 'zrange' command");
}

TEST_CASE("ZRANGESTORE", "[zset]") {
  TestServer server;
  Client c(server.port());
  FillAbcde(c);
  CHECK(Run(c, {"ZRANGESTORE", "d", "z", "1", "2"}) == "int:2");
  CHECK(Run(c, {"ZRANGE", "d", "0", "-1", "WITHSCORES"}) == "[bulk:b, bulk:2, bulk:c, bulk:3]");
  CHECK(Run(c, {"ZRANGESTORE", "d", "z", "(1", "4", "BYSCORE", "LIMIT", "1", "5"}) == "int:2");
  CHECK(Run(c, {"ZRANGE", "d", "0", "-1"}) == "[bulk:c, bulk:d]");
  CHECK(Run(c, {"ZRANGESTORE", "d", "z", "0", "1", "REV"}) == "int:2");
  CHECK(Run(c, {"ZRANGE", "d", "0", "-1"}) == "[bulk:d, bulk:e]");
  CHECK(Run(c, {"ZRANGESTORE", "d", "z", "[b", "[c", "BYLEX"}) == "int:2");
  CHECK(Run(c, {"SET", "s", "v"}) == "status:OK");
  CHECK(Run(c, {"ZRANGESTORE", "s", "z", "0", "0"}) == "int:1");  // replaces any type
  CHECK(Run(c, {"TYPE", "s"}) == "status:zset");
  CHECK(Run(c, {"ZRANGESTORE", "d", "z", "10", "20"}) == "int:0");  // empty: deletes d
  CHECK(Run(c, {"EXISTS", "d"}) == "int:0");
  CHECK(Run(c, {"ZRANGESTORE", "s", "nokey", "0", "-1"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "s"}) == "int:0");
  CHECK(Run(c, {"ZRANGESTORE", "z", "z", "0", "1"}) == "int:2");  // the source itself
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1"}) == "[bulk:a, bulk:b]");
  CHECK(Run(c, {"ZRANGESTORE", "d", "z", "0", "-1", "WITHSCORES"}) == kSyntax);
  CHECK(Run(c, {"ZRANGESTORE", "d", "z", "0", "-1", "LIMIT", "0", "1"}) == kLimitRank);
  CHECK(Run(c, {"SET", "s", "v"}) == "status:OK");
  CHECK(Run(c, {"ZRANGESTORE", "d", "s", "0", "-1"}) == kWrongType);
  CHECK(Run(c, {"ZRANGESTORE", "d", "z", "0"}) ==
        "err:ERR wrong number of arguments for 'zrangestore' command");
}

TEST_CASE("ZREM, ZREMRANGEBYSCORE, ZREMRANGEBYRANK; an emptied sorted set disappears", "[zset]") {
  TestServer server;
  Client c(server.port());
  FillAbcde(c);
  CHECK(Run(c, {"ZREM", "z", "a", "a", "zz"}) == "int:1");
  CHECK(Run(c, {"ZREM", "nokey", "a"}) == "int:0");
  CHECK(Run(c, {"ZREMRANGEBYSCORE", "z", "(2", "3"}) == "int:1");  // c
  CHECK(Run(c, {"ZREMRANGEBYSCORE", "z", "10", "20"}) == "int:0");
  CHECK(Run(c, {"ZREMRANGEBYSCORE", "z", "x", "20"}) == kMinMaxFloat);
  CHECK(Run(c, {"ZREMRANGEBYSCORE", "nokey", "-inf", "+inf"}) == "int:0");
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1"}) == "[bulk:b, bulk:d, bulk:e]");
  CHECK(Run(c, {"ZREMRANGEBYRANK", "z", "-1", "-1"}) == "int:1");  // e
  CHECK(Run(c, {"ZREMRANGEBYRANK", "z", "5", "10"}) == "int:0");
  CHECK(Run(c, {"ZREMRANGEBYRANK", "z", "x", "1"}) == kNotInteger);
  CHECK(Run(c, {"ZREMRANGEBYRANK", "nokey", "0", "-1"}) == "int:0");
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1"}) == "[bulk:b, bulk:d]");
  CHECK(Run(c, {"ZREMRANGEBYRANK", "z", "0", "-1"}) == "int:2");
  CHECK(Run(c, {"EXISTS", "z"}) == "int:0");
  CHECK(Run(c, {"ZADD", "z", "1", "a"}) == "int:1");
  CHECK(Run(c, {"ZREMRANGEBYSCORE", "z", "-inf", "+inf"}) == "int:1");
  CHECK(Run(c, {"TYPE", "z"}) == "status:none");
  CHECK(Run(c, {"ZADD", "z", "1", "a"}) == "int:1");
  CHECK(Run(c, {"ZREM", "z", "a"}) == "int:1");
  CHECK(Run(c, {"EXISTS", "z"}) == "int:0");
  CHECK(Run(c, {"ZREM", "z"}) == "err:ERR wrong number of arguments for 'zrem' command");
}

TEST_CASE("ZPOPMIN and ZPOPMAX", "[zset]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"ZPOPMIN", "z"}) == "[]");
  CHECK(Run(c, {"ZPOPMAX", "z", "3"}) == "[]");
  FillAbcde(c);
  CHECK(Run(c, {"ZPOPMIN", "z"}) == "[bulk:a, bulk:1]");
  CHECK(Run(c, {"ZPOPMAX", "z"}) == "[bulk:e, bulk:5]");
  CHECK(Run(c, {"ZPOPMIN", "z", "2"}) == "[bulk:b, bulk:2, bulk:c, bulk:3]");
  CHECK(Run(c, {"ZPOPMAX", "z", "0"}) == "[]");
  CHECK(Run(c, {"ZPOPMAX", "z", "-1"}) == kMustBePositive);
  CHECK(Run(c, {"ZPOPMAX", "z", "x"}) == kMustBePositive);
  CHECK(Run(c, {"ZPOPMIN", "z", "1", "2"}) == kSyntax);
  CHECK(Run(c, {"ZPOPMAX", "z", "10"}) == "[bulk:d, bulk:4]");
  CHECK(Run(c, {"EXISTS", "z"}) == "int:0");
}

TEST_CASE("ZSCAN iterates every member with its score", "[zset]") {
  TestServer server;
  Client c(server.port());
  std::vector<std::string> args = {"ZADD", "z"};
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 200; ++i) {
    args.push_back(std::to_string(i) + ".5");
    args.push_back("m" + std::to_string(i));
    expected["m" + std::to_string(i)] = std::to_string(i) + ".5";
  }
  CHECK(Run(c, args) == "int:200");
  std::map<std::string, std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    Reply r = c.Command({"ZSCAN", "z", cursor, "COUNT", "15"});
    REQUIRE(r.type == REDIS_REPLY_ARRAY);
    REQUIRE(r.elements.size() == 2);
    cursor = r.elements[0].str;
    const auto& items = r.elements[1].elements;
    REQUIRE(items.size() % 2 == 0);
    for (size_t i = 0; i < items.size(); i += 2) seen[items[i].str] = items[i + 1].str;
    REQUIRE(++calls < 1000);
  } while (cursor != "0");
  CHECK(seen == expected);
  seen.clear();
  do {
    Reply r = c.Command({"ZSCAN", "z", cursor, "MATCH", "m1?", "COUNT", "1000"});
    cursor = r.elements[0].str;
    const auto& items = r.elements[1].elements;
    for (size_t i = 0; i < items.size(); i += 2) seen[items[i].str] = items[i + 1].str;
  } while (cursor != "0");
  CHECK(seen.size() == 10);
  CHECK(seen["m12"] == "12.5");
  CHECK(Run(c, {"ZSCAN", "nokey", "0"}) == "[bulk:0, []]");
  CHECK(Run(c, {"ZSCAN", "z", "x"}) == "err:ERR invalid cursor");
  CHECK(Run(c, {"ZSCAN", "z", "0", "COUNT", "0"}) == kSyntax);
  CHECK(Run(c, {"ZSCAN", "z", "0", "NOVALUES"}) == kSyntax);
}

TEST_CASE("sorted-set commands against a string key reply WRONGTYPE", "[zset]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "s", "v"}) == "status:OK");
  const std::vector<std::vector<std::string>> commands = {
      {"ZADD", "s", "1", "a"},
      {"ZADD", "s", "XX", "1", "a"},
      {"ZINCRBY", "s", "1", "a"},
      {"ZSCORE", "s", "a"},
      {"ZMSCORE", "s", "a"},
      {"ZCARD", "s"},
      {"ZCOUNT", "s", "-inf", "+inf"},
      {"ZLEXCOUNT", "s", "-", "+"},
      {"ZRANK", "s", "a"},
      {"ZREVRANK", "s", "a"},
      {"ZRANGE", "s", "0", "-1"},
      {"ZRANGE", "s", "0", "1", "BYSCORE"},
      {"ZRANGEBYSCORE", "s", "0", "1"},
      {"ZREVRANGEBYSCORE", "s", "1", "0"},
      {"ZRANGEBYLEX", "s", "-", "+"},
      {"ZREVRANGEBYLEX", "s", "+", "-"},
      {"ZREVRANGE", "s", "0", "-1"},
      {"ZRANGESTORE", "d", "s", "0", "-1"},
      {"ZREM", "s", "a"},
      {"ZREMRANGEBYSCORE", "s", "0", "1"},
      {"ZREMRANGEBYRANK", "s", "0", "1"},
      {"ZREMRANGEBYLEX", "s", "-", "+"},
      {"ZPOPMIN", "s"},
      {"ZPOPMAX", "s", "0"},
      {"ZSCAN", "s", "0"},
  };
  for (const auto& cmd : commands) {
    INFO(cmd[0]);
    CHECK(Run(c, cmd) == kWrongType);
  }
  CHECK(Run(c, {"GET", "s"}) == "bulk:v");
  CHECK(Run(c, {"EXISTS", "d"}) == "int:0");
}

}  // namespace zset_test
