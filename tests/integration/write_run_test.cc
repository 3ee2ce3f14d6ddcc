// Write runs (WriteRun, server/commands/command.h): consecutive LPUSH/RPUSH/LPUSHX/RPUSHX,
// LPOP/RPOP, SADD and HSET/HMSET on one key in one group run as one storage write. What a user
// sees must be what running them one by one shows: the replies and final state of pipelines
// equal redis-server's byte for byte, a blocked client, a keyspace-event subscriber and a WATCH
// still see every command, and concurrent pipelines on one key neither lose nor repeat elements.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/differential_peer.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::ReferenceRedis;
using rockcache::testing::Reply;
using rockcache::testing::RespPeer;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace write_run_test {

namespace {

using Args = std::vector<std::string>;

uint64_t RunCommands(Client& c) {
  return std::stoull(InfoFields(InfoText(c, "stats"))["write_run_commands"]);
}

// Bursts of one command on one key (runs form only from consecutive commands), with the shapes
// that must not join a run (LPOP with a count, an odd HSET) and writes of other types in between.
std::vector<Args> RandomPipeline(std::mt19937_64& rng, const std::vector<std::string>& keys,
                                 int commands) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  static const char* kOps[] = {"LPUSH", "RPUSH", "LPUSHX", "RPUSHX", "LPOP", "RPOP",
                               "SADD",  "HSET",  "HMSET",  "DEL",    "SET",  "LLEN"};
  std::vector<Args> out;
  while (static_cast<int>(out.size()) < commands) {
    const std::string op = kOps[pick(12)];
    const std::string& key = keys[static_cast<size_t>(pick(static_cast<int>(keys.size())))];
    const int burst = op == "DEL" || op == "SET" ? 1 : 1 + pick(24);
    for (int b = 0; b < burst; ++b) {
      Args args = {op, key};
      if (op == "LPUSH" || op == "RPUSH" || op == "LPUSHX" || op == "RPUSHX" || op == "SADD") {
        for (int i = 1 + pick(3); i > 0; --i) args.push_back("e" + std::to_string(pick(40)));
      } else if (op == "LPOP" || op == "RPOP") {
        if (pick(20) == 0) args.push_back(std::to_string(pick(4)));
      } else if (op == "HSET" || op == "HMSET") {
        for (int i = 1 + pick(3); i > 0; --i) {
          args.push_back("f" + std::to_string(pick(12)));
          args.push_back("v" + std::to_string(out.size()));
        }
        if (pick(30) == 0) args.pop_back();
      } else if (op == "SET") {
        args.push_back("s");
      }
      out.push_back(std::move(args));
    }
  }
  // The final state, in forms whose bytes do not depend on hash-table order.
  for (const auto& key : keys) {
    out.push_back({"TYPE", key});
    out.push_back({"LRANGE", key, "0", "-1"});
    out.push_back({"SORT", key, "ALPHA"});
    Args hmget = {"HMGET", key};
    for (int f = 0; f < 12; ++f) hmget.push_back("f" + std::to_string(f));
    out.push_back(hmget);
  }
  return out;
}

}  // namespace

