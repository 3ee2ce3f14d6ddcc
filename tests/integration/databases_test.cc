// Databases: SELECT, MOVE, SWAPDB, COPY, FLUSHDB, DBSIZE, INFO keyspace, KEYS/SCAN isolation,
// the cache across databases, and databases across restarts.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::MakeTempDir;
using rockcache::testing::RemoveTree;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::RunShell;
using rockcache::testing::ServerBinary;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace databases_test {

namespace {

// Every key SCAN returns from cursor 0 to the end.
std::set<std::string> ScanAll(Client& c) {
  std::set<std::string> keys;
  std::string cursor = "0";
  do {
    Reply r = c.Command({"SCAN", cursor, "COUNT", "7"});
    REQUIRE(r.elements.size() == 2);
    cursor = r.elements[0].str;
    for (const auto& k : r.elements[1].elements) keys.insert(k.str);
  } while (cursor != "0");
  return keys;
}

}  // namespace

TEST_CASE("SELECT gives each connection its own database", "[databases]") {
  TestServer server;
  Client a(server.port());
  Client b(server.port());
  CHECK(Run(a, {"SELECT", "0"}) == "status:OK");
  CHECK(Run(a, {"SELECT", "15"}) == "status:OK");
  CHECK(Run(a, {"SELECT", "16"}) == "err:ERR DB index is out of range");
  CHECK(Run(a, {"SELECT", "-1"}) == "err:ERR DB index is out of range");
  CHECK(Run(a, {"SELECT", "one"}) == "err:ERR value is not an integer or out of range");
  CHECK(Run(a, {"SELECT", "99999999999"}) ==
        "err:ERR value is out of range, value must between -2147483648 and 2147483647");
  CHECK(Run(a, {"SELECT"}) == "err:ERR wrong number of arguments for 'select' command");
  CHECK(Run(a, {"SELECT", "1"}) == "status:OK");

  // The same key name in two databases: two keys, of any type.
  CHECK(Run(a, {"SET", "k", "in1"}) == "status:OK");
  CHECK(Run(b, {"GET", "k"}) == "nil");
  CHECK(Run(b, {"HSET", "k", "f", "in0"}) == "int:1");
  CHECK(Run(a, {"GET", "k"}) == "bulk:in1");
  CHECK(Run(b, {"HGET", "k", "f"}) == "bulk:in0");
  CHECK(Run(a, {"TYPE", "k"}) == "status:string");
  CHECK(Run(b, {"TYPE", "k"}) == "status:hash");
  for (int i = 0; i < 30; ++i) {
    CHECK(Run(a, {"SET", "a:" + std::to_string(i), "x"}) == "status:OK");
  }
  CHECK(Run(b, {"SET", "b:only", "x"}) == "status:OK");
  CHECK(Run(a, {"DBSIZE"}) == "int:31");
  CHECK(Run(b, {"DBSIZE"}) == "int:2");
  CHECK(Run(b, {"KEYS", "*"}) == "[bulk:b:only, bulk:k]");
  CHECK(Run(b, {"KEYS", "a:*"}) == "[]");
  CHECK(a.Command({"KEYS", "*"}).elements.size() == 31);
  std::set<std::string> scanned = ScanAll(a);
  CHECK(scanned.size() == 31);
  CHECK(scanned.count("b:only") == 0);
  CHECK(ScanAll(b) == std::set<std::string>{"b:only", "k"});
  for (int i = 0; i < 10; ++i) {
    std::string key = b.Command({"RANDOMKEY"}).str;
    CHECK((key == "b:only" || key == "k"));
  }
  CHECK(Run(b, {"EXISTS", "a:1", "k"}) == "int:1");
  CHECK(Run(b, {"DEL", "a:1", "a:2"}) == "int:0");
  CHECK(Run(a, {"EXISTS", "a:1"}) == "int:1");

  // CLIENT LIST and CLIENT INFO show each connection's database.
  CHECK(a.Command({"CLIENT", "INFO"}).str.find(" db=1 ") != std::string::npos);
  CHECK(b.Command({"CLIENT", "INFO"}).str.find(" db=0 ") != std::string::npos);
  // RESET selects database 0 again (as Redis).
  CHECK(Run(a, {"RESET"}) == "status:RESET");
  CHECK(Run(a, {"TYPE", "k"}) == "status:hash");
  CHECK(a.Command({"CLIENT", "INFO"}).str.find(" db=0 ") != std::string::npos);
  CHECK(Run(a, {"SELECT", "1"}) == "status:OK");
  CHECK(Run(a, {"CONFIG", "GET", "databases"}) == "[bulk:databases, bulk:16]");
  CHECK(Run(a, {"CONFIG", "SET", "databases", "4"}).rfind("err:ERR CONFIG SET failed", 0) == 0);
}

TEST_CASE("the cache keeps one entry per database for one key name", "[databases][cache]") {
  TestServer server;
  Client a(server.port());
  Client b(server.port());
  REQUIRE(Run(b, {"SELECT", "2"}) == "status:OK");
  CHECK(Run(a, {"SET", "k", "zero"}) == "status:OK");
  CHECK(Run(b, {"SET", "k", "two"}) == "status:OK");
  // Repeated reads are cache hits (answered in the network thread): each sees its own value.
  for (int i = 0; i < 3; ++i) {
    CHECK(Run(a, {"GET", "k"}) == "bulk:zero");
    CHECK(Run(b, {"GET", "k"}) == "bulk:two");
  }
  // A negative entry in one database does not hide the key of another.
  CHECK(Run(b, {"GET", "only0"}) == "nil");
  CHECK(Run(b, {"GET", "only0"}) == "nil");
  CHECK(Run(a, {"SET", "only0", "v"}) == "status:OK");
  CHECK(Run(a, {"GET", "only0"}) == "bulk:v");
  CHECK(Run(b, {"GET", "only0"}) == "nil");
  // ... and MOVE replaces it.
  CHECK(Run(a, {"MOVE", "only0", "2"}) == "int:1");
  CHECK(Run(b, {"GET", "only0"}) == "bulk:v");
  CHECK(Run(a, {"GET", "only0"}) == "nil");
  // Writes to one database never touch the other's cached copy.
  CHECK(Run(b, {"APPEND", "k", "!"}) == "int:4");
  CHECK(Run(a, {"GET", "k"}) == "bulk:zero");
  CHECK(Run(b, {"GET", "k"}) == "bulk:two!");
  CHECK(Run(a, {"HSET", "h", "f", "0"}) == "int:1");
  CHECK(Run(b, {"HSET", "h", "f", "2"}) == "int:1");
  CHECK(Run(a, {"HGETALL", "h"}) == "[bulk:f, bulk:0]");
  CHECK(Run(b, {"HGETALL", "h"}) == "[bulk:f, bulk:2]");
  CHECK(Run(b, {"DEL", "k"}) == "int:1");
  CHECK(Run(a, {"GET", "k"}) == "bulk:zero");
  CHECK(Run(b, {"GET", "k"}) == "nil");
  // A pipeline mixing both keys' reads after a SELECT in the middle.
  Client p(server.port());
  p.Append({"GET", "h"});
  p.Append({"HGET", "h", "f"});
  p.Append({"SELECT", "2"});
  p.Append({"HGET", "h", "f"});
  p.Append({"MGET", "k", "only0"});
  std::vector<std::string> replies;
  for (int i = 0; i < 5; ++i) {
    Reply r;
    REQUIRE(p.GetReply(&r));
    replies.push_back(Describe(r));
  }
  CHECK(replies[1] == "bulk:0");
  CHECK(replies[2] == "status:OK");
  CHECK(replies[3] == "bulk:2");
  CHECK(replies[4] == "[nil, bulk:v]");
  Reply verify = a.Command({"DEBUG", "CACHE-VERIFY"});
  CHECK(verify.str.find("mismatches:0") != std::string::npos);
  CHECK(verify.str.find("checked:0") == std::string::npos);
}

TEST_CASE("MOVE moves a key of any type with its TTL", "[databases]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "s", "v", "EX", "1000"}) == "status:OK");
  CHECK(Run(c, {"RPUSH", "l", "a", "b", "c"}) == "int:3");
  CHECK(Run(c, {"SADD", "set", "x", "y"}) == "int:2");
  CHECK(Run(c, {"ZADD", "z", "1", "m", "2", "n"}) == "int:2");
  CHECK(Run(c, {"HSET", "h", "f", "v"}) == "int:1");
  for (const char* key : {"s", "l", "set", "z", "h"}) {
    CHECK(Run(c, {"MOVE", key, "3"}) == "int:1");
    CHECK(Run(c, {"EXISTS", key}) == "int:0");
  }
  CHECK(Run(c, {"MOVE", "s", "3"}) == "int:0");  // absent here
  CHECK(Run(c, {"DBSIZE"}) == "int:0");
  CHECK(Run(c, {"SELECT", "3"}) == "status:OK");
  CHECK(Run(c, {"DBSIZE"}) == "int:5");
  CHECK(Run(c, {"GET", "s"}) == "bulk:v");
  Reply ttl = c.Command({"TTL", "s"});
  CHECK(ttl.integer > 990);
  CHECK(ttl.integer <= 1000);
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "[bulk:a, bulk:b, bulk:c]");
  CHECK(Run(c, {"SMEMBERS", "set"}) == "[bulk:x, bulk:y]");
  CHECK(Run(c, {"ZRANGE", "z", "0", "-1", "WITHSCORES"}) == "[bulk:m, bulk:1, bulk:n, bulk:2]");
  CHECK(Run(c, {"HGETALL", "h"}) == "[bulk:f, bulk:v]");
  // The moved collections keep working (and writing) in their new database.
  CHECK(Run(c, {"RPUSH", "l", "d"}) == "int:4");
  CHECK(Run(c, {"LPOP", "l"}) == "bulk:a");
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "[bulk:b, bulk:c, bulk:d]");
  // Target exists: nothing moves.
  CHECK(Run(c, {"SELECT", "0"}) == "status:OK");
  CHECK(Run(c, {"SET", "h", "other"}) == "status:OK");
  CHECK(Run(c, {"MOVE", "h", "3"}) == "int:0");
  CHECK(Run(c, {"GET", "h"}) == "bulk:other");
  CHECK(Run(c, {"MOVE", "h", "0"}) == "err:ERR source and destination objects are the same");
  CHECK(Run(c, {"MOVE", "h", "16"}) == "err:ERR DB index is out of range");
  CHECK(Run(c, {"MOVE", "h", "x"}) == "err:ERR value is not an integer or out of range");
}

