// Durability: every acknowledged write survives kill -9 (the WAL is written before +OK), a clean
// SIGTERM shutdown keeps data and TTLs, and `storage-sync always` also survives kill -9.
//
// Catch2 assertions are not thread-safe: writer threads only record what was acknowledged.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace durability_test {

namespace {

// Runs `threads` writers that SET k:<thread>:<i> = v<i> until the connection fails (or
// `max_per_thread` writes), recording each key only after its +OK.
std::vector<std::vector<int>> WriteUntilKilled(TestServer& server, int threads, int kill_after_ms,
                                               int max_per_thread,
                                               std::vector<std::string>* errors) {
  std::vector<std::vector<int>> acked(threads);
  errors->assign(threads, "");
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t) {
    writers.emplace_back([&, t] {
      Client c(server.port(), 5000);
      if (!c.connected()) {
        (*errors)[t] = "connect failed";
        return;
      }
      Reply r;
      for (int i = 0; i < max_per_thread; ++i) {
        std::string key = "k:" + std::to_string(t) + ":" + std::to_string(i);
        if (!c.TryCommand({"SET", key, "v" + std::to_string(i)}, &r)) return;  // killed
        if (Describe(r) != "status:OK") {
          (*errors)[t] = "SET " + key + ": " + Describe(r);
          return;
        }
        acked[t].push_back(i);
      }
    });
  }
  SleepMs(kill_after_ms);
  server.Kill9();
  for (auto& w : writers) w.join();
  return acked;
}

// GETs every acknowledged key (pipelined) and counts the ones missing or wrong.
int CountLost(Client& c, const std::vector<std::vector<int>>& acked) {
  int lost = 0;
  for (size_t t = 0; t < acked.size(); ++t) {
    for (int i : acked[t]) c.Append({"GET", "k:" + std::to_string(t) + ":" + std::to_string(i)});
    for (int i : acked[t]) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      if (Describe(r) != "bulk:v" + std::to_string(i) && ++lost <= 5) {
        FAIL_CHECK("k:" << t << ":" << i << " after restart: " << Describe(r));
      }
    }
  }
  return lost;
}

}  // namespace

TEST_CASE("kill -9 during a write load loses no acknowledged write", "[durability]") {
  TestServer server;
  std::vector<std::string> errors;
  auto acked = WriteUntilKilled(server, 4, 1500, 1000000, &errors);
  for (const auto& e : errors) CHECK(e.empty());
  size_t total = 0;
  for (const auto& a : acked) total += a.size();
  INFO("acknowledged writes: " << total);
  CHECK(total > 100);  // the load really ran
  server.Restart();
  Client c(server.port(), 30000);
  CHECK(CountLost(c, acked) == 0);
  // At most the in-flight write of each writer may exist beyond the acknowledged ones.
  Reply dbsize = c.Command({"DBSIZE"});
  REQUIRE(dbsize.type == REDIS_REPLY_INTEGER);
  CHECK(dbsize.integer >= static_cast<long long>(total));
  CHECK(dbsize.integer <= static_cast<long long>(total + 4));
}

TEST_CASE("a clean SIGTERM restart keeps data and TTLs", "[durability]") {
  TestServer server;
  {
    Client c(server.port());
    for (int i = 0; i < 500; ++i) c.Append({"SET", "p:" + std::to_string(i), std::to_string(i)});
    for (int i = 0; i < 500; ++i) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      REQUIRE(Describe(r) == "status:OK");
    }
    CHECK(Run(c, {"SET", "ttl", "x", "EX", "1000"}) == "status:OK");
    CHECK(Run(c, {"SET", "short", "x", "PX", "300"}) == "status:OK");
    CHECK(Run(c, {"INCRBY", "counter", "41"}) == "int:41");
    CHECK(Run(c, {"DEL", "p:0"}) == "int:1");
  }
  CHECK(server.Stop() == 0);
  SleepMs(400);  // `short` expires while the server is down
  server.Restart();
  Client c(server.port());
  CHECK(Run(c, {"GET", "p:0"}) == "nil");
  CHECK(Run(c, {"GET", "p:1"}) == "bulk:1");
  CHECK(Run(c, {"GET", "p:499"}) == "bulk:499");
  CHECK(Run(c, {"INCR", "counter"}) == "int:42");
  Reply ttl = c.Command({"TTL", "ttl"});
  CHECK(ttl.integer > 990);
  CHECK(ttl.integer <= 1000);
  CHECK(Run(c, {"GET", "short"}) == "nil");
  CHECK(Run(c, {"EXISTS", "short"}) == "int:0");
  Reply size = c.Command({"DBSIZE"});
  CHECK(size.integer >= 501);  // p:1..p:499, ttl, counter (+ `short` if not yet reclaimed)
  CHECK(size.integer <= 502);
  CHECK(Run(c, {"KEYS", "short"}) == "[]");
}

