// The pool's multi-level feedback queue seen from clients: heavy clients (KEYS *, HGETALL of a
// big hash, LRANGE 0 -1, ZRANGE 0 -1, in loops) beside light ones (GET misses, SETs). Every
// light request is answered, every heavy reply is complete; no timing assertions.
//
// Catch2 assertions are not thread-safe: client threads record problems, the main thread checks.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
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
namespace mlfq_test {

namespace {

constexpr int kKeys = 20000;    // plain keys, besides the three collections
constexpr int kItems = 5000;    // fields / items / members of each collection
constexpr int kLightOps = 400;  // per light client

void Load(Client& c) {
  for (int base = 0; base < kKeys; base += 1000) {
    std::vector<std::string> mset = {"MSET"};
    for (int i = base; i < base + 1000; ++i) {
      mset.push_back("key:" + std::to_string(i));
      mset.push_back("v" + std::to_string(i));
    }
    REQUIRE(Run(c, mset) == "status:OK");
  }
  for (int base = 0; base < kItems; base += 1000) {
    std::vector<std::string> hset = {"HSET", "bighash"}, rpush = {"RPUSH", "biglist"},
                             zadd = {"ZADD", "bigzset"};
    for (int i = base; i < base + 1000; ++i) {
      hset.push_back("f" + std::to_string(i));
      hset.push_back(std::to_string(i));
      rpush.push_back(std::to_string(i));
      zadd.push_back(std::to_string(i));
      zadd.push_back("m" + std::to_string(i));
    }
    REQUIRE(Run(c, hset) == "int:1000");
    REQUIRE(Run(c, rpush) == "int:" + std::to_string(base + 1000));
    REQUIRE(Run(c, zadd) == "int:1000");
  }
}

// One heavy command and the element count its complete reply has.
struct Heavy {
  std::vector<std::string> command;
  size_t elements;
};

}  // namespace

TEST_CASE("MLFQ: light clients are answered beside heavy ones, heavy replies are complete",
          "[mlfq]") {
  const std::string mlfq = GENERATE("yes", "no");
  // With the MLFQ on, big work runs on the heavy lane (idle-priority threads) or, lane off, on
  // the workers.
  const std::string lane = GENERATE("yes", "no");
  if (mlfq == "no" && lane == "no") return;  // the lane matters only with the MLFQ on
  INFO("pool-mlfq " << mlfq << ", pool-heavy-lane " << lane);
  INFO("pool-mlfq " << mlfq);
  TestServer server({"--pool-threads", "2", "--pool-mlfq", mlfq, "--pool-heavy-lane", lane});
  Client admin(server.port());
  Load(admin);
  const size_t total_keys = kKeys + 3;
  const std::vector<Heavy> heavy = {
      {{"KEYS", "*"}, total_keys},
      {{"HGETALL", "bighash"}, 2 * kItems},
      {{"LRANGE", "biglist", "0", "-1"}, kItems},
      {{"ZRANGE", "bigzset", "0", "-1"}, kItems},
  };

  std::atomic<bool> light_done{false};
  std::vector<std::string> heavy_errors(heavy.size()), light_errors(4);
  std::vector<int> heavy_runs(heavy.size(), 0);
  std::vector<int> light_answered(light_errors.size(), 0);
  std::vector<std::thread> threads;
  for (size_t h = 0; h < heavy.size(); ++h) {
    threads.emplace_back([&, h] {
      Client c(server.port(), 120000);
      Reply r;
      // At least 5 runs each, and on until the light clients are done.
      while (heavy_runs[h] < 5 || !light_done.load()) {
        if (!c.TryCommand(heavy[h].command, &r)) {
          heavy_errors[h] = "no reply to " + heavy[h].command[0];
          return;
        }
        if (r.type != REDIS_REPLY_ARRAY || r.elements.size() != heavy[h].elements) {
          heavy_errors[h] = heavy[h].command[0] + " returned " + std::to_string(r.elements.size()) +
                            " elements, type " + std::to_string(r.type);
          return;
        }
        // A spot check that the reply is the data, not only the right length.
        if (h == 2 && (r.elements.front().str != "0" ||
                       r.elements.back().str != std::to_string(kItems - 1))) {
          heavy_errors[h] =
              "LRANGE ends: " + Describe(r.elements.front()) + " .. " + Describe(r.elements.back());
          return;
        }
        ++heavy_runs[h];
      }
    });
  }
  for (size_t l = 0; l < light_errors.size(); ++l) {
    threads.emplace_back([&, l] {
      Client c(server.port(), 120000);
      Reply r;
      for (int i = 0; i < kLightOps; ++i) {
        // SETs overwrite existing keys: KEYS * keeps one complete answer.
        const std::string key = "key:" + std::to_string((l * kLightOps + i) % kKeys);
        if (!c.TryCommand({"GET", "missing:" + key}, &r) || !r.is_nil()) {
          light_errors[l] = "GET miss " + std::to_string(i) + ": " + Describe(r);
          return;
        }
        if (!c.TryCommand({"SET", key, "x"}, &r) || Describe(r) != "status:OK") {
          light_errors[l] = "SET " + std::to_string(i) + ": " + Describe(r);
          return;
        }
        ++light_answered[l];
      }
    });
  }
  for (size_t t = heavy.size(); t < threads.size(); ++t) threads[t].join();
  light_done = true;
  for (size_t t = 0; t < heavy.size(); ++t) threads[t].join();

  for (size_t l = 0; l < light_errors.size(); ++l) {
    INFO("light client " << l);
    CHECK(light_errors[l].empty());
    CHECK(light_answered[l] == kLightOps);
  }
  for (size_t h = 0; h < heavy.size(); ++h) {
    INFO("heavy client " << heavy[h].command[0] << ": " << heavy_errors[h]);
    CHECK(heavy_errors[h].empty());
    CHECK(heavy_runs[h] >= 5);
  }
  CHECK(Run(admin, {"DBSIZE"}) == "int:" + std::to_string(total_keys));
  CHECK(Run(admin, {"GET", "key:" + std::to_string(kLightOps - 1)}) == "bulk:x");

  auto info = InfoFields(InfoText(admin, "pool"));
  CHECK(info["pool_mlfq"] == mlfq);
  CHECK(info["pool_small_share"] == "80");
  CHECK(info["pool_heavy_lane"] == (mlfq == "yes" ? lane : "no"));
  if (mlfq == "yes") {
    // Heavy clients ran at least 5 whole big commands each: they were demoted.
    CHECK(std::stoull(info["pool_mlfq_demotions"]) >= 1);
    CHECK(std::stoull(info["pool_level1_tasks"]) + std::stoull(info["pool_level2_tasks"]) >= 1);
  } else {
    CHECK(info["pool_level1_tasks"] == "0");
    CHECK(info["pool_level2_tasks"] == "0");
  }
}

TEST_CASE("MLFQ: pool-small-share and pool-mlfq change at runtime", "[mlfq]") {
  TestServer server({"--pool-threads", "2"});
  Client c(server.port());
  CHECK(Run(c, {"CONFIG", "GET", "pool-small-share"}) == "[bulk:pool-small-share, bulk:80]");
  CHECK(Run(c, {"CONFIG", "SET", "pool-small-share", "95"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "SET", "pool-small-share", "100"}).rfind("err:", 0) == 0);
  CHECK(Run(c, {"CONFIG", "SET", "pool-mlfq", "no"}) == "status:OK");
  auto info = InfoFields(InfoText(c, "pool"));
  CHECK(info["pool_small_share"] == "95");
  CHECK(info["pool_mlfq"] == "no");
  CHECK(Run(c, {"CONFIG", "SET", "pool-mlfq", "yes"}) == "status:OK");
  CHECK(InfoFields(InfoText(c, "pool"))["pool_mlfq"] == "yes");
  CHECK(Run(c, {"SET", "k", "v"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "bulk:v");

  // The heavy lane: on by default, its two threads at the OS's idle priority; off and on again.
  CHECK(Run(c, {"CONFIG", "GET", "pool-heavy-lane"}) == "[bulk:pool-heavy-lane, bulk:yes]");
  info = InfoFields(InfoText(c, "pool"));
  CHECK(info["pool_heavy_lane"] == "yes");
  CHECK(info["pool_heavy_lane_idle_threads"] == "2");
  CHECK(Run(c, {"CONFIG", "SET", "pool-heavy-lane", "no"}) == "status:OK");
  CHECK(InfoFields(InfoText(c, "pool"))["pool_heavy_lane"] == "no");
  CHECK(Run(c, {"CONFIG", "SET", "pool-heavy-lane", "yes"}) == "status:OK");
  CHECK(InfoFields(InfoText(c, "pool"))["pool_heavy_lane"] == "yes");
  CHECK(Run(c, {"GET", "k"}) == "bulk:v");
}

}  // namespace mlfq_test