TEST_CASE("COPY copies every type, with its TTL, within and across databases", "[databases]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "s", "v", "PX", "500000"}) == "status:OK");
  CHECK(Run(c, {"RPUSH", "l", "a", "b"}) == "int:2");
  CHECK(Run(c, {"SADD", "set", "x", "y"}) == "int:2");
  CHECK(Run(c, {"ZADD", "z", "1.5", "m"}) == "int:1");
  CHECK(Run(c, {"HSET", "h", "f", "v", "g", "w"}) == "int:2");
  CHECK(Run(c, {"EXPIRE", "h", "1000"}) == "int:1");

  for (const char* key : {"s", "l", "set", "z", "h"}) {
    std::string copy = std::string(key) + "2";
    CHECK(Run(c, {"COPY", key, copy}) == "int:1");
    CHECK(Run(c, {"COPY", key, copy}) == "int:0");  // exists, no REPLACE
    CHECK(Run(c, {"COPY", key, copy, "DB", "5"}) == "int:1");
  }
  CHECK(Run(c, {"GET", "s2"}) == "bulk:v");
  CHECK(Run(c, {"LRANGE", "l2", "0", "-1"}) == "[bulk:a, bulk:b]");
  CHECK(Run(c, {"HGETALL", "h2"}) == "[bulk:f, bulk:v, bulk:g, bulk:w]");
  Reply pttl = c.Command({"PTTL", "s2"});
  CHECK(pttl.integer > 490000);
  CHECK(pttl.integer <= 500000);
  // The copy is independent of the original.
  CHECK(Run(c, {"RPUSH", "l2", "c"}) == "int:3");
  CHECK(Run(c, {"LLEN", "l"}) == "int:2");
  CHECK(Run(c, {"SREM", "set", "x"}) == "int:1");
  CHECK(Run(c, {"SMEMBERS", "set2"}) == "[bulk:x, bulk:y]");

  Client d(server.port());
  REQUIRE(Run(d, {"SELECT", "5"}) == "status:OK");
  CHECK(Run(d, {"DBSIZE"}) == "int:5");
  CHECK(Run(d, {"GET", "s2"}) == "bulk:v");
  CHECK(Run(d, {"LRANGE", "l2", "0", "-1"}) == "[bulk:a, bulk:b]");
  CHECK(Run(d, {"SMEMBERS", "set2"}) == "[bulk:x, bulk:y]");
  CHECK(Run(d, {"ZRANGE", "z2", "0", "-1", "WITHSCORES"}) == "[bulk:m, bulk:1.5]");
  CHECK(Run(d, {"HGET", "h2", "g"}) == "bulk:w");
  Reply ttl = d.Command({"TTL", "h2"});
  CHECK(ttl.integer > 990);
  CHECK(ttl.integer <= 1000);
  CHECK(Run(d, {"TTL", "l2"}) == "int:-1");

  // REPLACE over another type, in another database; the target's cached copy is replaced.
  CHECK(Run(d, {"GET", "s2"}) == "bulk:v");  // cached in db 5
  CHECK(Run(c, {"COPY", "l", "s2", "DB", "5"}) == "int:0");
  CHECK(Run(c, {"COPY", "l", "s2", "DB", "5", "REPLACE"}) == "int:1");
  CHECK(Run(d, {"GET", "s2"}) ==
        "err:WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(Run(d, {"LRANGE", "s2", "0", "-1"}) == "[bulk:a, bulk:b]");
  CHECK(Run(d, {"TTL", "s2"}) == "int:-1");
  CHECK(Run(c, {"COPY", "absent", "x"}) == "int:0");
  CHECK(Run(c, {"COPY", "s", "s"}) == "err:ERR source and destination objects are the same");
  CHECK(Run(c, {"COPY", "s", "s", "DB", "0"}) ==
        "err:ERR source and destination objects are the same");
  CHECK(Run(c, {"COPY", "s", "s", "DB", "1"}) == "int:1");
  CHECK(Run(c, {"COPY", "s", "t", "DB"}) == "err:ERR syntax error");
  CHECK(Run(c, {"COPY", "s", "t", "BOGUS"}) == "err:ERR syntax error");
  CHECK(Run(c, {"COPY", "s", "t", "DB", "99"}) == "err:ERR DB index is out of range");
  CHECK(Run(c, {"COPY", "s", "t", "DB", "x"}) == "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"COPY", "s"}) == "err:ERR wrong number of arguments for 'copy' command");
  Reply verify = c.Command({"DEBUG", "CACHE-VERIFY"});
  CHECK(verify.str.find("mismatches:0") != std::string::npos);
}

TEST_CASE("SWAPDB swaps two databases at once, cached values included, and persists",
          "[databases]") {
  TestServer server;
  {
    Client a(server.port());
    Client b(server.port());
    REQUIRE(Run(b, {"SELECT", "1"}) == "status:OK");
    CHECK(Run(a, {"SET", "k", "zero"}) == "status:OK");
    CHECK(Run(a, {"SET", "only0", "x", "EX", "1000"}) == "status:OK");
    CHECK(Run(b, {"SET", "k", "one"}) == "status:OK");
    CHECK(Run(a, {"GET", "k"}) == "bulk:zero");  // cached
    CHECK(Run(b, {"GET", "k"}) == "bulk:one");
    CHECK(Run(b, {"GET", "only0"}) == "nil");  // a negative entry in db 1
    CHECK(Run(a, {"SWAPDB", "0", "1"}) == "status:OK");
    // Connections keep their database number; the data changed places.
    CHECK(Run(a, {"GET", "k"}) == "bulk:one");
    CHECK(Run(b, {"GET", "k"}) == "bulk:zero");
    CHECK(Run(b, {"GET", "only0"}) == "bulk:x");
    CHECK(Run(a, {"GET", "only0"}) == "nil");
    CHECK(Run(a, {"DBSIZE"}) == "int:1");
    CHECK(Run(b, {"DBSIZE"}) == "int:2");
    std::map<std::string, std::string> info = InfoFields(InfoText(a, "keyspace"));
    CHECK(info["db0"] == "keys=1,expires=0,avg_ttl=0");
    CHECK(info["db1"].rfind("keys=2,expires=1,avg_ttl=", 0) == 0);
    CHECK(Run(a, {"SWAPDB", "2", "2"}) == "status:OK");
    CHECK(Run(a, {"SWAPDB", "0", "16"}) == "err:ERR DB index is out of range");
    CHECK(Run(a, {"SWAPDB", "x", "1"}) == "err:ERR invalid first DB index");
    CHECK(Run(a, {"SWAPDB", "1", "y"}) == "err:ERR invalid second DB index");
    // Both must be integers before either is range-checked (redis-server 7.0.15).
    CHECK(Run(a, {"SWAPDB", "-1", "x"}) == "err:ERR invalid second DB index");
    CHECK(Run(a, {"SWAPDB", "-1", "99999999999"}) == "err:ERR invalid second DB index");
    CHECK(Run(a, {"SWAPDB", "-1", "16"}) == "err:ERR DB index is out of range");
    CHECK(Run(a, {"SWAPDB", "0"}) == "err:ERR wrong number of arguments for 'swapdb' command");
    // Writes after the swap land in the swapped databases.
    CHECK(Run(a, {"SET", "after", "a"}) == "status:OK");
    CHECK(Run(b, {"EXISTS", "after"}) == "int:0");
    CHECK(Run(a, {"SWAPDB", "1", "3"}) == "status:OK");
    CHECK(Run(b, {"DBSIZE"}) == "int:0");
    Reply verify = a.Command({"DEBUG", "CACHE-VERIFY"});
    CHECK(verify.str.find("mismatches:0") != std::string::npos);
  }
  CHECK(server.Stop() == 0);
  server.Restart();
  Client c(server.port());
  CHECK(Run(c, {"MGET", "k", "after", "only0"}) == "[bulk:one, bulk:a, nil]");
  CHECK(Run(c, {"SELECT", "3"}) == "status:OK");
  CHECK(Run(c, {"MGET", "k", "after", "only0"}) == "[bulk:zero, nil, bulk:x]");
  CHECK(Run(c, {"SELECT", "1"}) == "status:OK");
  CHECK(Run(c, {"DBSIZE"}) == "int:0");
}

TEST_CASE("FLUSHDB empties one database, FLUSHALL all of them", "[databases]") {
  TestServer server;
  Client c(server.port());
  for (int db = 0; db < 3; ++db) {
    REQUIRE(Run(c, {"SELECT", std::to_string(db)}) == "status:OK");
    CHECK(Run(c, {"SET", "k", std::to_string(db)}) == "status:OK");
    CHECK(Run(c, {"RPUSH", "l", "x"}) == "int:1");
    CHECK(Run(c, {"GET", "k"}) == "bulk:" + std::to_string(db));  // cached
  }
  CHECK(Run(c, {"SELECT", "1"}) == "status:OK");
  CHECK(Run(c, {"FLUSHDB", "BOGUS"}) == "err:ERR syntax error");
  CHECK(Run(c, {"FLUSHDB"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "nil");
  CHECK(Run(c, {"LLEN", "l"}) == "int:0");
  CHECK(Run(c, {"DBSIZE"}) == "int:0");
  CHECK(Run(c, {"SELECT", "2"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "bulk:2");
  CHECK(Run(c, {"LLEN", "l"}) == "int:1");
  CHECK(Run(c, {"FLUSHDB", "ASYNC"}) == "status:OK");
  CHECK(Run(c, {"SELECT", "0"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "bulk:0");
  CHECK(Run(c, {"DBSIZE"}) == "int:2");
  std::map<std::string, std::string> info = InfoFields(InfoText(c, "keyspace"));
  CHECK(info.size() == 1);
  CHECK(info["db0"] == "keys=2,expires=0,avg_ttl=0");
  CHECK(Run(c, {"SELECT", "4"}) == "status:OK");
  CHECK(Run(c, {"SET", "k", "4"}) == "status:OK");
  CHECK(Run(c, {"FLUSHALL"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "nil");
  CHECK(Run(c, {"SELECT", "0"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "nil");
  CHECK(InfoFields(InfoText(c, "keyspace")).empty());
}

TEST_CASE("INFO keyspace counts keys, expires and avg_ttl per database", "[databases]") {
  TestServer server;
  Client c(server.port());
  CHECK(InfoFields(InfoText(c, "keyspace")).empty());
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"SET", "b", "1", "EX", "100"}) == "status:OK");
  CHECK(Run(c, {"SELECT", "7"}) == "status:OK");
  CHECK(Run(c, {"HSET", "h", "f", "v"}) == "int:1");
  CHECK(Run(c, {"EXPIRE", "h", "2000"}) == "int:1");
  CHECK(Run(c, {"SADD", "s", "m"}) == "int:1");
  CHECK(Run(c, {"PEXPIRE", "s", "4000000"}) == "int:1");
  CHECK(Run(c, {"SET", "t", "v", "EX", "5000"}) == "status:OK");
  CHECK(Run(c, {"SET", "t", "v2", "KEEPTTL"}) == "status:OK");  // still one expire
  CHECK(Run(c, {"SET", "u", "v", "EX", "5000"}) == "status:OK");
  CHECK(Run(c, {"SET", "u", "v2"}) == "status:OK");  // TTL cleared
  CHECK(Run(c, {"SET", "w", "v", "EX", "5000"}) == "status:OK");
  CHECK(Run(c, {"PERSIST", "w"}) == "int:1");
  CHECK(Run(c, {"SET", "x", "v", "EX", "5000"}) == "status:OK");
  CHECK(Run(c, {"DEL", "x"}) == "int:1");
  std::map<std::string, std::string> info = InfoFields(InfoText(c, "keyspace"));
  REQUIRE(info.size() == 2);
  std::string db0 = info["db0"];
  CHECK(db0.rfind("keys=2,expires=1,avg_ttl=", 0) == 0);
  long long avg0 = std::stoll(db0.substr(db0.rfind('=') + 1));
  CHECK(avg0 > 90000);
  CHECK(avg0 <= 100000);
  std::string db7 = info["db7"];
  CHECK(db7.rfind("keys=5,expires=3,avg_ttl=", 0) == 0);
  long long avg7 = std::stoll(db7.substr(db7.rfind('=') + 1));  // (2000 + 4000 + 5000) s / 3
  CHECK(avg7 > 3600000);
  CHECK(avg7 <= 3666667);
  // MOVE carries the TTL figures along.
  CHECK(Run(c, {"MOVE", "t", "0"}) == "int:1");
  info = InfoFields(InfoText(c, "keyspace"));
  CHECK(info["db0"].rfind("keys=3,expires=2,", 0) == 0);
  CHECK(info["db7"].rfind("keys=4,expires=2,", 0) == 0);
}

TEST_CASE("data in database 3 survives restarts; fewer databases than data refuses to start",
          "[databases][durability]") {
  TestServer server;
  {
    Client c(server.port());
    CHECK(Run(c, {"SELECT", "3"}) == "status:OK");
    CHECK(Run(c, {"SET", "s", "three", "EX", "1000"}) == "status:OK");
    CHECK(Run(c, {"ZADD", "z", "1", "a", "2", "b"}) == "int:2");
    CHECK(Run(c, {"SELECT", "0"}) == "status:OK");
    CHECK(Run(c, {"SET", "s", "zero"}) == "status:OK");
  }
  server.Kill9();
  server.Restart();
  {
    Client c(server.port());
    CHECK(Run(c, {"GET", "s"}) == "bulk:zero");
    CHECK(Run(c, {"SELECT", "3"}) == "status:OK");
    CHECK(Run(c, {"GET", "s"}) == "bulk:three");
    CHECK(Run(c, {"ZRANGE", "z", "0", "-1"}) == "[bulk:a, bulk:b]");
    CHECK(Run(c, {"DBSIZE"}) == "int:2");
    CHECK(InfoFields(InfoText(c, "keyspace"))["db3"].rfind("keys=2,expires=1,avg_ttl=", 0) == 0);
  }
  server.set_keep_dir(true);
  CHECK(server.Stop() == 0);
  // databases 3 cannot reach database 3, which holds keys: the server says so and exits.
  int rc = 0;
  std::string out = RunShell(
      "timeout 60 " + ServerBinary() + " --port " + std::to_string(rockcache::testing::FreePort()) +
          " --bind 127.0.0.1 --metrics-port 0 --databases 3 --dir " + server.dir() + "/db 2>&1",
      &rc);
  CHECK(rc != 0);
  CHECK(out.find("database 3 holds 2 keys but databases is 3") != std::string::npos);
  // With enough databases it opens again.
  TestServer again({}, server.dir());
  Client c(again.port());
  CHECK(Run(c, {"SELECT", "3"}) == "status:OK");
  CHECK(Run(c, {"GET", "s"}) == "bulk:three");
}

}  // namespace databases_test