TEST_CASE(
    "Write runs: pipelined pushes, pops, SADD and HSET answer as redis-server's, byte for byte",
    "[write_run][differential]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) {
    WARN("redis-server not installed: differential write-run test skipped");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server;
  Client info(server.port());
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());

  uint64_t seed = std::random_device{}() | 1;
  if (const char* env = std::getenv("ROCKCACHE_DIFF_SEED")) seed = std::stoull(env);
  std::printf("write runs: seed %llu (ROCKCACHE_DIFF_SEED to replay)\n",
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const std::vector<std::string> keys = {"k1", "k2", "k3"};
  const uint64_t before = RunCommands(info);
  size_t sent = 0;
  for (int round = 0; round < 6; ++round) {
    const std::vector<Args> pipeline = RandomPipeline(rng, keys, 1500);
    const std::vector<std::string> a = ours.CallPipelined(pipeline);
    const std::vector<std::string> b = theirs.CallPipelined(pipeline);
    int mismatches = 0;
    for (size_t i = 0; i < pipeline.size(); ++i) {
      if (a[i] == b[i]) continue;
      if (++mismatches <= 5) {
        std::string command;
        for (const auto& arg : pipeline[i]) command += arg + " ";
        UNSCOPED_INFO("round " << round << " command " << i << ": " << command
                               << "\n  rockcache: " << a[i] << "\n  redis:     " << b[i]);
      }
    }
    CHECK(mismatches == 0);
    sent += pipeline.size();
  }
  // The pipelines did run as write runs: most bursts are runs.
  const uint64_t joined = RunCommands(info) - before;
  std::printf("write runs: %llu of %zu commands joined runs\n",
              static_cast<unsigned long long>(joined), sent);
  CHECK(joined > sent / 4);
}

TEST_CASE("Write runs: clients blocked on the key are served between pipelined pushes",
          "[write_run][blocking]") {
  TestServer server;
  Client c(server.port());
  auto wait_blocked = [&](const std::string& count) {
    for (int i = 0; i < 200 && InfoFields(InfoText(c, "clients"))["blocked_clients"] != count;
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(InfoFields(InfoText(c, "clients"))["blocked_clients"] == count);
  };
  rockcache::testing::RawConnection first(server.port());
  first.Send(rockcache::testing::Resp({"BLPOP", "q", "0"}));
  wait_blocked("1");
  rockcache::testing::RawConnection second(server.port());
  second.Send(rockcache::testing::Resp({"BLPOP", "q", "0"}));
  wait_blocked("2");
  const uint64_t before = RunCommands(c);
  c.Append({"LPUSH", "q", "a"});
  c.Append({"LPUSH", "q", "b"});
  c.Append({"LPUSH", "q", "c"});
  Reply r;
  // As Redis: each push serves the longest-blocked pop before the next push runs.
  for (int i = 0; i < 3; ++i) {
    REQUIRE(c.GetReply(&r));
    CHECK(rockcache::testing::Describe(r) == "int:1");
  }
  auto popped = [](const char* element) {
    return std::string("*2\r\n$1\r\nq\r\n$1\r\n") + element + "\r\n";
  };
  CHECK(first.ReadExactly(popped("a").size()) == popped("a"));
  CHECK(second.ReadExactly(popped("b").size()) == popped("b"));
  CHECK(Run(c, {"LRANGE", "q", "0", "-1"}) == "[bulk:c]");
  CHECK(RunCommands(c) == before);
}

TEST_CASE("Write runs: each pipelined command publishes its own keyspace event",
          "[write_run][notify]") {
  TestServer server;
  Client c(server.port());
  Client sub(server.port());
  REQUIRE(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "El"}) == "status:OK");
  sub.Append({"SUBSCRIBE", "__keyevent@0__:rpush"});
  Reply r;
  REQUIRE(sub.GetReply(&r));
  const uint64_t before = RunCommands(c);
  for (int i = 0; i < 16; ++i) c.Append({"RPUSH", "l", std::to_string(i)});
  for (int i = 0; i < 16; ++i) {
    REQUIRE(c.GetReply(&r));
    CHECK(r.integer == i + 1);
  }
  for (int i = 0; i < 16; ++i) {
    REQUIRE(sub.GetReply(&r));
    REQUIRE(r.elements.size() == 3);
    CHECK(r.elements[2].str == "l");
  }
  CHECK(RunCommands(c) == before);
  // Events off again: the same pipeline runs as one.
  REQUIRE(Run(c, {"CONFIG", "SET", "notify-keyspace-events", ""}) == "status:OK");
  for (int i = 0; i < 16; ++i) c.Append({"RPUSH", "l", std::to_string(i)});
  for (int i = 0; i < 16; ++i) {
    REQUIRE(c.GetReply(&r));
    CHECK(r.integer == 17 + i);
  }
  CHECK(RunCommands(c) > before);
}

