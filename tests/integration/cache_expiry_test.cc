// The read cache seen from outside: TTLs expire cached entries, and the cache can be turned off
// and on at runtime.

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/cache_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::CacheVerify;
using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoNumber;
using rockcache::testing::InfoText;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::RunRtc;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;
using rockcache::testing::VerifyResult;

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
