// The quick-start promise: a server starts, answers PING, stores and returns a string.
#include <catch2/catch.hpp>

#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Str;
using rockcache::testing::TestServer;

TEST_CASE("server answers PING, SET and GET over hiredis", "[smoke]") {
  TestServer server;
  Client client(server.port());
  REQUIRE(client.connected());
  CHECK(Str(client.Command({"PING"})) == "PONG");
  CHECK(Str(client.Command({"SET", "a", "1"})) == "OK");
  CHECK(Str(client.Command({"GET", "a"})) == "1");
  CHECK(client.Command({"GET", "missing"}).is_nil());
  CHECK(server.Stop() == 0);
}
