// Stream consumer groups and XREAD over the real server ([stream][group]): blocking XREAD and
// XREADGROUP served by XADD from another connection, inside MULTI/EXEC and inside a script, the
// timeout's null reply, CLIENT UNBLOCK, the errors of a blocked group reader whose group or
// stream goes away; 10 consumers of one group sharing 10,000 entries with each delivered exactly
// once; XCLAIM of a dead consumer's entries; and the PEL after kill -9 (every acknowledged
// delivery and XACK survives).
#include <hiredis/hiredis.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::NowMs;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::Send;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace stream_group_test {

namespace {

std::string Next(Client& c) {
  Reply r;
  REQUIRE(c.GetReply(&r));
  return Describe(r);
}

long long BlockedClients(Client& admin) {
  return std::stoll(InfoFields(InfoText(admin, "clients"))["blocked_clients"]);
}

void WaitBlocked(Client& admin, long long n) {
  long long deadline = NowMs() + 20000;
  while (BlockedClients(admin) != n && NowMs() < deadline) SleepMs(2);
  REQUIRE(BlockedClients(admin) == n);
}

}  // namespace

TEST_CASE("XREAD BLOCK is served by XADD from another connection, MULTI/EXEC and a script",
          "[stream][group][blocking]") {
  TestServer server({"--net-threads", "2"});
  Client admin(server.port());
  Client reader(server.port(), 30000);
  CHECK(Run(admin, {"XADD", "s", "1-1", "a", "1"}) == "bulk:1-1");
  // Data already there: answered at once.
  CHECK(Run(reader, {"XREAD", "BLOCK", "0", "STREAMS", "s", "0"}) ==
        "[[bulk:s, [[bulk:1-1, [bulk:a, bulk:1]]]]]");
  // `$`: only what arrives after the call.
  Send(reader, {"XREAD", "BLOCK", "0", "STREAMS", "nothere", "s", "$", "$"});
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"XADD", "s", "2-1", "b", "2"}) == "bulk:2-1");
  CHECK(Next(reader) == "[[bulk:s, [[bulk:2-1, [bulk:b, bulk:2]]]]]");
  // Inside MULTI/EXEC.
  Send(reader, {"XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "$"});
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"MULTI"}) == "status:OK");
  CHECK(Run(admin, {"XADD", "s", "3-1", "c", "3"}) == "status:QUEUED");
  CHECK(Run(admin, {"XADD", "s", "3-2", "d", "4"}) == "status:QUEUED");
  CHECK(Run(admin, {"EXEC"}) == "[bulk:3-1, bulk:3-2]");
  CHECK(Next(reader) == "[[bulk:s, [[bulk:3-1, [bulk:c, bulk:3]]]]]");
  // Inside a script.
  Send(reader, {"XREAD", "BLOCK", "0", "STREAMS", "s", "$"});
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"EVAL", "return redis.call('XADD', KEYS[1], '4-1', 'e', '5')", "1", "s"}) ==
        "bulk:4-1");
  CHECK(Next(reader) == "[[bulk:s, [[bulk:4-1, [bulk:e, bulk:5]]]]]");
  // A timeout answers the null array; BLOCK inside MULTI does not block.
  long long t0 = NowMs();
  CHECK(Run(reader, {"XREAD", "BLOCK", "100", "STREAMS", "s", "$"}) == "nil");
  CHECK(NowMs() - t0 >= 90);
  CHECK(Run(reader, {"MULTI"}) == "status:OK");
  CHECK(Run(reader, {"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}) == "status:QUEUED");
  CHECK(Run(reader, {"EXEC"}) == "[nil]");
  // A script may call XREAD, not with BLOCK.
  CHECK(Run(admin, {"EVAL", "return #redis.call('XREAD', 'STREAMS', KEYS[1], '0')", "1", "s"}) ==
        "int:1");
  CHECK(Describe(admin.Command({"EVAL",
                                "return redis.call('XREAD', 'BLOCK', '1', 'STREAMS', KEYS[1], '0')",
                                "1", "s"}))
            .find("command is not allowed with BLOCK option from scripts") != std::string::npos);
  // CLIENT UNBLOCK: the timeout's reply, or the error.
  std::string id = std::to_string(reader.Command({"CLIENT", "ID"}).integer);
  Send(reader, {"XREAD", "BLOCK", "0", "STREAMS", "s", "$"});
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"CLIENT", "UNBLOCK", id}) == "int:1");
  CHECK(Next(reader) == "nil");
  Send(reader, {"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"});
  CHECK(Next(reader).find("NOGROUP") != std::string::npos);
  CHECK(Run(admin, {"XGROUP", "CREATE", "s", "g", "$"}) == "status:OK");
  Send(reader, {"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"});
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"CLIENT", "UNBLOCK", id, "ERROR"}) == "int:1");
  CHECK(Next(reader) == "err:UNBLOCKED client unblocked via CLIENT UNBLOCK");
  CHECK(BlockedClients(admin) == 0);
}

