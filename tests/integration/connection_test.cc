// Connection-level and server commands, checked against Redis 7's exact replies: PING, ECHO,
// errors, QUIT, HELLO, SELECT, AUTH, CLIENT, CONFIG, INFO, TIME, COMMAND, DBSIZE, FLUSH*,
// SHUTDOWN, maxclients, idle timeout, protocol errors, inline commands, output buffer limits.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Contains;
using rockcache::testing::Describe;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace connection_test {

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

// The value of a "name:value" line in INFO output, or "" when absent.
std::string InfoField(const std::string& info, const std::string& name) {
  std::istringstream in(info);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind(name + ":", 0) == 0) return line.substr(name.size() + 1);
  }
  return "";
}

}  // namespace

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

TEST_CASE("CONFIG GET and CONFIG SET", "[connection]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"CONFIG", "GET", "port"}) ==
        "[bulk:port, bulk:" + std::to_string(server.port()) + "]");
  CHECK(Run(c, {"CONFIG", "GET", "nosuchoption"}) == "[]");
  CHECK(Run(c, {"CONFIG", "GET"}) == "err:ERR wrong number of arguments for 'config|get' command");

  Reply pool = c.Command({"CONFIG", "GET", "pool-*"});
  REQUIRE(pool.type == REDIS_REPLY_ARRAY);
  REQUIRE(pool.elements.size() % 2 == 0);
  CHECK(pool.elements.size() >= 2 * 8);
  std::map<std::string, std::string> values;
  for (size_t i = 0; i + 1 < pool.elements.size(); i += 2) {
    CHECK(pool.elements[i].str.rfind("pool-", 0) == 0);
    values[pool.elements[i].str] = pool.elements[i + 1].str;
  }
  CHECK(values["pool-threads"] == "0");  // auto: derived from the core count
  CHECK(values["pool-mode"] == "adaptive");
  CHECK(values["pool-spin-count"] == "-1");  // auto
  CHECK(values.count("workers-per-list") == 0);

  // Runtime options change and CONFIG GET shows the new value.
  CHECK(Run(c, {"CONFIG", "SET", "maxclients", "123"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "maxclients"}) == "[bulk:maxclients, bulk:123]");
  CHECK(Run(c, {"CONFIG", "SET", "pool-spin-count", "50"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "pool-spin-count"}) == "[bulk:pool-spin-count, bulk:50]");
  CHECK(Run(c, {"config", "set", "LOGLEVEL", "warning"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "loglevel"}) == "[bulk:loglevel, bulk:warning]");
  // Redis 7: several pairs in one CONFIG SET.
  CHECK(Run(c, {"CONFIG", "SET", "hz", "20", "timeout", "7"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "hz"}) == "[bulk:hz, bulk:20]");
  CHECK(Run(c, {"CONFIG", "GET", "timeout"}) == "[bulk:timeout, bulk:7]");

  // Immutable options, bad values, unknown options.
  CHECK(Run(c, {"CONFIG", "SET", "port", "1234"}) ==
        "err:ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable "
        "config");
  CHECK(Run(c, {"CONFIG", "GET", "port"}) ==
        "[bulk:port, bulk:" + std::to_string(server.port()) + "]");
  CHECK(Run(c, {"CONFIG", "SET", "maxclients", "abc"}) ==
        "err:ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument "
        "couldn't be parsed into an integer");
  CHECK(Run(c, {"CONFIG", "GET", "maxclients"}) == "[bulk:maxclients, bulk:123]");
  CHECK(Run(c, {"CONFIG", "SET", "loglevel", "bad"}) ==
        "err:ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must "
        "be one of the following: debug, verbose, notice, warning");
  CHECK(Run(c, {"CONFIG", "SET", "nosuch", "1"}) ==
        "err:ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  CHECK(Run(c, {"CONFIG", "SET", "hz"}) ==
        "err:ERR wrong number of arguments for 'config|set' command");
  CHECK(Run(c, {"CONFIG", "foo"}) == "err:ERR unknown subcommand 'foo'. Try CONFIG HELP.");
  CHECK(Run(c, {"PING"}) == "status:PONG");
}