TEST_CASE("Write runs: a pipelined run on a watched key aborts the watcher's EXEC",
          "[write_run][transaction]") {
  TestServer server;
  Client watcher(server.port());
  Client c(server.port());
  REQUIRE(Run(watcher, {"WATCH", "h"}) == "status:OK");
  const uint64_t before = RunCommands(c);
  for (int i = 0; i < 8; ++i) c.Append({"HSET", "h", "f" + std::to_string(i % 3), "v"});
  Reply r;
  for (int i = 0; i < 8; ++i) {
    REQUIRE(c.GetReply(&r));
    CHECK(r.integer == (i < 3 ? 1 : 0));
  }
  CHECK(RunCommands(c) > before);
  REQUIRE(Run(watcher, {"MULTI"}) == "status:OK");
  REQUIRE(Run(watcher, {"HSET", "h", "mine", "1"}) == "status:QUEUED");
  CHECK(Run(watcher, {"EXEC"}) == "nil");
  CHECK(Run(c, {"HLEN", "h"}) == "int:3");
}

TEST_CASE("Write runs: concurrent pipelines on one list lose and repeat nothing, across kill -9",
          "[write_run][concurrency]") {
  TestServer server;
  constexpr int kClients = 4;
  constexpr int kEach = 400;
  {
    std::vector<std::thread> threads;
    std::vector<std::vector<long long>> lengths(kClients);
    for (int t = 0; t < kClients; ++t) {
      threads.emplace_back([&, t] {
        Client c(server.port());
        for (int i = 0; i < kEach; ++i) {
          c.Append({"LPUSH", "shared", "c" + std::to_string(t) + "-" + std::to_string(i)});
        }
        Reply r;
        for (int i = 0; i < kEach && c.GetReply(&r); ++i) lengths[t].push_back(r.integer);
      });
    }
    for (auto& thread : threads) thread.join();
    for (int t = 0; t < kClients; ++t) {
      REQUIRE(lengths[t].size() == kEach);
      for (int i = 1; i < kEach; ++i) CHECK(lengths[t][i] > lengths[t][i - 1]);
    }
  }
  // Acknowledged pushes survive a crash.
  server.Kill9();
  server.Restart();
  Client c(server.port());
  CHECK(Run(c, {"LLEN", "shared"}) == "int:" + std::to_string(kClients * kEach));
  // Each client's elements are in the list newest first (LPUSH), in the order it sent them.
  Reply all = c.Command({"LRANGE", "shared", "0", "-1"});
  REQUIRE(all.elements.size() == kClients * kEach);
  std::map<std::string, int> last;  // client -> index of its last element seen
  for (const auto& element : all.elements) {
    const std::string& s = element.str;
    const std::string client = s.substr(0, s.find('-'));
    const int index = std::stoi(s.substr(s.find('-') + 1));
    if (last.count(client)) CHECK(index < last[client]);
    last[client] = index;
  }
  // Concurrent pipelined pops: every element exactly once, no nil while the list has some.
  std::vector<std::vector<std::string>> popped(kClients);
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kClients; ++t) {
      threads.emplace_back([&, t] {
        Client p(server.port());
        for (int i = 0; i < kEach; ++i) p.Append({t % 2 ? "RPOP" : "LPOP", "shared"});
        Reply r;
        for (int i = 0; i < kEach && p.GetReply(&r); ++i) {
          popped[t].push_back(r.is_nil() ? "(nil)" : r.str);
        }
      });
    }
    for (auto& thread : threads) thread.join();
  }
  std::set<std::string> seen;
  for (const auto& list : popped) {
    REQUIRE(list.size() == kEach);
    for (const auto& element : list) {
      CHECK(element != "(nil)");
      CHECK(seen.insert(element).second);
    }
  }
  CHECK(seen.size() == kClients * kEach);
  CHECK(Run(c, {"EXISTS", "shared"}) == "int:0");
}

}  // namespace write_run_test
