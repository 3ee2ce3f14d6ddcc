// Differential checks of fixed command lists ([differential][compat]): each list runs on
// rockcache and on a reference redis-server, and every reply must be the same bytes of RESP.
// One test case per deviation that was fixed (named after it), so that it stays fixed. Skipped
// (with a warning) when redis-server is not installed.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/differential.h"
#include "tests/support/differential_peer.h"
#include "tests/support/test_server.h"

using rockcache::testing::ReferenceRedis;
using rockcache::testing::TestServer;

using namespace rockcache::testing::differential;  // NOLINT

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace differential_compat_test {

namespace {

// Runs `commands` on both servers under `family`; CHECKs there was no mismatch.
void RunList(const std::string& family, const std::vector<Command>& commands) {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) {
    WARN("redis-server not installed: differential test skipped");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server;
  const int protocol = GENERATE(2, 3);  // the same table under RESP2 and RESP3
  Differ d(server.port(), reference.port(), protocol);
  for (const Command& cmd : commands) d.Both(family, cmd);
  const auto& stats = d.stats(family);
  std::printf("differential RESP%d: %-8s %5d commands, %d mismatches\n", protocol, family.c_str(),
              stats.commands, stats.mismatches);
  CHECK(stats.commands == static_cast<int>(commands.size()));
  CHECK(stats.mismatches == 0);
}

}  // namespace

TEST_CASE("Differential: CONFIG GET notify-keyspace-events prints Redis's canonical flags",
          "[differential][compat][notify]") {
  std::vector<Command> commands;
  for (const char* flags : {"KEA",
                            "Kx",
                            "Elg$",
                            "A",
                            "",
                            "KEAn",
                            "KEAnm",
                            "nA",
                            "AKEm",
                            "gx",
                            "g$lshzxetd",
                            "g$lshzxetdn",
                            "KEg$lshzxetdmn",
                            "e",
                            "En",
                            "xe",
                            "Ed",
                            "nK",
                            "mK",
                            "Q",
                            "KEAQ"}) {
    commands.push_back({"CONFIG", "SET", "notify-keyspace-events", flags});
    commands.push_back({"CONFIG", "GET", "notify-keyspace-events"});
  }
  RunList("notify", commands);
}

TEST_CASE("Differential: scores of -0 from ZUNION/ZINTER/ZINCRBY print as Redis's",
          "[differential][compat][zset]") {
  RunList("zsetzero",
          {
              {"ZADD", "z1", "0", "a", "1", "b", "-0", "c"},
              {"ZADD", "z2", "0", "a"},
              {"ZRANGE", "z1", "0", "-1", "WITHSCORES"},
              {"ZSCORE", "z1", "c"},
              {"ZUNION", "2", "z1", "z2", "WEIGHTS", "-1", "1", "WITHSCORES"},
              {"ZUNION", "1", "z1", "WEIGHTS", "-1", "WITHSCORES"},
              {"ZINTER", "2", "z1", "z2", "WEIGHTS", "-1", "-1", "WITHSCORES"},
              {"ZINTER", "1", "z1", "WEIGHTS", "-0", "WITHSCORES"},
              {"ZUNION", "1", "z1", "WEIGHTS", "-1", "AGGREGATE", "MIN", "WITHSCORES"},
              {"ZUNION", "2", "z1", "z1", "WEIGHTS", "-1", "-1", "AGGREGATE", "MAX", "WITHSCORES"},
              {"ZDIFF", "2", "z1", "z2", "WITHSCORES"},
              {"ZUNIONSTORE", "d", "1", "z1", "WEIGHTS", "-1"},
              {"ZRANGE", "d", "0", "-1", "WITHSCORES"},
              {"ZSCORE", "d", "c"},
              {"ZUNIONSTORE", "d2", "2", "z1", "z1", "WEIGHTS", "1", "-1"},
              {"ZRANGE", "d2", "0", "-1", "WITHSCORES"},
              {"ZINTERSTORE", "d3", "1", "z1", "WEIGHTS", "-1"},
              {"ZRANGE", "d3", "0", "-1", "WITHSCORES"},
              {"ZRANGEBYSCORE", "d3", "-0", "0", "WITHSCORES"},
              {"ZINCRBY", "z3", "-0", "m"},
              {"ZINCRBY", "z3", "-0", "m"},
              {"ZSCORE", "z3", "m"},
              {"ZADD", "z4", "INCR", "-0", "m"},
              {"ZADD", "z4", "INCR", "-0", "m"},
              {"ZINCRBY", "z1", "-0", "a"},
              {"ZINCRBY", "z1", "-0", "c"},
              {"ZMSCORE", "z1", "a", "c"},
              {"ZADD", "z5", "-0", "x"},
              {"ZSCORE", "z5", "x"},
              {"ZPOPMIN", "z5"},
              {"ZADD", "z6", "1", "m"},
              {"ZINCRBY", "z6", "-1", "m"},
              {"ZUNION", "1", "z6", "WEIGHTS", "-1", "WITHSCORES"},
          });
}

}  // namespace differential_compat_test
