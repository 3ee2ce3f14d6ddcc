// The read cache seen from outside: reads answered in the network thread (RTC) reply exactly
// what the pool path replies, pipelines keep order and read-your-writes, every kind of write
// invalidates or updates what other connections read, TTLs expire cached entries, the cache can
// be turned off and on at runtime, a many-client stress over few keys with a tiny cache (so
// eviction runs all the time) never serves an old value, and the cache stays in its budget
// under a million keys.
//
// Catch2 assertions are not thread-safe: stress threads record problems, the main thread checks.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/cache_helpers.h"
#include "tests/integration/test_helpers.h"
#include "tests/integration/test_server.h"

using rockcache::testing::CacheVerify;
using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoNumber;
using rockcache::testing::InfoText;
using rockcache::testing::ListIndexReply;
using rockcache::testing::ListRangeReply;
using rockcache::testing::Lower;
using rockcache::testing::Reply;
using rockcache::testing::RtcCalls;
using rockcache::testing::Run;
using rockcache::testing::RunRtc;
using rockcache::testing::RunShell;
using rockcache::testing::SleepMs;
using rockcache::testing::SubFields;
using rockcache::testing::TestServer;
using rockcache::testing::VerifyResult;

namespace {

// ---- 1. RTC answers == pool answers ----------------------------------------------------------

struct Step {
  std::vector<std::string> args;
  bool expect_rtc = false;  // on the rtc-reads yes server, must be answered in the network thread
  int64_t approx_ms = 0;    // PTTL: reply within (approx_ms - 60000, approx_ms] counts as equal
};

std::string Normalize(const Step& step, const Reply& r) {
  if (step.approx_ms > 0 && r.type == REDIS_REPLY_INTEGER && r.integer <= step.approx_ms &&
      r.integer > step.approx_ms - 60000) {  // a minute: sanitizer builds are slow
    return "int:~" + std::to_string(step.approx_ms);
  }
  return Describe(r);
}

std::vector<Step> RtcScript() {
  std::vector<Step> s;
  auto write = [&s](std::vector<std::string> args) { s.push_back({std::move(args), false, 0}); };
  auto rtc = [&s](std::vector<std::string> args, int64_t approx = 0) {
    s.push_back({std::move(args), true, approx});
  };
  auto pool = [&s](std::vector<std::string> args) { s.push_back({std::move(args), false, 0}); };

  // Data. SETs are written through to the cache; hashes are cached by the first read.
  write({"SET", "s:a", "hello"});
  write({"SET", "s:empty", ""});
  write({"SET", "s:bin", std::string("a\r\nb\0c\xff", 7)});
  write({"SET", "s:ttl", "v", "EX", "1000"});
  write({"SET", "s:num", "42"});
  write({"HSET", "h:a", "f1", "v1", "f2", "v22", "f3", ""});
  write({"HSET", "h:ttl", "x", "1"});
  write({"EXPIRE", "h:ttl", "1000"});
  std::vector<std::string> big = {"HSET", "h:big"};  // more fields than cache-max-hash-fields
  for (int i = 0; i < 1100; ++i) {
    big.push_back("f" + std::to_string(i));
    big.push_back("v" + std::to_string(i));
  }
  write(big);
  // Warm-up reads (the first read of a hash misses and fills it).
  pool({"HGETALL", "h:a"});
  pool({"HGETALL", "h:ttl"});
  pool({"GET", "s:missing"});

  // GETBIT
  rtc({"GETBIT", "s:a", "1"});
  rtc({"GETBIT", "s:a", "1000"});
  rtc({"GETBIT", "s:missing", "3"});
  rtc({"GETBIT", "h:a", "0"});
  pool({"GETBIT", "s:a", "-1"});
  // GET
  rtc({"GET", "s:a"});
  rtc({"GET", "s:empty"});
  rtc({"GET", "s:bin"});
  rtc({"GET", "s:ttl"});
  rtc({"get", "s:num"});
  rtc({"GET", "h:a"});  // WRONGTYPE from a cached hash
  pool({"GET", "s:missing"});
  // MGET (a hash key answers nil; a missing key is not cached, so that one goes to the pool)
  rtc({"MGET", "s:a", "s:empty", "h:a", "s:bin"});
  rtc({"MGET", "s:a", "s:a"});
  pool({"MGET", "s:a", "s:missing", "h:a"});
  // STRLEN
  rtc({"STRLEN", "s:a"});
  rtc({"STRLEN", "s:empty"});
  rtc({"STRLEN", "s:bin"});
  rtc({"STRLEN", "h:a"});
  pool({"STRLEN", "s:missing"});
  // EXISTS, multi-key, with repeats
  rtc({"EXISTS", "s:a"});
  rtc({"EXISTS", "s:a", "h:a", "s:a", "s:ttl"});
  pool({"EXISTS", "s:a", "s:missing", "h:a"});
  pool({"EXISTS", "s:missing"});
  // TTL / PTTL
  rtc({"TTL", "s:a"});
  rtc({"TTL", "s:ttl"});
  rtc({"TTL", "h:ttl"});
  rtc({"TTL", "h:a"});
  pool({"TTL", "s:missing"});
  rtc({"PTTL", "s:a"});
  rtc({"PTTL", "s:ttl"}, 1000000);
  rtc({"PTTL", "h:ttl"}, 1000000);
  pool({"PTTL", "s:missing"});
  // TYPE
  rtc({"TYPE", "s:a"});
  rtc({"TYPE", "h:a"});
  pool({"TYPE", "s:missing"});
  // HGET
  rtc({"HGET", "h:a", "f1"});
  rtc({"HGET", "h:a", "f3"});
  rtc({"HGET", "h:a", "nofield"});
  rtc({"HGET", "s:a", "f1"});  // WRONGTYPE from a cached string
  pool({"HGET", "h:missing", "f1"});
  // HMGET
  rtc({"HMGET", "h:a", "f1", "nofield", "f2", "f1"});
  rtc({"HMGET", "s:a", "f1"});
  pool({"HMGET", "h:missing", "f1", "f2"});
  // HGETALL
  rtc({"HGETALL", "h:a"});
  rtc({"HGETALL", "h:ttl"});
  rtc({"HGETALL", "s:a"});
  pool({"HGETALL", "h:missing"});
  // HLEN
  rtc({"HLEN", "h:a"});
  rtc({"HLEN", "s:a"});
  pool({"HLEN", "h:missing"});
  // HEXISTS
  rtc({"HEXISTS", "h:a", "f2"});
  rtc({"HEXISTS", "h:a", "nofield"});
  rtc({"HEXISTS", "s:a", "f2"});
  pool({"HEXISTS", "h:missing", "f2"});
  // HSTRLEN
  rtc({"HSTRLEN", "h:a", "f2"});
  rtc({"HSTRLEN", "h:a", "f3"});
  rtc({"HSTRLEN", "h:a", "nofield"});
  rtc({"HSTRLEN", "s:a", "f2"});
  pool({"HSTRLEN", "h:missing", "f2"});
  // A hash too big for the cache: always the pool, same answers.
  pool({"HGET", "h:big", "f1099"});
  pool({"HLEN", "h:big"});
  pool({"HGET", "h:big", "f1099"});
  // Write-through keeps what RTC answers right (and hashes sorted as storage returns them).
  write({"HSET", "h:a", "f0", "zero", "f9", "nine"});
  rtc({"HGETALL", "h:a"});
  rtc({"HLEN", "h:a"});
  write({"HDEL", "h:a", "f2"});
  rtc({"HGETALL", "h:a"});
  rtc({"HGET", "h:a", "f2"});
  write({"APPEND", "s:a", " world"});
  rtc({"GET", "s:a"});
  rtc({"STRLEN", "s:a"});
  write({"INCR", "s:num"});
  rtc({"GET", "s:num"});
  write({"EXPIRE", "s:a", "500"});
  rtc({"TTL", "s:a"});
  rtc({"PTTL", "s:a"}, 500000);
  write({"PERSIST", "s:a"});
  rtc({"TTL", "s:a"});
  write({"SET", "s:ttl", "w", "KEEPTTL"});
  rtc({"GET", "s:ttl"});
  rtc({"TTL", "s:ttl"});
  // Type changes seen by RTC.
  write({"SET", "h:ttl", "now-a-string"});
  rtc({"TYPE", "h:ttl"});
  rtc({"GET", "h:ttl"});
  rtc({"TTL", "h:ttl"});
  rtc({"HGET", "h:ttl", "x"});
  // Lists: LRANGE caches the head its range lies in; LRANGE / LINDEX inside it and LLEN are then
  // answered from it, a range past it goes to the pool (which caches the longer head).
  write({"RPUSH", "l:a", "a", "b", "c", "d", "e"});
  pool({"LRANGE", "l:a", "0", "2"});
  rtc({"LRANGE", "l:a", "0", "2"});
  rtc({"LRANGE", "l:a", "1", "1"});
  rtc({"LRANGE", "l:a", "-100", "2"});
  rtc({"LRANGE", "l:a", "3", "1"});
  rtc({"LRANGE", "l:a", "10", "20"});
  rtc({"LLEN", "l:a"});
  rtc({"LINDEX", "l:a", "2"});
  rtc({"LINDEX", "l:a", "-6"});
  rtc({"LINDEX", "l:a", "5"});
  rtc({"LINDEX", "l:a", "x"});
  pool({"LINDEX", "l:a", "-1"});
  pool({"LRANGE", "l:a", "0", "-1"});
  rtc({"LRANGE", "l:a", "0", "-1"});
  rtc({"LRANGE", "l:a", "-2", "-1"});
  rtc({"LINDEX", "l:a", "-1"});
  rtc({"GET", "l:a"});  // WRONGTYPE from a cached list
  rtc({"STRLEN", "l:a"});
  rtc({"HGET", "l:a", "f"});
  rtc({"TYPE", "l:a"});
  rtc({"TTL", "l:a"});
  rtc({"MGET", "l:a", "s:a"});
  rtc({"LRANGE", "s:a", "0", "1"});  // WRONGTYPE from a cached string and hash
  rtc({"LLEN", "h:a"});
  rtc({"LINDEX", "h:a", "0"});
  pool({"LRANGE", "l:a", "0", "x"});
  pool({"LRANGE", "l:missing", "0", "1"});
  rtc({"LRANGE", "l:missing", "0", "1"});
  rtc({"LLEN", "l:missing"});
  rtc({"LINDEX", "l:missing", "x"});
  // Pushes and pops edit the cached head; other list writes drop it.
  write({"LPUSH", "l:a", "y", "z"});
  rtc({"LRANGE", "l:a", "0", "-1"});
  write({"RPUSH", "l:a", "f"});
  rtc({"LRANGE", "l:a", "0", "-1"});
  write({"LPOP", "l:a"});
  rtc({"LRANGE", "l:a", "0", "-1"});
  write({"RPOP", "l:a", "2"});
  rtc({"LRANGE", "l:a", "0", "-1"});
  rtc({"LLEN", "l:a"});
  write({"LSET", "l:a", "1", "q"});
  pool({"LRANGE", "l:a", "0", "-1"});
  write({"LINSERT", "l:a", "BEFORE", "q", "p"});
  pool({"LRANGE", "l:a", "0", "-1"});
  write({"LREM", "l:a", "0", "b"});
  pool({"LRANGE", "l:a", "0", "-1"});
  write({"LTRIM", "l:a", "1", "-1"});
  pool({"LRANGE", "l:a", "0", "-1"});
  write({"EXPIRE", "l:a", "1000"});
  rtc({"TTL", "l:a"});
  rtc({"LRANGE", "l:a", "0", "-1"});
  write({"LMOVE", "l:a", "l:b", "LEFT", "RIGHT"});
  pool({"LRANGE", "l:a", "0", "-1"});
  write({"DEL", "l:a"});
  pool({"LRANGE", "l:a", "0", "-1"});  // and it is known absent from then on
  rtc({"LRANGE", "l:a", "0", "-1"});
  rtc({"LLEN", "l:a"});
  // A list longer than cache-max-list-elements (1024): its first elements are cached.
  std::vector<std::string> long_list = {"RPUSH", "l:long"};
  for (int i = 0; i < 1100; ++i) long_list.push_back("e" + std::to_string(i));
  write(long_list);
  pool({"LRANGE", "l:long", "1000", "1099"});
  pool({"LRANGE", "l:long", "1000", "1099"});
  pool({"LRANGE", "l:long", "0", "1023"});
  rtc({"LRANGE", "l:long", "0", "1023"});
  rtc({"LRANGE", "l:long", "-1100", "5"});
  rtc({"LLEN", "l:long"});
  pool({"LINDEX", "l:long", "1024"});
  write({"LPUSH", "l:long", "new"});
  rtc({"LRANGE", "l:long", "0", "3"});
  rtc({"LINDEX", "l:long", "1023"});
  pool({"LINDEX", "l:long", "1024"});
  return s;
}

}  // namespace

