// Introspection: OBJECT, MEMORY, TOUCH, COMMAND, LATENCY, CONFIG RESETSTAT, and redis-cli's
// --bigkeys / --memkeys / --hotkeys scans over a server holding every type.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Contains;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::RunShell;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace introspection_test {

namespace {

// One key of every type, small, plus big ones past Redis's listpack/intset limits.
void FillAllTypes(Client& c) {
  REQUIRE(Run(c, {"SET", "str:int", "12345"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "str:short", "hello"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "str:long", std::string(100, 'x')}) == "status:OK");
  REQUIRE(Run(c, {"HSET", "hash:small", "a", "1", "b", "2"}) == "int:2");
  REQUIRE(Run(c, {"HSET", "hash:longvalue", "a", std::string(65, 'v')}) == "int:1");
  REQUIRE(Run(c, {"RPUSH", "list", "a", "b", "c"}) == "int:3");
  REQUIRE(Run(c, {"SADD", "set:ints", "1", "2", "3"}) == "int:3");
  REQUIRE(Run(c, {"SADD", "set:words", "a", "b"}) == "int:2");
  REQUIRE(Run(c, {"ZADD", "zset:small", "1", "a", "2", "b"}) == "int:2");
  std::vector<std::string> hset = {"HSET", "hash:big"}, sadd = {"SADD", "set:big"},
                           zadd = {"ZADD", "zset:big"};
  for (int i = 0; i < 600; ++i) {
    hset.push_back("f" + std::to_string(i));
    hset.push_back("v");
    sadd.push_back(std::to_string(i));
    zadd.push_back(std::to_string(i));
    zadd.push_back("m" + std::to_string(i));
  }
  REQUIRE(Run(c, hset) == "int:600");
  REQUIRE(Run(c, sadd) == "int:600");
  REQUIRE(Run(c, zadd) == "int:600");
}

std::string Cli(const TestServer& server, const std::string& args, int* code) {
  return RunShell("timeout 60 redis-cli -p " + std::to_string(server.port()) + " " + args + " 2>&1",
                  code);
}

}  // namespace

TEST_CASE("OBJECT ENCODING follows Redis's size rules and its thresholds", "[introspection]") {
  TestServer server;
  Client c(server.port());
  FillAllTypes(c);
  std::map<std::string, std::string> expected = {{"str:int", "bulk:int"},
                                                 {"str:short", "bulk:embstr"},
                                                 {"str:long", "bulk:raw"},
                                                 {"hash:small", "bulk:listpack"},
                                                 {"hash:longvalue", "bulk:hashtable"},
                                                 {"hash:big", "bulk:hashtable"},
                                                 {"list", "bulk:quicklist"},
                                                 {"set:ints", "bulk:intset"},
                                                 {"set:words", "bulk:hashtable"},
                                                 {"set:big", "bulk:hashtable"},
                                                 {"zset:small", "bulk:listpack"},
                                                 {"zset:big", "bulk:skiplist"},
                                                 {"nokey", "nil"}};
  for (const auto& [key, encoding] : expected) {
    INFO(key);
    CHECK(Run(c, {"OBJECT", "ENCODING", key}) == encoding);
  }
  // The thresholds are the Redis parameters of the config.
  REQUIRE(Run(c, {"CONFIG", "SET", "hash-max-listpack-entries", "1"}) == "status:OK");
  CHECK(Run(c, {"OBJECT", "ENCODING", "hash:small"}) == "bulk:hashtable");
  REQUIRE(Run(c, {"CONFIG", "SET", "hash-max-ziplist-entries", "1000", "hash-max-listpack-value",
                  "100"}) == "status:OK");
  CHECK(Run(c, {"OBJECT", "ENCODING", "hash:longvalue"}) == "bulk:listpack");
  CHECK(Run(c, {"OBJECT", "ENCODING", "hash:big"}) == "bulk:listpack");
  REQUIRE(Run(c, {"CONFIG", "SET", "set-max-intset-entries", "2"}) == "status:OK");
  CHECK(Run(c, {"OBJECT", "ENCODING", "set:ints"}) == "bulk:hashtable");
}

