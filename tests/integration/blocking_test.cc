// Blocking pops (BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP): replies
// and errors as redis-server 7.0 gives them, fractional timeouts, FIFO service, exactly-once
// service of many waiters by pushes from other loops, disconnects that lose nothing, BLMOVE
// chains, CLIENT UNBLOCK, INFO blocked_clients, the `b` flag, and a server that keeps serving
// other clients while many are blocked on a single worker.
#include <hiredis/hiredis.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Contains;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::kSyntax;
using rockcache::testing::kWrongType;
using rockcache::testing::NowMs;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::Send;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace blocking_test {

namespace {

const char kNotFloat[] = "err:ERR timeout is not a float or out of range";
const char kNegative[] = "err:ERR timeout is negative";

std::string Next(Client& c) {
  Reply r;
  REQUIRE(c.GetReply(&r));
  return Describe(r);
}

long long BlockedClients(Client& admin) {
  return std::stoll(InfoFields(InfoText(admin, "clients"))["blocked_clients"]);
}

// Waits (up to 20 s) until INFO reports `n` blocked clients.
void WaitBlocked(Client& admin, long long n) {
  long long deadline = NowMs() + 20000;
  while (BlockedClients(admin) != n && NowMs() < deadline) SleepMs(2);
  REQUIRE(BlockedClients(admin) == n);
}

std::vector<std::unique_ptr<Client>> Clients(int port, int n) {
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < n; ++i) {
    clients.push_back(std::make_unique<Client>(port, 30000));
    REQUIRE(clients.back()->connected());
  }
  return clients;
}

}  // namespace

TEST_CASE("blocking pops answer at once when there is data", "[blocking]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"RPUSH", "l", "a", "b", "c", "d", "e"}) == "int:5");
  CHECK(Run(c, {"BLPOP", "nokey", "l", "0"}) == "[bulk:l, bulk:a]");
  CHECK(Run(c, {"BRPOP", "l", "nokey", "0"}) == "[bulk:l, bulk:e]");
  CHECK(Run(c, {"BRPOPLPUSH", "l", "m", "0"}) == "bulk:d");
  CHECK(Run(c, {"BLMOVE", "l", "m", "LEFT", "RIGHT", "0"}) == "bulk:b");
  CHECK(Run(c, {"LRANGE", "m", "0", "-1"}) == "[bulk:d, bulk:b]");
  CHECK(Run(c, {"BLMPOP", "0", "2", "nokey", "m", "RIGHT", "COUNT", "5"}) ==
        "[bulk:m, [bulk:b, bulk:d]]");
  CHECK(Run(c, {"BLMPOP", "0", "1", "l", "LEFT"}) == "[bulk:l, [bulk:c]]");
  CHECK(Run(c, {"EXISTS", "l", "m"}) == "int:0");

  CHECK(Run(c, {"ZADD", "z", "1", "a", "2", "b", "3", "c", "4.5", "d"}) == "int:4");
  CHECK(Run(c, {"BZPOPMIN", "nokey", "z", "0"}) == "[bulk:z, bulk:a, bulk:1]");
  CHECK(Run(c, {"BZPOPMAX", "z", "0"}) == "[bulk:z, bulk:d, bulk:4.5]");
  CHECK(Run(c, {"BZMPOP", "0", "1", "z", "MIN", "COUNT", "1"}) == "[bulk:z, [[bulk:b, bulk:2]]]");
  CHECK(Run(c, {"BZMPOP", "0", "1", "z", "MAX"}) == "[bulk:z, [[bulk:c, bulk:3]]]");
  CHECK(Run(c, {"EXISTS", "z"}) == "int:0");

  CHECK(Run(c, {"SET", "s", "v"}) == "status:OK");
  CHECK(Run(c, {"BLPOP", "nokey", "s", "0"}) == kWrongType);
  CHECK(Run(c, {"BZPOPMIN", "s", "0"}) == kWrongType);
  CHECK(Run(c, {"BLMOVE", "s", "m", "LEFT", "LEFT", "0"}) == kWrongType);
  CHECK(Run(c, {"BLMPOP", "0", "1", "s", "LEFT"}) == kWrongType);
  CHECK(Run(c, {"BZMPOP", "0", "1", "s", "MIN"}) == kWrongType);
  CHECK(Run(c, {"RPUSH", "l", "x"}) == "int:1");
  CHECK(Run(c, {"BLMOVE", "l", "s", "LEFT", "LEFT", "0"}) == kWrongType);
  CHECK(Run(c, {"LLEN", "l"}) == "int:1");  // nothing popped
}

