// SORT and SORT_RO with Redis 7.0 semantics and errors (expected values taken from
// redis-server 7.0): numeric and ALPHA order, ASC/DESC, LIMIT, BY (weights, hash fields, a
// constant pattern), GET (#, keys, hash fields, missing keys), STORE into a list, lists, sets
// and sorted sets, WRONGTYPE and the conversion error.
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
namespace sort_test {

namespace {

void Fill(Client& c) {
  REQUIRE(Run(c, {"RPUSH", "l", "3", "1", "2", "10"}) == "int:4");
  REQUIRE(Run(c, {"MSET", "w_1", "40", "w_2", "30", "w_3", "20", "w_10", "10"}) == "status:OK");
  REQUIRE(Run(c, {"HSET", "h_1", "name", "one"}) == "int:1");
  REQUIRE(Run(c, {"HSET", "h_2", "name", "two"}) == "int:1");
  REQUIRE(Run(c, {"HSET", "h_3", "name", "three"}) == "int:1");
}

}  // namespace

TEST_CASE("SORT: numeric, ALPHA, DESC, LIMIT", "[sort]") {
  TestServer server;
  Client c(server.port());
  Fill(c);
  CHECK(Run(c, {"SORT", "l"}) == "[bulk:1, bulk:2, bulk:3, bulk:10]");
  CHECK(Run(c, {"SORT", "l", "DESC"}) == "[bulk:10, bulk:3, bulk:2, bulk:1]");
  CHECK(Run(c, {"SORT", "l", "ALPHA"}) == "[bulk:1, bulk:10, bulk:2, bulk:3]");
  CHECK(Run(c, {"SORT", "l", "LIMIT", "1", "2"}) == "[bulk:2, bulk:3]");
  CHECK(Run(c, {"SORT", "l", "LIMIT", "10", "2"}) == "[]");
  CHECK(Run(c, {"SORT_RO", "l", "LIMIT", "0", "1", "DESC"}) == "[bulk:10]");
  CHECK(Run(c, {"SORT", "nokey"}) == "[]");
  CHECK(Run(c, {"SADD", "s", "5", "3", "9"}) == "int:3");
  CHECK(Run(c, {"SORT", "s", "DESC"}) == "[bulk:9, bulk:5, bulk:3]");
  CHECK(Run(c, {"ZADD", "z", "3", "a", "1", "b", "2", "c"}) == "int:3");
  CHECK(Run(c, {"SORT", "z", "ALPHA"}) == "[bulk:a, bulk:b, bulk:c]");
}

TEST_CASE("SORT BY: weights, hash fields, constant patterns", "[sort]") {
  TestServer server;
  Client c(server.port());
  Fill(c);
  CHECK(Run(c, {"SORT", "l", "BY", "w_*"}) == "[bulk:10, bulk:3, bulk:2, bulk:1]");
  CHECK(Run(c, {"SORT", "l", "BY", "w_*", "LIMIT", "1", "1"}) == "[bulk:3]");
  CHECK(Run(c, {"SORT", "l", "BY", "nosort", "DESC"}) == "[bulk:10, bulk:2, bulk:1, bulk:3]");
  CHECK(Run(c, {"ZADD", "z", "3", "a", "1", "b", "2", "c"}) == "int:3");
  CHECK(Run(c, {"SORT", "z", "BY", "nosort"}) == "[bulk:b, bulk:c, bulk:a]");
  CHECK(Run(c, {"SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "2"}) == "[bulk:a, bulk:c]");
  // Missing weights sort first with ALPHA; "->" reads a hash field.
  CHECK(Run(c, {"SORT", "l", "BY", "h_*->name", "ALPHA", "GET", "h_*->name", "GET", "#"}) ==
        "[nil, bulk:10, bulk:one, bulk:1, bulk:three, bulk:3, bulk:two, bulk:2]");
}

TEST_CASE("SORT GET and STORE", "[sort]") {
  TestServer server;
  Client c(server.port());
  Fill(c);
  CHECK(Run(c, {"SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*"}) ==
        "[bulk:10, bulk:10, bulk:3, bulk:20, bulk:2, bulk:30, bulk:1, bulk:40]");
  CHECK(Run(c, {"SORT", "l", "GET", "nokey_*", "GET", "#"}) ==
        "[nil, bulk:1, nil, bulk:2, nil, bulk:3, nil, bulk:10]");
  CHECK(Run(c, {"SORT", "l", "STORE", "out"}) == "int:4");
  CHECK(Run(c, {"LRANGE", "out", "0", "-1"}) == "[bulk:1, bulk:2, bulk:3, bulk:10]");
  // A missing GET value is stored as an empty string.
  CHECK(Run(c, {"SORT", "l", "BY", "w_*", "GET", "h_*->name", "STORE", "out"}) == "int:4");
  CHECK(Run(c, {"LRANGE", "out", "0", "-1"}) == "[bulk:, bulk:three, bulk:two, bulk:one]");
  CHECK(Run(c, {"SORT", "l", "LIMIT", "0", "0", "STORE", "out"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "out"}) == "int:0");
  CHECK(Run(c, {"SET", "out", "a string"}) == "status:OK");
  CHECK(Run(c, {"SORT", "l", "STORE", "out"}) == "int:4");  // replaces any type
  CHECK(Run(c, {"TYPE", "out"}) == "status:list");
  CHECK(Run(c, {"SORT", "nokey", "STORE", "out"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "out"}) == "int:0");
  CHECK(Run(c, {"SADD", "s", "b", "a", "c"}) == "int:3");
  CHECK(Run(c, {"SORT", "s", "BY", "nosort", "STORE", "out"}) == "int:3");  // sorted ALPHA
  CHECK(Run(c, {"LRANGE", "out", "0", "-1"}) == "[bulk:a, bulk:b, bulk:c]");
}

TEST_CASE("SORT errors", "[sort]") {
  TestServer server;
  Client c(server.port());
  Fill(c);
  CHECK(Run(c, {"RPUSH", "bad", "1", "x"}) == "int:2");
  CHECK(Run(c, {"SORT", "bad"}) == "err:ERR One or more scores can't be converted into double");
  CHECK(Run(c, {"SORT", "bad", "ALPHA"}) == "[bulk:1, bulk:x]");
  CHECK(Run(c, {"SET", "str", "v"}) == "status:OK");
  CHECK(Run(c, {"SORT", "str"}) == kWrongType);
  CHECK(Run(c, {"SORT", "l", "LIMIT", "x", "1"}) ==
        "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"SORT", "l", "LIMIT", "1"}) == "err:ERR syntax error");
  CHECK(Run(c, {"SORT", "l", "foo"}) == "err:ERR syntax error");
  CHECK(Run(c, {"SORT_RO", "l", "STORE", "out"}) == "err:ERR syntax error");
  CHECK(Run(c, {"SORT"}) == "err:ERR wrong number of arguments for 'sort' command");
}

}  // namespace sort_test
