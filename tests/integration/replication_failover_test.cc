// Replication after a failover, and chained replicas: a promoted replica keeps the history it
// followed (master_replid2 / second_repl_offset), so the other replicas and an old primary that
// took nothing it lacks continue without a full sync (INFO stats sync_full / sync_partial_ok);
// an old primary that took writes the new one never saw takes a full sync even when its offset
// matches; a replica of a replica gets what its primary applied, in order, under the top
// primary's replication id and offsets.
#include <signal.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/replication_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Count;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;
using rockcache::testing::replication::Field;
using rockcache::testing::replication::ReplicaArgs;
using rockcache::testing::replication::WaitCaughtUp;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace replication_failover_test {

namespace {

std::string Stat(Client& c, const std::string& name) {
  return InfoFields(InfoText(c, "stats"))[name];
}

std::vector<std::string> ReplicaOfArgs(int port) {
  return {"--replicaof", "127.0.0.1 " + std::to_string(port)};
}

void Writes(Client& c, const std::string& prefix, int n) {
  for (int i = 0; i < n; ++i) {
    REQUIRE(Run(c, {"SET", prefix + std::to_string(i), std::to_string(i)}) == "status:OK");
  }
}

}  // namespace

TEST_CASE("after a promotion the other replica and the old primary continue without a full sync",
          "[replication][failover]") {
  TestServer primary;
  Client p(primary.port());
  Writes(p, "before:", 200);
  REQUIRE(Run(p, {"RPUSH", "list", "a", "b"}) == "int:2");
  TestServer r1(ReplicaArgs(primary));
  TestServer r2(ReplicaArgs(primary));
  Client c1(r1.port());
  Client c2(r2.port());
  REQUIRE(WaitCaughtUp(p, c1, primary, r1));
  REQUIRE(WaitCaughtUp(p, c2, primary, r2));
  CHECK(Stat(p, "sync_full") == "2");
  const std::string old_replid = Field(p, "master_replid");
  const std::string old_offset = Field(p, "master_repl_offset");
  CHECK(Field(c1, "master_replid") == old_replid);

  // Sentinel's promotion of r1.
  REQUIRE(Run(c1, {"SLAVEOF", "NO", "ONE"}) == "status:OK");
  CHECK(Field(c1, "role") == "master");
  CHECK(Field(c1, "master_replid") != old_replid);
  CHECK(Field(c1, "master_replid2") == old_replid);
  CHECK(Field(c1, "second_repl_offset") == std::to_string(std::stoull(old_offset) + 1));
  CHECK(Field(c1, "master_repl_offset") == old_offset);  // offsets go on from the old history
  Writes(c1, "after:", 50);
  REQUIRE(Run(c1, {"RPUSH", "list", "c"}) == "int:3");

  // The other replica follows the new primary, and the old primary rejoins as a replica.
  REQUIRE(Run(c2, {"REPLICAOF", "127.0.0.1", std::to_string(r1.port())}) == "status:OK");
  REQUIRE(Run(p, {"REPLICAOF", "127.0.0.1", std::to_string(r1.port())}) == "status:OK");
  REQUIRE(WaitCaughtUp(c1, c2, r1, r2));
  REQUIRE(WaitCaughtUp(c1, p, r1, primary));
  CHECK(Stat(c1, "sync_full") == "0");
  CHECK(Stat(c1, "sync_partial_ok") == "2");
  CHECK(Stat(c1, "sync_partial_err") == "0");
  CHECK(Count(r2.Log(), "full sync loaded") == 1);  // its first sync only
  CHECK(Count(primary.Log(), "full sync loaded") == 0);
  const std::string new_replid = Field(c1, "master_replid");
  for (Client* c : {&c2, &p}) {
    CHECK(Field(*c, "master_replid") == new_replid);
    CHECK(Run(*c, {"GET", "after:49"}) == "bulk:49");
    CHECK(Run(*c, {"GET", "before:199"}) == "bulk:199");
    CHECK(Run(*c, {"LRANGE", "list", "0", "-1"}) == "[bulk:a, bulk:b, bulk:c]");
    CHECK(Run(*c, {"DBSIZE"}) == "int:251");
  }
  // They follow later writes too, and WAIT counts both.
  REQUIRE(Run(c1, {"SET", "later", "x"}) == "status:OK");
  CHECK(Run(c1, {"WAIT", "2", "5000"}) == "int:2");
  CHECK(Run(c2, {"GET", "later"}) == "bulk:x");
  CHECK(Run(p, {"GET", "later"}) == "bulk:x");
}

// A replica applies the batches that reached it together as one write (ApplyBatches), so two
// replicas of one primary hold its batches joined differently: the one that stopped reading
// for a while joined all it missed into one. Promoted, it serves the other from its WAL, which
// stands between two of those batches: the other gets the rest of the joined one and continues.
TEST_CASE(
    "after a promotion the other replica continues from inside a batch the new primary joined",
    "[replication][failover]") {
  TestServer primary;
  Client p(primary.port());
  TestServer r1(ReplicaArgs(primary));
  TestServer r2(ReplicaArgs(primary));
  Client c1(r1.port());
  Client c2(r2.port());
  REQUIRE(WaitCaughtUp(p, c1, primary, r1));
  REQUIRE(WaitCaughtUp(p, c2, primary, r2));
  ::kill(r1.pid(), SIGSTOP);  // r1 reads nothing: the batches wait in its socket
  Writes(p, "a:", 100);       // a batch each
  REQUIRE(WaitCaughtUp(p, c2, primary, r2));
  // r2 stands after a:99: it follows a primary that is not there (keeping its history and offset).
  REQUIRE(Run(c2, {"REPLICAOF", "127.0.0.1", "1"}) == "status:OK");
  Writes(p, "b:", 100);
  ::kill(r1.pid(), SIGCONT);  // r1 joins the 200 batches it reads at once
  REQUIRE(WaitCaughtUp(p, c1, primary, r1));
  primary.Kill9();
  REQUIRE(Run(c1, {"REPLICAOF", "NO", "ONE"}) == "status:OK");
  CHECK(Run(c2, {"GET", "b:0"}) == "nil");
  REQUIRE(Run(c2, {"REPLICAOF", "127.0.0.1", std::to_string(r1.port())}) == "status:OK");
  REQUIRE(WaitCaughtUp(c1, c2, r1, r2));
  CHECK(Stat(c1, "sync_partial_ok") == "1");
  CHECK(Stat(c1, "sync_full") == "0");
  CHECK(Count(r2.Log(), "full sync loaded") == 1);  // its first sync only
  CHECK(Run(c2, {"GET", "a:99"}) == "bulk:99");
  CHECK(Run(c2, {"GET", "b:0"}) == "bulk:0");
  CHECK(Run(c2, {"GET", "b:99"}) == "bulk:99");
  CHECK(Run(c2, {"DBSIZE"}) == "int:200");
  REQUIRE(Run(c1, {"SET", "later", "x"}) == "status:OK");
  CHECK(Run(c1, {"WAIT", "1", "5000"}) == "int:1");
  CHECK(Run(c2, {"GET", "later"}) == "bulk:x");
}

TEST_CASE("an old primary that took writes the new one never saw takes a full sync",
          "[replication][failover]") {
  TestServer primary;
  Client p(primary.port());
  Writes(p, "shared:", 100);
  TestServer replica(ReplicaArgs(primary));
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  // A partition: the replica is promoted while the old primary still takes writes. Both take
  // the same number of writes, so their offsets match: the ids must tell them apart.
  REQUIRE(Run(r, {"REPLICAOF", "NO", "ONE"}) == "status:OK");
  Writes(p, "lost:", 20);
  Writes(r, "new:", 20);
  // (A new primary's first write may also persist its version counter: one offset more.)
  for (int i = 0; i < 10 && std::stoull(Field(p, "master_repl_offset")) <
                                std::stoull(Field(r, "master_repl_offset"));
       ++i) {
    REQUIRE(Run(p, {"SET", "lost:extra", std::to_string(i)}) == "status:OK");
  }
  REQUIRE(Field(p, "master_repl_offset") == Field(r, "master_repl_offset"));
  REQUIRE(Run(p, {"REPLICAOF", "127.0.0.1", std::to_string(replica.port())}) == "status:OK");
  REQUIRE(WaitCaughtUp(r, p, replica, primary));
  CHECK(Stat(r, "sync_full") == "1");
  CHECK(Stat(r, "sync_partial_err") == "1");
  CHECK(Stat(r, "sync_partial_ok") == "0");
  CHECK(Count(primary.Log(), "full sync loaded") == 1);
  CHECK(Run(p, {"GET", "lost:0"}) == "nil");
  CHECK(Run(p, {"GET", "new:19"}) == "bulk:19");
  CHECK(Run(p, {"DBSIZE"}) == "int:120");
}

TEST_CASE("a replica of a replica gets what its primary applied, under the top primary's ids",
          "[replication][chained]") {
  TestServer top;
  Client a(top.port());
  Writes(a, "k:", 100);
  TestServer middle(ReplicaArgs(top));
  Client b(middle.port());
  REQUIRE(WaitCaughtUp(a, b, top, middle));
  // A full sync from a replica (its checkpoint between two applied batches), then its stream.
  TestServer leaf(ReplicaOfArgs(middle.port()));
  Client c(leaf.port());
  REQUIRE(WaitCaughtUp(a, c, top, leaf));
  CHECK(Field(c, "master_replid") == Field(a, "master_replid"));
  CHECK(Field(c, "master_port") == std::to_string(middle.port()));
  CHECK(Field(b, "connected_slaves") == "1");
  // Order: each value depends on the one before.
  for (int i = 0; i < 300; ++i) {
    a.Append({"INCR", "counter"});
    a.Append({"RPUSH", "seq", std::to_string(i)});
    a.Append({"HSET", "h", "f" + std::to_string(i % 7), std::to_string(i)});
  }
  Reply reply;
  for (int i = 0; i < 900; ++i) REQUIRE(a.GetReply(&reply));
  REQUIRE(Run(a, {"DEL", "k:0"}) == "int:1");
  REQUIRE(WaitCaughtUp(a, c, top, leaf));
  CHECK(Field(c, "slave_repl_offset") == Field(a, "master_repl_offset"));
  CHECK(Run(c, {"GET", "counter"}) == "bulk:300");
  CHECK(Run(c, {"LINDEX", "seq", "299"}) == "bulk:299");
  CHECK(Run(c, {"LLEN", "seq"}) == "int:300");
  CHECK(Run(c, {"HGET", "h", "f5"}) == "bulk:299");
  CHECK(Run(c, {"GET", "k:0"}) == "nil");
  CHECK(Run(c, {"DBSIZE"}) == Run(a, {"DBSIZE"}));
  CHECK(Run(c, {"SET", "x", "1"}) == "err:READONLY You can't write against a read only replica.");

  // The leaf restarts and continues from the middle one without a full sync.
  leaf.Stop();
  Writes(a, "while-down:", 50);
  leaf.Restart();
  Client c2(leaf.port());
  REQUIRE(WaitCaughtUp(a, c2, top, leaf));
  CHECK(Run(c2, {"GET", "while-down:49"}) == "bulk:49");
  CHECK(Count(leaf.Log(), "full sync loaded") == 1);
  CHECK(Stat(b, "sync_full") == "1");
  CHECK(Stat(b, "sync_partial_ok") == "1");

  // The middle one is promoted: the leaf continues under its new id.
  REQUIRE(Run(b, {"REPLICAOF", "NO", "ONE"}) == "status:OK");
  REQUIRE(Run(b, {"SET", "from-middle", "1"}) == "status:OK");
  REQUIRE(WaitCaughtUp(b, c2, middle, leaf));
  CHECK(Run(c2, {"GET", "from-middle"}) == "bulk:1");
  CHECK(Field(c2, "master_replid") == Field(b, "master_replid"));
  CHECK(Count(leaf.Log(), "full sync loaded") == 1);
}

TEST_CASE("a writable replica's own writes never reach its replicas, however they interleave",
          "[replication][chained]") {
  // The middle server applies the top one's batches while its clients write keys of its own
  // (replica-read-only no). RocksDB joins the batches of writers that queue together into one
  // WAL record; the leaf must still get exactly the top's writes, in order, with no resync.
  TestServer top;
  Client a(top.port());
  TestServer middle(ReplicaArgs(top));
  Client b(middle.port());
  REQUIRE(WaitCaughtUp(a, b, top, middle));
  REQUIRE(Run(b, {"CONFIG", "SET", "replica-read-only", "no"}) == "status:OK");
  TestServer leaf(ReplicaOfArgs(middle.port()));
  Client c(leaf.port());
  REQUIRE(WaitCaughtUp(a, c, top, leaf));
  constexpr int kRounds = 200;
  constexpr int kPerRound = 50;
  Reply reply;
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kPerRound; ++i) {
      const std::string n = std::to_string(round * kPerRound + i);
      a.Append({"SET", "top:" + n, n});
      b.Append({"SET", "own:" + n, n});
    }
    for (int i = 0; i < kPerRound; ++i) {
      REQUIRE(a.GetReply(&reply));
      REQUIRE(b.GetReply(&reply));
    }
  }
  REQUIRE(Run(a, {"SET", "last", "1"}) == "status:OK");
  REQUIRE(WaitCaughtUp(a, c, top, leaf));
  CHECK(Field(c, "slave_repl_offset") == Field(a, "master_repl_offset"));
  CHECK(Run(c, {"DBSIZE"}) == "int:" + std::to_string(kRounds * kPerRound + 1));
  CHECK(Run(c, {"GET", "top:9999"}) == "bulk:9999");
  CHECK(Run(c, {"EXISTS", "own:0", "own:5000", "own:9999"}) == "int:0");
  CHECK(Run(b, {"DBSIZE"}) == "int:" + std::to_string(2 * kRounds * kPerRound + 1));
  CHECK(Count(leaf.Log(), "full sync loaded") == 1);
  CHECK(Stat(b, "sync_full") == "1");
}

