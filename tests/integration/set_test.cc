// Set commands with Redis 7 semantics and error texts (replies checked against redis-server 7.0):
// SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP, SRANDMEMBER, SMOVE, SINTER, SUNION,
// SDIFF, SINTERCARD, SINTERSTORE, SUNIONSTORE, SDIFFSTORE, SSCAN; WRONGTYPE; an emptied set
// disappears.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::kNotInteger;
using rockcache::testing::kSyntax;
using rockcache::testing::kWrongType;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace set_test {

namespace {

using Members = std::vector<std::string>;

const char kMustBePositive[] = "err:ERR value is out of range, must be positive";

// The strings of an array reply, sorted (Redis's set order is unspecified).
Members Sorted(const Reply& r) {
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  Members out;
  for (const auto& e : r.elements) out.push_back(e.str);
  std::sort(out.begin(), out.end());
  return out;
}

Members SortedRun(Client& c, const std::vector<std::string>& args) {
  return Sorted(c.Command(args));
}

std::string RawReply(RawConnection& conn, const std::vector<std::string>& args,
                     const std::string& expected) {
  conn.Send(Resp(args));
  return conn.ReadExactly(expected.size());
}

}  // namespace

TEST_CASE("SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD", "[set]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SADD", "s", "a", "b", "c", "a"}) == "int:3");  // repeats count once
  CHECK(Run(c, {"SADD", "s", "c", "d"}) == "int:1");
  CHECK(Run(c, {"TYPE", "s"}) == "status:set");
  CHECK(SortedRun(c, {"SMEMBERS", "s"}) == Members{"a", "b", "c", "d"});
  CHECK(Run(c, {"SMEMBERS", "nokey"}) == "[]");
  CHECK(Run(c, {"SCARD", "s"}) == "int:4");
  CHECK(Run(c, {"SCARD", "nokey"}) == "int:0");
  CHECK(Run(c, {"SISMEMBER", "s", "a"}) == "int:1");
  CHECK(Run(c, {"SISMEMBER", "s", "zz"}) == "int:0");
  CHECK(Run(c, {"SISMEMBER", "nokey", "a"}) == "int:0");
  CHECK(Run(c, {"SMISMEMBER", "s", "a", "zz", "d"}) == "[int:1, int:0, int:1]");
  CHECK(Run(c, {"SMISMEMBER", "nokey", "a", "b"}) == "[int:0, int:0]");
  CHECK(Run(c, {"SREM", "s", "a", "a", "zz"}) == "int:1");
  CHECK(Run(c, {"SREM", "nokey", "a"}) == "int:0");
  CHECK(Run(c, {"SREM", "s", "b", "c", "d"}) == "int:3");
  CHECK(Run(c, {"EXISTS", "s"}) == "int:0");
  CHECK(Run(c, {"TYPE", "s"}) == "status:none");
  CHECK(Run(c, {"SADD", "s", ""}) == "int:1");  // the empty member is a member
  CHECK(Run(c, {"SISMEMBER", "s", ""}) == "int:1");
  CHECK(Run(c, {"SADD", "s"}) == "err:ERR wrong number of arguments for 'sadd' command");
  CHECK(Run(c, {"SREM", "s"}) == "err:ERR wrong number of arguments for 'srem' command");
  CHECK(Run(c, {"SMISMEMBER", "s"}) ==
        "err:ERR wrong number of arguments for 'smismember' command");
  CHECK(Run(c, {"SISMEMBER", "s"}) == "err:ERR wrong number of arguments for 'sismember' command");
}