TEST_CASE("storage-sync always survives kill -9", "[durability]") {
  TestServer server({"--storage-sync", "always"});
  {
    Client c(server.port());
    CHECK(Run(c, {"CONFIG", "GET", "storage-sync"}) == "[bulk:storage-sync, bulk:always]");
  }
  std::vector<std::string> errors;
  auto acked = WriteUntilKilled(server, 2, 500, 1000000, &errors);
  for (const auto& e : errors) CHECK(e.empty());
  size_t total = 0;
  for (const auto& a : acked) total += a.size();
  CHECK(total > 10);
  server.Restart();
  Client c(server.port(), 30000);
  CHECK(CountLost(c, acked) == 0);
}

// Group commit: many clients' pipelines are committed together (one WriteBatch per loop pass).
// A reply is only sent after its group's WAL write, so kill -9 must not lose any acknowledged
// write of any type, whichever group it was in.
TEST_CASE("kill -9 under pipelined writes from many clients loses no acknowledged write",
          "[durability]") {
  TestServer server;
  constexpr int kClients = 6;
  constexpr int kDepth = 32;  // commands per pipelined round: SET, HSET, SADD, INCR cycling
  std::vector<int> acked_rounds(kClients, 0);
  std::vector<std::string> errors(kClients);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  auto key = [](const char* kind, int t) { return std::string(kind) + ":" + std::to_string(t); };
  for (int t = 0; t < kClients; ++t) {
    writers.emplace_back([&, t] {
      Client c(server.port(), 5000);
      if (!c.connected()) {
        errors[t] = "connect failed";
        return;
      }
      for (int round = 0; !stop.load(); ++round) {
        for (int j = 0; j < kDepth; ++j) {
          const std::string n = std::to_string(round * kDepth + j);
          switch (j % 4) {
            case 0:
              c.Append({"SET", key("s", t) + ":" + n, "v" + n});
              break;
            case 1:
              c.Append({"HSET", key("h", t), "f" + n, "v" + n});
              break;
            case 2:
              c.Append({"SADD", key("set", t), "m" + n});
              break;
            default:
              c.Append({"INCR", key("ctr", t)});
              break;
          }
        }
        for (int j = 0; j < kDepth; ++j) {
          Reply r;
          if (!c.GetReply(&r)) return;  // killed: this round is not acknowledged as a whole
          if (r.type == REDIS_REPLY_ERROR) {
            errors[t] = Describe(r);
            return;
          }
        }
        acked_rounds[t] = round + 1;
      }
    });
  }
  SleepMs(1500);
  server.Kill9();
  stop = true;
  for (auto& w : writers) w.join();
  for (const auto& e : errors) CHECK(e.empty());
  int total_rounds = 0;
  for (int r : acked_rounds) total_rounds += r;
  INFO("acknowledged pipelined rounds: " << total_rounds);
  CHECK(total_rounds > 10);  // the load really ran

  server.Restart();
  Client c(server.port(), 30000);
  int lost = 0;
  for (int t = 0; t < kClients; ++t) {
    for (int round = 0; round < acked_rounds[t]; ++round) {
      for (int j = 0; j < kDepth; ++j) {
        const std::string n = std::to_string(round * kDepth + j);
        switch (j % 4) {
          case 0:
            c.Append({"GET", key("s", t) + ":" + n});
            break;
          case 1:
            c.Append({"HGET", key("h", t), "f" + n});
            break;
          case 2:
            c.Append({"SISMEMBER", key("set", t), "m" + n});
            break;
          default:
            continue;
        }
      }
    }
    for (int round = 0; round < acked_rounds[t]; ++round) {
      for (int j = 0; j < kDepth; ++j) {
        const std::string n = std::to_string(round * kDepth + j);
        if (j % 4 == 3) continue;
        Reply r;
        REQUIRE(c.GetReply(&r));
        const std::string want = j % 4 == 2 ? "int:1" : "bulk:v" + n;
        if (Describe(r) != want && ++lost <= 5) {
          FAIL_CHECK("client " << t << " command " << n << ": " << Describe(r));
        }
      }
    }
    // Every acknowledged INCR is there; at most the last, unacknowledged round's may be too.
    Reply ctr = c.Command({"GET", key("ctr", t)});
    long long incrs = ctr.type == REDIS_REPLY_STRING ? std::stoll(ctr.str) : 0;
    CHECK(incrs >= static_cast<long long>(acked_rounds[t]) * (kDepth / 4));
    CHECK(incrs <= static_cast<long long>(acked_rounds[t] + 1) * (kDepth / 4));
  }
  CHECK(lost == 0);
}

