// Real clients from Debian's packages, run by /usr/bin/python3 (Debian's interpreter: the
// packages install there, whatever python3 comes first on PATH): redis-py's transactional
// pipelines and WATCH retries (python3-redis), and an RQ worker (python3-rq). The scripts live in
// tests/clients/; `make test` installs the packages (TEST_PACKAGES). A script exits 77 when its
// module is missing: the test then warns and passes, the only skip.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "tests/support/differential_peer.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using namespace rockcache::testing;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace python_clients_test {

namespace {

constexpr int kSkip = 77;

// tests/clients/<name>, found from this file's path (the tests run from the repository root).
std::string ClientScript(const std::string& name) {
  std::string here = __FILE__;
  std::string root = here.substr(0, here.rfind("tests/integration/"));
  return root + "tests/clients/" + name;
}

// Runs a client script against `port`; prints its output; returns its exit code.
int RunClient(const std::string& script, int port, const std::string& extra = "") {
  int rc = -1;
  std::string out = RunShell("/usr/bin/python3 " + ClientScript(script) + " " +
                                 std::to_string(port) + " " + extra + " 2>&1",
                             &rc);
  std::printf("%s", out.c_str());
  std::fflush(stdout);
  return rc;
}

}  // namespace

TEST_CASE("redis-py: pipeline(transaction=True) and watch() with retries",
          "[python][transaction]") {
  TestServer server({"--net-threads", "2"});
  const int rc = RunClient("redis_py_transactions.py", server.port());
  if (rc == kSkip) {
    WARN("skipped: /usr/bin/python3 has no redis module (apt-get install python3-redis)");
    return;
  }
  CHECK(rc == 0);
}

// redis-py's Lock is four Lua scripts (acquire, extend, reacquire, release); register_script
// uses EVALSHA and reloads on NOSCRIPT.
TEST_CASE("redis-py: Lock and register_script", "[python][scripting]") {
  TestServer server({"--net-threads", "2"});
  const int rc = RunClient("redis_py_lock.py", server.port());
  if (rc == kSkip) {
    WARN("skipped: /usr/bin/python3 has no redis module (apt-get install python3-redis)");
    return;
  }
  CHECK(rc == 0);
}

// RQ 1.13 stores job results in a Redis stream (XADD MAXLEN 10, XREVRANGE + - COUNT 1) and its
// worker subscribes to a pub/sub channel. Run alone with: build/integration-tests "[rq]". Prints
// the time against redis-server too.
TEST_CASE("rq: a burst worker runs 1000 jobs", "[rq][python]") {
  const std::string redis_binary = ReferenceRedis::Binary();
  if (!redis_binary.empty()) {
    ReferenceRedis redis(redis_binary);
    const int rc = RunClient("rq_burst.py", redis.port(), "1000");
    if (rc == kSkip) {
      WARN("skipped: /usr/bin/python3 has no rq module (apt-get install python3-rq)");
      return;
    }
    CHECK(rc == 0);
  }
  TestServer server;
  CHECK(RunClient("rq_burst.py", server.port(), "1000") == 0);
}

// Stream consumer-group workers with redis-py: xreadgroup(block=...) / xack loops, a crashed
// worker's entries taken over with xautoclaim, each job processed once; redis-py's parsers of
// xinfo_groups, xinfo_consumers, xpending(_range) and xclaim.
TEST_CASE("redis-py: stream consumer-group workers, xautoclaim of a crashed worker",
          "[python][stream][group]") {
  TestServer server({"--net-threads", "2"});
  const int rc = RunClient("redis_py_stream_workers.py", server.port());
  if (rc == kSkip) {
    WARN("skipped: /usr/bin/python3 has no redis module (apt-get install python3-redis)");
    return;
  }
  CHECK(rc == 0);
}

}  // namespace python_clients_test
