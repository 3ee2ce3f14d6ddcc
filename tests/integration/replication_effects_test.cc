// What a replica fires for the batches it applies, as a Redis replica does for the commands it
// runs: keyspace notifications (the primary's events, as the replica's notify-keyspace-events
// says), blocked clients served by replicated writes, client-tracking invalidations; and the
// -UNBLOCKED error of the clients blocked on a primary that becomes a replica.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/replication_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using namespace rockcache::testing;
using rockcache::testing::Send;
using rockcache::testing::replication::ReplicaArgs;
using rockcache::testing::replication::WaitCaughtUp;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace replication_effects_test {

namespace {

// The next message of a client subscribed to __keyevent@*__:* as "db event key".
std::string NextEvent(Client& sub) {
  Reply r;
  REQUIRE(sub.GetReply(&r));
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  REQUIRE(r.elements.size() == 4);
  const std::string channel = r.elements[2].str;  // __keyevent@<db>__:<event>
  const size_t at = channel.find('@');
  const size_t end = channel.find("__:");
  if (at == std::string::npos || end == std::string::npos) return channel + " " + r.elements[3].str;
  return channel.substr(at + 1, end - at - 1) + " " + channel.substr(end + 3) + " " +
         r.elements[3].str;
}

// Sends a command without waiting for its reply.
// Waits until `server` has `n` blocked clients.
void WaitBlocked(Client& server, int n) {
  const std::string want = "blocked_clients:" + std::to_string(n);
  for (int i = 0; i < 250 && !Contains(Run(server, {"INFO", "clients"}), want); ++i) SleepMs(20);
  REQUIRE(Contains(Run(server, {"INFO", "clients"}), want));
}

void PSubscribe(Client& sub, const std::string& pattern) {
  sub.Append({"PSUBSCRIBE", pattern});
  Reply r;
  REQUIRE(sub.GetReply(&r));
}

// `server` publishes a marker on the keyevent channels; it must be the next thing `sub` sees.
void ExpectNothingMore(Client& server, Client& sub) {
  REQUIRE(Run(server, {"PUBLISH", "__keyevent@0__:marker", "end"}) == "int:1");
  CHECK(NextEvent(sub) == "0 marker end");
}

}  // namespace

TEST_CASE("a replica publishes the primary's keyspace events, as its own config says",
          "[replication][notify]") {
  TestServer primary;
  std::vector<std::string> args = ReplicaArgs(primary);
  args.insert(args.end(), {"--notify-keyspace-events", "Elg$h"});
  TestServer replica(args);
  Client p(primary.port());
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  Client sub(replica.port());
  PSubscribe(sub, "__keyevent@*__:*");
  Client primary_sub(primary.port());  // the primary's own config says nothing: it publishes none
  PSubscribe(primary_sub, "__keyevent@*__:*");

  REQUIRE(Run(p, {"SET", "a", "1"}) == "status:OK");
  REQUIRE(Run(p, {"RPUSH", "l", "x", "y"}) == "int:2");
  REQUIRE(Run(p, {"LPOP", "l"}) == "bulk:x");
  REQUIRE(Run(p, {"HSET", "h", "f", "v"}) == "int:1");
  REQUIRE(Run(p, {"SADD", "s", "m"}) == "int:1");  // class s: the replica did not ask for it
  REQUIRE(Run(p, {"INCR", "n"}) == "int:1");
  REQUIRE(Run(p, {"DEL", "a", "h"}) == "int:2");
  REQUIRE(Run(p, {"MULTI"}) == "status:OK");
  REQUIRE(Run(p, {"APPEND", "t", "x"}) == "status:QUEUED");
  REQUIRE(Run(p, {"RPOP", "l"}) == "status:QUEUED");
  REQUIRE(Run(p, {"EXEC"}) == "[int:1, bulk:y]");
  REQUIRE(Run(p, {"SELECT", "2"}) == "status:OK");
  REQUIRE(Run(p, {"SET", "b", "2"}) == "status:OK");
  REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");

  CHECK(NextEvent(sub) == "0 set a");
  CHECK(NextEvent(sub) == "0 rpush l");
  CHECK(NextEvent(sub) == "0 lpop l");
  CHECK(NextEvent(sub) == "0 hset h");
  CHECK(NextEvent(sub) == "0 incrby n");
  CHECK(NextEvent(sub) == "0 del a");
  CHECK(NextEvent(sub) == "0 del h");
  CHECK(NextEvent(sub) == "0 append t");
  CHECK(NextEvent(sub) == "0 rpop l");
  CHECK(NextEvent(sub) == "0 del l");  // RPOP emptied it
  CHECK(NextEvent(sub) == "2 set b");
  ExpectNothingMore(r, sub);
  ExpectNothingMore(p, primary_sub);

  // CONFIG SET on the replica: the primary ships the new classes from then on.
  REQUIRE(Run(r, {"CONFIG", "SET", "notify-keyspace-events", "Es"}) == "status:OK");
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    REQUIRE(Run(p, {"SADD", "s2", std::to_string(i)}) == "int:1");
    REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
    Reply reply;
    REQUIRE(r.TryCommand({"PUBLISH", "__keyevent@2__:probe", std::to_string(i)}, &reply));
    const std::string event = NextEvent(sub);
    if (event == "2 sadd s2") {
      seen = true;
      CHECK(NextEvent(sub) == "2 probe " + std::to_string(i));
    } else {
      CHECK(event == "2 probe " + std::to_string(i));
    }
  }
  CHECK(seen);
  ExpectNothingMore(p, primary_sub);
}