TEST_CASE("blocking pop argument errors are Redis's", "[blocking]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"BLPOP", "k"}) == "err:ERR wrong number of arguments for 'blpop' command");
  CHECK(Run(c, {"BLPOP", "k", "abc"}) == kNotFloat);
  CHECK(Run(c, {"BLPOP", "k", ""}) == kNotFloat);
  CHECK(Run(c, {"BLPOP", "k", " 1"}) == kNotFloat);
  CHECK(Run(c, {"BLPOP", "k", "nan"}) == kNotFloat);
  CHECK(Run(c, {"BLPOP", "k", "1e5000"}) == kNotFloat);
  CHECK(Run(c, {"BLPOP", "k", "-1"}) == kNegative);
  CHECK(Run(c, {"BRPOP", "k", "-0.5"}) == kNegative);
  CHECK(Run(c, {"BLPOP", "k", "inf"}) == kNegative);
  CHECK(Run(c, {"BLPOP", "k", "1e16"}) == kNegative);  // past long long milliseconds
  CHECK(Run(c, {"BZPOPMIN", "k", "x"}) == kNotFloat);
  CHECK(Run(c, {"BRPOPLPUSH", "a", "b", "-1"}) == kNegative);
  CHECK(Run(c, {"BLMOVE", "a", "b", "UP", "LEFT", "x"}) == kSyntax);  // ends before timeout
  CHECK(Run(c, {"BLMOVE", "a", "b", "LEFT", "LEFT", "x"}) == kNotFloat);
  CHECK(Run(c, {"BLMPOP", "x", "0", "k", "LEFT"}) == kNotFloat);  // timeout before numkeys
  CHECK(Run(c, {"BLMPOP", "-1", "1", "k", "LEFT"}) == kNegative);
  CHECK(Run(c, {"BLMPOP", "0", "0", "k", "LEFT"}) == "err:ERR numkeys should be greater than 0");
  CHECK(Run(c, {"BLMPOP", "0", "x", "k", "LEFT"}) == "err:ERR numkeys should be greater than 0");
  CHECK(Run(c, {"BLMPOP", "0", "-1", "k", "LEFT"}) == "err:ERR numkeys should be greater than 0");
  CHECK(Run(c, {"BLMPOP", "0", "2", "k", "LEFT"}) == kSyntax);
  CHECK(Run(c, {"BLMPOP", "0", "1", "k", "MID"}) == kSyntax);
  CHECK(Run(c, {"BLMPOP", "0", "1", "k", "LEFT", "COUNT", "0"}) ==
        "err:ERR count should be greater than 0");
  CHECK(Run(c, {"BLMPOP", "0", "1", "k", "LEFT", "COUNT", "x"}) ==
        "err:ERR count should be greater than 0");
  CHECK(Run(c, {"BLMPOP", "0", "1", "k", "LEFT", "COUNT", "2", "COUNT", "3"}) == kSyntax);
  CHECK(Run(c, {"BLMPOP", "0", "1", "k", "LEFT", "FOO"}) == kSyntax);
  CHECK(Run(c, {"BLMPOP", "0", "1", "k"}) ==
        "err:ERR wrong number of arguments for 'blmpop' command");
  CHECK(Run(c, {"BZMPOP", "0", "1", "k", "MID"}) == kSyntax);
  CHECK(Run(c, {"BZMPOP", "0", "0", "k", "MIN"}) == "err:ERR numkeys should be greater than 0");
  CHECK(Run(c, {"BZMPOP", "0", "1", "k", "MIN", "COUNT", "-1"}) ==
        "err:ERR count should be greater than 0");
  CHECK(Run(c, {"CLIENT", "UNBLOCK", "x"}) == "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"CLIENT", "UNBLOCK", "1", "FOO"}) ==
        "err:ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
  CHECK(Run(c, {"CLIENT", "UNBLOCK", "99999"}) == "int:0");
  CHECK(Run(c, {"CLIENT", "UNBLOCK", "0", "ERROR"}) == "int:0");
  CHECK(Run(c, {"PING"}) == "status:PONG");  // no client was left blocked by the errors
  CHECK(BlockedClients(c) == 0);
}

TEST_CASE("fractional timeouts answer the null reply of each command", "[blocking]") {
  TestServer server;
  Client c(server.port());
  long long start = NowMs();
  CHECK(Run(c, {"BLPOP", "k1", "k2", "0.2"}) == "nil");
  CHECK(NowMs() - start >= 190);  // waited (a lower bound: load only makes it later)
  CHECK(Run(c, {"BRPOP", "k", "0.01"}) == "nil");
  CHECK(Run(c, {"BRPOPLPUSH", "a", "b", "0.01"}) == "nil");
  CHECK(Run(c, {"BLMOVE", "a", "b", "RIGHT", "LEFT", "0.001"}) == "nil");
  CHECK(Run(c, {"BLMPOP", "0.01", "1", "k", "LEFT"}) == "nil");
  CHECK(Run(c, {"BZPOPMIN", "z", "0.01"}) == "nil");
  CHECK(Run(c, {"BZPOPMAX", "z", "0.0001"}) == "nil");  // rounds up to 1 ms, not forever
  CHECK(Run(c, {"BZMPOP", "0.01", "1", "z", "MAX"}) == "nil");
  // The raw bytes: a null array, or a null bulk for the moves.
  RawConnection raw(server.port());
  raw.Send(Resp({"BLPOP", "k", "0.01"}) + Resp({"BLMOVE", "a", "b", "LEFT", "LEFT", "0.01"}));
  CHECK(raw.ReadExactly(10) == "*-1\r\n$-1\r\n");
  CHECK(BlockedClients(c) == 0);
}

TEST_CASE("a pipelined command after a blocking pop waits for it", "[blocking]") {
  TestServer server;
  Client admin(server.port());
  RawConnection raw(server.port());
  raw.Send(Resp({"BLPOP", "q", "0"}) + Resp({"LLEN", "q"}) + Resp({"PING"}));
  WaitBlocked(admin, 1);
  // The pusher's reply counts the element; the waiter pops it before anyone else runs.
  CHECK(Run(admin, {"RPUSH", "q", "x"}) == "int:1");
  const std::string expected = "*2\r\n$1\r\nq\r\n$1\r\nx\r\n:0\r\n+PONG\r\n";
  CHECK(raw.ReadExactly(expected.size()) == expected);
  CHECK(Run(admin, {"EXISTS", "q"}) == "int:0");
}

TEST_CASE("waiters are served in the order they blocked", "[blocking]") {
  TestServer server({"--net-threads", "2"});
  Client admin(server.port());
  auto waiters = Clients(server.port(), 4);
  for (size_t i = 0; i < waiters.size(); ++i) {
    Send(*waiters[i], {"BLPOP", "other" + std::to_string(i), "q", "0"});
    WaitBlocked(admin, static_cast<long long>(i + 1));
  }
  CHECK(Run(admin, {"RPUSH", "q", "a", "b", "c"}) == "int:3");
  CHECK(Next(*waiters[0]) == "[bulk:q, bulk:a]");
  CHECK(Next(*waiters[1]) == "[bulk:q, bulk:b]");
  CHECK(Next(*waiters[2]) == "[bulk:q, bulk:c]");
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"LPUSH", "other3", "d"}) == "int:1");
  CHECK(Next(*waiters[3]) == "[bulk:other3, bulk:d]");
  CHECK(BlockedClients(admin) == 0);
}