TEST_CASE("SPOP and SRANDMEMBER", "[set]") {
  TestServer server;
  Client c(server.port());
  RawConnection raw(server.port());
  CHECK(RawReply(raw, {"SPOP", "s"}, "$-1\r\n") == "$-1\r\n");
  CHECK(RawReply(raw, {"SPOP", "s", "2"}, "*0\r\n") == "*0\r\n");
  CHECK(RawReply(raw, {"SRANDMEMBER", "s"}, "$-1\r\n") == "$-1\r\n");
  CHECK(RawReply(raw, {"SRANDMEMBER", "s", "-3"}, "*0\r\n") == "*0\r\n");
  CHECK(Run(c, {"SADD", "s", "a", "b", "c", "d", "e"}) == "int:5");
  std::set<std::string> all = {"a", "b", "c", "d", "e"};

  Reply one = c.Command({"SRANDMEMBER", "s"});
  REQUIRE(one.type == REDIS_REPLY_STRING);
  CHECK(all.count(one.str) == 1);
  Members three = SortedRun(c, {"SRANDMEMBER", "s", "3"});
  REQUIRE(three.size() == 3);
  CHECK(std::adjacent_find(three.begin(), three.end()) == three.end());  // distinct
  CHECK(SortedRun(c, {"SRANDMEMBER", "s", "10"}) == Members{"a", "b", "c", "d", "e"});
  Members repeats = SortedRun(c, {"SRANDMEMBER", "s", "-12"});
  REQUIRE(repeats.size() == 12);
  for (const auto& m : repeats) CHECK(all.count(m) == 1);
  CHECK(Run(c, {"SRANDMEMBER", "s", "0"}) == "[]");
  CHECK(Run(c, {"SCARD", "s"}) == "int:5");  // SRANDMEMBER removes nothing
  CHECK(Run(c, {"SRANDMEMBER", "s", "x"}) == kNotInteger);
  CHECK(Run(c, {"SRANDMEMBER", "s", "1", "2"}) == kSyntax);
  CHECK(Run(c, {"SRANDMEMBER", "s", "-9223372036854775808"}) ==
        "err:ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807");

  Reply popped = c.Command({"SPOP", "s"});
  REQUIRE(popped.type == REDIS_REPLY_STRING);
  CHECK(all.count(popped.str) == 1);
  CHECK(Run(c, {"SISMEMBER", "s", popped.str}) == "int:0");
  Members two = SortedRun(c, {"SPOP", "s", "2"});
  CHECK(two.size() == 2);
  CHECK(Run(c, {"SCARD", "s"}) == "int:2");
  CHECK(Run(c, {"SPOP", "s", "0"}) == "[]");
  CHECK(Run(c, {"SPOP", "s", "-1"}) == kMustBePositive);
  CHECK(Run(c, {"SPOP", "s", "x"}) == kMustBePositive);
  CHECK(Run(c, {"SPOP", "s", "1", "2"}) == kSyntax);
  Members rest = SortedRun(c, {"SPOP", "s", "10"});
  CHECK(rest.size() == 2);
  std::set<std::string> seen = {popped.str};
  seen.insert(two.begin(), two.end());
  seen.insert(rest.begin(), rest.end());
  CHECK(seen == all);  // every member popped exactly once
  CHECK(Run(c, {"EXISTS", "s"}) == "int:0");
}

TEST_CASE("SMOVE", "[set]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SADD", "src", "a", "b"}) == "int:2");
  CHECK(Run(c, {"SMOVE", "src", "dst", "a"}) == "int:1");
  CHECK(Run(c, {"SMOVE", "src", "dst", "zz"}) == "int:0");
  CHECK(Run(c, {"SMOVE", "nokey", "dst", "a"}) == "int:0");
  CHECK(SortedRun(c, {"SMEMBERS", "dst"}) == Members{"a"});
  CHECK(Run(c, {"SADD", "dst", "b"}) == "int:1");
  CHECK(Run(c, {"SMOVE", "src", "dst", "b"}) == "int:1");  // already there: only removed
  CHECK(Run(c, {"EXISTS", "src"}) == "int:0");
  CHECK(SortedRun(c, {"SMEMBERS", "dst"}) == Members{"a", "b"});
  CHECK(Run(c, {"SMOVE", "dst", "dst", "a"}) == "int:1");
  CHECK(Run(c, {"SMOVE", "dst", "dst", "zz"}) == "int:0");
  CHECK(SortedRun(c, {"SMEMBERS", "dst"}) == Members{"a", "b"});
  CHECK(Run(c, {"SET", "str", "v"}) == "status:OK");
  CHECK(Run(c, {"SMOVE", "dst", "str", "a"}) == kWrongType);
  CHECK(Run(c, {"SMOVE", "str", "dst", "a"}) == kWrongType);
  CHECK(Run(c, {"SMOVE", "nokey", "str", "a"}) == "int:0");  // an absent source wins
  CHECK(Run(c, {"SCARD", "dst"}) == "int:2");
  CHECK(Run(c, {"SMOVE", "dst", "x"}) == "err:ERR wrong number of arguments for 'smove' command");
}

