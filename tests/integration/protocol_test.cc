// The wire protocol ([connection]): protocol errors close the connection with Redis's message
// (replies sent before them are delivered, proto-max-bulk-len is the limit), and inline commands
// (quoting, empty lines, mixed with multibulk in one buffer).
#include <catch2/catch.hpp>
#include <string>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::RawConnection;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace protocol_test {

TEST_CASE("protocol errors close the connection with Redis's message", "[connection]") {
  TestServer server({"--proto-max-bulk-len", "1mb"});
  Client other(server.port());

  {
    RawConnection raw(server.port());
    raw.Send("*abc\r\n");
    std::string got;
    CHECK(raw.WaitClosed(&got, 5000));
    CHECK(got == "-ERR Protocol error: invalid multibulk length\r\n");
  }
  CHECK(Run(other, {"PING"}) == "status:PONG");
  {
    RawConnection raw(server.port());
    raw.Send("*1\r\nx\r\n");
    std::string got;
    CHECK(raw.WaitClosed(&got, 5000));
    CHECK(got == "-ERR Protocol error: expected '$', got 'x'\r\n");
  }
  {
    RawConnection raw(server.port());
    raw.Send("*1\r\n$2000000\r\n");
    std::string got;
    CHECK(raw.WaitClosed(&got, 5000));
    CHECK(got == "-ERR Protocol error: invalid bulk length\r\n");
  }
  {
    RawConnection raw(server.port());
    raw.Send("*1\r\n$abc\r\n");
    std::string got;
    CHECK(raw.WaitClosed(&got, 5000));
    CHECK(got == "-ERR Protocol error: invalid bulk length\r\n");
  }
  {
    RawConnection raw(server.port());
    raw.Send("set k 'a b\r\n");
    std::string got;
    CHECK(raw.WaitClosed(&got, 5000));
    CHECK(got == "-ERR Protocol error: unbalanced quotes in request\r\n");
  }
  {
    // Exactly proto-max-bulk-len (1 MiB) is still allowed.
    RawConnection raw(server.port());
    raw.Send(Resp({"SET", "big", std::string(1048576, 'z')}));
    CHECK(raw.ReadExactly(5) == "+OK\r\n");
  }
  CHECK(Run(other, {"STRLEN", "big"}) == "int:1048576");
  // Replies sent before a protocol error in the same buffer are delivered.
  {
    RawConnection raw(server.port());
    raw.Send("PING\r\n*abc\r\n");
    std::string got;
    CHECK(raw.WaitClosed(&got, 5000));
    CHECK(got == "+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n");
  }
  CHECK(Run(other, {"PING"}) == "status:PONG");
}

TEST_CASE("inline commands", "[connection]") {
  TestServer server;
  RawConnection raw(server.port());
  raw.Send("PING\r\n");
  CHECK(raw.ReadExactly(7) == "+PONG\r\n");
  raw.Send("PING\n");
  CHECK(raw.ReadExactly(7) == "+PONG\r\n");
  raw.Send("\r\n\r\nPING\r\n");  // empty lines are skipped
  CHECK(raw.ReadExactly(7) == "+PONG\r\n");
  raw.Send("set k \"a b\"\r\nget k\r\n");
  std::string expected = "+OK\r\n$3\r\na b\r\n";
  CHECK(raw.ReadExactly(expected.size()) == expected);
  raw.Send("  ping   hi  \r\n");
  CHECK(raw.ReadExactly(8) == "$2\r\nhi\r\n");
  raw.Send("echo \"a\\x41\\n\"\r\n");
  CHECK(raw.ReadExactly(9) == "$3\r\naA\n\r\n");
  // A multibulk command and an inline command in one buffer.
  raw.Send(Resp({"GET", "k"}) + "EXISTS k\r\n");
  expected = "$3\r\na b\r\n:1\r\n";
  CHECK(raw.ReadExactly(expected.size()) == expected);
  // No more bytes than that.
  CHECK(raw.ReadExactly(1, 200).empty());
}

}  // namespace protocol_test
