// Sentinel-managed failover, for real: tests/clients/sentinel_failover.py starts one primary, two
// replicas and three Debian redis-sentinel processes, writes through redis-py's Sentinel client,
// kills the primary with SIGKILL and checks promotion, the other replica following, the client
// reconnecting, every write acknowledged with WAIT surviving, and the old primary rejoining as a
// replica. Skipped (with a warning) when redis-py or redis-sentinel is not installed.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "tests/support/test_server.h"

using rockcache::testing::FreePort;
using rockcache::testing::RunShell;
using rockcache::testing::ServerBinary;

TEST_CASE("Sentinel fails over from a killed primary to a replica", "[replication][sentinel]") {
  std::string here = __FILE__;
  const std::string script =
      here.substr(0, here.rfind("tests/integration/")) + "tests/clients/sentinel_failover.py";
  std::string ports;
  for (int i = 0; i < 6; ++i) ports += (i ? "," : "") + std::to_string(FreePort());
  int rc = -1;
  // The script bounds each of its waits; `timeout` bounds the whole (a hang fails the case).
  const std::string out =
      RunShell("ROCKCACHE_TEST_PORTS=" + ports + " timeout -k 10 900 " + "/usr/bin/python3 " +
                   script + " " + ServerBinary() + " 2>&1",
               &rc);
  std::printf("%s", out.c_str());
  std::fflush(stdout);
  if (rc == 77) {
    WARN("skipped: needs python3-redis and redis-sentinel (apt-get install them)");
    return;
  }
  CHECK(rc == 0);
}
