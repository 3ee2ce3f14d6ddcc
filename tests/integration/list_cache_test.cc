// The cached list head (server/commands/list.cc, cache/value.h ListHead) seen from outside:
// LRANGE / LINDEX / LLEN answered in the network thread agree with a model of the list through
// every kind of list write, from another connection, in pipelines, transactions and blocking
// pops; a head too big for its limits is not cached and replies stay right.
//
// The model test runs with a small cache-max-list-elements, so that heads are often shorter than
// the list, LPUSH trims them and ranges past them go to the pool.
#include <deque>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cache_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::CacheVerify;
using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoNumber;
using rockcache::testing::ListIndexReply;
using rockcache::testing::ListRangeReply;
using rockcache::testing::Reply;
using rockcache::testing::RtcCalls;
using rockcache::testing::Run;
using rockcache::testing::RunRtc;
using rockcache::testing::TestServer;
using rockcache::testing::VerifyResult;

TEST_CASE("a cached list head agrees with the list through every kind of list write",
          "[cache][list]") {
  TestServer server({"--cache-max-list-elements", "8"});
  Client writer(server.port()), reader(server.port()), admin(server.port());
  REQUIRE(Run(admin, {"CONFIG", "GET", "cache-max-list-elements"}) ==
          "[bulk:cache-max-list-elements, bulk:8]");
  std::mt19937 rng(20261124);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::deque<std::string> model;
  const std::string key = "list";
  int next = 0;
  const uint64_t rtc_before = RtcCalls(admin, "lrange");
  for (int step = 0; step < 3000; ++step) {
    INFO("step " << step << ", model length " << model.size());
    const int op = pick(20);
    if (op < 4) {  // LPUSH / RPUSH of 1-3 elements
      const bool left = op < 2;
      std::vector<std::string> args = {left ? "LPUSH" : "RPUSH", key};
      for (int i = 0, n = 1 + pick(3); i < n; ++i) {
        std::string element = "e" + std::to_string(next++);
        args.push_back(element);
        if (left) {
          model.push_front(element);
        } else {
          model.push_back(element);
        }
      }
      CHECK(Run(writer, args) == "int:" + std::to_string(model.size()));
    } else if (op < 7) {  // LPOP / RPOP, with or without a count
      const bool left = op < 5;
      const int count = pick(3);
      std::vector<std::string> args = {left ? "LPOP" : "RPOP", key};
      if (count > 0) args.push_back(std::to_string(count));
      std::string expect;
      if (count == 0) {
        expect = model.empty() ? "nil" : "bulk:" + (left ? model.front() : model.back());
        if (!model.empty()) left ? model.pop_front() : model.pop_back();
      } else if (model.empty()) {
        expect = "nil";
      } else {
        expect = "[";
        for (int i = 0; i < count && !model.empty(); ++i) {
          if (expect.size() > 1) expect += ", ";
          expect += "bulk:" + (left ? model.front() : model.back());
          left ? model.pop_front() : model.pop_back();
        }
        expect += "]";
      }
      CHECK(Run(writer, args) == expect);
    } else if (op == 7 && !model.empty()) {  // LSET
      const int64_t index = pick(static_cast<int>(model.size()));
      const std::string element = "s" + std::to_string(next++);
      model[static_cast<size_t>(index)] = element;
      CHECK(Run(writer, {"LSET", key, std::to_string(index), element}) == "status:OK");
    } else if (op == 8 && model.size() > 4) {  // LTRIM off a few at both ends
      const int64_t start = pick(2), stop = -1 - pick(2);
      std::deque<std::string> kept;
      const int64_t n = static_cast<int64_t>(model.size());
      for (int64_t i = start; i <= n + stop; ++i) kept.push_back(model[static_cast<size_t>(i)]);
      model = kept;
      CHECK(Run(writer, {"LTRIM", key, std::to_string(start), std::to_string(stop)}) ==
            "status:OK");
    } else if (op == 9 && pick(10) == 0) {  // DEL, now and then
      CHECK(Run(writer, {"DEL", key}) == (model.empty() ? "int:0" : "int:1"));
      model.clear();
    } else if (op < 16) {  // LRANGE, mostly near the head
      int64_t start = pick(12) - 2, stop = pick(14) - 3;
      if (pick(4) == 0) stop = -1;
      CHECK(Run(reader, {"LRANGE", key, std::to_string(start), std::to_string(stop)}) ==
            ListRangeReply(model, start, stop));
    } else if (op < 18) {
      const int64_t index = pick(14) - 4;
      CHECK(Run(reader, {"LINDEX", key, std::to_string(index)}) == ListIndexReply(model, index));
    } else {
      CHECK(Run(reader, {"LLEN", key}) == "int:" + std::to_string(model.size()));
    }
  }
  CHECK(Run(reader, {"LRANGE", key, "0", "-1"}) == ListRangeReply(model, 0, -1));
  // The head answered many of the reads (about a third: writes other than pushes and pops drop
  // it, and ranges past its 8 elements go to the pool), and it agrees with RocksDB.
  CHECK(RtcCalls(admin, "lrange") > rtc_before + 150);
  CHECK(RtcCalls(admin, "lindex") > 0);
  CHECK(RtcCalls(admin, "llen") > 0);
  VerifyResult verify = CacheVerify(admin);
  CHECK(verify.mismatches == 0);
}

