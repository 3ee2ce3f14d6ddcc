// Keyspace commands with Redis 7 semantics (checked against redis-server 7.0): DEL, UNLINK,
// EXISTS, EXPIRE family with NX/XX/GT/LT, TTL/PTTL, EXPIRETIME/PEXPIRETIME, PERSIST, TYPE, KEYS,
// SCAN (COUNT, MATCH, TYPE, cursors), DBSIZE.
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
using rockcache::testing::NowMs;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace keyspace_test {

namespace {

const char kNxXxGtLt[] = "err:ERR NX and XX, GT or LT options at the same time are not compatible";
const char kGtLt[] = "err:ERR GT and LT options at the same time are not compatible";

long long Int(Client& c, const std::vector<std::string>& args) {
  Reply r = c.Command(args);
  INFO(args[0] << " -> " << Describe(r));
  REQUIRE(r.type == REDIS_REPLY_INTEGER);
  return r.integer;
}

// KEYS reply, sorted (Redis returns keys in no particular order).
std::vector<std::string> SortedKeys(Client& c, const std::string& pattern) {
  Reply r = c.Command({"KEYS", pattern});
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  std::vector<std::string> keys;
  for (const auto& e : r.elements) {
    REQUIRE(e.type == REDIS_REPLY_STRING);
    keys.push_back(e.str);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

struct ScanResult {
  std::multiset<std::string> keys;  // every key returned, duplicates included
  int calls = 0;
  size_t max_batch = 0;
};

// A full SCAN iteration with extra options (e.g. {"COUNT", "7"}).
ScanResult FullScan(Client& c, const std::vector<std::string>& options) {
  ScanResult result;
  std::string cursor = "0";
  do {
    std::vector<std::string> args = {"SCAN", cursor};
    args.insert(args.end(), options.begin(), options.end());
    Reply r = c.Command(args);
    INFO(Describe(r).substr(0, 300));
    REQUIRE(r.type == REDIS_REPLY_ARRAY);
    REQUIRE(r.elements.size() == 2);
    REQUIRE(r.elements[0].type == REDIS_REPLY_STRING);
    REQUIRE(r.elements[1].type == REDIS_REPLY_ARRAY);
    cursor = r.elements[0].str;
    for (const auto& e : r.elements[1].elements) result.keys.insert(e.str);
    result.max_batch = std::max(result.max_batch, r.elements[1].elements.size());
    ++result.calls;
    REQUIRE(result.calls < 100000);
  } while (cursor != "0");
  return result;
}

std::set<std::string> Distinct(const std::multiset<std::string>& keys) {
  return std::set<std::string>(keys.begin(), keys.end());
}

}  // namespace

TEST_CASE("DEL, UNLINK and EXISTS count keys", "[keyspace]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"MSET", "a", "1", "b", "2", "c", "3", "d", "4"}) == "status:OK");
  CHECK(Run(c, {"EXISTS", "a"}) == "int:1");
  CHECK(Run(c, {"EXISTS", "a", "a", "nokey", "a"}) == "int:3");  // repeats count each time
  CHECK(Run(c, {"EXISTS", "a", "b", "c", "d"}) == "int:4");
  CHECK(Run(c, {"EXISTS", "nokey"}) == "int:0");
  CHECK(Run(c, {"DEL", "a", "b", "b", "nokey"}) == "int:2");  // repeats count once
  CHECK(Run(c, {"EXISTS", "a", "b"}) == "int:0");
  CHECK(Run(c, {"DEL", "a"}) == "int:0");
  CHECK(Run(c, {"UNLINK", "c", "c", "nokey"}) == "int:1");
  CHECK(Run(c, {"GET", "c"}) == "nil");
  CHECK(Run(c, {"UNLINK", "d"}) == "int:1");
  CHECK(Run(c, {"DBSIZE"}) == "int:0");
  CHECK(Run(c, {"DEL"}) == "err:ERR wrong number of arguments for 'del' command");
  CHECK(Run(c, {"UNLINK"}) == "err:ERR wrong number of arguments for 'unlink' command");
  CHECK(Run(c, {"EXISTS"}) == "err:ERR wrong number of arguments for 'exists' command");
  // A deleted key can be set again, without its old TTL.
  CHECK(Run(c, {"SET", "t", "1", "EX", "100"}) == "status:OK");
  CHECK(Run(c, {"DEL", "t"}) == "int:1");
  CHECK(Run(c, {"SET", "t", "2"}) == "status:OK");
  CHECK(Run(c, {"TTL", "t"}) == "int:-1");
  CHECK(Run(c, {"GET", "t"}) == "bulk:2");
}

TEST_CASE("EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT and TTL", "[keyspace]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"EXPIRE", "nokey", "100"}) == "int:0");
  CHECK(Run(c, {"PEXPIRE", "nokey", "100"}) == "int:0");
  CHECK(Run(c, {"EXPIREAT", "nokey", "99999999999"}) == "int:0");
  CHECK(Run(c, {"PEXPIREAT", "nokey", "99999999999000"}) == "int:0");
  CHECK(Run(c, {"TTL", "nokey"}) == "int:-2");
  CHECK(Run(c, {"PTTL", "nokey"}) == "int:-2");
  CHECK(Run(c, {"EXISTS", "nokey"}) == "int:0");

  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"TTL", "a"}) == "int:-1");
  CHECK(Run(c, {"PTTL", "a"}) == "int:-1");
  CHECK(Run(c, {"EXPIRE", "a", "100"}) == "int:1");
  CHECK(Run(c, {"TTL", "a"}) == "int:100");
  long long pttl = Int(c, {"PTTL", "a"});
  CHECK(pttl > 99000);
  CHECK(pttl <= 100000);
  CHECK(Run(c, {"PEXPIRE", "a", "50700"}) == "int:1");
  CHECK(Run(c, {"TTL", "a"}) == "int:51");  // TTL rounds to the nearest second
  pttl = Int(c, {"PTTL", "a"});
  CHECK(pttl > 49500);
  CHECK(pttl <= 50700);

  long long at_s = NowMs() / 1000 + 1000;
  CHECK(Run(c, {"EXPIREAT", "a", std::to_string(at_s)}) == "int:1");
  CHECK(Run(c, {"EXPIRETIME", "a"}) == "int:" + std::to_string(at_s));
  CHECK(Run(c, {"PEXPIRETIME", "a"}) == "int:" + std::to_string(at_s * 1000));
  long long ttl = Int(c, {"TTL", "a"});
  CHECK(ttl >= 998);
  CHECK(ttl <= 1000);
  long long at_ms = NowMs() + 2000123;
  CHECK(Run(c, {"PEXPIREAT", "a", std::to_string(at_ms)}) == "int:1");
  CHECK(Run(c, {"PEXPIRETIME", "a"}) == "int:" + std::to_string(at_ms));
  CHECK(Run(c, {"EXPIRETIME", "a"}) == "int:" + std::to_string(at_ms / 1000));
  CHECK(Run(c, {"GET", "a"}) == "bulk:1");  // the value is untouched

  CHECK(Run(c, {"EXPIRE", "a", "abc"}) == kNotInteger);
  CHECK(Run(c, {"EXPIRE", "a"}) == "err:ERR wrong number of arguments for 'expire' command");
  CHECK(Run(c, {"EXPIRE", "a", "100", "foo"}) == "err:ERR Unsupported option foo");
  CHECK(Run(c, {"EXPIRE", "a", "9223372036854775807"}) ==
        "err:ERR invalid expire time in 'expire' command");
  CHECK(Run(c, {"PEXPIRE", "a", "9223372036854775807"}) ==
        "err:ERR invalid expire time in 'pexpire' command");
  CHECK(Run(c, {"EXPIREAT", "a", "9223372036854775807"}) ==
        "err:ERR invalid expire time in 'expireat' command");
  CHECK(Run(c, {"PEXPIRETIME", "a"}) == "int:" + std::to_string(at_ms));  // errors changed nothing
  CHECK(Run(c, {"TTL"}) == "err:ERR wrong number of arguments for 'ttl' command");
}

