// CLIENT SETNAME / GETNAME / ID / LIST and CLIENT KILL ([connection]), checked against Redis 7's
// exact replies.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Contains;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace client_command_test {

namespace {

// The CLIENT LIST line that contains `needle`, or "".
std::string ClientListLine(Client& c, const std::string& needle) {
  Reply list = c.Command({"CLIENT", "LIST"});
  REQUIRE(list.type == REDIS_REPLY_STRING);
  std::istringstream in(list.str);
  std::string line;
  while (std::getline(in, line)) {
    if (Contains(line + " ", needle)) return line;
  }
  return "";
}

// The value of `field=` in a CLIENT LIST line.
std::string Field(const std::string& line, const std::string& field) {
  std::istringstream in(line);
  std::string word;
  while (in >> word) {
    if (word.rfind(field + "=", 0) == 0) return word.substr(field.size() + 1);
  }
  return "";
}

}  // namespace

TEST_CASE("CLIENT SETNAME, GETNAME, ID, LIST", "[connection]") {
  TestServer server;
  Client c(server.port());
  Client other(server.port());
  CHECK(Run(c, {"CLIENT", "GETNAME"}) == "nil");
  CHECK(Run(c, {"CLIENT", "SETNAME", "myname"}) == "status:OK");
  CHECK(Run(c, {"CLIENT", "GETNAME"}) == "bulk:myname");
  CHECK(Run(c, {"client", "setname", "a b"}) ==
        "err:ERR Client names cannot contain spaces, newlines or special characters.");
  CHECK(Run(c, {"CLIENT", "SETNAME", "a\nb"}) ==
        "err:ERR Client names cannot contain spaces, newlines or special characters.");
  CHECK(Run(c, {"CLIENT", "GETNAME"}) == "bulk:myname");
  CHECK(Run(c, {"CLIENT", "SETNAME"}) ==
        "err:ERR wrong number of arguments for 'client|setname' command");
  CHECK(Run(c, {"CLIENT", "GETNAME", "x"}) ==
        "err:ERR wrong number of arguments for 'client|getname' command");
  CHECK(Run(c, {"CLIENT"}) == "err:ERR wrong number of arguments for 'client' command");
  CHECK(Run(c, {"CLIENT", "foo"}) == "err:ERR unknown subcommand 'foo'. Try CLIENT HELP.");

  Reply id = c.Command({"CLIENT", "ID"});
  Client later(server.port());  // connected after `c` was accepted
  Reply later_id = later.Command({"CLIENT", "ID"});
  Reply other_id = other.Command({"CLIENT", "ID"});
  REQUIRE(id.type == REDIS_REPLY_INTEGER);
  REQUIRE(other_id.type == REDIS_REPLY_INTEGER);
  CHECK(id.integer > 0);
  CHECK(later_id.integer > id.integer);  // ids grow with each accepted connection
  CHECK(other_id.integer != id.integer);
  CHECK(other_id.integer != later_id.integer);
  CHECK(Run(c, {"CLIENT", "ID"}) == "int:" + std::to_string(id.integer));

  Reply list = c.Command({"CLIENT", "LIST"});
  REQUIRE(list.type == REDIS_REPLY_STRING);
  std::string mine = ClientListLine(c, "id=" + std::to_string(id.integer) + " ");
  REQUIRE_FALSE(mine.empty());
  CHECK(Field(mine, "name") == "myname");
  CHECK(Field(mine, "addr").rfind("127.0.0.1:", 0) == 0);
  CHECK(Field(mine, "cmd") == "client|list");
  std::string theirs = ClientListLine(c, "id=" + std::to_string(other_id.integer) + " ");
  REQUIRE_FALSE(theirs.empty());
  CHECK(Contains(theirs, " name= "));
  // One line per connection, each ending with a newline.
  CHECK(list.str.back() == '\n');
  size_t lines = 0;
  for (char ch : list.str) lines += ch == '\n';
  CHECK(lines == 3);
  // Setting an empty name clears it.
  CHECK(Run(c, {"CLIENT", "SETNAME", ""}) == "status:OK");
  CHECK(Run(c, {"CLIENT", "GETNAME"}) == "nil");
}

TEST_CASE("CLIENT KILL closes the other connection", "[connection]") {
  TestServer server;
  Client killer(server.port());

  SECTION("CLIENT KILL ID") {
    Client victim(server.port());
    long long victim_id = victim.Command({"CLIENT", "ID"}).integer;
    CHECK(Run(killer, {"CLIENT", "KILL", "ID", std::to_string(victim_id)}) == "int:1");
    // As in Redis, the kill is done when the reply arrives: a second kill finds no client.
    CHECK(Run(killer, {"CLIENT", "KILL", "ID", std::to_string(victim_id)}) == "int:0");
    Reply r;
    CHECK_FALSE(victim.TryCommand({"PING"}, &r));
    CHECK(Run(killer, {"CLIENT", "KILL", "ID", "999999"}) == "int:0");
    CHECK(Run(killer, {"CLIENT", "KILL", "ID", "abc"}) ==
          "err:ERR client-id should be greater than 0");
    CHECK(Run(killer, {"CLIENT", "KILL", "ID"}) == "err:ERR No such client");
    CHECK(Run(killer, {"CLIENT", "KILL"}) ==
          "err:ERR wrong number of arguments for 'client|kill' command");
    CHECK(Run(killer, {"PING"}) == "status:PONG");
    CHECK(ClientListLine(killer, "id=" + std::to_string(victim_id) + " ").empty());
  }

  SECTION("old form CLIENT KILL ip:port") {
    RawConnection victim(server.port());
    victim.Send(Resp({"CLIENT", "SETNAME", "victim"}));
    CHECK(victim.ReadExactly(5) == "+OK\r\n");
    std::string line = ClientListLine(killer, "name=victim ");
    REQUIRE_FALSE(line.empty());
    std::string addr = Field(line, "addr");
    REQUIRE(addr.rfind("127.0.0.1:", 0) == 0);
    CHECK(Run(killer, {"CLIENT", "KILL", addr}) == "status:OK");
    std::string got;
    CHECK(victim.WaitClosed(&got, 5000));
    CHECK(got.empty());
    CHECK(Run(killer, {"CLIENT", "KILL", addr}) == "err:ERR No such client");
    CHECK(Run(killer, {"CLIENT", "KILL", "1.2.3.4:5"}) == "err:ERR No such client");
    CHECK(Run(killer, {"PING"}) == "status:PONG");
  }
}

}  // namespace client_command_test