TEST_CASE("OBJECT FREQ / IDLETIME / REFCOUNT / HELP", "[introspection]") {
  TestServer server;
  Client c(server.port());
  REQUIRE(Run(c, {"SET", "k", "5"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "s", "abc"}) == "status:OK");
  CHECK(Run(c, {"OBJECT", "FREQ", "k"}) ==
        "err:ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
        "note that when switching between policies at runtime LRU and LFU data will take some "
        "time to adjust.");
  CHECK(Run(c, {"OBJECT", "IDLETIME", "k"}) == "int:0");
  CHECK(Run(c, {"OBJECT", "REFCOUNT", "k"}) == "int:2147483647");  // a shared integer in Redis
  CHECK(Run(c, {"OBJECT", "REFCOUNT", "s"}) == "int:1");
  CHECK(Run(c, {"OBJECT", "FREQ", "nokey"}) == "nil");
  REQUIRE(Run(c, {"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"}) == "status:OK");
  for (int i = 0; i < 50; ++i) REQUIRE(Run(c, {"GET", "k"}) == "bulk:5");
  Reply freq = c.Command({"OBJECT", "FREQ", "k"});
  REQUIRE(freq.type == REDIS_REPLY_INTEGER);
  CHECK(freq.integer >= 5);
  CHECK(
      Run(c, {"OBJECT", "IDLETIME", "k"}).rfind("err:ERR An LFU maxmemory policy is selected", 0) ==
      0);
  Reply help = c.Command({"OBJECT", "HELP"});
  REQUIRE(help.elements.size() > 4);
  CHECK(help.elements[0].str == "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  CHECK(Run(c, {"OBJECT", "ENCODING"}) ==
        "err:ERR wrong number of arguments for 'object|encoding' command");
  CHECK(Run(c, {"OBJECT", "FOO", "k"}) == "err:ERR unknown subcommand 'FOO'. Try OBJECT HELP.");
}

