// Limits on connections ([connection]): maxclients refuses extra connections with Redis's
// error, timeout closes idle clients only, client-output-buffer-limit disconnects a client that
// does not read while the server keeps serving others.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace connection_limits_test {

TEST_CASE("maxclients refuses extra connections", "[connection]") {
  TestServer server({"--maxclients", "2"});
  SleepMs(200);  // let the server see the start-up probe connections close
  Client a(server.port());
  Client b(server.port());
  CHECK(Run(a, {"PING"}) == "status:PONG");
  CHECK(Run(b, {"PING"}) == "status:PONG");
  {
    RawConnection third(server.port());
    std::string got;
    CHECK(third.WaitClosed(&got, 5000));
    CHECK(got == "-ERR max number of clients reached\r\n");
  }
  CHECK(Run(a, {"PING"}) == "status:PONG");
  CHECK(Run(b, {"PING"}) == "status:PONG");
  // A freed slot can be used again.
  Reply r;
  REQUIRE(b.TryCommand({"QUIT"}, &r));
  SleepMs(200);
  Client d(server.port());
  CHECK(Run(d, {"PING"}) == "status:PONG");
}

TEST_CASE("timeout closes idle clients only", "[connection]") {
  TestServer server({"--timeout", "1"});
  RawConnection idle(server.port());
  Client busy(server.port());
  auto start = std::chrono::steady_clock::now();
  // Keep `busy` active for ~2.5 s while `idle` says nothing.
  for (int i = 0; i < 8; ++i) {
    CHECK(Run(busy, {"PING"}) == "status:PONG");
    SleepMs(300);
  }
  std::string got;
  bool closed = idle.WaitClosed(&got, 1000);
  auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(closed);
  CHECK(got.empty());
  CHECK(elapsed < std::chrono::milliseconds(3600));
  CHECK(Run(busy, {"PING"}) == "status:PONG");
}

TEST_CASE("client-output-buffer-limit disconnects a client that does not read", "[connection]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"CONFIG", "SET", "client-output-buffer-limit", "1mb"}) == "status:OK");
  std::string value(512 * 1024, 'v');
  CHECK(Run(c, {"SET", "big", value}) == "status:OK");

  RawConnection reader(server.port());
  std::string request;
  for (int i = 0; i < 100; ++i) request += Resp({"GET", "big"});
  reader.Send(request);
  SleepMs(1500);  // let replies pile up without reading them
  std::string got;
  CHECK(reader.WaitClosed(&got, 10000));
  const size_t one_reply = value.size() + std::string("$524288\r\n\r\n").size();
  CHECK(got.size() < 100 * one_reply);
  INFO("received " << got.size() << " bytes of " << 100 * one_reply);

  // The server keeps serving others.
  Client after(server.port());
  CHECK(Run(after, {"PING"}) == "status:PONG");
  CHECK(Run(after, {"STRLEN", "big"}) == "int:524288");
  CHECK(Run(c, {"GET", "missing"}) == "nil");
}

}  // namespace connection_limits_test
