// Replication between rockcache servers: full sync, then every committed write in order; the
// replica's cache never serves a value older than what it applied; READONLY; promotion;
// incremental resume after a replica restart; a full sync when the WAL no longer holds what a
// replica needs; a dead primary leaves the link down and the data readable.
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tests/support/replication_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Contains;
using rockcache::testing::Count;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::Str;
using rockcache::testing::TestServer;
using rockcache::testing::replication::Field;
using rockcache::testing::replication::ReplicaArgs;
using rockcache::testing::replication::TryReplicationInfo;
using rockcache::testing::replication::WaitCaughtUp;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace replication_test {

namespace {

// Loads `n` strings (pipelined) and a few collections into db 0 and db 3.
void Load(Client& c, int n) {
  for (int i = 0; i < n; ++i) {
    c.Append({"SET", "key:" + std::to_string(i), "value-" + std::to_string(i)});
    if (i % 1000 == 999) {
      Reply r;
      for (int j = 0; j < 1000; ++j) REQUIRE(c.GetReply(&r));
    }
  }
  Reply r;
  for (int j = 0; j < n % 1000; ++j) REQUIRE(c.GetReply(&r));
  for (int i = 0; i < 100; ++i) {
    const std::string s = std::to_string(i);
    REQUIRE(Run(c, {"HSET", "hash:" + s, "f1", "a" + s, "f2", "b" + s}) == "int:2");
    REQUIRE(Run(c, {"RPUSH", "list:" + s, "x", "y", s}) == "int:3");
    REQUIRE(Run(c, {"SADD", "set:" + s, "m1", "m2", s}) == "int:3");
    REQUIRE(Run(c, {"ZADD", "zset:" + s, "1", "one", "2", s}) == "int:2");
  }
  REQUIRE(Run(c, {"SELECT", "3"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "in-db3", "three"}) == "status:OK");
  REQUIRE(Run(c, {"SELECT", "0"}) == "status:OK");
}

}  // namespace

TEST_CASE("a replica gets the existing data, then follows writes of every type", "[replication]") {
  TestServer primary;
  Client p(primary.port());
  Load(p, 100000);
  TestServer replica(ReplicaArgs(primary));
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica, 60000));
  CHECK(Run(r, {"DBSIZE"}) == Run(p, {"DBSIZE"}));
  CHECK(Run(r, {"GET", "key:0"}) == "bulk:value-0");
  CHECK(Run(r, {"GET", "key:99999"}) == "bulk:value-99999");
  CHECK(Run(r, {"HGET", "hash:7", "f2"}) == "bulk:b7");
  CHECK(Run(r, {"LRANGE", "list:7", "0", "-1"}) == Run(p, {"LRANGE", "list:7", "0", "-1"}));
  CHECK(Run(r, {"SCARD", "set:7"}) == "int:3");
  CHECK(Run(r, {"ZSCORE", "zset:7", "7"}) == "bulk:2");
  CHECK(Run(r, {"SELECT", "3"}) == "status:OK");
  CHECK(Run(r, {"GET", "in-db3"}) == "bulk:three");
  CHECK(Run(r, {"SELECT", "0"}) == "status:OK");
  CHECK(Field(r, "role") == "slave");
  CHECK(Field(p, "connected_slaves") == "1");
  CHECK(Contains(Field(p, "slave0"), "state=online"));
  CHECK(Field(r, "master_replid") == Field(p, "master_replid"));
  CHECK(Field(p, "master_replid").size() == 40);

  // Writes of every type, then WAIT for the replica.
  REQUIRE(Run(p, {"SET", "s", "v"}) == "status:OK");
  REQUIRE(Run(p, {"APPEND", "s", "w"}) == "int:2");
  REQUIRE(Run(p, {"HSET", "hash:7", "f3", "c"}) == "int:1");
  REQUIRE(Run(p, {"HDEL", "hash:7", "f1"}) == "int:1");
  REQUIRE(Run(p, {"LPUSH", "list:7", "head"}) == "int:4");
  REQUIRE(Run(p, {"RPOP", "list:7"}) == "bulk:7");
  REQUIRE(Run(p, {"SADD", "set:7", "new"}) == "int:1");
  REQUIRE(Run(p, {"SREM", "set:7", "m1"}) == "int:1");
  REQUIRE(Run(p, {"ZADD", "zset:7", "5", "five"}) == "int:1");
  REQUIRE(Run(p, {"ZINCRBY", "zset:7", "10", "one"}) == "bulk:11");
  REQUIRE(Run(p, {"XADD", "stream", "1-1", "a", "b"}) == "bulk:1-1");
  REQUIRE(Run(p, {"XADD", "stream", "2-1", "c", "d"}) == "bulk:2-1");
  REQUIRE(Run(p, {"SET", "ttl", "x", "PX", "100000"}) == "status:OK");
  REQUIRE(Run(p, {"DEL", "key:1", "hash:8", "list:8"}) == "int:3");
  REQUIRE(Run(p, {"SELECT", "5"}) == "status:OK");
  REQUIRE(Run(p, {"SET", "in-db5", "five"}) == "status:OK");
  REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
  REQUIRE(Run(p, {"SELECT", "0"}) == "status:OK");

  CHECK(Run(r, {"GET", "s"}) == "bulk:vw");
  CHECK(Run(r, {"HGETALL", "hash:7"}) == Run(p, {"HGETALL", "hash:7"}));
  CHECK(Run(r, {"LRANGE", "list:7", "0", "-1"}) == Run(p, {"LRANGE", "list:7", "0", "-1"}));
  CHECK(Run(r, {"SMEMBERS", "set:7"}) == Run(p, {"SMEMBERS", "set:7"}));
  CHECK(Run(r, {"ZRANGE", "zset:7", "0", "-1", "WITHSCORES"}) ==
        Run(p, {"ZRANGE", "zset:7", "0", "-1", "WITHSCORES"}));
  CHECK(Run(r, {"XRANGE", "stream", "-", "+"}) == Run(p, {"XRANGE", "stream", "-", "+"}));
  const Reply pttl = r.Command({"PTTL", "ttl"});
  CHECK(pttl.integer > 90000);
  CHECK(Run(r, {"EXISTS", "key:1", "hash:8", "list:8"}) == "int:0");
  CHECK(Run(r, {"DBSIZE"}) == Run(p, {"DBSIZE"}));
  CHECK(Run(r, {"SELECT", "5"}) == "status:OK");
  CHECK(Run(r, {"GET", "in-db5"}) == "bulk:five");
  CHECK(Run(r, {"DBSIZE"}) == "int:1");
  CHECK(Run(r, {"SELECT", "0"}) == "status:OK");

  // FLUSHALL empties the replica too.
  REQUIRE(Run(p, {"FLUSHALL"}) == "status:OK");
  REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
  CHECK(Run(r, {"DBSIZE"}) == "int:0");
  CHECK(Run(r, {"GET", "key:0"}) == "nil");
  CHECK(Run(r, {"SELECT", "3"}) == "status:OK");
  CHECK(Run(r, {"DBSIZE"}) == "int:0");
}