TEST_CASE("SINTER, SUNION, SDIFF, SINTERCARD and the STORE forms", "[set]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SADD", "a", "1", "2", "3", "4"}) == "int:4");
  CHECK(Run(c, {"SADD", "b", "3", "4", "5"}) == "int:3");
  CHECK(Run(c, {"SADD", "c", "4", "6"}) == "int:2");
  CHECK(SortedRun(c, {"SINTER", "a", "b"}) == Members{"3", "4"});
  CHECK(SortedRun(c, {"SINTER", "a", "b", "c"}) == Members{"4"});
  CHECK(SortedRun(c, {"SINTER", "a"}) == Members{"1", "2", "3", "4"});
  CHECK(Run(c, {"SINTER", "a", "nokey"}) == "[]");
  CHECK(SortedRun(c, {"SUNION", "a", "b", "c", "nokey"}) == Members{"1", "2", "3", "4", "5", "6"});
  CHECK(SortedRun(c, {"SDIFF", "a", "b"}) == Members{"1", "2"});
  CHECK(SortedRun(c, {"SDIFF", "a", "b", "c"}) == Members{"1", "2"});
  CHECK(SortedRun(c, {"SDIFF", "a", "nokey"}) == Members{"1", "2", "3", "4"});
  CHECK(Run(c, {"SDIFF", "nokey", "a"}) == "[]");

  CHECK(Run(c, {"SINTERCARD", "2", "a", "b"}) == "int:2");
  CHECK(Run(c, {"SINTERCARD", "1", "a"}) == "int:4");
  CHECK(Run(c, {"SINTERCARD", "1", "a", "LIMIT", "3"}) == "int:3");
  CHECK(Run(c, {"SINTERCARD", "1", "a", "LIMIT", "0"}) == "int:4");  // 0: no limit
  CHECK(Run(c, {"SINTERCARD", "2", "a", "nokey"}) == "int:0");
  CHECK(Run(c, {"SINTERCARD", "0", "a"}) == "err:ERR numkeys should be greater than 0");
  CHECK(Run(c, {"SINTERCARD", "x", "a"}) == "err:ERR numkeys should be greater than 0");
  CHECK(Run(c, {"SINTERCARD", "3", "a", "b"}) ==
        "err:ERR Number of keys can't be greater than number of args");
  CHECK(Run(c, {"SINTERCARD", "1", "a", "LIMIT", "-1"}) == "err:ERR LIMIT can't be negative");
  CHECK(Run(c, {"SINTERCARD", "1", "a", "LIMIT", "x"}) == "err:ERR LIMIT can't be negative");
  CHECK(Run(c, {"SINTERCARD", "1", "a", "LIMIT"}) == kSyntax);
  CHECK(Run(c, {"SINTERCARD", "1", "a", "b"}) == kSyntax);
  CHECK(Run(c, {"SINTERCARD", "1"}) ==
        "err:ERR wrong number of arguments for 'sintercard' command");

  CHECK(Run(c, {"SINTERSTORE", "d", "a", "b"}) == "int:2");
  CHECK(SortedRun(c, {"SMEMBERS", "d"}) == Members{"3", "4"});
  CHECK(Run(c, {"SUNIONSTORE", "d", "b", "c"}) == "int:4");
  CHECK(SortedRun(c, {"SMEMBERS", "d"}) == Members{"3", "4", "5", "6"});
  CHECK(Run(c, {"SDIFFSTORE", "d", "a", "c"}) == "int:3");
  CHECK(SortedRun(c, {"SMEMBERS", "d"}) == Members{"1", "2", "3"});
  CHECK(Run(c, {"SDIFFSTORE", "a", "a", "b"}) == "int:2");  // the destination may be a source
  CHECK(SortedRun(c, {"SMEMBERS", "a"}) == Members{"1", "2"});
  // An empty result deletes the destination, whatever it held.
  CHECK(Run(c, {"SINTERSTORE", "d", "a", "nokey"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "d"}) == "int:0");
  CHECK(Run(c, {"SET", "str", "v"}) == "status:OK");
  CHECK(Run(c, {"EXPIRE", "str", "100"}) == "int:1");
  CHECK(Run(c, {"SUNIONSTORE", "str", "a"}) == "int:2");  // replaces a string, clears the TTL
  CHECK(Run(c, {"TYPE", "str"}) == "status:set");
  CHECK(Run(c, {"TTL", "str"}) == "int:-1");
  CHECK(Run(c, {"SET", "str2", "v"}) == "status:OK");
  CHECK(Run(c, {"SDIFFSTORE", "str2", "nokey"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "str2"}) == "int:0");
  CHECK(Run(c, {"SINTERSTORE", "d"}) ==
        "err:ERR wrong number of arguments for 'sinterstore' command");

  // A string among the sources is WRONGTYPE, even after an absent key.
  CHECK(Run(c, {"SET", "s", "v"}) == "status:OK");
  CHECK(Run(c, {"SINTER", "a", "s"}) == kWrongType);
  CHECK(Run(c, {"SINTER", "nokey", "s"}) == kWrongType);
  CHECK(Run(c, {"SUNION", "s", "a"}) == kWrongType);
  CHECK(Run(c, {"SDIFF", "a", "s"}) == kWrongType);
  CHECK(Run(c, {"SDIFF", "nokey", "s"}) == kWrongType);
  CHECK(Run(c, {"SINTERCARD", "2", "nokey", "s"}) == kWrongType);
  CHECK(Run(c, {"SINTERSTORE", "d", "a", "s"}) == kWrongType);
  CHECK(Run(c, {"SUNIONSTORE", "d", "s"}) == kWrongType);
  CHECK(Run(c, {"SDIFFSTORE", "d", "nokey", "s"}) == kWrongType);
  CHECK(Run(c, {"EXISTS", "d"}) == "int:0");
}