TEST_CASE("MEMORY USAGE grows with the value; MEMORY STATS / DOCTOR / HELP", "[introspection]") {
  TestServer server;
  Client c(server.port());
  FillAllTypes(c);
  CHECK(Run(c, {"MEMORY", "USAGE", "nokey"}) == "nil");
  auto usage = [&](const std::vector<std::string>& args) {
    Reply r = c.Command(args);
    REQUIRE(r.type == REDIS_REPLY_INTEGER);
    return r.integer;
  };
  long long short_str = usage({"MEMORY", "USAGE", "str:short"});
  long long long_str = usage({"MEMORY", "USAGE", "str:long"});
  CHECK(short_str > 5);
  CHECK(long_str >= short_str + 95);
  long long big_hash = usage({"MEMORY", "USAGE", "hash:big", "SAMPLES", "0"});
  CHECK(big_hash > 600 * 4);
  CHECK(usage({"MEMORY", "USAGE", "hash:big"}) > 600 * 4);  // 5 samples, extrapolated
  CHECK(usage({"MEMORY", "USAGE", "zset:big"}) > usage({"MEMORY", "USAGE", "zset:small"}));
  CHECK(usage({"MEMORY", "USAGE", "list"}) > 0);
  CHECK(Run(c, {"MEMORY", "USAGE", "list", "SAMPLES", "-1"}) == "err:ERR syntax error");
  CHECK(Run(c, {"MEMORY", "USAGE", "list", "SAMPLES", "x"}) ==
        "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"MEMORY", "USAGE", "list", "FOO"}) == "err:ERR syntax error");
  Reply stats = c.Command({"MEMORY", "STATS"});
  std::map<std::string, long long> fields;
  for (size_t i = 0; i + 1 < stats.elements.size(); i += 2) {
    fields[stats.elements[i].str] = stats.elements[i + 1].integer;
  }
  CHECK(fields.at("keys.count") == 12);
  CHECK(fields.at("total.allocated") > 0);
  CHECK(fields.count("dataset.bytes") == 1);
  Reply doctor = c.Command({"MEMORY", "DOCTOR"});
  CHECK(doctor.type == REDIS_REPLY_STRING);
  CHECK(c.Command({"MEMORY", "HELP"}).elements.size() > 5);
  CHECK(Run(c, {"MEMORY", "PURGE"}) == "status:OK");
}

TEST_CASE("TOUCH counts the keys that exist", "[introspection]") {
  TestServer server;
  Client c(server.port());
  REQUIRE(Run(c, {"SET", "a", "1"}) == "status:OK");
  REQUIRE(Run(c, {"RPUSH", "l", "x"}) == "int:1");
  CHECK(Run(c, {"TOUCH", "a", "l", "none", "a"}) == "int:3");
  CHECK(Run(c, {"TOUCH"}) == "err:ERR wrong number of arguments for 'touch' command");
}

TEST_CASE("COMMAND COUNT / LIST / INFO / DOCS / GETKEYS in Redis 7's shapes", "[introspection]") {
  TestServer server;
  Client c(server.port());
  Reply count = c.Command({"COMMAND", "COUNT"});
  Reply list = c.Command({"COMMAND", "LIST"});
  REQUIRE(count.type == REDIS_REPLY_INTEGER);
  CHECK(static_cast<size_t>(count.integer) == list.elements.size());
  CHECK(c.Command({"COMMAND"}).elements.size() == list.elements.size());
  // Every command has an INFO entry and DOCS.
  for (const auto& name : list.elements) {
    Reply info = c.Command({"COMMAND", "INFO", name.str});
    INFO(name.str);
    REQUIRE(info.elements.size() == 1);
    REQUIRE(info.elements[0].elements.size() == 10);
    CHECK(info.elements[0].elements[0].str == name.str);
    Reply docs = c.Command({"COMMAND", "DOCS", name.str});
    REQUIRE(docs.elements.size() == 2);
    CHECK(docs.elements[1].elements.size() >= 8);
  }
  Reply get = c.Command({"COMMAND", "INFO", "get", "nosuch"});
  REQUIRE(get.elements.size() == 2);
  CHECK(get.elements[1].type == REDIS_REPLY_NIL);
  const Reply& g = get.elements[0];
  CHECK(g.elements[1].integer == 2);
  CHECK(rockcache::testing::Describe(g.elements[2]) == "[status:readonly, status:fast]");
  CHECK(g.elements[3].integer == 1);
  CHECK(g.elements[4].integer == 1);
  CHECK(g.elements[5].integer == 1);
  CHECK(rockcache::testing::Describe(g.elements[6]) ==
        "[status:@read, status:@string, status:@fast]");
  // A container lists the subcommands it implements, each a full entry.
  Reply config = c.Command({"COMMAND", "INFO", "config"});
  const Reply& subs = config.elements[0].elements[9];
  REQUIRE(subs.elements.size() == 5);
  std::vector<std::string> names;
  for (const auto& sub : subs.elements) names.push_back(sub.elements[0].str);
  CHECK(std::find(names.begin(), names.end(), "config|get") != names.end());
  CHECK(std::find(names.begin(), names.end(), "config|rewrite") != names.end());
  for (const auto& sub : subs.elements) {
    if (sub.elements[0].str == "config|get") CHECK(sub.elements[1].integer == -3);
  }
  Reply config_docs = c.Command({"COMMAND", "DOCS", "config"});
  REQUIRE(config_docs.elements.size() == 2);
  REQUIRE(config_docs.elements[1].elements.size() == 10);
  CHECK(config_docs.elements[1].elements[8].str == "subcommands");
  CHECK(config_docs.elements[1].elements[9].elements.size() == 10);
  Reply mset = c.Command({"COMMAND", "INFO", "mset"});
  CHECK(mset.elements[0].elements[1].integer == -3);
  CHECK(mset.elements[0].elements[5].integer == 2);
  CHECK(Run(c, {"COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"}) == "[bulk:a, bulk:b]");
  CHECK(Run(c, {"COMMAND", "GETKEYS", "nosuch", "a"}) == "err:ERR Invalid command specified");
  // Redis 7.0's COMMAND GETKEYS takes the command and at least one argument (arity -4).
  CHECK(Run(c, {"COMMAND", "GETKEYS", "GET"}) ==
        "err:ERR wrong number of arguments for 'command|getkeys' command");
  CHECK(Run(c, {"COMMAND", "GETKEYS", "GET", "a", "b"}) ==
        "err:ERR Invalid number of arguments specified for command");
  CHECK(Run(c, {"COMMAND", "GETKEYS", "PING", "x"}) == "err:ERR The command has no key arguments");
  Reply strings = c.Command({"COMMAND", "LIST", "FILTERBY", "ACLCAT", "string"});
  bool has_get = false, has_hset = false;
  for (const auto& e : strings.elements) {
    has_get |= e.str == "get";
    has_hset |= e.str == "hset";
  }
  CHECK(has_get);
  CHECK_FALSE(has_hset);
  CHECK(Run(c, {"COMMAND", "LIST", "FILTERBY", "PATTERN", "zpop*"}) ==
        "[bulk:zpopmin, bulk:zpopmax]");
  CHECK(Run(c, {"COMMAND", "LIST", "FILTERBY", "MODULE", "x"}) == "[]");
  Reply docs = c.Command({"COMMAND", "DOCS", "get"});
  REQUIRE(docs.elements.size() == 2);
  CHECK(rockcache::testing::Describe(docs.elements[1].elements[1]) ==
        "bulk:Get the value of a key");
}

TEST_CASE("LATENCY LATEST / HISTORY / RESET / DOCTOR record slow commands", "[introspection]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"LATENCY", "LATEST"}) == "[]");
  CHECK(Contains(c.Command({"LATENCY", "DOCTOR"}).str, "Latency monitoring is disabled"));
  REQUIRE(Run(c, {"CONFIG", "SET", "latency-monitor-threshold", "5"}) == "status:OK");
  REQUIRE(Run(c, {"DEBUG", "SLEEP", "0.02"}) == "status:OK");
  REQUIRE(Run(c, {"PING"}) == "status:PONG");
  Reply latest = c.Command({"LATENCY", "LATEST"});
  REQUIRE(latest.elements.size() == 1);
  const Reply& event = latest.elements[0];
  REQUIRE(event.elements.size() == 4);
  CHECK(event.elements[0].str == "command");
  CHECK(event.elements[2].integer >= 20);
  CHECK(event.elements[3].integer >= 20);
  Reply history = c.Command({"LATENCY", "HISTORY", "command"});
  REQUIRE(history.elements.size() == 1);
  CHECK(history.elements[0].elements[1].integer >= 20);
  CHECK(Contains(c.Command({"LATENCY", "DOCTOR"}).str, "command"));
  CHECK(c.Command({"LATENCY", "GRAPH", "command"}).type == REDIS_REPLY_STRING);
  CHECK(Run(c, {"LATENCY", "GRAPH", "nosuch"}) ==
        "err:ERR No samples available for event 'nosuch'");
  CHECK(Run(c, {"LATENCY", "RESET"}) == "int:1");
  CHECK(Run(c, {"LATENCY", "LATEST"}) == "[]");
  CHECK(c.Command({"LATENCY", "HELP"}).elements.size() > 5);
}

TEST_CASE("CONFIG RESETSTAT zeroes every INFO counter", "[introspection]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  FillAllTypes(c);
  for (int i = 0; i < 20; ++i) {
    REQUIRE(Run(c, {"GET", "str:short"}) == "bulk:hello");
    REQUIRE(Run(c, {"GET", "missing"}) == "nil");
  }
  REQUIRE(Run(c, {"HGET", "list", "x"}).rfind("err:WRONGTYPE", 0) == 0);
  REQUIRE(Run(admin, {"CONFIG", "RESETSTAT"}) == "status:OK");
  auto stats = InfoFields(InfoText(admin, "stats"));
  for (const char* counter :
       {"total_connections_received", "rejected_connections", "expired_keys", "keyspace_hits",
        "keyspace_misses", "total_error_replies", "rtc_answers", "coalesced_misses"}) {
    INFO(counter);
    if (stats.count(counter)) CHECK(stats.at(counter) == "0");
  }
  CHECK(std::stoll(stats.at("total_commands_processed")) <= 2);
  CHECK(InfoFields(InfoText(admin, "errorstats")).empty());
  CHECK(InfoFields(InfoText(admin, "commandstats")).count("cmdstat_get") == 0);
  auto cache = InfoFields(InfoText(admin, "cache"));
  for (const auto& [name, value] : cache) {
    if (name == "cache_hits" || name == "cache_misses" || name == "cache_fills" ||
        name == "cache_evictions") {
      INFO(name);
      CHECK(value == "0");
    }
  }
}

TEST_CASE("redis-cli --bigkeys, --memkeys and --hotkeys run to completion", "[introspection]") {
  TestServer server;
  Client c(server.port());
  FillAllTypes(c);
  int code = -1;
  std::string big = Cli(server, "--bigkeys", &code);
  INFO(big);
  CHECK(code == 0);
  CHECK(Contains(big, "Biggest   hash found '\"hash:big\"' has 600 fields"));
  CHECK(Contains(big, "Biggest   zset found '\"zset:big\"' has 600 members"));
  CHECK(Contains(big, "Biggest    set found '\"set:big\"' has 600 members"));
  CHECK(Contains(big, "Biggest   list found '\"list\"' has 3 items"));
  CHECK(Contains(big, "Biggest string found '\"str:long\"' has 100 bytes"));
  std::string mem = Cli(server, "--memkeys", &code);
  INFO(mem);
  CHECK(code == 0);
  CHECK(Contains(mem, "Biggest   hash found '\"hash:big\"' has"));
  CHECK(Contains(mem, "Biggest string found '\"str:long\"' has"));
  REQUIRE(Run(c, {"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"}) == "status:OK");
  for (int i = 0; i < 30; ++i) REQUIRE(Run(c, {"GET", "str:int"}) == "bulk:12345");
  std::string hot = Cli(server, "--hotkeys", &code);
  INFO(hot);
  CHECK(code == 0);
  CHECK(Contains(hot, "hot key found with counter"));
  CHECK(Contains(hot, "keyname: \"str:int\""));
}

namespace {
// The cmd= field of a CLIENT LIST / CLIENT INFO line.
std::string CmdField(const std::string& line) {
  const size_t at = line.find(" cmd=");
  if (at == std::string::npos) return "(no cmd=)";
  const size_t start = at + 5;
  return line.substr(start, line.find(' ', start) - start);
}
}  // namespace

TEST_CASE("CLIENT LIST / CLIENT INFO cmd= is the client's last command, as Redis 7",
          "[introspection][client]") {
  TestServer server;
  Client admin(server.port());
  Client c(server.port());
  const std::string id = std::to_string(c.Command({"CLIENT", "ID"}).integer);
  auto last = [&] { return CmdField(admin.Command({"CLIENT", "LIST", "ID", id}).str); };
  CHECK(last() == "client|id");
  // Each command, wherever it runs (worker pool, cache in the network thread, the loop itself),
  // with its subcommand for containers; "NULL" for an unknown command or subcommand.
  const std::vector<std::pair<std::vector<std::string>, std::string>> steps = {
      {{"SET", "k", "v"}, "set"},
      {{"GET", "k"}, "get"},
      {{"get", "k"}, "get"},  // a cache hit, answered in the network thread
      {{"PING"}, "ping"},
      {{"ECHO", "x"}, "echo"},
      {{"RPUSH", "l", "a"}, "rpush"},
      {{"LRANGE", "l", "0", "-1"}, "lrange"},
      {{"HSET", "h", "f", "v"}, "hset"},
      {{"ZADD", "z", "1", "m"}, "zadd"},
      {{"SELECT", "0"}, "select"},
      {{"DBSIZE"}, "dbsize"},
      {{"INFO", "server"}, "info"},
      {{"CONFIG", "GET", "port"}, "config|get"},
      {{"config", "Get", "port"}, "config|get"},
      {{"OBJECT", "ENCODING", "k"}, "object|encoding"},
      {{"COMMAND", "COUNT"}, "command|count"},
      {{"COMMAND"}, "command"},
      {{"CLIENT", "SETNAME"}, "client|setname"},  // wrong arity: still its name
      {{"CONFIG"}, "config"},
      {{"CONFIG", "FOO"}, "NULL"},
      {{"NOSUCHCOMMAND"}, "NULL"},
      {{"MULTI"}, "multi"},
      {{"SET", "a", "1"}, "set"},  // queued
      {{"EXEC"}, "exec"},
  };
  for (const auto& [cmd, name] : steps) {
    INFO(cmd[0]);
    c.Command(cmd);
    CHECK(last() == name);
  }
  CHECK(CmdField(c.Command({"CLIENT", "INFO"}).str) == "client|info");
  CHECK(last() == "client|info");
  CHECK(CmdField(admin.Command({"CLIENT", "INFO"}).str) == "client|info");
  // The client running CLIENT LIST sees its own line's cmd= as client|list.
  Reply all = admin.Command({"CLIENT", "LIST"});
  CHECK(Contains(all.str, " cmd=client|list "));
  // A client that sent nothing yet: NULL.
  rockcache::testing::RawConnection fresh(server.port());
  SleepMs(50);
  CHECK(Contains(admin.Command({"CLIENT", "LIST"}).str, " cmd=NULL "));
  // A blocked client shows its blocking command.
  c.Append({"BLPOP", "nolist", "0"});
  for (int done = 0; !done;) REQUIRE(redisBufferWrite(c.context(), &done) == REDIS_OK);
  std::string blocked;
  for (int i = 0; i < 200 && (blocked = last()) != "blpop"; ++i) SleepMs(5);
  CHECK(blocked == "blpop");
  CHECK(Run(admin, {"RPUSH", "nolist", "x"}) == "int:1");
  Reply popped;
  REQUIRE(c.GetReply(&popped));
  CHECK(last() == "blpop");
}

}  // namespace introspection_test
