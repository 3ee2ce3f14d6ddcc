// FLUSHDB / FLUSHALL / SWAPDB against the cache: the cache forgets a flushed database in O(1)
// (per-database generations, cache/cache.h "Flushes"), so cached strings, hashes and negative
// entries of a flushed database must never answer again, from the network thread (RTC) or a
// worker, while other databases keep theirs. Expected replies are Redis's.
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace flush_cache_test {

namespace {

uint64_t CacheField(Client& c, const std::string& name) {
  std::map<std::string, std::string> info = InfoFields(InfoText(c, "cache"));
  REQUIRE(info.count(name) == 1);
  return std::stoull(info[name]);
}

// Caches s (string), h (hash) and the absence of "missing" in the client's database, and
// checks that they are cached (answered as hits).
void CacheThree(Client& c, const std::string& tag) {
  REQUIRE(Run(c, {"SET", "s", tag}) == "status:OK");
  REQUIRE(Run(c, {"HSET", "h", "f", tag}) == "int:1");
  REQUIRE(Run(c, {"GET", "s"}) == "bulk:" + tag);
  REQUIRE(Run(c, {"HGET", "h", "f"}) == "bulk:" + tag);  // miss: fills the whole hash
  REQUIRE(Run(c, {"GET", "missing"}) == "nil");          // miss: fills a negative entry
  const uint64_t hits = CacheField(c, "cache_hits");
  CHECK(Run(c, {"GET", "s"}) == "bulk:" + tag);
  CHECK(Run(c, {"HGET", "h", "f"}) == "bulk:" + tag);
  CHECK(Run(c, {"GET", "missing"}) == "nil");
  CHECK(Run(c, {"EXISTS", "s", "h", "missing"}) == "int:2");
  CHECK(CacheField(c, "cache_hits") >= hits + 3);
}

void ExpectEmpty(Client& c) {
  CHECK(Run(c, {"GET", "s"}) == "nil");
  CHECK(Run(c, {"HGET", "h", "f"}) == "nil");
  CHECK(Run(c, {"HGETALL", "h"}) == "[]");
  CHECK(Run(c, {"GET", "missing"}) == "nil");
  CHECK(Run(c, {"EXISTS", "s", "h", "missing"}) == "int:0");
  CHECK(Run(c, {"TYPE", "s"}) == "status:none");
  CHECK(Run(c, {"MGET", "s", "missing"}) == "[nil, nil]");
}

void ExpectThree(Client& c, const std::string& tag) {
  CHECK(Run(c, {"GET", "s"}) == "bulk:" + tag);
  CHECK(Run(c, {"HGET", "h", "f"}) == "bulk:" + tag);
  CHECK(Run(c, {"GET", "missing"}) == "nil");
  CHECK(Run(c, {"EXISTS", "s", "h", "missing"}) == "int:2");
}

void ExpectVerified(Client& c) {
  Reply verify = c.Command({"DEBUG", "CACHE-VERIFY"});
  CHECK(verify.str.find("mismatches:0") != std::string::npos);
}

}  // namespace

TEST_CASE("FLUSHDB: cached strings, hashes and negative entries of that database only",
          "[cache][databases][flush]") {
  TestServer server;
  Client zero(server.port());
  Client one(server.port());  // another connection: possibly another network thread
  REQUIRE(Run(one, {"SELECT", "1"}) == "status:OK");
  CacheThree(zero, "zero");
  const uint64_t cached = CacheField(zero, "cache_keys");
  CHECK(cached >= 3);
  CacheThree(one, "one");
  const uint64_t total = CacheField(zero, "cache_keys");
  const uint64_t flushed_before = CacheField(zero, "cache_flushed");

  CHECK(Run(zero, {"FLUSHDB"}) == "status:OK");
  // The key count is exact: database 0's entries are stale, not live. Each is still held
  // (cache_stale_keys) or was freed since by the expiry sweep's probes (cache_flushed): a slow
  // build gives the sweep time to run before the INFO below.
  std::map<std::string, std::string> after = InfoFields(InfoText(zero, "cache"));
  CHECK(std::stoull(after["cache_keys"]) == total - cached);
  CHECK(std::stoull(after["cache_stale_keys"]) + std::stoull(after["cache_flushed"]) -
            flushed_before ==
        cached);
  ExpectEmpty(zero);
  ExpectThree(one, "one");
  // Database 1's client, in database 0 now: sees the flush at once too.
  REQUIRE(Run(one, {"SELECT", "0"}) == "status:OK");
  ExpectEmpty(one);
  REQUIRE(Run(one, {"SELECT", "1"}) == "status:OK");

  // A negative entry cached after the flush, then the key is created elsewhere and here.
  CHECK(Run(zero, {"GET", "k"}) == "nil");
  CHECK(Run(one, {"SET", "k", "in1"}) == "status:OK");
  CHECK(Run(zero, {"GET", "k"}) == "nil");
  CHECK(Run(zero, {"FLUSHDB", "SYNC"}) == "status:OK");
  CHECK(Run(zero, {"SET", "k", "in0"}) == "status:OK");
  CHECK(Run(zero, {"GET", "k"}) == "bulk:in0");
  CHECK(Run(one, {"GET", "k"}) == "bulk:in1");

  // Refill after the flush: the new values are cached and served.
  CacheThree(zero, "again");
  ExpectThree(zero, "again");
  ExpectVerified(zero);
}

TEST_CASE("FLUSHDB makes the cache's key count drop at once", "[cache][databases][flush]") {
  TestServer server;
  Client c(server.port());
  CacheThree(c, "v");
  const uint64_t keys = CacheField(c, "cache_keys");
  REQUIRE(keys >= 3);
  const uint64_t used = CacheField(c, "cache_used_bytes");
  CHECK(Run(c, {"FLUSHDB"}) == "status:OK");
  CHECK(CacheField(c, "cache_keys") == 0);
  CHECK(CacheField(c, "cache_stale_keys") == keys);
  CHECK(CacheField(c, "cache_used_bytes") == used);  // freed lazily, still charged
  ExpectEmpty(c);                                    // the lookups free what they meet
  CHECK(CacheField(c, "cache_flushed") >= 3);
}

TEST_CASE("FLUSHALL: every database's cached entries, then refills", "[cache][databases][flush]") {
  TestServer server;
  Client c(server.port());
  for (int db : {0, 3, 15}) {
    REQUIRE(Run(c, {"SELECT", std::to_string(db)}) == "status:OK");
    CacheThree(c, "db" + std::to_string(db));
  }
  CHECK(Run(c, {"FLUSHALL"}) == "status:OK");
  CHECK(CacheField(c, "cache_keys") == 0);
  for (int db : {0, 3, 15}) {
    REQUIRE(Run(c, {"SELECT", std::to_string(db)}) == "status:OK");
    ExpectEmpty(c);
  }
  REQUIRE(Run(c, {"SELECT", "3"}) == "status:OK");
  CacheThree(c, "after");
  REQUIRE(Run(c, {"SELECT", "0"}) == "status:OK");
  ExpectEmpty(c);
  CHECK(Run(c, {"FLUSHALL", "ASYNC"}) == "status:OK");
  REQUIRE(Run(c, {"SELECT", "3"}) == "status:OK");
  ExpectEmpty(c);
  ExpectVerified(c);
}

TEST_CASE("the periodic sweep frees flushed cache entries with no lookups (INFO cache_swept)",
          "[cache][databases][flush][sweep]") {
  TestServer server({"--hz", "50", "--cache-sweep-samples", "0"});
  Client c(server.port());
  std::vector<std::string> mset = {"MSET"};
  for (int i = 0; i < 400; ++i) {
    mset.push_back("k" + std::to_string(i));
    mset.push_back("v");
  }
  REQUIRE(Run(c, mset) == "status:OK");
  for (int i = 0; i < 400; ++i) REQUIRE(Run(c, {"GET", "k" + std::to_string(i)}) == "bulk:v");
  REQUIRE(CacheField(c, "cache_keys") >= 400);
  REQUIRE(Run(c, {"FLUSHALL"}) == "status:OK");
  CHECK(CacheField(c, "cache_stale_keys") >= 400);
  // Sweep off: the stale entries stay (nothing looks them up).
  rockcache::testing::SleepMs(300);
  CHECK(CacheField(c, "cache_stale_keys") >= 400);
  CHECK(CacheField(c, "cache_swept") == 0);
  // On (CONFIG SET): the sweep frees them within a few ticks, and counts them.
  REQUIRE(Run(c, {"CONFIG", "SET", "cache-sweep-samples", "20"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "cache-sweep-samples"}) == "[bulk:cache-sweep-samples, bulk:20]");
  for (int i = 0; i < 200 && CacheField(c, "cache_stale_keys") > 0; ++i) {
    rockcache::testing::SleepMs(25);
  }
  CHECK(CacheField(c, "cache_stale_keys") == 0);
  CHECK(CacheField(c, "cache_swept") >= 400);
  CHECK(CacheField(c, "cache_flushed") >= 400);
  CHECK(CacheField(c, "cache_used_bytes") == 0);
}

TEST_CASE("SWAPDB then FLUSHDB: the flush follows the data, not the number",
          "[cache][databases][flush]") {
  TestServer server;
  Client a(server.port());  // database 0
  Client b(server.port());  // database 1
  REQUIRE(Run(b, {"SELECT", "1"}) == "status:OK");
  CacheThree(a, "zero");
  CacheThree(b, "one");
  CHECK(Run(a, {"GET", "only-in-1"}) == "nil");  // negative entry in (physical) 0
  CHECK(Run(b, {"SET", "only-in-1", "x"}) == "status:OK");
  CHECK(Run(b, {"GET", "only-in-1"}) == "bulk:x");

  CHECK(Run(a, {"SWAPDB", "0", "1"}) == "status:OK");
  ExpectThree(a, "one");
  ExpectThree(b, "zero");
  CHECK(Run(a, {"GET", "only-in-1"}) == "bulk:x");
  CHECK(Run(b, {"GET", "only-in-1"}) == "nil");

  // Flush database 0, which now holds what was database 1's.
  CHECK(Run(a, {"FLUSHDB"}) == "status:OK");
  ExpectEmpty(a);
  CHECK(Run(a, {"GET", "only-in-1"}) == "nil");
  ExpectThree(b, "zero");  // the other one keeps its cached entries

  // And back: database 1 is the flushed one now.
  CHECK(Run(b, {"SWAPDB", "1", "0"}) == "status:OK");
  ExpectThree(a, "zero");
  CHECK(Run(a, {"GET", "only-in-1"}) == "nil");
  ExpectEmpty(b);
  CHECK(Run(b, {"GET", "only-in-1"}) == "nil");

  // FLUSHALL after swaps, then a swap of two flushed databases.
  CHECK(Run(b, {"SET", "s", "new1"}) == "status:OK");
  CHECK(Run(b, {"GET", "s"}) == "bulk:new1");
  CHECK(Run(a, {"FLUSHALL"}) == "status:OK");
  CHECK(Run(a, {"SWAPDB", "0", "1"}) == "status:OK");
  ExpectEmpty(a);
  ExpectEmpty(b);
  ExpectVerified(a);
}

TEST_CASE("FLUSHDB inside MULTI and in a pipeline", "[cache][databases][flush][transaction]") {
  TestServer server;
  Client c(server.port());
  CacheThree(c, "v");
  CHECK(Run(c, {"MULTI"}) == "status:OK");
  CHECK(Run(c, {"SET", "s", "inside"}) == "status:QUEUED");
  CHECK(Run(c, {"FLUSHDB"}) == "status:QUEUED");
  CHECK(Run(c, {"GET", "s"}) == "status:QUEUED");
  CHECK(Run(c, {"EXEC"}) == "[status:OK, status:OK, nil]");
  ExpectEmpty(c);

  CacheThree(c, "w");
  const std::vector<std::vector<std::string>> pipeline = {
      {"GET", "s"},    {"HGET", "h", "f"}, {"FLUSHDB"},       {"GET", "s"},
      {"EXISTS", "h"}, {"SET", "s", "x"},  {"GET", "s"},      {"GET", "missing"},
      {"FLUSHALL"},    {"GET", "s"},       {"HGET", "h", "f"}};
  const std::vector<std::string> expected = {"bulk:w",    "bulk:w",    "status:OK", "nil",
                                             "int:0",     "status:OK", "bulk:x",    "nil",
                                             "status:OK", "nil",       "nil"};
  for (const auto& command : pipeline) c.Append(command);
  for (size_t i = 0; i < pipeline.size(); ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
    CHECK(Describe(r) == expected[i]);
  }
}

TEST_CASE("a flush acknowledged to one client is seen by the next read of any client",
          "[cache][databases][flush]") {
  TestServer server;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(std::make_unique<Client>(server.port()));
  Client& writer = *clients[0];
  for (int round = 0; round < 200; ++round) {
    const std::string v = std::to_string(round);
    REQUIRE(Run(writer, {"SET", "k", v}) == "status:OK");
    REQUIRE(Run(writer, {"HSET", "h", "f", v}) == "int:1");
    for (auto& c : clients) {  // cached, and hit from every connection
      REQUIRE(Run(*c, {"GET", "k"}) == "bulk:" + v);
      REQUIRE(Run(*c, {"HGET", "h", "f"}) == "bulk:" + v);
    }
    REQUIRE(Run(writer, {round % 2 ? "FLUSHALL" : "FLUSHDB"}) == "status:OK");
    for (auto& c : clients) {
      REQUIRE(Run(*c, {"GET", "k"}) == "nil");
      REQUIRE(Run(*c, {"HGET", "h", "f"}) == "nil");
      REQUIRE(Run(*c, {"EXISTS", "k", "h"}) == "int:0");
    }
  }
  ExpectVerified(writer);
}

}  // namespace flush_cache_test
