// MIGRATE ([dump]) moves keys to a real redis-server 7.0 and to a second rockcache that wants a
// password: COPY, REPLACE, KEYS, a TTL kept, NOKEY, AUTH and AUTH2, IOERR with nothing
// listening. Skipped when redis-server is missing.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "tests/support/differential.h"
#include "tests/support/differential_peer.h"
#include "tests/support/dump_samples.h"
#include "tests/support/test_server.h"

using rockcache::testing::ReferenceRedis;
using rockcache::testing::RespPeer;
using rockcache::testing::TestServer;
using rockcache::testing::differential::Command;
using rockcache::testing::differential::Rng;
using rockcache::testing::dump::Fill;
using rockcache::testing::dump::Snapshot;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace migrate_test {

TEST_CASE("MIGRATE moves keys to redis-server and to another rockcache", "[dump]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  ReferenceRedis reference(redis);
  TestServer server;
  TestServer target({"--requirepass", "secret"});
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());
  RespPeer other(target.port());
  REQUIRE(other.Call({"AUTH", "secret"}) == "+OK\r\n");
  const std::string rport = std::to_string(reference.port());
  const std::string tport = std::to_string(target.port());
  Rng rng(3);
  auto keys = Fill([&](const Command& c) { REQUIRE(ours.Call(c)[0] != '-'); }, rng);
  std::map<std::string, std::string> before;
  for (const auto& s : keys) before[s.key] = Snapshot(ours, s.key);

  // One key, COPY: stays here.
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", rport, "str:small", "0", "5000", "COPY"}) == "+OK\r\n");
  CHECK(ours.Call({"EXISTS", "str:small"}) == ":1\r\n");
  CHECK(Snapshot(theirs, "str:small") == before["str:small"]);
  // Again without REPLACE: the target's BUSYKEY, nothing deleted.
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", rport, "str:small", "0", "5000"}) ==
        "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n");
  CHECK(ours.Call({"EXISTS", "str:small"}) == ":1\r\n");
  // REPLACE: moved.
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", rport, "str:small", "0", "5000", "REPLACE"}) ==
        "+OK\r\n");
  CHECK(ours.Call({"EXISTS", "str:small"}) == ":0\r\n");
  // KEYS, into database 3 of redis-server, a missing key among them, a TTL kept.
  ours.Call({"PEXPIRE", "hash:big", "100000"});
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", rport, "", "3", "5000", "KEYS", "list:big", "nokey",
                   "hash:big", "stream:big"}) == "+OK\r\n");
  theirs.Call({"SELECT", "3"});
  for (const char* k : {"list:big", "hash:big", "stream:big"}) {
    CHECK(Snapshot(theirs, k) == before[k]);
    CHECK(ours.Call({"EXISTS", k}) == ":0\r\n");
  }
  const long long ttl = std::stoll(theirs.Call({"PTTL", "hash:big"}).substr(1));
  CHECK(ttl > 90000);
  // NOKEY when none of the keys is here.
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", rport, "", "0", "5000", "KEYS", "nokey", "list:big"}) ==
        "+NOKEY\r\n");
  // To a second rockcache that wants a password: AUTH and AUTH2.
  CHECK(ours.Call(
            {"MIGRATE", "127.0.0.1", tport, "", "0", "5000", "KEYS", "zset:big", "set:bigint"}) ==
        "-ERR Target instance replied with error: NOAUTH Authentication required.\r\n");
  CHECK(ours.Call({"EXISTS", "zset:big"}) == ":1\r\n");
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", tport, "", "0", "5000", "AUTH", "secret", "KEYS",
                   "zset:big", "set:bigint"}) == "+OK\r\n");
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", tport, "geo", "0", "5000", "AUTH2", "default",
                   "secret"}) == "+OK\r\n");
  for (const char* k : {"zset:big", "set:bigint", "geo"}) {
    CHECK(Snapshot(other, k) == before[k]);
    CHECK(ours.Call({"EXISTS", k}) == ":0\r\n");
  }
  // Nothing listening: IOERR, keys kept.
  const std::string closed = std::to_string(rockcache::testing::FreePort());
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", closed, "zset:small", "0", "500"}) ==
        "-IOERR error or timeout writing to target instance\r\n");
  CHECK(ours.Call({"EXISTS", "zset:small"}) == ":1\r\n");
}

}  // namespace migrate_test