TEST_CASE("a value cached on the replica is replaced by the primary's write", "[replication]") {
  TestServer primary;
  TestServer replica(ReplicaArgs(primary));
  Client p(primary.port());
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  REQUIRE(Run(p, {"SET", "k", "v1"}) == "status:OK");
  REQUIRE(Run(p, {"HSET", "h", "f", "1"}) == "int:1");
  REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
  for (int i = 0; i < 3; ++i) {  // the second and third are cache hits
    CHECK(Run(r, {"GET", "k"}) == "bulk:v1");
    CHECK(Run(r, {"HGET", "h", "f"}) == "bulk:1");
  }
  for (int round = 2; round < 50; ++round) {
    const std::string v = "v" + std::to_string(round);
    REQUIRE(Run(p, {"SET", "k", v}) == "status:OK");
    REQUIRE(Run(p, {"HINCRBY", "h", "f", "1"}) == "int:" + std::to_string(round));
    REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
    CHECK(Run(r, {"GET", "k"}) == "bulk:" + v);
    CHECK(Run(r, {"HGET", "h", "f"}) == "bulk:" + std::to_string(round));
  }
  REQUIRE(Run(p, {"DEL", "k"}) == "int:1");
  REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
  CHECK(Run(r, {"GET", "k"}) == "nil");
}