TEST_CASE("SSCAN iterates every member", "[set]") {
  TestServer server;
  Client c(server.port());
  std::vector<std::string> args = {"SADD", "s"};
  std::set<std::string> expected;
  for (int i = 0; i < 250; ++i) {
    args.push_back("m" + std::to_string(i));
    expected.insert(args.back());
  }
  CHECK(Run(c, args) == "int:250");
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    Reply r = c.Command({"SSCAN", "s", cursor, "COUNT", "20"});
    REQUIRE(r.type == REDIS_REPLY_ARRAY);
    REQUIRE(r.elements.size() == 2);
    cursor = r.elements[0].str;
    for (const auto& e : r.elements[1].elements) seen.insert(e.str);
    REQUIRE(++calls < 1000);
  } while (cursor != "0");
  CHECK(seen == expected);
  seen.clear();
  do {
    Reply r = c.Command({"SSCAN", "s", cursor, "MATCH", "m2?", "COUNT", "1000"});
    cursor = r.elements[0].str;
    for (const auto& e : r.elements[1].elements) seen.insert(e.str);
  } while (cursor != "0");
  CHECK(seen.size() == 10);
  CHECK(Run(c, {"SSCAN", "nokey", "0"}) == "[bulk:0, []]");
  CHECK(Run(c, {"SSCAN", "nokey", "0", "FOO"}) == "[bulk:0, []]");  // key first, as Redis
  CHECK(Run(c, {"SSCAN", "s", "x"}) == "err:ERR invalid cursor");
  CHECK(Run(c, {"SSCAN", "s", "0", "FOO"}) == kSyntax);
  CHECK(Run(c, {"SSCAN", "s", "0", "COUNT", "0"}) == kSyntax);
  CHECK(Run(c, {"SSCAN", "s", "0", "COUNT", "x"}) == kNotInteger);
}

TEST_CASE("set commands against a string key reply WRONGTYPE", "[set]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "s", "v"}) == "status:OK");
  const std::vector<std::vector<std::string>> commands = {
      {"SADD", "s", "a"},
      {"SREM", "s", "a"},
      {"SMEMBERS", "s"},
      {"SISMEMBER", "s", "a"},
      {"SMISMEMBER", "s", "a"},
      {"SCARD", "s"},
      {"SPOP", "s"},
      {"SPOP", "s", "0"},
      {"SRANDMEMBER", "s"},
      {"SRANDMEMBER", "s", "-2"},
      {"SMOVE", "s", "d", "a"},
      {"SINTER", "s"},
      {"SUNION", "s"},
      {"SDIFF", "s"},
      {"SINTERCARD", "1", "s"},
      {"SINTERSTORE", "d", "s"},
      {"SUNIONSTORE", "d", "s"},
      {"SDIFFSTORE", "d", "s"},
      {"SSCAN", "s", "0"},
      {"SSCAN", "s", "0", "FOO"},
  };
  for (const auto& cmd : commands) {
    INFO(cmd[0]);
    CHECK(Run(c, cmd) == kWrongType);
  }
  CHECK(Run(c, {"GET", "s"}) == "bulk:v");
  CHECK(Run(c, {"EXISTS", "d"}) == "int:0");
}

}  // namespace set_test
