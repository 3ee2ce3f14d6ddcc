// Keyspace events `new` (n) and `keymiss` (m), which "A" does not include (Redis 7): emitted as
// Redis does, in the same order, from workers, from EXEC, and from the network thread when the
// cache answers a miss from a negative entry.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using namespace rockcache::testing;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace notify_test {

namespace {

// The next event a client subscribed to __keyevent@0__:* receives, as "event key".
std::string NextEvent(Client& sub) {
  Reply r;
  REQUIRE(sub.GetReply(&r));
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  REQUIRE(r.elements.size() == 4);
  std::string channel = r.elements[2].str;
  return channel.substr(channel.find("__:") + 3) + " " + r.elements[3].str;
}

// Publishes a marker on the event channels and checks it is the next thing `sub` sees: nothing
// else was published before it.
void ExpectNothingMore(Client& c, Client& sub) {
  REQUIRE(Run(c, {"PUBLISH", "__keyevent@0__:marker", "end"}) == "int:1");
  CHECK(NextEvent(sub) == "marker end");
}

}  // namespace

TEST_CASE("new and keymiss events: only with n and m, in Redis's order", "[pubsub][notify]") {
  TestServer server;
  Client c(server.port());
  Client sub(server.port());
  sub.Append({"PSUBSCRIBE", "__keyevent@0__:*"});
  Reply r;
  REQUIRE(sub.GetReply(&r));

  // "A" covers neither.
  REQUIRE(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "KEA"}) == "status:OK");
  CHECK(Run(c, {"SET", "a0", "1"}) == "status:OK");
  CHECK(NextEvent(sub) == "set a0");
  CHECK(Run(c, {"GET", "missing"}) == "nil");
  ExpectNothingMore(c, sub);

  REQUIRE(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "KEAnm"}) == "status:OK");
  // Printed as Redis 7.0 prints it ("A" hides `n`); `n` stays on, as in Redis.
  CHECK(Run(c, {"CONFIG", "GET", "notify-keyspace-events"}) ==
        "[bulk:notify-keyspace-events, bulk:AKEm]");
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(NextEvent(sub) == "new a");
  CHECK(NextEvent(sub) == "set a");
  CHECK(Run(c, {"SET", "a", "2"}) == "status:OK");  // an overwrite: no `new`
  CHECK(NextEvent(sub) == "set a");
  CHECK(Run(c, {"RPUSH", "l", "x", "y"}) == "int:2");
  CHECK(NextEvent(sub) == "new l");
  CHECK(NextEvent(sub) == "rpush l");
  CHECK(Run(c, {"RENAME", "l", "a"}) == "status:OK");  // Redis re-adds the destination: `new`
  CHECK(NextEvent(sub) == "new a");
  CHECK(NextEvent(sub) == "rename_from l");
  CHECK(NextEvent(sub) == "rename_to a");

  // Misses: a read command's missing keys, in order; a write's source keys; not its target.
  CHECK(Run(c, {"MGET", "a", "x1", "x2"}) == "[nil, nil, nil]");  // a is a list now
  CHECK(NextEvent(sub) == "keymiss x1");
  CHECK(NextEvent(sub) == "keymiss x2");
  CHECK(Run(c, {"SINTERSTORE", "dst", "s1", "s2"}) == "int:0");
  CHECK(NextEvent(sub) == "keymiss s1");
  CHECK(NextEvent(sub) == "keymiss s2");
  CHECK(Run(c, {"LPUSHX", "nolist", "v"}) == "int:0");  // a write's lookup: no keymiss
  CHECK(Run(c, {"OBJECT", "ENCODING", "nokey"}) == "nil");
  ExpectNothingMore(c, sub);

  // The negative cache: the second GET of a missing key is answered by the network thread.
  const auto rtc_before = InfoFields(InfoText(c, "stats"))["rtc_answers"];
  CHECK(Run(c, {"GET", "neg"}) == "nil");
  CHECK(NextEvent(sub) == "keymiss neg");
  CHECK(Run(c, {"GET", "neg"}) == "nil");
  CHECK(NextEvent(sub) == "keymiss neg");
  CHECK(Run(c, {"EXISTS", "neg"}) == "int:0");
  CHECK(NextEvent(sub) == "keymiss neg");
  CHECK(InfoFields(InfoText(c, "stats"))["rtc_answers"] != rtc_before);

  // Inside EXEC: its reads see its own writes (no keymiss for t after SET t).
  c.Append({"MULTI"});
  c.Append({"GET", "t"});
  c.Append({"SET", "t", "1"});
  c.Append({"INCR", "t"});
  c.Append({"GET", "t"});
  c.Append({"EXEC"});
  for (int i = 0; i < 5; ++i) REQUIRE(c.GetReply(&r));
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "[nil, status:OK, int:2, bulk:2]");
  CHECK(NextEvent(sub) == "keymiss t");
  CHECK(NextEvent(sub) == "new t");
  CHECK(NextEvent(sub) == "set t");
  CHECK(NextEvent(sub) == "incrby t");

  // MOVE and COPY ... DB announce the key in the destination database (db 0 events only here).
  CHECK(Run(c, {"COPY", "t", "t2"}) == "int:1");
  CHECK(NextEvent(sub) == "new t2");
  CHECK(NextEvent(sub) == "copy_to t2");
  CHECK(Run(c, {"MOVE", "t2", "1"}) == "int:1");
  CHECK(NextEvent(sub) == "move_from t2");
  ExpectNothingMore(c, sub);

  // Only `m`: misses but no other event.
  REQUIRE(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "Em"}) == "status:OK");
  CHECK(Run(c, {"SET", "b", "1"}) == "status:OK");
  CHECK(Run(c, {"HGET", "nohash", "f"}) == "nil");
  CHECK(NextEvent(sub) == "keymiss nohash");
  // Only `n`: creations but not the commands' own events.
  REQUIRE(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "En"}) == "status:OK");
  CHECK(Run(c, {"SADD", "newset", "m"}) == "int:1");
  CHECK(NextEvent(sub) == "new newset");
  CHECK(Run(c, {"SADD", "newset", "n"}) == "int:1");
  CHECK(Run(c, {"GET", "nokey"}) == "nil");
  ExpectNothingMore(c, sub);
}

