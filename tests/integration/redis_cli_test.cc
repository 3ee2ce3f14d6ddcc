// The real redis-cli and redis-benchmark binaries against the server.
#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Contains;
using rockcache::testing::Run;
using rockcache::testing::RunShell;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace redis_cli_test {

namespace {

// Runs redis-cli against the server (stderr folded into stdout) and returns its output.
std::string Cli(const TestServer& server, const std::string& args, int* code = nullptr) {
  return RunShell("timeout 30 redis-cli -p " + std::to_string(server.port()) + " " + args + " 2>&1",
                  code);
}

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

TEST_CASE("redis-cli commands", "[redis-cli]") {
  TestServer server;
  int code = -1;
  CHECK(Cli(server, "set a 1", &code) == "OK\n");
  CHECK(code == 0);
  CHECK(Cli(server, "get a") == "1\n");
  CHECK(Cli(server, "get missing") == "\n");  // nil prints as an empty line when not a tty
  CHECK(Cli(server, "incr a") == "2\n");
  CHECK(Cli(server, "ping") == "PONG\n");
  CHECK(Cli(server, "mset b 2 c 3") == "OK\n");
  CHECK(Cli(server, "mget a b nokey c") == "2\n2\n\n3\n");
  CHECK(Cli(server, "get") == "ERR wrong number of arguments for 'get' command\n\n");
  CHECK(Cli(server, "dbsize") == "3\n");
  CHECK(SortedLines(Cli(server, "--scan")) == std::vector<std::string>{"a", "b", "c"});
  CHECK(SortedLines(Cli(server, "--scan --pattern 'b*'")) == std::vector<std::string>{"b"});
  std::string info = Cli(server, "info server");
  CHECK(Contains(info, "# Server"));
  CHECK(Contains(info, "redis_version:7."));
  CHECK(Contains(info, "tcp_port:" + std::to_string(server.port())));
  CHECK_FALSE(Contains(info, "# Keyspace"));
  // Commands through redis-cli's interactive-style stdin input.
  CHECK(RunShell("printf 'set piped yes\\nget piped\\n' | timeout 30 redis-cli -p " +
                 std::to_string(server.port()) + " 2>&1") == "OK\nyes\n");
  Client c(server.port());
  CHECK(Run(c, {"GET", "piped"}) == "bulk:yes");
}

TEST_CASE("redis-benchmark runs without errors", "[redis-cli]") {
  TestServer server;
  int code = -1;
  std::string out = RunShell("timeout 120 redis-benchmark -p " + std::to_string(server.port()) +
                                 " -t set,get,incr,mset -n 2000 -q 2>&1",
                             &code);
  INFO(out);
  CHECK(code == 0);
  // -q prints one "NAME: N requests per second" line per test (progress lines end in \r).
  for (const char* test : {"SET: ", "GET: ", "INCR: ", "MSET (10 keys): "}) {
    CHECK(Contains(out, test));
  }
  CHECK_FALSE(Contains(out, "ERR"));
  CHECK_FALSE(Contains(out, "error"));
  CHECK_FALSE(Contains(out, "Error"));
  // The benchmark's keys are there afterwards.
  Client c(server.port());
  CHECK(Run(c, {"EXISTS", "key:__rand_int__", "counter:__rand_int__"}) == "int:2");
  CHECK(Run(c, {"STRLEN", "key:__rand_int__"}) == "int:3");  // -d 3: a random 3-byte value
  CHECK(Run(c, {"GET", "counter:__rand_int__"}) == "bulk:2000");
}

TEST_CASE("redis-benchmark -q fetches the server CONFIG and every default test is clean",
          "[redis-cli]") {
  TestServer server;
  int code = -1;
  std::string out = RunShell(
      "timeout 300 redis-benchmark -p " + std::to_string(server.port()) + " -n 500 -c 10 -q 2>&1",
      &code);
  INFO(out);
  CHECK(code == 0);
  CHECK_FALSE(Contains(out, "WARNING"));
  CHECK_FALSE(Contains(out, "Could not fetch"));
  CHECK_FALSE(Contains(out, "ERR"));
  CHECK_FALSE(Contains(out, "rror"));
  for (const char* test :
       {"PING_INLINE: ", "SET: ", "GET: ", "LPUSH: ", "SADD: ", "HSET: ", "ZADD: ", "ZPOPMIN: ",
        "LRANGE_600 (first 600 elements): ", "MSET (10 keys): "}) {
    CHECK(Contains(out, test));
  }
}

}  // namespace redis_cli_test