TEST_CASE("50 waiters on one list are each served exactly once by 50 pushes from other loops",
          "[blocking][concurrency]") {
  TestServer server({"--net-threads", "2"});
  Client admin(server.port());
  constexpr int kN = 50;
  auto waiters = Clients(server.port(), kN);
  for (auto& w : waiters) Send(*w, {"BLPOP", "jobs", "0"});
  WaitBlocked(admin, kN);
  auto pushers = Clients(server.port(), kN);
  for (int i = 0; i < kN; ++i) Send(*pushers[i], {"LPUSH", "jobs", "job" + std::to_string(i)});
  std::set<std::string> got;
  for (auto& w : waiters) {
    Reply r;
    REQUIRE(w->GetReply(&r));
    REQUIRE(r.elements.size() == 2);
    CHECK(r.elements[0].str == "jobs");
    got.insert(r.elements[1].str);
  }
  CHECK(got.size() == static_cast<size_t>(kN));  // no element twice, none missing
  for (auto& p : pushers) CHECK(Next(*p).rfind("int:", 0) == 0);
  CHECK(Run(admin, {"LLEN", "jobs"}) == "int:0");
  CHECK(BlockedClients(admin) == 0);
}

TEST_CASE("timeouts racing pushes lose and duplicate nothing", "[blocking][concurrency]") {
  TestServer server({"--net-threads", "2"});
  constexpr int kConsumers = 8, kPushers = 2, kPerPusher = 300;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::string> received;
  std::atomic<int> bad_replies{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kConsumers; ++i) {
    threads.emplace_back([&] {
      Client c(server.port(), 30000);
      std::vector<std::string> mine;
      while (!stop.load()) {
        Reply r;  // 1 ms timeouts: waits end by timeout and by service all the time
        if (!c.TryCommand({"BLPOP", "race", "0.001"}, &r)) return bad_replies.fetch_add(1), void();
        if (r.is_nil()) continue;
        if (r.elements.size() != 2) bad_replies.fetch_add(1);
        if (r.elements.size() == 2) mine.push_back(r.elements[1].str);
      }
      std::lock_guard<std::mutex> lock(mu);
      received.insert(received.end(), mine.begin(), mine.end());
    });
  }
  std::vector<std::thread> pushers;
  for (int p = 0; p < kPushers; ++p) {
    pushers.emplace_back([&, p] {
      Client c(server.port(), 30000);
      for (int i = 0; i < kPerPusher; ++i) {
        Reply r;
        if (!c.TryCommand({"RPUSH", "race", std::to_string(p) + ":" + std::to_string(i)}, &r) ||
            r.type != REDIS_REPLY_INTEGER) {
          bad_replies.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : pushers) t.join();
  stop.store(true);
  for (auto& t : threads) t.join();
  CHECK(bad_replies.load() == 0);
  Client c(server.port());
  Reply rest = c.Command({"LRANGE", "race", "0", "-1"});
  for (const auto& e : rest.elements) received.push_back(e.str);
  std::set<std::string> unique(received.begin(), received.end());
  CHECK(received.size() == static_cast<size_t>(kPushers * kPerPusher));  // none lost
  CHECK(unique.size() == received.size());                               // none twice
  CHECK(BlockedClients(c) == 0);
}

TEST_CASE("a waiter that disconnects loses nothing", "[blocking]") {
  TestServer server;
  Client admin(server.port());
  {
    RawConnection gone(server.port());
    gone.Send(Resp({"BLPOP", "q", "0"}));
    WaitBlocked(admin, 1);
  }
  WaitBlocked(admin, 0);
  CHECK(Run(admin, {"RPUSH", "q", "kept"}) == "int:1");
  CHECK(Run(admin, {"LRANGE", "q", "0", "-1"}) == "[bulk:kept]");
  CHECK(Run(admin, {"DEL", "q"}) == "int:1");

  // The next waiter gets the element the departed one would have had.
  auto first = std::make_unique<RawConnection>(server.port());
  first->Send(Resp({"BRPOP", "q", "0"}));
  WaitBlocked(admin, 1);
  Client second(server.port());
  Send(second, {"BRPOP", "q", "0"});
  WaitBlocked(admin, 2);
  first.reset();
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"RPUSH", "q", "x"}) == "int:1");
  CHECK(Next(second) == "[bulk:q, bulk:x]");
  CHECK(Run(admin, {"EXISTS", "q"}) == "int:0");
}

TEST_CASE("BLMOVE chains: each move serves the waiters of its destination", "[blocking]") {
  TestServer server({"--net-threads", "2"});
  Client admin(server.port());
  auto w = Clients(server.port(), 4);
  Send(*w[0], {"BLMOVE", "a", "b", "LEFT", "RIGHT", "0"});
  Send(*w[1], {"BRPOPLPUSH", "b", "c", "0"});
  Send(*w[2], {"BLMPOP", "0", "1", "c", "LEFT", "COUNT", "3"});
  Send(*w[3], {"BLMOVE", "d", "s", "LEFT", "LEFT", "0"});
  WaitBlocked(admin, 4);
  CHECK(Run(admin, {"RPUSH", "a", "x"}) == "int:1");
  CHECK(Next(*w[0]) == "bulk:x");
  CHECK(Next(*w[1]) == "bulk:x");
  CHECK(Next(*w[2]) == "[bulk:c, [bulk:x]]");
  CHECK(Run(admin, {"EXISTS", "a", "b", "c"}) == "int:0");
  // A destination of another type: WRONGTYPE for the waiter, the element stays.
  CHECK(Run(admin, {"SET", "s", "str"}) == "status:OK");
  CHECK(Run(admin, {"RPUSH", "d", "y"}) == "int:1");
  CHECK(Next(*w[3]) == kWrongType);
  CHECK(Run(admin, {"LRANGE", "d", "0", "-1"}) == "[bulk:y]");
  CHECK(BlockedClients(admin) == 0);
}

TEST_CASE("BZPOPMIN, BZPOPMAX and BZMPOP are served by ZADD", "[blocking]") {
  TestServer server;
  Client admin(server.port());
  auto w = Clients(server.port(), 4);
  Send(*w[0], {"BZPOPMIN", "z", "0"});
  WaitBlocked(admin, 1);
  Send(*w[1], {"BZPOPMAX", "z", "0"});
  WaitBlocked(admin, 2);
  Send(*w[2], {"BZMPOP", "0", "1", "z", "MIN", "COUNT", "10"});
  WaitBlocked(admin, 3);
  Send(*w[3], {"BLPOP", "z", "0"});  // waits for a list: a zset does not serve it
  WaitBlocked(admin, 4);
  CHECK(Run(admin, {"ZADD", "z", "5", "e", "1", "a", "3", "c", "4", "d", "2", "b"}) == "int:5");
  CHECK(Next(*w[0]) == "[bulk:z, bulk:a, bulk:1]");
  CHECK(Next(*w[1]) == "[bulk:z, bulk:e, bulk:5]");
  CHECK(Next(*w[2]) == "[bulk:z, [[bulk:b, bulk:2], [bulk:c, bulk:3], [bulk:d, bulk:4]]]");
  CHECK(Run(admin, {"EXISTS", "z"}) == "int:0");
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"ZINCRBY", "z2", "1", "m"}) == "bulk:1");
  CHECK(Run(admin, {"RPUSH", "z", "l"}) == "int:1");
  CHECK(Next(*w[3]) == "[bulk:z, bulk:l]");
}