TEST_CASE("a key the primary's expiry removes fires del on the replica, expired on the primary",
          "[replication][notify]") {
  TestServer primary({"--notify-keyspace-events", "Ex", "--hz", "50"});
  std::vector<std::string> args = ReplicaArgs(primary);
  args.insert(args.end(), {"--notify-keyspace-events", "Egx"});
  TestServer replica(args);
  Client p(primary.port());
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  Client sub(replica.port());
  PSubscribe(sub, "__keyevent@*__:*");
  Client primary_sub(primary.port());
  PSubscribe(primary_sub, "__keyevent@*__:*");
  // Removed by the sweep (nothing reads them).
  REQUIRE(Run(p, {"SET", "swept", "1", "PX", "50"}) == "status:OK");
  REQUIRE(Run(p, {"SELECT", "3"}) == "status:OK");
  REQUIRE(Run(p, {"HSET", "swept-hash", "f", "v"}) == "int:1");
  REQUIRE(Run(p, {"PEXPIRE", "swept-hash", "50"}) == "int:1");
  REQUIRE(Run(p, {"SELECT", "0"}) == "status:OK");
  // The writes' own events first (class g), then the deletions, in the sweep's own order over
  // the databases.
  std::set<std::string> expires = {NextEvent(sub), NextEvent(sub)};
  CHECK(expires == std::set<std::string>{"0 expire swept", "3 expire swept-hash"});
  std::set<std::string> on_replica = {NextEvent(sub), NextEvent(sub)};
  std::set<std::string> on_primary = {NextEvent(primary_sub), NextEvent(primary_sub)};
  CHECK(on_replica == std::set<std::string>{"0 del swept", "3 del swept-hash"});
  CHECK(on_primary == std::set<std::string>{"0 expired swept", "3 expired swept-hash"});
  CHECK(Run(r, {"EXISTS", "swept"}) == "int:0");
  CHECK(Run(r, {"DBSIZE"}) == "int:0");
  ExpectNothingMore(r, sub);
  ExpectNothingMore(p, primary_sub);
}

TEST_CASE("blocked clients on a replica are served by replicated writes",
          "[replication][blocking]") {
  TestServer primary;
  TestServer replica(ReplicaArgs(primary));
  Client p(primary.port());
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));

  // XREAD BLOCK reads: served on a read-only replica by the primary's XADD.
  Client reader(replica.port());
  Send(reader, {"XREAD", "BLOCK", "0", "STREAMS", "s", "$"});
  WaitBlocked(r, 1);
  REQUIRE(Run(p, {"XADD", "s", "5-1", "f", "v"}) == "bulk:5-1");
  Reply got;
  REQUIRE(reader.GetReply(&got));
  CHECK(Describe(got) == "[[bulk:s, [[bulk:5-1, [bulk:f, bulk:v]]]]]");

  // A blocking pop is a write: refused on a read-only replica, as Redis.
  CHECK(Run(r, {"BLPOP", "l", "0"}) == "err:READONLY You can't write against a read only replica.");

  // replica-read-only no: the pop runs on the replica (its own copy only, as Redis's).
  REQUIRE(Run(r, {"CONFIG", "SET", "replica-read-only", "no"}) == "status:OK");
  Client popper(replica.port());
  Send(popper, {"BLPOP", "l", "0"});
  WaitBlocked(r, 1);
  REQUIRE(Run(p, {"RPUSH", "l", "x", "y"}) == "int:2");
  REQUIRE(popper.GetReply(&got));
  CHECK(Describe(got) == "[bulk:l, bulk:x]");
  CHECK(Run(r, {"LRANGE", "l", "0", "-1"}) == "[bulk:y]");
  CHECK(Run(p, {"LRANGE", "l", "0", "-1"}) == "[bulk:x, bulk:y]");
}

