// The read cache seen from outside: reads answered in the network thread (RTC) reply exactly
// what the pool path replies, and rtc-reads switches them at runtime.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/support/cache_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::CacheVerify;
using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoNumber;
using rockcache::testing::Lower;
using rockcache::testing::Reply;
using rockcache::testing::RtcCalls;
using rockcache::testing::Run;
using rockcache::testing::RunRtc;
using rockcache::testing::TestServer;
using rockcache::testing::VerifyResult;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace cache_rtc_test {

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

}  // namespace cache_rtc_test