TEST_CASE("every write that makes a key non-empty wakes its waiters", "[blocking]") {
  TestServer server;
  Client admin(server.port());
  Client w(server.port());
  auto served_by = [&](const std::vector<std::string>& write, const std::string& expected) {
    Send(w, {"BLPOP", "dst", "0"});
    WaitBlocked(admin, 1);
    CHECK(Describe(admin.Command(write)) != "");
    CHECK(Next(w) == expected);
    CHECK(Run(admin, {"DEL", "dst"}) == "int:0");  // the waiter took the only element
  };
  CHECK(Run(admin, {"RPUSH", "src", "a", "b", "c", "d"}) == "int:4");
  served_by({"LMOVE", "src", "dst", "LEFT", "LEFT"}, "[bulk:dst, bulk:a]");
  served_by({"RPOPLPUSH", "src", "dst"}, "[bulk:dst, bulk:d]");
  CHECK(Run(admin, {"RPUSH", "tmp", "r"}) == "int:1");
  served_by({"RENAME", "tmp", "dst"}, "[bulk:dst, bulk:r]");
  CHECK(Run(admin, {"RPUSH", "nums", "3", "1"}) == "int:2");
  Send(w, {"BRPOP", "dst", "0"});
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"SORT", "nums", "STORE", "dst"}) == "int:2");
  CHECK(Next(w) == "[bulk:dst, bulk:3]");
  CHECK(Run(admin, {"LRANGE", "dst", "0", "-1"}) == "[bulk:1]");
}

