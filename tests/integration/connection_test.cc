// A connection's own commands, checked against Redis 7's exact replies: PING, ECHO, unknown
// commands and arity errors, QUIT, HELLO, SELECT, AUTH. CLIENT: client_command_test.cc; server
// commands: server_commands_test.cc; the wire protocol: protocol_test.cc; maxclients, timeout and
// output buffer limits: connection_limits_test.cc.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace connection_test {

TEST_CASE("PING and ECHO", "[connection]") {
  TestServer server;
  Client c(server.port());
  REQUIRE(c.connected());
  CHECK(Run(c, {"PING"}) == "status:PONG");
  CHECK(Run(c, {"ping"}) == "status:PONG");
  CHECK(Run(c, {"PING", "hello world"}) == "bulk:hello world");
  CHECK(Run(c, {"PING", "a", "b"}) == "err:ERR wrong number of arguments for 'ping' command");
  CHECK(Run(c, {"ECHO", "x"}) == "bulk:x");
  CHECK(Run(c, {"ECHO", ""}) == "bulk:");
  CHECK(Run(c, {"ECHO", std::string("a\0b\r\nc", 6)}) == std::string("bulk:a\0b\r\nc", 11));
  CHECK(Run(c, {"ECHO"}) == "err:ERR wrong number of arguments for 'echo' command");
  CHECK(Run(c, {"ECHO", "a", "b"}) == "err:ERR wrong number of arguments for 'echo' command");
}

TEST_CASE("unknown commands and arity errors use Redis's texts", "[connection]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"foo", "a", "b"}) ==
        "err:ERR unknown command 'foo', with args beginning with: 'a' 'b' ");
  CHECK(Run(c, {"FOO"}) == "err:ERR unknown command 'FOO', with args beginning with: ");
  // Redis quotes arguments until the list passes 128 bytes, each cut at the room left.
  std::string long_arg(200, 'x');
  const std::string expected_long =
      "err:ERR unknown command 'foo', with args beginning with: '" + std::string(128, 'x') + "' ";
  CHECK(Run(c, {"foo", long_arg, "b"}) == expected_long);
  CHECK(Run(c, {"get"}) == "err:ERR wrong number of arguments for 'get' command");
  CHECK(Run(c, {"GET"}) == "err:ERR wrong number of arguments for 'get' command");
  CHECK(Run(c, {"Get", "a", "b"}) == "err:ERR wrong number of arguments for 'get' command");
  CHECK(Run(c, {"set", "a"}) == "err:ERR wrong number of arguments for 'set' command");
  CHECK(Run(c, {"time", "x"}) == "err:ERR wrong number of arguments for 'time' command");
  CHECK(Run(c, {"dbsize", "x"}) == "err:ERR wrong number of arguments for 'dbsize' command");
  // The connection is still usable after errors.
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"GET", "a"}) == "bulk:1");
}

TEST_CASE("QUIT replies +OK and closes the connection", "[connection]") {
  TestServer server;
  {
    RawConnection raw(server.port());
    raw.Send(Resp({"QUIT"}));
    std::string got;
    CHECK(raw.WaitClosed(&got, 5000));
    CHECK(got == "+OK\r\n");
  }
  {
    // Commands pipelined after QUIT are not executed.
    RawConnection raw(server.port());
    raw.Send("PING\r\nQUIT\r\nSET after-quit 1\r\n");
    std::string got;
    CHECK(raw.WaitClosed(&got, 5000));
    CHECK(got == "+PONG\r\n+OK\r\n");
  }
  Client c(server.port());
  CHECK(Run(c, {"EXISTS", "after-quit"}) == "int:0");
  // Redis ignores QUIT's arguments.
  Reply r;
  REQUIRE(c.TryCommand({"QUIT", "x"}, &r));
  CHECK(Describe(r) == "status:OK");
  CHECK_FALSE(c.TryCommand({"PING"}, &r));
}

TEST_CASE("HELLO answers the RESP2 handshake", "[connection]") {
  TestServer server;
  Client c(server.port());
  long long id = c.Command({"CLIENT", "ID"}).integer;
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{"HELLO"}, std::vector<std::string>{"HELLO", "2"}}) {
    INFO(cmd.size());
    Reply r = c.Command(cmd);
    REQUIRE(r.type == REDIS_REPLY_ARRAY);
    REQUIRE(r.elements.size() == 14);
    CHECK(Describe(r.elements[0]) == "bulk:server");
    CHECK(Describe(r.elements[1]) == "bulk:redis");
    CHECK(Describe(r.elements[2]) == "bulk:version");
    CHECK(r.elements[3].type == REDIS_REPLY_STRING);
    CHECK(r.elements[3].str.rfind("7.", 0) == 0);
    CHECK(Describe(r.elements[4]) == "bulk:proto");
    CHECK(Describe(r.elements[5]) == "int:2");
    CHECK(Describe(r.elements[6]) == "bulk:id");
    CHECK(Describe(r.elements[7]) == "int:" + std::to_string(id));
    CHECK(Describe(r.elements[8]) == "bulk:mode");
    CHECK(Describe(r.elements[9]) == "bulk:standalone");
    CHECK(Describe(r.elements[10]) == "bulk:role");
    CHECK(Describe(r.elements[11]) == "bulk:master");
    CHECK(Describe(r.elements[12]) == "bulk:modules");
    CHECK(Describe(r.elements[13]) == "[]");
  }
  CHECK(Run(c, {"HELLO", "4"}) == "err:NOPROTO unsupported protocol version");
  CHECK(Run(c, {"HELLO", "1"}) == "err:NOPROTO unsupported protocol version");
  CHECK(Run(c, {"HELLO", "abc"}) == "err:ERR Protocol version is not an integer or out of range");
  CHECK(Run(c, {"HELLO", "2", "foo"}) == "err:ERR Syntax error in HELLO option 'foo'");
  // HELLO 2 SETNAME names the connection.
  Reply named = c.Command({"HELLO", "2", "SETNAME", "hello-name"});
  CHECK(named.type == REDIS_REPLY_ARRAY);
  CHECK(Run(c, {"CLIENT", "GETNAME"}) == "bulk:hello-name");
  // Still RESP2 after the failed HELLO 4 (HELLO 3 itself: resp3_test.cc).
  CHECK(Run(c, {"PING"}) == "status:PONG");
}