TEST_CASE("EXPIRE with a past or non-positive time deletes the key", "[keyspace]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"MSET", "a", "1", "b", "1", "c", "1", "d", "1", "e", "1"}) == "status:OK");
  CHECK(Run(c, {"EXPIREAT", "a", "1"}) == "int:1");
  CHECK(Run(c, {"EXISTS", "a"}) == "int:0");
  CHECK(Run(c, {"GET", "a"}) == "nil");
  CHECK(Run(c, {"TTL", "a"}) == "int:-2");
  CHECK(Run(c, {"PEXPIREAT", "b", "1"}) == "int:1");
  CHECK(Run(c, {"GET", "b"}) == "nil");
  CHECK(Run(c, {"EXPIRE", "c", "0"}) == "int:1");
  CHECK(Run(c, {"EXISTS", "c"}) == "int:0");
  CHECK(Run(c, {"EXPIRE", "d", "-5"}) == "int:1");
  CHECK(Run(c, {"EXISTS", "d"}) == "int:0");
  CHECK(Run(c, {"PEXPIRE", "e", "-5"}) == "int:1");
  CHECK(Run(c, {"TYPE", "e"}) == "status:none");
  CHECK(Run(c, {"DBSIZE"}) == "int:0");
  CHECK(SortedKeys(c, "*").empty());
  // Deleted for good, also after a restart.
  server.Restart();
  Client c2(server.port());
  CHECK(Run(c2, {"EXISTS", "a", "b", "c", "d", "e"}) == "int:0");
  CHECK(Run(c2, {"DBSIZE"}) == "int:0");
}

