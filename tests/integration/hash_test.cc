// Hash commands with Redis 7 semantics and error texts (replies checked against redis-server
// 7.0): HSET/HMSET, HSETNX, HGET, HMGET, HGETALL, HDEL, HLEN, HEXISTS, HKEYS, HVALS, HINCRBY,
// HINCRBYFLOAT, HSTRLEN, HRANDFIELD, HSCAN; WRONGTYPE; an emptied hash disappears.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
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
namespace hash_test {

namespace {

// The strings of an array reply, sorted (Redis's hash order is unspecified).
std::vector<std::string> Sorted(const Reply& r) {
  std::vector<std::string> out;
  for (const auto& e : r.elements) out.push_back(e.str);
  std::sort(out.begin(), out.end());
  return out;
}

// A flat field/value array reply as a map.
std::map<std::string, std::string> Pairs(const Reply& r) {
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  REQUIRE(r.elements.size() % 2 == 0);
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
  return out;
}

// Sends one command on a raw connection and checks the reply bytes exactly.
std::string RawReply(RawConnection& conn, const std::vector<std::string>& args,
                     const std::string& expected) {
  conn.Send(Resp(args));
  return conn.ReadExactly(expected.size());
}

}  // namespace

TEST_CASE("HSET, HMSET, HSETNX, HGET, HMGET, HLEN, HEXISTS, HSTRLEN", "[hash]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"HSET", "h", "a", "1", "b", "2"}) == "int:2");
  CHECK(Run(c, {"HSET", "h", "a", "10", "c", "3"}) == "int:1");  // only c is new
  CHECK(Run(c, {"HSET", "h", "d", "1", "d", "2"}) == "int:1");   // the later pair wins
  CHECK(Run(c, {"HGET", "h", "d"}) == "bulk:2");
  CHECK(Run(c, {"HGET", "h", "a"}) == "bulk:10");
  CHECK(Run(c, {"HGET", "h", "zz"}) == "nil");
  CHECK(Run(c, {"HGET", "nokey", "a"}) == "nil");
  CHECK(Run(c, {"HMSET", "h", "e", "5"}) == "status:OK");
  CHECK(Run(c, {"HMGET", "h", "a", "zz", "e"}) == "[bulk:10, nil, bulk:5]");
  CHECK(Run(c, {"HMGET", "nokey", "a", "b"}) == "[nil, nil]");
  CHECK(Run(c, {"HLEN", "h"}) == "int:5");
  CHECK(Run(c, {"HLEN", "nokey"}) == "int:0");
  CHECK(Run(c, {"HEXISTS", "h", "a"}) == "int:1");
  CHECK(Run(c, {"HEXISTS", "h", "zz"}) == "int:0");
  CHECK(Run(c, {"HEXISTS", "nokey", "a"}) == "int:0");
  CHECK(Run(c, {"HSETNX", "h", "a", "x"}) == "int:0");
  CHECK(Run(c, {"HGET", "h", "a"}) == "bulk:10");
  CHECK(Run(c, {"HSETNX", "h", "f", "hello"}) == "int:1");
  CHECK(Run(c, {"HSETNX", "new", "f", "v"}) == "int:1");
  CHECK(Run(c, {"TYPE", "new"}) == "status:hash");
  CHECK(Run(c, {"HSTRLEN", "h", "f"}) == "int:5");
  CHECK(Run(c, {"HSTRLEN", "h", "zz"}) == "int:0");
  CHECK(Run(c, {"HSTRLEN", "nokey", "f"}) == "int:0");
  // Empty fields and values, binary data.
  CHECK(Run(c, {"HSET", "h", "", ""}) == "int:1");
  CHECK(Run(c, {"HGET", "h", ""}) == "bulk:");
  std::string bin("a\0b\r\nc", 6);
  CHECK(Run(c, {"HSET", "h", bin, bin}) == "int:1");
  Reply r = c.Command({"HGET", "h", bin});
  CHECK(r.str == bin);

  CHECK(Run(c, {"HSET", "h", "a"}) == "err:ERR wrong number of arguments for 'hset' command");
  CHECK(Run(c, {"HSET", "h", "a", "1", "b"}) ==
        "err:ERR wrong number of arguments for 'hset' command");
  CHECK(Run(c, {"hmset", "h", "a", "1", "b"}) ==
        "err:ERR wrong number of arguments for 'hmset' command");
  CHECK(Run(c, {"HSETNX", "h", "a"}) == "err:ERR wrong number of arguments for 'hsetnx' command");
  CHECK(Run(c, {"HGET", "h"}) == "err:ERR wrong number of arguments for 'hget' command");
  CHECK(Run(c, {"HMGET", "h"}) == "err:ERR wrong number of arguments for 'hmget' command");
  CHECK(Run(c, {"HLEN", "h", "x"}) == "err:ERR wrong number of arguments for 'hlen' command");
  CHECK(Run(c, {"HGET", "h", "a"}) == "bulk:10");  // errors changed nothing
}

TEST_CASE("HGETALL, HKEYS, HVALS, HDEL; an emptied hash disappears", "[hash]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"HGETALL", "h"}) == "[]");
  CHECK(Run(c, {"HKEYS", "h"}) == "[]");
  CHECK(Run(c, {"HVALS", "h"}) == "[]");
  CHECK(Run(c, {"HSET", "h", "b", "2", "a", "1", "c", "3"}) == "int:3");
  CHECK(Pairs(c.Command({"HGETALL", "h"})) ==
        std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}, {"c", "3"}});
  CHECK(Sorted(c.Command({"HKEYS", "h"})) == std::vector<std::string>{"a", "b", "c"});
  CHECK(Sorted(c.Command({"HVALS", "h"})) == std::vector<std::string>{"1", "2", "3"});
  CHECK(Run(c, {"HDEL", "h", "a", "a", "zz"}) == "int:1");  // repeats count once
  CHECK(Run(c, {"HDEL", "h", "a"}) == "int:0");
  CHECK(Run(c, {"HDEL", "nokey", "a"}) == "int:0");
  CHECK(Run(c, {"HLEN", "h"}) == "int:2");
  CHECK(Run(c, {"HDEL", "h", "b", "c"}) == "int:2");
  CHECK(Run(c, {"EXISTS", "h"}) == "int:0");
  CHECK(Run(c, {"TYPE", "h"}) == "status:none");
  CHECK(Run(c, {"HGETALL", "h"}) == "[]");
  // It can come back as any type.
  CHECK(Run(c, {"SET", "h", "s"}) == "status:OK");
  CHECK(Run(c, {"GET", "h"}) == "bulk:s");
  CHECK(Run(c, {"HDEL", "h"}) == "err:ERR wrong number of arguments for 'hdel' command");
  CHECK(Run(c, {"HGETALL"}) == "err:ERR wrong number of arguments for 'hgetall' command");
}

