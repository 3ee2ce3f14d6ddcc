// Server commands ([connection]), checked against Redis 7's exact replies: CONFIG GET / SET,
// INFO, TIME, COMMAND COUNT, DBSIZE, FLUSHDB / FLUSHALL (kept across a restart), SHUTDOWN.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>
#include <map>
#include <sstream>
#include <string>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Contains;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace server_commands_test {

namespace {

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

}  // namespace server_commands_test