TEST_CASE("blocking pops emit Redis's events, at once and when served after a wait",
          "[pubsub][notify][blocking]") {
  TestServer server;
  Client c(server.port());
  Client blocked(server.port());
  Client sub(server.port());
  sub.Append({"PSUBSCRIBE", "__keyevent@0__:*"});
  Reply r;
  REQUIRE(sub.GetReply(&r));
  REQUIRE(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "KEAn"}) == "status:OK");
  // Blocks `blocked` with `cmd`, then runs `push` on c; `reply` is what `blocked` gets.
  auto served = [&](const std::vector<std::string>& cmd, const std::vector<std::string>& push,
                    const std::string& reply) {
    blocked.Append(cmd);
    for (int done = 0; !done;) REQUIRE(redisBufferWrite(blocked.context(), &done) == REDIS_OK);
    for (int i = 0; i < 500 && InfoFields(InfoText(c, "clients"))["blocked_clients"] != "1"; ++i) {
      SleepMs(5);
    }
    REQUIRE(InfoFields(InfoText(c, "clients"))["blocked_clients"] == "1");
    c.Command(push);
    Reply got;
    REQUIRE(blocked.GetReply(&got));
    CHECK(Describe(got) == reply);
  };

  // At once: as LMOVE (push on the destination first; `new` for a destination it creates).
  REQUIRE(Run(c, {"RPUSH", "src", "a", "b"}) == "int:2");
  CHECK(NextEvent(sub) == "new src");
  CHECK(NextEvent(sub) == "rpush src");
  CHECK(Run(c, {"BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"}) == "bulk:b");
  CHECK(NextEvent(sub) == "new dst");
  CHECK(NextEvent(sub) == "lpush dst");
  CHECK(NextEvent(sub) == "rpop src");
  CHECK(Run(c, {"BRPOPLPUSH", "src", "dst", "0"}) == "bulk:a");
  CHECK(NextEvent(sub) == "lpush dst");
  CHECK(NextEvent(sub) == "rpop src");
  CHECK(NextEvent(sub) == "del src");
  CHECK(Run(c, {"BLPOP", "dst", "0"}) == "[bulk:dst, bulk:a]");
  CHECK(NextEvent(sub) == "lpop dst");
  REQUIRE(Run(c, {"ZADD", "z", "1", "m"}) == "int:1");
  CHECK(NextEvent(sub) == "new z");
  CHECK(NextEvent(sub) == "zadd z");
  CHECK(Run(c, {"BZPOPMAX", "z", "0"}) == "[bulk:z, bulk:m, bulk:1]");
  CHECK(NextEvent(sub) == "zpopmax z");
  CHECK(NextEvent(sub) == "del z");
  ExpectNothingMore(c, sub);

  // Served after a wait: the pusher's events, then the waiter's, as Redis 7.0.
  served({"BLMOVE", "q", "qdst", "LEFT", "LEFT", "0"}, {"RPUSH", "q", "x"}, "bulk:x");
  CHECK(NextEvent(sub) == "new q");
  CHECK(NextEvent(sub) == "rpush q");
  CHECK(NextEvent(sub) == "new qdst");
  CHECK(NextEvent(sub) == "lpush qdst");
  CHECK(NextEvent(sub) == "lpop q");
  CHECK(NextEvent(sub) == "del q");
  served({"BRPOPLPUSH", "q2", "qdst", "0"}, {"LPUSH", "q2", "y", "z"}, "bulk:y");
  CHECK(NextEvent(sub) == "new q2");
  CHECK(NextEvent(sub) == "lpush q2");
  CHECK(NextEvent(sub) == "lpush qdst");
  CHECK(NextEvent(sub) == "rpop q2");
  served({"BLPOP", "q3", "0"}, {"LPUSH", "q3", "y"}, "[bulk:q3, bulk:y]");
  CHECK(NextEvent(sub) == "new q3");
  CHECK(NextEvent(sub) == "lpush q3");
  CHECK(NextEvent(sub) == "lpop q3");
  CHECK(NextEvent(sub) == "del q3");
  served({"BZPOPMIN", "z3", "0"}, {"ZADD", "z3", "1", "y", "2", "w"}, "[bulk:z3, bulk:y, bulk:1]");
  CHECK(NextEvent(sub) == "new z3");
  CHECK(NextEvent(sub) == "zadd z3");
  CHECK(NextEvent(sub) == "zpopmin z3");
  served({"BLMPOP", "0", "1", "q4", "RIGHT", "COUNT", "5"}, {"RPUSH", "q4", "1", "2", "3"},
         "[bulk:q4, [bulk:3, bulk:2, bulk:1]]");
  CHECK(NextEvent(sub) == "new q4");
  CHECK(NextEvent(sub) == "rpush q4");
  CHECK(NextEvent(sub) == "rpop q4");
  CHECK(NextEvent(sub) == "del q4");
  ExpectNothingMore(c, sub);
}

}  // namespace notify_test