// The key filter (storage/key_filter.h) lets a write or read of a key it has never seen skip the
// RocksDB read; after a restart it is rebuilt from the keys on disk (those flushed by a clean
// stop, and those only in the WAL after kill -9). A key it missed would look new: SET over it
// would count it twice in DBSIZE and leave an old hash readable, GET would answer nil; a member
// from before it read as new would be counted twice (storage/rocks_store.h: entry_filter_).
TEST_CASE("keys from before a restart are seen by every write and read after it",
          "[durability][key-filter]") {
  TestServer server;
  auto fill = [&] {
    Client c(server.port());
    CHECK(Run(c, {"SET", "s", "1"}) == "status:OK");
    CHECK(Run(c, {"HSET", "h", "f", "v"}) == "int:1");
    CHECK(Run(c, {"RPUSH", "l", "a", "b"}) == "int:2");
    CHECK(Run(c, {"SADD", "set", "m"}) == "int:1");
    CHECK(Run(c, {"SELECT", "1"}) == "status:OK");
    CHECK(Run(c, {"SET", "s", "in db1"}) == "status:OK");
  };
  auto check = [&] {
    Client c(server.port());
    const auto info = rockcache::testing::InfoFields(rockcache::testing::InfoText(c, "rocksdb"));
    CHECK(info.at("key_filter_state") == "on");
    CHECK(Run(c, {"DBSIZE"}) == "int:4");
    CHECK(Run(c, {"GET", "s"}) == "bulk:1");
    CHECK(Run(c, {"EXISTS", "h", "l", "set", "nope"}) == "int:3");
    CHECK(Run(c, {"MGET", "s", "nope", "h"}) == "[bulk:1, nil, nil]");
    CHECK(Run(c, {"SET", "h", "now a string"}) == "status:OK");  // replaces the hash
    CHECK(Run(c, {"HGETALL", "h"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(Run(c, {"INCR", "s"}) == "int:2");
    CHECK(Run(c, {"MSET", "l", "x", "new1", "y"}) == "status:OK");  // one old key, one new
    CHECK(Run(c, {"LPUSH", "set", "z"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(Run(c, {"SADD", "set", "m", "n"}) == "int:1");  // m is from before the restart
    CHECK(Run(c, {"SCARD", "set"}) == "int:2");
    CHECK(Run(c, {"DBSIZE"}) == "int:5");  // s, h, l, set, new1
    CHECK(Run(c, {"SELECT", "1"}) == "status:OK");
    CHECK(Run(c, {"GET", "s"}) == "bulk:in db1");
    CHECK(Run(c, {"SET", "s", "again"}) == "status:OK");
    CHECK(Run(c, {"DBSIZE"}) == "int:1");
    CHECK(Run(c, {"FLUSHALL"}) == "status:OK");
  };
  SECTION("a clean stop") {
    fill();
    CHECK(server.Stop() == 0);
    server.Restart();
    check();
  }
  SECTION("kill -9") {
    fill();
    server.Kill9();
    server.Restart();
    check();
  }
}

TEST_CASE("key-filter-bits-per-key 0 turns the key filter off", "[key-filter]") {
  TestServer server({"--key-filter-bits-per-key", "0"});
  Client c(server.port());
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"GET", "a"}) == "bulk:1");
  CHECK(Run(c, {"GET", "b"}) == "nil");
  const auto info = rockcache::testing::InfoFields(rockcache::testing::InfoText(c, "rocksdb"));
  CHECK(info.at("key_filter_state") == "off");
  CHECK(info.at("key_filter_bytes") == "0");
}

}  // namespace durability_test