TEST_CASE("list heads in pipelines, transactions and blocking pops", "[cache][list]") {
  TestServer server;
  Client c(server.port()), other(server.port()), admin(server.port());

  SECTION("a pipeline of pushes and cached reads replies in order") {
    REQUIRE(Run(c, {"RPUSH", "p", "a", "b"}) == "int:2");
    REQUIRE(Run(c, {"LRANGE", "p", "0", "-1"}) == "[bulk:a, bulk:b]");  // fills the head
    std::vector<std::vector<std::string>> pipeline = {{"LRANGE", "p", "0", "-1"},
                                                      {"LPUSH", "p", "z"},
                                                      {"LRANGE", "p", "0", "-1"},
                                                      {"RPOP", "p"},
                                                      {"LLEN", "p"},
                                                      {"LINDEX", "p", "-1"},
                                                      {"LPOP", "p", "2"},
                                                      {"LRANGE", "p", "0", "-1"}};
    for (const auto& args : pipeline) c.Append(args);
    std::vector<std::string> replies;
    for (size_t i = 0; i < pipeline.size(); ++i) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      replies.push_back(Describe(r));
    }
    CHECK(replies == std::vector<std::string>{"[bulk:a, bulk:b]", "int:3",
                                              "[bulk:z, bulk:a, bulk:b]", "bulk:b", "int:2",
                                              "bulk:a", "[bulk:z, bulk:a]", "[]"});
    CHECK(Run(other, {"LRANGE", "p", "0", "-1"}) == "[]");
  }

  SECTION("MULTI / EXEC") {
    REQUIRE(Run(c, {"RPUSH", "t", "a"}) == "int:1");
    REQUIRE(Run(c, {"LRANGE", "t", "0", "-1"}) == "[bulk:a]");
    REQUIRE(Run(c, {"MULTI"}) == "status:OK");
    REQUIRE(Run(c, {"LPUSH", "t", "b"}) == "status:QUEUED");
    REQUIRE(Run(c, {"LRANGE", "t", "0", "-1"}) == "status:QUEUED");
    REQUIRE(Run(c, {"RPOP", "t"}) == "status:QUEUED");
    CHECK(Run(c, {"EXEC"}) == "[int:2, [bulk:b, bulk:a], bulk:a]");
    CHECK(Run(other, {"LRANGE", "t", "0", "-1"}) == "[bulk:b]");  // EXEC dropped the head
    CHECK(RunRtc(admin, other, {"LRANGE", "t", "0", "-1"}) == "[bulk:b]");
  }

  SECTION("a push that serves a blocked BLPOP") {
    REQUIRE(Run(c, {"LRANGE", "b", "0", "-1"}) == "[]");  // known absent
    std::string popped;
    std::thread blocked([&] {
      Client waiter(server.port());
      popped = Run(waiter, {"BLPOP", "b", "10"});
    });
    for (int i = 0; i < 200 && InfoNumber(admin, "clients", "blocked_clients") == 0; ++i) {
      rockcache::testing::SleepMs(10);
    }
    REQUIRE(InfoNumber(admin, "clients", "blocked_clients") == 1);
    CHECK(Run(c, {"RPUSH", "b", "x", "y"}) == "int:2");
    blocked.join();
    CHECK(popped == "[bulk:b, bulk:x]");
    CHECK(Run(other, {"LRANGE", "b", "0", "-1"}) == "[bulk:y]");
    CHECK(Run(other, {"LLEN", "b"}) == "int:1");
  }

  VerifyResult verify = CacheVerify(admin);
  CHECK(verify.mismatches == 0);
}

TEST_CASE("list heads past their limits are not cached", "[cache][list]") {
  SECTION("elements past 1 MiB in all") {
    TestServer server;
    Client c(server.port()), admin(server.port());
    const std::string big(600 * 1024, 'x');
    REQUIRE(Run(c, {"RPUSH", "big", big, big, "small"}) == "int:3");
    for (int i = 0; i < 2; ++i) {
      Reply r = c.Command({"LRANGE", "big", "0", "-1"});
      REQUIRE(r.type == REDIS_REPLY_ARRAY);
      REQUIRE(r.elements.size() == 3);
      CHECK(r.elements[0].str == big);
      CHECK(r.elements[2].str == "small");
    }
    CHECK(RtcCalls(admin, "lrange") == 0);
    CHECK(Run(c, {"LRANGE", "big", "2", "2"}) == "[bulk:small]");  // a head of 3: too big still
    CHECK(RtcCalls(admin, "lrange") == 0);
  }

  SECTION("cache-max-list-elements 0") {
    TestServer server({"--cache-max-list-elements", "0"});
    Client c(server.port()), admin(server.port());
    REQUIRE(Run(c, {"RPUSH", "l", "a", "b"}) == "int:2");
    for (int i = 0; i < 3; ++i) CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "[bulk:a, bulk:b]");
    CHECK(Run(c, {"LLEN", "l"}) == "int:2");
    CHECK(RtcCalls(admin, "lrange") == 0);
    CHECK(RtcCalls(admin, "llen") == 0);
  }
}
