// Hostile clients against the commands of issue 12 items 3 and 4: replies that would pass
// client-output-buffer-limit (ZRANDMEMBER with a huge negative count, ZUNION/ZINTER/ZDIFF of big
// inputs) close the client without a reply, as Redis closes a client over its limit, and the
// server keeps working; BITFIELD/SETBIT offsets and LCS tables are bounded by proto-max-bulk-len.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::RawConnection;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace hostile_algebra_test {

namespace {

void ExpectDisconnectedWithoutReply(int port, const std::vector<std::string>& command) {
  RawConnection attacker(port);
  attacker.Send(Resp(command));
  std::string received;
  CHECK(attacker.WaitClosed(&received, 60000));
  CHECK(received.empty());
}

}  // namespace

TEST_CASE("ZRANDMEMBER and ZUNION/ZINTER/ZDIFF replies stop at the output limit",
          "[hostile][algebra]") {
  TestServer server;
  Client admin(server.port());
  // Two sorted sets and a set of 2000 members of 1 KB: each reply below is about 2 MB or more.
  const std::string pad(1000, 'p');
  for (int batch = 0; batch < 20; ++batch) {
    std::vector<std::string> zadd = {"ZADD", "z"}, sadd = {"SADD", "s"};
    for (int i = batch * 100; i < (batch + 1) * 100; ++i) {
      std::string member = pad + std::to_string(i);
      zadd.insert(zadd.end(), {std::to_string(i), member});
      sadd.push_back(member);
    }
    REQUIRE(Run(admin, zadd) == "int:100");
    REQUIRE(Run(admin, sadd) == "int:100");
  }
  CHECK(Run(admin, {"CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"}) ==
        "status:OK");
  ExpectDisconnectedWithoutReply(server.port(), {"ZRANDMEMBER", "z", "-100000000", "WITHSCORES"});
  ExpectDisconnectedWithoutReply(server.port(), {"ZUNION", "2", "z", "s", "WITHSCORES"});
  ExpectDisconnectedWithoutReply(server.port(), {"ZINTER", "2", "z", "s"});
  ExpectDisconnectedWithoutReply(server.port(), {"ZDIFF", "2", "z", "nokey"});
  // The STORE forms reply one integer: no limit applies.
  CHECK(Run(admin, {"ZUNIONSTORE", "d", "2", "z", "s"}) == "int:2000");
  CHECK(Run(admin, {"ZINTERCARD", "2", "z", "s", "LIMIT", "10"}) == "int:10");
  CHECK(Run(admin, {"ZRANDMEMBER", "z", "-3"}).rfind("[bulk:ppp", 0) == 0);
  CHECK(Run(admin, {"PING"}) == "status:PONG");
}

TEST_CASE("Bit offsets and LCS tables are bounded by proto-max-bulk-len", "[hostile][bitmap]") {
  TestServer server;
  Client c(server.port());
  const char kBadOffset[] = "err:ERR bit offset is not an integer or out of range";
  CHECK(Run(c, {"CONFIG", "SET", "proto-max-bulk-len", "1mb"}) == "status:OK");
  CHECK(Run(c, {"SETBIT", "b", std::to_string(8 * 1024 * 1024), "1"}) == kBadOffset);
  CHECK(Run(c, {"SETBIT", "b", std::to_string(8 * 1024 * 1024 - 1), "1"}) == "int:0");
  CHECK(Run(c, {"STRLEN", "b"}) == "int:1048576");
  CHECK(Run(c, {"BITFIELD", "b", "SET", "u8", "#1048576", "1"}) == kBadOffset);
  CHECK(Run(c, {"BITFIELD", "b", "SET", "i64", "#9223372036854775807", "1"}) == kBadOffset);
  CHECK(Run(c, {"BITCOUNT", "b"}) == "int:1");
  CHECK(Run(c, {"SET", "x", std::string(400, 'x')}) == "status:OK");
  CHECK(Run(c, {"SET", "y", std::string(400, 'x')}) == "status:OK");
  CHECK(Run(c, {"LCS", "x", "y", "LEN"}) == "int:400");  // a 643 KB table: allowed
  CHECK(Run(c, {"SET", "y", std::string(1000, 'x')}) == "status:OK");
  CHECK(Run(c, {"LCS", "x", "y", "LEN"}) ==
        "err:ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
}

}  // namespace hostile_algebra_test