TEST_CASE("EXPIRE NX, XX, GT, LT", "[keyspace]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"EXPIRE", "a", "100", "NX", "XX"}) == kNxXxGtLt);
  CHECK(Run(c, {"EXPIRE", "a", "100", "NX", "GT"}) == kNxXxGtLt);
  CHECK(Run(c, {"EXPIRE", "a", "100", "NX", "LT"}) == kNxXxGtLt);
  CHECK(Run(c, {"EXPIRE", "a", "100", "GT", "LT"}) == kGtLt);
  CHECK(Run(c, {"PEXPIRE", "a", "100", "gt", "lt"}) == kGtLt);
  CHECK(Run(c, {"EXPIREAT", "a", "99999999999", "xx", "nx"}) == kNxXxGtLt);
  CHECK(Run(c, {"TTL", "a"}) == "int:-1");

  // No TTL yet: XX and GT refuse (no TTL counts as infinite), NX and LT set.
  CHECK(Run(c, {"EXPIRE", "a", "100", "XX"}) == "int:0");
  CHECK(Run(c, {"EXPIRE", "a", "100", "GT"}) == "int:0");
  CHECK(Run(c, {"TTL", "a"}) == "int:-1");
  CHECK(Run(c, {"EXPIRE", "a", "100", "NX"}) == "int:1");
  CHECK(Run(c, {"TTL", "a"}) == "int:100");
  CHECK(Run(c, {"EXPIRE", "a", "200", "NX"}) == "int:0");
  CHECK(Run(c, {"TTL", "a"}) == "int:100");
  CHECK(Run(c, {"EXPIRE", "a", "50", "GT"}) == "int:0");
  CHECK(Run(c, {"EXPIRE", "a", "200", "GT"}) == "int:1");
  CHECK(Run(c, {"TTL", "a"}) == "int:200");
  CHECK(Run(c, {"EXPIRE", "a", "300", "LT"}) == "int:0");
  CHECK(Run(c, {"EXPIRE", "a", "100", "LT"}) == "int:1");
  CHECK(Run(c, {"TTL", "a"}) == "int:100");
  CHECK(Run(c, {"EXPIRE", "a", "150", "XX"}) == "int:1");
  CHECK(Run(c, {"TTL", "a"}) == "int:150");
  CHECK(Run(c, {"PEXPIRE", "a", "200000", "XX", "GT"}) == "int:1");
  CHECK(Run(c, {"TTL", "a"}) == "int:200");
  CHECK(Run(c, {"PEXPIRE", "a", "100000", "XX", "GT"}) == "int:0");
  CHECK(Run(c, {"TTL", "a"}) == "int:200");
  long long at_s = NowMs() / 1000 + 5000;
  CHECK(Run(c, {"EXPIREAT", "a", std::to_string(at_s), "LT"}) == "int:0");
  CHECK(Run(c, {"EXPIREAT", "a", std::to_string(at_s), "GT"}) == "int:1");
  CHECK(Run(c, {"EXPIRETIME", "a"}) == "int:" + std::to_string(at_s));
  CHECK(Run(c, {"PEXPIREAT", "a", std::to_string(at_s * 1000 - 1000), "LT"}) == "int:1");
  CHECK(Run(c, {"EXPIRETIME", "a"}) == "int:" + std::to_string(at_s - 1));
  // Repeating the same flag is accepted.
  CHECK(Run(c, {"EXPIRE", "a", "100", "NX", "NX"}) == "int:0");

  // PERSIST, then LT on a key without TTL sets it.
  CHECK(Run(c, {"PERSIST", "a"}) == "int:1");
  CHECK(Run(c, {"EXPIRE", "a", "100", "LT"}) == "int:1");
  CHECK(Run(c, {"TTL", "a"}) == "int:100");
  CHECK(Run(c, {"EXPIRE", "nokey", "100", "NX"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "nokey"}) == "int:0");
  // A past time with a flag that lets it through still deletes.
  CHECK(Run(c, {"EXPIRE", "a", "-1", "LT"}) == "int:1");
  CHECK(Run(c, {"EXISTS", "a"}) == "int:0");
}