TEST_CASE("a replica refuses writes; REPLICAOF NO ONE promotes it", "[replication]") {
  TestServer primary;
  TestServer replica(ReplicaArgs(primary));
  Client p(primary.port());
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  REQUIRE(Run(p, {"SET", "a", "1"}) == "status:OK");
  REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
  CHECK(Run(r, {"SET", "a", "2"}) == "err:READONLY You can't write against a read only replica.");
  CHECK(Run(r, {"DEL", "a"}) == "err:READONLY You can't write against a read only replica.");
  CHECK(Run(r, {"GET", "a"}) == "bulk:1");
  // PUBLISH is not a write: delivered on the replica (Sentinel's hello channel).
  CHECK(Run(r, {"PUBLISH", "__sentinel__:hello", "x"}) == "int:0");
  const Reply role = r.Command({"ROLE"});
  REQUIRE(role.elements.size() == 5);
  CHECK(role.elements[0].str == "slave");
  CHECK(role.elements[3].str == "connected");
  const std::string old_replid = Field(r, "master_replid");

  // Sentinel's failover transaction: no queue-time error, every reply in EXEC's array.
  REQUIRE(Run(r, {"MULTI"}) == "status:OK");
  CHECK(Run(r, {"SLAVEOF", "NO", "ONE"}) == "status:QUEUED");
  CHECK(Run(r, {"CONFIG", "REWRITE"}) == "status:QUEUED");
  CHECK(Run(r, {"CLIENT", "KILL", "TYPE", "normal"}) == "status:QUEUED");
  CHECK(Run(r, {"CLIENT", "KILL", "TYPE", "pubsub"}) == "status:QUEUED");
  const Reply exec = r.Command({"EXEC"});
  REQUIRE(exec.elements.size() == 4);
  CHECK(Str(exec.elements[0]) == "OK");
  CHECK(Field(r, "role") == "master");
  CHECK(Field(r, "master_replid") != old_replid);
  CHECK(Run(r, {"SET", "a", "2"}) == "status:OK");
  CHECK(Run(r, {"GET", "a"}) == "bulk:2");
  CHECK(Run(p, {"GET", "a"}) == "bulk:1");
  CHECK(Field(p, "connected_slaves") == "0");
}

TEST_CASE("a restarted replica resumes without a full sync", "[replication]") {
  TestServer primary;
  Client p(primary.port());
  REQUIRE(Run(p, {"SET", "before", "1"}) == "status:OK");
  TestServer replica(ReplicaArgs(primary));
  {
    Client r(replica.port());
    REQUIRE(WaitCaughtUp(p, r, primary, replica));
  }
  replica.Stop();
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(Run(p, {"SET", "while-down:" + std::to_string(i), std::to_string(i)}) == "status:OK");
  }
  REQUIRE(Run(p, {"HSET", "h", "f", "v"}) == "int:1");
  replica.Restart();
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  CHECK(Run(r, {"GET", "while-down:999"}) == "bulk:999");
  CHECK(Run(r, {"HGET", "h", "f"}) == "bulk:v");
  CHECK(Run(r, {"DBSIZE"}) == "int:1002");
  // One full sync (the first start), then a continuation.
  CHECK(Count(replica.Log(), "full sync loaded") == 1);
  CHECK(Count(replica.Log(), "continuing after sequence") >= 2);
}

TEST_CASE("a replica too far behind takes a full sync", "[replication]") {
  // No WAL kept past recovery, and small memtables so writes roll the WAL over.
  TestServer primary(
      {"--repl-wal-ttl", "0", "--repl-wal-size-limit", "0", "--rocksdb-write-buffer-size", "1mb"});
  // 10 MB through 1 MB memtables: on a loaded machine, flushes fall behind and RocksDB stalls
  // the writes for a while (more than the default 10 s reply wait).
  Client p(primary.port(), 60000);
  TestServer replica(ReplicaArgs(primary));
  {
    Client r(replica.port());
    REQUIRE(WaitCaughtUp(p, r, primary, replica));
  }
  replica.Stop();
  const std::string value(1000, 'x');
  for (int i = 0; i < 10000; ++i) {
    p.Append({"SET", "big:" + std::to_string(i), value});
  }
  Reply reply;
  for (int i = 0; i < 10000; ++i) REQUIRE(p.GetReply(&reply));
  // Every column family flushed: no WAL file is needed any more, and none is kept.
  REQUIRE(Run(p, {"DEBUG", "COMPACT"}) == "status:OK");
  replica.Restart();
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica, 60000));
  CHECK(Run(r, {"DBSIZE"}) == "int:10000");
  CHECK(Run(r, {"STRLEN", "big:9999"}) == "int:1000");
  CHECK(Count(replica.Log(), "full sync loaded") == 2);
}