TEST_CASE("a replica whose link is down refuses replicas of its own", "[replication][chained]") {
  TestServer orphan({"--replicaof", "127.0.0.1 1"});  // nothing listens there
  Client o(orphan.port());
  // A replica from its first command on: it never takes a write as a primary.
  CHECK(Run(o, {"SET", "k", "v"}) == "err:READONLY You can't write against a read only replica.");
  REQUIRE(Field(o, "role") == "slave");
  CHECK(Run(o, {"PSYNC", "?", "-1"}) ==
        "err:NOMASTERLINK Can't SYNC while not connected with my master");
}

TEST_CASE("FAILOVER: Redis 7.0's errors, a handover to a replica, and an abort on timeout",
          "[replication][failover]") {
  TestServer primary;
  Client p(primary.port());
  CHECK(Run(p, {"FAILOVER"}) == "err:ERR FAILOVER requires connected replicas.");
  CHECK(Run(p, {"FAILOVER", "ABORT"}) == "err:ERR No failover in progress.");
  CHECK(Run(p, {"FAILOVER", "ABORT", "TIMEOUT", "10"}) == "err:ERR syntax error");
  CHECK(Run(p, {"FAILOVER", "TIMEOUT", "0"}) == "err:ERR FAILOVER timeout must be greater than 0");
  CHECK(Run(p, {"FAILOVER", "TO", "127.0.0.1"}) == "err:ERR syntax error");
  CHECK(Run(p, {"FAILOVER", "TO", "127.0.0.1", "x"}) ==
        "err:ERR value is not an integer or out of range");
  TestServer replica(ReplicaArgs(primary));
  TestServer other(ReplicaArgs(primary));
  Client r(replica.port());
  Client o(other.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  REQUIRE(WaitCaughtUp(p, o, primary, other));
  CHECK(Run(r, {"FAILOVER"}) == "err:ERR FAILOVER is not valid when server is a replica.");
  CHECK(Run(p, {"FAILOVER", "FORCE", "TIMEOUT", "10"}) ==
        "err:ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
  CHECK(Run(p, {"FAILOVER", "TO", "127.0.0.1", "1"}) ==
        "err:ERR FAILOVER target HOST and PORT is not a replica.");
  CHECK(Run(p, {"PSYNC", "x", "1", "FAILOVER"}) ==
        "err:ERR PSYNC FAILOVER can't be sent to a master.");
  CHECK(Field(p, "master_failover_state") == "no-failover");

  // A replica that cannot catch up (stopped): the failover waits, holding writes, and gives up
  // at its timeout.
  ::kill(replica.pid(), SIGSTOP);
  REQUIRE(Run(p, {"SET", "while-stopped", "1"}) == "status:OK");
  const std::string port = std::to_string(replica.port());
  REQUIRE(Run(p, {"FAILOVER", "TO", "127.0.0.1", port, "TIMEOUT", "500"}) == "status:OK");
  CHECK(Field(p, "master_failover_state") == "waiting-for-sync");
  CHECK(Run(p, {"FAILOVER"}) == "err:ERR FAILOVER already in progress.");
  Client writer(primary.port());
  writer.Append({"SET", "held", "1"});
  for (int done = 0; !done;) REQUIRE(redisBufferWrite(writer.context(), &done) == REDIS_OK);
  Reply held;
  for (int waited = 0; waited < 5000 && Field(p, "master_failover_state") != "no-failover";
       waited += 50) {
    SleepMs(50);
  }
  CHECK(Field(p, "master_failover_state") == "no-failover");
  CHECK(Field(p, "role") == "master");
  REQUIRE(writer.GetReply(&held));  // the pause is over
  CHECK(held.str == "OK");
  ::kill(replica.pid(), SIGCONT);
  REQUIRE(WaitCaughtUp(p, r, primary, replica));

  // The handover: the replica takes over, the old primary follows it, nothing is copied again.
  const std::string old_replid = Field(p, "master_replid");
  REQUIRE(Run(p, {"FAILOVER", "TO", "127.0.0.1", port, "TIMEOUT", "5000"}) == "status:OK");
  for (int waited = 0; waited < 10000 && !(Field(p, "role") == "slave" &&
                                           Field(p, "master_failover_state") == "no-failover");
       waited += 50) {
    SleepMs(50);
  }
  CHECK(Field(p, "role") == "slave");
  CHECK(Field(p, "master_failover_state") == "no-failover");
  CHECK(Field(p, "master_port") == port);
  CHECK(Field(r, "role") == "master");
  CHECK(Field(r, "master_replid2") == old_replid);
  CHECK(Stat(r, "sync_partial_ok") == "1");
  CHECK(Stat(r, "sync_full") == "0");
  CHECK(Run(p, {"SET", "x", "1"}) == "err:READONLY You can't write against a read only replica.");
  REQUIRE(Run(r, {"SET", "after-failover", "1"}) == "status:OK");
  CHECK(Run(r, {"WAIT", "1", "5000"}) == "int:1");
  CHECK(Run(p, {"GET", "after-failover"}) == "bulk:1");
  CHECK(Run(p, {"GET", "held"}) == "bulk:1");
  // The other replica now follows the old primary (a chained replica, as with Redis).
  REQUIRE(WaitCaughtUp(r, o, replica, other));
  CHECK(Run(o, {"GET", "after-failover"}) == "bulk:1");
  CHECK(Count(other.Log(), "full sync loaded") == 1);
}

}  // namespace replication_failover_test