TEST_CASE("a replica sends tracking invalidations for replicated writes",
          "[replication][tracking]") {
  TestServer primary;
  TestServer replica(ReplicaArgs(primary));
  Client p(primary.port());
  Client r(replica.port());
  REQUIRE(Run(p, {"SET", "k", "1"}) == "status:OK");
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  Client sub(replica.port());
  const Reply id = sub.Command({"CLIENT", "ID"});
  sub.Append({"SUBSCRIBE", "__redis__:invalidate"});
  Reply got;
  REQUIRE(sub.GetReply(&got));
  REQUIRE(Run(r, {"CLIENT", "TRACKING", "on", "REDIRECT", std::to_string(id.integer)}) ==
          "status:OK");
  REQUIRE(Run(r, {"GET", "k"}) == "bulk:1");
  REQUIRE(Run(p, {"SET", "k", "2"}) == "status:OK");
  REQUIRE(sub.GetReply(&got));
  CHECK(Describe(got) == "[bulk:message, bulk:__redis__:invalidate, [bulk:k]]");
  CHECK(Run(r, {"GET", "k"}) == "bulk:2");
}

TEST_CASE("clients blocked on a primary that becomes a replica get -UNBLOCKED",
          "[replication][blocking]") {
  TestServer primary;
  TestServer other;
  Client o(other.port());
  Client blocked(other.port());
  Send(blocked, {"BLPOP", "l", "0"});
  WaitBlocked(o, 1);
  REQUIRE(Run(o, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}) == "status:OK");
  Reply got;
  REQUIRE(blocked.GetReply(&got));
  CHECK(Describe(got) ==
        "err:UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
        "replica?)");
  Client p(primary.port());
  REQUIRE(Run(p, {"RPUSH", "l", "x"}) == "int:1");
  REQUIRE(WaitCaughtUp(p, o, primary, other));
  CHECK(Run(o, {"LRANGE", "l", "0", "-1"}) == "[bulk:x]");  // nobody popped it on the replica
}

TEST_CASE("a replica runs its primary's functions: after a full sync and as they change",
          "[replication][scripting]") {
  TestServer primary;
  Client p(primary.port());
  const std::string lib1 =
      "#!lua name=lib1\nredis.register_function{function_name='get1', callback=function(keys) "
      "return redis.call('GET', keys[1]) end, flags={'no-writes'}}";
  const std::string lib2 =
      "#!lua name=lib2\nredis.register_function{function_name='two', callback=function() "
      "return 2 end, flags={'no-writes'}}";
  REQUIRE(Run(p, {"FUNCTION", "LOAD", lib1}) == "bulk:lib1");
  REQUIRE(Run(p, {"SET", "k", "v"}) == "status:OK");

  TestServer replica(ReplicaArgs(primary));
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  CHECK(Run(r, {"FCALL_RO", "get1", "1", "k"}) == "bulk:v");  // loaded with the full sync

  REQUIRE(Run(p, {"FUNCTION", "LOAD", lib2}) == "bulk:lib2");
  REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
  CHECK(Run(r, {"FCALL_RO", "two", "0"}) == "int:2");
  CHECK(Run(r, {"FUNCTION", "LOAD", lib2}) ==
        "err:READONLY You can't write against a read only replica.");

  REQUIRE(Run(p, {"FUNCTION", "DELETE", "lib1"}) == "status:OK");
  REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
  CHECK(Run(r, {"FCALL_RO", "get1", "1", "k"}) == "err:ERR Function not found");
  CHECK(Run(r, {"FCALL_RO", "two", "0"}) == "int:2");

  REQUIRE(Run(p, {"FUNCTION", "FLUSH"}) == "status:OK");
  REQUIRE(Run(p, {"WAIT", "1", "5000"}) == "int:1");
  CHECK(Run(r, {"FUNCTION", "LIST"}) == "[]");
}

}  // namespace replication_effects_test
