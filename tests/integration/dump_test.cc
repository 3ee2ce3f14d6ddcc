// DUMP / RESTORE ([dump]): payloads move both ways between rockcache and a real redis-server 7.0
// for every type and encoding size class (compared by data, and by bytes where Redis's layout is
// deterministic), a restored stream keeps its consumer groups, a highly compressed payload
// restores whole, and a RESTORE acknowledged before kill -9 is there after the restart. RESTORE's
// errors and hostile payloads: restore_errors_test.cc; MIGRATE: migrate_test.cc; --import-rdb:
// import_rdb_test.cc. Skipped when redis-server is missing.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tests/support/differential.h"
#include "tests/support/differential_peer.h"
#include "tests/support/dump_samples.h"
#include "tests/support/test_server.h"

using rockcache::testing::ReferenceRedis;
using rockcache::testing::RespPeer;
using rockcache::testing::TestServer;
using rockcache::testing::differential::Command;
using rockcache::testing::differential::Differ;
using rockcache::testing::differential::Rng;
using rockcache::testing::dump::Bulk;
using rockcache::testing::dump::Fill;
using rockcache::testing::dump::Snapshot;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace dump_test {

TEST_CASE("DUMP round trip rockcache -> redis-server -> rockcache for every type", "[dump]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) {
    WARN("redis-server not installed: skipped");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server;
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());
  Rng rng(45);
  auto keys = Fill([&](const Command& c) { REQUIRE(ours.Call(c)[0] != '-'); }, rng);
  int byte_identical = 0;
  for (const auto& sample : keys) {
    INFO("key " << sample.key);
    const std::string mine = Bulk(ours.Call({"DUMP", sample.key}));
    REQUIRE(theirs.Call({"RESTORE", sample.key, "0", mine}) == "+OK\r\n");
    const std::string back = Bulk(theirs.Call({"DUMP", sample.key}));
    if (sample.deterministic) {
      CHECK(back == mine);
      byte_identical += back == mine;
    }
    REQUIRE(ours.Call({"RESTORE", sample.key + ":back", "0", back}) == "+OK\r\n");
    const std::string original = Snapshot(ours, sample.key);
    CHECK(Snapshot(theirs, sample.key) == original);
    CHECK(Snapshot(ours, sample.key + ":back") == original);
    CHECK(ours.Call({"OBJECT", "ENCODING", sample.key + ":back"}) ==
          theirs.Call({"OBJECT", "ENCODING", sample.key}));
  }
  std::printf("dump round trip: %zu keys, %d byte-identical payloads\n", keys.size(),
              byte_identical);
}