TEST_CASE("INFO, TIME, COMMAND COUNT, DBSIZE", "[connection]") {
  TestServer server;
  Client c(server.port());

  Reply info = c.Command({"INFO"});
  REQUIRE(info.type == REDIS_REPLY_STRING);
  CHECK(info.str.rfind("# Server\r\n", 0) == 0);
  CHECK(InfoField(info.str, "redis_version").rfind("7.", 0) == 0);
  CHECK(InfoField(info.str, "tcp_port") == std::to_string(server.port()));
  CHECK(Contains(info.str, "# Keyspace\r\n"));
  Reply server_section = c.Command({"INFO", "server"});
  REQUIRE(server_section.type == REDIS_REPLY_STRING);
  CHECK(Contains(server_section.str, "# Server\r\n"));
  CHECK_FALSE(Contains(server_section.str, "# Keyspace"));

  // INFO keyspace: no db0 line while empty, then Redis's db0 line.
  Reply keyspace = c.Command({"INFO", "keyspace"});
  REQUIRE(keyspace.type == REDIS_REPLY_STRING);
  CHECK(keyspace.str.rfind("# Keyspace\r\n", 0) == 0);
  CHECK_FALSE(Contains(keyspace.str, "db0:"));
  CHECK(Run(c, {"DBSIZE"}) == "int:0");
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"SET", "b", "2"}) == "status:OK");
  CHECK(Run(c, {"SET", "c", "3", "EX", "1000"}) == "status:OK");
  CHECK(Run(c, {"DBSIZE"}) == "int:3");
  keyspace = c.Command({"INFO", "keyspace"});
  // keys= is exact; expires= is not tracked per write yet (always 0), so only its presence is
  // checked: see the storage notes in the closing note of the storage issue.
  CHECK_THAT(InfoField(keyspace.str, "db0"), Catch::Matchers::StartsWith("keys=3,expires="));
  CHECK_THAT(InfoField(keyspace.str, "db0"), Catch::Matchers::Contains(",avg_ttl="));
  CHECK(Run(c, {"DEL", "a"}) == "int:1");
  CHECK(Run(c, {"DBSIZE"}) == "int:2");

  Reply time = c.Command({"TIME"});
  REQUIRE(time.type == REDIS_REPLY_ARRAY);
  REQUIRE(time.elements.size() == 2);
  REQUIRE(time.elements[0].type == REDIS_REPLY_STRING);
  REQUIRE(time.elements[1].type == REDIS_REPLY_STRING);
  long long secs = std::stoll(time.elements[0].str);
  long long usecs = std::stoll(time.elements[1].str);
  CHECK(std::llabs(secs - static_cast<long long>(std::time(nullptr))) <= 2);
  CHECK(usecs >= 0);
  CHECK(usecs < 1000000);

  Reply count = c.Command({"COMMAND", "COUNT"});
  REQUIRE(count.type == REDIS_REPLY_INTEGER);
  CHECK(count.integer > 40);
  Reply all = c.Command({"COMMAND"});
  REQUIRE(all.type == REDIS_REPLY_ARRAY);
  CHECK(static_cast<long long>(all.elements.size()) == count.integer);
  CHECK(Run(c, {"COMMAND", "COUNT", "x"}) ==
        "err:ERR wrong number of arguments for 'command|count' command");
}

TEST_CASE("FLUSHDB and FLUSHALL empty the database", "[connection]") {
  TestServer server;
  Client c(server.port());
  for (int i = 0; i < 50; ++i) {
    REQUIRE(Run(c, {"SET", "k" + std::to_string(i), "v"}) == "status:OK");
  }
  CHECK(Run(c, {"DBSIZE"}) == "int:50");
  CHECK(Run(c, {"FLUSHDB"}) == "status:OK");
  CHECK(Run(c, {"DBSIZE"}) == "int:0");
  CHECK(Run(c, {"GET", "k1"}) == "nil");
  CHECK(Run(c, {"KEYS", "*"}) == "[]");
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"GET", "a"}) == "bulk:1");
  CHECK(Run(c, {"FLUSHALL"}) == "status:OK");
  CHECK(Run(c, {"GET", "a"}) == "nil");
  CHECK(Run(c, {"DBSIZE"}) == "int:0");
  CHECK(Run(c, {"SET", "b", "1"}) == "status:OK");
  CHECK(Run(c, {"FLUSHALL", "ASYNC"}) == "status:OK");
  CHECK(Run(c, {"EXISTS", "b"}) == "int:0");
  CHECK(Run(c, {"FLUSHDB", "SYNC"}) == "status:OK");
  CHECK(Run(c, {"FLUSHDB", "foo"}) == "err:ERR syntax error");
  CHECK(Run(c, {"FLUSHALL", "foo"}) == "err:ERR syntax error");
  // Flushed keys stay flushed across a restart.
  CHECK(Run(c, {"SET", "survivor", "1"}) == "status:OK");
  server.Restart();
  Client c2(server.port());
  CHECK(Run(c2, {"DBSIZE"}) == "int:1");
  CHECK(Run(c2, {"GET", "survivor"}) == "bulk:1");
  CHECK(Run(c2, {"GET", "k1"}) == "nil");
}

TEST_CASE("SHUTDOWN stops the server with exit code 0", "[connection]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "before-shutdown", "yes"}) == "status:OK");
  CHECK(Run(c, {"SHUTDOWN", "foo"}) == "err:ERR syntax error");
  Reply r;
  // Redis sends no reply to a successful SHUTDOWN: the connection just closes.
  bool replied = c.TryCommand({"SHUTDOWN"}, &r);
  CHECK_FALSE(replied);
  CHECK(server.WaitExit(20000) == 0);
  CHECK_FALSE(server.running());
  server.Restart();
  Client c2(server.port());
  CHECK(Run(c2, {"GET", "before-shutdown"}) == "bulk:yes");
}

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

}  // namespace connection_test