// TTL right after EXPIRE 100: 100, or 99 when the machine took over half a second meanwhile
// (TTL rounds to the nearest second).
static bool Ttl100(const std::string& reply) { return reply == "int:100" || reply == "int:99"; }

TEST_CASE("RTC reads reply exactly what the pool path replies", "[cache]") {
  TestServer yes({"--rtc-reads", "yes"});
  TestServer no({"--rtc-reads", "no"});
  Client cy(yes.port()), cn(no.port());
  Client admin_y(yes.port()), admin_n(no.port());
  REQUIRE(Run(admin_y, {"CONFIG", "GET", "rtc-reads"}) == "[bulk:rtc-reads, bulk:yes]");
  REQUIRE(Run(admin_n, {"CONFIG", "GET", "rtc-reads"}) == "[bulk:rtc-reads, bulk:no]");
  uint64_t no_hits_before = InfoNumber(admin_n, "cache", "cache_hits");

  std::vector<Step> script = RtcScript();
  std::map<std::string, int> rtc_checked;  // command -> steps verified as RTC answers
  for (const Step& step : script) {
    std::string cmd = Lower(step.args[0]);
    uint64_t rtc_before = step.expect_rtc ? RtcCalls(admin_y, cmd) : 0;
    Reply ry = cy.Command(step.args);
    Reply rn = cn.Command(step.args);
    std::string what = step.args[0] + " " + (step.args.size() > 1 ? step.args[1] : "") +
                       (step.args.size() > 2 ? " " + step.args[2] : "");
    INFO("step: " << what << "  yes-server: " << Describe(ry) << "  no-server: " << Describe(rn));
    CHECK(Normalize(step, ry) == Normalize(step, rn));
    if (step.approx_ms > 0 && ry.type == REDIS_REPLY_INTEGER && ry.integer > 0) {
      CHECK(Normalize(step, ry) == "int:~" + std::to_string(step.approx_ms));
    }
    if (step.expect_rtc) {
      uint64_t rtc_after = RtcCalls(admin_y, cmd);
      CHECK(rtc_after == rtc_before + 1);
      ++rtc_checked[cmd];
    }
  }
  // Every cache-readable command was seen answered by RTC.
  for (const char* cmd :
       {"get", "mget", "strlen", "exists", "ttl", "pttl", "type", "hget", "hmget", "hgetall",
        "hlen", "hexists", "hstrlen", "getbit", "lrange", "llen", "lindex"}) {
    INFO("command " << cmd);
    CHECK(rtc_checked[cmd] > 0);
    CHECK(RtcCalls(admin_y, cmd) > 0);
  }
  // The no-server never answers in the network thread, but its workers still use the cache.
  CHECK(InfoNumber(admin_n, "cache", "cache_rtc_answers") == 0);
  for (const char* cmd : {"get", "mget", "hget", "hgetall", "ttl"}) {
    INFO("command " << cmd);
    CHECK(RtcCalls(admin_n, cmd) == 0);
  }
  CHECK(InfoNumber(admin_n, "cache", "cache_hits") > no_hits_before);
  CHECK(InfoNumber(admin_y, "cache", "cache_rtc_answers") > 0);
  // And both caches agree with RocksDB.
  VerifyResult vy = CacheVerify(admin_y), vn = CacheVerify(admin_n);
  CHECK(vy.checked > 0);
  CHECK(vn.checked > 0);
  CHECK(vy.mismatches == 0);
  CHECK(vn.mismatches == 0);
}

TEST_CASE("rtc-reads can be switched at runtime", "[cache]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(c, {"SET", "k", "v"}) == "status:OK");
  CHECK(RunRtc(admin, c, {"GET", "k"}) == "bulk:v");
  REQUIRE(Run(admin, {"CONFIG", "SET", "rtc-reads", "no"}) == "status:OK");
  uint64_t rtc = InfoNumber(admin, "cache", "cache_rtc_answers");
  uint64_t hits = InfoNumber(admin, "cache", "cache_hits");
  for (int i = 0; i < 10; ++i) CHECK(Run(c, {"GET", "k"}) == "bulk:v");
  CHECK(InfoNumber(admin, "cache", "cache_rtc_answers") == rtc);
  CHECK(InfoNumber(admin, "cache", "cache_hits") >= hits + 10);  // served by workers from cache
  REQUIRE(Run(admin, {"CONFIG", "SET", "rtc-reads", "yes"}) == "status:OK");
  CHECK(RunRtc(admin, c, {"GET", "k"}) == "bulk:v");
}

// MSET writes a key the cache holds without reading its old meta (as SET does): what a user
// counts must not change for it. Keys cached as strings, with a TTL, as a hash, and not at all.
TEST_CASE("MSET over cached keys keeps DBSIZE, INFO keyspace and TTLs exact", "[cache]") {
  TestServer server;
  Client c(server.port());
  REQUIRE(Run(c, {"SET", "s", "1"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "t", "1", "EX", "1000"}) == "status:OK");
  REQUIRE(Run(c, {"HSET", "h", "f", "v"}) == "int:1");
  REQUIRE(Run(c, {"SET", "cold", "1"}) == "status:OK");
  CHECK(Run(c, {"GET", "s"}) == "bulk:1");
  CHECK(Run(c, {"GET", "t"}) == "bulk:1");
  CHECK(Run(c, {"HGETALL", "h"}) == "[bulk:f, bulk:v]");
  const uint64_t hits = InfoNumber(c, "cache", "cache_hits");
  CHECK(Run(c, {"GET", "s"}) == "bulk:1");
  CHECK(InfoNumber(c, "cache", "cache_hits") > hits);  // "s" is cached
  CHECK(InfoFields(InfoText(c, "keyspace"))["db0"].rfind("keys=4,expires=1,", 0) == 0);

  CHECK(Run(c, {"MSET", "s", "2", "t", "2", "h", "2", "cold", "2", "new", "2", "s", "3"}) ==
        "status:OK");
  CHECK(Run(c, {"MGET", "s", "t", "h", "cold", "new"}) ==
        "[bulk:3, bulk:2, bulk:2, bulk:2, bulk:2]");
  CHECK(Run(c, {"TTL", "t"}) == "int:-1");
  CHECK(Run(c, {"TYPE", "h"}) == "status:string");
  CHECK(Run(c, {"DBSIZE"}) == "int:5");
  CHECK(InfoFields(InfoText(c, "keyspace"))["db0"] == "keys=5,expires=0,avg_ttl=0");
  CHECK(CacheVerify(c).mismatches == 0);
  // And after a restart, from what RocksDB holds.
  server.Restart();
  Client after(server.port());
  CHECK(Run(after, {"DBSIZE"}) == "int:5");
  CHECK(Run(after, {"MGET", "s", "t", "h"}) == "[bulk:3, bulk:2, bulk:2]");
}