TEST_CASE("redis-server's DUMP payloads RESTORE into rockcache with the same data", "[dump]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  ReferenceRedis reference(redis);
  TestServer server;
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());
  Rng rng(7);
  auto keys = Fill([&](const Command& c) { REQUIRE(theirs.Call(c)[0] != '-'); }, rng);
  // Encodings Redis keeps after shrinking, and a stream with deleted entries and groups.
  theirs.Call({"XDEL", "stream:big", "100-0", "101-1", "1200-0"});
  theirs.Call({"XGROUP", "CREATE", "stream:big", "g1", "0"});
  theirs.Call({"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "5", "STREAMS", "stream:big", ">"});
  theirs.Call({"HDEL", "hash:longvalue", "f"});
  for (const auto& sample : keys) {
    INFO("key " << sample.key);
    const std::string payload = Bulk(theirs.Call({"DUMP", sample.key}));
    REQUIRE(ours.Call({"RESTORE", sample.key, "0", payload}) == "+OK\r\n");
    CHECK(Snapshot(ours, sample.key) == Snapshot(theirs, sample.key));
  }
  // TTLs travel: RESTORE with a TTL and with ABSTTL.
  const std::string payload = Bulk(theirs.Call({"DUMP", "str:small"}));
  REQUIRE(ours.Call({"RESTORE", "ttl:key", "100000", payload}) == "+OK\r\n");
  const std::string pttl = ours.Call({"PTTL", "ttl:key"});
  const long long left = std::stoll(pttl.substr(1));
  CHECK(left > 90000);
  CHECK(left <= 100000);
}

TEST_CASE("A restored stream's groups serve XREADGROUP, XACK, XPENDING, XCLAIM as Redis's",
          "[dump][group]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  ReferenceRedis reference(redis);
  TestServer server;
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());
  // Built on redis-server (delivery times and counts, seen times, entries-read), moved whole.
  for (int i = 1; i <= 12; ++i) {
    theirs.Call({"XADD", "s", std::to_string(i) + "-0", "n", std::to_string(i)});
  }
  theirs.Call({"XGROUP", "CREATE", "s", "g1", "0"});
  theirs.Call({"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "4", "STREAMS", "s", ">"});
  theirs.Call({"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "s", ">"});
  theirs.Call({"XACK", "s", "g1", "2-0", "6-0"});
  theirs.Call({"XCLAIM", "s", "g1", "carol", "0", "3-0", "RETRYCOUNT", "5"});
  theirs.Call({"XGROUP", "CREATE", "s", "g2", "5-0", "ENTRIESREAD", "5"});
  theirs.Call({"XREADGROUP", "GROUP", "g2", "dave", "COUNT", "2", "STREAMS", "s", ">"});
  theirs.Call({"XDEL", "s", "12-0"});
  const std::string payload = Bulk(theirs.Call({"DUMP", "s"}));
  REQUIRE(ours.Call({"RESTORE", "s", "0", payload}) == "+OK\r\n");
  Differ d(server.port(), reference.port());
  // Replies with idle times (XPENDING's extended form, XCLAIM / XAUTOCLAIM of whole entries
  // report none) are compared where they do not carry them.
  const std::vector<Command> commands = {
      {"XINFO", "GROUPS", "s"},
      {"XPENDING", "s", "g1"},
      {"XPENDING", "s", "g2"},
      {"XLEN", "s"},
      {"XACK", "s", "g1", "1-0", "5-0", "99-0"},
      {"XPENDING", "s", "g1"},
      {"XREADGROUP", "GROUP", "g1", "erin", "COUNT", "3", "STREAMS", "s", ">"},
      {"XREADGROUP", "GROUP", "g1", "alice", "STREAMS", "s", "0"},
      {"XREADGROUP", "GROUP", "g1", "carol", "STREAMS", "s", "0"},
      {"XCLAIM", "s", "g1", "bob", "0", "3-0", "4-0", "JUSTID"},
      {"XAUTOCLAIM", "s", "g1", "frank", "0", "0-0", "COUNT", "2", "JUSTID"},
      {"XPENDING", "s", "g1"},
      {"XINFO", "GROUPS", "s"},
      {"XGROUP", "DELCONSUMER", "s", "g1", "bob"},
      {"XGROUP", "CREATECONSUMER", "s", "g2", "dave"},
      {"XGROUP", "CREATECONSUMER", "s", "g2", "zed"},
      {"XACK", "s", "g2", "6-0", "7-0"},
      {"XPENDING", "s", "g2"},
      {"XREADGROUP", "GROUP", "g2", "dave", "STREAMS", "s", ">"},
      {"XGROUP", "DESTROY", "s", "g1"},
      {"XINFO", "GROUPS", "s"},
      {"XADD", "s", "20-0", "n", "20"},
      {"XINFO", "GROUPS", "s"},
  };
  for (const auto& cmd : commands) d.Both("restored-groups", cmd);
  std::printf("restored stream groups: %d commands, %d mismatches\n",
              d.stats("restored-groups").commands, d.stats("restored-groups").mismatches);
  CHECK(d.stats("restored-groups").mismatches == 0);
  // A restored PEL survives a restart (it is in RocksDB, not only in a cache).
  REQUIRE(ours.Call({"RESTORE", "s2", "0", payload}) == "+OK\r\n");
  const std::string pending = ours.Call({"XPENDING", "s2", "g1"});
  server.Restart();
  RespPeer again(server.port());
  CHECK(again.Call({"XPENDING", "s2", "g1"}) == pending);
}

TEST_CASE("A highly compressed redis-server payload (2M list elements) restores whole", "[dump]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  if (std::getenv("ROCKCACHE_SANITIZER") != nullptr) {
    WARN("skipped under a sanitizer: a 2M-element RESTORE takes minutes there (8.6 s without)");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server;
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());
  // RESTORE and DUMP of 2M elements take 4-9 s alone, over 30 s beside other tests on 2 cores.
  ours.set_timeout_s(180);
  theirs.set_timeout_s(180);
  const Command push = [] {
    Command c = {"RPUSH", "ones"};
    for (int i = 0; i < 20000; ++i) c.push_back("1");
    return c;
  }();
  for (int i = 0; i < 100; ++i) REQUIRE(theirs.Call(push)[0] == ':');
  const std::string payload = Bulk(theirs.Call({"DUMP", "ones"}));
  CHECK(payload.size() < 100000);  // about 27 elements per payload byte
  REQUIRE(ours.Call({"RESTORE", "ones", "0", payload}) == "+OK\r\n");
  CHECK(ours.Call({"LLEN", "ones"}) == ":2000000\r\n");
  CHECK(Bulk(ours.Call({"DUMP", "ones"})) == payload);
}

TEST_CASE("A RESTORE acknowledged before kill -9 is there after the restart", "[dump]") {
  TestServer server;
  std::string list_payload, hash_payload;
  std::map<std::string, std::string> before;
  {
    RespPeer peer(server.port());
    Rng rng(11);
    Command list = {"RPUSH", "src:list"};
    for (int i = 0; i < 20000; ++i) list.push_back("item" + std::to_string(rng.Int(0, 1 << 20)));
    peer.Call(list);
    Command hash = {"HSET", "src:hash"};
    for (int i = 0; i < 3000; ++i) {
      hash.push_back("f" + std::to_string(i));
      hash.push_back(std::to_string(i));
    }
    peer.Call(hash);
    list_payload = Bulk(peer.Call({"DUMP", "src:list"}));
    hash_payload = Bulk(peer.Call({"DUMP", "src:hash"}));
    REQUIRE(peer.Call({"RESTORE", "r:list", "0", list_payload}) == "+OK\r\n");
    REQUIRE(peer.Call({"RESTORE", "r:hash", "0", hash_payload}) == "+OK\r\n");
    REQUIRE(peer.Call({"RESTORE", "r:hash", "0", list_payload, "REPLACE"}) == "+OK\r\n");
    before["r:list"] = Snapshot(peer, "src:list");
    before["r:hash"] = before["r:list"];
  }
  server.Kill9();
  server.Restart();
  RespPeer peer(server.port());
  for (const auto& [key, snapshot] : before) CHECK(Snapshot(peer, key) == snapshot);
  CHECK(peer.Call({"DBSIZE"}) == ":4\r\n");
}

}  // namespace dump_test