TEST_CASE("blocked XREADGROUP: served by XADD into the PEL; woken by DESTROY and DEL",
          "[stream][group][blocking]") {
  TestServer server({"--net-threads", "2"});
  Client admin(server.port());
  Client a(server.port(), 30000), b(server.port(), 30000);
  CHECK(Run(admin, {"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}) == "status:OK");
  Send(a, {"XREADGROUP", "GROUP", "g", "ca", "BLOCK", "0", "STREAMS", "s", ">"});
  WaitBlocked(admin, 1);  // a blocks first: waiters are served in the order they blocked
  Send(b, {"XREADGROUP", "GROUP", "g", "cb", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"});
  WaitBlocked(admin, 2);
  // As Redis 7.0, a consumer is created when it is served, not while it waits.
  CHECK(Run(admin, {"XINFO", "GROUPS", "s"}).find("bulk:consumers, int:0") != std::string::npos);
  // One entry serves the first waiter only; the second keeps waiting (exactly once).
  CHECK(Run(admin, {"XADD", "s", "1-1", "f", "v"}) == "bulk:1-1");
  CHECK(Next(a) == "[[bulk:s, [[bulk:1-1, [bulk:f, bulk:v]]]]]");
  SleepMs(50);
  CHECK(BlockedClients(admin) == 1);
  CHECK(Run(admin, {"XADD", "s", "2-1", "f", "w"}) == "bulk:2-1");
  CHECK(Next(b) == "[[bulk:s, [[bulk:2-1, [bulk:f, bulk:w]]]]]");
  Reply pending = admin.Command({"XPENDING", "s", "g", "-", "+", "10"});
  REQUIRE(pending.elements.size() == 2);
  CHECK(pending.elements[0].elements[1].str == "ca");
  CHECK(pending.elements[1].elements[1].str == "cb");
  // The group goes: NOGROUP; the stream goes: UNBLOCKED.
  Send(a, {"XREADGROUP", "GROUP", "g", "ca", "BLOCK", "0", "STREAMS", "s", ">"});
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"XGROUP", "DESTROY", "s", "g"}) == "int:1");
  CHECK(Next(a) == "err:NOGROUP the consumer group this client was blocked on no longer exists");
  CHECK(Run(admin, {"XGROUP", "CREATE", "s", "g", "$"}) == "status:OK");
  Send(a, {"XREADGROUP", "GROUP", "g", "ca", "BLOCK", "0", "STREAMS", "s", ">"});
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"DEL", "s"}) == "int:1");
  CHECK(Next(a) == "err:UNBLOCKED the stream key no longer exists");
  // FLUSHDB / FLUSHALL too.
  for (const char* flush : {"FLUSHDB", "FLUSHALL"}) {
    CHECK(Run(admin, {"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}) == "status:OK");
    Send(a, {"XREADGROUP", "GROUP", "g", "ca", "BLOCK", "0", "STREAMS", "s", ">"});
    WaitBlocked(admin, 1);
    CHECK(Run(admin, {flush}) == "status:OK");
    CHECK(Next(a) == "err:UNBLOCKED the stream key no longer exists");
  }
  // A plain XREAD keeps waiting when its key is deleted.
  Send(a, {"XREAD", "BLOCK", "200", "STREAMS", "s", "$"});
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"DEL", "s"}) == "int:0");
  CHECK(Next(a) == "nil");
}

