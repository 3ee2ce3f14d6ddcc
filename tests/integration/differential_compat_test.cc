// Differential checks of fixed command lists ([differential][compat]): each list runs on
// rockcache and on a reference redis-server, and every reply must be the same bytes of RESP.
// One test case per deviation that was fixed (named after it), so that it stays fixed. Skipped
// (with a warning) when redis-server is not installed.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/integration/differential.h"
#include "tests/integration/differential_peer.h"
#include "tests/integration/test_server.h"

using rockcache::testing::ReferenceRedis;
using rockcache::testing::TestServer;

using namespace rockcache::testing::differential;  // NOLINT

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
  Differ d(server.port(), reference.port());
  for (const Command& cmd : commands) d.Both(family, cmd);
  const auto& stats = d.stats(family);
  std::printf("differential: %-8s %5d commands, %d mismatches\n", family.c_str(), stats.commands,
              stats.mismatches);
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