TEST_CASE("CLIENT UNBLOCK, INFO blocked_clients and the b flag", "[blocking]") {
  TestServer server({"--net-threads", "2"});
  Client admin(server.port());
  auto w = Clients(server.port(), 2);
  CHECK(Run(*w[0], {"CLIENT", "SETNAME", "w0"}) == "status:OK");
  std::string id0 = std::to_string(w[0]->Command({"CLIENT", "ID"}).integer);
  std::string id1 = std::to_string(w[1]->Command({"CLIENT", "ID"}).integer);
  CHECK(BlockedClients(admin) == 0);
  Send(*w[0], {"BLPOP", "q", "0"});
  Send(*w[1], {"BLMOVE", "q", "d", "LEFT", "LEFT", "0"});
  WaitBlocked(admin, 2);
  Reply list = admin.Command({"CLIENT", "LIST"});
  CHECK(Contains(list.str, "name=w0 "));
  CHECK(Contains(list.str, "id=" + id0 + " "));
  for (const auto& id : {id0, id1}) {
    Reply one = admin.Command({"CLIENT", "LIST", "ID", id});
    CHECK(Contains(one.str, " flags=b "));
  }
  CHECK(Contains(admin.Command({"CLIENT", "INFO"}).str, " flags=N "));

  CHECK(Run(admin, {"CLIENT", "UNBLOCK", id0}) == "int:1");
  CHECK(Next(*w[0]) == "nil");
  CHECK(Run(admin, {"CLIENT", "UNBLOCK", id0}) == "int:0");
  CHECK(Run(admin, {"CLIENT", "UNBLOCK", id1, "ERROR"}) == "int:1");
  CHECK(Next(*w[1]) == "err:UNBLOCKED client unblocked via CLIENT UNBLOCK");
  CHECK(BlockedClients(admin) == 0);
  CHECK(Contains(admin.Command({"CLIENT", "LIST", "ID", id0}).str, " flags=N "));
  // Unblocked clients work normally again; nothing was popped for them.
  CHECK(Run(admin, {"RPUSH", "q", "x"}) == "int:1");
  CHECK(Run(*w[0], {"LPOP", "q"}) == "bulk:x");
  CHECK(Run(*w[1], {"BLPOP", "q", "0.01"}) == "nil");
}