// INCR, INCRBY and DECR of a counter the cache holds compute from the cached value and write it
// blind (no RocksDB read): replies, errors, TTLs and counts must be what the store path gives.
TEST_CASE("INCR of cached counters replies and counts as from storage", "[cache]") {
  TestServer server;
  Client c(server.port());
  REQUIRE(Run(c, {"SET", "n", "10"}) == "status:OK");  // a SET leaves its value cached
  REQUIRE(Run(c, {"SET", "t", "1", "EX", "1000"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "s", "abc"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "z", "007"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "max", "9223372036854775807"}) == "status:OK");
  REQUIRE(Run(c, {"HSET", "h", "f", "1"}) == "int:1");
  CHECK(Run(c, {"HGETALL", "h"}) == "[bulk:f, bulk:1]");

  CHECK(Run(c, {"INCR", "n"}) == "int:11");
  CHECK(Run(c, {"INCRBY", "n", "5"}) == "int:16");
  CHECK(Run(c, {"DECR", "n"}) == "int:15");
  CHECK(Run(c, {"DECRBY", "n", "20"}) == "int:-5");
  CHECK(Run(c, {"GET", "n"}) == "bulk:-5");
  CHECK(Run(c, {"INCR", "t"}) == "int:2");
  const std::string ttl = Run(c, {"TTL", "t"});
  CHECK((ttl == "int:1000" || ttl == "int:999"));
  const std::string not_integer = "err:ERR value is not an integer or out of range";
  CHECK(Run(c, {"INCR", "s"}) == not_integer);
  CHECK(Run(c, {"INCR", "z"}) == not_integer);
  CHECK(Run(c, {"INCR", "max"}) == "err:ERR increment or decrement would overflow");
  CHECK(Run(c, {"DECR", "max"}) == "int:9223372036854775806");
  CHECK(Run(c, {"INCR", "h"}) ==
        "err:WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(Run(c, {"INCR", "fresh"}) == "int:1");
  CHECK(Run(c, {"DBSIZE"}) == "int:7");
  CHECK(InfoFields(InfoText(c, "keyspace"))["db0"].rfind("keys=7,expires=1,", 0) == 0);
  CHECK(CacheVerify(c).mismatches == 0);
  server.Restart();
  Client after(server.port());
  CHECK(Run(after, {"MGET", "n", "t", "max", "fresh"}) ==
        "[bulk:-5, bulk:2, bulk:9223372036854775806, bulk:1]");
  CHECK(Run(after, {"TTL", "t"}) != "int:-1");
  CHECK(Run(after, {"DBSIZE"}) == "int:7");
  // Not cached after the restart: the store path increments and fills the entry with the TTL it
  // kept, and the next INCR is answered from that entry.
  CHECK(Run(after, {"INCR", "t"}) == "int:3");
  CHECK(Run(after, {"INCR", "t"}) == "int:4");
  const std::string ttl_after = Run(after, {"TTL", "t"});
  CHECK((ttl_after == "int:1000" || ttl_after == "int:999" || ttl_after == "int:998"));
  CHECK(InfoFields(InfoText(after, "keyspace"))["db0"].rfind("keys=7,expires=1,", 0) == 0);
  CHECK(CacheVerify(after).mismatches == 0);
}

// cache_rtc_storage_fills: reads the network thread answered after filling the cache from
// RocksDB's memory.
uint64_t StorageFills(Client& admin) {
  return InfoNumber(admin, "cache", "cache_rtc_storage_fills");
}

TEST_CASE("a cache miss is read from RocksDB's memory in the network thread", "[cache]") {
  TestServer server;
  auto c = std::make_unique<Client>(server.port());
  auto admin = std::make_unique<Client>(server.port());
  REQUIRE(Run(*admin, {"CONFIG", "GET", "rtc-storage-read-max-bytes"}) ==
          "[bulk:rtc-storage-read-max-bytes, bulk:16384]");
  // Keys in RocksDB that the cache does not hold: written while the cache was off.
  const std::string big(20000, 'b');
  REQUIRE(Run(*admin, {"CONFIG", "SET", "cache-maxmemory", "0"}) == "status:OK");
  REQUIRE(Run(*c, {"SET", "s", "v"}) == "status:OK");
  REQUIRE(Run(*c, {"SET", "t", "w", "PX", "100000"}) == "status:OK");
  REQUIRE(Run(*c, {"SET", "big", big}) == "status:OK");
  REQUIRE(Run(*c, {"RPUSH", "l", "a"}) == "int:1");
  REQUIRE(Run(*c, {"HSET", "h", "f", "v"}) == "int:1");
  REQUIRE(Run(*admin, {"CONFIG", "SET", "cache-maxmemory", "64mb"}) == "status:OK");

  uint64_t fills = StorageFills(*admin);
  // A string: answered in the network thread, then from the entry it filled.
  CHECK(RunRtc(*admin, *c, {"GET", "s"}) == "bulk:v");
  CHECK(StorageFills(*admin) == ++fills);
  CHECK(RunRtc(*admin, *c, {"GET", "s"}) == "bulk:v");
  CHECK(StorageFills(*admin) == fills);
  // Its TTL comes along: PTTL is then answered from the filled entry.
  CHECK(RunRtc(*admin, *c, {"GET", "t"}) == "bulk:w");
  CHECK(StorageFills(*admin) == ++fills);
  const Reply pttl = c->Command({"PTTL", "t"});
  CHECK(pttl.type == REDIS_REPLY_INTEGER);
  CHECK(pttl.integer > 40000);
  CHECK(pttl.integer <= 100000);
  CHECK(StorageFills(*admin) == fills);
  // Absent keys: a negative entry, for each string read of one key.
  CHECK(RunRtc(*admin, *c, {"GET", "nokey"}) == "nil");
  CHECK(StorageFills(*admin) == ++fills);
  CHECK(RunRtc(*admin, *c, {"GET", "nokey"}) == "nil");
  CHECK(RunRtc(*admin, *c, {"STRLEN", "nokey2"}) == "int:0");
  CHECK(RunRtc(*admin, *c, {"GETBIT", "nokey3", "7"}) == "int:0");
  CHECK(RunRtc(*admin, *c, {"MGET", "nokey4"}) == "[nil]");
  fills += 3;
  CHECK(StorageFills(*admin) == fills);
  // What the network thread leaves to the pool: a value over the limit, other types, commands
  // that are not string reads of one key.
  CHECK(Run(*c, {"GET", "big"}) == "bulk:" + big);
  CHECK(Run(*c, {"GET", "l"}) ==
        "err:WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(Run(*c, {"HGET", "h", "f"}) == "bulk:v");
  CHECK(Run(*c, {"HGET", "nokey5", "f"}) == "nil");
  CHECK(Run(*c, {"TYPE", "l"}) == "status:list");
  CHECK(Run(*c, {"TTL", "nokey6"}) == "int:-2");
  CHECK(Run(*c, {"MGET", "s", "nokey7"}) == "[bulk:v, nil]");  // two keys
  CHECK(StorageFills(*admin) == fills);
  // A write after the fill is seen at once.
  CHECK(Run(*c, {"SET", "nokey", "now"}) == "status:OK");
  CHECK(Run(*c, {"GET", "nokey"}) == "bulk:now");
  // Switched off at runtime: misses go to the pool.
  REQUIRE(Run(*admin, {"CONFIG", "SET", "rtc-storage-read-max-bytes", "0"}) == "status:OK");
  CHECK(Run(*c, {"GET", "nokey8"}) == "nil");
  CHECK(StorageFills(*admin) == fills);
  REQUIRE(Run(*admin, {"CONFIG", "SET", "rtc-storage-read-max-bytes", "16kb"}) == "status:OK");
  CHECK(Run(*c, {"GET", "nokey9"}) == "nil");
  CHECK(StorageFills(*admin) == ++fills);

  // After a restart the data is in SST files (recovery flushes the WAL's memtable) and the
  // block cache is empty: the first read needs a file, so the pool reads it.
  c.reset();
  admin.reset();
  server.Restart();
  c = std::make_unique<Client>(server.port());
  admin = std::make_unique<Client>(server.port());
  fills = StorageFills(*admin);
  CHECK(Run(*c, {"GET", "s"}) == "bulk:v");
  CHECK(StorageFills(*admin) == fills);
  CHECK(Run(*c, {"GET", "s"}) == "bulk:v");
  VerifyResult verify = CacheVerify(*admin);
  CHECK(verify.checked > 0);
  CHECK(verify.mismatches == 0);
}

TEST_CASE("a fill in the network thread never installs a value a pending group write replaces",
          "[cache]") {
  // A group's writes reach RocksDB at its commit, after the cache already shows them. Here the
  // new value is too big for a 4 KiB shard (64kb / 16 shards), so the write leaves the key
  // uncached, and the rest of the pipeline keeps the group's commit waiting: a reader's miss in
  // that gap finds the old value in RocksDB. Its fill must be refused (the stripe's write
  // window stays open until the commit), or the old value would be cached for good.
  TestServer server({"--cache-maxmemory", "64kb"});
  Client writer(server.port()), admin(server.port());
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0};
  std::thread reader([&] {
    Client c(server.port());
    Reply r;
    while (!stop.load()) {
      if (!c.TryCommand({"GET", "k"}, &r)) return;
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });
  int stale = 0;
  std::string first_stale;
  for (int round = 0; round < 200 && stale == 0; ++round) {
    const std::string small = "small" + std::to_string(round);
    const std::string big = std::string(8000, 'b') + std::to_string(round);
    if (Run(writer, {"SET", "k", small}) != "status:OK") break;
    writer.Append({"SET", "k", big});
    for (int i = 0; i < 300; ++i) writer.Append({"SET", "other:" + std::to_string(i), "x"});
    Reply r;
    for (int i = 0; i < 301; ++i) REQUIRE(writer.GetReply(&r));
    const Reply now = writer.Command({"GET", "k"});
    if (now.str != big) {
      ++stale;
      first_stale = "round " + std::to_string(round) + ": " + Describe(now).substr(0, 40);
    }
  }
  stop = true;
  reader.join();
  INFO(first_stale);
  CHECK(stale == 0);
  CHECK(reads.load() > 0);
  VerifyResult verify = CacheVerify(admin);
  CHECK(verify.mismatches == 0);
}

TEST_CASE("pipelines through the cache: order and read-your-writes", "[cache]") {
  TestServer server;
  Client c(server.port()), admin(server.port()), other(server.port());

  SECTION("writes and cached reads mixed in one write") {
    // Warm the keys so that a read answered from the cache would show the old value.
    REQUIRE(Run(c, {"SET", "p:k", "old"}) == "status:OK");
    REQUIRE(Run(c, {"SET", "p:c", "10"}) == "status:OK");
    REQUIRE(Run(c, {"HSET", "p:h", "f", "old"}) == "int:1");
    REQUIRE(Run(c, {"HGET", "p:h", "f"}) == "bulk:old");
    CHECK(RunRtc(admin, other, {"GET", "p:k"}) == "bulk:old");
    CHECK(RunRtc(admin, other, {"HGET", "p:h", "f"}) == "bulk:old");

    std::vector<std::pair<std::vector<std::string>, std::string>> pipeline;
    auto add = [&pipeline](std::vector<std::string> args, std::string expected) {
      pipeline.emplace_back(std::move(args), std::move(expected));
    };
    for (int round = 0; round < 20; ++round) {
      std::string v = "v" + std::to_string(round);
      add({"GET", "p:k"}, round == 0 ? "bulk:old" : "bulk:v" + std::to_string(round - 1) + "+");
      add({"SET", "p:k", v}, "status:OK");
      for (int i = 0; i < 5; ++i) add({"GET", "p:k"}, "bulk:" + v);
      add({"INCR", "p:c"}, "int:" + std::to_string(11 + round));
      add({"GET", "p:c"}, "bulk:" + std::to_string(11 + round));
      add({"MGET", "p:k", "p:c", "p:none"},
          "[bulk:" + v + ", bulk:" + std::to_string(11 + round) + ", nil]");
      add({"APPEND", "p:k", "+"}, "int:" + std::to_string(v.size() + 1));
      add({"STRLEN", "p:k"}, "int:" + std::to_string(v.size() + 1));
      add({"HSET", "p:h", "f", v}, "int:0");
      add({"HGET", "p:h", "f"}, "bulk:" + v);
      add({"HGETALL", "p:h"}, "[bulk:f, bulk:" + v + "]");
      add({"DEL", "p:tmp"}, "int:0");
      add({"SET", "p:tmp", "x"}, "status:OK");
      add({"EXISTS", "p:tmp", "p:k"}, "int:2");
      add({"DEL", "p:tmp"}, "int:1");
      add({"GET", "p:tmp"}, "nil");
      add({"EXISTS", "p:tmp", "p:k"}, "int:1");
    }
    for (const auto& [args, expected] : pipeline) c.Append(args);
    for (size_t i = 0; i < pipeline.size(); ++i) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      INFO("pipeline entry " << i << ": " << pipeline[i].first[0] << " " << pipeline[i].first[1]);
      CHECK(Describe(r) == pipeline[i].second);
    }
    // Another connection sees the final values, from the cache.
    CHECK(RunRtc(admin, other, {"GET", "p:k"}) == "bulk:v19+");
    CHECK(Run(other, {"GET", "p:c"}) == "bulk:30");
    CHECK(RunRtc(admin, other, {"HGET", "p:h", "f"}) == "bulk:v19");
    CHECK(CacheVerify(admin).mismatches == 0);
  }

  SECTION("a pipeline of GETs of cached keys is answered entirely in the network thread") {
    const int n = 200;
    for (int i = 0; i < n; ++i) {
      REQUIRE(Run(c, {"SET", "g:" + std::to_string(i), "val" + std::to_string(i)}) == "status:OK");
    }
    uint64_t rtc_before = RtcCalls(admin, "get");
    uint64_t answers_before = InfoNumber(admin, "cache", "cache_rtc_answers");
    for (int i = 0; i < n; ++i) c.Append({"GET", "g:" + std::to_string(i)});
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      if (Describe(r) != "bulk:val" + std::to_string(i)) ++wrong;
    }
    CHECK(wrong == 0);
    CHECK(RtcCalls(admin, "get") == rtc_before + n);
    CHECK(InfoNumber(admin, "cache", "cache_rtc_answers") == answers_before + n);
  }

  SECTION(
      "a miss in a pipeline: hits behind it still answered here, a write and all after it "
      "go to a worker, in order") {
    // Misses go to the pool (not filled from RocksDB's memory in the network thread).
    REQUIRE(Run(admin, {"CONFIG", "SET", "rtc-storage-read-max-bytes", "0"}) == "status:OK");
    REQUIRE(Run(c, {"SET", "m:a", "A"}) == "status:OK");
    uint64_t rtc_before = RtcCalls(admin, "get");
    // GET m:a (RTC), GET m:none (miss: to the pool), GET m:a (a hit behind the miss: answered
    // in the loop, its reply carried in the batch), SET and the GET behind it (the pool).
    c.Append({"GET", "m:a"});
    c.Append({"GET", "m:none"});
    c.Append({"GET", "m:a"});
    c.Append({"SET", "m:a", "B"});
    c.Append({"GET", "m:a"});
    std::vector<std::string> expected = {"bulk:A", "nil", "bulk:A", "status:OK", "bulk:B"};
    for (const auto& e : expected) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      CHECK(Describe(r) == e);
    }
    CHECK(RtcCalls(admin, "get") == rtc_before + 2);
  }

  SECTION("a miss filled from RocksDB's memory keeps the pipeline in the network thread") {
    REQUIRE(Run(c, {"SET", "m:a", "A"}) == "status:OK");
    uint64_t rtc_before = RtcCalls(admin, "get");
    // GET m:a (RTC), GET m:none (filled in the loop), GET m:a, then SET and the GET behind it
    // go to the pool.
    c.Append({"GET", "m:a"});
    c.Append({"GET", "m:none"});
    c.Append({"GET", "m:a"});
    c.Append({"SET", "m:a", "B"});
    c.Append({"GET", "m:a"});
    std::vector<std::string> expected = {"bulk:A", "nil", "bulk:A", "status:OK", "bulk:B"};
    for (const auto& e : expected) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      CHECK(Describe(r) == e);
    }
    CHECK(RtcCalls(admin, "get") == rtc_before + 3);
  }
}

namespace {

// A writer and a reader connection; checks that the reader sees each write at once.
struct Pair {
  explicit Pair(int port) : w(port), r(port), admin(port) {}
  Client w, r, admin;
  std::string Read(const std::vector<std::string>& args) { return Run(r, args); }
  std::string Write(const std::vector<std::string>& args) { return Run(w, args); }
  // Reads through the reader and REQUIREs the answer came from the cache (so it is warm).
  std::string Warm(const std::vector<std::string>& args) {
    Run(r, args);  // may miss and fill
    return RunRtc(admin, r, args);
  }
  void Verify() {
    VerifyResult v = CacheVerify(admin);
    INFO(v.text);
    CHECK(v.mismatches == 0);
  }
};

}  // namespace