TEST_CASE("10 consumers of one group share 10,000 entries, each delivered exactly once",
          "[stream][group][concurrency]") {
  TestServer server({"--net-threads", "2"});
  Client admin(server.port());
  CHECK(Run(admin, {"XGROUP", "CREATE", "q", "g", "$", "MKSTREAM"}) == "status:OK");
  const int kEntries = 10000, kConsumers = 10;
  std::atomic<int> acked{0};
  std::mutex mu;
  std::map<std::string, std::string> owner;  // id -> consumer
  std::vector<std::string> errors;
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c) {
    consumers.emplace_back([&, c] {
      Client me(server.port(), 30000);
      const std::string name = "c" + std::to_string(c);
      while (acked.load() < kEntries) {
        Reply r;
        if (!me.TryCommand({"XREADGROUP", "GROUP", "g", name, "COUNT", "20", "BLOCK", "100",
                            "STREAMS", "q", ">"},
                           &r) ||
            r.is_error()) {
          std::lock_guard<std::mutex> lock(mu);
          errors.push_back(name + ": " + Describe(r));
          return;
        }
        if (r.is_nil()) continue;
        std::vector<std::string> ids;
        for (const auto& entry : r.elements[0].elements[1].elements) {
          ids.push_back(entry.elements[0].str);
        }
        {
          std::lock_guard<std::mutex> lock(mu);
          for (const auto& id : ids) {
            if (!owner.emplace(id, name).second) errors.push_back("delivered twice: " + id);
          }
        }
        std::vector<std::string> ack = {"XACK", "q", "g"};
        ack.insert(ack.end(), ids.begin(), ids.end());
        Reply n;
        if (!me.TryCommand(ack, &n) || n.integer != static_cast<long long>(ids.size())) {
          std::lock_guard<std::mutex> lock(mu);
          errors.push_back(name + " XACK: " + Describe(n));
          return;
        }
        acked += static_cast<int>(ids.size());
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p) {
    producers.emplace_back([&, p] {
      Client me(server.port(), 30000);
      for (int i = 0; i < kEntries / 4; ++i) {
        Reply r;
        if (!me.TryCommand({"XADD", "q", "*", "p", std::to_string(p), "i", std::to_string(i)},
                           &r) ||
            r.type != REDIS_REPLY_STRING) {
          std::lock_guard<std::mutex> lock(mu);
          errors.push_back("XADD: " + Describe(r));
          return;
        }
      }
    });
  }
  for (auto& t : producers) t.join();
  for (auto& t : consumers) t.join();
  for (const auto& e : errors) FAIL_CHECK(e);
  CHECK(owner.size() == static_cast<size_t>(kEntries));
  std::set<std::string> used;
  for (const auto& [id, name] : owner) used.insert(name);
  CHECK(used.size() > 1);  // the work was shared
  CHECK(Run(admin, {"XPENDING", "q", "g"}) == "[int:0, nil, nil, nil]");
  CHECK(Run(admin, {"XLEN", "q"}) == "int:" + std::to_string(kEntries));
}

TEST_CASE("XCLAIM and XAUTOCLAIM move a dead consumer's entries; the PEL survives kill -9",
          "[stream][group][durability]") {
  TestServer server;
  {
    Client c(server.port());
    for (int i = 1; i <= 100; ++i) {
      REQUIRE(Run(c, {"XADD", "q", std::to_string(i) + "-0", "n", std::to_string(i)}) ==
              "bulk:" + std::to_string(i) + "-0");
    }
    CHECK(Run(c, {"XGROUP", "CREATE", "q", "g", "0"}) == "status:OK");
    // "dead" takes 30 entries and never acks; "live" takes 70 and acks half of them.
    Reply dead =
        c.Command({"XREADGROUP", "GROUP", "g", "dead", "COUNT", "30", "STREAMS", "q", ">"});
    REQUIRE(dead.elements[0].elements[1].elements.size() == 30);
    Reply live = c.Command({"XREADGROUP", "GROUP", "g", "live", "STREAMS", "q", ">"});
    REQUIRE(live.elements[0].elements[1].elements.size() == 70);
    std::vector<std::string> ack = {"XACK", "q", "g"};
    for (int i = 31; i <= 100; i += 2) ack.push_back(std::to_string(i) + "-0");
    CHECK(Run(c, ack) == "int:35");
    // XCLAIM of two of dead's entries (min-idle 0), then XAUTOCLAIM of the next ten.
    CHECK(Run(c, {"XCLAIM", "q", "g", "rescuer", "0", "1-0", "2-0", "JUSTID"}) ==
          "[bulk:1-0, bulk:2-0]");
    Reply autoclaim =
        c.Command({"XAUTOCLAIM", "q", "g", "rescuer", "0", "3-0", "COUNT", "10", "JUSTID"});
    REQUIRE(autoclaim.elements.size() == 3);
    CHECK(autoclaim.elements[0].str == "13-0");
    CHECK(autoclaim.elements[1].elements.size() == 10);
  }
  server.Kill9();
  server.Restart();
  Client c(server.port(), 30000);
  // 30 (dead) + 35 (live, unacked) pending; dead has 18, rescuer 12, live 35.
  CHECK(Run(c, {"XPENDING", "q", "g"}) ==
        "[int:65, bulk:1-0, bulk:100-0, [[bulk:dead, bulk:18], [bulk:live, bulk:35], "
        "[bulk:rescuer, bulk:12]]]");
  Reply mine = c.Command({"XREADGROUP", "GROUP", "g", "rescuer", "STREAMS", "q", "0"});
  REQUIRE(mine.elements[0].elements[1].elements.size() == 12);
  CHECK(mine.elements[0].elements[1].elements[0].elements[0].str == "1-0");
  Reply info = c.Command({"XINFO", "GROUPS", "q"});
  REQUIRE(info.elements.size() == 1);
  CHECK(Describe(info).find("bulk:last-delivered-id, bulk:100-0, bulk:entries-read, int:100, "
                            "bulk:lag, int:0") != std::string::npos);
  // Acks after the restart continue from the same PEL.
  CHECK(Run(c, {"XACK", "q", "g", "1-0", "2-0", "31-0", "32-0"}) == "int:3");
  CHECK(Run(c, {"XPENDING", "q", "g", "-", "+", "1"}).find("bulk:3-0") != std::string::npos);
}

}  // namespace stream_group_test