TEST_CASE("clients keep working while 100 clients are blocked on one worker", "[blocking]") {
  TestServer server({"--pool-threads", "1", "--net-threads", "2"});
  Client admin(server.port());
  auto waiters = Clients(server.port(), 100);
  for (size_t i = 0; i < waiters.size(); ++i) {
    Send(*waiters[i], {"BLPOP", "wait" + std::to_string(i % 10), "0"});
  }
  WaitBlocked(admin, 100);
  Client bystander(server.port());
  for (int i = 0; i < 200; ++i) {
    std::string key = "k" + std::to_string(i);
    REQUIRE(Run(bystander, {"SET", key, "v" + std::to_string(i)}) == "status:OK");
    REQUIRE(Run(bystander, {"GET", key}) == "bulk:v" + std::to_string(i));
  }
  CHECK(Run(bystander, {"LPUSH", "x", "1"}) == "int:1");
  CHECK(BlockedClients(admin) == 100);
  for (int k = 0; k < 10; ++k) {
    std::vector<std::string> push{"RPUSH", "wait" + std::to_string(k)};
    for (int j = 0; j < 10; ++j) push.push_back(std::to_string(j));
    CHECK(Run(admin, push) == "int:10");
  }
  for (auto& w : waiters) CHECK(Next(*w).rfind("[bulk:wait", 0) == 0);
  CHECK(BlockedClients(admin) == 0);
}