TEST_CASE("every kind of write is seen at once by other connections", "[cache]") {
  TestServer server;
  Pair p(server.port());

  SECTION("string writes") {
    p.Write({"SET", "k", "v0"});
    CHECK(p.Warm({"GET", "k"}) == "bulk:v0");
    CHECK(p.Write({"SET", "k", "v1"}) == "status:OK");
    CHECK(p.Read({"GET", "k"}) == "bulk:v1");
    CHECK(p.Read({"STRLEN", "k"}) == "int:2");

    CHECK(p.Write({"SETEX", "k", "100", "v2"}) == "status:OK");
    CHECK(p.Read({"GET", "k"}) == "bulk:v2");
    CHECK(Ttl100(p.Read({"TTL", "k"})));

    CHECK(p.Write({"PSETEX", "k", "200000", "v3"}) == "status:OK");
    CHECK(p.Read({"GET", "k"}) == "bulk:v3");
    CHECK(p.Read({"TTL", "k"}) == "int:200");

    CHECK(p.Write({"SET", "k", "v4"}) == "status:OK");  // clears the TTL
    CHECK(p.Read({"TTL", "k"}) == "int:-1");

    CHECK(p.Warm({"GET", "k"}) == "bulk:v4");
    CHECK(p.Write({"APPEND", "k", "-more"}) == "int:7");
    CHECK(p.Read({"GET", "k"}) == "bulk:v4-more");
    CHECK(p.Read({"STRLEN", "k"}) == "int:7");

    CHECK(p.Write({"SET", "k", "x", "NX"}) == "nil");
    CHECK(p.Read({"GET", "k"}) == "bulk:v4-more");
    CHECK(p.Write({"SET", "k", "v5", "XX", "GET"}) == "bulk:v4-more");
    CHECK(p.Read({"GET", "k"}) == "bulk:v5");
    CHECK(p.Write({"GETSET", "k", "v6"}) == "bulk:v5");
    CHECK(p.Read({"GET", "k"}) == "bulk:v6");
    CHECK(p.Write({"SETNX", "k", "v7"}) == "int:0");
    CHECK(p.Read({"GET", "k"}) == "bulk:v6");

    p.Write({"SET", "n", "10"});
    CHECK(p.Warm({"GET", "n"}) == "bulk:10");
    CHECK(p.Write({"INCR", "n"}) == "int:11");
    CHECK(p.Read({"GET", "n"}) == "bulk:11");
    CHECK(p.Write({"INCRBY", "n", "9"}) == "int:20");
    CHECK(p.Read({"GET", "n"}) == "bulk:20");
    CHECK(p.Write({"DECR", "n"}) == "int:19");
    CHECK(p.Read({"GET", "n"}) == "bulk:19");
    CHECK(p.Write({"DECRBY", "n", "20"}) == "int:-1");
    CHECK(p.Read({"GET", "n"}) == "bulk:-1");
    CHECK(p.Read({"STRLEN", "n"}) == "int:2");

    p.Write({"SET", "f", "1.5"});
    CHECK(p.Warm({"GET", "f"}) == "bulk:1.5");
    CHECK(p.Write({"INCRBYFLOAT", "f", "2"}) == "bulk:3.5");
    CHECK(p.Read({"GET", "f"}) == "bulk:3.5");

    p.Write({"SET", "r", "hello"});
    CHECK(p.Warm({"GET", "r"}) == "bulk:hello");
    CHECK(p.Write({"SETRANGE", "r", "0", "J"}) == "int:5");
    CHECK(p.Read({"GET", "r"}) == "bulk:Jello");
    CHECK(p.Write({"SETRANGE", "r", "7", "!"}) == "int:8");
    CHECK(p.Read({"GET", "r"}) == std::string("bulk:Jello\0\0!", 13));

    CHECK(p.Warm({"GET", "r"}) == std::string("bulk:Jello\0\0!", 13));
    CHECK(p.Write({"GETDEL", "r"}) == std::string("bulk:Jello\0\0!", 13));
    CHECK(p.Read({"GET", "r"}) == "nil");
    CHECK(p.Read({"EXISTS", "r"}) == "int:0");
    CHECK(p.Read({"STRLEN", "r"}) == "int:0");

    p.Write({"MSET", "m1", "a", "m2", "b"});
    CHECK(p.Warm({"GET", "m1"}) == "bulk:a");
    CHECK(p.Warm({"GET", "m2"}) == "bulk:b");
    CHECK(p.Write({"MSET", "m1", "A", "m2", "B", "m1", "AA"}) == "status:OK");
    CHECK(p.Read({"GET", "m1"}) == "bulk:AA");
    CHECK(p.Read({"MGET", "m1", "m2"}) == "[bulk:AA, bulk:B]");
    CHECK(p.Write({"MSETNX", "m2", "x", "m3", "y"}) == "int:0");
    CHECK(p.Read({"MGET", "m1", "m2", "m3"}) == "[bulk:AA, bulk:B, nil]");
    p.Verify();
  }

  SECTION("GETEX, DEL, UNLINK") {
    p.Write({"SET", "g", "v", "EX", "100"});
    CHECK(p.Warm({"GET", "g"}) == "bulk:v");
    CHECK(Ttl100(p.Warm({"TTL", "g"})));
    CHECK(p.Write({"GETEX", "g", "PERSIST"}) == "bulk:v");
    CHECK(p.Read({"TTL", "g"}) == "int:-1");
    CHECK(p.Warm({"TTL", "g"}) == "int:-1");
    CHECK(p.Write({"GETEX", "g", "EX", "50"}) == "bulk:v");
    CHECK(p.Read({"TTL", "g"}) == "int:50");
    CHECK(p.Write({"GETEX", "g", "PX", "70000"}) == "bulk:v");
    CHECK(p.Read({"TTL", "g"}) == "int:70");
    CHECK(p.Write({"GETEX", "g"}) == "bulk:v");
    CHECK(p.Read({"TTL", "g"}) == "int:70");

    p.Write({"SET", "d", "v"});
    CHECK(p.Warm({"GET", "d"}) == "bulk:v");
    CHECK(p.Write({"DEL", "d"}) == "int:1");
    CHECK(p.Read({"GET", "d"}) == "nil");
    CHECK(p.Read({"EXISTS", "d"}) == "int:0");
    CHECK(p.Read({"TYPE", "d"}) == "status:none");
    CHECK(p.Read({"TTL", "d"}) == "int:-2");

    p.Write({"SET", "u", "v"});
    p.Write({"HSET", "uh", "f", "v"});
    CHECK(p.Warm({"GET", "u"}) == "bulk:v");
    CHECK(p.Warm({"HGET", "uh", "f"}) == "bulk:v");
    CHECK(p.Write({"UNLINK", "u", "uh", "nokey"}) == "int:2");
    CHECK(p.Read({"GET", "u"}) == "nil");
    CHECK(p.Read({"HGET", "uh", "f"}) == "nil");
    CHECK(p.Read({"HGETALL", "uh"}) == "[]");
    CHECK(p.Read({"EXISTS", "u", "uh"}) == "int:0");
    p.Verify();
  }

  SECTION("EXPIRE, PEXPIRE, EXPIREAT, PERSIST") {
    p.Write({"SET", "e", "v"});
    CHECK(p.Warm({"TTL", "e"}) == "int:-1");
    CHECK(p.Write({"EXPIRE", "e", "100"}) == "int:1");
    CHECK(Ttl100(p.Read({"TTL", "e"})));
    CHECK(Ttl100(p.Warm({"TTL", "e"})));
    CHECK(p.Write({"PEXPIRE", "e", "50000"}) == "int:1");
    CHECK(p.Read({"TTL", "e"}) == "int:50");
    int64_t at = rockcache::testing::NowMs() / 1000 + 300;
    CHECK(p.Write({"EXPIREAT", "e", std::to_string(at)}) == "int:1");
    std::string ttl = p.Read({"TTL", "e"});
    CHECK((ttl == "int:300" || ttl == "int:299"));
    CHECK(p.Write({"EXPIRE", "e", "10", "GT"}) == "int:0");
    std::string ttl2 = p.Read({"TTL", "e"});
    CHECK((ttl2 == "int:300" || ttl2 == "int:299"));
    CHECK(p.Write({"PERSIST", "e"}) == "int:1");
    CHECK(p.Read({"TTL", "e"}) == "int:-1");
    CHECK(p.Read({"PTTL", "e"}) == "int:-1");
    CHECK(p.Warm({"GET", "e"}) == "bulk:v");
    // A time in the past deletes the key.
    CHECK(p.Write({"EXPIRE", "e", "-1"}) == "int:1");
    CHECK(p.Read({"GET", "e"}) == "nil");
    CHECK(p.Read({"TTL", "e"}) == "int:-2");

    p.Write({"HSET", "eh", "f", "v"});
    CHECK(p.Warm({"HGET", "eh", "f"}) == "bulk:v");
    CHECK(p.Write({"PEXPIRE", "eh", "90000"}) == "int:1");
    CHECK(p.Read({"TTL", "eh"}) == "int:90");
    CHECK(p.Write({"PEXPIRE", "eh", "0"}) == "int:1");
    CHECK(p.Read({"HGET", "eh", "f"}) == "nil");
    CHECK(p.Read({"EXISTS", "eh"}) == "int:0");
    p.Verify();
  }

  SECTION("RENAME both ways") {
    p.Write({"SET", "src", "S"});
    p.Write({"SET", "dst", "D", "EX", "100"});
    CHECK(p.Warm({"GET", "src"}) == "bulk:S");
    CHECK(p.Warm({"GET", "dst"}) == "bulk:D");
    CHECK(Ttl100(p.Warm({"TTL", "dst"})));
    CHECK(p.Write({"RENAME", "src", "dst"}) == "status:OK");
    CHECK(p.Read({"GET", "src"}) == "nil");
    CHECK(p.Read({"GET", "dst"}) == "bulk:S");
    CHECK(p.Read({"TTL", "dst"}) == "int:-1");
    CHECK(p.Warm({"GET", "dst"}) == "bulk:S");
    CHECK(p.Write({"RENAME", "dst", "src"}) == "status:OK");
    CHECK(p.Read({"GET", "dst"}) == "nil");
    CHECK(p.Read({"GET", "src"}) == "bulk:S");
    // A hash renamed over a cached string, and RENAMENX.
    p.Write({"HSET", "rh", "f", "v"});
    CHECK(p.Warm({"HGET", "rh", "f"}) == "bulk:v");
    CHECK(p.Warm({"GET", "src"}) == "bulk:S");
    CHECK(p.Write({"RENAME", "rh", "src"}) == "status:OK");
    CHECK(p.Read({"HGET", "src", "f"}) == "bulk:v");
    CHECK(p.Read({"GET", "src"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Read({"TYPE", "src"}) == "status:hash");
    CHECK(p.Read({"HGET", "rh", "f"}) == "nil");
    p.Write({"SET", "nx1", "1"});
    CHECK(p.Warm({"GET", "nx1"}) == "bulk:1");
    CHECK(p.Write({"RENAMENX", "nx1", "nx2"}) == "int:1");
    CHECK(p.Read({"GET", "nx1"}) == "nil");
    CHECK(p.Read({"GET", "nx2"}) == "bulk:1");
    p.Verify();
  }

  SECTION("FLUSHALL and FLUSHDB") {
    for (int i = 0; i < 20; ++i) p.Write({"SET", "fl" + std::to_string(i), "v"});
    p.Write({"HSET", "flh", "f", "v"});
    for (int i = 0; i < 20; ++i) CHECK(p.Warm({"GET", "fl" + std::to_string(i)}) == "bulk:v");
    CHECK(p.Warm({"HGET", "flh", "f"}) == "bulk:v");
    CHECK(p.Write({"FLUSHALL"}) == "status:OK");
    for (int i = 0; i < 20; ++i) CHECK(p.Read({"GET", "fl" + std::to_string(i)}) == "nil");
    CHECK(p.Read({"HGET", "flh", "f"}) == "nil");
    CHECK(p.Read({"EXISTS", "fl0", "flh"}) == "int:0");
    // The reads above remembered the keys as absent (negative entries); nothing else survives.
    CHECK(InfoNumber(p.admin, "cache", "cache_keys") ==
          InfoNumber(p.admin, "cache", "cache_negative_keys"));
    p.Write({"SET", "fl0", "again"});
    CHECK(p.Warm({"GET", "fl0"}) == "bulk:again");
    CHECK(p.Write({"FLUSHDB"}) == "status:OK");
    CHECK(p.Read({"GET", "fl0"}) == "nil");
    p.Verify();
  }

  SECTION("hash writes") {
    p.Write({"HSET", "h", "f", "v0", "g", "w"});
    CHECK(p.Warm({"HGET", "h", "f"}) == "bulk:v0");
    CHECK(p.Write({"HSET", "h", "f", "v1"}) == "int:0");
    CHECK(p.Read({"HGET", "h", "f"}) == "bulk:v1");
    CHECK(p.Read({"HGETALL", "h"}) == "[bulk:f, bulk:v1, bulk:g, bulk:w]");
    CHECK(p.Write({"HMSET", "h", "a", "1"}) == "status:OK");
    CHECK(p.Read({"HGETALL", "h"}) == "[bulk:a, bulk:1, bulk:f, bulk:v1, bulk:g, bulk:w]");
    CHECK(p.Read({"HLEN", "h"}) == "int:3");
    CHECK(p.Warm({"HLEN", "h"}) == "int:3");
    CHECK(p.Write({"HINCRBY", "h", "a", "5"}) == "int:6");
    CHECK(p.Read({"HGET", "h", "a"}) == "bulk:6");
    CHECK(p.Warm({"HGET", "h", "a"}) == "bulk:6");
    CHECK(p.Write({"HINCRBYFLOAT", "h", "a", "0.5"}) == "bulk:6.5");
    CHECK(p.Read({"HGET", "h", "a"}) == "bulk:6.5");
    CHECK(p.Warm({"HEXISTS", "h", "n"}) == "int:0");
    CHECK(p.Write({"HSETNX", "h", "n", "new"}) == "int:1");
    CHECK(p.Read({"HEXISTS", "h", "n"}) == "int:1");
    CHECK(p.Read({"HGET", "h", "n"}) == "bulk:new");
    CHECK(p.Warm({"HSTRLEN", "h", "n"}) == "int:3");
    CHECK(p.Write({"HDEL", "h", "n", "a", "nofield"}) == "int:2");
    CHECK(p.Read({"HGET", "h", "n"}) == "nil");
    CHECK(p.Read({"HSTRLEN", "h", "n"}) == "int:0");
    CHECK(p.Read({"HMGET", "h", "f", "g", "a"}) == "[bulk:v1, bulk:w, nil]");
    // HDEL of the last fields: the key is gone.
    CHECK(p.Warm({"HGETALL", "h"}) == "[bulk:f, bulk:v1, bulk:g, bulk:w]");
    CHECK(p.Write({"HDEL", "h", "f", "g"}) == "int:2");
    CHECK(p.Read({"HGET", "h", "f"}) == "nil");
    CHECK(p.Read({"HGETALL", "h"}) == "[]");
    CHECK(p.Read({"HLEN", "h"}) == "int:0");
    CHECK(p.Read({"EXISTS", "h"}) == "int:0");
    CHECK(p.Read({"TYPE", "h"}) == "status:none");
    p.Verify();
  }

  SECTION("type changes") {
    p.Write({"HSET", "t", "f", "v"});
    CHECK(p.Warm({"HGET", "t", "f"}) == "bulk:v");
    CHECK(p.Warm({"TYPE", "t"}) == "status:hash");
    CHECK(p.Write({"DEL", "t"}) == "int:1");
    CHECK(p.Write({"SET", "t", "str"}) == "status:OK");
    CHECK(p.Read({"GET", "t"}) == "bulk:str");
    CHECK(p.Read({"TYPE", "t"}) == "status:string");
    CHECK(p.Read({"HGET", "t", "f"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Warm({"GET", "t"}) == "bulk:str");
    CHECK(p.Write({"DEL", "t"}) == "int:1");
    CHECK(p.Write({"HSET", "t", "f", "again"}) == "int:1");
    CHECK(p.Read({"HGET", "t", "f"}) == "bulk:again");
    CHECK(p.Read({"GET", "t"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Read({"TYPE", "t"}) == "status:hash");
    CHECK(p.Read({"MGET", "t"}) == "[nil]");
    // SET straight over a cached hash replaces it.
    CHECK(p.Warm({"HGETALL", "t"}) == "[bulk:f, bulk:again]");
    CHECK(p.Write({"SET", "t", "plain"}) == "status:OK");
    CHECK(p.Read({"GET", "t"}) == "bulk:plain");
    CHECK(p.Read({"TYPE", "t"}) == "status:string");
    CHECK(p.Read({"HGETALL", "t"}).rfind("err:WRONGTYPE", 0) == 0);
    // A failed write of another type leaves the cached value alone.
    CHECK(p.Warm({"GET", "t"}) == "bulk:plain");
    CHECK(p.Write({"HSET", "t", "f", "x"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Write({"LPUSH", "t", "x"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Read({"GET", "t"}) == "bulk:plain");
    // Another type's write after DEL of a cached string.
    CHECK(p.Write({"DEL", "t"}) == "int:1");
    CHECK(p.Write({"LPUSH", "t", "x"}) == "int:1");
    CHECK(p.Read({"TYPE", "t"}) == "status:list");
    CHECK(p.Read({"GET", "t"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Read({"EXISTS", "t"}) == "int:1");
    p.Verify();
  }
}

TEST_CASE(
    "negative entries: a known-absent key is answered in the loop, and every write that "
    "creates it is seen at once",
    "[cache]") {
  TestServer server;
  Pair p(server.port());
  // Every read the cache can answer for an absent key, with its reply, warmed into the cache
  // (the first read misses and remembers the absence; the second is answered in the loop).
  auto warm_absent = [&p](const std::string& k) {
    CHECK(p.Warm({"GET", k}) == "nil");
    CHECK(p.Warm({"HGET", k, "f"}) == "nil");
    CHECK(p.Warm({"EXISTS", k}) == "int:0");
    CHECK(p.Warm({"TTL", k}) == "int:-2");
    CHECK(p.Warm({"PTTL", k}) == "int:-2");
    CHECK(p.Warm({"TYPE", k}) == "status:none");
    CHECK(p.Warm({"STRLEN", k}) == "int:0");
    CHECK(p.Warm({"HLEN", k}) == "int:0");
    CHECK(p.Warm({"HGETALL", k}) == "[]");
    CHECK(p.Warm({"MGET", k, k}) == "[nil, nil]");
  };
  struct Creator {
    std::vector<std::vector<std::string>> setup;  // writes to other keys first
    std::vector<std::string> write;               // creates "k"
    std::string type;                             // TYPE k afterwards
    std::string get;                              // GET k afterwards
  };
  const std::string wt = "err:WRONGTYPE Operation against a key holding the wrong kind of value";
  std::vector<Creator> creators = {
      {{}, {"SET", "k", "v"}, "status:string", "bulk:v"},
      {{}, {"SET", "k", "v", "KEEPTTL"}, "status:string", "bulk:v"},
      {{}, {"SETNX", "k", "v"}, "status:string", "bulk:v"},
      {{}, {"SETEX", "k", "100", "v"}, "status:string", "bulk:v"},
      {{}, {"PSETEX", "k", "100000", "v"}, "status:string", "bulk:v"},
      {{}, {"GETSET", "k", "v"}, "status:string", "bulk:v"},
      {{}, {"MSET", "k", "v", "other", "o"}, "status:string", "bulk:v"},
      {{}, {"MSETNX", "k", "v", "other2", "o"}, "status:string", "bulk:v"},
      {{}, {"APPEND", "k", "v"}, "status:string", "bulk:v"},
      {{}, {"INCR", "k"}, "status:string", "bulk:1"},
      {{}, {"INCRBYFLOAT", "k", "1.5"}, "status:string", "bulk:1.5"},
      {{}, {"SETRANGE", "k", "0", "v"}, "status:string", "bulk:v"},
      {{}, {"HSET", "k", "f", "v"}, "status:hash", wt},
      {{}, {"HSETNX", "k", "f", "v"}, "status:hash", wt},
      {{}, {"HINCRBY", "k", "f", "1"}, "status:hash", wt},
      {{}, {"LPUSH", "k", "a"}, "status:list", wt},
      {{}, {"RPUSH", "k", "a"}, "status:list", wt},
      {{}, {"SADD", "k", "a"}, "status:set", wt},
      {{}, {"ZADD", "k", "1", "a"}, "status:zset", wt},
      {{{"SET", "src", "v"}}, {"RENAME", "src", "k"}, "status:string", "bulk:v"},
      {{{"SET", "src", "v"}}, {"RENAMENX", "src", "k"}, "status:string", "bulk:v"},
      {{{"RPUSH", "src", "a"}}, {"RPOPLPUSH", "src", "k"}, "status:list", wt},
      {{{"RPUSH", "src", "a"}}, {"LMOVE", "src", "k", "LEFT", "RIGHT"}, "status:list", wt},
      {{{"SADD", "src", "a"}}, {"SMOVE", "src", "k", "a"}, "status:set", wt},
      {{{"SADD", "src", "a"}}, {"SUNIONSTORE", "k", "src"}, "status:set", wt},
      {{{"ZADD", "src", "1", "a"}}, {"ZRANGESTORE", "k", "src", "0", "-1"}, "status:zset", wt},
  };
  for (const auto& c : creators) {
    INFO("creator " << c.write[0]);
    p.Write({"DEL", "k", "src"});
    for (const auto& w : c.setup) p.Write(w);
    warm_absent("k");
    p.Write(c.write);
    CHECK(p.Read({"TYPE", "k"}) == c.type);
    CHECK(p.Read({"EXISTS", "k"}) == "int:1");
    CHECK(p.Read({"GET", "k"}) == c.get);
    CHECK(p.Read({"TTL", "k"}) != "int:-2");
    if (c.type == "status:hash") CHECK(p.Read({"HGET", "k", "f"}) != "nil");
    p.Verify();
  }

  // A key that expires becomes a negative entry, and a new SET replaces it.
  p.Write({"DEL", "k"});
  // 1 s: a sanitizer build on a loaded machine took more than 100 ms to reach the first GET.
  CHECK(p.Write({"SET", "k", "short", "PX", "1000"}) == "status:OK");
  CHECK(p.Warm({"GET", "k"}) == "bulk:short");
  SleepMs(1100);
  CHECK(p.Read({"GET", "k"}) == "nil");
  CHECK(p.Warm({"GET", "k"}) == "nil");
  CHECK(p.Write({"SET", "k", "again"}) == "status:OK");
  CHECK(p.Read({"GET", "k"}) == "bulk:again");
  // EXPIRE/PERSIST of a known-absent key create nothing; the absence stays right.
  p.Write({"DEL", "k"});
  warm_absent("k");
  CHECK(p.Write({"EXPIRE", "k", "100"}) == "int:0");
  CHECK(p.Write({"PERSIST", "k"}) == "int:0");
  CHECK(p.Write({"HDEL", "k", "f"}) == "int:0");
  CHECK(p.Warm({"GET", "k"}) == "nil");
  // FLUSHALL drops negative entries with the rest; a SET after it is seen.
  warm_absent("gone");
  CHECK(p.Write({"FLUSHALL"}) == "status:OK");
  CHECK(p.Read({"GET", "gone"}) == "nil");
  CHECK(p.Write({"SET", "gone", "back"}) == "status:OK");
  CHECK(p.Read({"GET", "gone"}) == "bulk:back");
  p.Verify();

  // A known-absent key costs the pool nothing: answered in the network thread.
  warm_absent("still-absent");
  CHECK(InfoNumber(p.admin, "cache", "cache_negative_hits") > 0);
  CHECK(InfoNumber(p.admin, "cache", "cache_negative_keys") > 0);
}

// SET over a key the cache holds rewrites the entry in place (server/commands/cache_access.h,
// CacheOverwriteString): counted as an update, not a fill, and what readers see (value, type,
// TTL) and what the entry is charged are those of a fresh entry.
TEST_CASE("a SET over a cached key rewrites its entry in place", "[cache]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  const std::string big(1000, 'b');
  REQUIRE(Run(c, {"SET", "k1", big}) == "status:OK");
  REQUIRE(RunRtc(admin, c, {"GET", "k1"}) == "bulk:" + big);

  // Big value -> small one: the charge is the small value's, as a new entry of it would be.
  const uint64_t fills = InfoNumber(admin, "cache", "cache_fills");
  const uint64_t updates = InfoNumber(admin, "cache", "cache_updates");
  REQUIRE(Run(c, {"SET", "k1", "v2"}) == "status:OK");
  CHECK(InfoNumber(admin, "cache", "cache_fills") == fills);
  CHECK(InfoNumber(admin, "cache", "cache_updates") == updates + 1);
  CHECK(RunRtc(admin, c, {"GET", "k1"}) == "bulk:v2");
  const uint64_t in_place = InfoNumber(admin, "cache", "cache_used_bytes");
  REQUIRE(Run(c, {"DEL", "k1"}) == "int:1");
  REQUIRE(Run(c, {"SET", "k1", "v2"}) == "status:OK");  // not cached now: a new entry
  CHECK(InfoNumber(admin, "cache", "cache_used_bytes") == in_place);

  // TTLs: SET ... EX gives the cached entry one, a plain SET clears it.
  REQUIRE(Run(c, {"SET", "k1", "v3", "EX", "1000"}) == "status:OK");
  std::string ttl = RunRtc(admin, c, {"TTL", "k1"});
  REQUIRE(ttl.rfind("int:", 0) == 0);
  CHECK(std::stoll(ttl.substr(4)) > 900);
  REQUIRE(Run(c, {"SET", "k1", "v4"}) == "status:OK");
  CHECK(RunRtc(admin, c, {"TTL", "k1"}) == "int:-1");
  CHECK(RunRtc(admin, c, {"GET", "k1"}) == "bulk:v4");

  // Another type cached under the key: the entry becomes a string.
  REQUIRE(Run(c, {"HSET", "h", "f", "v"}) == "int:1");
  Run(c, {"HGET", "h", "f"});
  REQUIRE(RunRtc(admin, c, {"HGET", "h", "f"}) == "bulk:v");
  REQUIRE(Run(c, {"SET", "h", "s"}) == "status:OK");
  CHECK(RunRtc(admin, c, {"GET", "h"}) == "bulk:s");
  CHECK(Run(c, {"TYPE", "h"}) == "status:string");
  CHECK(Run(c, {"HGET", "h", "f"}).rfind("err:WRONGTYPE", 0) == 0);
  CHECK(CacheVerify(admin).mismatches == 0);
}

TEST_CASE("an expired cached entry is never served", "[cache]") {
  TestServer server;
  Client w(server.port()), r(server.port()), admin(server.port());
  REQUIRE(Run(w, {"SET", "x", "v", "PX", "5000"}) == "status:OK");
  REQUIRE(Run(w, {"HSET", "xh", "f", "v"}) == "int:1");
  REQUIRE(Run(w, {"PEXPIRE", "xh", "5000"}) == "int:1");
  CHECK(RunRtc(admin, r, {"GET", "x"}) == "bulk:v");
  Run(r, {"HGET", "xh", "f"});
  CHECK(RunRtc(admin, r, {"HGET", "xh", "f"}) == "bulk:v");
  std::string pttl = RunRtc(admin, r, {"PTTL", "x"});
  CHECK(pttl.rfind("int:", 0) == 0);
  CHECK(std::stoll(pttl.substr(4)) > 0);
  CHECK(std::stoll(pttl.substr(4)) <= 5000);
  // 5 s TTLs: a loaded machine must not expire them before the reads above (2 s did, beside
  // two sanitizer runs).
  SleepMs(5300);
  Client r2(server.port());
  CHECK(Run(r2, {"GET", "x"}) == "nil");
  CHECK(Run(r2, {"TTL", "x"}) == "int:-2");
  CHECK(Run(r2, {"PTTL", "x"}) == "int:-2");
  CHECK(Run(r2, {"EXISTS", "x", "xh"}) == "int:0");
  CHECK(Run(r2, {"HGET", "xh", "f"}) == "nil");
  CHECK(Run(r2, {"HGETALL", "xh"}) == "[]");
  CHECK(Run(r, {"GET", "x"}) == "nil");
  CHECK(Run(r2, {"MGET", "x"}) == "[nil]");
  CHECK(CacheVerify(admin).mismatches == 0);
}

// A worker runs a whole pipelined batch with one "now" (taken when the batch starts), so later
// commands of a long batch must still not be answered from cache entries that have expired or
// that an earlier command of the batch deleted.
TEST_CASE("an expired or expired-away entry is not served later in the same pipeline", "[cache]") {
  TestServer server;
  Client c(server.port()), other(server.port()), admin(server.port());

  SECTION("a TTL that runs out while the batch runs") {
    c.Append({"SET", "k", "v", "PX", "50"});
    c.Append({"DEBUG", "SLEEP", "0.1"});
    c.Append({"GET", "k"});
    c.Append({"PTTL", "k"});
    c.Append({"EXISTS", "k"});
    c.Append({"MGET", "k"});
    c.Append({"STRLEN", "k"});
    std::vector<std::string> expected = {"status:OK", "status:OK", "nil",  "int:-2",
                                         "int:0",     "[nil]",     "int:0"};
    for (size_t i = 0; i < expected.size(); ++i) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      INFO("pipeline entry " << i);
      CHECK(Describe(r) == expected[i]);
    }
    CHECK(Run(other, {"GET", "k"}) == "nil");
  }

  SECTION("EXPIRE k 0 later in a batch") {
    REQUIRE(Run(c, {"SET", "k", "v"}) == "status:OK");
    CHECK(RunRtc(admin, other, {"GET", "k"}) == "bulk:v");
    c.Append({"DEBUG", "SLEEP", "0.02"});
    c.Append({"EXPIRE", "k", "0"});
    c.Append({"GET", "k"});
    c.Append({"TTL", "k"});
    c.Append({"EXISTS", "k"});
    std::vector<std::string> expected = {"status:OK", "int:1", "nil", "int:-2", "int:0"};
    for (size_t i = 0; i < expected.size(); ++i) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      INFO("pipeline entry " << i);
      CHECK(Describe(r) == expected[i]);
    }
    CHECK(Run(other, {"GET", "k"}) == "nil");
    CHECK(Run(other, {"TTL", "k"}) == "int:-2");
  }
  CHECK(CacheVerify(admin).mismatches == 0);
}

TEST_CASE("CONFIG SET cache-maxmemory 0 turns the cache off, and back on", "[cache]") {
  TestServer server;
  Client c(server.port()), w(server.port()), admin(server.port());
  REQUIRE(Run(w, {"SET", "k", "v1"}) == "status:OK");
  REQUIRE(Run(w, {"HSET", "h", "f", "a"}) == "int:1");
  Run(c, {"HGET", "h", "f"});
  CHECK(RunRtc(admin, c, {"GET", "k"}) == "bulk:v1");
  CHECK(RunRtc(admin, c, {"HGET", "h", "f"}) == "bulk:a");
  CHECK(InfoNumber(admin, "cache", "cache_keys") >= 2);

  REQUIRE(Run(admin, {"CONFIG", "SET", "cache-maxmemory", "0"}) == "status:OK");
  CHECK(Run(admin, {"CONFIG", "GET", "cache-maxmemory"}) == "[bulk:cache-maxmemory, bulk:0]");
  auto fields = InfoFields(InfoText(admin, "cache"));
  CHECK(fields["cache_enabled"] == "no");
  CHECK(fields["cache_keys"] == "0");
  CHECK(fields["cache_maxmemory"] == "0");
  uint64_t rtc = std::stoull(fields["cache_rtc_answers"]);
  uint64_t fills = std::stoull(fields["cache_fills"]);
  for (int i = 0; i < 20; ++i) {
    CHECK(Run(c, {"GET", "k"}) == "bulk:v1");
    CHECK(Run(c, {"HGET", "h", "f"}) == "bulk:a");
  }
  // Writes while the cache is off, then reads of them.
  CHECK(Run(w, {"SET", "k", "v2"}) == "status:OK");
  CHECK(Run(w, {"HSET", "h", "f", "b"}) == "int:0");
  CHECK(Run(c, {"GET", "k"}) == "bulk:v2");
  CHECK(Run(c, {"HGET", "h", "f"}) == "bulk:b");
  CHECK(Run(c, {"MGET", "k", "h"}) == "[bulk:v2, nil]");
  fields = InfoFields(InfoText(admin, "cache"));
  CHECK(std::stoull(fields["cache_rtc_answers"]) == rtc);
  CHECK(std::stoull(fields["cache_fills"]) == fills);
  CHECK(fields["cache_keys"] == "0");

  REQUIRE(Run(admin, {"CONFIG", "SET", "cache-maxmemory", "64mb"}) == "status:OK");
  fields = InfoFields(InfoText(admin, "cache"));
  CHECK(fields["cache_enabled"] == "yes");
  CHECK(fields["cache_maxmemory"] == std::to_string(64ull << 20));
  // Nothing from before the switch-off comes back.
  CHECK(Run(c, {"GET", "k"}) == "bulk:v2");
  CHECK(Run(c, {"HGET", "h", "f"}) == "bulk:b");
  CHECK(RunRtc(admin, c, {"GET", "k"}) == "bulk:v2");
  CHECK(RunRtc(admin, c, {"HGET", "h", "f"}) == "bulk:b");
  CHECK(Run(w, {"SET", "k", "v3"}) == "status:OK");
  CHECK(RunRtc(admin, c, {"GET", "k"}) == "bulk:v3");
  CHECK(InfoNumber(admin, "cache", "cache_rtc_answers") > rtc);
  VerifyResult v = CacheVerify(admin);
  CHECK(v.checked >= 2);
  CHECK(v.mismatches == 0);
}

namespace {

// ---- the coherence stress ----------------------------------------------------------------------

constexpr int kThreads = 8;
constexpr int kSharedStrings = 16;
constexpr int kSharedHashes = 8;
constexpr int kOwnStrings = 16;
constexpr int kOwnCounters = 4;
constexpr int kOwnHashes = 4;
constexpr int kOwnLists = 2;

struct StressShared {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> operations{0};
  std::atomic<uint64_t> violations{0};
  std::atomic<uint64_t> signal_checks{0};
  std::atomic<int64_t> published[kThreads / 2];  // pair p: the last sig value acknowledged
  std::mutex mu;
  std::vector<std::string> messages;  // the first few violations, for the report
  StressShared() {
    for (auto& p : published) p.store(0);
  }
  void Violation(const std::string& what) {
    violations.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu);
    if (messages.size() < 20) messages.push_back(what);
  }
};

// What one thread knows about its own keys.
struct OwnModel {
  std::map<std::string, std::string> strings;  // present keys only
  std::set<std::string> with_ttl;              // keys that have a TTL
  std::map<std::string, int64_t> counters;
  std::map<std::string, std::map<std::string, std::string>> hashes;  // non-empty hashes only
  std::map<std::string, std::deque<std::string>> lists;              // empty = absent
};

bool WellFormedShared(const std::string& s) {
  for (char ch : s) {
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '+' || ch == '.')) {
      return false;
    }
  }
  return true;
}

// One queued command and how to check its reply.
struct Op {
  std::vector<std::string> args;
  std::string expected;                              // exact Describe() result; empty: use `check`
  int check = 0;                                     // see CheckShared
  int64_t min_int = 0;                               // kSharedCounter / kSignal lower bounds
  std::map<std::string, std::string> expected_hash;  // kOwnHashAll
  std::vector<std::string> mget_expect;              // kMixedMget: "" = shared (well-formed)
};

enum Check {
  kExact = 0,
  kSharedString,   // GET of a shared string key: nil or well-formed bulk
  kSharedWrite,    // status OK / integer / not-an-integer error; never WRONGTYPE
  kSharedHashGet,  // HGET of a shared hash: nil or well-formed bulk
  kSharedHashAll,  // HGETALL of a shared hash: even, unique fields, well-formed
  kSharedInt,      // integer reply (HSET/HDEL/EXPIRE/DEL counts)
  kSharedCounter,  // INCR of the shared counter: strictly above min_int
  kSignal,         // GET sig:<p>: integer value >= min_int
  kOwnHashAll,     // HGETALL of an own hash == expected_hash (as a map)
  kMixedMget,      // MGET over own and shared keys
  kTtlPositive,    // TTL of an own key with a TTL: 1..1000
  kSharedType,     // TYPE of a shared key: the given type or none
};

std::string CheckReply(const Op& op, const Reply& r) {
  auto bad = [&](const std::string& why) {
    std::string cmd;
    for (const auto& a : op.args) cmd += (cmd.empty() ? "" : " ") + a.substr(0, 40);
    return cmd + " -> " + Describe(r).substr(0, 200) + " (" + why + ")";
  };
  switch (op.check) {
    case kExact:
      if (Describe(r) != op.expected) return bad("expected " + op.expected.substr(0, 200));
      return "";
    case kSharedString:
    case kSharedHashGet:
      if (r.is_nil()) return "";
      if (r.type != REDIS_REPLY_STRING || !WellFormedShared(r.str)) return bad("malformed");
      return "";
    case kSharedWrite:
      if (r.type == REDIS_REPLY_STATUS && r.str == "OK") return "";
      if (r.type == REDIS_REPLY_INTEGER) return "";
      if (r.is_error() && r.str.rfind("ERR value is not an integer", 0) == 0) return "";
      return bad("unexpected reply to a shared write");
    case kSharedHashAll: {
      if (r.type != REDIS_REPLY_ARRAY || r.elements.size() % 2 != 0) return bad("malformed");
      std::set<std::string> fields;
      for (size_t i = 0; i < r.elements.size(); i += 2) {
        if (r.elements[i].type != REDIS_REPLY_STRING ||
            r.elements[i + 1].type != REDIS_REPLY_STRING ||
            !WellFormedShared(r.elements[i + 1].str)) {
          return bad("malformed pair");
        }
        if (!fields.insert(r.elements[i].str).second) return bad("duplicate field");
      }
      return "";
    }
    case kSharedInt:
      if (r.type != REDIS_REPLY_INTEGER) return bad("not an integer");
      return "";
    case kSharedCounter:
      if (r.type != REDIS_REPLY_INTEGER) return bad("not an integer");
      if (r.integer <= op.min_int) {
        return bad("counter went from " + std::to_string(op.min_int) + " to " +
                   std::to_string(r.integer));
      }
      return "";
    case kSignal: {
      if (op.min_int == 0 && r.is_nil()) return "";
      if (r.type != REDIS_REPLY_STRING) return bad("not a bulk");
      int64_t v = std::strtoll(r.str.c_str(), nullptr, 10);
      if (v < op.min_int) {
        return bad("read " + std::to_string(v) + " after " + std::to_string(op.min_int) +
                   " was acknowledged");
      }
      return "";
    }
    case kOwnHashAll: {
      if (r.type != REDIS_REPLY_ARRAY || r.elements.size() % 2 != 0) return bad("malformed");
      std::map<std::string, std::string> got;
      for (size_t i = 0; i + 1 < r.elements.size(); i += 2) {
        got[r.elements[i].str] = r.elements[i + 1].str;
      }
      if (got != op.expected_hash || got.size() * 2 != r.elements.size()) {
        return bad("hash differs from the model (" + std::to_string(op.expected_hash.size()) +
                   " fields expected)");
      }
      return "";
    }
    case kMixedMget: {
      if (r.type != REDIS_REPLY_ARRAY || r.elements.size() != op.mget_expect.size()) {
        return bad("malformed");
      }
      for (size_t i = 0; i < r.elements.size(); ++i) {
        const Reply& e = r.elements[i];
        if (op.mget_expect[i].empty()) {
          if (!e.is_nil() && (e.type != REDIS_REPLY_STRING || !WellFormedShared(e.str))) {
            return bad("malformed shared element");
          }
        } else if (Describe(e) != op.mget_expect[i]) {
          return bad("element " + std::to_string(i) + " expected " +
                     op.mget_expect[i].substr(0, 100));
        }
      }
      return "";
    }
    case kTtlPositive:
      if (r.type != REDIS_REPLY_INTEGER || r.integer < 1 || r.integer > 1000) {
        return bad("TTL out of range");
      }
      return "";
    case kSharedType:
      if (r.type != REDIS_REPLY_STATUS || (r.str != op.expected && r.str != "none")) {
        return bad("type");
      }
      return "";
  }
  return bad("unknown check");
}

std::string RandomValue(std::mt19937_64& rng, int thread, uint64_t seq) {
  std::string v = "t" + std::to_string(thread) + "-" + std::to_string(seq) + "-";
  size_t pad = std::uniform_int_distribution<size_t>(10, 300)(rng);
  v.append(pad, static_cast<char>('a' + seq % 26));
  return v;
}

void StressThread(int port, int t, StressShared* shared, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  Client c(port, 30000);
  if (!c.connected()) {
    shared->Violation("thread " + std::to_string(t) + ": connect failed");
    return;
  }
  OwnModel model;
  int64_t last_counter = 0;
  uint64_t seq = 0;
  int64_t next_signal = 0;
  const int pair = t / 2;
  const bool signaller = t % 2 == 0;
  const std::string sig_key = "sig:" + std::to_string(pair);
  std::string prefix = "own:" + std::to_string(t) + ":";

  auto own_s = [&](int i) { return prefix + "s:" + std::to_string(i); };
  auto own_n = [&](int i) { return prefix + "n:" + std::to_string(i); };
  auto own_h = [&](int i) { return prefix + "h:" + std::to_string(i); };
  auto own_l = [&](int i) { return prefix + "l:" + std::to_string(i); };
  auto sh_s = [&](int i) { return "sh:s:" + std::to_string(i); };
  auto sh_h = [&](int i) { return "sh:h:" + std::to_string(i); };
  auto bulk_or_nil = [](const std::map<std::string, std::string>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? std::string("nil") : "bulk:" + it->second;
  };

  while (!shared->stop.load()) {
    std::vector<Op> batch;
    int64_t signal_sent = 0;  // this batch publishes this value once acknowledged
    // Read what the partner has had acknowledged *before* this batch is sent.
    int64_t signal_floor = shared->published[pair].load(std::memory_order_acquire);
    int ops = 10 + pick(30);
    for (int n = 0; n < ops; ++n) {
      Op op;
      int kind = pick(100);
      ++seq;
      if (pick(8) == 0) {  // own list: pushes and pops (which edit the cached head), reads
        std::string k = own_l(pick(kOwnLists));
        std::deque<std::string>& list = model.lists[k];
        const int what = pick(list.size() > 30 ? 6 : 8);
        if (what < 2) {  // LPOP / RPOP
          const bool left = what == 0;
          op.args = {left ? "LPOP" : "RPOP", k};
          op.expected = list.empty() ? "nil" : "bulk:" + (left ? list.front() : list.back());
          if (!list.empty()) left ? list.pop_front() : list.pop_back();
        } else if (what < 4) {  // LRANGE near the head (cached) or anywhere
          const int64_t start = pick(6) - 1, stop = pick(3) == 0 ? -1 : pick(12) - 2;
          op.args = {"LRANGE", k, std::to_string(start), std::to_string(stop)};
          op.expected = ListRangeReply(list, start, stop);
        } else if (what == 4) {
          const int64_t index = pick(10) - 3;
          op.args = {"LINDEX", k, std::to_string(index)};
          op.expected = ListIndexReply(list, index);
        } else if (what == 5) {
          op.args = {"LLEN", k};
          op.expected = "int:" + std::to_string(list.size());
        } else {  // LPUSH / RPUSH
          const bool left = what == 6;
          const std::string element = "t" + std::to_string(t) + "-" + std::to_string(seq);
          left ? list.push_front(element) : list.push_back(element);
          op.args = {left ? "LPUSH" : "RPUSH", k, element};
          op.expected = "int:" + std::to_string(list.size());
        }
      } else if (kind < 8) {  // own string: SET
        std::string k = own_s(pick(kOwnStrings)), v = RandomValue(rng, t, seq);
        op.args = {"SET", k, v};
        op.expected = "status:OK";
        model.strings[k] = v;
        model.with_ttl.erase(k);
      } else if (kind < 12) {  // own string: APPEND
        std::string k = own_s(pick(kOwnStrings));
        std::string& cur = model.strings[k];  // absent -> created empty
        if (cur.size() > 800) {
          cur = "reset" + std::to_string(seq);
          op.args = {"SET", k, cur};
          op.expected = "status:OK";
          model.with_ttl.erase(k);
        } else {
          std::string suffix = "+" + std::to_string(seq);
          cur += suffix;
          op.args = {"APPEND", k, suffix};
          op.expected = "int:" + std::to_string(cur.size());
        }
      } else if (kind < 16) {  // own counter: INCR / INCRBY
        std::string k = own_n(pick(kOwnCounters));
        int64_t by = pick(3) == 0 ? pick(1000) - 500 : 1;
        int64_t& cur = model.counters[k];
        cur += by;
        op.args = by == 1 ? std::vector<std::string>{"INCR", k}
                          : std::vector<std::string>{"INCRBY", k, std::to_string(by)};
        op.expected = "int:" + std::to_string(cur);
      } else if (kind < 18) {  // own: DEL (string or counter)
        std::string k = pick(2) ? own_s(pick(kOwnStrings)) : own_n(pick(kOwnCounters));
        bool present = model.strings.count(k) || model.counters.count(k);
        model.strings.erase(k);
        model.counters.erase(k);
        model.with_ttl.erase(k);
        op.args = {"DEL", k};
        op.expected = present ? "int:1" : "int:0";
      } else if (kind < 20) {  // own: EXPIRE 1000 / EXPIRE 0 (delete) / PERSIST
        std::string k = own_s(pick(kOwnStrings));
        bool present = model.strings.count(k) > 0;
        int what = pick(3);
        if (what == 0) {
          op.args = {"EXPIRE", k, "1000"};
          op.expected = present ? "int:1" : "int:0";
          if (present) model.with_ttl.insert(k);
        } else if (what == 1) {
          op.args = {"EXPIRE", k, "0"};
          op.expected = present ? "int:1" : "int:0";
          model.strings.erase(k);
          model.with_ttl.erase(k);
        } else {
          op.args = {"PERSIST", k};
          op.expected = present && model.with_ttl.count(k) ? "int:1" : "int:0";
          model.with_ttl.erase(k);
        }
      } else if (kind < 30) {  // own: GET
        std::string k = pick(4) ? own_s(pick(kOwnStrings)) : own_n(pick(kOwnCounters));
        op.args = {"GET", k};
        auto it = model.counters.find(k);
        op.expected = it != model.counters.end() ? "bulk:" + std::to_string(it->second)
                                                 : bulk_or_nil(model.strings, k);
      } else if (kind < 32) {  // own: STRLEN / EXISTS / TTL
        std::string k = own_s(pick(kOwnStrings));
        bool present = model.strings.count(k) > 0;
        int what = pick(3);
        if (what == 0) {
          op.args = {"STRLEN", k};
          op.expected = "int:" + std::to_string(present ? model.strings[k].size() : 0);
        } else if (what == 1) {
          std::string k2 = own_s(pick(kOwnStrings));
          op.args = {"EXISTS", k, k2};
          op.expected =
              "int:" + std::to_string((present ? 1 : 0) + (model.strings.count(k2) ? 1 : 0));
        } else {
          op.args = {"TTL", k};
          if (!present) {
            op.expected = "int:-2";
          } else if (!model.with_ttl.count(k)) {
            op.expected = "int:-1";
          } else {
            op.check = kTtlPositive;
          }
        }
      } else if (kind < 36) {  // MGET over own and shared keys
        op.args = {"MGET"};
        int count = 2 + pick(4);
        for (int i = 0; i < count; ++i) {
          if (pick(2)) {
            std::string k = own_s(pick(kOwnStrings));
            op.args.push_back(k);
            op.mget_expect.push_back(bulk_or_nil(model.strings, k));
          } else {
            op.args.push_back(sh_s(pick(kSharedStrings)));
            op.mget_expect.push_back("");
          }
        }
        op.check = kMixedMget;
      } else if (kind < 42) {  // own hash: HSET
        std::string k = own_h(pick(kOwnHashes));
        std::string f = "f" + std::to_string(pick(12)), v = RandomValue(rng, t, seq);
        auto& h = model.hashes[k];
        bool added = h.count(f) == 0;
        h[f] = v;
        op.args = {"HSET", k, f, v};
        op.expected = added ? "int:1" : "int:0";
      } else if (kind < 45) {  // own hash: HDEL (sometimes of every field)
        std::string k = own_h(pick(kOwnHashes));
        auto it = model.hashes.find(k);
        op.args = {"HDEL", k};
        int removed = 0;
        if (it != model.hashes.end() && pick(3) == 0) {
          for (const auto& [f, v] : it->second) op.args.push_back(f);
          removed = static_cast<int>(it->second.size());
          model.hashes.erase(it);
        } else {
          std::string f = "f" + std::to_string(pick(12));
          op.args.push_back(f);
          if (it != model.hashes.end() && it->second.erase(f)) ++removed;
          if (it != model.hashes.end() && it->second.empty()) model.hashes.erase(it);
        }
        op.expected = "int:" + std::to_string(removed);
      } else if (kind < 52) {  // own hash: HGET / HGETALL / HLEN
        std::string k = own_h(pick(kOwnHashes));
        auto it = model.hashes.find(k);
        int what = pick(3);
        if (what == 0) {
          std::string f = "f" + std::to_string(pick(12));
          op.args = {"HGET", k, f};
          op.expected = it == model.hashes.end() ? "nil" : bulk_or_nil(it->second, f);
        } else if (what == 1) {
          op.args = {"HGETALL", k};
          op.check = kOwnHashAll;
          if (it != model.hashes.end()) op.expected_hash = it->second;
        } else {
          op.args = {"HLEN", k};
          op.expected = "int:" + std::to_string(it == model.hashes.end() ? 0 : it->second.size());
        }
      } else if (kind < 62) {  // shared strings: writes
        std::string k = sh_s(pick(kSharedStrings));
        int what = pick(6);
        if (what == 0) {
          op.args = {"SET", k, RandomValue(rng, t, seq)};
        } else if (what == 1) {
          op.args = {"SET", k, std::to_string(pick(1000))};
        } else if (what == 2) {
          op.args = {"INCR", k};
        } else if (what == 3) {
          op.args = {"APPEND", k, "+" + std::to_string(seq % 10)};
        } else if (what == 4) {
          op.args = {"DEL", k};
        } else {
          op.args = {"PEXPIRE", k, std::to_string(20 + pick(200))};
        }
        op.check = kSharedWrite;
      } else if (kind < 72) {  // shared strings: reads
        std::string k = sh_s(pick(kSharedStrings));
        if (pick(5) == 0) {
          op.args = {"TYPE", k};
          op.expected = "string";
          op.check = kSharedType;
        } else {
          op.args = {"GET", k};
          op.check = kSharedString;
        }
      } else if (kind < 78) {  // shared hashes: writes
        std::string k = sh_h(pick(kSharedHashes));
        std::string f = "f" + std::to_string(pick(8));
        int what = pick(4);
        if (what < 2) {
          op.args = {"HSET", k, f, RandomValue(rng, t, seq)};
        } else if (what == 2) {
          op.args = {"HDEL", k, f};
        } else {
          op.args = {"HDEL", k, "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};
        }
        op.check = kSharedInt;
      } else if (kind < 86) {  // shared hashes: reads
        std::string k = sh_h(pick(kSharedHashes));
        int what = pick(3);
        if (what == 0) {
          op.args = {"HGET", k, "f" + std::to_string(pick(8))};
          op.check = kSharedHashGet;
        } else if (what == 1) {
          op.args = {"HGETALL", k};
          op.check = kSharedHashAll;
        } else {
          op.args = {"TYPE", k};
          op.expected = "hash";
          op.check = kSharedType;
        }
      } else if (kind < 92) {  // shared counter, strictly increasing per connection
        op.args = {"INCR", "sh:ctr"};
        op.check = kSharedCounter;
        op.min_int = -1;  // filled in while checking
      } else {            // the cross-connection signal
        if (signaller) {
          if (signal_sent == 0) {
            signal_sent = ++next_signal;
            op.args = {"SET", sig_key, std::to_string(signal_sent)};
            op.expected = "status:OK";
          } else {
            op.args = {"GET", sig_key};
            op.check = kSignal;
            op.min_int = signal_sent;  // read-your-writes of the SET earlier in this batch
          }
        } else {
          op.args = {"GET", sig_key};
          op.check = kSignal;
          op.min_int = signal_floor;
          shared->signal_checks.fetch_add(1);
        }
      }
      batch.push_back(std::move(op));
    }

    for (const auto& op : batch) c.Append(op.args);
    for (auto& op : batch) {
      Reply r;
      if (!c.GetReply(&r)) {
        shared->Violation("thread " + std::to_string(t) + ": connection error on " + op.args[0]);
        return;
      }
      shared->operations.fetch_add(1, std::memory_order_relaxed);
      if (op.check == kSharedCounter) {
        op.min_int = last_counter;
        if (r.type == REDIS_REPLY_INTEGER) last_counter = r.integer;
      }
      std::string problem = CheckReply(op, r);
      if (!problem.empty()) shared->Violation("thread " + std::to_string(t) + ": " + problem);
    }
    // Every SET of this batch is acknowledged now: tell the partner.
    if (signal_sent > 0) shared->published[pair].store(signal_sent, std::memory_order_release);
  }

  // Final check of every own key from this connection.
  for (int i = 0; i < kOwnStrings; ++i) {
    Reply r;
    Op op;
    op.args = {"GET", own_s(i)};
    op.expected = bulk_or_nil(model.strings, own_s(i));
    if (!c.TryCommand(op.args, &r)) return shared->Violation("final GET: connection error");
    std::string problem = CheckReply(op, r);
    if (!problem.empty()) shared->Violation("thread " + std::to_string(t) + " final: " + problem);
  }
  for (int i = 0; i < kOwnHashes; ++i) {
    Reply r;
    Op op;
    op.args = {"HGETALL", own_h(i)};
    op.check = kOwnHashAll;
    auto it = model.hashes.find(own_h(i));
    if (it != model.hashes.end()) op.expected_hash = it->second;
    if (!c.TryCommand(op.args, &r)) return shared->Violation("final HGETALL: connection error");
    std::string problem = CheckReply(op, r);
    if (!problem.empty()) shared->Violation("thread " + std::to_string(t) + " final: " + problem);
  }
  for (int i = 0; i < kOwnLists; ++i) {
    Reply r;
    Op op;
    op.args = {"LRANGE", own_l(i), "0", "-1"};
    op.expected = ListRangeReply(model.lists[own_l(i)], 0, -1);
    if (!c.TryCommand(op.args, &r)) return shared->Violation("final LRANGE: connection error");
    std::string problem = CheckReply(op, r);
    if (!problem.empty()) shared->Violation("thread " + std::to_string(t) + " final: " + problem);
  }
}

int StressSeconds() {
  const char* env = std::getenv("ROCKCACHE_STRESS_SECONDS");
  int s = env ? std::atoi(env) : 0;
  return s > 0 ? s : 25;
}

}  // namespace

TEST_CASE("coherence stress: 8 clients, few keys, a 64kb cache that evicts all the time",
          "[cache]") {
  // Two workers, whatever the machine: a 2-core machine's default is one, and the coherence
  // rule must hold between workers running groups at once (as every bigger machine does).
  TestServer server({"--cache-maxmemory", "64kb", "--pool-threads", "2"});
  Client admin(server.port(), 30000);
  REQUIRE(InfoNumber(admin, "cache", "cache_maxmemory") == 64 * 1024);

  StressShared shared;
  std::vector<std::thread> threads;
  std::random_device rd;
  uint64_t base_seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  INFO("seed " << base_seed);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(StressThread, server.port(), t, &shared, base_seed + t);
  }
  const int seconds = StressSeconds();
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(seconds) &&
         shared.violations.load() < 1000) {
    SleepMs(100);
  }
  shared.stop = true;
  for (auto& th : threads) th.join();

  auto cache = InfoFields(InfoText(admin, "cache"));
  VerifyResult verify = CacheVerify(admin);
  uint64_t ops = shared.operations.load(), violations = shared.violations.load();
  std::cout << "coherence stress: " << ops << " operations, " << violations << " violations, "
            << verify.mismatches << " mismatches (" << seconds << " s, " << kThreads << " clients, "
            << shared.signal_checks.load() << " cross-connection checks, "
            << "cache_evictions=" << cache["cache_evictions"]
            << " cache_hits=" << cache["cache_hits"] << " cache_misses=" << cache["cache_misses"]
            << " cache_rtc_answers=" << cache["cache_rtc_answers"]
            << " cache_coalesced_misses=" << cache["cache_coalesced_misses"]
            << " cache_negative_hits=" << cache["cache_negative_hits"]
            << " cache_rtc_storage_fills=" << cache["cache_rtc_storage_fills"]
            << " cache_used_bytes=" << cache["cache_used_bytes"] << ")" << std::endl;
  std::string first_violations;
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    for (const auto& m : shared.messages) first_violations += "\n  " + m;
  }
  if (!first_violations.empty()) std::cout << "first violations:" << first_violations << std::endl;
  CHECK(ops > 10000);
  CHECK(shared.signal_checks.load() > 100);
  {
    INFO("first violations:" << first_violations);
    CHECK(violations == 0);
  }
  INFO(verify.text);
  CHECK(verify.checked > 0);
  CHECK(verify.mismatches == 0);
  CHECK(std::stoull(cache["cache_evictions"]) > 0);
  CHECK(std::stoull(cache["cache_rtc_answers"]) > 0);
  CHECK(std::stoull(cache["cache_rtc_storage_fills"]) > 0);  // misses filled without a hop
  CHECK(std::stoull(cache["cache_used_bytes"]) <= 64 * 1024);
}

namespace {

uint64_t StatusKb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::stoull(line.substr(field.size() + 1));  // "  123456 kB"
    }
  }
  return 0;
}

}  // namespace

TEST_CASE("the cache stays in its budget under a million keys", "[cache][memory]") {
  TestServer server({"--cache-maxmemory", "64mb"});
  // DEBUG CACHE-VERIFY at the end reads storage for each of ~250k cached keys: ~30 s alone in
  // an ASan build, past a minute when the machine is loaded (it timed out at 60 s beside a TSan
  // run), so this connection waits up to 5 minutes.
  Client admin(server.port(), 300000);
  int rc = -1;
  RunShell("command -v redis-benchmark >/dev/null 2>&1", &rc);
  if (rc != 0) {
    WARN("redis-benchmark not installed: memory test skipped");
    return;
  }
  const std::string port = std::to_string(server.port());
  auto t0 = std::chrono::steady_clock::now();
  std::string out = RunShell("redis-benchmark -h 127.0.0.1 -p " + port +
                                 " -t set -r 1000000 -n 1000000 -d 100 -P 32 -c 8 -q 2>&1",
                             &rc);
  INFO(out);
  REQUIRE(rc == 0);
  auto t1 = std::chrono::steady_clock::now();
  uint64_t keys = 0;
  {
    Reply r = admin.Command({"DBSIZE"});
    REQUIRE(r.type == REDIS_REPLY_INTEGER);
    keys = static_cast<uint64_t>(r.integer);
  }
  CHECK(keys > 500000);  // 1,000,000 random picks of 1,000,000 keys: ~632,000 distinct
  // Random reads: misses fill the cache until it evicts.
  std::string gets = RunShell("redis-benchmark -h 127.0.0.1 -p " + port +
                                  " -t get -r 1000000 -n 600000 -d 100 -P 32 -c 8 -q 2>&1",
                              &rc);
  INFO(gets);
  REQUIRE(rc == 0);
  // And a sample read back through hiredis, checking values.
  std::mt19937 rng(7);
  int found = 0;
  for (int batch = 0; batch < 20; ++batch) {
    std::vector<std::string> batch_keys;
    for (int i = 0; i < 500; ++i) {
      char key[32];
      snprintf(key, sizeof(key), "key:%012u", static_cast<unsigned>(rng() % 1000000));
      batch_keys.push_back(key);
      admin.Append({"GET", key});
    }
    for (size_t i = 0; i < batch_keys.size(); ++i) {
      Reply r;
      REQUIRE(admin.GetReply(&r));
      if (r.type == REDIS_REPLY_STRING) {
        ++found;
        CHECK(r.str.size() == 100);
      } else {
        CHECK(r.is_nil());
      }
    }
  }
  CHECK(found > 5000);  // ~63% of 10,000
  auto t2 = std::chrono::steady_clock::now();

  auto cache = InfoFields(InfoText(admin, "cache"));
  auto rocks = InfoFields(InfoText(admin, "rocksdb"));
  uint64_t used = std::stoull(cache["cache_used_bytes"]);
  uint64_t max = std::stoull(cache["cache_maxmemory"]);
  uint64_t rss_kb = StatusKb(server.pid(), "VmRSS");
  uint64_t hwm_kb = StatusKb(server.pid(), "VmHWM");
  uint64_t memtables = std::stoull(rocks["rocksdb_cur_size_all_mem_tables"]);
  uint64_t block_cache = std::stoull(rocks["rocksdb_block_cache_usage"]);
  uint64_t block_cache_cap = std::stoull(rocks["rocksdb_block_cache_capacity"]);
  double mb = 1024.0 * 1024.0;
  std::cout << "memory: " << keys << " keys x 100 B; cache_used_bytes=" << used << " (" << used / mb
            << " MiB) of cache_maxmemory=" << max << " (" << max / mb
            << " MiB), cache_keys=" << cache["cache_keys"]
            << ", cache_evictions=" << cache["cache_evictions"]
            << ", cache_fills=" << cache["cache_fills"] << "; RSS=" << rss_kb / 1024.0
            << " MiB (peak " << hwm_kb / 1024.0 << " MiB); rocksdb memtables=" << memtables / mb
            << " MiB, block cache=" << block_cache / mb << " MiB of " << block_cache_cap / mb
            << " MiB, sst=" << std::stoull(rocks["rocksdb_total_sst_size"]) / mb
            << " MiB; RSS - cache - memtables - block cache = "
            << (static_cast<double>(rss_kb) * 1024 - static_cast<double>(used) -
                static_cast<double>(memtables) - static_cast<double>(block_cache)) /
                   mb
            << " MiB; load " << std::chrono::duration<double>(t1 - t0).count() << " s, reads "
            << std::chrono::duration<double>(t2 - t1).count() << " s" << std::endl;
  CHECK(max == 64ull << 20);
  CHECK(used > 0);
  CHECK(used <= max);  // the hard bound
  CHECK(std::stoull(cache["cache_evictions"]) > 0);
  CHECK(rss_kb > 0);
  // Sanity: under 1 GiB for ~64 MiB of data. Sanitizer builds (make asan/tsan set
  // ROCKCACHE_SANITIZER) multiply memory by their shadow and quarantine, so the bound is skipped.
  if (std::getenv("ROCKCACHE_SANITIZER") == nullptr) CHECK(rss_kb * 1024 < 1024ull * 1024 * 1024);
  CHECK(CacheVerify(admin).mismatches == 0);
}