TEST_CASE("HINCRBY and HINCRBYFLOAT", "[hash]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"HINCRBY", "h", "n", "5"}) == "int:5");
  CHECK(Run(c, {"HINCRBY", "h", "n", "-7"}) == "int:-2");
  CHECK(Run(c, {"HGET", "h", "n"}) == "bulk:-2");
  CHECK(Run(c, {"HINCRBY", "h", "n", "abc"}) == kNotInteger);
  CHECK(Run(c, {"HINCRBY", "h", "n", "1.5"}) == kNotInteger);
  CHECK(Run(c, {"HINCRBY", "h", "n", " 1"}) == kNotInteger);
  CHECK(Run(c, {"HSET", "h", "s", "x", "big", "9223372036854775807"}) == "int:2");
  CHECK(Run(c, {"HINCRBY", "h", "s", "1"}) == "err:ERR hash value is not an integer");
  CHECK(Run(c, {"HINCRBY", "h", "big", "1"}) == "err:ERR increment or decrement would overflow");
  CHECK(Run(c, {"HGET", "h", "big"}) == "bulk:9223372036854775807");

  CHECK(Run(c, {"HINCRBYFLOAT", "h", "f", "1.5"}) == "bulk:1.5");
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "f", "0.1"}) == "bulk:1.6");
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "f", "-1.6"}) == "bulk:0");
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "n", "2"}) == "bulk:0");  // the integer -2 + 2
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "e", "5.0e3"}) == "bulk:5000");
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "f", "abc"}) == "err:ERR value is not a valid float");
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "f", "nan"}) == "err:ERR value is not a valid float");
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "f", "inf"}) == "err:ERR value is NaN or Infinity");
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "f", "-inf"}) == "err:ERR value is NaN or Infinity");
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "s", "1"}) == "err:ERR hash value is not a float");
  CHECK(Run(c, {"HGET", "h", "f"}) == "bulk:0");
  CHECK(Run(c, {"HINCRBY", "h", "n"}) == "err:ERR wrong number of arguments for 'hincrby' command");
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "n"}) ==
        "err:ERR wrong number of arguments for 'hincrbyfloat' command");
  // An increment error is reported before the key's type is looked at, as Redis does.
  CHECK(Run(c, {"SET", "s", "v"}) == "status:OK");
  CHECK(Run(c, {"HINCRBY", "s", "f", "abc"}) == kNotInteger);
  CHECK(Run(c, {"HINCRBY", "s", "f", "1"}) == kWrongType);
  CHECK(Run(c, {"HINCRBYFLOAT", "s", "f", "x"}) == "err:ERR value is not a valid float");
  CHECK(Run(c, {"HINCRBYFLOAT", "s", "f", "1"}) == kWrongType);
}