TEST_CASE("EXPIRETIME, PEXPIRETIME and PERSIST", "[keyspace]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"EXPIRETIME", "nokey"}) == "int:-2");
  CHECK(Run(c, {"PEXPIRETIME", "nokey"}) == "int:-2");
  CHECK(Run(c, {"PERSIST", "nokey"}) == "int:0");
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"EXPIRETIME", "a"}) == "int:-1");
  CHECK(Run(c, {"PEXPIRETIME", "a"}) == "int:-1");
  CHECK(Run(c, {"PERSIST", "a"}) == "int:0");
  CHECK(Run(c, {"EXPIREAT", "a", "99999999999"}) == "int:1");
  CHECK(Run(c, {"EXPIRETIME", "a"}) == "int:99999999999");
  CHECK(Run(c, {"PEXPIRETIME", "a"}) == "int:99999999999000");
  CHECK(Run(c, {"PEXPIREAT", "a", "99999999999123"}) == "int:1");
  CHECK(Run(c, {"PEXPIRETIME", "a"}) == "int:99999999999123");
  CHECK(Run(c, {"EXPIRETIME", "a"}) == "int:99999999999");
  CHECK(Run(c, {"PERSIST", "a"}) == "int:1");
  CHECK(Run(c, {"PERSIST", "a"}) == "int:0");
  CHECK(Run(c, {"EXPIRETIME", "a"}) == "int:-1");
  CHECK(Run(c, {"TTL", "a"}) == "int:-1");
  CHECK(Run(c, {"GET", "a"}) == "bulk:1");
  // PERSIST survives a restart (the TTL must not come back).
  CHECK(Run(c, {"SET", "b", "2", "PX", "500"}) == "status:OK");
  CHECK(Run(c, {"PERSIST", "b"}) == "int:1");
  CHECK(Run(c, {"SET", "ttl", "3", "EX", "1000"}) == "status:OK");
  server.Restart();
  SleepMs(600);
  Client c2(server.port());
  CHECK(Run(c2, {"GET", "b"}) == "bulk:2");
  CHECK(Run(c2, {"TTL", "b"}) == "int:-1");
  long long ttl = Int(c2, {"TTL", "ttl"});
  CHECK(ttl > 990);
  CHECK(ttl <= 1000);
  CHECK(Run(c2, {"PERSIST"}) == "err:ERR wrong number of arguments for 'persist' command");
}