TEST_CASE("SELECT accepts the configured databases", "[connection]") {
  TestServer server({"--databases", "2"});
  Client c(server.port());
  CHECK(Run(c, {"SELECT", "1"}) == "status:OK");
  CHECK(Run(c, {"SELECT", "0"}) == "status:OK");
  CHECK(Run(c, {"SELECT", "2"}) == "err:ERR DB index is out of range");
  CHECK(Run(c, {"SELECT", "-1"}) == "err:ERR DB index is out of range");
  CHECK(Run(c, {"SELECT", "abc"}) == "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"SELECT"}) == "err:ERR wrong number of arguments for 'select' command");
  CHECK(Run(c, {"SET", "k", "v"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "bulk:v");
}

TEST_CASE("AUTH without requirepass", "[connection]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"AUTH", "x"}) ==
        "err:ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?");
  // The default user has no password: any password is accepted for it, other users don't exist.
  CHECK(Run(c, {"AUTH", "default", "x"}) == "status:OK");
  CHECK(Run(c, {"AUTH", "someone", "x"}) ==
        "err:WRONGPASS invalid username-password pair or user is disabled.");
  CHECK(Run(c, {"AUTH"}) == "err:ERR wrong number of arguments for 'auth' command");
  CHECK(Run(c, {"AUTH", "a", "b", "c"}) == "err:ERR syntax error");
  CHECK(Run(c, {"PING"}) == "status:PONG");
}

TEST_CASE("AUTH with requirepass", "[connection]") {
  TestServer server({"--requirepass", "secret"});
  Client c(server.port());
  CHECK(Run(c, {"GET", "a"}) == "err:NOAUTH Authentication required.");
  CHECK(Run(c, {"SET", "a", "1"}) == "err:NOAUTH Authentication required.");
  CHECK(Run(c, {"PING"}) == "err:NOAUTH Authentication required.");
  // As Redis 7: unknown commands and arity errors are reported before the NOAUTH check.
  CHECK(Run(c, {"nosuchcommand"}) ==
        "err:ERR unknown command 'nosuchcommand', with args beginning with: ");
  CHECK(Run(c, {"get"}) == "err:ERR wrong number of arguments for 'get' command");
  {
    // Redis 7.0 says "the HELLO AUTH <user> <pass> option", later 7.x "HELLO <proto> AUTH".
    std::string hello = Run(c, {"HELLO"});
    const std::string head =
        "err:NOAUTH HELLO must be called with the client already authenticated, otherwise the ";
    const std::string tail =
        "AUTH <user> <pass> option can be used to authenticate the client and select the RESP "
        "protocol version at the same time";
    CHECK_THAT(hello, Catch::Matchers::Equals(head + "HELLO " + tail) ||
                          Catch::Matchers::Equals(head + "HELLO <proto> " + tail));
  }
  CHECK(Run(c, {"AUTH", "wrong"}) ==
        "err:WRONGPASS invalid username-password pair or user is disabled.");
  CHECK(Run(c, {"GET", "a"}) == "err:NOAUTH Authentication required.");
  CHECK(Run(c, {"AUTH", "secret"}) == "status:OK");
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"GET", "a"}) == "bulk:1");

  Client c2(server.port());
  CHECK(Run(c2, {"AUTH", "default", "wrong"}) ==
        "err:WRONGPASS invalid username-password pair or user is disabled.");
  CHECK(Run(c2, {"AUTH", "other", "secret"}) ==
        "err:WRONGPASS invalid username-password pair or user is disabled.");
  CHECK(Run(c2, {"GET", "a"}) == "err:NOAUTH Authentication required.");
  CHECK(Run(c2, {"AUTH", "default", "secret"}) == "status:OK");
  CHECK(Run(c2, {"GET", "a"}) == "bulk:1");

  Client c3(server.port());
  CHECK(Run(c3, {"HELLO", "2", "AUTH", "default", "wrong"}) ==
        "err:WRONGPASS invalid username-password pair or user is disabled.");
  CHECK(Run(c3, {"GET", "a"}) == "err:NOAUTH Authentication required.");
  Reply hello = c3.Command({"HELLO", "2", "AUTH", "default", "secret"});
  CHECK(hello.type == REDIS_REPLY_ARRAY);
  CHECK(Run(c3, {"GET", "a"}) == "bulk:1");

  // QUIT works before authentication.
  Client c4(server.port());
  Reply r;
  REQUIRE(c4.TryCommand({"QUIT"}, &r));
  CHECK(Describe(r) == "status:OK");
}

}  // namespace connection_test