TEST_CASE("HRANDFIELD with and without count and WITHVALUES", "[hash]") {
  TestServer server;
  Client c(server.port());
  RawConnection raw(server.port());
  CHECK(Run(c, {"HRANDFIELD", "h"}) == "nil");
  CHECK(RawReply(raw, {"HRANDFIELD", "h"}, "$-1\r\n") == "$-1\r\n");
  CHECK(RawReply(raw, {"HRANDFIELD", "h", "5"}, "*0\r\n") == "*0\r\n");
  CHECK(RawReply(raw, {"HRANDFIELD", "h", "-5", "WITHVALUES"}, "*0\r\n") == "*0\r\n");
  CHECK(Run(c, {"HSET", "h", "a", "1", "b", "2", "c", "3"}) == "int:3");
  std::set<std::string> fields = {"a", "b", "c"};
  std::map<std::string, std::string> all = {{"a", "1"}, {"b", "2"}, {"c", "3"}};
  for (int i = 0; i < 20; ++i) {
    Reply r = c.Command({"HRANDFIELD", "h"});
    REQUIRE(r.type == REDIS_REPLY_STRING);
    CHECK(fields.count(r.str) == 1);
  }
  CHECK(Run(c, {"HRANDFIELD", "h", "0"}) == "[]");
  Reply two = c.Command({"HRANDFIELD", "h", "2"});
  REQUIRE(two.elements.size() == 2);
  CHECK(two.elements[0].str != two.elements[1].str);  // a positive count: distinct fields
  CHECK(Sorted(c.Command({"HRANDFIELD", "h", "10"})) == std::vector<std::string>{"a", "b", "c"});
  Reply many = c.Command({"HRANDFIELD", "h", "-10"});  // a negative count: may repeat
  REQUIRE(many.elements.size() == 10);
  for (const auto& e : many.elements) CHECK(fields.count(e.str) == 1);
  CHECK(Pairs(c.Command({"HRANDFIELD", "h", "3", "WITHVALUES"})) == all);
  Reply pairs = c.Command({"HRANDFIELD", "h", "-7", "withvalues"});
  REQUIRE(pairs.elements.size() == 14);
  for (size_t i = 0; i < 14; i += 2) {
    CHECK(all.at(pairs.elements[i].str) == pairs.elements[i + 1].str);
  }

  CHECK(Run(c, {"HRANDFIELD", "h", "abc"}) == kNotInteger);
  CHECK(Run(c, {"HRANDFIELD", "h", "1", "foo"}) == kSyntax);
  CHECK(Run(c, {"HRANDFIELD", "h", "1", "WITHVALUES", "x"}) == kSyntax);
  CHECK(Run(c, {"HRANDFIELD", "h", "abc", "foo"}) == kNotInteger);  // count first
  CHECK(Run(c, {"HRANDFIELD", "h", "-9223372036854775808"}) ==
        "err:ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807");
  CHECK(Run(c, {"HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES"}) ==
        "err:ERR value is out of range");
}

TEST_CASE("HSCAN iterates every field", "[hash]") {
  TestServer server;
  Client c(server.port());
  std::vector<std::string> args = {"HSET", "h"};
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 1000; ++i) {  // more than Redis keeps in a listpack
    std::string f = "field:" + std::to_string(i);
    args.push_back(f);
    args.push_back("v" + std::to_string(i));
    expected[f] = "v" + std::to_string(i);
  }
  CHECK(Run(c, args) == "int:1000");
  std::map<std::string, std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    Reply r = c.Command({"HSCAN", "h", cursor, "COUNT", "25"});
    REQUIRE(r.type == REDIS_REPLY_ARRAY);
    REQUIRE(r.elements.size() == 2);
    cursor = r.elements[0].str;
    for (const auto& [f, v] : Pairs(r.elements[1])) seen[f] = v;
    REQUIRE(++calls < 1000);
  } while (cursor != "0");
  CHECK(seen == expected);
  CHECK(calls > 1);

  // MATCH filters fields; a small hash may come back in one call.
  seen.clear();
  cursor = "0";
  do {
    Reply r = c.Command({"HSCAN", "h", cursor, "MATCH", "field:1?", "COUNT", "1000"});
    cursor = r.elements[0].str;
    for (const auto& [f, v] : Pairs(r.elements[1])) seen[f] = v;
  } while (cursor != "0");
  CHECK(seen.size() == 10);
  CHECK(seen.count("field:17") == 1);

  CHECK(Run(c, {"HSCAN", "nokey", "0"}) == "[bulk:0, []]");
  CHECK(Run(c, {"HSCAN", "nokey", "0", "COUNT", "0"}) == "[bulk:0, []]");  // key first
  CHECK(Run(c, {"HSCAN", "h", "abc"}) == "err:ERR invalid cursor");
  CHECK(Run(c, {"HSCAN", "h", " 0"}) == "err:ERR invalid cursor");
  CHECK(Run(c, {"HSCAN", "h", "18446744073709551616"}) == "err:ERR invalid cursor");
  CHECK(Run(c, {"HSCAN", "h", "0", "COUNT", "0"}) == kSyntax);
  CHECK(Run(c, {"HSCAN", "h", "0", "COUNT", "abc"}) == kNotInteger);
  CHECK(Run(c, {"HSCAN", "h", "0", "MATCH"}) == kSyntax);
  CHECK(Run(c, {"HSCAN", "h", "0", "TYPE", "hash"}) == kSyntax);
  CHECK(Run(c, {"HSCAN", "h"}) == "err:ERR wrong number of arguments for 'hscan' command");
  CHECK(Run(c, {"HSET", "small", "", "empty", "x", "y"}) == "int:2");
  CHECK(Run(c, {"HSCAN", "small", "0", "MATCH", ""}) == "[bulk:0, [bulk:, bulk:empty]]");
}

