// Streams: XADD (ids *, ms-*, ms-seq; NOMKSTREAM; MAXLEN/MINID with = and ~, LIMIT), XLEN,
// XRANGE/XREVRANGE (-, +, incomplete and exclusive ids, COUNT), XDEL, XTRIM, and the keyspace
// commands on a stream. Every expected reply and error was taken from redis-server 7.0.15 with
// the same commands, except `~` trimming, which trims exactly here (Redis may trim less).
#include <catch2/catch.hpp>
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
namespace stream_test {

namespace {

const char kInvalidId[] = "err:ERR Invalid stream ID specified as stream command argument";
const char kTooSmall[] =
    "err:ERR The ID specified in XADD is equal or smaller than the target stream top item";
const char kExhausted[] =
    "err:ERR The stream has exhausted the last possible ID, unable to add more items";
const char kMax[] = "18446744073709551615-18446744073709551615";

std::string Entry(const std::string& id, const std::string& fields) {
  return "[bulk:" + id + ", [" + fields + "]]";
}

}  // namespace

TEST_CASE("XADD ids and errors, as Redis 7.0", "[stream]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"XADD", "k", "0-*", "a", "1"}) == "bulk:0-1");
  CHECK(Run(c, {"XADD", "k", "0-*", "a", "1"}) == "bulk:0-2");
  CHECK(Run(c, {"XADD", "k", "5", "a", "1"}) == "bulk:5-0");
  CHECK(Run(c, {"XADD", "k", "5-*", "a", "b", "c"}) ==
        "err:ERR wrong number of arguments for 'xadd' command");
  CHECK(Run(c, {"XADD", "k", "1-0", "a", "1"}) == kTooSmall);
  CHECK(Run(c, {"XADD", "k", "5-0", "a", "1"}) == kTooSmall);
  CHECK(Run(c, {"XADD", "k", "0-0", "a", "1"}) ==
        "err:ERR The ID specified in XADD must be greater than 0-0");
  CHECK(Run(c, {"XADD", "k", "1-1x", "a", "b"}) == kInvalidId);
  CHECK(Run(c, {"XADD", "k", "-", "a", "b"}) == kInvalidId);
  CHECK(Run(c, {"XADD", "k", "+6", "a", "1"}) == "bulk:6-0");  // strtoull's rules, as Redis
  CHECK(Run(c, {"XADD", "k", " 7", "a", "1"}) == "bulk:7-0");
  CHECK(Run(c, {"XADD", "k", kMax, "a", "1"}) == std::string("bulk:") + kMax);
  CHECK(Run(c, {"XADD", "k", "*", "a", "1"}) == kExhausted);
  CHECK(Run(c, {"XADD", "k", "18446744073709551615-*", "a", "1"}) == kExhausted);
  CHECK(Run(c, {"XLEN", "k"}) == "int:6");
  // Options.
  CHECK(Run(c, {"XADD", "n", "NOMKSTREAM", "*", "a", "1"}) == "nil");
  CHECK(Run(c, {"EXISTS", "n"}) == "int:0");
  CHECK(Run(c, {"XADD", "n", "maxlen", "-1", "*", "a", "1"}) ==
        "err:ERR The MAXLEN argument must be >= 0.");
  CHECK(Run(c, {"XADD", "n", "maxlen", "x", "*", "a", "1"}) ==
        "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"XADD", "n", "maxlen", "1", "minid", "1", "*", "a", "1"}) ==
        "err:ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
  CHECK(Run(c, {"XADD", "n", "limit", "5", "*", "a", "1"}) ==
        "err:ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
  CHECK(Run(c, {"XADD", "n", "maxlen", "1", "limit", "5", "*", "a", "1"}) ==
        "err:ERR syntax error, LIMIT cannot be used without the special ~ option");
  CHECK(Run(c, {"XADD", "n", "limit", "0", "*", "a", "1"}) ==
        "err:ERR syntax error, LIMIT cannot be used without the special ~ option");
  CHECK(Run(c, {"XADD", "n", "maxlen", "~", "1", "limit", "-1", "*", "a", "1"}) ==
        "err:ERR The LIMIT argument must be >= 0.");
  CHECK(Run(c, {"XADD", "n", "maxlen", "2", "*", "a"}) ==
        "err:ERR wrong number of arguments for 'xadd' command");
  CHECK(Run(c, {"XADD", "n", "1-1", "nomkstream", "a", "b"}) ==
        "err:ERR wrong number of arguments for 'xadd' command");
  CHECK(Run(c, {"XADD", "n", "minid", "5-*", "*", "a", "b"}) == kInvalidId);
  CHECK(Run(c, {"EXISTS", "n"}) == "int:0");
  // MAXLEN 0 keeps an empty stream, with its last id.
  CHECK(Run(c, {"XADD", "e", "MAXLEN", "0", "3-3", "a", "1"}) == "bulk:3-3");
  CHECK(Run(c, {"XLEN", "e"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "e"}) == "int:1");
  CHECK(Run(c, {"TYPE", "e"}) == "status:stream");
  CHECK(Run(c, {"XRANGE", "e", "-", "+"}) == "[]");
  CHECK(Run(c, {"XADD", "e", "3-3", "a", "1"}) == kTooSmall);
  CHECK(Run(c, {"XADD", "e", "3-*", "a", "1"}) == "bulk:3-4");
  // Automatic ids grow.
  std::string a = c.Command({"XADD", "auto", "*", "f", "v"}).str;
  std::string b = c.Command({"XADD", "auto", "*", "f", "v"}).str;
  CHECK(a.size() >= 15);  // <ms>-<seq>, ms = now
  CHECK(a != b);
  CHECK(Run(c, {"XADD", "auto", a, "f", "v"}) == kTooSmall);
}

TEST_CASE("XRANGE / XREVRANGE: bounds, exclusive and incomplete ids, COUNT", "[stream]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"XADD", "k", "0-1", "a", "1"}) == "bulk:0-1");
  CHECK(Run(c, {"XADD", "k", "0-2", "b", "2", "c", "3"}) == "bulk:0-2");
  CHECK(Run(c, {"XADD", "k", "5-0", "d", ""}) == "bulk:5-0");
  const std::string e1 = Entry("0-1", "bulk:a, bulk:1");
  const std::string e2 = Entry("0-2", "bulk:b, bulk:2, bulk:c, bulk:3");
  const std::string e3 = Entry("5-0", "bulk:d, bulk:");
  CHECK(Run(c, {"XRANGE", "k", "-", "+"}) == "[" + e1 + ", " + e2 + ", " + e3 + "]");
  CHECK(Run(c, {"XREVRANGE", "k", "+", "-"}) == "[" + e3 + ", " + e2 + ", " + e1 + "]");
  CHECK(Run(c, {"XREVRANGE", "k", "+", "-", "COUNT", "1"}) == "[" + e3 + "]");
  CHECK(Run(c, {"XREVRANGE", "k", "-", "+"}) == "[]");
  CHECK(Run(c, {"XRANGE", "k", "5", "5"}) == "[" + e3 + "]");
  CHECK(Run(c, {"XRANGE", "k", "0", "0"}) == "[" + e1 + ", " + e2 + "]");
  CHECK(Run(c, {"XRANGE", "k", "(0-1", "(5-0"}) == "[" + e2 + "]");
  CHECK(Run(c, {"XRANGE", "k", "0-1", "0-2", "count", "1", "COUNT", "2"}) ==
        "[" + e1 + ", " + e2 + "]");
  CHECK(Run(c, {"XRANGE", "k", "-", "+", "COUNT", "0"}) == "nil");
  CHECK(Run(c, {"XRANGE", "k", "-", "+", "COUNT", "-5"}) == "nil");
  CHECK(Run(c, {"XRANGE", "nokey", "-", "+", "COUNT", "0"}) == "[]");
  CHECK(Run(c, {"XRANGE", "nokey", "-", "+"}) == "[]");
  CHECK(Run(c, {"XRANGE", "k", "-", "+", "COUNT"}) == "err:ERR syntax error");
  CHECK(Run(c, {"XRANGE", "k", "-", "+", "COUNT", "x"}) ==
        "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"XRANGE", "k", "(-", "+"}) == kInvalidId);
  CHECK(Run(c, {"XRANGE", "k", "(", "+"}) == kInvalidId);
  CHECK(Run(c, {"XRANGE", "k", "((1", "+"}) == kInvalidId);
  CHECK(Run(c, {"XRANGE", "k", "-1", "+"}) == kInvalidId);
  CHECK(Run(c, {"XRANGE", "k", "18446744073709551616", "+"}) == kInvalidId);
  CHECK(Run(c, {"XRANGE", "k", std::string("(") + kMax, "+"}) ==
        "err:ERR invalid start ID for the interval");
  CHECK(Run(c, {"XRANGE", "k", "-", "(0-0"}) == "err:ERR invalid end ID for the interval");
  CHECK(Run(c, {"XRANGE", "k", "-"}) == "err:ERR wrong number of arguments for 'xrange' command");
}

TEST_CASE("XDEL and XTRIM: counts, errors, trimming by MAXLEN and MINID", "[stream]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"XADD", "k", "1-1", "a", "1"}) == "bulk:1-1");
  CHECK(Run(c, {"XDEL", "k", "1-1", "1-1"}) == "int:1");
  CHECK(Run(c, {"XLEN", "k"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "k"}) == "int:1");
  CHECK(Run(c, {"XADD", "k", "1-1", "a", "1"}) == kTooSmall);
  CHECK(Run(c, {"XADD", "k", "1-*", "a", "1"}) == "bulk:1-2");
  CHECK(Run(c, {"XADD", "k", "5", "a", "1"}) == "bulk:5-0");
  CHECK(Run(c, {"XADD", "k", "7-8", "a", "1"}) == "bulk:7-8");
  CHECK(Run(c, {"XADD", "k", "8-*", "a", "1"}) == "bulk:8-0");
  CHECK(Run(c, {"XTRIM", "k", "MINID", "1-5"}) == "int:1");
  CHECK(Run(c, {"XTRIM", "k", "MAXLEN", "=", "1", "LIMIT", "0"}) ==
        "err:ERR syntax error, LIMIT cannot be used without the special ~ option");
  CHECK(Run(c, {"XTRIM", "k", "MAXLEN", "=", "1"}) == "int:2");
  CHECK(Run(c, {"XRANGE", "k", "-", "+"}) == "[" + Entry("8-0", "bulk:a, bulk:1") + "]");
  CHECK(Run(c, {"XADD", "k", "MINID", "100", "9-0", "f", "v"}) == "bulk:9-0");
  CHECK(Run(c, {"XLEN", "k"}) == "int:0");  // the new entry was below MINID too
  CHECK(Run(c, {"XTRIM", "k", "MAXLEN", "0"}) == "int:0");
  CHECK(Run(c, {"XTRIM", "nokey", "MAXLEN"}) ==
        "err:ERR wrong number of arguments for 'xtrim' command");
  CHECK(Run(c, {"XTRIM", "nokey", "foo", "1"}) == "err:ERR syntax error");
  CHECK(Run(c, {"XTRIM", "nokey", "MAXLEN", "1"}) == "int:0");
  CHECK(Run(c, {"XTRIM", "nokey", "LIMIT", "0", "MAXLEN", "1"}) ==
        "err:ERR syntax error, LIMIT cannot be used without the special ~ option");
  CHECK(Run(c, {"XDEL", "nokey", "bad"}) == "int:0");  // the key is looked up first
  for (int i = 1; i <= 10; ++i) {
    Run(c, {"XADD", "t", std::to_string(i), "f", std::to_string(i)});
  }
  CHECK(Run(c, {"XDEL", "t", "3-*"}) == kInvalidId);
  CHECK(Run(c, {"XDEL", "t", "+"}) == kInvalidId);
  CHECK(Run(c, {"XDEL", "t", "1", "10", "5", "11"}) == "int:3");
  CHECK(Run(c, {"XRANGE", "t", "-", "+", "COUNT", "1"}) ==
        "[" + Entry("2-0", "bulk:f, bulk:2") + "]");
  CHECK(Run(c, {"XREVRANGE", "t", "+", "-", "COUNT", "1"}) ==
        "[" + Entry("9-0", "bulk:f, bulk:9") + "]");
  CHECK(Run(c, {"XTRIM", "t", "MAXLEN", "~", "2", "LIMIT", "3"}) == "int:3");  // exact, <= LIMIT
  CHECK(Run(c, {"XTRIM", "t", "MAXLEN", "2"}) == "int:2");
  CHECK(Run(c, {"XRANGE", "t", "-", "+"}) ==
        "[" + Entry("8-0", "bulk:f, bulk:8") + ", " + Entry("9-0", "bulk:f, bulk:9") + "]");
  CHECK(Run(c, {"XTRIM", "t", "MINID", "9"}) == "int:1");
  CHECK(Run(c, {"XLEN", "t"}) == "int:1");
}

TEST_CASE("a stream in the keyspace: TYPE, WRONGTYPE both ways, TTL, RENAME, SCAN TYPE",
          "[stream]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "s", "1"}) == "status:OK");
  CHECK(Run(c, {"XADD", "s", "*", "a", "1"}) == kWrongType);
  CHECK(Run(c, {"XLEN", "s"}) == kWrongType);
  CHECK(Run(c, {"XRANGE", "s", "-", "+"}) == kWrongType);
  CHECK(Run(c, {"XRANGE", "s", "-", "+", "COUNT", "0"}) == kWrongType);
  CHECK(Run(c, {"XREVRANGE", "s", "+", "-"}) == kWrongType);
  CHECK(Run(c, {"XDEL", "s", "1-1"}) == kWrongType);
  CHECK(Run(c, {"XTRIM", "s", "MAXLEN", "1"}) == kWrongType);
  CHECK(Run(c, {"XTRIM", "s", "MAXLEN", "x"}) ==
        "err:ERR value is not an integer or out of range");  // parsed before the lookup
  CHECK(Run(c, {"XADD", "x", "1-1", "f", "v"}) == "bulk:1-1");
  CHECK(Run(c, {"TYPE", "x"}) == "status:stream");
  CHECK(Run(c, {"OBJECT", "ENCODING", "x"}) == "bulk:stream");
  CHECK(Run(c, {"GET", "x"}) == kWrongType);
  CHECK(Run(c, {"LPUSH", "x", "a"}) == kWrongType);
  CHECK(Run(c, {"HSET", "x", "a", "b"}) == kWrongType);
  CHECK(Run(c, {"SADD", "x", "a"}) == kWrongType);
  CHECK(Run(c, {"ZADD", "x", "1", "a"}) == kWrongType);
  CHECK(Run(c, {"EXPIRE", "x", "100"}) == "int:1");
  CHECK(Run(c, {"TTL", "x"}).rfind("int:", 0) == 0);
  CHECK(Run(c, {"RENAME", "x", "y"}) == "status:OK");
  const std::string ttl = Run(c, {"TTL", "y"});
  CHECK((ttl == "int:100" || ttl == "int:99"));
  CHECK(Run(c, {"XRANGE", "y", "-", "+"}) == "[" + Entry("1-1", "bulk:f, bulk:v") + "]");
  CHECK(Run(c, {"XADD", "y", "1-1", "f", "v"}) == kTooSmall);  // the last id came along
  CHECK(Run(c, {"XADD", "z", "2-2", "f", "v"}) == "bulk:2-2");
  CHECK(Run(c, {"SCAN", "0", "TYPE", "stream"}) == "[bulk:0, [bulk:y, bulk:z]]");
  CHECK(Run(c, {"SCAN", "0", "TYPE", "string"}) == "[bulk:0, [bulk:s]]");
  // COPY and MOVE (another database) take the entries and the last id along.
  CHECK(Run(c, {"COPY", "z", "z2"}) == "int:1");
  CHECK(Run(c, {"XADD", "z2", "2-2", "f", "v"}) == kTooSmall);
  CHECK(Run(c, {"MOVE", "z2", "1"}) == "int:1");
  CHECK(Run(c, {"SELECT", "1"}) == "status:OK");
  CHECK(Run(c, {"XRANGE", "z2", "-", "+"}) == "[" + Entry("2-2", "bulk:f, bulk:v") + "]");
  CHECK(Run(c, {"TYPE", "z2"}) == "status:stream");
  CHECK(Run(c, {"SELECT", "0"}) == "status:OK");
  CHECK(Run(c, {"EXISTS", "z2"}) == "int:0");
  CHECK(Run(c, {"DEL", "y", "z"}) == "int:2");
  CHECK(Run(c, {"EXISTS", "y"}) == "int:0");
  CHECK(Run(c, {"XLEN", "y"}) == "int:0");
  // A key written over by SET loses its stream.
  CHECK(Run(c, {"XADD", "w", "1-1", "f", "v"}) == "bulk:1-1");
  CHECK(Run(c, {"SET", "w", "str"}) == "status:OK");
  CHECK(Run(c, {"XADD", "w", "*", "f", "v"}) == kWrongType);
  CHECK(Run(c, {"DEL", "w"}) == "int:1");
  CHECK(Run(c, {"XADD", "w", "1-1", "f", "v"}) == "bulk:1-1");  // a fresh stream: last id gone
}

TEST_CASE("streams survive a restart", "[stream]") {
  TestServer server;
  {
    Client c(server.port());
    CHECK(Run(c, {"XADD", "k", "MAXLEN", "2", "1-1", "a", "1"}) == "bulk:1-1");
    CHECK(Run(c, {"XADD", "k", "MAXLEN", "2", "2-1", "a", "2"}) == "bulk:2-1");
    CHECK(Run(c, {"XADD", "k", "MAXLEN", "2", "3-1", "a", "3"}) == "bulk:3-1");
  }
  server.Restart();
  Client c(server.port());
  CHECK(Run(c, {"XRANGE", "k", "-", "+"}) ==
        "[" + Entry("2-1", "bulk:a, bulk:2") + ", " + Entry("3-1", "bulk:a, bulk:3") + "]");
  CHECK(Run(c, {"XADD", "k", "3-1", "a", "1"}) == kTooSmall);
}

TEST_CASE("stream keyspace events (class t): xadd, xtrim, xdel, as Redis 7.0", "[stream][notify]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "Et"}) == "status:OK");
  Client sub(server.port());
  sub.Append({"PSUBSCRIBE", "__keyevent@0__:*"});
  rockcache::testing::Reply r;
  REQUIRE(sub.GetReply(&r));
  CHECK(rockcache::testing::Describe(r) == "[bulk:psubscribe, bulk:__keyevent@0__:*, int:1]");
  CHECK(Run(c, {"XADD", "k", "1-1", "a", "1"}) == "bulk:1-1");
  CHECK(Run(c, {"XADD", "k", "MAXLEN", "1", "2-1", "a", "1"}) == "bulk:2-1");
  CHECK(Run(c, {"XDEL", "k", "9-9"}) == "int:0");  // nothing deleted: no event
  CHECK(Run(c, {"XDEL", "k", "2-1"}) == "int:1");
  CHECK(Run(c, {"XTRIM", "k", "MAXLEN", "0"}) == "int:0");  // nothing trimmed: no event
  CHECK(Run(c, {"XADD", "k", "3-1", "a", "1"}) == "bulk:3-1");
  CHECK(Run(c, {"XTRIM", "k", "MAXLEN", "0"}) == "int:1");
  for (const char* event : {"xadd", "xadd", "xtrim", "xdel", "xadd", "xtrim"}) {
    REQUIRE(sub.GetReply(&r));
    CHECK(rockcache::testing::Describe(r) == std::string("[bulk:pmessage, bulk:__keyevent@0__:*, "
                                                         "bulk:__keyevent@0__:") +
                                                 event + ", bulk:k]");
  }
}

}  // namespace stream_test
