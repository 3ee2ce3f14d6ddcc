// DEBUG inside MULTI/EXEC: DEBUG CACHE-VERIFY takes the key lock of every cached key while EXEC
// already holds the key stripes of its own keys (cache/key_locks.h). A cached key that shares a
// stripe with a key of the transaction must neither deadlock the worker nor be skipped; the
// replies are those a user sees outside a transaction.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cache/hash.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using namespace rockcache::testing;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace transaction_debug_test {

namespace {

// The server's key stripe of `key`: cache::KeyLocks::StripeOf with its default 4096 stripes
// (KeyLocks is not linked into this program; only the pure hash is included).
uint64_t StripeOf(const std::string& key) {
  const uint64_t h = rockcache::cache::HashKey(key);
  return ((h >> 48) | (h << 16)) % 4096;
}

// `count` keys "<prefix><i>" on the same stripe as `key`.
std::vector<std::string> KeysOnStripeOf(const std::string& key, const std::string& prefix,
                                        int count) {
  std::vector<std::string> keys;
  for (int i = 0; static_cast<int>(keys.size()) < count; ++i) {
    std::string candidate = prefix + std::to_string(i);
    if (StripeOf(candidate) == StripeOf(key)) keys.push_back(candidate);
  }
  return keys;
}

// Writes and reads every key so that the cache holds it.
void CacheStrings(Client& c, const std::vector<std::string>& keys) {
  for (const auto& key : keys) {
    REQUIRE(Run(c, {"SET", key, "v:" + key}) == "status:OK");
    REQUIRE(Run(c, {"GET", key}) == "bulk:v:" + key);
  }
}

std::string Verified(size_t checked) {
  return "checked:" + std::to_string(checked) + "\r\nmismatches:0\r\n";
}

}  // namespace

TEST_CASE("DEBUG CACHE-VERIFY inside EXEC, beside keys on the transaction's own stripes",
          "[transaction][debug]") {
  TestServer server;
  Client c(server.port());
  // Cached keys: two on the stripe of each key the transaction writes, and a few elsewhere.
  std::vector<std::string> cached = KeysOnStripeOf("tx:str", "near:str:", 2);
  for (const auto& key : KeysOnStripeOf("tx:list", "near:list:", 2)) cached.push_back(key);
  for (int i = 0; i < 4; ++i) cached.push_back("far:" + std::to_string(i));
  CacheStrings(c, cached);
  const std::string before = Verified(cached.size());
  REQUIRE(Run(c, {"DEBUG", "CACHE-VERIFY"}) == "bulk:" + before);

  SECTION("with keys written in the same transaction") {
    REQUIRE(Run(c, {"MULTI"}) == "status:OK");
    CHECK(Run(c, {"SET", "tx:str", "one"}) == "status:QUEUED");
    CHECK(Run(c, {"RPUSH", "tx:list", "a", "b"}) == "status:QUEUED");
    CHECK(Run(c, {"DEBUG", "CACHE-VERIFY"}) == "status:QUEUED");
    CHECK(Run(c, {"GET", "tx:str"}) == "status:QUEUED");
    CHECK(Run(c, {"DEBUG", "SLEEP", "0"}) == "status:QUEUED");
    CHECK(Run(c, {"LRANGE", "tx:list", "0", "-1"}) == "status:QUEUED");
    CHECK(Run(c, {"SET", cached[0], "changed"}) == "status:QUEUED");
    CHECK(Run(c, {"DEBUG", "CACHE-VERIFY"}) == "status:QUEUED");
    // Every cached key is checked, those on the transaction's stripes under its locks. A key
    // the transaction wrote is checked in its staging cache (server/unit_cache.h) against what
    // the transaction sees, not in the shared cache, which keeps the committed value until EXEC
    // commits: first tx:str (SET wrote it through); then also tx:list (LRANGE filled it), and
    // cached[0] (its SET) is checked there instead of in the shared cache.
    const std::string first = Verified(cached.size() + 1);
    const std::string second = Verified(cached.size() - 1 + 3);
    CHECK(Run(c, {"EXEC"}) ==
          "[status:OK, int:2, bulk:" + first +
              ", bulk:one, status:OK, [bulk:a, bulk:b], status:OK, bulk:" + second + "]");
    CHECK(Run(c, {"GET", "tx:str"}) == "bulk:one");
    CHECK(Run(c, {"GET", cached[0]}) == "bulk:changed");
    CHECK(Run(c, {"LRANGE", "tx:list", "0", "-1"}) == "[bulk:a, bulk:b]");
    Reply after = c.Command({"DEBUG", "CACHE-VERIFY"});
    CHECK(after.str.find("mismatches:0") != std::string::npos);
  }
  SECTION("alone, and under WATCH of a key on a cached key's stripe") {
    REQUIRE(Run(c, {"MULTI"}) == "status:OK");
    CHECK(Run(c, {"DEBUG", "CACHE-VERIFY"}) == "status:QUEUED");
    CHECK(Run(c, {"EXEC"}) == "[bulk:" + before + "]");

    REQUIRE(Run(c, {"WATCH", "tx:str"}) == "status:OK");
    REQUIRE(Run(c, {"MULTI"}) == "status:OK");
    CHECK(Run(c, {"DEBUG", "CACHE-VERIFY"}) == "status:QUEUED");
    CHECK(Run(c, {"EXEC"}) == "[bulk:" + before + "]");
  }
  SECTION("after FLUSHALL in the same transaction (every stripe held)") {
    REQUIRE(Run(c, {"MULTI"}) == "status:OK");
    CHECK(Run(c, {"SET", "tx:str", "one"}) == "status:QUEUED");
    CHECK(Run(c, {"FLUSHALL"}) == "status:QUEUED");
    CHECK(Run(c, {"SET", "tx:other", "two"}) == "status:QUEUED");
    CHECK(Run(c, {"DEBUG", "CACHE-VERIFY"}) == "status:QUEUED");
    // FLUSHALL cleared the cache; tx:other is in the staging cache only.
    CHECK(Run(c, {"EXEC"}) == "[status:OK, status:OK, status:OK, bulk:" + Verified(1) + "]");
    CHECK(Run(c, {"GET", "tx:str"}) == "nil");
    CHECK(Run(c, {"GET", "tx:other"}) == "bulk:two");
    CHECK(Run(c, {"DBSIZE"}) == "int:1");
  }
}

}  // namespace transaction_debug_test