TEST_CASE("hash commands against a string key reply WRONGTYPE", "[hash]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "s", "v"}) == "status:OK");
  const std::vector<std::vector<std::string>> commands = {
      {"HSET", "s", "f", "v"},
      {"HMSET", "s", "f", "v"},
      {"HSETNX", "s", "f", "v"},
      {"HGET", "s", "f"},
      {"HMGET", "s", "f"},
      {"HGETALL", "s"},
      {"HDEL", "s", "f"},
      {"HLEN", "s"},
      {"HEXISTS", "s", "f"},
      {"HKEYS", "s"},
      {"HVALS", "s"},
      {"HINCRBY", "s", "f", "1"},
      {"HINCRBYFLOAT", "s", "f", "1"},
      {"HSTRLEN", "s", "f"},
      {"HRANDFIELD", "s"},
      {"HRANDFIELD", "s", "2"},
      {"HSCAN", "s", "0"},
      {"HSCAN", "s", "0", "COUNT", "0"},
  };
  for (const auto& cmd : commands) {
    INFO(cmd[0]);
    CHECK(Run(c, cmd) == kWrongType);
  }
  CHECK(Run(c, {"GET", "s"}) == "bulk:v");
  // And the other way round: string commands against a hash.
  CHECK(Run(c, {"HSET", "h", "f", "v"}) == "int:1");
  CHECK(Run(c, {"GET", "h"}) == kWrongType);
  CHECK(Run(c, {"APPEND", "h", "x"}) == kWrongType);
  CHECK(Run(c, {"INCR", "h"}) == kWrongType);
  CHECK(Run(c, {"LPUSH", "h", "x"}) == kWrongType);
  CHECK(Run(c, {"SADD", "h", "x"}) == kWrongType);
  CHECK(Run(c, {"ZADD", "h", "1", "x"}) == kWrongType);
  CHECK(Run(c, {"SET", "h", "now a string"}) == "status:OK");  // SET replaces any type
  CHECK(Run(c, {"TYPE", "h"}) == "status:string");
  CHECK(Run(c, {"HGET", "h", "f"}) == kWrongType);
}

TEST_CASE("a hash keeps its TTL across HSET and survives a restart", "[hash]") {
  TestServer server;
  {
    Client c(server.port());
    CHECK(Run(c, {"HSET", "h", "a", "1"}) == "int:1");
    CHECK(Run(c, {"EXPIRE", "h", "1000"}) == "int:1");
    CHECK(Run(c, {"HSET", "h", "b", "2"}) == "int:1");
    CHECK(Run(c, {"HINCRBY", "h", "n", "1"}) == "int:1");
    Reply ttl = c.Command({"TTL", "h"});
    CHECK(ttl.integer > 990);
    CHECK(Run(c, {"HSET", "gone", "a", "1"}) == "int:1");
    CHECK(Run(c, {"PEXPIRE", "gone", "1"}) == "int:1");
  }
  server.Restart();
  Client c(server.port());
  CHECK(Pairs(c.Command({"HGETALL", "h"})) ==
        std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}, {"n", "1"}});
  CHECK(c.Command({"TTL", "h"}).integer > 900);
  CHECK(Run(c, {"HGETALL", "gone"}) == "[]");
  CHECK(Run(c, {"HLEN", "gone"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "gone"}) == "int:0");
}

}  // namespace hash_test