TEST_CASE("the server shuts down cleanly with blocked clients", "[blocking]") {
  TestServer server({"--net-threads", "2"});
  Client admin(server.port());
  auto waiters = Clients(server.port(), 10);
  for (auto& w : waiters) Send(*w, {"BLPOP", "never", "0"});
  WaitBlocked(admin, 10);
  int status = server.Stop();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  Reply r;
  CHECK_FALSE(waiters[0]->GetReply(&r));  // closed, no reply
}

TEST_CASE("redis-py (python3-redis) blpop, brpop, blmove, bzpopmin", "[blocking][python]") {
  int code = -1;
  // Debian's interpreter and package (make test installs python3-redis), not a pyenv python.
  std::string probe =
      rockcache::testing::RunShell("/usr/bin/python3 -c 'import redis' 2>&1", &code);
  INFO("python3-redis missing (apt-get install python3-redis): " << probe);
  REQUIRE(code == 0);
  TestServer server({"--net-threads", "2"});
  std::string out = rockcache::testing::RunShell(
      "timeout 60 /usr/bin/python3 tests/integration/python/blocking_blpop.py " +
          std::to_string(server.port()) + " 2>&1",
      &code);
  INFO(out);
  CHECK(code == 0);
  CHECK(out == "OK\n");
}

TEST_CASE("a blocked command counts once in INFO commandstats and SLOWLOG, as Redis",
          "[blocking][metrics]") {
  TestServer server;
  Client admin(server.port());
  Client w(server.port());
  const std::string id = std::to_string(w.Command({"CLIENT", "ID"}).integer);
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-log-slower-than", "0"}) == "status:OK");
  REQUIRE(Run(admin, {"CONFIG", "RESETSTAT"}) == "status:OK");
  REQUIRE(Run(admin, {"SLOWLOG", "RESET"}) == "status:OK");

  CHECK(Run(w, {"BLPOP", "q", "0.05"}) == "nil");  // blocked, then timed out
  Send(w, {"BLPOP", "q", "0"});                    // blocked, then served by a push
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"RPUSH", "q", "a"}) == "int:1");
  CHECK(Next(w) == "[bulk:q, bulk:a]");
  Send(w, {"BRPOP", "q", "0"});  // blocked, then CLIENT UNBLOCK ... ERROR
  WaitBlocked(admin, 1);
  CHECK(Run(admin, {"CLIENT", "UNBLOCK", id, "ERROR"}) == "int:1");
  CHECK(Next(w) == "err:UNBLOCKED client unblocked via CLIENT UNBLOCK");

  auto stats = InfoFields(InfoText(admin, "commandstats"));
  CHECK(Contains(stats["cmdstat_blpop"], "calls=2,"));
  CHECK(Contains(stats["cmdstat_blpop"], "failed_calls=0"));
  CHECK(Contains(stats["cmdstat_brpop"], "calls=1,"));
  CHECK(Contains(stats["cmdstat_brpop"], "failed_calls=1"));
  CHECK(Contains(InfoText(admin, "errorstats"), "errorstat_UNBLOCKED:count=1"));

  // SLOWLOG: the served BLPOP, once; Redis 7.0 logs no timed-out or unblocked wait.
  Reply log = admin.Command({"SLOWLOG", "GET", "100"});
  int blpop = 0, brpop = 0;
  for (const auto& entry : log.elements) {
    REQUIRE(entry.elements.size() >= 4);
    const std::string name = entry.elements[3].elements.at(0).str;
    if (name == "blpop" || name == "BLPOP") ++blpop;
    if (name == "brpop" || name == "BRPOP") ++brpop;
  }
  CHECK(blpop == 1);
  CHECK(brpop == 0);
}

}  // namespace blocking_test