TEST_CASE("TYPE", "[keyspace]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"TYPE", "nokey"}) == "status:none");
  CHECK(Run(c, {"SET", "s", "1"}) == "status:OK");
  CHECK(Run(c, {"TYPE", "s"}) == "status:string");
  CHECK(Run(c, {"INCR", "n"}) == "int:1");
  CHECK(Run(c, {"TYPE", "n"}) == "status:string");
  CHECK(Run(c, {"DEL", "s"}) == "int:1");
  CHECK(Run(c, {"TYPE", "s"}) == "status:none");
  CHECK(Run(c, {"TYPE"}) == "err:ERR wrong number of arguments for 'type' command");
}

TEST_CASE("KEYS with glob patterns", "[keyspace]") {
  TestServer server;
  Client c(server.port());
  CHECK(SortedKeys(c, "*").empty());
  for (const char* k : {"user:1", "user:2", "user:10", "apple", "banana", "cherry", "a", "u?"}) {
    REQUIRE(Run(c, {"SET", k, "x"}) == "status:OK");
  }
  using V = std::vector<std::string>;
  CHECK(SortedKeys(c, "*") ==
        V{"a", "apple", "banana", "cherry", "u?", "user:1", "user:10", "user:2"});
  CHECK(SortedKeys(c, "user:?") == V{"user:1", "user:2"});
  CHECK(SortedKeys(c, "user:*") == V{"user:1", "user:10", "user:2"});
  CHECK(SortedKeys(c, "[ab]*") == V{"a", "apple", "banana"});
  CHECK(SortedKeys(c, "*an*") == V{"banana"});
  CHECK(SortedKeys(c, "user:[!1]") == V{"user:1"});  // Redis negates with ^ only, ! is literal
  CHECK(SortedKeys(c, "user:[^1]") == V{"user:2"});
  CHECK(SortedKeys(c, "user:[0-9]0") == V{"user:10"});
  CHECK(SortedKeys(c, "u\\?") == V{"u?"});
  CHECK(SortedKeys(c, "APPLE").empty());
  CHECK(SortedKeys(c, "apple") == V{"apple"});
  CHECK(SortedKeys(c, "nomatch*").empty());
  CHECK(Run(c, {"KEYS"}) == "err:ERR wrong number of arguments for 'keys' command");
  // Expired keys are not listed.
  CHECK(Run(c, {"PEXPIRE", "apple", "50"}) == "int:1");
  SleepMs(200);
  CHECK(SortedKeys(c, "a*") == V{"a"});
}