TEST_CASE("a dead primary leaves the link down and the replica's data intact", "[replication]") {
  TestServer primary;
  TestServer replica(ReplicaArgs(primary));
  Client p(primary.port());
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  REQUIRE(Run(p, {"SET", "kept", "yes"}) == "status:OK");
  REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
  primary.Kill9();
  std::string status;
  for (int waited = 0; waited < 10000 && status != "down"; waited += 100) {
    SleepMs(100);
    status = Field(r, "master_link_status");
  }
  CHECK(status == "down");
  CHECK(Field(r, "master_link_down_since_seconds") != "");
  CHECK(Run(r, {"GET", "kept"}) == "bulk:yes");
  CHECK(Run(r, {"CLIENT", "KILL", "TYPE", "master"}) == "int:0");
  // The primary comes back (a new replication id: a full sync, same data).
  primary.Restart();
  Client p2(primary.port());
  REQUIRE(WaitCaughtUp(p2, r, primary, replica));
  CHECK(Run(r, {"GET", "kept"}) == "bulk:yes");
}

TEST_CASE("WAIT parks only its own client", "[replication]") {
  TestServer primary({"--net-threads", "1"});
  Client a(primary.port());
  Client b(primary.port());
  REQUIRE(Run(a, {"SET", "k", "v"}) == "status:OK");
  CHECK(Run(a, {"WAIT", "0", "0"}) == "int:0");
  const long long start = rockcache::testing::NowMs();
  a.Append({"WAIT", "1", "700"});  // no replica: times out
  a.Append({"GET", "k"});          // parsed only after WAIT's reply
  for (int i = 0; i < 20; ++i) REQUIRE(Run(b, {"SET", "other", std::to_string(i)}) == "status:OK");
  CHECK(rockcache::testing::NowMs() - start < 500);  // b was not held by a's WAIT
  Reply reply;
  REQUIRE(a.GetReply(&reply));
  CHECK(reply.integer == 0);
  CHECK(rockcache::testing::NowMs() - start >= 650);
  REQUIRE(a.GetReply(&reply));
  CHECK(reply.str == "v");
  CHECK(Run(a, {"WAIT", "x", "0"}) == "err:ERR value is not an integer or out of range");
  CHECK(Run(a, {"WAIT", "1", "-1"}) == "err:ERR timeout is negative");
}

TEST_CASE("replication obeys requirepass through masterauth", "[replication]") {
  TestServer primary({"--requirepass", "secret"});
  Client p(primary.port());
  REQUIRE(Run(p, {"AUTH", "secret"}) == "status:OK");
  REQUIRE(Run(p, {"SET", "k", "v"}) == "status:OK");
  std::vector<std::string> args = ReplicaArgs(primary);
  TestServer without(args);
  Client w(without.port());
  SleepMs(1500);
  CHECK(Field(w, "master_link_status") == "down");
  CHECK(Run(w, {"GET", "k"}) == "nil");
  args.insert(args.end(), {"--masterauth", "secret"});
  TestServer replica(args);
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  CHECK(Run(r, {"GET", "k"}) == "bulk:v");
  // Pointing a replica at itself is harmless: it never links, its data stays.
  CHECK(Run(r, {"REPLICAOF", "127.0.0.1", std::to_string(replica.port())}) == "status:OK");
  SleepMs(1500);
  CHECK(Field(r, "master_link_status") == "down");
  CHECK(Run(r, {"GET", "k"}) == "bulk:v");
}

}  // namespace replication_test