TEST_CASE("SCAN iterates every key", "[keyspace]") {
  TestServer server;
  Client c(server.port());
  std::set<std::string> expected;
  for (int i = 0; i < 1000; ++i) {
    std::string key = "key:" + std::to_string(i);
    c.Append({"SET", key, "v"});
    expected.insert(key);
  }
  for (int i = 0; i < 1000; ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
    REQUIRE(Describe(r) == "status:OK");
  }
  CHECK(Run(c, {"DBSIZE"}) == "int:1000");

  ScanResult all = FullScan(c, {"COUNT", "7"});
  CHECK(Distinct(all.keys) == expected);
  INFO("duplicates: " << all.keys.size() - Distinct(all.keys).size());
  CHECK(all.keys.size() < 2 * expected.size());
  CHECK(all.calls >= 50);  // COUNT 7 is honoured roughly: not everything in one reply
  CHECK(all.max_batch <= 100);

  ScanResult defaults = FullScan(c, {});
  CHECK(Distinct(defaults.keys) == expected);

  // MATCH filters; TYPE string keeps all of them, another type none.
  ScanResult matched = FullScan(c, {"MATCH", "key:1?", "COUNT", "50"});
  std::set<std::string> expected_match;
  for (int i = 10; i < 20; ++i) expected_match.insert("key:" + std::to_string(i));
  CHECK(Distinct(matched.keys) == expected_match);
  ScanResult strings = FullScan(c, {"TYPE", "string", "COUNT", "100"});
  CHECK(Distinct(strings.keys) == expected);
  ScanResult hashes = FullScan(c, {"TYPE", "hash"});
  CHECK(hashes.keys.empty());
  ScanResult both = FullScan(c, {"match", "key:99*", "type", "STRING", "count", "1000"});
  CHECK(Distinct(both.keys) == std::set<std::string>{"key:99", "key:990", "key:991", "key:992",
                                                     "key:993", "key:994", "key:995", "key:996",
                                                     "key:997", "key:998", "key:999"});

  // Keys deleted or expired before the scan are not returned.
  CHECK(Run(c, {"DEL", "key:0", "key:1"}) == "int:2");
  CHECK(Run(c, {"PEXPIRE", "key:2", "20"}) == "int:1");
  SleepMs(100);
  ScanResult after = FullScan(c, {"COUNT", "200"});
  expected.erase("key:0");
  expected.erase("key:1");
  expected.erase("key:2");
  CHECK(Distinct(after.keys) == expected);
}

TEST_CASE("SCAN argument errors", "[keyspace]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"SCAN", "0"}) == "[bulk:0, [bulk:a]]");
  for (const char* bad : {"abc", "1.5", " 1", "-", "18446744073709551616"}) {
    INFO("cursor '" << bad << "'");
    CHECK(Run(c, {"SCAN", bad}) == "err:ERR invalid cursor");
  }
  CHECK(Run(c, {"SCAN", "0", "COUNT", "0"}) == "err:ERR syntax error");
  CHECK(Run(c, {"SCAN", "0", "COUNT", "-1"}) == "err:ERR syntax error");
  CHECK(Run(c, {"SCAN", "0", "COUNT", "abc"}) == kNotInteger);
  CHECK(Run(c, {"SCAN", "0", "COUNT"}) == "err:ERR syntax error");
  CHECK(Run(c, {"SCAN", "0", "MATCH"}) == "err:ERR syntax error");
  CHECK(Run(c, {"SCAN", "0", "foo"}) == "err:ERR syntax error");
  CHECK(Run(c, {"SCAN"}) == "err:ERR wrong number of arguments for 'scan' command");
}

TEST_CASE("DBSIZE follows writes and deletes", "[keyspace]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"DBSIZE"}) == "int:0");
  for (int i = 0; i < 20; ++i)
    REQUIRE(Run(c, {"SET", "k" + std::to_string(i), "v"}) == "status:OK");
  CHECK(Run(c, {"DBSIZE"}) == "int:20");
  CHECK(Run(c, {"SET", "k0", "again"}) == "status:OK");  // overwrite: same count
  CHECK(Run(c, {"DBSIZE"}) == "int:20");
  CHECK(Run(c, {"DEL", "k0", "k1", "k2"}) == "int:3");
  CHECK(Run(c, {"DBSIZE"}) == "int:17");
  CHECK(Run(c, {"GETDEL", "k3"}) == "bulk:v");
  CHECK(Run(c, {"DBSIZE"}) == "int:16");
  server.Restart();
  Client c2(server.port());
  CHECK(Run(c2, {"DBSIZE"}) == "int:16");
}

}  // namespace keyspace_test
